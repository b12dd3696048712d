/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_test_util.h — the MJCF loader tests' two checks (test_mjcf.c, test_mjcf_mesh.c): a string that must
 * load, and a string that must fail with a given status and a message naming the source, line and cause.
 * Static inline so each test file uses what it needs without unused-function warnings. */
#ifndef GRIT_TESTS_MJCF_TEST_UTIL_H
#define GRIT_TESTS_MJCF_TEST_UTIL_H

#include <criterion/criterion.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

static inline grit_model *load(const char *xml, grit_mjcf_info *info) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m = NULL;
  grit_status s = grit_mjcf_load_string(xml, &m, info, msg);
  cr_assert_eq(s, GRIT_OK, "load failed (%s): %s", grit_status_string(s), msg);
  return m;
}

/* Loading must fail with status s and a message containing `part` (and the line "<string>:line:"). */
static inline void expect_error(const char *xml, grit_status s, const char *part) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m = (grit_model *)&m; /* garbage: must be set to NULL */
  grit_status r = grit_mjcf_load_string(xml, &m, NULL, msg);
  cr_assert_eq(r, s, "status %s, expected %s: %s (%s)", grit_status_string(r), grit_status_string(s), msg, xml);
  cr_assert_null(m);
  cr_assert(strstr(msg, part) != NULL, "message '%s' lacks '%s'", msg, part);
  cr_assert(strncmp(msg, "<string>", 8) == 0, "message '%s' does not name the source", msg);
}

#endif
