/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_adhesion_decl_generic.h — the prototype of the scalar-generic adhesion force
 * (actuation_adhesion_generic.h), instantiated by actuation_adhesion.h for double and grit_dual. */

/* Adds the adhesion actuators' generalized forces to force (nv): for each, -f / n sum_i J_n,i^T over the
 * counted candidates (grit_adhesion_counts) of its body, each re-evaluated at the poses of k from its
 * body-fixed features (so that the dual form carries the partials in q), f = gain w[a] clamped to the
 * force range if limited. w: the actuators' inputs (nu). scratch: unused (kept for the callers). */
void GS_NAME(grit_adhesion_force)(const grit_model *m, const GS_NAME(grit_kin) * k, const grit_contact_candidate *cand,
                                  int ncand, const GS *w, GS *force, GS *scratch);
