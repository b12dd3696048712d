/* dynamics.h — mass matrix, bias forces and the implicit operator of the step (internal), for double
 * (grit_crba, ...) and for dual numbers (grit_crba_dual, ...); plus double-only solves. */
#ifndef GRIT_DYNAMICS_INTERNAL_H
#define GRIT_DYNAMICS_INTERNAL_H

#include "kinematics.h"

#include "grit/detail/scalar_double.h"
#include "dynamics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "dynamics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* Cholesky factorization in place of each tree block of A (lower triangle L, A = L L^T).
 * Returns the index of the first tree whose block is not positive definite, or -1. */
int grit_block_cholesky(const grit_model *m, double *A);

/* Solves L L^T x = b in place (x holds b on entry), with the factor from grit_block_cholesky. */
void grit_block_cholesky_solve(const grit_model *m, const double *L, double *x);

#endif
