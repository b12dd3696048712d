/* SPDX-License-Identifier: Apache-2.0 */
/* test_chord.c — the Newton solver's chord steps (solver.c: near the minimizer a direction from the last
 * factor instead of a new assembly and factorization) against the path without them (grit_solver.no_chord):
 * from the same states, both at rel_tol 1e-11, the same minimizer (the direction changes only; the line
 * search and the stopping test are exact), and fewer factorizations on MuJoCo's composites. */
#include "solver_paths_util.h"

static void set_path(grit_solver *s, int no_chord) { s->no_chord = no_chord; }

/* One step; the factorizations it took (Newton iterations less the chord steps). */
static int step_factors(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d, &st), GRIT_OK);
  cr_assert_leq(d->solver->chord_iters, st.newton_iters);
  cr_assert(!d->solver->no_chord || d->solver->chord_iters == 0, "a chord step on the path without them");
  return st.newton_iters - d->solver->chord_iters;
}

static double compare(const char *file, int warm_up, int steps, double *f_chord, double *f_newton) {
  return sp_compare(file, set_path, 0, 1, step_factors, warm_up, steps, f_chord, f_newton);
}

Test(chord, same_minimizer_with_fewer_factorizations) {
  const char *files[] = {GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/loop.xml",
                         GRIT_SOURCE_DIR "/tests/models/mujoco_composite/hammock/hammock.xml"};
  for (int f = 0; f < 2; ++f) {
    double fc, fn;
    const double worst = compare(files[f], 200, 40, &fc, &fn);
    cr_assert_lt(worst, 1e-7, "%s: the solutions differ by %g of the step's velocity change", files[f], worst);
    cr_assert_lt(fc, fn, "%s: %.3f factorizations per step with chord steps, %.3f without", files[f], fc, fn);
  }
}

/* Chord steps are on by default (a data's solver). */
Test(chord, default_on) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/examples/models/clutter.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(d->solver->no_chord, 0);
  grit_data_free(d);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}
