/* SPDX-License-Identifier: Apache-2.0 */
/* ilqr_task_util.h — shared by the iLQR task tests (test_ilqr_tasks.c, test_ilqr_tasks_swing_hop.c): bodies
 * on limited slides or hinges with force-limited actuators, geometries, compiling, replaying controls on the
 * exact model, the honesty of a stop, and a task (model, adapter, solver, weights) with its solver setup.
 * Everything is static inline so each test file uses what it needs without unused-function warnings. */
#ifndef GRIT_TESTS_ILQR_TASK_UTIL_H
#define GRIT_TESTS_ILQR_TASK_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"

static const double PI = 3.14159265358979323846;

/* ------------------------------------------------------------------------------------- helpers */

/* A body on a slide (or hinge) joint with an actuator of force limit `umax` and, if `range` is given, a
 * position limit; returns the body. */
static inline int add_limited(grit_builder *b, int parent, const double pos[3], const double axis[3], double mass,
                       double umax, double damping, int hinge, const double *range) {
  grit_body_def bd = grit_default_body_def();
  bd.parent = parent;
  memcpy(bd.pos, pos, sizeof bd.pos);
  bd.mass = mass;
  memset(bd.inertia, 0, sizeof bd.inertia);
  bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 1e-4;
  int body = -1, joint = -1;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def j = grit_default_joint_def();
  j.type = hinge ? GRIT_JOINT_HINGE : GRIT_JOINT_SLIDE;
  memcpy(j.axis, axis, sizeof j.axis);
  j.damping = damping;
  if (range) j.limited = 1, j.range[0] = range[0], j.range[1] = range[1];
  cr_assert_eq(grit_builder_add_joint(b, body, &j, &joint), GRIT_OK, "%s", grit_builder_last_error(b));
  if (umax > 0) {
    grit_actuator_def act = grit_default_actuator_def();
    act.ctrl_limited = 1;
    act.ctrl_range[0] = -umax, act.ctrl_range[1] = umax;
    act.joint = joint;
    cr_assert_eq(grit_builder_add_actuator(b, &act, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  return body;
}

static inline int add_slide(grit_builder *b, int parent, const double pos[3], const double axis[3], double mass,
                     double umax, double damping, int hinge) {
  return add_limited(b, parent, pos, axis, mass, umax, damping, hinge, NULL);
}

static inline void add_geom(grit_builder *b, int body, grit_geom_type type, double s0, double s1, double s2,
                     const double pos[3], double mu) {
  grit_geom_def g = grit_default_geom_def();
  g.shape.type = type;
  g.shape.size[0] = s0, g.shape.size[1] = s1, g.shape.size[2] = s2;
  g.body = body;
  if (pos) memcpy(g.pos, pos, sizeof g.pos);
  g.friction = mu;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
}

static inline grit_model *compile(grit_builder *b) {
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* Replays controls u (N x nu) on the exact model from its initial state; the final state into x. */
static inline void replay(const grit_model *m, int N, const double *u, double *x) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nu = grit_model_nu(m);
  for (int k = 0; k < N; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u + (size_t)k * nu, nu), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  grit_ilqr_grit_state(d, x);
  grit_data_free(d);
}

/* The honesty of a stop: converged only with a gradient measure below the tolerance; a stalled or
 * zero-gradient stop is never converged. */
static inline void assert_honest(const grit_ilqr_result *r, const char *task) {
  if (r->converged) {
    cr_assert(r->stop == GRIT_ILQR_CONVERGED_COST || r->stop == GRIT_ILQR_CONVERGED_FEEDFORWARD, "%s", task);
    cr_assert_leq(r->gradient, grit_ilqr_default_options().tol_gradient, "%s: converged with a gradient measure %g",
                  task, r->gradient);
  } else {
    cr_assert(r->stop != GRIT_ILQR_CONVERGED_COST && r->stop != GRIT_ILQR_CONVERGED_FEEDFORWARD, "%s", task);
  }
  cr_assert(r->stop != GRIT_ILQR_NOT_FINITE, "%s", task);
}

typedef struct task {
  grit_model *m;
  grit_ilqr_grit *a;
  grit_ilqr *s;
  int N, nx, ndx, nu;
  double *x0, *goal, *Q, *Qf, *R, *uref, *lo, *hi;
  grit_ilqr_cost_fn cost; /* optional general cost (NULL: none) */
} task;

static inline void task_alloc(task *t, grit_model *m, int N) {
  memset(t, 0, sizeof *t);
  t->m = m;
  t->N = N;
  t->nx = grit_model_nq(m) + grit_model_nv(m);
  t->ndx = 2 * grit_model_nv(m);
  t->nu = grit_model_nu(m);
  t->x0 = calloc((size_t)t->nx, sizeof(double));
  t->goal = calloc((size_t)t->nx, sizeof(double));
  t->Q = calloc((size_t)(t->ndx * t->ndx), sizeof(double));
  t->Qf = calloc((size_t)(t->ndx * t->ndx), sizeof(double));
  t->R = calloc((size_t)(t->nu * t->nu), sizeof(double));
  t->uref = calloc((size_t)t->nu, sizeof(double));
  t->lo = calloc((size_t)t->nu, sizeof(double));
  t->hi = calloc((size_t)t->nu, sizeof(double));
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_ilqr_grit_state(d, t->x0);
  grit_data_free(d);
  memcpy(t->goal, t->x0, sizeof(double) * (size_t)t->nx);
  for (int i = 0; i < t->nu; ++i) {
    grit_actuator_def act;
    grit_model_actuator(m, i, &act);
    t->lo[i] = act.ctrl_range[0], t->hi[i] = act.ctrl_range[1];
  }
}

/* One line per iteration when TASKS_LOG is set (for looking into a solve). */
static inline void log_it(void *ctx, const grit_ilqr_iteration *it) {
  (void)ctx;
  if (getenv("TASKS_LOG"))
    cr_log_info("it %d cost %.8g actual %.3g expected %.3g alpha %.4g mu %.3g ff %.3g grad %.3g bw %d rej %d clamped %d",
                it->iteration, it->cost, it->actual, it->expected, it->alpha, it->regularization, it->feedforward,
                it->gradient, it->backward_passes, it->rejected, it->clamped);
}

/* The solver over the adapter (default step settings) with the task's weights; controls u_ref. */
static inline void task_solver(task *t, const grit_ilqr_options *o) {
  char msg[GRIT_MESSAGE_SIZE];
  /* the rollouts solved ten times tighter than a simulation's steps, as examples/arm_push_ball's (a line
   * search compares costs a looser solve's error moves: docs/ilqr.md, stop 16) */
  grit_step_settings st = grit_default_step_settings();
  st.rel_tol *= 0.1;
  cr_assert_eq(grit_ilqr_grit_create(t->m, t->N, &st, &t->a, msg), GRIT_OK, "%s", msg);
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = grit_ilqr_grit_dynamics(t->a);
  p.horizon = t->N;
  p.x0 = t->x0;
  p.x_goal = t->goal;
  p.Q = t->Q;
  p.Qf = t->Qf;
  p.R = t->R;
  p.u_ref = t->uref;
  p.cost = t->cost;
  p.u_min = t->lo;
  p.u_max = t->hi;
  grit_ilqr_options oo = *o;
  if (!oo.log) oo.log = log_it;
  o = &oo;
  cr_assert_eq(grit_ilqr_create(&p, o, &t->s, msg), GRIT_OK, "%s", msg);
}

static inline void task_free(task *t) {
  grit_ilqr_free(t->s);
  grit_ilqr_grit_free(t->a);
  grit_model_free(t->m);
  free(t->x0), free(t->goal), free(t->Q), free(t->Qf), free(t->R), free(t->uref), free(t->lo), free(t->hi);
}

#endif
