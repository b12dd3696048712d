/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_free.c — the velocity pass's partials of a free body's residual rows in closed form (issue
 * #31). For a qconst tree (one body on a free joint, its centre of mass at the body origin; no tendon
 * actuator, fluid or adhesion: derivatives.c) the smooth residual's rows are, in grit's coordinates (the
 * origin's velocity in the world, the angular velocity w in the body frame),
 *   r = A (v - v0) - h force,  force = -c(v0) - D v0,  c = (-m g, w x I w + tb(w)),
 * tb the momentum correction's couple (grit_momentum_correction, zero with explicit_gyroscopic). So
 *   dr/dv0 = -A + h (dc/dv0 + D),  dc/dv0 = [0 0; 0 [w]x I - [I w]x + dtb/dw],
 * the translation rows and columns of dc/dv0 exactly zero. The dual velocity pass forms the same matrix
 * through the world-origin twists, the recursive Newton-Euler bias and the correction on 8-lane duals
 * (17 k instructions per body); here it is ~1 k. The values agree to round-off (the dual pass's
 * translation entries are round-off residues of terms that cancel: m v x w and its like).
 * Also, for SAP's contacts between such bodies (and the world), the Delassus estimate of a position pass
 * from their constant A^-1 without forming J_c (grit_free_side_delassus, derivatives_contact_generic.h). */
#include <math.h>

#include "collision.h"
#include "derivatives_contact.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"

int grit_deriv_free_velocity_closed(const grit_model *m, const grit_deriv_ws *w, int t) {
  (void)m;
  return w->qconst[t] && !w->no_free_closed && w->act_ptr[t] == w->act_ptr[t + 1];
}



/* dtb/dw (row-major) of the couple of grit_momentum_correction for a body with its centre of mass at its
 * joint's anchor: L = I w, g = w x L, w~ = w - h I^-1 g, q = exp(-h w~) (grit_quat_exp, its series
 * below GRIT_QUAT_SERIES_THETA2), Lr = q L q*, tb = (L - Lr) / h - g. The chain rule of those
 * operations, one direction e_k of w at a time. */
static void couple_jacobian(const double I[9], const double w[3], double h, double T[9]) {
  double L[3], g[3], adj[9], x[3], th[3];
  grit_dm_mulv3(L, I, w);
  grit_dm_cross3(g, w, L);
  const double det = grit_sym3_adjugate(I, adj); /* I^-1 = adj / det (dyn_sym3_solve) */
  grit_dm_mulv3(x, adj, g);
  for (int i = 0; i < 3; ++i) th[i] = -h * (w[i] - h * (x[i] / det));
  const double t2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2];
  double c, s, dc, ds; /* q = (c, s th); dc, ds: d c / d t2, d s / d t2 */
  grit_quat_exp_coeffs(t2, &c, &s, &dc, &ds);
  double u[3], p[3];
  for (int i = 0; i < 3; ++i) u[i] = s * th[i];
  grit_dm_cross3(p, u, L);
  for (int k = 0; k < 3; ++k) {
    double dL[3], dg[3], a[3], b[3], dx[3], dth[3], du[3], dp[3], dr[3];
    for (int i = 0; i < 3; ++i) dL[i] = I[3 * i + k];
    const double e[3] = {k == 0, k == 1, k == 2};
    grit_dm_cross3(a, e, L);
    grit_dm_cross3(b, w, dL);
    for (int i = 0; i < 3; ++i) dg[i] = a[i] + b[i];
    grit_dm_mulv3(dx, adj, dg);
    for (int i = 0; i < 3; ++i) dth[i] = -h * (e[i] - h * (dx[i] / det));
    const double dt2 = 2.0 * (th[0] * dth[0] + th[1] * dth[1] + th[2] * dth[2]);
    const double dcv = dc * dt2, dsv = ds * dt2;
    for (int i = 0; i < 3; ++i) du[i] = s * dth[i] + dsv * th[i];
    grit_dm_cross3(a, du, L);
    grit_dm_cross3(b, u, dL);
    for (int i = 0; i < 3; ++i) dp[i] = a[i] + b[i];
    grit_dm_cross3(a, du, p);
    grit_dm_cross3(b, u, dp);
    for (int i = 0; i < 3; ++i) dr[i] = dL[i] + 2.0 * (dcv * p[i] + c * dp[i] + a[i] + b[i]);
    for (int i = 0; i < 3; ++i) T[3 * i + k] = (dL[i] - dr[i]) * (1.0 / h) - dg[i];
  }
}

void grit_deriv_free_velocity_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int t) {
  const double h = m->opt.timestep;
  const int adr = m->tree_dofadr[t], a0 = m->tree_madr[t], b = m->dof_body[adr];
  const double *I = m->body_inertia + 9 * b, *wb = d->vprev + adr + 3;
  double C[9] = {0}; /* dc/dw: [w]x I - [I w]x (+ dtb/dw) */
  double L[3];
  grit_dm_mulv3(L, I, wb);
  for (int k = 0; k < 3; ++k) { /* column k: d (w x I w) / d w_k = e_k x L + w x I e_k */
    const double e[3] = {k == 0, k == 1, k == 2}, Ik[3] = {I[k], I[3 + k], I[6 + k]};
    double a[3], bb[3];
    grit_dm_cross3(a, e, L);
    grit_dm_cross3(bb, wb, Ik);
    for (int i = 0; i < 3; ++i) C[3 * i + k] = a[i] + bb[i];
  }
  if (!m->opt.explicit_gyroscopic) {
    double T[9];
    couple_jacobian(I, wb, h, T);
    for (int i = 0; i < 9; ++i) C[i] += T[i];
  }
  for (int i = 0; i < 6; ++i) {
    grit_dual *ri = w->r + adr + i;
    ri->v = 0.0; /* only the partials are read */
    for (int j = 0; j < GRIT_DUAL_N; ++j) {
      if (j >= 6) {
        ri->d[j] = 0.0;
        continue;
      }
      const double dc = i >= 3 && j >= 3 ? C[3 * (i - 3) + (j - 3)] : 0.0;
      const double f = -dc - (i == j ? m->dof_damping[adr + i] : 0.0); /* d force_i / d v0_j */
      ri->d[j] = -d->Aprev[a0 + 6 * i + j] - f * h;
    }
  }
}

/* A^-1 of each qconst tree from its constant factor L (w->Ad, prepare_passes): L L^T X = I column by
 * column, for the contacts' Delassus estimates without J_c (grit_deriv_free_delassus). */
void grit_deriv_free_inverses(const grit_model *m, grit_deriv_ws *w) {
  for (int t = 0; t < m->ntree; ++t) {
    if (!w->qconst[t]) continue;
    const double *L = w->Ad + m->tree_madr[t];
    double *G = w->Ainv + m->tree_madr[t];
    for (int c = 0; c < 6; ++c) {
      double x[6];
      /* L y = e_c. y's entries above c are +0 (0 - L x = +0 for finite L, then +0 / L_ii > 0), and
       * subtracting their products (+-0) from s leaves s (1, or +0 below c) as it is: the sums start
       * at q = c, the same bits as over all q for a factor with finite entries and a positive diagonal */
      for (int i = 0; i < c; ++i) x[i] = 0.0;
      for (int i = c; i < 6; ++i) {
        double s = i == c ? 1.0 : 0.0;
        for (int q = c; q < i; ++q) s -= L[6 * i + q] * x[q];
        x[i] = s / L[6 * i + i];
      }
      for (int i = 5; i >= 0; --i) { /* L^T x = y */
        double s = x[i];
        for (int q = i + 1; q < 6; ++q) s -= L[6 * q + i] * x[q];
        x[i] = s / L[6 * i + i];
      }
      for (int i = 0; i < 6; ++i) G[6 * i + c] = x[i];
    }
    for (int i = 0; i < 6; ++i) /* symmetric to the bit: the mean of the two solves' round-off */
      for (int j = 0; j < i; ++j) G[6 * i + j] = G[6 * j + i] = 0.5 * (G[6 * i + j] + G[6 * j + i]);
  }
}

int grit_deriv_free_delassus_ok(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k) {
  (void)m;
  /* SAP's contacts only: the regularized Lagged model's and gradient smoothing's estimates keep J_c's
   * path (a round-off change there turned test_ilqr_tasks' annealed gripper, a search sensitive to
   * round-off, from a stalled stop into a converged one short of its goal: docs/performance.md, stop 16) */
  if (w->no_free_closed || k->dim != 3 || k->kind != GRIT_CONSTRAINT_SAP || k->p.smooth > 0.0 || k->p.soft > 0.0)
    return 0;
  for (int q = 0; q < k->ntree; ++q)
    if (!w->qconst[k->tree[q]]) return 0;
  return 1;
}

grit_dual grit_deriv_free_delassus(const grit_model *m, const grit_deriv_ws *w, const grit_contact_candidate *cand,
                                   const grit_constraint *k, const grit_dual *pa, const grit_dual *pb) {
  grit_dual s = grit_dual_const(0.0);
  for (int q = 0; q < k->ntree; ++q) {
    const int t = k->tree[q];
    for (int side = 1; side >= 0; --side)
      if (grit_body_tree(m, cand->body[side]) == t)
        s = grit_dual_add(s, w->fx->free_side_delassus(m, &w->kin, t, side ? pb : pa, w->Ainv + m->tree_madr[t]));
  }
  return grit_dual_scale(s, 1.0 / 3.0);
}
