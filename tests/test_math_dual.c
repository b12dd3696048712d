/* SPDX-License-Identifier: Apache-2.0 */
/* test_math_dual.c — the math core instantiated for dual numbers (grit/math_dual.h) against the double
 * instantiation (grit/math.h): equal values, and derivatives equal to finite differences of the double
 * functions, for every function family, with all 8 partials seeded along random directions.
 *
 * Values: both instantiations run the same generic code and dual.h computes each value with the double
 * expression of the matching GS_* macro, so the values agree to 1e-15 relative (in fact exactly).
 * Derivatives: 4th-order central differences, set up as in test_dual.c — h a power of two near 1e-3 l
 * (l the length over which the function changes, 1 unless stated), the point on a grid of h/1024 and
 * directions on a grid of 1/1024 so that every stencil point is exact; truncation h^4 |g^(5)| / 30
 * ~ 1e-13 relative. The evaluations of the double function round: each output is a composition of at
 * most ~32 operations, so it is off by <= 32 eps M (M the largest output on the stencil), and the
 * stencil turns that into 1.5 * 32 eps M / h, added to the tolerance. Each partial must satisfy
 *   max_i |dual_i - fd_i| <= 1e-8 max_i |fd_i| + 48 eps M / h. */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/math.h"
#include "grit/math_dual.h"
#include "math_test_util.h"

static const double PI = TEST_PI;
static const double EPS = TEST_EPS;
enum { MAXN = 24, MAXM = 32 };

/* ------------------------------------------------ the functions under test, written once for both */

static inline double cst(double x) { return x; }
static inline grit_dual cst_dual(double x) { return grit_dual_const(x); }

/* A second body for grit_si_add (constants). */
static const double BODY2_M = 2.5, BODY2_C[3] = {0.3, -0.2, 0.5};
static const double BODY2_I[9] = {0.2, 0.01, 0, 0.01, 0.3, 0.02, 0, 0.02, 0.25};

/* Each wrapper maps inputs x (n numbers) to outputs o (m numbers); T is the scalar, S the name suffix. */
#define WRAPPERS(T, S)                                                                                               \
  /* n 6 (a, b), m 14 */                                                                                             \
  static void w_vec3##S(T *o, const T *x) {                                                                          \
    const T *a = x, *b = x + 3;                                                                                      \
    T d[3];                                                                                                          \
    grit_v3_cross##S(o, a, b);                                                                                       \
    o[3] = grit_v3_dot##S(a, b);                                                                                     \
    o[4] = grit_v3_norm##S(a);                                                                                       \
    grit_v3_copy##S(o + 5, a);                                                                                       \
    grit_v3_normalize##S(o + 5);                                                                                     \
    grit_v3_addscl##S(o + 8, a, b, grit_v3_norm2##S(b));                                                             \
    grit_v3_sub##S(d, a, b);                                                                                         \
    grit_v3_add##S(d, d, a);                                                                                         \
    grit_v3_scale##S(o + 11, d, o[3]);                                                                               \
  }                                                                                                                  \
  /* n 21 (a, b, x), m 30: products, then transpose(a) and the two matrix-vector products */                         \
  static void w_mat3##S(T *o, const T *x) {                                                                          \
    grit_m3_mul##S(o, x, x + 9);                                                                                     \
    grit_m3_tmul##S(o + 9, x, x + 9);                                                                                \
    grit_m3_mult##S(o + 18, x, x + 9);                                                                               \
    grit_m3_mulv##S(o + 27, x, x + 18);                                                                              \
  }                                                                                                                  \
  static void w_mat3b##S(T *o, const T *x) {                                                                         \
    grit_m3_transpose##S(o, x);                                                                                      \
    grit_m3_skew##S(o + 9, x + 18);                                                                                  \
    grit_m3_tmulv##S(o + 18, x, x + 18);                                                                             \
  }                                                                                                                  \
  /* n 11 (q, p, x), m 18 */                                                                                         \
  static void w_quat##S(T *o, const T *x) {                                                                          \
    const T *q = x, *p = x + 4, *v = x + 8;                                                                          \
    grit_quat_mul##S(o, q, p);                                                                                       \
    grit_quat_rotate##S(o + 4, q, v);                                                                                \
    grit_quat_rotate_inv##S(o + 7, q, v);                                                                            \
    grit_quat_copy##S(o + 10, q);                                                                                    \
    grit_quat_normalize##S(o + 10);                                                                                  \
    grit_quat_conj##S(o + 14, p);                                                                                    \
  }                                                                                                                  \
  static void w_exp##S(T *o, const T *x) { grit_quat_exp##S(o, x); }                     /* 3 -> 4 */           \
  static void w_log##S(T *o, const T *x) { grit_quat_log##S(o, x); }                     /* 4 -> 3 */           \
  static void w_to_mat##S(T *o, const T *x) { grit_quat_to_mat##S(o, x); }               /* 4 -> 9 */           \
  static void w_from_mat##S(T *o, const T *x) { grit_quat_from_mat##S(o, x); }           /* 9 -> 4 */           \
  static void w_from_mat_exp##S(T *o, const T *x) { /* 3 -> 4: theta -> exp -> R -> q */                           \
    T q[4], R[9];                                                                                                    \
    grit_quat_exp##S(q, x);                                                                                          \
    grit_quat_to_mat##S(R, q);                                                                                       \
    grit_quat_from_mat##S(o, R);                                                                                     \
  }                                                                                                                  \
  static void w_integrate##S(T *o, const T *x) { /* 7 (q, omega) -> 4 */                                           \
    grit_quat_copy##S(o, x);                                                                                         \
    grit_quat_integrate##S(o, x + 4, 0.05);                                                                          \
  }                                                                                                                  \
  static void w_diff##S(T *o, const T *x) { grit_quat_diff##S(o, x, x + 4); }            /* 8 -> 3 */           \
  static void w_axis_angle##S(T *o, const T *x) { grit_quat_from_axis_angle##S(o, x, x[3]); } /* 4 -> 4 */      \
  /* n 15 (p1, theta1, p2, theta2, x), m 18: compose, then apply and apply_inv of the result */                     \
  static void w_tf##S(T *o, const T *x) {                                                                            \
    T q1[4], q2[4], R1[9], R2[9];                                                                                    \
    grit_quat_exp##S(q1, x + 3);                                                                                     \
    grit_quat_to_mat##S(R1, q1);                                                                                     \
    grit_quat_exp##S(q2, x + 9);                                                                                     \
    grit_quat_to_mat##S(R2, q2);                                                                                     \
    grit_tf_compose##S(o, o + 3, x, R1, x + 6, R2);                                                                  \
    grit_tf_apply##S(o + 12, o, o + 3, x + 12);                                                                      \
    grit_tf_apply_inv##S(o + 15, o, o + 3, x + 12);                                                                  \
  }                                                                                                                  \
  /* n 18 (a, b, f), m 22 */                                                                                         \
  static void w_spatial##S(T *o, const T *x) {                                                                       \
    grit_sv_cross_motion##S(o, x, x + 6);                                                                            \
    grit_sv_cross_force##S(o + 6, x, x + 12);                                                                        \
    o[12] = grit_sv_dot##S(x + 6, x + 12);                                                                           \
    grit_sv_point_velocity##S(o + 13, x, x + 6);                                                                     \
    grit_sv_add##S(o + 16, x, x + 12);                                                                               \
  }                                                                                                                  \
  /* n 19 (m, c, Ic, twist), m 32: the inertia's fields, S t, and (S + S2) t for a constant body S2 */              \
  static void w_inertia##S(T *o, const T *x) {                                                                       \
    grit_sinertia##S s, s2, sum;                                                                                     \
    T c2[3], I2[9];                                                                                                  \
    for (int i = 0; i < 3; ++i) c2[i] = cst##S(BODY2_C[i]);                                                          \
    for (int i = 0; i < 9; ++i) I2[i] = cst##S(BODY2_I[i]);                                                          \
    grit_si_from_body##S(&s, x[0], x + 1, x + 4);                                                                    \
    grit_si_from_body##S(&s2, cst##S(BODY2_M), c2, I2);                                                              \
    grit_si_add##S(&sum, &s, &s2);                                                                                   \
    o[0] = s.m;                                                                                                      \
    grit_v3_copy##S(o + 1, s.h);                                                                                     \
    grit_m3_copy##S(o + 4, s.I);                                                                                     \
    grit_si_apply##S(o + 13, &s, x + 13);                                                                            \
    grit_si_apply##S(o + 19, &sum, x + 13);                                                                          \
    o[25] = grit_sv_dot##S(x + 13, o + 13); /* twice the kinetic energy */                                         \
  }
WRAPPERS(double, )
WRAPPERS(grit_dual, _dual)
#undef WRAPPERS

typedef struct fn {
  const char *name;
  int n, m;
  void (*f)(double *o, const double *x);
  void (*fx)(grit_dual *o, const grit_dual *x);
} fn;
#define FN(NAME, N, M) {#NAME, N, M, w_##NAME, w_##NAME##_dual}

static const fn VEC3 = FN(vec3, 6, 14), MAT3 = FN(mat3, 21, 30), MAT3B = FN(mat3b, 21, 21), QUAT = FN(quat, 11, 18);
static const fn EXP = FN(exp, 3, 4), LOG = FN(log, 4, 3), TO_MAT = FN(to_mat, 4, 9), FROM_MAT = FN(from_mat, 9, 4);
static const fn FROM_MAT_EXP = FN(from_mat_exp, 3, 4), INTEGRATE = FN(integrate, 7, 4), DIFF = FN(diff, 8, 3);
static const fn AXIS_ANGLE = FN(axis_angle, 4, 4), TF = FN(tf, 15, 18), SPATIAL = FN(spatial, 18, 22);
static const fn INERTIA = FN(inertia, 19, 26);

/* ------------------------------------------------------------------------------------ the check */

static void eval_along(const fn *F, const double *x, const double *d, double t, double *g, double *M) {
  double y[MAXN];
  for (int j = 0; j < F->n; ++j) y[j] = x[j] + t * d[j];
  F->f(g, y);
  *M = fmax(*M, maxabs(g, F->m));
}

/* Checks values and the 8 partials of F at x (rounded to the stencil grid), with random directions. */
static void check_fn(const fn *F, rng *r, double *x, double ell) {
  const double h = ldexp(1.0, (int)floor(log2(1e-3 * ell))), grid = h / 1024.0;
  grit_dual X[MAXN], Y[MAXM];
  double y[MAXM];
  for (int j = 0; j < F->n; ++j) {
    x[j] = nearbyint(x[j] / grid) * grid;
    X[j] = grit_dual_const(x[j]);
    for (int k = 0; k < GRIT_DUAL_N; ++k) X[j].d[k] = rand_grid_unit(r);
  }
  F->f(y, x);
  F->fx(Y, X);
  const double ymax = maxabs(y, F->m);
  for (int i = 0; i < F->m; ++i)
    cr_assert(fabs(Y[i].v - y[i]) <= 1e-15 * ymax, "%s: value %d: dual %.17g, double %.17g", F->name, i, Y[i].v, y[i]);
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    double d[MAXN], g[4][MAXM], M = 0.0, err = 0.0, fdmax = 0.0;
    int worst = 0;
    for (int j = 0; j < F->n; ++j) d[j] = X[j].d[k];
    const double ts[4] = {h, -h, 2 * h, -2 * h};
    for (int s = 0; s < 4; ++s) eval_along(F, x, d, ts[s], g[s], &M);
    double fd[MAXM];
    for (int i = 0; i < F->m; ++i) {
      fd[i] = (8.0 * (g[0][i] - g[1][i]) - (g[2][i] - g[3][i])) / (12.0 * h);
      fdmax = fmax(fdmax, fabs(fd[i]));
      if (fabs(Y[i].d[k] - fd[i]) > err) {
        err = fabs(Y[i].d[k] - fd[i]);
        worst = i;
      }
    }
    const double tol = 1e-8 * fdmax + 48.0 * EPS * M / h;
    cr_assert(err <= tol, "%s, direction %d, output %d: dual %.17g, finite difference %.17g (|diff| %.3g > %.3g)",
              F->name, k, worst, Y[worst].d[k], fd[worst], err, tol);
  }
}

/* Points with every input uniform in [-a, a]. If `scaled` > 0, the function normalizes the vector of
 * the first `scaled` inputs, which then sets the length scale: l = min(1, its norm). */
static void check_random(const fn *F, uint64_t seed, int npoints, double a, int scaled) {
  rng r = {seed};
  for (int p = 0; p < npoints; ++p) {
    double x[MAXN], n2 = 0.0;
    rand_vec(&r, x, F->n, a);
    for (int i = 0; i < scaled; ++i) n2 += x[i] * x[i];
    check_fn(F, &r, x, scaled > 0 ? fmin(1.0, sqrt(n2)) : 1.0);
  }
}

/* ----------------------------------------------------------------------------------------- tests */

Test(math_dual, vec3_family) { check_random(&VEC3, 1, 300, 2.0, 3); }

Test(math_dual, mat3_family) {
  check_random(&MAT3, 2, 300, 2.0, 0);
  check_random(&MAT3B, 3, 300, 2.0, 0);
}

Test(math_dual, quaternion_product_rotation_normalize) { check_random(&QUAT, 4, 300, 1.0, 4); }

Test(math_dual, quat_exp_any_angle_and_near_zero) {
  rng r = {5};
  for (int p = 0; p < 400; ++p) {
    double th[3];
    /* any angle (exp is smooth everywhere); then small ones, where the stencil lies in the series branch
     * or straddles it (the two branches agree to ~1e-17, far below the stencil's resolution) */
    rand_rotvec(&r, th, p < 200 ? 3 * PI : 2e-2);
    check_fn(&EXP, &r, th, 1.0);
  }
  /* at theta = 0 exactly: q = (1 - |theta|^2/8, theta/2), so dq = (0, d/2) with no rounding at all */
  grit_dual th[3], q[4];
  for (int i = 0; i < 3; ++i) {
    th[i] = grit_dual_const(0.0);
    for (int k = 0; k < GRIT_DUAL_N; ++k) th[i].d[k] = (double)(k + 3 * i) - 7.0;
  }
  grit_quat_exp_dual(q, th);
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    cr_assert(q[0].d[k] == 0.0);
    for (int i = 0; i < 3; ++i) cr_assert(q[i + 1].d[k] == 0.5 * th[i].d[k], "dq/dtheta at 0 != 1/2");
  }
}

Test(math_dual, quat_log) {
  rng r = {6};
  for (int p = 0; p < 400; ++p) {
    double q[4], ell = 1.0;
    if (p < 200) { /* w bounded away from 0, where log switches representative */
      do rand_unit(&r, q, 4);
      while (fabs(q[0]) < 0.05);
    } else { /* near the identity, across the series threshold |u| / w = 1e-2; l = |u| */
      double th[3];
      rand_rotvec(&r, th, 4e-2);
      grit_quat_exp(q, th);
      ell = fmax(grit_v3_norm(q + 1), 1e-6);
    }
    if (p % 2) /* non-unit quaternions too: log depends only on the direction of q */
      for (int i = 0; i < 4; ++i) q[i] *= 1.7;
    check_fn(&LOG, &r, q, ell);
  }
}

Test(math_dual, quat_to_mat_and_diff_and_axis_angle) {
  rng r = {7};
  for (int p = 0; p < 300; ++p) {
    double x[8];
    rand_unit(&r, x, 4);
    check_fn(&TO_MAT, &r, x, 1.0);
    rand_unit(&r, x + 4, 4);
    if (x[0] * x[4] + x[1] * x[5] + x[2] * x[6] + x[3] * x[7] < 0.0) /* keep conj(qa) qb away from w = 0 */
      for (int i = 4; i < 8; ++i) x[i] = -x[i];
    if (fabs(x[0] * x[4] + x[1] * x[5] + x[2] * x[6] + x[3] * x[7]) > 0.05) check_fn(&DIFF, &r, x, 1.0);
    rand_unit(&r, x, 3);
    x[3] = unif(&r, -2 * PI, 2 * PI);
    check_fn(&AXIS_ANGLE, &r, x, 1.0);
  }
}

/* grit_quat_from_mat's branch is chosen from R's diagonal; inputs are rotations whose largest quaternion
 * component exceeds the others in square by 0.1, so that the finite-difference stencil (entries moved
 * by <= 2e-3) never switches branch, and whose |w| >= 0.05, away from the sign flip to w >= 0. */
Test(math_dual, quat_from_mat_all_four_branches) {
  rng r = {8};
  for (int b = 0; b < 4; ++b)
    for (int p = 0; p < 100; ++p) {
      double q[4], R[9], th[3];
      int ok;
      do {
        rand_unit(&r, q, 4);
        ok = fabs(q[0]) >= 0.05;
        for (int i = 0; i < 4; ++i)
          if (i != b && q[b] * q[b] < q[i] * q[i] + 0.1) ok = 0;
      } while (!ok);
      if (q[0] < 0) /* the representative from_mat returns (w >= 0): log(q) then has |theta| <= pi */
        for (int i = 0; i < 4; ++i) q[i] = -q[i];
      grit_quat_to_mat(R, q);
      check_fn(&FROM_MAT, &r, R, 1.0); /* along non-orthogonal directions too: the formula is smooth */
      grit_quat_log(th, q);
      check_fn(&FROM_MAT_EXP, &r, th, 1.0);
    }
}

Test(math_dual, quat_integrate) {
  rng r = {9};
  for (int p = 0; p < 300; ++p) {
    double x[7];
    rand_unit(&r, x, 4);
    rand_vec(&r, x + 4, 3, p < 150 ? 20.0 : 0.1); /* |omega h| up to 1.7 rad, and tiny (series branch) */
    check_fn(&INTEGRATE, &r, x, 1.0);
  }
}

Test(math_dual, transforms) {
  rng r = {10};
  for (int p = 0; p < 300; ++p) {
    double x[15];
    rand_vec(&r, x, 15, 2.0);
    check_fn(&TF, &r, x, 1.0);
  }
}

Test(math_dual, spatial_vectors) { check_random(&SPATIAL, 11, 300, 2.0, 0); }

Test(math_dual, spatial_inertia_wrt_mass_com_inertia_twist) {
  rng r = {12};
  for (int p = 0; p < 300; ++p) {
    double x[19];
    x[0] = unif(&r, 0.1, 10.0);
    rand_vec(&r, x + 1, 18, 2.0);
    check_fn(&INERTIA, &r, x, 1.0);
  }
}

/* The derivatives of exp and log are continuous across the series thresholds: on the two sides of
 * |theta|^2 = GRIT_QUAT_SERIES_THETA2 (one ulp apart) they differ by the series' truncation, whose
 * derivative is ~6 t^5 / 46080 ~ 1e-14 there. */
Test(math_dual, exp_log_derivatives_continuous_across_series_threshold) {
  rng r = {13};
  for (int p = 0; p < 50; ++p) {
    double axis[3];
    rand_unit(&r, axis, 3);
    double lo = 0.99 * sqrt(GRIT_QUAT_SERIES_THETA2), hi = 1.01 * sqrt(GRIT_QUAT_SERIES_THETA2);
    while (nextafter(lo, hi) < hi) { /* bisection to two neighbouring angles on either side */
      const double mid = 0.5 * (lo + hi), th[3] = {mid * axis[0], mid * axis[1], mid * axis[2]};
      if (grit_v3_norm2(th) < GRIT_QUAT_SERIES_THETA2) lo = mid;
      else hi = mid;
    }
    grit_dual tl[3], th[3], ql[4], qh[4], ll[3], lh[3];
    for (int i = 0; i < 3; ++i) {
      tl[i] = grit_dual_const(lo * axis[i]);
      th[i] = grit_dual_const(hi * axis[i]);
      for (int k = 0; k < GRIT_DUAL_N; ++k) tl[i].d[k] = th[i].d[k] = unif(&r, -1.0, 1.0);
    }
    grit_quat_exp_dual(ql, tl);
    grit_quat_exp_dual(qh, th);
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < GRIT_DUAL_N; ++k)
        cr_assert(fabs(ql[i].d[k] - qh[i].d[k]) <= 1e-13, "exp: d q[%d] jumps by %g", i, ql[i].d[k] - qh[i].d[k]);
    /* log(exp(theta)) = theta: its derivative is the identity on both sides of exp's threshold (log
     * itself is in its series branch there: |u| / w = tan(|theta| / 2) ~ 5e-3) */
    grit_quat_log_dual(ll, ql);
    grit_quat_log_dual(lh, qh);
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < GRIT_DUAL_N; ++k) {
        cr_assert(fabs(ll[i].d[k] - tl[i].d[k]) <= 1e-14, "d log(exp) != 1 below the threshold");
        cr_assert(fabs(lh[i].d[k] - th[i].d[k]) <= 1e-14, "d log(exp) != 1 above the threshold");
      }
  }
}

/* d log(exp(theta)) / d theta = identity for any |theta| < pi: a chain through both maps' closed forms. */
Test(math_dual, log_exp_chain_is_identity) {
  rng r = {14};
  for (int p = 0; p < 1000; ++p) {
    double t[3];
    rand_rotvec(&r, t, PI - 1e-3);
    grit_dual th[3], q[4], back[3];
    for (int i = 0; i < 3; ++i) {
      th[i] = grit_dual_const(t[i]);
      for (int k = 0; k < GRIT_DUAL_N; ++k) th[i].d[k] = unif(&r, -1.0, 1.0);
    }
    grit_quat_exp_dual(q, th);
    grit_quat_log_dual(back, q);
    /* ~40 roundings; near |theta| = pi log's derivative grows like 1 / sin(|theta| / 2) ~ 1, so the
     * error stays ~1e-14 */
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < GRIT_DUAL_N; ++k)
        cr_assert(fabs(back[i].d[k] - th[i].d[k]) <= 1e-13, "|theta| = %g: partial %d of component %d: %.17g vs %.17g",
                  grit_v3_norm(t), k, i, back[i].d[k], th[i].d[k]);
  }
}
