/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_muscle_generic.h — MuJoCo 2.2.2's muscle curves and the slider-crank transmission, written once
 * for any scalar type; included by actuation_muscle.c once per scalar (double, grit_dual). The branches
 * of the piecewise curves are chosen on the double values (the non-smooth convention of docs/theory.md:
 * the derivative of the branch taken). docs/actuation.md. */

#define MUSCLE_MINVAL 1e-15 /* MuJoCo's mjMINVAL: the floor of every divisor below */

/* The peak force F0 of muscle a from its parameters (force < 0: scale / acc0, as MuJoCo). */
static double GS_NAME(muscle_peak)(const grit_model *m, int a, const double *p) {
  return p[2] < 0.0 ? p[3] / fmax(MUSCLE_MINVAL, m->act_acc0[a]) : p[2];
}

/* The optimal length L0 (length range over the normalized range) and the normalized length L. */
static GS GS_NAME(muscle_norm_length)(const grit_model *m, int a, const double *p, GS len, double *L0) {
  const double *lr = m->act_lengthrange + 2 * a;
  *L0 = (lr[1] - lr[0]) / fmax(MUSCLE_MINVAL, p[1] - p[0]);
  return GS_ADDC(GS_SCALE(GS_ADDC(len, -lr[0]), 1.0 / fmax(MUSCLE_MINVAL, *L0)), p[0]);
}

GS GS_NAME(grit_muscle_gain)(const grit_model *m, int a, GS len, GS vel) {
  const double *p = m->act_mgain + 9 * a;
  const double F0 = GS_NAME(muscle_peak)(m, a, p), lmin = p[4], lmax = p[5], fvmax = p[8];
  const double lo = 0.5 * (lmin + 1.0), hi = 0.5 * (1.0 + lmax);
  double L0;
  const GS L = GS_NAME(muscle_norm_length)(m, a, p, len, &L0);
  const GS V = GS_SCALE(vel, 1.0 / fmax(MUSCLE_MINVAL, L0 * p[6]));
  const double l = GS_V(L), v = GS_V(V);
  /* force-length: two half-parabolas up to the plateau at L = 1 and two down to lmax. As in 2.2.2, only
   * the first branch tests L >= lmin: below lmin the rising branch's mirror (negative) is taken. */
  GS FL = GS_C(0.0), x;
  if (l >= lmin && l <= lo) {
    x = GS_SCALE(GS_ADDC(L, -lmin), 1.0 / fmax(MUSCLE_MINVAL, lo - lmin));
    FL = GS_SCALE(GS_MUL(x, x), 0.5);
  } else if (l <= 1.0) {
    x = GS_SCALE(GS_SUB(GS_C(1.0), L), 1.0 / fmax(MUSCLE_MINVAL, 1.0 - lo));
    FL = GS_SUB(GS_C(1.0), GS_SCALE(GS_MUL(x, x), 0.5));
  } else if (l <= hi) {
    x = GS_SCALE(GS_ADDC(L, -1.0), 1.0 / fmax(MUSCLE_MINVAL, hi - 1.0));
    FL = GS_SUB(GS_C(1.0), GS_SCALE(GS_MUL(x, x), 0.5));
  } else if (l <= lmax) {
    x = GS_SCALE(GS_SUB(GS_C(lmax), L), 1.0 / fmax(MUSCLE_MINVAL, lmax - hi));
    FL = GS_SCALE(GS_MUL(x, x), 0.5);
  }
  /* force-velocity: zero below -1, a parabola to 1 at V = 0, one rising to fvmax at V = fvmax - 1 */
  const double y = fvmax - 1.0;
  GS FV;
  if (v <= -1.0) {
    FV = GS_C(0.0);
  } else if (v <= 0.0) {
    const GS s = GS_ADDC(V, 1.0);
    FV = GS_MUL(s, s);
  } else if (v <= y) {
    const GS s = GS_SUB(GS_C(y), V);
    FV = GS_SUB(GS_C(fvmax), GS_SCALE(GS_MUL(s, s), 1.0 / fmax(MUSCLE_MINVAL, y)));
  } else {
    FV = GS_C(fvmax);
  }
  return GS_SCALE(GS_MUL(FL, FV), -F0);
}

GS GS_NAME(grit_muscle_bias)(const grit_model *m, int a, GS len) {
  const double *p = m->act_mbias + 9 * a;
  const double F0 = GS_NAME(muscle_peak)(m, a, p), hi = 0.5 * (1.0 + p[5]), c = -F0 * p[7];
  double L0;
  const GS L = GS_NAME(muscle_norm_length)(m, a, p, len, &L0);
  const double l = GS_V(L), s = 1.0 / fmax(MUSCLE_MINVAL, hi - 1.0);
  if (l <= 1.0) return GS_C(0.0);
  if (l <= hi) { /* a half-parabola from the optimal length, then its tangent line */
    const GS x = GS_SCALE(GS_ADDC(L, -1.0), s);
    return GS_SCALE(GS_MUL(x, x), 0.5 * c);
  }
  return GS_SCALE(GS_ADDC(GS_SCALE(GS_ADDC(L, -hi), s), 0.5), c);
}

GS GS_NAME(grit_muscle_rate)(const grit_model *m, int a, GS u, GS act) {
  const double *p = m->act_dynprm + 3 * a;
  const GS uc = GS_FMIN(GS_FMAX(u, GS_C(0.0)), GS_C(1.0)), ac = GS_FMIN(GS_FMAX(act, GS_C(0.0)), GS_C(1.0));
  /* the time constant grows with activation when activating and shrinks when deactivating (Millard et
   * al. 2013, as MuJoCo 2.2.2: a hard switch on the sign of u - act) */
  const GS s = GS_ADDC(GS_SCALE(ac, 1.5), 0.5);
  GS tau = GS_V(uc) > GS_V(act) ? GS_SCALE(s, p[0]) : GS_DIV(GS_C(p[1]), s);
  if (!(GS_V(tau) > MUSCLE_MINVAL)) tau = GS_C(MUSCLE_MINVAL);
  return GS_DIV(GS_SUB(uc, act), tau);
}

/* J += sum over the dofs moving body b of (sign dl . v_dof(p) + dr . w_dof) (v_dof(p): the point p's
 * velocity, w_dof: the angular velocity of a unit dof velocity; dr may be NULL). */
static void GS_NAME(crank_chain)(const grit_model *m, const GS_NAME(grit_kin) * k, int b, const GS p[3], const GS dl[3],
                                 const GS *dr, double sign, GS *J) {
  for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
    GS lin[3];
    const GS *cd = k->cdof + 6 * dof;
    GS_NAME(grit_sv_point_velocity)(lin, cd, p);
    J[dof] = GS_FMA(GS_C(sign), GS_NAME(grit_v3_dot)(dl, lin), J[dof]);
    if (dr) J[dof] = GS_ADD(J[dof], GS_NAME(grit_v3_dot)(dr, cd)); /* the axis turns: not signed */
  }
}

/* MuJoCo's slider-crank: with v the vector from the slider site to the crank site and a the slider's unit
 * axis, the rod of length r from the crank pin meets the axis at the distance a.v - sqrt(det) from the
 * crank's projection, det = (a.v)^2 + r^2 - v.v; the length is that, or a.v where det <= 0 (a rod too
 * short to reach the axis). J from dL/dv (through both sites' motion) and dL/da (a turns with the slider
 * site's body: da = w x a, so dL/da . (w x a) = (a x dL/da) . w). */
static GS GS_NAME(slider_crank)(const grit_model *m, const GS_NAME(grit_kin) * k, int a, GS *J) {
  const int sc = m->act_crank[2 * a], ss = m->act_crank[2 * a + 1];
  const int bc = m->site_body[sc], bs = m->site_body[ss];
  const double *prm = m->act_crankprm + 4 * a, r = prm[0];
  GS pc[3], ps[3], ax[3], v[3];
  GS_NAME(grit_tf_apply_c)(pc, k->xpos + 3 * bc, k->xmat + 9 * bc, m->site_pos + 3 * sc);
  GS_NAME(grit_tf_apply_c)(ps, k->xpos + 3 * bs, k->xmat + 9 * bs, m->site_pos + 3 * ss);
  const GS *R = k->xmat + 9 * bs;
  for (int i = 0; i < 3; ++i)
    ax[i] = GS_FMA(R[3 * i], GS_C(prm[1]), GS_FMA(R[3 * i + 1], GS_C(prm[2]), GS_MUL(R[3 * i + 2], GS_C(prm[3]))));
  GS_NAME(grit_v3_sub)(v, pc, ps);
  const GS av = GS_NAME(grit_v3_dot)(v, ax);
  const GS det = GS_ADDC(GS_SUB(GS_MUL(av, av), GS_NAME(grit_v3_dot)(v, v)), r * r);
  GS L, dldv[3], dlda[3];
  if (GS_V(det) <= 0.0) {
    L = av;
    for (int i = 0; i < 3; ++i) dldv[i] = ax[i], dlda[i] = v[i];
  } else {
    const GS sd = GS_SQRT(det), c = GS_SUB(GS_C(1.0), GS_DIV(av, sd));
    L = GS_SUB(av, sd);
    for (int i = 0; i < 3; ++i) {
      dldv[i] = GS_ADD(GS_MUL(ax[i], c), GS_DIV(v[i], sd));
      dlda[i] = GS_MUL(v[i], c);
    }
  }
  if (J) {
    GS rot[3];
    GS_NAME(grit_v3_cross)(rot, ax, dlda);
    GS_NAME(crank_chain)(m, k, bc, pc, dldv, NULL, 1.0, J);
    GS_NAME(crank_chain)(m, k, bs, ps, dldv, rot, -1.0, J);
  }
  return L;
}

#if GS_IS_DUAL && defined(__GNUC__) && GRIT_DUAL_N % 4 == 0 && !defined(GRIT_SITE_CHAIN_LANES_)
#define GRIT_SITE_CHAIN_LANES_
/* crank_chain of a site (sign 1, dr = tq) on duals, written out: the same IEEE operations in the same order
 * as grit/dual.h's (mul: a.d b.v + a.v b.d, sub, add, fma: (a.d b.v + a.v b.d) + c.d; the fma by the
 * constant 1: (0 x.v + 1 x.d) + J.d), the values as doubles and the partials four lanes a vector (native
 * under AVX2, two SSE2 halves in the baseline): the same bits. The dual code passed each of its ~20 duals
 * a dof by value through the stack (a site actuator's moment: ~17 % of a one-body scene's A,B). */
typedef double grit_site_l4_ __attribute__((vector_size(32)));
typedef double grit_site_l4u_ __attribute__((vector_size(32), aligned(8), may_alias));
#define SL4(x) (*(const grit_site_l4u_ *)(x))
#define SP4(x) ((grit_site_l4_){(x), (x), (x), (x)})
static void site_chain_lanes(const grit_model *m, const grit_dual *cdof, int b, const grit_dual p[3],
                             const grit_dual f[3], const grit_dual tq[3], grit_dual *J) {
  for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
    const grit_dual *a = cdof + 6 * dof, *c = a + 3;
    grit_dual *o = J + dof;
    /* values: lin = a x p + c (grit_v3_cross, grit_sv_point_velocity), d1 = f . lin, d2 = tq . a */
    const double t0 = a[1].v * p[2].v - a[2].v * p[1].v, t1 = a[2].v * p[0].v - a[0].v * p[2].v,
                 t2 = a[0].v * p[1].v - a[1].v * p[0].v;
    const double l0 = t0 + c[0].v, l1 = t1 + c[1].v, l2 = t2 + c[2].v;
    const double s2 = f[2].v * l2, s1 = f[1].v * l1 + s2, d1 = f[0].v * l0 + s1;
    const double r2 = tq[2].v * a[2].v, r1 = tq[1].v * a[1].v + r2, d2 = tq[0].v * a[0].v + r1;
    const double jv = 1.0 * d1 + o->v;
    for (int l = 0; l < GRIT_DUAL_N; l += 4) {
      const grit_site_l4_ a0 = SL4(a[0].d + l), a1 = SL4(a[1].d + l), a2 = SL4(a[2].d + l);
      const grit_site_l4_ p0 = SL4(p[0].d + l), p1 = SL4(p[1].d + l), p2 = SL4(p[2].d + l);
      const grit_site_l4_ u0 = (a1 * SP4(p[2].v) + SP4(a[1].v) * p2) - (a2 * SP4(p[1].v) + SP4(a[2].v) * p1);
      const grit_site_l4_ u1 = (a2 * SP4(p[0].v) + SP4(a[2].v) * p0) - (a0 * SP4(p[2].v) + SP4(a[0].v) * p2);
      const grit_site_l4_ u2 = (a0 * SP4(p[1].v) + SP4(a[0].v) * p1) - (a1 * SP4(p[0].v) + SP4(a[1].v) * p0);
      const grit_site_l4_ m0 = u0 + SL4(c[0].d + l), m1 = u1 + SL4(c[1].d + l), m2 = u2 + SL4(c[2].d + l);
      const grit_site_l4_ e2 = SL4(f[2].d + l) * SP4(l2) + SP4(f[2].v) * m2;
      const grit_site_l4_ e1 = SL4(f[1].d + l) * SP4(l1) + SP4(f[1].v) * m1 + e2;
      const grit_site_l4_ e0 = SL4(f[0].d + l) * SP4(l0) + SP4(f[0].v) * m0 + e1;
      const grit_site_l4_ q2 = SL4(tq[2].d + l) * SP4(a[2].v) + SP4(tq[2].v) * a2;
      const grit_site_l4_ q1 = SL4(tq[1].d + l) * SP4(a[1].v) + SP4(tq[1].v) * a1 + q2;
      const grit_site_l4_ q0 = SL4(tq[0].d + l) * SP4(a[0].v) + SP4(tq[0].v) * a0 + q1;
      const grit_site_l4_ j = SP4(0.0) * SP4(d1) + SP4(1.0) * e0 + SL4(o->d + l);
      *(grit_site_l4u_ *)(o->d + l) = j + q0;
    }
    o->v = jv + d2;
  }
}
/* The site's point p = xpos + R x (grit_tf_apply_c: scale, add), its force f = R g[0..2] and torque
 * tq = R g[3..5] (fma and mul by constants: partials a.d c + a.v 0, the constant's +0 partials kept in
 * the sum as grit/dual.h has them), written out as above: the same bits. */
static void site_frame_lanes(const grit_dual *xp, const grit_dual *R, const double *x, const double *g, grit_dual p[3],
                             grit_dual f[3], grit_dual tq[3]) {
  for (int i = 0; i < 3; ++i) {
    const grit_dual *r0 = R + 3 * i, *r1 = r0 + 1, *r2 = r0 + 2;
    p[i].v = (r0->v * x[0] + (r1->v * x[1] + r2->v * x[2])) + xp[i].v;
    f[i].v = r0->v * g[0] + (r1->v * g[1] + r2->v * g[2]);
    tq[i].v = r0->v * g[3] + (r1->v * g[4] + r2->v * g[5]);
    const grit_site_l4_ z0 = SP4(r0->v) * SP4(0.0), z1 = SP4(r1->v) * SP4(0.0), z2 = SP4(r2->v) * SP4(0.0);
    for (int l = 0; l < GRIT_DUAL_N; l += 4) {
      const grit_site_l4_ d0 = SL4(r0->d + l), d1 = SL4(r1->d + l), d2 = SL4(r2->d + l);
      *(grit_site_l4u_ *)(p[i].d + l) = (SP4(x[0]) * d0 + (SP4(x[1]) * d1 + SP4(x[2]) * d2)) + SL4(xp[i].d + l);
      *(grit_site_l4u_ *)(f[i].d + l) = d0 * SP4(g[0]) + z0 + (d1 * SP4(g[1]) + z1 + (d2 * SP4(g[2]) + z2));
      *(grit_site_l4u_ *)(tq[i].d + l) = d0 * SP4(g[3]) + z0 + (d1 * SP4(g[4]) + z1 + (d2 * SP4(g[5]) + z2));
    }
  }
}
#undef SL4
#undef SP4
#endif

/* MuJoCo 2.2.2's site transmission without a reference site: length 0 (it has none to measure from), and
 * J the generalized force of the wrench (force f = R site_gear[0..2] at the site, torque R site_gear[3..5],
 * R the site's body's rotation): J_dof = f . v_dof(p) + tau . w_dof. */
static GS GS_NAME(site_moment)(const grit_model *m, const GS_NAME(grit_kin) * k, int a, GS *J) {
  if (!J) return GS_C(0.0);
  const int s = m->act_site[a], b = m->site_body[s];
  const double *g = m->act_sitegear + 6 * a;
  const GS *R = k->xmat + 9 * b;
  GS p[3], f[3], tq[3];
#if GS_IS_DUAL && defined(__GNUC__) && GRIT_DUAL_N % 4 == 0
  site_frame_lanes(k->xpos + 3 * b, R, m->site_pos + 3 * s, g, p, f, tq);
  site_chain_lanes(m, k->cdof, b, p, f, tq, J);
#else
  GS_NAME(grit_tf_apply_c)(p, k->xpos + 3 * b, R, m->site_pos + 3 * s);
  for (int i = 0; i < 3; ++i) {
    f[i] = GS_FMA(R[3 * i], GS_C(g[0]), GS_FMA(R[3 * i + 1], GS_C(g[1]), GS_MUL(R[3 * i + 2], GS_C(g[2]))));
    tq[i] = GS_FMA(R[3 * i], GS_C(g[3]), GS_FMA(R[3 * i + 1], GS_C(g[4]), GS_MUL(R[3 * i + 2], GS_C(g[5]))));
  }
  GS_NAME(crank_chain)(m, k, b, p, f, tq, 1.0, J);
#endif
  return GS_C(0.0);
}

GS GS_NAME(grit_actuator_length_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int a, GS *J,
                                          GS *scratch) {
  if (m->act_trntype[a] == GRIT_TRN_TENDON) return GS_NAME(grit_tendon_length_jacobian)(m, k, q, m->act_tendon[a], J, scratch);
  if (J)
    for (int i = 0; i < m->nv; ++i) J[i] = GS_C(0.0);
  if (m->act_trntype[a] == GRIT_TRN_SITE) return GS_NAME(site_moment)(m, k, a, J);
  return GS_NAME(slider_crank)(m, k, a, J);
}

#undef MUSCLE_MINVAL
