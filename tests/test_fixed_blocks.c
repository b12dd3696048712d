/* SPDX-License-Identifier: Apache-2.0 */
/* test_fixed_blocks.c — the mass matrix, the dense factor of A and its solve with a tree's block size as a
 * constant (6: a free body; 3: a particle on three slides; dynamics_generic.h) against the general loops
 * (fixed = 0, the old path): the same operations in the same order, so the same bits, on scenes stepped
 * into motion and contact (the sliding rod, MuJoCo's particles, the clutter of free bodies, the humanoid,
 * whose trees take the general loop in both). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "dynamics.h"
#include "model_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

static double *copy_of(const double *x, int n) {
  double *y = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  cr_assert(y);
  memcpy(y, x, sizeof(double) * (size_t)n);
  return y;
}

/* After `steps` steps: M by both paths, then A's factor and a solve by both; each pair compared bit for bit.
 * Returns how many trees take the fixed sizes (all their 6 or 3 dofs on one body, chained in order). */
static int compare_paths(const char *file, int steps) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(file, &m, &info, msg), GRIT_OK, "%s: %s", file, msg);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s: %s", file, grit_data_last_error(d));
  grit_forward_kinematics(d);
  double *Mf = copy_of(d->M, m->nM), *Mg = copy_of(d->M, m->nM);
  grit_crba_sized(m, &d->kin, d->crb, Mf, 1);
  grit_crba_sized(m, &d->kin, d->crb, Mg, 0);
  cr_assert(memcmp(Mf, Mg, sizeof(double) * (size_t)m->nM) == 0, "%s: the mass matrices differ", file);
  double *Mc = copy_of(d->M, m->nM); /* a free body's block in closed form: the same values (+0 for -0) */
  grit_crba_sized(m, &d->kin, d->crb, Mc, 2);
  for (int i = 0; i < m->nM; ++i) cr_assert(Mc[i] == Mf[i], "%s: M[%d] %.17g, closed form %.17g", file, i, Mf[i], Mc[i]);
  free(Mc);
  grit_implicit_operator(m, Mf, m->opt.timestep, Mf);
  memcpy(Mg, Mf, sizeof(double) * (size_t)m->nM);
  cr_assert_eq(grit_block_cholesky_sized(m, Mf, NULL, 1), -1);
  cr_assert_eq(grit_block_cholesky_sized(m, Mg, NULL, 0), -1);
  cr_assert(memcmp(Mf, Mg, sizeof(double) * (size_t)m->nM) == 0, "%s: the factors differ", file);
  double *xf = copy_of(grit_data_qvel(d), m->nv), *xg = copy_of(grit_data_qvel(d), m->nv);
  for (int i = 0; i < m->nv; ++i) xf[i] = xg[i] = xf[i] + 0.25 * (double)(i % 7) - 0.5; /* (nonzero entries) */
  grit_block_cholesky_solve_sized(m, Mf, xf, 1);
  grit_block_cholesky_solve_sized(m, Mg, xg, 0);
  cr_assert(memcmp(xf, xg, sizeof(double) * (size_t)m->nv) == 0, "%s: the solutions differ", file);
  int sized = 0;
  for (int t = 0; t < m->ntree; ++t) { /* the trees the fixed sizes take (crba_one_body's test) */
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    int one = (n == 6 || n == 3) && m->dof_parent[adr] < 0 && m->dof_body[adr + n - 1] == m->dof_body[adr];
    for (int i = adr + 1; one && i < adr + n; ++i) one = m->dof_parent[i] == i - 1;
    sized += one;
  }
  free(Mf), free(Mg), free(xf), free(xg);
  grit_data_free(d);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
  return sized;
}

Test(fixed_blocks, same_bits_as_the_general_loops) {
  cr_assert_gt(compare_paths(GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml", 50), 0);
  cr_assert_gt(compare_paths(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/particle.xml", 60), 0);
  cr_assert_gt(compare_paths(GRIT_SOURCE_DIR "/examples/models/clutter.xml", 100), 0);
  compare_paths(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", 50);
}

/* A free joint's body no longer placed by its offset first (the pose the joint overwrites), its translation's
 * twist written (kin_free_from_rest); m->kin_free_placed = 1 is the old path: `steps` steps both ways, q, v and
 * the kinematics at the end bit for bit. */
static void compare_free_placement(const char *file, int steps) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(file, &m, &info, msg), GRIT_OK, "%s: %s", file, msg);
  grit_data *d[2] = {NULL, NULL};
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_data_create(m, &d[w]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[w], &info.settings), GRIT_OK);
  }
  for (int i = 0; i < steps; ++i)
    for (int w = 0; w < 2; ++w) {
      m->kin_free_placed = w;
      cr_assert_eq(grit_step(d[w]), GRIT_OK, "%s: %s", file, grit_data_last_error(d[w]));
    }
  m->kin_free_placed = 0;
  cr_assert(memcmp(grit_data_qpos(d[0]), grit_data_qpos(d[1]), sizeof(double) * (size_t)m->nq) == 0, "%s: q", file);
  cr_assert(memcmp(grit_data_qvel(d[0]), grit_data_qvel(d[1]), sizeof(double) * (size_t)m->nv) == 0, "%s: v", file);
  cr_assert(memcmp(d[0]->kin.xpos, d[1]->kin.xpos, sizeof(double) * 3 * (size_t)m->nbody) == 0, "%s: xpos", file);
  cr_assert(memcmp(d[0]->kin.xquat, d[1]->kin.xquat, sizeof(double) * 4 * (size_t)m->nbody) == 0, "%s: xquat", file);
  cr_assert(memcmp(d[0]->kin.cdof, d[1]->kin.cdof, sizeof(double) * 6 * (size_t)m->nv) == 0, "%s: cdof", file);
  cr_assert(memcmp(d[0]->kin.cvel, d[1]->kin.cvel, sizeof(double) * 6 * (size_t)m->nbody) == 0, "%s: cvel", file);
  cr_assert(memcmp(d[0]->cvel_star, d[1]->cvel_star, sizeof(double) * 6 * (size_t)m->nbody) == 0, "%s: cvel*", file);
  for (int w = 0; w < 2; ++w) grit_data_free(d[w]);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}

Test(fixed_blocks, free_bodies_placed_by_their_joint_alone) {
  compare_free_placement(GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml", 200);
  compare_free_placement(GRIT_SOURCE_DIR "/examples/models/clutter.xml", 100);
  compare_free_placement(GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", 50);
}
