/* SPDX-License-Identifier: Apache-2.0 */
/* quasistatic.h — the free motion of GRIT_INTEGRATOR_QUASISTATIC (seed 002; docs/quasistatic.md). */
#ifndef GRIT_QUASISTATIC_H
#define GRIT_QUASISTATIC_H

#include "grit/dual.h"
#include "grit/status.h"
#include "model_internal.h"

typedef struct grit_data grit_data;

/* Fills the data's A, Achol (its factor) and vstar for a quasistatic step: inertia scaled by the
 * settings' quasistatic_inertia, no velocity-dependent force and no momentum carried over (v0 = 0),
 * gravity, springs and the actuators (servos implicit) at q0. Sets the data's twists to zero (the state
 * has no velocity in this mode). Uses d->vnext as scratch, and leaves in d->Aprev the factor of the
 * physical operator M + h D + h^2 K (for the constraints' Delassus estimates) and in d->Aphys that operator
 * itself (for the derivatives'). Allocates nothing. */
grit_status grit_quasistatic_free_motion(grit_data *d);

/* ---- the quasistatic step's derivatives (docs/quasistatic.md, "Derivatives"): the derivatives module's
 * residual is the Euler step's with v0 = 0 (the step keeps vprev = 0), no Coriolis or momentum terms
 * (they vanish at v0 = 0), dissipation-free contacts (grit_geom_params.dissipation_free) and the three
 * calls below. */

/* Whether the data's last step was quasistatic. */
int grit_quasistatic_last_step(const grit_data *d);

/* The operator whose factor gave the last step's Delassus estimates: for a quasistatic step the
 * physical M + h D + h^2 K (kept in d->Aphys), else the step's A (d->Aprev). */
const double *grit_step_delassus_operator(const grit_data *d);

/* v is not part of a quasistatic state (v0 = 0 whatever the state holds): zeroes the velocity columns
 * nv..2nv-1 of the 2nv x 2nv state Jacobian A. */
void grit_quasistatic_velocity_columns(const grit_model *m, double *A);

/* A -= (1 - eps) M on the blocks of the trees of mask (NULL: every tree): the implicit operator
 * M + h D + h^2 K becomes the quasistatic eps M + h D + h^2 K. For double and dual numbers. */
void grit_quasistatic_inertia(const grit_model *m, double eps, const double *M, double *A, const char *mask);
void grit_quasistatic_inertia_dual(const grit_model *m, double eps, const grit_dual *M, grit_dual *A, const char *mask);

#endif
