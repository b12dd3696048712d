/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_kin.c — the position passes' lean closed-form kinematics (derivatives_rigid.c): in a
 * pass that takes a tree's smooth dynamics from derivatives_rnea.c, the fields only the dual dynamics read
 * (centre of mass, spatial inertia, joint anchors and axes), the orientation quaternion (read by weld
 * equalities only) and, after the call's first pass, the poses and motion subspaces no contact reads are
 * left out, and clear_tree_partials clears only what the pass wrote. A and B against
 * the passes that compute every field (ws->no_kin_lean), entry by entry, for the three contact models,
 * with and without a weld; and A's position columns against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

/* A floating torso with a ball-jointed head, two legs of a two-hinge hip and a knee (limited), feet on
 * the floor, motors at the hips: one tree of 15 dofs, two position passes; %s: an equality or nothing. */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body name='torso' pos='0 0 0.62'><freejoint/><geom type='box' pos='0.01 0 0.02' size='0.12 0.08 0.05' mass='4'/>"
    " <body name='head' pos='0 0 0.08'><joint type='ball' damping='0.05'/>"
    "  <geom type='sphere' pos='0.02 0 0.08' size='0.05' mass='0.5'/></body>"
    " <body pos='0 0.06 -0.05'><joint name='h1' type='hinge' axis='0 1 0' range='-60 60' damping='0.1'/>"
    "  <joint name='a1' type='hinge' pos='0 0 -0.02' axis='1 0 0.2' range='-30 30'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body name='shin1' pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0' stiffness='2'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60' armature='0.02'/>"
    "  <joint name='a2' type='hinge' axis='1 0 0' range='-30 30'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint name='k2' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    "</body></worldbody>%s"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

static grit_data *prepare(grit_model **m, grit_contact_model model, int weld) {
  char xml[4096];
  snprintf(xml, sizeof xml, XML, weld ? "<equality><weld body1='torso' body2='head'/></equality>" : "");
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[2] = {0.2, -0.1};
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int i = 0; i < 150; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The same operations on the values every consumer reads: A and B equal entry by entry (== : a zero
 * partial may carry either sign), the lean passes did run, and the passes after them leave nothing
 * behind. */
static void same_as_full(grit_contact_model model, int weld) {
  grit_model *m;
  grit_data *d = prepare(&m, model, weld);
  cr_assert(grit_data_ncontacts(d) >= 2, "feet touch: %d", grit_data_ncontacts(d));
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  cr_assert_eq(nv, 15);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  /* the last position pass is the second: with no weld, poses and subspaces only where contacts read them */
  const int want = weld ? GRIT_KIN_LEAN_DYN : GRIT_KIN_LEAN_DYN | GRIT_KIN_LEAN_QUAT | GRIT_KIN_LEAN_POSE;
  cr_assert_eq(d->deriv->klean[0], want, "lean flags %d, expected %d", d->deriv->klean[0], want);
  d->deriv->no_kin_lean = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(d->deriv->klean[0], 0);
  int differ = 0;
  for (int i = 0; i < nx * nx; ++i) differ += A1[i] != A2[i];
  for (int i = 0; i < nx * nu; ++i) differ += B1[i] != B2[i];
  cr_expect_eq(differ, 0, "model %d, weld %d: %d entries differ", model, weld, differ);
  /* and the lean passes again after the full ones, and after the dual dynamics (no lean: rnea off) */
  d->deriv->no_kin_lean = 0;
  d->deriv->no_rnea = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(d->deriv->klean[0], weld ? 0 : GRIT_KIN_LEAN_QUAT);
  d->deriv->no_rnea = 0;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  differ = 0;
  for (int i = 0; i < nx * nx; ++i) differ += A1[i] != A2[i];
  for (int i = 0; i < nx * nu; ++i) differ += B1[i] != B2[i];
  cr_expect_eq(differ, 0, "model %d, weld %d, third call: %d entries differ", model, weld, differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_kin, sap_matches_the_full_passes) { same_as_full(GRIT_CONTACT_SAP, 0); }
Test(derivatives_kin, lagged_matches_the_full_passes) { same_as_full(GRIT_CONTACT_LAGGED, 0); }
Test(derivatives_kin, similar_matches_the_full_passes) { same_as_full(GRIT_CONTACT_SIMILAR, 0); }
Test(derivatives_kin, weld_keeps_the_quaternion) { same_as_full(GRIT_CONTACT_SAP, 1); }

/* A's position columns against central differences of the step in the tangent space (SAP, the lean
 * passes). Relative Frobenius error of the block at h = 1e-7: the differences' h^2 term and round-off. */
Test(derivatives_kin, position_columns_match_central_differences) {
  grit_model *m, *m2;
  grit_data *d = prepare(&m, GRIT_CONTACT_SAP, 0);
  grit_data *d2 = prepare(&m2, GRIT_CONTACT_SAP, 0); /* the same history: the same warm start */
  double fd_norm;
  const double rel = fdt_position_columns(d, d2, 1e-7, &fd_norm);
  cr_assert(d->deriv->klean[0] & GRIT_KIN_LEAN_DYN, "the lean passes ran");
  cr_log_info("position columns: relative Frobenius error %.3g (|FD| %.3g)", rel, fd_norm);
  cr_expect(rel < 1e-5, "%.3g", rel);
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
}
