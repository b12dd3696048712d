/* SPDX-License-Identifier: Apache-2.0 */
/* bench_util.h — what every benchmark program needs: a monotonic clock and medians. (Include after
 * defining _POSIX_C_SOURCE, for clock_gettime.) */
#ifndef GRIT_BENCH_UTIL_H
#define GRIT_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* The clock now_us reads: 0, monotonic wall time; 1, this thread's CPU time (the --cpu-time option of
 * bench_mujoco and bench_derivatives: on a machine shared with other work, the time the thread spends
 * descheduled is left out, though not the caches it shares). */
static int bench_clock_cpu = 0;

/* Time in microseconds on that clock. */
static inline double now_us(void) {
  struct timespec t;
  clock_gettime(bench_clock_cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* qsort comparison of doubles. */
static inline int bench_cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of x[0..n-1] (sorts x in place); 0 for n = 0. */
static inline double bench_median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, bench_cmp);
  return n ? x[n / 2] : 0.0;
}

#endif
