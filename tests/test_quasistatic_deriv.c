/* SPDX-License-Identifier: Apache-2.0 */
/* test_quasistatic_deriv.c — the Jacobians of a quasistatic step (docs/quasistatic.md, "Derivatives")
 * against central finite differences of the quasistatic step itself, in the tangent space of the
 * state: a finger on a position servo pushing a box (each contact model), and seed 002's planar gripper
 * squeezing a sphere, holding it against a pull, and letting it slip.
 *
 * Tolerances: the nominal and the perturbed steps are solved to rel_tol 1e-10 (as test_derivatives.c),
 * and the columns of A (positions), B and P (friction, stiffness, dissipation of every geometry; the
 * box's or the ball's mass) must agree within 1e-5 relative in the Frobenius norm of each block. The
 * velocity columns of A are exactly zero (v is not a quasistatic state: the step starts from v0 = 0),
 * and their finite differences see only the solver's tolerance through the warm start (below 1e-6).
 * The FD step is the scene's: a quasistatic step is smooth here but linear over a narrow range only.
 * Stiff contact (1e6 N/m) against soft servos (1e3 N/m) amplifies: in the slipping gripper a 1 nm shift
 * of the ball moves a finger by 0.5 um within the step (mu k / kp = 500), and the regularized friction
 * changes its slope over a slip of v_s h = 1 um (stiction tolerance 1e-4 m/s, h = 0.01 s). Measured, the
 * FD error falls as the square of the FD step towards the IFT values (truncation) until round-off:
 * slipping gripper 0.76 (1e-6), 6.6e-4 (1e-8), 6.5e-6 (1e-9), 1.6e-6 (5e-10); pushed box, Lagged 2.8e-5
 * (1e-6), 3e-9 (1e-8); SAP 5.9e-3 (1e-6), 5.7e-5 (1e-7), 5.7e-7 (1e-8). Each scene's step lies where
 * every block agrees (docs/quasistatic.md lists them; GRIT_FD_STEP overrides it for experiments). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

/* A scene: an MJCF text with one %.17g, the mass of body `mass_body`; its controls at step i. */
typedef struct qscene {
  const char *name, *xml;
  double dt, mass;     /* the time step; the nominal mass of mass_body */
  int mass_body;       /* > 0: the body whose mass is differentiated */
  int settle;          /* steps before the step under test */
  double fd_h;         /* the FD step: inside the range where the step is linear to 1e-5 (see the header) */
  void (*ctrl)(int i, double dt, double *u);
} qscene;

/* prm: friction, stiffness, dissipation of every geometry, the mass of mass_body. */
static grit_data *make(const qscene *sc, const double prm[4], grit_contact_model model, grit_model **m) {
  char xml[4096];
  snprintf(xml, sizeof xml, sc->xml, prm[3]);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.timestep = sc->dt;
  o.friction = prm[0];
  o.stiffness = prm[1];
  o.dissipation = prm[2];
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), sc->name, &o, m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.integrator = GRIT_INTEGRATOR_QUASISTATIC;
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* One quasistatic step from (q, v, u) with parameters prm: out = (q+ (-) qref, v+). */
static void step_from(const qscene *sc, const double prm[4], grit_contact_model model, const double *q,
                      const double *v, const double *u, const double *qref, double *out) {
  grit_model *m;
  grit_data *d = make(sc, prm, model, &m);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  grit_data_set_qpos(d, q, nq);
  grit_data_set_qvel(d, v, nv);
  grit_data_set_ctrl(d, u, nu);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_position_difference(m, qref, grit_data_qpos(d), out);
  memcpy(out + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  grit_data_free(d);
  grit_model_free(m);
}

typedef struct errors {
  double q, v_fd, v_an, u, p; /* relative errors of A's q columns, B, P; |FD| and |A| on A's v columns */
} errors;

/* Runs the scene to its step under test, takes it, and compares A, B and P with central differences. */
static errors check(const qscene *sc, grit_contact_model model) {
  const double prm[4] = {0.5, 1e6, 10, sc->mass};
  grit_model *m;
  grit_data *d = make(sc, prm, model, &m);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  const int np = sc->mass_body > 0 ? 4 : 3, ncol = nx + nu + np;
  double u0[8], q0[32], v0[32], qref[32], xp[64], xm[64], qp[32], vp[32], up[8];
  for (int i = 0; i <= sc->settle; ++i) {
    sc->ctrl(i, sc->dt, u0);
    grit_data_set_ctrl(d, u0, nu);
    if (i == sc->settle) {
      memcpy(q0, grit_data_qpos(d), sizeof(double) * (size_t)nq);
      memcpy(v0, grit_data_qvel(d), sizeof(double) * (size_t)nv);
    }
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  double gn = 0.0; /* the step under test is in contact */
  for (int i = 0; i < grit_data_ncontacts(d); ++i) {
    grit_contact_info info;
    grit_data_contact(d, i, &info);
    gn += info.impulse[2];
  }
  cr_assert(gn > 0.0, "%s: no contact in the step under test", sc->name);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  double *A = malloc(sizeof(double) * (size_t)(nx * nx)), *B = malloc(sizeof(double) * (size_t)(nx * nu));
  double *P = malloc(sizeof(double) * (size_t)(nx * np));
  for (int i = 0; i < nx * nx; ++i) A[i] = NAN; /* every entry must be written */
  const grit_param params[4] = {{GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_STIFFNESS, -1}, {GRIT_PARAM_DISSIPATION, -1},
                                {GRIT_PARAM_MASS, sc->mass_body}};
  cr_assert_eq(grit_step_derivatives(d, A, B, params, np, P), GRIT_OK, "%s", grit_data_last_error(d));
  for (int i = 0; i < nx; ++i) /* quasistatic contacts have no dissipation: its column is exactly zero */
    cr_expect(P[i * np + 2] == 0.0, "%s: d x+ / d dissipation [%d] = %g", sc->name, i, P[i * np + 2]);
  double num[4] = {0}, den[4] = {0}, vfd = 0.0, van = 0.0;
  for (int col = 0; col < ncol; ++col) {
    const double hs = getenv("GRIT_FD_STEP") ? atof(getenv("GRIT_FD_STEP")) : sc->fd_h; /* for experiments */
    double h = hs;
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double p2[4] = {prm[0], prm[1], prm[2], prm[3]};
      memcpy(qp, q0, sizeof(double) * (size_t)nq);
      memcpy(vp, v0, sizeof(double) * (size_t)nv);
      memcpy(up, u0, sizeof(double) * (size_t)nu);
      if (col < nv) {
        double e[32] = {0};
        e[col] = sgn * h;
        grit_integrate_positions(m, qp, e, 1.0);
      } else if (col < nx) {
        h = hs * fmax(1.0, fabs(v0[col - nv]));
        vp[col - nv] += sgn * h;
      } else if (col < nx + nu) {
        h = hs * fmax(1.0, fabs(u0[col - nx]));
        up[col - nx] += sgn * h;
      } else {
        const int k = col - nx - nu;
        h = hs * fmax(1.0, fabs(prm[k]));
        p2[k] += sgn * h;
      }
      step_from(sc, p2, model, qp, vp, up, qref, sgn > 0 ? xp : xm);
    }
    const int blk = col < nv ? 0 : col < nx ? 1 : col < nx + nu ? 2 : 3;
    for (int i = 0; i < nx; ++i) {
      const double fd = (xp[i] - xm[i]) / (2 * h);
      const double an = col < nx ? A[i * nx + col] : col < nx + nu ? B[i * nu + col - nx] : P[i * np + col - nx - nu];
      cr_assert(isfinite(an), "%s: entry %d of column %d is not finite", sc->name, i, col);
      if (blk == 1) {
        vfd = fmax(vfd, fabs(fd));
        van = fmax(van, fabs(an));
        continue;
      }
      num[blk] += (an - fd) * (an - fd);
      den[blk] += fd * fd;
    }
  }
  errors e;
  e.q = sqrt(num[0] / fmax(den[0], 1e-300));
  e.u = sqrt(num[2] / fmax(den[2], 1e-300));
  e.p = sqrt(num[3] / fmax(den[3], 1e-300));
  e.v_fd = vfd;
  e.v_an = van;
  cr_log_info("%s, model %d: A(q) %.2e, |A(v)| %.1e (FD %.1e), B %.2e, P %.2e", sc->name, (int)model, e.q, e.v_an,
              e.v_fd, e.u, e.p);
  free(A), free(B), free(P);
  grit_data_free(d);
  grit_model_free(m);
  return e;
}

static void expect(const qscene *sc, grit_contact_model model, double tol) {
  const errors e = check(sc, model);
  cr_expect(e.q < tol, "%s, model %d: A's position columns off by %.3g", sc->name, (int)model, e.q);
  cr_expect(e.v_an == 0.0, "%s, model %d: A's velocity columns are not zero (%.3g)", sc->name, (int)model, e.v_an);
  cr_expect(e.v_fd < 1e-6, "%s, model %d: the step moved with v0 (%.3g)", sc->name, (int)model, e.v_fd);
  cr_expect(e.u < tol, "%s, model %d: B off by %.3g", sc->name, (int)model, e.u);
  cr_expect(e.p < tol, "%s, model %d: P off by %.3g", sc->name, (int)model, e.p);
}

/* ------------------------------------------------------------------------------------ scenes */

/* test_quasistatic.c's pushed box (1 kg, 0.1 m, mu 0.5) and finger servo (kp 1000 N/m), at 0.05 s steps. */
static const char PUSH[] =
    "<mujoco><worldbody>"
    "<geom type='plane' size='1 1 0.1'/>"
    "<body name='box' pos='0 0 0.05'><freejoint/><geom type='box' size='0.05 0.05 0.05' mass='%.17g'/></body>"
    "<body name='finger' pos='-0.2 0 0.05'><joint name='x' type='slide' axis='1 0 0'/>"
    "<geom type='sphere' size='0.02' mass='0.1'/></body></worldbody>"
    "<actuator><position joint='x' kp='1000'/></actuator></mujoco>";

/* the command sweeps from 0 to 0.3 m over 3 s; the finger (at -0.2 m) reaches the box near 0.2 s */
static void push_ctrl(int i, double dt, double *u) { u[0] = 0.1 * dt * (i + 1); }

static const qscene PUSHED = {"pushed box", PUSH, 0.05, 1.0, 1, 40, 1e-8, push_ctrl};

/* The box is sliding in the step under test (1 s): Coulomb friction at mu m g, Lagged. */
Test(quasistatic_deriv, pushed_box_lagged) { expect(&PUSHED, GRIT_CONTACT_LAGGED, 1e-5); }

/* SAP: its regularization uses the Delassus estimates, from M + h D + h^2 K (the free box's constant factor). */
Test(quasistatic_deriv, pushed_box_sap) { expect(&PUSHED, GRIT_CONTACT_SAP, 1e-5); }

Test(quasistatic_deriv, pushed_box_similar) { expect(&PUSHED, GRIT_CONTACT_SIMILAR, 1e-5); }

/* test_quasistatic.c's planar gripper (seed 002, section V-A): the ball on x, z slides, two box fingers
 * on x, z slides with servos of kp 1000 N/m, 0.01 s steps. */
static const char GRIP[] =
    "<mujoco><worldbody>"
    "<geom type='plane' size='1 1 0.1'/>"
    "<body name='ball' pos='0 0 0.1'><joint name='bx' type='slide' axis='1 0 0'/>"
    "<joint name='bz' type='slide' axis='0 0 1'/>"
    "<geom type='sphere' size='0.1' mass='%.17g'/></body>"
    "<body name='left' pos='-0.125 0 0.1'><joint name='lx' type='slide' axis='1 0 0'/>"
    "<joint name='lz' type='slide' axis='0 0 1'/>"
    "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body>"
    "<body name='right' pos='0.125 0 0.1'><joint name='rx' type='slide' axis='1 0 0'/>"
    "<joint name='rz' type='slide' axis='0 0 1'/>"
    "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body></worldbody>"
    "<actuator><position joint='lx' kp='1000'/><position joint='lz' kp='1000'/>"
    "<position joint='rx' kp='1000'/><position joint='rz' kp='1000'/></actuator></mujoco>";

/* test_quasistatic.c's schedule: close at 0.1 m/s to a 1 cm squeeze, then pull down at 5 mm/s from 0.2 s */
static void grip_ctrl(int i, double dt, double *u) {
  const double t = dt * (i + 1), close = fmin(0.1 * t, 0.015), down = t > 0.2 ? -0.005 * (t - 0.2) : 0.0;
  u[0] = close, u[1] = down, u[2] = -close, u[3] = down;
}

static const qscene SQUEEZE = {"gripper squeezing", GRIP, 0.01, 1.0193679918450562, 1, 15, 1e-6, grip_ctrl};
static const qscene HOLD = {"gripper holding a pull", GRIP, 0.01, 1.0193679918450562, 1, 60, 5e-8, grip_ctrl};
static const qscene SLIP = {"gripper slipping", GRIP, 0.01, 1.0193679918450562, 1, 200, 5e-10, grip_ctrl};

/* Squeezing (t = 0.16 s), holding against a pull below 2 mu f (stiction, t = 0.6 s), and slipping
 * (t = 2 s): the fingers slide down the ball held by the ground. */
Test(quasistatic_deriv, gripper_squeezing_holding_slipping) {
  expect(&SQUEEZE, GRIT_CONTACT_LAGGED, 1e-5);
  expect(&HOLD, GRIT_CONTACT_LAGGED, 1e-5);
  expect(&SLIP, GRIT_CONTACT_LAGGED, 1e-5);
}
