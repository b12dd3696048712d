/* SPDX-License-Identifier: Apache-2.0 */
/* bench_energy — energy conservation of grit's integrators against MuJoCo 2.2.2 on the same model file
 * (docs/theory.md, "The variational integrator"): the model is run for 10 s from a keyframe at the file's
 * time step; printed per engine and integrator: the largest |E(t) - E(0)| as a percentage of the energy
 * the motion releases (E(0) minus the potential at rest, the lowest: taken as the minimum of the
 * potential over the run), E(10 s) - E(0), and the time per step.
 *
 *   bench_energy [MODEL.xml [KEY [SECONDS]]]   (default: examples/models/double_pendulum.xml, both keys) */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  double e0, max_dev, final_dev, vmin, us;
} energy_run;

static void report(const char *engine, const energy_run *r) {
  const double avail = r->e0 - r->vmin;
  printf("  %-26s max |E - E0| %10.3e J = %9.5f %%   E(T) - E0 %+10.3e J   %7.3f us/step\n", engine, r->max_dev,
         100.0 * r->max_dev / avail, r->final_dev, r->us);
}

static int run_grit(const char *path, const char *key, double seconds, grit_integrator integ, energy_run *r) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_mjcf_load_file(path, &m, &info, msg) != GRIT_OK) return fprintf(stderr, "grit: %s\n", msg), 1;
  grit_data *d;
  grit_data_create(m, &d);
  grit_step_settings s = info.settings;
  s.integrator = integ;
  grit_data_set_step_settings(d, &s);
  grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, key), d);
  double k, v;
  grit_energy(d, &k, &v);
  r->e0 = k + v, r->vmin = v, r->max_dev = 0;
  const long n = lround(seconds / grit_model_options(m).timestep);
  const double t0 = now();
  for (long i = 0; i < n; ++i) {
    if (grit_step(d) != GRIT_OK) return fprintf(stderr, "grit: %s\n", grit_data_last_error(d)), 1;
    grit_energy(d, &k, &v);
    r->max_dev = fmax(r->max_dev, fabs(k + v - r->e0));
    r->final_dev = k + v - r->e0;
    r->vmin = fmin(r->vmin, v);
  }
  r->us = 1e6 * (now() - t0) / (double)n; /* includes the energy evaluations, as MuJoCo's does */
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
  return 0;
}

static int run_mujoco(const char *path, const char *key, double seconds, int integrator, energy_run *r) {
  char err[512];
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  if (!m) return fprintf(stderr, "mujoco: %s\n", err), 1;
  m->opt.integrator = integrator;
  m->opt.enableflags |= mjENBL_ENERGY;
  mjData *d = mj_makeData(m);
  const int k = mj_name2id(m, mjOBJ_KEY, key);
  if (k >= 0) mj_resetDataKeyframe(m, d, k);
  mj_forward(m, d);
  r->e0 = d->energy[0] + d->energy[1], r->vmin = d->energy[0], r->max_dev = 0;
  const long n = lround(seconds / m->opt.timestep);
  const double t0 = now();
  for (long i = 0; i < n; ++i) {
    mj_step(m, d);
    mj_forward(m, d); /* the energy of the new state (mj_step's is of the state it started from) */
    const double e = d->energy[0] + d->energy[1];
    r->max_dev = fmax(r->max_dev, fabs(e - r->e0));
    r->final_dev = e - r->e0;
    r->vmin = fmin(r->vmin, d->energy[0]);
  }
  r->us = 1e6 * (now() - t0) / (double)n;
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : GRIT_SOURCE_DIR "/examples/models/double_pendulum.xml";
  const char *keys[2] = {argc > 2 ? argv[2] : "regular", "chaotic"};
  const int nkeys = argc > 2 ? 1 : 2;
  const double seconds = argc > 3 ? atof(argv[3]) : 10.0;
  for (int i = 0; i < nkeys; ++i) {
    printf("%s, key %s, %g s:\n", path, keys[i], seconds);
    energy_run r;
    if (run_mujoco(path, keys[i], seconds, mjINT_EULER, &r)) return 1;
    report("MuJoCo 2.2.2 Euler", &r);
    if (run_mujoco(path, keys[i], seconds, mjINT_RK4, &r)) return 1;
    report("MuJoCo 2.2.2 RK4", &r);
    if (run_grit(path, keys[i], seconds, GRIT_INTEGRATOR_EULER, &r)) return 1;
    report("grit euler (default)", &r);
    if (run_grit(path, keys[i], seconds, GRIT_INTEGRATOR_VARIATIONAL, &r)) return 1;
    report("grit variational", &r);
  }
  return 0;
}
