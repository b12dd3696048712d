/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_data.c — a step's hydroelastic patches seen from outside (grit/hydro.h). */
#include "grit/hydro.h"

#include "data_internal.h"
#include "grit/step.h"
#include "status_internal.h"

grit_status grit_data_contact_patch(const grit_data *d, int i, double *area, double *pressure) {
  if (area) *area = 0.0;
  if (pressure) *pressure = 0.0;
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  grit_contact_info ci;
  const grit_status s = grit_data_contact(d, i, &ci);
  if (s != GRIT_OK) return s;
  const double a = d->collision->c[i].k_patch > 0 ? d->collision->c[i].patch_area : 0.0;
  if (area) *area = a;
  if (pressure && a > 0) *pressure = ci.impulse[2] / (d->model->opt.timestep * a);
  return GRIT_OK;
}
