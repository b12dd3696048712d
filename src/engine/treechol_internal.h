/* SPDX-License-Identifier: Apache-2.0 */
/* treechol_internal.h — the tree-ordered Cholesky's state, shared by its factor and solves (treechol.c)
 * and its Delassus sums (treechol_delassus.c) (internal to those two files). */
#ifndef GRIT_TREECHOL_INTERNAL_H
#define GRIT_TREECHOL_INTERNAL_H

#include "model_internal.h"

struct grit_treechol {
  const grit_model *m;
  int *rowadr;   /* (nv) where dof i's compact row starts, from its tree's first value */
  int *rownnz;   /* (nv) its values: its ancestors, then itself */
  int *colind;   /* the rows' local columns, ascending (the dof itself last), at the tree's colind start */
  int *treeadr;  /* (ntree) each tree's first entry in colind */
  int *treesize; /* (ntree) each tree's number of values */
  double *flops; /* (ntree) of a factorization */
  int *sib;      /* (nv) the dofs from i on, consecutive, with dof i's parent (i's own siblings after it) */
  unsigned char *sib4; /* (ntree) the tree has a run of four siblings or more */
  int no_sib;    /* grit_treechol_siblings(tc, 0): solve_from_rows's second sweep one dof at a time */
  int no_pair_rows; /* grit_treechol_pair_rows(tc, 0): solve_rows's first sweep one row at a time */
  unsigned char *run; /* (nv) dof i's ancestors are consecutive dofs (a free root's six, a chain's) */
  int no_runs;   /* grit_treechol_runs(tc, 0): the Delassus sums' updates by the indexed loop */
  struct tc_row { int adr, r, first, run, par; } *row; /* (nv) dof i's row for the Delassus sums, one load: rowadr,
                 * rownnz - 1, its first column, run, its parent's local index (-1 at the root) */
  int no_rowinfo; /* grit_treechol_rowinfo(tc, 0): the Delassus sums read rowadr, rownnz, colind, run */
  int *chain;    /* (ntree) the tree's first dofs 0 .. chain - 1 form a chain (dof k's parent k - 1: a free
                  * root's six, a chain of hinges): every path to the root ends in the chain */
  int no_chain;  /* grit_treechol_chain(tc, 0): the one-row Delassus sums mark the chain's dofs one by one */
  int no_leaves; /* grit_treechol_leaves(tc, 0): no one-row Delassus sum by delassus1_leaves */
  int avx2;      /* the processor has AVX2 (found at creation; delassus1_leaves is compiled for it only) */
  int *send;     /* (nv) the local end of dof i's subtree, whose dofs are i .. send - 1 */
  unsigned char *mulv; /* (ntree) grit_treechol_mulv takes the tree: big, sparse, A with M's pattern */
  int no_mulv;   /* grit_treechol_mulv_pattern(tc, 0): grit_treechol_mulv declines every tree */
};

/* The factor's and the many-column solve's contiguous loops are also compiled for AVX2 (4 doubles per
 * vector instead of SSE2's 2) and chosen at run time: the same operations in the same order, no fused
 * multiply-adds (-ffp-contract=off, and the target does not include FMA), so the same bits on any
 * x86-64 processor (GRIT_NO_AVX2: the baseline only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define TREECHOL_AVX2 1
#else
#define TREECHOL_AVX2 0
#endif
#if defined(__GNUC__)
#define TC_INLINE inline __attribute__((always_inline))
#define TC_NOINLINE __attribute__((noinline))
#else
#define TC_INLINE inline
#define TC_NOINLINE
#endif

#endif
