/* SPDX-License-Identifier: Apache-2.0 */
/* hessian_assemble.c — the assembly of the contact Hessian H = A + sum J^T G J into its tree blocks and
 * coupling blocks (the factorizations: hessian.c). See hessian.h. */
#include <string.h>

#include "hessian.h"
#include "hessian_internal.h"
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#endif

/* ---------------------------------------------------------------------------------- assembly */

/* Entry (r, c) of G J for a J block of n columns. */
static double gj_entry(const double *G, int dim, const double *J, int n, int r, int c) {
  double s = 0.0;
  for (int q = 0; q < dim; ++q) s += G[r * dim + q] * J[q * n + c];
  return s;
}

void grit_hessian_restrict(grit_hessian *h, const unsigned char *tree_on) { h->tree_on = tree_on; }

static inline int all_zero(const double *G, int n) {
  int zero = 1;
  for (int i = 0; i < n; ++i) zero &= G[i] == 0.0;
  return zero;
}

/* Every tree's block: the runs of trees up to 64 dofs in one copy each (the blocks are contiguous). */
static void copy_all(grit_hessian *h, const double *A) {
  const grit_model *m = h->m;
  if ((!h->big_idx || h->no_lower) && !(h->any_dchain && grit_hessian_small_lower(h))) { /* (no tree over 64
                                                                                         dofs, no chain) */
    memcpy(h->diag, A, sizeof(double) * (size_t)m->nM);
    return;
  }
  for (int t = 0; t < m->ntree;) {
    if (grit_hessian_copy_lower_only(h, t)) {
      grit_hessian_copy_lower(h, A, t++);
      continue;
    }
    int u = t;
    while (u < m->ntree && !grit_hessian_copy_lower_only(h, u)) ++u;
    const size_t a = (size_t)m->tree_madr[t], e = (size_t)m->tree_madr[u - 1] + (size_t)m->tree_dofnum[u - 1] * (size_t)m->tree_dofnum[u - 1];
    memcpy(h->diag + a, A + a, sizeof(double) * (e - a));
    t = u;
  }
}

/* grit_hessian_begin when some tree may be factored in tree order: such a tree's block whose entries
 * off the lower pattern still equal A's (zero) gets only the pattern copied (the factor reads nothing
 * else; the copy of all 62 x 62 was 7 % of the CMU humanoid's step); the others by grit_hessian_copy_block. */
static void begin_tree_order(grit_hessian *h, const double *A, const unsigned char *on) {
  const grit_model *m = h->m;
  for (int t = 0; t < m->ntree; ++t) {
    const int a = m->tree_madr[t];
    if (on && !on[t]) continue;
    if (h->tc_ok[t] && h->fresh[t]) grit_treechol_copy_pattern(h->tcp, t, A + a, h->diag + a);
    else if (m->tree_dofnum[t] > 64 && !h->no_lower) grit_hessian_copy_lower(h, A, t);
    else memcpy(h->diag + a, A + a, sizeof(double) * (size_t)m->tree_dofnum[t] * (size_t)m->tree_dofnum[t]);
    h->fresh[t] = 1;
    h->chain[t] = h->tc_ok[t];
  }
}

void grit_hessian_begin(grit_hessian *h, const double *A) {
  const grit_model *m = h->m;
  const unsigned char *on = grit_hessian_trees_on(h);
  grit_hessian_plan_blocks(h, on, 0);
  h->upd = 0;
  h->lower_now = grit_hessian_small_lower(h);
  if (h->big_idx) /* (some tree of more than 64 dofs) */
    for (int t = 0; t < m->ntree; ++t)
      if (m->tree_dofnum[t] > 64 && (!on || on[t])) grit_blockchol_lowrank_clear(h->bc, t);
  if (h->any_tc) memset(h->chain, 0, (size_t)m->ntree);
  if (h->any_tc && grit_hessian_choose_path(h) == 1) begin_tree_order(h, A, on);
  else if (!on) copy_all(h, A);
  else
    for (int t = 0; t < m->ntree; ++t) {
      if (!on[t]) continue;
      grit_hessian_copy_block(h, A, t);
      if (h->any_tc) h->fresh[t] = 1;
    }
  if (h->any_tc && grit_hessian_choose_path(h) != 1 && !on) memset(h->fresh, 1, (size_t)m->ntree);
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
                                const double *G, int pair, int n0, int n1, int lower) {
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
    double *D = grit_hessian_dblock(h, tree[k], n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = 0.0;
        for (int r = 0; r < dim; ++r) s += Jk[r * n + i] * gj[r * n + j];
        D[i * n + j] += s;
        if (!lower && j != i) D[j * n + i] += s;
      }
  }
  if (ntree == 2 && pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka; /* block rows: tree b (larger), cols: tree a */
    const int na = ka == 0 ? n0 : n1, nb = kb == 0 ? n0 : n1;
    const double *Jb = J[kb], *gja = GJ[ka];
    double *C = grit_hessian_cblk(h, pair, na * nb);
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
                                int pair, int n0, int n1, int lower) {
  double gj[2][64];
  for (int k = 0; k < ntree; ++k) {
    const int n = k == 0 ? n0 : n1;
    const double *j = J[k] + 2 * n;
    for (int c = 0; c < n; ++c) gj[k][c] = g * j[c];
    double *D = grit_hessian_dblock(h, tree[k], n);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c <= i; ++c) {
        const double s = j[i] * gj[k][c];
        D[i * n + c] += s;
        if (!lower && c != i) D[c * n + i] += s;
      }
  }
  if (ntree == 2 && pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka;
    const int na = ka == 0 ? n0 : n1, nb = kb == 0 ? n0 : n1;
    const double *jb = J[kb] + 2 * nb, *gja = gj[ka];
    double *C = grit_hessian_cblk(h, pair, na * nb);
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) C[r * na + c] += jb[r] * gja[c];
  }
}

/* add_small_n with the dimensions of a contact between free bodies (3 rows, 6 dofs) as constants, so
 * that the compiler unrolls its loops, else as variables. */
static inline __attribute__((always_inline)) void add_small_in(grit_hessian *h, int dim, int ntree, const int tree[2],
                                                               const double *const J[2], const double *G, int pair,
                                                               int lower) {
  const int n0 = h->m->tree_dofnum[tree[0]], n1 = ntree == 2 ? h->m->tree_dofnum[tree[1]] : 0;
  if (dim == 3 && n0 == 6 && (ntree == 1 || n1 == 6)) {
    int normal = 1;
    for (int i = 0; i < 8; ++i) normal &= G[i] == 0.0;
    if (normal) {
      if (ntree == 1) add_normal_n(h, 1, tree, J, G[8], pair, 6, 0, lower);
      else add_normal_n(h, 2, tree, J, G[8], pair, 6, 6, lower);
      return;
    }
  }
  if (dim == 3 && n0 == 6 && ntree == 1) add_small_n(h, 3, 1, tree, J, G, pair, 6, 0, lower);
  else if (dim == 3 && n0 == 6 && ntree == 2 && n1 == 6) add_small_n(h, 3, 2, tree, J, G, pair, 6, 6, lower);
  /* a 7-dof arm against a free body, either way round (the arm and ball: 18 % of its step's
   * instructions were this function with variable sizes) */
  else if (dim == 3 && ntree == 2 && n0 == 7 && n1 == 6) add_small_n(h, 3, 2, tree, J, G, pair, 7, 6, lower);
  else if (dim == 3 && ntree == 2 && n0 == 6 && n1 == 7) add_small_n(h, 3, 2, tree, J, G, pair, 6, 7, lower);
  /* particles of 3 dofs (MuJoCo's grid composites: the hammock's 95) tied by tendon equalities, or in
   * contact (2.3 times the instructions with variable sizes) */
  else if (ntree == 2 && n0 == 3 && n1 == 3 && dim == 1) add_small_n(h, 1, 2, tree, J, G, pair, 3, 3, lower);
  else if (ntree == 2 && n0 == 3 && n1 == 3 && dim == 3) add_small_n(h, 3, 2, tree, J, G, pair, 3, 3, lower);
  /* particles and free bodies against a one-dof body (a conveyor's slide, a gripper's finger, a door's
   * hinge), either way round: the adhesion crate's particles on its conveyor, 3.5 times the instructions
   * with variable sizes */
  else if (ntree == 2 && dim == 3 && n0 == 3 && n1 == 1) add_small_n(h, 3, 2, tree, J, G, pair, 3, 1, lower);
  else if (ntree == 2 && dim == 3 && n0 == 1 && n1 == 3) add_small_n(h, 3, 2, tree, J, G, pair, 1, 3, lower);
  else if (ntree == 2 && dim == 3 && n0 == 6 && n1 == 1) add_small_n(h, 3, 2, tree, J, G, pair, 6, 1, lower);
  else if (ntree == 2 && dim == 3 && n0 == 1 && n1 == 6) add_small_n(h, 3, 2, tree, J, G, pair, 1, 6, lower);
  /* (variable sizes: a contact's in both triangles either way, since without the mirrored writes the
   * compiler's code for the adhesion crate's took 6 % more instructions; a limit's or a tendon's lower only) */
  else if (dim == 3) add_small_n(h, 3, ntree, tree, J, G, pair, n0, n1, 0); /* contacts: 3 rows unrolled */
  else add_small_n(h, dim, ntree, tree, J, G, pair, n0, n1, lower);
}

/* add_small_in compiled for the baseline and for AVX2, chosen at run time: the same C, so the same
 * operations on each entry in the same order (no reassociation; no FMA: -ffp-contract=off and the
 * target lacks it), the same bits; GRIT_NO_AVX2 compiles the baseline only. */
static __attribute__((noinline)) void add_small_base(grit_hessian *h, int dim, int ntree, const int tree[2],
                                                     const double *const J[2], const double *G, int pair) {
  add_small_in(h, dim, ntree, tree, J, G, pair, 0);
}
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static __attribute__((noinline, target("avx2"))) void add_small_avx2(grit_hessian *h, int dim, int ntree,
                                                                   const int tree[2], const double *const J[2],
                                                                   const double *G, int pair) {
  add_small_in(h, dim, ntree, tree, J, G, pair, 0);
}
/* The lower triangles of the trees' blocks only (chain_lower, below: the factors of the block-sparse and
 * CHOLMOD paths read only those): the same sums there, no mirrored writes. */
static __attribute__((noinline, target("avx2"))) void add_small_lower_avx2(grit_hessian *h, int dim, int ntree,
                                                                         const int tree[2], const double *const J[2],
                                                                         const double *G, int pair) {
  add_small_in(h, dim, ntree, tree, J, G, pair, 1);
}
#endif
static inline int chain_lower(const grit_hessian *h);
static void add_small(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                      const double *G, int pair) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    /* (3-row terms on the lower triangles: by the kernels of hessian_contact.c) */
    if (chain_lower(h) && dim == 3 && !h->no_free_kernel && grit_hessian_add_rows3_avx2(h, ntree, tree, J, G, pair)) return;
    if (chain_lower(h)) add_small_lower_avx2(h, dim, ntree, tree, J, G, pair);
    else add_small_avx2(h, dim, ntree, tree, J, G, pair);
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

/* The chain assemblies' first two sums: J's nonzero columns idx[0..nc) (J: dim rows over n dofs) into Jc
 * (dim x nc), and G Jc into gj (dim x nc). */
static inline __attribute__((always_inline)) void chain_gj(int n, int dim, const double *J, const double *G,
                                                           const int *idx, int nc, double *restrict Jc,
                                                           double *restrict gj) {
  for (int r = 0; r < dim; ++r)
    for (int c = 0; c < nc; ++c) Jc[r * nc + c] = J[r * n + idx[c]];
  for (int r = 0; r < dim; ++r)
    for (int c = 0; c < nc; ++c) {
      double s = 0.0;
      for (int q = 0; q < dim; ++q) s += G[r * dim + q] * Jc[q * nc + c];
      gj[r * nc + c] = s;
    }
}

/* The sums of add_chain_in below on scratch Jc, gj (dim x nc) and row (nc). */
#define CHAIN_SUMS                                                                                    \
  const int n = h->m->tree_dofnum[tree];                                                              \
  chain_gj(n, dim, J, G, idx, nc, Jc, gj);                                                            \
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

/* add_chain on a lower-only block (a big tree, grit_hessian_lower_only): CHAIN_SUMS' lower entries, each
 * sum added where it is computed (no row buffer, no mirrored entry; the same sum, added once). LOWER_ADD(Di,
 * i) adds row i's entries j <= i into Di[idx[j]]. */
#define LOWER_SUMS(LOWER_ADD)                                                                         \
  const int n = h->m->tree_dofnum[tree];                                                              \
  double *restrict Jc = h->big_jc, *restrict gj = h->big_gj;                                          \
  chain_gj(n, dim, J, G, idx, nc, Jc, gj);                                                            \
  double *D = h->diag + h->m->tree_madr[tree];                                                        \
  for (int i = 0; i < nc; ++i) LOWER_ADD(D + (size_t)idx[i] * n, i);

#define LOWER_ADD_PLAIN(Di, i) lower_add_plain(Di, Jc, gj, idx, dim, nc, i, 0)

/* Row i's sums for columns j0 .. i into Di[idx[j]]. */
static inline __attribute__((always_inline)) void lower_add_plain(double *Di, const double *Jc, const double *gj,
                                                                  const int *idx, int dim, int nc, int i, int j0) {
  for (int j = j0; j <= i; ++j) {
    double s = 0.0;
    for (int r = 0; r < dim; ++r) s += Jc[r * nc + i] * gj[r * nc + j];
    Di[idx[j]] += s;
  }
}

static inline __attribute__((always_inline)) void add_lower_in(grit_hessian *h, int dim, int tree, const double *J,
                                                               const double *G, const int *idx, int nc) {
  LOWER_SUMS(LOWER_ADD_PLAIN)
}
static __attribute__((noinline)) void add_lower_base(grit_hessian *h, int dim, int tree, const double *J,
                                                     const double *G, const int *idx, int nc) {
  if (dim == 1) add_lower_in(h, 1, tree, J, G, idx, nc); /* tendons */
  else if (dim == 3) add_lower_in(h, 3, tree, J, G, idx, nc); /* contacts */
  else add_lower_in(h, dim, tree, J, G, idx, nc);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* lower_add_plain four columns at a time: the four sums from 0.0 over the rows in order (no fused
 * multiply-add), the four entries gathered, added, stored one by one: the same bits. */
static inline __attribute__((always_inline, target("avx2"))) void lower_add_avx2(double *Di, const double *Jc,
                                                                                const double *gj, const int *idx,
                                                                                int dim, int nc, int i, int runs) {
  int j = 0;
  for (; j + 4 <= i + 1; j += 4) {
    __m256d s = _mm256_setzero_pd();
    for (int r = 0; r < dim; ++r)
      s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(Jc[r * nc + i]), _mm256_loadu_pd(gj + r * nc + j)));
    if (runs && idx[j + 3] == idx[j] + 3) { /* four adjacent columns (idx increases): one load and store */
      _mm256_storeu_pd(Di + idx[j], _mm256_add_pd(_mm256_loadu_pd(Di + idx[j]), s));
      continue;
    }
    const __m128i ix = _mm_loadu_si128((const __m128i *)(idx + j));
    const __m256d v = _mm256_add_pd(_mm256_i32gather_pd(Di, ix, 8), s);
    const __m128d a = _mm256_castpd256_pd128(v), b = _mm256_extractf128_pd(v, 1);
    _mm_storel_pd(Di + idx[j], a), _mm_storeh_pd(Di + idx[j + 1], a);
    _mm_storel_pd(Di + idx[j + 2], b), _mm_storeh_pd(Di + idx[j + 3], b);
  }
  lower_add_plain(Di, Jc, gj, idx, dim, nc, i, j);
}
#define LOWER_ADD_AVX2(Di, i) lower_add_avx2(Di, Jc, gj, idx, dim, nc, i, !h->no_chain_lower)
static inline __attribute__((always_inline, target("avx2"))) void add_lower_avx2_in(grit_hessian *h, int dim, int tree,
                                                                                   const double *J, const double *G,
                                                                                   const int *idx, int nc) {
  LOWER_SUMS(LOWER_ADD_AVX2)
}
/* lower_add_avx2 by the runs of adjacent columns in idx (a composite's spring tendon: its two sites' paths
 * down the cloth's columns, each a run of consecutive dofs): row i's entries of run [a, b) at Di + idx[a]
 * + 0 .. b - a, four at a time with one load and store, the last one to three masked; no gather, no
 * scalar stores. Each entry's sum from +0 over the rows in order, then added to it: the same bits. rs:
 * the runs' first positions, rs[nr] = nc. */
static inline __attribute__((always_inline, target("avx2"))) void lower_runs_avx2(double *D, int n, const double *Jc,
                                                                                 const double *gj, const int *idx,
                                                                                 int dim, int nc, const int *rs) {
  for (int i = 0; i < nc; ++i) {
    double *Di = D + (size_t)idx[i] * n;
    __m256d c[3];
    for (int r = 0; r < dim; ++r) c[r] = _mm256_set1_pd(Jc[r * nc + i]);
    for (int k = 0; rs[k] <= i; ++k) {
      const int a = rs[k], len = (rs[k + 1] < i + 1 ? rs[k + 1] : i + 1) - a;
      double *d = Di + idx[a];
      const double *g = gj + a;
      int t = 0;
      for (; t + 4 <= len; t += 4) {
        __m256d s = _mm256_setzero_pd();
        for (int r = 0; r < dim; ++r) s = _mm256_add_pd(s, _mm256_mul_pd(c[r], _mm256_loadu_pd(g + r * nc + t)));
        _mm256_storeu_pd(d + t, _mm256_add_pd(_mm256_loadu_pd(d + t), s));
      }
      if (t == len) continue;
      const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(len - t), _mm256_setr_epi64x(0, 1, 2, 3));
      __m256d s = _mm256_setzero_pd();
      for (int r = 0; r < dim; ++r)
        s = _mm256_add_pd(s, _mm256_mul_pd(c[r], _mm256_maskload_pd(g + r * nc + t, mask)));
      _mm256_maskstore_pd(d + t, mask, _mm256_add_pd(_mm256_maskload_pd(d + t, mask), s));
    }
  }
}

/* The runs of idx into rs (rs[nr] = nc); returns nr. */
static inline int lower_runs(const int *idx, int nc, int *rs) {
  int nr = 0;
  for (int p = 0; p < nc; ++p)
    if (p == 0 || idx[p] != idx[p - 1] + 1) rs[nr++] = p;
  rs[nr] = nc;
  return nr;
}

/* The runs' path when they average eight columns or more (the gather path's four entries a vector cost
 * about twice the run's; on shorter runs the masked tails cost more than the gathers: the cloth's rows, runs
 * of about four, took 28 % more): on the flag's 288 spring rows a step, the lower sums were a fifth of its step. h->no_lower_runs: the gather path (tests). */
static inline __attribute__((always_inline, target("avx2"))) void add_lower_avx2_dim(grit_hessian *h, int dim,
                                                                                    int tree, const double *J,
                                                                                    const double *G,
                                                                                    const int *idx, int nc) {
  int *rs = h->big_runs;
  if (!h->no_lower_runs && nc >= 8 && 8 * lower_runs(idx, nc, rs) <= nc) {
    const int n = h->m->tree_dofnum[tree];
    double *restrict Jc = h->big_jc, *restrict gj = h->big_gj;
    chain_gj(n, dim, J, G, idx, nc, Jc, gj);
    lower_runs_avx2(h->diag + h->m->tree_madr[tree], n, Jc, gj, idx, dim, nc, rs);
    return;
  }
  add_lower_avx2_in(h, dim, tree, J, G, idx, nc);
}

static __attribute__((noinline, target("avx2"))) void add_lower_avx2(grit_hessian *h, int dim, int tree,
                                                                   const double *J, const double *G,
                                                                   const int *idx, int nc) {
  if (dim == 1) add_lower_avx2_dim(h, 1, tree, J, G, idx, nc);
  else if (dim == 3) add_lower_avx2_in(h, 3, tree, J, G, idx, nc);
  else add_lower_avx2_in(h, dim, tree, J, G, idx, nc);
}

/* add_chain_in's lower entries only, on a tree of up to 64 dofs whose factor reads only its block's lower
 * triangle (chain_lower): the same sums in the same order as CHAIN_SUMS' (so the lower triangle gets the same
 * bits), without the mirrored writes to the upper triangle, and four adjacent columns (a chain's dofs in
 * order: MuJoCo's loop's contacts have one run from the root) with one vector load and store. On the loop
 * the mirrored column writes and the scattered row writes were most of add_chain's instructions. */
static inline __attribute__((always_inline, target("avx2"))) void add_chain_lower_avx2_in(grit_hessian *h, int dim,
                                                                                         int tree, const double *J,
                                                                                         const double *G,
                                                                                         const int *idx, int nc) {
  if (nc == 0) return; /* rows zero on this tree (a weld's at rest): nothing to add, and no run to read */
  double Jc[3 * 64], gj[3 * 64];
  const int n = h->m->tree_dofnum[tree];
  chain_gj(n, dim, J, G, idx, nc, Jc, gj);
  double *D = h->diag + h->m->tree_madr[tree];
  if (idx[nc - 1] - idx[0] != nc - 1) {
    for (int i = 0; i < nc; ++i) lower_add_avx2(D + (size_t)idx[i] * n, Jc, gj, idx, dim, nc, i, 1);
    return;
  }
  /* one run of columns (a chain's dofs in order): row i's entries at D0 + i n + j, no indices; the last
   * one to three by masked loads and stores (their lanes' operations are the scalar ones) */
  double *D0 = D + (size_t)idx[0] * n + idx[0];
  for (int i = 0; i < nc; ++i) {
    double *Di = D0 + (size_t)i * n;
    int j = 0;
    for (; j + 4 <= i + 1; j += 4) {
      __m256d t = _mm256_setzero_pd();
      for (int r = 0; r < dim; ++r)
        t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_set1_pd(Jc[r * nc + i]), _mm256_loadu_pd(gj + r * nc + j)));
      _mm256_storeu_pd(Di + j, _mm256_add_pd(_mm256_loadu_pd(Di + j), t));
    }
    if (j > i) continue;
    const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(i + 1 - j), _mm256_setr_epi64x(0, 1, 2, 3));
    __m256d t = _mm256_setzero_pd();
    for (int r = 0; r < dim; ++r)
      t = _mm256_add_pd(t, _mm256_mul_pd(_mm256_set1_pd(Jc[r * nc + i]), _mm256_maskload_pd(gj + r * nc + j, mask)));
    _mm256_maskstore_pd(Di + j, mask, _mm256_add_pd(_mm256_maskload_pd(Di + j, mask), t));
  }
}
static __attribute__((noinline, target("avx2"))) void add_chain_lower_avx2(grit_hessian *h, int dim, int tree,
                                                                         const double *J, const double *G,
                                                                         const int *idx, int nc) {
  if (dim == 3) add_chain_lower_avx2_in(h, 3, tree, J, G, idx, nc); /* contacts */
  else if (dim == 1) add_chain_lower_avx2_in(h, 1, tree, J, G, idx, nc); /* limits */
  else add_chain_lower_avx2_in(h, dim, tree, J, G, idx, nc);
}
#undef LOWER_ADD_AVX2
#endif

/* Whether a tree of up to 64 dofs may have only its lower triangle summed (grit_hessian_small_lower). */
static inline int chain_lower(const grit_hessian *h) { return h->lower_now; }
#undef LOWER_ADD_PLAIN
#undef LOWER_SUMS

/* A term that may leave the tree's pattern: the tree's block is factored densely, and its next begin
 * copies it whole. */
static inline void off_pattern(grit_hessian *h, int t) { h->chain[t] = 0, h->fresh[t] = 0; }

/* add_chain on a tree of more than 64 dofs: J's nonzero columns, any number of them (a spatial tendon
 * between two branches of the flag's tree of 340 dofs has about 150: the whole n^2 sum was 72 % of its
 * step), in the Hessian's scratch; a constraint on every column takes the whole sum (the same). */
static int add_chain_big_tree(grit_hessian *h, int dim, int tree, const double *J, const double *G,
                              const int *cols, int ncols) {
  const int n = h->m->tree_dofnum[tree];
  const int *idx = cols ? cols : h->big_idx; /* (the caller's list: J's scan done once per solve) */
  const int nc = cols ? ncols : grit_hessian_nonzero_columns(J, dim, n, h->big_idx);
  /* one row over more than half the tree (a composite box's tendon over all its shell's joints): its
   * J^T G J would make the block's graph complete; held apart for the sparse factor (blockchol.h) */
  if (dim == 1 && 2 * nc > n && grit_hessian_choose_path(h) == 1 && grit_blockchol_lowrank_add(h->bc, tree, J, G[0]))
    return 1;
  if (nc == n) return 0;
  if (grit_hessian_lower_only(h, tree)) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
    if (!h->no_lower_avx2 && __builtin_cpu_supports("avx2")) {
      add_lower_avx2(h, dim, tree, J, G, idx, nc);
      return 1;
    }
#endif
    add_lower_base(h, dim, tree, J, G, idx, nc);
    return 1;
  }
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

/* A constraint on two trees of up to 64 dofs, one of them of CHAIN_MIN_NV or more (a humanoid's hand or
 * foot against a particle or an object): add_small_n's sums on the nonzero columns of each tree's J only
 * (idx0, idx1), each tree's block and the coupling block; the others are sums of exact zeros, left as
 * they are (as add_chain: adding the zero would change only a negative zero to a positive one). The
 * hammock's humanoid against its particles: the whole 27 x 27 block per contact was 12 % of its step. */
static inline __attribute__((always_inline)) void add_pair_chain_in(grit_hessian *h, int dim, const int tree[2],
                                                                    const double *const J[2], const double *G,
                                                                    int pair, const int *const idx[2],
                                                                    const int nck[2], int lower) {
  const grit_model *m = h->m;
  /* (J and G J on the nonzero columns in scratch, then each row of the block's terms in a buffer: the
   * sums over the rows vectorize along it, the same sums in the same order; each entry still gets its
   * one term) */
  double GJ[2][3 * 64], Jc[3 * 64], row[64];
  for (int k = 0; k < 2; ++k) {
    const int n = m->tree_dofnum[tree[k]], nc = nck[k], *id = idx[k];
    const double *Jk = J[k];
    double *gj = GJ[k]; /* G J on the nonzero columns, as add_small_n's gj (r, id[c]) */
    chain_gj(n, dim, Jk, G, id, nc, Jc, gj);
    double *D = grit_hessian_dblock(h, tree[k], n);
    for (int a = 0; a < nc; ++a) {
      for (int b = 0; b <= a; ++b) {
        double s = 0.0;
        for (int r = 0; r < dim; ++r) s += Jc[r * nc + a] * gj[r * nc + b];
        row[b] = s;
      }
      double *Di = D + (size_t)id[a] * n;
      for (int b = 0; b <= a; ++b) Di[id[b]] += row[b];
      for (int b = 0; !lower && b < a; ++b) D[(size_t)id[b] * n + id[a]] += row[b];
    }
  }
  if (pair >= 0) {
    const int ka = tree[0] < tree[1] ? 0 : 1, kb = 1 - ka; /* block rows: tree b (larger), cols: tree a */
    const int na = m->tree_dofnum[tree[ka]], nb = m->tree_dofnum[tree[kb]], nca = nck[ka];
    const double *Jb = J[kb], *gja = GJ[ka];
    const int *ida = idx[ka];
    double *C = grit_hessian_cblk(h, pair, na * nb);
    for (int rr = 0; rr < nck[kb]; ++rr) {
      const int r = idx[kb][rr];
      for (int cc = 0; cc < nca; ++cc) {
        double s = 0.0;
        for (int q = 0; q < dim; ++q) s += Jb[q * nb + r] * gja[q * nca + cc];
        row[cc] = s;
      }
      double *Cr = C + (size_t)r * na;
      for (int cc = 0; cc < nca; ++cc) Cr[ida[cc]] += row[cc];
    }
  }
}

static inline __attribute__((always_inline)) void add_pair_chain_dim(grit_hessian *h, int dim, const int tree[2],
                                                                     const double *const J[2], const double *G,
                                                                     int pair, int lower) {
  int idx[2][64], nck[2];
  for (int k = 0; k < 2; ++k) {
    const int n = h->m->tree_dofnum[tree[k]];
    nck[k] = 0;
    for (int c = 0; c < n; ++c) {
      int nz = 0;
      for (int r = 0; r < dim; ++r) nz |= J[k][r * n + c] != 0.0;
      idx[k][nck[k]] = c;
      nck[k] += nz;
    }
  }
  const int *const id[2] = {idx[0], idx[1]};
  if (dim == 3) add_pair_chain_in(h, 3, tree, J, G, pair, id, nck, lower); /* contacts: 3 rows unrolled */
  else if (dim == 1) add_pair_chain_in(h, 1, tree, J, G, pair, id, nck, lower);
  else add_pair_chain_in(h, dim, tree, J, G, pair, id, nck, lower);
}
static __attribute__((noinline)) void add_pair_chain_base(grit_hessian *h, int dim, const int tree[2],
                                                          const double *const J[2], const double *G, int pair) {
  add_pair_chain_dim(h, dim, tree, J, G, pair, 0);
}
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static __attribute__((noinline, target("avx2"))) void add_pair_chain_avx2(grit_hessian *h, int dim, const int tree[2],
                                                                        const double *const J[2], const double *G,
                                                                        int pair) {
  add_pair_chain_dim(h, dim, tree, J, G, pair, 0);
}
/* The lower triangles of the trees' blocks only (as add_small_lower_avx2) */
static __attribute__((noinline, target("avx2"))) void add_pair_chain_lower_avx2(grit_hessian *h, int dim,
                                                                              const int tree[2],
                                                                              const double *const J[2],
                                                                              const double *G, int pair) {
  add_pair_chain_dim(h, dim, tree, J, G, pair, 1);
}
#endif

/* add_pair_chain when it applies (two trees of up to 64 dofs, one of CHAIN_MIN_NV or more, up to 3 rows:
 * the caller tests the last two); returns 0 (nothing added) otherwise. */
static __attribute__((noinline)) int add_pair_chain(grit_hessian *h, int dim, const int tree[2], const double *const J[2],
                                                    const double *G, int pair) {
  const int n0 = h->m->tree_dofnum[tree[0]], n1 = h->m->tree_dofnum[tree[1]];
  if (n0 > 64 || n1 > 64) return 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    if (chain_lower(h)) add_pair_chain_lower_avx2(h, dim, tree, J, G, pair);
    else add_pair_chain_avx2(h, dim, tree, J, G, pair);
    return 1;
  }
#endif
  add_pair_chain_base(h, dim, tree, J, G, pair);
  return 1;
}

void grit_hessian_pair_chain(grit_hessian *h, int allow) {
  grit_hessian_keep_invalidate(h);
  h->pair_chain = 0;
  for (int t = 0; allow && t < h->m->ntree; ++t)
    h->pair_chain |= h->m->ntree > 1 && h->m->tree_dofnum[t] >= CHAIN_MIN_NV && h->m->tree_dofnum[t] <= 64;
}

/* The chain path for a single-tree constraint of 1-3 rows on a tree of CHAIN_MIN_NV or more dofs when J
 * has zero columns (on trees of up to 64 dofs, or with h->no_big_chain, at most 64 nonzero ones); returns
 * 0 (nothing added) otherwise. On the way it tells whether the constraint keeps a tree-ordered tree's
 * pattern (off_pattern when it does not). */
static int add_chain(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                     const double *G, const int *cols, int ncols) {
  const int n = h->m->tree_dofnum[tree[0]];
  if (ntree != 1 || n < CHAIN_MIN_NV || dim > 3) {
    for (int k = 0; h->any_tc && k < ntree; ++k)
      if (h->tc_ok[tree[k]]) off_pattern(h, tree[k]);
    return 0;
  }
  if (n > 64 && !h->no_big_chain) return add_chain_big_tree(h, dim, tree[0], J[0], G, cols, ncols);
  /* trees of more than 64 dofs too (a composite cloth's one tree of 166: the whole n^2 sum was 84 % of
   * its step), as long as the chain has at most 64 dofs; otherwise the whole-tree sum */
  int idxs[65], nc = 0;
  const int *idx = cols ? cols : idxs; /* (the caller's list: the same columns as the scans below) */
  const double *J0 = J[0];
  /* (the same columns four at a time: column by column the scan was a third of the loop's add_chain) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  const int vec = cols || (n <= 64 && !h->no_chain_lower && __builtin_cpu_supports("avx2"));
  if (cols) nc = ncols;
  else if (vec) nc = grit_hessian_nonzero_columns(J0, dim, n, idxs);
#else
  const int vec = cols != NULL;
  if (cols) nc = ncols;
#endif
  for (int c = 0; !vec && c < n && nc <= 64; ++c) {
    int nz = 0;
    for (int r = 0; r < dim; ++r) nz |= J0[r * n + c] != 0.0;
    idxs[nc] = c;
    nc += nz;
  }
  if (nc > 64) return 0; /* tc_ok trees have at most 64 dofs: nothing to keep */
  /* two branches (a contact of the tree with itself, a tendon): fill; a chain keeps the pattern */
  if (h->tc_ok[tree[0]] && !grit_treechol_is_chain(h->m, tree[0], idx, nc)) off_pattern(h, tree[0]);
  if (nc == n) return 0;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (__builtin_cpu_supports("avx2")) {
    if (chain_lower(h)) add_chain_lower_avx2(h, dim, tree[0], J0, G, idx, nc);
    else add_chain_avx2(h, dim, tree[0], J0, G, idx, nc);
    return 1;
  }
#endif
  add_chain_base(h, dim, tree[0], J0, G, idx, nc);
  return 1;
}

/* grit_hessian_add and grit_hessian_add_cols (each its own copy: the scan's callers pass no list) */
static inline __attribute__((always_inline)) void add_in(grit_hessian *h, int dim, int ntree, const int tree[2],
                                                         const double *const J[2], const double *G, int pair,
                                                         const int *cols, int ncols) {
  const grit_model *m = h->m;
  /* a constraint in its model's zero region (G = 0: a candidate not touching) adds nothing (a contact's
   * 9 entries as a constant, unrolled: the loop was 1 % of the series' step) */
  const int zero = dim == 3 ? all_zero(G, 9) : all_zero(G, dim * dim);
  h->factored = 0;
  if (zero) return;
  if (grit_hessian_kept(h, ntree, tree, pair)) return; /* every block it adds to is kept (begin_kept) */
  if (!h->any_tc && m->tree_dofnum[tree[0]] < CHAIN_MIN_NV && (ntree < 2 || m->tree_dofnum[tree[1]] < CHAIN_MIN_NV)) {
    add_small(h, dim, ntree, tree, J, G, pair); /* (free bodies, particles: add_chain and the pair chain take
                                                   neither, and no tree's pattern is tracked) */
    return;
  }
  if (m->tree_dofnum[tree[0]] <= 64 && (ntree < 2 || m->tree_dofnum[tree[1]] <= 64)) {
    if (add_chain(h, dim, ntree, tree, J, G, cols, ncols)) return;
    if (h->pair_chain && ntree == 2 && dim <= 3 &&
        (m->tree_dofnum[tree[0]] >= CHAIN_MIN_NV || m->tree_dofnum[tree[1]] >= CHAIN_MIN_NV) &&
        add_pair_chain(h, dim, tree, J, G, pair))
      return;
    add_small(h, dim, ntree, tree, J, G, pair);
    return;
  }
  if (add_chain(h, dim, ntree, tree, J, G, cols, ncols)) return; /* a chain of at most 64 dofs in a larger tree */
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
    double *D = grit_hessian_dblock(h, tree[k], n);
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
    double *C = grit_hessian_cblk(h, pair, na * nb);
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

void grit_hessian_add(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                      const double *G, int pair) {
  add_in(h, dim, ntree, tree, J, G, pair, NULL, 0);
}

void grit_hessian_add_cols(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                           const double *G, int pair, const int *cols, int ncols) {
  add_in(h, dim, ntree, tree, J, G, pair, cols, ncols);
}
