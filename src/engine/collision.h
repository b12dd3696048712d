/* SPDX-License-Identifier: Apache-2.0 */
/* collision.h — the collision query of a time step (internal): world poses of the geometries, the
 * broad phase on their margin-inflated boxes with the model's pair filter, and the narrow phase, into
 * a flat array of contact candidates sized once. */
#ifndef GRIT_COLLISION_H
#define GRIT_COLLISION_H

#include "broadphase.h"
#include "collision_narrow.h"
#include "contact_candidate.h"
#include "model_filter.h"
#include "model_internal.h"

/* One candidate: the geometries and bodies of the pair (a first, the normal pointing from a to b),
 * and the narrow phase's result. */
/* What bounds how far the geometries can move in a step, for the speculative margins of
 * grit_collision_detect: body twists at the start velocity and at the free-motion velocity v*. */
typedef struct grit_collision_motion {
  const double *cvel;      /* (6 nbody) body twists at the start velocity (grit_kin); both are the world's +0 on
                              the bodies welded to it (grit_kin_velocities, grit_kin_twists pass it down), which
                              the query takes for granted (speculative_margins) */
  const double *cvel_star; /* (6 nbody) body twists at v* (grit_kin_twists) */
  double window;           /* s: a geometry's margin is window times its speed bound */
  double min_margin;       /* m: every pair within this distance is a candidate (gradient smoothing) */
} grit_collision_motion;

/* A pair's entry in grit_collision.climb: its key, then two trails (collision_narrow.h) */
#define GRIT_CLIMB_ENTRY (1 + 2 * (1 + GRIT_CLIMB_TRAIL))

typedef struct grit_collision {
  double *gpos;     /* (3 ngeom) geometry origins, world */
  double *gmat;     /* (9 ngeom) geometry orientations, world */
  double *aabb;     /* (6 ngeom) margin-inflated boxes */
  double *aabb_key; /* (13 ngeom) a CONVEX geometry's origin, orientation and margin its box was made at
                       (NaN before the first: a margin is never NaN, so never equal), to reuse the box while they keep their bits */
  int *aabb_hint;   /* (7 ngeom) a CONVEX geometry's six support vertices at its last box (-1: none), where
                       the next box's climbs start, and its boxes left without climbing (geometry_internal.h) */
  int no_box_rows;  /* 1: a hull's box by grit_shape_world_aabb_hint alone (the old path: all rows kept or
                       none); 0 (default): grit_shape_world_aabb_rows (a row's vertices kept while it keeps
                       its bits, the others climbed, a failed climb's direction scanned alone; the same box) */
  double *gmargin;  /* (ngeom) each geometry's box inflation in the last query: its speculative margin with
                       its own margin (contact_margin.h) */
  double *gspec;    /* (ngeom) each geometry's speculative margin alone in the last query */
  double *gspec_tree; /* (ngeom) the same from its body's twist less its tree's root body's: the margin a
                         pair of geometries on one tree takes (collision.c: pair_margin) */
  int *gtree;       /* (ngeom) the tree of each geometry's body (-1: the world's), and groot its root body */
  int *groot;
  int no_tree_window; /* 1: a pair on one tree takes the margins of the absolute speeds (the old path); 0
                         (default): of the speeds relative to the tree's root (a motion both share moves
                         neither closer, so a falling robot's links are not each other's candidates) */
  int margin_layer; /* 1: a pair closer than its own margin is a candidate whatever its speed (the old path;
                       always with adhesion actuators, which count the force-free layer); 0 (default
                       otherwise): the speculative window applies to the gap the force law sees,
                       phi - (margin - gap) (collision.c: pair_margin) */
  double *grad;     /* (ngeom) bounding radii about the geometries' origins (inf for planes) */
  double mu_max, taud_max; /* the largest friction and SAP tau_d of the model's geometries */
  int may_collide;  /* 0 when no pair of geometries can ever be a candidate (no explicit pair, and all on one weld or no two
                       geometries' bit masks match, as with <flag contact="disable">): the query is then skipped */
  int no_apart;     /* 1: every broad-phase pair reaches the narrow phase (the old path); 0 (default): pairs
                       whose bounding spheres are surely farther apart than their margin are dropped first
                       (collision.c: surely_apart; the same candidates) */
  int no_classes;   /* 1: the broad phase calls the filter for every overlapping pair (the old path); 0
                       (default): pairs on one weld or whose bit masks do not match are dropped in the sweep
                       first (grit_broadphase_set_classes; the same pairs) */
  int *gweld;       /* (ngeom) the body each geometry is welded to (model body_weld), the sweep's groups */
  char *gapart;      /* (ngeom) each geometry's kind for that test: 0 none (height field, pressure field), 1
                       plane, 2 bounded (grad) */
  double apart_slack; /* that test's slack in the last query */
  int no_sphere_box; /* 1: a sphere's, capsule's, cylinder's or box's box by grit_shape_world_aabb (the old
                        path); 0 (default): the same operations written out (collision.c, round_world_aabb,
                        cylinder_world_aabb, box_world_aabb; the same bits) */
  const unsigned char *allowed; /* the model's table (model_internal.h, geom_allowed; NULL without one):
                                   bit ngeom i + j is grit_geom_pair_allowed(m, i, j) */
  int no_allowed_table; /* 1: the broad phase's filter calls grit_geom_pair_allowed after the bounding test
                           (the old path); 0 (default): the table first, then the bounding test (a pure
                           conjunction reordered: the same pairs) */
  int *climb;       /* (GRIT_CLIMB_ENTRY climb_cap) a direct-mapped cache of pairs' hull climb starts: the key
                       ga ngeom + gb (-1: empty), then for ga and for gb a counter and the vertices of GJK/EPA's
                       first GRIT_CLIMB_TRAIL hull supports in the pair's last call, where the next call's climbs
                       may start (grit_placed_shape.trail; the same results from any start) */
  int climb_cap;
  int no_climb_cache; /* 1: every GJK/EPA call's climbs start from the direction's axis start (the old path);
                         0 (default): from the pair's kept vertices */
  double *far_axis; /* (4 climb_cap) beside each climb entry: the axis GJK found its pair beyond the margin
                       along in its last call (from gb towards ga), then 1 (0: none; collision.c: apart_along) */
  int *far_vert;    /* (2 climb_cap) the support vertices of that axis's last test, where the next climbs start */
  int far_skips;    /* the pairs the last query dropped so (a count, for the tests) */
  int no_far_axis;  /* 1: every pair with a climb entry reaches GJK/EPA (the old path); 0 (default): a pair whose
                       kept far axis still separates its shapes, by their supports now, by more than the margin
                       is dropped first (collision.c: apart_along; the same candidates: a cache of a direction
                       only, the test a function of the poses) */
  grit_broadphase *bp;
  int *pairs;       /* (2 cap_pairs) broad-phase pairs */
  int cap_pairs;
  grit_contact_candidate *c; /* (cap) candidates of the last query */
  int n, cap;
} grit_collision;

/* The capacity the model asks for (options.max_contacts, or 16 per geometry + 64). */
int grit_contact_capacity(const grit_model *m);

grit_status grit_collision_create(const grit_model *m, grit_collision **col, char *message);
void grit_collision_free(grit_collision *col);


/* The box of a geometry other than a CONVEX one at its place and margin of the last query (gpos, gmat,
 * gmargin), as the query makes it. */
void grit_collision_geom_aabb(const grit_collision *col, const grit_model *m, int g, double lo[3], double hi[3]);

/* Finds the candidates at the body poses (xpos, xmat as in grit_kin). GRIT_ERR_CAPACITY when the
 * workspace is too small (the message says how many were needed at least).
 *
 * Without `motion` every allowed pair closer than options.contact_margin is a candidate. With it the
 * margins are speculative: geometry g gets m_g = window x s_g, where s_g bounds the speed of its
 * points at the start velocity and at v* (|v_c + w x c| + |w| r_g over both twists), and a pair is a
 * candidate when closer than min(contact_margin, m_a + m_b): the pairs a step can close at up to
 * `window / dt` times the bodies' free-motion speeds (docs/collision.md). */
grit_status grit_collision_detect(grit_collision *col, const grit_model *m, const double *xpos, const double *xmat,
                                  const grit_collision_motion *motion, char *message);

#endif
