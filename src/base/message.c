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

void grit_vformat_at(char out[GRIT_MESSAGE_SIZE], const char *file, int line, const char *element, const char *fmt,
                     va_list ap) {
  const int n = element    ? snprintf(out, GRIT_MESSAGE_SIZE, "%.120s:%d: <%.40s> ", file, line, element)
                : line > 0 ? snprintf(out, GRIT_MESSAGE_SIZE, "%.120s:%d: ", file, line)
                           : snprintf(out, GRIT_MESSAGE_SIZE, "%.120s: ", file);
  if (n < 0 || n >= GRIT_MESSAGE_SIZE) return;
  vsnprintf(out + n, (size_t)(GRIT_MESSAGE_SIZE - n), fmt, ap);
}
