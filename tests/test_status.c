/* SPDX-License-Identifier: Apache-2.0 */
/* test_status.c — status codes and their names. */
#include <criterion/criterion.h>
#include <string.h>

#include "grit/status.h"
#include "status_internal.h"

Test(status, every_code_has_a_distinct_name) {
  for (int a = GRIT_OK; a <= GRIT_ERR_UNSUPPORTED; ++a) {
    const char *na = grit_status_string((grit_status)a);
    cr_assert(na != NULL && strcmp(na, "unknown status") != 0, "status %d has no name", a);
    for (int b = a + 1; b <= GRIT_ERR_UNSUPPORTED; ++b)
      cr_assert(strcmp(na, grit_status_string((grit_status)b)) != 0, "statuses %d and %d share a name", a, b);
  }
  cr_assert_str_eq(grit_status_string((grit_status)999), "unknown status");
}

Test(status, set_error_formats_message_and_returns_status) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "body %d: mass %g <= 0", 3, -1.0);
  cr_assert_eq(s, GRIT_ERR_INVALID_MODEL);
  cr_assert_str_eq(msg, "body 3: mass -1 <= 0");
  /* A NULL buffer is allowed: only the status comes back. */
  cr_assert_eq(grit_set_error(NULL, GRIT_ERR_IO, "x"), GRIT_ERR_IO);
}

Test(status, long_messages_are_truncated_not_overflowed) {
  char msg[GRIT_MESSAGE_SIZE + 16];
  memset(msg, 'z', sizeof msg);
  char big[1024];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  grit_set_error(msg, GRIT_ERR_PARSE, "%s", big);
  cr_assert_eq(strlen(msg), GRIT_MESSAGE_SIZE - 1);
  cr_assert_eq(msg[GRIT_MESSAGE_SIZE], 'z', "wrote past the message buffer");
}
