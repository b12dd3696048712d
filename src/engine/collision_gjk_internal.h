/* SPDX-License-Identifier: Apache-2.0 */
/* collision_gjk_internal.h — GJK's types shared by collision_gjk.c and its jumps on cylinders
 * (collision_gjk_jump.c). Private to the two. */
#ifndef GRIT_COLLISION_GJK_INTERNAL_H
#define GRIT_COLLISION_GJK_INTERNAL_H

#include "grit/geometry.h"

/* A placed shape with its core. */
typedef struct body {
  const grit_shape *s;
  const double *p, *R;
  double r;  /* core radius */
  int *hint; /* the last support vertex of a hull with a graph, where the next climb starts */
  int refine; /* 1: GJK may jump to a cylinder's closest point to a single point of the other (point_jump) */
  int edge;   /* 1: and to the closest points of a cylinder and an edge or face of the other (edge_jump; set
                 only on a cylinder and a non-curved core) */
  int *trail; /* NULL, or the kept starts of the call's first hull supports (grit_placed_shape.trail) */
  int newton; /* 1: GJK may jump to Newton's closest points of two smooth curved cores (newton_jump) */
} body;

/* A vertex of D with the two core points that made it: w = a - b. */
typedef struct sv {
  double w[3], a[3], b[3];
} sv;

typedef struct simplex {
  sv v[4];
  double lam[4]; /* barycentric weights of the closest point v */
  int n;
} simplex;

static inline void set_lam(double lam[4], double l0, double l1, double l2, double l3) {
  lam[0] = l0, lam[1] = l1, lam[2] = l2, lam[3] = l3;
}

/* GJK's jump to a cylinder's nearest point to a single point of the other core (collision_gjk_jump.c). */
int grit_gjk_point_jump(const body *A, const body *B, simplex *s, double v[3], double touch2);
/* GJK's jump to the exact closest points of a cylinder and an edge or face of the other core; last: the
 * feature seen the iteration before (9 doubles, NaN at a call's start). */
int grit_gjk_edge_jump(const body *A, const body *B, simplex *s, double v[3], double touch2, double last[9]);

/* 1 if s's core has a support smooth enough for newton_jump (ellipsoid, cylinder, sphere). */
static inline int grit_gjk_newton_shape(grit_geom_type t) {
  return t == GRIT_GEOM_ELLIPSOID || t == GRIT_GEOM_CYLINDER || t == GRIT_GEOM_SPHERE;
}
/* GJK's jump to Newton's minimiser of h_D on the unit sphere, started from -v (collision_gjk_newton.c): 1 if it
 * moved v (then s is that one point), 0 if Newton did not converge or the point is not strictly nearer. */
int grit_gjk_newton_jump(const body *A, const body *B, simplex *s, double v[3], double touch2);

#endif
