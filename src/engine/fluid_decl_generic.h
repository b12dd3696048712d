/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_decl_generic.h — prototype of the scalar-generic fluid force (fluid_generic.h), instantiated by
 * fluid.h for double and for grit_dual. */

/* Subtracts the fluid forces' generalized force from bias (the forces the step subtracts: grit_smooth_force
 * takes -bias), at the kinematics' poses and twists; frc (6 nbody) is scratch. A no-op when the options
 * leave fluid forces off. Under k's tree mask only the masked trees' rows change. */
void GS_NAME(grit_fluid_bias)(const grit_model *m, const GS_NAME(grit_kin) * k, GS *frc, GS *bias);

/* Adds the ellipsoid model's wrench on geometry g (about the world origin, negated as in bias) to w[6],
 * its body's frame (xpos, xmat) and twist tw given (the derivatives' partials in the twist). */
void GS_NAME(grit_fluid_geom_wrench)(const grit_model *m, const GS *xpos, const GS *xmat, const GS *tw, int g, GS w[6]);
