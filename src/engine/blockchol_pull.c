/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_pull.c — the block Cholesky's many-column substitutions row by row ("pull"): each row of
 * the transposed right-hand sides (b->T, RHS_CHUNK columns a row) held in registers while every
 * product that updates it runs, loaded and stored once, where blockchol_many.c's substitutions load
 * and store it once per block (per source position in the forward sweep, per block below in the
 * backward one). With particles' 3 x 3 blocks each block gives a row only three products, so those
 * loads and stores were a quarter of the kernels' instructions.
 *
 * The same operations on each entry in the same order (the same bits; no fused multiply-adds):
 *  - forward, L y = b: row r of position t less, for each earlier position p with a block (t, p)
 *    (ascending p, as the column-by-column sweep reaches them), its products X[r][k] y_p[k] in k
 *    order; then, unless all of t's rows are zero (the sweep's skip), the diagonal block's
 *    substitution. A position whose rows were zero subtracts nothing from later rows, as before;
 *  - backward, L^T x = y: row j of position p less, for each block below it (ascending rows), its
 *    products X[r][j] x_r in r order, then the diagonal block's rows j+1 .. n-1, then the scaling:
 *    one load and one store for the whole row (the sweep did those three steps with one each).
 * The row lists of blocks (b->rptr, rsrc, rblk) are built after an analysis (grit_blockchol_block_rows).
 * Parts with a 6-dof tree keep blockchol_many.c's sweeps (its free bodies' kernels; PULLED there). */
#include "blockchol.h"
#include "blockchol_internal.h"
#include "treechol.h"

void grit_blockchol_pull(grit_blockchol *b, int allow) { b->no_pull = !allow; }
void grit_blockchol_runs(grit_blockchol *b, int allow) { b->no_runs = !allow; }

static void part_runs(grit_blockchol *b);

/* Row lists of L's off-diagonal blocks: position t's blocks (t, p), p < t, ascending p, as
 * (rsrc: p, rblk: the block's offset in Lx) from rptr[t] to rptr[t+1]-1. The arrays hold
 * colptr[nt] entries (the analysis grows them). */
void grit_blockchol_block_rows(grit_blockchol *b) {
  const int nt = b->nt;
  for (int t = 0; t <= nt; ++t) b->rptr[t] = 0;
  for (int e = 0; e < b->colptr[nt]; ++e) b->rptr[b->rows[e] + 1]++;
  for (int t = 0; t < nt; ++t) b->rptr[t + 1] += b->rptr[t];
  for (int t = 0; t < nt; ++t) b->rfill[t] = b->rptr[t];
  for (int p = 0; p < nt; ++p) /* p ascending: each row's list ascending */
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int k = b->rfill[b->rows[e]]++;
      b->rsrc[k] = p;
      b->rblk[k] = b->roff[e];
    }
  part_runs(b);
}

/* Each part's rows as runs of consecutive dofs (trees in index order, so dof order; adjacent trees'
 * ranges merged): the many-column solves move a part's columns into T and out over these runs, long
 * enough for blockchol_many.c's 4 x 4 transposes, where a particle's three rows one tree at a time
 * never filled one (hammock: the moves 3.2 of 14.5 M instructions of the solves). */
static void part_runs(grit_blockchol *b) {
  const int nt = b->nt, np = b->nparts, *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  int *end = b->deg, *cur = b->rfill; /* scratch: each part's last run's end; its next run */
  for (int k = 0; k <= np; ++k) b->run_ptr[k] = 0;
  for (int k = 0; k < np; ++k) end[k] = -1;
  for (int t = 0; t < nt; ++t) {
    const int k = b->part[t];
    if (end[k] != adr[t]) b->run_ptr[k + 1]++;
    end[k] = adr[t] + dim[t];
  }
  for (int k = 0; k < np; ++k) b->run_ptr[k + 1] += b->run_ptr[k], cur[k] = b->run_ptr[k], end[k] = -1;
  for (int k = 0; k < np; ++k) b->part6[k] = 0;
  for (int t = 0; t < nt; ++t) {
    const int k = b->part[t];
    if (end[k] != adr[t]) b->runs[2 * cur[k]] = adr[t], ++cur[k];
    end[k] = b->runs[2 * cur[k] - 1] = adr[t] + dim[t];
    if (dim[t] == 6) b->part6[k] = 1;
  }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>

#define PULL_INLINE static inline __attribute__((always_inline, target("avx2")))
enum { C = RHS_CHUNK };

/* Columns q .. q+4nv-1 of row y := (y - sum over segments i, k of s[i].c[r rs + k cs] s[i].y[k]
 * - sum over k of tc[k tcs] ty[k]) (times inv if scale), the products in that order; nv vectors of four
 * columns (masked: one vector, its lanes in mask). Each entry: a product, then its subtraction. */
PULL_INLINE void pull_cols(double *restrict y, const grit_pull_seg *s, int ns, int r, const double *tc, int tcs,
                           const double *ty, int tcnt, double inv, int scale, int q, int nv, int masked, __m256i mask) {
  __m256d a[8];
  for (int v = 0; v < nv; ++v) a[v] = masked ? _mm256_maskload_pd(y + q, mask) : _mm256_loadu_pd(y + q + 4 * v);
  for (int i = 0; i < ns; ++i) {
    const double *c = s[i].c + (size_t)r * s[i].rs, *Y = s[i].y + q;
    const int cs = s[i].cs, cnt = s[i].cnt;
#define PULL_PRODUCT(k)                                                                                           \
  do {                                                                                                           \
    const __m256d l = _mm256_broadcast_sd(c + (size_t)(k) * cs);                                                 \
    const double *yk = Y + (size_t)(k) * C;                                                                      \
    for (int v = 0; v < nv; ++v)                                                                                 \
      a[v] = _mm256_sub_pd(a[v], _mm256_mul_pd(l, masked ? _mm256_maskload_pd(yk, mask) : _mm256_loadu_pd(yk + 4 * v))); \
  } while (0)
    if (cnt == 3) { /* a particle's block: its three products without the loop's control */
      PULL_PRODUCT(0);
      PULL_PRODUCT(1);
      PULL_PRODUCT(2);
      continue;
    }
    for (int k = 0; k < cnt; ++k) PULL_PRODUCT(k);
#undef PULL_PRODUCT
  }
  for (int k = 0; k < tcnt; ++k) {
    const __m256d l = _mm256_broadcast_sd(tc + (size_t)k * tcs);
    const double *yk = ty + q + (size_t)k * C;
    for (int v = 0; v < nv; ++v)
      a[v] = _mm256_sub_pd(a[v], _mm256_mul_pd(l, masked ? _mm256_maskload_pd(yk, mask) : _mm256_loadu_pd(yk + 4 * v)));
  }
  if (scale)
    for (int v = 0; v < nv; ++v) a[v] = _mm256_mul_pd(a[v], _mm256_set1_pd(inv));
  for (int v = 0; v < nv; ++v)
    if (masked) _mm256_maskstore_pd(y + q, mask, a[v]);
    else _mm256_storeu_pd(y + q + 4 * v, a[v]);
}

/* pull_cols over the nc columns: 32 at a time, then sixteen, four, the last one to three masked. */
PULL_INLINE void pull_row(double *y, const grit_pull_seg *s, int ns, int r,
                          const double *tc, int tcs, const double *ty, int tcnt,
                          double inv, int scale, int nc) {
  const __m256i none = _mm256_setzero_si256();
  int q = 0;
  for (; q + 32 <= nc; q += 32) pull_cols(y, s, ns, r, tc, tcs, ty, tcnt, inv, scale, q, 8, 0, none);
  if (q + 16 <= nc) pull_cols(y, s, ns, r, tc, tcs, ty, tcnt, inv, scale, q, 4, 0, none), q += 16;
  for (; q + 4 <= nc; q += 4) pull_cols(y, s, ns, r, tc, tcs, ty, tcnt, inv, scale, q, 1, 0, none);
  if (q < nc) {
    const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(nc - q), _mm256_setr_epi64x(0, 1, 2, 3));
    pull_cols(y, s, ns, r, tc, tcs, ty, tcnt, inv, scale, q, 1, 1, mask);
  }
}

/* Whether rows 0..n-1 of T are zero (+-0) in columns 0..nc-1 (a NaN is not): their bits ORed four
 * columns a vector (the last one to three masked: T's other columns hold earlier chunks' values),
 * compared with zero once a row (the scalar scan compared each entry: hammock, a sixth of the forward
 * sweep's own instructions). */
static __attribute__((target("avx2"))) int rows_zero(const double *T, int n, int nc) {
  const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(nc & 3), _mm256_setr_epi64x(0, 1, 2, 3));
  const int nq = nc & ~3;
  for (int j = 0; j < n; ++j) {
    const double *t = T + (size_t)j * C;
    __m256d o = (nc & 3) ? _mm256_maskload_pd(t + nq, mask) : _mm256_setzero_pd();
    for (int q = 0; q < nq; q += 4) o = _mm256_or_pd(o, _mm256_loadu_pd(t + q));
    if (_mm256_movemask_pd(_mm256_cmp_pd(o, _mm256_setzero_pd(), _CMP_NEQ_UQ))) return 0;
  }
  return 1;
}

__attribute__((target("avx2"))) void grit_blockchol_pull_forward(grit_blockchol *b, int nc, const int *pos, int npos) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  grit_pull_seg *seg = b->seg;
  for (int i = 0; i < npos; ++i) {
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    const double *L = b->Lx + b->doff[p];
    double *Y = b->T + (size_t)adr[t] * C;
    int ns = 0;
    for (int k = b->rptr[p]; k < b->rptr[p + 1]; ++k) { /* the earlier positions whose rows are not zero */
      const int sp = b->rsrc[k], ts = b->order[sp];
      if (!b->nzp[sp]) continue;
      seg[ns++] = (grit_pull_seg){b->Lx + b->rblk[k], b->T + (size_t)adr[ts] * C, 1, dim[ts], dim[ts]};
    }
    for (int r = 0; ns && r < n; ++r) pull_row(Y + (size_t)r * C, seg, ns, r, L, 0, Y, 0, 1.0, 0, nc);
    b->nzp[p] = !rows_zero(Y, n, nc);
    if (!b->nzp[p]) continue; /* y = L^-1 0 = 0, and it subtracts nothing from later rows */
    if (b->chain && b->tree_tc[t]) { /* alone in its part: both substitutions now */
      grit_treechol_solve_rows(b->tc, t, L, b->inv + adr[t], Y, C, nc);
      continue;
    }
    if (b->tree_sp[t]) {
      grit_bigsparse_solve_rows(b->sp[t], Y, C, nc);
      continue;
    }
    for (int j = 0; j < n; ++j)
      pull_row(Y + (size_t)j * C, seg, 0, 0, L + (size_t)j * n, 1, Y, j, 1.0 / L[(size_t)j * n + j], 1, nc);
  }
}

__attribute__((target("avx2"))) void grit_blockchol_pull_backward(grit_blockchol *b, int nc, const int *pos, int npos) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  grit_pull_seg *seg = b->seg;
  for (int i = npos - 1; i >= 0; --i) {
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    if ((b->chain && b->tree_tc[t]) || b->tree_sp[t]) continue; /* solved in the forward sweep */
    const double *L = b->Lx + b->doff[p];
    double *Y = b->T + (size_t)adr[t] * C;
    int ns = 0;
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int ti = b->order[b->rows[e]];
      seg[ns++] = (grit_pull_seg){b->Lx + b->roff[e], b->T + (size_t)adr[ti] * C, n, 1, dim[ti]};
    }
    for (int j = n - 1; j >= 0; --j) {
      const int tail = n - 1 - j;
      pull_row(Y + (size_t)j * C, seg, ns, j, tail ? L + (size_t)(j + 1) * n + j : L, n,
               tail ? Y + (size_t)(j + 1) * C : Y, tail, 1.0 / L[(size_t)j * n + j], 1, nc);
    }
  }
}
#endif
