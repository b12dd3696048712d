/* SPDX-License-Identifier: Apache-2.0 */
/* lqr_systems.h — the two LQR examples (docs/lqr.md): their models built with grit's builder, the
 * LQR designed on grit's Jacobians, and the closed-loop simulations in grit. Shared by
 * examples/lqr_cartpole.c, examples/ball_on_plate.c and tests/test_lqr.c, so that the test checks
 * exactly what the examples print. */
#ifndef GRIT_EXAMPLES_LQR_SYSTEMS_H
#define GRIT_EXAMPLES_LQR_SYSTEMS_H

#include <stdio.h>

#include "grit/grit.h"

/* ---------------------------------------------------------------------------------- cart-pole */

/* A 1 kg cart on an actuated slide joint along x carries a 1 m, 0.3 kg uniform pole on a hinge about
 * y. q = (cart x, pole angle theta from the upright, positive tipping the top towards +x), v their
 * rates, u the cart's motor force (N). No contact. */
#define LQR_CARTPOLE_CART_MASS 1.0
#define LQR_CARTPOLE_POLE_MASS 0.3
#define LQR_CARTPOLE_POLE_LENGTH 1.0
enum { LQR_CARTPOLE_N = 4, LQR_CARTPOLE_M = 1 };

typedef struct lqr_cartpole {
  /* inputs */
  double dt;       /* time step, s */
  double theta0;   /* initial pole angle, rad */
  double duration; /* closed-loop simulation, s */
  /* the design at the upright (x = 0, u = 0): tangent state (x, theta, xdot, thetadot) */
  double A[LQR_CARTPOLE_N * LQR_CARTPOLE_N], B[LQR_CARTPOLE_N * LQR_CARTPOLE_M];
  double K[LQR_CARTPOLE_M * LQR_CARTPOLE_N], P[LQR_CARTPOLE_N * LQR_CARTPOLE_N];
  double open_radius;   /* spectral radius of A: above 1, the upright is unstable */
  double closed_radius; /* of A + B K */
  int riccati_iterations;
  /* the closed loop */
  double settling_time; /* s: from then on |theta| stays below 1 degree */
  double max_force;     /* largest |u|, N */
  double final_angle;   /* theta at the end, rad */
  double final_cart;    /* cart position at the end, m */
} lqr_cartpole;

/* The model with time step dt. */
grit_status lqr_cartpole_model(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]);

/* Builds, designs and simulates (r's inputs set; its outputs written). csv (may be NULL) receives
 * "t,x,theta,xdot,thetadot,u" per step. */
grit_status lqr_cartpole_run(lqr_cartpole *r, FILE *csv, char msg[GRIT_MESSAGE_SIZE]);

/* ------------------------------------------------------------------------------ ball on plate */

/* A 40 x 40 x 2 cm, 0.5 kg plate on a gimbal: a 0.1 kg frame on a hinge about world y (pitch) carries
 * the plate on a hinge about x (roll); both hinges have a motor (u = pitch and roll torques, N m). The
 * hinge axes cross at the centre of the plate's top face. A 4 cm, 0.1 kg solid ball rests on the
 * plate on a free joint: mu = 1, k = 1e6 N/m, d = 10 s/m. */
#define LQR_BP_BALL_RADIUS 0.02
#define LQR_BP_BALL_MASS 0.1
#define LQR_BP_PLATE_HALF 0.2
#define LQR_BP_PLATE_THICK_HALF 0.01
#define LQR_BP_PLATE_MASS 0.5
#define LQR_BP_FRAME_MASS 0.1
#define LQR_BP_MU 1.0
enum {
  LQR_BP_NQ = 9,  /* pitch, roll, ball (position, quaternion) */
  LQR_BP_NV = 8,  /* pitch, roll rates, ball (world linear velocity, body angular velocity) */
  LQR_BP_N = 16,  /* the full tangent state, 2 nv */
  LQR_BP_NR = 12, /* the reduced state of the design (lqr_bp_keep) */
  LQR_BP_M = 2
};

/* The tangent directions the design keeps, in this order: pitch, roll, ball x, y, z, pitch rate, roll
 * rate, ball vx, vy, vz, wx, wy. Dropped: the ball's orientation (3) and its spin about the normal,
 * w_z: docs/lqr.md explains why. */
extern const int lqr_bp_keep[LQR_BP_NR];

typedef struct lqr_ball_plate {
  /* inputs */
  double dt;
  grit_contact_model contact_model;
  /* the equilibrium: level plate, ball at rest on its centre (found by settling), u = 0 */
  grit_model *model; /* owned: lqr_ball_plate_free */
  double x_eq[LQR_BP_NQ + LQR_BP_NV];
  double eq_residual;  /* max |f(x_eq, 0) (-) x_eq| over the tangent state (m, rad, m/s, rad/s) */
  /* grit's Jacobians at the equilibrium and the design */
  double A[LQR_BP_N * LQR_BP_N], B[LQR_BP_N * LQR_BP_M];
  double Ar[LQR_BP_NR * LQR_BP_NR], Br[LQR_BP_NR * LQR_BP_M]; /* kept rows and columns */
  double decoupling;   /* max |A[kept, dropped]|: the dropped directions feed nothing kept */
  double K[LQR_BP_M * LQR_BP_NR], P[LQR_BP_NR * LQR_BP_NR];
  double open_radius;  /* spectral radius of Ar (1: marginal; the open loop rolls away) */
  double closed_radius;/* of Ar + Br K */
  double full_closed_radius; /* of A + B K on the full state (K zero on the dropped columns): 1 */
  int riccati_iterations;
  int ncontacts_eq;    /* contact candidates in the step at the equilibrium (1: the ball on the plate) */
} lqr_ball_plate;

/* Builds the model (r->dt, r->contact_model), settles the ball, linearizes, designs. */
grit_status lqr_ball_plate_design(lqr_ball_plate *r, char msg[GRIT_MESSAGE_SIZE]);
void lqr_ball_plate_free(lqr_ball_plate *r);

typedef struct lqr_ball_plate_run {
  /* inputs */
  double offset[2]; /* initial ball position on the plate from its centre, m (at rest) */
  double push[2];   /* initial ball velocity, m/s (no spin: a push through its centre) */
  double duration;  /* s */
  /* outputs */
  double final_distance; /* from the plate's centre (in the plate's frame), m, at the end */
  double max_distance;   /* over the run, m */
  double max_tilt;       /* largest angle between the plate's normal and the vertical, rad */
  double max_torque;     /* largest |u_i|, N m */
  int lost_contact_steps;/* steps whose contact impulse was zero (the ball jumped) */
} lqr_ball_plate_run;

/* The closed loop from the equilibrium with the run's offset and push, applying u = K dx_r each step.
 * csv (may be NULL) receives "t,pitch,roll,ball_x,ball_y,ball_z,u_pitch,u_roll,distance". */
grit_status lqr_ball_plate_simulate(const lqr_ball_plate *r, lqr_ball_plate_run *run, FILE *csv,
                                    char msg[GRIT_MESSAGE_SIZE]);

#endif
