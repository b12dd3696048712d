/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_generic.h — the contact patch of one tetrahedron of a compliant geometry against a rigid face
 * (seed 004, sections III and IV), written once for the scalar GS (included by hydro.c for double and
 * for grit_dual, so the derivatives see the same centroids, areas, k = g A and phi0 = -p0 / g). */

#define HYDRO_MAX_POLY 12 /* a tetrahedron's section (4) clipped by a face of up to 8 edges */

/* The polygon where the plane {s = 0} cuts the tetrahedron x[4] (s the vertices' signed distances),
 * ordered around its boundary: the points where the edges between the vertices below and above cross
 * it. Returns its number of vertices (3 or 4), 0 when the plane does not cut it. */
static int GS_NAME(hydro_section)(const GS x[4][3], const GS s[4], GS poly[][3]) {
  int lo[4], hi[4], nlo = 0, nhi = 0;
  for (int i = 0; i < 4; ++i) {
    if (GS_V(s[i]) < 0) lo[nlo++] = i;
    else hi[nhi++] = i;
  }
  if (nlo == 0 || nhi == 0) return 0;
  int e[4][2], ne = 0;
  if (nlo == 1 || nhi == 1) { /* a triangle: the single vertex's three edges */
    const int one = nlo == 1 ? lo[0] : hi[0];
    const int *rest = nlo == 1 ? hi : lo;
    for (int k = 0; k < 3; ++k) {
      e[ne][0] = one;
      e[ne++][1] = rest[k];
    }
  } else { /* a quad: around the cycle lo0-hi0, lo0-hi1, lo1-hi1, lo1-hi0 */
    const int q[4][2] = {{lo[0], hi[0]}, {lo[0], hi[1]}, {lo[1], hi[1]}, {lo[1], hi[0]}};
    for (int k = 0; k < 4; ++k) e[k][0] = q[k][0], e[k][1] = q[k][1];
    ne = 4;
  }
  for (int k = 0; k < ne; ++k) {
    const int a = e[k][0], b = e[k][1];
    const GS t = GS_DIV(s[a], GS_SUB(s[a], s[b]));
    for (int i = 0; i < 3; ++i) poly[k][i] = GS_FMA(t, GS_SUB(x[b][i], x[a][i]), x[a][i]);
  }
  return ne;
}

/* Keeps the part of the polygon p (n vertices) where d(x) = m . (x - o) >= 0 (Sutherland-Hodgman on
 * one half-plane), in place; returns the new number of vertices. */
static int GS_NAME(hydro_clip_half)(GS p[][3], int n, const GS o[3], const GS m[3]) {
  GS out[HYDRO_MAX_POLY][3], d[HYDRO_MAX_POLY], r[3];
  for (int k = 0; k < n; ++k) {
    GS_NAME(grit_v3_sub)(r, p[k], o);
    d[k] = GS_NAME(grit_v3_dot)(m, r);
  }
  int no = 0;
  for (int k = 0; k < n && no + 2 <= HYDRO_MAX_POLY; ++k) {
    const int l = (k + 1) % n;
    const int ink = GS_V(d[k]) >= 0, inl = GS_V(d[l]) >= 0;
    if (ink) GS_NAME(grit_v3_copy)(out[no++], p[k]);
    if (ink != inl) { /* the edge crosses the line */
      const GS t = GS_DIV(d[k], GS_SUB(d[k], d[l]));
      for (int i = 0; i < 3; ++i) out[no][i] = GS_FMA(t, GS_SUB(p[l][i], p[k][i]), p[k][i]);
      no++;
    }
  }
  for (int k = 0; k < no; ++k) GS_NAME(grit_v3_copy)(p[k], out[k]);
  return no;
}

/* Area and centroid of a planar convex polygon: a fan of triangles from its first vertex. */
static GS GS_NAME(hydro_area)(const GS p[][3], int n, GS c[3]) {
  GS area = GS_C(0.0), acc[3] = {GS_C(0.0), GS_C(0.0), GS_C(0.0)};
  for (int k = 1; k + 1 < n; ++k) {
    GS u[3], v[3], w[3];
    GS_NAME(grit_v3_sub)(u, p[k], p[0]);
    GS_NAME(grit_v3_sub)(v, p[k + 1], p[0]);
    GS_NAME(grit_v3_cross)(w, u, v);
    const GS a = GS_SCALE(GS_NAME(grit_v3_norm)(w), 0.5);
    if (!(GS_V(a) > 0)) continue; /* a degenerate sliver: no area, no direction to differentiate */
    area = GS_ADD(area, a);
    for (int i = 0; i < 3; ++i)
      acc[i] = GS_FMA(a, GS_SCALE(GS_ADD(GS_ADD(p[0][i], p[k][i]), p[k + 1][i]), 1.0 / 3.0), acc[i]);
  }
  for (int i = 0; i < 3; ++i) c[i] = GS_V(area) > 0 ? GS_DIV(acc[i], area) : p[0][i];
  return area;
}

/* Row i of R times the constant local point x: grit_m3_mulv's sum in its order with products by the
 * plain doubles of x (the same double values; on duals the a.v * 0 terms of a product by a constant add
 * nothing to a finite sum: the same numbers but for the sign of a zero, at half the arithmetic). */
static inline GS GS_NAME(hydro_row)(const GS R[3], const double x[3]) {
  return GS_ADD(GS_SCALE(R[0], x[0]), GS_ADD(GS_SCALE(R[1], x[1]), GS_SCALE(R[2], x[2])));
}

/* The tetrahedron's vertices x, world, at the pose (p, R): grit_m3_mulv and grit_v3_add row by row, into
 * an output that aliases neither R nor p (restrict: without it the double instance was vectorised behind
 * run-time overlap checks). */
static void GS_NAME(hydro_tet_points)(const double *restrict tet, const GS *restrict p, const GS *restrict R,
                                      GS (*restrict x)[3]) {
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) x[j][i] = GS_ADD(GS_NAME(hydro_row)(R + 3 * i, tet + 3 * j), p[i]);
}

/* The gradient of the tetrahedron's field e, world, in the orientation R. */
static void GS_NAME(hydro_tet_grad)(const double *restrict tet, const GS *restrict R, GS *restrict grad) {
  for (int i = 0; i < 3; ++i) grad[i] = GS_NAME(hydro_row)(R + 3 * i, tet + 12);
}

/* The steepest rate E |grad e| of a tetrahedron's pressure (the gradient floor's scale). */
static inline double GS_NAME(hydro_steep)(const double *tet, double E) {
  return E * sqrt(tet[12] * tet[12] + tet[13] * tet[13] + tet[14] * tet[14]);
}

int GS_NAME(grit_hydro_tet_patch)(const double *tet, GS E, const GS ps[3], const GS Rs[9], const GS fo[3],
                                  const GS fn[3], const GS *fv, int nfv, GS_NAME(grit_hydro_patch) * out) {
  GS x[4][3], s[4], poly[HYDRO_MAX_POLY][3], d[3], grad[3];
  /* Seed 004 keeps only polygons whose pressure grows into the body (k > 0). A tetrahedron on a side
   * face standing on the plane (a coin's rim, a box's bottom edge) has its gradient along the plane, g
   * zero to round-off: its polygon would be a force A p0 that no normal motion relieves (phi0 = -p0/g
   * unbounded), which launched a coin dropped 10 um under SAP (no Hunt & Crossley cut-off). Such
   * polygons are skipped: g must be at least GRIT_HYDRO_GRADIENT_FLOOR of the steepest rate E |grad e|.
   * g depends on the pose only, not on the polygon: tested first, before the polygon is built (the
   * scan's tet_flat in hydro.c drops most such tetrahedra before this call, with a margin; this is the
   * test itself). */
  GS_NAME(hydro_tet_grad)(tet, Rs, grad);
  out->g = GS_MUL(E, GS_NAME(grit_v3_dot)(grad, fn)); /* dp/dn into the compliant body */
  if (!(GS_V(out->g) > GRIT_HYDRO_GRADIENT_FLOOR * GS_NAME(hydro_steep)(tet, GS_V(E)))) return 0;
  GS_NAME(hydro_tet_points)(tet, ps, Rs, x);
  for (int j = 0; j < 4; ++j) {
    GS_NAME(grit_v3_sub)(d, x[j], fo);
    s[j] = GS_NAME(grit_v3_dot)(fn, d);
  }
  int nv = GS_NAME(hydro_section)((const GS(*)[3])x, s, poly);
  for (int e = 0; e < nfv && nv > 0; ++e) { /* the face's edges: keep the inside, fn x edge */
    const GS *a = fv + 3 * e, *b = fv + 3 * ((e + 1) % nfv);
    GS ed[3], m[3];
    GS_NAME(grit_v3_sub)(ed, b, a);
    GS_NAME(grit_v3_cross)(m, fn, ed);
    nv = GS_NAME(hydro_clip_half)(poly, nv, a, m);
  }
  if (nv < 3) return 0;
  out->area = GS_NAME(hydro_area)((const GS(*)[3])poly, nv, out->c);
  GS_NAME(grit_v3_sub)(d, out->c, x[0]);
  out->p0 = GS_MUL(E, GS_ADDC(GS_NAME(grit_v3_dot)(grad, d), 1.0)); /* e = 1 at the centre x[0] */
  GS_NAME(grit_v3_copy)(out->n, fn);
  if (!(GS_V(out->area) > 0) || !(GS_V(out->p0) > 0)) return 0;
  out->k = GS_MUL(out->g, out->area);
  out->phi = GS_NEG(GS_DIV(out->p0, out->g));
  return 1;
}

/* Face f of a rigid shape at (p, R): a point fo on it, its unit normal fn out of the shape, its
 * vertices fv (counter-clockwise about fn). Returns the vertex count, 0 for a plane (unbounded). The
 * local geometry is constant (hydro_rigid_face_local in hydro.c); only the pose is GS. */
int GS_NAME(grit_hydro_rigid_face)(const grit_model *m, int g, int f, const GS p[3], const GS R[9], GS fo[3],
                                   GS fn[3], GS fv[][3]) {
  double ln[3], lv[4][3];
  const int nfv = grit_hydro_rigid_face_local(m, g, f, ln, lv);
  for (int i = 0; i < 3; ++i) fn[i] = GS_NAME(hydro_row)(R + 3 * i, ln);
  for (int k = 0; k < nfv; ++k)
    for (int i = 0; i < 3; ++i) fv[k][i] = GS_ADD(GS_NAME(hydro_row)(R + 3 * i, lv[k]), p[i]);
  if (nfv > 0) GS_NAME(grit_v3_copy)(fo, fv[0]);
  else GS_NAME(grit_v3_copy)(fo, p); /* a plane through its origin */
  return nfv;
}

#include "hydro_pair_generic.h"

#undef HYDRO_MAX_POLY
