/* SPDX-License-Identifier: Apache-2.0 */
/* grit/diagnostics.h — the physical criteria of seed 001 (Le Lidec et al., "Contact models in robotics:
 * a comparative analysis") measured on a step's own solution, per contact and as maxima over a step.
 *
 * With c = J(q0) v the solver's contact velocity in the contact frame (t1, t2, n; c_n > 0 separating),
 * phi0 the signed distance at the start of the step, gamma the contact impulse and mu the contact's
 * friction coefficient (docs/contact.md, "Physical criteria"):
 *   Signorini:       max(0, phi0 + dt c_n) where gamma_n > 0     (an impulse across a predicted gap, m)
 *   penetration:     max(0, -(phi0 + dt c_n)) where gamma_n == 0 (penetration with no impulse, m)
 *   Coulomb cone:    max(0, ||gamma_t|| - mu gamma_n)             (N s)
 *   max dissipation: max(0, mu gamma_n ||c_t|| + gamma_t . c_t)   (friction not opposing slip, J)
 *   complementarity: |gamma_n (phi0 + dt c_n)|                    (N s m)
 * All are zero for an exact rigid Coulomb solution; the compliant, regularized models of grit violate
 * them by amounts that depend on the model (docs/contact.md tabulates them on standard scenes). */
#ifndef GRIT_DIAGNOSTICS_H
#define GRIT_DIAGNOSTICS_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_contact_diagnostics {
  double signorini_violation;     /* m */
  double penetration_violation;   /* m */
  double coulomb_violation;       /* N s */
  double dissipation_violation;   /* J (N s times m/s) */
  double complementarity;         /* N s m */
  double velocity[3];             /* c = J(q0) v in the contact frame (t1, t2, n), m/s (per contact only) */
  double mu;                      /* the contact's friction coefficient (per contact only) */
} grit_contact_diagnostics;

/* The criteria of contact i (0 <= i < grit_data_ncontacts) of the last successful step. */
GRIT_API grit_status grit_data_contact_diagnostics(const grit_data *data, int i, grit_contact_diagnostics *out);

/* The maxima of each criterion over the last successful step's contacts (all zero without contacts;
 * velocity and mu are zero). */
GRIT_API grit_status grit_data_step_diagnostics(const grit_data *data, grit_contact_diagnostics *out);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DIAGNOSTICS_H */
