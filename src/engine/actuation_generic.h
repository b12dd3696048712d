/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_generic.h — the actuators' forces, implicit terms and activation update, written once for
 * any scalar type; included by actuation.c once per scalar (double, grit_dual). docs/actuation.md. */

/* Actuator a's force gain(l, l') w + bias(l, l'), unclamped: the one formula of MuJoCo 2.2.2's model.
 * Inlined always: on dual numbers a call passed its three duals and the result by value, through the
 * stack (the rodent's position passes: 440 instructions an actuator, most of them copies). */
static inline __attribute__((always_inline)) GS GS_NAME(actuator_raw)(const grit_model *m, int a, GS len, GS vel, GS w) {
  const double *gp = m->act_gainprm + 3 * a, *bp = m->act_biasprm + 3 * a;
  GS gain = GS_C(gp[0]), f;
  if (m->act_gaintype[a] == GRIT_GAIN_AFFINE) gain = GS_ADDC(GS_ADD(GS_SCALE(len, gp[1]), GS_SCALE(vel, gp[2])), gp[0]);
  if (m->act_gaintype[a] == GRIT_GAIN_MUSCLE) gain = GS_NAME(grit_muscle_gain)(m, a, len, vel); /* actuation_muscle.c */
  f = GS_MUL(gain, w);
  if (m->act_biastype[a] == GRIT_BIAS_AFFINE) f = GS_ADD(f, GS_ADDC(GS_ADD(GS_SCALE(len, bp[1]), GS_SCALE(vel, bp[2])), bp[0]));
  if (m->act_biastype[a] == GRIT_BIAS_MUSCLE) f = GS_ADD(f, GS_NAME(grit_muscle_bias)(m, a, len));
  return f;
}

void GS_NAME(grit_actuator_input)(const grit_model *m, const GS *ctrl, const GS *act, GS *w) {
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_actadr[a] >= 0) {
      w[a] = act[m->act_actadr[a]];
      continue;
    }
    GS u = ctrl[a];
    if (m->act_limited[a]) u = GS_FMIN(GS_FMAX(u, GS_C(m->act_range[2 * a])), GS_C(m->act_range[2 * a + 1]));
    w[a] = u;
  }
}

void GS_NAME(grit_actuator_force)(const grit_model *m, const GS *q0, const GS *v0, const GS *w, double h, GS *force) {
  GS_NAME(grit_actuator_force_some)(m, q0, v0, w, h, 0, force);
}

/* Joint actuator a's generalized force added to force[its dof]: grit_actuator_force's body. */
static inline __attribute__((always_inline)) void GS_NAME(actuator_joint_force)(const grit_model *m, int a, const GS *q0,
                                                                               const GS *v0, const GS *w, double h,
                                                                               GS *force) {
  const int d = m->act_dof[a], qa = m->jnt_qposadr[m->act_jnt[a]];
  const double g = m->act_gear[a], *bp = m->act_biasprm + 3 * a;
  const GS vel = GS_SCALE(v0[d], g);
  GS f = GS_NAME(actuator_raw)(m, a, GS_SCALE(q0[qa], g), vel, w[a]);
  if (grit_actuator_implicit(m, a, GS_V(q0[qa]), GS_V(v0[d]), GS_V(w[a]))) {
    /* the stiffness at the predicted length len + h vel: its h^2 term is in A */
    if (m->act_biastype[a] == GRIT_BIAS_AFFINE && bp[1] < 0.0) f = GS_ADD(f, GS_SCALE(vel, h * bp[1]));
  } else if (m->act_forcelimited[a]) { /* saturated (or explicit_actuation): clamped, explicit */
    f = GS_FMIN(GS_FMAX(f, GS_C(m->act_forcerange[2 * a])), GS_C(m->act_forcerange[2 * a + 1]));
  }
  force[d] = GS_FMA(f, GS_C(g), force[d]);
}

void GS_NAME(grit_actuator_force_some)(const grit_model *m, const GS *q0, const GS *v0, const GS *w, double h,
                                       int length_only, GS *force) {
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_JOINT) continue; /* grit_actuator_tendon */
    if (length_only && !grit_actuator_reads_length(m, a)) continue;
    GS_NAME(actuator_joint_force)(m, a, q0, v0, w, h, force);
  }
}

void GS_NAME(grit_actuator_force_list)(const grit_model *m, const int *list, int n, const GS *q0, const GS *v0,
                                       const GS *w, double h, GS *force) {
  for (int k = 0; k < n; ++k) GS_NAME(actuator_joint_force)(m, list[k], q0, v0, w, h, force);
}

void GS_NAME(grit_actuator_operator)(const grit_model *m, const double *q0, const double *v0, const double *w, double h,
                                     GS *A) {
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_JOINT) continue; /* grit_actuator_tendon */
    const int d = m->act_dof[a];
    if (!grit_actuator_implicit(m, a, q0[m->jnt_qposadr[m->act_jnt[a]]], v0[d], w[a])) continue;
    double kq, kv;
    grit_actuator_slopes(m, a, &kq, &kv);
    if (kq == 0.0 && kv == 0.0) continue;
    const int t = m->dof_tree[d], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    GS *add = A + m->tree_madr[t] + (d - adr) * n + (d - adr);
    *add = GS_ADDC(*add, h * kv + h * h * kq);
  }
}

void GS_NAME(grit_actuator_act_next)(const grit_model *m, const GS *ctrl, const GS *act, double h, GS *out) {
  for (int a = 0; a < m->nu; ++a) {
    const int k = m->act_actadr[a];
    if (k < 0) continue;
    GS u = ctrl[a], rate;
    if (m->act_limited[a]) u = GS_FMIN(GS_FMAX(u, GS_C(m->act_range[2 * a])), GS_C(m->act_range[2 * a + 1]));
    if (m->act_dyntype[a] == GRIT_DYN_FILTER)
      rate = GS_SCALE(GS_SUB(u, act[k]), 1.0 / m->act_dynprm[3 * a]);
    else if (m->act_dyntype[a] == GRIT_DYN_MUSCLE)
      rate = GS_NAME(grit_muscle_rate)(m, a, u, act[k]);
    else
      rate = u;
    GS x = GS_FMA(rate, GS_C(h), act[k]);
    if (m->act_actlimited[a]) x = GS_FMIN(GS_FMAX(x, GS_C(m->act_actrange[2 * a])), GS_C(m->act_actrange[2 * a + 1]));
    out[k] = x;
  }
}

/* A length-driven actuator's force before the gear: the raw force, with the implicit damping's
 * predicted stretch (a site's length stays 0: none) or, explicit, clamped to its range. */
static inline __attribute__((always_inline)) GS GS_NAME(actuator_tendon_force)(const grit_model *m, int a, GS len, GS vel, GS act, double h, int implicit) {
  const double *bp = m->act_biasprm + 3 * a;
  GS f = GS_NAME(actuator_raw)(m, a, len, vel, act);
  if (implicit) {
    if (m->act_biastype[a] == GRIT_BIAS_AFFINE && bp[1] < 0.0 && m->act_trntype[a] != GRIT_TRN_SITE)
      f = GS_ADD(f, GS_SCALE(vel, h * bp[1]));
  } else if (m->act_forcelimited[a]) {
    f = GS_FMIN(GS_FMAX(f, GS_C(m->act_forcerange[2 * a])), GS_C(m->act_forcerange[2 * a + 1]));
  }
  return f;
}

#if GS_IS_DUAL && defined(__GNUC__) && GRIT_DUAL_N % 4 == 0 && !defined(GRIT_APPLY_LANES_)
#define GRIT_APPLY_LANES_
/* The apply's two loops on duals written out: grit_dual_fma's operations (value a.v b.v + c.v, partials
 * (a.d b.v + a.v b.d) + c.d) with the partials four lanes a vector (native under AVX2, two SSE2 halves in
 * the baseline): the same bits, without the duals passed by value through the stack. */
typedef double grit_apply_l4_ __attribute__((vector_size(32)));
typedef double grit_apply_l4u_ __attribute__((vector_size(32), aligned(8), may_alias));
#define AL4(x) (*(const grit_apply_l4u_ *)(x))
#define AP4(x) ((grit_apply_l4_){(x), (x), (x), (x)})
/* *acc = fma(J_i, v_i, *acc) over the entries i (nz[k], or k). */
static inline void apply_dot_lanes(grit_dual *acc, const grit_dual *J, const grit_dual *v, const int *nz, int cnt) {
  grit_dual r = *acc;
  for (int k = 0; k < cnt; ++k) {
    const int i = nz ? nz[k] : k;
    const double jv = J[i].v, vv = v[i].v;
    for (int l = 0; l < GRIT_DUAL_N; l += 4)
      *(grit_apply_l4u_ *)(r.d + l) = AL4(J[i].d + l) * AP4(vv) + AP4(jv) * AL4(v[i].d + l) + AL4(r.d + l);
    r.v = jv * vv + r.v;
  }
  *acc = r;
}
/* f_i = fma(g, J_i, f_i) over the entries i. */
static inline void apply_axpy_lanes(grit_dual *f, grit_dual g, const grit_dual *J, const int *nz, int cnt) {
  for (int k = 0; k < cnt; ++k) {
    const int i = nz ? nz[k] : k;
    const double jv = J[i].v;
    for (int l = 0; l < GRIT_DUAL_N; l += 4)
      *(grit_apply_l4u_ *)(f[i].d + l) = AL4(g.d + l) * AP4(jv) + AP4(g.v) * AL4(J[i].d + l) + AL4(f[i].d + l);
    f[i].v = g.v * jv + f[i].v;
  }
}
#undef AL4
#undef AP4
#endif

/* With nz: only J's entries nz[0 .. nnz - 1] (increasing), the same operations in the same order but
 * for the terms of zero entries (a zero J_i, value and partials, adds an exact zero: only the sign of a
 * zero sum may differ); without: all n of the actuator's tree. */
void GS_NAME(grit_actuator_tendon_apply)(const grit_model *m, int a, GS L, const GS *Jt, const int *nz, int nnz,
                                         const GS *v0, const GS *w, double h, GS *force, GS *A) {
  const int t = m->dof_tree[m->act_dof[a]], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int cnt = nz ? nnz : n; /* entry k is nz[k], or k */
  const double g = m->act_gear[a];
  GS Ld = GS_C(0.0); /* J is zero outside the tendon's one tree (grit_actuator_compile_tendons) */
#if GS_IS_DUAL && defined(__GNUC__) && GRIT_DUAL_N % 4 == 0
  apply_dot_lanes(&Ld, Jt, v0 + adr, nz, cnt);
#else
  for (int k = 0; k < cnt; ++k) {
    const int i = nz ? nz[k] : k;
    Ld = GS_FMA(Jt[i], v0[adr + i], Ld);
  }
#endif
  const GS len = GS_SCALE(L, g), vel = GS_SCALE(Ld, g);
  const int implicit = grit_actuator_implicit_at(m, a, GS_V(len), GS_V(vel), GS_V(w[a]));
  if (force) {
    const GS gf = GS_SCALE(GS_NAME(actuator_tendon_force)(m, a, len, vel, w[a], h, implicit), g);
#if GS_IS_DUAL && defined(__GNUC__) && GRIT_DUAL_N % 4 == 0
    apply_axpy_lanes(force + adr, gf, Jt, nz, cnt);
#else
    for (int k = 0; k < cnt; ++k) {
      const int i = nz ? nz[k] : k;
      force[adr + i] = GS_FMA(gf, Jt[i], force[adr + i]);
    }
#endif
  }
  if (!A || !implicit) return;
  double kq, kv;
  grit_actuator_slopes(m, a, &kq, &kv);
  const double c = h * kv + h * h * kq;
  if (c == 0.0) return;
  GS *At = A + m->tree_madr[t];
  for (int k = 0; k < cnt; ++k) {
    const int i = nz ? nz[k] : k;
    const GS ci = GS_SCALE(Jt[i], c);
    for (int l = 0; l < cnt; ++l) {
      const int j = nz ? nz[l] : l;
      At[i * n + j] = GS_FMA(ci, Jt[j], At[i * n + j]);
    }
  }
}

void GS_NAME(grit_actuator_tendon)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q0, const GS *v0,
                                   const GS *w, double h, GS *force, GS *A, GS *scratch) {
  GS *J = scratch;
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a)) continue; /* a tendon or a slider-crank */
    const GS L = GS_NAME(grit_actuator_length_jacobian)(m, k, q0, a, J, scratch + m->nv);
    GS_NAME(grit_actuator_tendon_apply)(m, a, L, J + m->tree_dofadr[m->dof_tree[m->act_dof[a]]], NULL, 0, v0, w, h,
                                        force, A);
  }
}
