/* SPDX-License-Identifier: Apache-2.0 */
/* physics_scenes.h — small scenes shared by the physics validation tests (header-only, test code). */
#ifndef GRIT_TEST_PHYSICS_SCENES_H
#define GRIT_TEST_PHYSICS_SCENES_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grit/grit.h"

/* Contact parameters of one scene, applied to every geometry (pairs of equal geometries keep them). */
typedef struct scene_contact {
  double mu, k, d, tau_d;
} scene_contact;

static inline grit_geom_def scene_geom(const scene_contact *c, int body, grit_shape shape) {
  grit_geom_def g = grit_default_geom_def();
  g.body = body;
  g.shape = shape;
  g.friction = c->mu;
  g.stiffness = c->k;
  g.dissipation = c->d;
  g.tau_d = c->tau_d;
  return g;
}

/* A free body of mass m with diagonal inertia (ix, iy, iz), at pos; returns its index. */
static inline int scene_free_body(grit_builder *b, double m, double ix, double iy, double iz, const double pos[3]) {
  grit_body_def bd = grit_default_body_def();
  bd.mass = m;
  memset(bd.inertia, 0, sizeof bd.inertia);
  bd.inertia[0] = ix;
  bd.inertia[4] = iy;
  bd.inertia[8] = iz;
  for (int i = 0; i < 3; ++i) bd.pos[i] = pos[i];
  int body = -1;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return body;
}

static inline grit_builder *scene_builder(double dt, const double gravity[3]) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options o = grit_default_options();
  o.timestep = dt;
  if (gravity)
    for (int i = 0; i < 3; ++i) o.gravity[i] = gravity[i];
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_OK);
  return b;
}

static inline grit_data *scene_data(grit_builder *b, grit_model **m, grit_contact_model model) {
  cr_assert_eq(grit_builder_compile(b, m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  return d;
}

static inline void scene_step(grit_data *d) {
  grit_status s = grit_step(d);
  cr_assert_eq(s, GRIT_OK, "step at t = %g failed: %s", grit_data_time(d), grit_data_last_error(d));
}

/* World angular velocity of a free body whose qpos starts at qadr and qvel at vadr. */
static inline void scene_world_omega(const grit_data *d, int qadr, int vadr, double w[3]) {
  grit_quat_rotate(w, grit_data_qpos(d) + qadr + 3, grit_data_qvel(d) + vadr + 3);
}

static const char *const SCENE_MODEL_NAMES[3] = {"lagged", "similar", "sap"};

#endif
