/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_simd.h — the dual-number functions of the position passes' contacts, reached through a
 * table so that a processor with AVX2 runs a second compilation of the same sources whose dual numbers
 * take their partials four at a time (derivatives_avx2.c) instead of two (internal). The same
 * element-wise operations in the same order, nothing fused: the same bits on any x86-64 processor. */
#ifndef GRIT_DERIVATIVES_SIMD_H
#define GRIT_DERIVATIVES_SIMD_H

#include "constraints.h"
#include "contact_geometry.h"
#include "contact_model.h"
#include "derivatives_contact.h"

struct grit_deriv_ws;

typedef struct grit_deriv_dual_fns {
  void (*reevaluate)(const grit_contact_point *c, const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3],
                     const grit_dual Rb[9], grit_contact_geom_dual *out);
  void (*compose)(grit_dual p[3], grit_dual R[9], const grit_dual p1[3], const grit_dual R1[9], const double p2[3],
                  const double R2[9]);
  void (*pair_params)(const grit_geom_params_dual *g, int ga, int gb, grit_contact_params_dual *p);
  grit_dual (*lagged_gn0)(const grit_contact_params_dual *p, double dt, grit_dual vn0);
  void (*jacobian_add)(const grit_model *m, const grit_kin_dual *k, int body, const grit_dual p[3], int t,
                       const grit_dual F[9], double sign, grit_dual *out, grit_dual *scratch);
  void (*params_finalize)(int kind, grit_dual w, double dt, const grit_step_settings *st, grit_contact_params_dual *p);
  grit_dual (*constraint_eval)(int kind, const grit_contact_params_dual *p, double dt, const grit_dual *vc,
                               grit_dual *gamma, grit_dual *G);
  void (*body_twist)(const grit_model *m, const grit_kin_dual *k, int body, int t, const double *v, grit_dual S[6]);
  void (*side_velocity)(const grit_dual S[6], const grit_dual p[3], const grit_dual F[9], double sign, int r0,
                        grit_dual vc[3]);
  void (*side_wrench)(const grit_dual p[3], const grit_dual F[9], double sign, const grit_dual gamma[3], grit_dual W[6]);
  void (*wrench_sub)(const grit_model *m, const grit_kin_dual *k, int body, int t, const grit_dual W[6], grit_dual *r);
  void (*rigid_body)(const grit_model *m, struct grit_deriv_ws *w, int b);
  grit_dual (*free_side_delassus)(const grit_model *m, const grit_kin_dual *k, int t, const grit_dual p[3],
                                  const double G[36]);
  void (*body_twist_moved)(const grit_model *m, const struct grit_deriv_ws *w, int body, int t, const double *v,
                           grit_dual S[6]);
  /* the position pass's whole residual (derivatives_residual.c; its second compilation for AVX2:
   * derivatives_residual_avx2.c), so that its inlined dual arithmetic takes four partials a vector too */
  void (*dual_residual)(const grit_model *m, const grit_data *d, struct grit_deriv_ws *w, const char *active,
                        int kin_all, int skip_qconst);
  void (*velocity_residual)(const grit_model *m, const grit_data *d, struct grit_deriv_ws *w, const char *active,
                            int controls_only);
} grit_deriv_dual_fns;

/* The table's initializer, written once for both compilations: in derivatives_avx2.c the names expand
 * to their renamed AVX2 copies. `compose` is each translation unit's own static wrapper of the inline
 * grit_tf_compose_c_dual. */
#define GRIT_DERIV_DUAL_FNS_INIT \
  {                                                                                                  \
    grit_contact_reevaluate_dual,   compose,                                                         \
    grit_pair_params_dual,          grit_contact_lagged_normal_impulse_dual,                         \
    grit_contact_jacobian_add_dual, grit_params_finalize_dual,                                       \
    grit_constraint_eval_dual,      grit_body_dof_twist_dual,                                        \
    grit_contact_side_velocity_dual, grit_contact_side_wrench_dual,                                  \
    grit_body_wrench_sub_dual,      grit_deriv_rigid_body,                                           \
    grit_free_side_delassus_dual,   grit_deriv_body_twist,                                           \
    grit_deriv_dual_residual_run,   grit_deriv_velocity_residual_run,                                \
  }

/* body_twist's sums in a position pass, the dofs of bodies the pass does not move by their values only:
 * the same bits (derivatives_rigid.c; w->rn.no_twist_skip: body_twist). */
void grit_deriv_body_twist(const grit_model *m, const struct grit_deriv_ws *w, int body, int t, const double *v,
                           grit_dual S[6]);

/* grit_deriv_dual_residual's and grit_deriv_velocity_residual's bodies (derivatives_residual.c), which
 * call them through w->fx. */
void grit_deriv_dual_residual_run(const grit_model *m, const grit_data *d, struct grit_deriv_ws *w, const char *active,
                                  int kin_all, int skip_qconst);
void grit_deriv_velocity_residual_run(const grit_model *m, const grit_data *d, struct grit_deriv_ws *w,
                                      const char *active, int controls_only);

/* The table for this processor: the AVX2 compilation if it has AVX2 and `allow_avx2`, else the baseline
 * one (the library's own functions). */
const grit_deriv_dual_fns *grit_deriv_dual_fns_get(int allow_avx2);

/* The AVX2 compilation's table (derivatives_avx2.c), NULL where it is not built. */
const grit_deriv_dual_fns *grit_deriv_dual_fns_avx2(void);

#endif
