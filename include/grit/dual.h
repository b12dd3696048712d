/* SPDX-License-Identifier: Apache-2.0 */
/* grit/dual.h — forward-mode dual numbers with a fixed chunk of partial derivatives.
 *
 * A dual number a = (v, d[0..N-1]) carries a value v and the directional derivatives d[i] of that value
 * along N seed directions. Arithmetic propagates the derivatives by the chain rule, so running a
 * computation on duals whose inputs are seeded with unit directions gives the value and N columns of its
 * Jacobian in one pass. grit evaluates the partials of its momentum residual this way, N columns per pass
 * ("chunk"); see docs/theory.md, Dual numbers, for why N = 8 (measured in bench/bench_dual_chunk.c).
 *
 * Values: the value part of every operation is computed by exactly the double expression of the
 * matching GS_* macro in grit/detail/scalar_double.h (a / b, a * b + c, libm calls), so the double and
 * dual instantiations of scalar-generic code compute bit-identical values and take the same branches.
 *
 * Non-smooth points (documented choices, all one-sided or averaged derivatives):
 *   fabs(x) at x == 0:        partials 0 (the midpoint of the subdifferential [-1, 1]).
 *   fmin/fmax(a, b) at a == b: the average of the partials of a and b. A NaN argument is ignored, as
 *                             by C's fmin/fmax: the other argument is returned whole.
 *   sqrt(x) at x == 0:        a partial is 0 where the input's partial is 0, else +-infinity.
 *   pow(x, p) at x == 0:      follows the value: 0 partials for p > 1 and for p == 0; see grit_dual_pow.
 *   atan2(y, x) at (0, 0):    partials 0.
 * Functions are static inline and their loops over the partials are unrolled (GRIT_DUAL_FOR), so that
 * the compiler can keep dual numbers in registers. */
#ifndef GRIT_DUAL_H
#define GRIT_DUAL_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of partial derivatives carried by each dual number (the chunk size). The library is built
 * with 8, and every translation unit linked against it must see the same value: grit_dual is part of
 * internal and public interfaces, so do NOT define GRIT_DUAL_N yourself. The #ifndef exists only so
 * that bench/bench_dual_chunk.c can compile stand-alone kernels for other chunk sizes. */
#ifndef GRIT_DUAL_N
#define GRIT_DUAL_N 8
#endif

/* GRIT_DUAL_FOR(i) loops i over the partials, unrolled completely: without the pragma GCC -O2 keeps
 * these short loops as loops, and then cannot hold dual numbers in registers; with it a directional
 * derivative costs ~4x less at N = 8 (GCC 12 -O2, bench/bench_dual_chunk.c) and no more at -O3. */
#if defined(__clang__)
#define GRIT_DUAL_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define GRIT_DUAL_UNROLL _Pragma("GCC unroll 32")
#else
#define GRIT_DUAL_UNROLL
#endif
#define GRIT_DUAL_FOR(i) GRIT_DUAL_UNROLL for (int i = 0; i < GRIT_DUAL_N; ++i)

/* The partials two at a time in SSE2 registers (GCC and Clang on x86-64, where SSE2 is the baseline):
 * GCC 12 keeps the unrolled loops above scalar (mulsd, addsd), and the element-wise operations of a
 * pair of doubles are the same IEEE operations, so the results are bit for bit those of the scalar
 * loops (each lane's expression keeps its order; nothing is fused). The layout of grit_dual is
 * unchanged: the pairs are loaded and stored unaligned. GRIT_DUAL_NO_SIMD turns them off. */
#if defined(__GNUC__) && defined(__SSE2__) && GRIT_DUAL_N % 2 == 0 && !defined(GRIT_DUAL_NO_SIMD)
#define GRIT_DUAL_SIMD 1
/* Where AVX is on (a translation unit compiled for AVX2 under `#pragma GCC target`, whose functions
 * are called only on processors that have it: derivatives_avx2.c), four at a time in its registers: the
 * same element-wise operations, the same bits. */
#if defined(__AVX__) && GRIT_DUAL_N % 4 == 0
#define GRIT_DUAL_W_ 4
#else
#define GRIT_DUAL_W_ 2
#endif
typedef double grit_dual_pair_ __attribute__((vector_size(8 * GRIT_DUAL_W_)));
static inline grit_dual_pair_ grit_dual_ld_(const double *p) {
  grit_dual_pair_ x;
  __builtin_memcpy(&x, p, sizeof x);
  return x;
}
static inline void grit_dual_st_(double *p, grit_dual_pair_ x) { __builtin_memcpy(p, &x, sizeof x); }
static inline grit_dual_pair_ grit_dual_splat_(double x) {
#if GRIT_DUAL_W_ == 4
  const grit_dual_pair_ r = {x, x, x, x};
#else
  const grit_dual_pair_ r = {x, x};
#endif
  return r;
}
/* GRIT_DUAL_PAIRS(i) loops i over the partials two (or four) at a time */
#define GRIT_DUAL_PAIRS(i) GRIT_DUAL_UNROLL for (int i = 0; i < GRIT_DUAL_N; i += GRIT_DUAL_W_)
#else
#define GRIT_DUAL_SIMD 0
#endif

typedef struct grit_dual {
  double v;               /* value */
  double d[GRIT_DUAL_N];  /* partial derivatives along the N seed directions */
} grit_dual;

/* A constant: value c, all partials zero. */
static inline grit_dual grit_dual_const(double c) {
  grit_dual r;
  r.v = c;
#if GRIT_DUAL_SIMD
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, grit_dual_splat_(0.0));
#else
  GRIT_DUAL_FOR(i) r.d[i] = 0.0;
#endif
  return r;
}

/* A seeded variable: value x, partial 1 along direction k (0 <= k < N), zero elsewhere. */
static inline grit_dual grit_dual_var(double x, int k) {
  grit_dual r = grit_dual_const(x);
  if (k >= 0 && k < GRIT_DUAL_N) r.d[k] = 1.0;
  return r;
}

/* r = a scaled chain rule step: value f, partials df * a.d. The building block of unary functions. */
static inline grit_dual grit_dual_chain(double f, double df, grit_dual a) {
  grit_dual r;
  r.v = f;
#if GRIT_DUAL_SIMD
  const grit_dual_pair_ s = grit_dual_splat_(df);
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, s * grit_dual_ld_(a.d + i));
#else
  GRIT_DUAL_FOR(i) r.d[i] = df * a.d[i];
#endif
  return r;
}

static inline grit_dual grit_dual_add(grit_dual a, grit_dual b) {
  grit_dual r;
  r.v = a.v + b.v;
#if GRIT_DUAL_SIMD
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, grit_dual_ld_(a.d + i) + grit_dual_ld_(b.d + i));
#else
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] + b.d[i];
#endif
  return r;
}

static inline grit_dual grit_dual_sub(grit_dual a, grit_dual b) {
  grit_dual r;
  r.v = a.v - b.v;
#if GRIT_DUAL_SIMD
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, grit_dual_ld_(a.d + i) - grit_dual_ld_(b.d + i));
#else
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] - b.d[i];
#endif
  return r;
}

static inline grit_dual grit_dual_neg(grit_dual a) { return grit_dual_chain(-a.v, -1.0, a); }

static inline grit_dual grit_dual_mul(grit_dual a, grit_dual b) {
  grit_dual r;
  r.v = a.v * b.v;
#if GRIT_DUAL_SIMD
  const grit_dual_pair_ av = grit_dual_splat_(a.v), bv = grit_dual_splat_(b.v);
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, grit_dual_ld_(a.d + i) * bv + av * grit_dual_ld_(b.d + i));
#else
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] * b.v + a.v * b.d[i];
#endif
  return r;
}

static inline grit_dual grit_dual_div(grit_dual a, grit_dual b) {
  grit_dual r;
  const double inv = 1.0 / b.v;
  r.v = a.v / b.v; /* not a.v * inv: the value must equal the double quotient bit for bit */
#if GRIT_DUAL_SIMD
  const grit_dual_pair_ rv = grit_dual_splat_(r.v), iv = grit_dual_splat_(inv);
  GRIT_DUAL_PAIRS(i) grit_dual_st_(r.d + i, (grit_dual_ld_(a.d + i) - rv * grit_dual_ld_(b.d + i)) * iv);
#else
  GRIT_DUAL_FOR(i) r.d[i] = (a.d[i] - r.v * b.d[i]) * inv;
#endif
  return r;
}

/* a + c and a * c for a plain double c. */
static inline grit_dual grit_dual_addc(grit_dual a, double c) {
  a.v += c;
  return a;
}
static inline grit_dual grit_dual_scale(grit_dual a, double c) { return grit_dual_chain(a.v * c, c, a); }
/* a / c for a plain double c: the value is the double quotient; the partials grit_dual_div's for a
 * constant divisor (only the sign of a zero may differ). */
static inline grit_dual grit_dual_divc(grit_dual a, double c) { return grit_dual_chain(a.v / c, 1.0 / c, a); }

/* r = a*b + c, fused to save a temporary in inner products. */
static inline grit_dual grit_dual_fma(grit_dual a, grit_dual b, grit_dual c) {
  grit_dual r;
  r.v = a.v * b.v + c.v;
#if GRIT_DUAL_SIMD
  const grit_dual_pair_ av = grit_dual_splat_(a.v), bv = grit_dual_splat_(b.v);
  GRIT_DUAL_PAIRS(i)
  grit_dual_st_(r.d + i, grit_dual_ld_(a.d + i) * bv + av * grit_dual_ld_(b.d + i) + grit_dual_ld_(c.d + i));
#else
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] * b.v + a.v * b.d[i] + c.d[i];
#endif
  return r;
}

static inline grit_dual grit_dual_sqrt(grit_dual a) {
  grit_dual r;
  r.v = sqrt(a.v);
  const double h = 0.5 / r.v; /* infinite at a.v == 0 */
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] == 0.0 ? 0.0 : h * a.d[i];
  return r;
}

static inline grit_dual grit_dual_sin(grit_dual a) { return grit_dual_chain(sin(a.v), cos(a.v), a); }
static inline grit_dual grit_dual_cos(grit_dual a) { return grit_dual_chain(cos(a.v), -sin(a.v), a); }
static inline grit_dual grit_dual_tan(grit_dual a) {
  const double t = tan(a.v);
  return grit_dual_chain(t, 1.0 + t * t, a);
}
static inline grit_dual grit_dual_exp(grit_dual a) {
  const double e = exp(a.v);
  return grit_dual_chain(e, e, a);
}
static inline grit_dual grit_dual_log(grit_dual a) { return grit_dual_chain(log(a.v), 1.0 / a.v, a); }

/* a^p for a constant exponent p. At a == 0 the derivative p a^(p-1) is taken as 0 when p > 1 (it is
 * the limit) and when p == 0 (a^0 == 1 is constant), as 1 when p == 1, and left to IEEE arithmetic
 * (infinite) when p < 1. */
static inline grit_dual grit_dual_pow(grit_dual a, double p) {
  const double f = pow(a.v, p);
  double df;
  if (p == 0.0) df = 0.0; /* p * a^(p-1) would be 0 * inf = NaN at a == 0 */
  else if (a.v == 0.0) df = p > 1.0 ? 0.0 : (p == 1.0 ? 1.0 : p * pow(a.v, p - 1.0));
  else df = p * pow(a.v, p - 1.0);
  return grit_dual_chain(f, df, a);
}

/* a^b with both dual; requires a > 0 (defined through exp(b log a)). */
static inline grit_dual grit_dual_powd(grit_dual a, grit_dual b) {
  grit_dual r;
  r.v = pow(a.v, b.v);
  const double da = b.v * pow(a.v, b.v - 1.0), db = r.v * log(a.v);
  GRIT_DUAL_FOR(i) r.d[i] = da * a.d[i] + db * b.d[i];
  return r;
}

static inline grit_dual grit_dual_atan2(grit_dual y, grit_dual x) {
  grit_dual r;
  r.v = atan2(y.v, x.v);
  const double den = x.v * x.v + y.v * y.v;
  const double dy = den > 0.0 ? x.v / den : 0.0, dx = den > 0.0 ? -y.v / den : 0.0;
  GRIT_DUAL_FOR(i) r.d[i] = dy * y.d[i] + dx * x.d[i];
  return r;
}

static inline grit_dual grit_dual_fabs(grit_dual a) {
  const double s = a.v > 0.0 ? 1.0 : (a.v < 0.0 ? -1.0 : 0.0);
  return grit_dual_chain(fabs(a.v), s, a);
}

static inline grit_dual grit_dual_fmax(grit_dual a, grit_dual b) {
  if (isnan(b.v)) return a; /* C's fmax ignores a NaN argument; keep the value equal to it */
  if (isnan(a.v)) return b;
  if (a.v > b.v) return a;
  if (b.v > a.v) return b;
  grit_dual r;
  r.v = a.v;
  GRIT_DUAL_FOR(i) r.d[i] = 0.5 * (a.d[i] + b.d[i]);
  return r;
}

static inline grit_dual grit_dual_fmin(grit_dual a, grit_dual b) {
  if (isnan(b.v)) return a;
  if (isnan(a.v)) return b;
  if (a.v < b.v) return a;
  if (b.v < a.v) return b;
  grit_dual r;
  r.v = a.v;
  GRIT_DUAL_FOR(i) r.d[i] = 0.5 * (a.d[i] + b.d[i]);
  return r;
}

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DUAL_H */
