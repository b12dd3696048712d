/* SPDX-License-Identifier: Apache-2.0 */
/* densechol.c — deterministic dense Cholesky (see densechol.h). Left-looking by columns: column j is
 * updated by the columns k < j with contiguous axpys (which the compiler vectorizes), then scaled; each
 * entry's sum runs over k in increasing order, so the result depends only on the input. */
#include "densechol.h"

#include <math.h>
#include <stddef.h>

int grit_densechol_factor(double *A, int n) {
  for (int j = 0; j < n; ++j) {
    double *cj = A + (size_t)j * n;
    for (int k = 0; k < j; ++k) {
      const double *ck = A + (size_t)k * n;
      const double l = ck[j];
      if (l == 0.0) continue; /* the Hessian's block sparsity: most of these columns are zero here */
      for (int i = j; i < n; ++i) cj[i] -= l * ck[i];
    }
    const double d = cj[j];
    if (!(d > 0.0) || !isfinite(d)) return j;
    const double s = sqrt(d), inv = 1.0 / s;
    cj[j] = s;
    for (int i = j + 1; i < n; ++i) cj[i] *= inv;
  }
  return -1;
}

void grit_densechol_solve(const double *L, int n, double *B, int nrhs) {
  for (int r = 0; r < nrhs; ++r) {
    double *x = B + (size_t)r * n;
    for (int j = 0; j < n; ++j) { /* L y = b, by columns */
      const double *cj = L + (size_t)j * n;
      const double y = x[j] / cj[j];
      x[j] = y;
      for (int i = j + 1; i < n; ++i) x[i] -= cj[i] * y;
    }
    for (int j = n - 1; j >= 0; --j) { /* L' x = y, by dot products down column j */
      const double *cj = L + (size_t)j * n;
      double s = x[j];
      for (int i = j + 1; i < n; ++i) s -= cj[i] * x[i];
      x[j] = s / cj[j];
    }
  }
}
