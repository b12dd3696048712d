/* SPDX-License-Identifier: Apache-2.0 */
/* test_hfield.c — height fields (issue 24): a flat field carries a resting box as a plane does, a sphere
 * rests in a V-shaped valley of two sloped faces at the height geometry gives, the step's derivatives on
 * a sloped field agree with central differences, and (with libmujoco) the dm_control quadruped loads
 * strictly with MuJoCo 2.2.2's nq, nv and nbody and an elevation list is normalized as MuJoCo does. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grit/mjcf.h"
#include "physics_scenes.h"
#ifdef GRIT_TEST_MUJOCO
#include <mujoco/mujoco.h>

#include "model_internal.h"
#endif

static const scene_contact CONTACT = {1.0, 1e6, 10, 0.01};

/* The grid of an nrow x ncol field over [-sx, sx] x [-sy, sy] with elevation f(x, y) (m). */
static double *grid(int nrow, int ncol, double sx, double sy, double (*f)(double, double)) {
  double *g = malloc(sizeof(double) * 3 * (size_t)nrow * (size_t)ncol);
  for (int r = 0; r < nrow; ++r)
    for (int c = 0; c < ncol; ++c) {
      double *p = g + 3 * (r * ncol + c);
      p[0] = sx * (2.0 * c / (ncol - 1) - 1.0);
      p[1] = sy * (2.0 * r / (nrow - 1) - 1.0);
      p[2] = f(p[0], p[1]);
    }
  return g;
}

static double flat(double x, double y) { return 0.0 * x * y; }
static const double SLOPE = 0.3; /* the valley's faces: z = SLOPE |y| */
static double valley(double x, double y) { return 0.0 * x + SLOPE * fabs(y); }

/* A world with the field (or a plane at z = 0 when g is NULL) and one free body carrying `shape`. */
static grit_data *world(const double *g, int nrow, int ncol, grit_shape shape, double mass, double inertia,
                        const double pos[3], grit_model **m) {
  const double gravity[3] = {0, 0, -9.81};
  grit_builder *b = scene_builder(1e-3, gravity);
  grit_geom_def ground = scene_geom(&CONTACT, 0, g ? grit_shape_hfield(g, nrow, ncol, 1.0, 1.0, 0.1)
                                                   : grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  const int body = scene_free_body(b, mass, inertia, inertia, inertia, pos);
  grit_geom_def gd = scene_geom(&CONTACT, body, shape);
  cr_assert_eq(grit_builder_add_geom(b, &gd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return scene_data(b, m, GRIT_CONTACT_SAP);
}

/* Steps n times; returns the body's height and the largest |dz| and speed over the last `tail` steps. */
static double settle(grit_data *d, int n, int tail, double *dz, double *speed) {
  double z0 = 0;
  *dz = *speed = 0;
  for (int k = 0; k < n; ++k) {
    scene_step(d);
    const double z = grit_data_qpos(d)[2];
    if (k == n - tail) z0 = z;
    if (k > n - tail) {
      *dz = fmax(*dz, fabs(z - z0));
      for (int i = 0; i < 6; ++i) *speed = fmax(*speed, fabs(grit_data_qvel(d)[i]));
    }
  }
  return grit_data_qpos(d)[2];
}

/* A 2 kg box of half-size 0.1 m set down across cell boundaries of a flat field (cells 0.2 m wide): its
 * corners lie on different triangles. On the plane z = 0 and on the field it comes to rest at the same
 * height: each corner is one contact of the triangle under it, as each corner is one contact of the
 * plane. Measured: the heights agree to round-off (< 1e-12 m); the compliance is m g / (4 k) = 4.9e-6 m. */
Test(hfield, flat_field_carries_a_box_as_a_plane) {
  double *g = grid(11, 11, 1.0, 1.0, flat);
  const grit_shape box = grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, 0.1);
  const double pos[3] = {0.13, -0.27, 0.1005};
  double z[2], dz[2], v[2];
  for (int k = 0; k < 2; ++k) {
    grit_model *m;
    grit_data *d = world(k ? g : NULL, 11, 11, box, 2.0, 2.0 * 0.02 / 3, pos, &m);
    z[k] = settle(d, 1500, 500, &dz[k], &v[k]);
    grit_data_free(d);
    grit_model_free(m);
  }
  free(g);
  cr_log_info("box rest height: plane %.12f, field %.12f; field jitter %.3g m, speed %.3g m/s", z[0], z[1], dz[1], v[1]);
  const double compliance = 2.0 * 9.81 / (4 * CONTACT.k);
  cr_assert(fabs(z[0] - 0.1) < 2 * compliance, "plane: %g", z[0]);
  cr_assert(fabs(z[1] - z[0]) < 0.01 * compliance, "plane %.12f, field %.12f", z[0], z[1]);
  cr_assert(dz[1] < 0.01 * compliance && v[1] < 1e-4, "jitter %g m, speed %g m/s", dz[1], v[1]);
}

/* Every convex shape grit collides set down on a flat field comes to rest as on the plane z = 0: the
 * same height and orientation (to 1e-7 m and 1e-7 rad, far below the compliance m g / k ~ 1e-5 m; measured
 * 0 for most, 3e-11 for the box, 3e-8 for the ellipsoid's rolling point), the triangles' planes giving
 * the plane's points. A capsule and a cylinder lie on their sides. */
Test(hfield, every_convex_shape_rests_on_a_flat_field_as_on_a_plane) {
  static const double cube[24] = {-.1, -.1, -.1, .1, -.1, -.1, -.1, .1, -.1, .1, .1, -.1,
                                  -.1, -.1, .1,  .1, -.1, .1,  -.1, .1, .1,  .1, .1, .1};
  const grit_shape shapes[6] = {grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0),
                                grit_shape_make(GRIT_GEOM_CAPSULE, 0.05, 0.1, 0),
                                grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.07, 0.05),
                                grit_shape_make(GRIT_GEOM_CYLINDER, 0.08, 0.1, 0),
                                grit_shape_make(GRIT_GEOM_ELLIPSOID, 0.15, 0.1, 0.08),
                                grit_shape_convex(cube, 8)};
  static const double z0[6] = {0.1, 0.05, 0.05, 0.08, 0.08, 0.1};
  double *g = grid(11, 11, 1.0, 1.0, flat);
  for (int s = 0; s < 6; ++s) {
    double q[2][7];
    for (int k = 0; k < 2; ++k) {
      const double gravity[3] = {0, 0, -9.81}, pos[3] = {0.13, -0.27, z0[s] + 5e-4};
      grit_builder *b = scene_builder(1e-3, gravity);
      grit_geom_def ground = scene_geom(&CONTACT, 0, k ? grit_shape_hfield(g, 11, 11, 1.0, 1.0, 0.1)
                                                       : grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
      cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
      const int body = scene_free_body(b, 1.0, 0.004, 0.004, 0.004, pos);
      grit_geom_def gd = scene_geom(&CONTACT, body, shapes[s]);
      if (s == 1 || s == 3) gd.quat[0] = gd.quat[1] = sqrt(0.5); /* the axis along y: on its side */
      cr_assert_eq(grit_builder_add_geom(b, &gd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
      grit_model *m;
      grit_data *d = scene_data(b, &m, GRIT_CONTACT_SAP);
      for (int i = 0; i < 1000; ++i) scene_step(d);
      memcpy(q[k], grit_data_qpos(d), sizeof q[k]);
      grit_data_free(d);
      grit_model_free(m);
    }
    double err = 0;
    for (int i = 0; i < 7; ++i) err = fmax(err, fabs(q[1][i] - q[0][i]));
    cr_log_info("shape type %d: rest height plane %.9f, field %.9f; largest pose difference %.3g",
                (int)shapes[s].type, q[0][2], q[1][2], err);
    cr_assert(fabs(q[0][2] - z0[s]) < 1e-4, "type %d: plane rest height %g", (int)shapes[s].type, q[0][2]);
    cr_assert(err < 1e-7, "type %d: pose differs by %g", (int)shapes[s].type, err);
  }
  free(g);
}

/* A ridge z = 0.3 (1 - |y|): a sphere set on its crest touches the edge between two faces, the prism's
 * GJK/EPA contact (neither face's plane has its foot on its own triangle), and rests at 0.3 + r. */
static double ridge(double x, double y) { return 0.0 * x + SLOPE * (1.0 - fabs(y)); }

Test(hfield, sphere_rests_on_a_ridge) {
  double *g = grid(11, 5, 1.0, 1.0, ridge);
  grit_model *m;
  const double r = 0.1, pos[3] = {0.05, 0.0, SLOPE + r + 1e-3};
  grit_data *d = world(g, 11, 5, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), 1.0, 0.4 * r * r, pos, &m);
  double dz, v;
  const double z = settle(d, 1000, 300, &dz, &v);
  cr_log_info("sphere on the ridge: z %.9f (geometry %.9f), %d contact(s), jitter %.3g, speed %.3g", z, SLOPE + r,
              grit_data_ncontacts(d), dz, v);
  cr_assert(fabs(z - (SLOPE + r)) < 2e-5, "z = %.9f", z);
  cr_assert(v < 1e-4, "speed %g", v);
  grit_data_free(d);
  grit_model_free(m);
  free(g);
}

/* A 1 kg sphere of radius 0.1 m dropped into a valley z = 0.3 |y| comes to rest on both faces: its
 * centre at y = 0, z = r sqrt(1 + 0.3^2) = 0.104403 m, less a compliance of order m g / (2 k cos) = 5e-6. */
Test(hfield, sphere_rests_in_a_sloped_valley) {
  double *g = grid(11, 5, 1.0, 1.0, valley);
  grit_model *m;
  const double r = 0.1, pos[3] = {0.05, 0.02, 0.12};
  grit_data *d = world(g, 11, 5, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), 1.0, 0.4 * r * r, pos, &m);
  double dz, v;
  const double z = settle(d, 3000, 500, &dz, &v), y = grit_data_qpos(d)[1];
  const double expect = r * sqrt(1 + SLOPE * SLOPE);
  cr_log_info("sphere in the valley: z %.9f (geometry %.9f), y %.3g, jitter %.3g, speed %.3g", z, expect, y, dz, v);
  cr_assert(fabs(z - expect) < 2e-5, "z = %.9f, expected %.9f", z, expect);
  cr_assert(fabs(y) < 1e-4, "y = %g", y);
  cr_assert(v < 1e-3, "speed %g", v);
  grit_data_free(d);
  grit_model_free(m);
  free(g);
}

/* ------------------------------------------------------------------------------ derivatives */

static const double DERIV_Q[7] = {0.31, 0.12, 0.1, 1, 0, 0, 0};
static const double DERIV_V[6] = {0.4, -0.1, -0.05, 0.5, 2.0, -1.0};

/* A sphere on the valley's y > 0 face, sliding and turning (one contact, a PLANE feature of the field). */
static double (*deriv_field)(double, double) = valley;

static grit_data *slope_data(grit_model **m, double **g) {
  *g = grid(11, 5, 1.0, 1.0, deriv_field);
  const double pos[3] = {0, 0, 0};
  grit_data *d = world(*g, 11, 5, grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0), 1.0, 0.004, pos, m);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  return d;
}

/* A scene's model and data, built afresh for every step so that no warm start carries over. */
typedef grit_data *(*scene_fn)(grit_model **m, double **g);

/* One step from (q, v) in a fresh copy of the scene: the state relative to qref in the tangent space
 * (nv position differences, then nv velocities). */
static void fresh_step(scene_fn make, const double *q, const double *v, const double *qref, double *out) {
  grit_model *m;
  double *g;
  grit_data *d = make(&m, &g);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  scene_step(d);
  grit_position_difference(m, qref, grit_data_qpos(d), out);
  memcpy(out + nv, grit_data_qvel(d), (size_t)nv * sizeof(double));
  grit_data_free(d);
  grit_model_free(m);
  free(g);
}

/* A = dx+/dx0 of one step from (q0, v0) against central differences (h = 1e-6, scaled by the speed for
 * velocity columns, as test_derivatives.c); positions are perturbed in the tangent space. Returns the
 * relative Frobenius error. */
static double deriv_error(scene_fn make, const double *q0, const double *v0, const char *what) {
  grit_model *m;
  double *g;
  grit_data *d = make(&m, &g);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nx = 2 * nv;
  double *buf = malloc(sizeof(double) * (size_t)(2 * nx * nx + 2 * nx + 3 * nq + 2 * nv));
  cr_assert(buf);
  double *A = buf, *fd = A + nx * nx, *xp = fd + nx * nx, *xm = xp + nx;
  double *qref = xm + nx, *q = qref + nq, *v = q + nq, *e = v + nv;
  cr_assert_eq(grit_data_set_qpos(d, q0, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v0, nv), GRIT_OK);
  scene_step(d);
  cr_assert(grit_data_ncontacts(d) >= 1);
  memcpy(qref, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  for (int col = 0; col < nx; ++col) {
    const double h = 1e-6 * (col < nv ? 1.0 : fmax(1.0, fabs(v0[col - nv])));
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      memcpy(q, q0, sizeof(double) * (size_t)nq);
      memcpy(v, v0, sizeof(double) * (size_t)nv);
      memset(e, 0, sizeof(double) * (size_t)nv);
      if (col < nv) {
        e[col] = sgn * h;
        grit_integrate_positions(m, q, e, 1.0);
      } else {
        v[col - nv] += sgn * h;
      }
      fresh_step(make, q, v, qref, sgn > 0 ? xp : xm);
    }
    for (int i = 0; i < nx; ++i) fd[i * nx + col] = (xp[i] - xm[i]) / (2 * h);
  }
  double num = 0, den = 0;
  for (int i = 0; i < nx * nx; ++i) num += (A[i] - fd[i]) * (A[i] - fd[i]), den += fd[i] * fd[i];
  grit_data_free(d);
  grit_model_free(m);
  free(g);
  free(buf);
  cr_log_info("%s: relative Frobenius error of A %.3g (|FD| %.3g)", what, sqrt(num / den), sqrt(den));
  return sqrt(num / den);
}

/* A sphere 0.3 mm into the valley's y > 0 face, sliding and spinning: one contact, the face's plane (a
 * PLANE feature of the field). Bound 1e-5 relative. */
Test(hfield, derivatives_of_a_sphere_on_a_sloped_field) {
  double q0[7];
  memcpy(q0, DERIV_Q, sizeof q0);
  q0[2] = SLOPE * q0[1] + 0.1 * sqrt(1 + SLOPE * SLOPE) - 3e-4;
  deriv_field = valley;
  const double e = deriv_error(slope_data, q0, DERIV_V, "sloped field");
  cr_assert(e < 1e-5, "relative error %g", e);
}

/* The same on the ridge's crest: the prisms' GJK/EPA contacts, their witness points held as material
 * points of the field. */
Test(hfield, derivatives_of_a_sphere_on_a_ridge) {
  double q0[7];
  memcpy(q0, DERIV_Q, sizeof q0);
  q0[1] = 0.01;
  q0[2] = SLOPE + 0.1 - 3e-4;
  deriv_field = ridge;
  const double e = deriv_error(slope_data, q0, DERIV_V, "ridge");
  cr_assert(e < 1e-5, "relative error %g", e);
}

/* A field on a moving body: a 5 kg free tray carries the valley in its own frame, tilted 0.2 rad about
 * x and placed off the origin; the sphere sits 0.3 mm into the valley's y > 0 face (or on the ridge's
 * crest), and both move and turn. The contact's features are the tray's: A against central differences
 * over both bodies' 24 states. */
static const double TRAY_POS[3] = {0.05, -0.02, 0.03}, TRAY_TILT = 0.2;
static const double TRAY_V[6] = {0.2, -0.3, 0.1, -0.4, 0.7, 0.5}; /* (linear, angular) of a free joint */

static grit_data *tray_data(grit_model **m, double **g) {
  *g = grid(11, 5, 1.0, 1.0, deriv_field);
  const double gravity[3] = {0, 0, -9.81}, zero[3] = {0, 0, 0};
  grit_builder *b = scene_builder(1e-3, gravity);
  const int tray = scene_free_body(b, 5.0, 0.5, 0.6, 0.7, zero);
  grit_geom_def field = scene_geom(&CONTACT, tray, grit_shape_hfield(*g, 11, 5, 1.0, 1.0, 0.1));
  cr_assert_eq(grit_builder_add_geom(b, &field, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  const int ball = scene_free_body(b, 1.0, 0.004, 0.004, 0.004, zero);
  grit_geom_def gd = scene_geom(&CONTACT, ball, grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &gd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_data *d = scene_data(b, m, GRIT_CONTACT_SAP);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  return d;
}

/* The state (q 14, v 12) with the sphere at local point p of the tray (p in the field's frame). */
static void tray_state(const double p[3], double q[14], double v[12]) {
  const double c = cos(TRAY_TILT / 2), s = sin(TRAY_TILT / 2), ct = cos(TRAY_TILT), st = sin(TRAY_TILT);
  const double tq[7] = {TRAY_POS[0], TRAY_POS[1], TRAY_POS[2], c, s, 0, 0};
  memcpy(q, tq, sizeof tq);
  q[7] = TRAY_POS[0] + p[0]; /* R_x(tilt) p */
  q[8] = TRAY_POS[1] + ct * p[1] - st * p[2];
  q[9] = TRAY_POS[2] + st * p[1] + ct * p[2];
  q[10] = 1, q[11] = q[12] = q[13] = 0;
  memcpy(v, TRAY_V, sizeof TRAY_V);
  memcpy(v + 6, DERIV_V, sizeof DERIV_V);
}

static double tray_deriv_error(const double p[3], const char *what) {
  double q0[14], v0[12];
  tray_state(p, q0, v0);
  return deriv_error(tray_data, q0, v0, what);
}

/* On the tray's sloped face (a PLANE feature of the moving field). Bound 1e-5 relative, as on the world. */
Test(hfield, derivatives_of_a_sphere_on_a_moving_sloped_field) {
  deriv_field = valley;
  const double p[3] = {0.31, 0.12, SLOPE * 0.12 + 0.1 * sqrt(1 + SLOPE * SLOPE) - 3e-4};
  const double e = tray_deriv_error(p, "moving sloped field");
  cr_assert(e < 1e-5, "relative error %g", e);
}

/* On the moving ridge's crest (GJK/EPA candidates, edge features held in the tray's frame). */
Test(hfield, derivatives_of_a_sphere_on_a_moving_ridge) {
  deriv_field = ridge;
  const double p[3] = {0.31, 0.01, SLOPE + 0.1 - 3e-4};
  const double e = tray_deriv_error(p, "moving ridge");
  cr_assert(e < 1e-5, "relative error %g", e);
}

#ifdef GRIT_TEST_MUJOCO
/* quadruped.xml (a 201 x 201 field without a file: flat) loads strictly with MuJoCo 2.2.2's sizes, and
 * its feet stand on the field or the floor: 0.5 s of simulation succeeds. */
Test(hfield, dm_control_quadruped_loads_strictly_as_in_mujoco) {
  char path[1024], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/models/dm_control_suite/quadruped.xml", GRIT_SOURCE_DIR);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  grit_model *gm;
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &gm, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(gm->nq, mm->nq);
  cr_assert_eq(gm->nv, mm->nv);
  cr_assert_eq(info.nbody, mm->nbody);
  int nhf = 0;
  for (int g = 0; g < gm->ngeom; ++g) nhf += gm->geom_shape[g].type == GRIT_GEOM_HFIELD;
  cr_assert_eq(nhf, 1);
  cr_assert_eq(mm->nhfield, 1);
  grit_data *d;
  cr_assert_eq(grit_data_create(gm, &d), GRIT_OK);
  for (int k = 0; k < (int)(0.5 / gm->opt.timestep); ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_data_free(d);
  grit_model_free(gm);
  mj_deleteModel(mm);
}

#endif

/* An elevation list (newer than MuJoCo 2.2.2's schema, which has none; MuJoCo's later documented rule):
 * normalized to [0, 1] by (e - min) / (max - min), laid out row by row (rows along y, columns along x),
 * then scaled by size[2]; the base is size[3] deep. */
Test(hfield, elevation_is_normalized_as_mujoco_does) {
  const char *xml = "<mujoco><asset><hfield name='h' nrow='3' ncol='4' size='2 1 0.5 0.2' elevation='"
                    "1 2 3 4  5 6 7 8  9 10 11 13'/></asset><worldbody>"
                    "<geom type='hfield' hfield='h' pos='0 0 0.1'/><body pos='0 0 1'><freejoint/>"
                    "<geom type='sphere' size='0.1'/></body></worldbody></mujoco>";
  const double e[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13};
  grit_model *gm;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &gm, NULL, msg), GRIT_OK, "%s", msg);
  grit_geom_def def;
  grit_model_geom(gm, 0, &def);
  const grit_shape *s = &def.shape;
  cr_assert_eq(s->type, GRIT_GEOM_HFIELD);
  cr_assert_eq(s->nvert, 12);
  cr_assert_eq(s->ncol, 4);
  cr_assert_float_eq(s->size[2], 0.2, 1e-15);
  for (int i = 0; i < 12; ++i) cr_assert_float_eq(s->vertices[3 * i + 2], 0.5 * (e[i] - 1) / 12, 1e-15, "point %d", i);
  cr_assert_float_eq(s->vertices[3 * 11], 2.0, 1e-15);
  cr_assert_float_eq(s->vertices[3 * 11 + 1], 1.0, 1e-15);
  cr_assert_float_eq(s->vertices[3 * 4 + 1], 0.0, 1e-15); /* row 1 of 3: y = 0 */
  grit_model_free(gm);
  /* a file in a model read from memory (no directory to find it in): an error naming the file and line
   * (files: test_hfield_png.c) */
  const char *png = "<mujoco><asset><hfield name='h' file='terrain.png' size='2 1 0.5 0.2'/></asset>\n"
                    "<worldbody/></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(png, &gm, NULL, msg), GRIT_ERR_UNSUPPORTED);
  cr_assert(strstr(msg, "terrain.png") && strstr(msg, ":1:"), "%s", msg);
}
