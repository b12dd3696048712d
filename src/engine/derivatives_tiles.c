/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tiles.c — the writes of derivatives_columns.c four (or two) columns at a time with AVX2: a free
 * body's 12 rows (free_body_tile4), a tree's or a span's rows (tree_tile4), an island's rows of a few
 * columns (grit_deriv_free_bodies_tile) or of a run of tiles a few rows at a time (grit_deriv_run_tiles),
 * the dense form's tiles (grit_deriv_dense_free_tiles). The values of the entry-by-entry writes there. */
#include <string.h>

#include "constraints.h"
#include "data_internal.h"
#include "derivatives_tiles.h"

#if GRIT_DERIV_AVX2
#include <immintrin.h>

/* The Dq terms of a free body's tile of nc (4 or 2) columns col[]: e[r][l] for the column of the body's own dof
 * (col - adr < 6), zero for the others. 0 (e left unset, not read: the rows add a zero vector) when no column is
 * one of the body's dofs. */
static inline int own_terms(const double *Dq, int adr, const int *col, int nc, double e[6][4]) {
  int own = 0;
  for (int l = 0; l < nc; ++l) own |= (unsigned)(col[l] - adr) < 6u;
  if (!own) return 0;
  memset(e, 0, sizeof(double[6][4]));
  for (int l = 0; l < nc; ++l) {
    const int cl = col[l] - adr;
    if (cl >= 0 && cl < 3) e[cl][l] = Dq[7 * cl];
    for (int r = 3; r < 6 && cl >= 3 && cl < 6; ++r) e[r][l] = Dq[6 * r + cl];
  }
  return 1;
}

/* free_body_column for four columns that lie in consecutive columns of their block (o + l for column l),
 * their solutions X[l] and theta ids col[l], with AVX2: the body's 6 x 4 tile of X transposed in
 * registers, each of the 12 rows computed for the four columns at once (the same operations per entry
 * in the same order, no fused multiply-adds) and stored as one vector. The Dq terms are added as 0.0
 * in the columns without one: a translation row's sum has + 0.0 in free_body_column too, and a
 * rotation row's sum starts at +0.0, so it is never -0.0 and x + 0.0 is x. Adds x - x of every value
 * to *chk. */
static __attribute__((target("avx2"))) void free_body_tile4(const grit_deriv_ws *w, int jn, const double *const *X,
                                                            int adr, const int *col, double *oq, double *ov,
                                                            size_t stride, __m256d *chk) {
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  const double *x0 = X[0] + adr, *x1 = X[1] + adr, *x2 = X[2] + adr, *x3 = X[3] + adr;
  __m256d v[6];
  { /* rows 0..3: a 4 x 4 transpose; rows 4, 5 gathered */
    const __m256d r0 = _mm256_loadu_pd(x0), r1 = _mm256_loadu_pd(x1), r2 = _mm256_loadu_pd(x2), r3 = _mm256_loadu_pd(x3);
    const __m256d a = _mm256_unpacklo_pd(r0, r1), c = _mm256_unpackhi_pd(r0, r1);
    const __m256d e = _mm256_unpacklo_pd(r2, r3), g = _mm256_unpackhi_pd(r2, r3);
    v[0] = _mm256_permute2f128_pd(a, e, 0x20);
    v[1] = _mm256_permute2f128_pd(c, g, 0x20);
    v[2] = _mm256_permute2f128_pd(a, e, 0x31);
    v[3] = _mm256_permute2f128_pd(c, g, 0x31);
    v[4] = _mm256_set_pd(x3[4], x2[4], x1[4], x0[4]);
    v[5] = _mm256_set_pd(x3[5], x2[5], x1[5], x0[5]);
  }
  __m256d ck = *chk;
  for (int r = 0; r < 6; ++r) {
    _mm256_storeu_pd(ov + (size_t)r * stride, v[r]);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(v[r], v[r]));
  }
  double e[6][4];
  const int own = own_terms(Dq, adr, col, 4, e);
  for (int r = 0; r < 3; ++r) {
    const __m256d er = own ? _mm256_loadu_pd(e[r]) : _mm256_setzero_pd();
    const __m256d x = _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(Dv[7 * r]), v[r]), er);
    _mm256_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  for (int r = 3; r < 6; ++r) {
    __m256d x = _mm256_setzero_pd();
    x = _mm256_add_pd(x, _mm256_mul_pd(_mm256_set1_pd(Dv[6 * r + 3]), v[3]));
    x = _mm256_add_pd(x, _mm256_mul_pd(_mm256_set1_pd(Dv[6 * r + 4]), v[4]));
    x = _mm256_add_pd(x, _mm256_mul_pd(_mm256_set1_pd(Dv[6 * r + 5]), v[5]));
    if (own) x = _mm256_add_pd(x, _mm256_loadu_pd(e[r]));
    _mm256_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  *chk = ck;
}

/* The q rows of a joint (its Dq, Dv; its first dof da, nvj dofs, r0 rows without rotation: see
 * write_q_rows) of four columns (theta ids col[0..3]) from their values v[0..nvj-1] (one vector per
 * dof, a lane per column), row r at oq + r stride: the sums of q_rows_column in the same order, lane by
 * lane (a translation row adds 0.0 where the column is not the row's dq, as q_rows_column does; a
 * rotation row starts at +0.0, so adding 0.0 in the lanes without a Dq term leaves it unchanged).
 * Returns ck plus x - x of every value. */
static inline __attribute__((target("avx2"), always_inline)) __m256d joint_q_tile4_in(const double *Dq, const double *Dv,
                                                                                    int da, int nvj, int r0,
                                                                                    const int *col, const __m256d *v,
                                                                                    double *oq, size_t stride,
                                                                                    __m256d ck) {
  int cl[4], own = 0;
  for (int l = 0; l < 4; ++l) cl[l] = col[l] - da, own |= (unsigned)cl[l] < (unsigned)nvj;
  double e[6][4];
  for (int r = 0; r < (own ? nvj : r0); ++r) e[r][0] = e[r][1] = e[r][2] = e[r][3] = 0.0;
  for (int l = 0; own && l < 4; ++l) {
    if (cl[l] >= 0 && cl[l] < r0) e[cl[l]][l] = Dq[7 * cl[l]];
    for (int r = r0; r < nvj && cl[l] >= r0 && cl[l] < nvj; ++r) e[r][l] = Dq[6 * r + cl[l]];
  }
  for (int r = 0; r < r0; ++r) {
    const __m256d x = _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(Dv[7 * r]), v[r]), _mm256_loadu_pd(e[r]));
    _mm256_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  for (int r = r0; r < nvj; ++r) {
    __m256d x = _mm256_setzero_pd();
    for (int k = r0; k < nvj; ++k) x = _mm256_add_pd(x, _mm256_mul_pd(_mm256_set1_pd(Dv[6 * r + k]), v[k]));
    if (own) x = _mm256_add_pd(x, _mm256_loadu_pd(e[r]));
    _mm256_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  return ck;
}

static __attribute__((target("avx2"), noinline)) __m256d joint_q_tile4(const double *Dq, const double *Dv, int da,
                                                                       int nvj, int r0, const int *col,
                                                                       const __m256d *v, double *oq, size_t stride,
                                                                       __m256d ck) {
  return joint_q_tile4_in(Dq, Dv, da, nvj, r0, col, v, oq, stride, ck);
}

/* joint_q_tile4 of a free joint (6 dofs, 3 translations) and of a hinge or slide (1 dof) with constant
 * bounds: the loops unrolled, the same operations (ws->no_plain_runs: the generic one). */
static __attribute__((target("avx2"), noinline)) __m256d joint_q_free4(const double *Dq, const double *Dv, int da,
                                                                       const int *col, const __m256d *v, double *oq,
                                                                       size_t stride, __m256d ck) {
  return joint_q_tile4_in(Dq, Dv, da, 6, 3, col, v, oq, stride, ck);
}

static __attribute__((target("avx2"), noinline)) __m256d joint_q_one4(const double *Dq, const double *Dv, int da,
                                                                      const int *col, const __m256d *v, double *oq,
                                                                      size_t stride, __m256d ck) {
  return joint_q_tile4_in(Dq, Dv, da, 1, 1, col, v, oq, stride, ck);
}

/* The q rows of tree_tile4's hinges and slides i, i + 1, ... (tree-local dofs, up to vt) that have no
 * Dq term (dof outside [cmin, cmax]): x = Dv V_i + 0.0, as in q_rows_column, with Dv = h, the value
 * grit_deriv_integration_jacobians gives every hinge and slide (the same bits, no lookup of the
 * joint's Dv). Returns the first dof not of that kind (or vt). On its own, with few values live, its
 * loop keeps them in registers. */
static __attribute__((target("avx2"), noinline)) int hinge_run(const int *dof_jnt, const int *jnt_type, double h,
                                                               const __m256d *Vs, int i, int vt, int cmin, int cmax,
                                                               double *oq, size_t stride, __m256d *chk) {
  __m256d ck = *chk;
  const __m256d zero = _mm256_setzero_pd(), hv = _mm256_set1_pd(h);
  for (; i < vt; ++i) {
    const int type = jnt_type[dof_jnt[i]];
    if (!(type == GRIT_JOINT_HINGE || type == GRIT_JOINT_SLIDE) || (i >= cmin && i <= cmax)) break;
    const __m256d x = _mm256_add_pd(_mm256_mul_pd(hv, Vs[i]), zero);
    _mm256_storeu_pd(oq + (size_t)i * stride, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  *chk = ck;
  return i;
}

/* hinge_run over the dofs' precomputed runs (pe: w->plain_end from the tree's first dof adr): the run from i ends at the
 * first dof that is not a hinge or slide, at vt, or at the first dof in [cmin, cmax], found by two
 * comparisons instead of three loads and four tests per dof; then the rows of hinge_run, the same values
 * in the same order. */
static __attribute__((target("avx2"), noinline)) int plain_run(const int *pe, int adr, double h, const __m256d *Vs,
                                                               int i, int vt, int cmin, int cmax, double *oq,
                                                               size_t stride, __m256d *chk) {
  int g = pe[i]; /* a span of several trees (span_tiles): the run goes on into the next tree's hinges and slides */
  while (g - adr < vt && pe[g - adr] > g) g = pe[g - adr];
  int stop = g - adr < vt ? g - adr : vt;
  if (i <= cmax && stop > cmin) stop = i > cmin ? i : cmin;
  __m256d ck = *chk;
  const __m256d zero = _mm256_setzero_pd(), hv = _mm256_set1_pd(h);
  double *o = oq + (size_t)i * stride;
  for (; i < stop; ++i, o += stride) {
    const __m256d x = _mm256_add_pd(_mm256_mul_pd(hv, Vs[i]), zero);
    _mm256_storeu_pd(o, x);
    ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
  }
  *chk = ck;
  return i;
}

/* The rows of dofs adr .. adr + n - 1 (a tree, or a span of consecutive trees: span_end) of four
 * columns (solutions X[l], theta ids col[l]) that lie in consecutive columns of their output (o + l),
 * its q rows from oq and v rows from ov, `stride` apart, with AVX2: the dofs transposed four at a time
 * into vectors (a lane per column), TILE_SEG dofs at a time (a segment ends where a joint starts), stored as its v rows; then each joint's q rows computed from
 * them: a hinge's or slide's without a Dq term (its dof not among the columns' ids) inline, the others
 * by joint_q_tile4. The values of write_tree_rows, one store per row of the tile instead of one per
 * entry. Adds x - x of every value to *chk. The segment filled before its joints' loop, the hinges'
 * runs (hinge_run) and the other joints (joint_q_tile4) in functions of their own, the check passed by
 * value: the joints' loop keeps its values in registers (callgrind, CMU humanoid: tree_tile4 -25 %). */
enum { TILE_SEG = 64 };
static __attribute__((target("avx2"))) void tree_tile4(const grit_model *m, const grit_deriv_ws *w, int adr, int n,
                                                      const double *const *X, const int *col, double *oq, double *ov,
                                                      size_t stride, __m256d *chk) {
  const int *dof_jnt = m->dof_jnt + adr, *jnt_type = m->jnt_type;
  const double *Dv = w->Dv;
  const double *x0 = X[0] + adr, *x1 = X[1] + adr, *x2 = X[2] + adr, *x3 = X[3] + adr;
  const int runs = !w->no_plain_runs;
  __m256d V[TILE_SEG], ck = *chk;
  int cmin = col[0], cmax = col[0]; /* the columns' range of ids: a joint's dofs outside it have no Dq term */
  for (int l = 1; l < 4; ++l) cmin = col[l] < cmin ? col[l] : cmin, cmax = col[l] > cmax ? col[l] : cmax;
  cmin -= adr, cmax -= adr; /* as the tree's local dofs */
  for (int vb = 0; vb < n;) {
    const int vt = n - vb <= TILE_SEG ? n : m->jnt_dofadr[dof_jnt[vb + TILE_SEG]] - adr;
    __m256d *Vs = V - vb; /* Vs[i]: the tree's dof i */
    int j = vb;
    for (; j + 4 <= vt; j += 4) {
      const __m256d r0 = _mm256_loadu_pd(x0 + j), r1 = _mm256_loadu_pd(x1 + j), r2 = _mm256_loadu_pd(x2 + j),
                    r3 = _mm256_loadu_pd(x3 + j);
      const __m256d a = _mm256_unpacklo_pd(r0, r1), c = _mm256_unpackhi_pd(r0, r1);
      const __m256d e = _mm256_unpacklo_pd(r2, r3), g = _mm256_unpackhi_pd(r2, r3);
      Vs[j] = _mm256_permute2f128_pd(a, e, 0x20);
      Vs[j + 1] = _mm256_permute2f128_pd(c, g, 0x20);
      Vs[j + 2] = _mm256_permute2f128_pd(a, e, 0x31);
      Vs[j + 3] = _mm256_permute2f128_pd(c, g, 0x31);
      for (int q = j; q < j + 4; ++q) { /* the v rows as they come (not reloaded by a loop of their own) */
        _mm256_storeu_pd(ov + (size_t)q * stride, Vs[q]);
        ck = _mm256_add_pd(ck, _mm256_sub_pd(Vs[q], Vs[q]));
      }
    }
    for (; j < vt; ++j) {
      Vs[j] = _mm256_set_pd(x3[j], x2[j], x1[j], x0[j]);
      _mm256_storeu_pd(ov + (size_t)j * stride, Vs[j]);
      ck = _mm256_add_pd(ck, _mm256_sub_pd(Vs[j], Vs[j]));
    }
    for (int i = vb; i < vt;) {
      i = runs ? plain_run(w->plain_end + adr, adr, m->opt.timestep, Vs, i, vt, cmin, cmax, oq, stride, &ck)
               : hinge_run(dof_jnt, jnt_type, m->opt.timestep, Vs, i, vt, cmin, cmax, oq, stride, &ck);
      if (i == vt) break;
      const int jn = dof_jnt[i], type = jnt_type[jn];
      const int nvj = grit_joint_nv(type), r0 = type == GRIT_JOINT_FREE ? 3 : nvj == 1 ? 1 : 0;
      const double *Dqj = w->Dq + 36 * jn, *Dvj = Dv + 36 * jn;
      double *oqi = oq + (size_t)i * stride;
      if (runs && type == GRIT_JOINT_FREE) ck = joint_q_free4(Dqj, Dvj, adr + i, col, Vs + i, oqi, stride, ck);
      else if (runs && nvj == 1) ck = joint_q_one4(Dqj, Dvj, adr + i, col, Vs + i, oqi, stride, ck);
      else ck = joint_q_tile4(Dqj, Dvj, adr + i, nvj, r0, col, Vs + i, oqi, stride, ck);
      i += nvj;
    }
    vb = vt;
  }
  *chk = ck;
}

/* free_body_tile4 for two columns (SSE2 vectors of two). */
static void free_body_tile2(const grit_deriv_ws *w, int jn, const double *const *X, int adr, const int *col, double *oq,
                            double *ov, size_t stride, __m128d *chk) {
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  const double *x0 = X[0] + adr, *x1 = X[1] + adr;
  __m128d v[6];
  for (int r = 0; r < 6; r += 2) { /* 2 x 2 transposes */
    const __m128d a = _mm_loadu_pd(x0 + r), b = _mm_loadu_pd(x1 + r);
    v[r] = _mm_unpacklo_pd(a, b);
    v[r + 1] = _mm_unpackhi_pd(a, b);
  }
  __m128d ck = *chk;
  for (int r = 0; r < 6; ++r) {
    _mm_storeu_pd(ov + (size_t)r * stride, v[r]);
    ck = _mm_add_pd(ck, _mm_sub_pd(v[r], v[r]));
  }
  double e[6][4]; /* (its first two lanes) */
  const int own = own_terms(Dq, adr, col, 2, e);
  for (int r = 0; r < 3; ++r) {
    const __m128d er = own ? _mm_loadu_pd(e[r]) : _mm_setzero_pd();
    const __m128d x = _mm_add_pd(_mm_mul_pd(_mm_set1_pd(Dv[7 * r]), v[r]), er);
    _mm_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm_add_pd(ck, _mm_sub_pd(x, x));
  }
  for (int r = 3; r < 6; ++r) {
    __m128d x = _mm_setzero_pd();
    x = _mm_add_pd(x, _mm_mul_pd(_mm_set1_pd(Dv[6 * r + 3]), v[3]));
    x = _mm_add_pd(x, _mm_mul_pd(_mm_set1_pd(Dv[6 * r + 4]), v[4]));
    x = _mm_add_pd(x, _mm_mul_pd(_mm_set1_pd(Dv[6 * r + 5]), v[5]));
    if (own) x = _mm_add_pd(x, _mm_loadu_pd(e[r]));
    _mm_storeu_pd(oq + (size_t)r * stride, x);
    ck = _mm_add_pd(ck, _mm_sub_pd(x, x));
  }
  *chk = ck;
}

/* The rows of island k of nc = 4 or 2 columns (the batch's l0 + l, or ord[l0 + l] where the batch is
 * reordered: their solutions and ids) that lie in consecutive columns of the block (out + l), as
 * tiles: four columns with AVX2, every tree (free bodies by free_body_tile4, the others by tree_tile4, spans of them at a time: span_end); two with SSE2, the
 * free bodies only, the other trees' rows left to the caller. Adds the sum of x - x to *check; returns
 * whether every tree is written. */
__attribute__((target("avx2"))) int grit_deriv_free_bodies_tile(const grit_model *m, const grit_deriv_ws *w, int k, int l0,
                                                            const int *ord, int nc, double *out, size_t stride,
                                                            double *check) {
  const grit_jacobian_blocks *J = w->blk;
  const int nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
  const double *X[4];
  int cb[4];
  const int *col = w->ids + l0;
  if (ord) {
    for (int l = 0; l < nc; ++l) X[l] = w->xcol[ord[l0 + l]], cb[l] = w->ids[ord[l0 + l]];
    col = cb;
  } else {
    for (int l = 0; l < nc; ++l) X[l] = w->xcol[l0 + l];
  }
  __m256d chk4 = _mm256_setzero_pd();
  __m128d chk2 = _mm_setzero_pd();
  int all = 1;
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
    const int u = J->tree[e], adr = m->tree_dofadr[u];
    double *oq = out + (size_t)J->dof_pos[adr] * stride, *ov = oq + (size_t)nk * stride;
    if (!grit_deriv_lone_free(m, u)) {
      if (nc != 4) {
        all = 0;
        continue;
      }
      const int f = grit_deriv_span_end(m, w, J, k, e), last = J->tree[f - 1];
      tree_tile4(m, w, adr, m->tree_dofadr[last] + m->tree_dofnum[last] - adr, X, col, oq, ov, stride, &chk4);
      e = f - 1;
      continue;
    }
    if (nc == 4) free_body_tile4(w, m->dof_jnt[adr], X, adr, col, oq, ov, stride, &chk4);
    else free_body_tile2(w, m->dof_jnt[adr], X, adr, col, oq, ov, stride, &chk2);
  }
  double c[6];
  _mm256_storeu_pd(c, chk4);
  _mm_storeu_pd(c + 4, chk2);
  *check += c[0] + c[1] + c[2] + c[3] + c[4] + c[5];
  return all;
}

/* The rows of island k of ntile tiles of four columns, the batch's l0 .. l0 + 4 ntile - 1 (or ord[] of them,
 * as free_bodies_tile) lying in consecutive columns of the block (out + l): tree by tree (spans: span_end)
 * and in a tree RUN_SEG dofs at a time (whole joints), every tile's rows of those dofs before the next
 * dofs. Each of the few rows in flight is then written as one stretch of 4 ntile values, line after line
 * (the processor's prefetch follows it, and a page's entries are written together), where tile after
 * tile wrote 32 bytes of every row, one row stride (a page, for the softbox's 448 columns) apart: the
 * softbox's writes were slow for their instructions (docs/performance.md, stop 29's softbox5). The
 * values of free_bodies_tile (tree_tile4 and free_body_tile4 per entry, the same operations); only the
 * order of the stores and of the x - x checks, a sum of zeros or NaN, changes. */
enum { RUN_SEG = 8 };

/* tree_tile4's rows for dofs s .. s + n - 1 that are all hinges and slides without a Dq term in the tile
 * (none of its columns is their dq): the v rows X, the q rows h X + 0.0, plain_run's operations, inline
 * (a call of tree_tile4 for 8 dofs cost as much again as its stores). Returns ck plus x - x of every value. */
static inline __attribute__((target("avx2"), always_inline)) __m256d plain_seg4(const double *const *X, int s, int n,
                                                                              double h, double *oq, double *ov,
                                                                              size_t stride, __m256d ck) {
  const double *x0 = X[0] + s, *x1 = X[1] + s, *x2 = X[2] + s, *x3 = X[3] + s;
  const __m256d zero = _mm256_setzero_pd(), hv = _mm256_set1_pd(h);
  __m256d v[4];
  for (int j = 0; j < n; j += 4) {
    const int nj = n - j < 4 ? n - j : 4;
    if (nj == 4) {
      const __m256d r0 = _mm256_loadu_pd(x0 + j), r1 = _mm256_loadu_pd(x1 + j), r2 = _mm256_loadu_pd(x2 + j),
                    r3 = _mm256_loadu_pd(x3 + j);
      const __m256d a = _mm256_unpacklo_pd(r0, r1), c = _mm256_unpackhi_pd(r0, r1);
      const __m256d e = _mm256_unpacklo_pd(r2, r3), g = _mm256_unpackhi_pd(r2, r3);
      v[0] = _mm256_permute2f128_pd(a, e, 0x20);
      v[1] = _mm256_permute2f128_pd(c, g, 0x20);
      v[2] = _mm256_permute2f128_pd(a, e, 0x31);
      v[3] = _mm256_permute2f128_pd(c, g, 0x31);
    } else {
      for (int q = 0; q < nj; ++q) v[q] = _mm256_set_pd(x3[j + q], x2[j + q], x1[j + q], x0[j + q]);
    }
    for (int q = 0; q < nj; ++q) {
      const size_t o = (size_t)(j + q) * stride;
      _mm256_storeu_pd(ov + o, v[q]);
      ck = _mm256_add_pd(ck, _mm256_sub_pd(v[q], v[q]));
      const __m256d x = _mm256_add_pd(_mm256_mul_pd(hv, v[q]), zero);
      _mm256_storeu_pd(oq + o, x);
      ck = _mm256_add_pd(ck, _mm256_sub_pd(x, x));
    }
  }
  return ck;
}
__attribute__((target("avx2"))) void grit_deriv_run_tiles(const grit_model *m, const grit_deriv_ws *w, int k, int l0,
                                                     const int *ord, int ntile, double *out, size_t stride,
                                                     double *check) {
  const grit_jacobian_blocks *J = w->blk;
  const int nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
  const double *X[RHS_BATCH];
  int cb[RHS_BATCH];
  for (int l = 0; l < 4 * ntile; ++l) {
    const int j = ord ? ord[l0 + l] : l0 + l;
    X[l] = w->xcol[j], cb[l] = w->ids[j];
  }
  __m256d chk4 = _mm256_setzero_pd();
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
    const int u = J->tree[e], adr = m->tree_dofadr[u];
    double *oq = out + (size_t)J->dof_pos[adr] * stride, *ov = oq + (size_t)nk * stride;
    if (grit_deriv_lone_free(m, u)) {
      for (int t = 0; t < ntile; ++t)
        free_body_tile4(w, m->dof_jnt[adr], X + 4 * t, adr, cb + 4 * t, oq + 4 * t, ov + 4 * t, stride, &chk4);
      continue;
    }
    const int f = grit_deriv_span_end(m, w, J, k, e), last = J->tree[f - 1];
    const int end = m->tree_dofadr[last] + m->tree_dofnum[last];
    e = f - 1;
    for (int s = adr; s < end;) { /* dofs s .. s1 - 1: whole joints, at least one */
      int s1 = end - s <= RUN_SEG ? end : m->jnt_dofadr[m->dof_jnt[s + RUN_SEG]];
      if (s1 == s) s1 = s + grit_joint_nv(m->jnt_type[m->dof_jnt[s]]);
      const size_t o = (size_t)(s - adr) * stride;
      int g = w->plain_end[s]; /* dofs s .. g - 1 hinges and slides (on into the span's next trees) */
      while (g < s1 && w->plain_end[g] > g) g = w->plain_end[g];
      const int plain = !w->no_plain_runs && g >= s1;
      for (int t = 0; t < ntile; ++t) {
        const int *c = cb + 4 * t;
        int own = 0; /* a column of the tile is the dq of one of the dofs */
        for (int l = 0; l < 4; ++l) own |= c[l] >= s && c[l] < s1;
        if (plain && !own) chk4 = plain_seg4(X + 4 * t, s, s1 - s, m->opt.timestep, oq + o + 4 * t, ov + o + 4 * t, stride, chk4);
        else tree_tile4(m, w, s, s1 - s, X + 4 * t, c, oq + o + 4 * t, ov + o + 4 * t, stride, &chk4);
      }
      s = s1;
    }
  }
  double c[4];
  _mm256_storeu_pd(c, chk4);
  *check += c[0] + c[1] + c[2] + c[3];
}

/* The dense form's tiles: the rows of the trees list[0..nt-1] (list NULL: every tree) of the columns
 * c[t0[i] .. t0[i] + tw[i] - 1], i < ntile, each tile in consecutive columns of its output: a free
 * body's rows in every tile, another tree's in the tiles of four. Returns the sum of x - x. */
__attribute__((target("avx2"))) double grit_deriv_dense_free_tiles(const grit_model *m, const grit_deriv_ws *w,
                                                               const int *list, int nt, const out_column *c,
                                                               const int *t0, const int *tw, int ntile) {
  __m256d chk4 = _mm256_setzero_pd();
  __m128d chk2 = _mm_setzero_pd();
  for (int e = 0; e < nt; ++e) {
    const int u = list ? list[e] : e, adr = m->tree_dofadr[u], jn = m->dof_jnt[adr];
    if (!grit_deriv_lone_free(m, u)) { /* tiles of four only; a span of the next trees whose dofs follow on */
      int f = e + 1, end = adr + m->tree_dofnum[u];
      for (; !w->no_span_tiles && f < nt; ++f) {
        const int v = list ? list[f] : f;
        if (grit_deriv_lone_free(m, v) || m->tree_dofadr[v] != end) break;
        end += m->tree_dofnum[v];
      }
      for (int i = 0; i < ntile; ++i) {
        const out_column *ci = c + t0[i];
        if (tw[i] != 4) continue;
        const double *X[4] = {ci[0].X, ci[1].X, ci[2].X, ci[3].X};
        const int col[4] = {ci[0].col, ci[1].col, ci[2].col, ci[3].col};
        tree_tile4(m, w, adr, end - adr, X, col, ci->out + (size_t)adr * ci->stride,
                   ci->out + (size_t)(m->nv + adr) * ci->stride, ci->stride, &chk4);
      }
      e = f - 1;
      continue;
    }
    for (int i = 0; i < ntile; ++i) {
      const out_column *ci = c + t0[i];
      const double *X[4];
      int col[4];
      for (int l = 0; l < tw[i]; ++l) X[l] = ci[l].X, col[l] = ci[l].col;
      double *oq = ci->out + (size_t)adr * ci->stride, *ov = ci->out + (size_t)(m->nv + adr) * ci->stride;
      if (tw[i] == 4) free_body_tile4(w, jn, X, adr, col, oq, ov, ci->stride, &chk4);
      else free_body_tile2(w, jn, X, adr, col, oq, ov, ci->stride, &chk2);
    }
  }
  double s[6];
  _mm256_storeu_pd(s, chk4);
  _mm_storeu_pd(s + 4, chk2);
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5];
}
#else
typedef int grit_deriv_tiles_unused; /* (ISO C: not an empty unit) */
#endif
