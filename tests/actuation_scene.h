/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_scene.h — a 4-link hinge chain under gravity driven by every kind of actuator grit has
 * (position servos, a velocity servo, a general affine actuator, a filter and an integrator, a
 * saturated servo, a clamped motor); shared by test_actuation.c and test_noalloc.c. */
#ifndef GRIT_TEST_ACTUATION_SCENE_H
#define GRIT_TEST_ACTUATION_SCENE_H

#include "grit/grit.h"

enum { AS_NU = 7 };

static inline grit_actuator_def as_servo(int joint, double kp, double kv) {
  grit_actuator_def a = grit_default_actuator_def();
  a.joint = joint;
  a.gainprm[0] = kp;
  a.biastype = GRIT_BIAS_AFFINE;
  a.biasprm[1] = -kp;
  a.biasprm[2] = -kv;
  return a;
}

/* The chain; `dt` its time step. Controls: 0 position kp 50 (ctrl-limited to [-1, 1]), 1 velocity kv
 * 3, 2 general affine gain and bias (gear 1.5, force-limited, not saturated), 3 filter position servo
 * (tau 0.05), 4 integrator motor, 5 position kp 1000 force-limited to [-0.5, 0.5] (saturated), 6 motor
 * with ctrl_range [-0.2, 0.2]. */
static inline grit_model *as_build_ex(double dt, int explicit_actuation) {
  grit_builder *b;
  if (grit_builder_create(&b) != GRIT_OK) return NULL;
  grit_options o = grit_default_options();
  o.timestep = dt;
  o.explicit_actuation = explicit_actuation;
  grit_builder_set_options(b, &o);
  for (int k = 1; k <= 4; ++k) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = k - 1;
    bd.pos[2] = k == 1 ? 0.0 : -0.4;
    bd.com[2] = -0.2;
    bd.mass = 1.0 - 0.15 * k;
    grit_builder_add_body(b, &bd, NULL);
    grit_joint_def jd = grit_default_joint_def();
    jd.axis[0] = k % 2, jd.axis[1] = 1 - k % 2, jd.axis[2] = 0;
    jd.damping = 0.05;
    grit_builder_add_joint(b, k, &jd, NULL);
  }
  grit_actuator_def a[AS_NU];
  a[0] = as_servo(0, 50, 0);
  a[0].ctrl_limited = 1;
  a[1] = grit_default_actuator_def();
  a[1].joint = 1, a[1].gainprm[0] = 3, a[1].biastype = GRIT_BIAS_AFFINE, a[1].biasprm[2] = -3;
  a[2] = grit_default_actuator_def();
  a[2].joint = 2, a[2].gear = 1.5, a[2].gaintype = GRIT_GAIN_AFFINE, a[2].biastype = GRIT_BIAS_AFFINE;
  a[2].gainprm[0] = 2, a[2].gainprm[1] = 0.5, a[2].gainprm[2] = 0.1;
  a[2].biasprm[0] = 0.1, a[2].biasprm[1] = -3, a[2].biasprm[2] = -0.5;
  a[2].force_limited = 1, a[2].force_range[0] = -100, a[2].force_range[1] = 100;
  a[3] = as_servo(3, 10, 0);
  a[3].dyntype = GRIT_DYN_FILTER, a[3].dynprm[0] = 0.05;
  a[4] = grit_default_actuator_def();
  a[4].joint = 0, a[4].dyntype = GRIT_DYN_INTEGRATOR;
  a[5] = as_servo(2, 1000, 0);
  a[5].force_limited = 1, a[5].force_range[0] = -0.5, a[5].force_range[1] = 0.5;
  a[6] = grit_default_actuator_def();
  a[6].joint = 1, a[6].ctrl_limited = 1, a[6].ctrl_range[0] = -0.2, a[6].ctrl_range[1] = 0.2;
  for (int i = 0; i < AS_NU; ++i)
    if (grit_builder_add_actuator(b, &a[i], NULL) != GRIT_OK) {
      grit_builder_free(b);
      return NULL;
    }
  grit_model *m = NULL;
  grit_builder_compile(b, &m);
  grit_builder_free(b);
  return m;
}

static inline grit_model *as_build(double dt) { return as_build_ex(dt, 0); }

/* A state and control away from every kink: servo 5 saturated (its target 1 rad away), motor 6 clamped
 * (u = 0.5 > 0.2), servo 0 inside its range. */
static inline void as_state(double *q, double *v, double *act, double *u) {
  const double q0[4] = {0.3, -0.2, 0.25, 0.4}, v0[4] = {0.5, -0.3, 0.2, -0.4};
  for (int i = 0; i < 4; ++i) q[i] = q0[i], v[i] = v0[i];
  act[0] = 0.1, act[1] = -0.2;
  const double uu[AS_NU] = {0.5, 0.4, -0.3, 0.6, 0.7, 1.25, 0.5};
  for (int i = 0; i < AS_NU; ++i) u[i] = uu[i];
}

#endif
