/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_muscle_decl_generic.h — prototypes of the scalar-generic muscle curves and transmission lengths
 * (actuation_muscle_generic.h), instantiated by actuation_muscle.h for double and for grit_dual. */

/* MuJoCo 2.2.2's muscle gain (the active force per unit activation, <= 0) of actuator a at actuator length
 * len and velocity vel, from its muscle_gainprm, length range and acc0 (docs/actuation.md, Muscles). */
GS GS_NAME(grit_muscle_gain)(const grit_model *m, int a, GS len, GS vel);

/* MuJoCo 2.2.2's passive muscle force (<= 0) of actuator a at length len, from its muscle_biasprm. */
GS GS_NAME(grit_muscle_bias)(const grit_model *m, int a, GS len);

/* d act / dt of a muscle actuator a with clamped control u and activation act (2.2.2's hard switch
 * between the activation and deactivation time constants dynprm[0], dynprm[1]). */
GS GS_NAME(grit_muscle_rate)(const grit_model *m, int a, GS u, GS act);

/* The length L (gear not included) of actuator a's TENDON, SLIDERCRANK or SITE (L = 0, J its wrench's
 * generalized force, site_gear included) transmission at the kinematics k
 * of q, and J = dL/dv (nv; zero outside the transmission's tree). scratch: 3 nv (tendons). */
GS GS_NAME(grit_actuator_length_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int a, GS *J,
                                          GS *scratch);
