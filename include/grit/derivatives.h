/* SPDX-License-Identifier: Apache-2.0 */
/* grit/derivatives.h — exact Jacobians of a time step (seed 000, section X-B).
 *
 * At the solution of a step the momentum residual vanishes, r(v; theta) = 0, so by the implicit function
 * theorem H dv/dtheta = -dr/dtheta, with H the Hessian of the step's convex problem. grit evaluates
 * dr/dtheta by running the residual (kinematics, mass matrix, bias forces, contact geometry re-evaluated
 * from body-fixed features, contact Jacobians, impulses) on dual numbers, a chunk of columns per pass,
 * and solves all columns with the factor of H kept by the step. docs/theory.md, Derivatives.
 *
 * The state is x = (q, v); its perturbations live in the tangent space of dimension 2 nv: dq (nv) then
 * dv (nv), with q (+) dq the exponential map for quaternions (body frame), as MuJoCo's
 * mjd_transitionFD. A model with activations (actuators with dynamics, na = grit_model_na > 0) has the
 * state x = (q, v, act) and tangent dimension nx = 2 nv + na: dq, dv, then dact (docs/conventions.md).
 * Matrices are row-major. */
#ifndef GRIT_DERIVATIVES_H
#define GRIT_DERIVATIVES_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameters a step can be differentiated with respect to. */
typedef enum grit_param_kind {
  GRIT_PARAM_FRICTION = 0,    /* friction of geometry `index`, or of every geometry at once (index -1) */
  GRIT_PARAM_STIFFNESS = 1,   /* contact stiffness, likewise */
  GRIT_PARAM_DISSIPATION = 2, /* Hunt & Crossley dissipation, likewise */
  GRIT_PARAM_MASS = 3,        /* mass of body `index` (>= 1), its rotational inertia scaled with it
                                 (the same shape, a uniformly denser material) */
  GRIT_PARAM_HYDRO_MODULUS = 6 /* hydroelastic modulus of geometry `index`, or of every geometry (-1); a
                                  point-contact geometry's (0) has no effect (docs/hydroelastic.md) */
} grit_param_kind;

typedef struct grit_param {
  grit_param_kind kind;
  int index;
} grit_param;

/* The Jacobians of the LAST step grit_step performed on this data, at its starting state x0, controls
 * u and parameters: A = dx+/dx0 (nx x nx), B = dx+/du (nx x nu), P = dx+/dparams (nx x np) for the
 * np parameters listed in params. Any output may be NULL (then it is not computed). The step's own
 * inputs are kept, so setting the state or controls after the step does not change the result. Fails
 * with GRIT_ERR_STATE if no step was taken since the data was created or reset.
 * Uses the data's workspaces, allocated at creation; refactors the step's Hessian at the solution
 * when the last Newton iteration moved (one factorization). */
GRIT_API grit_status grit_step_derivatives(grit_data *data, double *A, double *B, const grit_param *params, int np,
                                  double *P);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DERIVATIVES_H */
