/* bench_mujoco — grit and MuJoCo 2.2.2 side by side on the same MJCF files, in one run: time per step
 * and grit's Newton iterations, and the time of the one-step Jacobians A = dx+/dx, B = dx+/du: grit's
 * implicit derivatives against MuJoCo's mjd_transitionFD (centered, eps = 1e-6). Medians over the
 * measured steps; each engine steps its own trajectory from the file's initial state after a warm-up.
 *
 *   bench_mujoco [MODEL.xml ...]   (default: the falling sphere, the 7-joint arm and the clutter)
 *
 * MuJoCo is a reference peer here, never a dependency of the library. */
#define _POSIX_C_SOURCE 199309L
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "grit/grit.h"
#include "grit/mjcf.h"

static int bench(const char *path, int warm, int steps, int deriv_every) {
  char msg[GRIT_MESSAGE_SIZE], err[1000];
  grit_model *gm;
  grit_mjcf_info info;
  if (grit_mjcf_load_file(path, &gm, &info, msg) != GRIT_OK) {
    fprintf(stderr, "bench_mujoco: grit: %s\n", msg);
    return 1;
  }
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fprintf(stderr, "bench_mujoco: MuJoCo: %s\n", err);
    return 1;
  }
  grit_data *gd;
  grit_data_create(gm, &gd);
  grit_data_set_step_settings(gd, &info.settings);
  mjData *md = mj_makeData(mm);
  const int nv = grit_model_nv(gm), nu = grit_model_nu(gm), nx = 2 * nv;
  double *ts_g = malloc(sizeof(double) * steps), *ts_m = malloc(sizeof(double) * steps);
  int nd = steps / deriv_every + 1;
  double *td_g = malloc(sizeof(double) * nd), *td_m = malloc(sizeof(double) * nd);
  double *A = malloc(sizeof(double) * nx * nx), *B = malloc(sizeof(double) * (nx * nu + 1));
  mjtNum *Am = malloc(sizeof(mjtNum) * (2 * mm->nv + mm->na) * (2 * mm->nv + mm->na));
  mjtNum *Bm = malloc(sizeof(mjtNum) * ((2 * mm->nv + mm->na) * mm->nu + 1));
  long newton = 0;
  int kd = 0;
  for (int i = 0; i < warm; ++i) {
    grit_step(gd);
    mj_step(mm, md);
  }
  for (int i = 0; i < steps; ++i) {
    double t0 = now_us();
    if (grit_step(gd) != GRIT_OK) {
      fprintf(stderr, "bench_mujoco: grit step failed: %s\n", grit_data_last_error(gd));
      return 1;
    }
    double t1 = now_us();
    mj_step(mm, md);
    double t2 = now_us();
    ts_g[i] = t1 - t0;
    ts_m[i] = t2 - t1;
    grit_step_stats st;
    grit_data_step_stats(gd, &st);
    newton += st.newton_iters;
    if (i % deriv_every == 0) {
      double t3 = now_us();
      grit_step_derivatives(gd, A, nu ? B : NULL, NULL, 0, NULL);
      double t4 = now_us();
      mjd_transitionFD(mm, md, 1e-6, 1, Am, mm->nu ? Bm : NULL, NULL, NULL);
      double t5 = now_us();
      td_g[kd] = t4 - t3;
      td_m[kd++] = t5 - t4;
    }
  }
  const double sg = bench_median(ts_g, steps), sm = bench_median(ts_m, steps);
  const double dg = bench_median(td_g, kd), dm = bench_median(td_m, kd);
  printf("%-22s nv %4d | step: grit %9.1f us (Newton %.1f)  MuJoCo %9.1f us  ratio %5.2f | "
         "A,B: grit %10.1f us  MuJoCo FD %10.1f us  speed-up %6.1fx  grit A,B/step %5.2f\n",
         strrchr(path, '/') ? strrchr(path, '/') + 1 : path, nv, sg, (double)newton / steps, sm, sg / sm, dg, dm, dm / dg,
         dg / sg);
  free(ts_g), free(ts_m), free(td_g), free(td_m), free(A), free(B), free(Am), free(Bm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
  grit_mjcf_info_free(&info);
  return 0;
}

int main(int argc, char **argv) {
  const char *defaults[] = {GRIT_SOURCE_DIR "/examples/models/falling_sphere.xml",
                            GRIT_SOURCE_DIR "/examples/models/arm7.xml", GRIT_SOURCE_DIR "/examples/models/clutter.xml"};
  const int n = argc > 1 ? argc - 1 : 3;
  printf("grit vs MuJoCo %s, medians; ratio = grit/MuJoCo\n", mj_versionString());
  for (int i = 0; i < n; ++i)
    if (bench(argc > 1 ? argv[i + 1] : defaults[i], 200, 500, 10)) return 1;
  return 0;
}
