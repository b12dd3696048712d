/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 199309L
/* bench_collision — the cost of one narrow-phase query per pair type and path.
 *
 * For each pair: 2000 random configurations (sizes 0.05..0.3 m, phi spread over about [-0.1, 0.4] m),
 * each queried by grit_collide with a 0.5 m margin; prints the mean time per query (median of 5 runs)
 * and, for pairs on the general path, the mean GJK iterations and the share of overlaps that needed EPA
 * and the polish. Then each convex shape (sizes 0.05..0.3 m) against a 201 x 201 bumpy height field of
 * 0.3 m cells (dm_control's quadruped terrain size), resting on it or up to 0.3 m above (5 runs, median). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#include "../tests/collision_test_util.h"
#include "collision_hfield.h"

enum { NCONF = 2000 };

/* Each convex shape against a height field, by grit_collide_hfield. */
static void bench_hfield(double v[14][3]) {
  enum { N = 201 };
  double *grid = malloc(sizeof(double) * 3 * N * N);
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) {
      double *p = grid + 3 * (r * N + c);
      p[0] = 30.0 * (2.0 * c / (N - 1) - 1.0), p[1] = 30.0 * (2.0 * r / (N - 1) - 1.0);
      p[2] = 0.1 * (1.0 + sin(3.0 * p[0]) * cos(2.0 * p[1]));
    }
  const grit_shape hf = grit_shape_hfield(grid, N, N, 30.0, 30.0, 0.1);
  static const char *names[] = {"", "sphere", "capsule", "box", "cylinder", "ellipsoid", "convex"};
  const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, o[3] = {0, 0, 0};
  for (int tb = GRIT_GEOM_SPHERE; tb <= GRIT_GEOM_CONVEX; ++tb) {
    unsigned long long s = 99 + (unsigned long long)tb;
    static grit_shape B[NCONF];
    static ct_pose PB[NCONF];
    int total = 0;
    for (int i = 0; i < NCONF; ++i) {
      B[i] = tb == GRIT_GEOM_CONVEX ? grit_shape_convex(&v[0][0], 14)
                                    : grit_shape_make(tb, ct_uniform(&s, 0.05, 0.3), ct_uniform(&s, 0.05, 0.3),
                                                      ct_uniform(&s, 0.05, 0.3));
      PB[i] = ct_random_pose(&s, 5.0);
      PB[i].p[2] = ct_uniform(&s, 0.0, 0.5);
    }
    double t[5], sink = 0.0;
    for (int r = 0; r < 5; ++r) {
      double t0 = 1e-6 * now_us();
      for (int i = 0; i < NCONF; ++i) {
        grit_contact_point c[GRIT_HFIELD_MAX_POINTS];
        int n;
        grit_collide_hfield(&hf, o, I, &B[i], PB[i].p, PB[i].R, 0.01, c, &n);
        if (n) sink += c[0].phi;
        if (r == 0) total += n;
      }
      t[r] = (1e-6 * now_us() - t0) / NCONF * 1e9;
    }
    qsort(t, 5, sizeof t[0], bench_cmp);
    char name[32];
    snprintf(name, sizeof name, "hfield-%s", names[tb]);
    printf("%-20s %10.0f %10s %10s %10s  %.2f contacts/query%s\n", name, t[2], "-", "-", "-", (double)total / NCONF,
           sink == 12345.0 ? " " : "");
  }
  free(grid);
}

int main(void) {
  static const char *names[] = {"plane", "sphere", "capsule", "box", "cylinder", "ellipsoid", "convex"};
  double v[14][3];
  const double h[3] = {0.2, 0.15, 0.1};
  ct_convex_vertices(v, h, 0.04);
  static grit_shape A[NCONF], B[NCONF];
  static ct_pose PA[NCONF], PB[NCONF];
  printf("%-20s %10s %10s %10s %10s\n", "pair", "ns/query", "gjk_iter", "epa_share", "polished");
  for (int ta = 0; ta < GRIT_GEOM_HFIELD; ++ta)
    for (int tb = ta; tb < GRIT_GEOM_HFIELD; ++tb) {
      if (ta == GRIT_GEOM_PLANE && tb == GRIT_GEOM_PLANE) continue;
      unsigned long long s = 1 + (unsigned long long)(7 * ta + tb);
      double iters = 0.0;
      int overlaps = 0, epa = 0, polished = 0;
      for (int i = 0; i < NCONF; ++i) {
        A[i] = ta == GRIT_GEOM_CONVEX ? grit_shape_convex(&v[0][0], 14)
                                      : grit_shape_make(ta, ct_uniform(&s, 0.05, 0.3), ct_uniform(&s, 0.05, 0.3),
                                                        ct_uniform(&s, 0.05, 0.3));
        B[i] = tb == GRIT_GEOM_CONVEX ? grit_shape_convex(&v[0][0], 14)
                                      : grit_shape_make(tb, ct_uniform(&s, 0.05, 0.3), ct_uniform(&s, 0.05, 0.3),
                                                        ct_uniform(&s, 0.05, 0.3));
        PA[i] = ct_random_pose(&s, 1.0);
        PB[i] = ct_random_pose(&s, 0.0);
        double d[3];
        for (int k = 0; k < 3; ++k) d[k] = ct_uniform(&s, -1, 1);
        grit_v3_normalize(d);
        if (ta == GRIT_GEOM_PLANE)
          for (int k = 0; k < 3; ++k) d[k] = PA[i].R[3 * k + 2] * ct_uniform(&s, 0.0, 0.6) + 0.3 * d[k];
        else
          grit_v3_scale(d, d, ct_uniform(&s, 0, grit_shape_bounding_radius(&A[i]) + grit_shape_bounding_radius(&B[i]) + 0.2));
        grit_v3_add(PB[i].p, PA[i].p, d);
        if (ta != GRIT_GEOM_PLANE) { /* statistics of the general path */
          grit_placed_shape a = {&A[i], PA[i].p, PA[i].R, NULL}, b = {&B[i], PB[i].p, PB[i].R, NULL};
          grit_gjk_info info;
          double phi, n[3], wa[3], wb[3];
          if (grit_gjk_epa(&a, &b, 0.5, &phi, n, wa, wb, &info)) {
            iters += info.gjk_iterations;
            overlaps += phi < 0.0;
            epa += info.epa_iterations > 0 || info.epa_converged;
            polished += info.polish_steps > 0;
          }
        }
      }
      double t[5], sink = 0.0;
      for (int r = 0; r < 5; ++r) {
        double t0 = 1e-6 * now_us();
        for (int i = 0; i < NCONF; ++i) {
          grit_contact_point c[GRIT_COLLIDE_MAX_POINTS];
          int n;
          grit_collide(&A[i], PA[i].p, PA[i].R, &B[i], PB[i].p, PB[i].R, 0.5, c, GRIT_COLLIDE_MAX_POINTS, &n);
          if (n) sink += c[0].phi;
        }
        t[r] = (1e-6 * now_us() - t0) / NCONF * 1e9;
      }
      qsort(t, 5, sizeof t[0], bench_cmp);
      char name[32];
      snprintf(name, sizeof name, "%s-%s", names[ta], names[tb]);
      if (ta == GRIT_GEOM_PLANE) printf("%-20s %10.0f %10s %10s %10s\n", name, t[2], "-", "-", "-");
      else
        printf("%-20s %10.0f %10.1f %9.0f%% %9.0f%%  %s\n", name, t[2], iters / NCONF, 100.0 * epa / (overlaps ? overlaps : 1),
               100.0 * polished / (overlaps ? overlaps : 1), sink == 12345.0 ? "" : "");
    }
  bench_hfield(v);
  return 0;
}
