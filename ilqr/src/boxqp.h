/* SPDX-License-Identifier: Apache-2.0 */
/* boxqp.h — minimize 1/2 x' H x + g' x subject to lo <= x <= hi by projected Newton (Bertsekas 1982;
 * its use for control limits in iLQR: Tassa, Mansard and Todorov, "Control-limited differential dynamic
 * programming", ICRA 2014). Each iteration splits the variables into clamped ones (at a bound with the
 * gradient pushing outward) and free ones, takes a Newton step on the free ones and a projected
 * backtracking line search (Armijo). Converges in a few iterations for the small QPs of a backward pass. */
#ifndef GRIT_ILQR_BOXQP_H
#define GRIT_ILQR_BOXQP_H

/* Doubles of workspace grit_ilqr_boxqp needs for m variables. */
#define GRIT_ILQR_BOXQP_WORK(m) (5 * (m) + (m) * (m))

/* H (m x m) symmetric, g (m), lo/hi (m; +-INFINITY allowed, lo <= hi). On entry x is the starting
 * point (projected onto the box first); on return the solution. free_out[i] is set to 1 for variables
 * not clamped at the solution, and Lff (m x m storage) holds the Cholesky factor of H restricted to
 * the free variables (nfree x nfree, row-major, packed at the start). Returns the number of free
 * variables, or -1 if H is not positive definite on a free set. */
int grit_ilqr_boxqp(int m, const double *H, const double *g, const double *lo, const double *hi, double *x,
                    int *free_out, double *Lff, double *work);

#endif
