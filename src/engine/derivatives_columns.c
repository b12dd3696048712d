/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_columns.c — the columns of the step's Jacobians: the batched solves with the kept factor
 * of H (H dv/dtheta = -dr/dtheta) and the writing of A, B and P. What the passes seed (the colouring, the
 * columns, the tangent-space Jacobians of q+ = q0 (+) dt v): derivatives_colour.c; the right-hand sides:
 * derivatives_rhs.c; the residual whose partials they are: derivatives_residual.c. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime for the optional phase timing */
#include <math.h>
#include <string.h>

#include "actuation_adhesion.h"
#include "collision.h"
#include "constraints.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "dynamics.h"
#include "quasistatic.h"
#include "solver.h"
#include "status_internal.h"
#include "timing.h"

/* The block form's writes also have an AVX2 path, chosen at run time by the processor (the same
 * values: write_batch_blocks; GRIT_NO_AVX2 compiles the baseline path only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define GRIT_DERIV_AVX2 1
#include <immintrin.h>
#else
#define GRIT_DERIV_AVX2 0
#endif

double grit_deriv_tick(const grit_deriv_ws *w) {
  return w->timing ? grit_clock_us() : 0.0;
}

/* Where a batch column goes: its solution X, its output's entry in row 0 and row stride, its id; for
 * an island's block (grit_step_derivatives_blocks), the block's row of each dof (rmap) and the block's
 * first v row (nloc); rmap NULL: the full state's rows. */
typedef struct out_column {
  const double *X;
  double *out;
  size_t stride;
  int col;
  const int *rmap;
  int nloc;
} out_column;

/* Rows nv + i, i0 <= i < i1, of the columns c[0..nc-1]: their X. Returns the sum of x - x (0 if all
 * are finite, NaN otherwise). */
static double write_v_rows(const out_column *c, int nc, int nv, int i0, int i1) {
  double check = 0.0;
  for (int i = i0; i < i1; ++i)
    for (int l = 0; l < nc; ++l) {
      const double x = c[l].X[i];
      c[l].out[(size_t)(c[l].rmap ? c[l].nloc + c[l].rmap[i] : nv + i) * c[l].stride] = x;
      check += x - x;
    }
  return check;
}

/* Row r of Dv times X over the joint's rotation block, k0 <= k < k1: inlined with a free joint's
 * constants (3, 6), so that the sum is unrolled (the same sum in the same order). */
static inline double rotation_row(const double *Dv_r, const double *X, int k0, int k1) {
  double x = 0.0;
  for (int k = k0; k < k1; ++k) x += Dv_r[k] * X[k];
  return x;
}

/* The q rows of joint jn of the columns c[0..nc-1]: Dq e_col (dq0 columns) + Dv X. Returns the sum of
 * x - x. */
static double write_q_rows(const grit_model *m, const grit_deriv_ws *w, int jn, const out_column *c, int nc) {
  const int da = m->jnt_dofadr[jn], nvj = grit_joint_nv(m->jnt_type[jn]);
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  /* a free joint's translation rows are diagonal (h, 1) and its blocks do not mix translation and
   * rotation: only the rotation block is summed (hinge, slide: Dq = 1, Dv = h) */
  const int r0 = m->jnt_type[jn] == GRIT_JOINT_FREE ? 3 : nvj == 1 ? 1 : 0;
  double check = 0.0;
  for (int l = 0; l < nc; ++l) {
    const int col = c[l].col;
    const double *X = c[l].X;
    for (int r = 0; r < r0; ++r) {
      const double x = Dv[6 * r + r] * X[da + r] + (col == da + r ? Dq[6 * r + r] : 0.0);
      c[l].out[(size_t)(c[l].rmap ? c[l].rmap[da + r] : da + r) * c[l].stride] = x;
      check += x - x;
    }
    for (int r = r0; r < nvj; ++r) {
      double x = r0 == 3 && nvj == 6 ? rotation_row(Dv + 6 * r, X + da, 3, 6) : rotation_row(Dv + 6 * r, X + da, r0, nvj);
      if (col >= da + r0 && col < da + nvj) x += Dq[6 * r + col - da];
      c[l].out[(size_t)(c[l].rmap ? c[l].rmap[da + r] : da + r) * c[l].stride] = x;
      check += x - x;
    }
  }
  return check;
}

/* write_q_rows for the one-dof joints (hinges, slides) of dofs i0 .. i1-1, a run of w->plain_end: each
 * dof's one row, Dv X + (Dq or 0), the same values without a call and loops per joint. */
static double write_q_run(const grit_model *m, const grit_deriv_ws *w, int i0, int i1, const out_column *c, int nc) {
  double check = 0.0;
  for (int l = 0; l < nc; ++l) {
    const int col = c[l].col;
    const double *X = c[l].X;
    for (int i = i0; i < i1; ++i) {
      const int jn = m->dof_jnt[i];
      const double x = w->Dv[36 * jn] * X[i] + (col == i ? w->Dq[36 * jn] : 0.0);
      c[l].out[(size_t)(c[l].rmap ? c[l].rmap[i] : i) * c[l].stride] = x;
      check += x - x;
    }
  }
  return check;
}

/* The rows of tree u of the columns c[0..nc-1]: v rows, then q rows joint by joint, the runs of hinges
 * and slides by write_q_run (ws->no_plain_runs: joint by joint). */
static double write_tree_rows(const grit_model *m, const grit_deriv_ws *w, int u, const out_column *c, int nc) {
  const int adr = m->tree_dofadr[u], end = adr + m->tree_dofnum[u];
  double check = write_v_rows(c, nc, m->nv, adr, end);
  for (int i = adr; i < end;) {
    if (!w->no_plain_runs && w->plain_end[i] > i) {
      check += write_q_run(m, w, i, w->plain_end[i], c, nc);
      i = w->plain_end[i];
      continue;
    }
    check += write_q_rows(m, w, m->dof_jnt[i], c, nc);
    i += grit_joint_nv(m->jnt_type[m->dof_jnt[i]]);
  }
  return check;
}

/* The q rows of joint jn of one column (col, its solution X), the joint's first row at o, rows `stride`
 * apart: the values of write_q_rows. Returns the sum of x - x. */
static double q_rows_column(const grit_model *m, const grit_deriv_ws *w, int jn, const double *X, int col, double *o,
                            size_t stride) {
  const int da = m->jnt_dofadr[jn], nvj = grit_joint_nv(m->jnt_type[jn]);
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  const int r0 = m->jnt_type[jn] == GRIT_JOINT_FREE ? 3 : nvj == 1 ? 1 : 0;
  double check = 0.0;
  for (int r = 0; r < r0; ++r) {
    const double x = Dv[6 * r + r] * X[da + r] + (col == da + r ? Dq[6 * r + r] : 0.0);
    o[(size_t)r * stride] = x;
    check += x - x;
  }
  for (int r = r0; r < nvj; ++r) {
    double x = r0 == 3 && nvj == 6 ? rotation_row(Dv + 6 * r, X + da, 3, 6) : rotation_row(Dv + 6 * r, X + da, r0, nvj);
    if (col >= da + r0 && col < da + nvj) x += Dq[6 * r + col - da];
    o[(size_t)r * stride] = x;
    check += x - x;
  }
  return check;
}

/* The 12 rows of a free body (its only joint jn; its solution Xu, the column's index cl among its dofs,
 * out of 0..5 if not one of its dq) of one column: its v rows at ov and its q rows at oq, `stride`
 * apart. The values of write_tree_rows for a free joint, the same sums in the same order, unrolled.
 * Returns the sum of x - x. */
static double free_body_column(const grit_deriv_ws *w, int jn, const double *Xu, int cl, double *oq, double *ov,
                               size_t stride) {
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  double check = 0.0;
  for (int r = 0; r < 6; ++r) {
    ov[(size_t)r * stride] = Xu[r];
    check += Xu[r] - Xu[r];
  }
  for (int r = 0; r < 3; ++r) {
    const double x = Dv[7 * r] * Xu[r] + (cl == r ? Dq[7 * r] : 0.0);
    oq[(size_t)r * stride] = x;
    check += x - x;
  }
  for (int r = 3; r < 6; ++r) {
    double x = 0.0;
    x += Dv[6 * r + 3] * Xu[3];
    x += Dv[6 * r + 4] * Xu[4];
    x += Dv[6 * r + 5] * Xu[5];
    if (cl >= 3 && cl < 6) x += Dq[6 * r + cl];
    oq[(size_t)r * stride] = x;
    check += x - x;
  }
  return check;
}

/* Whether tree u is a free body alone (written by free_body_tile4 / free_body_column). */
static int lone_free(const grit_model *m, int u) {
  return m->tree_dofnum[u] == 6 && m->jnt_type[m->dof_jnt[m->tree_dofadr[u]]] == GRIT_JOINT_FREE;
}

/* The end (exclusive) of the span of island k's trees from list entry e: the next trees that are not
 * free bodies alone and whose dofs follow on, in the state and in the block's rows (a composite's
 * particles, three slides each): their rows are one run of tree_tile4, whose values are per joint, so
 * the same as tree by tree with far fewer calls (ws->no_span_tiles: one tree). */
static inline int span_end(const grit_model *m, const grit_deriv_ws *w, const grit_jacobian_blocks *J, int k, int e) {
  int f = e + 1;
  if (f == J->tptr[k + 1]) return f; /* the island's last tree (an island of one) */
  for (; !w->no_span_tiles && f < J->tptr[k + 1] && !lone_free(m, J->tree[f]); ++f) {
    const int prev = m->tree_dofadr[J->tree[f - 1]] + m->tree_dofnum[J->tree[f - 1]], adr = m->tree_dofadr[J->tree[f]];
    if (adr != prev || J->dof_pos[adr] != J->dof_pos[prev - 1] + 1) break;
  }
  return f;
}

#if GRIT_DERIV_AVX2
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
  int cl[4], own = 0; /* own: one of the columns is one of the body's dq */
  for (int l = 0; l < 4; ++l) cl[l] = col[l] - adr, own |= (unsigned)cl[l] < 6u;
  double e[6][4];
  if (own) memset(e, 0, sizeof e); /* else not read: the translation rows add a zero vector */
  for (int l = 0; own && l < 4; ++l) {
    if (cl[l] >= 0 && cl[l] < 3) e[cl[l]][l] = Dq[7 * cl[l]];
    for (int r = 3; r < 6 && cl[l] >= 3 && cl[l] < 6; ++r) e[r][l] = Dq[6 * r + cl[l]];
  }
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
  int cl[2], own = 0;
  for (int l = 0; l < 2; ++l) cl[l] = col[l] - adr, own |= (unsigned)cl[l] < 6u;
  double e[6][2];
  if (own) memset(e, 0, sizeof e); /* else not read: the translation rows add a zero vector */
  for (int l = 0; own && l < 2; ++l) {
    if (cl[l] >= 0 && cl[l] < 3) e[cl[l]][l] = Dq[7 * cl[l]];
    for (int r = 3; r < 6 && cl[l] >= 3 && cl[l] < 6; ++r) e[r][l] = Dq[6 * r + cl[l]];
  }
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
static __attribute__((target("avx2"))) int free_bodies_tile(const grit_model *m, const grit_deriv_ws *w, int k, int l0,
                                                            const int *ord, int nc, double *out, size_t stride,
                                                            double *check) {
  const grit_jacobian_blocks *J = w->blk;
  const int nv = m->nv, nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
  const double *X[4];
  int cb[4];
  const int *col = w->ids + l0;
  if (ord) {
    for (int l = 0; l < nc; ++l) X[l] = w->rhs + (size_t)ord[l0 + l] * nv, cb[l] = w->ids[ord[l0 + l]];
    col = cb;
  } else {
    for (int l = 0; l < nc; ++l) X[l] = w->rhs + (size_t)(l0 + l) * nv;
  }
  __m256d chk4 = _mm256_setzero_pd();
  __m128d chk2 = _mm_setzero_pd();
  int all = 1;
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
    const int u = J->tree[e], adr = m->tree_dofadr[u];
    double *oq = out + (size_t)J->dof_pos[adr] * stride, *ov = oq + (size_t)nk * stride;
    if (!lone_free(m, u)) {
      if (nc != 4) {
        all = 0;
        continue;
      }
      const int f = span_end(m, w, J, k, e), last = J->tree[f - 1];
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
static __attribute__((target("avx2"))) void run_tiles(const grit_model *m, const grit_deriv_ws *w, int k, int l0,
                                                     const int *ord, int ntile, double *out, size_t stride,
                                                     double *check) {
  const grit_jacobian_blocks *J = w->blk;
  const int nv = m->nv, nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
  const double *X[RHS_BATCH];
  int cb[RHS_BATCH];
  for (int l = 0; l < 4 * ntile; ++l) {
    const int j = ord ? ord[l0 + l] : l0 + l;
    X[l] = w->rhs + (size_t)j * nv, cb[l] = w->ids[j];
  }
  __m256d chk4 = _mm256_setzero_pd();
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
    const int u = J->tree[e], adr = m->tree_dofadr[u];
    double *oq = out + (size_t)J->dof_pos[adr] * stride, *ov = oq + (size_t)nk * stride;
    if (lone_free(m, u)) {
      for (int t = 0; t < ntile; ++t)
        free_body_tile4(w, m->dof_jnt[adr], X + 4 * t, adr, cb + 4 * t, oq + 4 * t, ov + 4 * t, stride, &chk4);
      continue;
    }
    const int f = span_end(m, w, J, k, e), last = J->tree[f - 1];
    const int end = m->tree_dofadr[last] + m->tree_dofnum[last];
    e = f - 1;
    for (int s = adr; s < end;) { /* dofs s .. s1 - 1: whole joints, at least one */
      int s1 = end - s <= RUN_SEG ? end : m->jnt_dofadr[m->dof_jnt[s + RUN_SEG]];
      if (s1 == s) s1 = s + grit_joint_nv(m->jnt_type[m->dof_jnt[s]]);
      const size_t o = (size_t)(s - adr) * stride;
      for (int t = 0; t < ntile; ++t)
        tree_tile4(m, w, s, s1 - s, X + 4 * t, cb + 4 * t, oq + o + 4 * t, ov + o + 4 * t, stride, &chk4);
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
static __attribute__((target("avx2"))) double dense_free_tiles(const grit_model *m, const grit_deriv_ws *w,
                                                               const int *list, int nt, const out_column *c,
                                                               const int *t0, const int *tw, int ntile) {
  __m256d chk4 = _mm256_setzero_pd();
  __m128d chk2 = _mm_setzero_pd();
  for (int e = 0; e < nt; ++e) {
    const int u = list ? list[e] : e, adr = m->tree_dofadr[u], jn = m->dof_jnt[adr];
    if (!lone_free(m, u)) { /* tiles of four only; a span of the next trees whose dofs follow on */
      int f = e + 1, end = adr + m->tree_dofnum[u];
      for (; !w->no_span_tiles && f < nt; ++f) {
        const int v = list ? list[f] : f;
        if (lone_free(m, v) || m->tree_dofadr[v] != end) break;
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
#endif

/* Column col of theta in the block form: its island (returned), its entry in the block's row 0 and
 * the block's row stride. */
static int block_column(const grit_model *m, const grit_jacobian_blocks *J, int col, double **out, size_t *stride) {
  const int nv = m->nv, nx = 2 * nv;
  const int k = J->island[col < nx ? m->dof_tree[col % nv] : m->dof_tree[m->act_dof[col - nx]]];
  const int nk = (J->bptr[k + 1] - J->bptr[k]) / 2, nuk = J->uptr[k + 1] - J->uptr[k];
  if (col < nx) {
    *out = J->A + J->aoff[k] + (col < nv ? J->dof_pos[col] : nk + J->dof_pos[col - nv]);
    *stride = (size_t)(2 * nk);
  } else {
    *out = J->B + J->boff[k] + J->act_pos[col - nx];
    *stride = (size_t)nuk;
  }
  return k;
}

#if GRIT_DERIV_AVX2
/* Whether columns l0 .. l0 + nc - 1 of the batch lie in consecutive columns of one block (out + l), by
 * their islands ks, entries outs and strides (block_column's, once per column). */
static int tile_run(const int *ks, double *const *outs, const size_t *strides, int l0, int nc) {
  for (int l = 1; l < nc; ++l)
    if (ks[l0 + l] != ks[l0] || outs[l0 + l] != outs[l0] + l || strides[l0 + l] != strides[l0]) return 0;
  return 1;
}
#endif

/* write_batch for the block form: each column goes to its island's block, in the island's rows only
 * (the rest of the full A and B is zero: grit/derivatives.h). Column by column, tree by tree: a tree's
 * rows are consecutive in its block (its dofs' positions), so each row's address is a step of the
 * block's stride from the last, and the values are those of write_tree_rows (the same sums). With
 * AVX2, four or two columns in consecutive columns of their block (a pass's columns come tree by tree,
 * a tree's in consecutive columns) have their free bodies' rows written as tiles of 6 rows
 * (free_bodies_tile), the same values: stores of whole rows of the tile instead of one entry per
 * column and row (callgrind, clutter 40 settled, Similar: the writes -49 %). */
/* The q rows of dofs i0 .. i1-1 (whole joints) of one column (col, its solution X), dof i0's row at oq,
 * joint by joint (q_rows_column). */
static double q_rows_joints(const grit_model *m, const grit_deriv_ws *w, int i0, int i1, const double *X, int col,
                            double *oq, size_t stride) {
  double check = 0.0;
  for (int i = i0; i < i1; i += grit_joint_nv(m->jnt_type[m->dof_jnt[i]]))
    check += q_rows_column(m, w, m->dof_jnt[i], X, col, oq + (size_t)(i - i0) * stride, stride);
  return check;
}

/* q_rows_joints with the runs of hinges and slides (w->plain_end) written inline: for a one-dof joint
 * q_rows_column's one row, Dv X + (Dq or 0), the same value without its call and loops (the particles
 * of MuJoCo's composites, three slides each, are written a column at a time: their trees' columns do
 * not come in runs of four for the tiles). */
static double q_rows_runs(const grit_model *m, const grit_deriv_ws *w, int i0, int i1, const double *X, int col,
                          double *oq, size_t stride) {
  double check = 0.0;
  for (int i = i0; i < i1;) {
    int stop = w->plain_end[i]; /* a span of trees (span_end): on into the next tree's hinges and slides */
    while (stop < i1 && w->plain_end[stop] > stop) stop = w->plain_end[stop];
    for (; i < stop; ++i) {
      const int jn = m->dof_jnt[i];
      const double x = w->Dv[36 * jn] * X[i] + (col == i ? w->Dq[36 * jn] : 0.0);
      oq[(size_t)(i - i0) * stride] = x;
      check += x - x;
    }
    if (i == i1) break;
    const int jn = m->dof_jnt[i];
    check += q_rows_column(m, w, jn, X, col, oq + (size_t)(i - i0) * stride, stride);
    i += grit_joint_nv(m->jnt_type[jn]);
  }
  return check;
}

static void write_batch_blocks(const grit_model *m, grit_deriv_ws *w, int n) {
  const int nv = m->nv;
  grit_jacobian_blocks *J = w->blk;
  double check = 0.0;
#if GRIT_DERIV_AVX2
  const int avx2 = __builtin_cpu_supports("avx2");
#endif
  int ks[RHS_BATCH], ord[RHS_BATCH], ids1[RHS_BATCH];
  /* set by block_column for l < n; outs[0] stored first: gcc -O2 -fsanitize took the array passed on to
   * grit_deriv_block_order as maybe uninitialized (zeroing all RHS_BATCH cost a tiny scene's call 0.7 %) */
  double *outs[RHS_BATCH];
  outs[0] = NULL;
  size_t strides[RHS_BATCH];
  for (int l = 0; l < n; ++l) ks[l] = block_column(m, J, w->ids[l], &outs[l], &strides[l]);
  const int moved = !w->no_sorted_writes && grit_deriv_block_order(m, w, J, w->ids, outs, n, ord);
  const int *ids = w->ids;
  if (moved) { /* the columns in that order */
    double *o1[RHS_BATCH];
    size_t s1[RHS_BATCH];
    int k1[RHS_BATCH];
    for (int l = 0; l < n; ++l)
      ids1[l] = w->ids[ord[l]], o1[l] = outs[ord[l]], s1[l] = strides[ord[l]], k1[l] = ks[ord[l]];
    memcpy(ks, k1, sizeof *ks * (size_t)n);
    memcpy(outs, o1, sizeof *outs * (size_t)n);
    memcpy(strides, s1, sizeof *strides * (size_t)n);
    ids = ids1;
  }
  for (int l = 0; l < n;) {
    double *const out = outs[l];
    const size_t stride = strides[l];
    const int k = ks[l];
    const int nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
    int nc = 1, tiled = 0, done = 0;
#if GRIT_DERIV_AVX2
    if (avx2 && !w->no_run_tiles) { /* two tiles of four or more in consecutive columns: run_tiles */
      int r = 1;
      while (l + r < n && ks[l + r] == k && outs[l + r] == out + r && strides[l + r] == stride) ++r;
      if (r >= 8) {
        run_tiles(m, w, k, l, moved ? ord : NULL, r / 4, out, stride, &check);
        w->run_tiles_used++;
        l += r / 4 * 4;
        continue;
      }
    }
    for (int width = 4; avx2 && !tiled && width >= 2; width -= 2)
      if (l + width <= n && tile_run(ks, outs, strides, l, width)) {
        nc = width, tiled = 1;
        done = free_bodies_tile(m, w, k, l, moved ? ord : NULL, width, out, stride, &check); /* all written */
      }
#endif
    if (done) {
      l += nc;
      continue;
    }
    for (int c = 0; c < nc; ++c) {
      const int col = ids[l + c];
      const double *X = w->rhs + (size_t)(moved ? ord[l + c] : l + c) * nv;
      double *oc = out + c;
      for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
        const int u = J->tree[e], adr = m->tree_dofadr[u];
        double *oq = oc + (size_t)J->dof_pos[adr] * stride, *ov = oq + (size_t)nk * stride;
        if (lone_free(m, u)) {
          if (!tiled) check += free_body_column(w, m->dof_jnt[adr], X + adr, col - adr, oq, ov, stride);
          continue;
        }
        const int f = span_end(m, w, J, k, e), last = J->tree[f - 1]; /* trees whose rows follow on */
        const int nu_ = m->tree_dofadr[last] + m->tree_dofnum[last] - adr;
        e = f - 1;
        for (int r = 0; r < nu_; ++r) {
          const double x = X[adr + r];
          ov[(size_t)r * stride] = x;
          check += x - x;
        }
        check += w->no_plain_runs ? q_rows_joints(m, w, adr, adr + nu_, X, col, oq, stride)
                                  : q_rows_runs(m, w, adr, adr + nu_, X, col, oq, stride);
      }
    }
    l += nc;
  }
  if (check != 0.0) w->nonfinite = 1;
}

#if GRIT_DERIV_AVX2
/* Whether the group's columns c[a .. a + wdt - 1] lie in consecutive columns of one output. */
static int dense_run(const out_column *c, int nc, int a, int wdt) {
  if (a + wdt > nc) return 0;
  for (int l = 1; l < wdt; ++l)
    if (c[a + l].out != c[a].out + l || c[a + l].stride != c[a].stride) return 0;
  return 1;
}
#endif

/* Writes the batch's solutions X = dv/dtheta (column j of w->rhs, for column ids[j] of theta) into A, B
 * or P, with the q rows Dq e_col (dq0 columns) + Dv X. Part by part: a column lying in one part of the
 * factor is zero outside its trees' rows, which the caller has zeroed in A and B, so each group of the
 * batch's columns of one part is written in that part's rows only (a column of several parts, or of
 * P, in every row). Row by row within a group: its columns are scattered over the outputs, and a large
 * model's A does not fit in cache; so each row's cache lines are touched once per group, not once per
 * column. Notes in w->nonfinite whether a value written is not finite (x - x is 0 for a finite x, NaN
 * otherwise), so that a finite result is not read again. */
static void write_batch(const grit_model *m, grit_deriv_ws *w, int n, double *A, double *B, double *P, int np) {
  const int nv = m->nv, nu = m->nu, nx = 2 * nv;
  if (w->blk) {
    write_batch_blocks(m, w, n);
    return;
  }
  out_column c[RHS_BATCH];
  char done[RHS_BATCH] = {0};
  double check = 0.0;
#if GRIT_DERIV_AVX2
  const int avx2 = __builtin_cpu_supports("avx2");
#endif
  for (int j = 0; j < n; ++j) {
    if (done[j]) continue;
    const int p = w->part[j];
    int nc = 0;
    for (int l = j; l < n; ++l) { /* the batch's columns of part p */
      if (done[l] || w->part[l] != p) continue;
      const int col = w->ids[l];
      done[l] = 1;
      c[nc].X = w->rhs + (size_t)l * nv;
      c[nc].out = col < nx ? A + col : col < nx + nu ? B + (col - nx) : P + (col - nx - nu);
      c[nc].stride = (size_t)(col < nx ? nx : col < nx + nu ? nu : np);
      c[nc].rmap = NULL;
      c[nc].nloc = 0;
      c[nc++].col = col;
    }
    if (!w->no_sorted_writes && grit_deriv_odd_trees(m, w)) { /* by their columns in the outputs (block_order) */
      size_t key[RHS_BATCH];
      int ord[RHS_BATCH];
      for (int l = 0; l < nc; ++l) key[l] = (size_t)c[l].col;
      if (grit_deriv_run_order(key, nc, ord)) {
        out_column cs[RHS_BATCH];
        memcpy(cs, c, sizeof *c * (size_t)nc);
        for (int l = 0; l < nc; ++l) c[l] = cs[ord[l]];
      }
    }
    const int *list = p < 0 ? NULL : w->ptree + w->ptree_ptr[p];
    const int nt = p < 0 ? m->ntree : w->ptree_ptr[p + 1] - w->ptree_ptr[p];
    out_column rest[RHS_BATCH], rest2[RHS_BATCH]; /* the columns not in tiles; not in tiles of four */
    int ntile = 0, nrest = 0, nrest2 = 0;
#if GRIT_DERIV_AVX2
    /* with AVX2, the group's runs of four or two columns in consecutive columns of their output: the
     * free bodies' rows as tiles (free_body_tile4), the other columns row by row as below */
    int t0[RHS_BATCH], tw[RHS_BATCH];
    for (int a = 0; avx2 && a < nc;) {
      int wdt = 4;
      while (wdt >= 2 && !dense_run(c, nc, a, wdt)) wdt -= 2;
      if (wdt >= 2) t0[ntile] = a, tw[ntile++] = wdt, a += wdt;
      else rest[nrest++] = c[a++];
      for (int l = a - (wdt >= 2 ? wdt : 1); wdt < 4 && l < a; ++l) rest2[nrest2++] = c[l];
    }
    if (ntile) check += dense_free_tiles(m, w, list, nt, c, t0, tw, ntile);
#endif
    for (int e = 0; e < nt; ++e) {
      const int u = list ? list[e] : e;
      const int tiled = ntile > 0 && m->tree_dofnum[u] == 6 && m->jnt_type[m->dof_jnt[m->tree_dofadr[u]]] == GRIT_JOINT_FREE;
      check += tiled ? write_tree_rows(m, w, u, rest, nrest) : ntile ? write_tree_rows(m, w, u, rest2, nrest2)
                                                                     : write_tree_rows(m, w, u, c, nc);
    }
  }
  if (check != 0.0) w->nonfinite = 1; /* NaN != 0 */
}

/* Solves the batch of right-hand sides with the kept factor and writes the columns out. */
grit_status grit_deriv_flush(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, double *A, double *B, double *P, int np) {
  if (bt->n == 0) return GRIT_OK;
  const grit_model *m = d->model;
  for (int j = 0; j < bt->n; ++j) w->part[j] = grit_deriv_column_part(m, w, w->ids[j]);
  const double t0 = grit_deriv_tick(w);
  grit_status s = grit_solver_factor_solve_parts(d->solver, w->rhs, bt->n, w->tree_part ? w->part : NULL);
  if (s != GRIT_OK) return grit_set_error(d->message, s, "derivatives: solve with the kept factor failed");
  const double t1 = grit_deriv_tick(w);
  /* written RHS_BATCH columns at a time (write_batch's arrays): the slice's columns, ids and parts */
  double *const rhs = w->rhs;
  int *const ids = w->ids, *const part = w->part;
  for (int l0 = 0; l0 < bt->n; l0 += RHS_BATCH) {
    w->rhs = rhs + (size_t)l0 * m->nv, w->ids = ids + l0, w->part = part + l0;
    write_batch(m, w, bt->n - l0 < RHS_BATCH ? bt->n - l0 : RHS_BATCH, A, B, P, np);
  }
  w->rhs = rhs, w->ids = ids, w->part = part;
  w->tphase[4] += t1 - t0;
  w->tphase[5] += grit_deriv_tick(w) - t1;
  bt->n = 0;
  return GRIT_OK;
}
