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

/* Many right-hand sides of a small dense system (the derivatives' columns for an arm and a ball, or a
 * free body): substitutions with the right-hand sides transposed into rows, 64 at a time, so that the
 * inner loops run along them, and the diagonal's reciprocals. Measured against LAPACKE_dpotrs (OpenBLAS
 * 0.3.21, one thread): 13 x 13 with 33 right-hand sides 2.0 us vs 2.7 us, 6 x 6 with 12 0.20 vs 0.44;
 * slower from about 32 unknowns on, and for a single right-hand side. Agrees to 4e-16 relative. */
void grit_densechol_solve_small(const double *L, int n, double *B, int nrhs) {
  double inv[GRIT_DENSECHOL_SMALL_MAX_NV], T[GRIT_DENSECHOL_SMALL_MAX_NV * 64];
  for (int j = 0; j < n; ++j) inv[j] = 1.0 / L[j * n + j];
  for (int k0 = 0; k0 < nrhs; k0 += 64) {
    const int nk = nrhs - k0 < 64 ? nrhs - k0 : 64;
    for (int k = 0; k < nk; ++k)
      for (int i = 0; i < n; ++i) T[i * 64 + k] = B[(size_t)(k0 + k) * n + i];
    for (int j = 0; j < n; ++j) { /* L y = b */
      double *tj = T + j * 64;
      for (int k = 0; k < nk; ++k) tj[k] *= inv[j];
      for (int i = j + 1; i < n; ++i) {
        const double l = L[j * n + i];
        double *ti = T + i * 64;
        for (int k = 0; k < nk; ++k) ti[k] -= l * tj[k];
      }
    }
    for (int j = n - 1; j >= 0; --j) { /* L^T x = y */
      double *tj = T + j * 64;
      for (int i = j + 1; i < n; ++i) {
        const double l = L[j * n + i];
        const double *ti = T + i * 64;
        for (int k = 0; k < nk; ++k) tj[k] -= l * ti[k];
      }
      for (int k = 0; k < nk; ++k) tj[k] *= inv[j];
    }
    for (int k = 0; k < nk; ++k)
      for (int i = 0; i < n; ++i) B[(size_t)(k0 + k) * n + i] = T[i * 64 + k];
  }
}
