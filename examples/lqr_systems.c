/* SPDX-License-Identifier: Apache-2.0 */
/* lqr_systems.c — the cart-pole and the ball on a plate, their LQR designs on grit's Jacobians and
 * their closed loops (see lqr_systems.h and docs/lqr.md). */
#include "lqr_systems.h"

#include <math.h>
#include <string.h>

#include "grit_ilqr/lqr.h"

static const double PI = 3.14159265358979323846;

/* Copies the builder's message if something failed, compiles otherwise, and frees the builder. */
static grit_status finish_model(grit_builder *b, grit_status s, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  if (s == GRIT_OK) s = grit_builder_compile(b, m);
  if (s != GRIT_OK) snprintf(msg, GRIT_MESSAGE_SIZE, "model: %s", grit_builder_last_error(b));
  grit_builder_free(b);
  return s;
}

static grit_status builder_with_dt(double dt, grit_builder **b, char msg[GRIT_MESSAGE_SIZE]) {
  grit_status s = grit_builder_create(b);
  if (s == GRIT_OK) {
    grit_options opt = grit_default_options();
    opt.timestep = dt;
    s = grit_builder_set_options(*b, &opt);
  }
  if (s != GRIT_OK) {
    grit_builder_free(*b);
    *b = NULL;
    snprintf(msg, GRIT_MESSAGE_SIZE, "model: %s", grit_status_string(s));
  }
  return s;
}

/* ---------------------------------------------------------------------------------- cart-pole */

/* The cost weights, per step, by Bryson's rule: each weight is 1 / (the largest acceptable value)^2 —
 * cart 0.32 m, pole 0.1 rad, cart speed 0.32 m/s, pole rate 1 rad/s, force 3.2 N. Only their ratios
 * matter (scaling Q and R together scales P and leaves K). Measured from 0.3 rad: settles in 1.17 s
 * with at most 28.6 N; R ten times larger settles in 1.53 s with 15.0 N. */
static const double CARTPOLE_Q[LQR_CARTPOLE_N] = {10.0, 100.0, 10.0, 1.0};
static const double CARTPOLE_R = 0.1;

grit_status lqr_cartpole_model(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_status s = builder_with_dt(dt, &b, msg);
  if (s != GRIT_OK) return s;
  grit_body_def cart = grit_default_body_def();
  cart.name = "cart";
  cart.mass = LQR_CARTPOLE_CART_MASS;
  int cart_body = 0;
  s = grit_builder_add_body(b, &cart, &cart_body);
  grit_joint_def slide = grit_default_joint_def();
  slide.name = "cart_x";
  slide.type = GRIT_JOINT_SLIDE;
  slide.axis[0] = 1, slide.axis[1] = 0, slide.axis[2] = 0;
  int slide_joint = 0;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, cart_body, &slide, &slide_joint);
  grit_actuator_def motor = grit_default_actuator_def();
  motor.name = "cart_motor";
  motor.joint = slide_joint;
  if (s == GRIT_OK) s = grit_builder_add_actuator(b, &motor, NULL);

  /* A uniform rod: centre of mass half way up, m L^2 / 12 about the axes across it, and a small
   * moment about its own axis (a thin rod's, which keeps the inertia's triangle inequality). */
  const double L = LQR_CARTPOLE_POLE_LENGTH, mp = LQR_CARTPOLE_POLE_MASS;
  grit_body_def pole = grit_default_body_def();
  pole.name = "pole";
  pole.parent = cart_body;
  pole.mass = mp;
  pole.com[2] = 0.5 * L;
  for (int i = 0; i < 9; ++i) pole.inertia[i] = 0;
  pole.inertia[0] = pole.inertia[4] = mp * L * L / 12;
  pole.inertia[8] = 1e-4 * mp * L * L;
  int pole_body = 0;
  if (s == GRIT_OK) s = grit_builder_add_body(b, &pole, &pole_body);
  grit_joint_def hinge = grit_default_joint_def();
  hinge.name = "pole_hinge";
  hinge.axis[0] = 0, hinge.axis[1] = 1, hinge.axis[2] = 0;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, pole_body, &hinge, NULL);
  return finish_model(b, s, m, msg);
}

grit_status lqr_cartpole_run(lqr_cartpole *r, FILE *csv, char msg[GRIT_MESSAGE_SIZE]) {
  enum { N = LQR_CARTPOLE_N, M = LQR_CARTPOLE_M };
  msg[0] = 0;
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_status s = lqr_cartpole_model(r->dt, &m, msg);
  if (s != GRIT_OK) return s;
  if ((s = grit_data_create(m, &d)) != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "data: %s", grit_status_string(s));
    grit_model_free(m);
    return s;
  }

  /* The upright at rest with no force is an equilibrium: linearize there. */
  const double x_eq[4] = {0, 0, 0, 0}, u_eq[1] = {0};
  s = grit_linearize(d, x_eq, u_eq, r->A, r->B);
  if (s != GRIT_OK) snprintf(msg, GRIT_MESSAGE_SIZE, "%s", grit_data_last_error(d));

  double Q[N * N] = {0}, R[M * M] = {CARTPOLE_R};
  for (int i = 0; i < N; ++i) Q[i * N + i] = CARTPOLE_Q[i];
  grit_ilqr_lqr_info info = {0, 0};
  if (s == GRIT_OK) s = grit_ilqr_lqr_stationary(N, M, r->A, r->B, Q, R, NULL, NULL, r->K, r->P, &info, msg);
  r->riccati_iterations = info.iterations;
  if (s == GRIT_OK) s = grit_ilqr_lqr_closed_loop_radius(N, 0, r->A, NULL, NULL, &r->open_radius, msg);
  if (s == GRIT_OK) s = grit_ilqr_lqr_closed_loop_radius(N, M, r->A, r->B, r->K, &r->closed_radius, msg);

  /* The closed loop: u = u_eq + K (x - x_eq) each step (hinge and slide coordinates: a plain
   * difference is the tangent one). */
  const double q0[2] = {0, r->theta0}, v0[2] = {0, 0};
  if (s == GRIT_OK) s = grit_data_set_time(d, 0);
  if (s == GRIT_OK) s = grit_data_set_qpos(d, q0, 2);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, v0, 2);
  const int steps = (int)(r->duration / r->dt + 0.5);
  r->settling_time = 0;
  r->max_force = 0;
  for (int k = 0; k < steps && s == GRIT_OK; ++k) {
    const double *q = grit_data_qpos(d), *v = grit_data_qvel(d);
    const double dx[4] = {q[0] - x_eq[0], q[1] - x_eq[1], v[0] - x_eq[2], v[1] - x_eq[3]};
    double u = u_eq[0];
    for (int j = 0; j < N; ++j) u += r->K[j] * dx[j];
    r->max_force = fmax(r->max_force, fabs(u));
    if (csv) fprintf(csv, "%.6f,%.9g,%.9g,%.9g,%.9g,%.9g\n", grit_data_time(d), q[0], q[1], v[0], v[1], u);
    s = grit_data_set_ctrl(d, &u, 1);
    if (s == GRIT_OK) s = grit_step(d);
    if (s != GRIT_OK) {
      snprintf(msg, GRIT_MESSAGE_SIZE, "closed loop, step %d: %s", k, grit_data_last_error(d));
      break;
    }
    if (fabs(grit_data_qpos(d)[1]) >= PI / 180) r->settling_time = grit_data_time(d);
  }
  r->final_cart = grit_data_qpos(d)[0];
  r->final_angle = grit_data_qpos(d)[1];
  grit_data_free(d);
  grit_model_free(m);
  return s;
}

/* ------------------------------------------------------------------------------ ball on plate */

const int lqr_bp_keep[LQR_BP_NR] = {0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14};

/* The cost weights of the reduced state, per step, in lqr_bp_keep's order, by Bryson's rule (1 /
 * (acceptable value)^2): ball position 1 cm, plate angles 0.1 rad, ball speed 5 cm/s, plate rates
 * 1 rad/s; torques 0.05 N m. The contact's normal direction (z, vz) and the ball's rolling rates
 * (wx, wy) get no weight: the contact's compliance damps the first, and the second follows the ball's
 * speed while it rolls. */
static const double BP_Q_BRYSON[LQR_BP_NR] = {1 / 0.01, 1 / 0.01, 1 / 1e-4, 1 / 1e-4, 0, 1.0, 1.0,
                                              1 / 0.0025, 1 / 0.0025, 0, 0, 0};
static const double BP_R_BRYSON = 1 / 0.0025;

/* The bodies, in the order they are added: frame 1, plate 2, ball 3. */
enum { BP_PLATE_BODY = 2, BP_BALL_BODY = 3 };

static grit_status ball_plate_model(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]) {
  grit_builder *b = NULL;
  grit_status s = builder_with_dt(dt, &b, msg);
  if (s != GRIT_OK) return s;
  /* The gimbal's frame: pitch about world y. Its inertia is a small ring's. */
  grit_body_def frame = grit_default_body_def();
  frame.name = "frame";
  frame.mass = LQR_BP_FRAME_MASS;
  for (int i = 0; i < 9; ++i) frame.inertia[i] = 0;
  frame.inertia[0] = frame.inertia[4] = 0.5 * LQR_BP_FRAME_MASS * 0.05 * 0.05;
  frame.inertia[8] = LQR_BP_FRAME_MASS * 0.05 * 0.05;
  int frame_body = 0, pitch = 0, roll = 0;
  s = grit_builder_add_body(b, &frame, &frame_body);
  grit_joint_def hinge = grit_default_joint_def();
  hinge.name = "pitch";
  hinge.axis[0] = 0, hinge.axis[1] = 1, hinge.axis[2] = 0;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, frame_body, &hinge, &pitch);

  /* The plate: a box whose top face passes through the hinge axes, so that tilting turns the plate
   * about the ball's contact point at the centre; a uniform box's inertia. Roll about x. */
  const double a = LQR_BP_PLATE_HALF, c = LQR_BP_PLATE_THICK_HALF, mp = LQR_BP_PLATE_MASS;
  grit_body_def plate = grit_default_body_def();
  plate.name = "plate";
  plate.parent = frame_body;
  plate.mass = mp;
  plate.com[2] = -c;
  for (int i = 0; i < 9; ++i) plate.inertia[i] = 0;
  plate.inertia[0] = plate.inertia[4] = mp * (4 * a * a + 4 * c * c) / 12;
  plate.inertia[8] = mp * (8 * a * a) / 12;
  int plate_body = 0;
  if (s == GRIT_OK) s = grit_builder_add_body(b, &plate, &plate_body);
  hinge.name = "roll";
  hinge.axis[0] = 1, hinge.axis[1] = 0, hinge.axis[2] = 0;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, plate_body, &hinge, &roll);
  grit_geom_def box = grit_default_geom_def();
  box.name = "plate";
  box.body = plate_body;
  box.shape = grit_shape_make(GRIT_GEOM_BOX, a, a, c);
  box.pos[2] = -c;
  box.friction = LQR_BP_MU;
  box.stiffness = 1e6;
  box.dissipation = 10;
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &box, NULL);
  grit_actuator_def motor = grit_default_actuator_def();
  motor.name = "pitch_motor";
  motor.joint = pitch;
  if (s == GRIT_OK) s = grit_builder_add_actuator(b, &motor, NULL);
  motor.name = "roll_motor";
  motor.joint = roll;
  if (s == GRIT_OK) s = grit_builder_add_actuator(b, &motor, NULL);

  /* The ball: a solid sphere (2/5 m r^2) on a free joint, starting just touching the plate. */
  const double r = LQR_BP_BALL_RADIUS;
  grit_body_def ball = grit_default_body_def();
  ball.name = "ball";
  ball.mass = LQR_BP_BALL_MASS;
  for (int i = 0; i < 9; ++i) ball.inertia[i] = 0;
  for (int i = 0; i < 3; ++i) ball.inertia[4 * i] = 0.4 * LQR_BP_BALL_MASS * r * r;
  ball.pos[2] = r;
  int ball_body = 0;
  if (s == GRIT_OK) s = grit_builder_add_body(b, &ball, &ball_body);
  grit_joint_def free_joint = grit_default_joint_def();
  free_joint.type = GRIT_JOINT_FREE;
  if (s == GRIT_OK) s = grit_builder_add_joint(b, ball_body, &free_joint, NULL);
  grit_geom_def sphere = box;
  sphere.name = "ball";
  sphere.body = ball_body;
  sphere.shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0);
  sphere.pos[2] = 0;
  if (s == GRIT_OK) s = grit_builder_add_geom(b, &sphere, NULL);
  s = finish_model(b, s, m, msg);
  if (s != GRIT_OK) return s;
  /* The state layout lqr_bp_keep and ball_plate_state rely on: the gimbal's tree, then the ball's. */
  if (plate_body != BP_PLATE_BODY || ball_body != BP_BALL_BODY || grit_model_joint_dofadr(*m, 2) != 2 ||
      grit_model_joint_qposadr(*m, 2) != 2 || grit_model_nq(*m) != LQR_BP_NQ || grit_model_nv(*m) != LQR_BP_NV) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "model: unexpected body or coordinate numbering");
    grit_model_free(*m);
    *m = NULL;
    return GRIT_ERR_INVALID_MODEL;
  }
  return s;
}

/* The reduced tangent state the controller feeds back (lqr_bp_keep's order) at the data's state. The
 * ball's angular velocity is a free joint's, in the ball's body frame; it enters in the world frame:
 * a sphere's dynamics do not depend on its orientation, so in world coordinates its linearization is
 * the same at every orientation, and the ball turns by radians as it rolls centimetres. At x_eq the
 * ball's orientation is the identity, where both frames agree (the design's A, B hold for either). */
static void ball_plate_state(const lqr_ball_plate *r, const grit_data *d, double dxr[LQR_BP_NR]) {
  const double *q = grit_data_qpos(d), *v = grit_data_qvel(d);
  double dq[LQR_BP_NV], w[3];
  grit_position_difference(r->model, r->x_eq, q, dq);
  grit_quat_rotate(w, q + 5, v + 5);
  const double *veq = r->x_eq + LQR_BP_NQ;
  const double dxfull[LQR_BP_N] = {dq[0], dq[1], dq[2], dq[3], dq[4], dq[5], dq[6], dq[7],
                                   v[0] - veq[0], v[1] - veq[1], v[2] - veq[2], v[3] - veq[3], v[4] - veq[4],
                                   w[0] - veq[5], w[1] - veq[6], w[2] - veq[7]};
  for (int i = 0; i < LQR_BP_NR; ++i) dxr[i] = dxfull[lqr_bp_keep[i]];
}

void lqr_ball_plate_free(lqr_ball_plate *r) {
  if (!r) return;
  grit_model_free(r->model);
  r->model = NULL;
}

grit_status lqr_ball_plate_design(lqr_ball_plate *r, char msg[GRIT_MESSAGE_SIZE]) {
  enum { N = LQR_BP_N, NR = LQR_BP_NR, M = LQR_BP_M };
  msg[0] = 0;
  r->model = NULL;
  grit_status s = ball_plate_model(r->dt, &r->model, msg);
  if (s != GRIT_OK) return s;
  grit_data *d = NULL;
  if ((s = grit_data_create(r->model, &d)) != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "data: %s", grit_status_string(s));
    return s;
  }
  grit_step_settings st = grit_default_step_settings();
  st.contact_model = r->contact_model;
  s = grit_data_set_step_settings(d, &st);

  /* The contact state: the ball starts touching the level plate at its centre and settles onto its
   * compliant contact (about mg/k = 1 um deep) in half a second with no torque; by symmetry it stays
   * at the centre. The equilibrium keeps that configuration with zero velocities. */
  const int settle = (int)(0.5 / r->dt + 0.5);
  for (int k = 0; k < settle && s == GRIT_OK; ++k) s = grit_step(d);
  if (s == GRIT_OK) {
    memcpy(r->x_eq, grit_data_qpos(d), sizeof(double) * LQR_BP_NQ);
    memset(r->x_eq + LQR_BP_NQ, 0, sizeof(double) * LQR_BP_NV);
    const double u_eq[M] = {0, 0};
    s = grit_linearize(d, r->x_eq, u_eq, r->A, r->B);
  }
  if (s != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "equilibrium: %s", grit_data_last_error(d));
    grit_data_free(d);
    return s;
  }
  r->ncontacts_eq = grit_data_ncontacts(d);
  /* How far one step from x_eq moves: zero at an exact equilibrium. */
  double dq[LQR_BP_NV];
  grit_position_difference(r->model, r->x_eq, grit_data_qpos(d), dq);
  r->eq_residual = 0;
  for (int i = 0; i < LQR_BP_NV; ++i) {
    r->eq_residual = fmax(r->eq_residual, fabs(dq[i]));
    r->eq_residual = fmax(r->eq_residual, fabs(grit_data_qvel(d)[i]));
  }
  grit_data_free(d);

  /* The reduced model: rows and columns of the kept directions. It is exact, not an approximation,
   * when no dropped direction feeds a kept one (A[kept, dropped] = 0): measured as `decoupling`. */
  int dropped[N], nd = 0;
  for (int j = 0; j < N; ++j) {
    int kept = 0;
    for (int i = 0; i < NR; ++i) kept |= lqr_bp_keep[i] == j;
    if (!kept) dropped[nd++] = j;
  }
  r->decoupling = 0;
  for (int i = 0; i < NR; ++i) {
    for (int j = 0; j < NR; ++j) r->Ar[i * NR + j] = r->A[lqr_bp_keep[i] * N + lqr_bp_keep[j]];
    for (int c = 0; c < M; ++c) r->Br[i * M + c] = r->B[lqr_bp_keep[i] * M + c];
    for (int j = 0; j < nd; ++j) r->decoupling = fmax(r->decoupling, fabs(r->A[lqr_bp_keep[i] * N + dropped[j]]));
  }

  double Q[NR * NR] = {0}, R[M * M] = {0};
  for (int i = 0; i < NR; ++i) Q[i * NR + i] = BP_Q_BRYSON[i];
  for (int i = 0; i < M; ++i) R[i * M + i] = BP_R_BRYSON;
  grit_ilqr_lqr_info info = {0, 0};
  s = grit_ilqr_lqr_stationary(NR, M, r->Ar, r->Br, Q, R, NULL, NULL, r->K, r->P, &info, msg);
  r->riccati_iterations = info.iterations;
  if (s == GRIT_OK) s = grit_ilqr_lqr_closed_loop_radius(NR, 0, r->Ar, NULL, NULL, &r->open_radius, msg);
  if (s == GRIT_OK) s = grit_ilqr_lqr_closed_loop_radius(NR, M, r->Ar, r->Br, r->K, &r->closed_radius, msg);
  if (s == GRIT_OK) {
    double Kfull[M * N] = {0};
    for (int c = 0; c < M; ++c)
      for (int i = 0; i < NR; ++i) Kfull[c * N + lqr_bp_keep[i]] = r->K[c * NR + i];
    s = grit_ilqr_lqr_closed_loop_radius(N, M, r->A, r->B, Kfull, &r->full_closed_radius, msg);
  }
  return s;
}

grit_status lqr_ball_plate_simulate(const lqr_ball_plate *r, lqr_ball_plate_run *run, FILE *csv,
                                    char msg[GRIT_MESSAGE_SIZE]) {
  enum { NR = LQR_BP_NR, M = LQR_BP_M };
  msg[0] = 0;
  grit_data *d = NULL;
  grit_status s = grit_data_create(r->model, &d);
  if (s != GRIT_OK) {
    snprintf(msg, GRIT_MESSAGE_SIZE, "data: %s", grit_status_string(s));
    return s;
  }
  grit_step_settings st = grit_default_step_settings();
  st.contact_model = r->contact_model;
  s = grit_data_set_step_settings(d, &st);

  /* The level plate is at the equilibrium's angles, so an offset along the plate is one in world x, y. */
  double q[LQR_BP_NQ], v[LQR_BP_NV] = {0};
  memcpy(q, r->x_eq, sizeof q);
  q[2] += run->offset[0];
  q[3] += run->offset[1];
  v[2] = run->push[0];
  v[3] = run->push[1];
  if (s == GRIT_OK) s = grit_data_set_qpos(d, q, LQR_BP_NQ);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, v, LQR_BP_NV);

  run->final_distance = run->max_distance = hypot(run->offset[0], run->offset[1]);
  run->max_tilt = run->max_torque = 0;
  run->lost_contact_steps = 0;
  const int steps = (int)(run->duration / r->dt + 0.5);
  for (int k = 0; k < steps && s == GRIT_OK; ++k) {
    double dxr[NR], u[M] = {0, 0};
    ball_plate_state(r, d, dxr);
    for (int c = 0; c < M; ++c) {
      for (int j = 0; j < NR; ++j) u[c] += r->K[c * NR + j] * dxr[j];
      run->max_torque = fmax(run->max_torque, fabs(u[c]));
    }
    s = grit_data_set_ctrl(d, u, M);
    if (s == GRIT_OK) s = grit_step(d);
    if (s != GRIT_OK) {
      snprintf(msg, GRIT_MESSAGE_SIZE, "closed loop, step %d: %s", k, grit_data_last_error(d));
      break;
    }
    double gn = 0;
    for (int c = 0; c < grit_data_ncontacts(d); ++c) {
      grit_contact_info info;
      if (grit_data_contact(d, c, &info) == GRIT_OK) gn += info.impulse[2];
    }
    run->lost_contact_steps += !(gn > 0);

    /* The ball's centre in the plate's frame; the tilt from the plate's normal (its z axis). */
    double pp[3], qp[4], pb[3], rel[3], loc[3], nz[3];
    const double ez[3] = {0, 0, 1};
    grit_body_pose(d, BP_PLATE_BODY, pp, qp);
    grit_body_pose(d, BP_BALL_BODY, pb, NULL);
    grit_v3_sub(rel, pb, pp);
    grit_quat_rotate_inv(loc, qp, rel);
    grit_quat_rotate(nz, qp, ez);
    const double dist = hypot(loc[0], loc[1]), tilt = acos(fmin(1.0, fmax(-1.0, nz[2])));
    run->final_distance = dist;
    run->max_distance = fmax(run->max_distance, dist);
    run->max_tilt = fmax(run->max_tilt, tilt);
    if (csv) {
      const double *qq = grit_data_qpos(d);
      fprintf(csv, "%.6f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", grit_data_time(d), qq[0], qq[1], qq[2], qq[3],
              qq[4], u[0], u[1], dist);
    }
  }
  grit_data_free(d);
  return s;
}
