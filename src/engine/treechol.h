/* SPDX-License-Identifier: Apache-2.0 */
/* treechol.h — the Cholesky factorization H = L^T L of one tree's block in the tree's own order,
 * without fill (internal).
 *
 * When every nonzero H_ij of a tree's block joins a dof i to one of its ancestors j (dof_parent), as in
 * the mass matrix and in J^T G J of a constraint whose J is nonzero on one body's chain to the root only,
 * eliminating the dofs from the last to the first (leaves before their ancestors) creates no fill: the
 * factor L, lower triangular, has row i nonzero only at i and its ancestors. The work is
 * sum_i depth_i^2 / 2 multiply-adds instead of n^3 / 6. Row i is stored compactly (its ancestors in
 * ascending order, then the diagonal): row i's entries up to an ancestor j are then exactly row j's
 * pattern, so the updates are contiguous loops. docs/solver.md (the factorization) and
 * docs/performance.md (stop 17, branch treechol). */
#ifndef GRIT_TREECHOL_H
#define GRIT_TREECHOL_H

#include <stdint.h>

#include "model_internal.h"

typedef struct grit_treechol grit_treechol;

/* The compact pattern of every tree (allocates; not during a step). */
grit_status grit_treechol_create(const grit_model *m, grit_treechol **tc, char *message);
void grit_treechol_free(grit_treechol *tc);

/* y = M x on tree t's dofs (M: tree blocks, dense row-major; x, y: nv) over the entries (i, j) with j an
 * ancestor or descendant of i or i, for a tree whose A keeps M's pattern (grit_treechol_a_keeps_pattern:
 * its other entries +0), of more than 64 dofs, the pattern under a quarter of the block: each y_i summed
 * from +0 over those j ascending, grit_tree_mulv's operations less its +-0 products, which leave a sum
 * begun at +0 as it was, so the same bits. Returns 0 (y untouched) for another tree, where x is not finite
 * on the tree (0 * inf), or where forbidden by grit_treechol_mulv_pattern(tc, 0); else 1. */
int grit_treechol_mulv(const grit_treechol *tc, int t, const double *M, const double *x, double *y);
void grit_treechol_mulv_pattern(grit_treechol *tc, int allow);

/* Values of tree t's compact factor (sum over its dofs of depth + 1; at most n (n + 1) / 2). */
int grit_treechol_size(const grit_treechol *tc, int t);

/* Multiply-adds of a factorization of tree t (counted as two operations each, as the flop counts of
 * the other factorizations). */
double grit_treechol_flops(const grit_treechol *tc, int t);

/* Whether the local columns idx[0..nc-1] (ascending) of tree t lie on one path to the root: each is an
 * ancestor of (or is) the last. J^T G J of a constraint with those nonzero columns keeps the pattern. */
int grit_treechol_is_chain(const grit_model *m, int t, const int *idx, int nc);

/* Whether tree t's A (M plus the implicit step's terms) always has the mass matrix's pattern: joint
 * actuators add to the diagonal; a tendon, slider-crank or site actuator with an implicit slope adds a
 * rank-one term over its moment's dofs, which keeps the pattern for a fixed tendon on one path only. */
int grit_treechol_a_keeps_pattern(const grit_model *m, int t);

/* The entries of the lower pattern (i, j), j an ancestor of i or i, of tree t's dense row-major n x n
 * block S copied into D (the same layout); the others are left alone. */
void grit_treechol_copy_pattern(const grit_treechol *tc, int t, const double *S, double *D);

/* The entries (i, j) and (j, i), j an ancestor of i or i, of tree t's dense row-major n x n block S copied
 * into D (the same layout); the others are left alone (the model's dof_parent only: no pattern needed). */
void grit_treechol_copy_sym(const grit_model *m, int t, const double *S, double *D);

/* Factors tree t's block given dense row-major in H (its lower pattern is read) into the compact factor
 * L (grit_treechol_size values) and the reciprocal pivots inv (n). Updates *lo and *hi with the smallest
 * and largest diagonal entries of L. Returns the failing local dof (pivot not positive or not finite),
 * or -1. */
int grit_treechol_factor(const grit_treechol *tc, int t, const double *H, double *L, double *inv, double *lo,
                         double *hi);

/* Solves H x = b in place for tree t's rows x[0..n-1] with the factor. */
void grit_treechol_solve(const grit_treechol *tc, int t, const double *L, const double *inv, double *x);

/* The same for nc columns held as rows: dof i's values of the columns at X + i * stride, nc of them. */
void grit_treechol_solve_rows(const grit_treechol *tc, int t, const double *L, const double *inv, double *X,
                              int stride, int nc);

/* grit_treechol_solve for nr (1 to 3) sparse right-hand sides at x + r ldx, r < nr (a constraint's rows,
 * nonzero on its chains): the first substitution skips the dofs where every row is zero (no nonzero of
 * b in their subtree), the second starts at the first dof where some row is nonzero; the rows share the
 * walk over the pattern. The numbers of grit_treechol_solve (the skipped terms are zeros) up to the
 * signs of zeros. */
void grit_treechol_solve_from_rows(const grit_treechol *tc, int t, const double *L, const double *inv, double *x,
                                   int ldx, int nr);
/* Allows (1, the default) or forbids (0) grit_treechol_solve_rows's first sweep taking a dof and its parent
 * (the dof before it) together, their pushes into the common ancestors in one pass (the same bits), for tests. */
void grit_treechol_pair_rows(grit_treechol *tc, int allow);
/* Allows (1, the default) or forbids (0) grit_treechol_solve_from_rows's second sweep over four siblings
 * at a time with AVX2 (the same bits), for tests. */
void grit_treechol_siblings(grit_treechol *tc, int allow);
/* Allows (1, the default) or forbids (0) the one-row Delassus sums' updates of runs of consecutive ancestors
 * in AVX2 registers (the same bits), for tests. */
void grit_treechol_runs(grit_treechol *tc, int allow);
/* Allows (1, the default) or forbids (0) the one-row Delassus sums' reading of each dof's row in one load and
 * its walk up by the parents (treechol.c, delassus1_rows; the same bits), for tests. */
void grit_treechol_rowinfo(grit_treechol *tc, int allow);
/* Allows (1, the default) or forbids (0) the one-row Delassus sums over listed columns (delassus1_rows) taking
 * the tree's first dofs, when they form a chain, as one block: not marked one by one, copied and solved in a
 * loop (the same operations in the same order, the same bits), for tests. */
void grit_treechol_chain(grit_treechol *tc, int allow);
/* Allows (1, the default) or forbids (0) the one-row Delassus sums over listed columns that all hang straight
 * off the tree's chain (a composite's slides or particles on a free root) taking them without the bit scan,
 * the chain's dofs in a local array (treechol_delassus.c, delassus1_leaves; the same bits), for tests. */
void grit_treechol_leaves(grit_treechol *tc, int allow);

/* A constraint's Delassus sum sum_r J_r H^-1 J_r^T = sum_r |L^-T J_r^T|^2 for nr (1 to 3) rows J_r of tree t
 * (at J + r n, not modified): the first substitution of grit_treechol_solve_from_rows over the dofs on the
 * paths from the rows' nonzero entries to the root only, found by a scan of J by groups and a walk up
 * the tree, so the work beyond the scan is that of those paths (sum of their lengths times the depths),
 * not O(n^2). The same operations on each entry as grit_treechol_solve_from_rows's first sweep; w
 * summed over the dofs descending, the rows in turn within each. x: nr n doubles and bits: (n + 63) / 64
 * words of scratch, zero on entry and again on return. */
double grit_treechol_delassus(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                              int nr, double *x, uint64_t *bits);

/* grit_treechol_delassus with J's nonzero columns within cols[0..ncols-1] (global dofs, any order; those
 * off tree t ignored: an equality's or tendon's structural columns, grit_cx_cols): no scan of J, the
 * same dofs marked, the same bits. */
double grit_treechol_delassus_cols(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                                   int nr, const int *cols, int ncols, double *x, uint64_t *bits);

/* grit_treechol_delassus_cols of one row whose columns (ascending, distinct, on tree t) each hang straight off
 * the chain the tree's first dofs form (not in it, its parent in it: grit_cx_leaf_lists checks it), by
 * delassus1_leaves without the bit scan, when the processor has AVX2 and the switches allow: returns 1 and
 * the sum in *w (the same bits); 0 otherwise, nothing done. */
int grit_treechol_delassus_leaves(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                                  const int *cols, int ncols, double *w);

#endif
