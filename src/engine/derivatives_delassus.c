/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_delassus.c — a constraint's Delassus estimate on dual numbers without A's dual factor
 * (position passes of grit_step_derivatives).
 *
 * w = (1/dim) sum_r J_r A^-1 J_r^T over the rows r of the constraint and the trees it touches. Its
 * partials along any seeded direction are
 *     dw = (1/dim) sum_r (2 dJ_r . z_r - z_r^T dA z_r),   z_r = A^-1 J_r^T (values only),
 * the same derivative the dual Cholesky factor and the dual substitutions give (forward mode of the
 * same algorithm), computed from the double factor of A's values: the dual factor of an n-dof tree
 * costs about n^3 / 6 dual operations in every position pass (a 62-dof humanoid: 18 % of A, B) and its
 * dual substitutions 3 n^2 / 2 per contact; here a contact solves z in double once per call (kept
 * across the passes) and contracts, per pass, the entries of dA's lower triangle (the half the factor
 * reads) that have partials with Z = sum_r z_r z_r^T, one multiply-add per lane each. */
#include <string.h>

#include "derivatives_delassus_internal.h"
#include "derivatives_internal.h"
#include "derivatives_chain.h"
#include "constraints_extra.h"
#include "derivatives_quadgrad.h"
#include "grit/constraints.h"
#include "quasistatic.h"
#include "solver.h"
#include "treechol.h"

/* ROWS: rows per group (a contact's three share one contraction). MAXN: the largest tree (the support
 * lists encode an entry (i, j) as i MAXN + j in 16 bits; MuJoCo's composite cloth is one tree of 166) */
enum { ROWS = GRIT_QUADGRAD_ROWS, MAXN = 256 };

/* Tree t's lower-triangle entries of A with partials in this evaluation, listed once per evaluation:
 * a pass seeds a few dofs, and A's entries of two dofs whose joints lie outside their chains do not
 * move (a leg's dofs do not move the other legs' blocks), so on a many-limbed tree the contraction
 * runs over a fraction of the triangle. */
static const unsigned short *support(const grit_model *m, grit_deriv_ws *w, int t, int *count) {
  const int n = m->tree_dofnum[t];
  unsigned short *list = w->dsup + m->tree_madr[t];
  if (w->dsup_at[t] != w->eval_no) {
    const grit_dual *A = w->A + m->tree_madr[t];
    int k = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        int moves = 0;
        for (int l = 0; l < GRIT_DUAL_N; ++l) moves |= A[i * n + j].d[l] != 0.0;
        if (moves) list[k++] = (unsigned short)(i * MAXN + j);
      }
    w->dsup_n[t] = k;
    w->dsup_at[t] = w->eval_no;
  }
  *count = w->dsup_n[t];
  return list;
}

/* Tree t's dofs whose dq has partials in this evaluation, listed once per evaluation: a pass seeds a few
 * of them, and the gradient's contraction with dq skips the others' zero lanes. */
static const int *seeded(const grit_model *m, grit_deriv_ws *w, int t, int *count) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  int *list = w->dqs + adr;
  if (w->dqs_at[t] != w->eval_no) {
    int k = 0;
    for (int j = 0; j < n; ++j) {
      int moves = 0;
      for (int l = 0; l < GRIT_DUAL_N; ++l) moves |= w->dq[adr + j].d[l] != 0.0;
      if (moves) list[k++] = j;
      w->dqf[adr + j] = (char)moves;
    }
    w->dqs_n[t] = k;
    w->dqs_at[t] = w->eval_no;
    w->dqp_at[t] = 0u; /* seed_pairs lists again (also after the clock wrapped) */
  }
  *count = w->dqs_n[t];
  return list;
}

/* The nonzero lanes of tree t's seeded dofs (dqp, dql, dqpv; j ascending, then l), listed once per
 * evaluation where minus_g_dq reads them. */
void grit_deriv_delassus_seed_pairs(const grit_model *m, grit_deriv_ws *w, int t) {
  int ns = 0;
  const int *sj = seeded(m, w, t, &ns);
  if (w->dqp_at[t] == w->eval_no) return;
  const int adr = m->tree_dofadr[t];
  const size_t o = (size_t)GRIT_DUAL_N * (size_t)adr;
  int *pl = w->dqp + o, np = 0;
  unsigned char *ll = w->dql + o;
  double *pv = w->dqpv + o;
  for (int e = 0; e < ns; ++e)
    for (int l = 0; l < GRIT_DUAL_N; ++l) {
      const double x = w->dq[adr + sj[e]].d[l];
      if (x != 0.0) pl[np] = sj[e], ll[np] = (unsigned char)l, pv[np++] = x;
    }
  w->dqp_n[t] = np;
  w->dqp_at[t] = w->eval_no;
  /* the same pairs lane by lane (minus_g_dq's lean path), where no lane holds two */
  int *gi = w->dqg + (size_t)GRIT_DUAL_N * (size_t)t, ok = 1;
  double *gv = w->dqgv + (size_t)GRIT_DUAL_N * (size_t)t;
  for (int l = 0; l < GRIT_DUAL_N; ++l) gi[l] = -1, gv[l] = 0.0;
  for (int e = 0; e < np; ++e) {
    ok &= gi[ll[e]] < 0;
    gi[ll[e]] = pl[e], gv[ll[e]] = pv[e];
  }
  w->dqg_ok[t] = (char)ok;
}

/* acc -= g . dq over tree t's seeded dofs (g tree-local), lane by lane. A pass seeds each dof in one lane
 * (GRIT_DUAL_N lanes, 8 dofs a pass and more): the products with its zero lanes are +-0, and acc, from +0,
 * stays +0 or keeps its nonzero value when they are subtracted, so the terms of the nonzero lanes alone
 * (seeded's pairs), in the same order (j ascending in each lane), give the same bits (ws->no_seed_pairs:
 * every lane, the old loop; the two differ only for a non-finite g next to a zero lane). */
static inline void minus_g_dq(const grit_model *m, grit_deriv_ws *w, int t, const double *g, size_t gs,
                              double acc[GRIT_DUAL_N]) {
  if (!w->no_cx_lean && !w->no_seed_pairs) { /* each lane's one pair (dqg), if no lane holds two */
    if (w->dqp_at[t] != w->eval_no) grit_deriv_delassus_seed_pairs(m, w, t);
    if (w->dqg_ok[t]) {
      const int *gi = w->dqg + (size_t)GRIT_DUAL_N * (size_t)t;
      const double *gv = w->dqgv + (size_t)GRIT_DUAL_N * (size_t)t;
      for (int l = 0; l < GRIT_DUAL_N; ++l) {
        const double gj = gi[l] >= 0 ? g[(size_t)gi[l] * gs] : 0.0;
        if (gj != 0.0) acc[l] -= gv[l] * gj;
      }
      w->seed_pairs_used++;
      return;
    }
  }
  int ns = 0;
  const int *sj = seeded(m, w, t, &ns), adr = m->tree_dofadr[t];
  if (!w->no_seed_pairs) {
    grit_deriv_delassus_seed_pairs(m, w, t);
    const size_t o = (size_t)GRIT_DUAL_N * (size_t)adr;
    const int np = w->dqp_n[t], *pl = w->dqp + o;
    const unsigned char *ll = w->dql + o;
    const double *pv = w->dqpv + o;
    for (int e = 0; e < np; ++e) {
      const double gj = g[(size_t)pl[e] * gs];
      if (gj != 0.0) acc[ll[e]] -= pv[e] * gj;
    }
    w->seed_pairs_used++;
    return;
  }
  for (int e = 0; e < ns; ++e) { /* the dofs without partials add zeros */
    const int j = sj[e];
    const grit_dual *s = &w->dq[adr + j];
    const double gj = g[(size_t)j * gs];
    if (gj != 0.0)
      for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] -= s->d[l] * gj;
  }
}

/* z_r = A^-1 J_r^T of rows r0 .. r0 + nr - 1 of one tree slot (values), their |L^-1 J_r^T|^2 into *wv. */
static void solve_rows(int n, const double *L, const grit_dual *J, int r0, int nr, double *wv, double *z, int ldz) {
  for (int r = 0; r < nr; ++r) {
    const grit_dual *Jr = J + (size_t)(r0 + r) * (size_t)n;
    double *y = z + r * ldz;
    int j0 = 0; /* y is zero before J_r's first nonzero value */
    while (j0 < n && Jr[j0].v == 0.0) y[j0++] = 0.0;
    for (int j = j0; j < n; ++j) { /* L y = J_r^T */
      double s = Jr[j].v;
      for (int q = j0; q < j; ++q) s -= L[j * n + q] * y[q];
      y[j] = s / L[j * n + j];
      *wv += y[j] * y[j];
    }
    for (int j = n - 1; j >= 0; --j) { /* L^T z = y */
      double s = y[j];
      for (int q = j + 1; q < n; ++q) s -= L[q * n + j] * y[q];
      y[j] = s / L[j * n + j];
    }
  }
}

/* The same with tree t's tree-ordered factor (L, inv): z_r = A^-1 J_r^T and w's J_r z_r, the same
 * number as |L^-1 J_r^T|^2 to round-off, in O(n depth). */
static void solve_rows_tree(const grit_deriv_ws *w, int t, int n, const double *L, const double *inv,
                            const grit_dual *J, int r0, int nr, double *wv, double *z, int ldz) {
  for (int r = 0; r < nr; ++r)
    for (int j = 0; j < n; ++j) z[r * ldz + j] = J[(size_t)(r0 + r) * (size_t)n + (size_t)j].v;
  grit_treechol_solve_from_rows(w->dtc, t, L, inv, z, ldz, nr);
  for (int r = 0; r < nr; ++r) {
    const grit_dual *Jr = J + (size_t)(r0 + r) * (size_t)n;
    for (int j = 0; j < n; ++j) *wv += Jr[j].v * z[r * ldz + j];
  }
}

void grit_deriv_delassus_lin_factor(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  w->dl_cand = d->collision->c, w->dl_ncand = d->ncontacts;
  w->dl_con = grit_solver_constraints(d->solver, NULL);
  w->dl_jstore = grit_solver_jstore(d->solver, NULL), w->dl_nc = d->stats.nconstraints;
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    /* Trees of more than 64 dofs take it by default: there the dense substitutions were most of the call
     * (softbox: 651 tendon-equality rows over 224 dofs), and their step already factors A in tree order
     * (afactor.c), so their A, B were not the dense factor's to the bit anyway. Smaller trees keep the
     * dense factor unless asked (delassus_tree_solve): the robots' A, B stay as they were. */
    const int want = w->delassus_tree_solve || (n > 64 && !w->no_tree_solve_big);
    w->dt_ok[t] = want && grit_treechol_a_keeps_pattern(m, t) && grit_deriv_tree_factor(m, d, w, t); /* (colour.c) */
  }
}

/* A tree factored in tree order above has its z solved by that factor only (solve_rows_tree, tree_lanes);
 * its dense factor, n^3 / 6 (the softbox: 5 % of the call, the flag's 340 dofs more), is read only by a
 * qconst tree's constant factor (derivatives_free.c, prepare_passes' dual copy). */
const char *grit_deriv_delassus_dense_mask(const grit_model *m, grit_deriv_ws *w) {
  if (w->no_dense_skip) return NULL;
  int skip = 0;
  for (int t = 0; t < m->ntree; ++t) {
    w->dense_need[t] = (char)(!w->dt_ok[t] || w->qconst[t]);
    skip += !w->dense_need[t];
  }
  w->dense_skipped += (unsigned long)skip;
  return skip ? w->dense_need : NULL;
}

/* Whether constraint k's J is a constant (no partials): a joint limit's or friction's (+-e_dof), a fixed
 * tendon's limit or friction (its coefficients). */
static int constant_jacobian(const grit_model *m, const grit_constraint *k) {
  switch (k->kind) {
    case GRIT_CONSTRAINT_LIMIT:
    case GRIT_CONSTRAINT_FRICTION: return 1;
    case GRIT_CONSTRAINT_TENDON_LIMIT: return m->ten_type[k->source / 2] == GRIT_TENDON_FIXED;
    case GRIT_CONSTRAINT_TENDON_FRICTION: return m->ten_type[k->source] == GRIT_TENDON_FIXED;
    default: return 0;
  }
}

/* Whether a 1-row equality's J has no partials: a joint or fixed-tendon coupling (its rows' entries are
 * the joints' and tendons' constant coefficients) that is linear (the polynomial's slope a constant) or
 * has no second coordinate (constraints_extra_generic.h, cx_coupling). */
static int constant_coupling(const grit_model *m, const grit_constraint *k) {
  if (k->kind != GRIT_CONSTRAINT_EQUALITY_1D) return 0;
  const int eq = k->source / 2, y = m->eq_obj[2 * eq], x = m->eq_obj[2 * eq + 1];
  const double *data = m->eq_data + GRIT_EQ_NDATA * eq;
  if (m->eq_type[eq] == GRIT_EQ_TENDON &&
      (m->ten_type[y] != GRIT_TENDON_FIXED || (x >= 0 && m->ten_type[x] != GRIT_TENDON_FIXED)))
    return 0;
  if (m->eq_type[eq] != GRIT_EQ_TENDON && m->eq_type[eq] != GRIT_EQ_JOINT) return 0;
  return x < 0 || (data[2] == 0.0 && data[3] == 0.0 && data[4] == 0.0);
}

/* The local columns of tree t where J of constraint ic can have partials, ascending, into ch (-1: any):
 * a contact's J is nonzero only on its bodies' chains to the root (grit_contact_jacobian_add), whatever
 * J's values there; a constant J (constant_jacobian) has none. */
static int partial_columns(const grit_model *m, grit_deriv_ws *w, int ic, int t, int n, int ch[MAXN]) {
  if (ic >= 0 && ic < w->dl_ncand) {
    /* J (its chains' dofs' Jacobian at the contact's point and frame, which move with the same dofs) has
     * no partials when the pass seeds none of those dofs */
    int moves = 0;
    for (int s = 0; s < 2 && !moves; ++s) {
      const int b = w->dl_cand[ic].body[s], tb = m->body_tree[b];
      int ns = 0;
      if (tb >= 0) seeded(m, w, tb, &ns);
      for (int dof = m->body_lastdof[b]; dof >= 0 && ns > 0 && !moves; dof = m->dof_parent[dof]) moves = w->dqf[dof];
    }
    if (!moves) return 0;
    char mark[MAXN];
    const int adr = m->tree_dofadr[t];
    for (int j = 0; j < n; ++j) mark[j] = 0;
    for (int s = 0; s < 2; ++s)
      for (int dof = m->body_lastdof[w->dl_cand[ic].body[s]]; dof >= 0; dof = m->dof_parent[dof])
        if (dof - adr >= 0 && dof - adr < n) mark[dof - adr] = 1;
    int k = 0;
    for (int j = 0; j < n; ++j)
      if (mark[j]) ch[k++] = j;
    return k;
  }
  /* a cx row this pass took as constants (derivatives_chain.c): J has no partials */
  if (ic >= 0 && ic == w->cx_kept_ic && w->cx_kept_eval == w->eval_no) return 0;
  if (ic < 0 || !w->dl_con) return -1;
  const grit_constraint *k = &w->dl_con[ic];
  if (constant_jacobian(m, k) || constant_coupling(m, k)) return 0;
  /* an equality's or tendon's row built on its structural columns (grit_cx_rows_cols): J and its
   * partials are +0 elsewhere, whose terms add nothing (ws->no_cx_cols: all columns) */
  int nl = 0;
  const int *list = w->no_cx_cols || !w->cxs_ptr ? NULL : grit_deriv_chain_cx_list(m, w, k, &nl);
  if (!list) return -1;
  const int adr = m->tree_dofadr[t];
  int c = 0;
  for (int e = 0; e < nl; ++e)
    if (list[e] >= adr && list[e] < adr + n) ch[c++] = list[e] - adr;
  return c;
}

/* The lanes of dw from rows r0 .. r0 + nr - 1 of one tree slot, z their A^-1 J_r^T (rows ldz apart):
 * 2 dJ_r . z_r, and - z_r^T dA z_r over dA's nsup entries with partials sup (dA NULL: constant). */
static void rows_partials(int n, const grit_dual *dA, const unsigned short *sup, int nsup, const grit_dual *J,
                          const int *ch, int nch, int r0, int nr, const double *z, int ldz,
                          double acc[GRIT_DUAL_N]) {
  for (int r = 0; r < nr; ++r) { /* over J's columns with partials (ch, nch; nch < 0: all) */
    const grit_dual *Jr = J + (size_t)(r0 + r) * (size_t)n;
    for (int e = 0; e < (nch < 0 ? n : nch); ++e) {
      const int j = nch < 0 ? e : ch[e];
      const double zj = 2.0 * z[r * ldz + j];
      for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] += Jr[j].d[l] * zj;
    }
  }
  if (!dA) return;
  for (int e = 0; e < nsup; ++e) { /* - <dA, Z> over the lower triangle, the off-diagonal entries twice */
    const int i = sup[e] / MAXN, j = sup[e] % MAXN;
    double zz = 0.0;
    for (int r = 0; r < nr; ++r) zz += z[r * ldz + i] * z[r * ldz + j];
    zz = i == j ? -zz : -2.0 * zz;
    const grit_dual *a = dA + i * n + j;
    for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] += a->d[l] * zz;
  }
}

/* ------------------------------------------------------------------------------ constant rows */
/* Joint limits and frictions, fixed tendons' limits and frictions: one constant row J (the step's,
 * kept in its store) in one tree. A many-jointed robot has one per joint (frictionloss): their
 * z = A^-1 J^T, w and gradient of z^T M z are computed LANES at a time when the first of them is needed
 * in a call, the lanes' arithmetic each the one-row path's in its order (the same bits), the vectors
 * across the rows. */
enum { LANES = GRIT_QUADGRAD_LANES, AHEAD = 8 * GRIT_QUADGRAD_LANES };

static int constant_row(const grit_model *m, const grit_deriv_ws *w, int ic) {
  const grit_constraint *k = &w->dl_con[ic];
  return ic >= w->dl_ncand && k->dim == 1 && k->ntree == 1 && (constant_jacobian(m, k) || constant_coupling(m, k));
}

/* A one-row cx row of one tree whose J has partials (a spatial tendon's): its z, w and gradient are taken
 * with the constant rows' (solve_constant_rows) from the step's J (the store) when its turn comes in the
 * lookahead, and checked when its own evaluation reaches delassus_lin: used if its J's values are the
 * store's bit for bit (the same z, w and g as from its own J), else formed again (ws->no_row_ahead: one
 * row at a time, as before). MuJoCo's cloth: 128 spatial rows, each a sweep of its own. */
static int ahead_row(const grit_model *m, const grit_deriv_ws *w, int ic) {
  (void)m;
  const grit_constraint *k = &w->dl_con[ic];
  return !w->no_row_ahead && ic >= w->dl_ncand && k->dim == 1 && k->ntree == 1; /* (and not constant_row) */
}

#if GRIT_QUADGRAD_HAVE_LANES
typedef grit_lanes V;
typedef long long VI __attribute__((vector_size(sizeof(V)))); /* a lane mask: all ones or zero */
#define DL_INLINE inline __attribute__((always_inline))
#define DL_NOINLINE __attribute__((noinline))

/* solve_rows for the rows J[l] side by side (y: n x LANES, lanes past nl zero), from jmin, the least of
 * the rows' first nonzero entries j0[l]. Each lane keeps solve_rows' values: before its own j0, y = +0
 * and no w; within the forward sum, the terms of q < j0 left out (masked to +0: s - +0 is s, also for a
 * sum s = -0 that a negative zero entry of J starts). */
static DL_INLINE void solve_lanes_in(int n, const double *L, const double *const *J, int nl, const int *j0, int jmin,
                                     V *y, V *wv, V *yf) {
  V j0v;
  for (int l = 0; l < LANES; ++l) j0v[l] = l < nl ? (double)j0[l] : (double)n;
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < LANES; ++l) y[j][l] = l < nl ? J[l][j] : 0.0;
  for (int l = 0; l < LANES; ++l) (*wv)[l] = 0.0;
  for (int j = jmin; j < n; ++j) { /* L y = J^T */
    V s = y[j];
    for (int q = jmin; q < j; ++q) {
      const VI on = (double)q >= j0v;
      s -= (V)((VI)(L[j * n + q] * y[q]) & on);
    }
    const VI on = (double)j >= j0v;
    y[j] = (V)((VI)(s / L[j * n + j]) & on);
    *wv += (V)((VI)(y[j] * y[j]) & on);
    if (yf) yf[j] = y[j];
  }
  for (int j = n - 1; j >= 0; --j) { /* L^T z = y */
    V s = y[j];
    for (int q = j + 1; q < n; ++q) s -= L[q * n + j] * y[q];
    y[j] = s / L[j * n + j];
  }
}

/* Compiled also for AVX2 and chosen at run time (derivatives_quadgrad.c): the same operations. */
static DL_NOINLINE void solve_lanes_base(int n, const double *L, const double *const *J, int nl, const int *j0, int jmin,
                                         V *y, V *wv, V *yf) {
  solve_lanes_in(n, L, J, nl, j0, jmin, y, wv, yf);
}
#if defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static DL_NOINLINE __attribute__((target("avx2"))) void solve_lanes_avx2(int n, const double *L, const double *const *J,
                                                                         int nl, const int *j0, int jmin, V *y,
                                                                         V *wv, V *yf) {
  solve_lanes_in(n, L, J, nl, j0, jmin, y, wv, yf);
}
#endif
static void solve_lanes(int n, const double *L, const double *const *J, int nl, const int *j0, int jmin, V *y, V *wv,
                        V *yf) {
#if defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    solve_lanes_avx2(n, L, J, nl, j0, jmin, y, wv, yf);
    return;
  }
#endif
  solve_lanes_base(n, L, J, nl, j0, jmin, y, wv, yf);
}

/* solve_rows for the nr (2 .. LANES) rows of a contact or an equality side by side: each row's z the
 * same bits (solve_lanes), and w's sum |L^-1 J_r^T|^2 in solve_rows' order from the kept forward values
 * (the lanes' own sums would add in another order). Returns 0 (nothing done) outside that case. */
static int solve_rows_lanes(int n, const double *L, const grit_dual *J, int r0, int nr, double *wv, double *z,
                            int ldz) {
  if (nr < 2 || nr > LANES) return 0;
  double row[LANES][MAXN];
  const double *Jl[LANES];
  int j0[LANES], jmin = n;
  for (int r = 0; r < nr; ++r) {
    const grit_dual *Jr = J + (size_t)(r0 + r) * (size_t)n;
    j0[r] = 0;
    while (j0[r] < n && Jr[j0[r]].v == 0.0) row[r][j0[r]++] = 0.0; /* +0 as solve_rows' y */
    for (int j = j0[r]; j < n; ++j) row[r][j] = Jr[j].v;
    jmin = j0[r] < jmin ? j0[r] : jmin;
    Jl[r] = row[r];
  }
  V y[MAXN], yf[MAXN], wl;
  solve_lanes(n, L, Jl, nr, j0, jmin, y, &wl, yf);
  for (int r = 0; r < nr; ++r) {
    for (int j = j0[r]; j < n; ++j) *wv += yf[j][r] * yf[j][r];
    for (int j = 0; j < n; ++j) z[r * ldz + j] = y[j][r];
  }
  return 1;
}
#endif

#if GRIT_QUADGRAD_HAVE_LANES
/* y[j][l] = r[l n + j] for l < nl (rows n apart), +0 in the lanes past nl. */
static void lanes_of_rows(const double *r, int n, int nl, V *y) {
  if (nl == LANES) {
    for (int j = 0; j < n; ++j) {
      V v;
      for (int l = 0; l < LANES; ++l) v[l] = r[l * n + j];
      y[j] = v;
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    V v = {0.0};
    for (int l = 0; l < nl; ++l) v[l] = r[l * n + j];
    y[j] = v;
  }
}

/* g[l][j] = y[j][l] for l < nl. */
static void rows_of_lanes(const V *y, int n, int nl, double *const *g) {
  for (int j = 0; j < n; ++j) {
    const V v = y[j];
    for (int l = 0; l < nl; ++l) g[l][j] = v[l];
  }
}

/* z_l = A^-1 J_l^T of nl constant rows of tree t by its tree-ordered factor into z[l] and the lanes y,
 * w_l = J_l z_l (solve_rows_tree's numbers); the lanes past nl zero. */
/* tree_lanes for rows of at most two nonzero entries each (the softbox's 651 tendon couplings of two slides)
 * where the tree has more than 64 dofs: z_l = sum_j J_lj c_j over the row's entries (j ascending, from +0)
 * with c_j = A^-1 e_j, the tree factor's solve of a unit column, each solved once per call (w->acol,
 * stamped by acol_at) instead of one solve per row: the softbox's 651 rows need 218 columns. w_l = sum_j J_lj
 * z_lj over the same entries (the old sum's other terms are +-0 products, which leave a sum begun at +0 as
 * it is). Not the old path's bits: z = A^-1 (J^T) and sum_j J_j (A^-1 e_j) round differently (~1e-16 of
 * z); ws->no_acols: the old path. Returns 0 (nothing done) where a row has more entries. */
static void tree_lanes(const grit_model *m, grit_deriv_ws *w, int t, const double *const *J, int nl,
                       double *const *z, int ldz, V *y, V *wv, int couplings) {
  const int n = m->tree_dofnum[t];
  if (couplings && grit_deriv_delassus_cols_z(m, w, t, J, nl, z, y, wv)) return; /* (couplings: rows of two entries) */
  if (!w->no_tree_group) { /* rows three at a time: one walk of the factor's index for each group */
    double zb[LANES * MAXN];
    for (int l = 0; l < nl; ++l) memcpy(zb + l * n, J[l], sizeof(double) * (size_t)n);
    for (int l0 = 0; l0 < nl; l0 += 3)
      grit_treechol_solve_from_rows(w->dtc, t, w->dtL + m->tree_madr[t], w->dtinv + m->tree_dofadr[t], zb + l0 * n, n,
                                    nl - l0 < 3 ? nl - l0 : 3);
    /* z, w and the lanes y: the values and sums below (w: j ascending), moved by rows and by vectors
     * (ws->no_lane_moves: element by element, as before) */
    for (int l = 0; l < LANES; ++l) {
      double s = 0.0;
      if (l < nl) {
        if (!w->no_lane_moves) memcpy(z[l], zb + l * n, sizeof(double) * (size_t)n);
        for (int j = 0; w->no_lane_moves && j < n; ++j) z[l][j] = zb[l * n + j];
        for (int j = 0; j < n; ++j) s += J[l][j] * z[l][j];
      }
      for (int j = 0; w->no_lane_moves && j < n; ++j) y[j][l] = l < nl ? z[l][j] : 0.0;
      (*wv)[l] = s;
    }
    if (!w->no_lane_moves) lanes_of_rows(zb, n, nl, y);
    return;
  }
  for (int l = 0; l < LANES; ++l) {
    double s = 0.0;
    if (l < nl) {
      for (int j = 0; j < n; ++j) z[l][j] = J[l][j];
      grit_treechol_solve_from_rows(w->dtc, t, w->dtL + m->tree_madr[t], w->dtinv + m->tree_dofadr[t], z[l], ldz, 1);
      for (int j = 0; j < n; ++j) s += J[l][j] * z[l][j];
    }
    for (int j = 0; j < n; ++j) y[j][l] = l < nl ? z[l][j] : 0.0;
    (*wv)[l] = s;
  }
}
#endif

#if GRIT_QUADGRAD_HAVE_LANES
#endif

/* z, w and (quad) the gradient of constraint ic's row and of the next constant rows of its tree t not yet
 * solved in this call (looked for among the next AHEAD constraints), kept as delassus_lin keeps them:
 * each is evaluated later in the same pass (same tree, not inert). Returns 0 (nothing done) when ic's
 * row is alone: the one-row path is then cheaper. */
static int solve_constant_rows(const grit_model *m, grit_deriv_ws *w, int ic, int t, int quad, const grit_dual *Jic) {
#if GRIT_QUADGRAD_HAVE_LANES
  const int n = m->tree_dofnum[t], ldz = w->maxn, cap = w->cap_edges / 2 + 1, tree_ok = w->dt_ok[t];
  int list[LANES], j0[LANES], nl = 0, jmin = n, couplings = 0;
  const double *J[LANES];
  double jown[MAXN]; /* ic's own J (an ahead row's), its values */
  for (int i = ic; i < w->dl_nc && i < cap && i <= ic + AHEAD && nl < LANES; ++i) {
    const int cr = i > ic ? constant_row(m, w, i) : 1; /* (ic: the caller's test) */
    if (i > ic && (!(cr || ahead_row(m, w, i)) || w->dl_con[i].tree[0] != t || w->zc_at[i] == w->call_no ||
                   grit_deriv_constraint_inert(&w->dl_con[i])))
      continue;
    J[nl] = w->dl_jstore + w->dl_con[i].joff[0];
    if (i == ic && Jic) {
      for (int j = 0; j < n; ++j) jown[j] = Jic[j].v;
      J[nl] = jown;
    }
    w->zc_pre[i] = cr ? 0u : w->call_no; /* an ahead row after ic: checked when its turn comes */
    j0[nl] = 0;
    while (!tree_ok && j0[nl] < n && J[nl][j0[nl]] == 0.0) ++j0[nl]; /* solve_rows' first nonzero (solve_lanes) */
    jmin = j0[nl] < jmin ? j0[nl] : jmin;
    couplings |= w->dl_con[i].kind == GRIT_CONSTRAINT_EQUALITY_1D;
    list[nl++] = i;
  }
  if (nl < 2) {
    w->zc_pre[ic] = 0u;
    return 0;
  }
  double *z[LANES], *g[LANES];
  V y[MAXN], gl[MAXN], wv;
  for (int l = 0; l < nl; ++l) {
    z[l] = w->zc + (size_t)list[l] * 2 * ROWS * (size_t)ldz;
    g[l] = w->zg + (size_t)list[l] * 2 * (size_t)ldz;
  }
  if (tree_ok) /* z by the tree-ordered factor, row by row; the gradient below still in lanes */
    tree_lanes(m, w, t, J, nl, z, ldz, y, &wv, couplings);
  else
    solve_lanes(n, w->Ad + m->tree_madr[t], J, nl, j0, jmin, y, &wv, NULL);
  if (quad) grit_rnea_quadratic_gradient_lanes(m, &w->kd, &w->rn, t, y, gl, w->qgs,
                                               (w->no_slide_sweep ? 1 : 0) | (w->no_leaf_sweep ? 2 : 0));
  const int byrows = quad && !grit_deriv_delassus_gt_columns(w, t, n, gl, list, nl); /* else g by columns (w->gt) */
  if (byrows && !w->no_lane_moves) rows_of_lanes(gl, n, nl, g);
  for (int l = 0; l < nl; ++l) {
    for (int j = 0; !tree_ok && j < n; ++j) z[l][j] = y[j][l]; /* (tree_lanes wrote z[l] already) */
    for (int j = 0; byrows && w->no_lane_moves && j < n; ++j) g[l][j] = gl[j][l];
    w->zc_w[list[l]] = wv[l], w->zc_at[list[l]] = w->call_no;
  }
  return 1;
#else
  (void)m, (void)w, (void)ic, (void)t, (void)quad;
  return 0;
#endif
}

static int rows_lanes(int n, const double *L, const grit_dual *J, int r0, int nr, double *wv, double *z, int ldz) {
#if GRIT_QUADGRAD_HAVE_LANES
  return solve_rows_lanes(n, L, J, r0, nr, wv, z, ldz);
#else
  (void)n, (void)L, (void)J, (void)r0, (void)nr, (void)wv, (void)z, (void)ldz;
  return 0;
#endif
}

int grit_deriv_delassus_lin_on(const grit_data *d, const grit_deriv_ws *w) {
  return !w->no_delassus_lin && w->maxn <= MAXN && !grit_quasistatic_last_step(d) && grit_deriv_uses_delassus(d);
}

int grit_deriv_delassus_lin_kept(const grit_deriv_ws *w, int ic) {
  return ic >= 0 && ic < w->cap_edges / 2 + 1 && w->zc_at[ic] == w->call_no;
}

void grit_deriv_delassus_lin_begin(const grit_model *m, grit_deriv_ws *w) {
  if (++w->call_no != 0u) return;
  for (int i = 0; i < w->cap_edges / 2 + 1; ++i) w->zc_at[i] = w->zc_pre[i] = w->gt_at[i] = 0u; /* the clock wrapped */
  w->gt_call = 0u;
  for (int i = 0; i < m->nv; ++i) w->acol_at[i] = 0u;
  w->call_no = 1u;
}

/* A kept row's estimate: its kept w, and its partials -g . dq from the kept z of each tree (the tests that it
 * may be taken are the callers'). */
/* kept_row_sum where each tree's seeds hold at most one dof a lane (dqg_ok, minus_g_dq's lean path): acc[l] -=
 * gv[l] g[gi[l]] with no test of g's zeros. A zero g (or an empty lane: gi -1, gv +0, g taken as +0) makes the
 * term +-0 for finite seeds, and acc - (+-0) is acc: acc begins at +0 and a rounded difference is never -0, so
 * skipping the term (minus_g_dq) and subtracting it give the same bits; the lanes' arithmetic without branches.
 * Returns 0 (nothing done) where a tree's lanes hold two dofs (ws->no_kept_lanes: never taken). */
#if defined(__GNUC__) /* (inlined: its call's setup was a sixth of its cost) */
#define KR_INLINE inline __attribute__((always_inline))
#else
#define KR_INLINE inline
#endif
static KR_INLINE int kept_row_lanes(const grit_model *m, grit_deriv_ws *w, int ic, int dim, int ntree,
                                    const int tree[2], grit_dual *out) {
  if (w->no_kept_lanes || w->no_cx_lean || w->no_seed_pairs) return 0;
  for (int k = 0; k < ntree; ++k) {
    if (w->dqp_at[tree[k]] != w->eval_no) grit_deriv_delassus_seed_pairs(m, w, tree[k]);
    if (!w->dqg_ok[tree[k]]) return 0;
  }
  double acc[GRIT_DUAL_N];
  for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] = 0.0;
  for (int k = 0; k < ntree; ++k) {
    size_t gs = 1;
    const double *g = grit_deriv_delassus_row_g(w, ic, k, &gs);
    const int *gi = w->dqg + (size_t)GRIT_DUAL_N * (size_t)tree[k];
    const double *gv = w->dqgv + (size_t)GRIT_DUAL_N * (size_t)tree[k];
    for (int l = 0; l < GRIT_DUAL_N; ++l) {
      const double gj = gi[l] >= 0 ? g[(size_t)gi[l] * gs] : 0.0;
      acc[l] -= gv[l] * gj;
    }
  }
  *out = grit_dual_const(w->zc_w[ic] / dim);
  for (int l = 0; l < GRIT_DUAL_N; ++l) out->d[l] = acc[l] / dim;
  w->seed_pairs_used += (unsigned long)ntree;
  w->kept_fast_used++;
  return 1;
}

static int kept_row_sum(const grit_model *m, grit_deriv_ws *w, int ic, int dim, int ntree, const int tree[2],
                        grit_dual *out) {
  if (ntree == 1 && grit_deriv_delassus_kept_batch(m, w, ic, dim, tree[0], out)) return 1;
  if (kept_row_lanes(m, w, ic, dim, ntree, tree, out)) return 1;
  double acc[GRIT_DUAL_N];
  for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] = 0.0;
  for (int k = 0; k < ntree; ++k) {
    size_t gs = 1;
    const double *g = grit_deriv_delassus_row_g(w, ic, k, &gs);
    minus_g_dq(m, w, tree[k], g, gs, acc);
  }
  *out = grit_dual_const(w->zc_w[ic] / dim);
  for (int l = 0; l < GRIT_DUAL_N; ++l) out->d[l] = acc[l] / dim;
  w->kept_fast_used++;
  return 1;
}

/* The estimate of a row kept in this call (z, w, the gradient g of z^T M z) whose J has no partials (a cx
 * row the pass took as constants, a constant row) on trees whose dual M the pass left out: its partials
 * are - g . dq over the seeded dofs only, the general path's operations in its order without its setup
 * (the softbox: 651 such rows in each of 56 passes). Returns 0 (nothing done) outside that case. */
static int kept_constant_row(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim, int ntree,
                             const int tree[2], int jconst, grit_dual *out) {
  if (w->no_kept_fast || dim > ROWS || ic < w->dl_ncand || ic >= w->cap_edges / 2 + 1 || w->zc_at[ic] != w->call_no ||
      !w->dl_con || w->zc_pre[ic] == w->call_no) /* (an ahead row not yet checked: the general path) */
    return 0;
  for (int k = 0; k < ntree; ++k)
    if (!dmask || dmask[tree[k]] || !w->rmask[tree[k]]) return 0; /* dA's contraction, or no kept g */
  const grit_constraint *c = &w->dl_con[ic];
  if (!jconst && !(ic == w->cx_kept_ic && w->cx_kept_eval == w->eval_no) && !constant_jacobian(m, c) &&
      !constant_coupling(m, c))
    return 0; /* J has partials: 2 dJ.z */
  return kept_row_sum(m, w, ic, dim, ntree, tree, out);
}

/* Whether tree t's dofs are all slides: none of its bodies rotates, so its mass matrix is the same at every q
 * and the gradient of z^T M z is zero (grit_rnea_quadratic_gradient_rows' sweep forms it from products with the
 * slides' zero angular twists: +-0). Such a tree's g is left at the +0 it starts from and its - g . dq left out:
 * each of those terms was +-0, and acc, a sum from +0, is never -0, so acc - (+-0) is acc (minus_g_dq's lean path
 * skips them too): the same bits. MuJoCo's particles (grid2pin, hammock, cloth, particle.xml) are such trees.
 * ws->no_slide_quad: formed and contracted as before (tests). */
static int slides_only(const grit_model *m, const grit_deriv_ws *w, int t) {
  if (w->no_slide_quad) return 0;
  for (int d = m->tree_dofadr[t]; d < m->tree_dofadr[t] + m->tree_dofnum[t]; ++d)
    if (m->jnt_type[m->dof_jnt[d]] != GRIT_JOINT_SLIDE) return 0;
  return 1;
}

grit_dual grit_deriv_delassus_lin(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim,
                                  int ntree, const int tree[2], const grit_dual *const J[2]) {
  grit_dual kept;
  if (kept_constant_row(m, w, dmask, ic, dim, ntree, tree, 0, &kept)) return kept;
  double wv = 0.0, acc[GRIT_DUAL_N];
  for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] = 0.0;
  /* a constraint of at most three rows keeps its z from its first pass in the call (J's and A's values
   * are the same in every pass: q0 (+) 0) */
  const int keep = dim <= ROWS && ic >= 0 && ic < w->cap_edges / 2 + 1, ldz = w->maxn;
  double *zk = keep ? w->zc + (size_t)ic * 2 * ROWS * (size_t)ldz : NULL;
  int fresh = !keep || w->zc_at[ic] != w->call_no;
  if (!fresh && w->zc_pre[ic] == w->call_no) { /* an ahead row's z from the store: its own J the same? */
    if (w->cx_kept_pending) grit_deriv_chain_cx_materialize(m, w);
    const int n = m->tree_dofnum[tree[0]];
    const double *js = w->dl_jstore + w->dl_con[ic].joff[0];
    for (int j = 0; j < n && !fresh; ++j) fresh = memcmp(&J[0][j].v, &js[j], sizeof(double)) != 0;
    w->zc_pre[ic] = 0u;
    w->row_ahead_used += !fresh;
  }
  if (fresh && w->cx_kept_pending) grit_deriv_chain_cx_materialize(m, w); /* J itself is read below */
  const int cr = fresh && keep && !w->no_lanes && constant_row(m, w, ic);
  if (fresh && keep && !w->no_lanes && (cr || ahead_row(m, w, ic))) {
    const int t = tree[0];
    fresh = !solve_constant_rows(m, w, ic, t, !(!dmask || dmask[t]) && w->rmask[t], cr ? NULL : J[0]); /* quad, as below */
  }
  if (keep && fresh) w->gt_at[ic] = 0u; /* (formed below into w->zg's rows) */
  for (int k = 0; k < ntree; ++k) {
    const int t = tree[k], n = m->tree_dofnum[t];
    const double *L = w->Ad + m->tree_madr[t];
    const grit_dual *dA = !dmask || dmask[t] ? w->A + m->tree_madr[t] : NULL;
    /* a tree whose dual M the pass left out (derivatives_rnea.c): - z^T dM z from the gradient of
     * z^T M z, kept with z */
    const int quad = !dA && w->rmask[t], still = quad && slides_only(m, w, t); /* still: g = +0 */
    double gloc[MAXN], *g = keep ? w->zg + ((size_t)ic * 2 + (size_t)k) * (size_t)ldz : gloc;
    if (quad && fresh)
      for (int j = 0; j < n; ++j) g[j] = 0.0;
    int nsup = 0;
    const unsigned short *sup = dA ? support(m, w, t, &nsup) : NULL;
    double zloc[ROWS * MAXN];
    int ch[MAXN];
    const int nch = partial_columns(m, w, ic, t, n, ch);
    for (int r0 = 0; r0 < dim; r0 += ROWS) {
      const int nr = dim - r0 < ROWS ? dim - r0 : ROWS;
      double *z = keep ? zk + (size_t)k * ROWS * (size_t)ldz : zloc;
      const int lz = keep ? ldz : MAXN;
      if (fresh && w->dt_ok[t])
        solve_rows_tree(w, t, n, w->dtL + m->tree_madr[t], w->dtinv + m->tree_dofadr[t], J[k], r0, nr, &wv, z, lz);
      else if (fresh && (w->no_lanes || !rows_lanes(n, L, J[k], r0, nr, &wv, z, lz)))
        solve_rows(n, L, J[k], r0, nr, &wv, z, lz);
      rows_partials(n, dA, sup, nsup, J[k], ch, nch, r0, nr, z, lz, acc);
      if (quad && fresh && !still) grit_rnea_quadratic_gradient_rows(m, &w->kd, &w->rn, t, z, lz, nr, g, w->qgs);
    }
    if (still) w->slide_quad_skips++;
    if (quad && !still) {
      size_t gs = 1;
      const double *gr = keep && !fresh ? grit_deriv_delassus_row_g(w, ic, k, &gs) : g;
      minus_g_dq(m, w, t, gr, gs, acc);
    }
  }
  if (keep && fresh) w->zc_w[ic] = wv, w->zc_at[ic] = w->call_no;
  if (keep) wv = w->zc_w[ic];
  grit_dual out = grit_dual_const(wv / dim);
  for (int l = 0; l < GRIT_DUAL_N; ++l) out.d[l] = acc[l] / dim;
  return out;
}

/* kept_constant_row for a row that took it in an earlier pass of this call (the caller's record, cx_fused
 * in derivatives_chain.c): the tests whose outcome cannot change within the call (the switch, dim, ic's
 * range, its kept z, the constraint array, jconst) left out; the pass's own (the trees' masks, an ahead row
 * not yet checked) kept. The same operations: the same bits. */
int grit_deriv_delassus_kept_row_again_out(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim,
                                           int ntree, const int tree[2], grit_dual *out) {
  if (w->zc_pre[ic] == w->call_no) return 0;
  for (int k = 0; k < ntree; ++k)
    if (!dmask || dmask[tree[k]] || !w->rmask[tree[k]]) return 0;
  if (ntree == 1 && grit_deriv_delassus_kept_batch(m, w, ic, dim, tree[0], out)) return 1; /* (inlined: kept_row_sum's frame) */
  return kept_row_sum(m, w, ic, dim, ntree, tree, out);
}

int grit_deriv_delassus_kept_row(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim, int ntree,
                                 const int tree[2], int jconst, grit_dual *out) {
  return kept_constant_row(m, w, dmask, ic, dim, ntree, tree, jconst, out);
}
