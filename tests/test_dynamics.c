/* SPDX-License-Identifier: Apache-2.0 */
/* test_dynamics.c — the mass matrix (CRBA), the bias forces (RNEA) and the free-motion velocity, each
 * against an independent computation (the dual instantiation: test_dynamics_dual.c):
 *   - M is symmetric positive definite on random trees and configurations, and M v = dT/dv with the
 *     kinetic energy T computed from the body twists (test_util.h, tu_kinetic), not from M;
 *   - c(q, v) = d/dt(dT/dv) - dT/dq + dV/dq by central finite differences (hinge/slide trees: the
 *     classical Lagrange equations; all joint types: the Hamel / Euler-Poincare form in the tangent
 *     space, where the body-frame angular velocities of ball and free joints add omega x dT/domega);
 *   - Newton-Euler closed forms for a free body and a ball-jointed body (gyroscopic term, gravity);
 *   - v* against a dense solve of (M + h D + h^2 K)(v* - v0) = h (tau - c - s - D v0 - K (q0 + h v0 - q_ref)),
 *     s the spin correction of ball and free bodies, recomputed here by another route. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "data_internal.h"
#include "dynamics.h"
#include "grit/grit.h"
#include "kinematics.h"
#include "test_util.h"

static double *dalloc(int n) { return calloc((size_t)n + 1, sizeof(double)); }

/* Dense M and c at (q, v). */
static void m_and_c(grit_data *d, const double *q, const double *v, double *M, double *c) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, m->nv), GRIT_OK);
  if (M) cr_assert_eq(grit_mass_matrix(d, M), GRIT_OK);
  if (c) cr_assert_eq(grit_bias_forces(d, c), GRIT_OK);
}

/* The step's momentum correction (dynamics_decl_generic.h), computed independently: the couple of each
 * ball/free body mapped through its angular-velocity Jacobian and a root body's COM force through its
 * COM Jacobian (not through subtree sums of world-origin wrenches), the rotations exp(-+h w~) as a
 * Rodrigues matrix and its transpose (not quaternions). Adds to c; after m_and_c at the same state. */
static void add_momentum_correction(grit_data *d, double h, const double *v, double *c) {
  const grit_model *m = grit_data_model(d);
  const int nv = m->nv;
  double *jacp = dalloc(3 * nv), *jacr = dalloc(3 * nv);
  for (int b = 1; b < m->nbody; ++b) {
    int spins = 0;
    for (int j = m->body_jntadr[b]; j >= 0 && j < m->body_jntadr[b] + m->body_jntnum[b]; ++j)
      spins |= m->jnt_type[m->body_jnt[j]] == GRIT_JOINT_BALL || m->jnt_type[m->body_jnt[j]] == GRIT_JOINT_FREE;
    if (!spins) continue;
    double pos[3], qt[4], R[9], ww[3] = {0, 0, 0}, w[3], L[3], g[3], wp[3], a[3], Ra[9], Lr[3], tb[3], tw[3];
    cr_assert_eq(grit_body_pose(d, b, pos, qt), GRIT_OK);
    cr_assert_eq(grit_point_jacobian(d, b, pos, jacp, jacr), GRIT_OK);
    const double *I = m->body_inertia + 9 * b;
    const double qw = qt[0], qx = qt[1], qy = qt[2], qz = qt[3];
    const double Rq[9] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz),     2 * (qx * qz + qw * qy),
                          2 * (qx * qy + qw * qz),     1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
                          2 * (qx * qz - qw * qy),     2 * (qy * qz + qw * qx),     1 - 2 * (qx * qx + qy * qy)};
    memcpy(R, Rq, sizeof R);
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < nv; ++k) ww[r] += jacr[r * nv + k] * v[k];
    for (int r = 0; r < 3; ++r) w[r] = R[r] * ww[0] + R[3 + r] * ww[1] + R[6 + r] * ww[2];
    for (int r = 0; r < 3; ++r) L[r] = I[3 * r] * w[0] + I[3 * r + 1] * w[1] + I[3 * r + 2] * w[2];
    g[0] = w[1] * L[2] - w[2] * L[1], g[1] = w[2] * L[0] - w[0] * L[2], g[2] = w[0] * L[1] - w[1] * L[0];
    tu_solve(I, g, wp, 3);
    for (int r = 0; r < 3; ++r) a[r] = -h * (w[r] - h * wp[r]);
    const double th = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    const double s1 = th > 0 ? sin(th) / th : 1.0, s2 = th > 0 ? (1 - cos(th)) / (th * th) : 0.5;
    const double K[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) {
        double k2 = 0;
        for (int l = 0; l < 3; ++l) k2 += K[3 * r + l] * K[3 * l + k];
        Ra[3 * r + k] = (r == k) + s1 * K[3 * r + k] + s2 * k2;
      }
    for (int r = 0; r < 3; ++r) Lr[r] = Ra[3 * r] * L[0] + Ra[3 * r + 1] * L[1] + Ra[3 * r + 2] * L[2];
    for (int r = 0; r < 3; ++r) tb[r] = (L[r] - Lr[r]) / h - g[r];
    for (int r = 0; r < 3; ++r) tw[r] = R[3 * r] * tb[0] + R[3 * r + 1] * tb[1] + R[3 * r + 2] * tb[2];
    for (int k = 0; k < nv; ++k) c[k] += jacr[k] * tw[0] + jacr[nv + k] * tw[1] + jacr[2 * nv + k] * tw[2];
    if (m->body_parent[b] != 0) continue;
    /* a root body: m R [(exp(h w~) - 1)(w~ x r)/h - w x (w x r)] at the COM, r = R^T (com - anchor) */
    const int j = m->body_jnt[m->body_jntadr[b]];
    const double *jp = m->jnt_pos + 3 * j;
    double com[3], anc[3], rw[3], r[3], y[3], yr[3], c1[3], acc[3], fb[3], fw[3];
    cr_assert_eq(grit_body_com(d, b, com), GRIT_OK);
    for (int i = 0; i < 3; ++i) anc[i] = pos[i] + R[3 * i] * jp[0] + R[3 * i + 1] * jp[1] + R[3 * i + 2] * jp[2];
    for (int i = 0; i < 3; ++i) rw[i] = com[i] - anc[i];
    for (int i = 0; i < 3; ++i) r[i] = R[i] * rw[0] + R[3 + i] * rw[1] + R[6 + i] * rw[2];
    for (int i = 0; i < 3; ++i) wp[i] = -a[i] / h; /* w~ */
    y[0] = wp[1] * r[2] - wp[2] * r[1], y[1] = wp[2] * r[0] - wp[0] * r[2], y[2] = wp[0] * r[1] - wp[1] * r[0];
    for (int i = 0; i < 3; ++i) yr[i] = Ra[i] * y[0] + Ra[3 + i] * y[1] + Ra[6 + i] * y[2]; /* Ra^T = exp(h w~) */
    c1[0] = w[1] * r[2] - w[2] * r[1], c1[1] = w[2] * r[0] - w[0] * r[2], c1[2] = w[0] * r[1] - w[1] * r[0];
    acc[0] = w[1] * c1[2] - w[2] * c1[1], acc[1] = w[2] * c1[0] - w[0] * c1[2], acc[2] = w[0] * c1[1] - w[1] * c1[0];
    for (int i = 0; i < 3; ++i) fb[i] = m->body_mass[b] * ((yr[i] - y[i]) / h - acc[i]);
    for (int i = 0; i < 3; ++i) fw[i] = R[3 * i] * fb[0] + R[3 * i + 1] * fb[1] + R[3 * i + 2] * fb[2];
    cr_assert_eq(grit_point_jacobian(d, b, com, jacp, NULL), GRIT_OK);
    for (int k = 0; k < nv; ++k) c[k] += jacp[k] * fw[0] + jacp[nv + k] * fw[1] + jacp[2 * nv + k] * fw[2];
  }
  free(jacp), free(jacr);
}

static double T_at(grit_data *d, const double *q, const double *v) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, m->nv), GRIT_OK);
  return tu_kinetic(d);
}

static double V_at(grit_data *d, const double *q) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  return tu_potential(d);
}

/* The generalized momentum p = dT/dv at (q, v). T is quadratic in v, so the central difference with a
 * UNIT step is exact: (T(v + e) - T(v - e)) / 2 = e^T M v, with round-off only. */
static void momentum(grit_data *d, const double *q, const double *v, double *p) {
  const int nv = grit_data_model(d)->nv;
  double *w = dalloc(nv);
  memcpy(w, v, sizeof(double) * (size_t)nv);
  for (int i = 0; i < nv; ++i) {
    w[i] = v[i] + 1.0;
    const double tp = T_at(d, q, w);
    w[i] = v[i] - 1.0;
    const double tm = T_at(d, q, w);
    w[i] = v[i];
    p[i] = 0.5 * (tp - tm);
  }
  free(w);
}

/* ------------------------------------------------------------------------------ mass matrix */

Test(dynamics, mass_matrix_is_symmetric_positive_definite) {
  tu_rng rng = {11};
  tu_tree_opts o = tu_default_tree_opts();
  tu_coverage cov = {{0}, 0, 0, 0};
  double worst_energy = 0.0;
  for (int trial = 0; trial < 40; ++trial) {
    grit_model *m = tu_random_tree(&rng, 1 + tu_int(&rng, 10), TU_ALL, &o);
    tu_cover(&cov, m);
    grit_data *d = tu_data(m);
    const int nv = m->nv, nq = m->nq;
    double *M = dalloc(nv * nv), *q = dalloc(nq), *v = dalloc(nv), *Mv = dalloc(nv);
    for (int config = 0; config < 5; ++config) {
      tu_random_state(&rng, m, q, v, 2.0);
      m_and_c(d, q, v, M, NULL);
      for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
          cr_assert_eq(M[i * nv + j], M[j * nv + i], "M is not symmetric at (%d, %d)", i, j);
          if (m->dof_tree[i] != m->dof_tree[j]) cr_assert_eq(M[i * nv + j], 0.0, "dofs of different trees couple");
        }
      const double pivot = tu_cholesky_min_pivot(M, nv);
      cr_assert(pivot > 0, "trial %d: M is not positive definite", trial);
      /* 1/2 v^T M v is the kinetic energy from the body twists. Both are sums of O(nbody) products of
       * O(1..10) numbers: 1e-12 relative is ~100x their round-off. */
      double vMv = 0.0;
      for (int i = 0; i < nv; ++i) {
        Mv[i] = 0.0;
        for (int j = 0; j < nv; ++j) Mv[i] += M[i * nv + j] * v[j];
        vMv += v[i] * Mv[i];
      }
      const double T = tu_kinetic(d), err = fabs(0.5 * vMv - T) / fmax(T, 1e-300);
      worst_energy = fmax(worst_energy, err);
      cr_assert(err <= 1e-12, "trial %d: 1/2 v'Mv = %.17g, T = %.17g", trial, 0.5 * vMv, T);
    }
    free(M), free(q), free(v), free(Mv);
    grit_data_free(d);
    grit_model_free(m);
  }
  tu_assert_covered(&cov);
  cr_log_info("1/2 v'Mv vs T from twists: worst relative deviation %.2e", worst_energy);
}

/* M v = dT/dv, every component (the gradient, not just the energy). */
Test(dynamics, mass_matrix_times_v_is_kinetic_energy_gradient) {
  tu_rng rng = {12};
  tu_tree_opts o = tu_default_tree_opts();
  double worst = 0.0;
  for (int trial = 0; trial < 30; ++trial) {
    grit_model *m = tu_random_tree(&rng, 1 + tu_int(&rng, 9), TU_ALL, &o);
    grit_data *d = tu_data(m);
    const int nv = m->nv, nq = m->nq;
    double *M = dalloc(nv * nv), *q = dalloc(nq), *v = dalloc(nv), *p = dalloc(nv);
    tu_random_state(&rng, m, q, v, 2.0);
    m_and_c(d, q, v, M, NULL);
    momentum(d, q, v, p);
    double scale = 0.0, err = 0.0;
    for (int i = 0; i < nv; ++i) {
      double mv = 0.0;
      for (int j = 0; j < nv; ++j) mv += M[i * nv + j] * v[j];
      scale = fmax(scale, fabs(mv));
      err = fmax(err, fabs(mv - p[i]));
    }
    /* exact up to the round-off of T(v +- e) (~1e-15 T, T up to ~100): 1e-10 relative is a wide margin */
    worst = fmax(worst, err / scale);
    cr_assert(err <= 1e-10 * scale, "trial %d: |M v - dT/dv| = %g (scale %g)", trial, err, scale);
    free(M), free(q), free(v), free(p);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_log_info("M v vs dT/dv: worst relative deviation %.2e", worst);
}

/* A body welded to its parent is the same as one body with the combined inertia. */
Test(dynamics, welded_body_adds_its_inertia_to_the_parent) {
  tu_rng rng = {13};
  grit_body_def a = grit_default_body_def(), w = grit_default_body_def();
  a.mass = 1.3, w.mass = 0.7;
  for (int i = 0; i < 3; ++i) {
    a.com[i] = tu_uniform(&rng, -0.3, 0.3);
    w.com[i] = tu_uniform(&rng, -0.3, 0.3);
    w.pos[i] = tu_uniform(&rng, -1, 1);
  }
  tu_quat(&rng, w.quat);
  tu_inertia(&rng, a.inertia, 0.2);
  tu_inertia(&rng, w.inertia, 0.1);
  w.parent = 1;
  /* the combined body in body 1's frame: centre of mass and inertia by the parallel axis theorem */
  double cw[3], Rw[9], Iw[9], c[3];
  grit_quat_to_mat(Rw, w.quat);
  grit_tf_apply(cw, w.pos, Rw, w.com);
  grit_m3_mul(Iw, Rw, w.inertia);
  grit_m3_mult(Iw, Iw, Rw);
  const double mt = a.mass + w.mass;
  for (int i = 0; i < 3; ++i) c[i] = (a.mass * a.com[i] + w.mass * cw[i]) / mt;
  grit_body_def comb = a;
  comb.mass = mt;
  memcpy(comb.com, c, sizeof c);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double da[3], dw[3];
      grit_v3_sub(da, a.com, c);
      grit_v3_sub(dw, cw, c);
      double pa = (i == j ? grit_v3_dot(da, da) : 0.0) - da[i] * da[j];
      double pw = (i == j ? grit_v3_dot(dw, dw) : 0.0) - dw[i] * dw[j];
      comb.inertia[3 * i + j] = a.inertia[3 * i + j] + Iw[3 * i + j] + a.mass * pa + w.mass * pw;
    }
  grit_joint_def j1 = grit_default_joint_def(), j2 = grit_default_joint_def();
  tu_unit3(&rng, j1.axis);
  tu_unit3(&rng, j2.axis);
  j2.type = GRIT_JOINT_SLIDE;
  grit_model *mm[2];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b;
    grit_builder_create(&b);
    cr_assert_eq(grit_builder_add_body(b, k ? &comb : &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_add_joint(b, 1, &j1, NULL);
    grit_builder_add_joint(b, 1, &j2, NULL);
    if (!k) cr_assert_eq(grit_builder_add_body(b, &w, NULL), GRIT_OK);
    cr_assert_eq(grit_builder_compile(b, &mm[k]), GRIT_OK);
    grit_builder_free(b);
  }
  double q[2] = {0.7, -0.2}, v[2] = {1.5, -0.8}, M[2][4], cc[2][2];
  for (int k = 0; k < 2; ++k) {
    grit_data *d = tu_data(mm[k]);
    m_and_c(d, q, v, M[k], cc[k]);
    grit_data_free(d);
    grit_model_free(mm[k]);
  }
  /* the two differ only by the round-off of the combination above */
  cr_assert(tu_max_abs_diff(M[0], M[1], 4) <= 1e-13 * tu_max_abs(M[0], 4), "M differs");
  cr_assert(tu_max_abs_diff(cc[0], cc[1], 2) <= 1e-13 * tu_max_abs(cc[0], 2), "c differs");
}

/* ---------------------------------------------------------------------------------- bias forces */

/* grit_rne_bias skips the force of a body on no tree (body_tree -1: welded to the world, its subtree
 * without dofs; its force reaches no dof): a hinge-slide body next to a massive welded body carrying another
 * has the bias bits it has alone. And a welded body with a moving child (on the child's tree, not skipped)
 * passes gravity's acceleration on: the child has the bias it has attached to the world at the composed
 * pose (that pose's round-off apart). */
Test(dynamics, bias_through_a_body_welded_to_the_world) {
  tu_rng rng = {29};
  grit_body_def s = grit_default_body_def(), c = grit_default_body_def();
  s.mass = 5.0, c.mass = 1.1;
  for (int i = 0; i < 3; ++i) {
    s.pos[i] = tu_uniform(&rng, -1, 1), c.pos[i] = tu_uniform(&rng, -1, 1);
    s.com[i] = tu_uniform(&rng, -0.3, 0.3), c.com[i] = tu_uniform(&rng, -0.3, 0.3);
  }
  tu_quat(&rng, s.quat);
  tu_quat(&rng, c.quat);
  tu_inertia(&rng, s.inertia, 0.3);
  tu_inertia(&rng, c.inertia, 0.2);
  c.parent = 1;
  grit_body_def direct = c; /* c's pose composed with s's, on the world */
  direct.parent = 0;
  grit_quat_rotate(direct.pos, s.quat, c.pos);
  for (int i = 0; i < 3; ++i) direct.pos[i] += s.pos[i];
  grit_quat_mul(direct.quat, s.quat, c.quat);
  grit_joint_def j1 = grit_default_joint_def(), j2 = grit_default_joint_def();
  tu_unit3(&rng, j1.axis);
  tu_unit3(&rng, j2.axis);
  j2.type = GRIT_JOINT_SLIDE;
  double q[2] = {0.4, 0.3}, v[2] = {-1.2, 0.9}, cc[2][2];
  for (int k = 0; k < 2; ++k) {
    grit_builder *b;
    grit_model *m;
    grit_builder_create(&b);
    if (!k) cr_assert_eq(grit_builder_add_body(b, &s, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    cr_assert_eq(grit_builder_add_body(b, k ? &direct : &c, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_add_joint(b, k ? 1 : 2, &j1, NULL);
    grit_builder_add_joint(b, k ? 1 : 2, &j2, NULL);
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
    grit_builder_free(b);
    grit_data *d = tu_data(m);
    m_and_c(d, q, v, NULL, cc[k]);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert(tu_max_abs_diff(cc[0], cc[1], 2) <= 1e-13 * tu_max_abs(cc[0], 2), "c differs: %g %g vs %g %g", cc[0][0],
            cc[0][1], cc[1][0], cc[1][1]);
  double alone[2][2];
  for (int k = 0; k < 2; ++k) { /* direct alone, then after two welded bodies (one on the other) */
    grit_builder *b;
    grit_model *m;
    grit_builder_create(&b);
    grit_body_def s2 = s;
    s2.parent = 1;
    if (k) cr_assert_eq(grit_builder_add_body(b, &s, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    if (k) cr_assert_eq(grit_builder_add_body(b, &s2, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    cr_assert_eq(grit_builder_add_body(b, &direct, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_add_joint(b, k ? 3 : 1, &j1, NULL);
    grit_builder_add_joint(b, k ? 3 : 1, &j2, NULL);
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
    grit_builder_free(b);
    cr_assert(!k || (m->body_tree[1] < 0 && m->body_tree[2] < 0), "the welded bodies are on a tree");
    grit_data *d = tu_data(m);
    m_and_c(d, q, v, NULL, alone[k]);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert(!memcmp(alone[0], alone[1], sizeof alone[0]), "c differs: %g %g vs %g %g", alone[0][0], alone[0][1],
            alone[1][0], alone[1][1]);
}

/* c = d/dt(dT/dv) - X(T) + X(V) + [omega x dT/domega for ball and free rotations], all by central
 * differences in the tangent space: d/dt along q (+) t v with v held fixed (the motion with v' = 0),
 * X_i the derivative along q (+) s e_i. For hinge/slide trees this is Lagrange's equation; the extra
 * term is the Hamel (Euler-Poincare) term of the body-frame angular velocities, which is what turns
 * the free rigid body's d/dt(I w) = 0 into Euler's I w' + w x I w = 0. */
static void lagrangian_bias(grit_data *d, const double *q, const double *v, double eps, double *c) {
  const grit_model *m = grit_data_model(d);
  const int nq = m->nq, nv = m->nv;
  double *qp = dalloc(nq), *qm = dalloc(nq), *pp = dalloc(nv), *pm = dalloc(nv), *e = dalloc(nv), *p = dalloc(nv);
  /* d/dt (dT/dv) at v' = 0 */
  memcpy(qp, q, sizeof(double) * (size_t)nq);
  memcpy(qm, q, sizeof(double) * (size_t)nq);
  grit_integrate_positions(m, qp, v, eps);
  grit_integrate_positions(m, qm, v, -eps);
  momentum(d, qp, v, pp);
  momentum(d, qm, v, pm);
  for (int i = 0; i < nv; ++i) c[i] = (pp[i] - pm[i]) / (2 * eps);
  /* - dT/dq + dV/dq along the tangent basis */
  for (int i = 0; i < nv; ++i) {
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[i] = 1.0;
    memcpy(qp, q, sizeof(double) * (size_t)nq);
    memcpy(qm, q, sizeof(double) * (size_t)nq);
    grit_integrate_positions(m, qp, e, eps);
    grit_integrate_positions(m, qm, e, -eps);
    const double dT = (T_at(d, qp, v) - T_at(d, qm, v)) / (2 * eps);
    const double dV = (V_at(d, qp) - V_at(d, qm)) / (2 * eps);
    c[i] += dV - dT;
  }
  /* the Hamel term omega x p of each body-frame rotation */
  momentum(d, q, v, p);
  for (int j = 0; j < m->njnt; ++j) {
    const int t = m->jnt_type[j];
    if (t != GRIT_JOINT_BALL && t != GRIT_JOINT_FREE) continue;
    const int r = m->jnt_dofadr[j] + (t == GRIT_JOINT_FREE ? 3 : 0);
    double wxp[3];
    grit_v3_cross(wxp, v + r, p + r);
    for (int k = 0; k < 3; ++k) c[r + k] += wxp[k];
  }
  free(qp), free(qm), free(pp), free(pm), free(e), free(p);
}

/* Compares grit's bias with the Lagrangian one on random trees of the given kinds. Central differences
 * with eps = 1e-5: truncation ~ eps^2 |T'''| ~ 1e-9 and round-off ~ 1e-16 |T| / eps ~ 1e-9 (T up to
 * ~100), against biases of order 10..100: the bound 1e-6 relative to the largest entry has a margin
 * of about 100. */
static double check_bias_against_lagrangian(unsigned long long seed, unsigned kinds, int trials) {
  tu_rng rng = {seed};
  tu_tree_opts o = tu_default_tree_opts();
  double worst = 0.0;
  for (int trial = 0; trial < trials; ++trial) {
    grit_model *m = tu_random_tree(&rng, 1 + tu_int(&rng, 7), kinds, &o);
    grit_data *d = tu_data(m);
    const int nv = m->nv, nq = m->nq;
    double *q = dalloc(nq), *v = dalloc(nv), *c = dalloc(nv), *cl = dalloc(nv);
    tu_random_state(&rng, m, q, v, 2.0);
    m_and_c(d, q, v, NULL, c);
    lagrangian_bias(d, q, v, 1e-5, cl);
    const double scale = fmax(1.0, tu_max_abs(c, nv)), err = tu_max_abs_diff(c, cl, nv) / scale;
    worst = fmax(worst, err);
    for (int i = 0; i < nv; ++i)
      cr_assert(fabs(c[i] - cl[i]) <= 1e-6 * scale, "trial %d dof %d (joint type %d): rne %.12g, lagrangian %.12g",
                trial, i, m->jnt_type[m->dof_jnt[i]], c[i], cl[i]);
    free(q), free(v), free(c), free(cl);
    grit_data_free(d);
    grit_model_free(m);
  }
  return worst;
}

Test(dynamics, bias_matches_lagrange_equations_on_hinge_slide_trees) {
  double worst = check_bias_against_lagrangian(14, TU_HINGE | TU_SLIDE | TU_MULTI | TU_WELD, 30);
  cr_log_info("bias vs Lagrange (hinge/slide trees): worst relative deviation %.2e", worst);
}

Test(dynamics, bias_matches_hamel_equations_on_all_trees) {
  double worst = check_bias_against_lagrangian(15, TU_ALL, 40);
  cr_log_info("bias vs Hamel/Lagrange (all joint types): worst relative deviation %.2e", worst);
}

/* A free body: qvel = (v_p world, w body). Closed forms with r = R c the centre-of-mass offset:
 *   M = [m 1, -m R [c]x; m [c]x R^T, I_c - m [c]x^2]
 *   c = (F; R^T tau_p), F = m w x (w x r) - m g, tau_p = w x I_cw w + r x F (Newton-Euler at v' = 0). */
Test(dynamics, free_body_matches_newton_euler) {
  tu_rng rng = {16};
  for (int trial = 0; trial < 20; ++trial) {
    grit_builder *b;
    grit_builder_create(&b);
    grit_options opt = grit_default_options();
    for (int i = 0; i < 3; ++i) opt.gravity[i] = tu_uniform(&rng, -10, 10);
    grit_builder_set_options(b, &opt);
    grit_body_def bd = grit_default_body_def();
    bd.mass = tu_uniform(&rng, 0.5, 5);
    /* the first trials with the centre of mass at the origin: the pure gyroscopic term w x I w */
    for (int i = 0; i < 3; ++i) bd.com[i] = trial < 5 ? 0.0 : tu_uniform(&rng, -0.5, 0.5);
    tu_inertia(&rng, bd.inertia, bd.mass);
    grit_builder_add_body(b, &bd, NULL);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_FREE;
    grit_builder_add_joint(b, 1, &jd, NULL);
    grit_model *m;
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
    grit_builder_free(b);
    grit_data *d = tu_data(m);
    double q[7], v[6], M[36], c[6];
    tu_random_state(&rng, m, q, v, 3.0);
    m_and_c(d, q, v, M, c);

    double R[9], r[3], w[3], Ic[9], Icw[9], F[3], tau[3], t1[3], t2[3], C[9], Me[36], ce[6];
    grit_quat_to_mat(R, q + 3);
    grit_m3_mulv(r, R, bd.com);
    grit_m3_mulv(w, R, v + 3);
    memcpy(Ic, m->body_inertia + 9, sizeof Ic);
    grit_m3_mul(Icw, R, Ic);
    grit_m3_mult(Icw, Icw, R);
    grit_v3_cross(t1, w, r);
    grit_v3_cross(t2, w, t1);
    for (int i = 0; i < 3; ++i) F[i] = bd.mass * (t2[i] - opt.gravity[i]);
    grit_m3_mulv(t1, Icw, w);
    grit_v3_cross(tau, w, t1);
    grit_v3_cross(t2, r, F);
    grit_v3_add(tau, tau, t2);
    memcpy(ce, F, sizeof F);
    grit_m3_tmulv(ce + 3, R, tau);
    grit_m3_skew(C, bd.com);
    double RC[9], CRt[9], CC[9];
    grit_m3_mul(RC, R, C);
    grit_m3_mult(CRt, C, R);
    grit_m3_mul(CC, C, C);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        Me[6 * i + j] = i == j ? bd.mass : 0.0;
        Me[6 * i + 3 + j] = -bd.mass * RC[3 * i + j];
        Me[6 * (3 + i) + j] = bd.mass * CRt[3 * i + j];
        Me[6 * (3 + i) + 3 + j] = Ic[3 * i + j] - bd.mass * CC[3 * i + j];
      }
    /* closed forms and algorithm agree to round-off: 1e-12 relative */
    cr_assert(tu_max_abs_diff(M, Me, 36) <= 1e-12 * tu_max_abs(Me, 36), "trial %d: M differs by %g", trial,
              tu_max_abs_diff(M, Me, 36));
    cr_assert(tu_max_abs_diff(c, ce, 6) <= 1e-12 * tu_max_abs(ce, 6), "trial %d: c differs by %g", trial,
              tu_max_abs_diff(c, ce, 6));
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A body on a ball joint (anchor a in the body frame) under gravity: with r = R (c - a) and the inertia
 * about the anchor I_a = I_cw + m (|r|^2 1 - r r^T), M = R^T I_a R and c = R^T (w x I_a w - m r x g). */
Test(dynamics, ball_joint_matches_newton_euler) {
  tu_rng rng = {17};
  for (int trial = 0; trial < 20; ++trial) {
    grit_builder *b;
    grit_builder_create(&b);
    grit_body_def bd = grit_default_body_def();
    bd.mass = tu_uniform(&rng, 0.5, 5);
    for (int i = 0; i < 3; ++i) {
      bd.com[i] = tu_uniform(&rng, -0.5, 0.5);
      bd.pos[i] = tu_uniform(&rng, -1, 1);
    }
    tu_quat(&rng, bd.quat);
    tu_inertia(&rng, bd.inertia, bd.mass);
    grit_builder_add_body(b, &bd, NULL);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_BALL;
    for (int i = 0; i < 3; ++i) jd.pos[i] = tu_uniform(&rng, -0.5, 0.5);
    grit_builder_add_joint(b, 1, &jd, NULL);
    grit_model *m;
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
    grit_builder_free(b);
    grit_data *d = tu_data(m);
    const grit_options opt = grit_model_options(m);
    double q[4], v[3], M[9], c[3];
    tu_random_state(&rng, m, q, v, 3.0);
    m_and_c(d, q, v, M, c);
    double quat[4], R[9], r[3], w[3], Ia[9], t[3], u[3], ce[3], Me[9];
    grit_body_pose(d, 1, NULL, quat);
    grit_quat_to_mat(R, quat);
    grit_v3_sub(t, bd.com, jd.pos);
    grit_m3_mulv(r, R, t);
    grit_m3_mulv(w, R, v);
    grit_m3_mul(Ia, R, m->body_inertia + 9);
    grit_m3_mult(Ia, Ia, R);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Ia[3 * i + j] += bd.mass * ((i == j ? grit_v3_dot(r, r) : 0.0) - r[i] * r[j]);
    grit_m3_mulv(t, Ia, w);
    grit_v3_cross(u, w, t);
    grit_v3_cross(t, r, opt.gravity);
    for (int i = 0; i < 3; ++i) u[i] -= bd.mass * t[i];
    grit_m3_tmulv(ce, R, u);
    grit_m3_tmul(Me, R, Ia);
    grit_m3_mul(Me, Me, R);
    cr_assert(tu_max_abs_diff(M, Me, 9) <= 1e-12 * tu_max_abs(Me, 9), "trial %d: M differs", trial);
    cr_assert(tu_max_abs_diff(c, ce, 3) <= 1e-12 * tu_max_abs(ce, 3), "trial %d: c differs by %g", trial,
              tu_max_abs_diff(c, ce, 3));
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* ----------------------------------------------------------------------- free motion and step */

/* v* against a dense solve of the implicit step with the model's damping, springs, armature and
 * (clamped) actuators; then the step without constraints gives v = v*, q = q0 (+) h v*. */
Test(dynamics, free_motion_velocity_solves_the_implicit_step) {
  tu_rng rng = {19};
  for (int trial = 0; trial < 20; ++trial) {
    /* a random tree with actuators on its hinge and slide joints, some clamped */
    grit_builder *b;
    grit_builder_create(&b);
    grit_options opt = grit_default_options();
    opt.timestep = 5e-3;
    grit_builder_set_options(b, &opt);
    const int nb = 1 + tu_int(&rng, 6);
    int nj = 0;
    for (int k = 1; k <= nb; ++k) {
      grit_body_def bd = grit_default_body_def();
      bd.parent = tu_int(&rng, k);
      for (int i = 0; i < 3; ++i) bd.pos[i] = tu_uniform(&rng, -0.5, 0.5), bd.com[i] = tu_uniform(&rng, -0.2, 0.2);
      tu_quat(&rng, bd.quat);
      bd.mass = tu_uniform(&rng, 0.3, 3);
      tu_inertia(&rng, bd.inertia, 0.1 * bd.mass);
      grit_builder_add_body(b, &bd, NULL);
      if (bd.parent == 0 && tu_uniform(&rng, 0, 1) < 0.3) {
        grit_joint_def jd = grit_default_joint_def();
        jd.type = GRIT_JOINT_FREE;
        jd.damping = 0.1, jd.armature = 0.02;
        grit_builder_add_joint(b, k, &jd, NULL);
        nj++;
      } else if (tu_uniform(&rng, 0, 1) < 0.3) {
        grit_joint_def jd = grit_default_joint_def();
        jd.type = GRIT_JOINT_BALL;
        jd.damping = 0.2, jd.armature = 0.01;
        grit_builder_add_joint(b, k, &jd, NULL);
        nj++;
      } else {
        tu_add_hinge_or_slide(&rng, b, k, TU_HINGE | TU_SLIDE, &(tu_tree_opts){{0, 0, 0}, 5e-3, 1, 1, 1});
        grit_actuator_def ad = grit_default_actuator_def();
        ad.joint = nj++;
        ad.gear = tu_uniform(&rng, 0.5, 3);
        ad.ctrl_limited = tu_uniform(&rng, 0, 1) < 0.5;
        cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
      }
    }
    grit_model *m;
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_free(b);
    grit_data *d = tu_data(m);
    const int nv = m->nv, nq = m->nq, nu = m->nu;
    const double h = opt.timestep;
    double *q = dalloc(nq), *v = dalloc(nv), *u = dalloc(nu), *M = dalloc(nv * nv), *c = dalloc(nv),
           *rhs = dalloc(nv), *dv = dalloc(nv), *vs = dalloc(nv), *qn = dalloc(nq);
    tu_random_state(&rng, m, q, v, 2.0);
    for (int a = 0; a < nu; ++a) u[a] = tu_uniform(&rng, -3, 3);
    m_and_c(d, q, v, M, c);
    add_momentum_correction(d, h, v, c);
    cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
    /* A = M + h D + h^2 K and the right-hand side, from the model's parameters */
    for (int i = 0; i < nv; ++i) {
      const int j = m->dof_jnt[i], t = m->jnt_type[j];
      const double K = (t == GRIT_JOINT_HINGE || t == GRIT_JOINT_SLIDE) ? m->jnt_stiffness[j] : 0.0;
      M[i * nv + i] += h * m->dof_damping[i] + h * h * K;
      rhs[i] = -c[i] - m->dof_damping[i] * v[i];
      if (K > 0) rhs[i] -= K * (q[m->jnt_qposadr[j]] + h * v[i] - m->jnt_springref[j]);
    }
    for (int a = 0; a < nu; ++a) {
      double ua = u[a];
      if (m->act_limited[a]) ua = fmin(fmax(ua, m->act_range[2 * a]), m->act_range[2 * a + 1]);
      rhs[m->act_dof[a]] += m->act_gear[a] * ua;
    }
    for (int i = 0; i < nv; ++i) rhs[i] *= h;
    tu_solve(M, rhs, dv, nv);
    cr_assert_eq(grit_free_motion_velocity(d, vs), GRIT_OK);
    double scale = fmax(tu_max_abs(v, nv), tu_max_abs(dv, nv));
    for (int i = 0; i < nv; ++i)
      cr_assert(fabs(vs[i] - (v[i] + dv[i])) <= 1e-12 * scale, "trial %d dof %d: v* %.15g, dense %.15g", trial, i,
                vs[i], v[i] + dv[i]);
    /* the step without constraints: v = v*, q = q0 (+) h v* */
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    memcpy(qn, q, sizeof(double) * (size_t)nq);
    grit_integrate_positions(m, qn, vs, h);
    cr_assert(tu_max_abs_diff(grit_data_qvel(d), vs, nv) == 0.0, "step velocity != v*");
    cr_assert(tu_max_abs_diff(grit_data_qpos(d), qn, nq) <= 1e-15 * 4, "step position != q (+) h v*");
    cr_assert_float_eq(grit_data_time(d), h, 1e-18);
    free(q), free(v), free(u), free(M), free(c), free(rhs), free(dv), free(vs), free(qn);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* grit_energy against the independent energies. */
Test(dynamics, energy_matches_independent_computation) {
  tu_rng rng = {20};
  tu_tree_opts o = tu_default_tree_opts();
  o.springs = 1;
  for (int trial = 0; trial < 20; ++trial) {
    grit_model *m = tu_random_tree(&rng, 1 + tu_int(&rng, 8), TU_ALL, &o);
    grit_data *d = tu_data(m);
    tu_set_random_state(&rng, d, 2.0);
    double T, V;
    cr_assert_eq(grit_energy(d, &T, &V), GRIT_OK);
    const double Ti = tu_kinetic(d), Vi = tu_potential(d);
    cr_assert(fabs(T - Ti) <= 1e-12 * Ti, "kinetic %.17g vs %.17g", T, Ti);
    cr_assert(fabs(V - Vi) <= 1e-12 * fmax(1.0, fabs(Vi)), "potential %.17g vs %.17g", V, Vi);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Models without degrees of freedom (the world alone; bodies welded to the world) are valid: the step
 * advances time, the queries succeed with NULL outputs of length 0, and the energy is the potential. */
Test(dynamics, models_without_dofs) {
  for (int nb = 0; nb < 2; ++nb) {
    grit_builder *b;
    grit_builder_create(&b);
    if (nb) {
      grit_body_def bd = grit_default_body_def();
      bd.mass = 2.0;
      bd.com[2] = 1.5;
      cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK);
    }
    grit_model *m;
    cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_builder_free(b);
    cr_assert_eq(grit_model_nv(m), 0);
    cr_assert_eq(grit_model_ntree(m), 0);
    grit_data *d = tu_data(m);
    double T = -1, V = -1;
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_data_time(d), 1e-3);
    cr_assert_eq(grit_mass_matrix(d, NULL), GRIT_OK);
    cr_assert_eq(grit_bias_forces(d, NULL), GRIT_OK);
    cr_assert_eq(grit_free_motion_velocity(d, NULL), GRIT_OK);
    cr_assert_eq(grit_energy(d, &T, &V), GRIT_OK);
    cr_assert_eq(T, 0.0);
    cr_assert_float_eq(V, nb ? 2.0 * 9.81 * 1.5 : 0.0, 1e-12);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* ------------------------------------------------------------------------------ block Cholesky */

/* grit_block_cholesky factors the rows below each pivot in groups of four (their chains of
 * subtractions overlapping); each entry's operations stay in the one-row order, so the factor is the
 * one-row loop's (written out here) to the bit, on random trees' symmetric positive definite blocks. */
Test(dynamics, block_cholesky_in_row_groups_matches_the_one_row_loop_to_the_bit) {
  tu_rng rng = {0xc401u};
  tu_tree_opts o = tu_default_tree_opts();
  for (int trial = 0; trial < 30; ++trial) {
    grit_model *m = tu_random_tree(&rng, 4 + tu_int(&rng, 12), TU_ALL, &o);
    double *A = dalloc(m->nM), *ref = dalloc(m->nM);
    for (int t = 0; t < m->ntree; ++t) { /* B B^T + n I */
      const int n = m->tree_dofnum[t];
      double *B = dalloc(n * n), *At = A + m->tree_madr[t];
      for (int i = 0; i < n * n; ++i) B[i] = tu_uniform(&rng, -1.0, 1.0);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double s = i == j ? n : 0.0;
          for (int k = 0; k < n; ++k) s += B[i * n + k] * B[j * n + k];
          At[i * n + j] = s;
        }
      free(B);
    }
    memcpy(ref, A, sizeof(double) * (size_t)m->nM);
    for (int t = 0; t < m->ntree; ++t) {
      const int n = m->tree_dofnum[t];
      double *L = ref + m->tree_madr[t];
      for (int j = 0; j < n; ++j) {
        double d = L[j * n + j];
        for (int k = 0; k < j; ++k) d = d - L[j * n + k] * L[j * n + k];
        d = sqrt(d);
        L[j * n + j] = d;
        for (int i = j + 1; i < n; ++i) {
          double s = L[i * n + j];
          for (int k = 0; k < j; ++k) s = s - L[i * n + k] * L[j * n + k];
          L[i * n + j] = s / d;
        }
      }
    }
    cr_assert_eq(grit_block_cholesky(m, A, NULL), -1);
    cr_assert(memcmp(A, ref, sizeof(double) * (size_t)m->nM) == 0, "trial %d: the factors differ", trial);
    free(A), free(ref);
    grit_model_free(m);
  }
}

/* grit_tree_mulv sums four rows at a time in double; each entry from zero over j in order, so the
 * product is the one-row loop's to the bit. */
Test(dynamics, tree_mulv_in_row_groups_matches_the_one_row_loop_to_the_bit) {
  tu_rng rng = {0x3a1fu};
  tu_tree_opts o = tu_default_tree_opts();
  for (int trial = 0; trial < 30; ++trial) {
    grit_model *m = tu_random_tree(&rng, 4 + tu_int(&rng, 12), TU_ALL, &o);
    double *M = dalloc(m->nM), *x = dalloc(m->nv), *y = dalloc(m->nv), *ref = dalloc(m->nv);
    for (int i = 0; i < m->nM; ++i) M[i] = tu_uniform(&rng, -1.0, 1.0);
    for (int i = 0; i < m->nv; ++i) x[i] = tu_uniform(&rng, -1.0, 1.0);
    for (int t = 0; t < m->ntree; ++t) {
      const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
      for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int j = 0; j < n; ++j) s = M[m->tree_madr[t] + i * n + j] * x[adr + j] + s;
        ref[adr + i] = s;
      }
    }
    grit_block_mulv(m, M, x, y);
    cr_assert(memcmp(y, ref, sizeof(double) * (size_t)m->nv) == 0, "trial %d: the products differ", trial);
    free(M), free(x), free(y), free(ref);
    grit_model_free(m);
  }
}
