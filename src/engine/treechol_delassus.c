/* SPDX-License-Identifier: Apache-2.0 */
/* treechol_delassus.c — a constraint's Delassus diagonal on one tree, J M^-1 J^T row by row through the
 * tree-ordered factor, visiting only the dofs on the paths from J's nonzero columns to the root. See
 * treechol.h. */
#include "treechol.h"

#include <stdint.h>
#include <string.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#endif

#include "treechol_internal.h"

/* Whether the nr rows' (n apart) c doubles from x are all +0 or -0: their bits ORed, the sign bit shifted
 * out (tail_zero_bits: any c; group_zero_bits: eight, with GCC's vector types a few instructions). */
static TC_INLINE int tail_zero_bits(const double *x, int n, int nr, int c) {
  uint64_t o = 0;
  for (int q = 0; q < nr; ++q)
    for (int i = 0; i < c; ++i) {
      uint64_t u;
      memcpy(&u, x + q * n + i, sizeof u);
      o |= u;
    }
  return !(o << 1);
}

#if defined(__GNUC__)
typedef uint64_t tc_u4 __attribute__((vector_size(32), aligned(8)));
static TC_INLINE int group_zero_bits(const double *x, int n, int nr) {
  tc_u4 o = {0, 0, 0, 0};
  for (int q = 0; q < nr; ++q) o |= *(const tc_u4 *)(x + q * n) | *(const tc_u4 *)(x + q * n + 4);
  return !(((o[0] | o[1]) | (o[2] | o[3])) << 1);
}
#else
static TC_INLINE int group_zero_bits(const double *x, int n, int nr) { return tail_zero_bits(x, n, nr, 8); }
#endif
/* Marks in bits the dofs of rows J (nr rows of n, n apart) on the paths from their nonzero entries to the
 * root, copying their values into x. Scans J by groups of eight dofs (the bits of the group's doubles
 * ORed, then the sign bit shifted out: -0 counts as zero). */
static TC_INLINE void support_paths(const grit_treechol *tc, int t, const double *J, const int nr, double *x,
                                    uint64_t *bits) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k0 = 0; k0 < n; k0 += 8) {
    const int k1 = k0 + 8 < n ? k0 + 8 : n;
    if (k1 - k0 == 8 ? group_zero_bits(J + k0, n, nr) : tail_zero_bits(J + k0, n, nr, k1 - k0)) continue;
    for (int k = k0; k < k1; ++k) {
      int nz = 0;
      for (int q = 0; q < nr; ++q) nz |= J[q * n + k] != 0.0;
      /* up to the first dof already marked: its ancestors are */
      for (int j = k; nz && j >= 0 && !(bits[j >> 6] >> (j & 63) & 1u); j = rownnz[j] > 1 ? col[rowadr[j] + rownnz[j] - 2] : -1) {
        bits[j >> 6] |= (uint64_t)1 << (j & 63);
        for (int q = 0; q < nr; ++q) x[q * n + j] = J[q * n + j];
      }
    }
  }
}

/* support_paths over the given columns of J only (global dofs, a superset of its nonzero columns on tree
 * t; others ignored): the same dofs marked and the same values copied, without the scan over all n. */
static TC_INLINE void support_cols(const grit_treechol *tc, int t, const double *J, const int nr, const int *cols,
                                   int ncols, double *x, uint64_t *bits) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int i = 0; i < ncols; ++i) {
    const int k = cols[i] - adr;
    if (k < 0 || k >= n) continue;
    int nz = 0;
    for (int q = 0; q < nr; ++q) nz |= J[q * n + k] != 0.0;
    for (int j = k; nz && j >= 0 && !(bits[j >> 6] >> (j & 63) & 1u); j = rownnz[j] > 1 ? col[rowadr[j] + rownnz[j] - 2] : -1) {
      bits[j >> 6] |= (uint64_t)1 << (j & 63);
      for (int q = 0; q < nr; ++q) x[q * n + j] = J[q * n + j];
    }
  }
}

/* x[e] -= l[e] y, e < r, over contiguous entries: four, then two at a time with GCC's vector types (in an AVX2
 * clone: one instruction a vector), the same product and difference per entry as the loop. */
#if defined(__GNUC__)
typedef double tc_run4 __attribute__((vector_size(32), aligned(8)));
typedef double tc_run2 __attribute__((vector_size(16), aligned(8)));
#endif
static TC_INLINE void sub_run(double *restrict x, const double *restrict l, double y, int r) {
  int e = 0;
#if defined(__GNUC__)
  for (; e + 4 <= r; e += 4) *(tc_run4 *)(x + e) = *(const tc_run4 *)(x + e) - *(const tc_run4 *)(l + e) * y;
  if (e + 2 <= r) *(tc_run2 *)(x + e) = *(const tc_run2 *)(x + e) - *(const tc_run2 *)(l + e) * y, e += 2;
#endif
  if (e < r) x[e] -= l[e] * y;
}

/* grit_treechol_delassus's body, nr a constant where it is inlined; cols NULL: J scanned whole; runs (a
 * constant): the updates of runs of consecutive ancestors by sub_run. */
static TC_INLINE double delassus_in(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                                    const int nr, const int *cols, int ncols, double *x, uint64_t *bits,
                                    const int runs) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  if (cols) support_cols(tc, t, J, nr, cols, ncols, x, bits);
  else support_paths(tc, t, J, nr, x, bits);
  double w = 0.0;
  for (int b = (n - 1) >> 6; b >= 0; --b) { /* L^T y = b over the marked dofs, leaves first */
    uint64_t word = bits[b];
    bits[b] = 0;
    while (word) {
      const int hi = 63 - __builtin_clzll(word), k = 64 * b + hi;
      word &= ~((uint64_t)1 << hi);
      const int r = rownnz[k] - 1, *ck = col + rowadr[k];
      const double *lk = L + rowadr[k];
      const int run = runs && tc->run[adr + k];
      for (int q = 0; q < nr; ++q) {
        const double y = x[q * n + k] * inv[k];
        x[q * n + k] = 0.0;
        w += y * y;
        if (run) sub_run(x + q * n + ck[0], lk, y, r);
        else
          for (int e = 0; e < r; ++e) x[q * n + ck[e]] -= lk[e] * y;
      }
    }
  }
  return w;
}

/* delassus_in for one row with runs, each dof's row read in one load (tc->row) and the paths walked by its
 * parent: the same dofs marked, the same operations in the same order (the softbox's 651 equalities: the
 * three arrays' loads and the parents' double indirection were a third of the sum's instructions). */
static TC_INLINE double delassus1_rows(const grit_treechol *tc, int t, const double *L, const double *inv,
                                       const double *J, const int *cols, int ncols, double *x, uint64_t *bits) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const struct tc_row *row = tc->row + adr;
  const int *col = tc->colind + tc->treeadr[t];
  int top = -1; /* the highest dof of the chain 0 .. nch - 1 on a marked path (those below it are too) */
  if (cols) {
    const int nch = tc->no_chain ? 0 : tc->chain[t];
    for (int i = 0; i < ncols; ++i) {
      const int k = cols[i] - adr;
      if (k < 0 || k >= n || !(J[k] != 0.0)) continue;
      int j = k;
      for (; j >= nch && !(bits[j >> 6] >> (j & 63) & 1u); j = row[j].par) {
        bits[j >> 6] |= (uint64_t)1 << (j & 63);
        x[j] = J[j];
      }
      if (j < nch && j > top) top = j; /* (j marked: its path's chain dof is counted already) */
    }
    for (int j = 0; j <= top; ++j) x[j] = J[j];
  } else {
    support_paths(tc, t, J, 1, x, bits);
  }
  double w = 0.0;
  for (int b = (n - 1) >> 6; b >= 0; --b) { /* L^T y = b over the marked dofs, leaves first */
    uint64_t word = bits[b];
    bits[b] = 0;
    while (word) {
      const int hi = 63 - __builtin_clzll(word), k = 64 * b + hi;
      word &= ~((uint64_t)1 << hi);
      const struct tc_row rk = row[k];
      const double *lk = L + rk.adr;
      const double y = x[k] * inv[k];
      x[k] = 0.0;
      w += y * y;
      if (rk.run) {
        sub_run(x + rk.first, lk, y, rk.r);
      } else {
        const int *ck = col + rk.adr;
        for (int e = 0; e < rk.r; ++e) x[ck[e]] -= lk[e] * y;
      }
    }
  }
  for (int k = top; k >= 0; --k) { /* the chain, last as the marked dofs' descending order has it: k's row
                                    * is the run of dofs 0 .. k - 1 */
    const double y = x[k] * inv[k];
    x[k] = 0.0;
    w += y * y;
    sub_run(x, L + row[k].adr, y, k);
  }
  return w;
}

/* The chain's part of delassus1_rows with its dofs 0 .. top held in xc: the same operations in the same
 * order (a constant top lets the compiler keep xc in registers). */
static TC_INLINE double chain_solve(const struct tc_row *row, const double *L, const double *inv, double *xc, int top,
                                    double w) {
  for (int k = top; k >= 0; --k) {
    const double y = xc[k] * inv[k];
    w += y * y;
    sub_run(xc, L + row[k].adr, y, k);
  }
  return w;
}

/* delassus1_leaves' sums with the chain's dofs 0 .. top in a local array (top a constant where it is inlined:
 * a free root's 5, every size known) */
static TC_INLINE double leaves_solve(const struct tc_row *row, const double *L, const double *inv, const double *J,
                                     const int *cols, int ncols, int adr, const int top) {
  double xc[64];
  for (int j = 0; j <= top; ++j) xc[j] = J[j];
  double s = 0.0;
  for (int i = ncols - 1; i >= 0; --i) {
    const int k = cols[i] - adr;
    if (!(J[k] != 0.0)) continue;
    const double y = J[k] * inv[k];
    s += y * y;
    if (row[k].r == top + 1) sub_run(xc, L + row[k].adr, y, top + 1); /* (its parent the chain's last dof) */
    else sub_run(xc + row[k].first, L + row[k].adr, y, row[k].r);
  }
  return chain_solve(row, L, inv, xc, top, s);
}

/* delassus1_rows for a row whose listed columns (ascending, distinct) each hang straight off the tree's chain:
 * not in it, its parent in it (a composite's particle or slide on a free root; the caller knows it,
 * grit_cx_leaf_lists). Then the marked dofs are those columns where J != 0 (none is another's ancestor), the
 * descending bit scan is the columns in reverse, each one's row is the run 0 .. parent, and x holds nothing
 * else: the chain's dofs are kept in a local array, x and the bits are not touched. The same operations in the
 * same order: the same bits. Returns 0 (nothing done) for a chain of 64 dofs or more; 1 and the sum in *w. */
static TC_INLINE int delassus1_leaves(const grit_treechol *tc, int t, const double *L, const double *inv,
                                      const double *J, const int *cols, int ncols, double *w) {
  const int adr = tc->m->tree_dofadr[t];
  const struct tc_row *row = tc->row + adr;
  int top = -1;
  for (int i = 0; i < ncols; ++i) {
    const int k = cols[i] - adr;
    if (J[k] != 0.0 && row[k].par > top) top = row[k].par;
  }
  if (top >= 64) return 0;
  *w = top == 5 ? leaves_solve(row, L, inv, J, cols, ncols, adr, 5) : leaves_solve(row, L, inv, J, cols, ncols, adr, top);
  return 1;
}

#if TREECHOL_AVX2
static TC_NOINLINE __attribute__((target("avx2"))) int delassus1_leaves_avx2(const grit_treechol *tc, int t,
                                                                              const double *L, const double *inv,
                                                                              const double *J, const int *cols,
                                                                              int ncols, double *w) {
  return delassus1_leaves(tc, t, L, inv, J, cols, ncols, w);
}

static TC_NOINLINE __attribute__((target("avx2"))) double
delassus1_rows_avx2(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                    const int *cols, int ncols, double *x, uint64_t *bits) {
  return delassus1_rows(tc, t, L, inv, J, cols, ncols, x, bits);
}

/* One row (the softbox's 651 equalities) with the runs' updates in AVX2 registers. */
static TC_NOINLINE __attribute__((target("avx2"))) double
delassus1_avx2(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J, const int *cols,
               int ncols, double *x, uint64_t *bits) {
  return delassus_in(tc, t, L, inv, J, 1, cols, ncols, x, bits, 1);
}
#endif

double grit_treechol_delassus(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                              int nr, double *x, uint64_t *bits) {
  if (nr == 3) return delassus_in(tc, t, L, inv, J, 3, NULL, 0, x, bits, 0);
  if (nr == 2) return delassus_in(tc, t, L, inv, J, 2, NULL, 0, x, bits, 0);
#if TREECHOL_AVX2
  if (!tc->no_runs && __builtin_cpu_supports("avx2"))
    return tc->no_rowinfo ? delassus1_avx2(tc, t, L, inv, J, NULL, 0, x, bits)
                          : delassus1_rows_avx2(tc, t, L, inv, J, NULL, 0, x, bits);
#endif
  return delassus_in(tc, t, L, inv, J, 1, NULL, 0, x, bits, 0);
}

int grit_treechol_delassus_leaves(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                                  const int *cols, int ncols, double *w) {
#if TREECHOL_AVX2
  return tc->avx2 && !tc->no_leaves && delassus1_leaves_avx2(tc, t, L, inv, J, cols, ncols, w);
#else
  (void)tc, (void)t, (void)L, (void)inv, (void)J, (void)cols, (void)ncols, (void)w;
  return 0;
#endif
}

double grit_treechol_delassus_cols(const grit_treechol *tc, int t, const double *L, const double *inv, const double *J,
                                   int nr, const int *cols, int ncols, double *x, uint64_t *bits) {
  if (nr == 3) return delassus_in(tc, t, L, inv, J, 3, cols, ncols, x, bits, 0);
#if TREECHOL_AVX2
  if (nr == 1 && !tc->no_runs && __builtin_cpu_supports("avx2"))
    return tc->no_rowinfo ? delassus1_avx2(tc, t, L, inv, J, cols, ncols, x, bits)
                          : delassus1_rows_avx2(tc, t, L, inv, J, cols, ncols, x, bits);
#endif
  if (nr == 1) return delassus_in(tc, t, L, inv, J, 1, cols, ncols, x, bits, 0);
  return delassus_in(tc, t, L, inv, J, nr, cols, ncols, x, bits, 0);
}
