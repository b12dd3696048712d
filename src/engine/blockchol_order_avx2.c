/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_order_avx2.c — the minimum-degree order's row merge (blockchol.c, merge_row) four words at a
 * time with AVX2: a pile's rows span many words (1000 particles: 16) and most words bring no new
 * neighbour, so a whole row's sweep by 4-word tests costs less than the list of rk's nonzero words
 * one by one (that loop was 40 % of the analysis's own instructions on particle.xml). Integers only:
 * the same rows and degrees. blockchol.c calls it only where the processor has AVX2
 * (grit_blockchol_have_avx2). */
#include "blockchol_internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>

__attribute__((target("avx2"))) int grit_blockchol_merge_words_avx2(uint64_t *ru, const uint64_t *rk, int W,
                                                                   const int *dim) {
  int d = 0, w = 0;
  for (; w + 4 <= W; w += 4) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)(rk + w)), u = _mm256_loadu_si256((const __m256i *)(ru + w));
    const __m256i add = _mm256_andnot_si256(u, a); /* rk's bits that ru lacks */
    if (_mm256_testz_si256(add, add)) continue;
    _mm256_storeu_si256((__m256i *)(ru + w), _mm256_or_si256(u, a));
    uint64_t x[4];
    _mm256_storeu_si256((__m256i *)x, add);
    for (int j = 0; j < 4; ++j)
      for (uint64_t y = x[j]; y; y &= y - 1) d += dim[64 * (w + j) + __builtin_ctzll(y)];
  }
  for (; w < W; ++w) {
    const uint64_t add = rk[w] & ~ru[w];
    ru[w] |= add;
    for (uint64_t y = add; y; y &= y - 1) d += dim[64 * w + __builtin_ctzll(y)];
  }
  return d;
}
#else
int grit_blockchol_merge_words_avx2(uint64_t *ru, const uint64_t *rk, int W, const int *dim) {
  int d = 0;
  for (int w = 0; w < W; ++w) {
    const uint64_t add = rk[w] & ~ru[w];
    ru[w] |= add;
    for (uint64_t y = add; y; y &= y - 1) d += dim[64 * w + __builtin_ctzll(y)];
  }
  return d;
}
#endif
