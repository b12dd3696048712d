/* SPDX-License-Identifier: Apache-2.0 */
/* push_problem.c — the arm-pushes-ball problem (see push_problem.h). */
#include "push_problem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double BALL_TARGET[3] = {0.8, 0.0, 0.1};

void push_problem_free(push_problem *p) {
  if (!p) return;
  grit_mjcf_info_free(&p->info);
  grit_model_free(p->model);
  free(p->x0), free(p->goal), free(p->Q), free(p->Qf), free(p->R), free(p->u_guess), free(p->u_min);
  free(p->u_max), free(p->C_final);
  memset(p, 0, sizeof *p);
}

int push_problem_setup(push_problem *p, const char *path, grit_contact_model contact, double horizon_s,
                       char msg[GRIT_MESSAGE_SIZE]) {
  memset(p, 0, sizeof *p);
  if (grit_mjcf_load_file(path, &p->model, &p->info, msg) != GRIT_OK) return 1;
  grit_model *m = p->model;
  p->nq = grit_model_nq(m), p->nv = grit_model_nv(m), p->nu = grit_model_nu(m);
  p->nx = p->nq + p->nv, p->ndx = 2 * p->nv;
  p->dt = grit_model_options(m).timestep;
  p->N = (int)(horizon_s / p->dt + 0.5);
  p->settings = p->info.settings;
  p->settings.contact_model = contact;
  const int nv = p->nv, nu = p->nu, ndx = p->ndx, N = p->N;
  if (N < 1) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "the horizon %g s is shorter than one step of %g s", horizon_s, p->dt);
    push_problem_free(p);
    return 1;
  }
  /* The arm: the hinge joints; the ball: the one free joint. */
  p->ball_q = p->ball_v = -1;
  for (int j = 0; j < grit_model_njoint(m); ++j) {
    if (grit_model_joint_type(m, j) == GRIT_JOINT_FREE) {
      p->ball_q = grit_model_joint_qposadr(m, j);
      p->ball_v = grit_model_joint_dofadr(m, j);
    } else if (grit_model_joint_type(m, j) == GRIT_JOINT_HINGE) {
      ++p->arm_dofs;
    }
  }
  const int key = grit_mjcf_key_index(&p->info, "start");
  if (p->ball_q < 0 || key < 0 || nu != p->arm_dofs) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "%s needs one motor per hinge joint, one free ball and a key \"start\"", path);
    push_problem_free(p);
    return 1;
  }
  p->x0 = calloc((size_t)p->nx, sizeof(double));
  p->goal = calloc((size_t)p->nx, sizeof(double));
  p->Q = calloc((size_t)(ndx * ndx), sizeof(double));
  p->Qf = calloc((size_t)(ndx * ndx), sizeof(double));
  p->R = calloc((size_t)(nu * nu), sizeof(double));
  p->C_final = calloc((size_t)(3 * ndx), sizeof(double));
  p->u_guess = calloc((size_t)(N * nu), sizeof(double));
  p->u_min = calloc((size_t)nu, sizeof(double));
  p->u_max = calloc((size_t)nu, sizeof(double));
  double *bias = calloc((size_t)nv, sizeof(double));
  grit_data *d = NULL;
  if (!p->x0 || !p->goal || !p->Q || !p->Qf || !p->R || !p->C_final || !p->u_guess || !p->u_min || !p->u_max || !bias ||
      grit_data_create(m, &d) != GRIT_OK || grit_mjcf_apply_key(&p->info, key, d) != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "cannot set up the problem: %s", d ? grit_data_last_error(d) : "out of memory");
    free(bias);
    grit_data_free(d);
    push_problem_free(p);
    return 1;
  }
  memcpy(p->x0, grit_data_qpos(d), sizeof(double) * (size_t)p->nq);
  memcpy(p->x0 + p->nq, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  memcpy(p->goal, p->x0, sizeof(double) * (size_t)p->nx);
  memcpy(p->goal + p->ball_q, BALL_TARGET, sizeof BALL_TARGET);
  memcpy(p->ball_start, p->x0 + p->ball_q, sizeof p->ball_start);
  memcpy(p->ball_target, BALL_TARGET, sizeof BALL_TARGET);

  /* Weights in the tangent space dx = (dq, dv): the ball's free joint has 3 linear then 3 angular dofs. */
  for (int i = 0; i < nv; ++i) {
    const int is_ball = i >= p->ball_v && i < p->ball_v + 6, ball_lin = i >= p->ball_v && i < p->ball_v + 3;
    const double wq = ball_lin ? 100.0 : 0.0, wv = is_ball ? 0.1 : 1.0;
    p->Q[i * ndx + i] = 2 * p->dt * wq;
    p->Q[(nv + i) * ndx + nv + i] = 2 * p->dt * wv;
    p->Qf[i * ndx + i] = 2 * wq;
    p->Qf[(nv + i) * ndx + nv + i] = 2 * (is_ball ? 10 * wv : wv);
  }
  for (int i = 0; i < nu; ++i) p->R[i * nu + i] = 2 * p->dt * 0.01;
  /* The task: the ball's centre at the target at the end, as a constraint (its rows pick the ball's
   * position out of the tangent-space error). */
  for (int i = 0; i < 3; ++i) p->C_final[i * ndx + p->ball_v + i] = 1;
  p->constrain = 1;

  /* Effort limits, and the guess: 0.9 x the torques holding the arm still against gravity (the bias
   * forces at zero velocity), through each motor's gear. */
  grit_bias_forces(d, bias);
  for (int i = 0; i < nu; ++i) {
    grit_actuator_def act;
    grit_model_actuator(m, i, &act);
    p->u_min[i] = act.ctrl_limited ? act.ctrl_range[0] : -INFINITY;
    p->u_max[i] = act.ctrl_limited ? act.ctrl_range[1] : INFINITY;
    const double ug = bias[grit_model_joint_dofadr(m, act.joint)] / act.gear;
    for (int k = 0; k < N; ++k) p->u_guess[k * nu + i] = 0.9 * ug;
  }
  free(bias);
  grit_data_free(d);
  return 0;
}

grit_ilqr_problem push_problem_ilqr(const push_problem *p, grit_ilqr_dynamics dynamics) {
  grit_ilqr_problem q;
  memset(&q, 0, sizeof q);
  q.dynamics = dynamics;
  q.horizon = p->N;
  q.x0 = p->x0;
  q.x_goal = p->goal;
  q.Q = p->Q;
  q.Qf = p->Qf;
  q.R = p->R;
  q.u_min = p->u_min;
  q.u_max = p->u_max;
  if (p->constrain) {
    q.nc_final = 3;
    q.C_final = p->C_final;
  }
  return q;
}

grit_ilqr_options push_problem_options(int nthreads) {
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = PUSH_MAX_ITERATIONS;
  o.tol_cost = 1e-4;
  o.tol_constraint = 1e-3; /* m: the ball within 1 mm of the target */
  o.nthreads = nthreads;
  return o;
}

int push_problem_solver(const push_problem *p, const grit_ilqr_options *o, grit_ilqr_grit **adapter,
                        grit_ilqr **solver, char msg[GRIT_MESSAGE_SIZE]) {
  *solver = NULL;
  if (grit_ilqr_grit_create(p->model, p->N, &p->settings, adapter, msg) != GRIT_OK) return 1;
  grit_ilqr_problem q = push_problem_ilqr(p, grit_ilqr_grit_dynamics(*adapter));
  if (grit_ilqr_create(&q, o, solver, msg) != GRIT_OK || grit_ilqr_set_controls(*solver, p->u_guess) != GRIT_OK) {
    if (*solver) snprintf(msg, GRIT_MESSAGE_SIZE, "%s", grit_ilqr_last_error(*solver));
    grit_ilqr_free(*solver);
    grit_ilqr_grit_free(*adapter);
    *solver = NULL;
    *adapter = NULL;
    return 1;
  }
  return 0;
}

double push_ball_error(const push_problem *p, const double *x) {
  double s = 0;
  for (int i = 0; i < 3; ++i) s += pow(x[p->ball_q + i] - p->ball_target[i], 2);
  return sqrt(s);
}
