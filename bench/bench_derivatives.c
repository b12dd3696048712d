/* SPDX-License-Identifier: Apache-2.0 */
/* bench_derivatives — the cost of the step's Jacobians A = dx+/dx and B = dx+/du relative to the step,
 * on seed 000's falling sphere (rolling on the ground), and the clutter (40 objects, settled and in the
 * impact phase), then the arm pushing the ball (arm_push_ball.xml@push). Medians over repeats of: one
 * step; then grit_step_derivatives for that step; then the same with the block form
 * (grit_step_derivatives_blocks). Then the phase split of each (medians over the repeats, with
 * the step's timing on: refactorization and zeroing, setup, position residuals, velocity and control
 * residuals, solves, writes, the rest).
 *   bench_derivatives [--cpu-time] [--dual-factor] [--dual-rnea] [--warm N] [FILE.xml[@KEY] ...]   (files: N warm-up
 *   steps, default 200, or 10 after a key; --cpu-time: the thread's CPU clock, bench_util.h; --dual-factor:
 *   the Delassus estimates' partials from A's dual factor, the path derivatives_delassus.c replaces;
 *   --dual-rnea: the smooth dynamics' partials by dual numbers, the path derivatives_rnea.c replaces, and
 *   the dual kinematics for trees with bodies of several joints, as before derivatives_rigid.c took them)
 * (The side-by-side comparison with MuJoCo's mjd_transitionFD on the same MJCF files is
 * bench/bench_mujoco.c, with the model loader.) */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "derivatives_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "scenes.h"

static const char *const PHASES[GRIT_DERIV_NPHASE] = {"factor", "setup", "position residuals", "velocity residuals",
                                                       "solves", "writes", "rest"};

/* Steps `warm` times, then measures `reps` pairs (step, derivatives) and prints the medians. */
static int g_dual_factor = 0; /* --dual-factor: position passes factor A in dual numbers (the path before) */
static int g_dual_rnea = 0;   /* --dual-rnea: the smooth dynamics' partials by dual numbers (derivatives_rnea.c's
                               * path before) */

static void measure(const char *name, grit_model *m, grit_data *d, int warm, int reps) {
  const int nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv + grit_model_na(m); /* x = (q, v, act) */
  for (int i = 0; i < warm; ++i)
    if (grit_step(d) != GRIT_OK) {
      fprintf(stderr, "%s: %s\n", name, grit_data_last_error(d));
      exit(1);
    }
  double *A = malloc(sizeof(double) * nx * nx), *B = malloc(sizeof(double) * (nx * nu + 1));
  grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL); /* creates the workspace */
  if (d->deriv) d->deriv->no_delassus_lin = g_dual_factor;
  if (d->deriv) d->deriv->no_rnea = g_dual_rnea;
  const grit_model *mm = grit_data_model(d); /* --dual-rnea: and the dual kinematics of several-joint bodies */
  for (int b = 1; d->deriv && g_dual_rnea && b < mm->nbody; ++b)
    if (mm->body_jntnum[b] > 1) d->deriv->rigid[mm->body_tree[b]] = 0;
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
  const double step = ts[reps / 2], ab = td[reps / 2];
  /* the block form, on the steps that follow */
  grit_jacobian_blocks *J;
  if (grit_jacobian_blocks_create(grit_data_model(d), &J) != GRIT_OK) exit(1);
  double *tb = ts; /* reused */
  for (int r = 0; r < reps; ++r) {
    grit_step(d);
    double t0 = now_us();
    grit_step_derivatives_blocks(d, J);
    tb[r] = now_us() - t0;
  }
  qsort(tb, (size_t)reps, sizeof(double), bench_cmp);
  printf("%-34s nv %4d  step %9.1f us  (Newton %.1f)  A,B %9.1f us  ratio %.2f | blocks %9.1f us  ratio %.2f  (%d "
         "blocks, %.3f MB)\n",
         name, nv, step, (double)iters / reps, ab, ab / step, tb[reps / 2], tb[reps / 2] / step,
         grit_jacobian_blocks_count(J), grit_jacobian_blocks_bytes(J) / 1048576.0);
  grit_jacobian_blocks_free(J);
  /* the phase split of the dense and the block calls, the step's timing on */
  grit_step_settings st = grit_data_step_settings(d);
  st.timing = 1;
  grit_data_set_step_settings(d, &st);
  /* medians per phase (on a shared machine a mean is the outliers'), dense then blocks */
  double *tp = malloc(sizeof(double) * (size_t)reps * GRIT_DERIV_NPHASE);
  if (grit_jacobian_blocks_create(grit_data_model(d), &J) != GRIT_OK) exit(1);
  for (int form = 0; form < 2; ++form) {
    double sum[GRIT_DERIV_NPHASE], total = 0.0;
    for (int r = 0; r < reps; ++r) {
      grit_step(d);
      if (form == 0) grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL);
      else grit_step_derivatives_blocks(d, J);
      double t[GRIT_DERIV_NPHASE];
      grit_deriv_phase_times(d, t);
      for (int k = 0; k < GRIT_DERIV_NPHASE; ++k) tp[(size_t)k * reps + r] = t[k];
    }
    for (int k = 0; k < GRIT_DERIV_NPHASE; ++k) sum[k] = bench_median(tp + (size_t)k * reps, reps), total += sum[k];
    printf("%-34s %s phases (medians, us; their sum %.1f):", "", form ? "blocks" : "dense", total);
    for (int k = 0; k < GRIT_DERIV_NPHASE; ++k) printf(" %s %.1f (%.0f%%)", PHASES[k], sum[k], 100 * sum[k] / total);
    printf("\n");
  }
  grit_jacobian_blocks_free(J);
  free(tp);
  st.timing = 0;
  grit_data_set_step_settings(d, &st);
  free(A), free(B), free(ts), free(td);
}

static int g_warm = -1; /* --warm N: warm-up steps of the files (default 200, or 10 after a key) */

/* An MJCF file[@key]: 200 warm-up steps from qpos0, or 10 from the key. */
static int measure_file(const char *arg) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s", arg);
  char *at = strrchr(path, '@');
  if (at) *at = 0;
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  if (grit_mjcf_load_file(path, &m, &info, msg) != GRIT_OK || grit_data_create(m, &d) != GRIT_OK) {
    fprintf(stderr, "bench_derivatives: %s: %s\n", path, msg);
    return 1;
  }
  grit_data_set_step_settings(d, &info.settings);
  if (at && grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, at + 1), d) != GRIT_OK) {
    fprintf(stderr, "bench_derivatives: %s has no key %s\n", path, at + 1);
    return 1;
  }
  measure(strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg, m, d, g_warm >= 0 ? g_warm : at ? 10 : 200, at ? 15 : 51);
  grit_data_free(d);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
  return 0;
}

int main(int argc, char **argv) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  int first = 1;
  for (;;) {
    if (argc > first && !strcmp(argv[first], "--cpu-time")) bench_clock_cpu = 1, first++;
    else if (argc > first && !strcmp(argv[first], "--dual-factor")) g_dual_factor = 1, first++;
    else if (argc > first && !strcmp(argv[first], "--dual-rnea")) g_dual_rnea = 1, first++;
    else if (argc > first + 1 && !strcmp(argv[first], "--warm")) g_warm = atoi(argv[first + 1]), first += 2;
    else break;
  }
  if (argc > first) {
    for (int i = first; i < argc; ++i)
      if (measure_file(argv[i])) return 1;
    return 0;
  }
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
  return measure_file(GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml@push");
}
