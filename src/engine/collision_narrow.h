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

#include <math.h>

#include "contact_point.h"
#include "grit/math.h"
#include "grit/geometry.h"
#include "grit/status.h"

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

/* The hull supports of a GJK/EPA call whose climb starts are kept (grit_placed_shape.trail). */
#define GRIT_CLIMB_TRAIL 8

/* grit_collide with hint and hint + 1 + GRIT_CLIMB_TRAIL the kept climb starts of a and b
 * (grit_placed_shape.trail; hint may be NULL): the same result. */
grit_status grit_collide_hinted(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                                const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                                int max_out, int *n_out, int *hint);

/* grit_collide_hinted that also writes GJK's far axis to far_axis (collector.far_axis): the same result. */
grit_status grit_collide_kept(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                              const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                              int max_out, int *n_out, int *hint, double far_axis[4]);

/* ---------------------------------------------------------------- shared with collision_gjk.c */

/* A shape placed in the world. */
typedef struct grit_placed_shape {
  const grit_shape *shape;
  const double *p; /* position, m */
  const double *R; /* rotation, row-major */
  int *trail;      /* NULL, or 1 + GRIT_CLIMB_TRAIL ints kept by the caller across calls (grit_collision.climb):
                      a counter, then the vertices GJK/EPA's first hull supports gave in the last call; the i-th
                      support's climb starts from the i-th kept vertex where it is higher along the direction
                      than the usual start. A climb ends on the scan's vertex from any start (hull_graph.h): the
                      results do not depend on it */
} grit_placed_shape;

/* Statistics of one general-path query (for tests and benchmarks). */
typedef struct grit_gjk_info {
  int gjk_iterations; /* GJK iterations (support calls after the first) */
  int epa_iterations; /* EPA expansions; 0 if EPA did not run */
  int epa_converged;  /* 1 if EPA met its tolerance, 0 if it stopped at its capacity or on round-off */
  int polish_steps;   /* GJK runs of the polish of a curved overlap (when EPA did not converge) */
  int full_edge_clear; /* input (kept): 1 clears EPA's whole edge table each call (the old path); 0: only
                          the entries between its vertices, as they come (the same polytope, the same bits) */
  int no_point_jump;   /* input (kept): 1 leaves out GJK's jump to a cylinder's nearest point to a single point
                          of the other core (the old path; collision_gjk.c, point_jump) */
  int no_edge_jump;    /* input (kept): 1 leaves out GJK's jump to the exact closest points of a cylinder and an
                          edge of the other core (the old path; collision_gjk.c, edge_jump) */
  int epa_rewrite;     /* input (kept): 1 writes every kept face's edges again after each EPA expansion (the old
                          path); 0 only the faces that moved, until a face claims an edge already held (then
                          all, as the old path): the same table, the same bits */
  int no_newton;       /* input (kept): 1 leaves out GJK's Newton jump on two smooth curved cores (the old path;
                          collision_gjk_newton.c) */
  int no_polish_jump;  /* input (kept): 1 runs the polish's separations without the point and edge jumps, from
                          the line of centres and unseeded (the old path; collision_gjk.c, polish_eval) */
  int far;             /* 1 when GJK found the shapes farther apart than the margin: far_axis is then a direction
                          along which b's extent lies below a's by more than the margin (from b towards a) */
  double far_axis[3];
} grit_gjk_info;

/* The signed distance between a and b, with witness points on their surfaces and the unit normal from
 * a to b. Returns 0 (and writes nothing) when phi >= margin is certain, else 1. info may be NULL. */
int grit_gjk_epa(const grit_placed_shape *a, const grit_placed_shape *b, double margin, double *phi, double n[3],
                 double wa[3], double wb[3], grit_gjk_info *info);

/* ------------------------------------------- shared by the closed-form pairs (collision_box.c) */

/* Gathers candidates in the caller's order: a pair function works on (a', b') = (a, b) or (b, a). */
typedef struct collector {
  grit_contact_point *out;
  int max, n, overflow;
  int flip; /* 1 if the pair function's a' is the caller's b */
  const double *pa, *Ra, *pb, *Rb; /* the caller's poses */
  double *far_axis; /* NULL, or 4 doubles: the general path writes GJK's far axis there, from the caller's b
                       towards its a, with 1 after it, when GJK finds the pair beyond the margin; else 0 after it */
} collector;

typedef void (*pair_fn)(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c);

/* A witness point's feature for derivatives, in world coordinates (see grit_feature_kind): the core
 * point p found, the line's direction or the plane's outward normal u, and the radius r. */
typedef struct feature {
  int kind;
  const double *p, *u;
  double r;
  double q[3]; /* RIM, SUPPORT: grit_contact_point.fa_q */
} feature;

/* A point feature at p of radius r. */
feature grit_narrow_point_feature(const double p[3], double r);

/* Records one candidate given in the pair function's order: n from a' to b', wa on a', wb on b', and
 * the features of the two witness points (wa = core_a + ra n, wb = core_b - rb n). */
void grit_narrow_emit_features(collector *c, double phi, const double n[3], const double wa[3], const double wb[3],
                               feature fa, feature fb);

/* A candidate whose witness points are material points (point features of radius 0). */
void grit_narrow_emit(collector *c, double phi, const double n[3], const double wa[3], const double wb[3]);

/* Box against box: the reference face's clipped incident face (collision_box.c). */
void grit_narrow_box_box(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c);

static inline void column(double u[3], const double R[9], int k) { grit_v3_set(u, R[k], R[3 + k], R[6 + k]); }

/* A unit vector perpendicular to the unit u (deterministic). */
static inline void perpendicular(double t[3], const double u[3]) {
  double e[3] = {0, 0, 0};
  e[fabs(u[0]) < 0.57 ? 0 : fabs(u[1]) < 0.57 ? 1 : 2] = 1.0;
  grit_v3_cross(t, u, e);
  grit_v3_normalize(t);
}


#endif
