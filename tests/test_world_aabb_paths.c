/* SPDX-License-Identifier: Apache-2.0 */
/* test_world_aabb_paths.c — a symmetric shape's world box from one support per axis and its mirror
 * (geometry.c, grit_shape_world_aabb) against the old two supports per axis (both_supports = 1). */
#include <criterion/criterion.h>
#include <string.h>

#include "collision_test_util.h"
#include "geometry_internal.h"

/* Spheres, capsules, boxes, cylinders and ellipsoids of random sizes at random poses, at axis-aligned
 * poses (rows with zeros: sgn(-0) = sgn(0) in the supports), at quarter turns about each axis and at
 * positions of +-0, with and without a margin: the same bits on both paths. */
Test(world_aabb_paths, mirror_support_same_box) {
  unsigned long long s = 4242;
  const grit_geom_type types[] = {GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, GRIT_GEOM_BOX, GRIT_GEOM_CYLINDER,
                                  GRIT_GEOM_ELLIPSOID};
  const double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  int boxes = 0;
  for (int i = 0; i < 5000; ++i) {
    const grit_shape sh = ct_random_shape(&s, types[i % 5], NULL);
    ct_pose P = ct_random_pose(&s, 2.0);
    if (i % 7 == 1) P = ct_identity_at(P.p[0], P.p[1], P.p[2]);
    if (i % 7 == 2) P = ct_rotated(ct_identity_at(P.p[0], P.p[1], P.p[2]), axes[i % 3], 1.5707963267948966);
    if (i % 11 == 3) P.p[0] = 0.0, P.p[1] = -0.0;
    const double margin = i % 3 ? 0.01 : 0.0;
    double lo[3], hi[3], lo0[3], hi0[3];
    grit_shape_world_aabb_path(&sh, P.p, P.R, margin, lo, hi, 0);
    grit_shape_world_aabb_path(&sh, P.p, P.R, margin, lo0, hi0, 1);
    for (int k = 0; k < 3; ++k)
      cr_assert(memcmp(&lo[k], &lo0[k], sizeof(double)) == 0 && memcmp(&hi[k], &hi0[k], sizeof(double)) == 0,
                "type %d pose %d axis %d: lo %.17g %.17g hi %.17g %.17g", (int)sh.type, i, k, lo[k], lo0[k], hi[k],
                hi0[k]);
    boxes++;
  }
  cr_assert_eq(boxes, 5000);
}
