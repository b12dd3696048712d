/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_decl_generic.h — prototypes of the scalar-generic constraint glue (contact Jacobians,
 * pair parameters, Delassus estimates, parameter finalization, model dispatch), instantiated by
 * constraints.h for double and for grit_dual. The step uses the double versions; the derivatives
 * re-run the same code on dual numbers. */

/* Per-geometry contact parameters as scalars (for double: the model's arrays). */
typedef struct GS_NAME(grit_geom_params) {
  const GS *friction, *stiffness, *dissipation, *tau_d; /* (ngeom) each */
  int dissipation_free; /* quasistatic steps: every pair's d and tau_d are 0 (docs/quasistatic.md) */
  const int *priority, *condim; /* (ngeom) MuJoCo's; NULL: equal priorities, condim 3 */
} GS_NAME(grit_geom_params);

/* Adds sign * F^T J_p into out (3 x n, row-major, n = tree t's dofs): J_p is the Jacobian of the
 * point p (world) fixed to `body`, restricted to tree t; F the contact frame (columns t1, t2, n).
 * scratch: 3 n. */
void GS_NAME(grit_contact_jacobian_add)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, const GS p[3],
                                        int t, const GS F[9], double sign, GS *out, GS *scratch);

/* The pair's parameters from its two geometries' (docs/collision.md): mu = max, k = 2 ka kb / (ka + kb),
 * d and tau_d the means (0 if g->dissipation_free). Sets p->mu, k, d, tau_d. MuJoCo's combination of
 * friction: the geometry of higher priority gives mu and condim, equal priorities the larger of each;
 * condim 1 (frictionless) makes mu 0. */
void GS_NAME(grit_pair_params)(const GS_NAME(grit_geom_params) * g, int ga, int gb, GS_NAME(grit_contact_params) * p);

/* w = trace(J A^-1 J^T) / dim for a constraint with Jacobian blocks J[k] (dim x n_k) on trees tree[k],
 * from the tree-block Cholesky factor of A. tmp: the largest tree's dofs. */
GS GS_NAME(grit_delassus)(const grit_model *m, const GS *Achol, int dim, int ntree, const int tree[2],
                          const GS *const J[2], GS *tmp);
/* The same, with the factor of the trees t with cmask[t] read from Lc (doubles, same layout as Achol):
 * the same values, at the cost of products by constants (the derivatives' position passes, where the
 * free bodies' factors are constants). cmask NULL: grit_delassus. */
GS GS_NAME(grit_delassus_c)(const grit_model *m, const GS *Achol, const double *Lc, const char *cmask, int dim,
                            int ntree, const int tree[2], const GS *const J[2], GS *tmp);
#if !GS_IS_DUAL
/* One tree's part of grit_delassus before the division by dim: w + sum over the rows of J's block Jk
 * (dim x n) on tree t of |L^-1 Jk_r^T|^2 (double only). */
GS GS_NAME(grit_delassus_tree)(const grit_model *m, const GS *Achol, int dim, int t, const GS *Jk, GS *tmp, GS w);
#endif

/* An equality's near-rigid regularization R = w / (4 pi^2); 1 where w = 0 (its rows of J are zero there). */
GS GS_NAME(grit_equality_rn)(GS w);

/* The parameters that depend on w: SAP's R_t = sigma w, R_n with its near-rigid bound and v_hat; the
 * Lagged/Similar stiction tolerance (eq. 26 when regularized); the limits' near-rigid R and v_hat. */
void GS_NAME(grit_params_finalize)(int kind, GS w, double dt, const grit_step_settings *st,
                                   GS_NAME(grit_contact_params) * p);

/* Cost, impulse and Hessian of a constraint of `kind` (grit_constraint_kind) at velocity vc. */
GS GS_NAME(grit_constraint_eval)(int kind, const GS_NAME(grit_contact_params) * p, double dt, const GS *vc, GS *gamma,
                                 GS *G);
