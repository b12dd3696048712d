/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_smooth.h — the smooth force's partials with respect to v0 and the actuators' inputs u,
 * once per call of grit_step_derivatives, stored sparse (internal; derivatives_smooth.c). The velocity
 * and control passes then add them to the residual instead of re-evaluating the dual force. */
#ifndef GRIT_DERIVATIVES_SMOOTH_H
#define GRIT_DERIVATIVES_SMOOTH_H

#include <stdint.h>

#include "arena.h"
#include "fluid_partials.h"
#include "model_internal.h"

typedef struct grit_deriv_ws grit_deriv_ws;

/* k(q0, v0, u) + bias: damping, springs, the joint, tendon, slider-crank and site actuators (not the
 * bias, the fluid forces in it, or adhesion), as columns: v0's nv, then u's nu. */
typedef struct grit_deriv_smooth {
  int on;            /* this call's velocity and control passes read the partials here */
  int ncolour;       /* colours of the columns: GRIT_DUAL_N per dual evaluation */
  int cap, cap_sup;  /* room for the entries and the transmissions' supports */
  int nword;         /* 64-bit words of a row's set of colours */
  int *ptr, *row;    /* (nv + nu + 1), (cap) each column's rows */
  double *val;       /* (cap) d force_row / d column */
  int *colour;       /* (nv + nu) -1: the column reaches no row */
  double *value;     /* (nv) the force's value */
  int *sup_ptr, *sup; /* (nu + 1), (cap_sup) the dofs where a length-fn actuator's moment J is nonzero */
  int *sup_ptr0, *sup0; /* the same when the pattern and colours were last formed */
  int valid;         /* ptr, row and colour hold the pattern of sup0 (formed once while it stays) */
  int *stamp;        /* (nv) the column that last listed the row */
  int no_holders;    /* nonzero: pattern searches every support for every dof (tests) */
  int *hold_ptr, *hold; /* (nv + 1), (cap_sup) the length-fn actuators whose support holds each dof, in order */
  uint64_t *used;    /* (nv nword) the colours of the columns listed in each row */
  int nlen, *len;    /* (nu) the joint actuators whose force reads their length, in order (the model's) */
  int njoint, *joint; /* (nu) the joint actuators, in order */
  int len_valid;     /* len_c and len_f hold this call's values (cleared with the inputs: derivatives_seed.c) */
  double *len_c;     /* (LEN_C nu) per listed actuator, the values and constants of its position-pass term */
  int *len_f;        /* (nu) its form: 0 the whole evaluation (muscle, clamped), else bits 1 2 4: an affine gain,
                      * an affine bias, the implicit stiffness */
  grit_fluid_partials fl; /* the fluid forces' partials in q0 and v0 (fluid_partials.h) */
} grit_deriv_smooth;

/* Carves the struct and its arrays for model m (maxn: the most dofs of a tree); NULL while measuring. */
grit_deriv_smooth *grit_deriv_smooth_layout(const grit_model *m, int maxn, grit_carver *c);

/* Before the velocity and control passes of a call, at constant positions (q0's and the kinematics'
 * partials zero, v0 and u unseeded): the sparsity of the columns (the transmissions' moments at q0),
 * a colouring of the columns by the rows they reach (Curtis-Powell-Reid), and one dual evaluation of
 * the force per GRIT_DUAL_N colours (after the call's colouring of the trees listed the actuators by
 * tree). Off (the old path) when w->no_smooth > 0, or, with w->no_smooth 0, when those evaluations
 * would not be fewer than the passes by two (a model of one short tree); w->no_smooth < 0: on always
 * (tests). */
void grit_deriv_smooth_prepare(const grit_model *m, grit_deriv_ws *w);

/* A residual evaluation's w->force = -w->bias + the smooth force and tendon actuators (the old path's
 * grit_smooth_force_dual and grit_actuator_tendon_dual). With positions_only (a position pass: only q0
 * seeded; its values are not read, only its partials), the joint actuators whose force does not read
 * their length are left out: their partials are zero there. w->no_smooth_q: all, as before. */
void grit_deriv_smooth_force_positions(const grit_model *m, grit_deriv_ws *w, int positions_only);

/* A velocity or control pass's w->force: -w->bias plus the smooth force with the partials along the
 * seeds of v0 (controls 0) or u (controls 1, a control pass); from the stored columns when on, else by
 * the dual force as before. */
void grit_deriv_smooth_force(const grit_model *m, grit_deriv_ws *w, int controls);

#endif
