/* SPDX-License-Identifier: Apache-2.0 */
/* test_constraints.c — the constraint glue (constraints.c): the Delassus estimate w = |L^-1 J^T|^2 / dim
 * of grit_delassus_c, which does its forward substitutions three rows at a time and skips the columns
 * before J's first nonzero one, gives the bits of the plain one-row loop (written out here), in double
 * and in dual numbers, with the factor variable and constant (cmask), on random trees with J's leading
 * columns zero (a joint limit's or a body's chain) and not. A contact's Jacobian, whose free bodies take
 * their six columns without the walk along the chain, gives the bits of that walk (written out here). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "data_internal.h"
#include "grit/dual.h"
#include "grit/grit.h"
#include "grit/math.h"
#include "kinematics.h"
#include "test_util.h"

/* The one-row loop, in double. */
static double ref_delassus(const grit_model *m, const double *Achol, int dim, int ntree, const int tree[2],
                           const double *const J[2], double *tmp) {
  double w = 0.0;
  for (int k = 0; k < ntree; ++k) {
    const int t = tree[k], n = m->tree_dofnum[t];
    const double *L = Achol + m->tree_madr[t];
    for (int r = 0; r < dim; ++r)
      for (int j = 0; j < n; ++j) {
        double v = J[k][r * n + j];
        for (int q = 0; q < j; ++q) v = v - L[j * n + q] * tmp[q];
        tmp[j] = v / L[j * n + j];
        w = tmp[j] * tmp[j] + w;
      }
  }
  return w * (1.0 / dim);
}

/* The one-row loop, in dual numbers, with the constant factor Lc on the trees cmask marks. */
static grit_dual ref_delassus_dual(const grit_model *m, const grit_dual *Achol, const double *Lc, const char *cmask,
                                   int dim, int ntree, const int tree[2], const grit_dual *const J[2],
                                   grit_dual *tmp) {
  grit_dual w = grit_dual_const(0.0);
  for (int k = 0; k < ntree; ++k) {
    const int t = tree[k], n = m->tree_dofnum[t];
    const grit_dual *L = Achol + m->tree_madr[t];
    const double *C = cmask && cmask[t] ? Lc + m->tree_madr[t] : NULL;
    for (int r = 0; r < dim; ++r)
      for (int j = 0; j < n; ++j) {
        grit_dual v = J[k][r * n + j];
        if (C) {
          for (int q = 0; q < j; ++q) v = grit_dual_sub(v, grit_dual_scale(tmp[q], C[j * n + q]));
          tmp[j] = grit_dual_divc(v, C[j * n + j]);
        } else {
          for (int q = 0; q < j; ++q) v = grit_dual_sub(v, grit_dual_mul(L[j * n + q], tmp[q]));
          tmp[j] = grit_dual_div(v, L[j * n + j]);
        }
        w = grit_dual_fma(tmp[j], tmp[j], w);
      }
  }
  return grit_dual_scale(w, 1.0 / dim);
}

/* A random lower-triangular factor with a positive diagonal in every tree block. */
static void random_factor(tu_rng *r, const grit_model *m, double *L) {
  memset(L, 0, sizeof(double) * (size_t)m->nM);
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    double *Lt = L + m->tree_madr[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) Lt[i * n + j] = j == i ? tu_uniform(r, 0.5, 2.0) : tu_uniform(r, -1.0, 1.0);
  }
}

/* Rows of J for tree t with columns before j0 zero (partials included). */
static void random_rows(tu_rng *r, int n, int dim, int j0, double *J) {
  for (int q = 0; q < dim; ++q)
    for (int j = 0; j < n; ++j) J[q * n + j] = j < j0 ? 0.0 : tu_uniform(r, -1.0, 1.0);
}

static grit_model *big_tree(tu_rng *r) {
  tu_tree_opts o = tu_default_tree_opts();
  return tu_random_tree(r, 14, TU_HINGE | TU_SLIDE | TU_BALL | TU_FREE | TU_MULTI, &o);
}

Test(constraints, delassus_matches_the_one_row_loop_to_the_bit) {
  tu_rng r = {0x5ce7e5u};
  for (int trial = 0; trial < 40; ++trial) {
    grit_model *m = big_tree(&r);
    double *L = calloc((size_t)m->nM + 1, sizeof(double)), *tmp = calloc((size_t)m->nv + 1, sizeof(double));
    double *Jb[2] = {calloc(3 * (size_t)m->nv + 1, sizeof(double)), calloc(3 * (size_t)m->nv + 1, sizeof(double))};
    random_factor(&r, m, L);
    for (int dim = 1; dim <= 3; ++dim) {
      const int ntree = m->ntree > 1 && tu_uniform(&r, 0, 1) < 0.5 ? 2 : 1;
      int tree[2] = {tu_int(&r, m->ntree), 0};
      tree[1] = ntree == 2 ? (tree[0] + 1 + tu_int(&r, m->ntree - 1)) % m->ntree : 0;
      for (int k = 0; k < ntree; ++k) {
        const int n = m->tree_dofnum[tree[k]];
        random_rows(&r, n, dim, tu_uniform(&r, 0, 1) < 0.5 ? 0 : tu_int(&r, n + 1), Jb[k]);
      }
      const double *J[2] = {Jb[0], Jb[1]};
      const double want = ref_delassus(m, L, dim, ntree, tree, J, tmp);
      const double got = grit_delassus(m, L, dim, ntree, tree, J, tmp);
      cr_assert(memcmp(&want, &got, sizeof want) == 0, "trial %d dim %d: %a != %a", trial, dim, got, want);
    }
    free(L), free(tmp), free(Jb[0]), free(Jb[1]);
    grit_model_free(m);
  }
}

Test(constraints, delassus_dual_matches_the_one_row_loop_to_the_bit) {
  tu_rng r = {0xd0a15u};
  for (int trial = 0; trial < 20; ++trial) {
    grit_model *m = big_tree(&r);
    const int nM = m->nM, nv = m->nv;
    double *Lc = calloc((size_t)nM + 1, sizeof(double));
    grit_dual *L = calloc((size_t)nM + 1, sizeof(grit_dual)), *tmp = calloc((size_t)nv + 1, sizeof(grit_dual));
    grit_dual *Jb[2] = {calloc(3 * (size_t)nv + 1, sizeof(grit_dual)), calloc(3 * (size_t)nv + 1, sizeof(grit_dual))};
    double *Jv = calloc(3 * (size_t)nv + 1, sizeof(double));
    char *cmask = calloc((size_t)m->ntree + 1, 1);
    random_factor(&r, m, Lc);
    for (int i = 0; i < nM; ++i) { /* partials on the nonzero entries only */
      L[i] = grit_dual_const(Lc[i]);
      if (Lc[i] != 0.0)
        for (int p = 0; p < GRIT_DUAL_N; ++p) L[i].d[p] = tu_uniform(&r, -0.1, 0.1);
    }
    for (int t = 0; t < m->ntree; ++t) cmask[t] = tu_uniform(&r, 0, 1) < 0.4;
    for (int dim = 1; dim <= 3; ++dim) {
      const int ntree = m->ntree > 1 && tu_uniform(&r, 0, 1) < 0.5 ? 2 : 1;
      int tree[2] = {tu_int(&r, m->ntree), 0};
      tree[1] = ntree == 2 ? (tree[0] + 1 + tu_int(&r, m->ntree - 1)) % m->ntree : 0;
      for (int k = 0; k < ntree; ++k) {
        const int n = m->tree_dofnum[tree[k]];
        random_rows(&r, n, dim, tu_uniform(&r, 0, 1) < 0.5 ? 0 : tu_int(&r, n + 1), Jv);
        for (int i = 0; i < dim * n; ++i) {
          Jb[k][i] = grit_dual_const(Jv[i]);
          if (Jv[i] != 0.0)
            for (int p = 0; p < GRIT_DUAL_N; ++p) Jb[k][i].d[p] = tu_uniform(&r, -1.0, 1.0);
        }
      }
      const grit_dual *J[2] = {Jb[0], Jb[1]};
      for (int masked = 0; masked < 2; ++masked) {
        const char *mask = masked ? cmask : NULL;
        const grit_dual want = ref_delassus_dual(m, L, Lc, mask, dim, ntree, tree, J, tmp);
        const grit_dual got = grit_delassus_c_dual(m, L, Lc, mask, dim, ntree, tree, J, tmp);
        cr_assert(memcmp(&want, &got, sizeof want) == 0, "trial %d dim %d masked %d: %a != %a", trial, dim, masked,
                  got.v, want.v);
      }
    }
    free(Lc), free(L), free(tmp), free(Jb[0]), free(Jb[1]), free(Jv), free(cmask);
    grit_model_free(m);
  }
}

/* grit_contact_jacobian_add's walk along the body's chain, one column per dof: a free joint's translation
 * i is row i of F, any other dof F^T (cdof x p + its linear part). */
static void ref_contact_jacobian(const grit_model *m, const grit_kin *k, int body, const double p[3], int t,
                                 const double F[9], double sign, double *out) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
      const int i = dof - m->jnt_dofadr[jn];
      for (int r = 0; r < 3; ++r) out[r * n + j] = out[r * n + j] + F[3 * i + r] * sign;
      continue;
    }
    double lin[3];
    grit_sv_point_velocity(lin, k->cdof + 6 * dof, p);
    for (int r = 0; r < 3; ++r) {
      const double s = F[r] * lin[0] + (F[3 + r] * lin[1] + F[6 + r] * lin[2]);
      out[r * n + j] = out[r * n + j] + s * sign;
    }
  }
}

Test(constraints, contact_jacobian_of_free_bodies_matches_the_walk_to_the_bit) {
  tu_rng r = {0xc01u};
  tu_tree_opts o = tu_default_tree_opts();
  int free_bodies = 0, alone = 0; /* (alone: a free body that is its whole tree, whose six columns take the
                                      constant-size path) */
  for (int trial = 0; trial < 12; ++trial) {
    grit_model *m = tu_random_tree(&r, 3 + trial % 6, TU_ALL, &o);
    grit_data *d = tu_data(m);
    double *q = calloc((size_t)m->nq + 1, sizeof *q), *v = calloc((size_t)m->nv + 1, sizeof *v);
    tu_random_state(&r, m, q, v, 2.0);
    grit_inertial in = {m->body_mass, m->body_com, m->body_inertia};
    grit_kin_positions(m, q, &in, &d->kin);
    double *J = calloc((size_t)3 * m->nv + 1, sizeof *J), *Jr = calloc((size_t)3 * m->nv + 1, sizeof *Jr);
    for (int b = 1; b < m->nbody; ++b) {
      const int t = grit_body_tree(m, b);
      if (t < 0) continue; /* welded to the world */
      const int n = m->tree_dofnum[t], last = m->body_lastdof[b];
      free_bodies += last >= 5 && m->jnt_type[m->dof_jnt[last]] == GRIT_JOINT_FREE;
      alone += last >= 5 && m->jnt_type[m->dof_jnt[last]] == GRIT_JOINT_FREE && n == 6;
      double p[3], F[9];
      for (int i = 0; i < 3; ++i) p[i] = tu_uniform(&r, -1.5, 1.5);
      for (int i = 0; i < 9; ++i) F[i] = tu_uniform(&r, -1.0, 1.0);
      for (int side = 0; side < 2; ++side) { /* onto zeros, then onto the other side's columns */
        const double sign = side ? -1.0 : 1.0;
        if (side == 0)
          for (int i = 0; i < 3 * n; ++i) J[i] = Jr[i] = 0.0;
        grit_contact_jacobian_add(m, &d->kin, b, p, t, F, sign, J, NULL);
        ref_contact_jacobian(m, &d->kin, b, p, t, F, sign, Jr);
        cr_assert(memcmp(J, Jr, sizeof(double) * 3 * (size_t)n) == 0, "trial %d body %d side %d", trial, b, side);
      }
    }
    free(q), free(v), free(J), free(Jr);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_log_info("free bodies %d, of which alone in their trees %d", free_bodies, alone);
  cr_assert(free_bodies > alone && alone > 0, "the trees hold free bodies, alone and with children");
}
