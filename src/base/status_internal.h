/* SPDX-License-Identifier: Apache-2.0 */
/* status_internal.h — writing an error message into an object's message buffer. */
#ifndef GRIT_STATUS_INTERNAL_H
#define GRIT_STATUS_INTERNAL_H

#include "grit/status.h"

/* Formats the message (printf-style) into `message` (may be NULL) and returns `status`, so that a
 * failing function can `return grit_set_error(obj->message, GRIT_ERR_..., "...", ...);`. */
grit_status grit_set_error(char message[GRIT_MESSAGE_SIZE], grit_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
