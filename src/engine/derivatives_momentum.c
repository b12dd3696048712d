/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_momentum.c — the momentum correction's partials in closed form, in doubles, once per
 * derivative call, inside derivatives_rnea.c's recursions (derivatives_momentum.h; docs/theory.md, "The
 * momentum correction's partials"). Before, every position and velocity pass re-evaluated the correction
 * on dual numbers (rnea_bias in derivatives_residual.c), 6-8 % of A,B on floating robots (issue #31).
 *
 * The body-frame correction depends on the body's angular velocity w alone; its 3 x 3 Jacobians follow
 * the operations of grit_momentum_correction one direction e_k of w at a time (the chain rule through
 * the adjugate solve, the exponential map with its series below GRIT_QUAT_SERIES_THETA2, and the
 * quaternion rotation), so that they agree with the dual path to round-off. */
#include "derivatives_momentum.h"

#include <math.h>
#include <string.h>

void grit_momentum_layout(const grit_model *m, grit_momentum *mo, grit_carver *c) {
  GRIT_CARVE(c, mo->Gm, 18 * m->nbody);
  GRIT_CARVE(c, mo->gm_on, m->nbody);
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  mo->avx2 = __builtin_cpu_supports("avx2");
#endif
}

/* Whether body b turns about a ball or free joint (grit_momentum_correction's bodies). */
static int spins(const grit_model *m, int b) {
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int type = m->jnt_type[m->body_jnt[m->body_jntadr[b] + n]];
    if (type == GRIT_JOINT_BALL || type == GRIT_JOINT_FREE) return 1;
  }
  return 0;
}



/* y = rot(exp(th)) x (grit_quat_exp, grit_quat_rotate) and its Jacobian Jy = dy/dw from Jth = dth/dw and
 * Jx = dx/dw (all 3 x 3 row-major, column k the direction e_k of w). */
static void rotate_exp(const double th[3], const double Jth[9], const double x[3], const double Jx[9], double y[3],
                       double Jy[9]) {
  const double t2 = th[0] * th[0] + th[1] * th[1] + th[2] * th[2];
  double c, s, dc, ds; /* q = (c, s th); dc, ds: their derivatives in t2 */
  grit_quat_exp_coeffs(t2, &c, &s, &dc, &ds);
  double u[3], t[3], ut[3]; /* y = x + c t + u x t, t = 2 u x x */
  for (int i = 0; i < 3; ++i) u[i] = s * th[i];
  grit_dm_cross3(t, u, x);
  for (int i = 0; i < 3; ++i) t[i] *= 2.0;
  grit_dm_cross3(ut, u, t);
  for (int i = 0; i < 3; ++i) y[i] = c * t[i] + x[i] + ut[i];
  for (int k = 0; k < 3; ++k) {
    const double dth[3] = {Jth[k], Jth[3 + k], Jth[6 + k]}, dx[3] = {Jx[k], Jx[3 + k], Jx[6 + k]};
    const double dt2 = 2.0 * (th[0] * dth[0] + th[1] * dth[1] + th[2] * dth[2]);
    double du[3], a[3], b[3], dt[3], dut[3];
    for (int i = 0; i < 3; ++i) du[i] = s * dth[i] + ds * dt2 * th[i];
    grit_dm_cross3(a, du, x);
    grit_dm_cross3(b, u, dx);
    for (int i = 0; i < 3; ++i) dt[i] = 2.0 * (a[i] + b[i]);
    grit_dm_cross3(a, du, t);
    grit_dm_cross3(b, u, dt);
    for (int i = 0; i < 3; ++i) dut[i] = a[i] + b[i];
    for (int i = 0; i < 3; ++i) Jy[3 * i + k] = dc * dt2 * t[i] + c * dt[i] + dx[i] + dut[i];
  }
}

void grit_momentum_body(const double I[9], double mass, const double r[3], const double w[3], double h, double tb[3],
                        double Tt[9], double fb[3], double Tf[9]) {
  double L[3], g[3], adj[9], x[3], wp[3], th[3], Jg[9], Jwp[9], Jth[9], Lr[3], JLr[9];
  grit_dm_mulv3(L, I, w);
  grit_dm_cross3(g, w, L); /* the explicit gyroscopic torque */
  const double det = grit_sym3_adjugate(I, adj); /* I^-1 = adj / det (dyn_sym3_solve) */
  grit_dm_mulv3(x, adj, g);
  for (int i = 0; i < 3; ++i) wp[i] = w[i] - h * (x[i] / det), th[i] = -h * wp[i]; /* w~, -h w~ */
  for (int k = 0; k < 3; ++k) { /* dg = e_k x L + w x I e_k; dw~ = e_k - h I^-1 dg */
    const double e[3] = {k == 0, k == 1, k == 2}, Ik[3] = {I[k], I[3 + k], I[6 + k]};
    double a[3], b[3], dg[3], dx[3];
    grit_dm_cross3(a, e, L);
    grit_dm_cross3(b, w, Ik);
    for (int i = 0; i < 3; ++i) dg[i] = a[i] + b[i];
    grit_dm_mulv3(dx, adj, dg);
    for (int i = 0; i < 3; ++i) {
      Jg[3 * i + k] = dg[i];
      Jwp[3 * i + k] = e[i] - h * (dx[i] / det);
      Jth[3 * i + k] = -h * Jwp[3 * i + k];
    }
  }
  rotate_exp(th, Jth, L, I, Lr, JLr); /* exp(-h w~) L, dL/dw = I */
  for (int i = 0; i < 3; ++i) tb[i] = (L[i] - Lr[i]) * (1.0 / h) - g[i];
  for (int i = 0; i < 9; ++i) Tt[i] = (I[i] - JLr[i]) * (1.0 / h) - Jg[i];
  if (!r) {
    for (int i = 0; i < 3; ++i) fb[i] = 0.0;
    for (int i = 0; i < 9; ++i) Tf[i] = 0.0;
    return;
  }
  double y[3], Jy[9], yr[3], Jyr[9], c1[3], a[3];
  grit_dm_cross3(y, wp, r);
  for (int k = 0; k < 3; ++k) { /* dy = dw~ x r */
    const double dw[3] = {Jwp[k], Jwp[3 + k], Jwp[6 + k]};
    double t[3];
    grit_dm_cross3(t, dw, r);
    for (int i = 0; i < 3; ++i) Jy[3 * i + k] = t[i];
  }
  for (int i = 0; i < 3; ++i) th[i] = -th[i];
  for (int i = 0; i < 9; ++i) Jth[i] = -Jth[i];
  rotate_exp(th, Jth, y, Jy, yr, Jyr); /* exp(h w~) (w~ x r) */
  grit_dm_cross3(c1, w, r);
  grit_dm_cross3(a, w, c1);
  for (int i = 0; i < 3; ++i) fb[i] = mass * ((yr[i] - y[i]) * (1.0 / h) - a[i]);
  for (int k = 0; k < 3; ++k) { /* da = e_k x (w x r) + w x (e_k x r) */
    const double e[3] = {k == 0, k == 1, k == 2};
    double p[3], q[3], t[3];
    grit_dm_cross3(p, e, c1);
    grit_dm_cross3(t, e, r);
    grit_dm_cross3(q, w, t);
    for (int i = 0; i < 3; ++i) Tf[3 * i + k] = mass * ((Jyr[3 * i + k] - Jy[3 * i + k]) * (1.0 / h) - (p[i] + q[i]));
  }
}

void grit_momentum_wrenches(const grit_model *m, const grit_kin *k, double h, grit_momentum *mo, double *Fc) {
  if (!mo->on) return;
  memset(mo->gm_on, 0, (size_t)m->nbody);
  for (int b = 1; b < m->nbody; ++b) {
    if (!kin_body_on(m, k, b) || !spins(m, b)) continue;
    const double *R = k->xmat + 9 * b, *xc = k->xipos + 3 * b, *I = m->body_inertia + 9 * b;
    double w[3], rl[3], tb[3], Tt[9], fb[3], Tf[9];
    grit_m3_tmulv(w, R, k->cvel + 6 * b); /* body-frame angular velocity */
    const int j = m->body_jnt[m->body_jntadr[b]];
    /* as grit_momentum_correction: the force for a root body whose centre of mass is off the anchor */
    const int com_at_anchor = m->jnt_type[j] == GRIT_JOINT_FREE && m->body_com[3 * b] == 0.0 &&
                              m->body_com[3 * b + 1] == 0.0 && m->body_com[3 * b + 2] == 0.0;
    const int root = m->body_parent[b] == 0 && !com_at_anchor;
    if (root) {
      double rw[3];
      grit_v3_sub(rw, xc, k->xanchor + 3 * j);
      grit_m3_tmulv(rl, R, rw); /* COM about the anchor, body frame: fixed in the body */
    }
    grit_momentum_body(I, m->body_mass[b], root ? rl : NULL, w, h, tb, Tt, fb, Tf);
    /* the world-origin wrench W = (R tb + xc x R fb, R fb) and G = dW/dw_world = (R Tt R^T + [xc]x R Tf
     * R^T; R Tf R^T): w = R^T w_world */
    double W[6], fw[3], n[3], G[18], A[9], B[9], C[9];
    grit_m3_mulv(W, R, tb);
    grit_m3_mulv(fw, R, fb);
    grit_dm_cross3(n, xc, fw);
    for (int i = 0; i < 3; ++i) W[i] += root ? n[i] : 0.0, W[3 + i] = root ? fw[i] : 0.0;
    grit_m3_mul(A, R, Tt);
    grit_m3_mult(B, A, R); /* R Tt R^T */
    grit_m3_mul(A, R, Tf);
    grit_m3_mult(C, A, R); /* R Tf R^T */
    for (int c = 0; c < 3; ++c) {
      const double col[3] = {C[c], C[3 + c], C[6 + c]};
      double t[3];
      grit_dm_cross3(t, xc, col);
      for (int i = 0; i < 3; ++i) G[3 * i + c] = B[3 * i + c] + t[i], G[3 * (3 + i) + c] = col[i];
    }
    for (int a = b; a > 0; a = m->body_parent[a]) { /* the subtree sums of its ancestors */
      double *Gm = mo->Gm + 18 * a;
      if (!mo->gm_on[a]) memset(Gm, 0, 18 * sizeof(double)), mo->gm_on[a] = 1;
      for (int i = 0; i < 18; ++i) Gm[i] += G[i];
      for (int i = 0; i < 6; ++i) Fc[6 * a + i] += W[i];
    }
  }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define MOMENTUM_AVX2 1
typedef double mom4 __attribute__((vector_size(32)));
typedef double mom2 __attribute__((vector_size(16)));
/* grit_momentum_dof's sums with AVX2, each entry the same operations in the same order (a lane per row c
 * of G^T S, starting from 0.0; a lane per column q of the two columns' sums): the same bits. The scalar
 * loops were ~265 instructions a dof, 3-5 % of a one-body scene's A,B. */
static __attribute__((target("avx2"))) void dof_sums_avx2(const double *G, const double *S, const double *Y,
                                                          double *g6, double *wq, double *wv) {
  mom4 s = {0.0, 0.0, 0.0, 0.0};
  for (int q = 0; q < 6; ++q) {
    const mom4 gq = {G[3 * q], G[3 * q + 1], G[3 * q + 2], 0.0};
    s += gq * (mom4){S[q], S[q], S[q], S[q]};
  }
  for (int c = 0; c < 3; ++c) g6[c] += s[c];
  const mom4 a0 = {G[0], G[3], G[6], G[9]}, a1 = {G[1], G[4], G[7], G[10]}, a2 = {G[2], G[5], G[8], G[11]};
  const mom2 b0 = {G[12], G[15]}, b1 = {G[13], G[16]}, b2 = {G[14], G[17]};
  const mom4 y0 = {Y[0], Y[0], Y[0], Y[0]}, y1 = {Y[1], Y[1], Y[1], Y[1]}, y2 = {Y[2], Y[2], Y[2], Y[2]};
  const mom4 s0 = {S[0], S[0], S[0], S[0]}, s1 = {S[1], S[1], S[1], S[1]}, s2 = {S[2], S[2], S[2], S[2]};
  const mom4 q4 = a0 * y0 + a1 * y1 + a2 * y2, v4 = a0 * s0 + a1 * s1 + a2 * s2;
  const mom2 y0h = {Y[0], Y[0]}, y1h = {Y[1], Y[1]}, y2h = {Y[2], Y[2]};
  const mom2 s0h = {S[0], S[0]}, s1h = {S[1], S[1]}, s2h = {S[2], S[2]};
  const mom2 q2 = b0 * y0h + b1 * y1h + b2 * y2h, v2 = b0 * s0h + b1 * s1h + b2 * s2h;
  for (int q = 0; q < 4; ++q) wq[q] -= q4[q], wv[q] += v4[q];
  for (int q = 0; q < 2; ++q) wq[4 + q] -= q2[q], wv[4 + q] += v2[q];
}
#else
#define MOMENTUM_AVX2 0
#endif

void grit_momentum_dof(const grit_model *m, const grit_kin *k, int i, const grit_momentum *mo, const double *Y,
                       double *g6, double *wq, double *wv) {
  const int kb = m->dof_body[i];
  if (!mo->on || !mo->gm_on[kb]) return;
  const double *G = mo->Gm + 18 * kb, *S = k->cdof + 6 * i;
#if MOMENTUM_AVX2
  if (mo->avx2) {
    dof_sums_avx2(G, S, Y, g6, wq, wv);
    return;
  }
#endif
  for (int c = 0; c < 3; ++c) { /* row vector: Gm^T S (rows moved by a column: -. Y_w, . S_w) */
    double s = 0.0;
    for (int q = 0; q < 6; ++q) s += G[3 * q + c] * S[q];
    g6[c] += s;
  }
  for (int q = 0; q < 6; ++q) { /* columns: the bodies dof i moves turn their w by -Y_w (positions), S_w */
    wq[q] -= G[3 * q] * Y[0] + G[3 * q + 1] * Y[1] + G[3 * q + 2] * Y[2];
    wv[q] += G[3 * q] * S[0] + G[3 * q + 1] * S[1] + G[3 * q + 2] * S[2];
  }
}
