/* SPDX-License-Identifier: Apache-2.0 */
/* test_collision_box.c — box-box: the separating-axis normal (grit_narrow_box_box) against the old path,
 * GJK/EPA's normal (grit_narrow_box_box_epa, the switch back), on random pairs of every kind: the same
 * candidates, features and clipping planes up to round-off. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "collision_box.h"
#include "collision_test_util.h"
#include "contact_geometry.h"

/* EPA is exact for boxes to ~1e-11 (docs/collision.md); the separating axes to round-off. */
#define AGREE 1e-9
/* Faces parallel to this angle (rad) may take either as the reference (the choice is round-off in both
 * paths); the points then move by the angle times the boxes' size, below PARALLEL_SHIFT (m). */
#define PARALLEL 2e-7
#define PARALLEL_SHIFT 1e-6

typedef struct tally {
  int pairs, empty, edge, face, points, swapped;
  double worst, worst_swapped;
} tally;

static double diff3(const double *x, const double *y) { return ct_dist3(x, y); }

static void expect_close3(tally *t, const double *x, const double *y, const char *what, int it) {
  const double d = diff3(x, y);
  if (d > t->worst) t->worst = d;
  cr_assert(d <= AGREE, "pair %d: %s differs by %g (%.17g %.17g %.17g against %.17g %.17g %.17g)", it, what, d,
            x[0], x[1], x[2], y[0], y[1], y[2]);
}

/* Both paths on one pair (a at A, b at B, in this order); the candidates must agree one by one. */
static void compare_pair(tally *t, const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B,
                         double margin, int it) {
  const grit_placed_shape pa = {a, A->p, A->R, NULL}, pb = {b, B->p, B->R, NULL};
  grit_contact_point s[4], e[4];
  collector cs = {s, 4, 0, 0, 0, A->p, A->R, B->p, B->R, NULL}, ce = {e, 4, 0, 0, 0, A->p, A->R, B->p, B->R, NULL};
  grit_narrow_box_box(&pa, &pb, margin, &cs);
  grit_narrow_box_box_epa(&pa, &pb, margin, &ce);
  cr_assert(!cs.overflow && !ce.overflow);
  cr_assert_eq(cs.n, ce.n, "pair %d: %d candidates against the old path's %d", it, cs.n, ce.n);
  t->pairs++;
  t->points += cs.n;
  if (cs.n == 0) t->empty++;
  else if (cs.n == 1 && s[0].fa == GRIT_FEATURE_POINT && s[0].fb == GRIT_FEATURE_POINT) t->edge++;
  else t->face++;
  double dn = 0.0;
  for (int i = 0; i < cs.n; ++i) dn = fmax(dn, diff3(s[i].n, e[i].n));
  if (dn > AGREE && dn < PARALLEL) {
    /* the two boxes' faces parallel to ~1e-7 rad: 1 - cos of their angles to the normal is below round-off,
     * and which face is the reference is round-off in either path; the same points, to the angle */
    t->swapped++;
    for (int i = 0; i < cs.n; ++i) { /* each point against the old path's nearest (the order may differ) */
      double d = INFINITY;
      for (int k = 0; k < ce.n; ++k)
        d = fmin(d, fmax(fabs(s[i].phi - e[k].phi), fmax(diff3(s[i].pa, e[k].pa), diff3(s[i].pb, e[k].pb))));
      if (d > t->worst_swapped) t->worst_swapped = d;
      cr_assert(d <= PARALLEL_SHIFT, "pair %d: the swapped reference's points differ by %g", it, d);
    }
    return;
  }
  for (int i = 0; i < cs.n; ++i) {
    const grit_contact_point *x = &s[i], *y = &e[i];
    const double dphi = fabs(x->phi - y->phi);
    if (dphi > t->worst) t->worst = dphi;
    cr_assert(dphi <= AGREE, "pair %d: phi %.17g against %.17g (n %.17g %.17g %.17g against %.17g %.17g %.17g)", it,
              x->phi, y->phi, x->n[0], x->n[1], x->n[2], y->n[0], y->n[1], y->n[2]);
    cr_assert(x->phi < margin);
    expect_close3(t, x->n, y->n, "n", it);
    expect_close3(t, x->pa, y->pa, "pa", it);
    expect_close3(t, x->pb, y->pb, "pb", it);
    expect_close3(t, x->n_local, y->n_local, "n_local", it);
    cr_assert_eq(x->fa, y->fa, "pair %d: feature a %d against %d", it, x->fa, y->fa);
    cr_assert_eq(x->fb, y->fb, "pair %d: feature b %d against %d", it, x->fb, y->fb);
    expect_close3(t, x->fa_p, y->fa_p, "fa_p", it);
    expect_close3(t, x->fb_p, y->fb_p, "fb_p", it);
    expect_close3(t, x->fa_u, y->fa_u, "fa_u", it);
    expect_close3(t, x->fb_u, y->fb_u, "fb_u", it);
    cr_assert_eq(x->clip, y->clip, "pair %d: clip", it);
    if (x->clip) {
      expect_close3(t, x->clip_p, y->clip_p, "clip_p", it);
      expect_close3(t, x->clip_n, y->clip_n, "clip_n", it);
    }
    double d[3]; /* pb - pa = phi n */
    grit_v3_sub(d, x->pb, x->pa);
    grit_v3_addscl(d, d, x->n, -x->phi);
    cr_assert(grit_v3_norm(d) <= 1e-12, "pair %d: pb - pa differs from phi n by %g", it, grit_v3_norm(d));
  }
}

static grit_shape random_box(unsigned long long *s, double lo, double hi) {
  return grit_shape_make(GRIT_GEOM_BOX, ct_uniform(s, lo, hi), ct_uniform(s, lo, hi), ct_uniform(s, lo, hi));
}

static void report(const char *name, const tally *t) {
  printf("box-box %-22s pairs %5d: empty %4d edge-edge %4d face %4d (points %5d), worst difference %.1e; "
         "reference swapped %d, points moved %.1e\n", name, t->pairs, t->empty, t->edge, t->face, t->points, t->worst,
         t->swapped, t->worst_swapped);
}

/* Random poses and sizes at centre distances from 0 (deep) to beyond the margin. */
Test(collision_box, random_pairs_agree_with_epa) {
  unsigned long long s = 2027;
  tally t = {0};
  for (int it = 0; it < 4000; ++it) {
    grit_shape a = random_box(&s, 0.05, 0.6), b = random_box(&s, 0.05, 0.6);
    ct_pose A = ct_random_pose(&s, 1.0), B = ct_random_pose(&s, 0.0);
    double dir[3];
    for (int k = 0; k < 3; ++k) dir[k] = ct_uniform(&s, -1, 1);
    grit_v3_normalize(dir);
    grit_v3_scale(dir, dir, ct_uniform(&s, 0.0, grit_shape_bounding_radius(&a) + grit_shape_bounding_radius(&b)));
    grit_v3_add(B.p, A.p, dir);
    compare_pair(&t, &a, &A, &b, &B, 0.1, it);
  }
  report("random", &t);
  cr_expect(t.edge >= 200 && t.face >= 1000 && t.empty >= 100, "too few of a kind");
}

/* A box resting on another's face: small tilts, a turn about the normal, overlapping, touching and
 * apart within the margin; and exactly aligned (degenerate parallel edges). */
Test(collision_box, stacked_and_parallel_agree_with_epa) {
  unsigned long long s = 77;
  tally t = {0};
  const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
  for (int it = 0; it < 3000; ++it) {
    grit_shape a = random_box(&s, 0.1, 0.8), b = random_box(&s, 0.05, 0.5);
    const int kind = it % 4; /* 0 tilted, 1 turned about z only, 2 exactly aligned, 3 tilted by ~1e-9..1e-5 */
    ct_pose A = ct_identity_at(0, 0, 0), B = ct_identity_at(ct_uniform(&s, -0.5, 0.5), ct_uniform(&s, -0.5, 0.5), 0);
    if (kind != 2) B = ct_rotated(B, az, ct_uniform(&s, -3.2, 3.2));
    const double tilt = kind == 0 ? 0.2 : kind == 3 ? pow(10.0, ct_uniform(&s, -9, -5)) : 0.0;
    B = ct_rotated(B, ax, ct_uniform(&s, -tilt, tilt));
    B = ct_rotated(B, ay, ct_uniform(&s, -tilt, tilt));
    double low = 0.0; /* B's lowest point above its centre */
    for (int k = 0; k < 3; ++k) low += b.size[k] * fabs(B.R[6 + k]);
    const double gap = kind == 2 && it % 8 == 2 ? 0.0 : ct_uniform(&s, -0.05, 0.03);
    B.p[2] = a.size[2] + low + gap;
    if (it % 16 == 5) { /* the whole pair turned: nothing axis-aligned in the world */
      double q[4], Q[9], dir[3] = {ct_uniform(&s, -1, 1), ct_uniform(&s, -1, 1), ct_uniform(&s, -1, 1)};
      grit_v3_normalize(dir);
      grit_quat_from_axis_angle(q, dir, ct_uniform(&s, 0, 3));
      grit_quat_to_mat(Q, q);
      grit_m3_mul(A.R, Q, A.R);
      grit_m3_mul(B.R, Q, B.R);
      double p[3];
      grit_m3_mulv(p, Q, B.p);
      grit_v3_copy(B.p, p);
    }
    compare_pair(&t, &a, &A, &b, &B, 0.05, it);
  }
  report("stacked and parallel", &t);
  cr_expect(t.face >= 2000, "too few face contacts");
}

/* Edges crossing edges: b turned 45 degrees about x and then about z, its lower edge across a's upper
 * edge or face, overlapping or apart. */
Test(collision_box, edge_crossings_agree_with_epa) {
  unsigned long long s = 5;
  tally t = {0};
  const double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
  for (int it = 0; it < 2000; ++it) {
    grit_shape a = random_box(&s, 0.1, 0.5), b = random_box(&s, 0.1, 0.5);
    ct_pose A = ct_rotated(ct_identity_at(0, 0, 0), ax, 0.7853981633974483), B = ct_identity_at(0, 0, 0);
    B = ct_rotated(B, ay, 0.7853981633974483 + ct_uniform(&s, -0.3, 0.3));
    B = ct_rotated(B, az, ct_uniform(&s, -1.5, 1.5));
    double top = 0.0, low = 0.0;
    for (int k = 0; k < 3; ++k) top += a.size[k] * fabs(A.R[6 + k]), low += b.size[k] * fabs(B.R[6 + k]);
    B.p[0] = ct_uniform(&s, -0.1, 0.1), B.p[1] = ct_uniform(&s, -0.1, 0.1);
    B.p[2] = top + low + ct_uniform(&s, -0.08, 0.03);
    compare_pair(&t, &a, &A, &b, &B, 0.05, it);
  }
  report("edge crossings", &t);
  cr_expect(t.edge >= 500, "too few edge-edge contacts");
}

/* The new path's candidates re-evaluated from their features (what the derivatives differentiate)
 * reproduce phi and n, and phi's first derivative in b's pose: central differences of the re-evaluation
 * against central differences of the collision itself (b moved and turned by +-h about each axis). */
static int run_new(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B, double margin,
                   grit_contact_point *out) {
  const grit_placed_shape pa = {a, A->p, A->R, NULL}, pb = {b, B->p, B->R, NULL};
  collector c = {out, 4, 0, 0, 0, A->p, A->R, B->p, B->R, NULL};
  grit_narrow_box_box(&pa, &pb, margin, &c);
  return c.n;
}

static ct_pose moved(const ct_pose *B, int k, double h) {
  const double axis[3] = {k % 3 == 0, k % 3 == 1, k % 3 == 2};
  ct_pose P = *B;
  if (k < 3) P.p[k] += h;
  else P = ct_rotated(P, axis, h);
  return P;
}

Test(collision_box, features_give_phi_and_its_derivative) {
  unsigned long long s = 31;
  const double h = 1e-6, margin = 0.1;
  int checked = 0, single = 0;
  double worst = 0.0, worst0 = 0.0;
  for (int it = 0; it < 1500; ++it) {
    grit_shape a = random_box(&s, 0.05, 0.6), b = random_box(&s, 0.05, 0.6);
    ct_pose A = ct_random_pose(&s, 1.0), B = ct_random_pose(&s, 0.0);
    double dir[3];
    for (int k = 0; k < 3; ++k) dir[k] = ct_uniform(&s, -1, 1);
    grit_v3_normalize(dir);
    grit_v3_scale(dir, dir, ct_uniform(&s, 0.0, grit_shape_bounding_radius(&a) + grit_shape_bounding_radius(&b)));
    grit_v3_add(B.p, A.p, dir);
    grit_contact_point c[4], cp[4], cm[4];
    const int n = run_new(&a, &A, &b, &B, margin, c);
    for (int i = 0; i < n; ++i) {
      grit_contact_geom g;
      grit_contact_reevaluate(&c[i], A.p, A.R, B.p, B.R, &g);
      worst0 = fmax(worst0, fmax(fabs(g.phi - c[i].phi), diff3(g.n, c[i].n)));
      cr_assert(fabs(g.phi - c[i].phi) <= 1e-9 && diff3(g.n, c[i].n) <= 1e-9, "pair %d: re-evaluation", it);
    }
    for (int k = 0; k < 6 && n > 0; ++k) {
      const ct_pose Bp = moved(&B, k, h), Bm = moved(&B, k, -h);
      if (run_new(&a, &A, &b, &Bp, margin, cp) != n || run_new(&a, &A, &b, &Bm, margin, cm) != n) continue;
      for (int i = 0; i < n; ++i) {
        if (c[i].fa != cp[i].fa || c[i].fa != cm[i].fa || c[i].fb != cp[i].fb || c[i].fb != cm[i].fb) continue;
        grit_contact_geom gp, gm;
        grit_contact_reevaluate(&c[i], A.p, A.R, Bp.p, Bp.R, &gp);
        grit_contact_reevaluate(&c[i], A.p, A.R, Bm.p, Bm.R, &gm);
        const double dre = (gp.phi - gm.phi) / (2 * h), dcol = (cp[i].phi - cm[i].phi) / (2 * h);
        worst = fmax(worst, fabs(dre - dcol));
        cr_assert(fabs(dre - dcol) <= 1e-6, "pair %d, candidate %d, direction %d: dphi %.12g against %.12g", it, i, k,
                  dre, dcol);
        checked++;
        single += n == 1 && c[i].fa == GRIT_FEATURE_POINT;
      }
    }
  }
  printf("box-box features: %d derivatives checked (%d edge-edge), worst %.1e; re-evaluation %.1e\n", checked, single,
         worst, worst0);
  cr_expect(checked >= 3000 && single >= 500, "too few checked (%d, %d)", checked, single);
}
