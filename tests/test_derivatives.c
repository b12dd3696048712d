/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives.c — the step's Jacobians (implicit function theorem, dual-number residual) against
 * central finite differences of the whole step, in the tangent space of the state.
 *
 * Both the nominal step and the perturbed steps are solved to rel_tol = 1e-10, so that the solver's
 * tolerance does not pollute the differences (at 1e-5 an FD step of 1e-6 would see errors of order 10;
 * 1e-12 is below the round-off floor of some problems, where the solver rightly reports failure).
 * The FD step h = 1e-6 (relative to each column's scale) balances truncation (h^2 times third
 * derivatives that stiff contact makes large) and round-off (1e-16 / h); the measured agreement is
 * 1e-7 .. 1e-9 relative, and the acceptance bound is 1e-5 relative in the Frobenius norm. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/mjcf.h"
#include "physics_scenes.h"

/* The FD step: GRIT_FD_STEP overrides it, for experiments; else the scene's (0: 1e-6). */
static double fd_step_override(void) {
  const char *e = getenv("GRIT_FD_STEP");
  return e ? atof(e) : 0.0;
}

/* A scene: builds its model for given parameter values (friction, stiffness, dissipation) and sets an
 * initial state; runs `settle` steps before the step under test. */
typedef struct scene {
  const char *name;
  grit_model *(*build)(const double prm[4]);
  void (*init)(grit_data *d);
  int settle;
  int contact;   /* the step under test must be in contact */
  int mass_body; /* > 0: also differentiate with respect to this body's mass */
  double mass0;  /* its nominal mass; the build scales mass and inertia by prm[3] */
  double fd_h;   /* FD step (0: 1e-6) */
} scene;

static grit_data *prepare(const scene *sc, const double prm[4], grit_contact_model model, grit_model **m) {
  *m = sc->build(prm);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  sc->init(d);
  for (int i = 0; i < sc->settle; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* One step from (q, v, u) with parameters prm; returns x+ relative to the nominal q+ in the tangent
 * space: out = (diff(qref, q+), v+). */
static void step_from(const scene *sc, const double prm[4], grit_contact_model model, const double *q, const double *v,
                      const double *u, const double *qref, double *out) {
  grit_model *m;
  grit_data *d = prepare(sc, prm, model, &m);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_position_difference(m, qref, grit_data_qpos(d), out);
  memcpy(out + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  grit_data_free(d);
  grit_model_free(m);
}

/* Compares A, B and the parameter Jacobian P (friction, stiffness, dissipation of every geometry)
 * with central differences; returns the worst relative Frobenius error. */
static double check_scene(const scene *sc, grit_contact_model model, int with_params) {
  const double prm[4] = {0.5, 1e6, 10, 1.0}; /* friction, stiffness, dissipation, mass scale */
  grit_model *m;
  grit_data *d = prepare(sc, prm, model, &m);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  const int np = with_params ? (sc->mass_body > 0 ? 4 : 3) : 0;
  double *q0 = malloc(sizeof(double) * nq), *v0 = malloc(sizeof(double) * nv), *u0 = malloc(sizeof(double) * (nu + 1));
  memcpy(q0, grit_data_qpos(d), sizeof(double) * nq);
  memcpy(v0, grit_data_qvel(d), sizeof(double) * nv);
  memcpy(u0, grit_data_ctrl(d), sizeof(double) * nu);
  cr_assert_eq(grit_step(d), GRIT_OK);
  if (sc->contact) { /* the step under test must have an active contact */
    double gn = 0;
    for (int i = 0; i < grit_data_ncontacts(d); ++i) {
      grit_contact_info info;
      grit_data_contact(d, i, &info);
      gn += info.impulse[2];
    }
    cr_assert(gn > 0, "%s, model %d: no active contact in the step under test", sc->name, model);
  }
  double *qref = malloc(sizeof(double) * nq);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  const int ncol = nx + nu + np;
  double *A = calloc((size_t)nx * nx, sizeof(double)), *B = calloc((size_t)nx * (nu + 1), sizeof(double));
  double *P = calloc((size_t)nx * (np + 1), sizeof(double));
  grit_param params[4] = {{GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_STIFFNESS, -1}, {GRIT_PARAM_DISSIPATION, -1},
                          {GRIT_PARAM_MASS, sc->mass_body}};
  cr_assert_eq(grit_step_derivatives(d, A, nu ? B : NULL, params, np, np ? P : NULL), GRIT_OK, "%s",
               grit_data_last_error(d));
  double worst = 0.0;
  double *xp = malloc(sizeof(double) * nx), *xm = malloc(sizeof(double) * nx);
  double *qp = malloc(sizeof(double) * nq), *vp = malloc(sizeof(double) * nv), *up = malloc(sizeof(double) * (nu + 1));
  const double hstep = fd_step_override() > 0 ? fd_step_override() : sc->fd_h > 0 ? sc->fd_h : 1e-6;
  /* per block: state, controls, parameters */
  for (int block = 0; block < 3; ++block) {
    const int c0 = block == 0 ? 0 : block == 1 ? nx : nx + nu, c1 = block == 0 ? nx : block == 1 ? nx + nu : ncol;
    if (c1 == c0) continue;
    double num = 0, den = 0;
    for (int col = c0; col < c1; ++col) {
      double fd[64];
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        double p2[4] = {prm[0], prm[1], prm[2], prm[3]};
        memcpy(qp, q0, sizeof(double) * nq);
        memcpy(vp, v0, sizeof(double) * nv);
        memcpy(up, u0, sizeof(double) * nu);
        double h;
        if (col < nv) { /* q0 (+) h e_col */
          h = hstep;
          double *e = calloc(nv, sizeof(double));
          e[col] = sgn * h;
          grit_integrate_positions(m, qp, e, 1.0);
          free(e);
        } else if (col < nx) {
          h = hstep * fmax(1.0, fabs(v0[col - nv]));
          vp[col - nv] += sgn * h;
        } else if (col < nx + nu) {
          h = hstep * fmax(1.0, fabs(u0[col - nx]));
          up[col - nx] += sgn * h;
        } else { /* parameters; the mass column perturbs the scene's mass scale of mass_body */
          const int k = col - nx - nu;
          h = hstep * prm[k];
          p2[k] += sgn * h;
          if (k == 3) h *= sc->mass0; /* d/d(mass) = d/d(scale) / mass0 */
        }
        step_from(sc, p2, model, qp, vp, up, qref, sgn > 0 ? xp : xm);
        for (int i = 0; i < nx && sgn > 0; ++i) fd[i] = (xp[i] - xm[i]) / (2 * h);
      }
      for (int i = 0; i < nx; ++i) {
        const double an = col < nx ? A[i * nx + col] : col < nx + nu ? B[i * nu + col - nx] : P[i * np + col - nx - nu];
        num += (an - fd[i]) * (an - fd[i]);
        den += fd[i] * fd[i];
      }
    }
    const double rel = sqrt(num) / fmax(sqrt(den), 1e-300);
    cr_log_info("%s, model %d, block %d: relative Frobenius error %.3g (|FD| %.3g)", sc->name, model, block, rel,
                sqrt(den));
    worst = fmax(worst, rel);
  }
  free(q0), free(v0), free(u0), free(qref), free(A), free(B), free(P), free(xp), free(xm), free(qp), free(vp), free(up);
  grit_data_free(d);
  grit_model_free(m);
  return worst;
}

/* ------------------------------------------------------------------------------------ scenes */

static grit_model *free_body_build(const double prm[4]) {
  (void)prm;
  grit_builder *b = scene_builder(1e-3, NULL);
  const double pos[3] = {0.1, -0.2, 1.0};
  scene_free_body(b, 1.3, 0.02, 0.05, 0.06, pos);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  return m;
}
static void free_body_init(grit_data *d) {
  const double v[6] = {0.3, -0.2, 1.0, 2.0, -3.0, 1.5};
  grit_data_set_qvel(d, v, 6);
}

static grit_model *sphere_build(const double prm[4]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  scene_contact c = {.mu = prm[0], .k = prm[1], .d = prm[2], .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double r = 0.05, mass = 0.5, I = 0.4 * mass * r * r, pos[3] = {0, 0, r};
  int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def ball = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0));
  grit_builder_add_geom(b, &ball, NULL);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  return m;
}
static void sliding_init(grit_data *d) {
  double q[7] = {0, 0, 0.05 - 0.5 * 9.81 / 1e6, 1, 0, 0, 0}, v[6] = {1.0, 0.3, 0, 0, 0, 0};
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
}
static void rolling_init(grit_data *d) {
  const double r = 0.05;
  double q[7] = {0, 0, 0.05 - 0.5 * 9.81 / 1e6, 1, 0, 0, 0}, v[6] = {1.0, 0, 0, 0, 1.0 / r, 0};
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
}

/* Sliding at 1 m/s, Similar and SAP glide mu dt |v_t| = 0.5 mm above the ground within a few steps and
 * lose contact (their gliding artifact), so the sliding case tests the launch step itself. */
static const scene FREE_BODY = {"free body in flight", free_body_build, free_body_init, 5, 0, 0, 0, 0};
static const scene SLIDING = {"sphere sliding", sphere_build, sliding_init, 0, 1, 0, 0, 0};
static const scene ROLLING = {"sphere rolling", sphere_build, rolling_init, 20, 1, 0, 0, 0};

/* A 7-joint arm (hinges about alternating axes, off-diagonal inertias, damping, armature, motors on
 * every joint, and a joint limit that is active), no contact. */
static grit_model *arm_build(const double prm[4]) {
  (void)prm;
  grit_builder *b = scene_builder(1e-3, NULL);
  int parent = 0;
  const double axes[7][3] = {{0, 0, 1}, {0, 1, 0}, {0, 0, 1}, {0, 1, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
  for (int i = 0; i < 7; ++i) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = parent;
    bd.pos[2] = i == 0 ? 0.2 : 0.25;
    bd.mass = 2.0 - 0.2 * i;
    bd.com[0] = 0.02;
    bd.com[2] = 0.1;
    const double I[9] = {0.03, 0.002, -0.001, 0.002, 0.025, 0.003, -0.001, 0.003, 0.01};
    memcpy(bd.inertia, I, sizeof I);
    cr_assert_eq(grit_builder_add_body(b, &bd, &parent), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_joint_def jd = grit_default_joint_def();
    memcpy(jd.axis, axes[i], sizeof jd.axis);
    jd.damping = 0.1 * (i + 1);
    jd.armature = 0.01;
    if (i == 3) { /* starts just inside its upper limit, moving into it */
      jd.limited = 1;
      jd.range[0] = -1.0;
      jd.range[1] = 0.3005;
    }
    int j;
    cr_assert_eq(grit_builder_add_joint(b, parent, &jd, &j), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_actuator_def ad = grit_default_actuator_def();
    ad.joint = j;
    ad.gear = 1.0 + 0.5 * i;
    cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_OK);
  }
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  return m;
}
static void arm_init(grit_data *d) {
  const double q[7] = {0.1, -0.4, 0.7, 0.3, -0.2, 0.5, 0.4}, v[7] = {0.5, -0.3, 0.8, 0.6, -1.0, 0.2, 0.9};
  const double u[7] = {1, -2, 0.5, 3, -1, 0.2, 0.7};
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 7);
  grit_data_set_ctrl(d, u, 7);
}
static const scene ARM = {"7-joint arm", arm_build, arm_init, 0, 0, 0, 0, 0};

/* An arm link (a capsule on a motorized hinge about z) sweeping into a ball that slides on the ground:
 * capsule-sphere and sphere-plane contacts, two trees coupled by the push. The ball's mass is a
 * parameter (body 2). */
static grit_model *push_build(const double prm[4]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  scene_contact c = {.mu = prm[0], .k = prm[1], .d = prm[2], .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double rb = 0.05, rc = 0.02;
  grit_body_def link = grit_default_body_def();
  link.mass = 1.0;
  link.com[0] = 0.3;
  link.pos[2] = rb;
  int lb;
  grit_builder_add_body(b, &link, &lb);
  grit_joint_def hinge = grit_default_joint_def();
  int hj;
  grit_builder_add_joint(b, lb, &hinge, &hj);
  grit_actuator_def motor = grit_default_actuator_def();
  motor.joint = hj;
  grit_builder_add_actuator(b, &motor, NULL);
  grit_geom_def cap = scene_geom(&c, lb, grit_shape_make(GRIT_GEOM_CAPSULE, rc, 0.2, 0));
  cap.pos[0] = 0.3; /* along x from 0.1 to 0.5: the capsule's z axis turned onto x */
  cap.quat[0] = cos(0.25 * 3.14159265358979323846);
  cap.quat[2] = sin(0.25 * 3.14159265358979323846);
  cap.contype = 1;
  cap.conaffinity = 2; /* the link touches the ball, not the ground */
  grit_builder_add_geom(b, &cap, NULL);
  const double mass = 0.1 * prm[3], I = 0.4 * mass * rb * rb;
  const double pos[3] = {0.35, rc + rb - 2e-5, rb - 0.1 * 9.81 / prm[1]};
  int ball = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def sph = scene_geom(&c, ball, grit_shape_make(GRIT_GEOM_SPHERE, rb, 0, 0));
  sph.contype = 3;
  sph.conaffinity = 3;
  grit_builder_add_geom(b, &sph, NULL);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}
static void push_init(grit_data *d) {
  double v[7] = {1.0, 0, 0, 0, 0, 0, 0}, u = 0.5; /* the link sweeps towards +y at 1 rad/s */
  grit_data_set_qvel(d, v, 7);
  grit_data_set_ctrl(d, &u, 1);
}
/* FD step 1e-7: at 1e-6 the perturbed steps straddle a contact's breaking velocity v_hat (where the
 * normal law's second derivative jumps) and central differences lose their order (error 1e-1); at 1e-7
 * the state columns agree to 1e-7 and at 1e-8 to 1e-9 (then control columns feel round-off). */
static const scene PUSH = {"arm link pushing a ball", push_build, push_init, 0, 1, 2, 0.1, 1e-7};

/* A box resting on the ground (four corners in stiction). */
static grit_model *box_build(const double prm[4]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  scene_contact c = {.mu = prm[0], .k = prm[1], .d = prm[2], .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double h = 0.05, mass = 1.0 * prm[3], I = mass * (2 * h) * (2 * h) / 6.0;
  const double pos[3] = {0, 0, h - 9.81 / (4 * prm[1])};
  int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def box = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
  grit_builder_add_geom(b, &box, NULL);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  return m;
}
static void box_init(grit_data *d) {
  const double v[6] = {0.0002, 0, 0, 0, 0, 0}; /* a nudge below the stiction scale */
  grit_data_set_qvel(d, v, 6);
}
static const scene RESTING_BOX = {"resting box", box_build, box_init, 50, 1, 1, 1.0, 0};

/* A box resting on a box resting on the ground: box-box and box-plane manifolds, two free bodies coupled
 * by their contact. The top box is smaller, offset and turned about z, so that no edge of one face lies
 * on an edge of the other: there the clipped manifold has a kink (a corner enters or leaves the
 * reference face) and central differences straddle it. Its mass is a parameter (body 2). */
static grit_model *stack_build(const double prm[4]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  scene_contact c = {.mu = prm[0], .k = prm[1], .d = prm[2], .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double h[2] = {0.05, 0.035}, mass[2] = {1.0, 0.4 * prm[3]};
  const double pos[2][3] = {{0, 0, h[0]}, {0.012, -0.008, 2 * h[0] + h[1]}};
  for (int i = 0; i < 2; ++i) {
    const double I = mass[i] * (2 * h[i]) * (2 * h[i]) / 6.0;
    int body = scene_free_body(b, mass[i], I, I, I, pos[i]);
    grit_geom_def box = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h[i], h[i], h[i]));
    grit_builder_add_geom(b, &box, NULL);
  }
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  return m;
}
static void stack_init(grit_data *d) {
  double q[14];
  memcpy(q, grit_data_qpos(d), sizeof q);
  q[10] = cos(0.15), q[13] = sin(0.15); /* the top box turned by 0.3 rad about z */
  const double v[12] = {0, 0, 0, 0, 0, 0, 0.0003, -0.0002, 0, 0, 0, 0.01}; /* a nudge of the top box */
  grit_data_set_qpos(d, q, 14);
  grit_data_set_qvel(d, v, 12);
}
/* FD step 1e-8: the corners rest 1e-6 m deep (m g / 4k at k = 1e6: 3.4e-6 on the ground, 1.0e-6 between
 * the boxes), so a perturbation of 1e-6 lifts some out of contact and central differences straddle the
 * kink; the Lagged model's error falls as h^2 from 0.84 at 1e-6 to 7e-5 at 1e-7 and 7e-7 at 1e-8,
 * Similar's and SAP's are 1e-8 at 1e-8. */
static const scene BOX_STACK = {"box on a box", stack_build, stack_init, 100, 1, 2, 0.4, 1e-8};

/* Curved shapes on the ground whose contact point slides over them as they turn (RIM and SUPPORT
 * features, docs/collision.md): a cylinder tilted onto the rim of its lower face, spinning about the
 * vertical like a coin, and an ellipsoid at a random orientation rolling. Held as material points
 * these witness points gave step Jacobians off by 2e-3 to 9e-3 relative. The shape's mass is a
 * parameter (body 1). */
static grit_model *curved_build(const double prm[4], grit_geom_type type) {
  grit_builder *b = scene_builder(1e-3, NULL);
  scene_contact c = {.mu = prm[0], .k = prm[1], .d = prm[2], .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double mass = 1.0 * prm[3], pos[3] = {0, 0, 0.5}; /* init places it on the ground */
  int body = type == GRIT_GEOM_CYLINDER ? scene_free_body(b, mass, 0.004 * prm[3], 0.004 * prm[3], 0.0032 * prm[3], pos)
                                        : scene_free_body(b, mass, 0.0030 * prm[3], 0.0045 * prm[3], 0.0052 * prm[3], pos);
  grit_geom_def g = scene_geom(&c, body, type == GRIT_GEOM_CYLINDER ? grit_shape_make(GRIT_GEOM_CYLINDER, 0.08, 0.05, 0)
                                                                     : grit_shape_make(GRIT_GEOM_ELLIPSOID, 0.1, 0.07, 0.05));
  grit_builder_add_geom(b, &g, NULL);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}
static grit_model *cylinder_build(const double prm[4]) { return curved_build(prm, GRIT_GEOM_CYLINDER); }
static grit_model *ellipsoid_build(const double prm[4]) { return curved_build(prm, GRIT_GEOM_ELLIPSOID); }

/* The cylinder turned 0.6 rad about x, its lowest rim point 1e-5 m into the ground, spinning at 4 rad/s
 * about the vertical and moving at 0.1 m/s. */
static void cylinder_init(grit_data *d) {
  const double th = 0.6, r = 0.08, h = 0.05;
  double q[7] = {0, 0, h * cos(th) + r * sin(th) - 1e-5, cos(th / 2), sin(th / 2), 0, 0};
  double v[6] = {0.1, 0, 0, 0, 0, 0}, wz = 4.0;
  v[4] = wz * sin(th), v[5] = wz * cos(th); /* the vertical spin in the body frame (turned about x) */
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
}
/* The ellipsoid at a fixed oblique orientation, its lowest point 1e-5 m into the ground, rolling. */
static void ellipsoid_init(grit_data *d) {
  double qr[4] = {0.9, 0.3, -0.2, 0.25}, R[9], D[3] = {0.1, 0.07, 0.05}, s2 = 0.0;
  grit_quat_normalize(qr);
  grit_quat_to_mat(R, qr);
  for (int k = 0; k < 3; ++k) s2 += D[k] * D[k] * R[6 + k] * R[6 + k]; /* (R^T z)^T D^2 (R^T z) */
  double q[7] = {0, 0, sqrt(s2) - 1e-5, qr[0], qr[1], qr[2], qr[3]}, v[6] = {0.2, -0.1, 0, 1.0, 2.0, -0.5};
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
}
/* FD step 1e-8: the differences' error falls as h^2 (truncation through the stiff, turning contact),
 * measured on the state columns for Lagged: cylinder 2.2e-4, 2.2e-6, 2.2e-8 and ellipsoid 9.4e-6,
 * 9.4e-8, 1.6e-9 at h = 1e-6, 1e-7, 1e-8; the other models alike. */
static const scene CYLINDER_RIM = {"cylinder spinning on its rim", cylinder_build, cylinder_init, 20, 1, 1, 1.0, 1e-8};
static const scene ELLIPSOID = {"ellipsoid rolling", ellipsoid_build, ellipsoid_init, 20, 1, 1, 1.0, 1e-8};

Test(derivatives, free_body_in_flight) {
  cr_assert(check_scene(&FREE_BODY, GRIT_CONTACT_LAGGED, 0) <= 1e-5);
}

Test(derivatives, sphere_sliding_all_models_and_parameters) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&SLIDING, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, sphere_rolling_all_models) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&ROLLING, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, arm_without_contact_with_an_active_limit) {
  cr_assert(check_scene(&ARM, GRIT_CONTACT_LAGGED, 0) <= 1e-5);
}

Test(derivatives, arm_link_pushing_a_sliding_ball_all_models) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&PUSH, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, resting_box_in_stiction_all_models) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&RESTING_BOX, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, box_on_a_box_all_models_and_parameters) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&BOX_STACK, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, cylinder_on_its_rim_all_models_and_parameters) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&CYLINDER_RIM, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

Test(derivatives, ellipsoid_rolling_all_models_and_parameters) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&ELLIPSOID, model, 1);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}

/* The 7-joint arm of examples/models/arm7.xml at its keyframes: its links touch each other deeply
 * (self-contacts of capsules, a sphere, boxes and a cylinder, several on the GJK/EPA path, impulses up
 * to 100 N s), a hard case for the contact features: holding the general path's witness points as
 * material points gave 3.4e-2 ("home") and 1.09 ("reach"). */
static const char *ARM7 = GRIT_SOURCE_DIR "/examples/models/arm7.xml";

/* A model file's model, as the file gives it (no parameter columns). */
static grit_model *load_model_file(const char *path) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  return m;
}

static grit_model *arm7_build(const double prm[4]) {
  (void)prm;
  return load_model_file(ARM7);
}

static void apply_file_key(const char *path, grit_data *d, const char *key) {
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, key), d), GRIT_OK);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}
static void arm7_home(grit_data *d) { apply_file_key(ARM7, d, "home"); }
static void arm7_reach(grit_data *d) { apply_file_key(ARM7, d, "reach"); }

static const scene ARM7_HOME = {"arm7.xml at home", arm7_build, arm7_home, 0, 1, 0, 0, 0};
static const scene ARM7_REACH = {"arm7.xml at reach", arm7_build, arm7_reach, 0, 1, 0, 0, 0};

Test(derivatives, arm_model_file_with_deep_self_contacts) {
  double e = check_scene(&ARM7_HOME, GRIT_CONTACT_LAGGED, 0);
  cr_assert(e <= 1e-5, "home: relative error %g", e);
  e = check_scene(&ARM7_REACH, GRIT_CONTACT_LAGGED, 0);
  cr_assert(e <= 1e-5, "reach: relative error %g", e);
}

/* The Kinova Gen3 pushing the ball (examples/models/arm_push_ball.xml, seed 000 XII-D) at its key "push":
 * the end effector's capsule presses on the rolling ball, which presses on the ground (capsule-sphere
 * and sphere-plane contacts coupling the arm's tree and the ball's), motors at their key torques. The
 * file's own contact parameters (k = 2e4 N/m, d = 1 s/m, mu = 0.5), so no parameter columns. */
static const char *ARM_PUSH_BALL = GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml";

static grit_model *arm_push_ball_build(const double prm[4]) {
  (void)prm;
  return load_model_file(ARM_PUSH_BALL);
}
static void arm_push_ball_key(grit_data *d) { apply_file_key(ARM_PUSH_BALL, d, "push"); }

/* FD step 1e-7: the Lagged state block's error falls as h^2 (2.5e-3, 2.0e-4, 2.2e-5, 2.2e-7 at h = 1e-5,
 * 3e-6, 1e-6, 1e-7: truncation, the friction law curving on the 1e-4 m/s stiction scale), 3e-8 at 1e-8;
 * Similar and SAP agree to 1e-9 at 1e-7. */
static const scene ARM_PUSH_BALL_SCENE = {"Kinova arm pushing the ball", arm_push_ball_build, arm_push_ball_key, 0, 1, 0,
                                          0, 1e-7};

Test(derivatives, kinova_arm_pushing_the_ball_all_models) {
  for (int model = 0; model < 3; ++model) {
    double e = check_scene(&ARM_PUSH_BALL_SCENE, model, 0);
    cr_assert(e <= 1e-5, "%s: relative error %g", SCENE_MODEL_NAMES[model], e);
  }
}
