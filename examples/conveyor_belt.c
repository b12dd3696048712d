/* SPDX-License-Identifier: Apache-2.0 */
/* conveyor_belt — the oscillating conveyor belt of seed 000, section XI-A.
 *
 * A 1 kg box with 5 cm sides rests on a belt that oscillates at 1 Hz with 0.2 m amplitude; mu = 0.7,
 * k = 1e7 N/m, d = 500 s/m (Lagged, Similar) or tau_d = 1e-3 s (SAP), dt = 0.01 s. The belt's peak
 * acceleration (7.9 m/s^2) exceeds mu g (6.9 m/s^2), so the box alternates between stiction and slip.
 *
 * The belt is a plane on a body of 1e6 kg on an actuated slide joint. Its motor force is set each step
 * so that the belt's velocity is A w sin(w t) (starting from rest; the peak acceleration at the start
 * and every half period); the box's friction perturbs it by under 1e-6. (A joint spring would not do:
 * springs are implicit in grit's step, as in seed 000, and damp an oscillator by about (w dt)^2 / 2 per
 * step.) What the paper shows, and this
 * program measures: during slip the Lagged model keeps the box on the belt (zero normal velocity, the
 * resting height), while Similar and SAP lift it by their gliding offsets mu dt |v_t| and
 * mu (dt + tau_d) |v_t|. The program prints the offsets against those predictions.
 *
 *   conveyor_belt [--model lagged|similar|sap] [--dt S] [--csv FILE] [--html FILE]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "scene_replay.h"
#include "scenes.h"

static const double BOX_HALF = SCENE_BOX_HALF, BOX_MASS = SCENE_BOX_MASS, MU = SCENE_BOX_MU;


int main(int argc, char **argv) {
  scene_options o = {GRIT_CONTACT_LAGGED, 0.01, NULL};
  const char *html = NULL;
  int rc = scene_parse_options(argc, argv, 0.05, &o, scene_html_option, &html, SCENE_HTML_USAGE);
  if (rc) return rc;
  const double dt = o.dt;
  const grit_contact_model model = o.model;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_outfile csv = {0}; /* --csv: renamed into place only after a good run */
  grit_status s = scene_conveyor_belt(dt, &m, msg);
  if (scene_start("conveyor_belt", s, msg, &m, &o, &d, &csv, "t,belt_x,belt_v,box_x,box_z,box_vx,box_vz,slip,normal_force"))
    return 1;

  /* qpos: belt x (1), box pos (3) + quat (4); qvel: belt v (1), box lin (3) + ang (3) */
  /* box centre height at rest: four corner contacts share the weight */
  const double T = 3.0, k = 1e7, rest = BOX_HALF - BOX_MASS * 9.81 / (4 * k);
  const double tau = model == GRIT_CONTACT_SAP ? 1e-3 : 0.0;
  int steps = (int)(T / dt + 0.5), slip_steps = 0, newton_sum = 0, newton_max = 0;
  scene_replay sr;
  scene_replay_begin(&sr, html, d, "conveyor_belt (seed 000 XI-A)");
  double max_vz_slip = 0, sum_ratio = 0, max_offset = 0;
  for (int n = 0; n < steps && s == GRIT_OK; ++n) {
    double u = scene_conveyor_belt_force(grit_data_time(d), dt);
    grit_data_set_ctrl(d, &u, 1);
    if ((s = grit_step(d)) != GRIT_OK) {
      fprintf(stderr, "conveyor_belt: step %d failed: %s\n", n, grit_data_last_error(d));
      break;
    }
    scene_replay_frame(&sr, d);
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    newton_sum += st.newton_iters;
    newton_max = st.newton_iters > newton_max ? st.newton_iters : newton_max;
    const double *q = grit_data_qpos(d), *qv = grit_data_qvel(d);
    const double slip = qv[1] - qv[0], offset = q[3] - rest;
    double fn = 0;
    for (int c = 0; c < grit_data_ncontacts(d); ++c) {
      grit_contact_info info;
      grit_data_contact(d, c, &info);
      fn += info.impulse[2] / dt;
    }
    /* quasi-steady slip (past the first second, |v_t| well above the stiction tolerance) */
    if (grit_data_time(d) > 1.0 && fabs(slip) > 0.02) {
      slip_steps++;
      max_vz_slip = fmax(max_vz_slip, fabs(qv[3]));
      max_offset = fmax(max_offset, offset);
      sum_ratio += offset / (MU * (dt + tau) * fabs(slip));
    }
    if (csv.f)
      fprintf(csv.f, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", grit_data_time(d), q[0], qv[0], q[1],
              q[3], qv[1], qv[3], slip, fn);
  }
  if (scene_csv_close("conveyor_belt", &csv, s == GRIT_OK) && s == GRIT_OK) s = GRIT_ERR_IO;
  printf("conveyor_belt (seed 000 XI-A), model %s, dt = %g s, %d steps\n", scene_model_name(model), dt, steps);
  printf("  steps in slip (t > 1 s, |v_t| > 2 cm/s): %d\n", slip_steps);
  printf("  during slip: max |normal velocity| %.3g m/s, max height offset %.3g m\n", max_vz_slip, max_offset);
  if (model != GRIT_CONTACT_LAGGED && slip_steps > 0)
    printf("  mean offset / (mu (dt%s) |v_t|) = %.3f (gliding artifact; 1 = the paper's estimate)\n",
           model == GRIT_CONTACT_SAP ? " + tau_d" : "", sum_ratio / slip_steps);
  printf("  Newton iterations per step: mean %.2f, max %d\n", (double)newton_sum / steps, newton_max);
  rc = scene_replay_end(&sr, "conveyor_belt", html);
  grit_data_free(d);
  grit_model_free(m);
  return s == GRIT_OK && !rc ? 0 : 1;
}
