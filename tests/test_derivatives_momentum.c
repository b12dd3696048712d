/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_momentum.c — the momentum correction's partials in closed form
 * (derivatives_momentum.c): the body-frame correction's Jacobian in w against central differences
 * (both branches of the exponential map's evaluation), A and B of grit_step_derivatives against the
 * dual path it replaces (ws->no_momentum_closed) on floating trees, ball chains and a public humanoid,
 * and A's columns against central differences of the step on spinning trees in flight. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_momentum.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"
#include "fd_tangent.h"
#include "xml_load_util.h"

/* A floating torso whose centre of mass is off its origin (the root's force term), a ball-jointed head
 * off its joint, and a leg of two hinges under a ball hip (a ball body whose parent turns: P_j != 0),
 * foot on the floor. */
static const char *TREE =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' pos='0.03 -0.01 0.02' size='0.12 0.08 0.05' mass='4'/>"
    " <geom type='sphere' pos='-0.05 0.02 0' size='0.03' mass='0.3'/>"
    " <body pos='0 0 0.08'><joint type='ball' damping='0.05'/><geom type='sphere' pos='0.02 0 0.08' size='0.05' mass='0.5'/></body>"
    " <body pos='0 0.06 -0.05'><joint name='h1' type='ball' damping='0.1'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0' stiffness='2'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/>"
    "   <body pos='-0.02 0 -0.25'><joint type='ball'/><geom type='box' pos='0.03 0 -0.02' size='0.05 0.03 0.02' mass='0.3'/>"
    "   </body></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60' armature='0.02'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/></body>"
    "</body></worldbody>"
    "<actuator><motor joint='k1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

/* A hinge carrying a chain of two ball joints, spinning, its end on the floor. */
static const char *BALLS =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.6'><joint name='a' type='hinge' axis='0.2 0 1'/>"
    " <geom type='capsule' fromto='0 0 0 0.1 0 -0.2' size='0.03' mass='1'/>"
    " <body pos='0.1 0 -0.2'><joint type='ball'/><geom type='capsule' fromto='0 0 0 0 0.1 -0.2' size='0.03' mass='0.7'/>"
    "  <body pos='0 0.1 -0.2'><joint type='ball' armature='0.01'/><geom type='box' pos='0.03 0.01 -0.1' size='0.04 0.02 0.06' "
    "mass='0.5'/></body></body></body>"
    "</worldbody><actuator><motor joint='a' gear='1'/></actuator></mujoco>";

static grit_data *prepare(const char *xml, grit_model **m, grit_contact_model model, int steps, double spin) {
  return moving_data_model(xml, m, model, spin, steps); /* spinning: the correction grows with |w|^2 */
}

/* A and B with the closed form and with the dual correction (both with derivatives_rnea.c's partials).
 * The same derivative in two orders of operations: as in test_derivatives_rnea.c, 2e-12 of each
 * column's largest entry (the residual's round-off times A's condition number); measured 0 .. 4.7e-15.
 * Scaling the closed form's dW/dw by 1.001 shows 5e-9 (humanoid) .. 7e-6, its wrenches W 3e-11 .. 1.5e-6. */
static void compare(grit_model *m, grit_data *d, const char *what) {
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid && d->deriv->rn.mom.on, "%s: the closed form ran", what);
  d->deriv->no_momentum_closed = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid && !d->deriv->rn.mom.on, "%s: the dual correction ran", what);
  d->deriv->no_momentum_closed = 0;
  const double ea = col_rel_diff(A1, A2, nx, nx), eb = nu ? col_rel_diff(B1, B2, nx, nu) : 0.0;
  cr_log_info("%s: A %.3g, B %.3g (largest difference relative to its column's largest entry)", what, ea, eb);
  cr_expect(ea < 2e-12, "%s: A %.3g", what, ea);
  cr_expect(eb < 2e-12, "%s: B %.3g", what, eb);
  free(A1), free(A2), free(B1), free(B2);
}

static void same_as_dual(const char *xml, grit_contact_model model, int steps, double spin, const char *what) {
  grit_model *m;
  grit_data *d = prepare(xml, &m, model, steps, spin);
  compare(m, d, what);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_momentum, tree_lagged) { same_as_dual(TREE, GRIT_CONTACT_LAGGED, 150, 3.0, "tree lagged"); }
Test(derivatives_momentum, tree_sap) { same_as_dual(TREE, GRIT_CONTACT_SAP, 150, 3.0, "tree sap"); }
Test(derivatives_momentum, tree_in_flight) { same_as_dual(TREE, GRIT_CONTACT_SIMILAR, 5, 6.0, "tree in flight"); }
Test(derivatives_momentum, balls_sap) { same_as_dual(BALLS, GRIT_CONTACT_SAP, 150, 4.0, "balls sap"); }
Test(derivatives_momentum, balls_in_flight) { same_as_dual(BALLS, GRIT_CONTACT_LAGGED, 5, 8.0, "balls in flight"); }

/* MuJoCo's humanoid as bench_mujoco --robots loads it, after 200 steps on the floor. */
Test(derivatives_momentum, humanoid_file) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", &lo, &m, NULL, msg),
               GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int i = 0; i < 200; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_data_ncontacts(d) > 0, "the humanoid is on the floor");
  compare(m, d, "humanoid");
  grit_data_free(d);
  grit_model_free(m);
}

/* The body-frame correction's Jacobians against differences in w, at a step whose rotation h |w~| is
 * below the exponential map's series threshold (|h w~|^2 < 1e-4) and at one above it. tb = (L - Lr) / h
 * - g cancels to O(h |w|^2 |I|) from terms of size |L| / h, so a difference quotient loses
 * eps |L| / (h e) to round-off: the five-point stencil (truncation O(e^4)) at e = 1e-3 |w| balances
 * the two. Measured 5e-10 (series) and 8e-12, relative to the largest entry; a sign error in the
 * rotation's d c / d t2 term shows 3e-3 and 3e-2, in its d s / d t2 term 9e-4 and 9e-3, I^-1 scaled by
 * 1.001 in d w~ / d w 1.3e-3 and 1.4e-3. */
static double body_fd(double h, double spin) {
  const double I[9] = {0.03, 0.004, -0.002, 0.004, 0.05, 0.003, -0.002, 0.003, 0.02}, r[3] = {0.04, -0.02, 0.07};
  const double w[3] = {0.8 * spin, -0.5 * spin, 0.3 * spin}, e = 1e-3 * spin, mass = 2.5, st[4] = {-2, -1, 1, 2};
  double tb[3], Tt[9], fb[3], Tf[9], worst = 0.0, scale = 0.0;
  grit_momentum_body(I, mass, r, w, h, tb, Tt, fb, Tf);
  for (int i = 0; i < 9; ++i) scale = fmax(scale, fmax(fabs(Tt[i]), fabs(Tf[i])));
  for (int k = 0; k < 3; ++k) {
    double t[4][3], f[4][3], X[9], Y[9];
    for (int s = 0; s < 4; ++s) {
      double wp[3] = {w[0], w[1], w[2]};
      wp[k] += st[s] * e;
      grit_momentum_body(I, mass, r, wp, h, t[s], X, f[s], Y);
    }
    for (int i = 0; i < 3; ++i) {
      const double dt = (t[0][i] - 8 * t[1][i] + 8 * t[2][i] - t[3][i]) / (12 * e);
      const double df = (f[0][i] - 8 * f[1][i] + 8 * f[2][i] - f[3][i]) / (12 * e);
      worst = fmax(worst, fmax(fabs(dt - Tt[3 * i + k]), fabs(df - Tf[3 * i + k])));
    }
  }
  /* without the force (r NULL): the couple's Jacobian is the same, the force's zero */
  double tb2[3], Tt2[9], fb2[3], Tf2[9];
  grit_momentum_body(I, mass, NULL, w, h, tb2, Tt2, fb2, Tf2);
  for (int i = 0; i < 9; ++i) cr_expect(Tt2[i] == Tt[i] && Tf2[i] == 0.0);
  return worst / scale;
}

Test(derivatives_momentum, body_jacobian_against_differences) {
  const double a = body_fd(0.002, 4.0), b = body_fd(0.01, 8.0); /* |h w~|^2 = 6e-5, 6e-3 */
  cr_log_info("body Jacobian: %.3g (series), %.3g (sin, cos)", a, b);
  cr_expect(a < 1e-8, "%.3g", a);
  cr_expect(b < 1e-8, "%.3g", b);
}

/* A's columns (positions and velocities) against central differences of the step in the tangent space,
 * relative Frobenius error of the block. */
static double against_fd(const char *xml, grit_contact_model model, int steps, double spin, double hfd) {
  grit_model *m, *m2;
  grit_data *d = prepare(xml, &m, model, steps, spin);
  grit_data *d2 = prepare(xml, &m2, model, steps, spin); /* the same history: the same warm start */
  double fd_norm;
  const double rel = fdt_state_columns(d, d2, hfd, 1, &fd_norm);
  cr_assert(d->deriv->rn_valid && d->deriv->rn.mom.on, "the closed form ran");
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
  return rel;
}

/* In flight and spinning (the smooth dynamics alone, the correction large): central differences at
 * h = 1e-5 are accurate to about h^2 |x'''| + eps / h (at 1e-6 and 1e-7 the error grows tenfold per
 * decade: round-off). Measured 6.1e-10 (tree) and 8.4e-11 (balls), the same to three digits with the
 * dual correction (ws->no_momentum_closed); the closed form's dW/dw scaled by 1.001 shows 2.1e-6 and
 * 8.4e-7, its wrenches W scaled by 1.001 4.2e-7 and 7.8e-8. */
Test(derivatives_momentum, tree_in_flight_against_central_differences) {
  const double rel = against_fd(TREE, GRIT_CONTACT_LAGGED, 5, 6.0, 1e-5);
  cr_log_info("tree in flight: relative Frobenius error %.3g", rel);
  cr_expect(rel < 3e-9, "%.3g", rel);
}

Test(derivatives_momentum, balls_in_flight_against_central_differences) {
  const double rel = against_fd(BALLS, GRIT_CONTACT_LAGGED, 5, 8.0, 1e-5);
  cr_log_info("balls in flight: relative Frobenius error %.3g", rel);
  cr_expect(rel < 3e-9, "%.3g", rel);
}

/* grit_momentum_dof's AVX2 sums (mo->avx2) against its scalar loops on random G, S and Y (zeros of both
 * signs among them, the outputs starting nonzero): the same bits. */
Test(derivatives_momentum, dof_sums_avx2_same_bits) {
  grit_model *m = xml_load_or_fail(TREE);
  const int nv = m->nv, nb = m->nbody;
  double *Gm = calloc(18 * (size_t)nb, sizeof(double)), *cdof = calloc(6 * (size_t)nv, sizeof(double));
  char *on = calloc((size_t)nb, 1);
  grit_momentum mo = {.on = 1, .Gm = Gm, .gm_on = on};
  grit_kin k;
  memset(&k, 0, sizeof k);
  k.cdof = cdof;
  unsigned st = 99u;
  for (int trial = 0; trial < 50; ++trial) {
    double *all[2] = {Gm, cdof};
    const int cnt[2] = {18 * nb, 6 * nv};
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < cnt[c]; ++i) {
        st = st * 1664525u + 1013904223u;
        const unsigned r = st >> 8;
        all[c][i] = r % 11 == 0 ? 0.0 : r % 13 == 0 ? -0.0 : ((double)r / 16777216.0 - 0.5) * 7.0;
      }
    memset(on, 1, (size_t)nb);
    for (int i = 0; i < nv; ++i) {
      const double Y[6] = {0.3 * trial - 2.0, -0.7, 1.1, 0.2, -0.0, 0.5};
      double out[2][18];
#if defined(__GNUC__) && defined(__x86_64__)
      const int passes = __builtin_cpu_supports("avx2") ? 2 : 1; /* mo->avx2 only where the processor has it */
#else
      const int passes = 1;
#endif
      for (int pass = 0; pass < passes; ++pass) {
        for (int j = 0; j < 18; ++j) out[pass][j] = 0.25 * j - 1.0;
        mo.avx2 = pass;
        grit_momentum_dof(m, &k, i, &mo, Y, out[pass], out[pass] + 6, out[pass] + 12);
      }
      if (passes == 2)
        cr_assert(memcmp(out[0], out[1], sizeof out[0]) == 0, "trial %d dof %d: not the same bits", trial, i);
    }
  }
  free(Gm), free(cdof), free(on);
  grit_model_free(m);
}
