/* dynamics_generic.h — the composite rigid body algorithm, recursive Newton-Euler, and the terms of
 * the implicit step, written once for any scalar type. Included by dynamics.c once per scalar.
 * All spatial quantities are in world coordinates, referred to the world origin, so that composite
 * inertias simply add and no frame transforms appear in the recursions (docs/theory.md). */

void GS_NAME(grit_crba)(const grit_model *m, const GS_NAME(grit_kin) * k, GS_NAME(grit_sinertia) * crb, GS *M) {
  for (int b = 0; b < m->nbody; ++b) crb[b] = k->cinert[b];
  for (int b = m->nbody - 1; b > 0; --b) /* children have larger indices than their parents */
    if (m->body_parent[b] > 0) GS_NAME(grit_si_add)(&crb[m->body_parent[b]], &crb[m->body_parent[b]], &crb[b]);
  for (int t = 0; t < m->ntree; ++t)
    if (!k->tree_mask || k->tree_mask[t])
      for (int i = 0; i < m->tree_dofnum[t] * m->tree_dofnum[t]; ++i) M[m->tree_madr[t] + i] = GS_C(0.0);
  for (int i = 0; i < m->nv; ++i) {
    const int t = m->dof_tree[i], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    if (k->tree_mask && !k->tree_mask[t]) continue;
    GS *Mt = M + m->tree_madr[t];
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

void GS_NAME(grit_rne_bias)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *v, GS *acc, GS *frc,
                            GS *bias) {
  /* Gravity enters as an upward acceleration of the world (the usual RNEA device). */
  GS_NAME(grit_sv_zero)(acc);
  for (int i = 0; i < 3; ++i) acc[3 + i] = GS_C(-m->opt.gravity[i]);
  for (int b = 1; b < m->nbody; ++b) {
    GS *a = acc + 6 * b, *f = frc + 6 * b, mom[6], t[6];
    if (!GS_NAME(kin_body_on)(m, k, b)) continue;
    for (int i = 0; i < 6; ++i) a[i] = acc[6 * m->body_parent[b] + i];
    for (int d = m->body_dofadr[b]; d >= 0 && d < m->body_dofadr[b] + m->body_dofnum[b]; ++d)
      for (int r = 0; r < 6; ++r) a[r] = GS_FMA(k->cdof_dot[6 * d + r], v[d], a[r]);
    /* f = I a + v x* (I v) */
    GS_NAME(grit_si_apply)(f, &k->cinert[b], a);
    GS_NAME(grit_si_apply)(mom, &k->cinert[b], k->cvel + 6 * b);
    GS_NAME(grit_sv_cross_force)(t, k->cvel + 6 * b, mom);
    GS_NAME(grit_sv_add)(f, f, t);
  }
  for (int b = m->nbody - 1; b > 0; --b)
    if (m->body_parent[b] > 0 && GS_NAME(kin_body_on)(m, k, b))
      GS_NAME(grit_sv_add)(frc + 6 * m->body_parent[b], frc + 6 * m->body_parent[b], frc + 6 * b);
  for (int d = 0; d < m->nv; ++d)
    if (!k->tree_mask || k->tree_mask[m->dof_tree[d]]) bias[d] = GS_NAME(grit_sv_dot)(k->cdof + 6 * d, frc + 6 * m->dof_body[d]);
}

void GS_NAME(grit_implicit_operator)(const grit_model *m, const GS *M, double h, GS *A) {
  if (A != M)
    for (int i = 0; i < m->nM; ++i) A[i] = M[i];
  for (int i = 0; i < m->nv; ++i) {
    const int t = m->dof_tree[i], adr = m->tree_dofadr[t], n = m->tree_dofnum[t], j = m->dof_jnt[i];
    const double kj = (m->jnt_type[j] == GRIT_JOINT_HINGE || m->jnt_type[j] == GRIT_JOINT_SLIDE) ? m->jnt_stiffness[j] : 0.0;
    GS *aii = A + m->tree_madr[t] + (i - adr) * n + (i - adr);
    *aii = GS_ADDC(*aii, h * m->dof_damping[i] + h * h * kj);
  }
}

void GS_NAME(grit_smooth_force)(const grit_model *m, const GS *q0, const GS *v0, const GS *u, const GS *bias, double h,
                                GS *force) {
  for (int i = 0; i < m->nv; ++i) force[i] = GS_SUB(GS_NEG(bias[i]), GS_SCALE(v0[i], m->dof_damping[i]));
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_stiffness[j] == 0.0) continue; /* springs only on hinge/slide (checked at build) */
    const int d = m->jnt_dofadr[j];
    GS stretch = GS_ADDC(GS_FMA(v0[d], GS_C(h), q0[m->jnt_qposadr[j]]), -m->jnt_springref[j]);
    force[d] = GS_SUB(force[d], GS_SCALE(stretch, m->jnt_stiffness[j]));
  }
  for (int a = 0; a < m->nu; ++a) {
    GS ua = u[a];
    if (m->act_limited[a])
      ua = GS_FMIN(GS_FMAX(ua, GS_C(m->act_range[2 * a])), GS_C(m->act_range[2 * a + 1]));
    force[m->act_dof[a]] = GS_FMA(ua, GS_C(m->act_gear[a]), force[m->act_dof[a]]);
  }
}

void GS_NAME(grit_block_mulv)(const grit_model *m, const GS *M, const GS *x, GS *y) {
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const GS *Mt = M + m->tree_madr[t];
    for (int i = 0; i < n; ++i) {
      GS s = GS_C(0.0);
      for (int j = 0; j < n; ++j) s = GS_FMA(Mt[i * n + j], x[adr + j], s);
      y[adr + i] = s;
    }
  }
}

int GS_NAME(grit_block_cholesky)(const grit_model *m, GS *A, const char *tree_mask) {
  for (int t = 0; t < m->ntree; ++t) {
    if (tree_mask && !tree_mask[t]) continue;
    const int n = m->tree_dofnum[t];
    GS *L = A + m->tree_madr[t];
    for (int j = 0; j < n; ++j) {
      GS d = L[j * n + j];
      for (int k = 0; k < j; ++k) d = GS_SUB(d, GS_MUL(L[j * n + k], L[j * n + k]));
      if (!(GS_V(d) > 0.0) || !isfinite(GS_V(d))) return t;
      d = GS_SQRT(d);
      L[j * n + j] = d;
      for (int i = j + 1; i < n; ++i) {
        GS s = L[i * n + j];
        for (int k = 0; k < j; ++k) s = GS_SUB(s, GS_MUL(L[i * n + k], L[j * n + k]));
        L[i * n + j] = GS_DIV(s, d);
      }
    }
  }
  return -1;
}

void GS_NAME(grit_block_cholesky_solve)(const grit_model *m, const GS *L, GS *x) {
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const GS *Lt = L + m->tree_madr[t];
    GS *xt = x + adr;
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
}
