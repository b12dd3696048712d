/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_sparse_rows.h — the many-column substitutions of a big tree's sparse factor (blockchol_sparse.c)
 * with each row of the result held in AVX2 registers across its products (blockchol_sparse_rows.c). */
#ifndef GRIT_BLOCKCHOL_SPARSE_ROWS_H
#define GRIT_BLOCKCHOL_SPARSE_ROWS_H

/* The factor L (H(P, P) = L L^T) as the kernels read it, by position j (dof perm[j]): column j's entries
 * e in Lp[j] .. Lp[j+1]-1 (row dofs Lo[e], values Lx[e]); row j's entries of earlier columns q in
 * rp[j] .. rp[j+1]-1, columns ascending (their dofs ro[q], values Lx[re[q]]); the reciprocal pivots inv. */
typedef struct {
  int n;
  const int *perm, *Lp, *Lo, *rp, *ro, *re;
  const double *Lx, *inv;
  unsigned *nzv; /* (n dofs) scratch: the forward substitution's rows' nonzero vectors of four columns */
} grit_sparse_rows;

/* L L^T X = Y over nc columns held as rows (dof i's at Y + i stride), each row's columns in registers:
 * forward by rows (row j less its earlier columns' products in ascending order, then times inv[j]),
 * backward by columns (row j less its column's products in order, then times inv[j]). For each entry
 * the operations of the column-by-column loops of blockchol_sparse.c, in their order (a product, then
 * its subtraction; no fused multiply-add), except that the forward substitution skips the products of
 * rows zero over a pass's columns: the same values, only a zero's sign can differ (where the right-hand
 * sides hold a -0; see solve_avx2). nc <= 64. Where the processor has AVX-512, the same operations eight
 * columns a vector: the same bits (solve_avx512). Returns 0, having done nothing, without AVX2. */
int grit_sparse_rows_solve(const grit_sparse_rows *f, double *Y, int stride, int nc);

/* grit_sparse_rows_solve with AVX-512 only if avx512 is nonzero (the tests compare the two). */
int grit_sparse_rows_solve_isa(const grit_sparse_rows *f, double *Y, int stride, int nc, int avx512);

/* The Woodbury correction's long loops over nc columns held as rows (blockchol_sparse.c, correct_rows),
 * each result row in registers, the same operations in the same order as its loops: dot, t := sum_i v[i]
 * Y[i stride] over the rows with v[i] != 0 (i = 0 .. n-1 ascending, from +0); sub, each row
 * Y[i stride] -= W[r n + i] t[r tstride] for r = 0 .. k-1 in order. Return 0, having done nothing,
 * without AVX2. */
int grit_sparse_rows_lowrank_dot(const double *v, int n, const double *Y, int stride, int nc, double *t);
int grit_sparse_rows_lowrank_sub(const double *W, int k, int n, const double *t, int tstride, double *Y, int stride,
                                 int nc);

#endif
