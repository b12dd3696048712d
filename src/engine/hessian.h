/* SPDX-License-Identifier: Apache-2.0 */
/* hessian.h — the block-sparse Hessian H = A + sum_i J_i^T G_i J_i of the contact problem, and its
 * Cholesky factorization (internal).
 *
 * H is stored by blocks that follow the model's cliques: one dense block per tree (A's blocks plus the
 * contributions of constraints on that tree) and one dense coupling block per pair of trees that a
 * constraint touches together. The factorization is dense (LAPACK dpotrf on the expanded matrix) for
 * small nv, otherwise the block-sparse Cholesky of blockchol.h or, when the step settings ask for it,
 * CHOLMOD's supernodal Cholesky under AMD (grit_hessian_force_path picks the path). The symbolic analysis is
 * redone only when the set of coupled pairs changes. On the block-sparse path a tree of 12 to 64 dofs
 * coupled to no other whose constraints are all chains to the root is factored in its own order
 * without fill (treechol.h). The last numeric factor is kept and serves any number of right-hand
 * sides. */
#ifndef GRIT_HESSIAN_H
#define GRIT_HESSIAN_H

#include "model_internal.h"

typedef struct grit_hessian grit_hessian;

/* Room for `max_pairs` coupled tree pairs; the dense path is used when nv <= dense_max_nv. */
grit_status grit_hessian_create(const grit_model *m, int max_pairs, int dense_max_nv, grit_hessian **h,
                                char *message);
void grit_hessian_free(grit_hessian *h);

/* Declares the coupling pattern of the coming solves: call reset, then pair(a, b) for every
 * constraint touching two trees (returns the pair's index, or -1 when out of room), then commit. */
void grit_hessian_pattern_reset(grit_hessian *h);
int grit_hessian_pattern_pair(grit_hessian *h, int tree_a, int tree_b);
void grit_hessian_pattern_commit(grit_hessian *h);
/* Instead of reset, pairs and commit: the coming solves keep the committed pattern, the same pairs at the
 * same indices (for grit_hessian_begin_kept, no pair moved). */
void grit_hessian_pattern_keep(grit_hessian *h);

/* Restricts the coming assembly, factorization and solves to the trees t with tree_on[t] (NULL: all;
 * the array must stay valid while set). No declared pair may join a tree that is on to one that is
 * off: the trees that are on form a closed system, and on the block-sparse path the others' blocks
 * are neither rebuilt nor factored, and their rows are left alone by the solves. The dense and CHOLMOD
 * paths factor every tree (those that are off as their A block). */
void grit_hessian_restrict(grit_hessian *h, const unsigned char *tree_on);

/* Starts a new numeric H = A (tree-block storage, as in grit_model), couplings zero. */
void grit_hessian_begin(grit_hessian *h, const double *A);

/* Assembly that keeps the blocks of the last one where nothing they hold changed (a composite's tendons
 * between particles no contact touches: their G is constant over a solve's Newton iterations). After
 * pattern_commit, grit_hessian_keep_touch marks the blocks of each constraint whose added G differs from
 * what it added last time (or that adds one now and did not then, or the reverse; pair: its index in the pattern,
 * or -1 when it has none); then begin_kept starts H as grit_hessian_begin on the blocks marked,
 * not holding their last terms, of a tree of more than 64 dofs or of the tree-ordered factor's (and their
 * pairs), or whose pair moved in the pattern, and keeps the others. Every constraint is then added as after
 * grit_hessian_begin, and adds only to the blocks rebuilt (one on kept blocks only: nothing,
 * as grit_hessian_kept in hessian_internal.h tells): each block
 * gets the same sums in the same order, the same bits. The caller guarantees that A and every constraint's
 * J are those of the last assembly, and calls keep_invalidate when they change (a new solve).
 * grit_hessian_keep_blocks(h, 0): begin_kept is grit_hessian_begin (tests). */
void grit_hessian_keep_touch(grit_hessian *h, int ntree, const int tree[2], int pair);
void grit_hessian_begin_kept(grit_hessian *h, const double *A);
void grit_hessian_keep_invalidate(grit_hessian *h);
/* keep_invalidate at the start of a solve; after a solve whose assemblies kept under a quarter of the
 * blocks they could, the next 16 solves keep none (the tracking's cost, without its gain). */
void grit_hessian_keep_new_solve(grit_hessian *h);
void grit_hessian_keep_blocks(grit_hessian *h, int allow);
/* The number of tree blocks begin_kept kept since h was created (tests). */
long long grit_hessian_kept_count(const grit_hessian *h);

/* Adds J^T G J for one constraint of dimension dim touching trees tree[0..ntree-1] (coupled through
 * `pair` when ntree == 2) with Jacobian blocks J[k] (dim x tree_dofnum, row-major). */
void grit_hessian_add(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                      const double *G, int pair);
/* grit_hessian_add with J's nonzero columns given (a one-tree constraint of at most 3 rows): cols[0..ncols)
 * the increasing indices of the columns of J[0] with an entry other than +-0 (NaN counts), as the assembly's
 * own scan finds them (grit_hessian_nonzero_columns; the solver lists them once per solve, J being constant
 * during it); NULL: the scan, as grit_hessian_add. The same sums, the same bits. */
void grit_hessian_add_cols(grit_hessian *h, int dim, int ntree, const int tree[2], const double *const J[2],
                           const double *G, int pair, const int *cols, int ncols);

/* Factors the current H. GRIT_ERR_NUMERICAL if it is not positive definite. *cond gets a cheap
 * estimate (max/min diagonal of the factor, squared). */
grit_status grit_hessian_factor(grit_hessian *h, double *cond, char *message);

/* Solves H X = B in place for nrhs columns of length nv (column-major), with the last factor. */
grit_status grit_hessian_solve(grit_hessian *h, double *B, int nrhs);

/* The parts of the last factor: tree t's part, H having no block between trees of different parts
 * (grit_blockchol_parts), on the block-sparse path; NULL on the others (a single part). Sets *nparts. */
const int *grit_hessian_parts(const grit_hessian *h, int *nparts);

/* grit_hessian_solve for columns that each lie in one part of the last factor: column k is zero
 * outside the trees of part[k] (-1: anywhere), and so is its solution; only those rows are touched.
 * part NULL, or a path without parts: every column is solved whole. */
grit_status grit_hessian_solve_parts(grit_hessian *h, double *B, int nrhs, const int *part);
/* grit_hessian_solve_parts for columns at X[c] (column c's dof j at X[c] + j, grit_blockchol_solve_cols),
 * when the last factor has parts (grit_hessian_parts non-NULL); GRIT_ERR_STATE otherwise. */
grit_status grit_hessian_solve_cols(grit_hessian *h, double *const *X, int nrhs, const int *part);

/* Floating-point operations of the last factorization: n^3/3 on the dense path, the block factor's
 * count of its pattern (the trees it factored), CHOLMOD's count from its symbolic analysis. */
double grit_hessian_flops(const grit_hessian *h);

/* The path of the last factorization: 0 dense LAPACK, 1 block-sparse, 2 CHOLMOD. */
int grit_hessian_path(const grit_hessian *h);

/* Forces the dense (0), block-sparse (1) or CHOLMOD (2) path, or the automatic choice (-1), for
 * benchmarks and tests. */
void grit_hessian_force_path(grit_hessian *h, int path);

/* Allows (1, the default) or forbids (0) the tree-ordered factorization of a tree's block on the
 * block-sparse path (treechol.h), for benchmarks and tests: forbidden, every tree takes the dense
 * block path as before it existed. */
void grit_hessian_allow_tree_order(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) the dense block kernel for a tree of 24 to 64 dofs whose tree-ordered
 * factor would take at least half the dense one's multiply-adds (a chain of bodies; other rounding): forbidden,
 * such a tree is factored in tree order as before. Re-allows the tree order (grit_hessian_allow_tree_order). */
void grit_hessian_dense_chains(grit_hessian *h, int allow);

/* Allows (1) or forbids (0, the default) keeping a pile's elimination order while its pattern grows within
 * a solve (blockchol.h, grit_blockchol_keep_order). */
void grit_hessian_keep_order(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) the paths for trees of more than 64 dofs, for tests: the chain
 * assembly over any number of J's nonzero columns and G J in scratch (forbidden: at most 64 columns, the
 * whole-tree sum with G J's entries computed on the fly; the same sums either way), and the block
 * factor's kernel for large diagonal blocks (blockchol.h, grit_blockchol_big_kernel). */
void grit_hessian_big_tree_paths(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) the sparse factor of a tree of more than 64 dofs alone in its
 * part, in a fill-reducing order, when it costs less than the dense block (blockchol.h,
 * grit_blockchol_sparse_trees; other rounding), for tests. */
void grit_hessian_sparse_trees(grit_hessian *h, int allow);
/* Allows (1, the default) or forbids (0) that factor's AVX2 column updates (the same bits), for tests. */
void grit_hessian_sparse_kernel(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) keeping only the lower triangle of a tree of more than 64 dofs
 * in the assembled blocks (copied from A, summed into; the factors read only it): forbidden, both
 * triangles are copied and summed, as before. The same bits either way (A symmetric), for tests. */
void grit_hessian_big_lower(grit_hessian *h, int allow);
/* Allows (1, the default) or forbids (0) the AVX2 sums into such a lower triangle (four entries gathered
 * and stored one by one; forbidden: the plain loop), the same bits, for tests. */
void grit_hessian_lower_kernel(grit_hessian *h, int allow);
/* Allows (1, the default) or forbids (0) those AVX2 sums by runs of adjacent columns (one load and store of
 * four entries; forbidden: four entries gathered, stored one by one), the same bits, for tests. */
void grit_hessian_lower_runs(grit_hessian *h, int allow);
/* Allows (1, the default) or forbids (0) the AVX2 kernel of a 3-row term on one free body's lower triangle
 * (hessian_assemble.c, add_free_lower_avx2; forbidden: add_small's loops), the same bits, for tests. */
void grit_hessian_free_kernel(grit_hessian *h, int allow);
/* Allows (1, the default) or forbids (0) the chain sums of a constraint on a tree of up to 64 dofs into the
 * lower triangle of its block only, on the block-sparse and CHOLMOD paths (their factors read only that),
 * and the AVX2 lower-only sums' vector load and store for four adjacent columns. The same bits in the
 * lower triangles either way, for tests (forbidden: both triangles, as before). */
void grit_hessian_chain_lower(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) summing a constraint on two trees of up to 64 dofs, one of 12 or
 * more, over the nonzero columns of their J only (forbidden: every column, as before); the same values
 * (a negative zero may stay where the whole sum made it positive), for tests. */
void grit_hessian_pair_chain(grit_hessian *h, int allow);

/* Allows (1, the default) or forbids (0) the block factor's AVX2 kernel for particles' columns (3-dof
 * trees with only 3-dof blocks below: blockchol.h, grit_blockchol_particle_kernel), for tests. */
void grit_hessian_particle_kernel(grit_hessian *h, int allow);

/* The span [*lo, *hi) of the nonzero columns of J (dim rows of n): the first column with an entry other
 * than +-0 and one past the last (none: n, n). With AVX2, four columns at a time (the solver's
 * find_jcols); grit_hessian_span_kernel(h, 0): column by column, as before (tests). */
void grit_hessian_jrow_span(const grit_hessian *h, const double *J, int dim, int n, int *lo, int *hi);
void grit_hessian_span_kernel(grit_hessian *h, int allow);

#endif
