/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_quadgrad.c — the Delassus estimates' kernels of the position passes: the gradient of
 * sum_r z_r^T M(q) z_r of up to three rows in one sweep (derivatives_quadgrad.c) against the row-by-row
 * sweep it replaces (bitwise) and against central differences of z^T M z; and the tree-ordered solve
 * for sparse right-hand sides (grit_treechol_solve_from_rows, one row and three) against grit_treechol_solve (bitwise)
 * and against A x = b. A, B of the position passes against the dual-factor path: test_derivatives_articulated. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_quadgrad.h"
#include "dynamics.h"
#include "grit/grit.h"
#include "test_util.h"
#include "grit/mjcf.h"
#include "kinematics.h"
#include "math_test_util.h"
#include "treechol.h"
#include "xml_load_util.h"

/* A floating torso with a ball-jointed head (a group of three dofs), two legs of a hinge pair and a
 * knee, a welded foot on one of them and an arm: one branched tree of 17 dofs. */
static const char *TREE =
    "<mujoco><worldbody>"
    "<body pos='0 0 0.62'><freejoint/><geom type='box' pos='0.01 0 0.02' size='0.12 0.08 0.05' mass='4'/>"
    " <body pos='0 0 0.08'><joint type='ball'/><geom type='sphere' pos='0.02 0 0.08' size='0.05' mass='0.5'/></body>"
    " <body pos='0 0.06 -0.05'><joint type='hinge' axis='0 1 0'/><joint type='hinge' pos='0 0.01 0' axis='1 0 0.2'/>"
    "  <geom type='capsule' fromto='0 0 0 0.02 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='0.02 0 -0.25'><joint type='hinge' axis='0 1 0'/>"
    "   <geom type='capsule' fromto='0 0 0 -0.02 0 -0.25' size='0.025' mass='0.7'/>"
    "   <body pos='0 0 -0.25'><geom type='box' pos='0.03 0 0' size='0.06 0.03 0.01' mass='0.2'/></body></body></body>"
    " <body pos='0 -0.06 -0.05'><joint type='hinge' axis='0.1 1 0'/><joint type='slide' axis='0 0 1'/>"
    "  <geom type='capsule' fromto='0 0 0 -0.03 0 -0.25' size='0.03' mass='1'/>"
    "  <body pos='-0.03 0 -0.25'><joint type='hinge' axis='0 1 0'/>"
    "   <geom type='capsule' fromto='0 0 0 0.01 0 -0.25' size='0.025' mass='0.7'/></body></body>"
    " <body pos='0.1 0 0.05'><joint type='hinge' axis='1 0 0'/><joint type='hinge' axis='0 0 1'/>"
    "  <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.02' mass='0.3'/></body>"
    "</body></worldbody></mujoco>";

typedef struct fixture {
  grit_model *m;
  grit_kin k;
  grit_rnea r;
  grit_sinertia *crb;
  double *M, *q, *s;
  void *arena;
} fixture;

static void carve(fixture *f, grit_carver *c) {
  const grit_model *m = f->m;
  GRIT_CARVE_KIN(c, f->k, m);
  grit_rnea_layout(m, &f->r, c);
  GRIT_CARVE(c, f->crb, m->nbody);
  GRIT_CARVE(c, f->M, m->nM);
  GRIT_CARVE(c, f->q, m->nq);
  GRIT_CARVE(c, f->s, grit_quadgrad_scratch(m));
}

static void setup(fixture *f) {
  memset(f, 0, sizeof *f);
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(TREE, &f->m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  grit_carver c = {NULL, 0};
  carve(f, &c);
  f->arena = calloc(1, c.used + 64);
  c.base = f->arena, c.used = 0;
  carve(f, &c);
  grit_rnea_trees(f->m, &f->r);
  /* a generic configuration: qpos0 moved along every tangent direction */
  const grit_model *m = f->m;
  double *dq = calloc((size_t)m->nv, sizeof(double));
  for (int i = 0; i < m->nq; ++i) f->q[i] = m->qpos0[i];
  for (int j = 0; j < m->nv; ++j) dq[j] = 0.3 * sin(1.7 * j + 0.4);
  grit_kin_integrate(m, f->q, dq, 1.0);
  free(dq);
  cr_assert_eq(m->ntree, 1);
  cr_assert_eq(m->nv, 17);
}

static void teardown(fixture *f) {
  free(f->arena);
  grit_model_free(f->m);
}

/* sum_r z_r^T M(q (+) e dq_j) z_r. */
static double energy(fixture *f, int j, double e, const double *z, int nr) {
  const grit_model *m = f->m;
  double *q = malloc(sizeof(double) * (size_t)m->nq), *dq = calloc((size_t)m->nv, sizeof(double));
  memcpy(q, f->q, sizeof(double) * (size_t)m->nq);
  if (j >= 0) dq[j] = e;
  grit_kin_integrate(m, q, dq, 1.0);
  grit_kin_positions(m, q, NULL, &f->k);
  grit_crba(m, &f->k, f->crb, f->M);
  const int n = m->nv;
  double s = 0.0;
  for (int r = 0; r < nr; ++r)
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) s += z[r * n + a] * f->M[a * n + b] * z[r * n + b];
  free(q), free(dq);
  return s;
}

Test(quadgrad, rows_in_one_sweep_equal_row_by_row_and_central_differences) {
  fixture f;
  setup(&f);
  const grit_model *m = f.m;
  const int n = m->nv;
  double z[3 * 17], g1[17], g3[17], fd[17];
  for (int i = 0; i < 3 * n; ++i) z[i] = cos(0.9 * i + 0.2) + (i % 5 == 0 ? 0.5 : 0.0);
  for (int nr = 1; nr <= 3; ++nr) {
    energy(&f, -1, 0.0, z, nr); /* kinematics at q */
    for (int j = 0; j < n; ++j) g1[j] = g3[j] = 0.25 * j; /* both add to g */
    for (int r = 0; r < nr; ++r) grit_rnea_quadratic_gradient(m, &f.k, &f.r, 0, z + r * n, g1);
    grit_rnea_quadratic_gradient_rows(m, &f.k, &f.r, 0, z, n, nr, g3, f.s);
    cr_assert(memcmp(g1, g3, sizeof g1) == 0, "one sweep differs from the row-by-row sweeps (nr %d)", nr);
    /* central differences: the error is O(eps^2) times the third derivative, about 1e-8 of the scale */
    const double eps = 1e-5;
    double scale = 0.0, err = 0.0;
    for (int j = 0; j < n; ++j) {
      fd[j] = (energy(&f, j, eps, z, nr) - energy(&f, j, -eps, z, nr)) / (2.0 * eps);
      scale = fmax(scale, fabs(fd[j]));
      err = fmax(err, fabs((g3[j] - 0.25 * j) - fd[j]));
    }
    cr_assert_gt(scale, 1e-2);
    cr_assert_lt(err, 1e-7 * scale, "nr %d: gradient error %g of scale %g", nr, err, scale);
  }
  teardown(&f);
}

Test(quadgrad, sparse_solves_equal_the_full_solve) {
  fixture f;
  setup(&f);
  const grit_model *m = f.m;
  const int n = m->nv;
  grit_treechol *tc = NULL;
  cr_assert_eq(grit_treechol_create(m, &tc, NULL), GRIT_OK);
  energy(&f, -1, 0.0, NULL, 0);
  for (int i = 0; i < n; ++i) f.M[i * n + i] += 0.01 * (1 + i % 3); /* armature-like, as A's diagonal */
  double *L = calloc((size_t)grit_treechol_size(tc, 0), sizeof(double)), inv[17], lo = 1e300, hi = 0.0;
  cr_assert_lt(grit_treechol_factor(tc, 0, f.M, L, inv, &lo, &hi), 0);
  /* a contact's row on the second leg's chain (free joint, its hinge pair... the knee), a limit's e_j of
   * the arm's last dof, and a dense row */
  double b[3][17], x1[17], x2[17];
  memset(b, 0, sizeof b);
  for (int j = 0; j < 6; ++j) b[0][j] = 0.3 + 0.1 * j;
  b[0][12] = 0.7, b[0][13] = -0.4, b[0][14] = 0.2;
  b[1][16] = 1.0;
  for (int j = 0; j < n; ++j) b[2][j] = sin(j + 1.0);
  for (int c = 0; c < 3; ++c) {
    memcpy(x1, b[c], sizeof x1), memcpy(x2, b[c], sizeof x2);
    grit_treechol_solve(tc, 0, L, inv, x1);
    grit_treechol_solve_from_rows(tc, 0, L, inv, x2, 17, 1);
    for (int j = 0; j < n; ++j) cr_assert_eq(x1[j], x2[j], "case %d, dof %d: %.17g vs %.17g", c, j, x1[j], x2[j]);
    double res = 0.0, bmax = 0.0; /* the residual of A x = b, round-off of a well-conditioned system */
    for (int i = 0; i < n; ++i) {
      double s = -b[c][i];
      for (int j = 0; j < n; ++j) s += f.M[i * n + j] * x2[j];
      res = fmax(res, fabs(s));
      bmax = fmax(bmax, fabs(b[c][i]));
    }
    cr_assert_lt(res, 1e-10 * bmax, "case %d: residual %g", c, res);
  }
  /* the three rows at once: the row-by-row numbers (a dof is skipped only where every row is zero) */
  double X[3][17];
  memcpy(X, b, sizeof X);
  grit_treechol_solve_from_rows(tc, 0, L, inv, &X[0][0], 17, 3);
  for (int c = 0; c < 3; ++c) {
    memcpy(x1, b[c], sizeof x1);
    grit_treechol_solve(tc, 0, L, inv, x1);
    for (int j = 0; j < n; ++j) cr_assert_eq(X[c][j], x1[j], "rows: case %d, dof %d", c, j);
  }
  free(L);
  grit_treechol_free(tc);
  teardown(&f);
}

/* A tree of more than 64 dofs (MuJoCo's composite cloth is one of 166): the position passes take the
 * Delassus estimates' partials from A's double factor there too (derivatives_delassus.c), not from a
 * dual factorization of the whole tree. A floating torso with two arms of 30 hinges each (66 dofs)
 * lying on the floor under SAP (its regularization reads the estimates): A and B against the dual
 * factor's path (no_delassus_lin), which computes the same derivative in another order of operations:
 * round-off amplified by A's condition (a 60-link chain), measured 3.9e-11 of a column's largest entry;
 * asserted 1e-9 as test_derivatives_articulated.c does (a wrong term, a missing dA or dJ, is O(1)). */
Test(quadgrad, a_tree_over_64_dofs_takes_the_double_factor) {
  enum { ARM = 30 };
  char *xml = malloc(256 * 2 * ARM + 1024), *p = xml;
  p += sprintf(p, "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 0.1'/>"
                  "<body pos='0 0 0.06'><freejoint/><geom type='box' size='0.1 0.1 0.05'/>");
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < ARM; ++i)
      p += sprintf(p, "<body pos='%s 0 0'><joint type='hinge' axis='0 %d 1' damping='0.1'/>"
                      "<geom type='capsule' fromto='0 0 0 %s 0 0' size='0.02'/>",
                   i ? (side ? "-0.06" : "0.06") : (side ? "-0.1" : "0.1"), i % 2, side ? "-0.06" : "0.06");
    for (int i = 0; i < ARM; ++i) p += sprintf(p, "</body>");
  }
  sprintf(p, "</body></worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  const int nv = grit_model_nv(m), nx = 2 * nv;
  cr_assert_eq(nv, 6 + 2 * ARM);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  for (int i = 0; i < 60; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_data_ncontacts(d) > 10, "%d contacts", grit_data_ncontacts(d));
  double *A[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double));
    cr_assert_eq(grit_step_derivatives(d, A[k], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    if (!k) cr_assert(grit_deriv_delassus_lin_on(d, d->deriv), "the double factor's path applies");
    d->deriv->no_delassus_lin = 1;
  }
  const double worst = col_rel_diff(A[0], A[1], nx, nx);
  cr_log_info("A: largest difference %.3g of its column's largest entry", worst);
  cr_expect(worst < 1e-9, "%.3g", worst);
  free(A[0]), free(A[1]);
  grit_data_free(d);
  grit_model_free(m);
}

/* The lanes' sweep (four rows side by side) with a lone leaf formed in registers by the backward pass (the
 * second leg's knee: one hinge, no child) and its walk of the tree's lists kept in the scratch, against the
 * same sweep through the scratch (plain | 2), each with and without the slides' zero terms (plain 1), and
 * lane by lane against the one-row sweep: the same bits. Swept twice each way (the lists made, then read) and
 * switching between the ways (the lists made again). */
Test(quadgrad, lanes_with_leaves_in_registers_same_bits) {
  fixture f;
  setup(&f);
  const grit_model *m = f.m;
  const int n = m->nv;
  grit_lanes z[17], g[4][17];
  double zr[4][17], g1[17];
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < 4; ++l) z[j][l] = zr[l][j] = cos(0.7 * j + 1.3 * l) + (j % 4 == l ? 0.4 : 0.0);
  energy(&f, -1, 0.0, NULL, 0); /* kinematics at q */
  int lone = 0; /* the fixture's one-dof leaves */
  for (int b = 1; b < m->nbody; ++b) {
    int leaf = 1;
    for (int c = 1; c < m->nbody; ++c) leaf &= m->body_parent[c] != b;
    lone += leaf && m->body_dofnum[b] == 1;
  }
  cr_assert_eq(lone, 1, "one-dof leaves: %d", lone);
  for (int rep = 0; rep < 2; ++rep)
    for (int plain = 0; plain < 4; ++plain) grit_rnea_quadratic_gradient_lanes(m, &f.k, &f.r, 0, z, g[plain], f.s, plain);
  cr_assert(!memcmp(g[0], g[2], sizeof g[0]), "leaves in registers differ from the scratch's path");
  cr_assert(!memcmp(g[1], g[3], sizeof g[1]), "leaves in registers differ (every term)");
  for (int l = 0; l < 4; ++l) {
    memset(g1, 0, sizeof g1);
    grit_rnea_quadratic_gradient(m, &f.k, &f.r, 0, zr[l], g1);
    for (int j = 0; j < n; ++j) cr_assert(!memcmp(&g1[j], &g[0][j][l], sizeof(double)), "lane %d dof %d", l, j);
  }
  teardown(&f);
}

/* MuJoCo's softbox (one tree of 224 dofs: a free root and 218 slides; 651 tendon couplings of two slides each):
 * the lanes' sweep with its leaves in registers against through the scratch (ws->no_leaf_sweep), and each
 * pass's batch of the kept rows' - g . dq with g stored by columns against g by rows and each row's own sum
 * (ws->no_kept_batch): A equal entry by entry. The rows' z from columns of A^-1 solved once per call against
 * one solve per row (ws->no_acols): the same derivative rounded differently, measured 5.5e-16 of a column's
 * largest entry after 3 steps (5.5e-16 after 200 too); asserted 1e-12 (a wrong column or coefficient is O(1)). */
Test(quadgrad, softbox_batched_kept_rows) {
  grit_model *m;
  grit_data *d = tu_file_stepped("tests/models/mujoco_composite/composite/softbox.xml", 3, 0, &m);
  const int nx = 2 * grit_model_nv(m);
  double *A[4];
  for (int k = 0; k < 4; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double));
    d->deriv->no_leaf_sweep = k == 1, d->deriv->no_kept_batch = k == 2, d->deriv->no_acols = k == 3;
    const unsigned long batch = d->deriv->kept_batch_used, cols = d->deriv->acols_used;
    cr_assert_eq(grit_step_derivatives(d, A[k], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(k == 2 ? d->deriv->kept_batch_used == batch : d->deriv->kept_batch_used > batch, "case %d", k);
    cr_assert(k == 3 ? d->deriv->acols_used == cols : d->deriv->acols_used > cols, "case %d", k);
  }
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "leaves through the scratch: A differs");
  cr_expect(!memcmp(A[0], A[2], sizeof(double) * (size_t)nx * nx), "g by rows: A differs");
  const double worst = col_rel_diff(A[0], A[3], nx, nx);
  cr_log_info("z from columns of A^-1: A's largest difference %.3g of its column's largest entry", worst);
  cr_expect(worst < 1e-12, "%.3g", worst);
  for (int k = 0; k < 4; ++k) free(A[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A tree of slides alone (MuJoCo's particles) never rotates: its M is constant, the gradient of z^T M z zero
 * (the sweep's products with the slides' zero angular twists give +-0), and its - g . dq terms +-0, which leave
 * a sum from +0 as it was. The Delassus estimates' partials leave both out (slides_only) against forming and
 * contracting them (ws->no_slide_quad): A and B the same bits on grid2pin (particles pinned at two corners,
 * tendons between neighbours) and the hammock (a humanoid lying on them), with the counter showing which path
 * ran; MuJoCo's humanoid on the floor (a free root and hinges) never takes it. */
static void slide_trees_same_bits(const char *rel, int steps, int slides) {
  grit_model *m;
  grit_data *d = tu_file_stepped(rel, steps, 0, &m);
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m), nu = grit_model_nu(m);
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
    d->deriv->no_slide_quad = k;
    const unsigned long skips = d->deriv->slide_quad_skips;
    cr_assert_eq(grit_step_derivatives(d, A[k], nu ? B[k] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    cr_assert(k || !slides ? d->deriv->slide_quad_skips == skips : d->deriv->slide_quad_skips > skips, "%s: case %d",
              rel, k);
  }
  cr_expect(!memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx), "%s: A differs", rel);
  cr_expect(!memcmp(B[0], B[1], sizeof(double) * (size_t)nx * nu), "%s: B differs", rel);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

Test(quadgrad, trees_of_slides_leave_out_their_zero_gradient) {
  slide_trees_same_bits("tests/models/mujoco_composite/composite/grid2pin.xml", 20, 1);
  slide_trees_same_bits("tests/models/mujoco_composite/hammock/hammock.xml", 20, 1);
  slide_trees_same_bits("tests/models/mujoco_model/humanoid.xml", 250, 0); /* (hinges: never left out) */
}
