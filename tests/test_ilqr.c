/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr.c — the iLQR solver (grit_ilqr/ilqr.h) on problems with known answers: a linear system with
 * quadratic cost (one iteration must give the optimum, checked against a direct solve of the
 * problem's normal equations), a torque-limited pendulum swing-up (converges; limits hold exactly; the
 * cost never increases), receding-horizon shifting, bad input, and the grit adapter (same answer on
 * one and two threads, on a model with a free body). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
/* after grit's headers: lapacke.h brings complex.h, whose macro I would clash with their field names */
#include <lapacke.h>

#define TEST_PI 3.14159265358979323846

/* ------------------------------------------------------------------------ a linear system */

enum { LN = 4, LM = 2, LH = 20 };

typedef struct linear_sys {
  double A[LN * LN], B[LN * LM];
} linear_sys;

static int lin_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)slot;
  (void)k;
  const linear_sys *s = ctx;
  for (int i = 0; i < LN; ++i) {
    double v = 0;
    for (int j = 0; j < LN; ++j) v += s->A[i * LN + j] * x[j];
    for (int j = 0; j < LM; ++j) v += s->B[i * LM + j] * u[j];
    xn[i] = v;
  }
  return 0;
}

static int lin_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                   double *fu) {
  (void)slot, (void)k, (void)thread, (void)x, (void)u;
  const linear_sys *s = ctx;
  memcpy(fx, s->A, sizeof s->A);
  memcpy(fu, s->B, sizeof s->B);
  return 0;
}

/* Deterministic pseudo-random numbers in [-1, 1]. */
static double rnd(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return 2.0 * ((*state >> 8) / 16777216.0) - 1.0;
}

typedef struct cost_log {
  int n;
  double cost[256], actual[256], reg[256];
  double alpha[256];
} cost_log;

static void record(void *ctx, const grit_ilqr_iteration *it) {
  cost_log *l = ctx;
  if (l->n < 256) {
    l->cost[l->n] = it->cost;
    l->actual[l->n] = it->actual;
    l->alpha[l->n] = it->alpha;
    l->reg[l->n] = it->regularization;
    l->n++;
  }
}

/* A random linear system with a quadratic cost, and the problem written over the stacked controls U:
 * x_k = a_k + G_k U, cost 1/2 U'H U + g'U + const (the reference the solver is checked against). */
enum { NU = LH * LM };
typedef struct lq_case {
  linear_sys sys;
  double Q[LN * LN], Qf[LN * LN], R[LM * LM], x0[LN], goal[LN];
  double G[LH + 1][LN][NU], a[LH + 1][LN], H[NU * NU], g[NU];
} lq_case;

static void lq_case_make(lq_case *c) {
  memset(c, 0, sizeof *c);
  unsigned seed = 7;
  linear_sys *sys = &c->sys;
  for (int i = 0; i < LN * LN; ++i) sys->A[i] = (i % (LN + 1) == 0 ? 1.0 : 0.0) + 0.2 * rnd(&seed);
  for (int i = 0; i < LN * LM; ++i) sys->B[i] = rnd(&seed);
  /* Q = C'C (positive semidefinite), Qf diagonal, R = diag + coupling (positive definite) */
  double C[LN * LN];
  for (int i = 0; i < LN * LN; ++i) C[i] = rnd(&seed);
  for (int i = 0; i < LN; ++i)
    for (int j = 0; j < LN; ++j)
      for (int p = 0; p < LN; ++p) c->Q[i * LN + j] += C[p * LN + i] * C[p * LN + j];
  for (int i = 0; i < LN; ++i) c->Qf[i * LN + i] = 10.0 + i;
  c->R[0] = 0.5, c->R[1] = c->R[2] = 0.1, c->R[3] = 0.3;
  for (int i = 0; i < LN; ++i) {
    c->x0[i] = rnd(&seed);
    c->goal[i] = 0.3 * rnd(&seed);
  }
  memcpy(c->a[0], c->x0, sizeof c->x0);
  for (int k = 0; k < LH; ++k) {
    for (int i = 0; i < LN; ++i) {
      for (int j = 0; j < LN; ++j) c->a[k + 1][i] += sys->A[i * LN + j] * c->a[k][j];
      for (int col = 0; col < NU; ++col) {
        double v = 0;
        for (int j = 0; j < LN; ++j) v += sys->A[i * LN + j] * c->G[k][j][col];
        c->G[k + 1][i][col] = v;
      }
      for (int j = 0; j < LM; ++j) c->G[k + 1][i][k * LM + j] += sys->B[i * LM + j];
    }
  }
  for (int k = 1; k <= LH; ++k) {
    const double *W = k == LH ? c->Qf : c->Q;
    for (int r = 0; r < NU; ++r)
      for (int i = 0; i < LN; ++i) {
        if (c->G[k][i][r] == 0) continue;
        for (int j = 0; j < LN; ++j) {
          const double wij = c->G[k][i][r] * W[i * LN + j];
          c->g[r] += wij * (c->a[k][j] - c->goal[j]);
          for (int col = 0; col < NU; ++col) c->H[r * NU + col] += wij * c->G[k][j][col];
        }
      }
  }
  for (int k = 0; k < LH; ++k)
    for (int i = 0; i < LM; ++i)
      for (int j = 0; j < LM; ++j) c->H[(k * LM + i) * NU + k * LM + j] += c->R[i * LM + j];
}

static grit_ilqr_problem lq_problem(lq_case *c) {
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){LN, LN, LM, &c->sys, lin_step, lin_jac, NULL};
  p.horizon = LH;
  p.x0 = c->x0;
  p.x_goal = c->goal;
  p.Q = c->Q;
  p.Qf = c->Qf;
  p.R = c->R;
  return p;
}

Test(ilqr, linear_quadratic_converges_in_one_iteration_to_the_lqr_solution) {
  static lq_case lq;
  lq_case_make(&lq);
  double *H = lq.H, *g = lq.g;
  double ustar[NU];
  for (int i = 0; i < NU; ++i) ustar[i] = -g[i];
  /* LAPACK's Cholesky solve: a reference independent of the package's own kernels */
  cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', NU, 1, H, NU, ustar, 1), 0);

  grit_ilqr_problem p = lq_problem(&lq);
  grit_ilqr_options o = grit_ilqr_default_options();
  o.reg_init = 0; /* the exact Newton step: no regularization */
  o.max_iterations = 1;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  cr_assert_eq(r.iterations, 1);
  const double *u = grit_ilqr_controls(s);
  double err = 0, scale = 0;
  for (int i = 0; i < NU; ++i) {
    err = fmax(err, fabs(u[i] - ustar[i]));
    scale = fmax(scale, fabs(ustar[i]));
  }
  cr_log_info("linear-quadratic: max |u - u*| = %.3g (|u*| max %.3g) after one iteration", err, scale);
  cr_assert(err <= 1e-9 * scale, "one iteration is off the LQR optimum by %g", err);

  /* A second solve sees a zero feedforward step and stops as converged. */
  o.max_iterations = 10;
  cr_assert_eq(grit_ilqr_set_options(s, &o), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  cr_assert(r.converged);
  cr_assert_leq(r.iterations, 2);
  grit_ilqr_free(s);
}

/* With a final equality constraint C (x_N - goal) = 0 the optimum solves the KKT system
 *     [ H     M' ] [U ]   [ -g                ]
 *     [ M     0  ] [nu] = [ -C (a_N - goal)   ],   M = C G_N,
 * and the augmented Lagrangian's multipliers must converge to nu. */
Test(ilqr, final_equality_constraint_reaches_the_kkt_solution_of_the_constrained_lq_problem) {
  enum { NC = 2, NK = NU + NC };
  static lq_case lq;
  static double K[NK * NK];
  lq_case_make(&lq);
  double Cf[NC * LN] = {1, 0, 0.5, 0, 0, 1, 0, -0.7}, rhs[NK];
  memset(K, 0, sizeof K);
  for (int r = 0; r < NU; ++r) {
    for (int c = 0; c < NU; ++c) K[r * NK + c] = lq.H[r * NU + c];
    rhs[r] = -lq.g[r];
  }
  for (int i = 0; i < NC; ++i) {
    double ci = 0;
    for (int j = 0; j < LN; ++j) ci += Cf[i * LN + j] * (lq.a[LH][j] - lq.goal[j]);
    rhs[NU + i] = -ci;
    for (int c = 0; c < NU; ++c) {
      double m = 0;
      for (int j = 0; j < LN; ++j) m += Cf[i * LN + j] * lq.G[LH][j][c];
      K[(NU + i) * NK + c] = K[c * NK + NU + i] = m;
    }
  }
  lapack_int piv[NK];
  cr_assert_eq(LAPACKE_dgesv(LAPACK_ROW_MAJOR, NK, 1, K, NK, piv, rhs, 1), 0);

  grit_ilqr_problem p = lq_problem(&lq);
  p.nc_final = NC;
  p.C_final = Cf;
  grit_ilqr_options o = grit_ilqr_default_options();
  /* c to 1e-10 asks for controls resolved far below the default feedforward tolerance (1e-6 relative) */
  o.tol_constraint = 1e-10;
  o.tol_feedforward = 1e-12;
  cost_log log = {0};
  o.log = record;
  o.log_ctx = &log;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  const double *u = grit_ilqr_controls(s), *lambda = grit_ilqr_multipliers(s);
  double err = 0, scale = 0, lerr = 0, lscale = 0;
  for (int i = 0; i < NU; ++i) {
    err = fmax(err, fabs(u[i] - rhs[i]));
    scale = fmax(scale, fabs(rhs[i]));
  }
  for (int i = 0; i < NC; ++i) {
    lerr = fmax(lerr, fabs(lambda[i] - rhs[NU + i]));
    lscale = fmax(lscale, fabs(rhs[NU + i]));
  }
  /* the final state, from the solver's own rollout */
  const double *xN = grit_ilqr_states(s) + LH * LN;
  double viol = 0;
  for (int i = 0; i < NC; ++i) {
    double ci = 0;
    for (int j = 0; j < LN; ++j) ci += Cf[i * LN + j] * (xN[j] - lq.goal[j]);
    viol = fmax(viol, fabs(ci));
  }
  cr_log_info("constrained LQ: %d iterations, %d multiplier updates, max|c| %.2g, |u - u*| %.2g (|u*| %.2g), "
              "|lambda - nu| %.2g (|nu| %.2g)",
              r.iterations, r.multiplier_updates, r.violation, err, scale, lerr, lscale);
  cr_assert(r.converged);
  cr_assert_geq(r.multiplier_updates, 1);
  cr_assert_leq(r.violation, 1e-10);
  cr_assert_float_eq(viol, r.violation, 1e-15, "the reported violation is the final state's");
  /* |c| <= 1e-10 leaves U and lambda off the optimum by about cond(KKT) x 1e-10 (measured: 2e-11 and 6e-9
   * relative) */
  cr_assert(err <= 1e-8 * scale, "U is off the constrained optimum by %g", err);
  cr_assert(lerr <= 1e-6 * lscale, "the multipliers are off by %g", lerr);
  /* The reported cost is the problem's (no augmented-Lagrangian terms): 1/2 U'HU + g'U + const at U. */
  cr_assert_float_eq(r.cost, grit_ilqr_cost(s), 1e-12);
  for (int i = 1; i < log.n; ++i) cr_assert(log.actual[i] >= 0, "iteration %d increased the cost", i + 1);
  grit_ilqr_free(s);
}

/* --------------------------------------------------------------------------- a pendulum */

typedef struct pendulum {
  double dt, g, l, b; /* unit mass: theta'' = -g/l sin(theta) - b theta' + u / l^2 */
} pendulum;

static int pend_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)slot, (void)k;
  const pendulum *p = ctx;
  const double acc = -p->g / p->l * sin(x[0]) - p->b * x[1] + u[0] / (p->l * p->l);
  xn[1] = x[1] + p->dt * acc; /* semi-implicit Euler */
  xn[0] = x[0] + p->dt * xn[1];
  return 0;
}

static int pend_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                    double *fu) {
  (void)slot, (void)k, (void)thread, (void)u;
  const pendulum *p = ctx;
  const double dacc_dth = -p->g / p->l * cos(x[0]), dacc_dw = -p->b, dacc_du = 1 / (p->l * p->l);
  /* rows: theta+, omega+ */
  fx[2] = p->dt * dacc_dth;
  fx[3] = 1 + p->dt * dacc_dw;
  fu[1] = p->dt * dacc_du;
  fx[0] = 1 + p->dt * fx[2];
  fx[1] = p->dt * fx[3];
  fu[0] = p->dt * fu[1];
  return 0;
}

static grit_ilqr *pendulum_solver(pendulum *pd, double umax, cost_log *log, int max_iter) {
  static const double x0[2] = {0, 0}, goal[2] = {TEST_PI, 0};
  static const double Q[4] = {0.01, 0, 0, 0.01}, Qf[4] = {100, 0, 0, 10}, R[1] = {0.01};
  double umin_a[1] = {-umax}, umax_a[1] = {umax};
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){2, 2, 1, pd, pend_step, pend_jac, NULL};
  p.horizon = 100;
  p.x0 = x0;
  p.x_goal = goal;
  p.Q = Q;
  p.Qf = Qf;
  p.R = R;
  if (umax > 0) {
    p.u_min = umin_a;
    p.u_max = umax_a;
  }
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = max_iter;
  o.log = record;
  o.log_ctx = log;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  return s;
}

Test(ilqr, torque_limited_pendulum_swings_up_with_limits_exact_and_cost_never_increasing) {
  pendulum pd = {0.05, 9.81, 1.0, 0.1};
  cost_log log;
  memset(&log, 0, sizeof log);
  /* 3 N m is well below the 9.81 N m needed to lift the pendulum straight up: it must pump. */
  const double umax = 3.0;
  grit_ilqr *s = pendulum_solver(&pd, umax, &log, 300);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  const double *x = grit_ilqr_states(s), *u = grit_ilqr_controls(s);
  const double th = x[2 * 100], w = x[2 * 100 + 1];
  cr_log_info("pendulum: %d iterations, cost %.6g -> %.6g, final (%.4f, %.4f), stop %d", r.iterations,
              r.initial_cost, r.cost, th, w, (int)r.stop);
  cr_assert(r.converged, "stopped with %d after %d iterations", (int)r.stop, r.iterations);
  cr_assert(fabs(th - TEST_PI) < 0.05 && fabs(w) < 0.1, "final state (%g, %g) is not upright", th, w);
  int at_limit = 0;
  for (int k = 0; k < 100; ++k) {
    cr_assert(u[k] >= -umax && u[k] <= umax, "u[%d] = %.17g beyond the limit", k, u[k]);
    at_limit += fabs(u[k]) == umax;
  }
  cr_assert_gt(at_limit, 0, "the limit was never active: the test does not exercise it");
  /* The line search never accepts an increase: each accepted step lowers the cost, and the reported
   * costs never go up. */
  double prev = r.initial_cost;
  for (int i = 0; i < log.n; ++i) {
    if (log.alpha[i] > 0) cr_assert_gt(log.actual[i], 0);
    cr_assert_leq(log.cost[i], prev, "iteration %d: cost %g after %g", i + 1, log.cost[i], prev);
    prev = log.cost[i];
  }
  grit_ilqr_free(s);
}

Test(ilqr, receding_horizon_shift_keeps_the_plan) {
  pendulum pd = {0.05, 9.81, 1.0, 0.1};
  cost_log log;
  memset(&log, 0, sizeof log);
  grit_ilqr *s = pendulum_solver(&pd, 3.0, &log, 300);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  /* Move to the planned x_1, shift, and re-solve with one iteration: the plan stays near the tail of
   * the previous one (the horizon now reaches one step further). */
  double x1[2], u_old[100];
  memcpy(x1, grit_ilqr_states(s) + 2, sizeof x1);
  memcpy(u_old, grit_ilqr_controls(s), sizeof u_old);
  cr_assert_eq(grit_ilqr_set_initial_state(s, x1), GRIT_OK);
  cr_assert_eq(grit_ilqr_shift(s), GRIT_OK);
  for (int k = 0; k < 99; ++k) cr_assert_eq(grit_ilqr_controls(s)[k], u_old[k + 1]);
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 2;
  cr_assert_eq(grit_ilqr_set_options(s, &o), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK);
  const double *x = grit_ilqr_states(s);
  cr_assert(fabs(x[2 * 100] - TEST_PI) < 0.1, "re-solved plan ends at %g", x[2 * 100]);
  cr_assert_leq(r.cost, r.initial_cost);
  grit_ilqr_free(s);
}

/* grit_ilqr_create must fail with `status`, leave the solver NULL, and name `needle` in its message. */
static void expect_rejected(const grit_ilqr_problem *p, const grit_ilqr_options *o, grit_status status,
                            const char *needle) {
  int dummy;
  grit_ilqr *s = (grit_ilqr *)(void *)&dummy; /* must be reset to NULL on failure */
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(p, o, &s, msg), status, "%s", msg);
  cr_assert_null(s);
  if (needle) cr_assert(strstr(msg, needle), "%s", msg);
}

Test(ilqr, bad_problems_are_rejected_with_a_message) {
  pendulum pd = {0.05, 9.81, 1.0, 0.1};
  const double x0[2] = {0, 0}, goal[2] = {1, 0}, Qbad[4] = {1, 0.5, 0, 1}, lo[1] = {1}, hi[1] = {-1};
  const double nan_x0[2] = {NAN, 0};
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = (grit_ilqr_dynamics){2, 2, 1, &pd, pend_step, pend_jac, NULL};
  p.horizon = 10;
  p.x0 = x0;
  grit_ilqr_problem q = p;
  q.horizon = 0;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "horizon");
  q = p;
  q.Q = Qbad;
  q.x_goal = goal;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "symmetric");
  q = p;
  q.Q = Qbad;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "x_goal");
  q = p;
  q.u_min = lo;
  q.u_max = hi;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "limits");
  q = p;
  q.x0 = nan_x0;
  expect_rejected(&q, NULL, GRIT_ERR_NOT_FINITE, NULL);
  q = p;
  q.dynamics.nx = 3; /* a manifold state needs a difference function */
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, NULL);
  const double C_zero_row[4] = {1, 0, 0, 0}, C_nan[2] = {NAN, 1};
  q = p;
  q.x_goal = goal;
  q.nc_final = 1; /* no C_final */
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "C_final");
  q.nc_final = 3; /* more rows than ndx */
  q.C_final = C_zero_row;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "nc_final");
  q.nc_final = 2;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "row 1 is zero");
  q.nc_final = 1;
  q.C_final = C_nan;
  expect_rejected(&q, NULL, GRIT_ERR_NOT_FINITE, "C_final");
  q.C_final = C_zero_row;
  q.x_goal = NULL;
  expect_rejected(&q, NULL, GRIT_ERR_INVALID_ARGUMENT, "x_goal");
  grit_ilqr_options o = grit_ilqr_default_options();
  o.penalty_factor = 1;
  expect_rejected(&p, &o, GRIT_ERR_INVALID_ARGUMENT, "penalty_factor");
  o = grit_ilqr_default_options();
  o.ls_decrease = 1.5;
  expect_rejected(&p, &o, GRIT_ERR_INVALID_ARGUMENT, "ls_decrease");
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&p, NULL, &s, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_ilqr_set_initial_state(s, nan_x0), GRIT_ERR_NOT_FINITE);
  cr_assert(strlen(grit_ilqr_last_error(s)) > 0);
  grit_ilqr_free(s);
}

/* ----------------------------------------------------------------------- the grit adapter */

/* A ball on a free joint resting on the ground, pushed by a torque-controlled hinge arm: the state has
 * a quaternion (nx = nq + nv != ndx = 2 nv) and the solve goes through contact. */
static grit_model *arm_and_ball(void) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.01;
  grit_builder_set_options(b, &opt);
  grit_geom_def floor = grit_default_geom_def();
  floor.shape.type = GRIT_GEOM_PLANE;
  floor.body = 0;
  floor.friction = 0.5;
  cr_assert_eq(grit_builder_add_geom(b, &floor, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  /* a paddle hanging from a hinge about y, 0.35 m above the ground, its lower end 3 cm above it */
  grit_body_def link = grit_default_body_def();
  link.parent = 0;
  link.pos[2] = 0.35;
  link.mass = 1.0;
  link.com[2] = 0.0;
  memset(link.inertia, 0, sizeof link.inertia);
  link.inertia[0] = link.inertia[4] = link.inertia[8] = 0.01;
  int lb = 0;
  cr_assert_eq(grit_builder_add_body(b, &link, &lb), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def j = grit_default_joint_def();
  j.type = GRIT_JOINT_HINGE;
  j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
  j.damping = 0.1;
  int jid = 0;
  cr_assert_eq(grit_builder_add_joint(b, lb, &j, &jid), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_actuator_def act = grit_default_actuator_def();
  act.joint = jid;
  act.ctrl_limited = 1;
  act.ctrl_range[0] = -10, act.ctrl_range[1] = 10;
  cr_assert_eq(grit_builder_add_actuator(b, &act, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_geom_def paddle = grit_default_geom_def();
  paddle.shape.type = GRIT_GEOM_CAPSULE;
  paddle.shape.size[0] = 0.02, paddle.shape.size[1] = 0.2;
  paddle.body = lb;
  paddle.pos[2] = -0.1;
  cr_assert_eq(grit_builder_add_geom(b, &paddle, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_body_def ball = grit_default_body_def();
  ball.parent = 0;
  ball.pos[0] = 0.07, ball.pos[2] = 0.05; /* touching the paddle */
  ball.mass = 0.1;
  memset(ball.inertia, 0, sizeof ball.inertia);
  ball.inertia[0] = ball.inertia[4] = ball.inertia[8] = 0.4 * 0.1 * 0.05 * 0.05;
  int bb = 0;
  cr_assert_eq(grit_builder_add_body(b, &ball, &bb), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def fj = grit_default_joint_def();
  fj.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, bb, &fj, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_geom_def sph = grit_default_geom_def();
  sph.shape.type = GRIT_GEOM_SPHERE;
  sph.shape.size[0] = 0.05;
  sph.body = bb;
  sph.friction = 0.5;
  cr_assert_eq(grit_builder_add_geom(b, &sph, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* The accepted step sizes, as the log callback saw them (stall_short_steps' test). */
typedef struct alpha_log {
  int n;
  double alpha[64];
} alpha_log;

static void log_alpha(void *ctx, const grit_ilqr_iteration *it) {
  alpha_log *l = ctx;
  if (l->n < 64) l->alpha[l->n++] = it->alpha;
}

/* The paddle's solve; stall_short: options.stall_short_steps; alphas (may be NULL): each iteration's step. */
static grit_ilqr_result solve_push(const grit_model *m, int nthreads, int stall_short, alpha_log *alphas,
                                   double *u_out, double *x_out) {
  enum { H = 30 };
  grit_ilqr_grit *a = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_grit_create(m, H, NULL, &a, msg), GRIT_OK, "%s", msg);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  /* settle the ball for a moment so that it starts in resting contact */
  for (int i = 0; i < 20; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  double x0[16], goal[16], Q[14 * 14] = {0}, Qf[14 * 14] = {0}, R[1] = {1e-3}, lo[1] = {-10}, hi[1] = {10};
  cr_assert_leq(nq + nv, 16);
  grit_data_set_qvel(d, (double[7]){0}, nv);
  grit_ilqr_grit_state(d, x0);
  memcpy(goal, x0, sizeof x0);
  goal[1] += 0.1; /* the ball 10 cm further along x */
  /* tangent: hinge (0), ball lin (1..3), ang (4..6); then velocities (7..13) */
  Q[1 * 14 + 1] = 10;
  Qf[1 * 14 + 1] = 1000;
  Qf[8 * 14 + 8] = 10;
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = grit_ilqr_grit_dynamics(a);
  p.horizon = H;
  p.x0 = x0;
  p.x_goal = goal;
  p.Q = Q;
  p.Qf = Qf;
  p.R = R;
  p.u_min = lo;
  p.u_max = hi;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.nthreads = nthreads;
  o.max_iterations = 60;
  o.stall_short_steps = stall_short;
  if (alphas) {
    o.log = log_alpha;
    o.log_ctx = alphas;
  }
  grit_ilqr *s = NULL;
  cr_assert_eq(grit_ilqr_create(&p, &o, &s, msg), GRIT_OK, "%s", msg);
  /* Contact-implicit, but not clairvoyant: with no contact there is no gradient through the ball, so
   * the initial guess leans the paddle on it (a small torque towards +x). */
  double u0[H];
  for (int k = 0; k < H; ++k) u0[k] = -0.5;
  cr_assert_eq(grit_ilqr_set_controls(s, u0), GRIT_OK);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s / %s", grit_ilqr_last_error(s), grit_ilqr_grit_last_error(a));
  memcpy(u_out, grit_ilqr_controls(s), sizeof(double) * H);
  memcpy(x_out, grit_ilqr_states(s) + H * (nq + nv), sizeof(double) * (size_t)(nq + nv));
  grit_ilqr_free(s);
  grit_ilqr_grit_free(a);
  grit_data_free(d);
  return r;
}

Test(ilqr, grit_adapter_pushes_a_ball_through_contact_and_threads_do_not_change_the_answer) {
  grit_model *m = arm_and_ball();
  double u1[30], u2[30], x1[16] = {0}, x2[16] = {0};
  grit_ilqr_result r1 = solve_push(m, 1, 0, NULL, u1, x1);
  grit_ilqr_result r2 = solve_push(m, 2, 0, NULL, u2, x2);
  cr_log_info("paddle pushes ball: %d iterations (stop %d), cost %.5g -> %.5g, ball x %.4f (goal 0.17 m)",
              r1.iterations, (int)r1.stop, r1.initial_cost, r1.cost, x1[1]);
  cr_assert(r1.converged, "stopped with %d", (int)r1.stop);
  /* the ball started at x = 0.07 m; the final cost weighs its 10 cm move 1000 against the effort */
  cr_assert(fabs(x1[1] - 0.17) < 0.01, "the ball ends at x = %g m, not near 0.17 m", x1[1]);
  /* bitwise the same on two threads: each knot's Jacobian is computed from its own data */
  cr_assert_eq(r1.iterations, r2.iterations);
  cr_assert_eq(memcmp(u1, u2, sizeof u1), 0);
  cr_assert_eq(memcmp(x1, x2, sizeof x1), 0);
  grit_model_free(m);
}

/* options.stall_short_steps: the paddle's solve (default: converged after 20 iterations) passes through a
 * stretch of short steps (alpha <= 1/16) near its contact switch. With the option at 3 the run ends
 * there: LINE_SEARCH_STALLED, never converged, at the first iteration (from the third on) where the mean
 * of log2 alpha, weighted 1/3 (the first step's value to start), is at most -4. (That the rule can cut
 * such a stretch short of a convergence is why it is off by default; docs/ilqr.md, "The arm pushing a
 * ball", stop 15.) */
Test(ilqr, stall_short_steps_ends_a_run_of_short_steps_stalled_never_converged) {
  grit_model *m = arm_and_ball();
  double u[30], x[16] = {0};
  alpha_log l = {0};
  const grit_ilqr_result r = solve_push(m, 1, 3, &l, u, x);
  cr_log_info("paddle with stall_short_steps 3: %d iterations (stop %d), cost %.5g -> %.5g", r.iterations, (int)r.stop,
              r.initial_cost, r.cost);
  cr_assert_eq(r.stop, GRIT_ILQR_LINE_SEARCH_STALLED, "stop %d", (int)r.stop);
  cr_assert(!r.converged);
  cr_assert_eq(l.n, r.iterations, "every iteration logged once");
  cr_assert_geq(r.iterations, 3);
  double mean = 0;
  for (int i = 0; i < l.n; ++i) {
    cr_assert_gt(l.alpha[i], 0, "iteration %d took no step", i + 1);
    const double w = 1.0 / 3;
    mean = i == 0 ? log2(l.alpha[i]) : (1 - w) * mean + w * log2(l.alpha[i]);
    /* the solver's own formula; 1e-12 only forgives a rounding difference at the threshold */
    if (i + 1 >= 3 && i < l.n - 1)
      cr_assert_gt(mean, -4 - 1e-12, "short on average at iteration %d (%g), but the solve went on", i + 1, mean);
  }
  cr_assert_leq(mean, -4 + 1e-12, "the solve ended with the mean log2 alpha at %g, not <= -4", mean);
  cr_assert_lt(r.cost, r.initial_cost);
  grit_model_free(m);
}
