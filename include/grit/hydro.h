/* SPDX-License-Identifier: Apache-2.0 */
/* grit/hydro.h — hydroelastic contact patches (docs/hydroelastic.md): what a step's contacts were. */
#ifndef GRIT_HYDRO_PUBLIC_H
#define GRIT_HYDRO_PUBLIC_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Contact i (0 <= i < grit_data_ncontacts) of the last step as a hydroelastic patch: the area of its
 * polygon, m^2, and the mean pressure over the step, its normal impulse / (time step x area), Pa. Both 0
 * for a point contact. Either output may be NULL. */
GRIT_API grit_status grit_data_contact_patch(const grit_data *data, int i, double *area, double *pressure);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_HYDRO_PUBLIC_H */
