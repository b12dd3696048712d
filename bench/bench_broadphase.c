/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 199309L
/* bench_broadphase — how the broad phase's work grows with the number of objects.
 *
 * Scenes of n boxes of 10 cm (plus a 1 cm margin) at the density of the clutter scene: 40 objects per
 * 0.8 m x 0.8 m of floor, in a layer 0.8 m deep that widens with n; n = 100 .. 6400. Prints the box-box overlap tests made by
 * sort-and-sweep, the n(n-1)/2 tests of brute force, the pairs found, and the time (median of 9). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#include "broadphase.h"

static double uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return lo + (hi - lo) * (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

int main(void) {
  printf("%8s %14s %14s %10s %12s %10s\n", "n", "sweep_tests", "brute_tests", "pairs", "tests/n", "us");
  for (int n = 100; n <= 6400; n *= 2) {
    unsigned long long s = 7;
    double *aabb = malloc(sizeof(double) * 6 * (size_t)n);
    int *pairs = malloc(sizeof(int) * 2 * 16 * (size_t)n);
    /* a layer of side L with 40 objects per 0.8 x 0.8 m^2, objects of half size 5 cm + 1 cm margin */
    const double L = 0.8 * sqrt(n / 40.0);
    for (int i = 0; i < n; ++i) {
      double c[3] = {uniform(&s, 0, L), uniform(&s, 0, L), uniform(&s, 0, 0.8)};
      for (int k = 0; k < 3; ++k) {
        aabb[6 * i + k] = c[k] - 0.06;
        aabb[6 * i + 3 + k] = c[k] + 0.06;
      }
    }
    grit_broadphase *bp;
    if (grit_broadphase_create(n, &bp) != GRIT_OK) return 1;
    double t[9];
    int np = 0;
    long tests = 0;
    for (int r = 0; r < 9; ++r) {
      const double t0 = now_us();
      grit_broadphase_pairs(bp, aabb, NULL, NULL, pairs, 16 * n, &np, &tests);
      t[r] = now_us() - t0;
    }
    qsort(t, 9, sizeof t[0], bench_cmp);
    printf("%8d %14ld %14ld %10d %12.1f %10.1f\n", n, tests, (long)n * (n - 1) / 2, np, (double)tests / n, t[4]);
    grit_broadphase_free(bp);
    free(aabb);
    free(pairs);
  }
  return 0;
}
