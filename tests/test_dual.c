/* SPDX-License-Identifier: Apache-2.0 */
/* test_dual.c — every operation of grit/dual.h against finite differences, with all 8 partials seeded
 * at once, plus identities and the documented behaviour at non-smooth points.
 *
 * How the finite differences are made accurate enough to test to 1e-8 relative:
 *   - 4th-order central differences along each seed direction d:
 *       g'(0) ~ [8 (g(h) - g(-h)) - (g(2h) - g(-2h))] / (12 h),   g(t) = f(x + t d),
 *     whose truncation error is h^4 |g^(5)| / 30.
 *   - h is a power of two near 1e-3 * l, where l is the length over which the function changes (given by
 *     each sampler: 1 for sin, |x| for log, the distance to the pole for tan, ...). For every function
 *     here |g^(5)| <~ 120 |g'| / l^4, so the truncation error is <~ 4e-12 relative: far below 1e-8.
 *   - the point x is rounded to a multiple of h/1024 and the directions are multiples of 1/1024, so the
 *     stencil points x + k h d are exact: the inputs carry no rounding error.
 *   - what remains is the rounding of the evaluations of f, at most 2 eps M each (M: the magnitude of
 *     f's terms on the stencil; libm results are within 1 ulp of the exact value), which the stencil
 *     turns into an absolute error of at most 1.5 * 2 eps M / h, added to the tolerance (~1e-12 M).
 * So each partial must satisfy |dual - fd| <= 1e-8 |fd| + 3 eps M / h. */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/dual.h"
#include "math_test_util.h"

/* grit is built with 8 partials; these tests check all of them. */
_Static_assert(GRIT_DUAL_N == 8, "the library and its tests use GRIT_DUAL_N == 8");

static const double PI = TEST_PI;
static const double EPS = TEST_EPS;
static const double REL_TOL = 1e-8;
enum { NPOINTS = 500 };

/* ------------------------------------------------------------------ operations under test */

/* f: the double expression the dual operation must reproduce (the GS_* macro of scalar_double.h);
 * fx: the dual operation; sample: draws a point of the domain and returns its length scale l;
 * mag: the magnitude of f's terms, for the rounding error of f (NULL: |f|). */
typedef struct op {
  const char *name;
  int n;
  double (*f)(const double *x);
  grit_dual (*fx)(const grit_dual *x);
  double (*sample)(rng *r, double *x);
  double (*mag)(const double *x);
} op;

#define DEFINE_OP(NAME, FEXPR, FXEXPR)                                                                              \
  static double f_##NAME(const double *x) { return FEXPR; }                                                    \
  static grit_dual x_##NAME(const grit_dual *x) { return FXEXPR; }
DEFINE_OP(neg, -x[0], grit_dual_neg(x[0]))
DEFINE_OP(addc, x[0] + 0.37, grit_dual_addc(x[0], 0.37))
DEFINE_OP(scale, x[0] * -2.3, grit_dual_scale(x[0], -2.3))
DEFINE_OP(sqrt, sqrt(x[0]), grit_dual_sqrt(x[0]))
DEFINE_OP(sin, sin(x[0]), grit_dual_sin(x[0]))
DEFINE_OP(cos, cos(x[0]), grit_dual_cos(x[0]))
DEFINE_OP(tan, tan(x[0]), grit_dual_tan(x[0]))
DEFINE_OP(exp, exp(x[0]), grit_dual_exp(x[0]))
DEFINE_OP(log, log(x[0]), grit_dual_log(x[0]))
DEFINE_OP(pow_m15, pow(x[0], -1.5), grit_dual_pow(x[0], -1.5))
DEFINE_OP(pow_05, pow(x[0], 0.5), grit_dual_pow(x[0], 0.5))
DEFINE_OP(pow_37, pow(x[0], 3.7), grit_dual_pow(x[0], 3.7))
DEFINE_OP(pow_3, pow(x[0], 3.0), grit_dual_pow(x[0], 3.0))
DEFINE_OP(fabs, fabs(x[0]), grit_dual_fabs(x[0]))
/* chain as the user would write a unary function: sin with its derivative cos */
DEFINE_OP(chain, sin(x[0]), grit_dual_chain(sin(x[0].v), cos(x[0].v), x[0]))
DEFINE_OP(add, x[0] + x[1], grit_dual_add(x[0], x[1]))
DEFINE_OP(sub, x[0] - x[1], grit_dual_sub(x[0], x[1]))
DEFINE_OP(mul, x[0] * x[1], grit_dual_mul(x[0], x[1]))
DEFINE_OP(div, x[0] / x[1], grit_dual_div(x[0], x[1]))
DEFINE_OP(fma, x[0] * x[1] + x[2], grit_dual_fma(x[0], x[1], x[2]))
DEFINE_OP(powd, pow(x[0], x[1]), grit_dual_powd(x[0], x[1]))
DEFINE_OP(atan2, atan2(x[0], x[1]), grit_dual_atan2(x[0], x[1]))
DEFINE_OP(fmin, fmin(x[0], x[1]), grit_dual_fmin(x[0], x[1]))
DEFINE_OP(fmax, fmax(x[0], x[1]), grit_dual_fmax(x[0], x[1]))
#undef DEFINE_OP

static double mag_fma(const double *x) { return fabs(x[0] * x[1]) + fabs(x[2]); }

/* Samplers: a point well inside the domain, at least 2h from any kink, pole or branch cut. */
static double s_wide1(rng *r, double *x) {
  x[0] = unif(r, -10.0, 10.0);
  return 1.0;
}
static double s_wide2(rng *r, double *x) {
  x[0] = unif(r, -10.0, 10.0);
  x[1] = unif(r, -10.0, 10.0);
  return 1.0;
}
static double s_wide3(rng *r, double *x) {
  for (int i = 0; i < 3; ++i) x[i] = unif(r, -10.0, 10.0);
  return 1.0;
}
static double s_exp(rng *r, double *x) {
  x[0] = unif(r, -20.0, 20.0);
  return 1.0;
}
static double s_positive(rng *r, double *x) { /* log, sqrt, pow: the scale is x itself */
  x[0] = logunif(r, 1e-3, 1e3);
  return x[0];
}
static double s_tan(rng *r, double *x) { /* 0.07 or more from the poles at +-pi/2 */
  x[0] = unif(r, -1.5, 1.5);
  return fmin(1.0, PI / 2 - fabs(x[0]));
}
static double s_fabs(rng *r, double *x) { /* |x| >= 1e-2 > 2h: the stencil stays on one side of 0 */
  x[0] = rand_sign(r) * logunif(r, 1e-2, 10.0);
  return fmin(1.0, fabs(x[0]));
}
static double s_div(rng *r, double *x) {
  x[0] = unif(r, -10.0, 10.0);
  x[1] = rand_sign(r) * logunif(r, 0.1, 10.0);
  return fabs(x[1]);
}
static double s_powd(rng *r, double *x) { /* l = 1 / (rate of change of b log a) */
  x[0] = logunif(r, 0.1, 10.0);
  x[1] = unif(r, -3.0, 3.0);
  return 1.0 / (1.0 + fabs(x[1]) / x[0] + fabs(log(x[0])));
}
static double s_minmax(rng *r, double *x) { /* |a - b| >= 0.01 > 4h: no switch inside the stencil */
  do {
    x[0] = unif(r, -10.0, 10.0);
    x[1] = unif(r, -10.0, 10.0);
  } while (fabs(x[0] - x[1]) < 0.01);
  return 1.0;
}
/* atan2(y, x) with (y, x) in quadrant q (counted from 0 counterclockwise), 0.01 rad from the axes so
 * that the stencil never crosses the branch cut on the negative x axis. */
static double s_atan2_quadrant(rng *r, double *x, int q) {
  const double rho = logunif(r, 0.1, 10.0), a = q * PI / 2 + unif(r, 0.01, PI / 2 - 0.01);
  x[0] = rho * sin(a);
  x[1] = rho * cos(a);
  return rho;
}
static double s_atan2_q0(rng *r, double *x) { return s_atan2_quadrant(r, x, 0); }
static double s_atan2_q1(rng *r, double *x) { return s_atan2_quadrant(r, x, 1); }
static double s_atan2_q2(rng *r, double *x) { return s_atan2_quadrant(r, x, 2); }
static double s_atan2_q3(rng *r, double *x) { return s_atan2_quadrant(r, x, 3); }

/* ----------------------------------------------------------------------------- the check */

/* g(t) = f(x + t d); the stencil points are exact (see the top of the file). */
static double eval_along(const op *o, const double *x, const double *d, double t, double *mag) {
  double y[3];
  for (int j = 0; j < o->n; ++j) y[j] = x[j] + t * d[j];
  const double v = o->f(y);
  const double m = o->mag ? o->mag(y) : fabs(v);
  if (m > *mag) *mag = m;
  return v;
}

/* Checks the value and all 8 partials of o at one point x, whose arguments are seeded with random
 * directions (argument `constant_arg`, if >= 0, is left a constant: all its partials zero). */
static void check_point(const op *o, rng *r, double *x, double ell, int constant_arg) {
  const double h = ldexp(1.0, (int)floor(log2(1e-3 * ell))), grid = h / 1024.0;
  grit_dual X[3];
  /* the value equals the double expression bit for bit, first at the raw point (full-length mantissas:
   * rounding differences, e.g. a fused multiply-add, would show; on the grid below products are exact) */
  for (int j = 0; j < o->n; ++j) X[j] = grit_dual_const(x[j]);
  const double raw = o->f(x), raw_dual = o->fx(X).v;
  cr_assert(raw_dual == raw, "%s(%.17g, ...): value %.17g, double %.17g", o->name, x[0], raw_dual, raw);
  for (int j = 0; j < o->n; ++j) {
    x[j] = nearbyint(x[j] / grid) * grid;
    X[j] = grit_dual_const(x[j]);
    if (j != constant_arg)
      for (int k = 0; k < GRIT_DUAL_N; ++k) X[j].d[k] = rand_grid_unit(r);
  }
  const grit_dual Y = o->fx(X);
  const double f0 = o->f(x);
  cr_assert(Y.v == f0 || (isnan(Y.v) && isnan(f0)), "%s(%.17g, ...): value %.17g, double %.17g", o->name, x[0],
            Y.v, f0);
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    double d[3], M = 0.0;
    for (int j = 0; j < o->n; ++j) d[j] = X[j].d[k];
    const double gp1 = eval_along(o, x, d, h, &M), gm1 = eval_along(o, x, d, -h, &M);
    const double gp2 = eval_along(o, x, d, 2 * h, &M), gm2 = eval_along(o, x, d, -2 * h, &M);
    const double fd = (8.0 * (gp1 - gm1) - (gp2 - gm2)) / (12.0 * h);
    const double tol = REL_TOL * fabs(fd) + 3.0 * EPS * M / h;
    cr_assert(fabs(Y.d[k] - fd) <= tol,
              "%s at (%.17g, %.17g, %.17g), direction %d: dual %.17g, finite difference %.17g, |diff| %.3g > %.3g",
              o->name, x[0], o->n > 1 ? x[1] : 0.0, o->n > 2 ? x[2] : 0.0, k, Y.d[k], fd, fabs(Y.d[k] - fd), tol);
  }
}

/* NPOINTS random points; for operations of several arguments every third point keeps one argument
 * constant, which exercises the mixed dual-constant paths. */
static void check_op(const op *o, uint64_t seed) {
  rng r = {seed};
  for (int p = 0; p < NPOINTS; ++p) {
    double x[3] = {0.0, 0.0, 0.0};
    const double ell = o->sample(&r, x);
    const int constant_arg = (o->n > 1 && p % 3 == 2) ? (int)(rng_next(&r) % (uint64_t)o->n) : -1;
    check_point(o, &r, x, ell, constant_arg);
  }
}

#define OP(NAME, N, SAMPLER, MAG) {#NAME, N, f_##NAME, x_##NAME, SAMPLER, MAG}

/* ---------------------------------------------------------- constants, seeds and chain rule */

Test(dual, const_has_value_and_zero_partials) {
  const grit_dual c = grit_dual_const(-2.5);
  cr_assert(c.v == -2.5);
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(c.d[k] == 0.0, "partial %d = %g", k, c.d[k]);
  /* A function of constants only is a constant (its finite difference is exactly 0). */
  const grit_dual e = grit_dual_sin(grit_dual_mul(c, grit_dual_exp(c)));
  cr_assert(e.v == sin(-2.5 * exp(-2.5)));
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(e.d[k] == 0.0, "partial %d = %g", k, e.d[k]);
}

/* Seeding two variables in two slots gives the two partial derivatives there and zeros elsewhere,
 * for every pair of slots; checked against finite differences of atan2(y, x) * y. */
Test(dual, var_seeds_one_slot) {
  const double y = 0.7, x = -1.3, h = 0x1.0p-10;
#define F(Y, X) (atan2((Y), (X)) * (Y))
  const double dfy = (8 * (F(y + h, x) - F(y - h, x)) - (F(y + 2 * h, x) - F(y - 2 * h, x))) / (12 * h);
  const double dfx = (8 * (F(y, x + h) - F(y, x - h)) - (F(y, x + 2 * h) - F(y, x - 2 * h))) / (12 * h);
#undef F
  for (int ky = 0; ky < GRIT_DUAL_N; ++ky)
    for (int kx = 0; kx < GRIT_DUAL_N; ++kx) {
      if (kx == ky) continue;
      const grit_dual Y = grit_dual_var(y, ky), X = grit_dual_var(x, kx);
      cr_assert(Y.v == y && Y.d[ky] == 1.0);
      const grit_dual r = grit_dual_mul(grit_dual_atan2(Y, X), Y);
      for (int k = 0; k < GRIT_DUAL_N; ++k) {
        const double want = k == ky ? dfy : (k == kx ? dfx : 0.0);
        /* the same 4th-order stencil as check_point, h = 2^-10 on an O(1) function: error <~ 1e-12 */
        cr_assert(fabs(r.d[k] - want) <= REL_TOL * fabs(want) + 1e-12, "slots (%d, %d), partial %d: %.17g vs %.17g",
                  ky, kx, k, r.d[k], want);
      }
    }
  /* An index outside 0..N-1 seeds nothing (a constant). */
  const grit_dual c = grit_dual_var(3.0, GRIT_DUAL_N);
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(c.d[k] == 0.0);
}

Test(dual, chain_is_the_chain_rule) {
  const op o = OP(chain, 1, s_wide1, NULL);
  check_op(&o, 101);
}

/* ------------------------------------------------------------------------------ arithmetic */

Test(dual, add) {
  const op o = OP(add, 2, s_wide2, NULL);
  check_op(&o, 1);
}
Test(dual, sub) {
  const op o = OP(sub, 2, s_wide2, NULL);
  check_op(&o, 2);
}
Test(dual, neg) {
  const op o = OP(neg, 1, s_wide1, NULL);
  check_op(&o, 3);
}
Test(dual, mul) {
  const op o = OP(mul, 2, s_wide2, NULL);
  check_op(&o, 4);
}
Test(dual, div) {
  const op o = OP(div, 2, s_div, NULL);
  check_op(&o, 5);
}
Test(dual, addc) {
  const op o = OP(addc, 1, s_wide1, NULL);
  check_op(&o, 6);
}
Test(dual, scale) {
  const op o = OP(scale, 1, s_wide1, NULL);
  check_op(&o, 7);
}
Test(dual, fma) {
  const op o = OP(fma, 3, s_wide3, mag_fma);
  check_op(&o, 8);
}

/* ------------------------------------------------------------------------ elementary functions */

Test(dual, sqrt) {
  const op o = OP(sqrt, 1, s_positive, NULL);
  check_op(&o, 9);
}
Test(dual, sin) {
  const op o = OP(sin, 1, s_wide1, NULL);
  check_op(&o, 10);
}
Test(dual, cos) {
  const op o = OP(cos, 1, s_wide1, NULL);
  check_op(&o, 11);
}
Test(dual, tan) {
  const op o = OP(tan, 1, s_tan, NULL);
  check_op(&o, 12);
}
Test(dual, exp) {
  const op o = OP(exp, 1, s_exp, NULL);
  check_op(&o, 13);
}
Test(dual, log) {
  const op o = OP(log, 1, s_positive, NULL);
  check_op(&o, 14);
}
Test(dual, pow_constant_exponent) {
  const op ops[] = {OP(pow_m15, 1, s_positive, NULL), OP(pow_05, 1, s_positive, NULL),
                    OP(pow_37, 1, s_positive, NULL), OP(pow_3, 1, s_wide1, NULL) /* negative bases too */};
  for (int i = 0; i < 4; ++i) check_op(&ops[i], 15 + (uint64_t)i);
}
Test(dual, powd) {
  const op o = OP(powd, 2, s_powd, NULL);
  check_op(&o, 19);
}
Test(dual, atan2_all_four_quadrants) {
  double (*samplers[4])(rng *, double *) = {s_atan2_q0, s_atan2_q1, s_atan2_q2, s_atan2_q3};
  for (int q = 0; q < 4; ++q) {
    const op o = {"atan2", 2, f_atan2, x_atan2, samplers[q], NULL};
    check_op(&o, 20 + (uint64_t)q);
    /* the sampler really is in quadrant q: atan2's value lies in its quarter of (-pi, pi] */
    rng r = {77};
    double x[2];
    s_atan2_quadrant(&r, x, q);
    const double a = atan2(x[0], x[1]), lo = q < 2 ? q * PI / 2 : (q - 4) * PI / 2;
    cr_assert(a > lo && a < lo + PI / 2, "quadrant %d: angle %g", q, a);
  }
}
Test(dual, fabs) {
  const op o = OP(fabs, 1, s_fabs, NULL);
  check_op(&o, 24);
}
Test(dual, fmin) {
  const op o = OP(fmin, 2, s_minmax, NULL);
  check_op(&o, 25);
}
Test(dual, fmax) {
  const op o = OP(fmax, 2, s_minmax, NULL);
  check_op(&o, 26);
}

/* -------------------------------------------------------------------------------- identities */
/* Each identity holds exactly in real arithmetic; the tolerances count the roundings (each <= eps/2
 * relative, libm <= 1 ulp) of the two sides, with a factor of about 2 to spare. */

/* Random seeds for one variable: value x, partials in [-1, 1]. */
static grit_dual seeded(rng *r, double x) {
  grit_dual a = grit_dual_const(x);
  for (int k = 0; k < GRIT_DUAL_N; ++k) a.d[k] = unif(r, -1.0, 1.0);
  return a;
}

Test(dual, identity_sin2_plus_cos2) {
  rng r = {31};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual t = seeded(&r, unif(&r, -10.0, 10.0)), s = grit_dual_sin(t), c = grit_dual_cos(t);
    const grit_dual one = grit_dual_add(grit_dual_mul(s, s), grit_dual_mul(c, c));
    /* sin, cos within 1 ulp, two squares and a sum: <= 3 eps; partials 2 s (c d) - 2 c (s d): the two
     * products of the same three numbers differ by <= 2 ulps of |s c d| <= |d| / 2 */
    cr_assert(fabs(one.v - 1.0) <= 4 * EPS, "t = %.17g: sin^2 + cos^2 - 1 = %g", t.v, one.v - 1.0);
    for (int k = 0; k < GRIT_DUAL_N; ++k)
      cr_assert(fabs(one.d[k]) <= 4 * EPS * fabs(t.d[k]), "t = %.17g: partial %d = %g", t.v, k, one.d[k]);
  }
}

Test(dual, identity_exp_log) {
  rng r = {32};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual x = seeded(&r, logunif(&r, 1e-3, 1e3)), y = grit_dual_exp(grit_dual_log(x));
    /* log's rounding (<= eps |log x|) becomes a relative error of exp; plus exp's own ulp */
    const double tol = (fabs(log(x.v)) + 2.0) * EPS;
    cr_assert(fabs(y.v - x.v) <= tol * x.v, "x = %.17g: exp(log x) = %.17g", x.v, y.v);
    for (int k = 0; k < GRIT_DUAL_N; ++k)
      cr_assert(fabs(y.d[k] - x.d[k]) <= (tol + 2 * EPS) * fabs(x.d[k]), "x = %.17g: partial %d: %.17g vs %.17g",
                x.v, k, y.d[k], x.d[k]);
  }
}

Test(dual, identity_sqrt_squared) {
  rng r = {33};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual x = seeded(&r, logunif(&r, 1e-6, 1e6)), s = grit_dual_sqrt(x), y = grit_dual_mul(s, s);
    /* value: sqrt correctly rounded, one product: <= 1.5 eps. partials: 0.5 / s, times d, then
     * (d' s + s d'): four roundings <= 2 eps, and the 1.5 eps of s^2 = x */
    cr_assert(fabs(y.v - x.v) <= 1.5 * EPS * x.v, "x = %.17g: sqrt(x)^2 = %.17g", x.v, y.v);
    for (int k = 0; k < GRIT_DUAL_N; ++k)
      cr_assert(fabs(y.d[k] - x.d[k]) <= 4 * EPS * fabs(x.d[k]), "x = %.17g: partial %d: %.17g vs %.17g", x.v, k,
                y.d[k], x.d[k]);
  }
}

Test(dual, identity_atan2_of_sin_cos) {
  rng r = {34};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual t = seeded(&r, unif(&r, -PI + 1e-6, PI - 1e-6));
    const grit_dual a = grit_dual_atan2(grit_dual_sin(t), grit_dual_cos(t));
    /* sin, cos and atan2 each within 1 ulp; the angle's ulp is at most eps * pi */
    cr_assert(fabs(a.v - t.v) <= 4 * EPS * fmax(1.0, fabs(t.v)), "t = %.17g: atan2 = %.17g", t.v, a.v);
    /* partials: (c (c d) + s (s d)) / (c^2 + s^2): about 8 roundings of O(1) numbers */
    for (int k = 0; k < GRIT_DUAL_N; ++k)
      cr_assert(fabs(a.d[k] - t.d[k]) <= 8 * EPS * fabs(t.d[k]), "t = %.17g: partial %d: %.17g vs %.17g", t.v, k,
                a.d[k], t.d[k]);
  }
}

Test(dual, identity_pow2_is_square) {
  rng r = {35};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual x = seeded(&r, unif(&r, -100.0, 100.0));
    const grit_dual a = grit_dual_pow(x, 2.0), b = grit_dual_mul(x, x);
    /* glibc's pow and x * x are both correctly rounded (pow to within 1 ulp): at most 1 ulp apart;
     * partials 2 x d against (d x + x d): equal up to one rounding */
    cr_assert(fabs(a.v - b.v) <= EPS * b.v, "x = %.17g: pow %.17g, x*x %.17g", x.v, a.v, b.v);
    for (int k = 0; k < GRIT_DUAL_N; ++k)
      cr_assert(fabs(a.d[k] - b.d[k]) <= EPS * fabs(b.d[k]), "x = %.17g: partial %d: %.17g vs %.17g", x.v, k, a.d[k],
                b.d[k]);
  }
}

Test(dual, identity_division_times_divisor) {
  rng r = {36};
  for (int p = 0; p < 1000; ++p) {
    const grit_dual a = seeded(&r, unif(&r, -10.0, 10.0)), b = seeded(&r, rand_sign(&r) * logunif(&r, 0.1, 10.0));
    const grit_dual q = grit_dual_div(a, b), y = grit_dual_mul(q, b);
    cr_assert(fabs(y.v - a.v) <= 2 * EPS * fabs(a.v), "%.17g / %.17g * b = %.17g", a.v, b.v, y.v);
    for (int k = 0; k < GRIT_DUAL_N; ++k) {
      /* (a' - q b') / b * b + q b' = a': the terms of size |a'| and |q b'| cancel, each rounded a few
       * times (<= 3 eps relative) */
      const double tol = 3 * EPS * (fabs(a.d[k]) + 2 * fabs(q.v * b.d[k]));
      cr_assert(fabs(y.d[k] - a.d[k]) <= tol, "partial %d: %.17g vs %.17g", k, y.d[k], a.d[k]);
    }
  }
}

/* ------------------------------------------------------------------- non-smooth conventions */

/* A dual with value v and partials 1, -2, 3, -4, ... */
static grit_dual ramp(double v, double scale) {
  grit_dual a = grit_dual_const(v);
  for (int k = 0; k < GRIT_DUAL_N; ++k) a.d[k] = scale * (k % 2 ? -(k + 1.0) : (k + 1.0));
  return a;
}

Test(dual, fabs_at_zero_has_zero_partials) {
  const double zeros[2] = {0.0, -0.0};
  for (int i = 0; i < 2; ++i) {
    const grit_dual a = grit_dual_fabs(ramp(zeros[i], 1.0));
    cr_assert(a.v == 0.0 && !signbit(a.v));
    for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(a.d[k] == 0.0, "partial %d = %g", k, a.d[k]);
  }
  /* away from 0 the partials are sign(x) times the input's */
  const grit_dual n = grit_dual_fabs(ramp(-1e-300, 1.0)), p = grit_dual_fabs(ramp(1e-300, 1.0));
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    cr_assert(n.d[k] == -ramp(0, 1.0).d[k]);
    cr_assert(p.d[k] == ramp(0, 1.0).d[k]);
  }
}

Test(dual, fmin_fmax_at_ties_average_the_partials) {
  const grit_dual a = ramp(1.5, 1.0), b = ramp(1.5, -3.0);
  const grit_dual lo = grit_dual_fmin(a, b), hi = grit_dual_fmax(a, b);
  cr_assert(lo.v == 1.5 && hi.v == 1.5);
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    const double avg = 0.5 * (a.d[k] + b.d[k]); /* exact: small integers */
    cr_assert(lo.d[k] == avg && hi.d[k] == avg, "partial %d: min %g max %g, average %g", k, lo.d[k], hi.d[k], avg);
  }
  /* a NaN argument is ignored, as by C's fmin/fmax (the value must equal the double instantiation's) */
  const grit_dual nan = grit_dual_const(NAN);
  cr_assert(grit_dual_fmin(nan, a).v == fmin(NAN, 1.5) && grit_dual_fmin(nan, a).d[3] == a.d[3]);
  cr_assert(grit_dual_fmax(a, nan).v == fmax(1.5, NAN) && grit_dual_fmax(a, nan).d[3] == a.d[3]);
}

Test(dual, sqrt_at_zero) {
  /* zero partials stay zero (the norm of a zero vector is smooth along zero directions) */
  const grit_dual z = grit_dual_sqrt(grit_dual_const(0.0));
  cr_assert(z.v == 0.0);
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(z.d[k] == 0.0, "partial %d = %g", k, z.d[k]);
  /* |v| of v = 0 seeded in any direction: 0 partials through d(v.v) = 2 v dv = 0 */
  const grit_dual v = ramp(0.0, 1.0), n = grit_dual_sqrt(grit_dual_mul(v, v));
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(n.d[k] == 0.0);
  /* nonzero partials: the infinite slope, with the partial's sign */
  const grit_dual s = grit_dual_sqrt(ramp(0.0, 1.0));
  for (int k = 0; k < GRIT_DUAL_N; ++k)
    cr_assert(isinf(s.d[k]) && (s.d[k] > 0) == (ramp(0.0, 1.0).d[k] > 0), "partial %d = %g", k, s.d[k]);
}

Test(dual, pow_at_zero) {
  const grit_dual z = ramp(0.0, 1.0);
  const grit_dual p25 = grit_dual_pow(z, 2.5), p1 = grit_dual_pow(z, 1.0), p0 = grit_dual_pow(z, 0.0);
  const grit_dual ph = grit_dual_pow(z, 0.5);
  cr_assert(p25.v == 0.0 && p1.v == 0.0 && p0.v == 1.0 && ph.v == 0.0);
  for (int k = 0; k < GRIT_DUAL_N; ++k) {
    cr_assert(p25.d[k] == 0.0, "p = 2.5: partial %d = %g (the limit is 0)", k, p25.d[k]);
    cr_assert(p1.d[k] == z.d[k], "p = 1: partial %d = %g", k, p1.d[k]);
    cr_assert(p0.d[k] == 0.0, "p = 0: partial %d = %g (x^0 is constant)", k, p0.d[k]);
    cr_assert(isinf(ph.d[k]), "p = 0.5: partial %d = %g (infinite slope)", k, ph.d[k]);
  }
}

Test(dual, atan2_at_origin_has_zero_partials) {
  const grit_dual a = grit_dual_atan2(ramp(0.0, 1.0), ramp(0.0, -2.0));
  cr_assert(a.v == 0.0);
  for (int k = 0; k < GRIT_DUAL_N; ++k) cr_assert(a.d[k] == 0.0, "partial %d = %g", k, a.d[k]);
}
