/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr_cost.c — the iLQR cost of one knot: the quadratic part, the user's term, and the
 * augmented-Lagrangian terms of the final equality constraint and of the path inequalities, with
 * their derivatives; the multiplier updates (docs/ilqr.md). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (ilqr_internal.h) */
#include <string.h>

#include "ilqr_internal.h"

void grit_ilqr_state_error(grit_ilqr *s, const double *x, double *e) {
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

/* h = Cx e + Cu u - d into s->h at knot k (e: the state error, unused without Cx); returns max max(h, 0). */
static double path_value(grit_ilqr *s, const double *e, const double *u) {
  const int n = s->ndx, m = s->nu;
  double worst = 0;
  for (int i = 0; i < s->np; ++i) {
    double v = -s->dp[i];
    if (s->Cpx)
      for (int j = 0; j < n; ++j) v += s->Cpx[i * n + j] * e[j];
    if (s->Cpu)
      for (int j = 0; j < m; ++j) v += s->Cpu[i * m + j] * u[j];
    s->h[i] = v;
    worst = fmax(worst, v);
  }
  return worst;
}

/* The inequality's augmented-Lagrangian term (Rockafellar's): sum_i (max(0, mu_i + rho h_i)^2 - mu_i^2) / (2 rho).
 * Its gradient in h is max(0, mu_i + rho h_i), its (generalized) Hessian rho where that is positive. */
static double path_term(const grit_ilqr *s, const double *mu) {
  double t = 0;
  for (int i = 0; i < s->np; ++i) {
    const double a = fmax(0, mu[i] + s->rho_path * s->h[i]);
    t += (a * a - mu[i] * mu[i]) / (2 * s->rho_path);
  }
  return t;
}

/* The path term's derivatives added to the knot's lx, lu, lxx, luu, lux. */
static void path_derivatives(const grit_ilqr *s, const double *mu, double *lx, double *lu, double *lxx, double *luu,
                             double *lux) {
  const int n = s->ndx, m = s->nu;
  const double rho = s->rho_path;
  for (int i = 0; i < s->np; ++i) {
    const double g = mu[i] + rho * s->h[i];
    if (g <= 0) continue; /* inactive: the term is flat */
    const double *cx = s->Cpx ? s->Cpx + (size_t)i * n : NULL, *cu = s->Cpu ? s->Cpu + (size_t)i * m : NULL;
    if (cx)
      for (int a = 0; a < n; ++a) {
        if (cx[a] == 0) continue;
        lx[a] += cx[a] * g;
        for (int b = 0; b < n; ++b) lxx[a * n + b] += rho * cx[a] * cx[b];
      }
    if (cu)
      for (int a = 0; a < m; ++a) {
        if (cu[a] == 0) continue;
        lu[a] += cu[a] * g;
        for (int b = 0; b < m; ++b) luu[a * m + b] += rho * cu[a] * cu[b];
        if (cx)
          for (int b = 0; b < n; ++b) lux[a * n + b] += rho * cu[a] * cx[b];
      }
  }
}

/* lambda' c + rho/2 |c|^2 with c = C e: gradient C' (lambda + rho c), Hessian rho C' C. */
static void final_derivatives(const grit_ilqr *s, double *lx, double *lxx) {
  const int n = s->ndx;
  for (int i = 0; i < s->nc; ++i) {
    const double *Ci = s->C + (size_t)i * n, g = s->lambda[i] + s->rho * s->c[i];
    for (int a = 0; a < n; ++a) {
      if (Ci[a] == 0) continue;
      lx[a] += Ci[a] * g;
      for (int b = 0; b < n; ++b) lxx[a * n + b] += s->rho * Ci[a] * Ci[b];
    }
  }
}

/* The quadratic terms of the cost (and their derivatives if lx != NULL); s->e holds the state error. */
static double quadratic_terms(grit_ilqr *s, int final, const double *u, double *lx, double *lu, double *lxx,
                              double *luu) {
  const int n = s->ndx, m = s->nu;
  const double *W = final ? s->Qf : s->Q;
  double c = 0;
  if (W) {
    for (int i = 0; i < n; ++i) {
      double we = 0;
      for (int j = 0; j < n; ++j) we += W[i * n + j] * s->e[j];
      c += 0.5 * s->e[i] * we;
      if (lx) lx[i] += we;
    }
    if (lx)
      for (int i = 0; i < n * n; ++i) lxx[i] += W[i];
  }
  if (!final && s->R) {
    for (int i = 0; i < m; ++i) s->du[i] = u[i] - (s->u_ref ? s->u_ref[i] : 0);
    for (int i = 0; i < m; ++i) {
      double rd = 0;
      for (int j = 0; j < m; ++j) rd += s->R[i * m + j] * s->du[j];
      c += 0.5 * s->du[i] * rd;
      if (lx) lu[i] += rd;
    }
    if (lx)
      for (int i = 0; i < m * m; ++i) luu[i] += s->R[i];
  }
  return c;
}

/* The user's cost term at knot k, added (with its derivatives if derivs). Returns 0, or 1 on failure. */
static int user_term(grit_ilqr *s, int k, const double *x, const double *u, int derivs, double *c, double *lx,
                     double *lu, double *lxx, double *luu, double *lux) {
  const int n = s->ndx, m = s->nu, final = (k == s->N);
  double lc = 0, *cx = s->cb, *cu = cx + n, *cxx = cu + m, *cuu = cxx + n * n, *cux = cuu + m * m;
  if (derivs) memset(s->cb, 0, sizeof(double) * (size_t)(n + m + n * n + m * m + m * n));
  if (s->cost(s->cost_ctx, k, x, final ? NULL : u, &lc, derivs ? cx : NULL, derivs && !final ? cu : NULL,
              derivs ? cxx : NULL, derivs && !final ? cuu : NULL, derivs && !final ? cux : NULL))
    return 1;
  *c += lc;
  if (derivs) {
    for (int i = 0; i < n; ++i) lx[i] += cx[i];
    for (int i = 0; i < n * n; ++i) lxx[i] += cxx[i];
    if (!final) {
      for (int i = 0; i < m; ++i) lu[i] += cu[i];
      for (int i = 0; i < m * m; ++i) luu[i] += cuu[i];
      for (int i = 0; i < m * n; ++i) lux[i] += cux[i];
    }
  }
  return 0;
}

int grit_ilqr_knot_cost(grit_ilqr *s, int k, const double *x, const double *u, double *l, double *al, double *viol,
                        int derivs) {
  const int n = s->ndx, m = s->nu, final = (k == s->N);
  double *lx = s->lx + (size_t)k * n, *lxx = s->lxx + (size_t)k * n * n;
  double *lu = final ? NULL : s->lu + (size_t)k * m, *luu = final ? NULL : s->luu + (size_t)k * m * m;
  double *lux = final ? NULL : s->lux + (size_t)k * m * n;
  double c = 0, a = 0;
  *viol = 0;
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
  const int path = !final && s->np;
  if ((final ? s->Qf : s->Q) || (final && s->nc) || (path && s->Cpx)) grit_ilqr_state_error(s, x, s->e);
  if (final && s->nc) {
    *viol = constraint_value(s, s->e);
    a += constraint_term(s);
    if (derivs) final_derivatives(s, lx, lxx);
  }
  if (path) {
    const double *mu = s->mu_path + (size_t)k * s->np;
    *viol = path_value(s, s->e, u);
    a += path_term(s, mu);
    if (derivs) path_derivatives(s, mu, lx, lu, lxx, luu, lux);
  }
  c += quadratic_terms(s, final, u, derivs ? lx : NULL, lu, lxx, luu);
  if (s->cost && user_term(s, k, x, u, derivs, &c, lx, lu, lxx, luu, lux)) return 1;
  *l = c + a;
  *al = a;
  if (!isfinite(*l)) return 1;
  if (derivs && (!grit_ilqr_all_finite(lx, n) || !grit_ilqr_all_finite(lxx, n * n) ||
                 (!final && (!grit_ilqr_all_finite(lu, m) || !grit_ilqr_all_finite(luu, m * m) ||
                             !grit_ilqr_all_finite(lux, m * n)))))
    return 2;
  return 0;
}

double grit_ilqr_al_terms(grit_ilqr *s) {
  const double *x = s->xs[s->slot], *u = s->us[s->slot];
  double t = 0;
  if (s->nc) {
    grit_ilqr_state_error(s, x + (size_t)s->N * s->nx, s->e);
    constraint_value(s, s->e);
    t += constraint_term(s);
  }
  for (int k = 0; s->np && k < s->N; ++k) {
    if (s->Cpx) grit_ilqr_state_error(s, x + (size_t)k * s->nx, s->e);
    path_value(s, s->e, u + (size_t)k * s->nu);
    t += path_term(s, s->mu_path + (size_t)k * s->np);
  }
  return t;
}

/* lambda += rho c and mu = max(0, mu + rho h); each penalty grows unless its violation fell below a
 * quarter of the last one (Bertsekas 1982; Nocedal and Wright's Algorithm 17.4 with a fixed factor).
 * The cost of the unchanged solution is re-priced. */
void grit_ilqr_update_multipliers(grit_ilqr *s, double *last_violation, double *last_path_violation) {
  const double *x = s->xs[s->slot], *u = s->us[s->slot];
  const grit_ilqr_options *o = &s->opt;
  if (s->nc) {
    grit_ilqr_state_error(s, x + (size_t)s->N * s->nx, s->e);
    const double v = constraint_value(s, s->e);
    for (int i = 0; i < s->nc; ++i) s->lambda[i] += s->rho * s->c[i];
    if (v > 0.25 * *last_violation) s->rho = fmin(s->rho * o->penalty_factor, o->penalty_max);
    *last_violation = v;
  }
  if (s->np) {
    double worst = 0;
    for (int k = 0; k < s->N; ++k) {
      if (s->Cpx) grit_ilqr_state_error(s, x + (size_t)k * s->nx, s->e);
      worst = fmax(worst, path_value(s, s->e, u + (size_t)k * s->nu));
      double *mu = s->mu_path + (size_t)k * s->np;
      for (int i = 0; i < s->np; ++i) mu[i] = fmax(0, mu[i] + s->rho_path * s->h[i]);
    }
    if (worst > 0.25 * *last_path_violation) s->rho_path = fmin(s->rho_path * o->penalty_factor, o->penalty_max);
    *last_path_violation = worst;
  }
  const double old = s->al_term;
  s->al_term = grit_ilqr_al_terms(s); /* same states and controls, new multipliers and penalties */
  s->J += s->al_term - old;
}
