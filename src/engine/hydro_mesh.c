/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_mesh.c — the tetrahedral meshes of compliant-hydroelastic geometries (see hydro.h): a
 * primitive's surface is triangulated and every surface triangle is joined to the shape's centre (a
 * capsule's hemispheres to the ends of its axis, its side to the whole axis; a convex mesh's hull
 * triangles to an interior point). The field e is 1 there and 0 on the surface, linear on each
 * tetrahedron, so under a flat face the pressure grows linearly with depth, the same over the whole face
 * (a coin's face presses uniformly, the case of seed 004's analytical sliding and spinning disk). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

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
  return t == GRIT_GEOM_SPHERE || t == GRIT_GEOM_BOX || t == GRIT_GEOM_CYLINDER || t == GRIT_GEOM_ELLIPSOID ||
         t == GRIT_GEOM_CAPSULE || t == GRIT_GEOM_CONVEX;
}

/* The hull triangles of a convex shape (malloc'ed, NULL when degenerate); *nt their number. */
static int *convex_hull(const grit_shape *s, int *nt) {
  const int cap = 2 * s->nvert;
  int *tri = malloc(sizeof(int) * 3 * (size_t)(cap > 4 ? cap : 4));
  *nt = tri ? grit_hydro_hull(s->vertices, s->nvert, tri, cap) : 0;
  if (*nt == 0) free(tri);
  return *nt ? tri : NULL;
}

int grit_hydro_tet_count(const grit_shape *s) {
  switch (s->type) {
    case GRIT_GEOM_SPHERE:
    case GRIT_GEOM_ELLIPSOID: return 2 * SPH_LON + 2 * SPH_LON * (SPH_LAT - 2);
    case GRIT_GEOM_CYLINDER: return 4 * CYL_SECT; /* two cap fans, the side's quads */
    case GRIT_GEOM_BOX: return 6 * 2 * BOX_DIV * BOX_DIV;
    case GRIT_GEOM_CAPSULE: return 2 * SPH_LON + 2 * SPH_LON * (SPH_LAT - 2) + 3 * SPH_LON; /* + side wedges */
    case GRIT_GEOM_CONVEX: {
      int nt = 0;
      free(convex_hull(s, &nt));
      return nt;
    }
    default: return 0;
  }
}

/* The tetrahedron x[4] with the field e[4], e[0] = 1 (vertex 0 is where the pressure is largest): its
 * vertices, the gradient of the linear e, from grad . (x_i - x_0) = e_i - 1 (the inverse of the matrix
 * of rows r_i = x_i - x_0 has the columns r2 x r3, r3 x r1, r1 x r2 over its determinant), and its
 * bounding box. */
static double *put_tet_e(double *t, const double *x[4], const double e[4]) {
  double r[3][3], c[3][3];
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i) t[3 * k + i] = x[k][i];
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) r[k][i] = x[k + 1][i] - x[0][i];
  for (int k = 0; k < 3; ++k) {
    const double *a = r[(k + 1) % 3], *b = r[(k + 2) % 3];
    c[k][0] = a[1] * b[2] - a[2] * b[1];
    c[k][1] = a[2] * b[0] - a[0] * b[2];
    c[k][2] = a[0] * b[1] - a[1] * b[0];
  }
  const double det = r[0][0] * c[0][0] + r[0][1] * c[0][1] + r[0][2] * c[0][2];
  for (int i = 0; i < 3; ++i) t[12 + i] = ((e[1] - 1) * c[0][i] + (e[2] - 1) * c[1][i] + (e[3] - 1) * c[2][i]) / det;
  for (int i = 0; i < 3; ++i) {
    t[15 + i] = fmin(fmin(x[0][i], x[1][i]), fmin(x[2][i], x[3][i]));
    t[18 + i] = fmax(fmax(x[0][i], x[1][i]), fmax(x[2][i], x[3][i]));
  }
  return t + GRIT_HYDRO_TET_STRIDE;
}

/* The tetrahedron (o, a, b, c): e = 1 at o, 0 at the surface triangle a, b, c, so grad e is the
 * triangle's inward normal over o's distance to its plane. */
static double *put_fan(double *t, const double o[3], const double a[3], const double b[3], const double c[3]) {
  const double *x[4] = {o, a, b, c}, e[4] = {1, 0, 0, 0};
  return put_tet_e(t, x, e);
}

/* The tetrahedron (origin, a, b, c), the shape's centre first. */
static double *put_tet(double *t, const double a[3], const double b[3], const double c[3]) {
  static const double o[3] = {0, 0, 0};
  return put_fan(t, o, a, b, c);
}

/* Two triangles of the quad (a, b, c, d). */
static double *put_quad(double *t, const double a[3], const double b[3], const double c[3], const double d[3]) {
  t = put_tet(t, a, b, c);
  return put_tet(t, a, c, d);
}

/* Latitude-longitude sphere scaled by the semi-axes r, bands i0 <= i < i1, shifted by dz, fanned to
 * (0, 0, dz). Returns the end of what it wrote. */
static double *ellipsoid_bands(const double r[3], int i0, int i1, double dz, double *t) {
  const double o[3] = {0, 0, dz};
  for (int i = i0; i < i1; ++i) {
    const double t0 = PI * i / SPH_LAT, t1 = PI * (i + 1) / SPH_LAT;
    for (int j = 0; j < SPH_LON; ++j) {
      const double f0 = 2 * PI * j / SPH_LON, f1 = 2 * PI * (j + 1) / SPH_LON;
      double p[4][3];
      const double th[4] = {t0, t0, t1, t1}, ph[4] = {f0, f1, f1, f0};
      for (int k = 0; k < 4; ++k) {
        p[k][0] = r[0] * sin(th[k]) * cos(ph[k]);
        p[k][1] = r[1] * sin(th[k]) * sin(ph[k]);
        p[k][2] = r[2] * cos(th[k]) + dz;
      }
      if (i == 0) t = put_fan(t, o, p[0], p[2], p[3]);                /* north cap: p0 = p1 = pole */
      else if (i == SPH_LAT - 1) t = put_fan(t, o, p[0], p[1], p[2]); /* south cap: p2 = p3 = pole */
      else t = put_fan(t, o, p[0], p[1], p[2]), t = put_fan(t, o, p[0], p[2], p[3]);
    }
  }
  return t;
}

static void ellipsoid_mesh(const double r[3], double *t) { ellipsoid_bands(r, 0, SPH_LAT, 0.0, t); }

/* A capsule (radius r, half-length h along z) with the field of the distance to its surface over r:
 * e = 1 on the axis segment (its spine), 0 on the surface. Each hemisphere is fanned to its end of the
 * spine (e = 1 - distance from that end / r); the side between the equators is, per longitude, the
 * prism between the spine and the side's face, cut into three tetrahedra that all hold the lower end A
 * of the spine (the third also the upper end B): on each the field is 1 minus the distance to the
 * side's plane over the spine's distance to it, so a capsule lying on a plane presses uniformly along
 * its length. The prisms' diagonals A-b(j+1) match their neighbours' (a conforming mesh). */
static void capsule_mesh(double r, double h, double *t) {
  const double rr[3] = {r, r, r};
  t = ellipsoid_bands(rr, 0, SPH_LAT / 2, h, t);
  t = ellipsoid_bands(rr, SPH_LAT / 2, SPH_LAT, -h, t);
  const double A[3] = {0, 0, -h}, B[3] = {0, 0, h};
  for (int j = 0; j < SPH_LON; ++j) {
    const double f0 = 2 * PI * j / SPH_LON, f1 = 2 * PI * (j + 1) / SPH_LON;
    const double a0[3] = {r * cos(f0), r * sin(f0), -h}, a1[3] = {r * cos(f1), r * sin(f1), -h};
    const double b0[3] = {a0[0], a0[1], h}, b1[3] = {a1[0], a1[1], h};
    t = put_fan(t, A, a0, a1, b1);
    t = put_fan(t, A, a0, b1, b0);
    const double *x[4] = {A, b0, b1, B}, e[4] = {1, 0, 0, 1};
    t = put_tet_e(t, x, e);
  }
}

/* A convex shape: its hull's triangles fanned to the mean of the hull's points (inside the hull), e = 1
 * there. Under each face the field is 1 minus the depth over that point's distance to the face's plane
 * (the distance field of a star-shaped body seen from one point); its triangles keep the hull's outward
 * order, so a rigid convex partner's faces are its tetrahedra's surface triangles (hydro.c). */
static void convex_mesh(const grit_shape *s, double *t) {
  int nt = 0;
  int *tri = convex_hull(s, &nt);
  if (!tri) return;
  double o[3] = {0, 0, 0};
  for (int k = 0; k < 3 * nt; ++k)
    for (int i = 0; i < 3; ++i) o[i] += s->vertices[3 * tri[k] + i] / (3.0 * nt);
  for (int k = 0; k < nt; ++k)
    t = put_fan(t, o, s->vertices + 3 * tri[3 * k], s->vertices + 3 * tri[3 * k + 1], s->vertices + 3 * tri[3 * k + 2]);
  free(tri);
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
    case GRIT_GEOM_CAPSULE: capsule_mesh(s->size[0], s->size[1], tets); break;
    case GRIT_GEOM_CONVEX: convex_mesh(s, tets); break;
    default: break;
  }
}

/* Whether any geometry is compliant: only then do rigid convex geometries get their hull (as tetrahedra
 * whose surface triangles are the faces a compliant partner is clipped by). */
static int any_compliant(const grit_geom_def *defs, int ngeom) {
  for (int g = 0; g < ngeom; ++g)
    if (defs[g].hydro_modulus > 0 && grit_hydro_shape_supported(defs[g].shape.type)) return 1;
  return 0;
}

static int geom_tets(const grit_geom_def *d, int any) {
  if (d->hydro_modulus > 0) return grit_hydro_tet_count(&d->shape);
  return any && d->shape.type == GRIT_GEOM_CONVEX ? grit_hydro_tet_count(&d->shape) : 0;
}

int grit_hydro_model_tets(const grit_geom_def *defs, int ngeom) {
  const int any = any_compliant(defs, ngeom);
  int n = 0;
  for (int g = 0; g < ngeom && any; ++g) n += geom_tets(&defs[g], any);
  return n;
}

void grit_hydro_compile(const grit_geom_def *defs, grit_model *m) {
  int adr = 0;
  const int any = any_compliant(defs, m->ngeom);
  for (int g = 0; g < m->ngeom; ++g) {
    const int n = geom_tets(&defs[g], any);
    m->geom_hydro[g] = n > 0 ? defs[g].hydro_modulus : 0.0;
    m->geom_hydro_tetadr[g] = adr;
    m->geom_hydro_ntet[g] = n;
    if (n > 0) grit_hydro_mesh_build(&defs[g].shape, m->hydro_tet + GRIT_HYDRO_TET_STRIDE * (size_t)adr);
    adr += n;
  }
}
