/* SPDX-License-Identifier: Apache-2.0 */
/* grit_ilqr/ilqr.h — trajectory optimization by iterative LQR (iLQR) over any discrete dynamics.
 *
 * The problem, over a horizon of N steps (N + 1 states x_0..x_N, N controls u_0..u_{N-1}):
 *
 *     minimize  sum_{k<N} l(x_k, u_k, k) + l_N(x_N)     subject to  x_{k+1} = f(x_k, u_k),  x_0 given,
 *                                                                   u_min <= u_k <= u_max (optional),
 *                                                                   C (x_N (-) x_goal) = 0 (optional)
 *
 * States may live on a manifold (quaternions): the dynamics give the difference of two states in a
 * tangent space of dimension ndx, and Jacobians and cost derivatives are taken in that space.
 *
 * The cost is a quadratic part,
 *     l(x, u, k) = 1/2 e' Q e + 1/2 (u - u_ref)' R (u - u_ref),   l_N(x) = 1/2 e' Qf e,   e = x (-) x_goal,
 * plus an optional general cost given by a callback with its gradient and Hessian.
 *
 * The method (docs/ilqr.md): a backward pass with Levenberg–Marquardt regularization of Q_uu and,
 * with control limits, a box-constrained QP per knot solved by projected Newton (Tassa, Mansard and
 * Todorov 2014) giving feedforward and feedback gains; a forward pass with a backtracking line search
 * accepted on the ratio of actual to expected cost reduction (never on a cost increase). The Jacobians
 * of the N steps of a rollout are independent given the rollout and are computed on several threads.
 * A final equality constraint is met by an augmented Lagrangian: runs of these iterations on the cost
 * plus a multiplier and a penalty term, with the multipliers updated between runs.
 *
 * Every fallible function returns a grit_status; the solver keeps a message (grit_ilqr_last_error).
 * Matrices are row-major. */
#ifndef GRIT_ILQR_H
#define GRIT_ILQR_H

#include "grit/status.h"
#include "grit_ilqr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The package version as "MAJOR.MINOR.PATCH": grit's version (grit_version(), grit/version.h); one number for all. */
GRIT_ILQR_API const char *grit_ilqr_version(void);

/* ------------------------------------------------------------------------------------ dynamics */

/* Discrete dynamics. The solver keeps two rollouts, the current one and a candidate; `slot` (0 or 1)
 * says which one a call belongs to, so that an implementation may keep per-knot work (for grit: the
 * step's factorization) between `step` and `jacobians`. Callbacks return 0 on success, nonzero on
 * failure (a failed candidate rollout is rejected by the line search; a failure elsewhere ends the
 * solve with GRIT_ERR_NUMERICAL). */
typedef struct grit_ilqr_dynamics {
  int nx;  /* size of a state vector */
  int ndx; /* size of its tangent space (= nx for vector states) */
  int nu;  /* number of controls */
  void *ctx;
  /* x_next = f(x, u) at knot k of rollout `slot`. Called for k = 0, 1, ..., N-1 in order, from the
   * thread that called grit_ilqr_solve. */
  int (*step)(void *ctx, int slot, int k, const double *x, const double *u, double *x_next);
  /* fx = df/dx (ndx x ndx) and fu = df/du (ndx x nu) at knot k of rollout `slot`, whose step was the
   * last one taken for that (slot, k). Called after the rollout, concurrently from `nthreads` threads
   * for different k; `thread` (0..nthreads-1) names the calling thread's share of any workspace. */
  int (*jacobians)(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                   double *fu);
  /* dx = xb (-) xa in the tangent space (ndx numbers). NULL: plain subtraction (requires nx == ndx). */
  void (*difference)(void *ctx, const double *xa, const double *xb, double *dx);
} grit_ilqr_dynamics;

/* ---------------------------------------------------------------------------------------- costs */

/* A general cost term, added to the quadratic one. At a running knot (k < N) it receives u; at the
 * final knot (k == N) u is NULL and lu, luu, lux are NULL. It must write *l and, when the pointers are
 * not NULL, the gradient lx (ndx), lu (nu) and the Hessian lxx (ndx x ndx), luu (nu x nu), lux (nu x ndx)
 * with respect to a tangent-space perturbation of x. The solver wants lxx and luu positive
 * semidefinite (a Gauss–Newton approximation is fine). Return 0, or nonzero on failure. */
typedef int (*grit_ilqr_cost_fn)(void *ctx, int k, const double *x, const double *u, double *l, double *lx,
                                 double *lu, double *lxx, double *luu, double *lux);

/* ---------------------------------------------------------------------------------------- problem */

typedef struct grit_ilqr_problem {
  grit_ilqr_dynamics dynamics;
  int horizon;          /* N >= 1 */
  const double *x0;     /* the initial state (nx) */
  /* Quadratic cost; every pointer may be NULL (that term is zero). All are copied. */
  const double *x_goal; /* nx; required if Q or Qf is given */
  const double *Q;      /* ndx x ndx, symmetric positive semidefinite: running state weight */
  const double *Qf;     /* ndx x ndx: final state weight */
  const double *R;      /* nu x nu, symmetric positive semidefinite: control weight */
  const double *u_ref;  /* nu: the control the weight R pulls towards (NULL: zero) */
  grit_ilqr_cost_fn cost; /* optional general cost */
  void *cost_ctx;
  /* Control box; NULL for none. u_min < u_max componentwise (+-INFINITY allowed). Copied. */
  const double *u_min;
  const double *u_max;
  /* Optional final equality constraint  C_final (x_N (-) x_goal) = 0  (nc_final rows of ndx columns;
   * e.g. rows of the identity to make chosen components of the final state reach the goal exactly),
   * enforced by an augmented Lagrangian around the iLQR iterations (docs/ilqr.md). nc_final = 0 and
   * C_final = NULL: no constraint. Needs x_goal. Copied. */
  int nc_final;
  const double *C_final;
  /* Optional path inequality constraints at every running knot k < N (added after 0.3.0):
   *     h_k = Cx_path (x_k (-) x_goal) + Cu_path u_k - d_path <= 0      (nc_path rows),
   * on states and controls, met by an augmented Lagrangian like the final constraint (docs/ilqr.md).
   * Cx_path (nc_path x ndx) may be NULL (no state part; then x_goal is not needed) and Cu_path
   * (nc_path x nu) may be NULL (no control part); d_path (nc_path) is required when nc_path > 0.
   * A problem zero-initialised or written before these fields existed has nc_path = 0: no
   * constraint. Copied. */
  int nc_path;
  const double *Cx_path;
  const double *Cu_path;
  const double *d_path;
} grit_ilqr_problem;

/* --------------------------------------------------------------------------------------- options */

/* One iteration, as reported to the log callback. */
typedef struct grit_ilqr_iteration {
  int iteration;         /* 1, 2, ... */
  double cost;           /* the cost after this iteration (with a final constraint: plus its
                            augmented-Lagrangian terms, the function the line search decreases) */
  double actual;         /* actual reduction of the cost (0 if no step was accepted) */
  double expected;       /* reduction the quadratic model predicted for the accepted step */
  double alpha;          /* accepted line-search step (0: none accepted) */
  double regularization; /* mu added to Q_uu's diagonal in the backward pass that produced the step */
  double feedforward;    /* size of the feedforward step: mean over knots of max_i |k_i| / (|u_i| + 1) */
  int line_search_trials; /* over all the line searches of this iteration */
  int clamped;           /* knots where a control limit was active in the backward pass */
  double t_rollout;      /* seconds in rollouts (line search included) */
  double t_derivatives;  /* seconds in dynamics Jacobians and cost derivatives */
  double t_backward;     /* seconds in the backward pass */
  double violation;      /* final constraint: max_i |c_i| after this iteration (0 without one) */
  double penalty;        /* its augmented-Lagrangian penalty rho during this iteration (0 without one) */
  /* Added after 0.3.0: */
  double gradient;       /* the first-order optimality measure of this iteration's linearization:
                            sum_k max_i |g_ki| (|u_ki| + 1) / |J|, with g = dJ/du the exact gradient of
                            the (augmented) cost by the adjoint recursion, projected on the control box
                            (no regularization enters it) */
  int rollouts;          /* rollouts this iteration (line-search trials that were rolled out) */
  int backward_passes;   /* backward passes this iteration (> 1 when mu grew) */
  int derivatives_reused;/* 1 when this iteration reused the Jacobians of the previous one (it took no
                            step, so the linearization point did not change) */
  int rejected;          /* line searches of this iteration that rejected every trial, each followed by
                            a larger mu and a new backward pass on the same Jacobians */
  double path_violation; /* path constraints: max_k,i max(h_ki, 0) after this iteration (0 without) */
  /* Added at stop 14: */
  int kink;              /* 1 when this iteration's model averaged the Jacobians across a kink
                            (options.kink_alpha) and its step came from that model; 2 when that model's
                            line search failed and the exact Jacobians gave the step or the stop */
} grit_ilqr_iteration;

typedef void (*grit_ilqr_log_fn)(void *ctx, const grit_ilqr_iteration *it);

typedef struct grit_ilqr_options {
  int max_iterations;    /* default 100 */
  double tol_cost;       /* stop when the accepted step reduces the cost by less than tol_cost * cost
                            (relative), default 1e-6 */
  double tol_feedforward;/* stop when the feedforward size (see grit_ilqr_iteration) is below this,
                            default 1e-6 */
  double reg_init;       /* initial regularization mu, default 1e-6 */
  double reg_min;        /* below this mu is set to zero, default 1e-8 */
  double reg_max;        /* give up (not converged) when mu would exceed this, default 1e10 */
  double reg_factor;     /* the schedule's growth factor (Tassa et al.), default 1.6 */
  double ls_decrease;    /* line-search step factor in (0, 1), default 0.5 */
  int ls_max_trials;     /* line-search trials before the step is rejected, default 10 */
  double ls_accept;      /* accept when actual/expected reduction >= ls_accept (> 0), default 1e-4 */
  int nthreads;          /* threads for the Jacobians, default 1 */
  /* The final constraint's augmented Lagrangian: the iterations minimize cost + lambda' c + rho/2 |c|^2
   * until they converge; then lambda += rho c, and rho *= penalty_factor (up to penalty_max) unless
   * max|c| fell below a quarter of its previous value. A solve converges when the iterations converge
   * with max|c| <= tol_constraint. lambda and rho persist between solves (a warm start). */
  double tol_constraint; /* in the units of c, default 1e-6 */
  double penalty_init;   /* rho at creation, default 1 */
  double penalty_factor; /* default 10 */
  double penalty_max;    /* default 1e8 */
  grit_ilqr_log_fn log;  /* called after each iteration (may be NULL); it may call
                            grit_ilqr_request_stop to end the solve (GRIT_ILQR_USER_STOP) */
  void *log_ctx;
  /* Added after 0.3.0 (grit_ilqr_default_options sets them; a zero-initialised struct means: no time
   * budget, the default convergence thresholds below). */
  double max_time;       /* wall-time budget of one grit_ilqr_solve in seconds (0: none). Checked before
                            each iteration and each line-search trial: a solve ends with
                            GRIT_ILQR_TIME_LIMIT and the best solution so far */
  double tol_gradient;   /* converged needs the gradient measure (grit_ilqr_iteration) below this,
                            default 1e-2 (0 in a zeroed struct: 1e-2) */
  double alpha_converged;/* converged needs the accepted step to be at least this (a full or near-full
                            step), default 0.5 (0 in a zeroed struct: 0.5) */
  int inner_max_iterations; /* an inexact augmented Lagrangian: while the final constraint is above tol_constraint,
                            a run of iterations ends after this many and the multipliers and penalty are
                            updated as after a stalled run (a run that meets the constraint goes on
                            uncapped). Default 20; 0 (a zeroed struct): each run until it converges or
                            stalls (docs/ilqr.md, "The arm pushing a ball", stop 13) */
  /* Added at stop 14 (docs/ilqr.md, "One iteration" item 6 and "The arm pushing a ball", stop 14; a
   * zeroed struct: both off, the old behaviour): */
  double kink_alpha;     /* after an accepted step with alpha <= kink_alpha, the line search backtracked
                            from a trial alpha / ls_decrease that did not decrease the cost: a kink (a
                            contact event) lies within that factor of the new point. The next
                            linearization then uses the mean of the Jacobians at the new point and at that
                            rejected trial (rolled out again: one rollout and one Jacobian evaluation more,
                            counted in the result's kink_linearizations); rollouts stay exact. If the mean
                            model's line search rejects every trial, the iteration goes on with the exact
                            Jacobians. Default 0 (off); examples/arm_push_ball uses 2^-7 (1/128) */
  int reg_limit_ends_inner; /* nonzero: with a final constraint above tol_constraint, a run that reaches
                            the regularization limit ends only its augmented-Lagrangian inner loop (lambda
                            and rho are updated as after a stall, mu restarts from reg_init) instead of the
                            solve. Default 1; 0: the solve ends there */
  /* Added at stop 15 (docs/ilqr.md, "Termination" and "The arm pushing a ball", stop 15; a zeroed
   * struct: off, the old behaviour): */
  int stall_short_steps; /* nonzero W: a run whose accepted steps have been short for about W iterations
                            (after at least W steps, the mean of log2 alpha weighted exponentially by 1/W
                            is at most -4: a geometric mean alpha <= 1/16, the line search cutting the
                            model's step by 16 or more, as where it crosses contact events the
                            linearization does not see) ends GRIT_ILQR_LINE_SEARCH_STALLED, never
                            converged. With a final or path constraint above tol_constraint this ends only
                            the augmented-Lagrangian inner run (the multipliers move), and not at all at
                            penalty_max; otherwise it ends the solve. Default 0 (off: on a smooth problem
                            such a stretch can precede convergence); examples/arm_push_ball uses 10 */
  int reg_reset_on_update; /* nonzero: after each multiplier update (final or path constraints) the
                            regularization mu restarts from reg_init (if above it) and the schedule's
                            factor from 1, as after reg_limit_ends_inner: the augmented cost changed, and a
                            mu that rejected line searches raised at the old penalty would make the new
                            run's steps tiny. Default 0 (off, as in a zeroed struct: mu is kept across
                            runs); examples/arm_push_ball turns it on with stall_short_steps */
} grit_ilqr_options;

GRIT_ILQR_API grit_ilqr_options grit_ilqr_default_options(void);

/* ---------------------------------------------------------------------------------------- solver */

typedef struct grit_ilqr grit_ilqr;

/* Why a solve stopped (docs/ilqr.md, "Termination"). Only the two CONVERGED stops are convergence;
 * grit_ilqr_stop_string gives a sentence a user can act on. */
typedef enum grit_ilqr_stop {
  GRIT_ILQR_CONVERGED_COST = 0,        /* an accepted step whose actual and expected reductions are below
                                          tol_cost x cost, either of alpha >= alpha_converged with
                                          first-order optimality, or of any length with the gradient
                                          measure below tol_gradient */
  GRIT_ILQR_CONVERGED_FEEDFORWARD = 1, /* feedforward below tol_feedforward with the gradient measure
                                          below tol_gradient (the problem's first-order optimality) */
  GRIT_ILQR_MAX_ITERATIONS = 2,        /* max_iterations reached */
  GRIT_ILQR_NO_PROGRESS = 3,           /* regularization exceeded reg_max: no descent step found */
  GRIT_ILQR_REGULARIZATION_LIMIT = 3,  /* the same stop, by its cause */
  GRIT_ILQR_LINE_SEARCH_STALLED = 4,   /* the accepted step reduced the cost by less than tol_cost x cost
                                          but it was short (alpha < alpha_converged) or the gradient is
                                          not small: the quadratic model does not predict the cost (a
                                          kink, e.g. contact switching); not a local minimum */
  GRIT_ILQR_ZERO_GRADIENT = 5,         /* the controls' gradient is zero, or numerically zero (its
                                          measure and that of its dynamics part f_u' p below 1e-6), while
                                          the cost depends on the states: the dynamics are locally flat
                                          (e.g. contact not yet made, or an object resting below the
                                          friction that would lift it) — consider gradient smoothing */
  GRIT_ILQR_NOT_FINITE = 6,            /* a non-finite cost derivative or Jacobian (solve returns
                                          GRIT_ERR_NOT_FINITE) */
  GRIT_ILQR_TIME_LIMIT = 7,            /* options.max_time reached */
  GRIT_ILQR_USER_STOP = 8              /* grit_ilqr_request_stop was called (e.g. from the log callback) */
} grit_ilqr_stop;

/* A sentence naming the stop and what to do about it (static storage). */
GRIT_ILQR_API const char *grit_ilqr_stop_string(grit_ilqr_stop stop);

typedef struct grit_ilqr_result {
  int iterations;      /* iterations performed in this solve */
  int converged;       /* nonzero for the two CONVERGED stops (with a final constraint: and max|c| <=
                          tol_constraint) */
  grit_ilqr_stop stop; /* why the last run of iterations stopped */
  double initial_cost; /* cost of the rollout of the initial controls (the problem's cost: without the
                          constraint's augmented-Lagrangian terms) */
  double cost;         /* final cost (likewise) */
  double violation;    /* final constraint: max_i |c_i| at the end (0 without one) */
  int multiplier_updates; /* augmented-Lagrangian updates of lambda in this solve */
  double t_rollout, t_derivatives, t_backward, t_total; /* seconds spent in this solve */
  /* Added after 0.3.0: */
  int rollouts;           /* rollouts in this solve (the initial one and every line-search trial) */
  int no_step_iterations; /* iterations that ended without a step (converged, or a stop) */
  int rejected_line_searches; /* line searches that rejected every trial (then mu grew, same iteration) */
  int derivative_evaluations; /* linearizations (Jacobians of all knots) in this solve */
  double gradient;        /* the gradient measure (grit_ilqr_iteration) at the last linearization */
  double path_violation;  /* path constraints: max max(h, 0) at the end (0 without) */
  /* Added at stop 14: */
  int kink_linearizations; /* Jacobian evaluations at rejected trials across a kink (options.kink_alpha),
                              not counted in derivative_evaluations */
} grit_ilqr_result;

/* Creates a solver for the problem (every array is copied; the dynamics' ctx must outlive the
 * solver). All workspaces are allocated here. The initial controls are u_ref (or zero), clamped to the
 * box. On error *solver is NULL and msg (may be NULL, GRIT_MESSAGE_SIZE bytes) says why. */
GRIT_ILQR_API grit_status grit_ilqr_create(const grit_ilqr_problem *problem, const grit_ilqr_options *options,
                             grit_ilqr **solver, char *msg);
GRIT_ILQR_API void grit_ilqr_free(grit_ilqr *solver); /* NULL is allowed */

/* The message of the solver's last error ("" if none). */
GRIT_ILQR_API const char *grit_ilqr_last_error(const grit_ilqr *solver);

GRIT_ILQR_API grit_status grit_ilqr_set_options(grit_ilqr *solver, const grit_ilqr_options *options);

/* Replaces the initial state x_0 (nx numbers), e.g. with a measured state in receding-horizon use. */
GRIT_ILQR_API grit_status grit_ilqr_set_initial_state(grit_ilqr *solver, const double *x0);

/* Replaces the control sequence (N x nu, row k = u_k), clamped to the box: the next solve starts there
 * (warm start). */
GRIT_ILQR_API grit_status grit_ilqr_set_controls(grit_ilqr *solver, const double *u);

/* Receding horizon: drops u_0 and moves u_1..u_{N-1} one knot earlier, repeating the last control;
 * the feedback gains are shifted with them. Call after grit_ilqr_set_initial_state with the state the
 * first control led to, then solve with a small max_iterations. */
GRIT_ILQR_API grit_status grit_ilqr_shift(grit_ilqr *solver);

/* Runs iLQR from the current controls. Returns GRIT_OK when the iterations ran (converged or not:
 * see result), or an error if the dynamics or the cost failed on the initial rollout or a Jacobian. */
GRIT_ILQR_API grit_status grit_ilqr_solve(grit_ilqr *solver, grit_ilqr_result *result);

/* Views of the current solution: states ((N + 1) x nx), controls (N x nu), feedback gains
 * (N x nu x ndx: u_k = u_k* + K_k (x (-) x_k*)) and feedforward terms (N x nu) of the last backward
 * pass. Valid until the next call that changes the solver. */
GRIT_ILQR_API const double *grit_ilqr_states(const grit_ilqr *solver);
GRIT_ILQR_API const double *grit_ilqr_controls(const grit_ilqr *solver);
GRIT_ILQR_API const double *grit_ilqr_gains(const grit_ilqr *solver);
GRIT_ILQR_API int grit_ilqr_horizon(const grit_ilqr *solver);

/* The cost of the current solution (the problem's cost, without the constraint's augmented-Lagrangian
 * terms). */
GRIT_ILQR_API double grit_ilqr_cost(const grit_ilqr *solver);

/* The final constraint's multipliers lambda (nc_final numbers; NULL without a constraint). */
GRIT_ILQR_API const double *grit_ilqr_multipliers(const grit_ilqr *solver);

/* ------------------------------------------------------------- changing the problem (e.g. MPC) */

/* Asks the running solve to stop after the current iteration (GRIT_ILQR_USER_STOP). Meant to be called
 * from the log callback, on the thread running grit_ilqr_solve; the request is cleared when a solve
 * starts. */
GRIT_ILQR_API void grit_ilqr_request_stop(grit_ilqr *solver);

/* Replace the goal x_goal (nx numbers), the weights Q, Qf (ndx x ndx), R (nu x nu) or the control
 * reference u_ref (nu) between solves, without re-creating the solver (checked like grit_ilqr_create;
 * each pointer NULL: that term is removed). The next solve re-prices the current controls. Allocation
 * happens here, never in a solve. A goal is needed while Q, Qf or a constraint uses it. */
GRIT_ILQR_API grit_status grit_ilqr_set_goal(grit_ilqr *solver, const double *x_goal);
GRIT_ILQR_API grit_status grit_ilqr_set_weights(grit_ilqr *solver, const double *Q, const double *Qf, const double *R);
GRIT_ILQR_API grit_status grit_ilqr_set_control_reference(grit_ilqr *solver, const double *u_ref);

/* Tells the solver that the dynamics changed (e.g. their gradient smoothing): the next solve rolls the
 * current controls out again, and a regularization mu above reg_init restarts from reg_init. */
GRIT_ILQR_API grit_status grit_ilqr_dynamics_changed(grit_ilqr *solver);

/* Replaces the right-hand side d_path (nc_path numbers) of the path constraints; their multipliers are
 * kept (a warm start). */
GRIT_ILQR_API grit_status grit_ilqr_set_path_bounds(grit_ilqr *solver, const double *d_path);

/* The path constraints' multipliers (N x nc_path; NULL without path constraints). */
GRIT_ILQR_API const double *grit_ilqr_path_multipliers(const grit_ilqr *solver);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_ILQR_H */
