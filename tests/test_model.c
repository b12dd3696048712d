/* SPDX-License-Identifier: Apache-2.0 */
/* test_model.c — the model builder: validation of bodies, joints, actuators and options (each bad
 * input gives its status code and a message naming the offending item), coordinate numbering (tree by
 * tree, depth first), names by index and back, and the data's state setters. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"

static grit_builder *builder(void) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  return b;
}

/* Adds a valid body with the given parent; returns its index. */
static int good_body(grit_builder *b, int parent) {
  grit_body_def bd = grit_default_body_def();
  bd.parent = parent;
  int body = -1;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK, "%s", grit_builder_last_error(b));
  return body;
}

/* The builder's message must contain every one of the given fragments. */
static void expect_message(const grit_builder *b, const char *a, const char *c) {
  const char *msg = grit_builder_last_error(b);
  cr_assert(strstr(msg, a) != NULL, "message \"%s\" does not name \"%s\"", msg, a);
  if (c) cr_assert(strstr(msg, c) != NULL, "message \"%s\" does not mention \"%s\"", msg, c);
}

/* Expects adding `bd` as body 3 (after two good bodies) to fail with `status`, naming "body 3". */
static void expect_bad_body(const grit_body_def *bd, grit_status status, const char *what) {
  grit_builder *b = builder();
  good_body(b, 0);
  good_body(b, 1);
  int body = -7;
  grit_status s = grit_builder_add_body(b, bd, &body);
  cr_assert_eq(s, status, "got %s: %s", grit_status_string(s), grit_builder_last_error(b));
  cr_assert_eq(body, -7, "the index output must not be written on failure");
  expect_message(b, "body 3", what);
  /* A failed add changes nothing: the next good body is body 3 and the model compiles. */
  cr_assert_eq(good_body(b, 2), 3);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  cr_assert_eq(grit_model_nbody(m), 4);
  grit_model_free(m);
  grit_builder_free(b);
}

static grit_body_def body_on(int parent) {
  grit_body_def bd = grit_default_body_def();
  bd.parent = parent;
  return bd;
}

Test(model_validation, mass_must_be_positive) {
  grit_body_def bd = body_on(2);
  bd.mass = 0.0;
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "mass");
  bd.mass = -1.0;
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "mass");
}

Test(model_validation, inertia_must_be_symmetric) {
  grit_body_def bd = body_on(2);
  bd.inertia[1] = 0.1; /* I_xy != I_yx = 0 */
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "symmetric");
  bd = body_on(2);
  bd.inertia[5] = 0.01;
  bd.inertia[7] = -0.01;
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "symmetric");
}

Test(model_validation, inertia_must_be_positive_definite) {
  grit_body_def bd = body_on(2);
  bd.inertia[8] = -0.1; /* a negative moment */
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "positive definite");
  /* positive diagonal, but eigenvalues (-1, 1, 3): only the off-diagonal terms make it indefinite */
  bd = body_on(2);
  const double I[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
  memcpy(bd.inertia, I, sizeof I);
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "positive definite");
  /* a zero moment (an ideal rod) is singular, not positive definite */
  bd = body_on(2);
  bd.inertia[0] = 0.0;
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "positive definite");
}

Test(model_validation, principal_moments_obey_triangle_inequality) {
  grit_body_def bd = body_on(2);
  bd.inertia[0] = bd.inertia[4] = 1.0;
  bd.inertia[8] = 3.0; /* 1 + 1 < 3 */
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "triangle");
  /* the same moments on rotated principal axes: the check is on eigenvalues, not the diagonal */
  const double d[3] = {1.0, 1.0, 3.0}, q[4] = {0.8, 0.2, -0.4, 0.4};
  grit_inertia_from_principal(bd.inertia, d, q);
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "triangle");
  /* the limit case, a thin disc (I_zz = I_xx + I_yy), is physical and accepted */
  grit_builder *b = builder();
  bd = body_on(0);
  bd.inertia[0] = bd.inertia[4] = 0.25;
  bd.inertia[8] = 0.5;
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
}

Test(model_validation, non_finite_body_fields) {
  const double nan = NAN;
  static const char *const names[] = {"mass", "inertia", "pos", "quat", "com", "mass", "inertia", "pos"};
  for (int field = 0; field < 8; ++field) {
    grit_body_def bd = body_on(2);
    switch (field) {
      case 0: bd.mass = nan; break;
      case 1: bd.inertia[4] = nan; break;
      case 2: bd.pos[1] = nan; break;
      case 3: bd.quat[2] = nan; break;
      case 4: bd.com[0] = nan; break;
      case 5: bd.mass = INFINITY; break;
      case 6: bd.inertia[8] = -INFINITY; break;
      default: bd.pos[2] = INFINITY; break;
    }
    expect_bad_body(&bd, GRIT_ERR_NOT_FINITE, names[field]);
  }
}

Test(model_validation, parent_must_exist) {
  grit_body_def bd = body_on(5); /* bodies 0..2 exist */
  expect_bad_body(&bd, GRIT_ERR_INVALID_ARGUMENT, "parent 5");
  bd = body_on(-1);
  expect_bad_body(&bd, GRIT_ERR_INVALID_ARGUMENT, "parent -1");
  bd = body_on(3); /* itself */
  expect_bad_body(&bd, GRIT_ERR_INVALID_ARGUMENT, "parent 3");
}

Test(model_validation, quaternion_of_zero_norm) {
  grit_body_def bd = body_on(2);
  bd.quat[0] = 0.0;
  expect_bad_body(&bd, GRIT_ERR_INVALID_MODEL, "quat");
}

/* Expects adding `jd` to `body` (of a builder with bodies 1 <- 0, 2 <- 1, 3 <- 0 and the given earlier
 * joints) to fail with `status` and a message containing the fragments. */
static grit_builder *three_bodies(void) {
  grit_builder *b = builder();
  good_body(b, 0);
  good_body(b, 1);
  good_body(b, 0);
  return b;
}

static void expect_bad_joint(grit_builder *b, int body, const grit_joint_def *jd, grit_status status,
                             const char *frag1, const char *frag2) {
  int j = -7;
  grit_status s = grit_builder_add_joint(b, body, jd, &j);
  cr_assert_eq(s, status, "got %s: %s", grit_status_string(s), grit_builder_last_error(b));
  cr_assert_eq(j, -7);
  expect_message(b, frag1, frag2);
}

Test(model_validation, free_joint_only_on_children_of_the_world) {
  grit_builder *b = three_bodies();
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  expect_bad_joint(b, 2, &jd, GRIT_ERR_INVALID_MODEL, "body 2", "free");
  int j;
  cr_assert_eq(grit_builder_add_joint(b, 3, &jd, &j), GRIT_OK, "%s", grit_builder_last_error(b));
  cr_assert_eq(j, 0);
  grit_builder_free(b);
}

Test(model_validation, ball_or_free_joint_is_alone_on_its_body) {
  grit_joint_def hinge = grit_default_joint_def(), ball = grit_default_joint_def(), fr = grit_default_joint_def();
  ball.type = GRIT_JOINT_BALL;
  fr.type = GRIT_JOINT_FREE;
  /* hinge then ball */
  grit_builder *b = three_bodies();
  cr_assert_eq(grit_builder_add_joint(b, 2, &hinge, NULL), GRIT_OK);
  expect_bad_joint(b, 2, &ball, GRIT_ERR_INVALID_MODEL, "body 2", "ball");
  grit_builder_free(b);
  /* ball then hinge */
  b = three_bodies();
  cr_assert_eq(grit_builder_add_joint(b, 2, &ball, NULL), GRIT_OK);
  expect_bad_joint(b, 2, &hinge, GRIT_ERR_INVALID_MODEL, "body 2", NULL);
  /* two balls */
  expect_bad_joint(b, 2, &ball, GRIT_ERR_INVALID_MODEL, "body 2", NULL);
  grit_builder_free(b);
  /* free then slide */
  b = three_bodies();
  cr_assert_eq(grit_builder_add_joint(b, 3, &fr, NULL), GRIT_OK);
  hinge.type = GRIT_JOINT_SLIDE;
  expect_bad_joint(b, 3, &hinge, GRIT_ERR_INVALID_MODEL, "body 3", NULL);
  grit_builder_free(b);
  /* several hinges and slides on one body are fine */
  b = three_bodies();
  hinge.type = GRIT_JOINT_HINGE;
  grit_joint_def slide = grit_default_joint_def();
  slide.type = GRIT_JOINT_SLIDE;
  cr_assert_eq(grit_builder_add_joint(b, 2, &hinge, NULL), GRIT_OK);
  cr_assert_eq(grit_builder_add_joint(b, 2, &slide, NULL), GRIT_OK);
  cr_assert_eq(grit_builder_add_joint(b, 2, &hinge, NULL), GRIT_OK);
  grit_builder_free(b);
}

Test(model_validation, axis_must_be_nonzero) {
  grit_builder *b = three_bodies();
  grit_joint_def jd = grit_default_joint_def();
  jd.axis[2] = 0.0;
  expect_bad_joint(b, 2, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", "axis");
  jd.type = GRIT_JOINT_SLIDE;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", "axis");
  /* an unnormalized axis is normalized, not rejected */
  jd.axis[0] = 3.0;
  cr_assert_eq(grit_builder_add_joint(b, 1, &jd, NULL), GRIT_OK);
  grit_builder_free(b);
}

Test(model_validation, limited_range_must_not_be_empty) {
  grit_builder *b = three_bodies();
  grit_joint_def jd = grit_default_joint_def();
  cr_assert_eq(grit_builder_add_joint(b, 1, &jd, NULL), GRIT_OK);
  jd.limited = 1;
  jd.range[0] = 0.5;
  jd.range[1] = 0.5;
  expect_bad_joint(b, 2, &jd, GRIT_ERR_INVALID_MODEL, "joint 1", "range");
  jd.range[1] = -0.5;
  expect_bad_joint(b, 2, &jd, GRIT_ERR_INVALID_MODEL, "joint 1", "range");
  jd.range[1] = 0.6;
  cr_assert_eq(grit_builder_add_joint(b, 2, &jd, NULL), GRIT_OK);
  grit_builder_free(b);
}

Test(model_validation, joint_parameters) {
  grit_builder *b = three_bodies();
  grit_joint_def jd = grit_default_joint_def();
  jd.damping = -1;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", "damping");
  jd = grit_default_joint_def();
  jd.armature = -1;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", "armature");
  jd = grit_default_joint_def();
  jd.stiffness = -1;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", "stiffness");
  /* non-finite: every field, named in the message */
  static const char *const names[] = {"pos", "axis", "damping", "armature", "stiffness", "spring_ref", "range",
                                      "qpos0"};
  for (int field = 0; field < 8; ++field) {
    jd = grit_default_joint_def();
    switch (field) {
      case 0: jd.pos[1] = NAN; break;
      case 1: jd.axis[0] = NAN; break;
      case 2: jd.damping = NAN; break;
      case 3: jd.armature = INFINITY; break;
      case 4: jd.stiffness = NAN; break;
      case 5: jd.spring_ref = NAN; break;
      case 6: jd.range[1] = NAN; break;
      default: jd.qpos0 = NAN; break;
    }
    expect_bad_joint(b, 1, &jd, GRIT_ERR_NOT_FINITE, "joint 0", names[field]);
  }
  /* the world and non-existent bodies cannot carry joints */
  jd = grit_default_joint_def();
  expect_bad_joint(b, 0, &jd, GRIT_ERR_INVALID_ARGUMENT, "body 0", NULL);
  expect_bad_joint(b, 4, &jd, GRIT_ERR_INVALID_ARGUMENT, "body 4", NULL);
  jd.type = (grit_joint_type)9;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_ARGUMENT, "joint 0", NULL);
  /* limits and springs are not supported on ball joints */
  jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_BALL;
  jd.limited = 1;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_UNSUPPORTED, "joint 0", NULL);
  /* a free joint acts at the body origin */
  jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  jd.pos[0] = 0.1;
  expect_bad_joint(b, 1, &jd, GRIT_ERR_INVALID_MODEL, "joint 0", NULL);
  grit_builder_free(b);
}

Test(model_validation, actuators) {
  grit_builder *b = three_bodies();
  grit_joint_def jd = grit_default_joint_def();
  cr_assert_eq(grit_builder_add_joint(b, 1, &jd, NULL), GRIT_OK);
  jd.type = GRIT_JOINT_BALL;
  cr_assert_eq(grit_builder_add_joint(b, 2, &jd, NULL), GRIT_OK);
  grit_actuator_def ad = grit_default_actuator_def();
  ad.joint = 2;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_ERR_INVALID_ARGUMENT);
  expect_message(b, "actuator 0", "joint 2");
  ad.joint = 1;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_ERR_UNSUPPORTED);
  expect_message(b, "actuator 0", NULL);
  ad.joint = 0;
  ad.gear = NAN;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_ERR_NOT_FINITE);
  expect_message(b, "actuator 0", "gear");
  ad.gear = 1;
  ad.ctrl_range[0] = -INFINITY;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_ERR_NOT_FINITE);
  expect_message(b, "actuator 0", "ctrl_range");
  ad.ctrl_range[0] = 0;
  ad.gear = 2;
  ad.ctrl_limited = 1;
  ad.ctrl_range[0] = 1;
  ad.ctrl_range[1] = -1;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_ERR_INVALID_MODEL);
  expect_message(b, "actuator 0", "ctrl_range");
  ad.ctrl_range[0] = -1;
  ad.ctrl_range[1] = 1;
  int a;
  cr_assert_eq(grit_builder_add_actuator(b, &ad, &a), GRIT_OK);
  cr_assert_eq(a, 0);
  /* the compiled model gives the definition back */
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_actuator_def back;
  cr_assert_eq(grit_model_actuator(m, 0, &back), GRIT_OK);
  cr_assert_eq(back.joint, 0);
  cr_assert_eq(back.gear, 2);
  cr_assert(back.ctrl_limited && back.ctrl_range[0] == -1 && back.ctrl_range[1] == 1);
  cr_assert_eq(grit_model_actuator(m, 1, &back), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_model_actuator(m, -1, &back), GRIT_ERR_INVALID_ARGUMENT);
  grit_model_free(m);
  grit_builder_free(b);
}

Test(model_validation, options) {
  grit_builder *b = builder();
  grit_options o = grit_default_options();
  o.timestep = 0;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_INVALID_MODEL);
  expect_message(b, "timestep", NULL);
  o.timestep = NAN;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_NOT_FINITE);
  expect_message(b, "timestep", NULL);
  o.timestep = INFINITY;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_NOT_FINITE);
  o.timestep = -1e-3;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_INVALID_MODEL);
  expect_message(b, "timestep", NULL);
  o = grit_default_options();
  o.gravity[2] = NAN;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_NOT_FINITE);
  expect_message(b, "gravity", NULL);
  o.gravity[2] = -INFINITY;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_NOT_FINITE);
  expect_message(b, "gravity", NULL);
  o = grit_default_options();
  o.contact_margin = -0.01;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_INVALID_MODEL);
  expect_message(b, "contact_margin", NULL);
  o.contact_margin = NAN;
  cr_assert_neq(grit_builder_set_options(b, &o), GRIT_OK);
  expect_message(b, "contact_margin", NULL);
  o = grit_default_options();
  o.max_contacts = -1;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_ERR_INVALID_MODEL);
  expect_message(b, "max_contacts", NULL);
  /* nothing was applied: the model has the default options */
  good_body(b, 0);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  const grit_options got = grit_model_options(m), def = grit_default_options();
  cr_assert(got.timestep == def.timestep && got.contact_margin == def.contact_margin &&
                memcmp(got.gravity, def.gravity, sizeof got.gravity) == 0,
            "a rejected option was applied");
  grit_model_free(m);
  grit_builder_free(b);
}

/* Expects adding `gd` as geom 1 (after a good one) to fail with `status`, naming "geom 1" and `what`;
 * the failed add changes nothing (the next good geom is geom 1). */
static void expect_bad_geom(const grit_geom_def *gd, grit_status status, const char *what) {
  grit_builder *b = builder();
  good_body(b, 0);
  grit_geom_def good = grit_default_geom_def();
  good.body = 1;
  cr_assert_eq(grit_builder_add_geom(b, &good, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  int g = -7;
  grit_status s = grit_builder_add_geom(b, gd, &g);
  cr_assert_eq(s, status, "got %s: %s", grit_status_string(s), grit_builder_last_error(b));
  cr_assert_eq(g, -7, "the index output must not be written on failure");
  expect_message(b, "geom 1", what);
  cr_assert_eq(grit_builder_add_geom(b, &good, &g), GRIT_OK);
  cr_assert_eq(g, 1);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  cr_assert_eq(grit_model_ngeom(m), 2);
  grit_model_free(m);
  grit_builder_free(b);
}

Test(model_validation, geometry_parameters) {
  /* non-finite: every numeric field, named in the message */
  static const char *const names[] = {"pos", "quat", "friction", "stiffness", "dissipation", "tau_d", "stiffness"};
  for (int field = 0; field < 7; ++field) {
    grit_geom_def gd = grit_default_geom_def();
    switch (field) {
      case 0: gd.pos[2] = NAN; break;
      case 1: gd.quat[0] = INFINITY; break;
      case 2: gd.friction = NAN; break;
      case 3: gd.stiffness = NAN; break;
      case 4: gd.dissipation = INFINITY; break;
      case 5: gd.tau_d = NAN; break;
      default: gd.stiffness = INFINITY; break;
    }
    expect_bad_geom(&gd, GRIT_ERR_NOT_FINITE, names[field]);
  }
  /* out of range */
  grit_geom_def gd = grit_default_geom_def();
  gd.friction = -0.1;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "friction");
  gd = grit_default_geom_def();
  gd.stiffness = 0;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "stiffness");
  gd.stiffness = -1e6;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "stiffness");
  gd = grit_default_geom_def();
  gd.dissipation = -1;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "dissipation");
  gd = grit_default_geom_def();
  gd.tau_d = -1e-3;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "tau_d");
  gd = grit_default_geom_def();
  gd.quat[0] = 0;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "quat");
  gd = grit_default_geom_def();
  gd.body = 5;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_ARGUMENT, "body 5");
  /* shape sizes: zero, negative, NaN, infinite */
  const double sizes[] = {0, -0.1, NAN, INFINITY};
  for (int i = 0; i < 4; ++i) {
    gd = grit_default_geom_def();
    gd.shape = grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, sizes[i]);
    expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "size");
    gd.shape = grit_shape_make(GRIT_GEOM_SPHERE, sizes[i], 0, 0);
    expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "radius");
  }
  /* a convex shape with a non-finite vertex, or too few */
  double v[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  gd = grit_default_geom_def();
  gd.shape.type = GRIT_GEOM_CONVEX;
  gd.shape.vertices = v;
  gd.shape.nvert = 4;
  v[7] = NAN;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "convex");
  v[7] = 1;
  gd.shape.nvert = 3;
  expect_bad_geom(&gd, GRIT_ERR_INVALID_MODEL, "convex");
}

Test(model_validation, duplicate_names) {
  grit_builder *b = builder();
  grit_body_def bd = grit_default_body_def();
  bd.name = "link";
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
  grit_model *m = (grit_model *)1;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_ERR_INVALID_MODEL);
  cr_assert_null(m);
  expect_message(b, "link", "bodies 1 and 2");
  grit_builder_free(b);
}

Test(model_validation, null_arguments) {
  cr_assert_eq(grit_builder_create(NULL), GRIT_ERR_INVALID_ARGUMENT);
  grit_builder *b = builder();
  cr_assert_eq(grit_builder_add_body(b, NULL, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_builder_add_joint(b, 1, NULL, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_builder_compile(b, NULL), GRIT_ERR_INVALID_ARGUMENT);
  grit_builder_free(b);
  grit_builder_free(NULL);
  grit_model_free(NULL);
  grit_data_free(NULL);
}

/* ------------------------------------------------------------------------- numbering, accessors */

/* Bodies added out of depth-first order: 1 <- 0, 2 <- 0, 3 <- 1, 4 <- 2, 5 <- 1 (two trees, the first
 * branched). Coordinates are numbered tree by tree, each depth first: 1, 3, 5 then 2, 4. */
Test(model, coordinates_are_numbered_tree_by_tree_depth_first) {
  grit_builder *b = builder();
  const int parent[6] = {-1, 0, 0, 1, 2, 1};
  for (int k = 1; k <= 5; ++k) good_body(b, parent[k]);
  grit_joint_def hinge = grit_default_joint_def(), ball = grit_default_joint_def(), fr = grit_default_joint_def();
  ball.type = GRIT_JOINT_BALL;
  fr.type = GRIT_JOINT_FREE;
  int j[6];
  cr_assert_eq(grit_builder_add_joint(b, 4, &hinge, &j[0]), GRIT_OK); /* joint 0 on body 4 */
  cr_assert_eq(grit_builder_add_joint(b, 1, &fr, &j[1]), GRIT_OK);    /* joint 1 on body 1 */
  cr_assert_eq(grit_builder_add_joint(b, 5, &hinge, &j[2]), GRIT_OK); /* joint 2 on body 5 */
  cr_assert_eq(grit_builder_add_joint(b, 3, &ball, &j[3]), GRIT_OK);  /* joint 3 on body 3 */
  cr_assert_eq(grit_builder_add_joint(b, 2, &hinge, &j[4]), GRIT_OK); /* joint 4 on body 2 */
  cr_assert_eq(grit_builder_add_joint(b, 5, &hinge, &j[5]), GRIT_OK); /* joint 5 on body 5 */
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  cr_assert_eq(grit_model_nq(m), 7 + 4 + 4);
  cr_assert_eq(grit_model_nv(m), 6 + 3 + 4);
  cr_assert_eq(grit_model_ntree(m), 2);
  cr_assert_eq(grit_model_njoint(m), 6);
  /* tree 1: body 1 (free, dofs 0-5), body 3 (ball, 6-8), body 5 (joints 2 then 5: dofs 9, 10);
   * tree 2: body 2 (joint 4: dof 11), body 4 (joint 0: dof 12) */
  const int dof[6] = {12, 0, 9, 6, 11, 10}, qadr[6] = {14, 0, 11, 7, 13, 12};
  for (int k = 0; k < 6; ++k) {
    cr_assert_eq(grit_model_joint_dofadr(m, k), dof[k], "joint %d dof %d", k, grit_model_joint_dofadr(m, k));
    cr_assert_eq(grit_model_joint_qposadr(m, k), qadr[k], "joint %d qpos %d", k, grit_model_joint_qposadr(m, k));
  }
  cr_assert_eq(grit_model_joint_type(m, 3), GRIT_JOINT_BALL);
  cr_assert_eq(grit_model_joint_dofadr(m, 6), -1);
  /* qpos0: free = body pos/quat, ball = identity */
  double q0[15];
  grit_model_qpos0(m, q0);
  cr_assert_eq(q0[3], 1.0);
  cr_assert_eq(q0[7], 1.0);
  cr_assert_eq(grit_model_body_mass(m, 0), 0.0);
  cr_assert_eq(grit_model_body_mass(m, 3), 1.0);
  cr_assert_eq(grit_model_body_mass(m, 6), -1.0);
  grit_model_free(m);
}

Test(model, names_and_welded_trees) {
  grit_builder *b = builder();
  grit_body_def bd = grit_default_body_def();
  bd.name = "base";
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK); /* welded to the world: no tree */
  bd.name = "arm";
  bd.parent = 1;
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
  grit_joint_def jd = grit_default_joint_def();
  jd.name = "shoulder";
  cr_assert_eq(grit_builder_add_joint(b, 2, &jd, NULL), GRIT_OK);
  grit_actuator_def ad = grit_default_actuator_def();
  ad.name = "motor";
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  /* the builder may be changed and compiled again, independently of the first model */
  bd.name = "extra";
  cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
  grit_builder_free(b);
  cr_assert_eq(grit_model_body_index(m, "arm"), 2);
  cr_assert_eq(grit_model_body_index(m, "extra"), -1);
  cr_assert_eq(grit_model_joint_index(m, "shoulder"), 0);
  cr_assert_eq(grit_model_actuator_index(m, "motor"), 0);
  cr_assert_eq(grit_model_actuator_index(m, NULL), -1);
  cr_assert_eq(grit_model_ntree(m), 1);
  cr_assert_eq(grit_model_nu(m), 1);
  /* names by index (grit/model_names.h): "" for an unnamed element (the world), NULL out of range */
  cr_assert_str_eq(grit_model_body_name(m, 0), "");
  cr_assert_str_eq(grit_model_body_name(m, 1), "base");
  cr_assert_str_eq(grit_model_body_name(m, 2), "arm");
  cr_assert_null(grit_model_body_name(m, 3));
  cr_assert_null(grit_model_body_name(m, -1));
  cr_assert_str_eq(grit_model_joint_name(m, 0), "shoulder");
  cr_assert_null(grit_model_joint_name(m, 1));
  cr_assert_str_eq(grit_model_actuator_name(m, 0), "motor");
  cr_assert_null(grit_model_geom_name(m, 0));
  cr_assert_null(grit_model_body_name(NULL, 0));
  grit_model_free(m);
}

Test(data, state_setters_validate) {
  grit_builder *b = builder();
  good_body(b, 0);
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, 1, &jd, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  double q[7] = {1, 2, 3, 2, 0, 0, 0}, v[6] = {0};
  cr_assert_eq(grit_data_set_qpos(d, q, 7), GRIT_OK);
  cr_assert_float_eq(grit_data_qpos(d)[3], 1.0, 1e-15, "quaternions are normalized");
  q[0] = NAN;
  cr_assert_eq(grit_data_set_qpos(d, q, 7), GRIT_ERR_NOT_FINITE);
  cr_assert(strstr(grit_data_last_error(d), "qpos[0]"));
  cr_assert_eq(grit_data_qpos(d)[0], 1.0, "nothing changes on error");
  q[0] = 0;
  q[3] = 0;
  cr_assert_eq(grit_data_set_qpos(d, q, 7), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(grit_data_last_error(d), "joint 0"));
  cr_assert_eq(grit_data_set_qpos(d, q, 6), GRIT_ERR_INVALID_ARGUMENT);
  v[5] = INFINITY;
  cr_assert_eq(grit_data_set_qvel(d, v, 6), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_data_set_time(d, NAN), GRIT_ERR_NOT_FINITE);
  grit_data_free(d);
  grit_model_free(m);
}

/* Every setter on a model with a hinge (actuated), a ball joint and a free joint: wrong lengths, NULL,
 * NaN and infinity anywhere, zero and near-zero quaternions are rejected with a message naming the
 * vector and the entry or joint, and change nothing (bitwise); other quaternions are normalized. */
Test(data, setters_reject_bad_input_and_change_nothing) {
  grit_builder *b = builder();
  good_body(b, 0);
  good_body(b, 1);
  good_body(b, 0);
  grit_joint_def jd = grit_default_joint_def();
  cr_assert_eq(grit_builder_add_joint(b, 1, &jd, NULL), GRIT_OK);
  jd.type = GRIT_JOINT_BALL;
  cr_assert_eq(grit_builder_add_joint(b, 2, &jd, NULL), GRIT_OK);
  jd.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, 3, &jd, NULL), GRIT_OK);
  grit_actuator_def ad = grit_default_actuator_def();
  cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  cr_assert_eq(grit_model_nq(m), 12);
  cr_assert_eq(grit_model_nv(m), 10);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  /* a good state first */
  double q[12] = {0.3, 0, 2, 0, 0, 1, 2, 3, 0, 0, 0, 4}, v[10], u[1] = {0.5};
  for (int i = 0; i < 10; ++i) v[i] = 0.1 * i;
  cr_assert_eq(grit_data_set_qpos(d, q, 12), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, 10), GRIT_OK);
  cr_assert_eq(grit_data_set_ctrl(d, u, 1), GRIT_OK);
  cr_assert_eq(grit_data_set_time(d, 1.5), GRIT_OK);
  const int ball = grit_model_joint_qposadr(m, 1), free_q = grit_model_joint_qposadr(m, 2) + 3;
  cr_assert_float_eq(grit_data_qpos(d)[ball], 0.0, 1e-15);
  cr_assert_float_eq(grit_data_qpos(d)[ball + 1], 1.0, 1e-15, "ball quaternion (0 2 0 0) normalized");
  cr_assert_float_eq(grit_data_qpos(d)[free_q + 3], 1.0, 1e-15, "free quaternion (0 0 0 4) normalized");
  double q0[12], v0[10], u0[1], t0 = grit_data_time(d);
  memcpy(q0, grit_data_qpos(d), sizeof q0);
  memcpy(v0, grit_data_qvel(d), sizeof v0);
  memcpy(u0, grit_data_ctrl(d), sizeof u0);
  const double bad[] = {NAN, INFINITY, -INFINITY};
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 12; ++i) {
      double x[12];
      memcpy(x, q0, sizeof x);
      x[i] = bad[k];
      cr_assert_eq(grit_data_set_qpos(d, x, 12), GRIT_ERR_NOT_FINITE);
      char name[32];
      snprintf(name, sizeof name, "qpos[%d]", i);
      cr_assert(strstr(grit_data_last_error(d), name), "message '%s' lacks %s", grit_data_last_error(d), name);
    }
    for (int i = 0; i < 10; ++i) {
      double x[10];
      memcpy(x, v0, sizeof x);
      x[i] = bad[k];
      cr_assert_eq(grit_data_set_qvel(d, x, 10), GRIT_ERR_NOT_FINITE);
      cr_assert(strstr(grit_data_last_error(d), "qvel["));
    }
    double x[1] = {bad[k]};
    cr_assert_eq(grit_data_set_ctrl(d, x, 1), GRIT_ERR_NOT_FINITE);
    cr_assert(strstr(grit_data_last_error(d), "ctrl[0]"));
    cr_assert_eq(grit_data_set_time(d, bad[k]), GRIT_ERR_NOT_FINITE);
  }
  /* zero and near-zero quaternions of the ball and the free joint */
  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < 2; ++k) {
      double x[12];
      memcpy(x, q0, sizeof x);
      double *qq = x + (j == 0 ? ball : free_q);
      qq[0] = k ? 1e-12 : 0, qq[1] = qq[2] = qq[3] = 0;
      cr_assert_eq(grit_data_set_qpos(d, x, 12), GRIT_ERR_INVALID_ARGUMENT);
      char name[32];
      snprintf(name, sizeof name, "joint %d", j + 1);
      cr_assert(strstr(grit_data_last_error(d), name), "message '%s' lacks %s", grit_data_last_error(d), name);
    }
  /* lengths and NULL */
  cr_assert_eq(grit_data_set_qpos(d, q0, 11), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(grit_data_last_error(d), "length 11"));
  cr_assert_eq(grit_data_set_qpos(d, q0, 13), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_qvel(d, v0, 12), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_qvel(d, v0, -1), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_ctrl(d, u0, 0), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_qpos(d, NULL, 12), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_qvel(d, NULL, 10), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_ctrl(d, NULL, 1), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_data_set_qpos(NULL, q0, 12), GRIT_ERR_INVALID_ARGUMENT);
  /* nothing changed */
  cr_assert(memcmp(q0, grit_data_qpos(d), sizeof q0) == 0, "a rejected qpos changed q");
  cr_assert(memcmp(v0, grit_data_qvel(d), sizeof v0) == 0, "a rejected qvel changed v");
  cr_assert(memcmp(u0, grit_data_ctrl(d), sizeof u0) == 0, "a rejected ctrl changed u");
  cr_assert(grit_data_time(d) == t0);
  grit_data_free(d);
  grit_model_free(m);
}
