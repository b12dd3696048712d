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

/* Face f (0 <= f < grit_hydro_rigid_face_count) of the rigid geometry g at (p, R), world: a point fo,
 * the unit normal fn out of the shape, the vertices fv[4] counter-clockwise about fn; returns their
 * number (0: a plane, unbounded). (hydro_generic.h) */
int GS_NAME(grit_hydro_rigid_face)(const grit_model *m, int g, int f, const GS p[3], const GS R[9], GS fo[3],
                                   GS fn[3], GS fv[][3]);

/* The patch of two compliant tetrahedra: ta of a geometry of modulus Ea at (pa, Ra) and tb (Eb, at
 * (pb, Rb)). The polygon is the plane where the two pressures are equal, cut by ta and clipped to tb's
 * four half-spaces; n is its unit normal out of a (along grad pb - grad pa), g the equal pressure's rate
 * as the bodies approach, the two rates along n in series, ga gb / (ga + gb). Returns 1 when the polygon
 * is a constraint (positive area and pressure, each rate above the floor), 0 otherwise.
 * (hydro_pair_generic.h) */
int GS_NAME(grit_hydro_tet_pair_patch)(const double *ta, GS Ea, const GS pa[3], const GS Ra[9], const double *tb,
                                       GS Eb, const GS pb[3], const GS Rb[9], GS_NAME(grit_hydro_patch) * out);
