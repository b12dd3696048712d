/* SPDX-License-Identifier: Apache-2.0 */
/* grit/detail/scalar_dual.h — the scalar macros of grit's scalar-generic code, for grit_dual.
 * See scalar_double.h for the pattern. */
#include "grit/dual.h"
#define GS grit_dual
#define GS_IS_DUAL 1
#define GS_NAME(f) f##_dual
#define GS_C(c) grit_dual_const(c)
#define GS_V(a) ((a).v)
#define GS_ADD(a, b) grit_dual_add((a), (b))
#define GS_SUB(a, b) grit_dual_sub((a), (b))
#define GS_MUL(a, b) grit_dual_mul((a), (b))
#define GS_DIV(a, b) grit_dual_div((a), (b))
#define GS_NEG(a) grit_dual_neg(a)
#define GS_ADDC(a, c) grit_dual_addc((a), (c))
#define GS_SCALE(a, c) grit_dual_scale((a), (c))
#define GS_DIVC(a, c) grit_dual_divc((a), (c))
#define GS_FMA(a, b, c) grit_dual_fma((a), (b), (c))
#define GS_SQRT(a) grit_dual_sqrt(a)
#define GS_SIN(a) grit_dual_sin(a)
#define GS_COS(a) grit_dual_cos(a)
#define GS_TAN(a) grit_dual_tan(a)
#define GS_EXP(a) grit_dual_exp(a)
#define GS_LOG(a) grit_dual_log(a)
#define GS_POW(a, p) grit_dual_pow((a), (p))
#define GS_ATAN2(y, x) grit_dual_atan2((y), (x))
#define GS_FABS(a) grit_dual_fabs(a)
#define GS_FMIN(a, b) grit_dual_fmin((a), (b))
#define GS_FMAX(a, b) grit_dual_fmax((a), (b))
