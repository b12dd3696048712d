/* SPDX-License-Identifier: Apache-2.0 */
/* test_hfield_paths.c — the height field's prisms spared GJK/EPA (collision_hfield.c, hf_prism_idle)
 * against the old path that sends every prism through it (grit_collide_hfield_paths, all_prisms = 1). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision_hfield.h"
#include "collision_test_util.h"

enum { NROW = 9, NCOL = 11 };

/* An NROW x NCOL grid over [-1, 1] x [-0.8, 0.8]: kind 0 flat, 1 a tilted plane, 2 random bumps. */
static void field_grid(double *g, int kind, unsigned long long *s) {
  for (int r = 0; r < NROW; ++r)
    for (int c = 0; c < NCOL; ++c) {
      double *p = g + 3 * (r * NCOL + c);
      p[0] = 2.0 * c / (NCOL - 1) - 1.0;
      p[1] = 0.8 * (2.0 * r / (NROW - 1) - 1.0);
      p[2] = kind == 0 ? 0.0 : kind == 1 ? 0.2 + 0.05 * p[0] - 0.08 * p[1] : ct_uniform(s, 0.0, 0.15);
    }
}

/* The same candidate, bit for bit, field by field (the struct has padding). */
static int same_point(const grit_contact_point *x, const grit_contact_point *y) {
  const double *a[] = {x->n, x->pa, x->pb, x->pa_local, x->pb_local, x->n_local, x->fa_p, x->fb_p, x->fa_u, x->fb_u,
                       x->fa_q, x->fb_q, x->clip_p, x->clip_n};
  const double *b[] = {y->n, y->pa, y->pb, y->pa_local, y->pb_local, y->n_local, y->fa_p, y->fb_p, y->fa_u, y->fb_u,
                       y->fa_q, y->fb_q, y->clip_p, y->clip_n};
  if (memcmp(&x->phi, &y->phi, sizeof(double)) || x->fa != y->fa || x->fb != y->fb || x->clip != y->clip ||
      memcmp(&x->ra, &y->ra, sizeof(double)) || memcmp(&x->rb, &y->rb, sizeof(double)))
    return 0;
  for (int k = 0; k < 14; ++k)
    if ((k < 12 || x->clip) && memcmp(a[k], b[k], 3 * sizeof(double))) return 0;
  return 1;
}

/* Both paths on one pair: the same candidates in the same order; returns the prisms spared. */
static int compare_paths(const grit_shape *h, const ct_pose *F, const grit_shape *o, const ct_pose *P, double margin,
                         int *pairs, int *points) {
  grit_contact_point fast[GRIT_HFIELD_MAX_POINTS], old[GRIT_HFIELD_MAX_POINTS];
  int nf = 0, no = 0, idle = 0, idle_old = 0;
  cr_assert_eq(grit_collide_hfield_paths(h, F->p, F->R, o, P->p, P->R, margin, fast, &nf, 0, &idle), GRIT_OK);
  cr_assert_eq(grit_collide_hfield_paths(h, F->p, F->R, o, P->p, P->R, margin, old, &no, 1, &idle_old), GRIT_OK);
  cr_assert_eq(idle_old, 0);
  cr_assert_eq(nf, no, "shape %d at (%g %g %g): %d candidates against the old path's %d", (int)o->type, P->p[0],
               P->p[1], P->p[2], nf, no);
  for (int i = 0; i < nf; ++i)
    cr_assert(same_point(&fast[i], &old[i]), "shape %d candidate %d: phi %.17g against %.17g", (int)o->type, i,
              fast[i].phi, old[i].phi);
  *pairs += nf > 0;
  *points += nf;
  return idle;
}

/* Random shapes of every convex type at random poses over a flat, a tilted and a bumpy field (itself
 * placed at a random pose), from 5 cm above the surface to 3 cm into it: the same candidates, bit for
 * bit, on both paths; a share of the prisms is spared. */
Test(hfield_paths, random_shapes_same_candidates) {
  unsigned long long s = 2025;
  double grid[3 * NROW * NCOL], verts[14][3];
  const double hv[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, hv, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, GRIT_GEOM_BOX, GRIT_GEOM_CYLINDER,
                                  GRIT_GEOM_ELLIPSOID, GRIT_GEOM_CONVEX};
  int idle = 0, pairs = 0, points = 0;
  for (int kind = 0; kind < 3; ++kind) {
    field_grid(grid, kind, &s);
    const grit_shape h = grit_shape_hfield(grid, NROW, NCOL, 1.0, 0.8, 0.1);
    const ct_pose F = ct_random_pose(&s, 0.5);
    for (int i = 0; i < 600; ++i) {
      const grit_shape o = ct_random_shape(&s, types[i % 6], &verts[0][0]);
      ct_pose L = ct_random_pose(&s, 0.7), P; /* L: o's pose in the field's frame */
      double dz[3], sl[3], zlow;
      grit_m3_tmulv(dz, L.R, (const double[3]){0, 0, -1});
      grit_shape_support(&o, dz, sl);
      zlow = L.R[6] * sl[0] + L.R[7] * sl[1] + L.R[8] * sl[2]; /* o's lowest point above its origin */
      const double surf = kind == 0 ? 0.0 : kind == 1 ? 0.2 + 0.05 * L.p[0] - 0.08 * L.p[1] : 0.1;
      L.p[2] = surf - zlow + ct_uniform(&s, -0.03, 0.05);
      grit_tf_apply(P.p, F.p, F.R, L.p);
      grit_m3_mul(P.R, F.R, L.R);
      idle += compare_paths(&h, &F, &o, &P, 0.02, &pairs, &points);
    }
  }
  cr_log_info("random: %d pairs with %d candidates; %d prisms spared", pairs, points, idle);
  cr_assert_gt(pairs, 500);
  cr_assert_gt(idle, 1000);
}

/* Boxes resting with a face on a flat field (turned about z, a face's corners on different triangles),
 * exactly touching, 1 mm in and 1 mm above, margins 0 and 1 cm: the same candidates on both paths, and
 * most prisms under the box spared (the incentre under its bottom face). */
Test(hfield_paths, resting_boxes_same_candidates) {
  unsigned long long s = 31;
  double grid[3 * NROW * NCOL];
  field_grid(grid, 0, &s);
  const grit_shape h = grit_shape_hfield(grid, NROW, NCOL, 1.0, 0.8, 0.1);
  const ct_pose F = ct_identity_at(0.0, 0.0, 0.0);
  const double z_axis[3] = {0, 0, 1}, gaps[3] = {0.0, -1e-3, 1e-3};
  int idle = 0, pairs = 0, points = 0;
  for (int i = 0; i < 300; ++i) {
    const double hz = ct_uniform(&s, 0.05, 0.2);
    const grit_shape box = grit_shape_make(GRIT_GEOM_BOX, ct_uniform(&s, 0.1, 0.35), ct_uniform(&s, 0.1, 0.35), hz);
    ct_pose P = ct_identity_at(ct_uniform(&s, -0.6, 0.6), ct_uniform(&s, -0.5, 0.5), hz + gaps[i % 3]);
    if (i % 2) P = ct_rotated(P, z_axis, ct_uniform(&s, -3.0, 3.0));
    idle += compare_paths(&h, &F, &box, &P, i % 4 == 0 ? 0.0 : 0.01, &pairs, &points); /* margin 0: touching */
  }
  cr_log_info("resting: %d pairs with %d candidates; %d prisms spared", pairs, points, idle);
  cr_assert_gt(pairs, 200); /* all but the touching and hovering boxes at margin 0 */
  cr_assert_gt(idle, 300 * 4);
}
