/* SPDX-License-Identifier: Apache-2.0 */
/* hydro.h — hydroelastic contact (seed 004), internal: the tetrahedral meshes of compliant geometries
 * with their linear pressure field, and the contact patches of such a geometry against a rigid plane,
 * each polygon one point constraint (k = g A, phi0 = -p0 / g). See docs/hydroelastic.md. */
#ifndef GRIT_HYDRO_H
#define GRIT_HYDRO_H

#include "collision.h"
#include "contact_geometry.h"
#include "grit/dual.h"

/* One tetrahedron of a compliant geometry's mesh, in the shape's local frame: its four vertices (the
 * shape's centre first, where e = 1; the other three on the surface, where e = 0) and the gradient of
 * the linear field e over it, 1/m. The pressure is p = E e. */
#define GRIT_HYDRO_TET_STRIDE 15

/* The least g / (E |grad e|) of a polygon that becomes a constraint (hydro_generic.h). */
#define GRIT_HYDRO_GRADIENT_FLOOR 1e-3

#include "grit/detail/scalar_double.h"
#include "hydro_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "hydro_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* Whether a shape type can be compliant-hydroelastic (sphere, box, cylinder, ellipsoid). */
int grit_hydro_shape_supported(grit_geom_type type);

/* The number of tetrahedra of the mesh of `shape` (0 for an unsupported type). */
int grit_hydro_tet_count(const grit_shape *shape);

/* Writes the mesh of `shape`: grit_hydro_tet_count(shape) tetrahedra, GRIT_HYDRO_TET_STRIDE doubles
 * each. (hydro_mesh.c) */
void grit_hydro_mesh_build(const grit_shape *shape, double *tets);

/* Fills the model's hydroelastic storage (geom_hydro, geom_hydro_tetadr, geom_hydro_ntet, hydro_tet,
 * carved for m->nhtet tetrahedra) from the geometry definitions. (hydro_mesh.c) */
void grit_hydro_compile(const grit_geom_def *defs, grit_model *m);

/* The contact workspace the model's patches may need: for each compliant geometry, its tetrahedra
 * times the number of planes (0 for a model without compliant geometries). */
int grit_hydro_capacity(const grit_model *m);

/* Appends to out[*n..] the patch candidates of the rigid plane geometry gp at (pp, Rp) against the
 * compliant geometry gs at (ps, Rs): one per tetrahedron that the plane cuts, with a positive pressure
 * at the polygon's centroid and a positive gradient g along the plane's normal. GRIT_ERR_CAPACITY when
 * more than `cap` candidates would be needed. No allocation. */
grit_status grit_hydro_plane_patches(const grit_model *m, int gp, int gs, const double pp[3], const double Rp[9],
                                     const double ps[3], const double Rs[9], grit_contact_candidate *out, int cap,
                                     int *n);

/* Derivatives (derivatives.c): the patch candidate c re-evaluated by the same code in dual numbers at
 * the poses (pa, Ra) of its rigid geometry c->geom[0] and (pb, Rb) of its compliant one c->geom[1],
 * with the compliant geometry's modulus moduli[c->geom[1]] (dual: the modulus Jacobian): geo's phi
 * (-p0/g), normal, frame and points (both the centroid), and *k = g A. */
void grit_hydro_patch_reevaluate_dual(const grit_model *m, const grit_dual *moduli, const grit_contact_candidate *c,
                                      const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3],
                                      const grit_dual Rb[9], grit_contact_geom_dual *geo, grit_dual *k);

/* The dual moduli of the model's geometries at their values (no partials), for derivatives.c. */
void grit_hydro_moduli_dual(const grit_model *m, grit_dual *moduli);

#endif
