/* SPDX-License-Identifier: Apache-2.0 */
/* contact_barrier_generic.h — gradient smoothing's force at a distance (docs/contact.md, "A force at a
 * distance"), written once for any scalar type; included by contact_model_generic.h.
 *
 * A pair of moving bodies within the smoothing distance delta feels, besides the exact normal law, the
 * force  f_b(x) = F beta(x / delta)  of its predicted gap x = phi0 + dt v_n, with
 *     beta(u) = 1 (u < 0),   (1 - u)^2 (0 <= u < 1),   0 (u >= 1),
 * continuous, non-increasing, C1 at u = 1 (so exactly 0, with a zero derivative, from a gap of delta on)
 * and constant in penetration (where the exact law takes over), and F = kappa m_eff delta / dt^2 (set by
 * grit_contact_barrier_params). Friction is bounded by mu times the whole normal impulse (Lagged: its
 * lagged gamma_n0 gains dt f_b(phi0); Similar: through n(z)), so a held object must be squeezed. Such a
 * pair is marked by p->soft = p->smooth = delta > 0. */

/* beta(u) and its antiderivative B(u) = integral of beta (B = 0 for u >= 1): -(1 - u)^3 / 3 on [0, 1),
 * u - 1/3 below 0. */
static inline GS GS_NAME(barrier_beta)(GS u, GS *B, GS *dbeta) {
  if (GS_V(u) >= 1.0) {
    *B = *dbeta = GS_C(0.0);
    return GS_C(0.0);
  }
  if (GS_V(u) < 0.0) {
    *B = GS_ADDC(u, -1.0 / 3.0);
    *dbeta = GS_C(0.0);
    return GS_C(1.0);
  }
  GS a = GS_SUB(GS_C(1.0), u), a2 = GS_MUL(a, a);
  *B = GS_SCALE(GS_MUL(a2, a), -1.0 / 3.0);
  *dbeta = GS_SCALE(a, -2.0);
  return a2;
}

/* The force at a distance's part of the normal impulse at v = v_n: n_b(v) = dt F beta(u),
 * u = (phi0 + dt v) / delta, its antiderivative N_b(v) = F delta B(u) and n_b'(v) = dt^2 F beta'(u) / delta
 * (<= 0: -N_b is convex). */
static inline void GS_NAME(barrier_normal)(const GS_NAME(grit_contact_params) * p, double dt, GS v, GS *N, GS *n,
                                           GS *dn) {
  GS u = GS_DIV(GS_ADD(p->phi0, GS_SCALE(v, dt)), p->smooth), B, db;
  GS beta = GS_NAME(barrier_beta)(u, &B, &db);
  *N = GS_MUL(GS_MUL(p->bar, p->smooth), B);
  *n = GS_SCALE(GS_MUL(p->bar, beta), dt);
  *dn = GS_DIV(GS_SCALE(GS_MUL(p->bar, db), dt * dt), p->smooth);
}

/* grit_contact_barrier_params (contact_model_decl_generic.h): F = kappa delta / (w dt^2), the force that
 * moves the pair's effective mass m_eff = 1 / w by kappa delta in one step; Lagged's gamma_n0 gains the
 * lagged dt F beta(phi0 / delta). */
void GS_NAME(grit_contact_barrier_params)(GS_NAME(grit_contact_params) * p, GS w, double dt, double kappa,
                                          int lagged) {
  p->visc = p->grip = p->bar = GS_C(0.0);
  p->soft = p->smooth;
  if (!(GS_V(w) > 0.0) || !(GS_V(p->smooth) > 0.0)) return;
  p->bar = GS_DIV(GS_SCALE(p->smooth, kappa / (dt * dt)), w);
  if (!lagged) return;
  GS B, db, beta = GS_NAME(barrier_beta)(GS_DIV(p->phi0, p->smooth), &B, &db);
  p->gn0 = GS_ADD(p->gn0, GS_SCALE(GS_MUL(p->bar, beta), dt));
}
