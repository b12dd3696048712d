/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_compiler_mujoco.c — compile-time quantities of the MJCF loader against MuJoCo 2.2.2's compiler
 * (libmujoco, a reference peer used by tests only):
 *  - <compiler inertiafromgeom="false|true|auto">: each body's mass, centre of mass and inertia, from its
 *    <inertial> or from its geometries as the mode says (auto: bodies without <inertial>; true: always, a
 *    body without geometries keeping its <inertial>; false: never);
 *  - joint springdamper="timeconst dampratio": the stiffness and damping MuJoCo derives from the mass
 *    matrix at qpos0 (tests/mjcf/springdamper.xml: a floating base, hinges and a slide, armature, ref, a
 *    default class, an explicit stiffness and damping it overrides).
 *
 * Tolerances. Masses and centres: 1e-12 (the same double formulas in both). Inertias: 1e-6 relative to
 * the largest entry, because MuJoCo stores a summed inertia as principal moments from mju_eig3, a Jacobi
 * iteration that stops at a tolerance (up to ~1e-6 relative in R diag R^T; test_mjcf_mujoco.c), where grit
 * keeps the exact matrix. springdamper: 1e-9 relative; the bodies there have one geometry or a diagonal
 * <inertial> each, so both mass matrices agree to rounding, and the values are the diagonal of M^-1
 * (condition number ~1e3 here) times constants. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_mujoco_util.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

/* Body "c" has an <inertial> only in mode false (otherwise it would have no mass at all). */
static const char *const MODEL =
    "<mujoco model=\"ifg\">\n"
    "  <compiler inertiafromgeom=\"%s\"/>\n"
    "  <worldbody>\n"
    "    <body name=\"a\" pos=\"0 0 1\"><freejoint/>\n"
    "      <inertial pos=\"0.01 0.02 0\" mass=\"3\" diaginertia=\"0.01 0.02 0.025\"/>\n"
    "      <geom type=\"box\" size=\"0.1 0.05 0.02\" euler=\"10 20 30\"/>\n"
    "      <geom type=\"sphere\" size=\"0.04\" pos=\"0.1 0 0\"/>\n"
    "      <body name=\"b\" pos=\"0 0 -0.3\"><joint axis=\"1 0 0\"/>\n"
    "        <inertial pos=\"0 0 -0.1\" mass=\"0.5\" diaginertia=\"0.001 0.001 0.0005\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0 0.1 -0.3\" size=\"0.02\"/>\n"
    "      </body>\n"
    "      <body name=\"c\" pos=\"0.2 0 0\"><joint type=\"slide\" axis=\"0 1 0\"/>\n"
    "        %s\n"
    "        <geom type=\"cylinder\" size=\"0.03 0.05\" pos=\"0 0.02 0\" euler=\"0 40 0\" density=\"700\"/>\n"
    "        <geom type=\"ellipsoid\" size=\"0.03 0.04 0.05\" pos=\"0.05 0 0\"/>\n"
    "      </body>\n"
    "      <body name=\"d\" pos=\"-0.2 0 0\"><joint axis=\"0 0 1\"/>\n"
    "        <inertial pos=\"0 0.05 0\" mass=\"0.7\" diaginertia=\"0.002 0.003 0.004\"/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void load_both(const char *xml, grit_model **gm, mjModel **mm) {
  char err[1000], msg[GRIT_MESSAGE_SIZE];
  *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert_not_null(*mm, "MuJoCo: %s", err);
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "ifg.xml", NULL, gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nbody(*gm), (*mm)->nbody); /* no body folded: the same numbering */
}

/* MuJoCo's body inertia in the body frame: R(iquat) diag(body_inertia) R^T. */
static void mujoco_inertia(const mjModel *mm, int b, double I[9]) {
  double R[9];
  mju_quat2Mat(R, mm->body_iquat + 4 * b);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      I[3 * i + j] = 0;
      for (int k = 0; k < 3; ++k) I[3 * i + j] += R[3 * i + k] * mm->body_inertia[3 * b + k] * R[3 * j + k];
    }
}

/* Every body's mass properties agree; returns body `probe`'s grit mass. */
static double compare_mass_properties(const char *mode, const char *c_inertial, const char *probe) {
  char xml[4096];
  snprintf(xml, sizeof xml, MODEL, mode, c_inertial);
  grit_model *gm;
  mjModel *mm;
  load_both(xml, &gm, &mm);
  for (int b = 1; b < mm->nbody; ++b) {
    const double m = mm->body_mass[b];
    cr_assert(fabs(gm->body_mass[b] - m) <= 1e-12 * m, "%s: body %d mass %.17g, MuJoCo %.17g", mode, b,
              gm->body_mass[b], m);
    for (int i = 0; i < 3; ++i)
      cr_assert(fabs(gm->body_com[3 * b + i] - mm->body_ipos[3 * b + i]) <= 1e-12, "%s: body %d centre", mode, b);
    double I[9], scale = 0, e = 0;
    mujoco_inertia(mm, b, I);
    for (int i = 0; i < 9; ++i) scale = fmax(scale, fabs(I[i]));
    for (int i = 0; i < 9; ++i) e = fmax(e, fabs(gm->body_inertia[9 * b + i] - I[i]));
    cr_assert(e <= 1e-6 * scale, "%s: body %d inertia deviates by %.3g (scale %.3g)", mode, b, e, scale);
  }
  const double out = gm->body_mass[grit_model_body_index(gm, probe)];
  grit_model_free(gm);
  mj_deleteModel(mm);
  return out;
}

static const char *const C_INERTIAL = "<inertial pos=\"0 0 0\" mass=\"0.25\" diaginertia=\"1e-4 1e-4 1e-4\"/>";

Test(mjcf_compiler_mujoco, inertiafromgeom_auto) {
  cr_assert_eq(compare_mass_properties("auto", "", "a"), 3.0);                  /* its <inertial> */
  cr_assert_neq(compare_mass_properties("auto", "", "c"), 0.25);                /* its geometries */
  cr_assert_eq(compare_mass_properties("auto", C_INERTIAL, "c"), 0.25);
}

Test(mjcf_compiler_mujoco, inertiafromgeom_true_overrides_inertial) {
  cr_assert_neq(compare_mass_properties("true", C_INERTIAL, "a"), 3.0);         /* geometries win */
  cr_assert_neq(compare_mass_properties("true", C_INERTIAL, "b"), 0.5);
  cr_assert_eq(compare_mass_properties("true", C_INERTIAL, "d"), 0.7);          /* no geometry: <inertial> */
}

Test(mjcf_compiler_mujoco, inertiafromgeom_false_never) {
  cr_assert_eq(compare_mass_properties("false", C_INERTIAL, "a"), 3.0);
  cr_assert_eq(compare_mass_properties("false", C_INERTIAL, "c"), 0.25);
}

Test(mjcf_compiler_mujoco, springdamper_stiffness_and_damping) {
  const char *path = GRIT_SOURCE_DIR "/tests/mjcf/springdamper.xml";
  char err[1000], msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  grit_model *gm = NULL;
  cr_assert_eq(grit_mjcf_load_file(path, &gm, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_njoint(gm), mm->njnt);
  cr_assert_eq(grit_model_nv(gm), mm->nv);
  int springs = 0;
  for (int j = 0; j < mm->njnt; ++j) {
    const double k = mm->jnt_stiffness[j];
    cr_assert(fabs(gm->jnt_stiffness[j] - k) <= 1e-9 * fabs(k), "joint %d stiffness %.17g, MuJoCo %.17g", j,
              gm->jnt_stiffness[j], k);
    springs += k > 0;
  }
  for (int i = 0; i < mm->nv; ++i) {
    const double d = mm->dof_damping[i];
    cr_assert(fabs(gm->dof_damping[i] - d) <= 1e-9 * fabs(d), "dof %d damping %.17g, MuJoCo %.17g", i,
              gm->dof_damping[i], d);
  }
  cr_assert_geq(springs, 4);
  grit_model_free(gm);
  mj_deleteModel(mm);
}
