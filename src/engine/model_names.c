/* SPDX-License-Identifier: Apache-2.0 */
/* Names of a model's elements by index (grit/model_names.h). */
#include "grit/model_names.h"

#include <stddef.h>

#include "model_internal.h"

/* names may be NULL (no element was named) and entries may be NULL (that element has no name). */
static const char *name_at(char *const *names, int n, int i) {
  if (i < 0 || i >= n) return NULL;
  return names && names[i] ? names[i] : "";
}

const char *grit_model_body_name(const grit_model *m, int body) {
  return m ? name_at(m->body_name, m->nbody, body) : NULL;
}
const char *grit_model_joint_name(const grit_model *m, int joint) {
  return m ? name_at(m->jnt_name, m->njnt, joint) : NULL;
}
const char *grit_model_actuator_name(const grit_model *m, int actuator) {
  return m ? name_at(m->act_name, m->nu, actuator) : NULL;
}
const char *grit_model_geom_name(const grit_model *m, int geom) {
  return m ? name_at(m->geom_name, m->ngeom, geom) : NULL;
}
