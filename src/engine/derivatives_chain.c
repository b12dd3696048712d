/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_chain.c — what a position pass of grit_step_derivatives leaves out inside a seeded tree.
 *
 * A position pass seeds GRIT_DUAL_N dofs of a tree (base .. base + 7 of its local columns). A dof moves
 * only the bodies of its subtree, so a body none of whose chain's dofs is seeded keeps its pose, frame,
 * inertia and motion subspaces with zero partials; and a contact between two such bodies (or one and
 * the world, or a tree the pass does not seed) keeps its distance, frame, Jacobian J and velocity
 * J v + b. Its impulse gamma then moves only with its Delassus estimate w (through A(q): every dof of
 * the tree moves A), and its part of r, -J^T gamma, has the partials -J^T dgamma. So such a pass:
 *   - computes the closed-form kinematics (rigid_body) of the moved bodies only; the others keep the
 *     values of the call's first pass and the zero partials that clear_tree_partials left them;
 *   - skips a contact on unmoved bodies whose law reads no w (Lagged without its regularization,
 *     Similar, without gradient smoothing): none of its inputs has partials;
 *   - evaluates the others from constants kept by the call's first evaluation of the contact (in the
 *     pass of the tree's first columns, which seeds its root and so moves every body): the parameters
 *     before params_finalize and J's values. w's partials come as before (derivatives_delassus.c with
 *     this constant J), then params_finalize and the law at the constant velocity: the same operations
 *     on the same values as the full path, whose other partials are all zero, so the same bits (up to
 *     the sign of zero partials).
 * The values (q0 (+) 0) are the same in every pass of a call, which is what makes keeping them exact.
 * ws->no_chain turns all of this off (tests compare both). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "constraints_extra.h"
#include "contact_candidate.h"
#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_chain_internal.h"
#include "derivatives_simd.h"
#include "derivatives_tendon.h"
#include "grit/constraints.h"
#include "solver.h"

/* The deepest body common to a and b's paths to the world (0: none; a parent's index is below its child's). */
static int meet_body(const grit_model *m, int a, int b) {
  while (a != b)
    if (a > b) a = m->body_parent[a];
    else b = m->body_parent[b];
  return a;
}

/* Each spatial tendon's meeting body: the deepest body on the paths of all its sites' and wrap geometries'
 * bodies (0: the world, none to use; a fixed tendon's is 0). A dof at or above it moves them all as one
 * rigid body, which changes neither the tendon's length nor its row (tendon_moved). */
static void tendon_meets(const grit_model *m, grit_deriv_ws *w) {
  w->ten_meet_any = 0;
  int k = 0;
  for (int t = 0; t < m->ntendon; ++t) {
    int meet = -1;
    w->ten_bptr[t] = k;
    for (int e = m->ten_adr[t]; m->ten_type[t] != GRIT_TENDON_FIXED && e < m->ten_adr[t] + m->ten_num[t]; ++e) {
      const int bs[2] = {m->wrap_obj[e] >= 0 ? m->site_body[m->wrap_obj[e]] : -1,
                         m->wrap_geom[e] >= 0 ? m->geom_body[m->wrap_geom[e]] : -1};
      for (int o = 0; o < 2; ++o) {
        if (bs[o] < 0) continue;
        meet = meet < 0 ? bs[o] : meet_body(m, meet, bs[o]);
        int seen = 0; /* its distinct bodies, for tendon_moved_rigid */
        for (int j = w->ten_bptr[t]; j < k; ++j) seen |= w->ten_b[j] == bs[o];
        if (!seen) w->ten_b[k++] = bs[o];
      }
    }
    w->ten_meet[t] = meet > 0 ? meet : 0;
    w->ten_meet_any |= meet > 0;
  }
  w->ten_bptr[m->ntendon] = k;
}

/* Marks the dofs of a segment from body bx to body by that cx_segment writes: those on one body's path only
 * (the walk to where the paths meet), or both whole paths (two trees, a static body, m->ten_full_paths). */
static void mark_segment(const grit_model *m, char *mark, int bx, int by) {
  if (m->ten_full_paths || m->body_tree[bx] != m->body_tree[by]) {
    for (int dof = m->body_lastdof[bx]; dof >= 0; dof = m->dof_parent[dof]) mark[dof] = 1;
    for (int dof = m->body_lastdof[by]; dof >= 0; dof = m->dof_parent[dof]) mark[dof] = 1;
    return;
  }
  for (int i = m->body_lastdof[bx], j = m->body_lastdof[by]; i != j;)
    if (i > j) mark[i] = 1, i = m->dof_parent[i];
    else mark[j] = 1, j = m->dof_parent[j];
}

/* Marks where spatial tendon t's row can be nonzero: its segments' (cx_tendon_row_in's walk over the sites,
 * a wrap geometry's two segments and the straight one both: a superset). */
static void mark_spatial(const grit_model *m, char *mark, int t) {
  const int adr = m->ten_adr[t], num = m->ten_num[t];
  for (int e = adr; e + 1 < adr + num;) {
    if (m->wrap_geom[e] == GRIT_WRAP_PULLEY || m->wrap_geom[e + 1] == GRIT_WRAP_PULLEY) {
      e++;
      continue;
    }
    const int g = m->wrap_geom[e + 1], ba = m->site_body[m->wrap_obj[e]];
    const int bb = m->site_body[m->wrap_obj[g >= 0 ? e + 2 : e + 1]];
    if (g >= 0) mark_segment(m, mark, ba, m->geom_body[g]), mark_segment(m, mark, m->geom_body[g], bb);
    mark_segment(m, mark, ba, bb);
    e += g >= 0 ? 2 : 1;
  }
}

/* w->cxn: each list of w->cxs less the dofs a spatial tendon's row (or a tendon equality's) never writes,
 * those its segments' two bodies share: J and its partials are +0 there (written +0 by the row's zeroing over
 * cxs, never added to), and sums begun at +0 lose nothing by leaving out their +-0 products. A fixed tendon's,
 * a joint's, a connect's or a weld's list stays whole. */
static void narrow_lists(const grit_model *m, const grit_deriv_ws *w, char *mark, int *ptr, int *list) {
  int k = 0;
  for (int s = 0; s < m->neq + m->ntendon; ++s) {
    int narrow = 0;
    memset(mark, 0, (size_t)m->nv);
    if (s >= m->neq && m->ten_type[s - m->neq] != GRIT_TENDON_FIXED) mark_spatial(m, mark, s - m->neq), narrow = 1;
    for (int o = 0; s < m->neq && m->eq_type[s] == GRIT_EQ_TENDON && o < 2; ++o) {
      const int t = m->eq_obj[2 * s + o];
      if (t >= 0 && m->ten_type[t] != GRIT_TENDON_FIXED) mark_spatial(m, mark, t);
      if (t >= 0 && m->ten_type[t] == GRIT_TENDON_FIXED)
        for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e) mark[m->jnt_dofadr[m->wrap_obj[e]]] = 1;
      narrow = 1;
    }
    ptr[s] = k;
    for (int e = w->cxs_ptr[s]; e < w->cxs_ptr[s + 1]; ++e)
      if (!narrow || mark[w->cxs[e]]) list[k++] = w->cxs[e];
  }
  ptr[m->neq + m->ntendon] = k;
}

void grit_deriv_chain_layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c) {
  char *mark = m->nv > 0 ? calloc((size_t)m->nv, 1) : NULL; /* creation's scratch; none: no lists */
  const int nl = mark ? grit_cx_col_lists(m, mark, NULL, NULL) : 0;
  GRIT_CARVE(c, w->cxs_ptr, mark ? m->neq + m->ntendon + 1 : 0);
  GRIT_CARVE(c, w->cxs, nl);
  if (mark && c->base) grit_cx_col_lists(m, mark, w->cxs_ptr, w->cxs);
  GRIT_CARVE(c, w->cxn_ptr, mark ? m->neq + m->ntendon + 1 : 0);
  GRIT_CARVE(c, w->cxn, nl); /* (at most cxs's length) */
  if (mark && c->base) narrow_lists(m, w, mark, w->cxn_ptr, w->cxn);
  if (!mark) w->cxs_ptr = NULL, w->cxn_ptr = NULL;
  w->cxl_ptr = w->cxn_ptr, w->cxl = w->cxn;
  free(mark);
  const size_t n = (size_t)keep_cap(w);
  GRIT_CARVE(c, w->bmoved, m->nbody);
  GRIT_CARVE(c, w->btop, m->nbody);
  GRIT_CARVE(c, w->ten_meet, m->ntendon);
  GRIT_CARVE(c, w->ten_bptr, m->ntendon + 1);
  GRIT_CARVE(c, w->ten_b, 2 * (size_t)m->nwrap);
  if (c->base) tendon_meets(m, w);
  GRIT_CARVE(c, w->ckeep, n * (size_t)NPARAM);
  GRIT_CARVE(c, w->ckeepj, n * (size_t)6 * (size_t)w->maxn);
  GRIT_CARVE(c, w->ckeep_at, n);
  GRIT_CARVE(c, w->ckx, 3 * n);
  GRIT_CARVE(c, w->ckx_at, n);
  GRIT_CARVE(c, w->cke, 4 * n);
  GRIT_CARVE(c, w->ckf_at, n);
  GRIT_CARVE(c, w->ckl, n);
  GRIT_CARVE(c, w->ckc, (size_t)GRIT_CKC * n);
  GRIT_CARVE(c, w->ckc_at, n);
  GRIT_CARVE(c, w->ckp, sizeof(grit_contact_params_dual) / sizeof(double)); /* the arena is zeroed: +0 */
  GRIT_CARVE(c, w->dqg, (size_t)GRIT_DUAL_N * (size_t)m->ntree); /* derivatives_delassus.c's */
  GRIT_CARVE(c, w->dqgv, (size_t)GRIT_DUAL_N * (size_t)m->ntree);
  GRIT_CARVE(c, w->dqg_ok, m->ntree);
  GRIT_CARVE(c, w->zc_pre, n); /* derivatives_delassus.c's */
  GRIT_CARVE(c, w->cxJ, (size_t)6 * (size_t)w->maxn + 2); /* the arena is zeroed: +0 */
  GRIT_CARVE(c, w->cxJ_pos, (size_t)6 * (size_t)w->maxn);
  GRIT_CARVE(c, w->dense_need, m->ntree); /* derivatives_delassus.c's */
  GRIT_CARVE(c, w->dqp, (size_t)GRIT_DUAL_N * (size_t)m->nv);
  GRIT_CARVE(c, w->dqpv, (size_t)GRIT_DUAL_N * (size_t)m->nv);
  GRIT_CARVE(c, w->dql, (size_t)GRIT_DUAL_N * (size_t)m->nv);
  GRIT_CARVE(c, w->dqp_n, m->ntree);
  GRIT_CARVE(c, w->dqp_at, m->ntree);
  GRIT_CARVE(c, w->twon, m->nbody); /* derivatives_rigid.c's */
  GRIT_CARVE(c, w->klean, m->ntree);
  GRIT_CARVE(c, w->bneed, m->nbody);
  GRIT_CARVE(c, w->twsrc, m->nbody);
}

static int seeded(const grit_dual *x) {
  for (int l = 0; l < GRIT_DUAL_N; ++l)
    if (x->d[l] != 0.0) return 1;
  return 0;
}

/* w->btop: per body, the deepest body at or above it whose own dof the pass seeds (0: none), for tendon_moved. */
static void tops(const grit_model *m, grit_deriv_ws *w, const char *active) {
  w->btop[0] = 0;
  for (int b = 1; b < m->nbody; ++b) {
    const int t = m->body_tree[b], p = m->body_parent[b];
    /* moved, its parent not: by its own seeds (chain_begin's test); with its parent: its own looked at */
    int top = !w->bmoved[b] ? 0 : !w->bmoved[p] ? b : w->btop[p];
    for (int dof = m->body_dofadr[b]; top != b && w->bmoved[b] && t >= 0 && active[t] && dof >= 0 &&
                                      dof < m->body_dofadr[b] + m->body_dofnum[b];
         ++dof)
      if (seeded(&w->dq[dof])) top = b;
    w->btop[b] = top;
  }
}


void grit_deriv_chain_begin(const grit_model *m, grit_deriv_ws *w, const char *active, int kin_all, int skip_qconst) {
  if (kin_all && ++w->ckeep_call == 0u) { /* a new call: what was kept expires (the clock wrapped) */
    for (int i = 0; i < keep_cap(w); ++i) w->ckeep_at[i] = w->ckx_at[i] = w->cch_at[i] = w->ckf_at[i] = w->ckc_at[i] = 0u;
    for (int b = 0; b < m->nbody; ++b) w->cagg_at[b] = w->ctw_at[b] = 0u; /* derivatives_contact_chain.c's */
    for (int g = 0; g < m->ngeom; ++g) w->cgeo_at[g] = 0u;
    w->ckeep_call = 1u;
  }
  w->cxl_ptr = w->no_cx_narrow ? w->cxs_ptr : w->cxn_ptr, w->cxl = w->no_cx_narrow ? w->cxs : w->cxn;
  w->law_avx2 = law_avx2_table(w->fx);
  w->law_k = grit_equality_rn(1.0); /* (1 K: the near-rigid factor itself, for cx_fused's law_lanes) */
  w->chain_on = !w->no_chain && !kin_all && skip_qconst && active && !w->inertial_in;
  if (!w->chain_on) return;
  w->bmoved[0] = 0;
  int still = 0; /* bodies of the seeded trees the pass does not move */
  for (int b = 1; b < m->nbody; ++b) { /* a parent's index is below its children's */
    const int t = m->body_tree[b];
    char moved = t >= 0 && active[t] && w->bmoved[m->body_parent[b]];
    for (int dof = m->body_dofadr[b]; t >= 0 && active[t] && !moved && dof >= 0 &&
                                      dof < m->body_dofadr[b] + m->body_dofnum[b];
         ++dof)
      moved = (char)seeded(&w->dq[dof]);
    w->bmoved[b] = moved;
    still += t >= 0 && active[t] && !moved;
  }
  if (w->ten_meet_any && !w->no_ten_rigid) tops(m, w, active);
  /* none (free bodies, a tree's first pass): every contact the pass evaluates moves, nothing to leave
   * out; the world's bodies are constants either way */
  w->chain_on = still > 0;
}

int grit_deriv_chain_body_out(grit_deriv_ws *w, int b) {
  for (int r = 0; r < 6; ++r) w->twist[6 * b + r] = grit_dual_const(0.0); /* an earlier pass's, for its children */
  w->twon[b] = 0, w->twsrc[b] = b;
  w->chain_skips[0]++;
  return 0;
}

void grit_deriv_chain_keep_out(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                               const grit_contact_params_dual *p, const grit_dual *const J[2]) {
  double *s = slot(w, i);
  keep_params(s, p);
  double *js = slot_j(w, i);
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]];
    for (int j = 0; j < 3 * n; ++j) js[j] = J[q][j].v;
    js += 3 * n;
  }
  w->ckeep_at[i] = w->ckeep_call;
}

/* Contact i's kept parameters into p and its Jacobian blocks into w->J (zero partials); J's values, tree
 * slot by slot, into js. */
static void kept_inputs(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                        grit_contact_params_dual *p, grit_dual *J[2], const double *js[2]) {
  const double *s = slot(w, i);
  kept_params(s, p);
  const int n0 = k->ntree == 2 ? 3 * m->tree_dofnum[k->tree[0]] : 0;
  J[0] = w->J, J[1] = w->J + n0;
  js[0] = slot_j(w, i), js[1] = slot_j(w, i) + n0;
  for (int q = 0; q < k->ntree; ++q)
    for (int j = 0; j < 3 * m->tree_dofnum[k->tree[q]]; ++j) J[q][j] = grit_dual_const(js[q][j]);
}

/* J v + b at the solution: apply_jacobian's values, the same products and sums. */
static void velocity(const grit_model *m, const grit_data *d, const grit_constraint *k, const double *const js[2],
                     grit_dual vc[3]) {
  for (int r = 0; r < 3; ++r) {
    double x = k->b[r];
    for (int q = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
      for (int j = 0; j < n; ++j) x = js[q][r * n + j] * d->vsol[adr + j] + x;
    }
    vc[r] = grit_dual_const(x);
  }
}

/* r -= J^T gamma with J constant: subtract_jt_gamma's partials, J's own being zero. */
static void subtract_jt(const grit_model *m, const grit_constraint *k, const double *const js[2],
                        const grit_dual gamma[3], grit_dual *res) {
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < n; ++j) {
        const double a = js[q][r * n + j];
        grit_dual *y = &res[adr + j];
        y->v -= a * gamma[r].v;
        for (int l = 0; l < GRIT_DUAL_N; ++l) y->d[l] -= a * gamma[r].d[l];
      }
  }
}

int grit_deriv_chain_contact_out(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i,
                                 const grit_constraint *k, const char *mmask, int lin_w, int skip_qconst) {
  if (k->dim != 3) return 0;
  const grit_contact_candidate *cand = &d->collision->c[i];
  if (w->bmoved[cand->body[0]] || w->bmoved[cand->body[1]]) return 0;
  /* a Lagged contact whose d gamma / d v_n0 this pass's spare lane is to carry: the full path */
  if (k->kind == GRIT_CONSTRAINT_LAGGED && w->lag_lane >= 0 && w->lag_g[3 * i] != w->lag_g[3 * i]) return 0;
  const int reads_w = grit_deriv_chain_reads_w(d, k);
  if (reads_w && (i >= keep_cap(w) || w->ckeep_at[i] != w->ckeep_call)) return 0; /* nothing kept */
  w->chain_skips[1]++;
  if (!reads_w) return 1; /* constant gamma: no partials */
  const double h = m->opt.timestep, *js[2];
  grit_contact_params_dual p;
  grit_dual *J[2];
  kept_inputs(m, w, i, k, &p, J, js);
  const grit_dual *Jc[2] = {J[0], J[1]};
  const grit_dual wd = lin_w ? grit_deriv_delassus_lin(m, w, mmask, i, 3, k->ntree, k->tree, Jc)
                             : grit_delassus_c_dual(m, w->Achol, w->Ad, skip_qconst ? w->qconst : NULL, 3, k->ntree,
                                                    k->tree, Jc, w->tmp);
  w->fx->params_finalize(k->kind, wd, h, &d->settings, &p);
  grit_dual vc[3], gamma[3], G[9];
  velocity(m, d, k, js, vc);
  w->fx->constraint_eval(k->kind, &p, h, vc, gamma, G);
  subtract_jt(m, k, js, gamma, w->r);
  return 1;
}

