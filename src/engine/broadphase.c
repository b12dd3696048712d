/* SPDX-License-Identifier: Apache-2.0 */
/* broadphase.c — sort-and-sweep over axis-aligned boxes. See broadphase.h. */
#include "broadphase.h"

#include <immintrin.h>
#include <stdlib.h>

#define GRIT_BP_KINDS 8 /* the most kinds of boxes the kinds' sweep takes */
/* The fewest boxes the vector sweep takes: below, a box overlaps few others on the sweep axis and a
 * pair at a time costs less (clutter's 45 boxes: +1.8 % of the step with the vector sweep) */
#define GRIT_BP_VECTOR_MIN 128

struct grit_broadphase {
  int n;
  int *order; /* box indices sorted by their lower bound on the sweep axis, then index (kept between calls) */
  int unpacked; /* 1: the sweep reads the boxes through the order (the old path) */
  double *key;  /* (n) the sorted boxes' lower bounds on the sweep axis, during a call */
  double *box;  /* (6 n) the boxes in sweep order: sweep axis lo, hi, then the next axis's, the last's */
  const unsigned *type, *affinity; /* (n) the classes (grit_broadphase_set_classes), or NULL */
  const int *group;
  unsigned *cls; /* (3 n) the classes in sweep order: type, affinity, group */
  int nkind;     /* the classes' kinds (make_kinds), or 0 */
  int test_cls;  /* 0 when every two kinds' masks match (then the classes' test is left to the filter) */
  unsigned char *kind; /* (n) each box's kind */
  unsigned char match[GRIT_BP_KINDS][GRIT_BP_KINDS]; /* whether two kinds' bit masks match */
  int *klist;    /* (n) the sweep places grouped by kind, during a call */
  double *side;  /* (4 n) the boxes' other two axes in sweep order, by rows: lo1, hi1, lo2, hi2 */
  int *cand;     /* (n) one box's overlapping later boxes (gather_avx2), during a call */
  int avx2;      /* the plain sweep four boxes a vector (gather_avx2; off with grit_broadphase_set_scalar) */
};

grit_status grit_broadphase_create(int n, grit_broadphase **out) {
  *out = NULL;
  if (n < 0) return GRIT_ERR_INVALID_ARGUMENT;
  grit_broadphase *bp = calloc(1, sizeof *bp);
  if (!bp) return GRIT_ERR_OUT_OF_MEMORY;
  bp->n = n;
  bp->order = calloc((size_t)n + 1, sizeof(int));
  bp->key = calloc((size_t)n + 1, sizeof(double));
  bp->box = calloc(6 * (size_t)n + 1, sizeof(double));
  bp->cls = calloc(3 * (size_t)n + 1, sizeof(unsigned));
  bp->kind = calloc((size_t)n + 1, 1);
  bp->klist = calloc((size_t)n + 1, sizeof(int));
  bp->side = calloc(4 * (size_t)n + 1, sizeof(double));
  bp->cand = calloc((size_t)n + 1, sizeof(int));
  bp->avx2 = __builtin_cpu_supports("avx2") != 0;
  if (!bp->side || !bp->cand || !bp->order || !bp->key || !bp->box || !bp->cls || !bp->kind || !bp->klist) {
    grit_broadphase_free(bp);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < n; ++i) bp->order[i] = i;
  *out = bp;
  return GRIT_OK;
}

void grit_broadphase_free(grit_broadphase *bp) {
  if (!bp) return;
  free(bp->order);
  free(bp->key);
  free(bp->box);
  free(bp->cls);
  free(bp->kind);
  free(bp->klist);
  free(bp->side);
  free(bp->cand);
  free(bp);
}

void grit_broadphase_set_unpacked(grit_broadphase *bp, int unpacked) { bp->unpacked = unpacked != 0; }

void grit_broadphase_set_scalar(grit_broadphase *bp, int scalar) { bp->avx2 = !scalar && __builtin_cpu_supports("avx2"); }

/* Whether classes (type, affinity, group) a and b exclude the pair (grit_broadphase_set_classes). */
static int classes_exclude(const unsigned *a, const unsigned *b) {
  return a[2] == b[2] || (!(a[0] & b[1]) && !(b[0] & a[1]));
}

/* The kinds: the distinct (type, affinity) of the boxes, when there are at most GRIT_BP_KINDS of them
 * and some two never match (then the sweep walks each box's matching kinds only); nkind 0 otherwise.
 * Made again only when the arrays change (a model's, fixed). */
static void make_kinds(grit_broadphase *bp) {
  bp->nkind = 0;
  bp->test_cls = 1;
  int k = 0;
  unsigned t[GRIT_BP_KINDS], a[GRIT_BP_KINDS];
  for (int i = 0; i < bp->n; ++i) {
    int f = 0;
    while (f < k && (t[f] != bp->type[i] || a[f] != bp->affinity[i])) f++;
    if (f == k) {
      if (k == GRIT_BP_KINDS) return;
      t[k] = bp->type[i], a[k] = bp->affinity[i], k++;
    }
    bp->kind[i] = (unsigned char)f;
  }
  int all = 1;
  double cnt[GRIT_BP_KINDS] = {0}, apart = 0.0, pairs = 0.5 * bp->n * (bp->n - 1.0);
  for (int i = 0; i < bp->n; ++i) cnt[bp->kind[i]] += 1.0;
  for (int x = 0; x < k; ++x)
    for (int y = 0; y < k; ++y) {
      bp->match[x][y] = (t[x] & a[y]) || (t[y] & a[x]);
      all &= bp->match[x][y];
      if (!bp->match[x][y] && y >= x) apart += y == x ? 0.5 * cnt[x] * (cnt[x] - 1.0) : cnt[x] * cnt[y];
    }
  /* the kinds' sweep merges lists at every box: worth it only where the masks part most pairs (a soft
   * body's particles: 98 %), not a few (the rodent's 19 of 100 boxes that skip each other: 3 %) */
  bp->nkind = !all && 2.0 * apart >= pairs ? k : 0;
  bp->test_cls = !all; /* every mask matching: the filter's own tests drop the one-weld pairs */
}

void grit_broadphase_set_classes(grit_broadphase *bp, const unsigned *type, const unsigned *affinity, const int *group) {
  const int on = type && affinity && group;
  const int same = bp->type == type && bp->affinity == affinity;
  bp->type = on ? type : NULL;
  bp->affinity = on ? affinity : NULL;
  bp->group = on ? group : NULL;
  if (on && !same) make_kinds(bp);
}

/* Box p of a sweep: its bounds past the sweep axis's lower one, its classes (NULL: not tested), its index. */
typedef struct sweep_at {
  double hi, lo1, hi1, lo2, hi2;
  const unsigned *cls;
  int i;
} sweep_at;

static inline sweep_at sweep_at_make(const grit_broadphase *bp, int p) {
  const double *b = bp->box + 6 * p;
  const sweep_at a = {b[1], b[2], b[3], b[4], b[5], bp->type && bp->test_cls ? bp->cls + 3 * p : NULL, bp->order[p]};
  return a;
}

/* The pair of box a and the box at sweep place q (after a, overlapping it on the sweep axis) if it
 * passes the classes and the filter. Returns 0, or 1 if the pair is past max_pairs. */
static inline __attribute__((always_inline)) int emit_overlapping(const grit_broadphase *bp, const sweep_at *a, int q,
                                                                  grit_pair_filter filter, const void *ctx, int *pairs,
                                                                  int max_pairs, int *np) {
  if (a->cls && classes_exclude(a->cls, bp->cls + 3 * q)) return 0;
  const int j = bp->order[q], lo = a->i < j ? a->i : j, hj = a->i < j ? j : a->i;
  if (filter && !filter(ctx, lo, hj)) return 0;
  if (*np >= max_pairs) return 1;
  pairs[2 * *np] = lo;
  pairs[2 * *np + 1] = hj;
  ++*np;
  return 0;
}

/* The same, after the test on the other two axes (a NaN bound never rejects). */
static inline __attribute__((always_inline)) int emit(const grit_broadphase *bp, const sweep_at *a, int q,
                                                      grit_pair_filter filter, const void *ctx, int *pairs, int max_pairs,
                                                      int *np) {
  const double *bj = bp->box + 6 * q;
  if (bj[2] > a->hi1 || a->lo1 > bj[3] || bj[4] > a->hi2 || a->lo2 > bj[5]) return 0;
  return emit_overlapping(bp, a, q, filter, ctx, pairs, max_pairs, np);
}

/* The sweep places after p of the boxes overlapping box a on all three axes, into cand (ascending), four
 * later boxes a vector: their lower bounds on the sweep axis (key, sorted) against a's upper one, and the
 * other two axes' intervals (side: lo1, hi1, lo2, hi2 rows of n), by the scalar sweep's comparisons (a
 * NaN bound never rejects, as there). No call inside: the filter runs after, outside the vector code
 * (a call from it would save and restore its registers each time). Returns their number; *nt gets the
 * tests. */
static __attribute__((target("avx2"))) int gather_avx2(const grit_broadphase *bp, const sweep_at *a, int p, int *cand,
                                                      long *nt) {
  const int n = bp->n;
  const double *key = bp->key, *s = bp->side, *box = bp->box;
  int q = p + 1, nc = 0;
  for (; q < n && q <= p + 4; ++q) { /* most boxes overlap few on the sweep axis: those a pair at a time */
    if (key[q] > a->hi) return nc;
    ++*nt;
    const double *bj = box + 6 * q;
    if (!(bj[2] > a->hi1 || a->lo1 > bj[3] || bj[4] > a->hi2 || a->lo2 > bj[5])) cand[nc++] = q;
  }
  const __m256d hi = _mm256_set1_pd(a->hi), lo1 = _mm256_set1_pd(a->lo1), hi1 = _mm256_set1_pd(a->hi1);
  const __m256d lo2 = _mm256_set1_pd(a->lo2), hi2 = _mm256_set1_pd(a->hi2);
  for (; q + 4 <= n; q += 4) {
    const int in = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(key + q), hi, _CMP_NGT_UQ));
    const int run = in == 15 ? 4 : __builtin_ctz(~in & 15); /* sorted: the boxes before the first one past hi */
    *nt += run;
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(_mm256_loadu_pd(s + q), hi1, _CMP_NGT_UQ),
                               _mm256_cmp_pd(lo1, _mm256_loadu_pd(s + n + q), _CMP_NGT_UQ));
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(_mm256_loadu_pd(s + 2 * n + q), hi2, _CMP_NGT_UQ));
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(lo2, _mm256_loadu_pd(s + 3 * n + q), _CMP_NGT_UQ));
    for (int m = _mm256_movemask_pd(ok) & ((1 << run) - 1); m; m &= m - 1) cand[nc++] = q + __builtin_ctz(m);
    if (run < 4) return nc;
  }
  for (; q < n && key[q] <= a->hi; ++q) {
    ++*nt;
    const double *bj = box + 6 * q;
    if (!(bj[2] > a->hi1 || a->lo1 > bj[3] || bj[4] > a->hi2 || a->lo2 > bj[5])) cand[nc++] = q;
  }
  return nc;
}

/* The plain sweep of every box, four later boxes a vector (gather_avx2), then the classes and the filter. */
static int sweep_avx2(grit_broadphase *bp, grit_pair_filter filter, const void *ctx, int *pairs, int max_pairs, int *np,
                      long *nt) {
  int over = 0;
  for (int p = 0; p < bp->n; ++p) {
    const sweep_at a = sweep_at_make(bp, p);
    const int nc = gather_avx2(bp, &a, p, bp->cand, nt);
    for (int k = 0; k < nc; ++k) over |= emit_overlapping(bp, &a, bp->cand[k], filter, ctx, pairs, max_pairs, np);
  }
  return over;
}

/* The plain sweep a pair at a time, p's bounds, the classes and the counts in locals (the filter's calls
 * would otherwise make them reload from memory at each pair). */
static int sweep_scalar(const grit_broadphase *bp, grit_pair_filter filter, const void *ctx, int *pairs, int max_pairs,
                        int *npairs, long *ntests) {
  const int n = bp->n, *o = bp->order;
  const double *box = bp->box;
  const unsigned *cls = bp->type && bp->test_cls ? bp->cls : NULL;
  int np = *npairs, over = 0;
  long nt = *ntests;
  for (int p = 0; p < n; ++p) {
    const double *bi = box + 6 * p;
    const double hi = bi[1], lo1 = bi[2], hi1 = bi[3], lo2 = bi[4], hi2 = bi[5];
    for (int q = p + 1; q < n; ++q) {
      const double *bj = box + 6 * q;
      if (bj[0] > hi) break; /* sorted: no later box overlaps on the sweep axis */
      nt++;
      if (bj[2] > hi1 || lo1 > bj[3] || bj[4] > hi2 || lo2 > bj[5]) continue;
      if (cls && classes_exclude(cls + 3 * p, cls + 3 * q)) continue;
      const int i = o[p], j = o[q], lo = i < j ? i : j, hj = i < j ? j : i;
      if (filter && !filter(ctx, lo, hj)) continue;
      if (np >= max_pairs) {
        over = 1;
        continue;
      }
      pairs[2 * np] = lo;
      pairs[2 * np + 1] = hj;
      np++;
    }
  }
  *npairs = np;
  *ntests = nt;
  return over;
}

/* The kinds' sweep: each kind's sweep places in a list (ascending), and for each box the boxes after it
 * on the sweep axis of the kinds it matches, merged in sweep order: the pairs of the plain sweep in its
 * order, without walking the boxes no kind of its would take. */
static int sweep_kinds(grit_broadphase *bp, grit_pair_filter filter, const void *ctx, int *pairs, int max_pairs,
                       int *np, long *nt) {
  const int n = bp->n, nk = bp->nkind;
  int start[GRIT_BP_KINDS + 1] = {0}, head[GRIT_BP_KINDS], at[GRIT_BP_KINDS], over = 0;
  for (int p = 0; p < n; ++p) start[bp->kind[bp->order[p]] + 1]++;
  for (int k = 0; k < nk; ++k) start[k + 1] += start[k], head[k] = start[k];
  for (int p = 0; p < n; ++p) {
    const int k = bp->kind[bp->order[p]];
    bp->klist[head[k]++] = p;
  }
  for (int k = 0; k < nk; ++k) head[k] = start[k]; /* each kind's first place after p */
  for (int p = 0; p < n; ++p) {
    const int kp = bp->kind[bp->order[p]];
    head[kp]++; /* p itself */
    const sweep_at a = sweep_at_make(bp, p);
    for (int k = 0; k < nk; ++k) at[k] = head[k];
    for (;;) {
      int best = -1, bq = n;
      for (int k = 0; k < nk; ++k) {
        if (!bp->match[kp][k] || at[k] == start[k + 1]) continue;
        const int q = bp->klist[at[k]];
        if (bp->box[6 * q] > a.hi) continue; /* sorted: no later box of kind k overlaps */
        if (q < bq) bq = q, best = k;
      }
      if (best < 0) break;
      at[best]++;
      ++*nt;
      over |= emit(bp, &a, bq, filter, ctx, pairs, max_pairs, np);
    }
  }
  return over;
}

/* The packed sweep: the same insertion sort on the lower bounds (ties by index) gathered into one array (the same
 * comparisons, so the same order), the boxes copied in that order, then the same sweep over them read
 * in sequence instead of through the order: the same pairs in the same order, the same tests (with
 * classes, the kinds' sweep: the same pairs in the same order, fewer tests). */
static grit_status pairs_packed(grit_broadphase *bp, const double *aabb, int ax, grit_pair_filter filter,
                                const void *ctx, int *pairs, int max_pairs, int *npairs, long *tests) {
  const int n = bp->n, a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
  int *o = bp->order;
  double *key = bp->key, *box = bp->box;
  for (int p = 0; p < n; ++p) key[p] = aabb[6 * o[p] + ax];
  for (int i = 1; i < n; ++i) {
    const int id = o[i];
    const double lo = key[i];
    int j = i - 1;
    while (j >= 0 && (key[j] > lo || (key[j] == lo && o[j] > id))) { /* ties by index: see below */
      o[j + 1] = o[j];
      key[j + 1] = key[j];
      j--;
    }
    o[j + 1] = id;
    key[j + 1] = lo;
  }
  for (int p = 0; p < n; ++p) {
    const double *b = aabb + 6 * o[p];
    double *x = box + 6 * p;
    x[0] = b[ax], x[1] = b[3 + ax], x[2] = b[a1], x[3] = b[3 + a1], x[4] = b[a2], x[5] = b[3 + a2];
  }
  const int vector = !(bp->type && bp->nkind) && bp->avx2 && n >= GRIT_BP_VECTOR_MIN;
  for (int p = 0; p < n && vector; ++p) {
    const double *b = aabb + 6 * o[p];
    double *y = bp->side + p;
    y[0] = b[a1], y[n] = b[3 + a1], y[2 * n] = b[a2], y[3 * n] = b[3 + a2];
  }
  if (bp->type && bp->test_cls)
    for (int p = 0; p < n; ++p)
      bp->cls[3 * p] = bp->type[o[p]], bp->cls[3 * p + 1] = bp->affinity[o[p]], bp->cls[3 * p + 2] = (unsigned)bp->group[o[p]];
  int np = 0, over = 0;
  long nt = 0;
  if (bp->type && bp->nkind) over = sweep_kinds(bp, filter, ctx, pairs, max_pairs, &np, &nt);
  else if (vector) over = sweep_avx2(bp, filter, ctx, pairs, max_pairs, &np, &nt);
  else over = sweep_scalar(bp, filter, ctx, pairs, max_pairs, &np, &nt);
  *npairs = np;
  if (tests) *tests = nt;
  return over ? GRIT_ERR_CAPACITY : GRIT_OK;
}

/* The axis along which the box centres have the largest variance. */
static int sweep_axis(const double *aabb, int n) {
  double s[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double c = 0.5 * (aabb[6 * i + k] + aabb[6 * i + 3 + k]);
      s[k] += c;
      s2[k] += c * c;
    }
  int best = 0;
  double bv = -1.0;
  for (int k = 0; k < 3; ++k) {
    double var = s2[k] - s[k] * s[k] / (n > 0 ? n : 1);
    if (var > bv) {
      bv = var;
      best = k;
    }
  }
  return best;
}

/* Two boxes (a body on a floor, two bodies: the tiny scenes), without the packed sweep's copies: its
 * insertion sort's one step on the kept order, its test on the sweep axis and the other two, the classes
 * (a pair of kinds that do not match is one the classes' test excludes), the filter: the same pair, the
 * same order kept. Not counting tests (the callers that ask take the sweep). */
static grit_status pairs_two(grit_broadphase *bp, const double *aabb, int ax, grit_pair_filter filter, const void *ctx,
                             int *pairs, int max_pairs, int *npairs) {
  int *o = bp->order;
  if (aabb[6 * o[0] + ax] > aabb[6 * o[1] + ax] || (aabb[6 * o[0] + ax] == aabb[6 * o[1] + ax] && o[0] > o[1])) {
    const int t = o[0];
    o[0] = o[1], o[1] = t;
  }
  const int i = o[0], j = o[1], a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
  const double *bi = aabb + 6 * i, *bj = aabb + 6 * j;
  *npairs = 0;
  if (bj[ax] > bi[3 + ax]) return GRIT_OK;
  if (bj[a1] > bi[3 + a1] || bi[a1] > bj[3 + a1] || bj[a2] > bi[3 + a2] || bi[a2] > bj[3 + a2]) return GRIT_OK;
  if (bp->type && bp->test_cls) {
    const unsigned ci[3] = {bp->type[i], bp->affinity[i], (unsigned)bp->group[i]};
    const unsigned cj[3] = {bp->type[j], bp->affinity[j], (unsigned)bp->group[j]};
    if (classes_exclude(ci, cj)) return GRIT_OK;
  }
  const int lo = i < j ? i : j, hj = i < j ? j : i;
  if (filter && !filter(ctx, lo, hj)) return GRIT_OK;
  if (max_pairs < 1) return GRIT_ERR_CAPACITY;
  pairs[0] = lo, pairs[1] = hj;
  *npairs = 1;
  return GRIT_OK;
}

grit_status grit_broadphase_pairs(grit_broadphase *bp, const double *aabb, grit_pair_filter filter,
                                  const void *ctx, int *pairs, int max_pairs, int *npairs, long *tests) {
  const int n = bp->n, ax = sweep_axis(aabb, n);
  if (!bp->unpacked && n == 2 && !tests) return pairs_two(bp, aabb, ax, filter, ctx, pairs, max_pairs, npairs);
  if (!bp->unpacked) return pairs_packed(bp, aabb, ax, filter, ctx, pairs, max_pairs, npairs, tests);
  int *o = bp->order;
  /* insertion sort by lower bound, then index: near O(n) for coherent motion. The index breaks ties, so
   * the order (and so the pairs' order, and the candidates') is a function of the boxes alone, not of the
   * order the last call left (a grid's equal bounds after grit_data_reset or a set state: data.h) */
  for (int i = 1; i < n; ++i) {
    int key = o[i], j = i - 1;
    const double lo = aabb[6 * key + ax];
    while (j >= 0 && (aabb[6 * o[j] + ax] > lo || (aabb[6 * o[j] + ax] == lo && o[j] > key))) {
      o[j + 1] = o[j];
      j--;
    }
    o[j + 1] = key;
  }
  int np = 0;
  long nt = 0;
  grit_status status = GRIT_OK;
  const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
  for (int p = 0; p < n; ++p) {
    const int i = o[p];
    const double *bi = aabb + 6 * i;
    for (int q = p + 1; q < n; ++q) {
      const int j = o[q];
      const double *bj = aabb + 6 * j;
      if (bj[ax] > bi[3 + ax]) break; /* sorted: no later box overlaps on the sweep axis */
      nt++;
      if (bj[a1] > bi[3 + a1] || bi[a1] > bj[3 + a1] || bj[a2] > bi[3 + a2] || bi[a2] > bj[3 + a2]) continue;
      if (bp->type) {
        const unsigned ci[3] = {bp->type[i], bp->affinity[i], (unsigned)bp->group[i]};
        const unsigned cj[3] = {bp->type[j], bp->affinity[j], (unsigned)bp->group[j]};
        if (classes_exclude(ci, cj)) continue;
      }
      int lo = i < j ? i : j, hi = i < j ? j : i;
      if (filter && !filter(ctx, lo, hi)) continue;
      if (np >= max_pairs) {
        status = GRIT_ERR_CAPACITY;
        continue;
      }
      pairs[2 * np] = lo;
      pairs[2 * np + 1] = hi;
      np++;
    }
  }
  *npairs = np;
  if (tests) *tests = nt;
  return status;
}
