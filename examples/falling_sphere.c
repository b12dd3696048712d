/* SPDX-License-Identifier: Apache-2.0 */
/* falling_sphere — the falling sphere of seed 000, section XI-B: build a model, make data, step, read
 * the state and the contacts, free.
 *
 * A 0.5 kg steel sphere, 5 cm in diameter, falls from 5 cm above the ground with a horizontal speed
 * U0 = 2 m/s; friction mu = 0.5, stiffness k = 1e7 N/m, Hunt & Crossley dissipation d = 500 s/m (SAP:
 * tau_d = 1e-3 s). On impact it slides, and friction spins it up until it rolls at 5/7 U0.
 *
 * Closed forms printed for comparison. Sliding on the ground from rest in z, the sphere reaches rolling
 * after 2 U0 / (7 mu g). Falling onto the ground, the impact's normal impulse m v_z adds a friction
 * impulse mu m v_z at once (the impact is nearly plastic at d = 500 s/m), which shortens the slide to
 * (2 U0 / 7 - mu v_z) / (mu g). Either way the final speed is 5/7 U0.
 *
 *   falling_sphere [--model lagged|similar|sap] [--dt S] [--csv FILE] [--html FILE]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "scene_replay.h"
#include "scenes.h"

static const double RADIUS = SCENE_SPHERE_RADIUS, HEIGHT = SCENE_SPHERE_HEIGHT, U0 = 2.0, MU = SCENE_SPHERE_MU;


int main(int argc, char **argv) {
  scene_options o = {GRIT_CONTACT_LAGGED, 1e-3, NULL};
  const char *html = NULL;
  int rc = scene_parse_options(argc, argv, 0.1, &o, scene_html_option, &html, SCENE_HTML_USAGE);
  if (rc) return rc;
  const double dt = o.dt;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_outfile csv = {0}; /* --csv: renamed into place only after a good run */
  grit_status s = scene_falling_sphere(dt, &m, msg);
  if (scene_start("falling_sphere", s, msg, &m, &o, &d, &csv, "t,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,normal_impulse"))
    return 1;
  const double v0[6] = {U0, 0, 0, 0, 0, 0};
  grit_data_set_qvel(d, v0, 6);

  /* Step 0.4 s; record first contact (a positive normal impulse), the vertical speed just before it,
   * and the first time the contact point's slip speed |v_x - r w_y| stays below 1 mm/s. */
  const double g = 9.81, T = 0.4;
  double t_contact = -1, t_roll = -1, vz_impact = 0, max_pen = 0;
  int steps = (int)(T / dt + 0.5), newton_sum = 0, newton_max = 0;
  scene_replay sr;
  scene_replay_begin(&sr, html, d, "falling_sphere (seed 000 XI-B)");
  for (int k = 0; k < steps; ++k) {
    const double vz_before = grit_data_qvel(d)[2];
    if ((s = grit_step(d)) != GRIT_OK) {
      fprintf(stderr, "falling_sphere: step %d failed: %s\n", k, grit_data_last_error(d));
      break;
    }
    scene_replay_frame(&sr, d);
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    newton_sum += st.newton_iters;
    newton_max = st.newton_iters > newton_max ? st.newton_iters : newton_max;
    const double *q = grit_data_qpos(d), *v = grit_data_qvel(d), t = grit_data_time(d);
    double gn = 0;
    for (int c = 0; c < grit_data_ncontacts(d); ++c) {
      grit_contact_info info;
      grit_data_contact(d, c, &info);
      gn += info.impulse[2];
    }
    if (t_contact < 0 && gn > 0) {
      t_contact = t - dt;
      vz_impact = -vz_before;
    }
    max_pen = fmax(max_pen, RADIUS - q[2]);
    /* angular velocity of a free joint is in the body frame: rotate it to the world */
    double w[3];
    grit_quat_rotate(w, q + 3, v + 3);
    const double slip = fabs(v[0] - RADIUS * w[1]);
    if (t_contact >= 0 && t_roll < 0 && slip < 1e-3) t_roll = t;
    if (csv.f) {
      fprintf(csv.f, "%.17g", t);
      for (int i = 0; i < 7; ++i) fprintf(csv.f, ",%.17g", q[i]);
      for (int i = 0; i < 6; ++i) fprintf(csv.f, ",%.17g", v[i]);
      fprintf(csv.f, ",%.17g\n", gn);
    }
  }
  if (scene_csv_close("falling_sphere", &csv, s == GRIT_OK) && s == GRIT_OK) s = GRIT_ERR_IO;

  const double t_slide = 2 * U0 / (7 * MU * g), t_slide_impact = (2 * U0 / 7 - MU * vz_impact) / (MU * g);
  printf("falling_sphere (seed 000 XI-B), model %s, dt = %g s, %d steps\n", scene_model_name(o.model), dt, steps);
  printf("  first contact at t = %.4f s, impact speed %.3f m/s (free fall: %.3f m/s)\n", t_contact, vz_impact,
         sqrt(2 * g * HEIGHT));
  printf("  rolling after %.4f s of contact; closed form with the impact impulse %.4f s (without: %.4f s)\n",
         t_roll - t_contact, t_slide_impact, t_slide);
  printf("  final speed %.4f m/s; closed form 5/7 U0 = %.4f m/s\n", grit_data_qvel(d)[0], 5.0 / 7.0 * U0);
  printf("  max penetration %.3g m; Newton iterations per step: mean %.2f, max %d\n", max_pen,
         (double)newton_sum / steps, newton_max);
  rc = scene_replay_end(&sr, "falling_sphere", html);
  grit_data_free(d);
  grit_model_free(m);
  return s == GRIT_OK && !rc ? 0 : 1;
}
