/* SPDX-License-Identifier: Apache-2.0 */
/* geometry.c — collision shapes: construction, validation, bounding boxes, support functions. */
#include "geometry_internal.h"
#include "hull_graph.h"
#include "status_internal.h"

#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

grit_shape grit_shape_make(grit_geom_type type, double s0, double s1, double s2) {
  grit_shape s;
  memset(&s, 0, sizeof s);
  s.type = type;
  s.size[0] = s0;
  s.size[1] = s1;
  s.size[2] = s2;
  return s;
}

grit_shape grit_shape_convex(const double *vertices, int nvert) {
  grit_shape s = grit_shape_make(GRIT_GEOM_CONVEX, 0.0, 0.0, 0.0);
  s.vertices = vertices;
  s.nvert = nvert;
  return s;
}

grit_shape grit_shape_hfield(const double *grid, int nrow, int ncol, double sx, double sy, double base) {
  grit_shape s = grit_shape_make(GRIT_GEOM_HFIELD, sx, sy, base);
  s.vertices = grid;
  s.nvert = nrow >= 2 && ncol >= 2 ? nrow * ncol : 0;
  s.ncol = ncol;
  for (int i = 0; grid && i < s.nvert; ++i) s.top = fmax(s.top, grid[3 * i + 2]); /* once: bounding boxes are O(1) */
  return s;
}

/* ------------------------------------------------------------------------------------ validation */

/* A rejected shape: the one message formatter (status_internal.h) with GRIT_ERR_INVALID_ARGUMENT. */
#define invalid(msg, ...) grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, __VA_ARGS__)

/* Number of size entries each type uses (and requires positive and finite). */
static int sizes_used(grit_geom_type t) {
  switch (t) {
  case GRIT_GEOM_SPHERE: return 1;
  case GRIT_GEOM_CAPSULE:
  case GRIT_GEOM_CYLINDER: return 2;
  case GRIT_GEOM_BOX:
  case GRIT_GEOM_ELLIPSOID: return 3;
  default: return 0;
  }
}

static double dist2(const double *a, const double *b) {
  double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
  return d0 * d0 + d1 * d1 + d2 * d2;
}

/* Vertices must span a volume: the farthest point from v0, then from the line, then from the plane,
 * each farther than 1e-9 of the extent (far above round-off, far below any meaningful feature). */
static grit_status validate_convex(const grit_shape *s, char *msg) {
  if (!s->vertices) return invalid(msg, "convex shape: vertices is NULL");
  if (s->nvert < 4 || s->nvert > GRIT_CONVEX_MAX_VERTICES)
    return invalid(msg, "convex shape: %d vertices, need 4 to %d", s->nvert, GRIT_CONVEX_MAX_VERTICES);
  const double *v = s->vertices;
  for (int i = 0; i < 3 * s->nvert; ++i)
    if (!isfinite(v[i])) return invalid(msg, "convex shape: vertex %d is not finite", i / 3);
  int i1 = 0;
  double best = 0.0;
  for (int i = 1; i < s->nvert; ++i)
    if (dist2(v + 3 * i, v) > best) best = dist2(v + 3 * i, v), i1 = i;
  const double extent = sqrt(best), tol = 1e-9 * extent;
  if (extent == 0.0) return invalid(msg, "convex shape: all vertices coincide");
  double e[3], nrm[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) e[k] = (v[3 * i1 + k] - v[k]) / extent;
  double far2 = 0.0;
  for (int i = 1; i < s->nvert; ++i) { /* farthest from the line v0 + t e */
    double d[3], c[3];
    for (int k = 0; k < 3; ++k) d[k] = v[3 * i + k] - v[k];
    c[0] = e[1] * d[2] - e[2] * d[1];
    c[1] = e[2] * d[0] - e[0] * d[2];
    c[2] = e[0] * d[1] - e[1] * d[0];
    double c2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    if (c2 > far2) far2 = c2, memcpy(nrm, c, sizeof c);
  }
  if (sqrt(far2) <= tol) return invalid(msg, "convex shape: all vertices lie on one line");
  const double nn = sqrt(far2);
  double off = 0.0;
  for (int i = 1; i < s->nvert; ++i) {
    double h = 0.0;
    for (int k = 0; k < 3; ++k) h += nrm[k] / nn * (v[3 * i + k] - v[k]);
    if (fabs(h) > off) off = fabs(h);
  }
  if (off <= tol) return invalid(msg, "convex shape: all vertices lie in one plane");
  return GRIT_OK;
}

/* A height field: positive sizes, a grid of at least 2 x 2 points placed as grit_shape_hfield says
 * (to 1e-9 of the extent), elevations finite and >= 0, top their maximum. */
static grit_status validate_hfield(const grit_shape *s, char msg[GRIT_MESSAGE_SIZE]) {
  for (int i = 0; i < 3; ++i)
    if (!isfinite(s->size[i]) || !(s->size[i] > 0.0))
      return invalid(msg, "height field: size[%d] = %g must be positive and finite", i, s->size[i]);
  if (!s->vertices) return invalid(msg, "height field: grid is NULL");
  if (s->ncol < 2 || s->nvert < 2 * s->ncol || s->nvert % s->ncol)
    return invalid(msg, "height field: %d points in %d columns: need a grid of at least 2 x 2", s->nvert, s->ncol);
  const int nrow = s->nvert / s->ncol;
  const double tol = 1e-9 * (s->size[0] + s->size[1]);
  double top = 0.0;
  for (int r = 0; r < nrow; ++r)
    for (int c = 0; c < s->ncol; ++c) {
      const double *v = s->vertices + 3 * (r * s->ncol + c);
      const double x = s->size[0] * (2.0 * c / (s->ncol - 1) - 1.0), y = s->size[1] * (2.0 * r / (nrow - 1) - 1.0);
      if (!(fabs(v[0] - x) <= tol) || !(fabs(v[1] - y) <= tol))
        return invalid(msg, "height field: point (%d, %d) is not on the grid", r, c);
      if (!isfinite(v[2]) || v[2] < 0.0) return invalid(msg, "height field: elevation (%d, %d) = %g", r, c, v[2]);
      top = fmax(top, v[2]);
    }
  if (top != s->top) return invalid(msg, "height field: top = %g is not the highest elevation %g", s->top, top);
  return GRIT_OK;
}

grit_status grit_shape_validate(const grit_shape *s, char msg[GRIT_MESSAGE_SIZE]) {
  static const char *const names[] = {"radius", "half-length", "third size"};
  if (!s) return invalid(msg, "shape is NULL");
  if ((int)s->type < 0 || s->type >= GRIT_GEOM_COUNT) return invalid(msg, "unknown shape type %d", (int)s->type);
  if (s->type == GRIT_GEOM_CONVEX) return validate_convex(s, msg);
  if (s->type == GRIT_GEOM_HFIELD) return validate_hfield(s, msg);
  for (int i = 0; i < sizes_used(s->type); ++i)
    if (!isfinite(s->size[i]) || !(s->size[i] > 0.0)) {
      const char *what = (s->type == GRIT_GEOM_BOX || s->type == GRIT_GEOM_ELLIPSOID) ? "size" : names[i];
      return invalid(msg, "shape type %d: %s (size[%d] = %g) must be positive and finite", (int)s->type, what, i,
                     s->size[i]);
    }
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------------- supports */

static double sgn(double x) { return x < 0.0 ? -1.0 : 1.0; } /* sign with sgn(0) = +1: deterministic ties */

/* The first vertex of greatest d.v. Four lanes (vertex i in lane i mod 4) keep independent chains of
 * comparisons (the sequential scan is one long dependency chain); each lane keeps its first maximum and
 * the lanes merge by value, ties to the lower index: the same vertex as the sequential scan, whose
 * strict > keeps the lowest index among equal values (for finite d; vertices are validated finite). */
/* Hulls of fewer vertices scan in scalar lanes: the vector loop's set-up and reduction cost more. */
#define SCAN_AVX2_MIN 8

/* The lanes' vertices i + j (j < 4) of a block, i a multiple of 4: lane j keeps the first of its vertices
 * (j, j + 4, ...) of greatest d.v, as the scalar loop below. */
static void scan_block(const double *v, const double d[3], int i, double bv[4], int best[4]) {
  for (int j = 0; j < 4; ++j) {
    const double *w = v + 3 * (i + j);
    const double h = d[0] * w[0] + d[1] * w[1] + d[2] * w[2];
    if (h > bv[j]) bv[j] = h, best[j] = i + j;
  }
}

/* The same lanes four at a time: a block's 12 coordinates split into x, y, z rows by two lane
 * permutations each, d.v as (d0 x + d1 y) + d2 z (the scalar expression: no fused multiply-add), and the
 * strict comparison of the scalar loop (a NaN never wins, as there). Returns the first unscanned index. */
static __attribute__((target("avx2"))) __m256d dots_avx2(const double *w, __m256d d0, __m256d d1, __m256d d2) {
  const __m256d a = _mm256_loadu_pd(w), b = _mm256_loadu_pd(w + 4), c = _mm256_loadu_pd(w + 8);
  const __m256d u = _mm256_permute2f128_pd(a, b, 0x30); /* x0 y0 x2 y2 */
  const __m256d q = _mm256_permute2f128_pd(a, c, 0x21); /* z0 x1 z2 x3 */
  const __m256d t = _mm256_permute2f128_pd(b, c, 0x30); /* y1 z1 y3 z3 */
  const __m256d x = _mm256_blend_pd(u, q, 0xA), y = _mm256_shuffle_pd(u, t, 0x5), z = _mm256_blend_pd(q, t, 0xA);
  return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d0, x), _mm256_mul_pd(d1, y)), _mm256_mul_pd(d2, z));
}

/* The same lanes four at a time, from the first block (n >= 8): a block's 12 coordinates split into x,
 * y, z rows by two lane permutations each, d.v as (d0 x + d1 y) + d2 z (the scalar expression: no fused
 * multiply-add), and the strict comparison of the scalar loop (a NaN never wins, as there). Returns the
 * first unscanned index. */
static __attribute__((target("avx2"))) int scan_avx2(const double *v, const double d[3], int n, double bv[4],
                                                     int best[4]) {
  const __m256d d0 = _mm256_set1_pd(d[0]), d1 = _mm256_set1_pd(d[1]), d2 = _mm256_set1_pd(d[2]);
  const __m256d four = _mm256_set1_pd(4.0);
  __m256d ib = _mm256_set_pd(3.0, 2.0, 1.0, 0.0), idx = _mm256_add_pd(ib, four), hb = dots_avx2(v, d0, d1, d2);
  int i = 4;
  for (; i + 4 <= n; i += 4, idx = _mm256_add_pd(idx, four)) {
    const __m256d h = dots_avx2(v + 3 * i, d0, d1, d2), gt = _mm256_cmp_pd(h, hb, _CMP_GT_OQ);
    hb = _mm256_blendv_pd(hb, h, gt);
    ib = _mm256_blendv_pd(ib, idx, gt);
  }
  double bi[4];
  _mm256_storeu_pd(bv, hb);
  _mm256_storeu_pd(bi, ib);
  for (int j = 0; j < 4; ++j) best[j] = (int)bi[j];
  return i;
}

int grit_convex_scan(const grit_shape *s, const double d[3]) {
  return grit_convex_scan_lanes(s, d, s->nvert >= SCAN_AVX2_MIN && __builtin_cpu_supports("avx2"));
}

int grit_convex_scan_lanes(const grit_shape *s, const double d[3], int avx2) {
  const double *v = s->vertices;
  const int n = s->nvert;
  double bv[4];
  int best[4], lanes = n < 4 ? n : 4, i = 4;
  if (avx2 && n >= 8) i = scan_avx2(v, d, n, bv, best);
  else
    for (int j = 0; j < lanes; ++j) bv[j] = d[0] * v[3 * j] + d[1] * v[3 * j + 1] + d[2] * v[3 * j + 2], best[j] = j;
  for (; i + 4 <= n; i += 4) scan_block(v, d, i, bv, best);
  for (int j = 0; i + j < n; ++j) {
    const double *w = v + 3 * (i + j);
    const double h = d[0] * w[0] + d[1] * w[1] + d[2] * w[2];
    if (h > bv[j]) bv[j] = h, best[j] = i + j;
  }
  int b = 0;
  for (int j = 1; j < lanes; ++j)
    if (bv[j] > bv[b] || (bv[j] == bv[b] && best[j] < best[b])) b = j;
  return best[b];
}

/* A hull with a graph (the model's) of GRIT_HULL_SCAN_BELOW vertices or more climbs it: the same vertex. */
static void support_convex(const grit_shape *s, const double d[3], double out[3]) {
  const int i = s->graph && s->nvert >= GRIT_HULL_SCAN_BELOW ? grit_hull_support(s, d, -1) : grit_convex_scan(s, d);
  memcpy(out, s->vertices + 3 * i, 3 * sizeof(double));
}

/* A CONVEX shape's world box in one pass over its vertices: the six supports along +-(row k of R) that
 * grit_shape_world_aabb takes, each the first vertex of greatest (least) d_k.v as support_convex picks
 * it (-d.v is exactly -(d.v)), and the bounds from those vertices by the same expressions as there: the
 * same bits as six scans. */
/* After a box whose climbs would have ended in a scan (a face normal to an axis: a box-like hull near
 * its resting orientation), the next boxes of that hull take the one pass without trying (measured on
 * the 2F-85, whose fingers' hulls sit so: the failed climbs cost more than the pass). */
#define BOX_RETRY 16

/* The box from the six support vertices h[2k] (along row k of R) and h[2k+1] (against it). */
static void box_from(const grit_shape *s, const double p[3], const double R[9], double margin, double lo[3],
                     double hi[3], const int h[6]) {
  for (int k = 0; k < 3; ++k) {
    const double *d = R + 3 * k, *x = s->vertices + 3 * h[2 * k], *y = s->vertices + 3 * h[2 * k + 1];
    const double nd[3] = {-d[0], -d[1], -d[2]};
    hi[k] = p[k] + d[0] * x[0] + d[1] * x[1] + d[2] * x[2] + margin;
    lo[k] = p[k] - (nd[0] * y[0] + nd[1] * y[1] + nd[2] * y[2]) - margin;
  }
}

/* The one pass four vertices a vector (n >= 8): per lane the first vertex of greatest and of least R_k.v
 * (strict comparisons, as the scalar loop), the lanes then merged by value, ties to the lower index: the
 * scalar loop's vertices. The dot products as there, (R_k0 x + R_k1 y) + R_k2 z, no fused multiply-add.
 * Returns the first vertex left to the scalar loop; the lanes' values and indices in hv, iv (k-major). */
static __attribute__((target("avx2"))) int box_pass_avx2(const double *v, int n, const double R[9], double hv[6][4],
                                                         int iv[6][4]) {
  __m256d r0[3], r1[3], r2[3], hb[6], ib[6];
  const __m256d four = _mm256_set1_pd(4.0);
  __m256d idx = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
  for (int k = 0; k < 3; ++k) {
    r0[k] = _mm256_set1_pd(R[3 * k]), r1[k] = _mm256_set1_pd(R[3 * k + 1]), r2[k] = _mm256_set1_pd(R[3 * k + 2]);
    hb[2 * k] = dots_avx2(v, r0[k], r1[k], r2[k]);
    hb[2 * k + 1] = hb[2 * k];
    ib[2 * k] = ib[2 * k + 1] = idx;
  }
  int i = 4;
  for (idx = _mm256_add_pd(idx, four); i + 4 <= n; i += 4, idx = _mm256_add_pd(idx, four))
    for (int k = 0; k < 3; ++k) {
      const __m256d h = dots_avx2(v + 3 * i, r0[k], r1[k], r2[k]);
      const __m256d gt = _mm256_cmp_pd(h, hb[2 * k], _CMP_GT_OQ), lt = _mm256_cmp_pd(h, hb[2 * k + 1], _CMP_LT_OQ);
      hb[2 * k] = _mm256_blendv_pd(hb[2 * k], h, gt), ib[2 * k] = _mm256_blendv_pd(ib[2 * k], idx, gt);
      hb[2 * k + 1] = _mm256_blendv_pd(hb[2 * k + 1], h, lt), ib[2 * k + 1] = _mm256_blendv_pd(ib[2 * k + 1], idx, lt);
    }
  for (int q = 0; q < 6; ++q) {
    double bi[4];
    _mm256_storeu_pd(hv[q], hb[q]);
    _mm256_storeu_pd(bi, ib[q]);
    for (int j = 0; j < 4; ++j) iv[q][j] = (int)bi[j];
  }
  return i;
}

/* The one pass over a CONVEX shape's vertices: the first vertex of greatest and of least R_k.v for each
 * row k (idx[2k], idx[2k+1]), and the box from them. avx2: four vertices a vector (the same vertices). */
static void convex_world_aabb_lanes(const grit_shape *s, const double p[3], const double R[9], double margin,
                                    double lo[3], double hi[3], int idx[6], int avx2) {
  const double *v = s->vertices;
  double hmax[3], hmin[3];
  int i = 1;
  if (avx2 && s->nvert >= SCAN_AVX2_MIN) {
    double hv[6][4];
    int iv[6][4];
    i = box_pass_avx2(v, s->nvert, R, hv, iv);
    for (int q = 0; q < 6; ++q) { /* the lanes merged: greatest (least), ties to the lower index */
      int b = 0;
      for (int j = 1; j < 4; ++j) {
        const int better = q % 2 ? hv[q][j] < hv[q][b] : hv[q][j] > hv[q][b];
        if (better || (hv[q][j] == hv[q][b] && iv[q][j] < iv[q][b])) b = j;
      }
      (q % 2 ? hmin : hmax)[q / 2] = hv[q][b];
      idx[q] = iv[q][b];
    }
  } else
    for (int k = 0; k < 3; ++k) {
      hmax[k] = hmin[k] = R[3 * k] * v[0] + R[3 * k + 1] * v[1] + R[3 * k + 2] * v[2];
      idx[2 * k] = idx[2 * k + 1] = 0;
    }
  for (; i < s->nvert; ++i) {
    const double *w = v + 3 * i;
    for (int k = 0; k < 3; ++k) {
      const double h = R[3 * k] * w[0] + R[3 * k + 1] * w[1] + R[3 * k + 2] * w[2];
      if (h > hmax[k]) hmax[k] = h, idx[2 * k] = i;
      if (h < hmin[k]) hmin[k] = h, idx[2 * k + 1] = i;
    }
  }
  box_from(s, p, R, margin, lo, hi, idx);
}

static void convex_world_aabb(const grit_shape *s, const double p[3], const double R[9], double margin, double lo[3],
                              double hi[3], int idx[6]) {
  convex_world_aabb_lanes(s, p, R, margin, lo, hi, idx, __builtin_cpu_supports("avx2"));
}

void grit_convex_world_aabb_path(const grit_shape *s, const double p[3], const double R[9], double margin,
                                 double lo[3], double hi[3], int avx2) {
  int idx[6];
  convex_world_aabb_lanes(s, p, R, margin, lo, hi, idx, avx2);
}

void grit_shape_world_aabb_hint(const grit_shape *s, const double p[3], const double R[9], double margin, double lo[3],
                                double hi[3], int hint[7], int same_R) {
  if (s->type != GRIT_GEOM_CONVEX) {
    grit_shape_world_aabb(s, p, R, margin, lo, hi);
    return;
  }
  if (same_R && hint[0] >= 0) { /* the supports depend on R alone: the last box's vertices */
    box_from(s, p, R, margin, lo, hi, hint);
    return;
  }
  int h[6], k = 0;
  if (hint[6] > 0) hint[6]--; /* the climbs failed lately: the one pass for a while */
  else
    for (; s->graph && k < 6; ++k) { /* the six supports of the one pass, climbed: the same vertices */
      const double *r = R + 3 * (k / 2), d[3] = {k % 2 ? -r[0] : r[0], k % 2 ? -r[1] : r[1], k % 2 ? -r[2] : r[2]};
      if ((h[k] = grit_hull_support_wide(s, d, hint[k])) < 0) { /* a large face normal to an axis */
        hint[6] = BOX_RETRY;
        break;
      }
    }
  if (k < 6) convex_world_aabb(s, p, R, margin, lo, hi, hint);
  else {
    memcpy(hint, h, sizeof h);
    box_from(s, p, R, margin, lo, hi, h);
  }
}

/* A climb costs about what the one pass does over this many vertices (measured: ~250 instructions against
 * ~12 a vertex), so that a pass over a small hull costs less than the climbs of the rows that turned. */
#define CLIMB_VERTS 32

/* The box with the rows of R that kept their values (geometry_internal.h): their vertices are the last
 * box's (a support depends on its direction alone), the other directions climbed from their last
 * vertices, a climb that would end in a scan (a face normal to d) scanning that direction alone. With no
 * row kept, or on a hull whose one pass costs less than those climbs (a rounded cube of 24 vertices
 * turning about an axis: +0.3 % measured), grit_shape_world_aabb_hint (after a failed climb its one pass
 * for a while). Every way gives the scan's vertex for each direction: the same box. */
void grit_shape_world_aabb_rows(const grit_shape *s, const double p[3], const double R[9], double margin,
                                double lo[3], double hi[3], int hint[7], int same_rows) {
  const int nclimb = 2 * (3 - (same_rows & 1) - (same_rows >> 1 & 1) - (same_rows >> 2 & 1));
  if (s->type != GRIT_GEOM_CONVEX || !s->graph || !same_rows || hint[0] < 0 ||
      s->nvert <= CLIMB_VERTS * nclimb) {
    grit_shape_world_aabb_hint(s, p, R, margin, lo, hi, hint, same_rows == 7);
    return;
  }
  int h[6];
  if (hint[6] > 0) hint[6]--;
  for (int k = 0; k < 6; ++k) {
    if (same_rows >> (k / 2) & 1) {
      h[k] = hint[k];
      continue;
    }
    const double *r = R + 3 * (k / 2), d[3] = {k % 2 ? -r[0] : r[0], k % 2 ? -r[1] : r[1], k % 2 ? -r[2] : r[2]};
    if ((h[k] = grit_hull_support_wide(s, d, hint[k])) < 0) h[k] = grit_convex_scan(s, d), hint[6] = BOX_RETRY;
  }
  memcpy(hint, h, sizeof h);
  box_from(s, p, R, margin, lo, hi, h);
}

void grit_shape_core_support(const grit_shape *s, const double d[3], double out[3]) {
  const double *z = s->size;
  switch (s->type) {
  case GRIT_GEOM_SPHERE:
    out[0] = out[1] = out[2] = 0.0;
    return;
  case GRIT_GEOM_CAPSULE:
    out[0] = out[1] = 0.0;
    out[2] = sgn(d[2]) * z[1];
    return;
  case GRIT_GEOM_BOX:
    for (int k = 0; k < 3; ++k) out[k] = sgn(d[k]) * z[k];
    return;
  case GRIT_GEOM_CYLINDER: {
    double rho = hypot(d[0], d[1]);
    out[0] = rho > 0.0 ? z[0] * d[0] / rho : 0.0; /* along the axis: the centre of the cap */
    out[1] = rho > 0.0 ? z[0] * d[1] / rho : 0.0;
    out[2] = sgn(d[2]) * z[1];
    return;
  }
  case GRIT_GEOM_ELLIPSOID: { /* s = D^2 d / |D d|, D = diag(semi-axes) */
    double e[3] = {z[0] * d[0], z[1] * d[1], z[2] * d[2]};
    double n = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    for (int k = 0; k < 3; ++k) out[k] = n > 0.0 ? z[k] * e[k] / n : 0.0;
    return;
  }
  case GRIT_GEOM_CONVEX:
    support_convex(s, d, out);
    return;
  default:
    out[0] = out[1] = out[2] = 0.0;
    return;
  }
}

void grit_shape_core_support_hint(const grit_shape *s, const double d[3], double out[3], int *hint) {
  if (s->type != GRIT_GEOM_CONVEX || !s->graph || s->nvert < GRIT_HULL_SCAN_BELOW) {
    grit_shape_core_support(s, d, out);
    return;
  }
  *hint = grit_hull_support(s, d, *hint);
  memcpy(out, s->vertices + 3 * *hint, 3 * sizeof(double));
}

double grit_shape_core_radius(const grit_shape *s) {
  return (s->type == GRIT_GEOM_SPHERE || s->type == GRIT_GEOM_CAPSULE) ? s->size[0] : 0.0;
}

int grit_shape_core_dim(const grit_shape *s) {
  return s->type == GRIT_GEOM_SPHERE ? 0 : s->type == GRIT_GEOM_CAPSULE ? 1 : 3;
}

grit_status grit_shape_support(const grit_shape *s, const double d[3], double out[3]) {
  if (!s || !d || !out || s->type == GRIT_GEOM_PLANE || s->type == GRIT_GEOM_HFIELD || (int)s->type < 0 ||
      s->type >= GRIT_GEOM_COUNT)
    return GRIT_ERR_INVALID_ARGUMENT;
  grit_shape_core_support(s, d, out);
  double r = grit_shape_core_radius(s), n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  if (r > 0.0 && n > 0.0)
    for (int k = 0; k < 3; ++k) out[k] += r * d[k] / n;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------- bounding boxes */

void grit_shape_local_aabb(const grit_shape *s, double lo[3], double hi[3]) {
  if (s->type == GRIT_GEOM_PLANE) {
    for (int k = 0; k < 3; ++k) lo[k] = -INFINITY, hi[k] = INFINITY;
    hi[2] = 0.0;
    return;
  }
  if (s->type == GRIT_GEOM_HFIELD) { /* the grid's extent, from the base to the highest point */
    lo[0] = -s->size[0], hi[0] = s->size[0];
    lo[1] = -s->size[1], hi[1] = s->size[1];
    lo[2] = -s->size[2], hi[2] = s->top;
    return;
  }
  for (int k = 0; k < 3; ++k) { /* the support along +-e_k gives the extreme coordinates: tight */
    double d[3] = {0, 0, 0}, x[3];
    d[k] = 1.0;
    grit_shape_support(s, d, x);
    hi[k] = x[k];
    d[k] = -1.0;
    grit_shape_support(s, d, x);
    lo[k] = x[k];
  }
}

void grit_shape_world_aabb(const grit_shape *s, const double p[3], const double R[9], double margin, double lo[3],
                           double hi[3]) {
  grit_shape_world_aabb_path(s, p, R, margin, lo, hi, 0);
}

void grit_shape_world_aabb_path(const grit_shape *s, const double p[3], const double R[9], double margin,
                                double lo[3], double hi[3], int both_supports) {
  if (s->type == GRIT_GEOM_PLANE) {
    const double nz[3] = {R[2], R[5], R[8]}; /* the outward normal in the world */
    for (int k = 0; k < 3; ++k) lo[k] = -INFINITY, hi[k] = INFINITY;
    for (int k = 0; k < 3; ++k) { /* bounded only along an exactly axis-aligned normal */
      if (nz[(k + 1) % 3] != 0.0 || nz[(k + 2) % 3] != 0.0) continue;
      if (nz[k] > 0.0) hi[k] = p[k] + margin;
      if (nz[k] < 0.0) lo[k] = p[k] - margin;
    }
    return;
  }
  if (s->type == GRIT_GEOM_HFIELD) { /* the world box of the local box's eight corners */
    double l[3], h[3];
    grit_shape_local_aabb(s, l, h);
    for (int k = 0; k < 3; ++k) {
      double e = 0.0, c = p[k];
      for (int j = 0; j < 3; ++j) {
        c += R[3 * k + j] * 0.5 * (l[j] + h[j]);
        e += fabs(R[3 * k + j]) * 0.5 * (h[j] - l[j]);
      }
      lo[k] = c - e - margin, hi[k] = c + e + margin;
    }
    return;
  }
  if (s->type == GRIT_GEOM_CONVEX) {
    int idx[6];
    convex_world_aabb(s, p, R, margin, lo, hi, idx);
    return;
  }
  for (int k = 0; k < 3; ++k) {
    /* max over the shape of e_k . (p + R x) = p_k + h(R^T e_k), R^T e_k = row k of R */
    double d[3] = {R[3 * k], R[3 * k + 1], R[3 * k + 2]}, x[3];
    grit_shape_support(s, d, x);
    hi[k] = p[k] + d[0] * x[0] + d[1] * x[1] + d[2] * x[2] + margin;
    if (!both_supports) {
      const double h = d[0] * x[0] + d[1] * x[1] + d[2] * x[2];
      /* the other shapes are symmetric about their origin and so are their supports: support(-d) =
       * -support(d) bit for bit (negations and the same magnitudes), but where d_j = 0 (sgn(-0) = sgn(0)),
       * whose terms are zeros either way; so (-d).support(-d) is h, and lo as below without the call */
      lo[k] = p[k] - h - margin;
      continue;
    }
    for (int j = 0; j < 3; ++j) d[j] = -d[j];
    grit_shape_support(s, d, x);
    lo[k] = p[k] - (d[0] * x[0] + d[1] * x[1] + d[2] * x[2]) - margin;
  }
}

double grit_shape_bounding_radius(const grit_shape *s) {
  const double *z = s->size;
  switch (s->type) {
  case GRIT_GEOM_SPHERE: return z[0];
  case GRIT_GEOM_CAPSULE: return z[0] + z[1];
  case GRIT_GEOM_BOX: return sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
  case GRIT_GEOM_CYLINDER: return hypot(z[0], z[1]);
  case GRIT_GEOM_ELLIPSOID: return fmax(z[0], fmax(z[1], z[2]));
  case GRIT_GEOM_CONVEX: { /* GJK/EPA take it per call (its scale): four lanes, the same maximum (of
                             finite squares, in any order) as one chain of fmax calls; a graph keeps it */
    if (s->graph) return grit_hull_graph_radius(s->graph);
    double r2[4] = {0.0, 0.0, 0.0, 0.0};
    int i = 0;
    for (; i + 4 <= s->nvert; i += 4)
      for (int j = 0; j < 4; ++j) {
        const double *v = s->vertices + 3 * (i + j), h = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        r2[j] = h > r2[j] ? h : r2[j];
      }
    for (; i < s->nvert; ++i) {
      const double *v = s->vertices + 3 * i, h = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      r2[0] = h > r2[0] ? h : r2[0];
    }
    return sqrt(fmax(fmax(r2[0], r2[1]), fmax(r2[2], r2[3])));
  }
  case GRIT_GEOM_HFIELD: {
    double l[3], h[3];
    grit_shape_local_aabb(s, l, h);
    return sqrt(z[0] * z[0] + z[1] * z[1] + fmax(-l[2], h[2]) * fmax(-l[2], h[2]));
  }
  default: return INFINITY;
  }
}
