/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tiles.h — the block and dense forms' writes of four (or two) columns at a time with AVX2
 * (derivatives_tiles.c), for derivatives_columns.c: the same values as its entry-by-entry writes. */
#ifndef GRIT_DERIVATIVES_TILES_H
#define GRIT_DERIVATIVES_TILES_H
#include <stddef.h>

#include "derivatives_internal.h"

/* The block form's writes also have an AVX2 path, chosen at run time by the processor (the same
 * values: write_batch_blocks; GRIT_NO_AVX2 compiles the baseline path only). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define GRIT_DERIV_AVX2 1
#else
#define GRIT_DERIV_AVX2 0
#endif

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

/* Whether tree u is a free body alone (written by free_body_tile4 / free_body_column). */
static inline int grit_deriv_lone_free(const grit_model *m, int u) {
  return m->tree_dofnum[u] == 6 && m->jnt_type[m->dof_jnt[m->tree_dofadr[u]]] == GRIT_JOINT_FREE;
}

/* The end (exclusive) of the span of island k's trees from list entry e: the next trees that are not
 * free bodies alone and whose dofs follow on, in the state and in the block's rows (a composite's
 * particles, three slides each): their rows are one run of tree_tile4, whose values are per joint, so
 * the same as tree by tree with far fewer calls (ws->no_span_tiles: one tree). */
static inline int grit_deriv_span_end(const grit_model *m, const grit_deriv_ws *w, const grit_jacobian_blocks *J, int k,
                                      int e) {
  int f = e + 1;
  if (f == J->tptr[k + 1]) return f; /* the island's last tree (an island of one) */
  for (; !w->no_span_tiles && f < J->tptr[k + 1] && !grit_deriv_lone_free(m, J->tree[f]); ++f) {
    const int prev = m->tree_dofadr[J->tree[f - 1]] + m->tree_dofnum[J->tree[f - 1]], adr = m->tree_dofadr[J->tree[f]];
    if (adr != prev || J->dof_pos[adr] != J->dof_pos[prev - 1] + 1) break;
  }
  return f;
}

#if GRIT_DERIV_AVX2
int grit_deriv_free_bodies_tile(const grit_model *m, const grit_deriv_ws *w, int k, int l0, const int *ord, int nc,
                                double *out, size_t stride, double *check);
void grit_deriv_run_tiles(const grit_model *m, const grit_deriv_ws *w, int k, int l0, const int *ord, int ntile,
                          double *out, size_t stride, double *check);
double grit_deriv_dense_free_tiles(const grit_model *m, const grit_deriv_ws *w, const int *list, int nt,
                                   const out_column *c, const int *t0, const int *tw, int ntile);
#endif

#endif
