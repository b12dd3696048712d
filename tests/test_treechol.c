/* SPDX-License-Identifier: Apache-2.0 */
/* test_treechol.c — the tree-ordered Cholesky without fill (treechol.c): factor and solves against the
 * dense Cholesky on random SPD matrices with a branched tree's sparsity (free and ball joints'
 * multi-dof bodies, hinges and a slide, armature), its use by the Hessian (hessian.c, blockchol.c) with
 * chain and two-branch constraints, and a stepped trajectory against the dense path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "densechol.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "treechol.h"
#include "xml_load_util.h"

/* A floating torso (6 dofs), a ball-jointed head with a hinge (4), two legs of two hinges each with a
 * slide in one (5) and two arms of two hinges (4): one tree of 19 dofs whose dofs branch at the torso,
 * with armature on some; feet on the floor. */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<default><joint armature='0.01'/></default>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' size='0.12 0.08 0.05' mass='4'/>"
    " <body pos='0 0 0.08'><joint type='ball'/><geom type='sphere' size='0.05' mass='0.5'/>"
    "  <body pos='0 0 0.05'><joint type='hinge' axis='1 0 0' armature='0.05'/>"
    "   <geom type='sphere' size='0.03' mass='0.2'/></body></body>"
    " <body pos='0 0.06 -0.05'><joint name='h1' type='hinge' axis='0 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint name='k1' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.2' size='0.025' mass='0.7'/>"
    "   <body pos='-0.02 0 -0.2'><joint type='slide' axis='0 0 1' range='-0.02 0.02' stiffness='500'/>"
    "    <geom type='capsule' fromto='0 0 0 0 0 -0.05' size='0.025' mass='0.2'/></body></body></body>"
    " <body pos='0 -0.06 -0.05'><joint name='h2' type='hinge' axis='0.1 1 0' range='-60 60'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint name='k2' type='hinge' axis='0 1 0' range='-80 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0.1 0.1 0.03'><joint type='hinge' axis='1 0 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0 0.2 0' size='0.02' mass='0.4'/>"
    "  <body pos='0 0.2 0'><joint type='hinge' axis='0 0 1'/>"
    "   <geom type='capsule' fromto='0 0 0 0.15 0 0' size='0.02' mass='0.3'/></body></body>"
    " <body pos='0.1 -0.1 0.03'><joint type='hinge' axis='1 0 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0 -0.2 0' size='0.02' mass='0.4'/>"
    "  <body pos='0 -0.2 0'><joint type='hinge' axis='0 0 1'/>"
    "   <geom type='capsule' fromto='0 0 0 0.15 0 0' size='0.02' mass='0.3'/></body></body>"
    "</body></worldbody>"
    "<actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='5'/></actuator></mujoco>";

static grit_model *load(void) {
  grit_model *m = xml_load_or_fail(XML);
  cr_assert_eq(m->ntree, 1);
  cr_assert_eq(m->nv, 19);
  return m;
}

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* A random SPD n x n (row-major, both triangles) with the tree's sparsity: sum over dofs k of the
 * outer product of a random vector on k's path to the root (the pattern of M and of a chain
 * constraint's J^T G J), plus a positive diagonal (armature). */
static void random_tree_spd(const grit_model *m, unsigned seed, double *H) {
  const int n = m->nv;
  memset(H, 0, sizeof(double) * (size_t)n * n);
  double v[64];
  for (int k = 0; k < n; ++k) {
    memset(v, 0, sizeof v);
    for (int j = k; j >= 0; j = m->dof_parent[j]) v[j] = urand(&seed);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) H[i * n + j] += v[i] * v[j];
    H[k * n + k] += 0.05 + 0.5 * fabs(urand(&seed));
  }
}

/* x = H^-1 b by the dense Cholesky (densechol.c, column-major: the symmetric H is its own transpose). */
static void dense_solve(int n, const double *H, double *x, int nrhs) {
  double *L = malloc(sizeof(double) * (size_t)n * n);
  memcpy(L, H, sizeof(double) * (size_t)n * n);
  cr_assert_eq(grit_densechol_factor(L, n), -1);
  grit_densechol_solve(L, n, x, nrhs);
  free(L);
}

static double rel_diff(const double *a, const double *b, int n) {
  double d = 0.0, s = 0.0;
  for (int i = 0; i < n; ++i) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
  return d / s;
}

/* The factor's L^T L reproduces H on its pattern (H is zero elsewhere), and the solves agree with the
 * dense Cholesky's to 1e-13 relative (these matrices' condition numbers are 1e2-1e4: round-off of a
 * few 1e-16 times that). */
Test(treechol, factor_and_solve_match_dense) {
  grit_model *m = load();
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK);
  const int n = m->nv, nrhs = 5;
  double *H = malloc(sizeof(double) * n * n), *L = malloc(sizeof(double) * n * n), inv[64];
  double x[5 * 64], y[5 * 64], rows[64 * 8];
  int pattern = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i; j >= 0; j = m->dof_parent[j]) ++pattern;
  cr_assert_eq(grit_treechol_size(tc, 0), pattern);
  cr_assert(pattern < n * (n + 1) / 2, "the tree branches");
  for (unsigned seed = 1; seed <= 20; ++seed) {
    random_tree_spd(m, seed, H);
    double lo = INFINITY, hi = 0.0;
    cr_assert_eq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
    cr_assert(lo > 0.0 && hi >= lo);
    /* L^T L against H, entry by entry: (L^T L)_ij = sum_k L_ki L_kj over rows k (dense copy of L) */
    double Ld[64 * 64] = {0};
    int e = 0;
    for (int k = 0; k < n; ++k) {
      int anc[64], na = 0;
      for (int j = m->dof_parent[k]; j >= 0; j = m->dof_parent[j]) anc[na++] = j;
      for (int a = na - 1; a >= 0; --a) Ld[k * n + anc[a]] = L[e++];
      Ld[k * n + k] = L[e++];
    }
    double worst = 0.0, scale = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0.0;
        for (int k = 0; k < n; ++k) s += Ld[k * n + i] * Ld[k * n + j];
        worst = fmax(worst, fabs(s - H[i * n + j]));
        scale = fmax(scale, fabs(H[i * n + j]));
      }
    cr_expect(worst < 1e-14 * scale, "seed %u: L^T L - H %.3g of %.3g", seed, worst, scale);
    for (int i = 0; i < nrhs * n; ++i) x[i] = y[i] = urand(&seed);
    for (int c = 0; c < nrhs; ++c) grit_treechol_solve(tc, 0, L, inv, x + c * n);
    dense_solve(n, H, y, nrhs);
    const double r = rel_diff(x, y, nrhs * n);
    cr_expect(r < 1e-13, "seed %u: solve %.3g", seed, r);
    /* many columns as rows (stride 8, 5 used) against the single solves */
    for (int i = 0; i < nrhs * n; ++i) x[i] = urand(&seed);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < nrhs; ++c) rows[i * 8 + c] = x[c * n + i];
    for (int c = 0; c < nrhs; ++c) grit_treechol_solve(tc, 0, L, inv, x + c * n);
    grit_treechol_solve_rows(tc, 0, L, inv, rows, 8, nrhs);
    double rr = 0.0;
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < nrhs; ++c) rr = fmax(rr, fabs(rows[i * 8 + c] - x[c * n + i]));
    cr_expect(rr < 1e-13 * (1.0 + fabs(x[0])), "seed %u: rows %.3g", seed, rr);
  }
  /* not positive definite: the failing dof is reported */
  random_tree_spd(m, 7, H);
  H[3 * n + 3] = -1.0;
  double lo = INFINITY, hi = 0.0;
  cr_expect_neq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
  H[3 * n + 3] = NAN;
  cr_expect_neq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
  free(H), free(L);
  grit_treechol_free(tc);
  grit_model_free(m);
}

/* Many columns as rows (37: groups of 32 or 16, four and a tail of one; also 64, 43, 11, 8, 3: every
 * width of the AVX2 path's groups and masked tails; stride 68), half of them a unit vector at one dof (a
 * control's right-hand side: zero off one row, so the first sweep skips the zero groups), half dense:
 * the same values as the single solves, bit for bit (the same operations on each column in the same
 * order; only a zero's sign may differ, and compares equal), and the stride's lanes past the columns
 * untouched. */
Test(treechol, solve_rows_many_sparse_columns) {
  grit_model *m = load();
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK);
  enum { MAXC = 64, S = 68 };
  const int n = m->nv, widths[] = {37, 64, 43, 11, 8, 3};
  double *H = malloc(sizeof(double) * n * n), *L = malloc(sizeof(double) * n * n), inv[64];
  double *x = calloc((size_t)MAXC * n, sizeof(double)), *rows = calloc((size_t)S * n, sizeof(double));
  unsigned seed = 7;
  random_tree_spd(m, 3, H);
  double lo = INFINITY, hi = 0.0;
  cr_assert_eq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
  for (int wi = 0; wi < (int)(sizeof widths / sizeof widths[0]); ++wi) {
    const int NC = widths[wi];
    for (int c = 0; c < NC; ++c) /* columns 0..15 and 32..: units at dofs in order; 16..31 dense */
      for (int i = 0; i < n; ++i) x[c * n + i] = c >= 16 && c < 32 ? urand(&seed) : (i == (c * 5) % n ? 1.0 : 0.0);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < S; ++c) rows[i * S + c] = c < NC ? x[c * n + i] : 1e300;
    for (int c = 0; c < NC; ++c) grit_treechol_solve(tc, 0, L, inv, x + c * n);
    grit_treechol_solve_rows(tc, 0, L, inv, rows, S, NC);
    int differ = 0, touched = 0;
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < S; ++c) {
        if (c < NC) differ += rows[i * S + c] != x[c * n + i];
        else touched += rows[i * S + c] != 1e300;
      }
    cr_expect_eq(differ, 0, "%d columns: %d entries differ from the single solves", NC, differ);
    cr_expect_eq(touched, 0, "%d columns: %d entries past them written", NC, touched);
  }
  free(H), free(L), free(x), free(rows);
  grit_treechol_free(tc);
  grit_model_free(m);
}

/* The first sweep taking a dof and its parent (the dof before it) together (grit_treechol_pair_rows) gives
 * the same bits as one row at a time, zeros' signs included (the same operations on each entry in the same
 * order): columns dense, units at one dof (zero groups in one row of a pair and not the other: the
 * fallbacks) and exact zeros, over every width the AVX2 path splits differently. */
Test(treechol, solve_rows_pair_rows_same_bits) {
  grit_model *m = load();
  grit_treechol *tc;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_treechol_create(m, &tc, msg), GRIT_OK);
  enum { S = 64 };
  const int n = m->nv, widths[] = {64, 43, 37, 32, 16, 11, 8, 3};
  int pairs = 0;
  for (int k = 1; k < n; ++k) pairs += m->dof_parent[k] == k - 1;
  cr_assert(pairs > 3, "the model has %d dofs after their parent", pairs);
  double *H = malloc(sizeof(double) * n * n), *L = malloc(sizeof(double) * n * n), inv[64];
  double *a = malloc(sizeof(double) * (size_t)S * n), *b = malloc(sizeof(double) * (size_t)S * n);
  unsigned seed = 11;
  random_tree_spd(m, 5, H);
  double lo = INFINITY, hi = 0.0;
  cr_assert_eq(grit_treechol_factor(tc, 0, H, L, inv, &lo, &hi), -1);
  for (int wi = 0; wi < (int)(sizeof widths / sizeof widths[0]); ++wi) {
    const int NC = widths[wi];
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < S; ++c) {
        const int kind = (c / 4) % 3; /* vectors of four columns: dense, a unit at one dof, zero */
        a[i * S + c] = kind == 0 ? urand(&seed) : kind == 1 ? (i == (c * 7) % n ? 1.0 : 0.0) : 0.0;
      }
    memcpy(b, a, sizeof(double) * (size_t)S * n);
    grit_treechol_pair_rows(tc, 1);
    grit_treechol_solve_rows(tc, 0, L, inv, a, S, NC);
    grit_treechol_pair_rows(tc, 0);
    grit_treechol_solve_rows(tc, 0, L, inv, b, S, NC);
    cr_expect_eq(memcmp(a, b, sizeof(double) * (size_t)S * n), 0, "%d columns", NC);
  }
  free(H), free(L), free(a), free(b);
  grit_treechol_free(tc);
  grit_model_free(m);
}

/* A chain's columns (a foot's path to the root) keep the pattern; two branches (a self-contact) do not. */
Test(treechol, chain_columns) {
  grit_model *m = load();
  int path[64], np = 0, leaf = -1;
  for (int i = 0; i < m->nv; ++i)
    if (m->jnt_type[m->dof_jnt[i]] == GRIT_JOINT_SLIDE) leaf = i;
  cr_assert(leaf > 0);
  for (int j = leaf; j >= 0; j = m->dof_parent[j]) path[np++] = j;
  int idx[64];
  for (int k = 0; k < np; ++k) idx[k] = path[np - 1 - k];
  cr_expect(grit_treechol_is_chain(m, 0, idx, np));
  cr_expect(grit_treechol_is_chain(m, 0, idx + 2, np - 3), "a subset of a path");
  int two[2] = {leaf, m->nv - 1}; /* the slide and the last arm's hinge */
  cr_expect(!grit_treechol_is_chain(m, 0, two, 2));
  cr_expect(grit_treechol_a_keeps_pattern(m, 0), "joint motors only");
  grit_model_free(m);
}

/* The Hessian's block path with chain constraints (factored in tree order) and then with a two-branch
 * one (the dense block fallback) against the dense path, on the same terms. */
Test(treechol, hessian_paths_agree) {
  grit_model *m = load();
  const int n = m->nv;
  char msg[GRIT_MESSAGE_SIZE];
  grit_hessian *hb, *hd;
  cr_assert_eq(grit_hessian_create(m, 4, 0, &hb, msg), GRIT_OK);
  cr_assert_eq(grit_hessian_create(m, 4, 0, &hd, msg), GRIT_OK);
  grit_hessian_force_path(hd, 0);
  double *A = malloc(sizeof(double) * n * n), J[3 * 64], G[9], x[64], y[64];
  unsigned seed = 99;
  random_tree_spd(m, 3, A);
  for (int round = 0; round < 3; ++round) { /* chain, two branches, chain again (the copy after a fill) */
    grit_hessian *hs[2] = {hb, hd};
    for (int w = 0; w < 2; ++w) {
      grit_hessian_pattern_reset(hs[w]);
      grit_hessian_pattern_commit(hs[w]);
      grit_hessian_begin(hs[w], A);
    }
    for (int c = 0; c < 4; ++c) {
      const int tip = round == 1 && c == 3 ? -1 : n - 1 - 5 * c; /* -1: two tips */
      memset(J, 0, sizeof J);
      for (int r = 0; r < 3; ++r) {
        for (int j = tip >= 0 ? tip : n - 1; j >= 0; j = m->dof_parent[j]) J[r * n + j] = urand(&seed);
        if (tip < 0)
          for (int j = 12; j >= 0; j = m->dof_parent[j]) J[r * n + j] += urand(&seed);
      }
      memset(G, 0, sizeof G);
      for (int r = 0; r < 3; ++r) G[r * 3 + r] = 1.0 + fabs(urand(&seed));
      G[1] = G[3] = 0.2;
      const int tree[2] = {0, 0};
      const double *Jp[2] = {J, J};
      for (int w = 0; w < 2; ++w) grit_hessian_add(hs[w], 3, 1, tree, Jp, G, -1);
    }
    double cb, cd;
    cr_assert_eq(grit_hessian_factor(hb, &cb, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_hessian_factor(hd, &cd, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_hessian_path(hb), 1);
    for (int i = 0; i < n; ++i) x[i] = y[i] = urand(&seed);
    grit_hessian_solve(hb, x, 1);
    grit_hessian_solve(hd, y, 1);
    const double r = rel_diff(x, y, n);
    cr_expect(r < 1e-12, "round %d: block vs dense %.3g", round, r);
    double X[64 * 6], Y[64 * 6]; /* the many-column solve */
    for (int i = 0; i < 6 * n; ++i) X[i] = Y[i] = urand(&seed);
    grit_hessian_solve(hb, X, 6);
    grit_hessian_solve(hd, Y, 6);
    const double r6 = rel_diff(X, Y, 6 * n);
    cr_expect(r6 < 1e-12, "round %d: six columns %.3g", round, r6);
  }
  free(A);
  grit_hessian_free(hb);
  grit_hessian_free(hd);
  grit_model_free(m);
}

/* Steps the model in contact with its legs' motors on, on the block path (tree-ordered factor: the
 * feet's contacts and the limits are chains) or the dense one; returns the factor's work of the last
 * step in *flops. */
static int run(int dense, int steps, double *q, double *flops) {
  grit_model *m = load();
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = 1e-12;
  s.dense_max_nv = dense ? 1000 : 0;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  *flops = 0.0;
  for (int i = 0; i < steps; ++i) {
    const double u[2] = {0.4 * sin(0.01 * i), -0.3 * cos(0.013 * i)};
    cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    if (st.factor_flops > 0.0) *flops = st.factor_flops / fmax(1.0, st.newton_iters + 1.0);
  }
  const int nq = m->nq;
  memcpy(q, d->qpos, sizeof(double) * (size_t)nq);
  grit_data_free(d);
  grit_model_free(m);
  return nq;
}

/* 300 steps (0.6 s: the torso drops onto its feet and the legs push) give the same trajectory on both
 * paths up to the solver's tolerance: the factors differ at round-off, Newton stops at rel_tol 1e-12,
 * and contact makes the map from one step's error to the next expansive for a few steps; measured
 * largest difference of a coordinate 1.0e-12 (m or quaternion units), asserted 1e-8. */
Test(treechol, trajectory_matches_dense_path) {
  double qb[64], qd[64], fb, fd;
  const int nq = run(0, 300, qb, &fb);
  run(1, 300, qd, &fd);
  cr_log_info("factor work per factorization: tree-ordered %.0f, dense %.0f", fb, fd);
  cr_expect(fb > 0.0 && fb < 0.5 * fd, "the tree-ordered factor was used: %.0f vs %.0f", fb, fd);
  double worst = 0.0;
  for (int i = 0; i < nq; ++i) worst = fmax(worst, fabs(qb[i] - qd[i]));
  cr_log_info("largest coordinate difference %.3g", worst);
  cr_expect(worst < 1e-8, "%.3g", worst);
}

/* A's pattern with tendon actuators: a position servo (implicit stiffness) on a fixed tendon along one
 * leg keeps it, one across the two legs does not; a plain motor on that tendon adds nothing to A. */
static int keeps_with_tendon(const char *joints, const char *actuator) {
  char xml[2048];
  snprintf(xml, sizeof xml,
           "<mujoco><worldbody><body><freejoint/><geom type='sphere' size='0.1'/>"
           " <body><joint name='a1' type='hinge'/><geom type='sphere' size='0.05' pos='0 0 -0.1'/>"
           "  <body><joint name='a2' type='hinge'/><geom type='sphere' size='0.05' pos='0 0 -0.2'/></body></body>"
           " <body><joint name='b1' type='hinge'/><geom type='sphere' size='0.05' pos='0 0.1 -0.1'/></body>"
           "</body></worldbody><tendon><fixed name='t'>%s</fixed></tendon>"
           "<actuator>%s</actuator></mujoco>",
           joints, actuator);
  grit_model *m = xml_load_or_fail(xml);
  const int keeps = grit_treechol_a_keeps_pattern(m, 0);
  grit_model_free(m);
  return keeps;
}

Test(treechol, tendon_actuators_and_the_pattern) {
  const char *leg = "<joint joint='a1' coef='1'/><joint joint='a2' coef='0.5'/>";
  const char *across = "<joint joint='a2' coef='1'/><joint joint='b1' coef='-1'/>";
  cr_expect(keeps_with_tendon(leg, "<position tendon='t' kp='50'/>"));
  cr_expect(!keeps_with_tendon(across, "<position tendon='t' kp='50'/>"));
  cr_expect(keeps_with_tendon(across, "<motor tendon='t'/>"));
}

/* A tree of more than 64 dofs (a composite cloth's is 166): constraints whose J is nonzero on a chain
 * of at most 64 dofs are added on those columns alone (hessian.c's add_chain), the others as the whole
 * tree's sum. On a chain of 70 hinges, both paths of the Hessian against H summed here: the solves agree. */
Test(treechol, hessian_chains_in_a_tree_over_64_dofs) {
  enum { N = 70 };
  char *xml = malloc(160 * N + 256), *p = xml;
  p += sprintf(p, "<mujoco><worldbody>");
  for (int i = 0; i < N; ++i)
    p += sprintf(p, "<body pos='0 0 %s'><joint type='hinge' axis='%d %d 1'/><geom type='sphere' size='0.02'/>",
                 i ? "-0.05" : "1", i % 2, (i + 1) % 3 == 0);
  for (int i = 0; i < N; ++i) p += sprintf(p, "</body>");
  sprintf(p, "</worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->nv, N);
  grit_hessian *hb, *hd;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_hessian_create(m, 8, 0, &hb, msg), GRIT_OK);
  cr_assert_eq(grit_hessian_create(m, 8, 0, &hd, msg), GRIT_OK);
  grit_hessian_force_path(hb, 1);
  grit_hessian_force_path(hd, 0);
  double *A = calloc((size_t)N * N, sizeof(double)), *H = malloc(sizeof(double) * N * N), J[3 * N], G[9], x[N], y[N],
         z[N];
  unsigned seed = 7;
  for (int k = 0; k < N; ++k) /* a chain's M: SPD, dense (every dof is an ancestor or a descendant) */
    for (int i = 0; i <= k; ++i)
      for (int j = 0; j <= k; ++j) A[i * N + j] += 0.01 * (1.0 + (i == j));
  for (int k = 0; k < N; ++k) A[k * N + k] += 0.1;
  memcpy(H, A, sizeof(double) * N * N); /* H = A + sum J^T G J, summed here entry by entry */
  grit_hessian *hs[2] = {hb, hd};
  for (int w = 0; w < 2; ++w) {
    grit_hessian_pattern_reset(hs[w]);
    grit_hessian_pattern_commit(hs[w]);
    grit_hessian_begin(hs[w], A);
  }
  /* chains from the root to dof 20 (21 columns: add_chain), 63 (64: add_chain) and 64 (65: whole sum);
   * one row (a limit or a tendon) and three (a contact) */
  const int tips[4] = {20, 63, 64, N - 1}, dims[4] = {3, 1, 3, 1};
  for (int c = 0; c < 4; ++c) {
    const int dim = dims[c];
    memset(J, 0, sizeof J);
    for (int r = 0; r < dim; ++r)
      for (int j = 0; j <= tips[c]; ++j) J[r * N + j] = urand(&seed);
    memset(G, 0, sizeof G);
    for (int r = 0; r < dim; ++r) G[r * dim + r] = 1.0 + fabs(urand(&seed));
    if (dim == 3) G[1] = G[3] = 0.2;
    const int tree[2] = {0, 0};
    const double *Jp[2] = {J, J};
    for (int w = 0; w < 2; ++w) grit_hessian_add(hs[w], dim, 1, tree, Jp, G, -1);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        for (int r = 0; r < dim; ++r)
          for (int q = 0; q < dim; ++q) H[i * N + j] += J[r * N + i] * G[r * dim + q] * J[q * N + j];
  }
  double cb, cd;
  cr_assert_eq(grit_hessian_factor(hb, &cb, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_hessian_factor(hd, &cd, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_hessian_path(hb), 1);
  for (int i = 0; i < N; ++i) x[i] = y[i] = z[i] = urand(&seed);
  grit_hessian_solve(hb, x, 1);
  grit_hessian_solve(hd, y, 1);
  dense_solve(N, H, z, 1);
  /* the same H (the chain's sums equal the whole sum's on the chain, zeros elsewhere): Cholesky
   * solves of an SPD matrix of condition ~1e4 agree to ~1e-12 relative; a column left out differs
   * at order 1 */
  const double rb = rel_diff(x, z, N), rd = rel_diff(y, z, N);
  cr_expect(rb < 1e-12, "block path vs the explicit sum %.3g", rb);
  cr_expect(rd < 1e-12, "dense path vs the explicit sum %.3g", rd);
  free(A);
  free(H);
  grit_hessian_free(hb);
  grit_hessian_free(hd);
  grit_model_free(m);
}
