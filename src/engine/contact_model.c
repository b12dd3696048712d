/* SPDX-License-Identifier: Apache-2.0 */
/* contact_model.c — instantiates the scalar-generic contact potentials (contact_model_generic.h) for
 * double and for dual numbers. */
#include "contact_model.h"

#include <math.h>

#include "grit/detail/scalar_double.h"
#include "contact_model_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "contact_model_generic.h"
#include "grit/detail/scalar_undef.h"
