/* SPDX-License-Identifier: Apache-2.0 */
/* push_problem.h — the arm-pushes-ball planning problem of seed 000's section XII-D, set up once for
 * the example (arm_push_ball.c) and the benchmark (bench/bench_ilqr.c), so both solve the same thing.
 *
 * Cost (the weights of the public reference, Kurtz & Lin 2022): sum_k dt (e' Q e + u' R u) + e_N' Qf e_N
 * with e = x (-) x_goal; Q weighs the ball's position 100, the arm's joint rates 1 and the ball's velocity
 * 0.1 (x 10 in Qf); R = 0.01 I. grit_ilqr's costs carry a factor 1/2, hence the weights are doubled
 * here. The reference sums its running terms per knot; here they are weighted by dt (a time integral,
 * so the weights do not depend on the step), which keeps the final velocity terms strong enough to stop
 * the ball at the end (docs/ilqr.md compares the two).
 * Task: the final constraint "ball's centre at the target" (grit_ilqr's augmented Lagrangian), because
 * under this cost alone the cheapest plans stop 8-19 cm short (docs/ilqr.md).
 * Initial guess: 0.9 x gravity compensation at the start state. */
#ifndef GRIT_EXAMPLES_PUSH_PROBLEM_H
#define GRIT_EXAMPLES_PUSH_PROBLEM_H

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"

typedef struct push_problem {
  grit_model *model;
  grit_mjcf_info info;
  grit_step_settings settings; /* the file's, with the chosen contact model */
  int nq, nv, nu, nx, ndx, N, arm_dofs;
  int ball_q, ball_v;          /* where the ball's free joint starts in q and in v */
  double dt, ball_start[3], ball_target[3];
  double *x0, *goal, *Q, *Qf, *R, *u_guess, *u_min, *u_max;
  double *C_final;             /* 3 x ndx: rows picking the ball's final position out of the error */
  int constrain;               /* 1 (default): the final constraint C_final e_N = 0 is part of the problem */
} push_problem;

/* Loads the model (its key "start" gives x0) and builds the problem over horizon_s seconds. Returns 0,
 * or 1 with the reason in msg. */
int push_problem_setup(push_problem *p, const char *model_path, grit_contact_model contact, double horizon_s,
                       char msg[GRIT_MESSAGE_SIZE]);
void push_problem_free(push_problem *p);

/* A grit_ilqr_problem over the given dynamics (pointers into p). */
grit_ilqr_problem push_problem_ilqr(const push_problem *p, grit_ilqr_dynamics dynamics);

/* The solver options the example, its benchmark and its test share: grit_ilqr's defaults with a relative
 * cost tolerance of 1e-4 (far below what moves the ball a millimetre), the constraint met to 1 mm, at
 * most PUSH_MAX_ITERATIONS iterations and `nthreads` threads. */
#define PUSH_MAX_ITERATIONS 500
grit_ilqr_options push_problem_options(int nthreads);

/* Creates the grit adapter (*adapter) and the iLQR solver (*solver) for p with options o, started from
 * p's guess. Returns 0, or 1 with the reason in msg (nothing is left allocated). */
int push_problem_solver(const push_problem *p, const grit_ilqr_options *o, grit_ilqr_grit **adapter,
                        grit_ilqr **solver, char msg[GRIT_MESSAGE_SIZE]);

/* Distance (m) of the ball's centre in state x from the target. */
double push_ball_error(const push_problem *p, const double *x);

#endif
