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
 * After a quasistatic step (GRIT_INTEGRATOR_QUASISTATIC) the layout is the same, but the step starts
 * from v0 = 0 whatever the state's velocity: A's velocity columns (nv .. 2nv-1) are exactly zero
 * (docs/quasistatic.md, "Derivatives"). After a variational step: GRIT_ERR_UNSUPPORTED.
 * Matrices are row-major. */
#ifndef GRIT_DERIVATIVES_H
#define GRIT_DERIVATIVES_H

#include <stddef.h>

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

/* ------------------------------------------------------------------ block-sparse A and B (issue #31)
 *
 * Within a step, trees that no constraint couples cannot move each other: the Jacobian of one island's
 * next state with respect to another island's state or controls is zero. The islands here are the
 * connected components of the trees coupled in the last step's Hessian H (the parts of its kept
 * factor; when the factor is one dense part, the components of the graph of every constraint between
 * two trees). A and B are then block-diagonal after a permutation: one dense
 * block per island over its own state tangent indices (its dofs' dq, then their dv, then the
 * activations of its actuators) and its own actuators, so memory and writing follow the coupling
 * rather than nx^2 (at 640 objects the dense A is 472 MB; docs/performance.md gives the blocks' size).
 * Each block's entries are bit for bit those of grit_step_derivatives' dense A and B; every entry of
 * the dense A and B outside the blocks is zero.
 *
 * Activations (na > 0: filters, integrators, muscles): an actuator moves one kinematic tree, and its
 * activation's update act+ = f(act, u) reads only its own activation and control, so the activation
 * belongs to the island of its actuator's tree. Its state index is 2 nv + (its index in act), as in
 * the dense x = (q, v, act); a block's activations come after its dv, in the order of the block's
 * `ctrl` (the actuators without dynamics have none). In a block with p activations: A's last p rows
 * hold d act+ / d act on their diagonal only, A's last p columns the (q, v) rows' d x+ / d act, and B's
 * last p rows d act+ / d u in their actuator's column (an actuator with dynamics has zero (q, v) rows
 * in B: its control reaches the forces one step later). Without activations nothing changes. */
#define GRIT_HAS_JACOBIAN_BLOCKS 1 /* this header declares the block form */
#define GRIT_HAS_JACOBIAN_BLOCKS_ACT 1 /* ... and it supports activations (na > 0), laid out as above */
typedef struct grit_jacobian_blocks grit_jacobian_blocks;

/* One island's block, a view into the container (valid until its next fill or free). */
typedef struct grit_jacobian_block {
  int nx;           /* the block's state dimension, 2 x its dofs + its activations */
  int nu;           /* its actuators */
  const int *state; /* (nx) the block's rows and columns as indices of the full state tangent
                       (0 .. 2nv+na-1): its dofs' dq (< nv), their dv (nv .. 2nv-1), its activations
                       (>= 2nv) */
  const int *ctrl;  /* (nu) its actuators as indices of the full controls */
  const double *A;  /* (nx x nx) row-major, rows and columns in the order of `state` */
  const double *B;  /* (nx x nu) row-major, columns in the order of `ctrl` */
} grit_jacobian_block;

/* A container for a model's block-sparse Jacobians. Its index arrays are sized by the model; its value
 * storage grows (geometrically) when a call needs more room than any earlier one, so that steady use
 * allocates nothing; grit_jacobian_blocks_reserve sets it beforehand. */
GRIT_API grit_status grit_jacobian_blocks_create(const grit_model *m, grit_jacobian_blocks **out);
GRIT_API void grit_jacobian_blocks_free(grit_jacobian_blocks *J);
/* Ensures room for na doubles of A's blocks and nb of B's. */
GRIT_API grit_status grit_jacobian_blocks_reserve(grit_jacobian_blocks *J, size_t na, size_t nb);

/* grit_step_derivatives' A and B of the last step, in block-sparse form, into J (made for this data's
 * model). Same conditions and errors as grit_step_derivatives. */
GRIT_API grit_status grit_step_derivatives_blocks(grit_data *data, grit_jacobian_blocks *J);

/* The number of blocks of the last fill, and block k of it (GRIT_ERR_INVALID_ARGUMENT out of range). */
GRIT_API int grit_jacobian_blocks_count(const grit_jacobian_blocks *J);
GRIT_API grit_status grit_jacobian_blocks_get(const grit_jacobian_blocks *J, int k, grit_jacobian_block *out);
/* The bytes of the values of the last fill (A's and B's blocks), and of the container's storage. */
GRIT_API size_t grit_jacobian_blocks_bytes(const grit_jacobian_blocks *J);
GRIT_API size_t grit_jacobian_blocks_capacity_bytes(const grit_jacobian_blocks *J);
/* Scatters the last fill into dense row-major A (nx x nx) and B (nx x nu), nx = 2 nv + na, zero
 * outside the blocks (either may be NULL): the same matrices as grit_step_derivatives. */
GRIT_API grit_status grit_jacobian_blocks_to_dense(const grit_jacobian_blocks *J, double *A, double *B);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DERIVATIVES_H */
