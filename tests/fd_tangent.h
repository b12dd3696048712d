/* SPDX-License-Identifier: Apache-2.0 */
/* fd_tangent.h — the step's A and B against central differences in the state's tangent space (free and
 * ball joints: positions perturbed by q (+) e on the manifold, the result compared by difference with
 * the nominal next positions); for the adhesion, pulley and articulated-derivative tests. State x =
 * (dq, v, act). */
#ifndef GRIT_TESTS_FD_TANGENT_H
#define GRIT_TESTS_FD_TANGENT_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"

/* One step from (q, v, act, u); out = (diff(qref, q+), v+, act+). */
static inline void fdt_step(grit_data *d, const double *q, const double *v, const double *act, const double *u,
                            const double *qref, double *out) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), na = grit_model_na(m), nu = grit_model_nu(m);
  cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  if (na) cr_assert_eq(grit_data_set_act(d, act, na), GRIT_OK);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_position_difference(m, qref, grit_data_qpos(d), out);
  memcpy(out + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  if (na) memcpy(out + 2 * nv, grit_data_act(d), sizeof(double) * (size_t)na);
}

/* A and B of one step from the data's state and controls against central differences of step eps (scaled
 * by max(1, |x_j|) for velocities and controls); returns the worst relative error max |an - fd| / max |fd|
 * over A and B together. The data is left at the nominal step's end. */
static inline double fdt_check(grit_data *d, double eps) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), na = grit_model_na(m), nu = grit_model_nu(m);
  const int nx = 2 * nv + na;
  double *buf = calloc((size_t)(3 * nq + nv + na + nu + nx * nx + nx * (nu + 1) + 3 * nx + nv + nu + 1), sizeof(double));
  cr_assert(buf);
  double *q0 = buf, *qref = q0 + nq, *qp = qref + nq, *v0 = qp + nq, *a0 = v0 + nv, *u0 = a0 + na;
  double *A = u0 + nu, *B = A + nx * nx, *xp = B + nx * (nu + 1), *xm = xp + nx, *x0 = xm + nx, *e = x0 + nx;
  double *up = e + nv;
  memcpy(q0, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  if (na) memcpy(a0, grit_data_act(d), sizeof(double) * (size_t)na);
  if (nu) memcpy(u0, grit_data_ctrl(d), sizeof(double) * (size_t)nu);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  memcpy(qref, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  cr_assert_eq(grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  double err = 0, scale = 0;
  for (int col = 0; col < nx + nu; ++col) {
    double h = eps;
    for (int s = -1; s <= 1; s += 2) {
      memcpy(qp, q0, sizeof(double) * (size_t)nq);
      double *vp = x0, *ap = x0 + nv; /* x0 as scratch for (v, act) */
      memcpy(vp, v0, sizeof(double) * (size_t)nv);
      if (na) memcpy(ap, a0, sizeof(double) * (size_t)na);
      if (nu) memcpy(up, u0, sizeof(double) * (size_t)nu);
      if (col < nv) {
        memset(e, 0, sizeof(double) * (size_t)nv);
        e[col] = s * h;
        grit_integrate_positions(m, qp, e, 1.0);
      } else if (col < 2 * nv) {
        h = eps * fmax(1.0, fabs(v0[col - nv]));
        vp[col - nv] += s * h;
      } else if (col < nx) {
        h = eps * fmax(1.0, fabs(a0[col - 2 * nv]));
        ap[col - 2 * nv] += s * h;
      } else {
        h = eps * fmax(1.0, fabs(u0[col - nx]));
        up[col - nx] += s * h;
      }
      fdt_step(d, qp, vp, ap, up, qref, s > 0 ? xp : xm);
    }
    for (int i = 0; i < nx; ++i) {
      const double fd = (xp[i] - xm[i]) / (2 * h), an = col < nx ? A[i * nx + col] : B[i * nu + col - nx];
      err = fmax(err, fabs(an - fd));
      scale = fmax(scale, fabs(fd));
    }
  }
  /* back to the nominal step's end */
  fdt_step(d, q0, v0, a0, u0, qref, xp);
  free(buf);
  return err / scale;
}

/* A's columns of d's next step against central differences of step h in the tangent space: the position
 * columns (the first nv), and with velocities nonzero the velocity columns too (all 2 nv); the perturbed
 * steps taken by d2 (the same model prepared with the same history: the same warm start). Returns the
 * relative Frobenius error of that block and |FD| in *fd_norm. d is left at the nominal step's end, after
 * its derivative call. */
static inline double fdt_state_columns(grit_data *d, grit_data *d2, double h, int velocities, double *fd_norm) {
  const grit_model *m = grit_data_model(d), *m2 = grit_data_model(d2);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nx = 2 * nv;
  double *q0 = malloc(sizeof(double) * nq), *v0 = malloc(sizeof(double) * nv), *qref = malloc(sizeof(double) * nq);
  memcpy(q0, grit_data_qpos(d), sizeof(double) * nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * nv);
  cr_assert_eq(grit_step(d), GRIT_OK);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  double *A = calloc((size_t)nx * nx, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  double *qp = malloc(sizeof(double) * nq), *vp = malloc(sizeof(double) * nv), *e = malloc(sizeof(double) * nv), *x[2];
  x[0] = malloc(sizeof(double) * nx), x[1] = malloc(sizeof(double) * nx);
  double num = 0.0, den = 0.0;
  for (int col = 0; col < (velocities ? nx : nv); ++col)
    for (int sgn = 0; sgn < 2; ++sgn) {
      memcpy(qp, q0, sizeof(double) * nq);
      memcpy(vp, v0, sizeof(double) * nv);
      for (int i = 0; i < nv; ++i) e[i] = i == col ? (sgn ? h : -h) : 0.0;
      if (col < nv) grit_integrate_positions(m2, qp, e, 1.0);
      else vp[col - nv] += sgn ? h : -h;
      cr_assert_eq(grit_data_set_qpos(d2, qp, nq), GRIT_OK);
      cr_assert_eq(grit_data_set_qvel(d2, vp, nv), GRIT_OK);
      cr_assert_eq(grit_step(d2), GRIT_OK);
      grit_position_difference(m2, qref, grit_data_qpos(d2), x[sgn]);
      memcpy(x[sgn] + nv, grit_data_qvel(d2), sizeof(double) * nv);
      if (!sgn) continue;
      for (int i = 0; i < nx; ++i) {
        const double fd = (x[1][i] - x[0][i]) / (2 * h);
        num += (A[i * nx + col] - fd) * (A[i * nx + col] - fd);
        den += fd * fd;
      }
    }
  free(q0), free(v0), free(qref), free(A), free(qp), free(vp), free(e), free(x[0]), free(x[1]);
  *fd_norm = sqrt(den);
  return sqrt(num) / sqrt(den);
}

/* The position columns alone (fdt_state_columns). */
static inline double fdt_position_columns(grit_data *d, grit_data *d2, double h, double *fd_norm) {
  return fdt_state_columns(d, d2, h, 0, fd_norm);
}

#endif
