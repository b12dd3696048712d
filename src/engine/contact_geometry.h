/* SPDX-License-Identifier: Apache-2.0 */
/* contact_geometry.h — a contact's signed distance and frame re-evaluated from body-fixed features, for
 * double (grit_contact_reevaluate) and for dual numbers (grit_contact_reevaluate_dual) (internal).
 *
 * The narrow phase runs once per step in double. For derivatives, each candidate's features are held
 * fixed to the shapes — the witness points in their shapes' frames, the normal in a's frame — and phi,
 * the normal and the frame are recomputed from the shapes' poses in the scalar type of the caller. This
 * is the one approximation of the geometry's derivatives: phi's first derivative is nevertheless exact
 * (see contact_geometry_generic.h and docs/collision.md). */
#ifndef GRIT_CONTACT_GEOMETRY_H
#define GRIT_CONTACT_GEOMETRY_H

#include "contact_point.h"
#include "grit/dual.h"

#include "grit/detail/scalar_double.h"
#include "contact_geometry_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "contact_geometry_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
