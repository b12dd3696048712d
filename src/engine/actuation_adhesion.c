/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_adhesion.c — adhesion actuators (GRIT_TRN_BODY): their checks, the step's part, the trees
 * they couple for the derivatives, and the instantiation of the scalar-generic force
 * (actuation_adhesion_generic.h). docs/actuation.md, Adhesion. */
#include "actuation_adhesion.h"

#include <string.h>

#include "afactor.h"
#include "contact_geometry.h"
#include "contact_margin.h"
#include "data_internal.h"
#include "dynamics.h"
#include "grit/step.h"
#include "status_internal.h"

grit_status grit_adhesion_compile(grit_model *m, char *msg) {
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_BODY) continue;
    const int b = m->act_tendon[a];
    if (b < 1 || b >= m->nbody)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: body %d does not exist (bodies 1..%d)", a, b,
                            m->nbody - 1);
    if (m->body_tree[b] < 0)
      return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                            "actuator %d: adhesion on body %d, which cannot move (welded to the world), is not supported",
                            a, b);
    m->act_jnt[a] = -1;
    m->act_dof[a] = m->tree_dofadr[m->body_tree[b]];
  }
  return GRIT_OK;
}

int grit_adhesion_any(const grit_model *m) {
  for (int a = 0; a < m->nu; ++a)
    if (m->act_trntype[a] == GRIT_TRN_BODY) return 1;
  return 0;
}

int grit_adhesion_counts(const grit_model *m, const grit_contact_candidate *c) {
  return c->k_patch == 0.0 && c->pt.phi < grit_pair_margin(m, c->geom[0], c->geom[1]);
}

grit_status grit_adhesion_apply(grit_data *d, int ncand) {
  const grit_model *m = d->model;
  if (!grit_adhesion_any(m)) return GRIT_OK;
  if (d->settings.integrator != GRIT_INTEGRATOR_EULER)
    return grit_set_error(d->message, GRIT_ERR_UNSUPPORTED,
                          "step: adhesion actuators are simulated by the Euler integrator only");
  const int nv = m->nv;
  double *f = d->vnext; /* free until the solve */
  memset(f, 0, sizeof(double) * (size_t)nv);
  grit_adhesion_force(m, &d->kin, d->collision->c, ncand, d->actin, f, d->jscratch);
  for (int i = 0; i < nv; ++i) d->force[i] += f[i];
  grit_afactor_solve(m, d->af, d->Achol, f); /* v* = v0 + h A^-1 force: its adhesion part */
  for (int i = 0; i < nv; ++i) d->vstar[i] += m->opt.timestep * f[i];
  return GRIT_OK;
}

int grit_adhesion_acts_on(const grit_model *m, const grit_contact_candidate *c) {
  if (!grit_adhesion_counts(m, c)) return 0;
  for (int a = 0; a < m->nu; ++a)
    if (m->act_trntype[a] == GRIT_TRN_BODY && (c->body[0] == m->act_tendon[a] || c->body[1] == m->act_tendon[a])) return 1;
  return 0;
}

#include "grit/detail/scalar_double.h"
#include "actuation_adhesion_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "actuation_adhesion_generic.h"
#include "grit/detail/scalar_undef.h"
