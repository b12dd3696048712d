/* SPDX-License-Identifier: Apache-2.0 */
/* lqr.c — stationary and time-varying discrete LQR (grit_ilqr/lqr.h) on the shared Riccati knot. */
#include "grit_ilqr/lqr.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "message.h"
#include "riccati.h"

grit_ilqr_lqr_options grit_ilqr_lqr_default_options(void) {
  grit_ilqr_lqr_options o;
  o.max_iterations = 200000;
  o.tol = 1e-11;
  return o;
}

static double max_abs(int len, const double *a) {
  double s = 0;
  for (int i = 0; i < len; ++i) s = fmax(s, fabs(a[i]));
  return s;
}

static int all_finite(int len, const double *a) {
  for (int i = 0; i < len; ++i)
    if (!isfinite(a[i])) return 0;
  return 1;
}

/* A symmetric matrix, within round-off of its largest entry (weights are often assembled as sums). */
static int symmetric(int n, const double *S) {
  const double tol = 1e-12 * max_abs(n * n, S);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (fabs(S[i * n + j] - S[j * n + i]) > tol) return 0;
  return 1;
}

/* Checks a state weight: finite, symmetric, positive semidefinite (its smallest eigenvalue, by
 * LAPACK's dsyev, no lower than round-off below zero). `work` holds n * n + n doubles. */
static grit_status check_state_weight(int n, const double *S, const char *name, double *work, char *msg) {
  if (!S) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: %s is NULL", name);
  if (!all_finite(n * n, S)) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: %s is not finite", name);
  if (!symmetric(n, S)) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: %s is not symmetric", name);
  double *E = work, *w = work + n * n;
  memcpy(E, S, sizeof(double) * (size_t)(n * n));
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, E, n, w) != 0)
    return grit_ilqr_fail(msg, GRIT_ERR_NUMERICAL, "lqr: the eigenvalues of %s did not converge", name);
  /* w is ascending; an eigenvalue of a PSD matrix computed in double is exact to ~n eps max|S|. */
  if (w[0] < -1e-12 * fmax(max_abs(n * n, S), DBL_MIN) * n)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: %s is not positive semidefinite (eigenvalue %.3g)", name, w[0]);
  return GRIT_OK;
}

/* Checks the common inputs of both designs; `work` holds n * n + n + m * m doubles. */
static grit_status check_inputs(int n, int m, const double *Q, const double *R, const double *N, double *work,
                                char *msg) {
  grit_status s = check_state_weight(n, Q, "Q", work, msg);
  if (s != GRIT_OK) return s;
  if (!R) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: R is NULL");
  if (!all_finite(m * m, R) || (N && !all_finite(m * n, N)))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: R or N is not finite");
  if (!symmetric(m, R)) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: R is not symmetric");
  /* R > 0 keeps R + B'PB invertible whatever P >= 0 is: the recursion never divides by zero. */
  double *L = work;
  memcpy(L, R, sizeof(double) * (size_t)(m * m));
  if (grit_ilqr_chol(m, L)) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: R is not positive definite");
  return GRIT_OK;
}

static grit_status check_sizes(int n, int m, const double *K, char *msg) {
  if (n < 1 || m < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: sizes n = %d, m = %d must be >= 1", n, m);
  if (!K) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: the gain output K is NULL");
  return GRIT_OK;
}

/* One allocation for a design's buffers (all zero). */
static double *zeros(size_t count) { return calloc(count ? count : 1, sizeof(double)); }

grit_status grit_ilqr_lqr_stationary(int n, int m, const double *A, const double *B, const double *Q,
                                     const double *R, const double *N, const grit_ilqr_lqr_options *options,
                                     double *K, double *P, grit_ilqr_lqr_info *info, char *msg) {
  if (msg) msg[0] = 0;
  grit_status s = check_sizes(n, m, K, msg);
  if (s != GRIT_OK) return s;
  if (!A || !B) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: A or B is NULL");
  if (!all_finite(n * n, A) || !all_finite(n * m, B))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: A or B is not finite");
  const grit_ilqr_lqr_options o = options ? *options : grit_ilqr_lqr_default_options();
  if (o.max_iterations < 1 || !(o.tol > 0))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: max_iterations %d must be >= 1 and tol %g > 0",
                o.max_iterations, o.tol);

  const size_t nn = (size_t)n * (size_t)n;
  /* Pa, Pb: the value matrix now and next (swapped each iteration); Vx1 the zero gradient of a
   * regulator (no linear terms); kff the zero feedforward; Vx its (zero) image; work for the knot and
   * for the input checks. */
  const size_t nwork = (size_t)GRIT_ILQR_RICCATI_WORK(n, m) + nn + (size_t)n + (size_t)(m * m);
  double *buf = zeros(2 * nn + 2 * (size_t)n + (size_t)m + nwork);
  if (!buf) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "lqr: out of memory for n = %d, m = %d", n, m);
  double *Pa = buf, *Pb = Pa + nn, *Vx1 = Pb + nn, *Vx = Vx1 + n, *kff = Vx + n, *work = kff + m;

  s = check_inputs(n, m, Q, R, N, work, msg);
  int it = 0;
  double change = INFINITY;
  if (s == GRIT_OK) {
    memcpy(Pa, Q, sizeof(double) * nn);
    /* Each iteration is one knot of a backward pass whose next knot has the value P_i: its output is
     * P_{i+1}, and its gain K is the optimal first control of an (i+1)-step horizon. */
    for (it = 1; it <= o.max_iterations; ++it) {
      double dV[2];
      int nclamped = 0;
      if (grit_ilqr_riccati_knot(n, m, A, B, NULL, NULL, Q, R, N, Vx1, Pa, 0.0, NULL, NULL, kff, K, Vx, Pb, dV,
                                 &nclamped, work)) {
        s = grit_ilqr_fail(msg, GRIT_ERR_NUMERICAL, "lqr: R + B'PB is not positive definite at iteration %d", it);
        break;
      }
      if (!all_finite((int)nn, Pb)) {
        s = grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE,
                 "lqr: the value matrix overflowed at iteration %d: a mode that Q weighs is not stabilizable "
                 "by B",
                 it);
        break;
      }
      double diff = 0;
      for (size_t i = 0; i < nn; ++i) diff = fmax(diff, fabs(Pb[i] - Pa[i]));
      const double scale = max_abs((int)nn, Pb);
      change = scale > 0 ? diff / scale : 0.0; /* P = 0 (Q = 0, nothing weighed): converged at once */
      double *t = Pa;
      Pa = Pb;
      Pb = t;
      if (change <= o.tol) break;
    }
    if (s == GRIT_OK && it > o.max_iterations) {
      it = o.max_iterations;
      s = grit_ilqr_fail(msg, GRIT_ERR_NOT_CONVERGED,
               "lqr: the Riccati iteration did not converge in %d iterations (relative change %.3g > tol %.3g): "
               "a mode on the unit circle that Q weighs may not be controllable by B, or the slowest closed-loop "
               "mode needs more iterations",
               o.max_iterations, change, o.tol);
    }
    if (P && (s == GRIT_OK || s == GRIT_ERR_NOT_CONVERGED)) memcpy(P, Pa, sizeof(double) * nn);
  }
  if (info) {
    info->iterations = it;
    info->change = change;
  }
  free(buf);
  return s;
}

grit_status grit_ilqr_lqr_time_varying(int n, int m, int horizon, const double *A, const double *B,
                                       const double *Q, const double *R, const double *N, const double *Qf,
                                       double *K, double *P, char *msg) {
  if (msg) msg[0] = 0;
  grit_status s = check_sizes(n, m, K, msg);
  if (s != GRIT_OK) return s;
  if (horizon < 1) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: horizon %d must be >= 1", horizon);
  if (!A || !B) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: A or B is NULL");
  const size_t nn = (size_t)n * (size_t)n, nm = (size_t)n * (size_t)m;
  if (!all_finite((int)(nn * (size_t)horizon), A) || !all_finite((int)(nm * (size_t)horizon), B))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: A or B is not finite");

  const size_t nwork = (size_t)GRIT_ILQR_RICCATI_WORK(n, m) + nn + (size_t)n + (size_t)(m * m);
  double *buf = zeros(2 * nn + 2 * (size_t)n + (size_t)m + nwork);
  if (!buf) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "lqr: out of memory for n = %d, m = %d", n, m);
  double *Pa = buf, *Pb = Pa + nn, *Vx1 = Pb + nn, *Vx = Vx1 + n, *kff = Vx + n, *work = kff + m;

  s = check_inputs(n, m, Q, R, N, work, msg);
  if (s == GRIT_OK) s = check_state_weight(n, Qf, "Qf", work, msg);
  if (s == GRIT_OK) {
    memcpy(Pa, Qf, sizeof(double) * nn);
    if (P) memcpy(P + (size_t)horizon * nn, Qf, sizeof(double) * nn);
    for (int k = horizon - 1; k >= 0; --k) {
      double dV[2];
      int nclamped = 0;
      if (grit_ilqr_riccati_knot(n, m, A + (size_t)k * nn, B + (size_t)k * nm, NULL, NULL, Q, R, N, Vx1, Pa, 0.0,
                                 NULL, NULL, kff, K + (size_t)k * nm, Vx, Pb, dV, &nclamped, work)) {
        s = grit_ilqr_fail(msg, GRIT_ERR_NUMERICAL, "lqr: R + B'PB is not positive definite at knot %d", k);
        break;
      }
      if (!all_finite((int)nn, Pb)) {
        s = grit_ilqr_fail(msg, GRIT_ERR_NOT_FINITE, "lqr: the value matrix overflowed at knot %d", k);
        break;
      }
      if (P) memcpy(P + (size_t)k * nn, Pb, sizeof(double) * nn);
      double *t = Pa;
      Pa = Pb;
      Pb = t;
    }
  }
  free(buf);
  return s;
}

grit_status grit_ilqr_lqr_closed_loop_radius(int n, int m, const double *A, const double *B, const double *K,
                                             double *radius, char *msg) {
  if (msg) msg[0] = 0;
  if (n < 1 || !A || !radius || (!B != !K) || (B && m < 1))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: closed-loop radius needs n >= 1, A, radius, and B with K");
  const size_t nn = (size_t)n * (size_t)n;
  double *M = zeros(nn + 2 * (size_t)n);
  if (!M) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "lqr: out of memory for n = %d", n);
  double *wr = M + nn, *wi = wr + n;
  memcpy(M, A, sizeof(double) * nn);
  if (B)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int c = 0; c < m; ++c) s += B[i * m + c] * K[c * n + j];
        M[i * n + j] += s;
      }
  grit_status s = GRIT_OK;
  if (!all_finite((int)nn, M)) {
    s = grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: A + B K is not finite");
  } else if (LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, M, n, wr, wi, NULL, 1, NULL, 1) != 0) {
    s = grit_ilqr_fail(msg, GRIT_ERR_NUMERICAL, "lqr: the eigenvalues of A + B K did not converge");
  } else {
    double r = 0;
    for (int i = 0; i < n; ++i) r = fmax(r, hypot(wr[i], wi[i]));
    *radius = r;
  }
  free(M);
  return s;
}

grit_status grit_ilqr_lqr_linearize_trajectory(grit_data *data, int horizon, const double *xs, const double *us,
                                               double *A, double *B, char *msg) {
  if (msg) msg[0] = 0;
  if (!data || horizon < 1 || !xs || !A)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: linearize_trajectory needs data, horizon >= 1, xs and A");
  const grit_model *model = grit_data_model(data);
  const int nq = grit_model_nq(model), nv = grit_model_nv(model), nu = grit_model_nu(model);
  if (nu > 0 && (!us || !B))
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "lqr: linearize_trajectory needs us and B (nu = %d)", nu);
  const int na = grit_model_na(model); /* activations: x = (q, v, act), n = 2 nv + na */
  const size_t n = 2 * (size_t)nv + (size_t)na;
  for (int k = 0; k < horizon; ++k) {
    const double *uk = nu > 0 ? us + (size_t)k * (size_t)nu : NULL;
    double *Bk = nu > 0 ? B + (size_t)k * n * (size_t)nu : NULL;
    grit_status s = grit_linearize(data, xs + (size_t)k * (size_t)(nq + nv + na), uk, A + (size_t)k * n * n, Bk);
    if (s != GRIT_OK) return grit_ilqr_fail(msg, s, "lqr: knot %d: %s", k, grit_data_last_error(data));
  }
  return GRIT_OK;
}
