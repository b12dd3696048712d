/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact.c — instantiates derivatives_contact_generic.h (a contact's J_c v and J_c^T gamma
 * without J_c) for double and for dual numbers. */
#include "derivatives_contact.h"

#include "grit/math_dual.h"

#include "grit/detail/scalar_double.h"
#include "derivatives_contact_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "derivatives_contact_generic.h"
#include "grit/detail/scalar_undef.h"
