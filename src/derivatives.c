/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives.c — Jacobians of a step by the implicit function theorem (seed 000, section X-B).
 *
 * r(v; theta) = A(q0) (v - v0) - dt k(q0, v0, u) - sum_i J_i(q0)^T gamma_i(J_i v + b_i) = 0 at the
 * solution v. Columns of dr/dtheta come from re-running that residual on dual numbers with theta
 * seeded, GRIT_DUAL_N columns per pass; H dv/dtheta = -dr/dtheta is solved with the factor of H at the
 * solution; then q+ = q0 (+) dt v is differentiated in the tangent space, joint by joint. The
 * residual is built from the same scalar-generic code as the step (kinematics, dynamics, contact
 * geometry, constraint glue, contact models); only the loop that assembles it is written here, and,
 * for trees of one-joint bodies, the position passes' kinematic partials, which are rigid motions
 * (rigid_body: the same derivatives as the dual kinematics, at a fraction of the cost). */
#include "derivatives.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "arena.h"
#include "constraints.h"
#include "constraints_extra.h"
#include "contact_geometry.h"
#include "data_internal.h"
#include "dynamics.h"
#include "grit/derivatives.h"
#include "hydro.h"
#include "status_internal.h"

/* Right-hand sides solved together with the kept factor. */
#define RHS_BATCH 64

/* Every dual array of one residual evaluation, sized at creation. */
struct grit_deriv_ws {
  grit_kin_dual kin;
  grit_inertial_dual inertial;
  const grit_inertial_dual *inertial_in; /* &inertial, or NULL: the model's values as constants */
  grit_dual *mass, *com, *inertia;        /* (nbody, 3 nbody, 9 nbody) */
  grit_geom_params_dual geom;
  grit_dual *gparam;                      /* (4 ngeom) friction, stiffness, dissipation, tau_d */
  grit_dual *q, *dq, *v0, *u;             /* (nq, nv, nv, nu) */
  grit_dual *M, *A, *Achol;               /* (nM) */
  grit_dual *bias, *force, *r, *tmp;      /* (nv) */
  grit_sinertia_dual *crb;                /* (nbody) */
  grit_dual *acc, *frc;                   /* (6 nbody) */
  grit_dual *J;                           /* (3 * 2 * largest tree) one constraint's Jacobian */
  grit_dual *scratch;                     /* (6 nv) */
  double *rhs;                            /* (nv x RHS_BATCH) right-hand sides, column-major */
  int *ids;                               /* (RHS_BATCH) the column id of each */
  int *part;                              /* (RHS_BATCH) the factor's part each lies in (-1: anywhere) */
  const int *tree_part;                   /* the kept factor's part of each tree (NULL: one part) */
  int *col_part;                          /* (ntree) the part a tree's columns lie in (-1: several) */
  int *ptree_ptr, *ptree;                 /* the trees by part: (ntree + 1), (ntree) */
  int *colour, *adj_ptr, *adj, *stamp;    /* tree colouring: (ntree), (ntree + 1), (2 cap), (ntree) */
  int *act_ptr, *act;                     /* actuators by tree: (ntree + 1), (nu) */
  char *active;                           /* (ntree) the trees seeded in the current pass */
  int cap_edges;
  int *lag_ptr, *lag;                     /* Lagged contacts by tree: (ntree + 1), (cap_edges) */
  double *lag_g;                          /* (3 max_constraints) d gamma / d v_n0 of each Lagged contact */
  double *lag_y;                          /* (2 maxn max_constraints) J^T lag_g of each, tree by tree */
  int maxn;                               /* the most dofs of a tree */
  int params_dirty;                       /* the inertial and geometry inputs may hold seeds (or no values) */
  int partials_dirty;                     /* a call stopped before clearing the partials of its passes */
  char *qconst;                           /* (ntree) a free body with its centre of mass at its origin */
  char *mask2, *mask3;                    /* (ntree) scratch tree masks */
  double *Ad;                             /* (nM) scratch: A's blocks in double */
  double *Dq, *Dv;                        /* (36 njnt) integration Jacobians, a 6x6 block per joint */
  grit_kin kd;                            /* double kinematics at q0 (+) 0: the position passes' values */
  double *qd;                             /* (nq) q0 (+) 0 */
  int qd_valid, kd_valid;                 /* qd, kd hold this call's values */
  int nonfinite;                          /* a value written out this call is not finite */
  char *rigid;                            /* (ntree) position partials in closed form (rigid_body) */
  char *mask4;                            /* (ntree) scratch tree mask */
  grit_dual *twist;                       /* (6 nbody) body twists along the seed directions (rigid_body) */
  grit_dual *uc, *wc, *ac, *an;           /* (nu, nu, na, na) actuation's chain rule (actuation_chain) */
  double *Ai, *Bi;                        /* (2nv x 2nv, 2nv x nu) A and B of (q, v) when na > 0 */
  void *arena;
};

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
  GRIT_CARVE(c, w->rhs, nv * RHS_BATCH);
  GRIT_CARVE(c, w->ids, RHS_BATCH);
  GRIT_CARVE(c, w->part, RHS_BATCH);
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
  GRIT_CARVE(c, w->qconst, m->ntree);
  GRIT_CARVE(c, w->mask2, m->ntree);
  GRIT_CARVE(c, w->mask3, m->ntree);
  GRIT_CARVE(c, w->Ad, m->nM);
  GRIT_CARVE(c, w->Dq, 36 * nj);
  GRIT_CARVE(c, w->Dv, 36 * nj);
  GRIT_CARVE_KIN(c, w->kd, m);
  GRIT_CARVE(c, w->qd, m->nq);
  GRIT_CARVE(c, w->rigid, m->ntree);
  GRIT_CARVE(c, w->mask4, m->ntree);
  GRIT_CARVE(c, w->twist, 6 * m->nbody);
  GRIT_CARVE(c, w->uc, m->nu);
  GRIT_CARVE(c, w->wc, m->nu);
  GRIT_CARVE(c, w->ac, m->na);
  GRIT_CARVE(c, w->an, m->na);
  GRIT_CARVE(c, w->Ai, m->na > 0 ? 4 * nv * nv : 0);
  GRIT_CARVE(c, w->Bi, m->na > 0 ? 2 * nv * m->nu : 0);
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
  w->inertial.mass = w->mass;
  w->inertial.com = w->com;
  w->inertial.inertia = w->inertia;
  w->inertial_in = &w->inertial;
  const int ng = m->ngeom;
  w->geom.friction = w->gparam;
  w->geom.stiffness = w->gparam + ng;
  w->geom.dissipation = w->gparam + 2 * ng;
  w->geom.tau_d = w->gparam + 3 * ng;
  w->params_dirty = 1;
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
                   m->body_com[3 * body] == 0.0 && m->body_com[3 * body + 1] == 0.0 && m->body_com[3 * body + 2] == 0.0;
  }
  /* Trees whose position partials have a closed form (rigid_body): one joint per body at most, a free
   * joint only on a child of the world. */
  for (int t = 0; t < m->ntree; ++t) w->rigid[t] = 1;
  for (int b = 1; b < m->nbody; ++b) {
    const int t = m->body_tree[b], nj = m->body_jntnum[b];
    if (t < 0) continue;
    if (nj > 1 || (nj == 1 && m->jnt_type[m->body_jnt[m->body_jntadr[b]]] == GRIT_JOINT_FREE && m->body_parent[b] != 0))
      w->rigid[t] = 0;
  }
  *out = w;
  return GRIT_OK;
}

void grit_deriv_ws_free(grit_deriv_ws *w) {
  if (!w) return;
  free(w->arena);
  free(w);
}

/* ------------------------------------------------------------------------------ the columns */

/* The columns of theta: 0..nv-1 dq0, nv..2nv-1 v0, then the nu controls, then the np parameters.
 * Sets every dual input to its value with zero partials (seed_column then seeds). The inertial and
 * geometry parameters are the model's, constant: they are reset only after parameter passes seeded them. */
static void clear_inputs(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nv = m->nv, nu = m->nu, ng = m->ngeom;
  for (int i = 0; i < nv; ++i) {
    w->dq[i] = grit_dual_const(0.0);
    w->v0[i] = grit_dual_const(d->vprev[i]);
  }
  for (int i = 0; i < nu; ++i) w->u[i] = grit_dual_const(d->actinprev[i]); /* the actuators' inputs */
  if (!w->params_dirty) return;
  w->params_dirty = 0;
  for (int b = 0; b < m->nbody; ++b) {
    w->mass[b] = grit_dual_const(m->body_mass[b]);
    for (int i = 0; i < 3; ++i) w->com[3 * b + i] = grit_dual_const(m->body_com[3 * b + i]);
    for (int i = 0; i < 9; ++i) w->inertia[9 * b + i] = grit_dual_const(m->body_inertia[9 * b + i]);
  }
  const double *gsrc[4] = {m->geom_friction, m->geom_stiffness, m->geom_dissipation, m->geom_taud};
  for (int k = 0; k < 4; ++k)
    for (int g = 0; g < ng; ++g) w->gparam[k * ng + g] = grit_dual_const(gsrc[k][g]);
  grit_hydro_moduli_dual(m, w->gparam + GRIT_PARAM_HYDRO_MODULUS * ng); /* hydro */
}

/* Subtracts J^T gamma (dual) of one constraint from r, with the constraint's dual Jacobian blocks. */
static void subtract_jt_gamma(const grit_model *m, int dim, int ntree, const int tree[2], const grit_dual *const J[2],
                              const grit_dual *gamma, grit_dual *r) {
  for (int k = 0; k < ntree; ++k) {
    const int n = m->tree_dofnum[tree[k]], adr = m->tree_dofadr[tree[k]];
    for (int q = 0; q < dim; ++q)
      for (int j = 0; j < n; ++j) r[adr + j] = grit_dual_sub(r[adr + j], grit_dual_mul(J[k][q * n + j], gamma[q]));
  }
}

/* J v + b with v (the solution) a plain double. */
static void apply_jacobian(const grit_model *m, int dim, int ntree, const int tree[2], const grit_dual *const J[2],
                           const double *v, const double *b, grit_dual *vc) {
  for (int q = 0; q < dim; ++q) {
    vc[q] = grit_dual_const(b ? b[q] : 0.0);
    for (int k = 0; k < ntree; ++k) {
      const int n = m->tree_dofnum[tree[k]], adr = m->tree_dofadr[tree[k]];
      for (int j = 0; j < n; ++j) vc[q] = grit_dual_fma(J[k][q * n + j], grit_dual_const(v[adr + j]), vc[q]);
    }
  }
}

static int constraint_inert(const grit_constraint *c);

static void zero_partials(grit_dual *x, int n) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < GRIT_DUAL_N; ++k) x[i].d[k] = 0.0;
}

/* After a pass seeded in the trees of `active`: their kinematic and dynamic quantities keep their
 * values but lose the pass's partials, so that the next pass may use them as constants. */
static void clear_tree_partials(const grit_model *m, grit_deriv_ws *w, const char *active, int all_dynamics) {
  for (int b = 1; b < m->nbody; ++b) {
    if (m->body_tree[b] < 0 || !active[m->body_tree[b]]) continue;
    zero_partials(w->kin.xpos + 3 * b, 3);
    zero_partials(w->kin.xquat + 4 * b, 4);
    zero_partials(w->kin.xmat + 9 * b, 9);
    zero_partials(w->kin.xipos + 3 * b, 3);
    zero_partials(w->kin.cvel + 6 * b, 6);
    zero_partials(&w->kin.cinert[b].m, 1);
    zero_partials(w->kin.cinert[b].h, 3);
    zero_partials(w->kin.cinert[b].I, 9);
    for (int n = 0; n < m->body_jntnum[b]; ++n) {
      const int j = m->body_jnt[m->body_jntadr[b] + n], type = m->jnt_type[j];
      zero_partials(w->kin.xanchor + 3 * j, 3);
      zero_partials(w->kin.xaxis + 3 * j, 3);
      zero_partials(w->q + m->jnt_qposadr[j], type == GRIT_JOINT_FREE ? 7 : type == GRIT_JOINT_BALL ? 4 : 1);
    }
  }
  for (int t = 0; t < m->ntree; ++t) {
    if (!active[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    zero_partials(w->kin.cdof + 6 * adr, 6 * n);
    if (w->qconst[t] && !all_dynamics) continue; /* its dynamics were left out of the pass: no partials */
    zero_partials(w->kin.cdof_dot + 6 * adr, 6 * n);
    zero_partials(w->bias + adr, n);
    zero_partials(w->M + m->tree_madr[t], n * n);
    zero_partials(w->A + m->tree_madr[t], n * n);
    zero_partials(w->Achol + m->tree_madr[t], n * n);
  }
}

/* ------------------------------------------------------------- position partials in closed form */

/* Position passes seed dq0, the tangent perturbation of q0 -> q0 (+) dq0. In a tree whose bodies have at
 * most one joint (a free joint only on a child of the world), moving dof k moves every body after it
 * rigidly, to first order, with the twist cdof_k at q0 (world-origin coordinates): hinge and slide by
 * q + e, ball and free by q (x) exp(e) in the body frame, a rotation about the body axis through the
 * anchor. Along seed direction j, body b so moves with the twist s = (w; v) = sum over the dofs k
 * before it of cdof_k dq_k.d[j] (its velocity at joint velocities dq.d[j]), and the partials of its
 * kinematics follow from their values: a point x moves at w x x + v, a direction a at w x a, an
 * orientation R at [w] R (its quaternion at (0, w)/2 (x) q), a spatial inertia (m, h, I) at
 * (0, w x h + m v, [w] I - I [w] + 2 (h.v) 1 - v h^T - h v^T), a motion subspace c at s xm c. These are
 * the derivatives grit_kin_positions_dual takes through every rotation, normalization and product
 * (equal up to round-off), at a fraction of its cost. */

/* The twists are dual numbers of value 0 whose partials are the twist's components along the seed
 * directions, so that the partials of a quantity follow by dual arithmetic; each result then takes
 * its value from kd. a * ca - b * cb: */
static inline grit_dual lin2(grit_dual a, double ca, grit_dual b, double cb) {
  return grit_dual_sub(grit_dual_scale(a, ca), grit_dual_scale(b, cb));
}

/* s[0] c0 + s[1] c1 + s[2] c2 */
static inline grit_dual comb3(const grit_dual *s, double c0, double c1, double c2) {
  return grit_dual_add(grit_dual_add(grit_dual_scale(s[0], c0), grit_dual_scale(s[1], c1)), grit_dual_scale(s[2], c2));
}

static inline grit_dual with_value(grit_dual a, double v) {
  a.v = v;
  return a;
}

/* A point x0 moving with twist s: partials w x x0 + v (none for s NULL). */
static void rate_point(grit_dual x[3], const double x0[3], const grit_dual *s) {
  if (!s) {
    for (int i = 0; i < 3; ++i) x[i] = grit_dual_const(x0[i]);
    return;
  }
  x[0] = with_value(grit_dual_add(lin2(s[1], x0[2], s[2], x0[1]), s[3]), x0[0]);
  x[1] = with_value(grit_dual_add(lin2(s[2], x0[0], s[0], x0[2]), s[4]), x0[1]);
  x[2] = with_value(grit_dual_add(lin2(s[0], x0[1], s[1], x0[0]), s[5]), x0[2]);
}

/* A direction a0 turning with s: partials w x a0 (none for s NULL). */
static void rate_dir(grit_dual a[3], const double a0[3], const grit_dual *s) {
  if (!s) {
    for (int i = 0; i < 3; ++i) a[i] = grit_dual_const(a0[i]);
    return;
  }
  a[0] = with_value(lin2(s[1], a0[2], s[2], a0[1]), a0[0]);
  a[1] = with_value(lin2(s[2], a0[0], s[0], a0[2]), a0[1]);
  a[2] = with_value(lin2(s[0], a0[1], s[1], a0[0]), a0[2]);
}

/* A motion subspace c = (a; b): partials s xm c = (w x a; w x b + v x a) (none for s NULL). */
static void rate_motion(grit_dual cd[6], const double c[6], const grit_dual *s) {
  rate_dir(cd, c, s);
  if (!s) {
    for (int i = 3; i < 6; ++i) cd[i] = grit_dual_const(c[i]);
    return;
  }
  cd[3] = with_value(grit_dual_add(lin2(s[1], c[5], s[2], c[4]), lin2(s[4], c[2], s[5], c[1])), c[3]);
  cd[4] = with_value(grit_dual_add(lin2(s[2], c[3], s[0], c[5]), lin2(s[5], c[0], s[3], c[2])), c[4]);
  cd[5] = with_value(grit_dual_add(lin2(s[0], c[4], s[1], c[3]), lin2(s[3], c[1], s[4], c[0])), c[5]);
}

static void set_const(grit_dual *x, const double *x0, int n) {
  for (int i = 0; i < n; ++i) x[i] = grit_dual_const(x0[i]);
}

/* Body b's pose and spatial inertia (constant for s NULL). */
static void rate_body(grit_kin_dual *k, const grit_kin *kd, int b, const grit_dual *s) {
  if (!s) {
    set_const(k->xpos + 3 * b, kd->xpos + 3 * b, 3);
    set_const(k->xquat + 4 * b, kd->xquat + 4 * b, 4);
    set_const(k->xmat + 9 * b, kd->xmat + 9 * b, 9);
    set_const(k->xipos + 3 * b, kd->xipos + 3 * b, 3);
    k->cinert[b].m = grit_dual_const(kd->cinert[b].m);
    set_const(k->cinert[b].h, kd->cinert[b].h, 3);
    set_const(k->cinert[b].I, kd->cinert[b].I, 9);
    return;
  }
  rate_point(k->xpos + 3 * b, kd->xpos + 3 * b, s);
  rate_point(k->xipos + 3 * b, kd->xipos + 3 * b, s);
  const double *q = kd->xquat + 4 * b, *R = kd->xmat + 9 * b;
  grit_dual *kq = k->xquat + 4 * b, *kR = k->xmat + 9 * b;
  /* (0, w)/2 (x) q = (-w.u, q0 w + w x u)/2, u = q[1..3] */
  kq[0] = with_value(grit_dual_scale(comb3(s, q[1], q[2], q[3]), -0.5), q[0]);
  kq[1] = with_value(grit_dual_scale(comb3(s, q[0], q[3], -q[2]), 0.5), q[1]);
  kq[2] = with_value(grit_dual_scale(comb3(s, -q[3], q[0], q[1]), 0.5), q[2]);
  kq[3] = with_value(grit_dual_scale(comb3(s, q[2], -q[1], q[0]), 0.5), q[3]);
  for (int col = 0; col < 3; ++col) { /* [w] R, column by column */
    const double Rc[3] = {R[col], R[3 + col], R[6 + col]};
    grit_dual Xc[3];
    rate_dir(Xc, Rc, s);
    for (int r = 0; r < 3; ++r) kR[3 * r + col] = Xc[r];
  }
  const grit_sinertia *S = &kd->cinert[b];
  grit_sinertia_dual *T = &k->cinert[b];
  const double *h = S->h, *I = S->I;
  T->m = grit_dual_const(S->m);
  T->h[0] = with_value(grit_dual_add(lin2(s[1], h[2], s[2], h[1]), grit_dual_scale(s[3], S->m)), h[0]);
  T->h[1] = with_value(grit_dual_add(lin2(s[2], h[0], s[0], h[2]), grit_dual_scale(s[4], S->m)), h[1]);
  T->h[2] = with_value(grit_dual_add(lin2(s[0], h[1], s[1], h[0]), grit_dual_scale(s[5], S->m)), h[2]);
  const grit_dual hv2 = grit_dual_scale(comb3(s + 3, h[0], h[1], h[2]), 2.0);
  for (int r = 0; r < 3; ++r)
    for (int col = r; col < 3; ++col) { /* I' is symmetric: the upper triangle, mirrored */
      /* (w x I[:, col])_r + (w x I[r, :])_col - v_r h_col - h_r v_col + 2 (h.v) [r == col] */
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (col + 1) % 3, c2 = (col + 2) % 3;
      grit_dual x = grit_dual_add(lin2(s[r1], I[3 * r2 + col], s[r2], I[3 * r1 + col]),
                                  lin2(s[c1], I[3 * r + c2], s[c2], I[3 * r + c1]));
      x = grit_dual_sub(x, grit_dual_add(grit_dual_scale(s[3 + r], h[col]), grit_dual_scale(s[3 + col], h[r])));
      if (r == col) x = grit_dual_add(x, hv2);
      T->I[3 * r + col] = with_value(x, I[3 * r + col]);
      T->I[3 * col + r] = with_value(x, I[3 * col + r]);
    }
}

static int partials_zero(const grit_dual *x, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < GRIT_DUAL_N; ++j)
      if (x[i].d[j] != 0.0) return 0;
  return 1;
}

/* Body b's kinematics (pose, inertia, its joint's frame and motion subspaces) at q0 (+) dq from the
 * double values kd and the seeds of dq, after its parent's: its twist along direction j is its parent's
 * plus its own dofs' cdof dq.d[j]. Its joint's anchor and axis move with the parent's twist (a slide or
 * free joint translates its anchor: the body's twist), a hinge or slide's motion subspace with the
 * parent's, a ball or free joint's rotations with the body's (they turn each other's body axes); a
 * free joint's axis and translations are world-fixed. */
static void rigid_body(const grit_model *m, grit_deriv_ws *w, int b) {
  grit_dual *const tb = w->twist + 6 * b;
  const grit_dual *const tp = w->twist + 6 * (b > 0 ? m->body_parent[b] : 0);
  const int moving = m->body_tree[b] >= 0; /* not the world or welded to it */
  for (int r = 0; r < 6; ++r) tb[r] = moving ? tp[r] : grit_dual_const(0.0);
  for (int dof = m->body_dofadr[b]; moving && dof >= 0 && dof < m->body_dofadr[b] + m->body_dofnum[b]; ++dof)
    for (int r = 0; r < 6; ++r) tb[r] = grit_dual_add(tb[r], grit_dual_scale(w->dq[dof], w->kd.cdof[6 * dof + r]));
  /* a twist without partials (no seed reaches the body, as in the trees a pass does not seed) is
   * passed as NULL: constants, without the arithmetic */
  const grit_dual *const S = partials_zero(tb, 6) ? NULL : tb, *const Sp = b == 0 || partials_zero(tp, 6) ? NULL : tp;
  rate_body(&w->kin, &w->kd, b, S);
  if (m->body_jntnum[b] == 0) return;
  const int jn = m->body_jnt[m->body_jntadr[b]], type = m->jnt_type[jn], da = m->jnt_dofadr[jn];
  const int slide = type == GRIT_JOINT_SLIDE, free_ = type == GRIT_JOINT_FREE, ball = type == GRIT_JOINT_BALL;
  rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, slide || free_ ? S : Sp);
  rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, free_ ? NULL : Sp);
  for (int i = 0; i < grit_joint_nv(type); ++i)
    rate_motion(w->kin.cdof + 6 * (da + i), w->kd.cdof + 6 * (da + i), free_ && i < 3 ? NULL : ball || free_ ? S : Sp);
}

/* w->q = q0 (+) dq (grit_kin_integrate_dual). The exponential map of a ball or free joint's quaternion
 * is needed only by the dual kinematics (trees that are not rigid, passes that seed masses): in the
 * rigid trees that quaternion keeps the value of q0 (+) 0, its partials read by nothing (limits and
 * springs are on hinges and slides only). The first pass of a call maps every joint and keeps the
 * values, qd. */
static void seed_positions(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *kmask) {
  if (!w->qd_valid) {
    for (int i = 0; i < m->nq; ++i) w->q[i] = grit_dual_const(d->qprev[i]);
    grit_kin_integrate_dual(m, w->q, w->dq, 1.0);
    for (int i = 0; i < m->nq; ++i) w->qd[i] = w->q[i].v;
    w->qd_valid = 1;
    return;
  }
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (kmask && !kmask[m->dof_tree[da]]) continue; /* q0 (+) 0 since the first pass (clear_tree_partials) */
    const int nlin = type == GRIT_JOINT_FREE ? 3 : type == GRIT_JOINT_BALL ? 0 : 1; /* q + dq */
    for (int i = 0; i < nlin; ++i) w->q[qa + i] = grit_dual_add(grit_dual_const(w->qd[qa + i]), w->dq[da + i]);
    if (nlin == 1) continue;
    grit_dual *quat = w->q + qa + nlin;
    if (w->rigid[m->dof_tree[da]] && !w->inertial_in) {
      for (int i = 0; i < 4; ++i) quat[i] = grit_dual_const(w->qd[qa + nlin + i]);
    } else {
      for (int i = 0; i < 4; ++i) quat[i] = grit_dual_const(d->qprev[qa + nlin + i]);
      grit_quat_integrate_dual(quat, w->dq + da + nlin, 1.0);
    }
  }
}

/* grit_kin_positions_dual at w->q = q0 (+) dq for the trees of kmask (NULL: all), the world and the
 * bodies welded to it: in closed form for the rigid trees when the inertial parameters are the
 * model's (state passes), else through the dual kinematics. */
static void positions_dual(const grit_model *m, grit_deriv_ws *w, const char *kmask) {
  if (w->inertial_in) { /* masses may be seeded */
    w->kin.tree_mask = kmask;
    grit_kin_positions_dual(m, w->q, w->inertial_in, &w->kin);
    return;
  }
  if (!w->kd_valid) { /* the values, once per call: those of the dual kinematics, bit for bit */
    grit_kin_positions(m, w->qd, NULL, &w->kd);
    w->kd_valid = 1;
  }
  int any = 0;
  for (int t = 0; t < m->ntree; ++t) {
    w->mask4[t] = (!kmask || kmask[t]) && !w->rigid[t];
    any |= w->mask4[t];
  }
  if (any) {
    w->kin.tree_mask = w->mask4;
    grit_kin_positions_dual(m, w->q, NULL, &w->kin);
  }
  for (int b = 0; b < m->nbody; ++b) {
    const int t = m->body_tree[b];
    if (t < 0 || ((!kmask || kmask[t]) && w->rigid[t])) rigid_body(m, w, b);
  }
  w->kin.tree_mask = kmask;
}

/* Whether the step's constraints use the Delassus estimate w (grit_params_finalize): SAP contacts,
 * joint limits with a nonzero impulse, and Lagged contacts with the regularization on. Lagged and
 * Similar contacts without such limits do not, and the residual then needs neither A's dual factor nor
 * the estimates (an inert limit, zero impulse, is skipped by the residual). */
static int uses_delassus(const grit_data *d) {
  if (d->settings.contact_model == GRIT_CONTACT_SAP) return 1;
  if (d->settings.contact_model == GRIT_CONTACT_LAGGED && d->settings.regularize_lagged) return 1;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int i = d->ncontacts; i < d->stats.nconstraints; ++i)
    if (c[i].kind >= GRIT_CONSTRAINT_LIMIT && c[i].kind != GRIT_CONSTRAINT_TENDON_SPRING && !constraint_inert(&c[i]))
      return 1;
  return 0;
}

/* The residual r(v; theta) on dual numbers at the data's last step, for the seeded inputs. With a
 * tree mask `active` (the seeded trees), only the partials of the rows of those trees and of the trees
 * their constraints couple them to are meaningful: only those trees' kinematics and dynamics are
 * recomputed, the other trees must hold constant values from an earlier pass (see
 * clear_tree_partials), and only the constraints that touch them are evaluated. With `kin_all`, the
 * positions of every tree are recomputed first (and, if the constraints use Delassus estimates, the
 * mass matrices and factors): the constant values of the trees not seeded. With `skip_qconst` (position
 * passes: only dq0 seeded), the qconst trees' M and c are left out, and r's values are then not
 * meaningful either: only its partials are read. */
static void dual_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int kin_all,
                          int skip_qconst) {
  const double h = m->opt.timestep;
  const int nv = m->nv;
  /* smooth part: r = A (v - v0) - h force, at q = q0 (+) dq */
  seed_positions(m, d, w, kin_all ? NULL : active);
  const int need_w = uses_delassus(d);
  /* only the seeded trees change; the others keep their constant values */
  const char *const kmask = kin_all ? NULL : active;
  const char *mmask = kin_all && need_w ? NULL : active, *vmask = active;
  int any_m = 1, any_v = 1; /* whether any tree's M, c are recomputed */
  if (skip_qconst) { /* leave out the trees whose M and c are constants (set by the caller) */
    any_m = any_v = 0;
    for (int t = 0; t < m->ntree; ++t) {
      w->mask2[t] = (!mmask || mmask[t]) && !w->qconst[t];
      w->mask3[t] = (!vmask || vmask[t]) && !w->qconst[t];
      any_m |= w->mask2[t];
      any_v |= w->mask3[t];
    }
    mmask = w->mask2;
    vmask = w->mask3;
  }
  positions_dual(m, w, kmask);
  w->kin.tree_mask = mmask;
  if (any_m) { /* else every block of M and A keeps its constant value (qconst blocks: the step's A) */
    grit_crba_dual(m, &w->kin, w->crb, w->M);
    grit_implicit_operator_dual(m, w->M, h, w->A);
    grit_actuator_operator_dual(m, d->qprev, d->vprev, d->actinprev, h, w->A);
  }
  if (skip_qconst && any_m) /* the operator was formed for every tree: the constant blocks back */
    for (int t = 0; t < m->ntree; ++t)
      if (w->qconst[t])
        for (int i = m->tree_madr[t]; i < m->tree_madr[t] + m->tree_dofnum[t] * m->tree_dofnum[t]; ++i)
          w->A[i] = grit_dual_const(d->Aprev[i]);
  if (need_w) {
    for (int t = 0; t < m->ntree; ++t)
      if (!mmask || mmask[t])
        for (int i = m->tree_madr[t]; i < m->tree_madr[t] + m->tree_dofnum[t] * m->tree_dofnum[t]; ++i)
          w->Achol[i] = w->A[i];
    grit_block_cholesky_dual(m, w->Achol, mmask);
  }
  w->kin.tree_mask = vmask;
  if (any_v) {
    grit_kin_velocities_dual(m, w->v0, &w->kin);
    grit_rne_bias_dual(m, &w->kin, w->v0, w->acc, w->frc, w->bias);
    grit_momentum_correction_dual(m, &w->kin, w->inertial_in, h, w->frc, w->bias);
  }
  w->kin.tree_mask = active;
  if (skip_qconst && !any_v) {
    /* Every seeded tree is a qconst one: its A and bias are constants, it has no springs (free joints),
     * and v0 and u are not seeded, so A (v - v0) - h force has no partials; only r's partials are read. */
    for (int i = 0; i < nv; ++i) w->r[i] = grit_dual_const(0.0);
  } else {
    grit_smooth_force_dual(m, w->q, w->v0, w->u, w->bias, h, w->force);
    for (int i = 0; i < nv; ++i) w->tmp[i] = grit_dual_sub(grit_dual_const(d->vsol[i]), w->v0[i]);
    grit_block_mulv_dual(m, w->A, w->tmp, w->r);
    for (int i = 0; i < nv; ++i) w->r[i] = grit_dual_sub(w->r[i], grit_dual_scale(w->force[i], h));
  }

  /* constraints, in the step's order: contacts (candidate i is constraint i), then limits */
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const int nc = d->stats.nconstraints, ncand = d->ncontacts;
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *k = &c[i];
    if (active && !active[k->tree[0]] && !(k->ntree == 2 && active[k->tree[1]])) continue; /* no seed reaches it */
    if (constraint_inert(k)) continue;
    grit_contact_params_dual p;
    memset(&p, 0, sizeof p);
    grit_dual *J[2] = {w->J, w->J + (k->ntree == 2 ? k->dim * m->tree_dofnum[k->tree[0]] : 0)};
    for (int q = 0; q < k->ntree; ++q)
      for (int j = 0; j < k->dim * m->tree_dofnum[k->tree[q]]; ++j) J[q][j] = grit_dual_const(0.0);
    if (i < ncand) { /* a contact, re-evaluated from its body-fixed features */
      const grit_contact_candidate *cand = &d->collision->c[i];
      grit_dual gp[2][3], gR[2][9];
      for (int s = 0; s < 2; ++s) { /* geometry poses: body pose (dual) composed with the local pose */
        const int g = cand->geom[s], b = cand->body[s];
        grit_tf_compose_c_dual(gp[s], gR[s], w->kin.xpos + 3 * b, w->kin.xmat + 9 * b, m->geom_pos + 3 * g,
                               m->geom_mat + 9 * g);
      }
      grit_contact_geom_dual geo;
      grit_dual k_patch; /* hydro: a pressure-field patch is re-evaluated by its own code (hydro.h) */
      if (cand->k_patch > 0)
        grit_hydro_patch_reevaluate_dual(m, w->gparam + GRIT_PARAM_HYDRO_MODULUS * m->ngeom, cand, gp[0], gR[0],
                                         gp[1], gR[1], &geo, &k_patch);
      else grit_contact_reevaluate_dual(&cand->pt, gp[0], gR[0], gp[1], gR[1], &geo);
      for (int q = 0; q < k->ntree; ++q) {
        const int t = k->tree[q];
        if (t == grit_body_tree(m, cand->body[1]))
          grit_contact_jacobian_add_dual(m, &w->kin, cand->body[1], geo.pb, t, geo.frame, 1.0, J[q], w->scratch);
        if (t == grit_body_tree(m, cand->body[0]))
          grit_contact_jacobian_add_dual(m, &w->kin, cand->body[0], geo.pa, t, geo.frame, -1.0, J[q], w->scratch);
      }
      grit_pair_params_dual(&w->geom, cand->geom[0], cand->geom[1], &p);
      if (cand->k_patch > 0) p.k = k_patch; /* hydro */
      p.phi0 = geo.phi;
      p.smooth = grit_dual_const(k->p.smooth); /* the step's (0 against a static body) */
      if (k->kind == GRIT_CONSTRAINT_LAGGED) {
        grit_dual vc0[3];
        for (int q = 0; q < 3; ++q) vc0[q] = grit_dual_const(0.0);
        for (int q = 0; q < k->ntree; ++q) { /* v_n0 = (J v0)_n with v0 dual */
          const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
          for (int j = 0; j < n; ++j) vc0[2] = grit_dual_fma(J[q][2 * n + j], w->v0[adr + j], vc0[2]);
        }
        p.gn0 = grit_contact_lagged_normal_impulse_dual(&p, h, vc0[2]);
      }
    } else if (k->kind == GRIT_CONSTRAINT_LIMIT) { /* phi0 from the (dual) joint coordinate, J constant */
      const int jnt = k->source / 2, side = k->source % 2, n = m->tree_dofnum[k->tree[0]];
      const double *Jd = grit_solver_jstore(d->solver, NULL) + k->joff[0];
      for (int j = 0; j < n; ++j) J[0][j] = grit_dual_const(Jd[j]);
      const grit_dual x = w->q[m->jnt_qposadr[jnt]];
      p.phi0 = side == 0 ? grit_dual_addc(x, -m->jnt_range[2 * jnt])
                         : grit_dual_neg(grit_dual_addc(x, -m->jnt_range[2 * jnt + 1]));
      p.tau_d = grit_dual_const(k->p.tau_d);
      p.width = grit_dual_const(k->p.width);
    } else { /* joint friction, equalities, tendons (constraints_extra_generic.h) */
      grit_cx_rows_dual(m, &w->kin, w->q, h, k->kind, k->source, k->ntree, k->tree, J, &p, w->scratch);
    }
    const grit_dual *Jc[2] = {J[0], J[1]};
    const grit_dual wd = need_w ? grit_delassus_dual(m, w->Achol, k->dim, k->ntree, k->tree, Jc, w->tmp)
                                : grit_dual_const(k->w); /* unused by the constraint's model */
    grit_params_finalize_dual(k->kind, wd, h, &d->settings, &p);
    grit_dual vc[3], gamma[3], G[9];
    apply_jacobian(m, k->dim, k->ntree, k->tree, Jc, d->vsol, k->b, vc);
    grit_constraint_eval_dual(k->kind, &p, h, vc, gamma, G);
    subtract_jt_gamma(m, k->dim, k->ntree, k->tree, Jc, gamma, w->r);
  }
}

/* The residual's dependence on v0 and u, at constant positions (every tree's position-dependent
 * quantities hold constant values from the position passes). v0 enters through A (v - v0), the bias
 * forces' velocity terms, damping and springs, and the Lagged model's gamma_n0(v_n0); u only through
 * the actuator forces. Nothing else in r moves with v0 or u: a contact's velocity J v + b is taken at
 * the solution v, its Jacobian, distance and parameters depend on positions only. So a velocity pass
 * recomputes only the seeded trees' twists and bias forces (the Lagged terms are added column by column
 * by lagged_rhs), and a control pass (controls_only) only the smooth force. Only r's partials are used;
 * they stay within each seeded tree's rows, so every tree shares the same directions.
 * This split, and the free bodies left out of position passes (qconst), follow the step's smooth force
 * grit_smooth_force(q0, v0, u, c(q0, v0)): a step force that depends on v0 through positions (e.g. a
 * bias at a predicted end configuration) must be seeded here through those positions too. */
static void velocity_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                              int controls_only) {
  const double h = m->opt.timestep;
  const int nv = m->nv;
  zero_partials(w->q, m->nq); /* q0 (+) 0 from the position passes, as a constant */
  if (controls_only) {
    grit_smooth_force_dual(m, w->q, w->v0, w->u, w->bias, h, w->force);
    for (int i = 0; i < nv; ++i) w->r[i] = grit_dual_scale(w->force[i], -h);
    return;
  }
  w->kin.tree_mask = active;
  grit_kin_velocities_dual(m, w->v0, &w->kin);
  grit_rne_bias_dual(m, &w->kin, w->v0, w->acc, w->frc, w->bias);
  grit_momentum_correction_dual(m, &w->kin, w->inertial_in, h, w->frc, w->bias);
  grit_smooth_force_dual(m, w->q, w->v0, w->u, w->bias, h, w->force);
  for (int i = 0; i < nv; ++i) w->tmp[i] = grit_dual_sub(grit_dual_const(d->vsol[i]), w->v0[i]);
  /* A (v - v0), A constant here: the values of the position passes' blocks, the step's A for the
   * qconst trees, whose dual blocks position passes neither form nor need (the same operations as
   * grit_block_mulv_dual with constant blocks) */
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t], a0 = m->tree_madr[t];
    for (int i = 0; i < n; ++i) {
      grit_dual s = grit_dual_const(0.0);
      for (int j = 0; j < n; ++j) {
        const double a = w->qconst[t] ? d->Aprev[a0 + i * n + j] : w->A[a0 + i * n + j].v;
        s = grit_dual_fma(grit_dual_const(a), w->tmp[adr + j], s);
      }
      w->r[adr + i] = grit_dual_sub(s, grit_dual_scale(w->force[adr + i], h));
    }
  }
}

/* The Lagged model's gamma_n0 depends on v0 through v_n0 = (J v0)_n only, so each Lagged contact adds
 * a rank-one term to dr/dv0: -J^T g (J_n), g = d gamma / d v_n0 (through gamma_n0 and, when the
 * regularization is on, eps). g comes from the contact's parameters, Jacobian and velocity at the step
 * (one dual direction); the contacts are listed by tree. */
static void lagged_prepare(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nt = m->ntree;
  for (int t = 0; t <= nt; ++t) w->lag_ptr[t] = 0;
  if (d->settings.contact_model != GRIT_CONTACT_LAGGED) return;
  const double h = m->opt.timestep;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  const int nc = d->stats.nconstraints;
  int ne = 0;
  for (int i = 0; i < nc && ne + 2 <= w->cap_edges; ++i) {
    const grit_constraint *k = &c[i];
    if (k->kind != GRIT_CONSTRAINT_LAGGED || constraint_inert(k)) continue;
    for (int q = 0; q < k->ntree; ++q) w->lag_ptr[k->tree[q] + 1]++;
    ne += k->ntree;
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
    p.gn0 = grit_contact_lagged_normal_impulse_dual(&p, h, grit_dual_var(vn0, 0));
    grit_params_finalize_dual(k->kind, grit_dual_const(k->w), h, &d->settings, &p);
    grit_dual vc[3], gamma[3], G[9];
    for (int q = 0; q < 3; ++q) vc[q] = grit_dual_const(k->vc[q]);
    grit_constraint_eval_dual(k->kind, &p, h, vc, gamma, G);
    double *g = w->lag_g + 3 * i, *y = w->lag_y + (size_t)2 * w->maxn * i;
    for (int q = 0; q < 3; ++q) g[q] = gamma[q].d[0];
    for (int q = 0; q < k->ntree; ++q) { /* J^T g, the same for every dof of the contact's trees */
      const int n = m->tree_dofnum[k->tree[q]];
      const double *J = jstore + k->joff[q];
      for (int j = 0; j < n; ++j) y[q * w->maxn + j] = J[j] * g[0] + J[n + j] * g[1] + J[2 * n + j] * g[2];
    }
  }
  for (int t = 0; t < nt; ++t) w->lag_ptr[t + 1] += w->lag_ptr[t];
  for (int t = 0; t < nt; ++t) w->stamp[t] = w->lag_ptr[t];
  ne = 0;
  for (int i = 0; i < nc && ne + 2 <= w->cap_edges; ++i) {
    const grit_constraint *k = &c[i];
    if (k->kind != GRIT_CONSTRAINT_LAGGED || constraint_inert(k)) continue;
    for (int q = 0; q < k->ntree; ++q) w->lag[w->stamp[k->tree[q]]++] = i;
    ne += k->ntree;
  }
}

/* Adds to x (= -dr/dv0 of dof `dof`, in tree t) the Lagged contacts' terms J^T g J_n[dof], J^T g kept. */
static void lagged_rhs(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, int t, int dof, double *x) {
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const double *jstore = grit_solver_jstore(d->solver, NULL);
  for (int e = w->lag_ptr[t]; e < w->lag_ptr[t + 1]; ++e) {
    const grit_constraint *k = &c[w->lag[e]];
    const int qt = k->tree[0] == t ? 0 : 1, nt = m->tree_dofnum[t];
    const double s = jstore[k->joff[qt] + 2 * nt + dof - m->tree_dofadr[t]];
    if (s == 0.0) continue;
    const double *y = w->lag_y + (size_t)2 * w->maxn * w->lag[e]; /* J^T g (lagged_prepare) */
    for (int q = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
      for (int j = 0; j < n; ++j) x[adr + j] += s * y[q * w->maxn + j];
    }
  }
}

/* After a velocity pass: the seeded trees' twists and bias forces lose the pass's partials. */
static void clear_velocity_partials(const grit_model *m, grit_deriv_ws *w, const char *active) {
  for (int b = 1; b < m->nbody; ++b)
    if (m->body_tree[b] >= 0 && active[m->body_tree[b]]) zero_partials(w->kin.cvel + 6 * b, 6);
  for (int t = 0; t < m->ntree; ++t) {
    if (!active[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    zero_partials(w->kin.cdof_dot + 6 * adr, 6 * n);
    zero_partials(w->bias + adr, n);
  }
}

/* ------------------------------------------------------------------------ q+ = q0 (+) dt v */

/* The tangent-space Jacobians of q+ = q0 (+) h v for joint j: Dq = d q+ / d dq0 and Dv = d q+ / d v,
 * each nv_j x nv_j, row-major with stride 6. Rotations by dual numbers: seed dtheta0 and domega in
 * q+' = q0 exp(dtheta0) exp(h (omega + domega)) and take log(q+^-1 q+'). */
static void integration_jacobians(const grit_model *m, const double *q0, const double *v, double h, int j,
                                  double Dq[36], double Dv[36]) {
  const int t = m->jnt_type[j], da = m->jnt_dofadr[j];
  for (int i = 0; i < 36; ++i) Dq[i] = Dv[i] = 0.0;
  if (t == GRIT_JOINT_HINGE || t == GRIT_JOINT_SLIDE) {
    Dq[0] = 1.0;
    Dv[0] = h;
    return;
  }
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

/* ---------------------------------------------------------------------------- the Jacobians */

/* ----------------------------------------------------------------- colours, columns, batches */

/* A constraint whose impulse is exactly zero at the solution lies strictly inside its model's region of
 * no contact (each model's zero is a branch of its own, not a round-off accident), where the impulse
 * stays zero under small changes of every input: it contributes nothing to r or to dr/dtheta. Contact
 * candidates kept by the margin but not touching are such constraints; skipping them keeps the
 * colouring to the trees that truly interact. */
static int constraint_inert(const grit_constraint *c) {
  /* bilateral constraints (equalities, tendon springs) have no such region: a zero impulse is a
   * crossing, and their impulse's partials need not vanish there */
  if (c->kind == GRIT_CONSTRAINT_EQUALITY || c->kind == GRIT_CONSTRAINT_EQUALITY_1D ||
      c->kind == GRIT_CONSTRAINT_TENDON_SPRING)
    return 0;
  for (int r = 0; r < c->dim; ++r)
    if (c->gamma[r] != 0.0) return 0;
  return 1;
}

/* Greedy distance-2 colouring of the trees in the graph of the last step's constraints (an edge per
 * constraint coupling two trees). Also lists each tree's actuators. Returns the number of colours. */
static int colour_trees(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nt = m->ntree, nc = d->stats.nconstraints;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int t = 0; t <= nt; ++t) w->adj_ptr[t] = 0;
  int ne = 0;
  for (int i = 0; i < nc; ++i)
    if (c[i].ntree == 2 && !constraint_inert(&c[i]) && ne + 2 <= w->cap_edges) {
      w->adj_ptr[c[i].tree[0] + 1]++;
      w->adj_ptr[c[i].tree[1] + 1]++;
      ne += 2;
    }
  for (int t = 0; t < nt; ++t) w->adj_ptr[t + 1] += w->adj_ptr[t];
  for (int t = 0; t < nt; ++t) w->stamp[t] = w->adj_ptr[t]; /* fill cursors */
  ne = 0;
  for (int i = 0; i < nc; ++i)
    if (c[i].ntree == 2 && !constraint_inert(&c[i]) && ne + 2 <= w->cap_edges) {
      w->adj[w->stamp[c[i].tree[0]]++] = c[i].tree[1];
      w->adj[w->stamp[c[i].tree[1]]++] = c[i].tree[0];
      ne += 2;
    }
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
static int local_columns(const grit_model *m, const grit_deriv_ws *w, int t, int kind, const double *A, const double *B) {
  if (kind == 2) return B ? w->act_ptr[t + 1] - w->act_ptr[t] : 0;
  return A ? m->tree_dofnum[t] : 0;
}

static int local_column_id(const grit_model *m, const grit_deriv_ws *w, int t, int kind, int l) {
  if (kind == 2) return 2 * m->nv + w->act[w->act_ptr[t] + l];
  return kind * m->nv + m->tree_dofadr[t] + l;
}

/* Seeds column id `col` of theta in direction j (after clear_inputs). */
static void seed_column(const grit_model *m, grit_deriv_ws *w, const grit_param *params, int col, int j) {
  const int nv = m->nv, nu = m->nu, ng = m->ngeom;
  if (col < nv) {
    w->dq[col].d[j] = 1.0;
  } else if (col < 2 * nv) {
    w->v0[col - nv].d[j] = 1.0;
  } else if (col < 2 * nv + nu) {
    w->u[col - 2 * nv].d[j] = 1.0;
  } else {
    const grit_param *p = &params[col - 2 * nv - nu];
    w->params_dirty = 1;
    if (p->kind == GRIT_PARAM_MASS) {
      /* mass and rotational inertia scale together: d inertia / d mass = inertia / mass */
      const int b = p->index;
      w->mass[b].d[j] = 1.0;
      for (int i = 0; i < 9; ++i) w->inertia[9 * b + i].d[j] = m->body_inertia[9 * b + i] / m->body_mass[b];
    } else {
      grit_dual *arr = w->gparam + (size_t)p->kind * ng;
      for (int g = 0; g < ng; ++g)
        if (p->index < 0 || p->index == g) arr[g].d[j] = 1.0;
    }
  }
}

/* Undoes seed_column for a state or control column. */
static void unseed_column(const grit_model *m, grit_deriv_ws *w, int col, int j) {
  const int nv = m->nv;
  if (col < nv) w->dq[col].d[j] = 0.0;
  else if (col < 2 * nv) w->v0[col - nv].d[j] = 0.0;
  else w->u[col - 2 * nv].d[j] = 0.0;
}

/* The part of the factor column `col` of theta lies in (-1: several, or the factor has one part; a
 * parameter reaches every tree). */
static int column_part(const grit_model *m, const grit_deriv_ws *w, int col) {
  const int nx = 2 * m->nv;
  if (!w->tree_part) return -1;
  if (col < nx) return w->col_part[m->dof_tree[col % m->nv]];
  if (col < nx + m->nu) return w->col_part[m->dof_tree[m->act_dof[col - nx]]];
  return -1;
}

typedef struct batch {
  int n;
} batch;

/* Where a batch column goes: its solution X, its output's entry in row 0 and row stride, its id. */
typedef struct out_column {
  const double *X;
  double *out;
  size_t stride;
  int col;
} out_column;

/* Rows nv + i, i0 <= i < i1, of the columns c[0..nc-1]: their X. Returns the sum of x - x (0 if all
 * are finite, NaN otherwise). */
static double write_v_rows(const out_column *c, int nc, int nv, int i0, int i1) {
  double check = 0.0;
  for (int i = i0; i < i1; ++i)
    for (int l = 0; l < nc; ++l) {
      const double x = c[l].X[i];
      c[l].out[(size_t)(nv + i) * c[l].stride] = x;
      check += x - x;
    }
  return check;
}

/* The q rows of joint jn of the columns c[0..nc-1]: Dq e_col (dq0 columns) + Dv X. Returns the sum of
 * x - x. */
static double write_q_rows(const grit_model *m, const grit_deriv_ws *w, int jn, const out_column *c, int nc) {
  const int da = m->jnt_dofadr[jn], nvj = grit_joint_nv(m->jnt_type[jn]);
  const double *Dq = w->Dq + 36 * jn, *Dv = w->Dv + 36 * jn;
  /* a free joint's translation rows are diagonal (h, 1) and its blocks do not mix translation and
   * rotation: only the rotation block is summed (hinge, slide: Dq = 1, Dv = h) */
  const int r0 = m->jnt_type[jn] == GRIT_JOINT_FREE ? 3 : nvj == 1 ? 1 : 0;
  double check = 0.0;
  for (int l = 0; l < nc; ++l) {
    const int col = c[l].col;
    const double *X = c[l].X;
    for (int r = 0; r < r0; ++r) {
      const double x = Dv[6 * r + r] * X[da + r] + (col == da + r ? Dq[6 * r + r] : 0.0);
      c[l].out[(size_t)(da + r) * c[l].stride] = x;
      check += x - x;
    }
    for (int r = r0; r < nvj; ++r) {
      double x = 0.0;
      for (int k = r0; k < nvj; ++k) x += Dv[6 * r + k] * X[da + k];
      if (col >= da + r0 && col < da + nvj) x += Dq[6 * r + col - da];
      c[l].out[(size_t)(da + r) * c[l].stride] = x;
      check += x - x;
    }
  }
  return check;
}

/* The rows of tree u of the columns c[0..nc-1]: v rows, then q rows joint by joint. */
static double write_tree_rows(const grit_model *m, const grit_deriv_ws *w, int u, const out_column *c, int nc) {
  const int adr = m->tree_dofadr[u], end = adr + m->tree_dofnum[u];
  double check = write_v_rows(c, nc, m->nv, adr, end);
  for (int i = adr; i < end; i += grit_joint_nv(m->jnt_type[m->dof_jnt[i]])) check += write_q_rows(m, w, m->dof_jnt[i], c, nc);
  return check;
}

/* Writes the batch's solutions X = dv/dtheta (column j of w->rhs, for column ids[j] of theta) into A, B
 * or P, with the q rows Dq e_col (dq0 columns) + Dv X. Part by part: a column lying in one part of the
 * factor is zero outside its trees' rows, which the caller has zeroed in A and B, so each group of the
 * batch's columns of one part is written in that part's rows only (a column of several parts, or of
 * P, in every row). Row by row within a group: its columns are scattered over the outputs, and a large
 * model's A does not fit in cache; so each row's cache lines are touched once per group, not once per
 * column. Notes in w->nonfinite whether a value written is not finite (x - x is 0 for a finite x, NaN
 * otherwise), so that a finite result is not read again. */
static void write_batch(const grit_model *m, grit_deriv_ws *w, int n, double *A, double *B, double *P, int np) {
  const int nv = m->nv, nu = m->nu, nx = 2 * nv;
  out_column c[RHS_BATCH];
  char done[RHS_BATCH] = {0};
  double check = 0.0;
  for (int j = 0; j < n; ++j) {
    if (done[j]) continue;
    const int p = w->part[j];
    int nc = 0;
    for (int l = j; l < n; ++l) { /* the batch's columns of part p */
      if (done[l] || w->part[l] != p) continue;
      const int col = w->ids[l];
      done[l] = 1;
      c[nc].X = w->rhs + (size_t)l * nv;
      c[nc].out = col < nx ? A + col : col < nx + nu ? B + (col - nx) : P + (col - nx - nu);
      c[nc].stride = (size_t)(col < nx ? nx : col < nx + nu ? nu : np);
      c[nc++].col = col;
    }
    if (p < 0)
      for (int u = 0; u < m->ntree; ++u) check += write_tree_rows(m, w, u, c, nc);
    else
      for (int e = w->ptree_ptr[p]; e < w->ptree_ptr[p + 1]; ++e) check += write_tree_rows(m, w, w->ptree[e], c, nc);
  }
  if (check != 0.0) w->nonfinite = 1; /* NaN != 0 */
}

/* Solves the batch of right-hand sides with the kept factor and writes the columns out. */
static grit_status flush(grit_data *d, grit_deriv_ws *w, batch *bt, double *A, double *B, double *P, int np) {
  if (bt->n == 0) return GRIT_OK;
  const grit_model *m = d->model;
  for (int j = 0; j < bt->n; ++j) w->part[j] = column_part(m, w, w->ids[j]);
  grit_status s = grit_solver_factor_solve_parts(d->solver, w->rhs, bt->n, w->tree_part ? w->part : NULL);
  if (s != GRIT_OK) return grit_set_error(d->message, s, "derivatives: solve with the kept factor failed");
  write_batch(m, w, bt->n, A, B, P, np);
  bt->n = 0;
  return GRIT_OK;
}

/* Adds -dr/dtheta of direction j as the right-hand side of column `col`: the rows of tree t and, if
 * `coupled`, of the trees its constraints couple it to (t < 0: every row). */
static grit_status add_rhs(grit_data *d, grit_deriv_ws *w, batch *bt, int col, int j, int t, int coupled, double *A,
                           double *B, double *P, int np) {
  const grit_model *m = d->model;
  const int nv = m->nv;
  double *x = w->rhs + (size_t)bt->n * nv;
  if (t < 0) {
    for (int i = 0; i < nv; ++i) x[i] = -w->r[i].d[j];
  } else {
    const int p = column_part(m, w, col); /* the rows the solve reads: those of p's trees */
    if (p < 0) {
      for (int i = 0; i < nv; ++i) x[i] = 0.0;
    } else {
      for (int e = w->ptree_ptr[p]; e < w->ptree_ptr[p + 1]; ++e)
        for (int i = m->tree_dofadr[w->ptree[e]]; i < m->tree_dofadr[w->ptree[e]] + m->tree_dofnum[w->ptree[e]]; ++i)
          x[i] = 0.0;
    }
    const int e1 = coupled ? w->adj_ptr[t + 1] : w->adj_ptr[t];
    for (int e = w->adj_ptr[t] - 1; e < e1; ++e) { /* t itself, then its neighbours */
      const int u = e < w->adj_ptr[t] ? t : w->adj[e];
      for (int i = m->tree_dofadr[u]; i < m->tree_dofadr[u] + m->tree_dofnum[u]; ++i) x[i] = -w->r[i].d[j];
    }
    if (col >= nv && col < 2 * nv) lagged_rhs(m, d, w, t, col - nv, x);
  }
  w->ids[bt->n++] = col;
  return bt->n == RHS_BATCH ? flush(d, w, bt, A, B, P, np) : GRIT_OK;
}

/* The Jacobians of (q, v)+ with respect to (q, v), the actuators' inputs w (B's columns) and the
 * parameters: A is 2nv x 2nv, B and P have 2nv rows (the first rows of the caller's B and P). */
static grit_status derivatives_qv(grit_data *d, double *A, double *B, const grit_param *params, int np, double *P) {
  const grit_model *m = d->model;
  const int nv = m->nv, nu = m->nu, nx = 2 * nv;
  if (!d->has_prev)
    return grit_set_error(d->message, GRIT_ERR_STATE, "derivatives: no step was taken since creation or reset");
  if (d->prev_integrator != GRIT_INTEGRATOR_EULER)
    return grit_set_error(d->message, GRIT_ERR_UNSUPPORTED,
                          "derivatives: the last step used the %s integrator; its Jacobians are not "
                          "implemented (use GRIT_INTEGRATOR_EULER)",
                          d->prev_integrator == GRIT_INTEGRATOR_QUASISTATIC ? "quasistatic" : "variational");
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
  grit_deriv_ws *w = d->deriv;
  w->qd_valid = w->kd_valid = w->nonfinite = 0;
  /* the factor of H at the solution */
  grit_status s = grit_solver_refactor(d->solver, d->Aprev, d->stats.nconstraints, d->message);
  if (s != GRIT_OK) return s;
  /* Columns of A and B lie in the part of the factor of their tree (and its neighbours): zero outside
   * its rows, so A and B are zeroed once and the solves and write_batch touch those rows only. With a
   * single part (the arm and ball in contact) there is nothing to skip: the plain solves and writes. */
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
  if (w->tree_part && A) memset(A, 0, sizeof(double) * (size_t)nx * (size_t)nx);
  if (w->tree_part && B) memset(B, 0, sizeof(double) * (size_t)nx * (size_t)nu);

  /* tangent-space Jacobians of the integration, joint by joint */
  for (int jn = 0; jn < m->njnt; ++jn)
    integration_jacobians(m, d->qprev, d->vsol, m->opt.timestep, jn, w->Dq + 36 * jn, w->Dv + 36 * jn);

  batch bt = {0};
  /* State and control columns, in three kinds of passes.
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
  if (w->partials_dirty) { /* an earlier call failed half-way: every tree starts from zero partials */
    for (int t = 0; t < m->ntree; ++t) w->active[t] = 1;
    clear_tree_partials(m, w, w->active, 1);
  }
  w->partials_dirty = 1;
  w->inertial_in = NULL; /* state and control passes seed no inertial parameter: the model's constants */
  if (A || B) {
    const int ncolour = colour_trees(m, d, w);
    /* A tree's columns are written in its rows and its neighbours' (add_rhs, lagged_rhs): they lie in
     * one part of the factor if all of those trees do. */
    for (int t = 0; w->tree_part && t < m->ntree; ++t) {
      w->col_part[t] = w->tree_part[t];
      for (int e = w->adj_ptr[t]; e < w->adj_ptr[t + 1]; ++e)
        if (w->tree_part[w->adj[e]] != w->tree_part[t]) w->col_part[t] = -1;
    }
    lagged_prepare(m, d, w);
    int first = 1;
    clear_inputs(m, d, w);
    if (A && uses_delassus(d)) { /* the constant factor of A (the step's) of the trees position passes leave out */
      int any = 0;
      for (int t = 0; t < m->ntree; ++t) {
        if (!w->qconst[t]) continue;
        any = 1;
        const int a0 = m->tree_madr[t], nn = m->tree_dofnum[t] * m->tree_dofnum[t];
        for (int i = a0; i < a0 + nn; ++i) w->Ad[i] = d->Aprev[i];
      }
      if (any) {
        grit_block_cholesky(m, w->Ad, w->qconst);
        for (int t = 0; t < m->ntree; ++t) {
          if (!w->qconst[t]) continue;
          const int a0 = m->tree_madr[t], nn = m->tree_dofnum[t] * m->tree_dofnum[t];
          for (int i = a0; i < a0 + nn; ++i) w->Achol[i] = grit_dual_const(w->Ad[i]);
        }
      }
    }
    for (int kind = 0; kind < 3; ++kind) {
      if (kind > 0 && first) { /* no position pass ran (B only): one unseeded pass for the constant values */
        dual_residual(m, d, w, NULL, 1, 0);
        first = 0;
      }
      const int coupled = kind == 0, ngroups = coupled ? ncolour : 1;
      for (int k = 0; k < ngroups; ++k) {
        int width = 0; /* the most local columns of a tree of this group */
        for (int t = 0; t < m->ntree; ++t) {
          w->active[t] = !coupled || w->colour[t] == k;
          const int nl = local_columns(m, w, t, kind, A, B);
          if (w->active[t] && nl > width) width = nl;
        }
        for (int base = 0; base < width; base += GRIT_DUAL_N) {
          for (int t = 0; t < m->ntree; ++t)
            if (w->active[t])
              for (int j = 0; j < GRIT_DUAL_N && base + j < local_columns(m, w, t, kind, A, B); ++j)
                seed_column(m, w, params, local_column_id(m, w, t, kind, base + j), j);
          if (kind == 0) {
            dual_residual(m, d, w, w->active, first, 1);
            first = 0;
          } else {
            velocity_residual(m, d, w, w->active, kind == 2);
          }
          for (int t = 0; t < m->ntree; ++t)
            if (w->active[t])
              for (int j = 0; j < GRIT_DUAL_N && base + j < local_columns(m, w, t, kind, A, B); ++j) {
                const int col = local_column_id(m, w, t, kind, base + j);
                s = add_rhs(d, w, &bt, col, j, t, coupled, A, B, P, np);
                if (s != GRIT_OK) return s;
                unseed_column(m, w, col, j);
              }
          if (kind == 0) clear_tree_partials(m, w, w->active, 0);
          else if (kind == 1) clear_velocity_partials(m, w, w->active);
        }
      }
    }
  }
  /* parameter columns reach every tree: GRIT_DUAL_N per pass over the whole residual */
  w->inertial_in = &w->inertial; /* masses may be seeded */
  for (int base = 0; P && base < np; base += GRIT_DUAL_N) {
    const int count = np - base < GRIT_DUAL_N ? np - base : GRIT_DUAL_N;
    clear_inputs(m, d, w);
    for (int j = 0; j < count; ++j) seed_column(m, w, params, nx + nu + base + j, j);
    dual_residual(m, d, w, NULL, 1, 0);
    for (int j = 0; j < count; ++j) {
      s = add_rhs(d, w, &bt, nx + nu + base + j, j, -1, 1, A, B, P, np);
      if (s != GRIT_OK) return s;
    }
    for (int t = 0; t < m->ntree; ++t) w->active[t] = 1; /* the next call's passes start from zero partials */
    clear_tree_partials(m, w, w->active, 1);
  }
  s = flush(d, w, &bt, A, B, P, np);
  if (s != GRIT_OK) return s;
  w->partials_dirty = 0;
  /* Overflow in the dual residual (huge velocities or parameters) must come back as a status, not as
   * a NaN in a Jacobian the caller trusts (docs/errors.md). write_batch wrote every entry and noted
   * whether one is not finite; only then are the outputs searched for the first. */
  if (!w->nonfinite) return GRIT_OK;
  const double *const out[3] = {A, B, P};
  const int cols[3] = {nx, nu, np};
  static const char *const names[3] = {"A", "B", "P"};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; out[k] && i < nx * cols[k]; ++i)
      if (!isfinite(out[k][i]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "derivatives: %s[%d][%d] is not finite", names[k],
                              i / cols[k], i % cols[k]);
  return GRIT_OK;
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
