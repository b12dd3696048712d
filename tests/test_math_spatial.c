/* SPDX-License-Identifier: Apache-2.0 */
/* test_math_spatial.c — the math core (grit/math.h) for double, continued from test_math.c: rigid
 * transforms, spatial vectors (twists, wrenches, their cross products) and spatial inertias.
 *
 * Tolerances count roundings: an expression of k operations on numbers of size S is exact to about
 * k eps S / 2. Each test states its k with a margin of about 2. */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/math.h"
#include "math_test_util.h"

static const double EPS = TEST_EPS;

/* ---------------------------------------------------------------------------------- transforms */

static void rand_transform(rng *r, double p[3], double R[9]) {
  double q[4];
  rand_unit(r, q, 4);
  grit_quat_to_mat(R, q);
  rand_vec(r, p, 3, 3.0);
}

Test(math, transforms_compose_apply_invert) {
  rng r = {20};
  for (int it = 0; it < 1000; ++it) {
    double p1[3], R1[9], p2[3], R2[9], p[3], R[9], x[3], y[3], z[3], w[3], pi[3], Ri[9], pe[3], Re[9], id[9];
    rand_transform(&r, p1, R1);
    rand_transform(&r, p2, R2);
    rand_vec(&r, x, 3, 3.0);
    /* (T1 o T2) x = T1 (T2 x) */
    grit_tf_compose(p, R, p1, R1, p2, R2);
    grit_tf_apply(y, p, R, x);
    grit_tf_apply(z, p2, R2, x);
    grit_tf_apply(z, p1, R1, z); /* in place */
    cr_assert(maxdiff(y, z, 3) <= 64 * EPS * 3, "compose then apply off by %g", maxdiff(y, z, 3));
    grit_tf_apply_inv(w, p, R, y);
    cr_assert(maxdiff(w, x, 3) <= 64 * EPS * 3, "apply_inv(apply(x)) off by %g", maxdiff(w, x, 3));
    /* T o T^-1 = identity, with T^-1 = (-R^T p, R^T) */
    grit_m3_transpose(Ri, R1);
    grit_m3_mulv(pi, Ri, p1);
    grit_v3_scale(pi, pi, -1.0);
    grit_tf_compose(pe, Re, p1, R1, pi, Ri);
    grit_m3_identity(id);
    cr_assert(maxabs(pe, 3) <= 32 * EPS * 3 && maxdiff(Re, id, 9) <= 16 * EPS, "T o T^-1 != identity");
  }
}

/* ----------------------------------------------------------------------------- spatial vectors */

/* crm(a) = [[w]x 0; [v]x [w]x], the matrix of a x_m; crf(a) = -crm(a)^T, the matrix of a x_f. */
static void crm(double M[36], const double a[6]) {
  double W[9], V[9];
  crossmat(W, a);
  crossmat(V, a + 3);
  for (int i = 0; i < 36; ++i) M[i] = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      M[6 * i + j] = W[3 * i + j];
      M[6 * (i + 3) + j] = V[3 * i + j];
      M[6 * (i + 3) + j + 3] = W[3 * i + j];
    }
}

Test(math, spatial_cross_products_match_their_matrices) {
  rng r = {21};
  for (int it = 0; it < 1000; ++it) {
    double a[6], b[6], f[6], M[36], Mt[36], got[6], want[6];
    rand_vec(&r, a, 6, 2.0);
    rand_vec(&r, b, 6, 2.0);
    rand_vec(&r, f, 6, 2.0);
    crm(M, a);
    grit_sv_cross_motion(got, a, b);
    matvec(want, M, b, 6);
    cr_assert(maxdiff(got, want, 6) <= 8 * EPS * 8, "a x_m b != crm(a) b");
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) Mt[6 * i + j] = -M[6 * j + i];
    grit_sv_cross_force(got, a, f);
    matvec(want, Mt, f, 6);
    cr_assert(maxdiff(got, want, 6) <= 8 * EPS * 8, "a x_f f != -crm(a)^T f");
    /* duality: (a x_m b) . f = -b . (a x_f f) (power is invariant) */
    double am[6], af[6];
    grit_sv_cross_motion(am, a, b);
    grit_sv_cross_force(af, a, f);
    cr_assert(fabs(grit_sv_dot(am, f) + grit_sv_dot(b, af)) <= 32 * EPS * 64, "duality broken");
    /* a x_m a = 0, and the Jacobi identity of se(3): a x (b x c) + b x (c x a) + c x (a x b) = 0 */
    grit_sv_cross_motion(got, a, a);
    cr_assert(maxabs(got, 6) <= 4 * EPS * 8, "a x_m a != 0");
    double bc[6], ca[6], ab[6], t1[6], t2[6], t3[6];
    grit_sv_cross_motion(bc, b, f);
    grit_sv_cross_motion(ca, f, a);
    grit_sv_cross_motion(ab, a, b);
    grit_sv_cross_motion(t1, a, bc);
    grit_sv_cross_motion(t2, b, ca);
    grit_sv_cross_motion(t3, f, ab);
    for (int i = 0; i < 6; ++i) cr_assert(fabs(t1[i] + t2[i] + t3[i]) <= 64 * EPS * 64, "Jacobi identity");
  }
}

/* A twist a moves frames: after time t the world is carried by (p(t), R(t)), R = exp([w] t),
 * p(t) = sum_k t^(k+1)/(k+1)! [w]^k v (the point at the origin, series to 10 terms). A twist b carried
 * along is (R wb; R vb + p x R wb), a wrench f is (R tf + p x R ff; R ff); their rates at t = 0 are
 * a x_m b and a x_f f. Checked with 4th-order central differences (h = 1e-3: error ~h^4 |a|^5 ~ 1e-11). */
static void carry(double out_m[6], double out_f[6], const double a[6], const double b[6], const double f[6], double t) {
  double th[3], q[4], R[9], p[3] = {0, 0, 0}, term[3], Rw[3], Rf[3], x[3];
  grit_v3_scale(th, a, t);
  grit_quat_exp(q, th);
  grit_quat_to_mat(R, q);
  grit_v3_scale(term, a + 3, t);
  for (int k = 1; k <= 10; ++k) {
    grit_v3_add(p, p, term);
    grit_v3_cross(term, a, term);
    grit_v3_scale(term, term, t / (k + 1));
  }
  grit_m3_mulv(Rw, R, b);
  grit_m3_mulv(out_m + 3, R, b + 3);
  grit_v3_cross(x, p, Rw);
  grit_v3_add(out_m + 3, out_m + 3, x);
  grit_v3_copy(out_m, Rw);
  grit_m3_mulv(Rf, R, f + 3);
  grit_m3_mulv(out_f, R, f);
  grit_v3_cross(x, p, Rf);
  grit_v3_add(out_f, out_f, x);
  grit_v3_copy(out_f + 3, Rf);
}

Test(math, spatial_cross_products_are_rates_of_transport) {
  rng r = {22};
  const double h = 0x1.0p-10;
  for (int it = 0; it < 200; ++it) {
    double a[6], b[6], f[6], m[4][6], fo[4][6], cm[6], cf[6];
    rand_vec(&r, a, 6, 1.0);
    rand_vec(&r, b, 6, 1.0);
    rand_vec(&r, f, 6, 1.0);
    const double ts[4] = {h, -h, 2 * h, -2 * h};
    for (int s = 0; s < 4; ++s) carry(m[s], fo[s], a, b, f, ts[s]);
    grit_sv_cross_motion(cm, a, b);
    grit_sv_cross_force(cf, a, f);
    for (int i = 0; i < 6; ++i) {
      const double dm = (8 * (m[0][i] - m[1][i]) - (m[2][i] - m[3][i])) / (12 * h);
      const double df = (8 * (fo[0][i] - fo[1][i]) - (fo[2][i] - fo[3][i])) / (12 * h);
      cr_assert(fabs(dm - cm[i]) <= 1e-9, "motion component %d: rate %.12g, a x_m b %.12g", i, dm, cm[i]);
      cr_assert(fabs(df - cf[i]) <= 1e-9, "force component %d: rate %.12g, a x_f f %.12g", i, df, cf[i]);
    }
  }
}

Test(math, point_velocity_of_a_twist) {
  rng r = {23};
  for (int it = 0; it < 1000; ++it) {
    double t[6], p[3], q[3], vp[3], vq[3], want[3], d[3], dv[3];
    rand_vec(&r, t, 6, 2.0);
    rand_vec(&r, p, 3, 2.0);
    rand_vec(&r, q, 3, 2.0);
    grit_sv_point_velocity(vp, t, p);
    grit_v3_cross(want, t, p);
    grit_v3_add(want, want, t + 3);
    cr_assert(maxdiff(vp, want, 3) == 0.0, "v_p != v_O + w x p");
    grit_sv_point_velocity(vq, t, (const double[3]){0, 0, 0});
    cr_assert(maxdiff(vq, t + 3, 3) == 0.0, "the origin moves at v_O");
    /* rigidity: the distance between two body points does not change, (v_p - v_q).(p - q) = 0 */
    grit_sv_point_velocity(vq, t, q);
    grit_v3_sub(d, p, q);
    grit_v3_sub(dv, vp, vq);
    cr_assert(fabs(grit_v3_dot(d, dv)) <= 32 * EPS * 16 * 4, "points move apart: %g", grit_v3_dot(d, dv));
  }
}

/* ---------------------------------------------------------------------------- spatial inertia */

/* A random body: mass in [0.1, 10], centre of mass in a 4 m box, Ic = A A^T + 0.1 m 1 (SPD). */
static void rand_body(rng *r, double *m, double c[3], double Ic[9]) {
  double A[9];
  *m = exp(unif(r, log(0.1), log(10.0)));
  rand_vec(r, c, 3, 2.0);
  rand_vec(r, A, 9, 1.0);
  grit_m3_mult(Ic, A, A);
  for (int i = 0; i < 3; ++i) Ic[4 * i] += 0.1 * *m;
}

/* The 6x6 matrix [[Ic + m [c]x [c]x^T, m [c]x], [m [c]x^T, m 1]], written out. */
static void inertia6(double S[36], double m, const double c[3], const double Ic[9]) {
  double C[9];
  crossmat(C, c);
  for (int i = 0; i < 36; ++i) S[i] = 0.0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double cct = 0.0;
      for (int k = 0; k < 3; ++k) cct += C[3 * i + k] * C[3 * j + k];
      S[6 * i + j] = Ic[3 * i + j] + m * cct;
      S[6 * i + j + 3] = m * C[3 * i + j];
      S[6 * (i + 3) + j] = m * C[3 * j + i];
    }
    S[6 * (i + 3) + i + 3] = m;
  }
}

/* The size of the terms summed in S t (for rounding bounds): (|Ic| + m |c|^2) |w|_1 + m |c| (|v|_1 + |w|_1)
 * + m |v|_max. */
static double inertia_terms(double m, const double c[3], const double Ic[9], const double t[6]) {
  const double nc = grit_v3_norm(c), w1 = fabs(t[0]) + fabs(t[1]) + fabs(t[2]);
  const double v1 = fabs(t[3]) + fabs(t[4]) + fabs(t[5]);
  return (maxabs(Ic, 9) + m * nc * nc) * w1 + m * nc * (v1 + w1) + m * maxabs(t + 3, 3);
}

Test(math, spatial_inertia_matches_the_6x6_matrix) {
  rng r = {24};
  for (int it = 0; it < 1000; ++it) {
    double m, c[3], Ic[9], S6[36], t[6], f[6], want[6];
    grit_sinertia s;
    rand_body(&r, &m, c, Ic);
    rand_vec(&r, t, 6, 3.0);
    grit_si_from_body(&s, m, c, Ic);
    grit_si_apply(f, &s, t);
    inertia6(S6, m, c, Ic);
    matvec(want, S6, t, 6);
    /* ~8 roundings in each of the two evaluations, relative to the terms' size */
    const double scale = inertia_terms(m, c, Ic, t);
    cr_assert(maxdiff(f, want, 6) <= 16 * EPS * scale, "S t != 6x6 t by %g", maxdiff(f, want, 6));
    cr_assert(s.m == m && maxdiff(s.h, (const double[3]){m * c[0], m * c[1], m * c[2]}, 3) == 0.0, "m, h = m c");
  }
}

Test(math, spatial_inertia_is_symmetric_and_gives_kinetic_energy) {
  rng r = {25};
  for (int it = 0; it < 1000; ++it) {
    double m, c[3], Ic[9], t[6], u[6], St[6], Su[6], vc[3], Iw[3];
    grit_sinertia s;
    rand_body(&r, &m, c, Ic);
    rand_vec(&r, t, 6, 3.0);
    rand_vec(&r, u, 6, 3.0);
    grit_si_from_body(&s, m, c, Ic);
    grit_si_apply(St, &s, t);
    grit_si_apply(Su, &s, u);
    /* each dot product sums terms of size |u|_1 terms(t) with ~10 roundings per term */
    const double tu = maxabs(u, 6) * 6 * inertia_terms(m, c, Ic, t), ut = maxabs(t, 6) * 6 * inertia_terms(m, c, Ic, u);
    cr_assert(fabs(grit_sv_dot(u, St) - grit_sv_dot(t, Su)) <= 16 * EPS * (tu + ut), "S not symmetric");
    /* 1/2 t.S t = 1/2 m |v_c|^2 + 1/2 w.Ic w, v_c the velocity of the centre of mass */
    grit_sv_point_velocity(vc, t, c);
    grit_m3_mulv(Iw, Ic, t);
    const double T = 0.5 * grit_sv_dot(t, St), want = 0.5 * m * grit_v3_norm2(vc) + 0.5 * grit_v3_dot(t, Iw);
    cr_assert(fabs(T - want) <= 16 * EPS * tu, "kinetic energy %.17g, expected %.17g", T, want);
    cr_assert(T > 0.0);
  }
}

Test(math, spatial_inertias_add_like_rigidly_joined_bodies) {
  rng r = {26};
  for (int it = 0; it < 1000; ++it) {
    double m1, c1[3], I1[9], m2, c2[3], I2[9], t[6], f1[6], f2[6], f[6], fu[6];
    grit_sinertia s1, s2, s, su;
    rand_body(&r, &m1, c1, I1);
    rand_body(&r, &m2, c2, I2);
    rand_vec(&r, t, 6, 3.0);
    grit_si_from_body(&s1, m1, c1, I1);
    grit_si_from_body(&s2, m2, c2, I2);
    grit_si_add(&s, &s1, &s2);
    grit_si_apply(f, &s, t);
    grit_si_apply(f1, &s1, t);
    grit_si_apply(f2, &s2, t);
    const double scale = inertia_terms(m1, c1, I1, t) + inertia_terms(m2, c2, I2, t);
    for (int i = 0; i < 6; ++i) cr_assert(fabs(f[i] - f1[i] - f2[i]) <= 16 * EPS * scale, "(S1 + S2) t != S1 t + S2 t");
    /* the union as one body: total mass, joint centre of mass, parallel-axis inertia about it */
    const double m = m1 + m2;
    double c[3], Ic[9], d1[3], d2[3], D1[9], D2[9];
    for (int i = 0; i < 3; ++i) c[i] = (m1 * c1[i] + m2 * c2[i]) / m;
    grit_v3_sub(d1, c1, c);
    grit_v3_sub(d2, c2, c);
    crossmat(D1, d1);
    crossmat(D2, d2);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double a1 = 0.0, a2 = 0.0;
        for (int k = 0; k < 3; ++k) {
          a1 += D1[3 * i + k] * D1[3 * j + k];
          a2 += D2[3 * i + k] * D2[3 * j + k];
        }
        Ic[3 * i + j] = I1[3 * i + j] + I2[3 * i + j] + m1 * a1 + m2 * a2;
      }
    grit_si_from_body(&su, m, c, Ic);
    grit_si_apply(fu, &su, t);
    /* the union's inertia is rebuilt through c and the parallel-axis terms: ~4 more roundings */
    cr_assert(maxdiff(f, fu, 6) <= 32 * EPS * scale, "sum of bodies != the union body by %g", maxdiff(f, fu, 6));
  }
}
