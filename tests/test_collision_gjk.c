/* SPDX-License-Identifier: Apache-2.0 */
/* test_collision_gjk.c — GJK/EPA's shortcuts against their plain paths: the point jump on cylinders
 * (collision_gjk.c, grit_gjk_info.no_point_jump) and on a hull's edge or face (no_edge_jump); EPA's edge table rewritten
 * for moved faces only (epa_rewrite). */
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

/* Which of GJK's jumps a test switches off (grit_gjk_info's no_point_jump, no_edge_jump, no_newton,
 * no_polish_jump). */
enum jump { POINT_JUMP, EDGE_JUMP, NEWTON_JUMP, POLISH_JUMP };

/* The pair (b first if swap) by GJK/EPA with the jump (r = 0) and without it (r = 1), the switch kept in
 * the info; results into phi[r], n[r], wa[r], wb[r], hit[r], GJK's iterations added to iters[r]. */
static void with_and_without(const grit_placed_shape *pa, const grit_placed_shape *pb, int swap, double margin,
                             enum jump j, int trial, double phi[2], double n[2][3], double wa[2][3], double wb[2][3],
                             int hit[2], int iters[2]) {
  for (int r = 0; r < 2; ++r) {
    grit_gjk_info info;
    memset(&info, 0, sizeof info);
    int *sw = j == POINT_JUMP    ? &info.no_point_jump
              : j == EDGE_JUMP     ? &info.no_edge_jump
              : j == NEWTON_JUMP   ? &info.no_newton
                                   : &info.no_polish_jump;
    /* the point and edge jumps' overlaps compare by bits: their polish without jumps on both paths */
    if (j == POINT_JUMP || j == EDGE_JUMP) info.no_polish_jump = 1;
    *sw = r;
    hit[r] = swap ? grit_gjk_epa(pb, pa, margin, &phi[r], n[r], wa[r], wb[r], &info)
                  : grit_gjk_epa(pa, pb, margin, &phi[r], n[r], wa[r], wb[r], &info);
    cr_assert_eq(*sw, r, "trial %d: the switch was not kept", trial);
    iters[r] += info.gjk_iterations;
  }
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
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    int hit[2];
    with_and_without(&pa, &pb, swap, 0.05, POINT_JUMP, trial, phi, n, wa, wb, hit, iters);
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
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
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

/* The distance of the local point x from the solid cylinder (radius r, half-length h), as point_jump's
 * closed form. */
static double cyl_dist(const grit_shape *cyl, const double x[3]) {
  const double rho = hypot(x[0], x[1]), dr = fmax(0.0, rho - cyl->size[0]), dz = fmax(0.0, fabs(x[2]) - cyl->size[1]);
  return hypot(dr, dz);
}

/* Brute force: the least distance from a cylinder of the points of a segment (cylinder's frame), by a golden
 * section search of the convex distance along it (the distance to round-off; the point to ~1e-8). */
static double seg_cyl_dist(const grit_shape *cyl, const double p[3], const double q[3]) {
  const double g = 0.5 * (sqrt(5.0) - 1.0);
  double lo = 0.0, hi = 1.0, best = INFINITY;
  for (int it = 0; it < 200; ++it) {
    double t1 = hi - g * (hi - lo), t2 = lo + g * (hi - lo), x1[3], x2[3];
    for (int k = 0; k < 3; ++k) x1[k] = p[k] + t1 * (q[k] - p[k]), x2[k] = p[k] + t2 * (q[k] - p[k]);
    const double f1 = cyl_dist(cyl, x1), f2 = cyl_dist(cyl, x2);
    best = fmin(best, fmin(f1, f2));
    if (f1 < f2) hi = t2;
    else lo = t1;
  }
  return fmin(best, fmin(cyl_dist(cyl, p), cyl_dist(cyl, q)));
}

/* Brute force: the distance of a separated box from a cylinder, over all the box's features: its 8 corners
 * and 12 edges (golden section), and each face's interior (the cylinder's support toward the face, when its
 * foot lies inside the face). */
static double box_cyl_dist(const grit_shape *cyl, const ct_pose *C, const grit_shape *box, const ct_pose *B) {
  double corner[8][3], best = INFINITY;
  for (int i = 0; i < 8; ++i) {
    double l[3] = {i & 1 ? box->size[0] : -box->size[0], i & 2 ? box->size[1] : -box->size[1],
                   i & 4 ? box->size[2] : -box->size[2]},
           w[3], d[3];
    grit_tf_apply(w, B->p, B->R, l);
    grit_v3_sub(d, w, C->p);
    grit_m3_tmulv(corner[i], C->R, d);
  }
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k)
      if (!(i & (1 << k))) best = fmin(best, seg_cyl_dist(cyl, corner[i], corner[i | (1 << k)]));
  for (int k = 0; k < 3; ++k)
    for (int sg = -1; sg <= 1; sg += 2) {
      double nw[3] = {sg * B->R[k], sg * B->R[3 + k], sg * B->R[6 + k]}, nl[3], s[3], sw[3], d[3], bl[3];
      grit_m3_tmulv(nl, C->R, nw);
      grit_v3_scale(nl, nl, -1.0); /* from the face toward the cylinder */
      grit_shape_core_support(cyl, nl, s);
      grit_tf_apply(sw, C->p, C->R, s);
      grit_v3_sub(d, sw, B->p);
      grit_m3_tmulv(bl, B->R, d); /* the support point in the box's frame */
      const double gap = sg * bl[k] - box->size[k];
      int inside = gap > 0.0;
      for (int j = 0; j < 3; ++j)
        if (j != k && fabs(bl[j]) > box->size[j]) inside = 0;
      if (inside) best = fmin(best, gap);
    }
  return best;
}

/* GJK's jump to the exact closest points of a cylinder and an edge of the other core (collision_gjk.c,
 * edge_jump) against the old path (grit_gjk_info.no_edge_jump): cylinders (as a and as b) against hulls, boxes
 * and capsules at random poses. The same candidates; overlaps the same bits; separated pairs phi to 1e-9 and the
 * normal to the old path's precision (1e-4), never a larger distance beyond round-off; against boxes phi is
 * checked against a brute-force distance over all the box's features: the jump's error no larger than the old
 * path's and within 1e-12. Fewer GJK iterations overall. */
Test(collision, cylinder_edge_jump_same_contacts) {
  unsigned long long s = 91;
  double verts[14][3];
  const double h[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, h, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_CONVEX, GRIT_GEOM_BOX, GRIT_GEOM_CAPSULE};
  double worst_phi = 0.0, worst_n = 0.0, worst_up = 0.0, brute[2] = {0.0, 0.0};
  int hits = 0, sep = 0, boxes = 0, iters[2] = {0, 0};
  for (int trial = 0; trial < 3000; ++trial) {
    const grit_geom_type tb = types[trial % 3];
    grit_shape a = ct_random_shape(&s, GRIT_GEOM_CYLINDER, &verts[0][0]), b = ct_random_shape(&s, tb, &verts[0][0]);
    ct_pose A = ct_random_pose(&s, 0.4), B = ct_random_pose(&s, 0.4);
    const int swap = trial % 6 >= 3;
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    int hit[2];
    with_and_without(&pa, &pb, swap, 0.1, EDGE_JUMP, trial, phi, n, wa, wb, hit, iters);
    if (hit[0] != hit[1]) {
      cr_assert(fabs(phi[hit[0] ? 0 : 1] - 0.1) <= 1e-9, "trial %d: candidate %d vs %d", trial, hit[0], hit[1]);
      continue;
    }
    if (!hit[0]) continue;
    hits++;
    if (phi[1] + grit_shape_core_radius(&a) + grit_shape_core_radius(&b) <= 1e-9) {
      cr_assert(!memcmp(&phi[0], &phi[1], sizeof phi[0]) && !memcmp(n[0], n[1], sizeof n[0]) &&
                    !memcmp(wa[0], wa[1], sizeof wa[0]) && !memcmp(wb[0], wb[1], sizeof wb[0]),
                "trial %d: an overlap with other bits %.17g %.17g", trial, phi[0], phi[1]);
      continue;
    }
    sep++;
    worst_phi = fmax(worst_phi, fabs(phi[0] - phi[1]));
    worst_n = fmax(worst_n, ct_dist3(n[0], n[1]));
    worst_up = fmax(worst_up, phi[0] - phi[1]);
    if (tb == GRIT_GEOM_BOX) {
      const double exact = box_cyl_dist(&a, &A, &b, &B);
      boxes++;
      for (int r = 0; r < 2; ++r) brute[r] = fmax(brute[r], fabs(phi[r] - exact));
    }
  }
  printf("cylinder edge jump vs old path: %d candidates (%d apart, %d boxes): dphi %.1e, dn %.1e, larger by %.1e; "
         "boxes' phi vs brute force %.1e (old %.1e); GJK iterations %d (old %d)\n",
         hits, sep, boxes, worst_phi, worst_n, worst_up, brute[0], brute[1], iters[0], iters[1]);
  cr_assert(hits > 300 && sep > 100 && boxes > 30, "%d candidates, %d apart, %d boxes", hits, sep, boxes);
  cr_assert(worst_phi <= 1e-9 && worst_n <= 1e-4, "dphi %g dn %g", worst_phi, worst_n);
  cr_assert(worst_up <= 1e-14, "the jump's distance exceeds the old one by %g", worst_up);
  cr_assert(brute[0] <= 1e-12 && brute[0] <= fmax(1e-15, brute[1]), "box-cylinder phi %g off (old %g)", brute[0],
            brute[1]);
  cr_assert(iters[0] < iters[1], "GJK iterations %d (old %d)", iters[0], iters[1]);
}

/* The distance of the point x (local frame) from the surface of the ellipsoid with semi-axes z: the root t of
 * sum (z_k x_k / (t + z_k^2))^2 = 1 (decreasing in t > -min z_k^2) by bisection (Eberly's), t > 0 outside,
 * t < 0 inside; the nearest point y_k = z_k^2 x_k / (t + z_k^2). */
static double point_ellipsoid_distance(const double z[3], const double x[3]) {
  double lo = 0.0, hi = 1.0, in = 0.0;
  for (int k = 0; k < 3; ++k) in += (x[k] / z[k]) * (x[k] / z[k]);
  if (in < 1.0) lo = -fmin(z[0] * z[0], fmin(z[1] * z[1], z[2] * z[2])), hi = 0.0;
  for (; in >= 1.0;) {
    double f = 0.0;
    for (int k = 0; k < 3; ++k) f += (z[k] * x[k] / (hi + z[k] * z[k])) * (z[k] * x[k] / (hi + z[k] * z[k]));
    if (f < 1.0) break;
    hi *= 2.0;
  }
  for (int i = 0; i < 200; ++i) {
    const double t = 0.5 * (lo + hi);
    double f = 0.0;
    for (int k = 0; k < 3; ++k) f += (z[k] * x[k] / (t + z[k] * z[k])) * (z[k] * x[k] / (t + z[k] * z[k]));
    if (f > 1.0) lo = t;
    else hi = t;
  }
  double d2 = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double y = z[k] * z[k] * x[k] / (0.5 * (lo + hi) + z[k] * z[k]);
    d2 += (x[k] - y) * (x[k] - y);
  }
  return sqrt(d2);
}

/* h_D(u) of the cores of a and b: u . (s_a(u) - s_b(-u)), world frame. */
static double core_h(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B, const double u[3]) {
  double dl[3], ol[3], pa[3], pb[3], nu[3] = {-u[0], -u[1], -u[2]};
  grit_m3_tmulv(dl, A->R, u);
  grit_shape_core_support(a, dl, ol);
  grit_tf_apply(pa, A->p, A->R, ol);
  grit_m3_tmulv(dl, B->R, nu);
  grit_shape_core_support(b, dl, ol);
  grit_tf_apply(pb, B->p, B->R, ol);
  return grit_v3_dot(u, pa) - grit_v3_dot(u, pb);
}

/* Brute force: a local minimum of h_D over unit u (an upper bound on the cores' overlap depth, which is its
 * global minimum) by a pattern search on the sphere from u0, 8 directions, steps halving from 1e-3 to 1e-13 rad. */
static double pattern_min(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B,
                          const double u0[3]) {
  double u[3], best;
  grit_v3_copy(u, u0);
  best = core_h(a, A, b, B, u);
  for (double step = 1e-3; step > 1e-13;) {
    double t[2][3], e[3] = {fabs(u[0]) < 0.57 ? 1.0 : 0.0, fabs(u[0]) < 0.57 ? 0.0 : 1.0, 0.0};
    grit_v3_cross(t[0], u, e);
    grit_v3_normalize(t[0]);
    grit_v3_cross(t[1], u, t[0]);
    int moved = 0;
    for (int k = 0; k < 8 && !moved; ++k) {
      const double c = cos(k * 0.7853981633974483), s = sin(k * 0.7853981633974483);
      double d[3];
      for (int i = 0; i < 3; ++i) d[i] = u[i] + step * (c * t[0][i] + s * t[1][i]);
      grit_v3_normalize(d);
      const double h = core_h(a, A, b, B, d);
      if (h < best) best = h, grit_v3_copy(u, d), moved = 1;
    }
    if (!moved) step *= 0.5;
  }
  return best;
}

/* GJK's Newton jump on two smooth curved cores (collision_gjk_newton.c) against the old path
 * (grit_gjk_info.no_newton): ellipsoids, cylinders and spheres in every pairing but sphere-sphere, at random
 * separated and overlapping poses. The same candidates; overlapping cores the same bits (they take the old
 * path); separated cores phi to 1e-10 m, never larger than the old phi beyond round-off (both are GJK's upper
 * bound |v|), the normal and witness points to the old path's precision on curved cores (1e-4); against a
 * sphere, phi to round-off of the exact point-ellipsoid distance and no worse than the old path's; far fewer
 * GJK iterations. */
Test(collision, curved_newton_jump_same_contacts) {
  unsigned long long s = 2929;
  const grit_geom_type types[3] = {GRIT_GEOM_ELLIPSOID, GRIT_GEOM_CYLINDER, GRIT_GEOM_SPHERE};
  double worst_phi = 0.0, worst_n = 0.0, worst_w = 0.0, worst_up = 0.0, ov_phi = 0.0, ov_n = 0.0;
  double sph[2][2] = {{0, 0}, {0, 0}}, ov_err[2] = {0, 0}; /* [overlap][new, old]; [new, old] */
  int hits = 0, sep = 0, iters[2] = {0, 0};
  for (int trial = 0; trial < 3000; ++trial) {
    const grit_geom_type ta = types[trial % 3], tb = types[(trial / 3) % 3];
    if (ta == GRIT_GEOM_SPHERE && tb == GRIT_GEOM_SPHERE) continue;
    grit_shape a = ct_random_shape(&s, ta, NULL), b = ct_random_shape(&s, tb, NULL);
    ct_pose A = ct_random_pose(&s, 0.4), B = ct_random_pose(&s, 0.4);
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    int hit[2];
    with_and_without(&pa, &pb, 0, 0.1, NEWTON_JUMP, trial, phi, n, wa, wb, hit, iters);
    if (hit[0] != hit[1]) { /* only at the window's edge */
      cr_assert(fabs(phi[hit[0] ? 0 : 1] - 0.1) <= 1e-10, "trial %d: candidate %d vs %d", trial, hit[0], hit[1]);
      continue;
    }
    if (!hit[0]) continue;
    hits++;
    const int over = phi[1] + grit_shape_core_radius(&a) + grit_shape_core_radius(&b) <= 1e-9; /* cores overlap */
    if (over) { /* the polish's separations take the jump too: both against brute force */
      ov_phi = fmax(ov_phi, fabs(phi[0] - phi[1]));
      ov_n = fmax(ov_n, ct_dist3(n[0], n[1]));
      const double hmin = fmin(pattern_min(&a, &A, &b, &B, n[0]), pattern_min(&a, &A, &b, &B, n[1]));
      for (int r = 0; r < 2; ++r) ov_err[r] = fmax(ov_err[r], core_h(&a, &A, &b, &B, n[r]) - hmin);
    } else {
      sep++;
      worst_phi = fmax(worst_phi, fabs(phi[0] - phi[1]));
      worst_n = fmax(worst_n, ct_dist3(n[0], n[1]));
      worst_w = fmax(worst_w, fmax(ct_dist3(wa[0], wa[1]), ct_dist3(wb[0], wb[1])));
      worst_up = fmax(worst_up, phi[0] - phi[1]);
    }
    if ((ta == GRIT_GEOM_SPHERE) != (tb == GRIT_GEOM_SPHERE) &&
        (ta == GRIT_GEOM_ELLIPSOID || tb == GRIT_GEOM_ELLIPSOID)) { /* the exact point-ellipsoid distance */
      const grit_shape *e = ta == GRIT_GEOM_ELLIPSOID ? &a : &b, *o = e == &a ? &b : &a;
      const ct_pose *E = e == &a ? &A : &B, *O = e == &a ? &B : &A;
      double d[3], xl[3];
      grit_v3_sub(d, O->p, E->p);
      grit_m3_tmulv(xl, E->R, d);
      const double exact = (over ? -1.0 : 1.0) * point_ellipsoid_distance(e->size, xl) - o->size[0];
      for (int r = 0; r < 2; ++r) sph[over][r] = fmax(sph[over][r], fabs(phi[r] - exact));
    }
  }
  printf("curved Newton jump vs old path: %d candidates (%d apart): dphi %.1e, dn %.1e, dw %.1e, larger by %.1e; "
         "overlaps dphi %.1e, dn %.1e, h_D(n) above a local minimum by %.1e (old %.1e); sphere-ellipsoid phi error %.1e (old %.1e), overlapping %.1e (old %.1e); "
         "GJK iterations %d (old %d)\n",
         hits, sep, worst_phi, worst_n, worst_w, worst_up, ov_phi, ov_n, ov_err[0], ov_err[1], sph[0][0], sph[0][1], sph[1][0], sph[1][1],
         iters[0], iters[1]);
  cr_assert(hits > 300 && sep > 100, "%d candidates, %d apart", hits, sep);
  cr_assert(worst_phi <= 1e-10 && worst_n <= 1e-4 && worst_w <= 1e-4, "dphi %g dn %g dw %g", worst_phi, worst_n, worst_w);
  cr_assert(worst_up <= 1e-14, "the jump's distance exceeds the old one by %g", worst_up);
  cr_assert(ov_phi <= 1e-7 && ov_n <= 1e-3, "overlaps: dphi %g dn %g", ov_phi, ov_n);
  cr_assert(ov_err[0] <= fmax(1e-12, ov_err[1]), "overlaps: the normal's h_D above a minimum by %g (old %g)", ov_err[0],
            ov_err[1]);
  cr_assert(sph[0][0] <= 1e-13 && sph[0][0] <= fmax(1e-15, sph[0][1]), "sphere-ellipsoid: phi %g off (old %g)",
            sph[0][0], sph[0][1]);
  cr_assert(sph[1][0] <= fmax(1e-12, sph[1][1]), "overlapping sphere-ellipsoid: phi %g off (old %g)", sph[1][0],
            sph[1][1]);
  cr_assert(2 * iters[0] < iters[1], "GJK iterations %d (old %d)", iters[0], iters[1]);
}

/* The polish's separations with the point and edge jumps, started along the polish's normal and seeded by the
 * last separation's closest point (collision_gjk.c, polish_eval) against the old path (grit_gjk_info.no_polish_jump): cylinders (as a and as b)
 * overlapping hulls, boxes and capsules, deep enough that EPA stops at its capacity and the polish runs. The
 * same candidates; separated pairs the same bits (the polish does not run); overlaps by the polish's precision
 * (phi 1e-7 m, the normal 1e-3: collision_gjk.c's header), the normal's h_D above a local minimum (pattern
 * search from both normals) no worse than the old path's beyond 1e-12; fewer GJK iterations in the polish
 * (measured by the calls' instructions in docs/performance.md; here the polish steps are counted). */
Test(collision, polish_jump_same_contacts) {
  unsigned long long s = 3131;
  double verts[14][3];
  const double h[3] = {0.1, 0.15, 0.2};
  ct_convex_vertices(verts, h, 0.05);
  const grit_geom_type types[] = {GRIT_GEOM_CONVEX, GRIT_GEOM_BOX, GRIT_GEOM_CAPSULE};
  double ov_phi = 0.0, ov_n = 0.0, ov_err[2] = {0, 0};
  int hits = 0, over = 0, polished = 0, iters[2] = {0, 0};
  for (int trial = 0; trial < 1500; ++trial) {
    const grit_geom_type tb = types[trial % 3];
    grit_shape a = ct_random_shape(&s, GRIT_GEOM_CYLINDER, &verts[0][0]), b = ct_random_shape(&s, tb, &verts[0][0]);
    ct_pose A = ct_random_pose(&s, 0.15), B = ct_random_pose(&s, 0.15);
    const int swap = trial % 6 >= 3;
    const grit_placed_shape pa = {&a, A.p, A.R, NULL}, pb = {&b, B.p, B.R, NULL};
    double phi[2] = {0, 0}, n[2][3] = {{0}}, wa[2][3] = {{0}}, wb[2][3] = {{0}};
    int hit[2];
    with_and_without(&pa, &pb, swap, 0.1, POLISH_JUMP, trial, phi, n, wa, wb, hit, iters);
    cr_assert_eq(hit[0], hit[1], "trial %d: candidate %d vs %d", trial, hit[0], hit[1]);
    if (!hit[0]) continue;
    hits++;
    const int same = !memcmp(&phi[0], &phi[1], sizeof phi[0]) && !memcmp(n[0], n[1], sizeof n[0]) &&
                     !memcmp(wa[0], wa[1], sizeof wa[0]) && !memcmp(wb[0], wb[1], sizeof wb[0]);
    if (phi[1] + grit_shape_core_radius(&a) + grit_shape_core_radius(&b) > 1e-9) { /* separated: no polish */
      cr_assert(same, "trial %d: a separated pair with other bits %.17g %.17g", trial, phi[0], phi[1]);
      continue;
    }
    over++;
    polished += !same;
    ov_phi = fmax(ov_phi, fabs(phi[0] - phi[1]));
    ov_n = fmax(ov_n, ct_dist3(n[0], n[1]));
    const grit_shape *sa = swap ? &b : &a, *sb = swap ? &a : &b;
    const ct_pose *PA = swap ? &B : &A, *PB = swap ? &A : &B;
    const double hmin = fmin(pattern_min(sa, PA, sb, PB, n[0]), pattern_min(sa, PA, sb, PB, n[1]));
    for (int r = 0; r < 2; ++r) ov_err[r] = fmax(ov_err[r], core_h(sa, PA, sb, PB, n[r]) - hmin);
  }
  printf("polish jump vs old path: %d candidates (%d overlapping, %d moved): dphi %.1e, dn %.1e, h_D(n) above a local "
         "minimum by %.1e (old %.1e)\n",
         hits, over, polished, ov_phi, ov_n, ov_err[0], ov_err[1]);
  cr_assert(over > 100 && polished > 20, "%d overlapping, %d through the polish", over, polished);
  cr_assert(ov_phi <= 1e-7 && ov_n <= 1e-3, "overlaps: dphi %g dn %g", ov_phi, ov_n);
  cr_assert(ov_err[0] <= fmax(1e-12, ov_err[1]), "overlaps: the normal's h_D above a minimum by %g (old %g)", ov_err[0],
            ov_err[1]);
}
