/* SPDX-License-Identifier: Apache-2.0 */
/* bench_states — one step from each of a trajectory's saved states, so that two versions of the solver
 * can be compared on the same problems (docs/performance.md, stop 15). A change within the solver's
 * tolerance moves a chaotic pile onto another path after a few hundred steps; stepping once from the
 * same saved states compares the solvers, not the paths. Run under callgrind with
 * --toggle-collect=grit_step for instruction counts (they do not depend on the machine's load).
 *
 *   bench_states save MODEL.xml[@KEY] WARM STEPS STATES.bin   the states (qpos, qvel, ctrl, time) of
 *                                                             STEPS steps after WARM from the key (or qpos0)
 *   bench_states replay MODEL.xml[@KEY] STATES.bin [REL_TOL [QVEL.bin]]
 *                                                             one step from each state; prints Newton and
 *                                                             line-search iterations per step, writes qvel
 *   bench_states clutter N K FILE.xml                         bench_mujoco's clutter of N objects, contact
 *                                                             stiffness K (1e7 the series', 1e5 the soft one)
 *   bench_states pile N FILE.xml                              bench_mujoco's pile of N boxes
 *
 * Exit status 1 on a model or step error, 2 on a usage error. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

#include "bench_scene_files.h"

/* bench_mujoco's scenes (bench_scene_files.h), to a named file. */
static int write_clutter(int n, double kstiff, const char *path) {
  FILE *f = fopen(path, "w");
  return f ? bench_write_clutter(f, n, kstiff) : 1;
}

static int write_pile(int n, const char *path) {
  FILE *f = fopen(path, "w");
  return f ? bench_write_pile(f, n) : 1;
}

typedef struct bench {
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  int key; /* -1: the file's qpos0 */
  int nq, nv, nu;
} bench;

/* Loads FILE.xml[@KEY] into b (the file's step settings). */
static int load(const char *spec, bench *b) {
  char path[1024], msg[512];
  snprintf(path, sizeof path, "%s", spec);
  char *at = strrchr(path, '@');
  if (at) *at = 0;
  if (grit_mjcf_load_file(path, &b->m, &b->info, msg) != GRIT_OK || grit_data_create(b->m, &b->d) != GRIT_OK) {
    fprintf(stderr, "bench_states: %s: %s\n", path, msg);
    return 1;
  }
  b->key = at ? grit_mjcf_key_index(&b->info, at + 1) : -1;
  if (at && b->key < 0) {
    fprintf(stderr, "bench_states: %s: no key %s\n", path, at + 1);
    return 1;
  }
  b->nq = grit_model_nq(b->m), b->nv = grit_model_nv(b->m), b->nu = grit_model_nu(b->m);
  return 0;
}

static int save(bench *b, int warm, int steps, const char *out) {
  FILE *f = fopen(out, "wb");
  if (!f) return 1;
  grit_data_reset(b->d);
  if (b->key >= 0) grit_mjcf_apply_key(&b->info, b->key, b->d);
  grit_data_set_step_settings(b->d, &b->info.settings);
  int ok = 1;
  for (int i = 0; i < warm + steps && ok; ++i) {
    if (i >= warm) {
      const double t = grit_data_time(b->d);
      ok = fwrite(grit_data_qpos(b->d), sizeof(double), (size_t)b->nq, f) == (size_t)b->nq &&
           fwrite(grit_data_qvel(b->d), sizeof(double), (size_t)b->nv, f) == (size_t)b->nv &&
           fwrite(grit_data_ctrl(b->d), sizeof(double), (size_t)b->nu, f) == (size_t)b->nu && fwrite(&t, sizeof t, 1, f) == 1;
    }
    ok = ok && grit_step(b->d) == GRIT_OK;
  }
  if (!ok) fprintf(stderr, "bench_states: %s\n", grit_data_last_error(b->d));
  return (fclose(f) != 0) || !ok;
}

static int replay(bench *b, const char *states, double rel_tol, const char *out) {
  FILE *f = fopen(states, "rb"), *o = out ? fopen(out, "wb") : NULL;
  if (!f || (out && !o)) return 1;
  grit_step_settings ss = b->info.settings;
  if (rel_tol > 0.0) ss.rel_tol = rel_tol;
  ss.max_newton_iters = 1000;
  grit_data_set_step_settings(b->d, &ss);
  double *q = malloc(sizeof(double) * (size_t)b->nq), *v = malloc(sizeof(double) * (size_t)b->nv);
  double *u = malloc(sizeof(double) * (size_t)(b->nu + 1)), t;
  long n = 0, newton = 0, ls = 0;
  int rc = !q || !v || !u;
  while (!rc && fread(q, sizeof(double), (size_t)b->nq, f) == (size_t)b->nq) {
    if (fread(v, sizeof(double), (size_t)b->nv, f) != (size_t)b->nv ||
        fread(u, sizeof(double), (size_t)b->nu, f) != (size_t)b->nu || fread(&t, sizeof t, 1, f) != 1) {
      rc = 1;
      break;
    }
    grit_data_set_qpos(b->d, q, b->nq);
    grit_data_set_qvel(b->d, v, b->nv);
    if (b->nu) grit_data_set_ctrl(b->d, u, b->nu);
    grit_data_set_time(b->d, t);
    grit_step_stats st;
    if (grit_step(b->d) != GRIT_OK || grit_data_step_stats(b->d, &st) != GRIT_OK) {
      fprintf(stderr, "bench_states: %s\n", grit_data_last_error(b->d));
      rc = 1;
      break;
    }
    ++n, newton += st.newton_iters, ls += st.ls_iters;
    if (o && fwrite(grit_data_qvel(b->d), sizeof(double), (size_t)b->nv, o) != (size_t)b->nv) rc = 1;
  }
  if (!rc && n > 0) printf("steps %ld newton %.4f ls %.3f\n", n, (double)newton / n, (double)ls / n);
  free(q), free(v), free(u);
  fclose(f);
  if (o && fclose(o) != 0) rc = 1;
  return rc;
}

int main(int argc, char **argv) {
  const char *usage = "usage: bench_states save MODEL.xml[@KEY] WARM STEPS STATES.bin | replay MODEL.xml[@KEY] "
                      "STATES.bin [REL_TOL [QVEL.bin]] | clutter N K FILE.xml | pile N FILE.xml\n";
  if (argc == 5 && !strcmp(argv[1], "clutter")) return write_clutter(atoi(argv[2]), atof(argv[3]), argv[4]);
  if (argc == 4 && !strcmp(argv[1], "pile")) return write_pile(atoi(argv[2]), argv[3]);
  const int is_save = argc == 6 && !strcmp(argv[1], "save");
  const int is_replay = argc >= 4 && argc <= 6 && !strcmp(argv[1], "replay");
  if (!is_save && !is_replay) {
    fputs(usage, stderr);
    return 2;
  }
  bench b;
  memset(&b, 0, sizeof b);
  if (load(argv[2], &b)) return 1;
  const int rc = is_save ? save(&b, atoi(argv[3]), atoi(argv[4]), argv[5])
                         : replay(&b, argv[3], argc > 4 ? atof(argv[4]) : 0.0, argc > 5 ? argv[5] : NULL);
  grit_data_free(b.d);
  grit_model_free(b.m);
  grit_mjcf_info_free(&b.info);
  return rc;
}
