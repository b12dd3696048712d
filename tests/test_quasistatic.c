/* SPDX-License-Identifier: Apache-2.0 */
/* test_quasistatic.c — GRIT_INTEGRATOR_QUASISTATIC (seed 002, docs/quasistatic.md): a finger on a
 * position servo pushing a box ends where force balance puts it at every time step from 0.01 s to
 * 0.25 s; a servo in free space reaches its command in one step; unloaded objects stay; the planar
 * gripper of seed 002 slips exactly when the pull exceeds 2 mu times the squeeze. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

static const double G = 9.81;

static grit_data *load(const char *xml, double dt, grit_model **m, grit_contact_model contact) {
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.timestep = dt;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "test", &o, m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.integrator = GRIT_INTEGRATOR_QUASISTATIC;
  s.contact_model = contact;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

static void step(grit_data *d) {
  cr_assert_eq(grit_step(d), GRIT_OK, "t = %g: %s", grit_data_time(d), grit_data_last_error(d));
}

/* A 0.1 m, 1 kg box (mu 0.5 with the table) pushed at its centre's height by a 2 cm sphere on a
 * slide servo of kp = 1000 N/m, commanded from x = -0.2 to x = 0.1 m over 3 s and held for 2 s. */
static const char PUSH[] =
    "<mujoco><option timestep='0.01'/><worldbody>"
    "<geom type='plane' size='1 1 0.1' friction='0.5'/>"
    "<body name='box' pos='0 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1' friction='0.5'/></body>"
    "<body name='finger' pos='0 0 0.05'><joint name='x' type='slide' axis='1 0 0'/>"
    "<geom type='sphere' size='0.02' mass='0.1' friction='0.5'/></body></worldbody>"
    "<actuator><position joint='x' kp='1000'/></actuator>"
    "<keyframe><key name='start' qpos='0 0 0.05 1 0 0 0 -0.2' ctrl='-0.2'/></keyframe>"
    "<custom><numeric name='grit_stiffness' data='1e6'/></custom></mujoco>";

/* Force balance at the end: the box no longer slides when the servo's force kp (cmd - x_f) falls to
 * mu m g, so x_f = cmd - mu m g / kp, and the box's centre is 0.07 m ahead (radius + half width).
 * With the Lagged model (docs/quasistatic.md: SAP's Anitescu-like boundary layer lifts a sliding box and
 * moved the end by up to 6 mm at 0.25 s). Within 1 mm: while sliding the lag is mu m g / kp to 1e-5 m;
 * held for 2 s, the regularized stiction creeps by 0.4-0.6 mm as the force relaxes. */
Test(quasistatic, pushed_box_ends_at_force_balance_for_every_step) {
  const double steps[] = {0.01, 0.02, 0.05, 0.1, 0.25};
  for (size_t k = 0; k < sizeof steps / sizeof *steps; ++k) {
    const double dt = steps[k];
    grit_model *m;
    grit_data *d = load(PUSH, dt, &m, GRIT_CONTACT_LAGGED);
    const double q0[8] = {0, 0, 0.05, 1, 0, 0, 0, -0.2};
    grit_data_set_qpos(d, q0, 8);
    const long n = lround(5.0 / dt);
    for (long i = 0; i < n; ++i) {
      const double t = (double)(i + 1) * dt, cmd = -0.2 + 0.3 * fmin(t / 3.0, 1.0);
      grit_data_set_ctrl(d, &cmd, 1);
      step(d);
    }
    const double *q = grit_data_qpos(d), xf = 0.1 - 0.5 * 1.0 * G / 1000.0;
    cr_log_info("dt %.2f s: finger %.5f m (force balance %.5f), box %.5f m (%.5f)", dt, q[7], xf, q[0], xf + 0.07);
    cr_assert(fabs(q[7] - xf) < 1e-3, "dt %g: finger at %.5f, force balance puts it at %.5f", dt, q[7], xf);
    cr_assert(fabs(q[0] - (xf + 0.07)) < 1e-3, "dt %g: box at %.5f, expected %.5f", dt, q[0], xf + 0.07);
    cr_assert(fabs(q[2] - 0.05) < 1e-3, "dt %g: box height %.5f", dt, q[2]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The finger 0.5 m above the table, far from the box. */
static const char FREE[] =
    "<mujoco><worldbody>"
    "<geom type='plane' size='1 1 0.1' friction='0.5'/>"
    "<body name='box' pos='0 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1' friction='0.5'/></body>"
    "<body name='finger' pos='0 0 0.5'><joint name='x' type='slide' axis='1 0 0'/>"
    "<geom type='sphere' size='0.02' mass='0.1' friction='0.5'/></body></worldbody>"
    "<actuator><position joint='x' kp='1000'/></actuator></mujoco>";

/* In free space a servo reaches its command in one step (within eps M / (h^2 kp) of it, eps = 1e-6:
 * 1e-5 of the 0.15 m here), and an object resting on the table under its own weight stays where it is
 * (it sinks to its compliance, m g / (4 k) per corner). With each contact model. */
Test(quasistatic, free_space_servo_reaches_command_and_resting_box_stays) {
  for (int model = 0; model < 3; ++model) {
  grit_model *m;
  grit_data *d = load(FREE, 0.1, &m, (grit_contact_model)model);
  const double q0[8] = {0.5, 0.3, 0.05, 1, 0, 0, 0, -0.2}, cmd = -0.35;
  grit_data_set_qpos(d, q0, 8);
  grit_data_set_ctrl(d, &cmd, 1);
  step(d);
  const double *q = grit_data_qpos(d);
  cr_assert(fabs(q[7] - cmd) < 2e-6, "model %d: the finger is at %.9f after one step, commanded %.9f", model, q[7], cmd);
  for (int i = 0; i < 20; ++i) step(d);
  q = grit_data_qpos(d);
  cr_assert(fabs(q[0] - 0.5) < 1e-6 && fabs(q[1] - 0.3) < 1e-6, "model %d: the resting box moved to (%g, %g)", model,
            q[0], q[1]);
  cr_assert(fabs(q[2] - 0.05) < 1e-4, "model %d: the resting box sank to %g", model, q[2]);
  double A[16 * 16];
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  grit_data_free(d);
  grit_model_free(m);
  }
}

/* Seed 002's planar gripper (section V-A): a 0.1 m sphere of weight 10 N on the ground (slides x, z),
 * two box fingers on x and z slides with servos of kp = 1000 N/m, mu = 0.5 everywhere. */
static const char GRIPPER[] =
    "<mujoco><option timestep='0.01'/><worldbody>"
    "<geom type='plane' size='1 1 0.1' friction='0.5'/>"
    "<body name='ball' pos='0 0 0.1'><joint name='bx' type='slide' axis='1 0 0'/>"
    "<joint name='bz' type='slide' axis='0 0 1'/>"
    "<geom type='sphere' size='0.1' mass='1.0193679918450562' friction='0.5'/></body>"
    "<body name='left' pos='-0.125 0 0.1'><joint name='lx' type='slide' axis='1 0 0'/>"
    "<joint name='lz' type='slide' axis='0 0 1'/>"
    "<geom type='box' size='0.02 0.05 0.05' mass='0.01' friction='0.5'/></body>"
    "<body name='right' pos='0.125 0 0.1'><joint name='rx' type='slide' axis='1 0 0'/>"
    "<joint name='rz' type='slide' axis='0 0 1'/>"
    "<geom type='box' size='0.02 0.05 0.05' mass='0.01' friction='0.5'/></body></worldbody>"
    "<actuator><position joint='lx' kp='1000'/><position joint='lz' kp='1000'/>"
    "<position joint='rx' kp='1000'/><position joint='rz' kp='1000'/></actuator>"
    "<custom><numeric name='grit_stiffness' data='1e6'/></custom></mujoco>";

/* The fingers close at 0.1 m/s (touching at t = 0.05 s: each starts 5 mm away) and squeeze with
 * f = kp s, then are commanded down at 5 mm/s from t = 0.2 s. The ground holds the ball, so each
 * finger's friction must hold the pull kp (z_f - z_cmd) plus its weight m_f g until that reaches mu f:
 * the fingers must not move down while the pull on the ball 2 (kp (z_f - z_cmd) + m_f g) < 2 mu f, and
 * must slide once it exceeds it. Checked: the pull when a finger has first slid 0.1 mm below where it
 * hung at t = 0.2 s is 2 mu f within 5 % (the creep of regularized stiction before it is far below
 * 0.1 mm), and afterwards the finger trails its command by (mu f - m_f g) / kp within 0.3 mm. */
Test(quasistatic, gripper_slips_when_the_pull_exceeds_2_mu_squeeze) {
  grit_model *m;
  grit_data *d = load(GRIPPER, 0.01, &m, GRIT_CONTACT_LAGGED);
  const double squeeze = 0.01, mu = 0.5, kp = 1000, wf = 0.01 * G;
  double slip_pull = -1, f_at_slip = 0, last_trail = 0, touch_time = -1, hang = 0;
  for (int i = 1; i <= 600; ++i) {
    const double t = 0.01 * i;
    const double close = fmin(0.1 * t, 0.005 + squeeze); /* 5 mm to contact, then the squeeze */
    const double down = t > 0.2 ? -0.005 * (t - 0.2) : 0.0;
    const double u[4] = {close, down, -close, down};
    grit_data_set_ctrl(d, u, 4);
    step(d);
    const double *q = grit_data_qpos(d); /* bx bz lx lz rx rz */
    if (touch_time < 0 && q[2] > 0.0049) touch_time = t;
    const double f = kp * (close - q[2]), pull = 2 * (kp * (q[3] - down) + wf);
    if (t < 0.2 + 1e-9) hang = q[3];
    else if (slip_pull < 0 && q[3] < hang - 1e-4) slip_pull = pull, f_at_slip = f;
    if (t > 1.9) last_trail = q[3] - down;
    cr_assert(fabs(q[3] - q[5]) < 1e-9 && fabs(q[2] + q[4]) < 1e-9, "the grip is not symmetric at t = %g", t);
  }
  const double trail = (mu * f_at_slip - wf) / kp;
  cr_log_info("contact at t = %.2f s; slip at pull %.4f N with squeeze %.4f N (2 mu f = %.4f N); trailing %.5f m "
              "((mu f - m_f g) / kp = %.5f m)",
              touch_time, slip_pull, f_at_slip, 2 * mu * f_at_slip, last_trail, trail);
  cr_assert(fabs(touch_time - 0.05) < 0.011, "the fingers touched at t = %g s, not 0.05 s", touch_time);
  cr_assert(fabs(f_at_slip - kp * squeeze) < 0.05 * kp * squeeze, "squeeze %g N", f_at_slip);
  cr_assert(fabs(slip_pull - 2 * mu * f_at_slip) < 0.05 * 2 * mu * f_at_slip, "slipped at a pull of %g N, 2 mu f = %g N",
            slip_pull, 2 * mu * f_at_slip);
  cr_assert(fabs(last_trail - trail) < 3e-4, "trailing %g m behind, (mu f - m_f g) / kp = %g m", last_trail, trail);
  grit_data_free(d);
  grit_model_free(m);
}

/* A stack of two 0.1 m, 1 kg cubes pushed at the bottom one by the finger (commanded from -0.2 to 0.2 m
 * over 4 s, then held): sampled every 0.4 s, the positions of the cubes and the finger agree within
 * 1 mm for time steps from 0.01 s to 0.4 s (Coulomb friction is rate-independent, and a quasistatic
 * system has no time scale of its own; what remains is the creep of regularized stiction). */
static const char STACK[] =
    "<mujoco><worldbody>"
    "<geom type='plane' size='1 1 0.1' friction='0.5'/>"
    "<body name='bottom' pos='0 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1' friction='0.5'/></body>"
    "<body name='top' pos='0 0 0.15'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='1' friction='0.5'/></body>"
    "<body name='finger' pos='0 0 0.05'><joint name='x' type='slide' axis='1 0 0'/>"
    "<geom type='sphere' size='0.02' mass='0.1' friction='0.5'/></body></worldbody>"
    "<actuator><position joint='x' kp='1000'/></actuator>"
    "<custom><numeric name='grit_stiffness' data='1e6'/></custom></mujoco>";

static void stack_samples(double dt, double out[12][3]) {
  grit_model *m;
  grit_data *d = load(STACK, dt, &m, GRIT_CONTACT_LAGGED);
  const double q0[15] = {0, 0, 0.05, 1, 0, 0, 0, 0, 0, 0.15, 1, 0, 0, 0, -0.2};
  grit_data_set_qpos(d, q0, 15);
  const long n = lround(4.8 / dt), every = lround(0.4 / dt);
  for (long i = 1; i <= n; ++i) {
    const double cmd = -0.2 + 0.1 * fmin((double)i * dt, 4.0);
    grit_data_set_ctrl(d, &cmd, 1);
    step(d);
    if (i % every == 0) {
      const double *q = grit_data_qpos(d);
      out[i / every - 1][0] = q[0], out[i / every - 1][1] = q[7], out[i / every - 1][2] = q[14];
    }
  }
  grit_data_free(d);
  grit_model_free(m);
}

Test(quasistatic, cube_stack_trajectory_is_independent_of_the_time_step) {
  double ref[12][3], x[12][3];
  stack_samples(0.01, ref);
  const double steps[] = {0.05, 0.1, 0.2, 0.4};
  for (size_t k = 0; k < sizeof steps / sizeof *steps; ++k) {
    stack_samples(steps[k], x);
    double worst = 0;
    for (int s = 0; s < 12; ++s)
      for (int j = 0; j < 3; ++j) worst = fmax(worst, fabs(x[s][j] - ref[s][j]));
    cr_log_info("dt %.2f s: largest difference from dt 0.01 s %.3g m (end: bottom %.5f, top %.5f, finger %.5f)",
                steps[k], worst, x[11][0], x[11][1], x[11][2]);
    cr_assert(worst < 1e-3, "dt %g: the trajectory differs by %g m from dt 0.01 s", steps[k], worst);
  }
  cr_assert(ref[11][0] > 0.2 && fabs(ref[11][1] - ref[11][0]) < 1e-3, "the stack did not move together: %g, %g",
            ref[11][0], ref[11][1]);
}
