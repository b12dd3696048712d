/* SPDX-License-Identifier: Apache-2.0 */
/* kinematics_decl_generic.h — types and prototypes of the scalar-generic kinematics, instantiated by
 * kinematics.h for double and for grit_dual (between scalar_<type>.h and scalar_undef.h). */

/* Inertial parameters as scalars of the instantiation, so derivatives can seed masses. For double
 * they point at the model's arrays. */
typedef struct GS_NAME(grit_inertial) {
  const GS *mass;    /* (nbody) */
  const GS *com;     /* (3 nbody) centre of mass in the body frame */
  const GS *inertia; /* (9 nbody) rotational inertia about the centre of mass, body frame */
} GS_NAME(grit_inertial);

/* Position- and velocity-dependent kinematic quantities, in world coordinates. Spatial quantities
 * (cdof, cinert, cvel, cdof_dot) are referred to the world origin (grit/detail/math_generic.h). */
typedef struct GS_NAME(grit_kin) {
  GS *xpos;                       /* (3 nbody) body frame origin */
  GS *xquat;                      /* (4 nbody) body frame orientation */
  GS *xmat;                       /* (9 nbody) body frame rotation matrix */
  GS *xipos;                      /* (3 nbody) centre of mass */
  GS *xanchor;                    /* (3 njnt) joint anchor */
  GS *xaxis;                      /* (3 njnt) joint axis (hinge/slide) */
  GS *cdof;                       /* (6 nv) motion subspace: the twist of unit joint velocity */
  GS_NAME(grit_sinertia) * cinert; /* (nbody) body spatial inertia */
  GS *cvel;                       /* (6 nbody) body twist */
  GS *cdof_dot;                   /* (6 nv) time derivative of cdof along the motion */
  const char *tree_mask;          /* NULL: every tree; else only trees t with tree_mask[t] are computed
                                     by the kinematics and dynamics functions (the rest keep their values) */
} GS_NAME(grit_kin);

/* Whether body b is to be computed under the kin's tree mask (static bodies always are). */
static inline int GS_NAME(kin_body_on)(const grit_model *m, const GS_NAME(grit_kin) * k, int b) {
  return !k->tree_mask || m->body_tree[b] < 0 || k->tree_mask[m->body_tree[b]];
}

/* Poses, joint frames, motion subspaces and spatial inertias at configuration q. `in` NULL: the model's
 * inertial parameters, as constants (the same values; for dual numbers, fewer products). */
void GS_NAME(grit_kin_positions)(const grit_model *m, const GS *q, const GS_NAME(grit_inertial) * in,
                                 GS_NAME(grit_kin) * k);

/* Body twists and cdof_dot at velocity v (after grit_kin_positions). */
void GS_NAME(grit_kin_velocities)(const grit_model *m, const GS *v, GS_NAME(grit_kin) * k);

/* Body twists (6 nbody) at velocity v into tw, from k's motion subspaces (after grit_kin_positions);
 * k itself is left as it is (its cvel stays that of its own velocity). */
void GS_NAME(grit_kin_twists)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *v, GS *tw);

/* The 3 x nv Jacobian of the velocity of a point p (world) fixed to `body`: v_p = jac v, row-major;
 * and, if jacr is not NULL, of the body's angular velocity. Columns of dofs that do not move the body
 * are zero. */
void GS_NAME(grit_kin_point_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, const GS p[3],
                                      GS *jac, GS *jacr);

/* The same restricted to the columns [col0, col0 + ncol) (e.g. one tree's dofs): jac is 3 x ncol. */
void GS_NAME(grit_kin_point_jacobian_cols)(const grit_model *m, const GS_NAME(grit_kin) * k, int body,
                                           const GS p[3], int col0, int ncol, GS *jac, GS *jacr);

/* q <- q (+) h v: integrates the positions on the manifold (quaternions by the exponential map, with
 * ball and free angular velocities in the body frame). */
void GS_NAME(grit_kin_integrate)(const grit_model *m, GS *q, const GS *v, double h);
