/* SPDX-License-Identifier: Apache-2.0 */
/* solver_jcols.c — the solver's view of each constraint's nonzero columns of J, found once per solve (J is
 * constant during it): the span per tree for J x and J^T gamma, and on trees of JLIST_MIN_NV dofs or more the
 * list of the columns, which the Hessian's assembly takes (grit_hessian_add_cols) and the products take where
 * the span is much longer. The same sums, the same bits, as over whole rows. See solver_state.h. */
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#endif

#include "constraints.h"
#include "constraints_extra.h"
#include "hessian.h"
#include "hessian_internal.h"
#include "solver.h"
#include "solver_state.h"

#define JLIST_MIN_NV 12 /* (find_jlist) */
#define JCOLS_MIN_NV 8   /* (grit_solver_find_jcols) */

/* The equalities' and tendons' structural columns (find_jlist), when the model has any; whether some tree
 * takes lists. Returns 0 when out of memory. */
int grit_solver_jcols_create(grit_solver *s, const grit_model *m) {
  for (int t = 0; t < m->ntree; ++t) s->jlist_trees |= m->tree_dofnum[t] >= JLIST_MIN_NV;
  for (int t = 0; t < m->ntree; ++t) s->jcols_trees |= m->tree_dofnum[t] >= JCOLS_MIN_NV;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  s->free3 = __builtin_cpu_supports("avx2");
#endif
  if (m->neq + m->ntendon == 0) return 1;
  char *mark = malloc((size_t)m->nv + 1);
  if (!mark) return 0;
  const int total = grit_cx_col_lists(m, mark, NULL, NULL);
  s->cx_ptr = malloc(sizeof(int) * ((size_t)(m->neq + m->ntendon) + 1));
  s->cx_list = malloc(sizeof(int) * ((size_t)total + 1));
  if (s->cx_ptr && s->cx_list) grit_cx_col_lists(m, mark, s->cx_ptr, s->cx_list);
  free(mark);
  return s->cx_ptr && s->cx_list;
}

/* constraint_apply over the constraint's nonzero columns per tree, cols (grit_solver.jcols): kept out of
 * line, for the constraints on a tree of JCOLS_MIN_NV dofs or more only (find_jcols, below), so that the
 * small trees' unrolled products stay as they were. */
__attribute__((noinline)) void grit_solver_apply_cols(const grit_model *m, const grit_constraint *c,
                                                      const double *jstore, const int *cols, const double *x,
                                                      int with_bias, double *y) {
  if (c->dim == 1 && c->ntree == 1 && cols[1] - cols[0] <= 4 && !m->no_short_span) { /* (apply_tree_rows_cols' sum) */
    const double *J = jstore + c->joff[0], *xt = x + m->tree_dofadr[c->tree[0]];
    y[0] = with_bias ? c->b[0] : 0.0;
    double sum = 0.0;
    for (int j = cols[0]; j < cols[1]; ++j) sum += J[j] * xt[j];
    y[0] += sum;
    return;
  }
  if (normal_only(c)) {
    y[0] = y[1] = 0.0;
    constraint_apply_rows_cols(m, c, jstore, cols, x, with_bias, y, 2, 3);
  } else {
    constraint_apply_rows_cols(m, c, jstore, cols, x, with_bias, y, 0, c->dim);
  }
}

/* grit_solver_apply_j's list path (apply_tree_rows_cols' sums, the exact zeros left out). */
__attribute__((noinline)) void grit_solver_apply_list(const grit_solver *s, const grit_model *m, int i, const int *l,
                                                      int nl, const double *x, int with_bias, double *y) {
  const grit_constraint *c = &s->c[i];
  const int n = m->tree_dofnum[c->tree[0]], r0 = normal_only(c) ? 2 : 0, r1 = normal_only(c) ? 3 : c->dim;
  const double *J = s->jstore + c->joff[0], *xt = x + m->tree_dofadr[c->tree[0]];
  if (r0) y[0] = y[1] = 0.0;
  for (int r = r0; r < r1; ++r) {
    y[r] = with_bias ? c->b[r] : 0.0;
    double sum = 0.0;
    for (int e = 0; e < nl; ++e) sum += J[r * n + l[e]] * xt[l[e]];
    y[r] += sum;
  }
}

/* constraint_apply_transpose over the nonzero columns cols (as constraint_apply_cols), only where no entry of y
 * on the trees is -0 (apply_tree_transpose_cols). */
__attribute__((noinline)) void grit_solver_apply_transpose_cols(const grit_model *m, const grit_constraint *c,
                                                                const double *jstore, const int *cols, const double *f,
                                                                double *y, const int *l, int nl) {
  if (l) { /* (its list: apply_tree_transpose_cols' sums, the exact zeros left out) */
    const int n = m->tree_dofnum[c->tree[0]];
    const double *J = jstore + c->joff[0];
    double *yt = y + m->tree_dofadr[c->tree[0]];
    for (int r = 0; r < c->dim; ++r) {
      if (f[r] == 0.0) continue;
      for (int e = 0; e < nl; ++e) yt[l[e]] += J[r * n + l[e]] * f[r];
    }
    return;
  }
  if (c->dim == 1 && c->ntree == 1 && cols[1] - cols[0] <= 4 && !m->no_short_span) { /* (apply_tree_transpose_cols' sums) */
    const double *J = jstore + c->joff[0];
    double *yt = y + m->tree_dofadr[c->tree[0]];
    if (f[0] != 0.0)
      for (int j = cols[0]; j < cols[1]; ++j) yt[j] += J[j] * f[0];
    return;
  }
  for (int k = 0; k < c->ntree; ++k) {
    const int n = m->tree_dofnum[c->tree[k]], adr = m->tree_dofadr[c->tree[k]];
    apply_tree_transpose_cols(jstore + c->joff[k], f, c->dim, n, cols[2 * k], cols[2 * k + 1], y + adr);
  }
}

/* Each constraint's nonzero columns of J per tree, [lo, hi) into s->jcols, for the constraints on a tree of
 * JCOLS_MIN_NV dofs or more (s->jwide; the others keep the small trees' unrolled products): J does not
 * change during the solve, and J x (each line search) and J^T gamma (each evaluation) then run over those
 * columns only (constraint_apply_cols, the same bits). On the composite loop, one tree of 44 dofs whose contacts
 * reach from the root to their body, the two products were 4.5 % of the step. */
/* The lists (s->jlist) for the assembly's chain sums: one-tree constraints of up to 3 rows on a tree of
 * JLIST_MIN_NV dofs or more (hessian_assemble.c's CHAIN_MIN_NV), while the workspace has room for the tree's
 * columns (at most J's own size: it always has). Their span then comes from the list. The softbox's 651
 * rows each scanned 224 columns at each assembly. Returns whether constraint i has a list. */
/* find_jlist's list of a one-row J: its listed columns sc (global dofs, the tree's from adr) where J is not +-0. */
static __attribute__((noinline)) int list_nonzero1(const double *J, const int *sc, int ns, int adr, int n, int *l) {
  int nl = 0;
  for (int e = 0; e < ns; ++e) {
    const unsigned col = (unsigned)(sc[e] - adr);
    if (col >= (unsigned)n) continue;
    l[nl] = (int)col;
    nl += J[col] != 0.0;
  }
  return nl;
}

static inline int find_jlist(grit_solver *s, const grit_model *m, int i, int *used) {
  const grit_constraint *c = &s->c[i];
  const int n = m->tree_dofnum[c->tree[0]];
  s->jloff[i] = -1;
  if (n < JLIST_MIN_NV || c->ntree != 1 || c->dim > 3 || s->no_jlist || *used + n > s->cap_j) return 0;
  s->jloff[i] = *used;
  const double *J = s->jstore + c->joff[0];
  int *l = s->jlist + *used, ns = 0, nl = 0;
  const int *sc = s->cx_ptr && !s->no_cx_jlist ? grit_cx_cols(m, s->cx_ptr, s->cx_list, c->kind, c->source, &ns) : NULL;
  if (sc && (c->dim == 1 ? 4 * ns < n : 8 * ns < n)) { /* (the other columns are +0: the rows are built on these,
                            * grit_cx_rows_cols; a list of more than a quarter of the tree's columns, of an eighth
                            * with 3 rows, costs more than the scan) */
    const int adr = m->tree_dofadr[c->tree[0]];
    if (c->dim == 1) /* (a tendon's row: its list's ~10 instructions a column against the generic loop's ~29; the
                        flag's 288 spring rows, about 46 listed columns each, scanned 340) */
      nl = list_nonzero1(J, sc, ns, adr, n, l);
    else
      for (int e = 0; e < ns; ++e) {
        const int col = sc[e] - adr;
        if (col < 0 || col >= n) continue;
        int nz = 0;
        for (int r = 0; r < c->dim; ++r) nz |= J[r * n + col] != 0.0;
        l[nl] = col;
        nl += nz;
      }
  } else
    nl = grit_hessian_nonzero_columns(J, c->dim, n, l);
  s->jlnum[i] = nl;
  *used += nl;
  return 1;
}

void grit_solver_find_jcols(grit_solver *s, const grit_model *m, int nc) {
  int used = 0;
  const int lists = s->jlist_trees && !s->no_jlist; /* (a robot's trees under JLIST_MIN_NV dofs: none) */
  if (!s->jcols_trees) { /* (free bodies, particles, small arms: no constraint is wide, none has a list; the
                            spans are read only for wide ones) */
    for (int i = 0; i < nc; ++i) s->jwide[i] = 0, s->jloff[i] = -1;
    return;
  }
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *c = &s->c[i];
    int *cols = s->jcols + 4 * i;
    s->jwide[i] = 0;
    s->jloff[i] = -1;
    const int listed = lists && find_jlist(s, m, i, &used);
    for (int k = 0; k < c->ntree; ++k) {
      const int n = m->tree_dofnum[c->tree[k]];
      const double *J = s->jstore + c->joff[k];
      int lo = 0, hi = n;
      if (n >= JCOLS_MIN_NV && !s->no_jcols) {
        s->jwide[i] = 1;
        if (listed) { /* (the first and past the last listed column: the span's scan, as found) */
          const int *l = s->jlist + s->jloff[i], nl = s->jlnum[i];
          lo = nl ? l[0] : n, hi = nl ? l[nl - 1] + 1 : n;
        } else
          grit_hessian_jrow_span(s->H, J, c->dim, n, &lo, &hi);
      }
      cols[2 * k] = lo, cols[2 * k + 1] = hi;
    }
  }
}

/* The lists alone (the refactor's assembly: J as the derivatives found it). */
void grit_solver_find_jlists(grit_solver *s, const grit_model *m, int nc) {
  int used = 0;
  for (int i = 0; i < nc; ++i) s->jloff[i] = -1;
  for (int i = 0; i < nc && s->jlist_trees && !s->no_jlist; ++i) find_jlist(s, m, i, &used);
}

/* A free body's contact (3 rows over its 6 dofs; the tiny scenes' every constraint): J x as the three rows'
 * sums in the lanes of one vector, column by column (each row's sum from +0 over j in order, then added to b:
 * apply_tree_rows' operations), and J^T f row by row over the 6 entries in a vector and a half (with
 * apply_tree_transpose's test of f_r = 0). The loops were ~120 and ~100 instructions a call (boxbox_deep:
 * eight of each a step). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
__attribute__((target("avx2"))) void grit_solver_free3_apply(const double *J, const double *x, const double *b,
                                                             double y[3]) {
  __m256d sv = _mm256_setzero_pd();
  for (int j = 0; j < 6; ++j)
    sv = _mm256_add_pd(sv, _mm256_mul_pd(_mm256_setr_pd(J[j], J[6 + j], J[12 + j], 0.0), _mm256_set1_pd(x[j])));
  /* y_r = b_r + t_r (+0 + t_r without b) lane by lane: the rows' three sums plus their bias, as the loops */
  const __m256d bv = b ? _mm256_setr_pd(b[0], b[1], b[2], 0.0) : _mm256_setzero_pd(), yv = _mm256_add_pd(bv, sv);
  _mm_storeu_pd(y, _mm256_castpd256_pd128(yv));
  y[2] = _mm_cvtsd_f64(_mm256_extractf128_pd(yv, 1));
}

__attribute__((target("avx2"))) void grit_solver_free3_transpose(const double *J, const double f[3], double *y) {
  __m256d lo = _mm256_loadu_pd(y);
  __m128d hi = _mm_loadu_pd(y + 4);
  for (int r = 0; r < 3; ++r) {
    if (f[r] == 0.0) continue;
    const __m256d fr = _mm256_set1_pd(f[r]);
    lo = _mm256_add_pd(lo, _mm256_mul_pd(_mm256_loadu_pd(J + 6 * r), fr));
    hi = _mm_add_pd(hi, _mm_mul_pd(_mm_loadu_pd(J + 6 * r + 4), _mm256_castpd256_pd128(fr)));
  }
  _mm256_storeu_pd(y, lo);
  _mm_storeu_pd(y + 4, hi);
}
#else
void grit_solver_free3_apply(const double *J, const double *x, const double *b, double y[3]) {
  for (int r = 0; r < 3; ++r) y[r] = b ? b[r] : 0.0;
  apply_tree_rows(J, x, 6, y, 0, 3);
}
void grit_solver_free3_transpose(const double *J, const double f[3], double *y) { apply_tree_transpose(J, f, 3, 6, y); }
#endif
