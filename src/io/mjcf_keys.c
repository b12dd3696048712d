/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_keys.c — <keyframe> keys checked against the compiled model and handed to the caller's info,
 * completed as MuJoCo completes them (qpos0, zero velocity and control, unit quaternions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/model.h"
#include "mjcf_internal.h"

static const double MJ_MINVAL = 1e-15; /* MuJoCo's mjMINVAL (mjtnum.h) */

/* The keyframes' sizes must match the model (MuJoCo counts every actuator of the file). */
void mjcf_keys_check(mjcf_ctx *c, const grit_model *m) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  for (int k = 0; k < c->keys.n && c->status == GRIT_OK; ++k) {
    const mjcf_keyframe *K = MJCF_AT(c->keys, mjcf_keyframe, k);
    char what[96];
    if (K->nqpos && K->nqpos != nq) {
      snprintf(what, sizeof what, "qpos has %d numbers, the model has nq = %d", K->nqpos, nq);
      mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "key", K->file, K->line, what, 0);
    } else if (K->nqvel && K->nqvel != nv) {
      snprintf(what, sizeof what, "qvel has %d numbers, the model has nv = %d", K->nqvel, nv);
      mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "key", K->file, K->line, what, 0);
    } else if (K->nctrl && K->nctrl != c->acts.n) {
      snprintf(what, sizeof what, "ctrl has %d numbers, the file has %d actuators", K->nctrl, c->acts.n);
      mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "key", K->file, K->line, what, 0);
    } else if (K->nact && K->nact != grit_model_na(m)) {
      snprintf(what, sizeof what, "act has %d numbers, the model has na = %d", K->nact, grit_model_na(m));
      mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "key", K->file, K->line, what, 0);
    }
    for (int j = 0; j < grit_model_njoint(m) && K->nqpos && c->status == GRIT_OK; ++j) {
      const int t = grit_model_joint_type(m, j);
      if (t != GRIT_JOINT_FREE && t != GRIT_JOINT_BALL) continue;
      const double *q = K->qpos + grit_model_joint_qposadr(m, j) + (t == GRIT_JOINT_FREE ? 3 : 0);
      if (!isfinite(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]))
        mjcf_fail_at(c, GRIT_ERR_NOT_FINITE, "key", K->file, K->line, "a quaternion of qpos overflows", 0);
    }
  }
}

/* Keyframes into the info, completed with qpos0, zero velocity and zero control. */
void mjcf_keys_make(mjcf_ctx *c, const grit_model *m) {
  grit_mjcf_info *info = c->info;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  info->nq = nq, info->nv = nv, info->nu = nu;
  const int na = grit_model_na(m);
  info->na = na;
  if (c->keys.n == 0) return;
  info->keys = calloc((size_t)c->keys.n, sizeof *info->keys);
  if (!info->keys) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return;
  }
  for (int k = 0; k < c->keys.n; ++k) {
    const mjcf_keyframe *K = MJCF_AT(c->keys, mjcf_keyframe, k);
    grit_mjcf_key *out = &info->keys[k];
    info->nkey = k + 1;
    out->qpos = calloc((size_t)nq + 1, sizeof(double));
    out->qvel = calloc((size_t)nv + 1, sizeof(double));
    out->ctrl = nu ? calloc((size_t)nu, sizeof(double)) : NULL;
    out->act = na ? calloc((size_t)na, sizeof(double)) : NULL;
    if (!out->qpos || !out->qvel || (nu && !out->ctrl) || (na && !out->act)) {
      mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
      return;
    }
    if (K->name) snprintf(out->name, sizeof out->name, "%s", K->name);
    out->time = K->time;
    grit_model_qpos0(m, out->qpos);
    if (K->nqpos) memcpy(out->qpos, K->qpos, sizeof(double) * (size_t)nq);
    for (int j = 0; j < grit_model_njoint(m); ++j) { /* unit quaternions, as mju_normalize4 makes them */
      const int t = grit_model_joint_type(m, j);
      if (t != GRIT_JOINT_FREE && t != GRIT_JOINT_BALL) continue;
      double *q = out->qpos + grit_model_joint_qposadr(m, j) + (t == GRIT_JOINT_FREE ? 3 : 0);
      const double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (norm < MJ_MINVAL) {
        q[0] = 1, q[1] = q[2] = q[3] = 0;
      } else {
        const double inv = 1 / norm;
        for (int i = 0; i < 4; ++i) q[i] *= inv;
      }
    }
    if (K->nqvel) memcpy(out->qvel, K->qvel, sizeof(double) * (size_t)nv);
    for (int a = 0, u = 0; a < K->nctrl; ++a)
      if (MJCF_AT(c->acts, mjcf_actuator, a)->supported && u < nu) out->ctrl[u++] = K->ctrl[a];
    if (K->nact) memcpy(out->act, K->act, sizeof(double) * (size_t)na);
  }
}
