/* SPDX-License-Identifier: Apache-2.0 */
/* test_math.c — the math core (grit/math.h) for double: vectors, matrices, quaternions and their exp/log
 * maps. Transforms and spatial algebra are tested in test_math_spatial.c, the dual instantiation
 * (grit/math_dual.h) in test_math_dual.c.
 *
 * Tolerances of the double tests count roundings: an expression of k operations on numbers of size S
 * is exact to about k eps S / 2. Each test states its k with a margin of about 2. */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/math.h"
#include "math_test_util.h"

static const double PI = TEST_PI;
static const double EPS = TEST_EPS;
#define rand_unit3(r, v) rand_unit((r), (v), 3)
#define rand_quat(r, q) rand_unit((r), (q), 4)

/* r == (x, y, z) exactly */
static int is3(const double r[3], double x, double y, double z) { return r[0] == x && r[1] == y && r[2] == z; }

Test(math, vec3_basic_ops_exact_values) { /* small binary fractions: every result is exact */
  const double a[3] = {1, -2, 3}, b[3] = {4, 0.5, 2};
  double r[3], c[3];
  grit_v3_add(r, a, b);
  cr_assert(is3(r, 5, -1.5, 5));
  grit_v3_sub(r, a, b);
  cr_assert(is3(r, -3, -2.5, 1));
  grit_v3_scale(r, a, 2.0);
  cr_assert(is3(r, 2, -4, 6));
  grit_v3_addscl(r, a, b, 2.0);
  cr_assert(is3(r, 9, -1, 7));
  cr_assert(grit_v3_dot(a, b) == 9.0 && grit_v3_norm2(a) == 14.0 && grit_v3_norm(a) == sqrt(14.0));
  grit_v3_set(r, 7, 8, 9);
  grit_v3_copy(c, r);
  cr_assert(is3(c, 7, 8, 9));
  grit_v3_zero(c);
  cr_assert(is3(c, 0, 0, 0));
  grit_v3_cross(r, (const double[3]){1, 0, 0}, (const double[3]){0, 1, 0}); /* right-handed: x cross y = z */
  cr_assert(is3(r, 0, 0, 1));
}

Test(math, vec3_normalize) {
  rng r = {1};
  for (int it = 0; it < 1000; ++it) {
    double v[3], u[3], c[3];
    rand_vec(&r, v, 3, 100.0);
    grit_v3_copy(u, v);
    const double n = grit_v3_normalize(u);
    cr_assert(fabs(n - sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])) <= 2 * EPS * n);
    cr_assert(fabs(grit_v3_norm(u) - 1.0) <= 4 * EPS, "|u| - 1 = %g", grit_v3_norm(u) - 1.0);
    grit_v3_cross(c, u, v); /* same direction: u x v = 0, u . v > 0 */
    cr_assert(maxabs(c, 3) <= 8 * EPS * n && grit_v3_dot(u, v) > 0);
  }
  double z[3] = {0, 0, 0};
  cr_assert(grit_v3_normalize(z) == 0.0 && is3(z, 0, 0, 0), "a zero vector stays zero");
}

Test(math, cross_product_identities) {
  rng r = {2};
  for (int it = 0; it < 1000; ++it) {
    double a[3], b[3], c[3], ab[3], ba[3], bc[3], ca[3], l[3], rhs[3];
    rand_vec(&r, a, 3, 2.0);
    rand_vec(&r, b, 3, 2.0);
    rand_vec(&r, c, 3, 2.0);
    const double s = grit_v3_norm(a) * grit_v3_norm(b), s3 = s * grit_v3_norm(c);
    grit_v3_cross(ab, a, b);
    grit_v3_cross(ba, b, a);
    /* anticommutative: exactly, unless the compiler contracts a product into an FMA (clang's default
     * -ffp-contract=on, also in constant folding), which changes one rounding */
    for (int i = 0; i < 3; ++i) cr_assert(fabs(ab[i] + ba[i]) <= EPS * s, "anticommutative");
    /* orthogonal to both factors; each product ~6 roundings of size s |a| */
    cr_assert(fabs(grit_v3_dot(ab, a)) <= 8 * EPS * s * grit_v3_norm(a));
    cr_assert(fabs(grit_v3_dot(ab, b)) <= 8 * EPS * s * grit_v3_norm(b));
    /* Lagrange: |a x b|^2 = |a|^2 |b|^2 - (a.b)^2 */
    const double ad = grit_v3_dot(a, b);
    cr_assert(fabs(grit_v3_norm2(ab) - (grit_v3_norm2(a) * grit_v3_norm2(b) - ad * ad)) <= 16 * EPS * s * s);
    /* triple product is cyclic: a.(b x c) = b.(c x a) */
    grit_v3_cross(bc, b, c);
    grit_v3_cross(ca, c, a);
    cr_assert(fabs(grit_v3_dot(a, bc) - grit_v3_dot(b, ca)) <= 16 * EPS * s3);
    /* BAC-CAB: a x (b x c) = b (a.c) - c (a.b) */
    grit_v3_cross(l, a, bc);
    for (int i = 0; i < 3; ++i) rhs[i] = b[i] * grit_v3_dot(a, c) - c[i] * ad;
    cr_assert(maxdiff(l, rhs, 3) <= 16 * EPS * s3);
    /* output aliasing an input */
    grit_v3_copy(l, a);
    grit_v3_cross(l, l, b);
    cr_assert(maxdiff(l, ab, 3) == 0.0, "cross(a, a, b) differs from cross(r, a, b)");
  }
}

/* --------------------------------------------------------------------------------------- mat3 */

Test(math, mat3_products_match_index_formulas) {
  rng r = {3};
  for (int it = 0; it < 500; ++it) {
    double a[9], b[9], x[3], got[9], want[9], gv[3], wv[3], at[9];
    rand_vec(&r, a, 9, 3.0);
    rand_vec(&r, b, 9, 3.0);
    rand_vec(&r, x, 3, 3.0);
    /* three products of size <= 9 and two sums: <= 3 eps of sum_k |a||b| <= 27 */
    const double tol = 3 * EPS * 27.0;
    grit_m3_transpose(at, a);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) cr_assert(at[3 * i + j] == a[3 * j + i]);
    grit_m3_mul(got, a, b);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) want[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    cr_assert(maxdiff(got, want, 9) <= tol, "mul");
    grit_m3_tmul(got, a, b);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) want[3 * i + j] = a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j];
    cr_assert(maxdiff(got, want, 9) <= tol, "tmul = a^T b");
    grit_m3_mult(got, a, b);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        want[3 * i + j] = a[3 * i] * b[3 * j] + a[3 * i + 1] * b[3 * j + 1] + a[3 * i + 2] * b[3 * j + 2];
    cr_assert(maxdiff(got, want, 9) <= tol, "mult = a b^T");
    grit_m3_mulv(gv, a, x);
    matvec(wv, a, x, 3);
    cr_assert(maxdiff(gv, wv, 3) <= tol, "mulv");
    grit_m3_tmulv(gv, a, x);
    matvec(wv, at, x, 3);
    cr_assert(maxdiff(gv, wv, 3) <= tol, "tmulv");
    grit_m3_identity(got);
    grit_m3_mul(want, got, a);
    cr_assert(maxdiff(want, a, 9) == 0.0, "1 a = a");
  }
}

Test(math, mat3_outputs_may_alias_inputs) {
  rng r = {4};
  double a[9], b[9], x[3], ref[9], t[9];
  rand_vec(&r, a, 9, 1.0);
  rand_vec(&r, b, 9, 1.0);
  rand_vec(&r, x, 3, 1.0);
  void (*prod[3])(double *, const double *, const double *) = {grit_m3_mul, grit_m3_tmul, grit_m3_mult};
  for (int p = 0; p < 3; ++p) {
    prod[p](ref, a, b);
    grit_m3_copy(t, a);
    prod[p](t, t, b);
    cr_assert(maxdiff(t, ref, 9) == 0.0, "product %d with r == a", p);
    grit_m3_copy(t, b);
    prod[p](t, a, t);
    cr_assert(maxdiff(t, ref, 9) == 0.0, "product %d with r == b", p);
  }
  grit_m3_transpose(ref, a);
  grit_m3_copy(t, a);
  grit_m3_transpose(t, t);
  cr_assert(maxdiff(t, ref, 9) == 0.0, "transpose in place");
  void (*mv[2])(double *, const double *, const double *) = {grit_m3_mulv, grit_m3_tmulv};
  for (int p = 0; p < 2; ++p) {
    mv[p](ref, a, x);
    grit_v3_copy(t, x);
    mv[p](t, a, t);
    cr_assert(maxdiff(t, ref, 3) == 0.0, "matrix-vector product %d in place", p);
  }
}

Test(math, skew_is_the_cross_product_matrix) {
  rng r = {5};
  for (int it = 0; it < 200; ++it) {
    double a[3], b[3], S[9], Sb[3], ab[3], M[9];
    rand_vec(&r, a, 3, 2.0);
    rand_vec(&r, b, 3, 2.0);
    grit_m3_skew(S, a);
    crossmat(M, a);
    cr_assert(maxdiff(S, M, 9) == 0.0);
    grit_m3_mulv(Sb, S, b);
    grit_v3_cross(ab, a, b);
    cr_assert(maxdiff(Sb, ab, 3) <= 4 * EPS * 4.0 * 3.0, "[a]x b != a x b"); /* two products of size <= 4 */
    grit_m3_mulv(Sb, S, a);
    cr_assert(maxabs(Sb, 3) <= 4 * EPS * 4.0, "[a]x a != 0");
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) cr_assert(S[3 * i + j] == -S[3 * j + i], "not skew-symmetric");
  }
}

/* --------------------------------------------------------------------------------- quaternions */

Test(math, quat_mul_hamilton_associative_inverse) {
  const double i[4] = {0, 1, 0, 0}, j[4] = {0, 0, 1, 0};
  double k[4];
  grit_quat_mul(k, i, j); /* Hamilton: i j = k */
  cr_assert(k[0] == 0 && k[1] == 0 && k[2] == 0 && k[3] == 1, "i j = (%g %g %g %g)", k[0], k[1], k[2], k[3]);
  rng r = {6};
  for (int it = 0; it < 1000; ++it) {
    double a[4], b[4], c[4], ab[4], bc[4], l[4], rr[4], one[4], ac[4], id[4];
    rand_quat(&r, a);
    rand_quat(&r, b);
    rand_quat(&r, c);
    grit_quat_mul(ab, a, b);
    grit_quat_mul(l, ab, c);
    grit_quat_mul(bc, b, c);
    grit_quat_mul(rr, a, bc);
    cr_assert(maxdiff(l, rr, 4) <= 16 * EPS, "(ab)c != a(bc) by %g", maxdiff(l, rr, 4)); /* 2 x 8 roundings */
    grit_quat_conj(ac, a);
    grit_quat_mul(one, a, ac);
    grit_quat_identity(id);
    cr_assert(maxdiff(one, id, 4) <= 8 * EPS, "a conj(a) != 1");
    grit_quat_mul(l, a, id);
    cr_assert(maxdiff(l, a, 4) == 0.0, "a 1 != a");
    grit_quat_copy(l, a); /* aliasing */
    grit_quat_mul(l, l, b);
    cr_assert(maxdiff(l, ab, 4) == 0.0);
  }
}

Test(math, quat_to_mat_is_a_rotation_and_composes) {
  /* convention: R(q) maps body to world; a quarter turn about z carries x to y */
  const double qz[4] = {sqrt(0.5), 0, 0, sqrt(0.5)};
  double R[9], y[3];
  grit_quat_to_mat(R, qz);
  grit_m3_mulv(y, R, (const double[3]){1, 0, 0});
  cr_assert(fabs(y[0]) <= 2 * EPS && fabs(y[1] - 1) <= 2 * EPS && fabs(y[2]) <= 2 * EPS);
  rng r = {7};
  for (int it = 0; it < 1000; ++it) {
    double a[4], b[4], ab[4], Ra[9], Rb[9], Rab[9], RaRb[9], RRt[9], id[9];
    rand_quat(&r, a);
    rand_quat(&r, b);
    grit_quat_to_mat(Ra, a);
    grit_m3_mult(RRt, Ra, Ra);
    grit_m3_identity(id);
    cr_assert(maxdiff(RRt, id, 9) <= 16 * EPS, "R R^T != 1 by %g", maxdiff(RRt, id, 9));
    const double det = Ra[0] * (Ra[4] * Ra[8] - Ra[5] * Ra[7]) - Ra[1] * (Ra[3] * Ra[8] - Ra[5] * Ra[6]) +
                       Ra[2] * (Ra[3] * Ra[7] - Ra[4] * Ra[6]);
    cr_assert(fabs(det - 1.0) <= 32 * EPS, "det R = 1 + %g", det - 1.0);
    /* R(a b) = R(a) R(b): rotating by a b is rotating by b, then by a */
    grit_quat_mul(ab, a, b);
    grit_quat_to_mat(Rab, ab);
    grit_quat_to_mat(Rb, b);
    grit_m3_mul(RaRb, Ra, Rb);
    cr_assert(maxdiff(Rab, RaRb, 9) <= 32 * EPS, "R(ab) != R(a)R(b) by %g", maxdiff(Rab, RaRb, 9));
  }
}

Test(math, quat_rotate_matches_matrix_and_inverse) {
  rng r = {8};
  for (int it = 0; it < 1000; ++it) {
    double q[4], R[9], x[3], a[3], b[3], back[3];
    rand_quat(&r, q);
    rand_vec(&r, x, 3, 5.0);
    const double s = grit_v3_norm(x);
    grit_quat_to_mat(R, q);
    grit_quat_rotate(a, q, x);
    grit_m3_mulv(b, R, x);
    cr_assert(maxdiff(a, b, 3) <= 16 * EPS * s, "rotate != R x by %g", maxdiff(a, b, 3));
    grit_quat_rotate_inv(a, q, x);
    grit_m3_tmulv(b, R, x);
    cr_assert(maxdiff(a, b, 3) <= 16 * EPS * s, "rotate_inv != R^T x");
    grit_quat_rotate(a, q, x);
    grit_quat_rotate_inv(back, q, a);
    cr_assert(maxdiff(back, x, 3) <= 16 * EPS * s, "rotate_inv(rotate(x)) != x");
    cr_assert(fabs(grit_v3_norm(a) - s) <= 8 * EPS * s, "rotation changed the length");
    grit_v3_copy(back, x); /* aliasing */
    grit_quat_rotate(back, q, back);
    cr_assert(maxdiff(back, a, 3) == 0.0);
  }
}

/* The branch grit_quat_from_mat takes (Shepperd): the largest of 4w^2 = 1 + tr, 4x^2 = 1 + 2 R00 - tr,
 * 4y^2 = 1 + 2 R11 - tr, 4z^2 = 1 + 2 R22 - tr; 0 = w, 1 = x, 2 = y, 3 = z; the first wins ties. */
static int shepperd_branch(const double R[9]) {
  const double tr = R[0] + R[4] + R[8];
  const double c[4] = {1 + tr, 1 + 2 * R[0] - tr, 1 + 2 * R[4] - tr, 1 + 2 * R[8] - tr};
  int b = 0;
  for (int i = 1; i < 4; ++i)
    if (c[i] > c[b]) b = i;
  return b;
}

/* A random unit quaternion whose component `largest` exceeds the others in square by `margin`. */
static void rand_quat_largest(rng *r, double q[4], int largest, double margin) {
  for (;;) {
    rand_quat(r, q);
    int ok = 1;
    for (int i = 0; i < 4; ++i)
      if (i != largest && q[largest] * q[largest] < q[i] * q[i] + margin) ok = 0;
    if (ok) return;
  }
}

/* from_mat(to_mat(q)) = q with w >= 0: 12 roundings in to_mat, a square root and a division. */
static void check_from_mat_round_trip(const double q[4], double tol) {
  double R[9], p[4], Rp[9];
  grit_quat_to_mat(R, q);
  grit_quat_from_mat(p, R);
  cr_assert(p[0] >= 0.0, "w < 0");
  cr_assert(quat_dist(p, q) <= tol, "from_mat(to_mat(q)) off by %g (branch %d)", quat_dist(p, q), shepperd_branch(R));
  grit_quat_to_mat(Rp, p);
  cr_assert(maxdiff(Rp, R, 9) <= 2 * tol, "R(from_mat(R)) != R");
}

Test(math, quat_from_mat_round_trip_in_all_four_branches) {
  rng r = {9};
  for (int b = 0; b < 4; ++b)
    for (int it = 0; it < 500; ++it) {
      double q[4], R[9];
      rand_quat_largest(&r, q, b, 0.0);
      grit_quat_to_mat(R, q);
      cr_assert(shepperd_branch(R) == b, "the test meant branch %d, got %d", b, shepperd_branch(R));
      check_from_mat_round_trip(q, 8 * EPS);
    }
}

Test(math, quat_from_mat_near_half_turns) {
  rng r = {10};
  const double offsets[4] = {0.0, 1e-12, 1e-9, 1e-6}; /* angle = pi - offset */
  for (int it = 0; it < 200; ++it)
    for (int o = 0; o < 4; ++o) {
      double axis[3], th[3], q[4];
      if (it < 3) { /* the coordinate axes themselves: w, two of x, y, z are (near) zero */
        grit_v3_zero(axis);
        axis[it] = 1.0;
      } else {
        rand_unit3(&r, axis);
      }
      grit_v3_scale(th, axis, PI - offsets[o]);
      grit_quat_exp(q, th);
      check_from_mat_round_trip(q, 8 * EPS);
    }
}

Test(math, quat_exp_matches_rodrigues) {
  rng r = {11};
  for (int it = 0; it < 1000; ++it) {
    double th[3], q[4], R[9], K[9], K2[9], Rr[9];
    rand_rotvec(&r, th, 3 * PI); /* exp is defined for any angle, also beyond pi */
    grit_quat_exp(q, th);
    const double n = grit_v3_norm(th), k[3] = {th[0] / n, th[1] / n, th[2] / n};
    cr_assert(fabs(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] - 1.0) <= 8 * EPS, "exp is not unit");
    /* R = 1 + sin(t) [k]x + (1 - cos t) [k]x^2 */
    crossmat(K, k);
    grit_m3_mul(K2, K, K);
    for (int i = 0; i < 9; ++i) Rr[i] = (i % 4 == 0) + sin(n) * K[i] + (1 - cos(n)) * K2[i];
    grit_quat_to_mat(R, q);
    cr_assert(maxdiff(R, Rr, 9) <= 32 * EPS, "R(exp(theta)) != Rodrigues by %g", maxdiff(R, Rr, 9));
  }
}

Test(math, quat_exp_log_round_trips) {
  rng r = {12};
  for (int it = 0; it < 2000; ++it) {
    double th[3], q[4], back[3], p[4], lq[3], eq[4];
    rand_rotvec(&r, th, PI * (1 - 1e-9));
    grit_quat_exp(q, th);
    grit_quat_log(back, q);
    /* exp and log: ~10 roundings each, relative to |theta| (log's atan2 keeps relative accuracy) */
    cr_assert(maxdiff(back, th, 3) <= 16 * EPS * grit_v3_norm(th), "log(exp(theta)) off by %g at |theta| = %.17g",
              maxdiff(back, th, 3), grit_v3_norm(th));
    rand_quat(&r, p);
    grit_quat_log(lq, p);
    cr_assert(grit_v3_norm(lq) <= PI * (1 + 2 * EPS), "|log q| > pi");
    grit_quat_exp(eq, lq);
    cr_assert(quat_dist(eq, p) <= 8 * EPS, "exp(log(q)) != +-q by %g", quat_dist(eq, p));
  }
}

/* Reference exp in long double (64-bit mantissa): accurate to ~1e-19. */
static void exp_ref(long double q[4], const double th[3]) {
  const long double t = sqrtl((long double)th[0] * th[0] + (long double)th[1] * th[1] + (long double)th[2] * th[2]);
  const long double s = t > 0 ? sinl(t / 2) / t : 0.5L;
  q[0] = cosl(t / 2);
  for (int i = 0; i < 3; ++i) q[i + 1] = th[i] * s;
}
static double diff_ref(const double *a, const long double *b, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = fmax(m, (double)fabsl(a[i] - b[i]));
  return m;
}

Test(math, quat_exp_log_tiny_angles) {
  rng r = {13};
  const double sizes[5] = {1e-300, 1e-15, 1e-12, 1e-9, 1e-6};
  for (int s = 0; s < 5; ++s)
    for (int it = 0; it < 100; ++it) {
      double axis[3], th[3], q[4], back[3];
      long double ref[4];
      rand_unit3(&r, axis);
      grit_v3_scale(th, axis, sizes[s] * unif(&r, 0.5, 1.0));
      grit_quat_exp(q, th);
      exp_ref(ref, th);
      /* components relative to their own size: the vector part is ~|theta|/2 */
      cr_assert(fabs(q[0] - (double)ref[0]) <= EPS, "w at |theta| ~ %g", sizes[s]);
      for (int i = 1; i < 4; ++i)
        cr_assert(fabs(q[i] - (double)ref[i]) <= 2 * EPS * sizes[s], "vector part at |theta| ~ %g", sizes[s]);
      grit_quat_log(back, q);
      cr_assert(maxdiff(back, th, 3) <= 4 * EPS * sizes[s], "log(exp(theta)) at |theta| ~ %g", sizes[s]);
    }
  double zero[3] = {0, 0, 0}, q[4], l[3];
  grit_quat_exp(q, zero);
  cr_assert(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0, "exp(0) != 1");
  grit_quat_log(l, q);
  cr_assert(l[0] == 0 && l[1] == 0 && l[2] == 0, "log(1) != 0");
}

/* Bisection for two neighbouring doubles lo < hi with pred(lo) true and pred(hi) false. */
static void straddle(double *lo, double *hi, int (*pred)(double, const double *), const double *ctx) {
  cr_assert(pred(*lo, ctx) && !pred(*hi, ctx), "the bracket does not straddle the threshold");
  while (nextafter(*lo, *hi) < *hi) {
    const double mid = 0.5 * (*lo + *hi);
    if (pred(mid, ctx)) *lo = mid;
    else *hi = mid;
  }
}
/* exp takes its series branch at theta = t axis. */
static int exp_uses_series(double t, const double *axis) {
  double th[3];
  grit_v3_scale(th, axis, t);
  return grit_v3_norm2(th) < GRIT_QUAT_SERIES_THETA2;
}
/* the quaternion (1, x axis) / sqrt(1 + x^2), whose log is 2 atan(x) axis */
static void quat_tan_half(double q[4], double x, const double *axis) {
  const double w = 1.0 / sqrt(1.0 + x * x);
  q[0] = w;
  for (int i = 0; i < 3; ++i) q[i + 1] = x * w * axis[i];
}
/* log takes its series branch at that quaternion (the same test as grit_quat_log's) */
static int log_uses_series(double x, const double *axis) {
  double q[4];
  quat_tan_half(q, x, axis);
  return grit_v3_norm2(q + 1) < GRIT_QUAT_SERIES_THETA2 * q[0] * q[0];
}

Test(math, quat_exp_continuous_across_series_threshold) {
  rng r = {14};
  for (int it = 0; it < 50; ++it) {
    double axis[3], lo = 0.99 * sqrt(GRIT_QUAT_SERIES_THETA2), hi = 1.01 * sqrt(GRIT_QUAT_SERIES_THETA2);
    rand_unit3(&r, axis);
    straddle(&lo, &hi, exp_uses_series, axis);
    double tl[3], th[3], ql[4], qh[4];
    long double rl[4], rh[4];
    grit_v3_scale(tl, axis, lo);
    grit_v3_scale(th, axis, hi);
    grit_quat_exp(ql, tl);
    grit_quat_exp(qh, th);
    exp_ref(rl, tl);
    exp_ref(rh, th);
    /* each branch within ~2 roundings of the truth; the two sides 1 ulp of t apart */
    cr_assert(diff_ref(ql, rl, 4) <= EPS, "series side off by %g", diff_ref(ql, rl, 4));
    cr_assert(diff_ref(qh, rh, 4) <= EPS, "closed-form side off by %g", diff_ref(qh, rh, 4));
    cr_assert(maxdiff(ql, qh, 4) <= 1e-15, "jump of %g across the threshold", maxdiff(ql, qh, 4));
  }
}

Test(math, quat_log_continuous_across_series_threshold) {
  rng r = {15};
  for (int it = 0; it < 50; ++it) {
    double axis[3], lo = 0.99 * sqrt(GRIT_QUAT_SERIES_THETA2), hi = 1.01 * sqrt(GRIT_QUAT_SERIES_THETA2);
    rand_unit3(&r, axis);
    straddle(&lo, &hi, log_uses_series, axis);
    double ql[4], qh[4], ll[3], lh[3];
    quat_tan_half(ql, lo, axis);
    quat_tan_half(qh, hi, axis);
    grit_quat_log(ll, ql);
    grit_quat_log(lh, qh);
    for (int side = 0; side < 2; ++side) {
      const double *q = side ? qh : ql, *l = side ? lh : ll;
      /* reference 2 atan(|u| / w) u / |u| in long double, from the rounded q */
      const long double s = sqrtl((long double)q[1] * q[1] + (long double)q[2] * q[2] + (long double)q[3] * q[3]);
      const long double f = 2 * atan2l(s, q[0]) / s;
      const long double ref[3] = {q[1] * f, q[2] * f, q[3] * f};
      cr_assert(diff_ref(l, ref, 3) <= 4 * EPS * grit_v3_norm(l), "%s side off by %g", side ? "closed-form" : "series",
                diff_ref(l, ref, 3));
    }
    cr_assert(maxdiff(ll, lh, 3) <= 1e-15, "jump of %g across the threshold", maxdiff(ll, lh, 3));
  }
}

Test(math, quat_log_of_q_and_minus_q_agree) {
  rng r = {16};
  for (int it = 0; it < 1000; ++it) {
    double q[4], m[4], a[3], b[3];
    rand_quat(&r, q);
    if (it < 10) q[0] = 1e-17 * (it - 5); /* (near) half turns: w ~ 0 of either sign */
    grit_quat_normalize(q);
    for (int i = 0; i < 4; ++i) m[i] = -q[i];
    grit_quat_log(a, q);
    grit_quat_log(b, m);
    cr_assert(maxdiff(a, b, 3) == 0.0, "log(q) != log(-q)");
  }
}

Test(math, quat_integrate_constant_body_rate) {
  rng r = {17};
  for (int it = 0; it < 20; ++it) {
    double q0[4], q[4], w[3], th[3], e[4], want[4];
    const int n = 1000;
    const double h = 1e-3;
    rand_quat(&r, q0);
    rand_vec(&r, w, 3, 10.0);
    grit_quat_copy(q, q0);
    for (int k = 0; k < n; ++k) {
      grit_quat_integrate(q, w, h);
      const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
      /* normalize leaves |q| - 1 within ~1.5 eps, and this sum of squares adds ~2.5 eps of its own */
      cr_assert(fabs(n2 - 1.0) <= 8 * EPS, "|q|^2 - 1 = %g after step %d", n2 - 1.0, k);
    }
    /* exp(w h)^n = exp(w n h): the steps commute (same axis); each step adds ~4 eps */
    grit_v3_scale(th, w, n * h);
    grit_quat_exp(e, th);
    grit_quat_mul(want, q0, e);
    cr_assert(quat_dist(q, want) <= n * 4 * EPS, "n steps vs exp(w n h): %g", quat_dist(q, want));
  }
  /* the rate is in the BODY frame: q (+) w h = exp(R(q) w h) (x) q, a world-frame rotation */
  double q[4], w[3] = {0.3, -1.2, 0.7}, ww[3], th[3], e[4], want[4];
  rand_quat(&r, q);
  grit_quat_rotate(ww, q, w);
  grit_v3_scale(th, ww, 0.01);
  grit_quat_exp(e, th);
  grit_quat_mul(want, e, q);
  grit_quat_integrate(q, w, 0.01);
  cr_assert(quat_dist(q, want) <= 16 * EPS, "body-frame convention: off by %g", quat_dist(q, want));
}

Test(math, quat_diff_inverts_integrate) {
  rng r = {18};
  for (int it = 0; it < 1000; ++it) {
    double qa[4], qb[4], w[3], d[3], q[4];
    rand_quat(&r, qa);
    rand_vec(&r, w, 3, 3.0);
    grit_quat_copy(qb, qa);
    grit_quat_integrate(qb, w, 0.1);
    grit_quat_diff(d, qa, qb);
    for (int i = 0; i < 3; ++i) w[i] *= 0.1;
    /* |w h| < pi: diff recovers it, to ~16 roundings relative to |w h| plus the 8 eps of unit q's */
    cr_assert(maxdiff(d, w, 3) <= 16 * EPS * (grit_v3_norm(w) + 1), "diff(q, q + wh) != wh by %g", maxdiff(d, w, 3));
    rand_quat(&r, qb); /* any pair: integrate(qa, diff(qa, qb), 1) = +-qb */
    grit_quat_diff(d, qa, qb);
    grit_quat_copy(q, qa);
    grit_quat_integrate(q, d, 1.0);
    cr_assert(quat_dist(q, qb) <= 16 * EPS, "qa + diff(qa, qb) != qb by %g", quat_dist(q, qb));
  }
}

Test(math, quat_axis_angle_and_normalize) {
  rng r = {19};
  for (int it = 0; it < 1000; ++it) {
    double axis[3], th[3], a[4], e[4], q[4], s[4];
    rand_unit3(&r, axis);
    const double angle = unif(&r, -2 * PI, 2 * PI);
    grit_quat_from_axis_angle(a, axis, angle);
    grit_v3_scale(th, axis, angle);
    grit_quat_exp(e, th);
    /* the same quaternion (not only the same rotation): exp keeps the sign for angles beyond pi */
    cr_assert(maxdiff(a, e, 4) <= 8 * EPS, "axis-angle != exp by %g", maxdiff(a, e, 4));
    rand_quat(&r, q);
    const double scale = exp(unif(&r, -5.0, 5.0));
    for (int i = 0; i < 4; ++i) s[i] = q[i] * scale;
    const double n = grit_quat_normalize(s);
    cr_assert(fabs(n - scale) <= 4 * EPS * scale && maxdiff(s, q, 4) <= 4 * EPS, "normalize");
  }
  double z[4] = {0, 0, 0, 0};
  cr_assert(grit_quat_normalize(z) == 0.0 && z[0] == 1 && z[1] == 0 && z[2] == 0 && z[3] == 0,
            "a zero quaternion becomes the identity");
}
