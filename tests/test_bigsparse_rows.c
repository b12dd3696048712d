/* SPDX-License-Identifier: Apache-2.0 */
/* test_bigsparse_rows.c — a big tree's sparse factor's many-column solves with each row held in registers
 * (blockchol_sparse_rows.c) against the loops they replace (grit_blockchol_sparse_rows(b, 0)): the same
 * bits, on a star tree (MuJoCo's softbox in small) with ring couplings, a clique (the trailing dense
 * block) and rows held apart (Woodbury), for 1 to 101 columns, dense and with right-hand sides zero over
 * their first rows; the solutions against the matrix (backward error); and A, B of MuJoCo's softbox and
 * cloth with and without the kernels, bit for bit. Also the tree-ordered solve of a constraint's rows
 * (grit_treechol_solve_from_rows) with its runs of four siblings together and one dof at a time, and
 * A's tree-ordered factor's many-column solve on a tree whose rows are not a multiple of four (the last
 * rows' moves). The AVX-512 kernels against the AVX2 ones on a random factor: the same bits, zeros' signs too. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afactor.h"
#include "blockchol.h"
#include "blockchol_internal.h"
#include "blockchol_sparse_rows.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "forward.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian_internal.h"
#include "math_test_util.h"
#include "solver_state.h"
#include "treechol.h"
#include "xml_load_util.h"

/* Factors H (+ the rows held apart, nlow of them) and solves the same columns with the row kernels and
 * without: the same bits, a small backward error. zero_rows: each column zero over its first dofs (a
 * varying count), as the derivatives' columns that start deep in the tree (the kernels skip the zero
 * rows' products: with no -0 in the right-hand sides, not even a zero's sign can differ). */
static void check(int leaves, int c0, int c1, int nlow, int zero_rows, unsigned seed) {
  grit_model *m = star_tree(leaves);
  const int n = m->nv;
  double *H = malloc(sizeof(double) * (size_t)n * n), *Hx = malloc(sizeof(double) * (size_t)n * n);
  double *J = malloc(sizeof(double) * (size_t)n * (nlow + 1));
  star_h(n, 1, c0, c1, &seed, H);
  memcpy(Hx, H, sizeof(double) * (size_t)n * n);
  for (int r = 0; r < nlow; ++r) { /* g J^T J over every leaf */
    double *jr = J + (size_t)r * n;
    for (int i = 0; i < n; ++i) jr[i] = i < 6 ? 0.0 : star_urand(&seed);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) Hx[i * n + j] += 0.7 * jr[i] * jr[j];
  }
  const int nrhs[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 28, 31, 32, 33, 36, 47, 48, 49, 63, 64, 64 + 37};
  const int nn = (int)(sizeof nrhs / sizeof nrhs[0]), maxc = 64 + 37;
  double *B0 = malloc(sizeof(double) * (size_t)n * maxc), *X[2];
  for (int c = 0; c < maxc; ++c)
    for (int i = 0; i < n; ++i) B0[c * n + i] = zero_rows && i < (c * 7) % n ? 0.0 : star_urand(&seed);
  for (int w = 0; w < 2; ++w) {
    grit_blockchol *b;
    char msg[GRIT_MESSAGE_SIZE];
    double cond;
    cr_assert_eq(grit_blockchol_create(m, 4, &b, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_analyze(b, 0, NULL, NULL, msg), GRIT_OK, "%s", msg);
    grit_blockchol_lowrank_clear(b, 0);
    for (int r = 0; r < nlow; ++r) cr_assert(grit_blockchol_lowrank_add(b, 0, J + (size_t)r * n, 0.7));
    cr_assert_eq(grit_blockchol_factor(b, H, NULL, NULL, NULL, NULL, &cond, msg), GRIT_OK, "%s", msg);
    cr_assert(b->tree_sp[0], "the sparse factor taken (%d leaves)", leaves);
    grit_blockchol_sparse_rows(b, w == 0);
    X[w] = malloc(sizeof(double) * (size_t)n * maxc * nn);
    for (int r = 0; r < nn; ++r) {
      double *x = X[w] + (size_t)n * maxc * r;
      memcpy(x, B0, sizeof(double) * (size_t)n * nrhs[r]);
      grit_blockchol_solve(b, x, nrhs[r], NULL);
    }
    grit_blockchol_free(b);
  }
  for (int r = 0; r < nn; ++r) {
    const size_t o = (size_t)n * maxc * r;
    cr_expect(memcmp(X[0] + o, X[1] + o, sizeof(double) * (size_t)n * nrhs[r]) == 0,
              "%d leaves, clique %d..%d, %d rows apart, %d columns: the row kernels' solution differs", leaves, c0,
              c1, nlow, nrhs[r]);
    for (int c = 0; c < nrhs[r]; ++c) {
      const double e = solve_backward_error(n, Hx, X[0] + o + (size_t)c * n, B0 + (size_t)c * n);
      cr_expect(e < 8.0 * n * DBL_EPSILON, "%d leaves, column %d: backward error %.3g", leaves, c, e);
    }
  }
  free(H), free(Hx), free(J), free(B0), free(X[0]), free(X[1]);
  grit_model_free(m);
}

Test(bigsparse_rows, star_trees_same_bits_as_the_loops) {
  check(70, 0, 0, 0, 0, 3u);
  check(110, 0, 0, 0, 1, 5u);
  check(110, 20, 60, 0, 0, 7u); /* the clique: positions of the trailing dense block */
  check(130, 30, 62, 2, 1, 11u); /* and two rows held apart */
  check(200, 0, 0, 1, 0, 13u);
}

/* A, B of a MuJoCo composite (three steps) with the kernels and without: the same bits. */
static void derivatives_same(const char *rel, int nv_expected) {
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
  if (nv_expected > 0) cr_assert_eq(m->nv, nv_expected);
  for (int i = 0; i < 3; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * m->nv, nu = m->nu;
  double *A[2], *B[2];
  for (int w = 0; w < 2; ++w) {
    A[w] = calloc((size_t)nx * nx, sizeof(double)), B[w] = calloc((size_t)nx * nu + 1, sizeof(double));
    grit_blockchol_sparse_rows(d->solver->H->bc, w == 0);
    if (d->deriv && d->deriv->dtc) grit_treechol_siblings(d->deriv->dtc, w == 0);
    cr_assert_eq(grit_step_derivatives(d, A[w], B[w], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(d->solver->H->bc->tree_sp[0], "%s: the sparse factor taken", rel);
  }
  cr_expect(memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx) == 0, "%s: A differs", rel);
  cr_expect(memcmp(B[0], B[1], sizeof(double) * ((size_t)nx * nu + 1)) == 0, "%s: B differs", rel);
  double amax = 0.0;
  for (int i = 0; i < nx * nx; ++i) amax = fmax(amax, fabs(A[0][i]));
  cr_expect(amax > 0.0 && isfinite(amax));
  for (int w = 0; w < 2; ++w) free(A[w]), free(B[w]);
  grit_data_free(d);
  grit_model_free(m);
}

Test(bigsparse_rows, softbox_derivatives_same_bits) { derivatives_same("composite/softbox.xml", 224); }
Test(bigsparse_rows, cloth_derivatives_same_bits) { derivatives_same("composite/cloth.xml", -1); }

/* A star tree's A in tree order (a free root, then `leaves` slides, two chains of three hinges between
 * them): grit_treechol_solve_from_rows on 1 to 3 rows, sparse and dense, with the runs of four siblings
 * and without, the same bits; the solutions against A (backward error). */
Test(bigsparse_rows, tree_rows_siblings_same_bits) {
  char *xml = malloc(200 * 80 + 1024), *p = xml;
  p += sprintf(p, "<mujoco><worldbody><body><freejoint/><geom type='sphere' size='0.05'/>");
  for (int i = 0; i < 71; ++i) {
    if (i == 20 || i == 45) { /* a chain of three hinges among the slides: runs of 20, 25 and 26 siblings */
      p += sprintf(p, "<body pos='0 0 %d'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.01'/>", i);
      p += sprintf(p, "<body pos='0 0.1 0'><joint type='hinge' axis='0 1 0'/><joint type='hinge' axis='0 0 1'/>");
      p += sprintf(p, "<geom type='sphere' size='0.01'/></body></body>");
    }
    p += sprintf(p, "<body pos='%g %g 0'><joint type='slide' axis='1 0 0'/><geom type='sphere' size='0.01'/></body>",
                 cos(0.1 * i), sin(0.1 * i));
  }
  p += sprintf(p, "</body></worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->ntree, 1);
  const int n = m->nv;
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK, "%s", msg);
  /* A: M's pattern (each dof with its ancestors), diagonally dominant */
  double *A = calloc((size_t)n * n, sizeof(double)), *L = calloc((size_t)grit_treechol_size(tc, 0) + 1, sizeof(double));
  double *inv = calloc((size_t)n, sizeof(double));
  unsigned seed = 23;
  for (int i = 0; i < n; ++i)
    for (int j = m->dof_parent[i]; j >= 0; j = m->dof_parent[j]) A[i * n + j] = A[j * n + i] = 0.3 * star_urand(&seed);
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += fabs(A[i * n + j]);
    A[i * n + i] = s + 0.1 + fabs(star_urand(&seed));
  }
  double lo = 1e300, hi = 0.0;
  cr_assert_eq(grit_treechol_factor(tc, 0, A, L, inv, &lo, &hi), -1);
  double *b = malloc(sizeof(double) * 3 * (size_t)n), *X[2];
  for (int nr = 1; nr <= 3; ++nr)
    for (int sparse = 0; sparse < 2; ++sparse) {
      for (int i = 0; i < 3 * n; ++i) b[i] = sparse && (i % n) % 9 != 4 ? 0.0 : star_urand(&seed);
      for (int w = 0; w < 2; ++w) {
        X[w] = malloc(sizeof(double) * 3 * (size_t)n);
        memcpy(X[w], b, sizeof(double) * 3 * (size_t)n);
        grit_treechol_siblings(tc, w == 0);
        grit_treechol_solve_from_rows(tc, 0, L, inv, X[w], n, nr);
      }
      cr_expect(memcmp(X[0], X[1], sizeof(double) * (size_t)nr * n) == 0, "%d rows (sparse %d): the siblings differ",
                nr, sparse);
      for (int r = 0; r < nr; ++r) {
        const double e = solve_backward_error(n, A, X[0] + (size_t)r * n, b + (size_t)r * n);
        cr_expect(e < 8.0 * n * DBL_EPSILON, "%d rows, row %d: backward error %.3g", nr, r, e);
      }
      free(X[0]), free(X[1]);
    }
  free(A), free(L), free(inv), free(b);
  grit_treechol_free(tc);
  grit_model_free(m);
}

/* A free torso with 20 legs of three hinges and one of one (67 dofs, as dm_control's rodent): A's factor in
 * tree order; grit_afactor_solve_many (the columns moved into rows four at a time, the last three rows one
 * by one) against column by column, 1 to 101 columns: the same numbers (== : a zero's sign may differ). */
Test(bigsparse_rows, afactor_many_columns_odd_rows) {
  char *xml = malloc(32768), *p = xml;
  p += sprintf(p, "<mujoco><option gravity='0 0 0'/><worldbody><body pos='0 0 1'><freejoint/>"
                  "<geom type='box' size='0.3 0.3 0.04' mass='5'/>");
  for (int k = 0; k < 21; ++k) {
    const double a = 0.3 * k;
    p += sprintf(p, "<body pos='%.3f %.3f 0'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.02'/>",
                 0.3 * cos(a), 0.3 * sin(a));
    if (k < 20)
      p += sprintf(p, "<body pos='0 0 -0.1'><joint type='hinge' axis='0 1 0'/><geom type='sphere' size='0.02'/>"
                      "<body pos='0 0 -0.1'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.02'/>"
                      "</body></body>");
    p += sprintf(p, "</body>");
  }
  p += sprintf(p, "</body></worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->nv, 67);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  unsigned seed = 31;
  double v[67];
  for (int i = 0; i < 67; ++i) v[i] = 0.5 * star_urand(&seed);
  cr_assert_eq(grit_data_set_qvel(d, v, 67), GRIT_OK);
  cr_assert_eq(grit_compute_free_motion(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_afactor_tree_order(d->af, 0), "A's factor in tree order");
  enum { NRHS = 101 };
  double *X = malloc(sizeof(double) * NRHS * 67), *Y = malloc(sizeof(double) * NRHS * 67);
  for (int i = 0; i < NRHS * 67; ++i) X[i] = star_urand(&seed);
  const int counts[] = {1, 3, 4, 7, 64, 65, NRHS};
  for (int c = 0; c < 7; ++c) {
    const int nr = counts[c];
    memcpy(Y, X, sizeof(double) * (size_t)nr * 67);
    double *Z = malloc(sizeof(double) * (size_t)nr * 67);
    memcpy(Z, X, sizeof(double) * (size_t)nr * 67);
    grit_afactor_solve_many(m, d->af, d->Achol, Z, nr, NULL);
    for (int k = 0; k < nr; ++k) grit_afactor_solve(m, d->af, d->Achol, Y + (size_t)k * 67);
    int differ = 0;
    for (int i = 0; i < nr * 67; ++i) differ += Z[i] != Y[i];
    cr_expect_eq(differ, 0, "%d columns: %d entries differ", nr, differ);
    free(Z);
  }
  free(X), free(Y);
  grit_data_free(d);
  grit_model_free(m);
}

/* The row kernels with AVX-512 (where the processor has it) against the AVX2 ones on a random sparse
 * factor of 90 rows in a random order (the layout of blockchol_sparse_rows.h), 1 to 64 columns at the
 * chunk's stride and a wider one: the same bits, zeros' signs included (the right-hand sides hold -0s and
 * rows of zeros before a varying first row: the forward substitution's skips are decided alike). */
Test(bigsparse_rows, avx512_same_bits_as_avx2) {
  enum { N = 90, CAP = N * N };
  unsigned seed = 29u;
  int perm[N], Lp[N + 1], Lo[CAP], rp[N + 1], ro[CAP], re[CAP];
  char pat[N][N];
  double Lx[CAP], inv[N];
  unsigned nzv[N];
  for (int i = 0; i < N; ++i) perm[i] = i;
  for (int i = N - 1; i > 0; --i) { /* a random order of the dofs */
    const int k = (int)((star_urand(&seed) + 1.0) * 0.5 * (i + 1)) % (i + 1), t = perm[i];
    perm[i] = perm[k], perm[k] = t;
  }
  for (int j = 0; j < N; ++j) /* column j's rows below it: a band of four and a fifth of the others */
    for (int i = 0; i < N; ++i) pat[j][i] = i > j && (i - j <= 4 || fabs(star_urand(&seed)) < 0.2);
  int nz = 0;
  for (int j = 0; j < N; ++j) {
    Lp[j] = nz;
    for (int i = j + 1; i < N; ++i)
      if (pat[j][i]) Lo[nz] = perm[i], Lx[nz++] = 0.3 * star_urand(&seed);
    inv[j] = 1.0 / (1.0 + fabs(star_urand(&seed)));
  }
  Lp[N] = nz;
  int q = 0; /* row i's entries of earlier columns, columns ascending */
  for (int i = 0; i < N; ++i) {
    rp[i] = q;
    for (int j = 0; j < i; ++j)
      for (int e = Lp[j]; e < Lp[j + 1]; ++e)
        if (Lo[e] == perm[i]) ro[q] = perm[j], re[q++] = e;
  }
  rp[N] = q;
  const grit_sparse_rows f = {N, perm, Lp, Lo, rp, ro, re, Lx, inv, nzv};
  const int strides[2] = {RHS_CHUNK, 70};
  int signs = 0; /* the solutions' -0s: where the skips decide a zero's sign */
  double *Y[2];
  for (int w = 0; w < 2; ++w) Y[w] = malloc(sizeof(double) * N * 70);
  for (int si = 0; si < 2; ++si)
    for (int nc = 1; nc <= 64; ++nc) {
      const int st = strides[si];
      for (int i = 0; i < N; ++i) /* dof perm[i]: column c < 32 zero before the first row of its 16 columns;
                                     c >= 32 zero but for every eighth column's last rows; zeros of either sign */
        for (int c = 0; c < st; ++c) {
          const double u = star_urand(&seed), z = u < 0.0 ? -0.0 : 0.0;
          const int zero = c < 32 ? i < ((c / 16) * 23 + 5) % 60 : c % 8 != 0 || i < 80;
          Y[0][perm[i] * st + c] = zero ? z : fabs(u) < 0.1 ? -0.0 : u;
        }
      memcpy(Y[1], Y[0], sizeof(double) * N * (size_t)st);
      if (!grit_sparse_rows_solve_isa(&f, Y[0], st, nc, 0)) { /* no AVX2 (or GRIT_NO_AVX2): no kernels */
        free(Y[0]), free(Y[1]);
        cr_skip_test("no AVX2 kernels");
      }
      cr_assert(grit_sparse_rows_solve_isa(&f, Y[1], st, nc, 1));
      cr_expect(memcmp(Y[0], Y[1], sizeof(double) * N * (size_t)st) == 0, "stride %d, %d columns: AVX-512 differs",
                st, nc);
      for (int i = 0; i < N * st; ++i) signs += Y[0][i] == 0.0 && signbit(Y[0][i]);
    }
#if defined(__GNUC__) && defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) cr_log_info("no AVX-512 here: the AVX2 kernels against themselves");
#endif
  cr_expect(signs > 0, "the solutions hold -0s (the check of the skips' decisions)");
  free(Y[0]), free(Y[1]);
}
