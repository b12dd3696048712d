/* SPDX-License-Identifier: Apache-2.0 */
/* bench_derivatives — the cost of the step's Jacobians A = dx+/dx and B = dx+/du relative to the step,
 * on seed 000's falling sphere (rolling on the ground), and the clutter (40 objects, settled and in the
 * impact phase). Medians over repeats of: one step; then grit_step_derivatives for that step.
 * (The side-by-side comparison with MuJoCo's mjd_transitionFD on the same MJCF files is
 * bench/bench_mujoco.c, with the model loader.) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "grit/grit.h"
#include "scenes.h"

/* Steps `warm` times, then measures `reps` pairs (step, derivatives) and prints the medians. */
static void measure(const char *name, grit_model *m, grit_data *d, int warm, int reps) {
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m); /* x = (q, v, act) */
  for (int i = 0; i < warm; ++i)
    if (grit_step(d) != GRIT_OK) {
      fprintf(stderr, "%s: %s\n", name, grit_data_last_error(d));
      exit(1);
    }
  double *A = malloc(sizeof(double) * nx * nx), *B = malloc(sizeof(double) * (nx * nu + 1));
  double *ts = malloc(sizeof(double) * reps), *td = malloc(sizeof(double) * reps);
  long iters = 0;
  for (int r = 0; r < reps; ++r) {
    double t0 = now_us();
    grit_step(d);
    double t1 = now_us();
    grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL);
    double t2 = now_us();
    ts[r] = t1 - t0;
    td[r] = t2 - t1;
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    iters += st.newton_iters;
  }
  qsort(ts, (size_t)reps, sizeof(double), bench_cmp);
  qsort(td, (size_t)reps, sizeof(double), bench_cmp);
  printf("%-34s nv %4d  step %9.1f us  (Newton %.1f)  A,B %9.1f us  ratio %.2f\n", name, nv, ts[reps / 2],
         (double)iters / reps, td[reps / 2], td[reps / 2] / ts[reps / 2]);
  free(A), free(B), free(ts), free(td);
}

int main(void) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  for (int model = 0; model < 3; ++model) {
    const char *names[] = {"lagged", "similar", "sap"};
    char label[64];
    grit_step_settings st = grit_default_step_settings();
    st.contact_model = model;
    if (scene_falling_sphere(1e-3, &m, msg) != GRIT_OK || grit_data_create(m, &d) != GRIT_OK) return 1;
    grit_data_set_step_settings(d, &st);
    double v[6] = {2, 0, 0, 0, 0, 0};
    grit_data_set_qvel(d, v, 6);
    snprintf(label, sizeof label, "falling sphere, rolling (%s)", names[model]);
    measure(label, m, d, 300, 201);
    grit_data_free(d);
    grit_model_free(m);
    if (scene_clutter(40, 2e-3, &m, msg) != GRIT_OK || grit_data_create(m, &d) != GRIT_OK) return 1;
    grit_data_set_step_settings(d, &st);
    snprintf(label, sizeof label, "clutter 40, impacts (%s)", names[model]);
    measure(label, m, d, 200, 51);
    snprintf(label, sizeof label, "clutter 40, settled (%s)", names[model]);
    measure(label, m, d, 1200, 51);
    grit_data_free(d);
    grit_model_free(m);
  }
  return 0;
}
