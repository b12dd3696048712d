/* SPDX-License-Identifier: Apache-2.0 */
/* test_deriv_writes.c — the derivative call's fast paths of writing and of the smooth dynamics' partials
 * (derivatives_columns.c, derivatives_rnea.c) against their old paths, bit for bit, dense and blocks:
 * MuJoCo's humanoid on the floor (a free root, hinges), MuJoCo's grid2pin (particles of slides), a tree mixing hinges, slides and a ball joint in
 * contact (runs of hinges broken by the ball and the columns' own dofs), and a hinge-and-slide chain
 * whose A and B are also checked against central differences of the step. The batches of right-hand
 * sides as wide as the factor's parts allow (derivatives.c, batch_columns) against RHS_BATCH columns
 * over nv rows: the clutter of 40 objects settled (many parts). The block form's columns in the order
 * of their entries and its tiles over spans of trees against the batch's order and a tree at a time:
 * grid2pin and the hammock; its runs of tiles a few rows at a time against tile by tile: the softbox, the
 * hammock, the cloth. Compact right-hand sides (each column only the rows its tree's island and part
 * can touch, derivatives_rhs.c) against nv-row columns, every other row poisoned: the clutter and three
 * trees of hinges apart and in contact, Lagged and Similar. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "scenes.h"

/* A chain of hinges and slides (nq = nv) with motors, damped, swinging under gravity. */
static const char *k_chain =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<body pos='0 0 1'><joint name='j0' type='hinge' axis='0 1 0' damping='0.2'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
    "<body pos='0 0 -0.3'><joint name='j1' type='slide' axis='0 0 1' damping='2' stiffness='50'/>"
    "<joint name='j2' type='hinge' axis='1 0 0' damping='0.1'/><geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
    "<body pos='0 0 -0.3'><joint name='j3' type='hinge' axis='0 1 0' damping='0.1'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.03'/>"
    "<body pos='0 0 -0.2'><joint name='j4' type='slide' axis='1 0 0' damping='1' stiffness='20'/>"
    "<joint name='j5' type='hinge' axis='0 0 1' damping='0.1'/><geom type='sphere' size='0.05'/>"
    "</body></body></body></body></worldbody>"
    "<actuator><motor joint='j0'/><motor joint='j1'/><motor joint='j3'/><motor joint='j5'/></actuator></mujoco>";

/* Hinges, slides and a ball joint on one tree, its feet on the floor. */
static const char *k_mixed =
    "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.5'><joint name='j0' type='slide' axis='0 0 1'/><joint name='j1' type='slide' axis='1 0 0'/>"
    "<joint name='j2' type='hinge' axis='0 1 0'/><geom type='box' size='0.2 0.1 0.05'/>"
    "<body pos='0.2 0 0'><joint name='j3' type='hinge' axis='0 1 0' range='-1 1'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/>"
    "<body pos='0 0 -0.3'><joint name='j4' type='ball'/><geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.03'/>"
    "<body pos='0 0 -0.2'><joint name='j5' type='hinge' axis='0 1 0'/><geom type='sphere' size='0.04'/></body></body></body>"
    "<body pos='-0.2 0 0'><joint name='j6' type='hinge' axis='0 1 0'/><joint name='j7' type='hinge' axis='1 0 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.45' size='0.03'/></body></body></worldbody>"
    "<actuator><motor joint='j3'/><motor joint='j5'/><motor joint='j6'/><motor joint='j7'/></actuator></mujoco>";

/* A, B of the data's last step, dense (form 0) or by blocks (form 1). */
static void jacobians(grit_data *d, int form, grit_jacobian_blocks *J, double *A, double *B) {
  const grit_model *m = grit_data_model(d);
  if (form == 0) {
    cr_assert_eq(grit_step_derivatives(d, A, grit_model_nu(m) ? B : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    return;
  }
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A, grit_model_nu(m) ? B : NULL), GRIT_OK);
}

/* The bits of A and B with *flag set (the old path) and cleared, dense and blocks. */
static void same_bits(grit_data *d, int *flag, const char *what) {
  const grit_model *m = grit_data_model(d);
  const size_t nx = 2 * (size_t)grit_model_nv(m) + (size_t)grit_model_na(m), nu = (size_t)grit_model_nu(m);
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) A[k] = malloc(sizeof(double) * nx * nx), B[k] = malloc(sizeof(double) * (nx * nu + 1));
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int form = 0; form < 2; ++form) {
    for (int k = 0; k < 2; ++k) {
      *flag = k;
      jacobians(d, form, J, A[k], B[k]);
      *flag = 0;
    }
    cr_assert(!memcmp(A[0], A[1], sizeof(double) * nx * nx), "%s: A, form %d", what, form);
    cr_assert(!memcmp(B[0], B[1], sizeof(double) * nx * nu), "%s: B, form %d", what, form);
  }
  grit_jacobian_blocks_free(J);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
}

static grit_data *settled(const char *xml, const char *file, int steps, grit_model **m) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_data *d;
  grit_mjcf_info info;
  if (file) cr_assert_eq(grit_mjcf_load_file(file, m, &info, msg), GRIT_OK, "%s", msg);
  else cr_assert_eq(grit_mjcf_load_string(xml, m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_data_set_step_settings(d, &info.settings);
  grit_mjcf_info_free(&info);
  const int nu = grit_model_nu(*m);
  double u[8] = {0.3, -0.5, 0.2, 0.4, -0.1, 0.25, 0.1, -0.3};
  if (nu > 0 && nu <= 8) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  for (int s = 0; s < steps; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The q rows of hinges and slides written by runs found from w->plain_end (plain_run) or by testing each
 * dof (hinge_run, ws->no_plain_runs), and the smooth partials' bodies' terms and dofs' vectors four at a
 * time (body_terms4, dof_vectors4, pack_dof_avx2) or one by one (rn.no_lanes): the same bits. */
Test(deriv_writes, fast_paths_same_bits) {
  grit_model *m;
  grit_data *d = settled(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", 150, &m);
  same_bits(d, &d->deriv->no_plain_runs, "humanoid");
  same_bits(d, &d->deriv->rn.no_lanes, "humanoid, dof lanes");
  grit_data_free(d);
  grit_model_free(m);
  d = settled(k_mixed, NULL, 200, &m);
  cr_assert_gt(grit_data_ncontacts(d), 0);
  same_bits(d, &d->deriv->no_plain_runs, "mixed tree");
  same_bits(d, &d->deriv->rn.no_lanes, "mixed tree, dof lanes");
  grit_data_free(d);
  grit_model_free(m);
}

/* MuJoCo's grid of 79 particles (three slides each) coupled into one part: the block form writes the
 * particles' columns one at a time, the slides' q rows inline (q_rows_runs) or joint by joint
 * (ws->no_plain_runs): the same bits. */
Test(deriv_writes, particles_same_bits) {
  grit_model *m;
  grit_data *d = settled(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/grid2pin.xml", 20, &m);
  same_bits(d, &d->deriv->no_plain_runs, "grid2pin");
  grit_data_free(d);
  grit_model_free(m);
}

/* The block form's columns written in the order of their entries (block_order) or the batch's
 * (ws->no_sorted_writes), its tiles over spans of consecutive trees (span_end) or a tree at a time
 * (ws->no_span_tiles), and a right-hand side's island rows zeroed by runs of consecutive trees or tree
 * by tree (ws->no_zero_runs): the same bits on the grid's particles (one span of 79 trees) and on the
 * hammock with the humanoid lying in it (spans of particles and a tree of a free root and hinges). */
Test(deriv_writes, sorted_span_writes_same_bits) {
  const char *files[2] = {GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/grid2pin.xml",
                          GRIT_SOURCE_DIR "/tests/models/mujoco_composite/hammock/hammock.xml"};
  for (int f = 0; f < 2; ++f) {
    grit_model *m;
    grit_data *d = settled(NULL, files[f], f ? 150 : 20, &m);
    same_bits(d, &d->deriv->no_sorted_writes, f ? "hammock, sorted" : "grid2pin, sorted");
    same_bits(d, &d->deriv->no_span_tiles, f ? "hammock, spans" : "grid2pin, spans");
    same_bits(d, &d->deriv->no_zero_runs, f ? "hammock, zero runs" : "grid2pin, zero runs");
    grit_jacobian_blocks *J = NULL;
    cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK);
    cr_assert_eq(grit_jacobian_blocks_count(J), 1, "one island: the particles (and the humanoid) coupled");
    grit_jacobian_blocks_free(J);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The block form's runs of tiles (two or more tiles of four columns in consecutive columns of a block past
 * 512 kB) written a few rows of every tile at a time (grit_deriv_run_tiles) or tile by tile (ws->no_run_tiles):
 * the same bits on the softbox (a free root and 218 slides, the free joint inside the span's first rows), the
 * hammock (spans of particles, a humanoid's free root and hinges) and the cloth (particles of slides). */
Test(deriv_writes, run_tiles_same_bits) {
  const char *files[3] = {GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/softbox.xml",
                          GRIT_SOURCE_DIR "/tests/models/mujoco_composite/hammock/hammock.xml",
                          GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/cloth.xml"};
  const char *names[3] = {"softbox", "hammock", "cloth"};
  const int steps[3] = {60, 150, 150};
  for (int f = 0; f < 3; ++f) {
    grit_model *m;
    grit_data *d = settled(NULL, files[f], steps[f], &m);
    const unsigned long used = d->deriv->run_tiles_used;
    same_bits(d, &d->deriv->no_run_tiles, names[f]);
    cr_assert_gt(d->deriv->run_tiles_used, used, "%s: the runs were written by run_tiles", names[f]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A big block's columns outside the tiles written as one group, tree by tree and a span of hinges and
 * slides row by row over the group (write_group), or one column at a time (ws->no_row_groups): the same
 * bits on the grid's particles and the hammock (particles and a humanoid); and the groups were used. */
Test(deriv_writes, row_groups_same_bits) {
  const char *files[2] = {GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/grid2pin.xml",
                          GRIT_SOURCE_DIR "/tests/models/mujoco_composite/hammock/hammock.xml"};
  const char *names[2] = {"grid2pin", "hammock"};
  const int steps[2] = {20, 150};
  for (int f = 0; f < 2; ++f) {
    grit_model *m;
    grit_data *d = settled(NULL, files[f], steps[f], &m);
    const unsigned long used = d->deriv->row_groups_used;
    same_bits(d, &d->deriv->no_row_groups, names[f]);
    cr_assert_gt(d->deriv->row_groups_used, used, "%s: groups were written by write_group", names[f]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The chain's A, B (fast paths) against central differences of the step, and the same bits without them. */
Test(deriv_writes, chain_central_differences) {
  grit_model *m;
  grit_data *d = settled(k_chain, NULL, 100, &m);
  same_bits(d, &d->deriv->no_plain_runs, "chain");
  same_bits(d, &d->deriv->rn.no_lanes, "chain, dof lanes");
  const int nq = grit_model_nq(m), nx = 2 * nq, nu = grit_model_nu(m);
  cr_assert_eq(nq, grit_model_nv(m));
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * (size_t)nx * nu);
  double *Afd = malloc(sizeof(double) * (size_t)nx * nx), *Bfd = malloc(sizeof(double) * (size_t)nx * nu);
  double *x = malloc(sizeof(double) * (size_t)nx), u[4];
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  /* the state the last step started from, its controls */
  memcpy(x, d->qprev, sizeof(double) * (size_t)nq);
  memcpy(x + nq, d->vprev, sizeof(double) * (size_t)nq);
  memcpy(u, d->uprev, sizeof(double) * (size_t)nu);
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, nx * nx), eb = fdj_rel_err(B, Bfd, nx * nu);
  cr_log_info("chain: A %.2e, B %.2e of the largest entry", ea, eb);
  cr_assert_lt(ea, 1e-6);
  cr_assert_lt(eb, 1e-6);
  free(A), free(B), free(Afd), free(Bfd), free(x);
  grit_data_free(d);
  grit_model_free(m);
}

/* The clutter of 40 objects on the floor (40 free bodies, many parts of the factor): the batch holds
 * more columns with ws->no_wide_batch cleared (the largest part's rows counted, not nv's), and A, B
 * are the same numbers, dense and blocks. Equal as numbers, not bits: the solves skip a chunk's blocks
 * whose every column is zero (blockchol_many.c), so a zero's sign follows which columns share a chunk. */
Test(deriv_writes, wide_batch_same_values) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  cr_assert_eq(scene_clutter(40, 2e-3, &m, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int s = 0; s < 300; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const size_t nx = 2 * (size_t)grit_model_nv(m), n = nx * nx;
  double *A[2] = {malloc(sizeof(double) * n), malloc(sizeof(double) * n)};
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  int cols[2];
  for (int form = 0; form < 2; ++form) {
    for (int k = 0; k < 2; ++k) {
      d->deriv->no_wide_batch = k;
      jacobians(d, form, J, A[k], NULL);
      cols[k] = d->deriv->rhs_cols;
      d->deriv->no_wide_batch = 0;
    }
    cr_assert_gt(cols[0], cols[1], "form %d: batches of %d and %d columns", form, cols[0], cols[1]);
    cr_assert_lt(cols[1], (int)nx, "the old path's batches hold fewer than the state's columns");
    for (size_t i = 0; i < n; ++i)
      cr_assert(A[0][i] == A[1][i], "form %d: A[%zu][%zu] %.17g, %.17g", form, i / nx, i % nx, A[0][i], A[1][i]);
  }
  grit_jacobian_blocks_free(J);
  free(A[0]), free(A[1]);
  grit_data_free(d);
  grit_model_free(m);
}

/* Three trees of hinges, slides and a ball joint (k_mixed's) on the floor, the first two touching. */
static const char *k_three =
    "<mujoco><option timestep='0.002'/><default><geom size='0.03'/></default><worldbody>"
    "<geom type='plane' size='5 5 0.1'/>"
    "<body pos='0 0 0.3'><joint type='free'/><geom type='box' size='0.2 0.1 0.05'/>"
    "<body pos='0.2 0 0'><joint name='a1' type='hinge' axis='0 1 0' range='-1 1'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -0.2'/><body pos='0 0 -0.2'><joint type='ball'/>"
    "<geom type='capsule' fromto='0 0 0 0.2 0 0'/></body></body></body>"
    "<body pos='2 0 0.3'><joint type='slide' axis='0 0 1'/><joint type='slide' axis='1 0 0'/>"
    "<joint type='hinge' axis='0 1 0'/><geom type='box' size='0.2 0.1 0.05'/>"
    "<body pos='-0.2 0 0'><joint name='b1' type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0 0 -0.35'/>"
    "</body></body>"
    "<body pos='0.45 0 0.3'><joint type='free'/><geom type='box' size='0.1 0.1 0.1'/>"
    "<body pos='0 0.2 0'><joint name='c1' type='hinge' axis='1 0 0'/><geom type='capsule' fromto='0 0 0 0 0.2 -0.1'/>"
    "</body></body></worldbody>"
    "<actuator><motor joint='a1'/><motor joint='b1'/><motor joint='c1'/></actuator></mujoco>";

/* A and B with compact right-hand sides (ws->no_compact_rhs clear) and with nv-row columns, dense and
 * blocks, w->rhs filled with NaN before each call: a row the solves or the writes read but the call did
 * not set would make a NaN (GRIT_ERR_NOT_FINITE). Returns whether the compact path ran. */
static int compact_same_bits(grit_data *d, const char *what) {
  const grit_model *m = grit_data_model(d);
  grit_deriv_ws *w = d->deriv;
  const size_t nx = 2 * (size_t)grit_model_nv(m), nu = (size_t)grit_model_nu(m);
  const size_t nrhs = (size_t)grit_model_nv(m) * (size_t)(w->rhs_cap + 1);
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) A[k] = malloc(sizeof(double) * nx * nx), B[k] = malloc(sizeof(double) * (nx * nu + 1));
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  int compact = 0;
  for (int form = 0; form < 2; ++form) {
    for (int k = 0; k < 2; ++k) {
      w->no_compact_rhs = k;
      for (size_t i = 0; i < nrhs; ++i) w->rhs[i] = NAN;
      jacobians(d, form, J, A[k], B[k]);
      if (!k) compact |= w->rhs_compact;
      cr_assert(k == 0 || !w->rhs_compact);
      w->no_compact_rhs = 0;
    }
    cr_assert(!memcmp(A[0], A[1], sizeof(double) * nx * nx), "%s: A, form %d", what, form);
    cr_assert(!memcmp(B[0], B[1], sizeof(double) * nx * nu), "%s: B, form %d", what, form);
  }
  grit_jacobian_blocks_free(J);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  return compact;
}

Test(deriv_writes, compact_rhs_same_bits) {
  char msg[GRIT_MESSAGE_SIZE];
  for (int model = GRIT_CONTACT_LAGGED; model <= GRIT_CONTACT_SIMILAR; ++model) {
    grit_model *m;
    grit_data *d;
    cr_assert_eq(scene_clutter(40, 2e-3, &m, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_step_settings st = grit_default_step_settings();
    st.contact_model = model;
    cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
    int compact = 0;
    for (int s = 1; s <= 240; ++s) {
      cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
      if (s % 80 == 0) compact |= compact_same_bits(d, model == GRIT_CONTACT_LAGGED ? "clutter, Lagged" : "clutter");
    }
    cr_assert(compact, "the clutter's columns were compact");
    grit_data_free(d);
    grit_model_free(m);
    d = settled(k_three, NULL, 150, &m);
    cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_gt(grit_data_ncontacts(d), 0);
    cr_assert(compact_same_bits(d, "three trees"), "three trees' columns were compact");
    grit_data_free(d);
    grit_model_free(m);
  }
}
