/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_colour.c — what the derivative call sets up before its passes: the tangent-space Jacobians
 * of q+ = q0 (+) dt v, the runs of hinge and slide dofs, the factor of A where the call needs one, the
 * colouring of the trees that lets passes share dual directions and the columns each pass seeds. The
 * passes' batched solves and writes: derivatives_columns.c. */
#include <math.h>
#include <string.h>

#include "actuation_adhesion.h"
#include "afactor.h"
#include "constraints.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "dynamics.h"
#include "quasistatic.h"
#include "solver.h"
#include "treechol.h"

/* ------------------------------------------------------------------------ q+ = q0 (+) dt v */

/* The tangent-space Jacobians of q+ = q0 (+) h v for joint j: Dq = d q+ / d dq0 and Dv = d q+ / d v,
 * each nv_j x nv_j, row-major with stride 6. Only those entries are written (a hinge's one number, a
 * ball's 3 x 3, a free joint's 6 x 6): the rest of the 36 is read by nobody, and zeroing it was most of
 * the call's setup (a cache line per joint, written cold each call). Rotations by dual numbers: seed
 * dtheta0 and domega in q+' = q0 exp(dtheta0) exp(h (omega + domega)) and take log(q+^-1 q+'). */
void grit_deriv_integration_jacobians(const grit_model *m, const double *q0, const double *v, double h, int j,
                                  double Dq[36], double Dv[36]) {
  const int t = m->jnt_type[j], da = m->jnt_dofadr[j];
  if (t == GRIT_JOINT_HINGE || t == GRIT_JOINT_SLIDE) {
    Dq[0] = 1.0;
    Dv[0] = h;
    return;
  }
  if (t == GRIT_JOINT_FREE)
    for (int i = 0; i < 36; ++i) Dq[i] = Dv[i] = 0.0;
  int r0 = 0; /* first rotational dof within the joint */
  if (t == GRIT_JOINT_FREE) {
    for (int i = 0; i < 3; ++i) {
      Dq[6 * i + i] = 1.0;
      Dv[6 * i + i] = h;
    }
    r0 = 3;
  }
  /* q+ = q0 exp(phi), phi = h omega (body frame). Perturbed, q0 exp(dth0) exp(phi + h domega) =
   * q+ exp(R(phi)^T dth0 + Jr(phi) h domega) to first order: Dq = R(phi)^T, Dv = h Jr(phi), with
   * R(phi) = I + a [phi]x + b [phi]x^2 and Jr(phi) = I - b [phi]x + c [phi]x^2,
   * a = sin t / t, b = (1 - cos t) / t^2, c = (t - sin t) / t^3, t = |phi| (series below 1e-2 rad). */
  (void)q0;
  const double *w = v + da + r0, ph[3] = {h * w[0], h * w[1], h * w[2]};
  const double t2 = ph[0] * ph[0] + ph[1] * ph[1] + ph[2] * ph[2];
  double a, b, c;
  if (t2 < 1e-4) {
    a = 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0));
    b = 0.5 * (1.0 - t2 / 12.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0)));
    c = (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0))) / 6.0;
  } else {
    const double t = sqrt(t2), st = sin(t), ct = cos(t);
    a = st / t;
    b = (1.0 - ct) / t2;
    c = (t - st) / (t2 * t);
  }
  const double K[9] = {0, -ph[2], ph[1], ph[2], 0, -ph[0], -ph[1], ph[0], 0}; /* [phi]x */
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      const double K2 = ph[r] * ph[k] - (r == k ? t2 : 0.0), I = r == k ? 1.0 : 0.0; /* [phi]x^2 */
      Dq[6 * (r0 + r) + r0 + k] = I - a * K[3 * r + k] + b * K2; /* R(phi)^T: [phi]x changes sign */
      Dv[6 * (r0 + r) + r0 + k] = h * (I - b * K[3 * r + k] + c * K2);
    }
}

/* w->Ad := the tree-block Cholesky factor of the trees of mask (NULL: every tree) of the step's operator,
 * which w->Ad holds for those trees (derivatives.c's prepare_passes). The step factored that very
 * matrix with the same function into d->Achol: while d->A still holds it (achol_fresh, and d->A equal
 * to it bit for bit), its factor is copied instead of computed again (the same bits; 8 % of the CMU
 * humanoid's call, 2.7 % of MuJoCo's humanoid). ws->no_achol_reuse: factored again. */
void grit_deriv_plain_runs(const grit_model *m, grit_deriv_ws *w) {
  for (int i = 0; i < m->nv; ++i) w->plain_end[i] = i;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], end = adr + m->tree_dofnum[t];
    for (int i = end - 1, next = end; i >= adr; --i) {
      const int type = m->jnt_type[m->dof_jnt[i]];
      if (!(type == GRIT_JOINT_HINGE || type == GRIT_JOINT_SLIDE)) next = i;
      w->plain_end[i] = next;
    }
  }
}

void grit_deriv_factor_operator(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *mask) {
  const double *op = grit_step_delassus_operator(d);
  int same = d->achol_fresh && !w->no_achol_reuse;
  const int any_tree_order = grit_afactor_any(d->af);
  for (int t = 0; same && t < m->ntree; ++t) { /* (a tree the step factored in tree order has no dense factor) */
    const size_t a0 = (size_t)m->tree_madr[t], nn = (size_t)m->tree_dofnum[t] * (size_t)m->tree_dofnum[t];
    if (!mask || mask[t])
      same = !(any_tree_order && grit_afactor_tree_order(d->af, t)) && !memcmp(d->A + a0, op + a0, sizeof(double) * nn);
  }
  if (!same) {
    grit_block_cholesky(m, w->Ad, mask);
    return;
  }
  for (int t = 0; t < m->ntree; ++t) {
    const size_t a0 = (size_t)m->tree_madr[t], nn = (size_t)m->tree_dofnum[t] * (size_t)m->tree_dofnum[t];
    if (!mask || mask[t]) memcpy(w->Ad + a0, d->Achol + a0, sizeof(double) * nn);
  }
}

/* Tree t's tree-ordered factor of w->Ad's block (the step's operator, prepare_passes) into w->dtL, w->dtinv
 * (derivatives_delassus.c's solves); returns whether it is positive definite. The step's free motion
 * factored that very block with the same function (afactor.c, the trees of more than 64 dofs): while
 * d->A still holds it (achol_fresh, d->A's block equal to it bit for bit) and the step's factor of the tree
 * is the tree-ordered one, that factor is copied (the same bits; 3.6 % of the dog's call). The same switch
 * as the dense factor's, ws->no_achol_reuse. */
int grit_deriv_tree_factor(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int t) {
  const int a = m->tree_madr[t], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  if (d->achol_fresh && !w->no_achol_reuse && grit_afactor_tree_order(d->af, t) &&
      !memcmp(d->A + a, w->Ad + a, sizeof(double) * (size_t)n * (size_t)n) &&
      grit_afactor_copy_tree(d->af, t, w->dtL + a, w->dtinv + adr)) {
    w->tree_factors_kept++;
    return 1;
  }
  double lo = 1e300, hi = 0.0;
  return grit_treechol_factor(w->dtc, t, w->Ad + a, w->dtL + a, w->dtinv + adr, &lo, &hi) < 0;
}

/* ----------------------------------------------------------------- colours, columns, batches */

/* Whether constraint i couples its two trees in the residual: its force can act, or it is a contact an
 * adhesion actuator pulls through (a force-free candidate in the margin's layer; actuation_adhesion.h). */
static int couples_trees(const grit_model *m, const grit_data *d, const grit_constraint *c, int i) {
  if (c[i].ntree != 2) return 0;
  if (!grit_deriv_constraint_inert(&c[i])) return 1;
  return i < d->ncontacts && grit_adhesion_acts_on(m, &d->collision->c[i]);
}

/* Greedy distance-2 colouring of the trees in the graph of the last step's constraints (an edge per
 * pair of trees a constraint couples; adj lists each tree's neighbours once, in order of first
 * constraint). Also lists each tree's actuators. Returns the number of colours. */
int grit_deriv_colour_trees(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nt = m->ntree, nc = d->stats.nconstraints;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int t = 0; t <= nt; ++t) w->adj_ptr[t] = 0;
  int ne = 0;
  for (int i = 0; i < nc; ++i)
    if (couples_trees(m, d, c, i) && ne + 2 <= w->cap_edges) {
      w->adj_ptr[c[i].tree[0] + 1]++;
      w->adj_ptr[c[i].tree[1] + 1]++;
      ne += 2;
    }
  for (int t = 0; t < nt; ++t) w->adj_ptr[t + 1] += w->adj_ptr[t];
  for (int t = 0; t < nt; ++t) w->stamp[t] = w->adj_ptr[t]; /* fill cursors */
  ne = 0;
  for (int i = 0; i < nc; ++i)
    if (couples_trees(m, d, c, i) && ne + 2 <= w->cap_edges) {
      w->adj[w->stamp[c[i].tree[0]]++] = c[i].tree[1];
      w->adj[w->stamp[c[i].tree[1]]++] = c[i].tree[0];
      ne += 2;
    }
  /* each neighbour once (two trees in contact at several points share as many constraints): the
   * right-hand sides copy the neighbours' rows (grit_deriv_add_rhs) once, not once per constraint */
  for (int t = 0; t < nt; ++t) w->stamp[t] = -1;
  ne = 0;
  for (int t = 0, e0 = 0; t < nt; ++t) {
    const int e1 = w->adj_ptr[t + 1];
    w->adj_ptr[t] = ne;
    for (int e = e0; e < e1; ++e)
      if (w->stamp[w->adj[e]] != t) w->stamp[w->adj[e]] = t, w->adj[ne++] = w->adj[e];
    e0 = e1;
  }
  w->adj_ptr[nt] = ne;
  int ncolour = 0;
  for (int t = 0; t < nt; ++t) w->stamp[t] = -1;
  for (int t = 0; t < nt; ++t) { /* stamp[k] = t marks colour k as taken by t's distance-2 neighbours */
    for (int e = w->adj_ptr[t]; e < w->adj_ptr[t + 1]; ++e) {
      const int u = w->adj[e];
      if (u < t) w->stamp[w->colour[u]] = t;
      for (int f = w->adj_ptr[u]; f < w->adj_ptr[u + 1]; ++f)
        if (w->adj[f] < t) w->stamp[w->colour[w->adj[f]]] = t;
    }
    int k = 0;
    while (w->stamp[k] == t) k++;
    w->colour[t] = k;
    ncolour = k + 1 > ncolour ? k + 1 : ncolour;
  }
  for (int t = 0; t <= nt; ++t) w->act_ptr[t] = 0;
  for (int a = 0; a < m->nu; ++a) w->act_ptr[m->dof_tree[m->act_dof[a]] + 1]++;
  for (int t = 0; t < nt; ++t) w->act_ptr[t + 1] += w->act_ptr[t];
  for (int t = 0; t < nt; ++t) w->stamp[t] = w->act_ptr[t];
  for (int a = 0; a < m->nu; ++a) w->act[w->stamp[m->dof_tree[m->act_dof[a]]]++] = a;
  return ncolour;
}

/* A tree's local columns, in three classes: its dq0 (position passes; for A), its v0 (velocity passes;
 * for A), its actuators' controls (control passes; for B). */
int grit_deriv_local_columns(const grit_model *m, const grit_deriv_ws *w, int t, int kind, const double *A, const double *B) {
  if (kind == 2) return B ? w->act_ptr[t + 1] - w->act_ptr[t] : 0;
  return A ? m->tree_dofnum[t] : 0;
}

int grit_deriv_local_column_id(const grit_model *m, const grit_deriv_ws *w, int t, int kind, int l) {
  if (kind == 2) return 2 * m->nv + w->act[w->act_ptr[t] + l];
  return kind * m->nv + m->tree_dofadr[t] + l;
}

