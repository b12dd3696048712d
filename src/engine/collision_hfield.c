/* SPDX-License-Identifier: Apache-2.0 */
/* collision_hfield.c — a height field against a convex shape, prism by prism. See collision_hfield.h. */
#include "collision_hfield.h"

#include <math.h>
#include <string.h>

#include "collision_narrow.h"
#include "contact_geometry.h"
#include "grit/math.h"

/* Candidates gathered over the prisms before the deepest are kept. */
#define HF_GATHER 64

typedef struct hf_grid {
  const grit_shape *h;
  int nrow, ncol;
  double dx, dy; /* cell sizes, m */
  const double *pr, *Rr; /* the other shape's pose in the field's frame */
  int all_prisms;        /* 1: every prism through GJK/EPA (the old path; no hf_prism_idle) */
  int idle;              /* prisms hf_prism_idle spared GJK/EPA */
  double far;            /* far above GJK's touching distance for a prism and the other shape (1e-10 of their
                            radii; the prism's vertices are in the field's frame) */
} hf_grid;

static const double *hf_point(const hf_grid *g, int r, int c) { return g->h->vertices + 3 * (r * g->ncol + c); }

/* The top vertices of triangle t of cell (r, c): t = 0 below the diagonal (00, 01, 11), t = 1 above it
 * (00, 11, 10); both counter-clockwise seen from +z. */
static void hf_triangle(const hf_grid *g, int r, int c, int t, const double *v[3]) {
  v[0] = hf_point(g, r, c);
  v[1] = t ? hf_point(g, r + 1, c + 1) : hf_point(g, r, c + 1);
  v[2] = t ? hf_point(g, r + 1, c) : hf_point(g, r + 1, c + 1);
}

/* Whether the local point x lies over triangle t of cell (r, c): each point of the grid's extent over
 * exactly one triangle (half-open cells, the diagonal to triangle 0), so a point is never kept twice. */
static int hf_owns(const hf_grid *g, const double x[3], int r, int c, int t) {
  const double u = (x[0] + g->h->size[0]) / g->dx, w = (x[1] + g->h->size[1]) / g->dy;
  if (!(u >= 0.0 && u <= g->ncol - 1 && w >= 0.0 && w <= g->nrow - 1)) return 0;
  int cc = (int)floor(u), rr = (int)floor(w);
  if (cc > g->ncol - 2) cc = g->ncol - 2;
  if (rr > g->nrow - 2) rr = g->nrow - 2;
  const int tt = (u - cc) >= (w - rr) ? 0 : 1;
  return cc == c && rr == r && tt == t;
}

/* A point or direction of the triangle's plane frame (origin v0, rotation T local to the field) taken
 * into the field's frame. */
static void hf_point_to_field(double x[3], const double v0[3], const double T[9]) {
  double y[3];
  grit_tf_apply(y, v0, T, x);
  grit_v3_copy(x, y);
}
static void hf_dir_to_field(double x[3], const double T[9]) {
  double y[3];
  grit_m3_mulv(y, T, x);
  grit_v3_copy(x, y);
}

/* The triangle's plane frame in the field: origin at v[0], z the unit upward normal. */
static void hf_plane_frame(const double *v[3], double T[9]) {
  double e1[3], e2[3], z[3], x[3], y[3];
  grit_v3_sub(e1, v[1], v[0]);
  grit_v3_sub(e2, v[2], v[0]);
  grit_v3_cross(z, e1, e2);
  grit_v3_normalize(z);
  grit_v3_copy(x, e1);
  grit_v3_addscl(x, x, z, -grit_v3_dot(x, z));
  grit_v3_normalize(x);
  grit_v3_cross(y, z, x);
  for (int k = 0; k < 3; ++k) T[3 * k] = x[k], T[3 * k + 1] = y[k], T[3 * k + 2] = z[k];
}

/* The closed-form contacts of the triangle's plane with o whose foot lies on the triangle, with their
 * plane-frame features taken into the field's frame. Returns how many were written to out, or -1 when
 * the plane has no contact with o at all. */
static int hf_plane_points(const hf_grid *g, int r, int c, int t, const double *v[3], const double T[9],
                           const double ph[3], const double Rh[9], const grit_shape *o, const double po[3],
                           const double Ro[9], double margin, grit_contact_point *out) {
  double pw[3], Rw[9];
  grit_tf_apply(pw, ph, Rh, v[0]);
  grit_m3_mul(Rw, Rh, T);
  const grit_shape plane = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  grit_contact_point pts[GRIT_COLLIDE_MAX_POINTS];
  int n = 0, kept = 0;
  if (grit_collide(&plane, pw, Rw, o, po, Ro, margin, pts, GRIT_COLLIDE_MAX_POINTS, &n) != GRIT_OK || n == 0)
    return -1;
  for (int i = 0; i < n; ++i) {
    grit_contact_point p = pts[i];
    hf_point_to_field(p.pa_local, v[0], T);
    if (!hf_owns(g, p.pa_local, r, c, t)) continue;
    hf_dir_to_field(p.n_local, T);
    hf_point_to_field(p.fa_p, v[0], T);
    hf_dir_to_field(p.fa_u, T);
    if (p.clip) { /* a clipping plane held by the field (b's LINE cut by it) */
      hf_point_to_field(p.clip_p, v[0], T);
      hf_dir_to_field(p.clip_n, T);
    }
    out[kept++] = p;
  }
  return kept;
}

/* The GJK/EPA candidate p of a prism (the field as a) holds its witness on the field as a material point.
 * Where that point lies on one edge of the surface (a ridge, a valley), the edge's line is its feature:
 * the contact point then slides along the edge as o moves, as the true closest point does (exact first
 * derivatives, contact_geometry_generic.h). Kept only if the re-evaluation reproduces the candidate (phi
 * and n to 1e-9), as the general path does; the candidate is then snapped to it. */
static void hf_edge_feature(grit_contact_point *p, const double *v[3], double tol, const double ph[3],
                            const double Rh[9], const double po[3], const double Ro[9]) {
  int on = 0, edge = -1;
  for (int e = 0; e < 3; ++e) {
    const double *a = v[e], *b = v[(e + 1) % 3];
    double ab[3], ap[3], x[3];
    grit_v3_sub(ab, b, a);
    grit_v3_sub(ap, p->pa_local, a);
    double t = grit_v3_dot(ap, ab) / grit_v3_dot(ab, ab);
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    grit_v3_addscl(x, a, ab, t);
    grit_v3_sub(x, x, p->pa_local);
    if (grit_v3_norm(x) <= tol) ++on, edge = e;
  }
  if (on != 1) return; /* inside a face, or at a vertex (two edges): the material point */
  grit_contact_point q = *p;
  q.fa = GRIT_FEATURE_LINE;
  grit_v3_copy(q.fa_p, p->pa_local);
  grit_v3_sub(q.fa_u, v[(edge + 1) % 3], v[edge]);
  grit_v3_normalize(q.fa_u);
  grit_contact_geom g;
  grit_contact_reevaluate(&q, ph, Rh, po, Ro, &g);
  double dn[3];
  grit_v3_sub(dn, g.n, p->n);
  if (!(fabs(g.phi - p->phi) <= 1e-9 * fmax(1.0, fabs(p->phi)) && grit_v3_norm(dn) <= 1e-9)) return;
  q.phi = g.phi;
  grit_v3_copy(q.n, g.n);
  grit_v3_copy(q.pa, g.pa);
  grit_v3_copy(q.pb, g.pb);
  grit_tf_apply_inv(q.pa_local, ph, Rh, q.pa);
  grit_tf_apply_inv(q.pb_local, po, Ro, q.pb);
  grit_m3_tmulv(q.n_local, Rh, q.n);
  *p = q;
}

/* The triangle's edges in its plane: edge e from v[e] to v[e+1], its length and unit inward normal (the
 * triangle is counter-clockwise about its unit normal nz, to which the edges are perpendicular). */
typedef struct hf_edges {
  double len[3], k[3][3];
} hf_edges;

static void hf_edges_of(const double *v[3], const double nz[3], hf_edges *E) {
  for (int e = 0; e < 3; ++e) {
    double t[3];
    grit_v3_sub(t, v[(e + 1) % 3], v[e]);
    E->len[e] = grit_v3_norm(t);
    grit_v3_cross(E->k[e], nz, t);
    grit_v3_scale(E->k[e], E->k[e], 1.0 / E->len[e]);
  }
}

/* The least distance, in the plane, from x (a point of the triangle's plane) to the triangle's edges'
 * lines: positive inside. */
static double hf_clearance(const double *v[3], const hf_edges *E, const double x[3]) {
  double r = INFINITY;
  for (int e = 0; e < 3; ++e) {
    double d[3];
    grit_v3_sub(d, x, v[e]);
    const double re = grit_v3_dot(E->k[e], d);
    r = re < r ? re : r;
  }
  return r;
}

/* The least t with x + t u in box o (half sizes hs, at pr, Rr), or INFINITY if the line misses it. */
static double hf_box_entry(const double hs[3], const double pr[3], const double Rr[9], const double x[3],
                           const double u[3]) {
  double d[3], xl[3], ul[3], lo = -INFINITY, hi = INFINITY;
  grit_v3_sub(d, x, pr);
  grit_m3_tmulv(xl, Rr, d);
  grit_m3_tmulv(ul, Rr, u);
  for (int k = 0; k < 3; ++k) {
    if (ul[k] == 0.0) {
      if (fabs(xl[k]) > hs[k]) return INFINITY;
      continue;
    }
    const double t1 = (-hs[k] - xl[k]) / ul[k], t2 = (hs[k] - xl[k]) / ul[k];
    const double a = t1 < t2 ? t1 : t2, b = t1 < t2 ? t2 : t1;
    lo = a > lo ? a : lo;
    hi = b < hi ? b : hi;
  }
  return lo <= hi ? lo : INFINITY;
}

/* Whether the prism's GJK/EPA candidate is certain to be absent or dropped by hf_prism (its normal the
 * face's), so that GJK/EPA need not run. Let n be the face's upward unit normal and h the height of o's
 * lowest point along n above the face's plane. The prism lies below that plane, so h >= margin leaves no
 * candidate (GJK certifies phi >= margin when h is also far above its touching distance). Otherwise let
 * y be a point of o at height hy = h + delta above the point x of the triangle, x at least r from the
 * triangle's edges in the plane, and the ball of radius rho under x (rho = min(r nz/2, height of x above
 * the base / 2)) inside the prism. For any unit u at angle th from n, the prism's reach along u beyond
 * o's is at least u.(x - y) + max(r sin th, rho (1 - cos th)) (the disk of radius r about x on the face,
 * the ball): with dy = -hy it exceeds dy cos th + r sin th (th <= 90 deg) and dy + (rho - dy) (1 - cos
 * th) (all th), while along n it is -h = dy + delta. With r > 4 max(dy, 0), rho > 2 max(dy, 0) and delta
 * tiny (o's lowest set reaches over x: a flat face resting on the field) the least of these is along
 * u = n but for angles below delta / (r - dy) (< 1e-9 rad): the distance's normal (separated) and the
 * least translation's (EPA, overlapping) are the face's, which hf_prism drops. The points x tried: the
 * foot of o's support point along -n, and for a box the triangle's incentre (a box's face flat on it). */
static int hf_prism_idle(const hf_grid *g, const double *v[3], const double T[9], const grit_shape *o,
                         double margin) {
  double n[3], dl[3], sl[3], s[3];
  grit_v3_set(n, T[2], T[5], T[8]);
  grit_v3_scale(dl, n, -1.0);
  double dlo[3];
  grit_m3_tmulv(dlo, g->Rr, dl);
  if (grit_shape_support(o, dlo, sl) != GRIT_OK) return 0;
  grit_tf_apply(s, g->pr, g->Rr, sl);
  const double c = grit_v3_dot(n, v[0]), h = grit_v3_dot(n, s) - c;
  if (h >= margin && h > g->far) return 1; /* clear of the margin, far above GJK's touching distance */
  const double rmin = 1e-3 * (g->dx + g->dy), base = g->h->size[2];
  hf_edges E;
  hf_edges_of(v, n, &E);
  for (int i = 0; i < 2; ++i) {
    double x[3], hy;
    if (i == 0) { /* the support point's foot */
      grit_v3_addscl(x, s, n, -h);
      hy = h;
    } else { /* a box: over the triangle's incentre (the edges' lengths weigh the opposite vertices) */
      if (o->type != GRIT_GEOM_BOX) break;
      const double sum = E.len[0] + E.len[1] + E.len[2];
      grit_v3_zero(x);
      for (int e = 0; e < 3; ++e) grit_v3_addscl(x, x, v[e], E.len[(e + 1) % 3] / sum);
      hy = hf_box_entry(o->size, g->pr, g->Rr, x, n);
      if (!isfinite(hy)) break;
    }
    const double dy = hy < 0.0 ? -hy : 0.0, delta = hy - h, r = hf_clearance(v, &E, x);
    if (!(r >= rmin && r >= 4.0 * dy)) continue;
    const double rho = 0.5 * (r * n[2] < x[2] + base ? r * n[2] : x[2] + base);
    if (rho > 2.0 * dy && fabs(delta) <= 1e-12 * r) return 1;
  }
  return 0;
}

/* Prism t of cell (r, c) against o. The triangle's own face gives the closed-form points of its plane
 * whose foot lies on it (a flat field: each corner of a box once, as a plane gives them). The prism's
 * GJK/EPA candidate adds what the faces miss, o against an edge or a vertex of the surface (a ridge, a
 * peak), when its normal points up out of the surface but is not the face's: a normal on the face is
 * the plane's case; a horizontal one crosses a vertical side shared with the next prism (not a surface
 * of the field); a downward one comes from the base. Returns the number written to out. */
static int hf_prism(hf_grid *g, int r, int c, int t, const double ph[3], const double Rh[9],
                    const grit_shape *o, const double po[3], const double Ro[9], double margin,
                    grit_contact_point *out) {
  const double *v[3];
  double T[9], nl[3];
  hf_triangle(g, r, c, t, v);
  hf_plane_frame(v, T);
  int k = hf_plane_points(g, r, c, t, v, T, ph, Rh, o, po, Ro, margin, out);
  if (k < 0) k = 0;
  double pv[18];
  for (int i = 0; i < 3; ++i) {
    memcpy(pv + 3 * i, v[i], 3 * sizeof(double));
    memcpy(pv + 9 + 3 * i, v[i], 2 * sizeof(double));
    pv[9 + 3 * i + 2] = -g->h->size[2];
  }
  if (!g->all_prisms && hf_prism_idle(g, v, T, o, margin)) {
    g->idle++;
    return k;
  }
  const grit_shape prism = grit_shape_convex(pv, 6);
  int n = 0;
  if (grit_collide(&prism, ph, Rh, o, po, Ro, margin, out + k, 1, &n) != GRIT_OK || n == 0) return k;
  grit_m3_tmulv(nl, Rh, out[k].n); /* the normal in the field's frame */
  const double on_face = nl[0] * T[2] + nl[1] * T[5] + nl[2] * T[8];
  if (!(on_face < 1.0 - 1e-8 && nl[2] > 1e-6)) return k;
  hf_edge_feature(&out[k], v, 1e-9 * (g->dx + g->dy + g->h->size[2]), ph, Rh, po, Ro);
  return k + 1;
}

/* Keeps the `keep` deepest of the n candidates in a[] (stable: ties keep their order), in a[0..]. */
static int keep_deepest(grit_contact_point *a, int n, int keep) {
  for (int i = 1; i < n; ++i) { /* insertion sort on phi: n is small */
    grit_contact_point x = a[i];
    int j = i;
    for (; j > 0 && a[j - 1].phi > x.phi; --j) a[j] = a[j - 1];
    a[j] = x;
  }
  return n < keep ? n : keep;
}

/* The cell containing coordinate x (from the grid's edge) along an axis of n points spaced d, clamped to
 * the grid (an infinite or NaN x gives an end cell, never an overflow). */
static int cell_index(double x, double d, int n) {
  const double k = floor(x / d);
  return k >= n - 2 ? n - 2 : k > 0.0 ? (int)k : 0;
}

grit_status grit_collide_hfield_paths(const grit_shape *h, const double ph[3], const double Rh[9],
                                      const grit_shape *o, const double po[3], const double Ro[9], double margin,
                                      grit_contact_point *out, int *n_out, int all_prisms, int *idle) {
  *n_out = 0;
  if (idle) *idle = 0;
  if (h->type != GRIT_GEOM_HFIELD || o->type == GRIT_GEOM_PLANE || o->type == GRIT_GEOM_HFIELD)
    return GRIT_ERR_UNSUPPORTED;
  hf_grid g = {h, h->nvert / h->ncol, h->ncol, 0.0, 0.0, NULL, NULL, all_prisms, 0, 0.0};
  g.dx = 2.0 * h->size[0] / (g.ncol - 1);
  g.dy = 2.0 * h->size[1] / (g.nrow - 1);
  /* o's box in the field's frame, grown by the margin */
  double d[3], pr[3], Rr[9], lo[3], hi[3];
  grit_v3_sub(d, po, ph);
  grit_m3_tmulv(pr, Rh, d);
  grit_m3_tmul(Rr, Rh, Ro);
  grit_shape_world_aabb(o, pr, Rr, margin, lo, hi);
  g.pr = pr;
  g.Rr = Rr;
  g.far = 1e-8 * (h->size[0] + h->size[1] + h->size[2] + h->top + grit_shape_bounding_radius(o));
  const int c0 = cell_index(lo[0] + h->size[0], g.dx, g.ncol), c1 = cell_index(hi[0] + h->size[0], g.dx, g.ncol);
  const int r0 = cell_index(lo[1] + h->size[1], g.dy, g.nrow), r1 = cell_index(hi[1] + h->size[1], g.dy, g.nrow);
  if (!(lo[0] <= h->size[0] && hi[0] >= -h->size[0] && lo[1] <= h->size[1] && hi[1] >= -h->size[1])) return GRIT_OK;
  grit_contact_point buf[HF_GATHER + GRIT_COLLIDE_MAX_POINTS];
  int n = 0;
  for (int r = r0; r <= r1; ++r)
    for (int c = c0; c <= c1; ++c)
      for (int t = 0; t < 2; ++t) {
        const double *v[3];
        hf_triangle(&g, r, c, t, v);
        if (lo[2] > fmax(v[0][2], fmax(v[1][2], v[2][2]))) continue; /* o above the prism */
        n += hf_prism(&g, r, c, t, ph, Rh, o, po, Ro, margin, buf + n);
        if (n > HF_GATHER) n = keep_deepest(buf, n, HF_GATHER); /* bounded work space, deepest kept */
      }
  n = keep_deepest(buf, n, GRIT_HFIELD_MAX_POINTS);
  memcpy(out, buf, (size_t)n * sizeof *out);
  *n_out = n;
  if (idle) *idle = g.idle;
  return GRIT_OK;
}

grit_status grit_collide_hfield(const grit_shape *h, const double ph[3], const double Rh[9], const grit_shape *o,
                                const double po[3], const double Ro[9], double margin, grit_contact_point *out,
                                int *n_out) {
  return grit_collide_hfield_paths(h, ph, Rh, o, po, Ro, margin, out, n_out, 0, NULL);
}
