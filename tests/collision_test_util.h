/* SPDX-License-Identifier: Apache-2.0 */
/* collision_test_util.h — random poses and shapes shared by the collision tests (header-only). */
#ifndef GRIT_COLLISION_TEST_UTIL_H
#define GRIT_COLLISION_TEST_UTIL_H

#include <math.h>
#include <string.h>

#include "collision_narrow.h"
#include "grit/math.h"

static inline double ct_uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return lo + (hi - lo) * (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

typedef struct ct_pose {
  double p[3], R[9];
} ct_pose;

/* A uniformly random rotation (normalized 4-vector of uniform entries, rejected outside the ball). */
static inline void ct_random_rotation(unsigned long long *s, double R[9]) {
  double q[4], n2;
  do {
    for (int k = 0; k < 4; ++k) q[k] = ct_uniform(s, -1, 1);
    n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  } while (n2 > 1.0 || n2 < 1e-4);
  grit_quat_normalize(q);
  grit_quat_to_mat(R, q);
}

static inline ct_pose ct_random_pose(unsigned long long *s, double spread) {
  ct_pose P;
  for (int k = 0; k < 3; ++k) P.p[k] = ct_uniform(s, -spread, spread);
  ct_random_rotation(s, P.R);
  return P;
}

static inline ct_pose ct_identity_at(double x, double y, double z) {
  ct_pose P = {{x, y, z}, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
  return P;
}

/* The pose rotated about the world axis (unit) by angle, about its own origin. */
static inline ct_pose ct_rotated(ct_pose P, const double axis[3], double angle) {
  double q[4], Q[9];
  grit_quat_from_axis_angle(q, axis, angle);
  grit_quat_to_mat(Q, q);
  grit_m3_mul(P.R, Q, P.R);
  return P;
}

/* A convex polytope: the 8 corners of a box with half-sizes h plus 6 face centres pushed out by bulge. */
static inline void ct_convex_vertices(double v[14][3], const double h[3], double bulge) {
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) v[i][k] = (i >> k & 1) ? h[k] : -h[k];
  for (int f = 0; f < 6; ++f) {
    for (int k = 0; k < 3; ++k) v[8 + f][k] = 0.0;
    v[8 + f][f / 2] = (f % 2 ? -1.0 : 1.0) * (h[f / 2] + bulge);
  }
}

/* A plane stand-in for the general path: a box of half-size L whose top face is the plane's z = 0. */
static inline void ct_plane_as_box(const ct_pose *plane, double L, grit_shape *box, ct_pose *boxpose) {
  *box = grit_shape_make(GRIT_GEOM_BOX, L, L, L);
  *boxpose = *plane;
  for (int k = 0; k < 3; ++k) boxpose->p[k] -= L * plane->R[3 * k + 2];
}

static inline double ct_dist3(const double a[3], const double b[3]) {
  double d[3];
  grit_v3_sub(d, a, b);
  return grit_v3_norm(d);
}

/* Index of the candidate with the least phi (first on ties); -1 if none. */
static inline int ct_deepest(const grit_contact_point *c, int n) {
  int best = -1;
  for (int i = 0; i < n; ++i)
    if (best < 0 || c[i].phi < c[best].phi) best = i;
  return best;
}

/* A random shape of the given type, sizes 0.05..0.4 m (verts: the 14 vertices of a CONVEX one). */
static inline grit_shape ct_random_shape(unsigned long long *s, grit_geom_type t, const double *verts) {
  if (t == GRIT_GEOM_CONVEX) return grit_shape_convex(verts, 14);
  return grit_shape_make(t, ct_uniform(s, 0.05, 0.3), ct_uniform(s, 0.05, 0.4), ct_uniform(s, 0.05, 0.3));
}

#endif
