/* SPDX-License-Identifier: Apache-2.0 */
/* test_actuation.c — actuators as MuJoCo 2.2.2 defines them (src/engine/actuation.c): activations, the
 * implicit servos, the Jacobians with activations in the state against central differences, bad input. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "actuation_scene.h"
#include "fd_jacobians.h"
#include "grit/grit.h"
#include "grit/sysid.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/lqr.h"

enum { NQ = 4, NA = 2, NX = 2 * NQ + NA };

/* Both treatments of the actuators: implicit servos (the default) and explicit_actuation. */
static void check_jacobians(int explicit_actuation) {
  grit_model *m = as_build_ex(2e-3, explicit_actuation);
  cr_assert(m);
  cr_assert_eq(grit_model_na(m), NA);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  double x[NX], u[AS_NU];
  as_state(x, x + NQ, x + 2 * NQ, u);
  double A[NX * NX], B[NX * AS_NU], Afd[NX * NX], Bfd[NX * AS_NU];
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  /* hinge coordinates only: the tangent space is the coordinates themselves. The step has no
   * constraints, so its solve is exact and the differences see only the step's smooth terms (step 1e-6:
   * truncation ~1e-12 relative, round-off ~1e-10). */
  const double eps = 1e-6;
  fdj_central(d, x, u, eps, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, NX * NX), eb = fdj_rel_err(B, Bfd, NX * AS_NU);
  cr_log_info("actuated chain (%s): A rel err %.3g, B rel err %.3g", explicit_actuation ? "explicit" : "implicit", ea,
              eb);
  cr_assert_lt(ea, 1e-5);
  cr_assert_lt(eb, 1e-5);
  /* the saturated servo (5) and the clamped motor (6) have no effect on the step: zero columns */
  for (int i = 0; i < NX; ++i) {
    cr_assert_eq(B[i * AS_NU + 5], 0.0);
    cr_assert_eq(B[i * AS_NU + 6], 0.0);
  }
  /* an actuator with dynamics: its control reaches only its activation this step */
  for (int i = 0; i < 2 * NQ; ++i) cr_assert_eq(B[i * AS_NU + 3], 0.0);
  cr_assert_float_eq(B[(2 * NQ) * AS_NU + 3], 2e-3 / 0.05, 1e-15);     /* h / tau */
  cr_assert_float_eq(B[(2 * NQ + 1) * AS_NU + 4], 2e-3, 1e-15);        /* h */
  cr_assert_float_eq(A[(2 * NQ) * NX + 2 * NQ], 1 - 2e-3 / 0.05, 1e-15); /* 1 - h / tau */
  grit_data_free(d);
  grit_model_free(m);
}

Test(actuation, jacobians_with_activations_match_central_differences) {
  check_jacobians(0);
  check_jacobians(1);
}

/* Parameter Jacobians through the actuated step: the mass of body 3 (its inertia scaled with it),
 * against central differences on model copies (grit_model_with_params). */
Test(actuation, mass_jacobian_of_the_actuated_step) {
  grit_model *m = as_build(2e-3);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  double x[NX], u[AS_NU], P[NX], xp[NX], xm[NX];
  as_state(x, x + NQ, x + 2 * NQ, u);
  fdj_step_from(d, x, u, xp);
  const grit_param prm = {GRIT_PARAM_MASS, 3};
  cr_assert_eq(grit_step_derivatives(d, NULL, NULL, &prm, 1, P), GRIT_OK, "%s", grit_data_last_error(d));
  const double mass = grit_model_body_mass(m, 3), eps = 1e-6 * mass;
  double fd[NX];
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    const double val = mass + sgn * eps;
    grit_model *mc;
    char msg[GRIT_MESSAGE_SIZE];
    cr_assert_eq(grit_model_with_params(m, &prm, &val, 1, &mc, msg), GRIT_OK, "%s", msg);
    grit_data *dc;
    grit_data_create(mc, &dc);
    fdj_step_from(dc, x, u, sgn > 0 ? xp : xm);
    grit_data_free(dc);
    grit_model_free(mc);
  }
  for (int i = 0; i < NX; ++i) fd[i] = (xp[i] - xm[i]) / (2 * eps);
  const double e = fdj_rel_err(P, fd, NX);
  cr_log_info("actuated chain: P (mass) rel err %.3g", e);
  cr_assert_lt(e, 1e-5);
  for (int k = 0; k < NA; ++k) cr_assert_eq(P[2 * NQ + k], 0.0); /* masses do not move the activations */
  grit_data_free(d);
  grit_model_free(m);
}

/* The activation update is MuJoCo 2.2.2's Euler: act + h da/dt at the step's start, then act_range. */
Test(actuation, activations_follow_their_dynamics) {
  grit_model *m = as_build(1e-3);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  double u[AS_NU] = {0, 0, 0, 1.0, 2.0, 0, 0};
  grit_data_set_ctrl(d, u, AS_NU);
  for (int k = 0; k < 100; ++k) cr_assert_eq(grit_step(d), GRIT_OK);
  const double *act = grit_data_act(d);
  cr_assert_float_eq(act[0], 1 - pow(1 - 1e-3 / 0.05, 100), 1e-12); /* filter toward u = 1 */
  cr_assert_float_eq(act[1], 100 * 1e-3 * 2.0, 1e-12);              /* integrator of u = 2 */
  grit_data_reset(d);
  cr_assert_eq(grit_data_act(d)[1], 0.0);
  grit_data_free(d);
  grit_model_free(m);
}

/* A stiff position servo (kp 1e6 on a pendulum of 0.49 kg m^2 about its hinge: omega dt = 2.9, beyond the
 * stability limit 2 of an explicit servo in symplectic Euler) is implicit in the step like a joint
 * spring: it settles at its target instead of blowing up. */
Test(actuation, stiff_servo_is_stable_at_2ms) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_options o = grit_default_options();
  o.timestep = 2e-3;
  grit_builder_set_options(b, &o);
  grit_body_def bd = grit_default_body_def();
  bd.mass = 1.0;
  bd.com[2] = -0.3;
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  jd.axis[0] = 1, jd.axis[2] = 0;
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_actuator_def a = as_servo(0, 1e6, 0);
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_data *d;
  grit_data_create(m, &d);
  const double u = 0.5;
  grit_data_set_ctrl(d, &u, 1);
  for (int k = 0; k < 500; ++k) cr_assert_eq(grit_step(d), GRIT_OK);
  /* equilibrium: kp (u - q) = m g l sin q = 1.4 N m: q within 3e-6 of 0.5 */
  cr_assert_lt(fabs(grit_data_qpos(d)[0] - 0.5), 3e-6, "q = %g", grit_data_qpos(d)[0]);
  cr_assert_lt(fabs(grit_data_qvel(d)[0]), 1e-6);
  grit_data_free(d);
  grit_model_free(m);
}

Test(actuation, bad_definitions_are_errors) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_body_def bd = grit_default_body_def();
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_BALL;
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_actuator_def a = grit_default_actuator_def();
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_UNSUPPORTED);
  cr_assert(strstr(grit_builder_last_error(b), "ball"));
  a.trntype = GRIT_TRN_TENDON;
  cr_assert_neq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK);
  cr_assert(strstr(grit_builder_last_error(b), "tendon 0 does not exist"), "%s", grit_builder_last_error(b));
  bd.parent = 1;
  grit_builder_add_body(b, &bd, NULL);
  jd.type = GRIT_JOINT_HINGE;
  grit_builder_add_joint(b, 2, &jd, NULL);
  a = grit_default_actuator_def();
  a.joint = 1;
  a.dyntype = GRIT_DYN_FILTER;
  a.dynprm[0] = 0;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL);
  a.dyntype = (grit_actuator_dyn)4; /* MuJoCo's user dynamics */
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_UNSUPPORTED);
  a = grit_default_actuator_def();
  a.joint = 1;
  a.force_limited = 1, a.force_range[0] = 1, a.force_range[1] = -1;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_INVALID_MODEL);
  a.force_range[1] = 2;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_actuator_def back;
  cr_assert_eq(grit_model_actuator(m, 0, &back), GRIT_OK);
  cr_assert(back.force_limited && back.force_range[1] == 2 && back.gainprm[0] == 1 && back.biastype == GRIT_BIAS_NONE);
  grit_model_free(m);
  grit_builder_free(b);
}

/* LQR on a state with an activation: an inverted pendulum driven through a filter (tau 20 ms), the
 * state x = (q, v, act) and A 3 x 3 from grit_linearize; the LQR gain on all three stabilizes it from
 * 0.1 rad in the nonlinear simulation. */
Test(actuation, lqr_through_a_filter_actuator) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_options o = grit_default_options();
  o.timestep = 2e-3;
  grit_builder_set_options(b, &o);
  grit_body_def bd = grit_default_body_def();
  bd.com[2] = 0.3; /* above the hinge: upright at q = 0, unstable */
  bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.01;
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  jd.axis[0] = 1, jd.axis[2] = 0;
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_actuator_def a = grit_default_actuator_def();
  a.dyntype = GRIT_DYN_FILTER, a.dynprm[0] = 0.02, a.gainprm[0] = 10;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_data *d;
  grit_data_create(m, &d);
  double x[3] = {0, 0, 0}, u = 0, A[9], B[3], xs[3], us = 0;
  cr_assert_eq(grit_ilqr_lqr_linearize_trajectory(d, 1, x, &us, A, B, NULL), GRIT_OK);
  cr_assert_eq(grit_linearize(d, x, &u, A, B), GRIT_OK);
  double r0, r1, K[3];
  cr_assert_eq(grit_ilqr_lqr_closed_loop_radius(3, 1, A, NULL, NULL, &r0, NULL), GRIT_OK);
  const double Q[9] = {100, 0, 0, 0, 1, 0, 0, 0, 0.01}, R = 0.01;
  cr_assert_eq(grit_ilqr_lqr_stationary(3, 1, A, B, Q, &R, NULL, NULL, K, NULL, NULL, NULL), GRIT_OK);
  cr_assert_eq(grit_ilqr_lqr_closed_loop_radius(3, 1, A, B, K, &r1, NULL), GRIT_OK);
  cr_log_info("filter-driven inverted pendulum: open-loop radius %.6f, closed-loop %.6f", r0, r1);
  cr_assert_gt(r0, 1.0);
  cr_assert_lt(r1, 1.0);
  xs[0] = 0.1, xs[1] = 0, xs[2] = 0;
  grit_data_set_qpos(d, xs, 1);
  grit_data_set_qvel(d, xs + 1, 1);
  grit_data_set_act(d, xs + 2, 1);
  for (int k = 0; k < 1500; ++k) {
    const double xk[3] = {grit_data_qpos(d)[0], grit_data_qvel(d)[0], grit_data_act(d)[0]};
    u = K[0] * xk[0] + K[1] * xk[1] + K[2] * xk[2];
    grit_data_set_ctrl(d, &u, 1);
    cr_assert_eq(grit_step(d), GRIT_OK);
  }
  cr_assert_lt(fabs(grit_data_qpos(d)[0]), 1e-3, "q = %g after 3 s", grit_data_qpos(d)[0]);
  /* the iLQR adapter's state is (q, v, act) too: its step and Jacobians are grit_linearize's */
  grit_ilqr_grit *ad;
  cr_assert_eq(grit_ilqr_grit_create(m, 1, NULL, &ad, NULL), GRIT_OK);
  grit_ilqr_dynamics dyn = grit_ilqr_grit_dynamics(ad);
  cr_assert(dyn.nx == 3 && dyn.ndx == 3 && dyn.nu == 1);
  const double x0[3] = {0.05, -0.1, 0.2};
  double xn[3], fx[9], fu[3], dx[3];
  u = 0.3;
  cr_assert_eq(dyn.step(dyn.ctx, 0, 0, x0, &u, xn), 0);
  cr_assert_eq(dyn.jacobians(dyn.ctx, 0, 0, 0, x0, &u, fx, fu), 0);
  cr_assert_eq(grit_linearize(d, x0, &u, A, B), GRIT_OK);
  for (int i = 0; i < 9; ++i) cr_assert_eq(fx[i], A[i]);
  for (int i = 0; i < 3; ++i) cr_assert_eq(fu[i], B[i]);
  dyn.difference(dyn.ctx, x0, xn, dx);
  cr_assert_float_eq(dx[2], xn[2] - x0[2], 0.0);
  cr_assert_float_eq(xn[2], 0.2 + 2e-3 * (0.3 - 0.2) / 0.02, 1e-15);
  grit_ilqr_grit_free(ad);
  grit_data_free(d);
  grit_model_free(m);
}
