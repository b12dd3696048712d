/* SPDX-License-Identifier: Apache-2.0 */
/* message.h — the iLQR package's error messages: grit's one formatter (src/base/message.c, compiled into
 * libgrit_ilqr too) under the package's name. */
#ifndef GRIT_ILQR_MESSAGE_H
#define GRIT_ILQR_MESSAGE_H

#include "status_internal.h"

/* Formats the message into msg (GRIT_MESSAGE_SIZE bytes; may be NULL) and returns status. */
#define grit_ilqr_fail grit_set_error

#endif
