/* SPDX-License-Identifier: Apache-2.0 */
/* kinematics_generic.h — forward kinematics of a forest of kinematic trees, written once for any
 * scalar type (see grit/detail/scalar_double.h). Included by kinematics.c once per scalar.
 *
 * Joints of a body are applied in order, as in MuJoCo: the body frame is first placed by its offset
 * (body_pos, body_quat) in the parent frame, then each hinge rotates it about the joint's anchor and
 * axis by q - qpos0, each slide translates it along the axis, a ball rotates it about the anchor by its
 * quaternion, and a free joint sets its world pose directly. */

/* Copies a double 3-vector into scalars. */
static inline void GS_NAME(kin_v3_const)(GS r[3], const double a[3]) {
  for (int i = 0; i < 3; ++i) r[i] = GS_C(a[i]);
}

/* Copies a quaternion and normalizes it (q may come from a user or a dual perturbation off the unit
 * sphere; normalizing keeps rotations orthonormal). */
static inline void GS_NAME(kin_quat_unit)(GS r[4], const GS q[4]) {
  GS_NAME(grit_quat_copy)(r, q);
  GS_NAME(grit_quat_normalize)(r);
}

/* The world body's frame and (zero) inertia. */
static inline void GS_NAME(kin_world)(GS_NAME(grit_kin) * k) {
  GS_NAME(grit_v3_zero)(k->xpos);
  GS_NAME(grit_quat_identity)(k->xquat);
  GS_NAME(grit_m3_identity)(k->xmat);
  GS_NAME(grit_v3_zero)(k->xipos);
  k->cinert[0].m = GS_C(0.0);
  GS_NAME(grit_v3_zero)(k->cinert[0].h);
  for (int i = 0; i < 9; ++i) k->cinert[0].I[i] = GS_C(0.0);
}

/* A free joint j sets the body's whole pose (pos, quat) from its coordinates; its anchor and axis. */
static inline void GS_NAME(kin_free_place)(const grit_model *m, const GS *q, GS_NAME(grit_kin) * k, int j, GS pos[3],
                                           GS quat[4]) {
  const int qa = m->jnt_qposadr[j];
  GS_NAME(grit_v3_copy)(pos, q + qa);
  GS_NAME(kin_quat_unit)(quat, q + qa + 3);
  GS_NAME(grit_v3_copy)(k->xanchor + 3 * j, pos);
  GS_NAME(grit_v3_set)(k->xaxis + 3 * j, GS_C(0.0), GS_C(0.0), GS_C(1.0));
}

/* Joint j moves the body frame (pos, quat) by its coordinates; its world anchor and axis. */
static inline void GS_NAME(kin_joint_place)(const grit_model *m, const GS *q, GS_NAME(grit_kin) * k, int j, GS pos[3],
                                            GS quat[4]) {
  const int qa = m->jnt_qposadr[j];
  const double *jpos = m->jnt_pos + 3 * j, *jaxis = m->jnt_axis + 3 * j;
  GS anchor[3], axis[3], t[3];
  switch (m->jnt_type[j]) {
    case GRIT_JOINT_FREE:
      GS_NAME(kin_free_place)(m, q, k, j, pos, quat);
      break;
    case GRIT_JOINT_BALL:
    case GRIT_JOINT_HINGE: {
      GS rot[4];
      /* a joint at the body origin (the usual case) has its anchor at pos: the rotations of the
       * zero offset below are skipped, with the same result */
      const int at_origin = jpos[0] == 0.0 && jpos[1] == 0.0 && jpos[2] == 0.0;
      if (at_origin) {
        GS_NAME(grit_v3_copy)(anchor, pos);
      } else {
        GS_NAME(grit_quat_rotate_c)(anchor, quat, jpos);
        GS_NAME(grit_v3_add)(anchor, anchor, pos);
      }
      GS_NAME(grit_quat_rotate_c)(axis, quat, jaxis);
      if (m->jnt_type[j] == GRIT_JOINT_BALL) {
        GS_NAME(kin_quat_unit)(rot, q + qa);
      } else {
        GS_NAME(grit_quat_from_axis_angle_c)(rot, jaxis, GS_ADDC(q[qa], -m->qpos0[qa]));
      }
      GS_NAME(grit_quat_mul)(quat, quat, rot);
      GS_NAME(grit_quat_normalize)(quat);
      /* keep the anchor fixed: pos = anchor - R(quat) jpos */
      if (!at_origin) {
        GS_NAME(grit_quat_rotate_c)(t, quat, jpos);
        GS_NAME(grit_v3_sub)(pos, anchor, t);
      }
      GS_NAME(grit_v3_copy)(k->xanchor + 3 * j, anchor);
      GS_NAME(grit_v3_copy)(k->xaxis + 3 * j, axis);
      break;
    }
    case GRIT_JOINT_SLIDE:
    default:
      GS_NAME(grit_quat_rotate_c)(axis, quat, jaxis);
      GS_NAME(grit_v3_addscl)(pos, pos, axis, GS_ADDC(q[qa], -m->qpos0[qa]));
      GS_NAME(grit_quat_rotate_c)(anchor, quat, jpos);
      GS_NAME(grit_v3_add)(anchor, anchor, pos);
      GS_NAME(grit_v3_copy)(k->xanchor + 3 * j, anchor);
      GS_NAME(grit_v3_copy)(k->xaxis + 3 * j, axis);
      break;
  }
}

/* Body b's centre of mass and spatial inertia in the world (frame pos, R). */
static inline void GS_NAME(kin_body_inertia)(const grit_model *m, const GS_NAME(grit_inertial) * in,
                                             GS_NAME(grit_kin) * k, int b, const GS pos[3], const GS R[9]) {
  GS c[3], Iw[9];
  if (!in) { /* the model's own values, as constants: products by constants */
    GS_NAME(grit_tf_apply_c)(c, pos, R, m->body_com + 3 * b);
    GS_NAME(grit_m3_mul_c)(Iw, R, m->body_inertia + 9 * b);
  } else {
    GS_NAME(grit_tf_apply)(c, pos, R, in->com + 3 * b);
    GS_NAME(grit_m3_mul)(Iw, R, in->inertia + 9 * b);
  }
  GS_NAME(grit_v3_copy)(k->xipos + 3 * b, c);
  GS_NAME(grit_m3_mult)(Iw, Iw, R);
  if (!in) GS_NAME(grit_si_from_body_c)(&k->cinert[b], m->body_mass[b], c, Iw);
  else GS_NAME(grit_si_from_body)(&k->cinert[b], in->mass[b], c, Iw);
}

/* Motion subspaces of body b's joints: (axis; anchor x axis) for rotations about a line through the
 * anchor. */
static inline void GS_NAME(kin_body_subspaces)(const grit_model *m, GS_NAME(grit_kin) * k, int b, const GS R[9]) {
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int j = m->body_jnt[m->body_jntadr[b] + n];
    GS *cd = k->cdof + 6 * m->jnt_dofadr[j];
    const GS *anchor = k->xanchor + 3 * j;
    switch (m->jnt_type[j]) {
      case GRIT_JOINT_FREE:
        for (int i = 0; i < 3; ++i) { /* translation along the world axes */
          GS_NAME(grit_sv_zero)(cd + 6 * i);
          cd[6 * i + 3 + i] = GS_C(1.0);
        }
        cd += 18; /* then rotation about the body axes, as a ball joint at the body origin */
        /* fall through */
      case GRIT_JOINT_BALL:
        for (int i = 0; i < 3; ++i) {
          GS a[3] = {R[i], R[3 + i], R[6 + i]}; /* column i of R: body axis i in the world */
          GS_NAME(grit_v3_copy)(cd + 6 * i, a);
          GS_NAME(grit_v3_cross)(cd + 6 * i + 3, anchor, a);
        }
        break;
      case GRIT_JOINT_HINGE:
        GS_NAME(grit_v3_copy)(cd, k->xaxis + 3 * j);
        GS_NAME(grit_v3_cross)(cd + 3, anchor, k->xaxis + 3 * j);
        break;
      case GRIT_JOINT_SLIDE:
      default:
        GS_NAME(grit_v3_zero)(cd);
        GS_NAME(grit_v3_copy)(cd + 3, k->xaxis + 3 * j);
        break;
    }
  }
}

void GS_NAME(grit_kin_positions)(const grit_model *m, const GS *q, const GS_NAME(grit_inertial) * in,
                                 GS_NAME(grit_kin) * k) {
  GS_NAME(kin_world)(k);
  for (int b = 1; b < m->nbody; ++b) {
    if (!GS_NAME(kin_body_on)(m, k, b)) continue;
    const int p = m->body_parent[b];
    GS pos[3], quat[4], R[9];
    /* place the frame by its offset in the parent (constants of the model), then move it by its joints; a
     * free joint first sets the whole pose (kin_joint_place), so that placement is skipped (the same bits) */
    const int nj = m->body_jntnum[b];
    int n0 = 0;
    if (p == 0 && nj > 0 && m->jnt_type[m->body_jnt[m->body_jntadr[b]]] == GRIT_JOINT_FREE && !m->kin_free_placed) {
      GS_NAME(kin_free_place)(m, q, k, m->body_jnt[m->body_jntadr[b]], pos, quat);
      n0 = 1;
    } else {
      GS_NAME(grit_quat_rotate_c)(pos, k->xquat + 4 * p, m->body_pos + 3 * b);
      GS_NAME(grit_v3_add)(pos, pos, k->xpos + 3 * p);
      GS_NAME(grit_quat_mul_c)(quat, k->xquat + 4 * p, m->body_quat + 4 * b);
    }
    for (int n = n0; n < nj; ++n)
      GS_NAME(kin_joint_place)(m, q, k, m->body_jnt[m->body_jntadr[b] + n], pos, quat);
    GS_NAME(grit_v3_copy)(k->xpos + 3 * b, pos);
    GS_NAME(grit_quat_copy)(k->xquat + 4 * b, quat);
    GS_NAME(grit_quat_to_mat)(R, quat);
    GS_NAME(grit_m3_copy)(k->xmat + 9 * b, R);
    GS_NAME(kin_body_inertia)(m, in, k, b, pos, R);
    GS_NAME(kin_body_subspaces)(m, k, b, R);
  }
}

/* Whether body b's twist starts from the world's (+0) with a free joint's translation first, its cdof (0, e_i)
 * exactly (kin_body_subspaces), on doubles: then the sums cv += cdof_i v_i over the three give (+0, v + 0)
 * (+0 x v_i is +-0 and +-0 + +0 is +0; 1 x v_i + +0 is v_i, -0 made +0), so they are written so (the same
 * bits for finite v; dual numbers and m->kin_free_placed keep the sums). */
static inline int GS_NAME(kin_free_from_rest)(const grit_model *m, int b) {
  return !GS_IS_DUAL && m->body_parent[b] == 0 && m->body_jntnum[b] > 0 &&
         m->jnt_type[m->body_jnt[m->body_jntadr[b]]] == GRIT_JOINT_FREE && !m->kin_free_placed;
}

void GS_NAME(grit_kin_velocities)(const grit_model *m, const GS *v, GS_NAME(grit_kin) * k) {
  GS_NAME(grit_sv_zero)(k->cvel);
  for (int b = 1; b < m->nbody; ++b) {
    if (!GS_NAME(kin_body_on)(m, k, b)) continue;
    GS *cv = k->cvel + 6 * b;
    for (int i = 0; i < 6; ++i) cv[i] = k->cvel[6 * m->body_parent[b] + i];
    for (int n = 0; n < m->body_jntnum[b]; ++n) {
      const int j = m->body_jnt[m->body_jntadr[b] + n];
      const int da = m->jnt_dofadr[j], nv = grit_joint_nv(m->jnt_type[j]);
      int first = 0;
      if (m->jnt_type[j] == GRIT_JOINT_FREE) { /* world-fixed translation axes: cdof_dot = 0 */
        const int fast = GS_NAME(kin_free_from_rest)(m, b);
        for (int i = 0; i < 3; ++i) {
          GS_NAME(grit_sv_zero)(k->cdof_dot + 6 * (da + i));
          if (fast) cv[3 + i] = GS_ADDC(v[da + i], 0.0);
          else
            for (int r = 0; r < 6; ++r) cv[r] = GS_FMA(k->cdof[6 * (da + i) + r], v[da + i], cv[r]);
        }
        first = 3;
      }
      /* The derivative of a dof's axis is (velocity so far) x cdof. Using the velocity before this
       * joint's own rotation is exact once multiplied by v, because (S v) x (S v) = 0. */
      for (int i = first; i < nv; ++i) GS_NAME(grit_sv_cross_motion)(k->cdof_dot + 6 * (da + i), cv, k->cdof + 6 * (da + i));
      for (int i = first; i < nv; ++i)
        for (int r = 0; r < 6; ++r) cv[r] = GS_FMA(k->cdof[6 * (da + i) + r], v[da + i], cv[r]);
    }
  }
}

void GS_NAME(grit_kin_twists)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *v, GS *tw) {
  GS_NAME(grit_sv_zero)(tw);
  for (int b = 1; b < m->nbody; ++b) { /* a parent's index is below its children's */
    GS *t = tw + 6 * b;
    for (int i = 0; i < 6; ++i) t[i] = tw[6 * m->body_parent[b] + i];
    if (m->body_parent[b] == 0 && GS_NAME(kin_free_from_rest)(m, b)) { /* (its first three dofs) */
      const int adr = m->body_dofadr[b];
      for (int i = 0; i < 3; ++i) t[3 + i] = GS_ADDC(v[adr + i], 0.0);
      for (int dof = adr + 3; dof < adr + m->body_dofnum[b]; ++dof)
        for (int r = 0; r < 6; ++r) t[r] = GS_FMA(k->cdof[6 * dof + r], v[dof], t[r]);
      continue;
    }
    for (int n = 0; n < m->body_dofnum[b]; ++n) {
      const int dof = m->body_dofadr[b] + n;
      for (int r = 0; r < 6; ++r) t[r] = GS_FMA(k->cdof[6 * dof + r], v[dof], t[r]);
    }
  }
}

void GS_NAME(grit_kin_point_jacobian_cols)(const grit_model *m, const GS_NAME(grit_kin) * k, int body,
                                           const GS p[3], int col0, int ncol, GS *jac, GS *jacr) {
  for (int i = 0; i < 3 * ncol; ++i) jac[i] = GS_C(0.0);
  if (jacr)
    for (int i = 0; i < 3 * ncol; ++i) jacr[i] = GS_C(0.0);
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int col = dof - col0;
    if (col < 0 || col >= ncol) continue;
    GS lin[3];
    GS_NAME(grit_sv_point_velocity)(lin, k->cdof + 6 * dof, p);
    for (int r = 0; r < 3; ++r) {
      jac[r * ncol + col] = lin[r];
      if (jacr) jacr[r * ncol + col] = k->cdof[6 * dof + r];
    }
  }
}

void GS_NAME(grit_kin_point_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, const GS p[3],
                                      GS *jac, GS *jacr) {
  GS_NAME(grit_kin_point_jacobian_cols)(m, k, body, p, 0, m->nv, jac, jacr);
}

void GS_NAME(grit_kin_integrate)(const grit_model *m, GS *q, const GS *v, double h) {
  for (int j = 0; j < m->njnt; ++j) {
    GS *qj = q + m->jnt_qposadr[j];
    const GS *vj = v + m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
      case GRIT_JOINT_FREE:
        for (int i = 0; i < 3; ++i) qj[i] = GS_FMA(vj[i], GS_C(h), qj[i]);
        GS_NAME(grit_quat_integrate)(qj + 3, vj + 3, h);
        break;
      case GRIT_JOINT_BALL:
        GS_NAME(grit_quat_integrate)(qj, vj, h);
        break;
      default:
        qj[0] = GS_FMA(vj[0], GS_C(h), qj[0]);
        break;
    }
  }
}
