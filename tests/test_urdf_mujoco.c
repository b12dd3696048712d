/* SPDX-License-Identifier: Apache-2.0 */
/* test_urdf_mujoco.c — grit's URDF loader against MuJoCo 2.2.2's own URDF import (libmujoco, a reference
 * only): Drake's KUKA iiwa14 (tests/urdf/iiwa_description) loads with MuJoCo's nq, nv and number of
 * bodies, and with contact and gravity off (MuJoCo's <robot><mujoco><option> extension, which both read),
 * 1 s from a nonzero velocity at MuJoCo's 2 ms Euler step gives MuJoCo's trajectory. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/urdf.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif
#define IIWA GRIT_SOURCE_DIR "/tests/urdf/iiwa_description/urdf/iiwa14_spheres_collision.urdf"

/* A copy of the file (in /tmp: its only meshes are visual ones, which neither loader reads) with
 * <mujoco>option</mujoco> right after <robot ...>; its name into dst. */
static void with_option(const char *src, char *dst, const char *option) {
  FILE *f = fopen(src, "rb");
  cr_assert_not_null(f);
  static char text[1 << 16];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *robot = strstr(text, "<robot");
  cr_assert_not_null(robot);
  char *end = strchr(robot, '>');
  const int fd = mkstemp(dst);
  cr_assert_geq(fd, 0);
  FILE *g = fdopen(fd, "wb");
  cr_assert_not_null(g);
  fwrite(text, 1, (size_t)(end + 1 - text), g);
  fprintf(g, "\n<mujoco>%s</mujoco>", option);
  fputs(end + 1, g);
  fclose(g);
}

Test(urdf_mujoco, iiwa14_sizes) {
  char err[1000];
  mjModel *mm = mj_loadXML(IIWA, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  grit_model *gm = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_urdf_load_file(IIWA, NULL, &gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nq(gm), mm->nq);
  cr_assert_eq(grit_model_nv(gm), mm->nv);
  cr_assert_eq(grit_model_nbody(gm), mm->nbody);
  cr_assert_eq(grit_model_ngeom(gm), mm->ngeom);
  for (int b = 1; b < mm->nbody; ++b) /* the same bodies in the same order, with the same masses */
    cr_assert_float_eq(grit_model_body_mass(gm, b), mm->body_mass[b], 1e-12, "body %d", b);
  grit_model_free(gm);
  mj_deleteModel(mm);
}

/* Contact and gravity off, Euler at 2 ms, 500 steps from a nonzero velocity: the rigid-body dynamics
 * (with the joints' damping, implicit in both) agree with MuJoCo's; no joint limit is reached (the arm
 * turns by less than 0.4 rad, its limits are at 2.09 rad and more). */
Test(urdf_mujoco, iiwa14_trajectory) {
  char tmp[] = "/tmp/grit_iiwa_XXXXXX";
  with_option(IIWA, tmp, "<option timestep=\"0.002\" gravity=\"0 0 0\"><flag contact=\"disable\"/></option>");
  char err[1000], msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(tmp, NULL, err, sizeof err);
  grit_model *gm = NULL;
  grit_mjcf_info info;
  const grit_status s = grit_urdf_load_file(tmp, NULL, &gm, &info, msg);
  remove(tmp);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  cr_assert_eq(mm->opt.timestep, 0.002);
  cr_assert_eq(grit_model_options(gm).timestep, 0.002);
  cr_assert_eq(grit_model_options(gm).gravity[2], 0);
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(gd, &info.settings), GRIT_OK);
  const double v0[7] = {0.3, -0.25, 0.2, 0.35, -0.3, 0.25, 0.4};
  for (int i = 0; i < 7; ++i) md->qvel[i] = v0[i];
  cr_assert_eq(grit_data_set_qvel(gd, v0, 7), GRIT_OK);
  double worst = 0;
  for (int k = 0; k < 500; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
    const double *q = grit_data_qpos(gd), *v = grit_data_qvel(gd);
    for (int i = 0; i < 7; ++i) worst = fmax(worst, fmax(fabs(q[i] - md->qpos[i]), fabs(v[i] - md->qvel[i])));
  }
  cr_assert_gt(fabs(md->qpos[0]), 0.05); /* it moved */
  cr_log_info("iiwa14 URDF, grit vs MuJoCo 2.2.2, 1 s: max |dq|, |dv| = %.3g\n", worst);
  cr_assert_lt(worst, 1e-4, "max difference %g", worst);
  grit_data_free(gd);
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}
