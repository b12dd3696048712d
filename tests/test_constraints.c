/* SPDX-License-Identifier: Apache-2.0 */
/* test_constraints.c — the constraint glue (constraints.c): the Delassus estimate w = |L^-1 J^T|^2 / dim
 * of grit_delassus_c, which does its forward substitutions three rows at a time and skips the columns
 * before J's first nonzero one, gives the bits of the plain one-row loop (written out here), in double
 * and in dual numbers, with the factor variable and constant (cmask), on random trees with J's leading
 * columns zero (a joint limit's or a body's chain) and not. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "grit/dual.h"
#include "grit/grit.h"
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
