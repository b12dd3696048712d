/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 199309L
/* bench_dual_chunk — what one directional derivative costs by dual numbers, per chunk size N.
 *
 * The kernel is a representative piece of grit's scalar-generic code: the forward kinematics and
 * composite inertia of a 20-link serial chain (per link: a quaternion exponential, a quaternion
 * product, a rotation matrix, a transform of the link offset and centre of mass, a rotated inertia
 * R Ic R^T, a spatial inertia and its accumulation), then a spatial-inertia product S t and the scalar
 * 1/2 t.S t + sum of the tip position. Its inputs are the 20 joint angles.
 *
 * This one file is compiled several times (see bench/CMakeLists.txt):
 *   -DBENCH_KERNEL_DOUBLE                    the kernel for double:   bench_pass_double
 *   -DBENCH_KERNEL_DUAL -DGRIT_DUAL_N=k      the kernel for duals of k partials: bench_pass_n<k>
 *   (neither)                                the driver, main()
 * Every kernel lives in its own object, so each is called through the same non-inlined interface.
 * GRIT_DUAL_N may be overridden only here: the library itself is built with 8 (see grit/dual.h).
 *
 * Prints, for N = 1, 2, 4, 8, 16, 32: ns per pass (value + N directional derivatives), ns per
 * direction, that per-direction cost as a multiple of one double evaluation, and the cost of all 20
 * partials (ceil(20 / N) passes) in double evaluations. Times are medians over repeats. */
#include <math.h>

#define NLINK 20

/* ------------------------------------------------------------------------------- the kernel */
#if defined(BENCH_KERNEL_DOUBLE) || defined(BENCH_KERNEL_DUAL)

#ifdef BENCH_KERNEL_DUAL
#include "grit/math_dual.h"
#include "grit/detail/scalar_dual.h"
#else
#include "grit/math.h"
#include "grit/detail/scalar_double.h"
#endif

/* Link constants, cheap deterministic functions of the link index (no libm calls: the double kernel's
 * time must be the kernel's, not the set-up's). The axes are exact unit vectors. */
static const double AXES[6][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.6, 0.8, 0}, {0, 0.6, 0.8}, {0.8, 0, 0.6}};
static void link_constants(int i, double axis[3], double off[3], double com[3], double *mass, double Ic[9]) {
  for (int k = 0; k < 3; ++k) axis[k] = AXES[i % 6][k];
  off[0] = 0.1;
  off[1] = 0.002 * i;
  off[2] = 0.25;
  com[0] = 0.05;
  com[1] = 0.001 * i;
  com[2] = 0.12;
  *mass = 1.0 + 0.1 * i;
  for (int k = 0; k < 9; ++k) Ic[k] = 0.0;
  Ic[0] = 0.02 + 0.001 * i;
  Ic[4] = 0.03;
  Ic[8] = 0.01;
  Ic[1] = Ic[3] = 0.001;
}

static GS GS_NAME(chain_kernel)(const GS angle[NLINK]) {
  GS q[4], p[3], R[9], t[3], Iw[9], c[3];
  GS_NAME(grit_sinertia) S, body;
  GS_NAME(grit_quat_identity)(q);
  GS_NAME(grit_v3_zero)(p);
  S.m = GS_C(0.0);
  GS_NAME(grit_v3_zero)(S.h);
  for (int k = 0; k < 9; ++k) S.I[k] = GS_C(0.0);
  for (int i = 0; i < NLINK; ++i) {
    double axis[3], off[3], com[3], mass, Ic[9];
    link_constants(i, axis, off, com, &mass, Ic);
    GS th[3], dq[4], offs[3], coms[3], Ics[9];
    for (int k = 0; k < 3; ++k) {
      th[k] = GS_SCALE(angle[i], axis[k]);
      offs[k] = GS_C(off[k]);
      coms[k] = GS_C(com[k]);
    }
    for (int k = 0; k < 9; ++k) Ics[k] = GS_C(Ic[k]);
    GS_NAME(grit_quat_exp)(dq, th);
    GS_NAME(grit_quat_mul)(q, q, dq);
    GS_NAME(grit_quat_to_mat)(R, q);
    GS_NAME(grit_tf_apply)(c, p, R, coms); /* centre of mass in the world */
    GS_NAME(grit_m3_mulv)(t, R, offs);     /* next joint */
    GS_NAME(grit_v3_add)(p, p, t);
    GS_NAME(grit_m3_mul)(Iw, R, Ics);
    GS_NAME(grit_m3_mult)(Iw, Iw, R);
    GS_NAME(grit_si_from_body)(&body, GS_C(mass), c, Iw);
    GS_NAME(grit_si_add)(&S, &S, &body);
  }
  GS tw[6], f[6];
  for (int k = 0; k < 6; ++k) tw[k] = GS_C(0.3 * k - 0.7);
  GS_NAME(grit_si_apply)(f, &S, tw);
  return GS_ADD(GS_SCALE(GS_NAME(grit_sv_dot)(tw, f), 0.5), GS_ADD(GS_ADD(p[0], p[1]), p[2]));
}

#include "grit/detail/scalar_undef.h"

#ifdef BENCH_KERNEL_DUAL
#define BENCH_PASTE2(a, b) a##b
#define BENCH_PASTE(a, b) BENCH_PASTE2(a, b)
#define BENCH_PASS BENCH_PASTE(bench_pass_n, GRIT_DUAL_N)
/* The value and the derivatives along GRIT_DUAL_N directions: seed[k * NLINK + i] is component i of
 * direction k. */
void BENCH_PASS(const double *angle, const double *seed, double *value, double *deriv);
void BENCH_PASS(const double *angle, const double *seed, double *value, double *deriv) {
  grit_dual a[NLINK];
  for (int i = 0; i < NLINK; ++i) {
    a[i] = grit_dual_const(angle[i]);
    for (int k = 0; k < GRIT_DUAL_N; ++k) a[i].d[k] = seed[k * NLINK + i];
  }
  const grit_dual r = chain_kernel_dual(a);
  *value = r.v;
  for (int k = 0; k < GRIT_DUAL_N; ++k) deriv[k] = r.d[k];
}
#else
double bench_pass_double(const double *angle);
double bench_pass_double(const double *angle) { return chain_kernel(angle); }
#endif

/* ------------------------------------------------------------------------------- the driver */
#else

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*pass_fn)(const double *, const double *, double *, double *);
double bench_pass_double(const double *angle);
void bench_pass_n1(const double *, const double *, double *, double *);
void bench_pass_n2(const double *, const double *, double *, double *);
void bench_pass_n4(const double *, const double *, double *, double *);
void bench_pass_n8(const double *, const double *, double *, double *);
void bench_pass_n16(const double *, const double *, double *, double *);
void bench_pass_n32(const double *, const double *, double *, double *);

enum { NCHUNK = 6, MAXN = 32, REPEATS = 31 };
static const int CHUNK[NCHUNK] = {1, 2, 4, 8, 16, 32};
static const pass_fn PASS[NCHUNK] = {bench_pass_n1, bench_pass_n2, bench_pass_n4,
                                     bench_pass_n8, bench_pass_n16, bench_pass_n32};

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
typedef struct timing {
  double median, min; /* ns per call over the repeats; min shows how much other load disturbed the median */
} timing;
static timing summarize(double *t, int n) {
  qsort(t, (size_t)n, sizeof t[0], cmp);
  return (timing){t[n / 2], t[0]};
}

static volatile double sink; /* keeps the results alive */

/* Time per call over REPEATS repeats of `iters` calls each; chunk < 0 times the double kernel. */
static timing time_per_call(int chunk, long iters, const double *angle0, const double *seed) {
  double t[REPEATS], angle[NLINK], value, deriv[MAXN];
  for (int i = 0; i < NLINK; ++i) angle[i] = angle0[i];
  for (int r = 0; r < REPEATS; ++r) {
    double acc = 0.0;
    const double t0 = now_ns();
    for (long it = 0; it < iters; ++it) {
      angle[it % NLINK] += 1e-12; /* a different input each call */
      if (chunk < 0) {
        acc += bench_pass_double(angle);
      } else {
        PASS[chunk](angle, seed, &value, deriv);
        acc += value + deriv[0];
      }
    }
    t[r] = (now_ns() - t0) / (double)iters;
    sink = acc;
  }
  return summarize(t, REPEATS);
}

int main(void) {
  double angle[NLINK], seed[MAXN * NLINK];
  unsigned long long s = 12345;
  for (int i = 0; i < NLINK; ++i) angle[i] = 0.1 * i - 0.8;
  for (int i = 0; i < MAXN * NLINK; ++i) { /* xorshift64*: directions with components in [-1, 1) */
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    seed[i] = (double)((s * 2685821657736338717ULL) >> 11) / 4503599627370496.0 - 1.0;
  }

  /* Sanity: every chunk size gives the same derivatives along the shared directions, and direction 0
   * agrees with a central difference of the double kernel. */
  double ref[MAXN], value, worst = 0.0;
  PASS[NCHUNK - 1](angle, seed, &value, ref);
  for (int c = 0; c < NCHUNK; ++c) {
    double d[MAXN];
    PASS[c](angle, seed, &value, d);
    for (int k = 0; k < CHUNK[c]; ++k) worst = fmax(worst, fabs(d[k] - ref[k]) / (fabs(ref[k]) + 1e-300));
  }
  const double h = 1e-5;
  double ap[NLINK], am[NLINK];
  for (int i = 0; i < NLINK; ++i) {
    ap[i] = angle[i] + h * seed[i];
    am[i] = angle[i] - h * seed[i];
  }
  const double fd = (bench_pass_double(ap) - bench_pass_double(am)) / (2 * h);
  printf("kernel: 20-link chain (quat exp/mul, rotation matrices, transforms, R Ic R^T, spatial inertias) + S t\n");
  printf("check: chunk sizes agree to %.1e relative; direction 0: dual %.12g, central difference %.12g\n\n", worst,
         ref[0], fd);

  const long iters_double = 100000, iters_pass = 20000;
  const timing d = time_per_call(-1, iters_double, angle, seed);
  const double td = d.median;
  printf("double evaluation: %.1f ns (min %.1f); medians of %d repeats below, (min) in parentheses\n\n", td, d.min,
         REPEATS);
  printf("%4s %22s %16s %20s %22s\n", "N", "ns per pass (min)", "ns per direction", "direction / double",
         "20 partials / double");
  for (int c = 0; c < NCHUNK; ++c) {
    const int n = CHUNK[c];
    const timing p = time_per_call(c, iters_pass / n + 100, angle, seed);
    const double tp = p.median;
    const int passes = (NLINK + n - 1) / n;
    printf("%4d %12.1f (%7.1f) %16.1f %20.2f %22.1f\n", n, tp, p.min, tp / n, tp / n / td, passes * tp / td);
  }
  return 0;
}

#endif
