/* SPDX-License-Identifier: Apache-2.0 */
/* test_muscle.c — muscles and the slider-crank transmission (issue 24) on MuJoCo 2.2.2's own model files
 * tests/models/mujoco_model/arm26.xml (six muscles on wrapped spatial tendons) and slider_crank.xml
 * (three position servos through slider-cranks, one of them "broken": its rod too short): strict loading,
 * the step's A and B against central differences, the builder's and the loader's errors; with libmujoco
 * (GRIT_TEST_MUJOCO) side by side with MuJoCo 2.2.2: sizes, acc0, length ranges, actuator lengths,
 * moments and forces at random states, and 1 s trajectories. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actuation_muscle.h" /* grit_actuator_length_jacobian: the lengths and moments */
#include "data_internal.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "test_util.h"
#include "grit/mjcf.h"
#include "model_internal.h"

#define ARM GRIT_SOURCE_DIR "/tests/models/mujoco_model/arm26.xml"
#define CRANK GRIT_SOURCE_DIR "/tests/models/mujoco_model/slider_crank.xml"

static grit_model *load(const char *path, double dt, int explicit_actuation) {
  grit_mjcf_load_options lo = grit_mjcf_default_load_options(); /* strict: lenient = 0 */
  if (dt > 0) lo.timestep = dt;
  lo.explicit_actuation = explicit_actuation;
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

/* MuJoCo 2.2.2's sizes (nq, nv, nu, na, nbody) of both files, as libmujoco 2.2.2 reports them. */
Test(muscle, both_files_load_strictly_with_mujocos_sizes) {
  grit_model *m = load(ARM, 0, 0);
  cr_assert(grit_model_nq(m) == 2 && grit_model_nv(m) == 2 && grit_model_nu(m) == 6 && grit_model_na(m) == 6 &&
            grit_model_nbody(m) == 3);
  grit_actuator_def a;
  cr_assert_eq(grit_model_actuator(m, 0, &a), GRIT_OK);
  cr_assert(a.dyntype == GRIT_DYN_MUSCLE && a.gaintype == GRIT_GAIN_MUSCLE && a.biastype == GRIT_BIAS_MUSCLE);
  cr_assert(a.dynprm[0] == 0.01 && a.dynprm[1] == 0.04 && a.muscle_gainprm[3] == 200 && a.muscle_biasprm[8] == 1.2);
  cr_assert(a.ctrl_limited && a.ctrl_range[0] == 0 && a.ctrl_range[1] == 1);
  grit_model_free(m);
  m = load(CRANK, 0, 0);
  cr_assert(grit_model_nq(m) == 3 && grit_model_nv(m) == 3 && grit_model_nu(m) == 3 && grit_model_na(m) == 0 &&
            grit_model_nbody(m) == 4);
  cr_assert_eq(grit_model_actuator(m, 1, &a), GRIT_OK);
  cr_assert(a.trntype == GRIT_TRN_SLIDERCRANK && a.crank_length == 0.06 && a.crank_site == 2 && a.slider_site == 3);
  grit_model_free(m);
}

/* acc0 and the length ranges against MuJoCo 2.2.2's numbers (printed by libmujoco 2.2.2 for arm26.xml):
 * acc0 is the same computation (round-off); the length ranges come from the joint limits in grit and
 * from MuJoCo's simulation against the soft limits, which pushes a little past them: measured at most
 * 1.5e-4 m, 1e-3 of each range. */
Test(muscle, acc0_and_length_ranges_are_mujocos) {
  static const double acc0[6] = {0.558692074634, 0.558692074634, 1.4931422226, 1.4931422226, 0.939915716774, 0.939915716774};
  static const double lr[12] = {0.10242022997, 0.340386464984, 0.34032594475, 0.549867948465, 0.0102621210586,
                                0.216452832502, 0.216363618394, 0.384063470156, 0.331974923978, 0.799956463487,
                                0.799802841732, 1.17701879782};
  grit_model *m = load(ARM, 0, 0);
  double worst = 0;
  for (int a = 0; a < 6; ++a) {
    cr_assert_lt(fabs(m->act_acc0[a] / acc0[a] - 1), 1e-11, "acc0[%d] %.15g", a, m->act_acc0[a]);
    const double *g = m->act_lengthrange + 2 * a, *r = lr + 2 * a;
    const double e = fmax(fabs(g[0] - r[0]), fabs(g[1] - r[1]));
    worst = fmax(worst, e);
    cr_assert_lt(e, 2e-4, "actuator %d: (%.9f, %.9f) vs MuJoCo's (%.9f, %.9f)", a, g[0], g[1], r[0], r[1]);
    cr_assert_lt(e / (r[1] - r[0]), 1.5e-3);
  }
  printf("arm26 length ranges: max |grit - MuJoCo| = %.3g m\n", worst);
  grit_model_free(m);
  /* the slider-crank's acc0 (position servos: not used, computed for every actuator as MuJoCo does) */
  static const double acc0c[3] = {67.2584446585, 153.086999848, 48.5007761497};
  m = load(CRANK, 0, 0);
  for (int a = 0; a < 3; ++a) cr_assert_lt(fabs(m->act_acc0[a] / acc0c[a] - 1), 1e-11);
  grit_model_free(m);
}

/* An explicit lengthrange is kept (MuJoCo's useexisting); a computed one needs the limits of the joints
 * that move the muscle only (not those of a joint further out on the chain). */
Test(muscle, an_explicit_lengthrange_is_kept) {
  static const char xml[] =
      "<mujoco><compiler angle='radian'/><worldbody><body><joint name='j' range='-1 1'/><geom type='capsule' size='.1' fromto='0 0 0 1 0 0'/>"
      "<body pos='1 0 0'><joint limited='false'/><geom size='.1'/></body></body>" /* an unlimited joint below: no part */
      "</worldbody><actuator><muscle joint='j' lengthrange='-0.5 0.75'/><muscle joint='j' gear='2'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_actuator_def a;
  grit_model_actuator(m, 0, &a);
  cr_assert(a.length_range[0] == -0.5 && a.length_range[1] == 0.75);
  grit_model_actuator(m, 1, &a); /* a joint muscle: gear times the joint's range */
  cr_assert_float_eq(a.length_range[0], -2.0, 1e-12);
  cr_assert_float_eq(a.length_range[1], 2.0, 1e-12);
  grit_model_free(m);
}

/* <compiler><lengthrange>: uselimit takes the joint's range (MuJoCo copies it without the gear),
 * useexisting="false" recomputes a given range; mode "none" is refused. */
Test(muscle, compiler_lengthrange_options) {
  static const char xml[] =
      "<mujoco><compiler angle='radian'><lengthrange useexisting='%s' uselimit='%s' inttotal='5'/></compiler>"
      "<worldbody><body><joint name='j' range='-1 1'/><geom type='capsule' size='.1' fromto='0 0 0 1 0 0'/></body>"
      "</worldbody><actuator><muscle joint='j' gear='2' lengthrange='-0.5 0.75'/></actuator></mujoco>";
  const char *opts[3][2] = {{"false", "true"}, {"false", "false"}, {"true", "true"}};
  const double want[3][2] = {{-1, 1}, {-2, 2}, {-0.5, 0.75}};
  for (int k = 0; k < 3; ++k) {
    char buf[1024], msg[GRIT_MESSAGE_SIZE];
    snprintf(buf, sizeof buf, xml, opts[k][0], opts[k][1]);
    grit_model *m;
    cr_assert_eq(grit_mjcf_load_string(buf, &m, NULL, msg), GRIT_OK, "%s", msg);
    grit_actuator_def a;
    grit_model_actuator(m, 0, &a);
    cr_assert(fabs(a.length_range[0] - want[k][0]) < 1e-12 && fabs(a.length_range[1] - want[k][1]) < 1e-12,
              "case %d: (%g, %g)", k, a.length_range[0], a.length_range[1]);
    grit_model_free(m);
  }
}

/* A slider site inside a <frame> (MuJoCo >= 3.1) is placed and turned by it: the same crank as with the
 * composed site written out. */
Test(muscle, a_slider_site_in_a_frame) {
  static const char xml[] =
      "<mujoco><worldbody>%s<body><joint/><geom size='.01'/><site name='c' pos='.1 0 0'/></body></worldbody>"
      "<actuator><position cranksite='c' slidersite='sl' cranklength='.2'/></actuator></mujoco>";
  const char *sites[2] = {"<frame pos='0 -.1 0' euler='0 0 90'><site name='sl' pos='.02 0 0' zaxis='1 .5 0'/></frame>",
                          "<site name='sl' pos='0 -.08 0' zaxis='-.5 1 0'/>"};
  double len[2];
  for (int k = 0; k < 2; ++k) {
    char buf[1024], msg[GRIT_MESSAGE_SIZE];
    snprintf(buf, sizeof buf, xml, sites[k]);
    grit_model *m;
    cr_assert_eq(grit_mjcf_load_string(buf, &m, NULL, msg), GRIT_OK, "%s", msg);
    grit_data *d;
    grit_data_create(m, &d);
    const double q = 0.7;
    grit_data_set_qpos(d, &q, 1);
    grit_forward_kinematics(d);
    double J[1];
    len[k] = grit_actuator_length_jacobian(m, &d->kin, d->qpos, 0, J, d->jscratch);
    grit_data_free(d);
    grit_model_free(m);
  }
  cr_assert_lt(fabs(len[0] - len[1]), 1e-14, "%.17g vs %.17g", len[0], len[1]);
}


#define ONE "<mujoco><worldbody><site name='s0' pos='0 -.1 0'/><body><joint name='j'/><geom size='.1'/>" \
            "<site name='c' pos='.1 0 0'/></body></worldbody>\n<actuator>\n"

Test(muscle, bad_input_is_an_error_with_file_and_line) {
  tu_expect_load_error(ONE "<position cranksite='c' cranklength='.2'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <position> a slider-crank needs its slider site");
  tu_expect_load_error(ONE "<position cranksite='c' slidersite='s0'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <position> a slider-crank needs cranklength > 0");
  tu_expect_load_error(ONE "<position cranksite='x' slidersite='s0' cranklength='.2'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <position> unknown crank site x");
  tu_expect_load_error(ONE "<muscle joint='j' range='1 0.5'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <muscle> muscle range[0] < range[1] is required");
  tu_expect_load_error(ONE "<muscle joint='j' lmax='0.9'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "lmin < 1 < lmax");
  tu_expect_load_error(ONE "<general joint='j' gaintype='muscle' gainprm='0.75 1.05 -1 0 0.5 1.6 1.5 1.3 1.2'/></actuator></mujoco>",
               GRIT_ERR_INVALID_MODEL, "<string>:3: <general> muscle scale, vmax, fpmax, fvmax must be > 0");
  tu_expect_load_error(ONE "<muscle joint='j'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "<string>:3: <muscle> actuator 0: its muscle's length range needs its joints' limits");
  tu_expect_load_error("<mujoco><compiler><lengthrange mode='none'/></compiler></mujoco>", GRIT_ERR_UNSUPPORTED,
               "<string>:1: <lengthrange> mode 'none' is not supported");
  tu_expect_load_error(ONE "<position joint='j' cranksite='c' slidersite='s0' cranklength='.2'/></actuator></mujoco>",
               GRIT_ERR_INVALID_MODEL, "exactly one transmission");
}

Test(muscle, the_builder_checks_sites_and_parameters) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_body_def bd = grit_default_body_def();
  bd.parent = 0;
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_site_def sd = grit_default_site_def();
  sd.body = 1, sd.pos[0] = 0.1;
  grit_builder_add_site(b, &sd, NULL);
  sd.body = 0, sd.pos[0] = 0, sd.pos[1] = -0.1;
  grit_builder_add_site(b, &sd, NULL);
  grit_actuator_def a = grit_default_actuator_def();
  a.trntype = GRIT_TRN_SLIDERCRANK;
  a.crank_site = 0, a.crank_length = 0.2;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL); /* no slider site */
  a.slider_site = 1, a.slider_axis[2] = 0;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL); /* no axis */
  a.slider_axis[1] = 2;
  a.crank_length = 0;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL);
  a.crank_length = 0.2;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_actuator_def mu = grit_default_actuator_def();
  mu.joint = 0, mu.gaintype = GRIT_GAIN_MUSCLE;
  mu.muscle_gainprm[4] = 1.1; /* lmin > 1 */
  cr_assert_eq(grit_builder_add_actuator(b, &mu, NULL), GRIT_ERR_INVALID_MODEL);
  mu.muscle_gainprm[4] = 0.5;
  cr_assert_eq(grit_builder_add_actuator(b, &mu, NULL), GRIT_OK); /* joint not limited: compile fails */
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_ERR_UNSUPPORTED);
  grit_builder_free(b);
}

/* A, B of one step against central differences (step 1e-6; no constraint is active, the solve is exact):
 * the arm's muscles (activation dynamics, force-length-velocity curves on wrapped tendons) and the three
 * slider-cranks (implicit position servos whose moment turns with q). */
static void check_model_jacobians(grit_model *m, const char *what, const double *x, const double *u, double tol) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nx = 2 * grit_model_nq(m) + grit_model_na(m), nu = grit_model_nu(m);
  double *A = calloc((size_t)(nx * nx * 2 + nx * nu * 2), sizeof *A), *Afd = A + nx * nx, *B = Afd + nx * nx, *Bfd = B + nx * nu;
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, nx * nx), eb = fdj_rel_err(B, Bfd, nx * nu);
  printf("%s: A rel err %.3g, B rel err %.3g\n", what, ea, eb);
  cr_assert_lt(ea, tol);
  cr_assert_lt(eb, tol);
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}

static void check_jacobians(const char *path, const double *x, const double *u, double tol) {
  check_model_jacobians(load(path, 0, 0), strrchr(path, '/') + 1, x, u, tol);
}

/* A muscle on a tendon through three sites, one on a joint (grit_actuator_force's path) and a slider-crank
 * whose slider site is turned (zaxis), in one chain. */
Test(muscle, joint_muscle_jacobians_match_central_differences) {
  static const char xml[] =
      "<mujoco><compiler angle='radian'/><option gravity='0 0 0'/><worldbody><site name='s0' pos='-.15 0 0'/>"
      "<site name='sl' pos='0 -.1 0' zaxis='1 .5 0'/><body><joint name='a' range='0 2'/>"
      "<geom type='capsule' fromto='0 0 0 .5 0 0' size='.04' contype='0' conaffinity='0'/><site name='s1' pos='.2 .05 0'/>"
      "<site name='c' pos='.1 0 0'/><body pos='.5 0 0'><joint name='b' range='0 2' damping='.1'/><geom type='capsule' "
      "fromto='0 0 0 .5 0 0' size='.03' contype='0' conaffinity='0'/><site name='s2' pos='.1 .05 0'/></body></body>"
      "</worldbody><tendon><spatial name='t'><site site='s0'/><site site='s1'/><site site='s2'/></spatial></tendon>"
      "<actuator><muscle tendon='t' ctrllimited='true' ctrlrange='0 1'/><muscle joint='b' ctrllimited='true' "
      "ctrlrange='0 1' gear='0.05'/><position cranksite='c' slidersite='sl' cranklength='.2' kp='30'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  const double x[6] = {0.6, 0.9, 0.2, -0.3, 0.3, 0.6}, u[3] = {0.7, 0.2, 0.05};
  check_model_jacobians(m, "joint and tendon muscles, slider-crank", x, u, 1e-6);
}

Test(muscle, arm_jacobians_match_central_differences) {
  const double x[10] = {0.5, 0.8, 0.3, -0.2, 0.2, 0.5, 0.3, 0.6, 0.4, 0.1};
  const double u[6] = {0.7, 0.1, 0.4, 0.2, 0.9, 0.3};
  check_jacobians(ARM, x, u, 1e-6);
}

Test(muscle, slider_crank_jacobians_match_central_differences) {
  const double x[6] = {0.4, -0.6, 0.9, 0.5, -0.3, 0.2};
  const double u[3] = {0.05, -0.03, 0.02};
  check_jacobians(CRANK, x, u, 1e-6);
}

#ifdef GRIT_TEST_MUJOCO
#include <mujoco/mujoco.h>

/* Lengths, moments and forces at 20 random states (q in [-0.3, 2.4], v, act, ctrl), MuJoCo's length ranges
 * copied into grit's model for the muscles (the curves then see the same numbers). (Past 2.55 rad of the
 * arm's shoulder, outside its joint range, the tendons SE and BE wrap the shoulder on the other side
 * than MuJoCo's: docs/actuation.md.) */
static void compare_forces(const char *path, double *worst_len, double *worst_mom, double *worst_f) {
  char err[1000];
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *m = load(path, 0, 0);
  cr_assert(grit_model_nq(m) == mm->nq && grit_model_nv(m) == mm->nv && grit_model_nu(m) == mm->nu &&
            grit_model_na(m) == mm->na && grit_model_nbody(m) == mm->nbody);
  for (int a = 0; a < mm->nu; ++a) {
    cr_assert_lt(fabs(m->act_acc0[a] - mm->actuator_acc0[a]), 1e-13 * mm->actuator_acc0[a]);
    memcpy(m->act_lengthrange + 2 * a, mm->actuator_lengthrange + 2 * a, 2 * sizeof(double));
  }
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nv = mm->nv, nu = mm->nu, na = mm->na;
  double q[8], v[8], u[8], act[8], f[8], J[8];
  unsigned seed = 7;
  *worst_len = *worst_mom = *worst_f = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (int i = 0; i < nv; ++i) q[i] = 2.7 * rand_r(&seed) / RAND_MAX - 0.3, v[i] = 2.0 * rand_r(&seed) / RAND_MAX - 1;
    for (int i = 0; i < nu; ++i) u[i] = 1.2 * rand_r(&seed) / RAND_MAX - 0.1;
    for (int i = 0; i < na; ++i) act[i] = 1.0 * rand_r(&seed) / RAND_MAX;
    memcpy(md->qpos, q, sizeof(double) * (size_t)nv);
    memcpy(md->qvel, v, sizeof(double) * (size_t)nv);
    memcpy(md->ctrl, u, sizeof(double) * (size_t)nu);
    memcpy(md->act, act, sizeof(double) * (size_t)na);
    mj_forward(mm, md);
    grit_data_set_qpos(d, q, nv), grit_data_set_qvel(d, v, nv), grit_data_set_ctrl(d, u, nu);
    grit_data_set_act(d, act, na);
    grit_forward_kinematics(d);
    cr_assert_eq(grit_actuator_forces(d, f), GRIT_OK);
    for (int a = 0; a < nu; ++a) {
      const double g = m->act_gear[a];
      double L;
      if (m->act_trntype[a] == GRIT_TRN_JOINT) {
        L = q[m->jnt_qposadr[m->act_jnt[a]]];
        for (int i = 0; i < nv; ++i) J[i] = i == m->act_dof[a];
      } else {
        L = grit_actuator_length_jacobian(m, &d->kin, d->qpos, a, J, d->jscratch); /* without the gear */
      }
      L *= g;
      for (int i = 0; i < nv; ++i) J[i] *= g;
      *worst_len = fmax(*worst_len, fabs(L - md->actuator_length[a]));
      for (int i = 0; i < nv; ++i) *worst_mom = fmax(*worst_mom, fabs(J[i] - md->actuator_moment[a * nv + i]));
      *worst_f = fmax(*worst_f, fabs(f[a] - md->actuator_force[a]) / fmax(1.0, fabs(md->actuator_force[a])));
    }
  }
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

/* <general> with the muscle types and different gain and bias parameters (a fixed peak force in the gain,
 * the scale / acc0 rule in the bias), on a limited joint with gear: written to a temporary file. */
Test(muscle, general_muscle_types_are_mujocos) {
  static const char xml[] =
      "<mujoco><worldbody><body><joint name='j' limited='true' range='-40 70'/><geom type='capsule' size='.05' "
      "fromto='0 0 0 .5 0 0'/><body pos='.5 0 0'><joint name='k' limited='true' range='-30 90'/><geom type='capsule' "
      "size='.04' fromto='0 0 0 .4 0 0'/></body></body></worldbody><actuator>"
      "<general joint='j' gear='0.05' gaintype='muscle' gainprm='0.75 1.05 -1 200 0.5 1.6 1.5 1.3 1.2'/>"
      "<general joint='k' gear='0.04' dyntype='muscle' dynprm='0.02 0.05' gaintype='muscle' biastype='muscle' "
      "gainprm='0.6 1.2 300 200 0.4 1.7 2 1.5 1.4' biasprm='0.7 1.1 -1 150 0.5 1.5 1.5 1.2 1.3' ctrllimited='true' "
      "ctrlrange='0 1'/></actuator></mujoco>"; /* MuJoCo 2.2.2: stateless actuators first */
  char path[] = "/tmp/grit_muscle_XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char err[1000];
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mj_deleteModel(mm);
  double el, em, ef;
  compare_forces(path, &el, &em, &ef);
  remove(path);
  printf("general muscle types vs MuJoCo 2.2.2: length %.3g, moment %.3g, force (relative) %.3g\n", el, em, ef);
  cr_assert(el < 1e-14 && em < 1e-13 && ef < 1e-12);
}

Test(muscle, lengths_moments_and_forces_are_mujocos) {
  double el, em, ef;
  compare_forces(ARM, &el, &em, &ef);
  printf("arm26 vs MuJoCo 2.2.2: length %.3g, moment %.3g, force (relative) %.3g\n", el, em, ef);
  cr_assert(el < 1e-14 && em < 1e-13 && ef < 1e-12);
  compare_forces(CRANK, &el, &em, &ef);
  printf("slider_crank vs MuJoCo 2.2.2: length %.3g, moment %.3g, force (relative) %.3g\n", el, em, ef);
  cr_assert(el < 1e-14 && em < 1e-13 && ef < 1e-12);
}

/* max |q_grit - q_MuJoCo| over 1 s from qpos0 at rest with constant controls u, at dt; joint limits off
 * in both (the arm starts on its lower limits, where the two limit models differ), MuJoCo's Euler. */
static double trajectory(const char *path, double dt, int explicit_actuation, const double *u) {
  char err[1000];
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mm->opt.timestep = dt;
  mm->opt.disableflags |= mjDSBL_LIMIT | mjDSBL_CONTACT;
  mm->opt.integrator = mjINT_EULER;
  mjData *md = mj_makeData(mm);
  grit_model *m = load(path, dt, explicit_actuation);
  for (int j = 0; j < m->njnt; ++j) m->jnt_limited[j] = 0;
  for (int g = 0; g < m->ngeom; ++g) m->geom_contype[g] = m->geom_conaffinity[g] = 0;
  for (int a = 0; a < mm->nu; ++a) memcpy(m->act_lengthrange + 2 * a, mm->actuator_lengthrange + 2 * a, 2 * sizeof(double));
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-12;
  grit_data_set_step_settings(d, &st);
  memcpy(md->ctrl, u, sizeof(double) * (size_t)mm->nu);
  cr_assert_eq(grit_data_set_ctrl(d, u, mm->nu), GRIT_OK);
  double e = 0;
  const int n = (int)lround(1.0 / dt);
  for (int k = 0; k < n; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    for (int i = 0; i < mm->nq; ++i) e = fmax(e, fabs(grit_data_qpos(d)[i] - md->qpos[i]));
  }
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return e;
}

/* The muscles are explicit in both (no stabilizing slope to take implicitly), joint damping implicit in
 * both: the arm's 1 s trajectory is MuJoCo's to round-off at the file's 5 ms (controls that keep the arm
 * within its joint range; far past it, at 2.7 rad, the two part at 1e-2 after 0.8 s). */
Test(muscle, arm_trajectory_is_mujocos) {
  const double u[6] = {0.4, 0.2, 0.5, 0.1, 0.3, 0.3};
  const double e = trajectory(ARM, 0.005, 0, u);
  printf("arm26, 1 s at 5 ms: max |dq| = %.3g rad\n", e);
  cr_assert_lt(e, 1e-9);
}

/* The slider-cranks' position servos: grit takes their stiffness implicitly (kp J^T J in the operator),
 * MuJoCo 2.2.2's Euler explicitly: first order in dt (the error shrinks tenfold with dt); with grit's
 * explicit_actuation the two agree to round-off. (Where a broken crank's det crosses 0 its moment jumps,
 * and the two trajectories part by more: u[2] = 0.06 gives 4e-2 at 1 ms, 7e-3 at 0.1 ms.) */
Test(muscle, slider_crank_trajectory_differs_from_mujocos_by_first_order) {
  const double u[3] = {0.08, -0.05, 0.09}; /* the broken crank's rod stays on one side of det = 0 */
  const double e3 = trajectory(CRANK, 1e-3, 0, u), e4 = trajectory(CRANK, 1e-4, 0, u), ex = trajectory(CRANK, 1e-3, 1, u);
  printf("slider_crank, 1 s: max |dq| %.3g (1 ms), %.3g (0.1 ms), ratio %.1f; explicit at 1 ms %.3g\n", e3, e4, e3 / e4, ex);
  cr_assert(e3 / e4 > 7 && e3 / e4 < 13);
  cr_assert_lt(e4, 1e-3);
  cr_assert_lt(ex, 1e-9);
}
#endif
