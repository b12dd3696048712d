/* SPDX-License-Identifier: Apache-2.0 */
/* collision_narrow.c — narrow phase dispatch and the closed-form pairs.
 *
 * Each pair is put in a canonical order (lower type first; equal types by pose) so that swapping the
 * arguments runs the very same arithmetic: phi is identical and the output is flipped on the way out.
 * Pairs with a closed form: plane with every convex shape, sphere-sphere, sphere-capsule, sphere-box,
 * capsule-capsule, box-box (collision_box.c). Every other pair takes the GJK/EPA path of collision_gjk.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collision_narrow.h"
#include "contact_geometry.h"
#include "grit/math.h"
#include "hull_graph.h"

feature grit_narrow_point_feature(const double p[3], double r) {
  feature f = {GRIT_FEATURE_POINT, p, NULL, r, {0.0, 0.0, 0.0}};
  return f;
}

/* Records one candidate given in the pair function's order: n from a' to b', wa on a', wb on b', and
 * the features of the two witness points (wa = core_a + ra n, wb = core_b - rb n). */
void grit_narrow_emit_features(collector *c, double phi, const double n[3], const double wa[3], const double wb[3],
                          feature fa, feature fb) {
  if (c->n >= c->max) {
    c->overflow = 1;
    return;
  }
  grit_contact_point *o = &c->out[c->n++];
  o->phi = phi;
  grit_v3_scale(o->n, n, c->flip ? -1.0 : 1.0);
  grit_v3_copy(o->pa, c->flip ? wb : wa);
  grit_v3_copy(o->pb, c->flip ? wa : wb);
  grit_tf_apply_inv(o->pa_local, c->pa, c->Ra, o->pa);
  grit_tf_apply_inv(o->pb_local, c->pb, c->Rb, o->pb);
  grit_m3_tmulv(o->n_local, c->Ra, o->n);
  const feature *f[2] = {c->flip ? &fb : &fa, c->flip ? &fa : &fb};
  const double *pose_p[2] = {c->pa, c->pb}, *pose_R[2] = {c->Ra, c->Rb};
  int *kind[2] = {&o->fa, &o->fb};
  double *fp[2] = {o->fa_p, o->fb_p}, *fu[2] = {o->fa_u, o->fb_u}, *fq[2] = {o->fa_q, o->fb_q}, *r[2] = {&o->ra, &o->rb};
  for (int k = 0; k < 2; ++k) {
    *kind[k] = f[k]->kind;
    grit_tf_apply_inv(fp[k], pose_p[k], pose_R[k], f[k]->p);
    if (f[k]->u) grit_m3_tmulv(fu[k], pose_R[k], f[k]->u);
    else grit_v3_zero(fu[k]);
    *r[k] = f[k]->r;
    grit_v3_copy(fq[k], f[k]->q);
  }
  o->clip = 0;
}

/* A candidate whose witness points are material points (the general path): point features of radius
 * 0; the re-evaluation then turns the normal with a. */
void grit_narrow_emit(collector *c, double phi, const double n[3], const double wa[3], const double wb[3]) {
  grit_narrow_emit_features(c, phi, n, wa, wb, grit_narrow_point_feature(wa, 0.0), grit_narrow_point_feature(wb, 0.0));
}

/* --------------------------------------------------------------------------- round shapes */

/* Two spheres (centres ca, cb, radii ra, rb), the building block of every pair of round cores; ua, ub
 * are the directions of the axes the centres lie on (NULL: the centre is a point feature: a sphere's
 * centre or a capsule's end). fallback is the normal used when the centres coincide. */
static void sphere_pair(collector *c, const double ca[3], double ra, const double *ua, const double cb[3], double rb,
                        const double *ub, double margin, const double fallback[3]) {
  double d[3], n[3], wa[3], wb[3];
  grit_v3_sub(d, cb, ca);
  double dist = grit_v3_norm(d), phi = dist - ra - rb;
  if (!(phi < margin)) return;
  if (dist > 1e-15 * (ra + rb)) grit_v3_scale(n, d, 1.0 / dist);
  else grit_v3_copy(n, fallback);
  grit_v3_addscl(wa, ca, n, ra);
  grit_v3_addscl(wb, cb, n, -rb);
  feature fa = {ua ? GRIT_FEATURE_LINE : GRIT_FEATURE_POINT, ca, ua, ra, {0.0, 0.0, 0.0}};
  feature fb = {ub ? GRIT_FEATURE_LINE : GRIT_FEATURE_POINT, cb, ub, rb, {0.0, 0.0, 0.0}};
  grit_narrow_emit_features(c, phi, n, wa, wb, fa, fb);
}

static void sphere_sphere(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  static const double up[3] = {0, 0, 1};
  sphere_pair(c, a->p, a->shape->size[0], NULL, b->p, b->shape->size[0], NULL, margin, up);
}

/* The capsule's axis point nearest the sphere's centre, then two spheres. */
static void sphere_capsule(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double u[3], d[3], q[3], perp[3];
  column(u, b->R, 2);
  grit_v3_sub(d, a->p, b->p);
  double h = b->shape->size[1], t0 = grit_v3_dot(u, d), t = fmin(h, fmax(-h, t0));
  grit_v3_addscl(q, b->p, u, t);
  perpendicular(perp, u);
  /* the nearest axis point slides along the axis, unless it is an end */
  sphere_pair(c, a->p, a->shape->size[0], NULL, q, b->shape->size[0], t == t0 ? u : NULL, margin, perp);
}

/* Closest points of segments p1 + s d1 and p2 + t d2, s, t in [0, 1] (Ericson, Real-Time Collision
 * Detection, 5.1.9); the caller handles parallel segments. */
static void segment_segment(const double p1[3], const double d1[3], const double p2[3], const double d2[3],
                            double *s, double *t) {
  double r[3];
  grit_v3_sub(r, p1, p2);
  double a = grit_v3_dot(d1, d1), e = grit_v3_dot(d2, d2), f = grit_v3_dot(d2, r);
  double cc = grit_v3_dot(d1, r), b = grit_v3_dot(d1, d2), den = a * e - b * b;
  *s = den > 0.0 ? fmin(1.0, fmax(0.0, (b * f - cc * e) / den)) : 0.0;
  *t = (b * *s + f) / e;
  if (*t < 0.0) *t = 0.0, *s = fmin(1.0, fmax(0.0, -cc / a));
  else if (*t > 1.0) *t = 1.0, *s = fmin(1.0, fmax(0.0, (b - cc) / a));
}

/* Axes closer to parallel than this (sin^2 of their angle) are parallel: the closest points are then a
 * whole interval, represented by its two ends (a capsule lying on another rests on two points). Near
 * this angle the unique closest points are ill-conditioned (their error grows like eps / sin^2). */
#define CAPSULE_PARALLEL_SIN2 1e-10

static void capsule_capsule(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double u1[3], u2[3], p1[3], p2[3], d1[3], d2[3], perp[3], x1[3], x2[3];
  const double h1 = a->shape->size[1], h2 = b->shape->size[1], r1 = a->shape->size[0], r2 = b->shape->size[0];
  column(u1, a->R, 2);
  column(u2, b->R, 2);
  grit_v3_addscl(p1, a->p, u1, -h1);
  grit_v3_addscl(p2, b->p, u2, -h2);
  grit_v3_scale(d1, u1, 2.0 * h1);
  grit_v3_scale(d2, u2, 2.0 * h2);
  grit_v3_cross(perp, u1, u2);
  double sin2 = grit_v3_norm2(perp);
  if (sin2 > CAPSULE_PARALLEL_SIN2) {
    grit_v3_scale(perp, perp, 1.0 / sqrt(sin2));
    double s, t;
    segment_segment(p1, d1, p2, d2, &s, &t);
    grit_v3_addscl(x1, p1, d1, s);
    grit_v3_addscl(x2, p2, d2, t);
    sphere_pair(c, x1, r1, s > 0.0 && s < 1.0 ? u1 : NULL, x2, r2, t > 0.0 && t < 1.0 ? u2 : NULL, margin, perp);
    return;
  }
  perpendicular(perp, u1);
  /* parallel: segment 2 projected on segment 1's parameter, intersected with [0, 1] */
  double q0[3], q1[3], a2 = grit_v3_dot(d1, d1);
  grit_v3_sub(q0, p2, p1);
  grit_v3_add(q1, q0, d2);
  double s0 = grit_v3_dot(q0, d1) / a2, s1 = grit_v3_dot(q1, d1) / a2;
  double lo = fmax(0.0, fmin(s0, s1)), hi = fmin(1.0, fmax(s0, s1));
  const int npts = (hi - lo) * 2.0 * h1 > 1e-9 * (h1 + h2) ? 2 : 1;
  for (int k = 0; k < npts; ++k) {
    double s, t, e = grit_v3_dot(d2, d2), w[3];
    if (npts == 2) {
      s = k ? hi : lo;
      grit_v3_addscl(x1, p1, d1, s);
      grit_v3_sub(w, x1, p2);
      t = fmin(1.0, fmax(0.0, grit_v3_dot(w, d2) / e));
    } else {
      segment_segment(p1, d1, p2, d2, &s, &t);
    }
    grit_v3_addscl(x1, p1, d1, s);
    grit_v3_addscl(x2, p2, d2, t);
    /* parallel axes: each point is an end of its segment or the projection of the other's end */
    const int end1 = s <= 0.0 || s >= 1.0, end2 = t <= 0.0 || t >= 1.0;
    sphere_pair(c, x1, r1, end1 ? NULL : u1, x2, r2, end2 || !end1 ? NULL : u2, margin, perp);
  }
}

/* Sphere (a) and box (b): the box point nearest the centre; inside the box, the nearest face. */
static void sphere_box(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  const double *h = b->shape->size, r = a->shape->size[0];
  double cl[3], q[3], nl[3], n[3], wa[3], wb[3], phi;
  grit_tf_apply_inv(cl, b->p, b->R, a->p); /* the sphere's centre in the box frame */
  int inside = 1, clamped = 0;
  for (int k = 0; k < 3; ++k) {
    q[k] = fmin(h[k], fmax(-h[k], cl[k]));
    if (q[k] != cl[k]) inside = 0, clamped++;
  }
  if (!inside) {
    grit_v3_sub(nl, cl, q); /* from the box towards the centre */
    double dist = grit_v3_normalize(nl);
    phi = dist - r;
  } else {
    int k = 0;
    for (int j = 1; j < 3; ++j)
      if (h[j] - fabs(cl[j]) < h[k] - fabs(cl[k])) k = j;
    double s = cl[k] < 0.0 ? -1.0 : 1.0;
    phi = -(h[k] - fabs(cl[k])) - r;
    grit_v3_zero(nl);
    nl[k] = s;
    q[k] = s * h[k];
  }
  if (!(phi < margin)) return;
  grit_m3_mulv(n, b->R, nl);
  grit_v3_scale(n, n, -1.0); /* from the sphere (a) towards the box (b) */
  grit_v3_addscl(wa, a->p, n, r);
  grit_tf_apply(wb, b->p, b->R, q);
  /* the box's feature: a face (one coordinate clamped, or inside), an edge (two) or a corner (three) */
  double out[3], edge[3];
  grit_v3_scale(out, n, -1.0);
  feature fb = grit_narrow_point_feature(wb, 0.0);
  if (inside || clamped == 1) {
    fb.kind = GRIT_FEATURE_PLANE;
    fb.u = out;
  } else if (clamped == 2) {
    int k = 0;
    while (q[k] != cl[k]) k++; /* the free coordinate: the edge's direction */
    column(edge, b->R, k);
    fb.kind = GRIT_FEATURE_LINE;
    fb.u = edge;
  }
  grit_narrow_emit_features(c, phi, n, wa, wb, grit_narrow_point_feature(a->p, r), fb);
}

/* ------------------------------------------------------------------------------ plane pairs */
/* The plane is a; the normal is the plane's +z; the witness on the plane is the projection of b's. */

static double plane_height(const grit_placed_shape *pl, const double x[3]) {
  double z[3], d[3];
  column(z, pl->R, 2);
  grit_v3_sub(d, x, pl->p);
  return grit_v3_dot(z, d);
}

/* Emits the point x of b (world) against plane a: phi = height of x. x is the point of b's core k at
 * distance r below it (r = 0: x is a vertex or a point of a face, its own core). */
static void plane_emit(const grit_placed_shape *pl, const double x[3], feature fb, double margin, collector *c) {
  double z[3], wa[3], phi = plane_height(pl, x);
  if (!(phi < margin)) return;
  column(z, pl->R, 2);
  grit_v3_addscl(wa, x, z, -phi);
  feature fa = {GRIT_FEATURE_PLANE, wa, z, 0.0, {0.0, 0.0, 0.0}};
  grit_narrow_emit_features(c, phi, z, wa, x, fa, fb);
}

static void plane_round_point(const grit_placed_shape *pl, const double x[3], const double k[3], double r,
                              double margin, collector *c) {
  plane_emit(pl, x, grit_narrow_point_feature(k, r), margin, c);
}

static void plane_point(const grit_placed_shape *pl, const double x[3], double margin, collector *c) {
  plane_round_point(pl, x, x, 0.0, margin, c);
}

static void plane_sphere(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double z[3], x[3];
  column(z, a->R, 2);
  grit_v3_addscl(x, b->p, z, -b->shape->size[0]);
  plane_round_point(a, x, b->p, b->shape->size[0], margin, c);
}

/* The support point in -z, as a SUPPORT feature: it slides over the ellipsoid as it turns. */
static void plane_ellipsoid(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double z[3], dl[3], xl[3], x[3];
  column(z, a->R, 2);
  grit_v3_scale(z, z, -1.0);
  grit_m3_tmulv(dl, b->R, z);
  grit_shape_support(b->shape, dl, xl);
  grit_tf_apply(x, b->p, b->R, xl);
  feature fb = {GRIT_FEATURE_SUPPORT, b->p, NULL, 0.0, {b->shape->size[0], b->shape->size[1], b->shape->size[2]}};
  plane_emit(a, x, fb, margin, c);
}

/* Both end caps: the deepest point of each end sphere (a capsule lying flat rests on two points). */
static void plane_capsule(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double u[3], z[3], e[3];
  column(u, b->R, 2);
  column(z, a->R, 2);
  for (int k = 0; k < 2; ++k) {
    double x[3];
    grit_v3_addscl(e, b->p, u, k ? b->shape->size[1] : -b->shape->size[1]);
    grit_v3_addscl(x, e, z, -b->shape->size[0]);
    plane_round_point(a, x, e, b->shape->size[0], margin, c);
  }
}

/* Emits, in index order, the selected points x[i] (world) with sel[i] set. */
static void plane_points(const grit_placed_shape *a, const double (*x)[3], const int *sel, int np, double margin,
                         collector *c) {
  for (int i = 0; i < np; ++i)
    if (sel[i]) plane_point(a, x[i], margin, c);
}

/* The corners below the margin, at most the 4 deepest (ties: lower index), in corner order. */
static void plane_box(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double x[8][3], phi[8];
  int sel[8] = {0};
  for (int i = 0; i < 8; ++i) {
    double l[3];
    for (int k = 0; k < 3; ++k) l[k] = (i >> k & 1) ? b->shape->size[k] : -b->shape->size[k];
    grit_tf_apply(x[i], b->p, b->R, l);
    phi[i] = plane_height(a, x[i]);
  }
  for (int m = 0; m < 4; ++m) {
    int best = -1;
    for (int i = 0; i < 8; ++i)
      if (!sel[i] && phi[i] < margin && (best < 0 || phi[i] < phi[best])) best = i;
    if (best >= 0) sel[best] = 1;
  }
  plane_points(a, (const double(*)[3])x, sel, 8, margin, c);
}

/* The deepest rim point of each end face; and on the lower face two more rim points, 120 degrees either
 * side of its deepest, so that an upright cylinder stands on a triangle. On a tilted cylinder the points
 * are RIM features: they slide along the rim as the cylinder turns (as a rolling cylinder's contact
 * stays at the bottom), and their derivatives follow. Nearly upright (the axis within 1e-3 rad of the
 * normal) the deepest rim point turns around the rim at a rate of 1/tilt: the points are held as
 * material points instead, the face's support being the same whichever way the triangle points. */
static void plane_cylinder(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  const double r = b->shape->size[0], h = b->shape->size[1];
  double u[3], z[3], w[3], v[3], x[4][3], ctr[4][3];
  column(u, b->R, 2);
  column(z, a->R, 2);
  grit_v3_scale(w, z, -1.0);
  grit_v3_addscl(w, w, u, grit_v3_dot(z, u)); /* -z without its axial part */
  const double tilt = grit_v3_normalize(w);
  if (tilt <= 1e-12) column(w, b->R, 0); /* upright: every rim point is as deep */
  grit_v3_cross(v, u, w);
  for (int k = 0; k < 2; ++k) {
    grit_v3_addscl(ctr[k], b->p, u, k ? h : -h);
    grit_v3_addscl(x[k], ctr[k], w, r);
  }
  const int low = plane_height(a, x[1]) < plane_height(a, x[0]) ? 1 : 0;
  const double s120 = 0.86602540378443864676; /* sin(120 deg); cos(120 deg) = -1/2 */
  for (int k = 0; k < 2; ++k) {
    grit_v3_copy(ctr[2 + k], ctr[low]);
    grit_v3_addscl(x[2 + k], ctr[2 + k], w, -0.5 * r);
    grit_v3_addscl(x[2 + k], x[2 + k], v, k ? -s120 * r : s120 * r);
  }
  const double phase[4][2] = {{1.0, 0.0}, {1.0, 0.0}, {-0.5, s120}, {-0.5, -s120}};
  for (int i = 0; i < 4; ++i) {
    feature f = {GRIT_FEATURE_RIM, ctr[i], u, 0.0, {r, phase[i][0], phase[i][1]}};
    plane_emit(a, x[i], tilt >= 1e-3 ? f : grit_narrow_point_feature(x[i], 0.0), margin, c);
  }
}

/* Vertices below the margin; beyond 4 of them, 4 chosen to spread the support: the deepest, then each
 * time the vertex farthest (along the plane) from those chosen, less its extra depth above the deepest,
 * so that a resting face's corners win over higher vertices. Emitted in vertex order. The first pass (or
 * plane_convex_graph) keeps up to PC_KEPT candidates (index, world point, height) for the choice, which
 * then scans them alone (a resting wheel's hull, unitree_mujoco's B2-W: thousands of vertices, tens below
 * the margin; stop 30): the same points as scanning every vertex. PC_KEPT 512 (stop 31; 256 before): H1's
 * flat soles put up to ~300 vertices below the margin. */
enum { PC_CAP = 4, PC_KEPT = 512, PC_BAND = 384, PC_WORDS = 128 };

/* The first pass by the hull graph: the vertices below the margin (index and world point, in vertex order),
 * *phimin, *first as the scan finds them, without visiting every vertex. The support climb finds the
 * deepest vertex; a breadth-first search over edges from it, through the vertices below margin + tol, finds
 * every vertex below the margin: the vertices of a convex polytope below a linear function's level are
 * connected on its edge graph, and tol (far above the round-off of the heights and the hull's 1e-9
 * flatness) keeps a vertex just below the margin reachable through neighbours just above it. The loose
 * vertices are scanned. Each height is plane_height of the scan's world point, so the same set and bits.
 * The candidates come in the search's order, with their heights hc; *first ties to the lowest index, as
 * the scan's. Returns the count, or -1 where the scan must run (no graph, vertices dropped as inside, a plateau, more
 * than PC_KEPT below the margin or PC_BAND in the band). */
static int plane_convex_graph(const grit_placed_shape *a, const grit_placed_shape *b, double margin, int *ic,
                              double (*xc)[3], double *hc, double *phimin, int *first) {
  const grit_shape *s = b->shape;
  const int *adr, *nbr, *loose;
  if (!s->graph || s->nvert < GRIT_HULL_SCAN_BELOW || s->nvert >= 64 * PC_WORDS) return -1;
  const int nl = grit_hull_graph_lists(s->graph, &adr, &nbr, &loose);
  if (nl < 0) return -1;
  double z[3], d[3];
  column(z, a->R, 2);
  for (int k = 0; k < 3; ++k) d[k] = -(b->R[k] * z[0] + b->R[3 + k] * z[1] + b->R[6 + k] * z[2]); /* -R^T z */
  const int top = grit_hull_climb(s, d); /* the deepest vertex on edges, up to round-off (tol covers it) */
  const double tol = 1e-8 * (grit_hull_graph_radius(s->graph) + fabs(b->p[0]) + fabs(b->p[1]) + fabs(b->p[2]) +
                             fabs(a->p[0]) + fabs(a->p[1]) + fabs(a->p[2]) + fabs(margin));
  int band[PC_BAND], below[PC_BAND], nb = 1, count = 0, tested = 1;
  double xb[PC_BAND][3], hb[PC_BAND];
  grit_tf_apply(xb[0], b->p, b->R, s->vertices + 3 * top);
  hb[0] = plane_height(a, xb[0]);
  if (!(hb[0] < margin + tol)) nb = 0; /* no vertex on edges near the margin */
  uint64_t seen[PC_WORDS]; /* the vertices tested: each transformed once */
  memset(seen, 0, sizeof(uint64_t) * (size_t)(s->nvert / 64 + 1));
  band[0] = top, seen[top / 64] |= 1ull << (top % 64);
  for (int q = 0; q < nb; ++q) {
    if (hb[q] < margin && ++count > PC_KEPT) return -1; /* the scan keeps no more */
    for (int k = adr[band[q]]; k < adr[band[q] + 1]; ++k) {
      const int w = nbr[k];
      if (seen[w / 64] >> (w % 64) & 1) continue;
      seen[w / 64] |= 1ull << (w % 64);
      if (++tested > s->nvert / 4) return -1; /* a large part of the hull (a flat sole): the scan costs less */
      double x[3];
      grit_tf_apply(x, b->p, b->R, s->vertices + 3 * w);
      const double h = plane_height(a, x);
      if (!(h < margin + tol)) continue;
      if (nb == PC_BAND) return -1;
      band[nb] = w, hb[nb] = h, grit_v3_copy(xb[nb++], x);
    }
  }
  count = 0;
  for (int q = 0; q < nb; ++q)
    if (hb[q] < margin) below[count++] = q;
  for (int j = 0; j < nl; ++j) { /* the loose vertices, by the same test */
    double x[3];
    grit_tf_apply(x, b->p, b->R, s->vertices + 3 * loose[j]);
    const double h = plane_height(a, x);
    if (!(h < margin)) continue;
    if (nb == PC_BAND) return -1;
    band[nb] = loose[j], hb[nb] = h, grit_v3_copy(xb[nb], x), below[count++] = nb++;
  }
  if (count > PC_KEPT) return -1;
  *phimin = INFINITY, *first = -1;
  for (int j = 0; j < count; ++j) { /* band order; the scan's first: the lowest index of the least height */
    const int q = below[j];
    ic[j] = band[q], hc[j] = hb[q], grit_v3_copy(xc[j], xb[q]);
    if (hb[q] < *phimin || (hb[q] == *phimin && band[q] < *first)) *phimin = hb[q], *first = band[q];
  }
  return count;
}

/* The choice among the kept candidates (any order): the scan's rounds, with the heights the first pass
 * found (the same bits) and each candidate's least distance to the chosen points kept across the rounds
 * (the minimum of the same distances, whatever their order: no NaN or -0, phi < margin excludes NaN
 * points), one distance a candidate a round; ties go to the lowest vertex index as the scan's strict > in
 * vertex order. Returns the chosen count; y their world points (the candidates' own bits). */
static int plane_convex_choose(const double z[3], int count, const int *ic, const double (*xc)[3],
                               const double *hc, double phimin, int first, int chosen[PC_CAP],
                               double y[PC_CAP][3]) {
  double md[PC_KEPT];
  int last = -1;
  for (int k = 0; k < count; ++k) {
    md[k] = INFINITY;
    if (ic[k] == first) last = k;
  }
  int nch = 0;
  while (last >= 0) {
    chosen[nch] = ic[last], grit_v3_copy(y[nch++], xc[last]);
    md[last] = -INFINITY; /* taken: it never scores again */
    if (nch == PC_CAP) break;
    const double *yl = xc[last];
    int best = -1;
    double best_score = -INFINITY;
    for (int k = 0; k < count; ++k) {
      if (md[k] == -INFINITY) continue;
      double d[3];
      grit_v3_sub(d, xc[k], yl);
      grit_v3_addscl(d, d, z, -grit_v3_dot(d, z));
      const double r = grit_v3_norm(d);
      if (r < md[k] || md[k] != md[k]) md[k] = r; /* fmin(md[k], r) */
      const double score = md[k] - (hc[k] - phimin);
      if (score > best_score || (best >= 0 && score == best_score && ic[k] < ic[best])) best_score = score, best = k;
    }
    last = best; /* -1: NaN depths */
  }
  return nch;
}

static void plane_convex(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  enum { CAP = PC_CAP, KEPT = PC_KEPT };
  const grit_shape *s = b->shape;
  double z[3], phimin = INFINITY, xc[KEPT][3], hc[KEPT];
  int first = -1, ic[KEPT], count = plane_convex_graph(a, b, margin, ic, xc, hc, &phimin, &first);
  column(z, a->R, 2);
  if (count < 0) { /* no graph path: every vertex */
    /* With a graph (its radius bounds |v|), a vertex's height without its world point, c0 + e.v, is
     * within round-off (~1e-15 of lim's sum) of the exact one: one above lim is surely not below the
     * margin, and left out (phimin and first matter only when some vertex is below the margin, where
     * they are the same). A flat sole bails from the graph's search: ~1 in 3 of H1's calls falling. */
    double e[3], lim = INFINITY;
    const double c0 = z[0] * (b->p[0] - a->p[0]) + z[1] * (b->p[1] - a->p[1]) + z[2] * (b->p[2] - a->p[2]);
    for (int k = 0; k < 3; ++k) e[k] = b->R[k] * z[0] + b->R[3 + k] * z[1] + b->R[6 + k] * z[2]; /* R^T z */
    if (s->graph)
      lim = margin + 1e-12 * (grit_hull_graph_radius(s->graph) + fabs(b->p[0]) + fabs(b->p[1]) + fabs(b->p[2]) +
                              fabs(a->p[0]) + fabs(a->p[1]) + fabs(a->p[2]) + fabs(margin));
    count = 0, phimin = INFINITY, first = -1;
    for (int i = 0; i < s->nvert; ++i) {
      double x[3], phi;
      const double *v = s->vertices + 3 * i;
      if (!(c0 + (e[0] * v[0] + e[1] * v[1] + e[2] * v[2]) < lim)) continue;
      grit_tf_apply(x, b->p, b->R, v);
      phi = plane_height(a, x);
      if (phi < margin) {
        if (count < KEPT) ic[count] = i, hc[count] = phi, grit_v3_copy(xc[count], x);
        count++;
      }
      if (phi < phimin) phimin = phi, first = i;
    }
  }
  int chosen[CAP], nch = 0;
  double y[CAP][3];
  if (count <= CAP) { /* all of them */
    for (int j = 0; j < count; ++j) chosen[j] = ic[j], grit_v3_copy(y[j], xc[j]);
    nch = count;
  } else if (count <= KEPT) {
    nch = plane_convex_choose(z, count, ic, (const double(*)[3])xc, hc, phimin, first, chosen, y);
  } else { /* too many kept: the rounds over every vertex */
    chosen[nch] = first;
    grit_tf_apply(y[nch++], b->p, b->R, s->vertices + 3 * first);
    while (nch < CAP) {
      int best = -1;
      double best_score = -INFINITY;
      for (int i = 0; i < s->nvert; ++i) {
        double x[3], phi, score = INFINITY;
        grit_tf_apply(x, b->p, b->R, s->vertices + 3 * i);
        phi = plane_height(a, x);
        int taken = 0;
        for (int j = 0; j < nch; ++j) taken |= chosen[j] == i;
        if (taken || !(phi < margin)) continue;
        for (int j = 0; j < nch; ++j) {
          double d[3];
          grit_v3_sub(d, x, y[j]);
          grit_v3_addscl(d, d, z, -grit_v3_dot(d, z));
          score = fmin(score, grit_v3_norm(d));
        }
        score -= phi - phimin;
        if (score > best_score) best_score = score, best = i;
      }
      if (best < 0) break; /* NaN depths */
      chosen[nch] = best;
      grit_tf_apply(y[nch++], b->p, b->R, s->vertices + 3 * best);
    }
  }
  for (int k = 1; k < nch; ++k) /* vertex order */
    for (int j = k; j > 0 && chosen[j - 1] > chosen[j]; --j) {
      double t[3];
      const int ti = chosen[j];
      chosen[j] = chosen[j - 1], chosen[j - 1] = ti;
      grit_v3_copy(t, y[j]), grit_v3_copy(y[j], y[j - 1]), grit_v3_copy(y[j - 1], t);
    }
  for (int j = 0; j < nch; ++j) plane_point(a, y[j], margin, c);
}

/* ---------------------------------------------------------------------------- dispatch */

/* The feature of shape x that its witness point w lies on, n being the outward normal there (pointing
 * from x towards the other shape): a sphere's centre, a capsule's axis or end with the radius, a box's
 * face, edge or corner, a cylinder's axis (its side, with the radius) or cap plane, a cylinder's rim (a
 * RIM at angle 0) or an ellipsoid's point (SUPPORT), these two valid against a plane feature only (the
 * caller checks); otherwise (a convex) the point itself. Storage for the core and direction is given. */
static feature infer_feature(const grit_placed_shape *x, const double w[3], const double n[3], double core[3],
                             double dir[3]) {
  const double *h = x->shape->size;
  switch (x->shape->type) {
    case GRIT_GEOM_SPHERE:
      return grit_narrow_point_feature(x->p, h[0]);
    case GRIT_GEOM_CAPSULE: {
      double u[3], d[3];
      column(u, x->R, 2);
      grit_v3_addscl(core, w, n, -h[0]); /* back to the axis */
      grit_v3_sub(d, core, x->p);
      const double t = grit_v3_dot(d, u);
      if (fabs(t) < h[1] * (1.0 - 1e-9)) {
        grit_v3_copy(dir, u);
        feature f = {GRIT_FEATURE_LINE, core, dir, h[0], {0.0, 0.0, 0.0}};
        return f;
      }
      grit_v3_addscl(core, x->p, u, t < 0.0 ? -h[1] : h[1]);
      return grit_narrow_point_feature(core, h[0]);
    }
    case GRIT_GEOM_BOX: {
      double l[3];
      grit_tf_apply_inv(l, x->p, x->R, w);
      int on[3], k = 0;
      for (int j = 0; j < 3; ++j) {
        on[j] = fabs(fabs(l[j]) - h[j]) <= 1e-9 * (h[0] + h[1] + h[2]);
        k += on[j];
      }
      if (k == 1) { /* a face: its outward normal */
        int j = on[0] ? 0 : on[1] ? 1 : 2;
        column(dir, x->R, j);
        grit_v3_scale(dir, dir, l[j] < 0.0 ? -1.0 : 1.0);
        feature f = {GRIT_FEATURE_PLANE, w, dir, 0.0, {0.0, 0.0, 0.0}};
        return f;
      }
      if (k == 2) { /* an edge: along the free axis */
        int j = !on[0] ? 0 : !on[1] ? 1 : 2;
        column(dir, x->R, j);
        feature f = {GRIT_FEATURE_LINE, w, dir, 0.0, {0.0, 0.0, 0.0}};
        return f;
      }
      return grit_narrow_point_feature(w, 0.0);
    }
    case GRIT_GEOM_CYLINDER: { /* the side: the axis with the radius; a cap: its plane; the rim: itself */
      double l[3], u[3];
      grit_tf_apply_inv(l, x->p, x->R, w);
      column(u, x->R, 2);
      const double radial = hypot(l[0], l[1]), r = h[0], hl = h[1];
      const int side = fabs(radial - r) <= 1e-9 * r, cap = fabs(fabs(l[2]) - hl) <= 1e-9 * hl;
      if (side && !cap) {
        grit_v3_addscl(core, x->p, u, l[2]);
        grit_v3_copy(dir, u);
        feature f = {GRIT_FEATURE_LINE, core, dir, r, {0.0, 0.0, 0.0}};
        return f;
      }
      if (cap && !side) {
        grit_v3_scale(dir, u, l[2] < 0.0 ? -1.0 : 1.0);
        feature f = {GRIT_FEATURE_PLANE, w, dir, 0.0, {0.0, 0.0, 0.0}};
        return f;
      }
      if (cap && side) { /* the rim: the point of the cap's circle deepest along -n */
        grit_v3_addscl(core, x->p, u, l[2] < 0.0 ? -hl : hl);
        grit_v3_copy(dir, u);
        feature f = {GRIT_FEATURE_RIM, core, dir, 0.0, {r, 1.0, 0.0}};
        return f;
      }
      return grit_narrow_point_feature(w, 0.0);
    }
    case GRIT_GEOM_ELLIPSOID: {
      feature f = {GRIT_FEATURE_SUPPORT, x->p, NULL, 0.0, {h[0], h[1], h[2]}};
      return f;
    }
    default:
      return grit_narrow_point_feature(w, 0.0);
  }
}

/* The general path: GJK/EPA's candidate, with the features of its witness points inferred from the
 * shapes. Re-evaluated from those features (in the pair's canonical order, so swapping the shapes
 * changes nothing), the candidate must agree with GJK/EPA (phi and n to 1e-9) and keep pb - pa = phi n
 * to round-off; it is then snapped to that re-evaluation, which the derivatives reproduce exactly.
 * Otherwise the witness points are held as material points. */
static void general(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double phi, n[3], wa[3], wb[3], nn[3], ka[3], kb[3], ua[3], ub[3];
  grit_gjk_info info; /* (its inputs zero: the calls of a NULL info) */
  memset(&info, 0, sizeof info);
  const int hit = grit_gjk_epa(a, b, margin, &phi, n, wa, wb, c->far_axis ? &info : NULL);
  if (c->far_axis) { /* GJK's axis from b' to a', in the caller's order (b to a) */
    for (int k = 0; k < 3; ++k) c->far_axis[k] = c->flip ? -info.far_axis[k] : info.far_axis[k];
    c->far_axis[3] = info.far;
  }
  if (!hit) return;
  grit_v3_scale(nn, n, -1.0);
  feature fa = infer_feature(a, wa, n, ka, ua), fb = infer_feature(b, wb, nn, kb, ub);
  /* a sliding point (RIM, SUPPORT) is the shape's point deepest into a plane: against anything else, the
   * material point */
  if ((fa.kind == GRIT_FEATURE_RIM || fa.kind == GRIT_FEATURE_SUPPORT) && fb.kind != GRIT_FEATURE_PLANE) fa = grit_narrow_point_feature(wa, 0.0);
  if ((fb.kind == GRIT_FEATURE_RIM || fb.kind == GRIT_FEATURE_SUPPORT) && fa.kind != GRIT_FEATURE_PLANE) fb = grit_narrow_point_feature(wb, 0.0);
  grit_contact_point tmp;
  collector canon = {&tmp, 1, 0, 0, 0, a->p, a->R, b->p, b->R, NULL};
  grit_narrow_emit_features(&canon, phi, n, wa, wb, fa, fb);
  grit_contact_geom g;
  grit_contact_reevaluate(&tmp, a->p, a->R, b->p, b->R, &g);
  double dn[3], gap[3];
  grit_v3_sub(dn, g.n, n);
  grit_v3_sub(gap, g.pb, g.pa); /* the snapped witness points must still satisfy pb - pa = phi n */
  grit_v3_addscl(gap, gap, g.n, -g.phi);
  const double scale = fmax(1.0, fabs(phi));
  if (fabs(g.phi - phi) <= 1e-9 * scale && grit_v3_norm(dn) <= 1e-9 && grit_v3_norm(gap) <= 1e-14 * scale)
    grit_narrow_emit_features(c, g.phi, g.n, g.pa, g.pb, fa, fb);
  else
    grit_narrow_emit(c, phi, n, wa, wb); /* features that do not reproduce the candidate: material points */
}

/* The closed forms, indexed [lower type][higher type]; NULL: the general path. */
static pair_fn closed_form(grit_geom_type lo, grit_geom_type hi) {
  if (lo == GRIT_GEOM_PLANE) {
    switch (hi) {
    case GRIT_GEOM_SPHERE: return plane_sphere;
    case GRIT_GEOM_CAPSULE: return plane_capsule;
    case GRIT_GEOM_BOX: return plane_box;
    case GRIT_GEOM_CYLINDER: return plane_cylinder;
    case GRIT_GEOM_ELLIPSOID: return plane_ellipsoid;
    case GRIT_GEOM_CONVEX: return plane_convex;
    default: return NULL;
    }
  }
  if (lo == GRIT_GEOM_SPHERE && hi == GRIT_GEOM_SPHERE) return sphere_sphere;
  if (lo == GRIT_GEOM_SPHERE && hi == GRIT_GEOM_CAPSULE) return sphere_capsule;
  if (lo == GRIT_GEOM_SPHERE && hi == GRIT_GEOM_BOX) return sphere_box;
  if (lo == GRIT_GEOM_CAPSULE && hi == GRIT_GEOM_CAPSULE) return capsule_capsule;
  if (lo == GRIT_GEOM_BOX && hi == GRIT_GEOM_BOX) return grit_narrow_box_box; /* collision_box.c */
  return NULL;
}

/* Lexicographic order on (position, rotation, sizes, vertex array) for two shapes of one type. */
static int placed_less(const grit_placed_shape *a, const grit_placed_shape *b) {
  const double *x[4] = {a->p, a->R, a->shape->size}, *y[4] = {b->p, b->R, b->shape->size};
  const int len[3] = {3, 9, 3};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < len[k]; ++i)
      if (x[k][i] != y[k][i]) return x[k][i] < y[k][i];
  if (a->shape->nvert != b->shape->nvert) return a->shape->nvert < b->shape->nvert;
  return (uintptr_t)a->shape->vertices < (uintptr_t)b->shape->vertices;
}

static grit_status collide(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                           const double pb[3], const double Rb[9], double margin, grit_contact_point *out, int max_out,
                           int *n_out, int general_only, int *hint, double *far_axis) {
  if (!n_out) return GRIT_ERR_INVALID_ARGUMENT;
  *n_out = 0;
  if (!a || !b || !pa || !Ra || !pb || !Rb || max_out < 0 || (max_out > 0 && !out) || !isfinite(margin) ||
      margin < 0.0 || (int)a->type < 0 || a->type >= GRIT_GEOM_COUNT || (int)b->type < 0 ||
      b->type >= GRIT_GEOM_COUNT)
    return GRIT_ERR_INVALID_ARGUMENT;
  if (a->type == GRIT_GEOM_PLANE && b->type == GRIT_GEOM_PLANE) return GRIT_ERR_UNSUPPORTED;
  if (a->type == GRIT_GEOM_HFIELD || b->type == GRIT_GEOM_HFIELD) return GRIT_ERR_UNSUPPORTED; /* collision_hfield.h */
  if (general_only && (a->type == GRIT_GEOM_PLANE || b->type == GRIT_GEOM_PLANE)) return GRIT_ERR_UNSUPPORTED;
  const grit_placed_shape A = {a, pa, Ra, hint}, B = {b, pb, Rb, hint ? hint + 1 + GRIT_CLIMB_TRAIL : NULL};
  collector c = {out, max_out, 0, 0, 0, pa, Ra, pb, Rb, far_axis};
  if (far_axis) far_axis[3] = 0.0; /* a closed form, or GJK/EPA not far: none */
  c.flip = a->type > b->type || (a->type == b->type && placed_less(&B, &A));
  const grit_placed_shape *first = c.flip ? &B : &A, *second = c.flip ? &A : &B;
  pair_fn f = general_only ? NULL : closed_form(first->shape->type, second->shape->type);
  (f ? f : general)(first, second, margin, &c);
  *n_out = c.n;
  return c.overflow ? GRIT_ERR_CAPACITY : GRIT_OK;
}

grit_status grit_collide(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                         const double pb[3], const double Rb[9], double margin, grit_contact_point *out, int max_out,
                         int *n_out) {
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 0, NULL, NULL);
}

grit_status grit_collide_gjk(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                             const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                             int max_out, int *n_out) {
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 1, NULL, NULL);
}

grit_status grit_collide_hinted(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                                const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                                int max_out, int *n_out, int *hint) {
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 0, hint, NULL);
}

grit_status grit_collide_kept(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                              const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                              int max_out, int *n_out, int *hint, double far_axis[4]) {
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 0, hint, far_axis);
}
