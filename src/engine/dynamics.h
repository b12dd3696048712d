/* SPDX-License-Identifier: Apache-2.0 */
/* dynamics.h — mass matrix, bias forces and the implicit operator of the step (internal), for double
 * (grit_crba, ...) and for dual numbers (grit_crba_dual, ...); the tree-block Cholesky factorization of A. */
#ifndef GRIT_DYNAMICS_INTERNAL_H
#define GRIT_DYNAMICS_INTERNAL_H

#include "kinematics.h"

#include "grit/detail/scalar_double.h"
#include "dynamics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "dynamics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
