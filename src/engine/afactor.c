/* SPDX-License-Identifier: Apache-2.0 */
/* afactor.c — the step's factor of A by trees, dense or in tree order. See afactor.h. */
#include "afactor.h"

#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "dynamics.h"
#include "status_internal.h"
#include "treechol.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#define AF_AVX2 1
#else
#define AF_AVX2 0
#endif

struct grit_afactor {
  const grit_model *m;
  grit_treechol *tc;
  unsigned char *eligible; /* (ntree) more than GRIT_AFACTOR_MIN_NV dofs and A keeps the pattern */
  unsigned char *on;       /* (ntree) the last factor of tree t is the tree-ordered one */
  char *dense;             /* (ntree) the complement of on, grit_block_cholesky's mask */
  int *off;                /* (ntree) tree t's compact factor at L + off[t] (eligible trees) */
  double *L, *inv;         /* the eligible trees' compact factors; (nv) their reciprocal pivots */
  double *scratch;         /* (3 times the largest eligible tree) a constraint's rows' solves, zero between */
  uint64_t *bits;          /* (a bit per dof of the largest eligible tree) their support, zero between */
  double *rows;            /* (rows_n x AF_CHUNK) grit_afactor_solve_many's columns as rows */
  int *cols;               /* (AF_CHUNK) the columns of a chunk */
  int *slot;               /* (ntree) tree t's list in pend, or -1: a tree that is never solved by rows */
  int *pend, *npend;       /* (nslot x AF_CHUNK, nslot) each such tree's columns not yet solved */
  int *rtree;              /* (nslot) the trees solved by rows in this solve, ascending */
  int no_lists; /* grit_afactor_set_column_lists(af, 0): solve_many scans every column once per tree, as before */
  int rows_n;              /* the rows' room: the largest tree solved by rows */
  int any_eligible, any_on, force_dense;
  int no_cols; /* grit_afactor_set_delassus_cols(af, 0): the estimates scan J whole, as before */
  int no_many; /* grit_afactor_set_many(af, 0): grit_afactor_solve_many solves column by column, as before */
  int no_mid; /* grit_afactor_set_mid_passes(af, 0): dense_rows_avx2 runs passes of eight vectors or one only */
  int dense_rows; /* the processor has AVX2: dense trees of AF_DENSE_MIN dofs or more solve many columns as
                     rows too (dense_rows_avx2) */
  int small;      /* AVX2, no tree eligible for the tree order, at most AF_SMALL_TREES trees, each of fewer than
                     AF_DENSE_MIN dofs: grit_afactor_solve_many solves four columns at a time in registers */
  int no_small;   /* grit_afactor_set_small(af, 0): column by column, as before */
};

/* The columns grit_afactor_solve_many moves into rows at a time; the smallest dense tree it solves so
 * (smaller ones: column by column, whose loops cost less there). */
enum { AF_CHUNK = 64, AF_DENSE_MIN = 8, AF_SMALL_TREES = 8 };

/* The trees that may be solved by rows (eligible for the tree order, or dense of AF_DENSE_MIN dofs or more
 * with AVX2) each get a list of AF_CHUNK pending columns; with the chunk's columns af->cols. 0: out of memory. */
static int alloc_lists(grit_afactor *af) {
  const grit_model *m = af->m;
  int nslot = 0;
  af->slot = malloc(sizeof(int) * ((size_t)m->ntree + 1));
  if (!af->slot) return 0;
  for (int t = 0; t < m->ntree; ++t)
    af->slot[t] = af->eligible[t] || (af->dense_rows && m->tree_dofnum[t] >= AF_DENSE_MIN) ? nslot++ : -1;
  af->pend = malloc(sizeof(int) * ((size_t)nslot * AF_CHUNK + 1));
  af->npend = calloc((size_t)nslot + 1, sizeof(int));
  af->rtree = calloc((size_t)nslot + 1, sizeof(int));
  af->cols = calloc(AF_CHUNK, sizeof(int));
  return af->pend && af->npend && af->rtree && af->cols;
}

grit_status grit_afactor_create(const grit_model *m, grit_afactor **out, char *message) {
  *out = NULL;
  grit_afactor *af = calloc(1, sizeof *af);
  if (!af) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the factor of A");
  af->m = m;
  const int nt = m->ntree;
  af->eligible = calloc((size_t)nt + 1, 1);
  af->on = calloc((size_t)nt + 1, 1);
  af->dense = calloc((size_t)nt + 1, 1);
  af->off = calloc((size_t)nt + 1, sizeof(int));
  af->inv = calloc((size_t)m->nv + 1, sizeof(double));
  if (!af->eligible || !af->on || !af->dense || !af->off || !af->inv) {
    grit_afactor_free(af);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the factor of A");
  }
  int maxn = 0;
  for (int t = 0; t < nt; ++t)
    af->eligible[t] = m->tree_dofnum[t] > GRIT_AFACTOR_MIN_NV && grit_treechol_a_keeps_pattern(m, t);
  for (int t = 0; t < nt; ++t) af->any_eligible |= af->eligible[t];
#if AF_AVX2
  af->dense_rows = __builtin_cpu_supports("avx2");
#endif
  for (int t = 0; t < nt && af->dense_rows; ++t)
    if (m->tree_dofnum[t] >= AF_DENSE_MIN && m->tree_dofnum[t] > af->rows_n) af->rows_n = m->tree_dofnum[t];
  af->small = af->dense_rows && !af->any_eligible && nt <= AF_SMALL_TREES;
  for (int t = 0; t < nt; ++t) af->small &= m->tree_dofnum[t] < AF_DENSE_MIN;
  if (!af->any_eligible) { /* no tree-ordered tree: the dense trees' rows alone */
    af->rows = calloc((size_t)af->rows_n * AF_CHUNK + 1, sizeof(double));
    if (!af->rows || !alloc_lists(af)) {
      grit_afactor_free(af);
      return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the factor of A");
    }
    *out = af;
    return GRIT_OK;
  }
  grit_status s = grit_treechol_create(m, &af->tc, message);
  if (s != GRIT_OK) {
    grit_afactor_free(af);
    return s;
  }
  size_t size = 0;
  for (int t = 0; t < nt; ++t) {
    if (!af->eligible[t]) continue;
    af->off[t] = (int)size;
    size += (size_t)grit_treechol_size(af->tc, t);
    maxn = m->tree_dofnum[t] > maxn ? m->tree_dofnum[t] : maxn;
  }
  af->L = calloc(size + 1, sizeof(double));
  af->scratch = calloc(3 * (size_t)maxn + 1, sizeof(double));
  af->bits = calloc((size_t)maxn / 64 + 1, sizeof(uint64_t));
  af->rows_n = maxn > af->rows_n ? maxn : af->rows_n;
  af->rows = calloc((size_t)af->rows_n * AF_CHUNK, sizeof(double));
  if (!af->L || !af->scratch || !af->bits || !af->rows || !alloc_lists(af)) {
    grit_afactor_free(af);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the factor of A");
  }
  *out = af;
  return GRIT_OK;
}

void grit_afactor_free(grit_afactor *af) {
  if (!af) return;
  grit_treechol_free(af->tc);
  free(af->eligible), free(af->on), free(af->dense), free(af->off), free(af->L), free(af->inv), free(af->scratch), free(af->bits);
  free(af->rows), free(af->cols), free(af->slot), free(af->pend), free(af->npend), free(af->rtree);
  free(af);
}

void grit_afactor_set_dense(grit_afactor *af, int dense) { af->force_dense = dense != 0; }

void grit_afactor_clear(grit_afactor *af) {
  if (!af || !af->any_on) return;
  memset(af->on, 0, (size_t)af->m->ntree);
  af->any_on = 0;
}

int grit_afactor_factor(grit_afactor *af, const double *A, double *Achol, int tree_order) {
  const grit_model *m = af->m;
  grit_afactor_clear(af);
  if (!tree_order || af->force_dense || !af->any_eligible) { /* the dense factor of every tree, as before */
    for (int i = 0; i < m->nM; ++i) Achol[i] = A[i]; /* a loop: memcpy's rep movsb counts a byte per instruction */
    return grit_block_cholesky(m, Achol, NULL);
  }
  int bad = -1;
  for (int t = 0; t < m->ntree; ++t) {
    const int a = m->tree_madr[t], n = m->tree_dofnum[t];
    af->on[t] = af->eligible[t];
    af->dense[t] = !af->eligible[t];
    if (af->dense[t]) { /* the block's copy for the dense factor; the tree order reads A's lower pattern */
      for (int i = a; i < a + n * n; ++i) Achol[i] = A[i];
      continue;
    }
    double lo = 1e300, hi = 0.0;
    if (grit_treechol_factor(af->tc, t, A + a, af->L + af->off[t], af->inv + m->tree_dofadr[t], &lo, &hi) >= 0 &&
        bad < 0)
      bad = t;
  }
  af->any_on = 1;
  const int dbad = grit_block_cholesky(m, Achol, af->dense);
  return dbad >= 0 && (bad < 0 || dbad < bad) ? dbad : bad;
}

int grit_afactor_tree_order(const grit_afactor *af, int t) { return af && af->any_on && af->on[t]; }

int grit_afactor_any(const grit_afactor *af) { return af && af->any_on; }

int grit_afactor_copy_tree(const grit_afactor *af, int t, double *L, double *inv) {
  if (!grit_afactor_tree_order(af, t)) return 0;
  const int size = grit_treechol_size(af->tc, t), n = af->m->tree_dofnum[t];
  const double *S = af->L + af->off[t], *I = af->inv + af->m->tree_dofadr[t];
  for (int i = 0; i < size; ++i) L[i] = S[i]; /* loops: memcpy's rep movsb counts a byte per instruction */
  for (int i = 0; i < n; ++i) inv[i] = I[i];
  return 1;
}

void grit_afactor_solve_tree(const grit_model *m, const grit_afactor *af, const double *Achol, int t, double *x) {
  if (grit_afactor_tree_order(af, t))
    grit_treechol_solve(af->tc, t, af->L + af->off[t], af->inv + m->tree_dofadr[t], x + m->tree_dofadr[t]);
  else
    grit_block_cholesky_solve_tree(m, Achol, t, x);
}

void grit_afactor_set_many(grit_afactor *af, int many) { af->no_many = many == 0; }

void grit_afactor_set_mid_passes(grit_afactor *af, int allow) { af->no_mid = allow == 0; }

void grit_afactor_set_column_lists(grit_afactor *af, int allow) { af->no_lists = allow == 0; }

void grit_afactor_set_small(grit_afactor *af, int allow) { af->no_small = allow == 0; }

int grit_afactor_small(const grit_afactor *af) { return af && af->small && !af->no_small && !af->no_many; }

/* Moves n entries of each of nc columns: to_rows != 0, column q's b[q][i] -> R[i AF_CHUNK + q]; else back.
 * Four columns and four rows at a time with AVX2 (a 4 x 4 transpose in registers) where the processor has
 * it: only moves, the same numbers either way. */
#if AF_AVX2
static __attribute__((target("avx2"))) int move4_avx2(double *const b[4], double *R, int n, int to_rows) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    double *r = R + (size_t)i * AF_CHUNK;
    __m256d x0, x1, x2, x3;
    if (to_rows) x0 = _mm256_loadu_pd(b[0] + i), x1 = _mm256_loadu_pd(b[1] + i), x2 = _mm256_loadu_pd(b[2] + i), x3 = _mm256_loadu_pd(b[3] + i);
    else x0 = _mm256_loadu_pd(r), x1 = _mm256_loadu_pd(r + AF_CHUNK), x2 = _mm256_loadu_pd(r + 2 * AF_CHUNK), x3 = _mm256_loadu_pd(r + 3 * AF_CHUNK);
    const __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1), t2 = _mm256_unpacklo_pd(x2, x3),
                  t3 = _mm256_unpackhi_pd(x2, x3);
    const __m256d y0 = _mm256_permute2f128_pd(t0, t2, 0x20), y1 = _mm256_permute2f128_pd(t1, t3, 0x20),
                  y2 = _mm256_permute2f128_pd(t0, t2, 0x31), y3 = _mm256_permute2f128_pd(t1, t3, 0x31);
    if (to_rows) _mm256_storeu_pd(r, y0), _mm256_storeu_pd(r + AF_CHUNK, y1), _mm256_storeu_pd(r + 2 * AF_CHUNK, y2), _mm256_storeu_pd(r + 3 * AF_CHUNK, y3);
    else _mm256_storeu_pd(b[0] + i, y0), _mm256_storeu_pd(b[1] + i, y1), _mm256_storeu_pd(b[2] + i, y2), _mm256_storeu_pd(b[3] + i, y3);
  }
  for (; i < n; ++i) { /* the last rows one at a time: a row's four values as one vector (was a loop per value) */
    double *r = R + (size_t)i * AF_CHUNK;
    if (to_rows) {
      _mm256_storeu_pd(r, _mm256_setr_pd(b[0][i], b[1][i], b[2][i], b[3][i]));
    } else {
      const __m256d x = _mm256_loadu_pd(r);
      const __m128d lo = _mm256_castpd256_pd128(x), hi = _mm256_extractf128_pd(x, 1);
      _mm_storel_pd(b[0] + i, lo), _mm_storeh_pd(b[1] + i, lo), _mm_storel_pd(b[2] + i, hi), _mm_storeh_pd(b[3] + i, hi);
    }
  }
  return i;
}
#endif

static void move_columns(double *B, int nv, int adr, const int *cols, int nc, double *R, int n, int to_rows) {
  int q = 0;
#if AF_AVX2
  if (__builtin_cpu_supports("avx2"))
    for (; q + 4 <= nc; q += 4) {
      double *b[4];
      for (int l = 0; l < 4; ++l) b[l] = B + (size_t)cols[q + l] * nv + adr;
      const int i0 = move4_avx2(b, R + q, n, to_rows);
      for (int l = 0; l < 4; ++l)
        for (int i = i0; i < n; ++i) {
          if (to_rows) R[(size_t)i * AF_CHUNK + q + l] = b[l][i];
          else b[l][i] = R[(size_t)i * AF_CHUNK + q + l];
        }
    }
#endif
  for (; q < nc; ++q) {
    double *b = B + (size_t)cols[q] * nv + adr;
    for (int i = 0; i < n; ++i) {
      if (to_rows) R[(size_t)i * AF_CHUNK + q] = b[i];
      else b[i] = R[(size_t)i * AF_CHUNK + q];
    }
  }
}

#if AF_AVX2
/* Row i of R, nv vectors of four columns from column q: r_i = (r_i - sum_k L(i, k) r_k) / L(i, i) over
 * k in [k0, k1) with L(i, k) at L[i li + k lk], held in registers (NV: a constant where inlined). */
static inline __attribute__((always_inline, target("avx2"))) void dense_row(const double *L, int li, int lk, int i,
                                                                          int k0, int k1, double *R, int q, int nv) {
  __m256d acc[8];
  double *ri = R + (size_t)i * AF_CHUNK + q;
  for (int v = 0; v < nv; ++v) acc[v] = _mm256_loadu_pd(ri + 4 * v);
  for (int k = k0; k < k1; ++k) {
    const __m256d l = _mm256_set1_pd(L[i * li + k * lk]);
    const double *rk = R + (size_t)k * AF_CHUNK + q;
    for (int v = 0; v < nv; ++v) acc[v] = _mm256_sub_pd(acc[v], _mm256_mul_pd(l, _mm256_loadu_pd(rk + 4 * v)));
  }
  const __m256d d = _mm256_set1_pd(L[i * li + i * lk]);
  for (int v = 0; v < nv; ++v) _mm256_storeu_pd(ri + 4 * v, _mm256_div_pd(acc[v], d));
}

/* Both substitutions on nv vectors of four columns from column q (nv a constant where inlined). */
static inline __attribute__((always_inline, target("avx2"))) void dense_pass(const double *L, int n, double *R, int q,
                                                                           int nv) {
  for (int i = 0; i < n; ++i) dense_row(L, n, 1, i, 0, i, R, q, nv);
  for (int i = n - 1; i >= 0; --i) dense_row(L, 1, n, i, i + 1, n, R, q, nv); /* L^T: row i's are L's column i */
}

/* A dense tree's factor L (n x n, row-major, lower: grit_block_cholesky's) applied to the nc columns held
 * as rows R (row i: the tree's dof i of every column): L Y = B, then L^T X = Y. Each entry takes
 * block_cholesky_solve_one's operations in its order (minus each product in increasing k, then the
 * division; no fused multiply-add): the same bits as column by column. Lanes past nc are zeroed first. */
static __attribute__((target("avx2"))) void dense_rows_avx2(const double *L, int n, double *R, int nc, int no_mid) {
  const int nc4 = (nc + 3) & ~3;
  for (int i = 0; i < n; ++i)
    for (int q = nc; q < nc4; ++q) R[(size_t)i * AF_CHUNK + q] = 0.0;
  /* passes of eight vectors (32 columns), then four, two, one: a pass's loop overhead per product (the
   * broadcast, the row's address, the loop) is paid once for its nv vectors (no_mid: eight, then ones) */
  for (int q = 0; q < nc4;) {
    const int left = (nc4 - q) >> 2;
    const int nv = left >= 8 ? 8 : no_mid ? 1 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    if (nv == 8) dense_pass(L, n, R, q, 8);
    else if (nv == 4) dense_pass(L, n, R, q, 4);
    else if (nv == 2) dense_pass(L, n, R, q, 2);
    else dense_pass(L, n, R, q, 1);
    q += 4 * nv;
  }
}
#endif

#if AF_AVX2
/* Rows i0 .. i0 + c - 1 (c <= 4) of four columns b[0..3] moved between memory and r[0..c-1] (lane l: column
 * l): a 4 x 4 transpose in registers, the rows past c neither read nor written (masked). Only moves. */
static inline __attribute__((always_inline, target("avx2"))) void small_move(double *const b[4], int i0, int c,
                                                                           __m256d *r, int load) {
  const __m256i mk = _mm256_setr_epi64x(-1, c > 1 ? -1 : 0, c > 2 ? -1 : 0, c > 3 ? -1 : 0);
  __m256d x0, x1, x2, x3;
  if (load) {
    if (c == 4) x0 = _mm256_loadu_pd(b[0] + i0), x1 = _mm256_loadu_pd(b[1] + i0), x2 = _mm256_loadu_pd(b[2] + i0), x3 = _mm256_loadu_pd(b[3] + i0);
    else x0 = _mm256_maskload_pd(b[0] + i0, mk), x1 = _mm256_maskload_pd(b[1] + i0, mk), x2 = _mm256_maskload_pd(b[2] + i0, mk), x3 = _mm256_maskload_pd(b[3] + i0, mk);
  } else {
    x0 = r[0], x1 = c > 1 ? r[1] : r[0], x2 = c > 2 ? r[2] : r[0], x3 = c > 3 ? r[3] : r[0];
  }
  const __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1), t2 = _mm256_unpacklo_pd(x2, x3),
                t3 = _mm256_unpackhi_pd(x2, x3);
  const __m256d y0 = _mm256_permute2f128_pd(t0, t2, 0x20), y1 = _mm256_permute2f128_pd(t1, t3, 0x20),
                y2 = _mm256_permute2f128_pd(t0, t2, 0x31), y3 = _mm256_permute2f128_pd(t1, t3, 0x31);
  if (load) {
    r[0] = y0;
    if (c > 1) r[1] = y1;
    if (c > 2) r[2] = y2;
    if (c > 3) r[3] = y3;
  } else if (c == 4) {
    _mm256_storeu_pd(b[0] + i0, y0), _mm256_storeu_pd(b[1] + i0, y1), _mm256_storeu_pd(b[2] + i0, y2), _mm256_storeu_pd(b[3] + i0, y3);
  } else {
    _mm256_maskstore_pd(b[0] + i0, mk, y0), _mm256_maskstore_pd(b[1] + i0, mk, y1);
    _mm256_maskstore_pd(b[2] + i0, mk, y2), _mm256_maskstore_pd(b[3] + i0, mk, y3);
  }
}

/* A dense tree's factor L (n x n, n < AF_DENSE_MIN, a constant where inlined) applied to four columns'
 * rows b[0..3] held in registers, a lane a column: L Y = B, then L^T X = Y, each entry by
 * block_cholesky_solve_one's operations in its order (minus each product in increasing k, then the
 * division; no fused multiply-add): the same bits as column by column. */
static inline __attribute__((always_inline, target("avx2"))) void small_solve4(const double *L, int n,
                                                                             double *const b[4]) {
  __m256d r[AF_DENSE_MIN];
  for (int j = 0; j < n; j += 4) small_move(b, j, n - j < 4 ? n - j : 4, r + j, 1);
  for (int i = 0; i < n; ++i) {
    __m256d s = r[i];
    for (int k = 0; k < i; ++k) s = _mm256_sub_pd(s, _mm256_mul_pd(_mm256_set1_pd(L[i * n + k]), r[k]));
    r[i] = _mm256_div_pd(s, _mm256_set1_pd(L[i * n + i]));
  }
  for (int i = n - 1; i >= 0; --i) {
    __m256d s = r[i];
    for (int k = i + 1; k < n; ++k) s = _mm256_sub_pd(s, _mm256_mul_pd(_mm256_set1_pd(L[k * n + i]), r[k]));
    r[i] = _mm256_div_pd(s, _mm256_set1_pd(L[i * n + i]));
  }
  for (int j = 0; j < n; j += 4) small_move(b, j, n - j < 4 ? n - j : 4, r + j, 0);
}

static __attribute__((target("avx2"))) void small_tree_avx2(const double *L, int n, double *const b[4]) {
  switch (n) { /* each size a constant: the rows stay in registers */
  case 1: small_solve4(L, 1, b); break;
  case 2: small_solve4(L, 2, b); break;
  case 3: small_solve4(L, 3, b); break;
  case 4: small_solve4(L, 4, b); break;
  case 5: small_solve4(L, 5, b); break;
  case 6: small_solve4(L, 6, b); break;
  default: small_solve4(L, 7, b); break;
  }
}

/* grit_afactor_solve_many when af->small: tree by tree, its columns (part[k] < 0 or t) four at a time; a
 * last group of fewer takes zero columns of its own in the other lanes. Columns and trees independent
 * (the trees' blocks are disjoint rows): the same bits as column by column. */
static void small_many(const grit_model *m, const double *Achol, double *B, int nrhs, const int *part) {
  double pad[4][AF_DENSE_MIN];
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const double *L = Achol + m->tree_madr[t];
    double *b[4];
    int nb = 0;
    for (int k = 0; k < nrhs; ++k) {
      if (part && part[k] >= 0 && part[k] != t) continue;
      b[nb++] = B + (size_t)k * m->nv + adr;
      if (nb == 4) small_tree_avx2(L, n, b), nb = 0;
    }
    if (!nb) continue;
    for (int l = nb; l < 4; ++l) {
      for (int i = 0; i < AF_DENSE_MIN; ++i) pad[l][i] = 0.0;
      b[l] = pad[l];
    }
    small_tree_avx2(L, n, b);
  }
}
#endif

/* Whether grit_afactor_solve_many solves tree t's columns as rows in chunks: a tree-ordered tree, or a
 * dense one of AF_DENSE_MIN dofs or more (with AVX2). */
static int by_rows(const grit_model *m, const grit_afactor *af, int t) {
  if (!af || af->no_many) return 0;
  if (af->any_on && af->on[t]) return 1;
  return af->dense_rows && m->tree_dofnum[t] >= AF_DENSE_MIN;
}

/* Columns cols[0..nc-1] of B (nc <= AF_CHUNK), rows of tree t: moved into af->rows (row i: the tree's dof i
 * of every column), solved together (the tree-ordered factor or the dense one), moved back. */
static void solve_chunk(const grit_model *m, const grit_afactor *af, const double *Achol, int t, double *B,
                        const int *cols, int nc) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  move_columns(B, m->nv, adr, cols, nc, af->rows, n, 1);
  if (grit_afactor_tree_order(af, t))
    grit_treechol_solve_rows(af->tc, t, af->L + af->off[t], af->inv + adr, af->rows, AF_CHUNK, nc);
#if AF_AVX2
  else
    dense_rows_avx2(Achol + m->tree_madr[t], n, af->rows, nc, af->no_mid);
#endif
  move_columns(B, m->nv, adr, cols, nc, af->rows, n, 0);
}

/* Column k joins the pending list of tree t (solved by rows); a full list is solved. */
static void pend_column(const grit_model *m, const grit_afactor *af, const double *Achol, int t, double *B, int k) {
  const int sl = af->slot[t];
  int *list = af->pend + (size_t)sl * AF_CHUNK;
  list[af->npend[sl]++] = k;
  if (af->npend[sl] == AF_CHUNK) solve_chunk(m, af, Achol, t, B, list, AF_CHUNK), af->npend[sl] = 0;
}

/* grit_afactor_solve_many in one pass over the columns: column k solved column by column on the trees
 * not solved by rows, and joined to the lists of those that are (the nr >= 1 trees of af->rtree: its tree
 * part[k], or every one where part[k] < 0 or part is NULL), each list solved when full, then the rest tree
 * by tree. Each tree's chunks are the ones the scan tree by tree makes (its columns ascending, AF_CHUNK at
 * a time): the same columns solved together, the same bits; only the order of work on disjoint rows
 * differs. */
static void many_by_lists(const grit_model *m, const grit_afactor *af, const double *Achol, double *B, int nrhs,
                          const int *part, int nr) {
  for (int k = 0; k < nrhs; ++k) {
    double *x = B + (size_t)k * m->nv;
    const int p = part ? part[k] : -1;
    if (p >= 0) {
      if (by_rows(m, af, p)) pend_column(m, af, Achol, p, B, k);
      else grit_afactor_solve_tree(m, af, Achol, p, x);
      continue;
    }
    for (int t = 0; t < m->ntree; ++t)
      if (!by_rows(m, af, t)) grit_afactor_solve_tree(m, af, Achol, t, x);
    for (int e = 0; e < nr; ++e) pend_column(m, af, Achol, af->rtree[e], B, k);
  }
  for (int e = 0; e < nr; ++e) {
    const int t = af->rtree[e], sl = af->slot[t];
    if (!af->npend[sl]) continue;
    solve_chunk(m, af, Achol, t, B, af->pend + (size_t)sl * AF_CHUNK, af->npend[sl]);
    af->npend[sl] = 0;
  }
}

void grit_afactor_solve_many(const grit_model *m, const grit_afactor *af, const double *Achol, double *B, int nrhs,
                             const int *part) {
#if AF_AVX2
  if (af && af->small && !af->no_small && !af->no_many) { /* a few small dense trees: four columns a vector */
    small_many(m, Achol, B, nrhs, part);
    return;
  }
#endif
  if (af && !af->no_many && !af->no_lists) { /* af->rtree: the trees solved by rows, ascending */
    int nr = 0;
    for (int t = 0; t < m->ntree; ++t)
      if (by_rows(m, af, t)) af->rtree[nr++] = t;
    if (nr) { /* (none: column by column below) */
      many_by_lists(m, af, Achol, B, nrhs, part, nr);
      return;
    }
  }
  const int nv = m->nv;
  int any_rows = 0;
  for (int t = 0; t < m->ntree && !any_rows; ++t) any_rows = by_rows(m, af, t);
  for (int k = 0; k < nrhs; ++k) { /* the trees solved column by column */
    double *x = B + (size_t)k * nv;
    if (part && part[k] >= 0) {
      if (!by_rows(m, af, part[k])) grit_afactor_solve_tree(m, af, Achol, part[k], x);
    } else if (!any_rows) {
      grit_afactor_solve(m, af, Achol, x);
    } else {
      for (int t = 0; t < m->ntree; ++t)
        if (!by_rows(m, af, t)) grit_afactor_solve_tree(m, af, Achol, t, x);
    }
  }
  if (!any_rows) return;
  for (int t = 0; t < m->ntree; ++t) { /* the trees solved by rows: their columns in chunks */
    if (!by_rows(m, af, t)) continue;
    int nc = 0;
    for (int k = 0; k < nrhs; ++k) {
      if (part && part[k] >= 0 && part[k] != t) continue; /* column k is zero on tree t's rows */
      af->cols[nc++] = k;
      if (nc == AF_CHUNK) solve_chunk(m, af, Achol, t, B, af->cols, nc), nc = 0;
    }
    if (nc) solve_chunk(m, af, Achol, t, B, af->cols, nc);
  }
}

void grit_afactor_solve(const grit_model *m, const grit_afactor *af, const double *Achol, double *x) {
  if (!af || !af->any_on) {
    grit_block_cholesky_solve(m, Achol, x);
    return;
  }
  for (int t = 0; t < m->ntree; ++t) grit_afactor_solve_tree(m, af, Achol, t, x);
}

double grit_afactor_delassus(const grit_model *m, const grit_afactor *af, const double *Achol, int dim, int ntree,
                             const int tree[2], const double *const J[2], double *tmp) {
  return grit_afactor_delassus_cols(m, af, Achol, dim, ntree, tree, J, NULL, 0, tmp);
}

int grit_afactor_delassus_row(const grit_model *m, const grit_afactor *af, int t, const double *J, const int *cols,
                              int ncols, double *w) {
  if (!af || !af->any_on || !af->on[t] || af->no_cols) return 0;
  if (!grit_treechol_delassus_leaves(af->tc, t, af->L + af->off[t], af->inv + m->tree_dofadr[t], J, cols, ncols, w))
    return 0;
  *w *= 1.0 / 1; /* (grit_afactor_delassus_cols's w / dim: the same operation) */
  return 1;
}

void grit_afactor_set_delassus_cols(grit_afactor *af, int allow) { af->no_cols = !allow; }

void grit_afactor_set_delassus_leaves(grit_afactor *af, int allow) {
  if (af && af->tc) grit_treechol_leaves(af->tc, allow);
}

double grit_afactor_delassus_cols(const grit_model *m, const grit_afactor *af, const double *Achol, int dim,
                                  int ntree, const int tree[2], const double *const J[2], const int *cols, int ncols,
                                  double *tmp) {
  int any = 0;
  for (int k = 0; k < ntree; ++k) any |= grit_afactor_tree_order(af, tree[k]);
  if (!any) return grit_delassus(m, Achol, dim, ntree, tree, J, tmp);
  double w = 0.0;
  for (int k = 0; k < ntree; ++k) {
    const int t = tree[k];
    if (!af->on[t]) {
      w = grit_delassus_tree(m, Achol, dim, t, J[k], tmp, w);
      continue;
    }
    if (cols && !af->no_cols)
      w += grit_treechol_delassus_cols(af->tc, t, af->L + af->off[t], af->inv + m->tree_dofadr[t], J[k], dim, cols,
                                       ncols, af->scratch, af->bits);
    else
      w += grit_treechol_delassus(af->tc, t, af->L + af->off[t], af->inv + m->tree_dofadr[t], J[k], dim, af->scratch,
                                  af->bits);
  }
  return w * (1.0 / dim);
}
