/* SPDX-License-Identifier: Apache-2.0 */
/* test_collision_gjk.c — GJK/EPA's shortcuts against their plain paths: the point jump on cylinders
 * (collision_gjk.c, grit_gjk_info.no_point_jump); EPA's edge table rewritten for moved faces only (epa_rewrite). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision_test_util.h"
#include "geometry_internal.h"

/* The exact signed distance of a sphere (centre c, radius rs) from a cylinder at pose P (outside it),
 * and the unit normal from the cylinder to the sphere. */
static double sphere_cylinder_phi(const grit_shape *cyl, const ct_pose *P, const double c[3], double rs, double n[3]) {
  double d[3], x[3], q[3], ql[3];
  grit_v3_sub(d, c, P->p);
  grit_m3_tmulv(x, P->R, d);
  const double rho = hypot(x[0], x[1]), sc = rho > cyl->size[0] ? cyl->size[0] / rho : 1.0;
  grit_v3_set(ql, sc * x[0], sc * x[1], fmin(cyl->size[1], fmax(-cyl->size[1], x[2])));
  grit_tf_apply(q, P->p, P->R, ql);
  grit_v3_sub(n, c, q);
  const double dist = grit_v3_normalize(n);
  return dist - rs;
}

/* GJK's jump to a cylinder's nearest point to a single point of the other core (collision_gjk.c,
 * point_jump) against the old path (grit_gjk_info.no_point_jump): cylinders (as a and as b) against
 * hulls, boxes, spheres and capsules at random separated and overlapping poses. The same pairs are
 * candidates; pairs of overlapping cores give the same bits; separated cores phi to 1e-9 m and the normal and
 * witness points to the old path's own precision on curved cores (1e-4, docs/collision.md), never a
 * larger distance (GJK's upper bound) beyond round-off; against spheres (a point core) phi is exact to
 * round-off and the normal no worse than the old path's. Fewer GJK iterations overall. */
Test(collision, cylinder_point_jump_same_contacts) {
  unsigned long long s = 77;
  double verts[14][3];
  const double h[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, h, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_CONVEX, GRIT_GEOM_BOX, GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE};
  double worst_phi = 0.0, worst_n = 0.0, worst_w = 0.0, worst_up = 0.0, sph[2][2] = {{0, 0}, {0, 0}};
  int hits = 0, sep = 0, iters[2] = {0, 0};
  for (int trial = 0; trial < 2000; ++trial) {
    const grit_geom_type tb = types[trial % 4];
    grit_shape a = ct_random_shape(&s, GRIT_GEOM_CYLINDER, &verts[0][0]), b = ct_random_shape(&s, tb, &verts[0][0]);
    ct_pose A = ct_random_pose(&s, 0.3), B = ct_random_pose(&s, 0.3);
    const int swap = trial % 8 >= 4;
    const grit_placed_shape pa = {&a, A.p, A.R}, pb = {&b, B.p, B.R};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    int hit[2];
    for (int r = 0; r < 2; ++r) {
      grit_gjk_info info;
      memset(&info, 0, sizeof info);
      info.no_point_jump = r;
      hit[r] = swap ? grit_gjk_epa(&pb, &pa, 0.05, &phi[r], n[r], wa[r], wb[r], &info)
                    : grit_gjk_epa(&pa, &pb, 0.05, &phi[r], n[r], wa[r], wb[r], &info);
      cr_assert_eq(info.no_point_jump, r, "trial %d: the switch was not kept", trial);
      iters[r] += info.gjk_iterations;
    }
    if (hit[0] != hit[1]) { /* only at the window's edge */
      cr_assert(fabs(phi[hit[0] ? 0 : 1] - 0.05) <= 1e-9, "trial %d: candidate %d vs %d", trial, hit[0], hit[1]);
      continue;
    }
    if (!hit[0]) continue;
    hits++;
    if (phi[1] + grit_shape_core_radius(&a) + grit_shape_core_radius(&b) <= 1e-9) { /* the cores overlap */
      cr_assert(!memcmp(&phi[0], &phi[1], sizeof phi[0]) && !memcmp(n[0], n[1], sizeof n[0]) &&
                    !memcmp(wa[0], wa[1], sizeof wa[0]) && !memcmp(wb[0], wb[1], sizeof wb[0]),
                "trial %d: an overlap with other bits %.17g %.17g", trial, phi[0], phi[1]);
      continue;
    }
    sep++;
    worst_phi = fmax(worst_phi, fabs(phi[0] - phi[1]));
    worst_n = fmax(worst_n, ct_dist3(n[0], n[1]));
    worst_w = fmax(worst_w, fmax(ct_dist3(wa[0], wa[1]), ct_dist3(wb[0], wb[1])));
    worst_up = fmax(worst_up, phi[0] - phi[1]);
    if (tb == GRIT_GEOM_SPHERE) {
      double ne[3];
      const double exact = sphere_cylinder_phi(&a, &A, B.p, b.size[0], ne);
      if (swap) grit_v3_scale(ne, ne, -1.0);
      for (int r = 0; r < 2; ++r) {
        sph[r][0] = fmax(sph[r][0], fabs(phi[r] - exact));
        sph[r][1] = fmax(sph[r][1], ct_dist3(n[r], ne));
      }
    }
  }
  printf("cylinder point jump vs old path: %d candidates (%d apart): dphi %.1e, dn %.1e, dw %.1e, larger by %.1e; "
         "spheres' phi, n errors %.1e, %.1e (old %.1e, %.1e); GJK iterations %d (old %d)\n",
         hits, sep, worst_phi, worst_n, worst_w, worst_up, sph[0][0], sph[0][1], sph[1][0], sph[1][1], iters[0], iters[1]);
  cr_assert(hits > 300 && sep > 100, "%d candidates, %d apart", hits, sep);
  cr_assert(worst_phi <= 1e-9 && worst_n <= 1e-4 && worst_w <= 1e-4, "dphi %g dn %g dw %g", worst_phi, worst_n, worst_w);
  cr_assert(worst_up <= 1e-14, "the jump's distance exceeds the old one by %g", worst_up);
  cr_assert(sph[0][0] <= 1e-14 && sph[0][1] <= fmax(1e-12, sph[1][1]), "sphere-cylinder: phi %g, n %g off", sph[0][0],
            sph[0][1]);
  cr_assert(iters[0] < iters[1], "GJK iterations %d (old %d)", iters[0], iters[1]);
}

/* EPA's edge table with only the moved faces' edges written again after an expansion (collision_gjk.c,
 * polytope.rewrite) against every kept face's (grit_gjk_info.epa_rewrite): overlapping boxes, cylinders,
 * ellipsoids, capsules and hulls at random poses, and at axis-aligned poses (faces at equal distances),
 * many running EPA to its capacity on the curved cores, give the same phi, normal and witness points to the
 * bit and the same iteration counts. */
Test(collision, epa_moved_edges_rewritten_same_bits) {
  unsigned long long s = 57;
  double verts[14][3];
  const double h[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, h, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_BOX, GRIT_GEOM_CYLINDER, GRIT_GEOM_ELLIPSOID, GRIT_GEOM_CAPSULE, GRIT_GEOM_CONVEX};
  int epa_runs = 0, capped = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const grit_geom_type ta = types[trial % 5], tb = types[(trial / 5) % 5];
    grit_shape a = ct_random_shape(&s, ta, &verts[0][0]), b = ct_random_shape(&s, tb, &verts[0][0]);
    ct_pose A = ct_random_pose(&s, 0.1), B = ct_random_pose(&s, 0.1);
    if (trial % 3 == 0) /* axis-aligned: ties between faces */
      A = ct_identity_at(A.p[0], A.p[1], A.p[2]), B = ct_identity_at(0.5 * A.p[0], A.p[1], 0.0);
    const grit_placed_shape pa = {&a, A.p, A.R}, pb = {&b, B.p, B.R};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    grit_gjk_info info[2];
    int hit[2];
    for (int r = 0; r < 2; ++r) {
      memset(&info[r], 0, sizeof info[r]);
      info[r].epa_rewrite = r;
      hit[r] = grit_gjk_epa(&pa, &pb, 0.01, &phi[r], n[r], wa[r], wb[r], &info[r]);
    }
    cr_assert_eq(hit[0], hit[1], "trial %d", trial);
    cr_assert_eq(info[1].epa_rewrite, 1, "trial %d: the switch was not kept", trial);
    if (!hit[0]) continue;
    cr_assert(info[0].epa_iterations == info[1].epa_iterations && info[0].epa_converged == info[1].epa_converged &&
                  info[0].gjk_iterations == info[1].gjk_iterations && info[0].polish_steps == info[1].polish_steps,
              "trial %d: other iterations", trial);
    cr_assert(!memcmp(&phi[0], &phi[1], sizeof phi[0]) && !memcmp(n[0], n[1], sizeof n[0]) &&
                  !memcmp(wa[0], wa[1], sizeof wa[0]) && !memcmp(wb[0], wb[1], sizeof wb[0]),
              "trial %d: other bits", trial);
    epa_runs += info[0].epa_iterations > 0;
    capped += info[0].epa_iterations > 0 && !info[0].epa_converged;
  }
  cr_log_info("EPA expanded on %d pairs, %d of them to its capacity", epa_runs, capped);
  cr_assert(epa_runs > 600 && capped > 40, "EPA expanded on %d pairs, %d to capacity", epa_runs, capped);
}
