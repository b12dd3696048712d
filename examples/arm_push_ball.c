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
 * no gradient through a contact that never happens). grit_ilqr's costs carry a factor 1/2, hence the
 * factors 2 below.
 *
 * Prints one line per iteration and, last, one JSON object; writes the optimal trajectory as CSV
 * (t, q[nq], v[nv], u[nu] per knot; the last row has no control).
 *
 *   arm_push_ball [--contact lagged|similar|sap] [--horizon S] [--threads N] [--max-iter N]
 *                 [--csv FILE] [--model FILE.xml] [--quiet]
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
#include "push_problem.h"
#include "scenes.h"

#ifndef GRIT_MODELS_DIR
#define GRIT_MODELS_DIR "examples/models"
#endif

typedef struct args {
  grit_contact_model contact;
  double horizon_s;
  int threads, max_iter, quiet;
  double tol;
  const char *csv, *model;
} args;

static int usage(const char *why) {
  fprintf(stderr,
          "arm_push_ball: %s\nusage: arm_push_ball [--contact lagged|similar|sap] [--horizon S] [--threads N] "
          "[--max-iter N] [--csv FILE] [--model FILE.xml] [--quiet]\n",
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
    } else if (!strcmp(o, "--tol")) {
      a->tol = strtod(v, &end);
      if (*end || !(a->tol >= 0 && a->tol < 1)) return usage("--tol must be in [0, 1)");
    } else if (!strcmp(o, "--csv")) {
      a->csv = v;
    } else if (!strcmp(o, "--model")) {
      a->model = v;
    } else {
      return usage("unknown option");
    }
  }
  return 0;
}

static void log_iteration(void *ctx, const grit_ilqr_iteration *it) {
  if (*(const int *)ctx) return;
  printf("iter %3d  cost %11.6f  reduction %10.3e (expected %10.3e)  alpha %5.3f  mu %8.1e  ff %8.2e  "
         "clamped %2d  ms rollout/deriv/backward %6.1f %6.1f %5.1f\n",
         it->iteration, it->cost, it->actual, it->expected, it->alpha, it->regularization, it->feedforward,
         it->clamped, 1e3 * it->t_rollout, 1e3 * it->t_derivatives, 1e3 * it->t_backward);
  fflush(stdout);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  args a = {GRIT_CONTACT_LAGGED, 0.5, 2, 100, 0, 1e-4, "arm_push_ball.csv", GRIT_MODELS_DIR "/arm_push_ball.xml"};
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
  grit_ilqr_options o = push_problem_options(a.threads);
  o.max_iterations = a.max_iter;
  o.tol_cost = a.tol;
  o.log = log_iteration;
  o.log_ctx = &a.quiet;
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
    return 1;
  }
  const double wall = now_s() - t_start;

  const double *xs = grit_ilqr_states(solver), *us = grit_ilqr_controls(solver);
  const double *xN = xs + (size_t)N * nx, *ball = xN + pp.ball_q;
  const double err = push_ball_error(&pp, xN);
  int rc_out = 0;
  if (a.csv && a.csv[0]) {
    FILE *f = fopen(a.csv, "w");
    if (!f) {
      fprintf(stderr, "arm_push_ball: cannot write %s\n", a.csv);
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
      fclose(f);
    }
  }
  if (!a.quiet)
    printf("ball at (%.4f, %.4f, %.4f) m after %.2f s, %.1f mm from the target; solve %.2f s (rollout %.2f, "
           "derivatives %.2f, backward %.2f)\n",
           ball[0], ball[1], ball[2], N * pp.dt, 1e3 * err, r.t_total, r.t_rollout, r.t_derivatives, r.t_backward);
  printf("{\"arm_dofs\":%d,\"iterations\":%d,\"converged\":%s,\"final_cost\":%.6g,\"ball_target_error_m\":%.6g,"
         "\"wall_s\":%.4g,\"contact_model\":\"%s\"}\n",
         pp.arm_dofs, r.iterations, r.converged ? "true" : "false", r.cost, err, wall, scene_model_name(a.contact));

  grit_ilqr_free(solver);
  grit_ilqr_grit_free(adapter);
  push_problem_free(&pp);
  return rc_out;
}
