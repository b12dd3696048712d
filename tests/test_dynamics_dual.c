/* SPDX-License-Identifier: Apache-2.0 */
/* test_dynamics_dual.c — the dual-number instantiation of the dynamics (dynamics_generic.h), against
 * central differences of the double instantiation:
 *   - the mass-matrix blocks, the bias forces and the body centres as functions of q, v and the inertial
 *     parameters (masses, centres of mass, inertias), GRIT_DUAL_N parameters seeded at a time;
 *   - the remaining scalar-generic terms of the step (each a function of a flat input x).
 * test_dynamics.c checks the double instantiation itself against independent computations. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "data_internal.h"
#include "dynamics.h"
#include "grit/grit.h"
#include "kinematics.h"
#include "test_util.h"

static double *dalloc(int n) { return calloc((size_t)n + 1, sizeof(double)); }

/* ------------------------------------------------------------------------- dual instantiation */

/* Workspaces of one scalar type's kinematics and dynamics. */
typedef struct {
  grit_kin_dual kin;
  grit_inertial_dual in;
  grit_dual *mass, *com, *inertia, *q, *v, *M, *bias, *acc, *frc;
  grit_sinertia_dual *crb;
} dual_ws;

static void dual_ws_init(dual_ws *w, const grit_model *m) {
  const size_t nb = (size_t)m->nbody, nj = (size_t)m->njnt + 1, nv = (size_t)m->nv + 1;
  memset(w, 0, sizeof *w); /* every field, the kinematics' tree mask included (NULL: every tree) */
  w->kin.xpos = calloc(3 * nb, sizeof(grit_dual));
  w->kin.xquat = calloc(4 * nb, sizeof(grit_dual));
  w->kin.xmat = calloc(9 * nb, sizeof(grit_dual));
  w->kin.xipos = calloc(3 * nb, sizeof(grit_dual));
  w->kin.xanchor = calloc(3 * nj, sizeof(grit_dual));
  w->kin.xaxis = calloc(3 * nj, sizeof(grit_dual));
  w->kin.cdof = calloc(6 * nv, sizeof(grit_dual));
  w->kin.cinert = calloc(nb, sizeof(grit_sinertia_dual));
  w->kin.cvel = calloc(6 * nb, sizeof(grit_dual));
  w->kin.cdof_dot = calloc(6 * nv, sizeof(grit_dual));
  w->mass = calloc(nb, sizeof(grit_dual));
  w->com = calloc(3 * nb, sizeof(grit_dual));
  w->inertia = calloc(9 * nb, sizeof(grit_dual));
  w->q = calloc((size_t)m->nq + 1, sizeof(grit_dual));
  w->v = calloc(nv, sizeof(grit_dual));
  w->M = calloc((size_t)m->nM + 1, sizeof(grit_dual));
  w->bias = calloc(nv, sizeof(grit_dual));
  w->acc = calloc(6 * nb, sizeof(grit_dual));
  w->frc = calloc(6 * nb, sizeof(grit_dual));
  w->crb = calloc(nb, sizeof(grit_sinertia_dual));
  w->in.mass = w->mass;
  w->in.com = w->com;
  w->in.inertia = w->inertia;
}

static void dual_ws_free(dual_ws *w) {
  void *p[] = {w->kin.xpos, w->kin.xquat, w->kin.xmat, w->kin.xipos, w->kin.xanchor, w->kin.xaxis, w->kin.cdof,
               w->kin.cinert, w->kin.cvel, w->kin.cdof_dot, w->mass, w->com, w->inertia, w->q, w->v, w->M,
               w->bias, w->acc, w->frc, w->crb};
  for (size_t i = 0; i < sizeof p / sizeof p[0]; ++i) free(p[i]);
}

/* The parameters differentiated: q coordinates, v coordinates, body masses, centre-of-mass components,
 * rotational inertia entries. */
enum { P_Q, P_V, P_MASS, P_COM, P_INERTIA };
typedef struct {
  int kind, index;
} param;

/* The double evaluation: outputs (M blocks, bias, xipos) at q, v, and the inertial parameters. */
static int outputs_double(grit_data *d, const double *q, const double *v, const double *mass, const double *com,
                          const double *inertia, double *out) {
  const grit_model *m = d->model;
  grit_inertial in = {mass, com, inertia};
  grit_kin_positions(m, q, &in, &d->kin);
  grit_kin_velocities(m, v, &d->kin);
  grit_crba(m, &d->kin, d->crb, d->M);
  grit_rne_bias(m, &d->kin, v, d->acc, d->frc, d->bias);
  int n = 0;
  for (int i = 0; i < m->nM; ++i) out[n++] = d->M[i];
  for (int i = 0; i < m->nv; ++i) out[n++] = d->bias[i];
  for (int i = 0; i < 3 * m->nbody; ++i) out[n++] = d->kin.xipos[i];
  return n;
}

static double *param_ptr(param p, double *q, double *v, double *mass, double *com, double *inertia) {
  switch (p.kind) {
    case P_Q: return q + p.index;
    case P_V: return v + p.index;
    case P_MASS: return mass + p.index;
    case P_COM: return com + p.index;
    default: return inertia + p.index;
  }
}

/* Seeds up to GRIT_DUAL_N parameters, runs the dual code, and compares each partial with a central
 * difference of the double code (step 1e-5 relative: truncation ~1e-10 |f'''|, round-off ~1e-11 |f|
 * / 1e-5... both far below the asserted 1e-6 of the largest partial of the column). Also checks that
 * the dual values are the double values bit for bit. Returns the worst relative error. */
static double check_dual_chunk(grit_data *d, dual_ws *w, const param *ps, int np, const double *q, const double *v) {
  const grit_model *m = d->model;
  const int nb = m->nbody, nout = m->nM + m->nv + 3 * nb;
  double *mass = dalloc(nb), *com = dalloc(3 * nb), *inertia = dalloc(9 * nb), *qq = dalloc(m->nq),
         *vv = dalloc(m->nv);
  double *base = dalloc(nout), *fp = dalloc(nout), *fm = dalloc(nout);
  memcpy(mass, m->body_mass, sizeof(double) * (size_t)nb);
  memcpy(com, m->body_com, sizeof(double) * (size_t)(3 * nb));
  memcpy(inertia, m->body_inertia, sizeof(double) * (size_t)(9 * nb));
  /* dual inputs */
  for (int i = 0; i < m->nq; ++i) w->q[i] = grit_dual_const(q[i]);
  for (int i = 0; i < m->nv; ++i) w->v[i] = grit_dual_const(v[i]);
  for (int b = 0; b < nb; ++b) w->mass[b] = grit_dual_const(mass[b]);
  for (int i = 0; i < 3 * nb; ++i) w->com[i] = grit_dual_const(com[i]);
  for (int i = 0; i < 9 * nb; ++i) w->inertia[i] = grit_dual_const(m->body_inertia[i]);
  for (int k = 0; k < np; ++k) {
    grit_dual *x = ps[k].kind == P_Q      ? w->q
                   : ps[k].kind == P_V    ? w->v
                   : ps[k].kind == P_MASS ? w->mass
                   : ps[k].kind == P_COM  ? w->com
                                          : w->inertia;
    x[ps[k].index].d[k] = 1.0;
  }
  grit_kin_positions_dual(m, w->q, &w->in, &w->kin);
  grit_kin_velocities_dual(m, w->v, &w->kin);
  grit_crba_dual(m, &w->kin, w->crb, w->M);
  grit_rne_bias_dual(m, &w->kin, w->v, w->acc, w->frc, w->bias);
  grit_dual *dout = calloc((size_t)nout, sizeof(grit_dual));
  int n = 0;
  for (int i = 0; i < m->nM; ++i) dout[n++] = w->M[i];
  for (int i = 0; i < m->nv; ++i) dout[n++] = w->bias[i];
  for (int i = 0; i < 3 * nb; ++i) dout[n++] = w->kin.xipos[i];

  memcpy(qq, q, sizeof(double) * (size_t)m->nq);
  memcpy(vv, v, sizeof(double) * (size_t)m->nv);
  outputs_double(d, qq, vv, mass, com, inertia, base);
  for (int i = 0; i < nout; ++i)
    cr_assert_eq(dout[i].v, base[i], "output %d: dual value %.17g != double %.17g", i, dout[i].v, base[i]);
  const double oscale = tu_max_abs(base, nout);
  double worst = 0.0;
  for (int k = 0; k < np; ++k) {
    double *x = param_ptr(ps[k], qq, vv, mass, com, inertia), x0 = *x, h = 1e-5 * fmax(1.0, fabs(x0));
    *x = x0 + h;
    outputs_double(d, qq, vv, mass, com, inertia, fp);
    *x = x0 - h;
    outputs_double(d, qq, vv, mass, com, inertia, fm);
    *x = x0;
    double colmax = 0.0, err = 0.0;
    for (int i = 0; i < nout; ++i) {
      const double fd = (fp[i] - fm[i]) / (2 * h);
      colmax = fmax(colmax, fabs(fd));
      err = fmax(err, fabs(fd - dout[i].d[k]));
    }
    /* relative to the column's largest partial, floored at 1e-3 of the outputs' scale for parameters
     * that (nearly) do not matter */
    const double rel = err / fmax(colmax, 1e-3 * oscale);
    worst = fmax(worst, rel);
    cr_assert(rel <= 1e-6, "parameter kind %d index %d: dual vs finite difference relative error %.3g",
              ps[k].kind, ps[k].index, rel);
  }
  free(dout), free(mass), free(com), free(inertia), free(qq), free(vv), free(base), free(fp), free(fm);
  return worst;
}

Test(dynamics, dual_instantiation_matches_finite_differences) {
  tu_rng rng = {18};
  tu_tree_opts o = tu_default_tree_opts();
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    grit_model *m = tu_random_tree(&rng, 2 + tu_int(&rng, 6), TU_ALL, &o);
    grit_data *d = tu_data(m);
    dual_ws w;
    dual_ws_init(&w, m);
    double *q = dalloc(m->nq), *v = dalloc(m->nv);
    tu_random_state(&rng, m, q, v, 2.0);
    /* every coordinate (quaternion components included: the code normalizes them, in both
     * instantiations), every velocity, every mass, every centre-of-mass component, every inertia
     * entry (one at a time: the code uses the matrix as given, symmetric or not) */
    const int np = m->nq + m->nv + 13 * (m->nbody - 1);
    param *ps = calloc((size_t)np, sizeof *ps);
    int k = 0;
    for (int i = 0; i < m->nq; ++i) ps[k++] = (param){P_Q, i};
    for (int i = 0; i < m->nv; ++i) ps[k++] = (param){P_V, i};
    for (int b = 1; b < m->nbody; ++b) ps[k++] = (param){P_MASS, b};
    for (int i = 3; i < 3 * m->nbody; ++i) ps[k++] = (param){P_COM, i};
    for (int i = 9; i < 9 * m->nbody; ++i) ps[k++] = (param){P_INERTIA, i};
    for (int s = 0; s < np; s += GRIT_DUAL_N) {
      const int n = np - s < GRIT_DUAL_N ? np - s : GRIT_DUAL_N;
      worst = fmax(worst, check_dual_chunk(d, &w, ps + s, n, q, v));
    }
    free(ps), free(q), free(v);
    dual_ws_free(&w);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_log_info("dual vs finite differences: worst relative error %.2e", worst);
}

/* ------------------------------------------------------ dual instantiation of the step's terms */

/* The remaining scalar-generic pieces of the step, each as a function of a flat input x (inputs listed
 * per case) evaluated in double and in dual arithmetic:
 *   JAC: q -> (jacp, jacr) of the last body at a fixed world point;
 *   INTEGRATE: (q, dq) -> q (+) 0.37 dq, with q's quaternion components and dq both seeded;
 *   TANGENT: dq -> q0 (+) dq at dq = 0 (the tangent seeding of the derivatives: the exponential map's
 *            series branch at 0 must carry exact derivatives);
 *   FORCE: (q, v, u, bias) -> the smooth force of the step;
 *   OPERATOR: (q, v) -> (A v, A^-1 v) with A = M + h D + h^2 K (block product, Cholesky and solve). */
enum { F_JAC, F_INTEGRATE, F_TANGENT, F_FORCE, F_OPERATOR, F_COUNT };

typedef struct {
  const grit_model *m;
  grit_data *d;
  dual_ws w;
  const double *q0; /* the base configuration of TANGENT */
  double h;
} term_ctx;

static int term_nx(const term_ctx *c, int f) {
  const grit_model *m = c->m;
  switch (f) {
    case F_JAC: return m->nq;
    case F_INTEGRATE: return m->nq + m->nv;
    case F_TANGENT: return m->nv;
    case F_FORCE: return m->nq + m->nv + m->nu + m->nv;
    default: return m->nq + m->nv;
  }
}

static int term_ny(const term_ctx *c, int f) {
  const grit_model *m = c->m;
  switch (f) {
    case F_JAC: return 6 * m->nv;
    case F_INTEGRATE:
    case F_TANGENT: return m->nq;
    case F_FORCE: return m->nv;
    default: return 2 * m->nv;
  }
}

static const double JAC_POINT[3] = {0.3, -0.2, 0.4};

static void term_double(term_ctx *c, int f, const double *x, double *y) {
  const grit_model *m = c->m;
  grit_data *d = c->d;
  grit_inertial in = {m->body_mass, m->body_com, m->body_inertia};
  switch (f) {
    case F_JAC:
      grit_kin_positions(m, x, &in, &d->kin);
      grit_kin_point_jacobian(m, &d->kin, m->nbody - 1, JAC_POINT, y, y + 3 * m->nv);
      break;
    case F_INTEGRATE:
      memcpy(y, x, sizeof(double) * (size_t)m->nq);
      grit_kin_integrate(m, y, x + m->nq, 0.37);
      break;
    case F_TANGENT:
      memcpy(y, c->q0, sizeof(double) * (size_t)m->nq);
      grit_kin_integrate(m, y, x, 1.0);
      break;
    case F_FORCE: {
      const double *q = x, *v = q + m->nq, *u = v + m->nv, *bias = u + m->nu;
      grit_smooth_force(m, q, v, u, bias, c->h, y);
      break;
    }
    default: {
      const double *q = x, *v = q + m->nq;
      grit_kin_positions(m, q, &in, &d->kin);
      grit_crba(m, &d->kin, d->crb, d->M);
      grit_implicit_operator(m, d->M, c->h, d->A);
      grit_block_mulv(m, d->A, v, y);
      memcpy(d->Achol, d->A, sizeof(double) * (size_t)m->nM);
      cr_assert_eq(grit_block_cholesky(m, d->Achol, NULL), -1);
      memcpy(y + m->nv, v, sizeof(double) * (size_t)m->nv);
      grit_block_cholesky_solve(m, d->Achol, y + m->nv);
      break;
    }
  }
}

static void term_dual(term_ctx *c, int f, const grit_dual *x, grit_dual *y) {
  const grit_model *m = c->m;
  dual_ws *w = &c->w;
  for (int b = 0; b < m->nbody; ++b) w->mass[b] = grit_dual_const(m->body_mass[b]);
  for (int i = 0; i < 3 * m->nbody; ++i) w->com[i] = grit_dual_const(m->body_com[i]);
  for (int i = 0; i < 9 * m->nbody; ++i) w->inertia[i] = grit_dual_const(m->body_inertia[i]);
  switch (f) {
    case F_JAC: {
      grit_dual p[3];
      for (int i = 0; i < 3; ++i) p[i] = grit_dual_const(JAC_POINT[i]);
      grit_kin_positions_dual(m, x, &w->in, &w->kin);
      grit_kin_point_jacobian_dual(m, &w->kin, m->nbody - 1, p, y, y + 3 * m->nv);
      break;
    }
    case F_INTEGRATE:
      memcpy(y, x, sizeof(grit_dual) * (size_t)m->nq);
      grit_kin_integrate_dual(m, y, x + m->nq, 0.37);
      break;
    case F_TANGENT:
      for (int i = 0; i < m->nq; ++i) y[i] = grit_dual_const(c->q0[i]);
      grit_kin_integrate_dual(m, y, x, 1.0);
      break;
    case F_FORCE: {
      const grit_dual *q = x, *v = q + m->nq, *u = v + m->nv, *bias = u + m->nu;
      grit_smooth_force_dual(m, q, v, u, bias, c->h, y);
      break;
    }
    default: {
      const grit_dual *q = x, *v = q + m->nq;
      grit_dual *A = calloc((size_t)m->nM + 1, sizeof *A);
      grit_kin_positions_dual(m, q, &w->in, &w->kin);
      grit_crba_dual(m, &w->kin, w->crb, w->M);
      grit_implicit_operator_dual(m, w->M, c->h, A);
      grit_block_mulv_dual(m, A, v, y);
      cr_assert_eq(grit_block_cholesky_dual(m, A, NULL), -1);
      memcpy(y + m->nv, v, sizeof(grit_dual) * (size_t)m->nv);
      grit_block_cholesky_solve_dual(m, A, y + m->nv);
      free(A);
      break;
    }
  }
}

/* Compares the dual partials of term f at x with central differences of the double version (step
 * 1e-5 relative, as check_dual_chunk: truncation ~1e-10 |f'''|; round-off ~ (a few ulps of outputs of
 * size up to ~20 after a Cholesky solve) / 1e-5 ~ 1e-9; the bound is 1e-6 relative to the largest
 * partial of the column, floored at 1e-3 of the output scale). Values must agree bit for bit. */
static double check_term(term_ctx *c, int f, const double *x) {
  const int nx = term_nx(c, f), ny = term_ny(c, f);
  double *xx = dalloc(nx), *y0 = dalloc(ny), *yp = dalloc(ny), *ym = dalloc(ny);
  grit_dual *xd = calloc((size_t)nx + 1, sizeof *xd), *yd = calloc((size_t)ny + 1, sizeof *yd);
  memcpy(xx, x, sizeof(double) * (size_t)nx);
  term_double(c, f, xx, y0);
  const double oscale = fmax(tu_max_abs(y0, ny), 1e-300);
  double worst = 0.0;
  for (int s = 0; s < nx; s += GRIT_DUAL_N) {
    const int n = nx - s < GRIT_DUAL_N ? nx - s : GRIT_DUAL_N;
    for (int i = 0; i < nx; ++i) xd[i] = grit_dual_const(x[i]);
    for (int k = 0; k < n; ++k) xd[s + k].d[k] = 1.0;
    term_dual(c, f, xd, yd);
    for (int i = 0; i < ny; ++i)
      cr_assert_eq(yd[i].v, y0[i], "term %d output %d: dual value %.17g != double %.17g", f, i, yd[i].v, y0[i]);
    for (int k = 0; k < n; ++k) {
      const double x0 = x[s + k], h = 1e-5 * fmax(1.0, fabs(x0));
      xx[s + k] = x0 + h;
      term_double(c, f, xx, yp);
      xx[s + k] = x0 - h;
      term_double(c, f, xx, ym);
      xx[s + k] = x0;
      double colmax = 0.0, err = 0.0;
      for (int i = 0; i < ny; ++i) {
        const double fd = (yp[i] - ym[i]) / (2 * h);
        colmax = fmax(colmax, fabs(fd));
        err = fmax(err, fabs(fd - yd[i].d[k]));
      }
      const double rel = err / fmax(colmax, 1e-3 * oscale);
      worst = fmax(worst, rel);
      cr_assert(rel <= 1e-6, "term %d input %d: dual vs finite difference relative error %.3g (err %.3g, column %.3g, "
                "outputs %.3g)", f, s + k, rel, err, colmax, oscale);
    }
  }
  free(xx), free(y0), free(yp), free(ym), free(xd), free(yd);
  return worst;
}

Test(dynamics, dual_step_terms_match_finite_differences) {
  tu_rng rng = {21};
  double worst[F_COUNT] = {0};
  for (int trial = 0; trial < 10; ++trial) {
    /* a random tree with springs and actuated hinges/slides, some actuators clamped */
    grit_builder *b;
    grit_builder_create(&b);
    const int nb = 2 + tu_int(&rng, 5);
    int nj = 0;
    tu_tree_opts o = tu_default_tree_opts();
    o.springs = 1;
    for (int k = 1; k <= nb; ++k) {
      grit_body_def bd = grit_default_body_def();
      bd.parent = tu_int(&rng, k);
      for (int i = 0; i < 3; ++i) bd.pos[i] = tu_uniform(&rng, -0.5, 0.5), bd.com[i] = tu_uniform(&rng, -0.2, 0.2);
      tu_quat(&rng, bd.quat);
      tu_inertia(&rng, bd.inertia, 0.3);
      grit_builder_add_body(b, &bd, NULL);
      const double u = tu_uniform(&rng, 0, 1);
      if (u < 0.3) {
        grit_joint_def jd = grit_default_joint_def();
        jd.type = bd.parent == 0 ? GRIT_JOINT_FREE : GRIT_JOINT_BALL;
        jd.damping = 0.2, jd.armature = 0.01;
        grit_builder_add_joint(b, k, &jd, NULL);
        nj++;
      } else {
        tu_add_hinge_or_slide(&rng, b, k, TU_HINGE | TU_SLIDE, &o);
        grit_actuator_def ad = grit_default_actuator_def();
        ad.joint = nj++;
        ad.gear = tu_uniform(&rng, 0.5, 3);
        ad.ctrl_limited = u > 0.6;
        grit_builder_add_actuator(b, &ad, NULL);
      }
    }
    grit_model *m;
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_free(b);
    term_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.d = tu_data(m);
    c.h = 2e-3;
    dual_ws_init(&c.w, m);
    double *q = dalloc(m->nq), *v = dalloc(m->nv), *x = dalloc(m->nq + 3 * m->nv + m->nu);
    tu_random_state(&rng, m, q, v, 2.0);
    c.q0 = q;
    for (int f = 0; f < F_COUNT; ++f) {
      int k = 0;
      const int nx = term_nx(&c, f);
      if (f != F_TANGENT)
        for (int i = 0; i < m->nq; ++i) x[k++] = q[i];
      if (f == F_TANGENT)
        for (int i = 0; i < m->nv; ++i) x[k++] = 0.0; /* at the base point, as the derivatives seed it */
      else if (f != F_JAC)
        for (int i = 0; i < m->nv; ++i) x[k++] = v[i];
      if (f == F_FORCE) {
        /* controls inside the limits (-1, 1) or clamped (+-1.5), away from the kinks at +-1 */
        for (int a = 0; a < m->nu; ++a) x[k++] = a % 2 ? (tu_uniform(&rng, -1, 1) < 0 ? -1.5 : 1.5) : tu_uniform(&rng, -0.9, 0.9);
        for (int i = 0; i < m->nv; ++i) x[k++] = tu_uniform(&rng, -3, 3); /* the bias, an input here */
      }
      cr_assert_eq(k, nx);
      worst[f] = fmax(worst[f], check_term(&c, f, x));
    }
    free(q), free(v), free(x);
    dual_ws_free(&c.w);
    grit_data_free(c.d);
    grit_model_free(m);
  }
  cr_log_info("dual vs FD, worst relative errors: jacobian %.1e, integrate %.1e, tangent %.1e, force %.1e, "
              "operator/cholesky %.1e", worst[F_JAC], worst[F_INTEGRATE], worst[F_TANGENT], worst[F_FORCE],
              worst[F_OPERATOR]);
}

