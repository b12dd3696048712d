/* SPDX-License-Identifier: Apache-2.0 */
/* hessian_internal.h — the Hessian's state shared by its assembly (hessian_assemble.c) and its
 * factorizations (hessian.c) (internal). See hessian.h. */
#ifndef GRIT_HESSIAN_INTERNAL_H
#define GRIT_HESSIAN_INTERNAL_H

#include <cholmod.h>
#include <string.h>

#include "blockchol.h"
#include "model_internal.h"
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
  int no_dense_chain;   /* grit_hessian_dense_chains(h, 0): chains of 24 dofs or more in tree order too */
  unsigned char *dchain; /* (ntree) a chain of 24 to 64 dofs taken out of the tree order (hessian.c) */
  int lower_now;         /* grit_hessian_small_lower at this assembly's begin */
  int any_dchain;        /* some tree is */
  grit_treechol *tcp;   /* the trees' compact patterns (for the pattern copies) */

  /* scratch for trees of more than 64 dofs (NULL when none): a constraint's nonzero columns (maxn),
   * its J on them and G J (3 x maxn each), a row of J^T G J (maxn), G J of two trees (2 x 3 x maxn) */
  int *big_idx, *big_runs; /* (big_runs: the runs of adjacent columns in a list, maxn + 1) */
  double *big_jc, *big_gj, *big_row, *big_gjt;
  int no_big_chain; /* the old paths: chains of at most 64 columns, G J of a big tree on the fly */
  int no_span_avx2; /* grit_hessian_jrow_span column by column (grit_hessian_span_kernel(h, 0)) */
  int no_lower;     /* grit_hessian_big_lower(h, 0): big trees' blocks copied and summed whole */
  int no_lower_avx2; /* grit_hessian_lower_kernel(h, 0): a lower-only block's sums by the plain loop */
  int no_lower_runs; /* grit_hessian_lower_runs(h, 0): those AVX2 sums four columns a gather, not by runs */
  int no_free_kernel; /* grit_hessian_free_kernel(h, 0): a free body's 3-row terms by add_small's loops */
  int no_chain_lower; /* grit_hessian_chain_lower(h, 0): a chain's sums on a tree of up to 64 dofs into both
                         triangles, and the lower-only sums without the adjacent columns' vector stores */
  int pair_chain;    /* some tree has 12 to 64 dofs, and grit_hessian_pair_chain allows: two-tree terms
                        over J's nonzero columns (else add_small's over all) */

  /* Blocks kept between assemblies (grit_hessian_begin_kept): per tree and per pair, whether the block holds
   * what a full assembly would put there now (A and every J as at its assembly; valid), whether this
   * assembly rebuilds it (rebuild: a constraint on it changed, or it is not valid, or always: a tree of more
   * than 64 dofs or one the tree-ordered factor may take, with their pairs); kept ones are sunk into sink */
  unsigned char *tvalid, *pvalid, *rebuild, *prebuild, *always;
  double *sink;     /* (64 x 64) where an add's terms on a kept block go */
  int upd;          /* the current assembly keeps the blocks not marked rebuild */
  int pat_same;     /* the pairs inserted since pattern_reset are the previous pattern's, at its indices */
  int old_npairs;   /* the previous pattern's number of pairs */
  int no_keep;      /* grit_hessian_keep_blocks(h, 0): begin_kept is begin (tests) */
  int any_keep;     /* !no_keep, !skip_solves and some tree is not always rebuilt: begin_kept may keep a block */
  int skip_solves;  /* the coming solves that keep nothing, after one that kept too few (plan_blocks) */
  int none_valid;   /* no block is valid (keep_invalidate; until the next plan_blocks): nothing to keep */
  long long nkept; /* the tree blocks begin_kept kept, since creation (tests) */

  const unsigned char *tree_on; /* grit_hessian_restrict's trees (NULL: all) */
  int factored;    /* a factor of the current H exists */
  int last_path;   /* the path that computed it: 0 dense, 1 block-sparse, 2 CHOLMOD */
};

/* The path: 0 dense, 1 block-sparse, 2 CHOLMOD. */
static inline int grit_hessian_choose_path(const struct grit_hessian *h) {
  if (h->force >= 1) return h->force;
  if (!h->Hd) return 1;
  if (h->force == 0) return 0;
  return h->nv > h->dense_max_nv ? 1 : 0;
}

/* A tree of more than 64 dofs has only the lower triangle of its block in diag (copied from A, summed
 * into by the chain assembly): every factor reads only that (the block path's kernels, CHOLMOD's
 * pattern, the dense path's left-looking columns); the upper triangle is left stale. Copying and summing both was a fifth of the
 * flag's step (a tree of 340 dofs, 288 spring tendons over about 60 of its dofs each). */
static inline int grit_hessian_lower_only(const struct grit_hessian *h, int tree) {
  return !h->no_lower && h->m->tree_dofnum[tree] > 64;
}

/* Whether the sums into a tree of up to 64 dofs may go to the lower triangle of its block only
 * (hessian_assemble.c): every factor of the block-sparse and CHOLMOD paths reads only that (treechol's pattern
 * gather, blockchol's chol_block, chol_big and column updates, CHOLMOD's values r >= c); the dense path reads
 * the upper one. grit_hessian_chain_lower(h, 0): both, as before. */
static inline int grit_hessian_small_lower(const struct grit_hessian *h) {
  return !h->no_chain_lower && grit_hessian_choose_path(h) != 0;
}

/* Whether tree t's block of A is copied lower triangle only: a big tree's (grit_hessian_lower_only), and a
 * chain's taken out of the tree order when its sums are too (its block of 24 to 64 dofs whole was one
 * memcpy of up to 32 kB a Newton iteration). */
static inline int grit_hessian_copy_lower_only(const struct grit_hessian *h, int t) {
  return h->m->tree_dofnum[t] > 64 ? !h->no_lower : h->dchain[t] && grit_hessian_small_lower(h);
}

/* Whether a constraint on trees tree[0..ntree-1] (pair: their pair, or -1) adds only to blocks the current
 * assembly keeps (grit_hessian_begin_kept): grit_hessian_add would add nothing. */
static inline int grit_hessian_kept(const struct grit_hessian *h, int ntree, const int tree[2], int pair) {
  return h->upd && !h->rebuild[tree[0]] && (ntree < 2 || !h->rebuild[tree[1]]) && (pair < 0 || !h->prebuild[pair]);
}

/* Whether grit_hessian_begin_kept may keep any block (else it is grit_hessian_begin: a robot's one tree
 * of the tree-ordered factor; its caller need not mark the constraints that changed). Not in a solve's
 * first assembly either (none_valid: every block is rebuilt, as grit_hessian_begin rebuilds it, and the
 * same blocks are valid after it): the marks and the second pass over the constraints were a few percent
 * of a tiny scene's step, whose one Newton iteration assembles once (boxbox_deep). */
static inline int grit_hessian_keeps_any(const struct grit_hessian *h) { return h->any_keep && !h->none_valid; }

/* A big tree's block of A into diag: its lower triangle (grit_hessian_lower_only). */
static inline void grit_hessian_copy_lower(struct grit_hessian *h, const double *A, int t) {
  const int n = h->m->tree_dofnum[t], a = h->m->tree_madr[t];
  for (int i = 0; i < n; ++i)
    memcpy(h->diag + a + (size_t)i * n, A + a + (size_t)i * n, sizeof(double) * (size_t)(i + 1));
}

/* Tree t's block of A into diag: its lower triangle only for a big tree. */
static inline void grit_hessian_copy_block(struct grit_hessian *h, const double *A, int t) {
  const int n = h->m->tree_dofnum[t], a = h->m->tree_madr[t];
  if (n == 6) /* a free body's block as a constant-size copy, inlined (the call was 0.8 % of the step) */
    memcpy(h->diag + a, A + a, sizeof(double) * 36);
  else if (grit_hessian_copy_lower_only(h, t)) grit_hessian_copy_lower(h, A, t);
  else
    memcpy(h->diag + a, A + a, sizeof(double) * (size_t)n * (size_t)n);
}

/* Which blocks the coming assembly rebuilds and which hold a full assembly's terms after it (hessian.c);
 * keep 0 for grit_hessian_begin, 1 for grit_hessian_begin_kept. */
void grit_hessian_plan_blocks(struct grit_hessian *h, const unsigned char *on, int keep);

/* The trees the block-sparse path rebuilds and factors: the restriction on that path, else all. */
static inline const unsigned char *grit_hessian_trees_on(const struct grit_hessian *h) {
  return grit_hessian_choose_path(h) == 1 ? h->tree_on : NULL;
}

/* The indices of the nonzero columns of J (dim rows of n, row-major: any row nonzero; -0 is zero, NaN is
 * not) into idx, ascending; returns their count (hessian_columns.c). */
int grit_hessian_nonzero_columns(const double *J, int dim, int n, int *idx);

/* Where an add's terms on tree t's block (n x n) go: the block, or, when this assembly keeps it
 * (grit_hessian_begin_kept), the sink, cleared (its sums are never read; cleared, they stay finite). Kept
 * blocks are of trees of at most 64 dofs (grit_hessian_keep_touch). */
static inline double *grit_hessian_dblock(struct grit_hessian *h, int t, int n) {
  if (!h->upd || h->rebuild[t]) return h->diag + h->m->tree_madr[t];
  memset(h->sink, 0, sizeof(double) * (size_t)n * (size_t)n);
  return h->sink;
}
/* The same for pair k's coupling block (of size entries), into the second half of the sink. */
static inline double *grit_hessian_cblk(struct grit_hessian *h, int k, int size) {
  if (!h->upd || h->prebuild[k]) return h->cblock + h->poff[k];
  memset(h->sink + 64 * 64, 0, sizeof(double) * (size_t)size);
  return h->sink + 64 * 64;
}

/* hessian_contact.c: a 3-row term (a contact's) on trees of up to 64 dofs, one or two, into the lower triangles
 * and the coupling block by AVX2 kernels, the same bits there as hessian_assemble.c's add_small; returns 0 (nothing
 * added) for a normal-only G on free bodies (add_small's fewer terms) or where the build has no AVX2 code. Only
 * on a CPU with AVX2 (the caller's test). */
int grit_hessian_add_rows3_avx2(struct grit_hessian *h, int ntree, const int tree[2], const double *const J[2],
                                const double *G, int pair);
/* hessian_contact.c: the terms of n 3-row constraints on free body `tree` (a tree of 6 dofs), in order, on its
 * block's lower triangle, the block held in registers between them: the same bits as n calls of
 * grit_hessian_add_rows3_avx2 (each G with a nonzero entry off the normal's, which those calls would take to
 * add_normal_n). Only where grit_hessian_free_run_ok. */
void grit_hessian_add_free_run_avx2(struct grit_hessian *h, int tree, int n, const double *const *J,
                                    const double *const *G);
/* Whether grit_hessian_add, now (after grit_hessian_begin), takes a 3-row term on a free body alone in its tree
 * to grit_hessian_add_rows3_avx2's free-body kernel: the CPU has AVX2, no tree is factored in tree order, the
 * blocks are written where they are (not kept) and only their lower triangles (hessian_assemble.c, add_small). */
static inline int grit_hessian_free_run_ok(const struct grit_hessian *h) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  return __builtin_cpu_supports("avx2") && !h->any_tc && !h->upd && h->lower_now && !h->no_free_kernel;
#else
  (void)h;
  return 0;
#endif
}

#endif
