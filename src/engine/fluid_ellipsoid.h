/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_ellipsoid.h — the model constants of MuJoCo 2.2.2's ellipsoid fluid model (fluid_ellipsoid.c); its
 * forces are fluid_ellipsoid_generic.h's, part of the fluid forces of fluid.h. Internal. */
#ifndef GRIT_FLUID_ELLIPSOID_H
#define GRIT_FLUID_ELLIPSOID_H

#include "grit/model.h"
#include "grit/status.h"

/* Per geometry (model->geom_fluid): on (1) or off (0), the five coefficients of grit_geom_def.fluid_coef,
 * the added mass (3) and added inertia (3) per unit density, the semi-axes (3), then the angular drag's
 * moments I_max and I_i (3) of fluid_ellipsoid_generic.h (constants of the semi-axes: computed once here,
 * the same expressions, not by four pow calls per evaluation). */
#define GRIT_FLUID_NGEOM 19

/* MuJoCo's floor of the model's denominators (mjMINVAL). */
#define GRIT_FLUID_FLOOR 1e-15

/* The ellipsoid model's constants of geometry `id` with definition d into out (all 0 when d leaves the
 * model off); GRIT_ERR_UNSUPPORTED for a shape without semi-axes (plane, convex, height field),
 * GRIT_ERR_NOT_FINITE for a coefficient, with a message in msg (GRIT_MESSAGE_SIZE; may be NULL). */
grit_status grit_fluid_geom_compile(const grit_geom_def *d, int id, double out[GRIT_FLUID_NGEOM], char *msg);

#endif
