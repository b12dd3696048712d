/* SPDX-License-Identifier: Apache-2.0 */
/* hessian_columns.c — the nonzero columns of a constraint's rows of J on one tree: their indices for the
 * assembly of a big tree's block (hessian_assemble.c) and their span for the solver's products
 * (grit_hessian_jrow_span). J's rows are dense over the tree; a row touches the dofs on its bodies' paths
 * to the root only. See hessian.h. */
#include "hessian.h"
#include "hessian_internal.h"
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#endif

static inline __attribute__((always_inline)) int nonzero_columns(const double *J, int dim, int n, int *idx) {
  int nc = 0;
  for (int c = 0; c < n; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J[r * n + c] != 0.0;
    idx[nc] = c;
    nc += nz;
  }
  return nc;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* The mask of J's nonzero entries among columns c .. c+3 over its dim rows (-0 is zero, NaN is not). */
static inline __attribute__((always_inline, target("avx2"))) __m256d nz_cols4(const double *J, int dim, int n, int c) {
  const __m256d zero = _mm256_setzero_pd();
  __m256d nz = _mm256_cmp_pd(_mm256_loadu_pd(J + c), zero, _CMP_NEQ_UQ);
  for (int r = 1; r < dim; ++r) nz = _mm256_or_pd(nz, _mm256_cmp_pd(_mm256_loadu_pd(J + r * n + c), zero, _CMP_NEQ_UQ));
  return nz;
}

/* The 16-bit mask of the nonzero columns c .. c+15 (bit k: column c+k). */
static inline __attribute__((always_inline, target("avx2"))) unsigned nz_cols16(const double *J, int dim, int n, int c) {
  return (unsigned)_mm256_movemask_pd(nz_cols4(J, dim, n, c)) | (unsigned)_mm256_movemask_pd(nz_cols4(J, dim, n, c + 4)) << 4 |
         (unsigned)_mm256_movemask_pd(nz_cols4(J, dim, n, c + 8)) << 8 |
         (unsigned)_mm256_movemask_pd(nz_cols4(J, dim, n, c + 12)) << 12;
}

/* nonzero_columns four columns at a time: a mask of the nonzero ones, their indices appended in order;
 * sixteen columns skipped at once when all are zero (an equality row of the softbox has one or two of
 * its tree's 224: the four-column loop was 6 % of its step). dim a constant where inlined. */
static inline __attribute__((always_inline, target("avx2"))) int nonzero_columns_in(const double *J, int dim, int n,
                                                                                   int *idx) {
  int nc = 0, c = 0;
  for (; c + 16 <= n; c += 16)
    for (unsigned m = nz_cols16(J, dim, n, c); m; m &= m - 1) idx[nc++] = c + __builtin_ctz(m);
  for (; c + 4 <= n; c += 4)
    for (unsigned m = (unsigned)_mm256_movemask_pd(nz_cols4(J, dim, n, c)); m; m &= m - 1) idx[nc++] = c + __builtin_ctz(m);
  for (; c < n; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J[r * n + c] != 0.0;
    idx[nc] = c;
    nc += nz;
  }
  return nc;
}
static __attribute__((target("avx2"))) int nonzero_columns_avx2(const double *J, int dim, int n, int *idx) {
  return dim == 1 ? nonzero_columns_in(J, 1, n, idx) : dim == 3 ? nonzero_columns_in(J, 3, n, idx)
                                                                : nonzero_columns_in(J, dim, n, idx);
}
#endif

/* grit_hessian_jrow_span's plain scans: column by column from both ends. */
static inline int column_zero(const double *J, int dim, int n, int j) {
  for (int r = 0; r < dim; ++r)
    if (J[r * n + j] != 0.0) return 0;
  return 1;
}
static void span_plain(const double *J, int dim, int n, int *lo, int *hi) {
  int a = 0, b = n;
  while (a < n && column_zero(J, dim, n, a)) ++a;
  while (b > a && column_zero(J, dim, n, b - 1)) --b;
  *lo = a, *hi = b;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* The mask of the nonzero columns c .. c+3 (any of the dim rows; -0 is zero, NaN is not). */
static inline __attribute__((always_inline, target("avx2"))) unsigned nz4(const double *J, int dim, int n, int c) {
  const __m256d zero = _mm256_setzero_pd();
  __m256d nz = _mm256_cmp_pd(_mm256_loadu_pd(J + c), zero, _CMP_NEQ_UQ);
  for (int r = 1; r < dim; ++r) nz = _mm256_or_pd(nz, _mm256_cmp_pd(_mm256_loadu_pd(J + r * n + c), zero, _CMP_NEQ_UQ));
  return (unsigned)_mm256_movemask_pd(nz);
}
/* span_plain sixteen, then four columns at a time from both ends (the scans were 16 % of the softbox's
 * step: its tendon equalities join two dofs far apart in its tree of 224). dim a constant where inlined. */
static inline __attribute__((always_inline, target("avx2"))) void span_in(const double *J, int dim, int n, int *lo,
                                                                         int *hi) {
  int a = 0;
  for (unsigned m; a + 16 <= n; a += 16)
    if ((m = nz_cols16(J, dim, n, a)) != 0) {
      a += __builtin_ctz(m);
      goto found;
    }
  for (unsigned m; a + 4 <= n; a += 4)
    if ((m = nz4(J, dim, n, a)) != 0) {
      a += __builtin_ctz(m);
      goto found;
    }
  while (a < n && column_zero(J, dim, n, a)) ++a;
  if (a == n) {
    *lo = *hi = n;
    return;
  }
found:;
  int b = n; /* column a is nonzero: the last one is at a or after */
  for (unsigned m; b - 16 >= a; b -= 16)
    if ((m = nz_cols16(J, dim, n, b - 16)) != 0) {
      *lo = a, *hi = b - 16 + 32 - __builtin_clz(m);
      return;
    }
  for (unsigned m; b - 4 >= a; b -= 4)
    if ((m = nz4(J, dim, n, b - 4)) != 0) {
      *lo = a, *hi = b - 4 + 32 - __builtin_clz(m);
      return;
    }
  while (b > a && column_zero(J, dim, n, b - 1)) --b;
  *lo = a, *hi = b;
}
static __attribute__((target("avx2"))) void span_avx2(const double *J, int dim, int n, int *lo, int *hi) {
  if (dim == 1) span_in(J, 1, n, lo, hi);
  else if (dim == 3) span_in(J, 3, n, lo, hi);
  else span_in(J, dim, n, lo, hi);
}
#endif

void grit_hessian_jrow_span(const grit_hessian *h, const double *J, int dim, int n, int *lo, int *hi) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (!h->no_span_avx2 && __builtin_cpu_supports("avx2")) {
    span_avx2(J, dim, n, lo, hi);
    return;
  }
#else
  (void)h; /* (GRIT_NO_AVX2: the plain scan only) */
#endif
  span_plain(J, dim, n, lo, hi);
}

void grit_hessian_span_kernel(grit_hessian *h, int allow) { h->no_span_avx2 = !allow; }

int grit_hessian_nonzero_columns(const double *J, int dim, int n, int *idx) {
  /* (a tendon's 1 row, a contact's 3 as constants or with AVX2: the scan over the softbox's 224 columns
   * was 5 % of its step with the rows' loop variable) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) return nonzero_columns_avx2(J, dim, n, idx);
#endif
  return dim == 1 ? nonzero_columns(J, 1, n, idx) : dim == 3 ? nonzero_columns(J, 3, n, idx)
                                                             : nonzero_columns(J, dim, n, idx);
}
