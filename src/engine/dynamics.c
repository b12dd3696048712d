/* SPDX-License-Identifier: Apache-2.0 */
/* dynamics.c — instantiates the scalar-generic dynamics (dynamics_generic.h) for double and dual
 * numbers. */
#include "dynamics.h"
#include "actuation.h"

#include <math.h>

#include "grit/detail/scalar_double.h"
#include "dynamics_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "dynamics_generic.h"
#include "grit/detail/scalar_undef.h"
