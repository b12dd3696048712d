/* SPDX-License-Identifier: Apache-2.0 */
/* collision.c — the per-step collision query: poses, broad phase, narrow phase. See collision.h. */
#include "collision.h"

#include "contact_margin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/math.h"
#include "collision_hfield.h"
#include "geometry_internal.h"
#include "model_filter.h"
#include "hydro.h"
#include "hull_graph.h"
#include "status_internal.h"

int grit_contact_capacity(const grit_model *m) {
  return m->opt.max_contacts > 0 ? m->opt.max_contacts : 16 * m->ngeom + 64 + grit_hydro_capacity(m);
}

/* Whether any two geometries might pass the weld and bit-mask tests of grit_geom_pair_allowed, or an
 * explicit pair exists. Conservative (a geometry whose masks only match its own counts), O(ngeom): a
 * model where nothing may collide (all masks zero, or every geometry on one weld: a static world) skips
 * the whole query, which then finds no candidate anyway. */
static int may_collide(const grit_model *m, const int *gweld) {
  if (m->npair > 0) return 1;
  int welds = 0;
  for (int g = 1; g < m->ngeom && !welds; ++g) welds = gweld[g] != gweld[0];
  if (!welds) return 0;
  unsigned types = 0, affinities = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    types |= m->geom_contype[g];
    affinities |= m->geom_conaffinity[g];
  }
  for (int g = 0; g < m->ngeom; ++g)
    if ((m->geom_contype[g] & affinities) || (m->geom_conaffinity[g] & types)) return 1;
  return 0;
}

grit_status grit_collision_create(const grit_model *m, grit_collision **out, char *message) {
  *out = NULL;
  grit_collision *col = calloc(1, sizeof *col);
  if (!col) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the collision workspace");
  const int ng = m->ngeom;
  col->cap = grit_contact_capacity(m);
  col->cap_pairs = 4 * col->cap;
  col->gpos = calloc(3 * (size_t)ng + 1, sizeof(double));
  col->gmat = calloc(9 * (size_t)ng + 1, sizeof(double));
  col->aabb = calloc(6 * (size_t)ng + 1, sizeof(double));
  col->aabb_key = malloc((13 * (size_t)ng + 1) * sizeof(double));
  col->gmargin = calloc((size_t)ng + 1, sizeof(double));
  col->gspec = calloc((size_t)ng + 1, sizeof(double));
  col->gspec_tree = calloc((size_t)ng + 1, sizeof(double));
  col->gtree = calloc((size_t)ng + 1, sizeof(int));
  col->groot = calloc((size_t)ng + 1, sizeof(int));
  col->aabb_hint = malloc((7 * (size_t)ng + 1) * sizeof(int));
  col->grad = calloc((size_t)ng + 1, sizeof(double));
  col->pairs = calloc(2 * (size_t)col->cap_pairs, sizeof(int));
  col->c = calloc((size_t)col->cap, sizeof *col->c);
  col->gapart = calloc((size_t)ng + 1, 1);
  col->gweld = calloc((size_t)ng + 1, sizeof(int));
  col->climb_cap = 4 * ng + 1; /* an arm's candidate pairs are a few per geometry */
  col->climb = malloc(GRIT_CLIMB_ENTRY * (size_t)col->climb_cap * sizeof(int));
  col->far_axis = calloc(4 * (size_t)col->climb_cap, sizeof(double));
  col->far_vert = malloc(2 * (size_t)col->climb_cap * sizeof(int));
  if (!col->gweld || !col->climb || !col->far_axis || !col->far_vert || !col->gpos || !col->gmat || !col->aabb || !col->aabb_key || !col->aabb_hint || !col->gmargin || !col->gspec || !col->gspec_tree || !col->gtree || !col->groot || !col->grad || !col->pairs || !col->c || !col->gapart ||
      grit_broadphase_create(ng, &col->bp) != GRIT_OK) {
    grit_collision_free(col);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the collision workspace");
  }
  for (size_t i = 0; i < 13 * (size_t)ng; ++i) col->aabb_key[i] = NAN;
  for (size_t i = 0; i < 7 * (size_t)ng; ++i) col->aabb_hint[i] = i % 7 == 6 ? 0 : -1;
  for (size_t i = 0; i < GRIT_CLIMB_ENTRY * (size_t)col->climb_cap; ++i) col->climb[i] = -1;
  for (size_t i = 0; i < 2 * (size_t)col->climb_cap; ++i) col->far_vert[i] = -1;
  for (int g = 0; g < ng; ++g) {
    col->grad[g] = grit_shape_bounding_radius(&m->geom_shape[g]);
    col->mu_max = fmax(col->mu_max, m->geom_friction[g]);
    col->taud_max = fmax(col->taud_max, m->geom_taud[g]);
    const grit_geom_type t = m->geom_shape[g].type;
    col->gapart[g] = t == GRIT_GEOM_HFIELD || m->geom_hydro[g] > 0 ? 0 : t == GRIT_GEOM_PLANE ? 1 : 2;
    col->gweld[g] = m->body_weld[m->geom_body[g]];
    int b = m->geom_body[g];
    col->gtree[g] = m->body_tree[b];
    while (b > 0 && m->body_parent[b] > 0) b = m->body_parent[b];
    col->groot[g] = b;
  }
  col->may_collide = may_collide(m, col->gweld);
  col->allowed = m->geom_allowed;
  for (int a = 0; a < m->nu; ++a) /* adhesion actuators (actuation_adhesion.c) count the force-free layer */
    col->margin_layer |= m->act_trntype[a] == GRIT_TRN_BODY;
  *out = col;
  return GRIT_OK;
}

void grit_collision_free(grit_collision *col) {
  if (!col) return;
  grit_broadphase_free(col->bp);
  free(col->gpos);
  free(col->gmat);
  free(col->aabb);
  free(col->aabb_key);
  free(col->aabb_hint);
  free(col->gmargin);
  free(col->gspec);
  free(col->gspec_tree);
  free(col->gtree);
  free(col->groot);
  free(col->grad);
  free(col->pairs);
  free(col->c);
  free(col->gapart);
  free(col->gweld);
  free(col->climb);
  free(col->far_axis);
  free(col->far_vert);
  free(col);
}

/* The explicit pairs whose margin-inflated boxes overlap, after the np broad-phase pairs. */
static grit_status add_explicit_pairs(grit_collision *col, const grit_model *m, int *np) {
  for (int k = 0; k < m->npair; ++k) {
    const int g1 = m->pair[2 * k], g2 = m->pair[2 * k + 1];
    const double *a = col->aabb + 6 * g1, *b = col->aabb + 6 * g2;
    if (a[0] > b[3] || b[0] > a[3] || a[1] > b[4] || b[1] > a[4] || a[2] > b[5] || b[2] > a[5]) continue;
    if (*np >= col->cap_pairs) return GRIT_ERR_CAPACITY;
    col->pairs[2 * *np] = g1;
    col->pairs[2 * *np + 1] = g2;
    ++*np;
  }
  return GRIT_OK;
}

/* The margin of pair (ga, gb) in the query (symmetric in the two), by comparisons (surely_apart's test
 * takes it per broad-phase pair). The speculative window is the sum of the two geometries' (each capped,
 * so at most the boxes' inflation), capped, and at least the smoothing's min_margin. A contact's force
 * acts on phi - (margin - gap) (contact_margin.h), so the window applies to that gap: the pair's
 * inflation margin - gap is added where positive. With margin_layer (adhesion), every pair closer than
 * its own margin is a candidate besides: the old rule, max(window over the inflated boxes, margin). */
static double pair_margin(const grit_collision *col, const grit_model *m, double min_margin, int ga, int gb) {
  const double cap = m->opt.contact_margin;
  double sum = col->margin_layer ? col->gmargin[ga] + col->gmargin[gb] : col->gspec[ga] + col->gspec[gb];
  if (!col->margin_layer && !col->no_tree_window && col->gtree[ga] >= 0 && col->gtree[ga] == col->gtree[gb]) {
    const double rel = col->gspec_tree[ga] + col->gspec_tree[gb]; /* both bound the pair's speeds */
    sum = rel < sum ? rel : sum;
  }
  double margin = sum < cap ? sum : cap;
  margin = min_margin > margin ? min_margin : margin;
  if (col->margin_layer) {
    const double own = grit_pair_margin(m, ga, gb);
    return own > margin ? own : margin;
  }
  const double inflation = grit_pair_inflation(m, ga, gb);
  return inflation > 0.0 ? margin + inflation : margin;
}

/* Whether geometries g1 and g2 are surely farther apart than their margin, by their bounding spheres
 * (grad, about the origins) or, against a plane, the other's bounding sphere's height over it: then
 * the narrow phase finds no candidate (every candidate's phi is at least the pair's distance, and one is
 * emitted only below the margin), so the pair need not reach it. The margin taken is at least the
 * pair's (pair_margin) and the slack, 1e-9 of the coordinates' and
 * radii's magnitudes (and 1e-9 m), far above the round-off of the narrow phase's own distance: a pair
 * the narrow phase could accept is never dropped, and the candidates are the same, in the same order.
 * Height fields and pressure-field geometries (their own queries) are left to the narrow phase
 * (gapart 0). */
/* Whether the exact boxes of bounded geometries g1, g2 (their boxes less the inflation gmargin) are
 * farther apart along an axis than the pair's margin, with the bounding test's slack: then so are the
 * geometries. The broad phase pairs the boxes inflated by each geometry's margin, which can exceed the
 * pair's (a pair on one tree takes its relative speeds: pair_margin). */
static int boxes_apart(const grit_collision *col, double margin, int g1, int g2) {
  const double *a = col->aabb + 6 * g1, *b = col->aabb + 6 * g2;
  const double reach = margin - col->gmargin[g1] - col->gmargin[g2] + col->apart_slack + 1e-9 * margin;
  for (int k = 0; k < 3; ++k)
    if (a[k] - b[3 + k] > reach || b[k] - a[3 + k] > reach) return 1; /* NaN: never */
  return 0;
}

static int surely_apart(const grit_collision *col, const grit_model *m, double min_margin, int g1, int g2) {
  const int k1 = col->gapart[g1], k2 = col->gapart[g2];
  if (!k1 || !k2 || (k1 == 1 && k2 == 1)) return 0;
  const double margin = pair_margin(col, m, min_margin, g1, g2);
  const double *c1 = col->gpos + 3 * g1, *c2 = col->gpos + 3 * g2;
  if (k1 == 1 || k2 == 1) { /* a plane (kind 1) and a bounded geometry */
    const int pl = k1 == 1 ? g1 : g2;
    const double *R = col->gmat + 9 * pl, *p = col->gpos + 3 * pl, *c = pl == g1 ? c2 : c1;
    const double r = col->grad[pl == g1 ? g2 : g1];
    const double h = R[2] * (c[0] - p[0]) + R[5] * (c[1] - p[1]) + R[8] * (c[2] - p[2]);
    return h - r - margin > col->apart_slack + 1e-9 * (r + margin); /* NaN: never */
  }
  const double d[3] = {c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2]}, r = col->grad[g1] + col->grad[g2];
  const double reach = r + margin + col->apart_slack + 1e-9 * (r + margin);
  if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach * reach) return 1; /* NaN or infinite reach: never */
  return boxes_apart(col, margin, g1, g2);
}

/* The pair's kept climb starts (grit_collision.climb), emptied when another pair held the slot; NULL when
 * switched off. Both geometries' starts are the last support vertices of those same geometries. */
static int climbs(const grit_shape *s) {
  return s->type == GRIT_GEOM_CONVEX && s->graph && s->nvert >= GRIT_HULL_SCAN_BELOW;
}

static int *climb_slot(grit_collision *col, const grit_model *m, int ga, int gb) {
  const int ng = m->ngeom;
  if (col->no_climb_cache || ng > 46340 || !(climbs(&m->geom_shape[ga]) || climbs(&m->geom_shape[gb])))
    return NULL; /* (the key fits an int; pairs without a climbing hull keep none) */
  const int key = ga * ng + gb, slot = key % col->climb_cap;
  int *e = col->climb + GRIT_CLIMB_ENTRY * slot;
  if (e[0] != key) {
    for (int i = 0; i < GRIT_CLIMB_ENTRY; ++i) e[i] = i ? -1 : key;
    col->far_axis[4 * slot + 3] = 0.0;
    col->far_vert[2 * slot] = col->far_vert[2 * slot + 1] = -1;
  }
  return e + 1;
}

/* Geometry g's support value along world direction d: max over its points x of d . x (its core's support
 * vertex from *start, which the climb updates, plus the radius). */
static double support_value(const grit_collision *col, const grit_model *m, int g, const double d[3], int *start) {
  const grit_shape *s = &m->geom_shape[g];
  const double *p = col->gpos + 3 * g, *R = col->gmat + 9 * g;
  double dl[3], x[3];
  grit_m3_tmulv(dl, R, d);
  grit_shape_core_support_hint(s, dl, x, start);
  return grit_v3_dot(d, p) + grit_v3_dot(dl, x) + grit_shape_core_radius(s) * grit_v3_norm(d);
}

/* Whether geometries ga, gb are farther apart along the pair's kept axis u (from gb towards ga, any length)
 * than the margin, by their supports at the present poses: min over ga of u . x less max over gb, over |u|,
 * bounds their distance from below. With the bounding test's slack (surely_apart), far above the round-off
 * of these sums and of GJK/EPA's distance: GJK/EPA would find no candidate (it finds none beyond the margin),
 * so the pair's candidates are the same whatever axis is kept; the axis only decides whether GJK/EPA runs. */
static int apart_along(const grit_collision *col, const grit_model *m, int ga, int gb, const double u[4], int *vert,
                       double margin) {
  const double nu[3] = {-u[0], -u[1], -u[2]};
  const double gap = -support_value(col, m, ga, nu, vert) - support_value(col, m, gb, u, vert + 1);
  const double reach = margin + col->apart_slack + 1e-9 * (margin + col->grad[ga] + col->grad[gb]);
  return gap > reach * grit_v3_norm(u); /* NaN: never */
}

/* The broad phase's filter: the model's (grit_geom_pair_allowed), after the bounding test above unless
 * switched off (grit_collision.no_apart); with the model's answers tabled (grit_collision.allowed), the
 * table first: a bit read spares most of an arm's pairs (a link and its parent's link) the bounding test,
 * and the conjunction is the same whichever test comes first. */
typedef struct filter_ctx {
  const grit_model *m;
  const grit_collision *col;
  double min_margin;
} filter_ctx;

static int pair_filter(const void *ctx, int i, int j) {
  const filter_ctx *f = ctx;
  const grit_collision *col = f->col;
  if (col->allowed && !col->no_allowed_table) {
    const size_t a = (size_t)i * (size_t)f->m->ngeom + (size_t)j;
    if (!(col->allowed[a >> 3] >> (a & 7) & 1)) return 0;
    return col->no_apart || !surely_apart(col, f->m, f->min_margin, i, j);
  }
  if (!col->no_apart && surely_apart(col, f->m, f->min_margin, i, j)) return 0;
  return grit_geom_pair_allowed(f->m, i, j);
}

/* A bound on the speed of the points of a geometry with origin c and bounding radius r on a body with
 * twist t = (w; v_O): |v_O + w x c| + |w| r (0 for a body at rest, even an unbounded plane). */
static double geom_speed(const double t[6], const double c[3], double r) {
  double vc[3];
  grit_v3_cross(vc, t, c);
  for (int i = 0; i < 3; ++i) vc[i] += t[3 + i];
  const double w = grit_v3_norm(t), v = grit_v3_norm(vc);
  return w > 0.0 ? v + w * r : v;
}

/* The speed bound of geometry g's points relative to the motion of body `ref` (-1: the world's frame) */
static double relative_speed(const grit_collision *col, const double *cvel, int b, int ref, int g) {
  const double *c = col->gpos + 3 * g, r = col->grad[g];
  if (ref < 0 || ref == b) return ref < 0 ? geom_speed(cvel + 6 * b, c, r) : 0.0;
  double t[6];
  for (int i = 0; i < 6; ++i) t[i] = cvel[6 * b + i] - cvel[6 * ref + i];
  return geom_speed(t, c, r);
}

/* window x s capped at the model's margin (an infinite or NaN bound gives the cap); gradient smoothing:
 * pairs within min_margin feel each other (its film and soft supports), so they must be found whatever
 * their speed (each box grows by half, the pair's margin below is at least min_margin) */
static double window_margin(const grit_collision_motion *mo, double s, double cap) {
  const double mg = mo->window * s;
  const double out = mg < cap ? mg : cap;
  return mo->min_margin > 0 ? fmax(out, 0.5 * mo->min_margin) : out;
}

/* Each geometry's speculative margin (grit_collision_detect), capped at the model's margin, from its
 * speed in the world and from its speed relative to its tree's root body: two points on one tree
 * approach and slip at most at the sum of the latter, since a rigid motion both share (the root's)
 * changes neither their distance nor, at one contact point, their relative velocity. */
static void speculative_margins(grit_collision *col, const grit_model *m, const grit_collision_motion *mo) {
  const double cap = m->opt.contact_margin;
  for (int g = 0; g < m->ngeom; ++g) {
    if (col->gtree[g] < 0) { /* on the world or welded to it: twists +0 (grit_collision_motion), whose bound
                                geom_speed gives as +0 at a finite origin (0 x c + 0, then norms of +-0) */
      col->gmargin[g] = col->gspec_tree[g] = window_margin(mo, 0.0, cap);
      continue;
    }
    const int b = m->geom_body[g], root = col->gtree[g] >= 0 ? col->groot[g] : -1;
    const double s = fmax(relative_speed(col, mo->cvel, b, -1, g), relative_speed(col, mo->cvel_star, b, -1, g));
    col->gmargin[g] = window_margin(mo, s, cap);
    if (root < 0 || col->no_tree_window) {
      col->gspec_tree[g] = col->gmargin[g];
      continue;
    }
    const double sr = fmax(relative_speed(col, mo->cvel, b, root, g), relative_speed(col, mo->cvel_star, b, root, g));
    col->gspec_tree[g] = window_margin(mo, sr, cap);
  }
}

/* Whether geometry g is where its box was last made, to the bit (then that box is still its box: a
 * function of the shape, the pose and the margin; a CONVEX box costs a pass over the hull, and a
 * geometry on a fixed or resting body keeps its place). Records the place otherwise. */
static int same_place(grit_collision *col, int g) {
  double *key = col->aabb_key + 13 * g;
  if (!memcmp(key, col->gpos + 3 * g, 3 * sizeof(double)) && !memcmp(key + 3, col->gmat + 9 * g, 9 * sizeof(double)) &&
      !memcmp(key + 12, col->gmargin + g, sizeof(double)))
    return 1;
  memcpy(key, col->gpos + 3 * g, 3 * sizeof(double));
  memcpy(key + 3, col->gmat + 9 * g, 9 * sizeof(double));
  key[12] = col->gmargin[g];
  return 0;
}

/* Bit j: row j of R equals row j of K, the last box's (then that row's supports are the last box's: equal
 * directions, if only in the signs of zeros, give equal dot products and so the same vertices). */
static int same_rows_of(const double K[9], const double R[9]) {
  return (K[0] == R[0] && K[1] == R[1] && K[2] == R[2]) | (K[3] == R[3] && K[4] == R[4] && K[5] == R[5]) << 1 |
         (K[6] == R[6] && K[7] == R[7] && K[8] == R[8]) << 2;
}

/* sgn of geometry.c's core support: +1 at 0 */
static double sgn(double x) { return x < 0.0 ? -1.0 : 1.0; }

/* A sphere's or capsule's box (half-length h; 0 for a sphere) by grit_shape_world_aabb's operations
 * (geometry.c: the support along each row of R and against it: the core's support point, 0 or the
 * capsule's end sgn(d_z) h, plus r d / |d| from grit_shape_support; then the same sums in the same
 * order), without its twelve calls: the same bits (test_step: round_boxes_same_bits). */
static void round_world_aabb(double r, double h, int capsule, const double p[3], const double R[9], double margin,
                             double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    double d[3] = {R[3 * k], R[3 * k + 1], R[3 * k + 2]}, x[3] = {0.0, 0.0, capsule ? sgn(d[2]) * h : 0.0};
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (r > 0.0 && n > 0.0)
      for (int j = 0; j < 3; ++j) x[j] += r * d[j] / n;
    hi[k] = p[k] + d[0] * x[0] + d[1] * x[1] + d[2] * x[2] + margin;
    for (int j = 0; j < 3; ++j) d[j] = -d[j], x[j] = 0.0;
    if (capsule) x[2] = sgn(d[2]) * h;
    n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (r > 0.0 && n > 0.0)
      for (int j = 0; j < 3; ++j) x[j] += r * d[j] / n;
    lo[k] = p[k] - (d[0] * x[0] + d[1] * x[1] + d[2] * x[2]) - margin;
  }
}

/* A cylinder's box (radius r, half-length h) by grit_shape_world_aabb's operations (geometry.c: the core
 * support along each row d of R, (r d_x / rho, r d_y / rho, sgn(d_z) h) with rho = hypot(d_x, d_y), 0 across
 * the axis when rho = 0; no radius added; the support against d by symmetry; then the same sums in the same
 * order), without its calls: the same bits (test_step: round_boxes_same_bits). */
static void cylinder_world_aabb(double r, double h, const double p[3], const double R[9], double margin, double lo[3],
                                double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    const double *d = R + 3 * k, rho = hypot(d[0], d[1]);
    const double x[3] = {rho > 0.0 ? r * d[0] / rho : 0.0, rho > 0.0 ? r * d[1] / rho : 0.0, sgn(d[2]) * h};
    hi[k] = p[k] + d[0] * x[0] + d[1] * x[1] + d[2] * x[2] + margin;
    const double s = d[0] * x[0] + d[1] * x[1] + d[2] * x[2];
    lo[k] = p[k] - s - margin;
  }
}

/* A box's box (half-sizes z) by grit_shape_world_aabb's operations (geometry.c: the core support along each
 * row d of R, sgn(d_j) z_j, no radius; the support against d by symmetry; the same sums in the same order),
 * without its six calls: the same bits (test_step: round_boxes_same_bits). */
static void box_world_aabb(const double z[3], const double p[3], const double R[9], double margin, double lo[3],
                           double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    const double *d = R + 3 * k, x[3] = {sgn(d[0]) * z[0], sgn(d[1]) * z[1], sgn(d[2]) * z[2]};
    hi[k] = p[k] + d[0] * x[0] + d[1] * x[1] + d[2] * x[2] + margin;
    const double s = d[0] * x[0] + d[1] * x[1] + d[2] * x[2];
    lo[k] = p[k] - s - margin;
  }
}

void grit_collision_geom_aabb(const grit_collision *col, const grit_model *m, int g, double lo[3], double hi[3]) {
  const grit_shape *sh = &m->geom_shape[g];
  const int round = sh->type == GRIT_GEOM_SPHERE || sh->type == GRIT_GEOM_CAPSULE;
  if (round && !col->no_sphere_box)
    round_world_aabb(sh->size[0], sh->size[1], sh->type == GRIT_GEOM_CAPSULE, col->gpos + 3 * g, col->gmat + 9 * g,
                     col->gmargin[g], lo, hi);
  else if (sh->type == GRIT_GEOM_BOX && !col->no_sphere_box)
    box_world_aabb(sh->size, col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g], lo, hi);
  else if (sh->type == GRIT_GEOM_CYLINDER && !col->no_sphere_box)
    cylinder_world_aabb(sh->size[0], sh->size[1], col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g], lo, hi);
  else
    grit_shape_world_aabb(sh, col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g], lo, hi);
}

grit_status grit_collision_detect(grit_collision *col, const grit_model *m, const double *xpos, const double *xmat,
                                  const grit_collision_motion *motion, char *message) {
  const int ng = m->ngeom;
  const double cap = m->opt.contact_margin;
  for (int g = 0; g < ng; ++g) {
    const int b = m->geom_body[g];
    grit_tf_compose(col->gpos + 3 * g, col->gmat + 9 * g, xpos + 3 * b, xmat + 9 * b, m->geom_pos + 3 * g,
                    m->geom_mat + 9 * g);
  }
  if (motion) speculative_margins(col, m, motion);
  else
    for (int g = 0; g < ng; ++g) col->gmargin[g] = col->gspec_tree[g] = cap;
  /* a geometry's own margin (MuJoCo's; contact_margin.h), beyond the cap: the box covers the larger
   * (margin_layer) or the sum (pair_margin, which reads the speculative margins alone) */
  if (col->margin_layer)
    for (int g = 0; g < ng; ++g) col->gmargin[g] = m->geom_margin[g] > col->gmargin[g] ? m->geom_margin[g] : col->gmargin[g];
  else
    for (int g = 0; g < ng; ++g) {
      col->gspec[g] = col->gmargin[g];
      if (m->geom_margin[g] > 0.0) col->gmargin[g] += m->geom_margin[g];
    }
  for (int g = 0; g < ng; ++g) {
    if (m->geom_shape[g].type != GRIT_GEOM_CONVEX) {
      grit_collision_geom_aabb(col, m, g, col->aabb + 6 * g, col->aabb + 6 * g + 3);
      continue;
    }
    const int same_R = !memcmp(col->aabb_key + 13 * g + 3, col->gmat + 9 * g, 9 * sizeof(double));
    const int same_rows = same_R || col->no_box_rows ? 7 * same_R : same_rows_of(col->aabb_key + 13 * g + 3, col->gmat + 9 * g);
    if (same_place(col, g)) continue; /* a hull turned, or only moved */
    if (same_rows == 0 || same_rows == 7) /* no row kept, or all: the supports climbed, or the last box's */
      grit_shape_world_aabb_hint(&m->geom_shape[g], col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g],
                                 col->aabb + 6 * g, col->aabb + 6 * g + 3, col->aabb_hint + 7 * g, same_R);
    else
      grit_shape_world_aabb_rows(&m->geom_shape[g], col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g],
                                 col->aabb + 6 * g, col->aabb + 6 * g + 3, col->aabb_hint + 7 * g, same_rows);
  }
  if (!col->no_apart) { /* the bounding test's slack: 1e-9 of the largest coordinate's magnitude, 6 of them */
    double big = 0.0;
    for (int i = 0; i < 3 * ng; ++i) big = fabs(col->gpos[i]) > big ? fabs(col->gpos[i]) : big;
    col->apart_slack = 1e-9 * (1.0 + 6.0 * big); /* a NaN coordinate: that pair's test says never */
  }
  int np = 0;
  const filter_ctx fc = {m, col, motion ? motion->min_margin : -INFINITY}; /* none: never raises a margin */
  /* the first two tests of grit_geom_pair_allowed (one weld, bit masks) run in the sweep */
  if (col->no_classes) grit_broadphase_set_classes(col->bp, NULL, NULL, NULL);
  else grit_broadphase_set_classes(col->bp, m->geom_contype, m->geom_conaffinity, col->gweld);
  grit_status s = grit_broadphase_pairs(col->bp, col->aabb, pair_filter, &fc, col->pairs, col->cap_pairs, &np, NULL);
  if (s == GRIT_OK) s = add_explicit_pairs(col, m, &np);
  if (s != GRIT_OK)
    return grit_set_error(message, s, "collision: more than %d broad-phase pairs (raise options.max_contacts)",
                          col->cap_pairs);
  col->n = 0;
  col->far_skips = 0;
  for (int k = 0; k < np; ++k) {
    int ga = col->pairs[2 * k], gb = col->pairs[2 * k + 1];
    /* put a plane first so its normal (pointing out of the half-space) is the pair's normal */
    if (m->geom_shape[gb].type < m->geom_shape[ga].type) {
      int t = ga;
      ga = gb;
      gb = t;
    }
    if (grit_hydro_pair(m, &ga, &gb)) { /* pressure-field patches (hydro.h), the rigid geometry first */
      s = grit_hydro_patches(m, ga, gb, col->gpos + 3 * ga, col->gmat + 9 * ga, col->gpos + 3 * gb,
                             col->gmat + 9 * gb, col->c, col->cap, &col->n);
      if (s != GRIT_OK)
        return grit_set_error(message, s, "collision: more than %d contact candidates (raise options.max_contacts)",
                              col->cap);
      continue;
    }
    grit_contact_point pts[GRIT_HFIELD_MAX_POINTS > GRIT_COLLIDE_MAX_POINTS ? GRIT_HFIELD_MAX_POINTS
                                                                           : GRIT_COLLIDE_MAX_POINTS];
    int npts = 0;
    const double margin = pair_margin(col, m, fc.min_margin, ga, gb);
    if (m->geom_shape[gb].type == GRIT_GEOM_HFIELD) { /* the field first: the normal points out of it */
      const int t = ga;
      ga = gb;
      gb = t;
    }
    if (m->geom_shape[ga].type == GRIT_GEOM_HFIELD)
      s = grit_collide_hfield(&m->geom_shape[ga], col->gpos + 3 * ga, col->gmat + 9 * ga, &m->geom_shape[gb],
                              col->gpos + 3 * gb, col->gmat + 9 * gb, margin, pts, &npts);
    else {
      int *hint = climb_slot(col, m, ga, gb);
      const int slot = hint ? (int)((hint - 1 - col->climb) / GRIT_CLIMB_ENTRY) : -1;
      double *axis = slot >= 0 && !col->no_far_axis ? col->far_axis + 4 * slot : NULL;
      if (axis && axis[3] != 0.0 && apart_along(col, m, ga, gb, axis, col->far_vert + 2 * slot, margin)) {
        col->far_skips++;
        continue;
      }
      s = grit_collide_kept(&m->geom_shape[ga], col->gpos + 3 * ga, col->gmat + 9 * ga, &m->geom_shape[gb],
                            col->gpos + 3 * gb, col->gmat + 9 * gb, margin, pts, GRIT_COLLIDE_MAX_POINTS, &npts, hint,
                            axis);
    }
    if (s != GRIT_OK)
      return grit_set_error(message, s, "collision: geoms %d and %d: %s", ga, gb, grit_status_string(s));
    for (int i = 0; i < npts; ++i) {
      if (col->n >= col->cap)
        return grit_set_error(message, GRIT_ERR_CAPACITY,
                              "collision: more than %d contact candidates (raise options.max_contacts)", col->cap);
      grit_contact_candidate *c = &col->c[col->n++];
      c->geom[0] = ga;
      c->geom[1] = gb;
      c->body[0] = m->geom_body[ga];
      c->body[1] = m->geom_body[gb];
      c->pt = pts[i];
      c->k_patch = 0.0;
    }
  }
  return GRIT_OK;
}
