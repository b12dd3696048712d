/* SPDX-License-Identifier: Apache-2.0 */
/* quasistatic.h — the free motion of GRIT_INTEGRATOR_QUASISTATIC (seed 002; docs/quasistatic.md). */
#ifndef GRIT_QUASISTATIC_H
#define GRIT_QUASISTATIC_H

#include "grit/status.h"

typedef struct grit_data grit_data;

/* Fills the data's A, Achol (its factor) and vstar for a quasistatic step: inertia scaled by the
 * settings' quasistatic_inertia, no velocity-dependent force and no momentum carried over (v0 = 0),
 * gravity, springs and the actuators (servos implicit) at q0. Sets the data's twists to zero (the state
 * has no velocity in this mode). Uses d->vnext as scratch, and leaves in d->Aprev the factor of the
 * physical operator M + h D + h^2 K (for the constraints' Delassus estimates). Allocates nothing. */
grit_status grit_quasistatic_free_motion(grit_data *d);

/* Quasistatic contacts have no dissipation: with no velocities in the model, Hunt & Crossley's d and
 * SAP's tau_d would only push bodies apart by (h + tau_d) / h times their approach (docs/quasistatic.md).
 * Sets both to zero in the first n constraints (contacts). */
struct grit_constraint;
void grit_quasistatic_contacts(struct grit_constraint *c, int n);

#endif
