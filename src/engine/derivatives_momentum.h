/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_momentum.h — the partials of the step's momentum correction of ball and free bodies
 * (grit_momentum_correction, docs/theory.md "Ball and free bodies: the discrete momentum balance") in
 * closed form, folded into derivatives_rnea.c's recursions (internal).
 *
 * Each spinning body b adds to the bias the generalized forces of a world-origin wrench
 * W_b = X*_b w_b(w), the body-frame wrench w_b = (tb, fb) at its centre of mass a function of its
 * body-frame angular velocity w alone. So W_b moves with the tree like any body-attached wrench (a
 * tangent perturbation S_j: S_j x* W_b), plus G_b dw, G_b = dW_b/dw_world (6 x 3) and, for the bodies
 * dof j moves, dw_world = -(S_j x P_j)_w (P_j the twist before j's group) or, along v0_j, S_j's
 * angular part. With the subtree sums Gm_k = sum G_b the partials enter derivatives_rnea.c's entries
 * through four of its vectors: W_b into the composite forces Fc, Gm^T S_i into the row vector g6's
 * angular part, -Gm (S_i x P_i)_w into the position column wq and Gm S_i,w into the velocity column
 * wv (docs/theory.md, "The momentum correction's partials"). */
#ifndef GRIT_DERIVATIVES_MOMENTUM_H
#define GRIT_DERIVATIVES_MOMENTUM_H

#include "arena.h"
#include "kinematics.h"
#include "model_internal.h"

#include <math.h>

/* r = a x b and r = M x (M row-major 3 x 3, each row summed left to right) on doubles, for the closed
 * forms of the momentum correction and of the free bodies' rows (derivatives_free.c); r must not alias. */
static inline void grit_dm_cross3(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
static inline void grit_dm_mulv3(double r[3], const double M[9], const double x[3]) {
  for (int i = 0; i < 3; ++i) r[i] = M[3 * i] * x[0] + M[3 * i + 1] * x[1] + M[3 * i + 2] * x[2];
}

/* The adjugate of a symmetric 3 x 3 matrix I (row-major) into adj, and its determinant: I^-1 = adj / det,
 * the operations of the step's dyn_sym3_solve. Shared like grit_quat_exp_coeffs below. */
static inline double grit_sym3_adjugate(const double I[9], double adj[9]) {
  adj[0] = I[4] * I[8] - I[5] * I[7];
  adj[1] = I[2] * I[7] - I[1] * I[8];
  adj[2] = I[1] * I[5] - I[2] * I[4];
  adj[4] = I[0] * I[8] - I[2] * I[6];
  adj[5] = I[2] * I[3] - I[0] * I[5];
  adj[8] = I[0] * I[4] - I[1] * I[3];
  adj[3] = adj[1];
  adj[6] = adj[2];
  adj[7] = adj[5];
  return I[0] * adj[0] + I[1] * adj[3] + I[2] * adj[6];
}

/* The exponential map q = (c, s th) of a rotation vector th, |th|^2 = t2 (grit_quat_exp: its series below
 * GRIT_QUAT_SERIES_THETA2), and dc, ds: the derivatives of c and s in t2. Shared by the closed-form
 * partials of the momentum correction and of the free bodies' rows (derivatives_free.c). */
static inline void grit_quat_exp_coeffs(double t2, double *c, double *s, double *dc, double *ds) {
  if (t2 < GRIT_QUAT_SERIES_THETA2) {
    *c = t2 * (t2 * (1.0 / 384.0) - 1.0 / 8.0) + 1.0;
    *s = t2 * (t2 * (1.0 / 3840.0) - 1.0 / 48.0) + 0.5;
    *dc = t2 * (1.0 / 192.0) - 1.0 / 8.0;
    *ds = t2 * (1.0 / 1920.0) - 1.0 / 48.0;
  } else {
    const double tt = sqrt(t2), hh = 0.5 * tt, sn = sin(hh), cs = cos(hh);
    *c = cs;
    *s = sn / tt;
    *dc = -sn / (4.0 * tt);
    *ds = (0.5 * tt * cs - sn) / (2.0 * tt * t2);
  }
}

/* The closed form's state, inside derivatives_rnea.c's grit_rnea (this module sees only its arrays). */
typedef struct grit_momentum {
  int on;      /* the partials include the correction (else the passes take it on duals) */
  double *Gm;  /* (18 nbody) subtree sums of the correction wrenches' dW/dw (6 x 3 each) */
  char *gm_on; /* (nbody) Gm of the body is set: a spinning body at or after it */
  int avx2;    /* grit_momentum_dof's sums with AVX2 (the processor has it; the same bits) */
} grit_momentum;

/* Carves Gm and gm_on (arena.h), from grit_rnea_layout. */
void grit_momentum_layout(const grit_model *m, grit_momentum *mo, grit_carver *c);

/* After derivatives_rnea.c's forward recursion (its composite forces Fc, 6 nbody, summed), with k's
 * velocities at v0: adds each spinning body's correction wrench W_b to Fc and G_b to Gm of it and its
 * ancestors, for the bodies of k's tree mask. Nothing when mo->on is 0. */
void grit_momentum_wrenches(const grit_model *m, const grit_kin *k, double h, grit_momentum *mo, double *Fc);

/* After dof i's vectors (dof_vectors): the correction's terms of its row vector g6 and its columns wq,
 * wv (6 each), Y = S_i x P_i. Nothing when mo->on is 0 or no spinning body is at or after dof i's body. */
void grit_momentum_dof(const grit_model *m, const grit_kin *k, int i, const grit_momentum *mo, const double *Y,
                       double *g6, double *wq, double *wv);

/* The body-frame correction of one body and its Jacobian in w (row-major, dtb/dw and dfb/dw): the
 * couple tb and, with r non-NULL (a root body whose centre of mass is off its joint's anchor), the force
 * fb of grit_momentum_correction, I its rotational inertia, mass its mass. Exposed for the tests. */
void grit_momentum_body(const double I[9], double mass, const double r[3], const double w[3], double h, double tb[3],
                        double Tt[9], double fb[3], double Tf[9]);

#endif
