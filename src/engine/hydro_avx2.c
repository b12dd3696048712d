/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_avx2.c — a second compilation of the hydroelastic patches' dual re-evaluation (the derivatives'
 * position passes: hydro_generic.h's and hydro_pair_generic.h's dual instances, hydro_reevaluate.h) for
 * processors with AVX2: the same sources under `#pragma GCC target("avx2")`, their dual names renamed, so
 * that grit/dual.h takes the partials four at a time. Nothing is fused (-ffp-contract=off, and the AVX2
 * target does not include FMA): the same IEEE operations in the same order, the same bits. On the
 * hydroelastic coin (152 patches) the re-evaluation was half of grit_step_derivatives' instructions.
 * grit_hydro_patch_reevaluate_dual (hydro.c) calls it where the processor has AVX2. The pragma comes
 * before every include: the headers' static inline functions are compiled here for AVX2 too. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")

#define grit_hydro_tet_patch_dual grit_hydro_tet_patch_dual_avx2
#define grit_hydro_rigid_face_dual grit_hydro_rigid_face_dual_avx2
#define grit_hydro_tet_pair_patch_dual grit_hydro_tet_pair_patch_dual_avx2
#define grit_contact_frame_dual grit_contact_frame_dual_avx2 /* derivatives_avx2.c */

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "hydro.h"

#include "grit/math_dual.h"

#include "grit/detail/scalar_dual.h"
#include "hydro_generic.h"
#include "grit/detail/scalar_undef.h"

#include "hydro_reevaluate.h"

void grit_hydro_patch_reevaluate_dual_avx2(const grit_model *m, const grit_dual *moduli,
                                           const grit_contact_candidate *c, const grit_dual pa[3],
                                           const grit_dual Ra[9], const grit_dual pb[3], const grit_dual Rb[9],
                                           grit_contact_geom_dual *geo, grit_dual *k);
void grit_hydro_patch_reevaluate_dual_avx2(const grit_model *m, const grit_dual *moduli,
                                           const grit_contact_candidate *c, const grit_dual pa[3],
                                           const grit_dual Ra[9], const grit_dual pb[3], const grit_dual Rb[9],
                                           grit_contact_geom_dual *geo, grit_dual *k) {
  hydro_reevaluate(m, moduli, c, pa, Ra, pb, Rb, geo, k);
}
#else
typedef int grit_hydro_avx2_unused; /* (ISO C: a translation unit declares something) */
#endif
