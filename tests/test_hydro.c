/* SPDX-License-Identifier: Apache-2.0 */
/* test_hydro.c — hydroelastic contact patches (seed 004; src/engine/hydro.c): declaring a geometry
 * compliant, a sphere and a box resting on a plane (the weight carried, the centre of pressure under
 * the centre of mass), the sliding and spinning coin of seed 004 section V-A, and what is refused. */
#include <stdio.h>

#include "grit/mjcf.h"
#include "physics_scenes.h"

static const double G = 9.81;

/* A free body with one geometry of the given shape, modulus E and friction mu on a ground plane. */
static grit_data *on_plane(grit_model **m, grit_contact_model model, grit_shape shape, double E, double mu,
                           double mass, const double inertia[3], const double pos[3]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  const scene_contact c = {.mu = mu, .k = 1e6, .d = 10, .tau_d = 0.01};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const int body = scene_free_body(b, mass, inertia[0], inertia[1], inertia[2], pos);
  grit_geom_def g = scene_geom(&c, body, shape);
  g.hydro_modulus = E;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return scene_data(b, m, model);
}

/* Sum of the contacts' vertical (world z) impulses on the moving body (the world is body 0) and their
 * impulse-weighted centre (world); on a plane the vertical impulse is the normal one. */
static double normal_impulse(const grit_data *d, double centre[3]) {
  double sum = 0.0, acc[3] = {0, 0, 0};
  for (int i = 0; i < grit_data_ncontacts(d); ++i) {
    grit_contact_info ci;
    cr_assert_eq(grit_data_contact(d, i, &ci), GRIT_OK);
    const double sg = ci.body[1] > 0 ? 1.0 : -1.0; /* the impulse is geom[1]'s, minus on geom[0]'s */
    const double z = sg * (ci.frame[6] * ci.impulse[0] + ci.frame[7] * ci.impulse[1] + ci.frame[8] * ci.impulse[2]);
    sum += z;
    for (int k = 0; k < 3; ++k) acc[k] += z * ci.pos[k];
  }
  for (int k = 0; k < 3; ++k) centre[k] = sum > 0 ? acc[k] / sum : 0.0;
  return sum;
}

Test(hydro, declaring) {
  grit_geom_def g = grit_default_geom_def();
  cr_assert_eq(g.hydro_modulus, 0.0, "point contact by default");
  grit_builder *b = scene_builder(1e-3, NULL);
  g.hydro_modulus = 1e6;
  g.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_ERR_UNSUPPORTED, "a compliant plane");
  g.shape = grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.2, 0);
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "a compliant capsule");
  g.hydro_modulus = -1;
  g.shape = grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0);
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_ERR_INVALID_MODEL);
  g.hydro_modulus = 2e7;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_geom_def back;
  cr_assert_eq(grit_model_geom(m, 1, &back), GRIT_OK);
  cr_assert_eq(back.hydro_modulus, 2e7);
  grit_model_free(m);
}

/* At rest the patches carry the weight: the step's momentum balance with v = v0 = 0 leaves
 * sum gamma_n = m g dt. 1e-6 relative: the Newton tolerance (rel_tol 1e-5 on the residual, which at
 * rest is far below it after the settling steps). */
Test(hydro, resting_sphere_carries_its_weight) {
  const double r = 0.05, mass = 1.0, I = 0.4 * mass * r * r, inertia[3] = {I, I, I}, pos[3] = {0.1, -0.2, r};
  for (int model = 0; model < 3; ++model) {
    grit_model *m;
    grit_data *d = on_plane(&m, model, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), 1e6, 0.5, mass, inertia, pos);
    for (int i = 0; i < 2000; ++i) scene_step(d);
    double c[3];
    const double sum = normal_impulse(d, c), expect = mass * G * 1e-3;
    printf("hydro: %s sphere at rest: %d patches carry %.12g N s, m g dt = %.12g (relative %.2g), penetration "
           "%.4g mm\n",
           SCENE_MODEL_NAMES[model], grit_data_ncontacts(d), sum, expect, (sum - expect) / expect,
           1e3 * (r - grit_data_qpos(d)[2]));
    cr_assert(grit_data_ncontacts(d) > 1, "several patches");
    cr_assert(fabs(sum - expect) <= 1e-6 * expect, "%s: %.12g vs %.12g", SCENE_MODEL_NAMES[model], sum, expect);
    double pa = 0, area_sum = 0; /* grit_data_contact_patch: pressure x area x dt is the normal impulse */
    for (int i = 0; i < grit_data_ncontacts(d); ++i) {
      double a, p;
      cr_assert_eq(grit_data_contact_patch(d, i, &a, &p), GRIT_OK);
      cr_assert(a > 0, "a patch's area");
      pa += p * a * 1e-3, area_sum += a;
    }
    cr_assert(fabs(pa - sum) <= 1e-12 * sum, "%.12g vs %.12g", pa, sum);
    cr_assert(area_sum > 0.25 * 3.14159 * 2 * r * 2e-3, "contact area %g m^2", area_sum); /* ~ pi 2 r depth */
    cr_assert_eq(grit_data_contact_patch(d, grit_data_ncontacts(d), NULL, NULL), GRIT_ERR_INVALID_ARGUMENT);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A box resting flat, placed off the origin and turned about z: the centre of its patches' normal
 * impulses lies under its centre of mass (the moment balance at rest); 1e-6 m. */
Test(hydro, resting_box_pressure_centre_under_com) {
  const double hs[3] = {0.1, 0.05, 0.02}, mass = 2.0;
  const double inertia[3] = {mass * (hs[1] * hs[1] + hs[2] * hs[2]) / 3, mass * (hs[0] * hs[0] + hs[2] * hs[2]) / 3,
                             mass * (hs[0] * hs[0] + hs[1] * hs[1]) / 3};
  const double pos[3] = {0.3, -0.2, hs[2]};
  for (int model = 0; model < 3; ++model) {
    grit_model *m;
    grit_data *d =
        on_plane(&m, model, grit_shape_make(GRIT_GEOM_BOX, hs[0], hs[1], hs[2]), 1e7, 0.5, mass, inertia, pos);
    double q[7];
    memcpy(q, grit_data_qpos(d), sizeof q);
    q[3] = cos(0.3); /* turned 0.6 rad about z */
    q[6] = sin(0.3);
    cr_assert_eq(grit_data_set_qpos(d, q, 7), GRIT_OK);
    for (int i = 0; i < 2000; ++i) scene_step(d);
    double c[3];
    const double sum = normal_impulse(d, c), *x = grit_data_qpos(d);
    const double off = hypot(c[0] - x[0], c[1] - x[1]);
    printf("hydro: %s box at rest: %d patches, impulse / (m g dt) - 1 = %.2g, pressure centre %.3g m from the "
           "centre of mass\n",
           SCENE_MODEL_NAMES[model], grit_data_ncontacts(d), sum / (mass * G * 1e-3) - 1, off);
    cr_assert(fabs(sum - mass * G * 1e-3) <= 1e-6 * mass * G * 1e-3, "%s: weight", SCENE_MODEL_NAMES[model]);
    cr_assert(off <= 1e-6, "%s: centre of pressure %.3g m off", SCENE_MODEL_NAMES[model], off);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Seed 004 section V-A: a US quarter (R 1.213 cm, thickness 1.75 mm, 5.67 g, mu 0.2, E 1 GPa, dt 1 ms)
 * sliding and spinning on a plane; v / (omega R) tends to eps* = 0.653 (uniform pressure, analytical)
 * from any start. Returns eps when v + omega R first falls below 1e-3 of its start (5 mm/s, 50 times
 * the stiction tolerance, where the regularized friction starts to bend the ratio). */
static double coin_ratio(grit_contact_model model, double eps0) {
  const double R = 0.01213, h = 0.000875, mass = 0.00567;
  const double ixx = mass * (3 * R * R + 4 * h * h) / 12, inertia[3] = {ixx, ixx, 0.5 * mass * R * R};
  const double pos[3] = {0, 0, h};
  grit_model *m;
  grit_data *d = on_plane(&m, model, grit_shape_make(GRIT_GEOM_CYLINDER, R, h, 0), 1e9, 0.2, mass, inertia, pos);
  for (int i = 0; i < 100; ++i) scene_step(d); /* settle onto the patches */
  const double top = 5.0;                      /* the larger of v and omega R at the start, m/s */
  double v[6] = {0};
  v[0] = eps0 >= 1 ? top : top * eps0;
  v[5] = (eps0 >= 1 ? top / eps0 : top) / R;
  cr_assert_eq(grit_data_set_qvel(d, v, 6), GRIT_OK);
  const double s0 = v[0] + v[5] * R;
  double eps = NAN;
  for (int i = 0; i < 20000; ++i) {
    scene_step(d);
    const double *u = grit_data_qvel(d), lin = hypot(u[0], u[1]), rot = fabs(u[5]) * R;
    if (lin + rot < 1e-3 * s0) {
      eps = lin / rot;
      break;
    }
  }
  grit_data_free(d);
  grit_model_free(m);
  return eps;
}

/* The acceptance: from initial ratios 0.25 to 4 the coin ends within [0.634, 0.663] (the
 * analytical 0.653 and seed 004's 152-triangle disk's 0.644, 1.5 % either way). With the seed's fan of
 * 152 triangles per cap (hydro_mesh.c) the measured values are 0.640 ... 0.643 (docs/hydroelastic.md);
 * they agree with each other to 0.003, asserted at 0.01. */
Test(hydro, coin_sliding_and_spinning) {
  const double eps0[5] = {0.25, 0.5, 1, 2, 4};
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < 5; ++k) {
    const double e = coin_ratio(GRIT_CONTACT_LAGGED, eps0[k]);
    printf("hydro: coin, lagged: eps0 %.2f -> eps %.4f\n", eps0[k], e);
    cr_assert(e >= 0.634 && e <= 0.663, "eps0 %g: eps %g", eps0[k], e);
    lo = fmin(lo, e);
    hi = fmax(hi, e);
  }
  cr_assert(hi - lo <= 0.01, "spread %g", hi - lo);
}

/* examples/models/coin_hydro.xml as its comment says to run it: from key slide_spin (eps0 = 1, 0.5 m/s)
 * the coin slides for ~0.35 s (0.5 m/s at mu g = 1.96 m/s^2 takes at least 0.25 s) and ends at the seed's
 * ratio. Its key once placed the coin exactly touching: the first step fell 9.8 um into the field and the
 * second stopped the coin (v 0.5 -> 0.002 m/s in 1 ms, far past mu g dt). */
Test(hydro, example_key_slides_to_the_ratio) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/examples/models/coin_hydro.xml", GRIT_SOURCE_DIR);
  grit_model *m = NULL;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, "slide_spin"), d), GRIT_OK);
  const double R = 0.01213, s0 = 1.0; /* v + omega R at the key */
  double eps = NAN, t_end = NAN;
  for (int i = 0; i < 1000 && isnan(eps); ++i) {
    cr_assert_eq(grit_step(d), GRIT_OK);
    const double *u = grit_data_qvel(d), lin = hypot(u[0], u[1]), rot = fabs(u[5]) * R;
    if (i < 100) cr_assert(lin > 0.3, "step %d: the coin stopped early (v %g m/s)", i, lin);
    if (lin + rot < 1e-2 * s0) eps = lin / rot, t_end = grit_data_time(d);
  }
  printf("hydro: coin_hydro.xml@slide_spin: eps %.4f at t %.3f s\n", eps, t_end);
  cr_assert(eps >= 0.634 && eps <= 0.663, "eps %g", eps);
  cr_assert(t_end > 0.25, "stopped at %g s", t_end);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* A static geometry `base` (modulus Eb) on the world and a free body with one geometry `shape` (modulus
 * E) at pos above it. */
static grit_data *on_base(grit_model **m, grit_contact_model model, grit_shape base, const double base_pos[3],
                          double Eb, grit_shape shape, double E, double mass, const double inertia[3],
                          const double pos[3]) {
  grit_builder *b = scene_builder(1e-3, NULL);
  const scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 0.01};
  grit_geom_def g0 = scene_geom(&c, 0, base);
  for (int i = 0; i < 3; ++i) g0.pos[i] = base_pos[i];
  g0.hydro_modulus = Eb;
  cr_assert_eq(grit_builder_add_geom(b, &g0, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  const int body = scene_free_body(b, mass, inertia[0], inertia[1], inertia[2], pos);
  grit_geom_def g = scene_geom(&c, body, shape);
  g.hydro_modulus = E;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return scene_data(b, m, model);
}

/* Rigid partners other than planes: a compliant sphere resting on a rigid box (the box's top face
 * clipped by the sphere's tetrahedra, then to the face) carries its weight (1e-6 relative, as on a plane)
 * with the patches' centre under its centre of mass (1e-6 m). A rigid sphere (the faces of its inscribed
 * 12 x 24 latitude-longitude polyhedron) on a compliant box, pole down over a vertex of the box face's
 * grid, where the patches are symmetric under a half turn: the same. Placed off the grid's vertices, one
 * point per polygon does not integrate the moment exactly and the faceted ball rolls slowly off its pole
 * (3 mm in 3 s, decaying; docs/hydroelastic.md). */
Test(hydro, rigid_box_and_sphere_partners) {
  const double r = 0.05, mass = 1.0, I = 0.4 * mass * r * r, inertia[3] = {I, I, I};
  const double hs[3] = {0.3, 0.2, 0.1}, bpos[3] = {0, 0, -0.1}, pos[2][3] = {{0.07, -0.04, r}, {0, 0, r}};
  const grit_shape sphere = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0);
  const grit_shape box = grit_shape_make(GRIT_GEOM_BOX, hs[0], hs[1], hs[2]);
  for (int which = 0; which < 2; ++which)
    for (int model = 0; model < 3; ++model) {
      grit_model *m;
      grit_data *d = which == 0 ? on_base(&m, model, box, bpos, 0, sphere, 1e6, mass, inertia, pos[0])
                                : on_base(&m, model, box, bpos, 1e6, sphere, 0, mass, inertia, pos[1]);
      for (int i = 0; i < 2000 * (which + 1); ++i) scene_step(d); /* the ball on the box creeps up for 3 s */
      double c[3];
      const double sum = normal_impulse(d, c), expect = mass * G * 1e-3, *x = grit_data_qpos(d);
      const double off = hypot(c[0] - x[0], c[1] - x[1]);
      printf("hydro: %s, %s: %d patches carry m g dt to %.2g relative, centre %.3g m from under the centre of mass, "
             "sunk %.4g mm\n",
             which == 0 ? "compliant sphere on a rigid box" : "rigid sphere on a compliant box",
             SCENE_MODEL_NAMES[model], grit_data_ncontacts(d), (sum - expect) / expect, off, 1e3 * (r - x[2]));
      cr_assert(grit_data_ncontacts(d) > 1, "several patches");
      cr_assert(fabs(sum - expect) <= 1e-6 * expect, "%s: %.12g vs %.12g", SCENE_MODEL_NAMES[model], sum, expect);
      cr_assert(off <= 1e-6, "centre %g m off", off);
      grit_data_free(d);
      grit_model_free(m);
    }
}

/* ---------------------------------------------------------------- derivatives through patches */

/* The coin for the derivative checks: parameters prm = (friction, dissipation, modulus). A softer coin
 * than seed 004's (E 1e5 Pa: about 1 um deep) so that central differences of 1e-9 m stay far inside
 * the patches' topology (no tetrahedron vertex crosses the plane). `jointed`: on three slides and three
 * hinges with motors on the x slide and the z hinge (for B), else a free body. */
static grit_model *deriv_ball(const double prm[3]);

static grit_model *deriv_coin(const double prm[3], int jointed) {
  if (jointed == 2) return deriv_ball(prm);
  const double R = 0.01213, h = 0.000875, mass = 0.00567, ixx = mass * (3 * R * R + 4 * h * h) / 12;
  grit_builder *b = scene_builder(1e-3, NULL);
  const scene_contact c = {.mu = prm[0], .k = 1e6, .d = prm[1], .tau_d = 0.01};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const double pos[3] = {0.01, -0.02, h - 1e-6};
  int body;
  if (!jointed) {
    body = scene_free_body(b, mass, ixx, ixx, 0.5 * mass * R * R, pos);
  } else {
    grit_body_def bd = grit_default_body_def();
    bd.mass = mass;
    memset(bd.inertia, 0, sizeof bd.inertia);
    bd.inertia[0] = bd.inertia[4] = ixx;
    bd.inertia[8] = 0.5 * mass * R * R;
    for (int i = 0; i < 3; ++i) bd.pos[i] = pos[i];
    cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK);
    for (int j = 0; j < 6; ++j) {
      grit_joint_def jd = grit_default_joint_def();
      jd.type = j < 3 ? GRIT_JOINT_SLIDE : GRIT_JOINT_HINGE;
      jd.axis[0] = j % 3 == 0, jd.axis[1] = j % 3 == 1, jd.axis[2] = j % 3 == 2;
      cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    for (int k = 0; k < 2; ++k) {
      grit_actuator_def a = grit_default_actuator_def();
      a.joint = k == 0 ? 0 : 5;
      a.gear = k == 0 ? 1.0 : 0.01;
      cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
  }
  grit_geom_def g = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_CYLINDER, R, h, 0));
  g.hydro_modulus = prm[2];
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* A rigid ball (r 5 cm, 0.1 kg; its faces clip the sections) 1 mm into a static compliant box of
 * modulus prm[2] (geometry 0), off the box face's grid vertices. */
static grit_model *deriv_ball(const double prm[3]) {
  const double r = 0.05, mass = 0.1, I = 0.4 * mass * r * r, pos[3] = {0.04, -0.03, r - 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  const scene_contact c = {.mu = prm[0], .k = 1e6, .d = prm[1], .tau_d = 0.01};
  grit_geom_def g0 = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_BOX, 0.3, 0.2, 0.1));
  g0.pos[2] = -0.1;
  g0.hydro_modulus = prm[2];
  cr_assert_eq(grit_builder_add_geom(b, &g0, NULL), GRIT_OK);
  const int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def g = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* One step of the coin from (q, v, u) with parameters prm, tightly solved; x+ = (q+ - qref, v+). */
static void deriv_step(grit_contact_model model, const double prm[3], int jointed, const double *q, const double *v,
                       const double *u, const double *qref, double *x, grit_model **keep_m, grit_data **keep_d) {
  grit_model *m = deriv_coin(prm, jointed);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-12;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  if (q) cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  scene_step(d);
  if (qref) grit_position_difference(m, qref, grit_data_qpos(d), x);
  else memset(x, 0, sizeof(double) * nv);
  memcpy(x + nv, grit_data_qvel(d), sizeof(double) * nv);
  if (keep_d) {
    *keep_m = m, *keep_d = d;
  } else {
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A, B and the Jacobian of the friction, dissipation and modulus of the coin sliding (0.3 m/s) and
 * spinning (20 rad/s) against central differences; returns the worst relative Frobenius error of the
 * three blocks. FD steps: 1e-9 in positions (the coin sinks about 1 um), 1e-7 in velocities and
 * controls, 1e-6 relative in the parameters. */
static double deriv_check(grit_contact_model model, int jointed) {
  static const char *const NAMES[3] = {"free coin", "jointed coin", "rigid ball on a compliant box"};
  const double prm[3] = {0.2, 5.0, 1e5};
  grit_model *m;
  grit_data *d;
  const double vfree[6] = {0.3, 0.05, 0, 0, 0, 20}, vjoint[6] = {0.3, 0.05, 0, 0, 0, 20}, u0[2] = {0.002, 0.0005};
  const double *v0 = jointed ? vjoint : vfree;
  double xn[12];
  deriv_step(model, prm, jointed, NULL, v0, u0, NULL, xn, &m, &d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv, np = 3;
  cr_assert(grit_data_ncontacts(d) > (jointed == 2 ? 3 : 100), "patches: %d", grit_data_ncontacts(d));
  double q0[7], qref[7], A[144], B[24], P[36];
  /* the step under test: from the nominal step's start (the data keeps its inputs) */
  memcpy(qref, grit_data_qpos(d), sizeof(double) * nq);
  {
    grit_model *m2 = deriv_coin(prm, jointed);
    grit_data *d2;
    cr_assert_eq(grit_data_create(m2, &d2), GRIT_OK);
    memcpy(q0, grit_data_qpos(d2), sizeof(double) * nq);
    grit_data_free(d2);
    grit_model_free(m2);
  }
  const grit_param params[3] = {
      {GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_DISSIPATION, -1}, {GRIT_PARAM_HYDRO_MODULUS, jointed == 2 ? 0 : 1}};
  cr_assert_eq(grit_step_derivatives(d, A, nu ? B : NULL, params, np, P), GRIT_OK, "%s", grit_data_last_error(d));
  double worst = 0, enum2 = 0, eden = 0; /* the modulus column's own error, which must not vanish */
  for (int block = 0; block < 3; ++block) {
    const int ncol = block == 0 ? nx : block == 1 ? nu : np;
    double num = 0, den = 0;
    for (int col = 0; col < ncol; ++col) {
      double xs[2][12];
      for (int sg = 0; sg < 2; ++sg) {
        const double sgn = sg ? 1.0 : -1.0;
        double q[7], v[6], u[2], p[3], hh;
        memcpy(q, q0, sizeof q), memcpy(v, v0, sizeof v), memcpy(u, u0, sizeof u), memcpy(p, prm, sizeof p);
        if (block == 0 && col < nv) {
          double e[6] = {0};
          e[col] = sgn * (hh = 1e-9);
          grit_integrate_positions(m, q, e, 1.0);
        } else if (block == 0) {
          v[col - nv] += sgn * (hh = 1e-7 * fmax(1.0, fabs(v0[col - nv])));
        } else if (block == 1) {
          u[col] += sgn * (hh = 1e-7);
        } else {
          p[col] += sgn * (hh = 1e-6 * prm[col]);
        }
        deriv_step(model, p, jointed, q, v, u, qref, xs[sg], NULL, NULL);
        if (sg) {
          for (int i = 0; i < nx; ++i) {
            const double fd = (xs[1][i] - xs[0][i]) / (2 * hh);
            const double an = block == 0 ? A[i * nx + col] : block == 1 ? B[i * nu + col] : P[i * np + col];
            num += (an - fd) * (an - fd);
            den += fd * fd;
            if (block == 2 && col == 2) enum2 += (an - fd) * (an - fd), eden += fd * fd;
          }
        }
      }
    }
    if (ncol == 0) continue;
    const double rel = sqrt(num) / fmax(sqrt(den), 1e-300);
    printf("hydro: derivatives, %s, %s, %s: relative error %.3g (|FD| %.3g)\n", NAMES[jointed], SCENE_MODEL_NAMES[model], block == 0 ? "A" : block == 1 ? "B" : "P (mu, d, E)", rel, sqrt(den));
    worst = fmax(worst, rel);
  }
  printf("hydro: derivatives, %s, %s, dx+/dE: relative error %.3g (|FD| %.3g per Pa)\n", NAMES[jointed],
         SCENE_MODEL_NAMES[model], sqrt(enum2 / eden), sqrt(eden));
  cr_assert(sqrt(eden) > 1e-9, "the modulus moves the step");
  worst = fmax(worst, sqrt(enum2 / eden));
  grit_data_free(d);
  grit_model_free(m);
  return worst;
}

/* The acceptance: relative error < 1e-4 on the coin sliding and spinning; and a rigid ball's
 * faces (clipped sections) on a compliant box. */
Test(hydro, derivatives_through_patches) {
  for (int jointed = 0; jointed < 3; ++jointed)
    for (int model = 0; model < 3; ++model) {
      const double e = deriv_check(model, jointed);
      cr_assert(e < 1e-4, "scene %d, %s: %g", jointed, SCENE_MODEL_NAMES[model], e);
    }
}

/* MJCF: <custom><numeric name="grit_hydro_modulus:GEOM" data="E"/>, a name that is not a geometry's is
 * an error at its line; the load option makes every geometry but planes (and height fields) compliant,
 * capsules and meshes too. */
Test(hydro, mjcf) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/examples/models/coin_hydro.xml", GRIT_SOURCE_DIR);
  grit_model *m = NULL;
  cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_geom_def g;
  cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, "coin"), &g), GRIT_OK);
  cr_assert_eq(g.hydro_modulus, 1e9);
  cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, "ground"), &g), GRIT_OK);
  cr_assert_eq(g.hydro_modulus, 0.0);
  grit_model_free(m);
  const char *bad = "<mujoco><custom>\n<numeric name=\"grit_hydro_modulus:nope\" data=\"1e6\"/></custom>"
                    "<worldbody><geom name=\"g\" type=\"plane\" size=\"1 1 1\"/></worldbody></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(bad, &m, NULL, msg), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(msg, ":2:") && strstr(msg, "nope"), "%s", msg);
  const char *all = "<mujoco><asset><mesh name=\"t\" vertex=\"0 0 0 .1 0 0 0 .1 0 0 0 .1\"/></asset>"
                    "<worldbody><geom name=\"p\" type=\"plane\" size=\"1 1 1\"/>"
                    "<body pos=\"0 0 1\"><freejoint/><geom name=\"s\" size=\"0.1\"/>"
                    "<geom name=\"c\" type=\"capsule\" size=\"0.1 0.2\" pos=\"1 0 0\"/>"
                    "<geom name=\"m\" type=\"mesh\" mesh=\"t\" pos=\"0 1 0\"/></body></worldbody></mujoco>";
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  cr_assert_eq(o.hydro_modulus, 0.0);
  o.hydro_modulus = 3e6;
  cr_assert_eq(grit_mjcf_load_buffer(all, strlen(all), "all", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  const char *names[4] = {"p", "s", "c", "m"};
  const double want[4] = {0, 3e6, 3e6, 3e6};
  for (int k = 0; k < 4; ++k) {
    cr_assert_eq(grit_model_geom(m, grit_model_geom_index(m, names[k]), &g), GRIT_OK);
    cr_assert_eq(g.hydro_modulus, want[k], "%s", names[k]);
  }
  grit_model_free(m);
}
