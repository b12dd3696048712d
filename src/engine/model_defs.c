/* SPDX-License-Identifier: Apache-2.0 */
/* model_defs.c — the builder's definitions: their defaults (grit_default_*_def, grit_default_options,
 * MuJoCo's where grit reads MuJoCo's files), the inertia of principal moments, and the check that a
 * body's mass and inertia are physical. The builder itself is model.c. */
#include <math.h>
#include <string.h>

#include "grit/math.h"
#include "model_internal.h"
#include "status_internal.h"

grit_body_def grit_default_body_def(void) {
  grit_body_def d;
  memset(&d, 0, sizeof d);
  d.parent = 0;
  d.quat[0] = 1.0;
  d.mass = 1.0;
  for (int i = 0; i < 3; ++i) d.inertia[4 * i] = 0.4; /* a unit sphere of unit mass: 2/5 m r^2 */
  return d;
}

grit_joint_def grit_default_joint_def(void) {
  grit_joint_def d;
  memset(&d, 0, sizeof d);
  d.type = GRIT_JOINT_HINGE;
  d.axis[2] = 1.0;
  d.range[0] = -1.0;
  d.range[1] = 1.0;
  d.solreflimit[0] = 0.02; /* MuJoCo's default solreflimit */
  d.solreflimit[1] = 1.0;
  d.limit_width = 0.001; /* MuJoCo's default solimplimit width */
  return d;
}

grit_actuator_def grit_default_actuator_def(void) {
  grit_actuator_def d;
  memset(&d, 0, sizeof d);
  d.gear = 1.0;
  d.ctrl_range[0] = -1.0;
  d.ctrl_range[1] = 1.0;
  d.dynprm[0] = 1.0;
  d.gainprm[0] = 1.0;
  static const double muscle[9] = {0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2}; /* MuJoCo 2.2.2's */
  memcpy(d.muscle_gainprm, muscle, sizeof muscle);
  memcpy(d.muscle_biasprm, muscle, sizeof muscle);
  d.crank_site = d.slider_site = -1;
  d.slider_axis[2] = 1.0;
  d.site = -1; /* the site transmission (issue 24) */
  d.site_gear[0] = 1.0;
  return d;
}

grit_geom_def grit_default_geom_def(void) {
  grit_geom_def d;
  memset(&d, 0, sizeof d);
  d.shape = grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0);
  d.quat[0] = 1.0;
  d.friction = 1.0;
  d.stiffness = 1e6;
  d.dissipation = 10.0;
  d.tau_d = 0.01;
  d.contype = 1;
  d.conaffinity = 1;
  d.condim = 3;
  const double fluid_coef[5] = {0.5, 0.25, 1.5, 1.0, 1.0}; /* MuJoCo 2.2.2's fluidcoef */
  memcpy(d.fluid_coef, fluid_coef, sizeof fluid_coef);
  return d;
}

grit_options grit_default_options(void) {
  grit_options o;
  o.timestep = 1e-3;
  o.contact_margin = 0.1;
  o.max_contacts = 0;
  o.explicit_actuation = 0;
  o.explicit_gyroscopic = 0;
  o.density = 0.0;
  o.viscosity = 0.0;
  o.wind[0] = o.wind[1] = o.wind[2] = 0.0;
  o.gravity[0] = 0.0;
  o.gravity[1] = 0.0;
  o.gravity[2] = -9.81;
  return o;
}

void grit_inertia_from_principal(double inertia[9], const double diag[3], const double quat[4]) {
  double q[4] = {quat[0], quat[1], quat[2], quat[3]}, R[9], D[9] = {0};
  grit_quat_normalize(q);
  grit_quat_to_mat(R, q);
  for (int i = 0; i < 3; ++i) D[4 * i] = diag[i];
  grit_m3_mul(D, R, D);
  grit_m3_mult(inertia, D, R);
}

/* Eigenvalues of a symmetric 3x3 matrix by cyclic Jacobi rotations (converges quadratically; 50
 * sweeps are far more than the ~6 ever needed in double precision). */
static void sym3_eigenvalues(const double A[9], double lambda[3]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-32 * diag) break;
    static const int P[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int k = 0; k < 3; ++k) {
      int p = P[k][0], q = P[k][1];
      double apq = a[3 * p + q];
      if (apq == 0.0) continue;
      double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
      double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
      double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
      /* a <- J^T a J with the rotation J in the (p, q) plane */
      for (int r = 0; r < 3; ++r) {
        double arp = a[3 * r + p], arq = a[3 * r + q];
        a[3 * r + p] = c * arp - s * arq;
        a[3 * r + q] = s * arp + c * arq;
      }
      for (int r = 0; r < 3; ++r) {
        double apr = a[3 * p + r], aqr = a[3 * q + r];
        a[3 * p + r] = c * apr - s * aqr;
        a[3 * q + r] = s * apr + c * aqr;
      }
    }
  }
  lambda[0] = a[0];
  lambda[1] = a[4];
  lambda[2] = a[8];
}

grit_status grit_check_inertia(char *msg, int body, double mass, const double I[9]) {
  if (!isfinite(mass)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "body %d: mass is not finite", body);
  if (mass <= 0.0) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "body %d: mass %g must be positive", body, mass);
  for (int i = 0; i < 9; ++i)
    if (!isfinite(I[i])) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "body %d: inertia is not finite", body);
  double scale = 0.0;
  for (int i = 0; i < 9; ++i) scale = fmax(scale, fabs(I[i]));
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (fabs(I[3 * i + j] - I[3 * j + i]) > 1e-9 * scale)
        return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "body %d: inertia is not symmetric (entries %d%d, %d%d)",
                              body, i, j, j, i);
  double l[3];
  sym3_eigenvalues(I, l);
  for (int i = 0; i < 3; ++i)
    if (!(l[i] > 0.0))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                            "body %d: inertia is not positive definite (principal moment %g)", body, l[i]);
  /* Triangle inequality of principal moments; a tolerance admits the exact limits (rods, discs). */
  for (int i = 0; i < 3; ++i) {
    double a = l[i], b = l[(i + 1) % 3], c = l[(i + 2) % 3];
    if (a + b < c * (1.0 - 1e-9))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                            "body %d: principal moments %g, %g, %g violate the triangle inequality", body, l[0],
                            l[1], l[2]);
  }
  return GRIT_OK;
}
