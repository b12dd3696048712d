/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_ellipsoid_generic.h — MuJoCo 2.2.2's ellipsoid fluid model for one geometry, written once for
 * any scalar type and included by fluid_generic.h (static: one copy per scalar).
 *
 * In the geometry's frame, with w its angular velocity and v the velocity of its centre relative to the
 * wind, its ellipsoid of semi-axes s (volume V) feels (rho density, mu viscosity; constants of
 * grit_fluid_geom_compile):
 *   added mass (the velocity terms only: MuJoCo 2.2.2 leaves out the acceleration terms, so the force
 *   is explicit at the step's start)  force p x w, torque p x v + L x w, with p = rho m_a v, L = rho I_a w
 *   Magnus lift  C_M rho V (w x v)
 *   Kutta lift   C_K rho cos(a) A_p ((n x v) x v), n = (s1^2 s2^2 v0, s2^2 s0^2 v1, s0^2 s1^2 v2), A_p the
 *                ellipsoid's area projected along v and cos(a) the cosine between v and n
 *   drag         -(mu 3 pi D + rho |v| (C_b A_p + C_s (A_max - A_p))) v, D = 2 (s0 + s1 + s2) / 3,
 *                A_max = pi s_max s_mid
 *   angular drag -(mu pi D^3 + rho |m|) w, m_i = w_i (C_a I_i + C_s (I_max - I_i)),
 *                I_i = 8/15 pi s_i max(s_j, s_k)^4, I_max = 8/15 pi s_mid s_max^4
 * The wrench acts at the geometry's centre. Norms and square roots of a zero argument are taken as 0 with
 * zero partials (the terms they scale vanish there). */

/* sqrt(x) for x >= 0, with 0 (and zero partials) at x = 0 where the derivative is infinite. */
static GS GS_NAME(fluid_sqrt0)(GS x) { return GS_V(x) > 0.0 ? GS_SQRT(x) : GS_C(0.0); }

/* The lift and drag of the fluid model's viscous part into the local force lf and torque lt. */
static void GS_NAME(fluid_viscous)(const grit_model *m, const double *f, const GS lw[3], const GS lv[3], GS lf[3],
                                   GS lt[3]) {
  const double rho = m->opt.density, mu = m->opt.viscosity, pi = 3.14159265358979323846, *s = f + 12;
  const double smax = fmax(s[0], fmax(s[1], s[2])), smin = fmin(s[0], fmin(s[1], s[2]));
  const double smid = s[0] + s[1] + s[2] - smax - smin, vol = 4.0 / 3.0 * pi * s[0] * s[1] * s[2];
  const double a2[3] = {s[1] * s[1] * s[2] * s[2], s[2] * s[2] * s[0] * s[0], s[0] * s[0] * s[1] * s[1]};
  GS num = GS_C(0.0), den = GS_C(0.0), nrm[3], vv[3], circ[3], kutta[3], magnus[3], mom[3];
  for (int i = 0; i < 3; ++i) {
    vv[i] = GS_MUL(lv[i], lv[i]);
    num = GS_ADD(num, GS_SCALE(vv[i], a2[i]));
    den = GS_ADD(den, GS_SCALE(vv[i], a2[i] * a2[i]));
    nrm[i] = GS_SCALE(lv[i], a2[i]);
  }
  const GS speed = GS_NAME(fluid_sqrt0)(GS_ADD(GS_ADD(vv[0], vv[1]), vv[2]));
  const GS area = GS_SCALE(GS_NAME(fluid_sqrt0)(GS_DIV(den, GS_FMAX(num, GS_C(GRIT_FLUID_FLOOR)))), pi);
  const GS cosa = GS_DIV(num, GS_FMAX(GS_MUL(speed, den), GS_C(GRIT_FLUID_FLOOR)));
  GS_NAME(grit_v3_cross)(circ, nrm, lv);
  GS_NAME(grit_v3_scale)(circ, circ, GS_SCALE(GS_MUL(cosa, area), f[4] * rho));
  GS_NAME(grit_v3_cross)(kutta, circ, lv);
  GS_NAME(grit_v3_cross)(magnus, lw, lv);
  const double D = 2.0 / 3.0 * (s[0] + s[1] + s[2]), imax = f[15]; /* the moments: grit_fluid_geom_compile */
  for (int i = 0; i < 3; ++i) {
    const double ii = f[16 + i];
    mom[i] = GS_SCALE(lw[i], f[3] * ii + f[2] * (imax - ii));
  }
  const GS mnorm = GS_NAME(fluid_sqrt0)(GS_NAME(grit_v3_dot)(mom, mom));
  const GS drag = GS_ADDC(GS_SCALE(GS_MUL(speed, GS_ADDC(GS_SCALE(area, f[1] - f[2]), f[2] * pi * smax * smid)), rho),
                          mu * 3.0 * pi * D);
  const GS adrag = GS_ADDC(GS_SCALE(mnorm, rho), mu * pi * D * D * D);
  for (int i = 0; i < 3; ++i) {
    lt[i] = GS_SUB(lt[i], GS_MUL(adrag, lw[i]));
    lf[i] = GS_ADD(lf[i], GS_SUB(GS_ADD(GS_SCALE(magnus[i], f[5] * rho * vol), kutta[i]), GS_MUL(drag, lv[i])));
  }
}

/* The model in the geometry's frame: from its angular velocity lw and its centre's velocity relative to
 * the wind lv, the local force lf and torque lt (added mass, then lift and drag, scaled by f[0]). Apart
 * from the frame so that the partials (fluid_ellipsoid_dual.c) may take the frame in doubles. */
static void GS_NAME(fluid_ellipsoid_local)(const grit_model *m, const double *f, const GS lw[3], const GS lv[3],
                                           GS lf[3], GS lt[3]) {
  const double rho = m->opt.density;
  GS pl[3], pa[3], t2[3];
  for (int i = 0; i < 3; ++i) { /* the added mass's momenta */
    pl[i] = GS_SCALE(lv[i], rho * f[6 + i]);
    pa[i] = GS_SCALE(lw[i], rho * f[9 + i]);
  }
  GS_NAME(grit_v3_cross)(lf, pl, lw);
  GS_NAME(grit_v3_cross)(lt, pl, lv);
  GS_NAME(grit_v3_cross)(t2, pa, lw);
  GS_NAME(grit_v3_add)(lt, lt, t2);
  GS_NAME(fluid_viscous)(m, f, lw, lv, lf, lt);
  GS_NAME(grit_v3_scale)(lf, lf, GS_C(f[0]));
  GS_NAME(grit_v3_scale)(lt, lt, GS_C(f[0]));
}

#ifndef GRIT_FLUID_LOCAL_ONLY
/* Adds the fluid's wrench on geometry g (about the world origin, negated: bias is what the step subtracts)
 * to w (6: torque, force) of its body, whose frame is (xpos, xmat) and twist tw. */
static void GS_NAME(fluid_ellipsoid_geom)(const grit_model *m, const GS *xpos, const GS *xmat, const GS *tw, int g,
                                          GS w[6]) {
  const double *f = m->geom_fluid + GRIT_FLUID_NGEOM * g;
  GS R[9], p[3], vp[3], rel[3], lw[3], lv[3], lf[3], lt[3], F[3], T[3], n[3];
  GS_NAME(grit_m3_mul_c)(R, xmat, m->geom_mat + 9 * g); /* the geometry's frame in the world */
  GS_NAME(grit_tf_apply_c)(p, xpos, xmat, m->geom_pos + 3 * g);
  GS_NAME(grit_v3_cross)(vp, tw, p); /* the twist is referred to the world origin: v_p = v_o + w x p */
  for (int i = 0; i < 3; ++i) rel[i] = GS_ADDC(GS_ADD(tw[3 + i], vp[i]), -m->opt.wind[i]);
  GS_NAME(grit_m3_tmulv)(lw, R, tw);
  GS_NAME(grit_m3_tmulv)(lv, R, rel);
  GS_NAME(fluid_ellipsoid_local)(m, f, lw, lv, lf, lt);
  GS_NAME(grit_m3_mulv)(F, R, lf);
  GS_NAME(grit_m3_mulv)(T, R, lt);
  GS_NAME(grit_v3_cross)(n, p, F); /* the force's moment about the world origin */
  for (int i = 0; i < 3; ++i) {
    w[i] = GS_SUB(w[i], GS_ADD(T[i], n[i]));
    w[3 + i] = GS_SUB(w[3 + i], F[i]);
  }
}
#endif
