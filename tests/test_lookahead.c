/* SPDX-License-Identifier: Apache-2.0 */
/* test_lookahead.c — the Newton direction's model of the contacts that the last cut step would have
 * pressed, and of those the last step opened (solver_lookahead.c), against the paths without them
 * (grit_solver.no_lookahead, grit_solver.no_reopen): from the same states, both at rel_tol 1e-11, the same
 * minimizer (the model changes the direction only; the line search and the stopping test are exact), and
 * fewer Newton iterations where stiff contacts engage during the solve (MuJoCo's particles in a crate, the
 * clutter). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "solver_state.h"

/* The paths compared: grit_solver.no_lookahead and no_reopen. */
typedef struct path {
  int no_lookahead, no_reopen;
} path;

static grit_data *make_data(grit_model *m, const grit_mjcf_info *info, path p) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = info->settings;
  st.warm_start = 0; /* (each step from a state set: the same start for both) */
  st.rel_tol = 1e-11;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  d->solver->no_lookahead = p.no_lookahead;
  d->solver->no_reopen = p.no_reopen;
  return d;
}

static int step_newton(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d, &st), GRIT_OK);
  return st.newton_iters;
}

/* From warm_up steps on, steps more from the states of the run on path pa (the new one), each set into the
 * data on path pb (the old one): the largest |v_new - v_old| / |v - v0|; the mean Newton iterations per
 * step of each. */
static double compare(const char *file, path pa, path pb, int warm_up, int steps, double *n_new, double *n_old) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1; /* (MuJoCo's adhesion model: the adhesion actuators' options) */
  cr_assert_eq(grit_mjcf_load_file_with(file, &o, &m, &info, msg), GRIT_OK, "%s: %s", file, msg);
  grit_data *a = make_data(m, &info, pa), *b = make_data(m, &info, pb);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  for (int i = 0; i < warm_up; ++i) step_newton(a);
  double *v0 = calloc((size_t)nv, sizeof(double)), worst = 0.0;
  cr_assert(v0);
  long na = 0, nb = 0;
  for (int i = 0; i < steps; ++i) {
    memcpy(v0, grit_data_qvel(a), sizeof(double) * (size_t)nv);
    cr_assert_eq(grit_data_set_qpos(b, grit_data_qpos(a), nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(b, v0, nv), GRIT_OK);
    na += step_newton(a), nb += step_newton(b);
    const double *va = grit_data_qvel(a), *vb = grit_data_qvel(b);
    double dv = 0.0, diff = 0.0;
    for (int k = 0; k < nv; ++k) dv = fmax(dv, fabs(vb[k] - v0[k])), diff = fmax(diff, fabs(va[k] - vb[k]));
    if (dv > 0.0) worst = fmax(worst, diff / dv);
  }
  *n_new = (double)na / steps, *n_old = (double)nb / steps;
  cr_log_info("%s: Newton iterations per step %.3f with the model, %.3f without; largest |v_new - v_old| / "
              "|v - v0| %.3g", file, *n_new, *n_old, worst);
  free(v0);
  grit_data_free(a), grit_data_free(b);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
  return worst;
}

Test(lookahead, finds_the_same_minimizer_in_fewer_iterations) {
  const char *files[] = {GRIT_SOURCE_DIR "/tests/models/mujoco_adhesion/active_adhesion.xml",
                         GRIT_SOURCE_DIR "/examples/models/clutter.xml"};
  for (int f = 0; f < 2; ++f) {
    double nn, no;
    const double worst = compare(files[f], (path){0, 1}, (path){1, 1}, 300, 100, &nn, &no);
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
    const double worst = compare(files[f], (path){0, 0}, (path){0, 1}, 300, 100, &nn, &no);
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
