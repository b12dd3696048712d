/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_internal.h — the block Cholesky's state, shared by its blockchol_*.c files (the analysis and
 * factorization, the order, the kernels, the solves); internal to them. */
#ifndef GRIT_BLOCKCHOL_INTERNAL_H
#define GRIT_BLOCKCHOL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model_internal.h"

struct grit_blockchol {
  const grit_model *m;
  int nt, words;     /* trees; 64-bit words of one adjacency row */
  int *order, *pos;  /* (nt) elimination order: tree of position p, position of tree t */
  int *deg;          /* (nt) weighted degree (dofs of the neighbours) during the analysis */
  unsigned char *done;
  uint64_t *adj;     /* (nt x words) the elimination graph's adjacency during the analysis */
  int *colptr;       /* (nt + 1) column p's blocks: entries colptr[p] .. colptr[p+1]-1 */
  int *doff;         /* (nt) offset of position p's diagonal block (n x n, row-major, lower used) */
  int *rows, *roff;  /* (entries) row position of each off-diagonal block, its offset (n_row x n_col) */
  int cap_rows, cap_roff;
  int npairs;        /* the analysed coupled pairs */
  struct pair_map {  /* (pairs) where each coupling block goes */
    int dst;         /* offset of its block in Lx */
    int na, nb;      /* dofs of the pair's trees a < b: the caller's block is nb x na */
    int transposed;  /* the block in L is (rows a, cols b): the caller's block transposed */
    int tree;        /* tree a */
  } *pairs;
  int cap_pairs;
  double *Lx;        /* the factor's blocks */
  size_t cap_x;
  double flops;      /* of a factorization of every tree */
  double *col_flops; /* (nt) of each position's column */
  double last_flops; /* of the last factorization (the trees it was asked for) */
  double *T;         /* (nv x RHS_CHUNK) right-hand sides transposed, for the many-column solves (dof i's
                      * row at T + i RHS_CHUNK): Tmem, or within it while a part's chunk is solved */
  double *Tmem;      /* (2 nv x RHS_CHUNK) T's room */
  double *inv;       /* (nv) reciprocals of the pivots, by dof */
  int nparts;        /* connected components of the factor's graph (parts): H has no block between two */
  int *part;         /* (nt) the part of each tree */
  int *part_ptr;     /* (nt + 1) part k's positions: part_pos[part_ptr[k]] .. [part_ptr[k+1]-1], ascending */
  int *part_pos;     /* (nt) */
  int *part_tail;    /* (nt + 2) -1 between the many-column solves' groupings (grit_blockchol_solve_parts) */
  struct grit_treechol *tc;   /* the trees' compact patterns (treechol.h) */
  const unsigned char *chain; /* (nt, or NULL) trees whose block may be factored in tree order (the caller's) */
  unsigned char *tree_tc;     /* (nt) trees whose last factor is tree-ordered (compact at doff) */
  int no_big;                 /* grit_blockchol_big_kernel(b, 0): every diagonal block by chol_block */
  int *heap, *hpos;  /* (nt) the minimum-degree order's heap of trees by (degree, index); a tree's place in it
                        (hpos: the particles' kernel's map of a column's rows to their blocks in the factor) */
  int heap_n;        /* trees in the heap (0: the order's linear search runs) */
  int uniform;       /* the dofs of every tree when they are all the same and span two words or more,
                        else 0 (then the degrees by popcount); uniform_all: whatever the words */
  int uniform_all;
  int avx2_merge;    /* the order's row merges over whole rows by grit_blockchol_merge_words_avx2 */
  int no_fast_order; /* grit_blockchol_fast_order(b, 0): the order by the linear search and the bit loops,
                        each neighbour's degree recounted over its whole row */
  int *wlist;        /* (words) the words of an eliminated tree's row that are nonzero, or its own */
  int any3;          /* some tree has 3 dofs (col_m and the targets are kept only then) */
  int *col_m;        /* (nt) the rows of every block below column p when they are all the same, else 0 */
  unsigned char *pair3; /* (nt) columns p, p+1 factored as a pair of particles' columns (blockchol.c) */
  int *tgt;          /* (cap_tgt) the Schur updates' target blocks, recorded by a column's first factorization
                        after an analysis: column p's pairs (ea < eb) in loop order from tgt_ptr[p] */
  size_t cap_tgt;
  size_t *tgt_ptr;   /* (nt + 1) column p's first target; tgt_ptr[nt] > cap_tgt: none recorded */
  unsigned char *tgt_done; /* (nt) column p's targets recorded since the analysis */
  int no_small;               /* grit_blockchol_small_kernel(b, 0): 3 x 3 blocks' Schur updates by the plain loops */
  int no_tiles;               /* grit_blockchol_tiles(b, 0): the many-column solves' plain loops only */
  int no_col3;                /* grit_blockchol_particle_kernel(b, 0): particles' columns by the plain loops */
  int no_pair3;               /* grit_blockchol_pair_kernel(b, 0): a supernode's particle columns one by one */
  struct grit_bigsparse **sp; /* (nt) a tree of more than 64 dofs: its block's sparse factor (blockchol_sparse.c) */
  unsigned char *tree_sp;     /* (nt) trees whose last factor is that sparse one (their rows in doff unused) */
  int no_sparse;              /* grit_blockchol_sparse_trees(b, 0): big trees' blocks dense, in dof order */
  int rows_stale;             /* the row lists and runs below not yet built for the last analysis */
  int *rptr, *rfill;          /* (nt + 1) position t's row of blocks: rsrc/rblk[rptr[t] .. rptr[t+1]-1] */
  int *rsrc, *rblk;           /* (colptr[nt]) each block's column position (ascending in a row), its offset */
  int cap_rsrc, cap_rblk;
  unsigned char *nzp;         /* (nt) the pull's forward sweep: position p's rows not all zero */
  struct grit_pull_seg *seg;  /* (nt) the pull's scratch: one row's blocks */
  int no_pull;                /* grit_blockchol_pull(b, 0): the many-column solves block by block */
  int *run_ptr, *runs;        /* (nt + 1, 2 nt) part k's rows as runs of consecutive dofs [runs[2i], runs[2i+1]),
                                 i = run_ptr[k] .. run_ptr[k+1]-1, ascending (the trees' dofs merged) */
  int no_runs;                /* grit_blockchol_runs(b, 0): the columns moved into T tree by tree */
  int *rng;                   /* (2 nt) the moves' ranges tree by tree (no_runs) */
  unsigned char *part6;       /* (nt) parts with a 6-dof tree (built with the runs); any6: some tree has 6 */
  int any6;
  int pull_here;              /* the chunk being solved may be pulled (no 6-dof tree among its positions) */
  int no_keep;                /* grit_blockchol_keep_order(b, 0): every analysis orders afresh */
  int keep_ok;                /* the order is a fresh one with a component of more than HEAP_MIN trees */
  double keep_flops;          /* the factor's flops under the last fresh order (the kept order's bound) */
  int layout_kept;            /* the current layout came from a kept order (grit_blockchol_forget_order) */
  long kept;                  /* analyses that kept the order (for tests) */
  uint64_t *wsum;             /* (nt) the fill in order's scratch: a row's nonzero words (words <= 64) */
};

/* A run of products for blockchol_pull.c's rows: for row r, the values c[r rs + k cs] times rows y + k
 * RHS_CHUNK, k = 0 .. cnt-1. */
typedef struct grit_pull_seg {
  const double *c, *y;
  int cs, rs, cnt;
} grit_pull_seg;

/* blockchol_pull.c: the row lists of the factor's blocks and the parts' runs (after an analysis); the many-column forward
 * and backward substitutions of b->T's nc columns over the positions, row by row with AVX2 (the same
 * bits as blockchol_many.c's sweeps; call only with AVX2); grit_blockchol_pull(b, 0) forbids them. */
void grit_blockchol_block_rows(struct grit_blockchol *b);
void grit_blockchol_pull_forward(struct grit_blockchol *b, int nc, const int *pos, int npos);
void grit_blockchol_pull_backward(struct grit_blockchol *b, int nc, const int *pos, int npos);
void grit_blockchol_pull(struct grit_blockchol *b, int allow);
/* Allows (1, the default) or forbids (0) moving a part's columns into and out of T over its runs of
 * consecutive dofs rather than tree by tree (blockchol_many.c; the same copies), for tests. */
void grit_blockchol_runs(struct grit_blockchol *b, int allow);

/* blockchol_keep.c: the fill of the pattern in b->adj under the order b->order already holds (rows by
 * tree from doff[p], then colptr; *ne the blocks), as the minimum-degree elimination leaves them;
 * *ne = -1 (nothing usable) once its flops exceed max_flops. */
grit_status grit_blockchol_fill_in_order(struct grit_blockchol *b, int npairs, const int *pa, const int *pb,
                                        double max_flops, int *ne, char *message);

/* Right-hand sides solved together: transposed into rows of this many, the inner loops run along them. */
#define RHS_CHUNK 64

/* grit_blockchol_solve for many columns (blockchol_many.c). */
void grit_blockchol_solve_many(struct grit_blockchol *b, double *B, int nrhs);

/* Allows (1, the default) or forbids (0) the many-column solves' AVX2 row kernels for dense blocks
 * (blockchol_many.c; the same bits as the plain loops), for tests. */
void grit_blockchol_tiles(struct grit_blockchol *b, int allow);
/* Allows (1, the default) or forbids (0) the row kernels of big trees' sparse factors' many-column solves
 * (grit_bigsparse_rows_kernel; the same bits), for tests. */
void grit_blockchol_sparse_rows(struct grit_blockchol *b, int allow);

/* The minimum-degree order's merge of row rk into row ru over all W words (ru |= rk), returning the
 * weight (tree_dofnum: dim) of the bits added; by AVX2 four words at a time (blockchol_order_avx2.c; call
 * only when grit_blockchol_have_avx2()). */
int grit_blockchol_merge_words_avx2(uint64_t *ru, const uint64_t *rk, int W, const int *dim);

/* Grows *p (elements of `size` bytes) to hold at least n, by doubling; 0 on failure (*p unchanged). */
static inline int grit_blockchol_grow(void **p, int *cap, int n, size_t size) {
  if (n <= *cap) return 1;
  int c = *cap > 0 ? *cap : 16;
  while (c < n) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* blockchol_order.c: the analysis's graph of trees (bit rows, weighted degrees), its components, and the
 * minimum-degree order (ne: the factor's entries) */
void grit_blockchol_build_graph(struct grit_blockchol *b, int npairs, const int *pa, const int *pb);
void grit_blockchol_group_components(struct grit_blockchol *b, int npairs, const int *pa, const int *pb);
grit_status grit_blockchol_order_min_degree(struct grit_blockchol *b, int *ne, char *message);

/* Whether the processor runs the AVX2 kernels of blockchol_factor_simd.c (0 with GRIT_NO_AVX2). */
int grit_blockchol_have_avx2(void);

/* A free body's column p after its diagonal block L is factored (inv: its reciprocal pivots): the
 * column's blocks solved and the Schur complement applied with AVX2, the same bits as factor_column's
 * loops. Returns 0, having done nothing, unless every block below is 6 x 6 (blockchol_factor_simd.c). */
int grit_blockchol_column6_avx2(struct grit_blockchol *b, int p, const double *L, const double *inv);

/* A particle's column p (3 dofs, every block below 3 x 3) after its diagonal block L is factored (inv:
 * its reciprocal pivots): the blocks solved and the Schur complement applied with AVX2, the same bits as
 * factor_column's loops (blockchol_factor_simd.c; call only when grit_blockchol_have_avx2()). */
void grit_blockchol_column3_avx2(struct grit_blockchol *b, int p, const double *L, const double *inv);
/* A pair of particles' columns p, q = p+1 whose rows below q are the same (a supernode's two columns),
 * as two calls of grit_blockchol_column3_avx2, the same bits: lead (after p's diagonal block) solves p's
 * blocks and updates column q's; then, after q's diagonal block, pair solves q's and applies p's and q's
 * updates of the blocks among their common rows together (one read and write a block). Scratch: b->T,
 * 198 doubles a common row plus 72 (grit_blockchol_pair3_fits). */
void grit_blockchol_pair3_lead_avx2(struct grit_blockchol *b, int p, const double *L, const double *inv);
void grit_blockchol_pair3_avx2(struct grit_blockchol *b, int q, const double *L, const double *inv);
void grit_blockchol_backward3_avx2(const struct grit_blockchol *b, int p, double *y, const double *x);

/* Column p of n dofs (n <= 48) with only particles (3-dof trees) below it, as
 * grit_blockchol_column6_avx2 for a free body's: the same bits as factor_column's loops; 0 (nothing
 * done) unless every block below has 3 rows. */
int grit_blockchol_column_r3_avx2(struct grit_blockchol *b, int p, int n, const double *L, const double *inv);

/* The in-place Cholesky of a large n x n row-major diagonal block L (lower triangle; the upper is
 * overwritten with L^T), the reciprocal pivots into rinv: the same bits as blockchol.c's chol_block,
 * vectorized with AVX2 when avx2 (blockchol_big.c). Returns the failing column, or -1. */
int grit_blockchol_chol_big(double *L, int n, double *rinv, int avx2);

/* A big tree's block factored over its nonzeros in a minimum-degree order (blockchol_sparse.c). */
typedef struct grit_bigsparse grit_bigsparse;
grit_bigsparse *grit_bigsparse_create(const grit_model *m, int tree); /* NULL: out of memory */
void grit_bigsparse_free(grit_bigsparse *s);
/* Analyses H's block (row-major n x n, lower triangle read) unless its nonzeros lie in the analysed fill;
 * allow 0: never use the sparse factor. */
void grit_bigsparse_prepare(grit_bigsparse *s, const double *H, int allow);
int grit_bigsparse_use(const grit_bigsparse *s); /* the last analysis chose the sparse factor */
double grit_bigsparse_flops(const grit_bigsparse *s);
/* Factors H's block in the analysed pattern; returns the failing dof (within the tree) or -1. */
int grit_bigsparse_factor(grit_bigsparse *s, const double *H, double *lo, double *hi);
/* Allows (1, the default) or forbids (0) the AVX2 column updates of the factor (the same bits). */
void grit_bigsparse_kernel(grit_bigsparse *s, int allow);
/* Allows (1, the default) or forbids (0) the supernodes' grouped column updates (the same bits). */
void grit_bigsparse_snodes(grit_bigsparse *s, int allow);
/* The row-list entries (column j's earlier columns) updated in groups of more than one, for tests. */
int grit_bigsparse_grouped(const grit_bigsparse *s);
/* H's pattern found by the plain loop and by the AVX2 one agree (for tests; leaves the analysis's scratch). */
int grit_bigsparse_pattern_same(grit_bigsparse *s, const double *H);
/* Solves H x = y in place (y: the tree's n dofs). */
void grit_bigsparse_solve(grit_bigsparse *s, double *y);
/* The same for nc <= RHS_CHUNK columns held as rows: dof i's values at Y + i stride. */
void grit_bigsparse_solve_rows(grit_bigsparse *s, double *Y, int stride, int nc);
/* Allows (1, the default) or forbids (0) solve_rows' row kernels (blockchol_sparse_rows.c; the same bits). */
void grit_bigsparse_rows_kernel(grit_bigsparse *s, int allow);
/* H's block = the block passed to the factor + V^T V, V's rows sqrt(g) J added here (up to LOWRANK_CAP;
 * 0: no room, nothing added); cleared for each new H. to_dense adds V^T V to a dense n x n block. */
#define LOWRANK_CAP 8
void grit_bigsparse_lowrank_clear(grit_bigsparse *s);
int grit_bigsparse_lowrank_add(grit_bigsparse *s, const double *J, double g);
int grit_bigsparse_lowrank_rows(const grit_bigsparse *s);
void grit_bigsparse_lowrank_to_dense(const grit_bigsparse *s, double *D);

#endif
