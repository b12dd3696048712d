/* SPDX-License-Identifier: Apache-2.0 */
/* message.c — grit_set_error (status_internal.h), the one formatter of error messages. Compiled into each of
 * libgrit, libgrit_ilqr and libgrit_replay as a hidden symbol (so it is not part of any public interface):
 * one source, no copies. */
#include <stdarg.h>
#include <stdio.h>

#include "status_internal.h"

grit_status grit_set_error(char message[GRIT_MESSAGE_SIZE], grit_status status, const char *fmt, ...) {
  if (message) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, GRIT_MESSAGE_SIZE, fmt, ap);
    va_end(ap);
  }
  return status;
}
