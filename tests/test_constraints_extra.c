/* SPDX-License-Identifier: Apache-2.0 */
/* test_constraints_extra.c — joint friction (frictionloss), equality constraints (connect, weld, joint
 * coupling) and tendons (fixed, spatial: springs, dampers, length limits) in the convex step: closed
 * forms, equivalences with the rigid joints and joint springs they stand for, errors, and the step's
 * derivatives against central differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "model_internal.h" /* grit_model_copy */

static const double PI = 3.14159265358979323846;

static grit_builder *builder(double dt, double gz) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options o = grit_default_options();
  o.timestep = dt;
  o.gravity[2] = gz;
  grit_builder_set_options(b, &o);
  return b;
}

static grit_model *compile(grit_builder *b) {
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static grit_data *data(const grit_model *m, double rel_tol) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = rel_tol;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  return d;
}

static void run(grit_data *d, int n) {
  for (int i = 0; i < n; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
}

/* A body of mass 1 hanging from `parent` by a hinge about `axis`, centre of mass l below its origin,
 * rotational inertia 0.01 I. Returns the body. */
static int link(grit_builder *b, int parent, double z, double l, const double axis[3], const grit_joint_def *jin) {
  grit_body_def bd = grit_default_body_def();
  bd.parent = parent;
  bd.pos[2] = z;
  bd.com[0] = l;
  for (int i = 0; i < 9; ++i) bd.inertia[i] = i % 4 == 0 ? 0.01 : 0.0;
  int body;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK);
  grit_joint_def jd = jin ? *jin : grit_default_joint_def();
  memcpy(jd.axis, axis, sizeof jd.axis);
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return body;
}

static const double YAXIS[3] = {0, 1, 0}, ZAXIS[3] = {0, 0, 1};

/* ------------------------------------------------------------------------------ frictionloss */

/* A spinning hinge (I = 0.01, no gravity) under dry friction f decelerates at f / I and stops. The
 * step's discrete closed form: v_k = v0 - k dt f / I until it reaches 0 (n = v0 I / (f dt) steps), and
 * q = dt sum_k v_k. The regularization leaves a slip below R F = sigma w dt f = 1e-7 rad/s. */
Test(frictionloss, a_spinning_joint_stops_where_the_closed_form_says) {
  const double dt = 1e-3, f = 0.025, I = 0.01, v0 = 2.0;
  grit_builder *b = builder(dt, 0);
  grit_joint_def jd = grit_default_joint_def();
  jd.frictionloss = f;
  link(b, 0, 0, 0, ZAXIS, &jd);
  grit_model *m = compile(b);
  grit_data *d = data(m, 1e-10);
  grit_data_set_qvel(d, &v0, 1);
  run(d, 1000);
  const int n = (int)llround(v0 * I / (f * dt));
  double q = 0;
  for (int k = 1; k <= n; ++k) q += dt * (v0 - k * dt * f / I);
  cr_assert(fabs(grit_data_qpos(d)[0] - q) < 1e-6, "stopped at %.9g rad, closed form %.9g", grit_data_qpos(d)[0], q);
  cr_assert(fabs(grit_data_qvel(d)[0]) < 1e-6, "still moving: %g rad/s", grit_data_qvel(d)[0]);
  grit_data_free(d);
  grit_model_free(m);
}

/* Gravity's torque m g l = 4.9 N m below the frictionloss 6 N m: the arm holds (it creeps at the
 * regularization's slip R gamma = sigma w dt tau, 2e-5 rad/s here); above it (4 N m) it falls. */
Test(frictionloss, holds_below_and_slips_above_the_friction_torque) {
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(1e-3, -9.81);
    grit_joint_def jd = grit_default_joint_def();
    jd.frictionloss = k == 0 ? 6.0 : 4.0;
    link(b, 0, 0, 0.5, YAXIS, &jd);
    grit_model *m = compile(b);
    grit_data *d = data(m, 1e-8);
    run(d, 1000);
    const double q = grit_data_qpos(d)[0];
    if (k == 0) cr_assert(fabs(q) < 1e-4, "held arm moved %g rad", q);
    else cr_assert(q > 0.1, "arm above its friction moved only %g rad", q);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* ---------------------------------------------------------------------------------- equality */

/* A free body connected by a point to the world is a ball-joint pendulum: the two models move alike to
 * the compliance of the connect. Its velocity is held near-rigidly, J v = 0 at the start of each step;
 * the position integration then moves the point by O(dt^2 omega^2 r) per step (8e-6 m at the swing's
 * 4 rad/s), a drift removed with the time scale dt + tau_d: a steady error of about
 * (dt + tau_d) dt omega^2 r = 3e-4 m for the default solref (tau_d = 0.04 s), 3e-5 m for tc = 2 ms. */
static void connect_pendulum(double tc, double max_drift, double max_dx) {
  const double dt = 1e-3, w[3] = {1.0, 0.5, 0.0};
  double xq[2][3];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(dt, -9.81);
    grit_body_def bd = grit_default_body_def();
    for (int i = 0; i < 9; ++i) bd.inertia[i] = i % 4 == 0 ? 0.01 : 0.0;
    bd.pos[0] = 0.3, bd.pos[2] = -0.4; /* 0.5 m from the pivot at the origin */
    int body;
    grit_builder_add_body(b, &bd, &body);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = k == 0 ? GRIT_JOINT_FREE : GRIT_JOINT_BALL;
    if (k == 1) jd.pos[0] = -0.3, jd.pos[2] = 0.4; /* the pivot, in the body frame */
    cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK);
    if (k == 0) {
      grit_equality_def e = grit_default_equality_def();
      e.obj1 = 0, e.obj2 = body; /* the world's origin, and where it is in the body */
      if (tc > 0) e.solref[0] = tc;
      cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    grit_model *m = compile(b);
    grit_data *d = data(m, 1e-10);
    double v[6] = {0};
    if (k == 0) { /* linear velocity w x (x - pivot), angular in the body frame (= world here) */
      const double r[3] = {0.3, 0, -0.4};
      v[0] = w[1] * r[2] - w[2] * r[1], v[1] = w[2] * r[0] - w[0] * r[2], v[2] = w[0] * r[1] - w[1] * r[0];
      memcpy(v + 3, w, sizeof w);
    } else {
      memcpy(v, w, sizeof w);
    }
    grit_data_set_qvel(d, v, k == 0 ? 6 : 3);
    double worst = 0;
    for (int s = 0; s < 1000; ++s) {
      run(d, 1);
      if (k == 0) { /* the connected point: the body's (-0.3, 0, 0.4) in the world */
        const double *q = grit_data_qpos(d);
        double R[9], p[3] = {-0.3, 0, 0.4}, y[3];
        grit_quat_to_mat(R, q + 3);
        grit_m3_mulv(y, R, p);
        worst = fmax(worst, sqrt(pow(q[0] + y[0], 2) + pow(q[1] + y[1], 2) + pow(q[2] + y[2], 2)));
      }
    }
    if (k == 0) cr_log_info("connect (tc %g): the point drifted at most %.3g m", tc, worst);
    if (k == 0) cr_assert(worst < max_drift, "the connected point drifted %g m", worst);
    double quat[4];
    grit_body_pose(d, body, xq[k], quat);
    grit_data_free(d);
    grit_model_free(m);
  }
  const double dx = sqrt(pow(xq[0][0] - xq[1][0], 2) + pow(xq[0][1] - xq[1][1], 2) + pow(xq[0][2] - xq[1][2], 2));
  cr_log_info("connect (tc %g) vs ball joint after 1 s: |dx| = %.3g m", tc, dx);
  cr_assert(dx < max_dx, "connect and ball pendulum differ by %g m after 1 s", dx);
}

Test(equality, a_connected_free_body_is_a_ball_pendulum) {
  connect_pendulum(0, 6e-4, 5e-3);
  connect_pendulum(0.002, 6e-5, 5e-4);
}

/* A free body welded to the world holds under gravity: it sags by the near-rigid compliance, about
 * g dt (dt + tau_d) / (4 pi^2) = 1e-5 m, and does not turn. */
Test(equality, a_weld_holds) {
  grit_builder *b = builder(1e-3, -9.81);
  grit_body_def bd = grit_default_body_def();
  bd.pos[2] = 1.0;
  bd.com[0] = 0.2; /* off-centre: gravity also turns it */
  int body;
  grit_builder_add_body(b, &bd, &body);
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  grit_builder_add_joint(b, body, &jd, NULL);
  grit_equality_def e = grit_default_equality_def();
  e.type = GRIT_EQ_WELD;
  e.obj1 = body, e.obj2 = 0;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_model *m = compile(b);
  grit_data *d = data(m, 1e-10);
  run(d, 1000);
  const double *q = grit_data_qpos(d);
  const double dz = q[2] - 1.0, sag = 9.81 * 1e-3 * (1e-3 + 0.04) / (4 * PI * PI);
  cr_log_info("weld: position error (%.3g %.3g %.3g) m, quat (%.9f %.3g %.3g %.3g)", q[0], q[1], dz, q[3], q[4], q[5],
              q[6]);
  cr_assert(sqrt(q[0] * q[0] + q[1] * q[1] + dz * dz) < 10 * sag, "weld moved %g m", fabs(dz));
  cr_assert(sqrt(q[4] * q[4] + q[5] * q[5] + q[6] * q[6]) < 1e-4, "weld turned");
  grit_data_free(d);
  grit_model_free(m);
}

/* A double pendulum with q1 = 2 q2 (polycoef 0, 2): the coupling holds to its compliance while gravity
 * swings it. */
Test(equality, a_joint_coupling_holds) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  link(b, b1, -0.4, 0.3, YAXIS, NULL);
  grit_equality_def e = grit_default_equality_def();
  e.type = GRIT_EQ_JOINT;
  e.obj1 = 0, e.obj2 = 1;
  e.polycoef[1] = 2.0;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_model *m = compile(b);
  grit_data *d = data(m, 1e-10);
  double worst = 0;
  for (int s = 0; s < 1000; ++s) {
    run(d, 1);
    const double *q = grit_data_qpos(d);
    worst = fmax(worst, fabs(q[0] - 2 * q[1]));
  }
  cr_log_info("joint coupling: worst |q1 - 2 q2| = %.3g rad over 1 s, q = (%g, %g)", worst, grit_data_qpos(d)[0],
              grit_data_qpos(d)[1]);
  cr_assert(fabs(grit_data_qpos(d)[0]) > 0.1, "the pendulum did not swing");
  cr_assert(worst < 1e-3, "coupling error %g rad", worst);
  grit_data_free(d);
  grit_model_free(m);
}

Test(equality, bad_definitions_are_errors) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  grit_equality_def e = grit_default_equality_def();
  e.obj1 = e.obj2 = b1;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(grit_builder_last_error(b), "itself"), "%s", grit_builder_last_error(b));
  e.obj2 = 7;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_ERR_INVALID_ARGUMENT);
  e.obj2 = 0;
  e.solref[0] = -1;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_ERR_INVALID_MODEL);
  grit_tendon_def t = grit_default_tendon_def();
  const int sites[2] = {0, 3};
  t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = sites;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(grit_builder_last_error(b), "site"), "%s", grit_builder_last_error(b));
  grit_builder_free(b);
}

/* ----------------------------------------------------------------------------------- tendons */

/* A fixed tendon L = q on one hinge with a spring and damper is the joint's own spring and damper: both
 * are implicit, and the two trajectories agree to round-off. */
Test(tendon, a_fixed_tendon_spring_is_the_joint_spring) {
  double q[2], v[2];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(2e-3, -9.81);
    grit_joint_def jd = grit_default_joint_def();
    if (k == 1) jd.stiffness = 30, jd.damping = 0.4;
    link(b, 0, 0, 0.3, YAXIS, &jd);
    if (k == 0) {
      grit_tendon_def t = grit_default_tendon_def();
      const int j = 0;
      const double c = 1.0;
      t.n = 1, t.obj = &j, t.coef = &c, t.stiffness = 30, t.damping = 0.4;
      cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
    }
    grit_model *m = compile(b);
    grit_data *d = data(m, 1e-12);
    run(d, 500);
    q[k] = grit_data_qpos(d)[0], v[k] = grit_data_qvel(d)[0];
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert(fabs(q[0] - q[1]) < 1e-9 && fabs(v[0] - v[1]) < 1e-8, "tendon (%.12g, %.12g) vs joint (%.12g, %.12g)", q[0],
            v[0], q[1], v[1]);
}

/* A spatial tendon from a world site to a site on a body on a slide along x: L = 1 + x; with a spring of
 * rest length 1 it is the slide's spring. */
Test(tendon, a_spatial_tendon_spring_on_a_slide_is_the_slide_spring) {
  double q[2];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(1e-3, 0);
    grit_body_def bd = grit_default_body_def();
    int body;
    grit_builder_add_body(b, &bd, &body);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_SLIDE, jd.axis[0] = 1, jd.axis[2] = 0;
    if (k == 1) jd.stiffness = 50, jd.damping = 1;
    grit_builder_add_joint(b, body, &jd, NULL);
    grit_site_def s = grit_default_site_def();
    s.pos[0] = -1;
    cr_assert_eq(grit_builder_add_site(b, &s, NULL), GRIT_OK);
    s.body = body, s.pos[0] = 0;
    cr_assert_eq(grit_builder_add_site(b, &s, NULL), GRIT_OK);
    grit_tendon_def t = grit_default_tendon_def();
    const int sites[2] = {0, 1};
    t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = sites;
    if (k == 0) t.stiffness = 50, t.damping = 1;
    cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_model *m = compile(b);
    const double x = 0.25;
    cr_assert(fabs(grit_model_tendon_length(m, 0, &x) - 1.25) < 1e-15);
    grit_data *d = data(m, 1e-12);
    grit_data_set_qpos(d, &x, 1);
    run(d, 300);
    q[k] = grit_data_qpos(d)[0];
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert(fabs(q[0] - q[1]) < 1e-9, "tendon %.12g vs slide spring %.12g", q[0], q[1]);
  cr_assert(fabs(q[0] - 0.25) > 0.05, "did not move");
}

/* A fixed tendon q1 + q2 limited to [-0.2, 0.2] on a double pendulum falling sideways: the sum stays
 * within the range to the limit's penetration. */
Test(tendon, a_tendon_limit_holds) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  link(b, b1, -0.4, 0.3, YAXIS, NULL);
  grit_tendon_def t = grit_default_tendon_def();
  const int j[2] = {0, 1};
  const double c[2] = {1, 1};
  t.n = 2, t.obj = j, t.coef = c, t.limited = 1, t.range[0] = -0.2, t.range[1] = 0.2;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_model *m = compile(b);
  grit_data *d = data(m, 1e-10);
  double worst = -1;
  for (int s = 0; s < 1000; ++s) {
    run(d, 1);
    const double *q = grit_data_qpos(d);
    worst = fmax(worst, fabs(q[0] + q[1]) - 0.2);
  }
  cr_log_info("tendon limit: worst excess %.3g", worst);
  cr_assert(worst < 1e-3, "tendon length beyond its range by %g", worst);
  cr_assert(worst > -0.01, "the limit was never reached");
  grit_data_free(d);
  grit_model_free(m);
}

/* ------------------------------------------------------------------------------ derivatives */

/* A against central differences (step 1e-6) for one step from (q, v): relative Frobenius error. */
static double deriv_error(const grit_model *m, const double *q0, const double *v0) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nx = 2 * nv;
  grit_data *d = data(m, 1e-12);
  grit_data_set_qpos(d, q0, nq);
  grit_data_set_qvel(d, v0, nv);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  double *A = calloc((size_t)(nx * nx), sizeof *A), *qref = malloc(sizeof(double) * nq);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  double *q = malloc(sizeof(double) * nq), *v = malloc(sizeof(double) * nv), *x[2], *e = calloc(nv, sizeof *e);
  x[0] = malloc(sizeof(double) * nx), x[1] = malloc(sizeof(double) * nx);
  double num = 0, den = 0;
  const double h = 1e-6;
  for (int col = 0; col < nx; ++col) {
    for (int s = 0; s < 2; ++s) {
      memcpy(q, q0, sizeof(double) * nq);
      memcpy(v, v0, sizeof(double) * nv);
      if (col < nv) {
        memset(e, 0, sizeof(double) * nv);
        e[col] = s ? h : -h;
        grit_integrate_positions(m, q, e, 1.0);
      } else {
        v[col - nv] += s ? h : -h;
      }
      grit_data_set_qpos(d, q, nq);
      grit_data_set_qvel(d, v, nv);
      cr_assert_eq(grit_step(d), GRIT_OK);
      grit_position_difference(m, qref, grit_data_qpos(d), x[s]);
      memcpy(x[s] + nv, grit_data_qvel(d), sizeof(double) * nv);
    }
    for (int i = 0; i < nx; ++i) {
      const double fd = (x[1][i] - x[0][i]) / (2 * h), an = A[i * nx + col];
      num += (an - fd) * (an - fd);
      den += fd * fd;
    }
  }
  free(A), free(qref), free(q), free(v), free(x[0]), free(x[1]), free(e);
  grit_data_free(d);
  return sqrt(num / den);
}

static void check_deriv(const char *what, const grit_model *m, const double *q, const double *v) {
  const double err = deriv_error(m, q, v);
  cr_log_info("%s: A against central differences, relative error %.2e", what, err);
  cr_assert(err < 1e-5, "%s: relative error %g", what, err);
}

Test(derivatives, through_frictionloss_sliding_and_sticking) {
  grit_builder *b = builder(1e-3, -9.81);
  grit_joint_def jd = grit_default_joint_def();
  jd.frictionloss = 1.0;
  int b1 = link(b, 0, 0, 0.3, YAXIS, &jd);
  jd.frictionloss = 20.0; /* sticks */
  link(b, b1, -0.4, 0.3, ZAXIS, &jd);
  grit_model *m = compile(b);
  const double q[2] = {0.3, 0.2}, v[2] = {1.5, 1e-3};
  check_deriv("frictionloss", m, q, v);
  grit_model_free(m);
}

Test(derivatives, through_connect_and_weld) {
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(1e-3, -9.81);
    int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
    int b2 = link(b, b1, -0.4, 0.3, ZAXIS, NULL);
    grit_body_def bd = grit_default_body_def();
    bd.pos[0] = 0.5, bd.pos[2] = -0.6;
    int b3;
    grit_builder_add_body(b, &bd, &b3);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_FREE;
    grit_builder_add_joint(b, b3, &jd, NULL);
    grit_equality_def e = grit_default_equality_def();
    e.type = k ? GRIT_EQ_WELD : GRIT_EQ_CONNECT;
    e.obj1 = b2, e.obj2 = b3; /* two trees */
    e.anchor[0] = 0.2;
    cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
    grit_model *m = compile(b);
    double q[9] = {0.1, -0.2, 0.52, 0.01, -0.61, 0.9987, 0.02, 0.03, 0.04}, v[8] = {0.5, -0.3, 0.1, 0.2, -0.1, 0.3,
                                                                                    -0.2, 0.4};
    double n = sqrt(q[5] * q[5] + q[6] * q[6] + q[7] * q[7] + q[8] * q[8]);
    for (int i = 5; i < 9; ++i) q[i] /= n;
    check_deriv(k ? "weld" : "connect", m, q, v);
    grit_model_free(m);
  }
}

Test(derivatives, through_joint_coupling_and_tendons) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  int b2 = link(b, b1, -0.4, 0.3, YAXIS, NULL);
  int b3 = link(b, 0, 0, 0.3, ZAXIS, NULL); /* a second tree */
  (void)b2;
  grit_equality_def e = grit_default_equality_def();
  e.type = GRIT_EQ_JOINT;
  e.obj1 = 0, e.obj2 = 2;
  e.polycoef[0] = 0.05, e.polycoef[1] = 1.5, e.polycoef[2] = 0.7, e.polycoef[3] = -0.3;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_site_def s = grit_default_site_def();
  s.body = b3, s.pos[0] = 0.2;
  grit_builder_add_site(b, &s, NULL);
  s.body = 0, s.pos[0] = 0.5, s.pos[2] = 0.3;
  grit_builder_add_site(b, &s, NULL);
  s.body = b2, s.pos[0] = 0.3;
  grit_builder_add_site(b, &s, NULL);
  grit_tendon_def t = grit_default_tendon_def();
  const int sites[3] = {0, 1, 2};
  t.type = GRIT_TENDON_SPATIAL, t.n = 3, t.obj = sites, t.stiffness = 40, t.damping = 2, t.springlength = 1.0;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_tendon_def f = grit_default_tendon_def();
  const int j[2] = {1, 2};
  const double c[2] = {1.0, -0.5};
  f.n = 2, f.obj = j, f.coef = c, f.limited = 1, f.range[0] = -0.1, f.range[1] = 0.1;
  cr_assert_eq(grit_builder_add_tendon(b, &f, NULL), GRIT_OK);
  grit_model *m = compile(b);
  const double q[3] = {0.2, 0.12, 0.1}, v[3] = {0.3, 0.8, -0.2};
  /* the fixed tendon 0.12 - 0.05 = 0.07 is near its upper limit and moving into it */
  check_deriv("joint coupling, spatial tendon spring, fixed tendon limit", m, q, v);
  grit_model_free(m);
}

/* An equality exactly satisfied at rest, without load: its impulse is exactly zero, yet its partials
 * are not (a bilateral constraint has no inactive region): A still matches central differences. */
Test(derivatives, through_an_equality_at_zero_impulse) {
  grit_builder *b = builder(1e-3, 0);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  grit_body_def bd = grit_default_body_def();
  bd.pos[0] = 0.5;
  int b2;
  grit_builder_add_body(b, &bd, &b2);
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  grit_builder_add_joint(b, b2, &jd, NULL);
  grit_equality_def e = grit_default_equality_def();
  e.obj1 = b1, e.obj2 = b2, e.anchor[0] = 0.4;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_model *m = compile(b);
  double q[8], v[7] = {0};
  grit_model_qpos0(m, q);
  check_deriv("connect at zero impulse", m, q, v);
  grit_model_free(m);
}

/* Two fixed tendons coupled by a tendon equality L1 = 0.1 + 0.8 L2 + 0.3 L2^2 (three hinges, two
 * trees); it holds while gravity swings them, and A matches central differences. */
Test(derivatives, through_a_tendon_equality) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  link(b, b1, -0.4, 0.3, YAXIS, NULL);
  link(b, 0, 0, 0.3, ZAXIS, NULL);
  grit_tendon_def t = grit_default_tendon_def();
  const int j1[2] = {0, 1}, j2[1] = {2};
  const double c1[2] = {1, 0.5}, c2[1] = {1};
  t.n = 2, t.obj = j1, t.coef = c1;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  t.n = 1, t.obj = j2, t.coef = c2;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_equality_def e = grit_default_equality_def();
  e.type = GRIT_EQ_TENDON;
  e.obj1 = 0, e.obj2 = 1;
  e.polycoef[0] = 0.1, e.polycoef[1] = 0.8, e.polycoef[2] = 0.3;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_model *m = compile(b);
  const double q[3] = {0.3, 0.1, 0.2}, v[3] = {0.2, -0.4, 0.3};
  check_deriv("tendon equality", m, q, v);
  grit_data *d = data(m, 1e-10);
  grit_data_set_qpos(d, q, 3);
  run(d, 1000);
  const double *x = grit_data_qpos(d), L1 = x[0] + 0.5 * x[1], L2 = x[2];
  const double err = L1 - (0.1 + 0.8 * L2 + 0.3 * L2 * L2);
  cr_log_info("tendon equality after 1 s: error %.3g", err);
  cr_assert(fabs(err) < 1e-3, "tendon coupling error %g", err);
  grit_data_free(d);
  grit_model_free(m);
}

/* Spatial tendons wrapping a sphere on the world (with a side site) and a cylinder on the first link,
 * with a spring and a length limit: A matches central differences (their lengths match MuJoCo's to
 * 6e-16, tests/test_mjcf_cx.c). */
Test(derivatives, through_wrapped_tendons) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  int b2 = link(b, b1, -0.4, 0.3, YAXIS, NULL);
  grit_geom_def g = grit_default_geom_def();
  g.contype = g.conaffinity = 0;
  g.shape = grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0);
  g.pos[0] = 0.25, g.pos[1] = 0.02, g.pos[2] = 0.1;
  int ball, drum;
  cr_assert_eq(grit_builder_add_geom(b, &g, &ball), GRIT_OK);
  g = grit_default_geom_def();
  g.contype = g.conaffinity = 0;
  g.body = b1;
  g.shape = grit_shape_make(GRIT_GEOM_CYLINDER, 0.06, 0.05, 0);
  g.pos[2] = -0.4;
  g.quat[0] = g.quat[1] = sqrt(0.5); /* its axis z along y */
  cr_assert_eq(grit_builder_add_geom(b, &g, &drum), GRIT_OK);
  const double sp[5][4] = {{0, -0.05, 0, 0.4}, {0, 0.5, 0, 0.3}, {1, 0.25, 0, -0.2}, {2, 0.3, 0, -0.1}, {1, -0.2, 0, -0.4}};
  for (int i = 0; i < 5; ++i) {
    grit_site_def s = grit_default_site_def();
    s.body = i == 2 || i == 4 ? b1 : i == 3 ? b2 : 0;
    for (int k = 0; k < 3; ++k) s.pos[k] = sp[i][1 + k];
    cr_assert_eq(grit_builder_add_site(b, &s, NULL), GRIT_OK);
  }
  grit_tendon_def t = grit_default_tendon_def();
  const int o1[3] = {0, 1, 3}, g1[3] = {-1, ball, -1}, o2[3] = {2, 4, 3}, g2[3] = {-1, drum, -1};
  t.type = GRIT_TENDON_SPATIAL, t.n = 3, t.obj = o1, t.geom = g1, t.stiffness = 30, t.damping = 1;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  t = grit_default_tendon_def();
  t.type = GRIT_TENDON_SPATIAL, t.n = 3, t.obj = o2, t.geom = g2, t.limited = 1, t.range[0] = 0.1, t.range[1] = 0.35;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  const int s1[2] = {0, 3}, s2[2] = {2, 3}; /* the same paths straight, for comparison (no forces) */
  t = grit_default_tendon_def();
  t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = s1;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  t.obj = s2;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_model *m = compile(b);
  for (int k = 0; k < 2; ++k) {
    const double q[2][2] = {{-0.75, 0.9}, {0.5, -1.2}}, v[2][2] = {{0.4, -0.3}, {-0.2, -0.6}};
    for (int i = 0; i < 2; ++i) /* both wrap at both states */
      cr_assert(grit_model_tendon_length(m, i, q[k]) > grit_model_tendon_length(m, i + 2, q[k]) + 1e-3,
                "tendon %d does not wrap at state %d", i, k);
    check_deriv(k ? "wrapped tendons (state 2)" : "wrapped tendons (state 1)", m, q[k], v[k]);
  }
  grit_model_free(m);
}

/* A fixed tendon L = q on one hinge with frictionloss moves exactly as the joint's own frictionloss;
 * and A through a tendon's friction (spatial, sliding) matches central differences. */
Test(tendon, tendon_friction_is_the_joint_friction) {
  double q[2];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b = builder(1e-3, -9.81);
    grit_joint_def jd = grit_default_joint_def();
    if (k == 1) jd.frictionloss = 2.0;
    link(b, 0, 0, 0.3, YAXIS, &jd);
    if (k == 0) {
      grit_tendon_def t = grit_default_tendon_def();
      const int j = 0;
      const double c = 1.0;
      t.n = 1, t.obj = &j, t.coef = &c, t.frictionloss = 2.0;
      cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
    }
    grit_model *m = compile(b);
    grit_data *d = data(m, 1e-12);
    run(d, 1000);
    q[k] = grit_data_qpos(d)[0];
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert(fabs(q[0] - q[1]) < 1e-9, "tendon %.12g vs joint %.12g", q[0], q[1]);
  cr_assert(q[0] > 0.1, "did not move");
}

Test(derivatives, through_tendon_friction) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  int b2 = link(b, b1, -0.4, 0.3, YAXIS, NULL);
  grit_site_def s = grit_default_site_def();
  s.pos[2] = 0.3;
  grit_builder_add_site(b, &s, NULL);
  s.body = b2, s.pos[0] = 0.3, s.pos[2] = 0;
  grit_builder_add_site(b, &s, NULL);
  grit_tendon_def t = grit_default_tendon_def();
  const int sites[2] = {0, 1};
  t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = sites, t.frictionloss = 1.5;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_model *m = compile(b);
  const double q[2] = {0.4, -0.3}, v[2] = {1.2, 0.7};
  check_deriv("tendon friction", m, q, v);
  grit_model_free(m);
}

/* A model copy (grit_model_copy, used by sysid) keeps the sites', equalities' and tendons' arrays and
 * names in its own block: queries on the copy after the original is freed. */
Test(tendon, a_model_copy_keeps_them) {
  grit_builder *b = builder(1e-3, -9.81);
  int b1 = link(b, 0, 0, 0.3, YAXIS, NULL);
  grit_site_def s = grit_default_site_def();
  s.name = "anchor", s.pos[2] = 0.5;
  grit_builder_add_site(b, &s, NULL);
  s.name = "tip", s.body = b1, s.pos[0] = 0.3, s.pos[2] = 0;
  grit_builder_add_site(b, &s, NULL);
  grit_tendon_def t = grit_default_tendon_def();
  const int sites[2] = {0, 1};
  t.name = "rope", t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = sites, t.stiffness = 10;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_model *m = compile(b), *c = NULL;
  cr_assert_eq(grit_model_copy(m, &c), GRIT_OK);
  const double q = 0.3, L = grit_model_tendon_length(m, 0, &q);
  grit_model_free(m);
  cr_assert_eq(grit_model_tendon_index(c, "rope"), 0);
  cr_assert_eq(grit_model_site_index(c, "tip"), 1);
  cr_assert(grit_model_tendon_length(c, 0, &q) == L);
  grit_data *d = data(c, 1e-8);
  run(d, 10);
  grit_data_free(d);
  grit_model_free(c);
}
