/* SPDX-License-Identifier: Apache-2.0 */
/* hydro.c — the contact surface of a compliant-hydroelastic geometry against a rigid plane (seed 004,
 * section III): the plane clipped by each tetrahedron it cuts is a triangle or a quad; the linear
 * pressure over it gives the polygon's force exactly at its centroid, f = A p0. Section IV turns each
 * polygon into one point constraint at the centroid, normal the plane's, with stiffness k = g A and
 * signed distance phi0 = -p0 / g, where g > 0 is the pressure's gradient along the normal into the
 * compliant body: then k (-phi0) = A p0, and pressure changes at dp/dt = -g v_n. */
#include "hydro.h"

#include <string.h>

#include "grit/math.h"

#define GRADIENT_FLOOR 1e-3 /* the least g / (E |grad e|) of a polygon that becomes a constraint */

int grit_hydro_capacity(const grit_model *m) {
  int nplane = 0, ntet = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_shape[g].type == GRIT_GEOM_PLANE) nplane++;
    if (m->geom_hydro[g] > 0) ntet += m->geom_hydro_ntet[g];
  }
  return nplane * ntet;
}

/* The polygon where the plane (point o, normal n) cuts the tetrahedron x[4] (world), ordered around
 * its boundary: the points where the edges between the vertices below (s < 0) and above cross it.
 * Returns its number of vertices (3 or 4), 0 when the plane does not cut it. */
static int clip_tet(const double x[4][3], const double s[4], double poly[4][3]) {
  int lo[4], hi[4], nlo = 0, nhi = 0;
  for (int i = 0; i < 4; ++i) {
    if (s[i] < 0) lo[nlo++] = i;
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
    memcpy(e, q, sizeof q);
    ne = 4;
  }
  for (int k = 0; k < ne; ++k) {
    const int a = e[k][0], b = e[k][1];
    const double t = s[a] / (s[a] - s[b]);
    for (int i = 0; i < 3; ++i) poly[k][i] = x[a][i] + t * (x[b][i] - x[a][i]);
  }
  return ne;
}

/* Area and centroid of a planar convex polygon: a fan of triangles from its first vertex. */
static double polygon_area(const double p[4][3], int n, double c[3]) {
  double area = 0.0, acc[3] = {0.0, 0.0, 0.0};
  for (int k = 1; k + 1 < n; ++k) {
    double u[3], v[3], w[3];
    grit_v3_sub(u, p[k], p[0]);
    grit_v3_sub(v, p[k + 1], p[0]);
    grit_v3_cross(w, u, v);
    const double a = 0.5 * grit_v3_norm(w);
    area += a;
    for (int i = 0; i < 3; ++i) acc[i] += a * (p[0][i] + p[k][i] + p[k + 1][i]) / 3.0;
  }
  for (int i = 0; i < 3; ++i) c[i] = area > 0 ? acc[i] / area : p[0][i];
  return area;
}

grit_status grit_hydro_plane_patches(const grit_model *m, int gp, int gs, const double pp[3], const double Rp[9],
                                     const double ps[3], const double Rs[9], grit_contact_candidate *out, int cap,
                                     int *n) {
  const double E = m->geom_hydro[gs];
  const double nrm[3] = {Rp[2], Rp[5], Rp[8]}; /* the plane's outward normal: its frame's z axis */
  const double *tet = m->hydro_tet + GRIT_HYDRO_TET_STRIDE * (size_t)m->geom_hydro_tetadr[gs];
  for (int t = 0; t < m->geom_hydro_ntet[gs]; ++t, tet += GRIT_HYDRO_TET_STRIDE) {
    double x[4][3], s[4], poly[4][3], c[3], grad[3], d[3];
    for (int j = 0; j < 4; ++j) {
      grit_m3_mulv(x[j], Rs, tet + 3 * j);
      grit_v3_add(x[j], x[j], ps);
      grit_v3_sub(d, x[j], pp);
      s[j] = grit_v3_dot(nrm, d);
    }
    const int nv = clip_tet((const double(*)[3])x, s, poly);
    if (nv == 0) continue;
    const double area = polygon_area((const double(*)[3])poly, nv, c);
    grit_m3_mulv(grad, Rs, tet + 12);
    const double g = E * grit_v3_dot(grad, nrm); /* dp/dn into the compliant body */
    grit_v3_sub(d, c, x[0]);
    const double p0 = E * (1.0 + grit_v3_dot(grad, d)); /* e = 1 at the centre x[0] */
    /* Seed 004 keeps only polygons whose pressure grows into the body (k > 0). A tetrahedron on a side
     * face standing on the plane (a coin's rim, a box's bottom edge) has its gradient along the plane, g
     * zero to round-off: its polygon would be a force A p0 that no normal motion relieves (phi0 = -p0/g
     * unbounded), which launched a coin dropped 10 um under SAP (no Hunt & Crossley cut-off). Such
     * polygons are skipped: g must be at least GRADIENT_FLOOR of the steepest rate E |grad e|. */
    if (!(area > 0) || !(g > GRADIENT_FLOOR * E * grit_v3_norm(grad)) || !(p0 > 0)) continue;
    if (*n >= cap) return GRIT_ERR_CAPACITY;
    grit_contact_candidate *q = &out[(*n)++];
    memset(q, 0, sizeof *q);
    q->geom[0] = gp;
    q->geom[1] = gs;
    q->body[0] = m->geom_body[gp];
    q->body[1] = m->geom_body[gs];
    q->pt.phi = -p0 / g;
    for (int i = 0; i < 3; ++i) {
      q->pt.n[i] = nrm[i];
      q->pt.pa[i] = c[i];
      q->pt.pb[i] = c[i];
    }
    q->k_patch = g * area;
  }
  return GRIT_OK;
}
