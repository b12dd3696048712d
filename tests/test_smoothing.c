/* SPDX-License-Identifier: Apache-2.0 */
/* test_smoothing.c — gradient smoothing (grit_step_settings.gradient_smoothing, docs/contact.md):
 *  - a finger on an x slide 2 cm behind a box on an x slide (out of contact): without smoothing the
 *    box's next velocity does not depend on the finger's force (exactly 0); with delta = 5 cm the film's
 *    viscosity couples them, the pair is a contact candidate, and grit_linearize's Jacobians are the
 *    exact derivatives of the smoothed step: they match its central finite differences;
 *  - a finger (x, z slides) 1 cm beside a box (x, z slides) resting on the ground: the film's grip drags
 *    the box up without a normal force, the box rests on the support's soft law, an unloaded finger is
 *    not pushed away; the Jacobians match the central finite differences there too;
 *  - the force at a distance (gradient_smoothing_barrier > 0): the finger beside the box pressed and
 *    lifted; its Jacobians match the central finite differences of that model, and with smoothing 0 the
 *    setting changes no bit;
 * for Lagged and Similar. Bad settings are refused. */
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
  const double h = 1e-7;
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

/* ----------------------------------------------------- friction at a distance and a soft support */

static int slide(grit_builder *b, int parent, const double pos[3], int axis, double mass, int actuated) {
  grit_body_def body = grit_default_body_def();
  body.parent = parent;
  memcpy(body.pos, pos, sizeof body.pos);
  body.mass = mass;
  memset(body.inertia, 0, sizeof body.inertia);
  body.inertia[0] = body.inertia[4] = body.inertia[8] = 1e-4;
  int id = 0, j = 0;
  cr_assert_eq(grit_builder_add_body(b, &body, &id), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_SLIDE;
  jd.axis[0] = jd.axis[1] = jd.axis[2] = 0;
  jd.axis[axis] = 1;
  jd.damping = 0.1;
  cr_assert_eq(grit_builder_add_joint(b, id, &jd, &j), GRIT_OK, "%s", grit_builder_last_error(b));
  if (actuated) {
    grit_actuator_def act = grit_default_actuator_def();
    act.joint = j;
    cr_assert_eq(grit_builder_add_actuator(b, &act, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  return id;
}

static void geom(grit_builder *b, int body, grit_geom_type type, double size, double mu) {
  grit_geom_def g = grit_default_geom_def();
  g.shape.type = type;
  g.shape.size[0] = g.shape.size[1] = g.shape.size[2] = size;
  g.body = body;
  g.friction = mu;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
}

/* q = (finger x, finger z, box x, box z): a 2 cm sphere (0.1 kg; x, z slides, force-controlled) whose
 * surface is 1 cm from a 4 cm box (0.2 kg; x, z slides) resting on the ground plane; dt 10 ms. */
static grit_model *finger_beside_box(void) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.01;
  grit_builder_set_options(b, &opt);
  geom(b, 0, GRIT_GEOM_PLANE, 0, 0.5);
  const double fpos[3] = {-0.04 - 0.01 - 0.02, 0, 0.04}, bpos[3] = {0, 0, 0.04}, zero[3] = {0, 0, 0};
  const int fx = slide(b, 0, fpos, 0, 0.05, 1), fz = slide(b, fx, zero, 2, 0.05, 1);
  geom(b, fz, GRIT_GEOM_SPHERE, 0.02, 0.8);
  const int bx = slide(b, 0, bpos, 0, 0.1, 0), bz = slide(b, bx, zero, 2, 0.1, 0);
  geom(b, bz, GRIT_GEOM_BOX, 0.04, 0.8);
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* max |A, B - central differences| of grit_linearize at (x, u) (n = nq = nv, nu), and the largest entry */
static void fd_error(grit_data *d, int n, int nu, const double *x, const double *u, double *err, double *scale) {
  double A[64], B[16], xp[8], xm[8], up[2], um[2], fp[8], fm[8];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  /* h = 1e-7: the soft support's second derivative is large near zero penetration (h = 1e-6 leaves a
   * truncation error of 5.9e-5 against entries of 24; at 1e-7 the error is 5.9e-7, as h^2) */
  const double h = 1e-7;
  *err = *scale = 0;
  for (int j = 0; j < 2 * n + nu; ++j) {
    memcpy(xp, x, sizeof(double) * 2 * n), memcpy(xm, x, sizeof(double) * 2 * n);
    memcpy(up, u, sizeof(double) * nu), memcpy(um, u, sizeof(double) * nu);
    if (j < 2 * n) xp[j] += h, xm[j] -= h;
    else up[j - 2 * n] += h, um[j - 2 * n] -= h;
    cr_assert_eq(grit_linearize(d, xp, up, NULL, NULL), GRIT_OK);
    memcpy(fp, grit_data_qpos(d), sizeof(double) * n), memcpy(fp + n, grit_data_qvel(d), sizeof(double) * n);
    cr_assert_eq(grit_linearize(d, xm, um, NULL, NULL), GRIT_OK);
    memcpy(fm, grit_data_qpos(d), sizeof(double) * n), memcpy(fm + n, grit_data_qvel(d), sizeof(double) * n);
    for (int i = 0; i < 2 * n; ++i) {
      const double fd = (fp[i] - fm[i]) / (2 * h), an = j < 2 * n ? A[i * 2 * n + j] : B[i * nu + j - 2 * n];
      *err = fmax(*err, fabs(fd - an));
      *scale = fmax(*scale, fabs(an));
    }
  }
}

static void check_grip(grit_contact_model model, const char *name) {
  grit_model *m = finger_beside_box();
  grit_data *d = data_with(m, model, 0.05);
  /* the finger rising at 0.1 m/s beside the box, which rests 0.2 mm into the ground (the soft law) */
  const double x[8] = {0, 0, 0, -2e-4, 0, 0.1, 0, 0}, u[2] = {0, 0.05 * 9.81 + 0.5};
  double A[64], B[16];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  /* the box's next vertical velocity responds to the finger's lift: friction at a distance */
  cr_assert_gt(B[7 * 2 + 1], 1e-3, "%s: dv_box,z/du_lift = %g", name, B[7 * 2 + 1]);
  double err, scale;
  fd_error(d, 4, 2, x, u, &err, &scale);
  cr_log_info("%s (grip at a distance, soft support): dv_box,z/du_z = %.6g, max |A,B - FD| = %.3g (max entry %.3g)",
              name, B[7 * 2 + 1], err, scale);
  /* central differences of a C1 step with piecewise-smooth second derivatives: O(h^2) truncation plus
   * the solver's 1e-12 relative tolerance over h */
  cr_assert_lt(err, 1e-6 * scale, "%s: derivatives off the finite differences by %g", name, err);

  /* at rest with no command the unloaded finger stays (no force at a distance pushes it) and the box
   * sinks only within the soft law's band */
  const double x0[8] = {0}, u0[2] = {0, 0.05 * 9.81};
  grit_data_reset(d);
  cr_assert_eq(grit_data_set_qpos(d, x0, 4), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, x0 + 4, 4), GRIT_OK);
  for (int k = 0; k < 50; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u0, 2), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  const double *q = grit_data_qpos(d);
  cr_log_info("%s: after 0.5 s at rest the finger moved %.3g mm, the box sank %.3g mm", name, 1e3 * fabs(q[0]),
              -1e3 * q[3]);
  cr_assert_lt(fabs(q[0]), 1e-4, "%s: the finger moved %g m", name, q[0]);
  cr_assert(q[3] < 0 && q[3] > -0.05, "%s: the box's height %g", name, q[3]);
  grit_data_free(d);
  grit_model_free(m);
}

Test(smoothing, lagged_grip_at_a_distance_derivatives) { check_grip(GRIT_CONTACT_LAGGED, "lagged"); }
Test(smoothing, similar_grip_at_a_distance_derivatives) { check_grip(GRIT_CONTACT_SIMILAR, "similar"); }

/* ------------------------------------------------------------------- a force at a distance */

/* gradient_smoothing_barrier = kappa > 0 (docs/contact.md, "A force at a distance"): the finger 1 cm
 * beside the box resting on the ground, pressed towards it (x) and lifted (z) at once. Through the
 * force at a distance the box's next velocity responds to the finger's squeeze (normal) and to its lift
 * (friction bounded by mu times that force), and grit_linearize's Jacobians match the central finite
 * differences of that model. With smoothing 0 the barrier setting changes nothing (bitwise). */
static void check_barrier(grit_contact_model model, const char *name) {
  grit_model *m = finger_beside_box();
  grit_data *d = data_with(m, model, 0.05);
  grit_step_settings st = grit_data_step_settings(d);
  st.gradient_smoothing_barrier = 0.3;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  const double x[8] = {0, 0, 0, -2e-4, 0.05, 0.1, 0, 0}, u[2] = {0.5, 0.05 * 9.81 + 0.5};
  double A[64], B[16];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  /* B's rows 4..7 are the next velocities (finger x, z, box x, z); columns u_x, u_z */
  cr_assert_gt(B[6 * 2 + 0], 1e-4, "%s: dv_box,x/du_x = %g", name, B[6 * 2 + 0]);
  /* the friction bound mu f_b grows as the finger closes in (Lagged: through gamma_n0 of the gap at the
   * start of the step, so through the finger's position, not yet its force) */
  cr_assert_gt(A[7 * 8 + 0], 1e-4, "%s: dv_box,z/dq_finger,x = %g (friction from the squeeze)", name, A[7 * 8 + 0]);
  double err, scale;
  fd_error(d, 4, 2, x, u, &err, &scale);
  cr_log_info("%s (force at a distance): dv_box,x/du_x = %.4g, dv_box,z/dq_x = %.4g, dv_box,z/du_z = %.4g, max |A,B - "
              "FD| = %.3g (max entry %.3g)", name, B[6 * 2 + 0], A[7 * 8 + 0], B[7 * 2 + 1], err, scale);
  cr_assert_lt(err, 1e-6 * scale, "%s: derivatives off the finite differences by %g", name, err);
  grit_data_free(d);

  /* smoothing 0: the same bits with and without the barrier setting */
  grit_data *d0 = data_with(m, model, 0), *d1 = data_with(m, model, 0);
  st = grit_data_step_settings(d1);
  st.gradient_smoothing_barrier = 0.3;
  cr_assert_eq(grit_data_set_step_settings(d1, &st), GRIT_OK);
  const double xc[8] = {0.0105, 0, 0, -1e-5, 0.05, 0.1, 0, 0};
  double A0[64], A1[64], B0[16], B1[16];
  cr_assert_eq(grit_linearize(d0, xc, u, A0, B0), GRIT_OK);
  cr_assert_eq(grit_linearize(d1, xc, u, A1, B1), GRIT_OK);
  cr_assert_eq(memcmp(A0, A1, sizeof A0), 0, "%s", name);
  cr_assert_eq(memcmp(B0, B1, sizeof B0), 0, "%s", name);
  cr_assert_eq(memcmp(grit_data_qvel(d0), grit_data_qvel(d1), 4 * sizeof(double)), 0, "%s", name);
  grit_data_free(d0);
  grit_data_free(d1);
  grit_model_free(m);
}

Test(smoothing, lagged_force_at_a_distance_derivatives) { check_barrier(GRIT_CONTACT_LAGGED, "lagged"); }
Test(smoothing, similar_force_at_a_distance_derivatives) { check_barrier(GRIT_CONTACT_SIMILAR, "similar"); }

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
  st.gradient_smoothing_barrier = -1;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(grit_data_last_error(d), "gradient_smoothing_barrier"));
  st.gradient_smoothing_barrier = 0;
  st.contact_model = GRIT_CONTACT_SAP;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_INVALID_ARGUMENT);
  grit_data_free(d);
  grit_model_free(m);
}
