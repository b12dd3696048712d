/* SPDX-License-Identifier: Apache-2.0 */
/* test_contact_chain — contacts against the world chained from one evaluation per call
 * (derivatives_contact_chain.c) against their full evaluation in every pass (ws->no_contact_chain): A and B,
 * dense and block form, to round-off; and both against central differences of the step. The chained
 * bodies' twists in one walk against the cached dual ones: the same bits. */
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

/* A floating torso with a ball-jointed head and two legs of two hinges (limited knees), feet on the
 * floor, motors at the hips (test_derivatives_rnea's TREE); a capsule foot offset from its body. */
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
    "   <geom type='box' pos='0.02 0.01 -0.25' euler='10 20 5' size='0.05 0.03 0.02' mass='0.7'/></body></body>"
    "</body></worldbody>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

static grit_data *prepare(const char *xml, grit_model **m, grit_contact_model model, int steps) {
  return moving_data_model(xml, m, model, 0.3, steps); /* a moving start: velocity products matter */
}

/* The MuJoCo humanoid after 200 steps of its file's settings (its feet on the floor). */
static grit_data *humanoid_200(grit_model **m) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", m, &info, msg), GRIT_OK,
               "%s", msg);
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < 200; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The largest difference of x and y relative to the largest entry of its column (n columns, row-major). */
static double col_rel(const double *x, const double *y, int rows, int n) {
  double worst = 0.0;
  for (int c = 0; c < n; ++c) {
    double mx = 0.0, dx = 0.0;
    for (int r = 0; r < rows; ++r) {
      mx = fmax(mx, fabs(x[(size_t)r * n + c]));
      dx = fmax(dx, fabs(x[(size_t)r * n + c] - y[(size_t)r * n + c]));
    }
    if (mx > 0.0) worst = fmax(worst, dx / mx);
  }
  return worst;
}

/* A and B, dense and block, with the chained path (on) and the full one (off): to round-off; returns how
 * many contacts the chained path took. */
static unsigned long both_paths(grit_model *m, grit_data *d, double tol) {
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m), nu = grit_model_nu(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d, A[0], nu ? B[0] : NULL, NULL, 0, NULL), GRIT_OK); /* the workspace */
  const unsigned long before = d->deriv->contact_chained;
  unsigned long taken = 0;
  for (int off = 1; off >= 0; --off) {
    d->deriv->no_contact_chain = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], nu ? B[2 * off] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    d->deriv->no_contact_chain = off;
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], nu ? B[2 * off + 1] : NULL);
    if (off) taken = d->deriv->contact_chained - before;
  }
  cr_expect_eq(taken, 0, "the full path takes no contact by the chain");
  taken = d->deriv->contact_chained - before - taken;
  d->deriv->no_contact_chain = 0;
  cr_assert(d->ncontacts > 0, "in contact");
  for (int k = 0; k < 2; ++k) {
    const double ea = col_rel(A[k], A[k + 2], nx, nx), eb = nu ? col_rel(B[k], B[k + 2], nx, nu) : 0.0;
    cr_log_info("%s: A %.3g, B %.3g of a column's largest entry", k ? "block" : "dense", ea, eb);
    cr_expect(ea <= tol, "A (%s): %.3g", k ? "block" : "dense", ea);
    cr_expect(eb <= tol, "B (%s): %.3g", k ? "block" : "dense", eb);
  }
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  return taken;
}

/* Measured 1e-14 .. 1e-13 (round-off of the reordered sums); a wrong map (a dropped twist term, the
 * rotation's sign) shows 1e-3 and more. */
Test(contact_chain, tree_same_as_full_path) {
  const grit_contact_model model[2] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR};
  for (int k = 0; k < 2; ++k) {
    grit_model *m;
    grit_data *d = prepare(TREE, &m, model[k], 150);
    cr_expect(both_paths(m, d, 1e-10) > 0, "the chained path ran");
    grit_data_free(d);
    grit_model_free(m);
  }
}

Test(contact_chain, humanoid_same_as_full_path) {
  grit_model *m;
  grit_data *d = humanoid_200(&m);
  cr_expect(both_paths(m, d, 1e-10) > 0, "the chained path ran");
  grit_data_free(d);
  grit_model_free(m);
}

/* A's columns against central differences of the step, each path: the chained one is as close as the
 * full one (their difference is round-off, far below the differences' own error). */
Test(contact_chain, tree_against_central_differences) {
  const grit_contact_model model[2] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR};
  for (int k = 0; k < 2; ++k) {
    double rel[2];
    for (int off = 0; off <= 1; ++off) {
      grit_model *m, *m2;
      grit_data *d = prepare(TREE, &m, model[k], 150), *d2 = prepare(TREE, &m2, model[k], 150);
      double fd_norm;
      const int nx = 2 * grit_model_nv(m);
      double *A = calloc((size_t)nx * nx, sizeof(double));
      cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK); /* the workspace */
      free(A);
      d->deriv->no_contact_chain = off;
      rel[off] = fdt_state_columns(d, d2, 1e-6, 1, &fd_norm);
      grit_data_free(d), grit_data_free(d2);
      grit_model_free(m), grit_model_free(m2);
    }
    cr_log_info("model %d: relative Frobenius error chained %.3g, full %.3g", k, rel[0], rel[1]);
    cr_expect(rel[0] < 1e-5, "chained: %.3g", rel[0]);
    cr_expect(fabs(rel[0] - rel[1]) <= 1e-3 * rel[1] + 1e-12, "chained %.3g, full %.3g", rel[0], rel[1]);
  }
}

/* A and B, dense and block, with a switch of the chained path off and on: with tol < 0 the same bits, else
 * within tol of a column's largest entry; the chained path must run. */
static void switch_paths(grit_model *m, grit_data *d, int *sw, double tol) {
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m), nu = grit_model_nu(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d, A[0], nu ? B[0] : NULL, NULL, 0, NULL), GRIT_OK); /* the workspace */
  const unsigned long before = d->deriv->contact_chained;
  for (int off = 0; off <= 1; ++off) {
    *sw = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], nu ? B[2 * off] : NULL, NULL, 0, NULL), GRIT_OK);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], nu ? B[2 * off + 1] : NULL);
  }
  *sw = 0;
  cr_expect(d->deriv->contact_chained > before, "the chained path ran");
  for (int k = 0; k < 2; ++k) {
    if (tol < 0.0) {
      cr_expect(memcmp(A[k], A[k + 2], sizeof(double) * na) == 0, "A (%s): the same bits", k ? "block" : "dense");
      cr_expect(memcmp(B[k], B[k + 2], sizeof(double) * nb) == 0, "B (%s): the same bits", k ? "block" : "dense");
      continue;
    }
    const double ea = col_rel(A[k], A[k + 2], nx, nx), eb = nu ? col_rel(B[k], B[k + 2], nx, nu) : 0.0;
    cr_log_info("%s: A %.3g, B %.3g of a column's largest entry", k ? "block" : "dense", ea, eb);
    cr_expect(ea <= tol, "A (%s): %.3g", k ? "block" : "dense", ea);
    cr_expect(eb <= tol, "B (%s): %.3g", k ? "block" : "dense", eb);
  }
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
}

/* The chained bodies' twists from one walk of the chain (partials only) against the residual's cached dual
 * twists (ws->no_contact_twins): the same bits of A and B, dense and block. */
static void twins_same_bits(grit_model *m, grit_data *d) { switch_paths(m, d, &d->deriv->no_contact_twins, -1.0); }

/* A chained contact's d gamma / d v_c from its law's Hessian G at the form's evaluation against a second
 * dual evaluation of the law along v_c (ws->no_contact_hessian): the same derivative in closed form and by
 * dual numbers, so to round-off (measured 1e-16 .. 2.5e-13 of a column's largest entry here, 7.6e-13 on 22
 * humanoids; G's sign flipped shows 1). */
static void hessian_paths(grit_model *m, grit_data *d) { switch_paths(m, d, &d->deriv->no_contact_hessian, 1e-10); }

Test(contact_chain, hessian_same_as_second_law) {
  const grit_contact_model model[2] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR};
  for (int k = 0; k < 2; ++k) {
    grit_model *m;
    grit_data *d = prepare(TREE, &m, model[k], 150);
    hessian_paths(m, d);
    grit_data_free(d);
    grit_model_free(m);
  }
  grit_model *m;
  grit_data *d = humanoid_200(&m);
  hessian_paths(m, d);
  grit_data_free(d);
  grit_model_free(m);
}

Test(contact_chain, twins_same_bits) {
  const grit_contact_model model[2] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR};
  for (int k = 0; k < 2; ++k) {
    grit_model *m;
    grit_data *d = prepare(TREE, &m, model[k], 150);
    twins_same_bits(m, d);
    grit_data_free(d);
    grit_model_free(m);
  }
  grit_model *m;
  grit_data *d = humanoid_200(&m);
  twins_same_bits(m, d);
  grit_data_free(d);
  grit_model_free(m);
}

/* A switch of the derivative call's workspace and the counter of the fast path it turns off. */
typedef struct switch_ref {
  int *off;
  const unsigned long *taken;
} switch_ref;

static switch_ref limit_switch(grit_data *d, int reuse) {
  grit_deriv_ws *w = d->deriv;
  return reuse ? (switch_ref){&w->no_limit_reuse, &w->limit_reuses} : (switch_ref){&w->no_limit_span, &w->limit_spans};
}

/* A and B, dense and block, with a fast path on and off (which = 0: a limit's span from its stored J values,
 * ws->no_limit_span; 1: consecutive limits' rows over their changed columns, ws->no_limit_reuse) after
 * `steps` steps of `file`: the same bits either way; the old path never counts the fast one, and with
 * must_take the fast path is taken. */
static void limit_switch_case(const char *file, int steps, int which, int must_take) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(file, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  for (int s = 0; s < steps; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m), nu = grit_model_nu(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d, A[0], B[0], NULL, 0, NULL), GRIT_OK); /* the workspace */
  const switch_ref sw = limit_switch(d, which);
  unsigned long taken[2];
  for (int off = 1; off >= 0; --off) {
    const unsigned long before = *sw.taken;
    *sw.off = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], B[2 * off], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], B[2 * off + 1]);
    taken[off] = *sw.taken - before;
  }
  *sw.off = 0;
  cr_expect_eq(taken[1], 0, "%s: the old path does not take the fast one", file);
  cr_expect(!must_take || taken[0] > 0, "%s: the fast path taken in the call", file);
  for (int k = 0; k < 2; ++k) {
    cr_expect(memcmp(A[k], A[k + 2], sizeof(double) * na) == 0, "%s A (%s): not the same bits", file, k ? "block" : "dense");
    cr_expect(memcmp(B[k], B[k + 2], sizeof(double) * (nb - 1)) == 0, "%s B (%s): not the same bits", file,
              k ? "block" : "dense");
  }
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

/* A joint limit's span from its stored J values (derivatives_residual.c's jacobian_rows) against the span
 * from its dual entries (ws->no_limit_span), on the MuJoCo humanoid after 200 steps (its hips' and knees'
 * limits active). */
Test(contact_chain, limit_span_same_bits) {
  limit_switch_case(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", 200, 0, 1);
}

/* Consecutive joint limits' J rows written over the two spans of non-+0 entries only (derivatives_residual.c's
 * limit_jacobian_row) against the whole rows (ws->no_limit_reuse): the same bytes in J, on the MuJoCo
 * humanoid after 200 steps and on the dm_control humanoid (whose limits are active one after another). */
Test(contact_chain, limit_reuse_same_bits) {
  limit_switch_case(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", 200, 1, 0); /* the same bits; no reuse asked */
  limit_switch_case(GRIT_SOURCE_DIR "/tests/models/dm_control_suite/humanoid.xml", 200, 1, 1);
}
