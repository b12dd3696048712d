/* SPDX-License-Identifier: Apache-2.0 */
/* grit_dynamics.c — grit's step and its derivatives as iLQR dynamics (grit_ilqr/grit_dynamics.h). */
#include "grit_ilqr/grit_dynamics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct grit_ilqr_grit {
  const grit_model *model;
  int horizon, nq, nv, nu;
  grit_data **data; /* 2 x horizon: data[slot * horizon + k] */
  char msg[GRIT_MESSAGE_SIZE];
};

void grit_ilqr_grit_free(grit_ilqr_grit *a) {
  if (!a) return;
  if (a->data)
    for (int i = 0; i < 2 * a->horizon; ++i) grit_data_free(a->data[i]);
  free(a->data);
  free(a);
}

grit_status grit_ilqr_grit_create(const grit_model *model, int horizon, const grit_step_settings *settings,
                                  grit_ilqr_grit **out, char *msg) {
  if (msg) msg[0] = 0;
  if (!out || !model || horizon < 1) {
    if (msg) snprintf(msg, GRIT_MESSAGE_SIZE, "need a model, an output pointer and a horizon >= 1");
    return GRIT_ERR_INVALID_ARGUMENT;
  }
  *out = NULL;
  grit_ilqr_grit *a = calloc(1, sizeof *a);
  if (!a || !(a->data = calloc((size_t)(2 * horizon), sizeof *a->data))) {
    free(a);
    if (msg) snprintf(msg, GRIT_MESSAGE_SIZE, "out of memory");
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  a->model = model;
  a->horizon = horizon;
  a->nq = grit_model_nq(model);
  a->nv = grit_model_nv(model);
  a->nu = grit_model_nu(model);
  for (int i = 0; i < 2 * horizon; ++i) {
    grit_status s = grit_data_create(model, &a->data[i]);
    if (s == GRIT_OK && settings) s = grit_data_set_step_settings(a->data[i], settings);
    if (s != GRIT_OK) {
      if (msg)
        snprintf(msg, GRIT_MESSAGE_SIZE, "knot data %d: %s", i,
                 a->data[i] ? grit_data_last_error(a->data[i]) : grit_status_string(s));
      grit_ilqr_grit_free(a);
      return s;
    }
  }
  *out = a;
  return GRIT_OK;
}

grit_data *grit_ilqr_grit_knot_data(grit_ilqr_grit *a, int slot, int k) {
  if (!a || slot < 0 || slot > 1 || k < 0 || k >= a->horizon) return NULL;
  return a->data[slot * a->horizon + k];
}

const char *grit_ilqr_grit_last_error(const grit_ilqr_grit *a) { return a ? a->msg : "adapter is NULL"; }

void grit_ilqr_grit_state(const grit_data *d, double *x) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  memcpy(x, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(x + nq, grit_data_qvel(d), sizeof(double) * (size_t)nv);
}

static int step_cb(void *ctx, int slot, int k, const double *x, const double *u, double *x_next) {
  grit_ilqr_grit *a = ctx;
  grit_data *d = grit_ilqr_grit_knot_data(a, slot, k);
  grit_status s = GRIT_OK;
  if (!d) s = GRIT_ERR_INVALID_ARGUMENT;
  if (!s) s = grit_data_set_qpos(d, x, a->nq);
  if (!s) s = grit_data_set_qvel(d, x + a->nq, a->nv);
  if (!s) s = grit_data_set_ctrl(d, u, a->nu);
  if (!s) s = grit_step(d);
  if (s) {
    /* Only the thread running the rollout writes here (jacobians write nothing). */
    snprintf(a->msg, GRIT_MESSAGE_SIZE, "step at knot %d: %s", k, d ? grit_data_last_error(d) : "bad knot");
    return 1;
  }
  grit_ilqr_grit_state(d, x_next);
  return 0;
}

static int jacobians_cb(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                        double *fu) {
  (void)thread;
  (void)x;
  (void)u; /* the knot's data took exactly this step: its derivatives need nothing else */
  grit_data *d = grit_ilqr_grit_knot_data(ctx, slot, k);
  return !d || grit_step_derivatives(d, fx, fu, NULL, 0, NULL) != GRIT_OK;
}

static void difference_cb(void *ctx, const double *xa, const double *xb, double *dx) {
  grit_ilqr_grit *a = ctx;
  grit_position_difference(a->model, xa, xb, dx);
  for (int i = 0; i < a->nv; ++i) dx[a->nv + i] = xb[a->nq + i] - xa[a->nq + i];
}

grit_ilqr_dynamics grit_ilqr_grit_dynamics(grit_ilqr_grit *a) {
  grit_ilqr_dynamics d;
  memset(&d, 0, sizeof d);
  if (!a) return d;
  d.nx = a->nq + a->nv;
  d.ndx = 2 * a->nv;
  d.nu = a->nu;
  d.ctx = a;
  d.step = step_cb;
  d.jacobians = jacobians_cb;
  d.difference = difference_cb;
  return d;
}
