/* SPDX-License-Identifier: Apache-2.0 */
/* dynamics_generic.h — the composite rigid body algorithm, recursive Newton-Euler, and the terms of
 * the implicit step, written once for any scalar type. Included by dynamics.c once per scalar.
 * All spatial quantities are in world coordinates, referred to the world origin, so that composite
 * inertias simply add and no frame transforms appear in the recursions (docs/theory.md). */

/* Loops unrolled in full over a free body's 6 dofs (block_cholesky_six): GCC does not unroll triangular
 * loops by itself (as blockchol.c's UNROLL). */
#ifndef DYN_UNROLL
#if defined(__GNUC__) && !defined(__clang__)
#define DYN_UNROLL _Pragma("GCC unroll 8")
#else
#define DYN_UNROLL
#endif
#endif
/* The free body's paths kept out of line: inlined, their registers cost the general paths' callers (the
 * hopper's, the humanoid's) a few instructions a call. */
#ifndef DYN_NOINLINE
#if defined(__GNUC__)
#define DYN_NOINLINE __attribute__((noinline))
#else
#define DYN_NOINLINE
#endif
#endif

/* The block of a tree whose n dofs are all on its root body b, dof i's parent dof i - 1 (a free body: n = 6;
 * a particle on three slides: n = 3), with n a constant: crba_fill's operations for each entry (the same
 * bits), the loops over the dofs and their parents unrolled. */
static inline void GS_NAME(crba_body_block)(const GS_NAME(grit_sinertia) * crb, const GS *cdof, const double *armature,
                                             GS *Mt, int n) {
  for (int i = 0; i < n; ++i) {
    GS f[6];
    GS_NAME(grit_si_apply)(f, crb, cdof + 6 * i);
    for (int j = i; j >= 0; --j) {
      GS mij = GS_NAME(grit_sv_dot)(cdof + 6 * j, f);
      Mt[i * n + j] = mij;
      Mt[j * n + i] = mij;
    }
    Mt[i * n + i] = GS_ADDC(Mt[i * n + i], armature[i]);
  }
}

/* crba_body_block for a free body (n = 6, its dofs those of one free joint): the translation dofs' cdof is
 * (0, e_i), exactly, so their force is (h x e_i, m e_i) and every product of their entries with a cdof is a
 * product by an exact 0 or 1. The translation block is m 1 (+ armature) and the coupling of rotation dof i
 * with translation dof j is f_i's linear entry j; the rotation block as crba_body_block. The same values as
 * crba_body_block, but a product by 0 no longer enters: an entry that is 0 may differ in its sign (+0 here).
 * Half of crba_body_block's operations (three spatial products and 15 of the 21 dot products). */
static DYN_NOINLINE void GS_NAME(crba_free_block)(const GS_NAME(grit_sinertia) * crb, const GS *cdof, const double *armature,
                                             GS *Mt) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) Mt[i * 6 + j] = GS_C(0.0);
    Mt[i * 6 + i] = GS_ADDC(crb->m, armature[i]);
  }
  for (int i = 3; i < 6; ++i) {
    GS f[6];
    GS_NAME(grit_si_apply)(f, crb, cdof + 6 * i);
    for (int j = i; j >= 3; --j) {
      GS mij = GS_NAME(grit_sv_dot)(cdof + 6 * j, f);
      Mt[i * 6 + j] = mij;
      Mt[j * 6 + i] = mij;
    }
    for (int j = 0; j < 3; ++j) {
      Mt[i * 6 + j] = f[3 + j];
      Mt[j * 6 + i] = f[3 + j];
    }
    Mt[i * 6 + i] = GS_ADDC(Mt[i * 6 + i], armature[i]);
  }
}

/* Whether tree t's dofs are all on one body and chained in order (crba_body_block), for n = 6 or 3. */
static inline int GS_NAME(crba_one_body)(const grit_model *m, int t) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  if (n != 6 && n != 3) return 0;
  if (m->dof_parent[adr] >= 0 || m->dof_body[adr + n - 1] != m->dof_body[adr]) return 0;
  for (int i = adr + 1; i < adr + n; ++i)
    if (m->dof_parent[i] != i - 1) return 0;
  return 1;
}

/* grit_crba; zero = 0 leaves the entries of M that are no dof-ancestor pair as they are (they are never
 * written here, so a buffer only ever filled by this keeps them 0); fixed = 0: every tree by the general
 * loop (the old path; crba_body_block gives the same bits); fixed = 2: a free body's block by crba_free_block
 * (the same values; a 0 entry's sign may differ) */
static void GS_NAME(crba_fill)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M,
                               int zero, int fixed) {
  for (int b = 0; b < m->nbody; ++b) crb[b] = k->cinert[b];
  for (int b = m->nbody - 1; b > 0; --b) /* children have larger indices than their parents */
    if (m->body_parent[b] > 0) GS_NAME(grit_si_add)(&crb[m->body_parent[b]], &crb[m->body_parent[b]], &crb[b]);
  for (int t = 0; t < m->ntree && zero; ++t)
    if (!k->tree_mask || k->tree_mask[t])
      for (int i = 0; i < m->tree_dofnum[t] * m->tree_dofnum[t]; ++i) M[m->tree_madr[t] + i] = GS_C(0.0);
  for (int t = 0; t < m->ntree; ++t) { /* (a tree's dofs are adr .. adr + n - 1) */
    if (k->tree_mask && !k->tree_mask[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    GS *Mt = M + m->tree_madr[t];
    if (fixed && GS_NAME(crba_one_body)(m, t)) {
      const GS_NAME(grit_sinertia) *c = &crb[m->dof_body[adr]];
      if (n == 6 && fixed == 2 && m->jnt_type[m->dof_jnt[adr]] == GRIT_JOINT_FREE)
        GS_NAME(crba_free_block)(c, k->cdof + 6 * adr, m->dof_armature + adr, Mt);
      else if (n == 6) GS_NAME(crba_body_block)(c, k->cdof + 6 * adr, m->dof_armature + adr, Mt, 6);
      else GS_NAME(crba_body_block)(c, k->cdof + 6 * adr, m->dof_armature + adr, Mt, 3);
      continue;
    }
    for (int i = adr; i < adr + n; ++i) {
      GS f[6]; /* the force that moves the subtree of dof i at unit velocity of dof i */
      GS_NAME(grit_si_apply)(f, &crb[m->dof_body[i]], k->cdof + 6 * i);
      for (int j = i; j >= 0; j = m->dof_parent[j]) {
        GS mij = GS_NAME(grit_sv_dot)(k->cdof + 6 * j, f);
        Mt[(i - adr) * n + (j - adr)] = mij;
        Mt[(j - adr) * n + (i - adr)] = mij;
      }
      Mt[(i - adr) * n + (i - adr)] = GS_ADDC(Mt[(i - adr) * n + (i - adr)], m->dof_armature[i]);
    }
  }
}

void GS_NAME(grit_crba)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M) {
  GS_NAME(crba_fill)(m, k, crb, M, 1, 2);
}

void GS_NAME(grit_crba_kept)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M) {
  GS_NAME(crba_fill)(m, k, crb, M, 0, 2);
}

void GS_NAME(grit_crba_sized)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M,
                              int fixed) {
  GS_NAME(crba_fill)(m, k, crb, M, 1, fixed);
}

void GS_NAME(grit_rne_bias)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *v, GS *acc, GS *frc,
                            GS *bias) {
  /* Gravity enters as an upward acceleration of the world (the usual RNEA device). */
  GS_NAME(grit_sv_zero)(acc);
  for (int i = 0; i < 3; ++i) acc[3 + i] = GS_C(-m->opt.gravity[i]);
  for (int b = 1; b < m->nbody; ++b) {
    GS *a = acc + 6 * b, *f = frc + 6 * b, mom[6], t[6];
    if (!GS_NAME(kin_body_on)(m, k, b)) continue;
    for (int i = 0; i < 6; ++i) a[i] = acc[6 * m->body_parent[b] + i];
    if (m->body_tree[b] < 0) { /* welded to the world: its force reaches no dof (the bias reads only the dofs'
                                  bodies' sums, and its sum goes only to bodies welded to the world) */
      GS_NAME(grit_sv_zero)(f);
      continue;
    }
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b]; ++d)
      for (int r = 0; r < 6; ++r) a[r] = GS_FMA(k->cdof_dot[6 * d + r], v[d], a[r]);
    /* f = I a + v x* (I v) */
    GS_NAME(grit_si_apply)(f, &k->cinert[b], a);
    GS_NAME(grit_si_apply)(mom, &k->cinert[b], k->cvel + 6 * b);
    GS_NAME(grit_sv_cross_force)(t, k->cvel + 6 * b, mom);
    GS_NAME(grit_sv_add)(f, f, t);
    if (m->body_gravcomp[b] != 0.0) { /* -gravcomp m g at the centre of mass: that part of the weight off */
      GS_NAME(grit_si_apply)(t, &k->cinert[b], acc); /* acc (the world's) is (0, -gravity) */
      for (int i = 0; i < 6; ++i) f[i] = GS_FMA(t[i], GS_C(-m->body_gravcomp[b]), f[i]);
    }
  }
  for (int b = m->nbody - 1; b > 0; --b)
    if (m->body_parent[b] > 0 && GS_NAME(kin_body_on)(m, k, b))
      GS_NAME(grit_sv_add)(frc + 6 * m->body_parent[b], frc + 6 * m->body_parent[b], frc + 6 * b);
  for (int d = 0; d < m->nv; ++d)
    if (!k->tree_mask || k->tree_mask[m->dof_tree[d]]) bias[d] = GS_NAME(grit_sv_dot)(k->cdof + 6 * d, frc + 6 * m->dof_body[d]);
}

/* Whether body b turns about a ball or free joint (a quaternion coordinate). */
static inline int GS_NAME(dyn_body_spins)(const grit_model *m, int b) {
  for (int j = m->body_jntadr[b]; j >= 0 && j < m->body_jntadr[b] + m->body_jntnum[b]; ++j)
    if (m->jnt_type[m->body_jnt[j]] == GRIT_JOINT_BALL || m->jnt_type[m->body_jnt[j]] == GRIT_JOINT_FREE) return 1;
  return 0;
}

/* x = S^-1 b for a symmetric positive definite 3x3 S (the adjugate over the determinant). */
static inline void GS_NAME(dyn_sym3_solve)(GS x[3], const GS S[9], const GS b[3]) {
  GS c[9];
  c[0] = GS_SUB(GS_MUL(S[4], S[8]), GS_MUL(S[5], S[7]));
  c[1] = GS_SUB(GS_MUL(S[2], S[7]), GS_MUL(S[1], S[8]));
  c[2] = GS_SUB(GS_MUL(S[1], S[5]), GS_MUL(S[2], S[4]));
  c[4] = GS_SUB(GS_MUL(S[0], S[8]), GS_MUL(S[2], S[6]));
  c[5] = GS_SUB(GS_MUL(S[2], S[3]), GS_MUL(S[0], S[5]));
  c[8] = GS_SUB(GS_MUL(S[0], S[4]), GS_MUL(S[1], S[3]));
  c[3] = c[1];
  c[6] = c[2];
  c[7] = c[5];
  GS det = GS_FMA(S[0], c[0], GS_FMA(S[1], c[3], GS_MUL(S[2], c[6])));
  GS_NAME(grit_m3_mulv)(x, c, b);
  for (int i = 0; i < 3; ++i) x[i] = GS_DIV(x[i], det);
}

void GS_NAME(grit_momentum_correction)(const grit_model *m, const GS_NAME(grit_kin) * k,
                                       const GS_NAME(grit_inertial) * in, double h, GS *frc, GS *bias) {
  int any = 0;
  for (int b = 0; b < m->nbody; ++b)
    for (int i = 0; i < 6; ++i) frc[6 * b + i] = GS_C(0.0);
  if (m->opt.explicit_gyroscopic) return; /* MuJoCo's Euler: the bias c alone (grit_options) */
  for (int b = 1; b < m->nbody; ++b) {
    if (!GS_NAME(kin_body_on)(m, k, b) || !GS_NAME(dyn_body_spins)(m, b)) continue;
    const GS *R = k->xmat + 9 * b;
    GS I[9], w[3], L[3], g[3], wp[3], th[3], dq[4], Lr[3], tb[3], *f = frc + 6 * b;
    if (in)
      for (int i = 0; i < 9; ++i) I[i] = in->inertia[9 * b + i];
    else
      for (int i = 0; i < 9; ++i) I[i] = GS_C(m->body_inertia[9 * b + i]);
    GS_NAME(grit_m3_tmulv)(w, R, k->cvel + 6 * b); /* body-frame angular velocity */
    GS_NAME(grit_m3_mulv)(L, I, w);
    GS_NAME(grit_v3_cross)(g, w, L); /* the explicit gyroscopic torque */
    GS_NAME(dyn_sym3_solve)(wp, I, g); /* w~ = w - h I^-1 g */
    for (int i = 0; i < 3; ++i) {
      wp[i] = GS_SUB(w[i], GS_SCALE(wp[i], h));
      th[i] = GS_SCALE(wp[i], -h);
    }
    GS_NAME(grit_quat_exp)(dq, th); /* exp(-h w~) */
    GS_NAME(grit_quat_rotate)(Lr, dq, L);
    for (int i = 0; i < 3; ++i) tb[i] = GS_SUB(GS_SCALE(GS_SUB(L[i], Lr[i]), 1.0 / h), g[i]);
    GS_NAME(grit_m3_mulv)(f, R, tb); /* the couple, world frame */
    const int j = m->body_jnt[m->body_jntadr[b]];
    /* a free joint's anchor is the body origin: with the model's centre of mass there (in == NULL),
     * xipos == xanchor bit for bit, r = 0 and the force below is exactly zero */
    const int com_at_anchor = !in && m->jnt_type[j] == GRIT_JOINT_FREE && m->body_com[3 * b] == 0.0 &&
                              m->body_com[3 * b + 1] == 0.0 && m->body_com[3 * b + 2] == 0.0;
    if (m->body_parent[b] == 0 && !com_at_anchor) {
      /* A root body also carries its centre of mass around the joint's anchor: the COM velocity
       * R (w x r) changes over the step by (R~1 - R) (w~ x r) with R~1 = R exp(h w~), where the
       * explicit step takes h R (w x (w x r)). The difference, times the mass, is a force at the COM. */
      GS rw[3], r[3], y[3], yr[3], c1[3], a[3], fb[3], fw[3], n[3];
      const GS mass = in ? in->mass[b] : GS_C(m->body_mass[b]);
      GS_NAME(grit_v3_sub)(rw, k->xipos + 3 * b, k->xanchor + 3 * j);
      GS_NAME(grit_m3_tmulv)(r, R, rw); /* COM about the anchor, body frame */
      GS_NAME(grit_v3_cross)(y, wp, r);
      for (int i = 0; i < 3; ++i) th[i] = GS_NEG(th[i]);
      GS_NAME(grit_quat_exp)(dq, th); /* exp(h w~) */
      GS_NAME(grit_quat_rotate)(yr, dq, y);
      GS_NAME(grit_v3_cross)(c1, w, r);
      GS_NAME(grit_v3_cross)(a, w, c1);
      for (int i = 0; i < 3; ++i) fb[i] = GS_MUL(mass, GS_SUB(GS_SCALE(GS_SUB(yr[i], y[i]), 1.0 / h), a[i]));
      GS_NAME(grit_m3_mulv)(fw, R, fb);
      GS_NAME(grit_v3_cross)(n, k->xipos + 3 * b, fw); /* its moment about the world origin */
      for (int i = 0; i < 3; ++i) {
        f[i] = GS_ADD(f[i], n[i]);
        f[3 + i] = fw[i];
      }
    }
    any = 1;
  }
  if (!any) return;
  GS_NAME(grit_wrenches_to_dofs)(m, k, frc, bias);
}

/* A wrench on a body is felt by every dof that moves it: sum over subtrees, then project on each
 * dof's motion subspace (world-origin coordinates, as in grit_rne_bias). */
void GS_NAME(grit_wrenches_to_dofs)(const grit_model *m, const GS_NAME(grit_kin) * k, GS *frc, GS *bias) {
  for (int b = m->nbody - 1; b > 0; --b)
    if (m->body_parent[b] > 0 && GS_NAME(kin_body_on)(m, k, b))
      GS_NAME(grit_sv_add)(frc + 6 * m->body_parent[b], frc + 6 * m->body_parent[b], frc + 6 * b);
  for (int d = 0; d < m->nv; ++d)
    if (!k->tree_mask || k->tree_mask[m->dof_tree[d]])
      bias[d] = GS_ADD(bias[d], GS_NAME(grit_sv_dot)(k->cdof + 6 * d, frc + 6 * m->dof_body[d]));
}

void GS_NAME(grit_implicit_operator)(const grit_model *m, const GS *M, double h, GS *A) {
  if (A != M) /* (a loop: memcpy's rep movsb on a composite's thousands of entries counts one a byte) */
    for (int i = 0; i < m->nM; ++i) A[i] = M[i];
  /* tree by tree (a tree's dofs are consecutive), its block's address and size read once: the same sum on
   * each diagonal entry (a per-dof look-up of the tree was half of this for a free body) */
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    GS *a = A + m->tree_madr[t];
    for (int k = 0; k < n; ++k) {
      const int i = adr + k, j = m->dof_jnt[i];
      const double kj = (m->jnt_type[j] == GRIT_JOINT_HINGE || m->jnt_type[j] == GRIT_JOINT_SLIDE) ? m->jnt_stiffness[j] : 0.0;
      a[k * n + k] = GS_ADDC(a[k * n + k], h * m->dof_damping[i] + h * h * kj);
    }
  }
}

void GS_NAME(grit_smooth_force_passive)(const grit_model *m, const GS *q0, const GS *v0, const GS *bias, double h,
                                        GS *force) {
  for (int i = 0; i < m->nv; ++i) force[i] = GS_SUB(GS_NEG(bias[i]), GS_SCALE(v0[i], m->dof_damping[i]));
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_stiffness[j] == 0.0) continue; /* springs only on hinge/slide (checked at build) */
    const int d = m->jnt_dofadr[j];
    GS stretch = GS_ADDC(GS_FMA(v0[d], GS_C(h), q0[m->jnt_qposadr[j]]), -m->jnt_springref[j]);
    force[d] = GS_SUB(force[d], GS_SCALE(stretch, m->jnt_stiffness[j]));
  }
}

void GS_NAME(grit_smooth_force)(const grit_model *m, const GS *q0, const GS *v0, const GS *u, const GS *bias, double h,
                                GS *force) {
  GS_NAME(grit_smooth_force_passive)(m, q0, v0, bias, h, force);
  /* u: the actuators' force inputs (grit_actuator_input: clamped controls or activations) */
  GS_NAME(grit_actuator_force)(m, q0, v0, u, h, force);
}

void GS_NAME(grit_tree_mulv)(const grit_model *m, const GS *M, int t, const GS *x, GS *y) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const GS *Mt = M + m->tree_madr[t];
  int i = 0;
#if !GS_IS_DUAL
  /* in double, four rows at a time: each entry summed from zero over j in order (the same bits), the
   * four chains of additions overlapping (the solver's A dv on a 62-dof tree) */
  for (; i + 4 <= n; i += 4) {
    GS s[4] = {GS_C(0.0), GS_C(0.0), GS_C(0.0), GS_C(0.0)};
    for (int j = 0; j < n; ++j)
      for (int g = 0; g < 4; ++g) s[g] = GS_FMA(Mt[(i + g) * n + j], x[adr + j], s[g]);
    for (int g = 0; g < 4; ++g) y[adr + i + g] = s[g];
  }
#endif
  for (; i < n; ++i) {
    GS s = GS_C(0.0);
    for (int j = 0; j < n; ++j) s = GS_FMA(Mt[i * n + j], x[adr + j], s);
    y[adr + i] = s;
  }
}

void GS_NAME(grit_block_mulv)(const grit_model *m, const GS *M, const GS *x, GS *y) {
  for (int t = 0; t < m->ntree; ++t) GS_NAME(grit_tree_mulv)(m, M, t, x, y);
}

/* rows per group in grit_block_cholesky (duals: one, as before: in twos their nine doubles each spilled
 * out of the registers, +15 % instructions) */
#ifndef BLOCK_CHOL_GROUP
#define BLOCK_CHOL_GROUP (GS_IS_DUAL ? 1 : 4)
#endif
/* One tree's block L (n x n, row-major) factored in place; returns 0, or 1 when it is not positive definite.
 * Inlined with n a constant for a free body's 6 and a particle's 3 (block_cholesky_sized): the compiler
 * unrolls the loops over the block, the operations and their order stay the same (the same bits). */
static inline int GS_NAME(block_cholesky_one)(GS *L, int n) {
  for (int j = 0; j < n; ++j) {
    GS d = L[j * n + j];
    for (int k = 0; k < j; ++k) d = GS_SUB(d, GS_MUL(L[j * n + k], L[j * n + k]));
    if (!(GS_V(d) > 0.0) || !isfinite(GS_V(d))) return 1;
    d = GS_SQRT(d);
    L[j * n + j] = d;
    /* the rows below in groups: each entry's operations in the one-row order (the same bits), the
     * groups' independent chains of subtractions overlapping (a 62-dof humanoid's step spent 7 % here) */
    int i = j + 1;
    for (; i + BLOCK_CHOL_GROUP <= n; i += BLOCK_CHOL_GROUP) {
      GS s[BLOCK_CHOL_GROUP];
      for (int g = 0; g < BLOCK_CHOL_GROUP; ++g) s[g] = L[(i + g) * n + j];
      for (int k = 0; k < j; ++k) {
        const GS ljk = L[j * n + k];
        for (int g = 0; g < BLOCK_CHOL_GROUP; ++g) s[g] = GS_SUB(s[g], GS_MUL(L[(i + g) * n + k], ljk));
      }
      for (int g = 0; g < BLOCK_CHOL_GROUP; ++g) L[(i + g) * n + j] = GS_DIV(s[g], d);
    }
    for (; i < n; ++i) {
      GS s = L[i * n + j];
      for (int k = 0; k < j; ++k) s = GS_SUB(s, GS_MUL(L[i * n + k], L[j * n + k]));
      L[i * n + j] = GS_DIV(s, d);
    }
  }
  return 0;
}

/* block_cholesky_one for n = 6 with every loop unrolled (GCC kept the loop over the columns: ~600
 * instructions a free body's factor): each entry's operations in block_cholesky_one's order (the same
 * bits; the groups of rows there change no entry's order). */
static DYN_NOINLINE int GS_NAME(block_cholesky_six)(GS *L) {
  DYN_UNROLL for (int j = 0; j < 6; ++j) {
    GS d = L[j * 6 + j];
    DYN_UNROLL for (int k = 0; k < j; ++k) d = GS_SUB(d, GS_MUL(L[j * 6 + k], L[j * 6 + k]));
    if (!(GS_V(d) > 0.0) || !isfinite(GS_V(d))) return 1;
    d = GS_SQRT(d);
    L[j * 6 + j] = d;
    DYN_UNROLL for (int i = j + 1; i < 6; ++i) {
      GS s = L[i * 6 + j];
      DYN_UNROLL for (int k = 0; k < j; ++k) s = GS_SUB(s, GS_MUL(L[i * 6 + k], L[j * 6 + k]));
      L[i * 6 + j] = GS_DIV(s, d);
    }
  }
  return 0;
}

int GS_NAME(grit_block_cholesky_sized)(const grit_model *m, GS *A, const char *tree_mask, int fixed) {
  for (int t = 0; t < m->ntree; ++t) {
    if (tree_mask && !tree_mask[t]) continue;
    const int n = m->tree_dofnum[t];
    GS *L = A + m->tree_madr[t];
    const int bad = fixed && n == 6   ? GS_NAME(block_cholesky_six)(L)
                    : fixed && n == 3 ? GS_NAME(block_cholesky_one)(L, 3)
                                      : GS_NAME(block_cholesky_one)(L, n);
    if (bad) return t;
  }
  return -1;
}

int GS_NAME(grit_block_cholesky)(const grit_model *m, GS *A, const char *tree_mask) {
  return GS_NAME(grit_block_cholesky_sized)(m, A, tree_mask, 1);
}

/* Tree t's substitutions, inlined into both callers (the step's solve loops over every tree); with n a
 * constant for 6 and 3 dofs (fixed), as the factor's. */
static inline void GS_NAME(block_cholesky_subst)(const GS *Lt, GS *xt, int n) {
  for (int i = 0; i < n; ++i) { /* L y = b */
    GS s = xt[i];
    for (int k = 0; k < i; ++k) s = GS_SUB(s, GS_MUL(Lt[i * n + k], xt[k]));
    xt[i] = GS_DIV(s, Lt[i * n + i]);
  }
  for (int i = n - 1; i >= 0; --i) { /* L^T x = y */
    GS s = xt[i];
    for (int k = i + 1; k < n; ++k) s = GS_SUB(s, GS_MUL(Lt[k * n + i], xt[k]));
    xt[i] = GS_DIV(s, Lt[i * n + i]);
  }
}

/* block_cholesky_subst for n = 6 with its loops unrolled (the same operations in the same order). */
static inline void GS_NAME(block_cholesky_subst_six)(const GS *Lt, GS *xt) {
  DYN_UNROLL for (int i = 0; i < 6; ++i) {
    GS s = xt[i];
    DYN_UNROLL for (int k = 0; k < i; ++k) s = GS_SUB(s, GS_MUL(Lt[i * 6 + k], xt[k]));
    xt[i] = GS_DIV(s, Lt[i * 6 + i]);
  }
  DYN_UNROLL for (int i = 5; i >= 0; --i) {
    GS s = xt[i];
    DYN_UNROLL for (int k = i + 1; k < 6; ++k) s = GS_SUB(s, GS_MUL(Lt[k * 6 + i], xt[k]));
    xt[i] = GS_DIV(s, Lt[i * 6 + i]);
  }
}

static inline void GS_NAME(block_cholesky_solve_one)(const grit_model *m, const GS *L, int t, GS *x, int fixed) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const GS *Lt = L + m->tree_madr[t];
  if (fixed && n == 6) GS_NAME(block_cholesky_subst_six)(Lt, x + adr);
  else if (fixed && n == 3) GS_NAME(block_cholesky_subst)(Lt, x + adr, 3);
  else GS_NAME(block_cholesky_subst)(Lt, x + adr, n);
}

void GS_NAME(grit_block_cholesky_solve_tree)(const grit_model *m, const GS *L, int t, GS *x) {
  GS_NAME(block_cholesky_solve_one)(m, L, t, x, 1);
}

void GS_NAME(grit_block_cholesky_solve_sized)(const grit_model *m, const GS *L, GS *x, int fixed) {
  for (int t = 0; t < m->ntree; ++t) GS_NAME(block_cholesky_solve_one)(m, L, t, x, fixed);
}

void GS_NAME(grit_block_cholesky_solve)(const grit_model *m, const GS *L, GS *x) {
  GS_NAME(grit_block_cholesky_solve_sized)(m, L, x, 1);
}
