/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_many.c — the block Cholesky's solves of many right-hand sides at once (the derivatives'
 * columns): transposed into rows of RHS_CHUNK columns, substituted by block kernels, moved back. See
 * blockchol.h (grit_blockchol_solve, grit_blockchol_solve_parts). */
#include <limits.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "treechol.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NOINLINE
#define ALWAYS_INLINE inline
#endif

/* The many-column substitutions are also compiled for AVX2 (4 columns per vector instead of SSE2's 2)
 * and chosen at run time by the processor. The same operations on each column in the same order, no
 * fused multiply-adds (-ffp-contract=off, and the AVX2 target does not include FMA): the same bits on
 * any x86-64 processor (GRIT_NO_AVX2 compiles the baseline path only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define GRIT_BLOCKCHOL_AVX2 1
#include <immintrin.h>
#else
#define GRIT_BLOCKCHOL_AVX2 0
#endif

/* Many right-hand sides: the substitutions on the columns cols[0..nc-1] of B (nc <= RHS_CHUNK) at once,
 * over the positions pos[0..npos-1] (ascending; NULL: every position), transposed into rows of T (row
 * i holds dof i of every column), so that each multiply-add runs along a contiguous row.
 * Rows outside those positions' trees are neither read nor written: with pos a part, the columns must
 * be zero there (their solution is). */
/* Whether rows 0..n-1 of T (stride RHS_CHUNK) are zero in columns 0..nc-1. The derivatives' right-hand
 * sides are zero outside a tree and its neighbours, so the forward substitution meets zero blocks
 * before the first of those trees and off the paths that lead from them to the part's root: those
 * blocks stay zero and are skipped (only the signs of zeros can differ from the full substitution).
 * Sorting a chunk's columns by their first nonzero position to skip per column as well (a staircase)
 * cost more in the search than it saved (callgrind, clutter 40 settled, Similar: +0.9 %). */
static ALWAYS_INLINE int rows_zero(const double *T, int n, int nc) {
  for (int j = 0; j < n; ++j)
    for (int q = 0; q < nc; ++q)
      if (T[(size_t)j * RHS_CHUNK + q] != 0.0) return 0;
  return 1;
}

/* The substitutions' block kernels, each row of the result loaded and stored once for all its products,
 * which are subtracted in the order of the plain loops (the same bits): inlined with the free body's 6
 * as a constant, the products of one row unrolled and the columns in vector registers. */

/* Z -= X Y over nc columns of T: X mi x n row-major, Y n rows, Z mi rows (k = 0 .. n-1 in order). */
static ALWAYS_INLINE void sub_xy(const double *restrict X, int mi, int n, const double *restrict Y, double *restrict Z, int nc) {
  for (int r = 0; r < mi; ++r) {
    const double *xr = X + r * n;
    double *zr = Z + (size_t)r * RHS_CHUNK;
    for (int q = 0; q < nc; ++q) {
      double s = zr[q];
      for (int k = 0; k < n; ++k) s -= xr[k] * Y[(size_t)k * RHS_CHUNK + q];
      zr[q] = s;
    }
  }
}

/* Y -= X^T Z over nc columns of T: X mi x n row-major, Z mi rows, Y n rows (r = 0 .. mi-1 in order). */
static ALWAYS_INLINE void sub_xtz(const double *restrict X, int mi, int n, const double *restrict Z, double *restrict Y, int nc) {
  for (int k = 0; k < n; ++k) {
    double *yk = Y + (size_t)k * RHS_CHUNK;
    for (int q = 0; q < nc; ++q) {
      double s = yk[q];
      for (int r = 0; r < mi; ++r) s -= X[r * n + k] * Z[(size_t)r * RHS_CHUNK + q];
      yk[q] = s;
    }
  }
}

#if GRIT_BLOCKCHOL_AVX2
/* The dense blocks' rows with AVX2, each row's columns held in registers while its products run
 * (the plain loops below load and store the row once per product): row y := (y - sum_k c[k cs] Y[k])
 * (times inv if scale), k = 0 .. cnt-1 in order (rows of T other than y's), over nv vectors of four
 * columns (masked: one vector, its lanes in mask). For each entry the plain loops' operations in their
 * order: a product, then its subtraction (no fused multiply-add), then the scaling. */
static ALWAYS_INLINE __attribute__((target("avx2"))) void tile_cols(double *restrict y, const double *restrict c, int cs,
                                                                    const double *restrict Y, int cnt, double inv,
                                                                    int scale, int nv, int masked, __m256i mask) {
  __m256d a[8];
  for (int v = 0; v < nv; ++v) a[v] = masked ? _mm256_maskload_pd(y, mask) : _mm256_loadu_pd(y + 4 * v);
  for (int k = 0; k < cnt; ++k) {
    const __m256d l = _mm256_broadcast_sd(c + (size_t)k * cs);
    const double *yk = Y + (size_t)k * RHS_CHUNK;
    for (int v = 0; v < nv; ++v)
      a[v] = _mm256_sub_pd(a[v], _mm256_mul_pd(l, masked ? _mm256_maskload_pd(yk, mask) : _mm256_loadu_pd(yk + 4 * v)));
  }
  if (scale)
    for (int v = 0; v < nv; ++v) a[v] = _mm256_mul_pd(a[v], _mm256_set1_pd(inv));
  for (int v = 0; v < nv; ++v)
    if (masked) _mm256_maskstore_pd(y, mask, a[v]);
    else _mm256_storeu_pd(y + 4 * v, a[v]);
}

/* tile_cols over the nc columns: 32 at a time (eight vectors, each product's load folded into its
 * multiplication: 2.5 instructions a vector against 3 for 16 columns, callgrind), then sixteen, then
 * four, then the last one to three masked. */
static ALWAYS_INLINE __attribute__((target("avx2"))) void tile_row(double *y, const double *c, int cs, const double *Y,
                                                                   int cnt, double inv, int scale, int nc) {
  const __m256i none = _mm256_setzero_si256();
  int q = 0;
  for (; q + 32 <= nc; q += 32) tile_cols(y + q, c, cs, Y + q, cnt, inv, scale, 8, 0, none);
  if (q + 16 <= nc) tile_cols(y + q, c, cs, Y + q, cnt, inv, scale, 4, 0, none), q += 16;
  for (; q + 16 <= nc; q += 16) tile_cols(y + q, c, cs, Y + q, cnt, inv, scale, 4, 0, none);
  for (; q + 4 <= nc; q += 4) tile_cols(y + q, c, cs, Y + q, cnt, inv, scale, 1, 0, none);
  if (q < nc) {
    const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(nc - q), _mm256_setr_epi64x(0, 1, 2, 3));
    tile_cols(y + q, c, cs, Y + q, cnt, inv, scale, 1, 1, mask);
  }
}

/* A dense n x n diagonal block's forward (L y = b, rows ascending, each less rows 0 .. j-1 times L's row
 * j) or backward (L^T x = y, rows descending, each less rows j+1 .. n-1 times L's column j) solve. */
static NOINLINE __attribute__((target("avx2"))) void tile_diag(const double *L, int n, double *Y, int nc, int forward) {
  if (forward)
    for (int j = 0; j < n; ++j)
      tile_row(Y + (size_t)j * RHS_CHUNK, L + (size_t)j * n, 1, Y, j, 1.0 / L[(size_t)j * n + j], 1, nc);
  else
    for (int j = n - 1; j >= 0; --j)
      tile_row(Y + (size_t)j * RHS_CHUNK, L + (size_t)(j + 1) * n + j, n, Y + (size_t)(j + 1) * RHS_CHUNK, n - 1 - j,
               1.0 / L[(size_t)j * n + j], 1, nc);
}

/* An off-diagonal block X (mi x n, row-major): forward Z -= X Y (row r of Z less rows k of Y in order),
 * backward Y -= X^T Z (row k of Y less rows r of Z in order). */
static NOINLINE __attribute__((target("avx2"))) void tile_off(const double *X, int mi, int n, double *Y, double *Z, int nc,
                                                              int forward) {
  if (forward)
    for (int r = 0; r < mi; ++r) tile_row(Z + (size_t)r * RHS_CHUNK, X + (size_t)r * n, 1, Y, n, 0.0, 0, nc);
  else
    for (int k = 0; k < n; ++k) tile_row(Y + (size_t)k * RHS_CHUNK, X + k, n, Z, mi, 0.0, 0, nc);
}
#endif

/* Dense blocks (not a free body's 6) of at least TILE_MIN rows are solved by the AVX2 row kernels
 * (tile_diag, tile_off) unless b->no_tiles; smaller ones keep the plain loops. Small blocks too (was 8):
 * the particles of MuJoCo's composites (three slides each) coupled into one part are 3 x 3 blocks, whose
 * plain loops load and store a row of T per product (callgrind, the derivative call in blocks: grid2pin
 * -15 %, hammock -12 %; the same bits). */
enum { TILE_MIN = 2 };
#if GRIT_BLOCKCHOL_AVX2
#define TILED(n) (tiles && (n) >= tile_min)
#else
#define TILED(n) ((void)tiles, (void)tile_min, 0)
#define tile_diag(...) ((void)0)
#define tile_off(...) ((void)0)
#endif

void grit_blockchol_tiles(grit_blockchol *b, int allow) { b->no_tiles = !allow; }

void grit_blockchol_sparse_rows(grit_blockchol *b, int allow) {
  for (int t = 0; b->sp && t < b->nt; ++t)
    if (b->sp[t]) grit_bigsparse_rows_kernel(b->sp[t], allow);
}

/* Row yj := (yj - sum_k c[k cstride] Y[k]) * inv over nc columns, k = 0 .. cnt-1 in order (rows of T
 * other than yj's; cnt = 0: yj := yj * inv). */
static ALWAYS_INLINE void row_update(const double *restrict Y, const double *restrict c, int cstride, int cnt, double inv,
                              double *restrict yj, int nc) {
  for (int q = 0; q < nc; ++q) {
    double s = yj[q];
    for (int k = 0; k < cnt; ++k) s -= c[k * cstride] * Y[(size_t)k * RHS_CHUNK + q];
    yj[q] = s * inv;
  }
}

static ALWAYS_INLINE void row_scale(double *yj, double inv, int nc) {
  for (int q = 0; q < nc; ++q) yj[q] *= inv;
}

/* Y := L^-1 Y (forward) or L^-T Y (backward) for a free body's 6 x 6 diagonal block L, over nc columns
 * of T: one call per row with constant bounds, so that each row's products are unrolled (forward: row j
 * less rows 0 .. j-1 times L's row j; backward: row j less rows j+1 .. 5 times L's column j). */
static ALWAYS_INLINE void diag_solve6(const double *L, double *Y, int nc, int forward) {
#define GRIT_FWD6(j) row_update(Y, L + (j) * 6, 1, j, 1.0 / L[(j) * 7], Y + (size_t)(j) * RHS_CHUNK, nc)
#define GRIT_BWD6(j)                                                                                                \
  row_update(Y + (size_t)((j) + 1) * RHS_CHUNK, L + ((j) + 1) * 6 + (j), 6, 5 - (j), 1.0 / L[(j) * 7],            \
             Y + (size_t)(j) * RHS_CHUNK, nc)
  if (forward) {
    row_scale(Y, 1.0 / L[0], nc);
    GRIT_FWD6(1), GRIT_FWD6(2), GRIT_FWD6(3), GRIT_FWD6(4), GRIT_FWD6(5);
  } else {
    row_scale(Y + (size_t)5 * RHS_CHUNK, 1.0 / L[35], nc);
    GRIT_BWD6(4), GRIT_BWD6(3), GRIT_BWD6(2), GRIT_BWD6(1), GRIT_BWD6(0);
  }
#undef GRIT_FWD6
#undef GRIT_BWD6
}

/* The forward substitution's column p of a free body (6 x 6 diagonal block L, its rows Y of T) over
 * nc columns in groups of FWD_GROUP, a group skipped where its six rows are zero: a right-hand side
 * of the derivatives is zero outside a few trees, so its forward solution is zero off their paths in
 * the elimination tree, and a chunk's columns come tree by tree: a group of them meets few nonzero
 * blocks where the whole chunk meets many. Each column's operations are those of the ungrouped loops,
 * in the same order (the columns do not mix); only the signs of skipped zeros can differ. Parts of
 * fewer than FWD_GROUP_MIN_POS trees keep the ungrouped loops: their short paths leave little to skip
 * (callgrind, the pile of 50 boxes, parts of 2 to 8 trees: the solves +10 % grouped). */
enum { FWD_GROUP = 8, FWD_GROUP_MIN_POS = 16 };

static ALWAYS_INLINE void forward6_group(grit_blockchol *b, int p, const double *L, double *Y, int q0, int g) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  diag_solve6(L, Y + q0, g, 1);
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
    const int ti = b->order[b->rows[e]];
    sub_xy(b->Lx + b->roff[e], dim[ti], 6, Y + q0, b->T + (size_t)adr[ti] * RHS_CHUNK + q0, g);
  }
}

static ALWAYS_INLINE void forward6_groups(grit_blockchol *b, int p, const double *L, double *Y, int nc) {
  int q0 = 0;
  for (; q0 + FWD_GROUP <= nc; q0 += FWD_GROUP)
    if (!rows_zero(Y + q0, 6, FWD_GROUP)) forward6_group(b, p, L, Y, q0, FWD_GROUP);
  if (q0 < nc && !rows_zero(Y + q0, 6, nc - q0)) forward6_group(b, p, L, Y, q0, nc - q0);
}

/* The rows pulled (blockchol_pull.c: the same bits) in the AVX2 build unless b->no_pull or b->no_tiles,
 * over PULL_MIN_POS positions or more, none of them a 6-dof tree (b->pull_here, set per chunk): a row
 * pulls from at most npos - 1 blocks, so with fewer there is little to save; and the sweeps' kernels for
 * a free body's constant 6 (and its forward groups, forward6_groups) are faster than the pull's general
 * loops (callgrind: dm_control's quadruped, a ball and the robot in one part, +0.7 % pulled; the clutter
 * settled, parts of 2 to 6 boxes, +0.5 %). */
enum { PULL_MIN_POS = 4 };
#if GRIT_BLOCKCHOL_AVX2
#define PULLED(b) (tiles && npos >= PULL_MIN_POS && (b)->pull_here && !(b)->no_pull && !(b)->no_tiles)
#else
#define PULLED(b) ((void)(b), 0)
#define grit_blockchol_pull_forward(...) ((void)0)
#define grit_blockchol_pull_backward(...) ((void)0)
#endif

/* The substitutions L L^T X = Y on the nc columns held in b->T (row i: dof i of every column), over
 * the positions pos[0..npos-1] (ascending; NULL: every position). Compiled twice (substitute_base and
 * substitute_avx2, below), each not inlined into solve_chunk: on its own it keeps its pointers in
 * registers (callgrind, clutter 40 settled, Similar: the solves -4.8 %). */
static ALWAYS_INLINE void substitute_in(grit_blockchol *b, int nc, const int *pos, int npos, int tiles) {
  const int tile_min = b->no_tiles ? INT_MAX : TILE_MIN; /* tiles: 0 in the baseline build, 1 with AVX2 */
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  const double *Lx = b->Lx;
  double *T = b->T;
  enum { C = RHS_CHUNK };
  const int pull = PULLED(b), pull_fwd = pull;
  if (pull_fwd) grit_blockchol_pull_forward(b, nc, pos, npos);
  for (int i = 0; !pull_fwd && i < npos; ++i) { /* L y = b */
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    const double *L = Lx + b->doff[p];
    double *Y = T + (size_t)adr[t] * C;
    if (rows_zero(Y, n, nc)) continue; /* y = L^-1 0 = 0, and it subtracts nothing from later rows */
    if (b->chain && b->tree_tc[t]) { /* tree-ordered, alone in its part: both substitutions now */
      grit_treechol_solve_rows(b->tc, t, L, b->inv + adr[t], Y, C, nc);
      continue;
    }
    if (b->tree_sp[t]) { /* a big tree's sparse factor (blockchol_sparse.c), alone in its part: both now */
      grit_bigsparse_solve_rows(b->sp[t], Y, C, nc);
      continue;
    }
    if (n == 6 && nc > FWD_GROUP && npos >= FWD_GROUP_MIN_POS) {
      forward6_groups(b, p, L, Y, nc);
      continue;
    }
    if (n == 6) {
      diag_solve6(L, Y, nc, 1);
    } else if (TILED(n)) {
      tile_diag(L, n, Y, nc, 1);
    } else {
      for (int j = 0; j < n; ++j) {
        double *yj = Y + j * C;
        for (int k = 0; k < j; ++k) {
          const double l = L[j * n + k], *yk = Y + k * C;
          for (int q = 0; q < nc; ++q) yj[q] -= l * yk[q];
        }
        const double inv = 1.0 / L[j * n + j];
        for (int q = 0; q < nc; ++q) yj[q] *= inv;
      }
    }
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int ti = b->order[b->rows[e]], mi = dim[ti];
      const double *X = Lx + b->roff[e];
      double *Z = T + (size_t)adr[ti] * C;
      if (n == 6) {
        sub_xy(X, mi, 6, Y, Z, nc);
        continue;
      }
      if (TILED(n)) {
        tile_off(X, mi, n, Y, Z, nc, 1);
        continue;
      }
      for (int r = 0; r < mi; ++r)
        for (int k = 0; k < n; ++k) {
          const double x = X[r * n + k], *yk = Y + k * C;
          double *zr = Z + r * C;
          for (int q = 0; q < nc; ++q) zr[q] -= x * yk[q];
        }
    }
  }
  if (pull) {
    grit_blockchol_pull_backward(b, nc, pos, npos);
    return;
  }
  for (int i = npos - 1; i >= 0; --i) { /* L^T x = y */
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    const double *L = Lx + b->doff[p];
    double *Y = T + (size_t)adr[t] * C;
    if ((b->chain && b->tree_tc[t]) || b->tree_sp[t]) continue; /* solved in the forward sweep */
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int ti = b->order[b->rows[e]], mi = dim[ti];
      const double *X = Lx + b->roff[e];
      const double *Z = T + (size_t)adr[ti] * C;
      if (mi == 6) {
        sub_xtz(X, 6, n, Z, Y, nc);
        continue;
      }
      if (TILED(mi)) {
        tile_off(X, mi, n, Y, (double *)Z, nc, 0);
        continue;
      }
      for (int r = 0; r < mi; ++r)
        for (int k = 0; k < n; ++k) {
          const double x = X[r * n + k], *zr = Z + r * C;
          double *yk = Y + k * C;
          for (int q = 0; q < nc; ++q) yk[q] -= x * zr[q];
        }
    }
    if (n == 6) {
      diag_solve6(L, Y, nc, 0);
      continue;
    }
    if (TILED(n)) {
      tile_diag(L, n, Y, nc, 0);
      continue;
    }
    for (int j = n - 1; j >= 0; --j) {
      double *yj = Y + j * C;
      for (int k = j + 1; k < n; ++k) {
        const double l = L[k * n + j], *yk = Y + k * C;
        for (int q = 0; q < nc; ++q) yj[q] -= l * yk[q];
      }
      const double inv = 1.0 / L[j * n + j];
      for (int q = 0; q < nc; ++q) yj[q] *= inv;
    }
  }
}

static NOINLINE void substitute_base(grit_blockchol *b, int nc, const int *pos, int npos) {
  substitute_in(b, nc, pos, npos, 0);
}

#if GRIT_BLOCKCHOL_AVX2
static NOINLINE __attribute__((target("avx2"))) void substitute_avx2(grit_blockchol *b, int nc, const int *pos,
                                                                      int npos) {
  substitute_in(b, nc, pos, npos, 1);
}
#endif

static void substitute(grit_blockchol *b, int nc, const int *pos, int npos) {
#if GRIT_BLOCKCHOL_AVX2
  if (__builtin_cpu_supports("avx2")) {
    substitute_avx2(b, nc, pos, npos);
    return;
  }
#endif
  substitute_base(b, nc, pos, npos);
}

/* Columns X[k0..k0+w-1] (w = 1 or 2; X[k]: column k's row 0, dof j at X[k] + j) moved into (in) or out
 * of (!in) columns k0.. of b->T, over the rows of the positions (every row if pos is NULL). Two columns
 * at a time, so that each row of T is read or written as a pair (the transposition was a fifth of the
 * solves' instructions one entry at a time). */
static inline void move_columns(grit_blockchol *b, double *const *X, int k0, int w, const int *rng, int nr, int in) {
  double *x0 = X[k0], *x1 = X[k0 + w - 1];
  for (int i = 0; i < nr; ++i) {
    const int j0 = rng[2 * i], j1 = rng[2 * i + 1];
    double *t = b->T + (size_t)j0 * RHS_CHUNK + k0;
    if (w == 2 && in)
      for (int j = j0; j < j1; ++j, t += RHS_CHUNK) t[0] = x0[j], t[1] = x1[j];
    else if (w == 2)
      for (int j = j0; j < j1; ++j, t += RHS_CHUNK) x0[j] = t[0], x1[j] = t[1];
    else if (in)
      for (int j = j0; j < j1; ++j, t += RHS_CHUNK) t[0] = x0[j];
    else
      for (int j = j0; j < j1; ++j, t += RHS_CHUNK) x0[j] = t[0];
  }
}

#if GRIT_BLOCKCHOL_AVX2
/* move_columns for four columns X[k0..k0+3], with AVX2: each 4 x 4 tile (four rows of the four
 * columns) loaded as four vectors, transposed in registers and stored as four (the copies of
 * move_columns, in fewer instructions); the rows left over one at a time. */
static inline __attribute__((always_inline, target("avx2"))) void move4_in(grit_blockchol *b, double *const *X, int k0,
                                                                           const int *rng, int nr, int in) {
  double *x[4];
  for (int l = 0; l < 4; ++l) x[l] = X[k0 + l];
  for (int i = 0; i < nr; ++i) {
    const int j0 = rng[2 * i], j1 = rng[2 * i + 1];
    double *t = b->T + (size_t)j0 * RHS_CHUNK + k0;
    int j = j0;
    for (; j + 4 <= j1; j += 4, t += 4 * RHS_CHUNK) {
      __m256d r[4];
      for (int l = 0; l < 4; ++l) r[l] = _mm256_loadu_pd(in ? x[l] + j : t + (size_t)l * RHS_CHUNK);
      const __m256d a = _mm256_unpacklo_pd(r[0], r[1]), c = _mm256_unpackhi_pd(r[0], r[1]);
      const __m256d e = _mm256_unpacklo_pd(r[2], r[3]), g = _mm256_unpackhi_pd(r[2], r[3]);
      const __m256d o[4] = {_mm256_permute2f128_pd(a, e, 0x20), _mm256_permute2f128_pd(c, g, 0x20),
                            _mm256_permute2f128_pd(a, e, 0x31), _mm256_permute2f128_pd(c, g, 0x31)};
      for (int l = 0; l < 4; ++l) _mm256_storeu_pd(in ? t + (size_t)l * RHS_CHUNK : x[l] + j, o[l]);
    }
    for (; j < j1; ++j, t += RHS_CHUNK) { /* the last rows: a row's four values as one vector */
      if (in) {
        _mm256_storeu_pd(t, _mm256_setr_pd(x[0][j], x[1][j], x[2][j], x[3][j]));
      } else {
        const __m256d v = _mm256_loadu_pd(t);
        const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
        _mm_storel_pd(x[0] + j, lo), _mm_storeh_pd(x[1] + j, lo), _mm_storel_pd(x[2] + j, hi), _mm_storeh_pd(x[3] + j, hi);
      }
    }
  }
}

/* move4_in over the given ranges, and over every row (its one range constant). */
static __attribute__((target("avx2"))) void move_columns4(grit_blockchol *b, double *const *X, int k0, const int *rng,
                                                          int nr, int in) {
  move4_in(b, X, k0, rng, nr, in);
}

static __attribute__((target("avx2"))) void move_columns4_all(grit_blockchol *b, double *const *X, int k0, int in) {
  const int all[2] = {0, b->m->nv};
  move4_in(b, X, k0, all, 1, in);
}
#endif

/* The columns into (in) or out of (!in) b->T: four at a time with AVX2, else (and the last) two; over
 * the rows of the positions' trees (pos; NULL: every row), or, given the part, over its runs of
 * consecutive dofs (the same rows; blockchol_pull.c's part_runs) unless b->no_runs. */
static void move_chunk(grit_blockchol *b, double *const *X, int nc, const int *pos, int npos, int part, int in) {
  int all[2] = {0, b->m->nv}, nr = 1; /* the rows' ranges [rng[2i], rng[2i+1]), i < nr */
  const int *rng = all;
  if (pos && part >= 0 && !b->no_runs) {
    rng = b->runs + 2 * b->run_ptr[part];
    nr = b->run_ptr[part + 1] - b->run_ptr[part];
  } else if (pos) { /* tree by tree */
    for (int i = 0; i < npos; ++i) {
      const int t = b->order[pos[i]];
      b->rng[2 * i] = b->m->tree_dofadr[t], b->rng[2 * i + 1] = b->m->tree_dofadr[t] + b->m->tree_dofnum[t];
    }
    rng = b->rng, nr = npos;
  }
  int k = 0;
#if GRIT_BLOCKCHOL_AVX2
  if (__builtin_cpu_supports("avx2"))
    for (; k + 4 <= nc; k += 4) {
      if (pos) move_columns4(b, X, k, rng, nr, in);
      else move_columns4_all(b, X, k, in);
    }
#endif
  for (; k < nc; k += 2) move_columns(b, X, k, k + 1 < nc ? 2 : 1, rng, nr, in);
}

/* The nc columns X[0..nc-1] (column k's dof j at X[k] + j) solved together: only the rows of the
 * positions' trees are read and written (every row if pos is NULL). */
static void solve_chunk(grit_blockchol *b, double *const *X, int nc, const int *pos, int npos, int part) {
  if (b->rows_stale) grit_blockchol_block_rows(b), b->rows_stale = 0; /* (arrays sized by the analysis) */
  b->pull_here = part >= 0 ? !b->part6[part] : !pos && !b->any6;
  /* The positions' trees' rows (the only ones read and written) at rows nv .. of b->Tmem whatever their
   * dofs, T shifted for the chunk: every part's chunks reuse the same few kB (22 humanoids: 27 rows of 64
   * columns, 14 kB in a 304 kB T), which stay in cache from one chunk to the next. */
  if (pos) {
    int lo = b->m->nv;
    for (int i = 0; i < npos; ++i) {
      const int a = b->m->tree_dofadr[b->order[pos[i]]];
      lo = a < lo ? a : lo;
    }
    b->T = b->Tmem + (size_t)(b->m->nv - lo) * RHS_CHUNK;
  }
  move_chunk(b, X, nc, pos, npos, part, 1); /* in: every row, or the rows of the positions' trees */
  substitute(b, nc, pos, npos);
  move_chunk(b, X, nc, pos, npos, part, 0); /* out: the same rows */
  b->T = b->Tmem; /* (the factorization's scratch) */
}

void grit_blockchol_solve_many(grit_blockchol *b, double *B, int nrhs) {
  double *X[RHS_CHUNK];
  for (int c0 = 0; c0 < nrhs; c0 += RHS_CHUNK) {
    const int nc = nrhs - c0 < RHS_CHUNK ? nrhs - c0 : RHS_CHUNK;
    for (int k = 0; k < nc; ++k) X[k] = B + (size_t)(c0 + k) * b->m->nv;
    solve_chunk(b, X, nc, NULL, b->nt, -1);
  }
}

/* The columns are grouped by part over windows of SOLVE_WINDOW columns (not only within each chunk of
 * RHS_CHUNK): a batch of the derivatives' columns runs over the trees of a few colours, spread over
 * many parts, and a wider window gives each part's chunk more columns to share its loops (each column's
 * operations are the same, whichever chunk it is solved in). The window holds the derivatives' widest
 * batch (RHS_BATCH_MAX, derivatives_internal.h): 22 humanoids' batch of ~1000 columns gives each part
 * ~45, where windows of 256 gave ~12 a chunk (a chunk's loads of L and of the row indices are shared by
 * its columns). The parts in the order of their first
 * column in the window, each part's columns in order, RHS_CHUNK at a time: linked lists threaded
 * through the window by one pass (part_tail: each part's last column so far), not a scan of the window
 * per part (with many parts the scans were a sixth of the pile's solves). */
enum { SOLVE_WINDOW = 16 * RHS_CHUNK };

/* grit_blockchol_solve_parts and grit_blockchol_solve_cols: column c at B + c nv (Xc NULL) or at Xc[c]. */
static void solve_parts(grit_blockchol *b, double *B, double *const *Xc, int nrhs, const int *part) {
  int next[SOLVE_WINDOW], first[SOLVE_WINDOW];
  double *X[RHS_CHUNK];
  const size_t nv = (size_t)b->m->nv;
  int *tail = b->part_tail + 1; /* part -1: several parts */
  for (int c0 = 0; c0 < nrhs; c0 += SOLVE_WINDOW) {
    const int nw = nrhs - c0 < SOLVE_WINDOW ? nrhs - c0 : SOLVE_WINDOW;
    int nf = 0;
    for (int l = 0; l < nw; ++l) {
      const int pl = part[c0 + l];
      next[l] = -1;
      if (tail[pl] < 0) first[nf++] = l;
      else next[tail[pl]] = l;
      tail[pl] = l;
    }
    for (int f = 0; f < nf; ++f) {
      const int pk = part[c0 + first[f]];
      tail[pk] = -1;
      for (int l = first[f]; l >= 0;) {
        int n = 0;
        for (; l >= 0 && n < RHS_CHUNK; l = next[l]) X[n++] = Xc ? Xc[c0 + l] : B + (size_t)(c0 + l) * nv;
        if (pk < 0) solve_chunk(b, X, n, NULL, b->nt, -1);
        else solve_chunk(b, X, n, b->part_pos + b->part_ptr[pk], b->part_ptr[pk + 1] - b->part_ptr[pk], pk);
      }
    }
  }
}

void grit_blockchol_solve_parts(grit_blockchol *b, double *B, int nrhs, const int *part) {
  solve_parts(b, B, NULL, nrhs, part);
}

void grit_blockchol_solve_cols(grit_blockchol *b, double *const *X, int nrhs, const int *part) {
  solve_parts(b, NULL, X, nrhs, part);
}
