/* SPDX-License-Identifier: Apache-2.0 */
/* grit/detail/scalar_double.h — the scalar macros of grit's scalar-generic code, for double.
 *
 * Scalar-generic code (files named *_generic.h) is written once against these macros and included once
 * per scalar type: first after this header, then after scalar_dual.h, with scalar_undef.h in between.
 * GS_NAME(f) gives each instantiation its own names: f for double, f_dual for dual numbers. */
#define GS double
#define GS_IS_DUAL 0
#define GS_NAME(f) f
#define GS_C(c) ((double)(c))       /* a constant */
#define GS_V(a) (a)                 /* the value, as a double (for branches and comparisons) */
#define GS_ADD(a, b) ((a) + (b))
#define GS_SUB(a, b) ((a) - (b))
#define GS_MUL(a, b) ((a) * (b))
#define GS_DIV(a, b) ((a) / (b))
#define GS_NEG(a) (-(a))
#define GS_ADDC(a, c) ((a) + (c))   /* a + double */
#define GS_SCALE(a, c) ((a) * (c))  /* a * double */
#define GS_DIVC(a, c) ((a) / (c))   /* a / double */
#define GS_FMA(a, b, c) ((a) * (b) + (c))
#define GS_SQRT(a) sqrt(a)
#define GS_SIN(a) sin(a)
#define GS_COS(a) cos(a)
#define GS_TAN(a) tan(a)
#define GS_EXP(a) exp(a)
#define GS_LOG(a) log(a)
#define GS_POW(a, p) pow((a), (p))  /* constant exponent */
#define GS_ATAN2(y, x) atan2((y), (x))
#define GS_FABS(a) fabs(a)
#define GS_FMIN(a, b) fmin((a), (b))
#define GS_FMAX(a, b) fmax((a), (b))
