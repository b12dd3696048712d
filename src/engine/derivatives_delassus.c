/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_delassus.c — a constraint's Delassus estimate on dual numbers without A's dual factor
 * (position passes of grit_step_derivatives).
 *
 * w = (1/dim) sum_r J_r A^-1 J_r^T over the rows r of the constraint and the trees it touches. Its
 * partials along any seeded direction are
 *     dw = (1/dim) sum_r (2 dJ_r . z_r - z_r^T dA z_r),   z_r = A^-1 J_r^T (values only),
 * the same derivative the dual Cholesky factor and the dual substitutions give (forward mode of the
 * same algorithm), computed from the double factor of A's values: the dual factor of an n-dof tree
 * costs about n^3 / 6 dual operations in every position pass (a 62-dof humanoid: 18 % of A, B) and its
 * dual substitutions 3 n^2 / 2 per contact; here a contact costs 3 n^2 doubles for z and n^2 / 2
 * multiply-adds per lane for the contraction of dA's lower triangle (the half the factor reads) with
 * Z = sum_r z_r z_r^T. */
#include "derivatives_internal.h"
#include "quasistatic.h"

enum { ROWS = 3, MAXN = 64 }; /* rows per group: a contact's three share one contraction */

/* Rows r0 .. r0 + nr - 1 of tree slot k: their |L^-1 J_r^T|^2 into *wv, their dw's lanes into acc. */
static void rows_group(int n, const double *L, const grit_dual *dA, const grit_dual *J, int r0, int nr, double *wv,
                       double acc[GRIT_DUAL_N]) {
  double z[ROWS][MAXN];
  for (int r = 0; r < nr; ++r) {
    const grit_dual *Jr = J + (size_t)(r0 + r) * (size_t)n;
    double *y = z[r];
    for (int j = 0; j < n; ++j) { /* L y = J_r^T */
      double s = Jr[j].v;
      for (int q = 0; q < j; ++q) s -= L[j * n + q] * y[q];
      y[j] = s / L[j * n + j];
      *wv += y[j] * y[j];
    }
    for (int j = n - 1; j >= 0; --j) { /* L^T z = y */
      double s = y[j];
      for (int q = j + 1; q < n; ++q) s -= L[q * n + j] * y[q];
      y[j] = s / L[j * n + j];
    }
    for (int j = 0; j < n; ++j) { /* 2 dJ_r . z_r */
      const double zj = 2.0 * y[j];
      for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] += Jr[j].d[l] * zj;
    }
  }
  if (!dA) return; /* A constant in this pass */
  for (int i = 0; i < n; ++i) /* - <dA, Z> over the lower triangle, the off-diagonal entries twice */
    for (int j = 0; j <= i; ++j) {
      double zz = 0.0;
      for (int r = 0; r < nr; ++r) zz += z[r][i] * z[r][j];
      zz = i == j ? -zz : -2.0 * zz;
      const grit_dual *a = dA + i * n + j;
      for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] += a->d[l] * zz;
    }
}

int grit_deriv_delassus_lin_on(const grit_data *d, const grit_deriv_ws *w) {
  return !w->no_delassus_lin && w->maxn <= MAXN && !grit_quasistatic_last_step(d) && grit_deriv_uses_delassus(d);
}

grit_dual grit_deriv_delassus_lin(const grit_model *m, const grit_deriv_ws *w, const char *dmask, int dim, int ntree,
                                  const int tree[2], const grit_dual *const J[2]) {
  double wv = 0.0, acc[GRIT_DUAL_N];
  for (int l = 0; l < GRIT_DUAL_N; ++l) acc[l] = 0.0;
  for (int k = 0; k < ntree; ++k) {
    const int t = tree[k], n = m->tree_dofnum[t];
    const double *L = w->Ad + m->tree_madr[t];
    const grit_dual *dA = !dmask || dmask[t] ? w->A + m->tree_madr[t] : NULL;
    for (int r0 = 0; r0 < dim; r0 += ROWS)
      rows_group(n, L, dA, J[k], r0, dim - r0 < ROWS ? dim - r0 : ROWS, &wv, acc);
  }
  grit_dual out = grit_dual_const(wv / dim);
  for (int l = 0; l < GRIT_DUAL_N; ++l) out.d[l] = acc[l] / dim;
  return out;
}
