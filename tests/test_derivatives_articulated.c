/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_articulated.c — the position passes' Delassus estimates from A's double factor
 * (derivatives_delassus.c) on an articulated tree in contact with joint limits: A and B against the
 * dual-factor path they replace, and A's columns against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_tangent.h"
#include "xml_load_util.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

/* A floating torso with two legs of two hinges each (limited knees), capsule feet on the floor, and
 * motors at the hips: one tree of 10 dofs, off-diagonal mass matrix, contacts and limits. */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' size='0.12 0.08 0.05' mass='4'/>"
    " <body pos='0 0.06 -0.05'><joint name='h1' type='hinge' axis='0 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint name='k2' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    "</body></worldbody>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

static grit_data *prepare(grit_model **m, grit_contact_model model) {
  return moving_data_model(XML, m, model, 0.0, 150); /* at rest: controls 0.3, -0.2 */
}

/* The largest |entry| of column j of an r x c row-major matrix. */
static double col_max(const double *X, int r, int c, int j) {
  double a = 0.0;
  for (int i = 0; i < r; ++i) a = fmax(a, fabs(X[i * c + j]));
  return a;
}

/* The same derivative in two orders of operations: each column agrees to round-off of its largest
 * entry. The solve with the kept factor amplifies it by A's condition (mass ratios of about 40 and
 * stiff contacts here); 1e-9 leaves that room while a wrong term (a missing dA or dJ) is O(1). */
static void same_as_dual(grit_contact_model model) {
  grit_model *m;
  grit_data *d = prepare(&m, model);
  cr_assert(grit_data_ncontacts(d) > 0);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_deriv_delassus_lin_on(d, d->deriv), "the new path applies here");
  d->deriv->no_delassus_lin = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  double worst = 0.0;
  for (int j = 0; j < nx; ++j) {
    const double s = fmax(col_max(A2, nx, nx, j), 1e-300);
    for (int i = 0; i < nx; ++i) worst = fmax(worst, fabs(A1[i * nx + j] - A2[i * nx + j]) / s);
  }
  for (int j = 0; j < nu; ++j) {
    const double s = fmax(col_max(B2, nx, nu, j), 1e-300);
    for (int i = 0; i < nx; ++i) worst = fmax(worst, fabs(B1[i * nu + j] - B2[i * nu + j]) / s);
  }
  cr_log_info("model %d: largest difference relative to its column's largest entry %.3g", model, worst);
  cr_expect(worst < 1e-9, "model %d: %.3g", model, worst);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_articulated, sap_matches_the_dual_factor) { same_as_dual(GRIT_CONTACT_SAP); }
Test(derivatives_articulated, similar_limits_match_the_dual_factor) { same_as_dual(GRIT_CONTACT_SIMILAR); }

/* A's position columns (where the Delassus estimates' partials enter) against central differences of
 * the step in the tangent space, SAP (every contact's regularization reads w). Relative Frobenius
 * error of the block; h = 1e-6 keeps the contacts' states. Measured 3.6e-6; with dA's term halved in
 * derivatives_delassus.c it is 4.7e-5 (and 3e-4 against the dual factor): 1.5e-5 tells them apart. */
Test(derivatives_articulated, position_columns_match_central_differences) {
  grit_model *m, *m2;
  grit_data *d = prepare(&m, GRIT_CONTACT_SAP);
  grit_data *d2 = prepare(&m2, GRIT_CONTACT_SAP); /* the same history: the same warm start */
  double fd_norm;
  const double rel = fdt_position_columns(d, d2, 1e-6, &fd_norm);
  cr_log_info("position columns: relative Frobenius error %.3g (|FD| %.3g)", rel, fd_norm);
  cr_expect(rel < 1.5e-5, "%.3g", rel);
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
}
