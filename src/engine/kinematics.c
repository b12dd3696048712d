/* SPDX-License-Identifier: Apache-2.0 */
/* kinematics.c — instantiates the scalar-generic kinematics (kinematics_generic.h) for double and for
 * dual numbers. */
#include "kinematics.h"

#include "grit/detail/scalar_double.h"
#include "kinematics_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "kinematics_generic.h"
#include "grit/detail/scalar_undef.h"
