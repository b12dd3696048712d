/* SPDX-License-Identifier: Apache-2.0 */
/* test_bigsparse_snodes.c — a big tree's sparse factor with the updates of a supernode's columns taken
 * together (blockchol_sparse.c, factor_columns_snode) against one column's update at a time
 * (grit_blockchol_sparse_snodes(b, 0)): the same bits on star trees (a free root and slides coupled in a
 * ring, in bands, in a clique: the trailing dense block, rows held apart), with the solutions against the
 * matrix (backward error); and MuJoCo's flag, softbox and cloth stepped both ways, states bit for bit. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian_internal.h"
#include "math_test_util.h"
#include "solver_state.h"
#include "treechol.h"
#include "xml_load_util.h"

/* Factors H (+ nlow rows held apart) with the supernodes' grouped updates, without, and with every AVX2
 * kernel off (grit_blockchol_sparse_kernel(b, 0): the plain loops, the single-column solve's too), solves
 * 13 columns together and 3 one by one with each: the same bits, a small backward error. Returns the
 * grouped entries' count. */
static int check(int leaves, int band, int c0, int c1, int nlow, unsigned seed) {
  grit_model *m = star_tree(leaves);
  const int n = m->nv, nc = 13;
  double *H = malloc(sizeof(double) * (size_t)n * n), *Hx = malloc(sizeof(double) * (size_t)n * n);
  double *J = malloc(sizeof(double) * (size_t)n * (nlow + 1)), *B = malloc(sizeof(double) * (size_t)n * nc), *X[3];
  star_h(n, band, c0, c1, &seed, H);
  memcpy(Hx, H, sizeof(double) * (size_t)n * n);
  for (int r = 0; r < nlow; ++r) { /* g J^T J over every leaf */
    double *jr = J + (size_t)r * n;
    for (int i = 0; i < n; ++i) jr[i] = i < 6 ? 0.0 : star_urand(&seed);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) Hx[i * n + j] += 0.7 * jr[i] * jr[j];
  }
  for (int i = 0; i < n * nc; ++i) B[i] = star_urand(&seed);
  int grouped = 0;
  for (int w = 0; w < 3; ++w) {
    grit_blockchol *b;
    char msg[GRIT_MESSAGE_SIZE];
    double cond;
    cr_assert_eq(grit_blockchol_create(m, 4, &b, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_analyze(b, 0, NULL, NULL, msg), GRIT_OK, "%s", msg);
    grit_blockchol_sparse_snodes(b, w != 1);
    grit_blockchol_sparse_kernel(b, w != 2);
    grit_blockchol_lowrank_clear(b, 0);
    for (int r = 0; r < nlow; ++r) cr_assert(grit_blockchol_lowrank_add(b, 0, J + (size_t)r * n, 0.7));
    cr_assert_eq(grit_blockchol_factor(b, H, NULL, NULL, NULL, NULL, &cond, msg), GRIT_OK, "%s", msg);
    cr_assert(b->tree_sp[0], "the sparse factor taken (%d leaves)", leaves);
    if (w == 0) grouped = grit_bigsparse_grouped(b->sp[0]);
    X[w] = malloc(sizeof(double) * (size_t)n * (nc + 3));
    memcpy(X[w], B, sizeof(double) * (size_t)n * nc);
    grit_blockchol_solve(b, X[w], nc, NULL);
    memcpy(X[w] + (size_t)n * nc, B, sizeof(double) * (size_t)n * 3);
    for (int c = 0; c < 3; ++c) grit_blockchol_solve(b, X[w] + (size_t)n * (nc + c), 1, NULL);
    grit_blockchol_free(b);
  }
  for (int w = 1; w < 3; ++w)
    cr_expect(memcmp(X[0], X[w], sizeof(double) * (size_t)n * (nc + 3)) == 0,
              "%d leaves, band %d, clique %d..%d, %d rows apart: the solutions differ (%s)", leaves, band, c0, c1, nlow,
              w == 1 ? "no supernodes" : "plain loops");
  for (int c = 0; c < 3; ++c) {
    const double e = solve_backward_error(n, Hx, X[0] + (size_t)n * (nc + c), B + (size_t)c * n);
    cr_expect(e < 8.0 * n * DBL_EPSILON, "%d leaves, column %d alone: backward error %.3g", leaves, c, e);
  }
  for (int c = 0; c < nc; ++c) {
    const double e = solve_backward_error(n, Hx, X[0] + (size_t)c * n, B + (size_t)c * n);
    cr_expect(e < 8.0 * n * DBL_EPSILON, "%d leaves, column %d: backward error %.3g", leaves, c, e);
  }
  free(H), free(Hx), free(J), free(B), free(X[0]), free(X[1]), free(X[2]);
  grit_model_free(m);
  return grouped;
}

Test(bigsparse_snodes, star_trees_same_bits) {
  int g = 0;
  g += check(70, 1, 0, 0, 0, 3u);
  g += check(110, 3, 0, 0, 0, 5u);
  g += check(110, 2, 20, 60, 0, 7u); /* the clique: positions of the trailing dense block */
  g += check(130, 5, 30, 62, 2, 11u); /* and two rows held apart */
  g += check(200, 9, 0, 0, 1, 13u);
  g += check(150, 17, 100, 140, 0, 17u); /* wide bands: wide supernodes, sixteen rows a pass */
  cr_expect(g > 0, "some updates grouped");
}

/* A MuJoCo composite stepped with the grouped updates and without: the same states, bit for bit. */
static void step_composite(const char *rel, int allow, int steps, double *q, double *v, int *grouped) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/%s", GRIT_SOURCE_DIR, rel);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  grit_mjcf_info info;
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
  cr_assert(m->nq <= 400 && m->nv <= 400);
  grit_blockchol *b = d->solver->H->bc;
  grit_blockchol_sparse_snodes(b, allow);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  *grouped = 0;
  for (int t = 0; t < b->nt; ++t)
    if (b->sp[t]) *grouped += grit_bigsparse_grouped(b->sp[t]);
  memcpy(q, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v, d->qvel, sizeof(double) * (size_t)m->nv);
  grit_data_free(d);
  grit_model_free(m);
}

static void composite_same_bits(const char *rel, int steps) {
  static double q[2][400], v[2][400];
  int g[2];
  memset(q, 0, sizeof q), memset(v, 0, sizeof v);
  for (int w = 0; w < 2; ++w) step_composite(rel, w == 0, steps, q[w], v[w], &g[w]);
  cr_expect(g[0] > 0, "%s: some updates grouped", rel);
  cr_expect(memcmp(q[0], q[1], sizeof q[0]) == 0 && memcmp(v[0], v[1], sizeof v[0]) == 0, "%s: states differ", rel);
  double moved = 0.0;
  for (int i = 0; i < 400; ++i) moved = fmax(moved, fabs(v[0][i]));
  cr_expect(moved > 0.0 && isfinite(moved), "%s moves", rel);
}

Test(bigsparse_snodes, flag_same_bits) { composite_same_bits("flag/flag.xml", 30); }
Test(bigsparse_snodes, softbox_same_bits) { composite_same_bits("composite/softbox.xml", 40); }
Test(bigsparse_snodes, cloth_same_bits) { composite_same_bits("composite/cloth.xml", 40); }

/* The block's pattern (its nonzeros: -0 as zero, NaN as nonzero) by the AVX2 loop, sixteen entries a
 * step, and by the plain loop: the same bits, for sizes about the 64-bit words' ends. */
Test(bigsparse_snodes, pattern_same_as_the_plain_loop) {
  const int leaves[] = {59, 60, 64, 70, 121, 122, 123, 140, 194};
  unsigned seed = 19u;
  for (size_t c = 0; c < sizeof leaves / sizeof leaves[0]; ++c) {
    grit_model *m = star_tree(leaves[c]);
    const int n = m->nv;
    grit_bigsparse *s = grit_bigsparse_create(m, 0);
    cr_assert(s);
    double *H = malloc(sizeof(double) * (size_t)n * n);
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < n * n; ++i) {
        const double u = star_urand(&seed);
        H[i] = u < -0.6 ? 0.0 : u < -0.4 ? -0.0 : u < -0.38 ? NAN : u < 0.5 - 0.3 * round ? 0.0 : u;
      }
      cr_expect(grit_bigsparse_pattern_same(s, H), "%d dofs, round %d: the patterns differ", n, round);
    }
    free(H);
    grit_bigsparse_free(s);
    grit_model_free(m);
  }
}

/* The tree-ordered Delassus sum of one row (grit_treechol_delassus_cols and _delassus) with the updates of
 * runs of consecutive ancestors in AVX2 registers and by the indexed loop (grit_treechol_runs): the same
 * bits, on a star tree (a free root: every leaf's ancestors are a run) and rows over a few leaves or all. */
Test(bigsparse_snodes, delassus_runs_same_bits) {
  grit_model *m = star_tree(90);
  const int n = m->nv;
  char msg[GRIT_MESSAGE_SIZE];
  grit_treechol *tc;
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK, "%s", msg);
  double *H = malloc(sizeof(double) * (size_t)n * n), *L = malloc(sizeof(double) * (size_t)grit_treechol_size(tc, 0));
  double *inv = malloc(sizeof(double) * (size_t)n), *J = malloc(sizeof(double) * (size_t)n);
  double *x = calloc((size_t)n, sizeof(double));
  uint64_t bits[4] = {0};
  int *cols = malloc(sizeof(int) * (size_t)n);
  unsigned seed = 23u;
  star_h(n, 0, 0, 0, &seed, H);
  double lo = INFINITY, hi = 0.0;
  cr_assert_eq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
  for (int round = 0; round < 6; ++round) {
    int nc = 0;
    for (int i = 0; i < n; ++i) {
      const int on = round == 5 ? i >= 6 : (i * 7 + round * 13) % 29 == 0 || i == 6 + round;
      J[i] = on ? star_urand(&seed) : 0.0;
      if (on) cols[nc++] = i;
    }
    double w[4];
    for (int v = 0; v < 2; ++v) {
      grit_treechol_runs(tc, v == 0);
      w[2 * v] = grit_treechol_delassus_cols(tc, 0, L, inv, J, 1, cols, nc, x, bits);
      w[2 * v + 1] = grit_treechol_delassus(tc, 0, L, inv, J, 1, x, bits);
    }
    cr_expect(memcmp(&w[0], &w[2], sizeof(double)) == 0 && memcmp(&w[1], &w[3], sizeof(double)) == 0 &&
                  memcmp(&w[0], &w[1], sizeof(double)) == 0,
              "round %d: %.17g %.17g %.17g %.17g", round, w[0], w[1], w[2], w[3]);
    cr_expect(w[0] > 0.0 && isfinite(w[0]));
  }
  free(H), free(L), free(inv), free(J), free(x), free(cols);
  grit_treechol_free(tc);
  grit_model_free(m);
}
