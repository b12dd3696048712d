/* SPDX-License-Identifier: Apache-2.0 */
/* test_plane_convex.c — a convex hull on a plane (collision_narrow.c's plane_convex) against the scan it
 * had before stop 30: every vertex transformed again in each of the 3 rounds choosing the 4 spread
 * points. The first pass now keeps up to 512 candidates (64 at first, 256 in stop 30) and the rounds scan
 * those alone (a resting wheel's hull: thousands of vertices, tens below the margin), with their kept
 * heights and least distances, ties to the lowest index (stop 31); above that the rounds scan every vertex
 * as before. Same transform, same heights: the same points to the bit, in the same order. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision_test_util.h"
#include "hull_graph.h"

enum { RING = 150, NV = 2 * RING };

/* A wheel: two rings of RING points (radius r, half-width w), bulged at mid-width so the tread is round. */
static void wheel(double v[NV][3], double r, double w) {
  for (int i = 0; i < RING; ++i) {
    const double t = 2.0 * 3.14159265358979323846 * i / RING;
    for (int k = 0; k < 2; ++k) {
      v[2 * i + k][0] = r * cos(t);
      v[2 * i + k][1] = k ? w : -w;
      v[2 * i + k][2] = r * sin(t);
    }
  }
}

/* The pre-stop-30 plane_convex, written out: the points it emits (world, in vertex order). */
static int reference(const grit_shape *s, const ct_pose *P, const ct_pose *B, double margin, double out[4][3]) {
  double z[3] = {P->R[2], P->R[5], P->R[8]}, phimin = INFINITY;
  int count = 0, first = -1;
#define HEIGHT(x) (grit_v3_sub(d, (x), P->p), grit_v3_dot(z, d))
  for (int i = 0; i < s->nvert; ++i) {
    double x[3], d[3];
    grit_tf_apply(x, B->p, B->R, s->vertices + 3 * i);
    const double phi = HEIGHT(x);
    if (phi < margin) count++;
    if (phi < phimin) phimin = phi, first = i;
  }
  int chosen[4] = {-1, -1, -1, -1}, nch = 0, n = 0;
  if (count > 4) {
    chosen[nch++] = first;
    while (nch < 4) {
      int best = -1;
      double best_score = -INFINITY;
      for (int i = 0; i < s->nvert; ++i) {
        double x[3], d[3], score = INFINITY;
        grit_tf_apply(x, B->p, B->R, s->vertices + 3 * i);
        const double phi = HEIGHT(x);
        int taken = 0;
        for (int j = 0; j < nch; ++j) taken |= chosen[j] == i;
        if (taken || !(phi < margin)) continue;
        for (int j = 0; j < nch; ++j) {
          double y[3], e[3];
          grit_tf_apply(y, B->p, B->R, s->vertices + 3 * chosen[j]);
          grit_v3_sub(e, x, y);
          grit_v3_addscl(e, e, z, -grit_v3_dot(e, z));
          score = fmin(score, grit_v3_norm(e));
        }
        score -= phi - phimin;
        if (score > best_score) best_score = score, best = i;
      }
      chosen[nch++] = best;
    }
  }
  for (int i = 0; i < s->nvert; ++i) {
    int take = count <= 4;
    for (int j = 0; j < nch; ++j) take |= chosen[j] == i;
    double x[3], d[3];
    grit_tf_apply(x, B->p, B->R, s->vertices + 3 * i);
    if (take && HEIGHT(x) < margin) memcpy(out[n++], x, sizeof x);
  }
#undef HEIGHT
  return n;
}

/* B moved along P's plane normal z so that its lowest of the n points v lies at a random height in
 * [-0.01, 0.002] m from the plane. */
static void rest_near_plane(const ct_pose *P, ct_pose *B, double (*v)[3], int n, unsigned long long *seed) {
  double z[3] = {P->R[2], P->R[5], P->R[8]}, lo = INFINITY, d[3], x[3];
  for (int i = 0; i < n; ++i) {
    grit_tf_apply(x, B->p, B->R, v[i]);
    grit_v3_sub(d, x, P->p);
    lo = fmin(lo, grit_v3_dot(z, d));
  }
  grit_v3_addscl(B->p, B->p, z, -lo + ct_uniform(seed, -0.01, 0.002));
}

/* grit_collide (plane first) against the reference: the same number of points, the same bits. Returns
 * how many vertices were below the margin (which branch ran). */
static int same_as_reference(const grit_shape *pl, const ct_pose *P, const grit_shape *cv, const ct_pose *B,
                             double margin) {
  grit_contact_point c[GRIT_COLLIDE_MAX_POINTS];
  double want[4][3];
  int n = -1, below = 0;
  cr_assert_eq(grit_collide(pl, P->p, P->R, cv, B->p, B->R, margin, c, GRIT_COLLIDE_MAX_POINTS, &n), GRIT_OK);
  const int m = reference(cv, P, B, margin, want);
  cr_assert_eq(n, m, "%d points, the reference %d", n, m);
  for (int i = 0; i < n; ++i)
    cr_assert(!memcmp(c[i].pb, want[i], sizeof want[i]),
              "point %d: (%.17g %.17g %.17g), the reference (%.17g %.17g %.17g)", i, c[i].pb[0], c[i].pb[1],
              c[i].pb[2], want[i][0], want[i][1], want[i][2]);
  for (int i = 0; i < cv->nvert; ++i) {
    double x[3], d[3], z[3] = {P->R[2], P->R[5], P->R[8]};
    grit_tf_apply(x, B->p, B->R, cv->vertices + 3 * i);
    grit_v3_sub(d, x, P->p);
    below += grit_v3_dot(z, d) < margin;
  }
  return below;
}

Test(plane_convex, kept_candidates_choose_the_same_points_as_the_full_scan) {
  static double v[NV][3];
  wheel(v, 0.1, 0.03);
  const grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), cv = grit_shape_convex(&v[0][0], NV);
  const double ax[3] = {1, 0, 0}, az[3] = {0, 0, 1};
  int seen_few = 0, seen_kept = 0, seen_many = 0;
  /* rolling on its tread (a few to tens of vertices below the margin), lying on its side (all 150 of a
   * ring: the full scan), and tilted and sunk at random */
  for (int k = 0; k < 40; ++k) {
    const double depth = 1e-4 * k;
    ct_pose P = ct_rotated(ct_identity_at(0.01 * k, 0, 0), az, 0.1 * k);
    ct_pose B = ct_rotated(ct_identity_at(0.3, -0.2, 0.1 - depth), ax, 0.013 * k);
    const int below = same_as_reference(&pl, &P, &cv, &B, 1e-3);
    seen_few += below > 0 && below <= 4, seen_kept += below > 4 && below <= 64, seen_many += below > 64;
    ct_pose S = ct_rotated(ct_identity_at(0, 0, 0.03 - depth), ax, 1.5707963267948966 + 1e-3 * k);
    const int side = same_as_reference(&pl, &P, &cv, &S, 1e-3);
    seen_few += side > 0 && side <= 4, seen_kept += side > 4 && side <= 64, seen_many += side > 64;
  }
  unsigned long long seed = 7;
  for (int k = 0; k < 200; ++k) {
    ct_pose P = ct_random_pose(&seed, 0.5), B = ct_random_pose(&seed, 0.5);
    rest_near_plane(&P, &B, v, NV, &seed);
    const int below = same_as_reference(&pl, &P, &cv, &B, 1e-3);
    seen_few += below > 0 && below <= 4, seen_kept += below > 4 && below <= 64, seen_many += below > 64;
  }
  cr_expect_gt(seen_few, 0, "no pose with 1-4 vertices below the margin");
  cr_expect_gt(seen_kept, 0, "no pose with 5-64 vertices below the margin (the kept candidates)");
  cr_expect_gt(seen_many, 0, "no pose with more than 64 below the margin (the full scan)");
  cr_log_info("poses by vertices below the margin: 1-4 %d, 5-64 %d, >64 %d", seen_few, seen_kept, seen_many);
}

/* The candidates by the hull graph (stop 30, wheel6: the climb to the deepest vertex, then a search over
 * edges through the vertices near the margin) against the full scan, to the bit: a wheel, a sphere-like
 * cloud, a flat disc, and a cloud with points inside (its graph drops them: the scan runs), each with a
 * graph, at random poses with the lowest point near the plane, rolling, and lying on the side. */
enum { NS = 400 };

static int cloud(int kind, double v[NS][3]) {
  if (kind == 0) {
    static double w[NV][3];
    wheel(w, 0.1, 0.03);
    memcpy(v, w, sizeof w);
    return NV;
  }
  const double ga = 2.399963229728653; /* the golden angle: a Fibonacci sphere */
  for (int i = 0; i < NS; ++i) {
    const double zz = 1.0 - (2.0 * i + 1.0) / NS, r = sqrt(1.0 - zz * zz), t = ga * i;
    v[i][0] = 0.2 * r * cos(t), v[i][1] = 0.2 * r * sin(t), v[i][2] = 0.2 * zz;
    if (kind == 2) v[i][2] = i % 2 ? 0.005 : -0.005, v[i][0] = 0.2 * cos(t), v[i][1] = 0.2 * sin(t); /* disc */
    if (kind == 3 && i % 10 == 0) grit_v3_scale(v[i], v[i], 0.5); /* inside */
  }
  return NS;
}

Test(plane_convex, graph_candidates_are_the_scans) {
  static double v[NS][3];
  const grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  const double ax[3] = {1, 0, 0}, az[3] = {0, 0, 1};
  unsigned long long seed = 29;
  int seen_few = 0, seen_kept = 0, seen_many = 0;
  for (int kind = 0; kind < 4; ++kind) {
    const int n = cloud(kind, v);
    grit_shape cv = grit_shape_convex(&v[0][0], n);
    int *buf = calloc(grit_hull_graph_ints(n) + 1, sizeof(int));
    cr_assert_not_null(buf);
    cr_assert(grit_hull_graph_build(&cv, buf), "kind %d: no graph", kind);
    cv.graph = buf;
    for (int k = 0; k < 40; ++k) { /* rolling, and on its side */
      const double depth = 1e-4 * k;
      ct_pose P = ct_rotated(ct_identity_at(0.01 * k, 0, 0), az, 0.1 * k);
      ct_pose B = ct_rotated(ct_identity_at(0.3, -0.2, 0.1 - depth), ax, 0.013 * k);
      const int below = same_as_reference(&pl, &P, &cv, &B, 1e-3);
      seen_few += below > 0 && below <= 4, seen_kept += below > 4 && below <= 64, seen_many += below > 64;
      ct_pose S = ct_rotated(ct_identity_at(0, 0, 0.03 - depth), ax, 1.5707963267948966 + 1e-3 * k);
      same_as_reference(&pl, &P, &cv, &S, 1e-3);
    }
    for (int k = 0; k < 300; ++k) {
      ct_pose P = ct_random_pose(&seed, 0.5), B = ct_random_pose(&seed, 0.5);
      const double margin = k % 3 ? 1e-3 : 1e-2;
      rest_near_plane(&P, &B, v, n, &seed);
      const int below = same_as_reference(&pl, &P, &cv, &B, margin);
      seen_few += below > 0 && below <= 4, seen_kept += below > 4 && below <= 64, seen_many += below > 64;
    }
    free(buf);
  }
  cr_expect_gt(seen_few, 0);
  cr_expect_gt(seen_kept, 0);
  cr_expect_gt(seen_many, 0);
  cr_log_info("graph poses by vertices below the margin: 1-4 %d, 5-64 %d, >64 %d", seen_few, seen_kept, seen_many);
}

/* Flat soles (stop 31): a G x G grid of coplanar vertices under a dome of D points, lying on its grid,
 * exactly level (every grid height the same bits: ties in the deepest vertex and in the scores, which go
 * to the lowest index as in the scan), tilted by 1e-9 to 1e-3 rad (near ties), and at random near the
 * plane. G = 6 and 10 with a dome of 300 (the graph path, whose candidates come in the search's order, and
 * the scan where the grid is over a quarter of the hull), G = 16 (256 coplanar: the kept rounds), G = 24 (576, more
 * than the 512 kept: the rounds over every vertex); with and without the hull graph where it builds; in
 * their own vertex order and shuffled. */
enum { SOLE_MAX = 24 * 24 + 300 };

static int sole(int g, int dome, double v[SOLE_MAX][3]) {
  int n = 0;
  const double ga = 2.399963229728653;
  for (int i = 0; i < dome; ++i) { /* the upper half of a Fibonacci sphere, flattened, over the grid */
    const double zz = (i + 0.5) / dome, r = sqrt(1.0 - zz * zz), t = ga * i;
    v[n][0] = 0.06 * r * cos(t), v[n][1] = 0.035 * r * sin(t), v[n++][2] = -0.02 + 0.03 * zz + 5e-3;
  }
  for (int i0 = 0; i0 < g; ++i0) /* after the dome, from the middle: the graph's search meets the level */
    for (int j0 = 0; j0 < g; ++j0) { /* grid's lowest index late (it is inside the face: a loose vertex) */
      const int i = (i0 + g / 2) % g, j = (j0 + g / 2) % g;
      v[n][0] = 0.1 * (i - 0.5 * (g - 1)) / g, v[n][1] = 0.05 * (j - 0.5 * (g - 1)) / g, v[n++][2] = -0.02;
    }
  return n;
}

Test(plane_convex, flat_soles_choose_the_scans_points) {
  static double v[SOLE_MAX][3];
  const grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
  const int cases[4][2] = {{6, 300}, {10, 300}, {16, 40}, {24, 40}};
  unsigned long long seed = 31;
  int level_many = 0, graphs = 0;
  for (int cs = 0; cs < 8; ++cs) {
    const int n = sole(cases[cs % 4][0], cases[cs % 4][1], v);
    for (int i = n - 1; cs >= 4 && i > 0; --i) { /* the second time shuffled: ties meet the search's order */
      const int j = (int)ct_uniform(&seed, 0.0, i + 1.0 - 1e-9);
      double t[3];
      memcpy(t, v[i], sizeof t), memcpy(v[i], v[j], sizeof t), memcpy(v[j], t, sizeof t);
    }
    grit_shape cv = grit_shape_convex(&v[0][0], n);
    int *buf = calloc(grit_hull_graph_ints(n) + 1, sizeof(int));
    cr_assert_not_null(buf);
    for (int with_graph = 0; with_graph < 2; ++with_graph) {
      if (with_graph) {
        if (!grit_hull_graph_build(&cv, buf)) break; /* near-coplanar points can defeat the hull */
        cv.graph = buf, graphs++;
      }
      for (int k = 0; k < 60; ++k) {
        const double margin = k % 2 ? 1e-3 : 1e-2;
        ct_pose P = ct_rotated(ct_identity_at(0.01 * k, -0.02 * k, 0.003 * k), az, 0.37 * k);
        ct_pose B = ct_rotated(ct_identity_at(0.2, 0.1 * k, 0.003 * k + 0.02 - 2e-4 * (k % 7)), az, 0.11 * k);
        const int below = same_as_reference(&pl, &P, &cv, &B, margin); /* level: exact ties */
        level_many += below >= cases[cs % 4][0] * cases[cs % 4][0];
        const double tilt = pow(10.0, -9.0 + 6.0 * (k % 7) / 6.0);
        ct_pose T = ct_rotated(ct_rotated(B, ax, k % 3 ? tilt : -tilt), ay, k % 5 ? 0.5 * tilt : 0.0);
        same_as_reference(&pl, &P, &cv, &T, margin);
        ct_pose R = ct_random_pose(&seed, 0.5), Q = ct_random_pose(&seed, 0.5);
        rest_near_plane(&R, &Q, v, n, &seed);
        same_as_reference(&pl, &R, &cv, &Q, margin);
      }
    }
    free(buf);
  }
  cr_expect_gt(level_many, 0, "no level pose with the whole grid below the margin");
  cr_log_info("flat soles: %d level poses with the grid below, %d graphs built", level_many, graphs);
}
