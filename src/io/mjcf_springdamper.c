/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_springdamper.c — a joint's springdamper="timeconst dampratio" made a stiffness and a damping at
 * compile time, as MuJoCo 2.2.2's compiler does after its other constants:
 *
 *   the joint's effective inertia  I = n / sum_i (M^-1)_ii   over its n dofs (M: the joint-space mass
 *                                                              matrix with armature, at qpos0)
 *   stiffness = I / (timeconst^2 dampratio^2),   damping (each dof) = 2 I / timeconst,
 *
 * so that the joint alone behaves as a mass-spring-damper with that time constant and damping ratio (the
 * same rule as the constraints' solref). The values replace the joint's stiffness and damping attributes.
 * M^-1's diagonal is MuJoCo's dof_invweight0 (its average over a free joint's translations and rotations
 * sums to the same total). grit simulates the result as any other spring: a spring on a ball or free joint
 * stays an error (mjcf_build.c). M comes from a model of the bodies and joints alone, built and compiled
 * here and then dropped: M does not depend on the geometries, actuators or constraints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/data.h"
#include "grit/dynamics.h"
#include "mjcf_internal.h"

static const double MJ_MINVAL = 1e-15; /* MuJoCo's mjMINVAL (mjtnum.h) */

/* Lower Cholesky factor of the n x n matrix A in place (row-major); 0 if it is not positive definite. */
static int cholesky(double *A, int n) {
  for (int j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (int k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    if (!(d > 0)) return 0;
    A[j * n + j] = sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / A[j * n + j];
    }
  }
  return 1;
}

/* (M^-1)_ii = |L^-1 e_i|^2 with M = L L^T: a forward solve from row i on (y, n numbers, is scratch). */
static double inverse_diagonal(const double *L, int n, int i, double *y) {
  double s = 0;
  for (int r = i; r < n; ++r) {
    double v = r == i ? 1 : 0;
    for (int k = i; k < r; ++k) v -= L[r * n + k] * y[k];
    y[r] = v / L[r * n + r];
    s += y[r] * y[r];
  }
  return s;
}

static int any_springdamper(const mjcf_ctx *c) {
  for (int j = 0; j < c->joints.n; ++j)
    if (MJCF_AT(c->joints, mjcf_joint, j)->springdamper[0] > 0) return 1;
  return 0;
}

/* The joint-space mass matrix at qpos0 of the bodies and joints (nv x nv, malloc'd) and the builder's
 * index of each joint; NULL (and an error on c) on failure. */
static double *mass_matrix(mjcf_ctx *c, const int *joint_start, const int *joint_list, int *grit_joint,
                           grit_model **model) {
  grit_builder *gb = NULL;
  grit_data *d = NULL;
  double *M = NULL;
  const int nw = c->info ? c->info->nwarnings : 0; /* the real build warns again */
  if (grit_builder_create(&gb) != GRIT_OK) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return NULL;
  }
  mjcf_build_bodies(c, gb, joint_start, joint_list, grit_joint);
  if (c->info) c->info->nwarnings = nw;
  grit_status s = GRIT_OK;
  if (c->status == GRIT_OK) {
    s = grit_builder_compile(gb, model);
    if (s != GRIT_OK) mjcf_fail(c, s, NULL, "springdamper: %s", grit_builder_last_error(gb));
  }
  if (c->status == GRIT_OK) {
    const int nv = grit_model_nv(*model);
    M = malloc(sizeof *M * ((size_t)nv * (size_t)nv + 1));
    s = M ? grit_data_create(*model, &d) : GRIT_ERR_OUT_OF_MEMORY;
    if (s == GRIT_OK) s = grit_mass_matrix(d, M);
    if (s != GRIT_OK) {
      mjcf_fail(c, s, NULL, "springdamper: the mass matrix at qpos0 could not be computed");
      free(M);
      M = NULL;
    }
  }
  grit_data_free(d);
  grit_builder_free(gb);
  return M;
}

void mjcf_springdamper(mjcf_ctx *c, const int *joint_start, const int *joint_list) {
  if (!any_springdamper(c)) return;
  grit_model *model = NULL;
  int *grit_joint = calloc((size_t)c->joints.n + 1, sizeof *grit_joint);
  double *M = grit_joint ? mass_matrix(c, joint_start, joint_list, grit_joint, &model) : NULL;
  if (!grit_joint) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
  const int nv = model ? grit_model_nv(model) : 0;
  double *y = M ? malloc(sizeof *y * ((size_t)nv + 1)) : NULL;
  if (M && !y) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
  if (y && !cholesky(M, nv))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, NULL, "springdamper: the mass matrix at qpos0 is not positive definite");
  for (int j = 0; j < c->joints.n && c->status == GRIT_OK; ++j) {
    mjcf_joint *J = MJCF_AT(c->joints, mjcf_joint, j);
    const double tc = J->springdamper[0], dr = J->springdamper[1];
    if (!(tc > 0 && dr > 0)) continue;
    const int g = grit_joint[j], adr = grit_model_joint_dofadr(model, g);
    const grit_joint_type t = grit_model_joint_type(model, g);
    const int n = t == GRIT_JOINT_FREE ? 6 : t == GRIT_JOINT_BALL ? 3 : 1;
    double invweight = 0;
    for (int i = 0; i < n; ++i) invweight += inverse_diagonal(M, nv, adr + i, y);
    const double inertia = n / fmax(MJ_MINVAL, invweight);
    J->stiffness = inertia / fmax(MJ_MINVAL, tc * tc * dr * dr);
    J->damping = 2 * inertia / fmax(MJ_MINVAL, tc);
  }
  free(y);
  free(M);
  free(grit_joint);
  grit_model_free(model);
}
