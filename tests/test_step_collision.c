/* SPDX-License-Identifier: Apache-2.0 */
/* test_step_collision.c — the step's collision query (collision.c, broadphase.c): it finds exactly the
 * pairs brute force finds, follows convex boxes, keeps the pairs a step can close (speculative margin),
 * runs only when geometries may collide, and its shortcuts (bounding test, round boxes, class sweep,
 * allowed-pairs table) give the old paths' candidates bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "data_internal.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "physics_scenes.h"
#include "solver_state.h"
#include "collision_test_util.h"

/* 200 free bodies of random shapes in a 1 m cube: the step's collision query (broad phase + filter +
 * narrow phase) finds exactly the candidates of brute force over every allowed pair. */
Test(step, collision_query_matches_brute_force_on_200_bodies) {
  unsigned long long seed = 5;
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  grit_options o = grit_default_options();
  o.contact_margin = 0.05;
  o.max_contacts = 20000;
  grit_builder_set_options(b, &o);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  for (int i = 0; i < 200; ++i) {
    const double pos[3] = {ct_uniform(&seed, 0, 1), ct_uniform(&seed, 0, 1), ct_uniform(&seed, 0, 1)};
    int body = scene_free_body(b, 1, 0.01, 0.01, 0.01, pos);
    const int type = 1 + (int)ct_uniform(&seed, 0, 5 - 1e-9); /* sphere .. ellipsoid */
    const double r = ct_uniform(&seed, 0.02, 0.08);
    grit_shape sh = grit_shape_make((grit_geom_type)type, r, type == GRIT_GEOM_BOX || type == GRIT_GEOM_ELLIPSOID ? 0.8 * r : 0.6 * r,
                                    0.7 * r);
    grit_geom_def g = scene_geom(&c, body, sh);
    g.quat[0] = ct_uniform(&seed, -1, 1);
    g.quat[1] = ct_uniform(&seed, -1, 1);
    g.quat[2] = ct_uniform(&seed, -1, 1);
    g.quat[3] = ct_uniform(&seed, -1, 1);
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  grit_forward_kinematics(d);
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_collision_detect(d->collision, m, d->kin.xpos, d->kin.xmat, NULL, msg), GRIT_OK, "%s", msg);
  const grit_collision *col = d->collision;
  /* brute force: every allowed pair through the narrow phase, at the poses the query computed */
  int brute = 0, matched = 0;
  for (int g1 = 0; g1 < m->ngeom; ++g1)
    for (int g2 = g1 + 1; g2 < m->ngeom; ++g2) {
      if (!grit_geom_pair_allowed(m, g1, g2)) continue;
      int ga = m->geom_shape[g2].type < m->geom_shape[g1].type ? g2 : g1, gb = ga == g1 ? g2 : g1;
      grit_contact_point pts[GRIT_COLLIDE_MAX_POINTS];
      int n = 0;
      cr_assert_eq(grit_collide(&m->geom_shape[ga], col->gpos + 3 * ga, col->gmat + 9 * ga, &m->geom_shape[gb],
                                col->gpos + 3 * gb, col->gmat + 9 * gb, o.contact_margin, pts, GRIT_COLLIDE_MAX_POINTS,
                                &n),
                   GRIT_OK);
      brute += n;
      int found = 0;
      for (int k = 0; k < col->n; ++k)
        if (col->c[k].geom[0] == ga && col->c[k].geom[1] == gb) found++;
      cr_assert_eq(found, n, "pair (%d, %d): query %d candidates, brute force %d", ga, gb, found, n);
      matched += n > 0;
    }
  cr_assert_eq(col->n, brute);
  cr_assert(matched > 50, "only %d touching pairs: the scene does not exercise the query", matched);
  grit_data_free(d);
  grit_model_free(m);
}

/* The query keeps a CONVEX geometry's box while its place keeps its bits (collision.c, same_place): a
 * fixed hull and three on free bodies, the bodies moved and moved back; every box must have the bits of
 * one made afresh at the current place. */
Test(step, collision_convex_boxes_follow_their_geometries) {
  static double v[8][3];
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) v[i][k] = (i >> k & 1) ? 0.05 * (k + 1) : -0.04 * (k + 1);
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  grit_geom_def fixed = scene_geom(&c, 0, grit_shape_convex(&v[0][0], 8));
  grit_builder_add_geom(b, &fixed, NULL);
  for (int i = 0; i < 3; ++i) {
    const double pos[3] = {0.3 * i, 0.1, 0.2};
    grit_geom_def g = scene_geom(&c, scene_free_body(b, 1, 0.01, 0.01, 0.01, pos), grit_shape_convex(&v[0][0], 8));
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  grit_forward_kinematics(d);
  double xpos[3 * 8], xmat[9 * 8];
  cr_assert(m->nbody <= 8);
  memcpy(xpos, d->kin.xpos, 3 * (size_t)m->nbody * sizeof(double));
  memcpy(xmat, d->kin.xmat, 9 * (size_t)m->nbody * sizeof(double));
  char msg[GRIT_MESSAGE_SIZE];
  for (int pass = 0; pass < 4; ++pass) {
    if (pass % 2) xpos[3 * 2 + 1] += 0.01; /* body 2 moves (passes 1 and 3), back in pass 2 */
    if (pass == 2) xpos[3 * 2 + 1] -= 0.02;
    if (pass == 3) xmat[9 * 3] = -xmat[9 * 3], xmat[9 * 3 + 4] = -xmat[9 * 3 + 4]; /* body 3 turns by pi */
    grit_collision *col = d->collision;
    cr_assert_eq(grit_collision_detect(col, m, xpos, xmat, NULL, msg), GRIT_OK, "%s", msg);
    for (int g = 0; g < m->ngeom; ++g) {
      double lo[3], hi[3];
      grit_shape_world_aabb(&m->geom_shape[g], col->gpos + 3 * g, col->gmat + 9 * g, col->gmargin[g], lo, hi);
      cr_assert(!memcmp(lo, col->aabb + 6 * g, sizeof lo) && !memcmp(hi, col->aabb + 6 * g + 3, sizeof hi),
                "pass %d geom %d: a stale box", pass, g);
    }
  }
  grit_data_free(d);
  grit_model_free(m);
}

/* One free sphere (r = 5 cm) over the ground plane with its lowest point `gap` above it, velocity v
 * (linear, then angular); returns the number of contact candidates of one step at dt = 1 ms without
 * gravity, and the speed the step ends with along z (through *vz). */
static int candidates_after_one_step(grit_contact_model model, double gap, const double v[6], double *vz) {
  const scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  const double zero[3] = {0, 0, 0}, pos[3] = {0, 0, 0.05 + gap};
  grit_builder *b = scene_builder(1e-3, zero);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const int body = scene_free_body(b, 1, 1e-3, 1e-3, 1e-3, pos);
  grit_geom_def ball = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ball, NULL), GRIT_OK);
  grit_model *m;
  grit_data *d = scene_data(b, &m, model);
  cr_assert_eq(grit_data_set_qvel(d, v, 6), GRIT_OK);
  scene_step(d);
  const int n = grit_data_ncontacts(d);
  *vz = grit_data_qvel(d)[2];
  grit_data_free(d);
  grit_model_free(m);
  return n;
}

/* Speculative margins (src/engine/step.c, speculative_window): a pair enters the step when its gap is below
 * 2 dt (x (1 + mu) for Similar, 2 (dt + tau_d)(1 + mu) for SAP) times the speed bound of its points,
 * capped at options.contact_margin (0.1 m). At dt = 1 ms a sphere falling at 2 m/s has 4 mm (Lagged);
 * a gap of 1.9 mm, which the step closes, is in the problem and brakes the fall; 4.1 mm is not; a sphere
 * at rest has no candidate 1 mm away; a spin counts through the bounding radius (50 rad/s x 5 cm). */
Test(step, speculative_margin_keeps_the_pairs_a_step_can_close) {
  double vz;
  const double fall[6] = {0, 0, -2, 0, 0, 0}, rest[6] = {0}, spin[6] = {0, 0, 0, 50, 0, 0};
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 1.9e-3, fall, &vz), 1);
  cr_assert_gt(vz, -2.0 + 1e-3, "the contact the step closes must act within it (vz = %g, -2 without)", vz);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 3.9e-3, fall, &vz), 1);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 4.1e-3, fall, &vz), 0);
  cr_assert_eq(vz, -2.0, "no contact, no gravity: the velocity is unchanged");
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 1e-3, rest, &vz), 0);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 4.9e-3, spin, &vz), 1); /* 2 dt 2.5 m/s = 5 mm */
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 5.1e-3, spin, &vz), 0);
  /* Similar: 2 dt (1 + 0.5) 2 m/s = 6 mm; SAP: 2 (dt + 1 ms)(1 + 0.5) 2 m/s = 12 mm */
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_SIMILAR, 5.9e-3, fall, &vz), 1);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_SIMILAR, 6.1e-3, fall, &vz), 0);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_SAP, 11.9e-3, fall, &vz), 1);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_SAP, 12.1e-3, fall, &vz), 0);
  /* fast: the cap (100 m/s x 2 ms = 0.2 m > 0.1 m) */
  const double fast[6] = {0, 0, -100, 0, 0, 0};
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 0.099, fast, &vz), 1);
  cr_assert_eq(candidates_after_one_step(GRIT_CONTACT_LAGGED, 0.101, fast, &vz), 0);
}

/* A free root with sphere A (r = 5 cm) and, through a hinge about z at the root's origin and then a slide along
 * x, sphere B 3 mm from A (a pair on one tree, not parent and child). One step at dt = 1 ms (Lagged, no
 * gravity) from velocity v (the root's linear and angular, the hinge's, the slide's); returns the number of
 * candidates and, in qv, the velocity the step ends with. `absolute` takes the absolute speeds' window
 * (grit_collision.no_tree_window). */
static int tree_candidates(const double v[8], int absolute, double qv[8]) {
  const scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  const double zero[3] = {0, 0, 0};
  grit_builder *b = scene_builder(1e-3, zero);
  const int root = scene_free_body(b, 1, 1e-3, 1e-3, 1e-3, zero);
  grit_geom_def ga = scene_geom(&c, root, grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ga, NULL), GRIT_OK);
  int link = -1, tip = -1;
  grit_body_def bd = grit_default_body_def();
  bd.parent = root;
  bd.mass = 0.1;
  cr_assert_eq(grit_builder_add_body(b, &bd, &link), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def hinge = grit_default_joint_def();
  cr_assert_eq(grit_builder_add_joint(b, link, &hinge, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  bd.parent = link;
  bd.pos[0] = 0.103;
  cr_assert_eq(grit_builder_add_body(b, &bd, &tip), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_joint_def slide = grit_default_joint_def();
  slide.type = GRIT_JOINT_SLIDE;
  slide.axis[0] = 1, slide.axis[1] = 0, slide.axis[2] = 0;
  cr_assert_eq(grit_builder_add_joint(b, tip, &slide, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_geom_def gb = scene_geom(&c, tip, grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &gb, NULL), GRIT_OK);
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  d->collision->no_tree_window = absolute;
  cr_assert_eq(grit_data_set_qvel(d, v, 8), GRIT_OK);
  scene_step(d);
  const int n = grit_data_ncontacts(d);
  memcpy(qv, grit_data_qvel(d), 8 * sizeof(double));
  grit_data_free(d);
  grit_model_free(m);
  return n;
}

/* A pair on one tree takes its window from the speeds relative to the tree's root (collision.c,
 * speculative_margins), or the absolute one where smaller: a motion the whole tree shares (a fall, a spin)
 * brings neither sphere closer, and their candidate, kept by the absolute window (2 dt (2 + 2) m/s = 8 mm),
 * goes; B driven at A by the slide (4 m/s: 8 mm, closing 4 mm in the step) stays, alone or with the whole
 * tree moving along (the relative window, 8 mm, is then the smaller: the absolute one is 16 mm). A
 * dropped candidate had no impulse: the step ends with the same velocities. */
Test(step, speculative_window_on_one_tree_is_relative) {
  double qa[8], qr[8];
  const double fall[8] = {2, 0, 0, 0, 0, 0, 0, 0}, spin[8] = {0, 0, 0, 0, 0, 20, 0, 0};
  const double drive[8] = {0, 0, 0, 0, 0, 0, 0, -4}, both[8] = {-2, 0, 0, 0, 0, 0, 0, -4};
  cr_assert_eq(tree_candidates(fall, 1, qa), 1, "the absolute window keeps the falling tree's pair");
  cr_assert_eq(tree_candidates(fall, 0, qr), 0, "a shared translation brings nothing closer");
  cr_assert(!memcmp(qa, qr, sizeof qa), "the dropped candidate had no impulse");
  cr_assert_eq(tree_candidates(spin, 1, qa), 1, "the absolute window keeps the spinning tree's pair");
  cr_assert_eq(tree_candidates(spin, 0, qr), 0, "a shared rotation brings nothing closer");
  cr_assert(!memcmp(qa, qr, sizeof qa), "the dropped candidate had no impulse");
  for (int absolute = 0; absolute < 2; ++absolute) {
    cr_assert_eq(tree_candidates(drive, absolute, qr), 1, "B driven at A is a candidate");
    cr_assert_gt(qr[7], -4.0 + 1e-3, "the contact the step closes acts within it (slide %g)", qr[7]);
    cr_assert_eq(tree_candidates(both, absolute, qr), 1, "B driven at A, the whole tree moving: a candidate");
    cr_assert_gt(qr[7], -4.0 + 1e-3, "the contact acts within the step (slide %g)", qr[7]);
  }
}

/* A box face on a box face gives four contacts (one point would let the top box rock); an edge on a
 * face two; a box turned 45 degrees about the normal, still four. */
Test(step, box_on_box_manifold) {
  grit_shape big = grit_shape_make(GRIT_GEOM_BOX, 0.3, 0.3, 0.1), small = grit_shape_make(GRIT_GEOM_BOX, 0.1, 0.1, 0.1);
  const double pa[3] = {0, 0, 0}, Ra[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, pb[3] = {0.02, -0.03, 0.2 - 1e-4};
  grit_contact_point c[GRIT_COLLIDE_MAX_POINTS];
  int n = 0;
  cr_assert_eq(grit_collide(&big, pa, Ra, &small, pb, Ra, 0.01, c, GRIT_COLLIDE_MAX_POINTS, &n), GRIT_OK);
  cr_assert_eq(n, 4, "face on face: %d contacts", n);
  for (int i = 0; i < n; ++i) {
    cr_assert(fabs(c[i].phi + 1e-4) < 1e-12, "face on face: phi %g", c[i].phi);
    cr_assert(fabs(c[i].n[2] - 1) < 1e-12, "normal not the face's");
  }
  const double s = sqrt(0.5), Rz[9] = {s, -s, 0, s, s, 0, 0, 0, 1};
  cr_assert_eq(grit_collide(&big, pa, Ra, &small, pb, Rz, 0.01, c, GRIT_COLLIDE_MAX_POINTS, &n), GRIT_OK);
  cr_assert_eq(n, 4, "turned face on face: %d contacts", n);
  /* tilted about x by 0.2 rad and lowered so that one edge touches */
  const double t = 0.2, Rx[9] = {1, 0, 0, 0, cos(t), -sin(t), 0, sin(t), cos(t)};
  const double pe[3] = {0, 0, 0.1 + 0.1 * cos(t) + 0.1 * sin(t) - 1e-4};
  cr_assert_eq(grit_collide(&big, pa, Ra, &small, pe, Rx, 1e-3, c, GRIT_COLLIDE_MAX_POINTS, &n), GRIT_OK);
  cr_assert_eq(n, 2, "edge on face: %d contacts", n);
}

/* Two boxes stacked on the ground, the top one offset, come to rest: with the contact polygon's four
 * corners between the boxes it cannot rock. Its tilt settles to a constant static value (compliance:
 * the corners of the overlap rectangle, off-centre under the box, compress differently), bounded by
 * the compliance scale (m g / k) / h = 2e-4 rad, and it does not slide (under 1e-5 m: stiction creep). */
Test(step, box_stack_stays_level) {
  scene_contact c = {.mu = 0.8, .k = 1e6, .d = 10, .tau_d = 1e-3};
  for (int model = 0; model < 3; ++model) {
    grit_builder *b = scene_builder(1e-3, NULL);
    grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
    grit_builder_add_geom(b, &ground, NULL);
    const double h = 0.05, I = (2 * h) * (2 * h) / 6.0;
    const double p1[3] = {0, 0, h}, p2[3] = {0.01, 0.005, 3 * h};
    int b1 = scene_free_body(b, 1, I, I, I, p1), b2 = scene_free_body(b, 1, I, I, I, p2);
    grit_geom_def g1 = scene_geom(&c, b1, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
    grit_geom_def g2 = scene_geom(&c, b2, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
    grit_builder_add_geom(b, &g1, NULL);
    grit_builder_add_geom(b, &g2, NULL);
    grit_model *m;
    grit_data *d = scene_data(b, &m, model);
    double th1[3], th2[3], id[4] = {1, 0, 0, 0};
    for (int i = 0; i < 1000; ++i) scene_step(d);
    grit_quat_diff(th1, id, grit_data_qpos(d) + 10);
    for (int i = 0; i < 1000; ++i) scene_step(d);
    const double *q = grit_data_qpos(d);
    grit_quat_diff(th2, id, q + 10);
    double dth[3];
    grit_v3_sub(dth, th2, th1);
    /* rocking on one or two points turned it by ~1e-2 rad in 2 s; what remains is regularized-friction
     * creep (measured ~1e-9 rad/s): bounded at 1e-7 rad in 1 s */
    cr_assert(grit_v3_norm(dth) < 1e-7, "%s: the top box is still turning (%g rad in 1 s)", SCENE_MODEL_NAMES[model],
              grit_v3_norm(dth));
    cr_assert(grit_v3_norm(th2) < 9.81 / c.k / h, "%s: tilt %g rad", SCENE_MODEL_NAMES[model], grit_v3_norm(th2));
    cr_assert(fabs(q[7] - 0.01) < 1e-5 && fabs(q[8] - 0.005) < 1e-5, "%s: the top box slid", SCENE_MODEL_NAMES[model]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Loads `xml`, checks whether the step runs the collision query (`may`), steps once and checks that contacts
 * appear exactly when it does. */
static void query_case(const char *xml, int may) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(d->collision->may_collide, may);
  cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_eq(grit_data_ncontacts(d) > 0, may, "contacts %d with the query %s", grit_data_ncontacts(d), may ? "on" : "off");
  grit_data_free(d);
  grit_model_free(m);
}

/* With every bit mask zero (<flag contact="disable">) the step skips the collision query: two
 * overlapping spheres then give no contact, and the same model with contact on gives some. */
Test(step, no_query_when_no_geometries_may_collide) {
  const char *fmt = "<mujoco><option timestep=\"0.01\">%s</option><worldbody>"
                    "<body><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"
                    "<body pos=\"0.15 0 0\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>"
                    "</worldbody></mujoco>";
  for (int on = 0; on < 2; ++on) {
    char xml[1024];
    snprintf(xml, sizeof xml, fmt, on ? "" : "<flag contact=\"disable\"/>");
    query_case(xml, on);
  }
}

/* Geometries all on one weld (a static world; a body welded to it) never pair: the query is skipped, and
 * one moving body makes it run again. */
Test(step, no_query_when_every_geometry_is_on_one_weld) {
  const char *fmt = "<mujoco><worldbody><geom type=\"plane\" size=\"1 1 .1\"/>"
                    "<geom type=\"sphere\" size=\"0.1\" pos=\"0 0 0.05\"/>"
                    "<body pos=\"0.1 0 0.1\">%s<geom type=\"sphere\" size=\"0.1\"/></body></worldbody></mujoco>";
  for (int moving = 0; moving < 2; ++moving) {
    char xml[1024];
    snprintf(xml, sizeof xml, fmt, moving ? "<freejoint/>" : "");
    query_case(xml, moving);
  }
}

/* The bounding test before the narrow phase (collision.c, surely_apart; grit_collision.no_apart) drops
 * only pairs without candidates: 120 bodies of every round and boxy shape falling into a box of four
 * walls turned by quaternions (so their normals are off the axes by round-off and their boxes
 * unbounded), stepped 120 times with and without it, must give the same candidates, in the same order,
 * with the same bits, and the same states. */
Test(step, bounding_test_keeps_every_candidate) {
  unsigned long long seed = 11;
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_data *d[2];
  grit_model *m[2];
  for (int run = 0; run < 2; ++run) {
    seed = 11;
    grit_builder *b = scene_builder(2e-3, NULL);
    grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
    grit_builder_add_geom(b, &ground, NULL);
    for (int w = 0; w < 4; ++w) { /* walls at x, y = +-0.25 facing in */
      const double a = 0.5 * (w < 2 ? 1.5707963267948966 : -1.5707963267948966);
      grit_geom_def g = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
      const double s = w % 2 ? -1.0 : 1.0;
      g.quat[0] = cos(a);
      g.quat[1] = w < 2 ? 0.0 : s * sin(a);
      g.quat[2] = w < 2 ? s * sin(a) : 0.0;
      g.quat[3] = 0.0;
      g.pos[0] = w < 2 ? -0.25 * s : 0.0;
      g.pos[1] = w < 2 ? 0.0 : 0.25 * s;
      cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    for (int i = 0; i < 120; ++i) {
      const double pos[3] = {ct_uniform(&seed, -0.2, 0.2), ct_uniform(&seed, -0.2, 0.2), ct_uniform(&seed, 0.03, 0.4)};
      int body = scene_free_body(b, 1, 0.01, 0.01, 0.01, pos);
      const int type = 1 + (int)ct_uniform(&seed, 0, 5 - 1e-9); /* sphere .. ellipsoid */
      const double r = ct_uniform(&seed, 0.015, 0.04);
      grit_shape sh = grit_shape_make((grit_geom_type)type, r, type == GRIT_GEOM_BOX || type == GRIT_GEOM_ELLIPSOID ? 0.8 * r : 0.6 * r,
                                      0.7 * r);
      grit_geom_def g = scene_geom(&c, body, sh);
      for (int k = 0; k < 4; ++k) g.quat[k] = ct_uniform(&seed, -1, 1);
      cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    d[run] = scene_data(b, &m[run], GRIT_CONTACT_LAGGED);
    d[run]->collision->no_apart = run;
  }
  int touching = 0;
  for (int step = 0; step < 120; ++step) {
    for (int run = 0; run < 2; ++run) cr_assert_eq(grit_step(d[run]), GRIT_OK, "%s", d[run]->message);
    const grit_collision *x = d[0]->collision, *y = d[1]->collision;
    cr_assert_eq(x->n, y->n, "step %d: %d candidates, %d without the test", step, x->n, y->n);
    for (int k = 0; k < x->n; ++k) {
      const grit_contact_point *p = &x->c[k].pt, *q = &y->c[k].pt;
      cr_assert(x->c[k].geom[0] == y->c[k].geom[0] && x->c[k].geom[1] == y->c[k].geom[1], "step %d candidate %d", step, k);
      cr_assert(!memcmp(&p->phi, &q->phi, sizeof p->phi) && !memcmp(p->n, q->n, sizeof p->n) &&
                    !memcmp(p->pa, q->pa, sizeof p->pa) && !memcmp(p->pb, q->pb, sizeof p->pb) && p->fa == q->fa && p->fb == q->fb,
                "step %d candidate %d: other bits", step, k);
    }
    cr_assert(!memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m[0]->nq), "step %d: other positions", step);
    cr_assert(!memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m[0]->nv), "step %d: other velocities", step);
    touching = x->n > touching ? x->n : touching;
  }
  cr_assert(touching > 100, "only %d candidates: the scene does not exercise the test", touching);
  for (int run = 0; run < 2; ++run) {
    grit_data_free(d[run]);
    grit_model_free(m[run]);
  }
}

/* A sphere's, capsule's or cylinder's box written out in the query (collision.c, round_world_aabb,
 * cylinder_world_aabb) has the bits of grit_shape_world_aabb's (the old path, grit_collision.no_sphere_box):
 * spheres, capsules and cylinders of random sizes at random places and orientations (some along an axis,
 * so a support direction's z is 0, or its x and y), with random margins (a third of them 0). */
Test(step, round_boxes_same_bits) {
  unsigned long long seed = 23;
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  for (int i = 0; i < 50; ++i) {
    const double pos[3] = {ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3)};
    int body = scene_free_body(b, 1, 0.01, 0.01, 0.01, pos);
    const grit_geom_type t = i % 2 ? GRIT_GEOM_CAPSULE : GRIT_GEOM_SPHERE;
    grit_geom_def g = scene_geom(&c, body, grit_shape_make(t, ct_uniform(&seed, 1e-3, 2), ct_uniform(&seed, 1e-3, 2), 0));
    for (int k = 0; k < 4; ++k) g.quat[k] = i % 6 == 1 ? (k == 0) : ct_uniform(&seed, -1, 1);
    for (int k = 0; k < 3; ++k) g.pos[k] = ct_uniform(&seed, -0.5, 0.5);
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  for (int i = 0; i < 30; ++i) { /* cylinders (collision.c, cylinder_world_aabb): some along an axis, so a
                                    row's d_x = d_y = 0 (rho = 0) and d_z = 0 */
    const double pos[3] = {ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3)};
    int body = scene_free_body(b, 1, 0.01, 0.01, 0.01, pos);
    grit_geom_def g = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_CYLINDER, ct_uniform(&seed, 1e-3, 2), ct_uniform(&seed, 1e-3, 2), 0));
    for (int k = 0; k < 4; ++k) g.quat[k] = i % 5 == 1 ? (k == 0) : i % 5 == 3 ? (k < 2) : ct_uniform(&seed, -1, 1);
    for (int k = 0; k < 3; ++k) g.pos[k] = ct_uniform(&seed, -0.5, 0.5);
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  for (int i = 0; i < 30; ++i) { /* boxes (collision.c, box_world_aabb): some along the axes, so rows with
                                    zeros (sgn(+-0) = +1) */
    const double pos[3] = {ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3), ct_uniform(&seed, -3, 3)};
    int body = scene_free_body(b, 1, 0.01, 0.01, 0.01, pos);
    grit_geom_def g = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, ct_uniform(&seed, 1e-3, 2), ct_uniform(&seed, 1e-3, 2),
                                                           ct_uniform(&seed, 1e-3, 2)));
    for (int k = 0; k < 4; ++k) g.quat[k] = i % 5 == 1 ? (k == 0) : i % 5 == 3 ? (k < 2) : ct_uniform(&seed, -1, 1);
    for (int k = 0; k < 3; ++k) g.pos[k] = ct_uniform(&seed, -0.5, 0.5);
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  grit_forward_kinematics(d);
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_collision_detect(d->collision, m, d->kin.xpos, d->kin.xmat, NULL, msg), GRIT_OK, "%s", msg);
  grit_collision *col = d->collision;
  for (int g = 0; g < m->ngeom; ++g) {
    col->gmargin[g] = g % 3 == 0 ? 0.0 : ct_uniform(&seed, 0, 0.1);
    double lo[2][3], hi[2][3];
    for (int r = 0; r < 2; ++r) {
      col->no_sphere_box = r;
      grit_collision_geom_aabb(col, m, g, lo[r], hi[r]);
    }
    col->no_sphere_box = 0;
    cr_assert(!memcmp(lo[0], lo[1], sizeof lo[0]) && !memcmp(hi[0], hi[1], sizeof hi[0]), "geom %d: other bits", g);
    cr_assert(lo[0][0] < hi[0][0], "geom %d: an empty box", g);
  }
  grit_data_free(d);
  grit_model_free(m);
}

/* Two exact shortcuts of the step, against their old paths on MuJoCo's soft box (218 capsules on one
 * free body, whose bit masks keep them from touching each other): the broad phase's class test
 * (grit_collision.no_classes) and the CRBA without zeroing (data no_M_kept). 40 steps from a pose that
 * presses the box into the floor: the same candidates with the same bits, the same M, the same states. */
Test(step, class_sweep_and_kept_mass_matrix_same_bits) {
  grit_model *m[2];
  grit_data *d[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int run = 0; run < 2; ++run) {
    cr_assert_eq(grit_mjcf_load_file(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/softbox.xml", &m[run], NULL, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m[run], &d[run]), GRIT_OK);
    double *q = malloc(sizeof(double) * (size_t)grit_model_nq(m[run]));
    memcpy(q, grit_data_qpos(d[run]), sizeof(double) * (size_t)grit_model_nq(m[run]));
    q[2] = 0.16; /* the free body's height: the lowest capsules touch the floor */
    cr_assert_eq(grit_data_set_qpos(d[run], q, grit_model_nq(m[run])), GRIT_OK);
    free(q);
    d[run]->collision->no_classes = run;
    d[run]->no_M_kept = run;
  }
  const grit_model *mm = m[0];
  int touching = 0;
  for (int step = 0; step < 40; ++step) {
    for (int run = 0; run < 2; ++run) cr_assert_eq(grit_step(d[run]), GRIT_OK, "%s", d[run]->message);
    const grit_collision *x = d[0]->collision, *y = d[1]->collision;
    cr_assert_eq(x->n, y->n, "step %d: %d candidates, %d by the old path", step, x->n, y->n);
    for (int k = 0; k < x->n; ++k) {
      const grit_contact_point *p = &x->c[k].pt, *r = &y->c[k].pt;
      cr_assert(x->c[k].geom[0] == y->c[k].geom[0] && x->c[k].geom[1] == y->c[k].geom[1], "step %d candidate %d", step, k);
      cr_assert(!memcmp(&p->phi, &r->phi, sizeof p->phi) && !memcmp(p->n, r->n, sizeof p->n) &&
                    !memcmp(p->pa, r->pa, sizeof p->pa) && !memcmp(p->pb, r->pb, sizeof p->pb) && p->fa == r->fa && p->fb == r->fb,
                "step %d candidate %d: other bits", step, k);
    }
    cr_assert(!memcmp(d[0]->M, d[1]->M, sizeof(double) * (size_t)mm->nM), "step %d: another M", step);
    cr_assert(!memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)mm->nq), "step %d: other positions", step);
    cr_assert(!memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)mm->nv), "step %d: other velocities", step);
    touching = x->n > touching ? x->n : touching;
  }
  cr_assert(touching > 10, "only %d candidates: the box does not touch the floor", touching);
  for (int run = 0; run < 2; ++run) {
    grit_data_free(d[run]);
    grit_model_free(m[run]);
  }
}

/* The broad phase's filter with the model's allowed pairs tabled (collision.c, grit_collision.allowed) and
 * read before the bounding test, against the old order (grit_geom_pair_allowed after it; no_allowed_table):
 * the table holds the model's answer for every pair (hulls with parent filtering, a chain with an excluded
 * body pair, an explicit pair, bit masks), and 150 steps of the OP3 and the Panda give the same candidates
 * with the same bits and the same states either way. */
static void same_steps_with_and_without_table(const char *path, int nsteps) {
  grit_model *m[2];
  grit_data *d[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int run = 0; run < 2; ++run) {
    cr_assert_eq(grit_mjcf_load_file(path, &m[run], NULL, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m[run], &d[run]), GRIT_OK);
    cr_assert(d[run]->collision->allowed, "%s: no table", path);
    d[run]->collision->no_allowed_table = run;
  }
  int touching = 0;
  for (int step = 0; step < nsteps; ++step) {
    for (int run = 0; run < 2; ++run) cr_assert_eq(grit_step(d[run]), GRIT_OK, "%s", d[run]->message);
    const grit_collision *x = d[0]->collision, *y = d[1]->collision;
    cr_assert_eq(x->n, y->n, "%s step %d: %d candidates, %d by the old path", path, step, x->n, y->n);
    for (int k = 0; k < x->n; ++k) {
      const grit_contact_point *p = &x->c[k].pt, *r = &y->c[k].pt;
      cr_assert(x->c[k].geom[0] == y->c[k].geom[0] && x->c[k].geom[1] == y->c[k].geom[1], "step %d candidate %d", step, k);
      cr_assert(!memcmp(&p->phi, &r->phi, sizeof p->phi) && !memcmp(p->n, r->n, sizeof p->n) &&
                    !memcmp(p->pa, r->pa, sizeof p->pa) && !memcmp(p->pb, r->pb, sizeof p->pb),
                "step %d candidate %d: other bits", step, k);
    }
    cr_assert(!memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m[0]->nq), "step %d: other positions", step);
    cr_assert(!memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m[0]->nv), "step %d: other velocities", step);
    touching = x->n > touching ? x->n : touching;
  }
  cr_assert(touching > 0, "%s: no candidate", path);
  for (int run = 0; run < 2; ++run) {
    grit_data_free(d[run]);
    grit_model_free(m[run]);
  }
}

/* The model's table (model_filter.c, compiled once) is the filter, pair by pair; a data's query reads it, and a
 * copy of the model carries its own copy of it. */
static void table_is_the_filter(const grit_model *m) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  const unsigned char *t = d->collision->allowed;
  cr_assert(t && t == m->geom_allowed, "the query reads the model's table");
  grit_model *copy;
  cr_assert_eq(grit_model_copy(m, &copy), GRIT_OK);
  const size_t bytes = (size_t)m->ngeom * (size_t)m->ngeom / 8 + 1;
  cr_assert(copy->geom_allowed != m->geom_allowed && !memcmp(copy->geom_allowed, t, bytes), "the copy's own table");
  grit_model_free(copy);
  const int ng = m->ngeom;
  int allowed = 0;
  for (int i = 0; i < ng; ++i)
    for (int j = 0; j < ng; ++j) {
      const size_t a = (size_t)i * (size_t)ng + (size_t)j;
      const int bit = t[a >> 3] >> (a & 7) & 1, want = i != j && grit_geom_pair_allowed(m, i < j ? i : j, i < j ? j : i);
      cr_assert_eq(bit, want, "geoms %d, %d: table %d, filter %d", i, j, bit, want);
      allowed += bit;
    }
  cr_assert(allowed > 0 && allowed < ng * (ng - 1), "%d of %d ordered pairs allowed: not a test", allowed, ng * (ng - 1));
  grit_data_free(d);
}

Test(step, allowed_pairs_table_same_pairs) {
  static const char *files[] = {"/tests/models/menagerie_collision/robotis_op3/scene.xml",
                                "/tests/models/menagerie_collision/franka_emika_panda/scene.xml",
                                "/tests/models/anymal_c/scene.xml"};
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  for (int f = 0; f < 3; ++f) {
    snprintf(path, sizeof path, "%s%s", GRIT_SOURCE_DIR, files[f]);
    cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
    table_is_the_filter(m);
    grit_model_free(m);
  }
  const char *xml = "<mujoco><worldbody><geom name='floor' type='plane' size='5 5 .1'/>"
                    "<body name='a' pos='0 0 1'><joint type='hinge'/><geom type='capsule' size='.05 .2'/>"
                    "<geom type='sphere' size='.1' contype='2' conaffinity='2'/>"
                    "<body name='b' pos='0 0 .3'><joint type='hinge'/><geom type='box' size='.1 .1 .1'/>"
                    "<body name='c' pos='0 0 .3'><joint type='hinge'/><geom name='gc' type='sphere' size='.1'/>"
                    "<body name='e' pos='0 0 .3'><joint type='hinge'/><geom name='ge' type='cylinder' size='.1 .1'/>"
                    "</body></body></body></body></worldbody>"
                    "<contact><exclude body1='a' body2='c'/><pair geom1='gc' geom2='ge'/></contact></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  table_is_the_filter(m);
  grit_model_free(m);
  for (int f = 0; f < 2; ++f) {
    snprintf(path, sizeof path, "%s%s", GRIT_SOURCE_DIR, files[f]);
    same_steps_with_and_without_table(path, 150);
  }
}
