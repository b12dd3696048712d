/* SPDX-License-Identifier: Apache-2.0 */
/* test_fluid.c — MuJoCo 2.2.2's inertia-box fluid forces (src/engine/fluid.c): the equivalent box of a
 * body, a body carried along by a viscous wind, the step's Jacobians with fluid forces against central
 * differences, and the MJCF loader's options and refusals. The trajectories against MuJoCo itself are
 * in test_mjcf_real.c (fish_fluid, free_box_in_wind). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluid.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

/* The box of a uniform box's inertia is that box: edges to 1e-12 relative, axes those of the box (up to
 * sign and order, which the force does not see; here the order is kept, Jacobi rotations of a turned
 * inertia find the three distinct moments in place). */
Test(fluid, box_of_a_box) {
  const double mass = 2.5, e[3] = {0.2, 0.1, 0.04}, quat[4] = {0.9, 0.1, -0.3, 0.2};
  double diag[3], I[9], R[9], box[3], axes[9];
  for (int i = 0; i < 3; ++i) {
    const double a = e[(i + 1) % 3], b = e[(i + 2) % 3];
    diag[i] = mass / 12.0 * (a * a + b * b);
  }
  grit_inertia_from_principal(I, diag, quat);
  double n = 0;
  for (int i = 0; i < 4; ++i) n += quat[i] * quat[i];
  double q[4];
  for (int i = 0; i < 4; ++i) q[i] = quat[i] / sqrt(n);
  grit_quat_to_mat(R, q);
  const double none[4] = {0, 0, 0, 0};
  grit_fluid_box(mass, I, none, box, axes);
  for (int i = 0; i < 3; ++i) { /* each found axis is parallel to the box axis of the same edge */
    int k = 0;
    for (int j = 1; j < 3; ++j)
      if (fabs(box[i] - e[j]) < fabs(box[i] - e[k])) k = j;
    cr_expect_lt(fabs(box[i] - e[k]), 1e-12 * e[k], "edge %d: %.17g, box edge %.17g", i, box[i], e[k]);
    double dot = 0;
    for (int r = 0; r < 3; ++r) dot += axes[3 * r + i] * R[3 * r + k];
    cr_expect_lt(1.0 - fabs(dot), 1e-12, "axis %d: |cos| %.17g", i, fabs(dot));
  }
  /* a diagonal inertia is kept as it is: axes I */
  const double Id[9] = {1, 0, 0, 0, 2, 0, 0, 0, 2.5};
  grit_fluid_box(1.0, Id, none, box, axes);
  for (int i = 0; i < 9; ++i) cr_expect_eq(axes[i], i % 4 == 0 ? 1.0 : 0.0);
  /* given axes that diagonalize the inertia are kept (here a turn about z, in the plane of the equal
   * moments 2, 2); axes that do not are ignored */
  const double c = cos(0.3), s = sin(0.3), qz[4] = {cos(0.15), 0, 0, sin(0.15)}, qx[4] = {cos(0.15), sin(0.15), 0, 0};
  const double Iz[9] = {2, 0, 0, 0, 2, 0, 0, 0, 1};
  grit_fluid_box(1.0, Iz, qz, box, axes);
  const double Rz[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
  for (int i = 0; i < 9; ++i) cr_expect_lt(fabs(axes[i] - Rz[i]), 1e-15, "axes[%d] %g", i, axes[i]);
  cr_expect_lt(fabs(box[2] - sqrt(6.0 * 3.0)), 1e-14, "%g", box[2]);
  grit_fluid_box(1.0, Iz, qx, box, axes);
  for (int i = 0; i < 9; ++i) cr_expect_eq(axes[i], i % 4 == 0 ? 1.0 : 0.0);
}

static grit_model *load(const char *xml, int lenient, char msg[GRIT_MESSAGE_SIZE], grit_status *s, grit_mjcf_info *info) {
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = lenient;
  grit_model *m = NULL;
  *s = grit_mjcf_load_buffer(xml, strlen(xml), "fluid.xml", &o, &m, info, msg);
  return m;
}

/* Stokes drag alone (density 0) on a cube, gravity off: the linear velocity relaxes to the wind's at the
 * rate 3 pi d mu / m (d = the cube's edge), the spin decays at pi d^3 mu / I; after 1 s, ~20 time
 * constants, both are at their limits to 1e-6 (the implicit-free explicit step is stable: h rate 0.02). */
Test(fluid, a_cube_is_carried_by_a_viscous_wind) {
  static const char xml[] = "<mujoco><option timestep='0.001' gravity='0 0 0' viscosity='0.1' wind='1 -0.5 0.25'/>"
                            "<worldbody><body><freejoint/><geom type='box' size='.05 .05 .05' mass='0.1' contype='0' "
                            "conaffinity='0'/></body></worldbody></mujoco>";
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s;
  grit_model *m = load(xml, 0, msg, &s, NULL);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  const double rate = 3 * 3.14159265358979 * 0.1 * 0.1 / 0.1; /* 3 pi d mu / m = 0.94 / s */
  cr_assert_gt(20.0 / rate, 1.0 - 1e-9);                 /* (a check of the comment's arithmetic) */
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const double v0[6] = {0, 0, 0, 3, -2, 1};
  cr_assert_eq(grit_data_set_qvel(d, v0, 6), GRIT_OK);
  const int steps = (int)ceil(25.0 / rate / 1e-3);
  for (int k = 0; k < steps; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *v = grit_data_qvel(d), wind[3] = {1, -0.5, 0.25};
  for (int i = 0; i < 3; ++i) cr_expect_lt(fabs(v[i] - wind[i]), 1e-6, "v[%d] = %g", i, v[i]);
  for (int i = 3; i < 6; ++i) cr_expect_lt(fabs(v[i]), 1e-6, "w[%d] = %g", i - 3, v[i]);
  grit_data_free(d);
  grit_model_free(m);
}

/* Three trees in a dense, viscous fluid with wind and gravity: a turned box off its body's origin, an
 * aligned box at its origin (the derivatives' constant-M tree, which the fluid's orientation dependence
 * must take out), and a capsule with a hinged, motor-driven plate. */
static const char scene[] =
    "<mujoco><option timestep='0.002' density='%g' viscosity='%g' wind='0.4 -0.3 0.2'/><worldbody>"
    "<body pos='0 0 1'><freejoint/><geom type='box' size='.1 .05 .02' euler='20 30 40' pos='.02 .01 0' "
    "contype='0' conaffinity='0'/></body>"
    "<body pos='1 0 1'><freejoint/><geom type='box' size='.08 .06 .03' contype='0' conaffinity='0'/></body>"
    "<body pos='0 1 1'><freejoint/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.03' contype='0' "
    "conaffinity='0'/><body pos='.2 0 0'><joint name='h' type='hinge' axis='0 1 0' damping='0.01'/>"
    "<geom type='box' size='.1 .03 .01' pos='.1 0 0' contype='0' conaffinity='0'/></body></body>"
    "</worldbody><actuator><motor joint='h' gear='2'/></actuator></mujoco>";

static void linearize_scene(double density, double viscosity, const double *x0, const double *u0, double *A, double *B,
                            grit_model **out) {
  char xml[sizeof scene + 64], msg[GRIT_MESSAGE_SIZE];
  snprintf(xml, sizeof xml, scene, density, viscosity);
  grit_status s;
  grit_model *m = load(xml, 0, msg, &s, NULL);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  if (A) cr_assert_eq(grit_linearize(d, x0, u0, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  grit_data_free(d);
  if (out) *out = m;
  else grit_model_free(m);
}

/* The step's A = dx+/dx and B = dx+/du with fluid forces against central differences of grit_linearize's
 * step (tangent-space positions). Step 1e-6: truncation ~1e-12 of the curvature, round-off ~1e-10 / 1e-6;
 * the bound 1e-5 of the largest entry, entry by entry. And the fluid's share of A is far above that error
 * (A with the fluid off differs by more than 100 times the error). */
Test(fluid, step_derivatives_against_central_differences) {
  grit_model *m;
  linearize_scene(1000, 0.5, NULL, NULL, NULL, NULL, &m);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nx = 2 * nv;
  cr_assert_eq(nv, 19);
  cr_assert_eq(grit_model_nu(m), 1);
  double *x0 = calloc((size_t)(nq + nv), sizeof *x0), *x = calloc((size_t)(nq + nv), sizeof *x);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *Adry = calloc((size_t)(nx * nx), sizeof *Adry);
  double *B = calloc((size_t)nx, sizeof *B), *fp = calloc((size_t)nx, sizeof *fp), *fm = calloc((size_t)nx, sizeof *fm);
  double *qa = calloc((size_t)nq, sizeof *qa), *qb = calloc((size_t)nq, sizeof *qb), *e = calloc((size_t)nv, sizeof *e);
  grit_model_qpos0(m, x0);
  const double tilt[4] = {0.8, 0.3, -0.4, 0.2}; /* turn the first body: its axes off the world's */
  const double tn = sqrt(0.64 + 0.09 + 0.16 + 0.04);
  for (int i = 0; i < 4; ++i) x0[3 + i] = tilt[i] / tn;
  for (int i = 0; i < nv; ++i) x0[nq + i] = 1.5 * sin(1.0 + 1.7 * i);
  const double u0[1] = {0.3};
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_linearize(d, x0, u0, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  double num = 0, den = 0;
  for (int col = 0; col <= nx; ++col) { /* the last column: the control */
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double u[1] = {u0[0]};
      memcpy(x, x0, sizeof(double) * (size_t)(nq + nv));
      if (col < nv) {
        e[col] = sgn * 1e-6;
        grit_integrate_positions(m, x, e, 1.0);
        e[col] = 0;
      } else if (col < nx) {
        x[nq + col - nv] += sgn * 1e-6;
      } else {
        u[0] += sgn * 1e-6;
      }
      cr_assert_eq(grit_linearize(d, x, u, NULL, NULL), GRIT_OK, "%s", grit_data_last_error(d));
      memcpy(qb, grit_data_qpos(d), sizeof(double) * (size_t)nq);
      double *f = sgn > 0 ? fp : fm;
      memcpy(f + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
      if (sgn < 0) memcpy(qa, qb, sizeof(double) * (size_t)nq);
      else grit_position_difference(m, qa, qb, fp); /* q+(+h) - q+(-h) in the tangent space */
    }
    for (int r = 0; r < nx; ++r) {
      const double fd = r < nv ? fp[r] / 2e-6 : (fp[r] - fm[r]) / 2e-6;
      const double an = col < nx ? A[r * nx + col] : B[r];
      num = fmax(num, fabs(fd - an));
      den = fmax(den, fabs(an));
    }
  }
  cr_log_info("fluid: step Jacobians [A B] vs central differences: max error %.3g of max entry %.3g (%.3g)", num, den,
              num / den);
  cr_expect_lt(num, 1e-5 * den, "%g of %g", num, den);
  linearize_scene(0, 0, x0, u0, Adry, NULL, NULL);
  double share = 0;
  for (int i = 0; i < nx * nx; ++i) share = fmax(share, fabs(A[i] - Adry[i]));
  cr_log_info("fluid: the fluid forces change A by up to %.3g", share);
  cr_expect_gt(share, 100 * num, "the fluid changes A by %g only", share);
  grit_data_free(d);
  grit_model_free(m);
  free(x0), free(x), free(A), free(Adry), free(B), free(fp), free(fm), free(qa), free(qb), free(e);
}

/* Only the Euler step simulates fluid forces: the other integrators are refused with a message. */
Test(fluid, other_integrators_refused) {
  char xml[sizeof scene + 64], msg[GRIT_MESSAGE_SIZE];
  snprintf(xml, sizeof xml, scene, 1000.0, 0.0);
  grit_status s;
  grit_model *m = load(xml, 0, msg, &s, NULL);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_default_step_settings();
  st.integrator = GRIT_INTEGRATOR_QUASISTATIC;
  cr_expect_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_UNSUPPORTED);
  cr_expect(strstr(grit_data_last_error(d), "fluid"), "%s", grit_data_last_error(d));
  st.integrator = GRIT_INTEGRATOR_VARIATIONAL;
  cr_expect_eq(grit_data_set_step_settings(d, &st), GRIT_ERR_UNSUPPORTED);
  st.integrator = GRIT_INTEGRATOR_EULER;
  cr_expect_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
  grit_data_free(d);
  grit_model_free(m);
}

/* <option density viscosity wind> reach the options; fluidshape="ellipsoid" (MuJoCo's other model,
 * test_fluid_ellipsoid.c) loads with the fluid on and off. */
Test(fluid, mjcf_options_and_the_ellipsoid_model) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s;
  grit_model *m = load("<mujoco><option density='5000' viscosity='0.002' wind='1 2 3'/><worldbody><body><freejoint/>"
                       "<geom size='.1'/></body></worldbody></mujoco>",
                       0, msg, &s, NULL);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  grit_options o = grit_model_options(m);
  cr_expect_eq(o.density, 5000);
  cr_expect_eq(o.viscosity, 0.002);
  cr_expect(o.wind[0] == 1 && o.wind[1] == 2 && o.wind[2] == 3);
  grit_model_free(m);
  o = grit_default_options();
  cr_expect(o.density == 0 && o.viscosity == 0 && o.wind[0] == 0 && o.wind[1] == 0 && o.wind[2] == 0);

  static const char ell[] = "<mujoco><option density='%s'/>\n<worldbody><body><freejoint/>\n"
                            "<geom size='.1' fluidshape='ellipsoid'/></body></worldbody></mujoco>";
  char xml[sizeof ell + 16];
  snprintf(xml, sizeof xml, ell, "1000");
  m = load(xml, 0, msg, &s, NULL);
  cr_expect_eq(s, GRIT_OK, "fluid on: %s", msg);
  grit_model_free(m);
  snprintf(xml, sizeof xml, ell, "0");
  m = load(xml, 0, msg, &s, NULL);
  cr_expect_eq(s, GRIT_OK, "fluid off: %s", msg);
  grit_model_free(m);
  m = load("<mujoco><option density='-1'/><worldbody/></mujoco>", 0, msg, &s, NULL);
  cr_expect_eq(s, GRIT_ERR_INVALID_MODEL, "%s", msg);
  cr_expect(strstr(msg, "density"), "%s", msg);
  grit_model_free(m);
}

/* The builder checks the fluid options (finite, density and viscosity >= 0) and a body's inertia_quat. */
Test(fluid, builder_checks_the_options) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options o = grit_default_options();
  o.density = 1000, o.viscosity = 1e-3, o.wind[1] = 2;
  cr_expect_eq(grit_builder_set_options(b, &o), GRIT_OK);
  o.viscosity = -1;
  cr_expect_eq(grit_builder_set_options(b, &o), GRIT_ERR_INVALID_MODEL);
  cr_expect(strstr(grit_builder_last_error(b), "viscosity"), "%s", grit_builder_last_error(b));
  o.viscosity = 0, o.wind[2] = NAN;
  cr_expect_eq(grit_builder_set_options(b, &o), GRIT_ERR_NOT_FINITE);
  cr_expect(strstr(grit_builder_last_error(b), "wind"), "%s", grit_builder_last_error(b));
  grit_body_def bd = grit_default_body_def(); /* and the body's optional fluid axes */
  cr_expect(bd.inertia_quat[0] == 0 && bd.inertia_quat[1] == 0 && bd.inertia_quat[2] == 0 && bd.inertia_quat[3] == 0);
  bd.inertia_quat[0] = NAN;
  cr_expect_eq(grit_builder_add_body(b, &bd, NULL), GRIT_ERR_NOT_FINITE);
  cr_expect(strstr(grit_builder_last_error(b), "inertia_quat"), "%s", grit_builder_last_error(b));
  grit_builder_free(b);
}
