/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_extra.c — joint friction, equality and tendon constraints of the step (docs/contact.md,
 * Joint friction, equality constraints and tendons). Their rows are scalar-generic
 * (constraints_extra_generic.h): the derivatives evaluate the same code on dual numbers. */
#include "constraints_extra.h"

#include <math.h>
#include <string.h>

#include "grit/constraints.h"

#include "grit/detail/scalar_double.h"
#include "tendon_wrap_generic.h"
#include "constraints_extra_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "tendon_wrap_generic.h"
#include "constraints_extra_generic.h"
#include "grit/detail/scalar_undef.h"

static int trees_dofs(const grit_model *m, int ntree, const int *tree) {
  int n = 0;
  for (int i = 0; i < ntree; ++i) n += m->tree_dofnum[tree[i]];
  return n;
}

int grit_cx_capacity(const grit_model *m, int *jstore) {
  int n = 0, js = 0;
  for (int i = 0; i < m->nv; ++i)
    if (m->dof_frictionloss[i] > 0.0) {
      n++;
      js += m->tree_dofnum[m->dof_tree[i]];
    }
  for (int e = 0; e < m->neq; ++e) {
    const int parts = m->eq_type[e] == GRIT_EQ_WELD ? 2 : 1, rows = m->eq_type[e] <= GRIT_EQ_WELD ? 3 : 1;
    n += parts;
    js += parts * rows * trees_dofs(m, m->eq_ntree[e], m->eq_tree + 2 * e);
  }
  for (int t = 0; t < m->ntendon; ++t) {
    const int k = 2 * (m->ten_limited[t] != 0) + (m->ten_stiffness[t] > 0.0 || m->ten_damping[t] > 0.0) +
                  (m->ten_frictionloss[t] > 0.0);
    n += k;
    js += k * trees_dofs(m, m->ten_ntree[t], m->ten_tree + 2 * t);
  }
  if (jstore) *jstore = js;
  return n;
}

/* A new constraint of `kind` at c[*nc] on the given trees, its rows and parameters from grit_cx_rows. */
static grit_constraint *add(const grit_model *m, const grit_kin *k, const double *q, double dt, int kind, int source,
                            int ntree, const int *tree, grit_constraint *c, int *nc, double *jstore, int *joff,
                            double *scratch) {
  grit_constraint *x = &c[(*nc)++];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->source = source;
  x->dim = kind == GRIT_CONSTRAINT_EQUALITY ? 3 : 1;
  x->ntree = ntree;
  double *J[2] = {NULL, NULL};
  for (int i = 0; i < ntree; ++i) {
    x->tree[i] = tree[i];
    x->joff[i] = *joff;
    J[i] = jstore + *joff;
    *joff += x->dim * m->tree_dofnum[tree[i]];
  }
  grit_cx_rows(m, k, q, dt, kind, source, ntree, x->tree, J, &x->p, scratch);
  return x;
}

/* J v for a 1-row constraint. */
static double row_dot(const grit_model *m, const grit_constraint *x, const double *jstore, const double *v) {
  double s = 0.0;
  for (int i = 0; i < x->ntree; ++i) {
    const int n = m->tree_dofnum[x->tree[i]], adr = m->tree_dofadr[x->tree[i]];
    for (int j = 0; j < n; ++j) s += jstore[x->joff[i] + j] * v[adr + j];
  }
  return s;
}

void grit_build_cx_constraints(const grit_model *m, const grit_kin *k, const double *q, const double *v0,
                               const double *vstar, double dt, grit_constraint *c, int *nc, double *jstore, int *joff,
                               double *scratch) {
  for (int i = 0; i < m->nv; ++i)
    if (m->dof_frictionloss[i] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_FRICTION, i, 1, &m->dof_tree[i], c, nc, jstore, joff, scratch);
  for (int e = 0; e < m->neq; ++e) {
    const int type = m->eq_type[e], kind = type <= GRIT_EQ_WELD ? GRIT_CONSTRAINT_EQUALITY : GRIT_CONSTRAINT_EQUALITY_1D;
    for (int part = 0; part < (type == GRIT_EQ_WELD ? 2 : 1); ++part)
      add(m, k, q, dt, kind, 2 * e + part, m->eq_ntree[e], m->eq_tree + 2 * e, c, nc, jstore, joff, scratch);
  }
  for (int t = 0; t < m->ntendon; ++t) {
    const int nt = m->ten_ntree[t], *tr = m->ten_tree + 2 * t;
    if (m->ten_stiffness[t] > 0.0 || m->ten_damping[t] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_SPRING, t, nt, tr, c, nc, jstore, joff, scratch);
    if (m->ten_frictionloss[t] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_FRICTION, t, nt, tr, c, nc, jstore, joff, scratch);
    if (!m->ten_limited[t]) continue;
    for (int side = 0; side < 2; ++side) {
      const int nc0 = *nc, joff0 = *joff;
      grit_constraint *x = add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_LIMIT, 2 * t + side, nt, tr, c, nc, jstore, joff,
                               scratch);
      /* only within the step's reach, as joint limits (GRIT_STEP_REACH) */
      const double reach =
          GRIT_STEP_REACH * dt * fmax(fabs(row_dot(m, x, jstore, v0)), fabs(row_dot(m, x, jstore, vstar)));
      if (x->p.phi0 > reach) *nc = nc0, *joff = joff0;
    }
  }
}
