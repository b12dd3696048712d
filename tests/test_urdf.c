/* SPDX-License-Identifier: Apache-2.0 */
/* test_urdf.c — the URDF loader (src/urdf*.c, docs/urdf.md) and the format dispatcher (grit/load.h):
 * the same arm written in URDF and in MJCF gives the same trajectory to round-off; a real public URDF
 * (Drake's KUKA iiwa14) loads with its 7 dofs; package:// names; bad input gives errors with the line;
 * grit sim loads a URDF by content and prints the sizes. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "grit/grit.h"
#include "grit/load.h"
#include "grit/urdf.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif
#define DATA GRIT_SOURCE_DIR "/tests/urdf/"

/* Runs `steps` steps from (qvel, ctrl) at the reference configuration; q and v of every step into out
 * (steps x (nq + nv)). */
static void rollout(const grit_model *m, const grit_step_settings *st, const double *qvel, const double *ctrl,
                    int steps, double *out) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, st), GRIT_OK);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  cr_assert_eq(grit_data_set_qvel(d, qvel, nv), GRIT_OK);
  cr_assert_eq(grit_data_set_ctrl(d, ctrl, grit_model_nu(m)), GRIT_OK);
  for (int k = 0; k < steps; ++k) {
    cr_assert_eq(grit_step(d), GRIT_OK, "step %d: %s", k, grit_data_last_error(d));
    memcpy(out + (size_t)k * (size_t)(nq + nv), grit_data_qpos(d), sizeof(double) * (size_t)nq);
    memcpy(out + (size_t)k * (size_t)(nq + nv) + nq, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  }
  grit_data_free(d);
}

static grit_model *load_urdf(const char *path, const grit_urdf_load_options *o, grit_mjcf_info *info) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = grit_urdf_load_file(path, o, &m, info, msg);
  cr_assert_eq(s, GRIT_OK, "%s: %s", path, msg);
  return m;
}

/* The twin files: bodies at the joint origins, the base welded to the world, rpy as extrinsic XYZ Euler
 * angles, motors limited to +-effort. 0.6 s (at MuJoCo's default step of 2 ms) from a fast start under constant torques, with
 * the j1 and j4 limits reached: the two models must agree to round-off. (Later, a contact between the
 * spinning links makes the motion sensitive enough that 1e-16 differences in the inputs grow.) */
Test(urdf, same_trajectory_as_the_mjcf_twin) {
  grit_mjcf_info ui, xi;
  grit_model *u = load_urdf(DATA "arm.urdf", NULL, &ui);
  grit_model *x = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_load_file(DATA "arm.xml", NULL, &x, &xi, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(ui.nwarnings, 0, "%s", ui.warnings[0]);
  cr_assert_str_eq(ui.model_name, "urdf_arm");
  cr_assert_eq(grit_model_nq(u), 4);
  cr_assert_eq(grit_model_nv(u), 4);
  cr_assert_eq(grit_model_nu(u), 4);
  cr_assert_eq(grit_model_nq(x), 4);
  cr_assert_eq(grit_model_nbody(u), 5); /* world, link1, link2, link3 (+ tip fused), link4 */
  cr_assert_eq(grit_model_nbody(x), 6); /* tip a welded body of its own */
  cr_assert_eq(grit_model_ngeom(u), 7);
  cr_assert_eq(grit_model_ngeom(x), 7);
  cr_assert_eq(grit_model_joint_index(u, "j3"), 2);
  cr_assert_eq(grit_model_joint_type(u, 2), GRIT_JOINT_SLIDE);
  cr_assert_eq(grit_model_body_mass(u, grit_model_body_index(u, "link3")), 0.8 + 0.3);
  grit_actuator_def a;
  cr_assert_eq(grit_model_actuator(u, 1, &a), GRIT_OK);
  cr_assert_str_eq(a.name, "j2");
  cr_assert(a.ctrl_limited && a.ctrl_range[0] == -15 && a.ctrl_range[1] == 15);
  const grit_options ou = grit_model_options(u), ox = grit_model_options(x);
  cr_assert_eq(ou.timestep, ox.timestep); /* the MJCF loader's defaults */
  cr_assert_eq(ou.gravity[2], ox.gravity[2]);

  const int STEPS = (int)lround(0.6 / ou.timestep);
  const double qvel[4] = {1, -2, 0.5, 3}, ctrl[4] = {2, -1, 3, 0.5};
  double *ru = malloc(sizeof(double) * 8 * STEPS), *rx = malloc(sizeof(double) * 8 * STEPS);
  rollout(u, &ui.settings, qvel, ctrl, STEPS, ru);
  rollout(x, &xi.settings, qvel, ctrl, STEPS, rx);
  double worst = 0;
  for (int i = 0; i < 8 * STEPS; ++i) worst = fmax(worst, fabs(ru[i] - rx[i]));
  cr_log_info("URDF vs MJCF twin, %d steps: max |dq|, |dv| = %.3g\n", STEPS, worst);
  cr_assert_lt(worst, 1e-12, "max difference %g", worst);
  cr_assert_gt(fabs(ru[8 * (STEPS - 1)] - 2), 0); /* it moved */
  cr_assert_lt(fabs(ru[8 * (STEPS - 1)] - 2), 1e-3, "j1 rests at its upper limit 2, not %g", ru[8 * (STEPS - 1)]);
  free(ru), free(rx);
  grit_mjcf_info_free(&ui), grit_mjcf_info_free(&xi);
  grit_model_free(u), grit_model_free(x);
}

Test(urdf, floating_base_option) {
  grit_urdf_load_options o = grit_urdf_default_load_options();
  o.floating_base = 1;
  o.motors = 0;
  grit_model *m = load_urdf(DATA "arm.urdf", &o, NULL);
  cr_assert_eq(grit_model_nq(m), 7 + 4);
  cr_assert_eq(grit_model_nv(m), 6 + 4);
  cr_assert_eq(grit_model_nu(m), 0);
  cr_assert_eq(grit_model_nbody(m), 6); /* the base is a body now */
  cr_assert_eq(grit_model_joint_type(m, 0), GRIT_JOINT_FREE);
  grit_model_free(m);
}

/* Drake's KUKA iiwa14 (tests/urdf/iiwa_description, PROVENANCE): 7 revolute joints, fixed links fused;
 * MuJoCo 2.2.2 reports nq = nv = 7, nbody = 8, ngeom = 13 for the spheres variant. */
Test(urdf, real_iiwa14) {
  grit_mjcf_info info;
  grit_model *m = load_urdf(DATA "iiwa_description/urdf/iiwa14_spheres_collision.urdf", NULL, &info);
  cr_assert_eq(grit_model_nq(m), 7);
  cr_assert_eq(grit_model_nv(m), 7);
  cr_assert_eq(grit_model_nu(m), 7);
  cr_assert_eq(grit_model_nbody(m), 8);
  cr_assert_eq(grit_model_ngeom(m), 13);
  cr_assert_str_eq(info.model_name, "iiwa14");
  grit_actuator_def a;
  cr_assert_eq(grit_model_actuator(m, 0, &a), GRIT_OK);
  cr_assert_eq(a.ctrl_range[1], 300); /* effort */
  grit_mjcf_info_free(&info);
  grit_model_free(m);
  /* the polytope variant: one collision mesh at "../meshes/collision/link_7_polytope.obj" */
  m = load_urdf(DATA "iiwa_description/urdf/iiwa14_polytope_collision.urdf", NULL, NULL);
  cr_assert_eq(grit_model_nv(m), 7);
  cr_assert_eq(grit_model_ngeom(m), 1);
  grit_geom_def g;
  cr_assert_eq(grit_model_geom(m, 0, &g), GRIT_OK);
  cr_assert_eq(g.shape.type, GRIT_GEOM_CONVEX);
  grit_model_free(m);
}

static const char *const HEAD = "<robot name=\"r\">\n"
                                "<link name=\"a\"><inertial><mass value=\"1\"/>"
                                "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
                                "<link name=\"b\"><inertial><mass value=\"1\"/>"
                                "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n";

/* Loads HEAD + body + "</robot>" from a file; returns the status, the message in msg. */
static grit_status load_text(const char *body, const grit_urdf_load_options *o, char *msg, grit_mjcf_info *info) {
  char path[] = "/tmp/grit_urdf_XXXXXX";
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s%s</robot>\n", HEAD, body);
  fclose(f);
  grit_model *m = NULL;
  const grit_status s = grit_urdf_load_file(path, o, &m, info, msg);
  cr_assert_eq(s == GRIT_OK, m != NULL);
  grit_model_free(m);
  remove(path);
  return s;
}

static void expect_error(const char *body, grit_status want, const char *line, const char *text) {
  char msg[GRIT_MESSAGE_SIZE];
  const grit_status s = load_text(body, NULL, msg, NULL);
  cr_expect_eq(s, want, "status %d (%s), wanted %d", s, msg, want);
  cr_expect(strstr(msg, line) != NULL, "no '%s' in: %s", line, msg);
  cr_expect(strstr(msg, text) != NULL, "no '%s' in: %s", text, msg);
}

#define HINGE(name, p, c) "<joint name=\"" name "\" type=\"continuous\"><parent link=\"" p "\"/><child link=\"" c "\"/></joint>\n"

Test(urdf, bad_input_names_the_line) {
  expect_error("</link>\n" HINGE("j", "a", "nope"), GRIT_ERR_INVALID_MODEL, ":5:", "unknown child link 'nope'");
  expect_error("<collision><geometry><mesh filename=\"no_such.stl\"/></geometry></collision></link>\n" HINGE("j", "a", "b"),
               GRIT_ERR_IO, ":4:", "no_such.stl");
  expect_error("</link>\n<link name=\"c\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" "
               "ixz=\"0\" iyz=\"0\"/></inertial></link>\n<link name=\"r\"/>\n" HINGE("j0", "r", "a") HINGE("j1", "b", "c")
                   HINGE("j2", "c", "b"),
               GRIT_ERR_INVALID_MODEL, ":", "cycle");
  expect_error("</link>\n<joint name=\"p\" type=\"planar\"><parent link=\"a\"/><child link=\"b\"/></joint>\n",
               GRIT_ERR_UNSUPPORTED, ":5:", "planar");
  expect_error("</link>\n" HINGE("j", "a", "b") HINGE("k", "a", "b"), GRIT_ERR_INVALID_MODEL, ":6:", "two parents");
  expect_error("</lnk>\n", GRIT_ERR_PARSE, ":4:", "XML");
  expect_error("</link>\n<link name=\"c\"/>\n" HINGE("j", "a", "b") HINGE("k", "b", "c"), GRIT_ERR_INVALID_MODEL, ":5:",
               "link 'c' moves but has no mass");
  /* a value urdfdom refuses: its message, at the line of the element it names */
  expect_error("</link>\n<link name=\"c\"><inertial><mass value=\"heavy\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" "
               "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n" HINGE("j", "a", "b")
                   HINGE("k", "b", "c"),
               GRIT_ERR_PARSE, ":5:", "urdfdom");
}

/* Every prefix of the arm's file, and the file with each of its characters replaced by a quote: errors
 * (or a model), never a crash; every error has a message. */
Test(urdf, truncated_and_damaged_files) {
  FILE *f = fopen(DATA "arm.urdf", "rb");
  cr_assert_not_null(f);
  static char text[1 << 14], copy[1 << 14];
  const size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  grit_urdf_load_options o = grit_urdf_default_load_options();
  o.mesh_dir = DATA;
  int errors = 0;
  for (size_t k = 0; k < 2 * n; ++k) {
    size_t size = k < n ? k : n;
    memcpy(copy, text, n);
    if (k >= n) copy[k - n] = '"';
    grit_model *m = NULL;
    char msg[GRIT_MESSAGE_SIZE] = "";
    const grit_status s = grit_urdf_load_buffer(copy, size, "arm.urdf", &o, &m, NULL, msg);
    cr_assert_eq(s == GRIT_OK, m != NULL);
    if (s != GRIT_OK) {
      cr_assert_gt(strlen(msg), 10, "status %d without a message at %zu", s, k);
      ++errors;
    }
    grit_model_free(m);
  }
  cr_assert_gt(errors, (int)n);
}

/* Spins link b about x (unit inertia, its centre on the axis) from v0 for 1 s with damping 0 and friction
 * f, returns the final velocity. */
static double spin_down(const char *dynamics, double v0) {
  char body[600], path[] = "/tmp/grit_urdf_XXXXXX", msg[GRIT_MESSAGE_SIZE];
  snprintf(body, sizeof body, "</link>\n<joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>%s"
           "</joint>\n", dynamics);
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s%s</robot>\n", HEAD, body);
  fclose(f);
  grit_model *m = NULL;
  grit_mjcf_info info;
  cr_assert_eq(grit_urdf_load_file(path, NULL, &m, &info, msg), GRIT_OK, "%s", msg);
  remove(path);
  cr_assert_eq(info.nwarnings, 0, "%s", info.warnings[0]);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, &v0, 1), GRIT_OK);
  const int steps = (int)lround(1.0 / grit_model_options(m).timestep);
  for (int k = 0; k < steps; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double v = grit_data_qvel(d)[0];
  grit_data_free(d);
  grit_model_free(m);
  return v;
}

/* <dynamics friction> is the joint's dry friction (frictionloss), as MuJoCo 2.2.2's URDF import reads it:
 * 0.3 N m on a unit inertia slows 1 rad/s to 0.7 rad/s in 1 s (Coulomb friction: a constant torque; the
 * step's regularized friction is within 1e-3 of it), and to rest from 0.2 rad/s. */
Test(urdf, joint_friction_is_dry_friction) {
  cr_assert_float_eq(spin_down("<dynamics damping=\"0\" friction=\"0.3\"/>", 1.0), 0.7, 1e-3);
  cr_assert_float_eq(spin_down("<dynamics damping=\"0\" friction=\"0.3\"/>", 0.2), 0.0, 1e-3);
  cr_assert_float_eq(spin_down("<dynamics damping=\"0\"/>", 1.0), 1.0, 1e-12);
  expect_error("</link>\n<joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
               "<dynamics friction=\"-1\"/></joint>\n",
               GRIT_ERR_INVALID_MODEL, ":5:", ">= 0");
}

/* <mimic joint multiplier offset> couples the joint to the other as a joint equality: k = 2 j + 0.1. The
 * reference configuration (0, 0) violates it by 0.1, which the equality's drift correction (solref 0.02:
 * a time scale of 0.04 s) removes; after 0.5 s from j spinning at 1 rad/s the coupling holds to 1e-4
 * in q and in v. */
Test(urdf, mimic_is_a_joint_equality) {
  const char *body = "</link>\n<link name=\"c\"><inertial><mass value=\"1\"/>"
                     "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
                     HINGE("j", "a", "b")
                     "<joint name=\"k\" type=\"continuous\"><parent link=\"b\"/><child link=\"c\"/>\n"
                     "<mimic joint=\"j\" multiplier=\"2\" offset=\"0.1\"/></joint>\n";
  char path[] = "/tmp/grit_urdf_XXXXXX", msg[GRIT_MESSAGE_SIZE];
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s%s</robot>\n", HEAD, body);
  fclose(f);
  grit_model *m = NULL;
  grit_mjcf_info info;
  cr_assert_eq(grit_urdf_load_file(path, NULL, &m, &info, msg), GRIT_OK, "%s", msg);
  remove(path);
  cr_assert_eq(info.nwarnings, 0, "%s", info.warnings[0]);
  cr_assert_eq(grit_model_nequality(m), 1);
  cr_assert_eq(grit_model_nv(m), 2);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double v0[2] = {1, 0};
  cr_assert_eq(grit_data_set_qvel(d, v0, 2), GRIT_OK);
  const int steps = (int)lround(0.5 / grit_model_options(m).timestep);
  for (int k = 0; k < steps; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d), *v = grit_data_qvel(d);
  cr_assert_float_eq(q[1], 2 * q[0] + 0.1, 1e-4, "q = %g %g", q[0], q[1]);
  cr_assert_float_eq(v[1], 2 * v[0], 1e-4, "v = %g %g", v[0], v[1]);
  cr_assert_gt(q[0], 0.05); /* it moved */
  grit_data_free(d);
  grit_model_free(m);
  /* a <mimic> with nothing to couple (an unknown joint, itself, a fixed joint) is ignored with a warning
   * at its line, as MuJoCo 2.2.2 ignores every <mimic>; a bad number is an error */
  const char *ignored[3] = {"<mimic joint=\"x\" multiplier=\"2\"/>", "<mimic joint=\"j\"/>", "<mimic joint=\"f\"/>"};
  for (int i = 0; i < 3; ++i) {
    char text[600];
    snprintf(text, sizeof text,
             "</link>\n<link name=\"c\"/><joint name=\"f\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/>"
             "</joint><joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>\n%s</joint>\n",
             ignored[i]);
    cr_assert_eq(load_text(text, NULL, msg, &info), GRIT_OK, "%s", msg);
    cr_assert_eq(info.nwarnings, 1, "%s", ignored[i]);
    cr_assert(strstr(info.warnings[0], ":6:") && strstr(info.warnings[0], "ignored"), "%s", info.warnings[0]);
  }
  expect_error("</link>\n<joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>\n"
               "<mimic joint=\"x\" multiplier=\"two\"/></joint>\n",
               GRIT_ERR_PARSE, ":6:", "multiplier");
}

/* Links without a parent joint are each welded to the world, as MuJoCo 2.2.2's import puts them there (the
 * first root first); with floating_base each gets its own free joint. */
Test(urdf, several_roots) {
  char path[] = "/tmp/grit_urdf_XXXXXX", msg[GRIT_MESSAGE_SIZE];
  const int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s</link>\n<link name=\"c\"><inertial><mass value=\"2\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\" "
             "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n%s</robot>\n", HEAD, HINGE("j", "b", "c"));
  fclose(f);
  grit_model *m = NULL;
  cr_assert_eq(grit_urdf_load_file(path, NULL, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nv(m), 1); /* a and b welded to the world, c on its hinge */
  cr_assert_eq(grit_model_nbody(m), 2);
  grit_model_free(m);
  grit_urdf_load_options o = grit_urdf_default_load_options();
  o.floating_base = 1;
  cr_assert_eq(grit_urdf_load_file(path, &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  remove(path);
  cr_assert_eq(grit_model_nv(m), 13); /* a free, b free with c on its hinge */
  cr_assert_str_eq(grit_model_body_name(m, 1), "a");
  cr_assert_str_eq(grit_model_body_name(m, 2), "b");
  cr_assert_str_eq(grit_model_body_name(m, 3), "c");
  grit_model_free(m);
}

/* What urdfdom alone would refuse but MuJoCo 2.2.2 loads: a revolute or prismatic joint without <limit>
 * (unlimited, its motor unlimited), a <visual> with a geometry urdfdom does not know (visuals are not
 * read). */
Test(urdf, what_mujoco_accepts_and_urdfdom_alone_does_not) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_info info;
  const char *body = "<visual><geometry><teapot size=\"1\"/></geometry></visual></link>\n"
                     "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/></joint>\n";
  cr_assert_eq(load_text(body, NULL, msg, &info), GRIT_OK, "%s", msg);
  cr_assert_eq(info.nwarnings, 0, "%s", info.warnings[0]);
  char path[] = "/tmp/grit_urdf_XXXXXX";
  const int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s%s</robot>\n", HEAD,
          "</link>\n<joint name=\"j\" type=\"prismatic\"><parent link=\"a\"/><child link=\"b\"/></joint>\n");
  fclose(f);
  grit_model *m = NULL;
  cr_assert_eq(grit_urdf_load_file(path, NULL, &m, &info, msg), GRIT_OK, "%s", msg);
  remove(path);
  cr_assert_eq(grit_model_nu(m), 1);
  grit_actuator_def a;
  cr_assert_eq(grit_model_actuator(m, 0, &a), GRIT_OK);
  cr_assert_eq(a.ctrl_limited, 0);
  grit_data *d; /* unlimited: 1 s at 1 m/s without gravity along x goes 1 m */
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double v0 = 1;
  cr_assert_eq(grit_data_set_qvel(d, &v0, 1), GRIT_OK);
  for (int k = 0; k < 500; ++k) cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_float_eq(grit_data_qpos(d)[0], 500 * grit_model_options(m).timestep, 1e-9);
  grit_data_free(d);
  grit_model_free(m);
}

/* package://PKG/PATH: DIR/PKG/PATH for DIR in the option's path, then in ROS_PACKAGE_PATH. */
Test(urdf, package_uris) {
  const char *body = "<collision><geometry><mesh filename=\"package://iiwa_description/meshes/collision/"
                     "link_7_polytope.obj\" scale=\"2 2 2\"/></geometry></collision></link>\n" HINGE("j", "a", "b");
  char msg[GRIT_MESSAGE_SIZE];
  unsetenv("ROS_PACKAGE_PATH");
  grit_urdf_load_options o = grit_urdf_default_load_options();
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_ERR_IO);
  cr_assert(strstr(msg, ":4:") && strstr(msg, "iiwa_description"), "%s", msg);
  o.package_path = "/nonexistent:" DATA;
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_OK, "%s", msg);
  o.package_path = DATA "iiwa_description"; /* a directory that is the package itself */
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_OK, "%s", msg);
  o.package_path = NULL;
  setenv("ROS_PACKAGE_PATH", DATA, 1);
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_OK, "%s", msg);
  unsetenv("ROS_PACKAGE_PATH");
}

/* A package is also a directory whose package.xml gives its <name> (a checkout named otherwise), and a
 * package:// name not in the package path is looked for above the URDF file (the package holding it):
 * D/checkout/{package.xml naming "mypkg", meshes/w.obj, urdf/r.urdf}. package:///PKG (a slip of some
 * public files) is package://PKG. */
Test(urdf, package_by_its_package_xml_and_above_the_file) {
  char dir[] = "/tmp/grit_pkg_XXXXXX", cmd[1200], path[600], msg[GRIT_MESSAGE_SIZE];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s/checkout/meshes' '%s/checkout/urdf' && cp '%s' '%s/checkout/meshes/w.obj' && "
           "printf '<package format=\"2\">\\n  <name> mypkg </name>\\n</package>\\n' > '%s/checkout/package.xml'",
           dir, dir, DATA "meshes/wedge.obj", dir, dir);
  cr_assert_eq(system(cmd), 0);
  const char *uris[2] = {"package://mypkg/meshes/w.obj", "package:///mypkg/meshes/w.obj"};
  for (int i = 0; i < 2; ++i) {
    snprintf(path, sizeof path, "%s/checkout/urdf/r.urdf", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s<collision><geometry><mesh filename=\"%s\"/></geometry></collision></link>\n%s</robot>\n", HEAD,
            uris[i], HINGE("j", "a", "b"));
    fclose(f);
    grit_model *m = NULL;
    cr_assert_eq(grit_urdf_load_file(path, NULL, &m, NULL, msg), GRIT_OK, "%s: %s", uris[i], msg);
    cr_assert_eq(grit_model_ngeom(m), 1);
    grit_model_free(m);
  }
  /* from elsewhere (a buffer has no file to look above): the package path's directory by its package.xml */
  const char *body = "<collision><geometry><mesh filename=\"package://mypkg/meshes/w.obj\"/></geometry>"
                     "</collision></link>\n" HINGE("j", "a", "b");
  grit_urdf_load_options o = grit_urdf_default_load_options();
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_ERR_IO);
  cr_assert(strstr(msg, "above the file") != NULL, "%s", msg);
  snprintf(path, sizeof path, "%s/checkout", dir);
  o.package_path = path;
  cr_assert_eq(load_text(body, &o, msg, NULL), GRIT_OK, "%s", msg);
  snprintf(cmd, sizeof cmd, "rm -r '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

Test(urdf, dispatch_by_content_not_name) {
  /* a URDF called .xml and an MJCF called .urdf load by their root elements */
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_file_format_of(DATA "arm.urdf"), GRIT_FORMAT_URDF);
  cr_assert_eq(grit_file_format_of(DATA "arm.xml"), GRIT_FORMAT_MJCF);
  const char *pairs[2][2] = {{DATA "arm.urdf", "/tmp/grit_urdf_as.xml"}, {DATA "arm.xml", "/tmp/grit_mjcf_as.urdf"}};
  for (int i = 0; i < 2; ++i) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", pairs[i][0], pairs[i][1]);
    cr_assert_eq(system(cmd), 0);
  }
  grit_model *m = NULL;
  grit_load_options o = grit_default_load_options();
  o.urdf.mesh_dir = DATA;
  o.mjcf.timestep = 0.002;
  cr_assert_eq(grit_load_file("/tmp/grit_urdf_as.xml", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nbody(m), 5);
  grit_model_free(m);
  cr_assert_eq(grit_file_format_of("/tmp/grit_mjcf_as.urdf"), GRIT_FORMAT_MJCF);
  remove("/tmp/grit_urdf_as.xml"), remove("/tmp/grit_mjcf_as.urdf");
  FILE *f = fopen("/tmp/grit_other.xml", "w");
  fputs("<?xml version=\"1.0\"?>\n<!-- c -->\n<sdf version=\"1.6\"/>\n", f);
  fclose(f);
  cr_assert_eq(grit_load_file("/tmp/grit_other.xml", NULL, &m, NULL, msg), GRIT_ERR_PARSE);
  cr_assert(strstr(msg, ":3:") && strstr(msg, "<sdf>"), "%s", msg);
  cr_assert_null(m);
  remove("/tmp/grit_other.xml");
}

/* grit sim on a URDF: exit 0 and the sizes in the JSON line; a bad URDF: exit 1 with file:line. */
Test(urdf, cli_sim) {
  char cmd[800], line[1024] = "";
  snprintf(cmd, sizeof cmd, "'%s' sim '%s' --steps 10 --quiet", GRIT_CLI, DATA "arm.urdf");
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  while (fgets(line, sizeof line, p)) {
  }
  cr_assert_eq(pclose(p), 0);
  cr_assert(strstr(line, "\"nq\":4,\"nv\":4,\"nu\":4,\"nbody\":5,\"ngeom\":7") != NULL, "%s", line);
  FILE *f = fopen("/tmp/grit_bad.urdf", "w");
  fprintf(f, "%s</link>\n%s</robot>\n", HEAD, HINGE("j", "a", "nope"));
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' sim /tmp/grit_bad.urdf 2>&1", GRIT_CLI);
  p = popen(cmd, "r");
  cr_assert(fgets(line, sizeof line, p) != NULL);
  const int status = pclose(p);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
  cr_assert(strstr(line, "grit_bad.urdf:5:") != NULL, "%s", line);
  remove("/tmp/grit_bad.urdf");
}

/* A link without <inertial> weighs its collision geometry at density 1000, as MuJoCo 2.2.2's URDF import
 * does (the compiler's inertiafromgeom "auto"): a 0.2 x 0.1 x 0.05 m box is 1 kg, with its centre at the
 * box's origin and the box's principal moments m (b^2 + c^2) / 12, ... (rounding only: 1e-15). A link on a
 * fixed joint without <inertial> adds its geometry's mass to the body it is fused into (here a 0.05 m
 * sphere on link c: 4/3 pi r^3 1000 kg). The comparison with MuJoCo on public files is in
 * test_urdf_mujoco.c. */
Test(urdf, link_without_inertial_weighs_its_collision_geometry) {
  char path[] = "/tmp/grit_urdf_XXXXXX";
  const int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "%s</link>\n<link name=\"c\"><collision><origin xyz=\"0.1 0 0\"/><geometry><box size=\"0.2 0.1 0.05\"/>"
             "</geometry></collision></link>\n<link name=\"d\"><collision><geometry><sphere radius=\"0.05\"/>"
             "</geometry></collision></link>\n%s%s<joint name=\"w\" type=\"fixed\"><parent link=\"c\"/>"
             "<child link=\"d\"/><origin xyz=\"0 0 0.3\"/></joint>\n</robot>\n",
          HEAD, HINGE("j", "a", "b"), HINGE("k", "b", "c"));
  fclose(f);
  grit_model *m = load_urdf(path, NULL, NULL);
  remove(path);
  const int c = grit_model_body_index(m, "c");
  cr_assert_geq(c, 1);
  const double box = 1.0, ball = 4.0 / 3.0 * 3.14159265358979323846 * 0.05 * 0.05 * 0.05 * 1000, mass = box + ball;
  cr_assert(fabs(grit_model_body_mass(m, c) - mass) <= 1e-15 * mass, "%.17g", grit_model_body_mass(m, c));
  const double com[3] = {0.1 * box / mass, 0, 0.3 * ball / mass};
  double I[9] = {box * (0.01 + 0.0025) / 12 + 0.4 * ball * 0.0025, 0, 0, 0, box * (0.04 + 0.0025) / 12 + 0.4 * ball * 0.0025,
                 0, 0, 0, box * (0.04 + 0.01) / 12 + 0.4 * ball * 0.0025};
  const double d[2][3] = {{0.1 - com[0], 0, -com[2]}, {-com[0], 0, 0.3 - com[2]}}, dm[2] = {box, ball};
  for (int k = 0; k < 2; ++k) /* parallel axes */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        I[3 * i + j] += dm[k] * ((i == j ? d[k][0] * d[k][0] + d[k][2] * d[k][2] : 0) - d[k][i] * d[k][j]);
  for (int i = 0; i < 3; ++i) cr_assert(fabs(m->body_com[3 * c + i] - com[i]) <= 1e-15, "com %d", i);
  for (int i = 0; i < 9; ++i)
    cr_assert(fabs(m->body_inertia[9 * c + i] - I[i]) <= 1e-15, "inertia %d: %.17g, expected %.17g", i,
              m->body_inertia[9 * c + i], I[i]);
  grit_model_free(m);
}
