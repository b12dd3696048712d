/* SPDX-License-Identifier: Apache-2.0 */
/* status_internal.h — writing an error message into an object's message buffer. */
#ifndef GRIT_STATUS_INTERNAL_H
#define GRIT_STATUS_INTERNAL_H

#include <stdarg.h>

#include "grit/status.h"

/* Formats the message (printf-style) into `message` (may be NULL) and returns `status`, so that a
 * failing function can `return grit_set_error(obj->message, GRIT_ERR_..., "...", ...);`. */
grit_status grit_set_error(char message[GRIT_MESSAGE_SIZE], grit_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A message about a place in an input file into out (GRIT_MESSAGE_SIZE bytes): "FILE:LINE: <ELEMENT> ...",
 * "FILE:LINE: ..." without an element, "FILE: ..." without a line (line <= 0); the file loaders' one
 * formatter (MJCF, URDF). */
void grit_vformat_at(char out[GRIT_MESSAGE_SIZE], const char *file, int line, const char *element, const char *fmt,
                     va_list ap);

#endif
