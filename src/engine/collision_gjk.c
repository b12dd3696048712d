/* SPDX-License-Identifier: Apache-2.0 */
/* collision_gjk.c — the general convex path of the narrow phase: GJK distance (separated cores) and EPA
 * penetration (overlapping cores), both on the shapes' core support functions, both allocation-free.
 *
 * D = A - B is the Minkowski difference of the two cores (points a - b). The signed distance of the
 * cores is -min over unit u of h_D(u) (h the support function): the distance from the origin to D when
 * the origin is outside D (GJK), minus the distance from the origin to D's boundary when it is inside
 * (EPA). The shapes' signed distance subtracts the two core radii (sphere, capsule). The unit normal
 * from a to b is -v/|v| for GJK's closest point v of D, and EPA's outward face normal of D.
 *
 * Accuracy. Point, segment and polytope cores (sphere, capsule, box, convex): GJK and EPA end on the
 * exact features, phi and n are exact to round-off. Curved cores (cylinder, ellipsoid): GJK's simplex
 * shrinks onto the curved surface and stalls where its thin triangles' normals drown in round-off, at
 * a distance error ~(eps |v| / sqrt(rho))^(2/3), ~1e-11 m at unit scale; since phi is stationary in the
 * normal, the normal and the witness points are then known only to ~sqrt of that (1e-6..1e-4 rad,
 * measured; worst where phi curves little in the normal). EPA on a curved core stops at its capacity;
 * the polish (epa_polish) then measures the overlap by separations, to GJK's accuracy. Two smooth curved
 * cores (ellipsoids, cylinders' rims and sides, spheres' points) leave that tail by Newton's method on the
 * support mapping (collision_gjk_newton.c): a single point of D, certified by GJK's own termination test.
 *
 * Memory: the EPA polytope (~40 KB) lives on the stack; nothing is allocated.
 *
 * Why not libccd: ccdGJKPenetration (EPA) allocates its polytope with malloc on every call, and libccd
 * 2.1 has no distance query for separated shapes; grit_collide must not allocate and needs witness
 * points at separation. The tests compare this EPA against libccd's. */
#include <math.h>
#include <string.h>

#include "collision_gjk_internal.h"
#include "collision_narrow.h"
#include "geometry_internal.h"
#include "grit/math.h"
#include "hull_graph.h"

/* GJK stops when the gap between the upper bound |v| and the lower bound v.w/|v| on the core distance is
 * below GJK_REL of |v| or GJK_ABS of the scale (round-off in v.w is ~1e-16 |v| scale). */
#define GJK_REL 1e-15
#define GJK_ABS 1e-15
#define GJK_MAX_ITER 128
/* Cores closer than this (times the scale) are treated as overlapping and passed to EPA. */
#define GJK_TOUCH 1e-10
/* EPA: polytope capacity; a polytope face is final when the support beyond it is within EPA_TOL of the
 * scale (exact, to round-off, for polytope cores; curved cores stop at the capacity instead). */
#define EPA_MAXV 128
#define EPA_MAXF 250
#define EPA_MAXE 128
#define EPA_TOL 1e-13
/* Polishing a curved overlap (see epa_polish): at most this many GJK runs, with b moved this far (times
 * the scale) beyond the upper bound on the depth, until the normal moves less than POLISH_TOL. */
#define POLISH_MAX 64
#define POLISH_GAP 1e-4
#define POLISH_TOL 1e-13

/* Out of line, support_D inlined in its callers: the code GCC chose before edge_jump (which changed its
 * choice to the reverse, +0.4 % on hull pairs). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void core_support_world(const body *x, const double d[3], double out[3]) {
  double dl[3], ol[3];
  grit_m3_tmulv(dl, x->R, d);
  const grit_shape *s = x->s;
  if (s->type == GRIT_GEOM_CONVEX && s->graph && s->nvert >= GRIT_HULL_SCAN_BELOW) { /* the hint's climb, called
                                                                                      directly (one call less) */
    int start = *x->hint, i = GRIT_CLIMB_TRAIL;
    if (x->trail && (i = x->trail[0]++) < GRIT_CLIMB_TRAIL) { /* the last call's i-th vertex, if higher */
      const int k = x->trail[1 + i];
      if (k >= 0 && (start < 0 || grit_v3_dot(dl, s->vertices + 3 * k) > grit_v3_dot(dl, s->vertices + 3 * start)))
        start = k;
    }
    *x->hint = grit_hull_support(s, dl, start);
    if (i < GRIT_CLIMB_TRAIL) x->trail[1 + i] = *x->hint;
    memcpy(ol, s->vertices + 3 * *x->hint, sizeof ol);
  } else
    grit_shape_core_support_hint(s, dl, ol, x->hint);
  grit_tf_apply(out, x->p, x->R, ol);
}

/* The point of D extreme in direction d: s_A(d) - s_B(-d). */
static void support_D(const body *A, const body *B, const double d[3], sv *v) {
  double nd[3] = {-d[0], -d[1], -d[2]};
  core_support_world(A, d, v->a);
  core_support_world(B, nd, v->b);
  grit_v3_sub(v->w, v->a, v->b);
}

/* ------------------------------------------------------------------- closest point on a simplex */

static void seg_closest(const double *a, const double *b, double lam[4]) {
  double ab[3];
  grit_v3_sub(ab, b, a);
  double den = grit_v3_dot(ab, ab), t = den > 0.0 ? -grit_v3_dot(a, ab) / den : 0.0;
  if (t <= 0.0) set_lam(lam, 1, 0, 0, 0);
  else if (t >= 1.0) set_lam(lam, 0, 1, 0, 0);
  else set_lam(lam, 1.0 - t, t, 0, 0);
}

/* Ericson, Real-Time Collision Detection, 5.1.5, for the point 0: Voronoi regions of the triangle. */
static void tri_closest(const double *a, const double *b, const double *c, double lam[4]) {
  double ab[3], ac[3];
  grit_v3_sub(ab, b, a);
  grit_v3_sub(ac, c, a);
  double d1 = -grit_v3_dot(ab, a), d2 = -grit_v3_dot(ac, a);
  if (d1 <= 0.0 && d2 <= 0.0) {
    set_lam(lam, 1, 0, 0, 0);
    return;
  }
  double d3 = -grit_v3_dot(ab, b), d4 = -grit_v3_dot(ac, b);
  if (d3 >= 0.0 && d4 <= d3) {
    set_lam(lam, 0, 1, 0, 0);
    return;
  }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
    double t = d1 / (d1 - d3);
    set_lam(lam, 1.0 - t, t, 0, 0);
    return;
  }
  double d5 = -grit_v3_dot(ab, c), d6 = -grit_v3_dot(ac, c);
  if (d6 >= 0.0 && d5 <= d6) {
    set_lam(lam, 0, 0, 1, 0);
    return;
  }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
    double t = d2 / (d2 - d6);
    set_lam(lam, 1.0 - t, 0, t, 0);
    return;
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
    double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    set_lam(lam, 0, 1.0 - t, t, 0);
    return;
  }
  double den = 1.0 / (va + vb + vc);
  set_lam(lam, va * den, vb * den, vc * den, 0);
}

/* Tetrahedron: the closest point over the faces the origin lies outside of; 1 if it lies inside. A flat
 * tetrahedron (volume below round-off) has no inside: all four faces are tried. */
static int tet_closest(const sv *v, double lam[4]) {
  static const int F[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}}; /* face + opposite */
  double e1[3], e2[3], e3[3], c[3];
  grit_v3_sub(e1, v[1].w, v[0].w);
  grit_v3_sub(e2, v[2].w, v[0].w);
  grit_v3_sub(e3, v[3].w, v[0].w);
  grit_v3_cross(c, e2, e3);
  double L = sqrt(fmax(grit_v3_norm2(e1), fmax(grit_v3_norm2(e2), grit_v3_norm2(e3))));
  int flat = fabs(grit_v3_dot(e1, c)) <= 1e-13 * L * L * L;
  double best = INFINITY;
  int any = 0;
  for (int f = 0; f < 4; ++f) {
    const double *p = v[F[f][0]].w, *q = v[F[f][1]].w, *r = v[F[f][2]].w, *x = v[F[f][3]].w;
    double pq[3], pr[3], m[3], px[3];
    grit_v3_sub(pq, q, p);
    grit_v3_sub(pr, r, p);
    grit_v3_cross(m, pq, pr);
    grit_v3_sub(px, x, p);
    double so = -grit_v3_dot(m, p), sx = grit_v3_dot(m, px);
    if (!flat && so * sx > 0.0) continue; /* the origin is on the tetrahedron's side of this face */
    any = 1;
    double l3[4], pt[3] = {0, 0, 0};
    tri_closest(p, q, r, l3);
    for (int k = 0; k < 3; ++k) grit_v3_addscl(pt, pt, v[F[f][k]].w, l3[k]);
    double d2 = grit_v3_norm2(pt);
    if (d2 < best) {
      best = d2;
      set_lam(lam, 0, 0, 0, 0);
      for (int k = 0; k < 3; ++k) lam[F[f][k]] = l3[k];
    }
  }
  return !any;
}

/* The weights of the simplex's point closest to the origin (0: a point left out); 1 if the origin is
 * inside the (tetrahedral) simplex. s is not changed: GJK drops the new point at no cost when it brings
 * no progress (no copy of the simplex to restore). */
static int simplex_weights(const simplex *s, double lam[4]) {
  if (s->n == 1) set_lam(lam, 1, 0, 0, 0);
  else if (s->n == 2) seg_closest(s->v[0].w, s->v[1].w, lam);
  else if (s->n == 3) tri_closest(s->v[0].w, s->v[1].w, s->v[2].w, lam);
  else return tet_closest(s->v, lam);
  return 0;
}

/* The closest point: the sum over the points kept (lam > 0) in their order, the reduced simplex's sum. */
static void weighted_point(const simplex *s, const double lam[4], double v[3]) {
  grit_v3_zero(v);
  for (int i = 0; i < s->n; ++i)
    if (lam[i] > 0.0) grit_v3_addscl(v, v, s->v[i].w, lam[i]);
}

/* Replaces s by the smallest sub-simplex holding its closest point (the points of positive weight). */
static void simplex_reduce(simplex *s, const double lam[4]) {
  int m = 0;
  for (int i = 0; i < s->n; ++i)
    if (lam[i] > 0.0) s->v[m] = s->v[i], s->lam[m++] = lam[i];
  s->n = m;
}

/* ---------------------------------------------------------------------------------------- GJK */

/* Tries of edge_jump a call (each on a feature GJK kept for an iteration): a failed one costs ~0.2-1.5 k
 * instructions, a stall on a curved core ~20 iterations of ~1 k. */
#define EDGE_TRIES 4

enum { GJK_SEPARATED, GJK_FAR, GJK_OVERLAP };
/* Jumps a GJK call takes at most: each resets the simplex to one point, so repeated jumps could keep it
 * from growing around an origin inside D (an overlap approached by ever shorter jumps). */
#define JUMP_MAX 2
/* newton_jump is tried once a call, after this many iterations: pairs on flat features (a cylinder's cap or
 * side) have converged by then, those left are in GJK's linear tail on a curved surface. */
#define NEWTON_AFTER 3
#define NEWTON_TRIES 2

/* GJK on the cores: GJK_FAR if their distance certainly exceeds `far`, GJK_OVERLAP if they overlap or
 * touch (then s holds the last simplex), else GJK_SEPARATED with s reduced to the closest feature. */
static int gjk(const body *A, const body *B, double far, double scale, simplex *s, double v[3], int *iters,
               int *jumps, const double *start, const double *seed) {
  double d[3];
  if (start) grit_v3_copy(d, start);
  else grit_v3_sub(d, B->p, A->p);
  if (grit_v3_norm2(d) == 0.0) grit_v3_set(d, 1.0, 0.0, 0.0);
  s->n = 1;
  s->lam[0] = 1.0;
  support_D(A, B, d, &s->v[0]);
  grit_v3_copy(v, s->v[0].w);
  const double touch2 = (GJK_TOUCH * scale) * (GJK_TOUCH * scale);
  if (seed && A->refine && B->refine) { /* the point jump from the seed, a point of the non-cylinder core */
    simplex t = *s;
    grit_v3_copy(A->s->type == GRIT_GEOM_CYLINDER ? t.v[0].b : t.v[0].a, seed);
    if (grit_gjk_point_jump(A, B, &t, v, touch2)) *s = t;
  }
  int tries = 0, newton = A->newton && B->newton ? NEWTON_TRIES : 0, newton_at = NEWTON_AFTER;
  double last_edge[9] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}; /* the last feature seen (edge_jump) */
  for (*iters = 0; *iters < GJK_MAX_ITER; ++*iters) {
    double vv = grit_v3_norm2(v);
    if (vv <= touch2) return GJK_OVERLAP;
    double nv[3] = {-v[0], -v[1], -v[2]};
    sv w;
    support_D(A, B, nv, &w);
    double vw = grit_v3_dot(v, w.w);
    if (vw > 0.0 && vw * vw > far * far * vv) return GJK_FAR; /* lower bound v.w/|v| beyond far */
    if (vv - vw <= fmax(GJK_REL * vv, GJK_ABS * scale * sqrt(vv))) return GJK_SEPARATED;
    for (int i = 0; i < s->n; ++i) /* no new support point: converged as far as round-off allows */
      if (w.w[0] == s->v[i].w[0] && w.w[1] == s->v[i].w[1] && w.w[2] == s->v[i].w[2]) return GJK_SEPARATED;
    s->v[s->n++] = w;
    double vn[3], lam[4];
    if (simplex_weights(s, lam)) { /* the origin inside the tetrahedron */
      for (int i = 0; i < 4; ++i) s->lam[i] = 0.25;
      return GJK_OVERLAP;
    }
    weighted_point(s, lam, vn);
    if (grit_v3_norm2(vn) >= vv) { /* no progress (round-off): keep the previous simplex */
      s->n--;
      return GJK_SEPARATED;
    }
    simplex_reduce(s, lam);
    grit_v3_copy(v, vn);
    if (newton && *iters >= newton_at) { /* NEWTON_TRIES a call */
      newton--, newton_at = *iters + NEWTON_AFTER;
      if (grit_gjk_newton_jump(A, B, s, v, touch2)) {
        ++*jumps;
        continue;
      }
    }
    if (A->refine && B->refine && *jumps < JUMP_MAX) {
      const int moved = grit_gjk_point_jump(A, B, s, v, touch2);
      *jumps += moved;
      if (!moved && A->edge && B->edge && tries < EDGE_TRIES && s->n > 1) { /* at most EDGE_TRIES a call */
        const int r = grit_gjk_edge_jump(A, B, s, v, touch2, last_edge);
        if (r >= 0) ++tries, *jumps += r;
      }
    }
  }
  return GJK_SEPARATED;
}

/* ---------------------------------------------------------------------------------------- EPA */

typedef struct face {
  int i[3];
  double n[3], d; /* outward unit normal and the plane's distance from the origin (n.w = d on it) */
} face;

typedef struct polytope {
  sv v[EPA_MAXV];
  face f[EPA_MAXF];
  int nv, nf;
  unsigned char edge[EPA_MAXV][EPA_MAXV]; /* the face holding the directed edge (i, j); NO_FACE: none.
                                             Only the entries between the nv vertices are ever read: they
                                             are cleared as vertices come (clear_edges), not all 16 KB
                                             a call, unless full_clear (grit_gjk_info.full_edge_clear) */
  int full_clear;
  int rewrite; /* 1: the kept faces' edges are all written again after each expansion (the old path, and
                  a torn table: a face claimed a directed edge another face held, which only round-off on a
                  pinched cap does); 0: only the moved ones', the others' entries being theirs already */
} polytope;

#define NO_FACE 255 /* > EPA_MAXF */

static void set_edges(polytope *P, int f, int value) {
  for (int k = 0; k < 3; ++k) P->edge[P->f[f].i[k]][P->f[f].i[(k + 1) % 3]] = (unsigned char)value;
}

static int add_face(polytope *P, int i, int j, int k, double scale) {
  if (P->nf >= EPA_MAXF) return 0;
  face *f = &P->f[P->nf];
  double e1[3], e2[3];
  grit_v3_sub(e1, P->v[j].w, P->v[i].w);
  grit_v3_sub(e2, P->v[k].w, P->v[i].w);
  grit_v3_cross(f->n, e1, e2);
  double len = grit_v3_norm(f->n);
  if (len <= 1e-15 * scale * scale) return 0; /* a sliver: its normal would be round-off */
  grit_v3_scale(f->n, f->n, 1.0 / len);
  f->d = grit_v3_dot(f->n, P->v[i].w);
  f->i[0] = i, f->i[1] = j, f->i[2] = k;
  if (P->edge[i][j] != NO_FACE || P->edge[j][k] != NO_FACE || P->edge[k][i] != NO_FACE) P->rewrite = 1;
  set_edges(P, P->nf, P->nf);
  P->nf++;
  return 1;
}

/* Grows GJK's last simplex to a tetrahedron of D around the origin (the origin is inside it, or within
 * round-off of its boundary when the cores just touch). Returns 0 if D has no volume there. */
static int epa_seed(const body *A, const body *B, const simplex *s, double scale, polytope *P) {
  const double tol = 1e-9 * scale;
  P->nv = s->n;
  for (int i = 0; i < s->n; ++i) P->v[i] = s->v[i];
  static const double axes[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  for (int k = 0; P->nv == 1 && k < 6; ++k) { /* a second point, away from the first */
    support_D(A, B, axes[k], &P->v[1]);
    double e[3];
    grit_v3_sub(e, P->v[1].w, P->v[0].w);
    if (grit_v3_norm(e) > tol) P->nv = 2;
  }
  if (P->nv == 2) { /* a third point off the line: directions around it, 60 degrees apart */
    double u[3], t1[3], t2[3];
    grit_v3_sub(u, P->v[1].w, P->v[0].w);
    grit_v3_normalize(u);
    int k = fabs(u[0]) < 0.57 ? 0 : fabs(u[1]) < 0.57 ? 1 : 2;
    grit_v3_cross(t1, u, axes[2 * k]);
    grit_v3_normalize(t1);
    grit_v3_cross(t2, u, t1);
    for (int j = 0; j < 6 && P->nv == 2; ++j) {
      double a = j * (3.14159265358979323846 / 3.0), d[3], e[3], c[3];
      for (int q = 0; q < 3; ++q) d[q] = cos(a) * t1[q] + sin(a) * t2[q];
      support_D(A, B, d, &P->v[2]);
      grit_v3_sub(e, P->v[2].w, P->v[0].w);
      grit_v3_cross(c, u, e);
      if (grit_v3_norm(c) > tol) P->nv = 3;
    }
  }
  if (P->nv == 3) { /* a fourth point off the plane */
    double e1[3], e2[3], m[3];
    grit_v3_sub(e1, P->v[1].w, P->v[0].w);
    grit_v3_sub(e2, P->v[2].w, P->v[0].w);
    grit_v3_cross(m, e1, e2);
    grit_v3_normalize(m);
    for (int j = 0; j < 2 && P->nv == 3; ++j) {
      double e[3];
      support_D(A, B, m, &P->v[3]);
      grit_v3_sub(e, P->v[3].w, P->v[0].w);
      if (fabs(grit_v3_dot(e, m)) > tol) P->nv = 4;
      grit_v3_scale(m, m, -1.0);
    }
  }
  if (P->nv != 4) return 0;
  double e1[3], e2[3], e3[3], c[3];
  grit_v3_sub(e1, P->v[1].w, P->v[0].w);
  grit_v3_sub(e2, P->v[2].w, P->v[0].w);
  grit_v3_sub(e3, P->v[3].w, P->v[0].w);
  grit_v3_cross(c, e1, e2);
  if (grit_v3_dot(c, e3) > 0.0) { /* orient so that face (0,1,2) faces away from vertex 3 */
    sv t = P->v[1];
    P->v[1] = P->v[2];
    P->v[2] = t;
  }
  P->nf = 0;
  if (P->full_clear) memset(P->edge, NO_FACE, sizeof P->edge);
  else
    for (int i = 0; i < P->nv; ++i) memset(P->edge[i], NO_FACE, (size_t)P->nv);
  return add_face(P, 0, 1, 2, scale) && add_face(P, 0, 3, 1, scale) && add_face(P, 0, 2, 3, scale) &&
         add_face(P, 1, 3, 2, scale);
}

/* Adds w to the polytope: removes the faces w sees, closes the hole with faces on w. The seen faces are
 * grown from the nearest face `first` across shared edges, so they form one connected cap whose rim is
 * a closed loop even where round-off makes visibility inconsistent far away (a cap in pieces would
 * leave a torn, non-convex polytope). 0 on failure (capacity, or w seeing nothing). */
static int epa_expand(polytope *P, int first, const sv *w, double scale) {
  if (P->nv >= EPA_MAXV) return 0;
  int edges[EPA_MAXE][2], ne = 0, queue[EPA_MAXF], nq = 0;
  char vis[EPA_MAXF] = {0}, seen[EPA_MAXF] = {0};
  queue[nq++] = first;
  vis[first] = seen[first] = 1;
  for (int q = 0; q < nq; ++q) {
    const face *f = &P->f[queue[q]];
    for (int k = 0; k < 3; ++k) {
      const int a = f->i[k], b = f->i[(k + 1) % 3], g = P->edge[b][a];
      if (g == NO_FACE) return 0; /* not a closed polytope: give up */
      if (!seen[g]) {
        double e[3];
        seen[g] = 1;
        grit_v3_sub(e, w->w, P->v[P->f[g].i[0]].w);
        vis[g] = grit_v3_dot(P->f[g].n, e) > 1e-15 * scale;
        if (vis[g]) queue[nq++] = g;
      }
      if (!vis[g]) {
        if (ne >= EPA_MAXE) return 0;
        edges[ne][0] = a, edges[ne][1] = b, ne++;
      }
    }
  }
  if (P->nf - nq + ne > EPA_MAXF) return 0;
  int m = 0;
  for (int f = 0; f < P->nf; ++f) {
    if (vis[f]) {
      set_edges(P, f, NO_FACE);
      continue;
    }
    if (m != f) P->f[m] = P->f[f];
    if (m != f || P->rewrite) set_edges(P, m, m);
    m++;
  }
  P->nf = m;
  const int iw = P->nv++;
  P->v[iw] = *w;
  if (!P->full_clear) /* the new vertex's row and column among the vertices: no edge yet */
    for (int i = 0; i <= iw; ++i) P->edge[iw][i] = P->edge[i][iw] = NO_FACE;
  for (int q = 0; q < ne; ++q)
    if (!add_face(P, edges[q][0], edges[q][1], iw, scale)) return 0;
  return 1;
}

/* EPA from GJK's last simplex: the face of D nearest the origin. Writes the depth of the cores' overlap
 * (the face's distance; negative if the cores only touch), the outward normal and the two core points
 * over the origin's projection on the face. Returns 0 if D has no volume. */
static int epa(const body *A, const body *B, const simplex *s, double scale, double *depth, double n[3],
               double ca[3], double cb[3], grit_gjk_info *info) {
  polytope P;
  P.full_clear = info && info->full_edge_clear;
  P.rewrite = info && info->epa_rewrite;
  if (!epa_seed(A, B, s, scale, &P)) return 0;
  int best = 0;
  for (int it = 0;; ++it) {
    best = 0;
    for (int f = 1; f < P.nf; ++f)
      if (P.f[f].d < P.f[best].d) best = f;
    sv w;
    support_D(A, B, P.f[best].n, &w);
    if (info) info->epa_iterations = it;
    if (grit_v3_dot(P.f[best].n, w.w) - P.f[best].d <= EPA_TOL * scale) {
      if (info) info->epa_converged = 1;
      break;
    }
    face keep = P.f[best];
    if (!epa_expand(&P, best, &w, scale)) { /* capacity or round-off: the nearest face so far is the answer */
      P.nf = 1;
      P.f[0] = keep;
      best = 0;
      break;
    }
  }
  const face *f = &P.f[best];
  double p[3], lam[3], area[3], tot = 0.0;
  grit_v3_scale(p, f->n, f->d); /* the origin's projection on the face */
  for (int k = 0; k < 3; ++k) { /* barycentric weights from sub-triangle areas */
    double e1[3], e2[3], c[3];
    grit_v3_sub(e1, P.v[f->i[(k + 1) % 3]].w, p);
    grit_v3_sub(e2, P.v[f->i[(k + 2) % 3]].w, p);
    grit_v3_cross(c, e1, e2);
    area[k] = grit_v3_dot(c, f->n);
    tot += area[k];
  }
  grit_v3_zero(ca);
  grit_v3_zero(cb);
  for (int k = 0; k < 3; ++k) {
    lam[k] = tot != 0.0 ? area[k] / tot : 1.0 / 3.0;
    grit_v3_addscl(ca, ca, P.v[f->i[k]].a, lam[k]);
    grit_v3_addscl(cb, cb, P.v[f->i[k]].b, lam[k]);
  }
  *depth = f->d;
  grit_v3_copy(n, f->n);
  return 1;
}

/* EPA's polytope is exact for polytope cores; on a curved core (cylinder, ellipsoid) it stops at its
 * capacity with a face that lies inside D, its distance a lower bound on the depth. The polish turns the
 * overlap into separations, which GJK measures to round-off: b is moved along the current normal n by
 * t = h_D(n) + gap, beyond the overlap (no point of D reaches t along n); GJK then gives the distance g
 * and normal m of the moved pair. Two balls argue that t - g is an upper bound on the depth (the ball of
 * radius depth about the origin lies in D, the ball of radius g about t n outside), exact when n is the
 * optimal normal; and m = n exactly there (the moved pair's closest points are the deepest points).
 * Iterating n <- m contracts towards the optimum, fast for shallow overlaps (by ~ (depth + gap) / radius
 * of curvature per step). Writes the best (least) upper bound, with its normal and core points. */
/* One polish evaluation at the unit normal nk: the upper bound d = t - g on the depth, the moved pair's
 * normal m and its closest core points (cb back on the unmoved b). 0 if GJK does not see a separation. */
static int polish_eval(const body *A, const body *B, double scale, const double nk[3], double *d, double m[3],
                       double ca[3], double cb[3], int jump, double seed[3], int *seeded) {
  sv w;
  support_D(A, B, nk, &w);
  const double t = grit_v3_dot(nk, w.w) + POLISH_GAP * scale;
  double pt[3], v[3];
  grit_v3_addscl(pt, B->p, nk, t);
  /* With jump: the point and edge jumps (a cylinder's curved side against a hull's vertex or edge: ~27 GJK
   * iterations a separation without them, ~9 with) and GJK started along nk, where the moved pair's closest
   * points lie (m = nk at the optimum), not along the line of centres. Else the old path (no_polish_jump). */
  const body Bt = {B->s, pt, B->R, B->r, B->hint, jump && B->refine, jump && B->edge, B->trail, B->newton};
  simplex s;
  int it, jumps = 0;
  /* The last evaluation's closest point of the non-cylinder core (B's moved by t along nk) seeds GJK's point
   * jump: the normal moved little, the closest feature is mostly the same (~9 iterations -> ~2). */
  const int a_cyl = A->s->type == GRIT_GEOM_CYLINDER;
  double sp[3];
  if (*seeded) {
    grit_v3_copy(sp, seed);
    if (a_cyl) grit_v3_addscl(sp, sp, nk, t);
  }
  if (gjk(A, &Bt, INFINITY, scale, &s, v, &it, &jumps, jump ? nk : NULL, jump && *seeded ? sp : NULL) != GJK_SEPARATED)
    return 0;
  grit_v3_zero(ca);
  grit_v3_zero(cb);
  for (int i = 0; i < s.n; ++i) {
    grit_v3_addscl(ca, ca, s.v[i].a, s.lam[i]);
    grit_v3_addscl(cb, cb, s.v[i].b, s.lam[i]);
  }
  const double g = grit_v3_norm(v);
  *d = t - g;
  grit_v3_scale(m, v, -1.0 / g);
  grit_v3_addscl(cb, cb, nk, -t);
  grit_v3_copy(seed, a_cyl ? cb : ca);
  *seeded = 1;
  return 1;
}

static void epa_polish(const body *A, const body *B, double scale, double *depth, double n[3], double ca[3],
                       double cb[3], int *steps, int jump) {
  double nk[3], best = INFINITY, prev = 0.0, seed[3] = {0, 0, 0};
  int extrapolated = 0, seeded = 0;
  grit_v3_copy(nk, n);
  for (int k = 0; k < POLISH_MAX; ++k) {
    double d, m[3], a[3], b[3], step[3];
    ++*steps;
    if (!polish_eval(A, B, scale, nk, &d, m, a, b, jump, seed, &seeded)) return;
    if (d < best) {
      best = d;
      *depth = d;
      grit_v3_copy(n, m);
      grit_v3_copy(ca, a);
      grit_v3_copy(cb, b);
    } else if (!extrapolated) {
      return; /* a plain step that does not improve: round-off level */
    } else {    /* a failed extrapolation: continue plainly from the best */
      grit_v3_copy(nk, n);
      extrapolated = 0;
      prev = 0.0;
      continue;
    }
    grit_v3_sub(step, m, nk);
    const double len = grit_v3_norm(step);
    if (len <= POLISH_TOL) return;
    /* Linear convergence n_k - n* ~ q^k along a fixed direction (deep overlaps: q -> 1): every other
     * step jumps to Aitken's limit n_k + step / (1 - q), q estimated from two plain steps. */
    const double q = prev > 0.0 ? len / prev : 0.0;
    if (!extrapolated && q > 0.0 && q < 0.995) {
      grit_v3_addscl(nk, nk, step, 1.0 / (1.0 - q));
      grit_v3_normalize(nk);
      extrapolated = 1;
      prev = 0.0;
    } else {
      grit_v3_copy(nk, m);
      extrapolated = 0;
      prev = len;
    }
  }
}

/* ------------------------------------------------------------------------------- degenerate cores */

/* Two cores that are points or segments and overlap: a normal perpendicular to both (deterministic),
 * oriented from a's position towards b's. */
static void fallback_normal(const body *A, const body *B, double n[3]) {
  double ua[3] = {A->R[2], A->R[5], A->R[8]}, ub[3] = {B->R[2], B->R[5], B->R[8]}, d[3];
  int sa = A->s->type == GRIT_GEOM_CAPSULE, sb = B->s->type == GRIT_GEOM_CAPSULE;
  grit_v3_sub(d, B->p, A->p);
  grit_v3_set(n, 0.0, 0.0, 1.0);
  if (sa && sb) {
    grit_v3_cross(n, ua, ub);
    if (grit_v3_norm(n) > 1e-6) goto orient;
  }
  if (sa || sb) {
    const double *u = sa ? ua : ub;
    double t[3], e[3] = {1, 0, 0};
    grit_v3_addscl(t, d, u, -grit_v3_dot(d, u));
    if (grit_v3_norm(t) <= 1e-12 * (A->r + B->r)) {
      if (fabs(u[0]) > 0.57) grit_v3_set(e, 0, 1, 0);
      grit_v3_cross(t, u, e);
    }
    grit_v3_copy(n, t);
  }
orient:
  grit_v3_normalize(n);
  if (grit_v3_dot(n, d) < 0.0) grit_v3_scale(n, n, -1.0);
}

/* ------------------------------------------------------------------------------------ entry point */

/* Makes cb - ca = -v exactly (to round-off) by moving each point half the residual: the witness points
 * then differ exactly along the normal, which the derivative argument needs. */
static void make_parallel(double ca[3], double cb[3], const double v[3]) {
  double e[3];
  for (int k = 0; k < 3; ++k) e[k] = (ca[k] - cb[k]) - v[k];
  grit_v3_addscl(ca, ca, e, -0.5);
  grit_v3_addscl(cb, cb, e, 0.5);
}

int grit_gjk_epa(const grit_placed_shape *pa, const grit_placed_shape *pb, double margin, double *phi, double n[3],
                 double wa[3], double wb[3], grit_gjk_info *info) {
  int ha = -1, hb = -1;
  const int refine = !(info && info->no_point_jump), newton_off = info && info->no_newton;
  const int edge = !(info && info->no_edge_jump), polish_jump_off = info && info->no_polish_jump;
  const grit_geom_type ta = pa->shape->type, tb = pb->shape->type;
  const int edge_pair = edge && (ta == GRIT_GEOM_CYLINDER) != (tb == GRIT_GEOM_CYLINDER) && /* a cylinder and */
                        ta != GRIT_GEOM_ELLIPSOID && tb != GRIT_GEOM_ELLIPSOID; /* a point, segment or polytope */
  const int jump_pair = refine && (ta == GRIT_GEOM_CYLINDER) != (tb == GRIT_GEOM_CYLINDER); /* the only pairs
                                                     the jumps act on: no call (collision_gjk_jump.c) on others */
  if (pa->trail) pa->trail[0] = 0; /* the kept starts from the first support on */
  if (pb->trail) pb->trail[0] = 0;
  const int newton_pair = !newton_off && grit_gjk_newton_shape(ta) && grit_gjk_newton_shape(tb) &&
                          (ta != GRIT_GEOM_SPHERE || tb != GRIT_GEOM_SPHERE);
  const body A = {pa->shape, pa->p, pa->R, grit_shape_core_radius(pa->shape), &ha, jump_pair, edge_pair, pa->trail,
                  newton_pair};
  const body B = {pb->shape, pb->p, pb->R, grit_shape_core_radius(pb->shape), &hb, jump_pair, edge_pair, pb->trail,
                  newton_pair};
  const double scale = grit_shape_bounding_radius(A.s) + grit_shape_bounding_radius(B.s);
  simplex s;
  double v[3], ca[3], cb[3], dist;
  int it = 0;
  grit_gjk_info own;
  if (!info) info = &own; /* EPA reports whether it converged through it */
  const int full = info == &own ? 0 : info->full_edge_clear, rewrite = info == &own ? 0 : info->epa_rewrite;
  memset(info, 0, sizeof *info);
  info->full_edge_clear = full;
  info->epa_rewrite = rewrite;
  info->no_point_jump = !refine;
  info->no_edge_jump = !edge;
  info->no_newton = newton_off;
  info->no_polish_jump = polish_jump_off;
  int jumps = 0, res = gjk(&A, &B, margin + A.r + B.r, scale, &s, v, &it, &jumps, NULL, NULL);
  if (jumps && (res == GJK_OVERLAP || it >= GJK_MAX_ITER)) { /* overlaps (and a call out of iterations) take the
                                                               old path: EPA gets its simplex, the same bits */
    const body A0 = {A.s, A.p, A.R, A.r, A.hint, 0, 0, A.trail, 0}, B0 = {B.s, B.p, B.R, B.r, B.hint, 0, 0, B.trail, 0};
    res = gjk(&A0, &B0, margin + A.r + B.r, scale, &s, v, &it, &jumps, NULL, NULL);
  }
  info->gjk_iterations = it;
  if (res == GJK_FAR) { /* v . (a(-v) - b(v)) > far |v|: along v, a's cores lie beyond b's by more than far */
    info->far = 1;
    grit_v3_copy(info->far_axis, v);
    return 0;
  }
  /* GJK's closest points on the cores (on overlap too: D is flat then, so no tetrahedron ever holds the
   * origin and the weights are those of the last closest point) */
  grit_v3_zero(ca);
  grit_v3_zero(cb);
  for (int i = 0; i < s.n; ++i) {
    grit_v3_addscl(ca, ca, s.v[i].a, s.lam[i]);
    grit_v3_addscl(cb, cb, s.v[i].b, s.lam[i]);
  }
  if (res == GJK_SEPARATED) {
    dist = grit_v3_norm(v);
    grit_v3_scale(n, v, -1.0 / dist);
    make_parallel(ca, cb, v);
  } else if (grit_shape_core_dim(A.s) + grit_shape_core_dim(B.s) < 3) {
    /* point/segment cores overlap: D is flat, so the depth is the radii alone; the normal is any
     * direction normal to D, and the witness points start from the cores' common point */
    dist = 0.0;
    fallback_normal(&A, &B, n);
    for (int k = 0; k < 3; ++k) ca[k] = cb[k] = 0.5 * (ca[k] + cb[k]);
  } else {
    double depth;
    if (!epa(&A, &B, &s, scale, &depth, n, ca, cb, info)) return 0;
    if (!info->epa_converged) {
      /* A second start along the line of centres: where D is nearly round about the origin (a deep,
       * nearly concentric overlap) EPA's nearest face is arbitrary and can sit near a saddle of h_D,
       * which the polish cannot leave; the line of centres is then close to the true direction. */
      double d2 = INFINITY, n2[3], a2[3] = {0, 0, 0}, b2[3] = {0, 0, 0};
      grit_v3_sub(n2, B.p, A.p);
      const int jump = !info->no_polish_jump;
      if (grit_v3_normalize(n2) > 0.0) epa_polish(&A, &B, scale, &d2, n2, a2, b2, &info->polish_steps, jump);
      epa_polish(&A, &B, scale, &depth, n, ca, cb, &info->polish_steps, jump);
      if (d2 < depth) {
        depth = d2;
        grit_v3_copy(n, n2);
        grit_v3_copy(ca, a2);
        grit_v3_copy(cb, b2);
      }
    }
    /* The normal is taken along ca - cb when the points are apart: an unconverged polish leaves its
     * normal and its points slightly inconsistent, and moving the points to fit the normal could push
     * them out of their shapes; along their difference they move by a second-order amount only. */
    double vv[3];
    grit_v3_sub(vv, ca, cb);
    if (grit_v3_norm(vv) > 1e-6 * scale) grit_v3_scale(n, vv, 1.0 / grit_v3_norm(vv));
    dist = -depth;
    grit_v3_scale(vv, n, depth); /* ca - cb = depth n */
    make_parallel(ca, cb, vv);
  }
  *phi = dist - A.r - B.r;
  if (!(*phi < margin)) return 0;
  grit_v3_addscl(wa, ca, n, A.r);
  grit_v3_addscl(wb, cb, n, -B.r);
  return 1;
}
