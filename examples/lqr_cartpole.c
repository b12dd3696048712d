/* SPDX-License-Identifier: Apache-2.0 */
/* lqr_cartpole — an LQR on grit's Jacobians balances a cart-pole (docs/lqr.md).
 *
 * The cart-pole is built with grit's builder: a cart on a slide joint with a motor, a pole on a hinge.
 * grit_linearize gives A and B of one step at the upright (x = 0, u = 0); the stationary LQR
 * (grit_ilqr_lqr_stationary) turns them into a gain K, and the closed loop u = K x is simulated in
 * grit from a 0.3 rad offset. Prints the design, the settling time (after it the pole stays within
 * 1 degree of the upright) and the largest force; exits with 1 if the pole does not end within 1
 * degree.
 *
 *   lqr_cartpole [--dt S] [--theta0 RAD] [--duration S] [--csv FILE]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lqr_systems.h"
#include "scenes.h"

static const double PI = 3.14159265358979323846;

int main(int argc, char **argv) {
  lqr_cartpole r;
  memset(&r, 0, sizeof r);
  r.dt = 0.01;
  r.theta0 = 0.3;
  r.duration = 6.0;
  const char *csv_path = NULL;
  for (int i = 1; i < argc; ++i) {
    char *end = NULL;
    if (i + 1 < argc && !strcmp(argv[i], "--dt")) {
      r.dt = strtod(argv[++i], &end);
    } else if (i + 1 < argc && !strcmp(argv[i], "--theta0")) {
      r.theta0 = strtod(argv[++i], &end);
    } else if (i + 1 < argc && !strcmp(argv[i], "--duration")) {
      r.duration = strtod(argv[++i], &end);
    } else if (i + 1 < argc && !strcmp(argv[i], "--csv")) {
      csv_path = argv[++i];
      continue;
    }
    if (!end || *end || !(r.dt > 0) || !(r.dt <= 0.1) || !(r.duration > 0) || !isfinite(r.theta0)) {
      fprintf(stderr, "usage: lqr_cartpole [--dt S (0, 0.1]] [--theta0 RAD] [--duration S] [--csv FILE]\n");
      return 2;
    }
  }
  grit_outfile csv = {0}; /* renamed into place only after a good run */
  char msg[GRIT_MESSAGE_SIZE];
  if (csv_path) {
    if (grit_outfile_open(&csv, csv_path, msg) != GRIT_OK) {
      fprintf(stderr, "lqr_cartpole: %s\n", msg);
      return 1;
    }
    fprintf(csv.f, "t,x,theta,xdot,thetadot,u\n");
  }
  grit_status s = lqr_cartpole_run(&r, csv.f, msg);
  if (scene_csv_close("lqr_cartpole", &csv, s == GRIT_OK)) return 1;
  if (s != GRIT_OK) {
    fprintf(stderr, "lqr_cartpole: %s (%s)\n", msg, grit_status_string(s));
    return 1;
  }
  printf("lqr_cartpole: %.1f kg cart, %.1f m %.1f kg pole, dt = %g s\n", LQR_CARTPOLE_CART_MASS,
         LQR_CARTPOLE_POLE_LENGTH, LQR_CARTPOLE_POLE_MASS, r.dt);
  printf("  A, B: grit_linearize at the upright; open-loop spectral radius %.6f (> 1: unstable)\n", r.open_radius);
  printf("  LQR: Riccati converged in %d iterations; K = [%.4g %.4g %.4g %.4g] (u = K (x, theta, xdot, thetadot))\n",
         r.riccati_iterations, r.K[0], r.K[1], r.K[2], r.K[3]);
  printf("  closed-loop spectral radius of A + B K: %.6f\n", r.closed_radius);
  printf("  from theta = %.3f rad: settling time %.3f s (|theta| < 1 deg after it), largest force %.2f N\n", r.theta0,
         r.settling_time, r.max_force);
  printf("  after %.1f s: theta = %.4f deg, cart at %.4f m\n", r.duration, r.final_angle * 180 / PI, r.final_cart);
  printf("{\"settling_time_s\": %.4f, \"max_force_N\": %.4f, \"final_angle_deg\": %.6f, "
         "\"closed_loop_radius\": %.6f}\n",
         r.settling_time, r.max_force, r.final_angle * 180 / PI, r.closed_radius);
  return fabs(r.final_angle) < PI / 180 ? 0 : 1;
}
