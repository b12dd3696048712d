/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_adhesion.h — adhesion actuators (internal; GRIT_TRN_BODY, MuJoCo 2.2.2's <adhesion>): the
 * generalized force -f / n sum_i J_n,i^T over the n contact candidates of the body's geometries closer
 * than their pair's margin, J_n,i the rate of candidate i's gap phi_i (dphi_i/dt = J_n,i v), f the
 * actuator's force gain * input. Written once for double and dual numbers
 * (actuation_adhesion_generic.h). docs/actuation.md, Adhesion. */
#ifndef GRIT_ACTUATION_ADHESION_H
#define GRIT_ACTUATION_ADHESION_H

#include "contact_candidate.h"
#include "grit/dual.h"
#include "kinematics.h"
#include "model_internal.h"

struct grit_data;

/* After the actuators are compiled: each adhesion actuator's body exists and moves; its act_dof is its
 * tree's first dof (the derivatives list actuators by tree). */
grit_status grit_adhesion_compile(grit_model *m, char *msg);

/* Whether the model has adhesion actuators. */
int grit_adhesion_any(const grit_model *m);

/* Whether candidate c counts for adhesion: closer than its pair's margin, a point contact. */
int grit_adhesion_counts(const grit_model *m, const grit_contact_candidate *c);

/* The step's part (after the collision query, before the constraints): the adhesion forces at the step's
 * start added to d->force, and v* moved by h A^-1 of them. Euler only (else GRIT_ERR_UNSUPPORTED). */
grit_status grit_adhesion_apply(struct grit_data *d, int ncand);

/* Whether an adhesion actuator acts through candidate c (it counts, and one of its bodies is adhesive):
 * then c couples its two trees in the step's residual even when its contact force is zero. */
int grit_adhesion_acts_on(const grit_model *m, const grit_contact_candidate *c);

#include "grit/detail/scalar_double.h"
#include "actuation_adhesion_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "actuation_adhesion_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
