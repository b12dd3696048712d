/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_rnea.c — the smooth dynamics' analytic partials (derivatives_rnea.c) in the position
 * and velocity passes of grit_step_derivatives: A and B against the dual-number path they replace
 * (ws->no_rnea), on hinge and slide chains, a free-floating branched tree, a ball-joint chain and
 * gravity compensation, with springs, damping, armature, contacts and joint limits under each contact
 * model; and A's columns against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "fd_tangent.h"
#include "xml_load_util.h"

/* A fixed-base arm: hinges about skew axes (two on one body), a slide, springs, damping, armature, a limit, gravity
 * compensation on one link, motors and a servo on a fixed tendon, and its tip sphere pressed on the
 * floor. */
static const char *CHAIN =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.5'><joint name='a' type='hinge' axis='0 0.3 1' damping='0.2' armature='0.01'/>"
    " <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.03' mass='1'/>"
    " <body pos='0.2 0 0' gravcomp='0.5'><joint name='b' type='hinge' axis='0 1 0.2' stiffness='3' springref='0.2' "
    "range='-90 90'/><joint name='b2' type='hinge' pos='0.02 0 0' axis='1 0 0.3' damping='0.1'/>"
    "  <geom type='capsule' fromto='0 0 0 0.2 0.05 -0.1' size='0.03' mass='0.8'/>"
    "  <body pos='0.2 0.05 -0.1'><joint name='s' type='slide' axis='0.2 0 -1' damping='1' stiffness='20' range='-0.1 0.3'/>"
    "   <geom type='capsule' fromto='0 0 0 0.05 0 -0.2' size='0.025' mass='0.5'/>"
    "   <body pos='0.05 0 -0.2'><joint name='c' type='hinge' axis='1 0 0' range='-45 45'/>"
    "    <geom type='sphere' pos='0.02 0.03 -0.1' size='0.06' mass='0.4'/></body></body></body></body>"
    "</worldbody>"
    "<tendon><fixed name='t'><joint joint='a' coef='0.5'/><joint joint='c' coef='-0.3'/></fixed></tendon>"
    "<actuator><motor joint='a' gear='2'/><motor joint='b'/><motor joint='s' gear='10'/>"
    "<position tendon='t' kp='5'/></actuator></mujoco>";

/* A floating torso with a ball-jointed head and two legs of two hinges (limited knees), feet on the
 * floor, motors at the hips: one branched free-floating tree of 13 dofs. */
static const char *TREE =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' pos='0.01 0 0.02' size='0.12 0.08 0.05' mass='4'/>"
    " <body pos='0 0 0.08'><joint type='ball' damping='0.05'/><geom type='sphere' pos='0.02 0 0.08' size='0.05' mass='0.5'/></body>"
    " <body pos='0 0.06 -0.05'><joint name='h1' type='hinge' axis='0 1 0' range='-60 60' damping='0.1'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0' stiffness='2'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60' armature='0.02'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint name='k2' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    "</body></worldbody>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

/* A chain of three ball joints hanging from a fixed point, spinning, its end on the floor, and a
 * limited hinge on the last link. */
static const char *BALLS =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.6'><joint type='ball' damping='0.02'/>"
    " <geom type='capsule' fromto='0 0 0 0.1 0 -0.25' size='0.03' mass='1'/>"
    " <body pos='0.1 0 -0.25' gravcomp='0.3'><joint type='ball'/><geom type='capsule' fromto='0 0 0 0 0.1 -0.2' size='0.03' mass='0.7'/>"
    "  <body pos='0 0.1 -0.2'><joint type='ball' armature='0.01'/><geom type='capsule' fromto='0 0 0 0.05 0 -0.15' size='0.025' "
    "mass='0.5'/>"
    "   <body pos='0.05 0 -0.15'><joint type='hinge' axis='0 1 0.3' range='-30 30'/>"
    "    <geom type='sphere' pos='0 0 -0.05' size='0.05' mass='0.3'/></body></body></body></body>"
    "</worldbody></mujoco>";

static grit_data *prepare(const char *xml, grit_model **m, grit_contact_model model, int steps) {
  return moving_data_model(xml, m, model, 0.7, steps); /* a spinning start: velocity products matter */
}

/* The largest |entry| of column j of an r x c row-major matrix. */
static double col_max(const double *X, int r, int c, int j) {
  double a = 0.0;
  for (int i = 0; i < r; ++i) a = fmax(a, fabs(X[i * c + j]));
  return a;
}

/* The largest difference of two r x c matrices relative to each column's largest entry. */
static double col_diff(const double *X, const double *Y, int r, int c) {
  double worst = 0.0;
  for (int j = 0; j < c; ++j) {
    const double s = fmax(col_max(Y, r, c, j), 1e-300);
    for (int i = 0; i < r; ++i) worst = fmax(worst, fabs(X[i * c + j] - Y[i * c + j]) / s);
  }
  return worst;
}

/* The same derivative in two orders of operations: the residual's partials agree to round-off (1e-16
 * of the terms summed), and the solve with the kept factor multiplies that by A's condition number at
 * most (mass ratios of about 50, stiff contacts and springs here): measured 0 .. 4e-14, and 3.4e-13 on
 * the ball chain pressed into the floor under SAP. 2e-12 leaves 6 times that, while scaling the
 * analytic dID/dq0 by 1.001 shows 3e-6 .. 1e-3, h dc/dv0 by 1.001 3e-6 .. 6e-5, and the Delassus
 * estimates' z^T dM z (derivatives_delassus.c) by 1.01 3e-8 .. 5e-5: every term is checked well above
 * the tolerance. */
static void compare(grit_model *m, grit_data *d, int model) {
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid, "the analytic path ran");
  d->deriv->no_rnea = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!d->deriv->rn_valid, "the dual path ran");
  const double ea = col_diff(A1, A2, nx, nx), eb = nu ? col_diff(B1, B2, nx, nu) : 0.0;
  cr_log_info("model %d: A %.3g, B %.3g (largest difference relative to its column's largest entry)", model, ea, eb);
  cr_expect(ea < 2e-12, "model %d: A %.3g", model, ea);
  cr_expect(eb < 2e-12, "model %d: B %.3g", model, eb);
  /* the closed-form kinematic partials (derivatives_rigid.c, several hinges on a body too) against the
   * dual kinematics, both with the analytic dynamics: measured 0 .. 1.6e-13, and 2.4e-12 on the tree
   * under SAP, whose bodies have one joint each (the closed form as before this file); taking the
   * parent's twist for the second hinge of a body shows 2e-3 .. 0.1 */
  int rigid = 0;
  for (int t = 0; t < grit_model_ntree(m); ++t) rigid |= d->deriv->rigid[t], d->deriv->rigid[t] = 0;
  if (rigid) {
    d->deriv->no_rnea = 0;
    cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    const double er = col_diff(A1, A2, nx, nx);
    cr_log_info("model %d: closed-form kinematics against the dual kinematics: A %.3g", model, er);
    cr_expect(er < 1e-11, "model %d: A %.3g", model, er);
  }
  free(A1), free(A2), free(B1), free(B2);
}

static void same_as_dual(const char *xml, grit_contact_model model, int steps, int want_contacts) {
  grit_model *m;
  grit_data *d = prepare(xml, &m, model, steps);
  if (want_contacts) cr_assert(grit_data_ncontacts(d) > 0, "the scene is in contact");
  compare(m, d, model);
  grit_data_free(d);
  grit_model_free(m);
}

/* Public robot files as bench_mujoco --robots loads them (the file's options), after 200 steps: the
 * CMU humanoid (62 dofs, a free root and bodies of up to three hinges, Lagged with limits) and the
 * dm_control quadruped (fixed-tendon servos with activations, so A has the activations' rows). */
static void robot_same_as_dual(const char *path) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int i = 0; i < 200; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_data_ncontacts(d) > 0, "the robot is on the floor");
  compare(m, d, grit_data_step_settings(d).contact_model);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_rnea, humanoid_cmu_file) { robot_same_as_dual(GRIT_SOURCE_DIR "/tests/models/dm_control_suite/humanoid_CMU.xml"); }
Test(derivatives_rnea, quadruped_file) { robot_same_as_dual(GRIT_SOURCE_DIR "/tests/models/dm_control_suite/quadruped.xml"); }

Test(derivatives_rnea, chain_lagged) { same_as_dual(CHAIN, GRIT_CONTACT_LAGGED, 150, 1); }
Test(derivatives_rnea, chain_sap) { same_as_dual(CHAIN, GRIT_CONTACT_SAP, 150, 1); }
Test(derivatives_rnea, tree_lagged) { same_as_dual(TREE, GRIT_CONTACT_LAGGED, 150, 1); }
Test(derivatives_rnea, tree_similar) { same_as_dual(TREE, GRIT_CONTACT_SIMILAR, 150, 1); }
Test(derivatives_rnea, tree_sap) { same_as_dual(TREE, GRIT_CONTACT_SAP, 150, 1); }
Test(derivatives_rnea, balls_lagged) { same_as_dual(BALLS, GRIT_CONTACT_LAGGED, 100, 1); }
Test(derivatives_rnea, balls_sap) { same_as_dual(BALLS, GRIT_CONTACT_SAP, 150, 1); }
Test(derivatives_rnea, tree_in_flight) { same_as_dual(TREE, GRIT_CONTACT_LAGGED, 5, 0); }

/* A's columns (positions and velocities) against central differences of the step in the tangent space,
 * relative Frobenius error of the block. */
static double against_fd(const char *xml, grit_contact_model model, int steps, double hfd) {
  grit_model *m, *m2;
  grit_data *d = prepare(xml, &m, model, steps);
  grit_data *d2 = prepare(xml, &m2, model, steps); /* the same history: the same warm start */
  double fd_norm;
  const double rel = fdt_state_columns(d, d2, hfd, 1, &fd_norm);
  cr_assert(d->deriv->rn_valid, "the analytic path ran");
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
  return rel;
}

/* In flight (no contact: the smooth dynamics alone), central differences at h = 1e-6 are accurate to
 * about h^2 |x'''| + eps / h ~ 1e-10 relative (measured 1.4e-11 on the tree); dID/dq0 scaled by 1.001
 * shows 5e-7, h dc/dv0 scaled by 1.001 2.3e-8, so 2e-9 tells a wrong term from round-off. */
Test(derivatives_rnea, tree_in_flight_against_central_differences) {
  const double rel = against_fd(TREE, GRIT_CONTACT_LAGGED, 5, 1e-6);
  cr_log_info("tree in flight: relative Frobenius error %.3g", rel);
  cr_expect(rel < 2e-9, "%.3g", rel);
}

/* The ball chain (quaternions, the momentum correction): measured 3.6e-9; scaled by 1.001, dID/dq0
 * shows 1.3e-4 and h dc/dv0 2.6e-6. */
Test(derivatives_rnea, balls_against_central_differences) {
  const double rel = against_fd(BALLS, GRIT_CONTACT_SAP, 5, 1e-6);
  cr_log_info("ball chain: relative Frobenius error %.3g", rel);
  cr_expect(rel < 2e-8, "%.3g", rel);
}

/* In contact with limits (SAP: smooth in its inputs), measured 5e-11; with dID/dq0 scaled by 1.001,
 * 6e-7 (h dc/dv0: 8e-8). */
Test(derivatives_rnea, chain_in_contact_against_central_differences) {
  const double rel = against_fd(CHAIN, GRIT_CONTACT_SAP, 150, 1e-6);
  cr_log_info("chain in contact: relative Frobenius error %.3g", rel);
  cr_expect(rel < 5e-9, "%.3g", rel);
}

/* The inertia's rate in 18 numbers (grit_rnea_inertia_rate) and its product (grit_rnea_rate_mulv)
 * against the 6 x 6 matrix formed column by column, B e_c = V x* (I e_c) - I (V x e_c), as the
 * recursion did before: the same values, bit for bit, on random inertias and twists (some entries zero). */
static double lcg(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

Test(derivatives_rnea, inertia_rate_same_bits_as_columns) {
  unsigned long long seed = 12345;
  static const int pos[RATE_N][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2},
                                     {0, 4}, {0, 5}, {1, 3}, {1, 5}, {2, 3}, {2, 4}, {3, 2}, {4, 0}, {5, 1}};
  for (int trial = 0; trial < 2000; ++trial) {
    grit_sinertia s;
    double V[6], x[6], full[36] = {0}, B[RATE_N] = {0}, y[6], yf[6];
    s.m = 1.0 + lcg(&seed);
    for (int i = 0; i < 3; ++i) s.h[i] = lcg(&seed);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j <= i; ++j) s.I[3 * i + j] = s.I[3 * j + i] = (i == j ? 2.0 : 0.0) + lcg(&seed);
    for (int i = 0; i < 6; ++i) V[i] = trial % 7 == i ? 0.0 : 3.0 * lcg(&seed), x[i] = lcg(&seed);
    for (int c = 0; c < 6; ++c) {
      double e[6] = {0, 0, 0, 0, 0, 0}, Ie[6], a[6], t[6], u[6];
      e[c] = 1.0;
      grit_si_apply(Ie, &s, e);
      grit_sv_cross_force(a, V, Ie);
      grit_sv_cross_motion(t, V, e);
      grit_si_apply(u, &s, t);
      for (int i = 0; i < 6; ++i) full[6 * i + c] += a[i] - u[i];
    }
    grit_rnea_inertia_rate(B, &s, V);
    int stored[36] = {0};
    for (int k = 0; k < RATE_N; ++k) {
      const int i = pos[k][0], c = pos[k][1];
      cr_assert(B[k] == full[6 * i + c], "trial %d entry (%d, %d): %.17g, columns %.17g", trial, i, c, B[k], full[6 * i + c]);
      stored[6 * i + c] = 1;
    }
    cr_assert(B[10] == full[6 * 5] && B[11] == full[6 * 3 + 1] && B[14] == full[6 * 4 + 2], "trial %d: the shared entries", trial);
    stored[6 * 5] = stored[6 * 3 + 1] = stored[6 * 4 + 2] = 1;
    for (int i = 0; i < 36; ++i) cr_assert(stored[i] || full[i] == 0.0, "trial %d: entry %d is %.3g, not zero", trial, i, full[i]);
    grit_rnea_rate_mulv(y, B, x);
    for (int i = 0; i < 6; ++i) {
      double acc = 0.0;
      for (int j = 0; j < 6; ++j) acc += full[6 * i + j] * x[j];
      yf[i] = acc;
      cr_assert(y[i] == yf[i], "trial %d row %d: %.17g, 6 x 6 %.17g", trial, i, y[i], yf[i]);
    }
  }
}

/* The recursions' AVX2 build (the pairs four dot products at a time, grit_rnea_add_columns a row at a
 * time) against the baseline build (rn.no_simd): the same operations, so A and B bit for bit, on the
 * chain (gravity compensation, two hinges on a body), the tree (free and ball groups) and the balls. */
static void same_bits_without_simd(const char *xml, grit_contact_model model, int steps) {
  grit_model *m;
  grit_data *d = prepare(xml, &m, model, steps);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid, "the analytic path ran");
  d->deriv->rn.no_simd = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(memcmp(A1, A2, sizeof(double) * (size_t)nx * nx) == 0, "A: the same bits");
  cr_assert(memcmp(B1, B2, sizeof(double) * ((size_t)nx * nu + 1)) == 0, "B: the same bits");
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_rnea, chain_same_bits_without_simd) { same_bits_without_simd(CHAIN, GRIT_CONTACT_LAGGED, 150); }
Test(derivatives_rnea, tree_same_bits_without_simd) { same_bits_without_simd(TREE, GRIT_CONTACT_SAP, 150); }
Test(derivatives_rnea, balls_same_bits_without_simd) { same_bits_without_simd(BALLS, GRIT_CONTACT_LAGGED, 100); }

/* MuJoCo's humanoid (27 dofs: passes of 8, 8, 8 and 3 seeded lanes, so add_columns_avx2's whole rows and
 * its masked rows both run) on the floor: A, B the same bits without the SIMD paths. */
Test(derivatives_rnea, humanoid_same_bits_without_simd) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < 150; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid, "the analytic path ran");
  d->deriv->rn.no_simd = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(memcmp(A1, A2, sizeof(double) * (size_t)nx * nx) == 0, "A: the same bits");
  cr_assert(memcmp(B1, B2, sizeof(double) * (size_t)nx * nu) == 0, "B: the same bits");
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* A contact body's twist in position passes by its moved dofs' partials only (grit_deriv_body_twist)
 * against every dof's (rn.no_twist_skip): the same bits of A and B, dense and block form. The path's
 * central differences: chain_in_contact_against_central_differences (the default path). */
static void twist_flag_same_bits(grit_model *m, grit_data *d, int *flag) {
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m), nu = grit_model_nu(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int off = 0; off <= 1; ++off) {
    *flag = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], nu ? B[2 * off] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], nu ? B[2 * off + 1] : NULL);
  }
  *flag = 0;
  cr_assert(d->ncontacts > 0, "in contact");
  for (int k = 0; k < 2; ++k) {
    cr_expect(memcmp(A[k], A[k + 2], sizeof(double) * na) == 0, "A (%s): the same bits", k ? "block" : "dense");
    cr_expect(memcmp(B[k], B[k + 2], sizeof(double) * nb) == 0, "B (%s): the same bits", k ? "block" : "dense");
  }
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
}

static void twist_skip_same_bits(grit_model *m, grit_data *d) { twist_flag_same_bits(m, d, &d->deriv->rn.no_twist_skip); }

/* The twist's sums in locals (body_twist_regs) against through S at every dof (rn.no_twist_regs): the
 * same bits of A and B, dense and block form, on the same scenes. */
static void twist_regs_same_bits(grit_model *m, grit_data *d) { twist_flag_same_bits(m, d, &d->deriv->rn.no_twist_regs); }

static void twist_scenes(void (*check)(grit_model *, grit_data *)) {
  const char *xml[3] = {CHAIN, TREE, BALLS};
  const grit_contact_model model[3] = {GRIT_CONTACT_SAP, GRIT_CONTACT_LAGGED, GRIT_CONTACT_LAGGED};
  for (int s = 0; s < 3; ++s) {
    grit_model *m;
    grit_data *d = prepare(xml[s], &m, model[s], 150);
    check(m, d);
    grit_data_free(d);
    grit_model_free(m);
  }
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < 150; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  check(m, d);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_rnea, contact_twist_skip_same_bits) { twist_scenes(twist_skip_same_bits); }

Test(derivatives_rnea, contact_twist_regs_same_bits) { twist_scenes(twist_regs_same_bits); }
