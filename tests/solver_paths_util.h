/* SPDX-License-Identifier: Apache-2.0 */
/* solver_paths_util.h — two solver paths from the same states (test_lookahead.c, test_chord.c): a run on
 * path a, and at each step its state set into a data on path b, both at rel_tol 1e-11 without warm starts,
 * so that each step of b starts where a's did. The paths differ only in the solver's switches, which
 * `set` writes into each data's grit_solver. */
#ifndef GRIT_TESTS_SOLVER_PATHS_UTIL_H
#define GRIT_TESTS_SOLVER_PATHS_UTIL_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "solver_state.h"

typedef void (*sp_set_path)(grit_solver *s, int path);
typedef int (*sp_count)(grit_data *d); /* what a step is counted by (Newton iterations, factorizations) */

static inline grit_data *sp_make_data(grit_model *m, const grit_mjcf_info *info, sp_set_path set, int path) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = info->settings;
  st.warm_start = 0; /* (each step from a state set: the same start for both) */
  st.rel_tol = 1e-11;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  set(d->solver, path);
  return d;
}

/* From warm_up steps on, `steps` more from the states of the run on path pa, each set into a data on path
 * pb: the largest |v_a - v_b| / |v - v0|; the mean count per step of each (*ca, *cb). The file is loaded
 * leniently (MuJoCo's adhesion model: its actuators' options). */
static inline double sp_compare(const char *file, sp_set_path set, int pa, int pb, sp_count count, int warm_up,
                                int steps, double *ca, double *cb) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[512];
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  cr_assert_eq(grit_mjcf_load_file_with(file, &o, &m, &info, msg), GRIT_OK, "%s: %s", file, msg);
  grit_data *a = sp_make_data(m, &info, set, pa), *b = sp_make_data(m, &info, set, pb);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  for (int i = 0; i < warm_up; ++i) count(a);
  double *v0 = calloc((size_t)nv, sizeof(double)), worst = 0.0;
  cr_assert(v0);
  long na = 0, nb = 0;
  for (int i = 0; i < steps; ++i) {
    memcpy(v0, grit_data_qvel(a), sizeof(double) * (size_t)nv);
    cr_assert_eq(grit_data_set_qpos(b, grit_data_qpos(a), nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(b, v0, nv), GRIT_OK);
    na += count(a), nb += count(b);
    const double *va = grit_data_qvel(a), *vb = grit_data_qvel(b);
    double dv = 0.0, diff = 0.0;
    for (int k = 0; k < nv; ++k) dv = fmax(dv, fabs(vb[k] - v0[k])), diff = fmax(diff, fabs(va[k] - vb[k]));
    if (dv > 0.0) worst = fmax(worst, diff / dv);
  }
  *ca = (double)na / steps, *cb = (double)nb / steps;
  cr_log_info("%s: per step %.3f on the new path, %.3f on the old; largest |v_new - v_old| / |v - v0| %.3g", file,
              *ca, *cb, worst);
  free(v0);
  grit_data_free(a), grit_data_free(b);
  grit_model_free(m);
  grit_mjcf_info_free(&info);
  return worst;
}

#endif
