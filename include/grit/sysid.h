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

/* Parameter kinds the fit adds to grit_step_derivatives' (grit_param.kind), differentiated by central
 * differences of each step (relative 1e-4 in log space: two more steps per such parameter and step).
 * grit_step_derivatives itself does not take them. */
/* SAP's dissipation time scale of geometry `index`, or of every geometry (-1), s */
#define GRIT_PARAM_TAU_D ((grit_param_kind)4)
/* the mean principal moment (trace / 3) of body `index`'s rotational inertia, kg m^2; the inertia is
 * scaled, its shape and axes kept */
#define GRIT_PARAM_INERTIA ((grit_param_kind)5)

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
  /* Added for measured data (grit_fit_timed; grit_fit uses them too). */
  double orientation_sigma;      /* weight 1/sigma of the rotational position errors of free and ball
                                    joints (rad); 0 (default): position_sigma */
  double angular_velocity_sigma; /* their angular velocities' (rad/s); 0 (default): velocity_sigma */
  double huber;                  /* > 0: Huber loss on each weighted residual with this threshold (in
                                    units of sigma; robust to outliers); 0 (default): least squares */
  int coarse_points;             /* coarse global stage before Levenberg-Marquardt: the cost at
                                    coarse_points values per parameter, log-spaced over
                                    [guess / coarse_span, guess * coarse_span] (a grid of
                                    coarse_points^np), the best one starts the fit; <= 1 (default): none */
  double coarse_span;            /* > 1; default 10 */
  int starts;                    /* multi-start (with the coarse stage): Levenberg-Marquardt from the
                                    guesses and from the starts - 1 best other grid points, each to its
                                    end; the lowest final cost wins. <= 1 (default): one run, from the
                                    coarse stage's best point */
  int covariance;                /* grit_fit_covariance: how std and cov are estimated; default
                                    GRIT_FIT_COV_RESIDUAL */
  int nthreads;                  /* threads rolling the segments out; <= 1 (default): the caller's only.
                                    Results are bitwise the same for any number (sums in a fixed order) */
  /* Sums buf[0..n) over every process of a distributed fit in place (e.g. MPI_Allreduce with MPI_SUM);
   * NULL (default): one process. Each process passes its own trajectories; all take the same steps and
   * return the same result. Called collectively: the same calls in the same order on every process. */
  void (*allreduce_sum)(double *buf, int n, void *ctx);
  void *allreduce_ctx;
  int traj_offset; /* with allreduce_sum: the index of this process's first trajectory among all the
                      processes' (they hold consecutive blocks, in order) */
  int traj_total;  /* with allreduce_sum: the trajectories of all processes. Sums are taken per
                      trajectory and added in this global order, so the result is bitwise the same for
                      any number of processes and threads */
} grit_fit_options;

/* Estimators of the parameters' covariance (grit_fit_options.covariance, docs/sysid.md). */
typedef enum grit_fit_covariance {
  GRIT_FIT_COV_RESIDUAL = 0, /* sigma2 (J^T J)^-1: exact when the residuals are independent with the
                                weights' relative sizes; the residual's size is estimated (sigma2) */
  GRIT_FIT_COV_SANDWICH = 1  /* (J^T J)^-1 (sum_t g_t g_t^T) (J^T J)^-1 with g_t the gradient of
                                trajectory t (initial states eliminated) times G/(G-1), G trajectories:
                                robust to misfit and to errors correlated within a trajectory; needs
                                more trajectories than parameters (else the residual estimate is used) */
} grit_fit_covariance;

/* Why the fit stopped (grit_fit_result.stop). */
typedef enum grit_fit_stop {
  GRIT_FIT_STOP_SMALL_DECREASE = 0, /* converged: an accepted step with lambda <= 1 lowered the cost by
                                       less than tol times the cost */
  GRIT_FIT_STOP_SMALL_STEP = 1,     /* converged: an accepted step with lambda <= 1 changed no
                                       log-parameter by more than sqrt(tol) */
  GRIT_FIT_STOP_MAX_ITERS = 2,      /* not converged: max_iters reached */
  GRIT_FIT_STOP_NO_DECREASE = 3     /* not converged: no step lowered the cost (lambda > 1e16), e.g. the
                                       rollouts' own tolerance hides a decrease smaller than tol */
} grit_fit_stop;

/* A short text for a grit_fit_stop ("small_decrease", "small_step", "max_iters", "no_decrease"). */
GRIT_API const char *grit_fit_stop_string(int stop);

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
  /* Added with grit_fit_timed. */
  int stop;            /* grit_fit_stop: why it stopped (converged is stop <= GRIT_FIT_STOP_SMALL_STEP) */
  int nidentified;     /* parameters the data determine (the others have an infinite std) */
  int covariance;      /* grit_fit_covariance the std and cov come from */
  int ntrajectories;   /* over every process */
  double coarse_cost;  /* the coarse stage's best cost (the guesses' cost without one) */
  int nstarts;         /* Levenberg-Marquardt runs (multi-start) */
  int start;           /* the one whose result this is: 0 the guesses, i the i-th best grid point */
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

/* One trajectory of measurements taken at their own times: jitter, clock drift, dropped samples and
 * sample periods that are a multiple of the model's step are all accepted. Each sample is compared with
 * the simulation at its own time, interpolated linearly between the two steps around it (in the tangent
 * space). A row of qpos (or qvel) holding a NaN is left out of the loss (masked). */
typedef struct grit_timed_trajectory {
  int nsamples;       /* >= 2 */
  const double *t;    /* nsamples times (s), increasing; NULL: t_k = k h */
  const double *qpos; /* nsamples x nq (quaternions need not be exactly unit) */
  const double *qvel; /* nsamples x nv */
  const double *ctrl; /* nsamples x nu: row k is held from t_k until t_{k+1}; NULL: zero */
} grit_timed_trajectory;

/* grit_fit on timed trajectories, each its own initial state (the first sample without a NaN starts
 * it). options->segment_steps = 0 makes each trajectory one segment (single shooting from a fitted
 * initial state). Segments hold the samples within segment_steps steps of their first one.
 * identified (np ints, may be NULL) receives 1 for a parameter the data determine, 0 for one they do
 * not (its information is singular, or its log-space deviation exceeds 1: not even known within a
 * factor e); an unidentified parameter gets an infinite std and is held at its value in the others'
 * covariance. Other arguments and errors as grit_fit; ntraj may be 0 on a process of a distributed fit
 * (options->allreduce_sum) when the others have trajectories. */
GRIT_API grit_status grit_fit_timed(const grit_model *model, const grit_timed_trajectory *trajs, int ntraj,
                           const grit_param *params, int np, double *values, const grit_fit_options *options,
                           grit_fit_result *result, double *std, double *cov, int *identified,
                           char msg[GRIT_MESSAGE_SIZE]);

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
