/* SPDX-License-Identifier: Apache-2.0 */
/* test_warm_start.c — the step's warm start from the previous step's acceleration
 * (grit_step_settings.warm_start; step.c, solver_start.c) against the start at v0 (warm_start 0, the path
 * before it): the same minimizer (compared at a tight tolerance, from the same states), found in fewer
 * Newton iterations on scenes whose contacts persist; and a state set between steps starts cold. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

typedef struct scene {
  grit_model *m;
  grit_mjcf_info info;
  int nq, nv;
} scene;

static void load(scene *s, const char *file) {
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(file, &s->m, &s->info, msg), GRIT_OK, "%s: %s", file, msg);
  s->nq = grit_model_nq(s->m), s->nv = grit_model_nv(s->m);
}

static void unload(scene *s) {
  grit_model_free(s->m);
  grit_mjcf_info_free(&s->info);
}

/* A data of scene s with its file's settings, warm start on or off, at rel_tol (0: the file's). */
static grit_data *make_data(const scene *s, int warm, double rel_tol) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(s->m, &d), GRIT_OK);
  grit_step_settings st = s->info.settings;
  st.warm_start = warm;
  if (rel_tol > 0) st.rel_tol = rel_tol;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

static void step_ok(grit_data *d) { cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); }

static int newton(const grit_data *d) {
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d, &st), GRIT_OK);
  return st.newton_iters;
}

/* From the same states (a warm run's, each set into a cold data), both at rel_tol 1e-11: the solutions
 * agree to 1e-7 of the step's velocity change |v - v0| (the minimizer is unique; the start changes the
 * path only; at the files' rel_tol 1e-5 they differ by up to 6e-4 on the loop, 1.2e-8 at 1e-11, where the
 * round-off floor of the residual stops the loop's solves), and the warm run takes fewer Newton iterations
 * in all. Returns the largest difference relative to |v - v0|. */
static double same_minimizer(const char *file, double rel_tol, int warm_up, int steps, double *newton_warm,
                             double *newton_cold) {
  scene s;
  load(&s, file);
  grit_data *w = make_data(&s, 1, rel_tol), *c = make_data(&s, 0, rel_tol);
  for (int i = 0; i < warm_up; ++i) step_ok(w);
  double *v0 = calloc((size_t)s.nv, sizeof(double)), worst = 0;
  long nw = 0, nc = 0;
  cr_assert(v0);
  for (int i = 0; i < steps; ++i) {
    memcpy(v0, grit_data_qvel(w), sizeof(double) * (size_t)s.nv);
    cr_assert_eq(grit_data_set_qpos(c, grit_data_qpos(w), s.nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(c, v0, s.nv), GRIT_OK);
    step_ok(w);
    step_ok(c);
    nw += newton(w), nc += newton(c);
    const double *vw = grit_data_qvel(w), *vc = grit_data_qvel(c);
    double dv = 0, diff = 0;
    for (int k = 0; k < s.nv; ++k) dv = fmax(dv, fabs(vc[k] - v0[k])), diff = fmax(diff, fabs(vw[k] - vc[k]));
    if (dv > 0) worst = fmax(worst, diff / dv);
  }
  *newton_warm = (double)nw / steps, *newton_cold = (double)nc / steps;
  cr_log_info("%s, rel_tol %g: Newton iterations per step warm %.3f, cold %.3f; largest |v_warm - v_cold| / |v - v0| "
              "%.3g", file, rel_tol, *newton_warm, *newton_cold, worst);
  free(v0);
  grit_data_free(w), grit_data_free(c);
  unload(&s);
  return worst;
}

Test(warm_start, finds_the_same_minimizer_in_fewer_iterations) {
  const char *files[] = {GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/loop.xml",
                         GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml",
                         GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml"};
  for (int f = 0; f < 3; ++f) {
    double nw, nc;
    double nw5, nc5;
    same_minimizer(files[f], 0, 400, 150, &nw5, &nc5); /* (the files' own tolerance, logged) */
    const double worst = same_minimizer(files[f], 1e-11, 400, 150, &nw, &nc);
    cr_assert_lt(worst, 1e-7, "%s: warm and cold solutions differ by %g of the step's velocity change", files[f], worst);
    cr_assert_lt(nw, nc, "%s: warm %.3f Newton iterations per step, cold %.3f", files[f], nw, nc);
  }
}

/* The default is on, and a state set between steps (here the same values: no history is assumed of it
 * unless it is bit for bit the last result) or a first step starts cold: the first step of a fresh data
 * and the step after grit_data_set_qvel to other values equal a cold data's. */
Test(warm_start, default_on_and_cold_after_a_new_state) {
  cr_assert_eq(grit_default_step_settings().warm_start, 1);
  scene s;
  load(&s, GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml");
  grit_data *w = make_data(&s, 1, 0), *c = make_data(&s, 0, 0);
  for (int i = 0; i < 200; ++i) step_ok(w);
  double *v = calloc((size_t)s.nv, sizeof(double));
  cr_assert(v);
  memcpy(v, grit_data_qvel(w), sizeof(double) * (size_t)s.nv);
  v[0] += 1e-3; /* another state */
  cr_assert_eq(grit_data_set_qvel(w, v, s.nv), GRIT_OK);
  cr_assert_eq(grit_data_set_qpos(c, grit_data_qpos(w), s.nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(c, v, s.nv), GRIT_OK);
  step_ok(w);
  step_ok(c);
  cr_assert(memcmp(grit_data_qvel(w), grit_data_qvel(c), sizeof(double) * (size_t)s.nv) == 0);
  free(v);
  grit_data_free(w), grit_data_free(c);
  unload(&s);
}
