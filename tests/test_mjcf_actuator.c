/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_actuator.c — MJCF actuators (src/io/mjcf_actuator.c): every supported kind and its default
 * class read as MuJoCo 2.2.2 reads them, and bad input reported with file and line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

static void expect_error(const char *xml, grit_status s, const char *part) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m = NULL;
  grit_status r = grit_mjcf_load_string(xml, &m, NULL, msg);
  cr_assert_eq(r, s, "status %s, expected %s: %s", grit_status_string(r), grit_status_string(s), msg);
  cr_assert_null(m);
  cr_assert(strstr(msg, part) != NULL, "message '%s' lacks '%s'", msg, part);
}

#define BODY "<mujoco><worldbody><body><joint name='a'/><geom size='1'/></body></worldbody>\n<actuator>\n"

Test(mjcf_actuator, every_kind_with_its_class) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/mjcf/actuators.xml", GRIT_SOURCE_DIR);
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nu(m), 6);
  cr_assert_eq(grit_model_na(m), 2);
  grit_actuator_def a;
  grit_model_actuator(m, grit_model_actuator_index(m, "p1"), &a); /* <position> of class servo */
  cr_assert(a.gainprm[0] == 4 && a.biasprm[1] == -4 && a.biastype == GRIT_BIAS_AFFINE && a.ctrl_limited);
  grit_model_actuator(m, grit_model_actuator_index(m, "v2"), &a);
  cr_assert(a.gainprm[0] == 0.5 && a.biasprm[2] == -0.5 && a.biasprm[1] == 0 && a.gear == 2);
  grit_model_actuator(m, grit_model_actuator_index(m, "g3"), &a);
  cr_assert(a.gaintype == GRIT_GAIN_AFFINE && a.gainprm[2] == 0.1 && a.biasprm[0] == 0.2 && a.force_limited &&
            a.force_range[0] == -5);
  grit_model_actuator(m, grit_model_actuator_index(m, "m2"), &a);
  cr_assert(a.gainprm[0] == 1 && a.biastype == GRIT_BIAS_NONE && a.ctrl_range[1] == 0.1);
  grit_model_actuator(m, grit_model_actuator_index(m, "f4"), &a);
  cr_assert(a.dyntype == GRIT_DYN_FILTER && a.dynprm[0] == 0.05);
  grit_model_actuator(m, grit_model_actuator_index(m, "i1"), &a);
  cr_assert(a.dyntype == GRIT_DYN_INTEGRATOR && a.act_limited && a.act_range[1] == 0.5 && a.biasprm[1] == -2);
  grit_model_free(m);
  /* a keyframe's activations */
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(info.na, 2);
  grit_data *d;
  grit_data_create(m, &d);
  cr_assert_eq(grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, "driven"), d), GRIT_OK);
  cr_assert(grit_data_act(d)[0] == 0.25 && grit_data_act(d)[1] == -0.1);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(mjcf_actuator, bad_input_is_an_error_with_file_and_line) {
  expect_error(BODY "<position joint='b'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <position> unknown joint b");
  expect_error(BODY "<general tendon='t'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <general> unknown tendon t");
  expect_error(BODY "<position joint='a' kp='-1'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <position> attribute 'kp' = -1 must be >= 0");
  expect_error(BODY "<velocity joint='a' kv='-2'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "'kv' = -2");
  expect_error(BODY "<damper joint='a'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "<string>:3: <damper> <damper> actuators are not supported");
  expect_error(BODY "<general joint='a' dyntype='user'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "dyntype 'user' is not supported");
  expect_error(BODY "<general site='s' refsite='s'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED, "transmission 'refsite'");
  expect_error(BODY "<general/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "exactly one transmission");
  expect_error(BODY "<general joint='a' dyntype='filter' dynprm='0'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <general> dynprm[0]");
  expect_error(BODY "<general joint='a' forcelimited='true' forcerange='1 -1'/></actuator></mujoco>",
               GRIT_ERR_INVALID_MODEL, "force_range [1, -1] is empty");
  expect_error("<mujoco><default><damper/></default></mujoco>", GRIT_ERR_UNSUPPORTED, "<damper> actuators");
  expect_error(BODY "<general joint='a' dyntype='integrator'/></actuator>\n<keyframe><key act='1 2'/></keyframe></mujoco>",
               GRIT_ERR_INVALID_MODEL, "<string>:4: <key> act has 2 numbers, the model has na = 1");
}

/* A joint's actuatorfrcrange (newer than MuJoCo 2.2.2) folds into its one actuator's force range,
 * divided by the gear (a negative gear swaps the bounds; disjoint ranges give the joint's nearer bound). */
Test(mjcf_actuator, actuatorfrcrange_clamps_the_joint_force) {
  static const char xml[] =
      "<mujoco><worldbody><body><joint name='a' actuatorfrcrange='-1 1.5'/><geom size='.1'/>"
      "<body pos='1 0 0'><joint name='b' actuatorfrcrange='-2 2' actuatorfrclimited='true'/><geom size='.1'/>"
      "<body pos='1 0 0'><joint name='c' actuatorfrcrange='-2 2'/><geom size='.1'/></body></body></body>"
      "</worldbody><actuator><motor joint='a' gear='2'/><motor joint='b' gear='-4' forcerange='-0.1 1' "
      "forcelimited='true'/><motor joint='c' forcerange='5 10'/></actuator></mujoco>";
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_actuator_def a;
  grit_model_actuator(m, 0, &a);
  cr_assert(a.force_limited && a.force_range[0] == -0.5 && a.force_range[1] == 0.75, "(%g, %g)", a.force_range[0],
            a.force_range[1]);
  grit_model_actuator(m, 1, &a); /* [-2, 2] / -4 = [-0.5, 0.5], with the actuator's own [-0.1, 1] */
  cr_assert(a.force_limited && a.force_range[0] == -0.1 && a.force_range[1] == 0.5, "(%g, %g)", a.force_range[0],
            a.force_range[1]);
  grit_model_actuator(m, 2, &a); /* [5, 10] clamped into [-2, 2]: always 2 */
  cr_assert(a.force_limited && a.force_range[0] == 2 && a.force_range[1] == 2, "(%g, %g)", a.force_range[0],
            a.force_range[1]);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[3] = {3, 3, -7};
  double f[3];
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  cr_assert_eq(grit_actuator_forces(d, f), GRIT_OK);
  cr_assert(f[0] == 0.75 && f[1] == 0.5 && f[2] == 2, "forces (%g, %g, %g)", f[0], f[1], f[2]);
  grit_data_free(d);
  grit_model_free(m);
  /* two actuators on one clamped joint: the clamp of their sum is not grit's */
  expect_error("<mujoco><worldbody><body><joint name='a' actuatorfrcrange='-1 1'/><geom size='1'/></body>"
               "</worldbody>\n<actuator>\n<motor joint='a'/><position joint='a' kp='3'/></actuator></mujoco>",
               GRIT_ERR_UNSUPPORTED, "<string>:1: <joint> actuatorfrcrange");
}
