/* SPDX-License-Identifier: Apache-2.0 */
/* test_urdf_mujoco.c — grit's URDF loader against MuJoCo 2.2.2's own URDF import (libmujoco, a reference
 * only): Drake's KUKA iiwa14 (tests/urdf/iiwa_description) loads with MuJoCo's nq, nv and number of
 * bodies, and with contact and gravity off (MuJoCo's <robot><mujoco><option> extension, which both read),
 * 1 s from a nonzero velocity at MuJoCo's 2 ms Euler step gives MuJoCo's trajectory. Links without
 * <inertial> weigh their collision geometry as MuJoCo's import does (tests/urdf/inertia_from_geometry.urdf and
 * example-robot-data's Reach Bravo 7 gripper, whose fingers and sensor links have none): every body's mass,
 * centre and inertia agree. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/urdf.h"
#include "model_internal.h"

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

/* Every body's mass and centre agree to 1e-12 (the same formulas), or for a body weighing a mesh (named in
 * `meshed`) to 1e-6 and 1e-7 m: MuJoCo holds mesh vertices in single precision (test_mjcf_mujoco.c,
 * mesh_files_and_their_masses). Inertias to 1e-6 relative to the body's largest entry: MuJoCo stores a full
 * or summed inertia as principal moments from mju_eig3, an iteration that stops at a tolerance (up to ~1e-6
 * in R diag R^T; test_mjcf_mujoco.c), where grit keeps the matrix. mjfile: the file MuJoCo reads (its
 * <mujoco><compiler meshdir> added), gritfile: the original; no_inertial: links weighed from geometry. */
static int listed(const char *const *names, const char *name) {
  for (; *names; ++names)
    if (!strcmp(*names, name)) return 1;
  return 0;
}

static void compare_mass_properties(const char *mjfile, const char *gritfile, const char *const *no_inertial,
                                    const char *const *meshed) {
  char err[1000], msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(mjfile, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  grit_model *gm = NULL;
  cr_assert_eq(grit_urdf_load_file(gritfile, NULL, &gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nbody(gm), mm->nbody);
  cr_assert_eq(grit_model_nv(gm), mm->nv);
  double worst = 0;
  for (int b = 1; b < mm->nbody; ++b) {
    const char *name = mj_id2name(mm, mjOBJ_BODY, b);
    cr_assert_eq(grit_model_body_index(gm, name), b, "body %s", name);
    const double m = mm->body_mass[b], tm = listed(meshed, name) ? 1e-6 : 1e-12, tc = listed(meshed, name) ? 1e-7 : 1e-12;
    cr_assert(fabs(gm->body_mass[b] - m) <= tm * m, "body %s mass %.17g, MuJoCo %.17g", name, gm->body_mass[b], m);
    for (int i = 0; i < 3; ++i)
      cr_assert(fabs(gm->body_com[3 * b + i] - mm->body_ipos[3 * b + i]) <= tc, "body %s centre", name);
    double R[9], I[9], e = 0, scale = 0;
    mju_quat2Mat(R, mm->body_iquat + 4 * b);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        I[3 * i + j] = 0;
        for (int k = 0; k < 3; ++k) I[3 * i + j] += R[3 * i + k] * mm->body_inertia[3 * b + k] * R[3 * j + k];
      }
    for (int i = 0; i < 9; ++i) scale = fmax(scale, fabs(I[i])), e = fmax(e, fabs(gm->body_inertia[9 * b + i] - I[i]));
    cr_assert(e <= 1e-6 * scale, "body %s inertia deviates by %.3g (scale %.3g)", name, e, scale);
    worst = fmax(worst, e / scale);
  }
  for (const char *const *n = no_inertial; *n; ++n) /* weighed from geometry: a mass was found */
    cr_assert_gt(gm->body_mass[grit_model_body_index(gm, *n)], 0.1, "%s", *n);
  cr_log_info("%s: body inertias within %.2g of MuJoCo's (relative)\n", gritfile, worst);
  grit_model_free(gm);
  mj_deleteModel(mm);
}

Test(urdf_mujoco, links_without_inertial_weigh_their_geometry) {
  const char *file = GRIT_SOURCE_DIR "/tests/urdf/inertia_from_geometry.urdf";
  char tmp[] = "/tmp/grit_ifg_XXXXXX";
  with_option(file, tmp, "<compiler meshdir=\"" GRIT_SOURCE_DIR "/tests/urdf/meshes\"/>");
  static const char *const weighed[] = {"arm", NULL};
  compare_mass_properties(tmp, file, weighed, weighed);
  remove(tmp);
}

#define BRAVO GRIT_SOURCE_DIR "/tests/urdf/example-robot-data/robots/bravo7_description"

Test(urdf_mujoco, bravo7_gripper_fingers_without_inertial) {
  char tmp[] = "/tmp/grit_bravo_XXXXXX";
  with_option(BRAVO "/urdf/bravo7_gripper.urdf", tmp, "<compiler meshdir=\"" BRAVO "/meshes\"/>");
  static const char *const weighed[] = {"bravo_finger1_link", "bravo_finger2_link", "link7", NULL}, *none[] = {NULL};
  compare_mass_properties(tmp, BRAVO "/urdf/bravo7_gripper.urdf", weighed, none);
  remove(tmp);
}
