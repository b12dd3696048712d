/* SPDX-License-Identifier: Apache-2.0 */
/* constraints.c — joint-limit constraints and the Delassus-dependent parameters of all constraints. */
#include "constraints.h"
#include "contact_margin.h"

#include <stddef.h>

#include "contact_geometry.h"

#include "grit/detail/scalar_double.h"
#include "constraints_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "constraints_generic.h"
#include "grit/detail/scalar_undef.h"

#include <math.h>
#include <string.h>

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

void grit_build_limit_constraints(const grit_model *m, const double *q, const double *v0, const double *vstar,
                                  double dt, grit_constraint *c, int *nc, double *jstore, int *joff) {
  for (int j = 0; j < m->njnt; ++j) {
    if (!m->jnt_limited[j]) continue;
    const int dof = m->jnt_dofadr[j], t = m->dof_tree[dof], n = m->tree_dofnum[t];
    const double x = q[m->jnt_qposadr[j]];
    /* the window the coordinate can plausibly reach in this step */
    const double reach = GRIT_STEP_REACH * dt * fmax(fabs(v0[dof]), fabs(vstar[dof]));
    for (int side = 0; side < 2; ++side) {
      const double gap = side == 0 ? x - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - x;
      if (gap > reach) continue;
      grit_constraint *k = &c[(*nc)++];
      memset(k, 0, sizeof *k);
      k->kind = GRIT_CONSTRAINT_LIMIT;
      k->source = 2 * j + side;
      k->dim = 1;
      k->ntree = 1;
      k->tree[0] = t;
      k->joff[0] = *joff;
      double *J = jstore + *joff;
      for (int i = 0; i < n; ++i) J[i] = 0.0;
      J[dof - m->tree_dofadr[t]] = side == 0 ? 1.0 : -1.0;
      *joff += n;
      k->p.phi0 = gap;
      k->p.tau_d = m->jnt_limit_taud[j]; /* a violated limit's correction (grit_params_finalize) */
      k->p.width = m->jnt_limit_width[j];
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

int grit_body_tree(const grit_model *m, int body) {
  const int d = m->body_lastdof[body];
  return d >= 0 ? m->dof_tree[d] : -1;
}

/* s + a . b over n entries, added to s one by one in order (inlined with a constant n where called). */
static inline double dot_on(double s, const double *a, const double *b, int n) {
  for (int j = 0; j < n; ++j) s += a[j] * b[j];
  return s;
}

void grit_build_contact_constraints(const grit_model *m, const grit_kin *k, const grit_contact_candidate *cand,
                                    int ncand, const double *v0, double dt, grit_contact_model model,
                                    double smoothing, int dissipation_free, grit_constraint *c, int *nc,
                                    double *jstore, int *joff, double *scratch) {
  static const int kind[3] = {GRIT_CONSTRAINT_LAGGED, GRIT_CONSTRAINT_SIMILAR, GRIT_CONSTRAINT_SAP};
  const grit_geom_params gp = {m->geom_friction, m->geom_stiffness, m->geom_dissipation, m->geom_taud,
                               dissipation_free, m->geom_priority, m->geom_condim};
  /* A hydroelastic patch's points (the coin's 152) come in a run of one geom pair, most with one normal: the
   * frame and the pair's parameters, functions of the normal's bits and of the pair alone, are kept from the
   * last candidate while these repeat (the same values: the same bits). */
  double F[9], fn[3];
  int have_frame = 0, pg[2] = {-1, -1};
  grit_contact_params pp;
  double inflation = 0.0;
  for (int i = 0; i < ncand; ++i) {
    const grit_contact_candidate *q = &cand[i];
    grit_constraint *x = &c[(*nc)++];
    memset(x, 0, sizeof *x);
    x->kind = kind[model];
    x->source = i;
    x->dim = 3;
    if (!have_frame || memcmp(fn, q->pt.n, sizeof fn) != 0) {
      grit_contact_frame(q->pt.n, F);
      memcpy(fn, q->pt.n, sizeof fn);
      have_frame = 1;
    }
    const int ta = grit_body_tree(m, q->body[0]), tb = grit_body_tree(m, q->body[1]);
    /* the trees touched: one block when both bodies are in one tree or one is static */
    x->ntree = 0;
    if (ta >= 0) x->tree[x->ntree++] = ta;
    if (tb >= 0 && tb != ta) x->tree[x->ntree++] = tb;
    for (int kk = 0; kk < x->ntree; ++kk) {
      const int t = x->tree[kk], n = m->tree_dofnum[t];
      double *J = jstore + *joff;
      x->joff[kk] = *joff;
      *joff += 3 * n;
      if (n == 6) memset(J, 0, sizeof(double) * 18); /* (a free body's: a constant size, stores inlined) */
      else
        for (int j = 0; j < 3 * n; ++j) J[j] = 0.0;
      if (t == tb) grit_contact_jacobian_add(m, k, q->body[1], q->pt.pb, t, F, 1.0, J, scratch);
      if (t == ta) grit_contact_jacobian_add(m, k, q->body[0], q->pt.pa, t, F, -1.0, J, scratch);
    }
    /* the pair's parameters (docs/collision.md) */
    if (q->geom[0] != pg[0] || q->geom[1] != pg[1]) {
      memset(&pp, 0, sizeof pp); /* (x->p's other fields as memset leaves them) */
      grit_pair_params(&gp, q->geom[0], q->geom[1], &pp);
      inflation = grit_pair_inflation(m, q->geom[0], q->geom[1]);
      pg[0] = q->geom[0], pg[1] = q->geom[1];
    }
    grit_contact_params *p = &x->p;
    *p = pp;
    if (q->k_patch > 0) p->k = q->k_patch; /* a hydroelastic patch's own stiffness g A (hydro.h) */
    p->phi0 = q->pt.phi - inflation; /* margin - gap (contact_margin.h) */
    /* gradient smoothing's film acts between moving bodies only: against a static support (the ground)
     * its grip would hold a resting object and its viscosity damp every object on its support */
    const int with_static = grit_body_tree(m, q->body[0]) < 0 || grit_body_tree(m, q->body[1]) < 0;
    p->smooth = with_static ? 0.0 : smoothing;
    p->soft = with_static ? smoothing : 0.0; /* a support's soft normal law: no force at a gap */
    if (x->kind == GRIT_CONSTRAINT_LAGGED) {
      double vn0 = 0.0; /* normal velocity at the previous state: row 3 of J times v0 */
      for (int kk = 0; kk < x->ntree; ++kk) {
        const int t = x->tree[kk], n = m->tree_dofnum[t];
        const double *jn = jstore + x->joff[kk] + 2 * n, *vt = v0 + m->tree_dofadr[t];
        if (n == 6) vn0 = dot_on(vn0, jn, vt, 6); /* (a free body's six: unrolled, the same sum) */
        else vn0 = dot_on(vn0, jn, vt, n);
      }
      p->gn0 = grit_contact_lagged_normal_impulse(p, dt, vn0);
    }
  }
}

void grit_finalize_constraints(const grit_model *m, grit_constraint *c, int nc, const double *jstore,
                               const double *Achol, grit_delassus_fn delassus, const void *ctx, double dt,
                               const grit_step_settings *settings, double *tmp) {
  if (delassus) delassus(ctx, c, nc, jstore, settings, tmp); /* (each w is its constraint's alone: any order) */
  for (int i = 0; i < nc; ++i) {
    if (!delassus) {
      const double *J[2] = {jstore + c[i].joff[0], jstore + (c[i].ntree == 2 ? c[i].joff[1] : 0)};
      c[i].w = grit_constraint_uses_w(&c[i], settings) ? grit_delassus(m, Achol, c[i].dim, c[i].ntree, c[i].tree, J, tmp)
                                                       : 0.0;
    }
    grit_params_finalize(c[i].kind, c[i].w, dt, settings, &c[i].p);
  }
}
