/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rnea_lanes.c — the analytic partials' columns into the passes' dual lanes
 * (grit_rnea_add_columns, derivatives_rnea.h): the position and velocity passes seed lane l with a
 * tree's column c0 + l, and each row takes the seeded columns of derivatives_rnea.c's DQ, DV (less the
 * dual A's where given) in place of the dual mass matrix and Newton-Euler pass. Split from
 * derivatives_rnea.c (the recursions), the same operations. */
#include <stdint.h>
#include <string.h>

#include "derivatives_rnea.h"

/* As derivatives_rnea.c: an AVX2 build chosen at run time, the same operations (GRIT_NO_AVX2: the
 * baseline only). */
#if RN_AVX2
#include <immintrin.h>
#define RN_AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))
#endif

/* Whether any of x's partials is nonzero (or NaN): the bits of the eight, sign dropped, or-ed. */
static RN_INLINE int any_partial(const grit_dual *x) {
  uint64_t b[GRIT_DUAL_N], acc = 0;
  memcpy(b, x->d, sizeof b);
  for (int l = 0; l < GRIT_DUAL_N; ++l) acc |= b[l];
  return (acc << 1) != 0;
}

/* res_i.d[l] += s * (D_ic - A_ic) over the seeds s = seed[c].d[l] != 0, A NULL: zero. The passes seed
 * lane l with column c0 + l (derivatives.c's run_pass): then each row takes its lanes at once from a
 * contiguous piece of D's row; any other seeding, column by column. Each entry gets the same one
 * product and sum either way (a lane has one seeded column in the first case). */
static RN_INLINE void add_columns(int n, const grit_dual *seed, const double *D, const double *A, grit_dual *res,
                                  int by_rows) {
  int col[GRIT_DUAL_N], lanes = 0, one = 1;
  for (int l = 0; l < GRIT_DUAL_N; ++l) col[l] = -1;
  for (int c = 0; c < n; ++c) {
    if (!any_partial(&seed[c])) continue;
    for (int l = 0; l < GRIT_DUAL_N; ++l) {
      if (seed[c].d[l] == 0.0) continue;
      one &= col[l] < 0; /* a second column in lane l */
      col[l] = c;
    }
  }
  while (lanes < GRIT_DUAL_N && col[lanes] >= 0) ++lanes;
  for (int l = 0; l < GRIT_DUAL_N; ++l) one &= l < lanes ? col[l] == col[0] + l : col[l] < 0;
  if (!lanes) return;
  if (!one || !by_rows) {
    for (int c = 0; c < n; ++c)
      for (int l = 0; l < GRIT_DUAL_N; ++l) {
        const double s = seed[c].d[l];
        if (s == 0.0) continue;
        for (int i = 0; i < n; ++i) res[i].d[l] += s * (A ? D[i * n + c] - A[i * n + c] : D[i * n + c]);
      }
    return;
  }
  const int c0 = col[0];
  double s[GRIT_DUAL_N];
  for (int l = 0; l < lanes; ++l) s[l] = seed[c0 + l].d[l];
  if (lanes < GRIT_DUAL_N) {
    for (int i = 0; i < n; ++i)
      for (int l = 0; l < lanes; ++l) res[i].d[l] += s[l] * (A ? D[i * n + c0 + l] - A[i * n + c0 + l] : D[i * n + c0 + l]);
    return;
  }
  /* every lane: whole rows through a local copy (no aliasing to rule out); D - 0 is D, bit for bit */
  static const double zero[GRIT_DUAL_N];
  for (int i = 0; i < n; ++i) {
    const double *Di = D + i * n + c0, *Ai = A ? A + i * n + c0 : zero;
    double t[GRIT_DUAL_N];
    for (int l = 0; l < GRIT_DUAL_N; ++l) t[l] = res[i].d[l] + s[l] * (Di[l] - Ai[l]);
    memcpy(res[i].d, t, sizeof t);
  }
}

static RN_NOINLINE void add_columns_base(int n, const grit_dual *seed, const double *D, const double *A,
                                         grit_dual *res, int by_rows) {
  add_columns(n, seed, D, A, res, by_rows);
}

#if RN_AVX2 && GRIT_DUAL_N == 8
/* The seeded lanes of x as bits: lane l's bit set where x.d[l] != 0 (NaN included), as add_columns'
 * tests (any_partial drops the sign of a zero; a zero of either sign is no seed). */
RN_AVX2_INLINE unsigned seed_mask(const grit_dual *x) {
  const __m256d z = _mm256_setzero_pd();
  const unsigned lo = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(x->d), z, _CMP_NEQ_UQ));
  const unsigned hi = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(x->d + 4), z, _CMP_NEQ_UQ));
  return lo | hi << 4;
}

/* The lanes of four (mask m) of t = res + s (D - A) (A NULL: res + s D), the other lanes untouched: the
 * entries' operations of add_columns' loop over the lanes, the masked lanes neither read nor written. */
RN_AVX2_INLINE void rows_part(double *res, const double *D, const double *A, __m256d s, __m256i m) {
  const __m256d d = _mm256_maskload_pd(D, m);
  const __m256d x = A ? _mm256_sub_pd(d, _mm256_maskload_pd(A, m)) : d;
  _mm256_maskstore_pd(res, m, _mm256_add_pd(_mm256_maskload_pd(res, m), _mm256_mul_pd(s, x)));
}

/* add_columns with AVX2: the seeds' lanes found by two comparisons per column (not eight tests and an
 * or of eight), and a pass that seeds fewer than eight lanes (a tree's last columns) updates each row's
 * seeded lanes by masked vectors instead of one at a time. Each entry's operations as add_columns'. */
static RN_NOINLINE __attribute__((target("avx2"))) void add_columns_avx2(int n, const grit_dual *seed,
                                                                         const double *D, const double *A,
                                                                         grit_dual *res) {
  int col[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, lanes = 0, one = 1;
  unsigned seen = 0;
  for (int c = 0; c < n; ++c) {
    const unsigned mk = seed_mask(&seed[c]);
    if (!mk) continue;
    one &= !(mk & seen); /* a second column in one of these lanes */
    seen |= mk;
    for (unsigned b = mk; b; b &= b - 1) col[__builtin_ctz(b)] = c;
  }
  while (lanes < 8 && col[lanes] >= 0) ++lanes;
  for (int l = 0; l < 8; ++l) one &= l < lanes ? col[l] == col[0] + l : col[l] < 0;
  if (!lanes) return;
  if (!one) { /* column by column: add_columns' own path */
    add_columns(n, seed, D, A, res, 1);
    return;
  }
  const int c0 = col[0];
  double sv[8] = {0};
  for (int l = 0; l < lanes; ++l) sv[l] = seed[c0 + l].d[l];
  const __m256d s0 = _mm256_loadu_pd(sv), s1 = _mm256_loadu_pd(sv + 4);
  if (lanes == 8) { /* every lane: add_columns' whole rows, D - 0 for A NULL (D, bit for bit) */
    for (int i = 0; i < n; ++i) {
      const double *Di = D + i * n + c0;
      __m256d x0 = _mm256_loadu_pd(Di), x1 = _mm256_loadu_pd(Di + 4);
      if (A) x0 = _mm256_sub_pd(x0, _mm256_loadu_pd(A + i * n + c0)), x1 = _mm256_sub_pd(x1, _mm256_loadu_pd(A + i * n + c0 + 4));
      else x0 = _mm256_sub_pd(x0, _mm256_setzero_pd()), x1 = _mm256_sub_pd(x1, _mm256_setzero_pd());
      _mm256_storeu_pd(res[i].d, _mm256_add_pd(_mm256_loadu_pd(res[i].d), _mm256_mul_pd(s0, x0)));
      _mm256_storeu_pd(res[i].d + 4, _mm256_add_pd(_mm256_loadu_pd(res[i].d + 4), _mm256_mul_pd(s1, x1)));
    }
    return;
  }
  __m256i m0, m1;
  {
    long long b[8];
    for (int l = 0; l < 8; ++l) b[l] = l < lanes ? -1 : 0;
    m0 = _mm256_loadu_si256((const __m256i *)b), m1 = _mm256_loadu_si256((const __m256i *)(b + 4));
  }
  for (int i = 0; i < n; ++i) {
    const double *Di = D + i * n + c0, *Ai = A ? A + i * n + c0 : NULL;
    rows_part(res[i].d, Di, Ai, s0, m0);
    if (lanes > 4) rows_part(res[i].d + 4, Di + 4, Ai ? Ai + 4 : NULL, s1, m1);
  }
}
#elif RN_AVX2
static RN_NOINLINE __attribute__((target("avx2"))) void add_columns_avx2(int n, const grit_dual *seed,
                                                                         const double *D, const double *A,
                                                                         grit_dual *res) {
  add_columns(n, seed, D, A, res, 1);
}
#endif

void grit_rnea_add_columns(const grit_rnea *r, int n, const grit_dual *seed, const double *D, const double *A,
                           grit_dual *res) {
#if RN_AVX2
  if (!r->no_simd && __builtin_cpu_supports("avx2")) {
    add_columns_avx2(n, seed, D, A, res);
    return;
  }
#endif
  add_columns_base(n, seed, D, A, res, !r->no_simd);
}
