/* SPDX-License-Identifier: Apache-2.0 */
/* hull_graph.c — a CONVEX shape's vertex adjacency and its support by hill climbing (hull_graph.h).
 *
 * The graph, in the model's arena (ints, no pointers, so a model copy moves it as it is):
 *   g[0] = n (vertices), g[1] = nl (loose vertices), g[2..3] = the bytes of a double, the bounding
 *   radius max |v| (grit_shape_bounding_radius's, kept; the scale of d.v's round-off), g[4..9] = the start vertex for +x, -x, +y, -y, +z, -z,
 *   g[10] = the vertices dropped as inside (on no edge and not loose),
 *   then adr[0..n] (vertex i's neighbours are nbr[adr[i] .. adr[i+1])), nbr, and the loose list; then, at
 *   badr_offset(n), the neighbours' coordinates in blocks of four (blocks_offset: doubles in pairs of ints).
 * The edges are those of the engine's own hull of the points (grit_hydro_hull, the triangles of
 * hydroelastic meshes), which leaves out points within 1e-9 of its extent outside a face: those are the
 * "loose" vertices, which every query scans after the climb (points clearly inside can never be a
 * support and are dropped). A loader's Qhull hull gives the engine only hull vertices, so its loose
 * list is empty or short. Where that hull breaks down on near-coplanar points (or its graph fails the
 * check), the edges are the exact hull's (grit_hull_exact): a triangulation of the boundary of the exact
 * convex hull of its vertices, on which a linear function's super- and sub-level sets are connected (a
 * plane cuts a convex body's boundary in one connected cap; a triangle meeting the cap has a vertex in it,
 * joined by the triangle's edges to its others in it; triangles meeting in the cap share a vertex in it).
 * Points exactly on a face or an edge but not vertices, and those inside by less than HULL_INSIDE, are
 * loose there.
 *
 * Ties and round-off. The scan returns the first vertex of greatest d.v as computed in floating point.
 * The climb stops at a vertex none of whose neighbours computes strictly greater; if a neighbour comes
 * within a tolerance (1e-9 of the scale, far above round-off), the vertices within it of the best (a
 * face, an edge nearly normal to d) are searched breadth first for the greatest value and its lowest
 * index. Since the vertices within any distance of a linear function's maximum are connected on a
 * polytope's edge graph, that is the scan's vertex; a search that outgrows its stack buffer scans
 * instead. The model checks each graph against the scan when it builds it (grit_hull_graph_build). */
#include "hull_graph.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hull_exact.h"
#include "hydro.h"

enum { HDR = 11, PLATEAU_MAX = 64, WIDE_MAX = 512, WIDE_WORDS = 128, CHECK_FACES = 512, CHECK_RANDOM = 64 };
#define HULL_TOL 1e-9      /* the plateau's width, times the scale and |d|_1 */
#define HULL_INSIDE 1e-6   /* a point this far (times the extent) inside every face is never a support */
/* A vertex with more edges is the hub of a large flat polygon fanned into triangles (the 2F-85's mount:
 * 146): directions normal to it, which GJK meets on every resting contact, make the climb search the
 * whole polygon for the scan's vertex and then scan anyway; such a hull keeps the scan (measured). */
#define HULL_MAX_DEGREE 64

static double dotv(const double d[3], const double *w) { return d[0] * w[0] + d[1] * w[1] + d[2] * w[2]; }

double grit_hull_graph_radius(const int *g) {
  double r;
  memcpy(&r, g + 2, sizeof r);
  return r;
}

/* After the lists, the neighbours' coordinates in blocks of four, x x x x y y y y z z z z (NaN in the lanes
 * past a vertex's last neighbour: they never compare true): vertex i's neighbours fill blocks badr[i] ..
 * badr[i+1]) in nbr's order, so a round of the climb reads them as vectors instead of gathering them
 * through nbr. The blocks at an even offset, and every graph an even number of ints, so that they are
 * 8-byte aligned where the graph is (the model carves its graphs 64-byte aligned, one after another). */
static size_t badr_offset(int n) { return (size_t)HDR + 8 * (size_t)n + 2; }
static size_t blocks_offset(int n) { return (badr_offset(n) + (size_t)n + 2) & ~(size_t)1; }
static size_t blocks_max(int n) { return 9 * (size_t)n / 4 + 1; } /* sum of ceil(deg / 4) <= (6 n + 3 n) / 4 */

size_t grit_hull_graph_ints(int n) {
  return n < GRIT_HULL_CLIMB_MIN ? 0 : blocks_offset(n) + 24 * blocks_max(n);
}

static const int *graph_badr(const int *g) { return g + badr_offset(g[0]); }
static const double *graph_blocks(const int *g) { return (const double *)(const void *)(g + blocks_offset(g[0])); }

int grit_hull_graph_lists(const int *g, const int **adr, const int **nbr, const int **loose) {
  *adr = g + HDR, *nbr = *adr + g[0] + 1, *loose = *nbr + (*adr)[g[0]];
  return g[10] ? -1 : g[1];
}

/* ---------------------------------------------------------------------------------- the climb */

/* Breadth-first search of the vertices within tol of the best value found, from cur (value hc): the
 * greatest value, lowest index among equals. *full when the buffer overflowed or the search's work
 * passed a scan's (the caller scans). A neighbour below the plateau is dropped before the search of the
 * list for it (both tests only skip it, so the same vertices; seen_first: the list first, the old path). */
static int plateau(const grit_shape *s, const int *adr, const int *nbr, const double d[3], int cur, double hc,
                   double tol, int seen_first, int *full) {
  int list[PLATEAU_MAX], nl = 1, best = cur, work = 0;
  double hb = hc;
  list[0] = cur;
  for (int q = 0; q < nl; ++q)
    for (int k = adr[list[q]]; k < adr[list[q] + 1]; ++k) {
      const int w = nbr[k];
      if ((work += nl) > s->nvert) { /* a flat face fanned from high-degree vertices: a scan costs less */
        *full = 1;
        return best;
      }
      const double h = dotv(d, s->vertices + 3 * w);
      if (h < hb - tol && !seen_first) continue; /* below the plateau (most): no list search */
      int seen = 0;
      for (int j = 0; j < nl && !seen; ++j) seen = list[j] == w;
      if (seen || h < hb - tol) continue;
      if (nl == PLATEAU_MAX) {
        *full = 1;
        return best;
      }
      list[nl++] = w;
      if (h > hb || (h == hb && w < best)) hb = h, best = w;
    }
  return best;
}



/* plateau's search with a bitmap of the listed vertices in place of the list's search, for the world
 * boxes (a foot's sole or a wheel's side normal to a world axis: tens to hundreds of vertices, past
 * plateau's list): a vertex is listed exactly when plateau lists it, in the same order, so the same vertex
 * (the scan's). *full past WIDE_MAX listed vertices or nvert / 2 neighbours read (the one pass, ~12
 * instructions a vertex, then costs about as much), or on a hull too large for the bitmap. */
static int plateau_bits(const grit_shape *s, const int *adr, const int *nbr, const double d[3], int cur, double hc,
                        double tol, int *full) {
  int list[WIDE_MAX], nl = 1, best = cur, work = 0;
  uint64_t seen[WIDE_WORDS];
  double hb = hc;
  if (s->nvert > 64 * WIDE_WORDS) {
    *full = 1;
    return best;
  }
  memset(seen, 0, sizeof(uint64_t) * (size_t)(s->nvert / 64 + 1));
  list[0] = cur, seen[cur / 64] |= 1ull << (cur % 64);
  for (int q = 0; q < nl; ++q) {
    if ((work += adr[list[q] + 1] - adr[list[q]]) > s->nvert / 2) {
      *full = 1;
      return best;
    }
    for (int k = adr[list[q]]; k < adr[list[q] + 1]; ++k) {
      const int w = nbr[k];
      const double h = dotv(d, s->vertices + 3 * w);
      if (h < hb - tol || (seen[w / 64] >> (w % 64) & 1)) continue;
      if (nl == WIDE_MAX) {
        *full = 1;
        return best;
      }
      list[nl++] = w, seen[w / 64] |= 1ull << (w % 64);
      if (h > hb || (h == hb && w < best)) hb = h, best = w;
    }
  }
  return best;
}

/* The steepest ascent from cur (value *hc) on the blocks, four neighbours a vector: d.x as dotv computes it,
 * (d0 x + d1 y) + d2 z without fused multiply-add, so the same bits. A round moves to the first neighbour
 * of the greatest value if that exceeds the current one (what the scalar loop's strict updates pick);
 * otherwise the climb ends, *near if a neighbour comes within tol. Returns the vertex reached. */
static inline __attribute__((target("avx2"), always_inline)) int climb_avx2_body(const int *g, const double d[3], int cur,
                                                                              double *hc, double tol, int *near) {
  const int n = g[0], *adr = g + HDR, *nbr = adr + n + 1, *badr = graph_badr(g);
  const double *blocks = graph_blocks(g);
  const __m256d d0 = _mm256_set1_pd(d[0]), d1 = _mm256_set1_pd(d[1]), d2 = _mm256_set1_pd(d[2]);
  double h[HULL_MAX_DEGREE + 4];
  for (;;) {
    const double *b = blocks + 12 * badr[cur];
    const int nb = badr[cur + 1] - badr[cur];
    __m256d m = _mm256_set1_pd(-INFINITY);
    for (int k = 0; k < nb; ++k, b += 12) {
      const __m256d x = _mm256_loadu_pd(b), y = _mm256_loadu_pd(b + 4), z = _mm256_loadu_pd(b + 8);
      const __m256d hv = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d0, x), _mm256_mul_pd(d1, y)), _mm256_mul_pd(d2, z));
      _mm256_storeu_pd(h + 4 * k, hv);
      m = _mm256_max_pd(hv, m); /* a NaN lane (past the last neighbour) keeps m */
    }
    __m128d m2 = _mm_max_pd(_mm256_castpd256_pd128(m), _mm256_extractf128_pd(m, 1));
    m2 = _mm_max_sd(m2, _mm_unpackhi_pd(m2, m2));
    const double hmax = _mm_cvtsd_f64(m2);
    if (hmax > *hc) { /* the first lane holding the greatest value */
      const __m256d mv = _mm256_set1_pd(hmax);
      int k = 0, mask;
      while (!(mask = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(h + 4 * k), mv, _CMP_EQ_OQ)))) ++k;
      cur = nbr[adr[cur] + 4 * k + __builtin_ctz((unsigned)mask)], *hc = hmax;
      continue;
    }
    const __m256d lo = _mm256_set1_pd(*hc - tol); /* NaN lanes compare false */
    *near = 0;
    for (int k = 0; k < nb && !*near; ++k)
      *near = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(h + 4 * k), lo, _CMP_GE_OQ)) != 0;
    return cur;
  }
}

/* Out of line for the path that calls it (try_path's bit 0 alone). */
static __attribute__((target("avx2"), noinline)) int climb_avx2(const int *g, const double d[3], int cur, double *hc,
                                                                double tol, int *near) {
  return climb_avx2_body(g, d, cur, hc, tol, near);
}

/* The climb's start: start if it is a vertex with edges, else the graph's start for d's dominant axis. */
static inline int climb_start(const int *g, const double d[3], int start) {
  const int *adr = g + HDR;
  if (start >= 0 && start < g[0] && adr[start + 1] != adr[start]) return start;
  const double a0 = fabs(d[0]), a1 = fabs(d[1]), a2 = fabs(d[2]);
  const int k = a0 >= a1 && a0 >= a2 ? 0 : a1 >= a2 ? 1 : 2;
  return g[4 + 2 * k + (d[k] < 0.0)];
}

/* The loose vertices after the climb (hc: cur's value): the first of greatest value. */
static inline int scan_loose(const grit_shape *s, const double d[3], int cur, double hc) {
  const int *g = s->graph, *loose = g + HDR + g[0] + 1 + g[HDR + g[0]];
  for (int j = 0; j < g[1]; ++j) {
    const int i = loose[j];
    const double hl = dotv(d, s->vertices + 3 * i);
    if (hl > hc || (hl == hc && i < cur)) hc = hl, cur = i;
  }
  return cur;
}

/* try_path's steps on its path 1 (vector rounds, the plateau's value first) in one AVX2 function, the
 * climb inlined: the same operations in the same order, so the same vertex, without the calls and the
 * climb's own entry and exit (GJK's and the world boxes' ~60 hull supports a step on the Jaco arm). */
static __attribute__((target("avx2"))) int try_fused_avx2(const grit_shape *s, const double d[3], int start,
                                                          int wide) {
  const int *g = s->graph;
  int cur = climb_start(g, d, start), near = 0;
  const double tol = HULL_TOL * grit_hull_graph_radius(g) * (fabs(d[0]) + fabs(d[1]) + fabs(d[2]));
  double hc = dotv(d, s->vertices + 3 * cur);
  cur = climb_avx2_body(g, d, cur, &hc, tol, &near);
  if (near) {
    const int *adr = g + HDR;
    int full = 0;
    cur = wide ? plateau_bits(s, adr, adr + g[0] + 1, d, cur, hc, tol, &full)
               : plateau(s, adr, adr + g[0] + 1, d, cur, hc, tol, 0, &full);
    if (full) return -1;
    hc = dotv(d, s->vertices + 3 * cur);
  }
  return scan_loose(s, d, cur, hc);
}

/* The steepest ascent from cur (value *hc) one neighbour at a time through the index list: a round moves to
 * the first neighbour of the greatest value if that exceeds the current one; in its last round, *near if a
 * neighbour comes within tol. (climb_avx2_body: the same rounds four neighbours a vector.) */
static int climb_scalar(const int *g, const double *v, const double d[3], int cur, double *hc, double tol, int *near) {
  const int *adr = g + HDR, *nbr = adr + g[0] + 1;
  for (;;) {
    int best = cur;
    double hb = *hc;
    *near = 0;
    for (int k = adr[cur]; k < adr[cur + 1]; ++k) {
      const double h = dotv(d, v + 3 * nbr[k]);
      if (h > hb) hb = h, best = nbr[k];
      else if (h >= *hc - tol) *near = 1;
    }
    if (best == cur) return cur;
    cur = best, *hc = hb;
  }
}

int grit_hull_climb_lanes(const grit_shape *s, const double d[3], int avx2) {
  const int cur = climb_start(s->graph, d, -1);
  double hc = dotv(d, s->vertices + 3 * cur);
  int near; /* (without the plateau's search: unused) */
  return avx2 ? climb_avx2(s->graph, d, cur, &hc, 0.0, &near) : climb_scalar(s->graph, s->vertices, d, cur, &hc, 0.0, &near);
}

int grit_hull_climb(const grit_shape *s, const double d[3]) {
  return grit_hull_climb_lanes(s, d, __builtin_cpu_supports("avx2"));
}

int grit_hull_support_try(const grit_shape *s, const double d[3], int start) {
  return __builtin_cpu_supports("avx2") ? try_fused_avx2(s, d, start, 0) : grit_hull_support_try_path(s, d, start, 0);
}

int grit_hull_support_wide(const grit_shape *s, const double d[3], int start) {
  return __builtin_cpu_supports("avx2") ? try_fused_avx2(s, d, start, 1) : grit_hull_support_try_path(s, d, start, 0);
}

int grit_hull_support(const grit_shape *s, const double d[3], int start) {
  const int i = __builtin_cpu_supports("avx2") ? try_fused_avx2(s, d, start, 0) : grit_hull_support_try_path(s, d, start, 0);
  return i >= 0 ? i : grit_convex_scan(s, d);
}

int grit_hull_support_try_path(const grit_shape *s, const double d[3], int start, int path) {
  if (path & 4) return try_fused_avx2(s, d, start, 0);
  const int *g = s->graph, *adr = g + HDR, *nbr = adr + g[0] + 1;
  const double *v = s->vertices;
  int cur = climb_start(g, d, start);
  const double tol = HULL_TOL * grit_hull_graph_radius(g) * (fabs(d[0]) + fabs(d[1]) + fabs(d[2]));
  double hc = dotv(d, v + 3 * cur);
  int near = 0;
  cur = path & 1 ? climb_avx2(g, d, cur, &hc, tol, &near) : climb_scalar(g, v, d, cur, &hc, tol, &near);
  if (near) {
    int full = 0;
    cur = plateau(s, adr, nbr, d, cur, hc, tol, (path & 2) != 0, &full);
    if (full) return -1;
    hc = dotv(d, v + 3 * cur);
  }
  return scan_loose(s, d, cur, hc);
}

/* ---------------------------------------------------------------------------------- the build */

static int cmp_ll(const void *a, const void *b) {
  const long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

/* adr and nbr from the triangles: every edge both ways, sorted, without repeats. 0 if more than 6 n
 * entries (not a closed triangulated surface). */
static int edges_from(const int *tri, int nt, int n, int *adr, int *nbr) {
  long long *e = malloc(sizeof *e * 6 * (size_t)nt);
  if (!e) return 0;
  int ne = 0;
  for (int t = 0; t < nt; ++t)
    for (int k = 0; k < 3; ++k) {
      const int a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      e[ne++] = (long long)a * n + b;
      e[ne++] = (long long)b * n + a;
    }
  qsort(e, (size_t)ne, sizeof *e, cmp_ll);
  int m = 0;
  memset(adr, 0, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < ne; ++i) {
    if (i > 0 && e[i] == e[i - 1]) continue;
    if (m == 6 * n) {
      free(e);
      return 0;
    }
    const int a = (int)(e[i] / n), b = (int)(e[i] % n);
    nbr[m++] = b;
    adr[a + 1]++;
  }
  for (int i = 0; i < n; ++i) adr[i + 1] += adr[i];
  free(e);
  return 1;
}

/* Vertices on no edge and not clearly inside every face plane: the loose list. Returns its length. */
static int loose_vertices(const grit_shape *s, const int *tri, int nt, const int *adr, double extent, int *loose) {
  const double *v = s->vertices;
  int nl = 0;
  for (int i = 0; i < s->nvert; ++i) {
    if (adr[i + 1] > adr[i]) continue;
    double out = -INFINITY;
    for (int t = 0; t < nt && out < -HULL_INSIDE * extent; ++t) {
      const double *a = v + 3 * tri[3 * t], *b = v + 3 * tri[3 * t + 1], *c = v + 3 * tri[3 * t + 2];
      const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
      const double nn[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
      const double l = sqrt(dotv(nn, nn)), x[3] = {v[3 * i] - a[0], v[3 * i + 1] - a[1], v[3 * i + 2] - a[2]};
      out = fmax(out, l > 0.0 ? dotv(nn, x) / l : 0.0);
    }
    if (out >= -HULL_INSIDE * extent) loose[nl++] = i;
  }
  return nl;
}

/* The climb against the scan along d from three starts; 1 if all agree. */
static int agrees(const grit_shape *s, const double d[3], int salt) {
  const int ref = grit_convex_scan(s, d), n = s->nvert;
  return grit_hull_support(s, d, -1) == ref && grit_hull_support(s, d, (salt * 7919 + 13) % n) == ref &&
         grit_hull_support(s, d, (salt * 104729 + 5) % n) == ref;
}

static int check_graph(const grit_shape *s, const int *tri, int nt) {
  const double *v = s->vertices;
  for (int k = 0; k < 6; ++k) {
    double d[3] = {0, 0, 0};
    d[k / 2] = k % 2 ? -1.0 : 1.0;
    if (!agrees(s, d, k)) return 0;
  }
  const int stride = nt / CHECK_FACES + 1;
  for (int t = 0; t < nt; t += stride) { /* a face's normal both ways: the plateaus */
    const double *a = v + 3 * tri[3 * t], *b = v + 3 * tri[3 * t + 1], *c = v + 3 * tri[3 * t + 2];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double nn[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    if (!agrees(s, nn, t)) return 0;
    for (int k = 0; k < 3; ++k) nn[k] = -nn[k];
    if (!agrees(s, nn, t + 1)) return 0;
  }
  unsigned x = 12345u; /* fixed pseudo-random directions (a linear congruential generator) */
  for (int r = 0; r < CHECK_RANDOM; ++r) {
    double d[3];
    for (int k = 0; k < 3; ++k) x = x * 1664525u + 1013904223u, d[k] = (double)(x >> 8) / 8388608.0 - 1.0;
    if (!agrees(s, d, r)) return 0;
  }
  return 1;
}

typedef struct far_point {
  double r2;
  int i;
} far_point;

static int cmp_far(const void *a, const void *b) { /* farther first, then by index: a total order */
  const far_point *x = a, *y = b;
  return x->r2 != y->r2 ? (x->r2 < y->r2) - (x->r2 > y->r2) : (x->i > y->i) - (x->i < y->i);
}

/* The engine's hull of the points, taken farthest from their centroid first (an incremental hull with a
 * tolerance is robust when the outer points come first: the inner ones are then rejected at once,
 * before near-coplanar faces can mislead it), its triangles in the shape's own indices. */
static int hull_far_first(const double *v, int n, int *tri, int exact) {
  far_point *o = malloc(sizeof *o * (size_t)n);
  double *p = malloc(sizeof(double) * 3 * (size_t)n), c[3] = {0, 0, 0};
  int nt = 0;
  if (o && p) {
    for (int i = 0; i < 3 * n; ++i) c[i % 3] += v[i] / n;
    for (int i = 0; i < n; ++i) {
      const double x[3] = {v[3 * i] - c[0], v[3 * i + 1] - c[1], v[3 * i + 2] - c[2]};
      o[i].r2 = dotv(x, x), o[i].i = i;
    }
    qsort(o, (size_t)n, sizeof *o, cmp_far);
    for (int i = 0; i < n; ++i) memcpy(p + 3 * i, v + 3 * o[i].i, 3 * sizeof(double));
    nt = exact ? grit_hull_exact(p, n, tri, 2 * n) : grit_hydro_hull(p, n, tri, 2 * n);
    for (int k = 0; k < 3 * nt; ++k) tri[k] = o[tri[k]].i;
  }
  free(o), free(p);
  return nt;
}

/* The neighbours' blocks and their addresses (see blocks_offset). */
static void fill_blocks(const grit_shape *s, int *g) {
  const int n = g[0], *adr = g + HDR, *nbr = adr + n + 1;
  int *badr = g + badr_offset(n);
  double *b = (double *)(void *)(g + blocks_offset(n));
  badr[0] = 0;
  for (int i = 0; i < n; ++i) {
    const int deg = adr[i + 1] - adr[i], nb = (deg + 3) / 4;
    for (int j = 0; j < 4 * nb; ++j) {
      double *blk = b + 12 * (badr[i] + j / 4);
      for (int k = 0; k < 3; ++k) blk[4 * k + j % 4] = j < deg ? s->vertices[3 * nbr[adr[i] + j] + k] : NAN;
    }
    badr[i + 1] = badr[i] + nb;
  }
}

/* The graph from the triangles tri[0..nt) (their edges set in g already): the loose vertices, the
 * blocks, the radius and the starts; 1 if it then gives the scan's vertex on every direction checked. */
static int graph_finish(const grit_shape *s, int *g, const int *tri, int nt) {
  const int n = s->nvert;
  int *adr = g + HDR, *nbr = adr + n + 1;
  const double *v = s->vertices;
  const double scale = grit_shape_bounding_radius(s); /* the scan's, before the graph is set */
  double lo[3] = {v[0], v[1], v[2]}, hi[3] = {v[0], v[1], v[2]};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], v[3 * i + k]), hi[k] = fmax(hi[k], v[3 * i + k]);
  const double extent = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                             (hi[2] - lo[2]) * (hi[2] - lo[2]));
  g[0] = n;
  g[1] = loose_vertices(s, tri, nt, adr, extent, nbr + adr[n]);
  g[10] = -g[1];
  for (int i = 0; i < n; ++i) g[10] += adr[i + 1] == adr[i];
  if ((uintptr_t)(g + blocks_offset(n)) % sizeof(double)) return 0; /* not where the graphs' layout puts it */
  fill_blocks(s, g);
  memcpy(g + 2, &scale, sizeof scale);
  for (int k = 0; k < 6; ++k) { /* the starts: the greatest of +-x_k among the vertices on edges */
    const double sg = k % 2 ? -1.0 : 1.0;
    int best = -1;
    for (int i = 0; i < n; ++i)
      if (adr[i + 1] > adr[i] && (best < 0 || sg * v[3 * i + k / 2] > sg * v[3 * best + k / 2])) best = i;
    g[4 + k] = best;
  }
  grit_shape t = *s;
  t.graph = g;
  return g[4] >= 0 && check_graph(&t, tri, nt);
}

/* The graph from the hulls first .. 3: 0 the tolerant hull (grit_hydro_hull) in the given order, 1 the
 * same farthest first, 2 and 3 the exact hull (grit_hull_exact) in the same two orders. The tolerant
 * hull breaks down on near-coplanar points (its visible faces no longer one disk: the surface falls
 * apart); the exact one does not. The exact hull's second order may fan a flat face from vertices of
 * lower degree (HULL_MAX_DEGREE). */
static int graph_build_from(const grit_shape *s, int *g, int first) {
  const int n = s->nvert;
  if (s->type != GRIT_GEOM_CONVEX || n < GRIT_HULL_CLIMB_MIN || !s->vertices) return 0;
  const double *v = s->vertices;
  int *tri = malloc(sizeof(int) * 3 * 2 * (size_t)n);
  int *adr = g + HDR, *nbr = adr + n + 1, ok = 0;
  for (int order = first; order < 4 && !ok && tri; ++order) {
    const int nt = order & 1 ? hull_far_first(v, n, tri, order >> 1)
                   : order   ? grit_hull_exact(v, n, tri, 2 * n)
                             : grit_hydro_hull(v, n, tri, 2 * n);
    ok = nt > 0 && edges_from(tri, nt, n, adr, nbr);
    for (int i = 0; ok && i < n; ++i) ok = adr[i + 1] - adr[i] <= HULL_MAX_DEGREE;
    ok = ok && graph_finish(s, g, tri, nt);
  }
  free(tri);
  return ok;
}

int grit_hull_graph_build(const grit_shape *s, int *g) { return graph_build_from(s, g, 0); }

int grit_hull_graph_build_exact(const grit_shape *s, int *g) { return graph_build_from(s, g, 2); }
