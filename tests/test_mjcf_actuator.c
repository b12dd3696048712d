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
  expect_error(BODY "<cylinder joint='a'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "<string>:3: <cylinder> <cylinder> actuators are not supported");
  expect_error(BODY "<general joint='a' dyntype='user'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "dyntype 'user' is not supported");
  expect_error(BODY "<general site='s' refsite='s'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED, "transmission 'refsite'");
  expect_error(BODY "<general/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "exactly one transmission");
  expect_error(BODY "<general joint='a' dyntype='filter' dynprm='0'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <general> dynprm[0]");
  expect_error(BODY "<general joint='a' forcelimited='true' forcerange='1 -1'/></actuator></mujoco>",
               GRIT_ERR_INVALID_MODEL, "force_range [1, -1] is empty");
  expect_error("<mujoco><default><cylinder/></default></mujoco>", GRIT_ERR_UNSUPPORTED, "<cylinder> actuators");
  expect_error(BODY "<general joint='a' dyntype='integrator'/></actuator>\n<keyframe><key act='1 2'/></keyframe></mujoco>",
               GRIT_ERR_INVALID_MODEL, "<string>:4: <key> act has 2 numbers, the model has na = 1");
}
