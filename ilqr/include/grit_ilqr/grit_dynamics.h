/* SPDX-License-Identifier: Apache-2.0 */
/* grit_ilqr/grit_dynamics.h — grit's time step as iLQR dynamics.
 *
 * The state is x = (q, v): nx = nq + nv numbers, with tangent space dx = (dq, dv) of 2 nv (quaternions
 * perturbed in the body frame, grit_position_difference), the convention of grit_step_derivatives; with
 * actuator activations (na = grit_model_na > 0) x = (q, v, act), nx = nq + nv + na, ndx = 2 nv + na. The
 * controls are grit's u (nu). One step is grit_step; its Jacobians come from grit_step_derivatives,
 * with the factorization the step kept: the adapter keeps one grit_data per knot and rollout slot, so
 * the Jacobians of a rollout need no second step and are computed on several threads at once. */
#ifndef GRIT_ILQR_GRIT_DYNAMICS_H
#define GRIT_ILQR_GRIT_DYNAMICS_H

#include "grit/grit.h"
#include "grit_ilqr/ilqr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_ilqr_grit grit_ilqr_grit;

/* An adapter for `model` over `horizon` steps (2 x horizon grit_data are created here; the model must
 * outlive the adapter). settings may be NULL (grit's defaults). On error *adapter is NULL and msg (may
 * be NULL, GRIT_MESSAGE_SIZE bytes) says why. */
GRIT_ILQR_API grit_status grit_ilqr_grit_create(const grit_model *model, int horizon, const grit_step_settings *settings,
                                  grit_ilqr_grit **adapter, char *msg);
GRIT_ILQR_API void grit_ilqr_grit_free(grit_ilqr_grit *adapter); /* NULL is allowed */

/* The dynamics for grit_ilqr_problem (valid while the adapter lives). */
GRIT_ILQR_API grit_ilqr_dynamics grit_ilqr_grit_dynamics(grit_ilqr_grit *adapter);

/* x = (q, v) of a data's current state, into x (nq + nv numbers), or (q, v, act) (nq + nv + na) with activations. */
GRIT_ILQR_API void grit_ilqr_grit_state(const grit_data *data, double *x);

/* The grit data that took the step of knot k in rollout slot `slot` (e.g. to read its contacts). */
GRIT_ILQR_API grit_data *grit_ilqr_grit_knot_data(grit_ilqr_grit *adapter, int slot, int k);

/* Gradient smoothing (grit_step_settings.gradient_smoothing, docs/contact.md): sets the distance delta
 * (m, >= 0; 0: the exact model) on every knot's data, keeping the other step settings given at creation
 * (e.g. gradient_smoothing_barrier: the force at a distance instead of the film). Call between solves,
 * then grit_ilqr_dynamics_changed on the solver. */
GRIT_ILQR_API grit_status grit_ilqr_grit_set_smoothing(grit_ilqr_grit *adapter, double delta);

/* Derivative smoothing: with delta > 0 the rollouts keep the knots' own model (e.g. the exact one) and
 * the Jacobians are those of the step smoothed by delta taken at the same state and controls (a second
 * grit_data per knot, created on the first call, takes that step); 0 restores the step's own. Call
 * between solves, then grit_ilqr_dynamics_changed on the solver. docs/ilqr.md. */
GRIT_ILQR_API grit_status grit_ilqr_grit_set_derivative_smoothing(grit_ilqr_grit *adapter, double delta);

/* Solves with gradient smoothing annealed to 0 (docs/ilqr.md): solves with delta0, then with delta
 * multiplied by `factor` (in (0, 1), e.g. 0.5) while it is at least delta_min, each from the last
 * solution, and finally with the exact model (delta 0), whose stop is the result's. The result's
 * iterations, counts and times add up all the solves; initial_cost is the first's. The adapter ends with
 * smoothing 0. Returns the first error. */
GRIT_ILQR_API grit_status grit_ilqr_grit_solve_annealed(grit_ilqr_grit *adapter, grit_ilqr *solver, double delta0, double factor,
                                          double delta_min, grit_ilqr_result *result);

/* Grip to squeeze (docs/ilqr.md, "Planning across separation"): a plan made under gradient smoothing
 * may hold an object by a grip the exact model does not have (the film's friction without a normal
 * force). This replays the controls u (horizon x nu, row k = u_k; changed in place) from x0 (nx) under
 * the knots' current step settings and, after each step k, adds to u_k the controls that press every
 * contact of two moving bodies with the normal force its friction used, times a safety factor:
 * (margin |gamma_t| / mu - gamma_n) / dt where positive (gamma the contact's impulse, mu its friction
 * coefficient), mapped to the actuators through their joints (hinge and slide transmissions, least
 * squares on each dof; other actuators are left as they are). Contacts with a static body (supports)
 * are skipped. margin > 0 (1: exactly the friction used; >= 2.5 measured to transfer the gripper of
 * docs/ilqr.md). The result is not clamped (grit_ilqr_set_controls clamps). */
GRIT_ILQR_API grit_status grit_ilqr_grit_squeeze_from_grip(grit_ilqr_grit *adapter, const double *x0, double margin,
                                                           double *u);

/* Solves with gradient smoothing delta (> 0), then on the exact model (delta 0) twice: from that plan
 * as it is, and from the plan with its grip turned into a squeeze (grit_ilqr_grit_squeeze_from_grip with
 * `margin` under delta, from the solver's x0), and keeps the second unless it ends at a higher cost or
 * violates the constraints more (then the exact solve is run once more from the first's result, so
 * that the solver holds that plan). The
 * result's stop and cost are the last exact solve's; its counts and times add up all the solves;
 * initial_cost is the first's. The adapter ends with smoothing 0. Returns the first error. For grasps
 * planned from open fingers (docs/ilqr.md, the gripper: margin 3 with delta 3-8 cm). */
GRIT_ILQR_API grit_status grit_ilqr_grit_solve_squeezed(grit_ilqr_grit *adapter, grit_ilqr *solver, double delta,
                                                        double margin, grit_ilqr_result *result);

/* The message of the last failure inside a callback ("" if none). */
GRIT_ILQR_API const char *grit_ilqr_grit_last_error(const grit_ilqr_grit *adapter);

#ifdef __cplusplus
}
#endif
#endif
