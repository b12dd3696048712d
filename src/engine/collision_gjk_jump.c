/* SPDX-License-Identifier: Apache-2.0 */
/* collision_gjk_jump.c — GJK's jumps on a cylinder (collision_gjk.c's loop calls them): to the exact closest
 * points of the cylinder and the feature of the other core that GJK's simplex holds (a point, an edge, a
 * face), where GJK itself would creep along the curved surface. Moved out of collision_gjk.c (its size). */
#include <math.h>

#include "collision_gjk_internal.h"
#include "geometry_internal.h"
#include "grit/math.h"

/* The point of the solid cylinder (radius r, half-length h, local frame) nearest the local point x. */
static void cylinder_nearest(const double size[2], const double x[3], double q[3]) {
  const double rho = hypot(x[0], x[1]), s = rho > size[0] ? size[0] / rho : 1.0;
  q[0] = s * x[0], q[1] = s * x[1], q[2] = fmin(size[1], fmax(-size[1], x[2]));
}

/* GJK's simplex set to the one pair of points q (the cylinder's) and p (the other core's) when q - p (or
 * p - q: v = a - b) is strictly nearer the origin than v and the two are apart; 0 (nothing changed) when
 * not: touching or overlapping pairs keep GJK's own simplex for EPA. */
static int jump_to(simplex *s, double v[3], const double q[3], const double p[3], int a_cyl, double touch2) {
  double w[3];
  if (a_cyl) grit_v3_sub(w, q, p);
  else grit_v3_sub(w, p, q);
  const double ww = grit_v3_norm2(w);
  if (!(ww < grit_v3_norm2(v)) || ww <= touch2) return 0;
  sv x;
  grit_v3_copy(x.w, w);
  grit_v3_copy(x.a, a_cyl ? q : p);
  grit_v3_copy(x.b, a_cyl ? p : q);
  s->v[0] = x;
  s->n = 1;
  set_lam(s->lam, 1, 0, 0, 0);
  grit_v3_copy(v, w);
  return 1;
}

/* 1 if the simplex's points all share one point of the other body (its b, or its a when other_is_b = 0). */
static int one_other_point(const simplex *s, int other_is_b) {
  for (int i = 1; i < s->n; ++i) {
    const double *x = other_is_b ? s->v[i].b : s->v[i].a, *y = other_is_b ? s->v[0].b : s->v[0].a;
    if (x[0] != y[0] || x[1] != y[1] || x[2] != y[2]) return 0;
  }
  return 1;
}

/* GJK on a curved core halves its angular error per iteration (the chord's closest point on a circle):
 * a hull vertex near a cylinder's rim or side takes ~20 iterations to meet the termination test. When
 * the simplex's points all share one point p of the other core (its closest feature is that point), the
 * cylinder's point q nearest p is known in closed form, and q - p is a point of D no farther from the
 * origin than v. GJK continues from the simplex {q - p} when it is strictly nearer: its termination test
 * (the bounds |v| and v.w/|v|) is unchanged, so the answer is certified as before; where p is indeed the
 * other's closest point the next support meets the test at once. Returns 1 if it moved v. */
int grit_gjk_point_jump(const body *A, const body *B, simplex *s, double v[3], double touch2) {
  const int a_cyl = A->s->type == GRIT_GEOM_CYLINDER && B->s->type != GRIT_GEOM_CYLINDER;
  const int b_cyl = B->s->type == GRIT_GEOM_CYLINDER && A->s->type != GRIT_GEOM_CYLINDER;
  if (!(a_cyl || b_cyl) || !one_other_point(s, a_cyl)) return 0;
  const body *C = a_cyl ? A : B;
  const double *p = a_cyl ? s->v[0].b : s->v[0].a;
  double d[3], xl[3], ql[3], q[3];
  grit_v3_sub(d, p, C->p);
  grit_m3_tmulv(xl, C->R, d);
  cylinder_nearest(C->s->size, xl, ql);
  grit_tf_apply(q, C->p, C->R, ql);
  return jump_to(s, v, q, p, a_cyl, touch2);
}

static int same3(const double *x, const double *y) { return x[0] == y[0] && x[1] == y[1] && x[2] == y[2]; }

static int lex_less(const double *x, const double *y) {
  return x[0] < y[0] || (x[0] == y[0] && (x[1] < y[1] || (x[1] == y[1] && x[2] < y[2])));
}

/* The simplex's distinct points of the other body (an edge of it when two, a triangle when three), written
 * to e in a fixed (lexicographic) order, so that their closest points to the cylinder do not depend on GJK's
 * path to them. Returns their number. */
static int other_feature(const simplex *s, int other_is_b, const double *e[3]) {
  int k = 0;
  for (int i = 0; i < s->n; ++i) {
    const double *x = other_is_b ? s->v[i].b : s->v[i].a;
    int dup = 0;
    for (int j = 0; j < k; ++j) dup |= same3(x, e[j]);
    if (!dup) e[k++] = x;
  }
  for (int i = 1; i < k; ++i) /* insertion sort of at most three */
    for (int j = i; j > 0 && lex_less(e[j], e[j - 1]); --j) {
      const double *t = e[j];
      e[j] = e[j - 1], e[j - 1] = t;
    }
  return k;
}

/* The closest points of the triangle p0 p1 p2 (cylinder's frame) and the cylinder when they are the
 * cylinder's extreme point toward the triangle's plane and its foot inside the triangle; 0 otherwise. u: a
 * direction from the cylinder toward the triangle (to orient the plane's normal). */
static int face_nearest(const grit_shape *cyl, const double *p[3], const double u[3], double x[3], double q[3]) {
  double e1[3], e2[3], m[3], mo[3];
  grit_v3_sub(e1, p[1], p[0]);
  grit_v3_sub(e2, p[2], p[0]);
  grit_v3_cross(m, e1, e2);
  if (!(grit_v3_normalize(m) > 0.0)) return 0;
  grit_v3_copy(mo, m);
  if (grit_v3_dot(mo, u) < 0.0) grit_v3_scale(mo, mo, -1.0);
  grit_shape_core_support(cyl, mo, q);
  const double gap = grit_v3_dot(mo, p[0]) - grit_v3_dot(mo, q);
  if (!(gap > 0.0)) return 0;
  grit_v3_addscl(x, q, mo, gap);
  for (int i = 0; i < 3; ++i) { /* the foot on the inner side of each edge */
    double a[3], b[3], c[3];
    grit_v3_sub(a, p[(i + 1) % 3], p[i]);
    grit_v3_sub(b, x, p[i]);
    grit_v3_cross(c, a, b);
    if (grit_v3_dot(c, m) < 0.0) return 0;
  }
  return 1;
}

/* g(t) = (x - q).e for x = p + t e and q the cylinder's point nearest x: half the derivative of the squared
 * distance of x from the (convex) cylinder, so nondecreasing in t; its root is the edge's closest point. */
static double edge_g(const double size[2], const double p[3], const double e[3], double t, double x[3], double q[3]) {
  double r[3];
  for (int k = 0; k < 3; ++k) x[k] = p[k] + t * e[k];
  cylinder_nearest(size, x, q);
  grit_v3_sub(r, x, q);
  return grit_v3_dot(r, e);
}

#define EDGE_MAX_EVALS 40
/* The closest points x (of the segment p0 p1) and q (of the cylinder), in the cylinder's frame: the root
 * of edge_g on [0, 1] by the Illinois variant of regula falsi (superlinear, bracketed, deterministic from
 * the segment's ends: the answer is the same from any GJK path that ends on this edge). */
static void edge_nearest(const double size[2], const double p0[3], const double p1[3], double x[3], double q[3]) {
  double e[3];
  grit_v3_sub(e, p1, p0);
  double lo = 0.0, hi = 1.0, glo = edge_g(size, p0, e, lo, x, q);
  if (glo >= 0.0) return;
  double ghi = edge_g(size, p0, e, hi, x, q);
  if (ghi <= 0.0) return;
  for (int i = 0, side = 0; i < EDGE_MAX_EVALS; ++i) {
    double t = (lo * ghi - hi * glo) / (ghi - glo);
    if (!(t > lo && t < hi)) break; /* the bracket is down to adjacent doubles */
    const double gt = edge_g(size, p0, e, t, x, q);
    if (gt == 0.0) return;
    if (gt < 0.0) {
      lo = t, glo = gt;
      if (side < 0) ghi *= 0.5;
      side = -1;
    } else {
      hi = t, ghi = gt;
      if (side > 0) glo *= 0.5;
      side = 1;
    }
  }
  edge_g(size, p0, e, fabs(glo) <= fabs(ghi) ? lo : hi, x, q);
}

/* As point_jump, when the simplex's points of the other core are exactly two (GJK ends on a hull's edge
 * against a cylinder's rim or side in ~14 iterations, its normal off by up to ~3e-5 rad): the exact
 * closest points of that edge and the cylinder, q - x a point of D; GJK continues from it when strictly
 * nearer than v (the termination test certifies the answer as before). Returns 1 if it moved v, 0 if not,
 * -1 on a feature not seen the iteration before (no try). */
int grit_gjk_edge_jump(const body *A, const body *B, simplex *s, double v[3], double touch2, double last[9]) {
  const int a_cyl = A->s->type == GRIT_GEOM_CYLINDER;
  const body *C = a_cyl ? A : B;
  const double *e[3];
  const int k = other_feature(s, a_cyl, e);
  if (k < 2) return 0;
  if (!same3(e[0], last) || !same3(e[1], last + 3) || !same3(e[k - 1], last + 6)) { /* a new feature: wait */
    grit_v3_copy(last, e[0]);                                                       /* until GJK keeps it an */
    grit_v3_copy(last + 3, e[1]);                                                   /* iteration */
    grit_v3_copy(last + 6, e[k - 1]);
    return -1;
  }
  double d[3], pl[3][3], xl[3], ql[3], x[3], q[3];
  for (int i = 0; i < k; ++i) {
    grit_v3_sub(d, e[i], C->p);
    grit_m3_tmulv(pl[i], C->R, d);
  }
  if (k == 2) edge_nearest(C->s->size, pl[0], pl[1], xl, ql);
  else {
    double u[3], ul[3];
    grit_v3_scale(u, v, a_cyl ? -1.0 : 1.0); /* v = a - b: from the other toward the cylinder when a is it */
    grit_m3_tmulv(ul, C->R, u);
    const double *pp[3] = {pl[0], pl[1], pl[2]};
    if (!face_nearest(C->s, pp, ul, xl, ql)) return 0;
  }
  grit_tf_apply(x, C->p, C->R, xl);
  grit_tf_apply(q, C->p, C->R, ql);
  return jump_to(s, v, q, x, a_cyl, touch2);
}

