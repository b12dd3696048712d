/* SPDX-License-Identifier: Apache-2.0 */
/* test_collision.c — the narrow phase: shapes, closed-form pairs against hand-made exact cases and
 * against the general GJK/EPA path, symmetry, margin and capacity rules. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "collision_test_util.h"
#include "geometry_internal.h"


/* Exact cases are built from short decimal numbers: results are exact up to a few ulps of the
 * coordinates (~1e-16 m at unit scale); 1e-13 leaves room for a dozen rounded operations. */
#define EXACT 1e-13
/* The types grit_collide takes: every one before the height field (test_hfield.c, collision_hfield.h). */
#define NARROW_TYPES GRIT_GEOM_HFIELD

static void expect_vec(const double *got, double x, double y, double z, double tol, const char *what) {
  cr_expect(fabs(got[0] - x) <= tol && fabs(got[1] - y) <= tol && fabs(got[2] - z) <= tol,
            "%s: got (%.17g, %.17g, %.17g), expected (%g, %g, %g)", what, got[0], got[1], got[2], x, y, z);
}

/* Checks the invariants of every candidate: unit n, pb - pa = phi n, locals consistent with the poses. */
static void check_invariants(const grit_contact_point *c, int n, const ct_pose *A, const ct_pose *B) {
  for (int i = 0; i < n; ++i) {
    double d[3], x[3];
    cr_assert(fabs(grit_v3_norm(c[i].n) - 1.0) <= 1e-14, "normal not unit");
    grit_v3_sub(d, c[i].pb, c[i].pa);
    grit_v3_addscl(d, d, c[i].n, -c[i].phi);
    cr_assert(grit_v3_norm(d) <= 1e-12, "pb - pa differs from phi n by %g", grit_v3_norm(d));
    /* a few rounded operations on coordinates of size |p| + |local| */
    grit_tf_apply(x, A->p, A->R, c[i].pa_local);
    cr_assert(ct_dist3(x, c[i].pa) <= 1e-14 * (1 + grit_v3_norm(A->p) + grit_v3_norm(c[i].pa_local)),
              "pa_local inconsistent");
    grit_tf_apply(x, B->p, B->R, c[i].pb_local);
    cr_assert(ct_dist3(x, c[i].pb) <= 1e-14 * (1 + grit_v3_norm(B->p) + grit_v3_norm(c[i].pb_local)),
              "pb_local inconsistent");
    grit_m3_mulv(x, A->R, c[i].n_local);
    cr_assert(ct_dist3(x, c[i].n) <= 1e-14, "n_local inconsistent");
  }
}

static int run(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B, double margin,
               grit_contact_point *c) {
  int n = -1;
  cr_assert_eq(grit_collide(a, A->p, A->R, b, B->p, B->R, margin, c, GRIT_COLLIDE_MAX_POINTS, &n), GRIT_OK);
  check_invariants(c, n, A, B);
  return n;
}

/* ------------------------------------------------------------------------------- shapes */

Test(collision, validation) {
  char msg[GRIT_MESSAGE_SIZE];
  double v[14][3], flat[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0.5, 0.2, 0}};
  const double h[3] = {0.3, 0.2, 0.1};
  ct_convex_vertices(v, h, 0.05);
  grit_shape ok[] = {grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0),      grit_shape_make(GRIT_GEOM_SPHERE, 1, 0, 0),
                     grit_shape_make(GRIT_GEOM_CAPSULE, 1, 2, 0),    grit_shape_make(GRIT_GEOM_BOX, 1, 2, 3),
                     grit_shape_make(GRIT_GEOM_CYLINDER, 1, 2, 0),   grit_shape_make(GRIT_GEOM_ELLIPSOID, 1, 2, 3),
                     grit_shape_convex(&v[0][0], 14)};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; ++i)
    cr_expect_eq(grit_shape_validate(&ok[i], msg), GRIT_OK, "shape %zu: %s", i, msg);
  grit_shape bad[] = {grit_shape_make(GRIT_GEOM_SPHERE, 0, 0, 0),       grit_shape_make(GRIT_GEOM_SPHERE, -1, 0, 0),
                      grit_shape_make(GRIT_GEOM_SPHERE, NAN, 0, 0),     grit_shape_make(GRIT_GEOM_CAPSULE, 1, 0, 0),
                      grit_shape_make(GRIT_GEOM_BOX, 1, 1, INFINITY),   grit_shape_make(GRIT_GEOM_CYLINDER, 0, 1, 0),
                      grit_shape_make(GRIT_GEOM_ELLIPSOID, 1, 1, 0),    grit_shape_make((grit_geom_type)99, 1, 1, 1),
                      grit_shape_convex(NULL, 8),                       grit_shape_convex(&v[0][0], 3),
                      grit_shape_convex(&flat[0][0], 5)};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    msg[0] = 0;
    cr_expect_eq(grit_shape_validate(&bad[i], msg), GRIT_ERR_INVALID_ARGUMENT, "bad shape %zu accepted", i);
    cr_expect(msg[0] != 0, "bad shape %zu: no message", i);
  }
  cr_expect_eq(grit_shape_validate(NULL, NULL), GRIT_ERR_INVALID_ARGUMENT);
}

/* A random point of the (solid) shape, from its explicit parametrization. */
static void sample_point(unsigned long long *s, const grit_shape *g, const double (*v)[3], double x[3]) {
  const double *z = g->size;
  double u[3], t;
  do {
    for (int k = 0; k < 3; ++k) u[k] = ct_uniform(s, -1, 1);
  } while (grit_v3_norm2(u) > 1.0);
  switch (g->type) {
  case GRIT_GEOM_SPHERE: grit_v3_scale(x, u, z[0]); return;
  case GRIT_GEOM_CAPSULE: grit_v3_scale(x, u, z[0]); x[2] += ct_uniform(s, -z[1], z[1]); return;
  case GRIT_GEOM_BOX: for (int k = 0; k < 3; ++k) x[k] = ct_uniform(s, -z[k], z[k]); return;
  case GRIT_GEOM_CYLINDER: t = hypot(u[0], u[1]); x[0] = z[0] * u[0] / fmax(t, 1e-300) * fmin(1, 1.2 * t);
    x[1] = z[0] * u[1] / fmax(t, 1e-300) * fmin(1, 1.2 * t); x[2] = ct_uniform(s, -z[1], z[1]); return;
  case GRIT_GEOM_ELLIPSOID: for (int k = 0; k < 3; ++k) x[k] = z[k] * u[k]; return;
  default: { int i = (int)ct_uniform(s, 0, 14) % 14; memcpy(x, v[i], sizeof(double) * 3); return; }
  }
}

/* The support point maximizes d.x over points sampled from the shape's parametrization (surface points
 * included: the extreme cases of the parametrizations), and the local box holds every sample. */
Test(collision, support_and_aabb) {
  unsigned long long s = 99;
  double v[14][3];
  const double h[3] = {0.3, 0.2, 0.1};
  ct_convex_vertices(v, h, 0.05);
  grit_shape shapes[] = {grit_shape_make(GRIT_GEOM_SPHERE, 0.3, 0, 0), grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.4, 0),
                         grit_shape_make(GRIT_GEOM_BOX, 0.3, 0.2, 0.1), grit_shape_make(GRIT_GEOM_CYLINDER, 0.2, 0.3, 0),
                         grit_shape_make(GRIT_GEOM_ELLIPSOID, 0.3, 0.2, 0.1), grit_shape_convex(&v[0][0], 14)};
  for (size_t g = 0; g < sizeof shapes / sizeof shapes[0]; ++g) {
    double lo[3], hi[3], wlo[3], whi[3];
    grit_shape_local_aabb(&shapes[g], lo, hi);
    ct_pose P = ct_random_pose(&s, 1.0);
    grit_shape_world_aabb(&shapes[g], P.p, P.R, 0.0, wlo, whi);
    const double rb = grit_shape_bounding_radius(&shapes[g]);
    for (int trial = 0; trial < 200; ++trial) {
      double d[3], sp[3], x[3], y[3];
      for (int k = 0; k < 3; ++k) d[k] = ct_uniform(&s, -1, 1);
      cr_assert_eq(grit_shape_support(&shapes[g], d, sp), GRIT_OK);
      const double hs = grit_v3_dot(d, sp);
      for (int j = 0; j < 50; ++j) {
        sample_point(&s, &shapes[g], (const double(*)[3])v, x);
        /* 1e-15: the sample and the support are both a few ulps from exact */
        cr_assert(grit_v3_dot(d, x) <= hs + 1e-15, "shape %zu: sample beyond the support", g);
        for (int k = 0; k < 3; ++k) cr_assert(x[k] >= lo[k] - 1e-15 && x[k] <= hi[k] + 1e-15, "outside local box");
        cr_assert(grit_v3_norm(x) <= rb + 1e-15, "outside bounding radius");
        grit_tf_apply(y, P.p, P.R, x);
        for (int k = 0; k < 3; ++k) cr_assert(y[k] >= wlo[k] - 1e-14 && y[k] <= whi[k] + 1e-14, "outside world box");
      }
    }
  }
  double d[3] = {0, 0, 1}, x[3];
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  cr_expect_eq(grit_shape_support(&pl, d, x), GRIT_ERR_INVALID_ARGUMENT);
}

/* The sequential scan the convex support had before its four lanes (stop 17): the first vertex of
 * greatest d.v. */
static const double *support_reference(const double *v, int n, const double d[3]) {
  int best = 0;
  double bv = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
  for (int i = 1; i < n; ++i) {
    const double h = d[0] * v[3 * i] + d[1] * v[3 * i + 1] + d[2] * v[3 * i + 2];
    if (h > bv) bv = h, best = i;
  }
  return v + 3 * best;
}

/* The convex support (four lanes) and world box (one pass) against the sequential scans, to the bit:
 * vertex counts 4..23 (every remainder of the lanes), repeated vertices (ties: the first one wins) and
 * directions along the axes (ties between vertices of a flat face). */
Test(collision, convex_support_and_box_same_bits_as_scans) {
  unsigned long long s = 7;
  double v[24][3];
  for (int n = 4; n <= 23; ++n) {
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) v[i][k] = i >= 6 && i % 5 == 0 ? v[i - 3][k] : 0.1 * (double)(int)ct_uniform(&s, -4, 4);
    const grit_shape c = grit_shape_convex(&v[0][0], n);
    for (int trial = 0; trial < 60; ++trial) {
      double d[3], x[3];
      for (int k = 0; k < 3; ++k) d[k] = trial < 6 ? (k == trial % 3) * (trial < 3 ? 1.0 : -1.0) : ct_uniform(&s, -1, 1);
      grit_shape_core_support(&c, d, x);
      cr_assert(memcmp(x, support_reference(&v[0][0], n, d), sizeof x) == 0, "n = %d: support differs", n);
      ct_pose P = ct_random_pose(&s, 1.0);
      if (trial % 2) /* an axis-aligned pose: ties in the box's scans */
        for (int k = 0; k < 9; ++k) P.R[k] = k % 4 == 0;
      double lo[3], hi[3];
      grit_shape_world_aabb(&c, P.p, P.R, 0.01, lo, hi);
      for (int k = 0; k < 3; ++k) {
        double e[3] = {P.R[3 * k], P.R[3 * k + 1], P.R[3 * k + 2]}, me[3] = {-e[0], -e[1], -e[2]};
        const double *a = support_reference(&v[0][0], n, e), *b = support_reference(&v[0][0], n, me);
        const double h = P.p[k] + e[0] * a[0] + e[1] * a[1] + e[2] * a[2] + 0.01;
        const double l = P.p[k] - (me[0] * b[0] + me[1] * b[1] + me[2] * b[2]) - 0.01;
        cr_assert(memcmp(&hi[k], &h, sizeof h) == 0 && memcmp(&lo[k], &l, sizeof l) == 0, "n = %d trial %d k %d: box differs: hi %.17g %.17g lo %.17g %.17g", n, trial, k, hi[k], h, lo[k], l);
      }
    }
  }
}

/* --------------------------------------------------------------------- exact analytic cases */

Test(collision, sphere_sphere_exact) {
  grit_shape a = grit_shape_make(GRIT_GEOM_SPHERE, 0.3, 0, 0), b = grit_shape_make(GRIT_GEOM_SPHERE, 0.2, 0, 0);
  unsigned long long s = 1;
  ct_pose A = ct_identity_at(1, 2, 3), B = ct_identity_at(1.6, 2, 3);
  ct_random_rotation(&s, A.R); /* rotations must not matter for spheres */
  ct_random_rotation(&s, B.R);
  grit_contact_point c[4];
  cr_assert_eq(run(&a, &A, &b, &B, 0.2, c), 1);
  cr_expect(fabs(c[0].phi - 0.1) <= EXACT);
  expect_vec(c[0].n, 1, 0, 0, EXACT, "n");
  expect_vec(c[0].pa, 1.3, 2, 3, EXACT, "pa");
  expect_vec(c[0].pb, 1.4, 2, 3, EXACT, "pb");
  B.p[0] = 1.4;
  cr_assert_eq(run(&a, &A, &b, &B, 0.2, c), 1);
  cr_expect(fabs(c[0].phi + 0.1) <= EXACT);
  expect_vec(c[0].pa, 1.3, 2, 3, EXACT, "pa");
  expect_vec(c[0].pb, 1.2, 2, 3, EXACT, "pb");
}

Test(collision, sphere_plane_exact) {
  const double ax[3] = {1, 0, 0};
  ct_pose P = ct_rotated(ct_identity_at(1, 2, 3), ax, 0.5236), S;
  double z[3] = {P.R[2], P.R[5], P.R[8]}, t[3] = {P.R[0], P.R[3], P.R[6]};
  S = ct_identity_at(0, 0, 0);
  for (int k = 0; k < 3; ++k) S.p[k] = P.p[k] + 0.5 * z[k] + 0.7 * t[k];
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), sp = grit_shape_make(GRIT_GEOM_SPHERE, 0.2, 0, 0);
  grit_contact_point c[4];
  cr_assert_eq(run(&pl, &P, &sp, &S, 0.5, c), 1);
  cr_expect(fabs(c[0].phi - 0.3) <= EXACT);
  expect_vec(c[0].n, z[0], z[1], z[2], EXACT, "n");
  expect_vec(c[0].pa_local, 0.7, 0, 0, EXACT, "pa_local"); /* on the plane, under the centre */
  cr_assert_eq(run(&pl, &P, &sp, &S, 0.3 - 1e-12, c), 0, "phi above the margin");
  cr_assert_eq(run(&pl, &P, &sp, &S, 0.3 + 1e-12, c), 1, "phi below the margin");
}

Test(collision, sphere_capsule_exact) {
  grit_shape sp = grit_shape_make(GRIT_GEOM_SPHERE, 0.2, 0, 0), ca = grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.5, 0);
  ct_pose C = ct_identity_at(0, 0, 0), S = ct_identity_at(0.4, 0, 0.2);
  grit_contact_point c[4];
  cr_assert_eq(run(&sp, &S, &ca, &C, 0.5, c), 1); /* beside the axis */
  cr_expect(fabs(c[0].phi - 0.1) <= EXACT);
  expect_vec(c[0].n, -1, 0, 0, EXACT, "n");
  expect_vec(c[0].pb, 0.1, 0, 0.2, EXACT, "pb");
  S = ct_identity_at(0, 0, 0.9); /* beyond the end cap */
  cr_assert_eq(run(&sp, &S, &ca, &C, 0.5, c), 1);
  cr_expect(fabs(c[0].phi - 0.1) <= EXACT);
  expect_vec(c[0].n, 0, 0, -1, EXACT, "n");
  expect_vec(c[0].pb, 0, 0, 0.6, EXACT, "pb");
}

Test(collision, capsule_capsule_exact) {
  const double ay[3] = {0, 1, 0};
  grit_shape a = grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.5, 0), b = grit_shape_make(GRIT_GEOM_CAPSULE, 0.15, 0.5, 0);
  ct_pose A = ct_identity_at(0, 0, 0), B = ct_rotated(ct_identity_at(0, 0.5, 0.1), ay, 1.5707963267948966);
  grit_contact_point c[4];
  cr_assert_eq(run(&a, &A, &b, &B, 0.5, c), 1); /* crossing at right angles */
  cr_expect(fabs(c[0].phi - 0.25) <= EXACT);
  expect_vec(c[0].n, 0, 1, 0, EXACT, "n");
  expect_vec(c[0].pa, 0, 0.1, 0.1, EXACT, "pa");
  B = ct_identity_at(0.3, 0, 0.4); /* parallel, overlapping in z on [-0.1, 0.5]: two points */
  cr_assert_eq(run(&a, &A, &b, &B, 0.5, c), 2);
  for (int i = 0; i < 2; ++i) {
    cr_expect(fabs(c[i].phi - 0.05) <= EXACT);
    expect_vec(c[i].n, 1, 0, 0, EXACT, "n");
  }
  expect_vec(c[0].pa, 0.1, 0, -0.1, EXACT, "pa[0]");
  expect_vec(c[1].pa, 0.1, 0, 0.5, EXACT, "pa[1]");
  B = ct_identity_at(0, 0, 1.3); /* collinear, end to end: one point */
  cr_assert_eq(run(&a, &A, &b, &B, 0.5, c), 1);
  cr_expect(fabs(c[0].phi - 0.05) <= EXACT);
  expect_vec(c[0].n, 0, 0, 1, EXACT, "n");
}

Test(collision, sphere_box_exact) {
  grit_shape sp = grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0), bx = grit_shape_make(GRIT_GEOM_BOX, 0.5, 0.3, 0.2);
  const double ax[3] = {0, 0, 1};
  ct_pose B = ct_rotated(ct_identity_at(0, 0, 0), ax, 0.0), S;
  grit_contact_point c[4];
  const struct {
    double x, y, z, phi;
  } cases[] = {{0.8, 0, 0, 0.2}, {0.8, 0.6, 0, sqrt(0.18) - 0.1}, {0.8, 0.6, 0.5, sqrt(0.27) - 0.1},
               {0.45, 0, 0.05, -0.15}, {0, 0.1, -0.15, -0.15}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    S = ct_identity_at(cases[i].x, cases[i].y, cases[i].z);
    cr_assert_eq(run(&sp, &S, &bx, &B, 1.0, c), 1);
    cr_expect(fabs(c[0].phi - cases[i].phi) <= EXACT, "case %zu: phi %.17g, expected %.17g", i, c[0].phi,
              cases[i].phi);
  }
  S = ct_identity_at(0.45, 0, 0.05); /* inside, nearest the +x face: normal from the sphere into the box */
  run(&sp, &S, &bx, &B, 1.0, c);
  expect_vec(c[0].n, -1, 0, 0, EXACT, "n");
  expect_vec(c[0].pb, 0.5, 0, 0.05, EXACT, "pb");
  expect_vec(c[0].pa, 0.35, 0, 0.05, EXACT, "pa");
}

Test(collision, box_plane_resting_and_edge) {
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), bx = grit_shape_make(GRIT_GEOM_BOX, 0.5, 0.3, 0.2);
  const double az[3] = {0, 0, 1}, ay[3] = {0, 1, 0};
  ct_pose P = ct_identity_at(0, 0, 0), B = ct_rotated(ct_identity_at(0.2, -0.1, 0.19), az, 0.7);
  grit_contact_point c[4];
  cr_assert_eq(run(&pl, &P, &bx, &B, 0.1, c), 4, "a resting box stands on its 4 bottom corners");
  for (int i = 0; i < 4; ++i) {
    cr_expect(fabs(c[i].phi + 0.01) <= EXACT);
    expect_vec(c[i].n, 0, 0, 1, 0.0, "n");
    cr_expect(fabs(c[i].pb_local[2] + 0.2) <= EXACT, "a bottom corner");
  }
  grit_shape cube = grit_shape_make(GRIT_GEOM_BOX, 0.2, 0.2, 0.2);
  B = ct_rotated(ct_identity_at(0, 0, 0.2 * sqrt(2.0) + 0.001), ay, 0.7853981633974483);
  cr_assert_eq(run(&pl, &P, &cube, &B, 0.1, c), 2, "a cube on its edge: the edge's 2 corners");
  for (int i = 0; i < 2; ++i) cr_expect(fabs(c[i].phi - 0.001) <= EXACT);
  grit_shape small = grit_shape_make(GRIT_GEOM_BOX, 0.02, 0.02, 0.02);
  B = ct_identity_at(0, 0, 0.03);
  cr_assert_eq(run(&pl, &P, &small, &B, 0.1, c), 4, "all 8 corners within the margin: the 4 deepest");
  for (int i = 0; i < 4; ++i) cr_expect(fabs(c[i].phi - 0.01) <= EXACT);
}

Test(collision, capsule_and_cylinder_on_plane) {
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), ca = grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.5, 0);
  const double ay[3] = {0, 1, 0}, ax[3] = {1, 0, 0};
  ct_pose P = ct_identity_at(0, 0, 0), C = ct_rotated(ct_identity_at(0, 0, 0.105), ay, 1.5707963267948966);
  grit_contact_point c[4];
  cr_assert_eq(run(&pl, &P, &ca, &C, 0.1, c), 2, "a capsule lying on a plane rests on 2 points");
  for (int i = 0; i < 2; ++i) {
    cr_expect(fabs(c[i].phi - 0.005) <= EXACT);
    cr_expect(fabs(fabs(c[i].pb[0]) - 0.5) <= EXACT, "under an end of the axis");
  }
  C = ct_identity_at(0, 0, 0.6 - 0.002); /* upright: only the lower end */
  cr_assert_eq(run(&pl, &P, &ca, &C, 0.1, c), 1);
  cr_expect(fabs(c[0].phi + 0.002) <= EXACT);
  grit_shape cy = grit_shape_make(GRIT_GEOM_CYLINDER, 0.1, 0.2, 0);
  C = ct_identity_at(0.3, 0.1, 0.2 - 0.003); /* upright: a triangle of rim points on the bottom */
  cr_assert_eq(run(&pl, &P, &cy, &C, 0.1, c), 3);
  for (int i = 0; i < 3; ++i) {
    cr_expect(fabs(c[i].phi + 0.003) <= EXACT);
    cr_expect(fabs(hypot(c[i].pb_local[0], c[i].pb_local[1]) - 0.1) <= EXACT, "on the rim");
  }
  const double th = 0.3; /* tilted: the deepest rim point is h cos(th) + r sin(th) below the centre */
  C = ct_rotated(ct_identity_at(0, 0, 0.25), ax, th);
  int n = run(&pl, &P, &cy, &C, 0.1, c);
  cr_assert(n >= 1);
  cr_expect(fabs(c[ct_deepest(c, n)].phi - (0.25 - 0.2 * cos(th) - 0.1 * sin(th))) <= EXACT);
}

Test(collision, ellipsoid_and_convex_on_plane) {
  unsigned long long s = 5;
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), el = grit_shape_make(GRIT_GEOM_ELLIPSOID, 0.3, 0.2, 0.1);
  ct_pose P = ct_identity_at(0, 0, 0), E = ct_identity_at(0.1, 0.2, 0.25);
  grit_contact_point c[4];
  for (int t = 0; t < 20; ++t) { /* phi = height - |D R^T z| (the support function of the ellipsoid) */
    ct_random_rotation(&s, E.R);
    double h2 = 0.0;
    for (int k = 0; k < 3; ++k) h2 += pow(el.size[k] * E.R[6 + k], 2);
    cr_assert_eq(run(&pl, &P, &el, &E, 0.5, c), 1);
    cr_expect(fabs(c[0].phi - (0.25 - sqrt(h2))) <= EXACT);
  }
  double v[14][3];
  const double h[3] = {0.3, 0.2, 0.1};
  ct_convex_vertices(v, h, 0.05);
  grit_shape cv = grit_shape_convex(&v[0][0], 14);
  E = ct_identity_at(0, 0, 0.16);
  cr_assert_eq(run(&pl, &P, &cv, &E, 0.05, c), 1, "only the bulge's vertex");
  cr_expect(fabs(c[0].phi - 0.01) <= EXACT);
  cr_assert_eq(run(&pl, &P, &cv, &E, 0.1, c), 4, "5 within the margin: 4 chosen");
  cr_expect(fabs(c[ct_deepest(c, 4)].phi - 0.01) <= EXACT, "the deepest is always chosen");
  /* a 12-sided prism standing on its base: the 4 points chosen must surround the axis */
  double prism[24][3];
  for (int i = 0; i < 12; ++i)
    for (int k = 0; k < 2; ++k) {
      prism[2 * i + k][0] = 0.2 * cos(i * 3.14159265358979 / 6), prism[2 * i + k][1] = 0.2 * sin(i * 3.14159265358979 / 6);
      prism[2 * i + k][2] = k ? 0.1 : -0.1;
    }
  grit_shape pr = grit_shape_convex(&prism[0][0], 24);
  E = ct_identity_at(0, 0, 0.1);
  cr_assert_eq(run(&pl, &P, &pr, &E, 0.05, c), 4);
  double ang[4], gap = 0.0;
  for (int i = 0; i < 4; ++i) ang[i] = atan2(c[i].pb[1], c[i].pb[0]);
  for (int i = 0; i < 4; ++i) { /* largest angular gap between consecutive chosen points, < pi */
    double next = 10.0;
    for (int j = 0; j < 4; ++j) {
      double d = ang[j] - ang[i];
      if (d <= 0) d += 2 * 3.14159265358979;
      if (j != i && d < next) next = d;
    }
    gap = fmax(gap, next);
  }
  cr_expect(gap < 3.0, "the chosen base points leave a gap of %g rad", gap);
}

/* ------------------------------------------------------------- closed forms against GJK/EPA */

typedef struct agreement {
  double phi[2], n[2], w[2]; /* worst differences, [0] separated, [1] penetrating */
  int count[2];
} agreement;

/* Compares the deepest closed-form candidate with the general path's one candidate. */
static void compare(agreement *ag, const grit_contact_point *cf, int ncf, const grit_contact_point *g, int ng) {
  cr_assert_eq(ncf > 0, ng > 0, "closed form %d candidates, general path %d", ncf, ng);
  if (ng == 0) return;
  const grit_contact_point *c = &cf[ct_deepest(cf, ncf)];
  const int k = c->phi < 0.0;
  ag->count[k]++;
  ag->phi[k] = fmax(ag->phi[k], fabs(c->phi - g->phi));
  ag->n[k] = fmax(ag->n[k], ct_dist3(c->n, g->n));
  ag->w[k] = fmax(ag->w[k], fmax(ct_dist3(c->pa, g->pa), ct_dist3(c->pb, g->pb)));
}

/* Random pairs of the two types: b is placed around a so that phi spans [-0.1 m, 0.4 m] (plane: b's
 * centre at a height in [0, 0.6 m]). Planes become a box of half-size 5 m for the general path. */
static agreement closed_vs_general(grit_geom_type ta, grit_geom_type tb, int nsamples, unsigned long long seed) {
  unsigned long long s = seed;
  agreement ag;
  memset(&ag, 0, sizeof ag);
  double v[14][3];
  const double h[3] = {0.2, 0.15, 0.1};
  ct_convex_vertices(v, h, 0.04);
  const double margin = 0.5;
  for (int it = 0; it < nsamples; ++it) {
    grit_shape a = ct_random_shape(&s, ta, &v[0][0]), b = ct_random_shape(&s, tb, &v[0][0]), ga = a;
    ct_pose A = ct_random_pose(&s, 1.0), B = ct_random_pose(&s, 0.0), GA = A;
    double dir[3];
    for (int k = 0; k < 3; ++k) dir[k] = ct_uniform(&s, -1, 1);
    grit_v3_normalize(dir);
    if (ta == GRIT_GEOM_PLANE) {
      for (int k = 0; k < 3; ++k) dir[k] = A.R[3 * k + 2] * ct_uniform(&s, 0.0, 0.6) + 0.3 * dir[k];
      ct_plane_as_box(&A, 5.0, &ga, &GA);
    } else {
      grit_v3_scale(dir, dir, ct_uniform(&s, 0.0, grit_shape_bounding_radius(&a) + grit_shape_bounding_radius(&b) + 0.3));
    }
    grit_v3_add(B.p, A.p, dir);
    grit_contact_point cf[4], g[1];
    int ncf, ng;
    cr_assert_eq(grit_collide(&a, A.p, A.R, &b, B.p, B.R, margin, cf, 4, &ncf), GRIT_OK);
    cr_assert_eq(grit_collide_gjk(&ga, GA.p, GA.R, &b, B.p, B.R, margin, g, 1, &ng), GRIT_OK);
    check_invariants(cf, ncf, &A, &B);
    check_invariants(g, ng, &GA, &B);
    compare(&ag, cf, ncf, g, ng);
  }
  return ag;
}

/* Tolerances: in separation GJK ends with a gap of at most 1e-15 |v| (+1e-15 of the scale) between
 * its bounds, and with point and segment cores (every closed-form pair) it ends on the exact closest
 * features, so phi and n agree to round-off: 1e-8 is the bar set for the general path, with orders of
 * magnitude to spare. In penetration EPA's polytope face is exact for polytope cores (all pairs here
 * but the cylinder and ellipsoid, whose nearest face of D is nevertheless a translate of the plane's
 * face): 1e-6 is the bar. Witness points on polytope and round cores are determined as well as n. On a
 * curved surface (cylinder rim, ellipsoid) they are not: phi is stationary in the witness's tangential
 * position, so a converged phi error dphi leaves the witness uncertain by sqrt(2 rho dphi), rho <= 0.4 m
 * the radius of curvature; with dphi <= 5e-12 (10x the worst phi difference seen) that is 2e-6 m. */
static void report_and_check(const char *name, agreement ag, int curved) {
  printf("closed form vs GJK/EPA %-20s sep %4d: dphi %.1e dn %.1e dw %.1e | pen %4d: dphi %.1e dn %.1e dw %.1e\n",
         name, ag.count[0], ag.phi[0], ag.n[0], ag.w[0], ag.count[1], ag.phi[1], ag.n[1], ag.w[1]);
  cr_expect(ag.count[0] >= 50 && ag.count[1] >= 50, "%s: too few samples (%d, %d)", name, ag.count[0], ag.count[1]);
  cr_expect(ag.phi[0] <= 1e-8 && ag.n[0] <= 1e-8, "%s separated: dphi %g dn %g", name, ag.phi[0], ag.n[0]);
  cr_expect(ag.phi[1] <= 1e-6 && ag.n[1] <= 1e-6, "%s penetrating: dphi %g dn %g", name, ag.phi[1], ag.n[1]);
  const double wsep = curved ? 2e-6 : 1e-8, wpen = curved ? 2e-6 : 1e-6;
  cr_expect(ag.w[0] <= wsep && ag.w[1] <= wpen, "%s witnesses: %g %g", name, ag.w[0], ag.w[1]);
}

Test(collision, closed_forms_agree_with_gjk_epa) {
  const struct {
    grit_geom_type a, b;
    const char *name;
    int curved;
  } pairs[] = {{GRIT_GEOM_SPHERE, GRIT_GEOM_SPHERE, "sphere-sphere", 0},
               {GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, "sphere-capsule", 0},
               {GRIT_GEOM_CAPSULE, GRIT_GEOM_CAPSULE, "capsule-capsule", 0},
               {GRIT_GEOM_SPHERE, GRIT_GEOM_BOX, "sphere-box", 0},
               {GRIT_GEOM_PLANE, GRIT_GEOM_SPHERE, "plane-sphere", 0},
               {GRIT_GEOM_PLANE, GRIT_GEOM_CAPSULE, "plane-capsule", 0},
               {GRIT_GEOM_PLANE, GRIT_GEOM_BOX, "plane-box", 0},
               {GRIT_GEOM_PLANE, GRIT_GEOM_CYLINDER, "plane-cylinder", 1},
               {GRIT_GEOM_PLANE, GRIT_GEOM_ELLIPSOID, "plane-ellipsoid", 1},
               {GRIT_GEOM_PLANE, GRIT_GEOM_CONVEX, "plane-convex", 0}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
    report_and_check(pairs[i].name, closed_vs_general(pairs[i].a, pairs[i].b, 600, 1000 + i), pairs[i].curved);
}

/* ------------------------------------------------------------------- symmetry, margin, capacity */

/* A random pose for b near a (or above plane a), phi roughly in [-0.1, 0.4]. */
static void place_near(unsigned long long *s, const grit_shape *a, const ct_pose *A, const grit_shape *b, ct_pose *B) {
  double dir[3];
  *B = ct_random_pose(s, 0.0);
  for (int k = 0; k < 3; ++k) dir[k] = ct_uniform(s, -1, 1);
  grit_v3_normalize(dir);
  if (a->type == GRIT_GEOM_PLANE)
    for (int k = 0; k < 3; ++k) dir[k] = A->R[3 * k + 2] * ct_uniform(s, 0.0, 0.6) + 0.3 * dir[k];
  else
    grit_v3_scale(dir, dir, ct_uniform(s, 0.0, grit_shape_bounding_radius(a) + grit_shape_bounding_radius(b) + 0.2));
  grit_v3_add(B->p, A->p, dir);
}

/* Swapping the arguments runs the same arithmetic (canonical order), so the results are bit-identical. */
Test(collision, symmetry_every_pair) {
  unsigned long long s = 7;
  double v[14][3];
  const double h[3] = {0.2, 0.15, 0.1};
  ct_convex_vertices(v, h, 0.04);
  int tested = 0;
  for (int ta = 0; ta < NARROW_TYPES; ++ta)
    for (int tb = ta; tb < NARROW_TYPES; ++tb) {
      if (ta == GRIT_GEOM_PLANE && tb == GRIT_GEOM_PLANE) continue;
      for (int it = 0; it < 40; ++it) {
        grit_shape a = ct_random_shape(&s, (grit_geom_type)ta, &v[0][0]), b = ct_random_shape(&s, (grit_geom_type)tb, &v[0][0]);
        ct_pose A = ct_random_pose(&s, 1.0), B;
        place_near(&s, &a, &A, &b, &B);
        grit_contact_point ab[4], ba[4];
        int nab, nba;
        cr_assert_eq(grit_collide(&a, A.p, A.R, &b, B.p, B.R, 0.5, ab, 4, &nab), GRIT_OK);
        cr_assert_eq(grit_collide(&b, B.p, B.R, &a, A.p, A.R, 0.5, ba, 4, &nba), GRIT_OK);
        check_invariants(ab, nab, &A, &B);
        check_invariants(ba, nba, &B, &A);
        cr_assert_eq(nab, nba, "types %d-%d: %d and %d candidates", ta, tb, nab, nba);
        for (int i = 0; i < nab; ++i) {
          cr_assert(ab[i].phi == ba[i].phi, "types %d-%d: phi %.17g vs %.17g", ta, tb, ab[i].phi, ba[i].phi);
          for (int k = 0; k < 3; ++k) {
            cr_assert(ab[i].n[k] == -ba[i].n[k], "types %d-%d: normal not flipped", ta, tb);
            cr_assert(ab[i].pa[k] == ba[i].pb[k] && ab[i].pb[k] == ba[i].pa[k], "witnesses not exchanged");
            cr_assert(ab[i].pa_local[k] == ba[i].pb_local[k] && ab[i].pb_local[k] == ba[i].pa_local[k]);
          }
        }
        tested += nab > 0;
      }
    }
  cr_expect(tested >= 500, "only %d pairs had candidates", tested);
}

/* Moving b along the normal by t changes a separated pair's phi by exactly t (the supporting planes
 * stay the optimal ones), so the pair is moved to phi = margin -+ 1e-6: in, then out. phi must then be
 * margin - 1e-6 to round-off (1e-12 m), except with a curved core, where GJK stalls at a distance error
 * of ~(eps |v| / sqrt(rho))^(2/3) ~ 3e-11 m (see collision_gjk.c): 1e-10 m. */
Test(collision, margin_every_pair) {
  unsigned long long s = 11;
  double v[14][3];
  const double h[3] = {0.2, 0.15, 0.1}, margin = 0.3, delta = 1e-6;
  ct_convex_vertices(v, h, 0.04);
  for (int ta = 0; ta < NARROW_TYPES; ++ta)
    for (int tb = ta; tb < NARROW_TYPES; ++tb) {
      if (ta == GRIT_GEOM_PLANE && tb == GRIT_GEOM_PLANE) continue;
      int done = 0;
      for (int it = 0; it < 1000 && done < 5; ++it) {
        grit_shape a = ct_random_shape(&s, (grit_geom_type)ta, &v[0][0]), b = ct_random_shape(&s, (grit_geom_type)tb, &v[0][0]);
        ct_pose A = ct_random_pose(&s, 1.0), B;
        place_near(&s, &a, &A, &b, &B);
        grit_contact_point c[4];
        int n;
        cr_assert_eq(grit_collide(&a, A.p, A.R, &b, B.p, B.R, 10.0, c, 4, &n), GRIT_OK);
        int d = ct_deepest(c, n);
        if (d < 0 || c[d].phi < 0.01 || c[d].phi > 0.2) continue;
        const double phi0 = c[d].phi, nrm[3] = {c[d].n[0], c[d].n[1], c[d].n[2]};
        for (int side = -1; side <= 1; side += 2) {
          ct_pose B2 = B;
          grit_v3_addscl(B2.p, B.p, nrm, margin - phi0 + side * delta);
          cr_assert_eq(grit_collide(&a, A.p, A.R, &b, B2.p, B2.R, margin, c, 4, &n), GRIT_OK);
          if (side > 0) cr_assert_eq(n, 0, "types %d-%d: candidate beyond the margin", ta, tb);
          else {
            cr_assert(n >= 1, "types %d-%d: candidate within the margin lost", ta, tb);
            const int curved = (ta == GRIT_GEOM_CYLINDER || ta == GRIT_GEOM_ELLIPSOID || tb == GRIT_GEOM_CYLINDER ||
                                tb == GRIT_GEOM_ELLIPSOID) && ta != GRIT_GEOM_PLANE;
            cr_assert(fabs(c[ct_deepest(c, n)].phi - (margin - delta)) <= (curved ? 1e-10 : 1e-12),
                      "types %d-%d: phi %.17g", ta, tb,
                      c[ct_deepest(c, n)].phi);
          }
        }
        done++;
      }
      cr_expect_eq(done, 5, "types %d-%d: no separated sample found", ta, tb);
    }
}

Test(collision, capacity_and_arguments) {
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), bx = grit_shape_make(GRIT_GEOM_BOX, 0.5, 0.3, 0.2);
  ct_pose P = ct_identity_at(0, 0, 0), B = ct_identity_at(0, 0, 0.19);
  grit_contact_point c[5];
  int n = -1;
  memset(c, 0, sizeof c);
  c[2].phi = 12345.0; /* a canary just past the capacity */
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, c, 2, &n), GRIT_ERR_CAPACITY);
  cr_expect_eq(n, 2);
  cr_expect(c[2].phi == 12345.0, "wrote past max_out");
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, NULL, 0, &n), GRIT_ERR_CAPACITY);
  cr_expect_eq(n, 0);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, c, 4, &n), GRIT_OK);
  cr_expect_eq(n, 4);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.001, NULL, 0, &n), GRIT_ERR_CAPACITY, "phi=-0.01");
  B.p[2] = 5.0; /* nothing within the margin: no capacity needed */
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, NULL, 0, &n), GRIT_OK);
  cr_expect_eq(n, 0);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &pl, B.p, B.R, 0.1, c, 4, &n), GRIT_ERR_UNSUPPORTED);
  cr_expect_eq(grit_collide_gjk(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, c, 4, &n), GRIT_ERR_UNSUPPORTED);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, -0.1, c, 4, &n), GRIT_ERR_INVALID_ARGUMENT);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, NAN, c, 4, &n), GRIT_ERR_INVALID_ARGUMENT);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, c, -1, &n), GRIT_ERR_INVALID_ARGUMENT);
  cr_expect_eq(grit_collide(NULL, P.p, P.R, &bx, B.p, B.R, 0.1, c, 4, &n), GRIT_ERR_INVALID_ARGUMENT);
  cr_expect_eq(grit_collide(&pl, P.p, P.R, &bx, B.p, B.R, 0.1, c, 4, NULL), GRIT_ERR_INVALID_ARGUMENT);
}

/* -------------------------------------------------------------- the general path on its own */

#include <ccd/ccd.h>

/* libccd's view of a placed shape: the same support function (grit_shape_support), in the world. */
typedef struct ccd_obj {
  const grit_shape *s;
  const double *p, *R;
} ccd_obj;

static void grit_ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out) {
  const ccd_obj *o = obj;
  double d[3] = {dir->v[0], dir->v[1], dir->v[2]}, dl[3], xl[3], x[3];
  grit_m3_tmulv(dl, o->R, d);
  grit_shape_support(o->s, dl, xl);
  grit_tf_apply(x, o->p, o->R, xl);
  for (int k = 0; k < 3; ++k) out->v[k] = x[k];
}

static void grit_ccd_center(const void *obj, ccd_vec3_t *c) {
  const ccd_obj *o = obj;
  for (int k = 0; k < 3; ++k) c->v[k] = o->p[k];
}

/* The world support value h(d) = max over the placed shape of d . x. */
static double support_value(const grit_shape *g, const ct_pose *P, const double d[3]) {
  double dl[3], xl[3], x[3];
  grit_m3_tmulv(dl, P->R, d);
  grit_shape_support(g, dl, xl);
  grit_tf_apply(x, P->p, P->R, xl);
  return grit_v3_dot(d, x);
}

/* Is the local point x in the shape, within tol (m)? Polytopes: x . d <= h(d) over many directions. */
static int inside(const grit_shape *g, const double x[3], double tol) {
  const double *z = g->size;
  switch (g->type) {
  case GRIT_GEOM_SPHERE: return grit_v3_norm(x) <= z[0] + tol;
  case GRIT_GEOM_CAPSULE: return hypot(hypot(x[0], x[1]), fmax(0.0, fabs(x[2]) - z[1])) <= z[0] + tol;
  case GRIT_GEOM_BOX: return fabs(x[0]) <= z[0] + tol && fabs(x[1]) <= z[1] + tol && fabs(x[2]) <= z[2] + tol;
  case GRIT_GEOM_CYLINDER: return hypot(x[0], x[1]) <= z[0] + tol && fabs(x[2]) <= z[1] + tol;
  case GRIT_GEOM_ELLIPSOID: {
    double q = 0.0;
    for (int k = 0; k < 3; ++k) q += x[k] * x[k] / (z[k] * z[k]);
    return sqrt(q) <= 1.0 + tol / fmin(z[0], fmin(z[1], z[2]));
  }
  default: {
    unsigned long long s = 17;
    for (int i = 0; i < 200; ++i) {
      double d[3], sp[3];
      for (int k = 0; k < 3; ++k) d[k] = ct_uniform(&s, -1, 1);
      grit_v3_normalize(d);
      grit_shape_support(g, d, sp);
      if (grit_v3_dot(d, x) > grit_v3_dot(d, sp) + tol) return 0;
    }
    return 1;
  }
  }
}

/* Every pair without a closed form. Separated: the witness points lie in their shapes and on the
 * supporting planes of the normal (pa . n = h_a(n), pb . n = -h_b(-n)), and pb - pa = phi n: weak duality
 * then certifies phi as the distance. Penetrating: the same support conditions (a stationary normal),
 * and the depth agrees with libccd's EPA (ccdGJKPenetration, an independent implementation, run with
 * a 1e-14 tolerance and 500 iterations) when libccd succeeds. Tolerances: with polytope and round
 * cores everything is exact to round-off (1e-12 m). A curved core (cylinder, ellipsoid) leaves the
 * normal uncertain: phi is stationary in it, so GJK's stall at a ~1e-10 relative distance error leaves
 * it known to ~sqrt(2e-10 / H), H the curvature of phi in the normal (>= 0.02 m here): 1e-4 rad; the
 * support residual is that error times the size of a flat feature meeting it (<= 0.8 m), or rho dn^2
 * on a curved one: 1e-4 m. libccd keeps the radius in the support function, so only box and convex
 * pairs are polytopes for it (exact: 1e-9); otherwise its EPA polytope lies inside the shapes and its
 * depth is a lower bound, measured within 1e-7 m of ours: libccd <= ours + 1e-9, ours - libccd <= 1e-6. */
Test(collision, general_path_certificates_and_libccd) {
  unsigned long long s = 21;
  double v[14][3];
  const double h[3] = {0.2, 0.15, 0.1};
  ct_convex_vertices(v, h, 0.04);
  double worst_support[2] = {0, 0}, worst_ccd[2] = {0, 0};
  int counts[2] = {0, 0}, nccd[2] = {0, 0};
  for (int ta = 1; ta < NARROW_TYPES; ++ta)
    for (int tb = ta; tb < NARROW_TYPES; ++tb) {
      const int curved = ta == GRIT_GEOM_CYLINDER || ta == GRIT_GEOM_ELLIPSOID || tb == GRIT_GEOM_CYLINDER ||
                         tb == GRIT_GEOM_ELLIPSOID;
      /* libccd does not split off the radius: for it a sphere or a capsule is curved too */
      const int ccd_exact = (ta == GRIT_GEOM_BOX || ta == GRIT_GEOM_CONVEX) && (tb == GRIT_GEOM_BOX || tb == GRIT_GEOM_CONVEX);
      for (int it = 0; it < 60; ++it) {
        grit_shape a = ct_random_shape(&s, (grit_geom_type)ta, &v[0][0]), b = ct_random_shape(&s, (grit_geom_type)tb, &v[0][0]);
        ct_pose A = ct_random_pose(&s, 1.0), B;
        place_near(&s, &a, &A, &b, &B);
        grit_contact_point c[1];
        int n;
        cr_assert_eq(grit_collide_gjk(&a, A.p, A.R, &b, B.p, B.R, 0.5, c, 1, &n), GRIT_OK);
        if (n == 0) continue;
        check_invariants(c, n, &A, &B);
        const double tol = curved ? 1e-4 : 1e-12;
        double mn[3] = {-c->n[0], -c->n[1], -c->n[2]};
        double ea = support_value(&a, &A, c->n) - grit_v3_dot(c->n, c->pa);
        double eb = support_value(&b, &B, mn) - grit_v3_dot(mn, c->pb);
        worst_support[curved] = fmax(worst_support[curved], fmax(fabs(ea), fabs(eb)));
        counts[curved]++;
        cr_expect(fabs(ea) <= tol && fabs(eb) <= tol, "types %d-%d: support residuals %g %g phi %g", ta, tb, ea, eb, c->phi);
        cr_expect(inside(&a, c->pa_local, 1e-12) && inside(&b, c->pb_local, 1e-12), "types %d-%d: witness outside",
                  ta, tb);
        if (c->phi >= 0.0) continue;
        ccd_obj oa = {&a, A.p, A.R}, ob = {&b, B.p, B.R};
        ccd_t ccd;
        CCD_INIT(&ccd);
        ccd.support1 = ccd.support2 = grit_ccd_support;
        ccd.center1 = ccd.center2 = grit_ccd_center;
        ccd.epa_tolerance = 1e-14;
        ccd.max_iterations = 500;
        ccd_real_t depth;
        ccd_vec3_t dir, pos;
        if (ccdGJKPenetration(&oa, &ob, &ccd, &depth, &dir, &pos) != 0) continue;
        const double diff = -c->phi - depth;
        worst_ccd[!ccd_exact] = fmax(worst_ccd[!ccd_exact], fabs(diff));
        nccd[!ccd_exact]++;
        if (!ccd_exact) cr_expect(diff >= -1e-9 && diff <= 1e-6, "types %d-%d: depth %.12g, libccd %.12g", ta, tb, -c->phi, depth);
        else cr_expect(fabs(diff) <= 1e-9, "types %d-%d: depth %.15g, libccd %.15g", ta, tb, -c->phi, depth);
      }
    }
  printf("general path: polytope/round cores %d pairs, support residual %.1e; curved cores %d, %.1e\n", counts[0],
         worst_support[0], counts[1], worst_support[1]);
  printf("general path vs libccd EPA: polytopes %d, depth diff %.1e; curved for libccd %d, %.1e\n", nccd[0],
         worst_ccd[0], nccd[1], worst_ccd[1]);
  cr_expect(nccd[0] >= 50 && nccd[1] >= 50, "too few libccd comparisons: %d %d", nccd[0], nccd[1]);
}

/* The general path with a curved core, against closed forms: an ellipsoid with three equal semi-axes is a
 * sphere, but takes the curved path (EPA to its capacity, then the polish) where the sphere takes a
 * closed form. phi must agree to 1e-6 m: GJK on a curved core stalls at ~1e-10 m (collision_gjk.c), and
 * deep, nearly concentric overlaps leave the normal ill-defined, phi being flat in it; 1e-6 is far
 * above both and far below the 1e-3..1e-2 m errors of a polish caught at a saddle of h_D. The normal is
 * not compared (it is uncertain to ~sqrt of phi's error, and undefined at concentric overlaps). */
Test(collision, curved_general_path_against_closed_forms) {
  const grit_geom_type others[3] = {GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, GRIT_GEOM_BOX};
  unsigned long long s = 31;
  for (int t = 0; t < 3; ++t) {
    double worst[2] = {0, 0};
    int count[2] = {0, 0};
    for (int it = 0; it < 600; ++it) {
      const double r = ct_uniform(&s, 0.05, 0.3);
      grit_shape el = grit_shape_make(GRIT_GEOM_ELLIPSOID, r, r, r), sp = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0);
      grit_shape b = ct_random_shape(&s, others[t], NULL);
      ct_pose A = ct_random_pose(&s, 1.0), B;
      place_near(&s, &sp, &A, &b, &B);
      grit_contact_point ce[4], cs[4];
      int ne, ns;
      cr_assert_eq(grit_collide(&el, A.p, A.R, &b, B.p, B.R, 0.5, ce, 4, &ne), GRIT_OK);
      cr_assert_eq(grit_collide(&sp, A.p, A.R, &b, B.p, B.R, 0.5, cs, 4, &ns), GRIT_OK);
      check_invariants(ce, ne, &A, &B);
      cr_assert_eq(ne, ns);
      if (ne == 0) continue;
      const int k = cs[0].phi < 0.0;
      count[k]++;
      worst[k] = fmax(worst[k], fabs(ce[0].phi - cs[0].phi));
    }
    printf("curved general path (ellipsoid as sphere) vs closed form, with type %d: sep %d dphi %.1e | pen %d dphi %.1e\n",
           (int)others[t], count[0], worst[0], count[1], worst[1]);
    cr_expect(worst[0] <= 1e-6 && worst[1] <= 1e-6, "type %d: dphi %g %g", (int)others[t], worst[0], worst[1]);
    cr_expect(count[0] >= 50 && count[1] >= 50);
  }
}

/* EPA's edge table cleared among its vertices as they come (collision_gjk.c) against the whole table
 * cleared each call (grit_gjk_info.full_edge_clear): overlapping pairs of boxes, cylinders, ellipsoids,
 * capsules and hulls at random poses give the same phi, normal and witness points to the bit, and the
 * same iteration counts; most of them run EPA. */
Test(collision, epa_edge_table_cleared_lazily_same_bits) {
  unsigned long long s = 31;
  double verts[14][3];
  const double h[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, h, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_BOX, GRIT_GEOM_CYLINDER, GRIT_GEOM_ELLIPSOID, GRIT_GEOM_CAPSULE, GRIT_GEOM_CONVEX};
  int epa_runs = 0, tries = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const grit_geom_type ta = types[trial % 5], tb = types[(trial / 5) % 5];
    grit_shape a = ct_random_shape(&s, ta, &verts[0][0]), b = ct_random_shape(&s, tb, &verts[0][0]);
    ct_pose A = ct_random_pose(&s, 0.1), B = ct_random_pose(&s, 0.1);
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    grit_gjk_info info[2];
    int hit[2];
    for (int r = 0; r < 2; ++r) {
      memset(&info[r], 0, sizeof info[r]);
      info[r].full_edge_clear = r;
      hit[r] = grit_gjk_epa(&pa, &pb, 0.01, &phi[r], n[r], wa[r], wb[r], &info[r]);
    }
    cr_assert_eq(hit[0], hit[1], "trial %d", trial);
    cr_assert_eq(info[1].full_edge_clear, 1, "trial %d: the switch was not kept", trial);
    if (!hit[0]) continue;
    tries++;
    cr_assert(info[0].epa_iterations == info[1].epa_iterations && info[0].epa_converged == info[1].epa_converged &&
                  info[0].gjk_iterations == info[1].gjk_iterations && info[0].polish_steps == info[1].polish_steps,
              "trial %d: other iterations", trial);
    cr_assert(!memcmp(&phi[0], &phi[1], sizeof phi[0]) && !memcmp(n[0], n[1], sizeof n[0]) &&
                  !memcmp(wa[0], wa[1], sizeof wa[0]) && !memcmp(wb[0], wb[1], sizeof wb[0]),
              "trial %d: other bits", trial);
    epa_runs += info[0].epa_iterations > 0;
  }
  cr_assert(epa_runs > 100, "EPA expanded in only %d of %d overlapping pairs", epa_runs, tries);
}
