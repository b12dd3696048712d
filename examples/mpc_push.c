/* SPDX-License-Identifier: Apache-2.0 */
/* mpc_push — closed-loop receding-horizon pushing (docs/ilqr.md, "Warm starts, receding horizon and
 * MPC"): a finger on two horizontal slides (x, y; force-controlled) pushes a free 10 cm box along the
 * ground to a target pose 20 cm away. The planner's model has the nominal friction; the plant it
 * controls has the friction off by a factor (--friction-scale, e.g. 0.8 or 1.2, on every geometry).
 * Each control period: the plant's state is measured, the plan is shifted, one warm-started iLQR
 * iteration (within a wall-time budget) re-plans, and the first control is applied to the plant.
 *
 * Prints the box's final position and yaw error and the replanning rate (re-solves per second of the
 * solver's wall time: median and 90th percentile), then one JSON line.
 *
 *   mpc_push [--friction-scale S] [--periods N] [--horizon N] [--iterations N] [--budget-ms T] [--finger-y M]
 *            [--quiet]
 *
 * Exit status 0 when the box ends within 1 cm of the target, 3 when not, 1 on errors, 2 on usage.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_box_scene.h"

#define MU_NOMINAL 0.4  /* every geometry; a pair takes the larger of its two */
#define TARGET_X 0.20   /* m: the box's target, from its start at the origin; yaw 0 */

typedef struct args {
  double friction_scale, budget_ms, finger_y;
  int periods, horizon, iterations, quiet;
} args;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define MPC_PUSH_USAGE                                                                                    \
  "usage: mpc_push [--friction-scale S] [--periods N] [--horizon N] [--iterations N] [--budget-ms T] "     \
  "[--finger-y M] [--quiet]\n"

/* A usage error: one line naming the option, then the usage; exit status 2. */
static int usage(const char *option, const char *why) {
  fprintf(stderr, "mpc_push: %s%s%s\n" MPC_PUSH_USAGE, option ? option : "", option ? " " : "", why);
  return 2;
}

/* A number filling all of v (strtod/strtol accept "" and trailing junk otherwise). */
static int number(const char *v, double *x) {
  char *end = NULL;
  *x = strtod(v, &end);
  return end != v && !*end;
}

static int parse(int argc, char **argv, args *a) {
  static const char *const with_value[] = {"--friction-scale", "--finger-y", "--periods", "--horizon",
                                           "--iterations",     "--budget-ms"};
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      fputs(MPC_PUSH_USAGE, stdout);
      return -1; /* exit 0 */
    }
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    int known = 0;
    for (size_t j = 0; j < sizeof with_value / sizeof *with_value; ++j) known |= !strcmp(o, with_value[j]);
    if (!known) return usage(o, "is not an option");
    if (i + 1 >= argc) return usage(o, "needs a value");
    double x = 0;
    if (!number(argv[++i], &x)) return usage(o, "needs a number");
    if (!strcmp(o, "--friction-scale")) {
      if (!(x > 0 && x < 10)) return usage(o, "must be in (0, 10)");
      a->friction_scale = x;
    } else if (!strcmp(o, "--finger-y")) {
      if (!(fabs(x) < PUSH_BOX_HALF)) return usage(o, "must be within the box's half width");
      a->finger_y = x;
    } else if (!strcmp(o, "--periods")) {
      if (!(x >= 1 && x <= 100000) || x != floor(x)) return usage(o, "must be an integer in [1, 100000]");
      a->periods = (int)x;
    } else if (!strcmp(o, "--horizon")) {
      if (!(x >= 2 && x <= 1000) || x != floor(x)) return usage(o, "must be an integer in [2, 1000]");
      a->horizon = (int)x;
    } else if (!strcmp(o, "--iterations")) {
      if (!(x >= 1 && x <= 1000000) || x != floor(x)) return usage(o, "must be an integer in [1, 1000000]");
      a->iterations = (int)x;
    } else { /* --budget-ms */
      if (!(x >= 0 && isfinite(x))) return usage(o, "must be a finite number >= 0 (0: no budget)");
      a->budget_ms = x;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  args a = {1.0, 0.0, 0.0, 150, 25, 1, 0};
  int rc = parse(argc, argv, &a);
  if (rc) return rc < 0 ? 0 : rc;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_model *model = push_box_build(MU_NOMINAL, 0, a.finger_y, msg);
  grit_model *plant_model = model ? push_box_build(MU_NOMINAL * a.friction_scale, 0, a.finger_y, msg) : NULL;
  if (!plant_model) {
    fprintf(stderr, "mpc_push: %s\n", msg);
    grit_model_free(model);
    return 1;
  }
  const int nq = grit_model_nq(model), nv = grit_model_nv(model), nu = grit_model_nu(model), nx = nq + nv;
  const int ndx = 2 * nv, N = a.horizon;
  /* tangent layout: finger x, y (0, 1), box linear (2..4) and angular (5..7); then the velocities */
  grit_data *plant = NULL;
  grit_ilqr_grit *adapter = NULL;
  grit_ilqr *solver = NULL;
  double *x = calloc((size_t)nx, sizeof(double)), *goal = calloc((size_t)nx, sizeof(double));
  double *Q = calloc((size_t)(ndx * ndx), sizeof(double)), *Qf = calloc((size_t)(ndx * ndx), sizeof(double));
  double *solve_ms = calloc((size_t)a.periods, sizeof(double));
  double R[4] = {1e-2, 0, 0, 1e-2}, umin[2] = {-PUSH_FORCE_MAX, -PUSH_FORCE_MAX}, umax[2] = {PUSH_FORCE_MAX, PUSH_FORCE_MAX};
  if (!x || !goal || !Q || !Qf || !solve_ms || grit_data_create(plant_model, &plant) != GRIT_OK ||
      grit_ilqr_grit_create(model, N, NULL, &adapter, msg) != GRIT_OK) {
    fprintf(stderr, "mpc_push: setup failed %s\n", msg);
    return 1;
  }
  grit_ilqr_grit_state(plant, x);
  memcpy(goal, x, sizeof(double) * (size_t)nx);
  const int box_q = PUSH_BOX_Q; /* the box's free joint in q: position (3), quaternion (4) */
  goal[box_q] += TARGET_X;
  /* the box's planar pose: x, y weighted, yaw (angular z) lighter; its velocity at the end */
  const double wpos = 20, wyaw = 1;
  Q[2 * ndx + 2] = Q[3 * ndx + 3] = wpos;
  Q[7 * ndx + 7] = wyaw;
  for (int i = 0; i < ndx * ndx; ++i) Qf[i] = 50 * Q[i];
  for (int i = nv + 2; i < nv + 5; ++i) Qf[i * ndx + i] = 20; /* box linear velocity */
  Qf[(nv + 7) * ndx + nv + 7] = 1;
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = grit_ilqr_grit_dynamics(adapter);
  p.horizon = N;
  p.x0 = x;
  p.x_goal = goal;
  p.Q = Q;
  p.Qf = Qf;
  p.R = R;
  p.u_min = umin;
  p.u_max = umax;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 100;
  o.tol_cost = 1e-4;
  if (grit_ilqr_create(&p, &o, &solver, msg) != GRIT_OK) {
    fprintf(stderr, "mpc_push: %s\n", msg);
    return 1;
  }
  /* The first plan, from a gentle push (the finger starts in contact, so the push has a gradient). */
  double *u0 = calloc((size_t)(N * nu), sizeof(double));
  for (int k = 0; u0 && k < N; ++k) u0[k * nu] = 3.0;
  grit_ilqr_result r;
  if (!u0 || grit_ilqr_set_controls(solver, u0) != GRIT_OK || grit_ilqr_solve(solver, &r) != GRIT_OK) {
    fprintf(stderr, "mpc_push: first plan: %s (%s)\n", grit_ilqr_last_error(solver), grit_ilqr_grit_last_error(adapter));
    return 1;
  }
  if (!a.quiet)
    printf("mpc_push: first plan %d iterations (%s), cost %.4g -> %.4g; plant friction %.2f (model %.2f)\n",
           r.iterations, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost, MU_NOMINAL * a.friction_scale,
           MU_NOMINAL);
  /* The loop: measure, shift, re-plan with a small budget, apply the first control. */
  o.max_iterations = a.iterations;
  o.max_time = 1e-3 * a.budget_ms;
  grit_ilqr_set_options(solver, &o);
  int failures = 0, flat = 0;
  double total_ms = 0;
  for (int t = 0; t < a.periods; ++t) {
    grit_ilqr_grit_state(plant, x);
    if (t > 0) {
      grit_ilqr_set_initial_state(solver, x);
      grit_ilqr_shift(solver);
      const double t0 = now_s();
      if (grit_ilqr_solve(solver, &r) != GRIT_OK) ++failures; /* keep the shifted plan */
      solve_ms[t - 1] = 1e3 * (now_s() - t0);
      total_ms += solve_ms[t - 1];
      flat += r.stop == GRIT_ILQR_ZERO_GRADIENT; /* the finger off the box: nothing to re-plan */
    }
    grit_status s = grit_data_set_ctrl(plant, grit_ilqr_controls(solver), nu);
    if (s == GRIT_OK) s = grit_step(plant);
    if (s != GRIT_OK) {
      fprintf(stderr, "mpc_push: plant step %d: %s\n", t, grit_data_last_error(plant));
      return 1;
    }
    if (!a.quiet && t % 25 == 0) {
      grit_ilqr_grit_state(plant, x);
      printf("t %5.2f s  box (%.4f, %.4f) m  yaw %+.4f rad  finger force (%+.2f, %+.2f) N\n", (t + 1) * 0.02,
             x[box_q], x[box_q + 1], push_box_yaw(x + box_q + 3), grit_ilqr_controls(solver)[0],
             grit_ilqr_controls(solver)[1]);
    }
  }
  grit_ilqr_grit_state(plant, x);
  const double ex = x[box_q] - goal[box_q], ey = x[box_q + 1] - goal[box_q + 1], err = hypot(ex, ey);
  const double yaw = push_box_yaw(x + box_q + 3);
  const int ns = a.periods - 1;
  qsort(solve_ms, (size_t)ns, sizeof(double), cmp_double);
  const double med = ns > 0 ? solve_ms[ns / 2] : 0, p90 = ns > 0 ? solve_ms[(9 * ns) / 10] : 0;
  if (!a.quiet)
    printf("box ends %.2f mm from the target (x %+.2f mm, y %+.2f mm), yaw %+.2f deg; %d re-plans at %.0f Hz "
           "(solver time %.1f ms in all); per re-plan: median %.2f ms, 90th percentile %.2f ms; %d ended with a "
           "zero gradient (finger off the box), %d failed\n",
           1e3 * err, 1e3 * ex, 1e3 * ey, yaw * 180 / 3.14159265358979, ns, total_ms > 0 ? 1e3 * ns / total_ms : 0,
           total_ms, med, p90, flat, failures);
  printf("{\"friction_scale\":%.3g,\"final_error_m\":%.6g,\"yaw_rad\":%.6g,\"replan_rate_hz\":%.4g,"
         "\"replan_median_ms\":%.4g,\"replan_p90_ms\":%.4g,\"zero_gradient\":%d,\"failed\":%d,\"horizon\":%d,"
         "\"iterations\":%d}\n",
         a.friction_scale, err, yaw, total_ms > 0 ? 1e3 * ns / total_ms : 0, med, p90, flat, failures, N, a.iterations);
  grit_ilqr_free(solver);
  grit_ilqr_grit_free(adapter);
  grit_data_free(plant);
  grit_model_free(plant_model);
  grit_model_free(model);
  free(x), free(goal), free(Q), free(Qf), free(solve_ms), free(u0);
  return err < 0.01 ? 0 : 3;
}
