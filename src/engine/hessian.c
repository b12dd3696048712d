/* SPDX-License-Identifier: Apache-2.0 */
/* hessian.c — block-sparse assembly of the contact Hessian and its dense (densechol.c: not LAPACK, for
 * results independent of BLAS threads), block (blockchol.c) or supernodal
 * (CHOLMOD, AMD ordering) Cholesky factorization. See hessian.h. */
#include "hessian.h"

#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "densechol.h"
#include "status_internal.h"
#include "treechol.h"

/* The dense buffer is allocated up to this nv (8 MB); beyond it only the sparse path exists. */
#define GRIT_HESSIAN_DENSE_BUFFER_MAX_NV 1024

struct grit_hessian {
  const grit_model *m;
  int nv, dense_max_nv, force; /* force: -1 automatic, 0 dense, 1 block-sparse, 2 CHOLMOD */

  double *diag; /* (nM) tree blocks of H */

  /* coupled pairs (a < b), in insertion order; block (b rows x a cols) at cblock + poff[k] */
  int npairs, cap_pairs;
  int *pa, *pb, *poff;
  double *cblock;
  size_t cblock_used, cblock_cap;
  int *hash;        /* open addressing: pair index + 1, 0 empty; 2 cap_pairs slots */
  int *tree_pairs;  /* per tree, the pairs with pa == tree, sorted by pb: CSR over trees */
  int *tree_pairadr;
  int *tree_fill;    /* scratch: pairs placed per tree */

  /* dense path */
  double *Hd; /* nv x nv, column-major */

  /* block-sparse path (blockchol.h) */
  grit_blockchol *bc;

  /* CHOLMOD path (grit_step_settings.sparse_factor = GRIT_FACTOR_CHOLMOD) */
  cholmod_common cc;
  cholmod_sparse *Hs;
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E;
  int sym_npairs; /* pattern of the current symbolic analysis: npairs and its pairs (sorted) */
  int *sym_pa, *sym_pb;
  int sym_valid;
  int sym_path;   /* the path (1 block, 2 CHOLMOD) whose analysis that is */
  double sym_flops; /* CHOLMOD's flop count of the analysed pattern's factorization */

  /* the tree-ordered factorization of a tree's block (treechol.h) on the block-sparse path */
  unsigned char *tc_ok; /* (ntree) the tree may take it: TREECHOL_MIN_NV to 64 dofs, A with M's pattern */
  unsigned char *chain; /* (ntree) every constraint added to it since begin kept the pattern */
  unsigned char *fresh; /* (ntree) its block in diag equals A off the lower pattern (no other term added) */
  int any_tc;           /* some tree may */
  grit_treechol *tcp;   /* the trees' compact patterns (for the pattern copies) */

  /* scratch for trees of more than 64 dofs (NULL when none): a constraint's nonzero columns (maxn),
   * its J on them and G J (3 x maxn each), a row of J^T G J (maxn), G J of two trees (2 x 3 x maxn) */
  int *big_idx;
  double *big_jc, *big_gj, *big_row, *big_gjt;
  int no_big_chain; /* the old paths: chains of at most 64 columns, G J of a big tree on the fly */

  const unsigned char *tree_on; /* grit_hessian_restrict's trees (NULL: all) */
  int factored;    /* a factor of the current H exists */
  int last_path;   /* the path that computed it: 0 dense, 1 block-sparse, 2 CHOLMOD */
};

/* Trees from this size on take the tree-ordered factorization when their constraints keep the pattern
 * (the chain assembly below, from CHAIN_MIN_NV dofs, finds whether they do). Measured: see
 * docs/performance.md (stop 17, branch treechol). */
#define TREECHOL_MIN_NV 12

static void init_tree_order(grit_hessian *h) {
  const grit_model *m = h->m;
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    h->tc_ok[t] = n >= TREECHOL_MIN_NV && n <= 64 && grit_treechol_a_keeps_pattern(m, t);
    h->any_tc |= h->tc_ok[t];
  }
}

grit_status grit_hessian_create(const grit_model *m, int max_pairs, int dense_max_nv, grit_hessian **out,
                                char *message) {
  *out = NULL;
  grit_hessian *h = calloc(1, sizeof *h);
  if (!h) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  h->m = m;
  h->nv = m->nv;
  h->dense_max_nv = dense_max_nv;
  h->force = -1;
  int maxn = 0;
  for (int t = 0; t < m->ntree; ++t) maxn = m->tree_dofnum[t] > maxn ? m->tree_dofnum[t] : maxn;
  long long tree_pairs = (long long)m->ntree * (m->ntree - 1) / 2;
  h->cap_pairs = (int)(max_pairs < tree_pairs ? max_pairs : tree_pairs);
  if (h->cap_pairs < 1) h->cap_pairs = 1;
  h->cblock_cap = (size_t)h->cap_pairs * (size_t)maxn * (size_t)maxn;
  h->diag = calloc((size_t)m->nM + 1, sizeof(double));
  h->pa = calloc((size_t)h->cap_pairs, sizeof(int));
  h->pb = calloc((size_t)h->cap_pairs, sizeof(int));
  h->poff = calloc((size_t)h->cap_pairs, sizeof(int));
  h->sym_pa = calloc((size_t)h->cap_pairs, sizeof(int));
  h->sym_pb = calloc((size_t)h->cap_pairs, sizeof(int));
  h->cblock = calloc(h->cblock_cap + 1, sizeof(double));
  h->hash = calloc(2 * (size_t)h->cap_pairs, sizeof(int));
  h->tree_pairs = calloc((size_t)h->cap_pairs, sizeof(int));
  h->tree_pairadr = calloc((size_t)m->ntree + 1, sizeof(int));
  h->tree_fill = calloc((size_t)m->ntree + 1, sizeof(int));
  if (h->nv <= GRIT_HESSIAN_DENSE_BUFFER_MAX_NV) h->Hd = calloc((size_t)h->nv * h->nv + 1, sizeof(double));
  h->tc_ok = calloc((size_t)m->ntree + 1, 1);
  h->chain = calloc((size_t)m->ntree + 1, 1);
  h->fresh = calloc((size_t)m->ntree + 1, 1);
  if (maxn > 64) {
    h->big_idx = malloc(sizeof(int) * (size_t)(maxn + 1));
    h->big_jc = malloc(sizeof(double) * 3 * (size_t)maxn);
    h->big_gj = malloc(sizeof(double) * 3 * (size_t)maxn);
    h->big_row = malloc(sizeof(double) * (size_t)maxn);
    h->big_gjt = malloc(sizeof(double) * 6 * (size_t)maxn);
  }
  const int big_ok = maxn <= 64 || (h->big_idx && h->big_jc && h->big_gj && h->big_row && h->big_gjt);
  if (!h->tc_ok || !h->chain || !h->fresh || !big_ok) {
    grit_hessian_free(h);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  }
  init_tree_order(h);
  grit_status ts = grit_treechol_create(m, &h->tcp, message);
  if (ts != GRIT_OK) {
    grit_hessian_free(h);
    return ts;
  }
  if (!h->diag || !h->pa || !h->pb || !h->poff || !h->sym_pa || !h->sym_pb || !h->cblock || !h->hash ||
      !h->tree_pairs || !h->tree_pairadr || !h->tree_fill || (h->nv <= GRIT_HESSIAN_DENSE_BUFFER_MAX_NV && !h->Hd)) {
    grit_hessian_free(h);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  }
  grit_status bs = grit_blockchol_create(m, h->cap_pairs, &h->bc, message);
  if (bs != GRIT_OK) {
    grit_hessian_free(h);
    return bs;
  }
  grit_blockchol_set_chain(h->bc, h->any_tc ? h->chain : NULL);
  cholmod_start(&h->cc);
  h->cc.print = 0;
  h->cc.nmethods = 1;
  h->cc.method[0].ordering = CHOLMOD_AMD;
  h->cc.postorder = 1;
  h->cc.supernodal = getenv("GRIT_SIMPL") ? CHOLMOD_SIMPLICIAL : CHOLMOD_SUPERNODAL;
  *out = h;
  return GRIT_OK;
}

void grit_hessian_free(grit_hessian *h) {
  if (!h) return;
  if (h->Hs) cholmod_free_sparse(&h->Hs, &h->cc);
  if (h->L) cholmod_free_factor(&h->L, &h->cc);
  if (h->X) cholmod_free_dense(&h->X, &h->cc);
  if (h->Y) cholmod_free_dense(&h->Y, &h->cc);
  if (h->E) cholmod_free_dense(&h->E, &h->cc);
  if (h->bc) cholmod_finish(&h->cc); /* started right after the block factor was created */
  grit_blockchol_free(h->bc);
  free(h->diag);
  free(h->pa);
  free(h->pb);
  free(h->poff);
  free(h->sym_pa);
  free(h->sym_pb);
  free(h->cblock);
  free(h->hash);
  free(h->tree_pairs);
  free(h->tree_pairadr);
  free(h->tree_fill);
  free(h->Hd);
  free(h->tc_ok), free(h->chain), free(h->fresh);
  free(h->big_idx), free(h->big_jc), free(h->big_gj), free(h->big_row), free(h->big_gjt);
  grit_treechol_free(h->tcp);
  free(h);
}

void grit_hessian_force_path(grit_hessian *h, int path) { h->force = path; }
void grit_hessian_big_tree_paths(grit_hessian *h, int allow) {
  h->no_big_chain = !allow;
  grit_blockchol_big_kernel(h->bc, allow);
  h->factored = 0;
}
void grit_hessian_allow_tree_order(grit_hessian *h, int allow) {
  h->any_tc = 0;
  if (allow) init_tree_order(h);
  else memset(h->tc_ok, 0, (size_t)h->m->ntree);
  memset(h->chain, 0, (size_t)h->m->ntree);
  grit_blockchol_set_chain(h->bc, h->any_tc ? h->chain : NULL);
  h->factored = 0;
}
int grit_hessian_path(const grit_hessian *h) { return h->last_path; }
double grit_hessian_flops(const grit_hessian *h) {
  return h->last_path == 1   ? grit_blockchol_flops(h->bc)
         : h->last_path == 2 ? h->sym_flops
                             : (double)h->nv * h->nv * h->nv / 3.0;
}

/* ----------------------------------------------------------------------------------- pattern */

void grit_hessian_pattern_reset(grit_hessian *h) {
  for (int k = 0; k < h->npairs; ++k) {
    /* clear only the used hash slots */
    unsigned key = (unsigned)(h->pa[k] * h->m->ntree + h->pb[k]);
    for (unsigned s = key % (2u * (unsigned)h->cap_pairs);; s = (s + 1) % (2u * (unsigned)h->cap_pairs))
      if (h->hash[s] == k + 1) {
        h->hash[s] = 0;
        break;
      }
  }
  /* removing entries from linear probing chains can break them; all are removed, so it is safe */
  h->npairs = 0;
  h->cblock_used = 0;
}

int grit_hessian_pattern_pair(grit_hessian *h, int a, int b) {
  if (a > b) {
    int t = a;
    a = b;
    b = t;
  }
  const unsigned slots = 2u * (unsigned)h->cap_pairs;
  unsigned s = (unsigned)(a * h->m->ntree + b) % slots;
  for (;; s = (s + 1) % slots) {
    int k = h->hash[s] - 1;
    if (k < 0) break;
    if (h->pa[k] == a && h->pb[k] == b) return k;
  }
  size_t size = (size_t)h->m->tree_dofnum[a] * (size_t)h->m->tree_dofnum[b];
  if (h->npairs >= h->cap_pairs || h->cblock_used + size > h->cblock_cap) return -1;
  int k = h->npairs++;
  h->pa[k] = a;
  h->pb[k] = b;
  h->poff[k] = (int)h->cblock_used;
  h->cblock_used += size;
  h->hash[s] = k + 1;
  return k;
}

void grit_hessian_pattern_commit(grit_hessian *h) {
  const int nt = h->m->ntree;
  for (int t = 0; t <= nt; ++t) h->tree_pairadr[t] = 0;
  for (int k = 0; k < h->npairs; ++k) h->tree_pairadr[h->pa[k] + 1]++;
  for (int t = 0; t < nt; ++t) h->tree_pairadr[t + 1] += h->tree_pairadr[t];
  int *fill = h->tree_pairs; /* each tree's pairs, insertion-sorted by pb */
  for (int t = 0; t < nt; ++t) h->tree_fill[t] = 0;
  for (int k = 0; k < h->npairs; ++k) {
    const int lo = h->tree_pairadr[h->pa[k]];
    int j = lo + h->tree_fill[h->pa[k]]++;
    while (j > lo && h->pb[fill[j - 1]] > h->pb[k]) {
      fill[j] = fill[j - 1];
      j--;
    }
    fill[j] = k;
  }
  /* the symbolic analysis stays valid if the pattern is the same set of pairs */
  int same = h->sym_valid && h->sym_npairs == h->npairs;
  for (int k = 0; same && k < h->npairs; ++k) {
    int a = h->pa[fill[k]], b = h->pb[fill[k]];
    same = h->sym_pa[k] == a && h->sym_pb[k] == b;
  }
  if (!same) h->sym_valid = 0;
  h->factored = 0;
}

/* ---------------------------------------------------------------------------------- assembly */

/* Entry (r, c) of G J for a J block of n columns. */
static double gj_entry(const double *G, int dim, const double *J, int n, int r, int c) {
  double s = 0.0;
  for (int q = 0; q < dim; ++q) s += G[r * dim + q] * J[q * n + c];
  return s;
}

void grit_hessian_restrict(grit_hessian *h, const unsigned char *tree_on) { h->tree_on = tree_on; }

/* The trees the block-sparse path rebuilds and factors: the restriction on that path, else all. */
static const unsigned char *trees_on(const grit_hessian *h);
static int choose_path(const grit_hessian *h);

/* grit_hessian_begin when some tree may be factored in tree order: such a tree's block whose entries
 * off the lower pattern still equal A's (zero) gets only the pattern copied (the factor reads nothing
 * else; the copy of all 62 x 62 was 7 % of the CMU humanoid's step); the others whole. */
static void begin_tree_order(grit_hessian *h, const double *A, const unsigned char *on) {
  const grit_model *m = h->m;
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t], a = m->tree_madr[t];
    if (on && !on[t]) continue;
    if (h->tc_ok[t] && h->fresh[t]) grit_treechol_copy_pattern(h->tcp, t, A + a, h->diag + a);
    else memcpy(h->diag + a, A + a, sizeof(double) * (size_t)n * (size_t)n);
    h->fresh[t] = 1;
    h->chain[t] = h->tc_ok[t];
  }
}

void grit_hessian_begin(grit_hessian *h, const double *A) {
  const grit_model *m = h->m;
  const unsigned char *on = trees_on(h);
  if (h->any_tc) memset(h->chain, 0, (size_t)m->ntree);
  if (h->any_tc && choose_path(h) == 1) begin_tree_order(h, A, on);
  else if (!on) memcpy(h->diag, A, sizeof(double) * (size_t)m->nM);
  else
    for (int t = 0; t < m->ntree; ++t) {
      const int n = m->tree_dofnum[t];
      if (!on[t]) continue;
      if (n == 6) /* a free body's block as a constant-size copy, inlined (the call was 0.8 % of the step) */
        memcpy(h->diag + m->tree_madr[t], A + m->tree_madr[t], sizeof(double) * 36);
      else
        memcpy(h->diag + m->tree_madr[t], A + m->tree_madr[t], sizeof(double) * (size_t)n * (size_t)n);
      if (h->any_tc) h->fresh[t] = 1;
    }
  if (h->any_tc && choose_path(h) != 1 && !on) memset(h->fresh, 1, (size_t)m->ntree);
  if (!on) memset(h->cblock, 0, sizeof(double) * h->cblock_used);
  else /* only the coupling blocks of the trees rebuilt (the pattern may hold others' pairs) */
    for (int k = 0; k < h->npairs; ++k)
      if (on[h->pa[k]])
        memset(h->cblock + h->poff[k], 0,
               sizeof(double) * (size_t)m->tree_dofnum[h->pa[k]] * (size_t)m->tree_dofnum[h->pb[k]]);
  h->factored = 0;
}

/* The common case of grit_hessian_add: trees of up to 64 dofs, G J in scratch, plain loops (the
 * generic code's per-entry test of where G J lives was most of the assembly's time). The same sums in
 * the same order as the generic code. */
static inline __attribute__((always_inline)) void add_small_n(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                                const double *G, int pair, int n0, int n1) {
  const grit_model *m = h->m;
  double GJ[2][3 * 64];
  for (int k = 0; k < ntree; ++k) {
    const int n = k == 0 ? n0 : n1;
    const double *Jk = J[k];
    double *gj = GJ[k];
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < n; ++c) {
        double s = 0.0;
        for (int q = 0; q < dim; ++q) s += G[r * dim + q] * Jk[q * n + c];
        gj[r * n + c] = s;
      }
    double *D = h->diag + m->tree_madr[tree[k]];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0.0;
        for (int r = 0; r < dim; ++r) s += Jk[r * n + i] * gj[r * n + j];
        D[i * n + j] += s;
        if (j != i) D[j * n + i] += s;
      }
  }
  if (ntree == 2 && pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka; /* block rows: tree b (larger), cols: tree a */
    const int na = ka == 0 ? n0 : n1, nb = kb == 0 ? n0 : n1;
    const double *Jb = J[kb], *gja = GJ[ka];
    double *C = h->cblock + h->poff[pair];
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) {
        double s = 0.0;
        for (int q = 0; q < dim; ++q) s += Jb[q * nb + r] * gja[q * na + c];
        C[r * na + c] += s;
      }
  }
}

/* A contact whose G has only its normal entry (a Lagged contact without friction: most of a clutter's
 * active contacts that were not pressed at the start of the step): g j j^T on each tree and g j_b j_a^T
 * on the pair, j the normal row of J. The same values as add_small_n, whose other terms are exact
 * zeros (only the signs of zeros can differ), at a third of its multiply-adds. */
static inline __attribute__((always_inline)) void add_normal_n(grit_hessian *h, int ntree, const int tree[2], const double *const J[2], double g,
                                int pair, int n0, int n1) {
  const grit_model *m = h->m;
  double gj[2][64];
  for (int k = 0; k < ntree; ++k) {
    const int n = k == 0 ? n0 : n1;
    const double *j = J[k] + 2 * n;
    for (int c = 0; c < n; ++c) gj[k][c] = g * j[c];
    double *D = h->diag + m->tree_madr[tree[k]];
    for (int i = 0; i < n; ++i)
      for (int c = 0; c <= i; ++c) {
        const double s = j[i] * gj[k][c];
        D[i * n + c] += s;
        if (c != i) D[c * n + i] += s;
      }
  }
  if (ntree == 2 && pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka;
    const int na = ka == 0 ? n0 : n1, nb = kb == 0 ? n0 : n1;
    const double *jb = J[kb] + 2 * nb, *gja = gj[ka];
    double *C = h->cblock + h->poff[pair];
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) C[r * na + c] += jb[r] * gja[c];
  }
}

/* add_small_n with the dimensions of a contact between free bodies (3 rows, 6 dofs) as constants, so
 * that the compiler unrolls its loops, else as variables. */
static inline __attribute__((always_inline)) void add_small_in(grit_hessian *h, int dim, int ntree, const int tree[2],
                                                               const double *const J[2], const double *G, int pair) {
  const int n0 = h->m->tree_dofnum[tree[0]], n1 = ntree == 2 ? h->m->tree_dofnum[tree[1]] : 0;
  if (dim == 3 && n0 == 6 && (ntree == 1 || n1 == 6)) {
    int normal = 1;
    for (int i = 0; i < 8; ++i) normal &= G[i] == 0.0;
    if (normal) {
      if (ntree == 1) add_normal_n(h, 1, tree, J, G[8], pair, 6, 0);
      else add_normal_n(h, 2, tree, J, G[8], pair, 6, 6);
      return;
    }
  }
  if (dim == 3 && n0 == 6 && ntree == 1) add_small_n(h, 3, 1, tree, J, G, pair, 6, 0);
  else if (dim == 3 && n0 == 6 && ntree == 2 && n1 == 6) add_small_n(h, 3, 2, tree, J, G, pair, 6, 6);
  /* a 7-dof arm against a free body, either way round (the arm and ball: 18 % of its step's
   * instructions were this function with variable sizes) */
  else if (dim == 3 && ntree == 2 && n0 == 7 && n1 == 6) add_small_n(h, 3, 2, tree, J, G, pair, 7, 6);
  else if (dim == 3 && ntree == 2 && n0 == 6 && n1 == 7) add_small_n(h, 3, 2, tree, J, G, pair, 6, 7);
  /* particles of 3 dofs (MuJoCo's grid composites: the hammock's 95) tied by tendon equalities, or in
   * contact (2.3 times the instructions with variable sizes) */
  else if (ntree == 2 && n0 == 3 && n1 == 3 && dim == 1) add_small_n(h, 1, 2, tree, J, G, pair, 3, 3);
  else if (ntree == 2 && n0 == 3 && n1 == 3 && dim == 3) add_small_n(h, 3, 2, tree, J, G, pair, 3, 3);
  else if (dim == 3) add_small_n(h, 3, ntree, tree, J, G, pair, n0, n1); /* contacts: 3 rows unrolled */
  else add_small_n(h, dim, ntree, tree, J, G, pair, n0, n1);
}

/* add_small_in compiled for the baseline and for AVX2, chosen at run time: the same C, so the same
 * operations on each entry in the same order (no reassociation; no FMA: -ffp-contract=off and the
 * target lacks it), the same bits; GRIT_NO_AVX2 compiles the baseline only. */
static __attribute__((noinline)) void add_small_base(grit_hessian *h, int dim, int ntree, const int tree[2],
                                                     const double *const J[2], const double *G, int pair) {
  add_small_in(h, dim, ntree, tree, J, G, pair);
}
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static __attribute__((noinline, target("avx2"))) void add_small_avx2(grit_hessian *h, int dim, int ntree,
                                                                   const int tree[2], const double *const J[2],
                                                                   const double *G, int pair) {
  add_small_in(h, dim, ntree, tree, J, G, pair);
}
#endif
static void add_small(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                      const double *G, int pair) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    add_small_avx2(h, dim, ntree, tree, J, G, pair);
    return;
  }
#endif
  add_small_base(h, dim, ntree, tree, J, G, pair);
}

/* A constraint on one tree of many dofs (an articulated robot's foot, hand or joint limit) has J
 * nonzero only on the dofs of its body's chain to the root: 12-21 of the CMU humanoid's 62 for a foot
 * or hand, 1 for a limit. Its terms J^T G J on the other rows and columns are sums of exact zeros, so
 * only the columns of J with a nonzero entry, idx[0..nc-1] (increasing), are multiplied: the same sums
 * in the same order on those entries, the others left as they are (adding the zero would change only
 * a negative zero to a positive one). A tree's J was 39-45 % of that step's samples over all 62. */
#define CHAIN_MIN_NV 12

/* The sums of add_chain_in below on scratch Jc, gj (dim x nc) and row (nc). */
#define CHAIN_SUMS                                                                                    \
  const int n = h->m->tree_dofnum[tree];                                                              \
  for (int r = 0; r < dim; ++r)                                                                       \
    for (int c = 0; c < nc; ++c) Jc[r * nc + c] = J[r * n + idx[c]];                                 \
  for (int r = 0; r < dim; ++r)                                                                       \
    for (int c = 0; c < nc; ++c) {                                                                    \
      double s = 0.0;                                                                                 \
      for (int q = 0; q < dim; ++q) s += G[r * dim + q] * Jc[q * nc + c];                             \
      gj[r * nc + c] = s;                                                                             \
    }                                                                                                 \
  double *D = h->diag + h->m->tree_madr[tree];                                                        \
  for (int i = 0; i < nc; ++i) {                                                                      \
    for (int j = 0; j <= i; ++j) {                                                                    \
      double s = 0.0;                                                                                 \
      for (int r = 0; r < dim; ++r) s += Jc[r * nc + i] * gj[r * nc + j];                             \
      row[j] = s;                                                                                     \
    }                                                                                                 \
    double *Di = D + (size_t)idx[i] * n;                                                              \
    for (int j = 0; j <= i; ++j) Di[idx[j]] += row[j];                                                \
    for (int j = 0; j < i; ++j) D[(size_t)idx[j] * n + idx[i]] += row[j];                             \
  }

/* Up to 64 columns: the scratch on the stack (as local arrays: through pointers the compiler's code for
 * the robots' chains took 6 % more instructions). */
static inline __attribute__((always_inline)) void add_chain_in(grit_hessian *h, int dim, int tree, const double *J,
                                                               const double *G, const int *idx, int nc) {
  double Jc[3 * 64], gj[3 * 64], row[64];
  CHAIN_SUMS
}

/* More than 64 columns (a tendon across the branches of a composite's tree of hundreds of dofs): the
 * Hessian's scratch, sized by its largest tree at creation. */
static inline __attribute__((always_inline)) void add_chain_big_in(grit_hessian *h, int dim, int tree,
                                                                   const double *J, const double *G,
                                                                   const int *idx, int nc) {
  double *restrict Jc = h->big_jc, *restrict gj = h->big_gj, *restrict row = h->big_row;
  CHAIN_SUMS
}
#undef CHAIN_SUMS

static inline __attribute__((always_inline)) void add_chain_dim(grit_hessian *h, int dim, int tree, const double *J,
                                                                const double *G, const int *idx, int nc) {
  if (dim == 3) add_chain_in(h, 3, tree, J, G, idx, nc); /* contacts: 3 rows unrolled */
  else if (dim == 1) add_chain_in(h, 1, tree, J, G, idx, nc); /* limits */
  else add_chain_in(h, dim, tree, J, G, idx, nc);
}

static inline __attribute__((always_inline)) void add_chain_big(grit_hessian *h, int dim, int tree, const double *J,
                                                                const double *G, const int *idx, int nc) {
  if (dim == 1) add_chain_big_in(h, 1, tree, J, G, idx, nc); /* tendons */
  else add_chain_big_in(h, dim, tree, J, G, idx, nc);
}

static __attribute__((noinline)) void add_chain_base(grit_hessian *h, int dim, int tree, const double *J,
                                                     const double *G, const int *idx, int nc) {
  if (nc > 64) add_chain_big(h, dim, tree, J, G, idx, nc);
  else add_chain_dim(h, dim, tree, J, G, idx, nc);
}
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static __attribute__((noinline, target("avx2"))) void add_chain_avx2(grit_hessian *h, int dim, int tree,
                                                                   const double *J, const double *G,
                                                                   const int *idx, int nc) {
  add_chain_dim(h, dim, tree, J, G, idx, nc);
}
static __attribute__((noinline, target("avx2"))) void add_chain_big_avx2(grit_hessian *h, int dim, int tree,
                                                                       const double *J, const double *G,
                                                                       const int *idx, int nc) {
  add_chain_big(h, dim, tree, J, G, idx, nc);
}
#endif

/* A term that may leave the tree's pattern: the tree's block is factored densely, and its next begin
 * copies it whole. */
static inline void off_pattern(grit_hessian *h, int t) { h->chain[t] = 0, h->fresh[t] = 0; }

/* add_chain on a tree of more than 64 dofs: J's nonzero columns, any number of them (a spatial tendon
 * between two branches of the flag's tree of 340 dofs has about 150: the whole n^2 sum was 72 % of its
 * step), in the Hessian's scratch; a constraint on every column takes the whole sum (the same). */
static inline __attribute__((always_inline)) int nonzero_columns(const double *J, int dim, int n, int *idx) {
  int nc = 0;
  for (int c = 0; c < n; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J[r * n + c] != 0.0;
    idx[nc] = c;
    nc += nz;
  }
  return nc;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
/* nonzero_columns four columns at a time: a mask of the nonzero ones, their indices appended in order. */
static __attribute__((target("avx2"))) int nonzero_columns_avx2(const double *J, int dim, int n, int *idx) {
  int nc = 0, c = 0;
  const __m256d zero = _mm256_setzero_pd();
  for (; c + 4 <= n; c += 4) {
    __m256d nz = _mm256_cmp_pd(_mm256_loadu_pd(J + c), zero, _CMP_NEQ_UQ);
    for (int r = 1; r < dim; ++r) nz = _mm256_or_pd(nz, _mm256_cmp_pd(_mm256_loadu_pd(J + r * n + c), zero, _CMP_NEQ_UQ));
    for (unsigned bits = (unsigned)_mm256_movemask_pd(nz); bits; bits &= bits - 1) idx[nc++] = c + __builtin_ctz(bits);
  }
  for (; c < n; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J[r * n + c] != 0.0;
    idx[nc] = c;
    nc += nz;
  }
  return nc;
}
#endif

static int add_chain_big_tree(grit_hessian *h, int dim, int tree, const double *J, const double *G) {
  const int n = h->m->tree_dofnum[tree];
  int *idx = h->big_idx;
  /* (a tendon's 1 row, a contact's 3 as constants or with AVX2: the scan over the softbox's 224 columns
   * was 5 % of its step with the rows' loop variable) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  const int nc = __builtin_cpu_supports("avx2") ? nonzero_columns_avx2(J, dim, n, idx)
                 : dim == 1                    ? nonzero_columns(J, 1, n, idx)
                 : dim == 3                    ? nonzero_columns(J, 3, n, idx)
                                               : nonzero_columns(J, dim, n, idx);
#else
  const int nc = dim == 1 ? nonzero_columns(J, 1, n, idx) : dim == 3 ? nonzero_columns(J, 3, n, idx)
                                                                     : nonzero_columns(J, dim, n, idx);
#endif
  if (nc == n) return 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    if (nc > 64) add_chain_big_avx2(h, dim, tree, J, G, idx, nc);
    else add_chain_avx2(h, dim, tree, J, G, idx, nc);
    return 1;
  }
#endif
  add_chain_base(h, dim, tree, J, G, idx, nc);
  return 1;
}

/* The chain path for a single-tree constraint of 1-3 rows on a tree of CHAIN_MIN_NV or more dofs when J
 * has zero columns (on trees of up to 64 dofs, or with h->no_big_chain, at most 64 nonzero ones); returns
 * 0 (nothing added) otherwise. On the way it tells whether the constraint keeps a tree-ordered tree's
 * pattern (off_pattern when it does not). */
static int add_chain(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                     const double *G) {
  const int n = h->m->tree_dofnum[tree[0]];
  if (ntree != 1 || n < CHAIN_MIN_NV || dim > 3) {
    for (int k = 0; h->any_tc && k < ntree; ++k)
      if (h->tc_ok[tree[k]]) off_pattern(h, tree[k]);
    return 0;
  }
  if (n > 64 && !h->no_big_chain) return add_chain_big_tree(h, dim, tree[0], J[0], G);
  /* trees of more than 64 dofs too (a composite cloth's one tree of 166: the whole n^2 sum was 84 % of
   * its step), as long as the chain has at most 64 dofs; otherwise the whole-tree sum */
  int idx[65], nc = 0;
  const double *J0 = J[0];
  for (int c = 0; c < n && nc <= 64; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J0[r * n + c] != 0.0;
    idx[nc] = c;
    nc += nz;
  }
  if (nc > 64) return 0; /* tc_ok trees have at most 64 dofs: nothing to keep */
  /* two branches (a contact of the tree with itself, a tendon): fill; a chain keeps the pattern */
  if (h->tc_ok[tree[0]] && !grit_treechol_is_chain(h->m, tree[0], idx, nc)) off_pattern(h, tree[0]);
  if (nc == n) return 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    add_chain_avx2(h, dim, tree[0], J0, G, idx, nc);
    return 1;
  }
#endif
  add_chain_base(h, dim, tree[0], J0, G, idx, nc);
  return 1;
}

static inline int all_zero(const double *G, int n) {
  int zero = 1;
  for (int i = 0; i < n; ++i) zero &= G[i] == 0.0;
  return zero;
}

void grit_hessian_add(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                      const double *G, int pair) {
  const grit_model *m = h->m;
  /* a constraint in its model's zero region (G = 0: a candidate not touching) adds nothing (a contact's
   * 9 entries as a constant, unrolled: the loop was 1 % of the series' step) */
  const int zero = dim == 3 ? all_zero(G, 9) : all_zero(G, dim * dim);
  h->factored = 0;
  if (zero) return;
  if (m->tree_dofnum[tree[0]] <= 64 && (ntree < 2 || m->tree_dofnum[tree[1]] <= 64)) {
    if (!add_chain(h, dim, ntree, tree, J, G)) add_small(h, dim, ntree, tree, J, G, pair);
    return;
  }
  if (add_chain(h, dim, ntree, tree, J, G)) return; /* a chain of at most 64 dofs in a larger tree */
  double GJ[2][3 * 64]; /* G J per tree, for trees of up to 64 dofs; larger ones in the Hessian's scratch */
  double *GJbig[2] = {NULL, NULL};
  for (int k = 0; k < ntree; ++k) {
    const int n = m->tree_dofnum[tree[k]];
    double *gj = n <= 64 ? GJ[k] : h->no_big_chain ? NULL : h->big_gjt + (size_t)k * 3 * (size_t)n;
    if (!gj) continue; /* (no_big_chain: entries computed on the fly below, as before) */
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < n; ++c) {
        double s = 0.0;
        for (int q = 0; q < dim; ++q) s += G[r * dim + q] * J[k][q * n + c];
        gj[r * n + c] = s;
      }
    GJbig[k] = gj;
  }
  /* GJ entry (r, c) of tree k, computed on the fly when the tree is too large for the scratch */
#define GJ_AT(k, r, c)                                                                         \
  (GJbig[k] ? GJbig[k][(r) * m->tree_dofnum[tree[k]] + (c)] : gj_entry(G, dim, J[k], m->tree_dofnum[tree[k]], r, c))
  for (int k = 0; k < ntree; ++k) {
    const int n = m->tree_dofnum[tree[k]];
    double *D = h->diag + m->tree_madr[tree[k]];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0.0;
        for (int r = 0; r < dim; ++r) s += J[k][r * n + i] * GJ_AT(k, r, j);
        D[i * n + j] += s;
        if (j != i) D[j * n + i] += s;
      }
  }
  if (ntree == 2 && pair >= 0) {
    int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka; /* block rows: tree b (larger), cols: tree a */
    const int na = m->tree_dofnum[tree[ka]], nb = m->tree_dofnum[tree[kb]];
    double *C = h->cblock + h->poff[pair];
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) {
        double s = 0.0;
        for (int q = 0; q < dim; ++q) s += J[kb][q * nb + r] * GJ_AT(ka, q, c);
        C[r * na + c] += s;
      }
  }
#undef GJ_AT
  h->factored = 0;
}

/* ------------------------------------------------------------------------------ factorization */

/* The path: 0 dense, 1 block-sparse, 2 CHOLMOD. */
static int choose_path(const grit_hessian *h) {
  if (h->force >= 1) return h->force;
  if (!h->Hd) return 1;
  if (h->force == 0) return 0;
  return h->nv > h->dense_max_nv ? 1 : 0;
}

static const unsigned char *trees_on(const grit_hessian *h) { return choose_path(h) == 1 ? h->tree_on : NULL; }

static grit_status factor_dense(grit_hessian *h, double *cond, char *message) {
  const grit_model *m = h->m;
  const int nv = h->nv;
  double *H = h->Hd;
  memset(H, 0, sizeof(double) * (size_t)nv * nv);
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const double *D = h->diag + m->tree_madr[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) H[(size_t)(adr + j) * nv + adr + i] = D[i * n + j];
  }
  for (int k = 0; k < h->npairs; ++k) { /* block rows b, cols a; symmetric: store both */
    const int a = h->pa[k], b = h->pb[k], na = m->tree_dofnum[a], nb = m->tree_dofnum[b];
    const int aa = m->tree_dofadr[a], ab = m->tree_dofadr[b];
    const double *C = h->cblock + h->poff[k];
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) {
        H[(size_t)(aa + c) * nv + ab + r] = C[r * na + c];
        H[(size_t)(ab + r) * nv + aa + c] = C[r * na + c];
      }
  }
  const int bad = grit_densechol_factor(H, nv); /* not LAPACK's: bitwise independent of BLAS threads */
  if (bad >= 0)
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "Hessian factorization: not positive definite (pivot %d)", bad);
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < nv; ++i) {
    double d = H[(size_t)i * nv + i];
    lo = fmin(lo, d);
    hi = fmax(hi, d);
  }
  *cond = nv > 0 ? (hi / lo) * (hi / lo) : 1.0;
  return GRIT_OK;
}

/* Builds the CSC pattern (lower triangle) of H for the committed pairs and analyzes it. */
static grit_status analyze_sparse(grit_hessian *h, char *message) {
  const grit_model *m = h->m;
  size_t nnz = 0;
  for (int t = 0; t < m->ntree; ++t) nnz += (size_t)m->tree_dofnum[t] * (m->tree_dofnum[t] + 1) / 2;
  for (int k = 0; k < h->npairs; ++k) nnz += (size_t)m->tree_dofnum[h->pa[k]] * m->tree_dofnum[h->pb[k]];
  if (h->Hs) cholmod_free_sparse(&h->Hs, &h->cc);
  if (h->L) cholmod_free_factor(&h->L, &h->cc);
  h->Hs = cholmod_allocate_sparse((size_t)h->nv, (size_t)h->nv, nnz, 1, 1, -1, CHOLMOD_REAL, &h->cc);
  if (!h->Hs) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "CHOLMOD: cannot allocate the Hessian");
  int *Ap = h->Hs->p, *Ai = h->Hs->i;
  int pos = 0;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int c = 0; c < n; ++c) {
      Ap[adr + c] = pos;
      for (int r = c; r < n; ++r) Ai[pos++] = adr + r;
      for (int q = h->tree_pairadr[t]; q < h->tree_pairadr[t + 1]; ++q) {
        const int b = h->pb[h->tree_pairs[q]];
        for (int r = 0; r < m->tree_dofnum[b]; ++r) Ai[pos++] = m->tree_dofadr[b] + r;
      }
    }
  }
  Ap[h->nv] = pos;
  h->L = cholmod_analyze(h->Hs, &h->cc);
  if (!h->L) return grit_set_error(message, GRIT_ERR_NUMERICAL, "CHOLMOD analysis failed (status %d)", h->cc.status);
  h->sym_npairs = h->npairs;
  for (int q = 0; q < h->npairs; ++q) {
    h->sym_pa[q] = h->pa[h->tree_pairs[q]];
    h->sym_pb[q] = h->pb[h->tree_pairs[q]];
  }
  h->sym_valid = 1;
  h->sym_path = 2;
  h->sym_flops = h->cc.fl;
  return GRIT_OK;
}

static grit_status factor_sparse(grit_hessian *h, double *cond, char *message) {
  const grit_model *m = h->m;
  if (!h->sym_valid || h->sym_path != 2) {
    grit_status s = analyze_sparse(h, message);
    if (s != GRIT_OK) return s;
  }
  double *Ax = h->Hs->x;
  int pos = 0;
  for (int t = 0; t < m->ntree; ++t) { /* values in the order of analyze_sparse's pattern */
    const int n = m->tree_dofnum[t];
    const double *D = h->diag + m->tree_madr[t];
    for (int c = 0; c < n; ++c) {
      for (int r = c; r < n; ++r) Ax[pos++] = D[r * n + c];
      for (int q = h->tree_pairadr[t]; q < h->tree_pairadr[t + 1]; ++q) {
        const int k = h->tree_pairs[q], nb = m->tree_dofnum[h->pb[k]];
        const double *C = h->cblock + h->poff[k];
        for (int r = 0; r < nb; ++r) Ax[pos++] = C[r * n + c];
      }
    }
  }
  cholmod_factorize(h->Hs, h->L, &h->cc);
  if (h->cc.status == CHOLMOD_NOT_POSDEF || h->L->minor < h->L->n)
    return grit_set_error(message, GRIT_ERR_NUMERICAL,
                          "Hessian factorization: not positive definite (CHOLMOD pivot %d)", (int)h->L->minor);
  if (h->cc.status < CHOLMOD_OK)
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "CHOLMOD factorization failed (status %d)", h->cc.status);
  double rc = cholmod_rcond(h->L, &h->cc);
  if (!(rc > 0)) /* a NaN or infinite entry passes CHOLMOD's pivot test; its factor's diagonal shows it */
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "Hessian factorization: non-finite or zero pivot (CHOLMOD)");
  *cond = 1.0 / rc;
  return GRIT_OK;
}

/* The block-sparse path: analysis when the pattern changed, then the numeric factor. */
static grit_status factor_block(grit_hessian *h, double *cond, char *message) {
  if (!h->sym_valid || h->sym_path != 1) {
    for (int q = 0; q < h->npairs; ++q) { /* the pairs in their sorted order, as the pattern check */
      h->sym_pa[q] = h->pa[h->tree_pairs[q]];
      h->sym_pb[q] = h->pb[h->tree_pairs[q]];
    }
    grit_status s = grit_blockchol_analyze(h->bc, h->npairs, h->sym_pa, h->sym_pb, message);
    if (s != GRIT_OK) return s;
    h->sym_npairs = h->npairs;
    h->sym_valid = 1;
    h->sym_path = 1;
  }
  return grit_blockchol_factor(h->bc, h->diag, h->cblock, h->poff, h->tree_pairs, h->tree_on, cond, message);
}

grit_status grit_hessian_factor(grit_hessian *h, double *cond, char *message) {
  double c = 1.0;
  const int path = choose_path(h);
  grit_status s = h->nv == 0    ? GRIT_OK
                  : path == 1 ? factor_block(h, &c, message)
                  : path == 2 ? factor_sparse(h, &c, message)
                              : factor_dense(h, &c, message);
  h->factored = s == GRIT_OK;
  h->last_path = path;
  if (cond) *cond = c;
  return s;
}

grit_status grit_hessian_solve(grit_hessian *h, double *B, int nrhs) {
  if (!h->factored) return GRIT_ERR_STATE;
  if (h->nv == 0 || nrhs <= 0) return GRIT_OK;
  if (h->last_path == 0 && h->nv <= GRIT_DENSECHOL_SMALL_MAX_NV && nrhs >= 2) {
    grit_densechol_solve_small(h->Hd, h->nv, B, nrhs);
    return GRIT_OK;
  }
  if (h->last_path == 1) {
    grit_blockchol_solve(h->bc, B, nrhs, h->tree_on);
    return GRIT_OK;
  }
  if (h->last_path == 0) {
    grit_densechol_solve(h->Hd, h->nv, B, nrhs);
    return GRIT_OK;
  }
  cholmod_dense b;
  memset(&b, 0, sizeof b);
  b.nrow = (size_t)h->nv;
  b.ncol = (size_t)nrhs;
  b.nzmax = b.nrow * b.ncol;
  b.d = b.nrow;
  b.x = B;
  b.xtype = CHOLMOD_REAL;
  b.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_solve2(CHOLMOD_A, h->L, &b, NULL, &h->X, NULL, &h->Y, &h->E, &h->cc)) return GRIT_ERR_NUMERICAL;
  memcpy(B, h->X->x, sizeof(double) * b.nzmax);
  return GRIT_OK;
}

const int *grit_hessian_parts(const grit_hessian *h, int *nparts) {
  if (h->factored && h->last_path == 1 && h->nv > 0) return grit_blockchol_parts(h->bc, nparts);
  *nparts = 1;
  return NULL;
}

grit_status grit_hessian_solve_parts(grit_hessian *h, double *B, int nrhs, const int *part) {
  int np;
  if (!part || !grit_hessian_parts(h, &np)) return grit_hessian_solve(h, B, nrhs);
  if (nrhs > 0) grit_blockchol_solve_parts(h->bc, B, nrhs, part);
  return GRIT_OK;
}
