/* SPDX-License-Identifier: Apache-2.0 */
/* forward.h — smooth dynamics shared by the step and the public queries (internal). */
#ifndef GRIT_FORWARD_H
#define GRIT_FORWARD_H

#include "data_internal.h"

/* At the data's state: kinematics, M, bias, the implicit operator A and its factor (d->A, d->Achol),
 * the smooth force and the free-motion velocity d->vstar. */
grit_status grit_compute_free_motion(grit_data *d);

#endif
