/* SPDX-License-Identifier: Apache-2.0 */
/* math_test_util.h — small helpers shared by the tests of the math core and the dual numbers
 * (test_dual.c, test_math.c, test_math_spatial.c, test_math_dual.c): a deterministic test-local PRNG,
 * random vectors and rotations, and comparisons. Header-only, static inline, no global state. */
#ifndef GRIT_MATH_TEST_UTIL_H
#define GRIT_MATH_TEST_UTIL_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#define TEST_PI 3.14159265358979323846
#define TEST_EPS DBL_EPSILON

typedef struct rng {
  uint64_t s; /* nonzero */
} rng;

static inline uint64_t rng_next(rng *r) { /* xorshift64* (Vigna 2016) */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ULL;
}
/* Uniform in [lo, hi). */
static inline double unif(rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1.0p-53;
}
/* Log-uniform in [lo, hi), 0 < lo < hi. */
static inline double logunif(rng *r, double lo, double hi) { return lo * pow(hi / lo, unif(r, 0.0, 1.0)); }
static inline double rand_sign(rng *r) { return (rng_next(r) >> 63) ? -1.0 : 1.0; }
/* A multiple of 1/1024 in [-1, 1): finite-difference directions whose steps are exact (see test_dual.c). */
static inline double rand_grid_unit(rng *r) { return (double)((int)(rng_next(r) >> 53) - 1024) / 1024.0; }

/* n numbers uniform in [-a, a). */
static inline void rand_vec(rng *r, double *v, int n, double a) {
  for (int i = 0; i < n; ++i) v[i] = unif(r, -a, a);
}
/* A uniformly distributed unit n-vector (rejection from the cube); n = 4 gives a uniform rotation. */
static inline void rand_unit(rng *r, double *v, int n) {
  double n2;
  do {
    rand_vec(r, v, n, 1.0);
    n2 = 0.0;
    for (int i = 0; i < n; ++i) n2 += v[i] * v[i];
  } while (n2 > 1.0 || n2 < 1e-2);
  for (int i = 0; i < n; ++i) v[i] /= sqrt(n2);
}
/* A rotation vector with a uniform axis and an angle uniform in [0, amax). */
static inline void rand_rotvec(rng *r, double th[3], double amax) {
  rand_unit(r, th, 3);
  const double a = unif(r, 0.0, amax);
  for (int i = 0; i < 3; ++i) th[i] *= a;
}

static inline double maxabs(const double *a, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
  return m;
}
static inline double maxdiff(const double *a, const double *b, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}
/* The largest difference of two row-major r x c matrices relative to each column's largest entry of Y
 * (a column of zeros: relative to 1e-300). */
static inline double col_rel_diff(const double *X, const double *Y, int r, int c) {
  double worst = 0.0;
  for (int j = 0; j < c; ++j) {
    double s = 1e-300;
    for (int i = 0; i < r; ++i) s = fmax(s, fabs(Y[i * c + j]));
    for (int i = 0; i < r; ++i) worst = fmax(worst, fabs(X[i * c + j] - Y[i * c + j]) / s);
  }
  return worst;
}
/* A solve's backward error: max |A x - b| / (|A| |x| + |b|) over the rows (infinity norms). */
static inline double solve_backward_error(int n, const double *A, const double *x, const double *b) {
  double r = 0.0, an = 0.0, xn = 0.0, bn = 0.0;
  for (int i = 0; i < n; ++i) {
    double s = 0.0, ai = 0.0;
    for (int j = 0; j < n; ++j) s += A[i * n + j] * x[j], ai += fabs(A[i * n + j]);
    r = fmax(r, fabs(s - b[i])), an = fmax(an, ai), xn = fmax(xn, fabs(x[i])), bn = fmax(bn, fabs(b[i]));
  }
  return r / (an * xn + bn);
}
/* Distance between unit quaternions as rotations (q and -q are the same rotation). */
static inline double quat_dist(const double a[4], const double b[4]) {
  double dp = 0.0, dm = 0.0;
  for (int i = 0; i < 4; ++i) {
    dp = fmax(dp, fabs(a[i] - b[i]));
    dm = fmax(dm, fabs(a[i] + b[i]));
  }
  return fmin(dp, dm);
}
/* The cross-product matrix [a]x, written out independently of grit_m3_skew. */
static inline void crossmat(double M[9], const double a[3]) {
  const double m[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
  for (int i = 0; i < 9; ++i) M[i] = m[i];
}
/* y = A x for a row-major n x n matrix. */
static inline void matvec(double *y, const double *A, const double *x, int n) {
  for (int i = 0; i < n; ++i) {
    y[i] = 0.0;
    for (int j = 0; j < n; ++j) y[i] += A[n * i + j] * x[j];
  }
}

#endif /* GRIT_MATH_TEST_UTIL_H */
