/* SPDX-License-Identifier: Apache-2.0 */
/* collision_narrow.h — narrow phase: contact candidates between two shapes at world poses (internal).
 *
 * grit_collide finds the candidates of a pair whose signed distance phi is below a margin, separated
 * pairs included (seed 000 keeps every pair with phi < 10 cm). Closed forms serve the pairs that have
 * them; every other convex pair goes through GJK (separated) and EPA (penetrating) on the shapes'
 * support functions (collision_gjk.c). See docs/collision.md.
 *
 * Poses: a shape's local point x is at p + R x in the world (R row-major 3x3 rotation). The "local"
 * witness points below are in the frame of the pose given for that shape, so they can be held fixed
 * to it when the contact is re-evaluated for derivatives (contact_geometry.h). */
#ifndef GRIT_COLLISION_NARROW_H
#define GRIT_COLLISION_NARROW_H

#include "grit/geometry.h"
#include "grit/status.h"

/* The kind of feature of a shape that a contact's witness point lies on, for derivatives
 * (contact_geometry.h): its core is a point, a line or a plane held fixed to the shape, and the witness
 * point is the core point nearest the other feature, offset by the feature's radius along the normal.
 * A sphere is a point with its radius; a capsule's axis a line (or an end point) with its radius; a
 * box's face a plane, its edge a line, its corner a point, radius 0; a plane a plane. */
typedef enum grit_feature_kind {
  GRIT_FEATURE_POINT = 0,
  GRIT_FEATURE_LINE = 1,
  GRIT_FEATURE_PLANE = 2,
  /* Against a plane only, points that slide over the shape as it turns: */
  GRIT_FEATURE_RIM = 3,    /* a point of a circle (a cylinder's rim: centre p, axis u, q = (radius, cos,
                              sin)) at the given angle from the circle's point deepest into the plane */
  GRIT_FEATURE_SUPPORT = 4 /* an ellipsoid's point deepest into the plane (centre p, q = semi-axes) */
} grit_feature_kind;

/* One contact candidate between shape a and shape b. pb - pa = phi n (to round-off). */
typedef struct grit_contact_point {
  double phi;         /* signed distance, m: > 0 separated, < 0 penetrating (minus the depth) */
  double n[3];        /* unit normal, world, pointing from a towards b */
  double pa[3];       /* witness point on the surface of a, world, m (in penetration: a's deepest point) */
  double pb[3];       /* witness point on the surface of b, world, m */
  double pa_local[3]; /* pa in a's local frame, m */
  double pb_local[3]; /* pb in b's local frame, m */
  double n_local[3];  /* n in a's local frame */
  /* features for derivatives, in each shape's local frame */
  int fa, fb;         /* grit_feature_kind of a's and b's witness points */
  double fa_p[3], fb_p[3]; /* a point of the feature (the core point found), m */
  double fa_u[3], fb_u[3]; /* LINE, RIM: its unit direction; PLANE: its unit normal, pointing out of the shape */
  double fa_q[3], fb_q[3]; /* RIM: radius, cos and sin of its angle; SUPPORT: the semi-axes (local) */
  double ra, rb;      /* radii: pa = core_a + ra n, pb = core_b - rb n, m */
  /* A LINE feature may be cut by a plane held by the other shape (where a box edge crosses the side of
   * the face it rests on): its core is then the line's intersection with that plane. */
  int clip;           /* 1: the LINE feature's core is cut by the plane below */
  double clip_p[3], clip_n[3]; /* a point and the normal of that plane, in the other shape's frame */
} grit_contact_point;

/* The most candidates grit_collide returns for any pair; an output array this long never gives
 * GRIT_ERR_CAPACITY. (Box and convex against a plane: 4 points; cylinder against a plane: 4; a box
 * face on a box face: 4.) */
#define GRIT_COLLIDE_MAX_POINTS 4

/* Writes to out[0..*n_out-1] the contact candidates of shapes a at (pa, Ra) and b at (pb, Rb) whose
 * signed distance is below margin (m, finite, >= 0). No allocation; thread-safe. Shapes must be valid
 * (grit_shape_validate). Swapping a and b gives the same phi (bit for bit) with n negated and the
 * witness points exchanged. GRIT_ERR_CAPACITY if the pair has more than max_out candidates: the first
 * max_out are written and *n_out = max_out. GRIT_ERR_UNSUPPORTED for a pair of planes;
 * GRIT_ERR_INVALID_ARGUMENT for NULL pointers, max_out < 0, a bad margin or an unknown type. */
grit_status grit_collide(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                         const double pb[3], const double Rb[9], double margin, grit_contact_point *out, int max_out,
                         int *n_out);

/* The general path alone (GJK/EPA, one candidate at most) for any two non-plane shapes, even those with
 * a closed form: the reference the closed forms are tested against. Same contract as grit_collide;
 * GRIT_ERR_UNSUPPORTED if either shape is a plane. */
grit_status grit_collide_gjk(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                             const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                             int max_out, int *n_out);

/* ---------------------------------------------------------------- shared with collision_gjk.c */

/* A shape placed in the world. */
typedef struct grit_placed_shape {
  const grit_shape *shape;
  const double *p; /* position, m */
  const double *R; /* rotation, row-major */
} grit_placed_shape;

/* Statistics of one general-path query (for tests and benchmarks). */
typedef struct grit_gjk_info {
  int gjk_iterations; /* GJK iterations (support calls after the first) */
  int epa_iterations; /* EPA expansions; 0 if EPA did not run */
  int epa_converged;  /* 1 if EPA met its tolerance, 0 if it stopped at its capacity or on round-off */
  int polish_steps;   /* GJK runs of the polish of a curved overlap (when EPA did not converge) */
} grit_gjk_info;

/* The signed distance between a and b, with witness points on their surfaces and the unit normal from
 * a to b. Returns 0 (and writes nothing) when phi >= margin is certain, else 1. info may be NULL. */
int grit_gjk_epa(const grit_placed_shape *a, const grit_placed_shape *b, double margin, double *phi, double n[3],
                 double wa[3], double wb[3], grit_gjk_info *info);

#endif
