/* bench_mujoco — grit and MuJoCo 2.2.2 side by side on the same MJCF files, in one run: time per step
 * and grit's Newton iterations, and the time of the one-step Jacobians A = dx+/dx, B = dx+/du: grit's
 * implicit derivatives against MuJoCo's mjd_transitionFD (centered, eps = 1e-6). Medians over the
 * measured steps; each engine steps its own trajectory from the same initial state (a keyframe's, with
 * its controls held, or the file's qpos0) after a warm-up, repeated from that state `repeats` times.
 * Prints, per scene, grit's (A,B time)/(step time) and MuJoCo FD time / grit A,B time (issue #7: at
 * most 3 and at least 10 on the arm-and-ball and clutter scenes), from the medians and, for a machine
 * shared with other work, from the minima.
 *
 *   bench_mujoco [MODEL.xml[@KEY] ...]   (default: the falling sphere sliding into rolling, the Kinova
 *                                          arm pushing the ball, the 40-object clutter falling)
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

typedef struct scene {
  const char *path, *key; /* key NULL: the file's qpos0 */
  int warm, steps, deriv_every, repeats;
} scene;

/* Both engines at the scene's initial state. */
static int reset(const scene *sc, const grit_mjcf_info *info, grit_data *gd, const mjModel *mm, mjData *md) {
  if (!sc->key) {
    grit_data_reset(gd);
    mj_resetData(mm, md);
    return 0;
  }
  const int kg = grit_mjcf_key_index(info, sc->key), km = mj_name2id(mm, mjOBJ_KEY, sc->key);
  if (kg < 0 || km < 0 || grit_mjcf_apply_key(info, kg, gd) != GRIT_OK) {
    fprintf(stderr, "bench_mujoco: %s has no key %s\n", sc->path, sc->key);
    return 1;
  }
  mj_resetDataKeyframe(mm, md, km);
  return 0;
}

static int bench(const scene *sc) {
  const char *path = sc->path;
  const int warm = sc->warm, steps = sc->steps * sc->repeats, deriv_every = sc->deriv_every;
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
  long newton = 0, constraints = 0;
  int kd = 0;
  for (int i = 0; i < steps; ++i) {
    if (i % sc->steps == 0) { /* a repetition: from the initial state, after the warm-up */
      if (reset(sc, &info, gd, mm, md)) return 1;
      for (int k = 0; k < warm; ++k) {
        grit_step(gd);
        mj_step(mm, md);
      }
    }
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
    constraints += st.nconstraints;
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
  /* bench_median sorted the samples: the minima, less sensitive to other work on a shared machine */
  const double sg0 = ts_g[0], dg0 = td_g[0], dm0 = td_m[0];
  char label[1100];
  snprintf(label, sizeof label, "%s%s%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, sc->key ? "@" : "",
           sc->key ? sc->key : "");
  printf("%-26s nv %4d nc %5.1f | step: grit %9.1f us (Newton %4.1f)  MuJoCo %9.1f us  ratio %5.2f | "
         "A,B: grit %9.1f us  MuJoCo FD %10.1f us  speed-up %6.1fx | grit A,B/step %5.2f | minima: speed-up %6.1fx, "
         "A,B/step %5.2f\n",
         label, nv, (double)constraints / steps, sg, (double)newton / steps, sm, sg / sm, dg, dm, dm / dg, dg / sg,
         dm0 / dg0, dg0 / sg0);
  free(ts_g), free(ts_m), free(td_g), free(td_m), free(A), free(B), free(Am), free(Bm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
  grit_mjcf_info_free(&info);
  return 0;
}

int main(int argc, char **argv) {
  /* The issue's three scenes: the sphere launched sliding (it rolls after 0.117 s: contact throughout),
   * the arm pressing on the rolling ball (contact lasts about 0.4 s with the key's torques: 30 steps
   * from the key, ten times), the clutter's objects falling and piling up. */
  const scene defaults[] = {
      {GRIT_SOURCE_DIR "/examples/models/falling_sphere.xml", "launch", 200, 500, 10, 1},
      {GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", "push", 0, 30, 1, 10},
      {GRIT_SOURCE_DIR "/examples/models/clutter.xml", NULL, 200, 500, 10, 1},
  };
  const int n = argc > 1 ? argc - 1 : 3;
  printf("grit vs MuJoCo %s, medians; ratio = grit/MuJoCo; nc = grit's mean constraints per step\n", mj_versionString());
  for (int i = 0; i < n; ++i) {
    scene sc = {NULL, NULL, 200, 500, 10, 1};
    char buf[1024];
    if (argc > 1) {
      snprintf(buf, sizeof buf, "%s", argv[i + 1]);
      char *at = strrchr(buf, '@');
      if (at) *at = 0, sc.key = at + 1, sc.warm = 0, sc.steps = 30, sc.deriv_every = 1, sc.repeats = 10;
      sc.path = buf;
    } else {
      sc = defaults[i];
    }
    if (bench(&sc)) return 1;
  }
  return 0;
}
