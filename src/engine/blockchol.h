/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol.h — sparse Cholesky of the contact Hessian by dense blocks of the model's trees (internal).
 *
 * H has one dense block per kinematic tree and one dense coupling block per pair of trees that a
 * constraint touches together (hessian.h). Its factor L keeps that block structure: the trees are
 * eliminated in a minimum-degree order of the graph whose nodes are the trees and whose edges are the
 * coupled pairs, and eliminating a tree couples its remaining neighbours (the fill, also by blocks).
 * The symbolic analysis (order, fill pattern, block offsets, FLOP count) is redone only when the set of
 * coupled pairs changes; it is the only place that may allocate (when the fill outgrows the room
 * reserved at creation), and its arrays only grow. The numeric
 * factorization and the solves are plain loops over small dense blocks: no threads, no allocation,
 * no index scatter per entry. See docs/performance.md for why this replaced CHOLMOD as the sparse path. */
#ifndef GRIT_BLOCKCHOL_H
#define GRIT_BLOCKCHOL_H

#include "model_internal.h"

typedef struct grit_blockchol grit_blockchol;

/* Room for `max_pairs` coupled pairs and, up front, for the fill of up to 64 trees completely coupled
 * or of 32 blocks per tree on average (the analysis grows the arrays only beyond that). */
grit_status grit_blockchol_create(const grit_model *m, int max_pairs, grit_blockchol **b, char *message);
void grit_blockchol_free(grit_blockchol *b);

/* Symbolic analysis for the coupled tree pairs (pa[k], pb[k]), pa[k] < pb[k], k < npairs (each pair
 * once). GRIT_ERR_OUT_OF_MEMORY if the fill does not fit in memory. */
grit_status grit_blockchol_analyze(grit_blockchol *b, int npairs, const int *pa, const int *pb, char *message);

/* Factors H given its tree blocks `diag` (tree-block storage of grit_model: row-major n x n at
 * tree_madr) and, for each analysed pair k, its coupling block at cblock + poff[idx[k]] (rows: tree
 * pb[k], columns: tree pa[k], row-major). GRIT_ERR_NUMERICAL if H is not positive definite or not finite.
 * *cond gets (max / min diagonal of L)^2, a cheap lower bound of the condition number.
 * tree_on (NULL: every tree): only the trees t with tree_on[t] are factored, the others' blocks are
 * left as they are; no analysed pair may join a tree that is on to one that is off. */
grit_status grit_blockchol_factor(grit_blockchol *b, const double *diag, const double *cblock, const int *poff,
                                  const int *idx, const unsigned char *tree_on, double *cond, char *message);

/* Solves H X = B in place for nrhs columns of length nv (column-major) with the last factor (b's
 * scratch is used for many columns, hence not const). tree_on (NULL: every tree): only the rows of
 * the trees that are on are read and written (their system is closed, as in grit_blockchol_factor). */
void grit_blockchol_solve(grit_blockchol *b, double *B, int nrhs, const unsigned char *tree_on);

/* The parts of the analysed pattern: the connected components of H's graph of trees, between which H
 * (and its factor) has no block. Returns the part of each tree (ntree), and sets *nparts. */
const int *grit_blockchol_parts(const grit_blockchol *b, int *nparts);

/* grit_blockchol_solve for columns that each lie in one part: column k is zero outside the trees of
 * part[k] (from grit_blockchol_parts; -1: anywhere), and so is its solution. Only those rows are read
 * and written, and the work is that of the part alone. */
void grit_blockchol_solve_parts(grit_blockchol *b, double *B, int nrhs, const int *part);

/* grit_blockchol_solve_parts for columns anywhere: column c's dof j at X[c] + j, read and written only in
 * the rows of part[c]'s trees (every row where part[c] < 0), so a column need hold no other rows. */
void grit_blockchol_solve_cols(grit_blockchol *b, double *const *X, int nrhs, const int *part);

/* The trees whose block has the tree's own sparsity (every nonzero joins a dof to an ancestor) in the
 * coming factorizations (NULL: none, and no test of it; the array must stay valid while set; set it
 * before a factorization, not between a factorization and its solves): such a tree coupled to no
 * other is factored in tree order without fill (treechol.h), and its solves follow. */
void grit_blockchol_set_chain(grit_blockchol *b, const unsigned char *chain);

/* Allows (1, the default) or forbids (0) the vectorized kernel for diagonal blocks of 24 dofs or more
 * (blockchol_big.c; the same bits as the plain loops), for tests. */
void grit_blockchol_big_kernel(grit_blockchol *b, int allow);

/* Allows (1, the default) or forbids (0) the sparse factor of a tree of more than 64 dofs alone in its
 * part: its block over its nonzeros in a minimum-degree order, taken when its count of multiply-adds
 * (weighted) is below the dense block's (blockchol_sparse.c; other rounding). Forbidden: the dense
 * block in dof order, as before. */
void grit_blockchol_sparse_trees(grit_blockchol *b, int allow);
/* Allows (1, the default) or forbids (0) that factor's AVX2 column updates (the same bits), for tests. */
void grit_blockchol_sparse_kernel(grit_blockchol *b, int allow);
/* Allows (1, the default) or forbids (0) the big trees' sparse factor's supernodal updates (the same bits). */
void grit_blockchol_sparse_snodes(grit_blockchol *b, int allow);

/* A one-row term g J^T J of a tree of more than 64 dofs (J: the tree's n entries) held apart from its
 * block (diag of grit_blockchol_factor leaves it out): the sparse factor applies it by the Woodbury
 * identity, the dense path adds it to its copy of the block. Returns 0 (nothing held) when the tree has
 * no sparse factor, it is forbidden, or there is no room (LOWRANK_CAP rows). clear: none held (each new
 * H). */
int grit_blockchol_lowrank_add(grit_blockchol *b, int tree, const double *J, double g);
void grit_blockchol_lowrank_clear(grit_blockchol *b, int tree);

/* Allows (1, the default) or forbids (0) the vectorized Schur updates of 3-dof trees whose blocks are
 * all 3 x 3 (particles; blockchol_factor_simd.c; the same bits as the plain loops), for tests. */
void grit_blockchol_small_kernel(grit_blockchol *b, int allow);

/* Allows (1, the default) or forbids (0) the minimum-degree order's heap and the degrees by popcount
 * for trees of one size (the same order as the linear search and the bit loops), for tests. */
void grit_blockchol_fast_order(grit_blockchol *b, int allow);

/* Allows (1, the default) or forbids (0) the AVX2 kernel for the columns of 3-dof trees with only 3-dof
 * blocks below (particles; blockchol_factor_simd.c; the same bits as the plain loops), for tests. */
void grit_blockchol_particle_kernel(grit_blockchol *b, int allow);

/* Allows (1, the default) or forbids (0) factoring two particles' columns with the same rows below the
 * second together (blockchol_factor_simd.c; the same bits as one by one), for tests. */
void grit_blockchol_pair_kernel(grit_blockchol *b, int allow);

/* Allows (1) or forbids (0, the default) keeping the elimination order when the pattern changes
 * (blockchol_keep.c): taken only after a fresh order with a component of more than 64 trees (a pile),
 * and while the factor's flops under the kept order stay within KEEP_FLOPS times that fresh order's:
 * other rounding than a fresh order. Off by default: kept within a solve only (grit_blockchol_forget_order)
 * it saved ~2 % of particle.xml's instructions over 101 steps, and its other rounding sends the chaotic
 * pile along another trajectory, whose median step measured slower (docs/performance.md, stop 26). */
void grit_blockchol_keep_order(grit_blockchol *b, int allow);

/* Forgets the kept order: the next analysis orders afresh. Returns 1 when the current layout came from a
 * kept order (the caller must then analyse again before the next factorization): called at each solve's
 * start, so that a step's result is a function of its state, not of the solves before it. */
int grit_blockchol_forget_order(grit_blockchol *b);

/* Floating-point operations of the last numeric factorization (of the trees it was asked for). */
double grit_blockchol_flops(const grit_blockchol *b);

#endif
