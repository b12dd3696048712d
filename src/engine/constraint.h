/* SPDX-License-Identifier: Apache-2.0 */
/* constraint.h — one constraint row block of the convex problem (internal): what the constraint builders
 * (constraints.h, constraints_extra.h) fill and the solver (solver.h) minimizes over. Its own header so
 * that the builders need not include the solver, nor the solver the builders' declarations. */
#ifndef GRIT_CONSTRAINT_H
#define GRIT_CONSTRAINT_H

#include "contact_model.h"

typedef enum grit_constraint_kind {
  GRIT_CONSTRAINT_LAGGED = 0,  /* contact, Lagged model */
  GRIT_CONSTRAINT_SIMILAR = 1, /* contact, Similar model */
  GRIT_CONSTRAINT_SAP = 2,     /* contact, SAP model */
  GRIT_CONSTRAINT_LIMIT = 3,   /* one-sided joint limit, 1-D (SAP-style near-rigid) */
  /* docs/contact.md, Joint friction, equality constraints and tendons (constraints_extra.c): */
  GRIT_CONSTRAINT_FRICTION = 4,     /* dry friction on a dof (frictionloss), 1-D */
  GRIT_CONSTRAINT_EQUALITY = 5,     /* bilateral holonomic constraint, 3-D (connect; a weld is two) */
  GRIT_CONSTRAINT_TENDON_LIMIT = 6, /* one-sided tendon length limit, 1-D (as a joint limit) */
  GRIT_CONSTRAINT_TENDON_SPRING = 7, /* a tendon's spring and damper, implicit, 1-D */
  GRIT_CONSTRAINT_EQUALITY_1D = 8,  /* bilateral holonomic constraint, 1-D (joint and tendon couplings) */
  GRIT_CONSTRAINT_TENDON_FRICTION = 9 /* dry friction on a tendon's length (its frictionloss), 1-D */
} grit_constraint_kind;

/* One constraint: its Jacobian rows restricted to the (one or two) trees it touches, its bias and
 * parameters, and the solver's current values for it. */
typedef struct grit_constraint {
  int kind;                 /* grit_constraint_kind */
  int source;               /* contact: its candidate's index; limit: 2 * joint + side (0 lower, 1 upper);
                               friction: the dof; equality: 2 * equality + part (a weld's rotation: 1);
                               tendon limit: 2 * tendon + side; tendon spring, friction: the tendon */
  int dim;                  /* 3 for contacts (t1, t2, n), 1 for limits */
  int ntree;                /* 1 or 2 */
  int tree[2];              /* the trees touched */
  int joff[2];              /* J block of tree[k]: dim x tree_dofnum, row-major, at jstore + joff[k] */
  double b[3];              /* constraint velocity bias: v_c = J v + b */
  grit_contact_params p;    /* model parameters (limits use phi0, Rn, vhat) */
  double w;                 /* Delassus estimate trace(J A^-1 J^T) / dim (0 where the model does not use it) */
  double vc[3], gamma[3], G[9], dvc[3];
  double cost;
  /* Newton's bookkeeping (solver.c): the tangential velocity at the previous iterate, and whether this
   * iteration's Hessian takes Lagged friction's isotropic form for this contact (solver.c: 0 exact, 1 isotropic
   * at its slip, 2 the model of stiction of the first iteration, 3 the primal-dual model with wt) */
  double vt_prev[2];
  int isotropic;
  double gn_start; /* > 0: the first iteration models the contact pressed, with this normal curvature (solver.c) */
  int idle;        /* the last line search proved it without impulse along its whole step (solver.c) */
  int gnz;         /* G has a nonzero entry (solver.c, set with G) */
  double wt[2];    /* the dual estimate of friction's direction, v_t / s at the solution (solver_start.c, ISO_DUAL) */
} grit_constraint;

#endif
