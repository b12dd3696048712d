/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_chain.h — position passes that leave out, inside a seeded tree, the bodies and contacts
 * that none of the pass's seeded dofs moves (internal; derivatives_chain.c). */
#ifndef GRIT_DERIVATIVES_CHAIN_H
#define GRIT_DERIVATIVES_CHAIN_H

#include <string.h>

#include "arena.h"
#include "derivatives_internal.h"

/* The workspace's arrays of this module (grit_deriv_ws_create's layout). */
void grit_deriv_chain_layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c);

/* A residual evaluation begins: in a state position pass after the call's first (kin_all 0, skip_qconst,
 * the trees of `active` seeded), marks the bodies its seeds move (a seeded dof on their chain) and turns
 * the skipping on; else off (every body and contact as before). kin_all starts a new call's keeping. */
void grit_deriv_chain_begin(const grit_model *m, grit_deriv_ws *w, const char *active, int kin_all, int skip_qconst);

/* Whether positions_dual recomputes body b: 0 for a body the pass does not move, which keeps its
 * values and the zero partials clear_tree_partials left (its twist is zeroed for its children). */
int grit_deriv_chain_body_out(grit_deriv_ws *w, int b);
static inline int grit_deriv_chain_body(grit_deriv_ws *w, int b) {
  return !w->chain_on || w->bmoved[b] || grit_deriv_chain_body_out(w, b);
}

/* Whether contact constraint k's law reads the Delassus estimate w (else its impulse does not move
 * with w). */
static inline int grit_deriv_chain_reads_w(const grit_data *d, const grit_constraint *k) {
  if (k->kind == GRIT_CONSTRAINT_SAP) return 1;
  if (k->kind == GRIT_CONSTRAINT_LAGGED && d->settings.regularize_lagged) return 1; /* friction_w */
  /* gradient smoothing (the film or the force at a distance) reads w (grit_params_finalize) */
  return k->p.smooth > 0.0 || k->p.soft > 0.0;
}

/* Whether the last position pass moved body b (every body when its skipping was off): the others kept
 * their zero partials, nothing to clear. */
static inline int grit_deriv_chain_moved(const grit_deriv_ws *w, int b) { return !w->chain_on || w->bmoved[b]; }

/* Whether constraint k (a contact: `contact`) needs its Delassus estimate in the residual: not a contact
 * whose law reads none. Such a contact then needs no J_c either: the residual applies J_c v and
 * J_c^T gamma side by side (derivatives_contact.c), as it does when no constraint reads w. */
static inline int grit_deriv_chain_w_read(const grit_data *d, const grit_constraint *k, int contact) {
  return !contact || grit_deriv_chain_reads_w(d, k);
}

/* The full path of contact i keeps the values of its parameters before params_finalize and of its
 * Jacobian blocks (J NULL: not formed), for the passes that do not move it. */
void grit_deriv_chain_keep_out(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                               const grit_contact_params_dual *p, const grit_dual *const J[2]);
static inline void grit_deriv_chain_keep(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                                         const grit_contact_params_dual *p, const grit_dual *const J[2]) {
  /* the same values in every pass of a call: kept once */
  if (J && k->dim == 3 && !w->inertial_in && i < w->cap_edges / 2 + 1 && w->ckeep_at[i] != w->ckeep_call)
    grit_deriv_chain_keep_out(m, w, i, k, p, J);
}

/* Contact i in a pass that moves neither of its bodies: its J, distance, parameters and velocity are
 * the kept constants, its impulse moves only with its Delassus estimate (a law that reads none: no
 * partials, nothing to do). Subtracts J^T gamma from w->r and returns 1; 0 if the full path must run
 * (skipping off, a body moved, nothing kept, or the Lagged lane to take). The estimate is chosen as the
 * full path chooses it (lin_w: derivatives_delassus.c; else the dual factor). */
int grit_deriv_chain_contact_out(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i,
                                 const grit_constraint *k, const char *mmask, int lin_w, int skip_qconst);
static inline int grit_deriv_chain_contact(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i,
                                           const grit_constraint *k, const char *mmask, int lin_w, int skip_qconst) {
  return w->chain_on && grit_deriv_chain_contact_out(m, d, w, i, k, mmask, lin_w, skip_qconst);
}

/* Joint friction, equalities and tendons (grit_cx_rows): the full path keeps the values of the rows'
 * parameters and of J's dim rows per tree once per call; a pass that moves none of the bodies the
 * rows read (an equality's bodies, a joint's, a tendon's sites, wrapping geometries and joints) takes
 * them as constants instead of evaluating the rows on dual numbers (whose partials would be zeros):
 * cx_out fills p and J and returns 1, or returns 0 (skipping off, a body moved, nothing kept). The
 * rest of the constraint's path (its Delassus estimate, law and J^T gamma) runs as before. */
void grit_deriv_chain_cx_keep(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                              const grit_contact_params_dual *p, grit_dual *const J[2]);
/* p arrives zeroed (its partials +0). On the structural columns (ws->no_cx_cols off) J[] is pointed at
 * w->cxJ, whose values grit_deriv_chain_cx_materialize writes when J itself is read (ws->no_cx_clean:
 * written whole into the J[] given). */
int grit_deriv_chain_cx_out(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                            grit_contact_params_dual *p, grit_dual *J[2]);

/* The residual's whole path of cx row i (not a limit or joint friction) in a pass that moves none of its
 * bodies, where cx_out would take it as constants on its structural columns: a spring does nothing (its
 * gamma has no partials); another row takes its estimate by grit_deriv_delassus_kept_row (need_w, lin_w),
 * its kept parameters, params_finalize, its law at the kept J v + b and r -= J^T gamma from the kept
 * values: the operations of cx_out, grit_deriv_delassus_lin, cx_kept_rows in their order without the
 * steps between them (p's zeroing, J's pointers, the lists' lookups). Returns 1 when done, 0 (nothing
 * done) where the general steps must run (ws->no_cx_fast: always). */
int grit_deriv_chain_cx_fast(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i, const grit_constraint *k,
                             const char *mmask, int need_w, int lin_w);
/* grit_deriv_delassus_kept_row (derivatives_delassus.c) for row ic, which took it in an earlier pass of this
 * call: its tests that cannot change within the call left out (cx_fused's short path). */
int grit_deriv_delassus_kept_row_again_out(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim,
                                           int ntree, const int tree[2], grit_dual *out);
/* Its commonest case inlined into the caller's loop: a one-tree, one-row row whose estimate the pass's
 * batch already holds (derivatives_delassus.c's kept_batch, the same tests and numbers; x / 1 is x). */
static inline int grit_deriv_delassus_kept_row_again(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic,
                                                     int dim, int ntree, const int tree[2], grit_dual *out) {
  if (ntree == 1 && dim == 1 && w->dwt_eval == w->eval_no && w->gt_at[ic] == w->call_no && tree[0] == w->gt_tree &&
      w->gt_slot[ic] < w->dwt_n && w->zc_pre[ic] != w->call_no && dmask && !dmask[tree[0]] && w->rmask[tree[0]] &&
      !w->no_kept_batch) {
    const double *o = w->dwt + (size_t)w->gt_slot[ic] * GRIT_DUAL_N; /* (its eight lanes side by side) */
    out->v = w->zc_w[ic];
    memcpy(out->d, o, sizeof out->d);
    w->seed_pairs_used++, w->kept_fast_used++, w->kept_batch_used++;
    return 1;
  }
  return grit_deriv_delassus_kept_row_again_out(m, w, dmask, ic, dim, ntree, tree, out);
}
/* Writes the row cx_out last took as constants into w->cxJ, if it is not yet there (a reader of J itself). */
void grit_deriv_chain_cx_materialize(const grit_model *m, grit_deriv_ws *w);
/* Constraint k's columns where its row can be nonzero (w->cxn; ws->no_cx_narrow: its structural columns,
 * w->cxs), for the sums over them; NULL where k has none (joint friction). */
const int *grit_deriv_chain_cx_list(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k, int *count);

/* grit_cx_rows_dual of constraint k at the pass's kinematics (w->kin, w->q) into J and p, its rows formed
 * on its structural columns only (grit_cx_rows_cols: the same values; the dense path with no_cx_cols). */
void grit_deriv_chain_cx_rows(const grit_model *m, grit_deriv_ws *w, const grit_constraint *k, double h,
                              grit_dual *const J[2], grit_contact_params_dual *p);

/* Cx row k's J v + b at the solution, its impulse and r -= J^T gamma (derivatives_residual.c's
 * jacobian_rows) over its structural columns (cxs: the dofs its rows can be nonzero on) instead of the
 * span of its nonzero entries, which the residual finds by scanning J: the same sums in the same order
 * without their exact zero terms. Returns 0 (nothing done: the span's path) for joint friction, without
 * the lists (ws->no_cx_cols) or where a velocity is an exact zero (a zero's sign could differ). */
int grit_deriv_chain_cx_jacobian_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w,
                                      const grit_constraint *k, const grit_dual *const J[2],
                                      const grit_contact_params_dual *p);

#endif
