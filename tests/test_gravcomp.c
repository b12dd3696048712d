/* SPDX-License-Identifier: Apache-2.0 */
/* test_gravcomp.c — gravity compensation (grit_body_def.gravcomp, MJCF body gravcomp, newer than MuJoCo
 * 2.2.2): the force -gravcomp m g at a body's centre of mass, against closed forms, the potential it
 * derives from, the step's Jacobians by central differences, and the loader's rules. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fd_jacobians.h"
#include "grit/grit.h"

static grit_model *load(const char *xml) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

static grit_data *data_of(const grit_model *m) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  return d;
}

/* A free box with gravcomp 1 floats; with 0.25 it falls with 3/4 g: z(t) = z0 - 3/8 g t^2 up to the
 * step's first-order error (semi-implicit Euler: z_n = z0 - g' h^2 n (n + 1) / 2, exactly). */
Test(gravcomp, free_bodies_float_or_fall_slower) {
  static const char xml[] =
      "<mujoco><option timestep='0.01'/><worldbody>"
      "<body pos='0 0 1'><freejoint/><geom type='box' size='.1 .2 .3' contype='0' conaffinity='0'/></body>"
      "<body pos='1 0 1' gravcomp='0.25'><freejoint/><geom type='box' size='.1 .2 .3' contype='0' "
      "conaffinity='0'/></body><body pos='2 0 1' gravcomp='1'><freejoint/><geom size='.1' contype='0' "
      "conaffinity='0'/></body></worldbody></mujoco>";
  grit_model *m = load(xml);
  grit_data *d = data_of(m);
  const int n = 100;
  for (int k = 0; k < n; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d), h = 0.01, g = 9.81;
  const double drop = g * h * h * n * (n + 1) / 2.0;
  cr_assert_lt(fabs(q[2] - (1 - drop)), 1e-12, "no compensation: z %.15g, expected %.15g", q[2], 1 - drop);
  cr_assert_lt(fabs(q[7 + 2] - (1 - 0.75 * drop)), 1e-12, "gravcomp 0.25: z %.15g, expected %.15g", q[9], 1 - 0.75 * drop);
  cr_assert_lt(fabs(q[14 + 2] - 1), 1e-15, "gravcomp 1: the body moved to z %.17g", q[16]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A chain whose links compensate differently: the bias at rest is the gradient of grit_energy's
 * potential -sum (1 - gravcomp_b) m_b g.c_b (central differences, error O(eps^2) ~ 1e-10 relative). */
Test(gravcomp, the_force_is_the_gradient_of_the_potential) {
  static const char xml[] =
      "<mujoco><worldbody><body pos='0 0 1' gravcomp='0.3'><joint type='hinge' axis='0 1 0'/>"
      "<geom type='capsule' fromto='0 0 0 .4 0 .1' size='.03' contype='0' conaffinity='0'/>"
      "<body pos='.4 0 .1' gravcomp='1.5'><joint type='hinge' axis='1 1 0'/><geom type='box' size='.1 .05 .02' "
      "pos='.1 .02 0' contype='0' conaffinity='0'/><body pos='.2 0 0'><joint type='slide' axis='1 0 1'/>"
      "<geom size='.05' pos='.05 0 0' contype='0' conaffinity='0'/></body></body></body></worldbody></mujoco>";
  grit_model *m = load(xml);
  grit_data *d = data_of(m);
  const double q0[3] = {0.4, -0.7, 0.05}, zero[3] = {0, 0, 0}, eps = 1e-6;
  double c[3], fd[3];
  cr_assert_eq(grit_data_set_qpos(d, q0, 3), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, zero, 3), GRIT_OK);
  cr_assert_eq(grit_bias_forces(d, c), GRIT_OK);
  for (int j = 0; j < 3; ++j) {
    double q[3], vp, vm;
    memcpy(q, q0, sizeof q);
    q[j] = q0[j] + eps;
    cr_assert_eq(grit_data_set_qpos(d, q, 3), GRIT_OK);
    cr_assert_eq(grit_energy(d, NULL, &vp), GRIT_OK);
    q[j] = q0[j] - eps;
    cr_assert_eq(grit_data_set_qpos(d, q, 3), GRIT_OK);
    cr_assert_eq(grit_energy(d, NULL, &vm), GRIT_OK);
    fd[j] = (vp - vm) / (2 * eps);
  }
  const double err = fdj_rel_err(c, fd, 3);
  cr_log_info("gravcomp chain: bias (%.10g, %.10g, %.10g), dV/dq (%.10g, %.10g, %.10g), relative error %.2g", c[0],
              c[1], c[2], fd[0], fd[1], fd[2], err);
  cr_assert_lt(err, 1e-8);
  grit_data_free(d);
  grit_model_free(m);
}

/* The step's Jacobians with compensated links, against central differences. */
Test(gravcomp, step_jacobians_against_central_differences) {
  static const char named[] =
      "<mujoco><option timestep='0.005'/><worldbody><body pos='0 0 1' gravcomp='0.6'><joint name='a' type='hinge' "
      "axis='0 1 0' damping='.1'/><geom type='capsule' fromto='0 0 0 .4 0 .1' size='.03' contype='0' "
      "conaffinity='0'/><body pos='.4 0 .1' gravcomp='-0.5'><joint type='hinge' axis='1 1 0'/><geom type='box' "
      "size='.1 .05 .02' pos='.1 .02 0' contype='0' conaffinity='0'/></body></body></worldbody>"
      "<actuator><motor joint='a'/></actuator></mujoco>";
  grit_model *m = load(named);
  grit_data *d = data_of(m);
  const double x[4] = {0.4, -0.7, 1.1, -0.3}, u[1] = {0.2};
  double A[16], B[4], Afd[16], Bfd[4], xn[4];
  fdj_step_from(d, x, u, xn);
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  fdj_central(d, x, u, 1e-6, Afd, Bfd);
  const double ea = fdj_rel_err(A, Afd, 16), eb = fdj_rel_err(B, Bfd, 4);
  cr_log_info("gravcomp: A %.2g, B %.2g relative to central differences", ea, eb);
  cr_assert_lt(ea, 1e-7);
  cr_assert_lt(eb, 1e-7);
  grit_data_free(d);
  grit_model_free(m);
}

/* The loader: a welded body whose gravcomp differs from its massless moving parent's other welded mass
 * cannot be merged into one grit body (an error with the line); a non-finite gravcomp is refused. */
Test(gravcomp, loader_rules) {
  static const char two[] =
      "<mujoco><worldbody><body><joint type='slide'/>\n"
      "<body gravcomp='1'><geom size='.1'/></body>\n"
      "<body gravcomp='0'><geom size='.1' pos='.3 0 0'/></body></body></worldbody></mujoco>";
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(two, &m, NULL, msg), GRIT_ERR_UNSUPPORTED, "%s", msg);
  cr_assert(strstr(msg, ":3:") && strstr(msg, "gravcomp"), "%s", msg);
  static const char same[] =
      "<mujoco><worldbody><body><joint type='slide'/>\n"
      "<body gravcomp='1'><geom size='.1'/></body>\n"
      "<body gravcomp='1'><geom size='.1' pos='.3 0 0'/></body></body></worldbody></mujoco>";
  m = load(same);
  grit_data *d = data_of(m);
  for (int k = 0; k < 50; ++k) cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_lt(fabs(grit_data_qpos(d)[0]), 1e-15, "the merged body, fully compensated, moved");
  grit_data_free(d);
  grit_model_free(m);
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_body_def def = grit_default_body_def();
  def.gravcomp = NAN;
  int id;
  cr_assert_eq(grit_builder_add_body(b, &def, &id), GRIT_ERR_NOT_FINITE);
  grit_builder_free(b);
}
