/* SPDX-License-Identifier: Apache-2.0 */
/* kinematics.h — poses, motion subspaces, velocities and Jacobians of a multibody tree (internal),
 * for double (grit_kin_positions, ...) and for dual numbers (grit_kin_positions_dual, ...). */
#ifndef GRIT_KINEMATICS_H
#define GRIT_KINEMATICS_H

#include "grit/math.h"
#include "grit/math_dual.h"
#include "model_internal.h"

#include "grit/detail/scalar_double.h"
#include "kinematics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "kinematics_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
