/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_generic.h — the inertia-box fluid force of MuJoCo 2.2.2, written once for any scalar type and
 * included by fluid.c once per scalar. Each body with mass stands in for the box of its mass and principal
 * moments (grit_fluid_box). In that box's frame (the principal axes at the centre of mass) the fluid acts
 * on the body's angular velocity w and on the velocity v of its centre of mass relative to the wind:
 *   force_i  = -3 pi d mu v_i       - rho/2  b_j b_k            |v_i| v_i
 *   torque_i = -pi d^3 mu w_i       - rho/64 b_i (b_j^4 + b_k^4) |w_i| w_i
 * (i, j, k the three axes, b the box's edges, d their mean: the sphere of Stokes' law for the viscous
 * terms, the box's projected face and moment arms for the quadratic drag). The wrench acts at the centre
 * of mass. Every quantity that moves with the state (poses, twists) is a GS; the box and its axes are
 * the model's constants. A body with a geometry in the ellipsoid model (MuJoCo: any of its geometries)
 * has no box: its geometries in that model feel fluid_ellipsoid_generic.h's forces instead, the others
 * none. */

#include "fluid_ellipsoid_generic.h"

void GS_NAME(grit_fluid_bias)(const grit_model *m, const GS_NAME(grit_kin) * k, GS *frc, GS *bias) {
  if (!grit_fluid_on(m)) return;
  const double rho = m->opt.density, mu = m->opt.viscosity, pi = 3.14159265358979323846;
  for (int b = 0; b < m->nbody; ++b)
    for (int i = 0; i < 6; ++i) frc[6 * b + i] = GS_C(0.0);
  for (int b = 1; b < m->nbody; ++b) {
    /* a body welded to the world does not move and moves no dof: its wrench would reach nothing */
    if (m->body_tree[b] < 0 || !GS_NAME(kin_body_on)(m, k, b) || m->body_mass[b] < GRIT_FLUID_MIN_MASS) continue;
    if (m->body_fluid_ellipsoid[b]) continue;
    double box[3], P[9];
    grit_fluid_box(m->body_mass[b], m->body_inertia + 9 * b, m->body_iquat + 4 * b, box, P);
    const GS *X = k->xmat + 9 * b, *tw = k->cvel + 6 * b, *c = k->xipos + 3 * b;
    GS R[9]; /* the box's axes in the world */
    GS_NAME(grit_m3_mul_c)(R, X, P);
    GS vc[3], rel[3], wl[3], vl[3], tl[3], fl[3], T[3], F[3], n[3];
    GS_NAME(grit_v3_cross)(vc, tw, c); /* the twist is referred to the world origin: v_c = v_o + w x c */
    for (int i = 0; i < 3; ++i) rel[i] = GS_ADDC(GS_ADD(tw[3 + i], vc[i]), -m->opt.wind[i]);
    GS_NAME(grit_m3_tmulv)(wl, R, tw);
    GS_NAME(grit_m3_tmulv)(vl, R, rel);
    const double dm = (box[0] + box[1] + box[2]) / 3.0;
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, l = (i + 2) % 3;
      const double bj2 = box[j] * box[j], bl2 = box[l] * box[l];
      const double cf = 0.5 * rho * box[j] * box[l], ct = rho * box[i] * (bj2 * bj2 + bl2 * bl2) / 64.0;
      fl[i] = GS_NEG(GS_ADD(GS_SCALE(vl[i], 3.0 * pi * dm * mu), GS_SCALE(GS_MUL(GS_FABS(vl[i]), vl[i]), cf)));
      tl[i] = GS_NEG(GS_ADD(GS_SCALE(wl[i], pi * dm * dm * dm * mu), GS_SCALE(GS_MUL(GS_FABS(wl[i]), wl[i]), ct)));
    }
    GS_NAME(grit_m3_mulv)(T, R, tl);
    GS_NAME(grit_m3_mulv)(F, R, fl);
    GS_NAME(grit_v3_cross)(n, c, F); /* the force's moment about the world origin */
    for (int i = 0; i < 3; ++i) { /* negated: bias is what the step subtracts */
      frc[6 * b + i] = GS_NEG(GS_ADD(T[i], n[i]));
      frc[6 * b + 3 + i] = GS_NEG(F[i]);
    }
  }
  for (int g = 0; g < m->ngeom; ++g) { /* the ellipsoid model, geometry by geometry */
    const int b = m->geom_body[g];
    if (m->geom_fluid[GRIT_FLUID_NGEOM * g] == 0.0 || m->body_tree[b] < 0 || !GS_NAME(kin_body_on)(m, k, b) ||
        m->body_mass[b] < GRIT_FLUID_MIN_MASS)
      continue;
    GS_NAME(fluid_ellipsoid_geom)(m, k->xpos + 3 * b, k->xmat + 9 * b, k->cvel + 6 * b, g, frc + 6 * b);
  }
  GS_NAME(grit_wrenches_to_dofs)(m, k, frc, bias); /* dynamics.h */
}

void GS_NAME(grit_fluid_geom_wrench)(const grit_model *m, const GS *xpos, const GS *xmat, const GS *tw, int g, GS w[6]) {
  GS_NAME(fluid_ellipsoid_geom)(m, xpos, xmat, tw, g, w);
}
