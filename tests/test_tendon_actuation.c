/* SPDX-License-Identifier: Apache-2.0 */
/* test_tendon_actuation.c — actuators with tendon transmissions (src/actuation.c, grit_actuator_tendon):
 * the step's Jacobians through them against central differences, a stiff tendon servo stable at 2 ms,
 * bad definitions. The comparison with MuJoCo 2.2.2 is test_tendon_actuation_mujoco.c. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fd_jacobians.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

#define MODEL GRIT_SOURCE_DIR "/tests/mjcf/tendon_actuators.xml"

enum { NQ = 4, NA = 1, NU = 5, NX = 2 * NQ + NA };

/* The model file, with gravity on if asked (a load on the servos, in the derivatives' tests). */
static grit_model *load(int explicit_actuation, int gravity) {
  FILE *f = fopen(MODEL, "rb");
  cr_assert(f);
  static char text[1 << 14];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *g = strstr(text, "gravity=\"0 0 0\""), buf[sizeof text + 16];
  cr_assert(g);
  const int k = (int)(g - text);
  const int len = snprintf(buf, sizeof buf, "%.*sgravity=\"0 0 %s\"%s", k, text, gravity ? "-9.81" : "0", g + 15);
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.explicit_actuation = explicit_actuation;
  lo.timestep = 2e-3;
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(buf, (size_t)len, "tendon_actuators.xml", &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nq(m), NQ);
  cr_assert_eq(grit_model_na(m), NA);
  cr_assert_eq(grit_model_nu(m), NU);
  return m;
}

/* A, B of one step through the five tendon actuators (fixed, straight spatial, wrapped spatial; servo,
 * velocity, clamped motor, affine force-limited, filter) against central differences. No constraints:
 * the solve is exact, so the differences (step 1e-6) see the smooth terms only (~1e-10 relative). */
static void check_jacobians(int explicit_actuation, const double *u) {
  grit_model *m = load(explicit_actuation, 1);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double x[NX] = {0.3, -0.4, 0.05, 0.7, 0.5, -0.8, 0.2, 1.1, 0.3};
  double A[NX * NX], B[NX * NU], Afd[NX * NX], Bfd[NX * NU];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  const double eps = 1e-6;
  fdj_central(d, x, u, eps, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, NX * NX), eb = fdj_rel_err(B, Bfd, NX * NU);
  printf("tendon actuators (%s): A rel err %.3g, B rel err %.3g\n", explicit_actuation ? "explicit" : "implicit", ea,
         eb);
  cr_assert_lt(ea, 1e-5);
  cr_assert_lt(eb, 1e-5);
  /* the tendons move the positions: A's position block is not the identity plus h B's */
  double s = 0;
  for (int i = NQ; i < 2 * NQ; ++i)
    for (int j = 0; j < NQ; ++j) s += fabs(A[i * NX + j]);
  cr_assert_gt(s, 1e-3);
  grit_data_free(d);
  grit_model_free(m);
}

Test(tendon_actuation, jacobians_match_central_differences) {
  const double u[NU] = {0.4, 0.5, 0.3, 0.2, 0.6}; /* unsaturated */
  check_jacobians(0, u);
  check_jacobians(1, u);
}

Test(tendon_actuation, jacobians_with_clamped_and_saturated_actuators) {
  const double u[NU] = {1.4, -0.5, 0.9, 3.0, -0.6}; /* servo and motor clamped, the affine one saturated */
  check_jacobians(0, u);
}

/* A fixed tendon through two hinges of a pendulum, driven by a position servo of kp = 1e6 through it:
 * explicit, omega h = sqrt(kp g^2 |J|^2 / I) h >> 2 would blow up; implicit (g^2 kq J^T J in A) it settles
 * where the servo holds gravity. */
Test(tendon_actuation, stiff_tendon_servo_is_stable_at_2ms) {
  const char *xml = "<mujoco><option timestep='0.002' gravity='0 0 -9.81'/>"
                    "<worldbody><body><joint name='a' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/>"
                    "<body pos='0.5 0 0'><joint name='b' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/>"
                    "</body></body></worldbody>"
                    "<tendon><fixed name='t'><joint joint='a' coef='1'/><joint joint='b' coef='1'/></fixed></tendon>"
                    "<actuator><position tendon='t' kp='1e6'/><position joint='b' kp='1e6'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[2] = {0.3, 0.1}; /* a + b = 0.3, b = 0.1 */
  grit_data_set_ctrl(d, u, 2);
  for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d);
  printf("stiff tendon servo at 2 ms: a + b = %.9f, b = %.9f, |v| = %.3g\n", q[0] + q[1], q[1],
         fabs(grit_data_qvel(d)[0]) + fabs(grit_data_qvel(d)[1]));
  /* static deflection under gravity: torque ~ m g l ~ 10 N m over kp = 1e6: ~1e-5 rad */
  cr_assert(fabs(q[0] + q[1] - 0.3) < 1e-4 && fabs(q[1] - 0.1) < 1e-4, "a + b %g, b %g", q[0] + q[1], q[1]);
  cr_assert_lt(fabs(grit_data_qvel(d)[0]) + fabs(grit_data_qvel(d)[1]), 1e-6);
  grit_data_free(d);
  grit_model_free(m);
}

/* Builder: a missing tendon, a tendon across two trees, a tendon that moves nothing. */
Test(tendon_actuation, bad_definitions_are_errors) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  for (int k = 1; k <= 2; ++k) { /* two pendulums: two trees */
    grit_body_def bd = grit_default_body_def();
    bd.pos[0] = k;
    bd.com[2] = -0.3;
    cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
    grit_joint_def jd = grit_default_joint_def();
    cr_assert_eq(grit_builder_add_joint(b, k, &jd, NULL), GRIT_OK);
  }
  grit_actuator_def a = grit_default_actuator_def();
  a.trntype = GRIT_TRN_TENDON;
  a.tendon = 0;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(grit_builder_last_error(b), "tendon 0 does not exist"), "%s", grit_builder_last_error(b));
  grit_tendon_def t = grit_default_tendon_def();
  const int j[2] = {0, 1};
  const double c[2] = {1, -1};
  t.n = 2, t.obj = j, t.coef = c;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK);
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_ERR_UNSUPPORTED);
  cr_assert(strstr(grit_builder_last_error(b), "spans two kinematic trees"), "%s", grit_builder_last_error(b));
  grit_builder_free(b);
}

/* MJCF: an actuator on a missing tendon, a tendon through an unknown site: errors with file and line. */
Test(tendon_actuation, mjcf_bad_input_names_file_and_line) {
  const char *xml[2] = {"<mujoco><worldbody><body><joint name='a'/><geom size='0.1'/></body></worldbody>\n"
                        "<tendon><fixed name='t'><joint joint='a' coef='1'/></fixed></tendon>\n"
                        "<actuator><position tendon='u' kp='1'/></actuator></mujoco>",
                        "<mujoco><worldbody><body><joint name='a'/><geom size='0.1'/><site name='s'/></body></worldbody>\n"
                        "<tendon><spatial name='t'><site site='s'/>\n<site site='nope'/></spatial></tendon></mujoco>"};
  const char *want[2] = {"<string>:3: <position> unknown tendon u", "<string>:3: <site> unknown site 'nope'"};
  for (int i = 0; i < 2; ++i) {
    grit_model *m = NULL;
    char msg[GRIT_MESSAGE_SIZE] = "";
    cr_assert_eq(grit_mjcf_load_string(xml[i], &m, NULL, msg), GRIT_ERR_INVALID_MODEL, "%s", msg);
    cr_assert(strstr(msg, want[i]), "got '%s', want '%s'", msg, want[i]);
  }
}

/* The same errors in an included file name that file and its line. */
static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

Test(tendon_actuation, errors_in_an_included_file_name_it) {
  const char *inc[3] = {"<mujoco>\n<tendon><spatial name='t'><site site='s'/>\n<site site='nope'/></spatial></tendon>"
                        "</mujoco>",
                        "<mujoco>\n<equality>\n<connect body1='a' body2='a' anchor='0 0 0'/></equality></mujoco>",
                        "<mujoco>\n<actuator>\n\n<position tendon='missing' kp='2'/></actuator></mujoco>"};
  const char *want[3] = {"inc.xml:3: <site> unknown site 'nope'", "inc.xml:3: <connect> equality 0: body 1 is "
                         "constrained to itself", "inc.xml:4: <position> unknown tendon missing"};
  char dir[] = "/tmp/grit_tendon_actXXXXXX", main_path[256], inc_path[256];
  cr_assert(mkdtemp(dir));
  snprintf(main_path, sizeof main_path, "%s/main.xml", dir);
  snprintf(inc_path, sizeof inc_path, "%s/inc.xml", dir);
  write_file(main_path, "<mujoco><worldbody><body name='a'><joint name='j'/><geom size='0.1'/><site name='s'/></body>"
                        "<body name='b' pos='1 0 0'><joint/><geom size='0.1'/></body></worldbody>\n"
                        "<tendon><fixed name='f'><joint joint='j' coef='1'/></fixed></tendon>\n"
                        "<include file='inc.xml'/></mujoco>");
  for (int i = 0; i < 3; ++i) {
    write_file(inc_path, inc[i]);
    grit_model *m = NULL;
    char msg[GRIT_MESSAGE_SIZE] = "";
    cr_assert_eq(grit_mjcf_load_file(main_path, &m, NULL, msg), GRIT_ERR_INVALID_MODEL, "%s", msg);
    cr_assert(strstr(msg, want[i]), "got '%s', want '%s'", msg, want[i]);
  }
  remove(inc_path);
  remove(main_path);
  rmdir(dir);
}
