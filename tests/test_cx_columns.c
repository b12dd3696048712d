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

/* Two chains and a free body: a connect across trees, a weld and a connect in a tree, a joint and a
 * tendon coupling, a spatial tendon wrapping a sphere with a spring and limits, a fixed tendon with
 * friction, a spatial tendon between trees (its row over two trees). */
static const char *XML =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    " <body name='a1' pos='0 0 1'><joint name='ja1' type='hinge' axis='0 1 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/><site name='sa1' pos='0.3 0 0'/>"
    "  <body name='a2' pos='0.3 0 0'><joint name='ja2' type='hinge' axis='0 1 0.2'/>"
    "   <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/><site name='sa2' pos='0.3 0 0'/>"
    "   <body name='a3' pos='0.3 0 0'><joint name='ja3' type='ball'/>"
    "    <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.03'/><site name='sa3' pos='0.2 0 0'/></body>"
    "  </body></body>"
    " <body name='b1' pos='0 0.5 1'><joint name='jb1' type='hinge' axis='1 0 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/><site name='sb1' pos='0 0 -0.3'/>"
    "  <geom name='drum' type='sphere' pos='0 -0.2 -0.15' size='0.05' contype='0' conaffinity='0'/>"
    "  <body name='b2' pos='0 0 -0.3'><joint name='jb2' type='slide' axis='0 0 1' range='-0.1 0.1'/>"
    "   <geom type='box' size='0.05 0.05 0.05'/><site name='sb2' pos='0 0 -0.05'/></body></body>"
    " <body name='c' pos='0.6 0.3 0.9'><freejoint/><geom type='box' size='0.05 0.05 0.05'/>"
    "  <site name='sc' pos='0 0 0.05'/></body>"
    "</worldbody>"
    "<tendon><spatial name='t1' stiffness='50' damping='1' limited='true' range='0 0.9'>"
    "  <site site='sa1'/><geom geom='drum'/><site site='sb2'/></spatial>"
    " <spatial name='t2'><site site='sa3'/><site site='sc'/></spatial>"
    " <fixed name='t3' frictionloss='0.05'><joint joint='ja1' coef='1'/><joint joint='jb1' coef='-0.5'/></fixed>"
    "</tendon>"
    "<equality><connect body1='a3' body2='c' anchor='0.2 0 0'/><weld body1='a2' body2='a3'/>"
    " <joint joint1='ja1' joint2='jb1' polycoef='0 0.5 0 0 0'/><tendon tendon1='t2'/></equality>"
    "</mujoco>";

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
