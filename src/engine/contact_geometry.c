/* SPDX-License-Identifier: Apache-2.0 */
/* contact_geometry.c — instantiates the scalar-generic contact re-evaluation (contact_geometry_generic.h)
 * for double and for dual numbers. */
#include "contact_geometry.h"

#include <math.h>

#include "grit/math_dual.h"

#include "grit/detail/scalar_double.h"
#include "contact_geometry_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "contact_geometry_generic.h"
#include "grit/detail/scalar_undef.h"
