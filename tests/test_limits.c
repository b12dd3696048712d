/* SPDX-License-Identifier: Apache-2.0 */
/* test_limits.c — joint position limits as near-rigid one-sided constraints in the convex step.
 *
 * Closed form at rest against a limit: the momentum balance gives the impulse gamma = I dt alpha
 * (alpha: the free angular acceleration into the limit), and the limit's law gamma = -phi0 / (2 dt R)
 * with R = w / (4 pi^2), w = 1/I, gives the penetration -phi0 = dt^2 alpha / (2 pi^2). */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/grit.h"

static const double PI = 3.14159265358979323846;

/* A horizontal arm of mass m, centre of mass at distance l, on a hinge about y, with limits. */
static grit_model *arm(double m, double l, double lo, double hi, double dt) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_options o = grit_default_options();
  o.timestep = dt;
  grit_builder_set_options(b, &o);
  grit_body_def bd = grit_default_body_def();
  bd.mass = m;
  bd.com[0] = l;
  for (int i = 0; i < 9; ++i) bd.inertia[i] = 0;
  bd.inertia[0] = 1e-3;
  bd.inertia[4] = bd.inertia[8] = 0.01;
  int body;
  grit_builder_add_body(b, &bd, &body);
  grit_joint_def jd = grit_default_joint_def();
  jd.axis[0] = 0;
  jd.axis[1] = 1;
  jd.axis[2] = 0;
  jd.limited = 1;
  jd.range[0] = lo;
  jd.range[1] = hi;
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK);
  grit_model *model;
  cr_assert_eq(grit_builder_compile(b, &model), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return model;
}

Test(limits, resting_penetration_matches_closed_form) {
  const double m = 1.0, l = 0.5, hi = 0.3, dt = 1e-3, g = 9.81;
  grit_model *model = arm(m, l, -1.0, hi, dt);
  grit_data *d;
  grit_data_create(model, &d);
  for (int i = 0; i < 3000; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double q = grit_data_qpos(d)[0];
  /* gravity turns the arm about +y (x towards -z); torque m g l cos(q) about the hinge */
  const double I = 0.01 + m * l * l, alpha = m * g * l * cos(q) / I;
  const double expect = dt * dt * alpha / (2 * PI * PI);
  /* The fixed point is exact for the discrete step; 1e-6 relative covers the solver's tolerance. */
  cr_assert(fabs((q - hi) - expect) <= 1e-6 * expect, "penetration %.6g, closed form %.6g", q - hi, expect);
  cr_assert(fabs(grit_data_qvel(d)[0]) < 1e-9, "not at rest: v = %g", grit_data_qvel(d)[0]);
  grit_data_free(d);
  grit_model_free(model);
}

Test(limits, a_fast_swing_is_stopped_without_passing_through) {
  const double dt = 1e-3, hi = 0.3;
  grit_model *model = arm(1.0, 0.5, -0.3, hi, dt);
  grit_data *d;
  grit_data_create(model, &d);
  double v = 20.0; /* rad/s: reaches the limit in 15 steps */
  grit_data_set_qvel(d, &v, 1);
  double qmax = -1;
  for (int i = 0; i < 500; ++i) {
    cr_assert_eq(grit_step(d), GRIT_OK);
    qmax = fmax(qmax, grit_data_qpos(d)[0]);
  }
  /* The near-rigid limit stops the swing within about one step of travel: at most v dt past it. */
  cr_assert(qmax - hi < v * dt, "overshoot %g rad", qmax - hi);
  cr_assert(grit_data_qpos(d)[0] <= hi + 1e-4 && grit_data_qpos(d)[0] >= -0.3 - 1e-4);
  grit_step_stats st;
  grit_data_step_stats(d, &st);
  /* at rest against the upper limit only that limit lies within the step's window (constraints.h);
   * the lower one, 0.6 rad away, does not enter the problem */
  cr_assert_eq(st.nconstraints, 1);
  /* at most one Newton iteration; none when the free motion v* is already the minimizer (the limit
   * without impulse there: the solver starts such an island at v*, solver.c island_free) */
  cr_assert(st.newton_iters <= 1, "%d Newton iterations at rest", st.newton_iters);
  grit_data_free(d);
  grit_model_free(model);
}

/* A joint that starts outside its range (the dm_control hopper's knee: range [5, 150] degrees, q = 0,
 * dt = 5 ms). A violation within the band `limit_width` (1 mrad) is removed in one step, its excess at
 * the speed excess / (dt + tau), tau = 2 tc dr^2 = 0.04 s for the default solreflimit:
 * v_hat = 0.001 / (2 dt) + 0.0863 / 0.045 = 2.02 rad/s, not the 8.7 rad/s of a one-step correction of
 * the whole violation (MuJoCo 2.2.2: 1.7 rad/s). No gravity: the limit alone acts. The near-rigid R
 * lets the velocity reach v_hat / (1 + R/w) = v_hat / (1 + 1/(4 pi^2)). */
Test(limits, an_initial_violation_is_corrected_at_a_bounded_speed) {
  const double dt = 0.005, lo = 5 * PI / 180, hi = 150 * PI / 180, tau = 0.04, width = 0.001;
  grit_builder *b;
  grit_builder_create(&b);
  grit_options o = grit_default_options();
  o.timestep = dt;
  o.gravity[2] = 0;
  grit_builder_set_options(b, &o);
  grit_body_def bd = grit_default_body_def();
  int body;
  grit_builder_add_body(b, &bd, &body);
  grit_joint_def jd = grit_default_joint_def();
  jd.limited = 1;
  jd.range[0] = lo;
  jd.range[1] = hi;
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK);
  grit_model *model;
  cr_assert_eq(grit_builder_compile(b, &model), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  grit_data *d;
  grit_data_create(model, &d);
  cr_assert_eq(grit_step(d), GRIT_OK);
  const double vhat = width / (2 * dt) + (lo - width) / (dt + tau);
  const double v1 = grit_data_qvel(d)[0], expect = vhat / (1 + 1 / (4 * PI * PI));
  cr_log_info("first-step velocity out of a 5 degree violation at 5 ms: %.4g rad/s", v1);
  cr_assert(fabs(v1 - expect) < 1e-6 * expect, "first-step velocity %g rad/s, expected %g", v1, expect);
  cr_assert(v1 < 2.0, "kick %g rad/s", v1);
  /* the violation then decays; the joint is back in its range within a few time scales */
  for (int i = 0; i < 200; ++i) cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert(grit_data_qpos(d)[0] > lo - 1e-3, "q = %g after 1 s", grit_data_qpos(d)[0]);
  grit_data_free(d);
  grit_model_free(model);
}
