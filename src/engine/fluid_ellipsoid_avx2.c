/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_ellipsoid_avx2.c — fluid_ellipsoid_dual.c compiled once more for processors with AVX2, as
 * derivatives_avx2.c compiles the contacts' dual functions: the pragma before every include, so that
 * grit/dual.h takes the partials four at a time; the same operations, nothing fused, the same bits.
 * fluid_partials.c calls it only where the processor has AVX2 (f->avx2). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")
#define grit_fluid_ellipsoid_partials grit_fluid_ellipsoid_partials_avx2
#include "fluid_ellipsoid_dual.c"
#else
#include "fluid_partials.h"

void grit_fluid_ellipsoid_partials_avx2(const grit_model *m, const double xpos[3], const double xmat[9],
                                        const double tw[6], int g, double gb[6], double Kb[36]) {
  grit_fluid_ellipsoid_partials(m, xpos, xmat, tw, g, gb, Kb);
}
#endif
