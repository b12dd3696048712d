/* SPDX-License-Identifier: Apache-2.0 */
/* test_contact_model.c — the convex contact potentials (Lagged, Similar, SAP): impulses are minus the
 * gradient of the cost and Hessians minus the Jacobian of the impulse (checked with dual numbers, which
 * differentiate the cost code itself), every Hessian is PSD, costs and impulses are continuous across
 * the model's region boundaries, and the closed forms of seed 000 hold. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "contact_model.h"

/* Test-local PRNG (xorshift64*), deterministic. */
static double uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  unsigned long long r = *s * 2685821657736338717ULL;
  return lo + (hi - lo) * (double)(r >> 11) / 9007199254740992.0;
}

typedef double (*model_fn)(const grit_contact_params *, double, const double *, double *, double *);
typedef grit_dual (*model_fn_dual)(const grit_contact_params_dual *, double, const grit_dual *, grit_dual *,
                                   grit_dual *);

static const double DT = 1e-3;

static grit_contact_params random_params(unsigned long long *s, int sap) {
  grit_contact_params p;
  memset(&p, 0, sizeof p); /* the exact model: no gradient smoothing (smooth, soft, visc, grip 0) */
  p.phi0 = uniform(s, -2e-3, 1e-3);
  p.k = pow(10.0, uniform(s, 3.0, 7.0));
  p.d = uniform(s, 0.0, 50.0);
  p.mu = uniform(s, 0.1, 1.5);
  p.gn0 = uniform(s, 0.0, 1e-2);
  double tau_d = uniform(s, 0.0, 0.05);
  p.tau_d = tau_d;
  p.eps = sap ? pow(10.0, uniform(s, -4.0, 0.0)) : pow(10.0, uniform(s, -4.0, -2.0));
  p.Rn = 1.0 / (DT * p.k * (DT + tau_d));
  p.vhat = -p.phi0 / (DT + tau_d);
  return p;
}

static grit_contact_params_dual to_dual(const grit_contact_params *p) {
  grit_contact_params_dual q;
  memset(&q, 0, sizeof q);
  q.phi0 = grit_dual_const(p->phi0);
  q.k = grit_dual_const(p->k);
  q.d = grit_dual_const(p->d);
  q.mu = grit_dual_const(p->mu);
  q.tau_d = grit_dual_const(p->tau_d);
  q.gn0 = grit_dual_const(p->gn0);
  q.eps = grit_dual_const(p->eps);
  q.Rn = grit_dual_const(p->Rn);
  q.vhat = grit_dual_const(p->vhat);
  return q;
}

/* A velocity away from the kinks: |v_n - v_hat| (and, for Similar, |z - v_hat|) not tiny. */
static void random_velocity(unsigned long long *s, const grit_contact_params *p, double vc[3]) {
  double scale = fabs(p->phi0) / DT + 0.05;
  for (int i = 0; i < 3; ++i) vc[i] = uniform(s, -scale, scale);
}

/* All principal minors of a symmetric 3x3 matrix are >= -tol (Sylvester's criterion for PSD). */
static void assert_psd(const double G[9], const char *what) {
  double scale = 0.0;
  for (int i = 0; i < 9; ++i) scale = fmax(scale, fabs(G[i]));
  const double tol = 1e-12 * scale;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) cr_assert(fabs(G[3 * i + j] - G[3 * j + i]) <= tol, "%s: G not symmetric", what);
  for (int i = 0; i < 3; ++i) cr_assert(G[4 * i] >= -tol, "%s: G[%d][%d] = %g < 0", what, i, i, G[4 * i]);
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j) {
      double m2 = G[4 * i] * G[4 * j] - G[3 * i + j] * G[3 * j + i];
      cr_assert(m2 >= -tol * scale, "%s: 2x2 minor (%d,%d) = %g < 0", what, i, j, m2);
    }
  double det = G[0] * (G[4] * G[8] - G[5] * G[7]) - G[1] * (G[3] * G[8] - G[5] * G[6]) +
               G[2] * (G[3] * G[7] - G[4] * G[6]);
  cr_assert(det >= -tol * scale * scale, "%s: det G = %g < 0", what, det);
}

/* gamma = -dl/dv_c and G = -dgamma/dv_c, with the velocity seeded in dual directions 0..2.
 * The dual pass evaluates the same code exactly to first order, so agreement is to round-off:
 * 1e-9 relative to the largest entry leaves room for the ~1e-13 cancellation in N+ (phi0 ~ dt v). */
static void check_gradients(model_fn f, model_fn_dual fd, const char *name, int sap) {
  unsigned long long s = 0x9E3779B97F4A7C15ULL ^ (unsigned long long)name[0];
  int active = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    grit_contact_params p = random_params(&s, sap);
    grit_contact_params_dual pd = to_dual(&p);
    double vc[3], g[3], G[9];
    random_velocity(&s, &p, vc);
    double l = f(&p, DT, vc, g, G);
    grit_dual vd[3], gd[3], Gd[9];
    for (int i = 0; i < 3; ++i) vd[i] = grit_dual_var(vc[i], i);
    grit_dual ld = fd(&pd, DT, vd, gd, Gd);
    cr_assert(fabs(ld.v - l) <= 1e-14 * fmax(1.0, fabs(l)), "%s: dual and double costs differ", name);
    double gs = 1e-300, Gs = 1e-300;
    for (int i = 0; i < 3; ++i) gs = fmax(gs, fabs(g[i]));
    for (int i = 0; i < 9; ++i) Gs = fmax(Gs, fabs(G[i]));
    if (gs > 1e-200) active++;
    for (int i = 0; i < 3; ++i) {
      cr_assert(fabs(-ld.d[i] - g[i]) <= 1e-9 * gs, "%s trial %d: gamma[%d] = %.17g but -dl/dv = %.17g", name, trial,
                i, g[i], -ld.d[i]);
      for (int j = 0; j < 3; ++j)
        cr_assert(fabs(-gd[i].d[j] - G[3 * i + j]) <= 1e-9 * Gs, "%s trial %d: G[%d][%d] = %.17g but -dgamma = %.17g",
                  name, trial, i, j, G[3 * i + j], -gd[i].d[j]);
    }
    assert_psd(G, name);
  }
  cr_assert(active > 500, "%s: too few trials had an active contact (%d)", name, active);
}

Test(contact_model, lagged_gradient_and_hessian) {
  check_gradients(grit_contact_lagged, grit_contact_lagged_dual, "lagged", 0);
}
Test(contact_model, similar_gradient_and_hessian) {
  check_gradients(grit_contact_similar, grit_contact_similar_dual, "similar", 0);
}
Test(contact_model, sap_gradient_and_hessian) { check_gradients(grit_contact_sap, grit_contact_sap_dual, "sap", 1); }

/* The normal law's convexity conditions (eq. 8): the impulse never increases with v_n, so
 * d2l/dv_n2 >= 0, also across the breaking velocity v_hat where n reaches zero continuously. */
Test(contact_model, normal_impulse_is_monotone_and_continuous) {
  grit_contact_params p = {.phi0 = -1e-4, .k = 1e5, .d = 20, .mu = 0.5, .gn0 = 0, .eps = 1e-4};
  const double vhat = fmin(-p.phi0 / DT, 1.0 / p.d); /* 0.05 */
  double prev = INFINITY, g[3], G[9];
  for (int i = 0; i <= 4000; ++i) {
    double vc[3] = {0, 0, -0.2 + 0.3 * i / 4000.0};
    grit_contact_lagged(&p, DT, vc, g, G);
    cr_assert(g[2] <= prev + 1e-15, "normal impulse increased at v_n = %g", vc[2]);
    cr_assert(g[2] >= 0.0);
    prev = g[2];
  }
  double below[3] = {0, 0, vhat - 1e-9}, above[3] = {0, 0, vhat + 1e-9}, gb[3], ga[3];
  double lb = grit_contact_lagged(&p, DT, below, gb, G), la = grit_contact_lagged(&p, DT, above, ga, G);
  /* n is O(dt k (dt + d...) * 1e-9) ~ 1e-9 away from zero just below v_hat; l continuous to O(1e-18). */
  cr_assert(fabs(gb[2]) < 1e-8 && ga[2] == 0.0, "impulse not continuous at v_hat: %g vs %g", gb[2], ga[2]);
  cr_assert(fabs(lb - la) < 1e-15, "cost not continuous at v_hat");
}

/* Lagged friction tends to Coulomb's law with the lagged normal impulse: |gamma_t| -> mu gamma_n0 when
 * slipping much faster than eps, opposing the slip; and it is viscous below eps. */
Test(contact_model, lagged_friction_limits) {
  grit_contact_params p = {.phi0 = -1e-4, .k = 1e5, .d = 0, .mu = 0.7, .gn0 = 2e-3, .eps = 1e-4};
  double vc[3] = {0.3, -0.4, 0.0}, g[3], G[9];
  grit_contact_lagged(&p, DT, vc, g, G);
  double gt = hypot(g[0], g[1]);
  /* |gamma_t| = mu gn0 |v| / sqrt(|v|^2 + eps^2) = mu gn0 (1 - 2e-8) at |v| = 0.5 */
  cr_assert(fabs(gt - p.mu * p.gn0) < 1e-7 * p.mu * p.gn0, "|gamma_t| = %g, mu gamma_n0 = %g", gt, p.mu * p.gn0);
  cr_assert(g[0] * vc[0] + g[1] * vc[1] < 0, "friction does not oppose slip");
  /* viscous regime: gamma_t ~ -mu gn0 v / eps */
  double slow[3] = {1e-8, 0, 0};
  grit_contact_lagged(&p, DT, slow, g, G);
  cr_assert(fabs(g[0] + p.mu * p.gn0 * 1e-8 / p.eps) < 1e-6 * p.mu * p.gn0 * 1e-8 / p.eps);
}

/* SAP's stiction region is a Kelvin-Voigt spring-damper: gamma_n = dt k (-phi0 - (dt + tau_d) v_n). */
Test(contact_model, sap_stiction_is_kelvin_voigt) {
  const double k = 1e6, tau_d = 0.01, phi0 = -1e-3;
  grit_contact_params p = {.phi0 = phi0, .k = k, .mu = 1.0, .eps = 1e-2};
  p.Rn = 1.0 / (DT * k * (DT + tau_d));
  p.vhat = -phi0 / (DT + tau_d);
  double vc[3] = {0, 0, -0.01}, g[3], G[9];
  grit_contact_sap(&p, DT, vc, g, G);
  double expect = DT * k * (-phi0 - (DT + tau_d) * vc[2]);
  cr_assert(fabs(g[2] - expect) < 1e-12 * expect, "gamma_n = %.17g, Kelvin-Voigt %.17g", g[2], expect);
  cr_assert(fabs(G[8] - 1.0 / p.Rn) < 1e-12 / p.Rn);
}

/* The SAP impulse is continuous across its three regions (a projection is continuous) and lies in
 * the friction cone. Walk v_t from stiction through sliding, and v_n from contact to separation. */
Test(contact_model, sap_continuous_across_regions_and_in_cone) {
  grit_contact_params p = {.phi0 = -1e-3, .k = 1e5, .mu = 0.5, .eps = 1e-3};
  p.Rn = 1.0 / (DT * p.k * (DT + 0.0));
  p.vhat = -p.phi0 / DT;
  double prev[3] = {0}, G[9];
  for (int i = 0; i <= 20000; ++i) {
    double vc[3] = {-2.0 + 4.0 * i / 20000.0, 0.1, p.vhat * (1.5 - 3.0 * i / 20000.0)}, g[3];
    grit_contact_sap(&p, DT, vc, g, G);
    cr_assert(hypot(g[0], g[1]) <= p.mu * g[2] * (1 + 1e-12) + 1e-300, "impulse outside the friction cone");
    if (i > 0)
      for (int j = 0; j < 3; ++j) /* steps of 2e-4 in v: the impulse moves by at most |G| dv */
        cr_assert(fabs(g[j] - prev[j]) <= 2e-4 * 3.0 * fmax(1.0 / p.eps, 1.0 / p.Rn) + 1e-15,
                  "jump in gamma[%d] at step %d", j, i);
    for (int j = 0; j < 3; ++j) prev[j] = g[j];
  }
}

/* Similar glides: with v_n = 0 and slip v_t it still produces a normal impulse as if approaching at
 * mu |v_t|_s, the artifact the paper quantifies (section VII-A); Lagged does not. */
Test(contact_model, similar_couples_slip_into_normal_and_lagged_does_not) {
  grit_contact_params p = {.phi0 = 0.0, .k = 1e5, .d = 0, .mu = 0.5, .gn0 = 1e-3, .eps = 1e-4};
  double vc[3] = {1.0, 0.0, 0.0}, g[3], G[9];
  grit_contact_similar(&p, DT, vc, g, G);
  double z = -p.mu * (sqrt(1.0 + p.eps * p.eps) - p.eps);
  double expect = DT * p.k * (-p.phi0 - DT * z); /* n(z), d = 0 */
  cr_assert(fabs(g[2] - expect) < 1e-12 * expect, "similar: gamma_n = %g, n(z) = %g", g[2], expect);
  grit_contact_lagged(&p, DT, vc, g, G);
  cr_assert(g[2] == 0.0, "lagged: normal impulse %g at phi0 = 0, v_n = 0", g[2]);
}
