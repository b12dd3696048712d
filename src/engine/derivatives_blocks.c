/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_blocks.c — the step's A and B in block-sparse form, one dense block per island
 * (grit/derivatives.h). Within a step a tree moves only the trees its constraints connect it to, so the
 * columns of one island's state and controls are zero outside its rows: the blocks hold all of A and
 * B. The islands are found here from the last step's constraints; the columns are computed by the same
 * passes and solves as the dense form (derivatives.c), which write each column into its island's
 * block (derivatives_columns.c: write_batch_blocks), so every entry is bit for bit the dense one. */
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "arena.h"
#include "derivatives_internal.h"
#include "solver.h"
#include "status_internal.h"

static void blocks_layout(const grit_model *m, grit_jacobian_blocks *J, grit_carver *c) {
  const int nt = m->ntree;
  GRIT_CARVE(c, J->island, nt);
  GRIT_CARVE(c, J->tptr, nt + 1);
  GRIT_CARVE(c, J->tree, nt);
  GRIT_CARVE(c, J->bptr, nt + 1);
  GRIT_CARVE(c, J->state, 2 * m->nv);
  GRIT_CARVE(c, J->uptr, nt + 1);
  GRIT_CARVE(c, J->ctrl, m->nu);
  GRIT_CARVE(c, J->dof_pos, m->nv);
  GRIT_CARVE(c, J->act_pos, m->nu);
  GRIT_CARVE(c, J->aoff, nt + 1);
  GRIT_CARVE(c, J->boff, nt + 1);
  GRIT_CARVE(c, J->zptr, nt + 1);
  GRIT_CARVE(c, J->zrange, 2 * nt);
  GRIT_CARVE(c, J->zmode, nt);
  if (m->na == 0) { /* the caller's layout is the passes' */
    J->xptr = J->bptr, J->xstate = J->state, J->xaoff = J->aoff, J->xboff = J->boff;
    return;
  }
  GRIT_CARVE(c, J->xptr, nt + 1);
  GRIT_CARVE(c, J->xstate, 2 * m->nv + m->na);
  GRIT_CARVE(c, J->xaoff, nt + 1);
  GRIT_CARVE(c, J->xboff, nt + 1);
  GRIT_CARVE(c, J->xdyn, m->nu);
}

grit_status grit_jacobian_blocks_create(const grit_model *m, grit_jacobian_blocks **out) {
  if (!out) return GRIT_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return GRIT_ERR_INVALID_ARGUMENT;
  grit_jacobian_blocks *J = calloc(1, sizeof *J);
  if (!J) return GRIT_ERR_OUT_OF_MEMORY;
  grit_carver c = {NULL, 0};
  blocks_layout(m, J, &c);
  J->arena = calloc(1, c.used + 64);
  if (!J->arena) {
    free(J);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  c.base = J->arena;
  c.used = 0;
  blocks_layout(m, J, &c);
  J->m = m;
  *out = J;
  return GRIT_OK;
}

void grit_jacobian_blocks_free(grit_jacobian_blocks *J) {
  if (!J) return;
  free(J->A);
  free(J->B);
  free(J->arena);
  free(J);
}

/* Grows one value array to at least n doubles (at least doubling, so that growth is rare). */
static grit_status grow(double **v, size_t *cap, size_t n) {
  if (n <= *cap) return GRIT_OK;
  const size_t want = n > 2 * *cap ? n : 2 * *cap;
  double *p = realloc(*v, sizeof(double) * (want > 0 ? want : 1));
  if (!p) return GRIT_ERR_OUT_OF_MEMORY;
  *v = p;
  *cap = want;
  return GRIT_OK;
}

grit_status grit_jacobian_blocks_reserve(grit_jacobian_blocks *J, size_t na, size_t nb) {
  if (!J) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status s = grow(&J->A, &J->capA, na);
  return s != GRIT_OK ? s : grow(&J->B, &J->capB, nb);
}

/* The root of tree t in the union-find forest `parent` (path halving). */
static int find_root(int *parent, int t) {
  while (parent[t] != t) {
    parent[t] = parent[parent[t]];
    t = parent[t];
  }
  return t;
}

/* Joins trees a and b's sets (the smaller root becomes the root). */
static void join(int *parent, int a, int b) {
  a = find_root(parent, a), b = find_root(parent, b);
  if (a != b) parent[a > b ? a : b] = a < b ? a : b;
}

/* The caller's layout with activations: block k's states are its (q, v) states, then the activations
 * of its actuators (in the order of its controls), as indices 2 nv + act of the full state tangent; an
 * activation moves only its own actuator's force, whose transmission moves one tree (actuation.c), so
 * it couples to that tree's island alone. */
static void act_layout(const grit_model *m, grit_jacobian_blocks *J) {
  J->xptr[0] = 0;
  J->xaoff[0] = J->xboff[0] = 0;
  for (int k = 0; k < J->nblock; ++k) {
    int *xs = J->xstate + J->xptr[k], n = J->bptr[k + 1] - J->bptr[k];
    memcpy(xs, J->state + J->bptr[k], sizeof(int) * (size_t)n);
    int *pos = J->xdyn + J->uptr[k]; /* the actuators with dynamics, then the others */
    for (int e = J->uptr[k]; e < J->uptr[k + 1]; ++e)
      if (m->act_actadr[J->ctrl[e]] >= 0) *pos++ = e - J->uptr[k], xs[n++] = 2 * m->nv + m->act_actadr[J->ctrl[e]];
    for (int e = J->uptr[k]; e < J->uptr[k + 1]; ++e)
      if (m->act_actadr[J->ctrl[e]] < 0) *pos++ = e - J->uptr[k];
    J->xptr[k + 1] = J->xptr[k] + n;
    J->xaoff[k + 1] = J->xaoff[k] + (size_t)n * (size_t)n;
    J->xboff[k + 1] = J->xboff[k] + (size_t)n * (size_t)(J->uptr[k + 1] - J->uptr[k]);
  }
}

/* The islands of the last step, numbered in the order of their first tree; then each island's trees,
 * dofs, actuators and blocks' offsets. When the kept factor has parts (the components of H: a column
 * of A or B is zero outside its part's rows), the islands are those parts, joined along the
 * constraints that couple trees in the residual (w->adj; within a part, by construction). Else (one
 * part: the dense path, or everything coupled) they are the components of the trees joined by every
 * constraint between two trees, touching or not, so that no coupling of H is left out. */
static void find_islands(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, grit_jacobian_blocks *J) {
  const int nt = m->ntree, nv = m->nv;
  int *parent = J->tree, *first = J->bptr; /* scratch until the trees are listed by island */
  for (int t = 0; t < nt; ++t) parent[t] = t;
  if (w->tree_part) {
    for (int t = 0; t < nt; ++t) first[w->tree_part[t]] = -1;
    for (int t = 0; t < nt; ++t) {
      int *f = &first[w->tree_part[t]];
      if (*f < 0) *f = t;
      else join(parent, *f, t);
    }
    for (int t = 0; t < nt; ++t)
      for (int e = w->adj_ptr[t]; e < w->adj_ptr[t + 1]; ++e) join(parent, t, w->adj[e]);
  } else {
    const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
    for (int i = 0; i < d->stats.nconstraints; ++i)
      if (c[i].ntree == 2) join(parent, c[i].tree[0], c[i].tree[1]);
  }
  int nb = 0;
  for (int t = 0; t < nt; ++t) { /* a root is its island's first tree: islands in order of first tree */
    const int r = find_root(parent, t);
    J->island[t] = r == t ? nb++ : J->island[r];
  }
  J->nblock = nb;
  for (int k = 0; k <= nb; ++k) J->tptr[k] = J->uptr[k] = 0;
  for (int t = 0; t < nt; ++t) J->tptr[J->island[t] + 1]++;
  for (int a = 0; a < m->nu; ++a) J->uptr[J->island[m->dof_tree[m->act_dof[a]]] + 1]++;
  for (int k = 0; k < nb; ++k) J->tptr[k + 1] += J->tptr[k], J->uptr[k + 1] += J->uptr[k];
  int *fill = J->bptr; /* scratch cursors */
  for (int k = 0; k < nb; ++k) fill[k] = J->tptr[k];
  for (int t = 0; t < nt; ++t) J->tree[fill[J->island[t]]++] = t;
  for (int k = 0; k < nb; ++k) fill[k] = J->uptr[k];
  for (int a = 0; a < m->nu; ++a) {
    const int k = J->island[m->dof_tree[m->act_dof[a]]];
    J->act_pos[a] = fill[k] - J->uptr[k];
    J->ctrl[fill[k]++] = a;
  }
  J->bptr[0] = 0;
  J->aoff[0] = J->boff[0] = 0;
  J->zptr[0] = 0;
  for (int k = 0; k < nb; ++k) { /* the block's state: its dofs' dq, then their dv */
    int n = 0;
    for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e)
      for (int i = m->tree_dofadr[J->tree[e]]; i < m->tree_dofadr[J->tree[e]] + m->tree_dofnum[J->tree[e]]; ++i)
        J->dof_pos[i] = n, J->state[J->bptr[k] + n++] = i;
    for (int i = 0; i < n; ++i) J->state[J->bptr[k] + n + i] = nv + J->state[J->bptr[k] + i];
    J->bptr[k + 1] = J->bptr[k] + 2 * n;
    J->zptr[k + 1] = J->zptr[k]; /* the island's dofs as runs of consecutive state rows (zero_rows) */
    const int ntk = J->tptr[k + 1] - J->tptr[k];
    for (int e = J->tptr[k]; !w->no_zero_runs && ntk >= 4 && e < J->tptr[k + 1]; ++e) {
      const int a = m->tree_dofadr[J->tree[e]], b = a + m->tree_dofnum[J->tree[e]], z = J->zptr[k + 1];
      if (z > J->zptr[k] && J->zrange[2 * z - 1] == a) J->zrange[2 * z - 1] = b;
      else J->zrange[2 * z] = a, J->zrange[2 * z + 1] = b, J->zptr[k + 1]++;
    }
    if (4 * (J->zptr[k + 1] - J->zptr[k]) > ntk) J->zptr[k + 1] = J->zptr[k]; /* few trees a run: tree by tree */
    J->zmode[k] = w->no_zero_runs || (ntk > 1 && J->zptr[k + 1] == J->zptr[k]) ? 0 : ntk == 1 ? 1 : 2;
    J->aoff[k + 1] = J->aoff[k] + (size_t)(2 * n) * (size_t)(2 * n);
    J->boff[k + 1] = J->boff[k] + (size_t)(2 * n) * (size_t)(J->uptr[k + 1] - J->uptr[k]);
  }
  if (m->na > 0) act_layout(m, J);
}

grit_status grit_deriv_blocks_prepare(grit_data *d, grit_deriv_ws *w) {
  grit_jacobian_blocks *J = w->blk;
  find_islands(d->model, d, w, J);
  /* room for the caller's layout, which holds the passes' (activations only add rows and columns) */
  grit_status s = grit_jacobian_blocks_reserve(J, J->xaoff[J->nblock], J->xboff[J->nblock]);
  if (s != GRIT_OK) return grit_set_error(d->message, s, "derivatives: no memory for the blocks");
  return GRIT_OK;
}

/* Island k's runs of consecutive trees' rows zeroed, a run at a time. */
static __attribute__((noinline)) void zero_runs(const grit_jacobian_blocks *J, int k, double *x) {
  for (int z = J->zptr[k]; z < J->zptr[k + 1]; ++z)
    memset(x + J->zrange[2 * z], 0, sizeof(double) * (size_t)(J->zrange[2 * z + 1] - J->zrange[2 * z]));
}

void grit_deriv_blocks_zero_rows(const grit_model *m, const grit_jacobian_blocks *J, int t, double *x) {
  const int k = J->island[t];
  if (J->zmode[k] == 1) return; /* t alone in its island: the caller copies all its rows */
  if (J->zmode[k] == 2) { /* an island of runs of at least four trees (many particles) */
    zero_runs(J, k, x);
    return;
  }
  for (int e = J->tptr[k]; e < J->tptr[k + 1]; ++e) grit_deriv_zero_tree_rows(m, J->tree[e], x);
}

/* B's columns times the controls' clamps dw/du (actuation_chain in derivatives.c, without activations).
 * A control inside its range has dw/du = 1, and 1 x is x (bit for bit; a quiet NaN too): such a
 * column is left as it is (the scaling was a strided pass over B, 1.3 % of the humanoid's call). */
static void blocks_chain(const grit_model *m, const grit_data *d, grit_deriv_ws *w, grit_jacobian_blocks *J) {
  for (int a = 0; a < m->nu; ++a) w->uc[a] = grit_dual_var(d->uprev[a], 0);
  grit_actuator_input_dual(m, w->uc, w->ac, w->wc);
  for (int a = 0; a < m->nu; ++a) {
    const int k = J->island[m->dof_tree[m->act_dof[a]]], nx = J->bptr[k + 1] - J->bptr[k];
    const int nuk = J->uptr[k + 1] - J->uptr[k];
    const double s = w->wc[a].d[0];
    if (s == 1.0 && !w->no_unit_clamp) continue;
    double *col = J->B + J->boff[k] + J->act_pos[a];
    for (int i = 0; i < nx; ++i) col[(size_t)i * nuk] = s * col[(size_t)i * nuk];
  }
}

/* With activations (na > 0): the chain rule of actuation of the dense form (actuation_chain in
 * derivatives.c) applied block by block, while the values move from the passes' layout to the caller's
 * (act_layout). An actuator with dynamics has w = act: its (q, v) column of B becomes the activation's
 * column of A, its control reaching only the activation's row (d act+ / d u), which has one more entry,
 * d act+ / d act; any other actuator's column is scaled by its clamp's dw/du. The same products and
 * copies as the dense form, so the same bits. In place, from the last block and row down: the caller's
 * layout starts each block and row at or after the passes' (xaoff >= aoff, rows no shorter, B's rows the
 * same length), so nothing is overwritten before it is read. */
static void blocks_activations(const grit_model *m, const grit_data *d, grit_deriv_ws *w, grit_jacobian_blocks *J) {
  for (int a = 0; a < m->nu; ++a) w->uc[a] = grit_dual_var(d->uprev[a], 0);
  for (int k = 0; k < m->na; ++k) w->ac[k] = grit_dual_var(d->actprev[k], 1);
  grit_actuator_input_dual(m, w->uc, w->ac, w->wc);
  grit_actuator_act_next_dual(m, w->uc, w->ac, m->opt.timestep, w->an);
  for (int k = J->nblock - 1; k >= 0; --k) {
    const int n = J->bptr[k + 1] - J->bptr[k], nx = J->xptr[k + 1] - J->xptr[k], np = nx - n;
    const int nuk = J->uptr[k + 1] - J->uptr[k], *ctrl = J->ctrl + J->uptr[k], *dyn = J->xdyn + J->uptr[k];
    const double *Aq = J->A + J->aoff[k], *Bq = J->B + J->boff[k];
    double *A = J->A + J->xaoff[k], *B = J->B + J->xboff[k];
    /* the activations' rows, after the passes' block: d act+ / d act and d act+ / d u (zeroed row by
     * row: glibc's memset of a whole block turns to rep stosb, an instruction per byte under callgrind) */
    for (int p = 0; p < np; ++p) {
      const int ka = m->act_actadr[ctrl[dyn[p]]];
      double *ra = A + (size_t)(n + p) * nx, *rb = B + (size_t)(n + p) * nuk;
      memset(ra, 0, sizeof(double) * (size_t)nx);
      memset(rb, 0, sizeof(double) * (size_t)nuk);
      ra[n + p] = w->an[ka].d[1];
      rb[dyn[p]] = w->an[ka].d[0];
    }
    const int run = np > 0 && dyn[np - 1] - dyn[0] == np - 1; /* consecutive controls (all, often) */
    for (int i = n - 1; i >= 0; --i) { /* (q, v) rows: A's moved, then its activation columns from B */
      double *row = A + (size_t)i * nx;
      const double *bq = Bq + (size_t)i * nuk;
      memmove(row, Aq + (size_t)i * n, sizeof(double) * (size_t)n);
      if (run) memcpy(row + n, bq + dyn[0], sizeof(double) * (size_t)np);
      else
        for (int p = 0; p < np; ++p) row[n + p] = bq[dyn[p]];
    }
    /* then B's: zero for an activation's control (its (q, v) columns were read above), else times dw/du */
    const int *stat = dyn + np, ns = nuk - np;
    for (int i = n - 1; i >= 0; --i) {
      double *row = B + (size_t)i * nuk;
      const double *bq = Bq + (size_t)i * nuk;
      if (ns == 0) {
        memset(row, 0, sizeof(double) * (size_t)nuk);
        continue;
      }
      for (int e = ns - 1; e >= 0; --e) row[stat[e]] = w->wc[ctrl[stat[e]]].d[0] * bq[stat[e]];
      for (int p = 0; p < np; ++p) row[dyn[p]] = 0.0;
    }
  }
}

grit_status grit_step_derivatives_blocks(grit_data *d, grit_jacobian_blocks *J) {
  if (!d || !J) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  if (J->m != m)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "derivatives: the blocks were made for another model");
  if (d->has_prev && d->prev_integrator == GRIT_INTEGRATOR_QUASISTATIC)
    return grit_set_error(d->message, GRIT_ERR_UNSUPPORTED,
                          "derivatives: the block form does not support quasistatic steps yet; use "
                          "grit_step_derivatives");
  /* the islands and their room are set by the passes (grit_deriv_blocks_prepare): J->A and J->B here
   * only say which columns to compute */
  grit_status s = grit_jacobian_blocks_reserve(J, 1, m->nu > 0 ? 1 : 0);
  if (s != GRIT_OK) return grit_set_error(d->message, s, "derivatives: no memory for the blocks");
  grit_deriv_ws *w = d->deriv;
  w->blk = J;
  s = grit_deriv_qv(d, J->A, m->nu > 0 ? J->B : NULL);
  w->blk = NULL;
  if (s != GRIT_OK) {
    J->nblock = 0;
    return s;
  }
  if (m->na > 0) blocks_activations(m, d, w, J);
  else if (m->nu > 0) blocks_chain(m, d, w, J);
  return GRIT_OK;
}

int grit_jacobian_blocks_count(const grit_jacobian_blocks *J) {
  return J ? J->nblock : 0;
}

grit_status grit_jacobian_blocks_get(const grit_jacobian_blocks *J, int k, grit_jacobian_block *out) {
  if (!J || !out || k < 0 || k >= J->nblock) return GRIT_ERR_INVALID_ARGUMENT;
  out->nx = J->xptr[k + 1] - J->xptr[k];
  out->nu = J->uptr[k + 1] - J->uptr[k];
  out->state = J->xstate + J->xptr[k];
  out->ctrl = J->ctrl + J->uptr[k];
  out->A = J->A + J->xaoff[k];
  out->B = J->B ? J->B + J->xboff[k] : NULL;
  return GRIT_OK;
}

size_t grit_jacobian_blocks_bytes(const grit_jacobian_blocks *J) {
  return J ? sizeof(double) * (J->xaoff[J->nblock] + J->xboff[J->nblock]) : 0;
}

size_t grit_jacobian_blocks_capacity_bytes(const grit_jacobian_blocks *J) {
  return J ? sizeof(double) * (J->capA + J->capB) : 0;
}

grit_status grit_jacobian_blocks_to_dense(const grit_jacobian_blocks *J, double *A, double *B) {
  if (!J) return GRIT_ERR_INVALID_ARGUMENT;
  const int nx = 2 * J->m->nv + J->m->na, nu = J->m->nu; /* x = (q, v, act) */
  if (A) memset(A, 0, sizeof(double) * (size_t)nx * (size_t)nx);
  if (B) memset(B, 0, sizeof(double) * (size_t)nx * (size_t)nu);
  for (int k = 0; k < J->nblock; ++k) {
    grit_jacobian_block b;
    grit_jacobian_blocks_get(J, k, &b);
    for (int i = 0; i < b.nx; ++i) {
      for (int j = 0; A && j < b.nx; ++j) A[(size_t)b.state[i] * nx + b.state[j]] = b.A[(size_t)i * b.nx + j];
      for (int j = 0; B && j < b.nu; ++j) B[(size_t)b.state[i] * nu + b.ctrl[j]] = b.B[(size_t)i * b.nu + j];
    }
  }
  return GRIT_OK;
}
