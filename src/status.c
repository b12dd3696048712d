/* SPDX-License-Identifier: Apache-2.0 */
/* status.c — names of status codes and the message helper used by every module. */
#include "grit/status.h"

#include <stdarg.h>
#include <stdio.h>

#include "status_internal.h"

const char *grit_status_string(grit_status status) {
  switch (status) {
    case GRIT_OK: return "ok";
    case GRIT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GRIT_ERR_INVALID_MODEL: return "invalid model";
    case GRIT_ERR_NOT_FINITE: return "not finite";
    case GRIT_ERR_OUT_OF_MEMORY: return "out of memory";
    case GRIT_ERR_CAPACITY: return "capacity exceeded";
    case GRIT_ERR_NOT_CONVERGED: return "not converged";
    case GRIT_ERR_NUMERICAL: return "numerical failure";
    case GRIT_ERR_STATE: return "invalid state";
    case GRIT_ERR_IO: return "input/output error";
    case GRIT_ERR_PARSE: return "parse error";
    case GRIT_ERR_UNSUPPORTED: return "unsupported";
  }
  return "unknown status";
}

grit_status grit_set_error(char message[GRIT_MESSAGE_SIZE], grit_status status, const char *fmt, ...) {
  if (message) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, GRIT_MESSAGE_SIZE, fmt, ap);
    va_end(ap);
  }
  return status;
}
