/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_simd.c — the baseline table of the position passes' dual contact functions and the
 * choice between it and the AVX2 compilation's (derivatives_simd.h). */
#include "derivatives_simd.h"

#include "derivatives_internal.h"
#include "grit/math_dual.h"

/* grit_tf_compose_c_dual is a static inline function: the table holds this TU's instance. */
static void compose(grit_dual p[3], grit_dual R[9], const grit_dual p1[3], const grit_dual R1[9], const double p2[3],
                    const double R2[9]) {
  grit_tf_compose_c_dual(p, R, p1, R1, p2, R2);
}

static const grit_deriv_dual_fns BASE = GRIT_DERIV_DUAL_FNS_INIT;

const grit_deriv_dual_fns *grit_deriv_dual_fns_get(int allow_avx2) {
  const grit_deriv_dual_fns *f = allow_avx2 ? grit_deriv_dual_fns_avx2() : NULL;
  return f ? f : &BASE;
}
