/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives.c — Jacobians of a step by the implicit function theorem (seed 000, section X-B).
 *
 * r(v; theta) = A(q0) (v - v0) - dt k(q0, v0, u) - sum_i J_i(q0)^T gamma_i(J_i v + b_i) = 0 at the
 * solution v. Columns of dr/dtheta come from re-running that residual on dual numbers with theta
 * seeded, GRIT_DUAL_N columns per pass; H dv/dtheta = -dr/dtheta is solved with the factor of H at the
 * solution; then q+ = q0 (+) dt v is differentiated in the tangent space, joint by joint.
 * This file holds the workspace and the driver, which reads as its phases:
 *   1 check the call                                  (check_call)
 *   2 the factor of H at the solution and its parts   (prepare_factor)
 *   3 the integration's tangent-space Jacobians       (derivatives_columns.c)
 *   4 state and control columns: position, velocity and control passes (state_control_columns)
 *   5 parameter columns                               (parameter_columns)
 *   6 the last solves, and a status for non-finite results (check_finite)
 *   7 the chain rule of actuation                     (actuation_chain)
 * The residual on dual numbers is derivatives_residual.c (with derivatives_rigid.c, the closed-form
 * position partials of trees of one-joint bodies); the batched solves and the writing of A, B and P
 * are derivatives_columns.c. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime for the optional phase timing */
#include "derivatives.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "actuation_adhesion.h"
#include "actuation_muscle.h" /* grit_actuator_has_length_fn */
#include "arena.h"
#include "constraints.h"
#include "solver.h"
#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_contact_chain.h"
#include "derivatives_internal.h"
#include "derivatives_quadgrad.h"
#include "derivatives_simd.h"
#include "derivatives_smooth.h"
#include "derivatives_tendon.h"
#include "treechol.h"
#include "dynamics.h"
#include "fluid.h"
#include "grit/constraints.h" /* GRIT_TENDON_FIXED */
#include "grit/derivatives.h"
#include "quasistatic.h" /* quasistatic steps' derivatives (docs/quasistatic.md) */
#include "status_internal.h"

/* The columns of a batch of right-hand sides of `rows` rows each, at most `most` (derivatives_internal.h,
 * RHS_BATCH): as many as fit in `bytes`, at least 64. */
static int rhs_columns(int rows, size_t bytes, int most) {
  const int fit = rows > 0 ? (int)(bytes / (sizeof(double) * (size_t)rows)) : most;
  return fit > most ? most : fit < 64 ? 64 : fit;
}

/* This call's batch (w->rhs_cols, within rhs_cap): RHS_BATCH_BYTES of the rows a column touches, the
 * largest part's when the factor has several (nparts, the trees' parts in w->tree_part), else nv. */
static void batch_columns(const grit_model *m, grit_deriv_ws *w, int nparts) {
  int rows = m->nv, most = RHS_BATCH;
  if (w->tree_part && !w->no_wide_batch) {
    rows = 0, most = RHS_BATCH_MAX;
    for (int p = 0; p < nparts; ++p) {
      int n = 0;
      for (int e = w->ptree_ptr[p]; e < w->ptree_ptr[p + 1]; ++e) n += m->tree_dofnum[w->ptree[e]];
      rows = n > rows ? n : rows;
    }
  }
  const int cols = rhs_columns(rows, RHS_BATCH_BYTES, most);
  w->rhs_cols = cols < w->rhs_cap ? cols : w->rhs_cap;
}

static void layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c) {
  const int nb = m->nbody, nv = m->nv, nj = m->njnt;
  GRIT_CARVE_KIN(c, w->kin, m);
  GRIT_CARVE(c, w->mass, nb);
  GRIT_CARVE(c, w->com, 3 * nb);
  GRIT_CARVE(c, w->inertia, 9 * nb);
  GRIT_CARVE(c, w->gparam, 7 * m->ngeom); /* by grit_param_kind; 6: hydroelastic moduli (hydro.h) */
  GRIT_CARVE(c, w->q, m->nq);
  GRIT_CARVE(c, w->dq, nv);
  GRIT_CARVE(c, w->v0, nv);
  GRIT_CARVE(c, w->u, m->nu);
  GRIT_CARVE(c, w->M, m->nM);
  GRIT_CARVE(c, w->A, m->nM);
  GRIT_CARVE(c, w->Achol, m->nM);
  GRIT_CARVE(c, w->bias, nv);
  GRIT_CARVE(c, w->force, nv);
  GRIT_CARVE(c, w->r, nv);
  GRIT_CARVE(c, w->tmp, nv);
  GRIT_CARVE(c, w->crb, nb);
  GRIT_CARVE(c, w->acc, 6 * nb);
  GRIT_CARVE(c, w->frc, 6 * nb);
  GRIT_CARVE(c, w->J, grit_contact_jstore_size(m) + 2);
  GRIT_CARVE(c, w->scratch, 6 * nv); /* 3 nv for contacts, 6 nv for grit_cx_rows */
  w->rhs_cap = w->rhs_cols = rhs_columns(nv, RHS_ALLOC_BYTES, RHS_BATCH_MAX);
  GRIT_CARVE(c, w->rhs, (size_t)nv * (size_t)(w->rhs_cap + 1)); /* + nv: compact columns' room (derivatives_rhs.c) */
  GRIT_CARVE(c, w->xcol, w->rhs_cap);
  GRIT_CARVE(c, w->span, 4 * m->ntree);
  GRIT_CARVE(c, w->ids, w->rhs_cap);
  GRIT_CARVE(c, w->part, w->rhs_cap);
  GRIT_CARVE(c, w->col_part, m->ntree);
  GRIT_CARVE(c, w->ptree_ptr, m->ntree + 1);
  GRIT_CARVE(c, w->ptree, m->ntree);
  GRIT_CARVE(c, w->colour, m->ntree);
  GRIT_CARVE(c, w->adj_ptr, m->ntree + 1);
  GRIT_CARVE(c, w->adj, w->cap_edges);
  GRIT_CARVE(c, w->stamp, m->ntree);
  GRIT_CARVE(c, w->act_ptr, m->ntree + 1);
  GRIT_CARVE(c, w->act, m->nu);
  GRIT_CARVE(c, w->active, m->ntree);
  GRIT_CARVE(c, w->lag_ptr, m->ntree + 1);
  GRIT_CARVE(c, w->lag, w->cap_edges);
  GRIT_CARVE(c, w->lag_g, 3 * (w->cap_edges / 2 + 1));
  GRIT_CARVE(c, w->lag_y, 2 * w->maxn * (w->cap_edges / 2 + 1));
  GRIT_CARVE(c, w->bsv, 6 * nb);
  GRIT_CARVE(c, w->bsv0, 6 * nb);
  GRIT_CARVE(c, w->bwr, 6 * nb);
  GRIT_CARVE(c, w->bsv_at, nb);
  GRIT_CARVE(c, w->bsv0_at, nb);
  GRIT_CARVE(c, w->bwr_at, nb);
  GRIT_CARVE(c, w->bwr_list, nb);
  GRIT_CARVE(c, w->qconst, m->ntree);
  GRIT_CARVE(c, w->mask2, m->ntree);
  GRIT_CARVE(c, w->mask3, m->ntree);
  GRIT_CARVE(c, w->Ad, m->nM);
  GRIT_CARVE(c, w->Ainv, m->nM);
  GRIT_CARVE(c, w->dsup, m->nM);
  GRIT_CARVE(c, w->dsup_n, m->ntree);
  GRIT_CARVE(c, w->dsup_at, m->ntree);
  GRIT_CARVE(c, w->zc, (size_t)6 * w->maxn * (size_t)(w->cap_edges / 2 + 1));
  GRIT_CARVE(c, w->zc_w, w->cap_edges / 2 + 1);
  GRIT_CARVE(c, w->zc_at, w->cap_edges / 2 + 1);
  GRIT_CARVE(c, w->Dq, 36 * nj);
  GRIT_CARVE(c, w->Dv, 36 * nj);
  GRIT_CARVE_KIN(c, w->kd, m);
  GRIT_CARVE(c, w->qd, m->nq);
  GRIT_CARVE(c, w->rigid, m->ntree);
  GRIT_CARVE(c, w->mask4, m->ntree);
  GRIT_CARVE(c, w->kskip, m->ntree);
  GRIT_CARVE(c, w->zeros, nv);
  GRIT_CARVE(c, w->twist, 6 * m->nbody);
  GRIT_CARVE(c, w->uc, m->nu);
  GRIT_CARVE(c, w->wc, m->nu);
  GRIT_CARVE(c, w->ac, m->na);
  GRIT_CARVE(c, w->an, m->na);
  GRIT_CARVE(c, w->Ai, m->na > 0 ? 4 * nv * nv : 0);
  GRIT_CARVE(c, w->Bi, m->na > 0 ? 2 * nv * m->nu : 0);
  GRIT_CARVE(c, w->rmask, m->ntree);
  GRIT_CARVE(c, w->rskip, m->ntree);
  GRIT_CARVE(c, w->tnA, m->ntree);
  GRIT_CARVE(c, w->zg, (size_t)2 * w->maxn * (size_t)(w->cap_edges / 2 + 1));
  GRIT_CARVE(c, w->dtL, m->nM);
  GRIT_CARVE(c, w->dtinv, nv);
  GRIT_CARVE(c, w->plain_end, nv);
  GRIT_CARVE(c, w->dt_ok, m->ntree);
  GRIT_CARVE(c, w->qgs, grit_quadgrad_scratch(m));
  grit_deriv_delassus_layout(m, w, c); /* derivatives_delassus_cols.c */
  GRIT_CARVE(c, w->dqs, nv);
  GRIT_CARVE(c, w->dqs_n, m->ntree);
  GRIT_CARVE(c, w->dqs_at, m->ntree);
  GRIT_CARVE(c, w->dqf, nv);
  grit_rnea_layout(m, &w->rn, c);
  grit_deriv_chain_layout(m, w, c); /* derivatives_chain.c */
  grit_deriv_contact_chain_layout(m, w, c); /* derivatives_contact_chain.c */
  w->sm = grit_deriv_smooth_layout(m, w->maxn, c);
  w->tn = grit_deriv_tendon_layout(m, c); /* derivatives_tendon.c */
}

grit_status grit_deriv_ws_create(const grit_model *m, int max_constraints, grit_deriv_ws **out) {
  *out = NULL;
  grit_deriv_ws *w = calloc(1, sizeof *w);
  if (!w) return GRIT_ERR_OUT_OF_MEMORY;
  w->cap_edges = 2 * max_constraints;
  for (int t = 0; t < m->ntree; ++t) w->maxn = m->tree_dofnum[t] > w->maxn ? m->tree_dofnum[t] : w->maxn;
  grit_carver c = {NULL, 0};
  layout(m, w, &c);
  w->arena = calloc(1, c.used + 64);
  if (!w->arena) {
    free(w);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  c.base = w->arena;
  c.used = 0;
  layout(m, w, &c);
  if (grit_treechol_create(m, &w->dtc, NULL) != GRIT_OK) { /* derivatives_delassus.c's solves */
    grit_deriv_ws_free(w);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  w->inertial.mass = w->mass;
  w->inertial.com = w->com;
  w->inertial.inertia = w->inertia;
  w->inertial_in = &w->inertial;
  const int ng = m->ngeom;
  w->geom.friction = w->gparam;
  w->geom.stiffness = w->gparam + ng;
  w->geom.dissipation = w->gparam + 2 * ng;
  w->geom.tau_d = w->gparam + 3 * ng;
  w->geom.priority = m->geom_priority;
  w->geom.condim = m->geom_condim;
  w->params_dirty = 1;
  w->fx = grit_deriv_dual_fns_get(1); /* the contacts' dual functions for this processor (derivatives_simd.h) */
  grit_deriv_plain_runs(m, w); /* derivatives_columns.c */
  /* Trees whose mass matrix and bias forces do not depend on the configuration: one body on a free joint
   * with its centre of mass at the body origin. In grit's coordinates (the origin's velocity in the
   * world, the angular velocity in the body frame) M = diag(m, m, m, I_body) and c = (-m g, w x I_body w):
   * position passes need only their kinematics. */
  for (int t = 0; t < m->ntree; ++t) {
    int nb = 0, body = -1;
    for (int b = 1; b < m->nbody; ++b)
      if (m->body_tree[b] == t) nb++, body = b;
    w->qconst[t] = nb == 1 && m->body_jntnum[body] == 1 &&
                   m->jnt_type[m->body_jnt[m->body_jntadr[body]]] == GRIT_JOINT_FREE &&
                   m->body_com[3 * body] == 0.0 && m->body_com[3 * body + 1] == 0.0 && m->body_com[3 * body + 2] == 0.0 &&
                   !grit_actuator_tendon_on_tree(m, t) && /* a tendon actuator's force moves with q */
                   !grit_fluid_on(m) && /* so does the fluid force (the body's axes) */
                   !grit_adhesion_any(m); /* and adhesion (the contacts' normals and points) */
  }
  /* Trees whose position partials have a closed form (rigid_body): a ball or free joint alone on its
   * body (several hinges and slides may share one), a free joint only on a child of the world. */
  for (int t = 0; t < m->ntree; ++t) w->rigid[t] = 1;
  for (int b = 1; b < m->nbody; ++b) {
    const int t = m->body_tree[b], nj = m->body_jntnum[b];
    if (t < 0) continue;
    for (int n = 0; n < nj; ++n) {
      const int type = m->jnt_type[m->body_jnt[m->body_jntadr[b] + n]];
      if ((nj > 1 && (type == GRIT_JOINT_BALL || type == GRIT_JOINT_FREE)) ||
          (type == GRIT_JOINT_FREE && m->body_parent[b] != 0))
        w->rigid[t] = 0;
    }
  }
  /* Trees where a length-fn actuator's implicit slopes g^2 (h kv + h^2 kq) J^T J in A move with q0: a
   * spatial tendon's, a slider-crank's or a site's with a slope (a fixed tendon's J is constant; a muscle
   * or a motor has none) */
  for (int a = 0; a < m->nu; ++a) {
    double kq, kv;
    grit_actuator_slopes(m, a, &kq, &kv);
    if (grit_actuator_has_length_fn(m, a) && (kq != 0.0 || kv != 0.0) &&
        !(m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[m->act_tendon[a]] == GRIT_TENDON_FIXED))
      w->tnA[m->dof_tree[m->act_dof[a]]] = 1;
  }
  grit_rnea_trees(m, &w->rn); /* the analytic partials of the smooth dynamics (derivatives_rnea.c) */
  for (int t = 0; t < m->ntree; ++t) w->rn.on[t] &= !w->qconst[t], w->rn.any_on |= w->rn.on[t];
  *out = w;
  return GRIT_OK;
}

void grit_deriv_ws_free(grit_deriv_ws *w) {
  if (!w) return;
  grit_treechol_free(w->dtc);
  free(w->arena);
  free(w);
}

/* ----------------------------------------------------------------------------- the phases */

/* The values of the position passes' kinematics, w->kd, are grit_kin_positions at q0 (+) 0 (derivatives_residual.c,
 * seed_positions): the poses the step kept at q0 (d->kin0, the same function of the same q with the
 * model's inertias, body by body from its parent's) serve every tree whose q0 (+) 0 is q0 bit for bit (a
 * quaternion's normalization may move an ulp); the others' are computed (under a tree mask). A copy of
 * the poses costs a twentieth of computing them. Scratch: w->qd (the first pass writes it again) and
 * w->mask4. d->no_kin0: all computed, as before. */
static void kept_kinematics(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  if (!d->kin0_ok || d->no_kin0) return;
  memcpy(w->qd, d->qprev, sizeof(double) * (size_t)m->nq);
  grit_kin_integrate(m, w->qd, w->zeros, 1.0);
  int moved = 0, kept = 0;
  for (int t = 0; t < m->ntree; ++t) w->mask4[t] = 0;
  for (int j = 0; j < m->njnt; ++j) {
    const int qa = m->jnt_qposadr[j], t = m->dof_tree[m->jnt_dofadr[j]];
    if (memcmp(w->qd + qa, d->qprev + qa, sizeof(double) * (size_t)grit_joint_nq(m->jnt_type[j]))) w->mask4[t] = 1;
  }
  for (int t = 0; t < m->ntree; ++t) moved += w->mask4[t], kept += !w->mask4[t];
  if (!kept) return;
  const grit_kin *k = &d->kin0;
  const size_t nb = (size_t)m->nbody, nj = (size_t)m->njnt, nv = (size_t)m->nv, s = sizeof(double);
  memcpy(w->kd.xpos, k->xpos, 3 * nb * s);
  memcpy(w->kd.xquat, k->xquat, 4 * nb * s);
  memcpy(w->kd.xmat, k->xmat, 9 * nb * s);
  memcpy(w->kd.xipos, k->xipos, 3 * nb * s);
  memcpy(w->kd.xanchor, k->xanchor, 3 * nj * s);
  memcpy(w->kd.xaxis, k->xaxis, 3 * nj * s);
  memcpy(w->kd.cdof, k->cdof, 6 * nv * s);
  memcpy(w->kd.cinert, k->cinert, nb * sizeof *k->cinert);
  if (moved) { /* the trees whose q0 (+) 0 moved: their bodies from q0 (+) 0 */
    w->kd.tree_mask = w->mask4;
    grit_kin_positions(m, w->qd, NULL, &w->kd);
    w->kd.tree_mask = NULL;
  }
  w->kd_valid = 1;
}

/* Phase 1: whether the last step can be differentiated with these arguments. */
static grit_status check_call(grit_data *d, const grit_param *params, int np, const double *P) {
  const grit_model *m = d->model;
  if (!d->has_prev)
    return grit_set_error(d->message, GRIT_ERR_STATE, "derivatives: no step was taken since creation or reset");
  if (d->prev_integrator == GRIT_INTEGRATOR_VARIATIONAL)
    return grit_set_error(d->message, GRIT_ERR_UNSUPPORTED,
                          "derivatives: the last step used the variational integrator; its Jacobians are not "
                          "implemented (use GRIT_INTEGRATOR_EULER or GRIT_INTEGRATOR_QUASISTATIC)");
  if (np < 0 || (np > 0 && (!params || !P)))
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "derivatives: %d parameters need params and P", np);
  for (int i = 0; i < np; ++i) {
    const grit_param *p = &params[i];
    const int ok = p->kind == GRIT_PARAM_MASS ? (p->index >= 1 && p->index < m->nbody)
                   : (p->kind >= GRIT_PARAM_FRICTION && p->kind <= GRIT_PARAM_DISSIPATION) ||
                           p->kind == GRIT_PARAM_HYDRO_MODULUS /* hydro */
                       ? (p->index >= -1 && p->index < m->ngeom)
                       : 0;
    if (!ok)
      return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "derivatives: parameter %d (kind %d, index %d) does not exist",
                            i, (int)p->kind, p->index);
  }
  return GRIT_OK;
}

/* Phase 2: the factor of H at the solution, and its parts. Columns of A and B lie in the part of the
 * factor of their tree (and its neighbours): zero outside its rows, so A and B are zeroed once and the
 * solves and the writes touch those rows only. With a single part (the arm and ball in contact) there
 * is nothing to skip: the plain solves and writes. */
static grit_status prepare_factor(grit_data *d, grit_deriv_ws *w, double *A, double *B) {
  const grit_model *m = d->model;
  const int nx = 2 * m->nv, nu = m->nu;
  grit_status s = grit_solver_refactor(d->solver, d->Aprev, d->stats.nconstraints, d->message);
  if (s != GRIT_OK) return s;
  int nparts;
  w->tree_part = grit_solver_factor_parts(d->solver, &nparts);
  if (nparts <= 1) w->tree_part = NULL;
  if (w->tree_part) { /* the trees by part: counts, starts, fill (ptree_ptr[p] runs to p's end), back */
    for (int p = 0; p <= nparts; ++p) w->ptree_ptr[p] = 0;
    for (int t = 0; t < m->ntree; ++t) w->ptree_ptr[w->tree_part[t] + 1]++;
    for (int p = 0; p < nparts; ++p) w->ptree_ptr[p + 1] += w->ptree_ptr[p];
    for (int t = 0; t < m->ntree; ++t) w->ptree[w->ptree_ptr[w->tree_part[t]]++] = t;
    for (int p = nparts; p > 0; --p) w->ptree_ptr[p] = w->ptree_ptr[p - 1];
    w->ptree_ptr[0] = 0;
  }
  batch_columns(m, w, nparts);
  if (w->blk) return GRIT_OK; /* the blocks are written whole */
  if (w->tree_part && A) memset(A, 0, sizeof(double) * (size_t)nx * (size_t)nx);
  if (w->tree_part && B) memset(B, 0, sizeof(double) * (size_t)nx * (size_t)nu);
  return GRIT_OK;
}

/* Phase 4a: what the state and control passes share: the colouring, the trees' parts, the islands of
 * the block form, the Lagged terms, the inputs' values, and the constant factor of A (the step's) of
 * the trees position passes leave out when the constraints read Delassus estimates. The number of
 * colours into *ncolour. */
static grit_status prepare_passes(grit_data *d, grit_deriv_ws *w, const double *A, int *ncolour_out) {
  const grit_model *m = d->model;
  const int ncolour = grit_deriv_colour_trees(m, d, w);
  *ncolour_out = ncolour;
  /* A tree's columns are written in its rows and its neighbours' (add_rhs, lagged_rhs): they lie in
   * one part of the factor if all of those trees do. */
  for (int t = 0; w->tree_part && t < m->ntree; ++t) {
    w->col_part[t] = w->tree_part[t];
    for (int e = w->adj_ptr[t]; e < w->adj_ptr[t + 1]; ++e)
      if (w->tree_part[w->adj[e]] != w->tree_part[t]) w->col_part[t] = -1;
  }
  if (w->blk) {
    grit_status s = grit_deriv_blocks_prepare(d, w);
    if (s != GRIT_OK) return s;
  }
  grit_deriv_lagged_prepare(m, d, w);
  grit_deriv_rhs_prepare(m, d, w); /* (derivatives_rhs.c) */
  grit_deriv_clear_inputs(m, d, w);
  if (!A || !grit_deriv_uses_delassus(d)) return GRIT_OK;
  /* every tree's factor when the position passes take Delassus estimates from it (derivatives_delassus.c) */
  const int lin = grit_deriv_delassus_lin_on(d, w);
  if (lin) grit_deriv_delassus_lin_begin(m, w);
  int any = 0;
  const double *Aop = grit_step_delassus_operator(d); /* quasistatic: its own; looked up once, not per entry */
  for (int t = 0; t < m->ntree; ++t) {
    if (!w->qconst[t] && !lin) continue;
    any |= w->qconst[t];
    const int a0 = m->tree_madr[t], nn = m->tree_dofnum[t] * m->tree_dofnum[t];
    memcpy(w->Ad + a0, Aop + a0, sizeof(double) * (size_t)nn);
  }
  if (lin) grit_deriv_delassus_lin_factor(m, d, w); /* the tree-ordered factor too (derivatives_delassus.c) */
  if (lin) grit_deriv_factor_operator(m, d, w, grit_deriv_delassus_dense_mask(m, w)); /* (derivatives_columns.c) */
  if (!any) return GRIT_OK;
  if (!lin) grit_deriv_factor_operator(m, d, w, w->qconst);
  grit_deriv_free_inverses(m, w); /* the contacts' Delassus estimates without J_c (derivatives_free.c) */
  /* (no dual copy of a qconst tree's factor into w->Achol: position passes read its double factor w->Ad,
   * grit_delassus_c_dual's cmask = w->qconst, and the passes without skip_qconst factor every tree's) */
  return GRIT_OK;
}

/* The lanes a pass of `kind` from local column base seeds in tree t: its local columns from base, at
 * most GRIT_DUAL_N (none: 0). */
static int lanes_of(const grit_model *m, const grit_deriv_ws *w, int t, int kind, int base, const double *A,
                    const double *B) {
  const int n = grit_deriv_local_columns(m, w, t, kind, A, B) - base;
  return n < 0 ? 0 : n < GRIT_DUAL_N ? n : GRIT_DUAL_N;
}

/* Seeds (x = 1) or unseeds (x = 0) tree t's local column l of `kind` in lane j: the input of column
 * grit_deriv_local_column_id, as grit_deriv_seed_column and grit_deriv_unseed_column set it. */
static void seed_state(const grit_model *m, grit_deriv_ws *w, int t, int kind, int l, int j, double x) {
  if (kind == 2) w->u[w->act[w->act_ptr[t] + l]].d[j] = x;
  else (kind == 0 ? w->dq : w->v0)[m->tree_dofadr[t] + l].d[j] = x;
}

/* Phase 4b: one pass of `kind` (0 dq0, 1 v0, 2 u) over the trees of w->active: seed local columns
 * base .. base + GRIT_DUAL_N - 1 of each, evaluate the residual, add the right-hand sides, unseed and
 * clear the pass's partials. */
static grit_status run_pass(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, int kind, int base, int *first,
                            double *A, double *B, double *P, int np) {
  const grit_model *m = d->model;
  const int coupled = kind == 0 || (kind == 2 && grit_adhesion_any(m)); /* adhesion: controls reach partners */
  int width = 0; /* the most lanes a tree seeds (a spare one carries the Lagged contacts' d / d v_n0) */
  for (int t = 0; t < m->ntree; ++t) {
    if (!w->active[t]) continue;
    const int nl = lanes_of(m, w, t, kind, base, A, B);
    width = nl > width ? nl : width;
    for (int j = 0; j < nl; ++j) seed_state(m, w, t, kind, base + j, j, 1.0);
  }
  const double t0 = grit_deriv_tick(w);
  if (kind == 0) {
    w->lag_lane = width < GRIT_DUAL_N ? GRIT_DUAL_N - 1 : -1;
    grit_deriv_dual_residual(m, d, w, w->active, *first, 1);
    w->lag_lane = -1;
    *first = 0;
  } else {
    grit_deriv_velocity_residual(m, d, w, w->active, kind == 2);
  }
  w->tphase[kind == 0 ? 2 : 3] += grit_deriv_tick(w) - t0;
  for (int t = 0; t < m->ntree; ++t) /* the tree's lanes together; unseeding touches no right-hand side */
    if (w->active[t]) {
      int cols[GRIT_DUAL_N];
      const int nl = lanes_of(m, w, t, kind, base, A, B);
      for (int j = 0; j < nl; ++j) cols[j] = grit_deriv_local_column_id(m, w, t, kind, base + j);
      grit_status s = grit_deriv_add_rhs_lanes(d, w, bt, cols, nl, t, coupled, A, B, P, np);
      if (s != GRIT_OK) return s;
      for (int j = 0; j < nl; ++j) seed_state(m, w, t, kind, base + j, j, 0.0);
    }
  if (kind == 0) grit_deriv_clear_tree_partials(m, w, w->active, 0);
  else if (kind == 1) grit_deriv_clear_velocity_partials(m, w, w->active);
  return GRIT_OK;
}

/* Phase 4: state and control columns, in three kinds of passes.
 *  - Position passes seed dq0, by colours of trees: a tree's dq0 reaches only the residual rows of that
 *    tree and of the trees a constraint couples it to, so trees at distance >= 3 in the graph of the
 *    step's constraints share dual directions (Curtis-Powell-Reid at the level of trees), and a pass
 *    recomputes the kinematics, mass matrix and bias forces of its trees only and evaluates only the
 *    constraints that touch them. The first also recomputes every tree's positions: the constant
 *    values of the trees it does not seed.
 *  - Velocity passes seed v0 at constant positions: twists and bias forces of every tree, whose
 *    partials stay in the tree's own rows, so all trees share the directions; the Lagged contacts'
 *    coupling through gamma_n0(v_n0) is a rank-one term per contact (lagged_rhs).
 *  - Control passes seed u: the actuator forces alone, all trees sharing the directions. */
static grit_status state_control_columns(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, double *A, double *B,
                                         double *P, int np) {
  const grit_model *m = d->model;
  const double t0 = grit_deriv_tick(w);
  int ncolour;
  grit_status s = prepare_passes(d, w, A, &ncolour);
  if (s != GRIT_OK) return s;
  w->tphase[1] += grit_deriv_tick(w) - t0;
  int first = 1;
  for (int kind = 0; kind < 3; ++kind) {
    if (kind > 0 && first) { /* no position pass ran (B only): one unseeded pass for the constant values */
      grit_deriv_dual_residual(m, d, w, NULL, 1, 0);
      first = 0;
    }
    if (kind == 1) grit_deriv_lagged_finish(m, d, w); /* the rank-one terms the velocity columns add */
    if (kind == 1) grit_deriv_smooth_prepare(m, w); /* the smooth force's partials (derivatives_smooth.c) */
    if (kind == 1 && grit_quasistatic_last_step(d)) continue; /* quasistatic: v0 = 0, not the state's */
    const int coupled = kind == 0 || (kind == 2 && grit_adhesion_any(m)), ngroups = coupled ? ncolour : 1;
    for (int k = 0; k < ngroups; ++k) {
      int width = 0; /* the most local columns of a tree of this group */
      for (int t = 0; t < m->ntree; ++t) {
        w->active[t] = !coupled || w->colour[t] == k;
        const int nl = grit_deriv_local_columns(m, w, t, kind, A, B);
        if (w->active[t] && nl > width) width = nl;
      }
      for (int base = 0; base < width; base += GRIT_DUAL_N) {
        s = run_pass(d, w, bt, kind, base, &first, A, B, P, np);
        if (s != GRIT_OK) return s;
      }
    }
  }
  return GRIT_OK;
}

/* Phase 5: parameter columns reach every tree: GRIT_DUAL_N per pass over the whole residual. */
static grit_status parameter_columns(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, double *A, double *B,
                                     const grit_param *params, double *P, int np) {
  const grit_model *m = d->model;
  const int nx = 2 * m->nv, nu = m->nu;
  w->inertial_in = &w->inertial; /* masses may be seeded */
  for (int base = 0; P && base < np; base += GRIT_DUAL_N) {
    const int count = np - base < GRIT_DUAL_N ? np - base : GRIT_DUAL_N;
    grit_deriv_clear_inputs(m, d, w);
    for (int j = 0; j < count; ++j) grit_deriv_seed_column(m, w, params, nx + nu + base + j, j);
    grit_deriv_dual_residual(m, d, w, NULL, 1, 0);
    int cols[GRIT_DUAL_N];
    for (int j = 0; j < count; ++j) cols[j] = nx + nu + base + j;
    grit_status s = grit_deriv_add_rhs_lanes(d, w, bt, cols, count, -1, 1, A, B, P, np);
    if (s != GRIT_OK) return s;
    for (int t = 0; t < m->ntree; ++t) w->active[t] = 1; /* the next call's passes start from zero partials */
    grit_deriv_clear_tree_partials(m, w, w->active, 1);
  }
  return GRIT_OK;
}

/* Phase 6: overflow in the dual residual (huge velocities or parameters) must come back as a status,
 * not as a NaN in a Jacobian the caller trusts (docs/errors.md). write_batch wrote every entry and
 * noted whether one is not finite; only then are the outputs searched for the first. */
static grit_status check_finite(grit_data *d, const grit_deriv_ws *w, const double *A, const double *B,
                                const double *P, int np) {
  if (!w->nonfinite) return GRIT_OK;
  if (w->blk) { /* the block form: its values */
    const grit_jacobian_blocks *J = w->blk;
    for (size_t i = 0; i < J->aoff[J->nblock] + J->boff[J->nblock]; ++i)
      if (!isfinite(i < J->aoff[J->nblock] ? J->A[i] : J->B[i - J->aoff[J->nblock]]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "derivatives: a value of the blocks is not finite");
    return GRIT_OK;
  }
  const int nx = 2 * d->model->nv;
  const double *const out[3] = {A, B, P};
  const int cols[3] = {nx, d->model->nu, np};
  static const char *const names[3] = {"A", "B", "P"};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; out[k] && i < nx * cols[k]; ++i)
      if (!isfinite(out[k][i]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "derivatives: %s[%d][%d] is not finite", names[k],
                              i / cols[k], i % cols[k]);
  return GRIT_OK;
}

/* The Jacobians of (q, v)+ with respect to (q, v), the actuators' inputs w (B's columns) and the
 * parameters: A is 2nv x 2nv, B and P have 2nv rows (the first rows of the caller's B and P). */
static grit_status derivatives_qv(grit_data *d, double *A, double *B, const grit_param *params, int np, double *P) {
  const grit_model *m = d->model;
  grit_status s = check_call(d, params, np, P); /* 1 */
  if (s != GRIT_OK) return s;
  grit_deriv_ws *w = d->deriv;
  w->qd_valid = w->kd_valid = w->nonfinite = w->rn_valid = 0;
  w->rhs_compact = 0; /* (set by the passes' grit_deriv_rhs_prepare) */
  kept_kinematics(m, d, w);
  w->geom.dissipation_free = grit_quasistatic_last_step(d); /* quasistatic: as the step's pairs */
  w->timing = d->settings.timing;
  for (int k = 0; k < GRIT_DERIV_NPHASE; ++k) w->tphase[k] = 0.0;
  const double t0 = grit_deriv_tick(w);
  s = prepare_factor(d, w, A, B); /* 2 */
  if (s != GRIT_OK) return s;
  const double t1 = grit_deriv_tick(w);
  w->tphase[0] = t1 - t0;
  for (int jn = 0; jn < m->njnt; ++jn) /* 3: tangent-space Jacobians of the integration, joint by joint */
    grit_deriv_integration_jacobians(m, d->qprev, d->vsol, m->opt.timestep, jn, w->Dq + 36 * jn, w->Dv + 36 * jn);
  w->tphase[1] = grit_deriv_tick(w) - t1;
  if (w->partials_dirty) { /* an earlier call failed half-way: every tree starts from zero partials */
    for (int t = 0; t < m->ntree; ++t) w->active[t] = 1;
    grit_deriv_clear_tree_partials(m, w, w->active, 1);
  }
  w->partials_dirty = 1;
  w->inertial_in = NULL; /* state and control passes seed no inertial parameter: the model's constants */
  grit_deriv_batch bt = {0};
  if (A || B) s = state_control_columns(d, w, &bt, A, B, P, np); /* 4 */
  if (s == GRIT_OK) s = parameter_columns(d, w, &bt, A, B, params, P, np); /* 5 */
  if (s == GRIT_OK) s = grit_deriv_flush(d, w, &bt, A, B, P, np);
  if (s != GRIT_OK) return s;
  if (A && !w->blk && grit_quasistatic_last_step(d)) grit_quasistatic_velocity_columns(m, A); /* quasistatic */
  w->partials_dirty = 0;
  s = check_finite(d, w, A, B, P, np); /* 6 */
  if (w->timing) { /* the rest: the call's time outside the phases above */
    w->tphase[6] = grit_deriv_tick(w) - t0;
    for (int k = 0; k < 6; ++k) w->tphase[6] -= w->tphase[k];
  }
  return s;
}

void grit_deriv_phase_times(const grit_data *d, double t[GRIT_DERIV_NPHASE]) {
  for (int k = 0; k < GRIT_DERIV_NPHASE; ++k) t[k] = d->deriv->timing ? d->deriv->tphase[k] : 0.0;
}

/* derivatives_qv for derivatives_blocks.c, which sets w->blk (A and B then only say which columns to
 * compute). */
grit_status grit_deriv_qv(grit_data *d, double *A, double *B) {
  return derivatives_qv(d, A, B, NULL, 0, NULL);
}

/* Without activations, B's columns (in place) times their clamps' dw/du: a column whose clamp passes
 * (dw/du = 1: 1 x = x bit for bit) is left as it is, the others taken row by row (B's rows are
 * contiguous; a column's stride is a row). Each entry's product as actuation_chain's column loop takes it. */
static void clamp_columns(const grit_model *m, const grit_deriv_ws *w, double *B) {
  const int nx = 2 * m->nv, nu = m->nu;
  int any = 0;
  for (int a = 0; a < nu; ++a) any |= w->wc[a].d[0] != 1.0;
  for (int i = 0; any && i < nx; ++i) {
    double *row = B + (size_t)i * nu;
    for (int a = 0; a < nu; ++a) {
      const double s = w->wc[a].d[0];
      if (s != 1.0) row[a] = s * row[a];
    }
  }
}

/* The chain rule of actuation (docs/actuation.md): derivatives_qv gives B's columns with respect to the
 * actuators' force inputs w. A control enters w through its clamp (dw/du: 0 or 1, from the dual input
 * function) when the actuator has no dynamics; an activation is w itself, so an actuator with dynamics
 * moves its column to A's activation column, and its control reaches only the activation's row, through
 * the activation update (dual: d act+ / d act, d act+ / d u). Writes the rows and columns of act. */
static void actuation_chain(const grit_model *m, const grit_data *d, grit_deriv_ws *w, double *A, double *B) {
  const int nv = m->nv, nu = m->nu, na = m->na, nx = 2 * nv, n = nx + na;
  for (int a = 0; a < nu; ++a) w->uc[a] = grit_dual_var(d->uprev[a], 0);
  for (int k = 0; k < na; ++k) w->ac[k] = grit_dual_var(d->actprev[k], 1);
  grit_actuator_input_dual(m, w->uc, w->ac, w->wc);
  grit_actuator_act_next_dual(m, w->uc, w->ac, m->opt.timestep, w->an);
  const double *Bq = na > 0 ? w->Bi : B;
  if (na > 0 && A) {
    for (int i = 0; i < nx; ++i) {
      memcpy(A + (size_t)i * n, w->Ai + (size_t)i * nx, sizeof(double) * (size_t)nx);
      for (int k = 0; k < na; ++k) A[(size_t)i * n + nx + k] = 0.0;
    }
    for (int i = nx; i < n; ++i)
      for (int j = 0; j < n; ++j) A[(size_t)i * n + j] = 0.0;
  }
  if (na > 0 && B)
    for (int i = 0; i < n * nu; ++i) B[i] = 0.0;
  if (na == 0 && !w->no_unit_clamp) { /* B in place: every column times its dw/du */
    if (B) clamp_columns(m, w, B);
    return;
  }
  for (int a = 0; a < nu; ++a) {
    const int k = m->act_actadr[a];
    if (k < 0) { /* B's column times dw/du */
      if (!B) continue;
      const double s = w->wc[a].d[0];
      for (int i = 0; i < nx; ++i) B[(size_t)i * nu + a] = s * Bq[(size_t)i * nu + a];
      continue;
    }
    if (A) {
      for (int i = 0; i < nx; ++i) A[(size_t)i * n + nx + k] = Bq[(size_t)i * nu + a];
      A[(size_t)(nx + k) * n + nx + k] = w->an[k].d[1];
    }
    if (B) B[(size_t)(nx + k) * nu + a] = w->an[k].d[0];
  }
}

grit_status grit_step_derivatives(grit_data *d, double *A, double *B, const grit_param *params, int np, double *P) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  grit_deriv_ws *w = d->deriv;
  if (m->na == 0) { /* the state is (q, v): A as it was; B's columns chained through the controls' clamps */
    grit_status s = derivatives_qv(d, A, B, params, np, P);
    if (s == GRIT_OK && B) actuation_chain(m, d, w, NULL, B);
    return s;
  }
  /* x = (q, v, act): (q, v)'s A and B in the workspace, P's first 2nv rows in place, then the chain */
  grit_status s = derivatives_qv(d, A || B ? w->Ai : NULL, A || B ? w->Bi : NULL, params, np, P);
  if (s != GRIT_OK) return s;
  if (P)
    for (int i = 2 * m->nv * np; i < (2 * m->nv + m->na) * np; ++i) P[i] = 0.0;
  actuation_chain(m, d, w, A, B);
  return GRIT_OK;
}
