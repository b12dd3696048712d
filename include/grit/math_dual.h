/* SPDX-License-Identifier: Apache-2.0 */
/* grit/math_dual.h — the math core of grit/math.h instantiated for dual numbers (grit_dual): the same
 * functions with the suffix _dual, e.g. grit_quat_exp_dual. */
#ifndef GRIT_MATH_DUAL_H
#define GRIT_MATH_DUAL_H

#include "grit/dual.h"
#include "grit/math.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "grit/detail/scalar_dual.h"
#include "grit/detail/math_generic.h"
#include "grit/detail/scalar_undef.h"

#ifdef __cplusplus
}
#endif
#endif /* GRIT_MATH_DUAL_H */
