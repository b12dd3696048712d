/* SPDX-License-Identifier: Apache-2.0 */
/* grit/geometry.h — collision shapes: types, validation, bounding boxes and support functions.
 *
 * A shape is described in its own local frame; a pose (p, R) places it in the world, a local point x
 * going to p + R x (R a 3x3 rotation, row-major). Every shape except the plane and the height field
 * (a union of convex prisms, collided prism by prism: docs/collision.md) is convex and bounded and
 * is known to the narrow phase through one function, its support function: the point of the shape that
 * lies farthest in a given direction (libccd's interface). Adding a convex shape is adding its support
 * function, its bounding box and its validation. See docs/collision.md.
 *
 * Units: SI (m). The sizes of a shape are in size[0..2]; unused entries are ignored. */
#ifndef GRIT_GEOMETRY_H
#define GRIT_GEOMETRY_H

#include "grit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shape types. The order is used by the narrow phase to put each pair in a canonical order. */
typedef enum grit_geom_type {
  GRIT_GEOM_PLANE = 0,     /* half-space z <= 0 of its frame; outward normal +z; no size */
  GRIT_GEOM_SPHERE = 1,    /* size[0] = radius, m */
  GRIT_GEOM_CAPSULE = 2,   /* size[0] = radius, size[1] = half-length of the axis segment along z, m */
  GRIT_GEOM_BOX = 3,       /* size[0..2] = half-sizes along x, y, z, m */
  GRIT_GEOM_CYLINDER = 4,  /* size[0] = radius, size[1] = half-length along z, m */
  GRIT_GEOM_ELLIPSOID = 5, /* size[0..2] = semi-axes along x, y, z, m */
  GRIT_GEOM_CONVEX = 6,    /* the convex hull of `vertices` (local frame); no size */
  GRIT_GEOM_HFIELD = 7,    /* a height field: size[0], size[1] = half-extents along x, y; size[2] = depth of
                              its base below z = 0; `vertices` = its nrow x ncol grid points (row-major,
                              rows along y, columns along x, z = the elevation >= 0); static only */
  GRIT_GEOM_COUNT = 8      /* number of shape types */
} grit_geom_type;

/* A collision shape in its local frame. The vertex array of a CONVEX shape is owned by the caller (the
 * model) and must outlive every use of the shape; grit never writes to it. */
typedef struct grit_shape {
  grit_geom_type type;    /* which shape */
  double size[3];         /* sizes as listed for each type, m */
  const double *vertices; /* CONVEX: nvert points, 3 coordinates each, local frame, m; else unused */
  int nvert;              /* CONVEX: number of vertices, >= 4, not all in one plane; HFIELD: nrow x ncol */
  int ncol;               /* HFIELD: number of grid columns (along x), >= 2; else unused */
  double top;             /* HFIELD: the highest elevation of the grid, m (set by grit_shape_hfield); else unused */
  const int *graph;       /* CONVEX: the hull's vertex adjacency, for a support by hill climbing instead of a
                             scan; set by the model on its own shapes (grit_model_geom), ignored in a
                             definition (the model builds it); NULL: the support scans every vertex */
} grit_shape;

/* Most vertices a CONVEX shape may have (support queries are linear in the vertex count). */
#define GRIT_CONVEX_MAX_VERTICES 4096

/* A shape with all fields zero except type and size (vertices NULL, nvert 0). */
GRIT_API grit_shape grit_shape_make(grit_geom_type type, double s0, double s1, double s2);

/* A CONVEX shape over a caller-owned array of nvert points (3 doubles each, local frame, m). */
GRIT_API grit_shape grit_shape_convex(const double *vertices, int nvert);

/* A HFIELD over a caller-owned grid of nrow x ncol points (nrow, ncol >= 2; 3 doubles each, local frame,
 * row-major: point (r, c) at x = sx (2c/(ncol-1) - 1), y = sy (2r/(nrow-1) - 1), z = its elevation >= 0,
 * m) with a base at z = -base (base > 0). The solid is the union of two triangular prisms per cell, from
 * the base up to the surface (as MuJoCo); see docs/collision.md. */
GRIT_API grit_shape grit_shape_hfield(const double *grid, int nrow, int ncol, double sx, double sy, double base);

/* Checks a shape: known type, positive finite sizes where used, and for CONVEX a non-NULL array of
 * 4..GRIT_CONVEX_MAX_VERTICES finite vertices spanning a volume. On failure writes a message naming
 * the problem to msg (if msg is not NULL) and returns GRIT_ERR_INVALID_ARGUMENT. */
GRIT_API grit_status grit_shape_validate(const grit_shape *shape, char msg[GRIT_MESSAGE_SIZE]);

/* The shape's axis-aligned bounding box in its local frame, m: lo <= x <= hi for every point x of the
 * shape, tight for all types. The PLANE's box is infinite except hi[2] = 0. */
GRIT_API void grit_shape_local_aabb(const grit_shape *shape, double lo[3], double hi[3]);

/* The tight world-frame bounding box of the shape placed at (p, R), grown by `margin` (m) on every
 * side. Computed from the support function along the world axes. PLANE: infinite along the directions
 * in which the half-space is unbounded (every direction unless its normal is axis-aligned). */
GRIT_API void grit_shape_world_aabb(const grit_shape *shape, const double p[3], const double R[9], double margin,
                           double lo[3], double hi[3]);

/* The support point of a convex shape (not a PLANE or HFIELD) in its local frame: a point s of the shape with
 * dir . s = max over the shape of dir . x (dir need not be unit; m). Where several points attain the
 * maximum (a face or an edge facing dir) a deterministic one is returned; for dir = 0, some point of the
 * shape. Returns GRIT_ERR_INVALID_ARGUMENT for a PLANE (its support is unbounded) and a HFIELD. */
GRIT_API grit_status grit_shape_support(const grit_shape *shape, const double dir[3], double out[3]);

/* The radius of the smallest sphere about the local origin that contains the shape, m (infinite for a
 * PLANE). A length scale for tolerances and a broad-phase bound. */
GRIT_API double grit_shape_bounding_radius(const grit_shape *shape);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_GEOMETRY_H */
