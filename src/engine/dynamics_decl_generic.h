/* SPDX-License-Identifier: Apache-2.0 */
/* dynamics_decl_generic.h — prototypes of the scalar-generic dynamics, instantiated by dynamics.h for
 * double and for grit_dual. */

/* The joint-space mass matrix M(q) by the composite rigid body algorithm, armature included, stored
 * as one dense row-major block per tree: tree t's block starts at M + tree_madr[t] and has
 * tree_dofnum[t]^2 entries (dofs of different trees do not couple). crb: workspace of nbody inertias. */
void GS_NAME(grit_crba)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M);
/* grit_crba without zeroing M first: only the dof-ancestor pairs (and their mirrors) are written, so M's
 * other entries must already be 0 (a buffer that only grit_crba and this ever write, from calloc). A big
 * tree of many branches (a composite's) has few such pairs among its n^2 entries. */
void GS_NAME(grit_crba_kept)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M);
/* grit_crba with fixed = 2; fixed = 1: a free body's block by the sized loop, not in closed form (the same
 * values, a 0 entry's sign aside); fixed = 0: every tree by the general loop, the old path (tests: the same
 * bits as fixed = 1). */
void GS_NAME(grit_crba_sized)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M,
                              int fixed);

/* The bias forces c(q, v) = Coriolis + centrifugal + gyroscopic + gravity, so that M dv/dt + c = tau,
 * by the recursive Newton-Euler algorithm (after grit_kin_positions and grit_kin_velocities).
 * Workspaces: acc and frc, 6 nbody each (frc of a body welded to the world is left as the sum of its
 * children's: it reaches no dof). */
void GS_NAME(grit_rne_bias)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *v, GS *acc, GS *frc,
                            GS *bias);

/* The step's momentum correction (docs/theory.md, "Ball and free bodies: the discrete momentum
 * balance"): adds to bias, for every body moved by a ball or free joint, the generalized force of
 *   the couple  R [ (L - exp(-h w~) L) / h  -  w x L ],   L = I w,
 * w the body's angular velocity and I its rotational inertia about its centre of mass (body frame),
 * R its orientation and w~ = w - h I^-1 (w x L) its own explicit prediction of its end angular
 * velocity; and, for a root body (parent: the world), of
 *   the force at its COM  m R [ (exp(h w~) - 1)(w~ x r) / h  -  w x (w x r) ],
 * r the COM about the joint's anchor (body frame). bias + correction replaces the explicit
 * velocity-product terms of these bodies by the discrete balance of their momentum over the step, so a
 * free body keeps its linear and angular momentum to O(h^2) instead of O(h). After grit_rne_bias, at
 * the same kinematics; in: NULL for the model's inertial parameters. Workspace frc (6 nbody) is
 * overwritten. */
void GS_NAME(grit_momentum_correction)(const grit_model *m, const GS_NAME(grit_kin) * k,
                                       const GS_NAME(grit_inertial) * in, double h, GS *frc, GS *bias);

/* Adds to bias the generalized forces of the body wrenches frc (6 nbody, world-origin coordinates, the
 * bodies of k's tree mask; frc is summed over subtrees in place): sum_b cdof_d . (subtree sum of frc). */
void GS_NAME(grit_wrenches_to_dofs)(const grit_model *m, const GS_NAME(grit_kin) * k, GS *frc, GS *bias);

/* The implicit operator of the step, A = M + h D + h^2 K (D damping, K joint stiffness, both diagonal),
 * in the same tree-block storage as M. A may alias M. */
void GS_NAME(grit_implicit_operator)(const grit_model *m, const GS *M, double h, GS *A);

/* The smooth generalized force of the step, so that the free-motion velocity solves
 * A (v* - v0) = h force:  force = actuators(q0, v0, u) - bias - D v0 - K (q0 - q_ref + h v0), with u the
 * actuators' force inputs (grit_actuator_input) and their forces grit_actuator_force (actuation.h). */
void GS_NAME(grit_smooth_force)(const grit_model *m, const GS *q0, const GS *v0, const GS *u, const GS *bias, double h,
                                GS *force);

/* grit_smooth_force without the actuators: force = -bias - D v0 - K (q0 - q_ref + h v0). */
void GS_NAME(grit_smooth_force_passive)(const grit_model *m, const GS *q0, const GS *v0, const GS *bias, double h,
                                        GS *force);

/* y = M x (or A x) for tree-block storage; y must not alias x. */
void GS_NAME(grit_block_mulv)(const grit_model *m, const GS *M, const GS *x, GS *y);

/* The rows of tree t of grit_block_mulv: y_t = M_t x_t. */
void GS_NAME(grit_tree_mulv)(const grit_model *m, const GS *M, int t, const GS *x, GS *y);

/* Cholesky factorization in place of each tree block of A (lower triangle L, A = L L^T), of the trees
 * in tree_mask (NULL: all). Returns the index of the first tree whose block is not positive definite,
 * or -1. */
int GS_NAME(grit_block_cholesky)(const grit_model *m, GS *A, const char *tree_mask);

/* Solves L L^T x = b in place (x holds b on entry), with the factor from grit_block_cholesky. */
void GS_NAME(grit_block_cholesky_solve)(const grit_model *m, const GS *L, GS *x);
/* The same for tree t's rows of x alone (the factor is block diagonal). */
void GS_NAME(grit_block_cholesky_solve_tree)(const grit_model *m, const GS *L, int t, GS *x);
/* grit_block_cholesky and grit_block_cholesky_solve with fixed = 1; fixed = 0: every block by the loops of
 * variable size, the old path (tests compare the two: the same bits). */
int GS_NAME(grit_block_cholesky_sized)(const grit_model *m, GS *A, const char *tree_mask, int fixed);
void GS_NAME(grit_block_cholesky_solve_sized)(const grit_model *m, const GS *L, GS *x, int fixed);
