/* SPDX-License-Identifier: Apache-2.0 */
/* bench_clutter — time per step and Newton iterations of the clutter case (seed 000 XII-A: 40
 * objects, dt = 2 ms) with the Hessian factored densely (LAPACK) and by the block-sparse Cholesky
 * (blockchol.h), for each contact model. Both paths solve the same problems to the same tolerance, so the trajectories (and the
 * iteration counts) agree up to round-off; the times show which path wins at nv = 240.
 *
 *   bench_clutter [--time T]   (default 1.5 s: the impacts and most of the settling) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "grit/grit.h"
#include "scenes.h"

int main(int argc, char **argv) {
  double T = 1.5;
  if (argc == 3 && !strcmp(argv[1], "--time")) T = atof(argv[2]);
  const double dt = 2e-3;
  const int steps = (int)(T / dt + 0.5);
  printf("clutter, 40 objects (nv = 240), dt = %g s, %d steps\n", dt, steps);
  printf("%-8s %-8s %12s %12s %12s\n", "model", "path", "ms/step", "newton_mean", "newton_max");
  const char *names[] = {"lagged", "similar", "sap"};
  for (int model = 0; model < 3; ++model)
    for (int path = 0; path < 2; ++path) {
      char msg[GRIT_MESSAGE_SIZE];
      grit_model *m;
      grit_data *d;
      if (scene_clutter(40, dt, &m, msg) != GRIT_OK || grit_data_create(m, &d) != GRIT_OK) {
        fprintf(stderr, "bench_clutter: %s\n", msg);
        return 1;
      }
      grit_step_settings s = grit_default_step_settings();
      s.contact_model = model;
      s.dense_max_nv = path == 0 ? 1 << 20 : 0;
      grit_data_set_step_settings(d, &s);
      long iters = 0;
      int maxit = 0;
      const double t0 = now_us();
      for (int n = 0; n < steps; ++n) {
        if (grit_step(d) != GRIT_OK) {
          fprintf(stderr, "bench_clutter: %s\n", grit_data_last_error(d));
          return 1;
        }
        grit_step_stats st;
        grit_data_step_stats(d, &st);
        iters += st.newton_iters;
        maxit = st.newton_iters > maxit ? st.newton_iters : maxit;
      }
      const double ms = 1e-3 * (now_us() - t0) / steps;
      printf("%-8s %-8s %12.3f %12.2f %12d\n", names[model], path == 0 ? "dense" : "block", ms,
             (double)iters / steps, maxit);
      grit_data_free(d);
      grit_model_free(m);
    }
  return 0;
}
