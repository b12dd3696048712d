/* SPDX-License-Identifier: Apache-2.0 */
/* solver.h — the convex Newton solver of the time step (internal).
 *
 * Minimizes l(v) = 1/2 (v - v*)^T A (v - v*) + sum_i l_i(J_i v + b_i) by Newton's method with an exact
 * line search (seed 000 section X). The Hessian H = A + sum_i J_i^T G_i J_i has the block structure of
 * the model: a dense block per tree (clique), plus a coupling block between the two trees a contact
 * touches. It is factored densely (LAPACK) for small nv and by a block-sparse Cholesky on the tree
 * graph (blockchol.h: minimum-degree order of the trees, symbolic analysis reused while the coupling
 * pattern of the active constraints is unchanged) otherwise. Newton works island by island (the
 * components of the trees' graph of constraints: separate problems), so its last factorization may
 * cover only some trees; grit_solver_refactor factors H at the solution, over every tree, and that
 * factor is kept for the derivatives. */
#ifndef GRIT_SOLVER_H
#define GRIT_SOLVER_H

#include "constraint.h"
#include "contact_model.h"
#include "model_internal.h"

/* Solver settings. */
typedef struct grit_solver_options {
  double rel_tol;      /* relative tolerance eps_r of the scaled optimality criterion (1e-5) */
  double abs_tol;      /* absolute tolerance eps_a (1e-14) */
  int max_iters;       /* Newton iterations before reporting non-convergence (100) */
  int max_ls_iters;    /* line-search iterations per Newton iteration (100) */
  int dense_max_nv;    /* the dense LAPACK path is used up to this nv */
  int sparse_path;     /* above it: 1 block-sparse Cholesky (default), 2 CHOLMOD */
  int timing;          /* nonzero: fill the stats' phase times (clock calls around each phase) */
  int stick_start;     /* nonzero (default): the first Newton step models the Lagged contacts predicted to
                          stick as stuck (solver.c, ISO_STICK); needs A to be the inertia the Delassus
                          estimate reads (not in quasistatic mode) */
} grit_solver_options;

/* What one solve did. */
typedef struct grit_solver_stats {
  int newton_iters;
  int ls_iters;         /* total over the Newton iterations */
  double residual;      /* ||D r|| at exit */
  double residual_ref;  /* max(||D A (v - v*)||, ||D J^T gamma||) at exit */
  double cond_estimate; /* (max diag / min diag)^2 of the last Cholesky factor: a cheap lower bound */
  double cost;
  int used_sparse;     /* the path of the last factorization: 0 dense, 1 block-sparse, 2 CHOLMOD */
  /* with options.timing: wall time per phase summed over the iterations, microseconds */
  double t_eval;       /* constraint evaluations, residual, convergence test */
  double t_assembly;   /* H = A + sum J^T G J in blocks (and the coupling pattern) */
  double t_factor;     /* Cholesky factorization (dense: expansion into the matrix included) */
  double t_solve;      /* the triangular solves for the Newton step */
  double t_linesearch; /* A dv, J dv and the exact line search */
  double factor_flops; /* floating-point operations of the factorizations, summed over the iterations */
  int chord_iters;     /* Newton iterations (counted in newton_iters) whose direction reused the last factor */
} grit_solver_stats;

typedef struct grit_solver grit_solver;
typedef struct grit_afactor grit_afactor; /* afactor.h */

grit_solver_options grit_solver_default_options(void);

/* Creates a solver for model m with room for `max_constraints` constraints and `max_jstore` doubles of
 * Jacobian storage. */
grit_status grit_solver_create(const grit_model *m, int max_constraints, int max_jstore, grit_solver **s,
                               char *message);
void grit_solver_free(grit_solver *s);

/* The constraint array and Jacobian storage to fill before a solve, and their capacities. */
grit_constraint *grit_solver_constraints(grit_solver *s, int *capacity);
double *grit_solver_jstore(grit_solver *s, int *capacity);
/* The count grit_build_cx_constraints keeps between steps (constraints_extra.h): 0 at creation. */
int *grit_solver_cx_built(grit_solver *s);

/* Solves with the first nc constraints. A: the implicit operator in tree-block storage (not factored);
 * Achol: its tree-block Cholesky factor (kept as the factor of H when nc == 0); vstar: free motion;
 * v (in: initial guess, out: solution). On failure v is unspecified and the status says why. */
grit_status grit_solver_solve(grit_solver *s, const grit_model *m, const grit_solver_options *opt, double dt,
                              const double *A, const double *Achol, const double *vstar, int nc, double *v,
                              grit_solver_stats *stats, char *message);

/* Which trees of Achol's factor (grit_solver_solve) are in tree order (afactor.h; NULL, the default:
 * none); kept for every later solve (the data sets its own once, at creation). Read by the Delassus
 * estimates of the stick prediction and by the solves with A's factor when nc == 0. */
void grit_solver_set_afactor(grit_solver *s, const grit_afactor *af);

/* A second start for the next solve only (nv; NULL: none): each island that is not free (its minimizer
 * v*) starts there instead of at v when its cost l is lower there (solver_start.c). Read by that solve,
 * which clears it. */
void grit_solver_set_warm(grit_solver *s, const double *vwarm);

/* Assembles and factors H at the constraints' current values (their G from the last evaluation, at
 * the solution after a converged solve), so the kept factor is that of H at the solution. */
grit_status grit_solver_refactor(grit_solver *s, const double *A, int nc, char *message);

/* Allows (1, the default) or forbids (0) grit_solver_refactor to keep the step's factor when it is already
 * that of the exact Hessian at the solution (the same bits); forbidden, H is assembled and factored again
 * (tests). grit_solver_factor_kept: whether the last refactor kept it. */
void grit_solver_keep_factor(grit_solver *s, int allow);
int grit_solver_factor_kept(const grit_solver *s);

/* Solves H x = b in place with the kept factor: grit_solver_refactor's after a solve with
 * constraints (the last Newton iteration's may cover only some islands), A's without (nrhs columns
 * of length nv, column-major). Returns GRIT_ERR_STATE if there is none. */
grit_status grit_solver_factor_solve(grit_solver *s, double *b, int nrhs);

/* The parts of the kept factor: tree t's part, H having no block between trees of different parts
 * (with nc == 0, H = A: a part per tree); sets *nparts. NULL: a single part. Valid until the next
 * solve or refactor. */
const int *grit_solver_factor_parts(const grit_solver *s, int *nparts);

/* grit_solver_factor_solve for columns that each lie in one part: column k is zero outside the trees
 * of part[k] (-1: anywhere), and so is its solution; only those rows are touched, at the cost of that
 * part alone. part NULL: as grit_solver_factor_solve. */
grit_status grit_solver_factor_solve_parts(grit_solver *s, double *b, int nrhs, const int *part);
/* grit_solver_factor_solve_parts for columns anywhere (column c's dof j at X[c] + j), each read and
 * written in the rows of its part only (grit_blockchol_solve_cols): when grit_solver_factor_cols says
 * the last factor can (H's block factor with parts); GRIT_ERR_STATE otherwise. */
int grit_solver_factor_cols(const grit_solver *s);
grit_status grit_solver_factor_solve_cols(grit_solver *s, double *const *X, int nrhs, const int *part);

#endif
