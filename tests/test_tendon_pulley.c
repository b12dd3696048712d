/* SPDX-License-Identifier: Apache-2.0 */
/* test_tendon_pulley.c — spatial tendons with pulleys (<pulley divisor>: the path splits into branches,
 * each branch's segments counted divided by its divisor) that span two kinematic trees (the winch arm
 * and the hanging sphere of MuJoCo's model/adhesion/active_adhesion.xml): the length and its Jacobian
 * against MuJoCo 2.2.2 at random states (with libmujoco), the builder's checks of a pulley's place in
 * the path, and the step's Jacobians with the tendon's limit active (two trees) against central
 * differences in the state's tangent space. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraints_extra.h"
#include "data_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "test_util.h"

/* The tendon of active_adhesion.xml: the winch's anchor, over a pulley site, then two branches of
 * divisor 3 to the two pins of a free sphere. Limited to [0, range_hi]. */
static const char *pulley_xml_with(const char *option, double range_hi, const char *extra, char *buf, size_t n) {
  snprintf(buf, n,
           "<mujoco>%s"
           "<default><joint damping='.3' axis='0 1 0'/></default><worldbody>"
           "<body name='winch' pos='-.01 0 .35'><joint name='winch' damping='1'/>"
           "<geom type='capsule' size='.01' fromto='0 0 0 .1 0 .05' contype='0' conaffinity='0'/>"
           "<site name='anchor' pos='.1 0 .04'/></body>"
           "<site name='pulley' pos='.1 0 .32'/><site name='hook_left' pos='.08 0 .3'/>"
           "<site name='hook_right' pos='.12 0 .3'/>"
           "<body name='sphere' pos='.1 0 .2'><freejoint/>"
           "<geom type='sphere' size='.03' contype='0' conaffinity='0'/>"
           "<site name='pin_left' pos='-.025 0 .025'/><site name='pin_right' pos='.025 0 .025'/></body>"
           "</worldbody><tendon><spatial name='t' range='0 %.17g' solreflimit='.01 2' %s>"
           "<site site='anchor'/><site site='pulley'/><pulley divisor='3'/><site site='pulley'/>"
           "<site site='hook_left'/><site site='pin_left'/><pulley divisor='3'/><site site='pulley'/>"
           "<site site='hook_right'/><site site='pin_right'/></spatial></tendon></mujoco>",
           option, range_hi, extra);
  return buf;
}

static const char *pulley_xml(double range_hi, char *buf, size_t n) {
  return pulley_xml_with("<option timestep='0.002'/>", range_hi, "limited='true'", buf, n);
}

/* The same tendon opened by a pulley of divisor 2: its first branch (anchor to pulley) halved. */
static const char *leading_pulley_xml(char *buf, size_t n) {
  char tmp[4096];
  pulley_xml(0.19, tmp, sizeof tmp);
  const char *at = strstr(tmp, "<site site='anchor'/>");
  cr_assert_not_null(at);
  snprintf(buf, n, "%.*s<pulley divisor='2'/>%s", (int)(at - tmp), tmp, at);
  return buf;
}

static grit_model *load_xml(const char *xml) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

/* grit's length and Jacobian row of tendon 0 at q (J: nv). */
static double grit_len_jac(grit_data *d, const double *q, double *J) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_data_set_qpos(d, q, grit_model_nq(m)), GRIT_OK);
  return grit_tendon_length_jacobian(m, &d->kin, d->qpos, 0, J, d->jscratch);
}

/* A random configuration near the model's: the winch angle and the sphere's pose perturbed. */
static void random_q(tu_rng *rng, double q[8]) {
  q[0] = tu_uniform(rng, -0.7, 0.5);
  q[1] = 0.1 + tu_uniform(rng, -0.05, 0.05), q[2] = tu_uniform(rng, -0.05, 0.05), q[3] = 0.2 + tu_uniform(rng, -0.05, 0.05);
  double n = 0;
  for (int i = 0; i < 4; ++i) q[4 + i] = (i == 0 ? 1.0 : 0.0) + tu_uniform(rng, -0.3, 0.3), n += q[4 + i] * q[4 + i];
  for (int i = 0; i < 4; ++i) q[4 + i] /= sqrt(n);
}

Test(tendon_pulley, length_is_the_branches_divided_by_their_divisors) {
  char buf[4096];
  grit_model *m = load_xml(pulley_xml(0.19, buf, sizeof buf));
  cr_assert_eq(grit_model_nq(m), 8);
  cr_assert_eq(grit_model_nv(m), 7);
  cr_assert_eq(grit_model_ntendon(m), 1);
  /* at the reference pose by hand: |anchor - pulley| + (|pulley - hook_l| + |hook_l - pin_l|) / 3 + ... */
  const double anchor[3] = {-.01 + .1, 0, .35 + .04}, pul[3] = {.1, 0, .32}, hl[3] = {.08, 0, .3}, hr[3] = {.12, 0, .3};
  const double pl[3] = {.1 - .025, 0, .2 + .025}, pr[3] = {.1 + .025, 0, .2 + .025};
#define DIST(a, b) sqrt(((a)[0] - (b)[0]) * ((a)[0] - (b)[0]) + ((a)[1] - (b)[1]) * ((a)[1] - (b)[1]) + ((a)[2] - (b)[2]) * ((a)[2] - (b)[2]))
  const double L = DIST(anchor, pul) + (DIST(pul, hl) + DIST(hl, pl)) / 3 + (DIST(pul, hr) + DIST(hr, pr)) / 3;
  const double q0[8] = {0, .1, 0, .2, 1, 0, 0, 0};
  cr_assert_float_eq(grit_model_tendon_length(m, 0, q0), L, 1e-15);
  grit_model_free(m);
  m = load_xml(leading_pulley_xml(buf, sizeof buf)); /* a pulley first: the first branch halved */
  const double L2 = L - DIST(anchor, pul) / 2;
  cr_assert_float_eq(grit_model_tendon_length(m, 0, q0), L2, 1e-15);
  grit_model_free(m);
#undef DIST
}

/* A pulley last, two pulleys in a row, a site between two pulleys with no other neighbour, a zero
 * divisor: errors, as MuJoCo's compiler refuses them. */
Test(tendon_pulley, bad_paths_are_errors) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_body_def bd = grit_default_body_def();
  int body;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK);
  grit_joint_def jd = grit_default_joint_def();
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK);
  for (int i = 0; i < 3; ++i) {
    grit_site_def s = grit_default_site_def();
    s.body = i == 0 ? body : 0;
    s.pos[0] = i;
    cr_assert_eq(grit_builder_add_site(b, &s, NULL), GRIT_OK);
  }
  const int obj[5] = {0, 1, -1, 1, 2};
  const double good[5] = {0, 0, 2, 0, 0}, last[3] = {0, 0, 2}, twice[5] = {0, 2, 2, 0, 0}, zero[5] = {0, 0, -1, 0, 0};
  const double lonely[5] = {0, 2, 0, 2, 0};
  grit_tendon_def t = grit_default_tendon_def();
  t.type = GRIT_TENDON_SPATIAL;
  t.obj = obj;
  t.n = 5, t.divisor = good;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  t.n = 3, t.divisor = last;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(grit_builder_last_error(b), "ends with a pulley"), "%s", grit_builder_last_error(b));
  t.n = 5, t.divisor = twice;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_ERR_INVALID_MODEL);
  t.divisor = zero;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_ERR_INVALID_MODEL);
  t.divisor = lonely;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_ERR_INVALID_MODEL);
  grit_builder_free(b);
  /* MJCF: a pulley without a divisor, with a negative one: errors with the line */
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  const char *bad = "<mujoco><worldbody><body><joint/><geom size='.1'/><site name='a'/></body><site name='b'/>"
                    "</worldbody><tendon><spatial><site site='a'/>\n<pulley divisor='-1'/><site site='b'/>"
                    "<site site='a'/></spatial></tendon></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(bad, &m, NULL, msg), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(msg, ":2:") && strstr(msg, "divisor"), "%s", msg);
}

/* The step's A and B with the tendon's upper limit active (the sphere hangs from it, two trees) against
 * central differences in the tangent space. */
Test(tendon_pulley, jacobians_with_the_limit_active) {
  char buf[4096];
  grit_model *m = load_xml(pulley_xml(0.19, buf, sizeof buf));
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-11;
  grit_data_set_step_settings(d, &st);
  for (int k = 0; k < 100; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double q0[8] = {0, .1, 0, .2, 1, 0, 0, 0};
  cr_assert(grit_model_tendon_length(m, 0, grit_data_qpos(d)) > grit_model_tendon_length(m, 0, q0),
            "the sphere did not fall onto the limit");
  const double Lnow = grit_model_tendon_length(m, 0, grit_data_qpos(d));
  cr_assert(fabs(Lnow - 0.19) < 2e-3, "the tendon is not at its limit: %g", Lnow);
  double e = fdt_check(d, 1e-6);
  cr_log_info("pulley limit: L = %.6f (limit 0.19), A, B vs central differences %.3g", Lnow, e);
  cr_assert(e < 1e-5, "A, B vs central differences: %g", e);
  grit_data_free(d);
  grit_model_free(m);
}

/* A spring and damper on the tendon across the two trees, gravity off, from a moving state: A, B
 * against central differences. */
#define SPRING "limited='false' stiffness='5' damping='.2' springlength='.3'"
static void spring_state(grit_data *d) {
  const double q[8] = {0.2, .1, 0.01, .2, 1, 0, 0, 0}, v[7] = {0.3, 0.1, -0.2, 0.05, 0.4, -0.3, 0.2};
  cr_assert_eq(grit_data_set_qpos(d, q, 8), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, 7), GRIT_OK);
}

Test(tendon_pulley, jacobians_with_a_spring_across_trees) {
  char buf[4096];
  grit_model *m = load_xml(pulley_xml_with("<option timestep='0.002' gravity='0 0 0'/>", 0.19, SPRING, buf, sizeof buf));
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-11;
  grit_data_set_step_settings(d, &st);
  spring_state(d);
  const double e = fdt_check(d, 1e-6);
  cr_log_info("pulley spring across two trees: A, B vs central differences %.3g", e);
  cr_assert(e < 1e-5, "%g", e);
  grit_data_free(d);
  grit_model_free(m);
}

#ifdef GRIT_TEST_MUJOCO
#include <mujoco/mujoco.h>

#include "mjcf_mujoco_util.h"

static void length_and_jacobian_against_mujoco(const char *xml) {
  char err[1000] = "";
  mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *m = load_xml(xml);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_model_nq(m), mm->nq);
  cr_assert_eq(grit_model_nv(m), mm->nv);
  tu_rng rng = {7};
  double worst_l = 0, worst_j = 0, J[7];
  for (int trial = 0; trial < 20; ++trial) {
    double q[8];
    random_q(&rng, q);
    memcpy(md->qpos, q, sizeof q);
    mj_forward(mm, md);
    const double L = grit_len_jac(d, q, J);
    worst_l = fmax(worst_l, fabs(L - md->ten_length[0]));
    for (int i = 0; i < 7; ++i) worst_j = fmax(worst_j, fabs(J[i] - md->ten_J[i]));
  }
  cr_log_info("pulley tendon vs MuJoCo 2.2.2: |dL| %.3g, |dJ| %.3g", worst_l, worst_j);
  cr_assert(worst_l < 1e-14 && worst_j < 1e-13, "length %g, Jacobian %g", worst_l, worst_j);
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

Test(tendon_pulley, length_and_jacobian_equal_mujocos) {
  char buf[4096];
  length_and_jacobian_against_mujoco(pulley_xml(0.19, buf, sizeof buf));
  length_and_jacobian_against_mujoco(leading_pulley_xml(buf, sizeof buf)); /* a pulley first (mjx's files) */
}

/* The spring and damper across the two trees, gravity off, 1 s against MuJoCo 2.2.2: grit's implicit
 * spring (and damping, and free-body rotation) and MuJoCo's explicit ones differ by O(dt): the error
 * halves with dt (0.0198 at 1 ms, 0.0100 at 0.5 ms). */
static double spring_run(double dt) {
  char buf[4096], opt[128], err[1000] = "";
  snprintf(opt, sizeof opt, "<option timestep='%.17g' gravity='0 0 0'/>", dt);
  const char *xml = pulley_xml_with(opt, 0.19, SPRING, buf, sizeof buf);
  mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *m = load_xml(xml);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  spring_state(d);
  memcpy(md->qpos, grit_data_qpos(d), sizeof(double) * 8);
  memcpy(md->qvel, grit_data_qvel(d), sizeof(double) * 7);
  double e = 0;
  for (int k = 0; k < (int)lround(1.0 / dt); ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  double eq, ev;
  mjcmp_state_error(mm, md, grit_data_qpos(d), grit_data_qvel(d), &eq, &ev);
  e = eq;
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return e;
}

Test(tendon_pulley, spring_across_trees_against_mujoco) {
  const double e1 = spring_run(1e-3), e2 = spring_run(5e-4);
  cr_log_info("pulley spring across two trees vs MuJoCo 2.2.2 over 1 s: max |dq| %.3g at 1 ms, %.3g at 0.5 ms", e1, e2);
  cr_assert(e1 < 0.05 && e2 > 0.4 * e1 && e2 < 0.6 * e1, "dt 1e-3: %g, 5e-4: %g (first order)", e1, e2);
}
#endif
