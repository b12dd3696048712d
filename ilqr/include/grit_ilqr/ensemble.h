/* SPDX-License-Identifier: Apache-2.0 */
/* grit_ilqr/ensemble.h — planning on an ensemble of dynamics at once (docs/ilqr.md, "Ensembles").
 *
 * K dynamics with the same number of controls nu (the members: e.g. one system under K frictions or
 * masses, or one model under two gradient smoothings) are driven by the same controls. The ensemble is
 * itself a grit_ilqr_dynamics whose state is the stack of the members' states,
 *     x = (x^1, ..., x^K)     (nx = sum nx^i, ndx = sum ndx^i),
 * whose step steps every member, whose Jacobians are block-diagonal in fx and stacked in fu,
 *     fx = diag(fx^1, ..., fx^K),   fu = (fu^1; ...; fu^K),
 * and whose difference is the members' differences side by side. A cost on the stacked state, e.g. the
 * weighted sum sum_i w_i l(x^i, u, k) of one user cost over the copies, makes a plan that must work on
 * every member: a robust plan (MPC over an uncertain friction), or a continuation whose plans hold on
 * two models at once. The helpers below stack a single member's goal and weights with member weights
 * w_i, and grit_ilqr_ensemble_cost sums a general cost over the members.
 *
 * Each member keeps its own ctx; the ensemble calls member i's callbacks with the same slot, knot and
 * thread as it was called with, so members such as grit's adapter keep their per-knot work. */
#ifndef GRIT_ILQR_ENSEMBLE_H
#define GRIT_ILQR_ENSEMBLE_H

#include "grit/status.h"
#include "grit_ilqr/export.h"
#include "grit_ilqr/ilqr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_ilqr_ensemble grit_ilqr_ensemble;

/* An ensemble of the K >= 1 members (copied; their ctx must outlive the ensemble), all with the same
 * nu >= 0 and nx, ndx >= 1, each with step and jacobians. nthreads (1..64) is the largest
 * options.nthreads of the solvers it will serve (a Jacobian workspace per thread is allocated here;
 * nothing is allocated in a solve). On error *ensemble is NULL and msg (may be NULL, GRIT_MESSAGE_SIZE
 * bytes) says why. */
GRIT_ILQR_API grit_status grit_ilqr_ensemble_create(int K, const grit_ilqr_dynamics *members, int nthreads,
                                                    grit_ilqr_ensemble **ensemble, char *msg);
GRIT_ILQR_API void grit_ilqr_ensemble_free(grit_ilqr_ensemble *ensemble); /* NULL is allowed */

/* The stacked dynamics for grit_ilqr_problem (valid while the ensemble lives). */
GRIT_ILQR_API grit_ilqr_dynamics grit_ilqr_ensemble_dynamics(grit_ilqr_ensemble *ensemble);

/* The number of members, and member i's offsets in the stacked state (x) and tangent (dx) vectors. */
GRIT_ILQR_API int grit_ilqr_ensemble_size(const grit_ilqr_ensemble *ensemble);
GRIT_ILQR_API int grit_ilqr_ensemble_offset(const grit_ilqr_ensemble *ensemble, int i, int tangent);

/* Stacking one member's quantities, for members of equal nx and ndx (e.g. copies of one model):
 * xs = (x, ..., x) (K nx numbers: an initial state or a goal), and Ws = diag(w_1 W, ..., w_K W)
 * ((K ndx)^2 numbers: a weight Q or Qf; W is ndx x ndx, w has K numbers >= 0, NULL: all 1). Then the
 * quadratic cost of the stacked problem is sum_i w_i times the member's, with R scaled by sum_i w_i
 * for the shared controls. Returns GRIT_ERR_INVALID_ARGUMENT when the members' sizes differ or a weight
 * is negative (grit_ilqr_ensemble_last_error says which). */
GRIT_ILQR_API grit_status grit_ilqr_ensemble_stack_state(grit_ilqr_ensemble *ensemble, const double *x,
                                                         double *xs);
GRIT_ILQR_API grit_status grit_ilqr_ensemble_stack_weight(grit_ilqr_ensemble *ensemble, const double *W,
                                                          const double *w, double *Ws);

/* A general cost over the members: with grit_ilqr_ensemble_set_cost(ensemble, fn, member_ctx, ctx, w), the
 * callback grit_ilqr_ensemble_cost (as the problem's cost, with cost_ctx = the ensemble) returns
 * sum_i w_i fn(ctx_i, k, x^i, u) with its gradient and Hessian in the stacked variables (lxx block
 * diagonal, lux stacked by columns, lu and luu summed), where fn is called with member i's state and
 * receives, as ctx, member_ctx[i] (member_ctx NULL: ctx for every member). w: K weights >= 0 (NULL:
 * all 1), copied; may be called again between solves (then grit_ilqr_dynamics_changed). The members'
 * sizes must be equal only in nu. The solver calls costs from one thread, as this callback requires. */
GRIT_ILQR_API grit_status grit_ilqr_ensemble_set_cost(grit_ilqr_ensemble *ensemble, grit_ilqr_cost_fn fn,
                                                      void *const *member_ctx, void *ctx, const double *w);
GRIT_ILQR_API int grit_ilqr_ensemble_cost(void *ensemble, int k, const double *x, const double *u, double *l,
                                          double *lx, double *lu, double *lxx, double *luu, double *lux);

/* The message of the last failed stacking or cost setter ("" if none). */
GRIT_ILQR_API const char *grit_ilqr_ensemble_last_error(const grit_ilqr_ensemble *ensemble);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_ILQR_ENSEMBLE_H */
