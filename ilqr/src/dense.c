/* SPDX-License-Identifier: Apache-2.0 */
/* dense.c — small dense kernels for the iLQR package (see dense.h). */
#include "dense.h"

#include <math.h>

#include "matmul.h"

void grit_ilqr_mat_tmul(int k, int m, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m * n; ++i) C[i] = 0;
  for (int r = 0; r < k; ++r) {
    const double *a = A + (long)r * m, *b = B + (long)r * n;
    for (int i = 0; i < m; ++i) {
      const double ai = a[i];
      if (ai == 0) continue; /* Jacobians of contact-free knots are mostly zero off the blocks */
      double *c = C + (long)i * n;
      for (int j = 0; j < n; ++j) c[j] += ai * b[j];
    }
  }
}

void grit_ilqr_mat_mul(int m, int k, int n, const double *A, const double *B, double *C) {
  grit_matmul(A, B, C, m, k, n); /* grit's one small product (src/base/matmul.c) */
}

void grit_ilqr_mat_tvec(int k, int m, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; ++i) y[i] = 0;
  for (int r = 0; r < k; ++r) {
    const double xr = x[r];
    if (xr == 0) continue;
    const double *a = A + (long)r * m;
    for (int i = 0; i < m; ++i) y[i] += a[i] * xr;
  }
}

void grit_ilqr_mat_vec(int m, int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += A[(long)i * n + j] * x[j];
    y[i] = s;
  }
}

int grit_ilqr_chol(int n, double *A) {
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int p = 0; p < j; ++p) d -= A[j * n + p] * A[j * n + p];
    /* Not finite or not positive: the matrix is not (numerically) positive definite. */
    if (!(d > 0) || !isfinite(d)) return 1;
    d = sqrt(d);
    A[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int p = 0; p < j; ++p) s -= A[i * n + p] * A[j * n + p];
      A[i * n + j] = s / d;
    }
  }
  return 0;
}

void grit_ilqr_chol_solve(int n, const double *L, double *b, int nrhs) {
  for (int c = 0; c < nrhs; ++c) {
    for (int i = 0; i < n; ++i) { /* L y = b */
      double s = b[i * nrhs + c];
      for (int p = 0; p < i; ++p) s -= L[i * n + p] * b[p * nrhs + c];
      b[i * nrhs + c] = s / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* L' x = y */
      double s = b[i * nrhs + c];
      for (int p = i + 1; p < n; ++p) s -= L[p * n + i] * b[p * nrhs + c];
      b[i * nrhs + c] = s / L[i * n + i];
    }
  }
}

void grit_ilqr_symmetrize(int n, double *A) {
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double s = 0.5 * (A[i * n + j] + A[j * n + i]);
      A[i * n + j] = A[j * n + i] = s;
    }
}
