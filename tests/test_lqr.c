/* SPDX-License-Identifier: Apache-2.0 */
/* test_lqr.c — LQR from dynamics Jacobians (grit_ilqr/lqr.h, grit/linearize.h):
 *
 * - the stationary design against independent solutions of the discrete algebraic Riccati equation:
 *   the scalar closed form, the stable invariant subspace of the symplectic matrix (LAPACK dgeev, a
 *   method that shares nothing with the iteration), and the residual of the equation written out;
 *   the cross term N against the equivalent problem without it;
 * - the statuses of problems that have no stabilizing solution, and bad input;
 * - the time-varying design against a direct solve of the finite-horizon quadratic program, and its
 *   limit for a long horizon (the stationary gain);
 * - grit_linearize: the Jacobians and state of grit_step + grit_step_derivatives, and nothing half
 *   done when it fails;
 * - the examples' closed loops on grit: the eigenvalues of A + B K from grit's Jacobians inside the
 *   unit circle (dgeev here, not the library's helper), and the same gains stabilizing the nonlinear
 *   simulation: the cart-pole ends upright within 1 degree, the ball ends within 5 mm of the plate's
 *   centre after 3 s. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit_ilqr/lqr.h"
#include "lqr_systems.h"

/* After grit's headers: <complex.h> (which lapacke.h includes too) defines the macro I, the name of a
 * member of grit's spatial inertia. This file writes _Complex_I. */
#include <complex.h>
#include <lapacke.h>
#undef I

#define TEST_PI 3.14159265358979323846

/* Deterministic pseudo-random numbers in [-1, 1]. */
static double rnd(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return 2.0 * ((*state >> 8) / 16777216.0) - 1.0;
}

static double max_abs(int len, const double *a) {
  double s = 0;
  for (int i = 0; i < len; ++i) s = fmax(s, fabs(a[i]));
  return s;
}

static double max_diff(int len, const double *a, const double *b) {
  double s = 0;
  for (int i = 0; i < len; ++i) s = fmax(s, fabs(a[i] - b[i]));
  return s;
}

/* C = A B (m x k times k x n). */
static void mul(int m, int k, int n, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
}

static void transpose(int m, int n, const double *A, double *At) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) At[j * m + i] = A[i * n + j];
}

/* The spectral radius of A + B K by LAPACK's dgeev, written here independently of the library. */
static double radius_of(int n, int m, const double *A, const double *B, const double *K) {
  double M[32 * 32], wr[32], wi[32];
  cr_assert_leq(n, 32);
  memcpy(M, A, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int c = 0; c < m; ++c) M[i * n + j] += B[i * m + c] * K[c * n + j];
  cr_assert_eq(LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', n, M, n, wr, wi, NULL, 1, NULL, 1), 0);
  double r = 0;
  for (int i = 0; i < n; ++i) r = fmax(r, hypot(wr[i], wi[i]));
  return r;
}

/* The residual of the discrete algebraic Riccati equation at P, relative to max|P|:
 * Q + A'PA - (A'PB + N')(R + B'PB)^-1 (B'PA + N) - P, with the inverse by LAPACK's dgesv. */
static double dare_residual(int n, int m, const double *A, const double *B, const double *Q, const double *R,
                            const double *N, const double *P) {
  double At[64], PA[64], PB[64], ApA[64], S[16], T[64], X[64], res[64];
  cr_assert_leq(n, 8);
  transpose(n, n, A, At);
  mul(n, n, n, P, A, PA);
  mul(n, n, m, P, B, PB);
  mul(n, n, n, At, PA, ApA);
  double Bt[64];
  transpose(n, m, B, Bt);
  mul(m, n, m, Bt, PB, S); /* B'PB */
  for (int i = 0; i < m * m; ++i) S[i] += R[i];
  mul(m, n, n, Bt, PA, T); /* B'PA + N */
  if (N)
    for (int i = 0; i < m * n; ++i) T[i] += N[i];
  memcpy(X, T, sizeof(double) * (size_t)(m * n));
  lapack_int ipiv[8];
  cr_assert_eq(LAPACKE_dgesv(LAPACK_ROW_MAJOR, m, n, S, m, ipiv, X, n), 0); /* X = S^-1 T */
  double Tt[64], TtX[64];
  transpose(m, n, T, Tt);
  mul(n, m, n, Tt, X, TtX);
  for (int i = 0; i < n * n; ++i) res[i] = Q[i] + ApA[i] - TtX[i] - P[i];
  return max_abs(n * n, res) / max_abs(n * n, P);
}

/* ------------------------------------------------------------------ the stationary design */

/* Scalar: p solves b^2 p^2 + (r - q b^2 - a^2 r) p - q r = 0 (the positive root), K = -a b p / (r + b^2 p).
 * The iteration stops when one more step changes P by 1e-11 relative (tol); its error is then below
 * tol / (1 - rho^2) with rho the closed loop's factor (0.6 here and below), so 1e-10 is a safe bound. */
Test(lqr_stationary, scalar_matches_the_closed_form) {
  const double cases[][4] = {{1.2, 0.5, 2.0, 0.3}, {0.5, 1.0, 1.0, 1.0}, {-2.0, 0.1, 0.5, 0.01}, {1.0, 1.0, 1.0, 1e-3}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const double a = cases[c][0], b = cases[c][1], q = cases[c][2], r = cases[c][3];
    const double lin = r - q * b * b - a * a * r;
    const double p = (-lin + sqrt(lin * lin + 4 * b * b * q * r)) / (2 * b * b);
    const double k = -a * b * p / (r + b * b * p);
    double K, P;
    grit_ilqr_lqr_info info;
    char msg[GRIT_MESSAGE_SIZE];
    cr_assert_eq(grit_ilqr_lqr_stationary(1, 1, &a, &b, &q, &r, NULL, NULL, &K, &P, &info, msg), GRIT_OK, "%s", msg);
    cr_log_info("scalar a=%g b=%g q=%g r=%g: p %.15g vs %.15g, k %.15g vs %.15g, %d iterations", a, b, q, r, P, p, K,
                k, info.iterations);
    cr_assert(fabs(P - p) <= 1e-10 * p, "p %.17g, closed form %.17g", P, p);
    cr_assert(fabs(K - k) <= 1e-10 * fabs(k), "k %.17g, closed form %.17g", K, k);
    cr_assert_lt(fabs(a + b * K), 1.0);
    cr_assert_leq(info.change, 1e-11);
  }
}

/* Solves X1^T Y = X2^T for complex n x n X1, X2 (Gauss-Jordan with partial pivoting): Y = P^T = P. */
static void complex_right_divide(int n, double complex *X1, double complex *X2, double *P) {
  double complex M[8][16];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      M[i][j] = X1[j * n + i];     /* X1^T */
      M[i][n + j] = X2[j * n + i]; /* X2^T */
    }
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int i = c + 1; i < n; ++i)
      if (cabs(M[i][c]) > cabs(M[piv][c])) piv = i;
    for (int j = 0; j < 2 * n; ++j) {
      double complex t = M[c][j];
      M[c][j] = M[piv][j];
      M[piv][j] = t;
    }
    const double complex d = M[c][c];
    cr_assert(cabs(d) > 1e-12, "singular eigenvector block");
    for (int j = 0; j < 2 * n; ++j) M[c][j] /= d;
    for (int i = 0; i < n; ++i)
      if (i != c) {
        const double complex f = M[i][c];
        for (int j = 0; j < 2 * n; ++j) M[i][j] -= f * M[c][j];
      }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      cr_assert(fabs(cimag(M[i][n + j])) <= 1e-8 * (1 + cabs(M[i][n + j])), "P has an imaginary part");
      P[i * n + j] = creal(M[i][n + j]);
    }
}

/* The DARE's solution from the stable invariant subspace of the symplectic matrix of the optimal
 * state-costate recursion (Laub 1979; A invertible, no cross term):
 *     Z = [A + G A^-T Q, -G A^-T; -A^-T Q, A^-T],  G = B R^-1 B',
 * whose n eigenvalues inside the unit circle have eigenvectors [X1; X2], and P = X2 X1^-1. */
static void dare_by_eigenvectors(int n, int m, const double *A, const double *B, const double *Q, const double *R,
                                 double *P) {
  cr_assert_leq(n, 8);
  const int n2 = 2 * n;
  double Ait[64], Rinv[16], G[64], BRi[64], Bt[64], Z[256], wr[16], wi[16], vr[256];
  /* A^-T: invert A (dgesv on the identity), then transpose */
  double Ac[64], Ainv[64];
  memcpy(Ac, A, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n * n; ++i) Ainv[i] = (i % (n + 1) == 0);
  lapack_int ipiv[16];
  cr_assert_eq(LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, n, Ac, n, ipiv, Ainv, n), 0);
  transpose(n, n, Ainv, Ait);
  double Rc[16];
  memcpy(Rc, R, sizeof(double) * (size_t)(m * m));
  for (int i = 0; i < m * m; ++i) Rinv[i] = (i % (m + 1) == 0);
  cr_assert_eq(LAPACKE_dgesv(LAPACK_ROW_MAJOR, m, m, Rc, m, ipiv, Rinv, m), 0);
  mul(n, m, m, B, Rinv, BRi);
  transpose(n, m, B, Bt);
  mul(n, m, n, BRi, Bt, G);
  double GAit[64], AitQ[64], GAitQ[64];
  mul(n, n, n, G, Ait, GAit);
  mul(n, n, n, Ait, Q, AitQ);
  mul(n, n, n, GAit, Q, GAitQ);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      Z[i * n2 + j] = A[i * n + j] + GAitQ[i * n + j];
      Z[i * n2 + n + j] = -GAit[i * n + j];
      Z[(n + i) * n2 + j] = -AitQ[i * n + j];
      Z[(n + i) * n2 + n + j] = Ait[i * n + j];
    }
  cr_assert_eq(LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'V', n2, Z, n2, wr, wi, NULL, 1, vr, n2), 0);
  /* Collect the stable eigenvectors; dgeev stores a complex pair's vector as columns j (real part)
   * and j + 1 (imaginary part). */
  double complex X1[64], X2[64];
  int found = 0;
  for (int j = 0; j < n2; ++j) {
    const int pair = wi[j] != 0;
    for (int s = 0; s < (pair ? 2 : 1); ++s) {
      if (hypot(wr[j], wi[j]) < 1.0) {
        cr_assert_lt(found, n, "more than n stable eigenvalues");
        for (int i = 0; i < n2; ++i) {
          const double re = vr[i * n2 + j], im = pair ? vr[i * n2 + j + 1] : 0.0;
          const double complex v = re + (s ? -im : im) * _Complex_I;
          if (i < n)
            X1[i * n + found] = v;
          else
            X2[(i - n) * n + found] = v;
        }
        ++found;
      }
    }
    if (pair) ++j;
  }
  cr_assert_eq(found, n, "%d stable eigenvalues, expected %d", found, n);
  complex_right_divide(n, X1, X2, P);
}

/* The double integrator (h = 0.1 s) and a random unstable system with two inputs: P against the
 * symplectic eigenvectors to 1e-9 of max|P| (both are accurate to ~1e-12: the eigenvector method to
 * the conditioning of X1, the iteration to tol / (1 - rho^2)); the DARE residual written out; a
 * stable closed loop. */
Test(lqr_stationary, matches_the_symplectic_eigenvector_solution) {
  const double h = 0.1;
  const double A1[4] = {1, h, 0, 1}, B1[2] = {0.5 * h * h, h}, Q1[4] = {1, 0, 0, 0.1}, R1[1] = {0.01};
  enum { RN = 5, RM = 2 };
  double A2[RN * RN], B2[RN * RM], Q2[RN * RN] = {0}, R2[RM * RM] = {0.7, 0.2, 0.2, 0.4}, C[RN * RN];
  unsigned seed = 11;
  for (int i = 0; i < RN * RN; ++i) A2[i] = (i % (RN + 1) == 0 ? 1.05 : 0.0) + 0.3 * rnd(&seed);
  for (int i = 0; i < RN * RM; ++i) B2[i] = rnd(&seed);
  for (int i = 0; i < RN * RN; ++i) C[i] = rnd(&seed);
  for (int i = 0; i < RN; ++i)
    for (int j = 0; j < RN; ++j)
      for (int p = 0; p < RN; ++p) Q2[i * RN + j] += C[p * RN + i] * C[p * RN + j];
  struct {
    int n, m;
    const double *A, *B, *Q, *R;
  } cases[2] = {{2, 1, A1, B1, Q1, R1}, {RN, RM, A2, B2, Q2, R2}};
  for (int c = 0; c < 2; ++c) {
    const int n = cases[c].n, m = cases[c].m;
    double K[16], P[64], Pref[64];
    grit_ilqr_lqr_info info;
    char msg[GRIT_MESSAGE_SIZE];
    cr_assert_eq(grit_ilqr_lqr_stationary(n, m, cases[c].A, cases[c].B, cases[c].Q, cases[c].R, NULL, NULL, K, P,
                                          &info, msg),
                 GRIT_OK, "%s", msg);
    dare_by_eigenvectors(n, m, cases[c].A, cases[c].B, cases[c].Q, cases[c].R, Pref);
    const double err = max_diff(n * n, P, Pref) / max_abs(n * n, Pref);
    const double res = dare_residual(n, m, cases[c].A, cases[c].B, cases[c].Q, cases[c].R, NULL, P);
    const double rho = radius_of(n, m, cases[c].A, cases[c].B, K), rho_open = radius_of(n, 0, cases[c].A, NULL, NULL);
    cr_log_info("case %d (n %d, m %d): %d iterations, |P - P_eig| / |P| = %.3g, DARE residual %.3g, radius %.4f "
                "(open loop %.4f)",
                c, n, m, info.iterations, err, res, rho, rho_open);
    cr_assert_leq(err, 1e-9);
    cr_assert_leq(res, 1e-10);
    cr_assert_lt(rho, 1.0);
    double lib_rho = 0;
    cr_assert_eq(grit_ilqr_lqr_closed_loop_radius(n, m, cases[c].A, cases[c].B, K, &lib_rho, msg), GRIT_OK);
    cr_assert(fabs(lib_rho - rho) <= 1e-12, "the library's radius %.17g, dgeev here %.17g", lib_rho, rho);
  }
  cr_assert_gt(radius_of(RN, 0, A2, NULL, NULL), 1.0, "the random system should be open-loop unstable");
}

/* With the cross term u'N x, the substitution u = v - R^-1 N x gives an equivalent problem without it
 * (Q - N'R^-1 N, A - B R^-1 N), whose gain K' gives K = K' - R^-1 N. */
Test(lqr_stationary, cross_term_matches_the_equivalent_problem) {
  const double A[4] = {1.1, 0.2, -0.1, 0.9}, B[2] = {0.1, 0.5}, Q[4] = {2, 0.3, 0.3, 1}, R[1] = {0.5};
  const double N[2] = {0.2, -0.1};
  double K[2], P[4], Kp[2], Pp[4];
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A, B, Q, R, N, NULL, K, P, NULL, msg), GRIT_OK, "%s", msg);
  const double RiN[2] = {N[0] / R[0], N[1] / R[0]};
  double Qp[4], Ap[4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      Qp[i * 2 + j] = Q[i * 2 + j] - N[i] * RiN[j];
      Ap[i * 2 + j] = A[i * 2 + j] - B[i] * RiN[j];
    }
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, Ap, B, Qp, R, NULL, NULL, Kp, Pp, NULL, msg), GRIT_OK, "%s", msg);
  const double Kref[2] = {Kp[0] - RiN[0], Kp[1] - RiN[1]};
  cr_log_info("cross term: K = [%.12g %.12g], via the substitution [%.12g %.12g]", K[0], K[1], Kref[0], Kref[1]);
  cr_assert_leq(max_diff(2, K, Kref), 1e-9 * max_abs(2, Kref));
  cr_assert_leq(max_diff(4, P, Pp), 1e-9 * max_abs(4, Pp));
  cr_assert_leq(dare_residual(2, 1, A, B, Q, R, N, P), 1e-10);
}

/* No stabilizing solution: a weighted mode that B cannot move. On the unit circle, P grows linearly
 * and never settles (NOT_CONVERGED, with the last iterate returned); outside it, P grows
 * geometrically until it overflows (NOT_FINITE). */
Test(lqr_stationary, reports_an_unstabilizable_weighted_mode) {
  const double B[2] = {0, 1}, Q[4] = {1, 0, 0, 1}, R[1] = {1};
  const double A_unit[4] = {1, 0, 0, 1.1}, A_unstable[4] = {1.5, 0, 0, 0.5};
  double K[2], P[4];
  char msg[GRIT_MESSAGE_SIZE];
  grit_ilqr_lqr_options o = grit_ilqr_lqr_default_options();
  o.max_iterations = 2000;
  grit_ilqr_lqr_info info;
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A_unit, B, Q, R, NULL, &o, K, P, &info, msg), GRIT_ERR_NOT_CONVERGED);
  cr_log_info("unit-circle mode: %s", msg);
  cr_assert(strstr(msg, "did not converge in 2000 iterations"), "%s", msg);
  cr_assert_eq(info.iterations, 2000);
  cr_assert(fabs(P[0] - 2001) < 1e-6, "P grows by Q each iteration on the uncontrolled mode: %g", P[0]);
  o.max_iterations = 100000;
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A_unstable, B, Q, R, NULL, &o, K, P, &info, msg), GRIT_ERR_NOT_FINITE);
  cr_log_info("unstable mode: %s", msg);
  cr_assert(strstr(msg, "overflowed"), "%s", msg);
  /* The same unstable mode, unweighted (undetectable) and uncoupled: the design converges and
   * leaves it alone, as the ball's spin on the plate below. */
  const double Q0[4] = {0, 0, 0, 1};
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A_unstable, B, Q0, R, NULL, NULL, K, P, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(K[0], 0.0);
  cr_assert_eq(P[0], 0.0);
}

Test(lqr_stationary, rejects_bad_input) {
  const double A[4] = {1, 0.1, 0, 1}, B[2] = {0, 0.1}, Q[4] = {1, 0, 0, 1}, R[1] = {1};
  const double Qasym[4] = {1, 0.5, 0, 1}, Qneg[4] = {1, 0, 0, -0.5}, Rneg[1] = {0}, Anan[4] = {1, NAN, 0, 1};
  double K[2], P[4];
  char msg[GRIT_MESSAGE_SIZE];
  struct {
    int n, m;
    const double *A, *Q, *R;
    double tol;
    const char *needle;
  } bad[] = {{0, 1, A, Q, R, 1e-11, "sizes"},           {2, 1, NULL, Q, R, 1e-11, "A or B is NULL"},
             {2, 1, Anan, Q, R, 1e-11, "not finite"},    {2, 1, A, Qasym, R, 1e-11, "Q is not symmetric"},
             {2, 1, A, Qneg, R, 1e-11, "Q is not positive semidefinite"},
             {2, 1, A, Q, Rneg, 1e-11, "R is not positive definite"},
             {2, 1, A, Q, R, 0.0, "tol"},                {2, 1, A, NULL, R, 1e-11, "Q is NULL"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    grit_ilqr_lqr_options o = grit_ilqr_lqr_default_options();
    o.tol = bad[i].tol;
    grit_status s = grit_ilqr_lqr_stationary(bad[i].n, bad[i].m, bad[i].A, B, bad[i].Q, bad[i].R, NULL, &o, K, P,
                                             NULL, msg);
    cr_assert_eq(s, GRIT_ERR_INVALID_ARGUMENT, "case %zu: status %d (%s)", i, s, msg);
    cr_assert(strstr(msg, bad[i].needle), "case %zu: message \"%s\" lacks \"%s\"", i, msg, bad[i].needle);
  }
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A, B, Q, R, NULL, NULL, NULL, P, NULL, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_ilqr_lqr_time_varying(2, 1, 0, A, B, Q, R, NULL, Q, K, NULL, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(msg, "horizon"), "%s", msg);
  cr_assert_eq(grit_ilqr_lqr_time_varying(2, 1, 1, A, B, Q, R, NULL, Qneg, K, NULL, msg), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert(strstr(msg, "Qf"), "%s", msg);
  double rho;
  cr_assert_eq(grit_ilqr_lqr_closed_loop_radius(2, 1, A, B, NULL, &rho, msg), GRIT_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ the time-varying design */

enum { TN = 4, TM = 2, TH = 12 };

/* A time-varying system with a cross term: the gains' rollout u_k = K_k x_k from x0 against the
 * minimizer of the whole quadratic program in U = (u_0..u_{N-1}), from its normal equations
 * (x_k = F_k x0 + G_k U; LAPACK's dposv). The optimal cost is 1/2 x0' P_0 x0. Both are exact up to
 * the conditioning of H (here about 1e2): 1e-10 relative. */
Test(lqr_time_varying, matches_the_direct_solution_of_the_quadratic_program) {
  static double A[TH][TN * TN], B[TH][TN * TM];
  double Q[TN * TN] = {0}, R[TM * TM] = {1.0, 0.3, 0.3, 0.8}, N[TM * TN], Qf[TN * TN] = {0}, x0[TN], C[TN * TN];
  unsigned seed = 3;
  for (int k = 0; k < TH; ++k) {
    for (int i = 0; i < TN * TN; ++i) A[k][i] = (i % (TN + 1) == 0 ? 1.0 : 0.0) + 0.3 * rnd(&seed);
    for (int i = 0; i < TN * TM; ++i) B[k][i] = rnd(&seed);
  }
  for (int i = 0; i < TN * TN; ++i) C[i] = rnd(&seed);
  for (int i = 0; i < TN; ++i) {
    for (int j = 0; j < TN; ++j)
      for (int p = 0; p < TN; ++p) Q[i * TN + j] += C[p * TN + i] * C[p * TN + j];
    Qf[i * TN + i] = 5.0 + i;
    x0[i] = rnd(&seed);
  }
  for (int i = 0; i < TM * TN; ++i) N[i] = 0.1 * rnd(&seed);
  double K[TH * TM * TN], P[(TH + 1) * TN * TN];
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_lqr_time_varying(TN, TM, TH, &A[0][0], &B[0][0], Q, R, N, Qf, K, P, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(max_diff(TN * TN, P + TH * TN * TN, Qf), 0.0);

  /* The reference. */
  enum { NU = TH * TM };
  static double F[TH + 1][TN * TN], G[TH + 1][TN * NU];
  double H[NU * NU] = {0}, g[NU] = {0};
  memset(G, 0, sizeof G);
  for (int i = 0; i < TN * TN; ++i) F[0][i] = (i % (TN + 1) == 0);
  for (int k = 0; k < TH; ++k) {
    mul(TN, TN, TN, A[k], F[k], F[k + 1]);
    mul(TN, TN, NU, A[k], G[k], G[k + 1]);
    for (int i = 0; i < TN; ++i)
      for (int j = 0; j < TM; ++j) G[k + 1][i * NU + k * TM + j] += B[k][i * TM + j];
  }
  for (int k = 0; k <= TH; ++k) {
    const double *W = k == TH ? Qf : Q;
    double Fx[TN], WG[TN * NU], WF[TN];
    mul(TN, TN, 1, F[k], x0, Fx);
    mul(TN, TN, NU, W, G[k], WG);
    mul(TN, TN, 1, W, Fx, WF);
    for (int r = 0; r < NU; ++r) {
      for (int c = 0; c < NU; ++c)
        for (int i = 0; i < TN; ++i) H[r * NU + c] += G[k][i * NU + r] * WG[i * NU + c];
      for (int i = 0; i < TN; ++i) g[r] += G[k][i * NU + r] * WF[i];
    }
    if (k == TH) break;
    /* u_k' R u_k and u_k' N x_k, with x_k = F_k x0 + G_k U */
    for (int i = 0; i < TM; ++i) {
      const int r = k * TM + i;
      for (int j = 0; j < TM; ++j) H[r * NU + k * TM + j] += R[i * TM + j];
      for (int c = 0; c < NU; ++c) {
        double s = 0;
        for (int p = 0; p < TN; ++p) s += N[i * TN + p] * G[k][p * NU + c];
        H[r * NU + c] += s;
        H[c * NU + r] += s;
      }
      for (int p = 0; p < TN; ++p) g[r] += N[i * TN + p] * Fx[p];
    }
  }
  double U[NU];
  for (int i = 0; i < NU; ++i) U[i] = -g[i];
  cr_assert_eq(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', NU, 1, H, NU, U, 1), 0);

  /* The rollout of the gains and its cost. */
  double x[TN], u[NU], cost = 0;
  memcpy(x, x0, sizeof x);
  for (int k = 0; k < TH; ++k) {
    double *uk = u + k * TM, xn[TN], Qx[TN], Ru[TM], Nx[TM];
    mul(TM, TN, 1, K + k * TM * TN, x, uk);
    mul(TN, TN, 1, Q, x, Qx);
    mul(TM, TM, 1, R, uk, Ru);
    mul(TM, TN, 1, N, x, Nx);
    for (int i = 0; i < TN; ++i) cost += 0.5 * x[i] * Qx[i];
    for (int i = 0; i < TM; ++i) cost += 0.5 * uk[i] * Ru[i] + uk[i] * Nx[i];
    mul(TN, TN, 1, A[k], x, xn);
    for (int i = 0; i < TN; ++i)
      for (int j = 0; j < TM; ++j) xn[i] += B[k][i * TM + j] * uk[j];
    memcpy(x, xn, sizeof x);
  }
  double Qfx[TN], P0x[TN], value = 0;
  mul(TN, TN, 1, Qf, x, Qfx);
  for (int i = 0; i < TN; ++i) cost += 0.5 * x[i] * Qfx[i];
  mul(TN, TN, 1, P, x0, P0x);
  for (int i = 0; i < TN; ++i) value += 0.5 * x0[i] * P0x[i];
  const double err = max_diff(NU, u, U) / max_abs(NU, U);
  cr_log_info("time-varying: |u - u*| / |u*| = %.3g; cost %.12g, 1/2 x0'P0 x0 = %.12g", err, cost, value);
  cr_assert_leq(err, 1e-10);
  cr_assert(fabs(cost - value) <= 1e-10 * cost, "cost %.17g, value %.17g", cost, value);
}

/* Constant A, B over a long horizon: the first gain is that of a 2000-step horizon, the stationary
 * gain to the iteration's accuracy (both are iterations of the same map; the first 1e-9). */
Test(lqr_time_varying, long_horizon_tends_to_the_stationary_gain) {
  enum { H = 2000 };
  const double h = 0.1, A1[4] = {1, h, 0, 1}, B1[2] = {0.5 * h * h, h}, Q[4] = {1, 0, 0, 0.1}, R[1] = {0.01};
  static double A[H * 4], B[H * 2], K[H * 2];
  for (int k = 0; k < H; ++k) {
    memcpy(A + 4 * k, A1, sizeof A1);
    memcpy(B + 2 * k, B1, sizeof B1);
  }
  double Ks[2], Ps[4];
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_lqr_time_varying(2, 1, H, A, B, Q, R, NULL, Q, K, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_ilqr_lqr_stationary(2, 1, A1, B1, Q, R, NULL, NULL, Ks, Ps, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_leq(max_diff(2, K, Ks), 1e-9 * max_abs(2, Ks));
  /* and the last knot is the one-step horizon's gain, far from it */
  cr_assert_gt(max_diff(2, K + 2 * (H - 1), Ks), 1e-2 * max_abs(2, Ks));
}

/* --------------------------------------------------------------------------- grit_linearize */

/* A sphere resting on the ground with a hinge paddle beside it (one actuator), from a contact state. */
static grit_model *sphere_and_paddle(void) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.005;
  cr_assert_eq(grit_builder_set_options(b, &opt), GRIT_OK);
  grit_geom_def ground = grit_default_geom_def();
  ground.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  grit_body_def paddle = grit_default_body_def();
  paddle.pos[2] = 0.3;
  int pb = 0, pj = 0;
  cr_assert_eq(grit_builder_add_body(b, &paddle, &pb), GRIT_OK);
  grit_joint_def hinge = grit_default_joint_def();
  hinge.axis[0] = 0, hinge.axis[1] = 1, hinge.axis[2] = 0;
  cr_assert_eq(grit_builder_add_joint(b, pb, &hinge, &pj), GRIT_OK);
  grit_actuator_def motor = grit_default_actuator_def();
  motor.joint = pj;
  cr_assert_eq(grit_builder_add_actuator(b, &motor, NULL), GRIT_OK);
  grit_body_def ball = grit_default_body_def();
  ball.pos[0] = 0.5;
  ball.pos[2] = 0.05;
  int bb = 0;
  cr_assert_eq(grit_builder_add_body(b, &ball, &bb), GRIT_OK);
  grit_joint_def fj = grit_default_joint_def();
  fj.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, bb, &fj, NULL), GRIT_OK);
  grit_geom_def sphere = grit_default_geom_def();
  sphere.body = bb;
  cr_assert_eq(grit_builder_add_geom(b, &sphere, NULL), GRIT_OK);
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* grit_linearize is grit_step + grit_step_derivatives from the given state: the same A, B and the
 * same next state, bit for bit (the same arithmetic on the same inputs). */
Test(linearize, equals_a_step_and_its_derivatives) {
  grit_model *m = sphere_and_paddle();
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), n = 2 * nv;
  grit_data *d1 = NULL, *d2 = NULL;
  cr_assert_eq(grit_data_create(m, &d1), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d2), GRIT_OK);
  for (int k = 0; k < 40; ++k) cr_assert_eq(grit_step(d1), GRIT_OK); /* settle into contact */
  double x[16], u[1] = {0.3};
  memcpy(x, grit_data_qpos(d1), sizeof(double) * (size_t)nq);
  memcpy(x + nq, grit_data_qvel(d1), sizeof(double) * (size_t)nv);
  x[nq + 2] = 0.2; /* the ball rolls in x */
  double A1[14 * 14], B1[14], A2[14 * 14], B2[14];
  cr_assert_eq(grit_linearize(d2, x, u, A2, B2), GRIT_OK, "%s", grit_data_last_error(d2));
  cr_assert_eq(grit_data_set_qpos(d1, x, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d1, x + nq, nv), GRIT_OK);
  cr_assert_eq(grit_data_set_ctrl(d1, u, 1), GRIT_OK);
  cr_assert_eq(grit_step(d1), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d1, A1, B1, NULL, 0, NULL), GRIT_OK);
  cr_assert_gt(grit_data_ncontacts(d2), 0);
  cr_assert_eq(memcmp(A1, A2, sizeof(double) * (size_t)(n * n)), 0);
  cr_assert_eq(memcmp(B1, B2, sizeof(double) * (size_t)n), 0);
  cr_assert_eq(memcmp(grit_data_qpos(d1), grit_data_qpos(d2), sizeof(double) * (size_t)nq), 0);
  cr_assert_eq(memcmp(grit_data_qvel(d1), grit_data_qvel(d2), sizeof(double) * (size_t)nv), 0);
  cr_assert_eq(grit_data_ctrl(d2)[0], u[0]);

  /* Along a trajectory: knot by knot the same. */
  double xs[2 * 15], us[2] = {0.3, -0.2}, At[2 * 14 * 14], Bt[2 * 14];
  memcpy(xs, x, sizeof(double) * (size_t)(nq + nv));
  memcpy(xs + nq + nv, grit_data_qpos(d2), sizeof(double) * (size_t)nq);
  memcpy(xs + nq + nv + nq, grit_data_qvel(d2), sizeof(double) * (size_t)nv);
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_ilqr_lqr_linearize_trajectory(d1, 2, xs, us, At, Bt, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(memcmp(At, A2, sizeof(double) * (size_t)(n * n)), 0);
  cr_assert_eq(grit_linearize(d2, xs + nq + nv, us + 1, A2, B2), GRIT_OK);
  cr_assert_eq(memcmp(At + n * n, A2, sizeof(double) * (size_t)(n * n)), 0);
  cr_assert_eq(memcmp(Bt + n, B2, sizeof(double) * (size_t)n), 0);
  grit_data_free(d1);
  grit_data_free(d2);
  grit_model_free(m);
}

/* Whatever stage fails (the position, the velocity after the position was accepted, the control, or
 * the step itself), the data keeps the state, controls and time it had, and says which stage. */
Test(linearize, leaves_nothing_half_done_on_error) {
  grit_model *m = sphere_and_paddle();
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double u0[1] = {0.1};
  cr_assert_eq(grit_data_set_ctrl(d, u0, 1), GRIT_OK);
  for (int k = 0; k < 40; ++k) cr_assert_eq(grit_step(d), GRIT_OK);
  double q0[8], v0[7], A[14 * 14], B[14];
  memcpy(q0, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  const double t0 = grit_data_time(d);

  double x[15], u[1] = {0.5};
  struct {
    int bad;    /* which entry of x (or -1: u) is spoiled */
    double value;
    const char *needle;
  } cases[] = {{nq - 4, 0.0, "linearize: state"},
               {nq + 1, NAN, "linearize: state: qvel"},
               {-1, INFINITY, "linearize: control"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    memcpy(x, q0, sizeof(double) * (size_t)nq);
    x[0] = 0.7; /* a valid change of the paddle angle, applied before the velocity is rejected */
    memcpy(x + nq, v0, sizeof(double) * (size_t)nv);
    u[0] = 0.5;
    if (cases[c].bad >= 0) {
      x[cases[c].bad] = cases[c].value;
      if (cases[c].bad == nq - 4) x[nq - 3] = x[nq - 2] = x[nq - 1] = 0; /* a zero quaternion */
    } else {
      u[0] = cases[c].value;
    }
    const grit_status s = grit_linearize(d, x, u, A, B);
    cr_assert_neq(s, GRIT_OK, "case %zu", c);
    cr_log_info("case %zu: %s", c, grit_data_last_error(d));
    cr_assert(strstr(grit_data_last_error(d), cases[c].needle), "case %zu: %s", c, grit_data_last_error(d));
    cr_assert_eq(memcmp(grit_data_qpos(d), q0, sizeof(double) * (size_t)nq), 0, "case %zu: q changed", c);
    cr_assert_eq(memcmp(grit_data_qvel(d), v0, sizeof(double) * (size_t)nv), 0, "case %zu: v changed", c);
    cr_assert_eq(grit_data_ctrl(d)[0], u0[0]);
    cr_assert_eq(grit_data_time(d), t0);
    cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_ERR_STATE);
  }

  /* A step that fails: one Newton iteration with an unreachable tolerance, from a contact state. */
  grit_step_settings st = grit_default_step_settings();
  st.max_newton_iters = 1;
  st.rel_tol = 1e-15;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
  memcpy(x, q0, sizeof(double) * (size_t)nq);
  memcpy(x + nq, v0, sizeof(double) * (size_t)nv);
  x[nq + 1 + 2] = -1.0; /* the ball driven into the ground */
  x[0] = 0.4;
  u[0] = 0.5;
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_ERR_NOT_CONVERGED, "%s", grit_data_last_error(d));
  cr_log_info("failed step: %s", grit_data_last_error(d));
  cr_assert(strstr(grit_data_last_error(d), "linearize: step"), "%s", grit_data_last_error(d));
  cr_assert_eq(memcmp(grit_data_qpos(d), q0, sizeof(double) * (size_t)nq), 0);
  cr_assert_eq(memcmp(grit_data_qvel(d), v0, sizeof(double) * (size_t)nv), 0);
  cr_assert_eq(grit_data_ctrl(d)[0], u0[0]);
  cr_assert_eq(grit_data_time(d), t0);
  /* and the data still steps from where it was */
  st = grit_default_step_settings();
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_eq(grit_linearize(NULL, x, u, A, B), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_linearize(d, NULL, u, A, B), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_linearize(d, x, NULL, A, B), GRIT_ERR_INVALID_ARGUMENT);
  grit_data_free(d);
  grit_model_free(m);
}

/* ------------------------------------------------------------------------ the closed loops */

/* The cart-pole of examples/lqr_cartpole: the upright is unstable (an eigenvalue of grit's A above 1),
 * A + B K has every eigenvalue inside the unit circle, and the same K brings the nonlinear grit
 * simulation from 0.3 rad to within 1 degree of the upright (the example's acceptance), with the
 * measured settling time (1.17 s) and force (28.6 N) held to loose bounds against regressions. */
Test(closed_loop, cartpole_is_balanced_from_0_3_rad) {
  lqr_cartpole r;
  memset(&r, 0, sizeof r);
  r.dt = 0.01;
  r.theta0 = 0.3;
  r.duration = 6.0;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(lqr_cartpole_run(&r, NULL, msg), GRIT_OK, "%s", msg);
  const double rho = radius_of(LQR_CARTPOLE_N, LQR_CARTPOLE_M, r.A, r.B, r.K);
  const double rho_open = radius_of(LQR_CARTPOLE_N, 0, r.A, NULL, NULL);
  cr_log_info("cart-pole: radius open %.6f, closed %.6f; settling %.3f s, force %.2f N, final %.4f deg", rho_open,
              rho, r.settling_time, r.max_force, r.final_angle * 180 / TEST_PI);
  cr_assert_gt(rho_open, 1.0);
  cr_assert_lt(rho, 1.0);
  cr_assert(fabs(rho - r.closed_radius) <= 1e-12);
  cr_assert_lt(fabs(r.final_angle), TEST_PI / 180);
  cr_assert_lt(r.settling_time, 2.0);
  cr_assert_lt(r.max_force, 40.0);
}

/* The ball on the plate of examples/ball_on_plate, for each contact model: the equilibrium is one
 * (one step moves it by round-off), the dropped directions feed nothing kept (exactly zero in A), the
 * reduced closed loop is inside the unit circle while the full one keeps the four dropped modes on it,
 * and the gain brings the ball back to within 5 mm of the centre in 3 s (the example's acceptance),
 * after a push and from 5 cm, with a tilt no larger than the linear model's range. */
Test(closed_loop, ball_stays_on_the_plate_centre, .timeout = 120) {
  const grit_contact_model models[3] = {GRIT_CONTACT_LAGGED, GRIT_CONTACT_SIMILAR, GRIT_CONTACT_SAP};
  for (int mi = 0; mi < 3; ++mi) {
    lqr_ball_plate r;
    memset(&r, 0, sizeof r);
    r.dt = 0.002;
    r.contact_model = models[mi];
    char msg[GRIT_MESSAGE_SIZE];
    cr_assert_eq(lqr_ball_plate_design(&r, msg), GRIT_OK, "%s", msg);
    const double rho = radius_of(LQR_BP_NR, LQR_BP_M, r.Ar, r.Br, r.K);
    const double rho_open = radius_of(LQR_BP_NR, 0, r.Ar, NULL, NULL);
    double Kfull[LQR_BP_M * LQR_BP_N] = {0};
    for (int c = 0; c < LQR_BP_M; ++c)
      for (int i = 0; i < LQR_BP_NR; ++i) Kfull[c * LQR_BP_N + lqr_bp_keep[i]] = r.K[c * LQR_BP_NR + i];
    const double rho_full = radius_of(LQR_BP_N, LQR_BP_M, r.A, r.B, Kfull);
    cr_log_info("ball on plate (model %d): equilibrium residual %.2g, decoupling %.2g, radius open %.6f, closed "
                "%.6f, full state %.9f, %d Riccati iterations",
                mi, r.eq_residual, r.decoupling, rho_open, rho, rho_full, r.riccati_iterations);
    cr_assert_eq(r.ncontacts_eq, 1);
    cr_assert_leq(r.eq_residual, 1e-9);
    cr_assert_leq(r.decoupling, 1e-12);
    cr_assert_gt(rho_open, 1.0);
    cr_assert_lt(rho, 1.0);
    /* The dropped modes (orientation, spin about the normal) stay at 1: a Jordan block for the spin,
     * whose computed eigenvalues split by ~sqrt(eps). */
    cr_assert(fabs(rho_full - 1.0) <= 1e-6, "full-state radius %.12g", rho_full);

    const double c30 = cos(TEST_PI / 6), s30 = sin(TEST_PI / 6);
    lqr_ball_plate_run runs[2] = {{{0, 0}, {0.2 * c30, 0.2 * s30}, 3.0, 0, 0, 0, 0, 0},
                                  {{0.03, 0.04}, {0, 0}, 3.0, 0, 0, 0, 0, 0}};
    for (int i = 0; i < 2; ++i) {
      cr_assert_eq(lqr_ball_plate_simulate(&r, &runs[i], NULL, msg), GRIT_OK, "%s", msg);
      cr_log_info("  run %d: final distance %.3g mm, farthest %.1f mm, largest tilt %.2f deg, torque %.3f N m", i,
                  1e3 * runs[i].final_distance, 1e3 * runs[i].max_distance, runs[i].max_tilt * 180 / TEST_PI,
                  runs[i].max_torque);
      cr_assert_lt(runs[i].final_distance, 0.005);
      /* Lagged keeps the sliding ball on the plate; Similar couples friction to the normal impulse and
       * glides during slip (docs/contact.md): right after the push, while the ball slides before it
       * rolls, it leaves the plate for a step or two (measured: 1 step at 2 ms). */
      if (models[mi] == GRIT_CONTACT_LAGGED) cr_assert_eq(runs[i].lost_contact_steps, 0);
      cr_assert_leq(runs[i].lost_contact_steps, 5);
      cr_assert_lt(runs[i].max_tilt, 0.2); /* measured 0.13 rad: the linear model's range */
    }
    lqr_ball_plate_free(&r);
  }
}

/* The full 16-direction design converges too when the dropped directions carry no weight, and gives
 * the reduced design's gain (zero on the dropped columns); weighing the ball's spin about the normal,
 * which no plate motion can change, leaves no stabilizing solution: GRIT_ERR_NOT_CONVERGED. */
Test(closed_loop, ball_spin_is_not_stabilizable) {
  lqr_ball_plate r;
  memset(&r, 0, sizeof r);
  r.dt = 0.002;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(lqr_ball_plate_design(&r, msg), GRIT_OK, "%s", msg);
  /* Recover the reduced weights from the design: Q_r = P - (A'PA - ...) is not needed; use the same
   * diagonal weights the example uses, placed on the kept directions. */
  enum { N = LQR_BP_N, NR = LQR_BP_NR, M = LQR_BP_M };
  const double w[NR] = {100, 100, 1e4, 1e4, 0, 1, 1, 400, 400, 0, 0, 0};
  double Q[N * N] = {0}, Qr[NR * NR] = {0}, R[M * M] = {400, 0, 0, 400};
  for (int i = 0; i < NR; ++i) {
    Q[lqr_bp_keep[i] * N + lqr_bp_keep[i]] = w[i];
    Qr[i * NR + i] = w[i];
  }
  double K[M * N], Kr[M * NR];
  static double P[N * N];
  grit_ilqr_lqr_info info;
  cr_assert_eq(grit_ilqr_lqr_stationary(NR, M, r.Ar, r.Br, Qr, R, NULL, NULL, Kr, NULL, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_ilqr_lqr_stationary(N, M, r.A, r.B, Q, R, NULL, NULL, K, P, &info, msg), GRIT_OK, "%s", msg);
  double err = 0;
  for (int c = 0; c < M; ++c) {
    for (int i = 0; i < NR; ++i) err = fmax(err, fabs(K[c * N + lqr_bp_keep[i]] - Kr[c * NR + i]));
    for (int j = 5; j < 8; ++j) err = fmax(err, fabs(K[c * N + j]));
    err = fmax(err, fabs(K[c * N + 15]));
  }
  cr_log_info("full-state design: %d iterations, |K - K_reduced| = %.3g (|K| %.3g)", info.iterations, err,
              max_abs(M * NR, Kr));
  cr_assert_leq(err, 1e-8 * max_abs(M * NR, Kr));

  Q[15 * N + 15] = 1.0; /* weigh the spin rate w_z */
  grit_ilqr_lqr_options o = grit_ilqr_lqr_default_options();
  o.max_iterations = 20000;
  cr_assert_eq(grit_ilqr_lqr_stationary(N, M, r.A, r.B, Q, R, NULL, &o, K, P, &info, msg), GRIT_ERR_NOT_CONVERGED);
  cr_log_info("weighted spin: %s", msg);
  lqr_ball_plate_free(&r);
}
