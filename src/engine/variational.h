/* SPDX-License-Identifier: Apache-2.0 */
/* variational.h — the free motion of GRIT_INTEGRATOR_VARIATIONAL: the midpoint discrete Euler–Lagrange
 * equations (docs/theory.md, "The variational integrator"), internal. */
#ifndef GRIT_VARIATIONAL_H
#define GRIT_VARIATIONAL_H

#include "grit/status.h"
#include "model_internal.h"

typedef struct grit_data grit_data;
typedef struct grit_variational_ws grit_variational_ws;

/* The workspace, sized once for model m (allocates; NULL on failure). */
grit_variational_ws *grit_variational_ws_create(const grit_model *m);
void grit_variational_ws_free(grit_variational_ws *w);

/* Fills the data's A, Achol (its factor) and vstar as grit_compute_free_motion does, from the discrete
 * momentum balance at the two midpoints instead of the explicit Euler balance at q0. The data's
 * kinematics (poses and twists at q0, v0) are left as they are. Allocates nothing. */
grit_status grit_variational_free_motion(grit_data *d);

/* After the contact solve: maps the interval's velocity v (in place) to the velocity at the end of the
 * step, M(qnext)^-1 p_k+1, the state's velocity in this mode. Allocates nothing. */
grit_status grit_variational_end_velocity(grit_data *d, const double *qnext, double *v);

#endif
