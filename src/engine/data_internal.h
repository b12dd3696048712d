/* SPDX-License-Identifier: Apache-2.0 */
/* data_internal.h — the layout of grit_data: state, controls, and every workspace, carved from one
 * allocation at creation (arena.h). Nothing here is allocated later. */
#ifndef GRIT_DATA_INTERNAL_H
#define GRIT_DATA_INTERNAL_H

#include "grit/data.h"
#include "collision.h"
#include "grit/step.h"
#include "kinematics.h"

/* Workspaces of modules that read the data: opaque here, so that this header includes none of them (no
 * include cycle); data.c includes their headers to create them. */
typedef struct grit_solver grit_solver;                 /* solver.h */
typedef struct grit_deriv_ws grit_deriv_ws;             /* derivatives.h */
typedef struct grit_variational_ws grit_variational_ws; /* variational.h */
typedef struct grit_afactor grit_afactor;               /* afactor.h */

struct grit_data {
  const grit_model *model;
  double time;
  double *qpos; /* (nq) */
  double *qvel; /* (nv) */
  double *ctrl; /* (nu) */

  /* kinematics and dynamics at the state (double instantiation of the generic code) */
  grit_inertial inertial; /* points at the model's inertial parameters */
  grit_kin kin;
  grit_kin kin0;          /* the last step's start: its kinematics at q0 (grit_step keeps d->kin's buffers here and
                           * computes the new state's in kin0's), which the derivatives need at q0 (+) 0 */
  int kin0_ok;            /* kin0 holds the poses at qprev of grit_kin_positions(qprev, &inertial) */
  int no_kin0;            /* nonzero: no poses kept, the derivatives compute their own (tests) */
  double *M;              /* (nM) mass matrix, tree blocks; written only by grit_crba and grit_crba_kept, so
                             its entries that are no dof-ancestor pair stay 0 from the arena's calloc */
  int no_M_kept;          /* 1: the step's CRBA zeroes M first (the old path); 0 (default): grit_crba_kept */
  double *A;              /* (nM) implicit operator A = M + h D + h^2 K */
  int no_a_pattern;       /* nonzero: the free motion copies M whole into A, as before (forward.c; tests) */
  double *Achol;          /* (nM) its tree-block Cholesky factor (the trees that af factors densely) */
  grit_afactor *af;       /* which trees are factored in tree order, and their factors (afactor.h) */
  int achol_fresh;        /* Achol (af's dense trees) and af (its tree-ordered ones) hold the factor of A as it
                           * stands (cleared where A is rewritten, set once factored): a derivative call takes
                           * them for its own factors of the same A */
  double *bias;           /* (nv) bias forces c(q, v) */
  double *force;          /* (nv) smooth generalized force of the step */
  double *vstar;          /* (nv) free-motion velocity */
  double *cvel_star;      /* (6 nbody) body twists at v*, for the collision's speculative margins */

  /* scratch */
  grit_sinertia *crb;     /* (nbody) composite inertias */
  double *acc, *frc;      /* (6 nbody) RNEA */
  double *qnext;          /* (nq) candidate positions of a step */
  double *vnext;          /* (nv) candidate velocities of a step */

  /* the constrained step */
  grit_step_settings settings;
  grit_step_stats stats;  /* of the last successful step */
  grit_solver *solver;    /* constraints, Jacobian storage, Hessian and its kept factor */
  grit_collision *collision; /* geometry poses, broad phase, contact candidates of the last step */
  int ncontacts;          /* contacts of the last successful step (the first constraints) */
  double *jscratch;       /* (6 nv) a point Jacobian; grit_cx_rows' scratch */
  int *cx_colptr, *cx_cols; /* (neq + ntendon + 1) grit_cx_col_lists: the columns the step's equality and
                           * tendon rows are computed (and zeroed) on; NULL: all nv */
  unsigned char *cx_leaf;  /* (neq + ntendon) grit_cx_leaf_lists: the lists whose one-row estimates
                           * grit_afactor_delassus_row takes (step.c, step_delassus) */
  int no_cx_cols;         /* nonzero: those rows over all nv, as before the lists (tests) */

  /* the last step's inputs and solution, for grit_step_derivatives */
  int has_prev;           /* a step succeeded since creation or reset */
  double *qprev, *vprev, *uprev; /* (nq, nv, nu) the state and controls the step started from */
  double *vsol;           /* (nv) its solution */
  double *Aprev;          /* (nM) its implicit operator */
  int aprev_scratched;    /* Aprev may hold nonzeros off the trees' patterns (a quasistatic free motion's scratch
                           * factor) since its last whole copy of A: the next commit copies A whole (step.c) */
  int no_aprev_pattern;   /* nonzero: the commit copies A whole into Aprev, as before (tests) */
  grit_deriv_ws *deriv;   /* dual-number workspace */
  grit_variational_ws *variational; /* the variational integrator's workspace (variational.h) */
  int prev_integrator;    /* the integrator of the last step (its derivatives: Euler's and quasistatic) */
  int warm_ok;            /* qnext, vsol and vprev describe the step that led to the state, if q and v are still
                             qnext and vsol bit for bit: the next step may warm-start from it (step.c) */
  double *Aphys;          /* (nM) a quasistatic step's physical operator M + h D + h^2 K (its Delassus estimates') */

  /* grit_linearize's copy of the state and controls it replaces, restored if it fails */
  double *qsave, *vsave, *usave; /* (nq, nv, nu) */

  /* actuation (actuation.c, issue 25) */
  double *act;            /* (na) activations: the state's third part */
  double *actin;          /* (nu) the actuators' force inputs at the state (clamped ctrl or act) */
  double *actprev, *actinprev; /* (na, nu) the last step's activations and inputs */
  double *actsave;        /* (na) grit_linearize's copy */

  char message[GRIT_MESSAGE_SIZE];
  void *arena;
};

#endif
