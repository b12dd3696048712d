/* SPDX-License-Identifier: Apache-2.0 */
/* contact_model.h — the convex contact potentials (internal), for double (grit_contact_lagged, ...)
 * and for dual numbers (grit_contact_lagged_dual, ...). */
#ifndef GRIT_CONTACT_MODEL_H
#define GRIT_CONTACT_MODEL_H

#include "grit/dual.h"

#include "grit/detail/scalar_double.h"
#include "contact_model_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "contact_model_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
