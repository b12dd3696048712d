/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_free.c — the free bodies' closed forms (derivatives_free.c): the velocity partials
 * and SAP's Delassus estimates without J_c. A against the dual paths they replace (every contact model,
 * the momentum correction on and off, both branches of its exponential map, joint damping), and A's
 * velocity columns against central differences of the step for a body spinning fast in flight (the
 * Delassus estimates' partials: test_derivatives' scenes of free bodies, SAP, against central
 * differences). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "xml_load_util.h"

/* A box resting on the floor, a box spinning on it, and a box tumbling in flight fast enough that
 * |h w~| takes the exponential map's closed branch (|h w| > 1e-2); general inertias (off-diagonal
 * entries), damping on one free joint; every centre of mass at its body origin (qconst). */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='2 2 0.1'/>"
    "<body pos='0 0 0.0499'><freejoint/><geom type='box' size='0.05 0.04 0.05'/>"
    "<inertial pos='0 0 0' mass='1.2' fullinertia='0.003 0.002 0.0025 0.0003 -0.0002 0.0001'/></body>"
    "<body pos='0.3 0 0.0499'><joint type='free' damping='0.05'/><geom type='box' size='0.05 0.05 0.05'/>"
    "<inertial pos='0 0 0' mass='0.8' fullinertia='0.002 0.0015 0.001 -0.0002 0.0001 0.00005'/></body>"
    "<body pos='0 0.5 1'><freejoint/><geom type='box' size='0.1 0.05 0.02'/>"
    "<inertial pos='0 0 0' mass='2' fullinertia='0.02 0.03 0.04 0.001 0.002 -0.003'/></body>"
    "</worldbody></mujoco>";

static grit_model *load(void) {
  grit_model *m = xml_load_or_fail(XML);
  return m;
}

static const double V0[18] = {0.01, 0, 0, 0.3, -0.2, 0.1,        /* resting, slowly turning */
                              0.1, 0.05, 0, 1.0, -2.0, 12.0,     /* spinning on the floor */
                              0.4, -0.3, 1.0, 25.0, -40.0, 15.0}; /* tumbling in flight */

static grit_data *prepare(const grit_model *m, grit_contact_model model) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, V0, 18), GRIT_OK);
  for (int i = 0; i < 3; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* The closed form and the dual pass compute the same matrix in different orders of operations (the
 * dual pass through world-origin twists, where terms like m v x w cancel to round-off): a few ulps of
 * each column's largest entry; 1e-12 leaves room for the solve. */
Test(derivatives_free, closed_form_matches_the_dual_pass) {
  const grit_contact_model models[3] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR, GRIT_CONTACT_SAP};
  for (int gyro = 0; gyro < 2; ++gyro)
    for (int k = 0; k < 3; ++k) {
      grit_model *m = load();
      m->opt.explicit_gyroscopic = gyro;
      grit_data *d = prepare(m, models[k]);
      const int nx = 2 * m->nv;
      double *A1 = malloc(sizeof(double) * (size_t)(nx * nx)), *A2 = malloc(sizeof(double) * (size_t)(nx * nx));
      cr_assert_eq(grit_step_derivatives(d, A1, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
      for (int t = 0; t < m->ntree; ++t)
        cr_assert(grit_deriv_free_velocity_closed(m, d->deriv, t), "tree %d is a free body: closed form", t);
      d->deriv->no_free_closed = 1;
      cr_assert_eq(grit_step_derivatives(d, A2, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
      double worst = 0.0;
      for (int j = 0; j < nx; ++j) {
        double cmax = 0.0, dmax = 0.0;
        for (int i = 0; i < nx; ++i) {
          cmax = fmax(cmax, fabs(A2[i * nx + j]));
          dmax = fmax(dmax, fabs(A1[i * nx + j] - A2[i * nx + j]));
        }
        if (j < m->nv && models[k] != GRIT_CONTACT_SAP) /* SAP's Delassus estimates (grit_free_side_delassus) */
          cr_assert(dmax == 0.0, "model %d: position column %d unchanged", k, j);
        worst = fmax(worst, dmax / fmax(cmax, 1e-300));
      }
      cr_log_info("model %d explicit_gyroscopic %d: %.3e", k, gyro, worst);
      cr_assert(worst <= 1e-12, "model %d explicit_gyroscopic %d: %.3e of a column's largest entry", k, gyro, worst);
      free(A1), free(A2);
      grit_data_free(d);
      grit_model_free(m);
    }
}

/* x+ = (q+ relative to qref in the tangent space, v+) after one step from (q, v). */
static void step_from(const grit_model *m, const double *q, const double *v, const double *qref, double *out) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = 1e-12;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, m->nv), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK);
  grit_position_difference(m, qref, grit_data_qpos(d), out);
  memcpy(out + m->nv, grit_data_qvel(d), sizeof(double) * (size_t)m->nv);
  grit_data_free(d);
}

/* The body in flight (no contact; its rows of the step are linear in v+, solved exactly): d x+ / d v0 by central differences with a step of 1e-6, whose
 * truncation error (~1e-12 of the velocities' second derivatives, which are O(1) here) and round-off
 * (~1e-16 / 1e-6 of |x+| ~ 40) stay below 1e-8 of the columns' entries, which are O(1). */
Test(derivatives_free, velocity_columns_match_central_differences) {
  for (int gyro = 0; gyro < 2; ++gyro) {
    grit_model *m = load();
    m->opt.explicit_gyroscopic = gyro;
    const int nv = m->nv, nx = 2 * nv;
    grit_data *d;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_step_settings s = grit_default_step_settings();
    s.rel_tol = 1e-12;
    cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(d, V0, 18), GRIT_OK);
    double q0[21], v0[18], qref[21];
    memcpy(q0, grit_data_qpos(d), sizeof q0);
    memcpy(v0, V0, sizeof v0);
    cr_assert_eq(grit_step(d), GRIT_OK);
    memcpy(qref, grit_data_qpos(d), sizeof qref);
    double *A = malloc(sizeof(double) * (size_t)(nx * nx));
    cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK);
    const double eps = 1e-6;
    for (int j = 12; j < 18; ++j) { /* the tumbling body's dofs */
      double vp[18], vm[18], xp[36], xm[36];
      memcpy(vp, v0, sizeof vp);
      memcpy(vm, v0, sizeof vm);
      vp[j] += eps;
      vm[j] -= eps;
      step_from(m, q0, vp, qref, xp);
      step_from(m, q0, vm, qref, xm);
      for (int r = 0; r < 12; ++r) { /* its rows: dq+ then v+ */
        const int i = r < 6 ? 12 + r : nv + 6 + r;
        const double fd = (xp[i] - xm[i]) / (2.0 * eps), an = A[i * nx + nv + j];
        cr_assert(fabs(fd - an) <= 1e-7 * (1.0 + fabs(fd)), "explicit %d: row %d col v%d: %.10g vs fd %.10g", gyro,
                  i, j, an, fd);
      }
    }
    free(A);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* grit_deriv_free_inverses' forward solves start at the unit vector's row: the same bits as the sums over
 * every row (the old loops, written here), on random factors with a positive diagonal and entries of both
 * signs, zeros of both signs among them. */
Test(derivatives_free, inverses_skip_the_unit_vectors_zeros_same_bits) {
  grit_model *m = load();
  grit_data *d = prepare(m, GRIT_CONTACT_SAP);
  const int nx = 2 * m->nv;
  double *A = malloc(sizeof(double) * (size_t)(nx * nx));
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  free(A);
  grit_deriv_ws *w = d->deriv;
  srand(29);
  for (int trial = 0; trial < 200; ++trial) {
    for (int t = 0; t < m->ntree; ++t) {
      cr_assert(w->qconst[t], "tree %d: a free body at its centre of mass", t);
      double *L = w->Ad + m->tree_madr[t];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const double r = (double)rand() / RAND_MAX - 0.5;
          L[6 * i + j] = j > i ? 0.0 : j == i ? 0.1 + 2.0 * fabs(r) : rand() % 7 == 0 ? (rand() % 2 ? 0.0 : -0.0) : r;
        }
    }
    grit_deriv_free_inverses(m, w);
    for (int t = 0; t < m->ntree; ++t) {
      const double *L = w->Ad + m->tree_madr[t];
      double G[36];
      for (int c = 0; c < 6; ++c) { /* the old loops */
        double x[6];
        for (int i = 0; i < 6; ++i) {
          double s = i == c ? 1.0 : 0.0;
          for (int q = 0; q < i; ++q) s -= L[6 * i + q] * x[q];
          x[i] = s / L[6 * i + i];
        }
        for (int i = 5; i >= 0; --i) {
          double s = x[i];
          for (int q = i + 1; q < 6; ++q) s -= L[6 * q + i] * x[q];
          x[i] = s / L[6 * i + i];
        }
        for (int i = 0; i < 6; ++i) G[6 * i + c] = x[i];
      }
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < i; ++j) G[6 * i + j] = G[6 * j + i] = 0.5 * (G[6 * i + j] + G[6 * j + i]);
      cr_assert(!memcmp(G, w->Ainv + m->tree_madr[t], sizeof G), "trial %d tree %d: the same bits", trial, t);
    }
  }
  grit_data_free(d);
  grit_model_free(m);
}
