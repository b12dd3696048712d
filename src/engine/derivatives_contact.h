/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact.h — a contact's J_c v and J_c^T gamma side by side without forming J_c, for double
 * and for dual numbers (internal; the derivatives' position passes, derivatives_residual.c). */
#ifndef GRIT_DERIVATIVES_CONTACT_H
#define GRIT_DERIVATIVES_CONTACT_H

#include "kinematics.h"
#include "model_internal.h"

#include "grit/detail/scalar_double.h"
#include "derivatives_contact_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "derivatives_contact_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
