/* SPDX-License-Identifier: Apache-2.0 */
/* timing.h — a monotonic clock for the step's optional per-phase timing (internal). The step reads it
 * only when grit_step_settings.timing is set, so an ordinary step makes no clock calls. */
#ifndef GRIT_TIMING_H
#define GRIT_TIMING_H

#include <time.h>

/* Monotonic time in microseconds (POSIX clock_gettime; C11's timespec_get is not monotonic). */
static inline double grit_clock_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

#endif
