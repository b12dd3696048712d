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
#include "derivatives_tiles.h"
#include "dynamics.h"
#include "quasistatic.h"
#include "solver.h"
#include "status_internal.h"
#include "timing.h"

double grit_deriv_tick(const grit_deriv_ws *w) {
  return w->timing ? grit_clock_us() : 0.0;
}

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

enum { ROW_AHEAD = 4 }; /* rows ahead of the writes a prefetch hint is for (2, 4, 8 measured alike) */

/* A column waiting to be written by write_group: its solution X, theta id, entry in its block's row 0,
 * the block's row stride, and whether its free bodies' rows are already written (a tile). */
typedef struct {
  const double *X;
  int col;
  double *out;
  size_t stride;
  int tiled;
} pending_column;

/* Writes the rows of block k of the columns p[0..np-1] (all of block k), tree by tree (a span of trees
 * whose rows follow on at a time), each tree's rows for every column before the next tree's: the same
 * values as column by column (each entry by the same operations; one stride: A's or B's columns), but a big block's row is 48 kB in a
 * composite's island, so a column down the block touches a cache line a row, and a position pass's
 * columns (a tree's three, then far away) touch each line again column after column. A span of hinges
 * and slides only (w->plain_end) is written row by row over all the columns: each row's lines once a
 * group (particle.xml's writes: see docs/performance.md, stop 31 rows7). Returns the sum of x - x. */
static double write_group(const grit_model *m, grit_deriv_ws *w, int k, const pending_column *p, int np) {
  const grit_jacobian_blocks *J = w->blk;
  const int nk = (J->bptr[k + 1] - J->bptr[k]) / 2;
  double check = 0.0;
  w->row_groups_used += np > 1;
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) {
    const int u = J->tree[e], adr = m->tree_dofadr[u];
    const size_t pos = (size_t)J->dof_pos[adr];
    if (grit_deriv_lone_free(m, u)) {
      for (int c = 0; c < np; ++c) {
        if (p[c].tiled) continue;
        double *oq = p[c].out + pos * p[c].stride, *ov = oq + (size_t)nk * p[c].stride;
        check += free_body_column(w, m->dof_jnt[adr], p[c].X + adr, p[c].col - adr, oq, ov, p[c].stride);
      }
      continue;
    }
    const int f = grit_deriv_span_end(m, w, J, k, e), last = J->tree[f - 1]; /* trees whose rows follow on */
    const int nu_ = m->tree_dofadr[last] + m->tree_dofnum[last] - adr, end = adr + nu_;
    e = f - 1;
    int g = w->plain_end[adr]; /* plain: the span's dofs are all hinges and slides (q_rows_runs' runs) */
    if (g > adr)
      while (g < end && w->plain_end[g] > g) g = w->plain_end[g];
    if (np > 1 && !w->no_plain_runs && g > adr && g >= end) {
      const size_t stride = p[0].stride; /* one block: one stride */
      int head[RHS_BATCH], nh = 0; /* the group's runs of consecutive columns: their first columns */
      for (int c = 0; c < np; ++c)
        if (c == 0 || p[c].out != p[c - 1].out + 1) head[nh++] = c;
      for (int i = adr; i < end; ++i) {
        const int jn = m->dof_jnt[i];
        const double dv = w->Dv[36 * jn], dq = w->Dq[36 * jn];
        const size_t oq = (pos + (size_t)(i - adr)) * stride, ov = oq + (size_t)nk * stride;
        /* rows 48 kB apart: the hardware prefetcher does not follow them; a hint for the span's row a few
         * ahead, a line a run (particle.xml's group writes -25 %) */
        if (i + ROW_AHEAD < end)
          for (int h = 0; h < nh; ++h) {
            __builtin_prefetch(p[head[h]].out + ov + ROW_AHEAD * stride, 1);
            __builtin_prefetch(p[head[h]].out + oq + ROW_AHEAD * stride, 1);
          }
        for (int c = 0; c < np; ++c) {
          const double x = p[c].X[i];
          p[c].out[ov] = x;
          check += x - x;
        }
        for (int c = 0; c < np; ++c) { /* q_rows_runs' value */
          const double x = dv * p[c].X[i] + (p[c].col == i ? dq : 0.0);
          p[c].out[oq] = x;
          check += x - x;
        }
      }
      continue;
    }
    for (int c = 0; c < np; ++c) {
      const size_t stride = p[c].stride;
      const double *X = p[c].X;
      double *oq = p[c].out + pos * stride, *ov = oq + (size_t)nk * stride;
      for (int r = 0; r < nu_; ++r) {
        const double x = X[adr + r];
        ov[(size_t)r * stride] = x;
        check += x - x;
      }
      check += w->no_plain_runs ? q_rows_joints(m, w, adr, end, X, p[c].col, oq, stride)
                                : q_rows_runs(m, w, adr, end, X, p[c].col, oq, stride);
    }
  }
  return check;
}

static void write_batch_blocks(const grit_model *m, grit_deriv_ws *w, int n) {
  grit_jacobian_blocks *J = w->blk;
  double check = 0.0;
#if GRIT_DERIV_AVX2
  const int avx2 = __builtin_cpu_supports("avx2");
#endif
  int ks[RHS_BATCH], ord[RHS_BATCH], ids1[RHS_BATCH];
  pending_column pend[RHS_BATCH];
  int np_ = 0, pk = -1;
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
    /* two tiles of four or more in consecutive columns of a block past 512 kB (one that stays in cache gains
     * nothing: MuJoCo's humanoid +0.6 % instructions): grit_deriv_run_tiles */
    if (avx2 && !w->no_run_tiles && (size_t)2 * (size_t)nk * stride >= ((size_t)1 << 16)) {
      int r = 1;
      while (l + r < n && ks[l + r] == k && outs[l + r] == out + r && strides[l + r] == stride) ++r;
      if (r >= 8) {
        grit_deriv_run_tiles(m, w, k, l, moved ? ord : NULL, r / 4, out, stride, &check);
        w->run_tiles_used++;
        l += r / 4 * 4;
        continue;
      }
    }
    for (int width = 4; avx2 && !tiled && width >= 2; width -= 2)
      if (l + width <= n && tile_run(ks, outs, strides, l, width)) {
        nc = width, tiled = 1;
        done = grit_deriv_free_bodies_tile(m, w, k, l, moved ? ord : NULL, width, out, stride, &check); /* all written */
      }
#endif
    if (done) {
      l += nc;
      continue;
    }
    /* columns l .. l + nc - 1 join block k's group of A's or B's columns (written when the block or the
     * stride changes or at the end; the tiles write other entries meanwhile); a block under 512 kB, in cache, takes them one at a time */
    if (np_ && (pk != k || pend[0].stride != stride)) check += write_group(m, w, pk, pend, np_), np_ = 0;
    const int group = !w->no_row_groups && (size_t)2 * (size_t)nk * stride >= ((size_t)1 << 16);
    pk = k;
    for (int c = 0; c < nc; ++c) {
      const int j = moved ? ord[l + c] : l + c;
      pend[np_++] = (pending_column){w->xcol[j], ids[l + c], out + c, stride, tiled};
      if (!group) check += write_group(m, w, pk, pend, np_), np_ = 0;
    }
    l += nc;
  }
  if (np_) check += write_group(m, w, pk, pend, np_);
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
      c[nc].X = w->xcol[l];
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
    if (ntile) check += grit_deriv_dense_free_tiles(m, w, list, nt, c, t0, tw, ntile);
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
  /* compact columns (derivatives_rhs.c) by their pointers; full ones as nv-row columns nv apart */
  grit_status s = w->rhs_compact ? grit_solver_factor_solve_cols(d->solver, w->xcol, bt->n, w->part)
                                 : grit_solver_factor_solve_parts(d->solver, w->rhs, bt->n, w->tree_part ? w->part : NULL);
  if (s != GRIT_OK) return grit_set_error(d->message, s, "derivatives: solve with the kept factor failed");
  const double t1 = grit_deriv_tick(w);
  /* written RHS_BATCH columns at a time (write_batch's arrays): the slice's columns, ids and parts */
  double **const xcol = w->xcol;
  int *const ids = w->ids, *const part = w->part;
  for (int l0 = 0; l0 < bt->n; l0 += RHS_BATCH) {
    w->xcol = xcol + l0, w->ids = ids + l0, w->part = part + l0;
    write_batch(m, w, bt->n - l0 < RHS_BATCH ? bt->n - l0 : RHS_BATCH, A, B, P, np);
  }
  w->xcol = xcol, w->ids = ids, w->part = part;
  w->tphase[4] += t1 - t0;
  w->tphase[5] += grit_deriv_tick(w) - t1;
  bt->n = 0;
  bt->used = 0;
  return GRIT_OK;
}
