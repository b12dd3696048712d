/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_cx.c — MJCF's joint frictionloss and limit attributes, <site>, <tendon> and <equality>:
 * what the loader builds, its errors (with file and line), and, with MuJoCo 2.2.2 as a reference peer,
 * the motion of models that use them. grit's constraints and MuJoCo's are compliant in different ways;
 * with MuJoCo's made stiff (solref time constant 2 ms at dt = 1 ms) both approach the same rigid motion,
 * and the test bounds their difference over 1 s to the order of that compliance. Springs differ by
 * O(dt) (grit implicit, MuJoCo 2.2.2's Euler explicit). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

#ifdef GRIT_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

static grit_model *load(const char *xml) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

static void load_fails(const char *xml, grit_status want, const char *needle) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE] = "";
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), want, "%s", msg);
  cr_assert(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  cr_assert_null(m);
}

#define ARM2                                                                                                      \
  "<body name='a'><joint name='j1' axis='0 1 0'/><inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>" \
  "<body name='b' pos='0 0 -0.4'><joint name='j2' axis='0 1 0'/>"                                                \
  "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/><site name='tip' pos='0.3 0 0'/></body></body>"

Test(mjcf_cx, the_loader_builds_sites_tendons_and_equalities) {
  grit_model *m = load("<mujoco><worldbody><site name='anchor' pos='0 0 0.5'/>" ARM2 "</worldbody>"
                       "<tendon><fixed name='sum' limited='true' range='-0.2 0.2'><joint joint='j1' coef='1'/>"
                       "<joint joint='j2' coef='1'/></fixed>"
                       "<spatial name='rope' stiffness='10'><site site='anchor'/><site site='tip'/></spatial></tendon>"
                       "<equality><joint joint1='j1' joint2='j2' polycoef='0 0.5 0 0 0'/></equality></mujoco>");
  cr_assert_eq(grit_model_nsite(m), 2);
  cr_assert_eq(grit_model_ntendon(m), 2);
  cr_assert_eq(grit_model_nequality(m), 1);
  cr_assert_eq(grit_model_tendon_index(m, "rope"), 1);
  const double q[2] = {0.1, 0.2};
  cr_assert(fabs(grit_model_tendon_length(m, 0, q) - 0.3) < 1e-15);
  /* the rope from (0, 0, 0.5) to the tip: at q = 0 the tip is at (0.3, 0, -0.4) */
  const double q0[2] = {0, 0};
  cr_assert(fabs(grit_model_tendon_length(m, 1, q0) - sqrt(0.09 + 0.81)) < 1e-14);
  grit_model_free(m);
}

/* A site's position comes from its own attributes, else from the nearest <site> default up its class
 * chain that gives one (nested classes inherit attribute by attribute; a body's childclass applies),
 * as in MuJoCo; read here through spatial tendons' lengths, whose closed forms the comments give. */
Test(mjcf_cx, sites_take_their_placement_from_default_classes) {
  grit_model *m = load("<mujoco><default><site pos='0 0 0.3'/>"
                       "<default class='a'><site pos='0.4 0 0' size='0.01'/>"
                       "<default class='b'><site euler='0 0 90' rgba='1 0 0 1'/></default></default></default>"
                       "<worldbody><site name='s0'/><site name='s1' class='a'/>"
                       "<body name='m' pos='1 0 0'><joint type='slide' axis='0 0 1'/>"
                       "<inertial pos='0 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>"
                       "<site name='s2' class='b'/><site name='s3' class='a' pos='0 0 1'/></body>"
                       "<body name='n' pos='0 2 0' childclass='a'><joint type='slide' axis='0 0 1'/>"
                       "<inertial pos='0 0 0' mass='1' diaginertia='0.01 0.01 0.01'/><site name='s4'/></body>"
                       "</worldbody><tendon>"
                       "<spatial><site site='s0'/><site site='s1'/></spatial>"  /* (0,0,.3)-(.4,0,0): 0.5 */
                       "<spatial><site site='s1'/><site site='s2'/></spatial>"  /* (.4,0,0)-(1.4,0,0): 1 */
                       "<spatial><site site='s0'/><site site='s3'/></spatial>"  /* (0,0,.3)-(1,0,1) */
                       "<spatial><site site='s1'/><site site='s4'/></spatial>"  /* (.4,0,0)-(.4,2,0): 2 */
                       "</tendon></mujoco>");
  const double q[2] = {0, 0};
  cr_assert(fabs(grit_model_tendon_length(m, 0, q) - 0.5) < 1e-15);
  cr_assert(fabs(grit_model_tendon_length(m, 1, q) - 1.0) < 1e-15);
  cr_assert(fabs(grit_model_tendon_length(m, 2, q) - sqrt(1.49)) < 1e-15);
  cr_assert(fabs(grit_model_tendon_length(m, 3, q) - 2.0) < 1e-15);
  grit_model_free(m);
}

/* A weld whose rotation no dof can change (MuJoCo's test model tfratio0_force_slide: a box on a vertical
 * slide welded to a fixed box): the rotation rows' Jacobian is zero, their Delassus estimate w = 0, and the
 * regularization R = w / (4 pi^2) made the first step's Hessian non-finite. Now the slide hangs in place:
 * 1 s under gravity 1 moves it by the weld's compliance only (less than 1e-5 m; MuJoCo's softer weld:
 * 1.5e-5 m). */
Test(mjcf_cx, a_weld_whose_rotation_no_dof_moves) {
  grit_model *m = load("<mujoco><option gravity='0 0 -1'/><default><geom size='0.05 0.05 0.05' type='box'/></default>"
                       "<worldbody><body name='b1'><geom/></body><body name='b2' pos='0 0 -0.1'>"
                       "<joint type='slide' axis='0 0 1'/><geom/></body></worldbody>"
                       "<equality><weld body1='b1' body2='b2'/></equality></mujoco>");
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int k = 0; k < 500; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "step %d: %s", k, grit_data_last_error(d));
  cr_assert(isfinite(grit_data_qpos(d)[0]) && fabs(grit_data_qpos(d)[0]) < 1e-5, "q = %g", grit_data_qpos(d)[0]);
  grit_data_free(d);
  grit_model_free(m);
}

Test(mjcf_cx, bad_input_is_an_error_with_its_line) {
  load_fails("<mujoco><worldbody>" ARM2 "</worldbody>\n<equality>\n<connect body1='a' body2='a' anchor='0 0 0'/>"
             "</equality></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":3: <connect>");
  /* c has neither joint nor mass: it is merged into b, and a connect between them joins b to itself */
  load_fails("<mujoco><worldbody><body name='b'><joint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
             "<body name='c' pos='0 0 -1'/></body>"
             "</worldbody>\n\n<equality><connect body1='b' body2='c' anchor='0 0 0'/></equality></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":3: <connect> equality 0: body 1 is constrained to itself");
  load_fails("<mujoco><worldbody>" ARM2 "</worldbody>\n<equality><weld body1='a' body2='nobody'/></equality></mujoco>",
             GRIT_ERR_INVALID_MODEL, "unknown body 'nobody'");
  load_fails("<mujoco><worldbody>" ARM2 "</worldbody><tendon><spatial>\n<site site='tip'/>\n<site site='nowhere'/>"
             "</spatial></tendon></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":3: <site> unknown site 'nowhere'");
  load_fails("<mujoco><worldbody>" ARM2 "</worldbody><tendon><fixed><joint joint='j9' coef='1'/></fixed></tendon></mujoco>",
             GRIT_ERR_INVALID_MODEL, "unknown joint 'j9'");
  load_fails("<mujoco><worldbody>" ARM2 "</worldbody><tendon><spatial><site site='tip'/>\n<pulley divisor='2'/>"
             "</spatial></tendon></mujoco>",
             GRIT_ERR_INVALID_MODEL, "no neighbour that is not a pulley"); /* pulleys: tests/test_tendon_pulley.c */
  load_fails("<mujoco><worldbody><geom name='box' type='box' size='.1 .1 .1'/><site name='s0' pos='0 0 1'/>" ARM2
             "</worldbody><tendon><spatial><site site='s0'/>\n<geom geom='box'/><site site='tip'/>"
             "</spatial></tendon></mujoco>",
             GRIT_ERR_UNSUPPORTED, ":2: <geom> wrapping around 'box'");
  /* the builder's compile errors about a tendon or an equality name its element's line (MuJoCo's test
   * models dofless_tendon_limited and dofless_weld: nothing they touch can move) */
  load_fails("<mujoco><worldbody><site name='s0'/><site name='s1' pos='0 0 1'/>" ARM2 "</worldbody><tendon>\n"
             "<spatial limited='true' range='0 1'><site site='s0'/><site site='s1'/></spatial></tendon></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <spatial> tendon 0: nothing it passes through can move");
  load_fails("<mujoco><worldbody><body name='s'><geom size='1'/></body>" ARM2 "</worldbody><equality>\n"
             "<connect body1='a' body2='b' anchor='0 0 0'/>\n<weld body1='s'/></equality></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":3: <weld> equality 1: nothing it joins can move");
}

#ifdef GRIT_HAVE_MUJOCO

static mjModel *mj_load(const char *xml) {
  char path[] = "/tmp/grit_mjcf_cx_XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char err[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  unlink(path);
  cr_assert_not_null(m, "MuJoCo rejected the model: %s", err);
  return m;
}

/* Steps both engines for `steps` from qpos0 (qvel v0 if given); returns max |dq| over the run (the
 * free joint's quaternion left out: positions only for `npos` < nq). */
static double compare(const char *xml, int steps, const double *v0, int npos, double *first_v_grit,
                      double *first_v_mj) {
  grit_model *gm = load(xml);
  mjModel *mm = mj_load(xml);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  mjData *md = mj_makeData(mm);
  const int nq = grit_model_nq(gm), nv = grit_model_nv(gm);
  cr_assert_eq(mm->nq, nq);
  if (v0) {
    grit_data_set_qvel(gd, v0, nv);
    for (int i = 0; i < nv; ++i) md->qvel[i] = v0[i];
  }
  double worst = 0;
  for (int s = 0; s < steps; ++s) {
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
    mj_step(mm, md);
    if (s == 0 && first_v_grit) *first_v_grit = grit_data_qvel(gd)[0], *first_v_mj = md->qvel[0];
    for (int i = 0; i < (npos > 0 ? npos : nq); ++i) worst = fmax(worst, fabs(grit_data_qpos(gd)[i] - md->qpos[i]));
  }
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return worst;
}

/* Spatial tendons wrapping a sphere on the world and a cylinder on the first link (its axis along the
 * hinges'), with and without side sites: grit's lengths against MuJoCo's ten_length over a sweep of
 * configurations (the same geometry evaluated twice in double precision). */
Test(mjcf_mujoco_cx, wrapped_tendon_lengths) {
  const char *xml =
      "<mujoco><worldbody><site name='s0' pos='-0.05 0 0.4'/><site name='side0' pos='0.5 0 0.3'/>"
      "<geom name='ball' type='sphere' size='0.1' pos='0.25 0.02 0.1' contype='0' conaffinity='0'/>"
      "<body name='a'><joint name='j1' axis='0 1 0'/><inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>"
      "<geom name='drum' type='cylinder' size='0.06 0.05' pos='0 0 -0.4' zaxis='0 1 0' contype='0' conaffinity='0'/>"
      "<site name='s1' pos='0.25 0 -0.2'/><site name='side1' pos='-0.2 0 -0.4'/>"
      "<body name='b' pos='0 0 -0.4'><joint name='j2' axis='0 1 0'/>"
      "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/><site name='tip' pos='0.3 0 -0.1'/>"
      "</body></body></worldbody><tendon>"
      "<spatial name='over_ball'><site site='s0'/><geom geom='ball'/><site site='tip'/></spatial>"
      "<spatial name='over_ball_side'><site site='s0'/><geom geom='ball' sidesite='side0'/><site site='tip'/></spatial>"
      "<spatial name='round_drum'><site site='s1'/><geom geom='drum'/><site site='tip'/></spatial>"
      "<spatial name='round_drum_side'><site site='s1'/><geom geom='drum' sidesite='side1'/><site site='tip'/>"
      "</spatial></tendon></mujoco>";
  grit_model *gm = load(xml);
  mjModel *mm = mj_load(xml);
  mjData *md = mj_makeData(mm);
  double worst = 0;
  int wrapped = 0;
  for (int a = -6; a <= 6; ++a)
    for (int b = -6; b <= 6; ++b) {
      const double q[2] = {0.25 * a, 0.3 * b};
      md->qpos[0] = q[0], md->qpos[1] = q[1];
      mj_forward(mm, md);
      for (int t = 0; t < 4; ++t) {
        const double lg = grit_model_tendon_length(gm, t, q), lm = md->ten_length[t];
        worst = fmax(worst, fabs(lg - lm));
        wrapped += md->ten_wrapnum[t] > 2;
      }
    }
  cr_log_info("wrapped tendon lengths: max |L grit - L MuJoCo| = %.3g m over 676 (tendon, q), %d wrapped", worst, wrapped);
  cr_assert(wrapped > 200, "only %d wrapped configurations", wrapped);
  cr_assert(worst < 1e-12, "%g", worst);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

#define HEAD "<mujoco><option timestep='0.001'/><worldbody>"

/* q1 = 0.5 q2 on a double pendulum: MuJoCo stiff (solref 2 ms) against grit with the same solref. */
Test(mjcf_mujoco_cx, joint_coupling) {
  const double d = compare(HEAD ARM2 "</worldbody><equality><joint joint1='j1' joint2='j2' polycoef='0 0.5 0 0 0' "
                                     "solref='0.002 1'/></equality></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("joint coupling, 1 s: max |dq| grit vs MuJoCo (stiff) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* A free body hanging from the world by a connect (a ball pendulum). */
Test(mjcf_mujoco_cx, connect) {
  const double v0[6] = {0, 0.4, 0, 1.0, 0.5, 0};
  const double d = compare(HEAD "<body name='p' pos='0.3 0 -0.4'><freejoint/>"
                                "<inertial pos='0 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody>"
                                "<equality><connect body1='p' anchor='-0.3 0 0.4' solref='0.002 1'/></equality></mujoco>",
                           1000, v0, 3, NULL, NULL);
  cr_log_info("connect, 1 s: max |dx| grit vs MuJoCo (stiff) = %.3g m", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* A free body welded to a swinging arm. */
Test(mjcf_mujoco_cx, weld) {
  const double d = compare(HEAD "<body name='a'><joint name='j1' axis='0 1 0'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body>"
                                "<body name='p' pos='0.6 0 0'><freejoint/>"
                                "<inertial pos='0 0 0' mass='0.5' diaginertia='0.01 0.01 0.01'/></body></worldbody>"
                                "<equality><weld body1='a' body2='p' solref='0.002 1'/></equality></mujoco>",
                           1000, NULL, 4, NULL, NULL);
  cr_log_info("weld, 1 s: max |dq| (arm angle, body position) grit vs MuJoCo (stiff) = %.3g", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* Body p's pose in the frame of arm a (a hinge about y at the origin) from q = (angle, p's free joint). */
static void relative_pose(const double *q, double out[7]) {
  const double c = cos(q[0]), sn = sin(q[0]), h[4] = {cos(q[0] / 2), 0, -sin(q[0] / 2), 0}; /* h: qa^-1 */
  out[0] = c * q[1] - sn * q[3], out[1] = q[2], out[2] = sn * q[1] + c * q[3];
  const double *b = q + 4;
  out[3] = h[0] * b[0] - h[1] * b[1] - h[2] * b[2] - h[3] * b[3];
  out[4] = h[0] * b[1] + h[1] * b[0] + h[2] * b[3] - h[3] * b[2];
  out[5] = h[0] * b[2] - h[1] * b[3] + h[2] * b[0] + h[3] * b[1];
  out[6] = h[0] * b[3] + h[1] * b[2] - h[2] * b[1] + h[3] * b[0];
}

/* A weld with an explicit relpose (body 2's pose in body 1, away from the reference): both engines pull
 * the body into it and agree on the convention: after 3 s both hold relpose (to 1e-4). Their transients
 * differ (the two compliance laws pull the 10 cm, 10 degree error in differently), and without gravity
 * the assembly keeps spinning at different rates, so the trajectories themselves are not compared. */
Test(mjcf_mujoco_cx, weld_relpose) {
  const char *xml = "<mujoco><option timestep='0.001' gravity='0 0 0'/><worldbody><body name='a'>"
                    "<joint name='j1' axis='0 1 0'/><inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/>"
                    "</body><body name='p' pos='0.6 0 0'><freejoint/>"
                    "<inertial pos='0 0 0' mass='0.5' diaginertia='0.01 0.01 0.01'/></body></worldbody>"
                    "<equality><weld body1='a' body2='p' relpose='0.55 0.02 0.03 0.9962 0 0.0872 0' "
                    "solref='0.002 1'/></equality></mujoco>";
  grit_model *gm = load(xml);
  mjModel *mm = mj_load(xml);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  mjData *md = mj_makeData(mm);
  for (int s = 0; s < 3000; ++s) {
    cr_assert_eq(grit_step(gd), GRIT_OK);
    mj_step(mm, md);
  }
  double rg[7], rm[7], want[7] = {0.55, 0.02, 0.03, 0.9962, 0, 0.0872, 0}, e = 0;
  const double n = sqrt(0.9962 * 0.9962 + 0.0872 * 0.0872);
  want[3] /= n, want[5] /= n;
  relative_pose(grit_data_qpos(gd), rg);
  relative_pose(md->qpos, rm);
  for (int i = 0; i < 7; ++i) e = fmax(e, fmax(fabs(rg[i] - want[i]), fabs(rm[i] - want[i])));
  cr_log_info("weld with relpose: both engines hold it to %.2g after 3 s", e);
  cr_assert(e < 1e-4, "%g", e);
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

/* An arm falling from horizontal against dry friction 2 N m (gravity's torque 2.9 N m at the start):
 * it swings down and sticks. MuJoCo's friction is made stiff by its impedance (solimpfriction near 1). */
Test(mjcf_mujoco_cx, frictionloss) {
  const double d = compare(HEAD "<body name='a'><joint name='j1' axis='0 1 0' frictionloss='2' "
                                "solreffriction='0.002 1' solimpfriction='0.99 0.999 0.001'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("frictionloss, 1 s: max |dq| grit vs MuJoCo (stiff) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* Dry friction on a fixed tendon 2 j1 (1 N, 2 N m on the joint), MuJoCo's made stiff as for joints. */
Test(mjcf_mujoco_cx, tendon_frictionloss) {
  const double d = compare(HEAD "<body name='a'><joint name='j1' axis='0 1 0'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody>"
                                "<tendon><fixed frictionloss='1' solreffriction='0.002 1' "
                                "solimpfriction='0.99 0.999 0.001'><joint joint='j1' coef='2'/></fixed></tendon></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("tendon frictionloss, 1 s: max |dq| grit vs MuJoCo (stiff) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* A fixed tendon 2 j1 limited to [-0.4, 0.4] on an arm falling from horizontal: it strikes the limit
 * at 3 rad/s and rests on it. grit's tendon limit moves exactly as its joint limit does (the next
 * test: the same 6.4e-3 rad); the difference to MuJoCo is that of the two limit formulations at the
 * impact (grit's overdamped near-rigid stop, MuJoCo's stiff spring-damper). */
Test(mjcf_mujoco_cx, fixed_tendon_limit) {
  const double d = compare(HEAD "<body name='a'><joint name='j1' axis='0 1 0'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody>"
                                "<tendon><fixed limited='true' range='-0.4 0.4' solreflimit='0.002 1' "
                                "solimplimit='0.99 0.999 0.001'><joint joint='j1' coef='2'/></fixed></tendon></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("fixed tendon limit, 1 s: max |dq| grit vs MuJoCo (stiff) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* The same arm against a joint limit at 0.2 rad. */
Test(mjcf_mujoco_cx, joint_limit_for_reference) {
  const double d = compare("<mujoco><option timestep='0.001'/><compiler angle='radian'/><worldbody>"
                           "<body name='a'><joint name='j1' axis='0 1 0' limited='true' range='-0.2 0.2' "
                                "solreflimit='0.002 1' solimplimit='0.99 0.999 0.001'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("joint limit, 1 s: max |dq| grit vs MuJoCo (stiff) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* A spatial tendon spring from a world site to the arm's tip: implicit (grit) against explicit
 * (MuJoCo 2.2.2) springs, an O(dt) difference. */
Test(mjcf_mujoco_cx, spatial_tendon_spring) {
  const double d = compare(HEAD "<site name='anchor' pos='0 0 0.5'/>" ARM2 "</worldbody><tendon>"
                                "<spatial stiffness='20' damping='0.5' springlength='1'><site site='anchor'/>"
                                "<site site='tip'/></spatial></tendon></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("spatial tendon spring, 1 s: max |dq| grit (implicit) vs MuJoCo (explicit) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* Joint springs stay implicit (seed 000): against MuJoCo 2.2.2's explicit springs the arm on a hinge
 * spring differs by O(dt). */
Test(mjcf_mujoco_cx, joint_spring_implicit_against_explicit) {
  const double d = compare(HEAD "<body name='a'><joint name='j1' axis='0 1 0' stiffness='20' damping='0.2'/>"
                                "<inertial pos='0.3 0 0' mass='1' diaginertia='0.01 0.01 0.01'/></body></worldbody></mujoco>",
                           1000, NULL, 0, NULL, NULL);
  cr_log_info("joint spring, 1 s: max |dq| grit (implicit) vs MuJoCo (explicit) = %.3g rad", d);
  cr_assert(d < 2e-2, "%g", d);
}

/* A tendon spring wrapping a sphere (with a side site): the motion against MuJoCo's, implicit against
 * explicit springs: the difference is O(dt) (it halves with dt), so the wrapped path's length and
 * Jacobian are MuJoCo's. */
Test(mjcf_mujoco_cx, wrapped_tendon_spring) {
  double d[2];
  for (int k = 0; k < 2; ++k) {
    char xml[2000];
    snprintf(xml, sizeof xml,
             "<mujoco><option timestep='%g'/><worldbody><site name='s0' pos='-0.05 0 0.4'/>"
             "<site name='side0' pos='0.5 0 0.3'/><geom name='ball' type='sphere' size='0.1' pos='0.25 0.02 0.1' "
             "contype='0' conaffinity='0'/>" ARM2 "</worldbody><tendon><spatial stiffness='30' damping='0.5'>"
             "<site site='s0'/><geom geom='ball' sidesite='side0'/><site site='tip'/></spatial></tendon></mujoco>",
             k ? 0.0005 : 0.001);
    d[k] = compare(xml, k ? 2000 : 1000, NULL, 0, NULL, NULL);
  }
  cr_log_info("tendon spring wrapping a sphere, 1 s: max |dq| grit (implicit) vs MuJoCo (explicit) = %.3g rad at "
              "dt = 1 ms, %.3g at 0.5 ms", d[0], d[1]);
  cr_assert(d[0] < 2e-2, "%g", d[0]);
  cr_assert(d[1] > 0.35 * d[0] && d[1] < 0.65 * d[0], "not O(dt): %g, %g", d[0], d[1]);
}

/* The dm_control hopper's knee: range [5, 150] degrees, starting at 0, dt = 5 ms, no gravity. MuJoCo
 * 2.2.2's default solreflimit gives it 1.7 rad/s in the first step; grit 1.97 rad/s (test_limits.c),
 * not the 8.5 rad/s of a one-step correction. */
Test(mjcf_mujoco_cx, limit_kick) {
  double vg = 0, vm = 0;
  compare("<mujoco><option timestep='0.005' gravity='0 0 0'/><compiler angle='degree'/><worldbody>"
          "<body><joint axis='0 1 0' range='5 150' limited='true' armature='0.2' damping='0.05'/>"
          "<inertial pos='0 0 -0.16' mass='1.5' diaginertia='0.02 0.02 0.002'/></body></worldbody></mujoco>",
          1, NULL, 0, &vg, &vm);
  cr_log_info("limit kick (5 degrees out, 5 ms): grit %.3g rad/s, MuJoCo %.3g rad/s", vg, vm);
  cr_assert(vg > 0.5 * vm && vg < 2.0 * vm, "grit %g, MuJoCo %g", vg, vm);
}

#endif
