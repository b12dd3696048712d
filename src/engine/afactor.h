/* SPDX-License-Identifier: Apache-2.0 */
/* afactor.h — the step's factor of the implicit operator A = M + h D + h^2 K (+ implicit actuator terms)
 * by trees, and what reads it: the free motion's solve, the constraints' Delassus estimates, the
 * solver's factor when there is no constraint (internal).
 *
 * A tree's factor is its dense block's Cholesky L L^T in the data's Achol (grit_block_cholesky), or, for
 * a tree of more than GRIT_AFACTOR_MIN_NV dofs whose A keeps the mass matrix's pattern
 * (grit_treechol_a_keeps_pattern), the tree-ordered factor L^T L without fill (treechol.h), kept here.
 * On such a tree (MuJoCo's composites: a cloth of 166 dofs, a soft box of 224, a flag of 340) the dense
 * factor costs n^3 / 6 and each Delassus estimate a dense substitution of O(n^2), against sum_i depth_i^2
 * and the rows' paths to the root in tree order (docs/performance.md, stop 20, branch bigtree). The trees
 * of at most GRIT_AFACTOR_MIN_NV dofs (every robot's) keep the dense factor and its bits. */
#ifndef GRIT_AFACTOR_H
#define GRIT_AFACTOR_H

#include "model_internal.h"

/* The largest tree that always keeps the dense factor (the robots' trees: at most 62 dofs). */
#define GRIT_AFACTOR_MIN_NV 64

typedef struct grit_afactor grit_afactor;

/* The trees' patterns and the room for their factors (allocates; not during a step). */
grit_status grit_afactor_create(const grit_model *m, grit_afactor **af, char *message);
void grit_afactor_free(grit_afactor *af);

/* The switch back to the old path (tests, benchmarks): dense != 0 makes every tree take the dense
 * factor in the coming factorizations. */
void grit_afactor_set_dense(grit_afactor *af, int dense);

/* Factors A (tree blocks): the eligible trees in tree order (here), the others densely into Achol (a
 * copy of their blocks of A, then grit_block_cholesky: with no eligible tree, exactly the copy of A and
 * grit_block_cholesky of before). tree_order 0: every tree dense. Returns the first tree whose block is
 * not positive definite, or -1. */
int grit_afactor_factor(grit_afactor *af, const double *A, double *Achol, int tree_order);

/* Records that Achol holds every tree's dense factor (factored by the caller: the quasistatic and
 * variational free motions). */
void grit_afactor_clear(grit_afactor *af);

/* Whether tree t's last factor is the tree-ordered one (af NULL: no); whether any tree's is. */
int grit_afactor_tree_order(const grit_afactor *af, int t);
int grit_afactor_any(const grit_afactor *af);

/* Tree t's last factor, when it is the tree-ordered one: its compact factor (grit_treechol_size of the
 * model's tree-order layout) into L and its reciprocal pivots (its n dofs) into inv; returns 1. Else 0,
 * nothing written. A caller holding the same A (bit for bit) takes it instead of factoring it again:
 * grit_treechol_factor's numbers of the same block (the derivative call's, derivatives_colour.c). */
int grit_afactor_copy_tree(const grit_afactor *af, int t, double *L, double *inv);

/* Solves A x = b in place (x holds b) with the last factor; the rows of tree t alone. af NULL: the dense
 * factor Achol of every tree (grit_block_cholesky_solve). */
void grit_afactor_solve(const grit_model *m, const grit_afactor *af, const double *Achol, double *x);
void grit_afactor_solve_tree(const grit_model *m, const grit_afactor *af, const double *Achol, int t, double *x);

/* Solves A X = B in place for the nrhs columns of B (column k at B + k nv): column k on the rows of tree
 * part[k] alone (its other rows are zero and stay so), or of every tree where part is NULL or part[k] < 0.
 * The tree-ordered trees' columns are moved into rows and solved together (grit_treechol_solve_rows); the
 * dense trees of 8 dofs or more too (with AVX2: the same bits as column by column); the others column by
 * column. The numbers of grit_afactor_solve_tree column by column, up to the signs of
 * zeros. */
void grit_afactor_solve_many(const grit_model *m, const grit_afactor *af, const double *Achol, double *B, int nrhs,
                             const int *part);

/* Allows (1, the default) or forbids (0) grit_afactor_solve_many's solves of many columns together
 * (forbidden: column by column, as before), for tests. */
void grit_afactor_set_many(grit_afactor *af, int many);

/* Allows (1, the default) or forbids (0) the dense trees' row solves' passes of four and two vectors (16
 * and 8 columns; forbidden: passes of eight vectors, then of one, as before). The same bits either way. */
void grit_afactor_set_mid_passes(grit_afactor *af, int allow);

/* Allows (1, the default) or forbids (0) grit_afactor_solve_many's one pass over the columns into the
 * by-rows trees' lists (forbidden: every column scanned once per tree, as before). The same chunks, bits. */
void grit_afactor_set_column_lists(grit_afactor *af, int allow);

/* Allows (1, the default) or forbids (0) grit_afactor_solve_many's path for a few small dense trees (at
 * most 8 trees of at most 7 dofs, none tree-ordered, AVX2: four columns a vector in registers; forbidden:
 * column by column, as before). The same bits either way. */
void grit_afactor_set_small(grit_afactor *af, int allow);

/* Whether grit_afactor_solve_many takes that path (for tests). */
int grit_afactor_small(const grit_afactor *af);

/* grit_delassus (w = trace(J A^-1 J^T) / dim) with the last factor: when none of the constraint's trees
 * is in tree order, grit_delassus itself (the same bits; af NULL too); else each tree's sum from its own factor, in
 * the order of the trees. tmp: the largest tree's dofs (the dense trees' substitution). */
double grit_afactor_delassus(const grit_model *m, const grit_afactor *af, const double *Achol, int dim, int ntree,
                             const int tree[2], const double *const J[2], double *tmp);

/* grit_afactor_delassus for a row set whose nonzero columns lie within cols[0..ncols-1] (global dofs: an
 * equality's or tendon's structural columns, grit_cx_cols; NULL: unknown): the tree-ordered trees' sums
 * walk up from those columns instead of scanning J whole (the softbox's 651 tendon equalities over its
 * tree of 224: 9 % of its step). The same bits. */
double grit_afactor_delassus_cols(const grit_model *m, const grit_afactor *af, const double *Achol, int dim,
                                  int ntree, const int tree[2], const double *const J[2], const int *cols, int ncols,
                                  double *tmp);

/* grit_afactor_delassus_cols for one row on tree t without its dispatch, when the tree is factored in tree
 * order and the row's columns hang straight off its chain (grit_treechol_delassus_leaves): returns 1 and w
 * (the same bits); 0 otherwise, nothing done. */
int grit_afactor_delassus_row(const grit_model *m, const grit_afactor *af, int t, const double *J, const int *cols,
                              int ncols, double *w);
/* Allows (1, the default) or forbids (0) grit_afactor_delassus_cols's use of the columns (forbidden: J
 * scanned whole, as grit_afactor_delassus), for tests. */
void grit_afactor_set_delassus_cols(grit_afactor *af, int allow);
/* Allows (1, the default) or forbids (0) the one-row sums by delassus1_leaves (grit_treechol_leaves: then
 * grit_afactor_delassus_row declines and the rows take delassus1_rows), for tests. */
void grit_afactor_set_delassus_leaves(grit_afactor *af, int allow);

#endif
