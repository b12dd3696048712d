/* SPDX-License-Identifier: Apache-2.0 */
/* test_collision_far.c — a pair's kept far axis (collision.c, apart_along; grit_collision.no_far_axis): the
 * axis GJK reports separates the shapes by more than the margin, and a scene of hulls steps to the same
 * bits with and without the test before GJK/EPA. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "collision.h"
#include "collision_test_util.h"
#include "data_internal.h"
#include "physics_scenes.h"

#define FAR_NV 40

/* FAR_NV points of an ellipsoid's surface (a Fibonacci lattice: every one a vertex of their hull), off the
 * origin by c: a hull that climbs (at least GRIT_HULL_SCAN_BELOW vertices). */
static void far_hull(double v[FAR_NV][3], const double semi[3], const double c[3]) {
  for (int i = 0; i < FAR_NV; ++i) {
    const double z = 1.0 - (2.0 * i + 1.0) / FAR_NV, r = sqrt(1.0 - z * z), a = 2.399963229728653 * i;
    const double u[3] = {r * cos(a), r * sin(a), z};
    for (int k = 0; k < 3; ++k) v[i][k] = c[k] + semi[k] * u[k];
  }
}

/* max over the placed shape's points of d . x, by its support (a hull's by the scan) */
static double far_support_value(const grit_shape *s, const ct_pose *P, const double d[3]) {
  double dl[3], x[3], w[3];
  grit_m3_tmulv(dl, P->R, d);
  cr_assert_eq(grit_shape_support(s, dl, x), GRIT_OK);
  grit_tf_apply(w, P->p, P->R, x);
  return grit_v3_dot(d, w);
}

/* Random pairs of a hull and every bounded shape: when GJK reports a far axis, no candidate is found and
 * the shapes are apart along it by more than the margin (b's extent below a's). */
Test(collision_far, gjk_far_axis_separates) {
  unsigned long long seed = 7;
  static double va[FAR_NV][3];
  int far = 0, near = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const double semi[3] = {ct_uniform(&seed, 0.05, 0.2), ct_uniform(&seed, 0.05, 0.2), ct_uniform(&seed, 0.05, 0.2)};
    const double c[3] = {ct_uniform(&seed, -0.05, 0.05), ct_uniform(&seed, -0.05, 0.05), ct_uniform(&seed, -0.05, 0.05)};
    far_hull(va, semi, c);
    const grit_shape hull = grit_shape_convex(&va[0][0], FAR_NV);
    double vb[14][3];
    const grit_geom_type t = (grit_geom_type)(1 + (int)ct_uniform(&seed, 0, 6 - 1e-9)); /* sphere .. convex */
    if (t == GRIT_GEOM_CONVEX) {
      const double h[3] = {ct_uniform(&seed, 0.05, 0.2), ct_uniform(&seed, 0.05, 0.2), ct_uniform(&seed, 0.05, 0.2)};
      ct_convex_vertices(vb, h, 0.05);
    }
    const grit_shape other = ct_random_shape(&seed, t, &vb[0][0]);
    const int swap = trial % 2; /* the hull as a and as b */
    const grit_shape *a = swap ? &other : &hull, *b = swap ? &hull : &other;
    const ct_pose A = ct_random_pose(&seed, 0.4), B = ct_random_pose(&seed, 0.4);
    const double margin = ct_uniform(&seed, 0.0, 0.05);
    grit_contact_point out[GRIT_COLLIDE_MAX_POINTS];
    double axis[4] = {NAN, NAN, NAN, NAN};
    int n = -1;
    cr_assert_eq(grit_collide_kept(a, A.p, A.R, b, B.p, B.R, margin, out, GRIT_COLLIDE_MAX_POINTS, &n, NULL, axis),
                 GRIT_OK);
    cr_assert(axis[3] == 0.0 || axis[3] == 1.0, "trial %d: flag %g", trial, axis[3]);
    if (axis[3] == 0.0) {
      near++;
      continue;
    }
    far++;
    cr_assert_eq(n, 0, "trial %d: far, yet %d candidates", trial, n);
    const double nu[3] = {-axis[0], -axis[1], -axis[2]};
    const double gap = -far_support_value(a, &A, nu) - far_support_value(b, &B, axis);
    cr_assert(gap > margin * grit_v3_norm(axis), "trial %d (types %d, %d): gap %g along the axis, margin %g", trial,
              a->type, b->type, gap / grit_v3_norm(axis), margin);
  }
  cr_assert(far > 500 && near > 500, "%d far, %d not", far, near);
}

/* Hulls (climbing: a kept axis each pair) and a few spheres and boxes dropped into a box of four walls,
 * stepped with and without the test: the same candidates, in the same order, with the same bits, and the
 * same states; the test drops pairs. */
Test(collision_far, hull_pile_steps_to_the_same_bits) {
  static double verts[2][36][FAR_NV][3];
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_data *d[2];
  grit_model *m[2];
  for (int run = 0; run < 2; ++run) {
    unsigned long long seed = 23;
    grit_builder *b = scene_builder(2e-3, NULL);
    grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
    grit_builder_add_geom(b, &ground, NULL);
    for (int w = 0; w < 4; ++w) { /* walls at x, y = +-0.12 facing in */
      const double a = 0.5 * (w < 2 ? 1.5707963267948966 : -1.5707963267948966), s = w % 2 ? -1.0 : 1.0;
      grit_geom_def g = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
      g.quat[0] = cos(a);
      g.quat[1] = w < 2 ? 0.0 : s * sin(a);
      g.quat[2] = w < 2 ? s * sin(a) : 0.0;
      g.quat[3] = 0.0;
      g.pos[0] = w < 2 ? -0.12 * s : 0.0;
      g.pos[1] = w < 2 ? 0.0 : 0.12 * s;
      cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    for (int i = 0; i < 36; ++i) {
      const double pos[3] = {ct_uniform(&seed, -0.1, 0.1), ct_uniform(&seed, -0.1, 0.1), ct_uniform(&seed, 0.03, 0.3)};
      const int body = scene_free_body(b, 0.05, 1e-5, 1e-5, 1e-5, pos);
      const double semi[3] = {ct_uniform(&seed, 0.01, 0.025), ct_uniform(&seed, 0.01, 0.025), ct_uniform(&seed, 0.01, 0.025)};
      const double off[3] = {ct_uniform(&seed, -0.01, 0.01), ct_uniform(&seed, -0.01, 0.01), ct_uniform(&seed, -0.01, 0.01)};
      far_hull(verts[run][i], semi, off);
      grit_shape sh = grit_shape_convex(&verts[run][i][0][0], FAR_NV);
      if (i % 9 == 4) sh = grit_shape_make(GRIT_GEOM_SPHERE, semi[0], 0, 0);
      if (i % 9 == 8) sh = grit_shape_make(GRIT_GEOM_BOX, semi[0], semi[1], semi[2]);
      grit_geom_def g = scene_geom(&c, body, sh);
      for (int k = 0; k < 4; ++k) g.quat[k] = ct_uniform(&seed, -1, 1);
      cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
    d[run] = scene_data(b, &m[run], GRIT_CONTACT_LAGGED);
    d[run]->collision->no_far_axis = run;
  }
  int touching = 0, skips = 0;
  for (int step = 0; step < 300; ++step) {
    for (int run = 0; run < 2; ++run) cr_assert_eq(grit_step(d[run]), GRIT_OK, "%s", d[run]->message);
    const grit_collision *x = d[0]->collision, *y = d[1]->collision;
    cr_assert_eq(y->far_skips, 0);
    skips += x->far_skips;
    cr_assert_eq(x->n, y->n, "step %d: %d candidates, %d without the test", step, x->n, y->n);
    for (int k = 0; k < x->n; ++k) {
      const grit_contact_point *p = &x->c[k].pt, *q = &y->c[k].pt;
      cr_assert(x->c[k].geom[0] == y->c[k].geom[0] && x->c[k].geom[1] == y->c[k].geom[1], "step %d candidate %d", step, k);
      cr_assert(!memcmp(&p->phi, &q->phi, sizeof p->phi) && !memcmp(p->n, q->n, sizeof p->n) &&
                    !memcmp(p->pa, q->pa, sizeof p->pa) && !memcmp(p->pb, q->pb, sizeof p->pb) && p->fa == q->fa &&
                    p->fb == q->fb && !memcmp(p->fa_p, q->fa_p, sizeof p->fa_p) && !memcmp(p->fb_p, q->fb_p, sizeof p->fb_p),
                "step %d candidate %d: other bits", step, k);
    }
    cr_assert(!memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m[0]->nq), "step %d: other positions", step);
    cr_assert(!memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m[0]->nv), "step %d: other velocities", step);
    touching = x->n > touching ? x->n : touching;
  }
  cr_assert(touching > 30 && skips > 300, "%d candidates at most, %d pairs dropped by their axis", touching, skips);
  for (int run = 0; run < 2; ++run) {
    grit_data_free(d[run]);
    grit_model_free(m[run]);
  }
}
