/* SPDX-License-Identifier: Apache-2.0 */
/* test_site_actuator.c — MuJoCo 2.2.2's site transmission (issue 24; <motor site=... gear="fx fy fz tx ty
 * tz">, as quadrotors use): strict loading of a small quadrotor (a free body with four thrust-and-yaw
 * motors) carrying a hinged link with its own site motor, the errors (refsite, a site on the world, an
 * unknown site), A and B of a step against central differences; with libmujoco (GRIT_TEST_MUJOCO) side by
 * side with MuJoCo 2.2.2: moments and generalized actuator forces at random states, and a 1 s trajectory. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuation_muscle.h" /* grit_actuator_length_jacobian: the moments */
#include "data_internal.h"
#include "derivatives_tendon.h" /* grit_deriv_tendon_fns_avx2: the AVX2 compilation */
#include "grit/math_dual.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "test_util.h"
#include "grit/mjcf.h"
#include "model_internal.h"

/* The quadrotor: thrust along each rotor site's z, yaw torque -+0.02 per unit thrust; the sites turned
 * (quat, euler) so that the gear's rotation into the body frame is exercised; a link on a hinge below
 * with a site motor pushing along its site's x and twisting about its y. */
static const char QUAD[] =
    "<mujoco><option timestep='0.001'/><worldbody><body name='x2' pos='0 0 1'><freejoint/>"
    "<geom type='box' size='.1 .1 .02' mass='.8' contype='0' conaffinity='0'/>"
    "<site name='t1' pos='.1 .1 .03' quat='1 .02 0 0'/><site name='t2' pos='-.1 .1 .03' euler='0 3 0'/>"
    "<site name='t3' pos='-.1 -.1 .03'/><site name='t4' pos='.1 -.1 .03' euler='2 0 5'/>"
    "<body name='link' pos='0 0 -.05'><joint name='h' axis='1 0 0' damping='.01'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -.2' size='.01' mass='.05' contype='0' conaffinity='0'/>"
    "<site name='tip' pos='0 0 -.2' euler='0 30 20'/></body></body></worldbody><actuator>"
    "<motor site='t1' gear='0 0 1 0 0 -.02' ctrlrange='0 13' ctrllimited='true'/>"
    "<motor site='t2' gear='0 0 1 0 0 .02' ctrlrange='0 13' ctrllimited='true'/>"
    "<motor site='t3' gear='0 0 1 0 0 -.02' ctrlrange='0 13' ctrllimited='true'/>"
    "<motor site='t4' gear='0 0 1 0 0 .02' ctrlrange='0 13' ctrllimited='true'/>"
    "<motor site='tip' gear='1 0 0 0 .3 0'/></actuator></mujoco>";

/* explicit: explicit_actuation and explicit_gyroscopic, MuJoCo 2.2.2's Euler treatment of both */
static grit_model *load_string(const char *xml, int explicit) {
  grit_mjcf_load_options lo = grit_mjcf_default_load_options(); /* strict: lenient = 0 */
  lo.explicit_actuation = lo.explicit_gyroscopic = explicit;
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), NULL, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

Test(site_actuator, the_quadrotor_loads_strictly) {
  grit_model *m = load_string(QUAD, 0);
  cr_assert(grit_model_nq(m) == 8 && grit_model_nv(m) == 7 && grit_model_nu(m) == 5 && grit_model_na(m) == 0);
  grit_actuator_def a;
  cr_assert_eq(grit_model_actuator(m, 2, &a), GRIT_OK);
  cr_assert(a.trntype == GRIT_TRN_SITE && a.site == 2 && a.gear == 1);
  cr_assert(a.site_gear[0] == 0 && a.site_gear[1] == 0 && a.site_gear[2] == 1 && a.site_gear[5] == -0.02); /* t3: unturned */
  cr_assert_eq(grit_model_actuator(m, 0, &a), GRIT_OK); /* t1 turned about x: the gear turns with it */
  cr_assert(a.site_gear[1] < 0 && fabs(a.site_gear[0] * a.site_gear[0] + a.site_gear[1] * a.site_gear[1] +
                                       a.site_gear[2] * a.site_gear[2] - 1) < 1e-15);
  grit_model_free(m);
}


#define ONE "<mujoco><worldbody><site name='w'/><body><joint name='j'/><geom size='.1'/>" \
            "<site name='s'/></body></worldbody>\n<actuator>\n"

Test(site_actuator, bad_input_is_an_error_with_file_and_line) {
  tu_expect_load_error(ONE "<motor site='s' refsite='w'/></actuator></mujoco>", GRIT_ERR_UNSUPPORTED,
               "<string>:3: <motor> transmission 'refsite' is not supported");
  tu_expect_load_error(ONE "<motor name='fixed' site='w'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
               "<string>:3: <motor> actuator 0: its site 'w' is on a body that cannot move (actuator 'fixed')");
  tu_expect_load_error(ONE "<motor site='x'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "<string>:3: <motor> unknown site x");
  tu_expect_load_error(ONE "<motor site='s' joint='j'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL, "exactly one transmission");
  tu_expect_load_error(ONE "<motor site='s' gear='1 2 3 4 5 6 7'/></actuator></mujoco>", GRIT_ERR_PARSE, "more than 6 numbers");
}

/* A, B of one step against central differences (fd_jacobians.h needs nq = nv: hinges and a slide): site
 * motors with force and torque gear on a chain, and a site velocity servo (its damping kv implicit, as a
 * tendon's) and position servo (its stiffness explicit: the length is 0). */
Test(site_actuator, jacobians_match_central_differences) {
  static const char xml[] =
      "<mujoco><option gravity='0 0 -9.81'/><worldbody><body><joint type='slide' axis='1 0 0'/><geom size='.05' "
      "contype='0' conaffinity='0'/><body><joint name='a' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .5 0 0' "
      "size='.04' contype='0' conaffinity='0'/><site name='s1' pos='.3 0 .02' euler='10 20 30'/><body pos='.5 0 0'>"
      "<joint axis='0 0 1'/><joint axis='1 0 0'/><geom type='capsule' fromto='0 0 0 .4 0 0' size='.03' contype='0' "
      "conaffinity='0'/><site name='s2' pos='.4 0 0' quat='.9 .1 .3 .2'/></body></body></body></worldbody><actuator>"
      "<motor site='s1' gear='0 0 1 0 .1 -.02'/><motor site='s2' gear='1 .5 0 .1 0 .3'/>"
      "<velocity site='s2' kv='2' gear='0 1 0 0 0 .2'/><position site='s1' kp='5' gear='1 0 0 0 0 0'/>"
      "</actuator></mujoco>";
  grit_model *m = load_string(xml, 0);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nx = 8, nu = 4;
  const double x[8] = {0.1, 0.4, -0.3, 0.6, 0.3, -0.5, 0.8, 0.2}, u[4] = {0.7, -0.4, 0.3, 0.2};
  double A[64], Afd[64], B[32], Bfd[32];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, nx * nx), eb = fdj_rel_err(B, Bfd, nx * nu);
  printf("site transmissions: A rel err %.3g, B rel err %.3g\n", ea, eb);
  cr_assert_lt(ea, 1e-6);
  cr_assert_lt(eb, 1e-6);
  grit_data_free(d);
  grit_model_free(m);
}

/* The site moment on duals (actuation_muscle_generic.h: written out four lanes a vector) against the old
 * operations of grit/dual.h, here: the point, force and torque by grit_tf_apply_c and fma chains, then per
 * dof J += 1 (f . (a x p + c)) and J += tq . a. Random kinematics with every partial set (zeros of both
 * signs among them: a constant's +0 partials must be kept in the sums as dual.h keeps them): the same bits,
 * baseline and AVX2 compilations. */
static void old_site_moment(const grit_model *m, const grit_kin_dual *k, int a, grit_dual *J) {
  const int s = m->act_site[a], b = m->site_body[s];
  const double *g = m->act_sitegear + 6 * a;
  const grit_dual *R = k->xmat + 9 * b;
  grit_dual p[3], f[3], tq[3];
  for (int i = 0; i < m->nv; ++i) J[i] = grit_dual_const(0.0);
  grit_tf_apply_c_dual(p, k->xpos + 3 * b, R, m->site_pos + 3 * s);
  for (int i = 0; i < 3; ++i) {
    f[i] = grit_dual_fma(R[3 * i], grit_dual_const(g[0]),
                         grit_dual_fma(R[3 * i + 1], grit_dual_const(g[1]), grit_dual_mul(R[3 * i + 2], grit_dual_const(g[2]))));
    tq[i] = grit_dual_fma(R[3 * i], grit_dual_const(g[3]),
                          grit_dual_fma(R[3 * i + 1], grit_dual_const(g[4]), grit_dual_mul(R[3 * i + 2], grit_dual_const(g[5]))));
  }
  for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
    grit_dual lin[3];
    const grit_dual *cd = k->cdof + 6 * dof;
    grit_sv_point_velocity_dual(lin, cd, p);
    J[dof] = grit_dual_fma(grit_dual_const(1.0), grit_v3_dot_dual(f, lin), J[dof]);
    J[dof] = grit_dual_add(J[dof], grit_v3_dot_dual(tq, cd));
  }
}

static double rnd(unsigned *st) {
  *st = *st * 1664525u + 1013904223u;
  const unsigned r = *st >> 8;
  return r % 11 == 0 ? 0.0 : r % 13 == 0 ? -0.0 : ((double)r / 16777216.0 - 0.5) * 3.0;
}

Test(site_actuator, dual_moment_is_the_old_operations_bit_for_bit) {
  grit_model *m = load_string(QUAD, 0);
  const int nb = m->nbody, nv = m->nv;
  grit_kin_dual k;
  memset(&k, 0, sizeof k);
  k.xpos = calloc(3 * (size_t)nb, sizeof(grit_dual));
  k.xmat = calloc(9 * (size_t)nb, sizeof(grit_dual));
  k.cdof = calloc(6 * (size_t)nv, sizeof(grit_dual));
  grit_dual *J = calloc((size_t)nv, sizeof(grit_dual)), *Jo = calloc((size_t)nv, sizeof(grit_dual));
  grit_dual *scratch = calloc(4 * (size_t)nv + 16, sizeof(grit_dual)), *q = calloc((size_t)m->nq, sizeof(grit_dual));
  const grit_deriv_tendon_fns *avx2 = grit_deriv_tendon_fns_avx2();
  unsigned st = 12345u;
  for (int trial = 0; trial < 20; ++trial) {
    grit_dual *all[3] = {k.xpos, k.xmat, k.cdof};
    const int cnt[3] = {3 * nb, 9 * nb, 6 * nv};
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < cnt[c]; ++i) {
        all[c][i].v = rnd(&st);
        for (int l = 0; l < GRIT_DUAL_N; ++l) all[c][i].d[l] = rnd(&st);
      }
    for (int a = 0; a < m->nu; ++a) {
      old_site_moment(m, &k, a, Jo);
      for (int pass = 0; pass < (avx2 ? 2 : 1); ++pass) {
        const grit_dual L = pass ? avx2->length_jacobian(m, &k, q, a, J, scratch)
                                 : grit_actuator_length_jacobian_dual(m, &k, q, a, J, scratch);
        cr_assert(L.v == 0.0);
        cr_assert(memcmp(J, Jo, sizeof(grit_dual) * (size_t)nv) == 0, "trial %d actuator %d (%s): not the same bits",
                  trial, a, pass ? "AVX2" : "baseline");
      }
    }
  }
  free(k.xpos), free(k.xmat), free(k.cdof), free(J), free(Jo), free(scratch), free(q);
  grit_model_free(m);
}

/* A site's length is identically 0, so a position servo's stiffness has nothing to act on implicitly: with
 * kv = 0 the implicit step (explicit_actuation off) is the explicit one, to round-off, over 0.5 s. */
Test(site_actuator, a_position_servo_has_no_implicit_stiffness) {
  static const char xml[] =
      "<mujoco><worldbody><body><joint axis='0 1 0'/><geom type='capsule' fromto='0 0 0 .5 0 0' size='.04'/>"
      "<site name='s' pos='.5 0 0'/></body></worldbody><actuator><position site='s' kp='50' gear='0 0 1 0 0 0'/>"
      "</actuator></mujoco>";
  grit_model *m[2] = {load_string(xml, 0), load_string(xml, 1)};
  grit_data *d[2];
  const double u = 0.4;
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(grit_data_create(m[k], &d[k]), GRIT_OK);
    cr_assert_eq(grit_data_set_ctrl(d[k], &u, 1), GRIT_OK);
    for (int i = 0; i < 500; ++i) cr_assert_eq(grit_step(d[k]), GRIT_OK, "%s", grit_data_last_error(d[k]));
  }
  const double e = fabs(grit_data_qpos(d[0])[0] - grit_data_qpos(d[1])[0]);
  cr_assert(fabs(grit_data_qpos(d[0])[0]) > 0.1, "it did not move: q = %g", grit_data_qpos(d[0])[0]);
  cr_assert_lt(e, 1e-12, "implicit and explicit differ by %g", e);
  for (int k = 0; k < 2; ++k) grit_data_free(d[k]), grit_model_free(m[k]);
}

/* The builder's checks: the site must exist and the gear be finite; a site on the world is an error at
 * compile naming the actuator. */
Test(site_actuator, the_builder_checks_the_site) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_body_def bd = grit_default_body_def();
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_site_def sd = grit_default_site_def();
  sd.body = 0;
  grit_builder_add_site(b, &sd, NULL);
  grit_actuator_def a = grit_default_actuator_def();
  cr_assert(a.site == -1 && a.site_gear[0] == 1 && a.site_gear[5] == 0);
  a.trntype = GRIT_TRN_SITE;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL); /* no site */
  a.site = 0, a.site_gear[3] = NAN;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_NOT_FINITE);
  a.site_gear[3] = 0, a.name = "thrust";
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m = NULL;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(grit_builder_last_error(b), "cannot move (actuator 'thrust')"), "%s", grit_builder_last_error(b));
  grit_builder_free(b);
}

#ifdef GRIT_TEST_MUJOCO
#include "mjcf_mujoco_util.h"

static void unit_quat(double *q, unsigned *seed) {
  double n = 0;
  for (int i = 0; i < 4; ++i) q[i] = 2.0 * rand_r(seed) / RAND_MAX - 1, n += q[i] * q[i];
  for (int i = 0; i < 4; ++i) q[i] /= sqrt(n);
}

/* Moments and qfrc_actuator (sum over actuators of moment * force) at 100 random states (pose, velocity,
 * controls inside and outside the control range) against MuJoCo 2.2.2's. */
Test(site_actuator, moments_and_forces_are_mujocos) {
  char err[1000];
  mjModel *mm = mjcmp_load_text(QUAD, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *m = load_string(QUAD, 0);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert(mm->nq == 8 && mm->nv == 7 && mm->nu == 5);
  for (int a = 0; a < 5; ++a) /* acc0 = |M^-1 moment| at qpos0: the same computation */
    cr_assert_lt(fabs(m->act_acc0[a] - mm->actuator_acc0[a]), 1e-13 * mm->actuator_acc0[a], "acc0[%d]", a);
  unsigned seed = 11;
  double q[8], v[7], u[5], f[5], J[7], qf[7], worst_mom = 0, worst_qfrc = 0;
  for (int trial = 0; trial < 100; ++trial) {
    for (int i = 0; i < 3; ++i) q[i] = 2.0 * rand_r(&seed) / RAND_MAX - 1;
    unit_quat(q + 3, &seed);
    q[7] = 4.0 * rand_r(&seed) / RAND_MAX - 2;
    for (int i = 0; i < 7; ++i) v[i] = 2.0 * rand_r(&seed) / RAND_MAX - 1;
    for (int i = 0; i < 5; ++i) u[i] = 16.0 * rand_r(&seed) / RAND_MAX - 2;
    memcpy(md->qpos, q, sizeof q), memcpy(md->qvel, v, sizeof v), memcpy(md->ctrl, u, sizeof u);
    mj_forward(mm, md);
    grit_data_set_qpos(d, q, 8), grit_data_set_qvel(d, v, 7), grit_data_set_ctrl(d, u, 5);
    grit_forward_kinematics(d);
    cr_assert_eq(grit_actuator_forces(d, f), GRIT_OK);
    memset(qf, 0, sizeof qf);
    for (int a = 0; a < 5; ++a) {
      const double L = grit_actuator_length_jacobian(m, &d->kin, d->qpos, a, J, d->jscratch);
      cr_assert(L == 0 && md->actuator_length[a] == 0);
      for (int i = 0; i < 7; ++i) {
        worst_mom = fmax(worst_mom, fabs(J[i] - md->actuator_moment[a * 7 + i]));
        qf[i] += J[i] * f[a];
      }
    }
    for (int i = 0; i < 7; ++i) worst_qfrc = fmax(worst_qfrc, fabs(qf[i] - md->qfrc_actuator[i]));
  }
  printf("quadrotor vs MuJoCo 2.2.2: moment %.3g, qfrc_actuator %.3g\n", worst_mom, worst_qfrc);
  cr_assert_lt(worst_mom, 1e-14);
  cr_assert_lt(worst_qfrc, 1e-13); /* forces up to 13 N */
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

/* 1 s from rest with constant controls (a little more thrust than the weight's share, unequal, so that
 * it climbs, yaws and tumbles slowly; the link swings), at 1e-4 s, MuJoCo's Euler, no contact; grit with explicit actuation and gyroscopic terms. */
Test(site_actuator, quadrotor_trajectory_is_mujocos) {
  char err[1000];
  mjModel *mm = mjcmp_load_text(QUAD, err, sizeof err);
  cr_assert(mm, "%s", err);
  const double dt = 1e-4;
  mm->opt.timestep = dt;
  mm->opt.integrator = mjINT_EULER;
  mm->opt.disableflags |= mjDSBL_CONTACT;
  mjData *md = mj_makeData(mm);
  grit_model *m = load_string(QUAD, 1);
  m->opt.timestep = dt;
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-12;
  grit_data_set_step_settings(d, &st);
  const double u[5] = {2.3, 2.28, 2.3, 2.32, 0.02};
  memcpy(md->ctrl, u, sizeof u);
  cr_assert_eq(grit_data_set_ctrl(d, u, 5), GRIT_OK);
  double eq = 0, ev = 0;
  for (int k = 0; k < 10000; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    double a, b;
    mjcmp_state_error(mm, md, grit_data_qpos(d), grit_data_qvel(d), &a, &b);
    eq = fmax(eq, a), ev = fmax(ev, b);
  }
  printf("quadrotor, 1 s at 0.1 ms (explicit actuation, gyroscopic): max |dq| %.3g, max |dv| %.3g; z %.4f m\n", eq, ev, md->qpos[2]);
  cr_assert(md->qpos[2] > 1.05, "the quadrotor did not climb: z = %g", md->qpos[2]);
  cr_assert_lt(eq, 1e-12); /* measured 1.6e-15 rad/m, 2.4e-14 in v: round-off */
  cr_assert_lt(ev, 1e-12);
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}
#endif
