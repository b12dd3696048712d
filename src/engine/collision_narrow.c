/* SPDX-License-Identifier: Apache-2.0 */
/* collision_narrow.c — narrow phase dispatch and the closed-form pairs.
 *
 * Each pair is put in a canonical order (lower type first; equal types by pose) so that swapping the
 * arguments runs the very same arithmetic: phi is identical and the output is flipped on the way out.
 * Pairs with a closed form: plane with every convex shape, sphere-sphere, sphere-capsule, sphere-box,
 * capsule-capsule. Every other pair takes the GJK/EPA path of collision_gjk.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collision_narrow.h"
#include "contact_geometry.h"
#include "grit/math.h"

/* Gathers candidates in the caller's order: a pair function works on (a', b') = (a, b) or (b, a). */
typedef struct collector {
  grit_contact_point *out;
  int max, n, overflow;
  int flip; /* 1 if the pair function's a' is the caller's b */
  const double *pa, *Ra, *pb, *Rb; /* the caller's poses */
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

static feature point_feature(const double p[3], double r) {
  feature f = {GRIT_FEATURE_POINT, p, NULL, r, {0.0, 0.0, 0.0}};
  return f;
}

/* Records one candidate given in the pair function's order: n from a' to b', wa on a', wb on b', and
 * the features of the two witness points (wa = core_a + ra n, wb = core_b - rb n). */
static void emit_features(collector *c, double phi, const double n[3], const double wa[3], const double wb[3],
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
static void emit(collector *c, double phi, const double n[3], const double wa[3], const double wb[3]) {
  emit_features(c, phi, n, wa, wb, point_feature(wa, 0.0), point_feature(wb, 0.0));
}

static void column(double u[3], const double R[9], int k) { grit_v3_set(u, R[k], R[3 + k], R[6 + k]); }

/* A unit vector perpendicular to the unit u (deterministic). */
static void perpendicular(double t[3], const double u[3]) {
  double e[3] = {0, 0, 0};
  e[fabs(u[0]) < 0.57 ? 0 : fabs(u[1]) < 0.57 ? 1 : 2] = 1.0;
  grit_v3_cross(t, u, e);
  grit_v3_normalize(t);
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
  emit_features(c, phi, n, wa, wb, fa, fb);
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
  feature fb = point_feature(wb, 0.0);
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
  emit_features(c, phi, n, wa, wb, point_feature(a->p, r), fb);
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
  emit_features(c, phi, z, wa, x, fa, fb);
}

static void plane_round_point(const grit_placed_shape *pl, const double x[3], const double k[3], double r,
                              double margin, collector *c) {
  plane_emit(pl, x, point_feature(k, r), margin, c);
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
    plane_emit(a, x[i], tilt >= 1e-3 ? f : point_feature(x[i], 0.0), margin, c);
  }
}

/* Vertices below the margin; beyond 4 of them, 4 chosen to spread the support: the deepest, then each
 * time the vertex farthest (along the plane) from those chosen, less its extra depth above the deepest,
 * so that a resting face's corners win over higher vertices. Emitted in vertex order. */
static void plane_convex(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  const grit_shape *s = b->shape;
  double z[3], phimin = INFINITY;
  int count = 0, first = -1;
  column(z, a->R, 2);
  for (int i = 0; i < s->nvert; ++i) {
    double x[3], phi;
    grit_tf_apply(x, b->p, b->R, s->vertices + 3 * i);
    phi = plane_height(a, x);
    if (phi < margin) count++;
    if (phi < phimin) phimin = phi, first = i;
  }
  enum { CAP = 4 };
  int chosen[CAP], nch = 0;
  if (count > CAP) {
    chosen[nch++] = first;
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
          double y[3], d[3];
          grit_tf_apply(y, b->p, b->R, s->vertices + 3 * chosen[j]);
          grit_v3_sub(d, x, y);
          grit_v3_addscl(d, d, z, -grit_v3_dot(d, z));
          score = fmin(score, grit_v3_norm(d));
        }
        score -= phi - phimin;
        if (score > best_score) best_score = score, best = i;
      }
      chosen[nch++] = best;
    }
  }
  for (int i = 0; i < s->nvert; ++i) {
    int take = count <= CAP;
    for (int j = 0; j < nch; ++j) take |= chosen[j] == i;
    if (!take) continue;
    double x[3];
    grit_tf_apply(x, b->p, b->R, s->vertices + 3 * i);
    plane_point(a, x, margin, c);
  }
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
      return point_feature(x->p, h[0]);
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
      return point_feature(core, h[0]);
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
      return point_feature(w, 0.0);
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
      return point_feature(w, 0.0);
    }
    case GRIT_GEOM_ELLIPSOID: {
      feature f = {GRIT_FEATURE_SUPPORT, x->p, NULL, 0.0, {h[0], h[1], h[2]}};
      return f;
    }
    default:
      return point_feature(w, 0.0);
  }
}

/* The general path: GJK/EPA's candidate, with the features of its witness points inferred from the
 * shapes. Re-evaluated from those features (in the pair's canonical order, so swapping the shapes
 * changes nothing), the candidate must agree with GJK/EPA (phi and n to 1e-9) and keep pb - pa = phi n
 * to round-off; it is then snapped to that re-evaluation, which the derivatives reproduce exactly.
 * Otherwise the witness points are held as material points. */
static void general(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double phi, n[3], wa[3], wb[3], nn[3], ka[3], kb[3], ua[3], ub[3];
  if (!grit_gjk_epa(a, b, margin, &phi, n, wa, wb, NULL)) return;
  grit_v3_scale(nn, n, -1.0);
  feature fa = infer_feature(a, wa, n, ka, ua), fb = infer_feature(b, wb, nn, kb, ub);
  /* a sliding point (RIM, SUPPORT) is the shape's point deepest into a plane: against anything else, the
   * material point */
  if ((fa.kind == GRIT_FEATURE_RIM || fa.kind == GRIT_FEATURE_SUPPORT) && fb.kind != GRIT_FEATURE_PLANE) fa = point_feature(wa, 0.0);
  if ((fb.kind == GRIT_FEATURE_RIM || fb.kind == GRIT_FEATURE_SUPPORT) && fa.kind != GRIT_FEATURE_PLANE) fb = point_feature(wb, 0.0);
  grit_contact_point tmp;
  collector canon = {&tmp, 1, 0, 0, 0, a->p, a->R, b->p, b->R};
  emit_features(&canon, phi, n, wa, wb, fa, fb);
  grit_contact_geom g;
  grit_contact_reevaluate(&tmp, a->p, a->R, b->p, b->R, &g);
  double dn[3], gap[3];
  grit_v3_sub(dn, g.n, n);
  grit_v3_sub(gap, g.pb, g.pa); /* the snapped witness points must still satisfy pb - pa = phi n */
  grit_v3_addscl(gap, gap, g.n, -g.phi);
  const double scale = fmax(1.0, fabs(phi));
  if (fabs(g.phi - phi) <= 1e-9 * scale && grit_v3_norm(dn) <= 1e-9 && grit_v3_norm(gap) <= 1e-14 * scale)
    emit_features(c, g.phi, g.n, g.pa, g.pb, fa, fb);
  else
    emit(c, phi, n, wa, wb); /* features that do not reproduce the candidate: material points */
}

/* The face of box x whose outward normal is most aligned with dir: its axis k, sign s, normal (world)
 * and centre (world). */
static void box_face(const grit_placed_shape *x, const double dir[3], int *k, double *s, double nrm[3], double ctr[3]) {
  double best = -2.0;
  for (int j = 0; j < 3; ++j) {
    double u[3];
    column(u, x->R, j);
    double d = grit_v3_dot(u, dir);
    if (fabs(d) > best) {
      best = fabs(d);
      *k = j;
      *s = d < 0.0 ? -1.0 : 1.0;
    }
  }
  column(nrm, x->R, *k);
  grit_v3_scale(nrm, nrm, *s);
  grit_v3_addscl(ctr, x->p, nrm, x->shape->size[*k]);
}

/* A vertex of a clipped face polygon: where it comes from, for its derivative features. cuts = 0: a
 * corner of the incident face; 1: an incident edge (direction edge) crossing a side plane (pc, pu);
 * 2: two side planes crossing the incident face (a corner of the reference face). orig_out: the
 * polygon edge leaving this vertex lies on an edge of the incident face (else on a side plane). */
typedef struct clip_vertex {
  double x[3], edge[3], pc[3], pu[3];
  int cuts, orig_out;
} clip_vertex;

/* Sutherland-Hodgman: keeps the part of polygon in[0..n-1] with (x - c) . u <= h. Returns the count. */
static int clip_polygon(const clip_vertex *in, int n, const double c[3], const double u[3], double h, clip_vertex *out) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const clip_vertex *p = &in[i], *q = &in[(i + 1) % n];
    double dp[3], dq[3];
    grit_v3_sub(dp, p->x, c);
    grit_v3_sub(dq, q->x, c);
    const double sp = grit_v3_dot(dp, u) - h, sq = grit_v3_dot(dq, u) - h;
    if (sp <= 0.0) out[m++] = *p;
    if ((sp < 0.0 && sq > 0.0) || (sp > 0.0 && sq < 0.0)) { /* the edge crosses the side plane */
      clip_vertex *v = &out[m++];
      double e[3];
      grit_v3_sub(e, q->x, p->x);
      grit_v3_addscl(v->x, p->x, e, sp / (sp - sq));
      v->cuts = p->orig_out ? 1 : 2;
      grit_v3_copy(v->edge, e);
      grit_v3_normalize(v->edge);
      grit_v3_addscl(v->pc, c, u, h); /* a point of the side plane */
      grit_v3_copy(v->pu, u);
      v->orig_out = sp > 0.0 ? p->orig_out : 0; /* entering: along p->q; leaving: along the side plane */
    }
  }
  return m;
}

/* Box-box: when EPA's normal is a face normal of one box (the reference face: a face, an edge or a
 * corner of the other rests on it), the other box's face towards it (the incident face) is clipped to
 * the reference face's rectangle and its points within the margin make the manifold, at most four of
 * them, spread out; edges crossing edges keep EPA's single point. Each point is a point of the incident
 * box (a corner, or where one of its edges crosses the reference face's side) over the reference face
 * (a plane feature). */
/* The reference face (whose normal EPA found) and the incident box. */
typedef struct box_reference {
  const grit_placed_shape *ref, *inc;
  int ref_is_a, kr, ki; /* whether a is the reference box; the reference and incident faces' axes */
  double si;            /* the incident face's side (+1, -1) along its axis */
  double nr[3], cr[3];  /* the reference face's outward normal and centre, world */
} box_reference;

/* Box-box phase 1: the reference face, when EPA's normal n is a face normal of one box (1.4e-3 rad; EPA
 * is exact to ~1e-11 for boxes); 0 otherwise (edges crossing edges). */
static int box_reference_face(const grit_placed_shape *a, const grit_placed_shape *b, const double n[3],
                              box_reference *r) {
  int ka, kb;
  double sa, sb, na[3], nb[3], ca[3], cb[3], nn[3];
  grit_v3_scale(nn, n, -1.0);
  box_face(a, n, &ka, &sa, na, ca);  /* a's face towards b */
  box_face(b, nn, &kb, &sb, nb, cb); /* b's face towards a */
  const double aligned = 1.0 - 1e-6, da = grit_v3_dot(na, n), db = -grit_v3_dot(nb, n);
  if (da < aligned && db < aligned) return 0;
  r->ref_is_a = da >= db;
  r->ref = r->ref_is_a ? a : b, r->inc = r->ref_is_a ? b : a;
  r->kr = r->ref_is_a ? ka : kb, r->ki = r->ref_is_a ? kb : ka;
  r->si = r->ref_is_a ? sb : sa;
  grit_v3_copy(r->nr, r->ref_is_a ? na : nb);
  grit_v3_copy(r->cr, r->ref_is_a ? ca : cb);
  return 1;
}

/* Box-box phase 2: the incident face as a polygon (corners in cyclic order) clipped to the reference
 * face's rectangle; the count, the polygon in poly[*cur]. */
static int box_clip_incident(const box_reference *r, clip_vertex poly[2][8], int *cur) {
  const int ki = r->ki, i1 = (ki + 1) % 3, i2 = (ki + 2) % 3;
  const double *hi = r->inc->shape->size, *hr = r->ref->shape->size;
  static const int corner[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int v = 0; v < 4; ++v) {
    double l[3];
    l[ki] = r->si * hi[ki];
    l[i1] = corner[v][0] * hi[i1];
    l[i2] = corner[v][1] * hi[i2];
    grit_tf_apply(poly[0][v].x, r->inc->p, r->inc->R, l);
    poly[0][v].cuts = 0;
    poly[0][v].orig_out = 1;
  }
  int np = 4;
  *cur = 0;
  for (int j = 0; j < 3 && np > 0; ++j) { /* the reference face's four sides */
    if (j == r->kr) continue;
    double u[3], fc[3];
    column(u, r->ref->R, j);
    grit_v3_copy(fc, r->ref->p);
    for (int sgn = -1; sgn <= 1 && np > 0; sgn += 2) {
      double us[3];
      grit_v3_scale(us, u, (double)sgn);
      np = clip_polygon(poly[*cur], np, fc, us, hr[j] * (1.0 + 1e-12), poly[1 - *cur]);
      *cur = 1 - *cur;
    }
  }
  return np;
}

/* Box-box phase 3: the polygon's points within the margin (depth along the reference normal into
 * depth[]), at most 4 of them into chosen[] (the deepest, then greedily the point farthest from those
 * chosen; in polygon order: deterministic and symmetric). Their count. */
static int box_choose_points(const box_reference *r, const clip_vertex *poly, int np, double margin, double depth[8],
                             int chosen[4]) {
  int keep[8], nk = 0, nc = 0;
  for (int i = 0; i < np; ++i) {
    double d[3];
    grit_v3_sub(d, poly[i].x, r->cr);
    depth[i] = grit_v3_dot(d, r->nr);
    if (depth[i] < margin) keep[nk++] = i;
  }
  if (nk <= 4) {
    for (int i = 0; i < nk; ++i) chosen[nc++] = keep[i];
    return nc;
  }
  int best = keep[0];
  for (int i = 1; i < nk; ++i)
    if (depth[keep[i]] < depth[best]) best = keep[i];
  chosen[nc++] = best;
  while (nc < 4) {
    int far = -1;
    double fd = -1.0;
    for (int i = 0; i < nk; ++i) {
      double dmin = INFINITY;
      for (int k = 0; k < nc; ++k) {
        double d[3];
        grit_v3_sub(d, poly[keep[i]].x, poly[chosen[k]].x);
        dmin = fmin(dmin, grit_v3_norm(d));
      }
      if (dmin > fd) fd = dmin, far = keep[i];
    }
    chosen[nc++] = far;
  }
  for (int i = 1; i < nc; ++i)
    for (int k = i; k > 0 && chosen[k] < chosen[k - 1]; --k) {
      int t = chosen[k];
      chosen[k] = chosen[k - 1];
      chosen[k - 1] = t;
    }
  return nc;
}

/* Box-box phase 4: one manifold point v at depth_i; ni the incident face's outward normal. */
static void box_emit_point(const box_reference *r, const clip_vertex *v, double depth_i, const double ni[3],
                           collector *c) {
  double foot[3], nrm[3];
  grit_v3_addscl(foot, v->x, r->nr, -depth_i);
  if (v->cuts == 2) {
    /* a corner of the reference face over the incident face: the corner (a point of the reference
     * box) against the incident face's plane, measured along the incident face's normal */
    double d[3], proj[3];
    grit_v3_sub(d, foot, v->x);
    const double dist = grit_v3_dot(d, ni);
    grit_v3_addscl(proj, foot, ni, -dist);
    feature fpt = point_feature(foot, 0.0), fpl = {GRIT_FEATURE_PLANE, proj, ni, 0.0, {0.0, 0.0, 0.0}};
    if (r->ref_is_a) {
      grit_v3_scale(nrm, ni, -1.0); /* from a (reference) towards b (incident) */
      emit_features(c, dist, nrm, foot, proj, fpt, fpl);
    } else {
      emit_features(c, dist, ni, proj, foot, fpl, fpt);
    }
    return;
  }
  feature fref = {GRIT_FEATURE_PLANE, foot, r->nr, 0.0, {0.0, 0.0, 0.0}};
  feature finc = point_feature(v->x, 0.0);
  if (v->cuts == 1) { /* an incident edge crossing a side of the reference face */
    finc.kind = GRIT_FEATURE_LINE;
    finc.u = v->edge;
  }
  if (r->ref_is_a) {
    emit_features(c, depth_i, r->nr, foot, v->x, fref, finc);
  } else {
    grit_v3_scale(nrm, r->nr, -1.0); /* from a (incident) towards b (reference) */
    emit_features(c, depth_i, nrm, v->x, foot, finc, fref);
  }
  if (v->cuts == 1) { /* the side plane cuts the edge; it is held by the reference box */
    grit_contact_point *o = &c->out[c->n - 1];
    const double *rp = r->ref_is_a ? c->pa : c->pb, *rR = r->ref_is_a ? c->Ra : c->Rb;
    if (c->flip) rp = r->ref_is_a ? c->pb : c->pa, rR = r->ref_is_a ? c->Rb : c->Ra;
    o->clip = 1;
    grit_tf_apply_inv(o->clip_p, rp, rR, v->pc);
    grit_m3_tmulv(o->clip_n, rR, v->pu);
  }
}

/* Box-box: when EPA's normal is a face normal of one box (the reference face: a face, an edge or a
 * corner of the other rests on it), the other box's face towards it (the incident face) is clipped to
 * the reference face's rectangle and its points within the margin make the manifold, at most four of
 * them, spread out; edges crossing edges keep EPA's single point. Each point is a point of the incident
 * box (a corner, or where one of its edges crosses the reference face's side) over the reference face
 * (a plane feature). */
static void box_box(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double phi, n[3], wa[3], wb[3];
  if (!grit_gjk_epa(a, b, margin, &phi, n, wa, wb, NULL)) return;
  box_reference r;
  clip_vertex poly[2][8];
  double depth[8];
  int chosen[4], cur = 0, nc = 0;
  if (box_reference_face(a, b, n, &r)) {
    const int np = box_clip_incident(&r, poly, &cur);
    nc = box_choose_points(&r, poly[cur], np, margin, depth, chosen);
  }
  if (nc == 0) { /* no face contact, or none of its points within the margin: EPA's single point */
    emit(c, phi, n, wa, wb);
    return;
  }
  double ni[3]; /* the incident face's outward normal */
  column(ni, r.inc->R, r.ki);
  grit_v3_scale(ni, ni, r.si);
  for (int i = 0; i < nc; ++i) box_emit_point(&r, &poly[cur][chosen[i]], depth[chosen[i]], ni, c);
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
  if (lo == GRIT_GEOM_BOX && hi == GRIT_GEOM_BOX) return box_box;
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
                           int *n_out, int general_only) {
  if (!n_out) return GRIT_ERR_INVALID_ARGUMENT;
  *n_out = 0;
  if (!a || !b || !pa || !Ra || !pb || !Rb || max_out < 0 || (max_out > 0 && !out) || !isfinite(margin) ||
      margin < 0.0 || (int)a->type < 0 || a->type >= GRIT_GEOM_COUNT || (int)b->type < 0 ||
      b->type >= GRIT_GEOM_COUNT)
    return GRIT_ERR_INVALID_ARGUMENT;
  if (a->type == GRIT_GEOM_PLANE && b->type == GRIT_GEOM_PLANE) return GRIT_ERR_UNSUPPORTED;
  if (a->type == GRIT_GEOM_HFIELD || b->type == GRIT_GEOM_HFIELD) return GRIT_ERR_UNSUPPORTED; /* collision_hfield.h */
  if (general_only && (a->type == GRIT_GEOM_PLANE || b->type == GRIT_GEOM_PLANE)) return GRIT_ERR_UNSUPPORTED;
  const grit_placed_shape A = {a, pa, Ra}, B = {b, pb, Rb};
  collector c = {out, max_out, 0, 0, 0, pa, Ra, pb, Rb};
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
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 0);
}

grit_status grit_collide_gjk(const grit_shape *a, const double pa[3], const double Ra[9], const grit_shape *b,
                             const double pb[3], const double Rb[9], double margin, grit_contact_point *out,
                             int max_out, int *n_out) {
  return collide(a, pa, Ra, b, pb, Rb, margin, out, max_out, n_out, 1);
}
