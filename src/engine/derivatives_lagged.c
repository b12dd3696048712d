/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_lagged.c — the Lagged contacts' rank-one terms of dr/dv0 in the derivative call: listed by
 * tree before the passes, their slopes g taken from a position pass's spare lane or evaluated here, and
 * added to the velocity columns' right-hand sides. */
#include <immintrin.h>
#include <math.h>

#include "constraints.h"
#include "contact_model.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "solver.h"

/* The Lagged model's gamma_n0 depends on v0 through v_n0 = (J v0)_n only, so each Lagged contact adds
 * a rank-one term to dr/dv0: -J^T g (J_n), g = d gamma / d v_n0 (through gamma_n0 and, when the
 * regularization is on, eps). The contacts are listed by tree here; g is marked unknown (NaN), taken
 * from a position pass's spare dual lane where there is one (grit_deriv_dual_residual), and evaluated
 * by lagged_finish for the others. */
void grit_deriv_lagged_prepare(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nt = m->ntree;
  w->lag_lane = -1;
  for (int t = 0; t <= nt; ++t) w->lag_ptr[t] = 0;
  if (d->settings.contact_model != GRIT_CONTACT_LAGGED) return;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const int nc = d->stats.nconstraints;
  int ne = 0;
  for (int i = 0; i < nc && ne + 2 <= w->cap_edges; ++i) {
    const grit_constraint *k = &c[i];
    if (k->kind != GRIT_CONSTRAINT_LAGGED || grit_deriv_constraint_inert(k)) continue;
    for (int q = 0; q < k->ntree; ++q) w->lag_ptr[k->tree[q] + 1]++;
    ne += k->ntree;
    for (int q = 0; q < 3; ++q) w->lag_g[3 * i + q] = NAN;
  }
  for (int t = 0; t < nt; ++t) w->lag_ptr[t + 1] += w->lag_ptr[t];
  for (int t = 0; t < nt; ++t) w->stamp[t] = w->lag_ptr[t];
  ne = 0;
  for (int i = 0; i < nc && ne + 2 <= w->cap_edges; ++i) {
    const grit_constraint *k = &c[i];
    if (k->kind != GRIT_CONSTRAINT_LAGGED || grit_deriv_constraint_inert(k)) continue;
    for (int q = 0; q < k->ntree; ++q) w->lag[w->stamp[k->tree[q]]++] = i;
    ne += k->ntree;
  }
}

/* g of the contacts no position pass gave (one dual direction: the contact's parameters, Jacobian and
 * velocity at the step), and J^T g of each, before the velocity passes read them (lagged_rhs). */
void grit_deriv_lagged_finish(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  w->lag_lane = -1;
  if (d->settings.contact_model != GRIT_CONTACT_LAGGED) return;
  const double h = m->opt.timestep;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  const int nc = d->stats.nconstraints;
  int ne = 0;
  for (int i = 0; i < nc && ne + 2 <= w->cap_edges; ++i) {
    const grit_constraint *k = &c[i];
    if (k->kind != GRIT_CONSTRAINT_LAGGED || grit_deriv_constraint_inert(k)) continue;
    ne += k->ntree;
    double *g = w->lag_g + 3 * i, *y = w->lag_y + (size_t)2 * w->maxn * i;
    if (g[0] != g[0]) {
      double vn0 = 0.0;
      for (int q = 0; q < k->ntree; ++q) {
        const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
        const double *J = jstore + k->joff[q];
        for (int j = 0; j < n; ++j) vn0 += J[2 * n + j] * d->vprev[adr + j];
      }
      grit_contact_params_dual p;
      p.phi0 = grit_dual_const(k->p.phi0);
      p.k = grit_dual_const(k->p.k);
      p.d = grit_dual_const(k->p.d);
      p.mu = grit_dual_const(k->p.mu);
      p.tau_d = grit_dual_const(k->p.tau_d);
      p.eps = grit_dual_const(k->p.eps);
      p.Rn = grit_dual_const(k->p.Rn);
      p.vhat = grit_dual_const(k->p.vhat);
      p.smooth = grit_dual_const(k->p.smooth);
      p.soft = grit_dual_const(k->p.soft);
      p.gn0 = grit_contact_lagged_normal_impulse_dual(&p, h, grit_dual_var(vn0, 0));
      grit_params_finalize_dual(k->kind, grit_dual_const(k->w), h, &d->settings, &p);
      grit_dual vc[3], gamma[3], G[9];
      for (int q = 0; q < 3; ++q) vc[q] = grit_dual_const(k->vc[q]);
      grit_constraint_eval_dual(k->kind, &p, h, vc, gamma, G);
      for (int q = 0; q < 3; ++q) g[q] = gamma[q].d[0];
    }
    for (int q = 0; q < k->ntree; ++q) { /* J^T g, the same for every dof of the contact's trees */
      const int n = m->tree_dofnum[k->tree[q]];
      const double *J = jstore + k->joff[q];
      for (int j = 0; j < n; ++j) y[q * w->maxn + j] = J[j] * g[0] + J[n + j] * g[1] + J[2 * n + j] * g[2];
    }
  }
}

/* Adds to x (= -dr/dv0 of dof `dof`, in tree t) the Lagged contacts' terms J^T g J_n[dof], J^T g kept. */
void grit_deriv_lagged_rhs(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, int t, int dof, double *x) {
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  /* the loop's invariants in locals: x may alias nothing read here, but the compiler cannot know */
  const int nt = m->tree_dofnum[t], row = 2 * nt + dof - m->tree_dofadr[t], maxn = w->maxn;
  const int *lag = w->lag, e0 = w->lag_ptr[t], e1 = w->lag_ptr[t + 1];
  const double *lag_y = w->lag_y;
  for (int e = e0; e < e1; ++e) {
    const grit_constraint *k = &c[lag[e]];
    const double s = jstore[k->joff[k->tree[0] == t ? 0 : 1] + row];
    if (s == 0.0) continue;
    const double *y = lag_y + (size_t)2 * maxn * lag[e]; /* J^T g (lagged_finish) */
    for (int q = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]];
      double *restrict xq = x + m->tree_dofadr[k->tree[q]];
      const double *restrict yq = y + q * maxn;
      if (n == 6) /* a free body: a fixed count the compiler unrolls, the same operations */
        for (int j = 0; j < 6; ++j) xq[j] += s * yq[j];
      else
        for (int j = 0; j < n; ++j) xq[j] += s * yq[j];
    }
  }
}

/* grit_deriv_lagged_rhs for k >= 2 lanes with AVX2: each contact's constraint, Jacobian row and J^T g
 * read once for the lanes, x[l] += s[l] J^T g four rows per instruction, a product and a sum each
 * rounded (no fused multiply-add): each x[l] gets the same terms in the same order, the same bits. */
static __attribute__((target("avx2"))) void lagged_rhs_avx2(const grit_model *m, const grit_data *d, const grit_deriv_ws *w,
                                                            int t, const int *dof, int k, double *const *x) {
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  const int nt = m->tree_dofnum[t], row = 2 * nt - m->tree_dofadr[t], maxn = w->maxn;
  const int *lag = w->lag, e0 = w->lag_ptr[t], e1 = w->lag_ptr[t + 1];
  const double *lag_y = w->lag_y;
  for (int e = e0; e < e1; ++e) {
    const grit_constraint *kc = &c[lag[e]];
    const double *jn = jstore + kc->joff[kc->tree[0] == t ? 0 : 1] + row; /* J_n of tree t, by dof */
    const double *y = lag_y + (size_t)2 * maxn * lag[e];                    /* J^T g (lagged_finish) */
    double sq[GRIT_DUAL_N];
    int any = 0;
    for (int l = 0; l < k; ++l) sq[l] = jn[dof[l]], any |= sq[l] != 0.0;
    if (!any) continue;
    for (int q = 0; q < kc->ntree; ++q) {
      const int n = m->tree_dofnum[kc->tree[q]], n4 = n & ~3, adr = m->tree_dofadr[kc->tree[q]];
      const double *restrict yq = y + q * maxn;
      const __m256i tail = _mm256_cmpgt_epi64(_mm256_set1_epi64x(n - n4), _mm256_setr_epi64x(0, 1, 2, 3));
      const __m256d ytail = _mm256_maskload_pd(yq + n4, tail); /* the last n - n4 rows, the others 0 */
      for (int l = 0; l < k; ++l) {
        const double sl = sq[l];
        if (sl == 0.0) continue;
        const __m256d sv = _mm256_set1_pd(sl);
        double *restrict xq = x[l] + adr;
        for (int j = 0; j < n4; j += 4)
          _mm256_storeu_pd(xq + j, _mm256_add_pd(_mm256_loadu_pd(xq + j), _mm256_mul_pd(sv, _mm256_loadu_pd(yq + j))));
        if (n4 < n) /* the rows past n neither read nor written */
          _mm256_maskstore_pd(xq + n4, tail, _mm256_add_pd(_mm256_maskload_pd(xq + n4, tail), _mm256_mul_pd(sv, ytail)));
      }
    }
  }
}

/* grit_deriv_lagged_rhs for the k velocity columns dof[l] (all in tree t) of one pass's lanes, x[l]
 * their right-hand sides (the column at a time without AVX2; ws->no_rhs_lanes takes that path). */
void grit_deriv_lagged_rhs_lanes(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, int t, const int *dof, int k,
                                 double *const *x) {
  if (k >= 2 && __builtin_cpu_supports("avx2")) {
    lagged_rhs_avx2(m, d, w, t, dof, k, x);
    return;
  }
  for (int l = 0; l < k; ++l) grit_deriv_lagged_rhs(m, d, w, t, dof[l], x[l]);
}
