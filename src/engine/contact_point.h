/* SPDX-License-Identifier: Apache-2.0 */
/* contact_point.h — a contact candidate and the features of its witness points (internal): the data the
 * narrow phase (collision_narrow.h) produces and the contact re-evaluation (contact_geometry.h) reads. Its
 * own header so that neither module includes the other's for it: collision_narrow uses contact_geometry
 * (to snap a GJK/EPA candidate to its features' re-evaluation), never the reverse. */
#ifndef GRIT_CONTACT_POINT_H
#define GRIT_CONTACT_POINT_H

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

#endif
