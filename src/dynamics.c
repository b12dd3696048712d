/* dynamics.c — instantiates the scalar-generic dynamics (dynamics_generic.h) for double and dual
 * numbers, and the double-only dense Cholesky of the tree blocks used for the free-motion velocity. */
#include "dynamics.h"

#include <math.h>

#include "grit/detail/scalar_double.h"
#include "dynamics_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "dynamics_generic.h"
#include "grit/detail/scalar_undef.h"

int grit_block_cholesky(const grit_model *m, double *A) {
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    double *L = A + m->tree_madr[t];
    for (int j = 0; j < n; ++j) {
      double d = L[j * n + j];
      for (int k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
      if (!(d > 0.0) || !isfinite(d)) return t;
      d = sqrt(d);
      L[j * n + j] = d;
      for (int i = j + 1; i < n; ++i) {
        double s = L[i * n + j];
        for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
        L[i * n + j] = s / d;
      }
    }
  }
  return -1;
}

void grit_block_cholesky_solve(const grit_model *m, const double *L, double *x) {
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const double *Lt = L + m->tree_madr[t];
    double *xt = x + adr;
    for (int i = 0; i < n; ++i) { /* L y = b */
      double s = xt[i];
      for (int k = 0; k < i; ++k) s -= Lt[i * n + k] * xt[k];
      xt[i] = s / Lt[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* L^T x = y */
      double s = xt[i];
      for (int k = i + 1; k < n; ++k) s -= Lt[k * n + i] * xt[k];
      xt[i] = s / Lt[i * n + i];
    }
  }
}
