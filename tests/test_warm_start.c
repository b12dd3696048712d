/* SPDX-License-Identifier: Apache-2.0 */
/* test_warm_start.c — the step's warm start from the previous step's acceleration
 * (grit_step_settings.warm_start; step.c, solver_start.c) against the start at v0 (warm_start 0, the path
 * before it): the same minimizer (compared at a tight tolerance, from the same states), found in fewer
 * Newton iterations on scenes whose contacts persist; and a state set between steps starts cold. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
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
 * path only; at the files' rel_tol 1e-5 they differ by up to 1.3e-4 on the loop, 2e-8 at 1e-11, where the
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

/* The default is off (stop 22: the iLQR's grasp plans still fail with it on); with it on, a state set
 * between steps starts cold (no history is assumed of a state
 * unless it is bit for bit the last result): the step after grit_data_set_qvel or grit_data_set_qpos to
 * other values, or after grit_data_reset, equals a cold data's bit for bit. */
static void cold_after(const scene *s, int what) {
  grit_data *w = make_data(s, 1, 0), *c = make_data(s, 0, 0);
  for (int i = 0; i < 200; ++i) step_ok(w);
  double *q = calloc((size_t)s->nq, sizeof(double)), *v = calloc((size_t)s->nv, sizeof(double));
  cr_assert(q && v);
  memcpy(q, grit_data_qpos(w), sizeof(double) * (size_t)s->nq);
  memcpy(v, grit_data_qvel(w), sizeof(double) * (size_t)s->nv);
  if (what == 0) v[0] += 1e-3; /* another velocity */
  if (what == 1) q[0] += 1e-4; /* another position (the rod's x) */
  if (what == 2) {            /* reset to the model's rest state: a history of another state */
    grit_data_reset(w);
    memcpy(q, grit_data_qpos(w), sizeof(double) * (size_t)s->nq);
    memset(v, 0, sizeof(double) * (size_t)s->nv);
  }
  cr_assert_eq(grit_data_set_qpos(w, q, s->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(w, v, s->nv), GRIT_OK);
  cr_assert_eq(grit_data_set_qpos(c, q, s->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(c, v, s->nv), GRIT_OK);
  for (int i = 0; i < 3; ++i) { /* the first step cold as c's; from the second on both continue their own */
    step_ok(w);
    step_ok(c);
    if (i == 0)
      cr_assert(memcmp(grit_data_qvel(w), grit_data_qvel(c), sizeof(double) * (size_t)s->nv) == 0 &&
                    memcmp(grit_data_qpos(w), grit_data_qpos(c), sizeof(double) * (size_t)s->nq) == 0,
                "case %d: the step after a new state is not the cold step", what);
  }
  free(q), free(v);
  grit_data_free(w), grit_data_free(c);
}

Test(warm_start, default_off_and_cold_after_a_new_state) {
  cr_assert_eq(grit_default_step_settings().warm_start, 0);
  scene s;
  load(&s, GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml");
  cr_assert_eq(s.info.settings.warm_start, 0, "an MJCF file's settings start from the defaults");
  for (int what = 0; what < 3; ++what) cold_after(&s, what);
  unload(&s);
}

/* grit_data_set_warm_start: a trajectory stepped by a second data, each step from the first one's state
 * with the velocity of the step before passed on (as the iLQR's rollouts do), warm-starts as the one data
 * running it does: as many Newton iterations (within 1 %), and fewer than a third data stepping the same
 * states cold. (Not bit for bit: a data's step is not a function of its state alone even cold, its
 * internal workspaces carry rounding over; a second data stepping set states cold differs from a
 * continuous run at round-off from the first contact on.) */
static void passed_on(const char *file) {
  scene s;
  load(&s, file);
  grit_data *run = make_data(&s, 1, 0), *two = make_data(&s, 1, 0), *cold = make_data(&s, 0, 0);
  double *vp = calloc((size_t)s.nv, sizeof(double));
  cr_assert(vp);
  long n_run = 0, n_two = 0, n_cold = 0;
  for (int i = 0; i < 400; ++i) {
    grit_data *ds[2] = {two, cold};
    for (int k = 0; k < 2; ++k) {
      cr_assert_eq(grit_data_set_qpos(ds[k], grit_data_qpos(run), s.nq), GRIT_OK);
      cr_assert_eq(grit_data_set_qvel(ds[k], grit_data_qvel(run), s.nv), GRIT_OK);
    }
    if (i > 0) cr_assert_eq(grit_data_set_warm_start(two, vp, s.nv), GRIT_OK);
    memcpy(vp, grit_data_qvel(run), sizeof(double) * (size_t)s.nv);
    step_ok(run), step_ok(two), step_ok(cold);
    n_run += newton(run), n_two += newton(two), n_cold += newton(cold);
  }
  cr_log_info("%s: Newton iterations in 400 steps: one data %ld, passed on %ld, cold %ld", file, n_run, n_two, n_cold);
  cr_assert_leq(labs(n_two - n_run), n_run / 100, "%s: %ld vs %ld", file, n_two, n_run);
  cr_assert_lt(n_two, n_cold, "%s: %ld vs %ld cold", file, n_two, n_cold);
  cr_assert_eq(grit_data_set_warm_start(two, vp, s.nv + 1), GRIT_ERR_INVALID_ARGUMENT);
  free(vp);
  grit_data_free(run), grit_data_free(two), grit_data_free(cold);
  unload(&s);
}

Test(warm_start, passed_on_to_another_data_steps_the_same) {
  passed_on(GRIT_SOURCE_DIR "/examples/models/sliding_rod.xml");
  passed_on(GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml");
}
