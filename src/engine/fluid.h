/* SPDX-License-Identifier: Apache-2.0 */
/* fluid.h — MuJoCo 2.2.2's fluid forces in a fluid of density opt.density, viscosity opt.viscosity moving
 * at opt.wind (docs/theory.md): the inertia-box model (viscous and quadratic drag of each body's box) and,
 * for a body with a geometry marked fluid_ellipsoid, the ellipsoid model on those geometries instead
 * (added mass, drag, Magnus and Kutta lift; fluid_ellipsoid_generic.h), for double (grit_fluid_bias) and
 * for dual numbers (grit_fluid_bias_dual). Internal. */
#ifndef GRIT_FLUID_H
#define GRIT_FLUID_H

#include "fluid_ellipsoid.h"
#include "kinematics.h"

/* Bodies lighter than this feel no fluid force (MuJoCo's mjMINVAL). */
#define GRIT_FLUID_MIN_MASS 1e-15

/* Whether the model's options switch fluid forces on (density > 0 or viscosity > 0). */
int grit_fluid_on(const grit_model *m);

/* The box with the mass and principal moments of a body: its edge lengths box[3] along the principal
 * axes, and those axes as the columns of axes[9] (body frame, row-major). The axes are those of iquat
 * (the body's inertia_quat, all 0: none) when the inertia is diagonal in them, else found from the
 * inertia. From the model's constants, so a plain double in either instantiation. */
void grit_fluid_box(double mass, const double inertia[9], const double iquat[4], double box[3], double axes[9]);

#include "grit/detail/scalar_double.h"
#include "fluid_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "fluid_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
