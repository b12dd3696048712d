/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_residual_avx2.c — derivatives_residual.c compiled once more for processors with AVX2, as
 * derivatives_avx2.c compiles the contacts' dual functions: the pragma before every include, so that
 * grit/dual.h takes the partials four at a time in the residuals' inlined dual arithmetic (the sums of
 * J^T gamma, the trees' A (v - v0) - h force, the contacts' sides); nothing fused (-ffp-contract=off,
 * the target has no FMA): the same operations, the same bits. Its external names are renamed; only
 * the two residuals' bodies (grit_deriv_*_residual_run_avx2) are reached, through the AVX2 table
 * (derivatives_simd.h), so the baseline table (w->fx = grit_deriv_dual_fns_get(0)) runs the baseline
 * compilation: the switch back; test_derivatives_simd compares the two. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")
#define GRIT_RESIDUAL_AVX2 1
#define grit_deriv_dual_residual_run grit_deriv_dual_residual_run_avx2
#define grit_deriv_velocity_residual_run grit_deriv_velocity_residual_run_avx2
#define grit_deriv_constraint_inert grit_deriv_constraint_inert_avx2
#define grit_deriv_uses_delassus grit_deriv_uses_delassus_avx2
#define grit_deriv_contact_inputs grit_deriv_contact_inputs_avx2
#define grit_deriv_contact_twist grit_deriv_contact_twist_avx2
#define grit_deriv_fixed_geom_pose grit_deriv_fixed_geom_pose_avx2
#include "derivatives_residual.c"
#else
typedef int grit_residual_avx2_unused; /* ISO C: a translation unit is not empty */
#endif
