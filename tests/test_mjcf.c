/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf.c — the MJCF loader on its own (its agreement with MuJoCo's compiler is
 * test_mjcf_mujoco.c): the example and test files load without warnings; masses and inertias against
 * closed forms; defaults, keyframes, grit's <custom> parameters and load options; warnings and errors
 * naming the file, the line, the element and the attribute; size limits; and the fuzz corpus of
 * tests/fuzz_mjcf (files named err_* must fail, warn_* must load with a warning; none may crash). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_test_util.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

static const double PI = 3.14159265358979323846;

static int has_warning(const grit_mjcf_info *info, const char *part) {
  for (int i = 0; i < info->nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i)
    if (strstr(info->warnings[i], part)) return 1;
  return 0;
}

static void path_of(char *out, size_t n, const char *rel) { snprintf(out, n, "%s/%s", GRIT_SOURCE_DIR, rel); }

/* ----------------------------------------------------------------------------- valid files */

Test(mjcf, example_and_test_files_load_without_warnings) {
  const char *files[] = {"examples/models/falling_sphere.xml", "examples/models/sliding_box.xml",
                         "examples/models/sliding_rod.xml",    "examples/models/conveyor.xml",
                         "examples/models/clutter.xml",        "examples/models/arm7.xml",
                         "tests/mjcf/defaults.xml",            "tests/mjcf/inertia.xml",
                         "tests/mjcf/general.xml",             "examples/models/arm_push_ball.xml"};
  const int nq[] = {7, 7, 7, 8, 280, 7, 9, 94, 4, 14}, nu[] = {0, 0, 0, 1, 0, 7, 3, 0, 2, 7};
  for (int i = 0; i < 10; ++i) {
    char path[1024], msg[GRIT_MESSAGE_SIZE];
    path_of(path, sizeof path, files[i]);
    grit_model *m;
    grit_mjcf_info info;
    cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(info.nwarnings, 0, "%s: %s", files[i], info.warnings[0]);
    cr_assert_eq(grit_model_nq(m), nq[i], "%s: nq %d", files[i], grit_model_nq(m));
    cr_assert_eq(grit_model_nu(m), nu[i], "%s: nu", files[i]);
    cr_assert_eq(info.nq, nq[i]);
    grit_mjcf_info_free(&info);
    grit_model_free(m);
  }
}

/* The examples' files are the scenes of examples/scenes.c. */
Test(mjcf, falling_sphere_file_is_the_scene) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  path_of(path, sizeof path, "examples/models/falling_sphere.xml");
  grit_model *m;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_str_eq(info.model_name, "falling_sphere");
  cr_assert_eq(m->body_mass[1], 0.5);
  const double I = 0.4 * 0.5 * 0.025 * 0.025;
  for (int i = 0; i < 9; ++i) cr_assert(fabs(m->body_inertia[9 + i] - (i % 4 == 0 ? I : 0)) <= 1e-18);
  double q[7];
  grit_model_qpos0(m, q);
  cr_assert_eq(q[2], 0.075);
  cr_assert_eq(grit_model_options(m).timestep, 1e-3);
  for (int g = 0; g < 2; ++g) {
    grit_geom_def d;
    grit_model_geom(m, g, &d);
    cr_assert_eq(d.friction, 0.5);
    cr_assert_eq(d.stiffness, 1e7);
    cr_assert_eq(d.dissipation, 500);
    cr_assert_eq(d.tau_d, 1e-3);
  }
  cr_assert_eq(info.nkey, 2);
  cr_assert_eq(grit_mjcf_key_index(&info, "launch"), 1);
  cr_assert_eq(grit_mjcf_key_index(&info, "nope"), -1);
  cr_assert_eq(info.keys[1].qvel[0], 2.0);
  cr_assert_eq(info.keys[1].qpos[2], 0.025);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_mjcf_apply_key(&info, 1, d), GRIT_OK);
  cr_assert_eq(grit_data_qvel(d)[0], 2.0);
  cr_assert_eq(grit_mjcf_apply_key(&info, 2, d), GRIT_ERR_INVALID_ARGUMENT);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* The Kinova Gen3 pushing a ball (seed 000, XII-D): sizes, the published masses and effort limits, the
 * ball, the collision filter, the keys; and zero torque lets the arm fall while the torques of the
 * bias forces hold it and the ball (at rest on the ground) where they are. */
Test(mjcf, arm_push_ball_file_is_the_reference_scene) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  path_of(path, sizeof path, "examples/models/arm_push_ball.xml");
  grit_model *m;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nq(m), 14);
  cr_assert_eq(grit_model_nv(m), 13);
  cr_assert_eq(grit_model_nu(m), 7);
  cr_assert_eq(grit_model_options(m).timestep, 0.01);
  const double link_mass[8] = {1.3773, 1.1636, 1.1636, 0.9302, 0.6781, 0.6781, 0.5006, 0.3638};
  const char *links[8] = {"shoulder_link",          "half_arm_1_link",        "half_arm_2_link", "forearm_link",
                          "spherical_wrist_1_link", "spherical_wrist_2_link", "bracelet_link",   "end_effector"};
  for (int i = 0; i < 8; ++i) {
    const int b = grit_model_body_index(m, links[i]);
    cr_assert(b > 0, "%s", links[i]);
    cr_assert_eq(grit_model_body_mass(m, b), link_mass[i], "%s", links[i]);
  }
  const int ball = grit_model_body_index(m, "ball");
  cr_assert_eq(grit_model_body_mass(m, ball), 0.1);
  for (int a = 0; a < 7; ++a) {
    grit_actuator_def act;
    cr_assert_eq(grit_model_actuator(m, a, &act), GRIT_OK);
    cr_assert_eq(act.gear, 1.0);
    cr_assert(act.ctrl_limited);
    cr_assert_eq(act.ctrl_range[1], a < 4 ? 39.0 : 9.0);
    cr_assert_eq(act.ctrl_range[0], -act.ctrl_range[1]);
  }
  /* Arm geometries (contype 2, conaffinity 1) never pair with each other; they pair with the ball and
   * the ground, and the ball with the ground. */
  grit_geom_def ground, arm, ball_geom;
  cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, "ground"), &ground), GRIT_OK);
  cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, "end_effector"), &arm), GRIT_OK);
  cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, "ball"), &ball_geom), GRIT_OK);
#define PAIRS(a, b) (((a).contype & (b).conaffinity) || ((b).contype & (a).conaffinity))
  cr_assert(!PAIRS(arm, arm));
  cr_assert(PAIRS(arm, ball_geom) && PAIRS(arm, ground) && PAIRS(ball_geom, ground));
#undef PAIRS
  cr_assert_eq(ball_geom.friction, 0.5);
  cr_assert_eq(ball_geom.stiffness, 2e4);

  const int start = grit_mjcf_key_index(&info, "start");
  cr_assert(start >= 0 && grit_mjcf_key_index(&info, "push") >= 0);
  const double q_start[14] = {0, PI / 4 + 0.15, PI, 4.4 - 2 * PI, 0, 1.2, PI / 2, 0.5, 0, 0.1, 1, 0, 0, 0};
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  double c[13], u[7];
  for (int hold = 0; hold < 2; ++hold) {
    cr_assert_eq(grit_mjcf_apply_key(&info, start, d), GRIT_OK);
    for (int i = 0; i < 14; ++i) cr_assert(fabs(grit_data_qpos(d)[i] - q_start[i]) <= 1e-15, "q[%d]", i);
    for (int k = 0; k < 50; ++k) {
      cr_assert_eq(grit_bias_forces(d, c), GRIT_OK);
      for (int i = 0; i < 7; ++i) u[i] = hold ? c[i] : 0;
      cr_assert_eq(grit_data_set_ctrl(d, u, 7), GRIT_OK);
      cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    }
    const double *q = grit_data_qpos(d);
    double arm_moved = 0, ball_moved = 0;
    for (int i = 0; i < 7; ++i) arm_moved = fmax(arm_moved, fabs(q[i] - q_start[i]));
    for (int i = 7; i < 10; ++i) ball_moved = fmax(ball_moved, fabs(q[i] - q_start[i]));
    if (hold) {
      cr_assert(arm_moved < 1e-6, "held arm moved %g rad", arm_moved);
      cr_assert(ball_moved < 1e-4, "resting ball moved %g m", ball_moved); /* it settles mg/k = 0.05 mm */
    } else {
      cr_assert(arm_moved > 0.1, "the arm did not fall (%g rad)", arm_moved);
    }
  }
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* Masses from density and volume, inertias from MuJoCo's formulas, here against independent forms. */
Test(mjcf, geometry_masses_and_inertias_match_closed_forms) {
  grit_model *m = load("<mujoco><worldbody>"
                       "<body><freejoint/><geom type='sphere' size='0.1'/></body>"
                       "<body><freejoint/><geom type='box' size='0.1 0.2 0.3' density='500'/></body>"
                       "<body><freejoint/><geom type='cylinder' size='0.1 0.2'/></body>"
                       "<body><freejoint/><geom type='ellipsoid' size='0.1 0.2 0.3'/></body>"
                       "<body><freejoint/><geom type='capsule' size='0.1 0.2' mass='3'/></body>"
                       "<body><freejoint/><geom type='sphere' size='0.1' pos='0.3 0 0'/>"
                       "<geom type='sphere' size='0.1' pos='-0.3 0 0'/></body>"
                       "</worldbody></mujoco>",
                       NULL);
  const double r = 0.1, ms = 1000 * 4.0 / 3 * PI * r * r * r;
  cr_assert(fabs(m->body_mass[1] - ms) <= 1e-15 * ms);
  cr_assert(fabs(m->body_inertia[9 + 0] - 0.4 * ms * r * r) <= 1e-15);
  const double mb = 500 * 0.2 * 0.4 * 0.6; /* box: full sides 0.2, 0.4, 0.6 */
  cr_assert(fabs(m->body_mass[2] - mb) <= 1e-13);
  cr_assert(fabs(m->body_inertia[18 + 0] - mb * (0.4 * 0.4 + 0.6 * 0.6) / 12) <= 1e-15);
  cr_assert(fabs(m->body_inertia[18 + 8] - mb * (0.2 * 0.2 + 0.4 * 0.4) / 12) <= 1e-15);
  const double mc = 1000 * PI * r * r * 0.4;
  cr_assert(fabs(m->body_mass[3] - mc) <= 1e-12);
  cr_assert(fabs(m->body_inertia[27 + 0] - mc * (3 * r * r + 0.4 * 0.4) / 12) <= 1e-15);
  cr_assert(fabs(m->body_inertia[27 + 8] - mc * r * r / 2) <= 1e-15);
  const double me = 1000 * 4.0 / 3 * PI * 0.1 * 0.2 * 0.3;
  cr_assert(fabs(m->body_mass[4] - me) <= 1e-12);
  cr_assert(fabs(m->body_inertia[36 + 4] - me * (0.01 + 0.09) / 5) <= 1e-15);
  /* capsule: a cylinder (h = 0.4) and a sphere of radius r, the hemispheres' centres of mass 3r/8
   * beyond the cylinder's ends (independent derivation of MuJoCo's formula) */
  {
    const double h = 0.4, vc = PI * r * r * h, vs = 4.0 / 3 * PI * r * r * r, M = 3, mcyl = M * vc / (vc + vs),
                 msph = M - mcyl, d = h / 2 + 3 * r / 8;
    const double Ihemi_own = 0.4 * (msph / 2) * r * r - (msph / 2) * (3 * r / 8) * (3 * r / 8);
    const double Ixx = mcyl * (3 * r * r + h * h) / 12 + 2 * (Ihemi_own + (msph / 2) * d * d);
    cr_assert(fabs(m->body_mass[5] - 3) <= 1e-15);
    cr_assert(fabs(m->body_inertia[45 + 0] - Ixx) <= 1e-14 * Ixx, "capsule Ixx %.17g, expected %.17g",
              m->body_inertia[45], Ixx);
    cr_assert(fabs(m->body_inertia[45 + 8] - (mcyl * r * r / 2 + 0.4 * msph * r * r)) <= 1e-15);
  }
  /* two spheres: parallel axes */
  cr_assert(fabs(m->body_mass[6] - 2 * ms) <= 1e-15 * ms);
  cr_assert(fabs(m->body_inertia[54 + 4] - 2 * (0.4 * ms * r * r + ms * 0.09)) <= 1e-14);
  cr_assert(fabs(m->body_inertia[54 + 0] - 2 * 0.4 * ms * r * r) <= 1e-15);
  grit_model_free(m);
}

Test(mjcf, angles_defaults_and_joints) {
  grit_mjcf_info info;
  grit_model *m = load("<mujoco><compiler angle='degree'/>"
                       "<default><joint damping='2'/><default class='x'><joint axis='1 0 0' armature='0.1'/>"
                       "<default class='y'><joint damping='3'/></default></default></default>"
                       "<worldbody><body name='a' euler='0 0 90' childclass='x'>"
                       "<joint name='j1' range='-90 45' limited='true' ref='30' springref='60' stiffness='1'/>"
                       "<joint name='j2' class='y' type='slide' range='-1 2'/>"
                       "<geom size='0.1'/></body></worldbody></mujoco>",
                       &info);
  cr_assert_eq(info.nwarnings, 0, "%s", info.warnings[0]);
  cr_assert(fabs(m->body_quat[4] - cos(PI / 4)) <= 1e-15 && fabs(m->body_quat[7] - sin(PI / 4)) <= 1e-15);
  cr_assert_eq(m->jnt_axis[0], 1.0);
  cr_assert_eq(m->dof_damping[0], 2.0);
  cr_assert_eq(m->dof_armature[0], 0.1);
  cr_assert_eq(m->dof_damping[1], 3.0);
  cr_assert(fabs(m->jnt_range[0] + PI / 2) <= 1e-15 && fabs(m->jnt_range[1] - PI / 4) <= 1e-15);
  cr_assert(fabs(m->qpos0[0] - PI / 6) <= 1e-15);
  cr_assert(fabs(m->jnt_springref[0] - PI / 3) <= 1e-15);
  cr_assert_eq(m->jnt_limited[1], 1); /* autolimits: a range limits */
  cr_assert_eq(m->jnt_range[2 + 1], 2.0); /* slide: no degree conversion */
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* grit needs mass on every body: an empty frame is folded into its parent, a massless moving body
 * takes in its welded children. */
Test(mjcf, massless_bodies_are_folded) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  path_of(path, sizeof path, "tests/mjcf/general.xml");
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_body_index(m, "frame"), -1);
  cr_assert_eq(grit_model_body_index(m, "payload"), -1);
  int carrier = grit_model_body_index(m, "carrier"), pendulum = grit_model_body_index(m, "pendulum");
  cr_assert(carrier > 0 && pendulum > 0);
  cr_assert_eq(m->body_parent[pendulum], 0);
  cr_assert(fabs(m->body_mass[carrier] - 1000 * 0.1 * 0.08 * 0.06) <= 1e-13);
  grit_model_free(m);
  expect_error("<mujoco><worldbody><body><joint/></body></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
               "positive mass");
}

Test(mjcf, custom_parameters_and_load_options) {
  const char *xml = "<mujoco><custom>"
                    "<numeric name='grit_stiffness' data='2e6'/><numeric name='grit_dissipation' data='7'/>"
                    "<numeric name='grit_tau_d' data='0.002'/><numeric name='grit_stiction_tolerance' data='1e-3'/>"
                    "<numeric name='grit_margin' data='0.05'/><numeric name='grit_rel_tol' data='1e-6'/>"
                    "<numeric name='grit_max_newton_iters' data='40'/><numeric name='grit_max_contacts' data='99'/>"
                    "<text name='grit_contact_model' data='sap'/><numeric name='user_thing' data='1 2 3'/>"
                    "</custom><worldbody><geom type='plane' friction='0.3 0.1 0.1'/>"
                    "<body pos='0 0 1'><freejoint/><geom size='0.1'/></body></worldbody></mujoco>";
  grit_mjcf_info info;
  grit_model *m = load(xml, &info);
  cr_assert_eq(info.nwarnings, 0, "%s", info.warnings[0]);
  grit_geom_def g;
  grit_model_geom(m, 0, &g);
  cr_assert(g.stiffness == 2e6 && g.dissipation == 7 && g.tau_d == 0.002 && g.friction == 0.3);
  grit_model_geom(m, 1, &g);
  cr_assert_eq(g.friction, 1.0);
  cr_assert_eq(info.settings.contact_model, GRIT_CONTACT_SAP);
  cr_assert_eq(info.settings.stiction_tolerance, 1e-3);
  cr_assert_eq(info.settings.rel_tol, 1e-6);
  cr_assert_eq(info.settings.max_newton_iters, 40);
  cr_assert_eq(grit_model_options(m).contact_margin, 0.05);
  cr_assert_eq(grit_model_options(m).max_contacts, 99);
  grit_mjcf_info_free(&info);
  grit_model_free(m);

  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.friction = 0.9, o.stiffness = 5e5, o.dissipation = 0, o.tau_d = 0.1, o.timestep = 0.004;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "x.xml", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  for (int k = 0; k < 2; ++k) {
    grit_model_geom(m, k, &g);
    cr_assert(g.friction == 0.9 && g.stiffness == 5e5 && g.dissipation == 0 && g.tau_d == 0.1);
  }
  cr_assert_eq(grit_model_options(m).timestep, 0.004);
  grit_model_free(m);

  grit_mjcf_info w;
  m = load("<mujoco><custom><numeric name='grit_stifness' data='1'/></custom></mujoco>", &w);
  cr_assert(has_warning(&w, "grit_stifness"), "%s", w.warnings[0]);
  grit_model_free(m);
  expect_error("<mujoco><custom><text name='grit_contact_model' data='fast'/></custom></mujoco>", GRIT_ERR_PARSE,
               "lagged|similar|sap");
  expect_error("<mujoco><custom><numeric name='grit_stiffness' data='-1'/></custom></mujoco>",
               GRIT_ERR_INVALID_MODEL, "grit_stiffness");
}

/* ---------------------------------------------------------------------- warnings and errors */

/* What changes the dynamics and grit does not simulate is an error by default, naming the element and the
 * line; loaded leniently, a warning each, and the model is the rest. */
Test(mjcf, unsupported_input_is_reported_with_element_attribute_and_line) {
  static const char xml[] = "<mujoco>\n<option integrator='RK4' viscosity='0.1'/>\n" /* fluid: supported */
                            "<worldbody>\n<body>\n<freejoint/>\n"
                            "<geom size='0.1' solref='0.02 1' rgba='1 0 0 1' condim='6'/>\n"
                            "<replicate count='2'/>\n</body>\n</worldbody>\n"
                            "<deformable><skin/></deformable>\n</mujoco>";
  expect_error(xml, GRIT_ERR_UNSUPPORTED, "<string>:7: <replicate> element is not supported");
  grit_mjcf_info info;
  grit_model *m = NULL;
  grit_mjcf_load_options lenient = grit_mjcf_default_load_options();
  lenient.lenient = 1;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "<string>", &lenient, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert(!has_warning(&info, "viscosity"), "%s", info.warnings[0]);
  cr_assert(has_warning(&info, "<string>:2: <option> attribute 'integrator'"));
  cr_assert(has_warning(&info, "<string>:6: <geom> attribute 'solref' is not supported"));
  cr_assert(!has_warning(&info, "rgba"), "visual attributes are ignored silently");
  cr_assert(has_warning(&info, "<string>:6: <geom> condim 4 and 6"));
  cr_assert(has_warning(&info, "<string>:7: <replicate>"));
  cr_assert(has_warning(&info, "<string>:10: <deformable>"));
  cr_assert_eq(info.nwarnings, 5, "%d warnings", info.nwarnings);
  cr_assert_eq(grit_model_nu(m), 0);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(mjcf, malformed_input_is_an_error_with_file_and_line) {
  expect_error("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", GRIT_ERR_PARSE, "<string>:4: XML error");
  expect_error("", GRIT_ERR_PARSE, "XML error");
  expect_error("<robot/>", GRIT_ERR_PARSE, "root element must be <mujoco>");
  expect_error("<mujoco>\n<option timestep='nan'/></mujoco>", GRIT_ERR_PARSE, "<string>:2: <option> attribute 'timestep'");
  expect_error("<mujoco><option timestep='1e999'/></mujoco>", GRIT_ERR_PARSE, "not a finite number");
  expect_error("<mujoco><option timestep='-1'/></mujoco>", GRIT_ERR_INVALID_MODEL, "timestep");
  expect_error("<mujoco><option gravity='0 0'/></mujoco>", GRIT_ERR_PARSE, "needs 3 numbers, has 2");
  expect_error("<mujoco><option gravity='0 0 1 2'/></mujoco>", GRIT_ERR_PARSE, "more than 3 numbers");
  expect_error("<mujoco><option gravity='0 0 1x'/></mujoco>", GRIT_ERR_PARSE, "'1x' is not a number");
  expect_error("<mujoco><worldbody><geom class='nope'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
               "unknown default class 'nope'");
  expect_error("<mujoco><worldbody><geom type='tetrahedron'/></worldbody></mujoco>", GRIT_ERR_PARSE,
               "is not one of plane|sphere");
  expect_error("<mujoco><worldbody><geom type='sphere' fromto='0 0 0 1 1 1' size='1'/></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "fromto requires");
  expect_error("<mujoco><worldbody><geom size='0.1' quat='0 0 0 0'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
               "quat is zero");
  expect_error("<mujoco><worldbody><geom size='0.1' quat='1 0 0 0' euler='0 0 0'/></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "both give the orientation");
  expect_error("<mujoco><worldbody><geom type='box' size='0.1 0.1'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
               "sizes must be positive");
  expect_error("<mujoco><worldbody><body><joint/><joint/></body></worldbody><worldbody><joint/></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "world body cannot have joints");
  expect_error("<mujoco><worldbody><body><joint name='a'/><geom size='1'/></body></worldbody>"
               "<actuator><motor joint='b'/></actuator></mujoco>",
               GRIT_ERR_INVALID_MODEL, "unknown joint b");
  expect_error("<mujoco><worldbody><body><joint name='a' axis='0 0 0'/><geom size='1'/></body></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "axis too small");
  expect_error("<mujoco><worldbody><body><freejoint/><body><freejoint/><geom size='1'/></body><geom size='1'/>"
               "</body></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "free joint");
  expect_error("<mujoco><worldbody><body name='a'><geom size='1'/></body>\n<body name='a'><geom size='1'/></body>"
               "</worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "<string>:2: <body> the name is also used at line 1: a");
  expect_error("<mujoco><worldbody><body><inertial mass='1' pos='0 0 0' diaginertia='1 1 3'/><freejoint/></body>"
               "</worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "A + B >= C");
  expect_error("<mujoco><keyframe><key qpos='1'/></keyframe></mujoco>", GRIT_ERR_INVALID_MODEL, "nq = 0");
  expect_error("<!DOCTYPE m [<!ENTITY a 'aaaa'>]><mujoco/>", GRIT_ERR_PARSE, "entity");
  expect_error("<mujoco><compiler coordinate='global'/></mujoco>", GRIT_ERR_UNSUPPORTED, "global");
  expect_error("<mujoco><compiler autolimits='false'/><worldbody><body><joint range='0 1'/><geom size='1'/></body>"
               "</worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "autolimits");
  /* a zero byte inside the text is an error, not the end of the text */
  const char buf[] = "<mujoco>\0</mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(buf, sizeof buf - 1, NULL, NULL, &m, NULL, msg), GRIT_ERR_PARSE);
  cr_assert_eq(grit_mjcf_load_file("/nonexistent/model.xml", &m, NULL, msg), GRIT_ERR_IO);
  cr_assert(strstr(msg, "/nonexistent/model.xml") != NULL);
  cr_assert_eq(grit_mjcf_load_string(NULL, &m, NULL, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_mjcf_load_string("<mujoco/>", NULL, NULL, msg), GRIT_ERR_INVALID_ARGUMENT);
}

/* Nesting, element counts and text size are bounded, so no input exhausts the stack or memory. */
Test(mjcf, size_limits) {
  const int depth = 150;
  size_t n = 64 + (size_t)depth * 40;
  char *xml = malloc(n), *p = xml;
  p += sprintf(p, "<mujoco><worldbody>");
  for (int i = 0; i < depth; ++i) p += sprintf(p, "<body>");
  for (int i = 0; i < depth; ++i) p += sprintf(p, "</body>");
  sprintf(p, "</worldbody></mujoco>");
  expect_error(xml, GRIT_ERR_CAPACITY, "nested deeper than 100");
  free(xml);

  const int count = 60000;
  xml = malloc(64 + (size_t)count * 8);
  p = xml + sprintf(xml, "<mujoco><worldbody>");
  for (int i = 0; i < count; ++i) p += sprintf(p, "<site/>");
  sprintf(p, "</worldbody></mujoco>");
  expect_error(xml, GRIT_ERR_CAPACITY, "more than 50000 elements");
  free(xml);

  /* a chain 90 bodies deep is fine (within the nesting limit) */
  xml = malloc(64 + 90 * 80);
  p = xml + sprintf(xml, "<mujoco><worldbody>");
  for (int i = 0; i < 90; ++i) p += sprintf(p, "<body pos='0 0 0.1'><joint/><geom size='0.05'/>");
  for (int i = 0; i < 90; ++i) p += sprintf(p, "</body>");
  sprintf(p, "</worldbody></mujoco>");
  grit_model *m = load(xml, NULL);
  cr_assert_eq(grit_model_nv(m), 90);
  grit_model_free(m);
  free(xml);
}

/* ----------------------------------------------------------------------------- fuzz corpus */

/* Every file of tests/fuzz_mjcf (written by its generate.py from the valid files by invalid bytes,
 * truncations, huge and malformed numbers, deep nesting, missing quotes, binary garbage, renamed and
 * unknown elements and attributes) must give an error (err_*), load with warnings (warn_*), or one of
 * the two (bad_*), and never crash. */
Test(mjcf, fuzz_corpus_errors_or_warnings_never_crashes) {
  char dir[1024];
  path_of(dir, sizeof dir, "tests/fuzz_mjcf");
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "no corpus at %s", dir);
  int files = 0, errors = 0, warned = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const int err = !strncmp(e->d_name, "err_", 4), warn = !strncmp(e->d_name, "warn_", 5),
              bad = !strncmp(e->d_name, "bad_", 4);
    if (!err && !warn && !bad) continue;
    char path[2048], msg[GRIT_MESSAGE_SIZE];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    grit_model *m;
    grit_mjcf_info info;
    grit_mjcf_load_options lenient = grit_mjcf_default_load_options();
    lenient.lenient = 1; /* what grit does not simulate is a warning, as the corpus was written */
    grit_status s = grit_mjcf_load_file_with(path, &lenient, &m, &info, msg);
    files++;
    if (err) {
      cr_expect_neq(s, GRIT_OK, "%s loaded", e->d_name);
      cr_expect(strlen(msg) > 0, "%s: no message", e->d_name);
      errors += s != GRIT_OK;
    } else if (warn) {
      cr_expect_eq(s, GRIT_OK, "%s: %s", e->d_name, msg);
      cr_expect_gt(info.nwarnings, 0, "%s: no warning", e->d_name);
      warned += s == GRIT_OK && info.nwarnings > 0;
    } else {
      cr_expect(s != GRIT_OK || info.nwarnings > 0, "%s: loaded without a warning", e->d_name);
      errors += s != GRIT_OK;
      warned += s == GRIT_OK && info.nwarnings > 0;
    }
    grit_mjcf_info_free(&info);
    grit_model_free(m);
  }
  closedir(d);
  cr_assert_geq(files, 200, "the corpus has %d files", files);
  cr_log_info("fuzz corpus: %d files, %d errors, %d loaded with warnings", files, errors, warned);
}

/* Every numeric field of a small model, made NaN, infinite or out of its physical range: an error whose
 * message names the file, the line of the offending element and the attribute (or quantity). The
 * template loads; each case changes one attribute. */
Test(mjcf, every_bad_number_is_an_error_naming_the_line) {
  static const char base[] =
      "<mujoco>\n"                                                                          /* 1 */
      "<option timestep='0.001' gravity='0 0 -9.81'/>\n"                                    /* 2 */
      "<custom><numeric name='grit_stiffness' data='1e6'/>\n"                               /* 3 */
      "<numeric name='grit_dissipation' data='10'/></custom>\n"                             /* 4 */
      "<worldbody><geom type='plane' size='1 1 0.1' friction='1'/>\n"                      /* 5 */
      "<body pos='0 0 1' quat='1 0 0 0'>\n"                                                 /* 6 */
      "<joint name='j' type='hinge' axis='0 1 0' damping='0.1' armature='0.01' stiffness='1' range='-1 1'/>\n"
      "<geom type='capsule' size='0.05 0.2' mass='1' friction='0.5'/>\n"                    /* 8 */
      "<body pos='0 0 0.5'><inertial pos='0 0 0' mass='2' diaginertia='0.1 0.1 0.1'/>\n"   /* 9 */
      "<joint type='slide' axis='1 0 0'/></body>\n"                                        /* 10 */
      "</body></worldbody>\n"                                                               /* 11 */
      "<actuator><motor joint='j' gear='2' ctrlrange='-1 1' ctrllimited='true'/></actuator>\n"
      "<keyframe><key qpos='0.1 0' qvel='0 0'/></keyframe>\n"                               /* 13 */
      "</mujoco>\n";
  static const struct {
    const char *from, *to;
    int line;
    const char *part;
  } cases[] = {
      {"timestep='0.001'", "timestep='nan'", 2, "timestep"},
      {"timestep='0.001'", "timestep='0'", 2, "timestep"},
      {"gravity='0 0 -9.81'", "gravity='0 inf -9.81'", 2, "gravity"},
      {"data='1e6'", "data='nan'", 3, "data"},
      {"data='1e6'", "data='-1'", 3, "grit_stiffness"},
      {"data='10'", "data='-inf'", 4, "data"},
      {"friction='1'", "friction='nan'", 5, "friction"},
      {"friction='1'", "friction='-1'", 5, "friction"},
      {"size='1 1 0.1'", "size='1 1 1e999'", 5, "size"},
      {"pos='0 0 1'", "pos='0 nan 1'", 6, "pos"},
      {"quat='1 0 0 0'", "quat='1 0 0 inf'", 6, "quat"},
      {"quat='1 0 0 0'", "quat='0 0 0 0'", 6, "quat"},
      {"axis='0 1 0'", "axis='0 nan 0'", 7, "axis"},
      {"damping='0.1'", "damping='nan'", 7, "damping"},
      {"damping='0.1'", "damping='-0.1'", 7, "damping"},
      {"armature='0.01'", "armature='-1'", 7, "armature"},
      {"stiffness='1'", "stiffness='inf'", 7, "stiffness"},
      {"stiffness='1'", "stiffness='-1'", 7, "stiffness"},
      {"range='-1 1'", "range='-1 nan'", 7, "range"},
      {"range='-1 1'", "range='1 -1'", 7, "range"},
      {"size='0.05 0.2'", "size='0.05 nan'", 8, "size"},
      {"size='0.05 0.2'", "size='-0.05 0.2'", 8, "size"},
      {"mass='1'", "mass='nan'", 8, "mass"},
      {"mass='1'", "mass='-1'", 8, "mass"},
      {"friction='0.5'", "friction='inf'", 8, "friction"},
      {"mass='2'", "mass='0'", 9, "mass"},
      {"mass='2'", "mass='1e999'", 9, "mass"},
      {"diaginertia='0.1 0.1 0.1'", "diaginertia='0.1 0.1 0.3'", 9, "A + B >= C"},
      {"diaginertia='0.1 0.1 0.1'", "diaginertia='0.1 -0.1 0.1'", 9, "inertia"},
      {"diaginertia='0.1 0.1 0.1'", "diaginertia='0.1 nan 0.1'", 9, "diaginertia"},
      {"axis='1 0 0'", "axis='0 0 0'", 10, "axis"},
      {"gear='2'", "gear='nan'", 12, "gear"},
      {"ctrlrange='-1 1'", "ctrlrange='1 -1'", 12, "ctrl_range"},
      {"qpos='0.1 0'", "qpos='0.1 nan'", 13, "qpos"},
      {"qvel='0 0'", "qvel='inf 0'", 13, "qvel"},
      {"qvel='0 0'", "qvel='0 0 0'", 13, "qvel"},
  };
  grit_model *m = load(base, NULL);
  grit_model_free(m);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char xml[sizeof base + 64], line[32], msg[GRIT_MESSAGE_SIZE];
    const char *at = strstr(base, cases[i].from);
    cr_assert_not_null(at, "case %zu", i);
    snprintf(xml, sizeof xml, "%.*s%s%s", (int)(at - base), base, cases[i].to, at + strlen(cases[i].from));
    m = (grit_model *)&m;
    grit_status s = grit_mjcf_load_string(xml, &m, NULL, msg);
    cr_expect_neq(s, GRIT_OK, "%s loaded", cases[i].to);
    cr_expect_null(m);
    snprintf(line, sizeof line, "<string>:%d:", cases[i].line);
    cr_expect(strstr(msg, line) != NULL, "%s: message '%s' does not name line %d", cases[i].to, msg, cases[i].line);
    cr_expect(strstr(msg, cases[i].part) != NULL, "%s: message '%s' does not name '%s'", cases[i].to, msg,
              cases[i].part);
  }
}
