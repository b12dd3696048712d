/* SPDX-License-Identifier: Apache-2.0 */
/* grit_ilqr/lqr.h — discrete-time linear-quadratic regulators (LQR) from dynamics Jacobians: a
 * stationary gain for an equilibrium, time-varying gains along a trajectory, and the closed loop's
 * spectral radius. docs/lqr.md walks through the method and two examples on grit's Jacobians.
 *
 * The model is the linearization of a discrete dynamics x+ = f(x, u) about a reference (x_ref, u_ref):
 *
 *     dx+ = A dx + B du,    dx = x (-) x_ref (tangent space, n numbers),   du = u - u_ref (m numbers),
 *
 * and the cost, summed over the steps, is
 *
 *     1/2 dx' Q dx + 1/2 du' R du + du' N dx     (N, the cross term, is optional).
 *
 * GAIN CONVENTION (the same as iLQR's grit_ilqr_gains and the shared Riccati step): the control is
 *
 *     u = u_ref + K (x (-) x_ref),     K = -(R + B' P B)^-1 (B' P A + N),
 *
 * so K already carries the minus sign: apply u_ref + K dx, not u_ref - K dx. The closed loop is
 * dx+ = (A + B K) dx.
 *
 * Both designs run the Riccati recursion one knot at a time with the very function iLQR's backward
 * pass uses (ilqr/src/riccati.c), with no linear terms and no regularization. Matrices are row-major.
 * Every function returns a grit_status and, on error, writes a message to msg (may be NULL,
 * GRIT_MESSAGE_SIZE bytes). */
#ifndef GRIT_ILQR_LQR_H
#define GRIT_ILQR_LQR_H

#include "grit/grit.h"
#include "grit_ilqr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_ilqr_lqr_options {
  /* Riccati iterations before giving up, default 200000. Each is one knot of the recursion; a closed
   * loop whose slowest mode decays like rho^k needs about log(1/tol) / (2 (1 - rho)) of them, so a
   * millisecond step with a one-second mode needs thousands. */
  int max_iterations;
  /* Converged when the relative change of the value matrix in one iteration,
   * max|P_{i+1} - P_i| / max|P_{i+1}|, is at most tol; default 1e-11. That change is the relative
   * residual of the algebraic Riccati equation at P_i. */
  double tol;
} grit_ilqr_lqr_options;

GRIT_ILQR_API grit_ilqr_lqr_options grit_ilqr_lqr_default_options(void);

/* What a stationary design did. */
typedef struct grit_ilqr_lqr_info {
  int iterations; /* Riccati iterations performed */
  double change;  /* the relative change of P in the last iteration (see tol) */
} grit_ilqr_lqr_info;

/* The stationary (infinite-horizon) LQR: iterates P <- Q + A'PA - (A'PB + N')(R + B'PB)^-1 (B'PA + N)
 * from P = Q until the relative change is at most options->tol, the discrete algebraic Riccati
 * equation's solution. A (n x n), B (n x m), Q (n x n, symmetric positive semidefinite), R (m x m,
 * symmetric positive definite), N (m x n, may be NULL: zero). options may be NULL (defaults). Writes
 * K (m x n), P (n x n, may be NULL) and info (may be NULL).
 *
 * The iteration converges when every mode of A that Q weights (directly or through the modes it feeds)
 * is stabilizable by B; a mode on or outside the unit circle that B cannot move and Q weights makes P
 * grow without bound. Then the result is GRIT_ERR_NOT_CONVERGED (max_iterations reached; K, P and info
 * hold the last iterate) or GRIT_ERR_NOT_FINITE (P overflowed). GRIT_ERR_NUMERICAL: R + B'PB was not
 * positive definite. GRIT_ERR_INVALID_ARGUMENT: bad sizes, NULL, non-finite or non-symmetric input, Q
 * not positive semidefinite or R not positive definite. */
GRIT_ILQR_API grit_status grit_ilqr_lqr_stationary(int n, int m, const double *A, const double *B, const double *Q,
                                     const double *R, const double *N, const grit_ilqr_lqr_options *options,
                                     double *K, double *P, grit_ilqr_lqr_info *info, char *msg);

/* Time-varying LQR over `horizon` steps of a linearized trajectory: knot k has its own A_k (n x n) and
 * B_k (n x m), stored one after the other in A (horizon x n x n) and B (horizon x n x m); the weights
 * Q, R, N are the same at every knot and Qf (n x n, symmetric positive semidefinite) weighs the final
 * deviation. The recursion runs backward from P_N = Qf. Writes the gains K (horizon x m x n: apply
 * u_k = u_ref,k + K_k (x_k (-) x_ref,k)) and, if P is not NULL, the value matrices P ((horizon + 1) x
 * n x n, P_0 first). Errors as for grit_ilqr_lqr_stationary (GRIT_ERR_NUMERICAL names the knot). */
GRIT_ILQR_API grit_status grit_ilqr_lqr_time_varying(int n, int m, int horizon, const double *A, const double *B,
                                       const double *Q, const double *R, const double *N, const double *Qf,
                                       double *K, double *P, char *msg);

/* The spectral radius (largest eigenvalue modulus) of the closed loop A + B K (A n x n, B n x m, K
 * m x n; B and K may both be NULL: the radius of A), by LAPACK's dgeev. A discrete closed loop is
 * asymptotically stable when it is below 1. */
GRIT_ILQR_API grit_status grit_ilqr_lqr_closed_loop_radius(int n, int m, const double *A, const double *B, const double *K,
                                             double *radius, char *msg);

/* grit's Jacobians along a trajectory, for grit_ilqr_lqr_time_varying: for k = 0..horizon-1, A_k and
 * B_k of the step from x_k = xs + k (nq + nv + na) with u_k = us + k nu, by grit_linearize on `data`
 * (whose state ends as the last step left it). A (horizon x n x n), B (horizon x n x nu; us and B may be
 * NULL when nu = 0), n = 2nv + na (na = 0 without actuator activations: x = (q, v)). On error the message names the knot and grit's reason. */
GRIT_ILQR_API grit_status grit_ilqr_lqr_linearize_trajectory(grit_data *data, int horizon, const double *xs, const double *us,
                                               double *A, double *B, char *msg);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_ILQR_LQR_H */
