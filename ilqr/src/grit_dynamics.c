/* SPDX-License-Identifier: Apache-2.0 */
/* grit_dynamics.c — grit's step and its derivatives as iLQR dynamics (grit_ilqr/grit_dynamics.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (ilqr_internal.h) */
#include "grit_ilqr/grit_dynamics.h"

#include "ilqr_internal.h" /* the solver's max_time, for a budget over all stages */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct grit_ilqr_grit {
  const grit_model *model;
  int horizon, nq, nv, nu, na;
  grit_data **data; /* 2 x horizon: data[slot * horizon + k] */
  grit_data **jdata; /* horizon, created on the first grit_ilqr_grit_set_derivative_smoothing > 0 */
  double jdelta;     /* > 0: the Jacobians are those of the step smoothed by jdelta, taken at (x, u) */
  double *ctrl_range; /* 2 nu: each actuator's ctrl_range if ctrl_limited, else (-inf, inf) */
  double *vlast;      /* 2 x nv: per slot, the velocity its last step started from (step_cb) */
  int lastk[2];       /* per slot, the knot of that step (-1: none) */
  char msg[GRIT_MESSAGE_SIZE];
};

void grit_ilqr_grit_free(grit_ilqr_grit *a) {
  if (!a) return;
  if (a->data)
    for (int i = 0; i < 2 * a->horizon; ++i) grit_data_free(a->data[i]);
  free(a->data);
  if (a->jdata)
    for (int i = 0; i < a->horizon; ++i) grit_data_free(a->jdata[i]);
  free(a->jdata);
  free(a->ctrl_range);
  free(a->vlast);
  free(a);
}

grit_status grit_ilqr_grit_create(const grit_model *model, int horizon, const grit_step_settings *settings,
                                  grit_ilqr_grit **out, char *msg) {
  if (msg) msg[0] = 0;
  if (!out || !model || horizon < 1) {
    if (msg) snprintf(msg, GRIT_MESSAGE_SIZE, "need a model, an output pointer and a horizon >= 1");
    return GRIT_ERR_INVALID_ARGUMENT;
  }
  *out = NULL;
  grit_ilqr_grit *a = calloc(1, sizeof *a);
  const int nu = grit_model_nu(model);
  if (!a || !(a->data = calloc((size_t)(2 * horizon), sizeof *a->data)) ||
      !(a->ctrl_range = malloc(sizeof(double) * (size_t)(2 * nu + 1))) ||
      !(a->vlast = calloc((size_t)(2 * grit_model_nv(model) + 1), sizeof(double)))) {
    if (a) free(a->data), free(a->ctrl_range);
    free(a);
    if (msg) snprintf(msg, GRIT_MESSAGE_SIZE, "out of memory");
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  a->model = model;
  a->horizon = horizon;
  a->nq = grit_model_nq(model);
  a->nv = grit_model_nv(model);
  a->nu = grit_model_nu(model);
  a->na = grit_model_na(model);
  a->lastk[0] = a->lastk[1] = -1;
  for (int i = 0; i < nu; ++i) {
    grit_actuator_def act;
    const int lim = grit_model_actuator(model, i, &act) == GRIT_OK && act.ctrl_limited;
    a->ctrl_range[2 * i] = lim ? act.ctrl_range[0] : -INFINITY;
    a->ctrl_range[2 * i + 1] = lim ? act.ctrl_range[1] : INFINITY;
  }
  for (int i = 0; i < 2 * horizon; ++i) {
    grit_status s = grit_data_create(model, &a->data[i]);
    if (s == GRIT_OK && settings) s = grit_data_set_step_settings(a->data[i], settings);
    if (s != GRIT_OK) {
      if (msg)
        snprintf(msg, GRIT_MESSAGE_SIZE, "knot data %d: %s", i,
                 a->data[i] ? grit_data_last_error(a->data[i]) : grit_status_string(s));
      grit_ilqr_grit_free(a);
      return s;
    }
  }
  *out = a;
  return GRIT_OK;
}

grit_data *grit_ilqr_grit_knot_data(grit_ilqr_grit *a, int slot, int k) {
  if (!a || slot < 0 || slot > 1 || k < 0 || k >= a->horizon) return NULL;
  return a->data[slot * a->horizon + k];
}

const char *grit_ilqr_grit_last_error(const grit_ilqr_grit *a) { return a ? a->msg : "adapter is NULL"; }

void grit_ilqr_grit_state(const grit_data *d, double *x) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), na = grit_model_na(m);
  memcpy(x, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(x + nq, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  if (na > 0) memcpy(x + nq + nv, grit_data_act(d), sizeof(double) * (size_t)na);
}

static int step_cb(void *ctx, int slot, int k, const double *x, const double *u, double *x_next) {
  grit_ilqr_grit *a = ctx;
  grit_data *d = grit_ilqr_grit_knot_data(a, slot, k);
  grit_status s = GRIT_OK;
  if (!d) s = GRIT_ERR_INVALID_ARGUMENT;
  if (!s) s = grit_data_set_qpos(d, x, a->nq);
  if (!s) s = grit_data_set_qvel(d, x + a->nq, a->nv);
  if (!s && a->na > 0) s = grit_data_set_act(d, x + a->nq + a->nv, a->na);
  if (!s) s = grit_data_set_ctrl(d, u, a->nu);
  /* A rollout steps its knots in order, each from the last one's result: knot k continues the trajectory
   * of knot k - 1's step, whose start velocity the slot kept, so its step warm-starts as the same step
   * of one data replaying the plan would (grit_data_set_warm_start); the plan replays as planned. */
  double *vl = a->vlast + (size_t)slot * (size_t)a->nv;
  if (!s && k > 0 && a->lastk[slot] == k - 1) s = grit_data_set_warm_start(d, vl, a->nv);
  if (!s) memcpy(vl, x + a->nq, sizeof(double) * (size_t)a->nv), a->lastk[slot] = k;
  if (!s) s = grit_step(d);
  if (s) {
    a->lastk[slot] = -1;
    /* Only the thread running the rollout writes here (jacobians write nothing). */
    snprintf(a->msg, GRIT_MESSAGE_SIZE, "step at knot %d: %s", k, d ? grit_data_last_error(d) : "bad knot");
    return 1;
  }
  grit_ilqr_grit_state(d, x_next);
  return 0;
}

/* The Jacobians of the smoothed step at (x, u) (derivative smoothing): knot k's own data takes the step
 * again under smoothing a->jdelta; only this thread touches jdata[k]. */
static int smoothed_jacobians(grit_ilqr_grit *a, int k, const double *x, const double *u, double *fx, double *fu) {
  grit_data *d = a->jdata[k];
  grit_status s = grit_data_set_qpos(d, x, a->nq);
  if (!s) s = grit_data_set_qvel(d, x + a->nq, a->nv);
  if (!s && a->na > 0) s = grit_data_set_act(d, x + a->nq + a->nv, a->na);
  if (!s) s = grit_data_set_ctrl(d, u, a->nu);
  if (!s) s = grit_step(d);
  if (!s) s = grit_step_derivatives(d, fx, fu, NULL, 0, NULL);
  return s != GRIT_OK;
}

/* A control exactly at its actuator's ctrl_range bound (where grit_ilqr_clamp puts a saturated control
 * when the solver's bounds are the actuator's): the step clamps it, and the clamp's derivative at the tie
 * is the mean of the two sides (grit_dual_fmax / fmin), half the column inside the range, whose other
 * side is 0. The solver's box QP moves such a control only inward, so its column is the inner one-sided
 * derivative: twice the mean. With the mean, the gradient at a saturated optimum read as pointing inward
 * (R u against half of f_u' p) and the arm of docs/ilqr.md ("A smooth arm at its motor limits")
 * stalled short of its optimum. */
static void saturated_columns(const grit_ilqr_grit *a, const double *u, double *fu) {
  const int n = 2 * a->nv + a->na, m = a->nu;
  for (int i = 0; i < m; ++i)
    if (u[i] == a->ctrl_range[2 * i] || u[i] == a->ctrl_range[2 * i + 1])
      for (int r = 0; r < n; ++r) fu[r * m + i] *= 2;
}

static int jacobians_cb(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                        double *fu) {
  (void)thread;
  grit_ilqr_grit *a = ctx;
  int bad;
  if (a->jdelta > 0 && k >= 0 && k < a->horizon) {
    bad = smoothed_jacobians(a, k, x, u, fx, fu);
  } else { /* the knot's data took exactly this step: its derivatives need nothing else */
    grit_data *d = grit_ilqr_grit_knot_data(a, slot, k);
    bad = !d || grit_step_derivatives(d, fx, fu, NULL, 0, NULL) != GRIT_OK;
  }
  if (!bad) saturated_columns(a, u, fu);
  return bad;
}

static void difference_cb(void *ctx, const double *xa, const double *xb, double *dx) {
  grit_ilqr_grit *a = ctx;
  grit_position_difference(a->model, xa, xb, dx);
  for (int i = 0; i < a->nv + a->na; ++i) dx[a->nv + i] = xb[a->nq + i] - xa[a->nq + i]; /* v, then act */
}

grit_ilqr_dynamics grit_ilqr_grit_dynamics(grit_ilqr_grit *a) {
  grit_ilqr_dynamics d;
  memset(&d, 0, sizeof d);
  if (!a) return d;
  d.nx = a->nq + a->nv + a->na; /* x = (q, v, act) */
  d.ndx = 2 * a->nv + a->na;
  d.nu = a->nu;
  d.ctx = a;
  d.step = step_cb;
  d.jacobians = jacobians_cb;
  d.difference = difference_cb;
  return d;
}

grit_status grit_ilqr_grit_set_smoothing(grit_ilqr_grit *a, double delta) {
  if (!a || !(delta >= 0) || !isfinite(delta)) return GRIT_ERR_INVALID_ARGUMENT;
  for (int i = 0; i < 2 * a->horizon; ++i) {
    grit_step_settings st = grit_data_step_settings(a->data[i]);
    st.gradient_smoothing = delta;
    grit_status s = grit_data_set_step_settings(a->data[i], &st);
    if (s) {
      snprintf(a->msg, GRIT_MESSAGE_SIZE, "smoothing: %s", grit_data_last_error(a->data[i]));
      return s;
    }
  }
  return GRIT_OK;
}

/* Creates the Jacobians' knot data (derivative smoothing) once; on failure none. */
static grit_status jdata_create(grit_ilqr_grit *a) {
  if (a->jdata) return GRIT_OK;
  if (!(a->jdata = calloc((size_t)a->horizon, sizeof *a->jdata))) return GRIT_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < a->horizon; ++i) {
    grit_status s = grit_data_create(a->model, &a->jdata[i]);
    if (s) {
      snprintf(a->msg, GRIT_MESSAGE_SIZE, "derivative smoothing: knot data %d: %s", i, grit_status_string(s));
      for (int j = 0; j < i; ++j) grit_data_free(a->jdata[j]);
      free(a->jdata);
      a->jdata = NULL;
      return s;
    }
  }
  return GRIT_OK;
}

grit_status grit_ilqr_grit_set_derivative_smoothing(grit_ilqr_grit *a, double delta) {
  if (!a || !(delta >= 0) || !isfinite(delta)) return GRIT_ERR_INVALID_ARGUMENT;
  a->jdelta = 0;
  if (delta == 0) return GRIT_OK;
  grit_status s = jdata_create(a);
  for (int i = 0; i < a->horizon && !s; ++i) { /* the knot's settings, smoothed */
    grit_step_settings st = grit_data_step_settings(a->data[i]);
    st.gradient_smoothing = delta;
    s = grit_data_set_step_settings(a->jdata[i], &st);
    if (s) snprintf(a->msg, GRIT_MESSAGE_SIZE, "derivative smoothing: %s", grit_data_last_error(a->jdata[i]));
  }
  if (!s) a->jdelta = delta;
  return s;
}

/* r += one solve's counts and times (the stop and costs are set by the caller). */
static void add_result(grit_ilqr_result *r, const grit_ilqr_result *x) {
  r->iterations += x->iterations;
  r->multiplier_updates += x->multiplier_updates;
  r->rollouts += x->rollouts;
  r->no_step_iterations += x->no_step_iterations;
  r->rejected_line_searches += x->rejected_line_searches;
  r->derivative_evaluations += x->derivative_evaluations;
  r->t_rollout += x->t_rollout;
  r->t_derivatives += x->t_derivatives;
  r->t_backward += x->t_backward;
  r->t_total += x->t_total;
}

/* One stage of a multi-stage solve (annealed, squeezed) begun at t_start: the solver's max_time is the
 * whole solve's budget, so the stage gets what is left of it (with nothing left, its initial rollout
 * and then TIME_LIMIT, as a solve with a spent budget). */
static grit_status stage_solve(grit_ilqr *s, double t_start, grit_ilqr_result *r) {
  const double budget = s->opt.max_time;
  if (!(budget > 0)) return grit_ilqr_solve(s, r);
  s->opt.max_time = fmax(budget - (grit_ilqr_now() - t_start), DBL_MIN); /* > 0: still a budget */
  const grit_status st = grit_ilqr_solve(s, r);
  s->opt.max_time = budget;
  return st;
}

/* A stage's stop that ends the whole multi-stage solve: the user's stop request or the time budget
 * (errors end it too). */
static int ends_solve(const grit_ilqr_result *r) {
  return r->stop == GRIT_ILQR_USER_STOP || r->stop == GRIT_ILQR_TIME_LIMIT;
}

grit_status grit_ilqr_grit_solve_annealed(grit_ilqr_grit *a, grit_ilqr *s, double delta0, double factor,
                                          double delta_min, grit_ilqr_result *result) {
  if (!a || !s || !(delta0 >= 0) || !(factor > 0 && factor < 1) || !(delta_min > 0)) return GRIT_ERR_INVALID_ARGUMENT;
  grit_ilqr_result total, r;
  memset(&total, 0, sizeof total);
  int first = 1;
  grit_status st = GRIT_OK;
  const double t_start = grit_ilqr_now();
  double use = 0;
  for (double delta = delta0;; delta = delta >= delta_min ? delta * factor : 0) {
    use = delta >= delta_min ? delta : 0;
    st = grit_ilqr_grit_set_smoothing(a, use);
    if (!st) st = grit_ilqr_dynamics_changed(s);
    if (!st) st = stage_solve(s, t_start, &r);
    if (st) break;
    add_result(&total, &r);
    if (first) total.initial_cost = r.initial_cost;
    first = 0;
    if (use == 0 || ends_solve(&r)) { /* the exact stage, or a user stop or the time budget in any stage */
      total.stop = r.stop;
      total.converged = r.converged;
      total.cost = r.cost;
      total.violation = r.violation;
      total.path_violation = r.path_violation;
      total.gradient = r.gradient;
      break;
    }
  }
  if (st) grit_ilqr_grit_set_smoothing(a, 0);
  if (!st && use > 0) { /* ended in a smoothed stage (a stop): the adapter ends on the exact model */
    st = grit_ilqr_grit_set_smoothing(a, 0);
    if (!st) st = grit_ilqr_dynamics_changed(s);
  }
  if (result) *result = total;
  return st;
}

/* ------------------------------------------------------------------------- grip to squeeze */

/* Actuator a's hinge or slide dof and its generalized force per unit control at the data's state,
 * b = gear d f_a / d u_a (a difference of grit_actuator_forces; the force is affine in the control),
 * or -1 for another transmission or a force through an activation (b = 0). u is scratch (nu). */
static int actuator_column(grit_data *d, const grit_model *m, int a, double *u, double *f, double *b) {
  grit_actuator_def def;
  *b = 0;
  if (grit_model_actuator(m, a, &def) != GRIT_OK || def.trntype != GRIT_TRN_JOINT || def.joint < 0) return -1;
  const grit_joint_type t = grit_model_joint_type(m, def.joint);
  if (t != GRIT_JOINT_HINGE && t != GRIT_JOINT_SLIDE) return -1;
  const int nu = grit_model_nu(m);
  const double c0 = def.ctrl_limited ? 0.5 * (def.ctrl_range[0] + def.ctrl_range[1]) : 0;
  const double h = def.ctrl_limited ? 0.25 * (def.ctrl_range[1] - def.ctrl_range[0]) : 1;
  if (!(h > 0)) return -1;
  memset(u, 0, sizeof(double) * (size_t)nu);
  u[a] = c0;
  if (grit_data_set_ctrl(d, u, nu) || grit_actuator_forces(d, f)) return -1;
  const double f0 = f[a];
  u[a] = c0 + h;
  if (grit_data_set_ctrl(d, u, nu) || grit_actuator_forces(d, f)) return -1;
  *b = def.gear * (f[a] - f0) / h;
  return *b != 0 ? grit_model_joint_dofadr(m, def.joint) : -1;
}

/* tau (nv) += the generalized force that presses contact c's two bodies together by fn (N) along its
 * normal: J0' n fn - J1' n fn (the normal points from body 0 to body 1). Returns 0 when either body
 * is static (its point Jacobian is zero: a support, not a grip), 1 when added. J is scratch (6 nv). */
static int press_pair(const grit_data *d, int nv, const grit_contact_info *c, double fn, double *J, double *tau) {
  double *J1 = J + 3 * nv;
  if (grit_point_jacobian(d, c->body[0], c->pos, J, NULL) || grit_point_jacobian(d, c->body[1], c->pos, J1, NULL))
    return 0;
  double s0 = 0, s1 = 0;
  for (int i = 0; i < 3 * nv; ++i) s0 += fabs(J[i]), s1 += fabs(J1[i]);
  if (s0 == 0 || s1 == 0) return 0;
  const double n[3] = {c->frame[2], c->frame[5], c->frame[8]};
  for (int j = 0; j < nv; ++j)
    for (int r = 0; r < 3; ++r) tau[j] += (J[r * nv + j] - J1[r * nv + j]) * n[r] * fn;
  return 1;
}

/* The generalized force (nv) that makes up, at every contact of two moving bodies in the data's last
 * step, the normal force its friction used: (margin |gamma_t| / mu - gamma_n) / dt where positive. */
static void grip_deficit(const grit_data *d, const grit_model *m, double margin, double *J, double *tau) {
  const int nv = grit_model_nv(m), nc = grit_data_ncontacts(d);
  const double dt = grit_model_options(m).timestep;
  memset(tau, 0, sizeof(double) * (size_t)nv);
  for (int i = 0; i < nc; ++i) {
    grit_contact_info c;
    grit_contact_diagnostics g;
    if (grit_data_contact(d, i, &c) || grit_data_contact_diagnostics(d, i, &g) || !(g.mu > 0)) continue;
    const double fn = (margin * hypot(c.impulse[0], c.impulse[1]) / g.mu - c.impulse[2]) / dt;
    if (fn > 0) press_pair(d, nv, &c, fn, J, tau);
  }
}

/* Knot k's controls u_k += the least-squares controls of the generalized force tau on the actuated
 * dofs: actuator a on dof d gets b_a tau_d / sum of b^2 over d's actuators (each dof's own share). */
static void add_controls(const int *dof, const double *b, int nu, const double *tau, double *uk) {
  for (int a = 0; a < nu; ++a) {
    if (dof[a] < 0) continue;
    double s = 0;
    for (int c = 0; c < nu; ++c)
      if (dof[c] == dof[a]) s += b[c] * b[c];
    uk[a] += b[a] * tau[dof[a]] / s;
  }
}

grit_status grit_ilqr_grit_squeeze_from_grip(grit_ilqr_grit *a, const double *x0, double margin, double *u) {
  if (!a || !x0 || !u || !(margin > 0) || !isfinite(margin)) return GRIT_ERR_INVALID_ARGUMENT;
  const int nu = a->nu, nv = a->nv;
  grit_data *d = NULL;
  grit_status s = grit_data_create(a->model, &d);
  double *w = calloc((size_t)(7 * nv + 3 * nu + 1), sizeof(double)); /* J 6 nv, tau nv; f, b, uu nu */
  int *dof = calloc((size_t)(nu > 0 ? nu : 1), sizeof(int));
  if (!s && (!w || !dof)) s = GRIT_ERR_OUT_OF_MEMORY;
  double *J = w, *tau = w + 6 * nv, *f = tau + nv, *b = f + nu, *uu = b + nu;
  if (!s) {
    const grit_step_settings st = grit_data_step_settings(a->data[0]); /* the knots' own model */
    s = grit_data_set_step_settings(d, &st);
  }
  if (!s) s = grit_data_set_qpos(d, x0, a->nq);
  if (!s) s = grit_data_set_qvel(d, x0 + a->nq, nv);
  if (!s && a->na > 0) s = grit_data_set_act(d, x0 + a->nq + nv, a->na);
  for (int i = 0; i < nu && !s; ++i) dof[i] = actuator_column(d, a->model, i, uu, f, &b[i]);
  for (int k = 0; k < a->horizon && !s; ++k) {
    double *uk = u + (size_t)k * nu;
    s = grit_data_set_ctrl(d, uk, nu);
    if (!s) s = grit_step(d);
    if (s) break;
    grip_deficit(d, a->model, margin, J, tau);
    add_controls(dof, b, nu, tau, uk);
  }
  if (s) snprintf(a->msg, GRIT_MESSAGE_SIZE, "squeeze from grip: %s", d ? grit_data_last_error(d) : grit_status_string(s));
  grit_data_free(d);
  free(w);
  free(dof);
  return s;
}

/* Whether the exact solve from the squeezed plan (b) did at least as well as the one from the plan as
 * it was (a): a cost not higher, with constraints (final and path) violated no more than a's or than
 * 1e-6 (grit_ilqr's default tol_constraint). */
static int squeeze_kept(const grit_ilqr_result *a, const grit_ilqr_result *b) {
  const double va = fmax(a->violation, a->path_violation), vb = fmax(b->violation, b->path_violation);
  return vb <= fmax(va, 1e-6) && b->cost <= a->cost;
}

/* One exact solve (a stage begun at t_start) from controls u (horizon x nu); its result into r, its
 * final controls into u. */
static grit_status exact_solve_from(grit_ilqr_grit *a, grit_ilqr *s, double t_start, double *u, grit_ilqr_result *r) {
  grit_status st = grit_ilqr_set_controls(s, u);
  if (!st) st = grit_ilqr_dynamics_changed(s);
  if (!st) st = stage_solve(s, t_start, r);
  if (!st) memcpy(u, grit_ilqr_controls(s), sizeof(double) * (size_t)a->horizon * (size_t)a->nu);
  return st;
}

grit_status grit_ilqr_grit_solve_squeezed(grit_ilqr_grit *a, grit_ilqr *s, double delta, double margin,
                                          grit_ilqr_result *result) {
  if (!a || !s || !(delta > 0) || !isfinite(delta) || !(margin > 0) || !isfinite(margin))
    return GRIT_ERR_INVALID_ARGUMENT;
  grit_ilqr_result r1, ra, rb, total;
  memset(&r1, 0, sizeof r1), memset(&ra, 0, sizeof ra), memset(&rb, 0, sizeof rb), memset(&total, 0, sizeof total);
  const size_t n = (size_t)a->horizon * (size_t)a->nu;
  const double t_start = grit_ilqr_now();
  double *ua = malloc(sizeof(double) * (2 * n + 1)), *ub = NULL;
  grit_status st = ua ? grit_ilqr_grit_set_smoothing(a, delta) : GRIT_ERR_OUT_OF_MEMORY;
  if (ua) ub = ua + n;
  if (!st) st = grit_ilqr_dynamics_changed(s);
  if (!st) st = stage_solve(s, t_start, &r1);
  grit_ilqr_result *last = &r1; /* a user stop or the time budget ends the solve at the stage it ended */
  if (!st && !ends_solve(&r1)) { /* the smoothed plan (a) and its grip turned into a squeeze under delta (b) */
    memcpy(ua, grit_ilqr_controls(s), sizeof(double) * n);
    memcpy(ub, ua, sizeof(double) * n);
    st = grit_ilqr_grit_squeeze_from_grip(a, grit_ilqr_states(s), margin, ub); /* row 0: x0 */
    if (!st) st = grit_ilqr_grit_set_smoothing(a, 0);
    if (!st) st = exact_solve_from(a, s, t_start, ua, &ra);
    last = &ra;
    if (!st && !ends_solve(&ra)) {
      st = exact_solve_from(a, s, t_start, ub, &rb);
      last = &rb;
    }
    if (!st && last == &rb && !ends_solve(&rb) && !squeeze_kept(&ra, &rb)) {
      /* the squeeze did worse on the exact model: back to plan a */
      add_result(&total, &rb);
      memset(&rb, 0, sizeof rb);
      st = exact_solve_from(a, s, t_start, ua, &rb);
    }
  }
  free(ua);
  if (st) grit_ilqr_grit_set_smoothing(a, 0);
  if (!st && last == &r1) { /* stopped in the smoothed stage: the adapter ends on the exact model */
    st = grit_ilqr_grit_set_smoothing(a, 0);
    if (!st) st = grit_ilqr_dynamics_changed(s);
  }
  if (result) { /* the last solve's stop and cost; the counts and times of all */
    grit_ilqr_result *parts[3] = {&r1, &ra, &rb};
    for (int i = 0; i < 3; ++i)
      if (parts[i] != last) add_result(&total, parts[i]);
    *result = *last;
    add_result(result, &total);
    result->initial_cost = r1.initial_cost;
  }
  return st;
}
