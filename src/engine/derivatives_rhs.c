/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rhs.c — the right-hand sides of the derivative call's batched solves: -dr/dtheta of a
 * pass's directions copied out of the residual's dual lanes into the batch (one column at a time, or a
 * pass's columns four lanes at a time), the rows the solve must not read zeroed, the Lagged contacts'
 * terms added; a full batch is solved and written (grit_deriv_flush, derivatives_columns.c). With the
 * block factor's parts, each column holds only the rows its tree's island and part can touch, packed
 * (grit_deriv_rhs_prepare, below). */
#include <string.h>

#include "constraints.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "solver.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define GRIT_DERIV_AVX2 1
#include <immintrin.h>
#else
#define GRIT_DERIV_AVX2 0
#endif

/* x_i = -r_i.d[j], i0 <= i < i1: two at a time (one lane of the residual's duals, 72 bytes apart, into
 * a pair of doubles), which the compiler keeps in one vector per pair. */
static inline void neg_lane(const grit_dual *r, int j, int i0, int i1, double *x) {
  int i = i0;
  for (; i + 2 <= i1; i += 2) {
    const double a = r[i].d[j], b = r[i + 1].d[j];
    x[i] = -a, x[i + 1] = -b;
  }
  if (i < i1) x[i] = -r[i].d[j];
}

#if GRIT_DERIV_AVX2
/* x[l][i] = -r_i.d[j0 + l], l < 4, i0 <= i < i1, with AVX2: four rows' four lanes (contiguous in each
 * dual) loaded as four vectors, transposed in registers and stored negated as four columns (the sign
 * flipped as -a flips it: the same bits). The rows left over one at a time. */
static __attribute__((target("avx2"))) void neg_lanes4(const grit_dual *r, int j0, int i0, int i1, double *const *x) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  int i = i0;
  for (; i + 4 <= i1; i += 4) {
    const __m256d r0 = _mm256_loadu_pd(r[i].d + j0), r1 = _mm256_loadu_pd(r[i + 1].d + j0);
    const __m256d r2 = _mm256_loadu_pd(r[i + 2].d + j0), r3 = _mm256_loadu_pd(r[i + 3].d + j0);
    const __m256d a = _mm256_unpacklo_pd(r0, r1), c = _mm256_unpackhi_pd(r0, r1);
    const __m256d e = _mm256_unpacklo_pd(r2, r3), g = _mm256_unpackhi_pd(r2, r3);
    _mm256_storeu_pd(x[0] + i, _mm256_xor_pd(sign, _mm256_permute2f128_pd(a, e, 0x20)));
    _mm256_storeu_pd(x[1] + i, _mm256_xor_pd(sign, _mm256_permute2f128_pd(c, g, 0x20)));
    _mm256_storeu_pd(x[2] + i, _mm256_xor_pd(sign, _mm256_permute2f128_pd(a, e, 0x31)));
    _mm256_storeu_pd(x[3] + i, _mm256_xor_pd(sign, _mm256_permute2f128_pd(c, g, 0x31)));
  }
  for (; i < i1; ++i)
    for (int l = 0; l < 4; ++l) x[l][i] = -r[i].d[j0 + l];
}
#endif

/* neg_lane for lanes j0 .. j0 + nl - 1 into x[0 .. nl - 1]: four lanes at a time by neg_lanes4 (AVX2),
 * the others one by one. */
static void neg_lanes(const grit_dual *r, int j0, int nl, int i0, int i1, double *const *x) {
  int l = 0;
#if GRIT_DERIV_AVX2
  if (__builtin_cpu_supports("avx2"))
    for (; l + 4 <= nl; l += 4) neg_lanes4(r, j0 + l, i0, i1, x + l);
#endif
  for (; l < nl; ++l) neg_lane(r, j0 + l, i0, i1, x[l]);
}

/* Compact right-hand sides. A column of tree t (in part p >= 0 of the factor) is read and written only in
 * these rows, so it need hold no others:
 *  - copied: t's rows and its neighbours' (w->adj), which lie in p (col_part is -1 otherwise);
 *  - the Lagged terms: the rows of the trees of t's Lagged contacts (w->lag), t's neighbours;
 *  - zeroed (zero_rhs_rows): p's trees' rows, or in the block form those of t's island;
 *  - solved: grit_blockchol_solve_cols reads and writes the rows of p's trees only. This is the
 *    structure of the factor, not an assumption: p is a connected component of H's graph of trees, L
 *    has no block outside it, so L^-1 and L^-T map a column zero outside p to one zero outside p, and
 *    the solves skip the other trees (blockchol_many.c's move_chunk over the part's runs);
 *  - written: the island's rows (block form, write_batch_blocks) or p's (write_batch).
 * So a column holds the span [span[2t], span[2t+1]) of the union of those trees' rows, packed one after
 * the other in w->rhs: 22 humanoids' columns hold their island's ~27 rows, not 594 rows each 4.75 kB
 * apart (the batch's touched lines then a fraction of its 4.9 MB, a cache miss or a page walk each:
 * docs/performance.md, stop 30 robotab6). Only with the block factor's many-column solves
 * (grit_solver_factor_cols); a parameter's column (t < 0) or one of several parts holds every row. The
 * values are those of full columns: the same operations on the same rows. */
static void widen(int *span, const grit_model *m, int u) {
  const int a0 = m->tree_dofadr[u], a1 = a0 + m->tree_dofnum[u];
  span[0] = a0 < span[0] ? a0 : span[0];
  span[1] = a1 > span[1] ? a1 : span[1];
}

void grit_deriv_rhs_prepare(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nt = m->ntree;
  w->rhs_compact = w->tree_part && !w->no_compact_rhs && grit_solver_factor_cols(d->solver);
  if (!w->rhs_compact) return;
  int *span = w->span, *grp = w->span + 2 * nt; /* per tree; per part, then per island */
  for (int g = 0; g < nt; ++g) grp[2 * g] = m->nv, grp[2 * g + 1] = 0;
  for (int t = 0; t < nt; ++t) widen(grp + 2 * w->tree_part[t], m, t);
  for (int t = 0; t < nt; ++t) span[2 * t] = grp[2 * w->tree_part[t]], span[2 * t + 1] = grp[2 * w->tree_part[t] + 1];
  if (w->blk) { /* the island's rows too (the zeroing and the writes) */
    const grit_jacobian_blocks *J = w->blk;
    for (int g = 0; g < nt; ++g) grp[2 * g] = m->nv, grp[2 * g + 1] = 0;
    for (int t = 0; t < nt; ++t) {
      int *gk = grp + 2 * J->island[t];
      gk[0] = span[2 * t] < gk[0] ? span[2 * t] : gk[0];
      gk[1] = span[2 * t + 1] > gk[1] ? span[2 * t + 1] : gk[1];
    }
    for (int t = 0; t < nt; ++t) {
      const int *gk = grp + 2 * J->island[t];
      span[2 * t] = gk[0] < span[2 * t] ? gk[0] : span[2 * t];
      span[2 * t + 1] = gk[1] > span[2 * t + 1] ? gk[1] : span[2 * t + 1];
    }
  }
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int t = 0; t < nt; ++t) {
    if (w->col_part[t] < 0) { /* several parts: every row */
      span[2 * t] = 0, span[2 * t + 1] = m->nv;
      continue;
    }
    for (int e = w->adj_ptr[t]; e < w->adj_ptr[t + 1]; ++e) widen(span + 2 * t, m, w->adj[e]);
    for (int e = w->lag_ptr[t]; e < w->lag_ptr[t + 1]; ++e)
      for (int q = 0; q < c[w->lag[e]].ntree; ++q) widen(span + 2 * t, m, c[w->lag[e]].tree[q]);
  }
}

/* Room for the batch's next k columns, of tree t (t < 0: a parameter's): their row 0 into x[0..k-1] and
 * w->xcol (pointers into w->rhs that only the columns' rows are read and written through). Compact:
 * the span's rows after the batch's last column (w->rhs's first nv doubles are room, so that a pointer,
 * row span[2t] less, stays in the array); else column l at l nv. The batch never holds more than
 * rhs_cols <= rhs_cap columns of at most nv rows each, so they always fit. */
static void rhs_columns(const grit_model *m, grit_deriv_ws *w, grit_deriv_batch *bt, int t, int k, double **x) {
  const size_t nv = (size_t)m->nv;
  if (!w->rhs_compact) {
    for (int l = 0; l < k; ++l) x[l] = w->xcol[bt->n + l] = w->rhs + (size_t)(bt->n + l) * nv;
    return;
  }
  const int full = t < 0 || w->col_part[t] < 0;
  const size_t lo = full ? 0 : (size_t)w->span[2 * t], rows = full ? nv : (size_t)w->span[2 * t + 1] - lo;
  for (int l = 0; l < k; ++l) x[l] = w->xcol[bt->n + l] = w->rhs + nv + bt->used + (size_t)l * rows - lo;
  bt->used += (size_t)k * rows;
}

/* Zeroes the rows of column col's right-hand side x that the copies of tree t (t >= 0) leave: every
 * row the solve reads, those of p's trees (p < 0: every row); and in the block form those of t's
 * island, which the writes read: the island holds p (it is p's trees joined to others). */
static void zero_rhs_rows(const grit_model *m, const grit_deriv_ws *w, int col, int t, double *x) {
  const int nv = m->nv, p = grit_deriv_column_part(m, w, col);
  if (p < 0) { /* every row but t's, which are copied (a single tree's column: none) */
    const int a0 = m->tree_dofadr[t], a1 = a0 + m->tree_dofnum[t];
    for (int i = 0; i < a0; ++i) x[i] = 0.0;
    for (int i = a1; i < nv; ++i) x[i] = 0.0;
  } else if (w->blk) {
    grit_deriv_blocks_zero_rows(m, w->blk, t, x);
  } else {
    for (int e = w->ptree_ptr[p]; e < w->ptree_ptr[p + 1]; ++e) grit_deriv_zero_tree_rows(m, w->ptree[e], x);
  }
}

/* grit_deriv_add_rhs for the columns cols[l] of lanes l = 0 .. nl - 1 of one pass (tree t, t < 0:
 * every row), with the same values: each right-hand side's rows zeroed, then the lanes copied in one
 * pass over the rows (a row's lanes are contiguous: four columns per 4 x 4 transpose, where the
 * column at a time read each lane 72 bytes apart), then the Lagged terms, as many columns as the
 * batch holds at a time. ws->no_rhs_lanes: a column at a time (grit_deriv_add_rhs). */
grit_status grit_deriv_add_rhs_lanes(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, const int *cols, int nl,
                                     int t, int coupled, double *A, double *B, double *P, int np) {
  const grit_model *m = d->model;
  const int nv = m->nv;
  for (int l0 = 0; l0 < nl;) {
    const int room = w->rhs_cols - bt->n, k = nl - l0 < room ? nl - l0 : room;
    if (w->no_rhs_lanes || k < 1) {
      grit_status s = grit_deriv_add_rhs(d, w, bt, cols[l0], l0, t, coupled, A, B, P, np);
      if (s != GRIT_OK) return s;
      ++l0;
      continue;
    }
    double *x[GRIT_DUAL_N];
    rhs_columns(m, w, bt, t, k, x);
    if (t < 0) {
      neg_lanes(w->r, l0, k, 0, nv, x);
    } else {
      for (int l = 0; l < k; ++l) zero_rhs_rows(m, w, cols[l0 + l], t, x[l]);
      const int e1 = coupled ? w->adj_ptr[t + 1] : w->adj_ptr[t];
      for (int e = w->adj_ptr[t] - 1; e < e1; ++e) { /* t itself, then its neighbours */
        const int u = e < w->adj_ptr[t] ? t : w->adj[e];
        neg_lanes(w->r, l0, k, m->tree_dofadr[u], m->tree_dofadr[u] + m->tree_dofnum[u], x);
      }
      int dof[GRIT_DUAL_N], nd = 0; /* the velocity columns' lanes, their Lagged terms together */
      double *xd[GRIT_DUAL_N];
      for (int l = 0; l < k; ++l) {
        const int col = cols[l0 + l];
        if (col >= nv && col < 2 * nv) dof[nd] = col - nv, xd[nd++] = x[l];
      }
      if (nd > 0 && w->lag_ptr[t + 1] > w->lag_ptr[t]) grit_deriv_lagged_rhs_lanes(m, d, w, t, dof, nd, xd);
    }
    for (int l = 0; l < k; ++l) w->ids[bt->n++] = cols[l0 + l];
    l0 += k;
    if (bt->n == w->rhs_cols) {
      grit_status s = grit_deriv_flush(d, w, bt, A, B, P, np);
      if (s != GRIT_OK) return s;
    }
  }
  return GRIT_OK;
}

/* Adds -dr/dtheta of direction j as the right-hand side of column `col`: the rows of tree t and, if
 * `coupled`, of the trees its constraints couple it to (t < 0: every row). */
grit_status grit_deriv_add_rhs(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, int col, int j, int t, int coupled, double *A,
                           double *B, double *P, int np) {
  const grit_model *m = d->model;
  const int nv = m->nv;
  double *x;
  rhs_columns(m, w, bt, t, 1, &x);
  if (t < 0) {
    neg_lane(w->r, j, 0, nv, x);
  } else {
    zero_rhs_rows(m, w, col, t, x);
    const int e1 = coupled ? w->adj_ptr[t + 1] : w->adj_ptr[t];
    for (int e = w->adj_ptr[t] - 1; e < e1; ++e) { /* t itself, then its neighbours */
      const int u = e < w->adj_ptr[t] ? t : w->adj[e];
      neg_lane(w->r, j, m->tree_dofadr[u], m->tree_dofadr[u] + m->tree_dofnum[u], x);
    }
    if (col >= nv && col < 2 * nv) grit_deriv_lagged_rhs(m, d, w, t, col - nv, x);
  }
  w->ids[bt->n++] = col;
  return bt->n == w->rhs_cols ? grit_deriv_flush(d, w, bt, A, B, P, np) : GRIT_OK;
}
