/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tendon_avx2.c — a second compilation of the transmissions' dual functions (a tendon's or
 * slider-crank's length and moment with the wrapping geometry, the actuator force and implicit terms,
 * the muscle curves) for processors with AVX2, as derivatives_avx2.c does for the contacts: the same
 * sources under `#pragma GCC target("avx2")` with their dual names renamed, so that grit/dual.h takes
 * the partials four at a time. Nothing is fused (-ffp-contract=off; the AVX2 target has no FMA): each
 * partial is the same IEEE operations in the same order, the same bits. derivatives_tendon.c calls
 * these where the derivative call's contact functions are the AVX2 ones (w->fx). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")

#define grit_tendon_length_jacobian_dual grit_tendon_length_jacobian_dual_avx2
#define grit_cx_rows_dual grit_cx_rows_dual_avx2
#define grit_cx_rows_cols_dual grit_cx_rows_cols_dual_avx2
#define grit_actuator_length_jacobian_dual grit_actuator_length_jacobian_dual_avx2
#define grit_muscle_gain_dual grit_muscle_gain_dual_avx2
#define grit_muscle_bias_dual grit_muscle_bias_dual_avx2
#define grit_muscle_rate_dual grit_muscle_rate_dual_avx2
#define grit_actuator_input_dual grit_actuator_input_dual_avx2
#define grit_actuator_force_dual grit_actuator_force_dual_avx2
#define grit_actuator_force_some_dual grit_actuator_force_some_dual_avx2
#define grit_actuator_force_list_dual grit_actuator_force_list_dual_avx2
#define grit_actuator_operator_dual grit_actuator_operator_dual_avx2
#define grit_actuator_act_next_dual grit_actuator_act_next_dual_avx2
#define grit_actuator_tendon_apply_dual grit_actuator_tendon_apply_dual_avx2
#define grit_actuator_tendon_dual grit_actuator_tendon_dual_avx2

#include <math.h>
#include <string.h>

#include "actuation.h"
#include "actuation_muscle.h"
#include "constraints_extra.h"
#include "derivatives_tendon.h"
#include "grit/constraints.h"
#include "grit/math_dual.h"

/* (the headers above declared the dual functions under the new names: the renames come first) */
#include "grit/detail/scalar_dual.h"
#include "tendon_wrap_generic.h"
#include "constraints_extra_generic.h"
#include "actuation_muscle_generic.h"
#include "actuation_generic.h"
#include "grit/detail/scalar_undef.h"

static grit_dual fixed_row_avx2(const grit_model *m, const grit_dual *q, int t, grit_dual *J, const int *nz, int nnz,
                                int adr, int n) {
  return grit_deriv_tendon_fixed_row_in(m, q, t, J, nz, nnz, adr, n);
}

static const grit_deriv_tendon_fns AVX2 = {grit_actuator_length_jacobian_dual_avx2, grit_actuator_tendon_apply_dual_avx2,
                                            grit_cx_rows_cols_dual_avx2, fixed_row_avx2,
                                            grit_actuator_force_list_dual_avx2};

const grit_deriv_tendon_fns *grit_deriv_tendon_fns_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? &AVX2 : NULL;
}

#else
#include <stddef.h>

#include "derivatives_tendon.h"

const grit_deriv_tendon_fns *grit_deriv_tendon_fns_avx2(void) { return NULL; }
#endif
