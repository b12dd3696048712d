/* SPDX-License-Identifier: Apache-2.0 */
/* test_cx_columns.c — the step's equality and tendon rows computed (and their dense rows zeroed) on their
 * structural columns only (constraints_extra.c, grit_cx_col_lists; d->no_cx_cols: over all nv): the same
 * values, so the same trajectory bit for bit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/math.h"
#include "grit/math_dual.h"
#include "grit/mjcf.h"
#include "loop_scene.h"

/* Two chains and a free body: a connect across trees, a weld and a connect in a tree, a joint and a
 * tendon coupling, a spatial tendon wrapping a sphere with a spring and limits, a fixed tendon with
 * friction, a spatial tendon between trees (its row over two trees). */
static const char *XML = LOOP_SCENE_XML;

/* Steps d twice from the same state, with and without the columns: bitwise the same states. */
static void same_steps(grit_model *m, const grit_step_settings *st, int nstep) {
  grit_data *d[2];
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_data_create(m, &d[i]), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d[i], st), GRIT_OK);
  }
  cr_assert(d[0]->cx_colptr != NULL && d[0]->cx_colptr[grit_model_nequality(m) + grit_model_ntendon(m)] > 0);
  d[1]->no_cx_cols = 1;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  for (int s = 0; s < nstep; ++s) {
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_step(d[i]), GRIT_OK, "%s", grit_data_last_error(d[i]));
    cr_assert_eq(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)nq), 0, "positions differ at step %d", s);
    cr_assert_eq(memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)nv), 0, "velocities differ at step %d", s);
  }
  for (int i = 0; i < 2; ++i) grit_data_free(d[i]);
}

Test(cx_columns, equalities_and_tendons_step_alike) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(XML, &m, &info, msg), GRIT_OK, "%s", msg);
  same_steps(m, &info.settings, 300);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

Test(cx_columns, mujoco_grid_with_pins_steps_alike) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE], path[1024];
  snprintf(path, sizeof path, "%s/tests/models/mujoco_composite/composite/grid2pin.xml", GRIT_SOURCE_DIR);
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  same_steps(m, &info.settings, 30);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* cx_point_rows takes a free joint's translation column of a connect or weld as the twist's linear part
 * (+0 or 1, partials +0) instead of w x p + l with w = +0 (constraints_extra_generic.h): the same bits for
 * every finite p, zeros of either sign included, on doubles and duals. */
static double rnd_entry(unsigned *st) {
  *st = *st * 1664525u + 1013904223u;
  const unsigned r = *st >> 8;
  return r % 7 == 0 ? 0.0 : r % 5 == 0 ? -0.0 : ((double)r / 16777216.0 - 0.5) * 40.0;
}

Test(cx_columns, a_free_translation_point_velocity_is_its_axis) {
  unsigned st = 777u;
  for (int trial = 0; trial < 2000; ++trial) {
    for (int i = 0; i < 3; ++i) {
      grit_dual t[6], p[3], lin[3];
      double td[6], pd[3], lind[3];
      for (int r = 0; r < 6; ++r) t[r] = grit_dual_const(r == 3 + i ? 1.0 : 0.0), td[r] = t[r].v;
      for (int r = 0; r < 3; ++r) {
        p[r].v = pd[r] = rnd_entry(&st);
        for (int l = 0; l < GRIT_DUAL_N; ++l) p[r].d[l] = rnd_entry(&st);
      }
      grit_sv_point_velocity_dual(lin, t, p);
      grit_sv_point_velocity(lind, td, pd);
      cr_assert(memcmp(lin, t + 3, sizeof lin) == 0, "trial %d axis %d: dual point velocity is not the axis", trial, i);
      cr_assert(memcmp(lind, td + 3, sizeof lind) == 0, "trial %d axis %d: point velocity is not the axis", trial, i);
    }
  }
}
