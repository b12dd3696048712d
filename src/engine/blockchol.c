/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol.c — block-sparse Cholesky on the tree graph. See blockchol.h. */
#include "blockchol.h"
#include "blockchol_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status_internal.h"
#include "treechol.h"



grit_status grit_blockchol_create(const grit_model *m, int max_pairs, grit_blockchol **out, char *message) {
  *out = NULL;
  grit_blockchol *b = calloc(1, sizeof *b);
  if (!b) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the block Cholesky");
  b->m = m;
  b->nt = m->ntree;
  b->words = (m->ntree + 63) / 64;
  const size_t nt = (size_t)m->ntree + 1;
  b->order = calloc(nt, sizeof(int));
  b->pos = calloc(nt, sizeof(int));
  b->deg = calloc(nt, sizeof(int));
  b->done = calloc(nt, 1);
  b->adj = calloc(nt * (size_t)(b->words ? b->words : 1), sizeof(uint64_t));
  b->colptr = calloc(nt + 1, sizeof(int));
  b->doff = calloc(nt, sizeof(int));
  b->Tmem = calloc((size_t)2 * m->nv * RHS_CHUNK + 1, sizeof(double)); /* 2 nv rows: a part's at nv (solve_chunk) */
  b->T = b->Tmem;
  b->inv = calloc((size_t)m->nv + 1, sizeof(double));
  b->col_flops = calloc(nt, sizeof(double));
  b->part = calloc(nt, sizeof(int));
  b->part_ptr = calloc(nt + 1, sizeof(int));
  b->part_pos = calloc(nt, sizeof(int));
  b->part_tail = malloc(sizeof(int) * (nt + 1));
  for (size_t t = 0; b->part_tail && t <= nt; ++t) b->part_tail[t] = -1;
  /* Room for the fill up front, so that the step allocates nothing: every block of the lower triangle
   * for up to 64 trees, else 32 blocks per tree on average (the clutter's 40 objects need at most 4);
   * a fill beyond that grows the arrays in the analysis. */
  const long long all = (long long)m->ntree * (m->ntree - 1) / 2, per = 32LL * m->ntree;
  const int entries = (int)(m->ntree <= 64 || all < per ? all : per) + 1;
  int maxn = 0;
  for (int t = 0; t < m->ntree; ++t) maxn = m->tree_dofnum[t] > maxn ? m->tree_dofnum[t] : maxn;
  b->rows = malloc(sizeof(int) * (size_t)entries);
  b->roff = malloc(sizeof(int) * (size_t)entries);
  b->cap_rows = b->cap_roff = entries;
  b->cap_x = (size_t)m->nM + (size_t)entries * (size_t)maxn * (size_t)maxn;
  b->Lx = malloc(sizeof(double) * b->cap_x);
  b->cap_pairs = max_pairs > 0 ? max_pairs : 1;
  b->pairs = malloc(sizeof *b->pairs * (size_t)b->cap_pairs);
  b->tree_tc = calloc(nt, 1);
  b->rptr = calloc(nt + 1, sizeof(int));
  b->rfill = calloc(nt + 1, sizeof(int));
  b->rsrc = malloc(sizeof(int) * (size_t)entries);
  b->rblk = malloc(sizeof(int) * (size_t)entries);
  b->cap_rsrc = b->cap_rblk = entries;
  b->nzp = calloc(nt, 1);
  b->seg = calloc(nt, sizeof *b->seg);
  b->run_ptr = calloc(nt + 1, sizeof(int));
  b->runs = calloc(2 * nt, sizeof(int));
  b->rng = calloc(2 * nt, sizeof(int));
  b->part6 = calloc(nt, 1);
  for (int t = 0; t < m->ntree; ++t) b->any6 |= m->tree_dofnum[t] == 6;
  /* the particles' recorded Schur targets (blockchol_factor_simd.c): room for columns of 32 blocks on
   * average (16 pairs a block); a larger fill is not recorded (the targets are found by walking) */
  b->cap_tgt = 16 * (size_t)entries;
  b->tgt = malloc(sizeof(int) * b->cap_tgt);
  b->tgt_ptr = calloc(nt + 1, sizeof(size_t));
  b->tgt_done = calloc(nt, 1);
  b->col_m = calloc(nt, sizeof(int));
  b->pair3 = calloc(nt, 1);
  b->heap = calloc(nt, sizeof(int));
  b->wlist = calloc((size_t)b->words + 1, sizeof(int));
  b->hpos = calloc(nt, sizeof(int));
  b->wsum = calloc(nt, sizeof(uint64_t));
  b->avx2_merge = grit_blockchol_have_avx2() && b->words >= 4;
  b->uniform = m->ntree > 0 ? m->tree_dofnum[0] : 0;
  b->no_keep = 1; /* a kept order: opt-in (blockchol.h) */
  for (int t = 0; t < m->ntree; ++t) {
    if (m->tree_dofnum[t] != b->uniform) b->uniform = 0;
    if (m->tree_dofnum[t] == 3) b->any3 = 1;
  }
  b->uniform_all = b->uniform;
  b->sp = calloc(nt, sizeof *b->sp);
  b->tree_sp = calloc(nt, 1);
  int sp_ok = b->sp && b->tree_sp;
  for (int t = 0; sp_ok && t < m->ntree; ++t)
    if (m->tree_dofnum[t] > 64) sp_ok = (b->sp[t] = grit_bigsparse_create(m, t)) != NULL;
  if (b->words <= 1) b->uniform = 0; /* a word's bit loop is as cheap */
  const grit_status ts = grit_treechol_create(m, &b->tc, message);
  if (!b->order || !b->pos || !b->deg || !b->done || !b->adj || !b->colptr || !b->doff || !b->Tmem || !b->inv || !b->col_flops ||
      !b->part || !b->part_ptr || !b->part_pos || !b->part_tail || !b->rows || !b->roff || !b->Lx || !b->pairs || !b->tree_tc ||
      !b->tgt || !b->tgt_ptr || !b->tgt_done || !b->col_m || !b->pair3 || !b->heap || !b->hpos || !b->wlist || !b->wsum || !sp_ok ||
      !b->rptr || !b->rfill || !b->rsrc || !b->rblk || !b->nzp || !b->seg || !b->run_ptr || !b->runs || !b->rng || !b->part6 ||
      ts != GRIT_OK) {
    grit_blockchol_free(b);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the block Cholesky");
  }
  *out = b;
  return GRIT_OK;
}

void grit_blockchol_free(grit_blockchol *b) {
  if (!b) return;
  free(b->order), free(b->pos), free(b->deg), free(b->done), free(b->adj), free(b->colptr), free(b->doff);
  free(b->rows), free(b->roff), free(b->pairs), free(b->Lx), free(b->Tmem), free(b->inv), free(b->col_flops);
  free(b->part), free(b->part_ptr), free(b->part_pos), free(b->part_tail), free(b->tree_tc);
  free(b->tgt), free(b->tgt_ptr), free(b->tgt_done), free(b->col_m), free(b->pair3), free(b->heap), free(b->hpos), free(b->wlist);
  free(b->wsum);
  grit_treechol_free(b->tc);
  for (int t = 0; b->sp && t < b->nt; ++t) grit_bigsparse_free(b->sp[t]);
  free(b->sp), free(b->tree_sp);
  free(b->rptr), free(b->rfill), free(b->rsrc), free(b->rblk), free(b->nzp), free(b->seg);
  free(b->run_ptr), free(b->runs), free(b->rng), free(b->part6);
  free(b);
}

/* The parts of the factor: its graph's connected components (the fill stays within a component of
 * H's graph, so they are H's). A column's first off-diagonal block is its parent in the elimination
 * tree, a later position; a part is the set of positions under one root. part_ptr first maps each
 * root to its part's number, then becomes the parts' offsets into part_pos, where a counting sort lists
 * each part's positions in ascending order (the order of the substitutions). */
static void find_parts(grit_blockchol *b) {
  const int nt = b->nt;
  int *root = b->part_pos; /* scratch until the listing: the root position of each position */
  for (int p = nt - 1; p >= 0; --p) root[p] = b->colptr[p + 1] > b->colptr[p] ? root[b->rows[b->colptr[p]]] : p;
  int np = 0;
  for (int p = 0; p < nt; ++p) b->part_ptr[p] = -1;
  for (int p = 0; p < nt; ++p) { /* parts numbered by their first position */
    const int r = root[p];
    if (b->part_ptr[r] < 0) b->part_ptr[r] = np++;
    b->part[b->order[p]] = b->part_ptr[r];
  }
  for (int k = 0; k <= np; ++k) b->part_ptr[k] = 0;
  for (int t = 0; t < nt; ++t) b->part_ptr[b->part[t] + 1]++;
  for (int k = 0; k < np; ++k) b->part_ptr[k + 1] += b->part_ptr[k];
  int *fill = b->deg; /* free after the analysis */
  for (int k = 0; k < np; ++k) fill[k] = b->part_ptr[k];
  for (int p = 0; p < nt; ++p) b->part_pos[fill[b->part[b->order[p]]]++] = p;
  b->nparts = np;
}

/* Analysis phase 4: rows as positions, ascending in each column; the blocks' offsets (*nx values in
 * all); the FLOP count. */
/* The fewest common rows for which a pair of columns is fused: a pair's fixed work (its B patterns
 * packed, two columns' A vectors loaded a row) is ~35 instructions a row, its saving ~17 a fused block
 * pair, r (r - 1) / 2 of them (particle.xml steps 200-219: 6.376 G at 1, 6.341 G at 4). */
#ifndef PAIR3_MIN_ROWS
#define PAIR3_MIN_ROWS 4
#endif

/* Whether columns p and p+1 (rows sorted) are a particles' pair for grit_blockchol_pair3_avx2: both 3-dof
 * trees with 3 x 3 blocks below, p's first row p+1 and its others p+1's rows (PAIR3_MIN_ROWS or more),
 * and b->T holds the pair's patterns (72 doubles a block of p, 72 + 54 of p+1; 64 nv in all). */
static int pair3(const grit_blockchol *b, int p) {
  const int *dim = b->m->tree_dofnum;
  if (dim[b->order[p]] != 3 || dim[b->order[p + 1]] != 3 || b->col_m[p] != 3 || b->col_m[p + 1] != 3) return 0;
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1], nr = b->colptr[p + 2] - e1;
  if (nr < PAIR3_MIN_ROWS || e1 - e0 != nr + 1 || b->rows[e0] != p + 1) return 0;
  if ((size_t)nr * 198 + 72 > (size_t)b->m->nv * RHS_CHUNK) return 0;
  return memcmp(b->rows + e0 + 1, b->rows + e1, sizeof(int) * (size_t)nr) == 0;
}

static void lay_out_columns(grit_blockchol *b, size_t *nx) {
  const int *dim = b->m->tree_dofnum;
  double fl = 0.0;
  *nx = 0;
  b->tgt_ptr[0] = 0;
  if (b->any3) memset(b->tgt_done, 0, (size_t)b->nt);
  for (int p = 0; p < b->nt; ++p) {
    const int n = dim[b->order[p]];
    int *r = b->rows + b->colptr[p];
    const int len = b->colptr[p + 1] - b->colptr[p];
    for (int i = 0; i < len; ++i) r[i] = b->pos[r[i]];
    for (int i = 1; i < len; ++i) { /* insertion sort: columns are short */
      const int x = r[i];
      int j = i;
      while (j > 0 && r[j - 1] > x) r[j] = r[j - 1], --j;
      r[j] = x;
    }
    b->doff[p] = (int)*nx;
    *nx += (size_t)n * n;
    int mrows = 0, cm = len > 0 ? dim[b->order[r[0]]] : 0;
    for (int i = 0; i < len; ++i) {
      const int mi = dim[b->order[r[i]]];
      cm = mi == cm ? cm : 0;
      b->roff[b->colptr[p] + i] = (int)*nx;
      *nx += (size_t)mi * n;
      mrows += mi;
    }
    /* n^3/3 for the diagonal block, m n^2 for the triangular solves, m^2 n for the update (lower half
     * of the m x m Schur complement, two operations per multiply-add) */
    b->col_flops[p] = (double)n * n * n / 3.0 + (double)mrows * n * n + (double)mrows * mrows * n;
    fl += b->col_flops[p];
    if (b->any3) { /* (read by the 3-dof trees' paths only) */
      b->col_m[p] = cm;
      b->tgt_ptr[p + 1] = b->tgt_ptr[p] + (size_t)len * (size_t)(len > 0 ? len - 1 : 0) / 2;
      b->pair3[p] = 0;
      if (p > 0) b->pair3[p - 1] = (unsigned char)pair3(b, p - 1);
    }
  }
  b->flops = fl;
}

/* Analysis phase 5: room for the factor's nx values. */
static grit_status reserve_values(grit_blockchol *b, size_t nx, char *message) {
  if (nx > (size_t)INT32_MAX)
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: the factor's fill is too large");
  if (nx <= b->cap_x) return GRIT_OK;
  size_t c = b->cap_x ? b->cap_x : 1024;
  while (c < nx) c *= 2;
  double *q = realloc(b->Lx, c * sizeof(double));
  if (!q) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the factor");
  b->Lx = q;
  b->cap_x = c;
  return GRIT_OK;
}

/* Analysis phase 7: where each coupling block lands, in the column of the pair's earlier tree. */
static grit_status place_pairs(grit_blockchol *b, int npairs, const int *pa, const int *pb, char *message) {
  const int *dim = b->m->tree_dofnum;
  if (!grit_blockchol_grow((void **)&b->pairs, &b->cap_pairs, npairs, sizeof *b->pairs))
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory");
  b->npairs = npairs;
  for (int k = 0; k < npairs; ++k) {
    const int qa = b->pos[pa[k]], qb = b->pos[pb[k]];
    const int col = qa < qb ? qa : qb, row = qa < qb ? qb : qa;
    int lo = b->colptr[col], hi = b->colptr[col + 1] - 1; /* present by construction; the rows ascend */
    while (lo < hi) {                                     /* (a pile's columns near the root: 50 rows) */
      const int mid = lo + (hi - lo) / 2;
      if (b->rows[mid] < row) lo = mid + 1;
      else hi = mid;
    }
    const int e = lo;
    b->pairs[k].dst = b->roff[e];
    b->pairs[k].na = dim[pa[k]];
    b->pairs[k].nb = dim[pb[k]];
    b->pairs[k].transposed = qa > qb;
    b->pairs[k].tree = pa[k];
  }
  return GRIT_OK;
}

/* A kept order's factor may cost up to this many times the flops of the last fresh order's before the
 * pattern is ordered afresh. */
#define KEEP_FLOPS 1.25

/* The analysis's phases after the order and its fill: the columns' layout, the values' storage, the
 * parts (find_parts), the pairs' destinations. */
static grit_status finish_analysis(grit_blockchol *b, int npairs, const int *pa, const int *pb, int ne,
                                   char *message) {
  grit_status s;
  if (!grit_blockchol_grow((void **)&b->roff, &b->cap_roff, ne, sizeof(int)) ||
      !grit_blockchol_grow((void **)&b->rsrc, &b->cap_rsrc, ne, sizeof(int)) ||
      !grit_blockchol_grow((void **)&b->rblk, &b->cap_rblk, ne, sizeof(int)))
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the fill");
  size_t nx;
  lay_out_columns(b, &nx);
  s = reserve_values(b, nx, message);
  if (s != GRIT_OK) return s;
  find_parts(b);
  b->rows_stale = 1; /* the row lists and runs: at the first many-column solve (the step needs none) */
  return place_pairs(b, npairs, pa, pb, message);
}

/* The symbolic analysis in its phases: the graph, its components, the minimum-degree order with the
 * fill (or the fill under the kept order, grit_blockchol_keep_order), then finish_analysis. */
grit_status grit_blockchol_analyze(grit_blockchol *b, int npairs, const int *pa, const int *pb, char *message) {
  grit_blockchol_build_graph(b, npairs, pa, pb);
  int ne;
  grit_status s;
  if (b->keep_ok && !b->no_keep) { /* the last fresh order, if its fill stays within KEEP_FLOPS */
    s = grit_blockchol_fill_in_order(b, npairs, pa, pb, KEEP_FLOPS * b->keep_flops, &ne, message);
    if (s != GRIT_OK) return s;
    if (ne >= 0) {
      s = finish_analysis(b, npairs, pa, pb, ne, message);
      b->kept += s == GRIT_OK;
      b->layout_kept = 1;
      return s;
    }
    grit_blockchol_build_graph(b, npairs, pa, pb); /* too much fill: a fresh order */
  }
  b->layout_kept = 0;
  grit_blockchol_group_components(b, npairs, pa, pb);
  s = grit_blockchol_order_min_degree(b, &ne, message);
  s = s == GRIT_OK ? finish_analysis(b, npairs, pa, pb, ne, message) : s;
  b->keep_flops = b->flops;
  b->keep_ok &= s == GRIT_OK; /* (an order left half done is not kept) */
  return s;
}

/* ------------------------------------------------------------------------------- numeric */

/* The triangular loops of a diagonal block unrolled in full when its size is a constant (6, 7): the
 * compiler does not unroll loops whose bounds depend on the outer index by itself. The same operations
 * in the same order (docs/performance.md, stop 15, branch newton2). */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 8")
#else
#define UNROLL
#endif

/* Diagonal blocks from this size on are factored by grit_blockchol_chol_big (blockchol_big.c: the same
 * bits, vectorized): measured on random SPD blocks (CPU time, AVX2), 0.8 vs 0.7 us at 20, 1.0 vs 1.3 us
 * at 24, 1.7 vs 5.8 us at 32, 12 vs 48 us at 64, 0.76 vs 5.2 ms at 340 (the flag's tree). */
#define BIG_MIN_NV 24

/* In-place Cholesky of the n x n row-major block L (lower triangle read and written), the reciprocal
 * pivots into rinv (the divisions done once). Returns the failing column, or -1. */
static inline int chol_block(double *L, int n, double *rinv) {
  UNROLL for (int j = 0; j < n; ++j) {
    double *lj = L + (size_t)j * n;
    double d = lj[j];
    UNROLL for (int k = 0; k < j; ++k) d -= lj[k] * lj[k];
    if (!(d > 0.0) || !isfinite(d)) return j; /* not positive, NaN or infinite */
    const double r = sqrt(d), inv = 1.0 / r;
    lj[j] = r;
    rinv[j] = inv;
    UNROLL for (int i = j + 1; i < n; ++i) {
      double *li = L + (size_t)i * n;
      double s = li[j];
      UNROLL for (int k = 0; k < j; ++k) s -= li[k] * lj[k];
      li[j] = s * inv;
    }
  }
  return -1;
}

/* Column p of the factor (its tree has n dofs): the diagonal block's Cholesky, X := X L^-T for the
 * column's blocks, and their Schur complement into the later blocks. Returns the failing pivot or -1.
 * Inlined with constant n for the common tree sizes, and m, the rows of every block below, when it is
 * the same for all and constant (0: read per block): a grid of particles of 3 dofs (MuJoCo's hammock,
 * 95 of them) has only 3 x 3 blocks, whose loops with variable bounds cost 3 times the instructions. */
static inline int factor_column(grit_blockchol *b, int p, int n, double *lo, double *hi, int avx2, int avx2_any,
                                int m) {
  const int *dim = b->m->tree_dofnum;
  double *Lx = b->Lx;
  double *L = Lx + b->doff[p];
  /* reciprocal pivots for the multiplications below (a division per entry was a third of the time) */
  double *inv = b->inv + b->m->tree_dofadr[b->order[p]];
  const int bad = n >= BIG_MIN_NV && !b->no_big ? grit_blockchol_chol_big(L, n, inv, avx2_any) : chol_block(L, n, inv);
  if (bad >= 0) return bad;
  for (int j = 0; j < n; ++j) {
    *lo = L[j * n + j] < *lo ? L[j * n + j] : *lo; /* pivots are positive and finite here */
    *hi = L[j * n + j] > *hi ? L[j * n + j] : *hi;
  }
  if (n == 6 && avx2 && grit_blockchol_column6_avx2(b, p, L, inv)) return -1; /* the same bits, vectorized */
  if (n == 3 && m == 3 && avx2 && !b->no_small && !b->no_col3) { /* particles: the same bits, vectorized,
                                                                    with recorded targets */
    grit_blockchol_column3_avx2(b, p, L, inv);
    return -1;
  }
  if (!b->no_col3 && (n == 3 ? m == 3 && avx2 : avx2_any) && grit_blockchol_column_r3_avx2(b, p, n, L, inv))
    return -1; /* particles below: the same bits, vectorized */
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
  for (int e = e0; e < e1; ++e) { /* X := X L^-T: a forward substitution per row, column by column so
                                     that the rows' independent chains overlap */
    const int mi = m ? m : dim[b->order[b->rows[e]]];
    double *X = Lx + b->roff[e];
    for (int j = 0; j < n; ++j) {
      const double *lj = L + (size_t)j * n;
      for (int r = 0; r < mi; ++r) {
        double *x = X + (size_t)r * n;
        double s = x[j];
        for (int k = 0; k < j; ++k) s -= lj[k] * x[k];
        x[j] = s * inv[j];
      }
    }
  }
  for (int ea = e0; ea < e1; ++ea) { /* the Schur complement, block by block */
    const int qa = b->rows[ea], ma = m ? m : dim[b->order[qa]];
    const double *Xa = Lx + b->roff[ea];
    double *T = Lx + b->doff[qa]; /* the diagonal block of qa, lower half */
    for (int r = 0; r < ma; ++r)
      for (int c = 0; c <= r; ++c) {
        double s = 0.0;
        for (int k = 0; k < n; ++k) s += Xa[r * n + k] * Xa[c * n + k];
        T[r * ma + c] -= s;
      }
    int f = b->colptr[qa]; /* blocks (qb, qa), qb > qa, are in column qa: walk it along */
    for (int eb = ea + 1; eb < e1; ++eb) {
      const int qb = b->rows[eb], mb = m ? m : dim[b->order[qb]];
      while (b->rows[f] != qb) ++f;
      const double *Xb = Lx + b->roff[eb];
      double *U = Lx + b->roff[f]; /* mb x ma */
      for (int r = 0; r < mb; ++r)
        for (int c = 0; c < ma; ++c) {
          double s = 0.0;
          for (int k = 0; k < n; ++k) s += Xb[r * n + k] * Xa[c * n + k];
          U[r * ma + c] -= s;
        }
    }
  }
  return -1;
}

/* Columns p and p+1 of a particles' pair (b->pair3[p]): each diagonal block's Cholesky and pivots' range, as
 * factor_column; p's and p+1's updates of their common rows' blocks together. Returns the failing pivot
 * or -1, *col the failing column. */
static int factor_pair3(grit_blockchol *b, int p, double *lo, double *hi, int *col) {
  for (int i = 0; i < 2; ++i) {
    const int c = p + i;
    double *L = b->Lx + b->doff[c], *inv = b->inv + b->m->tree_dofadr[b->order[c]];
    const int bad = chol_block(L, 3, inv);
    if (bad >= 0) return *col = c, bad;
    for (int j = 0; j < 3; ++j) {
      *lo = L[j * 3 + j] < *lo ? L[j * 3 + j] : *lo;
      *hi = L[j * 3 + j] > *hi ? L[j * 3 + j] : *hi;
    }
    if (i == 0) grit_blockchol_pair3_lead_avx2(b, c, L, inv);
    else grit_blockchol_pair3_avx2(b, c, L, inv);
  }
  return -1;
}

grit_status grit_blockchol_factor(grit_blockchol *b, const double *diag, const double *cblock, const int *poff,
                                  const int *idx, const unsigned char *tree_on, double *cond, char *message) {
  const grit_model *m = b->m;
  const int nt = b->nt, *dim = m->tree_dofnum;
  double *Lx = b->Lx;
  /* H into the factor's blocks: off-diagonal blocks zero (fill), then the tree and coupling blocks */
  for (int p = 0; p < nt; ++p) {
    const int t = b->order[p], n = dim[t];
    if (tree_on && !tree_on[t]) continue;
    /* a tree with its own sparsity and alone in its part: factored in tree order (treechol.h), which
     * gathers its pattern from diag itself (no copy of the block) */
    b->tree_sp[t] = 0;
    if (b->chain) { /* (NULL: no tree may; tree_tc all zero) */
      b->tree_tc[t] = b->chain[t] && b->part_ptr[b->part[t] + 1] - b->part_ptr[b->part[t]] == 1;
      if (b->tree_tc[t]) continue;
    }
    /* a big tree alone in its part: its block over its nonzeros in a fill-reducing order when that
     * costs less (blockchol_sparse.c), read from diag itself (no copy of the block) */
    if (b->sp[t] && b->part_ptr[b->part[t] + 1] - b->part_ptr[b->part[t]] == 1) {
      grit_bigsparse_prepare(b->sp[t], diag + m->tree_madr[t], !b->no_sparse);
      b->tree_sp[t] = (unsigned char)grit_bigsparse_use(b->sp[t]);
      if (b->tree_sp[t]) continue;
    }
    if (n == 6) /* a free body's block as a constant-size copy, inlined (the call was 1 % of the step) */
      memcpy(Lx + b->doff[p], diag + m->tree_madr[t], sizeof(double) * 36);
    else
      memcpy(Lx + b->doff[p], diag + m->tree_madr[t], sizeof(double) * (size_t)n * n);
    if (b->sp[t] && grit_bigsparse_lowrank_rows(b->sp[t]) > 0) /* the rows held apart, densely */
      grit_bigsparse_lowrank_to_dense(b->sp[t], Lx + b->doff[p]);
    const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
    if (e1 > e0) {
      const size_t end = (size_t)b->roff[e1 - 1] + (size_t)dim[b->order[b->rows[e1 - 1]]] * n;
      memset(Lx + b->roff[e0], 0, sizeof(double) * (end - (size_t)b->roff[e0]));
    }
  }
  for (int k = 0; k < b->npairs; ++k) { /* (a pair's trees are both on or both off) */
    const struct pair_map *q = &b->pairs[k];
    if (tree_on && !tree_on[q->tree]) continue;
    const double *C = cblock + poff[idx[k]]; /* nb x na, row-major */
    double *D = Lx + q->dst;
    if (!q->transposed) {
      memcpy(D, C, sizeof(double) * (size_t)q->na * q->nb);
    } else {
      for (int i = 0; i < q->na; ++i)
        for (int j = 0; j < q->nb; ++j) D[i * q->nb + j] = C[j * q->na + i];
    }
  }
  /* right-looking: factor the diagonal block, solve the column's blocks, update the later blocks */
  double lo = INFINITY, hi = 0.0;
  const int avx2 = grit_blockchol_have_avx2(), pairs = avx2 && b->any3 && !b->no_small && !b->no_col3 && !b->no_pair3;
  b->last_flops = 0.0;
  for (int p = 0; p < nt; ++p) {
    const int n = dim[b->order[p]];
    if (tree_on && !tree_on[b->order[p]]) continue;
    /* a supernode's two particle columns together: the same bits (a pair's columns have rows, so neither
     * tree is alone in its part: none is factored in tree order or by a big tree's sparse factor) */
    if (pairs && b->pair3[p] && (!tree_on || tree_on[b->order[p + 1]])) {
      b->last_flops += b->col_flops[p];
      b->last_flops += b->col_flops[p + 1];
      int c = p;
      const int bad = factor_pair3(b, p, &lo, &hi, &c);
      if (bad >= 0)
        return grit_set_error(message, GRIT_ERR_NUMERICAL,
                              "Hessian factorization: not positive definite or not finite (block Cholesky, tree "
                              "%d, dof %d)",
                              b->order[c], m->tree_dofadr[b->order[c]] + bad);
      ++p;
      continue;
    }
    if (b->chain && b->tree_tc[b->order[p]]) {
      const int t = b->order[p], adr = m->tree_dofadr[t];
      b->last_flops += grit_treechol_flops(b->tc, t);
      const int bad = grit_treechol_factor(b->tc, t, diag + m->tree_madr[t], Lx + b->doff[p], b->inv + adr, &lo, &hi);
      if (bad >= 0)
        return grit_set_error(message, GRIT_ERR_NUMERICAL,
                              "Hessian factorization: not positive definite or not finite (tree-ordered Cholesky, "
                              "tree %d, dof %d)",
                              t, adr + bad);
      continue;
    }
    if (b->tree_sp[b->order[p]]) {
      const int t = b->order[p];
      b->last_flops += grit_bigsparse_flops(b->sp[t]);
      const int bad = grit_bigsparse_factor(b->sp[t], diag + m->tree_madr[t], &lo, &hi);
      if (bad >= 0)
        return grit_set_error(message, GRIT_ERR_NUMERICAL,
                              "Hessian factorization: not positive definite or not finite (sparse Cholesky of a "
                              "big tree, tree %d, dof %d)",
                              t, m->tree_dofadr[t] + bad);
      continue;
    }
    b->last_flops += b->col_flops[p];
    /* a free body's 6 and a 7-joint arm's 7 as constants, so that the compiler unrolls the inner loops */
    const int bad = n == 6   ? factor_column(b, p, 6, &lo, &hi, avx2, 0, 0)
                    : n == 7 ? factor_column(b, p, 7, &lo, &hi, 0, 0, 0)
                    : n == 3 && (b->col_m[p] == 3 || b->colptr[p + 1] == b->colptr[p])
                        ? factor_column(b, p, 3, &lo, &hi, avx2, 0, 3)
                             : factor_column(b, p, n, &lo, &hi, 0, avx2, 0);
    if (bad >= 0)
      return grit_set_error(message, GRIT_ERR_NUMERICAL,
                            "Hessian factorization: not positive definite or not finite (block Cholesky, tree %d, "
                            "dof %d)",
                            b->order[p], m->tree_dofadr[b->order[p]] + bad);
  }
  *cond = nt > 0 && lo > 0 ? (hi / lo) * (hi / lo) : 1.0;
  return GRIT_OK;
}

const int *grit_blockchol_parts(const grit_blockchol *b, int *nparts) {
  if (nparts) *nparts = b->nparts;
  return b->part;
}

void grit_blockchol_big_kernel(grit_blockchol *b, int allow) { b->no_big = !allow; }
void grit_blockchol_sparse_trees(grit_blockchol *b, int allow) { b->no_sparse = !allow; }

void grit_blockchol_sparse_kernel(grit_blockchol *b, int allow) {
  for (int t = 0; t < b->nt; ++t)
    if (b->sp[t]) grit_bigsparse_kernel(b->sp[t], allow);
}

void grit_blockchol_sparse_snodes(grit_blockchol *b, int allow) {
  for (int t = 0; t < b->nt; ++t)
    if (b->sp[t]) grit_bigsparse_snodes(b->sp[t], allow);
}

int grit_blockchol_lowrank_add(grit_blockchol *b, int tree, const double *J, double g) {
  return b->sp[tree] && !b->no_sparse && grit_bigsparse_lowrank_add(b->sp[tree], J, g);
}

void grit_blockchol_lowrank_clear(grit_blockchol *b, int tree) {
  if (b->sp[tree]) grit_bigsparse_lowrank_clear(b->sp[tree]);
}
void grit_blockchol_particle_kernel(grit_blockchol *b, int allow) { b->no_col3 = !allow; }
void grit_blockchol_pair_kernel(grit_blockchol *b, int allow) { b->no_pair3 = !allow; }

void grit_blockchol_small_kernel(grit_blockchol *b, int allow) { b->no_small = !allow; }

void grit_blockchol_keep_order(grit_blockchol *b, int allow) { b->no_keep = !allow; }

int grit_blockchol_forget_order(grit_blockchol *b) {
  b->keep_ok = 0;
  return b->layout_kept;
}

void grit_blockchol_fast_order(grit_blockchol *b, int allow) {
  b->no_fast_order = !allow;
  b->uniform = allow && b->words > 1 ? b->uniform_all : 0;
}

void grit_blockchol_set_chain(grit_blockchol *b, const unsigned char *chain) {
  b->chain = chain;
  memset(b->tree_tc, 0, (size_t)b->nt); /* the factors to come decide (tested only while chain is set) */
}

double grit_blockchol_flops(const grit_blockchol *b) { return b->last_flops; }
