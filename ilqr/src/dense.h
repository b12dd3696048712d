/* SPDX-License-Identifier: Apache-2.0 */
/* dense.h — the few small dense linear-algebra kernels the iLQR package needs (row-major, no
 * allocation). The matrices of a backward pass are small (a state tangent of tens, a handful of
 * controls), so plain loops are as fast as a BLAS call here and keep the package free of it. */
#ifndef GRIT_ILQR_DENSE_H
#define GRIT_ILQR_DENSE_H

/* C = A' B with A (k x m), B (k x n), C (m x n); C may not alias A or B. */
void grit_ilqr_mat_tmul(int k, int m, int n, const double *A, const double *B, double *C);

/* C = A B with A (m x k), B (k x n). */
void grit_ilqr_mat_mul(int m, int k, int n, const double *A, const double *B, double *C);

/* y = A' x with A (k x m), x (k): y (m). */
void grit_ilqr_mat_tvec(int k, int m, const double *A, const double *x, double *y);

/* y = A x with A (m x n). */
void grit_ilqr_mat_vec(int m, int n, const double *A, const double *x, double *y);

/* In-place Cholesky factorization A = L L' of the symmetric n x n matrix A (its lower triangle is
 * read; L overwrites it, the strict upper triangle is left as it was). Returns 0, or 1 if A is not
 * numerically positive definite. */
int grit_ilqr_chol(int n, double *A);

/* Solves L L' x = b in place (b has nrhs columns stored row-major as an n x nrhs matrix). */
void grit_ilqr_chol_solve(int n, const double *L, double *b, int nrhs);

/* A = (A + A') / 2 for an n x n matrix. */
void grit_ilqr_symmetrize(int n, double *A);

#endif
