/* SPDX-License-Identifier: Apache-2.0 */
/* grit/sysid.h — system identification: contact parameters (friction, stiffness, Hunt & Crossley
 * dissipation, per geometry or for every geometry at once) and masses fitted to observed trajectories.
 *
 * grit_fit minimizes the weighted state error
 *
 *     F(theta, s) = 1/2 sum_k | W (x_k(theta, s) (-) y_k) |^2
 *
 * over the parameters theta and (multiple shooting, the default) the initial states s of the shooting
 * segments, where y_k are the observed states, x_k the simulated ones and (-) the difference on the state
 * manifold (tangent space, dq then dv: docs/conventions.md). The Jacobian comes from the forward
 * sensitivities of each segment's rollout, S_{k+1} = A_k S_k + P_k (grit_step_derivatives), and the
 * minimization is Levenberg-Marquardt in log(theta), which keeps every parameter positive and makes
 * the steps relative. The uncertainty is the Gauss-Newton covariance sigma^2 (J^T J)^-1 at the optimum,
 * with sigma^2 estimated from the residual. docs/sysid.md has the method and measured results.
 *
 * Everything here allocates (models, data, workspaces per call): it is meant for offline fitting, not
 * for a control loop. No global state; calls on different models or the same model may run in parallel
 * threads. */
#ifndef GRIT_SYSID_H
#define GRIT_SYSID_H

#include "grit/derivatives.h"
#include "grit/step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One observed trajectory of the model: nsteps + 1 states at times t0 + k h, h the model's timestep,
 * and the controls applied over each step. Arrays are row-major, one row per sample. */
typedef struct grit_trajectory {
  int nsteps;          /* N >= 1 */
  const double *qpos;  /* (N + 1) x nq positions (quaternions need not be exactly unit) */
  const double *qvel;  /* (N + 1) x nv velocities */
  const double *ctrl;  /* N x nu: row k is held over the step from state k to k + 1; NULL: zero */
} grit_trajectory;

/* How grit_fit works. */
typedef struct grit_fit_options {
  grit_step_settings settings; /* the rollouts' step (contact model, tolerances); default grit's step
                                  defaults with rel_tol 1e-8 (smooth rollouts in the parameters) */
  int segment_steps;           /* K: steps per shooting segment, >= 1; default 100 */
  int fit_initial_states;      /* nonzero (default): multiple shooting, each segment's initial state is
                                  an unknown fitted with the parameters; 0: each segment restarts from
                                  the observed state (resetting; biased when the data are noisy) */
  double position_sigma;       /* the position errors' weight is 1/position_sigma (m or rad); 1e-3 */
  double velocity_sigma;       /* the velocity errors' weight is 1/velocity_sigma (m/s or rad/s); 1e-2 */
  int max_iters;               /* Levenberg-Marquardt iterations, >= 1; default 100 */
  double tol;                  /* stop when an accepted step lowers the cost by less than tol times
                                  the cost and changes no log-parameter by more than sqrt(tol);
                                  > 0, default 1e-10 */
  double max_log_step;         /* largest change of a log-parameter per iteration (> 0; 1 = a factor
                                  e); the step is scaled down to it. Default 1 */
} grit_fit_options;

GRIT_API grit_fit_options grit_default_fit_options(void);

/* What grit_fit found. Costs are 1/2 the sum of the squared weighted residuals. */
typedef struct grit_fit_result {
  int iterations;      /* Levenberg-Marquardt iterations taken */
  int evaluations;     /* rollouts of every trajectory with sensitivities */
  int converged;       /* the tolerance was met (0: max_iters reached, or no step lowered the cost) */
  double initial_cost; /* at the guesses (and the observed initial states) */
  double cost;         /* at the result */
  double rms;          /* sqrt(2 cost / nresiduals): the weighted residual's root mean square, ~1
                          when the weights are the noise's 1/sigma */
  double sigma2;       /* 2 cost / (nresiduals - nunknowns): the residual variance per unit weight
                          that scales the covariance */
  int nresiduals;      /* weighted state errors (2 nv per sample used) */
  int nunknowns;       /* np + 2 nv per segment (multiple shooting) or np (resetting) */
  int nsegments;       /* shooting segments over all trajectories */
} grit_fit_result;

/* Fits the np parameters params[] (kinds and indices as in grit_step_derivatives; each at most once,
 * and a contact kind either for every geometry (index -1) or per geometry, not both) to ntraj
 * trajectories of `model`. values[] holds the guesses on input (> 0, finite) and the fitted values on
 * output; the model is not changed (the fit simulates copies, grit_model_with_params).
 *
 * std (np numbers, may be NULL) receives the standard deviations of the fitted values:
 * std_i = values_i * sqrt(C_ii), C = sigma2 (J^T J)^-1 restricted to the log-parameters (the segments'
 * initial states eliminated), i.e. the first-order (delta-method) image of the log-space deviation; a
 * parameter the data do not determine gets an infinite std. cov (np x np, row-major, may be NULL)
 * receives C itself, the covariance of log(values).
 *
 * Returns GRIT_ERR_INVALID_ARGUMENT for bad input (NULL pointers, no parameters, an unknown kind,
 * geometry or body, a repeated parameter, a guess <= 0, a trajectory with nsteps < 1, bad options),
 * GRIT_ERR_NOT_FINITE for non-finite data, and the step's status when a rollout fails at the guesses;
 * msg (may be NULL) says why. A trial step whose rollout fails is rejected like one that raises the
 * cost. When the iteration limit is reached the best values found are returned with GRIT_OK and
 * result->converged = 0. */
GRIT_API grit_status grit_fit(const grit_model *model, const grit_trajectory *trajs, int ntraj, const grit_param *params,
                     int np, double *values, const grit_fit_options *options, grit_fit_result *result, double *std,
                     double *cov, char msg[GRIT_MESSAGE_SIZE]);

/* A new model equal to `model` except that parameter params[i] has the value values[i]: a contact
 * kind with index -1 sets every geometry's value (friction >= 0, stiffness > 0, dissipation >= 0), with
 * an index that geometry's; GRIT_PARAM_MASS sets body index's mass (> 0) and scales its rotational
 * inertia by the same factor (grit_step_derivatives' meaning of a mass parameter). Free it with
 * grit_model_free. */
GRIT_API grit_status grit_model_with_params(const grit_model *model, const grit_param *params, const double *values, int np,
                                   grit_model **out, char msg[GRIT_MESSAGE_SIZE]);

/* Simulates nsteps steps from x0 = (q, v) (nq + nv numbers) with controls ctrl (nsteps x nu, NULL:
 * zero) under `settings` (NULL: grit's defaults) and writes the states (nsteps + 1 rows of nq + nv,
 * the first x0) and, for each of them, the forward sensitivities in the tangent space:
 * S (2nv x np per state, row-major, may be NULL) = dx_k/dparams, with S_0 = 0 and
 * S_{k+1} = A_k S_k + P_k, and Sx (2nv x 2nv per state, may be NULL) = dx_k/dx0, with Sx_0 = I and
 * Sx_{k+1} = A_k Sx_k. states may be NULL. */
GRIT_API grit_status grit_rollout_sensitivities(const grit_model *model, const grit_step_settings *settings, const double *x0,
                                       const double *ctrl, int nsteps, const grit_param *params, int np,
                                       double *states, double *S, double *Sx, char msg[GRIT_MESSAGE_SIZE]);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_SYSID_H */
