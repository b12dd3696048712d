/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr_ensemble.c — grit_ilqr_ensemble (grit_ilqr/ensemble.h), public API only: the stacked
 * dynamics' Jacobians against central differences of the stacked step (members of different sizes, one
 * with a manifold-like difference), each block equal to its member's own; the summed cost's derivatives
 * against central differences; K = 1 over grit's adapter gives the same plan bitwise as the adapter
 * alone; the checks on creation; and a robust plan over two frictions on the pusher. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/ensemble.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_box_scene.h"

/* ------------------------------------------------------------------------- analytic members */

/* A pendulum with a parameter p (nx = ndx = 2, nu = 2: a torque and a second input that enters the
 * velocity through a cosine): x' = (x0 + h x1, x1 + h (-p sin x0 + u0 + cos(x0) u1)). */
static int pend_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)slot, (void)k;
  const double p = *(const double *)ctx, h = 0.05;
  xn[0] = x[0] + h * x[1];
  xn[1] = x[1] + h * (-p * sin(x[0]) + u[0] + cos(x[0]) * u[1]);
  return 0;
}

static int pend_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx, double *fu) {
  (void)slot, (void)k, (void)thread;
  const double p = *(const double *)ctx, h = 0.05;
  fx[0] = 1, fx[1] = h;
  fx[2] = h * (-p * cos(x[0]) - sin(x[0]) * u[1]), fx[3] = 1;
  fu[0] = 0, fu[1] = 0;
  fu[2] = h, fu[3] = h * cos(x[0]);
  return 0;
}

/* A member whose state has one more number than its tangent space (nx = 3, ndx = 2): (a, b, s) with s a
 * scale stored alongside, the difference (a, b) only; x' = (a + h b u0, b + h sin(a) u1, s). */
static int odd_step(void *ctx, int slot, int k, const double *x, const double *u, double *xn) {
  (void)ctx, (void)slot, (void)k;
  const double h = 0.1;
  xn[0] = x[0] + h * x[1] * u[0];
  xn[1] = x[1] + h * sin(x[0]) * u[1];
  xn[2] = x[2];
  return 0;
}

static int odd_jac(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx, double *fu) {
  (void)ctx, (void)slot, (void)k, (void)thread;
  const double h = 0.1;
  fx[0] = 1, fx[1] = h * u[0];
  fx[2] = h * cos(x[0]) * u[1], fx[3] = 1;
  fu[0] = h * x[1], fu[1] = 0;
  fu[2] = 0, fu[3] = h * sin(x[0]);
  return 0;
}

static void odd_diff(void *ctx, const double *xa, const double *xb, double *dx) {
  (void)ctx;
  dx[0] = xb[0] - xa[0], dx[1] = xb[1] - xa[1];
}

/* The ensemble (pendulum p = 9.81, the odd member, pendulum p = 4): nx = 7, ndx = 6, nu = 2. */
static grit_ilqr_ensemble *three_members(double *p) {
  grit_ilqr_dynamics m[3];
  memset(m, 0, sizeof m);
  m[0] = (grit_ilqr_dynamics){2, 2, 2, &p[0], pend_step, pend_jac, NULL};
  m[1] = (grit_ilqr_dynamics){3, 2, 2, NULL, odd_step, odd_jac, odd_diff};
  m[2] = (grit_ilqr_dynamics){2, 2, 2, &p[1], pend_step, pend_jac, NULL};
  grit_ilqr_ensemble *e = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_ensemble_create(3, m, 2, &e, msg), GRIT_OK, "%s", msg);
  return e;
}

/* fx, fu of the stacked dynamics against central differences of its step (perturbing x in the
 * tangent space: the odd member's third number is not perturbed), and every block against its own
 * member's Jacobians, bitwise. Tolerance: the step's third derivatives are O(1), so central
 * differences with eps = 1e-6 are exact to ~1e-12 plus round-off 1e-16 / 1e-6: 1e-8 is ample. */
Test(ilqr_ensemble, jacobians_match_central_differences_of_the_stacked_step) {
  double p[2] = {9.81, 4};
  grit_ilqr_ensemble *e = three_members(p);
  const grit_ilqr_dynamics d = grit_ilqr_ensemble_dynamics(e);
  cr_assert_eq(d.nx, 7);
  cr_assert_eq(d.ndx, 6);
  cr_assert_eq(d.nu, 2);
  cr_assert_eq(grit_ilqr_ensemble_size(e), 3);
  cr_assert_eq(grit_ilqr_ensemble_offset(e, 2, 0), 5);
  cr_assert_eq(grit_ilqr_ensemble_offset(e, 2, 1), 4);
  const double x[7] = {0.3, -0.2, 0.7, 1.1, 2.0, -1.2, 0.4}, u[2] = {0.5, -0.8};
  /* tangent coordinate j -> index in x */
  const int tx[6] = {0, 1, 2, 3, 5, 6};
  double fx[36], fu[12], xp[7], xm[7], fp[7], fm[7], dx[6];
  cr_assert_eq(d.jacobians(d.ctx, 0, 3, 1, x, u, fx, fu), 0);
  const double eps = 1e-6;
  for (int j = 0; j < 6; ++j) {
    memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
    xp[tx[j]] += eps, xm[tx[j]] -= eps;
    cr_assert_eq(d.step(d.ctx, 0, 3, xp, u, fp), 0);
    cr_assert_eq(d.step(d.ctx, 0, 3, xm, u, fm), 0);
    d.difference(d.ctx, fm, fp, dx);
    for (int i = 0; i < 6; ++i)
      cr_assert_lt(fabs(dx[i] / (2 * eps) - fx[i * 6 + j]), 1e-8, "fx[%d][%d] = %g, differences %g", i, j,
                   fx[i * 6 + j], dx[i] / (2 * eps));
  }
  for (int j = 0; j < 2; ++j) {
    double up[2] = {u[0], u[1]}, um[2] = {u[0], u[1]};
    up[j] += eps, um[j] -= eps;
    cr_assert_eq(d.step(d.ctx, 0, 3, x, up, fp), 0);
    cr_assert_eq(d.step(d.ctx, 0, 3, x, um, fm), 0);
    d.difference(d.ctx, fm, fp, dx);
    for (int i = 0; i < 6; ++i)
      cr_assert_lt(fabs(dx[i] / (2 * eps) - fu[i * 2 + j]), 1e-8, "fu[%d][%d]", i, j);
  }
  /* the blocks are the members' own numbers (copied, not recomputed) and off-diagonal blocks are 0 */
  double f0[4], g0[4];
  pend_jac(&p[1], 0, 3, 0, x + 5, u, f0, g0);
  for (int r = 0; r < 2; ++r) {
    cr_assert(memcmp(fx + (4 + r) * 6 + 4, f0 + 2 * r, 2 * sizeof(double)) == 0);
    cr_assert(memcmp(fu + (4 + r) * 2, g0 + 2 * r, 2 * sizeof(double)) == 0);
    for (int c = 0; c < 4; ++c) cr_assert_eq(fx[(4 + r) * 6 + c], 0.0);
  }
  /* a thread beyond the workspace the ensemble was made for is a failure, not a race */
  cr_assert_neq(d.jacobians(d.ctx, 0, 3, 2, x, u, fx, fu), 0);
  grit_ilqr_ensemble_free(e);
}

/* A member cost: 1/2 |dx - c|^2 weighted, plus u0 x0-coupling: l = 1/2 sum (x_i - c)^2 + x0 u0^2 / 2. */
static int member_cost(void *ctx, int k, const double *x, const double *u, double *l, double *lx, double *lu,
                       double *lxx, double *luu, double *lux) {
  (void)k;
  const double c = *(const double *)ctx;
  *l = 0.5 * ((x[0] - c) * (x[0] - c) + (x[1] - c) * (x[1] - c));
  if (u) *l += 0.5 * x[0] * u[0] * u[0] + 0.5 * u[1] * u[1];
  if (lx) lx[0] = x[0] - c + (u ? 0.5 * u[0] * u[0] : 0), lx[1] = x[1] - c;
  if (lxx) lxx[0] = 1, lxx[1] = 0, lxx[2] = 0, lxx[3] = 1;
  if (lu) lu[0] = x[0] * u[0], lu[1] = u[1];
  if (luu) luu[0] = x[0], luu[1] = 0, luu[2] = 0, luu[3] = 1;
  if (lux) lux[0] = u[0], lux[1] = 0, lux[2] = 0, lux[3] = 0;
  return 0;
}

/* The summed cost: its value is sum w_i l_i; lx, lu against central differences (tolerance as above; the
 * cost is cubic); lxx block diagonal, lux stacked, luu summed, from the members' exact Hessians. */
Test(ilqr_ensemble, cost_is_the_weighted_sum_over_the_members) {
  double p[2] = {9.81, 4}, c[3] = {0.1, -0.3, 0.25};
  void *ctxs[3] = {&c[0], &c[1], &c[2]};
  const double w[3] = {1, 0.5, 2};
  grit_ilqr_ensemble *e = three_members(p);
  cr_assert_eq(grit_ilqr_ensemble_set_cost(e, member_cost, ctxs, NULL, w), GRIT_OK);
  const double x[7] = {0.3, -0.2, 0.7, 1.1, 2.0, -1.2, 0.4}, u[2] = {0.5, -0.8};
  const int tx[6] = {0, 1, 2, 3, 5, 6};
  double l, lx[6], lu[2], lxx[36], luu[4], lux[12];
  cr_assert_eq(grit_ilqr_ensemble_cost(e, 2, x, u, &l, lx, lu, lxx, luu, lux), 0);
  double sum = 0, li;
  for (int i = 0; i < 3; ++i) {
    const int o = grit_ilqr_ensemble_offset(e, i, 0);
    member_cost(ctxs[i], 2, x + o, u, &li, NULL, NULL, NULL, NULL, NULL);
    sum += w[i] * li;
  }
  cr_assert_lt(fabs(l - sum), 1e-14 * (1 + fabs(sum)));
  const double eps = 1e-6;
  for (int j = 0; j < 6; ++j) {
    double xp[7], xm[7], lp, lm;
    memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
    xp[tx[j]] += eps, xm[tx[j]] -= eps;
    grit_ilqr_ensemble_cost(e, 2, xp, u, &lp, NULL, NULL, NULL, NULL, NULL);
    grit_ilqr_ensemble_cost(e, 2, xm, u, &lm, NULL, NULL, NULL, NULL, NULL);
    cr_assert_lt(fabs((lp - lm) / (2 * eps) - lx[j]), 1e-8, "lx[%d]", j);
  }
  for (int j = 0; j < 2; ++j) {
    double up[2] = {u[0], u[1]}, um[2] = {u[0], u[1]}, lp, lm;
    up[j] += eps, um[j] -= eps;
    grit_ilqr_ensemble_cost(e, 2, x, up, &lp, NULL, NULL, NULL, NULL, NULL);
    grit_ilqr_ensemble_cost(e, 2, x, um, &lm, NULL, NULL, NULL, NULL, NULL);
    cr_assert_lt(fabs((lp - lm) / (2 * eps) - lu[j]), 1e-8, "lu[%d]", j);
  }
  /* Hessians: luu = sum w_i luu_i; lxx(4,4) = w_2; lux(0, tangent 4) = w_2 u0; a cross block is 0 */
  cr_assert_lt(fabs(luu[0] - (w[0] * x[0] + w[1] * x[2] + w[2] * x[5])), 1e-14);
  cr_assert_lt(fabs(luu[3] - (w[0] + w[1] + w[2])), 1e-14);
  cr_assert_eq(lxx[4 * 6 + 4], w[2]);
  cr_assert_eq(lxx[4 * 6 + 1], 0.0);
  cr_assert_eq(lux[0 * 6 + 4], w[2] * u[0]);
  cr_assert_eq(lux[0 * 6 + 2], w[1] * u[0]);
  /* the final knot: u NULL, lu/luu/lux NULL */
  cr_assert_eq(grit_ilqr_ensemble_cost(e, 10, x, NULL, &l, lx, NULL, lxx, NULL, NULL), 0);
  cr_assert_lt(fabs(lx[4] - w[2] * (x[5] - c[2])), 1e-14);
  grit_ilqr_ensemble_free(e);
}

Test(ilqr_ensemble, creation_checks_its_members) {
  double p = 1;
  grit_ilqr_dynamics m[2] = {{2, 2, 2, &p, pend_step, pend_jac, NULL}, {2, 2, 1, &p, pend_step, pend_jac, NULL}};
  grit_ilqr_ensemble *e = (grit_ilqr_ensemble *)&p;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_ensemble_create(2, m, 1, &e, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_null(e);
  cr_assert_not_null(strstr(msg, "shared"), "%s", msg);
  cr_assert_eq(grit_ilqr_ensemble_create(0, m, 1, &e, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_ilqr_ensemble_create(1, m, 0, &e, msg), GRIT_ERR_INVALID_ARGUMENT);
  m[1] = (grit_ilqr_dynamics){3, 2, 2, NULL, odd_step, odd_jac, NULL}; /* nx != ndx without a difference */
  cr_assert_eq(grit_ilqr_ensemble_create(2, m, 1, &e, msg), GRIT_ERR_INVALID_ARGUMENT);
  m[1].difference = odd_diff;
  cr_assert_eq(grit_ilqr_ensemble_create(2, m, 1, &e, msg), GRIT_OK, "%s", msg);
  double xs[5], W[4] = {1, 0, 0, 1}, Ws[16];
  cr_assert_eq(grit_ilqr_ensemble_stack_state(e, W, xs), GRIT_ERR_INVALID_ARGUMENT); /* sizes differ */
  cr_assert_not_null(strstr(grit_ilqr_ensemble_last_error(e), "equal sizes"), "%s", grit_ilqr_ensemble_last_error(e));
  cr_assert_eq(grit_ilqr_ensemble_stack_weight(e, W, NULL, Ws), GRIT_ERR_INVALID_ARGUMENT);
  const double bad[2] = {1, -1};
  cr_assert_eq(grit_ilqr_ensemble_set_cost(e, member_cost, NULL, &p, bad), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_not_null(strstr(grit_ilqr_ensemble_last_error(e), "w[1]"), "%s", grit_ilqr_ensemble_last_error(e));
  cr_assert_eq(grit_ilqr_ensemble_set_cost(e, member_cost, NULL, &p, NULL), GRIT_OK);
  cr_assert_str_empty(grit_ilqr_ensemble_last_error(e));
  grit_ilqr_ensemble_free(e);
  grit_ilqr_ensemble_free(NULL);
}

/* ----------------------------------------------------------------------- over grit's adapter */

enum { H = 40 };

typedef struct pusher {
  grit_model *m[2];
  grit_ilqr_grit *a[2];
  double x0[64], goal[64], Q[32 * 32], Qf[32 * 32], R[4], lo[2], hi[2];
  int nx;
} pusher;

/* examples/push_box_scene's finger 3 cm behind a box (friction mu[i] in copy i), the box to go 10 cm. */
static void pusher_make(pusher *p, const double *mu, int K) {
  memset(p, 0, sizeof *p);
  char msg[GRIT_MESSAGE_SIZE];
  for (int i = 0; i < K; ++i) {
    p->m[i] = push_box_build(mu[i], 0.03, 0.0, msg);
    cr_assert_not_null(p->m[i], "%s", msg);
    cr_assert_eq(grit_ilqr_grit_create(p->m[i], H, NULL, &p->a[i], msg), GRIT_OK, "%s", msg);
  }
  p->nx = grit_model_nq(p->m[0]) + grit_model_nv(p->m[0]);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(p->m[0], &d), GRIT_OK);
  grit_ilqr_grit_state(d, p->x0);
  grit_data_free(d);
  memcpy(p->goal, p->x0, sizeof(double) * (size_t)p->nx);
  p->goal[PUSH_BOX_Q] += 0.10;
  const int n = 16, nv = 8;
  p->Q[2 * n + 2] = p->Q[3 * n + 3] = 10;
  p->Q[7 * n + 7] = 1;
  for (int i = 0; i < n * n; ++i) p->Qf[i] = 100 * p->Q[i];
  for (int i = nv + 2; i < nv + 5; ++i) p->Qf[i * n + i] = 10;
  p->R[0] = p->R[3] = 1e-3;
  p->lo[0] = p->lo[1] = -PUSH_FORCE_MAX;
  p->hi[0] = p->hi[1] = PUSH_FORCE_MAX;
}

static void pusher_free(pusher *p) {
  for (int i = 0; i < 2; ++i) grit_ilqr_grit_free(p->a[i]), grit_model_free(p->m[i]);
}

static grit_ilqr *solver(const grit_ilqr_dynamics *dyn, const double *x0, const double *goal, const double *Q,
                         const double *Qf, const double *R, const pusher *p, int iterations) {
  grit_ilqr_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.dynamics = *dyn;
  pr.horizon = H;
  pr.x0 = x0, pr.x_goal = goal, pr.Q = Q, pr.Qf = Qf, pr.R = R;
  pr.u_min = p->lo, pr.u_max = p->hi;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = iterations;
  o.tol_cost = 1e-4;
  o.nthreads = 2;
  grit_ilqr *s = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_create(&pr, &o, &s, msg), GRIT_OK, "%s", msg);
  return s;
}

/* K = 1 is the wrapped dynamics: 4 iterations of the pusher under smoothing 0.05 m through a
 * one-member ensemble give the adapter's own controls, cost and states bitwise. */
Test(ilqr_ensemble, one_member_is_the_wrapped_dynamics_bitwise) {
  const double mu[1] = {0.4};
  pusher p;
  pusher_make(&p, mu, 1);
  cr_assert_eq(grit_ilqr_grit_set_smoothing(p.a[0], 0.05), GRIT_OK);
  const grit_ilqr_dynamics d = grit_ilqr_grit_dynamics(p.a[0]);
  grit_ilqr_ensemble *e = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_ensemble_create(1, &d, 2, &e, msg), GRIT_OK, "%s", msg);
  const grit_ilqr_dynamics de = grit_ilqr_ensemble_dynamics(e);
  grit_ilqr *s0 = solver(&d, p.x0, p.goal, p.Q, p.Qf, p.R, &p, 4);
  grit_ilqr_result r0, r1;
  cr_assert_eq(grit_ilqr_solve(s0, &r0), GRIT_OK, "%s", grit_ilqr_last_error(s0));
  double u0[2 * H], x0[(H + 1) * 32];
  memcpy(u0, grit_ilqr_controls(s0), sizeof u0);
  memcpy(x0, grit_ilqr_states(s0), sizeof(double) * (size_t)((H + 1) * p.nx));
  grit_ilqr_free(s0);
  grit_ilqr *s1 = solver(&de, p.x0, p.goal, p.Q, p.Qf, p.R, &p, 4);
  cr_assert_eq(grit_ilqr_solve(s1, &r1), GRIT_OK, "%s", grit_ilqr_last_error(s1));
  cr_assert_eq(r1.iterations, r0.iterations);
  cr_assert(r1.cost == r0.cost, "%.17g vs %.17g", r1.cost, r0.cost);
  cr_assert(memcmp(grit_ilqr_controls(s1), u0, sizeof u0) == 0);
  cr_assert(memcmp(grit_ilqr_states(s1), x0, sizeof(double) * (size_t)((H + 1) * p.nx)) == 0);
  grit_ilqr_free(s1);
  grit_ilqr_ensemble_free(e);
  pusher_free(&p);
}

/* The box's distance from its target after replaying controls u on model m. */
static double push_error(const grit_model *m, const double *u, const double *goal) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int k = 0; k < H; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u + 2 * k, 2), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  const double *q = grit_data_qpos(d);
  const double e = hypot(q[PUSH_BOX_Q] - goal[PUSH_BOX_Q], q[PUSH_BOX_Q + 1] - goal[PUSH_BOX_Q + 1]);
  grit_data_free(d);
  return e;
}

/* Plans the pusher on an ensemble of K copies with frictions mu (smoothing 0.05 m halved to 5 mm, then
 * exact, the same controls for every copy); the controls into u (2 H), the iterations returned. */
static int robust_plan(const double *mu, int K, double *u) {
  pusher p;
  pusher_make(&p, mu, K);
  grit_ilqr_dynamics dm[2];
  for (int i = 0; i < K; ++i) dm[i] = grit_ilqr_grit_dynamics(p.a[i]);
  grit_ilqr_ensemble *e = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_ensemble_create(K, dm, 2, &e, msg), GRIT_OK, "%s", msg);
  double *xs = malloc(sizeof(double) * 2 * 64), *gs = malloc(sizeof(double) * 2 * 64);
  double *Qs = malloc(sizeof(double) * 32 * 32), *Qfs = malloc(sizeof(double) * 32 * 32), RK[4];
  cr_assert_eq(grit_ilqr_ensemble_stack_state(e, p.x0, xs), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_state(e, p.goal, gs), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_weight(e, p.Q, NULL, Qs), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_weight(e, p.Qf, NULL, Qfs), GRIT_OK);
  for (int i = 0; i < 4; ++i) RK[i] = K * p.R[i]; /* the copies' control costs summed */
  const grit_ilqr_dynamics de = grit_ilqr_ensemble_dynamics(e);
  grit_ilqr *s = solver(&de, xs, gs, Qs, Qfs, RK, &p, 150);
  int iterations = 0;
  for (double delta = 0.05;; delta *= 0.5) {
    if (delta < 0.005) delta = 0;
    for (int i = 0; i < K; ++i) cr_assert_eq(grit_ilqr_grit_set_smoothing(p.a[i], delta), GRIT_OK);
    cr_assert_eq(grit_ilqr_dynamics_changed(s), GRIT_OK);
    grit_ilqr_result r;
    cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
    iterations += r.iterations;
    if (delta == 0) break;
  }
  memcpy(u, grit_ilqr_controls(s), sizeof(double) * 2 * H);
  grit_ilqr_free(s);
  grit_ilqr_ensemble_free(e);
  free(xs), free(gs), free(Qs), free(Qfs);
  pusher_free(&p);
  return iterations;
}

/* A robust plan: the pusher planned on two copies with friction 0.4 x 0.8 and x 1.2 (the MPC example's
 * +-20 %) leaves the box, on the worse of the two exact models, nearer its target than the plan made for
 * the nominal friction 0.4 alone, which is exact for 0.4 and off for the others (measured: docs/ilqr.md,
 * "Ensembles"). */
Test(ilqr_ensemble, a_plan_over_two_frictions_is_more_robust_than_the_nominal_plan) {
  const double nominal[1] = {0.4}, mu[2] = {0.32, 0.48};
  double un[2 * H], ur[2 * H];
  const int itn = robust_plan(nominal, 1, un), itr = robust_plan(mu, 2, ur);
  char msg[GRIT_MESSAGE_SIZE];
  double en[3], er[3];
  const double mus[3] = {0.32, 0.4, 0.48};
  for (int i = 0; i < 3; ++i) {
    grit_model *m = push_box_build(mus[i], 0.03, 0.0, msg);
    cr_assert_not_null(m, "%s", msg);
    double goal[64];
    grit_data *d = NULL;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_ilqr_grit_state(d, goal);
    grit_data_free(d);
    goal[PUSH_BOX_Q] += 0.10;
    en[i] = push_error(m, un, goal), er[i] = push_error(m, ur, goal);
    grit_model_free(m);
  }
  cr_log_info("pusher, friction 0.32 / 0.4 / 0.48: the nominal plan (%d iterations) %.2f / %.2f / %.2f mm, the plan "
              "over 0.32 and 0.48 (%d iterations) %.2f / %.2f / %.2f mm", itn, 1e3 * en[0], 1e3 * en[1], 1e3 * en[2],
              itr, 1e3 * er[0], 1e3 * er[1], 1e3 * er[2]);
  cr_assert_lt(en[1], 0.01, "the nominal plan on its own model: %g m", en[1]);
  cr_assert_lt(fmax(er[0], er[2]), fmax(en[0], en[2]), "the robust plan's worse case is not better");
}
