/* SPDX-License-Identifier: Apache-2.0 */
/* fluid.c — the inertia-box fluid forces (fluid_generic.h) for double and dual numbers, and the box of
 * a body's mass and principal moments. */
#include "fluid.h"
#include "dynamics.h"

#include <math.h>
#include <string.h>

int grit_fluid_on(const grit_model *m) { return m->opt.density > 0.0 || m->opt.viscosity > 0.0; }

/* One Jacobi rotation of the symmetric a (3x3) in the plane (p, q), which zeroes a[p][q]; v collects
 * the rotations (its columns become the eigenvectors). */
static void jacobi_rotate(double a[9], double v[9], int p, int q) {
  const double apq = a[3 * p + q];
  if (apq == 0.0) return;
  const double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
  const double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
  const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
  for (int k = 0; k < 3; ++k) { /* columns: a J, v J */
    const double akp = a[3 * k + p], akq = a[3 * k + q], vkp = v[3 * k + p], vkq = v[3 * k + q];
    a[3 * k + p] = c * akp - s * akq;
    a[3 * k + q] = s * akp + c * akq;
    v[3 * k + p] = c * vkp - s * vkq;
    v[3 * k + q] = s * vkp + c * vkq;
  }
  for (int k = 0; k < 3; ++k) { /* rows: J^T (a J) */
    const double apk = a[3 * p + k], aqk = a[3 * q + k];
    a[3 * p + k] = c * apk - s * aqk;
    a[3 * q + k] = s * apk + c * aqk;
  }
  a[3 * p + q] = a[3 * q + p] = 0.0;
}

/* The principal moments lam and axes (columns of v) of a symmetric 3x3 inertia, by cyclic Jacobi
 * rotations: a diagonal inertia (principal axes along the body's) is returned as it is, v = I. */
static void principal(const double I[9], double lam[3], double v[9]) {
  double a[9];
  memcpy(a, I, sizeof a);
  a[1] = a[3] = 0.5 * (I[1] + I[3]);
  a[2] = a[6] = 0.5 * (I[2] + I[6]);
  a[5] = a[7] = 0.5 * (I[5] + I[7]);
  for (int i = 0; i < 9; ++i) v[i] = i % 4 == 0 ? 1.0 : 0.0;
  for (int sweep = 0; sweep < 50; ++sweep) { /* quadratic convergence: ~5 sweeps in double */
    const double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    const double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (!(off > 1e-36 * diag)) break;
    jacobi_rotate(a, v, 0, 1);
    jacobi_rotate(a, v, 0, 2);
    jacobi_rotate(a, v, 1, 2);
  }
  for (int i = 0; i < 3; ++i) lam[i] = a[4 * i];
}

/* The given axes (columns of R) when the inertia is diagonal in them to 1e-10 of its trace: the moments
 * its diagonal there. Else 0. */
static int given_axes(const double I[9], const double q[4], double lam[3], double R[9]) {
  if (q[0] == 0.0 && q[1] == 0.0 && q[2] == 0.0 && q[3] == 0.0) return 0;
  double IR[9], P[9];
  grit_quat_to_mat(R, q);
  grit_m3_mul(IR, I, R);
  grit_m3_tmul(P, R, IR); /* R^T I R */
  const double tol = 1e-10 * (fabs(I[0]) + fabs(I[4]) + fabs(I[8]));
  if (fabs(P[1]) > tol || fabs(P[2]) > tol || fabs(P[5]) > tol) return 0;
  for (int i = 0; i < 3; ++i) lam[i] = P[4 * i];
  return 1;
}

void grit_fluid_box(double mass, const double inertia[9], const double iquat[4], double box[3], double axes[9]) {
  /* With two equal moments the axes in their plane are any pair, and the quadratic drag is not the same
   * for every pair: MuJoCo's are its compiler's (a single geometry's frame, the inertial's quat), which
   * MJCF loading passes as inertia_quat. */
  double lam[3];
  if (!given_axes(inertia, iquat, lam, axes)) principal(inertia, lam, axes);
  /* a box of edges b has moments mass/12 (b_j^2 + b_k^2): b_i^2 = 6 (l_j + l_k - l_i) / mass; MuJoCo
   * floors the difference at 1e-15 (mjMINVAL), which keeps a degenerate body's edge positive */
  for (int i = 0; i < 3; ++i) {
    const double e = lam[(i + 1) % 3] + lam[(i + 2) % 3] - lam[i];
    box[i] = sqrt((e > GRIT_FLUID_MIN_MASS ? e : GRIT_FLUID_MIN_MASS) / mass * 6.0);
  }
}

#include "grit/detail/scalar_double.h"
#include "fluid_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "fluid_generic.h"
#include "grit/detail/scalar_undef.h"
