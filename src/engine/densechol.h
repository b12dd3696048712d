/* SPDX-License-Identifier: Apache-2.0 */
/* densechol.h — the dense Cholesky factorization of the Newton Hessian's dense path (hessian.c), in
 * plain C with a fixed order of operations: its results are bitwise the same whatever BLAS library or
 * thread count the process uses (OpenBLAS's dpotrf on 1 and 2 threads differed by an ulp; issue 26).
 * Column-major, lower triangle; the strict upper triangle is neither read nor written. */
#ifndef GRIT_DENSECHOL_H
#define GRIT_DENSECHOL_H

/* A = L L' in place (A: n x n, leading dimension n). Returns -1, or the first column whose pivot is not
 * positive and finite (A is then partly overwritten). */
int grit_densechol_factor(double *A, int n);

/* Solves L L' X = B in place for nrhs right-hand sides (B: n x nrhs, column-major, leading dimension n). */
void grit_densechol_solve(const double *L, int n, double *B, int nrhs);

/* grit_densechol_solve for 2 or more right-hand sides of a system of up to GRIT_DENSECHOL_SMALL_MAX_NV
 * unknowns (transposed into rows, 64 at a time; moved here from hessian.c, the same code). */
#define GRIT_DENSECHOL_SMALL_MAX_NV 16
void grit_densechol_solve_small(const double *L, int n, double *B, int nrhs);

#endif
