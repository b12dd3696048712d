/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_mujoco.c — the MJCF loader against MuJoCo 2.2.2's compiler (a reference peer, used by
 * this test only): the same files are loaded by both, and everything the loader computes is compared
 * with MuJoCo's compiled mjModel: sizes and addresses, options, qpos0, body frames (local, and world
 * poses at qpos0), masses, centres of mass and inertias (local, and in the world as the sum over the
 * MuJoCo bodies grit folds together), joint anchors, axes, limits, springs, damping and armature,
 * actuators, geometry types, sizes and world poses, contact filters, friction, keyframes, and the
 * mass matrix at qpos0.
 *
 * Tolerance 1e-12 (absolute for lengths of order 1 m and unit quaternions, relative to the largest
 * entry for masses and inertias): two double-precision evaluations of the same formulas. MuJoCo stores
 * inertias as principal moments and axes; where the inertia is not diagonal in a known frame
 * (fullinertia, or summed over several geometries) it diagonalizes it with mju_eig3, a Jacobi
 * iteration that stops once a rotation's cosine is within 1e-12 of 1 (angles below 1.4e-6 rad), so its
 * R diag R^T differs from the matrix it was given by up to ~1e-6 relative (1.9e-8 measured). grit keeps
 * the exact matrix. For those bodies (listed per file) the test runs mju_eig3 on grit's matrix and
 * requires MuJoCo's principal moments and axes to 1e-12, which shows that the input of the
 * diagonalization agrees; comparisons of the reconstructed matrices (world inertias, the mass matrix)
 * then allow 1e-6 relative.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

static const double TOL = 1e-12, TOL_EIG = 1e-6;

typedef struct deviations {
  double frame, mass, inertia_exact, inertia_eig, eig3_error, joint, geom, mass_matrix;
} deviations;

static deviations DEV; /* the largest deviations over all files, reported at the end */

static void track(double *max, double e) {
  if (e > *max) *max = e;
}

static double maxabs_diff(const double *a, const double *b, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i) e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

static double maxabs(const double *a, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i) e = fmax(e, fabs(a[i]));
  return e;
}

/* Distance between unit quaternions up to sign. */
static double quat_dist(const double *a, const double *b) {
  double p = 0, m = 0;
  for (int i = 0; i < 4; ++i) {
    p = fmax(p, fabs(a[i] - b[i]));
    m = fmax(m, fabs(a[i] + b[i]));
  }
  return fmin(p, m);
}

static void quat_to_mat(double *R, const double *q) {
  mju_quat2Mat(R, q);
}

/* R diag(d) R^T */
static void rotate_diag(double *I, const double *R, const double *d) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) I[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] + R[3 * i + 2] * d[2] * R[3 * j + 2];
}

/* R A R^T */
static void rotate_full(double *out, const double *R, const double *A) {
  double t[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) t[3 * i + j] = R[3 * i] * A[j] + R[3 * i + 1] * A[3 + j] + R[3 * i + 2] * A[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] = t[3 * i] * R[3 * j] + t[3 * i + 1] * R[3 * j + 1] + t[3 * i + 2] * R[3 * j + 2];
}

/* Adds mass m at com c with inertia I (about c, world) to an accumulated (M, C, J). */
typedef struct mass_props {
  double m, c[3], I[9];
} mass_props;

static void accumulate(mass_props *acc, double m, const double *c, const double *I) {
  if (m <= 0) return;
  const double M = acc->m + m;
  double C[3], J[9] = {0};
  for (int i = 0; i < 3; ++i) C[i] = (acc->m * acc->c[i] + m * c[i]) / M;
  const double *cs[2] = {acc->c, c}, ms[2] = {acc->m, m}, *Is[2] = {acc->I, I};
  for (int k = 0; k < 2; ++k) {
    double d[3] = {cs[k][0] - C[0], cs[k][1] - C[1], cs[k][2] - C[2]}, dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) J[3 * i + j] += Is[k][3 * i + j] + ms[k] * ((i == j) * dd - d[i] * d[j]);
  }
  acc->m = M;
  memcpy(acc->c, C, sizeof C);
  memcpy(acc->I, J, sizeof J);
}

static int in_list(const char *list, const char *name) {
  if (!list || !name) return 0;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

static mjModel *mujoco_load(const char *path) {
  char err[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(m, "MuJoCo rejected %s: %s", path, err);
  return m;
}

/* ------------------------------------------------------------------------- the comparison */

static void compare_bodies(const grit_model *gm, grit_data *gd, const mjModel *mm, const mjData *md,
                           const char *eig_bodies, const char *file) {
  const int nb = mm->nbody;
  int *map = calloc((size_t)nb, sizeof *map);
  for (int b = 1; b < nb; ++b) {
    const char *name = mj_id2name(mm, mjOBJ_BODY, b);
    cr_assert_not_null(name, "%s: test files name every body", file);
    int g = grit_model_body_index(gm, name);
    if (g < 0) { /* folded into its parent's grit body: only possible for welded bodies */
      cr_assert_eq(mm->body_jntnum[b], 0, "%s: body %s is missing in grit but has joints", file, name);
      g = map[mm->body_parentid[b]];
    }
    map[b] = g;
  }
  /* local frames and mass properties of the bodies grit kept as they are */
  for (int b = 1; b < nb; ++b) {
    const char *name = mj_id2name(mm, mjOBJ_BODY, b);
    const int p = mm->body_parentid[b];
    int g = grit_model_body_index(gm, name), folded_child = 0;
    for (int c = 1; c < nb; ++c) folded_child |= mm->body_parentid[c] == b && map[c] == g && g >= 0;
    const int parent_kept = p == 0 || grit_model_body_index(gm, mj_id2name(mm, mjOBJ_BODY, p)) >= 0;
    if (g < 0 || folded_child || !parent_kept) continue;
    double e = fmax(maxabs_diff(gm->body_pos + 3 * g, mm->body_pos + 3 * b, 3),
                    quat_dist(gm->body_quat + 4 * g, mm->body_quat + 4 * b));
    track(&DEV.frame, e);
    cr_assert(e <= TOL, "%s: body %s frame deviates by %.3g", file, name, e);
    e = fabs(gm->body_mass[g] - mm->body_mass[b]) / mm->body_mass[b];
    track(&DEV.mass, e);
    cr_assert(e <= TOL, "%s: body %s mass %.17g, MuJoCo %.17g", file, name, gm->body_mass[g], mm->body_mass[b]);
    e = maxabs_diff(gm->body_com + 3 * g, mm->body_ipos + 3 * b, 3);
    track(&DEV.frame, e);
    cr_assert(e <= TOL, "%s: body %s centre of mass deviates by %.3g", file, name, e);
    double R[9], I[9];
    quat_to_mat(R, mm->body_iquat + 4 * b);
    rotate_diag(I, R, mm->body_inertia + 3 * b);
    e = maxabs_diff(gm->body_inertia + 9 * g, I, 9) / maxabs(I, 9);
    if (!in_list(eig_bodies, name)) {
      track(&DEV.inertia_exact, e);
      cr_assert(e <= TOL, "%s: body %s inertia deviates by %.3g relative", file, name, e);
    } else { /* the same diagonalization of grit's matrix gives MuJoCo's moments and axes */
      track(&DEV.eig3_error, e);
      double val[3], vec[9], q[4];
      mju_eig3(val, vec, q, gm->body_inertia + 9 * g);
      e = fmax(maxabs_diff(val, mm->body_inertia + 3 * b, 3) / maxabs(val, 3), quat_dist(q, mm->body_iquat + 4 * b));
      track(&DEV.inertia_eig, e);
      cr_assert(e <= TOL, "%s: body %s principal inertia deviates by %.3g relative", file, name, e);
    }
  }
  /* world poses and world mass properties (grit's bodies against the MuJoCo bodies folded into them) */
  for (int g = 1; g < grit_model_nbody(gm); ++g) {
    mass_props acc;
    memset(&acc, 0, sizeof acc);
    int eig = 0, self = -1;
    for (int b = 1; b < nb; ++b) {
      if (map[b] != g) continue;
      double Iw[9];
      rotate_diag(Iw, md->ximat + 9 * b, mm->body_inertia + 3 * b);
      accumulate(&acc, mm->body_mass[b], md->xipos + 3 * b, Iw);
      eig |= in_list(eig_bodies, mj_id2name(mm, mjOBJ_BODY, b));
      if (!strcmp(mj_id2name(mm, mjOBJ_BODY, b), gm->body_name[g])) self = b;
    }
    cr_assert(self > 0, "%s: grit body %s has no MuJoCo body", file, gm->body_name[g]);
    double pos[3], quat[4], com[3], R[9], Iw[9];
    grit_body_pose(gd, g, pos, quat);
    grit_body_com(gd, g, com);
    double e = fmax(maxabs_diff(pos, md->xpos + 3 * self, 3), quat_dist(quat, md->xquat + 4 * self));
    track(&DEV.frame, e);
    cr_assert(e <= TOL, "%s: body %s world pose deviates by %.3g", file, gm->body_name[g], e);
    e = fabs(gm->body_mass[g] - acc.m) / acc.m;
    track(&DEV.mass, e);
    cr_assert(e <= TOL, "%s: body %s mass %.17g, MuJoCo (summed) %.17g", file, gm->body_name[g], gm->body_mass[g], acc.m);
    e = maxabs_diff(com, acc.c, 3);
    track(&DEV.frame, e);
    cr_assert(e <= TOL, "%s: body %s world centre of mass deviates by %.3g", file, gm->body_name[g], e);
    quat_to_mat(R, quat);
    rotate_full(Iw, R, gm->body_inertia + 9 * g);
    e = maxabs_diff(Iw, acc.I, 9) / maxabs(acc.I, 9);
    track(eig ? &DEV.eig3_error : &DEV.inertia_exact, e);
    cr_assert(e <= (eig ? TOL_EIG : TOL), "%s: body %s world inertia deviates by %.3g relative", file,
              gm->body_name[g], e);
  }
  free(map);
}

static void compare_joints_actuators(const grit_model *gm, const mjModel *mm, const char *file) {
  cr_assert_eq(grit_model_njoint(gm), mm->njnt, "%s: %d joints, MuJoCo %d", file, grit_model_njoint(gm), mm->njnt);
  for (int j = 0; j < mm->njnt; ++j) {
    cr_assert_eq(gm->jnt_type[j], mm->jnt_type[j], "%s: joint %d type", file, j); /* same numbering */
    cr_assert_eq(gm->jnt_qposadr[j], mm->jnt_qposadr[j], "%s: joint %d qpos address", file, j);
    cr_assert_eq(gm->jnt_dofadr[j], mm->jnt_dofadr[j], "%s: joint %d dof address", file, j);
    const char *name = mj_id2name(mm, mjOBJ_JOINT, j);
    if (name) cr_assert_eq(grit_model_joint_index(gm, name), j, "%s: joint %s index", file, name);
    if (gm->jnt_type[j] == GRIT_JOINT_FREE) continue;
    double e = maxabs_diff(gm->jnt_pos + 3 * j, mm->jnt_pos + 3 * j, 3);
    if (gm->jnt_type[j] != GRIT_JOINT_BALL) {
      e = fmax(e, maxabs_diff(gm->jnt_axis + 3 * j, mm->jnt_axis + 3 * j, 3));
      cr_assert_eq(gm->jnt_limited[j], mm->jnt_limited[j], "%s: joint %d limited", file, j);
      if (mm->jnt_limited[j]) e = fmax(e, maxabs_diff(gm->jnt_range + 2 * j, mm->jnt_range + 2 * j, 2));
      e = fmax(e, fabs(gm->jnt_stiffness[j] - mm->jnt_stiffness[j]));
      e = fmax(e, fabs(gm->jnt_springref[j] - mm->qpos_spring[mm->jnt_qposadr[j]]));
    }
    track(&DEV.joint, e);
    cr_assert(e <= TOL, "%s: joint %d deviates by %.3g", file, j, e);
  }
  for (int i = 0; i < mm->nv; ++i) {
    cr_assert(fabs(gm->dof_damping[i] - mm->dof_damping[i]) <= TOL, "%s: dof %d damping", file, i);
    cr_assert(fabs(gm->dof_armature[i] - mm->dof_armature[i]) <= TOL, "%s: dof %d armature", file, i);
  }
  cr_assert_eq(grit_model_nu(gm), mm->nu, "%s: nu", file);
  for (int a = 0; a < mm->nu; ++a) {
    cr_assert_eq(gm->act_jnt[a], mm->actuator_trnid[2 * a], "%s: actuator %d joint", file, a);
    const double gear = mm->actuator_gear[6 * a];
    cr_assert(fabs(gm->act_gear[a] - gear) <= TOL * fabs(gear), "%s: actuator %d gear %.17g, MuJoCo %.17g", file, a,
              gm->act_gear[a], gear);
    cr_assert_eq(gm->act_dyntype[a], mm->actuator_dyntype[a], "%s: actuator %d dyntype", file, a);
    cr_assert_eq(gm->act_gaintype[a], mm->actuator_gaintype[a], "%s: actuator %d gaintype", file, a);
    cr_assert_eq(gm->act_biastype[a], mm->actuator_biastype[a], "%s: actuator %d biastype", file, a);
    cr_assert(maxabs_diff(gm->act_gainprm + 3 * a, mm->actuator_gainprm + mjNGAIN * a, 3) <= TOL, "%s: actuator %d gainprm",
              file, a);
    if (mm->actuator_biastype[a] != mjBIAS_NONE)
      cr_assert(maxabs_diff(gm->act_biasprm + 3 * a, mm->actuator_biasprm + mjNBIAS * a, 3) <= TOL,
                "%s: actuator %d biasprm", file, a);
    cr_assert_eq(gm->act_forcelimited[a], mm->actuator_forcelimited[a], "%s: actuator %d forcelimited", file, a);
    cr_assert_eq(gm->act_actlimited[a], mm->actuator_actlimited[a], "%s: actuator %d actlimited", file, a);
    if (mm->actuator_dyntype[a] == mjDYN_FILTER)
      cr_assert(fabs(gm->act_dynprm[3 * a] - mm->actuator_dynprm[mjNDYN * a]) <= TOL, "%s: actuator %d dynprm", file, a);
    if (mm->actuator_forcelimited[a])
      cr_assert(maxabs_diff(gm->act_forcerange + 2 * a, mm->actuator_forcerange + 2 * a, 2) <= TOL,
                "%s: actuator %d forcerange", file, a);
    if (mm->actuator_actlimited[a])
      cr_assert(maxabs_diff(gm->act_actrange + 2 * a, mm->actuator_actrange + 2 * a, 2) <= TOL,
                "%s: actuator %d actrange", file, a);
    cr_assert_eq(gm->act_limited[a], mm->actuator_ctrllimited[a], "%s: actuator %d ctrllimited", file, a);
    if (mm->actuator_ctrllimited[a])
      cr_assert(maxabs_diff(gm->act_range + 2 * a, mm->actuator_ctrlrange + 2 * a, 2) <= TOL, "%s: actuator %d range",
                file, a);
  }
}

static void compare_geoms(const grit_model *gm, grit_data *gd, const mjModel *mm, const mjData *md, const char *file) {
  /* grit leaves out the visual geometries (contype = conaffinity = 0): the others, in the same order */
  int ncolliding = 0;
  for (int g = 0; g < mm->ngeom; ++g) ncolliding += mm->geom_contype[g] || mm->geom_conaffinity[g];
  cr_assert_eq(grit_model_ngeom(gm), ncolliding, "%s: %d geoms, MuJoCo %d colliding", file, grit_model_ngeom(gm),
               ncolliding);
  static const int type_of[] = {[mjGEOM_PLANE] = GRIT_GEOM_PLANE,         [mjGEOM_SPHERE] = GRIT_GEOM_SPHERE,
                                [mjGEOM_CAPSULE] = GRIT_GEOM_CAPSULE,     [mjGEOM_ELLIPSOID] = GRIT_GEOM_ELLIPSOID,
                                [mjGEOM_CYLINDER] = GRIT_GEOM_CYLINDER,   [mjGEOM_BOX] = GRIT_GEOM_BOX};
  static const int nsize[] = {[GRIT_GEOM_PLANE] = 0,    [GRIT_GEOM_SPHERE] = 1, [GRIT_GEOM_CAPSULE] = 2,
                              [GRIT_GEOM_BOX] = 3,      [GRIT_GEOM_CYLINDER] = 2, [GRIT_GEOM_ELLIPSOID] = 3};
  for (int g = 0, gg = -1; g < mm->ngeom; ++g) {
    if (!mm->geom_contype[g] && !mm->geom_conaffinity[g]) continue;
    ++gg;
    cr_assert(mm->geom_type[g] <= mjGEOM_BOX, "%s: geom %d has a type this test does not map", file, g);
    const grit_shape *sh = &gm->geom_shape[gg];
    cr_assert_eq((int)sh->type, type_of[mm->geom_type[g]], "%s: geom %d type", file, g);
    double e = maxabs_diff(sh->size, mm->geom_size + 3 * g, nsize[sh->type]);
    /* world pose: the grit body's pose composed with the geometry's frame in it */
    double bp[3], bq[4], R[9], p[3], q[4];
    grit_body_pose(gd, gm->geom_body[gg], bp, bq);
    quat_to_mat(R, bq);
    mju_mulMatVec(p, R, gm->geom_pos + 3 * gg, 3, 3);
    for (int i = 0; i < 3; ++i) p[i] += bp[i];
    mju_mulQuat(q, bq, gm->geom_quat + 4 * gg);
    double xq[4];
    mju_mat2Quat(xq, md->geom_xmat + 9 * g);
    e = fmax(e, maxabs_diff(p, md->geom_xpos + 3 * g, 3));
    e = fmax(e, quat_dist(q, xq) * (sh->type == GRIT_GEOM_SPHERE ? 0 : 1)); /* a sphere's axes are irrelevant */
    track(&DEV.geom, e);
    cr_assert(e <= TOL, "%s: geom %d (%s) deviates by %.3g", file, g, mj_id2name(mm, mjOBJ_GEOM, g), e);
    if (mm->geom_condim[g] > 1)
      cr_assert(gm->geom_friction[gg] == mm->geom_friction[3 * g], "%s: geom %d friction", file, g);
    cr_assert_eq((int)gm->geom_contype[gg], mm->geom_contype[g], "%s: geom %d contype", file, g);
    cr_assert_eq((int)gm->geom_conaffinity[gg], mm->geom_conaffinity[g], "%s: geom %d conaffinity", file, g);
  }
}

static void compare_keys(const grit_mjcf_info *info, const mjModel *mm, const char *file) {
  cr_assert_eq(info->nkey, mm->nkey, "%s: %d keyframes, MuJoCo %d", file, info->nkey, mm->nkey);
  for (int k = 0; k < mm->nkey; ++k) {
    const grit_mjcf_key *key = &info->keys[k];
    cr_assert(key->time == mm->key_time[k], "%s: key %d time", file, k);
    cr_assert(maxabs_diff(key->qpos, mm->key_qpos + k * mm->nq, mm->nq) <= 1e-15, "%s: key %d qpos", file, k);
    cr_assert(maxabs_diff(key->qvel, mm->key_qvel + k * mm->nv, mm->nv) == 0, "%s: key %d qvel", file, k);
    if (mm->nu) cr_assert(maxabs_diff(key->ctrl, mm->key_ctrl + k * mm->nu, mm->nu) == 0, "%s: key %d ctrl", file, k);
    const char *name = mj_id2name(mm, mjOBJ_KEY, k);
    if (name) cr_assert_eq(grit_mjcf_key_index(info, name), k, "%s: key %s", file, name);
  }
}

/* Loads `rel` (relative to the source tree) in both and compares everything. */
static void compare_file(const char *rel, const char *eig_bodies) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GRIT_SOURCE_DIR, rel);
  grit_model *gm;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &gm, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(info.nwarnings, 0, "%s: %d warnings, the first: %s", rel, info.nwarnings, info.warnings[0]);
  mjModel *mm = mujoco_load(path);
  cr_assert_eq(grit_model_nq(gm), mm->nq, "%s: nq", rel);
  cr_assert_eq(grit_model_nv(gm), mm->nv, "%s: nv", rel);
  grit_options o = grit_model_options(gm);
  cr_assert(o.timestep == mm->opt.timestep, "%s: timestep", rel);
  cr_assert(maxabs_diff(o.gravity, mm->opt.gravity, 3) == 0, "%s: gravity", rel);
  double *q0 = calloc((size_t)mm->nq, sizeof *q0);
  grit_model_qpos0(gm, q0);
  double e = maxabs_diff(q0, mm->qpos0, mm->nq);
  track(&DEV.frame, e);
  cr_assert(e <= TOL, "%s: qpos0 deviates by %.3g", rel, e);
  free(q0);

  mjData *md = mj_makeData(mm);
  mju_copy(md->qpos, mm->qpos0, mm->nq);
  mj_forward(mm, md);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  cr_assert_eq(grit_forward_kinematics(gd), GRIT_OK);
  compare_bodies(gm, gd, mm, md, eig_bodies, rel);
  compare_joints_actuators(gm, mm, rel);
  compare_geoms(gm, gd, mm, md, rel);
  compare_keys(&info, mm, rel);

  /* the mass matrix at qpos0: every frame, anchor, axis and inertia together */
  const int nv = mm->nv;
  double *M = calloc((size_t)(nv * nv) + 1, sizeof *M), *Mm = calloc((size_t)(nv * nv) + 1, sizeof *Mm);
  cr_assert_eq(grit_mass_matrix(gd, M), GRIT_OK);
  mj_fullM(mm, Mm, md->qM);
  e = nv ? maxabs_diff(M, Mm, nv * nv) / maxabs(Mm, nv * nv) : 0;
  track(&DEV.mass_matrix, e);
  cr_assert(e <= (eig_bodies ? TOL_EIG : 1e-11), "%s: mass matrix deviates by %.3g relative", rel, e);
  cr_log_info("%s: nq %d, nv %d, %d bodies (MuJoCo %d), mass matrix deviation %.2e", rel, mm->nq, nv,
              grit_model_nbody(gm), mm->nbody, e);
  free(M), free(Mm);
  grit_data_free(gd);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
}

Test(mjcf_mujoco, defaults_classes_and_orientations) { compare_file("tests/mjcf/defaults.xml", "b"); }

Test(mjcf_mujoco, inertia_from_geometries_and_inertial) {
  compare_file("tests/mjcf/inertia.xml", "several explicit_full chain2");
}

Test(mjcf_mujoco, general_actuators_and_folded_bodies) { compare_file("tests/mjcf/general.xml", "hand"); }

/* Every actuator kind and its class (issue 25): types, gains, biases, limits as MuJoCo compiles them. */
Test(mjcf_mujoco, actuator_kinds_and_classes) { compare_file("tests/mjcf/actuators.xml", NULL); }

Test(mjcf_mujoco, example_arm7) { compare_file("examples/models/arm7.xml", "link1 link2 link3 link6 link7"); }

/* The Kinova Gen3 pushing a ball: every link's URDF inertia is a full matrix. */
#define GEN3_FULL_INERTIA_BODIES \
  "shoulder_link half_arm_1_link half_arm_2_link forearm_link spherical_wrist_1_link spherical_wrist_2_link " \
  "bracelet_link"

Test(mjcf_mujoco, example_arm_push_ball) { compare_file("examples/models/arm_push_ball.xml", GEN3_FULL_INERTIA_BODIES); }

Test(mjcf_mujoco, example_scenes) {
  compare_file("examples/models/falling_sphere.xml", NULL);
  compare_file("examples/models/sliding_box.xml", NULL);
  compare_file("examples/models/sliding_rod.xml", NULL);
  compare_file("examples/models/clutter.xml", NULL);
  compare_file("examples/models/coin_hydro.xml", NULL); /* grit_hydro_modulus:coin is MuJoCo user data */
}

/* grit's parameters are <custom> elements MuJoCo 2.2.2 loads unchanged (and ignores). */
Test(mjcf_mujoco, custom_contact_parameters_load_in_mujoco) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/models/falling_sphere.xml", GRIT_SOURCE_DIR);
  mjModel *mm = mujoco_load(path);
  int id = mj_name2id(mm, mjOBJ_NUMERIC, "grit_stiffness");
  cr_assert(id >= 0);
  cr_assert_eq(mm->numeric_data[mm->numeric_adr[id]], 1e7);
  id = mj_name2id(mm, mjOBJ_TEXT, "grit_contact_model");
  cr_assert(id >= 0);
  cr_assert_str_eq(mm->text_data + mm->text_adr[id], "lagged");
  mj_deleteModel(mm);
  grit_model *gm;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &gm, &info, msg), GRIT_OK, "%s", msg);
  grit_geom_def g;
  cr_assert_eq(grit_model_geom(gm, 1, &g), GRIT_OK);
  cr_assert_eq(g.stiffness, 1e7);
  cr_assert_eq(g.dissipation, 500);
  cr_assert_eq(g.tau_d, 1e-3);
  cr_assert_eq(g.friction, 0.5);
  cr_assert_eq(info.settings.contact_model, GRIT_CONTACT_LAGGED);
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
}

/* The conveyor belt is a plane on a moving body: grit supports it, MuJoCo 2.2.2 does not. */
Test(mjcf_mujoco, conveyor_plane_on_a_moving_body_is_grit_only) {
  char path[1024], err[1000] = "";
  snprintf(path, sizeof path, "%s/examples/models/conveyor.xml", GRIT_SOURCE_DIR);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_null(mm, "MuJoCo now accepts planes on moving bodies: compare conveyor.xml too");
  cr_assert(strstr(err, "plane") != NULL, "%s", err);
  grit_model *gm;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &gm, NULL, msg), GRIT_OK, "%s", msg);
  grit_model_free(gm);
}

/* Runs last (Criterion orders tests by name within a suite): the measured agreement. */
Test(mjcf_mujoco, zz_report) {
  compare_file("tests/mjcf/defaults.xml", "b");
  compare_file("tests/mjcf/inertia.xml", "several explicit_full chain2");
  compare_file("tests/mjcf/general.xml", "hand");
  compare_file("examples/models/arm7.xml", "link1 link2 link3 link6 link7");
  compare_file("examples/models/clutter.xml", NULL);
  compare_file("examples/models/arm_push_ball.xml", GEN3_FULL_INERTIA_BODIES);
  cr_log_info("largest deviations from MuJoCo 2.2.2: frames and centres of mass %.2e, masses %.2e (relative), "
              "inertias %.2e (relative; where MuJoCo diagonalizes: moments and axes %.2e, its reconstruction error "
              "%.2e), joints %.2e, geometries %.2e, mass matrix %.2e (relative)",
              DEV.frame, DEV.mass, DEV.inertia_exact, DEV.inertia_eig, DEV.eig3_error, DEV.joint, DEV.geom,
              DEV.mass_matrix);
}

/* Mesh files (an OBJ box with OBJ's text coordinates, and a binary STL cube, offset, turned, with a
 * sphere beside one): both loaders read the same files and compute the masses from the triangles.
 * MuJoCo holds mesh vertices in single precision, so they agree to float round-off: 1e-6 relative on
 * mass, centre and the principal moments (compared through the trace and determinant; measured 2e-7). */
Test(mjcf_mujoco, mesh_files_and_their_masses) {
  char dir[] = "/tmp/grit_mjmesh_XXXXXX", path[1200];
  cr_assert_not_null(mkdtemp(dir));
  static const double V[8][3] = {{-.05, -.05, -.05}, {-.05, -.05, .05}, {-.05, .05, -.05}, {-.05, .05, .05},
                                 {.05, -.05, -.05},  {.05, -.05, .05},  {.05, .05, -.05},  {.05, .05, .05}};
  static const int F[12][3] = {{0, 1, 3}, {0, 3, 2}, {4, 6, 7}, {4, 7, 5}, {0, 4, 5}, {0, 5, 1},
                               {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 5, 7}, {1, 7, 3}};
  snprintf(path, sizeof path, "%s/box.obj", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  for (int i = 0; i < 8; ++i) fprintf(f, "v %.17g %.17g %.17g\n", V[i][0], V[i][1], V[i][2]);
  for (int t = 0; t < 12; ++t) fprintf(f, "f %d %d %d\n", F[t][0] + 1, F[t][1] + 1, F[t][2] + 1);
  fclose(f);
  snprintf(path, sizeof path, "%s/cube.stl", dir);
  f = fopen(path, "wb");
  cr_assert_not_null(f);
  unsigned char head[84] = {0};
  head[80] = 12;
  fwrite(head, 1, 84, f);
  for (int t = 0; t < 12; ++t) {
    float rec[12] = {0};
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j) rec[3 + 3 * k + j] = (float)V[F[t][k]][j];
    fwrite(rec, sizeof(float), 12, f); /* little-endian floats on this machine, as STL wants */
    fputc(0, f), fputc(0, f);
  }
  fclose(f);
  static const char *const XML =
      "<mujoco><asset><mesh name='c' file='box.obj' scale='1 2 3'/><mesh name='s' file='cube.stl'/></asset><worldbody>\n"
      "<body name='m'><freejoint/><geom type='mesh' mesh='c' pos='.1 .2 .3' euler='30 40 50' density='700'/>"
      "<geom size='.05' pos='-.2 0 0'/></body>\n"
      "<body name='st' pos='1 0 0'><freejoint/><geom type='mesh' mesh='s' pos='.05 0 0' euler='10 0 20'/></body>\n"
      "</worldbody></mujoco>\n";
  snprintf(path, sizeof path, "%s/model.xml", dir);
  f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(XML, f);
  fclose(f);
  mjModel *mm = mujoco_load(path);
  grit_model *gm = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &gm, &info, msg), GRIT_OK, "%s", msg);
  for (int b = 1; b < mm->nbody; ++b) {
    const double *I = gm->body_inertia + 9 * b, *p = mm->body_inertia + 3 * b;
    const double tr = I[0] + I[4] + I[8], det = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
                                                I[2] * (I[3] * I[7] - I[4] * I[6]);
    cr_assert(fabs(gm->body_mass[b] - mm->body_mass[b]) <= 1e-6 * mm->body_mass[b], "body %d mass %.12g vs %.12g", b,
              gm->body_mass[b], mm->body_mass[b]);
    for (int i = 0; i < 3; ++i)
      cr_assert(fabs(gm->body_com[3 * b + i] - mm->body_ipos[3 * b + i]) <= 1e-7, "body %d centre %d", b, i);
    cr_assert(fabs(tr - (p[0] + p[1] + p[2])) <= 1e-6 * tr, "body %d trace %.12g vs %.12g", b, tr, p[0] + p[1] + p[2]);
    cr_assert(fabs(det - p[0] * p[1] * p[2]) <= 3e-6 * det, "body %d determinant %.12g vs %.12g", b, det, p[0] * p[1] * p[2]);
  }
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
  mj_deleteModel(mm);
  const char *files[] = {"box.obj", "cube.stl", "model.xml"};
  for (int i = 0; i < 3; ++i) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    remove(path);
  }
  remove(dir);
}
