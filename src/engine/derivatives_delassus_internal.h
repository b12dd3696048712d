/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_delassus_internal.h — what derivatives_delassus.c and derivatives_delassus_cols.c share: the
 * lanes' rows' gradients stored by columns (w->gt), each pass's batch of their - g . dq (w->dwt), a row's z
 * from columns of A^-1 (internal). */
#ifndef GRIT_DERIVATIVES_DELASSUS_INTERNAL_H
#define GRIT_DERIVATIVES_DELASSUS_INTERNAL_H

#include <stddef.h>

#include "derivatives_internal.h"
#include "derivatives_quadgrad.h"

/* the nonzero lanes of tree t's seeded dofs, listed once per evaluation (derivatives_delassus.c) */
void grit_deriv_delassus_seed_pairs(const grit_model *m, grit_deriv_ws *w, int t);
/* each pass's - g . dq of every slot's row of tree t (derivatives_delassus_cols.c) */
void grit_deriv_delassus_batch_form(const grit_model *m, grit_deriv_ws *w, int t);
#if GRIT_QUADGRAD_HAVE_LANES
/* the group's gradients gl[j][l] of rows list[l] of tree t (n dofs) into w->gt; 0: not stored (w->zg's rows) */
int grit_deriv_delassus_gt_columns(grit_deriv_ws *w, int t, int n, const grit_lanes *gl, const int *list, int nl);
/* z[l] = A^-1 J[l]^T of nl rows of tree t, w's J z and the lanes y, from columns of A^-1; 0: not done */
int grit_deriv_delassus_cols_z(const grit_model *m, grit_deriv_ws *w, int t, const double *const *J, int nl,
                               double *const *z, grit_lanes *y, grit_lanes *wv);
#endif

/* Row ic's gradient of tree slot k and its stride: the column of its slot in w->gt where the lanes wrote it
 * there in this call (grit_deriv_delassus_gt_columns), else its row of w->zg. */
static inline const double *grit_deriv_delassus_row_g(const grit_deriv_ws *w, int ic, int k, size_t *stride) {
  if (k == 0 && w->gt_at[ic] == w->call_no) {
    *stride = (size_t)w->gt_ld;
    return w->gt + w->gt_slot[ic];
  }
  *stride = 1;
  return w->zg + ((size_t)ic * 2 + (size_t)k) * (size_t)w->maxn;
}

/* Row ic's estimate from the pass's batch (the callers' tests that the kept one may be taken done, ntree 1). */
static inline int grit_deriv_delassus_kept_batch(const grit_model *m, grit_deriv_ws *w, int ic, int dim, int t, grit_dual *out) {
  if (w->gt_at[ic] != w->call_no || t != w->gt_tree || w->no_kept_batch) return 0;
  if (w->dwt_eval != w->eval_no) grit_deriv_delassus_batch_form(m, w, t);
  const int s = w->gt_slot[ic];
  if (s >= w->dwt_n) return 0; /* solved after the batch, or no batch in this pass */
  const double *o = w->dwt + (size_t)s * GRIT_DUAL_N; /* (its eight lanes side by side) */
  out->v = w->zc_w[ic] / dim;
  if (dim == 1) /* (x / 1 is x) */
    for (int l = 0; l < GRIT_DUAL_N; ++l) out->d[l] = o[l];
  else
    for (int l = 0; l < GRIT_DUAL_N; ++l) out->d[l] = o[l] / dim;
  w->seed_pairs_used++, w->kept_fast_used++, w->kept_batch_used++;
  return 1;
}


#endif
