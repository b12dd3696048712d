/* SPDX-License-Identifier: Apache-2.0 */
/* geometry_internal.h — the core-and-radius view of a shape used by the narrow phase (internal).
 *
 * A sphere is its centre point grown by its radius, a capsule its axis segment grown by its radius;
 * every other shape is its own core with radius 0. GJK and EPA run on the cores, which are polytopes
 * (point, segment) for the round shapes: the distance between two cores is found exactly in a finite
 * number of steps, and the shapes' signed distance is that distance minus the two radii. */
#ifndef GRIT_GEOMETRY_INTERNAL_H
#define GRIT_GEOMETRY_INTERNAL_H

#include "grit/geometry.h"

/* The radius by which the core is grown: sphere and capsule radius, else 0, m. */
double grit_shape_core_radius(const grit_shape *shape);

/* The dimension of the core: 0 (point: sphere), 1 (segment: capsule), 3 (a solid: other shapes). */
int grit_shape_core_dim(const grit_shape *shape);

/* The support point of the core in the local frame (see grit_shape_support); not for PLANE. */
void grit_shape_core_support(const grit_shape *shape, const double dir[3], double out[3]);

/* The same, for a CONVEX shape with a graph climbing from *hint (a vertex index, -1: none), where the
 * caller asks along nearby directions in turn (GJK, EPA); *hint becomes the support vertex. The result
 * does not depend on *hint. Other shapes: grit_shape_core_support, *hint untouched. */
void grit_shape_core_support_hint(const grit_shape *shape, const double dir[3], double out[3], int *hint);

/* grit_shape_world_aabb for a CONVEX shape, from its six support vertices along +-(row k of R), kept
 * in hint[0..5] (-1: none; updated; hint[6]: boxes left without climbing, initially 0): with same_R (R has the bits of the last box's) those vertices again,
 * else climbed from them when the shape has a graph, else (or where a climb would end in a scan) one
 * pass over the vertices. The same box as grit_shape_world_aabb; other shapes: that function. */
void grit_shape_world_aabb_hint(const grit_shape *shape, const double p[3], const double R[9], double margin,
                                double lo[3], double hi[3], int hint[7], int same_R);
/* The same box as grit_shape_world_aabb_hint (hint the same), where bit j of same_rows says row j of R
 * equals the last box's: that row's two vertices are kept, the others climbed (a climb that would end in
 * a scan scans that direction alone). No row kept, no graph, or a hull whose one pass costs less than
 * those climbs: grit_shape_world_aabb_hint. */
void grit_shape_world_aabb_rows(const grit_shape *shape, const double p[3], const double R[9], double margin,
                                double lo[3], double hi[3], int hint[7], int same_rows);
/* grit_shape_world_aabb with both supports per axis for the centrally symmetric shapes (sphere, capsule,
 * box, cylinder, ellipsoid) when both_supports is 1 (the old path), or the one along +row k of R and
 * its mirror (0, grit_shape_world_aabb): the same box. */
void grit_shape_world_aabb_path(const grit_shape *shape, const double p[3], const double R[9], double margin,
                                double lo[3], double hi[3], int both_supports);

/* A CONVEX shape's world box (grit_shape_world_aabb's) by its one pass over the vertices: avx2 = 0 the
 * scalar loop (the old path), 1 four vertices a vector (the caller checked the CPU). The same box. */
void grit_convex_world_aabb_path(const grit_shape *shape, const double p[3], const double R[9], double margin,
                                 double lo[3], double hi[3], int avx2);
#endif
