/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_smooth.c — the smooth force's partials in v0 and u taken once per call and stored
 * sparse (derivatives_smooth.c): A and B against the per-pass dual evaluation they replace
 * (ws->no_smooth) on every kind of actuator and transmission (joint, fixed tendon, site, slider-crank,
 * muscles, activations, adhesion), fluid forces and public robot files; the colouring's size; the
 * pattern from each dof's holders against a search of every support; and A's
 * and B's columns against central differences of the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_smooth.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"

/* A link of the second arm: a damped hinge about a tilted axis, its body left open. */
#define LINK(tilt) "<body pos='0.3 0 0'><joint type='hinge' damping='0.05' axis='" #tilt " 1 0'/>" \
                   "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' mass='0.2'/>"

/* Two trees sharing the passes' dual directions: an arm with damped and sprung hinges, a slide, a
 * ball joint, a motor, a velocity servo, a position servo, a general actuator whose gain and bias move
 * with length and velocity on a fixed tendon of two joints, and a site actuator; and a second arm of
 * ten damped hinges with a velocity servo and a motor (so that the two dual evaluations of the ten
 * colours are fewer than the three passes). No contact: the smooth force alone. */
static const char *ACTS =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody>"
    "<body pos='0 0 1'><joint name='a' type='hinge' axis='0 0.3 1' damping='0.2' stiffness='2'/>"
    " <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.03' mass='1'/>"
    " <body pos='0.2 0 0'><joint name='b' type='hinge' axis='0 1 0.2' damping='0.1'/>"
    "  <joint name='b2' type='hinge' pos='0.02 0 0' axis='1 0 0.3'/>"
    "  <geom type='capsule' fromto='0 0 0 0.2 0.05 -0.1' size='0.03' mass='0.8'/>"
    "  <body pos='0.2 0.05 -0.1'><joint name='s' type='slide' axis='0.2 0 -1' damping='1' stiffness='20'/>"
    "   <geom type='capsule' fromto='0 0 0 0.05 0 -0.2' size='0.025' mass='0.5'/>"
    "   <body pos='0.05 0 -0.2'><joint type='ball' damping='0.03'/>"
    "    <geom type='sphere' pos='0.02 0.03 -0.1' size='0.06' mass='0.4'/><site name='tip' pos='0.02 0 -0.1'/>"
    "   </body></body></body></body>"
    "<body pos='1 0 1'><joint name='p' type='hinge' axis='0 1 0' damping='0.3'/>"
    " <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
    " <body pos='0.3 0 0'><joint name='r' type='hinge' axis='0 1 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='0.6'/>"
    LINK(0.1) LINK(-0.2) LINK(0.3) LINK(0.2) LINK(-0.1) LINK(0.4) LINK(0.15) LINK(-0.3)
    "  </body></body></body></body></body></body></body></body></body></body>"
    "</worldbody>"
    "<tendon><fixed name='t'><joint joint='a' coef='0.5'/><joint joint='b2' coef='-0.3'/></fixed></tendon>"
    "<actuator><motor joint='a' gear='2'/><velocity joint='b' kv='3'/><position joint='s' kp='40'/>"
    "<general tendon='t' gaintype='affine' gainprm='2 0.5 0.3' biastype='affine' biasprm='0.1 -4 -0.5'/>"
    "<motor site='tip' gear='0.3 0 1 0.1 0 0'/>"
    "<velocity joint='p' kv='2'/><motor joint='r' gear='1.5'/></actuator></mujoco>";

static grit_data *prepare(const char *xml, grit_model **m, int steps) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nu = grit_model_nu(*m), nv = grit_model_nv(*m);
  static const double pattern[8] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.25, -0.15, 0.2};
  double *u = malloc(sizeof(double) * (size_t)(nu + 1)); /* (a chain of 24 servos has more than 8) */
  cr_assert(u);
  for (int i = 0; i < nu; ++i) u[i] = pattern[i % 8];
  cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  free(u);
  double *v = calloc((size_t)nv, sizeof(double)); /* moving: the velocity-dependent gains matter */
  for (int i = 0; i < nv; ++i) v[i] = 0.7 * sin(1.3 * i + 0.4);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  free(v);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* A, B (dense: activations too) with the stored partials and with the per-pass dual force. The same
 * partials summed in another order: round-off of the terms (1e-16), times A's condition number in the
 * solve; measured 0 (bit for bit) on every scene here. 1e-12 leaves room for another compiler's order,
 * while the stored partials scaled by 1.001 show 5e-4 .. 1e-2 in A and 1e-3 in B. */
/* The pattern formed from each dof's holders (derivatives_smooth.c, holders) and by the search of every
 * support for every dof (sm->no_holders): the same columns' rows in the same order, and A, B the same
 * bits as A1, B1 (the stored partials, no_smooth < 0). */
static void holders_same(grit_model *m, grit_data *d, const double *A1, const double *B1, const char *name) {
  grit_deriv_smooth *s = d->deriv->sm;
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m) + grit_model_na(m), ncol = grit_model_nv(m) + nu;
  const int nnz = s->ptr[ncol];
  int *ptr = malloc(sizeof(int) * (size_t)(ncol + 1)), *row = malloc(sizeof(int) * (size_t)(nnz + 1));
  memcpy(ptr, s->ptr, sizeof(int) * (size_t)(ncol + 1));
  memcpy(row, s->row, sizeof(int) * (size_t)nnz);
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * nu + 1, sizeof(double));
  s->valid = 0, s->no_holders = 1; /* formed again, by the search */
  cr_assert_eq(grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  s->valid = 0, s->no_holders = 0;
  cr_assert(!memcmp(ptr, s->ptr, sizeof(int) * (size_t)(ncol + 1)), "%s: the columns' extents", name);
  cr_assert(!memcmp(row, s->row, sizeof(int) * (size_t)nnz), "%s: the columns' rows", name);
  cr_assert(!memcmp(A, A1, sizeof(double) * (size_t)nx * nx), "%s: A", name);
  cr_assert(!memcmp(B, B1, sizeof(double) * (size_t)nx * nu), "%s: B", name);
  free(ptr), free(row), free(A), free(B);
}

/* Each scene three times: the stored partials where worth it (no_smooth 0), always (-1), never (1).
 * max_colours: the most colours expected (0: any); -1: the first call keeps the old path (fewer than
 * three passes, or evaluations not fewer by two: the small models here). */
static void compare(grit_model *m, grit_data *d, const char *name, int max_colours) {
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m) + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  double *A3 = calloc((size_t)nx * nx, sizeof(double)), *B3 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A3, nu ? B3 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->sm->on == (max_colours >= 0), "%s: the stored partials used where worth it", name);
  d->deriv->no_smooth = -1; /* on, worth it or not */
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->sm->on, "%s: the stored partials were used", name);
  const int ncolour = d->deriv->sm->ncolour;
  holders_same(m, d, A1, B1, name);
  d->deriv->no_smooth = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!d->deriv->sm->on, "%s: the dual path ran", name);
  d->deriv->no_smooth = 0;
  const double ea = fmax(col_rel_diff(A1, A2, nx, nx), col_rel_diff(A3, A2, nx, nx));
  const double eb = nu ? fmax(col_rel_diff(B1, B2, nx, nu), col_rel_diff(B3, B2, nx, nu)) : 0.0;
  cr_log_info("%s: %d colours; A %.3g, B %.3g", name, ncolour, ea, eb);
  cr_expect(ea < 1e-12, "%s: A %.3g", name, ea);
  cr_expect(eb < 1e-12, "%s: B %.3g", name, eb);
  if (max_colours > 0) cr_expect(ncolour <= max_colours, "%s: %d colours", name, ncolour);
  free(A1), free(A2), free(B1), free(B2), free(A3), free(B3);
}

static void file_same(const char *path, int steps, int max_colours) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const int nu = grit_model_nu(m);
  double *u = calloc((size_t)nu + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) u[i] = 0.4 * sin(0.9 * i + 0.3); /* within every ctrlrange here */
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  free(u);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  compare(m, d, path, max_colours);
  grit_data_free(d);
  grit_model_free(m);
}

#define FILE_PATH(p) GRIT_SOURCE_DIR "/tests/models/" p

Test(derivatives_smooth, actuators_same_as_dual) {
  grit_model *m;
  grit_data *d = prepare(ACTS, &m, 20);
  compare(m, d, "actuators", -1); /* two evaluations against three passes: not worth it */
  grit_data_free(d);
  grit_model_free(m);
}

/* Joint actuators and damping only: every v0 column reaches its own row, every control its joint's,
 * so two colours (one dual evaluation instead of 15 passes' on 62 dofs). */
Test(derivatives_smooth, humanoid_cmu_file) { file_same(FILE_PATH("dm_control_suite/humanoid_CMU.xml"), 100, 2); }
/* Fixed-tendon servos with activations (the dense path's chain rule). */
Test(derivatives_smooth, quadruped_file) { file_same(FILE_PATH("dm_control_suite/quadruped.xml"), 100, 0); }
/* Muscles on spatial tendons, with activations. */
Test(derivatives_smooth, arm26_file) { file_same(FILE_PATH("mujoco_model/arm26.xml"), 100, -1); }
Test(derivatives_smooth, slider_crank_file) { file_same(FILE_PATH("mujoco_model/slider_crank.xml"), 100, -1); }
/* Adhesion: its controls reach the contacts' partner trees, evaluated per pass as before. */
Test(derivatives_smooth, adhesion_file) { file_same(FILE_PATH("mujoco_adhesion/active_adhesion_nocomposite.xml"), 100, -1); }
/* Fluid forces (in the bias, per pass as before) with actuators; the swimmer (no actuator, three dofs:
 * one velocity pass) keeps the dual force, no fewer evaluations to be had. */
Test(derivatives_smooth, fish_file) { file_same(FILE_PATH("dm_control_suite/fish.xml"), 100, 0); }
Test(derivatives_smooth, swimmer_file) { file_same(FILE_PATH("dm_control_suite/swimmer.xml"), 100, -1); }
Test(derivatives_smooth, manipulator_file) { file_same(FILE_PATH("dm_control_suite/manipulator.xml"), 100, -1); }

/* Central differences of the step in the tangent space against A's and B's columns, relative
 * Frobenius error over the columns of v0 and u (those the stored partials build). */
static double against_fd(const char *xml, int steps, double hfd) {
  grit_model *m;
  grit_data *d = prepare(xml, &m, steps);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *q0 = malloc(sizeof(double) * nq), *v0 = malloc(sizeof(double) * nv), *qref = malloc(sizeof(double) * nq);
  double *u0 = malloc(sizeof(double) * nu), *up = malloc(sizeof(double) * nu);
  memcpy(q0, grit_data_qpos(d), sizeof(double) * nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * nv);
  memcpy(u0, grit_data_ctrl(d), sizeof(double) * nu);
  cr_assert_eq(grit_step(d), GRIT_OK);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * nu, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->no_smooth = -1; /* on (the workspace exists after a call): this arm's passes are few */
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->sm->on, "the stored partials were used");
  grit_model *m2;
  grit_data *d2 = prepare(xml, &m2, steps); /* the same history: the same warm start */
  double *vp = malloc(sizeof(double) * nv), *x[2];
  x[0] = malloc(sizeof(double) * nx), x[1] = malloc(sizeof(double) * nx);
  double num = 0.0, den = 0.0;
  for (int col = nv; col < nx + nu; ++col)
    for (int sgn = 0; sgn < 2; ++sgn) {
      memcpy(vp, v0, sizeof(double) * nv);
      memcpy(up, u0, sizeof(double) * nu);
      if (col < nx) vp[col - nv] += sgn ? hfd : -hfd;
      else up[col - nx] += sgn ? hfd : -hfd;
      cr_assert_eq(grit_data_set_qpos(d2, q0, nq), GRIT_OK);
      cr_assert_eq(grit_data_set_qvel(d2, vp, nv), GRIT_OK);
      cr_assert_eq(grit_data_set_ctrl(d2, up, nu), GRIT_OK);
      cr_assert_eq(grit_step(d2), GRIT_OK);
      grit_position_difference(m2, qref, grit_data_qpos(d2), x[sgn]);
      memcpy(x[sgn] + nv, grit_data_qvel(d2), sizeof(double) * nv);
      if (!sgn) continue;
      for (int i = 0; i < nx; ++i) {
        const double fd = (x[1][i] - x[0][i]) / (2 * hfd);
        const double an = col < nx ? A[i * nx + col] : B[i * nu + col - nx];
        num += (an - fd) * (an - fd);
        den += fd * fd;
      }
    }
  free(q0), free(v0), free(qref), free(u0), free(up), free(A), free(B), free(vp), free(x[0]), free(x[1]);
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
  return sqrt(num) / sqrt(den);
}

/* No contact: central differences at h = 1e-6 are accurate to about h^2 |x'''| + eps / h ~ 1e-10
 * relative per entry; over the twelve-link arm measured 1.0e-8 (the same A, B as the dual path's, bit
 * for bit), while the stored partials scaled by 1.001 show 3.8e-4. */
Test(derivatives_smooth, actuators_against_central_differences) {
  const double rel = against_fd(ACTS, 20, 1e-6);
  cr_log_info("actuators: relative Frobenius error %.3g", rel);
  cr_expect(rel < 5e-8, "%.3g", rel);
}

/* Position passes leave out the joint actuators whose force does not read their length (motors,
 * velocity servos: constants there) and keep springs, position servos and the general actuator with
 * length terms: A and B bit for bit those of the old path (ws->no_smooth_q), which evaluates every
 * actuator on duals; and A's and B's columns, q0's included, against central differences. */
static void positions_same(grit_model *m, grit_data *d, const char *name, int fd) {
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m) + grit_model_na(m);
  double *A1 = calloc((size_t)nx * nx, sizeof(double)), *A2 = calloc((size_t)nx * nx, sizeof(double));
  double *B1 = calloc((size_t)nx * nu + 1, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
  cr_assert_eq(grit_step_derivatives(d, A1, nu ? B1 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->no_smooth_q = 1;
  cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_expect(!memcmp(A1, A2, sizeof(double) * (size_t)nx * nx), "%s: A %.3g", name, col_rel_diff(A1, A2, nx, nx));
  cr_expect(!memcmp(B1, B2, sizeof(double) * (size_t)nx * nu), "%s: B %.3g", name, col_rel_diff(B1, B2, nx, nu));
  d->deriv->no_smooth_q = 0;
  if (fd) {
    const double e = fdt_check(d, 1e-6);
    cr_log_info("%s: A, B against central differences %.3g", name, e);
    cr_expect(e < 1e-6, "%s: %.3g", name, e);
  }
  free(A1), free(A2), free(B1), free(B2);
}

/* The position passes' joint actuators in closed form (derivatives_smooth.c, joint_actuator_cached and
 * joint_actuator_in: grit/dual.h's operations written out on the partials, the values of the call kept):
 * position servos with and without damping (kv: the implicit stiffness), negative and non-unit gears, a
 * general actuator whose gain and bias read length and velocity, force-limited ones inside their range
 * (implicit) and saturated (clamped: joint_actuator_in each pass), a muscle on a joint (the dual path), two
 * actuators on one dof (their sums' order), springs and a negative damping. A and B bit for bit the dual
 * path's (no_smooth_q), then against central differences; and the kept forms per kind. */
static const char *JOINT_ACTS =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody>"
    "<body pos='0 0 1'><joint name='a' type='hinge' axis='0 0.3 1' damping='0.2' stiffness='2' springref='0.3'/>"
    " <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.03' mass='1'/>"
    " <body pos='0.2 0 0'><joint name='b' type='hinge' axis='0 1 0.2' damping='0.1'/>"
    "  <geom type='capsule' fromto='0 0 0 0.2 0.05 -0.1' size='0.03' mass='0.8'/>"
    "  <body pos='0.2 0.05 -0.1'><joint name='s' type='slide' axis='0.2 0 -1' damping='1' stiffness='20'/>"
    "   <geom type='capsule' fromto='0 0 0 0.05 0 -0.2' size='0.025' mass='0.5'/>"
    "   <body pos='0.05 0 -0.2'><joint name='c' type='hinge' axis='1 0 0' damping='0.05' range='-1 1'/>"
    "    <geom type='sphere' pos='0.02 0.03 -0.1' size='0.06' mass='0.4'/>"
    "    <body pos='0 0 -0.1'><joint name='e' type='hinge' axis='0 1 0' damping='0.05'/>"
    "     <geom type='capsule' fromto='0 0 0 0 0 -0.15' size='0.02' mass='0.2'/>"
    "   </body></body></body></body></body>"
    "</worldbody>"
    "<actuator><position joint='a' kp='30' gear='-1.5'/><position joint='b' kp='10' kv='2'/>"
    "<general joint='s' gaintype='affine' gainprm='2 0.5 0.3' biastype='affine' biasprm='0.1 -4 -0.5' gear='0.7'/>"
    "<position joint='c' kp='50' forcelimited='true' forcerange='-0.01 0.01'/>"
    "<position joint='b' kp='3' forcelimited='true' forcerange='-100 100'/>"
    "<muscle joint='e' lengthrange='-1 1'/>"
    "<motor joint='e' gear='2'/></actuator></mujoco>";

Test(derivatives_smooth, position_passes_closed_form) {
  grit_model *m;
  grit_data *d = prepare(JOINT_ACTS, &m, 20);
  positions_same(m, d, "joint actuators", 1);
  const grit_deriv_smooth *s = d->deriv->sm;
  cr_assert_eq(s->nlen, 6, "the joint actuators that read their length: %d", s->nlen);
  /* kept forms: the servos (an affine bias, implicit stiffness: 2 | 4), the general one (1 | 2 | 4), the
   * saturated one and the muscle each pass (0), the one inside its range kept */
  const int forms[6] = {8 | 6, 8 | 6, 8 | 7, 0, 8 | 6, 0};
  for (int k = 0; k < 6; ++k) cr_expect_eq(s->len_f[k], forms[k], "actuator %d: form %d", s->len[k], s->len_f[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A chain of 24 hinges (three position passes or more: the kept term of an actuator whose joint a pass
 * does not seed, joint_actuator_form's bit 16) with a position servo on every joint (some damped, some
 * with a general affine gain, one saturated, one with a negative gear) and springs on every third. */
static char *long_chain(void) {
  const int n = 24;
  char *x = malloc(16384), *p = x;
  p += sprintf(p, "<mujoco><option timestep='0.002'/><worldbody><body pos='0 0 1'>");
  for (int i = 0; i < n; ++i)
    p += sprintf(p, "<body pos='0.1 0 0'><joint name='j%d' type='hinge' axis='%g 1 %g' damping='0.05'%s/>"
                    "<geom type='capsule' fromto='0 0 0 0.1 0 0' size='0.02' mass='0.2'/>",
                 i, 0.1 * (i % 3), 0.2 * (i % 2), i % 3 == 0 ? " stiffness='3'" : "");
  for (int i = 0; i < n; ++i) p += sprintf(p, "</body>");
  p += sprintf(p, "</body></worldbody><actuator>");
  for (int i = 0; i < n; ++i) {
    if (i == 5)
      p += sprintf(p, "<general joint='j%d' gaintype='affine' gainprm='2 0.5 0.3' biastype='affine' biasprm='0.1 -4 -0.5'/>", i);
    else if (i == 7)
      p += sprintf(p, "<position joint='j%d' kp='50' forcelimited='true' forcerange='-0.01 0.01'/>", i);
    else
      p += sprintf(p, "<position joint='j%d' kp='%g'%s%s/>", i, 5.0 + i, i % 2 ? " kv='0.5'" : "", i == 9 ? " gear='-2'" : "");
  }
  sprintf(p, "</actuator></mujoco>");
  return x;
}

Test(derivatives_smooth, position_passes_kept_terms) {
  char *xml = long_chain();
  grit_model *m;
  grit_data *d = prepare(xml, &m, 20);
  free(xml);
  positions_same(m, d, "long chain", 1);
  const grit_deriv_smooth *s = d->deriv->sm;
  int kept = 0;
  for (int k = 0; k < s->nlen; ++k) kept += (s->len_f[k] & 16) != 0;
  cr_expect_eq(kept, s->nlen - 1, "the kept terms: %d of %d (all but the saturated one)", kept, s->nlen);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_smooth, position_passes_same_as_dual) {
  grit_model *m;
  grit_data *d = prepare(ACTS, &m, 20);
  positions_same(m, d, "actuators", 1);
  grit_data_free(d);
  grit_model_free(m);
  const char *files[] = {FILE_PATH("mujoco_model/humanoid.xml"), FILE_PATH("dm_control_suite/quadruped.xml"),
                         FILE_PATH("mujoco_model/arm26.xml"), FILE_PATH("dm_control_suite/fish.xml")};
  for (int f = 0; f < 4; ++f) {
    char msg[GRIT_MESSAGE_SIZE];
    cr_assert_eq(grit_mjcf_load_file(files[f], &m, NULL, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    const int nu = grit_model_nu(m);
    double *u = calloc((size_t)nu + 1, sizeof(double));
    for (int i = 0; i < nu; ++i) u[i] = 0.4 * sin(0.9 * i + 0.3);
    if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
    free(u);
    for (int i = 0; i < 50; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    positions_same(m, d, files[f], 0);
    grit_data_free(d);
    grit_model_free(m);
  }
}
