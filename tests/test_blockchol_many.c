/* SPDX-License-Identifier: Apache-2.0 */
/* test_blockchol_many.c — the block Cholesky's many-column solves (blockchol_many.c): the AVX2 row
 * kernels for dense blocks against the plain loops they replace (grit_blockchol_tiles(b, 0)), bit for
 * bit, on random SPD matrices of two coupled trees of 1 to 100 dofs (diagonal and off-diagonal blocks
 * of every size around the kernels' widths) with 1 to RHS_CHUNK columns and more; and the solution
 * against the matrix (backward error). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"
#include "xml_load_util.h"

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* Two trees of na and nb dofs (a slide and a chain of bodies of up to three hinges each). */
static grit_model *two_trees(int na, int nb) {
  char *xml = malloc(200 * (size_t)(na + nb) + 512), *p = xml;
  p += sprintf(p, "<mujoco><worldbody>");
  for (int t = 0; t < 2; ++t) {
    const int n = t ? nb : na;
    int nbody = 0;
    p += sprintf(p, "<body pos='%d 0 0'><joint type='slide' axis='0 0 1'/><geom type='sphere' size='0.05'/>", t);
    for (int i = 1; i < n; ++nbody) {
      p += sprintf(p, "<body pos='0 0 -0.05'>");
      for (int k = 0; k < 3 && i < n; ++k, ++i)
        p += sprintf(p, "<joint type='hinge' axis='%d %d %d'/>", k == 0, k == 1, k == 2);
      p += sprintf(p, "<geom type='sphere' size='0.02'/>");
    }
    for (int i = 0; i <= nbody; ++i) p += sprintf(p, "</body>");
  }
  p += sprintf(p, "</worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->ntree, 2);
  cr_assert_eq(m->tree_dofnum[0], na);
  cr_assert_eq(m->tree_dofnum[1], nb);
  return m;
}

/* A random SPD matrix (nv x nv, column-major = row-major): a random Gram matrix plus a diagonal. */
static void random_spd(int n, unsigned *seed, double *A) {
  memset(A, 0, sizeof(double) * (size_t)n * n);
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int k = 0; k < n / 2 + 2; ++k) {
    for (int i = 0; i < n; ++i) v[i] = urand(seed);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A[i * n + j] += v[i] * v[j];
  }
  for (int i = 0; i < n; ++i) A[i * n + i] += 0.1 * n;
  free(v);
}

/* Factors the matrix of trees na, nb (coupled when `coupled`) twice and solves the same columns with
 * the row kernels and without: the same bits, and a small backward error. */
static void check(int na, int nb, int coupled, unsigned seed) {
  grit_model *m = two_trees(na, nb);
  const int nv = m->nv;
  double *A = malloc(sizeof(double) * (size_t)nv * nv), *diag = calloc((size_t)m->nM, sizeof(double));
  double *cb = malloc(sizeof(double) * (size_t)na * nb);
  random_spd(nv, &seed, A);
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (!coupled) A[i * nv + na + j] = A[(na + j) * nv + i] = 0.0;
  for (int t = 0; t < 2; ++t) {
    const int a = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) diag[m->tree_madr[t] + i * n + j] = A[(a + i) * nv + a + j];
  }
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < na; ++j) cb[i * na + j] = A[(na + i) * nv + j]; /* rows tree 1, columns tree 0 */
  const int pa = 0, pb = 1, poff = 0, idx = 0;
  const int nrhs[] = {1, 3, 4, 5, 7, 15, 16, 17, 31, 32, 33, 36, 47, 48, 49, 63, 64, 64 + 37};
  const int nn = (int)(sizeof nrhs / sizeof nrhs[0]), maxc = 64 + 37;
  double *B0 = malloc(sizeof(double) * (size_t)nv * maxc), *X[2];
  for (int k = 0; k < nv * maxc; ++k) B0[k] = urand(&seed);
  for (int w = 0; w < 2; ++w) {
    grit_blockchol *b;
    char msg[GRIT_MESSAGE_SIZE];
    double cond;
    cr_assert_eq(grit_blockchol_create(m, 4, &b, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_analyze(b, coupled, &pa, &pb, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_factor(b, diag, cb, &poff, &idx, NULL, &cond, msg), GRIT_OK, "%s", msg);
    grit_blockchol_tiles(b, w == 0);
    X[w] = malloc(sizeof(double) * (size_t)nv * maxc * nn);
    for (int r = 0; r < nn; ++r) {
      double *x = X[w] + (size_t)nv * maxc * r;
      memcpy(x, B0, sizeof(double) * (size_t)nv * nrhs[r]);
      grit_blockchol_solve_many(b, x, nrhs[r]);
    }
    grit_blockchol_free(b);
  }
  for (int r = 0; r < nn; ++r) {
    const size_t o = (size_t)nv * maxc * r;
    cr_expect(memcmp(X[0] + o, X[1] + o, sizeof(double) * (size_t)nv * nrhs[r]) == 0,
              "trees %d, %d (coupled %d), %d columns: the row kernels' solution differs from the loops'", na, nb,
              coupled, nrhs[r]);
    for (int c = 0; c < nrhs[r]; ++c) {
      const double e = solve_backward_error(nv, A, X[0] + o + (size_t)c * nv, B0 + (size_t)c * nv);
      cr_expect(e < 8.0 * nv * DBL_EPSILON, "trees %d, %d, column %d: backward error %.3g", na, nb, c, e);
    }
  }
  free(A), free(diag), free(cb), free(B0), free(X[0]), free(X[1]);
  grit_model_free(m);
}

Test(blockchol_many, row_kernels_same_bits_as_plain_loops) {
  const int sizes[] = {5, 7, 8, 9, 12, 13, 17, 31, 33, 64, 65, 100};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  for (int i = 0; i < ns; ++i) {
    const int na = sizes[i], nb = sizes[(i * 5 + 3) % ns];
    check(na, nb, 1, 7u + (unsigned)i);
    check(na, nb, 0, 77u + (unsigned)i);
  }
  const int small[][2] = {{2, 3}, {3, 3}, {3, 2}, {4, 5}, {5, 3}, {1, 4}, {3, 1}, {2, 7}};
  for (int i = 0; i < (int)(sizeof small / sizeof small[0]); ++i) /* small blocks (2 to 7 dofs: TILE_MIN) */
    check(small[i][0], small[i][1], 1, 9u + (unsigned)i);
  check(6, 40, 1, 5u); /* a 6-dof tree's blocks (the free body's kernels) beside a dense one */
  check(40, 6, 1, 6u);
}
