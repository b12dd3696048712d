/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_extra.h — the step's joint-friction, equality and tendon constraints (internal;
 * docs/contact.md, Joint friction, equality constraints and tendons). */
#ifndef GRIT_CONSTRAINTS_EXTRA_H
#define GRIT_CONSTRAINTS_EXTRA_H

#include "constraints.h"
#include "grit/constraints.h"

#include "grit/detail/scalar_double.h"
#include "constraints_extra_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "constraints_extra_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* The number of these constraints a step may build, and the Jacobian storage they need. */
int grit_cx_capacity(const grit_model *m, int *jstore);

/* Appends them (joint friction, equalities, tendon springs, the tendon limits within the step's reach)
 * at positions q with kinematics k, after the other constraints. scratch: 6 nv. */
void grit_build_cx_constraints(const grit_model *m, const grit_kin *k, const double *q, const double *v0,
                               const double *vstar, double dt, grit_constraint *c, int *nc, double *jstore, int *joff,
                               double *scratch);

#endif
