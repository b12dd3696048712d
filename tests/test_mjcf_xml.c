/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_xml.c — the MJCF loader's XML layer (mjcf_xml.c): a malformed document is an error naming the
 * source and line; what follows a whole root element is left out with a warning naming the line, as MuJoCo
 * loads such files (unitree_mujoco's g1/scene.xml closes </mujoco> twice; MuJoCo 2.2.2's tinyxml2 also loads
 * the first of two roots), and the model is the root's. */
#include <criterion/criterion.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

static void expect_parse_error(const char *xml, const char *part, int after_root) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m = NULL;
  const grit_status r = grit_mjcf_load_string(xml, &m, NULL, msg);
  cr_assert_eq(r, GRIT_ERR_PARSE, "status %s: %s", grit_status_string(r), msg);
  cr_assert_null(m);
  cr_expect(strstr(msg, part) != NULL, "message '%s' lacks '%s'", msg, part);
  cr_expect_eq(strstr(msg, "after the root element") != NULL, after_root, "message '%s'", msg);
}

/* Loads xml; the model has nbody bodies and one warning containing `part`. */
static void expect_left_out(const char *xml, int nbody, const char *part) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m = NULL;
  grit_mjcf_info info;
  const grit_status r = grit_mjcf_load_string(xml, &m, &info, msg);
  cr_assert_eq(r, GRIT_OK, "status %s: %s", grit_status_string(r), msg);
  cr_expect_eq(grit_model_nbody(m), nbody);
  cr_assert_eq(info.nwarnings, 1);
  cr_expect(strstr(info.warnings[0], part) != NULL, "warning '%s' lacks '%s'", info.warnings[0], part);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(mjcf_xml, what_follows_the_root_is_left_out_with_a_warning) {
  /* the g1 scene's shape: the root closed on line 3, a second </mujoco> on line 4 */
  expect_left_out("<mujoco>\n<worldbody><body><freejoint/><geom size='.1'/></body></worldbody>\n  </mujoco>\n</mujoco>\n",
                  2, "what follows the root element <mujoco> is not read (not XML from line 4 on)");
  /* a second root: the first is the model (MuJoCo's choice too) */
  expect_left_out("<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>\n"
                  "<mujoco><worldbody><body><geom size='.1'/></body><body><geom size='.1'/></body></worldbody></mujoco>",
                  2, "not XML from line 2 on");
}

Test(mjcf_xml, an_error_inside_the_root_is_unchanged) {
  expect_parse_error("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", "<string>:4: XML error: mismatched tag",
                     0);
  expect_parse_error("", "XML error", 0);
}
