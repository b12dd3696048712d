/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_contact.c — a contact's J_c v and J_c^T gamma without J_c (derivatives_contact.c)
 * against the products with the Jacobian that grit_contact_jacobian_add forms, on random trees with
 * every joint type, for every body, in double (the dual instantiation is the same source; its results
 * in the derivatives are checked by test_derivatives against central differences). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "constraints.h"
#include "data_internal.h"
#include "derivatives_contact.h"
#include "dynamics.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "kinematics.h"
#include "test_util.h"
#include "xml_load_util.h"

/* The sums regroup products of O(1) factors over at most a few dozen dofs: a few ulps of the largest
 * term; 1e-12 leaves room for the trees' lever arms (|p| < 3). */
#define TOL 1e-12

Test(derivatives_contact, products_match_the_jacobian) {
  tu_rng r = {0x5eed31u};
  tu_tree_opts o = tu_default_tree_opts();
  for (int trial = 0; trial < 12; ++trial) {
    grit_model *m = tu_random_tree(&r, 3 + trial % 6, TU_ALL, &o);
    grit_data *d = tu_data(m);
    double *q = calloc((size_t)m->nq + 1, sizeof *q), *v = calloc((size_t)m->nv + 1, sizeof *v);
    tu_random_state(&r, m, q, v, 2.0);
    grit_inertial in = {m->body_mass, m->body_com, m->body_inertia};
    grit_kin_positions(m, q, &in, &d->kin);
    double *J = calloc((size_t)3 * m->nv + 1, sizeof *J), *rr = calloc((size_t)m->nv + 1, sizeof *rr);
    for (int b = 1; b < m->nbody; ++b) {
      const int t = grit_body_tree(m, b);
      if (t < 0) continue; /* welded to the world */
      const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
      double p[3], F[9], g[3], S[6], W[6] = {0, 0, 0, 0, 0, 0}, vc[3] = {0, 0, 0}, vn[3] = {0, 0, 0};
      for (int i = 0; i < 3; ++i) {
        p[i] = tu_uniform(&r, -1.5, 1.5);
        g[i] = tu_uniform(&r, -2.0, 2.0);
      }
      for (int i = 0; i < 9; ++i) F[i] = tu_uniform(&r, -1.0, 1.0); /* the products are linear in F */
      const double sign = trial % 2 ? 1.0 : -1.0;
      for (int i = 0; i < 3 * n; ++i) J[i] = 0.0;
      grit_contact_jacobian_add(m, &d->kin, b, p, t, F, sign, J, NULL);
      grit_body_dof_twist(m, &d->kin, b, t, v, S);
      grit_contact_side_velocity(S, p, F, sign, 0, vc);
      grit_contact_side_velocity(S, p, F, sign, 2, vn);
      for (int row = 0; row < 3; ++row) {
        double ref = 0.0;
        for (int j = 0; j < n; ++j) ref += J[row * n + j] * v[adr + j];
        cr_assert(fabs(vc[row] - ref) <= TOL * (1.0 + fabs(ref)), "trial %d body %d row %d: %.17g vs %.17g", trial,
                  b, row, vc[row], ref);
        if (row == 2) cr_assert(fabs(vn[2] - vc[2]) == 0.0, "the normal row alone: the same operations");
        else cr_assert(vn[row] == 0.0, "rows before r0 untouched");
      }
      grit_contact_side_wrench(p, F, sign, g, W);
      for (int i = 0; i < m->nv; ++i) rr[i] = 0.0;
      grit_body_wrench_sub(m, &d->kin, b, t, W, rr);
      for (int j = 0; j < n; ++j) {
        const double ref = J[j] * g[0] + J[n + j] * g[1] + J[2 * n + j] * g[2];
        cr_assert(fabs(-rr[adr + j] - ref) <= TOL * (1.0 + fabs(ref)), "trial %d body %d dof %d: %.17g vs %.17g",
                  trial, b, j, -rr[adr + j], ref);
      }
      for (int i = 0; i < m->nv; ++i)
        if (i < adr || i >= adr + n) cr_assert(rr[i] == 0.0, "rows outside the body's tree untouched");
    }
    free(q), free(v), free(J), free(rr);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A free body's side of the Delassus estimate without J_c (grit_free_side_delassus) against
 * grit_delassus_c's sum over the rows of sign F^T J_p (grit_contact_jacobian_add) with the factor of a
 * random symmetric positive definite A: the frame drops out of the sum (F orthonormal), so the two
 * differ by the order of the sums: a few ulps of terms of the size of the result. */
Test(derivatives_contact, free_side_delassus_matches_the_jacobian) {
  static const char *xml =
      "<mujoco><worldbody>"
      "<body pos='0.2 -0.1 0.5'><freejoint/><geom type='box' size='0.1 0.2 0.05'/></body>"
      "<body pos='-1 0.3 0.2'><freejoint/><geom type='sphere' size='0.1'/></body>"
      "</worldbody></mujoco>";
  grit_model *m = xml_load_or_fail(xml);
  grit_data *d = tu_data(m);
  tu_rng r = {0xde1a55u};
  double q[14], v[12], A[72], L[72], G[72], J[18], tmp[6];
  for (int trial = 0; trial < 20; ++trial) {
    tu_random_state(&r, m, q, v, 1.0);
    grit_inertial in = {m->body_mass, m->body_com, m->body_inertia};
    grit_kin_positions(m, q, &in, &d->kin);
    for (int t = 0; t < 2; ++t) { /* A = B B^T + I / 2 per tree */
      double B[36];
      for (int i = 0; i < 36; ++i) B[i] = tu_uniform(&r, -1.0, 1.0);
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          double s = i == j ? 0.5 : 0.0;
          for (int l = 0; l < 6; ++l) s += B[6 * i + l] * B[6 * j + l];
          A[36 * t + 6 * i + j] = L[36 * t + 6 * i + j] = s;
        }
      for (int c = 0; c < 6; ++c) {
        double e[6] = {0, 0, 0, 0, 0, 0}, x[6];
        e[c] = 1.0;
        tu_solve(A + 36 * t, e, x, 6);
        for (int i = 0; i < 6; ++i) G[36 * t + 6 * i + c] = x[i];
      }
    }
    cr_assert_eq(grit_block_cholesky(m, L, NULL), -1);
    for (int b = 1; b <= 2; ++b) {
      const int t = grit_body_tree(m, b);
      double p[3], quat[4], F[9];
      for (int i = 0; i < 3; ++i) p[i] = d->kin.xpos[3 * b + i] + tu_uniform(&r, -0.3, 0.3);
      tu_quat(&r, quat);
      grit_quat_to_mat(F, quat);
      for (int i = 0; i < 18; ++i) J[i] = 0.0;
      grit_contact_jacobian_add(m, &d->kin, b, p, t, F, trial % 2 ? 1.0 : -1.0, J, NULL);
      const int tree[2] = {t, -1};
      const double *Jb[2] = {J, NULL};
      const double ref = 3.0 * grit_delassus_c(m, L, NULL, NULL, 3, 1, tree, Jb, tmp);
      const double got = grit_free_side_delassus(m, &d->kin, t, p, G + m->tree_madr[t]);
      cr_assert(fabs(got - ref) <= 1e-12 * fabs(ref), "trial %d body %d: %.17g vs %.17g", trial, b, got, ref);
    }
  }
  grit_data_free(d);
  grit_model_free(m);
}
