/* SPDX-License-Identifier: Apache-2.0 */
/* treechol.c — the tree-ordered Cholesky without fill. See treechol.h. */
#include "treechol.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#endif

#include "actuation.h"
#include "actuation_muscle.h"
#include "grit/constraints.h" /* GRIT_TENDON_FIXED */
#include "status_internal.h"
#include "treechol_internal.h"

/* The trees grit_treechol_mulv takes: more than 64 dofs (no robot's), A keeping M's pattern, the pattern
 * under a quarter of the block, and every dof's subtree consecutive dofs (send). */
static void mulv_trees(grit_treechol *tc) {
  const grit_model *m = tc->m;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    int ok = n > 64 && 4.0 * (2.0 * tc->treesize[t] - n) < (double)n * n && grit_treechol_a_keeps_pattern(m, t);
    for (int k = 0; k < n; ++k) tc->send[adr + k] = k + 1;
    for (int k = n - 1; k >= 0; --k) {
      const int p = m->dof_parent[adr + k];
      if (p >= adr && tc->send[adr + k] > tc->send[p]) tc->send[p] = tc->send[adr + k];
    }
    for (int k = 0; k < n && ok; ++k) /* each dof inside its parent's range: the ranges nest, consecutive */
      for (int j = k + 1; j < tc->send[adr + k] && ok; ++j) {
        int a = m->dof_parent[adr + j];
        while (a > adr + k) a = m->dof_parent[a];
        ok = a == adr + k;
      }
    tc->mulv[t] = (unsigned char)ok;
  }
}

grit_status grit_treechol_create(const grit_model *m, grit_treechol **out, char *message) {
  *out = NULL;
  grit_treechol *tc = calloc(1, sizeof *tc);
  if (!tc) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the tree factor");
  tc->m = m;
  size_t total = 0;
  for (int i = 0; i < m->nv; ++i)
    for (int j = i; j >= 0; j = m->dof_parent[j]) ++total;
  tc->rowadr = calloc((size_t)m->nv + 1, sizeof(int));
  tc->rownnz = calloc((size_t)m->nv + 1, sizeof(int));
  tc->colind = calloc(total + 1, sizeof(int));
  tc->treeadr = calloc((size_t)m->ntree + 1, sizeof(int));
  tc->treesize = calloc((size_t)m->ntree + 1, sizeof(int));
  tc->flops = calloc((size_t)m->ntree + 1, sizeof(double));
  tc->sib = calloc((size_t)m->nv + 1, sizeof(int));
  tc->sib4 = calloc((size_t)m->ntree + 1, 1);
  tc->run = calloc((size_t)m->nv + 1, 1);
  tc->send = calloc((size_t)m->nv + 1, sizeof(int));
  tc->row = calloc((size_t)m->nv + 1, sizeof *tc->row);
  tc->mulv = calloc((size_t)m->ntree + 1, 1);
  tc->chain = calloc((size_t)m->ntree + 1, sizeof(int));
  if (!tc->chain || !tc->row || !tc->send || !tc->mulv || !tc->run || !tc->rowadr || !tc->rownnz || !tc->colind || !tc->treeadr || !tc->treesize || !tc->flops ||
      !tc->sib || !tc->sib4) {
    grit_treechol_free(tc);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the tree factor");
  }
  int pos = 0;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    double fl = 0.0;
    tc->treeadr[t] = pos;
    for (int k = 0; k < n; ++k) {
      int r = 0;
      for (int j = adr + k; j >= 0; j = m->dof_parent[j]) ++r;
      tc->rowadr[adr + k] = pos - tc->treeadr[t];
      tc->rownnz[adr + k] = r;
      int e = r;
      for (int j = adr + k; j >= 0; j = m->dof_parent[j]) tc->colind[pos + --e] = j - adr; /* ascending */
      tc->run[adr + k] = r < 2 || tc->colind[pos + r - 2] - tc->colind[pos] == r - 2;
      tc->row[adr + k] = (struct tc_row){tc->rowadr[adr + k], r - 1, tc->colind[pos], tc->run[adr + k],
                                         r > 1 ? tc->colind[pos + r - 2] : -1};
      pos += r;
      fl += 2.0 * (double)(r - 1) * (double)r / 2.0 + (double)r; /* the updates, the scaling */
    }
    tc->treesize[t] = pos - tc->treeadr[t];
    tc->flops[t] = fl;
    for (int k = n - 1; k >= 0; --k) /* (a root's parent is -1: one per tree) */
      tc->sib[adr + k] = k + 1 < n && m->dof_parent[adr + k + 1] == m->dof_parent[adr + k] ? tc->sib[adr + k + 1] + 1 : 1;
    for (int k = 0; k < n; ++k) tc->sib4[t] |= tc->sib[adr + k] >= 4;
    while (tc->chain[t] < n && m->dof_parent[adr + tc->chain[t]] == (tc->chain[t] ? adr + tc->chain[t] - 1 : -1))
      tc->chain[t]++; /* (dof k of the chain: its row is dofs 0 .. k - 1, a run from column 0) */
  }
  mulv_trees(tc);
#if TREECHOL_AVX2
  tc->avx2 = __builtin_cpu_supports("avx2");
#endif
  *out = tc;
  return GRIT_OK;
}

void grit_treechol_free(grit_treechol *tc) {
  if (!tc) return;
  free(tc->rowadr), free(tc->rownnz), free(tc->colind), free(tc->treeadr), free(tc->treesize), free(tc->flops);
  free(tc->sib), free(tc->sib4), free(tc->run), free(tc->send), free(tc->mulv), free(tc->row), free(tc->chain);
  free(tc);
}

int grit_treechol_mulv(const grit_treechol *tc, int t, const double *M, const double *x, double *y) {
  const grit_model *m = tc->m;
  if (tc->no_mulv || !tc->mulv[t]) return 0;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const double *Mt = M + m->tree_madr[t], *xt = x + adr;
  double fin = 0.0; /* 0 * x: +-0 for every finite x, NaN for an infinite or NaN one */
  for (int j = 0; j < n; ++j) fin += 0.0 * xt[j];
  if (fin != 0.0) return 0; /* (0 * inf is NaN: the whole sum's NaNs) */
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  const int *send = tc->send + adr;
  for (int k = 0; k < n; ++k) {
    const double *mk = Mt + (size_t)k * (size_t)n;
    const int *ck = col + rowadr[k];
    double s = 0.0;
    for (int e = 0; e < rownnz[k]; ++e) s = mk[ck[e]] * xt[ck[e]] + s; /* the ancestors ascending, then k */
    for (int j = k + 1; j < send[k]; ++j) s = mk[j] * xt[j] + s;      /* the subtree */
    y[adr + k] = s;
  }
  return 1;
}

void grit_treechol_mulv_pattern(grit_treechol *tc, int allow) { tc->no_mulv = !allow; }

int grit_treechol_size(const grit_treechol *tc, int t) { return tc->treesize[t]; }
double grit_treechol_flops(const grit_treechol *tc, int t) { return tc->flops[t]; }

int grit_treechol_is_chain(const grit_model *m, int t, const int *idx, int nc) {
  if (nc <= 1) return 1;
  const int adr = m->tree_dofadr[t];
  int p = adr + idx[nc - 1];
  for (int k = nc - 2; k >= 0; --k) {
    const int want = adr + idx[k];
    while (p > want) p = m->dof_parent[p]; /* ancestors have smaller indices; -1 ends the path */
    if (p != want) return 0;
  }
  return 1;
}

/* Whether fixed tendon k's joints' dofs lie on one path to the root (its J^T J keeps the pattern). */
static int fixed_tendon_chain(const grit_model *m, int k) {
  int idx[64], nc = 0, t = -1;
  for (int w = m->ten_adr[k]; w < m->ten_adr[k] + m->ten_num[k]; ++w) {
    const int d = m->jnt_dofadr[m->wrap_obj[w]];
    if (nc == 64 || (t >= 0 && m->dof_tree[d] != t)) return 0;
    t = m->dof_tree[d];
    int i = nc++; /* insertion, ascending */
    while (i > 0 && idx[i - 1] > d - m->tree_dofadr[t]) idx[i] = idx[i - 1], --i;
    idx[i] = d - m->tree_dofadr[t];
  }
  return t < 0 || grit_treechol_is_chain(m, t, idx, nc);
}

int grit_treechol_a_keeps_pattern(const grit_model *m, int t) {
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a)) continue; /* a joint's: diagonal (grit_actuator_operator); adhesion: none */
    if (m->dof_tree[m->act_dof[a]] != t) continue;
    double kq, kv;
    grit_actuator_slopes(m, a, &kq, &kv);
    if (kq == 0.0 && kv == 0.0) continue; /* never implicit: adds nothing to A (grit_actuator_tendon) */
    const int k = m->act_tendon[a];
    if (m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[k] == GRIT_TENDON_FIXED && fixed_tendon_chain(m, k))
      continue;
    return 0; /* a rank-one term over the moment's dofs, which may join two branches */
  }
  return 1;
}

void grit_treechol_copy_sym(const grit_model *m, int t, const double *S, double *D) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  for (int k = 0; k < n; ++k) {
    const size_t kn = (size_t)k * (size_t)n;
    D[kn + k] = S[kn + k];
    for (int j = m->dof_parent[adr + k]; j >= 0; j = m->dof_parent[j]) {
      const size_t jl = (size_t)(j - adr);
      D[kn + jl] = S[kn + jl];
      D[jl * (size_t)n + k] = S[jl * (size_t)n + k];
    }
  }
}

void grit_treechol_copy_pattern(const grit_treechol *tc, int t, const double *S, double *D) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k = 0; k < n; ++k) { /* the compact rows' columns: contiguous, no walk over dof_parent */
    const int *ck = col + rowadr[k];
    const double *sk = S + (size_t)k * n;
    double *dk = D + (size_t)k * n;
    for (int e = 0; e < rownnz[k]; ++e) dk[ck[e]] = sk[ck[e]];
  }
}


static TC_INLINE int factor_in(const grit_treechol *tc, int t, const double *H, double *L, double *inv, double *lo,
                               double *hi) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k = 0; k < n; ++k) { /* gather the lower pattern: the only copy of H's block */
    const int *ck = col + rowadr[k];
    double *lk = L + rowadr[k];
    const double *hk = H + (size_t)k * n;
    for (int e = 0; e < rownnz[k]; ++e) lk[e] = hk[ck[e]];
  }
  for (int k = n - 1; k >= 0; --k) { /* leaves first: row k's outer product into its ancestors' rows */
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    double *lk = L + rowadr[k];
    const double d = lk[r];
    if (!(d > 0.0) || !isfinite(d)) return k; /* not positive, NaN or infinite */
    const double s = sqrt(d), iv = 1.0 / s;
    lk[r] = s;
    inv[k] = iv;
    *lo = s < *lo ? s : *lo;
    *hi = s > *hi ? s : *hi;
    for (int e = 0; e < r; ++e) lk[e] *= iv;
    for (int e = r - 1; e >= 0; --e) { /* ancestor i = ck[e]: its row is ck[0..e] (e ancestors, then i) */
      double *li = L + rowadr[ck[e]];
      const double a = lk[e];
      for (int j = 0; j <= e; ++j) li[j] -= a * lk[j];
    }
  }
  return -1;
}

static TC_NOINLINE int factor_base(const grit_treechol *tc, int t, const double *H, double *L, double *inv,
                                   double *lo, double *hi) {
  return factor_in(tc, t, H, L, inv, lo, hi);
}
#if TREECHOL_AVX2
static TC_NOINLINE __attribute__((target("avx2"))) int factor_avx2(const grit_treechol *tc, int t, const double *H,
                                                                   double *L, double *inv, double *lo, double *hi) {
  return factor_in(tc, t, H, L, inv, lo, hi);
}
#endif

int grit_treechol_factor(const grit_treechol *tc, int t, const double *H, double *L, double *inv, double *lo,
                         double *hi) {
#if TREECHOL_AVX2
  if (__builtin_cpu_supports("avx2")) return factor_avx2(tc, t, H, L, inv, lo, hi);
#endif
  return factor_base(tc, t, H, L, inv, lo, hi);
}

void grit_treechol_solve(const grit_treechol *tc, int t, const double *L, const double *inv, double *x) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k = n - 1; k >= 0; --k) { /* L^T y = b: row k's value known once its descendants are done */
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k], y = x[k] * inv[k];
    x[k] = y;
    for (int e = 0; e < r; ++e) x[ck[e]] -= lk[e] * y;
  }
  for (int k = 0; k < n; ++k) { /* L x = y: ancestors first */
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k];
    double s = x[k];
    for (int e = 0; e < r; ++e) s -= lk[e] * x[ck[e]];
    x[k] = s * inv[k];
  }
}

/* The many-column solve's first sweep (L^T y = b, leaves first) runs over the columns in groups of
 * SOLVE_GROUP, and skips a group whose entries in row k are all zero: they stay zero (0 times the
 * inverse) and subtract nothing from the ancestors' rows (only the signs of zeros can differ). The
 * derivatives' right-hand sides of a control or a velocity are zero off the paths from their dofs to
 * the root, and a pass's columns come dof by dof, so a group's rows are zero in most branches. */
enum { SOLVE_GROUP = 8 };

static TC_INLINE int group_zero(const double *x, int n) {
  int nz = 0;
  for (int q = 0; q < n; ++q) nz |= x[q] != 0.0;
  return !nz;
}

/* x_i -= l_e y over the group's columns for the ancestors i = ck[e], e < r (rows `stride` apart, y
 * row k's group): with GCC's vector types, the group in two registers of four (two of two without
 * AVX2), loaded once for all the ancestors (the same products and differences as the plain loop). */
#if defined(__GNUC__)
typedef double tc_v4 __attribute__((vector_size(32), aligned(8))); /* aligned(8): rows are not 32-byte aligned */
static TC_INLINE void group_update(const double *y, const double *lk, const int *ck, int r, double *X, int stride) {
  const tc_v4 y0 = *(const tc_v4 *)y, y1 = *(const tc_v4 *)(y + 4);
  for (int e = 0; e < r; ++e) {
    const double l = lk[e];
    tc_v4 *xi = (tc_v4 *)(X + (size_t)ck[e] * stride);
    xi[0] = xi[0] - l * y0;
    xi[1] = xi[1] - l * y1;
  }
}

/* The second sweep's row k over 2 SOLVE_GROUP columns: x_k := (x_k - sum_e l_e x_i) * iv, e in order,
 * the row's columns kept in four registers over all its ancestors (stored once, not once per ancestor). */
static TC_INLINE void group_gather(double *xk, const double *lk, const int *ck, int r, const double *X, int stride,
                                   double iv) {
  tc_v4 *x = (tc_v4 *)xk, s0 = x[0], s1 = x[1], s2 = x[2], s3 = x[3];
  for (int e = 0; e < r; ++e) {
    const double l = lk[e];
    const tc_v4 *xi = (const tc_v4 *)(X + (size_t)ck[e] * stride);
    s0 = s0 - l * xi[0];
    s1 = s1 - l * xi[1];
    s2 = s2 - l * xi[2];
    s3 = s3 - l * xi[3];
  }
  x[0] = s0 * iv, x[1] = s1 * iv, x[2] = s2 * iv, x[3] = s3 * iv;
}
#else
static TC_INLINE void group_gather(double *xk, const double *lk, const int *ck, int r, const double *X, int stride,
                                   double iv) {
  for (int e = 0; e < r; ++e) {
    const double l = lk[e], *xi = X + (size_t)ck[e] * stride;
    for (int q = 0; q < 2 * SOLVE_GROUP; ++q) xk[q] -= l * xi[q];
  }
  for (int q = 0; q < 2 * SOLVE_GROUP; ++q) xk[q] *= iv;
}

static TC_INLINE void group_update(const double *y, const double *lk, const int *ck, int r, double *X, int stride) {
  for (int e = 0; e < r; ++e) {
    const double l = lk[e];
    double *xi = X + (size_t)ck[e] * stride;
    for (int q = 0; q < SOLVE_GROUP; ++q) xi[q] -= l * y[q];
  }
}
#endif

static TC_INLINE void solve_rows_in(const grit_treechol *tc, int t, const double *L, const double *inv, double *X,
                                    int stride, int nc) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k = n - 1; k >= 0; --k) {
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k], iv = inv[k];
    double *xk = X + (size_t)k * stride;
    int q0 = 0;
    for (; q0 + SOLVE_GROUP <= nc; q0 += SOLVE_GROUP) { /* constant bounds: unrolled, xk's group in registers */
      if (group_zero(xk + q0, SOLVE_GROUP)) continue;
      for (int q = q0; q < q0 + SOLVE_GROUP; ++q) xk[q] *= iv;
      group_update(xk + q0, lk, ck, r, X + q0, stride);
    }
    if (q0 < nc && !group_zero(xk + q0, nc - q0)) {
      for (int q = q0; q < nc; ++q) xk[q] *= iv;
      for (int e = 0; e < r; ++e) {
        const double l = lk[e];
        double *xi = X + (size_t)ck[e] * stride;
        for (int q = q0; q < nc; ++q) xi[q] -= l * xk[q];
      }
    }
  }
  for (int k = 0; k < n; ++k) {
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k], iv = inv[k];
    double *xk = X + (size_t)k * stride;
    int q0 = 0;
    for (; q0 + 2 * SOLVE_GROUP <= nc; q0 += 2 * SOLVE_GROUP) group_gather(xk + q0, lk, ck, r, X + q0, stride, iv);
    for (int e = 0; e < r; ++e) {
      const double l = lk[e], *xi = X + (size_t)ck[e] * stride;
      for (int q = q0; q < nc; ++q) xk[q] -= l * xi[q];
    }
    for (int q = q0; q < nc; ++q) xk[q] *= iv;
  }
}

static TC_NOINLINE void solve_rows_base(const grit_treechol *tc, int t, const double *L, const double *inv, double *X,
                                        int stride, int nc) {
  solve_rows_in(tc, t, L, inv, X, stride, nc);
}

#if TREECHOL_AVX2
/* solve_rows_in with AVX2 intrinsics: the same operations on each column in the same order, the columns
 * in vectors of four; the groups of the first sweep tested for zero by one comparison per vector, and
 * the columns left over after the groups of eight (first sweep) or sixteen (second) taken four at a
 * time and the last one to three by masked loads and stores (in solve_rows_in they run one column at a
 * time: with a chunk's last columns, as many instructions as the chunk's full groups). Lanes outside
 * nc are neither read nor written. */
static TC_INLINE __attribute__((target("avx2"))) int v4_nonzero(__m256d a) {
  return _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_NEQ_UQ)); /* NaN: nonzero */
}

/* Loads and stores of a vector of four columns, masked (the lanes of a last partial vector) or not. */
static TC_INLINE __attribute__((target("avx2"))) __m256d v4_load(const double *p, int masked, __m256i mask) {
  return masked ? _mm256_maskload_pd(p, mask) : _mm256_loadu_pd(p);
}
static TC_INLINE __attribute__((target("avx2"))) void v4_store(double *p, __m256d a, int masked, __m256i mask) {
  if (masked) _mm256_maskstore_pd(p, mask, a);
  else _mm256_storeu_pd(p, a);
}

/* The first sweep's row k over v = 1, 2 or 4 vectors of columns from xk, their values y (masked: one
 * partial vector), not all zero: scaled and subtracted from the ancestors' rows. */
static TC_INLINE __attribute__((target("avx2"))) void fwd_vectors(double *xk, __m256d *y, const double *lk, const int *ck,
                                                                 int r, double *X, int stride, __m256d iv, int v,
                                                                 int masked, __m256i mask) {
  for (int j = 0; j < v; ++j) y[j] = _mm256_mul_pd(y[j], iv);
  v4_store(xk, y[0], masked, mask);
  for (int j = 1; j < v; ++j) _mm256_storeu_pd(xk + 4 * j, y[j]);
  for (int e = 0; e < r; ++e) {
    const __m256d l = _mm256_broadcast_sd(lk + e);
    double *xi = X + (size_t)ck[e] * stride;
    v4_store(xi, _mm256_sub_pd(v4_load(xi, masked, mask), _mm256_mul_pd(l, y[0])), masked, mask);
    for (int j = 1; j < v; ++j) _mm256_storeu_pd(xi + 4 * j, _mm256_sub_pd(_mm256_loadu_pd(xi + 4 * j), _mm256_mul_pd(l, y[j])));
  }
}

/* The first sweep's row k over the columns [0, 4 v) from xk (v = 1 or 2; masked: one partial vector),
 * skipped if zero (the lanes' OR is zero only where every lane is). */
static TC_INLINE __attribute__((target("avx2"))) void fwd_group(double *xk, const double *lk, const int *ck, int r,
                                                               double *X, int stride, __m256d iv, int v, int masked,
                                                               __m256i mask) {
  __m256d y[2] = {v4_load(xk, masked, mask), v == 2 ? _mm256_loadu_pd(xk + 4) : _mm256_setzero_pd()};
  if (v4_nonzero(_mm256_or_pd(y[0], y[1]))) fwd_vectors(xk, y, lk, ck, r, X, stride, iv, v, masked, mask);
}

/* Two groups of SOLVE_GROUP columns from xk: each skipped if zero, both nonzero in one walk over the
 * ancestors (four vectors per row loaded and stored: fewer address computations and loop steps). */
static TC_INLINE __attribute__((target("avx2"))) void fwd_pair(double *xk, const double *lk, const int *ck, int r,
                                                              double *X, int stride, __m256d iv, __m256i mask) {
  __m256d y[4] = {_mm256_loadu_pd(xk), _mm256_loadu_pd(xk + 4), _mm256_loadu_pd(xk + 8), _mm256_loadu_pd(xk + 12)};
  const int z0 = !v4_nonzero(_mm256_or_pd(y[0], y[1])), z1 = !v4_nonzero(_mm256_or_pd(y[2], y[3]));
  if (!z0 && !z1) fwd_vectors(xk, y, lk, ck, r, X, stride, iv, 4, 0, mask);
  else if (!z0) fwd_vectors(xk, y, lk, ck, r, X, stride, iv, 2, 0, mask);
  else if (!z1) fwd_vectors(xk + 8, y + 2, lk, ck, r, X + 8, stride, iv, 2, 0, mask);
}

/* fwd_pair for row k and its parent p = k - 1 together (p's ancestors are k's but p: ck[0 .. r-2], ck[r-1] = p):
 * where both rows are nonzero in all sixteen columns, k's values pushed into p's row, p's scaled, and the two
 * pushed into each common ancestor in one load and store (x_i - l_k y_k, then - l_p y_p: the order of the rows
 * one after the other, the same bits); else the rows one after the other (fwd_pair's own zero skips). */
static TC_INLINE __attribute__((target("avx2"))) void fwd_pair2(double *xk, double *xp, const double *lk,
                                                               const double *lp, const int *ck, int r, double *X,
                                                               int stride, __m256d ivk, __m256d ivp, __m256i mask) {
  __m256d y[4] = {_mm256_loadu_pd(xk), _mm256_loadu_pd(xk + 4), _mm256_loadu_pd(xk + 8), _mm256_loadu_pd(xk + 12)};
  if (!v4_nonzero(_mm256_or_pd(y[0], y[1])) || !v4_nonzero(_mm256_or_pd(y[2], y[3]))) {
    fwd_pair(xk, lk, ck, r, X, stride, ivk, mask);
    fwd_pair(xp, lp, ck, r - 1, X, stride, ivp, mask);
    return;
  }
  const __m256d lkp = _mm256_broadcast_sd(lk + r - 1);
  __m256d z[4];
  for (int j = 0; j < 4; ++j) {
    y[j] = _mm256_mul_pd(y[j], ivk);
    _mm256_storeu_pd(xk + 4 * j, y[j]);
    z[j] = _mm256_sub_pd(_mm256_loadu_pd(xp + 4 * j), _mm256_mul_pd(lkp, y[j]));
  }
  if (!v4_nonzero(_mm256_or_pd(z[0], z[1])) || !v4_nonzero(_mm256_or_pd(z[2], z[3]))) {
    for (int j = 0; j < 4; ++j) _mm256_storeu_pd(xp + 4 * j, z[j]);
    for (int e = 0; e < r - 1; ++e) { /* k's push into the common ancestors, then p's row as fwd_pair */
      const __m256d l = _mm256_broadcast_sd(lk + e);
      double *xi = X + (size_t)ck[e] * stride;
      for (int j = 0; j < 4; ++j)
        _mm256_storeu_pd(xi + 4 * j, _mm256_sub_pd(_mm256_loadu_pd(xi + 4 * j), _mm256_mul_pd(l, y[j])));
    }
    fwd_pair(xp, lp, ck, r - 1, X, stride, ivp, mask);
    return;
  }
  for (int j = 0; j < 4; ++j) z[j] = _mm256_mul_pd(z[j], ivp), _mm256_storeu_pd(xp + 4 * j, z[j]);
  for (int e = 0; e < r - 1; ++e) {
    const __m256d a = _mm256_broadcast_sd(lk + e), b = _mm256_broadcast_sd(lp + e);
    double *xi = X + (size_t)ck[e] * stride;
    for (int j = 0; j < 4; ++j)
      _mm256_storeu_pd(xi + 4 * j, _mm256_sub_pd(_mm256_sub_pd(_mm256_loadu_pd(xi + 4 * j), _mm256_mul_pd(a, y[j])),
                                                 _mm256_mul_pd(b, z[j])));
  }
}

/* The second sweep's row k over v = 1, 2, 4 or 8 vectors of columns from xk (masked: one partial
 * vector): x_k := (x_k - sum_e l_e x_i) * iv, e in order, the sums in registers. */
static TC_INLINE __attribute__((target("avx2"))) void bwd_vectors(double *xk, const double *lk, const int *ck, int r,
                                                                 const double *X, int stride, __m256d iv, int v,
                                                                 int masked, __m256i mask) {
  __m256d s[8];
  s[0] = v4_load(xk, masked, mask);
  for (int j = 1; j < v; ++j) s[j] = _mm256_loadu_pd(xk + 4 * j);
  for (int e = 0; e < r; ++e) {
    const __m256d l = _mm256_broadcast_sd(lk + e);
    const double *xi = X + (size_t)ck[e] * stride;
    s[0] = _mm256_sub_pd(s[0], _mm256_mul_pd(l, v4_load(xi, masked, mask)));
    for (int j = 1; j < v; ++j) s[j] = _mm256_sub_pd(s[j], _mm256_mul_pd(l, _mm256_loadu_pd(xi + 4 * j)));
  }
  v4_store(xk, _mm256_mul_pd(s[0], iv), masked, mask);
  for (int j = 1; j < v; ++j) _mm256_storeu_pd(xk + 4 * j, _mm256_mul_pd(s[j], iv));
}

static TC_NOINLINE __attribute__((target("avx2"))) void solve_rows_avx2(const grit_treechol *tc, int t,
                                                                        const double *L, const double *inv,
                                                                        double *X, int stride, int nc) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  const int rem = nc & 3, q4 = nc - rem; /* the last partial vector: columns q4 .. nc - 1 */
  const __m256i mask = _mm256_setr_epi64x(-(rem > 0), -(rem > 1), -(rem > 2), 0);
  const int *parent = m->dof_parent + adr;
  for (int k = n - 1; k >= 0;) {
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k];
    const __m256d iv = _mm256_set1_pd(inv[k]);
    double *xk = X + (size_t)k * stride;
    if (k > 0 && parent[k] - adr == k - 1 && !tc->no_pair_rows) { /* k and its parent (a chain's, a first child) */
      const double *lp = L + rowadr[k - 1];
      const __m256d ivp = _mm256_set1_pd(inv[k - 1]);
      double *xp = xk - stride;
      int q0 = 0;
      for (; q0 + 2 * SOLVE_GROUP <= nc; q0 += 2 * SOLVE_GROUP)
        fwd_pair2(xk + q0, xp + q0, lk, lp, ck, r, X + q0, stride, iv, ivp, mask);
      if (q0 + SOLVE_GROUP <= nc) {
        fwd_group(xk + q0, lk, ck, r, X + q0, stride, iv, 2, 0, mask);
        fwd_group(xp + q0, lp, ck, r - 1, X + q0, stride, ivp, 2, 0, mask);
        q0 += SOLVE_GROUP;
      }
      if (q0 < q4) {
        fwd_group(xk + q0, lk, ck, r, X + q0, stride, iv, 1, 0, mask);
        fwd_group(xp + q0, lp, ck, r - 1, X + q0, stride, ivp, 1, 0, mask);
      }
      if (rem) {
        fwd_group(xk + q4, lk, ck, r, X + q4, stride, iv, 1, 1, mask);
        fwd_group(xp + q4, lp, ck, r - 1, X + q4, stride, ivp, 1, 1, mask);
      }
      k -= 2;
      continue;
    }
    int q0 = 0;
    for (; q0 + 2 * SOLVE_GROUP <= nc; q0 += 2 * SOLVE_GROUP) fwd_pair(xk + q0, lk, ck, r, X + q0, stride, iv, mask);
    if (q0 + SOLVE_GROUP <= nc) fwd_group(xk + q0, lk, ck, r, X + q0, stride, iv, 2, 0, mask), q0 += SOLVE_GROUP;
    if (q0 < q4) fwd_group(xk + q0, lk, ck, r, X + q0, stride, iv, 1, 0, mask);
    if (rem) fwd_group(xk + q4, lk, ck, r, X + q4, stride, iv, 1, 1, mask);
    --k;
  }
  for (int k = 0; k < n; ++k) {
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k];
    const __m256d iv = _mm256_set1_pd(inv[k]);
    double *xk = X + (size_t)k * stride;
    int q0 = 0;
    for (; q0 + 4 * SOLVE_GROUP <= nc; q0 += 4 * SOLVE_GROUP) bwd_vectors(xk + q0, lk, ck, r, X + q0, stride, iv, 8, 0, mask);
    if (q0 + 2 * SOLVE_GROUP <= nc) bwd_vectors(xk + q0, lk, ck, r, X + q0, stride, iv, 4, 0, mask), q0 += 2 * SOLVE_GROUP;
    if (q0 + SOLVE_GROUP <= q4) bwd_vectors(xk + q0, lk, ck, r, X + q0, stride, iv, 2, 0, mask), q0 += SOLVE_GROUP;
    if (q0 < q4) bwd_vectors(xk + q0, lk, ck, r, X + q0, stride, iv, 1, 0, mask);
    if (rem) bwd_vectors(xk + q4, lk, ck, r, X + q4, stride, iv, 1, 1, mask);
  }
}
#endif

void grit_treechol_solve_rows(const grit_treechol *tc, int t, const double *L, const double *inv, double *X,
                              int stride, int nc) {
#if TREECHOL_AVX2
  if (__builtin_cpu_supports("avx2")) {
    solve_rows_avx2(tc, t, L, inv, X, stride, nc);
    return;
  }
#endif
  solve_rows_base(tc, t, L, inv, X, stride, nc);
}

#if TREECHOL_AVX2
/* solve_from_rows's second sweep for four siblings k .. k+3 (one parent, hence the same r ancestors ck;
 * their compact rows, from lk, r + 1 apart): each of the nr rows' four values in one vector, less the
 * ancestors' values (broadcast) times the four siblings' entries, e in order, then times their pivots'
 * reciprocals. Each value sees the operations of the loop one dof at a time in its order (a product, then
 * its subtraction; no fused multiply-add): the same bits. */
static inline __attribute__((target("avx2"))) void siblings4(const double *lk, const int *ck, int r,
                                                               const double *inv, double *x, int ldx, int k,
                                                               const int nr) {
  __m256d s[3];
  for (int q = 0; q < nr; ++q) s[q] = _mm256_loadu_pd(x + q * ldx + k);
  const int w = r + 1;
  for (int e = 0; e < r; ++e) {
    const __m256d l = _mm256_setr_pd(lk[e], lk[w + e], lk[2 * w + e], lk[3 * w + e]);
    for (int q = 0; q < nr; ++q) s[q] = _mm256_sub_pd(s[q], _mm256_mul_pd(l, _mm256_broadcast_sd(x + q * ldx + ck[e])));
  }
  const __m256d iv = _mm256_loadu_pd(inv + k);
  for (int q = 0; q < nr; ++q) _mm256_storeu_pd(x + q * ldx + k, _mm256_mul_pd(s[q], iv));
}
#define TC_SIBLINGS4(...) siblings4(__VA_ARGS__)
#else
#define TC_SIBLINGS4(...) ((void)0)
#endif

/* grit_treechol_solve_from_rows's body, nr a constant where it is inlined; sib (a constant): runs of four
 * siblings in the second sweep together (siblings4; the AVX2 build only). In the second sweep (ancestors
 * first) a dof's value depends on its ancestors' only, so siblings are independent of each other: the
 * leaves of a composite's star tree (MuJoCo's softbox: 218 slides under one free body) are taken four
 * at a time, their common ancestors' values loaded once. */
static inline __attribute__((always_inline)) void solve_from_rows(const grit_treechol *tc, int t, const double *L,
                                                                  const double *inv, double *x, int ldx,
                                                                  const int nr, const int sib) {
  const grit_model *m = tc->m;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  const int *rowadr = tc->rowadr + adr, *rownnz = tc->rownnz + adr, *col = tc->colind + tc->treeadr[t];
  for (int k = n - 1; k >= 0; --k) { /* L^T y = b, skipping the dofs where every row is zero */
    int any = 0;
    for (int q = 0; q < nr; ++q) any |= x[q * ldx + k] != 0.0;
    if (!any) continue;
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k];
    double y[3];
    for (int q = 0; q < nr; ++q) y[q] = x[q * ldx + k] * inv[k], x[q * ldx + k] = y[q];
    for (int e = 0; e < r; ++e)
      for (int q = 0; q < nr; ++q) x[q * ldx + ck[e]] -= lk[e] * y[q];
  }
  int k0 = n; /* L x = y from the first dof where some row is nonzero */
  for (int q = 0; q < nr; ++q) {
    int kq = 0;
    while (kq < k0 && x[q * ldx + kq] == 0.0) ++kq;
    k0 = kq;
  }
  const int *sb = tc->sib + adr;
  for (int k = k0; k < n; ++k) {
    const int r = rownnz[k] - 1, *ck = col + rowadr[k];
    const double *lk = L + rowadr[k];
    if (sib && sb[k] >= 4) {
      TC_SIBLINGS4(lk, ck, r, inv, x, ldx, k, nr);
      k += 3;
      continue;
    }
    double s[3];
    for (int q = 0; q < nr; ++q) s[q] = x[q * ldx + k];
    for (int e = 0; e < r; ++e)
      for (int q = 0; q < nr; ++q) s[q] -= lk[e] * x[q * ldx + ck[e]];
    for (int q = 0; q < nr; ++q) x[q * ldx + k] = s[q] * inv[k];
  }
}

static TC_NOINLINE void from_rows_base(const grit_treechol *tc, int t, const double *L, const double *inv, double *x,
                                       int ldx, int nr) {
  if (nr == 3) solve_from_rows(tc, t, L, inv, x, ldx, 3, 0);
  else if (nr == 2) solve_from_rows(tc, t, L, inv, x, ldx, 2, 0);
  else solve_from_rows(tc, t, L, inv, x, ldx, 1, 0);
}

#if TREECHOL_AVX2
static TC_NOINLINE __attribute__((target("avx2"))) void from_rows_avx2(const grit_treechol *tc, int t, const double *L,
                                                                       const double *inv, double *x, int ldx, int nr) {
  if (nr == 3) solve_from_rows(tc, t, L, inv, x, ldx, 3, 1);
  else if (nr == 2) solve_from_rows(tc, t, L, inv, x, ldx, 2, 1);
  else solve_from_rows(tc, t, L, inv, x, ldx, 1, 1);
}
#endif

void grit_treechol_siblings(grit_treechol *tc, int allow) { tc->no_sib = !allow; }
void grit_treechol_pair_rows(grit_treechol *tc, int allow) { tc->no_pair_rows = !allow; }
void grit_treechol_runs(grit_treechol *tc, int allow) { tc->no_runs = !allow; }
void grit_treechol_rowinfo(grit_treechol *tc, int allow) { tc->no_rowinfo = !allow; }
void grit_treechol_chain(grit_treechol *tc, int allow) { tc->no_chain = !allow; }
void grit_treechol_leaves(grit_treechol *tc, int allow) { tc->no_leaves = !allow; }

void grit_treechol_solve_from_rows(const grit_treechol *tc, int t, const double *L, const double *inv, double *x,
                                   int ldx, int nr) {
#if TREECHOL_AVX2
  if (tc->sib4[t] && !tc->no_sib && __builtin_cpu_supports("avx2")) { /* (other trees: the loops, as before) */
    from_rows_avx2(tc, t, L, inv, x, ldx, nr);
    return;
  }
#endif
  from_rows_base(tc, t, L, inv, x, ldx, nr);
}
