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

/* ------------------------------------------------------------------ the cx rows' structural columns */

static void mark_path(const grit_model *m, char *mark, int b) {
  for (int dof = b >= 0 ? m->body_lastdof[b] : -1; dof >= 0; dof = m->dof_parent[dof]) mark[dof] = 1;
}

/* Marks the dofs where tendon t's row dL/dv can be nonzero (grit_tendon_length_jacobian): a fixed
 * tendon's joints' first dofs; a spatial one's, the paths to the root of its sites' and wrapping
 * geometries' bodies (side sites too: a superset only adds zeros). */
static void mark_tendon(const grit_model *m, char *mark, int t) {
  for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e) {
    if (m->ten_type[t] == GRIT_TENDON_FIXED) {
      mark[m->jnt_dofadr[m->wrap_obj[e]]] = 1;
    } else if (m->wrap_geom[e] >= 0) {
      mark_path(m, mark, m->geom_body[m->wrap_geom[e]]);
      if (m->wrap_obj[e] >= 0) mark_path(m, mark, m->site_body[m->wrap_obj[e]]);
    } else if (m->wrap_geom[e] == -1) {
      mark_path(m, mark, m->site_body[m->wrap_obj[e]]);
    }
  }
}

/* Marks equality e's (cx_equality): its bodies' paths, its joints' dofs, its tendons'. */
static void mark_equality(const grit_model *m, char *mark, int e) {
  for (int o = 0; o < 2; ++o) {
    const int x = m->eq_obj[2 * e + o];
    if (x < 0) continue;
    if (m->eq_type[e] == GRIT_EQ_CONNECT || m->eq_type[e] == GRIT_EQ_WELD) mark_path(m, mark, x);
    else if (m->eq_type[e] == GRIT_EQ_JOINT) mark[m->jnt_dofadr[x]] = 1;
    else mark_tendon(m, mark, x);
  }
}

int grit_cx_col_lists(const grit_model *m, char *mark, int *ptr, int *list) {
  int k = 0;
  for (int s = 0; s < m->neq + m->ntendon; ++s) {
    memset(mark, 0, (size_t)m->nv);
    if (s < m->neq) mark_equality(m, mark, s);
    else mark_tendon(m, mark, s - m->neq);
    if (ptr) ptr[s] = k;
    for (int i = 0; i < m->nv; ++i)
      if (mark[i]) {
        if (list) list[k] = i;
        k++;
      }
  }
  if (ptr) ptr[m->neq + m->ntendon] = k;
  return k;
}

const int *grit_cx_cols(const grit_model *m, const int *ptr, const int *list, int kind, int source, int *count) {
  const int s = grit_cx_slot(m, kind, source);
  if (s < 0) return NULL;
  *count = ptr[s + 1] - ptr[s];
  return list + ptr[s];
}

void grit_cx_leaf_lists(const grit_model *m, const int *ptr, const int *list, unsigned char *leaf) {
  for (int s = 0; s < m->neq + m->ntendon; ++s) {
    const int n = ptr[s + 1] - ptr[s], *cols = list + ptr[s];
    int ok = n > 0 && n <= GRIT_CX_LEAF_MAX;
    const int t = ok ? m->dof_tree[cols[0]] : -1;
    for (int e = 0; e < n && ok; ++e) {
      const int k = cols[e], adr = t >= 0 ? m->tree_dofadr[t] : 0, p = m->dof_parent[k];
      int nch = 0; /* the tree's first dofs that form a chain (treechol.c's tc->chain) */
      while (nch < m->tree_dofnum[t] && m->dof_parent[adr + nch] == (nch ? adr + nch - 1 : -1)) nch++;
      ok = m->dof_tree[k] == t && (e == 0 || k > cols[e - 1]) && k >= adr + nch && p >= adr && p < adr + nch;
    }
    leaf[s] = (unsigned char)ok;
  }
}

/* grit_cx_rows_cols of a joint equality (y - y0 = poly(x - x0)) on one tree with its listed columns, without
 * the scratch rows, their scatter and the dispatch: the same expressions on the same values (each listed
 * column's 1 Jy + J and -dp Jx + J with Jy, Jx its 1 or 0: a NaN dp spreads as there), the same bits. The
 * softbox's 651 equalities are these rows; m->cx_joint_generic: the generic path (tests). */
#if defined(__GNUC__)
#define CX_INLINE inline __attribute__((always_inline))
#else
#define CX_INLINE inline
#endif
static CX_INLINE void joint_equality(const grit_model *m, const double *q, double dt, int source, int tree, double *J,
                           grit_contact_params *p, const int *cols, int ncols) {
  const int eq = source / 2, b1 = m->eq_obj[2 * eq], b2 = m->eq_obj[2 * eq + 1];
  const int n = m->tree_dofnum[tree], adr = m->tree_dofadr[tree];
  const double *data = m->eq_data + GRIT_EQ_NDATA * eq;
  const int da = m->jnt_dofadr[b1], db = b2 >= 0 ? m->jnt_dofadr[b2] : -1;
  double dp = 0.0;
  const double px = b2 >= 0 ? cx_poly(data, q[m->jnt_qposadr[b2]] + -data[6], &dp) : data[0];
  p->phi[0] = (q[m->jnt_qposadr[b1]] + -data[5]) - px;
  for (int e = 0; e < ncols; ++e)
    if (cols[e] >= adr && cols[e] < adr + n) J[cols[e] - adr] = 1.0 * (cols[e] == da ? 1.0 : 0.0) + J[cols[e] - adr];
  if (b2 >= 0)
    for (int e = 0; e < ncols; ++e)
      if (cols[e] >= adr && cols[e] < adr + n)
        J[cols[e] - adr] = -dp * (cols[e] == db ? 1.0 : 0.0) + J[cols[e] - adr];
  p->tau_d = fmax(m->eq_taud[eq], dt);
}

/* Constraint x's J block +0 before its build on one tree with cols, where its block holds the build of the
 * same constraint (kind, source, tree) at the same offset in the last step: a build with cols writes only the
 * listed columns (they include every dof on its bodies' paths), so only those are zeroed; the others are
 * still the +0 of the last step's zeroing (the step's other builds write below the cx rows' offsets, nothing
 * else writes jstore). The flag's 288 spring rows zeroed 340 doubles each, 10 % of its
 * step's instructions (glibc's memset by rep stosb, which valgrind counts a byte an instruction: far less of
 * its time), and wrote its 780 kB again each step. */
static CX_INLINE void zero_kept(const grit_model *m, const grit_constraint *x, double *J, const int *cols, int ncols) {
  const int n = m->tree_dofnum[x->tree[0]], adr = m->tree_dofadr[x->tree[0]], dim = x->dim;
  if (dim == 1) /* (a tendon's row: no loop over the rows) */
    for (int e = 0; e < ncols; ++e) {
      const unsigned k = (unsigned)(cols[e] - adr);
      if (k < (unsigned)n) J[k] = 0.0;
    }
  else
    for (int e = 0; e < ncols; ++e) {
      const unsigned k = (unsigned)(cols[e] - adr);
      if (k < (unsigned)n)
        for (int r = 0; r < dim; ++r) J[r * n + (int)k] = 0.0;
    }
}

/* A new constraint of `kind` at c[*nc] on the given trees, its rows and parameters from grit_cx_rows. */
static grit_constraint *add(const grit_model *m, const grit_kin *k, const double *q, double dt, int kind, int source,
                            int ntree, const int *tree, grit_constraint *c, int *nc, double *jstore, int *joff,
                            double *scratch, const int *colptr, const int *colv, int built) {
  const int at = *nc;
  grit_constraint *x = &c[(*nc)++];
  const int dim = kind == GRIT_CONSTRAINT_EQUALITY ? 3 : 1;
  int ncols = 0;
  const int *cols = colptr ? grit_cx_cols(m, colptr, colv, kind, source, &ncols) : NULL;
  /* whether zero_kept may take it: the last call built this constraint at this index (below `built`: its
   * entry is that call's) and offset (its J block is still in jstore: since then only the builds below this
   * offset wrote there), on one tree, with cols over less than half of it */
  const int kept = cols && ntree == 1 && at < built && x->kind == kind && x->source == source && x->ntree == 1 &&
                   x->tree[0] == tree[0] && x->joff[0] == *joff && 2 * ncols < m->tree_dofnum[tree[0]] &&
                   !m->cx_zero_all;
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->source = source;
  x->dim = dim;
  x->ntree = ntree;
  double *J[2] = {NULL, NULL};
  for (int i = 0; i < ntree; ++i) {
    x->tree[i] = tree[i];
    x->joff[i] = *joff;
    J[i] = jstore + *joff;
    *joff += x->dim * m->tree_dofnum[tree[i]];
  }
  if (kept) zero_kept(m, x, J[0], cols, ncols);
  else /* (the whole blocks; a list over half the tree or more, a particle's few dofs: no gain) */
    for (int i = 0; i < ntree; ++i) {
      const int w = dim * m->tree_dofnum[tree[i]];
      if (w > 8) memset(J[i], 0, sizeof(double) * (size_t)w);
      else
        for (int j = 0; j < w; ++j) J[i][j] = 0.0;
    }
  if (cols && kind == GRIT_CONSTRAINT_EQUALITY_1D && ntree == 1 && m->eq_type[source / 2] == GRIT_EQ_JOINT &&
      !m->cx_joint_generic)
    joint_equality(m, q, dt, source, x->tree[0], J[0], &x->p, cols, ncols);
  else
    cx_rows_zeroed(m, k, q, dt, kind, source, ntree, x->tree, J, &x->p, scratch, cols, ncols);
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
                               double *scratch, const int *colptr, const int *colv, int *built) {
  const int prev = *built;
  for (int i = 0; i < m->nv; ++i)
    if (m->dof_frictionloss[i] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_FRICTION, i, 1, &m->dof_tree[i], c, nc, jstore, joff, scratch, colptr, colv, prev);
  for (int e = 0; e < m->neq; ++e) {
    const int type = m->eq_type[e], kind = type <= GRIT_EQ_WELD ? GRIT_CONSTRAINT_EQUALITY : GRIT_CONSTRAINT_EQUALITY_1D;
    for (int part = 0; part < (type == GRIT_EQ_WELD ? 2 : 1); ++part)
      add(m, k, q, dt, kind, 2 * e + part, m->eq_ntree[e], m->eq_tree + 2 * e, c, nc, jstore, joff, scratch, colptr,
          colv, prev);
  }
  for (int t = 0; t < m->ntendon; ++t) {
    const int nt = m->ten_ntree[t], *tr = m->ten_tree + 2 * t;
    if (m->ten_stiffness[t] > 0.0 || m->ten_damping[t] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_SPRING, t, nt, tr, c, nc, jstore, joff, scratch, colptr, colv, prev);
    if (m->ten_frictionloss[t] > 0.0)
      add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_FRICTION, t, nt, tr, c, nc, jstore, joff, scratch, colptr, colv, prev);
    if (!m->ten_limited[t]) continue;
    for (int side = 0; side < 2; ++side) {
      const int nc0 = *nc, joff0 = *joff;
      grit_constraint *x = add(m, k, q, dt, GRIT_CONSTRAINT_TENDON_LIMIT, 2 * t + side, nt, tr, c, nc, jstore, joff,
                               scratch, colptr, colv, prev);
      /* only within the step's reach, as joint limits (GRIT_STEP_REACH) */
      const double reach =
          GRIT_STEP_REACH * dt * fmax(fabs(row_dot(m, x, jstore, v0)), fabs(row_dot(m, x, jstore, vstar)));
      if (x->p.phi0 > reach) { /* (its blocks zeroed again: rows after it may keep zeros where they lay) */
        memset(jstore + joff0, 0, sizeof(double) * (size_t)(*joff - joff0));
        *nc = nc0, *joff = joff0;
      }
    }
  }
  *built = *nc; /* (a dropped limit's entry at *nc is not below it) */
}
