/* SPDX-License-Identifier: Apache-2.0 */
/* matmul.h — the one small dense product of row-major matrices (internal; compiled into libgrit for the
 * system identification and, hidden, into libgrit_ilqr, as the message formatter is). */
#ifndef GRIT_MATMUL_H
#define GRIT_MATMUL_H

/* C (r x c) = A (r x k) B (k x c), row-major; C may not alias A or B. Zero entries of A are skipped, and
 * each entry of C sums its products in the order of k, so results are the same on every call. */
void grit_matmul(const double *A, const double *B, double *C, int r, int k, int c);

#endif
