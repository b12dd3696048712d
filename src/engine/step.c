/* SPDX-License-Identifier: Apache-2.0 */
/* step.c — the time step. It reads like ARCHITECTURE.md's pipeline:
 *   1-3 kinematics, dynamics and the free-motion velocity v*   (forward.c)
 *   4   contact candidates                                      (collision)
 *   5   constraints: contacts and joint limits                  (constraints.c)
 *   6   the convex Newton solve for v, keeping the factor of H  (solver.c)
 *   7   q = q0 + dt N(q0) v on the manifold                     (kinematics_generic.h)
 * A failed step leaves the state as it was. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime for the optional phase timing */
#include <float.h>
#include <math.h>
#include <string.h>

#include "actuation.h"
#include "afactor.h"
#include "constraints.h"
#include "solver.h"
#include "constraints_extra.h"
#include "contact_geometry.h"
#include "fluid.h"
#include "forward.h"
#include "grit/step.h"
#include "kinematics.h"
#include "status_internal.h"
#include "timing.h"
#include "treechol.h"
#include "quasistatic.h"
#include "actuation_adhesion.h"
#include "variational.h"

grit_step_settings grit_default_step_settings(void) {
  grit_step_settings s;
  s.contact_model = GRIT_CONTACT_LAGGED;
  s.stiction_tolerance = 1e-4;
  s.regularize_lagged = 0;
  s.sigma = 1e-3;
  s.rel_tol = 1e-5;
  s.max_newton_iters = 300;
  s.dense_max_nv = grit_solver_default_options().dense_max_nv;
  s.sparse_factor = GRIT_FACTOR_BLOCK;
  s.timing = 0;
  s.integrator = GRIT_INTEGRATOR_EULER;
  s.quasistatic_inertia = 1e-6;
  s.gradient_smoothing = 0;
  s.gradient_smoothing_barrier = 0;
  s.warm_start = 0; /* (opt-in: the iLQR tests' plans sit on knife edges a new start moves, docs/performance.md) */
  return s;
}

grit_status grit_data_set_step_settings(grit_data *d, const grit_step_settings *s) {
  if (!d || !s) return GRIT_ERR_INVALID_ARGUMENT;
  if (s->contact_model < GRIT_CONTACT_LAGGED || s->contact_model > GRIT_CONTACT_SAP)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: unknown contact model %d",
                          (int)s->contact_model);
  if (!(s->stiction_tolerance > 0) || !isfinite(s->stiction_tolerance))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT,
                          "step settings: stiction_tolerance %g must be positive and finite", s->stiction_tolerance);
  if (!(s->sigma > 0) || !isfinite(s->sigma))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: sigma %g must be positive", s->sigma);
  if (!(s->rel_tol > 0) || !(s->rel_tol < 1))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: rel_tol %g must be in (0, 1)",
                          s->rel_tol);
  if (s->max_newton_iters < 1)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: max_newton_iters must be >= 1");
  if (s->sparse_factor != GRIT_FACTOR_BLOCK && s->sparse_factor != GRIT_FACTOR_CHOLMOD)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: unknown sparse_factor %d",
                          (int)s->sparse_factor);
  if (!(s->quasistatic_inertia >= 0) || !isfinite(s->quasistatic_inertia))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT,
                          "step settings: quasistatic_inertia %g must be finite and >= 0", s->quasistatic_inertia);
  if (s->integrator < GRIT_INTEGRATOR_EULER || s->integrator > GRIT_INTEGRATOR_QUASISTATIC)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "step settings: unknown integrator %d",
                          (int)s->integrator);
  if (s->integrator != GRIT_INTEGRATOR_EULER && grit_fluid_on(d->model)) /* fluid.c: in the Euler step only */
    return grit_set_error(d->message, GRIT_ERR_UNSUPPORTED,
                          "step settings: the variational and quasistatic integrators do not simulate fluid forces "
                          "(options density, viscosity): use GRIT_INTEGRATOR_EULER");
  if (!(s->gradient_smoothing >= 0) || !isfinite(s->gradient_smoothing))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT,
                          "step settings: gradient_smoothing %g must be >= 0 and finite", s->gradient_smoothing);
  if (s->gradient_smoothing > 0 && s->contact_model == GRIT_CONTACT_SAP)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT,
                          "step settings: gradient_smoothing is defined for the Lagged and Similar models, not SAP");
  if (!(s->gradient_smoothing_barrier >= 0) || !isfinite(s->gradient_smoothing_barrier))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT,
                          "step settings: gradient_smoothing_barrier %g must be >= 0 and finite",
                          s->gradient_smoothing_barrier);
  d->settings = *s;
  return GRIT_OK;
}

grit_step_settings grit_data_step_settings(const grit_data *d) {
  return d ? d->settings : grit_default_step_settings();
}

grit_status grit_data_step_stats(const grit_data *d, grit_step_stats *stats) {
  if (!d || !stats) return GRIT_ERR_INVALID_ARGUMENT;
  *stats = d->stats;
  return GRIT_OK;
}

/* The time over which a candidate's gap must be closable for it to enter the step (the speculative
 * margins of grit_collision_detect): a contact with gap phi0 > 0 has an impulse only when its normal
 * velocity is below v_hat = -phi0 / dt (Lagged), or its normal velocity less mu times its slip is
 * (Similar: z = v_n - mu |v_t|), with dt + tau_d in place of dt for SAP. The points of a pair approach
 * and slip at most at the sum of the two geometries' speed bounds s_a + s_b, so a gap above
 * T (s_a + s_b) with T = dt, dt (1 + mu), (dt + tau_d)(1 + mu) cannot close at those speeds; the
 * factor GRIT_STEP_REACH (2) leaves room for contact within the step to double them. A pair closed
 * faster than that is caught at the next step. Model-wide maxima of mu and tau_d (found once,
 * grit_collision_create) keep the bound per geometry. */
/* The constraints' Delassus estimates with the step's factor of A, tree-ordered trees included (afactor.h). */
static void step_delassus(const void *ctx, grit_constraint *c, int nc, const double *jstore,
                          const grit_step_settings *settings, double *tmp) {
  const grit_data *d = ctx;
  const grit_model *m = d->model;
  const int lists = !d->no_cx_cols && d->cx_colptr;
  for (int i = 0; i < nc; ++i) {
    grit_constraint *x = &c[i];
    if (!grit_constraint_uses_w(x, settings)) {
      x->w = 0.0;
      continue;
    }
    const double *J[2] = {jstore + x->joff[0], jstore + (x->ntree == 2 ? x->joff[1] : 0)};
    const int s = lists ? grit_cx_slot(m, x->kind, x->source) : -1;
    if (s < 0) {
      x->w = grit_afactor_delassus_cols(m, d->af, d->Achol, x->dim, x->ntree, x->tree, J, NULL, 0, tmp);
      continue;
    }
    /* an equality's or tendon's structural columns: its estimate walks up from them; one row whose columns
     * hang off its tree's chain (a composite's equalities) straight to its sum */
    const int *cols = d->cx_cols + d->cx_colptr[s], ncols = d->cx_colptr[s + 1] - d->cx_colptr[s];
    if (d->cx_leaf[s] && x->dim == 1 && x->ntree == 1 &&
        grit_afactor_delassus_row(m, d->af, x->tree[0], J[0], cols, ncols, &x->w))
      continue;
    x->w = grit_afactor_delassus_cols(m, d->af, d->Achol, x->dim, x->ntree, x->tree, J, cols, ncols, tmp);
  }
}

static double speculative_window(const grit_collision *col, grit_contact_model model, double h) {
  if (model == GRIT_CONTACT_LAGGED) return GRIT_STEP_REACH * h;
  return GRIT_STEP_REACH * (model == GRIT_CONTACT_SAP ? h + col->taud_max : h) * (1.0 + col->mu_max);
}

/* The step's statistics (grit_step_stats): sizes, the solver's, and the phases' times (tk: the clock at the
 * start and after phases 1-3, 4, 5; timing off: zeros). */
static void record_stats(grit_data *d, int nc, int ncand, const grit_solver_stats *ss, const double tk[4], int tm) {
  d->stats.nconstraints = nc;
  d->stats.ncontacts = ncand;
  d->ncontacts = ncand;
  d->stats.newton_iters = ss->newton_iters;
  d->stats.ls_iters = ss->ls_iters;
  d->stats.residual = ss->residual;
  d->stats.residual_ref = ss->residual_ref;
  d->stats.cond_estimate = ss->cond_estimate;
  d->stats.used_sparse = ss->used_sparse;
  d->stats.factor_flops = nc > 0 ? ss->factor_flops : 0.0;
  d->stats.time_dynamics = tk[1] - tk[0];
  d->stats.time_collision = tk[2] - tk[1];
  d->stats.time_constraints = tk[3] - tk[2];
  d->stats.time_eval = ss->t_eval;
  d->stats.time_assembly = ss->t_assembly;
  d->stats.time_factor = ss->t_factor;
  d->stats.time_solve = ss->t_solve;
  d->stats.time_linesearch = ss->t_linesearch;
  d->stats.time_total = tm ? grit_clock_us() - tk[0] : 0.0;
}

/* Whether this step may start from the previous step's acceleration (grit_step_settings.warm_start): its
 * state is that step's result, untouched (q and v bit for bit as committed), both steps Euler's (the
 * variational integrator's v is its end velocity, the quasistatic one's no velocity at all). */
static int history_warm(const grit_data *d) {
  const grit_model *m = d->model;
  return d->settings.warm_start && d->warm_ok && d->settings.integrator == GRIT_INTEGRATOR_EULER &&
         d->prev_integrator == (int)GRIT_INTEGRATOR_EULER &&
         !memcmp(d->qpos, d->qnext, sizeof(double) * (size_t)m->nq) &&
         !memcmp(d->qvel, d->vsol, sizeof(double) * (size_t)m->nv);
}

/* The poses at the step's start, d->kin's (every change of the state computes them: forward.c), kept in
 * d->kin0 for the derivatives (derivatives.c, kept_kinematics) by exchanging the two sets of buffers, so
 * that nothing is copied; d->kin's then take the new state's. Unless the step read d->kin with a tree
 * mask (none does) or forbade it (d->no_kin0). */
static void keep_start_kinematics(grit_data *d) {
  d->kin0_ok = !d->no_kin0 && !d->kin.tree_mask && !d->kin0.tree_mask;
  if (!d->kin0_ok) return;
  const grit_kin k = d->kin;
  d->kin = d->kin0;
  d->kin0 = k;
}

/* Aprev := A, kept for the derivatives. A tree factored in tree order (afactor.h) has A's pattern: its entries
 * off the dof-ancestor pairs are +0 (M's stay 0, data_internal.h; the step adds to the diagonal and on
 * that pattern only, grit_treechol_a_keeps_pattern), and so are Aprev's since its last whole copy (unless a
 * quasistatic free motion used it as scratch since: d->aprev_scratched), so only the pairs (i, j), (j, i), j
 * an ancestor of i or i, are copied: the same bytes. The whole copy of the softbox's dense 224 x 224 block
 * was 8 % of its step's instructions (memcpy's rep movsb counts one a byte), the flag's 340 x 340 8 %.
 * d->no_aprev_pattern: the whole copy always. */
static void keep_operator(grit_data *d) {
  const grit_model *m = d->model;
  if (d->no_aprev_pattern || d->aprev_scratched || !grit_afactor_any(d->af)) {
    memcpy(d->Aprev, d->A, sizeof(double) * (size_t)m->nM);
    d->aprev_scratched = 0;
    return;
  }
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    const double *S = d->A + m->tree_madr[t];
    double *D = d->Aprev + m->tree_madr[t];
    if (!grit_afactor_tree_order(d->af, t)) {
      memcpy(D, S, sizeof(double) * (size_t)n * (size_t)n);
      continue;
    }
    grit_treechol_copy_sym(m, t, S, D);
  }
}

/* Whether x[0..n-1] are all finite: |x_i| <= DBL_MAX, tested without a branch per entry (the step's two
 * loops of isfinite were 1 % of a tiny scene's step); the failing entry is then looked for. */
static int all_finite(const double *x, int n) {
  int bad = 0;
  for (int i = 0; i < n; ++i) bad |= !(fabs(x[i]) <= DBL_MAX);
  return !bad;
}

grit_status grit_step(grit_data *d) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  const double h = m->opt.timestep;
  /* The workspaces below (candidates, constraints, the factor) are about to change: the derivatives and
   * contacts are of this step only, and a failed step leaves none (docs/errors.md). */
  const int warm = history_warm(d);
  d->has_prev = 0;
  d->warm_ok = 0;
  d->ncontacts = 0;
  const int tm = d->settings.timing;
  double tk[4] = {0.0, 0.0, 0.0, 0.0}; /* clock at the start and after phases 1-3, 4, 5 */
  if (tm) tk[0] = grit_clock_us();

  /* 1-3: kinematics, dynamics and the free-motion velocity v*. */
  const grit_integrator integ = d->settings.integrator;
  if (integ == GRIT_INTEGRATOR_QUASISTATIC) d->aprev_scratched = 1; /* its free motion factors in d->Aprev */
  grit_status s = integ == GRIT_INTEGRATOR_VARIATIONAL   ? grit_variational_free_motion(d)
                  : integ == GRIT_INTEGRATOR_QUASISTATIC ? grit_quasistatic_free_motion(d)
                                                         : grit_compute_free_motion(d);
  if (s != GRIT_OK) return s;
  if (tm) tk[1] = grit_clock_us();

  /* 4: contact candidates at the poses of the start of the step. */
  int ncand = 0;
  if (m->ngeom > 1 && d->collision->may_collide) { /* none may: no candidate, nothing to find */
    grit_kin_twists(m, &d->kin, d->vstar, d->cvel_star);
    const grit_collision_motion motion = {d->kin.cvel, d->cvel_star,
                                          speculative_window(d->collision, d->settings.contact_model, h),
                                          d->settings.gradient_smoothing};
    s = grit_collision_detect(d->collision, m, d->kin.xpos, d->kin.xmat, &motion, d->message);
    if (s != GRIT_OK) return s;
    ncand = d->collision->n;
  }
  s = grit_adhesion_apply(d, ncand); /* adhesion acts through the candidates (actuation_adhesion.c) */
  if (s != GRIT_OK) return s;
  if (tm) tk[2] = grit_clock_us();

  /* 5: constraints: contacts first (candidate i is constraint i), then joint limits. */
  grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  double *jstore = grit_solver_jstore(d->solver, NULL);
  int nc = 0, joff = 0;
  /* the velocity at the start: none in quasistatic mode (d->vnext, zeroed by its free motion) */
  const double *v0 = integ == GRIT_INTEGRATOR_QUASISTATIC ? d->vnext : d->qvel;
  grit_build_contact_constraints(m, &d->kin, d->collision->c, ncand, v0, h, d->settings.contact_model,
                                 d->settings.gradient_smoothing, integ == GRIT_INTEGRATOR_QUASISTATIC, c, &nc, jstore,
                                 &joff, d->jscratch);
  grit_build_limit_constraints(m, d->qpos, v0, d->vstar, h, c, &nc, jstore, &joff);
  grit_build_cx_constraints(m, &d->kin, d->qpos, v0, d->vstar, h, c, &nc, jstore, &joff, d->jscratch,
                            d->no_cx_cols ? NULL : d->cx_colptr, d->cx_cols, grit_solver_cx_built(d->solver));
  /* Delassus estimates from the bodies' real inertia (quasistatic: the factor of M + h D + h^2 K) */
  const double *Lw = integ == GRIT_INTEGRATOR_QUASISTATIC ? d->Aprev : d->Achol;
  const int tree_order = integ != GRIT_INTEGRATOR_QUASISTATIC && grit_afactor_any(d->af); /* afactor.h */
  grit_finalize_constraints(m, c, nc, jstore, Lw, tree_order ? step_delassus : NULL, d, h, &d->settings, d->vnext);
  if (tm) tk[3] = grit_clock_us();

  /* 6: the convex solve, warm-started from the previous velocity. */
  grit_solver_options opt = grit_solver_default_options();
  opt.rel_tol = d->settings.rel_tol;
  opt.max_iters = d->settings.max_newton_iters;
  opt.dense_max_nv = d->settings.dense_max_nv;
  opt.sparse_path = d->settings.sparse_factor == GRIT_FACTOR_CHOLMOD ? 2 : 1;
  opt.timing = tm;
  opt.stick_start = integ != GRIT_INTEGRATOR_QUASISTATIC; /* the Delassus estimate reads A as inertia */
  grit_solver_stats ss;
  memcpy(d->vnext, d->qvel, sizeof(double) * (size_t)m->nv);
  if (warm) { /* the previous step's acceleration continued: v0 + h a_prev = v0 + (v0 - v0_prev); the solver
                 takes it in each island where l is lower there than at v0 (solver_start.c). From the
                 same trajectories, Newton iterations per step (with solver.c's WARM_NEAR): MuJoCo's loop
                 4.82 -> 3.15, the sliding rod 2.63 -> 1.00, the arm 1.78 -> 1.27, the rope 4.98 -> 4.33
                 (docs/performance.md, stop 21) */
    double *w = d->qnext; /* (nq >= nv doubles, free until phase 7) */
    for (int i = 0; i < m->nv; ++i) w[i] = d->qvel[i] + (d->qvel[i] - d->vprev[i]);
    grit_solver_set_warm(d->solver, w);
  }
  s = grit_solver_solve(d->solver, m, &opt, h, d->A, d->Achol, d->vstar, nc, d->vnext, &ss, d->message);
  if (s != GRIT_OK) return s;

  /* 7: q = q0 + h N(q0) v, on the manifold; commit only a finite result. */
  memcpy(d->qnext, d->qpos, sizeof(double) * (size_t)m->nq);
  grit_kin_integrate(m, d->qnext, d->vnext, h);
  if (d->settings.integrator == GRIT_INTEGRATOR_VARIATIONAL) {
    s = grit_variational_end_velocity(d, d->qnext, d->vnext);
    if (s != GRIT_OK) return s;
  }
  if (!all_finite(d->qnext, m->nq) || !all_finite(d->vnext, m->nv)) {
    for (int i = 0; i < m->nq; ++i)
      if (!isfinite(d->qnext[i]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "step: position %d became non-finite", i);
    for (int i = 0; i < m->nv; ++i)
      if (!isfinite(d->vnext[i]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "step: velocity %d became non-finite", i);
  }
  /* keep the step's inputs and solution for the derivatives, then commit */
  memcpy(d->qprev, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->vprev, d->qvel, sizeof(double) * (size_t)m->nv);
  if (integ == GRIT_INTEGRATOR_QUASISTATIC) memset(d->vprev, 0, sizeof(double) * (size_t)m->nv); /* v0 = 0 */
  if (m->nu > 0) memcpy(d->uprev, d->ctrl, sizeof(double) * (size_t)m->nu);
  grit_actuation_commit(d); /* the inputs kept, the activations advanced (actuation.c) */
  memcpy(d->vsol, d->vnext, sizeof(double) * (size_t)m->nv);
  keep_operator(d);
  d->has_prev = 1;
  d->warm_ok = 1;
  d->prev_integrator = d->settings.integrator;
  memcpy(d->qpos, d->qnext, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, d->vnext, sizeof(double) * (size_t)m->nv);
  d->time += h;
  keep_start_kinematics(d);
  /* poses and twists of the new state, for the queries of grit/dynamics.h */
  grit_kin_positions(m, d->qpos, &d->inertial, &d->kin);
  grit_kin_velocities(m, d->qvel, &d->kin);
  record_stats(d, nc, ncand, &ss, tk, tm);
  return GRIT_OK;
}

grit_status grit_data_set_warm_start(grit_data *d, const double *v_prev, int nv) {
  if (!d || !v_prev) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  if (nv != m->nv)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "warm start: %d velocities, the model has %d", nv, m->nv);
  for (int i = 0; i < nv; ++i)
    if (!isfinite(v_prev[i]))
      return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "warm start: velocity %d is not finite", i);
  d->has_prev = 0; /* (vprev and vsol describe no step of this data now: no derivatives until the next) */
  memcpy(d->vprev, v_prev, sizeof(double) * (size_t)nv);
  memcpy(d->vsol, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(d->qnext, d->qpos, sizeof(double) * (size_t)m->nq);
  d->prev_integrator = GRIT_INTEGRATOR_EULER;
  d->warm_ok = 1;
  return GRIT_OK;
}

int grit_data_ncontacts(const grit_data *d) { return d ? d->ncontacts : 0; }

grit_status grit_data_contact(const grit_data *d, int i, grit_contact_info *info) {
  if (!d || !info) return GRIT_ERR_INVALID_ARGUMENT;
  if (i < 0 || i >= d->ncontacts)
    return grit_set_error((char *)d->message, GRIT_ERR_INVALID_ARGUMENT, "contact %d does not exist (%d contacts)", i,
                          d->ncontacts);
  const grit_contact_candidate *q = &d->collision->c[i];
  const grit_constraint *k = &grit_solver_constraints(d->solver, NULL)[i];
  for (int j = 0; j < 2; ++j) {
    info->geom[j] = q->geom[j];
    info->body[j] = q->body[j];
  }
  info->phi0 = q->pt.phi;
  for (int j = 0; j < 3; ++j) {
    info->pos[j] = 0.5 * (q->pt.pa[j] + q->pt.pb[j]);
    info->impulse[j] = k->gamma[j];
  }
  grit_contact_frame(q->pt.n, info->frame);
  return GRIT_OK;
}
