/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_xml.c — the MJCF loader's XML layer (mjcf_xml.c): a malformed document is an error naming the
 * source and line, and text after the root element's end says so (unitree_mujoco's g1/scene.xml closes
 * </mujoco> twice; MuJoCo's tinyxml2 ignores the second, expat reports only "invalid token"). */
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

Test(mjcf_xml, text_after_the_root_names_where_the_root_ended) {
  /* the g1 scene's shape: the root closed on line 3, a second </mujoco> on line 4 */
  expect_parse_error("<mujoco>\n<worldbody/>\n  </mujoco>\n</mujoco>\n",
                     "<string>:4: XML error: not well-formed (invalid token) (after the root element <mujoco> ended "
                     "at line 3",
                     1);
  expect_parse_error("<mujoco/>\n<mujoco/>", "<string>:2: XML error: junk after document element (after the root "
                                              "element <mujoco> ended at line 1",
                     1);
}

Test(mjcf_xml, an_error_inside_the_root_is_unchanged) {
  expect_parse_error("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", "<string>:4: XML error: mismatched tag",
                     0);
  expect_parse_error("", "XML error", 0);
}
