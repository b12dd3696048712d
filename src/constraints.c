/* constraints.c — joint-limit constraints and the Delassus-dependent parameters of all constraints. */
#include "constraints.h"

#include <math.h>
#include <string.h>

/* Near-rigid regime (SAP, Castro et al. 2022): a constraint's compliance is bounded below by
 * beta^2 / (4 pi^2) w, which makes the stiffest resolvable spring oscillate with a period of about
 * beta time steps; beta = 1. */
static const double NEAR_RIGID_FACTOR = 1.0 / (4.0 * 3.14159265358979323846 * 3.14159265358979323846);

int grit_limit_capacity(const grit_model *m, int *jstore) {
  int n = 0, js = 0;
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_limited[j]) {
      n += 2;
      js += 2 * m->tree_dofnum[m->dof_tree[m->jnt_dofadr[j]]];
    }
  if (jstore) *jstore = js;
  return n;
}

void grit_build_limit_constraints(const grit_model *m, const double *q, grit_constraint *c, int *nc,
                                  double *jstore, int *joff) {
  for (int j = 0; j < m->njnt; ++j) {
    if (!m->jnt_limited[j]) continue;
    const int dof = m->jnt_dofadr[j], t = m->dof_tree[dof], n = m->tree_dofnum[t];
    const double x = q[m->jnt_qposadr[j]];
    for (int side = 0; side < 2; ++side) {
      grit_constraint *k = &c[(*nc)++];
      memset(k, 0, sizeof *k);
      k->kind = GRIT_CONSTRAINT_LIMIT;
      k->dim = 1;
      k->ntree = 1;
      k->tree[0] = t;
      k->joff[0] = *joff;
      double *J = jstore + *joff;
      for (int i = 0; i < n; ++i) J[i] = 0.0;
      J[dof - m->tree_dofadr[t]] = side == 0 ? 1.0 : -1.0;
      *joff += n;
      k->p.phi0 = side == 0 ? x - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - x;
    }
  }
}

void grit_finalize_constraint_params(grit_constraint *c, int nc, double dt, const grit_step_settings *st) {
  for (int i = 0; i < nc; ++i) {
    grit_constraint *k = &c[i];
    grit_contact_params *p = &k->p;
    switch (k->kind) {
      case GRIT_CONSTRAINT_SAP: {
        const double tau_d = p->tau_d;
        p->eps = st->sigma * k->w;
        p->Rn = fmax(NEAR_RIGID_FACTOR * k->w, 1.0 / (dt * p->k * (dt + tau_d)));
        p->vhat = -p->phi0 / (dt + tau_d);
        break;
      }
      case GRIT_CONSTRAINT_LAGGED:
        p->eps = st->stiction_tolerance;
        if (st->regularize_lagged) p->eps = fmax(p->eps, st->sigma * k->w * p->mu * p->gn0);
        break;
      case GRIT_CONSTRAINT_SIMILAR:
        p->eps = st->stiction_tolerance;
        break;
      default: /* limit: near-rigid, dissipation time scale one step (overdamped, no bounce) */
        p->Rn = NEAR_RIGID_FACTOR * k->w;
        p->vhat = -p->phi0 / (dt + dt);
        break;
    }
  }
}
