/* SPDX-License-Identifier: Apache-2.0 */
/* test_contact_geometry.c — re-evaluating contacts from body-fixed features: the contact frame, and the
 * derivative of phi with respect to the shapes' poses (dual numbers) against central finite differences
 * of the narrow phase itself. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "collision_test_util.h"
#include "contact_geometry.h"
#include "grit/math_dual.h"

/* ------------------------------------------------------------------------------------ the frame */

static double frame_error(const double C[9], const double n[3]) {
  double CtC[9], e = 0.0;
  grit_m3_tmul(CtC, C, C);
  for (int i = 0; i < 9; ++i) e = fmax(e, fabs(CtC[i] - (i % 4 == 0 ? 1.0 : 0.0)));
  double t1[3] = {C[0], C[3], C[6]}, t2[3] = {C[1], C[4], C[7]}, x[3];
  grit_v3_cross(x, t1, t2); /* right-handed: t1 x t2 = n, the third column */
  for (int k = 0; k < 3; ++k) e = fmax(e, fmax(fabs(x[k] - n[k]), fabs(C[3 * k + 2] - n[k])));
  return e;
}

/* Orthonormal and right-handed with z = n, to round-off (a few ulps: 1e-15), at random normals and at
 * the poles and equator where the completion changes branch; and its dual derivative is that of the
 * double formula (central differences, step 1e-6: error ~1e-12 relative) and keeps the frame orthonormal
 * to first order (C^T dC antisymmetric). */
Test(contact_geometry, frame) {
  unsigned long long s = 3;
  double special[6][3] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {0, 1, 0}, {0.6, 0, -0.8}, {0, -0.6, 0.8}};
  for (int it = 0; it < 1006; ++it) {
    double n[3], C[9];
    if (it < 6) memcpy(n, special[it], sizeof n);
    else {
      for (int k = 0; k < 3; ++k) n[k] = ct_uniform(&s, -1, 1);
      grit_v3_normalize(n);
    }
    grit_contact_frame(n, C);
    cr_assert(frame_error(C, n) <= 1e-15, "normal (%g, %g, %g): frame error %g", n[0], n[1], n[2], frame_error(C, n));
    if (fabs(n[2]) < 1e-3) continue; /* a branch switch: the derivative is one-sided there */
    /* a direction in the tangent plane, seeded as a dual */
    double u[3], Cp[9], Cm[9];
    ct_random_rotation(&s, C); /* reuse C as scratch for a random vector */
    grit_v3_cross(u, n, C);
    grit_dual nd[3], Cd[9];
    for (int k = 0; k < 3; ++k) {
      nd[k] = grit_dual_const(n[k]);
      nd[k].d[0] = u[k];
    }
    grit_contact_frame_dual(nd, Cd);
    double np[3], nm[3], h = 1e-6, dC[9];
    for (int k = 0; k < 3; ++k) np[k] = n[k] + h * u[k], nm[k] = n[k] - h * u[k];
    grit_contact_frame(np, Cp);
    grit_contact_frame(nm, Cm);
    for (int i = 0; i < 9; ++i) {
      double fd = (Cp[i] - Cm[i]) / (2 * h);
      cr_assert(fabs(Cd[i].d[0] - fd) <= 1e-8 * (1 + grit_v3_norm(u)), "frame derivative %d: %g vs %g", i, Cd[i].d[0], fd);
      dC[i] = Cd[i].d[0];
      C[i] = Cd[i].v;
    }
    double A[9];
    grit_m3_tmul(A, C, dC);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) cr_assert(fabs(A[3 * i + j] + A[3 * j + i]) <= 1e-12, "C^T dC not antisymmetric");
  }
}

/* ------------------------------------------------------------------------- dphi/dq: dual vs FD */

/* The pose perturbed by dx: position + dx[0..2] (world, m), rotation R exp([dx[3..5]]) (body frame). */
static ct_pose perturbed(const ct_pose *P, const double dx[6]) {
  ct_pose Q = *P;
  double q[4], M[9];
  grit_quat_exp(q, dx + 3);
  grit_quat_to_mat(M, q);
  grit_m3_mul(Q.R, P->R, M);
  for (int k = 0; k < 3; ++k) Q.p[k] += dx[k];
  return Q;
}

/* The pose as duals seeded along the 6 pose directions (at dx = 0). */
static void seeded(const ct_pose *P, grit_dual p[3], grit_dual R[9]) {
  grit_dual th[3], q[4], M[9], R0[9];
  for (int k = 0; k < 3; ++k) {
    p[k] = grit_dual_var(P->p[k], k);
    th[k] = grit_dual_var(0.0, 3 + k);
  }
  grit_quat_exp_dual(q, th);
  grit_quat_to_mat_dual(M, q);
  for (int i = 0; i < 9; ++i) R0[i] = grit_dual_const(P->R[i]);
  grit_m3_mul_dual(R, R0, M);
}

static void constant(const ct_pose *P, grit_dual p[3], grit_dual R[9]) {
  for (int k = 0; k < 3; ++k) p[k] = grit_dual_const(P->p[k]);
  for (int i = 0; i < 9; ++i) R[i] = grit_dual_const(P->R[i]);
}

/* phi of candidate i after perturbing a (which = 0) or b (which = 1) by dx; NAN if the candidates change
 * in number or feature (a feature switch: b's witness moves in its own frame by more than 1e-3 m where
 * it is a vertex, i.e. a different corner). */
static double phi_at(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B, int which,
                     const double dx[6], int i, int n0, const grit_contact_point *c0) {
  ct_pose A2 = which == 0 ? perturbed(A, dx) : *A, B2 = which == 1 ? perturbed(B, dx) : *B;
  grit_contact_point c[4];
  int n;
  cr_assert_eq(grit_collide(a, A2.p, A2.R, b, B2.p, B2.R, 0.5, c, 4, &n), GRIT_OK);
  if (n != n0) return NAN;
  if (n0 > 1 && ct_dist3(c[i].pb_local, c0[i].pb_local) > 1e-3) return NAN;
  return c[i].phi;
}

/* Is candidate c of plane a and cylinder b the deepest point of its rim? Only those are minimizers; the
 * two extra rim points (120 degrees either side) are placed relative to the deepest one, so as the
 * cylinder turns the narrow phase slides them along the rim. On a tilted cylinder all four are RIM
 * features that slide the same way; a nearly upright cylinder's are material points, whose derivative is
 * exact for the deepest point only (the envelope theorem), so its extra points are not compared. */
static int rim_deepest(const ct_pose *A, const grit_shape *b, const ct_pose *B, const grit_contact_point *c) {
  double z[3] = {A->R[2], A->R[5], A->R[8]}, u[3] = {B->R[2], B->R[5], B->R[8]}, e[3], d[3];
  grit_v3_addscl(e, B->p, u, c->pb_local[2]); /* the centre of the candidate's cap */
  grit_v3_sub(d, e, A->p);
  double zu = grit_v3_dot(z, u), phimin = grit_v3_dot(z, d) - b->size[0] * sqrt(fmax(0.0, 1.0 - zu * zu));
  return fabs(c->phi - phimin) <= 1e-12;
}

typedef struct deriv_stats {
  double worst; /* worst relative error ||dual - fd||_inf / ||fd||_inf */
  int tested, skipped;
} deriv_stats;

/* For one configuration: every candidate, both shapes, all 6 pose directions. FD step h = 1e-5 (m, rad):
 * truncation h^2 phi''' / 6 ~ 1e-10 (phi''' <= ~1e2 m^-2 for features >= 0.1 m apart in curvature), and
 * round-off eps |x| / h ~ 1e-11. A second difference with step 2h must agree with the first to 1e-8:
 * otherwise a feature switch lies within 2h and the configuration is skipped (the derivative there is
 * one-sided, as the closest features change). */
static void check_config(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B,
                         deriv_stats *st, const char *name) {
  grit_contact_point c0[4];
  int n0;
  cr_assert_eq(grit_collide(a, A->p, A->R, b, B->p, B->R, 0.5, c0, 4, &n0), GRIT_OK);
  const double h = 1e-5;
  for (int i = 0; i < n0; ++i)
    for (int which = 0; which < 2; ++which) {
      if (b->type == GRIT_GEOM_CYLINDER && c0[i].fb != GRIT_FEATURE_RIM && !rim_deepest(A, b, B, &c0[i])) continue;
      grit_dual pa[3], Ra[9], pb[3], Rb[9];
      if (which == 0) seeded(A, pa, Ra), constant(B, pb, Rb);
      else constant(A, pa, Ra), seeded(B, pb, Rb);
      grit_contact_geom_dual g;
      grit_contact_reevaluate_dual(&c0[i], pa, Ra, pb, Rb, &g);
      cr_assert(fabs(g.phi.v - c0[i].phi) <= 1e-14, "%s: re-evaluation %.17g vs %.17g", name, g.phi.v, c0[i].phi);
      double fd[6], fd2[6], err = 0.0, norm = 0.0, sw = 0.0;
      int bad = 0;
      for (int k = 0; k < 6; ++k) {
        double dx[6] = {0};
        dx[k] = h;
        double fp = phi_at(a, A, b, B, which, dx, i, n0, c0);
        dx[k] = -h;
        double fm = phi_at(a, A, b, B, which, dx, i, n0, c0);
        dx[k] = 2 * h;
        double fp2 = phi_at(a, A, b, B, which, dx, i, n0, c0);
        dx[k] = -2 * h;
        double fm2 = phi_at(a, A, b, B, which, dx, i, n0, c0);
        if (isnan(fp) || isnan(fm) || isnan(fp2) || isnan(fm2)) bad = 1;
        fd[k] = (fp - fm) / (2 * h);
        fd2[k] = (fp2 - fm2) / (4 * h);
        norm = fmax(norm, fabs(fd[k]));
        err = fmax(err, fabs(g.phi.d[k] - fd[k]));
        sw = fmax(sw, fabs(fd[k] - fd2[k]));
      }
      if (bad || sw > 1e-8 * norm) {
        st->skipped++;
        continue;
      }
      st->tested++;
      st->worst = fmax(st->worst, err / norm);
      cr_expect(err <= 1e-6 * norm, "%s: candidate %d, shape %c: dphi/dq error %g (|dphi/dq| %g)", name, i,
                which ? 'b' : 'a', err, norm);
    }
}

/* Random configurations of each pair (phi in about [-0.1, 0.4] m), sizes 0.1..0.3 m. */
static void derivative_pair(grit_geom_type ta, grit_geom_type tb, const char *name, unsigned long long seed) {
  unsigned long long s = seed;
  deriv_stats st = {0, 0, 0};
  for (int it = 0; it < 60; ++it) {
    grit_shape a = grit_shape_make(ta, ct_uniform(&s, 0.1, 0.3), ct_uniform(&s, 0.1, 0.3), ct_uniform(&s, 0.1, 0.3));
    grit_shape b = grit_shape_make(tb, ct_uniform(&s, 0.1, 0.3), ct_uniform(&s, 0.1, 0.3), ct_uniform(&s, 0.1, 0.3));
    ct_pose A = ct_random_pose(&s, 1.0), B = ct_random_pose(&s, 0.0);
    double dir[3];
    for (int k = 0; k < 3; ++k) dir[k] = ct_uniform(&s, -1, 1);
    grit_v3_normalize(dir);
    if (ta == GRIT_GEOM_PLANE)
      for (int k = 0; k < 3; ++k) dir[k] = A.R[3 * k + 2] * ct_uniform(&s, 0.0, 0.4) + 0.3 * dir[k];
    else
      grit_v3_scale(dir, dir, ct_uniform(&s, 0.5, 1.1) * (grit_shape_bounding_radius(&a) + grit_shape_bounding_radius(&b)));
    grit_v3_add(B.p, A.p, dir);
    check_config(&a, &A, &b, &B, &st, name);
  }
  printf("dphi/dq dual vs FD %-16s %3d checks (%2d skipped near switches), worst relative error %.1e\n", name,
         st.tested, st.skipped, st.worst);
  cr_expect(st.tested >= 40, "%s: only %d configurations away from switches", name, st.tested);
}

Test(contact_geometry, dphi_dq_against_plane) {
  derivative_pair(GRIT_GEOM_PLANE, GRIT_GEOM_SPHERE, "plane-sphere", 1);
  derivative_pair(GRIT_GEOM_PLANE, GRIT_GEOM_CAPSULE, "plane-capsule", 2);
  derivative_pair(GRIT_GEOM_PLANE, GRIT_GEOM_BOX, "plane-box", 3);
  derivative_pair(GRIT_GEOM_PLANE, GRIT_GEOM_CYLINDER, "plane-cylinder", 4);
  derivative_pair(GRIT_GEOM_PLANE, GRIT_GEOM_ELLIPSOID, "plane-ellipsoid", 5);
}

Test(contact_geometry, dphi_dq_between_shapes) {
  derivative_pair(GRIT_GEOM_SPHERE, GRIT_GEOM_SPHERE, "sphere-sphere", 11);
  derivative_pair(GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, "sphere-capsule", 12);
  derivative_pair(GRIT_GEOM_CAPSULE, GRIT_GEOM_CAPSULE, "capsule-capsule", 13);
  derivative_pair(GRIT_GEOM_SPHERE, GRIT_GEOM_BOX, "sphere-box", 14);
  derivative_pair(GRIT_GEOM_CAPSULE, GRIT_GEOM_BOX, "capsule-box (GJK)", 15);
  derivative_pair(GRIT_GEOM_BOX, GRIT_GEOM_BOX, "box-box (GJK/EPA)", 16);
}

/* One configuration: every candidate's witness point pb on b, its dual derivative with respect to b's
 * pose against central differences of grit_collide's; adds to *worst, *tested, and *sliding (the
 * candidates held as RIM or SUPPORT features). */
static void witness_case(const grit_shape *a, const ct_pose *A, const grit_shape *b, const ct_pose *B, const char *name,
                         double *worst, int *tested, int *sliding) {
  grit_contact_point c0[4];
  int n0;
  cr_assert_eq(grit_collide(a, A->p, A->R, b, B->p, B->R, 1.0, c0, 4, &n0), GRIT_OK);
  for (int i = 0; i < n0; ++i) {
    *sliding += c0[i].fb == GRIT_FEATURE_RIM || c0[i].fb == GRIT_FEATURE_SUPPORT;
    grit_dual pa[3], Ra[9], pb[3], Rb[9];
    constant(A, pa, Ra);
    seeded(B, pb, Rb);
    grit_contact_geom_dual g;
    grit_contact_reevaluate_dual(&c0[i], pa, Ra, pb, Rb, &g);
    double err = 0.0, norm = 0.0;
    for (int k = 0; k < 6; ++k) {
      double dx[6] = {0}, xp[3], xm[3];
      grit_contact_point c[4];
      int n;
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        dx[k] = sgn * 1e-5;
        ct_pose B2 = perturbed(B, dx);
        cr_assert_eq(grit_collide(a, A->p, A->R, b, B2.p, B2.R, 1.0, c, 4, &n), GRIT_OK);
        cr_assert_eq(n, n0);
        grit_v3_copy(sgn > 0 ? xp : xm, c[i].pb);
      }
      for (int r = 0; r < 3; ++r) {
        const double fd = (xp[r] - xm[r]) / 2e-5;
        err = fmax(err, fabs(g.pb[r].d[k] - fd));
        norm = fmax(norm, fabs(fd));
      }
    }
    *worst = fmax(*worst, err / norm);
    (*tested)++;
    cr_expect(err <= 1e-6 * norm, "%s, candidate %d: d pb/dq error %g (|d pb/dq| %g)", name, i, err, norm);
  }
}

/* The witness point on a curved shape resting on a plane, its point deepest into it, moves as the
 * narrow phase moves it: its dual derivative against central differences of grit_collide's pb (step
 * 1e-5: the truncation, h^2 / 6 times the third derivative, is ~1e-10 m for curvature radii >= 0.05 m).
 * For a sphere and a capsule that point is the centre (an end centre) offset along the normal; for a
 * cylinder's rim (all four points against a plane) and an ellipsoid it slides over the shape as it
 * turns (RIM and SUPPORT features). Held as a material point instead, it turns with the shape while
 * the contact stays at the bottom: that gave 6e-3 relative error on the step Jacobian of a cylinder
 * standing on its rim. The same on a box's top face, through the general path (GJK/EPA with inferred
 * features), where a tilted cylinder's rim and an ellipsoid are held as sliding features too. */
Test(contact_geometry, witness_points_slide_with_the_pose_on_curved_shapes) {
  const grit_geom_type types[4] = {GRIT_GEOM_SPHERE, GRIT_GEOM_CAPSULE, GRIT_GEOM_CYLINDER, GRIT_GEOM_ELLIPSOID};
  const char *const names[4] = {"sphere", "capsule", "cylinder", "ellipsoid"};
  grit_shape floors[2] = {grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), grit_shape_make(GRIT_GEOM_BOX, 2.0, 2.0, 0.1)};
  unsigned long long s = 21;
  for (int fl = 0; fl < 2; ++fl)
    for (int t = 0; t < 4; ++t) {
      double worst = 0.0;
      int tested = 0, sliding = 0;
      char name[64];
      snprintf(name, sizeof name, "%s-%s", fl ? "box" : "plane", names[t]);
      for (int it = 0; it < 40; ++it) {
        grit_shape b = grit_shape_make(types[t], ct_uniform(&s, 0.05, 0.3), ct_uniform(&s, 0.05, 0.3), ct_uniform(&s, 0.05, 0.3));
        ct_pose A = ct_random_pose(&s, 1.0), B = ct_random_pose(&s, 0.0);
        /* b's centre 0..0.3 m above the floor's surface (a box's top face is at its local z = 0.1) */
        const double lift = (fl ? 0.1 : 0.0) + ct_uniform(&s, 0.0, 0.3);
        for (int k = 0; k < 3; ++k) B.p[k] = A.p[k] + A.R[3 * k + 2] * lift;
        witness_case(&floors[fl], &A, &b, &B, name, &worst, &tested, &sliding);
      }
      printf("d pb/dq dual vs FD %-15s %3d witness points (%3d sliding), worst relative error %.1e\n", name, tested,
             sliding, worst);
      cr_expect(tested >= 40, "%s: %d witness points", name, tested);
      if (types[t] == GRIT_GEOM_CYLINDER || types[t] == GRIT_GEOM_ELLIPSOID)
        cr_expect(sliding >= tested * 3 / 4, "%s: %d of %d witness points sliding", name, sliding, tested);
    }
}

/* At the poses it was found at, the re-evaluation reproduces the candidate (double instantiation), and
 * its dual derivative is that of the double re-evaluation (central differences, step 1e-6: ~1e-10),
 * for every candidate, the cylinder's extra rim points included. */
Test(contact_geometry, reevaluation_reproduces_candidate) {
  unsigned long long s = 8;
  grit_shape pl = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0), cy = grit_shape_make(GRIT_GEOM_CYLINDER, 0.2, 0.1, 0);
  grit_shape a = grit_shape_make(GRIT_GEOM_BOX, 0.3, 0.2, 0.1), b = grit_shape_make(GRIT_GEOM_CAPSULE, 0.1, 0.2, 0);
  for (int it = 0; it < 200; ++it) {
    const int plane = it % 2;
    ct_pose A = ct_random_pose(&s, 0.3), B = ct_random_pose(&s, 0.3);
    const grit_shape *ga = plane ? &pl : &a, *gb = plane ? &cy : &b;
    grit_contact_point c[4];
    int n;
    cr_assert_eq(grit_collide(ga, A.p, A.R, gb, B.p, B.R, 1.0, c, 4, &n), GRIT_OK);
    for (int i = 0; i < n; ++i) {
      grit_dual pa[3], Ra[9], pb[3], Rb[9];
      grit_contact_geom_dual gd;
      constant(&A, pa, Ra);
      seeded(&B, pb, Rb);
      grit_contact_reevaluate_dual(&c[i], pa, Ra, pb, Rb, &gd);
      for (int k = 0; k < 6; ++k) {
        double dx[6] = {0}, fp, fm;
        grit_contact_geom gp;
        dx[k] = 1e-6;
        ct_pose Bp = perturbed(&B, dx);
        grit_contact_reevaluate(&c[i], A.p, A.R, Bp.p, Bp.R, &gp);
        fp = gp.phi;
        dx[k] = -1e-6;
        Bp = perturbed(&B, dx);
        grit_contact_reevaluate(&c[i], A.p, A.R, Bp.p, Bp.R, &gp);
        fm = gp.phi;
        cr_assert(fabs(gd.phi.d[k] - (fp - fm) / 2e-6) <= 1e-8, "dual vs double re-evaluation");
      }
      grit_contact_geom g;
      grit_contact_reevaluate(&c[i], A.p, A.R, B.p, B.R, &g);
      cr_assert(fabs(g.phi - c[i].phi) <= 1e-14 && ct_dist3(g.n, c[i].n) <= 1e-15 && ct_dist3(g.pa, c[i].pa) <= 1e-14 &&
                    ct_dist3(g.pb, c[i].pb) <= 1e-14,
                "re-evaluation differs");
      cr_assert(frame_error(g.frame, g.n) <= 1e-15);
    }
  }
}
