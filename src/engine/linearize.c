/* SPDX-License-Identifier: Apache-2.0 */
/* linearize.c — one step and its Jacobians from a given state and control (grit/linearize.h). */
#include <string.h>

#include "data_internal.h"
#include "grit/derivatives.h"
#include "grit/dynamics.h"
#include "grit/linearize.h"
#include "grit/step.h"
#include "status_internal.h"

/* Puts back the state, controls and time saved at the start of grit_linearize. The saved state was
 * valid data (it was the data's own), so no check is needed; the kinematics are refreshed because
 * the setters and the step recomputed them for the state being abandoned. */
static void restore(grit_data *d, double t) {
  const grit_model *m = d->model;
  memcpy(d->qpos, d->qsave, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, d->vsave, sizeof(double) * (size_t)m->nv);
  if (m->nu > 0) memcpy(d->ctrl, d->usave, sizeof(double) * (size_t)m->nu);
  if (m->na > 0) memcpy(d->act, d->actsave, sizeof(double) * (size_t)m->na);
  d->time = t;
  /* A step that succeeded before a failure in the derivatives left its record: it no longer matches
   * the data's state, so it is dropped, exactly as a failed grit_step drops the previous one. */
  d->has_prev = 0;
  grit_forward_kinematics(d);
}

grit_status grit_linearize(grit_data *d, const double *x, const double *u, double *A, double *B) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  if (!x) return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "linearize: the state x is NULL");
  if (!u && m->nu > 0)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "linearize: the control u is NULL (nu = %d)", m->nu);
  memcpy(d->qsave, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->vsave, d->qvel, sizeof(double) * (size_t)m->nv);
  if (m->nu > 0) memcpy(d->usave, d->ctrl, sizeof(double) * (size_t)m->nu);
  if (m->na > 0) memcpy(d->actsave, d->act, sizeof(double) * (size_t)m->na);
  const double t0 = d->time;

  /* Each setter checks its input and changes nothing on error; the message it wrote is kept, with the
   * step's or the derivatives' own, prefixed so that the caller knows which stage failed. */
  const char *stage = "state";
  grit_status s = grit_data_set_qpos(d, x, m->nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, x + m->nq, m->nv);
  if (s == GRIT_OK && m->na > 0) s = grit_data_set_act(d, x + m->nq + m->nv, m->na);
  if (s == GRIT_OK && m->nu > 0) {
    stage = "control";
    s = grit_data_set_ctrl(d, u, m->nu);
  }
  if (s == GRIT_OK) {
    stage = "step";
    s = grit_step(d);
  }
  if (s == GRIT_OK && (A || B)) {
    stage = "derivatives";
    s = grit_step_derivatives(d, A, B, NULL, 0, NULL);
  }
  if (s != GRIT_OK) {
    char inner[GRIT_MESSAGE_SIZE];
    memcpy(inner, d->message, sizeof inner);
    restore(d, t0);
    return grit_set_error(d->message, s, "linearize: %s: %s", stage, inner);
  }
  return GRIT_OK;
}
