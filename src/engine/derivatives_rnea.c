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

/* The recursions are also compiled for AVX2 and chosen at run time, as derivatives_quadgrad.c's sweep:
 * the same operations in the same order, no fused multiply-adds (-ffp-contract=off; the target has no
 * FMA), so the same bits on any x86-64 processor (GRIT_NO_AVX2: the baseline only). */
/* (RN_AVX2, RN_INLINE: derivatives_rnea.h) */

void grit_rnea_layout(const grit_model *m, grit_rnea *r, grit_carver *c) {
  const int nb = m->nbody, nv = m->nv;
  GRIT_CARVE(c, r->on, m->ntree);
  GRIT_CARVE(c, r->spin, m->ntree);
  GRIT_CARVE(c, r->grp, nv);
  GRIT_CARVE(c, r->Ic, nb);
  GRIT_CARVE(c, r->Gc, nb);
  GRIT_CARVE(c, r->Bc, RATE_N * nb);
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
  GRIT_CARVE(c, r->pk, (size_t)PK_N * nv);
  grit_momentum_layout(m, &r->mom, c);
}

void grit_rnea_trees(const grit_model *m, grit_rnea *r) {
  for (int t = 0; t < m->ntree; ++t) r->on[t] = 1, r->spin[t] = 0; /* fluid forces: fluid_partials.c adds theirs */
  /* a tendon, slider-crank or site actuator's implicit slopes in A move with q0: the position passes add
   * their partials from the transmissions' dual moments (derivatives_tendon.c, w->tnA) */
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

/* The entries of B in grit_rnea_inertia_rate's layout from the locals i0..i8, h0..h2, m, v0..v5 and a01,
 * a02, a12 in scope: written once for the scalar path (double) and the four-body lanes (body_terms4's
 * vector type), whose element-wise operations are the same, in the same order. */
#define RN_RATE_ENTRIES(b)                                                              \
  do {                                                                                  \
    b[0] = (a01 + (i6 * v1 - i3 * v2)) - ((i1 * v2 - i2 * v1) - a01);                  \
    b[1] = ((i7 * v1 - i4 * v2) - v4 * h0) - (v3 * h1 + (i2 * v0 - i0 * v2));          \
    b[2] = ((i8 * v1 - i5 * v2) - v5 * h0) - (v3 * h2 + (i0 * v1 - i1 * v0));          \
    b[3] = ((i0 * v2 - i6 * v0) - v3 * h1) - (v4 * h0 + (i4 * v2 - i5 * v1));          \
    b[4] = (a02 + (i1 * v2 - i7 * v0)) - ((i5 * v0 - i3 * v2) - a02);                  \
    b[5] = ((i2 * v2 - i8 * v0) - v5 * h1) - (v4 * h2 + (i3 * v1 - i4 * v0));          \
    b[6] = ((i3 * v0 - i0 * v1) - v3 * h2) - (v5 * h0 + (i7 * v2 - i8 * v1));          \
    b[7] = ((i4 * v0 - i1 * v1) - v4 * h2) - (v5 * h1 + (i8 * v0 - i6 * v2));          \
    b[8] = (a12 + (i5 * v0 - i2 * v1)) - ((i6 * v1 - i7 * v0) - a12);                  \
    b[9] = (v1 * h0 - v5 * m) - v0 * h1;     /* (0,4) */                                \
    b[10] = (v2 * h0 + v4 * m) - v0 * h2;    /* (0,5) = (5,0) */                        \
    b[11] = (v0 * h1 + v5 * m) - v1 * h0;    /* (1,3) = (3,1) */                        \
    b[12] = (v2 * h1 - v3 * m) - v1 * h2;    /* (1,5) */                                \
    b[13] = (v0 * h2 - v4 * m) - v2 * h0;    /* (2,3) */                                \
    b[14] = (v1 * h2 + v3 * m) - v2 * h1;    /* (2,4) = (4,2) */                        \
    b[15] = -(v2 * h0 + (v4 * m - v0 * h2)); /* (3,2) */                                \
    b[16] = -(v0 * h1 + (v5 * m - v1 * h0)); /* (4,0) */                                \
    b[17] = -(v1 * h2 + (v3 * m - v2 * h1)); /* (5,1) */                                \
  } while (0)

/* The rate B = V x* I - I (V x) of a spatial inertia I moving with the twist V, as 18 numbers (RATE_N):
 * its nonzero entries, each the very operations of the column-by-column product B e_c = V x* (I e_c) -
 * I (V x e_c) with the products by the zeros and ones of e_c and of V x e_c left out (exact: a zero
 * added, a factor one), so the same bits. B's lower-right 3 x 3 block is zero, and of its off-diagonal
 * blocks (+-[m v + w x h]x in exact arithmetic) the entries that come out of the same operations are
 * stored once: (1,3) = (3,1), (2,4) = (4,2), (0,5) = (5,0). Layout: the upper-left 3 x 3 (row-major),
 * then (0,4) (0,5) (1,3) (1,5) (2,3) (2,4) (3,2) (4,0) (5,1). */
static RN_INLINE void inertia_rate(double B[RATE_N], const grit_sinertia *s, const double V[6]) {
  const double i0 = s->I[0], i1 = s->I[1], i2 = s->I[2], i3 = s->I[3], i4 = s->I[4], i5 = s->I[5], i6 = s->I[6],
               i7 = s->I[7], i8 = s->I[8], h0 = s->h[0], h1 = s->h[1], h2 = s->h[2], m = s->m;
  const double v0 = V[0], v1 = V[1], v2 = V[2], v3 = V[3], v4 = V[4], v5 = V[5];
  const double a01 = v4 * h1 + v5 * h2, a02 = v3 * h0 + v5 * h2, a12 = v3 * h0 + v4 * h1;
  double b[RATE_N];
  RN_RATE_ENTRIES(b);
  for (int k = 0; k < RATE_N; ++k) B[k] += b[k];
}

/* y = B x for B in grit_rnea_inertia_rate's layout: the 6 x 6 product's sums in their order, without the
 * zero entries' products (exact). */
static RN_INLINE void rate_mulv(double y[6], const double B[RATE_N], const double x[6]) {
  const double x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5];
  y[0] = (((B[0] * x0 + B[1] * x1) + B[2] * x2) + B[9] * x4) + B[10] * x5;
  y[1] = (((B[3] * x0 + B[4] * x1) + B[5] * x2) + B[11] * x3) + B[12] * x5;
  y[2] = (((B[6] * x0 + B[7] * x1) + B[8] * x2) + B[13] * x3) + B[14] * x4;
  y[3] = B[11] * x1 + B[15] * x2;
  y[4] = B[16] * x0 + B[14] * x2;
  y[5] = B[10] * x0 + B[17] * x1;
}

void grit_rnea_inertia_rate(double B[RATE_N], const grit_sinertia *s, const double V[6]) { inertia_rate(B, s, V); }

void grit_rnea_rate_mulv(double y[6], const double B[RATE_N], const double x[6]) { rate_mulv(y, B, x); }

/* Body b's own terms in the composite arrays, from its acceleration r->acc: force, momentum, inertia,
 * rate of the inertia. */
static RN_INLINE void body_terms(const grit_model *m, const grit_kin *k, int b, const double a0[6], grit_rnea *r) {
  const grit_sinertia *I = &k->cinert[b];
  const double *V = k->cvel + 6 * b, *ca = r->acc + 6 * b;
  double *f = r->Fc + 6 * b, *hb = r->Hc + 6 * b, t[6];
  si_mul(f, I, ca); /* f = I a + V x* (I V) - gravcomp I a0 */
  si_mul(hb, I, V);
  grit_sv_cross_force(t, V, hb);
  for (int i = 0; i < 6; ++i) f[i] += t[i];
  r->Ic[b] = *I;
  if (r->any_gravcomp) memset(&r->Gc[b], 0, sizeof r->Gc[b]); /* Gc and cu are read with gravcomp only */
  if (m->body_gravcomp[b] != 0.0) {
    si_mul(t, I, a0);
    sv_axpy(f, -m->body_gravcomp[b], t);
    si_scale_add(&r->Gc[b], m->body_gravcomp[b], I);
  }
  memset(r->Bc + RATE_N * b, 0, RATE_N * sizeof(double));
  inertia_rate(r->Bc + RATE_N * b, I, V);
}

#if RN_AVX2
/* body_terms for bodies b0 .. b0 + 3 in AVX2 lanes, without gravity compensation (below). */
static void body_terms4(const grit_kin *k, int b0, grit_rnea *r);
#endif

/* Body accelerations (with a = (v - v0) / h), forces, the dofs' P, Q, R, and each body's own terms in
 * the composite arrays (the backward pass sums them); lanes: the bodies' terms after the accelerations,
 * four bodies at a time where four consecutive bodies are on (no gravity compensation). */
static RN_INLINE void forward(const grit_model *m, const grit_kin *k, const double *v0, const double *v, double h,
                              const double a0[6], grit_rnea *r, int lanes) {
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
    if (!lanes) body_terms(m, k, b, a0, r);
  }
  for (int b = 1; lanes && b < m->nbody; ++b) { /* the bodies' own terms, four bodies at a time */
    if (!kin_body_on(m, k, b)) continue;
#if RN_AVX2
    if (b + 4 <= m->nbody && kin_body_on(m, k, b + 1) && kin_body_on(m, k, b + 2) && kin_body_on(m, k, b + 3)) {
      body_terms4(k, b, r);
      b += 3;
      continue;
    }
#endif
    body_terms(m, k, b, a0, r);
  }
  for (int b = m->nbody - 1; b > 0; --b) { /* composite (subtree) sums */
    const int p = m->body_parent[b];
    if (p <= 0 || !kin_body_on(m, k, b)) continue;
    si_scale_add(&r->Ic[p], 1.0, &r->Ic[b]);
    if (r->any_gravcomp) si_scale_add(&r->Gc[p], 1.0, &r->Gc[b]);
    for (int i = 0; i < RATE_N; ++i) r->Bc[RATE_N * p + i] += r->Bc[RATE_N * b + i];
    for (int i = 0; i < 6; ++i) r->Hc[6 * p + i] += r->Hc[6 * b + i], r->Fc[6 * p + i] += r->Fc[6 * b + i];
  }
}

/* Per dof i (body kb, S = S_i): the row vectors g1 = Gc S, g2 = Ic S, g6 = Bc S - S x* Hc, and the
 * column vectors of dof i as a column. */
static RN_INLINE void dof_vectors(const grit_model *m, const grit_kin *k, int i, const double a0[6], grit_rnea *r) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *P = r->P + 6 * i, *Q = r->Q + 6 * i, *R = r->R + 6 * i;
  const grit_sinertia *Ic = &r->Ic[kb], *Gc = &r->Gc[kb];
  const double *Bc = r->Bc + RATE_N * kb, *Hc = r->Hc + 6 * kb, *Fc = r->Fc + 6 * kb;
  double *g1 = r->g1 + 6 * i, *g2 = r->g2 + 6 * i, *g6 = r->g6 + 6 * i, t[6], bs[6], sh[6];
  if (r->any_gravcomp) si_mul(g1, Gc, S);
  si_mul(g2, Ic, S);
  rate_mulv(bs, Bc, S); /* Bc S and S x* Hc: in the row vector g6 and the velocity column wv */
  grit_sv_cross_force(sh, S, Hc);
  for (int c = 0; c < 6; ++c) g6[c] = bs[c] - sh[c];
  /* position column: u = S x a0, Y = S x P, z = -S x Q + Y x P; wq = S x* Fc + Gc u + Ic z - Bc Y - Y x* Hc */
  double *u = r->cu + 6 * i, *Y = r->cy + 6 * i, *z = r->cz + 6 * i, *wq = r->wq + 6 * i, *wv = r->wv + 6 * i;
  if (r->any_gravcomp) grit_sv_cross_motion(u, S, a0);
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
  rate_mulv(t, Bc, Y);
  sv_axpy(wq, -1.0, t);
  grit_sv_cross_force(t, Y, Hc);
  sv_axpy(wq, -1.0, t);
  /* velocity column: e = Sdot - S x R; wv = Ic e + Bc S + S x* Hc */
  double e[6];
  grit_sv_cross_motion(t, S, R);
  for (int c = 0; c < 6; ++c) e[c] = k->cdof_dot[6 * i + c] - t[c];
  si_mul(wv, Ic, e);
  for (int c = 0; c < 6; ++c) wv[c] += bs[c] + sh[c];
  memcpy(r->R + 6 * i, e, 6 * sizeof(double));  /* R is read no more: e in its place */
}

/* Row i of column j's position entry when dof i moves with dof j (i after j in its subtree, or in its
 * group): the rigid part cancels, leaving the non-covariant terms. */
static RN_INLINE double moved_q(const grit_rnea *r, int i, int j) {
  return (r->any_gravcomp ? grit_sv_dot(r->g1 + 6 * i, r->cu + 6 * j) : 0.0) + grit_sv_dot(r->g2 + 6 * i, r->cz + 6 * j) -
         grit_sv_dot(r->g6 + 6 * i, r->cy + 6 * j);
}

/* The entries of DQ, DV of dof i and the dofs j on its path to the root (i itself included). */
static RN_INLINE void pairs_scalar(const grit_model *m, const grit_kin *k, double h, int i, int adr, int n,
                                   double *DQ, double *DV, const grit_rnea *r) {
  for (int j = i; j >= 0; j = m->dof_parent[j]) {
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

#if RN_AVX2
#include <immintrin.h>

#define RN_AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

/* The pairs of two 6-vectors x, y in the lanes of three 256-bit chunks: chunk k is (x_k, x_k+3, y_k, y_k+3). */
static RN_INLINE void pack2(double *p, const double x[6], const double y[6]) {
  for (int c = 0; c < 3; ++c) p[4 * c] = x[c], p[4 * c + 1] = x[c + 3], p[4 * c + 2] = y[c], p[4 * c + 3] = y[c + 3];
}

/* Dof i's vectors packed (pack2) for the SIMD pairs: the rows (g2, g6) and the columns (cz, cy),
 * (R, S), (S, S) and (wq, wv). */
/* pack2 with AVX2: x and y as (x0 x1 x2 .) and (x3 x4 x5 .) (the second a masked load: nothing read past
 * x[5]), their lanes interleaved by unpacks and joined by 128-bit permutes; the same numbers stored. */
RN_AVX2_INLINE void pack2_avx2(double *p, const double x[6], const double y[6]) {
  const __m256i m3 = _mm256_setr_epi64x(-1, -1, -1, 0);
  const __m256d a = _mm256_maskload_pd(x, m3), b = _mm256_maskload_pd(x + 3, m3);
  const __m256d c = _mm256_maskload_pd(y, m3), d = _mm256_maskload_pd(y + 3, m3);
  const __m256d lo1 = _mm256_unpacklo_pd(a, b), hi1 = _mm256_unpackhi_pd(a, b); /* (x0 x3 x2 x5), (x1 x4 . .) */
  const __m256d lo2 = _mm256_unpacklo_pd(c, d), hi2 = _mm256_unpackhi_pd(c, d);
  _mm256_storeu_pd(p, _mm256_permute2f128_pd(lo1, lo2, 0x20));
  _mm256_storeu_pd(p + 4, _mm256_permute2f128_pd(hi1, hi2, 0x20));
  _mm256_storeu_pd(p + 8, _mm256_permute2f128_pd(lo1, lo2, 0x31));
}

/* pack_dof with pack2_avx2 (r->no_lanes: pack_dof's copies one number at a time). */
static RN_NOINLINE __attribute__((target("avx2"))) void pack_dof_avx2(const grit_kin *k, int i, grit_rnea *r) {
  double *p = r->pk + (size_t)PK_N * i;
  const double *S = k->cdof + 6 * i;
  pack2_avx2(p, r->g2 + 6 * i, r->g6 + 6 * i);
  pack2_avx2(p + 12, r->cz + 6 * i, r->cy + 6 * i);
  pack2_avx2(p + 24, r->R + 6 * i, S);
  pack2_avx2(p + 36, S, S);
  pack2_avx2(p + 48, r->wq + 6 * i, r->wv + 6 * i);
}

static RN_INLINE void pack_dof(const grit_kin *k, int i, grit_rnea *r) {
  double *p = r->pk + (size_t)PK_N * i;
  const double *S = k->cdof + 6 * i;
  pack2(p, r->g2 + 6 * i, r->g6 + 6 * i);
  pack2(p + 12, r->cz + 6 * i, r->cy + 6 * i);
  pack2(p + 24, r->R + 6 * i, S);
  pack2(p + 36, S, S);
  pack2(p + 48, r->wq + 6 * i, r->wv + 6 * i);
}

/* Two of grit_sv_dot's products of packed vectors in one: lane 0 (1) holds the top (bottom) three terms
 * of the first dot, a0 b0 + (a1 b1 + a2 b2), lanes 2 and 3 the second's; the same operations. */
/* a's three chunks are held in registers (a row's vectors, loaded once per row: for the compiler the
 * stores into DQ, DV may alias the packed vectors, which it would otherwise load again for every pair). */
RN_AVX2_INLINE __m256d dot2_held(const __m256d a[3], const double *b) {
  __m256d p = _mm256_mul_pd(a[2], _mm256_loadu_pd(b + 8));
  p = _mm256_add_pd(_mm256_mul_pd(a[1], _mm256_loadu_pd(b + 4)), p);
  return _mm256_add_pd(_mm256_mul_pd(a[0], _mm256_loadu_pd(b)), p);
}

/* dot2_held with b's chunks held, the operands of each product in the same order as the other's pairs. */
RN_AVX2_INLINE __m256d dot2_held_b(const double *a, const __m256d b[3]) {
  __m256d p = _mm256_mul_pd(_mm256_loadu_pd(a + 8), b[2]);
  p = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(a + 4), b[1]), p);
  return _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(a), b[0]), p);
}

/* pairs_scalar's entries of a tree (dofs adr .. adr + n - 1) in the same operations, four dot products
 * at a time. Row i, column j (j on i's path): (g1.cu + g2.cz) - g6.cy, the gravcomp term 0.0 without
 * gravity compensation as in moved_q (lane 1 adds -0.0: no change), and g2.R + g6.S; row j, column i:
 * S.wq, S.wv. */
RN_AVX2_INLINE void tree_pairs_in(const grit_model *m, double h, int adr, int n, double *DQ, double *DV,
                                   const grit_rnea *r, const int gravcomp) {
  const __m128d hh = _mm_set1_pd(h);
  const double *pk = r->pk;
  const int *grp = r->grp, *parent = m->dof_parent;
  for (int i = adr; i < adr + n; ++i) {
    const double *rg = pk + (size_t)PK_N * i, *wi = rg + 48;
    const __m256d rgv[3] = {_mm256_loadu_pd(rg), _mm256_loadu_pd(rg + 4), _mm256_loadu_pd(rg + 8)};
    const __m256d wiv[3] = {_mm256_loadu_pd(wi), _mm256_loadu_pd(wi + 4), _mm256_loadu_pd(wi + 8)};
    const int ii = i - adr, gi = grp[i];
    double *DQi = DQ + ii * n, *DVi = DV + ii * n, *DQc = DQ + ii, *DVc = DV + ii; /* row ii, column ii */
    for (int j = i; j >= 0; j = parent[j]) {
      const int jj = j - adr;
      const double *pj = pk + (size_t)PK_N * j;
      const __m256d t = _mm256_hadd_pd(dot2_held(rgv, pj + 12), dot2_held(rgv, pj + 24)); /* g2.cz, g2.R, g6.cy, g6.S */
      const double g = gravcomp ? grit_sv_dot(r->g1 + 6 * i, r->cu + 6 * j) : 0.0;
      const __m128d lo = _mm_add_pd(_mm256_castpd256_pd128(t), _mm_set_pd(-0.0, g)), hi = _mm256_extractf128_pd(t, 1);
      const __m128d e = _mm_mul_pd(hh, _mm_blend_pd(_mm_sub_pd(lo, hi), _mm_add_pd(lo, hi), 2));
      _mm_storel_pd(DQi + jj, e);
      _mm_storeh_pd(DVi + jj, e);
      if (j == i) continue;
      const __m256d u = dot2_held_b(pj + 36, wiv), w = _mm256_hadd_pd(u, u); /* S.wq, S.wq, S.wv, S.wv */
      const __m128d f = _mm_mul_pd(hh, _mm_unpacklo_pd(_mm256_castpd256_pd128(w), _mm256_extractf128_pd(w, 1)));
      const size_t jn = (size_t)jj * n;
      if (grp[j] == gi) DQc[jn] = h * moved_q(r, j, i); /* a group's dofs turn each other */
      else _mm_storel_pd(DQc + jn, f);
      _mm_storeh_pd(DVc + jn, f);
    }
  }
}

/* tree_pairs_in with and without gravity compensation (a constant: no test per pair; rn.no_lanes: the
 * one that tests it) */
static RN_NOINLINE __attribute__((target("avx2"))) void tree_pairs_simd(const grit_model *m, double h, int adr, int n,
                                                                        double *DQ, double *DV, const grit_rnea *r) {
  tree_pairs_in(m, h, adr, n, DQ, DV, r, r->any_gravcomp);
}

static RN_NOINLINE __attribute__((target("avx2"))) void tree_pairs_plain(const grit_model *m, double h, int adr, int n,
                                                                         double *DQ, double *DV, const grit_rnea *r) {
  tree_pairs_in(m, h, adr, n, DQ, DV, r, 0);
}
/* dof_vectors for four dofs at once, a dof per lane of GCC's vector type (AVX2 registers): every lane
 * the very operations of dof_vectors in their order (the spatial algebra of grit/detail/math_generic.h
 * written out below for lanes: dot3 a0 b0 + (a1 b1 + a2 b2), cross, products and sums unfused), so
 * each dof's vectors are the same bits. Models without gravity compensation (g1, cu unread). The dofs'
 * inputs gathered (per dof, per body of the dof) and the results scattered, a lane at a time; the
 * arithmetic, ~430 operations a dof, runs four dofs per instruction. */
typedef double rn_v4 __attribute__((vector_size(32)));

RN_AVX2_INLINE rn_v4 v4_gather(const double *const *p, int k) { return (rn_v4){p[0][k], p[1][k], p[2][k], p[3][k]}; }

RN_AVX2_INLINE void v4_gather_n(rn_v4 *x, const double *const *p, int n) {
  for (int k = 0; k < n; ++k) x[k] = v4_gather(p, k);
}

RN_AVX2_INLINE void v4_scatter_n(double *const *p, const rn_v4 *x, int n) {
  for (int k = 0; k < n; ++k)
    for (int l = 0; l < 4; ++l) p[l][k] = x[k][l];
}

/* x[c] = (p[c], p[6 + c], p[12 + c], p[18 + c]), c < 6: four consecutive dofs' 6-vectors as lanes, by a
 * 4 x 4 transpose (columns 0..3) and 2 x 2 ones (4, 5) in registers; rows6_store the inverse. */
RN_AVX2_INLINE void rows6_load(rn_v4 *x, const double *p) {
  const __m256d r0 = _mm256_loadu_pd(p), r1 = _mm256_loadu_pd(p + 6), r2 = _mm256_loadu_pd(p + 12),
                r3 = _mm256_loadu_pd(p + 18);
  const __m256d a = _mm256_unpacklo_pd(r0, r1), c = _mm256_unpackhi_pd(r0, r1);
  const __m256d e = _mm256_unpacklo_pd(r2, r3), g = _mm256_unpackhi_pd(r2, r3);
  x[0] = (rn_v4)_mm256_permute2f128_pd(a, e, 0x20);
  x[1] = (rn_v4)_mm256_permute2f128_pd(c, g, 0x20);
  x[2] = (rn_v4)_mm256_permute2f128_pd(a, e, 0x31);
  x[3] = (rn_v4)_mm256_permute2f128_pd(c, g, 0x31);
  const __m128d q0 = _mm_loadu_pd(p + 4), q1 = _mm_loadu_pd(p + 10), q2 = _mm_loadu_pd(p + 16), q3 = _mm_loadu_pd(p + 22);
  x[4] = (rn_v4)_mm256_set_m128d(_mm_unpacklo_pd(q2, q3), _mm_unpacklo_pd(q0, q1));
  x[5] = (rn_v4)_mm256_set_m128d(_mm_unpackhi_pd(q2, q3), _mm_unpackhi_pd(q0, q1));
}

RN_AVX2_INLINE void rows6_store(double *p, const rn_v4 *x) {
  const __m256d x0 = (__m256d)x[0], x1 = (__m256d)x[1], x2 = (__m256d)x[2], x3 = (__m256d)x[3];
  const __m256d a = _mm256_unpacklo_pd(x0, x1), c = _mm256_unpackhi_pd(x0, x1);
  const __m256d e = _mm256_unpacklo_pd(x2, x3), g = _mm256_unpackhi_pd(x2, x3);
  const __m256d lo = _mm256_unpacklo_pd((__m256d)x[4], (__m256d)x[5]), hi = _mm256_unpackhi_pd((__m256d)x[4], (__m256d)x[5]);
  _mm256_storeu_pd(p, _mm256_permute2f128_pd(a, e, 0x20)); /* row 0: columns 0..3 */
  _mm_storeu_pd(p + 4, _mm256_castpd256_pd128(lo));          /* row 0: columns 4, 5 */
  _mm256_storeu_pd(p + 6, _mm256_permute2f128_pd(c, g, 0x20));
  _mm_storeu_pd(p + 10, _mm256_castpd256_pd128(hi));
  _mm256_storeu_pd(p + 12, _mm256_permute2f128_pd(a, e, 0x31));
  _mm_storeu_pd(p + 16, _mm256_extractf128_pd(lo, 1));
  _mm256_storeu_pd(p + 18, _mm256_permute2f128_pd(c, g, 0x31));
  _mm_storeu_pd(p + 22, _mm256_extractf128_pd(hi, 1));
}

RN_AVX2_INLINE rn_v4 v4_dot3(const rn_v4 *a, const rn_v4 *b) { return a[0] * b[0] + (a[1] * b[1] + a[2] * b[2]); }

RN_AVX2_INLINE void v4_cross(rn_v4 *r, const rn_v4 *a, const rn_v4 *b) {
  const rn_v4 t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
  r[0] = t0, r[1] = t1, r[2] = t2;
}

/* grit_si_apply: f = (I w + h x v; m v - h x w), t = (w; v); Ih: m, h[3], I[9] */
RN_AVX2_INLINE void v4_si_apply(rn_v4 *f, const rn_v4 *Ih, const rn_v4 *t) {
  rn_v4 a[3], r[3];
  for (int i = 0; i < 3; ++i) r[i] = v4_dot3(Ih + 4 + 3 * i, t);
  v4_cross(a, Ih + 1, t + 3);
  for (int i = 0; i < 3; ++i) f[i] = r[i] + a[i];
  v4_cross(a, Ih + 1, t);
  for (int i = 0; i < 3; ++i) f[3 + i] = Ih[0] * t[3 + i] - a[i];
}

RN_AVX2_INLINE void v4_cross_motion(rn_v4 *r, const rn_v4 *a, const rn_v4 *b) {
  rn_v4 t[3];
  v4_cross(r, a, b);
  v4_cross(r + 3, a, b + 3);
  v4_cross(t, a + 3, b);
  for (int i = 0; i < 3; ++i) r[3 + i] = r[3 + i] + t[i];
}

RN_AVX2_INLINE void v4_cross_force(rn_v4 *r, const rn_v4 *a, const rn_v4 *f) {
  rn_v4 t[3];
  v4_cross(r, a, f);
  v4_cross(t, a + 3, f + 3);
  for (int i = 0; i < 3; ++i) r[i] = r[i] + t[i];
  v4_cross(r + 3, a, f + 3);
}

RN_AVX2_INLINE void v4_rate_mulv(rn_v4 *y, const rn_v4 *B, const rn_v4 *x) {
  y[0] = (((B[0] * x[0] + B[1] * x[1]) + B[2] * x[2]) + B[9] * x[4]) + B[10] * x[5];
  y[1] = (((B[3] * x[0] + B[4] * x[1]) + B[5] * x[2]) + B[11] * x[3]) + B[12] * x[5];
  y[2] = (((B[6] * x[0] + B[7] * x[1]) + B[8] * x[2]) + B[13] * x[3]) + B[14] * x[4];
  y[3] = B[11] * x[1] + B[15] * x[2];
  y[4] = B[16] * x[0] + B[14] * x[2];
  y[5] = B[10] * x[0] + B[17] * x[1];
}

RN_AVX2_INLINE void v4_axpy(rn_v4 *y, double a, const rn_v4 *x) {
  const rn_v4 av = {a, a, a, a};
  for (int i = 0; i < 6; ++i) y[i] = y[i] + av * x[i];
}

/* body_terms for four bodies, a body per lane: grit_si_apply, the force cross product and the inertia's
 * rate (inertia_rate's expressions, its sum 0 + b after the zeroing) as body_terms computes them, the
 * same operations per lane in the same order. */
static RN_NOINLINE __attribute__((target("avx2"))) void body_terms4(const grit_kin *k, int b0, grit_rnea *r) {
  const double *p[4];
  rn_v4 Ih[13], ca[6], V[6], f[6], hb[6], t[6];
  for (int l = 0; l < 4; ++l) p[l] = &k->cinert[b0 + l].m;
  Ih[0] = v4_gather(p, 0);
  for (int l = 0; l < 4; ++l) p[l] = k->cinert[b0 + l].h;
  v4_gather_n(Ih + 1, p, 3);
  for (int l = 0; l < 4; ++l) p[l] = k->cinert[b0 + l].I;
  v4_gather_n(Ih + 4, p, 9);
  rows6_load(ca, r->acc + 6 * b0);
  rows6_load(V, k->cvel + 6 * b0);
  v4_si_apply(f, Ih, ca);
  v4_si_apply(hb, Ih, V);
  v4_cross_force(t, V, hb);
  for (int i = 0; i < 6; ++i) f[i] = f[i] + t[i];
  const rn_v4 *h = Ih + 1, *I = Ih + 4, m = Ih[0];
  const rn_v4 i0 = I[0], i1 = I[1], i2 = I[2], i3 = I[3], i4 = I[4], i5 = I[5], i6 = I[6], i7 = I[7], i8 = I[8];
  const rn_v4 h0 = h[0], h1 = h[1], h2 = h[2], v0 = V[0], v1 = V[1], v2 = V[2], v3 = V[3], v4 = V[4], v5 = V[5];
  const rn_v4 a01 = v4 * h1 + v5 * h2, a02 = v3 * h0 + v5 * h2, a12 = v3 * h0 + v4 * h1, zero = {0, 0, 0, 0};
  rn_v4 b[RATE_N];
  RN_RATE_ENTRIES(b);
  for (int q = 0; q < RATE_N; ++q) b[q] = zero + b[q];
  rows6_store(r->Fc + 6 * b0, f);
  rows6_store(r->Hc + 6 * b0, hb);
  double *o[4];
  for (int l = 0; l < 4; ++l) o[l] = r->Bc + RATE_N * (b0 + l);
  v4_scatter_n(o, b, RATE_N);
  for (int l = 0; l < 4; ++l) r->Ic[b0 + l] = k->cinert[b0 + l];
}

static RN_NOINLINE __attribute__((target("avx2"))) void dof_vectors4(const grit_model *m, const grit_kin *k, int i0,
                                                                     grit_rnea *r) {
  const double *p[4];
  rn_v4 S[6], P[6], Q[6], R[6], Ih[13], B[RATE_N], H[6], F[6];
  rows6_load(S, k->cdof + 6 * i0);
  rows6_load(P, r->P + 6 * i0);
  rows6_load(Q, r->Q + 6 * i0);
  rows6_load(R, r->R + 6 * i0);
  int kb[4];
  for (int l = 0; l < 4; ++l) kb[l] = m->dof_body[i0 + l];
  for (int l = 0; l < 4; ++l) p[l] = &r->Ic[kb[l]].m;
  Ih[0] = v4_gather(p, 0);
  for (int l = 0; l < 4; ++l) p[l] = r->Ic[kb[l]].h;
  v4_gather_n(Ih + 1, p, 3);
  for (int l = 0; l < 4; ++l) p[l] = r->Ic[kb[l]].I;
  v4_gather_n(Ih + 4, p, 9);
  for (int l = 0; l < 4; ++l) p[l] = r->Bc + RATE_N * kb[l];
  v4_gather_n(B, p, RATE_N);
  for (int l = 0; l < 4; ++l) p[l] = r->Hc + 6 * kb[l];
  v4_gather_n(H, p, 6);
  for (int l = 0; l < 4; ++l) p[l] = r->Fc + 6 * kb[l];
  v4_gather_n(F, p, 6);
  rn_v4 g2[6], g6[6], bs[6], sh[6], t[6], Y[6], z[6], wq[6], e[6], wv[6];
  v4_si_apply(g2, Ih, S);
  v4_rate_mulv(bs, B, S);
  v4_cross_force(sh, S, H);
  for (int c = 0; c < 6; ++c) g6[c] = bs[c] - sh[c];
  v4_cross_motion(Y, S, P);
  v4_cross_motion(t, S, Q);
  v4_cross_motion(z, Y, P);
  for (int c = 0; c < 6; ++c) z[c] = z[c] - t[c];
  v4_cross_force(wq, S, F);
  v4_si_apply(t, Ih, z);
  v4_axpy(wq, 1.0, t);
  v4_rate_mulv(t, B, Y);
  v4_axpy(wq, -1.0, t);
  v4_cross_force(t, Y, H);
  v4_axpy(wq, -1.0, t);
  v4_cross_motion(t, S, R);
  rn_v4 sd[6];
  rows6_load(sd, k->cdof_dot + 6 * i0);
  for (int c = 0; c < 6; ++c) e[c] = sd[c] - t[c];
  v4_si_apply(wv, Ih, e);
  for (int c = 0; c < 6; ++c) wv[c] = wv[c] + (bs[c] + sh[c]);
  rows6_store(r->g2 + 6 * i0, g2);
  rows6_store(r->g6 + 6 * i0, g6);
  rows6_store(r->cy + 6 * i0, Y);
  rows6_store(r->cz + 6 * i0, z);
  rows6_store(r->wq + 6 * i0, wq);
  rows6_store(r->wv + 6 * i0, wv);
  rows6_store(r->R + 6 * i0, e); /* R is read no more: e in its place */
}
#endif

/* The recursions and (pairs) the entries of DQ, DV for the trees of mk; simd (a constant): the pairs four
 * dot products at a time (the AVX2 build only). */
static RN_INLINE void tree_pairs(const grit_model *m, const grit_kin *k, double h, const char *mk, grit_rnea *r,
                                 const int simd, const int pack);

static RN_INLINE void recursions(const grit_model *m, const grit_kin *k, const double *v0, const double *v, double h,
                                 const char *mk, grit_rnea *r, const int simd, const int pairs) {
  (void)simd; /* read only by the AVX2 build */
  double a0[6] = {0, 0, 0, -m->opt.gravity[0], -m->opt.gravity[1], -m->opt.gravity[2]};
  forward(m, k, v0, v, h, a0, r, RN_AVX2 && simd && !r->no_lanes && !r->any_gravcomp);
  int lanes_to = 0; /* the dofs below it have their vectors from dof_vectors4 */
  (void)lanes_to;
  grit_momentum_wrenches(m, k, h, &r->mom, r->Fc); /* the momentum correction (derivatives_momentum.c) */
  for (int i = 0; i < m->nv; ++i)
    if (mk[m->dof_tree[i]]) {
#if RN_AVX2
      /* four dofs of mk's trees at once (dof_vectors4), the group's last three taking their turn below */
      if (simd && !r->no_lanes && !r->any_gravcomp && (i & 3) == 0 && i + 4 <= m->nv && mk[m->dof_tree[i + 1]] &&
          mk[m->dof_tree[i + 2]] && mk[m->dof_tree[i + 3]])
        dof_vectors4(m, k, i, r), lanes_to = i + 4;
      if (i >= lanes_to)
#endif
        dof_vectors(m, k, i, a0, r);
      grit_momentum_dof(m, k, i, &r->mom, r->cy + 6 * i, r->g6 + 6 * i, r->wq + 6 * i, r->wv + 6 * i);
#if RN_AVX2
      if (pairs && simd && !r->no_lanes) pack_dof_avx2(k, i, r); /* (deferred pairs: packed by tree_pairs) */
      else if (pairs && simd) pack_dof(k, i, r);
#endif
    }
  if (pairs) tree_pairs(m, k, h, mk, r, simd, 0);
}

/* The entries of DQ, DV for the trees of mk from the dofs' vectors (pack: packed here first for the SIMD
 * pairs, else by the recursions' loop over the dofs). */
static RN_INLINE void tree_pairs(const grit_model *m, const grit_kin *k, double h, const char *mk, grit_rnea *r,
                                 const int simd, const int pack) {
  (void)simd, (void)pack; /* read only by the AVX2 build */
#if RN_AVX2
  for (int i = 0; pack && simd && i < m->nv; ++i)
    if (mk[m->dof_tree[i]]) {
      if (!r->no_lanes) pack_dof_avx2(k, i, r);
      else pack_dof(k, i, r);
    }
#endif
  for (int t = 0; t < m->ntree; ++t) {
    if (!mk[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    /* the entries of dofs not on one path are zero: the arena's calloc made them so, and no call writes them */
    double *DQ = r->DQ + m->tree_madr[t], *DV = r->DV + m->tree_madr[t];
#if RN_AVX2
    if (simd) {
      if (!r->any_gravcomp && !r->no_lanes) tree_pairs_plain(m, h, adr, n, DQ, DV, r);
      else tree_pairs_simd(m, h, adr, n, DQ, DV, r);
      continue;
    }
#endif
    for (int i = adr; i < adr + n; ++i) pairs_scalar(m, k, h, i, adr, n, DQ, DV, r);
  }
}

static RN_NOINLINE void recursions_base(const grit_model *m, const grit_kin *k, const double *v0, const double *v,
                                        double h, const char *mk, grit_rnea *r, int pairs) {
  recursions(m, k, v0, v, h, mk, r, 0, pairs);
}

static RN_NOINLINE void pairs_base(const grit_model *m, const grit_kin *k, double h, const char *mk, grit_rnea *r) {
  tree_pairs(m, k, h, mk, r, 0, 1);
}

#if RN_AVX2
static RN_NOINLINE __attribute__((target("avx2"))) void recursions_avx2(const grit_model *m, const grit_kin *k,
                                                                        const double *v0, const double *v, double h,
                                                                        const char *mk, grit_rnea *r, int pairs) {
  if (pairs) recursions(m, k, v0, v, h, mk, r, 1, 1); /* (a constant in each: no test per dof) */
  else recursions(m, k, v0, v, h, mk, r, 1, 0);
}

static RN_NOINLINE __attribute__((target("avx2"))) void pairs_avx2(const grit_model *m, const grit_kin *k, double h,
                                                                   const char *mk, grit_rnea *r) {
  tree_pairs(m, k, h, mk, r, 1, 1);
}
#endif

/* Whether the fluid's vectors join the dofs' own before the pairs (grit_fluid_partials_add, then
 * grit_rnea_pairs): a fluid model without wind (the fluid's y_j = S_j x (P_j - W) is then cy_j), the
 * trees of r->on. */
static int fluid_merge(const grit_model *m, const char *mask, const grit_rnea *r) {
  return !mask && !r->no_fluid_merge && grit_fluid_on(m) && m->opt.wind[0] == 0.0 && m->opt.wind[1] == 0.0 &&
         m->opt.wind[2] == 0.0;
}

void grit_rnea_partials(const grit_model *m, grit_kin *k, const double *v0, const double *v, double h,
                        const char *mask, grit_rnea *r) {
  const char *mk = mask ? mask : r->on, *saved = k->tree_mask;
  k->tree_mask = mk;
  grit_kin_velocities(m, v0, k);
  r->pairs_due = fluid_merge(m, mask, r);
#if RN_AVX2
  if (!r->no_simd && __builtin_cpu_supports("avx2")) recursions_avx2(m, k, v0, v, h, mk, r, !r->pairs_due);
  else
#endif
    recursions_base(m, k, v0, v, h, mk, r, !r->pairs_due);
  k->tree_mask = saved;
}

void grit_rnea_pairs(const grit_model *m, const grit_kin *k, double h, grit_rnea *r) {
  if (!r->pairs_due) return;
#if RN_AVX2
  if (!r->no_simd && __builtin_cpu_supports("avx2")) pairs_avx2(m, k, h, r->on, r);
  else
#endif
    pairs_base(m, k, h, r->on, r);
  r->pairs_due = 0;
  r->nmerged++;
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
