/* SPDX-License-Identifier: Apache-2.0 */
/* grit/math.h — the math core for double: 3-vectors, 3x3 matrices, quaternions, rigid transforms,
 * spatial vectors and spatial inertias. All functions are static inline.
 *
 * The functions are written once in grit/detail/math_generic.h for any scalar type; this header
 * instantiates them for double (grit_v3_add, ...), grit/math_dual.h for grit_dual (grit_v3_add_dual, ...).
 * Conventions are documented there and in docs/conventions.md. */
#ifndef GRIT_MATH_H
#define GRIT_MATH_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "grit/detail/scalar_double.h"
#include "grit/detail/math_generic.h"
#include "grit/detail/scalar_undef.h"

#ifdef __cplusplus
}
#endif
#endif /* GRIT_MATH_H */
