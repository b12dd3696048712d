/* SPDX-License-Identifier: Apache-2.0 */
/* test_hull_exact.c — the convex hull by exact orientation tests (hull_exact.c) and the hull graph built
 * from it (hull_graph.c's fallback where the tolerant hull breaks down on near-coplanar points):
 * the orientation's sign against 128-bit integer arithmetic on exactly coplanar and one-unit-off points;
 * the hull of near-coplanar point sets (wheels whose flat sides bulge by 1e-12 to 1e-9, a box whose faces
 * bulge, flat sides with points on them) a closed, consistently oriented triangulated sphere with every
 * point on or below every face's plane, exactly; the supports climbed on its graph the scan's vertex from
 * every start, and a plane's contact candidates found on the graph the scan's, to the bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision_test_util.h"
#include "hull_exact.h"
#include "hull_graph.h"
#include "hydro.h"

/* The sign of the determinant in 128-bit integers (coordinates integers below 2^40 in magnitude). */
__extension__ typedef __int128 i128; /* (GCC and clang) */

static int orient_int(const long long *a, const long long *b, const long long *c, const long long *q) {
  i128 u[3], w[3], x[3];
  for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], w[k] = c[k] - a[k], x[k] = q[k] - a[k];
  const i128 d = x[0] * (u[1] * w[2] - u[2] * w[1]) + x[1] * (u[2] * w[0] - u[0] * w[2]) +
                     x[2] * (u[0] * w[1] - u[1] * w[0]);
  return (d > 0) - (d < 0);
}

static long long rand_int(unsigned long long *s, long long m) { return (long long)ct_uniform(s, (double)-m, (double)m); }

Test(hull_exact, orientation_is_the_integer_determinants_sign) {
  unsigned long long s = 5;
  const double scale = ldexp(1.0, -36); /* a power of two: the same signs, coordinates of order 1 */
  int zero = 0, filtered_out = 0;
  for (int t = 0; t < 20000; ++t) {
    long long a[3], b[3], c[3], q[3];
    const long long m = t % 2 ? 1ll << 36 : 1000;
    for (int k = 0; k < 3; ++k) a[k] = rand_int(&s, m), b[k] = rand_int(&s, m), c[k] = rand_int(&s, m);
    const long long i = rand_int(&s, 3), j = rand_int(&s, 3); /* q on the plane, then moved by a unit or not */
    for (int k = 0; k < 3; ++k) q[k] = a[k] + i * (b[k] - a[k]) + j * (c[k] - a[k]) + (t % 3 ? rand_int(&s, 2) : 0);
    double A[3], B[3], C[3], Q[3];
    for (int k = 0; k < 3; ++k) A[k] = a[k] * scale, B[k] = b[k] * scale, C[k] = c[k] * scale, Q[k] = q[k] * scale;
    const int want = orient_int(a, b, c, q);
    cr_assert_eq(grit_hull_orient(A, B, C, Q), want, "case %d", t);
    cr_assert_eq(grit_hull_orient(B, C, A, Q), want, "case %d (rotated)", t);
    cr_assert_eq(grit_hull_orient(B, A, C, Q), -want, "case %d (swapped)", t);
    const double u[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]}, w[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
    const double x[3] = {Q[0] - A[0], Q[1] - A[1], Q[2] - A[2]};
    const double d = x[0] * (u[1] * w[2] - u[2] * w[1]) + x[1] * (u[2] * w[0] - u[0] * w[2]) + x[2] * (u[0] * w[1] - u[1] * w[0]);
    zero += want == 0, filtered_out += (d > 0) - (d < 0) != want; /* where floating point alone is wrong */
  }
  cr_assert_gt(zero, 1000);
  cr_assert_gt(filtered_out, 100, "%d cases where the floating-point sign is wrong", filtered_out);
}

/* Point sets on which the tolerant hull breaks down or nearly: a wheel (rings of m points on its two
 * flat sides, radius 0.1, half-width 0.04) whose sides bulge out by amp at the centre (0: flat, the inner
 * rings lying on the side planes); a box's faces as grids bulging by amp. */
static int wheel(double *v, int m, int rings, double amp) {
  int n = 0;
  for (int side = 0; side < 2; ++side)
    for (int r = 1; r <= rings; ++r)
      for (int i = 0; i < m; ++i, ++n) {
        const double a = 6.283185307179586 * (i + 0.5 * r) / m, rad = 0.1 * r / rings, f = rad / 0.1;
        v[3 * n] = rad * cos(a), v[3 * n + 2] = rad * sin(a);
        v[3 * n + 1] = (side ? 1.0 : -1.0) * (0.04 + amp * (1.0 - f * f));
      }
  return n;
}

static int bulged_box(double *v, int k, double amp) {
  int n = 0;
  for (int ax = 0; ax < 3; ++ax)
    for (int sg = -1; sg <= 1; sg += 2)
      for (int i = 1; i < k; ++i)
        for (int j = 1; j < k; ++j, ++n) {
          const double s = -1.0 + 2.0 * i / k, t = -1.0 + 2.0 * j / k;
          v[3 * n + ax] = sg * (0.05 + amp * (2.0 - s * s - t * t));
          v[3 * n + (ax + 1) % 3] = 0.05 * s, v[3 * n + (ax + 2) % 3] = 0.05 * t;
        }
  return n;
}

enum { NMAX = 800, NCASES = 9 };

static int make_case(int c, double *v) {
  static const double amp[] = {0.0, 1e-12, 1e-11, 1e-10, 1e-9};
  if (c < 5) return wheel(v, c % 2 ? 64 : 48, c < 3 ? 6 : 4, amp[c]);
  return bulged_box(v, c == 5 ? 9 : 8, c == 5 ? 0.0 : amp[c - 4]);
}

static int cmp_edge(const void *a, const void *b) {
  const long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

/* The triangles form a closed, consistently oriented surface of Euler characteristic 2 (every directed
 * edge once, its reverse once), none flat, and no point lies above any face's plane (exactly). */
static void check_hull(const double *v, int n, const int *tri, int nt, int c) {
  long long *e = malloc(sizeof *e * 3 * (size_t)nt);
  int *used = calloc((size_t)n, sizeof(int)), nv = 0;
  cr_assert(e && used);
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) e[3 * t + k] = (long long)tri[3 * t + k] * n + tri[3 * t + (k + 1) % 3], used[tri[3 * t + k]] = 1;
  qsort(e, 3 * (size_t)nt, sizeof *e, cmp_edge);
  for (int i = 0; i < 3 * nt; ++i) {
    cr_assert(i == 0 || e[i] != e[i - 1], "case %d: a directed edge twice", c);
    const long long r = e[i] % n * n + e[i] / n;
    cr_assert_not_null(bsearch(&r, e, 3 * (size_t)nt, sizeof *e, cmp_edge), "case %d: an edge without its reverse", c);
  }
  for (int i = 0; i < n; ++i) nv += used[i];
  cr_assert_eq(nv - 3 * nt / 2 + nt, 2, "case %d: Euler characteristic", c);
  for (int t = 0; t < nt; ++t) {
    const double *a = v + 3 * tri[3 * t], *b = v + 3 * tri[3 * t + 1], *cc = v + 3 * tri[3 * t + 2];
    int below = 0;
    for (int i = 0; i < n; ++i) {
      const int o = grit_hull_orient(a, b, cc, v + 3 * i);
      cr_assert(o <= 0, "case %d: point %d above face %d", c, i, t);
      below |= o < 0;
    }
    cr_assert(below, "case %d: face %d flat", c, t);
  }
  free(e), free(used);
}

Test(hull_exact, near_coplanar_hulls_are_closed_convex_surfaces) {
  static double v[3 * NMAX];
  static int tri[6 * NMAX];
  int broke = 0;
  for (int c = 0; c < NCASES; ++c) {
    const int n = make_case(c, v), nt = grit_hull_exact(v, n, tri, 2 * n);
    cr_assert_gt(nt, 0, "case %d: no hull", c);
    check_hull(v, n, tri, nt, c);
    if (c != 0 && c != 5) cr_assert_eq(nt, 2 * n - 4, "case %d: every point of a strictly convex set a vertex", c);
    broke += grit_hydro_hull(v, n, tri, 2 * n) == 0;
  }
  cr_assert_gt(broke, 3, "the tolerant hull broke down on %d cases only", broke);
}

/* The support on the exact hull's graph from every start against the scan, on the axes, the face normals
 * of the hull both ways, the vertices' directions and random ones. */
static void check_supports(const grit_shape *s, const double *v, int n, unsigned long long *seed) {
  static int tri[6 * NMAX];
  const int nt = grit_hull_exact(v, n, tri, 2 * n);
  for (int t = 0; t < 6 + 2 * nt + 2 * n; ++t) {
    double d[3];
    if (t < 6)
      for (int k = 0; k < 3; ++k) d[k] = k == t / 2 ? (t % 2 ? -1.0 : 1.0) : 0.0;
    else if (t < 6 + 2 * nt) {
      const int f = (t - 6) / 2;
      const double *a = v + 3 * tri[3 * f], *b = v + 3 * tri[3 * f + 1], *c = v + 3 * tri[3 * f + 2];
      const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
      const double sg = t % 2 ? -1.0 : 1.0;
      d[0] = sg * (u[1] * w[2] - u[2] * w[1]), d[1] = sg * (u[2] * w[0] - u[0] * w[2]), d[2] = sg * (u[0] * w[1] - u[1] * w[0]);
    } else if (t % 2)
      memcpy(d, v + 3 * ((t - 6 - 2 * nt) / 2), sizeof d);
    else
      for (int k = 0; k < 3; ++k) d[k] = ct_uniform(seed, -1, 1);
    const int ref = grit_convex_scan(s, d), cl = grit_hull_climb_lanes(s, d, 0);
    if (__builtin_cpu_supports("avx2")) /* the climb's vector rounds: the same vertex */
      cr_assert_eq(grit_hull_climb_lanes(s, d, 1), cl, "n = %d direction %d: vector climb", n, t);
    const double tol = 1e-9 * grit_hull_graph_radius(s->graph) * (fabs(d[0]) + fabs(d[1]) + fabs(d[2]));
    cr_assert(grit_v3_dot(d, v + 3 * cl) >= grit_v3_dot(d, v + 3 * ref) - tol, "n = %d direction %d: climb", n, t);
    for (int st = -1; st < n; st += t < 6 ? 1 : 97) {
      cr_assert_eq(grit_hull_support(s, d, st), ref, "n = %d direction %d start %d", n, t, st);
      const int tr = grit_hull_support_try(s, d, st), wide = grit_hull_support_wide(s, d, st);
      cr_assert(tr < 0 || tr == ref, "n = %d direction %d start %d: try %d", n, t, st, tr);
      cr_assert(wide < 0 || wide == ref, "n = %d direction %d start %d: wide %d", n, t, st, wide);
    }
  }
}

/* A plane's contact candidates against the shape with its graph and without (the scan), at random poses
 * with the lowest point near the plane: the same points, to the bit. */
static void check_plane(const grit_shape *cv, const double *v, int n, unsigned long long *seed) {
  const grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  grit_shape scan = *cv;
  scan.graph = NULL;
  for (int k = 0; k < 150; ++k) {
    ct_pose P = ct_random_pose(seed, 0.5), B = ct_random_pose(seed, 0.5);
    if (k % 5 == 0) /* lying on a side or a face: a flat plateau */
      for (int j = 0; j < 9; ++j) B.R[j] = P.R[j];
    double z[3] = {P.R[2], P.R[5], P.R[8]}, lo = INFINITY, x[3], d[3];
    for (int i = 0; i < n; ++i) {
      grit_tf_apply(x, B.p, B.R, v + 3 * i);
      grit_v3_sub(d, x, P.p);
      lo = fmin(lo, grit_v3_dot(z, d));
    }
    grit_v3_addscl(B.p, B.p, z, -lo + ct_uniform(seed, -0.01, 0.002));
    const double margin = k % 3 ? 1e-3 : 1e-2;
    grit_contact_point c1[GRIT_COLLIDE_MAX_POINTS], c2[GRIT_COLLIDE_MAX_POINTS];
    int n1 = -1, n2 = -2;
    cr_assert_eq(grit_collide(&pl, P.p, P.R, cv, B.p, B.R, margin, c1, GRIT_COLLIDE_MAX_POINTS, &n1), GRIT_OK);
    cr_assert_eq(grit_collide(&pl, P.p, P.R, &scan, B.p, B.R, margin, c2, GRIT_COLLIDE_MAX_POINTS, &n2), GRIT_OK);
    cr_assert_eq(n1, n2, "pose %d: %d points, the scan %d", k, n1, n2);
    for (int i = 0; i < n1; ++i)
      cr_assert(!memcmp(c1[i].pb, c2[i].pb, sizeof c1[i].pb) && !memcmp(c1[i].pa, c2[i].pa, sizeof c1[i].pa) &&
                    !memcmp(&c1[i].phi, &c2[i].phi, sizeof c1[i].phi) && !memcmp(c1[i].n, c2[i].n, sizeof c1[i].n),
                "pose %d point %d", k, i);
  }
}

Test(hull_exact, graphs_of_exact_hulls_give_the_scans_supports_and_candidates) {
  static double v[3 * NMAX];
  unsigned long long seed = 31;
  int from_default = 0;
  for (int c = 0; c < NCASES; ++c) {
    const int n = make_case(c, v);
    int *buf = calloc(grit_hull_graph_ints(n) + 1, sizeof(int)), *buf2 = calloc(grit_hull_graph_ints(n) + 1, sizeof(int));
    cr_assert(buf && buf2);
    grit_shape s = grit_shape_convex(v, n), s2 = s;
    cr_assert(grit_hull_graph_build_exact(&s, buf), "case %d (%d points): no graph", c, n);
    s.graph = buf;
    check_supports(&s, v, n, &seed);
    check_plane(&s, v, n, &seed);
    from_default += grit_hull_graph_build(&s2, buf2); /* the model's build: the tolerant hull, else this */
    free(buf), free(buf2);
  }
  cr_assert_eq(from_default, NCASES);
}
