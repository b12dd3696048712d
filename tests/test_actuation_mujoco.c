/* SPDX-License-Identifier: Apache-2.0 */
/* test_actuation_mujoco.c — actuators against MuJoCo 2.2.2 (a reference peer, this test only): the same
 * MJCF file (tests/mjcf/actuators.xml: position, velocity, general affine, filter, intvelocity, motor;
 * gravity and contact off) loaded by both, the same controls, 1 s, max |dq| over the run.
 *
 * Where the formulations differ: grit treats the servos' stabilizing slopes (kp through the position
 * change, kv) implicitly, like joint springs and damping; MuJoCo's Euler integrator treats them
 * explicitly (only joint damping is implicit), its implicit integrator (2.2.2: integrator="implicit")
 * treats every velocity derivative implicitly (kv, damping, and the Coriolis terms) but kp explicitly.
 * Both differ from grit by O(dt) per unit time (measured: 4.2e-3 rad at dt 1e-3 s, 4.2e-4 at 1e-4,
 * 4.2e-5 at 1e-5 with the nonzero controls: exactly first order), so the 1e-4 comparison is made at
 * dt = 1e-5 s, where the O(dt) difference is below it; the difference at 1e-3 s must be 100 times the
 * one at 1e-5 s (within 10 %): the actuators' forces agree, only their time discretization differs. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_mujoco_util.h"

static const char *path_of(char *buf, size_t n, const char *rel) {
  snprintf(buf, n, "%s/%s", GRIT_SOURCE_DIR, rel);
  return buf;
}

/* max |q_grit - q_mujoco| over 1 s from q0 = 0, v0 = 0 with constant controls u (nu numbers), at time
 * step dt, with MuJoCo's integrator `integ` (mjINT_EULER or mjINT_IMPLICIT). */
static double run_with(const double *u, double dt, int integ, int explicit_actuation) {
  char path[1024], err[1000] = "";
  path_of(path, sizeof path, "tests/mjcf/actuators.xml");
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mm->opt.timestep = dt;
  mm->opt.integrator = integ;
  mjData *md = mj_makeData(mm);
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = dt;
  lo.explicit_actuation = explicit_actuation;
  grit_model *gm;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &gm, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(gd);
  st.rel_tol = 1e-10;
  grit_data_set_step_settings(gd, &st);
  const int nu = mm->nu, nq = mm->nq;
  cr_assert_eq(grit_model_nu(gm), nu);
  cr_assert_eq(grit_model_na(gm), mm->na);
  grit_data_set_ctrl(gd, u, nu);
  for (int i = 0; i < nu; ++i) md->ctrl[i] = u[i];
  double e = 0;
  const int steps = (int)lround(1.0 / dt);
  for (int k = 0; k < steps; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
    for (int i = 0; i < nq; ++i) e = fmax(e, fabs(grit_data_qpos(gd)[i] - md->qpos[i]));
  }
  for (int i = 0; i < mm->na; ++i) /* activations: the same explicit update in both */
    cr_assert(fabs(grit_data_act(gd)[i] - md->act[i]) <= 1e-9 + 1e-3 * fabs(md->act[i]), "act %d: %g vs %g", i,
              grit_data_act(gd)[i], md->act[i]);
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return e;
}

static double run(const double *u, double dt, int integ) { return run_with(u, dt, integ, 0); }

/* Controls: p1 target 0.8 (clamped to 1 from 1.5 in the second set), v2 0.7 rad/s, g3 0.4, m2 clamped,
 * f4 and i1 driven. */
static const double U0[6] = {0, 0, 0, 0, 0, 0};
static const double U1[6] = {1.5, 0.7, 0.4, 0.3, 1.0, 0.6};

/* The largest |grit's actuator force - MuJoCo's actuator_force| over `trials` random states (positions,
 * velocities, controls and activations from an LCG seeded with `seed`), set in both engines. */
static double random_states_force_error(const mjModel *mm, mjData *md, grit_data *gd, unsigned seed, int trials) {
  unsigned s = seed;
  double e = 0, f[16];
  cr_assert_leq(mm->nu, 16);
  for (int trial = 0; trial < trials; ++trial) {
    for (int i = 0; i < mm->nq; ++i) md->qpos[i] = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0 * 2 - 1;
    for (int i = 0; i < mm->nv; ++i) md->qvel[i] = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0 * 4 - 2;
    for (int i = 0; i < mm->nu; ++i) md->ctrl[i] = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0 * 3 - 1.5;
    for (int i = 0; i < mm->na; ++i) md->act[i] = ((s = s * 1103515245u + 12345u) >> 8) / 16777216.0 * 2 - 1;
    mj_forward(mm, md);
    grit_data_set_qpos(gd, md->qpos, mm->nq);
    grit_data_set_qvel(gd, md->qvel, mm->nv);
    grit_data_set_ctrl(gd, md->ctrl, mm->nu);
    grit_data_set_act(gd, md->act, mm->na);
    cr_assert_eq(grit_actuator_forces(gd, f), GRIT_OK);
    for (int a = 0; a < mm->nu; ++a) e = fmax(e, fabs(f[a] - md->actuator_force[a]));
  }
  return e;
}

Test(actuation_mujoco, one_second_against_mujoco) {
  const double dts[2] = {1e-3, 1e-5};
  double e[2][2][2]; /* [dt][controls][integrator] */
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 2; ++c)
      for (int g = 0; g < 2; ++g) e[i][c][g] = run(c ? U1 : U0, dts[i], g ? mjINT_IMPLICIT : mjINT_EULER);
  for (int c = 0; c < 2; ++c)
    cr_log_info("controls %s: max |dq| over 1 s vs Euler: %.3g (dt 1e-3), %.3g (dt 1e-4); vs implicit: %.3g, %.3g",
                c ? "nonzero" : "zero", e[0][c][0], e[1][c][0], e[0][c][1], e[1][c][1]);
  printf("actuation vs MuJoCo 2.2.2, max |dq| over 1 s: zero ctrl %.3g/%.3g (Euler dt 1e-3/1e-5), nonzero %.3g/%.3g; "
         "implicit: %.3g/%.3g, %.3g/%.3g\n",
         e[0][0][0], e[1][0][0], e[0][1][0], e[1][1][0], e[0][0][1], e[1][0][1], e[0][1][1], e[1][1][1]);
  for (int c = 0; c < 2; ++c) {
    cr_assert_leq(e[1][c][0], 1e-4, "dt 1e-5, Euler: %g", e[1][c][0]);
    cr_assert_leq(e[1][c][1], 1e-4, "dt 1e-5, implicit: %g", e[1][c][1]);
    for (int g = 0; g < 2; ++g) {
      const double ratio = e[0][c][g] / e[1][c][g];
      cr_assert(ratio > 90 && ratio < 110, "first order in dt: ratio %g", ratio);
    }
  }
}

/* The actuators' forces at a state (grit_actuator_forces) are MuJoCo's actuator_force: the model is the
 * same to round-off; random states, controls (some beyond ctrlrange) and activations. */
Test(actuation_mujoco, actuator_forces_equal_mujocos) {
  char path[1024], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  path_of(path, sizeof path, "tests/mjcf/actuators.xml");
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *gm;
  cr_assert_eq(grit_mjcf_load_file(path, &gm, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *gd;
  grit_data_create(gm, &gd);
  const double e = random_states_force_error(mm, md, gd, 12345, 50);
  cr_log_info("actuator forces vs MuJoCo's actuator_force: max |diff| %.3g", e);
  cr_assert_leq(e, 1e-12, "%g", e);
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

/* With grit_options.explicit_actuation (MuJoCo's Euler treatment: every actuator force at the step's
 * start), grit's step is MuJoCo 2.2.2's Euler step for these hinge and slide chains: the same
 * trajectory to round-off at dt = 1e-3, which shows that the model (forces, clamps, activations) is the
 * same and the O(dt) difference above is only the implicit servos. */
Test(actuation_mujoco, explicit_actuation_is_mujocos_euler) {
  double e0 = run_with(U0, 1e-3, mjINT_EULER, 1), e1 = run_with(U1, 1e-3, mjINT_EULER, 1);
  cr_log_info("explicit actuation vs MuJoCo's Euler, 1 s at dt 1e-3: max |dq| %.3g (zero ctrl), %.3g", e0, e1);
  printf("explicit actuation vs MuJoCo 2.2.2 Euler, 1 s at dt 1e-3: max |dq| %.3g (zero ctrl), %.3g (nonzero)\n", e0, e1);
  cr_assert_leq(e0, 1e-10);
  cr_assert_leq(e1, 1e-10);
}

/* <cylinder> (MuJoCo 2.2.2's pneumatic cylinder: a filter of time constant `timeconst`, gain the area or
 * pi/4 diameter^2, affine bias) is MuJoCo's: forces at random states and activations to round-off, and
 * with explicit actuation 1 s of MuJoCo's Euler to round-off. */
Test(actuation_mujoco, cylinder_is_mujocos) {
  static const char xml[] =
      "<mujoco><option timestep='0.001' gravity='0 0 0'/><default><geom contype='0' conaffinity='0'/>"
      "<default class='pneu'><cylinder area='0.02' timeconst='0.2'/></default></default><worldbody>"
      "<body><joint name='a' axis='1 0 0' damping='.01'/><geom type='capsule' fromto='0 0 0 0 0 -.4' size='.04'/>"
      "<body pos='0 0 -.4'><joint name='b' type='slide' axis='0 1 0'/><geom size='.05'/></body></body>"
      "</worldbody><actuator><cylinder joint='a' diameter='0.3' bias='0.1 -2 -0.3' timeconst='0.05'/>"
      "<cylinder joint='b' class='pneu' gear='3'/></actuator></mujoco>";
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.explicit_actuation = 1;
  grit_model *gm;
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "cylinder.xml", &lo, &gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_na(gm), mm->na);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  const double e = random_states_force_error(mm, md, gd, 777, 30);
  cr_assert_leq(e, 1e-12, "cylinder forces differ from MuJoCo's by %g", e);
  mj_resetData(mm, md);
  grit_data_free(gd);
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  const double u[2] = {0.8, -0.6};
  grit_data_set_ctrl(gd, u, 2);
  md->ctrl[0] = u[0], md->ctrl[1] = u[1];
  double eq = 0;
  for (int k = 0; k < 1000; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
    for (int i = 0; i < mm->nq; ++i) eq = fmax(eq, fabs(grit_data_qpos(gd)[i] - md->qpos[i]));
  }
  cr_log_info("cylinder: forces %.3g from MuJoCo's; 1 s with explicit actuation: max |dq| %.3g", e, eq);
  cr_assert_leq(eq, 1e-10, "%g", eq);
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}
