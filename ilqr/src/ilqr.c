/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr.c — the iLQR solver's creation, options and setters (grit_ilqr/ilqr.h, docs/ilqr.md); the
 * iterations are in ilqr_solve.c, the cost in ilqr_cost.c. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (ilqr_internal.h) */
#include "ilqr_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/version.h"
#include "riccati.h"

const char *grit_ilqr_version(void) { return GRIT_VERSION_STRING; }

grit_ilqr_options grit_ilqr_default_options(void) {
  grit_ilqr_options o;
  memset(&o, 0, sizeof o);
  o.max_iterations = 100;
  o.tol_cost = 1e-6;
  o.tol_feedforward = 1e-6;
  o.reg_init = 1e-6;
  o.reg_min = 1e-8;
  o.reg_max = 1e10;
  o.reg_factor = 1.6;
  o.ls_decrease = 0.5;
  o.ls_max_trials = 10;
  o.ls_accept = 1e-4;
  o.nthreads = 1;
  o.tol_constraint = 1e-6;
  o.penalty_init = 1;
  o.penalty_factor = 10;
  o.penalty_max = 1e8;
  o.max_time = 0;
  o.tol_gradient = 1e-2;
  o.alpha_converged = 0.5;
  o.inner_max_iterations = 20;
  o.kink_alpha = 0; /* off: on a smooth optimum it can end a solve stalled instead of converged */
  o.reg_limit_ends_inner = 1;
  o.stall_short_steps = 0; /* off: on a smooth problem a stretch of short steps can precede convergence */
  o.reg_reset_on_update = 0; /* off: alone it moves the arm's counts both ways (docs/ilqr.md, stop 15) */
  return o;
}

static grit_status check_options(const grit_ilqr_options *o, char *msg) {
  if (o->max_iterations < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "max_iterations %d < 1", o->max_iterations);
  if (!(o->tol_cost >= 0) || !(o->tol_feedforward >= 0))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "tolerances must be >= 0");
  if (!(o->reg_min >= 0) || !(o->reg_init >= 0) || !(o->reg_max > o->reg_min) || !isfinite(o->reg_max))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "regularization bounds: need 0 <= reg_min < reg_max < inf, reg_init >= 0");
  if (!(o->reg_factor > 1) || !isfinite(o->reg_factor))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "reg_factor %g must be > 1", o->reg_factor);
  if (!(o->ls_decrease > 0 && o->ls_decrease < 1))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "ls_decrease %g must be in (0, 1)", o->ls_decrease);
  if (o->ls_max_trials < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "ls_max_trials %d < 1", o->ls_max_trials);
  if (!(o->ls_accept > 0 && o->ls_accept < 1))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "ls_accept %g must be in (0, 1)", o->ls_accept);
  if (!(o->tol_constraint >= 0) || !(o->penalty_init > 0) || !(o->penalty_max >= o->penalty_init) ||
      !isfinite(o->penalty_max) || !(o->penalty_factor > 1) || !isfinite(o->penalty_factor))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "constraint options: need tol_constraint >= 0, 0 < penalty_init <= penalty_max < inf, "
                          "penalty_factor > 1");
  if (o->inner_max_iterations < 0)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "inner_max_iterations %d < 0", o->inner_max_iterations);
  if (!(o->max_time >= 0) || !(o->tol_gradient >= 0) || !(o->alpha_converged >= 0 && o->alpha_converged <= 1))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "need max_time >= 0, tol_gradient >= 0 and alpha_converged in [0, 1]");
  if (o->stall_short_steps < 0)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "stall_short_steps %d < 0", o->stall_short_steps);
  if (!(o->kink_alpha >= 0 && o->kink_alpha < 1))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "kink_alpha %g must be in [0, 1)", o->kink_alpha);
  if (o->nthreads < 1 || o->nthreads > MAX_THREADS)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "nthreads %d not in [1, %d]", o->nthreads, MAX_THREADS);
  return GRIT_OK;
}

/* A copy of n numbers (NULL stays NULL); *ok is cleared when an allocation fails. */
static double *dup_array(const double *a, int n, int *ok) {
  if (!a) return NULL;
  double *c = malloc(sizeof(double) * (size_t)n);
  if (!c) {
    *ok = 0;
    return NULL;
  }
  memcpy(c, a, sizeof(double) * (size_t)n);
  return c;
}

static double *zeros(size_t n, int *ok) {
  double *c = calloc(n ? n : 1, sizeof(double));
  if (!c) *ok = 0;
  return c;
}

void grit_ilqr_free(grit_ilqr *s) {
  if (!s) return;
  double *arrays[] = {s->x0, s->x_goal, s->Q, s->Qf, s->R, s->u_ref, s->u_min, s->u_max, s->xs[0], s->xs[1],
                      s->us[0], s->us[1], s->fx, s->fu, s->lx, s->lxx, s->lu, s->luu, s->lux, s->kff, s->K,
                      s->Vx, s->Vxx, s->Vx1, s->Vxx1, s->dlo, s->dhi, s->e, s->du, s->cb, s->work,
                      s->C, s->lambda, s->c, s->Cpx, s->Cpu, s->dp, s->mu_path, s->h, s->fx2, s->fu2, s->xbk, s->ubk};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
  free(s);
}

/* Q, Qf (n x n) and R (m x m), each may be NULL: finite, symmetric, with a non-negative diagonal. */
static grit_status check_weights(int n, int m, const double *Q, const double *Qf, const double *R, char *msg) {
  if ((Q && !grit_ilqr_all_finite(Q, n * n)) || (Qf && !grit_ilqr_all_finite(Qf, n * n)) ||
      (R && !grit_ilqr_all_finite(R, m * m)))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "a cost weight has a non-finite entry");
  const double *mats[3] = {Q, Qf, R};
  const int dims[3] = {n, n, m};
  const char *names[3] = {"Q", "Qf", "R"};
  for (int t = 0; t < 3; ++t) {
    if (!mats[t]) continue;
    for (int i = 0; i < dims[t]; ++i) {
      if (mats[t][i * dims[t] + i] < 0)
        return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "%s[%d][%d] = %g < 0: the weight must be positive semidefinite",
                    names[t], i, i, mats[t][i * dims[t] + i]);
      for (int j = 0; j < i; ++j)
        if (fabs(mats[t][i * dims[t] + j] - mats[t][j * dims[t] + i]) >
            1e-12 * (fabs(mats[t][i * dims[t] + j]) + fabs(mats[t][j * dims[t] + i]) + 1e-300))
          return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "%s is not symmetric at (%d, %d)", names[t], i, j);
    }
  }
  return GRIT_OK;
}

/* The path inequalities' sizes and entries. */
static grit_status check_path(const grit_ilqr_problem *p, char *msg) {
  const int n = p->dynamics.ndx, m = p->dynamics.nu, np = p->nc_path;
  if (np < 0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "nc_path %d < 0", np);
  if (np == 0) return GRIT_OK;
  if (!p->d_path || (!p->Cx_path && !p->Cu_path))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "path constraints need d_path and Cx_path or Cu_path");
  if (p->Cx_path && !p->x_goal) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "Cx_path needs x_goal");
  if ((p->Cx_path && !grit_ilqr_all_finite(p->Cx_path, np * n)) || (p->Cu_path && !grit_ilqr_all_finite(p->Cu_path, np * m)) ||
      !grit_ilqr_all_finite(p->d_path, np))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "a path constraint has a non-finite entry");
  for (int i = 0; i < np; ++i) {
    double row = 0;
    for (int j = 0; p->Cx_path && j < n; ++j) row += fabs(p->Cx_path[i * n + j]);
    for (int j = 0; p->Cu_path && j < m; ++j) row += fabs(p->Cu_path[i * m + j]);
    if (row == 0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "path constraint row %d is zero", i);
  }
  return GRIT_OK;
}

/* The problem's sizes, pointers and values; GRIT_OK or the first fault with its message. */
static grit_status check_problem(const grit_ilqr_problem *p, char *msg) {
  const grit_ilqr_dynamics *d = &p->dynamics;
  if (d->nx < 1 || d->ndx < 1 || d->nu < 1)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "dynamics sizes nx %d, ndx %d, nu %d must be >= 1", d->nx, d->ndx,
                d->nu);
  if (!d->step || !d->jacobians) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "dynamics step or jacobians is NULL");
  if (!d->difference && d->nx != d->ndx)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "nx %d != ndx %d needs a difference function", d->nx, d->ndx);
  if (p->horizon < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "horizon %d < 1", p->horizon);
  if (!p->x0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "x0 is NULL");
  if (!grit_ilqr_all_finite(p->x0, d->nx)) return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "x0 has a non-finite entry");
  if ((p->Q || p->Qf) && !p->x_goal) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "Q or Qf given without x_goal");
  const int nx = d->nx, n = d->ndx, m = d->nu;
  if (p->nc_final < 0 || p->nc_final > n || (p->nc_final > 0) != (p->C_final != NULL))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "final constraint: nc_final %d must be in [0, ndx = %d], with C_final given iff nc_final > 0",
                          p->nc_final, n);
  if (p->nc_final > 0 && !p->x_goal)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "a final constraint needs x_goal");
  if (p->nc_final > 0 && !grit_ilqr_all_finite(p->C_final, p->nc_final * n))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "C_final has a non-finite entry");
  for (int i = 0; i < p->nc_final; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) row += fabs(p->C_final[i * n + j]);
    if (row == 0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "C_final row %d is zero", i);
  }
  if ((p->x_goal && !grit_ilqr_all_finite(p->x_goal, nx)) ||
      (p->u_ref && !grit_ilqr_all_finite(p->u_ref, m)))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "a cost weight or reference has a non-finite entry");
  grit_status wst = check_weights(n, m, p->Q, p->Qf, p->R, msg);
  if (wst) return wst;
  wst = check_path(p, msg);
  if (wst) return wst;
  if (!p->u_min != !p->u_max) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "give both u_min and u_max, or neither");
  if (p->u_min)
    for (int i = 0; i < m; ++i)
      if (isnan(p->u_min[i]) || isnan(p->u_max[i]) || !(p->u_min[i] <= p->u_max[i]))
        return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "control %d: limits [%g, %g] are not an interval", i, p->u_min[i],
                    p->u_max[i]);
  return GRIT_OK;
}

/* The problem's data, copied into the solver (ok = 0 when out of memory). */
static void copy_problem(grit_ilqr *s, const grit_ilqr_problem *p, const grit_ilqr_options *opt, int *okp) {
  const grit_ilqr_dynamics *d = &p->dynamics;
  const grit_ilqr_options o = *opt;
  const int nx = d->nx, n = d->ndx, m = d->nu, N = p->horizon;
  s->dyn = *d;
  s->N = N;
  s->nx = nx;
  s->ndx = n;
  s->nu = m;
  s->cost = p->cost;
  s->cost_ctx = p->cost_ctx;
  s->opt = o;
  s->x0 = dup_array(p->x0, nx, okp);
  s->x_goal = dup_array(p->x_goal, nx, okp);
  s->Q = dup_array(p->Q, n * n, okp);
  s->Qf = dup_array(p->Qf, n * n, okp);
  s->R = dup_array(p->R, m * m, okp);
  s->u_ref = dup_array(p->u_ref, m, okp);
  s->u_min = dup_array(p->u_min, m, okp);
  s->u_max = dup_array(p->u_max, m, okp);
  s->nc = p->nc_final;
  s->rho = o.penalty_init;
  if (s->nc) {
    s->C = dup_array(p->C_final, s->nc * n, okp);
    s->lambda = zeros((size_t)s->nc, okp);
    s->c = zeros((size_t)s->nc, okp);
  }
  s->np = p->nc_path;
  s->rho_path = o.penalty_init;
  if (s->np) {
    s->Cpx = dup_array(p->Cx_path, s->np * n, okp);
    s->Cpu = dup_array(p->Cu_path, s->np * m, okp);
    s->dp = dup_array(p->d_path, s->np, okp);
    s->mu_path = zeros((size_t)N * (size_t)s->np, okp);
    s->h = zeros((size_t)s->np, okp);
  }
}

/* The iterations' workspaces: trajectories, derivatives, the backward pass's (ok = 0 when out of memory). */
static void alloc_work(grit_ilqr *s, int *okp) {
  const grit_ilqr_options o = s->opt;
  const int nx = s->nx, n = s->ndx, m = s->nu, N = s->N;
  s->mu = o.reg_init;
  s->delta = 1;
  const size_t Nn = (size_t)N;
  for (int t = 0; t < 2; ++t) {
    s->xs[t] = zeros((Nn + 1) * (size_t)nx, okp);
    s->us[t] = zeros(Nn * (size_t)m, okp);
  }
  s->fx = zeros(Nn * (size_t)(n * n), okp);
  s->fu = zeros(Nn * (size_t)(n * m), okp);
  s->lx = zeros((Nn + 1) * (size_t)n, okp);
  s->lxx = zeros((Nn + 1) * (size_t)(n * n), okp);
  s->lu = zeros(Nn * (size_t)m, okp);
  s->luu = zeros(Nn * (size_t)(m * m), okp);
  s->lux = zeros(Nn * (size_t)(m * n), okp);
  s->kff = zeros(Nn * (size_t)m, okp);
  s->K = zeros(Nn * (size_t)(m * n), okp);
  s->Vx = zeros((size_t)n, okp);
  s->Vx1 = zeros((size_t)n, okp);
  s->Vxx = zeros((size_t)(n * n), okp);
  s->Vxx1 = zeros((size_t)(n * n), okp);
  s->dlo = zeros((size_t)m, okp);
  s->dhi = zeros((size_t)m, okp);
  s->e = zeros((size_t)n, okp);
  s->du = zeros((size_t)m, okp);
  s->cb = zeros((size_t)(n + m + n * n + m * m + m * n), okp);
  s->work = zeros((size_t)GRIT_ILQR_RICCATI_WORK(n, m), okp);
  /* Jacobians across a kink (options.kink_alpha): allocated always, so that set_options may turn it on */
  s->fx2 = zeros(Nn * (size_t)(n * n), okp);
  s->fu2 = zeros(Nn * (size_t)(n * m), okp);
  s->xbk = zeros((Nn + 1) * (size_t)nx, okp);
  s->ubk = zeros(Nn * (size_t)m, okp);
}

grit_status grit_ilqr_create(const grit_ilqr_problem *p, const grit_ilqr_options *options, grit_ilqr **out,
                             char *msg) {
  if (msg) msg[0] = 0;
  if (!out) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "solver pointer is NULL");
  *out = NULL;
  if (!p) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "problem is NULL");
  grit_status st = check_problem(p, msg);
  if (st) return st;
  grit_ilqr_options o = options ? *options : grit_ilqr_default_options();
  st = check_options(&o, msg);
  if (st) return st;

  grit_ilqr *s = calloc(1, sizeof *s);
  if (!s) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  int ok = 1;
  copy_problem(s, p, &o, &ok);
  alloc_work(s, &ok);
  const int m = s->nu, N = s->N;
  if (!ok) {
    grit_ilqr_free(s);
    return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory for a horizon of %d", N);
  }
  for (int k = 0; k < N; ++k) {
    double *u = s->us[0] + (size_t)k * m;
    if (s->u_ref) memcpy(u, s->u_ref, sizeof(double) * (size_t)m);
    grit_ilqr_clamp(s, u);
  }
  *out = s;
  return GRIT_OK;
}

const char *grit_ilqr_last_error(const grit_ilqr *s) { return s ? s->msg : "solver is NULL"; }

grit_status grit_ilqr_set_options(grit_ilqr *s, const grit_ilqr_options *o) {
  if (!s || !o) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status st = check_options(o, s->msg);
  if (st) return st;
  s->opt = *o;
  return GRIT_OK;
}

grit_status grit_ilqr_set_initial_state(grit_ilqr *s, const double *x0) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (!x0) return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "x0 is NULL");
  if (!grit_ilqr_all_finite(x0, s->nx)) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "x0 has a non-finite entry");
  memcpy(s->x0, x0, sizeof(double) * (size_t)s->nx);
  s->have_rollout = 0;
  return GRIT_OK;
}

grit_status grit_ilqr_set_controls(grit_ilqr *s, const double *u) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (!u) return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "controls are NULL");
  if (!grit_ilqr_all_finite(u, s->N * s->nu)) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "a control is not finite");
  double *us = s->us[s->slot];
  memcpy(us, u, sizeof(double) * (size_t)(s->N * s->nu));
  for (int k = 0; k < s->N; ++k) grit_ilqr_clamp(s, us + (size_t)k * s->nu);
  s->have_rollout = 0;
  return GRIT_OK;
}

grit_status grit_ilqr_shift(grit_ilqr *s) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  const int N = s->N, m = s->nu, n = s->ndx;
  double *u = s->us[s->slot];
  memmove(u, u + m, sizeof(double) * (size_t)((N - 1) * m));
  memmove(s->kff, s->kff + m, sizeof(double) * (size_t)((N - 1) * m));
  memmove(s->K, s->K + (size_t)m * n, sizeof(double) * (size_t)((N - 1) * m * n));
  double *x = s->xs[s->slot];
  memmove(x, x + s->nx, sizeof(double) * (size_t)(N * s->nx));
  s->have_rollout = 0;
  return GRIT_OK;
}

const double *grit_ilqr_states(const grit_ilqr *s) { return s ? s->xs[s->slot] : NULL; }
const double *grit_ilqr_controls(const grit_ilqr *s) { return s ? s->us[s->slot] : NULL; }
const double *grit_ilqr_gains(const grit_ilqr *s) { return s ? s->K : NULL; }
int grit_ilqr_horizon(const grit_ilqr *s) { return s ? s->N : 0; }
const double *grit_ilqr_multipliers(const grit_ilqr *s) { return s ? s->lambda : NULL; }

/* ------------------------------------------------------------- changing the problem (e.g. MPC) */

void grit_ilqr_request_stop(grit_ilqr *s) {
  if (s) s->stop_requested = 1;
}

const double *grit_ilqr_path_multipliers(const grit_ilqr *s) { return s ? s->mu_path : NULL; }

/* *dst (n numbers, allocated here if absent) = src, or freed when src is NULL. Returns 0, or 1 when out of
 * memory. */
static int replace_array(double **dst, const double *src, int n) {
  if (!src) {
    free(*dst);
    *dst = NULL;
    return 0;
  }
  if (!*dst && !(*dst = malloc(sizeof(double) * (size_t)n))) return 1;
  memcpy(*dst, src, sizeof(double) * (size_t)n);
  return 0;
}

/* The current solution is re-priced at the next solve (its rollout is redone: the cost changed). */
static void cost_changed(grit_ilqr *s) {
  s->have_rollout = 0;
  s->have_derivs = 0;
}

grit_status grit_ilqr_set_goal(grit_ilqr *s, const double *x_goal) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (!x_goal && (s->Q || s->Qf || s->nc || s->Cpx))
    return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "x_goal is needed by Q, Qf or a constraint");
  if (x_goal && !grit_ilqr_all_finite(x_goal, s->nx))
    return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "x_goal has a non-finite entry");
  if (replace_array(&s->x_goal, x_goal, s->nx)) return grit_ilqr_fail(s->msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  cost_changed(s);
  return GRIT_OK;
}

grit_status grit_ilqr_set_weights(grit_ilqr *s, const double *Q, const double *Qf, const double *R) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  const int n = s->ndx, m = s->nu;
  grit_status st = check_weights(n, m, Q, Qf, R, s->msg);
  if (st) return st;
  if ((Q || Qf) && !s->x_goal) return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "Q or Qf given without x_goal");
  if (replace_array(&s->Q, Q, n * n) || replace_array(&s->Qf, Qf, n * n) || replace_array(&s->R, R, m * m))
    return grit_ilqr_fail(s->msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  cost_changed(s);
  return GRIT_OK;
}

grit_status grit_ilqr_set_control_reference(grit_ilqr *s, const double *u_ref) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (u_ref && !grit_ilqr_all_finite(u_ref, s->nu))
    return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "u_ref has a non-finite entry");
  if (replace_array(&s->u_ref, u_ref, s->nu)) return grit_ilqr_fail(s->msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  cost_changed(s);
  return GRIT_OK;
}

grit_status grit_ilqr_dynamics_changed(grit_ilqr *s) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  cost_changed(s);
  if (s->mu > s->opt.reg_init) { /* the regularization the old dynamics' line searches climbed to says nothing
                                    about the new dynamics (a stage of an annealed or squeezed solve): a stage
                                    that inherited mu 8e7 took only round-off steps (docs/performance.md, stop 22) */
    s->mu = s->opt.reg_init;
    s->delta = 1;
  }
  return GRIT_OK;
}

grit_status grit_ilqr_set_path_bounds(grit_ilqr *s, const double *d_path) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (!s->np) return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "the problem has no path constraints");
  if (!d_path || !grit_ilqr_all_finite(d_path, s->np))
    return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "d_path is NULL or has a non-finite entry");
  memcpy(s->dp, d_path, sizeof(double) * (size_t)s->np);
  cost_changed(s);
  return GRIT_OK;
}

const char *grit_ilqr_stop_string(grit_ilqr_stop stop) {
  switch (stop) {
  case GRIT_ILQR_CONVERGED_COST:
    return "converged: the last step changed the cost by less than tol_cost and the gradient is small";
  case GRIT_ILQR_CONVERGED_FEEDFORWARD:
    return "converged: the feedforward step and the gradient are small";
  case GRIT_ILQR_MAX_ITERATIONS:
    return "not converged: max_iterations reached (raise it, or start closer)";
  case GRIT_ILQR_REGULARIZATION_LIMIT:
    return "not converged: the regularization reached reg_max without a descent step (the linearization does "
           "not predict the cost: check the Jacobians and the cost's derivatives)";
  case GRIT_ILQR_LINE_SEARCH_STALLED:
    return "not converged: the line search stalled (only short steps decrease the cost: the local model "
           "predicts the cost poorly here, a kink or strong nonlinearity of the dynamics or cost; not shown to be "
           "a local minimum)";
  case GRIT_ILQR_ZERO_GRADIENT:
    return "no gradient: the dynamics are locally flat (e.g. no contact yet, or a load below the friction that "
           "would move it) — consider gradient smoothing";
  case GRIT_ILQR_NOT_FINITE:
    return "error: a cost derivative or a Jacobian is not finite";
  case GRIT_ILQR_TIME_LIMIT:
    return "not converged: the time budget max_time ran out";
  case GRIT_ILQR_USER_STOP:
    return "not converged: stopped on request (grit_ilqr_request_stop)";
  }
  return "unknown stop";
}
