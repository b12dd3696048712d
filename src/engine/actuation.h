/* SPDX-License-Identifier: Apache-2.0 */
/* actuation.h — actuators as MuJoCo 2.2.2 defines them (internal): the force's input (clamped control or
 * activation), the actuator force with its implicit part, the implicit operator's actuator terms, the
 * activation update; written once for double and dual numbers (actuation_generic.h). docs/actuation.md. */
#ifndef GRIT_ACTUATION_H
#define GRIT_ACTUATION_H

#include "grit/dual.h"
#include "kinematics.h"
#include "model_internal.h"

/* Whether actuator a's force is treated implicitly in the step at joint position q, velocity v (of its
 * dof) and input w: not force-limited, or its force at (q, v) inside force_range (a saturated actuator is
 * explicit: its force is clamp(f(q0, v0)) and adds nothing to A). One function of double values, read by
 * both the force and the operator, so the step and its derivatives make the same choice. */
int grit_actuator_implicit(const grit_model *m, int a, double q, double v, double w);
/* The same choice from the actuator's length l and velocity l' (gear included): the form a tendon
 * transmission uses (l = g L(q), l' = g J v). */
int grit_actuator_implicit_at(const grit_model *m, int a, double len, double vel, double w);

/* Whether actuator a's force reads its length (an affine gain or bias with a length term, a muscle): else
 * gain(l') w + bias(l') does not move with the positions (a motor, a velocity servo). */
int grit_actuator_reads_length(const grit_model *m, int a);

/* The stabilizing slopes of actuator a's bias (>= 0): kq = -g^2 biasprm[1], kv = -g^2 biasprm[2] when
 * those are negative, else 0 (a destabilizing slope stays explicit: it would make A indefinite). */
void grit_actuator_slopes(const grit_model *m, int a, double *kq, double *kv);

/* Checks an actuator definition for the builder: `jtype` is the joint's type for a joint transmission
 * (the joint exists), `ntendon` the number of tendons. */
grit_status grit_actuator_check(const grit_actuator_def *def, int id, int jtype, int ntendon, char *msg);

/* After the tendons are compiled (model_cx.c): each tendon actuator's tree (its act_dof: the tree's first
 * dof; act_jnt -1). Its tendon must move exactly one kinematic tree: A's tree blocks hold its implicit
 * slopes g^2 J^T J, which would couple two trees. */
grit_status grit_actuator_compile_tendons(grit_model *m, char *msg);

/* Whether an actuator with a tendon transmission acts on tree t. */
int grit_actuator_tendon_on_tree(const grit_model *m, int t);

/* Fills actuator a's arrays of the model from its definition (joint numbering done); m->na counts. */
void grit_actuator_compile(grit_model *m, int a, const grit_actuator_def *def);

/* Actuator a's definition read back from the model. */
void grit_actuator_read(const grit_model *m, int a, grit_actuator_def *def);

/* At the end of a successful step: keeps the step's inputs and activations for the derivatives and
 * advances the activations (grit_actuator_act_next). */
struct grit_data;
void grit_actuation_commit(struct grit_data *d);

#include "grit/detail/scalar_double.h"
#include "actuation_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "actuation_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
