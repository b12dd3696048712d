/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol.c — block-sparse Cholesky on the tree graph. See blockchol.h. */
#include "blockchol.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status_internal.h"

struct grit_blockchol {
  const grit_model *m;
  int nt, words;     /* trees; 64-bit words of one adjacency row */
  int *order, *pos;  /* (nt) elimination order: tree of position p, position of tree t */
  int *deg;          /* (nt) weighted degree (dofs of the neighbours) during the analysis */
  unsigned char *done;
  uint64_t *adj;     /* (nt x words) the elimination graph's adjacency during the analysis */
  int *colptr;       /* (nt + 1) column p's blocks: entries colptr[p] .. colptr[p+1]-1 */
  int *doff;         /* (nt) offset of position p's diagonal block (n x n, row-major, lower used) */
  int *rows, *roff;  /* (entries) row position of each off-diagonal block, its offset (n_row x n_col) */
  int cap_rows, cap_roff;
  int npairs;        /* the analysed coupled pairs */
  struct pair_map {  /* (pairs) where each coupling block goes */
    int dst;         /* offset of its block in Lx */
    int na, nb;      /* dofs of the pair's trees a < b: the caller's block is nb x na */
    int transposed;  /* the block in L is (rows a, cols b): the caller's block transposed */
    int tree;        /* tree a */
  } *pairs;
  int cap_pairs;
  double *Lx;        /* the factor's blocks */
  size_t cap_x;
  double flops;      /* of a factorization of every tree */
  double *col_flops; /* (nt) of each position's column */
  double last_flops; /* of the last factorization (the trees it was asked for) */
  double *T;         /* (nv x RHS_CHUNK) right-hand sides transposed, for the many-column solves */
  double *inv;       /* (nv) reciprocals of the pivots, by dof */
  int nparts;        /* connected components of the factor's graph (parts): H has no block between two */
  int *part;         /* (nt) the part of each tree */
  int *part_ptr;     /* (nt + 1) part k's positions: part_pos[part_ptr[k]] .. [part_ptr[k+1]-1], ascending */
  int *part_pos;     /* (nt) */
};

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
 * any x86-64 processor. */
#if defined(__GNUC__) && defined(__x86_64__)
#define GRIT_BLOCKCHOL_AVX2 1
#include <immintrin.h>
#else
#define GRIT_BLOCKCHOL_AVX2 0
#endif

/* Right-hand sides solved together: transposed into rows of this many, the inner loops run along them. */
#define RHS_CHUNK 64

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
  b->T = calloc((size_t)m->nv * RHS_CHUNK + 1, sizeof(double));
  b->inv = calloc((size_t)m->nv + 1, sizeof(double));
  b->col_flops = calloc(nt, sizeof(double));
  b->part = calloc(nt, sizeof(int));
  b->part_ptr = calloc(nt + 1, sizeof(int));
  b->part_pos = calloc(nt, sizeof(int));
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
  if (!b->order || !b->pos || !b->deg || !b->done || !b->adj || !b->colptr || !b->doff || !b->T || !b->inv || !b->col_flops ||
      !b->part || !b->part_ptr || !b->part_pos || !b->rows || !b->roff || !b->Lx || !b->pairs) {
    grit_blockchol_free(b);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the block Cholesky");
  }
  *out = b;
  return GRIT_OK;
}

void grit_blockchol_free(grit_blockchol *b) {
  if (!b) return;
  free(b->order), free(b->pos), free(b->deg), free(b->done), free(b->adj), free(b->colptr), free(b->doff);
  free(b->rows), free(b->roff), free(b->pairs), free(b->Lx), free(b->T), free(b->inv), free(b->col_flops);
  free(b->part), free(b->part_ptr), free(b->part_pos);
  free(b);
}

/* Grows *p (elements of `size` bytes) to hold at least n, by doubling; 0 on failure (*p unchanged). */
static int grow(void **p, int *cap, int n, size_t size) {
  if (n <= *cap) return 1;
  int c = *cap > 0 ? *cap : 16;
  while (c < n) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}

static int weighted_degree(const grit_blockchol *b, const uint64_t *row) {
  int d = 0;
  for (int w = 0; w < b->words; ++w)
    for (uint64_t x = row[w]; x; x &= x - 1) d += b->m->tree_dofnum[64 * w + __builtin_ctzll(x)];
  return d;
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

/* Analysis phase 1: the graph of trees coupled by the pairs (bit rows) and each tree's weighted degree. */
static void build_graph(grit_blockchol *b, int npairs, const int *pa, const int *pb) {
  const int nt = b->nt, W = b->words;
  memset(b->adj, 0, sizeof(uint64_t) * (size_t)nt * (size_t)W);
  memset(b->done, 0, (size_t)nt);
  for (int k = 0; k < npairs; ++k) {
    b->adj[(size_t)pa[k] * W + pb[k] / 64] |= 1ull << (pb[k] % 64);
    b->adj[(size_t)pb[k] * W + pa[k] / 64] |= 1ull << (pa[k] % 64);
  }
  for (int t = 0; t < nt; ++t) b->deg[t] = weighted_degree(b, b->adj + (size_t)t * W);
}

/* Analysis phase 2: the coupled trees grouped by connected component, in index order within each:
 * component with root r (its first tree) is left[seg[r] .. seg[r+1]-1] (left = b->colptr, seg =
 * b->part_ptr; comp = b->part holds the union-find parents, then each tree's root; all three are free
 * until the end of the analysis). */
static void group_components(grit_blockchol *b, int npairs, const int *pa, const int *pb) {
  const int nt = b->nt;
  int *left = b->colptr, *comp = b->part, *seg = b->part_ptr;
  for (int t = 0; t < nt; ++t) comp[t] = t;
  for (int k = 0; k < npairs; ++k) {
    int x = pa[k], y = pb[k];
    while (comp[x] != x) x = comp[x] = comp[comp[x]];
    while (comp[y] != y) y = comp[y] = comp[comp[y]];
    if (x != y) comp[x < y ? y : x] = x < y ? x : y;
  }
  memset(seg, 0, sizeof(int) * (size_t)(nt + 1));
  for (int t = 0; t < nt; ++t) {
    comp[t] = comp[comp[t]]; /* roots come first and point at themselves: one step reaches them */
    if (b->deg[t] > 0) seg[comp[t] + 1]++;
  }
  for (int t = 0; t < nt; ++t) seg[t + 1] += seg[t];
  for (int t = 0; t < nt; ++t) /* counting sort; b->pos is the cursor scratch, written for good later */
    b->pos[t] = seg[t];
  for (int t = 0; t < nt; ++t)
    if (b->deg[t] > 0) left[b->pos[comp[t]]++] = t;
}

/* Eliminates tree k at position p: its neighbours (the column's blocks, appended to rows as trees)
 * become a clique. */
static grit_status eliminate(grit_blockchol *b, int k, int p, int *ne, char *message) {
  const int W = b->words;
  b->order[p] = k;
  b->pos[k] = p;
  b->done[k] = 1;
  b->doff[p] = *ne;
  uint64_t *rk = b->adj + (size_t)k * W;
  for (int w = 0; w < W; ++w)
    for (uint64_t x = rk[w]; x; x &= x - 1) {
      const int u = 64 * w + __builtin_ctzll(x);
      if (!grow((void **)&b->rows, &b->cap_rows, *ne + 1, sizeof(int)))
        return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the fill");
      b->rows[(*ne)++] = u; /* a tree for now; its position once all are ordered */
      uint64_t *ru = b->adj + (size_t)u * W;
      for (int v = 0; v < W; ++v) ru[v] |= rk[v];
      ru[u / 64] &= ~(1ull << (u % 64));
      ru[k / 64] &= ~(1ull << (k % 64));
      b->deg[u] = weighted_degree(b, ru);
    }
  return GRIT_OK;
}

/* Analysis phase 3, the elimination order by minimum degree: eliminate the tree with the fewest
 * neighbouring dofs (ties: the lowest index, for determinism); its neighbours become a clique. Column p's
 * blocks are its neighbours then. Eliminating a tree changes degrees in its connected component only, so
 * the components are ordered one after the other, each by its own search: within each the same order as
 * one search over all trees (the same fill), at a cost of the sum of the components' squared sizes
 * instead of the square of the number of coupled trees (a clutter of 640 objects in piles of ten). Trees
 * coupled to none come first (no fill, no search). *ne: the number of off-diagonal blocks. */
static grit_status order_min_degree(grit_blockchol *b, int *ne, char *message) {
  const int nt = b->nt;
  int *left = b->colptr, *seg = b->part_ptr, p = 0;
  *ne = 0;
  for (int t = 0; t < nt; ++t) {
    if (b->deg[t] > 0) continue;
    b->order[p] = t;
    b->pos[t] = p;
    b->done[t] = 1;
    b->doff[p++] = 0; /* column p is empty: doff holds the columns' starts until the end */
  }
  for (int r = 0; r < nt; ++r)
    for (int c0 = seg[r], c1 = seg[r + 1]; c1 > c0; ++p) {
      int kk = c0;
      for (int i = c0 + 1; i < c1; ++i)
        if (b->deg[left[i]] < b->deg[left[kk]]) kk = i;
      const int k = left[kk];
      memmove(left + kk, left + kk + 1, sizeof(int) * (size_t)(c1 - kk - 1)); /* keep index order: ties */
      --c1;
      grit_status s = eliminate(b, k, p, ne, message);
      if (s != GRIT_OK) return s;
    }
  b->colptr[nt] = *ne;
  for (int q = 0; q < nt; ++q) b->colptr[q] = b->doff[q];
  return GRIT_OK;
}

/* Analysis phase 4: rows as positions, ascending in each column; the blocks' offsets (*nx values in
 * all); the FLOP count. */
static void lay_out_columns(grit_blockchol *b, size_t *nx) {
  const int *dim = b->m->tree_dofnum;
  double fl = 0.0;
  *nx = 0;
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
    int mrows = 0;
    for (int i = 0; i < len; ++i) {
      const int mi = dim[b->order[r[i]]];
      b->roff[b->colptr[p] + i] = (int)*nx;
      *nx += (size_t)mi * n;
      mrows += mi;
    }
    /* n^3/3 for the diagonal block, m n^2 for the triangular solves, m^2 n for the update (lower half
     * of the m x m Schur complement, two operations per multiply-add) */
    b->col_flops[p] = (double)n * n * n / 3.0 + (double)mrows * n * n + (double)mrows * mrows * n;
    fl += b->col_flops[p];
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
  if (!grow((void **)&b->pairs, &b->cap_pairs, npairs, sizeof *b->pairs))
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory");
  b->npairs = npairs;
  for (int k = 0; k < npairs; ++k) {
    const int qa = b->pos[pa[k]], qb = b->pos[pb[k]];
    const int col = qa < qb ? qa : qb, row = qa < qb ? qb : qa;
    int e = b->colptr[col];
    while (b->rows[e] != row) ++e; /* present by construction */
    b->pairs[k].dst = b->roff[e];
    b->pairs[k].na = dim[pa[k]];
    b->pairs[k].nb = dim[pb[k]];
    b->pairs[k].transposed = qa > qb;
    b->pairs[k].tree = pa[k];
  }
  return GRIT_OK;
}

/* The symbolic analysis in its phases: the graph, its components, the minimum-degree order with the
 * fill, the columns' layout, the values' storage, the parts (find_parts), the pairs' destinations. */
grit_status grit_blockchol_analyze(grit_blockchol *b, int npairs, const int *pa, const int *pb, char *message) {
  build_graph(b, npairs, pa, pb);
  group_components(b, npairs, pa, pb);
  int ne;
  grit_status s = order_min_degree(b, &ne, message);
  if (s != GRIT_OK) return s;
  if (!grow((void **)&b->roff, &b->cap_roff, ne, sizeof(int)))
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the fill");
  size_t nx;
  lay_out_columns(b, &nx);
  s = reserve_values(b, nx, message);
  if (s != GRIT_OK) return s;
  find_parts(b);
  return place_pairs(b, npairs, pa, pb, message);
}

/* ------------------------------------------------------------------------------- numeric */

/* In-place Cholesky of the n x n row-major block L (lower triangle read and written), the reciprocal
 * pivots into rinv (the divisions done once). Returns the failing column, or -1. */
static inline int chol_block(double *L, int n, double *rinv) {
  for (int j = 0; j < n; ++j) {
    double *lj = L + (size_t)j * n;
    double d = lj[j];
    for (int k = 0; k < j; ++k) d -= lj[k] * lj[k];
    if (!(d > 0.0) || !isfinite(d)) return j; /* not positive, NaN or infinite */
    const double r = sqrt(d), inv = 1.0 / r;
    lj[j] = r;
    rinv[j] = inv;
    for (int i = j + 1; i < n; ++i) {
      double *li = L + (size_t)i * n;
      double s = li[j];
      for (int k = 0; k < j; ++k) s -= li[k] * lj[k];
      li[j] = s * inv;
    }
  }
  return -1;
}

/* Column p of the factor (its tree has n dofs): the diagonal block's Cholesky, X := X L^-T for the
 * column's blocks, and their Schur complement into the later blocks. Returns the failing pivot or -1.
 * Inlined with constant n for the common tree sizes. */
static inline int factor_column(grit_blockchol *b, int p, int n, double *lo, double *hi) {
  const int *dim = b->m->tree_dofnum;
  double *Lx = b->Lx;
  double *L = Lx + b->doff[p];
  /* reciprocal pivots for the multiplications below (a division per entry was a third of the time) */
  double *inv = b->inv + b->m->tree_dofadr[b->order[p]];
  const int bad = chol_block(L, n, inv);
  if (bad >= 0) return bad;
  for (int j = 0; j < n; ++j) {
    *lo = L[j * n + j] < *lo ? L[j * n + j] : *lo; /* pivots are positive and finite here */
    *hi = L[j * n + j] > *hi ? L[j * n + j] : *hi;
  }
  const int e0 = b->colptr[p], e1 = b->colptr[p + 1];
  for (int e = e0; e < e1; ++e) { /* X := X L^-T: a forward substitution per row, column by column so
                                     that the rows' independent chains overlap */
    const int mi = dim[b->order[b->rows[e]]];
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
    const int qa = b->rows[ea], ma = dim[b->order[qa]];
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
      const int qb = b->rows[eb], mb = dim[b->order[qb]];
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

grit_status grit_blockchol_factor(grit_blockchol *b, const double *diag, const double *cblock, const int *poff,
                                  const int *idx, const unsigned char *tree_on, double *cond, char *message) {
  const grit_model *m = b->m;
  const int nt = b->nt, *dim = m->tree_dofnum;
  double *Lx = b->Lx;
  /* H into the factor's blocks: off-diagonal blocks zero (fill), then the tree and coupling blocks */
  for (int p = 0; p < nt; ++p) {
    const int t = b->order[p], n = dim[t];
    if (tree_on && !tree_on[t]) continue;
    memcpy(Lx + b->doff[p], diag + m->tree_madr[t], sizeof(double) * (size_t)n * n);
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
  b->last_flops = 0.0;
  for (int p = 0; p < nt; ++p) {
    const int n = dim[b->order[p]];
    if (tree_on && !tree_on[b->order[p]]) continue;
    b->last_flops += b->col_flops[p];
    /* a free body's 6 and a 7-joint arm's 7 as constants, so that the compiler unrolls the inner loops */
    const int bad = n == 6 ? factor_column(b, p, 6, &lo, &hi)
                    : n == 7 ? factor_column(b, p, 7, &lo, &hi)
                             : factor_column(b, p, n, &lo, &hi);
    if (bad >= 0)
      return grit_set_error(message, GRIT_ERR_NUMERICAL,
                            "Hessian factorization: not positive definite or not finite (block Cholesky, tree %d, "
                            "dof %d)",
                            b->order[p], m->tree_dofadr[b->order[p]] + bad);
  }
  *cond = nt > 0 && lo > 0 ? (hi / lo) * (hi / lo) : 1.0;
  return GRIT_OK;
}

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

/* The substitutions L L^T X = Y on the nc columns held in b->T (row i: dof i of every column), over
 * the positions pos[0..npos-1] (ascending; NULL: every position). Compiled twice (substitute_base and
 * substitute_avx2, below), each not inlined into solve_chunk: on its own it keeps its pointers in
 * registers (callgrind, clutter 40 settled, Similar: the solves -4.8 %). */
static ALWAYS_INLINE void substitute_in(grit_blockchol *b, int nc, const int *pos, int npos) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  const double *Lx = b->Lx;
  double *T = b->T;
  enum { C = RHS_CHUNK };
  for (int i = 0; i < npos; ++i) { /* L y = b */
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    const double *L = Lx + b->doff[p];
    double *Y = T + (size_t)adr[t] * C;
    if (rows_zero(Y, n, nc)) continue; /* y = L^-1 0 = 0, and it subtracts nothing from later rows */
    if (n == 6) {
      diag_solve6(L, Y, nc, 1);
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
      for (int r = 0; r < mi; ++r)
        for (int k = 0; k < n; ++k) {
          const double x = X[r * n + k], *yk = Y + k * C;
          double *zr = Z + r * C;
          for (int q = 0; q < nc; ++q) zr[q] -= x * yk[q];
        }
    }
  }
  for (int i = npos - 1; i >= 0; --i) { /* L^T x = y */
    const int p = pos ? pos[i] : i, t = b->order[p], n = dim[t];
    const double *L = Lx + b->doff[p];
    double *Y = T + (size_t)adr[t] * C;
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int ti = b->order[b->rows[e]], mi = dim[ti];
      const double *X = Lx + b->roff[e];
      const double *Z = T + (size_t)adr[ti] * C;
      if (mi == 6) {
        sub_xtz(X, 6, n, Z, Y, nc);
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
  substitute_in(b, nc, pos, npos);
}

#if GRIT_BLOCKCHOL_AVX2
static NOINLINE __attribute__((target("avx2"))) void substitute_avx2(grit_blockchol *b, int nc, const int *pos,
                                                                      int npos) {
  substitute_in(b, nc, pos, npos);
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

/* Columns cols[k0..k0+w-1] (w = 1 or 2) of B moved into (in) or out of (!in) columns k0.. of b->T, over
 * the rows of the positions (every row if pos is NULL). Two columns at a time, so that each row of T
 * is read or written as a pair (the transposition was a fifth of the solves' instructions one entry
 * at a time). */
static inline void move_columns(grit_blockchol *b, double *B, const int *cols, int k0, int w, const int *pos, int npos,
                                int in) {
  const int nv = b->m->nv, *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  double *x0 = B + (size_t)cols[k0] * nv, *x1 = B + (size_t)cols[k0 + w - 1] * nv;
  for (int i = 0; i < (pos ? npos : 1); ++i) {
    const int j0 = pos ? adr[b->order[pos[i]]] : 0, j1 = pos ? j0 + dim[b->order[pos[i]]] : nv;
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
/* move_columns for four columns cols[k0..k0+3], with AVX2: each 4 x 4 tile (four rows of the four
 * columns) loaded as four vectors, transposed in registers and stored as four (the copies of
 * move_columns, in fewer instructions); the rows left over one at a time. */
static __attribute__((target("avx2"))) void move_columns4(grit_blockchol *b, double *B, const int *cols, int k0,
                                                          const int *pos, int npos, int in) {
  const int nv = b->m->nv, *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr;
  double *x[4];
  for (int l = 0; l < 4; ++l) x[l] = B + (size_t)cols[k0 + l] * nv;
  for (int i = 0; i < (pos ? npos : 1); ++i) {
    const int j0 = pos ? adr[b->order[pos[i]]] : 0, j1 = pos ? j0 + dim[b->order[pos[i]]] : nv;
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
    for (; j < j1; ++j, t += RHS_CHUNK)
      for (int l = 0; l < 4; ++l) {
        if (in) t[l] = x[l][j];
        else x[l][j] = t[l];
      }
  }
}
#endif

/* The columns into (in) or out of (!in) b->T: four at a time with AVX2, else (and the last) two. */
static void move_chunk(grit_blockchol *b, double *B, const int *cols, int nc, const int *pos, int npos, int in) {
  int k = 0;
#if GRIT_BLOCKCHOL_AVX2
  if (__builtin_cpu_supports("avx2"))
    for (; k + 4 <= nc; k += 4) move_columns4(b, B, cols, k, pos, npos, in);
#endif
  for (; k < nc; k += 2) move_columns(b, B, cols, k, k + 1 < nc ? 2 : 1, pos, npos, in);
}

static void solve_chunk(grit_blockchol *b, double *B, const int *cols, int nc, const int *pos, int npos) {
  move_chunk(b, B, cols, nc, pos, npos, 1); /* in: every row, or the rows of the positions' trees */
  substitute(b, nc, pos, npos);
  move_chunk(b, B, cols, nc, pos, npos, 0); /* out: the same rows */
}

static void solve_many(grit_blockchol *b, double *B, int nrhs) {
  int cols[RHS_CHUNK];
  for (int c0 = 0; c0 < nrhs; c0 += RHS_CHUNK) {
    const int nc = nrhs - c0 < RHS_CHUNK ? nrhs - c0 : RHS_CHUNK;
    for (int k = 0; k < nc; ++k) cols[k] = c0 + k;
    solve_chunk(b, B, cols, nc, NULL, b->nt);
  }
}

const int *grit_blockchol_parts(const grit_blockchol *b, int *nparts) {
  if (nparts) *nparts = b->nparts;
  return b->part;
}

void grit_blockchol_solve_parts(grit_blockchol *b, double *B, int nrhs, const int *part) {
  int cols[RHS_CHUNK];
  unsigned char done[RHS_CHUNK];
  for (int c0 = 0; c0 < nrhs; c0 += RHS_CHUNK) {
    const int nc = nrhs - c0 < RHS_CHUNK ? nrhs - c0 : RHS_CHUNK;
    memset(done, 0, sizeof done);
    for (int k = 0; k < nc; ++k) { /* the chunk's columns of k's part together */
      if (done[k]) continue;
      const int pk = part[c0 + k];
      int n = 0;
      for (int l = k; l < nc; ++l)
        if (!done[l] && part[c0 + l] == pk) cols[n++] = c0 + l, done[l] = 1;
      if (pk < 0) solve_chunk(b, B, cols, n, NULL, b->nt);
      else solve_chunk(b, B, cols, n, b->part_pos + b->part_ptr[pk], b->part_ptr[pk + 1] - b->part_ptr[pk]);
    }
  }
}

/* Column p's forward substitution (its tree has n dofs): y := L_pp^-1 y, then the later trees' rows
 * z -= X y. Inlined with constant n for the common tree sizes (grit_blockchol_solve). */
static inline void solve_forward_column(const grit_blockchol *b, int p, int n, double *x) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr, t = b->order[p];
  const double *Lx = b->Lx, *L = Lx + b->doff[p], *inv = b->inv + adr[t];
  double *y = x + adr[t];
  for (int j = 0; j < n; ++j) {
    double s = y[j];
    for (int k = 0; k < j; ++k) s -= L[j * n + k] * y[k];
    y[j] = s * inv[j];
  }
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
    const int ti = b->order[b->rows[e]], mi = dim[ti];
    const double *X = Lx + b->roff[e];
    double *z = x + adr[ti];
    for (int r = 0; r < mi; ++r) {
      double s = 0.0;
      for (int k = 0; k < n; ++k) s += X[r * n + k] * y[k];
      z[r] -= s;
    }
  }
}

/* Column p's backward substitution: y -= X^T z over the later trees' rows, then y := L_pp^-T y. */
static inline void solve_backward_column(const grit_blockchol *b, int p, int n, double *x) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr, t = b->order[p];
  const double *Lx = b->Lx, *L = Lx + b->doff[p], *inv = b->inv + adr[t];
  double *y = x + adr[t];
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
    const int ti = b->order[b->rows[e]], mi = dim[ti];
    const double *X = Lx + b->roff[e];
    const double *z = x + adr[ti];
    for (int r = 0; r < mi; ++r)
      for (int k = 0; k < n; ++k) y[k] -= X[r * n + k] * z[r];
  }
  for (int j = n - 1; j >= 0; --j) {
    double s = y[j];
    for (int i = j + 1; i < n; ++i) s -= L[i * n + j] * y[i];
    y[j] = s * inv[j];
  }
}

void grit_blockchol_solve(grit_blockchol *b, double *B, int nrhs, const unsigned char *tree_on) {
  if (nrhs >= 4 && !tree_on) {
    solve_many(b, B, nrhs);
    return;
  }
  const int nt = b->nt, nv = b->m->nv, *dim = b->m->tree_dofnum;
  /* a free body's 6 and a 7-joint arm's 7 as constants (the same sums in the same order): the
   * arm-and-ball's Newton solve was 6 % of its step's instructions with variable sizes */
  for (int c = 0; c < nrhs; ++c) {
    double *x = B + (size_t)c * nv;
    for (int p = 0; p < nt; ++p) { /* L y = b, by columns */
      const int n = dim[b->order[p]];
      if (tree_on && !tree_on[b->order[p]]) continue;
      if (n == 6) solve_forward_column(b, p, 6, x);
      else if (n == 7) solve_forward_column(b, p, 7, x);
      else solve_forward_column(b, p, n, x);
    }
    for (int p = nt - 1; p >= 0; --p) { /* L^T x = y */
      const int n = dim[b->order[p]];
      if (tree_on && !tree_on[b->order[p]]) continue;
      if (n == 6) solve_backward_column(b, p, 6, x);
      else if (n == 7) solve_backward_column(b, p, 7, x);
      else solve_backward_column(b, p, n, x);
    }
  }
}

double grit_blockchol_flops(const grit_blockchol *b) { return b->last_flops; }
