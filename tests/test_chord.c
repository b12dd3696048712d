/* SPDX-License-Identifier: Apache-2.0 */
/* test_chord.c — the Newton solver's chord steps (solver.c: near the minimizer a direction from the last
 * factor instead of a new assembly and factorization) against the path without them (grit_solver.no_chord):
 * from the same states, both at rel_tol 1e-11, the same minimizer (the direction changes only; the line
 * search and the stopping test are exact), and fewer factorizations on MuJoCo's composites. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "solver_state.h"

static grit_data *make_data(grit_model *m, const grit_mjcf_info *info, int no_chord) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = info->settings;
  st.warm_start = 0; /* (each step from a state set: the same start for both) */
  st.rel_tol = 1e-11;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  d->solver->no_chord = no_chord;
  return d;
}

/* One step; the factorizations it took (Newton iterations less the chord steps). */
static int step_factors(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d, &st), GRIT_OK);
  cr_assert_leq(d->solver->chord_iters, st.newton_iters);
  return st.newton_iters - d->solver->chord_iters;
}

/* From warm_up steps on, steps more from the states of the run with chord steps, each set into a data
 * without them: the largest |v_chord - v_newton| / |v - v0|; the mean factorizations per step of each. */
static double compare(const char *file, int warm_up, int steps, double *f_chord, double *f_newton) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(file, &m, &info, msg), GRIT_OK, "%s: %s", file, msg);
  grit_data *a = make_data(m, &info, 0), *b = make_data(m, &info, 1);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  for (int i = 0; i < warm_up; ++i) step_factors(a);
  double *v0 = calloc((size_t)nv, sizeof(double)), worst = 0.0;
  cr_assert(v0);
  long na = 0, nb = 0;
  for (int i = 0; i < steps; ++i) {
    memcpy(v0, grit_data_qvel(a), sizeof(double) * (size_t)nv);
    cr_assert_eq(grit_data_set_qpos(b, grit_data_qpos(a), nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(b, v0, nv), GRIT_OK);
    na += step_factors(a);
    const int fb = step_factors(b);
    cr_assert_eq(b->solver->chord_iters, 0);
    nb += fb;
    const double *va = grit_data_qvel(a), *vb = grit_data_qvel(b);
    double dv = 0.0, diff = 0.0;
    for (int k = 0; k < nv; ++k) dv = fmax(dv, fabs(vb[k] - v0[k])), diff = fmax(diff, fabs(va[k] - vb[k]));
    if (dv > 0.0) worst = fmax(worst, diff / dv);
  }
  *f_chord = (double)na / steps, *f_newton = (double)nb / steps;
  cr_log_info("%s: factorizations per step %.3f with chord steps, %.3f without; largest |v_chord - v_newton| / "
              "|v - v0| %.3g", file, *f_chord, *f_newton, worst);
  free(v0);
  grit_data_free(a), grit_data_free(b);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
  return worst;
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
