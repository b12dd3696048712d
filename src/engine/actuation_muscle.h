/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_muscle.h — muscles and the slider-crank transmission (internal; issue 24): the model arrays
 * they add, their checks and compilation, the constants MuJoCo 2.2.2 computes at compile time (acc0, the
 * muscles' length ranges), and the scalar-generic curves and lengths (actuation_muscle_generic.h), for
 * double and dual numbers. docs/actuation.md. */
#ifndef GRIT_ACTUATION_MUSCLE_H
#define GRIT_ACTUATION_MUSCLE_H

#include "arena.h"
#include "grit/dual.h"
#include "kinematics.h"
#include "model_internal.h"

/* Carves the muscle, slider-crank and site arrays of m (nu, nsite known) from the model's arena. */
void grit_actuator_muscle_layout(grit_model *m, grit_carver *c);

/* Checks the muscle, slider-crank and site parts of an actuator definition (nsite: the sites added so far). */
grit_status grit_actuator_muscle_check(const grit_actuator_def *def, int id, int nsite, char *msg);

/* Fills actuator a's muscle, slider-crank and site arrays from its definition, and reads them back. */
void grit_actuator_muscle_compile(grit_model *m, int a, const grit_actuator_def *def);
void grit_actuator_muscle_read(const grit_model *m, int a, grit_actuator_def *def);

/* Once the model is otherwise complete (sites, tendons): each slider-crank's and site transmission's tree
 * (act_dof: its first dof), every actuator's acc0 and the muscles' length ranges not given
 * (docs/actuation.md, Length range). */
grit_status grit_actuator_compile_const(grit_model *m, char *msg);

/* Whether actuator a's length is a function of the configuration through a tendon or a slider-crank or a site
 * (length 0) (the transmissions grit_actuator_tendon handles, with a moment J(q)). */
static inline int grit_actuator_has_length_fn(const grit_model *m, int a) {
  return m->act_trntype[a] == GRIT_TRN_TENDON || m->act_trntype[a] == GRIT_TRN_SLIDERCRANK ||
         m->act_trntype[a] == GRIT_TRN_SITE; /* a site's length is 0, its moment a wrench's */
}

#include "grit/detail/scalar_double.h"
#include "actuation_muscle_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "actuation_muscle_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#endif
