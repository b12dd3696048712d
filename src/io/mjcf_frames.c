/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_frames.c — MuJoCo 2.2.2's compiler arithmetic, reproduced operation for operation (from
 * user_util.cc and user_objects.cc) so that the loader's frames, masses and inertias agree with
 * MuJoCo's to rounding: vector normalization, quaternions from every MJCF orientation form, the
 * minimal rotation of fromto, geometry volumes and principal inertias, and the pieces of the
 * parallel-axis sum. */
#include <math.h>
#include <string.h>

#include "mjcf_internal.h"

static const double PI = 3.14159265358979323846;
static const double MJ_EPS = 1e-14; /* MuJoCo's mjEPS (user_util.h) */

double mjcf_normvec(double *v, int n) { /* mjuu_normvec: unchanged and 0 when tiny */
  double s = 0;
  for (int i = 0; i < n; ++i) s += v[i] * v[i];
  if (s < MJ_EPS) return 0;
  s = sqrt(s);
  for (int i = 0; i < n; ++i) v[i] /= s;
  return s;
}

void mjcf_quat2mat(double *r, const double *q) {
  double q00 = q[0] * q[0], q11 = q[1] * q[1], q22 = q[2] * q[2], q33 = q[3] * q[3];
  r[0] = q00 + q11 - q22 - q33;
  r[4] = q00 - q11 + q22 - q33;
  r[8] = q00 - q11 - q22 + q33;
  r[1] = 2 * (q[1] * q[2] - q[0] * q[3]);
  r[2] = 2 * (q[1] * q[3] + q[0] * q[2]);
  r[3] = 2 * (q[1] * q[2] + q[0] * q[3]);
  r[5] = 2 * (q[2] * q[3] - q[0] * q[1]);
  r[6] = 2 * (q[1] * q[3] - q[0] * q[2]);
  r[7] = 2 * (q[2] * q[3] + q[0] * q[1]);
}

void mjcf_mulquat(double *res, const double *a, const double *b) { /* normalized, as mjuu_mulquat */
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  mjcf_normvec(r, 4);
  memcpy(res, r, sizeof r);
}

void mjcf_cross(double *a, const double *b, const double *c) {
  a[0] = b[1] * c[2] - b[2] * c[1];
  a[1] = b[2] * c[0] - b[0] * c[2];
  a[2] = b[0] * c[1] - b[1] * c[0];
}

void mjcf_z2quat(double *q, const double *vec) { /* minimal rotation from z to vec */
  const double z[3] = {0, 0, 1};
  mjcf_cross(q + 1, z, vec);
  double s = mjcf_normvec(q + 1, 3);
  if (s < 1e-10) {
    q[1] = 1;
    q[2] = q[3] = 0;
  }
  double ang = atan2(s, vec[2]);
  q[0] = cos(ang / 2);
  q[1] *= sin(ang / 2);
  q[2] *= sin(ang / 2);
  q[3] *= sin(ang / 2);
}

void mjcf_frame2quat(double *q, const double *x, const double *y, const double *z) {
  const double *m[3] = {x, y, z}; /* m[column][row] */
  if (m[0][0] + m[1][1] + m[2][2] > 0) {
    q[0] = 0.5 * sqrt(1 + m[0][0] + m[1][1] + m[2][2]);
    q[1] = 0.25 * (m[1][2] - m[2][1]) / q[0];
    q[2] = 0.25 * (m[2][0] - m[0][2]) / q[0];
    q[3] = 0.25 * (m[0][1] - m[1][0]) / q[0];
  } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
    q[1] = 0.5 * sqrt(1 + m[0][0] - m[1][1] - m[2][2]);
    q[0] = 0.25 * (m[1][2] - m[2][1]) / q[1];
    q[2] = 0.25 * (m[1][0] + m[0][1]) / q[1];
    q[3] = 0.25 * (m[2][0] + m[0][2]) / q[1];
  } else if (m[1][1] > m[2][2]) {
    q[2] = 0.5 * sqrt(1 - m[0][0] + m[1][1] - m[2][2]);
    q[0] = 0.25 * (m[2][0] - m[0][2]) / q[2];
    q[1] = 0.25 * (m[1][0] + m[0][1]) / q[2];
    q[3] = 0.25 * (m[2][1] + m[1][2]) / q[2];
  } else {
    q[3] = 0.5 * sqrt(1 - m[0][0] - m[1][1] + m[2][2]);
    q[0] = 0.25 * (m[0][1] - m[1][0]) / q[3];
    q[1] = 0.25 * (m[2][0] + m[0][2]) / q[3];
    q[2] = 0.25 * (m[2][1] + m[1][2]) / q[3];
  }
  mjcf_normvec(q, 4);
}

/* mjuu_globalinertia: R diag(d) R^T as (xx, yy, zz, xy, xz, yz). */
void mjcf_globalinertia(double *g, const double *d, const double *q) {
  double m[9];
  mjcf_quat2mat(m, q);
  double t[9] = {m[0] * d[0], m[3] * d[0], m[6] * d[0], m[1] * d[1], m[4] * d[1],
                 m[7] * d[1], m[2] * d[2], m[5] * d[2], m[8] * d[2]};
  g[0] = m[0] * t[0] + m[1] * t[3] + m[2] * t[6];
  g[1] = m[3] * t[1] + m[4] * t[4] + m[5] * t[7];
  g[2] = m[6] * t[2] + m[7] * t[5] + m[8] * t[8];
  g[3] = m[0] * t[1] + m[1] * t[4] + m[2] * t[7];
  g[4] = m[0] * t[2] + m[1] * t[5] + m[2] * t[8];
  g[5] = m[3] * t[2] + m[4] * t[5] + m[5] * t[8];
}

void mjcf_offcenter(double *r, double mass, const double *v) { /* the parallel-axis term */
  r[0] = mass * (v[1] * v[1] + v[2] * v[2]);
  r[1] = mass * (v[0] * v[0] + v[2] * v[2]);
  r[2] = mass * (v[0] * v[0] + v[1] * v[1]);
  r[3] = -mass * v[0] * v[1];
  r[4] = -mass * v[0] * v[2];
  r[5] = -mass * v[1] * v[2];
}

void mjcf_sym6_to_mat(double *I, const double *s) {
  const double m[9] = {s[0], s[3], s[4], s[3], s[1], s[5], s[4], s[5], s[2]};
  memcpy(I, m, sizeof m);
}

/* The quaternion of an MJCF orientation (mjCAlternative::Set); 0 and an error message on failure. */
const char *mjcf_orient_quat(const mjcf_ctx *c, const mjcf_orient *o, double q[4]) {
  double v[6];
  memcpy(v, o->v, sizeof v);
  switch (o->kind) {
    case MJCF_ORI_QUAT:
      memcpy(q, v, 4 * sizeof *q);
      if (mjcf_normvec(q, 4) == 0) return "quat is zero";
      return NULL;
    case MJCF_ORI_AXISANGLE: {
      if (c->degree) v[3] = v[3] / 180.0 * PI;
      if (mjcf_normvec(v, 3) < MJ_EPS) return "axisangle too small";
      double a = v[3] / 2;
      q[0] = cos(a);
      q[1] = sin(a) * v[0];
      q[2] = sin(a) * v[1];
      q[3] = sin(a) * v[2];
      return NULL;
    }
    case MJCF_ORI_XYAXES: {
      if (mjcf_normvec(v, 3) < MJ_EPS) return "xaxis too small";
      double d = v[0] * v[3] + v[1] * v[4] + v[2] * v[5];
      v[3] -= v[0] * d;
      v[4] -= v[1] * d;
      v[5] -= v[2] * d;
      if (mjcf_normvec(v + 3, 3) < MJ_EPS) return "yaxis too small";
      double z[3];
      mjcf_cross(z, v, v + 3);
      if (mjcf_normvec(z, 3) < MJ_EPS) return "mjcf_cross(xaxis, yaxis) too small";
      mjcf_frame2quat(q, v, v + 3, z);
      return NULL;
    }
    case MJCF_ORI_ZAXIS:
      if (mjcf_normvec(v, 3) < MJ_EPS) return "zaxis too small";
      mjcf_z2quat(q, v);
      return NULL;
    case MJCF_ORI_EULER: {
      if (c->degree)
        for (int i = 0; i < 3; ++i) v[i] = v[i] / 180.0 * PI;
      q[0] = 1, q[1] = q[2] = q[3] = 0;
      for (int i = 0; i < 3; ++i) {
        double tmp[4], r[4] = {cos(v[i] / 2), 0, 0, 0}, sa = sin(v[i] / 2);
        const char s = c->eulerseq[i];
        r[s == 'x' || s == 'X' ? 1 : s == 'y' || s == 'Y' ? 2 : 3] = sa;
        if (s == 'x' || s == 'y' || s == 'z')
          mjcf_mulquat(tmp, q, r); /* moving axes */
        else
          mjcf_mulquat(tmp, r, q); /* fixed axes */
        memcpy(q, tmp, sizeof tmp);
      }
      mjcf_normvec(q, 4);
      return NULL;
    }
    default:
      q[0] = 1, q[1] = q[2] = q[3] = 0;
      return NULL;
  }
}

double mjcf_geom_volume(const mjcf_geom *g) {
  const double *s = g->csize;
  switch (g->type) {
    case MJCF_GEOM_SPHERE: return 4 * PI * s[0] * s[0] * s[0] / 3;
    case MJCF_GEOM_CAPSULE: return PI * (s[0] * s[0] * (2 * s[1]) + 4 * s[0] * s[0] * s[0] / 3);
    case MJCF_GEOM_CYLINDER: return PI * s[0] * s[0] * (2 * s[1]);
    case MJCF_GEOM_ELLIPSOID: return 4 * PI * s[0] * s[1] * s[2] / 3;
    case MJCF_GEOM_BOX: return s[0] * s[1] * s[2] * 8;
    default: return 0;
  }
}

/* Principal inertia of the geometry's mass along its axes (mjCGeom::SetInertia). */
void mjcf_geom_inertia(mjcf_geom *g) {
  const double *s = g->csize, m = g->cmass;
  double *I = g->cinertia;
  switch (g->type) {
    case MJCF_GEOM_SPHERE: I[0] = I[1] = I[2] = 2 * m * s[0] * s[0] / 5; return;
    case MJCF_GEOM_CAPSULE: { /* a cylinder and two hemispheres displaced along the axis */
      double h = 2 * s[1], r = s[0];
      double ms = m * 4 * r / (4 * r + 3 * h), mc = m - ms;
      I[0] = I[1] = mc * (3 * r * r + h * h) / 12;
      I[2] = mc * r * r / 2;
      double is = 2 * ms * r * r / 5;
      I[0] += is + ms * h * (3 * r + 2 * h) / 8;
      I[1] += is + ms * h * (3 * r + 2 * h) / 8;
      I[2] += is;
      return;
    }
    case MJCF_GEOM_CYLINDER: {
      double h = 2 * s[1];
      I[0] = I[1] = m * (3 * s[0] * s[0] + h * h) / 12;
      I[2] = m * s[0] * s[0] / 2;
      return;
    }
    case MJCF_GEOM_ELLIPSOID:
      I[0] = m * (s[1] * s[1] + s[2] * s[2]) / 5;
      I[1] = m * (s[0] * s[0] + s[2] * s[2]) / 5;
      I[2] = m * (s[0] * s[0] + s[1] * s[1]) / 5;
      return;
    case MJCF_GEOM_BOX:
      I[0] = m * (s[1] * s[1] + s[2] * s[2]) / 3;
      I[1] = m * (s[0] * s[0] + s[2] * s[2]) / 3;
      I[2] = m * (s[0] * s[0] + s[1] * s[1]) / 3;
      return;
    default: I[0] = I[1] = I[2] = 0; return;
  }
}

void mjcf_frame_points(const double f[7], double *p, int n) {
  double R[9];
  mjcf_quat2mat(R, f + 3);
  for (int k = 0; k < n; ++k) {
    double *x = p + 3 * k, y[3];
    for (int i = 0; i < 3; ++i) y[i] = f[i] + R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
    memcpy(x, y, sizeof y);
  }
}

void mjcf_frame_apply(const mjcf_ctx *c, const double f[7], double pos[3], mjcf_orient *o) {
  double q[4] = {1, 0, 0, 0};
  if (o->kind != MJCF_ORI_NONE && mjcf_orient_quat(c, o, q)) return; /* degenerate: reported when compiled */
  mjcf_frame_points(f, pos, 1);
  mjcf_orient r;
  memset(&r, 0, sizeof r);
  r.kind = MJCF_ORI_QUAT;
  mjcf_mulquat(r.v, f + 3, q);
  *o = r;
}

/* Eigenvalues w and eigenvectors (the columns of V) of a symmetric 3x3 matrix A, by cyclic Jacobi
 * rotations (converged to round-off in a few sweeps). */
void mjcf_eig3(const double A[9], double w[3], double V[9]) {
  double a[9];
  memcpy(a, A, sizeof a);
  for (int i = 0; i < 9; ++i) V[i] = i % 4 == 0 ? 1 : 0;
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5], diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-32 * diag || off == 0) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        const double apq = a[3 * p + q];
        if (apq == 0) continue;
        const double theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
        const double cs = 1 / sqrt(t * t + 1), sn = t * cs;
        for (int k = 0; k < 3; ++k) { /* a <- a J (columns p, q) */
          const double akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = cs * akp - sn * akq, a[3 * k + q] = sn * akp + cs * akq;
        }
        for (int k = 0; k < 3; ++k) { /* a <- J^T a (rows p, q) */
          const double apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = cs * apk - sn * aqk, a[3 * q + k] = sn * apk + cs * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = cs * vkp - sn * vkq, V[3 * k + q] = sn * vkp + cs * vkq;
        }
      }
  }
  for (int i = 0; i < 3; ++i) w[i] = a[4 * i];
}
