/* SPDX-License-Identifier: Apache-2.0 */
/* collision_box.c — the closed form of two boxes: the separating-axis test (15 axes) gives the normal of
 * an overlapping pair, the general path (GJK) that of a pair apart within the margin; the face most
 * aligned with the normal is the reference, the other box's incident face is clipped against its side
 * planes, and up to four points are kept (docs/collision.md). */
#include <math.h>
#include <string.h>

#include "collision_box.h"
#include "collision_narrow.h"
#include "grit/math.h"

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

/* Sutherland-Hodgman: keeps the part of polygon in[0..n-1] with (x - c) . u <= h. Returns the count, or
 * -1 when every vertex is inside (the polygon unchanged, out not written: no copy). */
static int clip_polygon(const clip_vertex *in, int n, const double c[3], const double u[3], double h, clip_vertex *out) {
  double side[8];
  int outside = 0;
  for (int i = 0; i < n; ++i) {
    double dp[3];
    grit_v3_sub(dp, in[i].x, c);
    side[i] = grit_v3_dot(dp, u) - h;
    outside |= side[i] > 0.0;
  }
  if (!outside) return -1;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const clip_vertex *p = &in[i], *q = &in[(i + 1) % n];
    const double sp = side[i], sq = side[(i + 1) % n];
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
      const int m = clip_polygon(poly[*cur], np, fc, us, hr[j] * (1.0 + 1e-12), poly[1 - *cur]);
      if (m >= 0) np = m, *cur = 1 - *cur;
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
    feature fpt = grit_narrow_point_feature(foot, 0.0), fpl = {GRIT_FEATURE_PLANE, proj, ni, 0.0, {0.0, 0.0, 0.0}};
    if (r->ref_is_a) {
      grit_v3_scale(nrm, ni, -1.0); /* from a (reference) towards b (incident) */
      grit_narrow_emit_features(c, dist, nrm, foot, proj, fpt, fpl);
    } else {
      grit_narrow_emit_features(c, dist, ni, proj, foot, fpl, fpt);
    }
    return;
  }
  feature fref = {GRIT_FEATURE_PLANE, foot, r->nr, 0.0, {0.0, 0.0, 0.0}};
  feature finc = grit_narrow_point_feature(v->x, 0.0);
  if (v->cuts == 1) { /* an incident edge crossing a side of the reference face */
    finc.kind = GRIT_FEATURE_LINE;
    finc.u = v->edge;
  }
  if (r->ref_is_a) {
    grit_narrow_emit_features(c, depth_i, r->nr, foot, v->x, fref, finc);
  } else {
    grit_v3_scale(nrm, r->nr, -1.0); /* from a (incident) towards b (reference) */
    grit_narrow_emit_features(c, depth_i, nrm, v->x, foot, finc, fref);
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

/* Boxes apart along a face axis by s: the distance is s when a point of the clipped incident face is
 * within this (times the boxes' size) of s; otherwise GJK finds it. */
#define BOX_APART_TOL 1e-12

/* Box-box phases 1-4 from the normal n (a to b): the clipped face's points when n is a face normal of
 * one box and some are within the margin; their count (0: none written). apart (NULL for the old path
 * and overlapping boxes): the separation along a face axis, which is the distance only if a point of the
 * clipped face lies that near (else -1, nothing written: the distance is along another direction). */
static int box_face_contact(const grit_placed_shape *a, const grit_placed_shape *b, const double n[3], double margin,
                            const double *apart, collector *c) {
  box_reference r;
  clip_vertex poly[2][8];
  double depth[8];
  int chosen[4], cur = 0, nc = 0;
  if (box_reference_face(a, b, n, &r)) {
    const int np = box_clip_incident(&r, poly, &cur);
    nc = box_choose_points(&r, poly[cur], np, margin, depth, chosen);
    if (apart) {
      const double *ha = a->shape->size, *hb = b->shape->size;
      double least = INFINITY;
      for (int i = 0; i < np; ++i) least = fmin(least, depth[i]);
      if (!(least <= *apart + BOX_APART_TOL * (ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2]))) return -1;
    }
  }
  if (nc == 0) return apart ? -1 : 0;
  double ni[3]; /* the incident face's outward normal */
  column(ni, r.inc->R, r.ki);
  grit_v3_scale(ni, ni, r.si);
  for (int i = 0; i < nc; ++i) box_emit_point(&r, &poly[cur][chosen[i]], depth[chosen[i]], ni, c);
  return nc;
}

/* Box-box, the old path (the switch back, collision_box.h): EPA's normal for every pair; when it is a
 * face normal of one box (the reference face: a face, an edge or a corner of the other rests on it),
 * the other box's face towards it (the incident face) is clipped to the reference face's rectangle and
 * its points within the margin make the manifold, at most four of them, spread out; edges crossing
 * edges keep EPA's single point. Each point is a point of the incident box (a corner, or where one of
 * its edges crosses the reference face's side) over the reference face (a plane feature). */
void grit_narrow_box_box_epa(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  double phi, n[3], wa[3], wb[3];
  if (!grit_gjk_epa(a, b, margin, &phi, n, wa, wb, NULL)) return;
  if (box_face_contact(a, b, n, margin, NULL, c) == 0) grit_narrow_emit(c, phi, n, wa, wb); /* EPA's single point */
}

/* An edge axis a_i x b_j is skipped only when the edges are parallel to round-off (|a_i x b_j| below
 * this): its direction is then noise. A near-parallel pair's axis is kept: the overlap along the
 * computed (normalized) axis is accurate to round-off whatever its length, so it can only win where it
 * is the least, and EPA finds that thin face of the Minkowski difference too (its normal, between the
 * two boxes' nearly parallel faces, then picks the reference face). */
#define BOX_SAT_PARALLEL 1e-12
/* Faces are preferred to edges: an edge axis beats the best face axis only by more than this times the
 * boxes' size (the sum of the six half-sizes). Ties (an edge lying on a face crosses another edge along
 * that face's normal; nearly parallel edges, whose axis beats the faces by O(angle x size)) go to the
 * face, where EPA's choice between them is round-off. */
#define BOX_SAT_FACE_PREFERENCE 1e-12

/* The separating-axis test. Axes in a's frame: a's three face normals e_i, b's (the columns of C,
 * C_ij = a_i . b_j), the nine crosses e_i x C_j. Writes the least overlap (negative: the greatest
 * separation) and its unit axis in the world, oriented from a to b; *edge = -1 for a face axis, else
 * 3 i + j. A face axis separating by the margin or more ends the test (the pair has no candidate). */
typedef struct box_sat {
  double overlap, n[3];
  int edge;
} box_sat;

static inline void box_sat_axis(box_sat *best, const double L[3], double ra, double rb, double d,
                                const grit_placed_shape *a, int edge, double tol) {
  const double ov = ra + rb - fabs(d);
  if (!(ov < best->overlap - tol)) return;
  best->overlap = ov;
  best->edge = edge;
  double l[3] = {d < 0.0 ? -L[0] : L[0], d < 0.0 ? -L[1] : L[1], d < 0.0 ? -L[2] : L[2]};
  grit_m3_mulv(best->n, a->R, l);
}

static void box_sat_test(const grit_placed_shape *a, const grit_placed_shape *b, double margin, box_sat *best) {
  const double *ha = a->shape->size, *hb = b->shape->size;
  double C[3][3], t[3], dp[3], au[3][3], bu[3][3];
  grit_v3_sub(dp, b->p, a->p);
  for (int k = 0; k < 3; ++k) column(au[k], a->R, k), column(bu[k], b->R, k);
  for (int i = 0; i < 3; ++i) {
    t[i] = grit_v3_dot(au[i], dp);
    for (int j = 0; j < 3; ++j) C[i][j] = grit_v3_dot(au[i], bu[j]);
  }
  best->overlap = INFINITY;
  best->edge = -1;
  for (int i = 0; i < 3; ++i) { /* a's faces */
    double L[3] = {0.0, 0.0, 0.0};
    L[i] = 1.0;
    const double rb = hb[0] * fabs(C[i][0]) + hb[1] * fabs(C[i][1]) + hb[2] * fabs(C[i][2]);
    box_sat_axis(best, L, ha[i], rb, t[i], a, -1, 0.0);
  }
  for (int j = 0; j < 3; ++j) { /* b's faces */
    const double L[3] = {C[0][j], C[1][j], C[2][j]};
    box_sat_axis(best, L, ha[0] * fabs(L[0]) + ha[1] * fabs(L[1]) + ha[2] * fabs(L[2]), hb[j], grit_v3_dot(L, t), a,
                 -1, 0.0);
  }
  if (!(best->overlap > -margin)) return; /* a face separates them by the margin: no candidate either way */
  const double tol = BOX_SAT_FACE_PREFERENCE * (ha[0] + ha[1] + ha[2] + hb[0] + hb[1] + hb[2]);
  for (int i = 0; i < 3; ++i) {
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; ++j) { /* edges: e_i x C_j, whose component i is 0 (left out of the sums) */
      double L[3];
      L[i] = 0.0, L[i1] = -C[i2][j], L[i2] = C[i1][j];
      const double len = sqrt(L[i1] * L[i1] + L[i2] * L[i2]);
      if (!(len > BOX_SAT_PARALLEL)) continue;
      L[i1] /= len, L[i2] /= len;
      double rb = 0.0;
      for (int m = 0; m < 3; ++m) rb += hb[m] * fabs(L[i1] * C[i1][m] + L[i2] * C[i2][m]);
      box_sat_axis(best, L, ha[i1] * fabs(L[i1]) + ha[i2] * fabs(L[i2]), rb, L[i1] * t[i1] + L[i2] * t[i2], a,
                   3 * i + j, best->edge < 0 ? tol : 0.0);
    }
  }
}

/* The edge of box x along its axis k farthest along dir: its centre and unit direction. */
static void box_edge(const grit_placed_shape *x, int k, const double dir[3], double ctr[3], double u[3]) {
  grit_v3_copy(ctr, x->p);
  for (int m = 0; m < 3; ++m) {
    if (m == k) continue;
    double v[3];
    column(v, x->R, m);
    grit_v3_addscl(ctr, ctr, v, grit_v3_dot(v, dir) < 0.0 ? -x->shape->size[m] : x->shape->size[m]);
  }
  column(u, x->R, k);
}

/* Boxes whose least overlap (or greatest separation) is along edge axis a_i x b_j: the two edges'
 * nearest points (the witness points EPA finds: the deepest points of each box in the other, along n;
 * apart, the closest points). 0 if they fall outside the edges by more than slack (times the edge):
 * round-off at a degenerate crossing of overlapping boxes (slack 1e-9), or boxes apart whose distance is
 * along another direction (slack 0); the caller then takes the general path. */
static int box_edge_points(const grit_placed_shape *a, const grit_placed_shape *b, int edge, const double n[3],
                           double slack, double wa[3], double wb[3]) {
  const int i = edge / 3, j = edge % 3;
  double nn[3], p1[3], u1[3], p2[3], u2[3], d[3];
  grit_v3_scale(nn, n, -1.0);
  box_edge(a, i, n, p1, u1);
  box_edge(b, j, nn, p2, u2);
  grit_v3_sub(d, p2, p1);
  const double bb = grit_v3_dot(u1, u2), den = 1.0 - bb * bb, d1 = grit_v3_dot(d, u1), d2 = grit_v3_dot(d, u2);
  const double s = (d1 - bb * d2) / den, t = (bb * d1 - d2) / den;
  const double ta = a->shape->size[i], tb = b->shape->size[j];
  if (!(fabs(s) <= ta * (1.0 + slack)) || !(fabs(t) <= tb * (1.0 + slack))) return 0;
  grit_v3_addscl(wa, p1, u1, s);
  grit_v3_addscl(wb, p2, u2, t);
  return 1;
}

/* Boxes apart by less than the margin, along the separating axis of greatest separation: the distance
 * when that axis realizes it (a point of one box's face over the other's face; two edges' nearest points
 * inside both edges). 1 if the candidates are written, 0 if GJK must find the distance (corner to edge,
 * corner to corner, parallel edges side by side). */
static int box_apart(const grit_placed_shape *a, const grit_placed_shape *b, const box_sat *sat, double margin,
                     collector *c) {
  const double gap = -sat->overlap;
  if (sat->edge < 0) return box_face_contact(a, b, sat->n, margin, &gap, c) > 0;
  double wa[3], wb[3];
  if (!box_edge_points(a, b, sat->edge, sat->n, 0.0, wa, wb)) return 0;
  if (box_face_contact(a, b, sat->n, margin, NULL, c) == 0) grit_narrow_emit(c, gap, sat->n, wa, wb);
  return 1;
}

/* Box-box: the separating-axis test first. An axis separating the boxes by the margin or more: no
 * candidate. Overlapping boxes: the least overlap's axis is the normal EPA finds (for two boxes the
 * Minkowski difference's faces are normal to the 15 axes), then the face clipping as before, or the two
 * edges' nearest points. Boxes apart within the margin: the greatest separation's axis when it realizes
 * the distance (box_apart). Otherwise (corner to edge apart, a degenerate crossing, a face with no point
 * in the margin) the old path. */
void grit_narrow_box_box(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c) {
  box_sat sat;
  box_sat_test(a, b, margin, &sat);
  if (!(sat.overlap > -margin)) return; /* phi >= -overlap >= margin */
  if (!(sat.overlap > 0.0)) {
    if (!box_apart(a, b, &sat, margin, c)) grit_narrow_box_box_epa(a, b, margin, c);
    return;
  }
  if (box_face_contact(a, b, sat.n, margin, NULL, c) > 0) return;
  double wa[3], wb[3];
  if (sat.edge >= 0 && box_edge_points(a, b, sat.edge, sat.n, 1e-9, wa, wb))
    grit_narrow_emit(c, -sat.overlap, sat.n, wa, wb);
  else
    grit_narrow_box_box_epa(a, b, margin, c);
}
