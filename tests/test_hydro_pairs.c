/* SPDX-License-Identifier: Apache-2.0 */
/* test_hydro_pairs.c — the hydroelastic pairs added after the first patches (src/engine/hydro.c,
 * hydro_mesh.c, hydro_hull.c, hydro_pair_generic.h): compliant capsules and convex meshes, rigid
 * cylinder, ellipsoid and convex-mesh partners, and two compliant geometries pressing on each other
 * (the equal-pressure surface), with their derivatives against central differences. */
#include <stdio.h>
#include <stdlib.h>

#include "hydro.h"
#include "physics_scenes.h"

static const double G = 9.81, PI = 3.14159265358979323846;

/* Sum of the contacts' vertical (world z) impulses on the body `body` and their impulse-weighted centre
 * (world); *zc the impulse-weighted height of the patches. */
static double vertical_impulse(const grit_data *d, int body, double centre[3]) {
  double sum = 0.0, acc[3] = {0, 0, 0};
  for (int i = 0; i < grit_data_ncontacts(d); ++i) {
    grit_contact_info ci;
    cr_assert_eq(grit_data_contact(d, i, &ci), GRIT_OK);
    const double sg = ci.body[1] == body ? 1.0 : ci.body[0] == body ? -1.0 : 0.0; /* geom[1]'s impulse */
    const double z = sg * (ci.frame[6] * ci.impulse[0] + ci.frame[7] * ci.impulse[1] + ci.frame[8] * ci.impulse[2]);
    sum += z;
    for (int k = 0; k < 3; ++k) acc[k] += z * ci.pos[k];
  }
  for (int k = 0; k < 3; ++k) centre[k] = sum > 0 ? acc[k] / sum : 0.0;
  return sum;
}

/* A static geometry `base` at base_pos turned by base_quat (modulus Eb), and a free body (mass, inertia)
 * with one geometry `shape` (modulus E) at pos turned by quat. */
typedef struct two_geoms {
  grit_shape base, shape;
  double base_pos[3], base_quat[4], Eb, E, mass, inertia[3], pos[3], quat[4], mu, d;
} two_geoms;

static grit_model *build(const two_geoms *s) {
  grit_builder *b = scene_builder(1e-3, NULL);
  const scene_contact c = {.mu = s->mu, .k = 1e6, .d = s->d, .tau_d = 0.01};
  grit_geom_def g0 = scene_geom(&c, 0, s->base);
  for (int i = 0; i < 3; ++i) g0.pos[i] = s->base_pos[i];
  for (int i = 0; i < 4; ++i) g0.quat[i] = s->base_quat[i];
  g0.hydro_modulus = s->Eb;
  cr_assert_eq(grit_builder_add_geom(b, &g0, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  const int body = scene_free_body(b, s->mass, s->inertia[0], s->inertia[1], s->inertia[2], s->pos);
  grit_geom_def g = scene_geom(&c, body, s->shape);
  for (int i = 0; i < 4; ++i) g.quat[i] = s->quat[i];
  g.hydro_modulus = s->E;
  cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static grit_data *make_data(grit_model *m, grit_contact_model model, double rel_tol) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_default_step_settings();
  st.contact_model = model;
  if (rel_tol > 0) st.rel_tol = rel_tol;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
  return d;
}

/* Settles the scene for `steps` steps and checks that the patches carry m g dt (1e-6 relative: the
 * Newton tolerance, as in test_hydro.c) with their centre within `off_tol` m of under the centre of
 * mass. Returns the patches' impulse-weighted height. */
static double rests(const two_geoms *s, grit_contact_model model, int steps, double off_tol, const char *what) {
  grit_model *m = build(s);
  grit_data *d = make_data(m, model, 0);
  for (int i = 0; i < steps; ++i) scene_step(d);
  double c[3];
  const double sum = vertical_impulse(d, 1, c), expect = s->mass * G * 1e-3, *x = grit_data_qpos(d);
  const double off = hypot(c[0] - x[0], c[1] - x[1]);
  printf("hydro pairs: %s, %s: %d patches carry m g dt to %.2g relative, centre %.3g m from under the centre of "
         "mass, patches at z %.6g, body at z %.6g\n",
         what, SCENE_MODEL_NAMES[model], grit_data_ncontacts(d), (sum - expect) / expect, off, c[2], x[2]);
  cr_assert(grit_data_ncontacts(d) > 1, "%s: several patches", what);
  cr_assert(fabs(sum - expect) <= 1e-6 * expect, "%s, %s: %.12g vs %.12g", what, SCENE_MODEL_NAMES[model], sum, expect);
  cr_assert(off <= off_tol, "%s: centre %g m off", what, off);
  grit_data_free(d);
  grit_model_free(m);
  return c[2];
}

/* The hull's triangles: every point on or behind every triangle's plane (outward order), and the
 * triangles close a surface (each directed edge's reverse is another triangle's). */
static void check_hull(const double *p, int n, const int *tri, int nt, const char *what) {
  for (int t = 0; t < nt; ++t) {
    const double *a = p + 3 * tri[3 * t], *b = p + 3 * tri[3 * t + 1], *c = p + 3 * tri[3 * t + 2];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double nrm[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double l = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    cr_assert(l > 0, "%s: triangle %d has no area", what, t);
    for (int i = 0; i < n; ++i) {
      const double *x = p + 3 * i;
      const double dist = (nrm[0] * (x[0] - a[0]) + nrm[1] * (x[1] - a[1]) + nrm[2] * (x[2] - a[2])) / l;
      cr_assert(dist <= 1e-9, "%s: point %d is %g in front of triangle %d", what, i, dist, t);
    }
    for (int k = 0; k < 3; ++k) {
      const int e0 = tri[3 * t + k], e1 = tri[3 * t + (k + 1) % 3];
      int twins = 0;
      for (int o = 0; o < nt; ++o)
        for (int j = 0; j < 3; ++j) twins += tri[3 * o + j] == e1 && tri[3 * o + (j + 1) % 3] == e0;
      cr_assert_eq(twins, 1, "%s: edge %d-%d of triangle %d", what, e0, e1, t);
    }
  }
}

/* The incremental hull of hydro_hull.c: a cube's corners (coplanar faces: 12 triangles), a cube with
 * its centre and face centres (the interior and coplanar points are not vertices), 300 random points
 * on a sphere (in general position: 2 n - 4 triangles); a flat set has none. */
Test(hydro_pairs, convex_hull) {
  double p[3 * 300];
  int tri[3 * 600];
  const double hs[3] = {1, 2, 3};
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 3; ++i) p[3 * k + i] = (k >> i & 1 ? 1.0 : -1.0) * hs[i];
  int nt = grit_hydro_hull(p, 8, tri, 600);
  cr_assert_eq(nt, 12);
  check_hull(p, 8, tri, nt, "cube");
  for (int i = 0; i < 3; ++i) p[24 + i] = 0.0; /* the centre, then the six face centres */
  for (int f = 0; f < 6; ++f)
    for (int i = 0; i < 3; ++i) p[27 + 3 * f + i] = i == f / 2 ? (f % 2 ? hs[i] : -hs[i]) : 0.0;
  nt = grit_hydro_hull(p, 15, tri, 600);
  check_hull(p, 15, tri, nt, "cube with inner and face points");
  int used = 0;
  for (int k = 0; k < 3 * nt; ++k) used |= tri[k] >= 8;
  cr_assert(!used, "only the corners are vertices");
  srand(7);
  for (int k = 0; k < 300; ++k) {
    double x[3], l = 0;
    for (int i = 0; i < 3; ++i) x[i] = 2.0 * rand() / RAND_MAX - 1.0, l += x[i] * x[i];
    for (int i = 0; i < 3; ++i) p[3 * k + i] = x[i] / sqrt(l);
  }
  nt = grit_hydro_hull(p, 300, tri, 600);
  cr_assert_eq(nt, 2 * 300 - 4);
  check_hull(p, 300, tri, nt, "sphere points");
  for (int k = 0; k < 10; ++k) p[3 * k + 2] = 0.0;
  cr_assert_eq(grit_hydro_hull(p, 10, tri, 600), 0, "a flat set");
}

static const double ID[4] = {1, 0, 0, 0};
static const double LYING[4] = {0.70710678118654752, 0.70710678118654752, 0, 0}; /* z axis along -y */

/* A compliant capsule (r 3 cm, half-length 8 cm, 1 kg, E 100 MPa) lying on a plane, a side facet of its
 * 24-gon down: the facet presses with the distance field of the spine, uniformly along its length; it
 * carries its weight under its centre of mass. Stiff on purpose: on its 7.8 mm wide facet a lying
 * capsule resists rolling only by the pressure's growth across the facet, and one point per polygon
 * keeps a third of that moment (the triangles' centroids lie at a sixth of the width); at E 1 MPa this
 * is below the tipping moment m g D of its centre's height D and it rolls off the facet (a round capsule
 * rolls: neutral), at 100 MPa the facet holds it. */
Test(hydro_pairs, compliant_capsule_on_a_plane) {
  const double r = 0.03, h = 0.08, mass = 1.0;
  two_geoms s = {.base = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), .shape = grit_shape_make(GRIT_GEOM_CAPSULE, r, h, 0),
                 .E = 1e8, .mass = mass, .inertia = {0.01, 0.01, 0.01}, .pos = {0.1, 0.2, r}, .mu = 0.5, .d = 10};
  memcpy(s.base_quat, ID, sizeof ID);
  const double half = PI / 48; /* then a half facet about its axis: a side facet down, not an edge */
  const double q[4] = {LYING[0] * cos(half), LYING[1] * cos(half), -LYING[1] * sin(half), LYING[0] * sin(half)};
  memcpy(s.quat, q, sizeof q);
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant capsule on a plane");
}

/* The 8 corners of a box of half-sizes hs, as a convex mesh. */
static void box_points(const double hs[3], double v[24]) {
  for (int k = 0; k < 8; ++k)
    for (int i = 0; i < 3; ++i) v[3 * k + i] = (k >> i & 1 ? 1.0 : -1.0) * hs[i];
}

/* A compliant box (0.2 x 0.1 x 0.04 m, 2 kg, E 10 MPa), off the origin and turned, resting on a rigid
 * convex mesh (a 0.6 x 0.6 x 0.2 m box's 8 corners: its top face two hull triangles): it carries its
 * weight with the centre of pressure under its centre of mass. And a compliant convex mesh (the same
 * compliant box given as 8 points) on a plane: the same. */
Test(hydro_pairs, compliant_box_on_a_rigid_mesh_and_a_compliant_mesh) {
  const double hs[3] = {0.1, 0.05, 0.02}, big[3] = {0.3, 0.3, 0.1}, mass = 2.0;
  double vb[24], vs[24];
  box_points(big, vb);
  box_points(hs, vs);
  const double turn[4] = {cos(0.3), 0, 0, sin(0.3)};
  two_geoms s = {.base = grit_shape_convex(vb, 8), .base_pos = {0, 0, -0.1}, .shape = grit_shape_make(GRIT_GEOM_BOX, hs[0], hs[1], hs[2]),
                 .E = 1e7, .mass = mass, .inertia = {0.01, 0.01, 0.01}, .pos = {0.05, -0.03, hs[2]}, .mu = 0.5, .d = 10};
  memcpy(s.base_quat, ID, sizeof ID);
  memcpy(s.quat, turn, sizeof turn);
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant box on a rigid convex mesh");
  s.base = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  memset(s.base_pos, 0, sizeof s.base_pos);
  s.shape = grit_shape_convex(vs, 8);
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant convex mesh (a box) on a plane");
}

/* A compliant sphere (r 5 cm, 1 kg, E 1 MPa) resting on rigid cylinders (the cap, a fan of triangles;
 * the side of one lying down, a 24-gon prism's top facet) and a rigid ellipsoid's top (a face of its
 * scaled latitude-longitude polyhedron, pole up: faces symmetric about the vertical). */
Test(hydro_pairs, rigid_cylinder_and_ellipsoid_partners) {
  const double r = 0.05, mass = 1.0, I = 0.4 * mass * r * r;
two_geoms s = {.base = grit_shape_make(GRIT_GEOM_CYLINDER, 0.2, 0.1, 0), .base_pos = {0, 0, -0.1},
                 .shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), .E = 1e6, .mass = mass, .inertia = {I, I, I},
                 .pos = {0, 0, r}, .mu = 0.5, .d = 10};
  memcpy(s.base_quat, ID, sizeof ID);
  memcpy(s.quat, ID, sizeof ID);
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant sphere on a rigid cylinder's cap");
  /* lying along y (axis z turned to -y), turned a half facet about its axis so that a side facet is on top */
  const double half = PI / 48;
  const double lie[4] = {LYING[0] * cos(half), LYING[1] * cos(half), -LYING[1] * sin(half), LYING[0] * sin(half)};
  memcpy(s.base_quat, lie, sizeof lie);
  s.base_pos[2] = -0.2 * cos(PI / 24);
  s.pos[1] = 0.03; /* along the axis, over the middle of the top facet */
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant sphere on a rigid cylinder's side");
  s.base = grit_shape_make(GRIT_GEOM_ELLIPSOID, 0.3, 0.2, 0.1);
  memcpy(s.base_quat, ID, sizeof ID);
  s.base_pos[2] = -0.1;
  s.pos[0] = s.pos[1] = 0.0;
  for (int model = 0; model < 3; ++model) rests(&s, model, 1000, 1e-6, "compliant sphere on a rigid ellipsoid's pole");
}

/* Two compliant spheres (r 5 cm; the lower one static, the upper 1 kg resting on it, pole on pole).
 * Equal moduli: the patches carry the weight and their plane is midway between the centres (1e-9 m:
 * the two meshes are the same, mirrored). */
Test(hydro_pairs, two_compliant_spheres) {
  const double r = 0.05, mass = 1.0, I = 0.4 * mass * r * r;
  two_geoms s = {.base = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), .base_pos = {0, 0, 0}, .Eb = 1e6,
                 .shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), .E = 1e6, .mass = mass, .inertia = {I, I, I},
                 .pos = {0, 0, 2 * r}, .mu = 0.5, .d = 10};
  memcpy(s.base_quat, ID, sizeof ID);
  memcpy(s.quat, ID, sizeof ID);
  for (int model = 0; model < 3; ++model) {
    grit_model *m = build(&s);
    grit_data *d = make_data(m, model, 0);
    for (int i = 0; i < 600; ++i) scene_step(d);
    double c[3];
    const double sum = vertical_impulse(d, 1, c), expect = mass * G * 1e-3, z = grit_data_qpos(d)[2];
    printf("hydro pairs: two equal compliant spheres, %s: %d patches carry m g dt to %.2g relative; patch plane "
           "%.3g m from midway (overlap %.4g mm)\n",
           SCENE_MODEL_NAMES[model], grit_data_ncontacts(d), (sum - expect) / expect, c[2] - 0.5 * z,
           1e3 * (2 * r - z));
    cr_assert(fabs(sum - expect) <= 1e-6 * expect, "%.12g vs %.12g", sum, expect);
    cr_assert(fabs(c[2] - 0.5 * z) <= 1e-9, "plane %g m from midway", c[2] - 0.5 * z);
    cr_assert(2 * r - z > 0, "they overlap");
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Two compliant boxes stacked (0.2 x 0.2 x 0.1 m, the lower static, the upper 2 kg), the upper ten
 * times stiffer (E 1e7 against 1e6 Pa): under a face the pressure is E d / h in both, so the contact
 * plane settles where the two depths are in the inverse ratio of the moduli, 10 (the stiffer body
 * penetrates less); 1e-3 relative (the Newton tolerance on the weight). */
Test(hydro_pairs, stiffer_box_penetrates_less) {
  const double hs = 0.05, mass = 2.0;
  two_geoms s = {.base = grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, hs), .Eb = 1e6,
                 .shape = grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, hs), .E = 1e7, .mass = mass,
                 .inertia = {0.01, 0.01, 0.01}, .pos = {0, 0, 2 * hs}, .mu = 0.5, .d = 10};
  memcpy(s.base_quat, ID, sizeof ID);
  memcpy(s.quat, ID, sizeof ID);
  grit_model *m = build(&s);
  grit_data *d = make_data(m, GRIT_CONTACT_LAGGED, 0);
  for (int i = 0; i < 600; ++i) scene_step(d);
  double c[3];
  const double sum = vertical_impulse(d, 1, c), expect = mass * G * 1e-3, z = grit_data_qpos(d)[2];
  const double into_soft = hs - c[2], into_stiff = c[2] - (z - hs);
  printf("hydro pairs: upper box 10x stiffer: %d patches carry m g dt to %.2g relative; depth into the soft one "
         "%.5g mm, into the stiff one %.5g mm (ratio %.6g)\n",
         grit_data_ncontacts(d), (sum - expect) / expect, 1e3 * into_soft, 1e3 * into_stiff, into_soft / into_stiff);
  cr_assert(fabs(sum - expect) <= 1e-6 * expect);
  cr_assert(into_stiff > 0 && into_stiff < into_soft, "the stiffer body penetrates less");
  cr_assert(fabs(into_soft / into_stiff - 10) < 1e-2, "the ratio of the moduli: %g", into_soft / into_stiff);
  grit_data_free(d);
  grit_model_free(m);
}

/* ---------------------------------------------------------------- derivatives through the new pairs */

/* One step of scene s with parameters prm = (friction, dissipation, the base's modulus, the body's) from
 * (q, v), tightly solved; x+ = (q+ - qref, v+) (q+ itself when qref is NULL). */
static void fd_step(two_geoms s, grit_contact_model model, const double prm[4], const double *q, const double *v,
                    const double *qref, double *x, grit_model **keep_m, grit_data **keep_d) {
  s.mu = prm[0], s.d = prm[1], s.Eb = prm[2], s.E = prm[3];
  grit_model *m = build(&s);
  grit_data *d = make_data(m, model, 1e-12);
  if (q) cr_assert_eq(grit_data_set_qpos(d, q, 7), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, 6), GRIT_OK);
  scene_step(d);
  if (qref) grit_position_difference(m, qref, grit_data_qpos(d), x);
  else memset(x, 0, sizeof(double) * 6);
  memcpy(x + 6, grit_data_qvel(d), sizeof(double) * 6);
  if (keep_d) {
    *keep_m = m, *keep_d = d;
  } else {
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A and the Jacobian of (friction, dissipation, both moduli) of one step of the free body of s moving
 * with v0, against central differences: the worst relative Frobenius error of the two blocks (a
 * parameter that is 0, a rigid geometry's modulus, is left out). FD steps as in test_hydro.c: 1e-9 in
 * positions, 1e-7 in velocities, 1e-6 relative in the parameters, with the moduli low (1e5 Pa, a
 * millimetre deep) so that no tetrahedron's vertex crosses a plane within them. */
static double fd_check(const two_geoms *s, grit_contact_model model, const double v0[6], const char *what) {
  const double prm[4] = {s->mu, s->d, s->Eb, s->E};
  grit_model *m;
  grit_data *d;
  double xn[12], q0[7], A[144], P[48];
  fd_step(*s, model, prm, NULL, v0, NULL, xn, &m, &d);
  cr_assert(grit_data_ncontacts(d) > 3, "%s: patches: %d", what, grit_data_ncontacts(d));
  for (int i = 0; i < grit_data_ncontacts(d); ++i) {
    double area;
    cr_assert_eq(grit_data_contact_patch(d, i, &area, NULL), GRIT_OK);
    cr_assert(area > 0, "%s: contact %d is a patch", what, i);
  }
  double qref[7];
  memcpy(qref, grit_data_qpos(d), sizeof qref);
  {
    grit_model *m2 = build(s);
    grit_data *d2;
    cr_assert_eq(grit_data_create(m2, &d2), GRIT_OK);
    memcpy(q0, grit_data_qpos(d2), sizeof q0);
    grit_data_free(d2);
    grit_model_free(m2);
  }
  const grit_param params[4] = {
      {GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_DISSIPATION, -1}, {GRIT_PARAM_HYDRO_MODULUS, 0}, {GRIT_PARAM_HYDRO_MODULUS, 1}};
  cr_assert_eq(grit_step_derivatives(d, A, NULL, params, 4, P), GRIT_OK, "%s", grit_data_last_error(d));
  double worst = 0, enum2 = 0, eden = 0; /* the moduli's columns alone, which must not vanish */
  for (int block = 0; block < 2; ++block) {
    const int ncol = block == 0 ? 12 : 4;
    double num = 0, den = 0;
    for (int col = 0; col < ncol; ++col) {
      if (block == 1 && prm[col] == 0) continue;
      double xs[2][12], hh = 0;
      for (int sg = 0; sg < 2; ++sg) {
        const double sgn = sg ? 1.0 : -1.0;
        double q[7], v[6], p[4];
        memcpy(q, q0, sizeof q), memcpy(v, v0, sizeof v), memcpy(p, prm, sizeof p);
        if (block == 0 && col < 6) {
          double e[6] = {0};
          e[col] = sgn * (hh = 1e-9);
          grit_integrate_positions(m, q, e, 1.0);
        } else if (block == 0) {
          v[col - 6] += sgn * (hh = 1e-7 * fmax(1.0, fabs(v0[col - 6])));
        } else {
          p[col] += sgn * (hh = 1e-6 * prm[col]);
        }
        fd_step(*s, model, p, q, v, qref, xs[sg], NULL, NULL);
      }
      for (int i = 0; i < 12; ++i) {
        const double fd = (xs[1][i] - xs[0][i]) / (2 * hh), an = block == 0 ? A[i * 12 + col] : P[i * 4 + col];
        num += (an - fd) * (an - fd);
        den += fd * fd;
        if (block == 1 && col >= 2) enum2 += (an - fd) * (an - fd), eden += fd * fd;
      }
    }
    const double rel = sqrt(num) / fmax(sqrt(den), 1e-300);
    printf("hydro pairs: derivatives, %s, %s, %s: relative error %.3g (|FD| %.3g), %d patches\n", what,
           SCENE_MODEL_NAMES[model], block == 0 ? "A" : "P (mu, d, E0, E1)", rel, sqrt(den), grit_data_ncontacts(d));
    worst = fmax(worst, rel);
  }
  printf("hydro pairs: derivatives, %s, %s, dx+/dE: relative error %.3g (|FD| %.3g per Pa)\n", what,
         SCENE_MODEL_NAMES[model], sqrt(enum2 / eden), sqrt(eden));
  cr_assert(sqrt(eden) > 1e-12, "%s: the moduli move the step", what);
  worst = fmax(worst, sqrt(enum2 / eden));
  grit_data_free(d);
  grit_model_free(m);
  return worst;
}

/* The acceptance (relative error < 1e-4) on one new pair of each kind, sliding (0.3 m/s) and
 * spinning (20 rad/s): a compliant capsule on a plane (a facet down), a compliant sphere on a rigid
 * cylinder's cap (its fan of triangles clips the sections) and on a rigid convex mesh, and two compliant
 * spheres pressing (different moduli; both moduli differentiated), each 0.1 to 1 mm deep and placed off
 * the meshes' symmetries. */
Test(hydro_pairs, derivatives) {
  const double r = 0.05, I = 0.4 * 0.1 * r * r, D = 0.03 * cos(PI / 48 * 2), half = PI / 48;
  const double cq[4] = {LYING[0] * cos(half), LYING[1] * cos(half), -LYING[1] * sin(half), LYING[0] * sin(half)};
  const double tilt[4] = {cos(0.05), 0, 0, sin(0.05)};
  double vb[24];
  const double big[3] = {0.3, 0.3, 0.1};
  box_points(big, vb);
  two_geoms sc[4] = {
      {.base = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), .shape = grit_shape_make(GRIT_GEOM_CAPSULE, 0.03, 0.08, 0),
       .E = 1e5, .mass = 0.2, .inertia = {1e-3, 1e-3, 1e-3}, .pos = {0.01, -0.02, D - 1e-4}, .mu = 0.2, .d = 5},
      {.base = grit_shape_make(GRIT_GEOM_CYLINDER, 0.2, 0.1, 0), .base_pos = {0, 0, -0.1},
       .shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), .E = 1e5, .mass = 0.1, .inertia = {I, I, I},
       .pos = {0.013, -0.007, r - 1e-3}, .mu = 0.2, .d = 5},
      {.base = grit_shape_convex(vb, 8), .base_pos = {0, 0, -0.1}, .shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0),
       .E = 1e5, .mass = 0.1, .inertia = {I, I, I}, .pos = {0.013, -0.007, r - 1e-3}, .mu = 0.2, .d = 5},
      {.base = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0), .Eb = 2e5, .shape = grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0),
       .E = 1e5, .mass = 0.1, .inertia = {I, I, I}, .pos = {0.004, -0.003, 2 * r - 1e-3}, .mu = 0.2, .d = 5}};
  static const char *const NAMES[4] = {"compliant capsule on a plane", "compliant sphere on a rigid cylinder",
                                       "compliant sphere on a rigid convex mesh", "two compliant spheres"};
  for (int k = 0; k < 4; ++k) {
    memcpy(sc[k].base_quat, ID, sizeof ID);
    memcpy(sc[k].quat, k == 0 ? cq : tilt, sizeof tilt);
  }
  const double v0[6] = {0.3, 0.05, 0, 0, 0, 20};
  for (int k = 0; k < 4; ++k)
    for (int model = 0; model < 3; ++model) {
      const double e = fd_check(&sc[k], model, v0, NAMES[k]);
      cr_assert(e < 1e-4, "%s, %s: %g", NAMES[k], SCENE_MODEL_NAMES[model], e);
    }
}

/* The culls of grit_hydro_patches against a rigid partner (faces out of the shape's box, tetrahedra on
 * one side of a face's plane or out of its bounds, and since stop 29 tetrahedra whose pressure falls
 * towards the face or runs along it: tet_flat in hydro.c) drop only tetrahedra whose patch would be
 * skipped: its candidates are those of every (face, tetrahedron) pair given to grit_hydro_tet_patch,
 * in the same order, to the bit. Compliant coin, sphere, box and capsule against a plane, a rigid box
 * and a rigid sphere, at 40 random orientations each, pressed about a tenth of their size into it. */
Test(hydro_pairs, culls_drop_only_skipped_patches) {
  const grit_shape bases[3] = {grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, 0.1),
                               grit_shape_make(GRIT_GEOM_SPHERE, 0.1, 0, 0)};
  const grit_shape shapes[4] = {grit_shape_make(GRIT_GEOM_CYLINDER, 0.01213, 0.000875, 0),
                                grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0), grit_shape_make(GRIT_GEOM_BOX, 0.04, 0.03, 0.02),
                                grit_shape_make(GRIT_GEOM_CAPSULE, 0.02, 0.04, 0)};
  enum { CAP = 8192 };
  grit_contact_candidate *got = malloc(sizeof *got * CAP), *want = malloc(sizeof *want * CAP);
  unsigned seed = 29;
  int total = 0;
  for (int bi = 0; bi < 3; ++bi)
    for (int si = 0; si < 4; ++si) {
      two_geoms s = {.base = bases[bi], .shape = shapes[si], .E = 1e9, .mass = 1, .inertia = {1, 1, 1}, .mu = 0.5};
      memcpy(s.base_quat, ID, sizeof ID);
      memcpy(s.quat, ID, sizeof ID);
      grit_model *m = build(&s);
      double slo[3], shi[3];
      grit_shape_local_aabb(&shapes[si], slo, shi);
      const double size = fmax(fmax(shi[0], shi[1]), shi[2]), top = bi == 0 ? 0.0 : bi == 1 ? 0.1 : 0.1;
      const double pr[3] = {0, 0, 0}, Rr[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, E = m->geom_hydro[1];
      for (int trial = 0; trial < 40; ++trial) {
        double q[4], qn = 0.0, Rs[9], ps[3];
        for (int i = 0; i < 4; ++i) {
          seed = seed * 1103515245u + 12345u;
          q[i] = (double)(seed >> 8) / 8388608.0 - 1.0;
          qn += q[i] * q[i];
        }
        for (int i = 0; i < 4; ++i) q[i] /= sqrt(qn);
        grit_quat_to_mat(Rs, q);
        /* the shape's lowest point (its box's corners) about a tenth of its size into the partner's top */
        double low = INFINITY;
        for (int k = 0; k < 8; ++k) {
          const double c[3] = {k & 1 ? shi[0] : slo[0], k & 2 ? shi[1] : slo[1], k & 4 ? shi[2] : slo[2]};
          low = fmin(low, Rs[6] * c[0] + Rs[7] * c[1] + Rs[8] * c[2]);
        }
        seed = seed * 1103515245u + 12345u;
        ps[0] = 0.3 * size * ((double)(seed >> 8) / 16777216.0 - 0.5), ps[1] = -0.2 * size;
        ps[2] = top - low - 0.1 * size;
        int n = 0, nw = 0;
        cr_assert_eq(grit_hydro_patches(m, 0, 1, pr, Rr, ps, Rs, got, CAP, &n), GRIT_OK);
        for (int f = 0; f < grit_hydro_rigid_face_count(m, 0); ++f) {
          double fo[3], fn[3], fv[4][3];
          const int nfv = grit_hydro_rigid_face(m, 0, f, pr, Rr, fo, fn, fv);
          for (int t = 0; t < m->geom_hydro_ntet[1]; ++t) {
            const double *tet = m->hydro_tet + GRIT_HYDRO_TET_STRIDE * (size_t)(m->geom_hydro_tetadr[1] + t);
            grit_hydro_patch p;
            if (!grit_hydro_tet_patch(tet, E, ps, Rs, fo, fn, (const double *)fv, nfv, &p)) continue;
            cr_assert(nw < CAP);
            want[nw].patch_face = f, want[nw].patch_tet = t, want[nw].pt.phi = p.phi, want[nw].k_patch = p.k;
            memcpy(want[nw++].pt.pa, p.c, sizeof p.c);
          }
        }
        cr_assert_eq(n, nw, "base %d, shape %d, trial %d: %d candidates, %d patches", bi, si, trial, n, nw);
        for (int i = 0; i < n; ++i) {
          cr_assert(got[i].patch_face == want[i].patch_face && got[i].patch_tet == want[i].patch_tet);
          cr_assert(!memcmp(&got[i].pt.phi, &want[i].pt.phi, sizeof(double)) &&
                    !memcmp(&got[i].k_patch, &want[i].k_patch, sizeof(double)) &&
                    !memcmp(got[i].pt.pa, want[i].pt.pa, sizeof want[i].pt.pa));
        }
        total += n;
      }
      grit_model_free(m);
    }
  printf("hydro pairs: the culled patches equal every (face, tetrahedron) pair's: %d candidates\n", total);
  cr_assert(total > 1000);
  free(got);
  free(want);
}
