/* SPDX-License-Identifier: Apache-2.0 */
/* diagnostics.c — seed 001's physical criteria on the step's own solution (grit/diagnostics.h). */
#include <math.h>
#include <string.h>

#include "data_internal.h"
#include "grit/diagnostics.h"
#include "grit/model.h"
#include "solver.h"
#include "status_internal.h"

/* The criteria from one contact constraint: phi0, the solver's c = J v (+ b, zero for contacts) and
 * gamma, all in the contact frame. */
static void contact_criteria(const grit_constraint *k, double dt, grit_contact_diagnostics *o) {
  memset(o, 0, sizeof *o);
  const double *c = k->vc, *g = k->gamma;
  const double mu = k->p.mu, gap = k->p.phi0 + dt * c[2];
  const double gt = hypot(g[0], g[1]), ct = hypot(c[0], c[1]);
  if (g[2] > 0.0) o->signorini_violation = fmax(0.0, gap);
  else o->penetration_violation = fmax(0.0, -gap);
  o->coulomb_violation = fmax(0.0, gt - mu * g[2]);
  o->dissipation_violation = fmax(0.0, mu * g[2] * ct + g[0] * c[0] + g[1] * c[1]);
  o->complementarity = fabs(g[2] * gap);
  memcpy(o->velocity, c, sizeof o->velocity);
  o->mu = mu;
}

grit_status grit_data_contact_diagnostics(const grit_data *d, int i, grit_contact_diagnostics *out) {
  if (!d || !out) return GRIT_ERR_INVALID_ARGUMENT;
  if (i < 0 || i >= d->ncontacts)
    return grit_set_error((char *)d->message, GRIT_ERR_INVALID_ARGUMENT, "contact %d does not exist (%d contacts)", i,
                          d->ncontacts);
  const grit_constraint *k = &grit_solver_constraints(d->solver, NULL)[i];
  contact_criteria(k, grit_model_options(d->model).timestep, out);
  return GRIT_OK;
}

grit_status grit_data_step_diagnostics(const grit_data *d, grit_contact_diagnostics *out) {
  if (!d || !out) return GRIT_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  const grit_constraint *k = grit_solver_constraints(d->solver, NULL);
  const double dt = grit_model_options(d->model).timestep;
  for (int i = 0; i < d->ncontacts; ++i) {
    grit_contact_diagnostics c;
    contact_criteria(&k[i], dt, &c);
    out->signorini_violation = fmax(out->signorini_violation, c.signorini_violation);
    out->penetration_violation = fmax(out->penetration_violation, c.penetration_violation);
    out->coulomb_violation = fmax(out->coulomb_violation, c.coulomb_violation);
    out->dissipation_violation = fmax(out->dissipation_violation, c.dissipation_violation);
    out->complementarity = fmax(out->complementarity, c.complementarity);
  }
  return GRIT_OK;
}
