/* SPDX-License-Identifier: Apache-2.0 */
/* hydro.c — the contact surface of a compliant-hydroelastic geometry against a rigid geometry (seed
 * 004, section III): the rigid surface's faces (a plane, a box's, the inscribed polyhedra of spheres,
 * ellipsoids, capsules and cylinders, a convex mesh's hull) clipped by each tetrahedron they cut (the
 * face's plane cut by the tetrahedron, a triangle or a quad, then clipped to the face); and against
 * another compliant geometry, the equal-pressure polygons of pairs of tetrahedra found by a broad phase
 * (hydro_pair_generic.h). The linear pressure over a polygon gives its force exactly at its centroid,
 * f = A p0. Section IV turns each
 * polygon into one point constraint at the centroid, normal the plane's, with stiffness k = g A and
 * signed distance phi0 = -p0 / g, where g > 0 is the pressure's gradient along the normal into the
 * compliant body: then k (-phi0) = A p0, and pressure changes at dp/dt = -g v_n. The polygon's
 * quantities are scalar-generic (hydro_generic.h), instantiated here for double and for dual numbers. */
#include "hydro.h"

#include <math.h>
#include <string.h>

#include "grit/math.h"
#include "grit/math_dual.h"

#include "grit/detail/scalar_double.h"
#include "hydro_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "hydro_generic.h"
#include "grit/detail/scalar_undef.h"

#include "hydro_reevaluate.h"

/* hydro_avx2.c compiles the patches' dual re-evaluation for AVX2 (GCC on x86-64) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define HYDRO_AVX2 1
#else
#define HYDRO_AVX2 0
#endif

static const double PI = 3.14159265358979323846;


int grit_hydro_rigid_face_count(const grit_model *m, int g) {
  const int L = GRIT_HYDRO_RIGID_LAT, N = GRIT_HYDRO_RIGID_LON;
  switch (m->geom_shape[g].type) {
    case GRIT_GEOM_PLANE: return 1;
    case GRIT_GEOM_BOX: return 6;
    case GRIT_GEOM_SPHERE:
    case GRIT_GEOM_ELLIPSOID: return L * N;
    case GRIT_GEOM_CAPSULE: return (L + 1) * N; /* + the side's band */
    case GRIT_GEOM_CYLINDER: return 3 * N;      /* two cap fans, the side */
    case GRIT_GEOM_CONVEX: return m->geom_hydro_ntet[g]; /* the hull's triangles (hydro_mesh.c) */
    default: return 0;
  }
}

/* A point of the sphere of radius r at polar angle band i (0: the +z pole) and longitude j. */
static void sphere_point(const double r[3], int i, int j, double x[3]) {
  const double th = PI * i / GRIT_HYDRO_RIGID_LAT, ph = 2 * PI * j / GRIT_HYDRO_RIGID_LON;
  x[0] = r[0] * sin(th) * cos(ph);
  x[1] = r[1] * sin(th) * sin(ph);
  x[2] = r[2] * cos(th);
}

/* The unit normal of the face lv[0..2] (counter-clockwise about it). */
static void face_normal(double lv[4][3], double ln[3]) {
  double e1[3], e2[3];
  grit_v3_sub(e1, lv[1], lv[0]);
  grit_v3_sub(e2, lv[2], lv[0]);
  grit_v3_cross(ln, e1, e2);
  grit_v3_normalize(ln);
}

/* A cylinder's face f (radius r, half-length h): the top cap's triangles (centre, rim j, rim j+1), the
 * bottom's reversed, then the side's rectangles (bottom j, bottom j+1, top j+1, top j). */
static int cylinder_face(double r, double h, int f, double ln[3], double lv[4][3]) {
  const int N = GRIT_HYDRO_RIGID_LON, j = f % N, part = f / N;
  const double a0 = 2 * PI * j / N, a1 = 2 * PI * (j + 1) / N, c[2][2] = {{cos(a0), sin(a0)}, {cos(a1), sin(a1)}};
  if (part < 2) {
    const double z = part == 0 ? h : -h;
    const int k0 = part == 0 ? 0 : 1;
    grit_v3_set(lv[0], 0, 0, z);
    grit_v3_set(lv[1], r * c[k0][0], r * c[k0][1], z);
    grit_v3_set(lv[2], r * c[1 - k0][0], r * c[1 - k0][1], z);
    grit_v3_set(ln, 0, 0, part == 0 ? 1.0 : -1.0);
    return 3;
  }
  grit_v3_set(lv[0], r * c[0][0], r * c[0][1], -h);
  grit_v3_set(lv[1], r * c[1][0], r * c[1][1], -h);
  grit_v3_set(lv[2], r * c[1][0], r * c[1][1], h);
  grit_v3_set(lv[3], r * c[0][0], r * c[0][1], h);
  face_normal(lv, ln);
  return 4;
}

int grit_hydro_rigid_face_local(const grit_model *m, int g, int f, double ln[3], double lv[4][3]) {
  const grit_shape *sh = &m->geom_shape[g];
  if (sh->type == GRIT_GEOM_CYLINDER) return cylinder_face(sh->size[0], sh->size[1], f, ln, lv);
  if (sh->type == GRIT_GEOM_CONVEX) { /* the surface triangle of the hull's tetrahedron f */
    const double *t = hydro_tet_at(m, g, f);
    for (int k = 0; k < 3; ++k) grit_v3_copy(lv[k], t + 3 * (k + 1));
    face_normal(lv, ln);
    return 3;
  }
  if (sh->type == GRIT_GEOM_PLANE) {
    ln[0] = ln[1] = 0.0, ln[2] = 1.0;
    return 0;
  }
  if (sh->type == GRIT_GEOM_BOX) { /* face f: axis f / 2, side + when f is odd */
    const int ax = f / 2, u = (ax + 1) % 3, v = (ax + 2) % 3;
    const double sg = f % 2 ? 1.0 : -1.0, cu[4] = {-1, 1, 1, -1}, cv[4] = {-1, -1, 1, 1};
    for (int k = 0; k < 4; ++k) { /* counter-clockwise about +axis; reversed on the - side */
      const int kk = sg > 0 ? k : 3 - k;
      lv[k][ax] = sg * sh->size[ax];
      lv[k][u] = cu[kk] * sh->size[u];
      lv[k][v] = cv[kk] * sh->size[v];
    }
    ln[0] = ln[1] = ln[2] = 0.0;
    ln[ax] = sg;
    return 4;
  }
  /* the sphere's band i, longitude j: (i, j), (i+1, j), (i+1, j+1), (i, j+1), counter-clockwise seen
   * from outside; at a pole two of them coincide and the face is a triangle. A capsule (radius size[0],
   * half-length size[1] along z): the upper bands raised by the half-length, the lower ones lowered,
   * and its last LON faces the side between the two equators. */
  const int L = GRIT_HYDRO_RIGID_LAT, capsule = sh->type == GRIT_GEOM_CAPSULE;
  const double rad[3] = {sh->size[0], sh->size[0], sh->size[0]};
  const double *r = sh->type == GRIT_GEOM_ELLIPSOID ? sh->size : rad;
  const int i = f / GRIT_HYDRO_RIGID_LON, j = f % GRIT_HYDRO_RIGID_LON, jj[4] = {j, j, j + 1, j + 1};
  if (i == L) { /* the capsule's side */
    const double zz[4] = {1, -1, -1, 1};
    for (int k = 0; k < 4; ++k) {
      sphere_point(r, L / 2, jj[k], lv[k]);
      lv[k][2] = zz[k] * sh->size[1];
    }
  }
  const int ii[4] = {i, i + 1, i + 1, i};
  int n = i == L ? 4 : 0;
  for (int k = 0; k < 4 && i < L; ++k) {
    const int pole = ii[k] == 0 || ii[k] == GRIT_HYDRO_RIGID_LAT;
    if (pole && k > 0 && (ii[k] == ii[k - 1] || (k == 3 && ii[3] == ii[0]))) continue; /* the pole again */
    sphere_point(r, ii[k], jj[k], lv[n]);
    if (capsule) lv[n][2] += i < L / 2 ? sh->size[1] : -sh->size[1];
    n++;
  }
  face_normal(lv, ln);
  return n;
}

int grit_hydro_pair(const grit_model *m, int *ga, int *gb) {
  const int ca = m->geom_hydro[*ga] > 0, cb = m->geom_hydro[*gb] > 0;
  if (ca && cb) return 1;
  if (!ca && !cb) return 0;
  if (ca) {
    const int t = *ga;
    *ga = *gb;
    *gb = t;
  }
  return grit_hydro_rigid_face_count(m, *ga) > 0;
}

int grit_hydro_capacity(const grit_model *m) {
  int nplane = 0, nother = 0, nface = 0, ntet = 0, ncompliant = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_hydro[g] > 0) ntet += m->geom_hydro_ntet[g], ncompliant++;
    else if (m->geom_shape[g].type == GRIT_GEOM_PLANE) nplane++;
    else if (grit_hydro_rigid_face_count(m, g) > 0) nother++, nface += grit_hydro_rigid_face_count(m, g);
  }
  if (ntet == 0) return 0;
  /* a rigid partner's faces smaller than the tetrahedra (a fine mesh) are each cut by a few of them;
   * compliant pairs: a tetrahedron crossing the equal-pressure surface meets a few of the partner's */
  return ntet * (nplane + 2 * nother) + GRIT_HYDRO_PAIR_CAPACITY * nface +
         (ncompliant > 1 ? GRIT_HYDRO_PAIR_CAPACITY * ntet : 0);
}

/* Appends the patch p of tetrahedron t against face f of the rigid geometry gr (compliant gs). */
static grit_status push_patch(const grit_model *m, int gr, int gs, int t, int f, const grit_hydro_patch *p,
                              grit_contact_candidate *out, int cap, int *n) {
  if (*n >= cap) return GRIT_ERR_CAPACITY;
  grit_contact_candidate *q = &out[(*n)++];
  memset(q, 0, sizeof *q);
  q->geom[0] = gr;
  q->geom[1] = gs;
  q->body[0] = m->geom_body[gr];
  q->body[1] = m->geom_body[gs];
  q->pt.phi = p->phi;
  for (int i = 0; i < 3; ++i) {
    q->pt.n[i] = p->n[i];
    q->pt.pa[i] = p->c[i];
    q->pt.pb[i] = p->c[i];
  }
  q->k_patch = p->k;
  q->patch_tet = t;
  q->patch_face = f;
  q->patch_area = p->area;
  return GRIT_OK;
}

/* The face (fo, fn, fv[nfv]) in the compliant shape's frame (ps, Rs): lo, ln, and the bounds of its
 * vertices (flo, fhi). Returns 0 when the face's bounds miss the shape's (the face cannot cut it). */
static int face_local(const grit_shape *sh, const double ps[3], const double Rs[9], const double fo[3],
                      const double fn[3], const double fv[4][3], int nfv, double lo[3], double ln[3], double flo[3],
                      double fhi[3]) {
  double d[3], x[3], slo[3], shi[3];
  grit_v3_sub(d, fo, ps);
  grit_m3_tmulv(lo, Rs, d);
  grit_m3_tmulv(ln, Rs, fn);
  grit_shape_local_aabb(sh, slo, shi);
  double rad2 = 0.0; /* a ball about the shape's origin holding it */
  for (int i = 0; i < 3; ++i) rad2 += fmax(slo[i] * slo[i], shi[i] * shi[i]);
  const double off = grit_v3_dot(ln, lo); /* the origin's distance behind the face's plane */
  if (off * off > rad2) return 0;          /* the shape lies wholly on one side of the plane */
  if (nfv == 0) return 1;
  for (int i = 0; i < 3; ++i) flo[i] = INFINITY, fhi[i] = -INFINITY;
  for (int k = 0; k < nfv; ++k) {
    grit_v3_sub(d, fv[k], ps);
    grit_m3_tmulv(x, Rs, d);
    for (int i = 0; i < 3; ++i) flo[i] = fmin(flo[i], x[i]), fhi[i] = fmax(fhi[i], x[i]);
  }
  for (int i = 0; i < 3; ++i)
    if (flo[i] > shi[i] || fhi[i] < slo[i]) return 0;
  return 1;
}

/* Whether the tetrahedron (local) may cut the face: vertices on both sides of its plane and, for a
 * bounded face, bounds that overlap the face's. A cheap test before the patch itself. */
static int tet_may_cut(const double *tet, const double lo[3], const double ln[3], int bounded, const double flo[3],
                       const double fhi[3]) {
  int below = 0;
  for (int j = 0; j < 4; ++j) {
    double d[3];
    grit_v3_sub(d, tet + 3 * j, lo);
    below += grit_v3_dot(ln, d) < 0;
  }
  if (below == 0 || below == 4) return 0;
  if (bounded) /* the bounds stored with the mesh: the vertices' least and greatest coordinates */
    for (int i = 0; i < 3; ++i)
      if (tet[15 + i] > fhi[i] + 1e-12 || tet[18 + i] < flo[i] - 1e-12) return 0;
  return 1;
}

/* Whether the tetrahedron's pressure falls towards the face or runs along it, in the compliant shape's
 * frame: its rate along the local normal ln (R^T fn) at most half the gradient floor of its steepest
 * rate. grit_hydro_tet_patch skips such a tetrahedron's polygon: the rate it tests, fn . (R grad e), is
 * the same number but for the round-off of R^T fn, about 1e-15 of |grad e| against a margin of 5e-4 of
 * it. So it is dropped before its vertices: a coin's top cap and rim, 456 of its 608 tetrahedra. */
static int tet_flat(const double *tet, const double ln[3]) {
  const double gl = grit_v3_dot(ln, tet + 12), half = 0.5 * GRIT_HYDRO_GRADIENT_FLOOR;
  return gl <= 0.0 || gl * gl <= half * half * grit_v3_dot(tet + 12, tet + 12);
}

/* The lesser and greater of two finite numbers (bounds, compared only: minsd/maxsd rather than libm's fmin and
 * fmax calls, which differ only on NaNs and the order of two zeros). */
static inline double lesser(double a, double b) { return b < a ? b : a; }
static inline double greater(double a, double b) { return b > a ? b : a; }

/* The bounds of tetrahedron t (local to its geometry at (p, R)) in the frame (q, Q): lo, hi. */
static void tet_bounds_in(const double *t, const double p[3], const double R[9], const double q[3], const double Q[9],
                          double x[4][3], double lo[3], double hi[3]) {
  for (int i = 0; i < 3; ++i) lo[i] = INFINITY, hi[i] = -INFINITY;
  for (int j = 0; j < 4; ++j) {
    double w[3], d[3];
    grit_m3_mulv(w, R, t + 3 * j);
    grit_v3_add(w, w, p);
    grit_v3_sub(d, w, q);
    grit_m3_tmulv(x[j], Q, d);
    for (int i = 0; i < 3; ++i) lo[i] = lesser(lo[i], x[j][i]), hi[i] = greater(hi[i], x[j][i]);
  }
}

/* Whether the equal-pressure plane of a tetrahedron with vertices x[4] (in b's frame) and pressures pa[4]
 * there can cut it against tetrahedron b (modulus Eb; its field linear, extended beyond b): p_a - p_b
 * changes sign over the vertices, and b's pressure is positive at one of them (else the tetrahedron lies
 * beyond b's surface facet). The same sign test as the patch's own section, before its world transforms. */
static int pressures_cross(const double *b, double Eb, const double x[4][3], const double pa[4]) {
  int pos = 0, neg = 0, reach = 0;
  for (int j = 0; j < 4; ++j) {
    double d[3];
    grit_v3_sub(d, x[j], b);
    const double pb = Eb * (1.0 + grit_v3_dot(b + 12, d));
    reach |= pb > 0;
    pos |= pa[j] - pb >= 0;
    neg |= pa[j] - pb < 0;
  }
  if (!(reach && pos && neg)) return 0;
  for (int k = 0; k < 4; ++k) { /* a face plane of b with all four points beyond it separates them */
    const double *o = b + 3 * ((k + 1) % 4), *u = b + 3 * ((k + 2) % 4), *w = b + 3 * ((k + 3) % 4);
    double e1[3], e2[3], nrm[3], d[3];
    grit_v3_sub(e1, u, o);
    grit_v3_sub(e2, w, o);
    grit_v3_cross(nrm, e1, e2);
    grit_v3_sub(d, b + 3 * k, o);
    const double in = grit_v3_dot(nrm, d); /* vertex k's side is inside */
    int out = 1;
    for (int j = 0; j < 4 && out; ++j) {
      grit_v3_sub(d, x[j], o);
      out = grit_v3_dot(nrm, d) * in < 0;
    }
    if (out) return 0;
  }
  return 1;
}

static int boxes_overlap(const double alo[3], const double ahi[3], const double blo[3], const double bhi[3]) {
  for (int i = 0; i < 3; ++i)
    if (alo[i] > bhi[i] || blo[i] > ahi[i]) return 0;
  return 1;
}

/* The box, in the frame (q, Q), of the local box of shape sh at (p, R) (its eight corners). */
static void shape_box_in(const grit_shape *sh, const double p[3], const double R[9], const double q[3],
                         const double Q[9], double lo[3], double hi[3]) {
  double llo[3], lhi[3];
  grit_shape_local_aabb(sh, llo, lhi);
  for (int i = 0; i < 3; ++i) lo[i] = INFINITY, hi[i] = -INFINITY;
  for (int k = 0; k < 8; ++k) {
    const double c[3] = {k & 1 ? lhi[0] : llo[0], k & 2 ? lhi[1] : llo[1], k & 4 ? lhi[2] : llo[2]};
    double w[3], d[3], x[3];
    grit_m3_mulv(w, R, c);
    grit_v3_add(w, w, p);
    grit_v3_sub(d, w, q);
    grit_m3_tmulv(x, Q, d);
    for (int i = 0; i < 3; ++i) lo[i] = fmin(lo[i], x[i]), hi[i] = fmax(hi[i], x[i]);
  }
}

/* gb's tetrahedra are taken in chunks of this many (their indices on the stack: no allocation). */
enum { PAIR_CHUNK = 1024 };

/* The patches of ga's tetrahedron ta against gb's tetrahedra keep[0..nk). */
static grit_status tet_against(const grit_model *m, int ga, int gb, int ta, const double pa[3], const double Ra[9],
                               const double pb[3], const double Rb[9], const double x[4][3], const double lo[3],
                               const double hi[3], const int *keep, int nk, grit_contact_candidate *out, int cap,
                               int *n) {
  const double *a = hydro_tet_at(m, ga, ta);
  double pv[4];
  for (int j = 0; j < 4; ++j) { /* a's pressure at its vertices */
    double d[3];
    grit_v3_sub(d, a + 3 * j, a);
    pv[j] = m->geom_hydro[ga] * (1.0 + grit_v3_dot(a + 12, d));
  }
  for (int k = 0; k < nk; ++k) {
    const double *b = hydro_tet_at(m, gb, keep[k]);
    if (!boxes_overlap(lo, hi, b + 15, b + 18) || !pressures_cross(b, m->geom_hydro[gb], x, pv))
      continue;
    grit_hydro_patch p;
    if (!grit_hydro_tet_pair_patch(a, m->geom_hydro[ga], pa, Ra, b, m->geom_hydro[gb], pb, Rb, &p)) continue;
    const grit_status s = push_patch(m, ga, gb, ta, keep[k], &p, out, cap, n);
    if (s != GRIT_OK) return s;
  }
  return GRIT_OK;
}

/* Two compliant geometries ga at (pa, Ra) and gb at (pb, Rb): a broad phase over the tetrahedra by
 * bounding boxes in gb's frame (gb's tetrahedra whose boxes, stored with the mesh, meet ga's shape box;
 * ga's tetrahedra whose boxes meet gb's shape box; then pairs of boxes, and the pressures' sign test),
 * then the equal-pressure polygon of each remaining pair. */
static grit_status pair_patches(const grit_model *m, int ga, int gb, const double pa[3], const double Ra[9],
                                const double pb[3], const double Rb[9], grit_contact_candidate *out, int cap,
                                int *n) {
  double slo[3], shi[3], alo[3], ahi[3];
  grit_shape_local_aabb(&m->geom_shape[gb], slo, shi);
  shape_box_in(&m->geom_shape[ga], pa, Ra, pb, Rb, alo, ahi);
  int keep[PAIR_CHUNK];
  const int ntb = m->geom_hydro_ntet[gb];
  for (int c0 = 0; c0 < ntb; c0 += PAIR_CHUNK) {
    int nk = 0;
    for (int tb = c0; tb < ntb && tb < c0 + PAIR_CHUNK; ++tb) {
      const double *b = hydro_tet_at(m, gb, tb);
      if (boxes_overlap(alo, ahi, b + 15, b + 18)) keep[nk++] = tb;
    }
    for (int ta = 0; ta < m->geom_hydro_ntet[ga] && nk > 0; ++ta) {
      const double *a = hydro_tet_at(m, ga, ta);
      double lo[3], hi[3], x[4][3];
      tet_bounds_in(a, pa, Ra, pb, Rb, x, lo, hi);
      if (!boxes_overlap(lo, hi, slo, shi)) continue;
      const grit_status s = tet_against(m, ga, gb, ta, pa, Ra, pb, Rb, (const double(*)[3])x, lo, hi, keep, nk, out,
                                        cap, n); /* a's vertices in b's frame, as just computed */
      if (s != GRIT_OK) return s;
    }
  }
  return GRIT_OK;
}

grit_status grit_hydro_patches(const grit_model *m, int gr, int gs, const double pr[3], const double Rr[9],
                               const double ps[3], const double Rs[9], grit_contact_candidate *out, int cap, int *n) {
  if (m->geom_hydro[gr] > 0) return pair_patches(m, gr, gs, pr, Rr, ps, Rs, out, cap, n);
  const int nf = grit_hydro_rigid_face_count(m, gr);
  for (int f = 0; f < nf; ++f) {
    double fo[3], fn[3], fv[4][3], lo[3], ln[3], flo[3] = {0, 0, 0}, fhi[3] = {0, 0, 0};
    const int nfv = grit_hydro_rigid_face(m, gr, f, pr, Rr, fo, fn, fv);
    if (!face_local(&m->geom_shape[gs], ps, Rs, fo, fn, (const double(*)[3])fv, nfv, lo, ln, flo, fhi)) continue;
    for (int t = 0; t < m->geom_hydro_ntet[gs]; ++t) {
      const double *tet = hydro_tet_at(m, gs, t);
      if (tet_flat(tet, ln) || !tet_may_cut(tet, lo, ln, nfv > 0, flo, fhi)) continue;
      grit_hydro_patch p;
      if (!grit_hydro_tet_patch(tet, m->geom_hydro[gs], ps, Rs, fo, fn, (const double *)fv, nfv, &p)) continue;
      const grit_status s = push_patch(m, gr, gs, t, f, &p, out, cap, n);
      if (s != GRIT_OK) return s;
    }
  }
  return GRIT_OK;
}

void grit_hydro_moduli_dual(const grit_model *m, grit_dual *moduli) {
  for (int g = 0; g < m->ngeom; ++g) moduli[g] = grit_dual_const(m->geom_hydro[g]);
}

#if HYDRO_AVX2
void grit_hydro_patch_reevaluate_dual_avx2(const grit_model *m, const grit_dual *moduli,
                                           const grit_contact_candidate *c, const grit_dual pa[3],
                                           const grit_dual Ra[9], const grit_dual pb[3], const grit_dual Rb[9],
                                           grit_contact_geom_dual *geo, grit_dual *k); /* hydro_avx2.c */
#endif

void grit_hydro_patch_reevaluate_dual(const grit_model *m, const grit_dual *moduli, const grit_contact_candidate *c,
                                      const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3],
                                      const grit_dual Rb[9], grit_contact_geom_dual *geo, grit_dual *k) {
#if HYDRO_AVX2
  if (__builtin_cpu_supports("avx2")) { /* the same source on four partials at a time: the same bits */
    grit_hydro_patch_reevaluate_dual_avx2(m, moduli, c, pa, Ra, pb, Rb, geo, k);
    return;
  }
#endif
  hydro_reevaluate(m, moduli, c, pa, Ra, pb, Rb, geo, k);
}
