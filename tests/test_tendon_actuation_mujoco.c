/* SPDX-License-Identifier: Apache-2.0 */
/* test_tendon_actuation_mujoco.c — actuators with tendon transmissions against MuJoCo 2.2.2 (a reference
 * peer, this test only): tests/mjcf/tendon_actuators.xml (fixed and spatial tendons, straight and wrapped;
 * position, velocity, motor, affine general and filter actuators on them; gravity and contact off) loaded
 * by both, the same controls, 1 s, max |dq| over the run; and the actuators' forces at random states.
 *
 * As for joint transmissions (test_actuation_mujoco.c), grit treats the servos' stabilizing slopes
 * implicitly (g^2 kq J^T J, g^2 kv J^T J in the implicit operator), MuJoCo 2.2.2's Euler explicitly: an
 * O(dt) difference per unit time, so the 1e-4 comparison is made at dt = 1e-5 s and the difference at
 * dt = 1e-3 s must be about 100 times it (first order). With grit's explicit_actuation (MuJoCo's Euler
 * treatment) the two agree at dt = 1e-3 s itself. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

#define MODEL GRIT_SOURCE_DIR "/tests/mjcf/tendon_actuators.xml"

typedef struct pair {
  mjModel *mm;
  mjData *md;
  grit_model *gm;
  grit_data *gd;
} pair;

static pair load(double dt, int explicit_actuation) {
  pair p;
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  p.mm = mj_loadXML(MODEL, NULL, err, sizeof err);
  cr_assert(p.mm, "%s", err);
  p.mm->opt.timestep = dt;
  p.md = mj_makeData(p.mm);
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = dt;
  lo.explicit_actuation = explicit_actuation;
  cr_assert_eq(grit_mjcf_load_file_with(MODEL, &lo, &p.gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(p.gm, &p.gd), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(p.gd);
  st.rel_tol = 1e-10;
  grit_data_set_step_settings(p.gd, &st);
  cr_assert_eq(grit_model_nu(p.gm), p.mm->nu);
  cr_assert_eq(grit_model_na(p.gm), p.mm->na);
  cr_assert_eq(grit_model_nq(p.gm), p.mm->nq);
  return p;
}

static void unload(pair *p) {
  grit_data_free(p->gd);
  grit_model_free(p->gm);
  mj_deleteData(p->md);
  mj_deleteModel(p->mm);
}

/* max |q_grit - q_mujoco| over 1 s from the reference pose at rest with constant controls u, at dt. */
static double run(const double *u, double dt, int explicit_actuation) {
  pair p = load(dt, explicit_actuation);
  const int nu = p.mm->nu, nq = p.mm->nq;
  grit_data_set_ctrl(p.gd, u, nu);
  for (int i = 0; i < nu; ++i) p.md->ctrl[i] = u[i];
  double e = 0;
  const int steps = (int)lround(1.0 / dt);
  for (int k = 0; k < steps; ++k) {
    mj_step(p.mm, p.md);
    cr_assert_eq(grit_step(p.gd), GRIT_OK, "%s", grit_data_last_error(p.gd));
    for (int i = 0; i < nq; ++i) e = fmax(e, fabs(grit_data_qpos(p.gd)[i] - p.md->qpos[i]));
  }
  for (int i = 0; i < p.mm->na; ++i)
    cr_assert(fabs(grit_data_act(p.gd)[i] - p.md->act[i]) <= 1e-9 + 1e-3 * fabs(p.md->act[i]), "act %d: %g vs %g", i,
              grit_data_act(p.gd)[i], p.md->act[i]);
  unload(&p);
  return e;
}

/* servo target 0.3 (second set: 1.4, clamped to 1), damper 0.5, pull clamped, affine 0.7 (saturating),
 * filtered driven */
static const double U0[5] = {0, 0, 0, 0, 0};
static const double U1[5] = {1.4, 0.5, 0.9, 0.7, 0.6};

Test(tendon_actuation_mujoco, one_second_against_mujoco) {
  const double dts[2] = {1e-3, 1e-5};
  double e[2][2]; /* [dt][controls] */
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 2; ++c) e[i][c] = run(c ? U1 : U0, dts[i], 0);
  double ex[2];
  for (int c = 0; c < 2; ++c) ex[c] = run(c ? U1 : U0, 1e-3, 1);
  printf("tendon actuation vs MuJoCo 2.2.2 (Euler), max |dq| over 1 s: zero ctrl %.3g/%.3g (dt 1e-3/1e-5), "
         "nonzero %.3g/%.3g; explicit_actuation at dt 1e-3: %.3g, %.3g\n",
         e[0][0], e[1][0], e[0][1], e[1][1], ex[0], ex[1]);
  for (int c = 0; c < 2; ++c) {
    cr_assert_leq(e[1][c], 1e-4, "dt 1e-5: %g", e[1][c]);
    const double ratio = e[0][c] / e[1][c];
    cr_assert(ratio > 70 && ratio < 130, "first order in dt: ratio %g", ratio);
    cr_assert_leq(ex[c], 1e-9, "explicit actuation at dt 1e-3: %g", ex[c]);
  }
}

/* The actuators' forces at a state (grit_actuator_forces) are MuJoCo's actuator_force, at random states,
 * controls (some beyond ctrlrange) and activations: the tendons' lengths, their velocities J v and the
 * actuators' formulas are the same. */
Test(tendon_actuation_mujoco, actuator_forces_equal_mujocos) {
  pair p = load(1e-3, 0);
  const int nu = p.mm->nu, nq = p.mm->nq, nv = p.mm->nv, na = p.mm->na;
  srand(7);
  double worst = 0;
  for (int trial = 0; trial < 50; ++trial) {
    double q[16], v[16], u[16], a[16], f[16];
    for (int i = 0; i < nq; ++i) q[i] = 1.2 * ((double)rand() / RAND_MAX - 0.5);
    for (int i = 0; i < nv; ++i) v[i] = 2.0 * ((double)rand() / RAND_MAX - 0.5);
    for (int i = 0; i < nu; ++i) u[i] = 3.0 * ((double)rand() / RAND_MAX - 0.5);
    for (int i = 0; i < na; ++i) a[i] = 2.0 * ((double)rand() / RAND_MAX - 0.5);
    cr_assert_eq(grit_data_set_qpos(p.gd, q, nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(p.gd, v, nv), GRIT_OK);
    cr_assert_eq(grit_data_set_ctrl(p.gd, u, nu), GRIT_OK);
    cr_assert_eq(grit_data_set_act(p.gd, a, na), GRIT_OK);
    cr_assert_eq(grit_actuator_forces(p.gd, f), GRIT_OK);
    memcpy(p.md->qpos, q, sizeof(double) * (size_t)nq);
    memcpy(p.md->qvel, v, sizeof(double) * (size_t)nv);
    memcpy(p.md->ctrl, u, sizeof(double) * (size_t)nu);
    memcpy(p.md->act, a, sizeof(double) * (size_t)na);
    mj_forward(p.mm, p.md);
    for (int i = 0; i < nu; ++i) worst = fmax(worst, fabs(f[i] - p.md->actuator_force[i]));
  }
  printf("tendon actuator forces vs MuJoCo 2.2.2: max |df| %.3g over 50 states\n", worst);
  cr_assert_leq(worst, 1e-12);
  unload(&p);
}
