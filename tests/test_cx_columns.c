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
