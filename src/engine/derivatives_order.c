/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_order.c — the order in which a batch's columns are written (derivatives_columns.c): the
 * passes put a tree's columns of a pass side by side, which the writes take four at a time as tiles;
 * but position passes seed trees by colours, so neighbouring trees' columns come in different passes,
 * and a composite's particles (three columns a pass) leave many columns to the slower writes a column
 * at a time. Ordered by their entries in the outputs, those columns follow on and tile. The values do
 * not change: each entry is written once, by the same operations (ws->no_sorted_writes: the batch's
 * order). */
#include "derivatives_internal.h"

/* Whether the batch's runs of consecutive columns (a pass's columns of one tree; adj[l]: column l
 * follows on from column l - 1) leave many columns out of the tiles: a run of odd length leaves one to
 * the writes a column at a time, and when those are at least an eighth of the batch, ordering it pays
 * (a composite's particles, three columns a pass); else (a humanoid's 27, free bodies' 6) it costs more
 * than it saves. */
static int odd_runs_many(const char *adj, int n) {
  int odd = 0, run = 1;
  for (int l = 1; l < n; ++l) {
    if (adj[l]) ++run;
    else odd += run & 1, run = 1;
  }
  return 8 * (odd + (run & 1)) >= n;
}

/* Whether a pass's run of a tree's columns can have odd length: only if some tree's dofs or actuators
 * leave an odd remainder of GRIT_DUAL_N (else, free bodies: never, and no batch is reordered). The
 * model's, found once, in a call's first write (after the passes' act_ptr; a call of parameter columns
 * alone may find act_ptr unset: then only the order of its writes is affected, never a value). */
int grit_deriv_odd_trees(const grit_model *m, grit_deriv_ws *w) {
  if (!w->odd_known) {
    w->odd_known = 1, w->odd_trees = 0;
    for (int t = 0; t < m->ntree; ++t) w->odd_trees |= (m->tree_dofnum[t] % GRIT_DUAL_N) & 1;
    for (int t = 0; t < m->ntree; ++t) /* the trees' actuators: act_ptr, from the model alone (colour.c) */
      w->odd_trees |= ((w->act_ptr[t + 1] - w->act_ptr[t]) % GRIT_DUAL_N) & 1;
  }
  return w->odd_trees;
}

/* ord[0..n-1]: the order of the n keys (distinct), ascending; returns whether it is not the identity
 * (0 without ordering where that does not pay: odd_runs_many). The batch comes in runs of consecutive
 * keys, and such runs are disjoint ranges: so the runs are ordered by their first keys (an insertion
 * sort of the runs, on the stack), not the keys one by one. */
int grit_deriv_run_order(const size_t *key, int n, int *ord) {
  char adj[RHS_BATCH];
  for (int l = 1; l < n; ++l) adj[l] = key[l] == key[l - 1] + 1;
  if (!odd_runs_many(adj, n)) return 0;
  int head[RHS_BATCH], len[RHS_BATCH], r = 0, moved = 0;
  for (int l = 0; l < n;) {
    int e = l + 1;
    while (e < n && adj[e]) ++e;
    head[r] = l, len[r++] = e - l, l = e;
  }
  for (int i = 1; i < r; ++i) {
    const int h = head[i], ln = len[i];
    int j = i;
    for (; j > 0 && key[head[j - 1]] > key[h]; --j) head[j] = head[j - 1], len[j] = len[j - 1];
    head[j] = h, len[j] = ln, moved |= j != i;
  }
  for (int i = 0, o = 0; i < r; ++i)
    for (int q = 0; q < len[i]; ++q) ord[o++] = head[i] + q;
  return moved;
}

/* The batch's n columns in the order of their entries in the blocks (B's after A's), into ord: a pass
 * seeds its trees' columns side by side, but by colours a pass's trees are not neighbours, so in the
 * batch's order few columns follow on in their block; in this order the position passes' columns of
 * neighbouring trees come together, and the writes take them as tiles (the same values: each entry is
 * written once, by the same operations). */
int grit_deriv_block_order(const grit_model *m, grit_deriv_ws *w, const grit_jacobian_blocks *J, const int *ids,
                           double *const *outs, int n, int *ord) {
  if (!grit_deriv_odd_trees(m, w)) return 0;
  int odd = 0, run = 1; /* odd_runs_many on the entries themselves, before any key is formed */
  for (int l = 1; l < n; ++l) {
    if (outs[l] == outs[l - 1] + 1) ++run;
    else odd += run & 1, run = 1;
  }
  if (8 * (odd + (run & 1)) < n) return 0;
  size_t key[RHS_BATCH];
  for (int l = 0; l < n; ++l)
    key[l] = ids[l] < 2 * m->nv ? (size_t)(outs[l] - J->A) : J->aoff[J->nblock] + (size_t)(outs[l] - J->B);
  return grit_deriv_run_order(key, n, ord);
}
