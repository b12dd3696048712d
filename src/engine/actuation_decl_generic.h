/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_decl_generic.h — prototypes of the scalar-generic actuation (actuation_generic.h),
 * instantiated by actuation.h for double and for grit_dual. */

/* w[a] = the input of actuator a's force: its activation (dyntype INTEGRATOR, FILTER) or its control,
 * clamped to ctrl_range when ctrl_limited (NONE). ctrl (nu), act (na), w (nu). */
void GS_NAME(grit_actuator_input)(const grit_model *m, const GS *ctrl, const GS *act, GS *w);

/* Adds the actuators' generalized forces for the step to force (nv): gear * f with f = gain(q0, v0) w +
 * bias, the stabilizing slopes of the bias taken at the predicted position q0 + h v0 (their h and h^2
 * terms are in A, grit_actuator_operator), a saturated actuator's force clamped and explicit. */
void GS_NAME(grit_actuator_force)(const grit_model *m, const GS *q0, const GS *v0, const GS *w, double h, GS *force);

/* grit_actuator_force; with length_only, of the joint actuators whose force reads their length
 * (grit_actuator_reads_length) only: the others' are constants where q0 alone is seeded. */
void GS_NAME(grit_actuator_force_some)(const grit_model *m, const GS *q0, const GS *v0, const GS *w, double h,
                                       int length_only, GS *force);

/* grit_actuator_force_some's terms of the joint actuators list[0 .. n - 1] only, in that order (a position
 * pass's list of those that read their length, formed once: derivatives_smooth.c). */
void GS_NAME(grit_actuator_force_list)(const grit_model *m, const int *list, int n, const GS *q0, const GS *v0,
                                       const GS *w, double h, GS *force);

/* Adds the implicit actuators' terms h kv + h^2 kq (grit_actuator_slopes) to the implicit operator A
 * (tree blocks), at the step's start (q0, v0) and inputs w (double values: they choose the implicit
 * actuators). */
void GS_NAME(grit_actuator_operator)(const grit_model *m, const double *q0, const double *v0, const double *w, double h,
                                     GS *A);

/* The activations after a step of h from act with controls ctrl: act + h da/dt (explicit, as MuJoCo
 * 2.2.2's Euler), da/dt = u (INTEGRATOR) or (u - act) / tau (FILTER) with u the clamped control, then
 * clamped to act_range when act_limited. act, out (na); out may not alias act. */
void GS_NAME(grit_actuator_act_next)(const grit_model *m, const GS *ctrl, const GS *act, double h, GS *out);

/* The tendon and slider-crank transmissions (the joint ones are in grit_actuator_force and
 * grit_actuator_operator): actuator a on tendon t has the length l = g L(q0) and velocity l' = g J v0
 * (J = dL/dv, the tendon's grit_tendon_length_jacobian at the kinematics k of q0; a slider-crank's from
 * grit_actuator_length_jacobian, actuation_muscle_generic.h) and applies the generalized force g J^T f. If
 * force is not NULL, adds g J^T f with f as grit_actuator_force takes it (the bias's stabilizing position
 * slope at the predicted length l + h l'; a saturated actuator clamped and explicit); if A is not NULL,
 * adds the implicit slopes (h kv + h^2 kq) J^T J to the tendon's tree block. The choice of the implicit
 * actuators is made from the double values (grit_actuator_implicit_at). scratch: 4 nv. */
void GS_NAME(grit_actuator_tendon)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q0, const GS *v0,
                                   const GS *w, double h, GS *force, GS *A, GS *scratch);
/* Actuator a's part of grit_actuator_tendon given its length L and moment Jt over its tree's dofs (Jt[i]:
 * dof tree_dofadr + i): the same operations, for callers that keep L and J (derivatives_tendon.c). With
 * nz (not NULL), only the entries nz[0 .. nnz - 1] of Jt (increasing), the others exact zeros. */
void GS_NAME(grit_actuator_tendon_apply)(const grit_model *m, int a, GS L, const GS *Jt, const int *nz, int nnz,
                                         const GS *v0, const GS *w, double h, GS *force, GS *A);
