/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_simd.c — the AVX2 compilation of the position passes' dual contact functions
 * (derivatives_avx2.c, chosen by derivatives_simd.c) gives A and B bit for bit equal to the baseline
 * compilation's, dense and block form, under every contact model, on a scene whose contacts take every
 * path of the contact loop: boxes on boxes (faces, edges, corners), a capsule and a sphere lying on them
 * (lines and round features), SAP's Delassus estimates without J_c, Lagged's spare lane, and an
 * articulated arm whose contacts form J_c. (Both compilations are the dual path: test_derivatives checks
 * it against central differences, on this processor through the AVX2 one.) */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "loop_scene.h"
#include "xml_load_util.h"

static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='2 2 0.1'/>"
    "<body pos='0 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='0.101 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='0.03 0.01 0.1505' euler='0 0 20'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
    "<body pos='0.05 -0.003 0.2256' euler='0 0 70'><freejoint/><geom type='capsule' size='0.02 0.06' euler='0 90 0'/></body>"
    "<body pos='-0.2 0 0.03'><freejoint/><geom type='sphere' size='0.03'/></body>"
    "<body pos='-0.3 0.2 0.3'><joint name='j1' type='hinge' axis='0 1 0' damping='0.1'/>"
    "<geom type='capsule' fromto='0 0 0 0.1 0 -0.25' size='0.02'/>"
    "<body pos='0.1 0 -0.25'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.03' pos='0 0 -0.02'/></body>"
    "</body>"
    "</worldbody>"
    "<actuator><motor joint='j1'/></actuator>"
    "</mujoco>";

static grit_model *load(void) {
  grit_model *m = xml_load_or_fail(XML);
  return m;
}

/* A and B (dense, then the block form scattered to dense) with the table fx. */
static void jacobians(grit_data *d, const grit_deriv_dual_fns *fx, double *A, double *B, double *Ab, double *Bb) {
  const grit_model *m = d->model;
  d->deriv->fx = fx;
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, Ab, Bb), GRIT_OK);
  grit_jacobian_blocks_free(J);
}

Test(derivatives_simd, avx2_compilation_gives_the_same_bits) {
  const grit_deriv_dual_fns *avx2 = grit_deriv_dual_fns_avx2();
  if (!avx2) cr_skip_test("no AVX2 on this processor (or not an x86-64 GCC build)");
  cr_assert_eq(grit_deriv_dual_fns_get(0), grit_deriv_dual_fns_get(0), "one baseline table");
  cr_assert_neq(grit_deriv_dual_fns_get(0), avx2);
  const grit_contact_model models[3] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR, GRIT_CONTACT_SAP};
  for (int k = 0; k < 3; ++k) {
    grit_model *m = load();
    grit_data *d;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_step_settings s = grit_default_step_settings();
    s.contact_model = models[k];
    cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
    const double u = 0.3;
    cr_assert_eq(grit_data_set_ctrl(d, &u, 1), GRIT_OK);
    for (int i = 0; i < 40; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_gt(d->ncontacts, 5, "contacts between the bodies");
    const size_t nx = 2 * (size_t)m->nv, nu = (size_t)m->nu;
    double *out[2][4];
    for (int a = 0; a < 2; ++a)
      for (int j = 0; j < 4; ++j) out[a][j] = calloc(j % 2 ? nx * nu : nx * nx, sizeof(double));
    jacobians(d, grit_deriv_dual_fns_get(0), out[0][0], out[0][1], out[0][2], out[0][3]);
    jacobians(d, avx2, out[1][0], out[1][1], out[1][2], out[1][3]);
    int nonzero = 0;
    for (size_t i = 0; i < nx * nx; ++i) nonzero += out[0][0][i] != 0.0;
    cr_assert_gt(nonzero, (int)(4 * nx), "model %d: A is not trivial", k);
    for (int j = 0; j < 4; ++j)
      cr_assert_eq(memcmp(out[0][j], out[1][j], sizeof(double) * (j % 2 ? nx * nu : nx * nx)), 0,
                   "model %d: %s%s differs between the two compilations", k, j % 2 ? "B" : "A", j > 1 ? " (blocks)" : "");
    for (int a = 0; a < 2; ++a)
      for (int j = 0; j < 4; ++j) free(out[a][j]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Connect and weld rows in and across trees, joint and tendon couplings, tendons (test_cx_columns.c's
 * model with motors): their dual rows (grit_cx_rows_cols_dual, derivatives_chain.c) from the two
 * compilations, the same bits. */
static const char *XML_LOOP = LOOP_SCENE_XML_MOTORS;

Test(derivatives_simd, avx2_compilation_of_the_equality_rows_gives_the_same_bits) {
  const grit_deriv_dual_fns *avx2 = grit_deriv_dual_fns_avx2();
  if (!avx2) cr_skip_test("no AVX2 on this processor (or not an x86-64 GCC build)");
  grit_model *m = xml_load_or_fail(XML_LOOP);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u[2] = {0.3, -0.2};
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int i = 0; i < 100; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const size_t nx = 2 * (size_t)m->nv, nu = (size_t)m->nu;
  double *out[2][4];
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 4; ++j) out[a][j] = calloc(j % 2 ? nx * nu : nx * nx, sizeof(double));
  jacobians(d, grit_deriv_dual_fns_get(0), out[0][0], out[0][1], out[0][2], out[0][3]);
  jacobians(d, avx2, out[1][0], out[1][1], out[1][2], out[1][3]);
  for (int j = 0; j < 4; ++j)
    cr_assert_eq(memcmp(out[0][j], out[1][j], sizeof(double) * (j % 2 ? nx * nu : nx * nx)), 0,
                 "%s%s differs between the two compilations", j % 2 ? "B" : "A", j > 1 ? " (blocks)" : "");
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 4; ++j) free(out[a][j]);
  grit_data_free(d);
  grit_model_free(m);
}
