/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_rnea_tendon.c — trees with tendon, site and slider-crank actuators on the smooth
 * dynamics' analytic path (derivatives_rnea.c): muscles and motors (no implicit slopes in A) and servos
 * whose slopes c J^T J in A move with q0 (their partials from the transmissions' dual moments:
 * grit_deriv_tendon_operator_rows). A and B against the dual path (ws->no_rnea) and against central
 * differences of the step; MuJoCo's arm26 (six muscles on wrapping tendons) and slider-crank (position
 * servos), and a wrapped spatial tendon servo with a site actuator on an arm pressing the floor (SAP:
 * the contact's Delassus estimate reads A's tendon slopes, so those trees keep a dual A). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_tendon.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"

static const char *ARM =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<site name='s0' pos='0 0.02 0.5'/>"
    "<body pos='0 0 0.42'><joint name='a' type='hinge' axis='0 1 0' damping='0.1'/>"
    " <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
    " <geom name='wrap' type='cylinder' pos='0.3 0 0' size='0.04 0.05' zaxis='0 1 0' contype='0' conaffinity='0'/>"
    " <site name='side' pos='0.3 0 0.08'/>"
    " <body pos='0.3 0 0'><joint name='b' type='hinge' axis='0 1 0.1' damping='0.05'/>"
    "  <geom type='capsule' fromto='0 0 0 0.2 0 -0.25' size='0.03' mass='0.7'/>"
    "  <site name='s1' pos='0.1 0 -0.12'/><site name='tip' pos='0.2 0 -0.25'/>"
    "  <body pos='0.2 0 -0.25'><joint name='c' type='hinge' axis='1 0 0' stiffness='2'/>"
    "   <geom type='sphere' pos='0 0.02 -0.08' size='0.05' mass='0.3'/></body></body></body>"
    "</worldbody>"
    "<tendon><spatial name='t'><site site='s0'/><geom geom='wrap' sidesite='side'/><site site='s1'/></spatial></tendon>"
    "<actuator><general tendon='t' gainprm='30' biastype='affine' biasprm='0 -30 -2'/>"
    "<general site='tip' gear='0 0 1 0 0 0' gainprm='1' biastype='affine' biasprm='0 0 -3'/>"
    "<motor joint='c'/></actuator></mujoco>";

static void start(grit_model *m, grit_data **d, grit_contact_model model, int steps) {
  cr_assert_eq(grit_data_create(m, d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(*d, &s), GRIT_OK);
  const int nu = grit_model_nu(m), nv = grit_model_nv(m);
  double u[8] = {0.3, -0.2, 0.5, 0.1, 0.7, 0.4, 0.2, 0.6};
  if (nu) cr_assert_eq(grit_data_set_ctrl(*d, u, nu < 8 ? nu : 8), GRIT_OK);
  double v[16] = {0};
  for (int i = 0; i < nv && i < 16; ++i) v[i] = 0.7 * sin(1.3 * i + 0.4);
  cr_assert_eq(grit_data_set_qvel(*d, v, nv < 16 ? nv : 16), GRIT_OK);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(*d), GRIT_OK, "%s", grit_data_last_error(*d));
}

static grit_model *load(const char *xml, const char *path) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.lenient = 1;
  if (xml) cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  else cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

/* Whether some tree with a tendon, site or slider-crank actuator took the analytic path. */
static int tendon_tree_on(const grit_model *m, const grit_data *d) {
  for (int a = 0; a < m->nu; ++a)
    if (m->act_trntype[a] != GRIT_TRN_JOINT && d->deriv->rn.on[m->dof_tree[m->act_dof[a]]]) return 1;
  return 0;
}

/* Against the dual path: the same derivative in two orders of operations (round-off, 2e-12 as in
 * test_derivatives_rnea.c); leaving out the tendon slopes' partials (ws->tnA cleared) must show. */
static void same_as_dual(grit_model *m, grit_contact_model model, int steps, int want_slopes) {
  grit_data *d;
  start(m, &d, model, steps);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid && tendon_tree_on(m, d), "the analytic path ran on the tendons' trees");
  d->deriv->no_rnea = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!d->deriv->rn_valid, "the dual path ran");
  const double ea = col_rel_diff(A1, A2, nx, nx), eb = col_rel_diff(B1, B2, nx, nu);
  cr_log_info("contacts %d: A %.3g, B %.3g against the dual path", grit_data_ncontacts(d), ea, eb);
  cr_expect(ea < 2e-12, "A %.3g", ea);
  cr_expect(eb < 2e-12, "B %.3g", eb);
  if (want_slopes) { /* the moving slopes matter here: without their partials A is off */
    int any = 0;
    for (int t = 0; t < grit_model_ntree(m); ++t) any |= d->deriv->tnA[t], d->deriv->tnA[t] = 0;
    cr_assert(any, "a tree has moving tendon slopes");
    d->deriv->no_rnea = 0;
    cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    const double ew = col_rel_diff(A1, A2, nx, nx);
    cr_log_info("without the slopes' partials: A %.3g", ew);
    cr_expect(ew > 1e-8, "the slopes' partials are seen (%.3g)", ew);
  }
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
}

/* A's and B's columns against central differences of the step (tangent space), relative Frobenius
 * error of the whole of A and B. */
static double against_fd(grit_model *m, grit_contact_model model, int steps, double hfd) {
  grit_data *d, *d2;
  start(m, &d, model, steps);
  start(m, &d2, model, steps); /* the same history: the same warm start */
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  cr_assert_eq(grit_model_na(m), 0);
  double *q0 = malloc(sizeof(double) * nq), *v0 = malloc(sizeof(double) * nv), *qref = malloc(sizeof(double) * nq);
  double *u0 = malloc(sizeof(double) * (nu + 1)), *up = malloc(sizeof(double) * (nu + 1));
  memcpy(q0, grit_data_qpos(d), sizeof(double) * nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * nv);
  memcpy(u0, d->ctrl, sizeof(double) * nu);
  cr_assert_eq(grit_step(d), GRIT_OK);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid && tendon_tree_on(m, d), "the analytic path ran on the tendons' trees");
  double *qp = malloc(sizeof(double) * nq), *vp = malloc(sizeof(double) * nv), *e = malloc(sizeof(double) * nv), *x[2];
  x[0] = malloc(sizeof(double) * nx), x[1] = malloc(sizeof(double) * nx);
  double num = 0.0, den = 0.0;
  for (int col = 0; col < nx + nu; ++col)
    for (int sgn = 0; sgn < 2; ++sgn) {
      const double s = sgn ? hfd : -hfd;
      memcpy(qp, q0, sizeof(double) * nq);
      memcpy(vp, v0, sizeof(double) * nv);
      memcpy(up, u0, sizeof(double) * nu);
      for (int i = 0; i < nv; ++i) e[i] = i == col ? s : 0.0;
      if (col < nv) grit_integrate_positions(m, qp, e, 1.0);
      else if (col < nx) vp[col - nv] += s;
      else up[col - nx] += s;
      cr_assert_eq(grit_data_set_qpos(d2, qp, nq), GRIT_OK);
      cr_assert_eq(grit_data_set_qvel(d2, vp, nv), GRIT_OK);
      if (nu) cr_assert_eq(grit_data_set_ctrl(d2, up, nu), GRIT_OK);
      cr_assert_eq(grit_step(d2), GRIT_OK);
      grit_position_difference(m, qref, grit_data_qpos(d2), x[sgn]);
      memcpy(x[sgn] + nv, grit_data_qvel(d2), sizeof(double) * nv);
      if (!sgn) continue;
      for (int i = 0; i < nx; ++i) {
        const double fd = (x[1][i] - x[0][i]) / (2 * hfd);
        const double an = col < nx ? A[i * nx + col] : B[i * nu + col - nx];
        num += (an - fd) * (an - fd);
        den += fd * fd;
      }
    }
  free(q0), free(v0), free(qref), free(u0), free(up), free(A), free(B), free(qp), free(vp), free(e), free(x[0]), free(x[1]);
  grit_data_free(d), grit_data_free(d2);
  return sqrt(num) / sqrt(den);
}

Test(derivatives_rnea_tendon, arm26_same_as_dual) {
  grit_model *m = load(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_model/arm26.xml");
  same_as_dual(m, GRIT_CONTACT_LAGGED, 60, 0);
  grit_model_free(m);
}

Test(derivatives_rnea_tendon, slider_crank_same_as_dual) {
  grit_model *m = load(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_model/slider_crank.xml");
  same_as_dual(m, GRIT_CONTACT_LAGGED, 60, 1);
  grit_model_free(m);
}

Test(derivatives_rnea_tendon, wrapped_servo_same_as_dual) {
  grit_model *m = load(ARM, NULL);
  same_as_dual(m, GRIT_CONTACT_LAGGED, 20, 1);
  grit_model_free(m);
}

Test(derivatives_rnea_tendon, wrapped_servo_in_contact_sap_same_as_dual) {
  grit_model *m = load(ARM, NULL);
  same_as_dual(m, GRIT_CONTACT_SAP, 40, 1); /* still moving: the slopes' partials matter */
  grit_model_free(m);
}

/* Central differences at h = 1e-6 in flight: round-off about 1e-10 relative; a missing term shows far
 * above (the slopes' partials left out: see same_as_dual). (arm26's muscles: the activations' state, and
 * no slopes: the dual comparison above.) */
Test(derivatives_rnea_tendon, against_central_differences) {
  for (int k = 0; k < 2; ++k) {
    grit_model *m = k == 0 ? load(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_model/slider_crank.xml") : load(ARM, NULL);
    const double rel = against_fd(m, GRIT_CONTACT_LAGGED, 20, 1e-6);
    cr_log_info("model %d: relative Frobenius error of A, B %.3g", k, rel);
    cr_expect(rel < 1e-7, "model %d: %.3g", k, rel);
    grit_model_free(m);
  }
}

/* The spatial tendons' lengths and moments on four lanes (derivatives_tendon_narrow.c) against all eight
 * (ws->tn->no_narrow): A and B the same bytes, dense and block form. */
static void narrow_same(grit_model *m, int steps) {
  grit_data *d;
  start(m, &d, GRIT_CONTACT_LAGGED, steps);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
    d->deriv->tn->no_narrow = k;
    const unsigned long before = d->deriv->tn->narrow_evals;
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(k == 1 || d->deriv->tn->narrow_evals > before, "the four lanes served");
  }
  cr_expect(memcmp(A[0], A[1], sizeof(double) * na) == 0, "A: the same bytes");
  cr_expect(memcmp(B[0], B[1], sizeof(double) * (nb - 1)) == 0, "B: the same bytes");
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int k = 0; k < 2; ++k) {
    d->deriv->tn->no_narrow = k;
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[k], B[k]), GRIT_OK);
  }
  cr_expect(memcmp(A[0], A[1], sizeof(double) * na) == 0, "blocks: A the same bytes");
  cr_expect(memcmp(B[0], B[1], sizeof(double) * (nb - 1)) == 0, "blocks: B the same bytes");
  grit_jacobian_blocks_free(J);
  free(A[0]), free(A[1]), free(B[0]), free(B[1]);
  grit_data_free(d);
}

Test(derivatives_rnea_tendon, narrow_lanes_same_bytes) {
  const char *files[2] = {GRIT_SOURCE_DIR "/tests/models/mujoco_model/arm26.xml", GRIT_SOURCE_DIR "/tests/mjcf/tendon_actuators.xml"};
  for (int k = 0; k < 3; ++k) {
    grit_model *m = k < 2 ? load(NULL, files[k]) : load(ARM, NULL);
    narrow_same(m, 30);
    grit_model_free(m);
  }
}
