/* SPDX-License-Identifier: Apache-2.0 */
/* test_lookahead.c — the Newton direction's model of the contacts that the last cut step would have
 * pressed, and of those the last step opened (solver_lookahead.c), against the paths without them
 * (grit_solver.no_lookahead, grit_solver.no_reopen): from the same states, both at rel_tol 1e-11, the same
 * minimizer (the model changes the direction only; the line search and the stopping test are exact), and
 * fewer Newton iterations where stiff contacts engage during the solve (MuJoCo's particles in a crate, the
 * clutter). */
#include "solver_paths_util.h"

/* The paths compared, by grit_solver.no_lookahead and no_reopen: bit 0 no_lookahead, bit 1 no_reopen. */
static void set_path(grit_solver *s, int path) {
  s->no_lookahead = path & 1;
  s->no_reopen = (path >> 1) & 1;
}

static int step_newton(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d, &st), GRIT_OK);
  return st.newton_iters;
}

/* path (no_lookahead, no_reopen) as a set_path code */
#define PATH(lookahead_off, reopen_off) ((lookahead_off) | (reopen_off) << 1)

static double compare(const char *file, int pa, int pb, int warm_up, int steps, double *n_new, double *n_old) {
  return sp_compare(file, set_path, pa, pb, step_newton, warm_up, steps, n_new, n_old);
}

Test(lookahead, finds_the_same_minimizer_in_fewer_iterations) {
  const char *files[] = {GRIT_SOURCE_DIR "/tests/models/mujoco_adhesion/active_adhesion.xml",
                         GRIT_SOURCE_DIR "/examples/models/clutter.xml"};
  for (int f = 0; f < 2; ++f) {
    double nn, no;
    const double worst = compare(files[f], PATH(0, 1), PATH(1, 1), 300, 100, &nn, &no);
    cr_assert_lt(worst, 1e-7, "%s: the solutions differ by %g of the step's velocity change", files[f], worst);
    cr_assert_lt(nn, no, "%s: %.3f Newton iterations per step with the model, %.3f without", files[f], nn, no);
  }
}

/* The contacts the last step opened, modelled pressed in the next direction (no_reopen = 0), against the
 * lookahead without them: the same minimizer in fewer iterations. */
Test(lookahead, reopened_contacts_same_minimizer_in_fewer_iterations) {
  const char *files[] = {GRIT_SOURCE_DIR "/tests/models/mujoco_adhesion/active_adhesion.xml",
                         GRIT_SOURCE_DIR "/examples/models/clutter.xml"};
  for (int f = 0; f < 2; ++f) {
    double nn, no;
    const double worst = compare(files[f], PATH(0, 0), PATH(0, 1), 300, 100, &nn, &no);
    cr_assert_lt(worst, 1e-7, "%s: the solutions differ by %g of the step's velocity change", files[f], worst);
    cr_assert_lt(nn, no, "%s: %.3f Newton iterations per step with the model, %.3f without", files[f], nn, no);
  }
}

/* The models are on by default (a data's solver). */
Test(lookahead, default_on) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/examples/models/clutter.xml", &m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(d->solver->no_lookahead, 0);
  cr_assert_eq(d->solver->no_reopen, 0);
  grit_data_free(d);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
}
