/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rnea.c — h dID/dq0 and h dc/dv0 of the step's smooth dynamics, all columns of a tree at
 * once, in doubles (derivatives_rnea.h; the derivation is in docs/theory.md, "Analytic partials of the
 * smooth dynamics").
 *
 * Every spatial quantity is at the world origin, so a tangent perturbation of dof j (S_j, its motion
 * subspace) moves every body after it rigidly by the twist S_j: a quantity attached to those bodies
 * changes by S_j x (.), and what is not covariant is what the dofs before j contribute: the twist P_j
 * and acceleration Q_j of the body before j's group. Power invariance cancels the rigid part in the rows
 * of the moved dofs, so each entry is a few dot products of per-dof and per-column 6-vectors with
 * composite (subtree) sums: O(n depth) pairs, each about 24 multiply-adds. */
#include <string.h>

#include "actuation.h"
#include "actuation_muscle.h"
#include "derivatives_rnea.h"
#include "fluid.h"
#include "grit/constraints.h"

void grit_rnea_layout(const grit_model *m, grit_rnea *r, grit_carver *c) {
  const int nb = m->nbody, nv = m->nv;
  GRIT_CARVE(c, r->on, m->ntree);
  GRIT_CARVE(c, r->spin, m->ntree);
  GRIT_CARVE(c, r->grp, nv);
  GRIT_CARVE(c, r->Ic, nb);
  GRIT_CARVE(c, r->Gc, nb);
  GRIT_CARVE(c, r->Bc, 36 * nb);
  GRIT_CARVE(c, r->Hc, 6 * nb);
  GRIT_CARVE(c, r->Fc, 6 * nb);
  GRIT_CARVE(c, r->acc, 6 * nb);
  double **per_dof[] = {&r->P, &r->Q, &r->R, &r->g1, &r->g2, &r->g6, &r->cu, &r->cz, &r->cy, &r->wq, &r->wv};
  for (size_t i = 0; i < sizeof per_dof / sizeof per_dof[0]; ++i) GRIT_CARVE(c, *per_dof[i], 6 * nv);
  GRIT_CARVE(c, r->DQ, m->nM);
  GRIT_CARVE(c, r->DV, m->nM);
  GRIT_CARVE(c, r->zt, 6 * nb);
  GRIT_CARVE(c, r->zh, 6 * nb);
  GRIT_CARVE(c, r->zp, 6 * nv);
  grit_momentum_layout(m, &r->mom, c);
}

void grit_rnea_trees(const grit_model *m, grit_rnea *r) {
  for (int t = 0; t < m->ntree; ++t) r->on[t] = 1, r->spin[t] = 0; /* fluid forces: fluid_partials.c adds theirs */
  for (int a = 0; a < m->nu; ++a) /* a fixed tendon's Jacobian is constant: its terms in A do not move */
    if (grit_actuator_has_length_fn(m, a) &&
        !(m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[m->act_tendon[a]] == GRIT_TENDON_FIXED))
      r->on[m->dof_tree[m->act_dof[a]]] = 0;
  r->any_gravcomp = 0;
  for (int b = 1; b < m->nbody; ++b) {
    const int t = m->body_tree[b];
    r->any_gravcomp |= m->body_gravcomp[b] != 0.0;
    for (int n = 0; t >= 0 && n < m->body_jntnum[b]; ++n) {
      const int type = m->jnt_type[m->body_jnt[m->body_jntadr[b] + n]];
      if (type == GRIT_JOINT_FREE && m->body_parent[b] != 0) r->on[t] = 0;
      if (type == GRIT_JOINT_FREE || type == GRIT_JOINT_BALL) r->spin[t] = 1;
    }
  }
  for (int j = 0; j < m->njnt; ++j) { /* groups: a ball's three dofs, a free joint's three and three */
    const int da = m->jnt_dofadr[j], type = m->jnt_type[j];
    for (int i = 0; i < grit_joint_nv(type); ++i) r->grp[da + i] = type == GRIT_JOINT_FREE ? da + 3 * (i / 3) : da;
  }
}

/* y = S x where S is the (symmetric) 6x6 matrix of a spatial inertia. */
static inline void si_mul(double y[6], const grit_sinertia *s, const double x[6]) { grit_si_apply(y, s, x); }

static inline void sv_axpy(double y[6], double a, const double x[6]) {
  for (int i = 0; i < 6; ++i) y[i] += a * x[i];
}

static inline void si_scale_add(grit_sinertia *r, double a, const grit_sinertia *s) {
  r->m += a * s->m;
  for (int i = 0; i < 3; ++i) r->h[i] += a * s->h[i];
  for (int i = 0; i < 9; ++i) r->I[i] += a * s->I[i];
}

static inline void mat6_mulv(double y[6], const double B[36], const double x[6]) {
  for (int i = 0; i < 6; ++i) {
    double s = 0.0;
    for (int j = 0; j < 6; ++j) s += B[6 * i + j] * x[j];
    y[i] = s;
  }
}

/* Adds B = V x* I - I (V x) to Bc (column by column: B e_c = V x* (I e_c) - I (V x e_c)). */
static void add_inertia_rate(double Bc[36], const grit_sinertia *I, const double V[6]) {
  for (int c = 0; c < 6; ++c) {
    double e[6] = {0, 0, 0, 0, 0, 0}, Ie[6], a[6], t[6], u[6];
    e[c] = 1.0;
    si_mul(Ie, I, e);
    grit_sv_cross_force(a, V, Ie);
    grit_sv_cross_motion(t, V, e);
    si_mul(u, I, t);
    for (int i = 0; i < 6; ++i) Bc[6 * i + c] += a[i] - u[i];
  }
}

/* Body accelerations (with a = (v - v0) / h), forces, the dofs' P, Q, R, and each body's own terms in
 * the composite arrays (the backward pass sums them). */
static void forward(const grit_model *m, const grit_kin *k, const double *v0, const double *v, double h,
                    const double a0[6], grit_rnea *r) {
  for (int b = 1; b < m->nbody; ++b) {
    if (!kin_body_on(m, k, b)) continue;
    const int p = m->body_parent[b];
    double cv[6], ca[6];
    for (int i = 0; i < 6; ++i) cv[i] = p > 0 ? k->cvel[6 * p + i] : 0.0, ca[i] = p > 0 ? r->acc[6 * p + i] : a0[i];
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b];) {
      const int g = r->grp[d];
      int e = d + 1; /* the group d .. e - 1 */
      while (e < m->body_dofadr[b] + m->body_dofnum[b] && r->grp[e] == g) ++e;
      for (int i = d; i < e; ++i) memcpy(r->P + 6 * i, cv, sizeof cv), memcpy(r->Q + 6 * i, ca, sizeof ca);
      for (int i = d; i < e; ++i) {
        const double ai = (v[i] - v0[i]) / h;
        sv_axpy(ca, ai, k->cdof + 6 * i);
        sv_axpy(ca, v0[i], k->cdof_dot + 6 * i);
        sv_axpy(cv, v0[i], k->cdof + 6 * i);
      }
      for (int i = d; i < e; ++i) memcpy(r->R + 6 * i, cv, sizeof cv);
      d = e;
    }
    memcpy(r->acc + 6 * b, ca, sizeof ca);
    const grit_sinertia *I = &k->cinert[b];
    const double *V = k->cvel + 6 * b;
    double *f = r->Fc + 6 * b, *hb = r->Hc + 6 * b, t[6];
    si_mul(f, I, ca); /* f = I a + V x* (I V) - gravcomp I a0 */
    si_mul(hb, I, V);
    grit_sv_cross_force(t, V, hb);
    for (int i = 0; i < 6; ++i) f[i] += t[i];
    r->Ic[b] = *I;
    memset(&r->Gc[b], 0, sizeof r->Gc[b]);
    if (m->body_gravcomp[b] != 0.0) {
      si_mul(t, I, a0);
      sv_axpy(f, -m->body_gravcomp[b], t);
      si_scale_add(&r->Gc[b], m->body_gravcomp[b], I);
    }
    memset(r->Bc + 36 * b, 0, 36 * sizeof(double));
    add_inertia_rate(r->Bc + 36 * b, I, V);
  }
  for (int b = m->nbody - 1; b > 0; --b) { /* composite (subtree) sums */
    const int p = m->body_parent[b];
    if (p <= 0 || !kin_body_on(m, k, b)) continue;
    si_scale_add(&r->Ic[p], 1.0, &r->Ic[b]);
    si_scale_add(&r->Gc[p], 1.0, &r->Gc[b]);
    for (int i = 0; i < 36; ++i) r->Bc[36 * p + i] += r->Bc[36 * b + i];
    for (int i = 0; i < 6; ++i) r->Hc[6 * p + i] += r->Hc[6 * b + i], r->Fc[6 * p + i] += r->Fc[6 * b + i];
  }
}

/* Per dof i (body kb, S = S_i): the row vectors g1 = Gc S, g2 = Ic S, g6 = Bc S - S x* Hc, and the
 * column vectors of dof i as a column. */
static void dof_vectors(const grit_model *m, const grit_kin *k, int i, const double a0[6], grit_rnea *r) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *P = r->P + 6 * i, *Q = r->Q + 6 * i, *R = r->R + 6 * i;
  const grit_sinertia *Ic = &r->Ic[kb], *Gc = &r->Gc[kb];
  const double *Bc = r->Bc + 36 * kb, *Hc = r->Hc + 6 * kb, *Fc = r->Fc + 6 * kb;
  double *g1 = r->g1 + 6 * i, *g2 = r->g2 + 6 * i, *g6 = r->g6 + 6 * i, t[6], t2[6];
  if (r->any_gravcomp) si_mul(g1, Gc, S);
  si_mul(g2, Ic, S);
  mat6_mulv(g6, Bc, S);
  grit_sv_cross_force(t, S, Hc);
  for (int c = 0; c < 6; ++c) g6[c] -= t[c];
  /* position column: u = S x a0, Y = S x P, z = -S x Q + Y x P; wq = S x* Fc + Gc u + Ic z - Bc Y - Y x* Hc */
  double *u = r->cu + 6 * i, *Y = r->cy + 6 * i, *z = r->cz + 6 * i, *wq = r->wq + 6 * i, *wv = r->wv + 6 * i;
  grit_sv_cross_motion(u, S, a0);
  grit_sv_cross_motion(Y, S, P);
  grit_sv_cross_motion(t, S, Q);
  grit_sv_cross_motion(z, Y, P);
  for (int c = 0; c < 6; ++c) z[c] -= t[c];
  grit_sv_cross_force(wq, S, Fc);
  if (r->any_gravcomp) {
    si_mul(t, Gc, u);
    sv_axpy(wq, 1.0, t);
  }
  si_mul(t, Ic, z);
  sv_axpy(wq, 1.0, t);
  mat6_mulv(t, Bc, Y);
  sv_axpy(wq, -1.0, t);
  grit_sv_cross_force(t, Y, Hc);
  sv_axpy(wq, -1.0, t);
  /* velocity column: e = Sdot - S x R; wv = Ic e + Bc S + S x* Hc */
  double e[6];
  grit_sv_cross_motion(t, S, R);
  for (int c = 0; c < 6; ++c) e[c] = k->cdof_dot[6 * i + c] - t[c];
  si_mul(wv, Ic, e);
  mat6_mulv(t, Bc, S);
  grit_sv_cross_force(t2, S, Hc);
  for (int c = 0; c < 6; ++c) wv[c] += t[c] + t2[c];
  memcpy(r->R + 6 * i, e, 6 * sizeof(double));  /* R is read no more: e in its place */
}

/* Row i of column j's position entry when dof i moves with dof j (i after j in its subtree, or in its
 * group): the rigid part cancels, leaving the non-covariant terms. */
static inline double moved_q(const grit_rnea *r, int i, int j) {
  return (r->any_gravcomp ? grit_sv_dot(r->g1 + 6 * i, r->cu + 6 * j) : 0.0) + grit_sv_dot(r->g2 + 6 * i, r->cz + 6 * j) -
         grit_sv_dot(r->g6 + 6 * i, r->cy + 6 * j);
}

void grit_rnea_partials(const grit_model *m, grit_kin *k, const double *v0, const double *v, double h,
                        const char *mask, grit_rnea *r) {
  const char *mk = mask ? mask : r->on, *saved = k->tree_mask;
  k->tree_mask = mk;
  grit_kin_velocities(m, v0, k);
  double a0[6] = {0, 0, 0, -m->opt.gravity[0], -m->opt.gravity[1], -m->opt.gravity[2]};
  forward(m, k, v0, v, h, a0, r);
  grit_momentum_wrenches(m, k, h, &r->mom, r->Fc); /* the momentum correction (derivatives_momentum.c) */
  for (int i = 0; i < m->nv; ++i)
    if (mk[m->dof_tree[i]]) {
      dof_vectors(m, k, i, a0, r);
      grit_momentum_dof(m, k, i, &r->mom, r->cy + 6 * i, r->g6 + 6 * i, r->wq + 6 * i, r->wv + 6 * i);
    }
  for (int t = 0; t < m->ntree; ++t) {
    if (!mk[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    double *DQ = r->DQ + m->tree_madr[t], *DV = r->DV + m->tree_madr[t];
    memset(DQ, 0, sizeof(double) * (size_t)(n * n));
    memset(DV, 0, sizeof(double) * (size_t)(n * n));
    for (int i = adr; i < adr + n; ++i) {
      for (int j = i; j >= 0; j = m->dof_parent[j]) { /* j on i's path to the root, i itself included */
        const int ii = i - adr, jj = j - adr;
        DQ[ii * n + jj] = h * moved_q(r, i, j);
        DV[ii * n + jj] = h * (grit_sv_dot(r->g2 + 6 * i, r->R + 6 * j) + grit_sv_dot(r->g6 + 6 * i, k->cdof + 6 * j));
        if (j == i) continue;
        const double *Sj = k->cdof + 6 * j;
        /* row j above column i: S_j moves with dof i only within a group (a ball's dofs turn each other) */
        DQ[jj * n + ii] = h * (r->grp[j] == r->grp[i] ? moved_q(r, j, i) : grit_sv_dot(Sj, r->wq + 6 * i));
        DV[jj * n + ii] = h * grit_sv_dot(Sj, r->wv + 6 * i);
      }
    }
  }
  k->tree_mask = saved;
}

void grit_rnea_quadratic_gradient(const grit_model *m, const grit_kin *k, grit_rnea *r, int t, const double *z,
                                  double *g) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  /* the tree's bodies come after its root, parents before children (welded ones too: they add to M) */
  const int b0 = m->dof_body[adr], b1 = m->nbody - 1;
  for (int b = b0; b <= b1; ++b) {
    if (m->body_tree[b] != t) continue;
    const int p = m->body_parent[b];
    double *cv = r->zt + 6 * b;
    for (int c = 0; c < 6; ++c) cv[c] = p > 0 && m->body_tree[p] == t ? r->zt[6 * p + c] : 0.0;
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b]; ++d) {
      if (r->grp[d] == d) memcpy(r->zp + 6 * d, cv, 6 * sizeof(double)); /* the group's first dof */
      else memcpy(r->zp + 6 * d, r->zp + 6 * r->grp[d], 6 * sizeof(double));
      sv_axpy(cv, z[d - adr], k->cdof + 6 * d);
    }
    si_mul(r->zh + 6 * b, &k->cinert[b], cv);
  }
  for (int b = b1; b >= b0; --b) {
    const int p = m->body_parent[b];
    if (m->body_tree[b] != t || p <= 0) continue;
    for (int c = 0; c < 6; ++c) r->zh[6 * p + c] += r->zh[6 * b + c];
  }
  for (int i = adr; i < adr + n; ++i) {
    double y[6];
    grit_sv_cross_motion(y, k->cdof + 6 * i, r->zp + 6 * i);
    g[i - adr] -= 2.0 * grit_sv_dot(y, r->zh + 6 * m->dof_body[i]);
  }
}
