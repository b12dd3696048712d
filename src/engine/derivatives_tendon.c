/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tendon.c — the length-fn transmissions in the derivative call, evaluated once per
 * residual evaluation in position passes and once per call for the velocity and control passes
 * (derivatives_tendon.h says why this is exact). */
#include "derivatives_tendon.h"

#include "actuation.h"
#include "actuation_muscle.h"
#include "derivatives_internal.h"

grit_deriv_tendon *grit_deriv_tendon_layout(const grit_model *m, grit_carver *c) {
  grit_deriv_tendon measure, *const out = grit_carve(c, 1, sizeof *out); /* zeroed by the calloc */
  grit_deriv_tendon *s = out ? out : &measure;
  const int nu = m->nu;
  long cap = 0;
  for (int a = 0; a < nu; ++a)
    if (grit_actuator_has_length_fn(m, a)) cap += m->tree_dofnum[m->dof_tree[m->act_dof[a]]];
  GRIT_CARVE(c, s->ptr, nu + 1);
  GRIT_CARVE(c, s->L, nu);
  GRIT_CARVE(c, s->J, cap);
  GRIT_CARVE(c, s->L0, nu);
  GRIT_CARVE(c, s->J0, cap);
  GRIT_CARVE(c, s->nz, cap);
  GRIT_CARVE(c, s->nnz, nu);
  GRIT_CARVE(c, s->nz0, cap);
  GRIT_CARVE(c, s->nnz0, nu);
  if (out) {
    int p = 0;
    for (int a = 0; a < nu; ++a) {
      s->ptr[a] = p;
      if (grit_actuator_has_length_fn(m, a)) p += m->tree_dofnum[m->dof_tree[m->act_dof[a]]], s->any = 1;
    }
    s->ptr[nu] = p;
  }
  return out;
}

void grit_deriv_tendon_next(grit_deriv_ws *w, int kin_all) {
  w->tn->fresh = 0;
  if (kin_all) w->tn->ok0 = 0;
}

/* Whether x is not an exact zero (NaN too: kept, so its terms carry it as before). */
static int nonzero(const grit_dual *x) {
  int nz = x->v != 0.0;
  GRIT_DUAL_FOR(l) nz |= x->d[l] != 0.0;
  return nz;
}

/* L and J of every length-fn actuator at w->kin, w->q (dual), into L, J with J's nonzero entries in nz,
 * nnz; with keep, their values into the call's constants. */
static void evaluate(const grit_model *m, grit_deriv_ws *w, grit_dual *L, grit_dual *J, int *nz, int *nnz, int keep) {
  grit_deriv_tendon *s = w->tn;
  grit_dual *Jd = w->scratch;
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a)) continue;
    const int adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]], n = s->ptr[a + 1] - s->ptr[a], p = s->ptr[a];
    L[a] = grit_actuator_length_jacobian_dual(m, &w->kin, w->q, a, Jd, w->scratch + m->nv);
    int k = 0, k0 = 0;
    for (int i = 0; i < n; ++i) {
      if (!nonzero(&Jd[adr + i])) continue;
      J[p + i] = Jd[adr + i];
      nz[p + k++] = i;
      if (keep && Jd[adr + i].v != 0.0) s->J0[p + i] = grit_dual_const(Jd[adr + i].v), s->nz0[p + k0++] = i;
    }
    nnz[a] = k;
    if (!keep) continue;
    s->L0[a] = grit_dual_const(L[a].v);
    s->nnz0[a] = k0;
  }
  if (keep) s->ok0 = 1;
}

void grit_deriv_tendon_position(const grit_model *m, grit_deriv_ws *w, grit_dual *force, grit_dual *A) {
  grit_deriv_tendon *s = w->tn;
  const double h = m->opt.timestep;
  if (!s->any) return;
  if (s->off) {
    grit_actuator_tendon_dual(m, &w->kin, w->q, w->v0, w->u, h, force, A, w->scratch);
    return;
  }
  if (!s->fresh) { /* the values are those of every pass of the call: q0's */
    evaluate(m, w, s->L, s->J, s->nz, s->nnz, !s->ok0);
    s->fresh = 1;
  }
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a))
      grit_actuator_tendon_apply_dual(m, a, s->L[a], s->J + s->ptr[a], s->nz + s->ptr[a], s->nnz[a], w->v0, w->u, h,
                                      force, A);
}

const grit_dual *grit_deriv_tendon_moments(const grit_model *m, grit_deriv_ws *w) {
  grit_deriv_tendon *s = w->tn;
  if (!s->ok0) evaluate(m, w, s->L0, s->J0, s->nz0, s->nnz0, 0), s->ok0 = 1; /* at constant q0: partials zero */
  return s->J0;
}

void grit_deriv_tendon_const(const grit_model *m, grit_deriv_ws *w, grit_dual *force) {
  grit_deriv_tendon *s = w->tn;
  const double h = m->opt.timestep;
  if (!s->any) return;
  if (s->off) {
    grit_actuator_tendon_dual(m, &w->kin, w->q, w->v0, w->u, h, force, NULL, w->scratch);
    return;
  }
  (void)grit_deriv_tendon_moments(m, w);
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a))
      grit_actuator_tendon_apply_dual(m, a, s->L0[a], s->J0 + s->ptr[a], s->nz0 + s->ptr[a], s->nnz0[a], w->v0, w->u,
                                      h, force, NULL);
}
