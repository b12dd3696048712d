/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact_chain.h — a contact against the world evaluated on dual numbers once per call, its
 * wrench's partials then chained in each position pass from its body's pose and twists (internal;
 * derivatives_contact_chain.c, called by derivatives_residual.c). */
#ifndef GRIT_DERIVATIVES_CONTACT_CHAIN_H
#define GRIT_DERIVATIVES_CONTACT_CHAIN_H

#include "arena.h"
#include "contact_candidate.h"
#include "contact_geometry.h"
#include "derivatives_internal.h"

/* The workspace's arrays of this module (grit_deriv_ws_create's layout). */
void grit_deriv_contact_chain_layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c);

/* Contact i (constraint k), whose law reads no Delassus estimate and whose J_c the residual does not form,
 * in a position pass: if one side is on a body of a tree and the other on the world, adds its wrench's
 * value to its body's (w->bwr; its partials at grit_deriv_contact_chain_finish), takes its Lagged lane as
 * the full path would, and returns 1; else returns 0 and the full path runs (ws->no_contact_chain: always). */
int grit_deriv_contact_chain(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int i,
                             const grit_constraint *k);

/* After the evaluation's constraints: the chained contacts' partials into their bodies' wrenches, by
 * body (the sum of its contacts' maps when all were chained in this evaluation). */
void grit_deriv_contact_chain_finish(const grit_model *m, const grit_data *d, grit_deriv_ws *w);

/* derivatives_residual.c's pieces the chained path shares: the contact's inputs (a side s at the geometry
 * pose gpo[s], gRo[s] given, if gpo and gpo[s]), a fixed geometry's pose (a body no pass moves: constants)
 * and a body's twist at the solution (v0: at the previous state's velocities), formed once per evaluation. */
void grit_deriv_contact_inputs(const grit_model *m, const grit_deriv_ws *w, const char *active,
                               const grit_contact_candidate *cand, const grit_dual *const gpo[2],
                               const grit_dual *const gRo[2], grit_contact_geom_dual *geo, grit_contact_params_dual *p);
void grit_deriv_fixed_geom_pose(const grit_model *m, const grit_deriv_ws *w, int b, int g, grit_dual gp[3],
                                grit_dual gR[9]);
const grit_dual *grit_deriv_contact_twist(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int b, int v0);

#endif
