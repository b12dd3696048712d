/* SPDX-License-Identifier: Apache-2.0 */
/* bench_ilqr — iLQR on the arm pushing a ball (examples/push_problem.h): time per iteration split into
 * rollout (with line search) / dynamics Jacobians / backward pass, on 1 and 2 threads, and the rate of
 * warm-started receding-horizon re-solves (1 and 2 iterations per control period).
 *
 *   bench_ilqr [--contact lagged|similar|sap] [--repeats R] [--model FILE.xml]
 *
 * Medians over R full solves per thread count; the receding-horizon loop runs 50 control periods,
 * applying each plan's first control to a separate simulation of the same model. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_problem.h"

#ifndef GRIT_MODELS_DIR
#define GRIT_MODELS_DIR "examples/models"
#endif

typedef struct split {
  int n;
  double roll[512], deriv[512], back[512];
} split;

static void record(void *ctx, const grit_ilqr_iteration *it) {
  split *s = ctx;
  if (s->n < 512) {
    s->roll[s->n] = 1e3 * it->t_rollout;
    s->deriv[s->n] = 1e3 * it->t_derivatives;
    s->back[s->n] = 1e3 * it->t_backward;
    s->n++;
  }
}

int main(int argc, char **argv) {
  grit_contact_model contact = GRIT_CONTACT_LAGGED;
  int repeats = 3;
  const char *path = GRIT_MODELS_DIR "/arm_push_ball.xml";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--contact"))
      contact = !strcmp(argv[i + 1], "sap") ? GRIT_CONTACT_SAP
                : !strcmp(argv[i + 1], "similar") ? GRIT_CONTACT_SIMILAR : GRIT_CONTACT_LAGGED;
    else if (!strcmp(argv[i], "--repeats"))
      repeats = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
    else if (!strcmp(argv[i], "--model"))
      path = argv[i + 1];
  }
  char msg[GRIT_MESSAGE_SIZE];
  push_problem pp;
  if (push_problem_setup(&pp, path, contact, 0.5, msg)) {
    fprintf(stderr, "bench_ilqr: %s\n", msg);
    return 1;
  }
  printf("bench_ilqr: arm pushing a ball, %d steps of %g s, nv = %d, nu = %d; medians over %d solves\n", pp.N,
         pp.dt, pp.nv, pp.nu, repeats);
  printf("%8s %6s %9s %8s | %12s %12s %12s %12s | %s\n", "threads", "iters", "solve_s", "err_mm", "rollout_ms",
         "deriv_ms", "backward_ms", "iter_ms", "deriv speed-up");
  double deriv1 = 0;
  for (int threads = 1; threads <= 2; ++threads) {
    double *total = calloc((size_t)repeats, sizeof(double));
    split s;
    int iters = 0;
    double err = 0;
    for (int rep = 0; rep < repeats; ++rep) {
      grit_ilqr_options o = push_problem_options(threads);
      memset(&s, 0, sizeof s);
      o.log = record;
      o.log_ctx = &s;
      grit_ilqr_grit *a = NULL;
      grit_ilqr *solver = NULL;
      grit_ilqr_result r;
      if (push_problem_solver(&pp, &o, &a, &solver, msg) || grit_ilqr_solve(solver, &r)) {
        fprintf(stderr, "bench_ilqr: solve failed: %s\n", solver ? grit_ilqr_last_error(solver) : msg);
        return 1;
      }
      total[rep] = r.t_total;
      iters = r.iterations;
      err = push_ball_error(&pp, grit_ilqr_states(solver) + (size_t)pp.N * pp.nx);
      grit_ilqr_free(solver);
      grit_ilqr_grit_free(a);
    }
    const int n = s.n; /* the per-iteration split of the last solve (all solves are identical) */
    const double roll = bench_median(s.roll, n), deriv = bench_median(s.deriv, n), back = bench_median(s.back, n);
    if (threads == 1) deriv1 = deriv;
    printf("%8d %6d %9.3f %8.2f | %12.3f %12.3f %12.3f %12.3f | %.2fx\n", threads, iters,
           bench_median(total, repeats), 1e3 * err, roll, deriv, back, roll + deriv + back,
           deriv > 0 ? deriv1 / deriv : 0.0);
    free(total);
  }

  /* Receding horizon: solve once, then per control period measure, shift, re-solve a little, apply u_0. */
  for (int per = 1; per <= 2; ++per) {
    grit_ilqr_options o = push_problem_options(2);
    grit_ilqr_grit *a = NULL;
    grit_ilqr *solver = NULL;
    grit_data *plant = NULL;
    grit_ilqr_result r;
    if (push_problem_solver(&pp, &o, &a, &solver, msg) || grit_ilqr_solve(solver, &r) ||
        grit_data_create(pp.model, &plant) || grit_data_set_step_settings(plant, &pp.settings)) {
      fprintf(stderr, "bench_ilqr: setup failed\n");
      return 1;
    }
    o.max_iterations = per;
    grit_ilqr_set_options(solver, &o);
    grit_data_set_qpos(plant, pp.x0, pp.nq);
    grit_data_set_qvel(plant, pp.x0 + pp.nq, pp.nv);
    enum { PERIODS = 50 };
    double t[PERIODS], x[64];
    for (int k = 0; k < PERIODS; ++k) {
      grit_data_set_ctrl(plant, grit_ilqr_controls(solver), pp.nu);
      if (grit_step(plant)) {
        fprintf(stderr, "bench_ilqr: plant step failed\n");
        return 1;
      }
      grit_ilqr_grit_state(plant, x);
      const double t0 = now_us();
      grit_ilqr_set_initial_state(solver, x);
      grit_ilqr_shift(solver);
      grit_ilqr_solve(solver, &r);
      t[k] = now_us() - t0;
    }
    grit_ilqr_grit_state(plant, x);
    const double med = bench_median(t, PERIODS);
    printf("receding horizon, %d iteration(s) per period, 2 threads: median %.2f ms (max %.2f ms) = %.0f Hz; "
           "ball %.1f mm from the target after %d periods\n",
           per, 1e-3 * med, 1e-3 * t[PERIODS - 1], 1e6 / med, 1e3 * push_ball_error(&pp, x), PERIODS);
    grit_ilqr_free(solver);
    grit_ilqr_grit_free(a);
    grit_data_free(plant);
  }
  push_problem_free(&pp);
  return 0;
}
