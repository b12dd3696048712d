/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_solve.c — the block Cholesky's solve of a few right-hand sides (the Newton step's; four or
 * more go to blockchol_many.c): forward and backward substitution column by column in the elimination
 * order, a part alone in its tree by its tree-ordered or sparse factor. See blockchol.h. */
#include "blockchol.h"
#include "blockchol_internal.h"
#include "treechol.h"

/* The triangular loops of a diagonal block unrolled in full when its size is a constant (6, 7), as
 * blockchol.c's factor does: the same operations in the same order. */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 8")
#else
#define UNROLL
#endif
/* Column p's forward substitution (its tree has n dofs): y := L_pp^-1 y, then the later trees' rows
 * z -= X y. Inlined with constant n for the common tree sizes (grit_blockchol_solve). */
static inline void solve_forward_column(const grit_blockchol *b, int p, int n, int m, double *x) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr, t = b->order[p];
  const double *Lx = b->Lx, *L = Lx + b->doff[p], *inv = b->inv + adr[t];
  double *y = x + adr[t];
  UNROLL for (int j = 0; j < n; ++j) {
    double s = y[j];
    UNROLL for (int k = 0; k < j; ++k) s -= L[j * n + k] * y[k];
    y[j] = s * inv[j];
  }
  for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
    const int ti = b->order[b->rows[e]], mi = m ? m : dim[ti];
    const double *X = Lx + b->roff[e];
    double *z = x + adr[ti];
    for (int r = 0; r < mi; ++r) {
      double s = 0.0;
      for (int k = 0; k < n; ++k) s += X[r * n + k] * y[k];
      z[r] -= s;
    }
  }
}

/* Column p's backward substitution: y -= X^T z over the later trees' rows, then y := L_pp^-T y (a
 * particle's blocks by the AVX2 kernel when avx3: the same bits). */
static inline void solve_backward_column(const grit_blockchol *b, int p, int n, int m, double *x, int avx3) {
  const int *dim = b->m->tree_dofnum, *adr = b->m->tree_dofadr, t = b->order[p];
  const double *Lx = b->Lx, *L = Lx + b->doff[p], *inv = b->inv + adr[t];
  double *y = x + adr[t];
  if (avx3) {
    grit_blockchol_backward3_avx2(b, p, y, x);
  } else {
    for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
      const int ti = b->order[b->rows[e]], mi = m ? m : dim[ti];
      const double *X = Lx + b->roff[e];
      const double *z = x + adr[ti];
      for (int r = 0; r < mi; ++r)
        for (int k = 0; k < n; ++k) y[k] -= X[r * n + k] * z[r];
    }
  }
  UNROLL for (int j = n - 1; j >= 0; --j) {
    double s = y[j];
    UNROLL for (int i = j + 1; i < n; ++i) s -= L[i * n + j] * y[i];
    y[j] = s * inv[j];
  }
}

void grit_blockchol_solve(grit_blockchol *b, double *B, int nrhs, const unsigned char *tree_on) {
  if (nrhs >= 4 && !tree_on) {
    grit_blockchol_solve_many(b, B, nrhs);
    return;
  }
  const int nt = b->nt, nv = b->m->nv, *dim = b->m->tree_dofnum;
  int avx3 = -1; /* particles' backward blocks vectorized (asked of the processor at the first particle) */
  /* a free body's 6, a 7-joint arm's 7 and a particle's 3 as constants (the same sums in the same
   * order): the arm-and-ball's Newton solve was 6 % of its step's instructions with variable sizes */
  for (int c = 0; c < nrhs; ++c) {
    double *x = B + (size_t)c * nv;
    for (int p = 0; p < nt; ++p) { /* L y = b, by columns */
      const int n = dim[b->order[p]], t = b->order[p];
      if (tree_on && !tree_on[t]) continue;
      if (b->chain && b->tree_tc[t]) { /* alone in its part: both substitutions now */
        grit_treechol_solve(b->tc, t, b->Lx + b->doff[p], b->inv + b->m->tree_dofadr[t], x + b->m->tree_dofadr[t]);
        continue;
      }
      if (b->tree_sp[t]) { /* a big tree's sparse factor (alone in its part): both substitutions now */
        grit_bigsparse_solve(b->sp[t], x + b->m->tree_dofadr[t]);
        continue;
      }
      if (n == 6) solve_forward_column(b, p, 6, 0, x);
      else if (n == 7) solve_forward_column(b, p, 7, 0, x);
      else if (n == 3 && b->col_m[p] == 3) solve_forward_column(b, p, 3, 3, x); /* particles (the same sums) */
      else if (n == 3) solve_forward_column(b, p, 3, 0, x);
      else solve_forward_column(b, p, n, 0, x);
    }
    for (int p = nt - 1; p >= 0; --p) { /* L^T x = y */
      const int n = dim[b->order[p]];
      if ((tree_on && !tree_on[b->order[p]]) || (b->chain && b->tree_tc[b->order[p]]) || b->tree_sp[b->order[p]])
        continue;
      if (n == 6) solve_backward_column(b, p, 6, 0, x, 0);
      else if (n == 7) solve_backward_column(b, p, 7, 0, x, 0);
      else if (n == 3 && b->col_m[p] == 3) {
        if (avx3 < 0) avx3 = !b->no_col3 && grit_blockchol_have_avx2();
        solve_backward_column(b, p, 3, 3, x, avx3);
      }
      else if (n == 3) solve_backward_column(b, p, 3, 0, x, 0);
      else solve_backward_column(b, p, n, 0, x, 0);
    }
  }
}
