/* SPDX-License-Identifier: Apache-2.0 */
/* fd_jacobians.h — central-difference Jacobians of one step for models whose coordinates are their
 * velocities' (hinge and slide joints: nq = nv), state x = (q, v, act); shared by the actuation tests. */
#ifndef GRIT_TESTS_FD_JACOBIANS_H
#define GRIT_TESTS_FD_JACOBIANS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"

/* One step from state x and controls u; the next state into xn. */
static inline void fdj_step_from(grit_data *d, const double *x, const double *u, double *xn) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), na = grit_model_na(m), nu = grit_model_nu(m);
  cr_assert_eq(grit_data_set_qpos(d, x, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, x + nq, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_act(d, x + 2 * nq, na), GRIT_OK);
  cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  memcpy(xn, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(xn + nq, grit_data_qvel(d), sizeof(double) * (size_t)nq);
  memcpy(xn + 2 * nq, grit_data_act(d), sizeof(double) * (size_t)na);
}

/* max |X - Y| / max |Y| over an n-entry matrix */
static inline double fdj_rel_err(const double *X, const double *Y, int n) {
  double e = 0, s = 0;
  for (int i = 0; i < n; ++i) {
    e = fmax(e, fabs(X[i] - Y[i]));
    s = fmax(s, fabs(Y[i]));
  }
  return e / s;
}

/* Afd (nx x nx) and Bfd (nx x nu), row-major, by central differences of step eps in each entry of x
 * and of u (nx = 2 nq + na). */
static inline void fdj_central(grit_data *d, const double *x, const double *u, double eps, double *Afd, double *Bfd) {
  const grit_model *m = grit_data_model(d);
  const int nx = 2 * grit_model_nq(m) + grit_model_na(m), nu = grit_model_nu(m);
  double *xj = malloc(sizeof(double) * (size_t)(3 * nx + nu)), *xp = xj + nx, *xm = xp + nx, *uj = xm + nx;
  cr_assert(xj);
  for (int j = 0; j < nx; ++j) {
    memcpy(xj, x, sizeof(double) * (size_t)nx);
    xj[j] = x[j] + eps;
    fdj_step_from(d, xj, u, xp);
    xj[j] = x[j] - eps;
    fdj_step_from(d, xj, u, xm);
    for (int i = 0; i < nx; ++i) Afd[i * nx + j] = (xp[i] - xm[i]) / (2 * eps);
  }
  for (int j = 0; j < nu; ++j) {
    memcpy(uj, u, sizeof(double) * (size_t)nu);
    uj[j] = u[j] + eps;
    fdj_step_from(d, x, uj, xp);
    uj[j] = u[j] - eps;
    fdj_step_from(d, x, uj, xm);
    for (int i = 0; i < nx; ++i) Bfd[i * nu + j] = (xp[i] - xm[i]) / (2 * eps);
  }
  free(xj);
}

#endif
