/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_avx2.c — a second compilation of the position passes' dual contact functions (the contact
 * geometry's re-evaluation, the pair parameters, the contact models and their parameters, the contact
 * Jacobian, J_c v and J_c^T gamma without J_c, a rigid body's closed-form kinematics, a contact body's twist) for processors
 * with AVX2: the same sources, included here under `#pragma GCC target("avx2")` with their dual names
 * renamed, so that grit/dual.h takes the partials four at a time in AVX registers. Nothing is fused
 * (-ffp-contract=off, and the AVX2 target does not include FMA): each partial's expression is the
 * same IEEE operations in the same order as in the baseline compilation, the same bits.
 * grit_deriv_dual_fns_get (derivatives_simd.c) calls for these only where the processor has AVX2.
 * The pragma comes before every include: the headers' static inline functions (grit/dual.h, the
 * vector algebra) are compiled here for AVX2 too. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")
#define GRIT_DERIV_AVX2 1

#define grit_contact_reevaluate_dual grit_contact_reevaluate_dual_avx2
#define grit_contact_frame_dual grit_contact_frame_dual_avx2
#define grit_contact_jacobian_add_dual grit_contact_jacobian_add_dual_avx2
#define grit_pair_params_dual grit_pair_params_dual_avx2
#define grit_delassus_c_dual grit_delassus_c_dual_avx2
#define grit_delassus_dual grit_delassus_dual_avx2
#define grit_params_finalize_dual grit_params_finalize_dual_avx2
#define grit_equality_rn_dual grit_equality_rn_dual_avx2
#define grit_constraint_eval_dual grit_constraint_eval_dual_avx2
#define grit_bilateral_cost_dual grit_bilateral_cost_dual_avx2
#define grit_bilateral_gamma_dual grit_bilateral_gamma_dual_avx2
#define grit_contact_barrier_params_dual grit_contact_barrier_params_dual_avx2
#define grit_contact_lagged_dual grit_contact_lagged_dual_avx2
#define grit_contact_lagged_frictionless_dual grit_contact_lagged_frictionless_dual_avx2
#define grit_contact_lagged_normal_impulse_dual grit_contact_lagged_normal_impulse_dual_avx2
#define grit_contact_sap_dual grit_contact_sap_dual_avx2
#define grit_contact_similar_dual grit_contact_similar_dual_avx2
#define grit_contact_smoothing_params_dual grit_contact_smoothing_params_dual_avx2
#define grit_friction_cost_dual grit_friction_cost_dual_avx2
#define grit_limit_cost_dual grit_limit_cost_dual_avx2
#define grit_spring_cost_dual grit_spring_cost_dual_avx2
#define grit_body_dof_twist_dual grit_body_dof_twist_dual_avx2
#define grit_contact_side_velocity_dual grit_contact_side_velocity_dual_avx2
#define grit_contact_side_wrench_dual grit_contact_side_wrench_dual_avx2
#define grit_body_wrench_sub_dual grit_body_wrench_sub_dual_avx2
#define grit_free_side_delassus_dual grit_free_side_delassus_dual_avx2
#define grit_deriv_rigid_body grit_deriv_rigid_body_avx2
#define grit_deriv_body_twist grit_deriv_body_twist_avx2
#define grit_deriv_dual_residual_run grit_deriv_dual_residual_run_avx2 /* derivatives_residual_avx2.c */
#define grit_deriv_velocity_residual_run grit_deriv_velocity_residual_run_avx2

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "constraints.h"
#include "contact_geometry.h"
#include "contact_margin.h"
#include "contact_model.h"
#include "derivatives_contact.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"
#include "grit/math_dual.h"

#include "grit/detail/scalar_dual.h"
#include "contact_geometry_generic.h"
#include "contact_model_generic.h"
#include "constraints_generic.h"
#include "derivatives_contact_generic.h"
#include "grit/detail/scalar_undef.h"

#include "derivatives_rigid.c" /* dual only, not scalar-generic: the same file compiled once more */

static void compose(grit_dual p[3], grit_dual R[9], const grit_dual p1[3], const grit_dual R1[9], const double p2[3],
                    const double R2[9]) {
  grit_tf_compose_c_dual(p, R, p1, R1, p2, R2);
}

static const grit_deriv_dual_fns AVX2 = GRIT_DERIV_DUAL_FNS_INIT;

const grit_deriv_dual_fns *grit_deriv_dual_fns_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? &AVX2 : NULL;
}

#else
#include <stddef.h>

#include "derivatives_simd.h"

const grit_deriv_dual_fns *grit_deriv_dual_fns_avx2(void) { return NULL; }
#endif
