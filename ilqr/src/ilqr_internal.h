/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr_internal.h — the iLQR solver's state, shared by its three files: ilqr.c (creation, options,
 * setters), ilqr_cost.c (the cost with its augmented-Lagrangian constraint terms) and ilqr_solve.c
 * (rollouts, Jacobians, gradient, backward pass, iterations and termination). */
#ifndef GRIT_ILQR_INTERNAL_H
#define GRIT_ILQR_INTERNAL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <math.h>
#include <time.h>

#include "grit_ilqr/ilqr.h"
#include "message.h"

#define MAX_THREADS 64

struct grit_ilqr {
  grit_ilqr_dynamics dyn;
  int N, nx, ndx, nu;
  double *x0, *x_goal, *Q, *Qf, *R, *u_ref, *u_min, *u_max; /* NULL where absent */
  int nc;            /* rows of the final constraint c = C (x_N (-) x_goal) = 0 (0: none) */
  double *C, *lambda, *c; /* nc x ndx, its multipliers, and scratch for c */
  double rho;        /* its penalty */
  double violation, al_term; /* max|c| (final) and every augmented-Lagrangian term at the solution */
  /* path inequalities h_k = Cx (x_k (-) x_goal) + Cu u_k - d <= 0, k < N (np rows; 0: none) */
  int np;
  double *Cpx, *Cpu, *dp; /* np x ndx (NULL: none), np x nu (NULL: none), np */
  double *mu_path;   /* N x np multipliers (>= 0) */
  double *h;         /* np scratch */
  double rho_path;   /* their penalty */
  double path_violation; /* max max(h, 0) at the solution */
  grit_ilqr_cost_fn cost;
  void *cost_ctx;
  grit_ilqr_options opt;

  int slot;          /* the rollout slot holding the current solution */
  int have_rollout;  /* xs[slot] is the rollout of us[slot] from x0 */
  int have_derivs;   /* fx, fu and the cost derivatives belong to the current solution */
  double J;          /* its cost, with the constraints' augmented-Lagrangian terms */
  double Jal[2], Jviol[2], Jpviol[2]; /* per slot: AL part of the cost, final and path violations */
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
  double quu_min;    /* min over knots of the mean diagonal of the unregularized Q_uu (last pass) */
  double mu, delta;  /* the regularization schedule's state, kept between runs and solves */
  /* Jacobians across a kink (options.kink_alpha; docs/ilqr.md) */
  double *fx2, *fu2; /* the rejected trial's Jacobians; while mixed, the current point's exact ones */
  double *xbk, *ubk; /* the previous linearization point, around which that trial is rolled out again */
  double kink_trial; /* > 0: the last step was short, its rejected trial's alpha (gains still in kff, K) */
  int kink_mixed;    /* fx, fu hold the mean; fx2, fu2 the exact Jacobians of the current point */
  int stop_requested;
  char msg[GRIT_MESSAGE_SIZE];
};

static inline double grit_ilqr_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int grit_ilqr_all_finite(const double *a, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(a[i])) return 0;
  return 1;
}

static inline void grit_ilqr_clamp(const grit_ilqr *s, double *u) {
  if (!s->u_min) return;
  for (int i = 0; i < s->nu; ++i) u[i] = fmin(fmax(u[i], s->u_min[i]), s->u_max[i]);
}

/* ilqr_cost.c */
/* e = x (-) x_goal (ndx numbers). */
void grit_ilqr_state_error(grit_ilqr *s, const double *x, double *e);
/* The cost of knot k (u NULL at k == N) with its augmented-Lagrangian terms, the AL part alone in *al
 * and the knot's constraint violation (max |c| at N, max max(h, 0) before) in *viol; if derivs, its
 * derivatives into the knot's arrays. Returns 0, 1 if the cost callback failed or gave a non-finite
 * value, 2 if a derivative is not finite. */
int grit_ilqr_knot_cost(grit_ilqr *s, int k, const double *x, const double *u, double *l, double *al, double *viol,
                        int derivs);
/* The AL terms of the current solution, recomputed (after a multiplier update), without the dynamics. */
double grit_ilqr_al_terms(grit_ilqr *s);
/* The multiplier updates after a converged or stalled run (docs/ilqr.md). */
void grit_ilqr_update_multipliers(grit_ilqr *s, double *last_violation, double *last_path_violation);

#endif
