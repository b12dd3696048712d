/* SPDX-License-Identifier: Apache-2.0 */
/* solver_linesearch.c — the Newton solver's exact line search (solver.c runs the iterations): along the
 * Newton direction, island by island, the minimizer of the convex l(v + a dv) by a safeguarded Newton
 * iteration on its slope, with each constraint's slope and curvature along the line (lagged_directional
 * in closed form for the plain Lagged contacts); then v, e = v - v*, A e and the constraint velocities
 * moved by the step found. */
#include <float.h>
#include <math.h>

#include "dynamics.h"
#include "solver_state.h"

/* *f1 -= g . dvc and *f2 += dvc^T G dvc, term by term (contacts' dim 3 as a constant: unrolled). */
static inline void slope_curvature(const double *g, const double *G, const double *dvc, int dim, double *f1,
                                   double *f2) {
  for (int r = 0; r < dim; ++r) {
    *f1 -= g[r] * dvc[r];
    for (int q = 0; q < dim; ++q) *f2 += dvc[r] * G[r * dim + q] * dvc[q];
  }
}

/* Whether constraint c's slope and curvature along a line can be taken by lagged_directional: a Lagged
 * contact without gradient smoothing's film (whose viscosity and grip add terms of their own). */
static inline int lagged_plain(const grit_constraint *c) {
  return c->kind == GRIT_CONSTRAINT_LAGGED && !(c->p.grip > 0.0);
}

/* *f1 -= gamma . dvc and *f2 += dvc^T G dvc for a plain Lagged contact at vc, without forming G or its
 * cost. The normal law's impulse and curvature times dvc_n and dvc_n^2: Hunt & Crossley's law below v_hat
 * written out with hc_normal's operations (so the same values), a support's soft law under gradient
 * smoothing by grit_contact_lagged_frictionless. Friction's in closed form: with x = vc_t, y = dvc_t,
 * s^2 = |x|^2 + eps^2 and g = mu gamma_n0, gamma_t = -g x / s and G_t = g (I - x x^T / s^2) / s (the
 * soft norm), so -gamma_t . y = g (x . y) / s and y^T G_t y = g ((x1 y2 - x2 y1)^2 + eps^2 |y|^2) / s^3
 * (>= 0). The same numbers as grit_contact_lagged followed by slope_curvature up to round-off, at a
 * fraction of the work (the line search's evaluations were 10-14 % of the series' clutters' step). */
static inline void lagged_directional(const grit_constraint *c, double dt, double vhat, const double vc[3],
                                      const double dvc[3], double *f1, double *f2) {
  double gn = 0.0, gnn = 0.0;
  if (c->p.soft > 0.0) {
    grit_contact_lagged_frictionless(&c->p, dt, vc[2], &gn, &gnn);
  } else if (vc[2] < vhat) { /* hc_normal's law below v_hat (breaking_velocity), the same operations */
    const double a = -c->p.phi0 - vc[2] * dt, b = 1.0 - c->p.d * vc[2], kdt = c->p.k * dt;
    gn = kdt * (a * b);
    gnn = kdt * (b * dt + c->p.d * a);
  }
  *f1 -= gn * dvc[2];
  *f2 += gnn * dvc[2] * dvc[2];
  const double g = c->p.mu * c->p.gn0;
  if (g == 0.0) return; /* without friction (a normal-only contact's tangential rows are not even set) */
  const double e2 = c->p.eps * c->p.eps, s2 = vc[0] * vc[0] + vc[1] * vc[1] + e2, is = 1.0 / sqrt(s2);
  const double xy = vc[0] * dvc[0] + vc[1] * dvc[1], yy = dvc[0] * dvc[0] + dvc[1] * dvc[1];
  const double xcy = vc[0] * dvc[1] - vc[1] * dvc[0];
  *f1 += g * xy * is;
  *f2 += g * (xcy * xcy + e2 * yy) * (is * is * is); /* |y|^2 s^2 - (x . y)^2 by Lagrange's identity: no
                                                          cancellation when the line runs along a fast slip */
}

/* Whether constraint c is a bilateral equality row (connect, joint or tendon coupling) whose slope and
 * curvature along a line bilateral_directional gives (not under grit_solver.no_bilateral_ls). */
static inline int bilateral(const grit_solver *s, const grit_constraint *c) {
  return (c->kind == GRIT_CONSTRAINT_EQUALITY || c->kind == GRIT_CONSTRAINT_EQUALITY_1D) && !s->no_bilateral_ls;
}

/* *f1 -= gamma . dvc and *f2 += dvc^T G dvc for a bilateral equality row at vc = c->vc + a dvc, without
 * forming gamma and G: grit_bilateral_cost's gamma_r = -((phi_r s + vc_r) / R), s = 1 / (tau_d + dt), and
 * G = I / R, with its operations (the same values), and slope_curvature's sums without G's off-diagonal
 * zeros (adding dvc_r 0 dvc_q = +-0 changes no bit: *f2 starts at dv^T A dv or +0, never -0, and is never
 * -0 after a sum). On MuJoCo's hammock (a grid composite held by tendon rows) grit_step took 1465 -> 1383 M
 * instructions over 300 steps without the generic evaluation (grit_constraint_eval, grit_bilateral_cost,
 * the loops over dim; test_solver compares both bit for bit). */
static inline void bilateral_directional(const grit_constraint *c, double dt, double a, double *f1, double *f2) {
  const double iR = 1.0 / c->p.Rn, sc = 1.0 / (c->p.tau_d + dt);
  for (int r = 0; r < c->dim; ++r) {
    const double vc = c->vc[r] + a * c->dvc[r], g = -((c->p.phi[r] * sc + vc) * iR);
    *f1 -= g * c->dvc[r];
    *f2 += c->dvc[r] * iR * c->dvc[r];
  }
}

/* The first and second derivatives of l(v + a dv) with respect to a, given dv^T A e and dv^T A dv
 * (e = v - v*) and each constraint's vc and dvc = J dv: O(number of constraints in idx[0..n-1]). */
static void ls_eval(const grit_solver *s, double dt, const int *idx, int n, double a, double dAe, double dAd,
                    double *d1, double *d2) {
  double f1 = dAe + a * dAd, f2 = dAd;
  for (int k = 0; k < n; ++k) {
    if (idx[k] < 0) { /* tagged by ls_ends: a plain Lagged contact under Hunt & Crossley's law (no soft
                         support), lagged_directional's operations without its tests of kind and law */
      const int i = ~idx[k];
      const grit_constraint *c = &s->c[i];
      const double *dvc = c->dvc, vc2 = c->vc[2] + a * dvc[2];
      if (vc2 < s->vhat[i]) {
        const double an = -c->p.phi0 - vc2 * dt, b = 1.0 - c->p.d * vc2, kdt = c->p.k * dt;
        const double gn = kdt * (an * b), gnn = kdt * (b * dt + c->p.d * an);
        f1 -= gn * dvc[2];
        f2 += gnn * dvc[2] * dvc[2];
      } else { /* lagged_directional's zero impulse times dvc_n, as it subtracts it (the sign of a zero f1);
                  its zero curvature adds +0 to f2, which is never -0 (bilateral_directional): left out */
        f1 -= 0.0 * dvc[2];
      }
      const double g = c->p.mu * c->p.gn0;
      if (g == 0.0) continue;
      const double vc[2] = {c->vc[0] + a * dvc[0], c->vc[1] + a * dvc[1]};
      const double e2 = c->p.eps * c->p.eps, s2 = vc[0] * vc[0] + vc[1] * vc[1] + e2, is = 1.0 / sqrt(s2);
      const double xy = vc[0] * dvc[0] + vc[1] * dvc[1], yy = dvc[0] * dvc[0] + dvc[1] * dvc[1];
      const double xcy = vc[0] * dvc[1] - vc[1] * dvc[0];
      f1 += g * xy * is;
      f2 += g * (xcy * xcy + e2 * yy) * (is * is * is);
      continue;
    }
    const grit_constraint *c = &s->c[idx[k]];
    double vc[3], g[3], G[9];
    if (lagged_plain(c)) { /* (the tangential rows only with friction: lagged_directional reads them then) */
      vc[2] = c->vc[2] + a * c->dvc[2];
      if (c->p.mu * c->p.gn0 != 0.0) vc[0] = c->vc[0] + a * c->dvc[0], vc[1] = c->vc[1] + a * c->dvc[1];
      lagged_directional(c, dt, s->vhat[idx[k]], vc, c->dvc, &f1, &f2);
      continue;
    }
    if (bilateral(s, c)) {
      bilateral_directional(c, dt, a, &f1, &f2);
      continue;
    }
    for (int r = 0; r < c->dim; ++r) vc[r] = c->vc[r] + a * c->dvc[r];
    constraint_eval(c, dt, vc, g, G);
    if (c->dim == 3) slope_curvature(g, G, c->dvc, 3, &f1, &f2);
    else slope_curvature(g, G, c->dvc, c->dim, &f1, &f2);
  }
  *d1 = f1;
  *d2 = f2;
}

/* vc = c->vc + a dvc on its dim rows, and *s0 -= gamma . dvc row by row (ls_ends). */
static inline void ends_rows(const grit_constraint *c, double a, int dim, double vc[3], double *s0) {
  for (int r = 0; r < dim; ++r) vc[r] = c->vc[r] + a * c->dvc[r];
  for (int r = 0; r < dim; ++r) *s0 -= c->gamma[r] * c->dvc[r];
}

/* The slope of l(v + a dv) at a = 0 from the constraints' impulses at v (already evaluated), its slope
 * at a_max, and the list of constraints the line search must evaluate in between: a constraint whose
 * slope along dv, -gamma . dvc, is exactly 0 at both ends has, l_i being convex (its slope along a line
 * non-decreasing), slope 0 and curvature 0 everywhere between, so it adds nothing to d1 and d2 there
 * (the candidates out of contact, most of a clutter's). Returns the list's length. */
static int ls_ends(grit_solver *s, double dt, const int *con, int ncon, double a_max, double dAe, double dAd,
                   double *d0, double *d1, double *h1, double *d0_size) {
  double f0 = dAe, f1 = dAe + a_max * dAd, f2 = dAd, size = fabs(dAe);
  int n = 0;
  const int tags = !s->no_ls_tags;
  for (int k = 0; k < ncon; ++k) {
    const int i = con[k];
    grit_constraint *c = &s->c[i];
    double vc[3], g[3], G[9], s0 = 0.0, s1 = 0.0, c1 = 0.0;
    int tag = 0; /* (~i in the list for ls_eval's lean branch) */
    c->idle = 0;
    if (normal_only(c)) { /* no impulse at both ends: at or above the breaking velocity (hc_vhat); v_n
                             is linear in a, so none in between nor at the step's end (c->idle) */
      const double vhat = s->vhat[i];
      c->idle = !(c->vc[2] < vhat) && !(c->vc[2] + a_max * c->dvc[2] < vhat);
      if (c->idle) continue; /* (most of a clutter's candidates: their other rows are not needed) */
    }
    if (c->dim == 3) /* (a contact's three rows as a constant: unrolled, the same sums) */
      ends_rows(c, a_max, 3, vc, &s0);
    else
      ends_rows(c, a_max, c->dim, vc, &s0);
    if (lagged_plain(c)) {
      tag = tags && !(c->p.soft > 0.0);
      lagged_directional(c, dt, s->vhat[i], vc, c->dvc, &s1, &c1);
    } else if (bilateral(s, c)) {
      bilateral_directional(c, dt, a_max, &s1, &c1);
    } else {
      constraint_eval(c, dt, vc, g, G);
      for (int r = 0; r < c->dim; ++r) {
        s1 -= g[r] * c->dvc[r];
        for (int q = 0; q < c->dim; ++q) c1 += c->dvc[r] * G[r * c->dim + q] * c->dvc[q];
      }
    }
    f0 += s0, f1 += s1, f2 += c1, size += fabs(s0);
    if (s0 != 0.0 || s1 != 0.0) s->lsidx[n++] = tag ? ~i : i;
  }
  *d0 = f0;
  *d1 = f1;
  *h1 = f2;
  *d0_size = size;
  return n;
}

/* Exact line search on one island: the minimizer of the convex l(v + a dv) restricted to the island's
 * dofs and its constraints con[0..ncon-1], over a in (0, a_max], by a safeguarded Newton iteration on
 * dl/da with bracketing and bisection (Numerical Recipes' rtsafe). dAe = dv^T A e and dAd = dv^T A dv
 * over the island's dofs (e = v - v*). Costs O(ncon) per iteration given J dv. Returns the step;
 * *iters gets the iterations used. */
static double line_search(grit_solver *s, double dt, const int *con, int ncon, double dAe, double dAd,
                          double a_max, int max_iters, int *iters) {
  double d0, d1, h1, d0_size;
  *iters = 0;
  const int n = ls_ends(s, dt, con, ncon, a_max, dAe, dAd, &d0, &d1, &h1, &d0_size);
  /* Not a descent direction: converged to round-off. Also when the slope at 0 is within the round-off of
   * its terms (dv^T A e against the constraints' -gamma . dvc, cancelling): its sign says nothing, and
   * the search bisected such slopes down to a ~ 1e-11, 87 evaluations a step (a ball held on a joint
   * limit at rest, dm_control's jumping ball: slopes of 1e-37 from terms of 1e-21). */
  if (!(d0 < -64.0 * DBL_EPSILON * d0_size)) return 0.0;
  (*iters)++;
  if (d1 <= 0.0) return a_max;
  double lo = 0.0, hi = a_max, a = 1.0, dx = hi - lo, dxold = dx, f = d1, df = h1;
  if (a != a_max) { /* (at a_max, the ends' slope and curvature are at hand) */
    ls_eval(s, dt, s->lsidx, n, a, dAe, dAd, &f, &df);
    (*iters)++;
  }
  /* the slope to 1e-6 of its start: the step's test is on the residual, not on alpha, and 1e-10 cost
   * the series' clutters 12-18 % more line-search evaluations for the same Newton iterations */
  const double ftol = 1e-6 * fabs(d0);
  for (int it = 0; it < max_iters; ++it) {
    if (fabs(f) <= ftol) break;
    if (f < 0.0) lo = a;
    else hi = a;
    /* Newton if it stays inside the bracket and shrinks fast enough, else bisection */
    if ((((a - hi) * df - f) * ((a - lo) * df - f) > 0.0) || (fabs(2.0 * f) > fabs(dxold * df))) {
      dxold = dx;
      dx = 0.5 * (hi - lo);
      a = lo + dx;
    } else {
      dxold = dx;
      dx = f / df;
      a -= dx;
    }
    if (hi - lo <= 1e-15 * hi) break;
    ls_eval(s, dt, s->lsidx, n, a, dAe, dAd, &f, &df);
    (*iters)++;
  }
  return a;
}

/* v, e = v - v* and A e moved by alpha along dv on one tree's n dofs (the vectors do not overlap; inlined
 * with a free body's 6 as a constant). */
static inline void step_tree(double *restrict v, double *restrict e, double *restrict Ae, const double *restrict dv,
                             const double *restrict Adv, double alpha, int n) {
  for (int i = 0; i < n; ++i) {
    v[i] += alpha * dv[i];
    e[i] += alpha * dv[i];
    Ae[i] += alpha * Adv[i];
  }
}

/* The line search's upper bound: after the first iteration 1.5, as Drake's SAP (a little more than the
 * Newton step); the first iteration's step, whose models predict the contacts' states (the global
 * phase's isotropic friction, the models of stiction and of contacts pressed, solver_start.c), at most
 * the whole step. Past it the first step ran into the contacts the prediction got wrong, and the exact
 * line search spent its evaluations on a minimizer beyond 1 that the next iterations undo: from the same
 * saved states, Newton iterations per step on the series' clutters of 10 / 40, clutter.xml and the arm
 * 5.17 / 7.01 / 7.49 / 2.70 -> 5.00 / 6.57 / 7.06 / 2.70 and line-search evaluations 30.8 / 91.8 /
 * 107.4 / 9.3 -> 25.2 / 71.7 / 84.1 / 8.1, the pile of 50 boxes 71.8 -> 38.9 (docs/performance.md,
 * stop 16). 0.9 or 1.2 were worse (the series of 40: 7.34, 7.04; the arm 4.63 at 0.9); so was 1 for every
 * iteration (the arm 2.97). */
/* (An island started from the last step's acceleration near its solution, WARM_NEAR, makes no such
 * prediction: its first step takes ALPHA_MAX; the sliding rod, whose smooth friction's Newton step falls
 * a little short, then ends in one iteration instead of two.) */
#define FIRST_ALPHA_MAX 1.0
#define ALPHA_MAX 1.5

/* Phase 5: the exact line search along dv, island by island: each takes its own step, so that an island
 * whose step must be cut (a contact entering, a slip turning) does not hold back the others. v and the
 * constraint velocities move; the islands that moved are left in s->act (returns their count). */
int grit_solver_search_islands(grit_solver *s, const grit_model *m, int max_ls_iters, double dt, const double *A,
                               int nact, int first, double *v, int *ls_iters) {
  double *ialpha = ISL(s, ISL_ALPHA);
  int moved = 0;
  for (int a = 0; a < nact; ++a) {
    const int k = s->act[a];
    double dAe = 0.0, dAd = 0.0;
    for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) {
      const int t = s->isl_tree[q], adr = m->tree_dofadr[t];
      tree_mulv(m, s->tcm, A, t, s->dv, s->Adv);
      SIZED(s, m->tree_dofnum[t], for (int i = adr; i < adr + n_; ++i) dAe += s->dv[i] * s->Ae[i], dAd += s->dv[i] * s->Adv[i]);
    }
    const int *con = s->isl_con + s->isl_start[k], ncon = s->isl_start[k + 1] - s->isl_start[k];
    for (int q = 0; q < ncon; ++q) {
      grit_constraint *c = &s->c[con[q]];
      if (s->jwide[con[q]]) grit_solver_apply_j(s, m, con[q], s->dv, 0, c->dvc);
      else if (grit_solver_free3(s, m, c))
        grit_solver_free3_apply(s->jstore + c->joff[0], s->dv + m->tree_dofadr[c->tree[0]], NULL, c->dvc);
      else constraint_apply(m, c, s->jstore, s->dv, 0, c->dvc);
    }
    int lsi = 0;
    const double a_max = first && ISL(s, ISL_WARM)[k] != WARM_NEAR ? FIRST_ALPHA_MAX : ALPHA_MAX;
    const double alpha = line_search(s, dt, con, ncon, dAe, dAd, a_max, max_ls_iters, &lsi);
    *ls_iters += lsi;
    ialpha[k] = alpha;
    if (alpha == 0.0) continue;
    /* e = v - v* and A e follow v as the constraint velocities below do (A dv is at hand): A e was
     * 8 % of the eval's time when recomputed */
    for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) {
      const int t = s->isl_tree[q], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
      if (n == 6) step_tree(v + adr, s->e + adr, s->Ae + adr, s->dv + adr, s->Adv + adr, alpha, 6);
      else if (n == 3) step_tree(v + adr, s->e + adr, s->Ae + adr, s->dv + adr, s->Adv + adr, alpha, 3);
      else step_tree(v + adr, s->e + adr, s->Ae + adr, s->dv + adr, s->Adv + adr, alpha, n);
    }
    /* the constraint velocities follow v: J (v + alpha dv) + b = vc + alpha dvc */
    const int tags = !s->no_ls_tags;
    for (int q = 0; q < ncon; ++q) {
      grit_constraint *c = &s->c[con[q]];
      /* a normal-only contact's tangential rows are +0 in vc and dvc (constraint_apply), and +0 + alpha +0
       * is +0: its normal row alone (unless no_ls_tags) */
      if (tags && normal_only(c)) c->vc[2] += alpha * c->dvc[2];
      else
        for (int r = 0; r < c->dim; ++r) c->vc[r] += alpha * c->dvc[r];
    }
    s->act[moved++] = k; /* to evaluate again */
  }
  return moved;
}
