/* SPDX-License-Identifier: Apache-2.0 */
/* grit/status.h — status codes returned by every fallible grit function.
 *
 * Convention: a function that can fail returns grit_status; GRIT_OK (zero) is success. Objects that
 * can fail (model builder, data) also keep a message describing their last error, retrievable with the
 * object's *_last_error() function. The library never aborts or exits on user input. */
#ifndef GRIT_STATUS_H
#define GRIT_STATUS_H

#include "grit/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum grit_status {
  GRIT_OK = 0,
  GRIT_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad index or handle, a wrong length */
  GRIT_ERR_INVALID_MODEL = 2,    /* model data violates a physical or structural rule */
  GRIT_ERR_NOT_FINITE = 3,       /* a NaN or infinity was given or produced */
  GRIT_ERR_OUT_OF_MEMORY = 4,    /* an allocation failed (only at creation, never in a step) */
  GRIT_ERR_CAPACITY = 5,         /* a fixed-size workspace limit was reached */
  GRIT_ERR_NOT_CONVERGED = 6,    /* an iterative solver did not reach its tolerance */
  GRIT_ERR_NUMERICAL = 7,        /* factorization failed (e.g. a non-positive pivot) */
  GRIT_ERR_STATE = 8,            /* the call is not valid in the object's current state */
  GRIT_ERR_IO = 9,               /* a file could not be read or written */
  GRIT_ERR_PARSE = 10,           /* malformed input file */
  GRIT_ERR_UNSUPPORTED = 11      /* a valid request grit does not implement */
} grit_status;

/* A short constant English name for a status, e.g. "invalid argument". Never NULL. */
GRIT_API const char *grit_status_string(grit_status status);

/* Size of the message buffers kept by grit objects, including the terminating zero. */
#define GRIT_MESSAGE_SIZE 256

#ifdef __cplusplus
}
#endif
#endif /* GRIT_STATUS_H */
