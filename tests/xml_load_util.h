/* SPDX-License-Identifier: Apache-2.0 */
/* xml_load_util.h — the tests' model from an MJCF string, the test failing with the loader's message if
 * it does not load (the load-assert-free-info lines each such test had written out). */
#ifndef GRIT_TESTS_XML_LOAD_UTIL_H
#define GRIT_TESTS_XML_LOAD_UTIL_H

#include <criterion/criterion.h>

#include "grit/grit.h"

static inline grit_model *xml_load_or_fail(const char *xml) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  return m;
}

#endif
