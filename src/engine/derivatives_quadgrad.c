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
  /* the model's arrays in locals: the scratch's stores could otherwise alias them (reloaded) */
  const int *const btree = m->body_tree, *const bparent = m->body_parent, *const bdofadr = m->body_dofadr;
  const int *const bdofnum = m->body_dofnum, *const grp = r->grp, *const dbody = m->dof_body;
  const double *const cdof = k->cdof;
  const grit_sinertia *const cinert = k->cinert;
  for (int b = b0; b <= b1; ++b) {
    if (btree[b] != t) continue;
    const int p = bparent[b];
    double *cv = zt + W * b;
    const double *cp = zt + W * p;
    if (p > 0 && btree[p] == t)
      for (int c = 0; c < 6 * nr; ++c) cv[c] = cp[c];
    else
      for (int c = 0; c < 6 * nr; ++c) cv[c] = 0.0;
    const int d0 = bdofadr[b], d1 = d0 + bdofnum[b];
    for (int d = d0; d >= 0 && d < d1; ++d) {
      const int gd = grp[d];
      const double *src = gd == d ? cv : zp + W * gd; /* the group's first dof */
      for (int c = 0; c < 6 * nr; ++c) zp[W * d + c] = src[c];
      const double *S = cdof + 6 * d;
      for (int q = 0; q < nr; ++q) {
        const double a = z[q * ldz + d - adr];
        for (int c = 0; c < 6; ++c) cv[6 * q + c] += a * S[c];
      }
    }
    for (int q = 0; q < nr; ++q) grit_si_apply(zh + W * b + 6 * q, &cinert[b], cv + 6 * q);
  }
  for (int b = b1; b >= b0; --b) { /* composite momenta */
    const int p = bparent[b];
    if (btree[b] != t || p <= 0) continue;
    for (int c = 0; c < 6 * nr; ++c) zh[W * p + c] += zh[W * b + c];
  }
  for (int i = adr; i < adr + n; ++i) {
    const double *S = cdof + 6 * i, *h = zh + W * dbody[i];
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

/* Six vectors from src to dst (distinct), all loaded before the first store. */
static QG_INLINE void move6(double *dst, const double *src) {
  const V a0 = ld(src), a1 = ld(src + NL), a2 = ld(src + 2 * NL), a3 = ld(src + 3 * NL), a4 = ld(src + 4 * NL),
          a5 = ld(src + 5 * NL);
  st(dst, a0), st(dst + NL, a1), st(dst + 2 * NL, a2), st(dst + 3 * NL, a3), st(dst + 4 * NL, a4), st(dst + 5 * NL, a5);
}

/* f = S t lane by lane: grit_si_apply's operations in its order. */
static QG_INLINE void si_apply_lanes(double *f, const grit_sinertia *si, const double *t) {
  const double *I = si->I, *h = si->h, m = si->m;
  const V t0 = ld(t), t1 = ld(t + NL), t2 = ld(t + 2 * NL), t3 = ld(t + 3 * NL), t4 = ld(t + 4 * NL),
          t5 = ld(t + 5 * NL);
  /* every output formed before the first store (which may alias I and h) */
  const V f0 = (I[0] * t0 + (I[1] * t1 + I[2] * t2)) + (h[1] * t5 - h[2] * t4); /* I w + h x v */
  const V f1 = (I[3] * t0 + (I[4] * t1 + I[5] * t2)) + (h[2] * t3 - h[0] * t5);
  const V f2 = (I[6] * t0 + (I[7] * t1 + I[8] * t2)) + (h[0] * t4 - h[1] * t3);
  const V f3 = m * t3 - (h[1] * t2 - h[2] * t1); /* m v - h x w */
  const V f4 = m * t4 - (h[2] * t0 - h[0] * t2);
  const V f5 = m * t5 - (h[0] * t1 - h[1] * t0);
  st(f, f0), st(f + NL, f1), st(f + 2 * NL, f2), st(f + 3 * NL, f3), st(f + 4 * NL, f4), st(f + 5 * NL, f5);
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

/* cross_dot_lanes for S with a zero angular part (a slide's: S[0..2] exact zeros): y0..y2 and the terms
 * S[0..2] b are +-0, which leave every nonzero sum as it is, so the dot is the same number but for the sign
 * of an exact zero, which g = 0 - 2 dl takes to +0 either way (finite values). */
static QG_INLINE void cross_dot_lanes_slide(V *d, const double S[6], const double *b, const double *h) {
  const V b0 = ld(b), b1 = ld(b + NL), b2 = ld(b + 2 * NL);
  const V y3 = S[4] * b2 - S[5] * b1, y4 = S[5] * b0 - S[3] * b2, y5 = S[3] * b1 - S[4] * b0;
  *d = y3 * ld(h + 3 * NL) + (y4 * ld(h + 4 * NL) + y5 * ld(h + 5 * NL));
}

/* si_apply_lanes on a twist held in registers (its operations in its order). */
static QG_INLINE void si_apply_regs(V f[6], const grit_sinertia *si, const V t[6]) {
  const double *I = si->I, *h = si->h, m = si->m;
  f[0] = (I[0] * t[0] + (I[1] * t[1] + I[2] * t[2])) + (h[1] * t[5] - h[2] * t[4]);
  f[1] = (I[3] * t[0] + (I[4] * t[1] + I[5] * t[2])) + (h[2] * t[3] - h[0] * t[5]);
  f[2] = (I[6] * t[0] + (I[7] * t[1] + I[8] * t[2])) + (h[0] * t[4] - h[1] * t[3]);
  f[3] = m * t[3] - (h[1] * t[2] - h[2] * t[1]);
  f[4] = m * t[4] - (h[2] * t[0] - h[0] * t[2]);
  f[5] = m * t[5] - (h[0] * t[1] - h[1] * t[0]);
}

/* cross_dot_lanes and cross_dot_lanes_slide on b and h held in registers (their operations in their order). */
static QG_INLINE void cross_dot_regs(V *d, const double S[6], const V b[6], const V h[6], int slide) {
  if (slide) {
    const V y3 = S[4] * b[2] - S[5] * b[1], y4 = S[5] * b[0] - S[3] * b[2], y5 = S[3] * b[1] - S[4] * b[0];
    *d = y3 * h[3] + (y4 * h[4] + y5 * h[5]);
    return;
  }
  const V y0 = S[1] * b[2] - S[2] * b[1], y1 = S[2] * b[0] - S[0] * b[2], y2 = S[0] * b[1] - S[1] * b[0];
  const V y3 = (S[1] * b[5] - S[2] * b[4]) + (S[4] * b[2] - S[5] * b[1]);
  const V y4 = (S[2] * b[3] - S[0] * b[5]) + (S[5] * b[0] - S[3] * b[2]);
  const V y5 = (S[0] * b[4] - S[1] * b[3]) + (S[3] * b[1] - S[4] * b[0]);
  *d = (y0 * h[0] + (y1 * h[1] + y2 * h[2])) + (y3 * h[3] + (y4 * h[4] + y5 * h[5]));
}

/* A lone leaf's twist (its parent's, pv, plus a S), momentum h, g = 0 - 2 (S x pv) . h and its parent's
 * composite momentum += h, in registers: the scratch path's operations in its order. slide (a constant
 * where inlined): cross_dot_lanes_slide's terms, formed first from pv (fewer live registers). */
static QG_INLINE void leaf_lanes(const double *zt, double *zh, int p, int inner, const double *S, const V *za,
                                 const grit_sinertia *si, V *g, const int slide) {
  /* (a by pointer: a vector passed by value changes the baseline compilation's ABI, -Wpsabi) */
  const V a = *za;
  V pv[6], cv[6], h[6], dl;
  for (int c = 0; c < 6; ++c) pv[c] = inner ? (V)ld(zt + WL * p + c * NL) : (V){0.0};
  if (slide) {
    const V y3 = S[4] * pv[2] - S[5] * pv[1], y4 = S[5] * pv[0] - S[3] * pv[2], y5 = S[3] * pv[1] - S[4] * pv[0];
    for (int c = 0; c < 6; ++c) cv[c] = pv[c] + a * S[c];
    si_apply_regs(h, si, cv);
    dl = y3 * h[3] + (y4 * h[4] + y5 * h[5]);
  } else {
    for (int c = 0; c < 6; ++c) cv[c] = pv[c] + a * S[c];
    si_apply_regs(h, si, cv);
    cross_dot_regs(&dl, S, pv, h, 0);
  }
  *g = 0.0 - 2.0 * dl;
  if (p <= 0) return;
  double *hp = zh + WL * p;
  for (int c = 0; c < 6; ++c) st(hp + c * NL, ld(hp + c * NL) + h[c]);
}

/* The tree's walk for the lanes' sweep, made when the sweep first meets tree t (kept in the scratch's tail:
 * the model's structure, the same for every sweep of the tree; head[0] = 2 t + 2 + fuse names the lists
 * held, 0 in a fresh scratch): the bodies the forward pass visits (ascending), every body of the tree for the
 * backward pass (descending, 2 b + lone) and the dofs whose g the last loop forms. A lone body is a leaf of
 * one dof in its own group (the softbox's 218 slides, a chain's last link; fuse 0: none). */
static QG_NOINLINE int *sweep_lists(const grit_model *m, const grit_rnea *r, int t, int *head, int fuse) {
  int *fwd = head + 4, *bwd = fwd + m->nbody, *gd = bwd + m->nbody;
  unsigned char *lone = (unsigned char *)(gd + m->nv);
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t], b0 = m->dof_body[adr], b1 = m->nbody - 1;
  for (int b = b0; b <= b1; ++b) { /* parents before children: a child clears its parent's mark */
    if (m->body_tree[b] != t) continue;
    const int d0 = m->body_dofadr[b];
    lone[b] = (unsigned char)(fuse && m->body_dofnum[b] == 1 && d0 >= 0 && r->grp[d0] == d0);
    lone[m->body_parent[b]] = 0;
  }
  int nf = 0, nb = 0, ng = 0;
  for (int b = b0; b <= b1; ++b)
    if (m->body_tree[b] == t && !lone[b]) fwd[nf++] = b;
  for (int b = b1; b >= b0; --b)
    if (m->body_tree[b] == t) bwd[nb++] = 2 * b + lone[b];
  for (int i = adr; i < adr + n; ++i)
    if (!lone[m->dof_body[i]]) gd[ng++] = i;
  head[0] = 2 * t + 2 + fuse, head[1] = nf, head[2] = nb, head[3] = ng;
  return head;
}

/* The lanes' sweep. A lone body (sweep_lists) is not visited by the forward pass: the backward pass, which
 * reaches it before its parent's composite momentum (b descending), forms its twist, momentum and its dof's g
 * in registers from its parent's twist and adds the momentum to the parent's where the forward pass's store
 * and the composite pass's load and add were: each number the same operations in the same order, the
 * additions into a parent in the same (descending) order, so the same bits (plain bit 1: no body lone, every
 * body through the scratch as before). The passes walk the tree's lists, not every body of the model. */
static QG_INLINE void sweep_lanes(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const V *z,
                                  V *g, double *s, int plain) {
  const int adr = m->tree_dofadr[t], fuse = !(plain & 2), slides = !(plain & 1);
  double *zt = s, *zh = s + (size_t)WL * (size_t)m->nbody, *zp = zh + (size_t)WL * (size_t)m->nbody;
  int *head = (int *)(void *)(zp + (size_t)WL * (size_t)m->nv);
  if (head[0] != 2 * t + 2 + fuse) sweep_lists(m, r, t, head, fuse);
  const int nf = head[1], nb = head[2], ng = head[3];
  const int *const fwd = head + 4, *const bwd = fwd + m->nbody, *const gd = bwd + m->nbody;
  /* the model's arrays in locals: the scratch's stores (may_alias) would otherwise reload them */
  const int *const btree = m->body_tree, *const bparent = m->body_parent, *const bdofadr = m->body_dofadr;
  const int *const bdofnum = m->body_dofnum, *const grp = r->grp, *const dbody = m->dof_body;
  const double *const cdof = k->cdof;
  const grit_sinertia *const cinert = k->cinert;
  for (int e = 0; e < nf; ++e) {
    const int b = fwd[e], p = bparent[b];
    double *cv = zt + WL * b;
    const double *cp = zt + WL * p;
    if (p > 0 && btree[p] == t)
      move6(cv, cp);
    else
      for (int c = 0; c < 6; ++c) st(cv + c * NL, (V){0.0});
    const int d0 = bdofadr[b], d1 = d0 + bdofnum[b];
    for (int d = d0; d >= 0 && d < d1; ++d) {
      const int gd0 = grp[d];
      const double *src = gd0 == d ? cv : zp + WL * gd0; /* the group's first dof */
      move6(zp + WL * d, src);
      const double *S = cdof + 6 * d;
      const V a = z[d - adr];
      for (int c = 0; c < 6; ++c) st(cv + c * NL, ld(cv + c * NL) + a * S[c]);
    }
    si_apply_lanes(zh + WL * b, &cinert[b], cv);
  }
  for (int e = 0; e < nb; ++e) { /* composite momenta, b descending */
    const int b = bwd[e] >> 1, p = bparent[b];
    if (bwd[e] & 1) { /* the forward pass's steps for b, then its dof's g, from the parent's twist */
      const int d = bdofadr[b];
      const double *S = cdof + 6 * d;
      if (slides && S[0] == 0.0 && S[1] == 0.0 && S[2] == 0.0) /* (two copies: the test before the work) */
        leaf_lanes(zt, zh, p, p > 0 && btree[p] == t, S, &z[d - adr], &cinert[b], &g[d - adr], 1);
      else
        leaf_lanes(zt, zh, p, p > 0 && btree[p] == t, S, &z[d - adr], &cinert[b], &g[d - adr], 0);
      continue;
    }
    if (p <= 0) continue;
    double *hp = zh + WL * p;
    const double *hb = zh + WL * b;
    const V h0 = ld(hp) + ld(hb), h1 = ld(hp + NL) + ld(hb + NL), h2 = ld(hp + 2 * NL) + ld(hb + 2 * NL);
    const V h3 = ld(hp + 3 * NL) + ld(hb + 3 * NL), h4 = ld(hp + 4 * NL) + ld(hb + 4 * NL);
    const V h5 = ld(hp + 5 * NL) + ld(hb + 5 * NL);
    st(hp, h0), st(hp + NL, h1), st(hp + 2 * NL, h2), st(hp + 3 * NL, h3), st(hp + 4 * NL, h4), st(hp + 5 * NL, h5);
  }
  for (int e = 0; e < ng; ++e) {
    const int i = gd[e];
    V dl;
    const double *S = cdof + 6 * i;
    if (slides && S[0] == 0.0 && S[1] == 0.0 && S[2] == 0.0)
      cross_dot_lanes_slide(&dl, S, zp + WL * i, zh + WL * dbody[i]);
    else
      cross_dot_lanes(&dl, S, zp + WL * i, zh + WL * dbody[i]);
    g[i - adr] = 0.0 - 2.0 * dl; /* the one-row sweep's g -= 2 dl from g = 0 */
  }
}

static QG_NOINLINE void sweep_lanes_base(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t, const V *z,
                                         V *g, double *s, int plain) {
  sweep_lanes(m, k, r, t, z, g, s, plain);
}

#if QG_AVX2
static QG_NOINLINE __attribute__((target("avx2"))) void sweep_lanes_avx2(const grit_model *m, const grit_kin *k,
                                                                         const grit_rnea *r, int t, const V *z, V *g,
                                                                         double *s, int plain) {
  sweep_lanes(m, k, r, t, z, g, s, plain);
}
#endif

void grit_rnea_quadratic_gradient_lanes(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                        const grit_lanes *z, grit_lanes *g, double *s, int plain) {
#if QG_AVX2
  if (__builtin_cpu_supports("avx2")) {
    sweep_lanes_avx2(m, k, r, t, z, g, s, plain);
    return;
  }
#endif
  sweep_lanes_base(m, k, r, t, z, g, s, plain);
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
