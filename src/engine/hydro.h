/* SPDX-License-Identifier: Apache-2.0 */
/* hydro.h — hydroelastic contact (seed 004), internal: the tetrahedral meshes of compliant geometries
 * with their linear pressure field, and the contact patches of such a geometry against a rigid one or
 * another compliant one, each polygon one point constraint (k = g A, phi0 = -p0 / g). See
 * docs/hydroelastic.md. */
#ifndef GRIT_HYDRO_H
#define GRIT_HYDRO_H

#include "contact_candidate.h"
#include "contact_geometry.h"
#include "grit/dual.h"
#include "model_internal.h"

/* One tetrahedron of a compliant geometry's mesh, in the shape's local frame: its four vertices (the
 * first where e = 1: the shape's centre, a capsule's spine, a convex mesh's interior point; at least
 * two of the others on the surface, where e = 0), the gradient of the linear field e over it, 1/m, and
 * its bounding box (lo, hi). The pressure is p = E e. A rigid convex geometry of a model with compliant
 * geometries has the same mesh, for its faces (the surface triangles, vertices 1..3). */
#define GRIT_HYDRO_TET_STRIDE 21

/* Patch candidates per compliant tetrahedron (pairs of compliant geometries) and per rigid face
 * (grit_hydro_capacity). */
#define GRIT_HYDRO_PAIR_CAPACITY 4

/* The least g / (E |grad e|) of a polygon that becomes a constraint (hydro_generic.h). */
#define GRIT_HYDRO_GRADIENT_FLOOR 1e-3

/* A rigid partner's surface as planar faces: a plane is one unbounded face, a box its six, a sphere the
 * GRIT_HYDRO_RIGID_LAT x GRIT_HYDRO_RIGID_LON faces of its inscribed latitude-longitude polyhedron
 * (trapezoids, triangles at the poles), an ellipsoid the same scaled by its semi-axes, a capsule the
 * sphere's with its hemispheres apart and a band of GRIT_HYDRO_RIGID_LON side faces between them, a
 * cylinder an inscribed GRIT_HYDRO_RIGID_LON-gon prism (each cap a fan of triangles from its centre), a
 * convex mesh its hull's triangles. 0 for a geometry that cannot be a rigid partner (a height field). */
#define GRIT_HYDRO_RIGID_LAT 12
#define GRIT_HYDRO_RIGID_LON 24
int grit_hydro_rigid_face_count(const grit_model *m, int g);

/* Face f of geometry g in its local frame: unit normal ln out of the shape and the vertices lv
 * (counter-clockwise about ln); returns their number (0 for a plane, whose face is z = 0, normal +z). */
int grit_hydro_rigid_face_local(const grit_model *m, int g, int f, double ln[3], double lv[4][3]);

/* The outward triangles (3 point indices each, counter-clockwise seen from outside) of the convex hull
 * of the n points p (3 doubles each): returns their number, 0 when the points span no volume or more
 * than maxtri would be needed (2 n suffices). Model compile time only (allocates). (hydro_hull.c) */
int grit_hydro_hull(const double *p, int n, int *tri, int maxtri);

#include "grit/detail/scalar_double.h"
#include "hydro_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "hydro_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* Whether a shape type can be compliant-hydroelastic (sphere, box, cylinder, ellipsoid, capsule, convex
 * mesh). */
int grit_hydro_shape_supported(grit_geom_type type);

/* The number of tetrahedra of the mesh of `shape` (0 for an unsupported type). */
int grit_hydro_tet_count(const grit_shape *shape);

/* Writes the mesh of `shape`: grit_hydro_tet_count(shape) tetrahedra, GRIT_HYDRO_TET_STRIDE doubles
 * each. (hydro_mesh.c) */
void grit_hydro_mesh_build(const grit_shape *shape, double *tets);

/* The tetrahedra a model of these geometries stores: the compliant ones' meshes and, when there is a
 * compliant geometry, the rigid convex ones' (their faces). (hydro_mesh.c) */
int grit_hydro_model_tets(const grit_geom_def *defs, int ngeom);

/* Fills the model's hydroelastic storage (geom_hydro, geom_hydro_tetadr, geom_hydro_ntet, hydro_tet,
 * carved for m->nhtet tetrahedra) from the geometry definitions. (hydro_mesh.c) */
void grit_hydro_compile(const grit_geom_def *defs, grit_model *m);

/* The contact workspace the model's patches may need: the compliant geometries' tetrahedra times the
 * planes plus twice the other rigid partners (a tetrahedron near a box's edge is cut by two faces), plus
 * GRIT_HYDRO_PAIR_CAPACITY per rigid non-plane face and, with two compliant geometries or more, per
 * compliant tetrahedron; 0 for a model without compliant geometries. A step that needs more fails with
 * GRIT_ERR_CAPACITY (options.max_contacts raises it). */
int grit_hydro_capacity(const grit_model *m);

/* Whether the pair (ga, gb) touches by patches: both compliant (the equal-pressure surface), or one
 * compliant and the other rigid with faces (grit_hydro_rigid_face_count > 0); then puts the rigid one
 * in *ga (the normal points out of it). */
int grit_hydro_pair(const grit_model *m, int *ga, int *gb);

/* Appends to out[*n..] the patch candidates of the rigid geometry gr at (pr, Rr) against the compliant
 * geometry gs at (ps, Rs): one per (face, tetrahedron) whose polygon has a positive area, pressure and
 * gradient g along the face's normal. When gr is compliant too, one per pair of tetrahedra whose
 * equal-pressure polygon is a constraint (hydro_pair.c); patch_tet is then gr's tetrahedron and
 * patch_face gs's. GRIT_ERR_CAPACITY when more than `cap` candidates would be needed. No allocation. */
grit_status grit_hydro_patches(const grit_model *m, int gr, int gs, const double pr[3], const double Rr[9],
                               const double ps[3], const double Rs[9], grit_contact_candidate *out, int cap, int *n);

/* Derivatives (derivatives.c): the patch candidate c re-evaluated by the same code in dual numbers at
 * the poses (pa, Ra) of its first geometry c->geom[0] (rigid, or compliant: then the pair's
 * equal-pressure polygon) and (pb, Rb) of its compliant one c->geom[1], with the compliant geometries'
 * moduli from `moduli` (dual: the modulus Jacobians): geo's phi (-p0/g), normal, frame and points (both
 * the centroid), and *k = g A. */
void grit_hydro_patch_reevaluate_dual(const grit_model *m, const grit_dual *moduli, const grit_contact_candidate *c,
                                      const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3],
                                      const grit_dual Rb[9], grit_contact_geom_dual *geo, grit_dual *k);

/* The dual moduli of the model's geometries at their values (no partials), for derivatives.c. */
void grit_hydro_moduli_dual(const grit_model *m, grit_dual *moduli);

#endif
