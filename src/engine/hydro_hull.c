/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_hull.c — the outward triangles of a convex shape's hull, for the hydroelastic mesh of a convex
 * mesh geometry (compliant: the triangles fanned to an interior point; rigid: the faces a compliant
 * partner is clipped by). grit's CONVEX shape keeps only its points (collision needs only their support
 * function), and the engine may not use the file loaders' Qhull, so this is a plain incremental hull:
 * at model compile time only, quadratic in the point count (4096 points: a few tens of millions of
 * plane tests). Points within a relative 1e-9 of the hull are treated as on it (not added), so coplanar
 * faces come out as fans of triangles and the result never has a sliver with a wrong orientation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hydro.h"

typedef struct {
  int v[3];
  double n[3], off; /* outward normal (not unit) and n . v0 */
} hull_face;

static void face_make(hull_face *f, const double *p, int a, int b, int c) {
  const double *A = p + 3 * a, *B = p + 3 * b, *C = p + 3 * c;
  const double u[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]}, w[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
  f->v[0] = a, f->v[1] = b, f->v[2] = c;
  f->n[0] = u[1] * w[2] - u[2] * w[1];
  f->n[1] = u[2] * w[0] - u[0] * w[2];
  f->n[2] = u[0] * w[1] - u[1] * w[0];
  const double l = sqrt(f->n[0] * f->n[0] + f->n[1] * f->n[1] + f->n[2] * f->n[2]);
  for (int i = 0; i < 3; ++i) f->n[i] = l > 0 ? f->n[i] / l : 0.0;
  f->off = f->n[0] * A[0] + f->n[1] * A[1] + f->n[2] * A[2];
}

static double face_dist(const hull_face *f, const double *x) {
  return f->n[0] * x[0] + f->n[1] * x[1] + f->n[2] * x[2] - f->off;
}

static double dist2(const double *a, const double *b) {
  const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

/* Four points spanning a volume: the extremes along x, the farthest from their line, the farthest from
 * their plane. Returns 0 when the points are (nearly) flat. */
static int initial_simplex(const double *p, int n, double eps, int s[4]) {
  s[0] = s[1] = 0;
  for (int i = 1; i < n; ++i) {
    if (p[3 * i] < p[3 * s[0]]) s[0] = i;
    if (p[3 * i] > p[3 * s[1]]) s[1] = i;
  }
  if (dist2(p + 3 * s[0], p + 3 * s[1]) <= eps * eps)
    for (int i = 0; i < n; ++i)
      if (dist2(p + 3 * s[0], p + 3 * i) > dist2(p + 3 * s[0], p + 3 * s[1])) s[1] = i;
  const double *a = p + 3 * s[0], *b = p + 3 * s[1];
  double best = 0.0;
  s[2] = -1;
  for (int i = 0; i < n; ++i) { /* |(x - a) x (b - a)| */
    const double *x = p + 3 * i, u[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]}, w[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double c[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double d = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    if (d > best) best = d, s[2] = i;
  }
  if (s[2] < 0) return 0;
  hull_face f;
  face_make(&f, p, s[0], s[1], s[2]);
  best = 0.0;
  s[3] = -1;
  for (int i = 0; i < n; ++i)
    if (fabs(face_dist(&f, p + 3 * i)) > best) best = fabs(face_dist(&f, p + 3 * i)), s[3] = i;
  return s[3] >= 0 && best > eps;
}

/* Adds point q to the hull (faces f[0..*nf)): removes the faces it sees and joins it to their horizon
 * (the visible faces' directed edges whose reverse is not also a visible face's). scratch holds 3 nf
 * edges. Returns the new face count, or -1 when the face buffer (cap) is too small. */
static int add_point(hull_face *f, int nf, int cap, const double *p, int q, double eps, int *edges) {
  int ne = 0, keep = 0;
  for (int i = 0; i < nf; ++i) {
    if (face_dist(&f[i], p + 3 * q) > eps)
      for (int k = 0; k < 3; ++k) edges[2 * ne] = f[i].v[k], edges[2 * ne + 1] = f[i].v[(k + 1) % 3], ne++;
    else f[keep++] = f[i];
  }
  if (ne == 0) return nf;
  for (int e = 0; e < ne; ++e) {
    int twin = 0;
    for (int o = 0; o < ne && !twin; ++o) twin = edges[2 * o] == edges[2 * e + 1] && edges[2 * o + 1] == edges[2 * e];
    if (twin) continue;
    if (keep >= cap) return -1;
    face_make(&f[keep++], p, edges[2 * e], edges[2 * e + 1], q);
  }
  return keep;
}

int grit_hydro_hull(const double *p, int n, int *tri, int maxtri) {
  if (n < 4) return 0;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], p[3 * i + k]), hi[k] = fmax(hi[k], p[3 * i + k]);
  const double eps = 1e-9 * sqrt(dist2(lo, hi));
  int s[4];
  if (!initial_simplex(p, n, eps, s)) return 0;
  const int cap = 2 * n + 8;
  hull_face *f = malloc(sizeof *f * (size_t)cap);
  int *edges = malloc(sizeof(int) * 6 * (size_t)cap);
  if (!f || !edges) {
    free(f), free(edges);
    return 0;
  }
  hull_face t;
  face_make(&t, p, s[0], s[1], s[2]);
  if (face_dist(&t, p + 3 * s[3]) > 0) { /* orient the simplex outwards: s[3] behind (s0, s1, s2) */
    const int x = s[1];
    s[1] = s[2], s[2] = x;
  }
  face_make(&f[0], p, s[0], s[1], s[2]);
  face_make(&f[1], p, s[0], s[3], s[1]);
  face_make(&f[2], p, s[1], s[3], s[2]);
  face_make(&f[3], p, s[2], s[3], s[0]);
  int nf = 4;
  for (int q = 0; q < n && nf > 0; ++q)
    if (q != s[0] && q != s[1] && q != s[2] && q != s[3]) nf = add_point(f, nf, cap, p, q, eps, edges);
  if (nf > maxtri) nf = -1;
  for (int i = 0; i < nf; ++i) memcpy(tri + 3 * i, f[i].v, sizeof f[i].v);
  free(f), free(edges);
  return nf > 0 ? nf : 0;
}
