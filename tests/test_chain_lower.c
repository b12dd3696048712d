/* SPDX-License-Identifier: Apache-2.0 */
/* test_chain_lower.c — the sums of a constraint on trees of up to 64 dofs into the lower triangles of their
 * blocks only (hessian_assemble.c: add_chain_lower_avx2, four adjacent columns a vector; add_small and
 * add_pair_chain without their mirrored writes), against both triangles summed as before
 * (grit_hessian_chain_lower(h, 0)): stepped side by side, the same states and
 * then the same dense A, B, bit for bit, on the block-sparse path (the tree-ordered factor: MuJoCo's loop,
 * humanoid; the dense blocks of a tree coupled to others: the hammock's humanoid on its particles), with
 * CHOLMOD, and on the dense path (where the switch changes nothing). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "hessian_internal.h"
#include "solver_paths_util.h"
#include "solver_state.h"

/* `steps` steps of the scene at path (relative to the source tree) with the lower-only sums and without
 * (factor: 0 the file's settings, 1 CHOLMOD, 2 the dense path), then the dense A, B: the same bits. */
static void same_bits(const char *rel, int steps, int factor) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/%s", GRIT_SOURCE_DIR, rel);
  grit_model *m;
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &m, &info, msg), GRIT_OK, "%s", msg);
  const int nx = 2 * m->nv + m->na;
  double *ab[2][2];
  grit_data *d[2];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_data_create(m, &d[w]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[w], &info.settings), GRIT_OK);
    if (factor == 1) d[w]->settings.sparse_factor = GRIT_FACTOR_CHOLMOD;
    if (factor == 2) d[w]->settings.dense_max_nv = 1000;
    grit_hessian_chain_lower(d[w]->solver->H, w == 0);
    ab[w][0] = calloc((size_t)nx * nx + 1, sizeof(double));
    ab[w][1] = calloc((size_t)nx * m->nu + 1, sizeof(double));
    cr_assert(ab[w][0] && ab[w][1]);
  }
  for (int i = 0; i < steps; ++i)
    for (int w = 0; w < 2; ++w) cr_assert_eq(grit_step(d[w]), GRIT_OK, "%s", grit_data_last_error(d[w]));
  cr_assert(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m->nq) == 0 &&
                memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m->nv) == 0,
            "%s (factor %d): states differ", rel, factor);
  for (int w = 0; w < 2; ++w)
    cr_assert_eq(grit_step_derivatives(d[w], ab[w][0], m->nu ? ab[w][1] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d[w]));
  cr_expect(memcmp(ab[0][0], ab[1][0], sizeof(double) * (size_t)nx * nx) == 0, "%s (factor %d): A differs", rel, factor);
  cr_expect(memcmp(ab[0][1], ab[1][1], sizeof(double) * (size_t)nx * m->nu) == 0, "%s (factor %d): B differs", rel, factor);
  double moved = 0.0;
  for (int i = 0; i < m->nv; ++i) moved = fmax(moved, fabs(d[0]->qvel[i]));
  cr_expect(moved > 0.0, "%s moves", rel);
  for (int w = 0; w < 2; ++w) {
    free(ab[w][0]), free(ab[w][1]);
    grit_data_free(d[w]);
  }
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}

/* The loop: one tree of 44 dofs on the floor, its contacts' chains one run of columns from the root. */
Test(chain_lower, loop_same_bits) {
  same_bits("tests/models/mujoco_composite/composite/loop.xml", 400, 0);
  same_bits("tests/models/mujoco_composite/composite/loop.xml", 250, 1);
  same_bits("tests/models/mujoco_composite/composite/loop.xml", 250, 2);
}

/* MuJoCo's humanoid falling on the floor (feet, hands: chains of several runs) and the hammock's humanoid on
 * its particles (its block factored with the coupling blocks, not in tree order). */
Test(chain_lower, humanoids_same_bits) {
  same_bits("tests/models/mujoco_model/humanoid.xml", 250, 0);
  same_bits("tests/models/mujoco_composite/hammock/hammock.xml", 150, 0);
}

/* Free bodies piling up (add_small's 6-dof blocks and their pairs), also with CHOLMOD. */
Test(chain_lower, clutter_same_bits) {
  same_bits("examples/models/clutter.xml", 200, 0);
  same_bits("examples/models/clutter.xml", 120, 1);
}

/* ---- a chain of 24 to 64 dofs factored by the dense block kernel (grit_hessian_dense_chains) */

static void set_dense_chains(grit_solver *s, int path) { grit_hessian_dense_chains(s->H, path); }
static int count_steps(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return 1;
}

/* Which trees take it: the loop's one tree (a chain of 44 dofs), not the humanoid's branched 27. */
Test(chain_lower, dense_chain_trees) {
  const char *files[] = {"tests/models/mujoco_composite/composite/loop.xml", "tests/models/mujoco_model/humanoid.xml"};
  for (int f = 0; f < 2; ++f) {
    char path[1024], msg[GRIT_MESSAGE_SIZE];
    snprintf(path, sizeof path, "%s/%s", GRIT_SOURCE_DIR, files[f]);
    grit_model *m;
    grit_mjcf_info info;
    cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
    grit_data *d;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    cr_expect_eq(d->solver->H->dchain[0], f == 0, "%s", files[f]);
    cr_expect_eq(d->solver->H->tc_ok[0], f == 1, "%s", files[f]);
    grit_hessian_dense_chains(d->solver->H, 0);
    cr_expect(!d->solver->H->dchain[0] && d->solver->H->tc_ok[0], "%s: the switch", files[f]);
    grit_data_free(d);
    grit_model_free(m);
    grit_mjcf_info_free(&info);
  }
}

/* The same minimizer either way (another factor of the same H: only round-off), from the same states of the
 * loop at rel_tol 1e-11, and the same A, B to round-off after 300 steps (each path its own trajectory at the
 * default tolerance, then the state of the first set into the second). */
Test(chain_lower, dense_chain_same_minimizer) {
  double ca, cb;
  const double worst = sp_compare(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/loop.xml",
                                  set_dense_chains, 1, 0, count_steps, 300, 60, &ca, &cb);
  cr_assert_lt(worst, 1e-7, "the solutions differ by %g of the step's velocity change", worst);
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/loop.xml", &m, &info,
                                   msg), GRIT_OK, "%s", msg);
  const int nx = 2 * m->nv;
  grit_data *d[2];
  double *A[2];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_data_create(m, &d[w]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[w], &info.settings), GRIT_OK);
    grit_hessian_dense_chains(d[w]->solver->H, w == 0);
    A[w] = calloc((size_t)nx * nx, sizeof(double));
    cr_assert(A[w]);
  }
  for (int i = 0; i < 300; ++i) cr_assert_eq(grit_step(d[0]), GRIT_OK, "%s", grit_data_last_error(d[0]));
  cr_assert_eq(grit_data_set_qpos(d[1], d[0]->qpos, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d[1], d[0]->qvel, m->nv), GRIT_OK);
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_step(d[w]), GRIT_OK, "%s", grit_data_last_error(d[w]));
    cr_assert_eq(grit_step_derivatives(d[w], A[w], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[w]));
  }
  double worst_col = 0.0;
  for (int c = 0; c < nx; ++c) {
    double big = 0.0, diff = 0.0;
    for (int r = 0; r < nx; ++r)
      big = fmax(big, fabs(A[0][(size_t)r * nx + c])), diff = fmax(diff, fabs(A[0][(size_t)r * nx + c] - A[1][(size_t)r * nx + c]));
    if (big > 0.0) worst_col = fmax(worst_col, diff / big);
  }
  cr_log_info("loop: A differs by %.3g of a column's largest entry", worst_col);
  cr_expect_lt(worst_col, 1e-6, "A differs by %g of a column's largest entry", worst_col);
  for (int w = 0; w < 2; ++w) free(A[w]), grit_data_free(d[w]);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}
