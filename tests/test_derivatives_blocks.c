/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_blocks.c — the block-sparse A and B (grit_step_derivatives_blocks) against the dense
 * ones of grit_step_derivatives, entry for entry and exactly: both come from the same passes and
 * solves, the blocks writing each column into its island's block only. The dense Jacobians themselves
 * are checked against central finite differences in test_derivatives.c. Scenes: the clutter of 40
 * objects falling and piling up (many islands, Lagged and SAP), two actuated pendulums, one pushing a
 * box and one swinging free, with a free box apart (islands with and without actuators), and the arm
 * pushing the ball (one island). With activations (na > 0): the same pendulums driven by filters, an
 * integrator and a muscle, the muscle arm, the chain of every actuator kind and dm_control's quadruped
 * (filter servos, feet on the floor), exactly against the dense form; and the pendulums' blocks
 * against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actuation_scene.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "model_internal.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "scenes.h"

/* Actuator a's activation's index in act (-1: none): activations are numbered in actuator order. */
static int act_index(const grit_model *m, int a) {
  int k = 0;
  for (int b = 0; b <= a; ++b) {
    grit_actuator_def def;
    cr_assert_eq(grit_model_actuator(m, b, &def), GRIT_OK);
    if (def.dyntype == GRIT_DYN_NONE) {
      if (b == a) return -1;
    } else if (b < a) {
      k++;
    }
  }
  return k;
}

/* Takes the dense and the block Jacobians of the data's last step and compares them exactly (== , so
 * that a zero of either sign is a zero). Returns the number of blocks. */
static int compare(grit_data *d, const grit_model *m) {
  const int nv = grit_model_nv(m), nx = 2 * nv + grit_model_na(m), nu = grit_model_nu(m); /* x = (q, v, act) */
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * ((size_t)nx * nu + 1));
  double *A2 = malloc(sizeof(double) * (size_t)nx * nx), *B2 = malloc(sizeof(double) * ((size_t)nx * nu + 1));
  cr_assert_eq(grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int pass = 0; pass < 2; ++pass) { /* twice: the second reuses the storage */
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A2, nu ? B2 : NULL), GRIT_OK);
    for (int i = 0; i < nx * nx; ++i) cr_assert(A2[i] == A[i], "A[%d][%d]: blocks %.17g, dense %.17g", i / nx, i % nx, A2[i], A[i]);
    for (int i = 0; i < nx * nu; ++i) cr_assert(B2[i] == B[i], "B[%d][%d]: blocks %.17g, dense %.17g", i / nu, i % nu, B2[i], B[i]);
  }
  const int nb = grit_jacobian_blocks_count(J);
  size_t total = 0; /* the blocks partition the state and the controls */
  int nstate = 0, nctrl = 0;
  for (int k = 0; k < nb; ++k) {
    grit_jacobian_block b;
    cr_assert_eq(grit_jacobian_blocks_get(J, k, &b), GRIT_OK);
    nstate += b.nx;
    nctrl += b.nu;
    int ndof = 0; /* the layout: dofs' dq, their dv, then the activations of the block's actuators */
    while (ndof < b.nx && b.state[ndof] < nv) ndof++;
    for (int i = 0; i < ndof; ++i) cr_assert_eq(b.state[ndof + i], nv + b.state[i]);
    for (int i = 2 * ndof, j = 0; i < b.nx; ++i, ++j) {
      while (j < b.nu && act_index(m, b.ctrl[j]) < 0) j++;
      cr_assert(j < b.nu, "block %d: activation state %d without an actuator", k, b.state[i]);
      cr_assert_eq(b.state[i], 2 * nv + act_index(m, b.ctrl[j]));
    }
    total += (size_t)b.nx * b.nx + (size_t)b.nx * b.nu;
  }
  cr_assert_eq(nstate, nx);
  cr_assert_eq(nctrl, nu);
  cr_assert_eq(grit_jacobian_blocks_bytes(J), sizeof(double) * total);
  grit_jacobian_block b;
  cr_assert_eq(grit_jacobian_blocks_get(J, nb, &b), GRIT_ERR_INVALID_ARGUMENT);
  grit_jacobian_blocks_free(J);
  free(A), free(B), free(A2), free(B2);
  return nb;
}

Test(derivatives_blocks, clutter_islands_equal_dense_exactly) {
  char msg[GRIT_MESSAGE_SIZE];
  for (int model = GRIT_CONTACT_LAGGED; model <= GRIT_CONTACT_SAP; model += 2) {
    grit_model *m;
    grit_data *d;
    cr_assert_eq(scene_clutter(40, 2e-3, &m, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_step_settings st = grit_default_step_settings();
    st.contact_model = model;
    cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
    int multi = 0;
    for (int s = 1; s <= 240; ++s) {
      cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
      if (s % 60) continue;
      const int nb = compare(d, m);
      cr_assert(nb >= 1 && nb <= grit_model_ntree(m));
      multi |= nb > 1 && nb < grit_model_ntree(m); /* islands of several trees and more than one island */
    }
    cr_assert(multi, "the clutter never had islands of several trees");
    grit_data_free(d);
    grit_model_free(m);
  }
}

static const char *k_pendulums =
    "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='2 2 0.1'/>"
    "<body pos='0 0 0.6'><joint name='a' type='hinge' axis='0 1 0' range='-2 2'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03'/></body>"
    "<body pos='0.13 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='1 0 0.6'><joint name='b' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
    "<body pos='0 0 -0.3'><joint name='c' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.03'/></body></body>"
    "<body pos='-1 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "</worldbody><actuator><motor joint='a' ctrlrange='-3 3' ctrllimited='true'/><motor joint='c'/>"
    "<motor joint='b'/></actuator></mujoco>";

Test(derivatives_blocks, actuated_islands_equal_dense_exactly) {
  grit_model *m;
  grit_data *d;
  cr_assert_eq(grit_mjcf_load_string(k_pendulums, &m, NULL, NULL), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[3] = {2.0, 5.0, -0.4}; /* the first clamped at 3: dw/du = 0 outside the range */
  for (int s = 1; s <= 150; ++s) {
    double uk[3] = {u[0] + 0.01 * s, u[1], u[2]};
    cr_assert_eq(grit_data_set_ctrl(d, uk, 3), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    if (s % 50 == 0) cr_assert_geq(compare(d, m), 3); /* at least the free box and the double pendulum apart */
  }
  grit_data_free(d);
  grit_model_free(m);
}

/* B's columns of controls inside their range (dw/du = 1) are left unscaled: the same bits as scaling
 * them (ws->no_unit_clamp), with one control clamped (dw/du = 0: its column scaled to zero). */
Test(derivatives_blocks, unit_clamps_skipped_same_bits) {
  grit_model *m;
  grit_data *d;
  cr_assert_eq(grit_mjcf_load_string(k_pendulums, &m, NULL, NULL), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[3] = {3.5, 5.0, -0.4}; /* the first clamped at 3 */
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  for (int s = 1; s <= 60; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * grit_model_nv(m), nu = 3;
  double *A1 = malloc(sizeof(double) * (size_t)nx * nx), *B1 = malloc(sizeof(double) * (size_t)nx * nu);
  double *A2 = malloc(sizeof(double) * (size_t)nx * nx), *B2 = malloc(sizeof(double) * (size_t)nx * nu);
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A1, B1), GRIT_OK);
  d->deriv->no_unit_clamp = 1;
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A2, B2), GRIT_OK);
  cr_assert_eq(memcmp(A1, A2, sizeof(double) * (size_t)nx * nx), 0);
  cr_assert_eq(memcmp(B1, B2, sizeof(double) * (size_t)nx * nu), 0);
  int zero = 1, nonzero = 0; /* the clamped column is zero, the others are not */
  for (int i = 0; i < nx; ++i) zero &= B1[i * nu] == 0.0, nonzero += B1[i * nu + 1] != 0.0 && B1[i * nu + 2] != 0.0;
  cr_assert(zero && nonzero > 0);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
  free(A1), free(B1), free(A2), free(B2);
}

/* The dense form too (actuation_chain, no activations): the columns of unit clamps left as they are, the
 * clamped one scaled row by row: the same bits as scaling every column (ws->no_unit_clamp). */
Test(derivatives_blocks, dense_unit_clamps_skipped_same_bits) {
  grit_model *m;
  grit_data *d;
  cr_assert_eq(grit_mjcf_load_string(k_pendulums, &m, NULL, NULL), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[3] = {3.5, 5.0, -0.4}; /* the first clamped at 3 */
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  for (int s = 1; s <= 60; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * grit_model_nv(m), nu = 3;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = malloc(sizeof(double) * (size_t)nx * nx), B[k] = malloc(sizeof(double) * (size_t)nx * nu);
    d->deriv->no_unit_clamp = k;
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  }
  d->deriv->no_unit_clamp = 0;
  cr_assert_eq(memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), 0);
  cr_assert_eq(memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), 0);
  int zero = 1, nonzero = 0; /* the clamped column is zero, the others are not */
  for (int i = 0; i < nx; ++i) zero &= B[0][i * nu] == 0.0, nonzero += B[0][i * nu + 1] != 0.0 && B[0][i * nu + 2] != 0.0;
  cr_assert(zero && nonzero > 0);
  grit_data_free(d);
  grit_model_free(m);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
}

/* The derivative call's factor of the step's operator is the step's own (d->Achol, the same function on
 * the same matrix) while d->A still holds that matrix: A, B the same bits as factoring it again
 * (ws->no_achol_reuse), dense and blocks; with achol_fresh cleared the step's factor is not read (a
 * scribbled copy changes nothing), with it set it is (the scribble shows), and after the free motion
 * at the new state (d->A rewritten) the call factors again. MuJoCo's humanoid on the floor. */
Test(derivatives_blocks, step_factor_reused_same_bits) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < 150; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m), nM = m->nM;
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu;
  double *A[4], *B[4], *saved = malloc(sizeof(double) * (size_t)nM);
  for (int k = 0; k < 4; ++k) A[k] = malloc(sizeof(double) * na), B[k] = malloc(sizeof(double) * nb);
  cr_assert(d->achol_fresh);
  cr_assert_eq(grit_step_derivatives(d, A[0], B[0], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->no_achol_reuse = 1;
  cr_assert_eq(grit_step_derivatives(d, A[1], B[1], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->no_achol_reuse = 0;
  cr_assert(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb));
  /* the flag guards the copy: a scribbled factor is not read without it, and is read with it */
  memcpy(saved, d->Achol, sizeof(double) * (size_t)nM);
  for (int i = 0; i < nM; ++i) d->Achol[i] *= 1.5;
  d->achol_fresh = 0;
  cr_assert_eq(grit_step_derivatives(d, A[2], B[2], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!memcmp(A[0], A[2], sizeof(double) * na) && !memcmp(B[0], B[2], sizeof(double) * nb));
  d->achol_fresh = 1;
  cr_assert_eq(grit_step_derivatives(d, A[3], B[3], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(memcmp(A[0], A[3], sizeof(double) * na), "the step's factor was not taken");
  memcpy(d->Achol, saved, sizeof(double) * (size_t)nM);
  /* the free motion at the new state rewrites A and its factor: the call factors the step's again */
  double *vstar = malloc(sizeof(double) * (size_t)grit_model_nv(m));
  cr_assert_eq(grit_free_motion_velocity(d, vstar), GRIT_OK);
  cr_assert(d->achol_fresh);
  cr_assert_eq(grit_step_derivatives(d, A[2], B[2], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!memcmp(A[0], A[2], sizeof(double) * na) && !memcmp(B[0], B[2], sizeof(double) * nb));
  /* and the block form, with and without */
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[0], B[0]), GRIT_OK);
  d->deriv->no_achol_reuse = 1;
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[1], B[1]), GRIT_OK);
  cr_assert(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb));
  grit_jacobian_blocks_free(J);
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  free(saved), free(vstar);
  grit_data_free(d);
  grit_model_free(m);
}

/* A pass's right-hand sides added lanes together (grit_deriv_add_rhs_lanes: four lanes per transpose)
 * give the same bits as a column at a time (ws->no_rhs_lanes), dense and blocks, also both with batches
 * of 7 columns, which a pass's lanes straddle: MuJoCo's humanoid on the floor (one tree, Lagged contacts)
 * and the pendulums (trees coupled by constraints), each against central differences by compare. */
static void rhs_lanes_same_bits(grit_model *m, grit_data *d) {
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) A[k] = malloc(sizeof(double) * na), B[k] = malloc(sizeof(double) * nb);
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d, A[0], B[0], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  const int keep = d->deriv->rhs_cap;
  for (int form = 0; form < 2; ++form)
    for (int cfg = 0; cfg < 4; ++cfg) { /* bit 0: the old path; bit 1: batches of 7 (each against its batch) */
      const int k = cfg & 1;
      d->deriv->no_rhs_lanes = k, d->deriv->rhs_cap = cfg & 2 ? 7 : keep;
      if (form == 0) {
        cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
      } else {
        cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
        cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[k], B[k]), GRIT_OK);
      }
      d->deriv->no_rhs_lanes = 0, d->deriv->rhs_cap = keep;
      if (k)
        cr_assert(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb),
                  "form %d cfg %d", form, cfg);
    }
  grit_jacobian_blocks_free(J);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
}

Test(derivatives_blocks, rhs_lanes_same_bits) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < 150; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  rhs_lanes_same_bits(m, d);
  grit_data_free(d);
  grit_model_free(m);
  cr_assert_eq(grit_mjcf_load_string(k_pendulums, &m, NULL, NULL), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int s = 1; s <= 100; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  rhs_lanes_same_bits(m, d);
  cr_assert_geq(compare(d, m), 1);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_blocks, arm_and_ball_one_island) {
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", &m, &info, NULL), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, "push"), d), GRIT_OK);
  for (int s = 0; s < 10; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(compare(d, m), 1);
  grit_mjcf_info_free(&info);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_blocks, errors) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m, *m2;
  grit_data *d;
  cr_assert_eq(scene_clutter(10, 2e-3, &m, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(scene_falling_sphere(1e-3, &m2, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_jacobian_blocks *J, *J2;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_jacobian_blocks_create(m2, &J2), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_ERR_STATE); /* no step yet */
  cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J2), GRIT_ERR_INVALID_ARGUMENT); /* another model's */
  cr_assert_eq(grit_step_derivatives_blocks(NULL, J), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_jacobian_blocks_reserve(J, 1000, 10), GRIT_OK);
  cr_assert_geq(grit_jacobian_blocks_capacity_bytes(J), sizeof(double) * 1010);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_count(J), grit_model_ntree(m)); /* falling apart: one per object */
  grit_jacobian_blocks_free(J);
  grit_jacobian_blocks_free(J2);
  grit_data_free(d);
  grit_model_free(m);
  grit_model_free(m2);
}

/* The pendulums of k_pendulums (wider joint ranges, the box closer) driven through activations: the
 * integrators' and the muscle's on the double pendulum, the filter's on the pendulum that presses on
 * the box (with a motor without dynamics), so that the activations' order (act) differs from the
 * islands'; one integrator clamped by actrange. */
static const char *k_act_pendulums =
    "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='2 2 0.1'/>"
    "<body pos='0 0 0.6'><joint name='a' type='hinge' axis='0 1 0' range='-20 20'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03'/></body>"
    "<body pos='0.1 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='1 0 0.6'><joint name='b' type='hinge' axis='0 1 0' range='-60 90'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
    "<body pos='0 0 -0.3'><joint name='c' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.03'/></body></body>"
    "<body pos='-1 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "</worldbody><actuator><general joint='c' dyntype='integrator' gainprm='0.5'/>"
    "<motor joint='a' ctrlrange='-3 3' ctrllimited='true'/>"
    "<general joint='a' dyntype='filter' dynprm='0.05' gainprm='10' biastype='affine' biasprm='0 -10 0'/>"
    "<muscle joint='b' ctrllimited='true' ctrlrange='0 1' gear='0.05'/>"
    "<general joint='c' dyntype='integrator' actlimited='true' actrange='-0.2 0.2'/></actuator></mujoco>";

Test(derivatives_blocks, activation_islands_equal_dense_exactly) {
  grit_model *m;
  grit_data *d;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(k_act_pendulums, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_na(m), 4);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  int joined = 0;
  for (int s = 1; s <= 150; ++s) {
    /* the filter servo presses the pendulum against its box (the motor clamped at 3 against it); the
     * last integrator reaches its clamp */
    const double u[5] = {1.0, 2.0 + 0.01 * s, -1.0, 0.6, 1.0};
    cr_assert_eq(grit_data_set_ctrl(d, u, 5), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    if (s % 50) continue;
    const int nb = compare(d, m);
    cr_assert_geq(nb, 3); /* at least the free box and the double pendulum apart */
    joined |= nb == 3;    /* the pendulum and its box one island, with the filter's activation */
  }
  cr_assert(joined, "the pendulum never touched its box");
  grit_data_free(d);
  grit_model_free(m);
}

/* An adhesion actuator with a filter (a body transmission: its control reaches the cube it holds
 * through the contacts' layer, so its activation's column of A is nonzero in the cube's rows): the pad
 * and the cube one island, its activation in their block (test_adhesion.c's lift, gravity off). */
Test(derivatives_blocks, filtered_adhesion_equals_dense_exactly) {
  static const char *xml =
      "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody>"
      "<geom name='floor' type='plane' size='1 1 .1'/>"
      "<body name='gripper' pos='0 0 0.21'><joint name='lift' type='slide' axis='0 0 1' damping='10'/>"
      "<geom name='pad' type='box' size='.05 .05 .005' margin='.01' gap='.01' mass='.5'/></body>"
      "<body name='box' pos='0 0 .1'><freejoint/><geom name='cube' type='box' size='.1 .1 .1' mass='.2'/></body>"
      "</worldbody><actuator><position name='lift' joint='lift' kp='500' ctrlrange='-.1 .3' ctrllimited='true'/>"
      "<general name='stick' body='gripper' dyntype='filter' dynprm='0.02' gainprm='10' ctrlrange='0 1' "
      "ctrllimited='true'/></actuator></mujoco>";
  grit_model *m;
  grit_data *d;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_na(m), 1);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[2] = {0.0, 0.7};
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int s = 0; s < 20; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(compare(d, m), 1, "the pad and the cube are one island");
  const int nv = grit_model_nv(m), nx = 2 * nv + 1;
  double *A = calloc((size_t)nx * nx, sizeof *A), B[2 * (2 * 7 + 1)];
  cr_assert_eq(nv, 7);
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(A[(size_t)(nv + 3) * nx + 2 * nv] != 0.0, "the activation does not reach the cube's vertical velocity");
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}

/* The muscle arm (six muscles on tendons), the chain of every actuator kind (filter and integrator among
 * servos, clamps and saturations) and dm_control's quadruped (twelve filter servos, on the floor). */
Test(derivatives_blocks, activation_models_equal_dense_exactly) {
  const char *files[2] = {GRIT_SOURCE_DIR "/tests/models/mujoco_model/arm26.xml",
                          GRIT_SOURCE_DIR "/tests/models/dm_control_suite/quadruped.xml"};
  for (int f = 0; f < 3; ++f) {
    grit_model *m = NULL;
    char msg[GRIT_MESSAGE_SIZE];
    if (f < 2) cr_assert_eq(grit_mjcf_load_file(files[f], &m, NULL, msg), GRIT_OK, "%s", msg);
    else m = as_build_ex(2e-3, 0);
    cr_assert(m && grit_model_na(m) > 0);
    grit_data *d;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    const int nu = grit_model_nu(m);
    double *u = malloc(sizeof(double) * (size_t)nu);
    for (int s = 1; s <= 200; ++s) {
      for (int a = 0; a < nu; ++a) u[a] = 0.5 * sin(0.05 * s + a);
      cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
      cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
      if (s % 100 == 0) cr_assert_geq(compare(d, m), 1);
    }
    free(u);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The blocks against central differences of the step: the pendulums without the boxes and the floor
 * (hinges only, so that the state's coordinates are its tangent; no constraint, the solve is exact):
 * step 1e-6, truncation ~1e-12 relative, round-off ~1e-10 (as test_actuation.c). */
Test(derivatives_blocks, activations_match_central_differences) {
  static const char *xml =
      "<mujoco><option timestep='0.002'/><worldbody>"
      "<body pos='0 0 0.6'><joint name='a' type='hinge' axis='0 1 0' range='-20 20'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03'/></body>"
      "<body pos='1 0 0.6'><joint name='b' type='hinge' axis='0 1 0' range='-60 90'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
      "<body pos='0 0 -0.3'><joint name='c' type='hinge' axis='0 1 0' damping='0.1'/>"
      "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.03'/></body></body>"
      "</worldbody><actuator><general joint='c' dyntype='integrator' gainprm='0.5'/>"
      "<motor joint='a' ctrlrange='-3 3' ctrllimited='true'/>"
      "<general joint='a' dyntype='filter' dynprm='0.05' gainprm='10' biastype='affine' biasprm='0 -10 0'/>"
      "<muscle joint='b' ctrllimited='true' ctrlrange='0 1' gear='0.05'/></actuator></mujoco>";
  enum { NQ = 3, NA = 3, NU = 4, NX = 2 * NQ + NA };
  grit_model *m;
  grit_data *d;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_na(m), NA);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double x[NX] = {0.2, 0.7, -0.5, 0.3, -0.6, 0.9, 0.2, 0.4, 0.3}, u[NU] = {0.6, 1.2, 0.5, 0.7};
  double xn[NX], A[NX * NX], B[NX * NU], Afd[NX * NX], Bfd[NX * NU];
  fdj_step_from(d, x, u, xn);
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_count(J), 2);
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A, B), GRIT_OK);
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, NX * NX), eb = fdj_rel_err(B, Bfd, NX * NU);
  cr_log_info("pendulums with activations, blocks: A rel err %.3g, B rel err %.3g", ea, eb);
  cr_assert_lt(ea, 1e-6);
  cr_assert_lt(eb, 1e-6);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}
