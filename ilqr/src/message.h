/* SPDX-License-Identifier: Apache-2.0 */
/* message.h — the iLQR package's error messages: one formatter for every module. */
#ifndef GRIT_ILQR_MESSAGE_H
#define GRIT_ILQR_MESSAGE_H

#include "grit/status.h"

/* Formats the message into msg (GRIT_MESSAGE_SIZE bytes; may be NULL) and returns status. */
grit_status grit_ilqr_fail(char *msg, grit_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
