/* SPDX-License-Identifier: Apache-2.0 */
/* hull_exact.h — a convex hull by exact orientation tests (internal): the hull graph's surface where the
 * tolerant incremental hull (grit_hydro_hull) breaks down on near-coplanar points. */
#ifndef GRIT_HULL_EXACT_H
#define GRIT_HULL_EXACT_H

/* The outward triangles (tri: 3 per triangle, at most maxtri; 2 n suffices) of the convex hull of the n
 * points p (xyz), with every orientation decided exactly: a triangulation of the exact hull's boundary,
 * coplanar neighbours allowed, none degenerate; points on or inside it are on no triangle. Returns the
 * triangle count, 0 if the points span no volume (or out of memory). Model compile time (allocates). */
int grit_hull_exact(const double *p, int n, int *tri, int maxtri);

/* The sign (1, 0, -1) of (q - a) . ((b - a) x (c - a)), exactly: 1 when q lies above the plane of the
 * counter-clockwise triangle a, b, c (the hull's test of whether a face sees a point). */
int grit_hull_orient(const double a[3], const double b[3], const double c[3], const double q[3]);

#endif
