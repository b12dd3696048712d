/* SPDX-License-Identifier: Apache-2.0 */
/* solver_start.c — how the Newton solver's islands start and which model of the Hessian a step takes
 * besides the exact one (solver.c runs the iterations): the global phase's isotropic friction, the
 * first step's predictions of contacts that stick or get pressed, and the islands whose minimizer is the
 * free motion v*. Each changes the path only: the exact line search minimizes the true cost along any
 * of these directions, and the stopping test is the same (docs/contact.md). */
#include <math.h>
#include <string.h>

#include "afactor.h"
#include "dynamics.h"
#include "solver_state.h"

/* The Lagged friction term's Hessian for the global phase of Newton's method (and the primal-dual model's,
 * ISO_DUAL, below grit_solver_choose_isotropic): mu gamma_n0 I / s with
 * s = sqrt(|v_t|^2 + eps^2), instead of the exact mu gamma_n0 (I - t_s t_s^T) / s, into G's tangential
 * block (the normal part is kept). While a contact slips (|v_t| >> eps) the exact Hessian has almost no
 * curvature along the slip, so the Newton step runs far past the stiction kink and the line search cuts
 * it to a few percent (alpha ~ 0.01-0.3 for ten and more iterations in a clutter). The isotropic matrix
 * is the exact one plus a PSD term, so the direction is still a descent direction and the exact line
 * search still decreases l; at a sticking contact (|v_t| << eps) the two agree to O(|v_t|^2 / eps^2). */
#define STICK_SOFT_NORM 1.2
static double stick_norm(const grit_constraint *c) { return STICK_SOFT_NORM * c->p.eps; }

void grit_solver_global_hessian(const grit_constraint *c, double Gm[9]) {
  memcpy(Gm, c->G, sizeof(double) * 9);
  if (c->isotropic == ISO_DUAL) {
    const double x0 = c->vc[0], x1 = c->vc[1], w0 = c->wt[0], w1 = c->wt[1];
    const double s = sqrt(x0 * x0 + x1 * x1 + c->p.eps * c->p.eps), g = c->p.mu * c->p.gn0 / s, h = 0.5 / s;
    Gm[0] = g * (1.0 - 2.0 * h * w0 * x0);
    Gm[1] = Gm[3] = -g * h * (w0 * x1 + x0 * w1);
    Gm[4] = g * (1.0 - 2.0 * h * w1 * x1);
    return;
  }
  const double s = c->isotropic == ISO_STICK ? stick_norm(c)
                                             : sqrt(c->vc[0] * c->vc[0] + c->vc[1] * c->vc[1] + c->p.eps * c->p.eps);
  const double g = c->p.mu * c->p.gn0 / s;
  Gm[0] = g, Gm[1] = 0.0, Gm[3] = 0.0, Gm[4] = g;
}

/* The first Newton step's model of a contact predicted to stick (ISO_STICK): a Lagged contact that was
 * pressed at the start of the step often ended the previous step sticking (slip below eps), yet starts
 * this one slipping at v = v0, because its Jacobian moved with the bodies (the arm pushing the ball:
 * 33 eps). The isotropic Hessian at that slip, mu gamma_n0 / s with s = 33 eps, models friction 33 times
 * softer than at stiction, so the first step removes a third of the slip only; the exact step that
 * follows runs past the stiction kink and is cut to alpha = 0.02-0.14 (docs/performance.md). Such a
 * contact's first step instead takes the quadratic model of stiction: friction as the linear damper
 * gamma_t = -mu gamma_n0 v_t / s_stick with s_stick = STICK_SOFT_NORM eps (its Hessian and, in the
 * right-hand side, its impulse; the normal row keeps its exact terms), whose minimizer is the stuck
 * contact's velocity when the slip at the solution is about eps. The exact line search along that
 * direction still minimizes the true l, so the problem, its solution and the stopping test are those
 * of every other step; only the path differs. A contact is predicted to stick when it was pressed
 * (gamma_n0 > 0), slips faster than STICK_MIN_SLIP eps at v0 (slower ones already have a stiff enough
 * isotropic Hessian) and an impulse within its friction cone stops that slip on its own bodies:
 * |v_t| <= w mu gamma_n0, w its Delassus estimate (trace(J A^-1 J^T) / 3, computed here for these
 * contacts only). A sliding contact fails this test (the launched sphere: |v_t| / w = 0.37 against
 * mu gamma_n0 = 0.0024; the arm's contact with the ball: 1.5e-4 against 0.011). STICK_SOFT_NORM 1.2
 * was chosen on the arm (1.0, 1.2, 1.41, 1.7, 2.0: 3.53, 2.87, 3.03, 3.00, 3.60 Newton iterations per
 * step, 3.87 without the rule). Off in quasistatic mode (options.stick_start), where A is not the
 * bodies' inertia over a step and the prediction means nothing (|v_t| / (w mu gamma_n0) ~ 1e-7 on a
 * slipping grip). */
#define STICK_MIN_SLIP 4.0

/* Whether contact c (Lagged, gamma_n0 > 0, squared slip bb at v0) is predicted to stick (above). */
static int predict_stick(grit_solver *s, const grit_constraint *c, double bb) {
  if (!s->Achol || !(bb > STICK_MIN_SLIP * STICK_MIN_SLIP * c->p.eps * c->p.eps)) return 0;
  const double *J[2] = {s->jstore + c->joff[0], s->jstore + (c->ntree == 2 ? c->joff[1] : 0)};
  const double w = grit_afactor_delassus(s->m, s->af, s->Achol, 3, c->ntree, c->tree, J, s->tmp);
  return sqrt(bb) <= w * c->p.mu * c->p.gn0;
}

/* Counts in s->tree_flag, for the trees of the islands act[0..nact-1], their contacts with a normal impulse
 * at v0 (up to 255; nonzero: supported, held up by what they press on). */
static void mark_supported(grit_solver *s, int nact) {
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_tstart[s->act[a]]; q < s->isl_tstart[s->act[a] + 1]; ++q) s->tree_flag[s->isl_tree[q]] = 0;
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_start[s->act[a]]; q < s->isl_start[s->act[a] + 1]; ++q) {
      const grit_constraint *c = &s->c[s->isl_con[q]];
      if (c->kind > GRIT_CONSTRAINT_SAP || !(c->gamma[2] > 0.0)) continue; /* contacts only (dim 3, normal last) */
      for (int k = 0; k < c->ntree; ++k) s->tree_flag[c->tree[k]] += s->tree_flag[c->tree[k]] < 255;
    }
}

/* Whether contact c between two trees closes within the step when one of them, unsupported
 * (mark_supported), takes its free motion while the other keeps its velocity v0: normal velocity
 * vc(v0) + J_k (v*_k - v0_k) below the breaking velocity v_hat. A body above another falls with it at v*
 * (their relative velocity is that of v0, often separating by the previous step's chatter), but the one
 * below is stopped by its own supports while the one above, with nothing under it but this contact,
 * keeps falling by g dt onto it. A supported body is not taken to fall: the resting pile of 50 boxes,
 * every box supported, went from 1.00 to 1.50 Newton iterations per step when either side of any pair
 * could. e = v0 - v* at the first iteration. */
static int one_side_closes(const grit_solver *s, const grit_model *m, const grit_constraint *c, double vhat) {
  for (int k = 0; k < 2; ++k) {
    const int t = c->tree[k], n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
    if (s->tree_flag[t]) continue;
    const double *J = s->jstore + c->joff[k] + 2 * n; /* the normal row */
    double dn = 0.0;
    for (int j = 0; j < n; ++j) dn -= J[j] * s->e[adr + j];
    if (c->vc[2] + dn < vhat) return 1;
  }
  return 0;
}

/* The first Newton step's model of a contact predicted to be pressed (grit_constraint.gn_start): a
 * Lagged contact without normal impulse at v0 that was pressed at the start of the step (gamma_n0 > 0),
 * has an impulse at the free motion v*, or closes when one of its bodies, unsupported, falls onto the
 * other (one_side_closes, above). In the series' clutters most of a step's contacts that
 * engage during the solve are of this kind: objects resting on each other with a gap of microns at
 * the start and a separating velocity left from the previous step, which the bodies below, stopped by
 * their own contacts, run into within the step. The first Newton step, blind to them, lets the upper
 * bodies fall through by g dt, and the line search cuts it to alpha ~ 0.1-0.2 at the first contact
 * that engages; they then enter one iteration at a time. The model: the normal law's pressed branch
 * continued linearly past the breaking velocity v_hat, gamma_n = G_n (v_hat - v_n) with G_n its
 * curvature at v_hat (dt k (dt (1 - d v_hat) + d (-phi0 - dt v_hat))), in the Hessian and the
 * right-hand side, as the model of stiction (ISO_STICK) does for friction: only the direction changes,
 * the exact line search minimizes the true l along it. Not with gradient smoothing (another normal
 * law) nor where the stick start is off (quasistatic). Mean Newton iterations over 200 steps of the
 * series' clutters of 10 / 40 / 160 objects: 6.29 / 8.91 / 14.35 -> 6.15 / 8.36 / 13.79 (stop 13); with
 * one_side_closes, from the same 200 states of the clutters of 10 / 40: 6.11 / 8.38 -> 5.86 / 8.28
 * (docs/performance.md, stop 14). A contact against the static world (one tree) whose tree presses on
 * SUPPORT_MIN_CONTACTS or more contacts at v0 is not predicted from v*: a body held up at three points or
 * more does not fall by g dt, and its candidates within g dt^2 of the floor stay open (a humanoid lying
 * on the floor: MuJoCo's humanoid took a first step cut to alpha ~ 1e-3 in three steps of four, 2.21 ->
 * 1.66 Newton iterations per step from the same states; with one or two contacts instead of three, the
 * series' clutters of 10 / 40 took 5.38 / 6.75 and 5.26 / 6.70 instead of 5.23 / 6.69 (before: 5.24 /
 * 6.67; four: 5.24 / 6.67): a body on one or two points tips onto its other candidates (docs/performance.md,
 * stop 17). */
#define SUPPORT_MIN_CONTACTS 3
void grit_solver_predict_pressed(grit_solver *s, const grit_model *m, const double *vstar, double dt, int nact,
                                 int on) {
  if (on) mark_supported(s, nact);
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_start[s->act[a]]; q < s->isl_start[s->act[a] + 1]; ++q) {
      grit_constraint *c = &s->c[s->isl_con[q]];
      c->gn_start = 0.0;
      if (!on || !grit_solver_pressable(c)) continue;
      const double vhat = breaking_velocity(c, dt);
      if (!(c->p.gn0 > 0.0)) {
        if (c->ntree == 1 && s->tree_flag[c->tree[0]] >= SUPPORT_MIN_CONTACTS) continue; /* held up: see above */
        double y[3];
        constraint_apply_rows(m, c, s->jstore, vstar, 1, y, 2, 3);
        if (!(y[2] < vhat) && !(c->ntree == 2 && one_side_closes(s, m, c, vhat))) continue;
      }
      c->gn_start = grit_solver_pressed_curvature(c, dt, vhat);
    }
}

/* The primal-dual model of Lagged friction (ISO_DUAL), after the first iteration, for every plain Lagged
 * contact with friction (not under gradient smoothing, whose film's grip and viscosity are not the
 * saturated friction this reasons about). Friction's impulse is -g w with w = v_t / s, s^2 = |v_t|^2 +
 * eps^2, g = mu gamma_n0. Its exact Hessian g (I - x x^T / s^2) / s at x = v_t is almost flat along a fast
 * slip, so a Newton step runs far past the stiction kink and the line search cuts it to a few percent;
 * the isotropic one, g I / s, holds a fast slip back (its island's steps reach the line search's cap
 * while the slip grows to its value). Chan, Golub & Mulet's primal-dual Newton for total variation (SIAM
 * J. Sci. Comput. 20, 1999) meets the same kink: it carries w as a variable of its own, the dual estimate
 * c->wt, and linearizes s w = x instead of x / s, which gives the Hessian
 * g (I - (w x^T + x w^T) / (2 s)) / s (symmetrized; positive definite for |w| <= 1, since
 * |x| < s), and steps w by the same linearization (dual_update). While a contact sticks or slides steadily
 * w -> x / s and the model is the exact Hessian (quadratic convergence at the end); a slip that the step
 * reverses meets w pointing the old way, where the model is stiff (up to 2 g / s along the slip) and the
 * next step does not run past the kink. w = 0 is the isotropic model, w = x / s the exact one: the first
 * iteration's models (the global phase's isotropic Hessian, the model of stiction) start it. Only the
 * direction changes: the exact line search minimizes the true l along it and the stopping test is the
 * same. From the same saved states, Newton iterations per step on the series' clutters of 10 / 40,
 * clutter.xml, the soft clutter, clutter 160, the arm at push, arm7.xml: 5.79 / 8.07 / 8.77 / 5.83 / 10.02
 * / 2.87 / 4.15 with the isotropic-or-exact choice of the global phase (below) -> 5.17 / 7.01 / 7.49 /
 * 5.25 / 8.54 / 2.70 / 4.13 (docs/performance.md, stop 16). */
/* The dual estimate's step (above): Newton's linearization of w = v_t / s(v_t) at the previous iterate x
 * along the whole Newton direction d = J_t dv (c->dvc, not the line search's fraction of it: with that
 * the series' clutter of 40 took 7.83 iterations instead of 7.01), with the previous model's w in place
 * of x / s in its Jacobian, w+ = x / s + (d - w (x . d) / s) / s, scaled back onto the unit circle when
 * outside it. After the model of stiction's step (ISO_STICK: friction the linear damper -g v_t / s_stick)
 * the same with that model's impulse, w+ = (x + d) / s_stick (the arm at push: 3.23 iterations without
 * this, 2.70 with). prev is the model the previous iteration took. */
static void dual_update(grit_constraint *c, int prev) {
  const double x0 = c->vt_prev[0], x1 = c->vt_prev[1], d0 = c->dvc[0], d1 = c->dvc[1];
  double s = sqrt(x0 * x0 + x1 * x1 + c->p.eps * c->p.eps), xd = (x0 * d0 + x1 * d1) / s;
  if (prev == ISO_STICK) s = stick_norm(c), xd = 0.0;
  double w0 = (x0 + d0 - c->wt[0] * xd) / s, w1 = (x1 + d1 - c->wt[1] * xd) / s;
  const double n = sqrt(w0 * w0 + w1 * w1);
  if (n > 1.0) w0 /= n, w1 /= n;
  c->wt[0] = w0, c->wt[1] = w1;
}

/* Which model of Lagged friction (with gamma_n0 > 0) each contact of island k takes in this iteration.
 * After the first iteration a plain contact takes the primal-dual model (above). In the first iteration
 * a plain contact slipping faster than STICK_MIN_SLIP eps at v0 and not predicted to stick (so predicted
 * to slide) takes the exact Hessian, which the primal-dual model then starts from (from the same saved
 * states, Newton iterations per step on the series' clutters of 10 / 40, clutter.xml, the soft clutter,
 * clutter 160: 5.00 / 6.57 / 7.06 / 5.13 / 8.37 -> 4.95 / 6.47 / 6.98 / 5.09 / 8.31, the arms, the pile
 * and the sphere unchanged; thresholds 10 and 50 eps the same, 1 eps worse). Otherwise the first
 * iteration, and every iteration of a contact under gradient smoothing: the isotropic Hessian of
 * grit_solver_global_hessian in the global phase (in the first iteration, those predicted to stick the
 * model of stiction instead, ISO_STICK above), else the exact one, except for a slip (faster than 4 eps)
 * that turned by more than 90 degrees since the previous iterate: such a slip is passing through
 * stiction; with the exact Hessian, flat along the new slip, the next step would run past the kink again
 * and the line search would cut it for every other contact too (mean Newton iterations over the scaling
 * series of clutters: 7.9, 13.2, 27.1, 42.1 -> 7.6, 12.0, 23.4, 37.7, docs/performance.md). The first
 * iteration's models set the dual estimate they stand for (x / s for the exact Hessian, 0 for the
 * others). Then records each contact's slip for the next iteration. */
void grit_solver_choose_isotropic(grit_solver *s, int k, int iter, int stick_start, int global) {
  for (int q = s->isl_start[k]; q < s->isl_start[k + 1]; ++q) {
    grit_constraint *c = &s->c[s->isl_con[q]];
    const int prev = c->isotropic;
    c->isotropic = 0;
    if (c->kind == GRIT_CONSTRAINT_LAGGED && c->p.gn0 > 0.0) {
      const double *a = c->vt_prev, *b = c->vc;
      const double bb = b[0] * b[0] + b[1] * b[1];
      const int plain = !(c->p.smooth > 0.0) && !(c->p.grip > 0.0);
      if (iter > 0 && plain) {
        dual_update(c, prev);
        c->isotropic = ISO_DUAL;
      } else {
        const int slides = plain && bb > STICK_MIN_SLIP * STICK_MIN_SLIP * c->p.eps * c->p.eps; /* (iteration 0) */
        c->isotropic = (global && !slides) || (iter > 0 && bb > 16.0 * c->p.eps * c->p.eps && a[0] * b[0] + a[1] * b[1] < 0.0);
        if (iter == 0 && stick_start && predict_stick(s, c, bb)) c->isotropic = ISO_STICK;
        const double is = c->isotropic == ISO_EXACT ? 1.0 / sqrt(bb + c->p.eps * c->p.eps) : 0.0;
        c->wt[0] = b[0] * is, c->wt[1] = b[1] * is;
      }
    }
    c->vt_prev[0] = c->vc[0];
    c->vt_prev[1] = c->vc[1];
  }
}

/* Whether island k's minimizer is v* itself: every one of its constraints without impulse at v* (the
 * objects in free fall, their candidates not yet touching). There r(v*) = 0: v* is the minimizer of the
 * island's convex l, exactly. grit_solver_solve starts such an island there, and choose_active counts
 * it done at once, so that it takes no Newton iteration: it took one (assembly, factorization, solve,
 * line search and a second evaluation) to go from v0 to v*, in the series' clutters a fifth of the
 * islands' iterations. */
static int island_free(const grit_solver *s, const grit_model *m, const double *vstar, double dt, int k) {
  for (int q = s->isl_start[k]; q < s->isl_start[k + 1]; ++q) {
    const grit_constraint *c = &s->c[s->isl_con[q]];
    double vc[3], g[3], G[9];
    if (c->kind == GRIT_CONSTRAINT_LAGGED && !(c->p.smooth > 0.0)) { /* the test without evaluating the
                                                model (a pressed contact, slipping at v*, fails at its first
                                                two rows); gradient smoothing's film acts above v_hat */
      if (c->p.gn0 != 0.0 && c->p.mu != 0.0) { /* friction -mu gamma_n0 t_s: zero only without slip */
        constraint_apply_rows(m, c, s->jstore, vstar, 1, vc, 0, 2);
        if (vc[0] != 0.0 || vc[1] != 0.0) return 0;
      }
      constraint_apply_rows(m, c, s->jstore, vstar, 1, vc, 2, 3);
      if (vc[2] < breaking_velocity(c, dt)) return 0; /* a normal impulse */
      continue;
    }
    constraint_apply(m, c, s->jstore, vstar, 1, vc);
    constraint_eval(c, dt, vc, g, G);
    for (int r = 0; r < c->dim; ++r)
      if (g[r] != 0.0) return 0;
  }
  return 1;
}

/* Island k starts at vwarm instead of v when l is lower there (grit_solver_set_warm): the previous step's
 * acceleration continued, MuJoCo's warm start, which MuJoCo too takes only where it costs less than its
 * other start. Settled or steadily moving contacts (a loop lying on the floor, a rod sliding, an arm
 * pushing a ball) end each step near where the last one's acceleration leads, while v0 misses by that
 * acceleration: from v0 the loop's first Newton step met contacts at the edge of activation and the next
 * was cut to alpha ~ 0.1. After an impact the continued acceleration runs the wrong way and v0 is kept.
 * Two evaluations of the island (l at v and at vwarm); where vwarm is taken the solve's first iteration
 * does not evaluate the island again (the same computation), where v is kept it does. */
static void start_warm(grit_solver *s, const grit_model *m, const double *A, const double *vstar, const double *vwarm,
                       double dt, int k, double *v) {
  grit_solver_eval_island(s, m, A, vstar, v, dt, k, 1);
  const double l0 = 0.5 * ISL(s, ISL_EE)[k] + ISL(s, ISL_CC)[k];
  for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) {
    const int t = s->isl_tree[q], adr = m->tree_dofadr[t], end = adr + m->tree_dofnum[t];
    for (int i = adr; i < end; ++i) s->tmp[i] = v[i], v[i] = vwarm[i];
  }
  grit_solver_eval_island(s, m, A, vstar, v, dt, k, 1);
  if (0.5 * ISL(s, ISL_EE)[k] + ISL(s, ISL_CC)[k] < l0) {
    ISL(s, ISL_WARM)[k] = WARM_TAKEN; /* (evaluated at its start: the first iteration does not again) */
    return;
  }
  for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) {
    const int t = s->isl_tree[q], adr = m->tree_dofadr[t], end = adr + m->tree_dofnum[t];
    for (int i = adr; i < end; ++i) v[i] = s->tmp[i];
  }
}

/* The islands whose minimizer is v* (island_free) start there; with a second start vwarm (or NULL), each
 * of the others where l is lower (start_warm). */
void grit_solver_start_free_islands(grit_solver *s, const grit_model *m, const double *A, const double *vstar,
                                    const double *vwarm, double dt, double *v) {
  for (int k = 0; k < s->nisl; ++k) {
    ISL(s, ISL_WARM)[k] = WARM_NONE;
    if (!island_free(s, m, vstar, dt, k)) {
      if (vwarm) start_warm(s, m, A, vstar, vwarm, dt, k, v);
      continue;
    }
    for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) {
      const int t = s->isl_tree[q], adr = m->tree_dofadr[t], end = adr + m->tree_dofnum[t];
      for (int i = adr; i < end; ++i) v[i] = vstar[i];
    }
  }
}

/* The right-hand side of the contacts modelled as stuck (ISO_STICK): their tangential impulse
 * -mu gamma_n0 v_t / s_stick in place of gamma_t, dv = -(r + J^T (gamma - gamma_stick)); and of those
 * modelled pressed (gn_start, predict_pressed): gn_start (v_hat - v_n) in place of their zero gamma_n. */
void grit_solver_stick_rhs(grit_solver *s, const grit_model *m, int nact, double dt) {
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_start[s->act[a]]; q < s->isl_start[s->act[a] + 1]; ++q) {
      const grit_constraint *c = &s->c[s->isl_con[q]];
      const int stick = c->isotropic == ISO_STICK;
      if (!stick && !(c->gn_start > 0.0)) continue;
      const double k = stick ? c->p.mu * c->p.gn0 / stick_norm(c) : 0.0;
      const double f[3] = {stick ? -(c->gamma[0] + k * c->vc[0]) : 0.0, stick ? -(c->gamma[1] + k * c->vc[1]) : 0.0,
                           c->gn_start > 0.0 ? c->gn_start * (breaking_velocity(c, dt) - c->vc[2]) : 0.0};
      constraint_apply_transpose(m, c, s->jstore, f, s->dv);
    }
}
