/* SPDX-License-Identifier: Apache-2.0 */
/* test_hessian.c — the Hessian's paths for trees of more than 64 dofs (hessian.c, blockchol_big.c)
 * against the paths they replace (grit_hessian_big_tree_paths(h, 0)): the chain assembly over any
 * number of J's nonzero columns and G J in scratch give the same H, the vectorized factor of large
 * diagonal blocks the same factor, bit for bit (the same sums in the same order); both against H summed
 * here (backward error of the solves); and a composite flag's trajectory, the same bits either way; the
 * particles' column kernel (blockchol_factor_simd.c) on the hammock's trajectory against the plain loops. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "hessian_internal.h" /* (the blocks, h->diag) */
#include "solver_state.h"
#include "xml_load_util.h"

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* A tree of 1 + 2 b dofs (a slider carrying two chains of b hinges: J of a point on one chain's tip
 * and one on the other's is nonzero on both chains; the tests' J are random on given columns) and, when `ball`, a free sphere (a second tree). */
static grit_model *y_tree(int b, int ball) {
  char *xml = malloc(240 * (size_t)b + 1024), *p = xml;
  p += sprintf(p, "<mujoco><worldbody><body><joint type='slide' axis='0 0 1'/><geom type='sphere' size='0.05'/>");
  for (int side = 0; side < 2; ++side) { /* bodies of up to three hinges (MJCF nests at most 100 deep) */
    int nb = 0;
    for (int i = 0; i < b; ++nb) {
      p += sprintf(p, "<body pos='%s 0 -0.05'>", nb ? "0" : side ? "0.1" : "-0.1");
      for (int k = 0; k < 3 && i < b; ++k, ++i)
        p += sprintf(p, "<joint type='hinge' axis='%d %d %d'/>", k == 0, k == 1 || i % 2, k == 2 || (i + side) % 3 == 0);
      p += sprintf(p, "<geom type='sphere' size='0.02'/>");
    }
    for (int i = 0; i < nb; ++i) p += sprintf(p, "</body>");
  }
  p += sprintf(p, "</body>%s</worldbody></mujoco>",
               ball ? "<body pos='1 0 0'><freejoint/><geom type='sphere' size='0.1'/></body>" : "");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->tree_dofnum[0], 1 + 2 * b);
  return m;
}

/* A random SPD block (n x n, both triangles) at D: a random Gram matrix plus a diagonal. */
static void random_spd(int n, unsigned *seed, double *D) {
  memset(D, 0, sizeof(double) * (size_t)n * n);
  double *v = malloc(sizeof(double) * (size_t)n);
  for (int k = 0; k < n / 2 + 2; ++k) {
    for (int i = 0; i < n; ++i) v[i] = urand(seed);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) D[i * n + j] += v[i] * v[j];
  }
  for (int i = 0; i < n; ++i) D[i * n + i] += 0.05 + 0.5 * fabs(urand(seed));
  free(v);
}

/* One constraint: rows dim, trees ntree (0 alone, or 0 and 1), J nonzero on tree 0's columns
 * [c0, c1) and every column of tree 1. */
typedef struct {
  int dim, ntree, c0, c1;
} con;

/* The Hessians h[0..nh-1] of m (A random) get the constraints; Hx (nv x nv, dense, row-major) gets H
 * summed here, entry by entry. */
static void assemble(const grit_model *m, grit_hessian **h, int nh, const con *cs, int ncs, unsigned seed,
                     double *Hx) {
  const int nv = m->nv;
  double *A = calloc((size_t)m->nM, sizeof(double));
  for (int t = 0; t < m->ntree; ++t) random_spd(m->tree_dofnum[t], &seed, A + m->tree_madr[t]);
  memset(Hx, 0, sizeof(double) * (size_t)nv * nv);
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t], a = m->tree_dofadr[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) Hx[(a + i) * nv + a + j] = A[m->tree_madr[t] + i * n + j];
  }
  for (int w = 0; w < nh; ++w) {
    grit_hessian_pattern_reset(h[w]);
    if (m->ntree > 1) cr_assert_geq(grit_hessian_pattern_pair(h[w], 0, 1), 0);
    grit_hessian_pattern_commit(h[w]);
    grit_hessian_begin(h[w], A);
  }
  for (int c = 0; c < ncs; ++c) {
    const int dim = cs[c].dim, nt = cs[c].ntree, n0 = m->tree_dofnum[0], n1 = nt == 2 ? m->tree_dofnum[1] : 0;
    double *J0 = calloc((size_t)dim * n0, sizeof(double)), *J1 = calloc((size_t)dim * n1 + 1, sizeof(double)), G[9];
    for (int r = 0; r < dim; ++r) {
      for (int j = cs[c].c0; j < cs[c].c1; ++j) J0[r * n0 + j] = urand(&seed);
      for (int j = 0; j < n1; ++j) J1[r * n1 + j] = urand(&seed);
    }
    for (int r = 0; r < dim; ++r) /* symmetric positive definite G */
      for (int q = 0; q < dim; ++q) G[r * dim + q] = r == q ? 1.0 + fabs(urand(&seed)) : 0.1;
    const int tree[2] = {0, 1};
    const double *Jp[2] = {J0, J1};
    for (int w = 0; w < nh; ++w) grit_hessian_add(h[w], dim, nt, tree, Jp, G, nt == 2 ? 0 : -1);
    /* H += J^T G J over the constraint's columns (tree 0's, then tree 1's) */
    const int nc = n0 + n1;
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j) {
        const double *Ji = i < n0 ? J0 + i : J1 + (i - n0), *Jj = j < n0 ? J0 + j : J1 + (j - n0);
        const int si = i < n0 ? n0 : n1, sj = j < n0 ? n0 : n1;
        const int gi = i < n0 ? m->tree_dofadr[0] + i : m->tree_dofadr[1] + i - n0;
        const int gj = j < n0 ? m->tree_dofadr[0] + j : m->tree_dofadr[1] + j - n0;
        double s = 0.0;
        for (int r = 0; r < dim; ++r)
          for (int q = 0; q < dim; ++q) s += Ji[r * si] * G[r * dim + q] * Jj[q * sj];
        Hx[gi * nv + gj] += s;
      }
    free(J0), free(J1);
  }
  free(A);
}

/* |H x - b|_inf / (|H|_inf |x|_inf): a Cholesky solve's backward error, at most a small multiple of
 * n u (u = 2^-53) whatever the condition number. */
static double backward_error(int nv, const double *H, const double *x, const double *b) {
  double r = 0.0, hn = 0.0, xn = 0.0;
  for (int i = 0; i < nv; ++i) {
    double s = -b[i], row = 0.0;
    for (int j = 0; j < nv; ++j) s += H[i * nv + j] * x[j], row += fabs(H[i * nv + j]);
    r = fmax(r, fabs(s));
    hn = fmax(hn, row);
    xn = fmax(xn, fabs(x[i]));
  }
  return r / (hn * xn);
}

/* Factors h[0] (the new paths) and h[1] (the old), solves 3 right-hand sides with each: the same bits,
 * and a backward error under 4 nv u against H summed here. */
static void factor_and_compare(const grit_model *m, grit_hessian **h, const double *Hx, unsigned seed) {
  const int nv = m->nv;
  char msg[GRIT_MESSAGE_SIZE];
  double cond[2], *X[2], *b = malloc(sizeof(double) * 3 * (size_t)nv);
  for (int i = 0; i < 3 * nv; ++i) b[i] = urand(&seed);
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_hessian_factor(h[w], &cond[w], msg), GRIT_OK, "%s", msg);
    X[w] = malloc(sizeof(double) * 3 * (size_t)nv);
    memcpy(X[w], b, sizeof(double) * 3 * (size_t)nv);
    cr_assert_eq(grit_hessian_solve(h[w], X[w], 3), GRIT_OK);
  }
  cr_expect(memcmp(X[0], X[1], sizeof(double) * 3 * (size_t)nv) == 0, "nv %d: the solves differ", nv);
  cr_expect(memcmp(&cond[0], &cond[1], sizeof(double)) == 0);
  for (int k = 0; k < 3; ++k) {
    const double e = backward_error(nv, Hx, X[0] + (size_t)k * nv, b + (size_t)k * nv);
    cr_expect(e < 4.0 * nv * DBL_EPSILON / 2.0, "nv %d: backward error %.3g", nv, e);
    cr_log_info("nv %d: backward error %.3g (bound %.3g)", nv, e, 4.0 * nv * DBL_EPSILON / 2.0);
  }
  free(b), free(X[0]), free(X[1]);
}

/* The assembly alone (both on the dense path, the same factor): constraints on 91 and 46 of a tree's
 * 91 columns (the chain assembly over more and fewer than 64), on all of them (the whole sum, G J in
 * scratch), of 2 rows (generic dimension) and one coupling the tree to a free body (the whole sum and
 * the coupling block). */
Test(hessian, big_tree_assembly_same_bits_as_whole_sums) {
  grit_model *m = y_tree(45, 1);
  const int n0 = m->tree_dofnum[0];
  grit_hessian *h[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
    grit_hessian_force_path(h[w], 0);
    grit_hessian_big_tree_paths(h[w], w == 0);
    grit_hessian_sparse_trees(h[w], 0); /* (blockchol_sparse.c: other rounding; its own tests below) */
  }
  const con cs[] = {{1, 1, 0, n0}, {1, 1, 2, n0 - 1}, {3, 1, 1, 47}, {3, 1, 3, 80}, {2, 1, 5, 90}, {3, 2, 10, 85},
                    {1, 2, 0, n0}};
  double *Hx = malloc(sizeof(double) * (size_t)m->nv * m->nv);
  assemble(m, h, 2, cs, (int)(sizeof cs / sizeof cs[0]), 11, Hx);
  factor_and_compare(m, h, Hx, 5);
  free(Hx);
  grit_hessian_free(h[0]), grit_hessian_free(h[1]);
  grit_model_free(m);
}

/* The factor alone (both on the block path): trees of 23 (below the vectorized kernel's size), 25, 65
 * (not a multiple of its four columns), 101 and 231 dofs, alone and coupled to a free body (eliminated
 * first: its Schur complement updates the big block's lower triangle). */
Test(hessian, big_block_factor_same_bits_as_plain_loops) {
  const int bs[] = {11, 12, 32, 50, 115};
  for (int q = 0; q < 5; ++q)
    for (int ball = 0; ball < 2; ++ball) {
      grit_model *m = y_tree(bs[q], ball);
      const int n0 = m->tree_dofnum[0];
      grit_hessian *h[2];
      char msg[GRIT_MESSAGE_SIZE];
      for (int w = 0; w < 2; ++w) {
        cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
        grit_hessian_force_path(h[w], 1);
        grit_hessian_allow_tree_order(h[w], 0);
        grit_hessian_big_tree_paths(h[w], w == 0);
        grit_hessian_sparse_trees(h[w], 0);
      }
      const con cs[] = {{3, 1 + ball, 0, n0}, {1, 1, 1, n0 - 1}, {3, 1 + ball, 2, n0 / 2}};
      double *Hx = malloc(sizeof(double) * (size_t)m->nv * m->nv);
      assemble(m, h, 2, cs, 3, 100u + (unsigned)q, Hx);
      factor_and_compare(m, h, Hx, 7);
      free(Hx);
      grit_hessian_free(h[0]), grit_hessian_free(h[1]);
      grit_model_free(m);
    }
}

/* An indefinite big block: both kernels stop at the same pivot and report it alike. */
Test(hessian, big_block_indefinite_is_reported_alike) {
  grit_model *m = y_tree(40, 0);
  const int n = m->nv;
  double *A = malloc(sizeof(double) * (size_t)n * n);
  unsigned seed = 3;
  random_spd(n, &seed, A);
  for (int i = 0; i < n; ++i) A[57 * n + i] = A[i * n + 57] = 0.0; /* dof 57's pivot: zero */
  char msg[2][GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    grit_hessian *h;
    cr_assert_eq(grit_hessian_create(m, 4, 0, &h, msg[w]), GRIT_OK);
    grit_hessian_force_path(h, 1);
    grit_hessian_big_tree_paths(h, w == 0);
    grit_hessian_sparse_trees(h, 0);
    grit_hessian_pattern_reset(h);
    grit_hessian_pattern_commit(h);
    grit_hessian_begin(h, A);
    double cond;
    cr_expect_eq(grit_hessian_factor(h, &cond, msg[w]), GRIT_ERR_NUMERICAL);
    grit_hessian_free(h);
  }
  cr_expect_str_eq(msg[0], msg[1]);
  cr_expect(strstr(msg[0], "dof 57"), "%s", msg[0]);
  free(A);
  grit_model_free(m);
}

/* One of MuJoCo's composites (tests/models/mujoco_composite/REL, loaded leniently) in a new data with the
 * file's step settings; *pm gets the model. */
static grit_data *composite_data(const char *rel, grit_model **pm) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/%s", GRIT_SOURCE_DIR, rel);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, pm, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*pm, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
  return d;
}

/* `steps` steps of d, then its q and v copied out. */
static void step_and_keep(grit_data *d, int steps, double *q, double *v) {
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  memcpy(q, d->qpos, sizeof(double) * (size_t)d->model->nq);
  memcpy(v, d->qvel, sizeof(double) * (size_t)d->model->nv);
}

/* MuJoCo's flag (one tree of 340 dofs, about 600 spatial tendons with stiffness) stepped with the new
 * paths and the old: the same states, bit for bit. */
static void step_flag(int allow, int steps, double *q, double *v) {
  grit_model *m;
  grit_data *d = composite_data("flag/flag.xml", &m);
  cr_assert_eq(m->nv, 340);
  grit_hessian_big_tree_paths(d->solver->H, allow);
  grit_hessian_sparse_trees(d->solver->H, 0);
  step_and_keep(d, steps, q, v);
  grit_data_free(d);
  grit_model_free(m);
}

Test(hessian, flag_trajectory_same_bits) {
  static double q[2][340], v[2][340];
  for (int w = 0; w < 2; ++w) step_flag(w == 0, 12, q[w], v[w]);
  cr_expect(memcmp(q[0], q[1], sizeof q[0]) == 0 && memcmp(v[0], v[1], sizeof v[0]) == 0);
  double moved = 0.0;
  for (int i = 0; i < 340; ++i) moved = fmax(moved, fabs(v[0][i]));
  cr_expect(moved > 0.0, "the flag moves");
}

/* MuJoCo's hammock (95 particles of 3 dofs coupled by tendon equalities, a humanoid lying in it) with the
 * particles' AVX2 column kernel and with the plain loops (grit_hessian_particle_kernel): the same states,
 * bit for bit, through steps where the humanoid's contacts couple it to the grid. */
static void step_hammock(void (*set)(grit_hessian *, int), int allow, int steps, double *q, double *v, int *nq,
                         int *nv) {
  grit_model *m;
  grit_data *d = composite_data("hammock/hammock.xml", &m);
  cr_assert(m->nq <= 400 && m->nv <= 400);
  set(d->solver->H, allow);
  step_and_keep(d, steps, q, v);
  *nq = m->nq, *nv = m->nv;
  grit_data_free(d);
  grit_model_free(m);
}

/* 150 hammock steps with a switch of H on and off: the same states, bit for bit, and the hammock moves. */
static void hammock_switch_same_bits(void (*set)(grit_hessian *, int)) {
  static double q[2][400], v[2][400];
  int nq = 0, nv = 0;
  for (int w = 0; w < 2; ++w) step_hammock(set, w == 0, 150, q[w], v[w], &nq, &nv);
  cr_expect(memcmp(q[0], q[1], sizeof(double) * (size_t)nq) == 0 && memcmp(v[0], v[1], sizeof(double) * (size_t)nv) == 0);
  double moved = 0.0;
  for (int i = 0; i < nv; ++i) moved = fmax(moved, fabs(v[0][i]));
  cr_expect(moved > 0.0, "the hammock moves");
}

Test(hessian, hammock_particle_kernel_same_bits) { hammock_switch_same_bits(grit_hessian_particle_kernel); }

/* grit_hessian_jrow_span four columns at a time against column by column: rows of 1-3 x 1-70 with
 * zeros, negative zeros, NaN and nonzeros at random places (and all zero). */
Test(hessian, jrow_span_same_as_plain_scan) {
  grit_model *m = y_tree(3, 0);
  grit_hessian *h;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_hessian_create(m, 4, 0, &h, msg), GRIT_OK, "%s", msg);
  unsigned seed = 7;
  double J[3 * 70];
  for (int it = 0; it < 4000; ++it) {
    const int dim = 1 + it % 3, n = 1 + (int)((urand(&seed) + 1.0) * 35.0) % 70;
    const double p = (urand(&seed) + 1.0) * (it % 4 ? 0.25 : 0.02); /* the density of nonzeros (a quarter
                                                                       sparse: the sixteen-column skips) */
    for (int i = 0; i < dim * n; ++i) {
      const double u = (urand(&seed) + 1.0) * 0.5;
      J[i] = u < p ? urand(&seed) : u < p + 0.05 ? -0.0 : u < p + 0.06 && it % 7 == 0 ? NAN : 0.0;
    }
    int lo[2], hi[2];
    for (int w = 0; w < 2; ++w) {
      grit_hessian_span_kernel(h, w == 0);
      grit_hessian_jrow_span(h, J, dim, n, &lo[w], &hi[w]);
    }
    cr_assert(lo[0] == lo[1] && hi[0] == hi[1], "dim %d n %d: [%d, %d) vs [%d, %d)", dim, n, lo[0], hi[0], lo[1], hi[1]);
    cr_assert(lo[1] <= hi[1] && hi[1] <= n);
  }
  grit_hessian_free(h);
  grit_model_free(m);
}

/* ------------------------------------------------------------ the sparse factor of a big tree */

/* A with M's pattern (root block, root-leaf entries, leaf diagonal), diagonally dominant: SPD. */
static void star_a(const grit_model *m, unsigned seed, double *A) {
  const int n = m->nv;
  memset(A, 0, sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (j < 6) A[i * n + j] = A[j * n + i] = 0.3 * urand(&seed);
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += fabs(A[i * n + j]);
    A[i * n + i] = s + 0.1 + fabs(urand(&seed));
  }
}

/* Solves with h's factor (3 columns one by one, 9 at once: the many-column path, and 9 by parts):
 * each solution's backward error against Hx under 4 nv u; the solutions into X (3 + 9 columns). */
static void solve_checked(const grit_model *m, grit_hessian *h, const double *Hx, const double *b, double *X) {
  const int nv = m->nv;
  memcpy(X, b, sizeof(double) * 12 * (size_t)nv);
  cr_assert_eq(grit_hessian_solve(h, X, 3), GRIT_OK);
  cr_assert_eq(grit_hessian_solve(h, X + 3 * (size_t)nv, 9), GRIT_OK);
  double *Y = malloc(sizeof(double) * 9 * (size_t)nv);
  memcpy(Y, b + 3 * (size_t)nv, sizeof(double) * 9 * (size_t)nv);
  int part[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  cr_assert_eq(grit_hessian_solve_parts(h, Y, 9, part), GRIT_OK);
  cr_expect(memcmp(Y, X + 3 * (size_t)nv, sizeof(double) * 9 * (size_t)nv) == 0, "by parts: the same solutions");
  for (int k = 0; k < 12; ++k) {
    const double e = backward_error(nv, Hx, X + (size_t)k * nv, b + (size_t)k * nv);
    cr_expect(e < 4.0 * nv * DBL_EPSILON / 2.0, "nv %d column %d: backward error %.3g", nv, k, e);
    if (k % 4 == 0) cr_log_info("nv %d column %d: backward error %.3g", nv, k, e);
  }
  free(Y);
}

/* The star tree's H with couplings of neighbouring leaves (a ring), contacts on the root and a leaf, and
 * two rows over most of the tree (held apart: Woodbury): the sparse factor (minimum degree, fewer flops)
 * and the dense block in dof order both solve H to a backward error under 4 nv u, by one column and
 * many, and agree; the second H has a new coupling (a new analysis), the third its pattern (the same),
 * the fourth a row over 40 leaves (a clique: the trailing dense block); an indefinite H is reported at
 * its dof, a NaN in a row held apart too. */
Test(hessian, sparse_tree_factor_against_dense_order) {
  grit_model *m = star_tree(110);
  const int nv = m->nv, L = nv - 6;
  grit_hessian *h[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
    grit_hessian_force_path(h[w], 1);
    grit_hessian_sparse_trees(h[w], w == 0);
  }
  double *A = malloc(sizeof(double) * (size_t)nv * nv), *Hx = malloc(sizeof(double) * (size_t)nv * nv);
  double *b = malloc(sizeof(double) * 12 * (size_t)nv), *X[2];
  X[0] = malloc(sizeof(double) * 12 * (size_t)nv), X[1] = malloc(sizeof(double) * 12 * (size_t)nv);
  unsigned seed = 17;
  for (int i = 0; i < 12 * nv; ++i) b[i] = urand(&seed);
  for (int round = 0; round < 4; ++round) {
    star_a(m, 40u + (unsigned)round, A);
    for (int w = 0; w < 2; ++w) {
      grit_hessian_pattern_reset(h[w]);
      grit_hessian_pattern_commit(h[w]);
      grit_hessian_begin(h[w], A);
    }
    memcpy(Hx, A, sizeof(double) * (size_t)nv * nv);
    double J[3 * 128], G[9] = {1.5, 0.1, 0.1, 0.1, 1.2, 0.1, 0.1, 0.1, 2.0};
    const int tree[2] = {0, 0};
    const double *Jp[2] = {J, J};
    for (int c = 0; c < L + 5 + (round > 0) + (round == 3); ++c) {
      const int dim = c >= L && c < L + 3 ? 3 : 1;
      memset(J, 0, sizeof J);
      for (int r = 0; r < dim; ++r) {
        if (c < L) { /* leaves c and c + 1 (a ring; the third H also couples leaves 0 and L / 2) */
          J[r * nv + 6 + c] = urand(&seed), J[r * nv + 6 + (c + 1) % L] = urand(&seed);
        } else if (c < L + 3) { /* a contact: the root and one leaf */
          for (int j = 0; j < 6; ++j) J[r * nv + j] = urand(&seed);
          J[r * nv + 6 + 31 * (c - L)] = urand(&seed);
        } else if (c < L + 5) { /* over every leaf; over all but the first three dofs */
          for (int j = c == L + 3 ? 6 : 3; j < nv; ++j) J[j] = urand(&seed);
        } else if (c == L + 5) {
          J[6] = urand(&seed), J[6 + L / 2] = urand(&seed);
        } else { /* over 40 leaves: a clique (the trailing dense block, blockchol_sparse.c) */
          for (int j = 20; j < 60; ++j) J[j] = urand(&seed);
        }
      }
      const double *g = dim == 3 ? G : G + 4;
      for (int w = 0; w < 2; ++w) grit_hessian_add(h[w], dim, 1, tree, Jp, g, -1);
      for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j)
          for (int r = 0; r < dim; ++r)
            for (int q = 0; q < dim; ++q) Hx[i * nv + j] += J[r * nv + i] * g[r * dim + q] * J[q * nv + j];
    }
    double cond[2];
    for (int w = 0; w < 2; ++w) {
      cr_assert_eq(grit_hessian_factor(h[w], &cond[w], msg), GRIT_OK, "%s", msg);
      solve_checked(m, h[w], Hx, b, X[w]);
    }
    cr_expect(grit_hessian_flops(h[0]) * 4.0 < grit_hessian_flops(h[1]), "the sparse factor taken: %g vs %g flops",
              grit_hessian_flops(h[0]), grit_hessian_flops(h[1]));
    double d = 0.0, xm = 0.0;
    for (int i = 0; i < 12 * nv; ++i) d = fmax(d, fabs(X[0][i] - X[1][i])), xm = fmax(xm, fabs(X[1][i]));
    cr_expect(d <= 1e-10 * xm, "the two orders' solutions differ by %.3g of %.3g", d, xm);
    cr_log_info("round %d: the orders' solutions differ by %.3g of %.3g; flops %g vs %g", round, d, xm,
                grit_hessian_flops(h[0]), grit_hessian_flops(h[1]));
  }
  A[(6 + 40) * nv + 6 + 40] = -1.0; /* an indefinite H: reported at dof 46 (a leaf's pivot) */
  grit_hessian_begin(h[0], A);
  double cond;
  cr_expect_eq(grit_hessian_factor(h[0], &cond, msg), GRIT_ERR_NUMERICAL);
  cr_expect(strstr(msg, "dof 46"), "%s", msg);
  star_a(m, 99, A); /* a row held apart with a NaN: reported, not solved */
  grit_hessian_begin(h[0], A);
  double Jn[128] = {0}, g = 1.2;
  for (int j = 6; j < nv; ++j) Jn[j] = j == 50 ? NAN : urand(&seed);
  const int t0[2] = {0, 0};
  const double *Jnp[2] = {Jn, Jn};
  grit_hessian_add(h[0], 1, 1, t0, Jnp, &g, -1);
  cr_expect_eq(grit_hessian_factor(h[0], &cond, msg), GRIT_ERR_NUMERICAL);
  free(A), free(Hx), free(b), free(X[0]), free(X[1]);
  grit_hessian_free(h[0]), grit_hessian_free(h[1]);
  grit_model_free(m);
}

/* MuJoCo's softbox (one tree of 224 dofs: a free root, 218 slides, 651 equalities, one of them over
 * every slide) stepped with the sparse factor and with the dense block: states within 1e-8 of their
 * largest entry after 100 steps (two backward-stable factorizations; test_treechol's bound). */
static void step_softbox(int allow, int kernel, int steps, double *q, double *v, double *flops) {
  grit_model *m;
  grit_data *d = composite_data("composite/softbox.xml", &m);
  cr_assert_eq(m->nv, 224);
  grit_hessian_sparse_trees(d->solver->H, allow);
  grit_hessian_sparse_kernel(d->solver->H, kernel);
  step_and_keep(d, steps, q, v);
  *flops = grit_hessian_flops(d->solver->H);
  grit_data_free(d);
  grit_model_free(m);
}

Test(hessian, softbox_sparse_and_dense_trajectories) {
  static double q[2][225], v[2][224];
  double fl[2];
  for (int w = 0; w < 2; ++w) step_softbox(w == 0, 1, 100, q[w], v[w], &fl[w]);
  cr_expect(fl[0] * 10.0 < fl[1], "the sparse factor taken: %g vs %g flops", fl[0], fl[1]);
  double dq = 0.0, qm = 0.0, dv = 0.0, vm = 0.0;
  for (int i = 0; i < 225; ++i) dq = fmax(dq, fabs(q[0][i] - q[1][i])), qm = fmax(qm, fabs(q[1][i]));
  for (int i = 0; i < 224; ++i) dv = fmax(dv, fabs(v[0][i] - v[1][i])), vm = fmax(vm, fabs(v[1][i]));
  cr_expect(dq <= 1e-8 * qm && dv <= 1e-8 * vm, "q differs by %.3g of %.3g, v by %.3g of %.3g", dq, qm, dv, vm);
  cr_log_info("softbox, 100 steps: q differs by %.3g of %.3g, v by %.3g of %.3g", dq, qm, dv, vm);
  cr_expect(vm > 0.0, "the softbox moves");
}

/* A big tree coupled to a free body (not alone in its part: the dense block path) with a row over all
 * its dofs held apart: added to the block's copy, H is solved as with the row assembled in place
 * (backward error under 4 nv u, the two within rounding of each other). */
Test(hessian, held_row_on_a_coupled_big_tree) {
  grit_model *m = y_tree(45, 1);
  const int n0 = m->tree_dofnum[0], nv = m->nv;
  grit_hessian *h[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
    grit_hessian_force_path(h[w], 1);
    grit_hessian_allow_tree_order(h[w], 0);
    grit_hessian_sparse_trees(h[w], w == 0);
  }
  const con cs[] = {{1, 1, 0, n0}, {1, 1, 2, n0 - 1}, {3, 2, 10, 85}, {3, 1, 3, 40}};
  double *Hx = malloc(sizeof(double) * (size_t)nv * nv), *b = malloc(sizeof(double) * 12 * (size_t)nv), *X[2];
  assemble(m, h, 2, cs, 4, 23, Hx);
  unsigned seed = 29;
  for (int i = 0; i < 12 * nv; ++i) b[i] = urand(&seed);
  for (int w = 0; w < 2; ++w) {
    double cond;
    X[w] = malloc(sizeof(double) * 12 * (size_t)nv);
    cr_assert_eq(grit_hessian_factor(h[w], &cond, msg), GRIT_OK, "%s", msg);
    solve_checked(m, h[w], Hx, b, X[w]);
  }
  double d = 0.0, xm = 0.0;
  for (int i = 0; i < 12 * nv; ++i) d = fmax(d, fabs(X[0][i] - X[1][i])), xm = fmax(xm, fabs(X[1][i]));
  cr_expect(d <= 1e-10 * xm, "held apart and in place differ by %.3g of %.3g", d, xm);
  cr_log_info("held apart and in place differ by %.3g of %.3g", d, xm);
  free(Hx), free(b), free(X[0]), free(X[1]);
  grit_hessian_free(h[0]), grit_hessian_free(h[1]);
  grit_model_free(m);
}

/* The sparse factor's AVX2 column updates (gathered, stored one by one) against the plain loop: 60
 * softbox steps, the same bits. */
Test(hessian, softbox_sparse_kernel_same_bits) {
  static double q[2][225], v[2][224];
  double fl[2];
  for (int w = 0; w < 2; ++w) step_softbox(1, w == 0, 60, q[w], v[w], &fl[w]);
  cr_expect(memcmp(q[0], q[1], sizeof q[0]) == 0 && memcmp(v[0], v[1], sizeof v[0]) == 0);
}

/* A big tree's block kept as its lower triangle (copied from A, summed into by the chain assembly: AVX2
 * or the plain loop; the factors read only it) against both triangles copied and summed
 * (grit_hessian_big_lower, grit_hessian_lower_kernel; the AVX2 sums by runs of adjacent columns or four
 * gathered, grit_hessian_lower_runs): the flag (the sparse factor, 288 spring tendons),
 * the softbox (sparse, a row held apart, contacts), the cloth (contacts on its tree of 166), the flag on
 * the dense block (the big kernel mirrors the lower triangle), on the dense path (the upper triangle
 * lands where grit_densechol_factor does not read) and with CHOLMOD: the same states, bit for bit. */
static void step_lower(const char *rel, int mode, int sparse, int dense, int steps, double *q, double *v) {
  grit_model *m;
  grit_data *d = composite_data(rel, &m);
  cr_assert(m->nq <= 400 && m->nv <= 400);
  grit_hessian_big_lower(d->solver->H, mode > 0);
  grit_hessian_lower_kernel(d->solver->H, mode == 1 || mode == 3);
  grit_hessian_lower_runs(d->solver->H, mode == 1);
  grit_hessian_sparse_trees(d->solver->H, sparse);
  if (dense == 1) d->settings.dense_max_nv = 1000;
  if (dense == 2) d->settings.sparse_factor = GRIT_FACTOR_CHOLMOD;
  step_and_keep(d, steps, q, v);
  grit_data_free(d);
  grit_model_free(m);
}

Test(hessian, big_tree_lower_triangle_same_bits) {
  static double q[4][400], v[4][400];
  const struct { const char *rel; int sparse, dense, steps; } runs[] = {
      {"flag/flag.xml", 1, 0, 40}, {"composite/softbox.xml", 1, 0, 60}, {"composite/cloth.xml", 1, 0, 60},
      {"flag/flag.xml", 0, 0, 10}, {"flag/flag.xml", 0, 1, 5},        {"flag/flag.xml", 0, 2, 5}};
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r) {
    memset(q, 0, sizeof q), memset(v, 0, sizeof v);
    for (int w = 0; w < 4; ++w) step_lower(runs[r].rel, w, runs[r].sparse, runs[r].dense, runs[r].steps, q[w], v[w]);
    for (int w = 1; w < 4; ++w)
      cr_expect(memcmp(q[0], q[w], sizeof q[0]) == 0 && memcmp(v[0], v[w], sizeof v[0]) == 0,
                "%s (sparse %d, dense %d, kernel %d)", runs[r].rel, runs[r].sparse, runs[r].dense, w);
    double moved = 0.0;
    for (int i = 0; i < 400; ++i) moved = fmax(moved, fabs(v[0][i]));
    cr_expect(moved > 0.0, "%s moves", runs[r].rel);
  }
}

/* A constraint on two trees, one of 12 dofs or more, summed over the nonzero columns of their J
 * (grit_hessian_pair_chain) against every column: the hammock's humanoid (27 dofs) pressed on its
 * particles, 150 steps, the same states bit for bit (a negative zero could differ; none does here). */
Test(hessian, two_tree_chain_same_bits) { hammock_switch_same_bits(grit_hessian_pair_chain); }

/* A switch of H on (set(H, 1)) against off: `steps` steps of a scene, then the dense A and B of the last
 * step: the same states and the same A, B, bit for bit. The blocks kept between assemblies
 * (grit_hessian_begin_kept) against every block rebuilt (grit_hessian_keep_blocks(h, 0); the refactor
 * keeps blocks too): with `keeps`, blocks were kept. */
static void switch_same_bits(const char *path, int steps, void (*set)(grit_hessian *, int), int keeps) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &m, &info, msg), GRIT_OK, "%s", msg);
  const int nx = 2 * m->nv;
  double *ab[2][2];
  grit_data *d[2];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_data_create(m, &d[w]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[w], &info.settings), GRIT_OK);
    set(d[w]->solver->H, w == 0);
    ab[w][0] = calloc((size_t)nx * nx + 1, sizeof(double));
    ab[w][1] = calloc((size_t)nx * m->nu + 1, sizeof(double));
    cr_assert(ab[w][0] && ab[w][1]);
  }
  for (int i = 0; i < steps; ++i)
    for (int w = 0; w < 2; ++w) cr_assert_eq(grit_step(d[w]), GRIT_OK, "%s", grit_data_last_error(d[w]));
  cr_assert(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m->nq) == 0 &&
            memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m->nv) == 0, "%s: states differ", path);
  for (int w = 0; w < 2; ++w)
    cr_assert_eq(grit_step_derivatives(d[w], ab[w][0], ab[w][1], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[w]));
  cr_expect(memcmp(ab[0][0], ab[1][0], sizeof(double) * (size_t)nx * nx) == 0, "%s: A differs", path);
  cr_expect(memcmp(ab[0][1], ab[1][1], sizeof(double) * (size_t)nx * m->nu) == 0, "%s: B differs", path);
  double moved = 0.0;
  for (int i = 0; i < m->nv; ++i) moved = fmax(moved, fabs(d[0]->qvel[i]));
  cr_expect(moved > 0.0, "%s: nothing moves", path);
  if (set == grit_hessian_keep_blocks) {
    cr_expect(!keeps || grit_hessian_kept_count(d[0]->solver->H) > 0, "%s: no block kept", path);
    cr_expect(grit_hessian_kept_count(d[1]->solver->H) == 0);
    cr_log_info("%s: %lld blocks kept", path, grit_hessian_kept_count(d[0]->solver->H));
  }
  for (int w = 0; w < 2; ++w) {
    free(ab[w][0]), free(ab[w][1]);
    grit_data_free(d[w]);
  }
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}
static void kept_blocks_same_bits(const char *path, int steps, int keeps) {
  switch_same_bits(path, steps, grit_hessian_keep_blocks, keeps);
}

Test(hessian, kept_blocks_same_bits_hammock) {
  kept_blocks_same_bits(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/hammock/hammock.xml", 150, 1);
}
/* grid2pin (particles and tendons only), the loop (one tree of 44 dofs, a chain factored by the dense kernel,
 * grit_hessian_dense_chains: kept only in an assembly where no contact's G changed), the clutter (many
 * islands, those at rest left off: grit_hessian_restrict) */
Test(hessian, kept_blocks_same_bits_others) {
  kept_blocks_same_bits(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/grid2pin.xml", 120, 1);
  kept_blocks_same_bits(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/loop.xml", 120, 0);
  kept_blocks_same_bits(GRIT_SOURCE_DIR "/examples/models/clutter.xml", 200, 1);
}

/* A free body's 3-row terms by the AVX2 kernel (add_free_lower_avx2) against add_small's loops
 * (grit_hessian_free_kernel(h, 0)) on the block-sparse path's lower triangle: 2000 random assemblies of one
 * to five constraints (J with zeros and negative zeros, G symmetric, some normal-only or with zero or
 * negative-zero off-diagonal entries): the same block, both triangles, bit for bit, and the same solves. */
Test(hessian, free_body_kernel_same_bits) {
  grit_model *m = xml_load_or_fail("<mujoco><worldbody><body><freejoint/><geom type='box' size='0.1 0.2 0.3'/>"
                                   "</body></worldbody></mujoco>");
  cr_assert_eq(m->nv, 6);
  char msg[GRIT_MESSAGE_SIZE];
  grit_hessian *h[2];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
    grit_hessian_force_path(h[w], 1);
    grit_hessian_free_kernel(h[w], w == 0);
  }
  unsigned seed = 7;
  double A[36], J[18], G[9], x[2][6];
  for (int trial = 0; trial < 2000; ++trial) {
    random_spd(6, &seed, A);
    for (int w = 0; w < 2; ++w) {
      grit_hessian_pattern_reset(h[w]);
      grit_hessian_pattern_commit(h[w]);
      grit_hessian_begin(h[w], A);
    }
    const int ncon = 1 + trial % 5;
    for (int c = 0; c < ncon; ++c) {
      for (int k = 0; k < 18; ++k) {
        const double u = urand(&seed);
        J[k] = u > 0.8 ? 0.0 : u < -0.8 ? -0.0 : urand(&seed);
      }
      const int kind = (trial + c) % 4; /* 0: full, 1: normal only, 2: diagonal (zero couplings), 3: -0 couplings */
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q <= r; ++q) {
          const double g = r == q ? 0.5 + fabs(urand(&seed)) : kind == 2 ? 0.0 : kind == 3 ? -0.0 : 0.2 * urand(&seed);
          G[r * 3 + q] = G[q * 3 + r] = g;
        }
      if (kind == 1) memset(G, 0, sizeof(double) * 8);
      const int tree[2] = {0, 0};
      const double *Jp[2] = {J, J};
      for (int w = 0; w < 2; ++w) grit_hessian_add(h[w], 3, 1, tree, Jp, G, -1);
    }
    cr_assert(memcmp(h[0]->diag, h[1]->diag, sizeof(double) * 36) == 0, "trial %d: the blocks differ", trial);
    for (int w = 0; w < 2; ++w) {
      double cond;
      cr_assert_eq(grit_hessian_factor(h[w], &cond, msg), GRIT_OK, "%s", msg);
      for (int i = 0; i < 6; ++i) x[w][i] = 1.0 + i;
      cr_assert_eq(grit_hessian_solve(h[w], x[w], 1), GRIT_OK);
    }
    cr_assert(memcmp(x[0], x[1], sizeof x[0]) == 0, "trial %d: the solves differ", trial);
  }
  for (int w = 0; w < 2; ++w) grit_hessian_free(h[w]);
  grit_model_free(m);
}

/* The kernel for the other sizes (add_rows3_lower_avx2) against add_small's loops: a tree of 1, 3, 7, 9 or 21
 * dofs and a free body, 300 random assemblies each of one to four 3-row constraints on either tree or both (J
 * with zeros and negative zeros, G as above): the same lower triangles and coupling block, bit for bit (the
 * loops mirror their sums into the upper triangles, the kernel does not: no lower-only factor reads them),
 * and the same solves. */
Test(hessian, contact_kernel_same_bits) {
  const int bs[] = {0, 1, 3, 4, 10};
  char msg[GRIT_MESSAGE_SIZE];
  unsigned seed = 11;
  for (size_t e = 0; e < sizeof bs / sizeof bs[0]; ++e) {
    grit_model *m = y_tree(bs[e], 1);
    cr_assert_eq(m->ntree, 2);
    grit_hessian *h[2];
    for (int w = 0; w < 2; ++w) {
      cr_assert_eq(grit_hessian_create(m, 4, 0, &h[w], msg), GRIT_OK, "%s", msg);
      grit_hessian_force_path(h[w], 1);
      grit_hessian_allow_tree_order(h[w], 0); /* (A random on the whole block, not on the tree's pattern) */
      grit_hessian_free_kernel(h[w], w == 0);
    }
    const int nv = m->nv, n[2] = {m->tree_dofnum[0], m->tree_dofnum[1]};
    double *A = calloc((size_t)m->nM, sizeof(double)), *J[2], G[9], *x[2];
    for (int k = 0; k < 2; ++k) J[k] = calloc((size_t)3 * n[k], sizeof(double)), x[k] = calloc((size_t)nv, sizeof(double));
    for (int trial = 0; trial < 300; ++trial) {
      for (int t = 0; t < 2; ++t) random_spd(n[t], &seed, A + m->tree_madr[t]);
      for (int w = 0; w < 2; ++w) {
        grit_hessian_pattern_reset(h[w]);
        cr_assert_eq(grit_hessian_pattern_pair(h[w], 0, 1), 0);
        grit_hessian_pattern_commit(h[w]);
        grit_hessian_begin(h[w], A);
      }
      for (int c = 0; c < 1 + trial % 4; ++c) {
        for (int k = 0; k < 2; ++k)
          for (int i = 0; i < 3 * n[k]; ++i) {
            const double u = urand(&seed);
            J[k][i] = u > 0.8 ? 0.0 : u < -0.8 ? -0.0 : urand(&seed);
          }
        const int kind = (trial + c) % 4;
        for (int r = 0; r < 3; ++r)
          for (int q = 0; q <= r; ++q) {
            const double g = r == q ? 0.5 + fabs(urand(&seed)) : kind == 2 ? 0.0 : kind == 3 ? -0.0 : 0.2 * urand(&seed);
            G[r * 3 + q] = G[q * 3 + r] = g;
          }
        if (kind == 1) memset(G, 0, sizeof(double) * 8);
        const int which = (trial + 2 * c) % 3; /* tree 0, tree 1, both */
        const int tree[2] = {which == 1 ? 1 : 0, 1}, nt = which == 2 ? 2 : 1;
        const double *Jp[2] = {J[which == 1 ? 1 : 0], J[1]};
        for (int w = 0; w < 2; ++w) grit_hessian_add(h[w], 3, nt, tree, Jp, G, nt == 2 ? 0 : -1);
      }
      for (int t = 0; t < 2; ++t)
        for (int i = 0; i < n[t]; ++i)
          cr_assert(memcmp(h[0]->diag + m->tree_madr[t] + i * n[t], h[1]->diag + m->tree_madr[t] + i * n[t],
                           sizeof(double) * (size_t)(i + 1)) == 0, "n %d, trial %d: tree %d's row %d differs", n[0], trial, t, i);
      cr_assert(memcmp(h[0]->cblock, h[1]->cblock, sizeof(double) * (size_t)n[0] * n[1]) == 0,
                "n %d, trial %d: the coupling block differs", n[0], trial);
      for (int w = 0; w < 2; ++w) {
        double cond;
        cr_assert_eq(grit_hessian_factor(h[w], &cond, msg), GRIT_OK, "%s", msg);
        for (int i = 0; i < nv; ++i) x[w][i] = 1.0 + i;
        cr_assert_eq(grit_hessian_solve(h[w], x[w], 1), GRIT_OK);
      }
      cr_assert(memcmp(x[0], x[1], sizeof(double) * (size_t)nv) == 0, "n %d, trial %d: the solves differ", n[0], trial);
    }
    for (int w = 0; w < 2; ++w) grit_hessian_free(h[w]);
    free(A), free(J[0]), free(J[1]), free(x[0]), free(x[1]);
    grit_model_free(m);
  }
}

/* The kernels in the solver: the sliding rod (one contact), the cube toss (four on one free body), the arm
 * and ball (a 7-dof arm and a free ball), the clutter (free bodies on each other) stepped both ways, then
 * their A and B: the same bits. */
Test(hessian, free_body_kernel_same_trajectories) {
  switch_same_bits(GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml", 300, grit_hessian_free_kernel, 0);
  switch_same_bits(GRIT_SOURCE_DIR "/examples/models/cube_toss.xml", 300, grit_hessian_free_kernel, 0);
  switch_same_bits(GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", 300, grit_hessian_free_kernel, 0);
  switch_same_bits(GRIT_SOURCE_DIR "/examples/models/clutter.xml", 150, grit_hessian_free_kernel, 0);
}
