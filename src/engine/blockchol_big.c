/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_big.c — the block Cholesky's factorization of a large diagonal block (a composite's tree of
 * hundreds of dofs), the same bits as chol_block's loops (blockchol.c) at several times their speed.
 *
 * chol_block computes entry (i, j) of L, row-major lower, as s = A(i, j) - L(i, 0) L(j, 0) - ... -
 * L(i, j-1) L(j, j-1), in that order, then s / L(j, j) as s times the reciprocal pivot: a dot product per
 * entry, one long dependent chain that neither the compiler (no reassociation) nor the processor
 * overlaps (2.5 GFLOP/s on the flag's tree of 340). Here the block is first mirrored into its upper
 * triangle, where column j of L is contiguous (buffer row j: entry L(i, j) at j n + i), and factored
 * there left-looking by columns, four at a time: the four columns' entries in eight rows are held in
 * registers while the finished columns k < j0 stream past (each entry still subtracts its products in
 * increasing k), then the block's own columns k = j0 .. j-1 one after the other, the pivot and the
 * scaling. Every entry gets the same operations in the same order as in chol_block: the same bits (no
 * fused multiply-adds: -ffp-contract=off, and the AVX2 target does not include FMA). L is finally
 * mirrored back into the lower triangle; the upper triangle keeps L^T (nothing else reads it; the next
 * factorization copies the block whole). The rows above a column's diagonal in its group of four are
 * computed too (a whole vector of rows) into the lower triangle's places, which the last mirroring
 * overwrites. */
#include "blockchol.h"
#include "blockchol_internal.h"

#include <math.h>
#include <stddef.h>

/* Tiles of this many rows and columns for the mirrorings (the strided side stays in cache). */
#define TILE 16

/* to_upper: A(i, j), i > j, from the lower triangle into the upper (buffer (j, i)); else back. */
static void mirror(double *L, int n, int to_upper) {
  for (int i0 = 0; i0 < n; i0 += TILE)
    for (int j0 = 0; j0 <= i0; j0 += TILE) {
      const int i1 = i0 + TILE < n ? i0 + TILE : n, j1 = j0 + TILE < n ? j0 + TILE : n;
      for (int i = i0; i < i1; ++i)
        for (int j = j0; j < j1 && j < i; ++j) {
          if (to_upper) L[(size_t)j * n + i] = L[(size_t)i * n + j];
          else L[(size_t)i * n + j] = L[(size_t)j * n + i];
        }
    }
}

/* Columns j0 .. j0+jb-1 (column j at C + j n), rows r0 .. n-1: the products of the finished columns
 * k < j0 subtracted in increasing k. Plain loops (the baseline build). */
static void update_plain(double *C, int n, int j0, int jb, int r0) {
  for (int jj = 0; jj < jb; ++jj) {
    double *cj = C + (size_t)(j0 + jj) * n;
    for (int k = 0; k < j0; ++k) {
      const double *ck = C + (size_t)k * n;
      const double l = ck[j0 + jj];
      for (int i = r0; i < n; ++i) cj[i] -= l * ck[i];
    }
  }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))

/* update_plain for four columns with AVX2: eight rows of the four columns in registers over all k. */
static AVX2 void update4_avx2(double *C, int n, int j0, int r0) {
  double *c0 = C + (size_t)j0 * n, *c1 = c0 + n, *c2 = c1 + n, *c3 = c2 + n;
  int i = r0;
  for (; i + 8 <= n; i += 8) {
    __m256d a0 = _mm256_loadu_pd(c0 + i), b0 = _mm256_loadu_pd(c0 + i + 4);
    __m256d a1 = _mm256_loadu_pd(c1 + i), b1 = _mm256_loadu_pd(c1 + i + 4);
    __m256d a2 = _mm256_loadu_pd(c2 + i), b2 = _mm256_loadu_pd(c2 + i + 4);
    __m256d a3 = _mm256_loadu_pd(c3 + i), b3 = _mm256_loadu_pd(c3 + i + 4);
    const double *ck = C;
    for (int k = 0; k < j0; ++k, ck += n) {
      const __m256d x = _mm256_loadu_pd(ck + i), y = _mm256_loadu_pd(ck + i + 4);
      const __m256d l0 = _mm256_broadcast_sd(ck + j0), l1 = _mm256_broadcast_sd(ck + j0 + 1);
      const __m256d l2 = _mm256_broadcast_sd(ck + j0 + 2), l3 = _mm256_broadcast_sd(ck + j0 + 3);
      a0 = _mm256_sub_pd(a0, _mm256_mul_pd(l0, x)), b0 = _mm256_sub_pd(b0, _mm256_mul_pd(l0, y));
      a1 = _mm256_sub_pd(a1, _mm256_mul_pd(l1, x)), b1 = _mm256_sub_pd(b1, _mm256_mul_pd(l1, y));
      a2 = _mm256_sub_pd(a2, _mm256_mul_pd(l2, x)), b2 = _mm256_sub_pd(b2, _mm256_mul_pd(l2, y));
      a3 = _mm256_sub_pd(a3, _mm256_mul_pd(l3, x)), b3 = _mm256_sub_pd(b3, _mm256_mul_pd(l3, y));
    }
    _mm256_storeu_pd(c0 + i, a0), _mm256_storeu_pd(c0 + i + 4, b0);
    _mm256_storeu_pd(c1 + i, a1), _mm256_storeu_pd(c1 + i + 4, b1);
    _mm256_storeu_pd(c2 + i, a2), _mm256_storeu_pd(c2 + i + 4, b2);
    _mm256_storeu_pd(c3 + i, a3), _mm256_storeu_pd(c3 + i + 4, b3);
  }
  for (; i + 4 <= n; i += 4) {
    __m256d a0 = _mm256_loadu_pd(c0 + i), a1 = _mm256_loadu_pd(c1 + i);
    __m256d a2 = _mm256_loadu_pd(c2 + i), a3 = _mm256_loadu_pd(c3 + i);
    const double *ck = C;
    for (int k = 0; k < j0; ++k, ck += n) {
      const __m256d x = _mm256_loadu_pd(ck + i);
      a0 = _mm256_sub_pd(a0, _mm256_mul_pd(_mm256_broadcast_sd(ck + j0), x));
      a1 = _mm256_sub_pd(a1, _mm256_mul_pd(_mm256_broadcast_sd(ck + j0 + 1), x));
      a2 = _mm256_sub_pd(a2, _mm256_mul_pd(_mm256_broadcast_sd(ck + j0 + 2), x));
      a3 = _mm256_sub_pd(a3, _mm256_mul_pd(_mm256_broadcast_sd(ck + j0 + 3), x));
    }
    _mm256_storeu_pd(c0 + i, a0), _mm256_storeu_pd(c1 + i, a1);
    _mm256_storeu_pd(c2 + i, a2), _mm256_storeu_pd(c3 + i, a3);
  }
  if (i < n) update_plain(C, n, j0, 4, i);
}
#endif

/* Column j's products of the columns k = j0 .. j-1 of its group, then its pivot and scaling (rows j ..
 * n-1). Returns 0 if the pivot is not positive and finite. */
static int finish_column(double *C, int n, int j0, int j, double *rinv) {
  double *cj = C + (size_t)j * n;
  for (int k = j0; k < j; ++k) {
    const double *ck = C + (size_t)k * n;
    const double l = ck[j];
    for (int i = j; i < n; ++i) cj[i] -= l * ck[i];
  }
  const double d = cj[j];
  if (!(d > 0.0) || !isfinite(d)) return 0;
  const double r = sqrt(d), inv = 1.0 / r;
  cj[j] = r;
  rinv[j] = inv;
  for (int i = j + 1; i < n; ++i) cj[i] *= inv;
  return 1;
}

int grit_blockchol_chol_big(double *L, int n, double *rinv, int avx2) {
  (void)avx2;
  mirror(L, n, 1);
  for (int j0 = 0; j0 < n; j0 += 4) {
    const int jb = n - j0 < 4 ? n - j0 : 4;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
    if (avx2 && jb == 4) update4_avx2(L, n, j0, j0);
    else
#endif
      update_plain(L, n, j0, jb, j0);
    for (int j = j0; j < j0 + jb; ++j)
      if (!finish_column(L, n, j0, j, rinv)) return j;
  }
  mirror(L, n, 0);
  return -1;
}
