/* SPDX-License-Identifier: Apache-2.0 */
/* quasistatic.c — Pang and Tedrake's convex quasistatic time stepping (seed 002) as a mode of the
 * convex step (docs/quasistatic.md).
 *
 * Seed 002's program (10) is min_v h^2/2 v_a^T K_a v_a - h (K_a dq_a + tau)^T v under Anitescu's
 * relaxed friction cone: the robot's actuated dofs are springs (impedance) towards their commands, the
 * objects have no inertia and balance gravity and contact. grit's step is min_v 1/2 |v - v*|_A^2 +
 * l(J v); with
 *   A  = eps M + h D + h^2 K     (eps = quasistatic_inertia; K the servos' and springs' stiffness)
 *   v* = A^-1 h f(q0, v0 = 0, u) (gravity, springs and servo forces at q0; no velocity terms)
 * its optimality condition A (v - v*) = J^T gamma is the force balance h K (q_cmd - q0 - h v) + h tau +
 * J^T gamma = eps M v of the paper, up to the eps M v that makes the problem strictly convex (an object
 * with no contact and no load stays where it is; a free-space servo reaches its command within
 * eps M / (h^2 kp) of it). The contact models are grit's: SAP is the paper's Anitescu relaxation with a
 * compliance (docs/quasistatic.md argues the choice). */
#include <math.h>
#include <string.h>

#include "actuation.h"
#include "afactor.h"
#include "constraint.h"
#include "data_internal.h"
#include "dynamics.h"
#include "kinematics.h"
#include "quasistatic.h"
#include "status_internal.h"

grit_status grit_quasistatic_free_motion(grit_data *d) {
  const grit_model *m = d->model;
  const double h = m->opt.timestep, eps = d->settings.quasistatic_inertia;
  double *zero = d->vnext;
  memset(zero, 0, sizeof(double) * (size_t)m->nv);
  grit_kin_velocities(m, zero, &d->kin); /* no velocity: the bias is gravity alone */
  grit_crba(m, &d->kin, d->crb, d->M);
  grit_rne_bias(m, &d->kin, zero, d->acc, d->frc, d->bias);
  d->achol_fresh = 0; /* A is rewritten below */
  grit_implicit_operator(m, d->M, h, d->A);
  grit_actuator_input(m, d->ctrl, d->act, d->actin);
  grit_actuator_operator(m, d->qpos, zero, d->actin, h, d->A);
  grit_actuator_tendon(m, &d->kin, d->qpos, zero, d->actin, h, NULL, d->A, d->jscratch); /* tendon actuators */
  /* The physical operator's factor, for the constraints' Delassus estimates (d->Aprev is free until the
     step commits): the regularizations built on them (SAP's friction, grit_params_finalize) must see the
     bodies' real inertia, not the vanishing eps M, or a resting box would be frictionless. */
  for (int i = 0; i < m->nM; ++i) d->Aprev[i] = d->Aphys[i] = d->A[i]; /* Aphys: for the derivatives */
  int bad = grit_block_cholesky(m, d->Aprev, NULL);
  if (bad >= 0)
    return grit_set_error(d->message, GRIT_ERR_NUMERICAL, "quasistatic: the mass matrix of tree %d is not positive "
                          "definite", bad);
  grit_quasistatic_inertia(m, eps, d->M, d->A, NULL);
  grit_smooth_force(m, d->qpos, zero, d->actin, d->bias, h, d->force);
  grit_actuator_tendon(m, &d->kin, d->qpos, zero, d->actin, h, d->force, NULL, d->jscratch); /* actuation.c */
  for (int i = 0; i < m->nv; ++i) {
    if (!isfinite(d->force[i]))
      return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "quasistatic: generalized force %d is not finite", i);
    d->vstar[i] = h * d->force[i];
  }
  for (int i = 0; i < m->nM; ++i) d->Achol[i] = d->A[i];
  bad = grit_block_cholesky(m, d->Achol, NULL);
  if (bad >= 0)
    return grit_set_error(d->message, GRIT_ERR_NUMERICAL,
                          "quasistatic: the operator of tree %d is not positive definite (a dof without stiffness "
                          "and quasistatic_inertia 0?)",
                          bad);
  grit_afactor_clear(d->af); /* every tree's factor dense (afactor.h) */
  d->achol_fresh = 1;
  grit_block_cholesky_solve(m, d->Achol, d->vstar);
  return GRIT_OK;
}

/* ------------------------------------------------------------------ for the derivatives module */

int grit_quasistatic_last_step(const grit_data *d) { return d->prev_integrator == GRIT_INTEGRATOR_QUASISTATIC; }

const double *grit_step_delassus_operator(const grit_data *d) {
  return grit_quasistatic_last_step(d) ? d->Aphys : d->Aprev;
}

void grit_quasistatic_velocity_columns(const grit_model *m, double *A) {
  const int nv = m->nv;
  for (int i = 0; i < 2 * nv; ++i)
    for (int j = nv; j < 2 * nv; ++j) A[(size_t)i * 2 * nv + j] = 0.0;
}

#include "grit/detail/scalar_double.h"
#include "quasistatic_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "quasistatic_generic.h"
#include "grit/detail/scalar_undef.h"
