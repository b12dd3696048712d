/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr_smoothing.c — planning across separation with gradient smoothing (issue 28), public API
 * only: a 2-dof finger starting at zero force 3 cm behind a free box (examples/push_box_scene.h) must
 * push it 10 cm to a pose. Without smoothing the solve stops at once with GRIT_ILQR_ZERO_GRADIENT; with
 * gradient_smoothing = 0.05 m annealed to 0 (grit_ilqr_grit_solve_annealed) the plan, checked on the
 * exact model, brings the box within 1 cm of the target; so does derivative smoothing (exact rollouts,
 * the Jacobians of the step smoothed by 0.05 m) followed by a solve with the exact Jacobians, so does
 * the force at a distance (gradient_smoothing_barrier) in place of the film, and so does the schedule
 * that turns the plan's grip into a squeeze (grit_ilqr_grit_solve_squeezed), made for grasps. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_box_scene.h"

enum { H = 40 };

typedef struct pusher {
  grit_model *m;
  grit_ilqr_grit *a;
  grit_ilqr *s;
  double x0[32], goal[32], Q[16 * 16], Qf[16 * 16], R[4], lo[2], hi[2];
  int nq, nv, nx;
} pusher;

static void pusher_make(pusher *p, double barrier) {
  memset(p, 0, sizeof *p);
  char msg[GRIT_MESSAGE_SIZE];
  p->m = push_box_build(0.4, 0.03, 0.0, msg);
  cr_assert_not_null(p->m, "%s", msg);
  p->nq = grit_model_nq(p->m), p->nv = grit_model_nv(p->m), p->nx = p->nq + p->nv;
  cr_assert_eq(2 * p->nv, 16);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(p->m, &d), GRIT_OK);
  grit_ilqr_grit_state(d, p->x0);
  grit_data_free(d);
  memcpy(p->goal, p->x0, sizeof p->goal);
  p->goal[PUSH_BOX_Q] += 0.10;
  const int n = 16;
  p->Q[2 * n + 2] = p->Q[3 * n + 3] = 10; /* box x, y */
  p->Q[7 * n + 7] = 1;                    /* box yaw */
  for (int i = 0; i < n * n; ++i) p->Qf[i] = 100 * p->Q[i];
  for (int i = p->nv + 2; i < p->nv + 5; ++i) p->Qf[i * n + i] = 10; /* the box at rest at the end */
  p->R[0] = p->R[3] = 1e-3;
  p->lo[0] = p->lo[1] = -PUSH_FORCE_MAX;
  p->hi[0] = p->hi[1] = PUSH_FORCE_MAX;
  char m2[GRIT_MESSAGE_SIZE];
  grit_step_settings sst = grit_default_step_settings();
  sst.gradient_smoothing_barrier = barrier;
  cr_assert_eq(grit_ilqr_grit_create(p->m, H, &sst, &p->a, m2), GRIT_OK, "%s", m2);
  grit_ilqr_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.dynamics = grit_ilqr_grit_dynamics(p->a);
  pr.horizon = H;
  pr.x0 = p->x0;
  pr.x_goal = p->goal;
  pr.Q = p->Q;
  pr.Qf = p->Qf;
  pr.R = p->R;
  pr.u_min = p->lo;
  pr.u_max = p->hi;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 150;
  o.tol_cost = 1e-4;
  cr_assert_eq(grit_ilqr_create(&pr, &o, &p->s, m2), GRIT_OK, "%s", m2); /* controls: zero force */
}

static void pusher_free(pusher *p) {
  grit_ilqr_free(p->s);
  grit_ilqr_grit_free(p->a);
  grit_model_free(p->m);
}

/* The box's distance from its target after replaying the plan's controls on the exact model. */
static double replay_error(const pusher *p) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(p->m, &d), GRIT_OK);
  const double *u = grit_ilqr_controls(p->s);
  for (int k = 0; k < H; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u + 2 * k, 2), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  const double *q = grit_data_qpos(d);
  const double e = hypot(q[PUSH_BOX_Q] - p->goal[PUSH_BOX_Q], q[PUSH_BOX_Q + 1] - p->goal[PUSH_BOX_Q + 1]);
  grit_data_free(d);
  return e;
}

Test(ilqr_smoothing, a_finger_3_cm_away_has_no_gradient_without_smoothing) {
  pusher p;
  pusher_make(&p, 0);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(p.s, &r), GRIT_OK, "%s", grit_ilqr_last_error(p.s));
  cr_assert_eq(r.stop, GRIT_ILQR_ZERO_GRADIENT, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_eq(r.iterations, 1);
  cr_assert(!r.converged);
  pusher_free(&p);
}

/* The pusher from zero force 3 cm behind the box, annealed from 0.05 m by halving to 5 mm, then the
 * exact model (kappa: gradient_smoothing_barrier; 0, the film); the plan replayed on the exact model must
 * leave the box within 1 cm of its target (issue 28's bound). */
static void pusher_reaches_its_pose_annealed(double kappa, const char *what) {
  pusher p;
  pusher_make(&p, kappa);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_grit_solve_annealed(p.a, p.s, 0.05, 0.5, 0.005, &r), GRIT_OK, "%s / %s",
               grit_ilqr_last_error(p.s), grit_ilqr_grit_last_error(p.a));
  const double err = replay_error(&p);
  cr_log_info("pusher with %s: %d iterations in all, last stop %d (%s), cost %.4g -> %.4g, box %.2f mm from the "
              "target", what, r.iterations, (int)r.stop, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost,
              1e3 * err);
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its target", 1e3 * err);
  cr_assert(r.stop != GRIT_ILQR_NOT_FINITE);
  pusher_free(&p);
}

Test(ilqr_smoothing, a_finger_3_cm_away_pushes_the_box_to_its_pose_with_smoothing) {
  pusher_reaches_its_pose_annealed(0, "smoothing");
}

/* Derivative smoothing (grit_ilqr_grit_set_derivative_smoothing): every rollout on the exact model, the
 * Jacobians those of the step smoothed by 0.05 m at the same states and controls. The plan, judged on
 * the exact model throughout, reaches the pose; then a solve with the exact Jacobians finishes it. */
Test(ilqr_smoothing, a_finger_3_cm_away_pushes_the_box_with_derivative_smoothing) {
  pusher p;
  pusher_make(&p, 0);
  grit_ilqr_result r, r2;
  cr_assert_eq(grit_ilqr_grit_set_derivative_smoothing(p.a, 0.05), GRIT_OK, "%s", grit_ilqr_grit_last_error(p.a));
  cr_assert_eq(grit_ilqr_dynamics_changed(p.s), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(p.s, &r), GRIT_OK, "%s", grit_ilqr_last_error(p.s));
  const double err1 = replay_error(&p);
  cr_assert_eq(grit_ilqr_grit_set_derivative_smoothing(p.a, 0), GRIT_OK);
  cr_assert_eq(grit_ilqr_dynamics_changed(p.s), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(p.s, &r2), GRIT_OK, "%s", grit_ilqr_last_error(p.s));
  const double err = replay_error(&p);
  cr_log_info("pusher with derivative smoothing 0.05 m: %d iterations, stop %s, cost %.4g -> %.4g, box %.2f mm from "
              "the target; then exact Jacobians: %d iterations, stop %s, cost %.4g, box %.2f mm",
              r.iterations, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost, 1e3 * err1, r2.iterations,
              grit_ilqr_stop_string(r2.stop), r2.cost, 1e3 * err);
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its target", 1e3 * err);
  pusher_free(&p);
}

/* The same with the force at a distance in place of the film (gradient_smoothing_barrier = 0.3,
 * docs/contact.md): the finger 3 cm behind the box feels a normal force within 5 cm, and the plan,
 * annealed to the exact model, reaches the pose as with the film (0.17 mm, 17 iterations). */
Test(ilqr_smoothing, a_finger_3_cm_away_pushes_the_box_with_the_force_at_a_distance) {
  pusher_reaches_its_pose_annealed(0.3, "the force at a distance");
}

/* Grip to squeeze on the pusher (grit_ilqr_grit_solve_squeezed: one solve at 0.05 m, then the exact
 * model from that plan and from it with its grip turned into a squeeze with margin 3). The pusher's plan
 * also leans on the film's grip (about 1.3 N of friction at rest against the box at the end), so the
 * squeeze presses the finger by ~10 N and the exact solve from it ends worse (the box left alone,
 * 100 mm; margins up to 2.2 do no harm); the schedule keeps the plan without the squeeze, and the pose
 * is reached as with annealing. */
Test(ilqr_smoothing, a_finger_3_cm_away_pushes_the_box_with_the_grip_squeezed) {
  pusher p;
  pusher_make(&p, 0);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_grit_solve_squeezed(p.a, p.s, 0.05, 3, &r), GRIT_OK, "%s / %s", grit_ilqr_last_error(p.s),
               grit_ilqr_grit_last_error(p.a));
  const double err = replay_error(&p);
  cr_log_info("pusher, smoothing 0.05 m, grip squeezed (margin 3), then exact: %d iterations, stop %s, cost %.4g -> "
              "%.4g, box %.2f mm from the target", r.iterations, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost,
              1e3 * err);
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its target", 1e3 * err);
  cr_assert(r.stop != GRIT_ILQR_NOT_FINITE);
  pusher_free(&p);
}

/* grit_ilqr_grit_squeeze_from_grip leaves controls alone where no two moving bodies touch (the finger at
 * zero force stays 3 cm behind the box: nothing to press), and adds, where the finger presses the box,
 * the force its friction needs times the margin (along the face's normal, here x: at margin 1 nothing,
 * since a pushing contact's friction stays below mu times its normal impulse); it checks its arguments. */
Test(ilqr_smoothing, squeeze_from_grip_presses_only_moving_contacts) {
  pusher p;
  pusher_make(&p, 0);
  double u[2 * H], u0[2 * H];
  memset(u, 0, sizeof u);
  cr_assert_eq(grit_ilqr_grit_squeeze_from_grip(p.a, p.x0, 3, u), GRIT_OK, "%s", grit_ilqr_grit_last_error(p.a));
  for (int i = 0; i < 2 * H; ++i) cr_assert_eq(u[i], 0.0, "control %d changed to %g without a contact", i, u[i]);
  for (int k = 0; k < H; ++k) u[2 * k] = 5, u[2 * k + 1] = 0; /* a push along x */
  memcpy(u0, u, sizeof u);
  cr_assert_eq(grit_ilqr_grit_squeeze_from_grip(p.a, p.x0, 1, u), GRIT_OK);
  for (int i = 0; i < 2 * H; ++i) cr_assert_float_eq(u[i], u0[i], 1e-9, "control %d: %g against %g", i, u[i], u0[i]);
  cr_assert_eq(grit_ilqr_grit_squeeze_from_grip(p.a, p.x0, 0, u), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_ilqr_grit_squeeze_from_grip(p.a, NULL, 1, u), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_ilqr_grit_solve_squeezed(p.a, p.s, 0, 3, NULL), GRIT_ERR_INVALID_ARGUMENT);
  pusher_free(&p);
}
