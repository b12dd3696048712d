/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_lanes.c — the constant rows' Delassus estimates side by side (derivatives_delassus.c,
 * solve_constant_rows; derivatives_quadgrad.c, grit_rnea_quadratic_gradient_lanes): a floating tree
 * whose every hinge has dry friction (frictionloss) and limits, in contact with the floor. A and B
 * bitwise against the one-row path (ws->no_lanes), and A's position columns against central
 * differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "solver.h"

/* A floating torso with two legs of three hinges each (six joint frictions: two groups of lanes, the
 * second partly filled), limited knees, a fixed tendon's limit on one leg, capsule feet on the floor,
 * motors at the hips. */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<default><joint damping='0.5' frictionloss='0.4' armature='0.01'/></default>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' size='0.12 0.08 0.05' mass='4'/>"
    " <body pos='0 0.06 -0.05'><joint name='a1' type='hinge' axis='1 0 0' range='-30 30'/>"
    "  <joint name='h1' type='hinge' axis='0 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='a2' type='hinge' axis='1 0 0' range='-30 30'/>"
    "  <joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint name='k2' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    "</body></worldbody>"
    "<tendon><fixed limited='true' range='-0.05 0.05'><joint joint='h1' coef='0.5'/><joint joint='k1' coef='-0.5'/>"
    "</fixed></tendon>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

static grit_data *prepare(grit_model **m, grit_contact_model model) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(XML, m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[2] = {0.3, -0.2};
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int i = 0; i < 150; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The lanes repeat the one-row path's operations in its order: the same bits, dense and block form. */
static void same_bits(grit_contact_model model) {
  grit_model *m;
  grit_data *d = prepare(&m, model);
  cr_assert(grit_data_ncontacts(d) > 0);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  int nfriction = 0, ntendon = 0;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int i = 0; i < d->stats.nconstraints; ++i) {
    nfriction += c[i].kind == GRIT_CONSTRAINT_FRICTION && !grit_deriv_constraint_inert(&c[i]);
    ntendon += c[i].kind == GRIT_CONSTRAINT_TENDON_LIMIT && !grit_deriv_constraint_inert(&c[i]);
  }
  cr_assert(nfriction >= 2, "joint frictions with impulses: %d", nfriction);
  cr_log_info("model %d: %d joint frictions, %d tendon limits with impulses", model, nfriction, ntendon);
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu, sizeof(double));
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(grit_deriv_delassus_lin_on(d, d->deriv), "the estimates from the double factor apply here");
    d->deriv->no_lanes = 1;
  }
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "model %d: A differs", model);
  cr_expect(!memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), "model %d: B differs", model);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_lanes, joint_frictions_side_by_side_give_the_one_row_bits) {
  same_bits(GRIT_CONTACT_LAGGED);
  same_bits(GRIT_CONTACT_SAP);
}

/* A's position columns against central differences of the step in the tangent space (relative
 * Frobenius error of the block; h = 1e-6 keeps the contacts' and frictions' states). */
Test(derivatives_lanes, position_columns_match_central_differences) {
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
