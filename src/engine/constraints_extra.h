/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_extra.h — the step's joint-friction, equality and tendon constraints (internal;
 * docs/contact.md, Joint friction, equality constraints and tendons). */
#ifndef GRIT_CONSTRAINTS_EXTRA_H
#define GRIT_CONSTRAINTS_EXTRA_H

#include "constraints.h"
#include "grit/constraints.h"

#include "grit/detail/scalar_double.h"
#include "constraints_extra_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "constraints_extra_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* The number of these constraints a step may build, and the Jacobian storage they need. */
int grit_cx_capacity(const grit_model *m, int *jstore);

/* Each equality's, then each tendon's structural columns (the dofs its rows can be nonzero on, value or
 * partials: the bodies' paths to the root, the joints' dofs), ascending, equality/tendon s's in
 * list[ptr[s] .. ptr[s + 1]); ptr: neq + ntendon + 1; ptr, list NULL: only counts. Returns the total
 * length; mark: nv scratch. */
int grit_cx_col_lists(const grit_model *m, char *mark, int *ptr, int *list);

/* The structural columns of a constraint of `kind` from `source` in those lists (count of them in
 * *count), or NULL for a kind with none (joint friction: a single dof). */
const int *grit_cx_cols(const grit_model *m, const int *ptr, const int *list, int kind, int source, int *count);

/* The slot s of a constraint of `kind` from `source` in those lists (its equality's or tendon's), or -1. */
static inline int grit_cx_slot(const grit_model *m, int kind, int source) {
  switch (kind) {
    case GRIT_CONSTRAINT_EQUALITY:
    case GRIT_CONSTRAINT_EQUALITY_1D: return source / 2;
    case GRIT_CONSTRAINT_TENDON_LIMIT: return m->neq + source / 2;
    case GRIT_CONSTRAINT_TENDON_FRICTION:
    case GRIT_CONSTRAINT_TENDON_SPRING: return m->neq + source;
    default: return -1;
  }
}

/* The most listed columns of a leaf list (grit_cx_leaf_lists; treechol_delassus.c's local chain). */
#define GRIT_CX_LEAF_MAX 8
/* leaf[s] (neq + ntendon): 1 where list s has 1 .. GRIT_CX_LEAF_MAX columns, all in one tree, each hanging
 * straight off the chain the tree's first dofs form (not in it, its parent in it: a composite's slides or
 * particles on a free root), the rows grit_treechol_delassus_leaves takes; else 0. */
void grit_cx_leaf_lists(const grit_model *m, const int *ptr, const int *list, unsigned char *leaf);

/* Appends them (joint friction, equalities, tendon springs, the tendon limits within the step's reach)
 * at positions q with kinematics k, after the other constraints. scratch: 6 nv. colptr, colv: the lists
 * of grit_cx_col_lists, the rows computed on those columns only (the same values), or NULL: over all nv. */
/* (built: the number of constraints c[0 ..) whose entries and J blocks the last call left, kept by the caller
 * between steps from 0; each call reads and sets it: a row rebuilt at the same index and offset zeroes only its
 * listed columns, constraints_extra.c) */
void grit_build_cx_constraints(const grit_model *m, const grit_kin *k, const double *q, const double *v0,
                               const double *vstar, double dt, grit_constraint *c, int *nc, double *jstore, int *joff,
                               double *scratch, const int *colptr, const int *colv, int *built);

#endif
