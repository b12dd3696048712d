/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact_decl_generic.h — declarations of derivatives_contact_generic.h for one scalar type
 * (included by derivatives_contact.h once per scalar). */

/* S = sum_j cdof_j v_j over the dofs of `body`'s chain in tree t: its twist at the origin under the dof
 * velocities v (double). */
void GS_NAME(grit_body_dof_twist)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, int t,
                                  const double *v, GS S[6]);

/* Adds sign F^T u to vc (its rows r0..2), u = S_w x p + S_v the velocity of the point p (world) of a body
 * with twist S: J_c v of one side of a contact without J_c (F the contact frame, its columns the axes in
 * the world). */
void GS_NAME(grit_contact_side_velocity)(const GS S[6], const GS p[3], const GS F[9], double sign, int r0, GS vc[3]);

/* Adds to W the wrench at the origin (p x f, f) of the force f = sign F gamma at p: one side's J_c^T
 * gamma, as a wrench on its body. */
void GS_NAME(grit_contact_side_wrench)(const GS p[3], const GS F[9], double sign, const GS gamma[3], GS W[6]);

/* Subtracts from r the generalized forces cdof_j . W of the wrench W on `body` (the dofs of its chain in
 * tree t). */
void GS_NAME(grit_body_wrench_sub)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, int t, const GS W[6],
                                   GS *r);

/* One side's term of a contact's Delassus estimate sum_rows |L^-1 J_r^T|^2 (grit_delassus_c) without J_c,
 * for a side on the only body of tree t, on a free joint: tr(Phi G Phi^T), Phi = [I | u_j] the
 * point Jacobian of p (world) in world axes (the contact frame drops out, being orthonormal), u_j the
 * velocity of p under rotation dof j, G = A^-1 of the tree (6 x 6, row-major, constant). */
GS GS_NAME(grit_free_side_delassus)(const grit_model *m, const GS_NAME(grit_kin) * k, int t, const GS p[3],
                                    const double G[36]);
