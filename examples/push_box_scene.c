/* SPDX-License-Identifier: Apache-2.0 */
/* push_box_scene.c — the finger-pushes-box scene (push_box_scene.h), built with the public builder. */
#include "push_box_scene.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

grit_model *push_box_build(double mu, double gap, double finger_y, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  if (grit_builder_create(&b) != GRIT_OK) return NULL;
  grit_options opt = grit_default_options();
  opt.timestep = 0.02;
  grit_builder_set_options(b, &opt);
  grit_geom_def floor = grit_default_geom_def();
  floor.shape.type = GRIT_GEOM_PLANE;
  floor.friction = mu;
  grit_status s = grit_builder_add_geom(b, &floor, NULL);
  int bx = 0, by = 0, box = 0, jx = 0, jy = 0;
  grit_body_def stage = grit_default_body_def();
  stage.parent = 0;
  stage.pos[0] = -PUSH_BOX_HALF - PUSH_FINGER_R - gap, stage.pos[1] = finger_y, stage.pos[2] = PUSH_BOX_HALF;
  stage.mass = 0.2;
  memset(stage.inertia, 0, sizeof stage.inertia);
  stage.inertia[0] = stage.inertia[4] = stage.inertia[8] = 1e-4;
  if (!s) s = grit_builder_add_body(b, &stage, &bx);
  grit_joint_def slide = grit_default_joint_def();
  slide.type = GRIT_JOINT_SLIDE;
  slide.axis[0] = 1, slide.axis[1] = 0, slide.axis[2] = 0;
  slide.damping = 1.0;
  if (!s) s = grit_builder_add_joint(b, bx, &slide, &jx);
  stage.parent = bx;
  stage.pos[0] = stage.pos[1] = stage.pos[2] = 0;
  if (!s) s = grit_builder_add_body(b, &stage, &by);
  slide.axis[0] = 0, slide.axis[1] = 1;
  if (!s) s = grit_builder_add_joint(b, by, &slide, &jy);
  grit_actuator_def act = grit_default_actuator_def();
  act.ctrl_limited = 1;
  act.ctrl_range[0] = -PUSH_FORCE_MAX, act.ctrl_range[1] = PUSH_FORCE_MAX;
  act.joint = jx;
  if (!s) s = grit_builder_add_actuator(b, &act, NULL);
  act.joint = jy;
  if (!s) s = grit_builder_add_actuator(b, &act, NULL);
  grit_geom_def finger = grit_default_geom_def();
  finger.shape.type = GRIT_GEOM_SPHERE;
  finger.shape.size[0] = PUSH_FINGER_R;
  finger.body = by;
  finger.friction = mu;
  if (!s) s = grit_builder_add_geom(b, &finger, NULL);
  grit_body_def bd = grit_default_body_def();
  bd.parent = 0;
  bd.pos[2] = PUSH_BOX_HALF;
  bd.mass = 0.5;
  memset(bd.inertia, 0, sizeof bd.inertia);
  bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.5 * (2 * PUSH_BOX_HALF) * (2 * PUSH_BOX_HALF) / 6;
  if (!s) s = grit_builder_add_body(b, &bd, &box);
  grit_joint_def free_joint = grit_default_joint_def();
  free_joint.type = GRIT_JOINT_FREE;
  if (!s) s = grit_builder_add_joint(b, box, &free_joint, NULL);
  grit_geom_def cube = grit_default_geom_def();
  cube.shape.type = GRIT_GEOM_BOX;
  cube.shape.size[0] = cube.shape.size[1] = cube.shape.size[2] = PUSH_BOX_HALF;
  cube.body = box;
  cube.friction = mu;
  if (!s) s = grit_builder_add_geom(b, &cube, NULL);
  grit_model *m = NULL;
  if (!s) s = grit_builder_compile(b, &m);
  if (s) snprintf(msg, GRIT_MESSAGE_SIZE, "model: %s", grit_builder_last_error(b));
  grit_builder_free(b);
  return s ? NULL : m;
}


double push_box_yaw(const double *q) {
  return atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] * q[2] + q[3] * q[3]));
}
