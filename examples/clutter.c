/* SPDX-License-Identifier: Apache-2.0 */
/* clutter — the clutter case of seed 000, section XII-A: 40 spheres and boxes of 10 cm dropped in four
 * columns into an 80 cm box; k = 1e7 N/m, d = 10 s/m (SAP: tau_d = 1e-4 s), mu = 1, dt = 2 ms, 3 s.
 * Prints the Newton iterations per step (mean and max), the contacts, the time per step, and whether
 * the pile came to rest; optionally the time series (iterations, contacts, kinetic energy) as CSV.
 *
 *   clutter [--model lagged|similar|sap] [--regularize] [--objects N] [--dt S] [--time T] [--csv FILE] [--html FILE]
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "scene_replay.h"
#include "scenes.h"

/* clutter's own options. */
typedef struct clutter_options {
  int regularize, objects;
  double time;
  const char *html;
} clutter_options;

static int clutter_option(int argc, char **argv, int i, void *ctx) {
  clutter_options *c = ctx;
  if (scene_html_option(argc, argv, i, &c->html)) return 2;
  if (!strcmp(argv[i], "--regularize")) {
    c->regularize = 1;
    return 1;
  }
  if (i + 1 >= argc) return 0;
  if (!strcmp(argv[i], "--objects")) c->objects = atoi(argv[i + 1]);
  else if (!strcmp(argv[i], "--time")) c->time = atof(argv[i + 1]);
  else return 0;
  return 2;
}

int main(int argc, char **argv) {
  scene_options o = {GRIT_CONTACT_LAGGED, 2e-3, NULL};
  clutter_options c = {0, 40, 3.0, NULL};
  int rc = scene_parse_options(argc, argv, 0.05, &o, clutter_option, &c, " [--regularize] [--objects N] [--time T]" SCENE_HTML_USAGE);
  if (rc) return rc;
  if (!(c.time > 0 && c.time <= 1000) || c.objects < 1 || c.objects > 4000) {
    fprintf(stderr, "clutter: need 0 < time <= 1000 and 1 <= objects <= 4000\n");
    return 2;
  }
  const double dt = o.dt, T = c.time;
  const int objects = c.objects;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_outfile csv = {0}; /* --csv: renamed into place only after a good run */
  grit_status s = scene_clutter(objects, dt, &m, msg);
  if (scene_start("clutter", s, msg, &m, &o, &d, &csv, "t,newton_iters,ls_iters,contacts,cond_estimate,kinetic_energy"))
    return 1;
  grit_step_settings settings = grit_data_step_settings(d);
  settings.regularize_lagged = c.regularize;
  grit_data_set_step_settings(d, &settings);
  const int steps = (int)(T / dt + 0.5);
  long newton_sum = 0;
  int newton_max = 0, contacts_max = 0;
  double ke = 0;
  scene_replay sr;
  scene_replay_begin(&sr, c.html, d, "clutter (seed 000 XII-A)");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int n = 0; n < steps; ++n) {
    if ((s = grit_step(d)) != GRIT_OK) {
      fprintf(stderr, "clutter: step %d (t = %.3f s) failed: %s\n", n, grit_data_time(d), grit_data_last_error(d));
      break;
    }
    scene_replay_frame(&sr, d);
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    newton_sum += st.newton_iters;
    newton_max = st.newton_iters > newton_max ? st.newton_iters : newton_max;
    contacts_max = st.ncontacts > contacts_max ? st.ncontacts : contacts_max;
    if (csv.f) {
      grit_energy(d, &ke, NULL);
      fprintf(csv.f, "%.6f,%d,%d,%d,%.6g,%.9g\n", grit_data_time(d), st.newton_iters, st.ls_iters, st.ncontacts,
              st.cond_estimate, ke);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (scene_csv_close("clutter", &csv, s == GRIT_OK) && s == GRIT_OK) s = GRIT_ERR_IO;
  grit_energy(d, &ke, NULL);
  const double wall = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("clutter (seed 000 XII-A), %d objects, model %s%s, dt = %g s, %g s simulated\n", objects,
         scene_model_name(o.model), c.regularize ? " (regularized, eq. 26)" : "", dt, T);
  printf("  Newton iterations per step: mean %.2f, max %d; contacts (candidates) up to %d\n",
         (double)newton_sum / steps, newton_max, contacts_max);
  printf("  kinetic energy at the end %.3g J (%s); %.3g ms per step\n", ke, ke < 1e-3 ? "at rest" : "moving",
         1e3 * wall / steps);
  rc = scene_replay_end(&sr, "clutter", c.html);
  grit_data_free(d);
  grit_model_free(m);
  return s == GRIT_OK && !rc ? 0 : 1;
}
