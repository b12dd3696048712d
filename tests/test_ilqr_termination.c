/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr_termination.c — grit_ilqr's stops (docs/ilqr.md, "Termination"): each reason on a small
 * problem built to produce it, including the four false convergences of issue 28 (a tiny accepted
 * step with a large feedforward, heavy regularization, an identically zero gradient, a NaN gradient)
 * and a numerically flat plateau,
 * the time budget, a stop requested from the log callback, the iteration cap and the regularization
 * limit; path inequality constraints; goals and weights changed between solves. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grit_ilqr/ilqr.h"

/* ------------------------------------------------------------ scalar problems: x' = x + h(u) */

typedef struct scalar_sys {
  double kink, stiffness; /* h(u) = u + stiffness max(0, u - kink): a "contact" past u = kink */
  double jac_scale;       /* the Jacobian reported is jac_scale h'(u) (1: exact) */
  int flat;               /* 1: x' = x (the control has no effect: locally flat dynamics); 2: x' = x + 1e-12 u
                             (an effect only at round-off level: a plateau) */
  int nan_jacobian;
} scalar_sys;

static int sc_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)slot, (void)k;
  const scalar_sys *s = ctx;
  xn[0] = s->flat == 1 ? x[0] : s->flat == 2 ? x[0] + 1e-12 * u[0] : x[0] + u[0] + s->stiffness * fmax(0, u[0] - s->kink);
  return 0;
}

static int sc_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx, double *fu) {
  (void)slot, (void)k, (void)thread, (void)x;
  const scalar_sys *s = ctx;
  fx[0] = 1;
  fu[0] = s->flat == 1 ? 0 : s->flat == 2 ? 1e-12 : s->jac_scale * (1 + (u[0] > s->kink ? s->stiffness : 0));
  if (s->nan_jacobian) fu[0] = NAN;
  return 0;
}

static const double x0_zero[1] = {0}, goal_one[1] = {1}, qf_one[1] = {1};

static grit_ilqr *scalar_solver(scalar_sys *sys, int horizon, const grit_ilqr_options *o) {
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){1, 1, 1, sys, sc_step, sc_jac, NULL};
  p.horizon = horizon;
  p.x0 = x0_zero;
  p.x_goal = goal_one;
  p.Qf = qf_one;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, o, &s, msg), GRIT_OK, "%s", msg);
  return s;
}

typedef struct last_it {
  grit_ilqr_iteration it;
  int n;
  grit_ilqr *stop_at_2; /* if set: request a stop after the second iteration */
} last_it;

static void keep_last(void *ctx, const grit_ilqr_iteration *it) {
  last_it *l = ctx;
  l->it = *it;
  l->n++;
  if (l->stop_at_2 && it->iteration == 2) grit_ilqr_request_stop(l->stop_at_2);
}

/* Issue 28, case 1: the line search accepts only alpha = 2^-9 (the kink at u = 0.002 makes every longer
 * step overshoot), which lowers the cost by 0.4 % while the feedforward is 100 % of the control. With
 * tol_cost = 1e-2 the old rule called this converged. */
Test(ilqr_termination, tiny_step_with_a_large_feedforward_is_a_stalled_line_search) {
  scalar_sys sys = {0.002, 1e4, 1, 0, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  o.tol_cost = 1e-2;
  last_it l = {0};
  o.log = keep_last;
  o.log_ctx = &l;
  grit_ilqr *s = scalar_solver(&sys, 1, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_log_info("tiny step: stop %d after %d iterations, alpha %g, ff %g", (int)r.stop, r.iterations, l.it.alpha,
              l.it.feedforward);
  cr_assert_eq(r.stop, GRIT_ILQR_LINE_SEARCH_STALLED, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert(!r.converged);
  cr_assert_lt(l.it.alpha, 0.01);
  cr_assert_gt(l.it.feedforward, 0.3);
  grit_ilqr_free(s);
}

/* Issue 28, case 2: mu held at 1e7 (reg_min) turns the step into a gradient step of length 1e-7: full,
 * accepted, and below tol_cost (the old rule's "converged" after one iteration), although the problem is
 * far from its optimum. */
Test(ilqr_termination, heavy_regularization_is_not_convergence) {
  scalar_sys sys = {INFINITY, 0, 1, 0, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  o.reg_init = o.reg_min = 1e7;
  o.reg_max = 1e9;
  grit_ilqr *s = scalar_solver(&sys, 1, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_log_info("heavy mu: stop %d after %d iterations, cost %g -> %g, gradient %g", (int)r.stop, r.iterations,
              r.initial_cost, r.cost, r.gradient);
  cr_assert(!r.converged, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.stop, GRIT_ILQR_LINE_SEARCH_STALLED, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.iterations, 1);
  cr_assert_gt(r.cost, 0.49); /* nowhere near the optimum 0 */
  grit_ilqr_free(s);

  /* the same problem with the default schedule converges to the optimum, and says so */
  o = grit_ilqr_default_options();
  s = scalar_solver(&sys, 1, &o);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert(r.converged, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_lt(r.cost, 1e-12);
  grit_ilqr_free(s);
}

/* Issue 28, case 3: the control has no effect (a finger far from the box): the gradient is identically
 * zero while the cost depends on the state. */
Test(ilqr_termination, identically_zero_gradient_is_reported_as_such) {
  scalar_sys sys = {0, 0, 1, 1, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  grit_ilqr *s = scalar_solver(&sys, 10, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_assert_eq(r.stop, GRIT_ILQR_ZERO_GRADIENT, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert(!r.converged);
  cr_assert_eq(r.iterations, 1);
  cr_assert(strstr(grit_ilqr_stop_string(r.stop), "gradient smoothing"));
  grit_ilqr_free(s);
}

/* A cost whose state term weighs only the fixed x_0 (a running Q over one knot, no Qf: x_0 = 0 is 1 from
 * the goal) and whose control term is R u^2: u = 0 is the optimum, the gradient is exactly 0 there, and
 * the states the controls move (x_1) are not priced. The sensitivity p_0 to the fixed x_0 is not a
 * gradient the controls could follow: this is convergence, not "no gradient" (it was ZERO_GRADIENT). */
Test(ilqr_termination, a_cost_on_the_fixed_initial_state_alone_converges) {
  scalar_sys sys = {1e9, 0, 1, 0, 0};
  static const double q_one[1] = {1}, r_one[1] = {1};
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){1, 1, 1, &sys, sc_step, sc_jac, NULL};
  p.horizon = 1;
  p.x0 = x0_zero;
  p.x_goal = goal_one;
  p.Q = q_one;
  p.R = r_one;
  grit_ilqr_options o = grit_ilqr_default_options();
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_assert_eq(r.stop, GRIT_ILQR_CONVERGED_FEEDFORWARD, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert(r.converged);
  cr_assert_eq(grit_ilqr_controls(s)[0], 0);
  cr_assert_eq(r.cost, 0.5); /* 1/2 (x_0 - 1)^2 */
  grit_ilqr_free(s);
}

/* A plateau: the control moves the state by 1e-12 per unit (a box resting on its support below the
 * friction that would lift it, where only the contact's compliance responds). The gradient is tiny but
 * not zero, so it passes tol_gradient, and a step too small to change the cost would read as converged
 * with the goal 1 away (the gripper of test_ilqr_tasks.c was so reported). Numerically flat (the
 * dynamics' part of the gradient is itself ~0 while the cost depends on the state) is no gradient. */
Test(ilqr_termination, a_numerically_flat_plateau_is_no_gradient_not_convergence) {
  scalar_sys sys = {0, 0, 1, 2, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  grit_ilqr *s = scalar_solver(&sys, 10, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_assert_eq(r.stop, GRIT_ILQR_ZERO_GRADIENT, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert(!r.converged);
  cr_assert_eq(r.iterations, 1);
  cr_assert_lt(r.gradient, 1e-6);
  cr_assert_gt(r.gradient, 0);
  grit_ilqr_free(s);
}

/* A cost whose value is finite but whose gradient is NaN at the final knot. */
static int nan_gradient_cost(void *ctx, int k, const double *x, const double *u, double *l, double *lx, double *lu,
                             double *lxx, double *luu, double *lux) {
  (void)ctx, (void)u, (void)lu, (void)lxx, (void)luu, (void)lux;
  *l = 0.5 * x[0] * x[0];
  if (lx) lx[0] = k == 3 ? NAN : x[0];
  return 0;
}

/* Issue 28, case 4: a NaN gradient is an error, never "converged" (fmax used to drop the NaN). */
Test(ilqr_termination, nan_gradient_is_an_error) {
  scalar_sys sys = {INFINITY, 0, 1, 0, 0};
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){1, 1, 1, &sys, sc_step, sc_jac, NULL};
  p.horizon = 3;
  p.x0 = goal_one;
  p.cost = nan_gradient_cost;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, NULL, &s, msg), GRIT_OK, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(r.stop, GRIT_ILQR_NOT_FINITE);
  cr_assert(!r.converged);
  cr_assert(strstr(grit_ilqr_last_error(s), "not finite"), "%s", grit_ilqr_last_error(s));
  grit_ilqr_free(s);

  /* a NaN Jacobian likewise */
  sys.nan_jacobian = 1;
  s = scalar_solver(&sys, 3, NULL);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(r.stop, GRIT_ILQR_NOT_FINITE);
  cr_assert(!r.converged);
  grit_ilqr_free(s);
}

/* A Jacobian of the wrong sign: every step the model proposes raises the cost, mu climbs to reg_max. */
Test(ilqr_termination, a_wrong_jacobian_ends_at_the_regularization_limit) {
  scalar_sys sys = {INFINITY, 0, -1, 0, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  o.reg_max = 1e4;
  grit_ilqr *s = scalar_solver(&sys, 4, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert_eq(r.stop, GRIT_ILQR_REGULARIZATION_LIMIT, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert(!r.converged);
  /* the Jacobians were computed once: the rejected steps only re-ran the backward pass */
  cr_assert_eq(r.derivative_evaluations, 1);
  cr_assert_gt(r.rejected_line_searches, 1);
  cr_assert_eq(r.cost, r.initial_cost);
  grit_ilqr_free(s);
}

/* The kinked problem again: each iteration makes little progress, so the budgets end it. */
Test(ilqr_termination, time_budget_user_stop_and_iteration_cap) {
  scalar_sys sys = {INFINITY, 0, 0.01, 0, 0}; /* a Jacobian 100x too small: long steps, halved many times */
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_time = 1e-12; /* spent by the initial rollout already */
  grit_ilqr *s = scalar_solver(&sys, 20, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert_eq(r.stop, GRIT_ILQR_TIME_LIMIT, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.iterations, 0);
  cr_assert(!r.converged);

  last_it l = {0};
  l.stop_at_2 = s;
  o = grit_ilqr_default_options();
  o.log = keep_last;
  o.log_ctx = &l;
  cr_assert_eq(grit_ilqr_set_options(s, &o), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert_eq(r.stop, GRIT_ILQR_USER_STOP, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.iterations, 2);
  cr_assert(!r.converged);

  o.log = NULL;
  o.max_iterations = 1;
  cr_assert_eq(grit_ilqr_set_options(s, &o), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK); /* the stop request was cleared */
  cr_assert_eq(r.stop, GRIT_ILQR_MAX_ITERATIONS, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.iterations, 1);
  grit_ilqr_free(s);
}

/* ----------------------------------------------------- path constraints and changed goals */

/* A double integrator (x, v), u the acceleration, dt = 0.1, 30 steps, from rest at 0 to rest at 1; the
 * path constraints v_k <= 0.5 and u_k >= -0.6 (as -u - 0.6 <= 0). Unconstrained, the plan peaks at
 * v = 0.75. */
static int di_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)ctx, (void)slot, (void)k;
  xn[0] = x[0] + 0.1 * x[1] + 0.005 * u[0];
  xn[1] = x[1] + 0.1 * u[0];
  return 0;
}

static int di_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx, double *fu) {
  (void)ctx, (void)slot, (void)k, (void)thread, (void)x, (void)u;
  fx[0] = 1, fx[1] = 0.1, fx[2] = 0, fx[3] = 1;
  fu[0] = 0.005, fu[1] = 0.1;
  return 0;
}

Test(ilqr_termination, path_inequalities_hold_and_goals_change_between_solves) {
  enum { H = 30 };
  const double x0[2] = {0, 0}, goal[2] = {1, 0}, Q[4] = {0}, Qf[4] = {1000, 0, 0, 1000}, R[1] = {0.01};
  const double Cx[4] = {0, 1, 0, 0}, Cu[2] = {0, -1}, d[2] = {0.5, 0.6};
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){2, 2, 1, NULL, di_step, di_jac, NULL};
  p.horizon = H;
  p.x0 = x0;
  p.x_goal = goal;
  p.Q = Q;
  p.Qf = Qf;
  p.R = R;
  p.nc_path = 2;
  p.Cx_path = Cx;
  p.Cu_path = Cu;
  p.d_path = d;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.tol_constraint = 1e-4;
  o.max_iterations = 200;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  const double *x = grit_ilqr_states(s), *u = grit_ilqr_controls(s);
  double vmax = -INFINITY, umin = INFINITY;
  for (int k = 0; k < H; ++k) {
    vmax = fmax(vmax, x[2 * k + 1]);
    umin = fmin(umin, u[k]);
  }
  cr_log_info("path constraints: stop %d, %d iterations, %d updates, v max %.5f, u min %.5f, x_N %.4f",
              (int)r.stop, r.iterations, r.multiplier_updates, vmax, umin, x[2 * H]);
  cr_assert(r.converged, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_leq(r.path_violation, 1e-4);
  cr_assert_leq(vmax, 0.5 + 1e-4);
  cr_assert_geq(umin, -0.6 - 1e-4);
  cr_assert_gt(vmax, 0.49, "the speed limit should be active");
  cr_assert_lt(fabs(x[2 * H] - 1), 0.01);
  const double *mu = grit_ilqr_path_multipliers(s);
  for (int i = 0; i < H * 2; ++i) cr_assert_geq(mu[i], 0);

  /* a new goal, the same solver: the plan follows it */
  const double goal2[2] = {0.5, 0};
  cr_assert_eq(grit_ilqr_set_goal(s, goal2), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_assert_lt(fabs(grit_ilqr_states(s)[2 * H] - 0.5), 0.01, "x_N %g", grit_ilqr_states(s)[2 * H]);
  /* weights: dropping Qf leaves only R, so the plan stops moving */
  cr_assert_eq(grit_ilqr_set_weights(s, NULL, NULL, R), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert_lt(fabs(grit_ilqr_states(s)[2 * H]), 0.01, "x_N %g", grit_ilqr_states(s)[2 * H]);
  /* bad input is refused with a message */
  const double bad[2] = {NAN, 0};
  cr_assert_eq(grit_ilqr_set_goal(s, bad), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_ilqr_set_goal(s, NULL), GRIT_ERR_INVALID_ARGUMENT); /* the path constraint uses it */
  grit_ilqr_free(s);
}

/* ------------------------------------------------------------------ the regularization schedule */

typedef struct reg_log {
  int n;
  double mu[64];
  int rejected[64], reused[64], backward[64];
} reg_log;

static void log_reg(void *ctx, const grit_ilqr_iteration *it) {
  reg_log *l = ctx;
  if (l->n < 64) {
    l->mu[l->n] = it->regularization;
    l->rejected[l->n] = it->rejected;
    l->reused[l->n] = it->derivatives_reused;
    l->backward[l->n] = it->backward_passes;
    l->n++;
  }
}

/* Tassa et al.'s schedule as docs/ilqr.md states it (issue 28): with a Jacobian 1000x too small every
 * Newton step is 1000x too long, so mu must climb through rejected line searches. Once climbed it is
 * kept: an accepted step lowers it by the factor delta <= 1/1.6 and never to zero or below reg_min,
 * so the next iteration does not climb from the floor again; each iteration is one linearization (the
 * rejected line searches rerun only the backward pass on the kept Jacobians). */
Test(ilqr_termination, the_regularization_is_kept_after_an_accepted_step_and_never_zero) {
  scalar_sys sys = {INFINITY, 0, 1e-3, 0, 0};
  grit_ilqr_options o = grit_ilqr_default_options();
  reg_log l;
  memset(&l, 0, sizeof l);
  o.log = log_reg;
  o.log_ctx = &l;
  o.max_iterations = 20;
  grit_ilqr *s = scalar_solver(&sys, 4, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_log_info("schedule: %d iterations, %d rejected line searches, %d linearizations, mu %g ... %g, stop %d",
              r.iterations, r.rejected_line_searches, r.derivative_evaluations, l.mu[0], l.mu[l.n - 1], (int)r.stop);
  cr_assert_gt(l.n, 2);
  cr_assert_gt(l.rejected[0], 0, "the first iteration had to raise mu");
  cr_assert_eq(r.derivative_evaluations, r.iterations);
  int climbs = 0;
  for (int i = 0; i < l.n; ++i) {
    if (!l.backward[i]) continue; /* a stop before the backward pass (e.g. a zero gradient) reports mu 0 */
    cr_assert_geq(l.mu[i], o.reg_min, "iteration %d: mu %g below reg_min", i + 1, l.mu[i]);
    cr_assert_eq(l.reused[i], 0);
    climbs += l.rejected[i] > 0;
  }
  /* the second iteration starts where the first ended, divided by at most the factor 1.6 */
  cr_assert_geq(l.mu[1], l.mu[0] / o.reg_factor * (1 - 1e-12), "mu restarted: %g after %g", l.mu[1], l.mu[0]);
  cr_assert_lt(climbs, l.n, "every iteration climbed from the floor again");
  grit_ilqr_free(s);
}

/* Jacobians across a kink (options.kink_alpha, docs/ilqr.md, stop 14): the kink at u = 0.002 lets only
 * alpha = 2^-9 pass from u = 0, landing just short of it, where the exact Jacobian (slope 1) knows
 * nothing of the stiffness 1e4 beyond. The next model averages it with the Jacobian at the rejected
 * trial past the kink (slope 10001); the solve still converges to the optimum u* = 21 / 10001, and the
 * extra linearization is counted apart. kink_alpha = 0, the default, is the old behaviour, bitwise. */
Test(ilqr_termination, jacobians_across_a_kink_are_counted_and_keep_the_optimum) {
  grit_ilqr_result r[3];
  double u[3];
  for (int v = 0; v < 3; ++v) {
    scalar_sys sys = {0.002, 1e4, 1, 0, 0};
    grit_ilqr_options o = grit_ilqr_default_options();
    o.kink_alpha = v == 2 ? 0.0078125 : 0; /* v = 1: the field left as the default sets it */
    if (v == 1) o = grit_ilqr_default_options();
    grit_ilqr *s = scalar_solver(&sys, 1, &o);
    cr_assert_eq(grit_ilqr_solve(s, &r[v]), GRIT_OK, "%s", grit_ilqr_last_error(s));
    u[v] = grit_ilqr_controls(s)[0];
    cr_log_info("kink_alpha %g: %d iterations, %d linearizations + %d across the kink, stop %d, u %.9g, cost %g",
                o.kink_alpha, r[v].iterations, r[v].derivative_evaluations, r[v].kink_linearizations, (int)r[v].stop,
                u[v], r[v].cost);
    grit_ilqr_free(s);
  }
  const double ustar = 21.0 / 10001;
  cr_assert_eq(r[0].kink_linearizations, 0);
  cr_assert_eq(r[0].iterations, r[1].iterations);
  cr_assert_eq(u[0], u[1]); /* the default is off */
  cr_assert_gt(r[2].kink_linearizations, 0);
  cr_assert_eq(r[2].derivative_evaluations, r[2].iterations); /* the kink's Jacobians are counted apart */
  cr_assert(r[2].converged, "%s", grit_ilqr_stop_string(r[2].stop));
  cr_assert_lt(fabs(u[2] - ustar), 1e-6 * ustar, "u %.9g, optimum %.9g", u[2], ustar);
  cr_assert_lt(fabs(u[0] - ustar), 1e-6 * ustar, "u %.9g, optimum %.9g", u[0], ustar);
  cr_assert(r[0].converged, "%s", grit_ilqr_stop_string(r[0].stop));
}
