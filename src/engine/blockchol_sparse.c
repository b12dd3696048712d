/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_sparse.c — a big tree's diagonal block factored over its nonzeros in a fill-reducing order.
 *
 * A tree of more than 64 dofs alone in its part (no coupling block) had its n x n block factored densely
 * in dof order, n^3/6 multiply-adds, whatever its pattern: a floating root comes first, and its rows,
 * coupled to every dof, fill the whole factor. MuJoCo's softbox (a free root and 218 one-dof leaves tied
 * by 651 fixed-tendon equalities, a cube's surface mesh) has a sparse H apart from the root's rows. Here
 * the block's pattern (its nonzero entries) is ordered by minimum degree on its graph (ties: the lowest
 * dof; the dense rows, coupled to all, come last), the fill found by the same elimination, and the factor
 * L (H(P, P) = L L^T) computed left-looking over its nonzeros only (a column's multipliers gathered in a
 * dense work vector). The analysis is redone only when the pattern changes (exactly: the order is a
 * function of H, not of the steps before); the factor is taken only when its multiply-adds, weighted for its
 * scalar indexed loops, are fewer than the dense kernel's (decided at the analysis, from the counts; no
 * scene is named). Storage is reserved at creation for a dense factor: nothing is allocated here. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "blockchol_sparse_rows.h"

/* The sparse factor's loops take about this many times the dense AVX2 kernel's instructions per
 * multiply-add (indexed loads and stores, scalar): it is taken when its weighted count is lower. */
#define SPARSE_WEIGHT 4.0

/* A trailing dense block from this size on goes to the dense kernel (its crossover with chol_block). */
#define DENSE_MIN 24

struct grit_bigsparse {
  int tree, n, words;
  int analysed;      /* a pattern has been analysed */
  int use;           /* the analysis found the sparse factor cheaper than the dense block */
  uint64_t *pat;     /* (n x words) the analysed pattern: row i's nonzeros H(i, j), j < i */
  uint64_t *cur;     /* (n x words) the current block's, to compare */
  uint64_t *anc;     /* (n x words) row i's ancestors (M's pattern): in every pattern, so that the mass
                        matrix's entries that round to zero or not (a slide's axis through the root) do
                        not change it from step to step */
  uint64_t *fill;    /* (n x words) node k's neighbours when it was eliminated (L's column), original dofs */
  uint64_t *g;       /* (n x words) the elimination graph during the analysis */
  int *perm, *iperm; /* position j holds dof perm[j]; dof i is at position iperm[i] */
  int *Lp, *Li, *Lo; /* column j's off-diagonal rows Li[Lp[j] .. Lp[j+1]-1] (positions, ascending); Lo: dofs */
  double *Lx;        /* their values */
  double *d, *inv;   /* the pivots and their reciprocals, by position */
  int *rp, *rk, *re; /* row j's entries of earlier columns: column rk[q], entry re[q], q in rp[j] .. rp[j+1]-1 */
  int *ro;           /* column rk[q]'s dof (the row kernels' forward substitution, blockchol_sparse_rows.c) */
  int no_rows;       /* grit_bigsparse_rows_kernel(s, 0): the many-column solves by the loops below */
  unsigned *nzv;     /* (n) the row kernels' scratch */
  double *x;         /* (n) the column being computed, by position */
  double madds;      /* of the factor's loops */
  /* the trailing dense block: positions t0 .. n-1, every entry below the diagonal nonzero (the last
   * clique of the elimination; the root's dofs), factored by the dense kernel (blockchol_big.c) after
   * the sparse columns' updates; t0 = n: none (under DENSE_MIN positions) */
  int t0;
  int *tail;         /* (n) column k < t0's first entry in a row >= t0 */
  double *D;         /* (n x n) the trailing block, row-major */
  double madds_dense; /* of the trailing block's own factorization */
  int no_avx2;       /* grit_bigsparse_kernel(s, 0): the column updates by the plain loop */
  /* Supernodes: column k + 1 continues column k's (cont[k]) when its pattern is column k's less row k + 1.
   * Columns of one supernode that update a later column j (or a trailing row) update the same rows, so
   * their updates are taken together (blockchol_snode.c): each row gathered and stored once for the group,
   * its updates in the same ascending order. rg[q]: the group's length from row list entry q (at its
   * first entry); tg[k]: the same for the trailing block's updates from column k. */
  unsigned char *cont;
  int *rg, *tg;
  int *Ho;           /* entry e's place in H's lower triangle (row-major), for gathering a column of H */
  int no_snodes;     /* grit_bigsparse_snodes(s, 0): one column's update at a time */
  /* H = S + V^T V: S the block (its factor above), V's k rows one-row constraints over most of the tree
   * (grit_bigsparse_lowrank_add), solved by the Woodbury identity: H^-1 = S^-1 - W^T C^-1 W with
   * W = V S^-T (rows), C = I + V S^-1 V^T = R R^T (k x k) */
  int k;
  double *V, *W;     /* (LOWRANK_CAP x n) */
  double *R;         /* (LOWRANK_CAP^2) C's Cholesky factor, lower, row-major */
  double *t;         /* (LOWRANK_CAP x RHS_CHUNK) V y of the columns being solved */
};

static int lowrank_factor(grit_bigsparse *s);

grit_bigsparse *grit_bigsparse_create(const grit_model *m, int tree) {
  const int n = m->tree_dofnum[tree];
  grit_bigsparse *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  const size_t nn = (size_t)n, W = (nn + 63) / 64, tri = nn * (nn - 1) / 2 + 1;
  s->tree = tree, s->n = n, s->words = (int)W;
  s->fill = calloc(nn * W, sizeof(uint64_t));
  s->pat = calloc(nn * W, sizeof(uint64_t));
  s->cur = calloc(nn * W, sizeof(uint64_t));
  s->anc = calloc(nn * W, sizeof(uint64_t));
  const int adr = m->tree_dofadr[tree];
  for (int i = 0; s->anc && i < n; ++i)
    for (int j = m->dof_parent[adr + i]; j >= 0; j = m->dof_parent[j])
      s->anc[(size_t)i * W + (size_t)(j - adr) / 64] |= 1ull << ((j - adr) % 64);
  s->g = calloc(nn * W, sizeof(uint64_t));
  s->perm = malloc(sizeof(int) * nn), s->iperm = malloc(sizeof(int) * nn);
  s->Lp = malloc(sizeof(int) * (nn + 1)), s->rp = malloc(sizeof(int) * (nn + 1));
  s->Li = malloc(sizeof(int) * tri), s->Lo = malloc(sizeof(int) * tri);
  s->rk = malloc(sizeof(int) * tri), s->re = malloc(sizeof(int) * tri), s->ro = malloc(sizeof(int) * tri);
  s->Lx = malloc(sizeof(double) * tri);
  s->V = malloc(sizeof(double) * LOWRANK_CAP * nn), s->W = malloc(sizeof(double) * LOWRANK_CAP * nn);
  s->R = malloc(sizeof(double) * LOWRANK_CAP * LOWRANK_CAP), s->t = malloc(sizeof(double) * LOWRANK_CAP * RHS_CHUNK);
  s->tail = malloc(sizeof(int) * nn), s->D = malloc(sizeof(double) * nn * nn);
  s->d = malloc(sizeof(double) * nn), s->inv = malloc(sizeof(double) * nn), s->x = calloc(nn, sizeof(double));
  s->nzv = calloc(nn, sizeof(unsigned));
  s->cont = calloc(nn, 1), s->rg = malloc(sizeof(int) * tri), s->Ho = malloc(sizeof(int) * tri), s->tg = malloc(sizeof(int) * nn);
  if (!s->fill || !s->pat || !s->cur || !s->anc || !s->g || !s->perm || !s->iperm || !s->Lp || !s->rp || !s->Li || !s->Lo || !s->rk || !s->re || !s->ro ||
      !s->Lx || !s->tail || !s->D || !s->V || !s->W || !s->R || !s->t || !s->d || !s->inv || !s->x || !s->nzv ||
      !s->cont || !s->rg || !s->tg || !s->Ho) {
    grit_bigsparse_free(s);
    return NULL;
  }
  return s;
}

void grit_bigsparse_free(grit_bigsparse *s) {
  if (!s) return;
  free(s->fill), free(s->pat), free(s->cur), free(s->anc), free(s->g), free(s->perm), free(s->iperm), free(s->Lp), free(s->rp), free(s->Li), free(s->Lo);
  free(s->V), free(s->W), free(s->R), free(s->t);
  free(s->tail), free(s->D);
  free(s->rk), free(s->re), free(s->ro), free(s->Lx), free(s->d), free(s->inv), free(s->x), free(s->nzv);
  free(s->cont), free(s->rg), free(s->tg), free(s->Ho);
  free(s);
}

/* The nonzeros of H's lower triangle (row-major n x n; -0 counts as zero, NaN as nonzero) and M's
 * pattern, as bit rows: row i's bits OR the scalar test or, with AVX2, four entries' compare mask. */
#define PATTERN_ROWS(ROW_BITS)                                                                      \
  const int n = s->n, W = s->words;                                                                  \
  memcpy(bits, s->anc, sizeof(uint64_t) * (size_t)n * W);                                           \
  for (int i = 1; i < n; ++i) {                                                                      \
    const double *h = H + (size_t)i * n;                                                             \
    uint64_t *r = bits + (size_t)i * W;                                                              \
    ROW_BITS                                                                                         \
  }

static void pattern_plain(const grit_bigsparse *s, const double *H, uint64_t *bits) {
  PATTERN_ROWS(for (int j = 0; j < i; ++j) r[j >> 6] |= (uint64_t)!(h[j] == 0.0) << (j & 63);)
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
static inline __attribute__((always_inline, target("avx2"))) unsigned nonzero4(const double *h) {
  return (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(h), _mm256_setzero_pd(), _CMP_NEQ_UQ));
}

/* Row h's bits j < i, each word built in a register from sixteen entries' masks at a time. */
static inline __attribute__((always_inline, target("avx2"))) void row_bits_avx2(const double *h, int i, uint64_t *r) {
  for (int w = 0; 64 * w < i; ++w) {
    const int j0 = 64 * w, j1 = i < j0 + 64 ? i : j0 + 64;
    uint64_t acc = 0;
    int j = j0;
    for (; j + 16 <= j1; j += 16) {
      const unsigned b =
          nonzero4(h + j) | nonzero4(h + j + 4) << 4 | nonzero4(h + j + 8) << 8 | nonzero4(h + j + 12) << 12;
      acc |= (uint64_t)b << (j - j0);
    }
    for (; j + 4 <= j1; j += 4) acc |= (uint64_t)nonzero4(h + j) << (j - j0);
    for (; j < j1; ++j) acc |= (uint64_t)!(h[j] == 0.0) << (j - j0);
    r[w] |= acc;
  }
}

static __attribute__((target("avx2"))) void pattern_avx2(const grit_bigsparse *s, const double *H, uint64_t *bits) {
  PATTERN_ROWS(row_bits_avx2(h, i, r);)
}
#endif
#undef PATTERN_ROWS

static void pattern(const grit_bigsparse *s, const double *H, uint64_t *bits) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (!s->no_avx2 && __builtin_cpu_supports("avx2")) {
    pattern_avx2(s, H, bits);
    return;
  }
#endif
  pattern_plain(s, H, bits);
}

static int popcount_row(const uint64_t *r, int W) {
  int c = 0;
  for (int w = 0; w < W; ++w) c += __builtin_popcountll(r[w]);
  return c;
}

/* Minimum degree on H's graph with explicit fill (each elimination makes the node's neighbours a clique),
 * recording each node's neighbours at its elimination: L's column pattern. */
static void order(grit_bigsparse *s) {
  const int n = s->n, W = s->words;
  memcpy(s->g, s->pat, sizeof(uint64_t) * (size_t)n * W);
  for (int i = 1; i < n; ++i) /* mirrored */
    for (int w = 0; w <= i / 64; ++w)
      for (uint64_t x = s->pat[(size_t)i * W + w]; x; x &= x - 1) {
        const int j = 64 * w + __builtin_ctzll(x);
        s->g[(size_t)j * W + i / 64] |= 1ull << (i % 64);
      }
  int *deg = s->Lp; /* scratch until the layout; -1: eliminated */
  for (int i = 0; i < n; ++i) deg[i] = popcount_row(s->g + (size_t)i * W, W);
  for (int p = 0; p < n; ++p) {
    int k = -1;
    for (int i = 0; i < n; ++i)
      if (deg[i] >= 0 && (k < 0 || deg[i] < deg[k])) k = i;
    s->perm[p] = k, s->iperm[k] = p;
    uint64_t *rk = s->g + (size_t)k * W;
    memcpy(s->fill + (size_t)k * W, rk, sizeof(uint64_t) * W);
    deg[k] = -1;
    for (int w = 0; w < W; ++w)
      for (uint64_t x = rk[w]; x; x &= x - 1) {
        const int u = 64 * w + __builtin_ctzll(x);
        uint64_t *ru = s->g + (size_t)u * W;
        for (int v = 0; v < W; ++v) ru[v] |= rk[v];
        ru[u / 64] &= ~(1ull << (u % 64));
        ru[k / 64] &= ~(1ull << (k % 64));
        deg[u] = popcount_row(ru, W);
      }
  }
}

/* The supernodes (nested column patterns) and the update groups they make (struct grit_bigsparse). */
static void groups(grit_bigsparse *s) {
  const int n = s->n, *Lp = s->Lp, *Li = s->Li;
  for (int k = 0; k < n; ++k) {
    const int len = Lp[k + 1] - Lp[k];
    int c = k + 1 < n && len > 0 && Li[Lp[k]] == k + 1 && Lp[k + 2] - Lp[k + 1] == len - 1;
    for (int e = 1; c && e < len; ++e) c = Li[Lp[k] + e] == Li[Lp[k + 1] + e - 1];
    s->cont[k] = (unsigned char)c;
  }
  for (int j = 0; j < n; ++j)
    for (int q = s->rp[j + 1] - 1; q >= s->rp[j]; --q)
      s->rg[q] = q + 1 < s->rp[j + 1] && s->rk[q + 1] == s->rk[q] + 1 && s->cont[s->rk[q]] ? s->rg[q + 1] + 1 : 1;
  for (int k = s->t0 - 1; k >= 0; --k) /* (a column below t0 continued by one below t0: the same tail rows) */
    s->tg[k] = k + 1 < s->t0 && s->cont[k] && s->tail[k] < Lp[k + 1] ? s->tg[k + 1] + 1 : 1;
  for (int j = 0; j < n; ++j)
    for (int e = Lp[j], cj = s->perm[j]; e < Lp[j + 1]; ++e) {
      const int ci = s->Lo[e];
      s->Ho[e] = ci > cj ? ci * n + cj : cj * n + ci;
    }
}

/* L's columns in positions (ascending), the row lists of the left-looking loops, the multiply-adds. */
static void lay_out(grit_bigsparse *s) {
  const int n = s->n, W = s->words;
  uint64_t *col = s->g; /* scratch: one row of position bits */
  int nz = 0;
  s->Lp[0] = 0;
  for (int j = 0; j < n; ++j) {
    memset(col, 0, sizeof(uint64_t) * W);
    const uint64_t *f = s->fill + (size_t)s->perm[j] * W;
    for (int w = 0; w < W; ++w)
      for (uint64_t x = f[w]; x; x &= x - 1) {
        const int q = s->iperm[64 * w + __builtin_ctzll(x)];
        col[q / 64] |= 1ull << (q % 64);
      }
    for (int w = 0; w < W; ++w)
      for (uint64_t x = col[w]; x; x &= x - 1) {
        const int q = 64 * w + __builtin_ctzll(x);
        s->Li[nz] = q, s->Lo[nz++] = s->perm[q];
      }
    s->Lp[j + 1] = nz;
  }
  int *cnt = s->rp;
  memset(cnt, 0, sizeof(int) * (size_t)(n + 1));
  for (int e = 0; e < nz; ++e) cnt[s->Li[e] + 1]++;
  for (int j = 0; j < n; ++j) cnt[j + 1] += cnt[j];
  int *cur = (int *)s->g; /* scratch, n ints (the bit rows hold n * W * 2 >= n of them) */
  for (int j = 0; j < n; ++j) cur[j] = s->rp[j];
  int t0 = n;
  while (t0 > 0 && s->Lp[t0] - s->Lp[t0 - 1] == n - t0) --t0; /* column t0 - 1 has every row below */
  s->t0 = n - t0 >= DENSE_MIN ? t0 : n;
  double madds = 0.0, md = 0.0;
  for (int k = 0; k < n; ++k) {
    s->tail[k] = s->Lp[k + 1];
    for (int e = s->Lp[k]; e < s->Lp[k + 1]; ++e) {
      const int q = cur[s->Li[e]]++;
      s->rk[q] = k, s->re[q] = e, s->ro[q] = s->perm[k];
      if (s->Li[e] >= s->t0 && s->tail[k] == s->Lp[k + 1]) s->tail[k] = e;
      /* row Li[e]'s update from column k: the entries from e on */
      if (k >= s->t0) md += (double)(s->Lp[k + 1] - e);
      else madds += (double)(s->Lp[k + 1] - e);
    }
  }
  s->madds = madds + md + nz;
  s->madds_dense = md;
  groups(s);
}

void grit_bigsparse_prepare(grit_bigsparse *s, const double *H, int allow) {
  if (!allow) {
    s->use = 0;
    return;
  }
  const size_t bytes = sizeof(uint64_t) * (size_t)s->n * s->words;
  pattern(s, H, s->cur);
  /* the order is that of the current pattern (a function of H alone, not of the steps before) */
  if (s->analysed && !memcmp(s->cur, s->pat, bytes)) return;
  memcpy(s->pat, s->cur, bytes);
  order(s);
  lay_out(s);
  s->analysed = 1;
  const double n = s->n;
  s->use = SPARSE_WEIGHT * (s->madds - s->madds_dense) + s->madds_dense < n * n * n / 6.0;
}

int grit_bigsparse_use(const grit_bigsparse *s) { return s->use; }

double grit_bigsparse_flops(const grit_bigsparse *s) { return 2.0 * s->madds; }

/* The trailing dense block's entries of H (before the sparse columns' updates, FACTOR_COLUMNS). */
static void trailing_init(grit_bigsparse *s, const double *H) {
  const int n = s->n, t0 = s->t0, nt = n - t0;
  double *D = s->D;
  for (int r = 0; r < nt; ++r)
    for (int c = 0; c <= r; ++c) {
      const int cr = s->perm[t0 + r], cc = s->perm[t0 + c];
      D[(size_t)r * nt + c] = cr > cc ? H[(size_t)cr * n + cc] : H[(size_t)cc * n + cr];
    }
}

/* The trailing dense block after the sparse columns' updates: the dense kernel, its columns written back
 * into L's. Returns the failing dof or -1. */
static int factor_trailing(grit_bigsparse *s, double *lo, double *hi) {
  const int n = s->n, t0 = s->t0, nt = n - t0;
  double *D = s->D, *Lx = s->Lx;
  const int bad = grit_blockchol_chol_big(D, nt, s->inv + t0, grit_blockchol_have_avx2());
  if (bad >= 0) return s->perm[t0 + bad];
  for (int c = 0; c < nt; ++c) {
    const double r = D[(size_t)c * nt + c];
    s->d[t0 + c] = r;
    *lo = r < *lo ? r : *lo;
    *hi = r > *hi ? r : *hi;
    double *l = Lx + s->Lp[t0 + c] - (c + 1);
    for (int q = c + 1; q < nt; ++q) l[q] = D[(size_t)q * nt + c];
  }
  return -1;
}

/* x[Li[e]] -= Lx[e] l for e in [e0, e1): the column update of the left-looking loop (Li's rows distinct). */
static inline __attribute__((always_inline)) void update_plain(double *x, const int *Li, const double *Lx, int e0,
                                                              int e1, double l) {
  for (int e = e0; e < e1; ++e) x[Li[e]] -= Lx[e] * l;
}

/* The sparse columns 0 .. t0-1, left-looking; UPDATE is the column update. Returns the failing dof or -1. */
#define FACTOR_COLUMNS(UPDATE)                                                                          \
  const int n = s->n, *Li = s->Li, *Lp = s->Lp;                                                         \
  double *x = s->x, *Lx = s->Lx;                                                                        \
  for (int j = 0; j < s->t0; ++j) {                                                                     \
    const int cj = s->perm[j];                                                                          \
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) { /* column cj of H, from its lower triangle */            \
      const int ci = s->Lo[e];                                                                          \
      x[Li[e]] = ci > cj ? H[(size_t)ci * n + cj] : H[(size_t)cj * n + ci];                             \
    }                                                                                                   \
    double dj = H[(size_t)cj * n + cj];                                                                 \
    for (int q = s->rp[j]; q < s->rp[j + 1]; ++q) { /* the earlier columns k with L(j, k) != 0 */      \
      const int k = s->rk[q], e0 = s->re[q];                                                            \
      const double l = Lx[e0];                                                                          \
      dj -= l * l;                                                                                      \
      UPDATE(x, Li, Lx, e0 + 1, Lp[k + 1], l);                                                          \
    }                                                                                                   \
    if (!(dj > 0.0) || !isfinite(dj)) return cj;                                                        \
    const double r = sqrt(dj), inv = 1.0 / r;                                                           \
    s->d[j] = r, s->inv[j] = inv;                                                                       \
    *lo = r < *lo ? r : *lo;                                                                            \
    *hi = r > *hi ? r : *hi;                                                                            \
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) Lx[e] = x[Li[e]] * inv;                                     \
  }                                                                                                     \
  const int t0 = s->t0, nt = n - t0;                                                                    \
  for (int k = 0; k < t0 && t0 < n; ++k) /* their updates of the trailing block's lower triangle */    \
    for (int er = s->tail[k]; er < Lp[k + 1]; ++er)                                                     \
      UPDATE(s->D + (size_t)(Li[er] - t0) * nt - t0, Li, Lx, s->tail[k], er + 1, Lx[er]);               \
  return -1;

static __attribute__((noinline)) int factor_columns_plain(grit_bigsparse *s, const double *H, double *lo, double *hi) {
  FACTOR_COLUMNS(update_plain)
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* update_plain four entries at a time: x's four rows gathered, the same product and difference per entry
 * (no fused multiply-add: the same bits), stored back one by one. */
static inline __attribute__((always_inline, target("avx2"))) void update_avx2(double *x, const int *Li,
                                                                            const double *Lx, int e0, int e1,
                                                                            double l) {
  const __m256d lv = _mm256_set1_pd(l);
  int e = e0;
  for (; e + 4 <= e1; e += 4) {
    const __m128i idx = _mm_loadu_si128((const __m128i *)(Li + e));
    const __m256d v = _mm256_sub_pd(_mm256_i32gather_pd(x, idx, 8), _mm256_mul_pd(_mm256_loadu_pd(Lx + e), lv));
    const __m128d a = _mm256_castpd256_pd128(v), b = _mm256_extractf128_pd(v, 1);
    _mm_storel_pd(x + Li[e], a), _mm_storeh_pd(x + Li[e + 1], a);
    _mm_storel_pd(x + Li[e + 2], b), _mm_storeh_pd(x + Li[e + 3], b);
  }
  for (; e < e1; ++e) x[Li[e]] -= Lx[e] * l;
}

static __attribute__((noinline, target("avx2"))) int factor_columns_avx2(grit_bigsparse *s, const double *H,
                                                                        double *lo, double *hi) {
  FACTOR_COLUMNS(update_avx2)
}

/* x[idx[t]] for t = 0 .. 3 := v's four lanes (distinct rows). */
static inline __attribute__((always_inline, target("avx2"))) void scatter4(double *x, const int *idx, __m256d v) {
  const __m128d a = _mm256_castpd256_pd128(v), b = _mm256_extractf128_pd(v, 1);
  _mm_storel_pd(x + idx[0], a), _mm_storeh_pd(x + idx[1], a);
  _mm_storel_pd(x + idx[2], b), _mm_storeh_pd(x + idx[3], b);
}

/* tail_mask + 4 - r: the first r of four lanes set; and its low 32 bits of each lane (idx's mask). */
static const int64_t tail_mask[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
static inline __attribute__((always_inline, target("avx2"))) __m128i lanes_lo32(__m256i v) {
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)));
}

#define GATHER4(t) _mm256_i32gather_pd(x, _mm_loadu_si128((const __m128i *)(idx + (t))), 8)
#define SUB4(a, t) a = _mm256_sub_pd(a, _mm256_mul_pd(_mm256_loadu_pd(v + (t)), l))

/* The updates of a supernode's columns ka .. ka+g-1 (struct grit_bigsparse): x[idx[t]] -= v_k[t] l_k for
 * t < m and each k in ascending order, v_k = Lx + Lp[k + 1] - vo, l_k = Lx[Lp[k + 1] - lo]. Each row is
 * gathered and stored once for the group (sixteen rows in four registers, then eight, four, the last one
 * to three masked), its g products subtracted in the order and with the operations of update_avx2 (no
 * fused multiply-add): the same bits. */
static inline __attribute__((always_inline, target("avx2"))) void update_group(double *x, const int *idx, int m,
                                                                             const double *Lx, const int *Lp,
                                                                             int ka, int g, int vo, int lo) {
  const int *end = Lp + ka + 1;
  int t = 0;
  for (; t + 16 <= m; t += 16) {
    __m256d a0 = GATHER4(t), a1 = GATHER4(t + 4), a2 = GATHER4(t + 8), a3 = GATHER4(t + 12);
    for (int k = 0; k < g; ++k) {
      const double *v = Lx + end[k] - vo + t;
      const __m256d l = _mm256_broadcast_sd(Lx + end[k] - lo);
      SUB4(a0, 0), SUB4(a1, 4), SUB4(a2, 8), SUB4(a3, 12);
    }
    scatter4(x, idx + t, a0), scatter4(x, idx + t + 4, a1), scatter4(x, idx + t + 8, a2), scatter4(x, idx + t + 12, a3);
  }
  if (t + 8 <= m) { /* (eight rows in two registers: at most once) */
    __m256d a0 = GATHER4(t), a1 = GATHER4(t + 4);
    for (int k = 0; k < g; ++k) {
      const double *v = Lx + end[k] - vo + t;
      const __m256d l = _mm256_broadcast_sd(Lx + end[k] - lo);
      SUB4(a0, 0), SUB4(a1, 4);
    }
    scatter4(x, idx + t, a0), scatter4(x, idx + t + 4, a1);
    t += 8;
  }
  for (; t + 4 <= m; t += 4) {
    __m256d a0 = GATHER4(t);
    for (int k = 0; k < g; ++k) {
      const double *v = Lx + end[k] - vo + t;
      const __m256d l = _mm256_broadcast_sd(Lx + end[k] - lo);
      SUB4(a0, 0);
    }
    scatter4(x, idx + t, a0);
  }
  if (t < m) { /* the last one to three rows as one vector, its other lanes masked off */
    const __m256i mk = _mm256_loadu_si256((const __m256i *)(tail_mask + 4 - (m - t)));
    const __m128i ri = _mm_maskload_epi32(idx + t, lanes_lo32(mk));
    __m256d a0 = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, ri, _mm256_castsi256_pd(mk), 8);
    for (int k = 0; k < g; ++k) {
      const __m256d l = _mm256_broadcast_sd(Lx + end[k] - lo);
      a0 = _mm256_sub_pd(a0, _mm256_mul_pd(_mm256_maskload_pd(Lx + end[k] - vo + t, mk), l));
    }
    double r[4];
    _mm256_storeu_pd(r, a0);
    for (int q = 0; q < m - t; ++q) x[idx[t + q]] = r[q];
  }
}
#undef GATHER4
#undef SUB4

/* factor_columns_avx2 with the updates of a supernode's columns taken together (update_group): the same
 * updates of each entry in the same order. Returns the failing dof or -1. */
static __attribute__((noinline, target("avx2"))) int factor_columns_snode(grit_bigsparse *s, const double *H,
                                                                         double *lo, double *hi) {
  const int n = s->n, *Li = s->Li, *Lp = s->Lp;
  double *x = s->x, *Lx = s->Lx;
  for (int j = 0; j < s->t0; ++j) {
    const int cj = s->perm[j], e1 = Lp[j + 1];
    int e = Lp[j];
    for (; e + 4 <= e1; e += 4) /* column cj of H, from its lower triangle (four entries gathered) */
      scatter4(x, Li + e, _mm256_i32gather_pd(H, _mm_loadu_si128((const __m128i *)(s->Ho + e)), 8));
    for (; e < e1; ++e) x[Li[e]] = H[s->Ho[e]];
    double dj = H[(size_t)cj * n + cj];
    for (int q = s->rp[j]; q < s->rp[j + 1];) { /* the earlier columns k with L(j, k) != 0, by groups */
      const int g = s->rg[q], k = s->rk[q], e0 = s->re[q], m = Lp[k + 1] - e0 - 1;
      for (int r = 0; r < g; ++r) {
        const double l = Lx[s->re[q + r]];
        dj -= l * l;
      }
      if (g == 1) update_avx2(x, Li, Lx, e0 + 1, Lp[k + 1], Lx[e0]);
      else update_group(x, Li + e0 + 1, m, Lx, Lp, k, g, m, m + 1);
      q += g;
    }
    if (!(dj > 0.0) || !isfinite(dj)) return cj;
    const double r = sqrt(dj), inv = 1.0 / r;
    s->d[j] = r, s->inv[j] = inv;
    *lo = r < *lo ? r : *lo;
    *hi = r > *hi ? r : *hi;
    const __m256d iv = _mm256_set1_pd(inv);
    for (e = Lp[j]; e + 4 <= e1; e += 4)
      _mm256_storeu_pd(Lx + e,
                       _mm256_mul_pd(_mm256_i32gather_pd(x, _mm_loadu_si128((const __m128i *)(Li + e)), 8), iv));
    for (; e < e1; ++e) Lx[e] = x[Li[e]] * inv;
  }
  const int t0 = s->t0, nt = n - t0;
  for (int k = 0; k < t0 && t0 < n;) { /* their updates of the trailing block's lower triangle, by groups */
    const int g = s->tg[k], tk = s->tail[k], M = Lp[k + 1] - tk;
    for (int er = tk; er < Lp[k + 1]; ++er) {
      double *row = s->D + (size_t)(Li[er] - t0) * nt - t0;
      if (g == 1) update_avx2(row, Li, Lx, tk, er + 1, Lx[er]);
      else update_group(row, Li + tk, er + 1 - tk, Lx, Lp, k, g, M, Lp[k + 1] - er);
    }
    k += g;
  }
  return -1;
}
#endif
#undef FACTOR_COLUMNS

void grit_bigsparse_kernel(grit_bigsparse *s, int allow) { s->no_avx2 = !allow; }
void grit_bigsparse_snodes(grit_bigsparse *s, int allow) { s->no_snodes = !allow; }

int grit_bigsparse_pattern_same(grit_bigsparse *s, const double *H) {
  pattern_plain(s, H, s->g);
  pattern(s, H, s->cur);
  return !memcmp(s->g, s->cur, sizeof(uint64_t) * (size_t)s->n * s->words);
}

int grit_bigsparse_grouped(const grit_bigsparse *s) {
  int c = 0;
  for (int j = 0; s->analysed && j < s->n; ++j)
    for (int q = s->rp[j]; q < s->rp[j + 1]; q += s->rg[q]) c += s->rg[q] > 1 ? s->rg[q] : 0;
  return c;
}

int grit_bigsparse_factor(grit_bigsparse *s, const double *H, double *lo, double *hi) {
  const int n = s->n;
  if (s->t0 < n) trailing_init(s, H);
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  const int avx2 = !s->no_avx2 && __builtin_cpu_supports("avx2");
  const int bad0 = avx2 && !s->no_snodes ? factor_columns_snode(s, H, lo, hi)
                   : avx2                ? factor_columns_avx2(s, H, lo, hi)
                                         : factor_columns_plain(s, H, lo, hi);
#else
  const int bad0 = factor_columns_plain(s, H, lo, hi);
#endif
  if (bad0 >= 0) return bad0;
  if (s->t0 < n) {
    const int bad = factor_trailing(s, lo, hi);
    if (bad >= 0) return bad;
  }
  if (s->k > 0 && !lowrank_factor(s)) return s->perm[n - 1]; /* (a row held apart is not finite) */
  return -1;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* solve_s with AVX2: the forward substitution's updates four entries at a time (gathered, the same
 * product and difference per entry, stored one by one), the backward one's products four at a time
 * (gathered) and subtracted one after the other in order: the same bits. */
static __attribute__((noinline, target("avx2"))) void solve_s_avx2(const grit_bigsparse *s, double *y) {
  const int n = s->n, *Lo = s->Lo, *Lp = s->Lp;
  const double *Lx = s->Lx;
  for (int j = 0; j < n; ++j) {
    const double z = y[s->perm[j]] * s->inv[j];
    y[s->perm[j]] = z;
    update_avx2(y, Lo, Lx, Lp[j], Lp[j + 1], z);
  }
  for (int j = n - 1; j >= 0; --j) {
    double t = y[s->perm[j]];
    int e = Lp[j];
    for (; e + 4 <= Lp[j + 1]; e += 4) {
      double p[4];
      _mm256_storeu_pd(p, _mm256_mul_pd(_mm256_loadu_pd(Lx + e),
                                        _mm256_i32gather_pd(y, _mm_loadu_si128((const __m128i *)(Lo + e)), 8)));
      t -= p[0], t -= p[1], t -= p[2], t -= p[3];
    }
    for (; e < Lp[j + 1]; ++e) t -= Lx[e] * y[Lo[e]];
    y[s->perm[j]] = t * s->inv[j];
  }
}
#endif

/* S y = b in place. */
static void solve_s(const grit_bigsparse *s, double *y) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (!s->no_avx2 && __builtin_cpu_supports("avx2")) {
    solve_s_avx2(s, y);
    return;
  }
#endif
  const int n = s->n, *Lo = s->Lo, *Lp = s->Lp;
  const double *Lx = s->Lx;
  for (int j = 0; j < n; ++j) { /* L z = P y, z kept at the dofs' places */
    const double z = y[s->perm[j]] * s->inv[j];
    y[s->perm[j]] = z;
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) y[Lo[e]] -= Lx[e] * z;
  }
  for (int j = n - 1; j >= 0; --j) { /* L^T w = z */
    double t = y[s->perm[j]];
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) t -= Lx[e] * y[Lo[e]];
    y[s->perm[j]] = t * s->inv[j];
  }
}

void grit_bigsparse_solve(grit_bigsparse *s, double *y) {
  solve_s(s, y);
  const int n = s->n, k = s->k;
  if (k == 0) return;
  double t[LOWRANK_CAP];
  for (int r = 0; r < k; ++r) { /* t = R^-1 V y */
    const double *v = s->V + (size_t)r * n;
    double a = 0.0;
    for (int i = 0; i < n; ++i) a += v[i] * y[i];
    for (int c = 0; c < r; ++c) a -= s->R[r * LOWRANK_CAP + c] * t[c];
    t[r] = a / s->R[r * LOWRANK_CAP + r];
  }
  for (int r = k - 1; r >= 0; --r) { /* t := R^-T t */
    double a = t[r];
    for (int c = r + 1; c < k; ++c) a -= s->R[c * LOWRANK_CAP + r] * t[c];
    t[r] = a / s->R[r * LOWRANK_CAP + r];
  }
  for (int r = 0; r < k; ++r) { /* y -= W^T t */
    const double *w = s->W + (size_t)r * n;
    for (int i = 0; i < n; ++i) y[i] -= w[i] * t[r];
  }
}

/* The Woodbury correction of grit_bigsparse_solve for nc columns held as rows. */
static void correct_rows(grit_bigsparse *s, double *Y, int stride, int nc) {
  const int n = s->n, k = s->k;
  double *t = s->t;
  for (int r = 0; r < k; ++r) {
    double *tr = t + (size_t)r * RHS_CHUNK;
    const double *v = s->V + (size_t)r * n;
    if (s->no_rows || !grit_sparse_rows_lowrank_dot(v, n, Y, stride, nc, tr)) {
      for (int q = 0; q < nc; ++q) tr[q] = 0.0;
      for (int i = 0; i < n; ++i) {
        const double vi = v[i], *yi = Y + (size_t)i * stride;
        if (vi != 0.0)
          for (int q = 0; q < nc; ++q) tr[q] += vi * yi[q];
      }
    }
    for (int c = 0; c < r; ++c) {
      const double l = s->R[r * LOWRANK_CAP + c], *tc = t + (size_t)c * RHS_CHUNK;
      for (int q = 0; q < nc; ++q) tr[q] -= l * tc[q];
    }
    const double inv = 1.0 / s->R[r * LOWRANK_CAP + r];
    for (int q = 0; q < nc; ++q) tr[q] *= inv;
  }
  for (int r = k - 1; r >= 0; --r) {
    double *tr = t + (size_t)r * RHS_CHUNK;
    for (int c = r + 1; c < k; ++c) {
      const double l = s->R[c * LOWRANK_CAP + r], *tc = t + (size_t)c * RHS_CHUNK;
      for (int q = 0; q < nc; ++q) tr[q] -= l * tc[q];
    }
    const double inv = 1.0 / s->R[r * LOWRANK_CAP + r];
    for (int q = 0; q < nc; ++q) tr[q] *= inv;
  }
  if (!s->no_rows && grit_sparse_rows_lowrank_sub(s->W, k, n, t, RHS_CHUNK, Y, stride, nc)) return;
  for (int i = 0; i < n; ++i) {
    double *yi = Y + (size_t)i * stride;
    for (int r = 0; r < k; ++r) {
      const double w = s->W[(size_t)r * n + i], *tr = t + (size_t)r * RHS_CHUNK;
      for (int q = 0; q < nc; ++q) yi[q] -= w * tr[q];
    }
  }
}

/* The rows' kernels: y -= l x and y *= a over nc columns (distinct rows: restrict lets them vectorize). */
static inline __attribute__((always_inline)) void row_sub(double *restrict y, const double *restrict x, double l,
                                                          int nc) {
  for (int q = 0; q < nc; ++q) y[q] -= l * x[q];
}

static inline __attribute__((always_inline)) void row_scale(double *restrict y, double a, int nc) {
  for (int q = 0; q < nc; ++q) y[q] *= a;
}

/* S's substitutions on nc columns held as rows (the same operations on each column as grit_bigsparse_solve's
 * on one: multiplications and subtractions, no fused multiply-add, in any instruction set). */
static inline __attribute__((always_inline)) void solve_rows_in(const grit_bigsparse *s, double *Y, int stride,
                                                                int nc) {
  const int n = s->n, *Lo = s->Lo, *Lp = s->Lp;
  const double *Lx = s->Lx;
  for (int j = 0; j < n; ++j) {
    double *yj = Y + (size_t)s->perm[j] * stride;
    row_scale(yj, s->inv[j], nc);
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) row_sub(Y + (size_t)Lo[e] * stride, yj, Lx[e], nc);
  }
  for (int j = n - 1; j >= 0; --j) {
    double *yj = Y + (size_t)s->perm[j] * stride;
    for (int e = Lp[j]; e < Lp[j + 1]; ++e) row_sub(yj, Y + (size_t)Lo[e] * stride, Lx[e], nc);
    row_scale(yj, s->inv[j], nc);
  }
}

static __attribute__((noinline)) void solve_rows_base(const grit_bigsparse *s, double *Y, int stride, int nc) {
  solve_rows_in(s, Y, stride, nc);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static __attribute__((noinline, target("avx2"))) void solve_rows_avx2(const grit_bigsparse *s, double *Y, int stride,
                                                                     int nc) {
  solve_rows_in(s, Y, stride, nc);
}
#endif

void grit_bigsparse_rows_kernel(grit_bigsparse *s, int allow) { s->no_rows = !allow; }

void grit_bigsparse_solve_rows(grit_bigsparse *s, double *Y, int stride, int nc) {
  const grit_sparse_rows f = {s->n, s->perm, s->Lp, s->Lo, s->rp, s->ro, s->re, s->Lx, s->inv, s->nzv};
  if (!s->no_rows && grit_sparse_rows_solve(&f, Y, stride, nc)) {
    if (s->k > 0) correct_rows(s, Y, stride, nc);
    return;
  }
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) solve_rows_avx2(s, Y, stride, nc);
  else solve_rows_base(s, Y, stride, nc);
#else
  solve_rows_base(s, Y, stride, nc);
#endif
  if (s->k > 0) correct_rows(s, Y, stride, nc);
}

void grit_bigsparse_lowrank_clear(grit_bigsparse *s) { s->k = 0; }

int grit_bigsparse_lowrank_add(grit_bigsparse *s, const double *J, double g) {
  if (s->k >= LOWRANK_CAP || !(g > 0.0)) return 0;
  const double r = sqrt(g);
  double *v = s->V + (size_t)s->k++ * s->n;
  for (int i = 0; i < s->n; ++i) v[i] = r * J[i];
  return 1;
}

int grit_bigsparse_lowrank_rows(const grit_bigsparse *s) { return s->k; }

void grit_bigsparse_lowrank_to_dense(const grit_bigsparse *s, double *D) {
  const int n = s->n;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double a = 0.0;
      for (int r = 0; r < s->k; ++r) a += s->V[(size_t)r * n + i] * s->V[(size_t)r * n + j];
      D[(size_t)i * n + j] += a;
      if (j != i) D[(size_t)j * n + i] += a;
    }
}

/* After the factor of S: W = V S^-T by rows and C = I + W V^T's Cholesky factor R (C >= I: it fails only
 * on a NaN or infinite row, then 0). */
static int lowrank_factor(grit_bigsparse *s) {
  const int n = s->n, k = s->k;
  for (int r = 0; r < k; ++r) {
    double *w = s->W + (size_t)r * n;
    memcpy(w, s->V + (size_t)r * n, sizeof(double) * (size_t)n);
    solve_s(s, w);
  }
  for (int r = 0; r < k; ++r)
    for (int c = 0; c <= r; ++c) {
      double a = r == c ? 1.0 : 0.0;
      const double *v = s->V + (size_t)r * n, *w = s->W + (size_t)c * n;
      for (int i = 0; i < n; ++i) a += v[i] * w[i];
      for (int q = 0; q < c; ++q) a -= s->R[r * LOWRANK_CAP + q] * s->R[c * LOWRANK_CAP + q];
      if (r == c && !(a > 0.0 && isfinite(a))) return 0;
      s->R[r * LOWRANK_CAP + c] = r == c ? sqrt(a) : a / s->R[c * LOWRANK_CAP + c];
    }
  return 1;
}
