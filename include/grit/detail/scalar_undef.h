/* SPDX-License-Identifier: Apache-2.0 */
/* grit/detail/scalar_undef.h — ends one instantiation of scalar-generic code. */
#undef GS
#undef GS_IS_DUAL
#undef GS_NAME
#undef GS_C
#undef GS_V
#undef GS_ADD
#undef GS_SUB
#undef GS_MUL
#undef GS_DIV
#undef GS_NEG
#undef GS_ADDC
#undef GS_SCALE
#undef GS_DIVC
#undef GS_FMA
#undef GS_SQRT
#undef GS_SIN
#undef GS_COS
#undef GS_TAN
#undef GS_EXP
#undef GS_LOG
#undef GS_POW
#undef GS_ATAN2
#undef GS_FABS
#undef GS_FMIN
#undef GS_FMAX
