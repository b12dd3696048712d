/* SPDX-License-Identifier: Apache-2.0 */
/* data.c — creating grit_data (one allocation for every workspace) and setting the state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afactor.h"
#include "arena.h"
#include "constraints.h"
#include "solver.h"
#include "constraints_extra.h"
#include "data_internal.h"
#include "derivatives.h"
#include "status_internal.h"
#include "variational.h"

/* Keeps the kinematic quantities (poses, twists) those of the current state. */
static void refresh_kinematics(grit_data *d) {
  grit_kin_positions(d->model, d->qpos, &d->inertial, &d->kin);
  grit_kin_velocities(d->model, d->qvel, &d->kin);
}

static void layout_data(const grit_model *m, grit_data *d, grit_carver *c) {
  const int nb = m->nbody, nv = m->nv;
  GRIT_CARVE(c, d->qpos, m->nq);
  GRIT_CARVE(c, d->qvel, nv);
  GRIT_CARVE(c, d->ctrl, m->nu);
  GRIT_CARVE_KIN(c, d->kin, m);
  GRIT_CARVE_KIN(c, d->kin0, m);
  GRIT_CARVE(c, d->M, m->nM);
  GRIT_CARVE(c, d->A, m->nM);
  GRIT_CARVE(c, d->Achol, m->nM);
  GRIT_CARVE(c, d->bias, nv);
  GRIT_CARVE(c, d->force, nv);
  GRIT_CARVE(c, d->vstar, nv);
  GRIT_CARVE(c, d->cvel_star, 6 * nb);
  GRIT_CARVE(c, d->crb, nb);
  GRIT_CARVE(c, d->acc, 6 * nb);
  GRIT_CARVE(c, d->frc, 6 * nb);
  GRIT_CARVE(c, d->qnext, m->nq);
  GRIT_CARVE(c, d->vnext, nv);
  GRIT_CARVE(c, d->jscratch, 6 * nv);
  char *mark = nv > 0 ? calloc((size_t)nv, 1) : NULL; /* creation's scratch; none: no lists */
  const int ncols = mark ? grit_cx_col_lists(m, mark, NULL, NULL) : 0;
  GRIT_CARVE(c, d->cx_colptr, mark ? m->neq + m->ntendon + 1 : 0);
  GRIT_CARVE(c, d->cx_cols, ncols);
  GRIT_CARVE(c, d->cx_leaf, mark ? m->neq + m->ntendon : 0);
  if (mark && c->base) grit_cx_col_lists(m, mark, d->cx_colptr, d->cx_cols);
  if (mark && c->base) grit_cx_leaf_lists(m, d->cx_colptr, d->cx_cols, d->cx_leaf);
  if (!mark) d->cx_colptr = NULL, d->cx_leaf = NULL;
  free(mark);
  GRIT_CARVE(c, d->qprev, m->nq);
  GRIT_CARVE(c, d->vprev, nv);
  GRIT_CARVE(c, d->uprev, m->nu);
  GRIT_CARVE(c, d->vsol, nv);
  GRIT_CARVE(c, d->Aprev, m->nM);
  GRIT_CARVE(c, d->qsave, m->nq);
  GRIT_CARVE(c, d->vsave, nv);
  GRIT_CARVE(c, d->usave, m->nu);
  GRIT_CARVE(c, d->act, m->na);
  GRIT_CARVE(c, d->actin, m->nu);
  GRIT_CARVE(c, d->actprev, m->na);
  GRIT_CARVE(c, d->actinprev, m->nu);
  GRIT_CARVE(c, d->actsave, m->na);
  GRIT_CARVE(c, d->Aphys, m->nM);
}

grit_status grit_data_create(const grit_model *m, grit_data **out) {
  if (!out) return GRIT_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return GRIT_ERR_INVALID_ARGUMENT;
  grit_data *d = calloc(1, sizeof *d);
  if (!d) return GRIT_ERR_OUT_OF_MEMORY;
  grit_carver c = {NULL, 0};
  layout_data(m, d, &c);
  d->arena = calloc(1, c.used + 64);
  if (!d->arena) {
    free(d);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  c.base = d->arena;
  c.used = 0;
  layout_data(m, d, &c);
  d->model = m;
  int limit_jstore = 0, limits = grit_limit_capacity(m, &limit_jstore), cx_jstore = 0;
  limits += grit_cx_capacity(m, &cx_jstore); /* joint friction, equalities, tendons */
  limit_jstore += cx_jstore;
  const int contacts = m->ngeom > 1 ? grit_contact_capacity(m) : 0;
  grit_status s = grit_solver_create(m, limits + contacts, limit_jstore + contacts * grit_contact_jstore_size(m),
                                     &d->solver, d->message);
  if (s == GRIT_OK) s = grit_collision_create(m, &d->collision, d->message);
  if (s == GRIT_OK) s = grit_deriv_ws_create(m, limits + contacts, &d->deriv);
  if (s == GRIT_OK && !(d->variational = grit_variational_ws_create(m))) s = GRIT_ERR_OUT_OF_MEMORY;
  if (s == GRIT_OK) s = grit_afactor_create(m, &d->af, d->message);
  if (s == GRIT_OK) grit_solver_set_afactor(d->solver, d->af); /* its factor when there is no constraint */
  if (s != GRIT_OK) {
    grit_solver_free(d->solver);
    grit_collision_free(d->collision);
    grit_deriv_ws_free(d->deriv);
    grit_variational_ws_free(d->variational);
    grit_afactor_free(d->af);
    free(d->arena);
    free(d);
    return s;
  }
  d->settings = grit_default_step_settings();
  d->inertial.mass = m->body_mass;
  d->inertial.com = m->body_com;
  d->inertial.inertia = m->body_inertia;
  grit_data_reset(d);
  *out = d;
  return GRIT_OK;
}

void grit_data_free(grit_data *d) {
  if (!d) return;
  grit_solver_free(d->solver);
  grit_collision_free(d->collision);
  grit_deriv_ws_free(d->deriv);
  grit_variational_ws_free(d->variational);
  grit_afactor_free(d->af);
  free(d->arena);
  free(d);
}

const char *grit_data_last_error(const grit_data *d) { return d ? d->message : "data is NULL"; }
const grit_model *grit_data_model(const grit_data *d) { return d ? d->model : NULL; }

void grit_data_reset(grit_data *d) {
  if (!d) return;
  const grit_model *m = d->model;
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i];
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.0;
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = 0.0;
  for (int i = 0; i < m->na; ++i) d->act[i] = 0.0;
  d->time = 0.0;
  memset(&d->stats, 0, sizeof d->stats);
  d->ncontacts = 0;
  d->has_prev = 0;
  d->warm_ok = 0;
  d->message[0] = '\0';
  refresh_kinematics(d);
}

static grit_status check_vector(grit_data *d, const double *x, int n, int expected, const char *what) {
  if (!x) return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "%s: NULL array", what);
  if (n != expected)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "%s: length %d, the model needs %d", what, n,
                          expected);
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "%s[%d] is not finite", what, i);
  return GRIT_OK;
}

grit_status grit_data_set_qpos(grit_data *d, const double *q, int n) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  grit_status s = check_vector(d, q, n, m->nq, "qpos");
  if (s != GRIT_OK) return s;
  /* Check every quaternion before changing anything. */
  for (int j = 0; j < m->njnt; ++j) {
    int t = m->jnt_type[j];
    if (t != GRIT_JOINT_FREE && t != GRIT_JOINT_BALL) continue;
    const double *qq = q + m->jnt_qposadr[j] + (t == GRIT_JOINT_FREE ? 3 : 0);
    double nrm = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
    if (nrm < 1e-10)
      return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "qpos: the quaternion of joint %d has zero norm",
                            j);
  }
  if (n > 0) memcpy(d->qpos, q, sizeof(double) * (size_t)n);
  for (int j = 0; j < m->njnt; ++j) {
    int t = m->jnt_type[j];
    if (t != GRIT_JOINT_FREE && t != GRIT_JOINT_BALL) continue;
    grit_quat_normalize(d->qpos + m->jnt_qposadr[j] + (t == GRIT_JOINT_FREE ? 3 : 0));
  }
  refresh_kinematics(d);
  return GRIT_OK;
}

grit_status grit_data_set_qvel(grit_data *d, const double *v, int n) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status s = check_vector(d, v, n, d->model->nv, "qvel");
  if (s == GRIT_OK && n > 0) memcpy(d->qvel, v, sizeof(double) * (size_t)n);
  if (s == GRIT_OK) grit_kin_velocities(d->model, d->qvel, &d->kin);
  return s;
}

grit_status grit_data_set_ctrl(grit_data *d, const double *u, int n) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status s = check_vector(d, u, n, d->model->nu, "ctrl");
  if (s == GRIT_OK && n > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)n);
  return s;
}

grit_status grit_data_set_time(grit_data *d, double t) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  if (!isfinite(t)) return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "time is not finite");
  d->time = t;
  return GRIT_OK;
}

const double *grit_data_qpos(const grit_data *d) { return d ? d->qpos : NULL; }
const double *grit_data_qvel(const grit_data *d) { return d ? d->qvel : NULL; }
const double *grit_data_ctrl(const grit_data *d) { return d ? d->ctrl : NULL; }
double grit_data_time(const grit_data *d) { return d ? d->time : 0.0; }
