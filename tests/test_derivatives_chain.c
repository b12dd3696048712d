/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_chain.c — position passes that leave out the bodies and contacts their seeded dofs
 * do not move (derivatives_chain.c), on a branched tree in contact: A and B against the passes that
 * recompute every body and contact (ws->no_chain), for the three contact models, and A's position
 * columns against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "test_util.h"
#include "grit/mjcf.h"
#include "solver.h"
#include "loop_scene.h"
#include "xml_load_util.h"

/* The entries of A (nx x nx) and B (nx x nu) in which two calls' results differ (== takes -0 == 0). */
static int ab_differ(const double *A1, const double *A2, const double *B1, const double *B2, int nx, int nu) {
  int differ = 0;
  for (int i = 0; i < nx * nx; ++i) differ += A1[i] != A2[i];
  for (int i = 0; i < nx * nu; ++i) differ += B1[i] != B2[i];
  return differ;
}

/* A floating torso with six legs of two hinges each (limited knees), capsule feet on the floor, and
 * motors at the hips: one tree of 18 dofs, so three position passes: the first seeds the root and the
 * first leg (every body moves), the second legs 2-5 (the torso, legs 1 and 6 and their feet's contacts
 * stay put), the third leg 6 (with a spare lane: the Lagged contacts take the full path there). */
#define LEG(y, x, name)                                                                                  \
  " <body pos='" x " " y " -0.05'><joint name='h" name "' type='hinge' axis='0 1 0' range='-60 60'/>"      \
  "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"                             \
  "  <body pos='0.02 0 -0.25'><joint name='k" name "' type='hinge' axis='0.1 1 0' range='-80 0'/>"       \
  "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/></body></body>"
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' size='0.25 0.1 0.05' mass='4'/>"
    LEG("0.08", "0.2", "1") LEG("-0.08", "0.2", "2") LEG("0.08", "0", "3") LEG("-0.08", "0", "4")
    LEG("0.08", "-0.2", "5") LEG("-0.08", "-0.2", "6")
    "</body></worldbody>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/><motor joint='h3' gear='5'/>"
    "<motor joint='h4' gear='5'/><motor joint='h5' gear='5'/><motor joint='h6' gear='5'/></actuator></mujoco>";

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
  const double u[6] = {0.0, 0.0, 0.1, -0.1, 0.0, 0.0};
  cr_assert_eq(grit_data_set_ctrl(d, u, 6), GRIT_OK);
  for (int i = 0; i < 150; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The same operations on the same values: A and B equal entry by entry (== : a zero partial may carry
 * either sign), and the passes did leave out bodies and contacts. */
static void same_as_full(grit_contact_model model, int regularize) {
  grit_model *m;
  grit_data *d = prepare(&m, model);
  if (regularize) {
    grit_step_settings s = d->settings;
    s.regularize_lagged = 1;
    cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK);
  }
  cr_assert(grit_data_ncontacts(d) >= 2, "feet touch: %d", grit_data_ncontacts(d));
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  cr_assert_eq(nv, 18);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->chain_skips[0] > 0 && d->deriv->chain_skips[1] > 0, "bodies %lu, contacts %lu left out",
            d->deriv->chain_skips[0], d->deriv->chain_skips[1]);
  d->deriv->no_chain = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  int differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "model %d: %d entries differ", model, differ);
  /* and again with the skipping: nothing of the passes without it is left behind */
  d->deriv->no_chain = 0;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  differ = 0;
  for (int i = 0; i < nx * nx; ++i) differ += A1[i] != A2[i];
  cr_expect_eq(differ, 0, "model %d, second call: %d entries differ", model, differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_chain, sap_matches_the_full_passes) { same_as_full(GRIT_CONTACT_SAP, 0); }
Test(derivatives_chain, lagged_matches_the_full_passes) { same_as_full(GRIT_CONTACT_LAGGED, 0); }
Test(derivatives_chain, regularized_lagged_matches_the_full_passes) { same_as_full(GRIT_CONTACT_LAGGED, 1); }
Test(derivatives_chain, similar_matches_the_full_passes) { same_as_full(GRIT_CONTACT_SIMILAR, 0); }

/* A's position columns against central differences of the step in the tangent space, SAP (the
 * contacts left out still move through w). Relative Frobenius error of the block: measured 1.1e-4,
 * 1.1e-6, 1.7e-8 at h = 1e-6, 1e-7, 1e-8 (the differences' h^2 term); with the contacts on moved bodies
 * wrongly left out too it is 0.065: 1e-5 at h = 1e-7 tells them apart. */
Test(derivatives_chain, position_columns_match_central_differences) {
  grit_model *m, *m2;
  grit_data *d = prepare(&m, GRIT_CONTACT_SAP);
  grit_data *d2 = prepare(&m2, GRIT_CONTACT_SAP); /* the same history: the same warm start */
  double fd_norm;
  const double rel = fdt_position_columns(d, d2, 1e-7, &fd_norm);
  cr_assert(d->deriv->chain_skips[1] > 0);
  cr_log_info("position columns: relative Frobenius error %.3g (|FD| %.3g)", rel, fd_norm);
  cr_expect(rel < 1e-5, "%.3g", rel);
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
}

/* Joint friction, equalities and tendons in a tree (grit_cx_rows): a pass moving none of the bodies
 * their rows read takes the rows' kept values (derivatives_chain.c, cx_out). Six legs with feet sites,
 * a spring tendon between two feet, a tendon held at its length between two others, two knees coupled
 * by a joint equality and dry friction on a hip: A and B equal entry by entry to the full passes'. */
#define SLEG(y, x, name)                                                                                 \
  " <body pos='" x " " y " -0.05'><joint name='h" name "' type='hinge' axis='0 1 0' range='-60 60'"      \
  " frictionloss='0.2'/><geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"       \
  "  <body pos='0.02 0 -0.25'><joint name='k" name "' type='hinge' axis='0.1 1 0' range='-80 0'/>"       \
  "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/>"                       \
  "   <site name='f" name "' pos='-0.02 0 -0.25'/></body></body>"
static const char *XML_CX =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' size='0.25 0.1 0.05' mass='4'/>"
    SLEG("0.08", "0.2", "1") SLEG("-0.08", "0.2", "2") SLEG("0.08", "0", "3") SLEG("-0.08", "0", "4")
    SLEG("0.08", "-0.2", "5") SLEG("-0.08", "-0.2", "6")
    "</body></worldbody>"
    "<tendon><spatial name='t1' stiffness='200' damping='2'><site site='f1'/><site site='f2'/></spatial>"
    "<spatial name='t2'><site site='f5'/><site site='f6'/></spatial></tendon>"
    "<equality><tendon tendon1='t2'/><joint joint1='k3' joint2='k4'/></equality>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h3' gear='5'/><motor joint='h5' gear='5'/></actuator>"
    "</mujoco>";

Test(derivatives_chain, tendons_and_equalities_match_the_full_passes) {
  grit_model *m = xml_load_or_fail(XML_CX);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[3] = {0.2, -0.1, 0.1};
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  for (int i = 0; i < 150; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->chain_skips[2] > 0, "cx rows left out: %lu", d->deriv->chain_skips[2]);
  cr_assert(d->deriv->cx_clean_used > 0, "kept rows in w->cxJ: %lu", d->deriv->cx_clean_used);
  d->deriv->no_chain = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  int differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  /* the kept rows' J written whole into w->J (ws->no_cx_clean) against w->cxJ, +0 off their columns */
  d->deriv->no_chain = 0;
  d->deriv->no_cx_clean = 1;
  const unsigned long clean = d->deriv->cx_clean_used;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(d->deriv->cx_clean_used, clean);
  differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "no_cx_clean: %d entries differ", differ);
  /* the kept spring t1 left out (its gamma has no partials) against its J v and J^T gamma formed */
  cr_assert(d->deriv->spring_skipped > 0, "kept springs left out: %lu", d->deriv->spring_skipped);
  d->deriv->no_cx_clean = 0;
  d->deriv->no_spring_skip = 1;
  const unsigned long springs = d->deriv->spring_skipped;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(d->deriv->spring_skipped, springs);
  differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "no_spring_skip: %d entries differ", differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* The cx rows' J v and J^T gamma over their structural columns (derivatives_chain.c,
 * grit_deriv_chain_cx_jacobian_rows) against the span the residual scans (ws->no_cx_cols): the same
 * sums without their zero terms, so A and B equal entry by entry; on the legs above (spatial tendons,
 * a tendon and a joint equality, friction) and on MuJoCo's grid with pins (79 particles held by tendon
 * equalities: rows across two trees); and the constant rows in lanes against one by one (ws->no_lanes). */
static void cx_columns_same(grit_model *m, int nstep) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *u = calloc((size_t)nu + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) u[i] = 0.1 * (i % 3) - 0.1;
  cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  for (int i = 0; i < nstep; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->cx_cols_used > 0, "rows over their columns: %lu", d->deriv->cx_cols_used);
  d->deriv->no_cx_cols = 1;
  const unsigned long used = d->deriv->cx_cols_used;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(d->deriv->cx_cols_used, used);
  int differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  /* the linear joint and fixed-tendon couplings' constant rows solved with the other constant rows in
   * lanes (derivatives_delassus.c) against one by one */
  d->deriv->no_cx_cols = 0;
  d->deriv->no_lanes = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  differ = 0;
  differ += ab_differ(A1, A2, B1, B2, nx, nu);
  cr_expect_eq(differ, 0, "lanes: %d entries differ", differ);
  free(u), free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
}

Test(derivatives_chain, cx_rows_over_their_columns_match_the_span) {
  grit_model *m = xml_load_or_fail(XML_CX);
  cx_columns_same(m, 150);
  grit_model_free(m);
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_info info;
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/composite/grid2pin.xml", GRIT_SOURCE_DIR);
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  cx_columns_same(m, 20);
  grit_model_free(m);
}

/* A connect across trees, a weld and a connect in a tree (test_cx_columns.c's model, with motors and a
 * floor): their 3-row blocks' z = A^-1 J^T solved in lanes and their 2 dJ.z over their structural
 * columns (derivatives_delassus.c) against one by one and over all columns. */
static const char *XML_LOOP = LOOP_SCENE_XML_MOTORS;

Test(derivatives_chain, connect_and_weld_rows_match_the_span_and_one_by_one) {
  grit_model *m = xml_load_or_fail(XML_LOOP);
  cx_columns_same(m, 150);
  grit_model_free(m);
}

/* MuJoCo's softbox (one tree of 224 dofs, 651 tendon-equality rows): the kept rows' J in w->cxJ and their
 * J v, J^T gamma from the kept values against J written whole (ws->no_cx_clean), the dense factor of A
 * left out for the tree the Delassus partials solve in tree order against formed (ws->no_dense_skip),
 * the kept constant rows' short estimate against the general path (ws->no_kept_fast), their z three
 * rows at a time against one by one (ws->no_tree_group), the moved rows' J v and J^T gamma lane by lane
 * against dual.h's operations (ws->no_cx_avx2), the lean steps of kept rows (ws->no_cx_lean), the lanes' z
 * and g moved by rows and vectors (ws->no_lane_moves), the slides' zero terms left out of the lanes' sweep
 * (ws->no_slide_sweep; the softbox's 218 slides), the kept equality rows' short path in a call's later passes
 * (ws->no_cx_fused): A and B equal entry by entry. */
Test(derivatives_chain, softbox_kept_rows_and_dense_factor_left_out_match) {
  grit_model *m;
  grit_data *d = tu_file_stepped("tests/models/mujoco_composite/composite/softbox.xml", 3, 0, &m);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->cx_clean_used > 0, "kept rows in w->cxJ: %lu", d->deriv->cx_clean_used);
  cr_assert(d->deriv->dense_skipped > 0, "trees without the dense factor: %lu", d->deriv->dense_skipped);
  cr_assert(d->deriv->cx_kept_fast > 0, "kept rows' J v from their values: %lu", d->deriv->cx_kept_fast);
  cr_assert(d->deriv->kept_fast_used > 0, "kept rows' short estimates: %lu", d->deriv->kept_fast_used);
  cr_assert(d->deriv->cx_fast_used > 0, "kept rows' whole path: %lu", d->deriv->cx_fast_used);
  cr_assert(d->deriv->seed_pairs_used > 0, "- g . dq over the nonzero lanes: %lu", d->deriv->seed_pairs_used);
  cr_assert(d->deriv->cx_lean_used > 0, "kept rows' lean steps: %lu", d->deriv->cx_lean_used);
  cr_assert(d->deriv->cx_fused_used > 0, "kept rows' short path: %lu", d->deriv->cx_fused_used);
  for (int pass = 0; pass < 11; ++pass) {
    d->deriv->no_cx_clean = pass == 0, d->deriv->no_dense_skip = pass == 1, d->deriv->no_kept_fast = pass == 2;
    d->deriv->no_tree_group = pass == 3, d->deriv->no_cx_avx2 = pass == 4;
    d->deriv->no_cx_fast = pass == 5, d->deriv->no_seed_pairs = pass == 6, d->deriv->no_cx_lean = pass == 7;
    d->deriv->no_lane_moves = pass == 8, d->deriv->no_slide_sweep = pass == 9, d->deriv->no_cx_fused = pass == 10;
    const unsigned long lean = d->deriv->cx_lean_used, fused = d->deriv->cx_fused_used;
    const unsigned long cxfast = d->deriv->cx_fast_used, pairs = d->deriv->seed_pairs_used;
    const unsigned long clean = d->deriv->cx_clean_used, skipped = d->deriv->dense_skipped;
    const unsigned long fast = d->deriv->cx_kept_fast, kept = d->deriv->kept_fast_used;
    cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    if (pass == 0) cr_assert(d->deriv->cx_clean_used == clean && d->deriv->cx_kept_fast == fast);
    if (pass == 1) cr_assert(d->deriv->dense_skipped == skipped);
    if (pass == 2) cr_assert(d->deriv->kept_fast_used == kept);
    if (pass == 5) cr_assert(d->deriv->cx_fast_used == cxfast);
    if (pass == 6) cr_assert(d->deriv->seed_pairs_used == pairs);
    if (pass == 7) cr_assert(d->deriv->cx_lean_used == lean && d->deriv->cx_fused_used == fused);
    if (pass == 10) cr_assert(d->deriv->cx_fused_used == fused && d->deriv->cx_lean_used > lean);
    int differ = 0; /* bit for bit: a zero's sign too */
    differ += memcmp(A1, A2, (size_t)nx * nx * sizeof(double)) != 0;
    differ += nu > 0 && memcmp(B1, B2, (size_t)nx * nu * sizeof(double)) != 0;
    differ += ab_differ(A1, A2, B1, B2, nx, nu);
    cr_expect_eq(differ, 0, "pass %d: %d entries differ", pass, differ);
  }
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* The kept rows' state (w->cxJ, a kept spring) across calls with steps between them, where the
 * constraint array's rows change (the legs' limits and contacts come and go): A and B of every call equal
 * entry by entry to those with the kept rows' J written whole and the springs formed. */
Test(derivatives_chain, kept_rows_across_steps_match) {
  grit_model *m = xml_load_or_fail(XML_CX);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[3] = {0.4, -0.3, 0.2};
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  int differ = 0;
  for (int call = 0; call < 8; ++call) {
    for (int i = 0; i < 25; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    d->deriv->no_cx_clean = 0, d->deriv->no_spring_skip = 0, d->deriv->no_cx_fast = 0, d->deriv->no_cx_lean = 0;
    cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    d->deriv->no_cx_clean = 1, d->deriv->no_spring_skip = 1, d->deriv->no_cx_fast = 1, d->deriv->no_cx_lean = call % 2;
    cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    differ += memcmp(A1, A2, (size_t)nx * nx * sizeof(double)) != 0; /* bit for bit: a zero's sign too */
    differ += memcmp(B1, B2, (size_t)nx * nu * sizeof(double)) != 0;
    differ += ab_differ(A1, A2, B1, B2, nx, nu);
  }
  cr_assert(d->deriv->spring_skipped > 0 && d->deriv->cx_kept_fast > 0, "springs %lu, kept rows %lu",
            d->deriv->spring_skipped, d->deriv->cx_kept_fast);
  cr_assert(d->deriv->cx_fast_used > 0, "kept rows' whole path: %lu", d->deriv->cx_fast_used);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* The kept rows' lean steps (ws->no_cx_lean: a p kept across rows instead of one zeroed per row, the rows'
 * spans kept per call, - g . dq lane by lane, a bilateral row's gamma alone) and the spatial rows solved
 * ahead (ws->no_row_ahead) against the old steps, on rows of every kind they take: joint and tendon
 * equalities, a connect between two trees, a tendon's limit and its friction, with the legs' limits, joint
 * friction, contacts and a spring around them. A and B of every call equal entry by entry. */
static const char *XML_LEAN =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body name='torso' pos='0 0 0.62'><freejoint/><geom type='box' size='0.25 0.1 0.05' mass='4'/>"
    SLEG("0.08", "0.2", "1") SLEG("-0.08", "0.2", "2") SLEG("0.08", "0", "3") SLEG("-0.08", "0", "4")
    SLEG("0.08", "-0.2", "5") SLEG("-0.08", "-0.2", "6")
    "</body><body name='tail' pos='0.35 0 0.62'><freejoint/><geom type='sphere' size='0.03' mass='0.2'/></body>"
    "</worldbody>"
    "<tendon><spatial name='t1' stiffness='200' damping='2'><site site='f1'/><site site='f2'/></spatial>"
    "<spatial name='t2'><site site='f5'/><site site='f6'/></spatial>"
    "<spatial name='t3' frictionloss='0.3'><site site='f3'/><site site='f4'/></spatial>"
    "<spatial name='t4' limited='true' range='0.05 0.12'><site site='f1'/><site site='f6'/></spatial>"
    "<fixed name='t5' frictionloss='0.2'><joint joint='k1' coef='1'/><joint joint='k2' coef='-1'/></fixed></tendon>"
    "<equality><tendon tendon1='t2'/><joint joint1='k3' joint2='k4'/><connect body1='torso' body2='tail' anchor='0.3 0 0'/>"
    "</equality>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h3' gear='5'/><motor joint='h5' gear='5'/></actuator>"
    "</mujoco>";

Test(derivatives_chain, lean_kept_rows_match_the_old_steps) {
  grit_model *m = xml_load_or_fail(XML_LEAN);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[3] = {0.4, -0.3, 0.2};
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu, sizeof(double)), *B2 = calloc((size_t)nx * nu, sizeof(double));
  int differ = 0, kinds[16] = {0};
  for (int call = 0; call < 8; ++call) {
    for (int i = 0; i < 25; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
    for (int i = 0; i < d->stats.nconstraints; ++i) kinds[c[i].kind]++;
    d->deriv->no_cx_lean = 0, d->deriv->no_row_ahead = 0;
    cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    d->deriv->no_cx_lean = 1, d->deriv->no_row_ahead = 1;
    const unsigned long lean = d->deriv->cx_lean_used;
    cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(d->deriv->cx_lean_used, lean);
    differ += memcmp(A1, A2, (size_t)nx * nx * sizeof(double)) != 0; /* bit for bit: a zero's sign too */
    differ += memcmp(B1, B2, (size_t)nx * nu * sizeof(double)) != 0;
    differ += ab_differ(A1, A2, B1, B2, nx, nu);
  }
  cr_assert(kinds[GRIT_CONSTRAINT_TENDON_LIMIT] > 0 && kinds[GRIT_CONSTRAINT_TENDON_FRICTION] > 0 &&
                kinds[GRIT_CONSTRAINT_EQUALITY_1D] > 0 && kinds[GRIT_CONSTRAINT_EQUALITY] > 0,
            "tendon limits %d, tendon frictions %d, 1-D equalities %d, connects %d", kinds[GRIT_CONSTRAINT_TENDON_LIMIT],
            kinds[GRIT_CONSTRAINT_TENDON_FRICTION], kinds[GRIT_CONSTRAINT_EQUALITY_1D], kinds[GRIT_CONSTRAINT_EQUALITY]);
  cr_assert(d->deriv->cx_lean_used > 0, "kept rows' lean steps: %lu", d->deriv->cx_lean_used);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* MuJoCo's cloth (one tree of 166 dofs, spatial tendons between its bodies): the one-row rows with partials
 * of J solved four at a time from the step's J ahead of their turn, each checked against its own J then
 * (ws->no_row_ahead: one at a time from its own J), after a few steps and again later: A and B equal entry
 * by entry. */
Test(derivatives_chain, cloth_rows_ahead_match_rows_alone) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE], path[1024];
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/composite/cloth.xml", GRIT_SOURCE_DIR);
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  int differ = 0;
  for (int call = 0; call < 2; ++call) {
    for (int i = 0; i < (call ? 60 : 3); ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    d->deriv->no_row_ahead = 0;
    const unsigned long before = d->deriv->row_ahead_used;
    cr_assert_eq(grit_step_derivatives(d, A1, B1, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(d->deriv->row_ahead_used > before, "rows solved ahead: %lu", d->deriv->row_ahead_used - before);
    d->deriv->no_row_ahead = 1;
    const unsigned long ahead = d->deriv->row_ahead_used;
    cr_assert_eq(grit_step_derivatives(d, A2, B2, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(d->deriv->row_ahead_used, ahead);
    differ += memcmp(A1, A2, (size_t)nx * nx * sizeof(double)) != 0; /* bit for bit: a zero's sign too */
    differ += nu > 0 && memcmp(B1, B2, (size_t)nx * nu * sizeof(double)) != 0;
    differ += ab_differ(A1, A2, B1, B2, nx, nu);
  }
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  free(A1), free(A2), free(B1), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* MuJoCo's softbox with its file's settings, stepped `steps` times; its model in *m. */
static grit_data *softbox_after(int steps, grit_model **m) { return tu_file_stepped("tests/models/mujoco_composite/composite/softbox.xml", steps, 1, m); }

/* The softbox after 200 steps (its equalities' position errors phi no longer zero): the kept equality rows'
 * short path in a call's later passes (cx_fused: only tau_d and phi written into the kept p, the estimate
 * without the call's fixed tests) against the whole path in every pass (ws->no_cx_fused), block form and
 * dense: A and B equal entry by entry. */
Test(derivatives_chain, softbox_short_path_matches_the_whole_path) {
  grit_model *m;
  grit_data *d = softbox_after(200, &m);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->no_cx_fused = k;
    const unsigned long fused = d->deriv->cx_fused_used;
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    if (k == 0) cr_assert(d->deriv->cx_fused_used > fused, "kept rows' short path");
    if (k == 1) cr_assert(d->deriv->cx_fused_used == fused);
  }
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "A differs");
  cr_expect(nu == 0 || !memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), "B differs");
  grit_jacobian_blocks *J[2];
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(grit_jacobian_blocks_create(m, &J[k]), GRIT_OK);
    d->deriv->no_cx_fused = k;
    cr_assert_eq(grit_step_derivatives_blocks(d, J[k]), GRIT_OK, "%s", grit_data_last_error(d));
  }
  for (int k = 0; k < 2; ++k) cr_assert_eq(grit_jacobian_blocks_to_dense(J[k], A[k], B[k]), GRIT_OK);
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "the blocks' A differs");
  cr_expect(nu == 0 || !memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), "the blocks' B differs");
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]), grit_jacobian_blocks_free(J[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A and B of d's state, in block form (then made dense) or dense. */
static void ab_in_form(grit_data *d, const grit_model *m, int blocks, double *A, double *B) {
  if (blocks) {
    grit_jacobian_blocks *J;
    cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A, B), GRIT_OK);
    grit_jacobian_blocks_free(J);
  } else {
    cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  }
}

/* The softbox after 200 steps, block form and dense: the kept equality rows' short path reading its numbers
 * from the row's one line (w->ckc) and the first pass keeping J on the rows' columns alone, against the slot's
 * whole rows (ws->no_cx_compact): A and B the same bits. */
Test(derivatives_chain, softbox_compact_kept_rows_same_bits) {
  grit_model *m;
  grit_data *d = softbox_after(200, &m);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) { /* 0, 1: blocks (compact, not); 2, 3: dense */
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->no_cx_compact = k % 2;
    const unsigned long used = d->deriv->cx_compact_used, fused = d->deriv->cx_fused_used;
    ab_in_form(d, m, k < 2, A[k], B[k]);
    cr_assert(d->deriv->cx_fused_used > fused, "kept rows' short path");
    if (k % 2 == 0) cr_assert(d->deriv->cx_compact_used > used, "the rows' lines read");
    else cr_assert_eq(d->deriv->cx_compact_used, used);
  }
  for (int k = 0; k < 4; k += 2) {
    cr_expect(!memcmp(A[k], A[k + 1], sizeof(double) * (size_t)nx * nx), "A differs (%d)", k);
    cr_expect(nu == 0 || !memcmp(B[k], B[k + 1], sizeof(double) * (size_t)nx * nu), "B differs (%d)", k);
  }
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* The softbox after 50 steps, block form and dense: its kept equality rows' law written out lane by lane in
 * cx_fused (law_lanes) against the law's dual evaluation (ws->no_cx_law_lanes), with the baseline dual table
 * and the AVX2 one (if any; law_lanes follows it): A and B the same bits. */
Test(derivatives_chain, softbox_law_lanes_same_bits) {
  const grit_deriv_dual_fns *avx2 = grit_deriv_dual_fns_avx2();
  grit_model *m;
  grit_data *d = softbox_after(50, &m);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A[4], *B[4];
  for (int t = 0; t < 2; ++t) { /* the baseline table, then the AVX2 one */
    for (int k = 0; k < 4; ++k) { /* 0, 1: blocks (written out, the law); 2, 3: dense */
      A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
      d->deriv->fx = t && avx2 ? avx2 : grit_deriv_dual_fns_get(0);
      d->deriv->no_cx_law_lanes = k % 2;
      const unsigned long used = d->deriv->cx_law_lanes_used, fused = d->deriv->cx_fused_used;
      ab_in_form(d, m, k < 2, A[k], B[k]);
      cr_assert(d->deriv->cx_fused_used > fused, "kept rows' short path");
      if (k % 2) cr_assert_eq(d->deriv->cx_law_lanes_used, used);
      else cr_assert(d->deriv->cx_law_lanes_used > used, "the law written out");
    }
    for (int k = 0; k < 4; k += 2) {
      cr_expect(!memcmp(A[k], A[k + 1], sizeof(double) * (size_t)nx * nx), "A differs (table %d, %d)", t, k);
      cr_expect(nu == 0 || !memcmp(B[k], B[k + 1], sizeof(double) * (size_t)nx * nu), "B differs (table %d, %d)", t, k);
    }
    for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  }
  grit_data_free(d);
  grit_model_free(m);
}

/* The softbox after 50 steps, block form: its kept equality rows' law and Rn in the AVX2 compilation
 * (w->law_avx2, chosen with the AVX2 dual table) against the baseline table's, and their - g . dq without the
 * zero tests (kept_row_lanes) against minus_g_dq's (ws->no_kept_lanes): A and B the same bits. */
Test(derivatives_chain, softbox_law_in_avx2_and_kept_lanes_same_bits) {
  const grit_deriv_dual_fns *avx2 = grit_deriv_dual_fns_avx2();
  grit_model *m;
  grit_data *d = softbox_after(50, &m);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A[3], *B[3];
  grit_jacobian_blocks *J[3];
  for (int k = 0; k < 3; ++k) { /* 0: the baseline table, lanes; 1: AVX2 (if any), lanes; 2: AVX2, no lanes */
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->fx = k && avx2 ? avx2 : grit_deriv_dual_fns_get(0);
    d->deriv->no_kept_lanes = k == 2;
    const unsigned long fused = d->deriv->cx_fused_used;
    cr_assert_eq(grit_jacobian_blocks_create(m, &J[k]), GRIT_OK);
    cr_assert_eq(grit_step_derivatives_blocks(d, J[k]), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(d->deriv->cx_fused_used > fused, "kept rows' short path");
    cr_assert_eq(d->deriv->law_avx2, k && avx2, "the law's compilation follows the table");
    cr_assert_eq(grit_jacobian_blocks_to_dense(J[k], A[k], B[k]), GRIT_OK);
  }
  for (int k = 1; k < 3; ++k) {
    cr_expect(!memcmp(A[0], A[k], sizeof(double) * (size_t)nx * nx), "A differs (%d)", k);
    cr_expect(nu == 0 || !memcmp(B[0], B[k], sizeof(double) * (size_t)nx * nu), "B differs (%d)", k);
  }
  for (int k = 0; k < 3; ++k) free(A[k]), free(B[k]), grit_jacobian_blocks_free(J[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* The largest |X1 - X2| of a rows x cols matrix's column relative to that column's largest |X1| entry. */
static double col_rel_diff(const double *X1, const double *X2, int rows, int cols) {
  double worst = 0.0;
  for (int j = 0; j < cols; ++j) {
    double big = 0.0, diff = 0.0;
    for (int i = 0; i < rows; ++i)
      big = fmax(big, fabs(X1[i * cols + j])), diff = fmax(diff, fabs(X1[i * cols + j] - X2[i * cols + j]));
    if (diff > 0.0) worst = fmax(worst, big > 0.0 ? diff / big : INFINITY);
  }
  return worst;
}

/* A data of m put in its start (or the model's) with every control 0.2, stepped nstep times. */
static grit_data *stepped_data(grit_model *m, void (*start)(grit_data *), int nstep) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nu = grit_model_nu(m);
  double *u = calloc((size_t)nu + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) u[i] = 0.2;
  if (start) start(d);
  cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  free(u);
  for (int i = 0; i < nstep; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* A spatial tendon whose bodies a pass's seeds move only as one rigid body (all seeded dofs at or above their
 * deepest common body) kept as unmoved (derivatives_chain.c, tendon_moved; ws->no_ten_rigid: evaluated). Its
 * length's and row's partials are zero then; evaluated they are rounding (u and the points' motions rotate
 * together, their dot products cancel to ~1e-16 of the row), so A differs by that rounding alone: the legs
 * above (the torso's free joint moves t1's and t2's feet rigidly) and the flag (one tree of 340 dofs, 288
 * spring tendons between neighbours) within 1e-12 of a column's largest entry, and the legs' position columns
 * against central differences (as position_columns_match_central_differences: 1e-5 at h = 1e-7). */
static void rigid_tendons_near(grit_model *m, void (*start)(grit_data *), int nstep, double tol, const char *what) {
  grit_data *d = stepped_data(m, start, nstep);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->no_ten_rigid = k;
    const unsigned long used = d->deriv->ten_rigid_used;
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    if (k == 0) cr_assert(d->deriv->ten_rigid_used > used, "%s: tendons kept as moved rigidly", what);
    if (k == 1) cr_assert_eq(d->deriv->ten_rigid_used, used);
  }
  const double ra = col_rel_diff(A[1], A[0], nx, nx), rb = nu ? col_rel_diff(B[1], B[0], nx, nu) : 0.0;
  cr_log_info("%s: A within %.3g, B within %.3g of a column", what, ra, rb);
  cr_expect(ra <= tol && rb <= tol, "%s: A %.3g, B %.3g", what, ra, rb);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
}

/* A chain of 16 hinges down to a body M (dof 15, the last of the second pass's eight), below it two arms of
 * two hinges each with a site at the end (l, r) and one on M (m): a spring tendon l-r and a tendon l-m held
 * at its length. The second pass seeds dofs 8-15: the chain's top stays put and both tendons move rigidly. */
#define LINK(ax) "<body pos='0 0 -0.1'><joint type='hinge' axis='" ax "'/>" \
                 "<geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.02' mass='0.3'/>"
#define ARM(y, s) "<body pos='0 " y " -0.1'><joint type='hinge' axis='1 0 0'/>"                            \
                  "<geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.02' mass='0.2'/>"                  \
                  "<body pos='0 0 -0.1'><joint type='hinge' axis='0 1 0'/>"                                \
                  "<geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.02' mass='0.2'/><site name='" s "' pos='0 0 -0.1'/>" \
                  "</body></body>"
#define LINK4 LINK("0 1 0") LINK("1 0 0") LINK("0 1 0") LINK("1 0 0")
static const char *XML_ARMS =
    "<mujoco><option timestep='0.002'/><default><joint damping='0.05'/></default><worldbody>"
    "<body pos='0 0 -0.1'><joint name='j0' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.02' mass='0.3'/>"
    LINK("1 0 0") LINK("0 1 0") LINK("1 0 0") LINK4 LINK4 LINK4 "<site name='m' pos='0.05 0 -0.1'/>"
    ARM("0.1", "l") ARM("-0.1", "r")
    "</body></body></body></body></body></body></body></body></body></body></body></body></body></body></body></body>"
    "</worldbody>"
    "<tendon><spatial name='t1' stiffness='50' damping='1'><site site='l'/><site site='r'/></spatial>"
    "<spatial name='t2'><site site='l'/><site site='m'/></spatial></tendon>"
    "<equality><tendon tendon1='t2'/></equality>"
    "<actuator><motor joint='j0' gear='1'/></actuator></mujoco>";

static void arms_start(grit_data *d) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m);
  double *q = calloc((size_t)nq, sizeof(double));
  for (int i = 0; i < nq; ++i) q[i] = 0.2 * sin(1.3 * i + 0.4);
  cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
  free(q);
}

Test(derivatives_chain, rigidly_moved_tendons_kept) {
  grit_model *m = xml_load_or_fail(XML_ARMS);
  cr_assert_eq(grit_model_nv(m), 20);
  rigid_tendons_near(m, arms_start, 100, 1e-12, "arms");
  grit_data *d[2];
  for (int k = 0; k < 2; ++k) { /* the same history: the same warm start */
    cr_assert_eq(grit_data_create(m, &d[k]), GRIT_OK);
    arms_start(d[k]);
    const double u[1] = {0.2};
    cr_assert_eq(grit_data_set_ctrl(d[k], u, 1), GRIT_OK);
    for (int i = 0; i < 100; ++i) cr_assert_eq(grit_step(d[k]), GRIT_OK, "%s", grit_data_last_error(d[k]));
  }
  double fd_norm;
  const unsigned long used = d[0]->deriv->ten_rigid_used;
  const double rel = fdt_position_columns(d[0], d[1], 1e-7, &fd_norm);
  cr_assert(d[0]->deriv->ten_rigid_used > used);
  cr_log_info("arms' position columns: relative Frobenius error %.3g (|FD| %.3g)", rel, fd_norm);
  cr_expect(rel < 1e-5, "%.3g", rel);
  grit_data_free(d[0]), grit_data_free(d[1]);
  grit_model_free(m);
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE], path[1024];
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/flag/flag.xml", GRIT_SOURCE_DIR);
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  rigid_tendons_near(m, NULL, 20, 1e-12, "flag");
  grit_model_free(m);
}

/* The spatial tendons' sums over the columns their rows can be nonzero on (w->cxn: a segment's bodies' common
 * dofs left out) against their structural columns whole (ws->no_cx_narrow): the same bits, A and B, on the
 * arms above (a spring and a tendon equality), MuJoCo's arm26 (wrapping muscles) and the flag. */
static void narrow_same_bits(grit_model *m, void (*start)(grit_data *), int nstep, const char *what) {
  grit_data *d = stepped_data(m, start, nstep);
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m);
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->no_cx_narrow = k;
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  }
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "%s: A differs", what);
  cr_expect(nu == 0 || !memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), "%s: B differs", what);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
}

Test(derivatives_chain, narrowed_tendon_columns_same_bits) {
  grit_model *m = xml_load_or_fail(XML_ARMS);
  narrow_same_bits(m, arms_start, 100, "arms");
  grit_model_free(m);
  const char *files[2] = {"mujoco_model/arm26.xml", "mujoco_composite/flag/flag.xml"};
  for (int f = 0; f < 2; ++f) {
    grit_mjcf_info info;
    char msg[GRIT_MESSAGE_SIZE], path[1024];
    snprintf(path, sizeof path, "%s/tests/models/%s", GRIT_SOURCE_DIR, files[f]);
    cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
    grit_mjcf_info_free(&info);
    narrow_same_bits(m, NULL, 20, files[f]);
    grit_model_free(m);
  }
}
