/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_factor_simd.c — the block Cholesky's numeric factorization of a free body's column with AVX
 * (grit_blockchol_factor, blockchol.c): the off-diagonal blocks' triangular solves and the Schur
 * complement's 6 x 6 block products, vectorized across independent entries.
 *
 * Each entry keeps its own sum in the order of the plain loops of blockchol.c (factor_column): a
 * triangular solve's entry starts from its value and subtracts the products k = 0 .. j-1 in order, then
 * is multiplied by the reciprocal pivot; a Schur product's entry sums its products k = 0 .. 5 in order
 * from zero and is subtracted once. No fused multiply-adds (-ffp-contract=off, and the target does not
 * include FMA): the same bits as the plain loops on any x86-64 processor. Chosen at run time by the
 * processor (grit_blockchol_have_avx2); GRIT_NO_AVX2 compiles none of it. */
#include "blockchol.h"
#include "blockchol_internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>

int grit_blockchol_have_avx2(void) { return __builtin_cpu_supports("avx2"); }

#define AVX2 __attribute__((target("avx2")))
#ifndef __clang__
#define UNROLL _Pragma("GCC unroll 8")
#else
#define UNROLL
#endif

/* Whether column p (a 6-dof tree) has only 6-dof trees below it (the kernels' block shapes). */
static int all_six(const grit_blockchol *b, int p) {
  const int *dim = b->m->tree_dofnum;
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e)
    if (dim[b->order[b->rows[e]]] != 6) return 0;
  return 1;
}

/* d := s^T for 6 x 6 blocks, rows ss and ds doubles apart, in registers: a 4 x 4 tile by unpacks and
 * lane permutes, the 4 x 2, 2 x 4 and 2 x 2 tiles by unpacks of pairs (moves only: the same bits; the
 * scalar transpositions were a third of the kernel's instructions). */
static AVX2 void transpose6(const double *restrict s, int ss, double *restrict d, int ds) {
  const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ss), r2 = _mm256_loadu_pd(s + 2 * ss),
                r3 = _mm256_loadu_pd(s + 3 * ss);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
                t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + ds, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * ds, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * ds, _mm256_permute2f128_pd(t1, t3, 0x31));
  for (int r = 0; r < 4; r += 2) { /* rows r, r+1's columns 4, 5 into d's rows 4, 5 */
    const __m128d a = _mm_loadu_pd(s + r * ss + 4), b = _mm_loadu_pd(s + (r + 1) * ss + 4);
    _mm_storeu_pd(d + 4 * ds + r, _mm_unpacklo_pd(a, b));
    _mm_storeu_pd(d + 5 * ds + r, _mm_unpackhi_pd(a, b));
  }
  const __m256d r4 = _mm256_loadu_pd(s + 4 * ss), r5 = _mm256_loadu_pd(s + 5 * ss);
  const __m256d lo = _mm256_unpacklo_pd(r4, r5), hi = _mm256_unpackhi_pd(r4, r5);
  _mm_storeu_pd(d + 4, _mm256_castpd256_pd128(lo));
  _mm_storeu_pd(d + ds + 4, _mm256_castpd256_pd128(hi));
  _mm_storeu_pd(d + 2 * ds + 4, _mm256_extractf128_pd(lo, 1));
  _mm_storeu_pd(d + 3 * ds + 4, _mm256_extractf128_pd(hi, 1));
  const __m128d a = _mm_loadu_pd(s + 4 * ss + 4), b = _mm_loadu_pd(s + 5 * ss + 4);
  _mm_storeu_pd(d + 4 * ds + 4, _mm_unpacklo_pd(a, b));
  _mm_storeu_pd(d + 5 * ds + 4, _mm_unpackhi_pd(a, b));
}

/* X := X L^-T for a 6 x 6 block X (row-major), L the factored diagonal block, inv its reciprocal
 * pivots; the result also transposed into XT (row k: X's column k, 8 doubles a row, lanes 0..5 the
 * rows of X), for the Schur products. Vectorized across X's rows (4 + 2 lanes). */
static AVX2 void trsm6(double *restrict X, const double *restrict L, const double *restrict inv, double *restrict XT) {
  transpose6(X, 6, XT, 8);
  UNROLL for (int j = 0; j < 6; ++j) { /* unrolled in full (the compiler leaves the triangle's loops) */
    __m256d a = _mm256_loadu_pd(XT + j * 8);
    __m128d c = _mm_loadu_pd(XT + j * 8 + 4);
    UNROLL for (int k = 0; k < j; ++k) { /* s -= l_jk x_k, k in order */
      const double l = L[j * 6 + k];
      a = _mm256_sub_pd(a, _mm256_mul_pd(_mm256_set1_pd(l), _mm256_loadu_pd(XT + k * 8)));
      c = _mm_sub_pd(c, _mm_mul_pd(_mm_set1_pd(l), _mm_loadu_pd(XT + k * 8 + 4)));
    }
    a = _mm256_mul_pd(a, _mm256_set1_pd(inv[j]));
    c = _mm_mul_pd(c, _mm_set1_pd(inv[j]));
    _mm256_storeu_pd(XT + j * 8, a);
    _mm_storeu_pd(XT + j * 8 + 4, c);
  }
  transpose6(XT, 8, X, 6);
}

/* U -= Xb Xa^T for 6 x 6 blocks: Xb row-major, Xa given transposed (XaT, rows of 8); row r of U's
 * entries summed together, each from zero over k = 0 .. 5 in order. diag: U is the diagonal block, only
 * its lower triangle (c <= r) written. */
static AVX2 void schur6(double *restrict U, const double *restrict Xb, const double *restrict XaT, int diag) {
  for (int r = 0; r < 6; ++r) {
    __m256d a = _mm256_setzero_pd();
    __m128d c = _mm_setzero_pd();
    for (int k = 0; k < 6; ++k) {
      const double x = Xb[r * 6 + k];
      a = _mm256_add_pd(a, _mm256_mul_pd(_mm256_set1_pd(x), _mm256_loadu_pd(XaT + k * 8)));
      c = _mm_add_pd(c, _mm_mul_pd(_mm_set1_pd(x), _mm_loadu_pd(XaT + k * 8 + 4)));
    }
    double *u = U + r * 6;
    const __m256d ua = _mm256_sub_pd(_mm256_loadu_pd(u), a);
    const __m128d uc = _mm_sub_pd(_mm_loadu_pd(u + 4), c);
    if (!diag || r >= 5) {
      _mm256_storeu_pd(u, ua);
      _mm_storeu_pd(u + 4, uc);
    } else { /* lanes c <= r only: the upper triangle keeps its bits */
      const __m256i mask = _mm256_set_epi64x(r >= 3 ? -1 : 0, r >= 2 ? -1 : 0, r >= 1 ? -1 : 0, -1);
      _mm256_maskstore_pd(u, mask, ua);
      if (r == 4) _mm_storel_pd(u + 4, uc);
    }
  }
}

/* The column's blocks solved and its Schur complement, as factor_column's loops for n = 6, when every
 * block below is 6 x 6. Returns 0 (not done: the caller's plain loops run) or 1. Scratch: b->T (the
 * many-column solves' buffer, 64 nv doubles; this needs 48 per block, at most 8 nv). */
AVX2 int grit_blockchol_column6_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  if (!all_six(b, p)) return 0;
  double *Lx = b->Lx, *XT = b->T;
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
  for (int e = e0; e < e1; ++e) trsm6(Lx + b->roff[e], L, inv, XT + (size_t)(e - e0) * 48);
  for (int ea = e0; ea < e1; ++ea) {
    const int qa = b->rows[ea];
    const double *XaT = XT + (size_t)(ea - e0) * 48;
    schur6(Lx + b->doff[qa], Lx + b->roff[ea], XaT, 1);
    int f = b->colptr[qa]; /* blocks (qb, qa), qb > qa, are in column qa: walk it along */
    for (int eb = ea + 1; eb < e1; ++eb) {
      const int qb = b->rows[eb];
      while (b->rows[f] != qb) ++f;
      schur6(Lx + b->roff[f], Lx + b->roff[eb], XaT, 0);
    }
  }
  return 1;
}


/* Particles: column p of a 3-dof tree whose blocks below are all 3 x 3, after its diagonal block L
 * (reciprocal pivots inv): the blocks' triangular solves and the Schur complement. Each block X's nine
 * Schur entries (r, c) of a block pair are lanes e = 3 r + c of three vectors (4, 4 and 2 lanes, the
 * last one's second lane unused): the column's blocks are first solved and spread into patterns,
 * A[k][e] = X[c][k] (the block as the pair's column side) and B[k][e] = X[r][k] (as its row side),
 * 3 x 12 doubles each; a pair's update is then nine products of whole vectors, summed from zero in
 * increasing k and subtracted once, as factor_column's loops do entry by entry (the same bits). The
 * scalar loops spent 125 instructions a pair and a pile of 1000 particles has 160000 pairs a
 * factorization. Scratch: b->T (72 doubles a block, at most 24 nv). */
#define P3 36 /* doubles of one pattern: 3 k x 12 lanes */

/* Block X's triangular solve X := X L^-T by its columns v_k = (X[0][k], X[1][k], X[2][k]) as vectors (each
 * lane the scalar loop's entry: v_j minus l_jk v_k for k = 0 .. j-1 in order, times the reciprocal pivot),
 * written back to X, and spread into its patterns by lane permutations (moves only). */
static inline __attribute__((always_inline)) AVX2 void trsm_pattern3(double *restrict X, const double *restrict L, const double *restrict inv,
                                                                   double *restrict A, double *restrict B) {
  __m256d v[3];
  UNROLL for (int j = 0; j < 3; ++j) {
    __m256d s = _mm256_set_pd(0.0, X[6 + j], X[3 + j], X[j]);
    UNROLL for (int k = 0; k < j; ++k) s = _mm256_sub_pd(s, _mm256_mul_pd(_mm256_set1_pd(L[j * 3 + k]), v[k]));
    v[j] = _mm256_mul_pd(s, _mm256_set1_pd(inv[j]));
  }
  UNROLL for (int k = 0; k < 3; ++k) {
    double c[4];
    _mm256_storeu_pd(c, v[k]);
    X[k] = c[0], X[3 + k] = c[1], X[6 + k] = c[2];
    const __m128d tail = _mm256_castpd256_pd128(_mm256_permute4x64_pd(v[k], 0x0E)); /* (x2k, 0) */
    _mm256_storeu_pd(A + k * 12, _mm256_permute4x64_pd(v[k], 0x24));     /* x0k x1k x2k x0k */
    _mm256_storeu_pd(A + k * 12 + 4, _mm256_permute4x64_pd(v[k], 0x49)); /* x1k x2k x0k x1k */
    _mm_storeu_pd(A + k * 12 + 8, tail);
    _mm256_storeu_pd(B + k * 12, _mm256_permute4x64_pd(v[k], 0x40));     /* x0k x0k x0k x1k */
    _mm256_storeu_pd(B + k * 12 + 4, _mm256_permute4x64_pd(v[k], 0xA5)); /* x1k x1k x2k x2k */
    _mm_storeu_pd(B + k * 12 + 8, tail);
  }
}

/* The nine sums of a pair, Σ_k B[k][e] A[k][e] from zero, into s0 (lanes 0-3), s1 (4-7), s2 (8). */
#define SUM3(Bp)                                                                                     \
  do {                                                                                               \
    s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm_setzero_pd();                       \
    for (int k = 0; k < 3; ++k) {                                                                    \
      s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_loadu_pd((Bp) + k * 12), a0[k]));                  \
      s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_loadu_pd((Bp) + k * 12 + 4), a1[k]));              \
      s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd((Bp) + k * 12 + 8), a2[k]));                       \
    }                                                                                                \
  } while (0)

/* U -= the nine sums (a whole 3 x 3 block) */
#define UPDATE3(U)                                                                                   \
  do {                                                                                               \
    _mm256_storeu_pd((U), _mm256_sub_pd(_mm256_loadu_pd(U), s0));                                    \
    _mm256_storeu_pd((U) + 4, _mm256_sub_pd(_mm256_loadu_pd((U) + 4), s1));                          \
    _mm_store_sd((U) + 8, _mm_sub_sd(_mm_load_sd((U) + 8), s2));                                     \
  } while (0)

/* The entry of row qb in a column's ascending rows, searched from f on (qb is there, before end): a few
 * steps along, then by doubling strides and halving (a pile's column qa is long, and the rows of a
 * column below it that land there are few: the walk along was 290 M instructions on particle.xml). */
static inline int find_row(const int *rows, int f, int end, int qb) {
  for (int i = 0; i < 4; ++i, ++f)
    if (rows[f] >= qb) return f;
  int lo = f - 1, step = 1; /* rows[lo] < qb */
  while (lo + step < end && rows[lo + step] < qb) lo += step, step *= 2;
  int hi = lo + step < end ? lo + step : end - 1; /* rows[hi] >= qb */
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (rows[mid] < qb) lo = mid;
    else hi = mid;
  }
  return hi;
}

/* A column qa of at most this many times the pairs ahead is mapped, not searched (the same targets). */
#ifndef MAP_RATIO
#define MAP_RATIO 4
#endif

/* A pair's fused patterns of a block: for each k the second column's B vectors (lanes 0-7) after the
 * first's, then both columns' ninth lanes together (k x 2). */
#define PF 54

/* The fused sums of a pair of columns p, q = p+1: s0, s1 the first's, t0, t1 the second's (lanes 0-7),
 * s2 both ninth lanes (lane 0 the first's, lane 1 the second's); each from zero in increasing k. */
#define SUM3_PAIR(Fp)                                                                                \
  do {                                                                                               \
    s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm_setzero_pd();                       \
    t0 = _mm256_setzero_pd(), t1 = _mm256_setzero_pd();                                              \
    for (int k = 0; k < 3; ++k) {                                                                    \
      s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_loadu_pd((Fp) + k * 16), a0[k]));                  \
      s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_loadu_pd((Fp) + k * 16 + 4), a1[k]));              \
      t0 = _mm256_add_pd(t0, _mm256_mul_pd(_mm256_loadu_pd((Fp) + k * 16 + 8), c0[k]));              \
      t1 = _mm256_add_pd(t1, _mm256_mul_pd(_mm256_loadu_pd((Fp) + k * 16 + 12), c1[k]));             \
      s2 = _mm_add_pd(s2, _mm_mul_pd(_mm_loadu_pd((Fp) + 48 + k * 2), a2[k]));                       \
    }                                                                                                \
  } while (0)

/* U -= the first column's sums, then the second's: one read and write of the block for both (the
 * entries' order of factor_column's loops: p's sum subtracted, then q's) */
#define UPDATE3_PAIR(U)                                                                              \
  do {                                                                                               \
    _mm256_storeu_pd((U), _mm256_sub_pd(_mm256_sub_pd(_mm256_loadu_pd(U), s0), t0));                 \
    _mm256_storeu_pd((U) + 4, _mm256_sub_pd(_mm256_sub_pd(_mm256_loadu_pd((U) + 4), s1), t1));       \
    _mm_store_sd((U) + 8, _mm_sub_sd(_mm_sub_sd(_mm_load_sd((U) + 8), s2), _mm_unpackhi_pd(s2, s2)));  \
  } while (0)

/* A particle's column p (mode 0); or of a pair of columns p-1, p whose rows below p are the same
 * (grit_blockchol_pair3_lead_avx2 ran on p-1 just before, leaving its patterns at b->T): mode 2, p-1's
 * updates of the blocks among those rows applied with p's. */
static inline __attribute__((always_inline)) AVX2 void column3(grit_blockchol *b, int p, const double *L,
                                                              const double *inv, const int mode) {
  double *Lx = b->Lx, *P = b->T;
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
  if (mode == 2) P += (size_t)(e1 - e0 + 1) * 2 * P3; /* after the lead's blocks */
  double *F = P + (size_t)(e1 - e0) * 2 * P3;        /* mode 2: the fused patterns, PF doubles a block */
  const double *Pl = b->T + 2 * P3;                   /* mode 2: the lead's patterns of the same rows */
  for (int e = e0; e < e1; ++e)
    trsm_pattern3(Lx + b->roff[e], L, inv, P + (size_t)(e - e0) * 2 * P3, P + (size_t)(e - e0) * 2 * P3 + P3);
  if (mode == 2)
    for (int i = 0; i < e1 - e0; ++i) { /* the B patterns of both columns side by side (moves only) */
      const double *bl = Pl + (size_t)i * 2 * P3 + P3, *bq = P + (size_t)i * 2 * P3 + P3;
      double *f = F + (size_t)i * PF;
      for (int k = 0; k < 3; ++k) {
        _mm256_storeu_pd(f + k * 16, _mm256_loadu_pd(bl + k * 12));
        _mm256_storeu_pd(f + k * 16 + 4, _mm256_loadu_pd(bl + k * 12 + 4));
        _mm256_storeu_pd(f + k * 16 + 8, _mm256_loadu_pd(bq + k * 12));
        _mm256_storeu_pd(f + k * 16 + 12, _mm256_loadu_pd(bq + k * 12 + 4));
        f[48 + 2 * k] = bl[k * 12 + 8], f[49 + 2 * k] = bq[k * 12 + 8];
      }
    }
  /* the targets as recorded by the column's first factorization since the analysis, or recorded now */
  const int nt = b->nt, record = b->tgt_ptr[nt] <= b->cap_tgt, done = record && b->tgt_done[p];
  int *tg = b->tgt + (record ? b->tgt_ptr[p] : 0);
  const __m256i lower0 = _mm256_set_epi64x(-1, 0, 0, -1), lower1 = _mm256_set_epi64x(-1, -1, 0, -1);
  for (int ea = e0; ea < e1; ++ea) {
    const int qa = b->rows[ea];
    const double *A = P + (size_t)(ea - e0) * 2 * P3, *Al = Pl + (size_t)(ea - e0) * 2 * P3;
    const double *Ap = mode == 2 ? Al : A; /* the first column's */
    __m256d a0[3], a1[3], c0[3], c1[3];
    __m128d a2[3];
    UNROLL for (int k = 0; k < 3; ++k) {
      a0[k] = _mm256_loadu_pd(Ap + k * 12);
      a1[k] = _mm256_loadu_pd(Ap + k * 12 + 4);
      if (mode == 2) {
        c0[k] = _mm256_loadu_pd(A + k * 12);
        c1[k] = _mm256_loadu_pd(A + k * 12 + 4);
        a2[k] = _mm_unpacklo_pd(_mm_load_sd(Al + k * 12 + 8), _mm_load_sd(A + k * 12 + 8));
      } else {
        c0[k] = c1[k] = _mm256_setzero_pd();
        a2[k] = _mm_loadu_pd(A + k * 12 + 8);
      }
    }
    __m256d s0, s1, t0, t1;
    __m128d s2;
    { /* the diagonal block of qa: its lower triangle only (entries 0, 3, 4, 6, 7, 8) */
      double *T = Lx + b->doff[qa];
      if (mode == 2) {
        SUM3_PAIR(F + (size_t)(ea - e0) * PF);
        _mm256_maskstore_pd(T, lower0, _mm256_sub_pd(_mm256_sub_pd(_mm256_loadu_pd(T), s0), t0));
        _mm256_maskstore_pd(T + 4, lower1, _mm256_sub_pd(_mm256_sub_pd(_mm256_loadu_pd(T + 4), s1), t1));
        _mm_store_sd(T + 8, _mm_sub_sd(_mm_sub_sd(_mm_load_sd(T + 8), s2), _mm_unpackhi_pd(s2, s2)));
      } else {
        SUM3(A + P3);
        _mm256_maskstore_pd(T, lower0, _mm256_sub_pd(_mm256_loadu_pd(T), s0));
        _mm256_maskstore_pd(T + 4, lower1, _mm256_sub_pd(_mm256_loadu_pd(T + 4), s1));
        _mm_store_sd(T + 8, _mm_sub_sd(_mm_load_sd(T + 8), s2));
      }
    }
    const double *Bp = mode == 2 ? F + (size_t)(ea + 1 - e0) * PF : P + (size_t)(ea + 1 - e0) * 2 * P3 + P3;
    const size_t bstep = mode == 2 ? PF : 2 * P3;
#define PAIR_UPDATE(U)                                                                               \
  do {                                                                                               \
    if (mode == 2) {                                                                                 \
      SUM3_PAIR(Bp);                                                                                 \
      UPDATE3_PAIR(U);                                                                               \
    } else {                                                                                         \
      SUM3(Bp);                                                                                      \
      UPDATE3(U);                                                                                    \
    }                                                                                                \
  } while (0)
    if (done) { /* the recorded targets */
      for (int eb = ea + 1; eb < e1; ++eb, Bp += bstep) {
        double *U = Lx + *tg++;
        PAIR_UPDATE(U);
      }
      continue;
    }
    /* blocks (qb, qa), qb > qa, are in column qa. When it holds few more rows than the pairs ahead,
     * its rows' offsets by position into a map, read once a pair; else a search per pair along it. */
    const int f0 = b->colptr[qa], fend = b->colptr[qa + 1];
    if (fend - f0 <= MAP_RATIO * (e1 - ea - 1)) {
      int *map = b->hpos; /* (the analysis's scratch: free here) */
      for (int f = f0; f < fend; ++f) map[b->rows[f]] = b->roff[f];
      for (int eb = ea + 1; eb < e1; ++eb, Bp += bstep) {
        const int off = map[b->rows[eb]];
        if (record) *tg++ = off;
        double *U = Lx + off;
        PAIR_UPDATE(U);
      }
      continue;
    }
    int f = f0;
    for (int eb = ea + 1; eb < e1; ++eb, Bp += bstep) {
      f = find_row(b->rows, f, fend, b->rows[eb]);
      if (record) *tg++ = b->roff[f];
      double *U = Lx + b->roff[f];
      PAIR_UPDATE(U);
    }
#undef PAIR_UPDATE
  }
  if (record) b->tgt_done[p] = 1;
}

AVX2 void grit_blockchol_column3_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  column3(b, p, L, inv, 0);
}

AVX2 void grit_blockchol_pair3_avx2(grit_blockchol *b, int q, const double *L, const double *inv) {
  column3(b, q, L, inv, 2);
}

/* The first column p of a pair (its first row q = p+1, its other rows q's): its blocks solved into
 * patterns (kept at b->T for q's call) and its updates of column q's blocks, which are q's rows in
 * order (the targets by position). */
AVX2 void grit_blockchol_pair3_lead_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  double *Lx = b->Lx, *P = b->T;
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1], q = b->rows[e0], g0 = b->colptr[q];
  for (int e = e0; e < e1; ++e)
    trsm_pattern3(Lx + b->roff[e], L, inv, P + (size_t)(e - e0) * 2 * P3, P + (size_t)(e - e0) * 2 * P3 + P3);
  const __m256i lower0 = _mm256_set_epi64x(-1, 0, 0, -1), lower1 = _mm256_set_epi64x(-1, -1, 0, -1);
  __m256d a0[3], a1[3], s0, s1;
  __m128d a2[3], s2;
  UNROLL for (int k = 0; k < 3; ++k) {
    a0[k] = _mm256_loadu_pd(P + k * 12);
    a1[k] = _mm256_loadu_pd(P + k * 12 + 4);
    a2[k] = _mm_loadu_pd(P + k * 12 + 8);
  }
  double *T = Lx + b->doff[q]; /* q's diagonal block: its lower triangle */
  SUM3(P + P3);
  _mm256_maskstore_pd(T, lower0, _mm256_sub_pd(_mm256_loadu_pd(T), s0));
  _mm256_maskstore_pd(T + 4, lower1, _mm256_sub_pd(_mm256_loadu_pd(T + 4), s1));
  _mm_store_sd(T + 8, _mm_sub_sd(_mm_load_sd(T + 8), s2));
  const double *Bp = P + 2 * P3 + P3;
  for (int eb = e0 + 1; eb < e1; ++eb, Bp += 2 * P3) {
    double *U = Lx + b->roff[g0 + (eb - e0 - 1)];
    SUM3(Bp);
    UPDATE3(U);
  }
}


/* Whether column p has only 3-dof trees (particles) below it. */
static int rows_three(const grit_blockchol *b, int p) {
  const int *dim = b->m->tree_dofnum;
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e)
    if (dim[b->order[b->rows[e]]] != 3) return 0;
  return 1;
}

/* X := X L^-T for a 3 x n block X (row-major) below a column of n dofs, vectorized across X's 3 rows
 * (lanes 0..2; lane 3 stays +0): XT (row k: X's column k, 4 doubles a row) holds the result, also copied
 * back into X, and serves the Schur products. Each entry as factor_column's loop: from its value, minus
 * l_jk x_k for k = 0 .. j-1 in order, times the reciprocal pivot. */
static inline __attribute__((always_inline)) AVX2 void trsm_r3(double *restrict X, int n, const double *restrict L,
                                                              const double *restrict inv, double *restrict XT) {
  for (int j = 0; j < n; ++j)
    XT[j * 4] = X[j], XT[j * 4 + 1] = X[n + j], XT[j * 4 + 2] = X[2 * n + j], XT[j * 4 + 3] = 0.0;
  for (int j = 0; j < n; ++j) {
    __m256d a = _mm256_loadu_pd(XT + j * 4);
    const double *lj = L + (size_t)j * n;
    for (int k = 0; k < j; ++k) a = _mm256_sub_pd(a, _mm256_mul_pd(_mm256_set1_pd(lj[k]), _mm256_loadu_pd(XT + k * 4)));
    _mm256_storeu_pd(XT + j * 4, _mm256_mul_pd(a, _mm256_set1_pd(inv[j])));
  }
  for (int j = 0; j < n; ++j) X[j] = XT[j * 4], X[n + j] = XT[j * 4 + 1], X[2 * n + j] = XT[j * 4 + 2];
}

/* U -= Xb Xa^T for a 3 x 3 block U: Xb (3 x n) row-major, Xa transposed (XaT, rows of 4); row r of U
 * summed together, each entry from zero over k = 0 .. n-1 in order, subtracted once, lanes 0..2 only
 * (diag: lanes c <= r, the upper triangle keeps its bits). */
static inline __attribute__((always_inline)) AVX2 void schur_r3(double *restrict U, const double *restrict Xb, int n,
                                                               const double *restrict XaT, int diag) {
  for (int r = 0; r < 3; ++r) {
    __m256d a = _mm256_setzero_pd();
    const double *x = Xb + (size_t)r * n;
    for (int k = 0; k < n; ++k) a = _mm256_add_pd(a, _mm256_mul_pd(_mm256_set1_pd(x[k]), _mm256_loadu_pd(XaT + k * 4)));
    double *u = U + r * 3; /* lanes 0, 1 as a pair, lane 2 alone (masked moves are slow on AMD's cores) */
    const int last = diag ? r : 2;
    const __m128d lo = _mm256_castpd256_pd128(a);
    if (last == 0) _mm_store_sd(u, _mm_sub_sd(_mm_load_sd(u), lo));
    else _mm_storeu_pd(u, _mm_sub_pd(_mm_loadu_pd(u), lo));
    if (last == 2) _mm_store_sd(u + 2, _mm_sub_sd(_mm_load_sd(u + 2), _mm256_extractf128_pd(a, 1)));
  }
}

/* The column's blocks solved and its Schur complement, as factor_column's loops, for a column of n dofs
 * with only 3 x n blocks below (n a constant where inlined). */
static inline __attribute__((always_inline)) AVX2 void column_r3(grit_blockchol *b, int p, int n, const double *L,
                                                                const double *inv) {
  double *Lx = b->Lx, *XT = b->T;
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
  for (int e = e0; e < e1; ++e) trsm_r3(Lx + b->roff[e], n, L, inv, XT + (size_t)(e - e0) * 4 * n);
  for (int ea = e0; ea < e1; ++ea) {
    const int qa = b->rows[ea];
    const double *XaT = XT + (size_t)(ea - e0) * 4 * n;
    schur_r3(Lx + b->doff[qa], Lx + b->roff[ea], n, XaT, 1);
    int f = b->colptr[qa]; /* blocks (qb, qa), qb > qa, are in column qa: walk it along */
    for (int eb = ea + 1; eb < e1; ++eb) {
      const int qb = b->rows[eb];
      while (b->rows[f] != qb) ++f;
      schur_r3(Lx + b->roff[f], Lx + b->roff[eb], n, XaT, 0);
    }
  }
}

/* A column of n dofs with only particles (3-dof trees) below it: a particle's own column (n = 3, in a
 * grid coupled by tendons or contacts: MuJoCo's hammock) or a body's pressed on several of them. Returns
 * 0 (not done: the caller's plain loops run) or 1. Scratch: b->T (64 nv doubles; this needs 4 n per
 * block, at most 4 n nv / 3: n up to 48). */
AVX2 int grit_blockchol_column_r3_avx2(grit_blockchol *b, int p, int n, const double *L, const double *inv) {
  if (n > 48 || !rows_three(b, p)) return 0;
  if (n == 3) column_r3(b, p, 3, L, inv);
  else column_r3(b, p, n, L, inv);
  return 1;
}

/* A particle's column (3 dofs, 3 x 3 blocks below) in the backward substitution: y -= X^T z over the
 * column's blocks, y's three entries as lanes 0..2 (lane 3 unused): y_k minus X_rk z_r for r = 0, 1, 2 in
 * order, block after block, as solve_backward_column's loops (the same bits; no fused multiply-adds).
 * The scalar loops were a third of the solve's instructions on a pile of 1000 particles. */
AVX2 void grit_blockchol_backward3_avx2(const grit_blockchol *b, int p, double *y, const double *x) {
  const int *adr = b->m->tree_dofadr;
  const double *Lx = b->Lx;
  __m256d v = _mm256_set_pd(0.0, y[2], y[1], y[0]);
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
    const double *X = Lx + b->roff[e], *z = x + adr[b->order[b->rows[e]]];
    const __m256d x0 = _mm256_loadu_pd(X), x1 = _mm256_loadu_pd(X + 3); /* (lane 3: the next row's, unused) */
    const __m256d x2 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(X + 6)), _mm_load_sd(X + 8), 1);
    v = _mm256_sub_pd(v, _mm256_mul_pd(x0, _mm256_broadcast_sd(z)));
    v = _mm256_sub_pd(v, _mm256_mul_pd(x1, _mm256_broadcast_sd(z + 1)));
    v = _mm256_sub_pd(v, _mm256_mul_pd(x2, _mm256_broadcast_sd(z + 2)));
  }
  _mm_storeu_pd(y, _mm256_castpd256_pd128(v));
  _mm_store_sd(y + 2, _mm256_extractf128_pd(v, 1));
}
#else
int grit_blockchol_have_avx2(void) { return 0; }
void grit_blockchol_backward3_avx2(const grit_blockchol *b, int p, double *y, const double *x) {
  (void)b, (void)p, (void)y, (void)x;
}
int grit_blockchol_column6_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  (void)b, (void)p, (void)L, (void)inv;
  return 0;
}
void grit_blockchol_column3_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  (void)b, (void)p, (void)L, (void)inv;
}
void grit_blockchol_pair3_lead_avx2(grit_blockchol *b, int p, const double *L, const double *inv) {
  (void)b, (void)p, (void)L, (void)inv;
}
void grit_blockchol_pair3_avx2(grit_blockchol *b, int q, const double *L, const double *inv) {
  (void)b, (void)q, (void)L, (void)inv;
}
int grit_blockchol_column_r3_avx2(grit_blockchol *b, int p, int n, const double *L, const double *inv) {
  (void)b, (void)p, (void)n, (void)L, (void)inv;
  return 0;
}
#endif
