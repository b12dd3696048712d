/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_mesh.c — the tetrahedral meshes of compliant-hydroelastic primitives (see hydro.h): the
 * shape's surface is triangulated and every surface triangle is joined to the shape's centre. The
 * field e is 1 at the centre and 0 on the surface, linear on each tetrahedron, so under a flat face the
 * pressure grows linearly with depth, the same over the whole face (a coin's face presses uniformly,
 * the case of seed 004's analytical sliding and spinning disk). */
#include <math.h>
#include <stddef.h>

#include "hydro.h"

/* Resolutions: a sphere's (and ellipsoid's) latitude bands and longitudes; a cylinder's sectors; a box
 * face's squares per edge. A cylinder's cap is a fan of CYL_SECT triangles from its centre, seed 004's
 * coin (152). Not refined radially: one point per polygon puts a fan's patches on the ring at 2R/3,
 * whose coupled sliding and spinning is attracted to eps*_disc = 0.6442 about four times as fast per
 * decade of speed as the exact uniform disk's (docs/hydroelastic.md); rings of polygons move the
 * quadrature towards the exact disk, which from eps0 = 0.25 is still at 0.62 at a thousandth of the
 * start speed. */
enum { SPH_LAT = 12, SPH_LON = 24, CYL_SECT = 152, BOX_DIV = 4 };

static const double PI = 3.14159265358979323846;

int grit_hydro_shape_supported(grit_geom_type t) {
  return t == GRIT_GEOM_SPHERE || t == GRIT_GEOM_BOX || t == GRIT_GEOM_CYLINDER || t == GRIT_GEOM_ELLIPSOID;
}

int grit_hydro_tet_count(const grit_shape *s) {
  switch (s->type) {
    case GRIT_GEOM_SPHERE:
    case GRIT_GEOM_ELLIPSOID: return 2 * SPH_LON + 2 * SPH_LON * (SPH_LAT - 2);
    case GRIT_GEOM_CYLINDER: return 4 * CYL_SECT; /* two cap fans, the side's quads */
    case GRIT_GEOM_BOX: return 6 * 2 * BOX_DIV * BOX_DIV;
    default: return 0;
  }
}

/* The tetrahedron (origin, a, b, c) and the gradient of the field that is 1 at the origin and 0 at a,
 * b, c: grad e = -(a x b + b x c + c x a) / (a . (b x c)), the inward normal of the face over the
 * centre's distance to it. */
static double *put_tet(double *t, const double a[3], const double b[3], const double c[3]) {
  const double *v[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) t[i] = 0.0;
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) t[3 + 3 * k + i] = v[k][i];
  const double bc[3] = {b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]};
  const double ab[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  const double ca[3] = {c[1] * a[2] - c[2] * a[1], c[2] * a[0] - c[0] * a[2], c[0] * a[1] - c[1] * a[0]};
  const double vol6 = a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2];
  for (int i = 0; i < 3; ++i) t[12 + i] = -(ab[i] + bc[i] + ca[i]) / vol6;
  return t + GRIT_HYDRO_TET_STRIDE;
}

/* Two triangles of the quad (a, b, c, d). */
static double *put_quad(double *t, const double a[3], const double b[3], const double c[3], const double d[3]) {
  t = put_tet(t, a, b, c);
  return put_tet(t, a, c, d);
}

/* Latitude-longitude sphere scaled by the semi-axes r. */
static void ellipsoid_mesh(const double r[3], double *t) {
  for (int i = 0; i < SPH_LAT; ++i) {
    const double t0 = PI * i / SPH_LAT, t1 = PI * (i + 1) / SPH_LAT;
    for (int j = 0; j < SPH_LON; ++j) {
      const double f0 = 2 * PI * j / SPH_LON, f1 = 2 * PI * (j + 1) / SPH_LON;
      double p[4][3];
      const double th[4] = {t0, t0, t1, t1}, ph[4] = {f0, f1, f1, f0};
      for (int k = 0; k < 4; ++k) {
        p[k][0] = r[0] * sin(th[k]) * cos(ph[k]);
        p[k][1] = r[1] * sin(th[k]) * sin(ph[k]);
        p[k][2] = r[2] * cos(th[k]);
      }
      if (i == 0) t = put_tet(t, p[0], p[2], p[3]);                /* north cap: p0 = p1 = pole */
      else if (i == SPH_LAT - 1) t = put_tet(t, p[0], p[1], p[2]); /* south cap: p2 = p3 = pole */
      else t = put_quad(t, p[0], p[1], p[2], p[3]);
    }
  }
}

/* A point of a cylinder (radius r, half-length h) at height z: on the axis (k = 0) or the rim (k = 1),
 * sector j. */
static void cyl_point(double p[3], double r, double z, int k, int j) {
  const double rho = r * k, f = 2 * PI * j / CYL_SECT;
  p[0] = rho * cos(f);
  p[1] = rho * sin(f);
  p[2] = z;
}

static void cylinder_mesh(double r, double h, double *t) {
  for (int side = 0; side < 2; ++side) { /* caps: a fan at the axis */
    const double z = side ? h : -h;
    for (int j = 0; j < CYL_SECT; ++j) {
      double a[3], b[3], c[3];
      cyl_point(a, r, z, 0, j);
      cyl_point(b, r, z, 1, j);
      cyl_point(c, r, z, 1, j + 1);
      t = put_tet(t, a, b, c);
    }
  }
  for (int j = 0; j < CYL_SECT; ++j) { /* the side */
    double a[3], b[3], c[3], d[3];
    cyl_point(a, r, -h, 1, j);
    cyl_point(b, r, -h, 1, j + 1);
    cyl_point(c, r, h, 1, j + 1);
    cyl_point(d, r, h, 1, j);
    t = put_quad(t, a, b, c, d);
  }
}

/* Each face of the box, BOX_DIV x BOX_DIV squares. */
static void box_mesh(const double hs[3], double *t) {
  for (int ax = 0; ax < 3; ++ax)
    for (int side = 0; side < 2; ++side) {
      const int u = (ax + 1) % 3, v = (ax + 2) % 3;
      for (int i = 0; i < BOX_DIV; ++i)
        for (int j = 0; j < BOX_DIV; ++j) {
          double p[4][3];
          const int di[4] = {0, 1, 1, 0}, dj[4] = {0, 0, 1, 1};
          for (int k = 0; k < 4; ++k) {
            p[k][ax] = side ? hs[ax] : -hs[ax];
            p[k][u] = hs[u] * (-1.0 + 2.0 * (i + di[k]) / BOX_DIV);
            p[k][v] = hs[v] * (-1.0 + 2.0 * (j + dj[k]) / BOX_DIV);
          }
          t = put_quad(t, p[0], p[1], p[2], p[3]);
        }
    }
}

void grit_hydro_mesh_build(const grit_shape *s, double *tets) {
  switch (s->type) {
    case GRIT_GEOM_SPHERE: {
      const double r[3] = {s->size[0], s->size[0], s->size[0]};
      ellipsoid_mesh(r, tets);
      break;
    }
    case GRIT_GEOM_ELLIPSOID: ellipsoid_mesh(s->size, tets); break;
    case GRIT_GEOM_CYLINDER: cylinder_mesh(s->size[0], s->size[1], tets); break;
    case GRIT_GEOM_BOX: box_mesh(s->size, tets); break;
    default: break;
  }
}

void grit_hydro_compile(const grit_geom_def *defs, grit_model *m) {
  int adr = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    const int n = defs[g].hydro_modulus > 0 ? grit_hydro_tet_count(&defs[g].shape) : 0;
    m->geom_hydro[g] = n > 0 ? defs[g].hydro_modulus : 0.0;
    m->geom_hydro_tetadr[g] = adr;
    m->geom_hydro_ntet[g] = n;
    if (n > 0) grit_hydro_mesh_build(&defs[g].shape, m->hydro_tet + GRIT_HYDRO_TET_STRIDE * (size_t)adr);
    adr += n;
  }
}
