/* SPDX-License-Identifier: Apache-2.0 */
/* riccati.h — one knot of the discrete Riccati recursion, the core of iLQR's backward pass and of the
 * (time-varying or stationary) LQR: shared by both, written once.
 *
 * With the next knot's value function V(dx) ~ Vx' dx + 1/2 dx' Vxx dx, the knot's linearized dynamics
 * dx+ = fx dx + fu du and its cost's derivatives, the action-value expansion is
 *     Qx  = lx + fx' Vx,      Qu  = lu + fu' Vx,
 *     Qxx = lxx + fx' Vxx fx, Quu = luu + fu' Vxx fu,   Qux = lux + fu' Vxx fx.
 * The control step du = k + K dx minimizes it over du (with Quu + mu I, the Levenberg–Marquardt
 * regularization, and, given bounds on du, by the box QP with K zero in the clamped rows), and the
 * value function one knot earlier is
 *     Vx  = Qx + K' Quu k + K' Qu + Qux' k,   Vxx = Qxx + K' Quu K + K' Qux + Qux' K,
 * with the expected reduction terms dV = (k' Qu, 1/2 k' Quu k). */
#ifndef GRIT_ILQR_RICCATI_H
#define GRIT_ILQR_RICCATI_H

/* Doubles of workspace for n states (tangent) and m controls. */
#define GRIT_ILQR_RICCATI_WORK(n, m) (5 * (n) * (n) + 4 * (n) * (m) + 4 * (m) * (m) + 2 * (n) + 8 * (m))
/* After a call, the knot's unregularized Q_uu (m x m) is here in the workspace. */
#define GRIT_ILQR_RICCATI_QUU(work, n, m) ((work) + 2 * (n) * (n) + 2 * (n) * (m))

/* fx (n x n), fu (n x m); lx, lu, lxx, luu, lux may each be NULL (zero). Vx1, Vxx1: the next knot's
 * value function. dlo/dhi (m): bounds on du, or both NULL. k (m): on entry the box QP's starting
 * point (ignored without bounds), on return the feedforward step; K (m x n) the feedback gain; Vx, Vxx
 * the value function at this knot (may alias nothing else); dV (2) the expected-reduction terms;
 * *nclamped the number of controls clamped. Returns 0, or 1 if Quu + mu I is not positive definite. */
int grit_ilqr_riccati_knot(int n, int m, const double *fx, const double *fu, const double *lx, const double *lu,
                           const double *lxx, const double *luu, const double *lux, const double *Vx1,
                           const double *Vxx1, double mu, const double *dlo, const double *dhi, double *k,
                           double *K, double *Vx, double *Vxx, double dV[2], int *nclamped, double *work);

#endif
