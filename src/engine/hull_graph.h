/* SPDX-License-Identifier: Apache-2.0 */
/* hull_graph.h — a CONVEX shape's vertex adjacency (the edges of its hull) and the support by hill
 * climbing on it (internal).
 *
 * A linear function on a convex polytope has no local maximum on the hull's edge graph that is not a
 * global one, so the support walks from a start vertex to a neighbour of greater d.v until none is
 * greater: a few neighbourhoods instead of every vertex. The model builds the graph once at compile
 * (grit_hull_graph_build) for every CONVEX geometry of GRIT_HULL_CLIMB_MIN vertices or more; smaller
 * hulls, and shapes made without a model, keep the scan. The result is the scan's vertex, ties included
 * (the first vertex of greatest d.v in floating point): see grit_hull_support. */
#ifndef GRIT_HULL_GRAPH_H
#define GRIT_HULL_GRAPH_H

#include <stddef.h>

#include "grit/geometry.h"

/* Hulls with fewer vertices keep the four-lane scan (faster there: measured in docs/performance.md,
 * stop 18). */
#define GRIT_HULL_CLIMB_MIN 16
/* GJK/EPA's supports scan hulls of fewer vertices although they have a graph (which still gives their
 * bounding radius and their world boxes' climbs): the scan's vector loop (stop 23) costs less there than
 * the climbs, which on box-like hulls in resting face contact search plateaus (docs/performance.md). */
#define GRIT_HULL_SCAN_BELOW 32

/* The ints the graph of an n-vertex hull needs at most (0 when n < GRIT_HULL_CLIMB_MIN: no graph). */
size_t grit_hull_graph_ints(int n);

/* Builds the graph of shape's vertices into g (grit_hull_graph_ints(nvert) ints) at model compile
 * (allocates temporaries). Returns 1 if the graph is complete and gives the scan's vertex on every
 * direction checked (the hull's face normals both ways, the axes, fixed random directions, from several
 * starts), else 0: the shape then keeps the scan. */
int grit_hull_graph_build(const grit_shape *shape, int *g);
/* The same from the exact hull alone (grit_hull_exact; grit_hull_graph_build's fallback where its tolerant
 * hull breaks down on near-coplanar points), for the tests. */
int grit_hull_graph_build_exact(const grit_shape *shape, int *g);

/* The index of the support vertex of a CONVEX shape with a graph along d: the first vertex (lowest
 * index) of greatest d.v, as grit_convex_scan. start: the vertex to climb from (the last support along
 * a nearby direction), or -1 for the graph's own start for d's dominant axis. */
int grit_hull_support(const grit_shape *shape, const double d[3], int start);

/* The same, or -1 where it would end in a scan (a plateau of near-equal vertices too large to search:
 * a flat face normal to d), for a caller with a cheaper scan of its own (the world box's one pass). */
int grit_hull_support_try(const grit_shape *shape, const double d[3], int start);

/* The same with a wider plateau search (a bitmap, up to hundreds of vertices: a sole or a wheel's side
 * normal to d), -1 past it: the world boxes' climbs, whose alternative is the pass over every vertex. The
 * same vertex as grit_hull_support. */
int grit_hull_support_wide(const grit_shape *shape, const double d[3], int start);

/* The same by one of its paths: bit 0 of path clear, the neighbours' vertices one by one through the index
 * list (the old path), set, four neighbours a vector from the coordinates the graph keeps in blocks (AVX2:
 * the caller checked the CPU); bit 1 set, the plateau's search looks a neighbour up in its list before its
 * value (the old path; clear: its value first); bit 2 set (AVX2), path 1's steps fused in one function, the
 * climb inlined (grit_hull_support_try's path; the others ignored). The same vertex on all paths. */
int grit_hull_support_try_path(const grit_shape *shape, const double d[3], int start, int path);

/* The climb's last vertex along d from the graph's start, without the plateau's search or the loose
 * vertices: a vertex on edges whose d.v is the greatest of the vertices on edges up to round-off (a
 * plateau of near-equal values may end it anywhere on the plateau). */
int grit_hull_climb(const grit_shape *shape, const double d[3]);
/* The same climb with its rounds four neighbours a vector (avx2 != 0: the caller checked the CPU) or one
 * at a time: the same vertex (grit_hull_climb takes the first where the CPU has AVX2). */
int grit_hull_climb_lanes(const grit_shape *shape, const double d[3], int avx2);

/* The graph's lists: vertex i's neighbours nbr[adr[i] .. adr[i+1]), and the loose vertices (on no edge,
 * not clearly inside). Returns how many are loose, or -1 if the hull dropped vertices as inside (a
 * search over the edges would miss those: the caller scans). */
int grit_hull_graph_lists(const int *g, const int **adr, const int **nbr, const int **loose);

/* The bounding radius max |v| the graph keeps (grit_shape_bounding_radius's value). */
double grit_hull_graph_radius(const int *g);

/* The same vertex by a scan over all vertices (four lanes; geometry.c). */
int grit_convex_scan(const grit_shape *shape, const double d[3]);
/* The same scan with the vector loop (avx2 != 0: the caller checked the CPU) or without: the same vertex. */
int grit_convex_scan_lanes(const grit_shape *shape, const double d[3], int avx2);

#endif
