/* SPDX-License-Identifier: Apache-2.0 */
/* hull_exact.c — a convex hull by exact orientation tests, for the hull graph (hull_exact.h).
 *
 * grit_hydro_hull decides visibility with a tolerance (1e-9 of the extent); on many near-coplanar points
 * (Unitree R1's wheel and foot meshes, 735-1433 Qhull vertices) its visible sets stop being one disk, the
 * horizon stops being one loop and the surface falls apart. Here a point sees a face exactly when it lies
 * strictly above the face's plane, decided exactly: a floating-point filter (Shewchuk's bound for the
 * orientation determinant) and, where it cannot tell, the determinant's sign from an exact expansion of
 * its 192 products (two-sum, two-product by fma). With exact signs the incremental hull is the textbook
 * one: the current surface is always a triangulation of the boundary of the convex hull of the points
 * added (coplanar triangles allowed, none degenerate), the faces a point outside sees form one disk, and
 * a point on or inside the surface is not added. Model compile time only (allocates), quadratic. */
#include "hull_exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int v[3];
  double a[3], n[3], nabs[3]; /* v[0]'s point, the normal (b - a) x (c - a), and its products' magnitudes */
} exact_face;

/* a + b = s + t exactly (Knuth's two-sum). */
static void two_sum(double a, double b, double *s, double *t) {
  const double x = a + b, bv = x - a, av = x - bv;
  *s = x, *t = (a - av) + (b - bv);
}

/* e (nonoverlapping, increasing magnitude, m terms) += b: Shewchuk's grow-expansion without zeros. */
static int grow(double *e, int m, double b) {
  double q = b;
  int k = 0;
  for (int i = 0; i < m; ++i) {
    double s, t;
    two_sum(q, e[i], &s, &t);
    if (t != 0.0) e[k++] = t;
    q = s;
  }
  if (q != 0.0) e[k++] = q;
  return k;
}

/* The sign of (q - a) . ((b - a) x (c - a)), exactly: every coordinate difference as a two-term sum,
 * every product of three of them expanded exactly, summed into one expansion whose largest term has the
 * sum's sign. (Exact while nothing underflows: mesh coordinates.) */
static int orient_exact(const double *a, const double *b, const double *c, const double *q) {
  double u[3][2], w[3][2], x[3][2], e[256];
  for (int k = 0; k < 3; ++k) {
    two_sum(b[k], -a[k], &u[k][1], &u[k][0]);
    two_sum(c[k], -a[k], &w[k][1], &w[k][0]);
    two_sum(q[k], -a[k], &x[k][1], &x[k][0]);
  }
  static const int perm[6][4] = {{0, 1, 2, 1}, {0, 2, 1, -1}, {1, 2, 0, 1}, {1, 0, 2, -1}, {2, 0, 1, 1}, {2, 1, 0, -1}};
  int m = 0;
  for (int p = 0; p < 6; ++p) { /* x_i u_j w_k, signed */
    const int i = perm[p][0], j = perm[p][1], k = perm[p][2];
    for (int s = 0; s < 8; ++s) {
      const double xi = x[i][s & 1], uj = u[j][s >> 1 & 1], wk = perm[p][3] * w[k][s >> 2];
      const double p1 = xi * uj, e1 = fma(xi, uj, -p1);
      const double t[4] = {p1 * wk, fma(p1, wk, -p1 * wk), e1 * wk, fma(e1, wk, -e1 * wk)};
      for (int r = 0; r < 4; ++r)
        if (t[r] != 0.0) m = grow(e, m, t[r]);
    }
  }
  double big = 0.0; /* nonoverlapping: the largest term outweighs the others */
  for (int r = 0; r < m; ++r)
    if (fabs(e[r]) > fabs(big)) big = e[r];
  return (big > 0.0) - (big < 0.0);
}

static void face_set(exact_face *f, const double *A, const double *B, const double *C) {
  const double u[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]}, w[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
  memcpy(f->a, A, sizeof f->a);
  f->n[0] = u[1] * w[2] - u[2] * w[1], f->nabs[0] = fabs(u[1] * w[2]) + fabs(u[2] * w[1]);
  f->n[1] = u[2] * w[0] - u[0] * w[2], f->nabs[1] = fabs(u[2] * w[0]) + fabs(u[0] * w[2]);
  f->n[2] = u[0] * w[1] - u[1] * w[0], f->nabs[2] = fabs(u[0] * w[1]) + fabs(u[1] * w[0]);
}

static void face_make(exact_face *f, const double *p, int a, int b, int c) {
  face_set(f, p + 3 * a, p + 3 * b, p + 3 * c);
  f->v[0] = a, f->v[1] = b, f->v[2] = c;
}

/* The sign of q against f's plane (positive: above, f sees q). The determinant computed in floating point
 * as Shewchuk's orient3d computes it (the differences, a sum of three coordinates times differences of two
 * products) is within (7 + 56 eps) eps of its permanent of the exact one (eps = 2^-53); 1e-15 > 9 eps. */
static int side_of(const exact_face *f, const double *A, const double *B, const double *C, const double *Q) {
  const double x[3] = {Q[0] - f->a[0], Q[1] - f->a[1], Q[2] - f->a[2]};
  const double det = x[0] * f->n[0] + x[1] * f->n[1] + x[2] * f->n[2];
  const double bound = 1e-15 * (fabs(x[0]) * f->nabs[0] + fabs(x[1]) * f->nabs[1] + fabs(x[2]) * f->nabs[2]);
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return orient_exact(A, B, C, Q);
}

static int face_side(const exact_face *f, const double *p, int q) {
  return side_of(f, p + 3 * f->v[0], p + 3 * f->v[1], p + 3 * f->v[2], p + 3 * q);
}

int grit_hull_orient(const double a[3], const double b[3], const double c[3], const double q[3]) {
  exact_face f;
  face_set(&f, a, b, c);
  return side_of(&f, a, b, c, q);
}

/* Four points spanning a volume exactly: the extremes along x, the farthest from their line, the farthest
 * from their plane (all three then checked exactly). 0 when every point lies in one plane. */
static int initial_simplex(const double *p, int n, int s[4]) {
  s[0] = s[1] = 0;
  for (int i = 1; i < n; ++i) {
    if (p[3 * i] < p[3 * s[0]]) s[0] = i;
    if (p[3 * i] > p[3 * s[1]]) s[1] = i;
  }
  const double *a = p + 3 * s[0];
  double best = 0.0;
  const int flat_x = s[1] == s[0];
  for (int i = 0; i < n && flat_x; ++i) { /* x all equal: the farthest from s[0] */
    const double d[3] = {p[3 * i] - a[0], p[3 * i + 1] - a[1], p[3 * i + 2] - a[2]}, r = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    if (r > best) best = r, s[1] = i;
  }
  const double *b = p + 3 * s[1];
  best = 0.0, s[2] = -1;
  for (int i = 0; i < n; ++i) {
    const double *x = p + 3 * i, u[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]}, w[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double c[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double d = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    if (d > best) best = d, s[2] = i;
  }
  if (s[2] < 0) return 0;
  exact_face f;
  face_make(&f, p, s[0], s[1], s[2]);
  best = 0.0, s[3] = -1;
  for (int i = 0; i < n; ++i) {
    const double *x = p + 3 * i;
    const double h = fabs((x[0] - f.a[0]) * f.n[0] + (x[1] - f.a[1]) * f.n[1] + (x[2] - f.a[2]) * f.n[2]);
    if (h > best) best = h, s[3] = i;
  }
  if (s[3] < 0 || face_side(&f, p, s[3]) == 0) return 0; /* (also catches a collinear first three) */
  if (face_side(&f, p, s[3]) > 0) { /* orient outwards: s[3] below (s0, s1, s2) */
    const int t = s[1];
    s[1] = s[2], s[2] = t;
  }
  return 1;
}

/* Adds point q to the surface f[0..nf): removes the faces that see q and joins q to their horizon (their
 * directed edges whose reverse belongs to no removed face: one loop, with exact signs). Returns the new
 * face count, or -1 past cap. */
static int add_point(exact_face *f, int nf, int cap, const double *p, int q, int *edges) {
  int ne = 0, keep = 0;
  for (int i = 0; i < nf; ++i) {
    if (face_side(&f[i], p, q) > 0)
      for (int k = 0; k < 3; ++k) edges[2 * ne] = f[i].v[k], edges[2 * ne + 1] = f[i].v[(k + 1) % 3], ne++;
    else f[keep++] = f[i];
  }
  for (int e = 0; e < ne; ++e) {
    int twin = 0;
    for (int o = 0; o < ne && !twin; ++o) twin = edges[2 * o] == edges[2 * e + 1] && edges[2 * o + 1] == edges[2 * e];
    if (twin) continue;
    if (keep >= cap) return -1;
    face_make(&f[keep++], p, edges[2 * e], edges[2 * e + 1], q);
  }
  return keep;
}

int grit_hull_exact(const double *p, int n, int *tri, int maxtri) {
  int s[4];
  if (n < 4 || !initial_simplex(p, n, s)) return 0;
  const int cap = 2 * n + 8; /* a triangulated sphere of V vertices has 2 V - 4 faces */
  exact_face *f = malloc(sizeof *f * (size_t)cap);
  int *edges = malloc(sizeof(int) * 6 * (size_t)cap);
  int nf = 0;
  if (f && edges) {
    face_make(&f[0], p, s[0], s[1], s[2]);
    face_make(&f[1], p, s[0], s[3], s[1]);
    face_make(&f[2], p, s[1], s[3], s[2]);
    face_make(&f[3], p, s[2], s[3], s[0]);
    nf = 4;
    for (int q = 0; q < n && nf > 0; ++q)
      if (q != s[0] && q != s[1] && q != s[2] && q != s[3]) nf = add_point(f, nf, cap, p, q, edges);
    if (nf > maxtri) nf = -1;
    for (int i = 0; i < nf; ++i) memcpy(tri + 3 * i, f[i].v, sizeof f[i].v);
  }
  free(f), free(edges);
  return nf > 0 ? nf : 0;
}
