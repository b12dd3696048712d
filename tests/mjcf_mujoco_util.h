/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_mujoco_util.h — shared by the tests that run a model file in grit and in MuJoCo 2.2.2 side by side
 * (test_mjcf_real.c, test_mjcf_menagerie.c): the state error, and free motion only in both. */
#ifndef GRIT_TESTS_MJCF_MUJOCO_UTIL_H
#define GRIT_TESTS_MJCF_MUJOCO_UTIL_H

#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_internal.h"

/* MuJoCo's model of an MJCF text (2.2.2 reads files: through a temporary one); NULL with err on failure. */
static inline mjModel *mjcmp_load_text(const char *xml, char *err, int nerr) {
  char dir[] = "/tmp/grit_mjcmp_XXXXXX", path[64];
  if (!mkdtemp(dir)) return NULL;
  snprintf(path, sizeof path, "%s/m.xml", dir);
  FILE *f = fopen(path, "w");
  mjModel *mm = NULL;
  if (f) {
    fputs(xml, f);
    fclose(f);
    mm = mj_loadXML(path, NULL, err, nerr);
    remove(path);
  }
  rmdir(dir);
  return mm;
}

/* Max over joints of the coordinate error (quaternions up to sign) and of the velocity error. */
static inline void mjcmp_state_error(const mjModel *mm, const mjData *md, const double *q, const double *v,
                                     double *eq, double *ev) {
  *eq = *ev = 0;
  for (int j = 0; j < mm->njnt; ++j) {
    const int a = mm->jnt_qposadr[j], t = mm->jnt_type[j];
    const int lin = t == mjJNT_FREE ? 3 : 0, quat = t == mjJNT_FREE || t == mjJNT_BALL;
    for (int i = 0; i < lin; ++i) *eq = fmax(*eq, fabs(q[a + i] - md->qpos[a + i]));
    if (quat) {
      double p = 0, m = 0;
      for (int i = 0; i < 4; ++i) {
        p = fmax(p, fabs(q[a + lin + i] - md->qpos[a + lin + i]));
        m = fmax(m, fabs(q[a + lin + i] + md->qpos[a + lin + i]));
      }
      *eq = fmax(*eq, fmin(p, m));
    } else {
      *eq = fmax(*eq, fabs(q[a] - md->qpos[a]));
    }
  }
  for (int i = 0; i < mm->nv; ++i) *ev = fmax(*ev, fabs(v[i] - md->qvel[i]));
}

/* Everything the comparison leaves out, off in both: contact, gravity, limits, actuation, equality
 * constraints, joint and tendon friction, joint and tendon springs, tendon damping, fluid forces; MuJoCo
 * integrates with Euler. Joint damping and armature stay (both integrate damping implicitly). */
static inline void mjcmp_free_motion_only(mjModel *mm, grit_model *gm) {
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_GRAVITY | mjDSBL_LIMIT | mjDSBL_ACTUATION | mjDSBL_EQUALITY |
                          mjDSBL_FRICTIONLOSS;
  mm->opt.integrator = mjINT_EULER;
  mm->opt.density = mm->opt.viscosity = 0;
  for (int j = 0; j < mm->njnt; ++j) mm->jnt_stiffness[j] = 0;
  for (int t = 0; t < mm->ntendon; ++t) mm->tendon_stiffness[t] = mm->tendon_damping[t] = 0;
  memset(gm->opt.gravity, 0, sizeof gm->opt.gravity);
  gm->opt.density = gm->opt.viscosity = 0;
  for (int g = 0; g < gm->ngeom; ++g) gm->geom_contype[g] = gm->geom_conaffinity[g] = 0;
  gm->npair = 0;
  gm->neq = 0;
  for (int j = 0; j < gm->njnt; ++j) gm->jnt_limited[j] = 0, gm->jnt_stiffness[j] = 0;
  for (int i = 0; i < gm->nv; ++i) gm->dof_frictionloss[i] = 0;
  for (int t = 0; t < gm->ntendon; ++t)
    gm->ten_limited[t] = 0, gm->ten_stiffness[t] = gm->ten_damping[t] = gm->ten_frictionloss[t] = 0;
  for (int a = 0; a < gm->nu; ++a) gm->act_gear[a] = 0;
}

/* 1 s of both from the same nonzero velocity (v_i = 0.5 sin(1 + i)) at MuJoCo's time step: the data
 * after it into *pmd and *pgd (the caller frees them); the number of steps is returned. */
static inline int mjcmp_free_motion_run(const mjModel *mm, const grit_model *gm, mjData **pmd, grit_data **pgd) {
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  double *v0 = malloc(sizeof(double) * (size_t)mm->nv + 1);
  cr_assert(md && v0);
  for (int i = 0; i < mm->nv; ++i) v0[i] = 0.5 * sin(1.0 + i);
  mju_copy(md->qvel, v0, mm->nv);
  cr_assert_eq(grit_data_set_qvel(gd, v0, gm->nv), GRIT_OK);
  free(v0);
  const int steps = (int)lround(1.0 / mm->opt.timestep);
  for (int k = 0; k < steps; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
  }
  *pmd = md, *pgd = gd;
  return steps;
}

#endif
