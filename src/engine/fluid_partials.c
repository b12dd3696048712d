/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_partials.c — the fluid forces' partials in q0 and v0 (fluid_partials.h), all columns of a tree at
 * once, in doubles: each body's wrench g and its 6x6 partials K in the body's twist (the inertia box in
 * closed form, the ellipsoid model on dual numbers), summed over subtrees, then per dof and column a few
 * dot products as in derivatives_rnea.c. */
#include "fluid_partials.h"

#include <math.h>
#include <string.h>

#include "fluid.h"

void grit_fluid_partials_layout(const grit_model *m, grit_fluid_partials *f, grit_carver *c) {
  const int on = grit_fluid_on(m), nb = on ? m->nbody : 0, nv = on ? m->nv : 0;
  GRIT_CARVE(c, f->g, 6 * nb);
  GRIT_CARVE(c, f->K, 36 * nb);
  GRIT_CARVE(c, f->y, 6 * nv);
  GRIT_CARVE(c, f->kr, 6 * nv);
  GRIT_CARVE(c, f->wq, 6 * nv);
  GRIT_CARVE(c, f->wv, 6 * nv);
}

/* The inertia box of body b (fluid_generic.h): its wrench g (negated) and K = dg/dV. In the box's frame
 * at the centre of mass c the local twist is T V, rows (r_i; 0) for w_i and (c x r_i; r_i) for v_i (r_i
 * the box's axes in the world), and the local wrench's partials are diagonal: d tl_i/d wl_i and
 * d fl_i/d vl_i; g = -T^T (tl, fl), so K = -sum_i dt_i a_i a_i^T + df_i b_i b_i^T. */
static void box(const grit_model *m, const grit_kin *k, int b, double g[6], double K[36]) {
  const double rho = m->opt.density, mu = m->opt.viscosity, pi = 3.14159265358979323846;
  double bx[3], P[9], R[9];
  grit_fluid_box(m->body_mass[b], m->body_inertia + 9 * b, m->body_iquat + 4 * b, bx, P);
  const double *tw = k->cvel + 6 * b, *c = k->xipos + 3 * b;
  grit_m3_mul_c(R, k->xmat + 9 * b, P);
  double vc[3], rel[3], wl[3], vl[3], tl[3], fl[3], T[3], F[3], n[3];
  grit_v3_cross(vc, tw, c);
  for (int i = 0; i < 3; ++i) rel[i] = tw[3 + i] + vc[i] - m->opt.wind[i];
  grit_m3_tmulv(wl, R, tw);
  grit_m3_tmulv(vl, R, rel);
  const double dm = (bx[0] + bx[1] + bx[2]) / 3.0;
  memset(K, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, l = (i + 2) % 3;
    const double bj2 = bx[j] * bx[j], bl2 = bx[l] * bx[l];
    const double cf = 0.5 * rho * bx[j] * bx[l], ct = rho * bx[i] * (bj2 * bj2 + bl2 * bl2) / 64.0;
    fl[i] = -(3.0 * pi * dm * mu * vl[i] + cf * fabs(vl[i]) * vl[i]);
    tl[i] = -(pi * dm * dm * dm * mu * wl[i] + ct * fabs(wl[i]) * wl[i]);
    const double df = 3.0 * pi * dm * mu + 2.0 * cf * fabs(vl[i]), dt = pi * dm * dm * dm * mu + 2.0 * ct * fabs(wl[i]);
    const double a[6] = {R[i], R[3 + i], R[6 + i], 0.0, 0.0, 0.0};
    double s[6] = {0.0, 0.0, 0.0, R[i], R[3 + i], R[6 + i]};
    grit_v3_cross(s, c, s + 3); /* c x r_i */
    for (int p = 0; p < 6; ++p)
      for (int q = 0; q < 6; ++q) K[6 * p + q] += dt * a[p] * a[q] + df * s[p] * s[q];
  }
  grit_m3_mulv(T, R, tl);
  grit_m3_mulv(F, R, fl);
  grit_v3_cross(n, c, F);
  for (int i = 0; i < 3; ++i) g[i] = -(T[i] + n[i]), g[3 + i] = -F[i];
}

/* Geometry g of the ellipsoid model: its wrench added to gb, its partials in the twist to Kb, by one
 * dual evaluation with the twist's six components seeded on six lanes (positions constant). */
static void ellipsoid(const grit_model *m, const grit_kin *k, int g, double gb[6], double Kb[36]) {
  const int b = m->geom_body[g];
  grit_dual xp[3], xm[9], tw[6], w[6];
  for (int i = 0; i < 3; ++i) xp[i] = grit_dual_const(k->xpos[3 * b + i]);
  for (int i = 0; i < 9; ++i) xm[i] = grit_dual_const(k->xmat[9 * b + i]);
  for (int i = 0; i < 6; ++i) {
    tw[i] = grit_dual_const(k->cvel[6 * b + i]);
    tw[i].d[i] = 1.0;
    w[i] = grit_dual_const(0.0);
  }
  grit_fluid_geom_wrench_dual(m, xp, xm, tw, g, w);
  for (int p = 0; p < 6; ++p) {
    gb[p] += w[p].v;
    for (int q = 0; q < 6; ++q) Kb[6 * p + q] += w[p].d[q];
  }
}

/* Whether body b (of a tree of mask) feels the fluid (fluid_generic.h's rule). */
static int feels(const grit_model *m, const char *mask, int b) {
  return m->body_tree[b] >= 0 && mask[m->body_tree[b]] && m->body_mass[b] >= GRIT_FLUID_MIN_MASS;
}

/* g and K per body, then summed over subtrees. */
static void body_terms(const grit_model *m, const grit_kin *k, const char *mask, grit_fluid_partials *f) {
  memset(f->g, 0, sizeof(double) * 6 * (size_t)m->nbody);
  memset(f->K, 0, sizeof(double) * 36 * (size_t)m->nbody);
  for (int b = 1; b < m->nbody; ++b)
    if (feels(m, mask, b) && !m->body_fluid_ellipsoid[b]) box(m, k, b, f->g + 6 * b, f->K + 36 * b);
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_fluid[GRIT_FLUID_NGEOM * g] != 0.0 && feels(m, mask, m->geom_body[g]))
      ellipsoid(m, k, g, f->g + 6 * m->geom_body[g], f->K + 36 * m->geom_body[g]);
  for (int b = m->nbody - 1; b > 0; --b) {
    const int p = m->body_parent[b];
    if (p <= 0 || m->body_tree[b] < 0 || !mask[m->body_tree[b]]) continue;
    for (int i = 0; i < 6; ++i) f->g[6 * p + i] += f->g[6 * b + i];
    for (int i = 0; i < 36; ++i) f->K[36 * p + i] += f->K[36 * b + i];
  }
}

/* Dof i's vectors: y = S x (P - W), kr = K^T S, wq = S x* g - K y, wv = K S (g, K of its body's subtree). */
static void dof_vectors(const grit_model *m, const grit_kin *k, const grit_rnea *r, int i, grit_fluid_partials *f) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb;
  double pw[6], *y = f->y + 6 * i, *kr = f->kr + 6 * i, *wq = f->wq + 6 * i, *wv = f->wv + 6 * i;
  for (int c = 0; c < 6; ++c) pw[c] = r->P[6 * i + c] - (c < 3 ? 0.0 : m->opt.wind[c - 3]);
  grit_sv_cross_motion(y, S, pw);
  grit_sv_cross_force(wq, S, f->g + 6 * kb);
  for (int p = 0; p < 6; ++p) {
    double a = 0.0, b = 0.0, e = 0.0;
    for (int q = 0; q < 6; ++q) a += K[6 * q + p] * S[q], b += K[6 * p + q] * y[q], e += K[6 * p + q] * S[q];
    kr[p] = a, wq[p] -= b, wv[p] = e;
  }
}

void grit_fluid_partials_add(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, grit_fluid_partials *f) {
  const char *mask = r->on;
  body_terms(m, k, mask, f);
  for (int i = 0; i < m->nv; ++i)
    if (mask[m->dof_tree[i]]) dof_vectors(m, k, r, i, f);
  for (int t = 0; t < m->ntree; ++t) {
    if (!mask[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    double *DQ = r->DQ + m->tree_madr[t], *DV = r->DV + m->tree_madr[t];
    for (int i = adr; i < adr + n; ++i)
      for (int j = i; j >= 0; j = m->dof_parent[j]) { /* j on i's path to the root, i itself included */
        const int ii = i - adr, jj = j - adr;
        const double *kri = f->kr + 6 * i, *Sj = k->cdof + 6 * j;
        DQ[ii * n + jj] -= h * grit_sv_dot(kri, f->y + 6 * j); /* i moves with j */
        DV[ii * n + jj] += h * grit_sv_dot(kri, Sj);
        if (j == i) continue;
        /* row j above column i: sees the whole change, but within a group (a ball) moves with i */
        DQ[jj * n + ii] += h * (r->grp[j] == r->grp[i] ? -grit_sv_dot(f->kr + 6 * j, f->y + 6 * i) : grit_sv_dot(Sj, f->wq + 6 * i));
        DV[jj * n + ii] += h * grit_sv_dot(Sj, f->wv + 6 * i);
      }
  }
}
