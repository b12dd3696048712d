/* SPDX-License-Identifier: Apache-2.0 */
/* hessian_contact.c — a contact's term J^T G J (3 rows) on the lower triangles of trees of up to 64 dofs and on
 * their coupling block, by AVX2 kernels (hessian_assemble.c's add_small chooses them): the same operations on
 * each entry as add_small's loops, the same bits (test_hessian). */
#include "hessian.h"
#include "hessian_internal.h"
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>

/* add_small_lower_avx2's terms of a 3-row G on one free body (6 dofs: a body's contact with the world) in
 * vectors: G J (3 x 6) row by row, then each row i of the lower triangle of J^T (G J) four and two columns at
 * a time, the lanes past the diagonal blended back (the upper triangle as it was). Each entry takes
 * add_small_n's operations in its order, (((0 + a0 b0) + a1 b1) + a2 b2) then D + s, in double lanes
 * without FMA: the same bits (test_hessian compares the two). GCC's code for the constant sizes was 450
 * instructions a contact, scalar over the triangle: boxbox_deep's 4 contacts 1.8 k of its step's 29 k. */
/* One term on the lower triangle held in registers: rows 0-5's first four entries in d[0..5], rows 4-5's last
 * two in dh[0..1] (the lanes past the diagonal left as they were). */
static inline __attribute__((always_inline, target("avx2"))) void free_term_avx2(__m256d d[6], __m128d dh[2],
                                                                                  const double *J, const double *G) {
  __m256d gl[3];
  __m128d gh[3];
  for (int r = 0; r < 3; ++r) {
    __m256d sl = _mm256_setzero_pd();
    __m128d sh = _mm_setzero_pd();
    for (int q = 0; q < 3; ++q) {
      const __m256d g = _mm256_set1_pd(G[r * 3 + q]);
      sl = _mm256_add_pd(sl, _mm256_mul_pd(g, _mm256_loadu_pd(J + q * 6)));
      sh = _mm_add_pd(sh, _mm_mul_pd(_mm256_castpd256_pd128(g), _mm_loadu_pd(J + q * 6 + 4)));
    }
    gl[r] = sl, gh[r] = sh;
  }
  for (int i = 0; i < 6; ++i) {
    __m256d sl = _mm256_setzero_pd();
    for (int r = 0; r < 3; ++r) sl = _mm256_add_pd(sl, _mm256_mul_pd(_mm256_set1_pd(J[r * 6 + i]), gl[r]));
    const __m256d sum = _mm256_add_pd(d[i], sl);
    /* (lanes j <= i: row 0 one, row 1 two, row 2 three, rows 3 to 5 all four) */
    d[i] = i == 0 ? _mm256_blend_pd(d[i], sum, 1) : i == 1 ? _mm256_blend_pd(d[i], sum, 3)
           : i == 2 ? _mm256_blend_pd(d[i], sum, 7) : sum;
    if (i < 4) continue;
    __m128d sh = _mm_setzero_pd();
    for (int r = 0; r < 3; ++r) sh = _mm_add_pd(sh, _mm_mul_pd(_mm_set1_pd(J[r * 6 + i]), gh[r]));
    const __m128d sumh = _mm_add_pd(dh[i - 4], sh);
    dh[i - 4] = i == 4 ? _mm_blend_pd(dh[0], sumh, 1) : sumh;
  }
}

/* add_small_lower_avx2's terms of 3-row Gs on one free body (6 dofs: a body's contacts with the world) in
 * vectors: G J (3 x 6) row by row, then each row i of the lower triangle of J^T (G J) four and two columns at
 * a time, the lanes past the diagonal blended back (the upper triangle as it was). Each entry takes
 * add_small_n's operations in its order, (((0 + a0 b0) + a1 b1) + a2 b2) then D + s, in double lanes
 * without FMA: the same bits (test_hessian compares the two). GCC's code for the constant sizes was 450
 * instructions a contact, scalar over the triangle: boxbox_deep's 4 contacts 1.8 k of its step's 29 k. The
 * terms of n constraints in order, the block held in registers between them (grit_hessian_add_free_run). */
static inline __attribute__((always_inline, target("avx2"))) void add_free_lower_avx2(grit_hessian *h, int tree, int n,
                                                                                       const double *const *J,
                                                                                       const double *const *G) {
  double *D = grit_hessian_dblock(h, tree, 6);
  __m256d d[6];
  __m128d dh[2] = {_mm_loadu_pd(D + 28), _mm_loadu_pd(D + 34)};
  for (int i = 0; i < 6; ++i) d[i] = _mm256_loadu_pd(D + i * 6);
  for (int k = 0; k < n; ++k) free_term_avx2(d, dh, J[k], G[k]);
  for (int i = 0; i < 6; ++i) _mm256_storeu_pd(D + i * 6, d[i]);
  _mm_storeu_pd(D + 28, dh[0]);
  _mm_storeu_pd(D + 34, dh[1]);
}

__attribute__((target("avx2"))) void grit_hessian_add_free_run_avx2(grit_hessian *h, int tree, int n,
                                                                    const double *const *J, const double *const *G) {
  h->factored = 0;
  add_free_lower_avx2(h, tree, n, J, G);
}
/* The lanes j0 .. j0 + 3 that are at most lim. */
static inline __attribute__((always_inline, target("avx2"))) __m256i lanes_upto(int j0, int lim) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)lim - j0 + 1), _mm256_setr_epi64x(0, 1, 2, 3));
}
/* ((0 + a0 g0) + a1 g1) + a2 g2 on four lanes (add_small_n's sums over three rows, in their order). */
static inline __attribute__((always_inline, target("avx2"))) __m256d sum3(const double a[3], const double *g,
                                                                            int stride) {
  __m256d s = _mm256_setzero_pd();
  for (int r = 0; r < 3; ++r) s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(a[r]), _mm256_loadu_pd(g + r * stride)));
  return s;
}
/* The same for the other sizes (add_small_lower_avx2's: trees of up to 64 dofs, one or two, 3 rows): G J per
 * tree into scratch padded to four columns (the tail of J's rows read under a mask), each row of a tree's lower
 * triangle four columns at a time (the last lanes under a mask), each row of the coupling block the same over
 * all its columns. The operations of add_small_n on each entry, in its order: the same bits on the lower
 * triangles and the coupling block; the upper triangles keep A's entries (add_small_n's variable sizes mirror
 * their sums there, which no factor of the lower-only paths reads). The arm and ball's contacts (a 7-dof arm,
 * a free ball) were 8 % of its step in add_small's loops. */
static inline __attribute__((always_inline, target("avx2"))) void add_rows3_lower_avx2(grit_hessian *h, int ntree, const int tree[2],
                                                                         const double *const J[2], const double *G,
                                                                         int pair) {
  double GJ[2][3 * 64];
  int n[2] = {h->m->tree_dofnum[tree[0]], ntree == 2 ? h->m->tree_dofnum[tree[1]] : 0};
  for (int k = 0; k < ntree; ++k) {
    const int nk = n[k];
    const double *Jk = J[k];
    double *gj = GJ[k];
    for (int c0 = 0; c0 < nk; c0 += 4) {
      const __m256i mask = lanes_upto(c0, nk - 1);
      __m256d jr[3];
      for (int q = 0; q < 3; ++q) jr[q] = _mm256_maskload_pd(Jk + q * nk + c0, mask);
      for (int r = 0; r < 3; ++r) {
        __m256d sv = _mm256_setzero_pd();
        for (int q = 0; q < 3; ++q) sv = _mm256_add_pd(sv, _mm256_mul_pd(_mm256_set1_pd(G[r * 3 + q]), jr[q]));
        _mm256_storeu_pd(gj + r * 64 + c0, sv); /* (stride 64: the padded lanes stay inside) */
      }
    }
    double *D = grit_hessian_dblock(h, tree[k], nk);
    for (int i = 0; i < nk; ++i) {
      const double a[3] = {Jk[i], Jk[nk + i], Jk[2 * nk + i]};
      double *Di = D + (size_t)i * nk;
      int j0 = 0;
      for (; j0 + 3 <= i; j0 += 4) _mm256_storeu_pd(Di + j0, _mm256_add_pd(_mm256_loadu_pd(Di + j0), sum3(a, gj + j0, 64)));
      if (j0 <= i) {
        const __m256i mask = lanes_upto(j0, i);
        _mm256_maskstore_pd(Di + j0, mask, _mm256_add_pd(_mm256_maskload_pd(Di + j0, mask), sum3(a, gj + j0, 64)));
      }
    }
  }
  if (ntree == 2 && pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka; /* block rows: tree b (larger), cols: tree a */
    const int na = n[ka], nb = n[kb];
    const double *Jb = J[kb], *gja = GJ[ka];
    double *C = grit_hessian_cblk(h, pair, na * nb);
    for (int r = 0; r < nb; ++r) {
      const double a[3] = {Jb[r], Jb[nb + r], Jb[2 * nb + r]};
      double *Cr = C + (size_t)r * na;
      int c0 = 0;
      for (; c0 + 4 <= na; c0 += 4) _mm256_storeu_pd(Cr + c0, _mm256_add_pd(_mm256_loadu_pd(Cr + c0), sum3(a, gja + c0, 64)));
      if (c0 < na) {
        const __m256i mask = lanes_upto(c0, na - 1);
        _mm256_maskstore_pd(Cr + c0, mask, _mm256_add_pd(_mm256_maskload_pd(Cr + c0, mask), sum3(a, gja + c0, 64)));
      }
    }
  }
}

__attribute__((target("avx2"))) int grit_hessian_add_rows3_avx2(grit_hessian *h, int ntree, const int tree[2],
                                                                const double *const J[2], const double *G, int pair) {
  const int n0 = h->m->tree_dofnum[tree[0]], n1 = ntree == 2 ? h->m->tree_dofnum[tree[1]] : 6;
  if (n0 == 6 && n1 == 6) { /* (a normal-only G on free bodies: add_small's add_normal_n, fewer terms) */
    const __m256d z = _mm256_setzero_pd(); /* (G[0..7] == 0, as add_small_in's test: -0 too, not NaN) */
    const int e0 = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(G), z, _CMP_EQ_OQ));
    const int e1 = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(G + 4), z, _CMP_EQ_OQ));
    if ((e0 & e1) == 15) return 0;
    if (ntree == 1) {
      add_free_lower_avx2(h, tree[0], 1, J, &G);
      return 1;
    }
  }
  add_rows3_lower_avx2(h, ntree, tree, J, G, pair);
  return 1;
}
#else
void grit_hessian_add_free_run_avx2(grit_hessian *h, int tree, int n, const double *const *J, const double *const *G) {
  (void)h, (void)tree, (void)n, (void)J, (void)G;
}
int grit_hessian_add_rows3_avx2(grit_hessian *h, int ntree, const int tree[2], const double *const J[2],
                                const double *G, int pair) {
  (void)h, (void)ntree, (void)tree, (void)J, (void)G, (void)pair;
  return 0;
}
#endif
