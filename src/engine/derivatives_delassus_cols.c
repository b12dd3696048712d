/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_delassus_cols.c — derivatives_delassus.c's lanes' rows by columns (stop 28): their gradients g
 * stored by columns of w->gt, each pass's - g . dq of them all at once (w->dwt), and a row of at most two
 * entries on a tree of more than 64 dofs solved as a combination of columns of A^-1 solved once per call. */
#include <string.h>

#include "arena.h"
#include "derivatives_delassus_internal.h"
#include "treechol.h"

enum { LANES = GRIT_QUADGRAD_LANES, MAXN = 256 };

/* (the AVX2 compilations of a few loops below, chosen at run time: the same operations, nothing fused) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define QB_AVX2 1
#else
#define QB_AVX2 0
#endif
#if defined(__GNUC__)
#define QB_INLINE inline __attribute__((always_inline))
#define QB_NOINLINE __attribute__((noinline))
#else
#define QB_INLINE inline
#define QB_NOINLINE
#endif

void grit_deriv_delassus_layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c) {
  const size_t cap = (size_t)(w->cap_edges / 2 + 1);
  w->gt_ld = (int)cap + GRIT_QUADGRAD_LANES; /* (a group's four lanes stored whole from its first slot) */
  GRIT_CARVE(c, w->gt, (size_t)w->maxn * (size_t)w->gt_ld);
  GRIT_CARVE(c, w->dwt, (size_t)GRIT_DUAL_N * (size_t)w->gt_ld);
  GRIT_CARVE(c, w->gt_slot, cap);
  GRIT_CARVE(c, w->gt_at, cap);
  GRIT_CARVE(c, w->acol, m->nM);
  GRIT_CARVE(c, w->acol_at, m->nv);
}

/* - g . dq of every slot's row (the lanes' rows of the call's one tree t) at once in a pass:
 * dwt[s][l] = 0 - gv[l] g_s[gi[l]], kept_row_lanes' one term from acc = +0 in its operations (a lane
 * without a seed: +0, as gv +0 times g gives), so the same bits; a row then copies its eight numbers
 * instead of forming them (the softbox: 651 rows in each of 28 passes). Stored slot by slot, a row's eight
 * lanes side by side (two vectors to read; lane by lane they were eight loads a row ld apart, ~48
 * instructions of each of the softbox's 64000 reads a call). Only where kept_row_lanes' lean path would run
 * (its switches; each lane one dof). The rows solved after it in the pass (the call's first pass solves them
 * as it goes) are past dwt_n: their own sums. g[l]: lane l's column of gt, NULL without a seed. */
static QB_NOINLINE void batch_slots_base(double *o, const double *const *g, const double *gv, int ns) {
  for (int s = 0; s < ns; ++s)
    for (int l = 0; l < GRIT_DUAL_N; ++l) o[(size_t)s * GRIT_DUAL_N + l] = g[l] ? 0.0 - gv[l] * g[l][s] : 0.0;
}
#if QB_AVX2
#include <immintrin.h>
/* The same four slots at a time: each lane's four values as one vector (the same product and difference),
 * four lanes' vectors transposed into four slots' (4 x 4, twice). */
static QB_NOINLINE __attribute__((target("avx2"))) void batch_slots_avx2(double *o, const double *const *g,
                                                                       const double *gv, int ns) {
  int s = 0;
  for (; s + 4 <= ns; s += 4) {
    for (int h = 0; h < GRIT_DUAL_N; h += 4) {
      __m256d v[4];
      for (int l = 0; l < 4; ++l)
        v[l] = g[h + l] ? _mm256_sub_pd(_mm256_setzero_pd(),
                                        _mm256_mul_pd(_mm256_set1_pd(gv[h + l]), _mm256_loadu_pd(g[h + l] + s)))
                        : _mm256_setzero_pd();
      const __m256d a = _mm256_unpacklo_pd(v[0], v[1]), c = _mm256_unpackhi_pd(v[0], v[1]);
      const __m256d e = _mm256_unpacklo_pd(v[2], v[3]), f = _mm256_unpackhi_pd(v[2], v[3]);
      double *os = o + (size_t)s * GRIT_DUAL_N + h;
      _mm256_storeu_pd(os, _mm256_permute2f128_pd(a, e, 0x20));
      _mm256_storeu_pd(os + GRIT_DUAL_N, _mm256_permute2f128_pd(c, f, 0x20));
      _mm256_storeu_pd(os + 2 * GRIT_DUAL_N, _mm256_permute2f128_pd(a, e, 0x31));
      _mm256_storeu_pd(os + 3 * GRIT_DUAL_N, _mm256_permute2f128_pd(c, f, 0x31));
    }
  }
  for (; s < ns; ++s)
    for (int l = 0; l < GRIT_DUAL_N; ++l) o[(size_t)s * GRIT_DUAL_N + l] = g[l] ? 0.0 - gv[l] * g[l][s] : 0.0;
}
#endif
_Static_assert(GRIT_DUAL_N % 4 == 0, "batch_slots_avx2 transposes four lanes at a time");

void grit_deriv_delassus_batch_form(const grit_model *m, grit_deriv_ws *w, int t) {
  w->dwt_eval = w->eval_no, w->dwt_n = 0;
  if (w->no_kept_lanes || w->no_cx_lean || w->no_seed_pairs || w->gt_call != w->call_no || t != w->gt_tree) return;
  if (w->dqp_at[t] != w->eval_no) grit_deriv_delassus_seed_pairs(m, w, t);
  if (!w->dqg_ok[t]) return;
  const int *gi = w->dqg + (size_t)GRIT_DUAL_N * (size_t)t, ns = w->gt_n;
  const double *gv = w->dqgv + (size_t)GRIT_DUAL_N * (size_t)t;
  const size_t ld = (size_t)w->gt_ld;
  const double *g[GRIT_DUAL_N];
  for (int l = 0; l < GRIT_DUAL_N; ++l) g[l] = gi[l] < 0 ? NULL : w->gt + (size_t)gi[l] * ld;
#if QB_AVX2
  if (__builtin_cpu_supports("avx2")) {
    batch_slots_avx2(w->dwt, g, gv, ns);
    w->dwt_n = ns;
    return;
  }
#endif
  batch_slots_base(w->dwt, g, gv, ns);
  w->dwt_n = ns;
}

#if GRIT_QUADGRAD_HAVE_LANES
typedef grit_lanes V;

/* The lanes' gradients g[j][l] of rows list[l] stored by columns: the group takes the call's next nl slots
 * of w->gt, one vector store per dof (the lanes past nl are written over by the next group), instead of
 * rows_of_lanes' n nl scattered stores; the rows read them there (grit_deriv_delassus_row_g), and a pass's batch (grit_deriv_delassus_kept_batch)
 * reads all slots' g at one dof as one contiguous run. Returns 0 (nothing stored: w->zg's rows as before)
 * with ws->no_kept_batch. */
int grit_deriv_delassus_gt_columns(grit_deriv_ws *w, int t, int n, const V *gl, const int *list, int nl) {
  if (w->no_kept_batch) return 0;
  if (w->gt_call != w->call_no) w->gt_call = w->call_no, w->gt_n = 0, w->gt_tree = t;
  const int s0 = w->gt_n, ld = w->gt_ld;
  if (s0 + LANES > ld) return 0; /* (never: a row takes one slot a call) */
  if (w->gt_tree != t) w->gt_tree = -1; /* a second tree: no batch (its lanes are one tree's seeds) */
  double *const gt = w->gt + (size_t)s0;
  for (int j = 0; j < n; ++j) memcpy(gt + (size_t)j * (size_t)ld, &gl[j], sizeof(V)); /* (a copy: no 32-byte type here) */
  for (int l = 0; l < nl; ++l) w->gt_slot[list[l]] = s0 + l, w->gt_at[list[l]] = w->call_no;
  w->gt_n = s0 + nl;
  return 1;
}

/* The entries of a row (at most NZ, ascending; -1: more), eight compared at a time, and a row's z from two
 * columns, (+0 + a0 c0) + a1 c1 element by element: compiled also for AVX2 (the same operations, nothing
 * fused), chosen at run time. */
enum { NZ = 2 };
static QB_INLINE int row_entries_in(const double *J, int n, int *nz) {
  int k = 0, j = 0;
  typedef double V4 __attribute__((vector_size(32), aligned(sizeof(double)), may_alias));
  typedef long long M4 __attribute__((vector_size(32)));
  for (; j + 8 <= n; j += 8) {
    const M4 on = (*(const V4 *)(J + j) != 0.0) | (*(const V4 *)(J + j + 4) != 0.0);
    if (!((on[0] | on[1]) | (on[2] | on[3]))) continue;
    for (int i = j; i < j + 8; ++i)
      if (J[i] != 0.0) {
        if (k == NZ) return -1;
        nz[k++] = i;
      }
  }
  for (; j < n; ++j)
    if (J[j] != 0.0) {
      if (k == NZ) return -1;
      nz[k++] = j;
    }
  return k;
}
static QB_INLINE void combine_in(double *z, int n, int nnz, double a0, const double *c0, double a1, const double *c1) {
  if (nnz == 2)
    for (int i = 0; i < n; ++i) z[i] = (0.0 + a0 * c0[i]) + a1 * c1[i];
  else if (nnz == 1)
    for (int i = 0; i < n; ++i) z[i] = 0.0 + a0 * c0[i];
  else
    for (int i = 0; i < n; ++i) z[i] = 0.0;
}
static QB_NOINLINE int row_entries_base(const double *J, int n, int *nz) { return row_entries_in(J, n, nz); }
static QB_NOINLINE void combine_base(double *z, int n, int nnz, double a0, const double *c0, double a1,
                                     const double *c1) {
  combine_in(z, n, nnz, a0, c0, a1, c1);
}
#if QB_AVX2
static QB_NOINLINE __attribute__((target("avx2"))) int row_entries_avx2(const double *J, int n, int *nz) {
  return row_entries_in(J, n, nz);
}
static QB_NOINLINE __attribute__((target("avx2"))) void combine_avx2(double *z, int n, int nnz, double a0,
                                                                     const double *c0, double a1, const double *c1) {
  combine_in(z, n, nnz, a0, c0, a1, c1);
}
#endif

/* tree_lanes for rows of one or two nonzero entries, some two (the softbox's 433 couplings of two slides, 218 pins)
 * where the tree has more than 64 dofs: z_l = sum_j J_lj c_j over the row's entries (j ascending, from +0)
 * with c_j = A^-1 e_j, the tree factor's solve of a unit column, each solved once per call (w->acol,
 * stamped by acol_at) instead of one solve per row: the softbox's 651 rows need 218 columns. w_l = sum_j J_lj
 * z_lj over the same entries (the old sum's other terms are +-0 products, which leave a sum begun at +0 as
 * it is). Not the old path's bits: z = A^-1 (J^T) and sum_j J_j (A^-1 e_j) round differently (~1e-16 of
 * z); ws->no_acols: the old path. Returns 0 (nothing done) for other rows. */
int grit_deriv_delassus_cols_z(const grit_model *m, grit_deriv_ws *w, int t, const double *const *J, int nl,
                               double *const *z, V *y, V *wv) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  if (w->no_acols || n <= 64) return 0;
#if QB_AVX2
  const int avx2 = __builtin_cpu_supports("avx2");
#endif
  int nzj[LANES][NZ], nnz[LANES], two = 0;
  for (int l = 0; l < nl; ++l) {
#if QB_AVX2
    nnz[l] = avx2 ? row_entries_avx2(J[l], n, nzj[l]) : row_entries_base(J[l], n, nzj[l]);
#else
    nnz[l] = row_entries_base(J[l], n, nzj[l]);
#endif
    if (nnz[l] < 1) return 0;
    two += nnz[l] == NZ;
  }
  if (!two) return 0; /* (rows of one entry only, a robot's limits: each row's solve is its column's, no gain) */
  double *C = w->acol + m->tree_madr[t], zb[3 * MAXN];
  unsigned *cat = w->acol_at + adr;
  int need[LANES * NZ], nneed = 0;
  for (int l = 0; l < nl; ++l)
    for (int e = 0; e < nnz[l]; ++e) {
      const int j = nzj[l][e];
      if (cat[j] == w->call_no) continue;
      cat[j] = w->call_no;
      need[nneed++] = j;
    }
  for (int e0 = 0; e0 < nneed; e0 += 3) { /* the new columns, three at a time */
    const int nr = nneed - e0 < 3 ? nneed - e0 : 3;
    memset(zb, 0, sizeof(double) * (size_t)(nr * n));
    for (int r = 0; r < nr; ++r) zb[r * n + need[e0 + r]] = 1.0;
    grit_treechol_solve_from_rows(w->dtc, t, w->dtL + m->tree_madr[t], w->dtinv + adr, zb, n, nr);
    for (int r = 0; r < nr; ++r) memcpy(C + (size_t)need[e0 + r] * (size_t)n, zb + r * n, sizeof(double) * (size_t)n);
  }
  for (int l = 0; l < LANES; ++l) {
    double s = 0.0;
    if (l < nl) {
      const int k = nnz[l];
      const double a0 = k > 0 ? J[l][nzj[l][0]] : 0.0, a1 = k > 1 ? J[l][nzj[l][1]] : 0.0;
      const double *c0 = k > 0 ? C + (size_t)nzj[l][0] * (size_t)n : NULL;
      const double *c1 = k > 1 ? C + (size_t)nzj[l][1] * (size_t)n : NULL;
#if QB_AVX2
      if (avx2)
        combine_avx2(z[l], n, k, a0, c0, a1, c1);
      else
#endif
        combine_base(z[l], n, k, a0, c0, a1, c1);
      for (int e = 0; e < k; ++e) s += J[l][nzj[l][e]] * z[l][nzj[l][e]];
    }
    (*wv)[l] = s;
  }
  double *yd = (double *)(void *)y; /* the lanes as doubles, a row at a time (+0 past nl) */
  for (int l = 0; l < LANES; ++l) {
    const double *zl = l < nl ? z[l] : NULL;
    for (int j = 0; j < n; ++j) yd[j * LANES + l] = zl ? zl[j] : 0.0;
  }
  w->acols_used += (unsigned long)nl;
  return 1;
}
#endif
