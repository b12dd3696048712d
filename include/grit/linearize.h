/* SPDX-License-Identifier: Apache-2.0 */
/* grit/linearize.h — the linearization of one time step at a given state and control, the input of a
 * linear controller design (LQR) or of any local analysis of the dynamics.
 *
 * grit_linearize is grit_step followed by grit_step_derivatives, from a state and control given by the
 * caller: x+ = f(x, u) ~ f(x0, u0) + A dx + B du, with dx in the tangent space of dimension 2 nv
 * (dq then dv; quaternions perturbed in the body frame, docs/conventions.md) and du in R^nu. At an
 * equilibrium (f(x0, u0) = x0) this is the linear model dx+ = A dx + B du of the deviations. */
#ifndef GRIT_LINEARIZE_H
#define GRIT_LINEARIZE_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the data's state to x = (q, v) (nq + nv numbers), or x = (q, v, act) (nq + nv + na numbers) for a
 * model with activations (na = grit_model_na > 0), and its controls to u (nu numbers; may be NULL
 * when nu = 0), takes one grit_step and writes its Jacobians A = dx+/dx (nx x nx, nx = 2nv + na) and
 * B = dx+/du (nx x nu), row-major; A or B may be NULL (not computed).
 *
 * On success the data has taken that step: its state is x+ = f(x, u) (read it with grit_data_qpos and
 * grit_data_qvel), its time has advanced by the timestep, and its contacts and statistics are those of
 * the step. On error nothing is half done: the data's state, controls and time are those it had
 * before the call, the data's message says why, and no step is kept for grit_step_derivatives (as
 * after a failed grit_step). Allocates nothing. */
GRIT_API grit_status grit_linearize(grit_data *data, const double *x, const double *u, double *A, double *B);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_LINEARIZE_H */
