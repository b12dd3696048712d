/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_quadgrad.c — sum_r d(z_r^T M z_r)/dq0 of up to three rows in one sweep
 * (derivatives_quadgrad.h; the formula is grit_rnea_quadratic_gradient's, derivatives_rnea.h). */
#include "derivatives_quadgrad.h"

enum { NR = GRIT_QUADGRAD_ROWS, W = 6 * GRIT_QUADGRAD_ROWS };

/* The sweep is also compiled for AVX2 and chosen at run time, as treechol.c's loops: the same
 * operations in the same order, no fused multiply-adds (-ffp-contract=off; the target has no FMA), so
 * the same bits on any x86-64 processor (GRIT_NO_AVX2: the baseline only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define QG_AVX2 1
#else
#define QG_AVX2 0
#endif
#if defined(__GNUC__)
#define QG_INLINE inline __attribute__((always_inline))
#define QG_NOINLINE __attribute__((noinline))
#else
#define QG_INLINE inline
#define QG_NOINLINE
#endif

/* The sweep for nr rows, nr a constant where it is inlined (the rows' loops unrolled). */
static QG_INLINE void sweep(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const double *z,
                            int ldz, const int nr, double *g, double *s) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  double *zt = s, *zh = s + (size_t)W * (size_t)m->nbody, *zp = zh + (size_t)W * (size_t)m->nbody;
  /* the tree's bodies come after its root, parents before children (welded ones too: they add to M) */
  const int b0 = m->dof_body[adr], b1 = m->nbody - 1;
  for (int b = b0; b <= b1; ++b) {
    if (m->body_tree[b] != t) continue;
    const int p = m->body_parent[b];
    double *cv = zt + W * b;
    const double *cp = zt + W * p;
    if (p > 0 && m->body_tree[p] == t)
      for (int c = 0; c < 6 * nr; ++c) cv[c] = cp[c];
    else
      for (int c = 0; c < 6 * nr; ++c) cv[c] = 0.0;
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b]; ++d) {
      const int gd = r->grp[d];
      const double *src = gd == d ? cv : zp + W * gd; /* the group's first dof */
      for (int c = 0; c < 6 * nr; ++c) zp[W * d + c] = src[c];
      const double *S = k->cdof + 6 * d;
      for (int q = 0; q < nr; ++q) {
        const double a = z[q * ldz + d - adr];
        for (int c = 0; c < 6; ++c) cv[6 * q + c] += a * S[c];
      }
    }
    for (int q = 0; q < nr; ++q) grit_si_apply(zh + W * b + 6 * q, &k->cinert[b], cv + 6 * q);
  }
  for (int b = b1; b >= b0; --b) { /* composite momenta */
    const int p = m->body_parent[b];
    if (m->body_tree[b] != t || p <= 0) continue;
    for (int c = 0; c < 6 * nr; ++c) zh[W * p + c] += zh[W * b + c];
  }
  for (int i = adr; i < adr + n; ++i) {
    const double *S = k->cdof + 6 * i, *h = zh + W * m->dof_body[i];
    for (int q = 0; q < nr; ++q) {
      double y[6];
      grit_sv_cross_motion(y, S, zp + W * i + 6 * q);
      g[i - adr] -= 2.0 * grit_sv_dot(y, h + 6 * q);
    }
  }
}

static QG_INLINE void sweep_nr(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const double *z,
                               int ldz, int nr, double *g, double *s) {
  if (nr == 3) sweep(m, k, r, t, z, ldz, 3, g, s);
  else if (nr == 2) sweep(m, k, r, t, z, ldz, 2, g, s);
  else sweep(m, k, r, t, z, ldz, 1, g, s);
}

static QG_NOINLINE void sweep_base(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const double *z,
                                   int ldz, int nr, double *g, double *s) {
  sweep_nr(m, k, r, t, z, ldz, nr, g, s);
}

#if QG_AVX2
static QG_NOINLINE __attribute__((target("avx2"))) void sweep_avx2(const grit_model *m, const grit_kin *k,
                                                                   const grit_rnea *r, int t, const double *z,
                                                                   int ldz, int nr, double *g, double *s) {
  sweep_nr(m, k, r, t, z, ldz, nr, g, s);
}
#endif

/* ------------------------------------------------------------------------------ lanes */
#if GRIT_QUADGRAD_HAVE_LANES
/* Lane-major storage: component c of body (or dof) b's six-vector at (6 b + c) NL + l for lane l, one
 * grit_lanes; the scratch's doubles are read and written unaligned. */
enum { NL = GRIT_QUADGRAD_LANES, WL = 6 * GRIT_QUADGRAD_LANES };
typedef grit_lanes V;
typedef double VU __attribute__((vector_size(sizeof(V)), aligned(sizeof(double)), may_alias)); /* unaligned */
#define ld(p) (*(const VU *)(p))
#define st(p, v) (*(VU *)(p) = (v))

/* f = S t lane by lane: grit_si_apply's operations in its order. */
static QG_INLINE void si_apply_lanes(double *f, const grit_sinertia *si, const double *t) {
  const double *I = si->I, *h = si->h, m = si->m;
  const V t0 = ld(t), t1 = ld(t + NL), t2 = ld(t + 2 * NL), t3 = ld(t + 3 * NL), t4 = ld(t + 4 * NL),
          t5 = ld(t + 5 * NL);
  /* I w + h x v */
  st(f, (I[0] * t0 + (I[1] * t1 + I[2] * t2)) + (h[1] * t5 - h[2] * t4));
  st(f + NL, (I[3] * t0 + (I[4] * t1 + I[5] * t2)) + (h[2] * t3 - h[0] * t5));
  st(f + 2 * NL, (I[6] * t0 + (I[7] * t1 + I[8] * t2)) + (h[0] * t4 - h[1] * t3));
  /* m v - h x w */
  st(f + 3 * NL, m * t3 - (h[1] * t2 - h[2] * t1));
  st(f + 4 * NL, m * t4 - (h[2] * t0 - h[0] * t2));
  st(f + 5 * NL, m * t5 - (h[0] * t1 - h[1] * t0));
}

/* (S x_m b) . h lane by lane: grit_sv_cross_motion then grit_sv_dot, in their order. */
static QG_INLINE void cross_dot_lanes(V *d, const double S[6], const double *b, const double *h) {
  const V b0 = ld(b), b1 = ld(b + NL), b2 = ld(b + 2 * NL), b3 = ld(b + 3 * NL), b4 = ld(b + 4 * NL),
          b5 = ld(b + 5 * NL);
  const V y0 = S[1] * b2 - S[2] * b1, y1 = S[2] * b0 - S[0] * b2, y2 = S[0] * b1 - S[1] * b0;
  const V y3 = (S[1] * b5 - S[2] * b4) + (S[4] * b2 - S[5] * b1);
  const V y4 = (S[2] * b3 - S[0] * b5) + (S[5] * b0 - S[3] * b2);
  const V y5 = (S[0] * b4 - S[1] * b3) + (S[3] * b1 - S[4] * b0);
  *d = (y0 * ld(h) + (y1 * ld(h + NL) + y2 * ld(h + 2 * NL))) +
       (y3 * ld(h + 3 * NL) + (y4 * ld(h + 4 * NL) + y5 * ld(h + 5 * NL)));
}

static QG_INLINE void sweep_lanes(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const V *z,
                                  V *g, double *s) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  double *zt = s, *zh = s + (size_t)WL * (size_t)m->nbody, *zp = zh + (size_t)WL * (size_t)m->nbody;
  const int b0 = m->dof_body[adr], b1 = m->nbody - 1;
  for (int b = b0; b <= b1; ++b) {
    if (m->body_tree[b] != t) continue;
    const int p = m->body_parent[b];
    double *cv = zt + WL * b;
    const double *cp = zt + WL * p;
    if (p > 0 && m->body_tree[p] == t)
      for (int c = 0; c < WL; ++c) cv[c] = cp[c];
    else
      for (int c = 0; c < WL; ++c) cv[c] = 0.0;
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b]; ++d) {
      const int gd = r->grp[d];
      const double *src = gd == d ? cv : zp + WL * gd; /* the group's first dof */
      for (int c = 0; c < WL; ++c) zp[WL * d + c] = src[c];
      const double *S = k->cdof + 6 * d;
      const V a = z[d - adr];
      for (int c = 0; c < 6; ++c) st(cv + c * NL, ld(cv + c * NL) + a * S[c]);
    }
    si_apply_lanes(zh + WL * b, &k->cinert[b], cv);
  }
  for (int b = b1; b >= b0; --b) { /* composite momenta */
    const int p = m->body_parent[b];
    if (m->body_tree[b] != t || p <= 0) continue;
    for (int c = 0; c < WL; ++c) zh[WL * p + c] += zh[WL * b + c];
  }
  for (int i = adr; i < adr + n; ++i) {
    V dl;
    cross_dot_lanes(&dl, k->cdof + 6 * i, zp + WL * i, zh + WL * m->dof_body[i]);
    g[i - adr] = 0.0 - 2.0 * dl; /* the one-row sweep's g -= 2 dl from g = 0 */
  }
}

static QG_NOINLINE void sweep_lanes_base(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const V *z,
                                         V *g, double *s) {
  sweep_lanes(m, k, r, t, z, g, s);
}

#if QG_AVX2
static QG_NOINLINE __attribute__((target("avx2"))) void sweep_lanes_avx2(const grit_model *m, const grit_kin *k,
                                                                         const grit_rnea *r, int t, const V *z, V *g,
                                                                         double *s) {
  sweep_lanes(m, k, r, t, z, g, s);
}
#endif

void grit_rnea_quadratic_gradient_lanes(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                        const grit_lanes *z, grit_lanes *g, double *s) {
#if QG_AVX2
  if (__builtin_cpu_supports("avx2")) {
    sweep_lanes_avx2(m, k, r, t, z, g, s);
    return;
  }
#endif
  sweep_lanes_base(m, k, r, t, z, g, s);
}
#endif

void grit_rnea_quadratic_gradient_rows(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                       const double *z, int ldz, int nr, double *g, double *s) {
#if QG_AVX2
  if (__builtin_cpu_supports("avx2")) {
    sweep_avx2(m, k, r, t, z, ldz, nr, g, s);
    return;
  }
#endif
  sweep_base(m, k, r, t, z, ldz, nr, g, s);
}
