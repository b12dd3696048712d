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
