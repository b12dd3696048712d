/* SPDX-License-Identifier: Apache-2.0 */
/* contact_model_generic.h — the convex contact potentials of seed 000 (Lagged, Similar, SAP), written
 * once for any scalar type; included by contact_model.c once per scalar (double, grit_dual).
 *
 * Each model maps the contact velocity v_c = (v_t1, v_t2, v_n) in the contact frame (normal last,
 * v_n > 0 separating) to its cost l(v_c), its impulse gamma = -dl/dv_c and its Hessian
 * G = d2l/dv_c2 = -dgamma/dv_c (3x3, symmetric positive semi-definite). See docs/contact.md. */

/* ------------------------------------------------------------------ Hunt & Crossley normal law */

/* The breaking velocity v_hat = min(-phi0/dt, 1/d) above which the normal impulse vanishes (eq. 23). */
static inline GS GS_NAME(hc_vhat)(const GS_NAME(grit_contact_params) * p, double dt) {
  GS v = GS_SCALE(GS_NEG(p->phi0), 1.0 / dt);
  if (GS_V(p->d) > 0.0) v = GS_FMIN(v, GS_DIV(GS_C(1.0), p->d));
  return v;
}

/* ------------------------------------------------- gradient smoothing: a support's soft normal law */

/* Under gradient smoothing a pair with a static body (a support) takes the normal law with
 *     s(x) = x (x >= delta),   (x + delta)^2 / (4 delta) (|x| < delta),   0 (x <= -delta)
 * of the penetration shifted by delta, s(x - delta), in place of x+ (docs/contact.md, "Gradient
 * smoothing"): C1, convex, increasing, no force at a gap, softer within 2 delta of penetration, so that
 * a resting object's height responds to a load below its weight. The functions below take the shifted
 * phi0 + delta as p->phi0 and delta as p->smooth. s(x) and ds/dx. */
static inline GS GS_NAME(smooth_pen)(GS x, GS delta, GS *ds) {
  if (GS_V(x) >= GS_V(delta)) {
    *ds = GS_C(1.0);
    return x;
  }
  if (GS_V(x) <= -GS_V(delta)) {
    *ds = GS_C(0.0);
    return GS_C(0.0);
  }
  GS a = GS_ADD(x, delta), inv = GS_DIV(GS_C(0.25), delta);
  *ds = GS_SCALE(GS_MUL(a, inv), 2.0);
  return GS_MUL(GS_MUL(a, a), inv);
}

/* The exact law's antiderivative N+(v) = dt k [ -v (phi0 + dt v / 2) + d v^2 / 2 (phi0 + 2 dt v / 3) ]. */
static inline GS GS_NAME(hc_antiderivative)(const GS_NAME(grit_contact_params) * p, double dt, GS v) {
  GS t1 = GS_MUL(GS_NEG(v), GS_ADD(p->phi0, GS_SCALE(v, 0.5 * dt)));
  GS t2 = GS_MUL(GS_SCALE(GS_MUL(p->d, GS_MUL(v, v)), 0.5), GS_ADD(p->phi0, GS_SCALE(v, 2.0 * dt / 3.0)));
  return GS_MUL(GS_SCALE(p->k, dt), GS_ADD(t1, t2));
}

/* The smoothed law's part where |x| < delta: with w = v2 - v, v2 = (delta - phi0) / dt (x = -delta),
 * x + delta = dt w and n = dt k dt^2 w^2 / (4 delta) ((1 - d v2) + d w), whose antiderivative in v is
 * -dt k dt^2 / (4 delta) [ (1 - d v2) w^3 / 3 + d w^4 / 4 ]. */
static inline GS GS_NAME(hc_smooth_antiderivative)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS v2) {
  GS w = GS_SUB(v2, v), w2 = GS_MUL(w, w);
  GS c = GS_SUB(GS_C(1.0), GS_MUL(p->d, v2));
  GS br = GS_ADD(GS_SCALE(GS_MUL(c, GS_MUL(w2, w)), 1.0 / 3.0), GS_SCALE(GS_MUL(p->d, GS_MUL(w2, w2)), 0.25));
  GS f = GS_DIV(GS_SCALE(p->k, dt * dt * dt * 0.25), p->smooth);
  return GS_NEG(GS_MUL(f, br));
}

/* The smoothed normal impulse n(v) = dt k s(-phi0 - dt v) (1 - d v) for v < v_hat = min(v2, 1/d), its
 * antiderivative N(v) = F(min(v, v_hat)) (F: N+ up to v1 = (-phi0 - delta) / dt, where x = delta, then
 * continued by the smooth part) and n'(v) = dt k [ -dt s'(x) (1 - d v) - d s(x) ] <= 0. */
static inline void GS_NAME(hc_normal_smooth)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS *N, GS *n,
                                             GS *dn) {
  const double idt = 1.0 / dt;
  GS v1 = GS_SCALE(GS_NEG(GS_ADD(p->phi0, p->smooth)), idt), v2 = GS_SCALE(GS_SUB(p->smooth, p->phi0), idt);
  GS vhat = v2;
  if (GS_V(p->d) > 0.0) vhat = GS_FMIN(vhat, GS_DIV(GS_C(1.0), p->d));
  GS vm = GS_FMIN(v, vhat);
  if (GS_V(vm) <= GS_V(v1))
    *N = GS_NAME(hc_antiderivative)(p, dt, vm);
  else
    *N = GS_ADD(GS_NAME(hc_antiderivative)(p, dt, v1), GS_SUB(GS_NAME(hc_smooth_antiderivative)(p, dt, vm, v2),
                                                            GS_NAME(hc_smooth_antiderivative)(p, dt, v1, v2)));
  if (GS_V(v) < GS_V(vhat)) {
    GS ds, sx = GS_NAME(smooth_pen)(GS_SUB(GS_NEG(p->phi0), GS_SCALE(v, dt)), p->smooth, &ds);
    GS b = GS_SUB(GS_C(1.0), GS_MUL(p->d, v));
    GS kdt = GS_SCALE(p->k, dt);
    *n = GS_MUL(kdt, GS_MUL(sx, b));
    *dn = GS_NEG(GS_MUL(kdt, GS_ADD(GS_SCALE(GS_MUL(ds, b), dt), GS_MUL(p->d, sx))));
  } else {
    *n = GS_C(0.0);
    *dn = GS_C(0.0);
  }
}

#include "contact_barrier_generic.h"

static inline void GS_NAME(hc_normal_exact)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS *N, GS *n,
                                            GS *dn);

/* Normal impulse n(v) = dt k (-phi0 - dt v)(1 - d v) for v < v_hat, else 0 (eqs. 7, 22), its
 * antiderivative N(v) = N+(min(v, v_hat)) and the derivative n'(v); for a support under gradient
 * smoothing (p->soft > 0) the soft law above; for a pair of moving bodies under the force at a distance
 * (p->soft = p->smooth > 0) the exact law plus that force (contact_barrier_generic.h). */
static inline void GS_NAME(hc_normal)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS *N, GS *n,
                                      GS *dn) {
  if (GS_V(p->soft) > 0.0 && GS_V(p->smooth) > 0.0) { /* the force at a distance */
    GS Nb, nb, dnb;
    GS_NAME(hc_normal_exact)(p, dt, v, N, n, dn);
    GS_NAME(barrier_normal)(p, dt, v, &Nb, &nb, &dnb);
    *N = GS_ADD(*N, Nb);
    *n = GS_ADD(*n, nb);
    *dn = GS_ADD(*dn, dnb);
    return;
  }
  if (GS_V(p->soft) > 0.0) { /* a support under gradient smoothing: the soft law above */
    GS_NAME(grit_contact_params) q = *p;
    q.phi0 = GS_ADD(p->phi0, p->soft);
    q.smooth = p->soft;
    GS_NAME(hc_normal_smooth)(&q, dt, v, N, n, dn);
    return;
  }
  GS_NAME(hc_normal_exact)(p, dt, v, N, n, dn);
}

/* The exact law (hc_normal without smoothing). */
static inline void GS_NAME(hc_normal_exact)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS *N, GS *n,
                                            GS *dn) {
  GS vhat = GS_NAME(hc_vhat)(p, dt);
  GS vm = GS_FMIN(v, vhat);
  GS a = GS_SUB(GS_NEG(p->phi0), GS_SCALE(vm, dt)); /* -phi0 - dt v >= 0 */
  GS b = GS_SUB(GS_C(1.0), GS_MUL(p->d, vm));         /* 1 - d v >= 0 */
  GS kdt = GS_SCALE(p->k, dt);
  /* N+(v) = dt k [ -v (phi0 + dt v / 2) + d v^2 / 2 (phi0 + 2 dt v / 3) ] */
  GS t1 = GS_MUL(GS_NEG(vm), GS_ADD(p->phi0, GS_SCALE(vm, 0.5 * dt)));
  GS t2 = GS_MUL(GS_SCALE(GS_MUL(p->d, GS_MUL(vm, vm)), 0.5), GS_ADD(p->phi0, GS_SCALE(vm, 2.0 * dt / 3.0)));
  *N = GS_MUL(kdt, GS_ADD(t1, t2));
  if (GS_V(v) < GS_V(vhat)) {
    *n = GS_MUL(kdt, GS_MUL(a, b));
    /* n' = dt k [ -dt (1 - d v) - d (-phi0 - dt v) ] <= 0 */
    *dn = GS_NEG(GS_MUL(kdt, GS_ADD(GS_SCALE(b, dt), GS_MUL(p->d, a))));
  } else {
    *n = GS_C(0.0);
    *dn = GS_C(0.0);
  }
}

/* The lagged normal impulse gamma_n0 = dt f_n(phi0, v_n0) = dt k (-phi0)+ (1 - d v_n0)+ (Lagged). */
GS GS_NAME(grit_contact_lagged_normal_impulse)(const GS_NAME(grit_contact_params) * p, double dt, GS vn0) {
  GS ds, a = GS_V(p->soft) > 0.0 && !(GS_V(p->smooth) > 0.0) ? GS_NAME(smooth_pen)(GS_SUB(GS_NEG(p->phi0), p->soft), p->soft, &ds)
                                 : GS_FMAX(GS_NEG(p->phi0), GS_C(0.0));
  GS b = GS_FMAX(GS_SUB(GS_C(1.0), GS_MUL(p->d, vn0)), GS_C(0.0));
  return GS_MUL(GS_SCALE(p->k, dt), GS_MUL(a, b));
}

/* ------------------------------------------------------------------------------- soft norm */

/* The soft norm ||x||_s = sqrt(||x||^2 + eps^2) - eps of the tangential velocity x (2-vector), its
 * gradient t_s = x / sqrt(||x||^2 + eps^2), and the Hessian (I - t_s t_s^T) / sqrt(||x||^2 + eps^2)
 * (Appendix A). Smooth and convex everywhere, also at x = 0. */
static inline GS GS_NAME(soft_norm)(const GS x[2], GS eps, GS ts[2], GS H[4]) {
  GS s = GS_SQRT(GS_ADD(GS_FMA(x[0], x[0], GS_MUL(x[1], x[1])), GS_MUL(eps, eps)));
  GS inv = GS_DIV(GS_C(1.0), s);
  ts[0] = GS_MUL(x[0], inv);
  ts[1] = GS_MUL(x[1], inv);
  H[0] = GS_MUL(GS_SUB(GS_C(1.0), GS_MUL(ts[0], ts[0])), inv);
  H[1] = GS_MUL(GS_NEG(GS_MUL(ts[0], ts[1])), inv);
  H[2] = H[1];
  H[3] = GS_MUL(GS_SUB(GS_C(1.0), GS_MUL(ts[1], ts[1])), inv);
  return GS_SUB(s, eps);
}

static inline void GS_NAME(zero9)(GS G[9]) {
  for (int i = 0; i < 9; ++i) G[i] = GS_C(0.0);
}

/* ------------------------------------------------------------------------- gradient smoothing */

/* Gradient smoothing's parameters of a Lagged or Similar pair (docs/contact.md, "Gradient smoothing"),
 * from its Delassus estimate w (the pair's effective mass m_eff = 1 / w):
 *  - between moving bodies (p->smooth = delta > 0), the film: the normal viscosity
 *    visc = m_eff (1 - (phi0 / delta)^2)^2 within |phi0| < delta (C1, 1 at contact), and the grip
 *    grip = m_eff sigma(-phi0) / dt, sigma(x) = s(x) - s(x - 2 delta) (0 at a gap of delta, C1,
 *    increasing, delta / 4 at contact, 2 delta from 3 delta of penetration): the impulse that moves
 *    m_eff by sigma in one step, a force scale of the pair's inertia, not of its stiffness;
 *  - against a static body (p->soft = delta > 0), the soft normal law's stiffness
 *    k_s = min(k, 4 pi^2 m_eff / dt^2), the stiffest spring the step resolves (a period of one step:
 *    SAP's near-rigid bound), with gamma_n0 (already computed with k) scaled alike. */
void GS_NAME(grit_contact_smoothing_params)(GS_NAME(grit_contact_params) * p, GS w, double dt) {
  p->visc = p->grip = p->bar = GS_C(0.0);
  if (!(GS_V(w) > 0.0)) return;
  if (GS_V(p->soft) > 0.0) { /* k_s = 4 pi^2 m_eff / dt^2 (SAP's near-rigid bound), if softer than k */
    GS ks = GS_DIV(GS_C(4.0 * 3.14159265358979323846 * 3.14159265358979323846 / (dt * dt)), w);
    if (GS_V(ks) < GS_V(p->k)) {
      p->gn0 = GS_DIV(GS_MUL(p->gn0, ks), p->k); /* gamma_n0 is proportional to k */
      p->k = ks;
    }
  }
  if (!(GS_V(p->smooth) > 0.0)) return;
  GS ds, x = GS_NEG(p->phi0), x2 = GS_SUB(x, GS_SCALE(p->smooth, 2.0));
  GS sig = GS_SUB(GS_NAME(smooth_pen)(x, p->smooth, &ds), GS_NAME(smooth_pen)(x2, p->smooth, &ds)); /* sigma(x) */
  p->grip = GS_DIV(GS_SCALE(sig, 1.0 / dt), w);
  const GS u = GS_DIV(p->phi0, p->smooth);
  if (GS_V(u) > -1.0 && GS_V(u) < 1.0) {
    const GS a = GS_SUB(GS_C(1.0), GS_MUL(u, u));
    p->visc = GS_DIV(GS_MUL(a, a), w);
  }
}

/* The film of gradient smoothing, added to a Lagged or Similar pair's potential when p->grip > 0 (set
 * by grit_contact_smoothing_params):  l_f = visc v_n^2 / 2 + mu grip ||v_t||_s,  a viscous coupling of
 * the normal velocities and a friction that needs no normal force. Convex: both terms are. Lagged's
 * grip is folded into its gamma_n0 (so that Newton's isotropic friction Hessian covers it, solver.c):
 * with_grip 0 adds the viscosity only. */
static inline GS GS_NAME(film_add)(const GS_NAME(grit_contact_params) * p, const GS vc[3], int with_grip, GS gamma[3],
                                   GS G[9]) {
  GS l = GS_SCALE(GS_MUL(p->visc, GS_MUL(vc[2], vc[2])), 0.5);
  gamma[2] = GS_SUB(gamma[2], GS_MUL(p->visc, vc[2]));
  G[8] = GS_ADD(G[8], p->visc);
  if (!with_grip) return l;
  GS ts[2], H[4];
  GS sn = GS_NAME(soft_norm)(vc, p->eps, ts, H);
  GS mg = GS_MUL(p->mu, p->grip);
  gamma[0] = GS_SUB(gamma[0], GS_MUL(mg, ts[0]));
  gamma[1] = GS_SUB(gamma[1], GS_MUL(mg, ts[1]));
  G[0] = GS_FMA(mg, H[0], G[0]);
  G[1] = GS_FMA(mg, H[1], G[1]);
  G[3] = GS_FMA(mg, H[2], G[3]);
  G[4] = GS_FMA(mg, H[3], G[4]);
  return GS_FMA(mg, sn, l);
}

/* ----------------------------------------------------------------------------------- Lagged */

/* l = -N(v_n) + mu gamma_n0 ||v_t||_s, with eps = p->eps (the stiction tolerance, possibly
 * regularized by eq. 26 by the caller) and gamma_n0 = p->gn0. Separable: G is block diagonal. */
GS GS_NAME(grit_contact_lagged)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                                GS G[9]) {
  GS N, n, dn, ts[2], H[4];
  GS_NAME(hc_normal)(p, dt, vc[2], &N, &n, &dn);
  GS mg = GS_MUL(p->mu, p->gn0);
  GS sn = GS_NAME(soft_norm)(vc, p->eps, ts, H);
  gamma[0] = GS_NEG(GS_MUL(mg, ts[0]));
  gamma[1] = GS_NEG(GS_MUL(mg, ts[1]));
  gamma[2] = n;
  GS_NAME(zero9)(G);
  G[0] = GS_MUL(mg, H[0]);
  G[1] = GS_MUL(mg, H[1]);
  G[3] = GS_MUL(mg, H[2]);
  G[4] = GS_MUL(mg, H[3]);
  G[8] = GS_NEG(dn);
  GS l = GS_FMA(mg, sn, GS_NEG(N));
  if (GS_V(p->grip) > 0.0) l = GS_ADD(l, GS_NAME(film_add)(p, vc, 0, gamma, G));
  return l;
}

GS GS_NAME(grit_contact_lagged_frictionless)(const GS_NAME(grit_contact_params) * p, double dt, GS vn, GS *gamma_n,
                                             GS *G_nn) {
  GS N, dn;
  GS_NAME(hc_normal)(p, dt, vn, &N, gamma_n, &dn);
  *G_nn = GS_NEG(dn);
  return GS_NEG(N);
}

/* ---------------------------------------------------------------------------------- Similar */

/* l = -N(z) with z = v_n - mu ||v_t||_s (eq. 21): gamma = n(z) (-mu t_s; 1) and
 * G = -n'(z) grad z grad z^T + mu n(z) [H_s 0; 0 0], both terms PSD since n' <= 0 <= n. */
GS GS_NAME(grit_contact_similar)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                                 GS G[9]) {
  GS ts[2], H[4], N, n, dn;
  GS sn = GS_NAME(soft_norm)(vc, p->eps, ts, H);
  GS z = GS_SUB(vc[2], GS_MUL(p->mu, sn));
  GS_NAME(hc_normal)(p, dt, z, &N, &n, &dn);
  GS gz[3] = {GS_NEG(GS_MUL(p->mu, ts[0])), GS_NEG(GS_MUL(p->mu, ts[1])), GS_C(1.0)}; /* grad z */
  for (int i = 0; i < 3; ++i) gamma[i] = GS_MUL(n, gz[i]);
  GS mn = GS_MUL(p->mu, n);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) G[3 * i + j] = GS_MUL(GS_NEG(dn), GS_MUL(gz[i], gz[j]));
  G[0] = GS_FMA(mn, H[0], G[0]);
  G[1] = GS_FMA(mn, H[1], G[1]);
  G[3] = GS_FMA(mn, H[2], G[3]);
  G[4] = GS_FMA(mn, H[3], G[4]);
  if (GS_V(p->grip) > 0.0) return GS_ADD(GS_NEG(N), GS_NAME(film_add)(p, vc, 1, gamma, G));
  return GS_NEG(N);
}

/* -------------------------------------------------------------------------------------- SAP */

/* SAP (Castro, Permenter, Han 2022): with R = diag(Rt, Rt, Rn) and the stabilization velocity
 * v_hat = (0, 0, p->vhat), gamma is the projection of y = -R^-1 (v_c - v_hat) onto the friction cone
 * ||gamma_t|| <= mu gamma_n in the norm of R, and l = 1/2 gamma^T R gamma. In the scaled variables
 * y~ = R^1/2 y the projection is Euclidean onto a cone of slope mu~ = mu sqrt(Rt/Rn), with three
 * regions: stiction (gamma = y), sliding, and no contact (gamma = 0). Rt = p->eps, Rn = p->Rn. */
GS GS_NAME(grit_contact_sap)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                             GS G[9]) {
  (void)dt;
  const GS Rt = p->eps, Rn = p->Rn;
  GS y[3] = {GS_NEG(GS_DIV(vc[0], Rt)), GS_NEG(GS_DIV(vc[1], Rt)), GS_NEG(GS_DIV(GS_SUB(vc[2], p->vhat), Rn))};
  GS yr = GS_SQRT(GS_FMA(y[0], y[0], GS_MUL(y[1], y[1])));
  GS_NAME(zero9)(G);
  if (GS_V(yr) <= GS_V(p->mu) * GS_V(y[2])) { /* stiction: inside the cone */
    for (int i = 0; i < 3; ++i) gamma[i] = y[i];
    G[0] = G[4] = GS_DIV(GS_C(1.0), Rt);
    G[8] = GS_DIV(GS_C(1.0), Rn);
  } else {
    GS mhat = GS_DIV(GS_MUL(p->mu, Rt), Rn); /* mu Rt / Rn */
    if (GS_V(y[2]) + GS_V(mhat) * GS_V(yr) <= 0.0) { /* no contact: in the polar cone */
      for (int i = 0; i < 3; ++i) gamma[i] = GS_C(0.0);
      return GS_C(0.0);
    }
    /* sliding: gamma_n = (y_n + mhat y_r) / (1 + mu mhat), gamma_t = mu gamma_n t, t = y_t / y_r */
    GS den = GS_ADDC(GS_MUL(p->mu, mhat), 1.0);
    GS gn = GS_DIV(GS_FMA(mhat, yr, y[2]), den);
    GS t[2] = {GS_DIV(y[0], yr), GS_DIV(y[1], yr)};
    gamma[0] = GS_MUL(GS_MUL(p->mu, gn), t[0]);
    gamma[1] = GS_MUL(GS_MUL(p->mu, gn), t[1]);
    gamma[2] = gn;
    /* G = R^-1/2 (dP/dy~) R^-1/2 with dP/dy~ = u u^T / (1 + mu~^2) + mu~ gn~ / yr~ [P_perp 0; 0 0],
     * u = (mu~ t; 1). Written back in unscaled variables: */
    GS sRn = GS_SQRT(Rn);
    GS u[3] = {GS_DIV(GS_MUL(p->mu, t[0]), sRn), GS_DIV(GS_MUL(p->mu, t[1]), sRn), GS_DIV(GS_C(1.0), sRn)};
    /* mu~ / sqrt(Rt) = mu / sqrt(Rn): u = R^-1/2 (mu~ t; 1) */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) G[3 * i + j] = GS_DIV(GS_MUL(u[i], u[j]), den);
    /* mu~ gn~ / yr~ = mu sqrt(Rt/Rn) sqrt(Rn) gn / (sqrt(Rt) yr) = mu gn / yr; scaled by 1/Rt */
    GS c = GS_DIV(GS_MUL(p->mu, gn), GS_MUL(yr, Rt));
    G[0] = GS_FMA(c, GS_SUB(GS_C(1.0), GS_MUL(t[0], t[0])), G[0]);
    G[1] = GS_SUB(G[1], GS_MUL(c, GS_MUL(t[0], t[1])));
    G[3] = GS_SUB(G[3], GS_MUL(c, GS_MUL(t[0], t[1])));
    G[4] = GS_FMA(c, GS_SUB(GS_C(1.0), GS_MUL(t[1], t[1])), G[4]);
  }
  /* l = 1/2 gamma^T R gamma */
  GS l = GS_MUL(Rt, GS_FMA(gamma[0], gamma[0], GS_MUL(gamma[1], gamma[1])));
  l = GS_FMA(Rn, GS_MUL(gamma[2], gamma[2]), l);
  return GS_SCALE(l, 0.5);
}

/* ------------------------------------------------------------------------------ joint limits */

/* A one-sided 1-D constraint in SAP's form (used for joint limits): gamma = max(0, -(v - v_hat) / R)
 * with R = p->Rn and v_hat = p->vhat, l = 1/2 R gamma^2, G = 1/R where gamma > 0. vc, gamma, G are
 * 1-vectors. */
GS GS_NAME(grit_limit_cost)(const GS_NAME(grit_contact_params) * p, const GS vc[1], GS gamma[1], GS G[1]) {
  GS y = GS_NEG(GS_DIV(GS_SUB(vc[0], p->vhat), p->Rn));
  if (GS_V(y) <= 0.0) {
    gamma[0] = GS_C(0.0);
    G[0] = GS_C(0.0);
    return GS_C(0.0);
  }
  gamma[0] = y;
  G[0] = GS_DIV(GS_C(1.0), p->Rn);
  return GS_SCALE(GS_MUL(p->Rn, GS_MUL(y, y)), 0.5);
}

/* ------------------------------------------------- joint friction, equalities, tendon springs */

GS GS_NAME(grit_friction_cost)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[1], GS gamma[1], GS G[1]) {
  const GS F = GS_SCALE(p->k, dt), R = p->Rn;
  const GS y = GS_NEG(GS_DIV(vc[0], R));
  if (GS_V(y) > GS_V(F) || GS_V(y) < -GS_V(F)) { /* sliding: the bound, no curvature */
    gamma[0] = GS_V(y) > 0.0 ? F : GS_NEG(F);
    G[0] = GS_C(0.0);
    return GS_SUB(GS_MUL(F, GS_FABS(vc[0])), GS_SCALE(GS_MUL(R, GS_MUL(F, F)), 0.5));
  }
  gamma[0] = y; /* stiction: a stiff regularized damper */
  G[0] = GS_DIV(GS_C(1.0), R);
  return GS_SCALE(GS_MUL(R, GS_MUL(y, y)), 0.5);
}

GS GS_NAME(grit_bilateral_gamma)(const GS_NAME(grit_contact_params) * p, double dt, int dim, const GS *vc, GS *gamma) {
  const GS iR = GS_DIV(GS_C(1.0), p->Rn), s = GS_DIV(GS_C(1.0), GS_ADDC(p->tau_d, dt));
  for (int r = 0; r < dim; ++r) gamma[r] = GS_NEG(GS_MUL(GS_FMA(p->phi[r], s, vc[r]), iR)); /* v - v_hat = v + phi / (dt + tau_d) */
  return iR;
}

GS GS_NAME(grit_bilateral_cost)(const GS_NAME(grit_contact_params) * p, double dt, int dim, const GS *vc, GS *gamma,
                                GS *G) {
  const GS iR = GS_NAME(grit_bilateral_gamma)(p, dt, dim, vc, gamma);
  GS l = GS_C(0.0);
  for (int r = 0; r < dim; ++r) {
    l = GS_FMA(gamma[r], gamma[r], l);
    for (int c = 0; c < dim; ++c) G[r * dim + c] = r == c ? iR : GS_C(0.0);
  }
  return GS_SCALE(GS_MUL(p->Rn, l), 0.5);
}

GS GS_NAME(grit_spring_cost)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[1], GS gamma[1], GS G[1]) {
  const GS g = GS_SCALE(GS_FMA(p->k, GS_C(dt), p->d), dt); /* dt (b + dt k) */
  const GS f0 = GS_SCALE(GS_MUL(p->k, p->phi0), dt);     /* dt k x0 */
  gamma[0] = GS_NEG(GS_FMA(g, vc[0], f0));
  G[0] = g;
  return GS_MUL(vc[0], GS_FMA(GS_SCALE(g, 0.5), vc[0], f0));
}
