/* SPDX-License-Identifier: Apache-2.0 */
/* solver_state.h — the Newton solver's state and its constraint algebra, shared by solver.c (the
 * iterations: islands, evaluation, convergence, direction), solver_linesearch.c (the exact line search)
 * and solver_start.c (the models of the direction other than the exact Hessian, and the islands that
 * start at their minimizer). Not part of the public API. */
#ifndef GRIT_SOLVER_STATE_H
#define GRIT_SOLVER_STATE_H

#include <math.h>
#include <string.h>

#include "constraints.h"
#include "afactor.h"
#include "dynamics.h"
#include "hessian.h"
#include "treechol.h"

typedef struct grit_solver grit_solver; /* as in solver.h, which this header does not include */

struct grit_solver {
  int nv, cap_c, cap_j;
  grit_constraint *c;
  double *jstore;
  grit_hessian *H;
  int factor_is_A; /* nc == 0: the kept factor is A's tree-block Cholesky */
  const double *Achol;
  const grit_afactor *af; /* the trees of A's factor in tree order (afactor.h; NULL: none) */
  const grit_treechol *tcm; /* the Hessian's tree patterns: A dv over a big tree's pattern (tree_mulv) */
  int *tree_id; /* (ntree) t at t: A's factor has a part per tree */
  const grit_model *m;
  const double *vwarm; /* (nv) the next solve's second start, or NULL (grit_solver_set_warm) */
  /* vectors of nv */
  double *r, *dv, *Adv, *e, *Ae, *jtg, *dinv, *tmp;
  double *dsq; /* 1 / dinv = sqrt(diag A): |D^-1 x| by products, not divisions (the round-off floor's sizes) */
  int *lsidx; /* (cap_c) the constraints a line search must evaluate */
  unsigned char *inpat; /* (cap_c) the constraint's pair has been in the Hessian's pattern during this solve */
  int *cpair;           /* (cap_c) its pair's index in that pattern, or -1 (assemble) */
  int pat_kept;         /* the pattern the last assembly declared is this solve's, with its islands: the next
                           keeps it when no constraint enters it (assemble) */
  double *vhat;         /* (cap_c) a Lagged contact's breaking velocity, computed once per solve */
  int *jcols;           /* (4 cap_c) constraint i's nonzero columns of J on its tree k: [jcols[4i + 2k],
                           jcols[4i + 2k + 1]) (solver.c, find_jcols), computed once per solve */
  unsigned char *jwide; /* (cap_c) constraint i touches a tree of JCOLS_MIN_NV dofs or more: its products
                           with J run over jcols */
  int no_jcols;         /* nonzero: every product with J over whole rows, as before jcols (tests) */
  int *jlist;           /* (cap_j) the nonzero columns of one-tree constraints' J (of up to 3 rows) on trees of
                           JLIST_MIN_NV dofs or more, listed once per solve (find_jcols) for the Hessian's
                           assembly (grit_hessian_add_cols), which scanned each row's columns each time */
  int *jloff;           /* (cap_c) constraint i's list at jlist + jloff[i], jlnum[i] columns; -1: none (the
                           assembly's scan) */
  int *jlnum;
  int no_jlist;         /* nonzero: no lists, the assembly scans J each time, as before (tests) */
  int jlist_trees;      /* some tree has JLIST_MIN_NV dofs or more (else no lists are looked for) */
  int jcols_trees;      /* some tree has JCOLS_MIN_NV dofs or more (else no constraint is wide) */
  int free3;            /* J x and J^T f of a 3-row constraint on one free body by AVX2 (solver_jcols.c: the
                           CPU has it; 0: the loops, the same bits, tests) */
  int *cx_ptr, *cx_list; /* each equality's and tendon's structural columns (grit_cx_col_lists; NULL: none): its
                           list filtered by J's values, not a scan of the tree's columns */
  int no_cx_jlist;      /* nonzero: every list by a scan of the tree's columns (tests) */
  int no_jlist_apply;   /* nonzero: J x and J^T gamma over the spans (jcols) only, not the lists (tests) */
  int cx_built;         /* grit_build_cx_constraints' count of the entries its last call left (grit_solver_cx_built) */
  int no_lookahead;     /* nonzero: no contact modelled pressed after the first iteration, the path before
                           solver_lookahead.c (tests) */
  /* What the last assembly added, for the derivatives' refactor (grit_solver_refactor): when it covered every
   * island and each constraint added then what the exact Hessian at the solution adds, bit for bit, the
   * kept factor is already that Hessian's */
  double *gasm;         /* (9 cap_c) constraint i's dim x dim matrix added to H by the last assembly */
  unsigned char *gadd;  /* (cap_c) whether it added one */
  const double **run_j, **run_g; /* (cap_c) a run of free-body terms' J and G (assemble: free_run_term) */
  int no_free_run;      /* nonzero: each free-body term added by itself through grit_hessian_add (tests) */
  int asm_all;          /* the kept factor is of an assembly over every island: KEPT_STEP, this solve's (A and J
                           as now); KEPT_REFAC, a refactor's, its A and J in snap_A, snap_J; 0: neither */
  double *snap_A;       /* (nM) the A of the last refactor's factor */
  double *snap_J;       /* (cap_j) its constraints' Jacobian blocks, at their joff */
  int *snap_con;        /* (6 cap_c) its constraints' ntree, tree[2], dim, joff[2] */
  int snap_nc;          /* its number of constraints */
  int no_kept_factor;   /* nonzero: the refactor assembles and factors H whatever was kept (tests) */
  int kept_factor;      /* the last refactor kept the step's factor (tests, benchmarks) */
  int no_bilateral_ls;  /* nonzero: the line search evaluates bilateral equality rows through
                           grit_constraint_eval, as before bilateral_directional (solver_linesearch.c; tests) */
  int no_ls_tags;       /* nonzero: the line search's lean branch for plain Lagged contacts and its update
                           of normal-only contacts' normal rows alone are off (solver_linesearch.c; tests) */
  int no_sized_sums;    /* nonzero: the evaluation's residual sums and the SIZED loops over each tree with its
                           size a variable (solver.c, residual_sums; the same bits; tests) */
  int no_one_tree_islands; /* nonzero: a model of one tree finds its one island by the general union-find
                              and counting sorts (solver.c, find_islands; the same islands; tests) */
  int no_chord;         /* nonzero: every Newton direction assembles and factors H (no chord steps with the
                           last factor, solver.c; tests) */
  int *act_fac;         /* (ntree) the islands act[0..nact_fac-1] of the last factorization that a chord step
                           may reuse (fac_ok) */
  int nact_fac, fac_ok;
  int chord_iters;      /* the last solve's chord steps (grit_solver_stats.chord_iters; tests) */
  int no_reopen;        /* nonzero: a contact without friction that the last step opened is not modelled
                           pressed in the next direction (solver_lookahead.c; tests) */
  /* Islands: the connected components of the graph of trees linked by a constraint (candidates
   * included, whatever their state). l(v) is a sum of one term per island, so each island is its own
   * convex problem (find_islands). */
  int nisl;
  int *tree_isl;     /* (ntree) tree t's island */
  int *uf;           /* (ntree) union-find scratch */
  int *isl_start;    /* (ntree + 1) island k's constraints: isl_con[isl_start[k] .. isl_start[k+1]-1] */
  int *isl_con;      /* (cap_c) */
  int *isl_tstart;   /* (ntree + 1) island k's trees: isl_tree[isl_tstart[k] .. isl_tstart[k+1]-1] */
  int *isl_tree;     /* (ntree) */
  int *act;          /* (ntree) the islands an iteration works on */
  unsigned char *tree_on; /* (ntree) whether tree t's island takes this iteration's Newton step */
  unsigned char *tree_flag; /* (ntree) scratch of the first step's prediction (solver_start.c) */
  double *isl;       /* (ISL_FIELDS x ntree) per-island numbers, below */
};

/* Per-island numbers, ISL(s, field)[k] for island k: the sums of the convergence test over its dofs
 * (|D r|^2, |D A e|^2, |D J^T gamma|^2), its cost terms e^T A e and sum l_i, the largest |D^-1 v| and
 * |D^-1 v*| (round-off floor), its last line-search step, its number of dofs, how it started
 * (ISL_WARM: WARM_NONE, WARM_TAKEN, WARM_NEAR; solver_start.c), and |D r|^2 at the evaluation before its
 * last one (ISL_RNP: the last step's reduction of the residual, for the chord steps of solver.c). */
enum { ISL_RN, ISL_AN, ISL_JN, ISL_EE, ISL_CC, ISL_VMAX, ISL_SMAX, ISL_ALPHA, ISL_NDOF, ISL_WARM, ISL_RNP, ISL_FIELDS };
#define ISL(s, f) ((s)->isl + (size_t)(f) * (size_t)(s)->m->ntree)

/* ISL_WARM: the island started at v (or v*); at the second start (grit_solver_set_warm), already evaluated
 * there; and, from the first iteration's choice of models on, that start was within the global phase's
 * residual (GLOBAL_RESIDUAL): its first step takes no prediction of stiction and the line search's cap of
 * the later ones (solver.c, choose_active). */
#define WARM_NONE 0.0
#define WARM_TAKEN 1.0
#define WARM_NEAR 2.0

/* ------------------------------------------------------------------------- constraint algebra */

/* Rows r0 .. r1-1 of y = J x + (with_bias ? b : 0) for constraint c (each row the same sums whichever
 * rows are asked for). */
/* y[r] += J_r x over rows r0 .. r1-1 of one tree's n columns; inlined with constant n for the common
 * tree sizes (the same sums in the same order). */
static inline void apply_tree_rows(const double *J, const double *x, int n, double *y, int r0, int r1) {
  for (int r = r0; r < r1; ++r) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += J[r * n + j] * x[j];
    y[r] += s;
  }
}

/* The same sums over columns lo .. hi-1 only, J being zero outside them: each sum starts at +0, and a sum
 * that starts at +0 is never -0 (x + y is -0 only when both are), so adding the exact zeros J_rj x_j
 * (+0 or -0, x finite) changes no bit. A contact on a long chain of one tree (a composite's loop or rope:
 * the bodies from the root to it) has J zero on the dofs after its body. */
static inline void apply_tree_rows_cols(const double *J, const double *x, int n, int lo, int hi, double *y, int r0,
                                        int r1) {
  for (int r = r0; r < r1; ++r) {
    double s = 0.0;
    for (int j = lo; j < hi; ++j) s += J[r * n + j] * x[j];
    y[r] += s;
  }
}

static inline void constraint_apply_rows(const grit_model *m, const grit_constraint *c, const double *jstore,
                                         const double *x, int with_bias, double *y, int r0, int r1) {
  for (int r = r0; r < r1; ++r) y[r] = with_bias ? c->b[r] : 0.0;
  for (int k = 0; k < c->ntree; ++k) {
    const int n = m->tree_dofnum[c->tree[k]], adr = m->tree_dofadr[c->tree[k]];
    const double *J = jstore + c->joff[k];
    if (n == 6) apply_tree_rows(J, x + adr, 6, y, r0, r1);
    else if (n == 3) apply_tree_rows(J, x + adr, 3, y, r0, r1); /* a particle on three slides */
    else if (n == 7) apply_tree_rows(J, x + adr, 7, y, r0, r1);
    else apply_tree_rows(J, x + adr, n, y, r0, r1);
  }
}

/* constraint_apply_rows over the constraint's nonzero columns per tree, cols (grit_solver.jcols). */
static inline void constraint_apply_rows_cols(const grit_model *m, const grit_constraint *c, const double *jstore,
                                              const int *cols, const double *x, int with_bias, double *y, int r0,
                                              int r1) {
  for (int r = r0; r < r1; ++r) y[r] = with_bias ? c->b[r] : 0.0;
  for (int k = 0; k < c->ntree; ++k) {
    const int n = m->tree_dofnum[c->tree[k]], adr = m->tree_dofadr[c->tree[k]];
    apply_tree_rows_cols(jstore + c->joff[k], x + adr, n, cols[2 * k], cols[2 * k + 1], y, r0, r1);
  }
}

/* A Lagged contact without friction (gamma_n0 = 0: it was not pressed at the start of the step, as most
 * of a clutter's candidates) depends on its normal velocity only: its tangential rows can be left out of
 * J x (set to 0) during the solve. */
static inline int normal_only(const grit_constraint *c) {
  return c->kind == GRIT_CONSTRAINT_LAGGED && c->p.gn0 == 0.0;
}

/* y = J x + (with_bias ? b : 0) for constraint c (for a normal-only contact its normal row, 0 else). */
static inline void constraint_apply(const grit_model *m, const grit_constraint *c, const double *jstore,
                                    const double *x, int with_bias, double *y) {
  if (normal_only(c)) {
    y[0] = y[1] = 0.0;
    constraint_apply_rows(m, c, jstore, x, with_bias, y, 2, 3);
  } else {
    constraint_apply_rows(m, c, jstore, x, with_bias, y, 0, c->dim);
  }
}

/* y += J^T f for constraint c (rows with f = 0 add nothing and are skipped). */
static inline void apply_tree_transpose(const double *J, const double *f, int dim, int n, double *y) {
  for (int r = 0; r < dim; ++r) {
    if (f[r] == 0.0) continue;
    for (int j = 0; j < n; ++j) y[j] += J[r * n + j] * f[r];
  }
}

/* y += J^T f over columns lo .. hi-1 of one tree's n, J being zero outside them: the same bits as the whole
 * row when no entry of y is -0 (adding an exact zero to -0 would make it +0), as in a sum started at +0. */
static inline void apply_tree_transpose_cols(const double *J, const double *f, int dim, int n, int lo, int hi,
                                             double *y) {
  for (int r = 0; r < dim; ++r) {
    if (f[r] == 0.0) continue;
    for (int j = lo; j < hi; ++j) y[j] += J[r * n + j] * f[r];
  }
}

static inline void constraint_apply_transpose(const grit_model *m, const grit_constraint *c, const double *jstore,
                                              const double *f, double *y) {
  for (int k = 0; k < c->ntree; ++k) {
    const int n = m->tree_dofnum[c->tree[k]], adr = m->tree_dofadr[c->tree[k]];
    const double *J = jstore + c->joff[k];
    if (c->dim == 3 && n == 6) apply_tree_transpose(J, f, 3, 6, y + adr);
    else if (c->dim == 3 && n == 3) apply_tree_transpose(J, f, 3, 3, y + adr);
    else if (c->dim == 1 && n == 3) apply_tree_transpose(J, f, 1, 3, y + adr); /* a grid's tendon */
    else if (c->dim == 3 && n == 7) apply_tree_transpose(J, f, 3, 7, y + adr);
    else apply_tree_transpose(J, f, c->dim, n, y + adr);
  }
}

/* fmax without the library call (the math library's fmax is not inlined without -ffast-math and was
 * a tenth of the solver's own time on the arm): the larger of a and b, and a when b is NaN, as fmax. */
static inline double maxd(double a, double b) { return a > b || b != b ? a : b; }

/* The solver's loops over one tree's n dofs, written once and inlined with a free body's 6 as a constant where
 * they are called (SIZED): the same operations in the same order, without the loop's set-up and the vector
 * path's overlap tests, which were 50-60 instructions for 6 entries (the sliding rod). grit_solver's
 * no_sized_sums: n as a variable always (test_solver). */
#define SIZED(s, n, ...)                  \
  do {                                    \
    if ((n) == 6 && !(s)->no_sized_sums) { \
      const int n_ = 6;                   \
      __VA_ARGS__;                        \
    } else {                              \
      const int n_ = n;                   \
      __VA_ARGS__;                        \
    }                                     \
  } while (0)
/* m = max(m, |x_i| d_i) over n entries (the round-off floor's sizes). */
static inline double max_scaled(double m, const double *x, const double *d, int n) {
  for (int i = 0; i < n; ++i) m = maxd(m, fabs(x[i]) * d[i]);
  return m;
}

/* The cost, impulse and Hessian of constraint c at the constraint velocity vc (a normal-only contact's
 * without evaluating its friction, which is zero: the same numbers as grit_constraint_eval). */
static inline double constraint_eval(const grit_constraint *c, double dt, const double vc[3], double g[3],
                                     double G[9]) {
  if (!normal_only(c)) return grit_constraint_eval(c->kind, &c->p, dt, vc, g, G);
  for (int k = 0; k < 8; ++k) G[k] = 0.0;
  g[0] = g[1] = 0.0;
  return grit_contact_lagged_frictionless(&c->p, dt, vc[2], &g[2], &G[8]);
}

/* A Lagged contact's normal breaking velocity, above which its normal impulse is zero (hc_vhat; with
 * gradient smoothing, where its support law ends too). */
static inline double breaking_velocity(const grit_constraint *c, double dt) {
  double vhat = -c->p.phi0 * (1.0 / dt); /* gradient smoothing's film and soft support break here too */
  if (c->p.d > 0.0) {
    const double b = 1.0 / c->p.d;
    if (b < vhat || vhat != vhat) vhat = b; /* fmin without the library call (the line search's hot path) */
  }
  return vhat;
}

/* grit_constraint.isotropic: the exact Hessian, the isotropic one at the contact's slip, or at the
 * stiction model's soft norm (ISO_STICK, below GLOBAL_RESIDUAL), or the primal-dual model with the dual
 * estimate grit_constraint.wt (ISO_DUAL, solver_start.c) */
enum { ISO_EXACT = 0, ISO_SLIP = 1, ISO_STICK = 2, ISO_DUAL = 3 };

/* grit_solver.asm_all: whose assembly the kept factor is (grit_solver_refactor) */
enum { KEPT_NONE = 0, KEPT_STEP = 1, KEPT_REFAC = 2 };

/* y = M_t x on tree t's dofs, as grit_tree_mulv (each entry summed from zero over j in order, the same
 * operations, the same bits), with a free body's 6 dofs (and a 7-joint arm's 7) as a constant so that
 * the loops unroll: A dv per tree and iteration was 3.3 % of the series' clutters' step in the generic
 * loop. */
static inline void tree_mulv_n(const double *Mt, const double *x, double *y, int n) {
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s = Mt[i * n + j] * x[j] + s;
    y[i] = s;
  }
}

/* tc: a big tree whose A keeps M's pattern over that pattern (grit_treechol_mulv: the same bits; the softbox's,
 * flag's, cloth's dense 224, 340, 166-dof products were 5-6 % of their steps); NULL: dense. */
static inline void tree_mulv(const grit_model *m, const grit_treechol *tc, const double *M, int t, const double *x,
                             double *y) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  if (n == 6) tree_mulv_n(M + m->tree_madr[t], x + adr, y + adr, 6);
  else if (n == 3) tree_mulv_n(M + m->tree_madr[t], x + adr, y + adr, 3); /* a particle on three slides */
  else if (n == 7) tree_mulv_n(M + m->tree_madr[t], x + adr, y + adr, 7); /* the arm */
  else if (!(n > 64 && tc && grit_treechol_mulv(tc, t, M, x, y))) grit_tree_mulv(m, M, t, x, y);
}

/* solver_jcols.c: the structural columns' lists and whether some tree takes lists (at creation; 0: out of
 * memory); each constraint's span per tree and list (once per solve); the lists alone (the refactor); J^T f
 * over the span or, given one (grit_solver_jlist_apply), the list. */
int grit_solver_jcols_create(grit_solver *s, const grit_model *m);
void grit_solver_find_jcols(grit_solver *s, const grit_model *m, int nc);
void grit_solver_find_jlists(grit_solver *s, const grit_model *m, int nc);
/* (a one-row constraint on one tree whose span is at most 4 columns, the softbox's fixed slides of one column
 * each, by a plain loop: the general loops' set-up was ~115 instructions a call, 8 % of its step; the same
 * sums. m->no_short_span: the general loops, as before, tests.) */
void grit_solver_apply_transpose_cols(const grit_model *m, const grit_constraint *c, const double *jstore,
                                      const int *cols, const double *f, double *y, const int *l, int nl);

/* solver_jcols.c: constraint_apply over the constraint's nonzero columns per tree, cols (grit_solver.jcols), kept
 * out of line (for the constraints on a tree of JCOLS_MIN_NV dofs or more only, find_jcols, so that the
 * small trees' unrolled products stay as they were). */
void grit_solver_apply_cols(const grit_model *m, const grit_constraint *c, const double *jstore, const int *cols,
                            const double *x, int with_bias, double *y);
/* Constraint i's list when J x and J^T f take it: it has one, and its span is at least four times as long
 * (a list's indexed loads cost about as much as four of the span's columns, whose J^T f vectorizes: a
 * humanoid's contact, its foot's path from the root, took 1 % more of the step over its list); NULL
 * otherwise. The softbox's tendon equalities join two dofs far apart in its tree: their spans were most of
 * its 224. */
static inline const int *grit_solver_jlist_apply(const grit_solver *s, int i, int *nl) {
  const int o = s->jloff[i];
  if (o < 0 || s->no_jlist_apply) return NULL;
  const int *l = s->jlist + o;
  *nl = s->jlnum[i];
  return *nl > 0 && l[*nl - 1] - l[0] + 1 >= 4 * *nl ? l : NULL;
}
/* solver_jcols.c: grit_solver_apply_j's product over the list l of constraint i (one tree). */
void grit_solver_apply_list(const grit_solver *s, const grit_model *m, int i, const int *l, int nl, const double *x,
                            int with_bias, double *y);
/* grit_solver_apply_cols for constraint i, over its listed columns (jlist) where grit_solver_jlist_apply takes
 * them, else over its span: the same bits (sums from +0 leave out exact zeros, x finite). */
static inline void grit_solver_apply_j(const grit_solver *s, const grit_model *m, int i, const double *x,
                                       int with_bias, double *y) {
  int nl = 0;
  const int *l = grit_solver_jlist_apply(s, i, &nl), *cols = s->jcols + 4 * i;
  if (l) grit_solver_apply_list(s, m, i, l, nl, x, with_bias, y);
  else grit_solver_apply_cols(m, &s->c[i], s->jstore, cols, x, with_bias, y);
}

/* solver_jcols.c: y = J x + b (b NULL: J x) and y += J^T f for a 3-row constraint on one free body (J 3 x 6,
 * x and y the body's 6 entries), the three rows' sums as lanes of AVX2 vectors, each in the loops' order. */
void grit_solver_free3_apply(const double *J, const double *x, const double *b, double y[3]);
void grit_solver_free3_transpose(const double *J, const double f[3], double *y);
/* Whether constraint c takes them: 3 rows (not a normal-only contact's one) on one tree of 6 dofs. */
static inline int grit_solver_free3(const grit_solver *s, const grit_model *m, const grit_constraint *c) {
  return s->free3 && c->ntree == 1 && c->dim == 3 && m->tree_dofnum[c->tree[0]] == 6 && !normal_only(c);
}

/* (solver.c's assembly:) */
/* Whether the n doubles at a and b are the same bits (memcmp's answer, inlined for 1 to 9). */
static inline int same_bits_n(const double *a, const double *b, int n) {
  int same = 1;
  for (int e = 0; e < n; ++e) {
    unsigned long long x, y;
    memcpy(&x, a + e, sizeof x), memcpy(&y, b + e, sizeof y);
    same &= x == y;
  }
  return same;
}

/* Keeps the matrix G constraint i adds in this assembly (grit_solver_refactor compares its dim x dim
 * entries): all nine, a copy of constant size the compiler writes out in a few moves. */
static inline void keep_added(grit_solver *s, int i, const double G[9]) {
  s->gadd[i] = 1;
  memcpy(s->gasm + 9 * (size_t)i, G, sizeof(double) * 9);
}

/* Whether constraint i's term goes to a free-body run (solver.c, assemble: a run of terms on one free body alone in
 * its tree in one call of the Hessian's free-body kernel, its block held in registers; the same terms in the same
 * order, any other term added only after the run before it, so that a block receives its terms in index order
 * either way): 3 rows on one tree of 6 dofs without a column list, and G with a nonzero entry off the normal's
 * (grit_hessian_add takes a normal-only G to fewer terms, a zero G to none). */
static inline int free_run_term(const grit_solver *s, const grit_constraint *c, int i, const double *G) {
  if (c->ntree != 1 || c->dim != 3 || s->m->tree_dofnum[c->tree[0]] != 6 || s->jloff[i] >= 0) return 0;
  int off = 0;
  for (int k = 0; k < 8; ++k) off |= G[k] != 0.0;
  return off;
}

/* solver.c: evaluates island k at v (compute_vc: the constraint velocities from v; else as carried along
 * the last step): e = v - v*, A e, the constraints' cost, gamma and G, J^T gamma, the residual r and the
 * island's ISL numbers (its cost 0.5 ISL_EE + ISL_CC). */
void grit_solver_eval_island(grit_solver *s, const grit_model *m, const double *A, const double *vstar, const double *v,
                             double dt, int k, int compute_vc);

/* solver_linesearch.c: the exact line search along s->dv over the active islands s->act[0..nact-1], each
 * island its own step (first: the first iteration's cap) of at most max_ls_iters iterations (added to
 * *ls_iters); v, e, A e and the constraint velocities move. The islands that moved are left in s->act
 * (returns their count). */
int grit_solver_search_islands(grit_solver *s, const grit_model *m, int max_ls_iters, double dt, const double *A,
                               int nact, int first, double *v, int *ls_iters);

/* solver_start.c */
void grit_solver_global_hessian(const grit_constraint *c, double Gm[9]);
/* The model of a Lagged contact predicted to be pressed (grit_constraint.gn_start; solver_start.c's first
 * step and solver_lookahead.c's later ones): whether c can take it (a plain Lagged contact without normal
 * impulse, not under gradient smoothing's laws), and its value, the curvature of the normal law's pressed
 * branch at the breaking velocity vhat, dt k (dt (1 - d vhat) + d (-phi0 - dt vhat)), or 0 when that is not
 * positive and finite. */
static inline int grit_solver_pressable(const grit_constraint *c) {
  return c->kind == GRIT_CONSTRAINT_LAGGED && !(c->p.smooth > 0.0) && !(c->p.soft > 0.0) && c->gamma[2] == 0.0;
}
static inline double grit_solver_pressed_curvature(const grit_constraint *c, double dt, double vhat) {
  const double pen = -c->p.phi0 - dt * vhat, damp = 1.0 - c->p.d * vhat;
  const double g = c->p.k * dt * (dt * damp + c->p.d * pen);
  return g > 0.0 && isfinite(g) ? g : 0.0;
}

void grit_solver_choose_isotropic(grit_solver *s, int k, int iter, int stick_start, int global);
void grit_solver_predict_pressed(grit_solver *s, const grit_model *m, const double *vstar, double dt, int nact,
                                 int on);
void grit_solver_start_free_islands(grit_solver *s, const grit_model *m, const double *A, const double *vstar,
                                    const double *vwarm, double dt, double *v);
void grit_solver_stick_rhs(grit_solver *s, const grit_model *m, int nact, double dt);

/* solver_lookahead.c: the contacts of the active islands without normal impulse at v that the rest of the
 * last direction, (1 - alpha) dv, would press, or without friction that were pressed at the last step's
 * start (unless no_reopen), get the model of a contact pressed (gn_start) for the next direction, the others none;
 * returns their count. */
int grit_solver_predict_engaging(grit_solver *s, double dt, int nact);

#endif
