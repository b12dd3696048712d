/* SPDX-License-Identifier: Apache-2.0 */
/* test_smoothing.c — gradient smoothing (grit_step_settings.gradient_smoothing, docs/contact.md): a
 * finger on an x slide 2 cm behind a box on an x slide (out of contact). Without smoothing the box's
 * next velocity does not depend on the finger's force (exactly 0); with delta = 5 cm the step
 * simulates the smoothed model, the pair is a contact candidate at rest, and grit_linearize's Jacobians
 * are the exact derivatives of that step: they match its central finite differences (Lagged and
 * Similar). Bad settings are refused. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grit/grit.h"

/* finger (sphere r 2 cm, 0.2 kg, force-controlled) at x = -0.07 - gap, box (half 5 cm, 0.5 kg) at the
 * origin, both on x slides with some damping; no ground (the contact of interest is the pair's). */
static grit_model *finger_and_box(double gap) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.01;
  opt.gravity[2] = 0;
  grit_builder_set_options(b, &opt);
  grit_body_def body = grit_default_body_def();
  body.parent = 0;
  body.pos[0] = -0.07 - gap;
  body.mass = 0.2;
  memset(body.inertia, 0, sizeof body.inertia);
  body.inertia[0] = body.inertia[4] = body.inertia[8] = 1e-4;
  int fb = 0, bb = 0, jf = 0;
  cr_assert_eq(grit_builder_add_body(b, &body, &fb), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def slide = grit_default_joint_def();
  slide.type = GRIT_JOINT_SLIDE;
  slide.axis[0] = 1, slide.axis[1] = 0, slide.axis[2] = 0;
  slide.damping = 0.5;
  cr_assert_eq(grit_builder_add_joint(b, fb, &slide, &jf), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_actuator_def act = grit_default_actuator_def();
  act.joint = jf;
  cr_assert_eq(grit_builder_add_actuator(b, &act, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_geom_def g = grit_default_geom_def();
  g.shape.type = GRIT_GEOM_SPHERE;
  g.shape.size[0] = 0.02;
  g.body = fb;
  g.friction = 0.5;
  g.stiffness = 1e4;
  g.dissipation = 0.5;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  body.pos[0] = 0;
  body.mass = 0.5;
  cr_assert_eq(grit_builder_add_body(b, &body, &bb), GRIT_OK, "%s", grit_builder_last_error(b));
  cr_assert_eq(grit_builder_add_joint(b, bb, &slide, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  g.shape.type = GRIT_GEOM_BOX;
  g.shape.size[0] = g.shape.size[1] = g.shape.size[2] = 0.05;
  g.body = bb;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static grit_data *data_with(const grit_model *m, grit_contact_model model, double smoothing) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_default_step_settings();
  st.contact_model = model;
  st.gradient_smoothing = smoothing;
  st.rel_tol = 1e-12; /* the finite differences below resolve the step's solution to this */
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* x+ of one step from x (q, v: 4 numbers) with control u. */
static void step_from(grit_data *d, const double x[4], double u, double xn[4]) {
  cr_assert_eq(grit_linearize(d, x, &u, NULL, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  memcpy(xn, grit_data_qpos(d), 2 * sizeof(double));
  memcpy(xn + 2, grit_data_qvel(d), 2 * sizeof(double));
}

static void check_against_fd(grit_contact_model model, const char *name) {
  grit_model *m = finger_and_box(0.02);
  grit_data *d = data_with(m, model, 0.05);
  /* the finger moving towards the box at 0.2 m/s, the box still; 2 N on the finger */
  const double x[4] = {0, 0, 0.2, 0}, u = 2.0;
  double A[16], B[4];
  cr_assert_eq(grit_linearize(d, x, &u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  grit_step_stats stats;
  grit_data_step_stats(d, &stats);
  cr_assert_geq(stats.ncontacts, 1, "%s: the pair 2 cm apart must be a candidate", name);
  /* central differences of the smoothed step: O(h^2) truncation (the law is C1 with a piecewise-smooth
   * second derivative: the state stays inside one piece for h = 1e-6) */
  const double h = 1e-6;
  double err = 0, scale = 0, xp[4], xm[4], fp[4], fm[4];
  for (int j = 0; j < 5; ++j) {
    memcpy(xp, x, sizeof xp);
    memcpy(xm, x, sizeof xm);
    double up = u, um = u;
    if (j < 4) xp[j] += h, xm[j] -= h;
    else up += h, um -= h;
    step_from(d, xp, up, fp);
    step_from(d, xm, um, fm);
    for (int i = 0; i < 4; ++i) {
      const double fd = (fp[i] - fm[i]) / (2 * h), an = j < 4 ? A[i * 4 + j] : B[i];
      err = fmax(err, fabs(fd - an));
      scale = fmax(scale, fabs(an));
    }
  }
  /* the box's response to the finger's force: nonzero through the smoothed contact */
  cr_log_info("%s: dv_box+/du = %.6g, max |A,B - FD| = %.3g (max entry %.3g)", name, B[3], err, scale);
  cr_assert_gt(fabs(B[3]), 1e-4, "%s: no gradient through the smoothed contact", name);
  cr_assert_lt(err, 1e-6 * scale, "%s: derivatives off the finite differences by %g", name, err);
  grit_data_free(d);

  /* without smoothing: no candidate at rest, and exactly no gradient */
  d = data_with(m, model, 0);
  const double x0[4] = {0, 0, 0, 0};
  cr_assert_eq(grit_linearize(d, x0, &u, A, B), GRIT_OK);
  grit_data_step_stats(d, &stats);
  cr_assert_eq(stats.ncontacts, 0);
  cr_assert_eq(B[3], 0.0);
  grit_data_free(d);
  grit_model_free(m);
}

Test(smoothing, lagged_derivatives_are_those_of_the_smoothed_step) { check_against_fd(GRIT_CONTACT_LAGGED, "lagged"); }
Test(smoothing, similar_derivatives_are_those_of_the_smoothed_step) { check_against_fd(GRIT_CONTACT_SIMILAR, "similar"); }

Test(smoothing, bad_settings_are_refused) {
  grit_model *m = finger_and_box(0.02);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_default_step_settings();
  cr_assert_eq(st.gradient_smoothing, 0.0);
  st.gradient_smoothing = -0.01;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(grit_data_last_error(d), "gradient_smoothing"));
  st.gradient_smoothing = NAN;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_INVALID_ARGUMENT);
  st.gradient_smoothing = 0.05;
  st.contact_model = GRIT_CONTACT_SAP;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_INVALID_ARGUMENT);
  grit_data_free(d);
  grit_model_free(m);
}
