/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact_generic.h — a contact's J_c v and J_c^T gamma applied without forming J_c, written
 * once for any scalar type (derivatives_contact.c).
 *
 * Column j of one side's J_c is sign F^T (cdof_j x p + its linear part) (grit_contact_jacobian_add). Its
 * products with v and gamma regroup by linearity: J_c v = sign F^T (S_w x p + S_v) with S = sum_j cdof_j
 * v_j the body's twist, the same for every contact on the body; and (J_c^T gamma)_j = cdof_j . W with
 * W = (p x f, f), f = sign F gamma, the force's wrench at the origin, which adds up over a body's contacts
 * before it is projected on the dofs. A free joint's translation columns are the world axes: v_j added
 * to S's linear part, W's force subtracted. The sums are the same derivatives in another order (round-off
 * only; docs/performance.md, stop 15, for the measured differences). */

void GS_NAME(grit_body_dof_twist)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, int t,
                                  const double *v, GS S[6]) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int c = 0; c < 6; ++c) S[c] = GS_C(0.0);
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
      S[3 + dof - m->jnt_dofadr[jn]] = GS_ADDC(S[3 + dof - m->jnt_dofadr[jn]], v[dof]);
      continue;
    }
    const GS *cd = k->cdof + 6 * dof;
    for (int c = 0; c < 6; ++c) S[c] = GS_ADD(S[c], GS_SCALE(cd[c], v[dof]));
  }
}

/* a x b + c, written out: grit_v3_cross is not inlined here, and its copy through a temporary costs as
 * much as the products */
static inline void GS_NAME(cross_add)(GS r[3], const GS a[3], const GS b[3], const GS c[3]) {
  r[0] = GS_ADD(GS_SUB(GS_MUL(a[1], b[2]), GS_MUL(a[2], b[1])), c[0]);
  r[1] = GS_ADD(GS_SUB(GS_MUL(a[2], b[0]), GS_MUL(a[0], b[2])), c[1]);
  r[2] = GS_ADD(GS_SUB(GS_MUL(a[0], b[1]), GS_MUL(a[1], b[0])), c[2]);
}

void GS_NAME(grit_contact_side_velocity)(const GS S[6], const GS p[3], const GS F[9], double sign, int r0, GS vc[3]) {
  GS u[3];
  GS_NAME(cross_add)(u, S, p, S + 3); /* S_w x p + S_v */
  for (int r = r0; r < 3; ++r) /* row r of F^T: column r of F */
    vc[r] = GS_ADD(vc[r], GS_SCALE(GS_FMA(F[r], u[0], GS_FMA(F[3 + r], u[1], GS_MUL(F[6 + r], u[2]))), sign));
}

void GS_NAME(grit_contact_side_wrench)(const GS p[3], const GS F[9], double sign, const GS gamma[3], GS W[6]) {
  GS f[3];
  for (int i = 0; i < 3; ++i)
    f[i] = GS_SCALE(GS_FMA(F[3 * i], gamma[0], GS_FMA(F[3 * i + 1], gamma[1], GS_MUL(F[3 * i + 2], gamma[2]))), sign);
  GS_NAME(cross_add)(W, p, f, W); /* the torque p x f */
  for (int i = 0; i < 3; ++i) W[3 + i] = GS_ADD(W[3 + i], f[i]);
}

void GS_NAME(grit_body_wrench_sub)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, int t, const GS W[6],
                                   GS *r) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
      r[dof] = GS_SUB(r[dof], W[3 + dof - m->jnt_dofadr[jn]]);
      continue;
    }
    const GS *cd = k->cdof + 6 * dof;
    r[dof] = GS_SUB(r[dof], GS_ADD(GS_NAME(grit_v3_dot)(cd, W), GS_NAME(grit_v3_dot)(cd + 3, W + 3)));
  }
}

/* With Y = (u_0 u_1 u_2) (3 x 3), tr(Phi G Phi^T) = tr G_tt + sum_ij Y_ij (2 G_t,r + Y G_rr)_ij (G symmetric;
 * t the translation block, r the rotation block). */
GS GS_NAME(grit_free_side_delassus)(const grit_model *m, const GS_NAME(grit_kin) * k, int t, const GS p[3],
                                    const double G[36]) {
  const int adr = m->tree_dofadr[t];
  GS Y[3][3];
  for (int j = 0; j < 3; ++j) {
    GS u[3];
    GS_NAME(grit_sv_point_velocity)(u, k->cdof + 6 * (adr + 3 + j), p);
    for (int i = 0; i < 3; ++i) Y[i][j] = u[i];
  }
  GS s = GS_C(G[0] + G[7] + G[14]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      GS z = GS_C(2.0 * G[6 * i + 3 + j]);
      for (int l = 0; l < 3; ++l) z = GS_ADD(z, GS_SCALE(Y[i][l], G[6 * (3 + l) + 3 + j]));
      s = GS_FMA(Y[i][j], z, s);
    }
  return s;
}
