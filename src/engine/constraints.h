/* SPDX-License-Identifier: Apache-2.0 */
/* constraints.h — building the constraints of a step for the solver (internal): joint limits here,
 * contacts from the collision candidates; and the parameters that depend on the Delassus estimate. */
#ifndef GRIT_CONSTRAINTS_H
#define GRIT_CONSTRAINTS_H

#include "collision.h"
#include "grit/step.h"
#include "kinematics.h"
#include "constraint.h"

/* The Delassus estimates w = trace(J A^-1 J^T) / dim of constraints c[0..nc-1] from another factor of A than
 * Achol's dense blocks (the step's tree-ordered factor, afactor.h, which this module may not include: it
 * depends on the dynamics, which depend on the actuators and through them on this module): c[i].w for each
 * one grit_constraint_uses_w takes, 0 for the others. All at once: a composite's hundreds of one-row
 * equalities without a call each. */
typedef void (*grit_delassus_fn)(const void *ctx, grit_constraint *c, int nc, const double *jstore,
                                 const grit_step_settings *settings, double *tmp);

/* Whether constraint c's parameters read its Delassus estimate (grit_params_finalize): SAP, joint limits,
 * Lagged with eq. 26's regularization and gradient smoothing's pairs; the forward substitutions are skipped
 * for the others (a tenth of the clutter's step) and w is 0. */
static inline int grit_constraint_uses_w(const grit_constraint *c, const grit_step_settings *settings) {
  return c->kind == GRIT_CONSTRAINT_SAP ||
         (c->kind >= GRIT_CONSTRAINT_LIMIT && c->kind != GRIT_CONSTRAINT_TENDON_SPRING) ||
         (c->kind == GRIT_CONSTRAINT_LAGGED && settings->regularize_lagged) ||
         (c->kind <= GRIT_CONSTRAINT_SIMILAR && (c->p.smooth > 0.0 || c->p.soft > 0.0));
}

#include "grit/detail/scalar_double.h"
#include "constraints_decl_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "constraints_decl_generic.h"
#include "grit/detail/scalar_undef.h"

/* Number of limit constraints the model can produce (two per limited hinge/slide) and the Jacobian
 * storage they need. */
int grit_limit_capacity(const grit_model *m, int *jstore);

/* How far ahead a step looks for constraints, in units of the distance covered in one step at the
 * larger of the start and free-motion speeds. A joint limit enters a step's problem only within this
 * window (as Drake's SAP driver does), and a contact pair only within it (the speculative margins of
 * grit_step and grit_collision_detect). A limit or pair outside it has no impulse at the solution
 * unless contact more than doubles the speeds within the step; then it is caught one step later.
 * Most limits of a moving arm are far (the Kinova arm: 6 limit constraints in every step, 10 % of its
 * step time), as are most pairs of a clutter within the 10 cm margin (288 candidates for 70 active). */
#define GRIT_STEP_REACH 2.0

/* Appends the joint-limit constraints at positions q, with the step's velocities v0 and v*, into c
 * (from index *nc) with Jacobians in jstore (from offset *joff). Each limit is a 1-D one-sided
 * constraint on the joint's coordinate, phi0 = q - lower (or upper - q), v_c = v (or -v). */
void grit_build_limit_constraints(const grit_model *m, const double *q, const double *v0, const double *vstar,
                                  double dt, grit_constraint *c, int *nc, double *jstore, int *joff);

/* The Jacobian storage one contact may need: 3 rows over at most two trees. */
int grit_contact_jstore_size(const grit_model *m);

/* Appends one contact constraint per candidate (in order, so candidate i is constraint i when the
 * contacts come first): the contact frame (t1, t2, n) from the normal, Jacobian blocks
 * J = frame^T (J_b(p_b) - J_a(p_a)) restricted to the trees of the two bodies, the pair's combined
 * parameters (with the gradient smoothing distance; without dissipation if dissipation_free, as in the
 * quasistatic step), and for Lagged the normal impulse gamma_n0 at the previous velocity v0. scratch: 3 nv. */
void grit_build_contact_constraints(const grit_model *m, const grit_kin *k, const grit_contact_candidate *cand,
                                    int ncand, const double *v0, double dt, grit_contact_model model,
                                    double smoothing, int dissipation_free, grit_constraint *c, int *nc,
                                    double *jstore, int *joff, double *scratch);

/* The tree of a body (-1 for a static body). */
int grit_body_tree(const grit_model *m, int body);

/* Sets every constraint's Delassus estimate w (from the tree-block factor Achol of A, or all by delassus(ctx,
 * ...) when it is not NULL; 0 for the models
 * that do not use it: Lagged without eq. 26's regularization, Similar) and the parameters that depend
 * on it (grit_params_finalize). tmp: nv. */
void grit_finalize_constraints(const grit_model *m, grit_constraint *c, int nc, const double *jstore,
                               const double *Achol, grit_delassus_fn delassus, const void *ctx, double dt,
                               const grit_step_settings *settings, double *tmp);

#endif
