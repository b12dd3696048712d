/* SPDX-License-Identifier: Apache-2.0 */
/* status.c — names of status codes (the message helper is src/base/message.c). */
#include "grit/status.h"

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
