/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr_solve.c — the iLQR iterations: rollouts, the parallel Jacobian phase, the exact gradient by the
 * adjoint recursion, the backward pass with its regularization schedule, the line search, the
 * termination rules and the augmented-Lagrangian outer loop (grit_ilqr/ilqr.h, docs/ilqr.md). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (ilqr_internal.h) */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "ilqr_internal.h"
#include "riccati.h"

double grit_ilqr_cost(const grit_ilqr *s) { return s ? s->J - s->al_term : NAN; }

/* --------------------------------------------------------------------------------------- rollout */

/* Rolls out into `slot` from x0. With gains, u_k = clamp(ubar_k + alpha kff_k + K_k (x_k (-) xbar_k))
 * around (xbar, ubar); without, the slot's own controls (clamped). Returns 0 with the cost in *J (and
 * the slot's AL part and violations in Jal, Jviol, Jpviol), or 1 if the dynamics or the cost failed or
 * produced a non-finite state. */
static int rollout_around(grit_ilqr *s, int slot, int with_gains, double alpha, const double *xbar,
                          const double *ubar, double *J) {
  const int N = s->N, nx = s->nx, n = s->ndx, m = s->nu;
  double *x = s->xs[slot], *u = s->us[slot];
  memcpy(x, s->x0, sizeof(double) * (size_t)nx);
  double cost = 0, al = 0, pviol = 0, l, a, v;
  for (int k = 0; k < N; ++k) {
    double *xk = x + (size_t)k * nx, *uk = u + (size_t)k * m;
    if (with_gains) {
      if (s->dyn.difference)
        s->dyn.difference(s->dyn.ctx, xbar + (size_t)k * nx, xk, s->e);
      else
        for (int i = 0; i < n; ++i) s->e[i] = xk[i] - xbar[(size_t)k * nx + i];
      const double *Kk = s->K + (size_t)k * m * n, *kk = s->kff + (size_t)k * m;
      for (int i = 0; i < m; ++i) {
        double w = ubar[(size_t)k * m + i] + alpha * kk[i];
        for (int j = 0; j < n; ++j) w += Kk[i * n + j] * s->e[j];
        uk[i] = w;
      }
    }
    grit_ilqr_clamp(s, uk);
    if (s->dyn.step(s->dyn.ctx, slot, k, xk, uk, xk + nx)) return 1;
    if (!grit_ilqr_all_finite(xk + nx, nx)) return 1;
    if (grit_ilqr_knot_cost(s, k, xk, uk, &l, &a, &v, 0)) return 1;
    cost += l;
    al += a;
    pviol = fmax(pviol, v);
  }
  if (grit_ilqr_knot_cost(s, N, x + (size_t)N * nx, NULL, &l, &a, &v, 0)) return 1;
  *J = cost + l;
  s->Jal[slot] = al + a;
  s->Jviol[slot] = v;
  s->Jpviol[slot] = pviol;
  return 0;
}

/* The same around the current solution. */
static int rollout(grit_ilqr *s, int slot, int with_gains, double alpha, double *J) {
  return rollout_around(s, slot, with_gains, alpha, s->xs[s->slot], s->us[s->slot], J);
}

/* Makes `slot` the current solution with cost J. */
static void take(grit_ilqr *s, int slot, double J) {
  s->slot = slot;
  s->J = J;
  s->al_term = s->Jal[slot];
  s->violation = s->Jviol[slot];
  s->path_violation = s->Jpviol[slot];
  s->have_derivs = 0;
}

/* ---------------------------------------------------------------------- Jacobians, on threads */

typedef struct jac_job {
  grit_ilqr *s;
  int slot;         /* the rollout whose Jacobians are taken */
  double *fx, *fu;  /* where they go */
  atomic_int next;
  atomic_int failed;   /* knot + 1 of a failed callback */
  atomic_int infinite; /* knot + 1 of a non-finite Jacobian */
} jac_job;

typedef struct jac_arg {
  jac_job *job;
  int thread;
} jac_arg;

static void *jac_worker(void *p) {
  jac_arg *a = p;
  grit_ilqr *s = a->job->s;
  const int n = s->ndx, m = s->nu, nx = s->nx;
  const int slot = a->job->slot;
  const double *x = s->xs[slot], *u = s->us[slot];
  for (;;) {
    const int k = atomic_fetch_add(&a->job->next, 1);
    if (k >= s->N || atomic_load(&a->job->failed) || atomic_load(&a->job->infinite)) break;
    double *fx = a->job->fx + (size_t)k * n * n, *fu = a->job->fu + (size_t)k * n * m;
    if (s->dyn.jacobians(s->dyn.ctx, slot, k, a->thread, x + (size_t)k * nx, u + (size_t)k * m, fx, fu))
      atomic_store(&a->job->failed, k + 1);
    else if (!grit_ilqr_all_finite(fx, n * n) || !grit_ilqr_all_finite(fu, n * m))
      atomic_store(&a->job->infinite, k + 1);
  }
  return NULL;
}

static grit_status cost_derivatives(grit_ilqr *s);

/* The Jacobians of rollout `slot` at every knot into fxo, fuo, on opt.nthreads threads. A non-finite
 * Jacobian is GRIT_ERR_NOT_FINITE; a failed callback GRIT_ERR_NUMERICAL. */
static grit_status jacobians(grit_ilqr *s, int slot, double *fxo, double *fuo) {
  jac_job job;
  job.s = s;
  job.slot = slot;
  job.fx = fxo;
  job.fu = fuo;
  atomic_init(&job.next, 0);
  atomic_init(&job.failed, 0);
  atomic_init(&job.infinite, 0);
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
  int bad = atomic_load(&job.failed);
  if (bad) return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the dynamics Jacobians failed at knot %d", bad - 1);
  bad = atomic_load(&job.infinite);
  if (bad) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "a dynamics Jacobian is not finite at knot %d", bad - 1);
  return GRIT_OK;
}

/* fx, fu at every knot of the current rollout unless they are still those of this rollout
 * (s->have_derivs: the last step was rejected), and the cost's derivatives (always: the multipliers may
 * have changed). A non-finite Jacobian or cost derivative is GRIT_ERR_NOT_FINITE; a failed callback
 * GRIT_ERR_NUMERICAL. */
static grit_status derivatives(grit_ilqr *s) {
  if (s->have_derivs) return cost_derivatives(s);
  const grit_status st = jacobians(s, s->slot, s->fx, s->fu);
  return st != GRIT_OK ? st : cost_derivatives(s);
}

/* The cost's derivatives at every knot of the current solution. */
static grit_status cost_derivatives(grit_ilqr *s) {
  const double *x = s->xs[s->slot], *u = s->us[s->slot];
  double l, a, v;
  for (int k = 0; k <= s->N; ++k) {
    const int rc = grit_ilqr_knot_cost(s, k, x + (size_t)k * s->nx, k < s->N ? u + (size_t)k * s->nu : NULL, &l, &a, &v, 1);
    if (rc == 2) return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "a cost derivative is not finite at knot %d", k);
    if (rc) return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the cost or its derivatives failed at knot %d", k);
  }
  return GRIT_OK;
}

/* ------------------------------------------------------------------ Jacobians across a kink */

/* A short accepted step (alpha <= kink_alpha) means the line search's trial alpha / ls_decrease raised
 * the cost: a kink of the dynamics (a contact that starts or ends) lies between the new point and that
 * trial, and the new point's Jacobians describe its own side only. Called right after the step is
 * taken: the previous point (still in the other slot) is copied, and the trial is remembered; its
 * Jacobians are computed only if another iteration follows (kink_jacobians). */
static void kink_remember(grit_ilqr *s, double alpha) {
  const int old = 1 - s->slot, N = s->N;
  s->kink_trial = 0;
  if (!(s->opt.kink_alpha > 0) || alpha > s->opt.kink_alpha) return;
  memcpy(s->xbk, s->xs[old], sizeof(double) * (size_t)(N + 1) * (size_t)s->nx);
  memcpy(s->ubk, s->us[old], sizeof(double) * (size_t)N * (size_t)s->nu);
  s->kink_trial = alpha / s->opt.ls_decrease;
}

/* At the start of the iteration after a short step, with the current point's Jacobians in fx, fu: the
 * rejected trial is rolled out again into the free slot (the same gains, still in kff and K, around
 * the previous point) and its Jacobians go into fx2, fu2; fx, fu become the mean of the two sets (a
 * two-sided model of the kink), and fx2, fu2 keep the exact ones for kink_unmix. Returns 1 when the
 * model is mixed. A failed trial rollout or Jacobian leaves the exact model. */
static int kink_jacobians(grit_ilqr *s, grit_ilqr_result *r) {
  const double trial = s->kink_trial;
  s->kink_trial = 0;
  if (!(trial > 0)) return 0;
  const int free_slot = 1 - s->slot;
  double J;
  ++r->rollouts;
  if (rollout_around(s, free_slot, 1, trial, s->xbk, s->ubk, &J)) return 0;
  if (jacobians(s, free_slot, s->fx2, s->fu2) != GRIT_OK) return 0;
  ++r->kink_linearizations;
  const size_t a = (size_t)s->N * s->ndx * s->ndx, b = (size_t)s->N * s->ndx * s->nu;
  for (size_t i = 0; i < a; ++i) {
    const double e = s->fx[i];
    s->fx[i] = 0.5 * (e + s->fx2[i]);
    s->fx2[i] = e;
  }
  for (size_t i = 0; i < b; ++i) {
    const double e = s->fu[i];
    s->fu[i] = 0.5 * (e + s->fu2[i]);
    s->fu2[i] = e;
  }
  s->kink_mixed = 1;
  return 1;
}

/* Back to the current point's exact Jacobians. Returns 1 if the model was mixed. */
static int kink_unmix(grit_ilqr *s) {
  if (!s->kink_mixed) return 0;
  memcpy(s->fx, s->fx2, sizeof(double) * (size_t)s->N * s->ndx * s->ndx);
  memcpy(s->fu, s->fu2, sizeof(double) * (size_t)s->N * s->ndx * s->nu);
  s->kink_mixed = 0;
  return 1;
}

/* ------------------------------------------------------------------------------------ gradient */

/* The exact gradient g_k = dJ/du_k of the (augmented) cost at the current linearization, by the adjoint
 * recursion p_N = l_x(N), g_k = l_u(k) + f_u' p_{k+1}, p_k = l_x(k) + f_x' p_{k+1}; no regularization
 * enters it. A component at a control bound that pushes outward is projected out. Returns the measure
 * sum_k max_i |g_ki| (|u_ki| + 1) / |J| (NaN if anything is not finite); *gmax gets max |g| before the
 * projection and *pmax max |p_k| over k >= 1 (the cost's sensitivity to the states the controls move: p_0,
 * that of the fixed x_0, says nothing about them, and counting it called a cost that weighs only x_0, at its
 * optimum, "no gradient"). */
static double gradient(grit_ilqr *s, double *gmax, double *pmax, double *gdyn) {
  const int N = s->N, n = s->ndx, m = s->nu;
  const double *ubar = s->us[s->slot];
  double *p = s->Vx1, *pn = s->Vx; /* free before the backward pass */
  memcpy(p, s->lx + (size_t)N * n, sizeof(double) * (size_t)n);
  double sum = 0, gm = 0, pm = 0, dsum = 0;
  for (int k = N - 1; k >= 0; --k) {
    for (int i = 0; i < n; ++i) pm = fmax(pm, fabs(p[i])); /* p = p_{k+1} */
    const double *fx = s->fx + (size_t)k * n * n, *fu = s->fu + (size_t)k * n * m, *uk = ubar + (size_t)k * m;
    double worst = 0, dworst = 0;
    for (int i = 0; i < m; ++i) {
      double gd = 0; /* the dynamics' part f_u' p */
      for (int j = 0; j < n; ++j) gd += fu[j * m + i] * p[j];
      const double g0 = s->lu[(size_t)k * m + i] + gd;
      if (!isfinite(g0)) return NAN;
      double g = g0;
      dworst = fmax(dworst, fabs(gd) * (fabs(uk[i]) + 1));
      gm = fmax(gm, fabs(g));
      if (s->u_min && ((uk[i] <= s->u_min[i] && g > 0) || (uk[i] >= s->u_max[i] && g < 0))) g = 0;
      worst = fmax(worst, fabs(g) * (fabs(uk[i]) + 1));
    }
    sum += worst;
    dsum += dworst;
    for (int i = 0; i < n; ++i) {
      double v = s->lx[(size_t)k * n + i];
      for (int j = 0; j < n; ++j) v += fx[j * n + i] * p[j];
      pn[i] = v;
    }
    double *t = p;
    p = pn;
    pn = t;
  }
  *gmax = gm;
  *pmax = pm;
  *gdyn = dsum / fmax(fabs(s->J), 1e-300);
  if (!isfinite(pm)) return NAN;
  return sum / fmax(fabs(s->J), 1e-300);
}

/* ------------------------------------------------------------------------------- backward pass */

/* Returns 0, or 1 if Quu + mu I was not positive definite at some knot (then mu must grow). Sets dV,
 * the number of clamped knots, and the feedforward size in *ff (NaN if a step is not finite: a NaN is
 * never dropped by a max). */
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
    const double *Quu = GRIT_ILQR_RICCATI_QUU(s->work, n, m);
    double tr = 0;
    for (int i = 0; i < m; ++i) tr += Quu[i * m + i];
    s->quu_min = k == N - 1 ? tr / m : fmin(s->quu_min, tr / m);
    double mx = 0;
    for (int i = 0; i < m; ++i) {
      const double v = fabs(kk[i]) / (fabs(uk[i]) + 1);
      if (!(v <= mx)) mx = v; /* keeps a NaN */
    }
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

/* ----------------------------------------------------------------------- regularization schedule */

/* Tassa, Erez and Todorov 2012: mu grows by an accelerating factor delta after a failure, and never
 * falls below reg_min (it does not restart from zero, which cost the arm 6-10 rejected iterations per
 * climb back). */
static void reg_increase(grit_ilqr *s) {
  const grit_ilqr_options *o = &s->opt;
  s->delta = fmax(o->reg_factor, s->delta * o->reg_factor);
  s->mu = fmax(o->reg_min, s->mu * s->delta);
  if (s->mu == 0) s->mu = o->reg_init > 0 ? o->reg_init : 1e-6;
}

/* After an accepted step: mu falls by the decreasing factor delta, down to reg_min (kept from one
 * iteration, run and solve to the next). */
static void reg_decrease(grit_ilqr *s) {
  const grit_ilqr_options *o = &s->opt;
  s->delta = fmin(s->delta / o->reg_factor, 1 / o->reg_factor);
  s->mu = fmax(o->reg_min, s->mu * s->delta);
}

/* --------------------------------------------------------------------------------------- solve */

/* The gradient measure below which the controls are numerically without effect (docs/ilqr.md,
 * "Termination"): a millionth of the cost over the whole horizon. */
#define FLAT 1e-6

/* Short steps (options.stall_short_steps): the line search cut the model's step by 16 or more (log2). */
#define SHORT_LOG_ALPHA (-4.0)

typedef struct run_state {
  grit_ilqr_result *r;
  double t_start;
  int steps;       /* accepted steps in this run */
  double log_alpha; /* log2 of the accepted alphas, averaged with weight 1 / options.stall_short_steps */
} run_state;

static int out_of_time(const grit_ilqr *s, const run_state *rs) {
  return s->opt.max_time > 0 && grit_ilqr_now() - rs->t_start >= s->opt.max_time;
}

/* options.stall_short_steps = W: after the run's accepted step alpha, is the exponentially weighted mean
 * of log2 alpha (weight 1/W, a geometric mean over about the last W steps) at most log2(1/16), after at
 * least W steps? A mean, not a count of short steps in a row: near contact events the steps alternate
 * between about 1/8 and 1/256. With a constraint unmet at its penalty_max it never ends the run, as the
 * cap does not: lambda += rho c after an inexact run at the largest penalty throws the multipliers far. */
static int short_steps(const grit_ilqr *s, run_state *rs, double alpha) {
  const grit_ilqr_options *o = &s->opt;
  const double w = 1.0 / o->stall_short_steps;
  rs->log_alpha = rs->steps == 1 ? log2(alpha) : (1 - w) * rs->log_alpha + w * log2(alpha);
  const int at_max = (s->violation > o->tol_constraint && s->rho >= o->penalty_max) ||
                     (s->path_violation > o->tol_constraint && s->rho_path >= o->penalty_max);
  return rs->steps >= o->stall_short_steps && rs->log_alpha <= SHORT_LOG_ALPHA && !at_max;
}

/* Ends the run with `stop`; logs the iteration. Returns GRIT_OK. */
static grit_status finish(grit_ilqr *s, run_state *rs, grit_ilqr_iteration *it, grit_ilqr_stop stop, int converged) {
  rs->r->stop = stop;
  rs->r->converged = converged;
  if (it && s->opt.log) s->opt.log(s->opt.log_ctx, it);
  return GRIT_OK;
}

/* The line search on alpha = 1, ls_decrease, ...: accepted on the ratio of actual to expected reduction,
 * never on an increase. Returns 1 with the accepted candidate's alpha, cost and expected reduction, or 0. */
static int line_search(grit_ilqr *s, run_state *rs, grit_ilqr_iteration *it, double *alpha_out, double *Jnew,
                       double *expected) {
  const grit_ilqr_options *o = &s->opt;
  const int cand = 1 - s->slot;
  double alpha = 1;
  for (int trial = 1; trial <= o->ls_max_trials; ++trial, alpha *= o->ls_decrease) {
    if (trial > 1 && out_of_time(s, rs)) break;
    ++it->line_search_trials;
    ++it->rollouts;
    ++rs->r->rollouts;
    if (rollout(s, cand, 1, alpha, Jnew)) continue;
    *expected = -(alpha * s->dV[0] + alpha * alpha * s->dV[1]);
    const double actual = s->J - *Jnew;
    if (actual > 0 && (*expected <= 0 || actual / *expected >= o->ls_accept)) {
      *alpha_out = alpha;
      return 1;
    }
  }
  return 0;
}

/* The backward pass at the current mu, raising mu until Quu + mu I is positive definite. Returns 0, or
 * 1 when mu passed reg_max. */
static int backward_regularized(grit_ilqr *s, grit_ilqr_iteration *it, double *ff) {
  for (;;) {
    ++it->backward_passes;
    if (!backward(s, s->mu, ff)) return 0;
    reg_increase(s);
    if (s->mu > s->opt.reg_max) return 1;
  }
}

typedef enum step_outcome { STEP_ACCEPTED, STEP_CONVERGED, STEP_REG_LIMIT, STEP_TIME, STEP_NOT_FINITE } step_outcome;

/* One iteration's search for a step on the current linearization: the backward pass, then the line
 * search; when the line search rejects every trial, mu grows and only the backward pass and the line
 * search run again (the Jacobians stay: the linearization point did not move). Ends with an accepted
 * step, or converged (feedforward and first-order optimality small), or mu beyond reg_max, or the time
 * budget, or a non-finite step. *first_order says whether the model's predictions measure optimality. */
static step_outcome find_step(grit_ilqr *s, run_state *rs, grit_ilqr_iteration *it, double G, double *alpha,
                              double *Jnew, double *expected, int *first_order) {
  const grit_ilqr_options *o = &s->opt;
  grit_ilqr_result *r = rs->r;
  const double tol_grad = o->tol_gradient > 0 ? o->tol_gradient : 1e-2;
  const double mu_start = s->mu, delta_start = s->delta;
  for (;;) {
    double t0 = grit_ilqr_now(), ff = 0;
    int gave_up = backward_regularized(s, it, &ff);
    const double tb = grit_ilqr_now() - t0;
    it->t_backward += tb;
    r->t_backward += tb;
    it->regularization = s->mu;
    it->feedforward = ff;
    it->clamped = s->clamped;
    if (gave_up && kink_unmix(s)) { /* the mean model across a kink found no step: back to the exact one */
      it->kink = 2;
      s->mu = mu_start;
      s->delta = delta_start;
      continue;
    }
    if (gave_up) return STEP_REG_LIMIT;
    if (!isfinite(ff) || !isfinite(s->dV[0]) || !isfinite(s->dV[1])) return STEP_NOT_FINITE;
    /* The reductions the model predicts measure optimality only if mu hardly changed the model: mu at
     * most 1e-3 of Q_uu's smallest mean diagonal. Under heavier regularization a small step says only
     * that mu is large, and the gradient itself must be small. */
    *first_order = s->mu <= 1e-3 * s->quu_min || G <= tol_grad;
    if (ff < o->tol_feedforward && *first_order) {
      if (!kink_unmix(s)) return STEP_CONVERGED;
      it->kink = 2; /* convergence is judged on the exact Jacobians */
      continue;
    }
    t0 = grit_ilqr_now();
    const int accepted = line_search(s, rs, it, alpha, Jnew, expected);
    const double tr = grit_ilqr_now() - t0;
    it->t_rollout += tr;
    r->t_rollout += tr;
    if (accepted) return STEP_ACCEPTED;
    ++it->rejected;
    ++r->rejected_line_searches;
    reg_increase(s);
    if (out_of_time(s, rs)) return STEP_TIME;
    if (s->mu > o->reg_max && kink_unmix(s)) {
      it->kink = 2;
      s->mu = mu_start;
      s->delta = delta_start;
      continue;
    }
    if (s->mu > o->reg_max) return STEP_REG_LIMIT;
  }
}

/* Runs iLQR iterations on the current (augmented) cost until they stop, at most `budget` of them;
 * r's counts and times accumulate, r->stop and r->converged say how this run ended (docs/ilqr.md,
 * "Termination"). */
static grit_status iterate(grit_ilqr *s, run_state *rs, int budget) {
  const grit_ilqr_options *o = &s->opt;
  grit_ilqr_result *r = rs->r;
  const double alpha_conv = o->alpha_converged > 0 ? o->alpha_converged : 0.5;
  const double tol_grad = o->tol_gradient > 0 ? o->tol_gradient : 1e-2;
  rs->steps = 0;
  rs->log_alpha = 0;
  r->stop = GRIT_ILQR_MAX_ITERATIONS;
  r->converged = 0;
  for (int run = 1; run <= budget; ++run) {
    if (s->stop_requested) return finish(s, rs, NULL, GRIT_ILQR_USER_STOP, 0);
    if (out_of_time(s, rs)) return finish(s, rs, NULL, GRIT_ILQR_TIME_LIMIT, 0);
    grit_ilqr_iteration it;
    memset(&it, 0, sizeof it);
    it.iteration = ++r->iterations;
    it.penalty = s->nc ? s->rho : 0;
    it.cost = s->J;
    it.violation = s->violation;
    it.path_violation = s->path_violation;
    double t0 = grit_ilqr_now();
    it.derivatives_reused = s->have_derivs; /* the last step was rejected: same linearization point */
    grit_status status = derivatives(s);
    if (status != GRIT_OK) {
      if (status == GRIT_ERR_NOT_FINITE) finish(s, rs, NULL, GRIT_ILQR_NOT_FINITE, 0);
      return status;
    }
    int fresh = !s->have_derivs;
    if (fresh) ++r->derivative_evaluations;
    s->have_derivs = 1;
    double gmax = 0, pmax = 0, gdyn = 0;
    const double G = gradient(s, &gmax, &pmax, &gdyn);
    it.gradient = r->gradient = G;
    /* the gradient measure (termination) is the exact one; the model may average across a kink */
    if (fresh && isfinite(G) && gmax != 0 && kink_jacobians(s, r)) it.kink = 1;
    s->kink_trial = 0;
    it.t_derivatives = grit_ilqr_now() - t0;
    r->t_derivatives += it.t_derivatives;
    if (!isfinite(G)) {
      ++r->no_step_iterations;
      finish(s, rs, &it, GRIT_ILQR_NOT_FINITE, 0);
      return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "the cost's gradient is not finite");
    }
    if (gmax == 0) { /* exactly flat in every control: a minimum only if the states do not matter either */
      ++r->no_step_iterations;
      return finish(s, rs, &it, pmax > 0 ? GRIT_ILQR_ZERO_GRADIENT : GRIT_ILQR_CONVERGED_FEEDFORWARD, pmax == 0);
    }
    if (G <= FLAT && gdyn <= FLAT && pmax >= 1e-3 * fabs(s->J)) {
      /* numerically flat: the cost depends on the states, but the controls reach them only through
       * round-off or a contact's compliance. The dynamics' part f_u' p of the gradient is itself ~0, so
       * this is not an optimum where the control cost balances it: a plateau, e.g. a box resting on its
       * support below the friction that would lift it (docs/ilqr.md). */
      ++r->no_step_iterations;
      return finish(s, rs, &it, GRIT_ILQR_ZERO_GRADIENT, 0);
    }

    double alpha = 0, Jnew = 0, expected = 0;
    int first_order = 0;
    const step_outcome out = find_step(s, rs, &it, G, &alpha, &Jnew, &expected, &first_order);
    if (out != STEP_ACCEPTED) {
      kink_unmix(s); /* the next run starts from the exact Jacobians of this point */
      ++r->no_step_iterations;
      switch (out) {
      case STEP_CONVERGED: return finish(s, rs, &it, GRIT_ILQR_CONVERGED_FEEDFORWARD, 1);
      case STEP_REG_LIMIT: return finish(s, rs, &it, GRIT_ILQR_REGULARIZATION_LIMIT, 0);
      case STEP_TIME: return finish(s, rs, &it, GRIT_ILQR_TIME_LIMIT, 0);
      default:
        finish(s, rs, &it, GRIT_ILQR_NOT_FINITE, 0);
        return grit_ilqr_fail(s->msg, GRIT_ERR_NOT_FINITE, "the backward pass produced a non-finite step");
      }
    }
    const double Jold = s->J, actual = Jold - Jnew;
    take(s, 1 - s->slot, Jnew);
    s->kink_mixed = 0;
    kink_remember(s, alpha);
    ++rs->steps;
    it.actual = actual;
    it.expected = expected;
    it.alpha = alpha;
    it.cost = Jnew;
    it.violation = s->violation;
    it.path_violation = s->path_violation;
    reg_decrease(s);
    const double small = o->tol_cost * fabs(Jnew);
    if (actual <= small) {
      /* a full or near-full step, or one the model itself says cannot gain: even the full step's
       * expected reduction is below the tolerance (round-off then decides the line search) */
      const double expected_full = -(s->dV[0] + s->dV[1]);
      const int conv = expected <= small && (((alpha >= alpha_conv || expected_full <= small) && first_order) || G <= tol_grad);
      return finish(s, rs, &it, conv ? GRIT_ILQR_CONVERGED_COST : GRIT_ILQR_LINE_SEARCH_STALLED, conv);
    }
    if (o->stall_short_steps > 0 && short_steps(s, rs, alpha))
      /* the steps have been short for a while: the model's step crosses contact events it does not see
       * and the iterations creep along kinks. Stalled, not converged; with a constraint unmet this ends
       * only the inner run (docs/ilqr.md, "The arm pushing a ball", stop 15) */
      return finish(s, rs, &it, GRIT_ILQR_LINE_SEARCH_STALLED, 0);
    if (o->log) o->log(o->log_ctx, &it);
  }
  return GRIT_OK;
}

grit_status grit_ilqr_solve(grit_ilqr *s, grit_ilqr_result *res) {
  if (!s) return GRIT_ERR_INVALID_ARGUMENT;
  grit_ilqr_result r;
  memset(&r, 0, sizeof r);
  s->msg[0] = 0;
  s->stop_requested = 0;
  run_state rs = {&r, grit_ilqr_now(), 0, 0};
  s->kink_trial = 0; /* a kink remembered from an earlier solve belongs to other controls or states */
  kink_unmix(s);
  if (!s->have_rollout) {
    /* the current controls, open loop */
    const double t0 = grit_ilqr_now();
    double J = 0;
    ++r.rollouts;
    int bad = rollout(s, s->slot, 0, 0, &J);
    r.t_rollout += grit_ilqr_now() - t0;
    if (bad) {
      r.t_total = grit_ilqr_now() - rs.t_start;
      if (res) *res = r;
      return grit_ilqr_fail(s->msg, GRIT_ERR_NUMERICAL, "the rollout of the initial controls failed (dynamics or cost)");
    }
    take(s, s->slot, J);
    s->have_rollout = 1;
  }
  r.initial_cost = s->J - s->al_term;
  grit_status status = GRIT_OK;
  double last_violation = INFINITY, last_path = INFINITY;
  const double tol = s->opt.tol_constraint;
  for (;;) {
    /* Inexact augmented Lagrangian (as in ALTRO): while c is unmet, a run need not minimize the
     * augmented cost to the end before the multipliers move; on the arm a run at one penalty otherwise
     * spends ~50 iterations on short steps near contact kinks (docs/ilqr.md, stop 13). */
    const int left = s->opt.max_iterations - r.iterations, cap = s->opt.inner_max_iterations;
    const int capped = cap > 0 && cap < left && s->nc && s->violation > tol && s->rho < s->opt.penalty_max;
    status = iterate(s, &rs, capped ? cap : left);
    /* A run that converged or stalled ends an augmented-Lagrangian inner loop; every other stop ends
     * the solve. */
    int inner_done = r.stop == GRIT_ILQR_CONVERGED_COST || r.stop == GRIT_ILQR_CONVERGED_FEEDFORWARD ||
                     r.stop == GRIT_ILQR_LINE_SEARCH_STALLED;
    if (status == GRIT_OK && capped && r.stop == GRIT_ILQR_MAX_ITERATIONS) {
      if (s->violation <= tol && s->path_violation <= tol) continue; /* met within the cap: finish uncapped */
      inner_done = 1; /* the cap: update the multipliers as after a stall */
    }
    if (status == GRIT_OK && r.stop == GRIT_ILQR_REGULARIZATION_LIMIT && s->opt.reg_limit_ends_inner && s->nc &&
        s->violation > tol && rs.steps) {
      /* no step at these multipliers, e.g. on a kink; moving them changes the cost the steps descend, and
       * the schedule restarts (docs/ilqr.md, stop 14). A run without any step ends the solve as before. */
      inner_done = 1;
      s->mu = s->opt.reg_init;
      s->delta = 1;
    }
    if (status != GRIT_OK || (!s->nc && !s->np) || !inner_done) break;
    if (s->violation <= tol && s->path_violation <= tol) break;
    if (!rs.steps && s->rho >= s->opt.penalty_max && r.multiplier_updates > 0) {
      /* the largest penalty moves the controls by less than the tolerances resolve: c cannot shrink */
      r.stop = GRIT_ILQR_NO_PROGRESS;
      r.converged = 0;
      break;
    }
    if (r.iterations >= s->opt.max_iterations) { /* not converged: a constraint is above its tolerance */
      r.stop = GRIT_ILQR_MAX_ITERATIONS;
      r.converged = 0;
      break;
    }
    grit_ilqr_update_multipliers(s, &last_violation, &last_path);
    if (s->opt.reg_reset_on_update && s->mu > s->opt.reg_init) {
      /* the cost the steps descend changed: the regularization that the last run climbed to (rejected
       * line searches at one penalty) says nothing about the new one (docs/ilqr.md, stop 15) */
      s->mu = s->opt.reg_init;
      s->delta = 1;
    }
    ++r.multiplier_updates;
  }
  if (s->violation > tol || s->path_violation > tol) r.converged = 0;
  r.cost = s->J - s->al_term;
  r.violation = s->violation;
  r.path_violation = s->path_violation;
  r.t_total = grit_ilqr_now() - rs.t_start;
  if (res) *res = r;
  return status;
}
