/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_sparse_rows.c — a big tree's sparse factor's many-column substitutions, rows in registers.
 *
 * blockchol_sparse.c's loops over nc columns held as rows ran one product at a time over a whole row
 * (y -= l x: y loaded and stored once per product, about five instructions per vector of four columns
 * and a loop's set-up per product). Here each row of the result is held in up to eight AVX2 registers
 * (32 columns) while all its products run, each product's load folded into its multiplication: two
 * instructions per vector. The forward substitution, by columns there (column j's multiple of row j
 * subtracted from the rows below), runs here by rows over the factor's row lists (row j less each
 * earlier column k's product, k ascending: the order in which the column loop reached it). See
 * blockchol_sparse_rows.h. */
#include "blockchol_sparse_rows.h"

#include <stddef.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>

#define ROWS_INLINE inline __attribute__((always_inline, target("avx2")))

/* Row y := (y - sum_e Lx[ent[e]] Y[src[e] stride]) * inv, e = e0 .. e1-1 in order (ent NULL: Lx[e]), over
 * NV vectors of four columns from y's column 0, the last one masked when MASKED (its lanes in mask).
 * FWD (a constant): the forward substitution: values Lx[ent[e]], a source row skipped where it is zero in
 * every column of the pass (nzv[src[e]] & bits == 0, bits: the pass's), and returns whether the result is
 * not zero; else Lx[e], none skipped, returns 0. */
static ROWS_INLINE unsigned row_cols(double *restrict y, const int *restrict src, const int *restrict ent,
                                     const double *restrict Lx, int e0, int e1, const double *restrict Y, int stride,
                                     __m256d inv, const unsigned *nzv, unsigned bits, const int FWD, const int NV,
                                     const int MASKED, __m256i mask) {
  __m256d a[8];
  for (int v = 0; v < NV; ++v)
    a[v] = MASKED && v == NV - 1 ? _mm256_maskload_pd(y + 4 * v, mask) : _mm256_loadu_pd(y + 4 * v);
  for (int e = e0; e < e1; ++e) {
    if (FWD && !(nzv[src[e]] & bits)) continue;
    const __m256d l = _mm256_broadcast_sd(Lx + (FWD ? ent[e] : e));
    const double *x = Y + (ptrdiff_t)src[e] * stride;
    for (int v = 0; v < NV; ++v)
      a[v] = _mm256_sub_pd(a[v], _mm256_mul_pd(l, MASKED && v == NV - 1 ? _mm256_maskload_pd(x + 4 * v, mask)
                                                                            : _mm256_loadu_pd(x + 4 * v)));
  }
  __m256d o = _mm256_setzero_pd(); /* the lanes' bits ORed: +-0 only where every lane is +-0 */
  for (int v = 0; v < NV; ++v) {
    a[v] = _mm256_mul_pd(a[v], inv);
    if (MASKED && v == NV - 1) _mm256_maskstore_pd(y + 4 * v, mask, a[v]);
    else _mm256_storeu_pd(y + 4 * v, a[v]);
    if (FWD) o = _mm256_or_pd(o, MASKED && v == NV - 1 ? _mm256_and_pd(a[v], _mm256_castsi256_pd(mask)) : a[v]);
  }
  return FWD && _mm256_movemask_pd(_mm256_cmp_pd(o, _mm256_setzero_pd(), _CMP_NEQ_UQ)) != 0;
}

/* row_cols over the nc columns: passes of 8, 4, 2 and 1 vectors (the last vector of the last pass masked
 * when nc is not a multiple of four), each with its vector count a constant (the row in registers).
 * Returns (FWD) a bit per pass where the row is not zero: bit v0 for the pass from vector v0 (every row
 * of a solve has the same passes). */
static ROWS_INLINE unsigned row_all(double *y, const int *src, const int *ent, const double *Lx, int e0, int e1,
                                    const double *Y, int stride, __m256d inv, const unsigned *nzv, const int FWD,
                                    int nc) {
  const int rem = nc & 3, nvec = (nc + 3) >> 2;
  const __m256i mask = _mm256_setr_epi64x(-(rem > 0), -(rem > 1), -(rem > 2), 0);
  int v0 = 0;
  unsigned nz = 0;
#define ROWS_PASS(NV)                                                                                        \
  if (nvec - v0 >= NV) {                                                                                     \
    const unsigned bits = 1u << v0; /* the pass's bit */                                                    \
    if (rem && v0 + NV == nvec)                                                                              \
      nz |= row_cols(y + 4 * v0, src, ent, Lx, e0, e1, Y + 4 * v0, stride, inv, nzv, bits, FWD, NV, 1, mask) << v0; \
    else                                                                                                     \
      nz |= row_cols(y + 4 * v0, src, ent, Lx, e0, e1, Y + 4 * v0, stride, inv, nzv, bits, FWD, NV, 0, mask) << v0; \
    v0 += NV;                                                                                                \
  }
  while (nvec - v0 >= 8) ROWS_PASS(8)
  ROWS_PASS(4)
  ROWS_PASS(2)
  ROWS_PASS(1)
#undef ROWS_PASS
  return nz;
}

/* The forward substitution skips the products of source rows that are zero over a pass's columns (nzv,
 * the rows' nonzero vectors, set as each row is finished): a derivative's right-hand side is zero over
 * the rows before the first that its dofs reach in the elimination order, and its solution stays zero
 * there (MuJoCo's flag: 46 % of the forward products over 32 columns were of zero rows; the dog's 29 %,
 * where the test costs about what it saves; halves of a pass tested apart cost more). Skipping
 * y - l 0 leaves y as it was unless y is -0 and l 0 is -0 (then -0, not +0): only a zero's sign can
 * differ from the loops', and only where the right-hand side holds a -0. */
static __attribute__((noinline, target("avx2"))) void solve_avx2(const grit_sparse_rows *f, double *Y, int stride,
                                                                int nc) {
  const int n = f->n, *perm = f->perm;
  unsigned *nzv = f->nzv;
  for (int j = 0; j < n; ++j) /* L z = P y by rows: row j less its earlier columns' products, then scaled */
    nzv[perm[j]] = row_all(Y + (ptrdiff_t)perm[j] * stride, f->ro, f->re, f->Lx, f->rp[j], f->rp[j + 1], Y, stride,
                           _mm256_set1_pd(f->inv[j]), nzv, 1, nc);
  for (int j = n - 1; j >= 0; --j) /* L^T w = z: row j less its column's products, then scaled */
    row_all(Y + (ptrdiff_t)perm[j] * stride, f->Lo, NULL, f->Lx, f->Lp[j], f->Lp[j + 1], Y, stride,
            _mm256_set1_pd(f->inv[j]), NULL, 0, nc);
}

/* The same substitutions with AVX-512's eight columns a vector and 32 registers: a row's 64 columns (the
 * whole chunk) held at once, so each entry's index, broadcast and loop step are paid once for the chunk,
 * not once per pass of 32 columns (the flag's 680-column solve: about a third of its instructions were
 * those). Each column's operations are solve_avx2's in its order (a product, then its subtraction; the
 * same bits): the forward substitution keeps solve_avx2's passes of columns (vectors of four from v0),
 * each pass's products skipped where its source row is zero over the pass (nzv's bits as solve_avx2's),
 * two passes of 32 columns in one sweep over the row's entries when nc > 60; the backward substitution,
 * with nothing skipped, runs over all nc columns at once. */
#define R512_INLINE inline __attribute__((always_inline, target("avx512f")))

/* Row y over NZ vectors of eight columns (the last masked to km when MASKED): forward (FWD), zmm 0..NA-1
 * form the pass of bit ba and zmm NA..NZ-1 (if any) the pass of bit bb, each pass's products skipped
 * where the source row is zero over it; returns the bits of the passes where the row is not zero. */
static R512_INLINE unsigned row512(double *restrict y, const int *restrict src, const int *restrict ent,
                                   const double *restrict Lx, int e0, int e1, const double *restrict Y, int stride,
                                   __m512d inv, const unsigned *nzv, unsigned ba, unsigned bb, const int FWD,
                                   const int NZ, const int NA, const int MASKED, __mmask8 km) {
#define R512_LOAD(p) (MASKED && v == NZ - 1 ? _mm512_maskz_loadu_pd(km, (p) + 8 * v) : _mm512_loadu_pd((p) + 8 * v))
  __m512d a[8];
  for (int v = 0; v < NZ; ++v) a[v] = R512_LOAD(y);
  for (int e = e0; e < e1; ++e) {
    const unsigned nz = FWD ? nzv[src[e]] : 0u;
    if (FWD && !(nz & (ba | bb))) continue;
    const __m512d l = _mm512_set1_pd(Lx[FWD ? ent[e] : e]);
    const double *x = Y + (ptrdiff_t)src[e] * stride;
    if (!FWD || NA == NZ || (nz & ba))
      for (int v = 0; v < NA; ++v) a[v] = _mm512_sub_pd(a[v], _mm512_mul_pd(l, R512_LOAD(x)));
    if (NA < NZ && (!FWD || (nz & bb)))
      for (int v = NA; v < NZ; ++v) a[v] = _mm512_sub_pd(a[v], _mm512_mul_pd(l, R512_LOAD(x)));
  }
#undef R512_LOAD
  __mmask8 na = 0, nb = 0; /* the passes' lanes that are not +-0 (a NaN counts) */
  for (int v = 0; v < NZ; ++v) {
    a[v] = _mm512_mul_pd(a[v], inv);
    const __mmask8 k = MASKED && v == NZ - 1 ? km : (__mmask8)0xff;
    _mm512_mask_storeu_pd(y + 8 * v, k, a[v]);
    if (FWD && v < NA) na |= _mm512_mask_cmp_pd_mask(k, a[v], _mm512_setzero_pd(), _CMP_NEQ_UQ);
    if (FWD && v >= NA) nb |= _mm512_mask_cmp_pd_mask(k, a[v], _mm512_setzero_pd(), _CMP_NEQ_UQ);
  }
  return FWD ? (na ? ba : 0u) | (nb ? bb : 0u) : 0u;
}

/* The backward substitution's row j over all nc columns (nc <= 64): NZ = ceil(nc / 8) a constant. */
static R512_INLINE void back512(double *y, const int *src, const double *Lx, int e0, int e1, const double *Y,
                                int stride, __m512d inv, int nc) {
  const int nz = (nc + 7) >> 3, r = nc & 7;
  const __mmask8 km = (__mmask8)(r ? (1u << r) - 1u : 0xffu);
  switch (nz) {
#define B512(N)                                                                                              \
  case N:                                                                                                    \
    if (r) (void)row512(y, src, NULL, Lx, e0, e1, Y, stride, inv, NULL, 0, 0, 0, N, N, 1, km);                \
    else (void)row512(y, src, NULL, Lx, e0, e1, Y, stride, inv, NULL, 0, 0, 0, N, N, 0, km);                  \
    break;
    B512(1) B512(2) B512(3) B512(4) B512(5) B512(6) B512(7) B512(8)
#undef B512
    default: break;
  }
}

/* The forward substitution's row j: solve_avx2's passes (8, 4, 2, 1 vectors of four columns from v0; the
 * last one's columns to nc), the first two in one sweep when both are of 8 vectors (nc > 60). */
static R512_INLINE unsigned fwd512(double *y, const int *src, const int *ent, const double *Lx, int e0, int e1,
                                   const double *Y, int stride, __m512d inv, const unsigned *nzv, int nc) {
  const int nvec = (nc + 3) >> 2;
  if (nvec == 16) { /* columns 0..31 (bit 0) and 32..nc-1 (bit 8) */
    const int r = nc - 56;
    if (r < 8)
      return row512(y, src, ent, Lx, e0, e1, Y, stride, inv, nzv, 1u, 1u << 8, 1, 8, 4, 1, (__mmask8)((1u << r) - 1u));
    return row512(y, src, ent, Lx, e0, e1, Y, stride, inv, nzv, 1u, 1u << 8, 1, 8, 4, 0, (__mmask8)0xff);
  }
  unsigned nz = 0;
  int v0 = 0;
#define F512(NV)                                                                                             \
  if (nvec - v0 >= NV) {                                                                                     \
    const int c = (nc - 4 * v0 < 4 * (NV) ? nc - 4 * v0 : 4 * (NV)), z = (c + 7) >> 3, r = c - 8 * (z - 1);   \
    const __mmask8 km = (__mmask8)((1u << r) - 1u);                                                          \
    double *yp = y + 4 * v0;                                                                                 \
    const double *Yp = Y + 4 * v0;                                                                           \
    const unsigned b = 1u << v0;                                                                             \
    if (z == 4) nz |= row512(yp, src, ent, Lx, e0, e1, Yp, stride, inv, nzv, b, 0, 1, 4, 4, r < 8, km);       \
    else if (z == 2) nz |= row512(yp, src, ent, Lx, e0, e1, Yp, stride, inv, nzv, b, 0, 1, 2, 2, r < 8, km);  \
    else nz |= row512(yp, src, ent, Lx, e0, e1, Yp, stride, inv, nzv, b, 0, 1, 1, 1, r < 8, km);              \
    v0 += NV;                                                                                                \
  }
  while (nvec - v0 >= 8) F512(8)
  F512(4)
  F512(2)
  F512(1)
#undef F512
  return nz;
}

static __attribute__((noinline, target("avx512f"))) void solve_avx512(const grit_sparse_rows *f, double *Y,
                                                                    int stride, int nc) {
  const int n = f->n, *perm = f->perm;
  unsigned *nzv = f->nzv;
  for (int j = 0; j < n; ++j)
    nzv[perm[j]] = fwd512(Y + (ptrdiff_t)perm[j] * stride, f->ro, f->re, f->Lx, f->rp[j], f->rp[j + 1], Y, stride,
                          _mm512_set1_pd(f->inv[j]), nzv, nc);
  for (int j = n - 1; j >= 0; --j)
    back512(Y + (ptrdiff_t)perm[j] * stride, f->Lo, f->Lx, f->Lp[j], f->Lp[j + 1], Y, stride,
            _mm512_set1_pd(f->inv[j]), nc);
}

int grit_sparse_rows_solve(const grit_sparse_rows *f, double *Y, int stride, int nc) {
  return grit_sparse_rows_solve_isa(f, Y, stride, nc, 1);
}

int grit_sparse_rows_solve_isa(const grit_sparse_rows *f, double *Y, int stride, int nc, int avx512) {
  if (avx512 && __builtin_cpu_supports("avx512f")) {
    solve_avx512(f, Y, stride, nc);
    return 1;
  }
  if (!__builtin_cpu_supports("avx2")) return 0;
  solve_avx2(f, Y, stride, nc);
  return 1;
}

/* The Woodbury correction's two long loops over NV vectors of four columns from column 0 (the last one
 * masked when MASKED): DOT, t := sum_i v[i] Y[i stride] over the rows with v[i] != 0, i ascending, from +0
 * (t in registers); else y := y - sum_r w[r wstride] t[r tstride], r = 0 .. k-1 (y in registers). */
static ROWS_INLINE void lowrank_cols(const double *v, int n, double *Y, int stride, double *t, int tstride, int k,
                                     const int DOT, const int NV, const int MASKED, __m256i mask) {
#define LR_LOAD(p) (MASKED && w == NV - 1 ? _mm256_maskload_pd((p) + 4 * w, mask) : _mm256_loadu_pd((p) + 4 * w))
#define LR_STORE(p, x)                                                                                       \
  if (MASKED && w == NV - 1) _mm256_maskstore_pd((p) + 4 * w, mask, x);                                     \
  else _mm256_storeu_pd((p) + 4 * w, x)
  __m256d a[8];
  if (DOT) {
    for (int w = 0; w < NV; ++w) a[w] = _mm256_setzero_pd();
    for (int i = 0; i < n; ++i) {
      if (v[i] == 0.0) continue;
      const __m256d l = _mm256_broadcast_sd(v + i);
      const double *yi = Y + (ptrdiff_t)i * stride;
      for (int w = 0; w < NV; ++w) a[w] = _mm256_add_pd(a[w], _mm256_mul_pd(l, LR_LOAD(yi)));
    }
    for (int w = 0; w < NV; ++w) {
      LR_STORE(t, a[w]);
    }
  } else {
    for (int i = 0; i < n; ++i) {
      double *yi = Y + (ptrdiff_t)i * stride;
      for (int w = 0; w < NV; ++w) a[w] = LR_LOAD(yi);
      for (int r = 0; r < k; ++r) {
        const __m256d l = _mm256_broadcast_sd(v + (ptrdiff_t)r * n + i);
        for (int w = 0; w < NV; ++w) a[w] = _mm256_sub_pd(a[w], _mm256_mul_pd(l, LR_LOAD(t + (ptrdiff_t)r * tstride)));
      }
      for (int w = 0; w < NV; ++w) {
        LR_STORE(yi, a[w]);
      }
    }
  }
#undef LR_LOAD
#undef LR_STORE
}

static __attribute__((noinline, target("avx2"))) void lowrank_avx2(const double *v, int n, double *Y, int stride,
                                                                  double *t, int tstride, int k, int dot, int nc) {
  const int rem = nc & 3, nvec = (nc + 3) >> 2;
  const __m256i mask = _mm256_setr_epi64x(-(rem > 0), -(rem > 1), -(rem > 2), 0);
  int v0 = 0;
#define LR_PASS(NV)                                                                                          \
  if (nvec - v0 >= NV) {                                                                                     \
    double *yp = Y + 4 * v0, *tp = t + 4 * v0;                                                     \
    const int m_ = rem && v0 + NV == nvec;                                                                   \
    if (dot && m_) lowrank_cols(v, n, yp, stride, tp, tstride, k, 1, NV, 1, mask);                           \
    else if (dot) lowrank_cols(v, n, yp, stride, tp, tstride, k, 1, NV, 0, mask);                            \
    else if (m_) lowrank_cols(v, n, yp, stride, tp, tstride, k, 0, NV, 1, mask);                             \
    else lowrank_cols(v, n, yp, stride, tp, tstride, k, 0, NV, 0, mask);                                     \
    v0 += NV;                                                                                                \
  }
  while (nvec - v0 >= 8) LR_PASS(8)
  LR_PASS(4)
  LR_PASS(2)
  LR_PASS(1)
#undef LR_PASS
}

int grit_sparse_rows_lowrank_dot(const double *v, int n, const double *Y, int stride, int nc, double *t) {
  if (!__builtin_cpu_supports("avx2")) return 0;
  lowrank_avx2(v, n, (double *)Y, stride, t, 0, 0, 1, nc); /* (Y only read) */
  return 1;
}

int grit_sparse_rows_lowrank_sub(const double *W, int k, int n, const double *t, int tstride, double *Y, int stride,
                                 int nc) {
  if (!__builtin_cpu_supports("avx2")) return 0;
  lowrank_avx2(W, n, Y, stride, (double *)t, tstride, k, 0, nc); /* (t only read) */
  return 1;
}
#else
int grit_sparse_rows_solve(const grit_sparse_rows *f, double *Y, int stride, int nc) {
  (void)f, (void)Y, (void)stride, (void)nc;
  return 0;
}

int grit_sparse_rows_solve_isa(const grit_sparse_rows *f, double *Y, int stride, int nc, int avx512) {
  (void)f, (void)Y, (void)stride, (void)nc, (void)avx512;
  return 0;
}

int grit_sparse_rows_lowrank_dot(const double *v, int n, const double *Y, int stride, int nc, double *t) {
  (void)v, (void)n, (void)Y, (void)stride, (void)nc, (void)t;
  return 0;
}

int grit_sparse_rows_lowrank_sub(const double *W, int k, int n, const double *t, int tstride, double *Y, int stride,
                                 int nc) {
  (void)W, (void)k, (void)n, (void)t, (void)tstride, (void)Y, (void)stride, (void)nc;
  return 0;
}
#endif
