/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_decl_generic.h — types and prototypes of the scalar-generic contact patch of one tetrahedron
 * (hydro_generic.h), instantiated by hydro.h for double (the step) and for grit_dual (derivatives). */

/* One polygon of the contact surface as seed 004's point constraint. */
typedef struct GS_NAME(grit_hydro_patch) {
  GS c[3];  /* the polygon's centroid, world, m */
  GS n[3];  /* the rigid face's unit normal, world, out of the rigid geometry (into the compliant one) */
  GS area;  /* m^2 */
  GS p0;    /* pressure at the centroid, Pa */
  GS g;     /* the pressure's gradient along n, Pa/m */
  GS k;     /* stiffness g A, N/m */
  GS phi;   /* -p0 / g, m */
} GS_NAME(grit_hydro_patch);

/* The patch of the tetrahedron `tet` (GRIT_HYDRO_TET_STRIDE doubles, the compliant shape's frame) of a
 * geometry of modulus E at (ps, Rs), against the rigid face through the world point fo with unit normal
 * fn (out of the rigid geometry): the face's plane clipped by the tetrahedron, then by the face's
 * nfv-gon fv (world, counter-clockwise about fn; nfv = 0: an unbounded plane). Returns 1 when the
 * polygon is a constraint (positive area, pressure and gradient; see hydro.c), 0 otherwise. Every
 * branch follows the values only, so the dual instance has the double one's topology. */
int GS_NAME(grit_hydro_tet_patch)(const double *tet, GS E, const GS ps[3], const GS Rs[9], const GS fo[3],
                                  const GS fn[3], const GS *fv, int nfv, GS_NAME(grit_hydro_patch) * out);

/* Face f (0 <= f < grit_hydro_rigid_face_count) of the rigid shape sh at (p, R), world: a point fo, the
 * unit normal fn out of the shape, the vertices fv[4] counter-clockwise about fn; returns their number
 * (0: a plane, unbounded). (hydro_generic.h) */
int GS_NAME(grit_hydro_rigid_face)(const grit_shape *sh, int f, const GS p[3], const GS R[9], GS fo[3], GS fn[3],
                                   GS fv[][3]);
