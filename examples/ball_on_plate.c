/* SPDX-License-Identifier: Apache-2.0 */
/* ball_on_plate — an LQR designed on grit's linearization at a rolling contact keeps a ball at the
 * centre of a tilting plate (docs/lqr.md).
 *
 * A plate on a gimbal (two hinges with motors: pitch, roll) carries a free ball. The ball settles on
 * the plate's centre; grit_linearize gives A and B of one step at that contact state, in which the
 * plate-ball contact couples the plate's tilt to the ball's rolling. The LQR is designed on the 12
 * tangent directions the plate can act on (the ball's orientation and its spin about the normal are
 * left out: the plate cannot change them and they change nothing; see docs/lqr.md). Two closed loops
 * run in grit for 3 s: a push of 0.2 m/s from the centre, and a start 5 cm from it. Prints the final
 * distance to the centre and the largest tilt; exits with 1 if either run ends 5 mm or more away.
 *
 *   ball_on_plate [--model lagged|similar|sap] [--dt S] [--csv FILE]   (the CSV is the 5 cm run's)
 */
#include <math.h>
#include <stdio.h>

#include "grit_ilqr/lqr.h"
#include "lqr_systems.h"
#include "scenes.h"

static const double PI = 3.14159265358979323846;

int main(int argc, char **argv) {
  scene_options o = {GRIT_CONTACT_LAGGED, 0.002, NULL};
  int rc = scene_parse_options(argc, argv, 0.01, &o, NULL, NULL, NULL);
  if (rc) return rc;
  lqr_ball_plate r = {0};
  r.dt = o.dt;
  r.contact_model = o.model;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = lqr_ball_plate_design(&r, msg);
  if (s != GRIT_OK) {
    fprintf(stderr, "ball_on_plate: %s (%s)\n", msg, grit_status_string(s));
    lqr_ball_plate_free(&r);
    return 1;
  }
  printf("ball_on_plate: %.0f cm %.1f kg ball on a %.0f cm plate, model %s, dt = %g s\n", 200 * LQR_BP_BALL_RADIUS,
         LQR_BP_BALL_MASS, 200 * LQR_BP_PLATE_HALF, scene_model_name(o.model), o.dt);
  printf("  equilibrium: ball at rest on the centre, %d contact, one step moves it by %.2g\n", r.ncontacts_eq,
         r.eq_residual);
  printf("  A, B: grit_linearize at the contact; dropped directions feed the kept ones by at most %.2g\n",
         r.decoupling);
  printf("  LQR on %d of %d directions: Riccati converged in %d iterations\n", LQR_BP_NR, LQR_BP_N,
         r.riccati_iterations);
  printf("  spectral radius: open loop %.6f, closed loop %.6f (full state with the dropped directions: %.6f)\n",
         r.open_radius, r.closed_radius, r.full_closed_radius);
  printf("  K (pitch) = [");
  for (int j = 0; j < LQR_BP_NR; ++j) printf(" %.3g", r.K[j]);
  printf(" ]\n  K (roll)  = [");
  for (int j = 0; j < LQR_BP_NR; ++j) printf(" %.3g", r.K[LQR_BP_NR + j]);
  printf(" ]\n");

  const double c30 = cos(PI / 6), s30 = sin(PI / 6);
  lqr_ball_plate_run runs[2] = {
      {{0, 0}, {0.2 * c30, 0.2 * s30}, 3.0, 0, 0, 0, 0, 0},       /* a push from the centre */
      {{0.05 * 0.6, 0.05 * 0.8}, {0, 0}, 3.0, 0, 0, 0, 0, 0}};    /* 5 cm away, at rest */
  const char *names[2] = {"push 0.2 m/s from the centre", "start 5 cm from the centre"};
  int ok = 1;
  for (int i = 0; i < 2 && s == GRIT_OK; ++i) {
    grit_outfile csv = {0}; /* renamed into place only after a good run */
    char why[GRIT_MESSAGE_SIZE];
    if (i == 1 && o.csv) {
      if (grit_outfile_open(&csv, o.csv, why) != GRIT_OK) {
        fprintf(stderr, "ball_on_plate: %s\n", why);
        ok = 0;
        break;
      }
      fprintf(csv.f, "t,pitch,roll,ball_x,ball_y,ball_z,u_pitch,u_roll,distance\n");
    }
    s = lqr_ball_plate_simulate(&r, &runs[i], csv.f, msg);
    if (scene_csv_close("ball_on_plate", &csv, s == GRIT_OK)) ok = 0;
    if (s != GRIT_OK) {
      fprintf(stderr, "ball_on_plate: %s (%s)\n", msg, grit_status_string(s));
      ok = 0;
      break;
    }
    const lqr_ball_plate_run *u = &runs[i];
    printf("  %s: after %.1f s the ball is %.3g mm from the centre (farthest %.1f mm); largest tilt %.2f deg "
           "(%.4f rad), largest torque %.3f N m, %d steps without contact\n",
           names[i], u->duration, 1e3 * u->final_distance, 1e3 * u->max_distance, u->max_tilt * 180 / PI, u->max_tilt,
           u->max_torque, u->lost_contact_steps);
    ok &= u->final_distance < 0.005;
  }
  if (s == GRIT_OK)
    printf("{\"push_final_distance_mm\": %.3g, \"offset_final_distance_mm\": %.3g, \"max_tilt_deg\": %.4f, "
           "\"closed_loop_radius\": %.6f}\n",
           1e3 * runs[0].final_distance, 1e3 * runs[1].final_distance,
           fmax(runs[0].max_tilt, runs[1].max_tilt) * 180 / PI, r.closed_radius);
  lqr_ball_plate_free(&r);
  return ok && s == GRIT_OK ? 0 : 1;
}
