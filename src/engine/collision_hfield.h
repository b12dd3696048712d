/* SPDX-License-Identifier: Apache-2.0 */
/* collision_hfield.h — narrow phase of a height field against a convex shape (internal).
 *
 * As MuJoCo: every grid cell under the other shape's bounding box is two triangular prisms, from the
 * field's base up to its surface, and each prism is collided with the shape as a convex polytope on the
 * GJK/EPA path (collision_narrow.h). Where the prism's deepest contact is on its top face (the normal is
 * the triangle's), the triangle's plane is collided instead in closed form, and the points found whose
 * foot lies on that triangle are kept: a flat field then gives a plane's contacts (a box's corners), and
 * those points are PLANE features for the derivatives. See docs/collision.md. */
#ifndef GRIT_COLLISION_HFIELD_H
#define GRIT_COLLISION_HFIELD_H

#include "contact_point.h"
#include "grit/geometry.h"
#include "grit/status.h"

/* The most candidates grit_collide_hfield returns for one pair (the deepest are kept). */
#define GRIT_HFIELD_MAX_POINTS 8

/* The candidates (at most GRIT_HFIELD_MAX_POINTS, the deepest) of height field h at (ph, Rh), as shape
 * a, against the convex shape o at (po, Ro), as shape b, whose signed distance is below margin: n points
 * from the field to o. No allocation. GRIT_ERR_UNSUPPORTED if o is a plane or a height field. */
grit_status grit_collide_hfield(const grit_shape *h, const double ph[3], const double Rh[9], const grit_shape *o,
                                const double po[3], const double Ro[9], double margin, grit_contact_point *out,
                                int *n_out);

/* The same with a choice of path: all_prisms = 1 sends every prism through GJK/EPA (the old path); 0
 * (grit_collide_hfield) first skips the prisms whose GJK/EPA candidate is certain to be absent or
 * dropped (collision_hfield.c, hf_prism_idle); *idle (if idle is not NULL) counts those prisms. */
grit_status grit_collide_hfield_paths(const grit_shape *h, const double ph[3], const double Rh[9],
                                      const grit_shape *o, const double po[3], const double Ro[9], double margin,
                                      grit_contact_point *out, int *n_out, int all_prisms, int *idle);

#endif
