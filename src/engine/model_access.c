/* SPDX-License-Identifier: Apache-2.0 */
/* model_access.c — read access to a compiled grit_model: sizes, options, joints' addresses, names,
 * and definitions read back (the builder and compiler are in model.c). */
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "model_internal.h"
#include "status_internal.h"

/* -------------------------------------------------------------------------------- accessors */

void grit_model_free(grit_model *m) {
  if (!m) return;
  free(m->arena);
  free(m);
}

int grit_model_nq(const grit_model *m) { return m ? m->nq : 0; }
int grit_model_nv(const grit_model *m) { return m ? m->nv : 0; }
int grit_model_nu(const grit_model *m) { return m ? m->nu : 0; }
int grit_model_na(const grit_model *m) { return m ? m->na : 0; }
int grit_model_nbody(const grit_model *m) { return m ? m->nbody : 0; }
int grit_model_njoint(const grit_model *m) { return m ? m->njnt : 0; }
int grit_model_ntree(const grit_model *m) { return m ? m->ntree : 0; }
int grit_model_ngeom(const grit_model *m) { return m ? m->ngeom : 0; }
grit_options grit_model_options(const grit_model *m) { return m ? m->opt : grit_default_options(); }

int grit_model_joint_qposadr(const grit_model *m, int j) {
  return (m && j >= 0 && j < m->njnt) ? m->jnt_qposadr[j] : -1;
}
int grit_model_joint_dofadr(const grit_model *m, int j) {
  return (m && j >= 0 && j < m->njnt) ? m->jnt_dofadr[j] : -1;
}
grit_joint_type grit_model_joint_type(const grit_model *m, int j) {
  return (m && j >= 0 && j < m->njnt) ? (grit_joint_type)m->jnt_type[j] : GRIT_JOINT_HINGE;
}

void grit_model_qpos0(const grit_model *m, double *q) {
  if (m && q) memcpy(q, m->qpos0, sizeof(double) * (size_t)m->nq);
}

static int find_name(char *const *names, int n, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < n; ++i)
    if (names[i] && !strcmp(names[i], name)) return i;
  return -1;
}
int grit_model_body_index(const grit_model *m, const char *name) {
  return m ? find_name(m->body_name, m->nbody, name) : -1;
}
int grit_model_joint_index(const grit_model *m, const char *name) {
  return m ? find_name(m->jnt_name, m->njnt, name) : -1;
}
int grit_model_actuator_index(const grit_model *m, const char *name) {
  return m ? find_name(m->act_name, m->nu, name) : -1;
}
int grit_model_geom_index(const grit_model *m, const char *name) {
  return m ? find_name(m->geom_name, m->ngeom, name) : -1;
}

grit_status grit_model_actuator(const grit_model *m, int a, grit_actuator_def *def) {
  if (!m || !def || a < 0 || a >= m->nu) return GRIT_ERR_INVALID_ARGUMENT;
  memset(def, 0, sizeof *def);
  def->name = m->act_name[a];
  def->joint = m->act_jnt[a];
  def->gear = m->act_gear[a];
  def->ctrl_limited = m->act_limited[a];
  def->ctrl_range[0] = m->act_range[2 * a];
  def->ctrl_range[1] = m->act_range[2 * a + 1];
  grit_actuator_read(m, a, def);
  return GRIT_OK;
}

grit_status grit_model_geom(const grit_model *m, int g, grit_geom_def *def) {
  if (!m || !def || g < 0 || g >= m->ngeom) return GRIT_ERR_INVALID_ARGUMENT;
  memset(def, 0, sizeof *def);
  def->name = m->geom_name[g];
  def->body = m->geom_body[g];
  def->shape = m->geom_shape[g];
  memcpy(def->pos, m->geom_pos + 3 * g, sizeof def->pos);
  memcpy(def->quat, m->geom_quat + 4 * g, sizeof def->quat);
  def->friction = m->geom_friction[g];
  def->stiffness = m->geom_stiffness[g];
  def->dissipation = m->geom_dissipation[g];
  def->tau_d = m->geom_taud[g];
  def->contype = m->geom_contype[g];
  def->conaffinity = m->geom_conaffinity[g];
  def->hydro_modulus = m->geom_hydro[g];
  def->margin = m->geom_margin[g];
  def->gap = m->geom_gap[g];
  def->priority = m->geom_priority[g];
  def->condim = m->geom_condim[g];
  return GRIT_OK;
}

double grit_model_body_mass(const grit_model *m, int body) {
  if (!m || body < 0 || body >= m->nbody) return -1.0;
  return body == 0 ? 0.0 : m->body_mass[body];
}
