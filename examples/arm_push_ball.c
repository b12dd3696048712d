/* SPDX-License-Identifier: Apache-2.0 */
/* arm_push_ball — contact-implicit trajectory optimization (seed 000, section XII-D): a torque-controlled
 * 7-joint Kinova Gen3 arm pushes a ball 30 cm across the ground to a target, planned by iLQR over grit's
 * step and its exact derivatives, with no contact sequence given.
 *
 * The setup follows the public reference (Kurtz & Lin 2022, "Contact-implicit trajectory optimization
 * with hydroelastic contact and iLQR"): ball radius 0.1 m, mass 0.1 kg, from (0.5, 0, 0.1) m to
 * (0.8, 0, 0.1) m; dt = 10 ms; horizon 0.5 s; cost
 *     sum_k dt (e_k' Q e_k + u_k' R u_k) + e_N' Qf e_N,   e = x (-) x_goal,
 * with Q weighing the ball's position 100, the arm's joint rates 1 and the ball's velocity 0.1 (x 10 in
 * Qf), R = 0.01 I; initial guess 0.9 x gravity compensation, so that the arm sags onto the ball (there is
 * no gradient through a contact that never happens). The ball's final position is a constraint (met to
 * 1 mm by grit_ilqr's augmented Lagrangian): under the cost alone the cheapest plans leave the ball
 * 8-19 cm short (docs/ilqr.md); --unconstrained solves that problem instead.
 *
 * Prints one line per iteration and, last, one JSON object; writes the optimal trajectory as CSV
 * (t, q[nq], v[nv], u[nu] per knot; the last row has no control) and as a replay page (--html; default:
 * the CSV's name with .html): the arm, the ball and the target in 3-D with the contact forces of each step
 * (recomputed by stepping from each knot), and plots of the iLQR cost and regularization per iteration,
 * the joint torques and the ball's distance to the target (docs/viewer.md).
 *
 *   arm_push_ball [--contact lagged|similar|sap] [--horizon S] [--threads N] [--max-iter N] [--tol T]
 *                 [--unconstrained] [--csv FILE] [--html FILE] [--model FILE.xml] [--quiet]
 *                 [--inner-max N] [--kink-alpha A (default 2^-7)] [--stall-short N (default 10)]
 *                 [--reg-reset 0|1 (default 1)] [--rel-tol-scale X (default 0.1)]
 * (the last five: grit_ilqr_options.inner_max_iterations, kink_alpha, stall_short_steps,
 * reg_reset_on_update, and the Newton rel_tol x X, for bench/arm_push_ensemble.py; docs/ilqr.md, stops 13-16)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "grit/replay.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_problem.h"
#include "scenes.h"

#ifndef GRIT_MODELS_DIR
#define GRIT_MODELS_DIR "examples/models"
#endif

typedef struct args {
  grit_contact_model contact;
  double horizon_s;
  int threads, max_iter, quiet, unconstrained, inner_max; /* inner_max < 0: the solver's default */
  double tol, rel_tol_scale; /* rel_tol_scale: the Newton rel_tol x this (a probe of the solve's sensitivity) */
  double kink_alpha;         /* grit_ilqr_options.kink_alpha (0: off) */
  const char *csv, *model, *html; /* html NULL: from csv; "": none */
  int stall_short;                /* grit_ilqr_options.stall_short_steps (0: off) */
  int reg_reset;                  /* grit_ilqr_options.reg_reset_on_update */
} args;

/* The iterations as the log callback saw them, for the replay's plots. */
typedef struct iter_log {
  int quiet, n, cap;
  double *cost, *regularization;
} iter_log;

static int usage(const char *why) {
  fprintf(stderr,
          "arm_push_ball: %s\nusage: arm_push_ball [--contact lagged|similar|sap] [--horizon S] [--threads N] "
          "[--max-iter N] [--inner-max N] [--kink-alpha A] [--stall-short N] [--reg-reset 0|1] [--tol T] [--rel-tol-scale X] [--unconstrained] [--csv FILE] [--html FILE] [--model FILE.xml] [--quiet]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args *a) {
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    if (!strcmp(o, "--unconstrained")) {
      a->unconstrained = 1;
      continue;
    }
    if (!v) return usage("an option is missing its value");
    ++i;
    if (!strcmp(o, "--contact")) {
      if (!strcmp(v, "lagged")) a->contact = GRIT_CONTACT_LAGGED;
      else if (!strcmp(v, "similar")) a->contact = GRIT_CONTACT_SIMILAR;
      else if (!strcmp(v, "sap")) a->contact = GRIT_CONTACT_SAP;
      else return usage("--contact must be lagged, similar or sap");
    } else if (!strcmp(o, "--horizon")) {
      a->horizon_s = strtod(v, &end);
      if (*end || !(a->horizon_s > 0 && a->horizon_s <= 10)) return usage("--horizon must be in (0, 10] s");
    } else if (!strcmp(o, "--threads")) {
      a->threads = (int)strtol(v, &end, 10);
      if (*end || a->threads < 1 || a->threads > 64) return usage("--threads must be in [1, 64]");
    } else if (!strcmp(o, "--max-iter")) {
      a->max_iter = (int)strtol(v, &end, 10);
      if (*end || a->max_iter < 1) return usage("--max-iter must be >= 1");
    } else if (!strcmp(o, "--inner-max")) {
      a->inner_max = (int)strtol(v, &end, 10);
      if (*end || a->inner_max < 0) return usage("--inner-max must be >= 0");
    } else if (!strcmp(o, "--kink-alpha")) {
      a->kink_alpha = strtod(v, &end);
      if (*end || !(a->kink_alpha >= 0 && a->kink_alpha < 1)) return usage("--kink-alpha must be in [0, 1)");
    } else if (!strcmp(o, "--stall-short")) {
      a->stall_short = (int)strtol(v, &end, 10);
      if (*end || a->stall_short < 0) return usage("--stall-short must be >= 0");
    } else if (!strcmp(o, "--reg-reset")) {
      a->reg_reset = (int)strtol(v, &end, 10);
      if (*end || (a->reg_reset != 0 && a->reg_reset != 1)) return usage("--reg-reset must be 0 or 1");
    } else if (!strcmp(o, "--tol")) {
      a->tol = strtod(v, &end);
      if (*end || !(a->tol >= 0 && a->tol < 1)) return usage("--tol must be in [0, 1)");
    } else if (!strcmp(o, "--rel-tol-scale")) {
      a->rel_tol_scale = strtod(v, &end);
      if (*end || !(a->rel_tol_scale > 0 && a->rel_tol_scale <= 1e3)) return usage("--rel-tol-scale must be in (0, 1000]");
    } else if (!strcmp(o, "--csv")) {
      a->csv = v;
    } else if (!strcmp(o, "--html")) {
      a->html = v;
    } else if (!strcmp(o, "--model")) {
      a->model = v;
    } else {
      return usage("unknown option");
    }
  }
  return 0;
}

static void log_iteration(void *ctx, const grit_ilqr_iteration *it) {
  iter_log *l = ctx;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    double *c = realloc(l->cost, sizeof(double) * (size_t)cap), *r = c ? realloc(l->regularization, sizeof(double) * (size_t)cap) : NULL;
    if (c) l->cost = c;
    if (r) l->regularization = r, l->cap = cap;
  }
  if (l->n < l->cap) {
    l->cost[l->n] = it->cost;
    l->regularization[l->n++] = it->regularization;
  }
  if (l->quiet) return;
  printf("iter %3d  cost %11.6f  reduction %10.3e (expected %10.3e)  alpha %8.6f  mu %8.1e  ff %8.2e  "
         "gradient %8.2e  trials %2d  rejected %d  clamped %2d  target miss %8.2e m (rho %7.1e)  "
         "ms rollout/deriv/backward %6.1f %6.1f %5.1f\n",
         it->iteration, it->cost, it->actual, it->expected, it->alpha, it->regularization, it->feedforward,
         it->gradient, it->line_search_trials, it->rejected, it->clamped, it->violation, it->penalty,
         1e3 * it->t_rollout, 1e3 * it->t_derivatives, 1e3 * it->t_backward);
  fflush(stdout);
}

/* The plan as a replay page: the knots' positions, each step's contacts recomputed from its knot with its
 * control (the solver's rollout is the same step, so these are the plan's contacts), the target as a marker,
 * and plots. Returns 0, or 1 with the reason in msg. */
static int write_replay(const push_problem *pp, const double *xs, const double *us, const iter_log *log,
                        grit_contact_model contact, const char *path, char msg[GRIT_MESSAGE_SIZE]) {
  const int N = pp->N, nx = pp->nx, nq = pp->nq, nv = pp->nv, nu = pp->nu;
  const grit_model *m = pp->model;
  grit_replay *r = NULL;
  grit_data *d = NULL;
  double *t = malloc(sizeof(double) * (size_t)(N + 1)), *y = malloc(sizeof(double) * (size_t)(N + 1) * (size_t)(nu + 1));
  double *iters = malloc(sizeof(double) * (size_t)(log->n + 1));
  int rc = 0;
  if (!t || !y || !iters || grit_replay_create(m, &r) != GRIT_OK || grit_data_create(m, &d) != GRIT_OK ||
      grit_data_set_step_settings(d, &pp->settings) != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "replay: out of memory");
    rc = 1;
  }
  char title[128];
  snprintf(title, sizeof title, "arm_push_ball: the iLQR plan (%s contact model)", scene_model_name(contact));
  if (!rc) grit_replay_set_title(r, title);
  /* colours: the arm steel blue, the ball orange, the target a translucent green ball */
  const int ball_geom = grit_model_geom_index(m, "ball");
  grit_geom_def ball_def = grit_default_geom_def();
  if (ball_geom >= 0) grit_model_geom(m, ball_geom, &ball_def);
  for (int g = 0; !rc && g < grit_model_ngeom(m); ++g) {
    grit_geom_def def;
    grit_model_geom(m, g, &def);
    static const double arm[4] = {0.42, 0.52, 0.66, 1}, ball[4] = {0.95, 0.50, 0.10, 1};
    if (g == ball_geom) grit_replay_set_geom_color(r, g, ball);
    else if (def.body != 0 || def.shape.type != GRIT_GEOM_PLANE) grit_replay_set_geom_color(r, g, arm);
  }
  grit_replay_marker target = {"target", GRIT_GEOM_SPHERE, {ball_def.shape.size[0], 0, 0}, {0, 0, 0}, {1, 0, 0, 0},
                               {0.15, 0.75, 0.30, 0.35}};
  memcpy(target.pos, pp->ball_target, sizeof target.pos);
  if (!rc && grit_replay_add_marker(r, &target) != GRIT_OK) rc = 1;
  if (!rc && grit_replay_add_frame(r, 0, xs, nq, NULL, 0, -1) != GRIT_OK) rc = 1;
  for (int k = 0; !rc && k < N; ++k) {
    const double *x = xs + (size_t)k * nx, *x1 = x + nx;
    grit_status s = grit_data_set_qpos(d, x, nq);
    if (s == GRIT_OK) s = grit_data_set_qvel(d, x + nq, nv);
    if (s == GRIT_OK) s = grit_data_set_ctrl(d, us + (size_t)k * nu, nu);
    if (s == GRIT_OK) s = grit_step(d);
    if (s == GRIT_OK) s = grit_data_set_time(d, (k + 1) * pp->dt);
    if (s == GRIT_OK) s = grit_data_set_qpos(d, x1, nq);
    s = s == GRIT_OK ? grit_replay_add_data(r, d, 1) : grit_replay_add_frame(r, (k + 1) * pp->dt, x1, nq, NULL, 0, -1);
    if (s != GRIT_OK) rc = 1;
  }
  /* plots: the solver's iterations, the torques, the ball's distance to the target */
  for (int i = 0; !rc && i < log->n; ++i) iters[i] = i + 1;
  const grit_replay_series cost = {"cost", iters, log->cost, log->n}, reg = {"mu", iters, log->regularization, log->n};
  if (!rc && log->n > 0 &&
      (grit_replay_add_plot(r, "iLQR cost per iteration", "iteration", "cost", GRIT_REPLAY_LOG_Y, &cost, 1) != GRIT_OK ||
       grit_replay_add_plot(r, "iLQR regularization per iteration (zero: no point)", "iteration", "mu",
                            GRIT_REPLAY_LOG_Y, &reg, 1) != GRIT_OK))
    rc = 1;
  grit_replay_series torque[16];
  char names[16][16];
  for (int k = 0; k <= N; ++k) t[k] = k * pp->dt;
  for (int i = 0; !rc && i < nu && i < 16; ++i) {
    for (int k = 0; k < N; ++k) y[(size_t)i * N + k] = us[(size_t)k * nu + i];
    snprintf(names[i], sizeof names[i], "joint %d", i + 1);
    torque[i] = (grit_replay_series){names[i], t, y + (size_t)i * N, N};
  }
  if (!rc && nu > 0 &&
      grit_replay_add_plot(r, "Joint torques", "t (s)", "torque (N m)", GRIT_REPLAY_TIME_AXIS, torque, nu < 16 ? nu : 16) != GRIT_OK)
    rc = 1;
  for (int k = 0; !rc && k <= N; ++k) y[k] = 1e3 * push_ball_error(pp, xs + (size_t)k * nx);
  const grit_replay_series dist = {"ball to target", t, y, N + 1};
  if (!rc && grit_replay_add_plot(r, "Ball's distance to the target", "t (s)", "distance (mm)", GRIT_REPLAY_TIME_AXIS,
                                  &dist, 1) != GRIT_OK)
    rc = 1;
  if (!rc && grit_replay_write_html(r, path) != GRIT_OK) rc = 1;
  if (rc && r && !msg[0]) snprintf(msg, GRIT_MESSAGE_SIZE, "%s", grit_replay_last_error(r));
  grit_replay_free(r);
  grit_data_free(d);
  free(t), free(y), free(iters);
  return rc;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  /* rel_tol x 0.1: a plan's rollouts are solved ten times tighter than a simulation's steps (docs/ilqr.md,
   * stop 16: the line search compares costs a looser solve's error moves; 286 Lagged iterations at x 1) */
  args a = {GRIT_CONTACT_LAGGED, 0.5, 2, PUSH_MAX_ITERATIONS, 0, 0, -1, 1e-4, 0.1, 0.0078125, "arm_push_ball.csv",
            GRIT_MODELS_DIR "/arm_push_ball.xml", NULL, 10, 1};
  int rc = parse(argc, argv, &a);
  if (rc) return rc;
  const double t_start = now_s();
  char msg[GRIT_MESSAGE_SIZE] = "";
  push_problem pp;
  if (push_problem_setup(&pp, a.model, a.contact, a.horizon_s, msg)) {
    fprintf(stderr, "arm_push_ball: %s\n", msg);
    return 1;
  }
  const int N = pp.N, nx = pp.nx, nq = pp.nq, nv = pp.nv, nu = pp.nu;
  pp.constrain = !a.unconstrained;
  pp.settings.rel_tol *= a.rel_tol_scale;
  grit_ilqr_options o = push_problem_options(a.threads);
  o.max_iterations = a.max_iter;
  o.tol_cost = a.tol;
  /* Jacobians across a contact event after a short step (docs/ilqr.md, stop 14) */
  o.kink_alpha = a.kink_alpha;
  /* a run of only short steps ends stalled: the inner run while the ball misses, else the solve (stop 15) */
  o.stall_short_steps = a.stall_short;
  o.reg_reset_on_update = a.reg_reset; /* and mu restarts when the multipliers move (stop 15) */
  if (a.inner_max >= 0) o.inner_max_iterations = a.inner_max;
  o.log = log_iteration;
  iter_log ilog = {a.quiet, 0, 0, NULL, NULL};
  o.log_ctx = &ilog;
  grit_ilqr_grit *adapter = NULL;
  grit_ilqr *solver = NULL;
  grit_ilqr_result r;
  if (push_problem_solver(&pp, &o, &adapter, &solver, msg)) {
    fprintf(stderr, "arm_push_ball: %s\n", msg);
    push_problem_free(&pp);
    return 1;
  }
  if (!a.quiet)
    printf("arm_push_ball: %d-joint arm, ball %.2f m -> %.2f m, %d steps of %g s, contact model %s, %d thread(s)\n",
           pp.arm_dofs, pp.ball_start[0], pp.ball_target[0], N, pp.dt, scene_model_name(a.contact), a.threads);
  if (grit_ilqr_solve(solver, &r) != GRIT_OK) {
    fprintf(stderr, "arm_push_ball: %s (%s)\n", grit_ilqr_last_error(solver), grit_ilqr_grit_last_error(adapter));
    grit_ilqr_free(solver);
    grit_ilqr_grit_free(adapter);
    push_problem_free(&pp);
    free(ilog.cost), free(ilog.regularization);
    return 1;
  }
  const double wall = now_s() - t_start;

  const double *xs = grit_ilqr_states(solver), *us = grit_ilqr_controls(solver);
  const double *xN = xs + (size_t)N * nx, *ball = xN + pp.ball_q;
  const double err = push_ball_error(&pp, xN);
  int rc_out = 0;
  if (a.csv && a.csv[0]) {
    grit_outfile out; /* renamed into place only once complete */
    char why[GRIT_MESSAGE_SIZE];
    FILE *f = grit_outfile_open(&out, a.csv, why) == GRIT_OK ? out.f : NULL;
    if (!f) {
      fprintf(stderr, "arm_push_ball: %s\n", why);
      rc_out = 1;
    } else {
      fprintf(f, "t");
      for (int i = 0; i < nq; ++i) fprintf(f, ",q%d", i);
      for (int i = 0; i < nv; ++i) fprintf(f, ",v%d", i);
      for (int i = 0; i < nu; ++i) fprintf(f, ",u%d", i);
      fprintf(f, "\n");
      for (int k = 0; k <= N; ++k) {
        fprintf(f, "%.6g", k * pp.dt);
        for (int i = 0; i < nx; ++i) fprintf(f, ",%.17g", xs[(size_t)k * nx + i]);
        for (int i = 0; i < nu; ++i) {
          if (k < N) fprintf(f, ",%.17g", us[(size_t)k * nu + i]);
          else fprintf(f, ",");
        }
        fprintf(f, "\n");
      }
      rc_out = scene_csv_close("arm_push_ball", &out, 1);
    }
  }
  /* the page: --html, or the CSV's name with .html, or arm_push_ball.html */
  char html[4096];
  if (a.html) snprintf(html, sizeof html, "%s", a.html);
  else if (a.csv && a.csv[0]) {
    snprintf(html, sizeof html, "%s", a.csv);
    char *dot = strrchr(html, '.'), *slash = strrchr(html, '/');
    if (dot && (!slash || dot > slash)) *dot = '\0';
    strncat(html, ".html", sizeof html - strlen(html) - 1);
  } else snprintf(html, sizeof html, "arm_push_ball.html");
  if (html[0]) {
    msg[0] = '\0';
    if (write_replay(&pp, xs, us, &ilog, a.contact, html, msg)) {
      fprintf(stderr, "arm_push_ball: cannot write %s: %s\n", html, msg);
      rc_out = 1;
    } else if (!a.quiet) {
      printf("replay page: %s\n", html);
    }
  }
  if (!a.quiet)
    printf("ball at (%.4f, %.4f, %.4f) m after %.2f s, %.1f mm from the target, moving at %.3f m/s; %d multiplier "
           "updates; solve %.2f s (rollout %.2f, derivatives %.2f, backward %.2f)\n",
           ball[0], ball[1], ball[2], N * pp.dt, 1e3 * err, hypot(hypot(xN[nq + pp.ball_v], xN[nq + pp.ball_v + 1]),
           xN[nq + pp.ball_v + 2]), r.multiplier_updates, r.t_total, r.t_rollout, r.t_derivatives, r.t_backward);
  printf("{\"arm_dofs\":%d,\"iterations\":%d,\"converged\":%s,\"final_cost\":%.6g,\"ball_target_error_m\":%.6g,"
         "\"wall_s\":%.4g,\"contact_model\":\"%s\",\"stop\":%d,\"no_step_iterations\":%d,\"rollouts\":%d,"
         "\"linearizations\":%d,\"rejected_line_searches\":%d,\"multiplier_updates\":%d,\"solve_s\":%.4g}\n",
         pp.arm_dofs, r.iterations, r.converged ? "true" : "false", r.cost, err, wall, scene_model_name(a.contact),
         (int)r.stop, r.no_step_iterations, r.rollouts, r.derivative_evaluations, r.rejected_line_searches,
         r.multiplier_updates, r.t_total);
  if (!a.quiet) printf("stop: %s\n", grit_ilqr_stop_string(r.stop));

  grit_ilqr_free(solver);
  grit_ilqr_grit_free(adapter);
  push_problem_free(&pp);
  free(ilog.cost), free(ilog.regularization);
  return rc_out;
}
