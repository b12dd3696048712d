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
#include "grit/grit.h"
#include "kinematics.h"
#include "test_util.h"

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
