/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr.c — the iLQR solver: rollouts, the parallel Jacobian phase, the backward pass with its
 * regularization schedule, the line search and the stopping rules (grit_ilqr/ilqr.h, docs/ilqr.md). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "grit_ilqr/ilqr.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dense.h"
#include "message.h"
#include "grit/version.h"
#include "riccati.h"

#define MAX_THREADS 64

struct grit_ilqr {
  grit_ilqr_dynamics dyn;
  int N, nx, ndx, nu;
  double *x0, *x_goal, *Q, *Qf, *R, *u_ref, *u_min, *u_max; /* NULL where absent */
  int nc;            /* rows of the final constraint c = C (x_N (-) x_goal) = 0 (0: none) */
  double *C, *lambda, *c; /* nc x ndx, its multipliers, and scratch for c */
  double rho;        /* its penalty */
  double violation, al_term; /* max|c| and lambda' c + rho/2 |c|^2 at the current solution */
  grit_ilqr_cost_fn cost;
  void *cost_ctx;
  grit_ilqr_options opt;

  int slot;          /* the rollout slot holding the current solution */
  int have_rollout;  /* xs[slot] is the rollout of us[slot] from x0 */
  double J;          /* its cost, with the constraint's augmented-Lagrangian terms */
  double *xs[2];     /* (N + 1) x nx per slot */
  double *us[2];     /* N x nu per slot */
  double *fx, *fu;   /* N x ndx x ndx, N x ndx x nu */
  double *lx, *lxx;  /* (N + 1) x ndx, (N + 1) x ndx x ndx */
  double *lu, *luu, *lux; /* N x nu, N x nu x nu, N x nu x ndx */
  double *kff, *K;   /* N x nu, N x nu x ndx */
  double *Vx, *Vxx, *Vx1, *Vxx1;
  double *dlo, *dhi; /* nu: the box in terms of du */
  double *e, *du, *cb; /* scratch: ndx, nu, and the cost callback's outputs */
  double *work;      /* Riccati knot workspace */
  double dV[2];      /* expected-reduction terms of the last backward pass */
  int clamped;       /* knots with a clamped control in the last backward pass */
  char msg[GRIT_MESSAGE_SIZE];
};

const char *grit_ilqr_version(void) { return GRIT_VERSION_STRING; }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int all_finite(const double *a, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(a[i])) return 0;
  return 1;
}

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
                      s->C, s->lambda, s->c};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
  free(s);
}

static void clamp_controls(const grit_ilqr *s, double *u) {
  if (!s->u_min) return;
  for (int i = 0; i < s->nu; ++i) u[i] = fmin(fmax(u[i], s->u_min[i]), s->u_max[i]);
}

grit_status grit_ilqr_create(const grit_ilqr_problem *p, const grit_ilqr_options *options, grit_ilqr **out,
                             char *msg) {
  if (msg) msg[0] = 0;
  if (!out) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "solver pointer is NULL");
  *out = NULL;
  if (!p) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "problem is NULL");
  const grit_ilqr_dynamics *d = &p->dynamics;
  if (d->nx < 1 || d->ndx < 1 || d->nu < 1)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "dynamics sizes nx %d, ndx %d, nu %d must be >= 1", d->nx, d->ndx,
                d->nu);
  if (!d->step || !d->jacobians) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "dynamics step or jacobians is NULL");
  if (!d->difference && d->nx != d->ndx)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "nx %d != ndx %d needs a difference function", d->nx, d->ndx);
  if (p->horizon < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "horizon %d < 1", p->horizon);
  if (!p->x0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "x0 is NULL");
  if (!all_finite(p->x0, d->nx)) return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "x0 has a non-finite entry");
  if ((p->Q || p->Qf) && !p->x_goal) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "Q or Qf given without x_goal");
  const int nx = d->nx, n = d->ndx, m = d->nu, N = p->horizon;
  if (p->nc_final < 0 || p->nc_final > n || (p->nc_final > 0) != (p->C_final != NULL))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "final constraint: nc_final %d must be in [0, ndx = %d], with C_final given iff nc_final > 0",
                          p->nc_final, n);
  if (p->nc_final > 0 && !p->x_goal)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "a final constraint needs x_goal");
  if (p->nc_final > 0 && !all_finite(p->C_final, p->nc_final * n))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "C_final has a non-finite entry");
  for (int i = 0; i < p->nc_final; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) row += fabs(p->C_final[i * n + j]);
    if (row == 0) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "C_final row %d is zero", i);
  }
  if ((p->x_goal && !all_finite(p->x_goal, nx)) || (p->Q && !all_finite(p->Q, n * n)) ||
      (p->Qf && !all_finite(p->Qf, n * n)) || (p->R && !all_finite(p->R, m * m)) ||
      (p->u_ref && !all_finite(p->u_ref, m)))
    return grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "a cost weight or reference has a non-finite entry");
  const double *mats[3] = {p->Q, p->Qf, p->R};
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
  if (!p->u_min != !p->u_max) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "give both u_min and u_max, or neither");
  if (p->u_min)
    for (int i = 0; i < m; ++i)
      if (isnan(p->u_min[i]) || isnan(p->u_max[i]) || !(p->u_min[i] <= p->u_max[i]))
        return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "control %d: limits [%g, %g] are not an interval", i, p->u_min[i],
                    p->u_max[i]);
  grit_ilqr_options o = options ? *options : grit_ilqr_default_options();
  grit_status st = check_options(&o, msg);
  if (st) return st;

  grit_ilqr *s = calloc(1, sizeof *s);
  if (!s) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  s->dyn = *d;
  s->N = N;
  s->nx = nx;
  s->ndx = n;
  s->nu = m;
  s->cost = p->cost;
  s->cost_ctx = p->cost_ctx;
  s->opt = o;
  int ok = 1;
  s->x0 = dup_array(p->x0, nx, &ok);
  s->x_goal = dup_array(p->x_goal, nx, &ok);
  s->Q = dup_array(p->Q, n * n, &ok);
  s->Qf = dup_array(p->Qf, n * n, &ok);
  s->R = dup_array(p->R, m * m, &ok);
  s->u_ref = dup_array(p->u_ref, m, &ok);
  s->u_min = dup_array(p->u_min, m, &ok);
  s->u_max = dup_array(p->u_max, m, &ok);
  s->nc = p->nc_final;
  s->rho = o.penalty_init;
  if (s->nc) {
    s->C = dup_array(p->C_final, s->nc * n, &ok);
    s->lambda = zeros((size_t)s->nc, &ok);
    s->c = zeros((size_t)s->nc, &ok);
  }
  const size_t Nn = (size_t)N;
  for (int t = 0; t < 2; ++t) {
    s->xs[t] = zeros((Nn + 1) * (size_t)nx, &ok);
    s->us[t] = zeros(Nn * (size_t)m, &ok);
  }
  s->fx = zeros(Nn * (size_t)(n * n), &ok);
  s->fu = zeros(Nn * (size_t)(n * m), &ok);
  s->lx = zeros((Nn + 1) * (size_t)n, &ok);
  s->lxx = zeros((Nn + 1) * (size_t)(n * n), &ok);
  s->lu = zeros(Nn * (size_t)m, &ok);
  s->luu = zeros(Nn * (size_t)(m * m), &ok);
  s->lux = zeros(Nn * (size_t)(m * n), &ok);
  s->kff = zeros(Nn * (size_t)m, &ok);
  s->K = zeros(Nn * (size_t)(m * n), &ok);
  s->Vx = zeros((size_t)n, &ok);
  s->Vx1 = zeros((size_t)n, &ok);
  s->Vxx = zeros((size_t)(n * n), &ok);
  s->Vxx1 = zeros((size_t)(n * n), &ok);
  s->dlo = zeros((size_t)m, &ok);
  s->dhi = zeros((size_t)m, &ok);
  s->e = zeros((size_t)n, &ok);
  s->du = zeros((size_t)m, &ok);
  s->cb = zeros((size_t)(n + m + n * n + m * m + m * n), &ok);
  s->work = zeros((size_t)GRIT_ILQR_RICCATI_WORK(n, m), &ok);
  if (!ok) {
    grit_ilqr_free(s);
    return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory for a horizon of %d", N);
  }
  for (int k = 0; k < N; ++k) {
    double *u = s->us[0] + (size_t)k * m;
    if (s->u_ref) memcpy(u, s->u_ref, sizeof(double) * (size_t)m);
    clamp_controls(s, u);
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
  if (!all_finite(x0, s->nx)) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "x0 has a non-finite entry");
  memcpy(s->x0, x0, sizeof(double) * (size_t)s->nx);
  s->have_rollout = 0;
  return GRIT_OK;
}

grit_status grit_ilqr_set_controls(grit_ilqr *s, const double *u) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  if (!u) return grit_ilqr_fail(s->msg, GRIT_ERR_INVALID_ARGUMENT, "controls are NULL");
  if (!all_finite(u, s->N * s->nu)) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "a control is not finite");
  double *us = s->us[s->slot];
  memcpy(us, u, sizeof(double) * (size_t)(s->N * s->nu));
  for (int k = 0; k < s->N; ++k) clamp_controls(s, us + (size_t)k * s->nu);
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

/* ------------------------------------------------------------------------------------------ cost */

static void state_error(grit_ilqr *s, const double *x, double *e) {
  if (s->dyn.difference)
    s->dyn.difference(s->dyn.ctx, s->x_goal, x, e);
  else
    for (int i = 0; i < s->nx; ++i) e[i] = x[i] - s->x_goal[i];
}

/* The final constraint c = C e at the error e into s->c; returns max_i |c_i|. */
static double constraint_value(grit_ilqr *s, const double *e) {
  double worst = 0;
  for (int i = 0; i < s->nc; ++i) {
    double v = 0;
    for (int j = 0; j < s->ndx; ++j) v += s->C[i * s->ndx + j] * e[j];
    s->c[i] = v;
    worst = fmax(worst, fabs(v));
  }
  return worst;
}

/* The augmented-Lagrangian term lambda' c + rho/2 |c|^2 at the c in s->c. */
static double constraint_term(const grit_ilqr *s) {
  double t = 0;
  for (int i = 0; i < s->nc; ++i) t += (s->lambda[i] + 0.5 * s->rho * s->c[i]) * s->c[i];
  return t;
}

/* The final constraint at the current solution: c into s->c, max|c| into s->violation, and its
 * augmented-Lagrangian term (part of s->J) into s->al_term. */
static void refresh_constraint(grit_ilqr *s) {
  s->violation = s->al_term = 0;
  if (!s->nc) return;
  state_error(s, s->xs[s->slot] + (size_t)s->N * s->nx, s->e);
  s->violation = constraint_value(s, s->e);
  s->al_term = constraint_term(s);
}

double grit_ilqr_cost(const grit_ilqr *s) { return s ? s->J - s->al_term : NAN; }

/* The cost of knot k (u NULL at k == N) and, if derivs, its derivatives into the knot's arrays.
 * Returns 0, or nonzero if the cost callback failed or gave a non-finite value. */
static int knot_cost(grit_ilqr *s, int k, const double *x, const double *u, double *l, int derivs) {
  const int n = s->ndx, m = s->nu, final = (k == s->N);
  const double *W = final ? s->Qf : s->Q;
  double *lx = s->lx + (size_t)k * n, *lxx = s->lxx + (size_t)k * n * n;
  double *lu = final ? NULL : s->lu + (size_t)k * m, *luu = final ? NULL : s->luu + (size_t)k * m * m;
  double *lux = final ? NULL : s->lux + (size_t)k * m * n;
  double c = 0;
  if (derivs) {
    memset(lx, 0, sizeof(double) * (size_t)n);
    memset(lxx, 0, sizeof(double) * (size_t)(n * n));
    if (!final) {
      memset(lu, 0, sizeof(double) * (size_t)m);
      memset(luu, 0, sizeof(double) * (size_t)(m * m));
      memset(lux, 0, sizeof(double) * (size_t)(m * n));
    }
  }
  /* The error's Jacobian is taken as the identity: exact for vector states, and for rotations the
   * first-order term at small error (the usual tangent-space convention). */
  if (W || (final && s->nc)) state_error(s, x, s->e);
  if (final && s->nc) {
    /* lambda' c + rho/2 |c|^2 with c = C e: gradient C' (lambda + rho c), Hessian rho C' C */
    constraint_value(s, s->e);
    c += constraint_term(s);
    if (derivs)
      for (int i = 0; i < s->nc; ++i) {
        const double *Ci = s->C + (size_t)i * n, g = s->lambda[i] + s->rho * s->c[i];
        for (int a = 0; a < n; ++a) {
          if (Ci[a] == 0) continue;
          lx[a] += Ci[a] * g;
          for (int b = 0; b < n; ++b) lxx[a * n + b] += s->rho * Ci[a] * Ci[b];
        }
      }
  }
  if (W) {
    for (int i = 0; i < n; ++i) {
      double we = 0;
      for (int j = 0; j < n; ++j) we += W[i * n + j] * s->e[j];
      c += 0.5 * s->e[i] * we;
      if (derivs) lx[i] += we;
    }
    if (derivs)
      for (int i = 0; i < n * n; ++i) lxx[i] += W[i];
  }
  if (!final && s->R) {
    for (int i = 0; i < m; ++i) s->du[i] = u[i] - (s->u_ref ? s->u_ref[i] : 0);
    for (int i = 0; i < m; ++i) {
      double rd = 0;
      for (int j = 0; j < m; ++j) rd += s->R[i * m + j] * s->du[j];
      c += 0.5 * s->du[i] * rd;
      if (derivs) lu[i] += rd;
    }
    if (derivs)
      for (int i = 0; i < m * m; ++i) luu[i] += s->R[i];
  }
  if (s->cost) {
    double lc = 0, *cx = s->cb, *cu = cx + n, *cxx = cu + m, *cuu = cxx + n * n, *cux = cuu + m * m;
    if (derivs) memset(s->cb, 0, sizeof(double) * (size_t)(n + m + n * n + m * m + m * n));
    if (s->cost(s->cost_ctx, k, x, final ? NULL : u, &lc, derivs ? cx : NULL, derivs && !final ? cu : NULL,
                derivs ? cxx : NULL, derivs && !final ? cuu : NULL, derivs && !final ? cux : NULL))
      return 1;
    c += lc;
    if (derivs) {
      for (int i = 0; i < n; ++i) lx[i] += cx[i];
      for (int i = 0; i < n * n; ++i) lxx[i] += cxx[i];
      if (!final) {
        for (int i = 0; i < m; ++i) lu[i] += cu[i];
        for (int i = 0; i < m * m; ++i) luu[i] += cuu[i];
        for (int i = 0; i < m * n; ++i) lux[i] += cux[i];
      }
    }
  }
  *l = c;
  return isfinite(c) ? 0 : 1;
}

/* --------------------------------------------------------------------------------------- rollout */

/* Rolls out into `slot` from x0. With gains, u_k = clamp(ubar_k + alpha kff_k + K_k (x_k (-) xbar_k))
 * around the current solution; without, the slot's own controls (clamped). Returns 0 with the cost in
 * *J, or 1 if the dynamics or the cost failed or produced a non-finite state. */
static int rollout(grit_ilqr *s, int slot, int with_gains, double alpha, double *J) {
  const int N = s->N, nx = s->nx, n = s->ndx, m = s->nu;
  double *x = s->xs[slot], *u = s->us[slot];
  const double *xbar = s->xs[s->slot], *ubar = s->us[s->slot];
  memcpy(x, s->x0, sizeof(double) * (size_t)nx);
  double cost = 0, l;
  for (int k = 0; k < N; ++k) {
    double *xk = x + (size_t)k * nx, *uk = u + (size_t)k * m;
    if (with_gains) {
      if (s->dyn.difference)
        s->dyn.difference(s->dyn.ctx, xbar + (size_t)k * nx, xk, s->e);
      else
        for (int i = 0; i < n; ++i) s->e[i] = xk[i] - xbar[(size_t)k * nx + i];
      const double *Kk = s->K + (size_t)k * m * n, *kk = s->kff + (size_t)k * m;
      for (int i = 0; i < m; ++i) {
        double v = ubar[(size_t)k * m + i] + alpha * kk[i];
        for (int j = 0; j < n; ++j) v += Kk[i * n + j] * s->e[j];
        uk[i] = v;
      }
    }
    clamp_controls(s, uk);
    if (s->dyn.step(s->dyn.ctx, slot, k, xk, uk, xk + nx)) return 1;
    if (!all_finite(xk + nx, nx)) return 1;
    if (knot_cost(s, k, xk, uk, &l, 0)) return 1;
    cost += l;
  }
  if (knot_cost(s, N, x + (size_t)N * nx, NULL, &l, 0)) return 1;
  *J = cost + l;
  return 0;
}

/* ---------------------------------------------------------------------- Jacobians, on threads */

typedef struct jac_job {
  grit_ilqr *s;
  atomic_int next;
  atomic_int failed;
} jac_job;

typedef struct jac_arg {
  jac_job *job;
  int thread;
} jac_arg;

static void *jac_worker(void *p) {
  jac_arg *a = p;
  grit_ilqr *s = a->job->s;
  const int n = s->ndx, m = s->nu, nx = s->nx;
  const double *x = s->xs[s->slot], *u = s->us[s->slot];
  for (;;) {
    const int k = atomic_fetch_add(&a->job->next, 1);
    if (k >= s->N || atomic_load(&a->job->failed)) break;
    double *fx = s->fx + (size_t)k * n * n, *fu = s->fu + (size_t)k * n * m;
    if (s->dyn.jacobians(s->dyn.ctx, s->slot, k, a->thread, x + (size_t)k * nx, u + (size_t)k * m, fx, fu) ||
        !all_finite(fx, n * n) || !all_finite(fu, n * m))
      atomic_store(&a->job->failed, k + 1);
  }
  return NULL;
}

/* fx, fu at every knot of the current rollout (on opt.nthreads threads) and the cost's derivatives. */
static grit_status derivatives(grit_ilqr *s) {
  jac_job job;
  job.s = s;
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  int nt = s->opt.nthreads < s->N ? s->opt.nthreads : s->N;
  pthread_t threads[MAX_THREADS];
  jac_arg args[MAX_THREADS];
  int started = 0;
  for (int t = 1; t < nt; ++t) {
    args[t].job = &job;
    args[t].thread = t;
    if (pthread_create(&threads[t], NULL, jac_worker, &args[t])) break;
    ++started;
  }
  args[0].job = &job;
  args[0].thread = 0;
  jac_worker(&args[0]);
  for (int t = 1; t <= started; ++t) pthread_join(threads[t], NULL);
  const int bad = atomic_load(&job.failed);
  if (bad) return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the dynamics Jacobians failed at knot %d", bad - 1);
  const double *x = s->xs[s->slot], *u = s->us[s->slot];
  double l;
  for (int k = 0; k <= s->N; ++k)
    if (knot_cost(s, k, x + (size_t)k * s->nx, k < s->N ? u + (size_t)k * s->nu : NULL, &l, 1))
      return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the cost or its derivatives failed at knot %d", k);
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------- backward pass */

/* Returns 0, or 1 if Quu + mu I was not positive definite at some knot (then mu must grow). Sets dV,
 * the number of clamped knots, and the feedforward size in *ff. */
static int backward(grit_ilqr *s, double mu, double *ff) {
  const int N = s->N, n = s->ndx, m = s->nu;
  memcpy(s->Vx1, s->lx + (size_t)N * n, sizeof(double) * (size_t)n);
  memcpy(s->Vxx1, s->lxx + (size_t)N * n * n, sizeof(double) * (size_t)(n * n));
  s->dV[0] = s->dV[1] = 0;
  s->clamped = 0;
  double ffsum = 0;
  const double *ubar = s->us[s->slot];
  for (int k = N - 1; k >= 0; --k) {
    const double *uk = ubar + (size_t)k * m;
    if (s->u_min)
      for (int i = 0; i < m; ++i) {
        s->dlo[i] = s->u_min[i] - uk[i];
        s->dhi[i] = s->u_max[i] - uk[i];
      }
    double *kk = s->kff + (size_t)k * m, dv[2];
    int nclamped = 0;
    if (grit_ilqr_riccati_knot(n, m, s->fx + (size_t)k * n * n, s->fu + (size_t)k * n * m, s->lx + (size_t)k * n,
                               s->lu + (size_t)k * m, s->lxx + (size_t)k * n * n, s->luu + (size_t)k * m * m,
                               s->lux + (size_t)k * m * n, s->Vx1, s->Vxx1, mu, s->u_min ? s->dlo : NULL,
                               s->u_min ? s->dhi : NULL, kk, s->K + (size_t)k * m * n, s->Vx, s->Vxx, dv,
                               &nclamped, s->work))
      return 1;
    s->dV[0] += dv[0];
    s->dV[1] += dv[1];
    s->clamped += nclamped > 0;
    double mx = 0;
    for (int i = 0; i < m; ++i) mx = fmax(mx, fabs(kk[i]) / (fabs(uk[i]) + 1));
    ffsum += mx;
    double *t = s->Vx1;
    s->Vx1 = s->Vx;
    s->Vx = t;
    t = s->Vxx1;
    s->Vxx1 = s->Vxx;
    s->Vxx = t;
  }
  *ff = ffsum / N;
  return 0;
}

/* --------------------------------------------------------------------------------------- solve */

/* Runs iLQR iterations on the current (augmented) cost until they converge or stop, at most `budget`
 * of them; r's iteration count and times accumulate, r->stop and r->converged say how this run ended. */
static grit_status iterate(grit_ilqr *s, grit_ilqr_result *r, int budget, int *steps) {
  const grit_ilqr_options *o = &s->opt;
  *steps = 0;
  double mu = o->reg_init, delta = 1;
  r->stop = GRIT_ILQR_MAX_ITERATIONS;
  r->converged = 0;
  for (int run = 1; run <= budget; ++run) {
    grit_ilqr_iteration it;
    memset(&it, 0, sizeof it);
    it.iteration = ++r->iterations;
    it.penalty = s->nc ? s->rho : 0;
    double t0 = now_s();
    grit_status status = derivatives(s);
    if (status != GRIT_OK) return status;
    it.t_derivatives = now_s() - t0;
    r->t_derivatives += it.t_derivatives;

    /* Backward pass; on a non-positive-definite Quu, grow mu (Tassa, Erez and Todorov 2012). */
    t0 = now_s();
    double ff = 0;
    int gave_up = 0;
    while (backward(s, mu, &ff)) {
      delta = fmax(o->reg_factor, delta * o->reg_factor);
      mu = fmax(o->reg_min, mu * delta);
      if (mu > o->reg_max) {
        gave_up = 1;
        break;
      }
    }
    it.t_backward = now_s() - t0;
    r->t_backward += it.t_backward;
    it.regularization = mu;
    it.feedforward = ff;
    it.clamped = s->clamped;
    it.cost = s->J;
    it.violation = s->violation;
    if (gave_up || ff < o->tol_feedforward) {
      r->stop = gave_up ? GRIT_ILQR_NO_PROGRESS : GRIT_ILQR_CONVERGED_FEEDFORWARD;
      r->converged = !gave_up;
      if (o->log) o->log(o->log_ctx, &it);
      return GRIT_OK;
    }

    /* Forward pass: backtracking on alpha, accepted on the ratio of actual to expected reduction. */
    t0 = now_s();
    const int cand = 1 - s->slot;
    double alpha = 1, Jnew = 0, expected = 0;
    int accepted = 0;
    for (int trial = 1; trial <= o->ls_max_trials; ++trial, alpha *= o->ls_decrease) {
      it.line_search_trials = trial;
      if (rollout(s, cand, 1, alpha, &Jnew)) continue;
      expected = -(alpha * s->dV[0] + alpha * alpha * s->dV[1]);
      const double actual = s->J - Jnew;
      if (actual > 0 && (expected <= 0 || actual / expected >= o->ls_accept)) {
        accepted = 1;
        break;
      }
    }
    it.t_rollout = now_s() - t0;
    r->t_rollout += it.t_rollout;
    if (accepted) {
      const double actual = s->J - Jnew;
      it.actual = actual;
      it.expected = expected;
      it.alpha = alpha;
      it.cost = Jnew;
      s->slot = cand;
      s->J = Jnew;
      ++*steps;
      refresh_constraint(s);
      it.violation = s->violation;
      delta = fmin(delta / o->reg_factor, 1 / o->reg_factor);
      mu = mu * delta;
      if (mu < o->reg_min) mu = 0;
      if (o->log) o->log(o->log_ctx, &it);
      if (actual <= o->tol_cost * fabs(Jnew)) {
        r->stop = GRIT_ILQR_CONVERGED_COST;
        r->converged = 1;
        return GRIT_OK;
      }
    } else {
      if (o->log) o->log(o->log_ctx, &it);
      delta = fmax(o->reg_factor, delta * o->reg_factor);
      mu = fmax(o->reg_min, mu * delta);
      if (mu > o->reg_max) {
        r->stop = GRIT_ILQR_NO_PROGRESS;
        return GRIT_OK;
      }
    }
  }
  return GRIT_OK;
}

/* The augmented-Lagrangian update after converged iterations: lambda += rho c; rho grows unless the
 * violation fell below a quarter of the last one (Bertsekas 1982; the schedule of Nocedal and Wright's
 * Algorithm 17.4 reduced to a fixed factor). The cost of the unchanged solution is re-priced. */
static void update_multipliers(grit_ilqr *s, double *last_violation) {
  refresh_constraint(s); /* s->c may hold a rejected candidate's value */
  for (int i = 0; i < s->nc; ++i) s->lambda[i] += s->rho * s->c[i];
  if (s->violation > 0.25 * *last_violation) s->rho = fmin(s->rho * s->opt.penalty_factor, s->opt.penalty_max);
  *last_violation = s->violation;
  const double old_term = s->al_term;
  s->al_term = constraint_term(s); /* same c, new lambda and rho */
  s->J += s->al_term - old_term;
}

grit_status grit_ilqr_solve(grit_ilqr *s, grit_ilqr_result *res) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  grit_ilqr_result r;
  memset(&r, 0, sizeof r);
  s->msg[0] = 0;
  const double t_start = now_s();
  if (!s->have_rollout) {
    /* the current controls, open loop */
    const double t0 = now_s();
    int bad = rollout(s, s->slot, 0, 0, &s->J);
    r.t_rollout += now_s() - t0;
    if (bad) {
      if (res) *res = r;
      return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the rollout of the initial controls failed (dynamics or cost)");
    }
    s->have_rollout = 1;
    refresh_constraint(s);
  }
  r.initial_cost = s->J - s->al_term;
  grit_status status = GRIT_OK;
  double last_violation = INFINITY;
  for (;;) {
    int steps;
    status = iterate(s, &r, s->opt.max_iterations - r.iterations, &steps);
    if (status != GRIT_OK || !s->nc || !r.converged) break;
    if (s->violation <= s->opt.tol_constraint) break;
    if (!steps && s->rho >= s->opt.penalty_max && r.multiplier_updates > 0) {
      /* the largest penalty moves the controls by less than the tolerances resolve: c cannot shrink */
      r.stop = GRIT_ILQR_NO_PROGRESS;
      break;
    }
    if (r.iterations >= s->opt.max_iterations) { /* not converged: c is above its tolerance (below) */
      r.stop = GRIT_ILQR_MAX_ITERATIONS;
      break;
    }
    update_multipliers(s, &last_violation);
    ++r.multiplier_updates;
  }
  if (s->nc && s->violation > s->opt.tol_constraint) r.converged = 0;
  r.cost = s->J - s->al_term;
  r.violation = s->violation;
  r.t_total = now_s() - t_start;
  if (res) *res = r;
  return status;
}
