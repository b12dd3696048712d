/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_tendon.c — the transmissions' lengths and moments kept by the derivative call
 * (derivatives_tendon.c: once per position pass for A and the force, the call's values for the
 * velocity and control passes, the terms over J's structural and nonzero entries): A and B against
 * the old per-pass dual evaluation (ws->tn->off), number for number, on every kind of length-fn
 * transmission (fixed, straight and wrapped spatial tendons, pulleys, slider-cranks, sites; muscles and
 * activations), with the smooth force's stored partials on and off; and against central differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_tendon.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

#define FILE_PATH(p) GRIT_SOURCE_DIR "/tests/" p

/* Entries that differ (== : a zero's sign may differ where a term of a zero entry is left out). */
static int count_diff(const double *X, const double *Y, size_t n) {
  int k = 0;
  for (size_t i = 0; i < n; ++i) k += !(X[i] == Y[i]);
  return k;
}

/* A, B and P (the masses of bodies 1 and 2: parameter passes) by the kept transmissions, by the old
 * path, and with every position pass evaluating every transmission (no_skip), with no_smooth 1, 0 and
 * -1 (the stored partials never, where worth it, always): the same numbers. */
static void same_as_old(const char *path, int steps) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nu = grit_model_nu(m), nv = grit_model_nv(m), nx = 2 * nv + grit_model_na(m);
  double *u = calloc((size_t)nu + 1, sizeof(double)), *v = calloc((size_t)nv + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) u[i] = 0.4 * sin(0.9 * i + 0.3);
  for (int i = 0; i < nv; ++i) v[i] = 0.5 * sin(1.3 * i + 0.4); /* moving: the velocity terms matter */
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const size_t na_ = (size_t)nx * nx, nb_ = (size_t)nx * nu + 1, np_ = (size_t)nx * 2;
  double *A0 = calloc(na_, sizeof(double)), *B0 = calloc(nb_, sizeof(double)), *P0 = calloc(np_, sizeof(double));
  double *A1 = calloc(na_, sizeof(double)), *B1 = calloc(nb_, sizeof(double)), *P1 = calloc(np_, sizeof(double));
  const grit_param prm[2] = {{GRIT_PARAM_MASS, 1}, {GRIT_PARAM_MASS, 2}};
  cr_assert_eq(grit_step_derivatives(d, A0, nu ? B0 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->tn->any, "%s: a length-fn actuator", path);
  for (int s = 1; s >= -1; --s)
    for (int variant = 0; variant < 2; ++variant) { /* the old path; every transmission in every pass */
      d->deriv->no_smooth = s;
      d->deriv->tn->off = variant == 0;
      d->deriv->tn->no_skip = variant == 1;
      cr_assert_eq(grit_step_derivatives(d, A0, nu ? B0 : NULL, prm, 2, P0), GRIT_OK, "%s", grit_data_last_error(d));
      d->deriv->tn->off = d->deriv->tn->no_skip = 0;
      cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, prm, 2, P1), GRIT_OK, "%s", grit_data_last_error(d));
      cr_assert(d->deriv->tn->ok0, "%s: the call's values were kept", path);
      const int da = count_diff(A1, A0, na_), db = nu ? count_diff(B1, B0, (size_t)nx * nu) : 0;
      const int dp = count_diff(P1, P0, np_);
      cr_expect(da == 0 && db == 0 && dp == 0, "%s (no_smooth %d, %s): %d entries of A, %d of B, %d of P differ",
                path, s, variant ? "no_skip" : "old path", da, db, dp);
    }
  d->deriv->no_smooth = 0;
  /* the unmoved actuators' kept force terms (tn->c0): bit for bit the apply in every pass (no_c0) */
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, prm, 2, P1), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->tn->no_c0 = 1;
  cr_assert_eq(grit_step_derivatives(d, A0, nu ? B0 : NULL, prm, 2, P0), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->tn->no_c0 = 0;
  cr_expect(!memcmp(A0, A1, sizeof(double) * na_) && (!nu || !memcmp(B0, B1, sizeof(double) * (size_t)nx * nu)) &&
                !memcmp(P0, P1, sizeof(double) * np_),
            "%s: the kept terms (%lu added) moved bits", path, d->deriv->tn->c0_adds);
  cr_log_info("%s: %lu kept terms added", path, d->deriv->tn->c0_adds);
  /* the block form, where it takes the model (activations: where this build's block form has them) */
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  d->deriv->tn->off = 1;
  const grit_status s0 = grit_step_derivatives_blocks(d, J);
  d->deriv->tn->off = 0;
  if (s0 == GRIT_OK) {
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A0, nu ? B0 : NULL), GRIT_OK);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A1, nu ? B1 : NULL), GRIT_OK);
    const int da = count_diff(A1, A0, na_), db = nu ? count_diff(B1, B0, (size_t)nx * nu) : 0;
    cr_expect(da == 0 && db == 0, "%s (blocks): %d entries of A, %d of B differ", path, da, db);
  }
  grit_jacobian_blocks_free(J);
  free(A0), free(B0), free(P0), free(A1), free(B1), free(P1), free(u), free(v);
  grit_data_free(d);
  grit_model_free(m);
}

/* Fixed, straight and wrapped spatial tendons (servo, velocity, motor, affine, filter). */
Test(derivatives_tendon, tendon_actuators_file) { same_as_old(FILE_PATH("mjcf/tendon_actuators.xml"), 50); }
/* Muscles on spatial tendons wrapping around cylinders, with activations (nv 2: one pass of each). */
Test(derivatives_tendon, arm26_file) { same_as_old(FILE_PATH("models/mujoco_model/arm26.xml"), 100); }
Test(derivatives_tendon, slider_crank_file) { same_as_old(FILE_PATH("models/mujoco_model/slider_crank.xml"), 100); }
/* Fixed-tendon servos with activations on one free-floating tree (three position passes). */
Test(derivatives_tendon, quadruped_file) { same_as_old(FILE_PATH("models/dm_control_suite/quadruped.xml"), 100); }
/* Tendons with contacts and several trees (coloured position passes). */
Test(derivatives_tendon, manipulator_file) { same_as_old(FILE_PATH("models/dm_control_suite/manipulator.xml"), 100); }
Test(derivatives_tendon, stacker_file) { same_as_old(FILE_PATH("models/dm_control_suite/stacker.xml"), 100); }
Test(derivatives_tendon, fish_file) { same_as_old(FILE_PATH("models/dm_control_suite/fish.xml"), 100); }
Test(derivatives_tendon, panda_file) {
  same_as_old(FILE_PATH("models/menagerie_collision/franka_emika_panda/panda.xml"), 100);
}

/* A, B against central differences of the step, by the kept transmissions and by the old path, on the
 * five tendon actuators of tests/mjcf/tendon_actuators.xml under gravity (no constraints: the
 * differences at 1e-6 see the smooth terms, ~1e-10 relative; test_tendon_actuation.c asks 1e-5). */
Test(derivatives_tendon, against_central_differences) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = 2e-3;
  cr_assert_eq(grit_mjcf_load_file_with(FILE_PATH("mjcf/tendon_actuators.xml"), &lo, &m, NULL, msg), GRIT_OK, "%s",
               msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  enum { NQ = 4, NU = 5, NX = 2 * NQ + 1 };
  cr_assert_eq(grit_model_nq(m), NQ);
  cr_assert_eq(grit_model_nu(m), NU);
  const double x[NX] = {0.3, -0.4, 0.05, 0.7, 0.5, -0.8, 0.2, 1.1, 0.3}, u[NU] = {0.4, 0.5, 0.3, 0.2, 0.6};
  double A[2][NX * NX], B[2][NX * NU], Afd[NX * NX], Bfd[NX * NU];
  cr_assert_eq(grit_linearize(d, x, u, A[0], B[0]), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->tn->off = 1;
  cr_assert_eq(grit_linearize(d, x, u, A[1], B[1]), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->tn->off = 0;
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  for (int k = 0; k < 2; ++k) {
    const double ea = fdj_rel_err(A[k], Afd, NX * NX), eb = fdj_rel_err(B[k], Bfd, NX * NU);
    cr_log_info("%s: A rel err %.3g, B rel err %.3g", k ? "old path" : "kept", ea, eb);
    cr_expect_lt(ea, 1e-5);
    cr_expect_lt(eb, 1e-5);
  }
  cr_expect_eq(count_diff(A[0], A[1], NX * NX), 0);
  cr_expect_eq(count_diff(B[0], B[1], NX * NU), 0);
  grit_data_free(d);
  grit_model_free(m);
}

/* A fixed tendon's row over its structural entries (ws->tn->no_fixed: the full evaluation over all
 * dofs): A and B the same bytes, dense and block form, the short row taken where expected. */
static void fixed_same(const char *path, int steps, int taken) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nu = grit_model_nu(m), nv = grit_model_nv(m), nx = 2 * nv + grit_model_na(m);
  double *u = calloc((size_t)nu + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) u[i] = 0.4 * sin(0.9 * i + 0.3);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const size_t na_ = (size_t)nx * nx, nb_ = (size_t)nx * nu + 1;
  double *A[2], *B[2];
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int form = 0; form < 2; ++form) { /* dense, blocks */
    for (int k = 0; k < 2; ++k) {
      A[k] = calloc(na_, sizeof(double)), B[k] = calloc(nb_, sizeof(double));
      d->deriv->tn->no_fixed = k;
      const unsigned long before = d->deriv->tn->fixed_rows;
      if (form == 0) {
        cr_assert_eq(grit_step_derivatives(d, A[k], nu ? B[k] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                     grit_data_last_error(d));
      } else {
        cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
        cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[k], nu ? B[k] : NULL), GRIT_OK);
      }
      cr_assert_eq(d->deriv->tn->fixed_rows > before, k == 0 && taken, "%s (form %d): the short rows taken", path, form);
    }
    d->deriv->tn->no_fixed = 0;
    cr_expect(memcmp(A[0], A[1], na_ * sizeof(double)) == 0, "%s (form %d): A differs", path, form);
    cr_expect(memcmp(B[0], B[1], nb_ * sizeof(double)) == 0, "%s (form %d): B differs", path, form);
    for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  }
  grit_jacobian_blocks_free(J);
  free(u);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_tendon, fixed_rows_same_bits) {
  fixed_same(FILE_PATH("mjcf/tendon_actuators.xml"), 50, 1);
  fixed_same(FILE_PATH("models/dm_control_suite/quadruped.xml"), 100, 1);
}
