/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_extra_decl_generic.h — prototypes of the scalar-generic rows of the joint-friction,
 * equality and tendon constraints (constraints_extra_generic.h), instantiated by constraints_extra.h
 * for double and for grit_dual: the step builds its constraints with the double versions, the
 * derivatives re-run the same code on dual numbers. */

/* The length of tendon `tendon` at the kinematics k (positions q), and if J is not NULL its Jacobian
 * dL/dv as a dense row of nv (J^T f is the generalized force of a tension f). Spatial tendons: straight
 * segments between sites. scratch: 3 nv. This is the function a tendon transmission uses. */
GS GS_NAME(grit_tendon_length_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int tendon,
                                        GS *J, GS *scratch);

/* The Jacobian blocks J[i] (dim x n_i on trees tree[0..ntree-1], as built) and the position-dependent
 * and model parameters (p->phi0 or p->phi, k, d, tau_d) of a constraint of kind FRICTION, EQUALITY,
 * EQUALITY_1D, TENDON_LIMIT, TENDON_SPRING or TENDON_FRICTION with its `source` (grit_constraint). scratch: 6 nv. */
void GS_NAME(grit_cx_rows)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, double dt, int kind,
                           int source, int ntree, const int tree[2], GS *const J[2], GS_NAME(grit_contact_params) * p,
                           GS *scratch);

/* grit_cx_rows whose rows are formed only on the ncols dofs cols where they can be nonzero (value or
 * partials: the constraint's bodies' paths, joints' dofs, tendons' supports), a superset of them: the
 * same values there, and J's +0 elsewhere; the dense rows of scratch are read and written only there. */
void GS_NAME(grit_cx_rows_cols)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, double dt, int kind,
                                int source, int ntree, const int tree[2], GS *const J[2],
                                GS_NAME(grit_contact_params) * p, GS *scratch, const int *cols, int ncols);
