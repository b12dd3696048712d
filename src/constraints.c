/* constraints.c — joint-limit constraints and the Delassus-dependent parameters of all constraints. */
#include "constraints.h"

#include "contact_geometry.h"

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

int grit_contact_jstore_size(const grit_model *m) {
  int a = 0, b = 0; /* the two largest trees */
  for (int t = 0; t < m->ntree; ++t) {
    int n = m->tree_dofnum[t];
    if (n > a) {
      b = a;
      a = n;
    } else if (n > b) {
      b = n;
    }
  }
  return 3 * (a + b);
}

static int body_tree(const grit_model *m, int body) {
  const int d = m->body_lastdof[body];
  return d >= 0 ? m->dof_tree[d] : -1;
}

/* Adds sign * frame^T J_p over the columns of tree t into the dim 3 x n block out, where J_p is the
 * Jacobian of the point p fixed to body. scratch: 3 n. */
static void add_frame_point_jacobian(const grit_model *m, const grit_kin *k, int body, const double p[3], int t,
                                     const double F[9], double sign, double *out, double *scratch) {
  const int n = m->tree_dofnum[t];
  grit_kin_point_jacobian_cols(m, k, body, p, m->tree_dofadr[t], n, scratch, NULL);
  for (int r = 0; r < 3; ++r) /* row r of frame^T: column r of F */
    for (int j = 0; j < n; ++j)
      out[r * n + j] += sign * (F[r] * scratch[j] + F[3 + r] * scratch[n + j] + F[6 + r] * scratch[2 * n + j]);
}

void grit_build_contact_constraints(const grit_model *m, const grit_kin *k, const grit_contact_candidate *cand,
                                    int ncand, const double *v0, double dt, grit_contact_model model,
                                    grit_constraint *c, int *nc, double *jstore, int *joff, double *scratch) {
  static const int kind[3] = {GRIT_CONSTRAINT_LAGGED, GRIT_CONSTRAINT_SIMILAR, GRIT_CONSTRAINT_SAP};
  for (int i = 0; i < ncand; ++i) {
    const grit_contact_candidate *q = &cand[i];
    grit_constraint *x = &c[(*nc)++];
    memset(x, 0, sizeof *x);
    x->kind = kind[model];
    x->dim = 3;
    double F[9];
    grit_contact_frame(q->pt.n, F);
    const int ta = body_tree(m, q->body[0]), tb = body_tree(m, q->body[1]);
    /* the trees touched: one block when both bodies are in one tree or one is static */
    x->ntree = 0;
    if (ta >= 0) x->tree[x->ntree++] = ta;
    if (tb >= 0 && tb != ta) x->tree[x->ntree++] = tb;
    for (int kk = 0; kk < x->ntree; ++kk) {
      const int t = x->tree[kk], n = m->tree_dofnum[t];
      double *J = jstore + *joff;
      x->joff[kk] = *joff;
      *joff += 3 * n;
      for (int j = 0; j < 3 * n; ++j) J[j] = 0.0;
      if (t == tb) add_frame_point_jacobian(m, k, q->body[1], q->pt.pb, t, F, 1.0, J, scratch);
      if (t == ta) add_frame_point_jacobian(m, k, q->body[0], q->pt.pa, t, F, -1.0, J, scratch);
    }
    /* the pair's parameters (docs/collision.md) */
    const int ga = q->geom[0], gb = q->geom[1];
    grit_contact_params *p = &x->p;
    const double ka = m->geom_stiffness[ga], kb = m->geom_stiffness[gb];
    p->phi0 = q->pt.phi;
    p->mu = m->geom_friction[ga] > m->geom_friction[gb] ? m->geom_friction[ga] : m->geom_friction[gb];
    p->k = 2.0 * ka * kb / (ka + kb);
    p->d = 0.5 * (m->geom_dissipation[ga] + m->geom_dissipation[gb]);
    p->tau_d = 0.5 * (m->geom_taud[ga] + m->geom_taud[gb]);
    if (x->kind == GRIT_CONSTRAINT_LAGGED) {
      double vn0 = 0.0; /* normal velocity at the previous state: row 3 of J times v0 */
      for (int kk = 0; kk < x->ntree; ++kk) {
        const int t = x->tree[kk], n = m->tree_dofnum[t];
        for (int j = 0; j < n; ++j) vn0 += jstore[x->joff[kk] + 2 * n + j] * v0[m->tree_dofadr[t] + j];
      }
      p->gn0 = grit_contact_lagged_normal_impulse(p, dt, vn0);
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
