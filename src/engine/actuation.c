/* SPDX-License-Identifier: Apache-2.0 */
/* actuation.c — actuators as MuJoCo 2.2.2 defines them: checking and compiling their definitions, the
 * choice of the implicit ones, the activations of grit_data, and the instantiation of the scalar-generic
 * forces (actuation_generic.h). docs/actuation.md. */
#include "actuation.h"

#include "actuation_muscle.h" /* muscles and the slider-crank (issue 24) */

#include "constraints_extra.h" /* grit_tendon_length_jacobian */

#include <math.h>
#include <string.h>

#include "data_internal.h"
#include "grit/dynamics.h" /* grit_actuator_forces, exported */
#include "status_internal.h"

void grit_actuator_slopes(const grit_model *m, int a, double *kq, double *kv) {
  const double g2 = m->act_gear[a] * m->act_gear[a], *bp = m->act_biasprm + 3 * a;
  const int affine = m->act_biastype[a] == GRIT_BIAS_AFFINE;
  /* a site transmission's length is identically 0: no position stiffness to make implicit */
  *kq = affine && bp[1] < 0.0 && m->act_trntype[a] != GRIT_TRN_SITE ? -g2 * bp[1] : 0.0;
  *kv = affine && bp[2] < 0.0 ? -g2 * bp[2] : 0.0;
}

static int finite_n(const double *x, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

grit_status grit_actuator_check(const grit_actuator_def *def, int id, int jtype, int ntendon, char *msg) {
  if (def->trntype == GRIT_TRN_TENDON) {
    if (def->tendon < 0 || def->tendon >= ntendon)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: tendon %d does not exist (%d tendons)", id,
                            def->tendon, ntendon);
  } else if (def->trntype == GRIT_TRN_SLIDERCRANK || def->trntype == GRIT_TRN_SITE) { /* grit_actuator_muscle_check */
  } else if (def->trntype == GRIT_TRN_BODY) { /* adhesion (actuation_adhesion.c): the body is checked at compile */
    if (def->gaintype != GRIT_GAIN_FIXED || def->biastype != GRIT_BIAS_NONE)
      return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                            "actuator %d: an adhesion (body) transmission takes a fixed gain and no bias (it has no "
                            "length)",
                            id);
  } else if (def->trntype != GRIT_TRN_JOINT) {
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "actuator %d: unknown transmission type %d", id,
                          (int)def->trntype);
  } else if (jtype != GRIT_JOINT_HINGE && jtype != GRIT_JOINT_SLIDE) {
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                          "actuator %d: only hinge and slide joints can be actuated (ball and free joints are not supported)",
                          id);
  }
  if (def->dyntype < GRIT_DYN_NONE || def->dyntype > GRIT_DYN_MUSCLE)
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "actuator %d: unknown or unsupported dynamics type %d", id,
                          (int)def->dyntype);
  if (def->gaintype < GRIT_GAIN_FIXED || def->gaintype > GRIT_GAIN_MUSCLE)
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "actuator %d: unknown or unsupported gain type %d", id,
                          (int)def->gaintype);
  if (def->biastype < GRIT_BIAS_NONE || def->biastype > GRIT_BIAS_MUSCLE)
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "actuator %d: unknown or unsupported bias type %d", id,
                          (int)def->biastype);
  const char *bad = !isfinite(def->gear)                ? "gear"
                    : !finite_n(def->ctrl_range, 2)     ? "ctrl_range"
                    : !finite_n(def->dynprm, 3)         ? "dynprm"
                    : !finite_n(def->gainprm, 3)        ? "gainprm"
                    : !finite_n(def->biasprm, 3)        ? "biasprm"
                    : !finite_n(def->force_range, 2)    ? "force_range"
                    : !finite_n(def->act_range, 2)      ? "act_range"
                                                        : NULL;
  if (bad) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "actuator %d: %s is not finite", id, bad);
  if (def->ctrl_limited && !(def->ctrl_range[0] < def->ctrl_range[1]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: ctrl_range [%g, %g] is empty", id,
                          def->ctrl_range[0], def->ctrl_range[1]);
  if (def->force_limited && !(def->force_range[0] <= def->force_range[1]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: force_range [%g, %g] is empty", id,
                          def->force_range[0], def->force_range[1]);
  if (def->act_limited && !(def->act_range[0] <= def->act_range[1]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: act_range [%g, %g] is empty", id,
                          def->act_range[0], def->act_range[1]);
  if (def->dyntype == GRIT_DYN_FILTER && !(def->dynprm[0] > 0.0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: the filter's time constant dynprm[0] = %g must be > 0",
                          id, def->dynprm[0]);
  return GRIT_OK;
}

grit_status grit_actuator_compile_tendons(grit_model *m, char *msg) {
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_TENDON) continue;
    const int t = m->act_tendon[a];
    if (m->ten_ntree[t] != 1)
      return grit_set_error(msg, m->ten_ntree[t] ? GRIT_ERR_UNSUPPORTED : GRIT_ERR_INVALID_MODEL,
                            m->ten_ntree[t] ? "actuator %d: its tendon %d spans two kinematic trees (an actuated tendon "
                                              "must move one tree)"
                                            : "actuator %d: nothing its tendon %d passes through can move",
                            a, t);
    m->act_jnt[a] = -1;
    m->act_dof[a] = m->tree_dofadr[m->ten_tree[2 * t]];
  }
  return GRIT_OK;
}

int grit_actuator_reads_length(const grit_model *m, int a) {
  const double *gp = m->act_gainprm + 3 * a, *bp = m->act_biasprm + 3 * a;
  return m->act_gaintype[a] == GRIT_GAIN_MUSCLE || m->act_biastype[a] == GRIT_BIAS_MUSCLE ||
         (m->act_gaintype[a] == GRIT_GAIN_AFFINE && gp[1] != 0.0) || (m->act_biastype[a] == GRIT_BIAS_AFFINE && bp[1] != 0.0);
}

int grit_actuator_tendon_on_tree(const grit_model *m, int t) {
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a) && m->dof_tree[m->act_dof[a]] == t) return 1;
  return 0;
}

void grit_actuator_compile(grit_model *m, int a, const grit_actuator_def *d) {
  m->act_trntype[a] = d->trntype;
  m->act_tendon[a] = d->trntype == GRIT_TRN_TENDON ? d->tendon : d->trntype == GRIT_TRN_BODY ? d->body : -1;
  m->act_dyntype[a] = d->dyntype;
  m->act_gaintype[a] = d->gaintype;
  m->act_biastype[a] = d->biastype;
  m->act_actadr[a] = d->dyntype != GRIT_DYN_NONE ? m->na++ : -1;
  m->act_forcelimited[a] = d->force_limited != 0;
  m->act_actlimited[a] = d->act_limited != 0;
  memcpy(m->act_dynprm + 3 * a, d->dynprm, sizeof d->dynprm);
  memcpy(m->act_gainprm + 3 * a, d->gainprm, sizeof d->gainprm);
  memcpy(m->act_biasprm + 3 * a, d->biasprm, sizeof d->biasprm);
  memcpy(m->act_forcerange + 2 * a, d->force_range, sizeof d->force_range);
  memcpy(m->act_actrange + 2 * a, d->act_range, sizeof d->act_range);
  grit_actuator_muscle_compile(m, a, d);
}

void grit_actuator_read(const grit_model *m, int a, grit_actuator_def *d) {
  d->trntype = (grit_actuator_trn)m->act_trntype[a];
  d->tendon = m->act_trntype[a] == GRIT_TRN_BODY ? -1 : m->act_tendon[a];
  if (m->act_trntype[a] == GRIT_TRN_BODY) d->body = m->act_tendon[a];
  d->dyntype = (grit_actuator_dyn)m->act_dyntype[a];
  d->gaintype = (grit_actuator_gain)m->act_gaintype[a];
  d->biastype = (grit_actuator_bias)m->act_biastype[a];
  d->force_limited = m->act_forcelimited[a];
  d->act_limited = m->act_actlimited[a];
  memcpy(d->dynprm, m->act_dynprm + 3 * a, sizeof d->dynprm);
  memcpy(d->gainprm, m->act_gainprm + 3 * a, sizeof d->gainprm);
  memcpy(d->biasprm, m->act_biasprm + 3 * a, sizeof d->biasprm);
  memcpy(d->force_range, m->act_forcerange + 2 * a, sizeof d->force_range);
  memcpy(d->act_range, m->act_actrange + 2 * a, sizeof d->act_range);
  grit_actuator_muscle_read(m, a, d);
}

/* ------------------------------------------------------------------------ the data's activations */

grit_status grit_data_set_act(grit_data *d, const double *act, int n) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const int na = d->model->na;
  if (n != na)
    return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "act: length %d, the model needs %d", n, na);
  if (na > 0 && !act) return grit_set_error(d->message, GRIT_ERR_INVALID_ARGUMENT, "act: NULL array");
  for (int i = 0; i < n; ++i)
    if (!isfinite(act[i])) return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "act[%d] is not finite", i);
  if (n > 0) memcpy(d->act, act, sizeof(double) * (size_t)n);
  return GRIT_OK;
}

const double *grit_data_act(const grit_data *d) { return d ? d->act : NULL; }

/* ----------------------------------------------------------------- the scalar-generic instantiations */

#include "grit/detail/scalar_double.h"
#include "actuation_generic.h"
#include "grit/detail/scalar_undef.h"

/* (after the double instantiation: actuator_raw is its formula) */
int grit_actuator_implicit_at(const grit_model *m, int a, double len, double vel, double w) {
  if (m->opt.explicit_actuation) return 0;
  if (!m->act_forcelimited[a]) return 1;
  const double f = actuator_raw(m, a, len, vel, w);
  return f >= m->act_forcerange[2 * a] && f <= m->act_forcerange[2 * a + 1];
}

int grit_actuator_implicit(const grit_model *m, int a, double q, double v, double w) {
  return grit_actuator_implicit_at(m, a, q * m->act_gear[a], v * m->act_gear[a], w);
}

grit_status grit_actuator_forces(grit_data *d, double *force) {
  if (!d || (!force && d->model->nu > 0)) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  grit_actuator_input(m, d->ctrl, d->act, d->actin);
  for (int a = 0; a < m->nu; ++a) {
    const double g = m->act_gear[a];
    double len, vel;
    if (grit_actuator_has_length_fn(m, a)) { /* d->kin holds the poses of the data's state */
      double *J = d->jscratch;
      len = g * grit_actuator_length_jacobian(m, &d->kin, d->qpos, a, J, J + m->nv);
      vel = 0.0;
      for (int i = 0; i < m->nv; ++i) vel += J[i] * d->qvel[i];
      vel *= g;
    } else if (m->act_trntype[a] == GRIT_TRN_BODY) { /* adhesion: no length (MuJoCo's 0) */
      len = vel = 0.0;
    } else {
      len = g * d->qpos[m->jnt_qposadr[m->act_jnt[a]]];
      vel = g * d->qvel[m->act_dof[a]];
    }
    double f = actuator_raw(m, a, len, vel, d->actin[a]);
    if (m->act_forcelimited[a]) f = fmin(fmax(f, m->act_forcerange[2 * a]), m->act_forcerange[2 * a + 1]);
    force[a] = f;
  }
  return GRIT_OK;
}

#include "grit/detail/scalar_dual.h"
#include "actuation_generic.h"
#include "grit/detail/scalar_undef.h"

void grit_actuation_commit(grit_data *d) {
  const grit_model *m = d->model;
  if (m->nu > 0) memcpy(d->actinprev, d->actin, sizeof(double) * (size_t)m->nu);
  if (m->na == 0) return;
  memcpy(d->actprev, d->act, sizeof(double) * (size_t)m->na);
  grit_actuator_act_next(m, d->ctrl, d->actprev, d->model->opt.timestep, d->act);
}
