/* SPDX-License-Identifier: Apache-2.0 */
/* message.c — the iLQR package's error messages (see message.h). */
#include "message.h"

#include <stdarg.h>
#include <stdio.h>

grit_status grit_ilqr_fail(char *msg, grit_status status, const char *fmt, ...) {
  if (msg) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, GRIT_MESSAGE_SIZE, fmt, ap);
    va_end(ap);
  }
  return status;
}
