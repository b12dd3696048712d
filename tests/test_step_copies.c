/* SPDX-License-Identifier: Apache-2.0 */
/* test_step_copies.c — the step's dense tree blocks over their patterns (stop 25), each against the old
 * path: on a tree factored in tree order only the dof-ancestor pairs are copied, from M into A by the free
 * motion (forward.c, implicit_operator; d->no_a_pattern: M whole) and from A into d->Aprev by the commit
 * (step.c, keep_operator; d->no_aprev_pattern: A whole). The same bytes of A and Aprev, the same
 * trajectory and the same derivatives, through Euler steps, quasistatic ones (whose free motion factors
 * in Aprev) and a quasistatic step that fails after scribbling on it. The solver's A dv over a big tree's
 * pattern (treechol.c, grit_treechol_mulv; grit_treechol_mulv_pattern(tc, 0): dense): the same bits. One
 * row's Delassus sum with each dof's row in one load (grit_treechol_rowinfo(tc, 0): the arrays): the same bits. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afactor.h"
#include "constraints_extra.h"
#include "data_internal.h"
#include "dynamics.h"
#include "hessian_internal.h"
#include "solver.h"
#include "solver_state.h"
#include "treechol.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

/* rel: a file under the source tree, or an MJCF string (starting with '<') */
static void load(const char *rel, grit_model **m, grit_mjcf_info *info) {
  char msg[GRIT_MESSAGE_SIZE], path[1024];
  if (rel[0] == '<') {
    cr_assert_eq(grit_mjcf_load_string(rel, m, info, msg), GRIT_OK, "%s", msg);
    return;
  }
  snprintf(path, sizeof path, "%s/%s", GRIT_SOURCE_DIR, rel);
  cr_assert_eq(grit_mjcf_load_file(path, m, info, msg), GRIT_OK, "%s", msg);
}

static void same_data(grit_data *const d[2], const grit_model *m, const char *when) {
  cr_assert_eq(memcmp(d[0]->Aprev, d[1]->Aprev, sizeof(double) * (size_t)m->nM), 0, "Aprev differs %s", when);
  cr_assert_eq(memcmp(d[0]->A, d[1]->A, sizeof(double) * (size_t)m->nM), 0, "A differs %s", when);
  cr_assert_eq(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m->nq), 0, "positions differ %s", when);
  cr_assert_eq(memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m->nv), 0, "velocities differ %s", when);
}

static void steps(grit_data *const d[2], const grit_model *m, int n, const char *what, int *pattern_steps) {
  char when[64];
  for (int s = 0; s < n; ++s) {
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_step(d[i]), GRIT_OK, "%s", grit_data_last_error(d[i]));
    *pattern_steps += grit_afactor_any(d[0]->af);
    snprintf(when, sizeof when, "after %s step %d", what, s);
    same_data(d, m, when);
  }
}

static void set_integrator(grit_data *const d[2], grit_integrator integ, double eps) {
  for (int i = 0; i < 2; ++i) {
    grit_step_settings st = grit_data_step_settings(d[i]);
    st.integrator = integ;
    st.quasistatic_inertia = eps;
    cr_assert_eq(grit_data_set_step_settings(d[i], &st), GRIT_OK);
  }
}

/* quasi: the quasistatic steps too (not with fluid forces: the flag's) */
static void check_scene(const char *rel, int n, int quasi) {
  grit_model *m;
  grit_mjcf_info info;
  load(rel, &m, &info);
  grit_data *d[2];
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_data_create(m, &d[i]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[i], &info.settings), GRIT_OK);
  }
  d[1]->no_aprev_pattern = 1;
  d[1]->no_a_pattern = 1;
  int pattern_steps = 0;
  steps(d, m, n, "Euler", &pattern_steps);
  cr_assert(pattern_steps > 0, "no step took the tree-ordered factor");
  if (quasi) {
    set_integrator(d, GRIT_INTEGRATOR_QUASISTATIC, 1e-6);
    steps(d, m, 2, "quasistatic", &pattern_steps);
    set_integrator(d, GRIT_INTEGRATOR_EULER, 0.0);
    steps(d, m, n, "Euler after quasistatic", &pattern_steps);
    /* a quasistatic step without inertia on the free root fails once its free motion has factored in Aprev */
    set_integrator(d, GRIT_INTEGRATOR_QUASISTATIC, 0.0);
    for (int i = 0; i < 2; ++i) cr_assert_neq(grit_step(d[i]), GRIT_OK, "the quasistatic step should fail");
    cr_assert_eq(d[0]->aprev_scratched, 1);
    set_integrator(d, GRIT_INTEGRATOR_EULER, 0.0);
    steps(d, m, n, "Euler after a failed quasistatic", &pattern_steps);
  }
  /* the derivatives read Aprev whole */
  const int nx = 2 * m->nv + m->na, nu = m->nu;
  double *A[2], *B[2];
  for (int i = 0; i < 2; ++i) {
    A[i] = calloc((size_t)nx * (size_t)nx, sizeof(double));
    B[i] = calloc((size_t)nx * (size_t)(nu > 0 ? nu : 1), sizeof(double));
    cr_assert_eq(grit_step_derivatives(d[i], A[i], B[i], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[i]));
  }
  cr_assert_eq(memcmp(A[0], A[1], sizeof(double) * (size_t)nx * (size_t)nx), 0, "A differs");
  cr_assert_eq(memcmp(B[0], B[1], sizeof(double) * (size_t)nx * (size_t)nu), 0, "B differs");
  for (int i = 0; i < 2; ++i) free(A[i]), free(B[i]), grit_data_free(d[i]);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(step_copies, softbox_keeps_the_same_operator) {
  check_scene("tests/models/mujoco_composite/composite/softbox.xml", 5, 1);
}

Test(step_copies, flag_keeps_the_same_operator) { check_scene("tests/models/mujoco_composite/flag/flag.xml", 4, 0); }

/* ------------------------------------------------------------------ A x over a big tree's pattern */

/* grit_treechol_mulv against grit_tree_mulv on the step's A of each big tree: the same bits for x with
 * negative entries, +0 and -0; it declines x with an infinity, and trees it does not take. */
static void check_mulv(const char *rel) {
  grit_model *m;
  grit_mjcf_info info;
  load(rel, &m, &info);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  for (int s = 0; s < 3; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK, "%s", msg);
  const int nv = m->nv;
  double *x = calloc((size_t)nv, sizeof(double)), *y1 = calloc((size_t)nv, sizeof(double));
  double *y2 = calloc((size_t)nv, sizeof(double));
  unsigned r = 12345u;
  for (int i = 0; i < nv; ++i) {
    r = r * 1103515245u + 12345u;
    x[i] = i % 7 == 3 ? 0.0 : i % 7 == 5 ? -0.0 : ((double)(r >> 8) / 16777216.0 - 0.5) * (1 + i % 3);
  }
  int taken = 0;
  for (int t = 0; t < m->ntree; ++t) {
    grit_tree_mulv(m, d->A, t, x, y1);
    const int used = grit_treechol_mulv(tc, t, d->A, x, y2);
    cr_assert_eq(used, m->tree_dofnum[t] > 64, "tree %d of %d dofs", t, m->tree_dofnum[t]);
    if (!used) continue;
    taken++;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    cr_assert_eq(memcmp(y1 + adr, y2 + adr, sizeof(double) * (size_t)n), 0, "tree %d: A x differs", t);
    const double keep = x[adr + n / 2];
    x[adr + n / 2] = 1.0 / 0.0;
    y2[adr] = 42.0;
    cr_assert_eq(grit_treechol_mulv(tc, t, d->A, x, y2), 0, "an infinite x should be declined");
    cr_assert_eq(y2[adr], 42.0);
    x[adr + n / 2] = keep;
    grit_treechol_mulv_pattern(tc, 0);
    cr_assert_eq(grit_treechol_mulv(tc, t, d->A, x, y2), 0, "the switch should decline");
    grit_treechol_mulv_pattern(tc, 1);
  }
  cr_assert(taken > 0);
  free(x), free(y1), free(y2);
  grit_treechol_free(tc);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(step_copies, mulv_over_the_pattern_matches_the_dense_product) {
  check_mulv("tests/models/mujoco_composite/composite/softbox.xml");
  check_mulv("tests/models/mujoco_composite/flag/flag.xml");
}

/* The solver's A dv over the pattern (solver_tree_mulv) against the dense product: the same steps. */
static void check_solver_mulv(const char *rel, int n) {
  grit_model *m;
  grit_mjcf_info info;
  load(rel, &m, &info);
  grit_data *d[2];
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_data_create(m, &d[i]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[i], &info.settings), GRIT_OK);
  }
  cr_assert(d[0]->solver->tcm != NULL);
  grit_treechol_mulv_pattern(d[1]->solver->H->tcp, 0);
  char when[64];
  for (int s = 0; s < n; ++s) {
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_step(d[i]), GRIT_OK, "%s", grit_data_last_error(d[i]));
    snprintf(when, sizeof when, "after step %d", s);
    same_data(d, m, when);
  }
  for (int i = 0; i < 2; ++i) grit_data_free(d[i]);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(step_copies, solver_mulv_over_the_pattern_steps_alike) {
  check_solver_mulv("tests/models/mujoco_composite/composite/softbox.xml", 10);
  check_solver_mulv("tests/models/mujoco_composite/composite/cloth.xml", 10);
}

/* ------------------------------------------------------------------ one row's Delassus sum */

/* The step's one-row constraints on a big tree: grit_treechol_delassus_cols and _delassus with each dof's
 * row in one load (delassus1_rows), with the three arrays (grit_treechol_rowinfo(tc, 0)), by the indexed
 * loop (grit_treechol_runs(tc, 0)) and with the root's chain marked dof by dof (grit_treechol_chain(tc, 0)):
 * the same bits. */
static void check_delassus_rows(const char *rel, int min_leaves) {
  grit_model *m;
  grit_mjcf_info info;
  load(rel, &m, &info);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  for (int s = 0; s < 3; ++s) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK, "%s", msg);
  int big = 0;
  for (int t = 1; t < m->ntree; ++t)
    if (m->tree_dofnum[t] > m->tree_dofnum[big]) big = t;
  const int n = m->tree_dofnum[big];
  double *L = malloc(sizeof(double) * (size_t)grit_treechol_size(tc, big)), *inv = malloc(sizeof(double) * (size_t)n);
  double *x = calloc((size_t)n, sizeof(double));
  uint64_t *bits = calloc((size_t)(n + 63) / 64, sizeof(uint64_t));
  double lo = 1e300, hi = 0.0;
  cr_assert_eq(grit_treechol_factor(tc, big, d->A + m->tree_madr[big], L, inv, &lo, &hi), -1);
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  int rows = 0, leaves = 0;
  for (int i = 0; i < d->stats.nconstraints; ++i) {
    if (c[i].dim != 1 || c[i].ntree != 1 || c[i].tree[0] != big) continue;
    int ncols = 0;
    const int *cols = grit_cx_cols(m, d->cx_colptr, d->cx_cols, c[i].kind, c[i].source, &ncols);
    const double *J = jstore + c[i].joff[0];
    double w[8];
    for (int v = 0; v < 4; ++v) {
      grit_treechol_rowinfo(tc, v != 1);
      grit_treechol_runs(tc, v != 2);
      grit_treechol_chain(tc, v != 3);
      w[2 * v] = cols ? grit_treechol_delassus_cols(tc, big, L, inv, J, 1, cols, ncols, x, bits) : 0.0;
      w[2 * v + 1] = grit_treechol_delassus(tc, big, L, inv, J, 1, x, bits);
    }
    for (int v = 1; v < 4; ++v)
      cr_assert(memcmp(&w[0], &w[2 * v], sizeof(double)) == 0 && memcmp(&w[1], &w[2 * v + 1], sizeof(double)) == 0,
                "constraint %d: %.17g %.17g, path %d: %.17g %.17g", i, w[0], w[1], v, w[2 * v], w[2 * v + 1]);
    grit_treechol_rowinfo(tc, 1), grit_treechol_runs(tc, 1), grit_treechol_chain(tc, 1);
    const int slot = grit_cx_slot(m, c[i].kind, c[i].source);
    double wl = -1.0; /* a row hanging off the chain (grit_cx_leaf_lists): delassus1_leaves, the same bits */
    if (slot >= 0 && d->cx_leaf[slot] && grit_treechol_delassus_leaves(tc, big, L, inv, J, cols, ncols, &wl)) {
      cr_assert(memcmp(&w[0], &wl, sizeof(double)) == 0, "constraint %d: %.17g, leaves %.17g", i, w[0], wl);
      leaves++;
    }
    for (int k = 0; k < n; ++k) cr_assert(x[k] == 0.0, "the scratch was left nonzero");
    rows++;
  }
  cr_assert(rows > 0, "no one-row constraint on the big tree");
  cr_assert(leaves >= min_leaves, "%d rows by delassus1_leaves, %d expected", leaves, min_leaves);
  free(L), free(inv), free(x), free(bits);
  grit_treechol_free(tc);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(step_copies, delassus_rows_same_bits) {
  check_delassus_rows("tests/models/mujoco_composite/composite/softbox.xml", 640); /* its joint equalities (646) */
  check_delassus_rows("tests/models/mujoco_composite/flag/flag.xml", 0);
  check_delassus_rows("tests/models/mujoco_composite/composite/cloth.xml", 0);
}

/* ------------------------------------------------------------------ the composites' equality rows (stop 28) */

/* The step's joint equality rows built by joint_equality (constraints_extra.c) and their one-row Delassus sums
 * by delassus1_leaves from step_delassus, against grit_cx_rows_cols (m->cx_joint_generic) and delassus1_rows
 * (grit_afactor_set_delassus_leaves(af, 0)) in a second data of a copied model: the same constraints' J, w
 * and parameters byte for byte, the same trajectory, the same derivatives. */
/* (zero_all: the second model's rows zero their whole J blocks, m->cx_zero_all, instead of the generic joint
 * equality rows and the Delassus sums without leaves) */
static void check_rows(const char *rel, int n, int min_leaves, int zero_all) {
  grit_model *m[2];
  grit_mjcf_info info;
  load(rel, &m[0], &info);
  cr_assert_eq(grit_model_copy(m[0], &m[1]), GRIT_OK);
  if (zero_all) m[1]->cx_zero_all = 1;
  else m[1]->cx_joint_generic = 1;
  grit_data *d[2];
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_data_create(m[i], &d[i]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[i], &info.settings), GRIT_OK);
  }
  if (!zero_all) grit_afactor_set_delassus_leaves(d[1]->af, 0);
  int leaves = 0;
  for (int k = 0; k < m[0]->neq + m[0]->ntendon; ++k) leaves += d[0]->cx_leaf[k];
  cr_assert(leaves >= min_leaves, "%d leaf lists, %d expected", leaves, min_leaves);
  for (int s = 0; s < n; ++s) {
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_step(d[i]), GRIT_OK, "%s", grit_data_last_error(d[i]));
    cr_assert_eq(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m[0]->nq), 0, "positions, step %d", s);
    cr_assert_eq(memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m[0]->nv), 0, "velocities, step %d", s);
    int nc[2], nj[2];
    const grit_constraint *c[2];
    const double *js[2];
    for (int i = 0; i < 2; ++i) {
      c[i] = grit_solver_constraints(d[i]->solver, NULL);
      js[i] = grit_solver_jstore(d[i]->solver, NULL);
      nc[i] = d[i]->stats.nconstraints;
      nj[i] = nc[i] > 0 ? c[i][nc[i] - 1].joff[c[i][nc[i] - 1].ntree - 1] +
                              c[i][nc[i] - 1].dim * m[0]->tree_dofnum[c[i][nc[i] - 1].tree[c[i][nc[i] - 1].ntree - 1]]
                        : 0;
    }
    cr_assert_eq(nc[0], nc[1]);
    cr_assert_eq(memcmp(js[0], js[1], sizeof(double) * (size_t)nj[0]), 0, "J, step %d", s);
    for (int k = 0; k < nc[0]; ++k) {
      cr_assert_eq(memcmp(&c[0][k].w, &c[1][k].w, sizeof(double)), 0, "w of constraint %d, step %d", k, s);
      cr_assert_eq(memcmp(&c[0][k].p, &c[1][k].p, sizeof c[0][k].p), 0, "parameters of constraint %d, step %d", k, s);
    }
  }
  double *AB[2];
  const int nx = 2 * m[0]->nv + m[0]->na, nAB = nx * (nx + m[0]->nu);
  for (int i = 0; i < 2; ++i) {
    AB[i] = malloc(sizeof(double) * (size_t)(nAB > 0 ? nAB : 1));
    cr_assert_eq(grit_step_derivatives(d[i], AB[i], m[0]->nu > 0 ? AB[i] + nx * nx : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d[i]));
  }
  cr_assert_eq(memcmp(AB[0], AB[1], sizeof(double) * (size_t)nAB), 0, "the derivatives differ");
  for (int i = 0; i < 2; ++i) free(AB[i]), grit_data_free(d[i]), grit_model_free(m[i]);
  grit_mjcf_info_free(&info);
}

Test(step_copies, joint_equality_rows_same_bits) {
  check_rows("tests/models/mujoco_composite/composite/softbox.xml", 12, 640, 0);
  check_rows("tests/models/mujoco_composite/composite/cloth.xml", 4, 0, 0);
}

/* The equality and tendon rows' J blocks zeroed on their listed columns only where the last step built the same
 * constraint at the same offsets (constraints_extra.c, zero_blocks) against the whole blocks zeroed
 * (m->cx_zero_all): every constraint's J, w and parameters byte for byte, the trajectory, the derivatives.
 * The flag's rows keep their offsets every step; the softbox's and the hammock's move with their contacts; the
 * humanoid's and the ball in cup's tendon limits are built and dropped (a dropped row's blocks zeroed again). */
Test(step_copies, kept_zeros_same_bits) {
  check_rows("tests/models/mujoco_composite/flag/flag.xml", 6, 0, 1);
  check_rows("tests/models/mujoco_composite/composite/softbox.xml", 12, 0, 1);
  check_rows("tests/models/mujoco_composite/composite/cloth.xml", 8, 0, 1);
  check_rows("tests/models/mujoco_composite/hammock/hammock.xml", 12, 0, 1);
  check_rows("tests/models/mujoco_model/humanoid.xml", 40, 0, 1); /* (tendon limits built and dropped) */
  check_rows("tests/models/dm_control_suite/ball_in_cup.xml", 40, 0, 1);
}

/* A dropped limit of a tendon over two trees, followed by rows on one tree: the limit is built at the offset the
 * spring rows then take, and its second tree's block reaches into the block of the row after the first, which
 * keeps its zeros from the last step (the same row at the same offset). Only the dropped limit's blocks zeroed
 * again keep that row's J exact: the limit's coefficient on tree 2's fourth dof lies at a column the row does
 * not list. Two chains of four hinges swinging down from the horizontal; the limit's range is never within the
 * step's reach. */
static const char *DROPPED_LIMIT =
    "<mujoco><option timestep='0.01'/><worldbody>"
    "<body><joint name='a0' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='a1' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='a2' axis='1 0 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='a3' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "</body></body></body></body>"
    "<body pos='0 1 0'><joint name='b0' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='b1' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='b2' axis='1 0 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "<body pos='.2 0 0'><joint name='b3' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.02'/>"
    "</body></body></body></body></worldbody>"
    "<tendon><fixed limited='true' range='-2 2'><joint joint='a0' coef='1'/><joint joint='b3' coef='1'/></fixed>"
    "<fixed stiffness='5'><joint joint='a1' coef='1'/></fixed>"
    "<fixed stiffness='5' damping='.1'><joint joint='a0' coef='1'/></fixed></tendon></mujoco>";

Test(step_copies, kept_zeros_after_a_dropped_two_tree_limit_same_bits) {
  check_rows(DROPPED_LIMIT, 20, 0, 1);
}
