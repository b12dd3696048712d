/* SPDX-License-Identifier: Apache-2.0 */
/* test_broadphase.c — sort-and-sweep finds exactly the overlapping pairs that brute force finds. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase.h"

static double uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return lo + (hi - lo) * (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static int overlap(const double *a, const double *b) {
  for (int k = 0; k < 3; ++k)
    if (a[k] > b[3 + k] || b[k] > a[3 + k]) return 0;
  return 1;
}

static int skip_some(const void *ctx, int i, int j) {
  (void)ctx;
  return (i + j) % 3 != 0;
}

/* Random boxes: centres in a box of size (Lx, Ly, Lz), half sizes in [hmin, hmax]. */
static void random_boxes(unsigned long long *s, int n, const double L[3], double hmin, double hmax, double *aabb) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double c = uniform(s, 0, L[k]), h = uniform(s, hmin, hmax);
      aabb[6 * i + k] = c - h;
      aabb[6 * i + 3 + k] = c + h;
    }
}

static void compare_with_brute_force(int n, const double *aabb, grit_pair_filter filter, grit_broadphase *bp) {
  const int cap = n * (n - 1) / 2;
  int *pairs = malloc(sizeof(int) * 2 * (size_t)cap), np = 0;
  char *found = calloc((size_t)n * n, 1);
  long tests = 0;
  cr_assert_eq(grit_broadphase_pairs(bp, aabb, filter, NULL, pairs, cap, &np, &tests), GRIT_OK);
  for (int p = 0; p < np; ++p) {
    int i = pairs[2 * p], j = pairs[2 * p + 1];
    cr_assert(i < j, "pair not ordered");
    cr_assert(!found[i * n + j], "pair (%d, %d) reported twice", i, j);
    found[i * n + j] = 1;
  }
  int brute = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      int expect = overlap(aabb + 6 * i, aabb + 6 * j) && (!filter || filter(NULL, i, j));
      brute += expect;
      cr_assert_eq(found[i * n + j], expect, "pair (%d, %d): sweep %d, brute force %d", i, j, found[i * n + j], expect);
    }
  cr_assert_eq(np, brute);
  cr_assert(tests <= (long)cap);
  free(pairs);
  free(found);
}

Test(broadphase, random_scenes_of_200_boxes_match_brute_force) {
  unsigned long long s = 42;
  const int n = 200;
  double *aabb = malloc(sizeof(double) * 6 * n);
  grit_broadphase *bp;
  cr_assert_eq(grit_broadphase_create(n, &bp), GRIT_OK);
  const double cube[3] = {4, 4, 4}, flat[3] = {10, 10, 0.2}, line[3] = {50, 0.5, 0.5};
  const double *shapes[3] = {cube, flat, line};
  for (int scene = 0; scene < 30; ++scene) {
    random_boxes(&s, n, shapes[scene % 3], 0.01, 0.3, aabb);
    compare_with_brute_force(n, aabb, scene % 2 ? skip_some : NULL, bp);
    /* move a little and check again: exercises the kept order */
    for (int i = 0; i < 6 * n; ++i) aabb[i] += 0.01 * ((i / 6) % 5);
    compare_with_brute_force(n, aabb, NULL, bp);
  }
  grit_broadphase_free(bp);
  free(aabb);
}

Test(broadphase, touching_boxes_count_as_overlapping) {
  double aabb[12] = {0, 0, 0, 1, 1, 1, 1, 0, 0, 2, 1, 1};
  grit_broadphase *bp;
  grit_broadphase_create(2, &bp);
  int pairs[2], np = -1;
  cr_assert_eq(grit_broadphase_pairs(bp, aabb, NULL, NULL, pairs, 1, &np, NULL), GRIT_OK);
  cr_assert_eq(np, 1);
  grit_broadphase_free(bp);
}

Test(broadphase, reports_capacity_without_overflow) {
  const int n = 10;
  double aabb[60];
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      aabb[6 * i + k] = 0;
      aabb[6 * i + 3 + k] = 1; /* all overlap: 45 pairs */
    }
  grit_broadphase *bp;
  grit_broadphase_create(n, &bp);
  int pairs[2 * 10 + 2], np = 0;
  pairs[20] = pairs[21] = -7; /* guard */
  cr_assert_eq(grit_broadphase_pairs(bp, aabb, NULL, NULL, pairs, 10, &np, NULL), GRIT_ERR_CAPACITY);
  cr_assert_eq(np, 10);
  cr_assert(pairs[20] == -7 && pairs[21] == -7, "wrote past max_pairs");
  grit_broadphase_free(bp);
}

/* The packed sweep (default; four boxes a vector, and with grit_broadphase_set_scalar a pair at a time)
 * and the sweep through the order (grit_broadphase_set_unpacked) give the
 * same pairs in the same order and make the same tests: random boxes (some unbounded, as a plane's,
 * some with equal lower bounds) moved over 30 calls, with and without a filter, and at a capacity. */
Test(broadphase, packed_sweep_same_pairs_in_same_order) {
  unsigned long long s = 99;
  const int n = 300, cap = n * (n - 1) / 2;
  const double L[3] = {1.0, 0.6, 0.3};
  double *aabb = malloc(sizeof(double) * 6 * (size_t)n);
  int *pp[3] = {malloc(sizeof(int) * 2 * (size_t)cap), malloc(sizeof(int) * 2 * (size_t)cap), malloc(sizeof(int) * 2 * (size_t)cap)};
  random_boxes(&s, n, L, 0.01, 0.06, aabb);
  for (int k = 0; k < 3; ++k) aabb[6 * 7 + k] = -INFINITY, aabb[6 * 7 + 3 + k] = INFINITY;
  aabb[6 * 9 + 2] = -INFINITY; /* a floor: bounded above only */
  aabb[6 * 10] = aabb[6 * 11] = aabb[6 * 12]; /* ties on the lower bounds */
  grit_broadphase *bp[3];
  grit_broadphase_create(n, &bp[0]);
  grit_broadphase_create(n, &bp[1]);
  grit_broadphase_create(n, &bp[2]);
  grit_broadphase_set_unpacked(bp[1], 1);
  grit_broadphase_set_scalar(bp[2], 1); /* the packed sweep a pair at a time (bp[0]: four boxes a vector) */
  for (int call = 0; call < 30; ++call) {
    for (int i = 13; i < n; ++i) /* coherent motion */
      for (int k = 0; k < 3; ++k) {
        const double dx = uniform(&s, -0.01, 0.01);
        aabb[6 * i + k] += dx;
        aabb[6 * i + 3 + k] += dx;
      }
    const int max = call == 29 ? 50 : cap;
    int np[3];
    long tests[3];
    grit_status st[3];
    for (int r = 0; r < 3; ++r)
      st[r] = grit_broadphase_pairs(bp[r], aabb, call % 2 ? skip_some : NULL, NULL, pp[r], max, &np[r], &tests[r]);
    cr_assert(st[0] == st[1] && st[2] == st[1], "call %d", call);
    cr_assert(np[2] == np[1] && tests[2] == tests[1] && !memcmp(pp[2], pp[1], sizeof(int) * 2 * (size_t)np[1]),
              "call %d: the scalar packed sweep differs", call);
    cr_assert_eq(np[0], np[1], "call %d: %d pairs packed, %d unpacked", call, np[0], np[1]);
    cr_assert_eq(tests[0], tests[1], "call %d", call);
    cr_assert(!memcmp(pp[0], pp[1], sizeof(int) * 2 * (size_t)np[0]), "call %d: other pairs or order", call);
    cr_assert(np[0] > (max == cap ? 100 : 49), "call %d: only %d pairs", call, np[0]);
  }
  grit_broadphase_free(bp[0]);
  grit_broadphase_free(bp[1]);
  grit_broadphase_free(bp[2]);
  free(pp[0]);
  free(pp[1]);
  free(pp[2]);
  free(aabb);
}

/* The classes' test in the sweep (grit_broadphase_set_classes) gives the pairs, in the same order, of a
 * filter that drops those pairs itself, with no more box tests: random boxes of random groups (few, so
 * many pairs share one) and bit masks, both sweeps, 20 moving calls each; with many kinds of masks (the
 * plain sweep with the classes' test) and with few, most pairs never matching (the kinds' sweep), and a
 * box of every kind unbounded (a plane's). */
typedef struct classes {
  unsigned type[300], affinity[300];
  int group[300];
} classes;

static int classes_filter(const void *ctx, int i, int j) {
  const classes *c = ctx;
  if (c->group[i] == c->group[j]) return 0;
  return (c->type[i] & c->affinity[j]) || (c->type[j] & c->affinity[i]);
}

static void random_classes(unsigned long long *s, int n, int few, classes *c) {
  for (int i = 0; i < n; ++i) {
    c->group[i] = (int)uniform(s, 0, 40);
    /* few: a soft body's particles (0, 1), which only others touch, and boxes (1, 1) and (2, 2) */
    c->type[i] = few ? (i % 10 == 0 ? 1u : i % 10 == 1 ? 2u : 0u) : 1u << (int)uniform(s, 0, 3);
    c->affinity[i] = few ? (i % 10 == 1 ? 2u : 1u) : i % 5 ? 1u << (int)uniform(s, 0, 3) : 0u;
  }
}

Test(broadphase, classes_in_the_sweep_are_the_filters_pairs) {
  unsigned long long s = 7;
  const int n = 300, cap = n * (n - 1) / 2;
  const double L[3] = {0.5, 0.5, 0.3};
  classes c;
  double *aabb = malloc(sizeof(double) * 6 * (size_t)n);
  int *pp[2] = {malloc(sizeof(int) * 2 * (size_t)cap), malloc(sizeof(int) * 2 * (size_t)cap)};
  for (int few = 0; few < 2; ++few)
    for (int mode = 0; mode < 3; ++mode) { /* the packed sweep, the packed sweep a pair at a time, unpacked */
      const int unpacked = mode == 2;
      random_classes(&s, n, few, &c);
      random_boxes(&s, n, L, 0.02, 0.08, aabb);
      for (int i = 0; i < 6; ++i) /* unbounded boxes of several kinds */
        for (int k = 0; k < 3; ++k) aabb[6 * (50 * i + 3) + k] = -INFINITY, aabb[6 * (50 * i + 3) + 3 + k] = INFINITY;
      grit_broadphase *bp[2];
      grit_broadphase_create(n, &bp[0]);
      grit_broadphase_create(n, &bp[1]);
      grit_broadphase_set_unpacked(bp[0], unpacked);
      grit_broadphase_set_unpacked(bp[1], unpacked);
      grit_broadphase_set_scalar(bp[1], mode == 1);
      grit_broadphase_set_classes(bp[1], c.type, c.affinity, c.group);
      long fewer = 0;
      for (int call = 0; call < 20; ++call) {
        for (int i = 0; i < n; ++i)
          for (int k = 0; k < 3; ++k) {
            const double dx = uniform(&s, -0.01, 0.01);
            aabb[6 * i + k] += dx;
            aabb[6 * i + 3 + k] += dx;
          }
        const int max = call == 19 ? 40 : cap;
        int np[2];
        long tests[2];
        grit_status st[2];
        for (int r = 0; r < 2; ++r) st[r] = grit_broadphase_pairs(bp[r], aabb, classes_filter, &c, pp[r], max, &np[r], &tests[r]);
        cr_assert_eq(st[0], st[1], "few %d mode %d call %d", few, mode, call);
        cr_assert_eq(np[0], np[1], "call %d: %d pairs by the filter, %d by the classes", call, np[0], np[1]);
        cr_assert(tests[1] <= tests[0], "call %d: more tests", call);
        fewer += tests[0] - tests[1];
        cr_assert(!memcmp(pp[0], pp[1], sizeof(int) * 2 * (size_t)np[0]), "few %d mode %d call %d: other pairs or order",
                  few, mode, call);
        cr_assert(np[0] > 39, "call %d: only %d pairs", call, np[0]);
      }
      cr_assert_eq(fewer > 0, few && !unpacked, "few %d mode %d: %ld tests fewer", few, mode, fewer);
      grit_broadphase_free(bp[0]);
      grit_broadphase_free(bp[1]);
    }
  free(pp[0]);
  free(pp[1]);
  free(aabb);
}

/* The pairs and their order are a function of the boxes alone, whatever order the last call left: a lattice
 * of 4 x 4 x 4 unit boxes 0.9 apart (every lower bound tied with fifteen others on each axis) after a call on
 * the same lattice with its indices reversed, against a fresh broad phase, packed and through the order
 * (a step is a function of its state: include/grit/data.h; a grid of particles after grit_data_reset). */
Test(broadphase, tied_boxes_same_pairs_whatever_the_last_call) {
  const int n = 64, cap = n * (n - 1) / 2;
  double *lattice = malloc(sizeof(double) * 6 * (size_t)n), *reversed = malloc(sizeof(double) * 6 * (size_t)n);
  int *p0 = malloc(sizeof(int) * 2 * (size_t)cap), *p1 = malloc(sizeof(int) * 2 * (size_t)cap);
  cr_assert(lattice && reversed && p0 && p1);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const int c = k == 0 ? i % 4 : k == 1 ? i / 4 % 4 : i / 16;
      lattice[6 * i + k] = reversed[6 * (n - 1 - i) + k] = 0.9 * c;
      lattice[6 * i + 3 + k] = reversed[6 * (n - 1 - i) + 3 + k] = 0.9 * c + 1.0;
    }
  for (int unpacked = 0; unpacked < 2; ++unpacked) {
    grit_broadphase *fresh, *warm;
    cr_assert_eq(grit_broadphase_create(n, &fresh), GRIT_OK);
    cr_assert_eq(grit_broadphase_create(n, &warm), GRIT_OK);
    grit_broadphase_set_unpacked(fresh, unpacked);
    grit_broadphase_set_unpacked(warm, unpacked);
    int n0 = 0, n1 = 0;
    cr_assert_eq(grit_broadphase_pairs(warm, reversed, NULL, NULL, p1, cap, &n1, NULL), GRIT_OK);
    cr_assert_eq(grit_broadphase_pairs(fresh, lattice, NULL, NULL, p0, cap, &n0, NULL), GRIT_OK);
    cr_assert_eq(grit_broadphase_pairs(warm, lattice, NULL, NULL, p1, cap, &n1, NULL), GRIT_OK);
    cr_assert(n0 > 100 && n0 == n1, "%d pairs fresh, %d after the reversed call", n0, n1);
    cr_assert(!memcmp(p0, p1, sizeof(int) * 2 * (size_t)n0), "unpacked %d: the pairs' order follows the last call", unpacked);
    grit_broadphase_free(fresh);
    grit_broadphase_free(warm);
  }
  free(lattice), free(reversed), free(p0), free(p1);
}

/* Two boxes (broadphase.c, pairs_two: a call without a tests count) give the packed sweep's pair, status
 * and kept order: random, touching, tied, unbounded and NaN bounds, with and without classes (kinds of
 * every mask, groups equal or not) and a filter, with room for the pair and without. */
Test(broadphase, two_boxes_same_pair_as_the_sweep) {
  unsigned long long s = 31;
  const double L[3] = {0.3, 0.3, 0.3};
  classes c;
  int hits = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    double aabb[12];
    random_boxes(&s, 2, L, 0.01, 0.15, aabb);
    const int kind = trial % 8;
    if (kind == 1) /* touching on one axis */
      aabb[6 + trial % 3] = aabb[3 + trial % 3];
    if (kind == 2) /* tied lower bounds on every axis */
      for (int k = 0; k < 3; ++k) aabb[6 + k] = aabb[k];
    if (kind == 3) /* a floor: unbounded but above */
      for (int k = 0; k < 3; ++k) aabb[k] = -INFINITY, aabb[3 + k] = k == 2 ? 0.1 : INFINITY;
    if (kind == 4) aabb[6 * (trial % 2) + trial % 6] = NAN;
    grit_broadphase *bp[2];
    grit_broadphase_create(2, &bp[0]);
    grit_broadphase_create(2, &bp[1]);
    const int with_classes = trial % 3 != 0;
    for (int i = 0; i < 2; ++i) {
      c.group[i] = trial % 5 == 0 ? 7 : i;
      c.type[i] = 1u << (int)uniform(&s, 0, 3);
      c.affinity[i] = 1u << (int)uniform(&s, 0, 3);
    }
    for (int r = 0; r < 2; ++r)
      if (with_classes) grit_broadphase_set_classes(bp[r], c.type, c.affinity, c.group);
    for (int call = 0; call < 3; ++call) { /* the order kept between calls (it decides which box's bounds a NaN
                                              test reads first): the boxes swapped, then the same again */
      if (call == 1)
        for (int k = 0; k < 6; ++k) {
          const double t = aabb[k];
          aabb[k] = aabb[6 + k], aabb[6 + k] = t;
        }
      int pairs[2][2] = {{-1, -1}, {-1, -1}}, np[2];
      long tests = 0;
      const int max = trial % 7 == 0 ? 0 : 1;
      grit_pair_filter f = trial % 4 == 0 ? skip_some : trial % 4 == 1 ? classes_filter : NULL;
      const grit_status s0 = grit_broadphase_pairs(bp[0], aabb, f, &c, pairs[0], max, &np[0], NULL);
      const grit_status s1 = grit_broadphase_pairs(bp[1], aabb, f, &c, pairs[1], max, &np[1], &tests);
      cr_assert_eq(s0, s1, "trial %d call %d: status", trial, call);
      cr_assert_eq(np[0], np[1], "trial %d call %d: %d pairs, the sweep %d", trial, call, np[0], np[1]);
      cr_assert(!memcmp(pairs[0], pairs[1], sizeof pairs[0]), "trial %d call %d: another pair", trial, call);
      hits += np[0];
    }
    grit_broadphase_free(bp[0]);
    grit_broadphase_free(bp[1]);
  }
  cr_assert(hits > 500, "only %d pairs found", hits);
}
