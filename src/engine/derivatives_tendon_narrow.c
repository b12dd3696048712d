/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tendon_narrow.c — a third compilation of a transmission's length and moment (a tendon's,
 * with the wrapping geometry, a slider-crank's, a site's) on dual numbers of four partials instead of
 * GRIT_DUAL_N, for the position passes whose seeds of dq0 all lie in the first four lanes (a model of
 * at most four dofs per tree: arm26's six wrapped muscles over two dofs paid for eight lanes, six of them
 * idle). Each partial of a dual operation is its own lane's IEEE operations (grit/dual.h), so the four
 * lanes are bit for bit those of the wide evaluation; the lanes above are exact zeros there up to the
 * sign of a zero, and are read by nothing (the passes read the seeded lanes).
 *
 * This translation unit sees grit_dual with four partials (GRIT_DUAL_N 4, before any header): its
 * functions take the suffix _dual4 (kinematics, wrapping, lengths) and only the entry point below
 * speaks to the rest of the library, through the wide layout spelled out here (wide_dual). Compiled for
 * AVX2 where derivatives_tendon_avx2.c is (one register per partials), else for the baseline. */
#define GRIT_DUAL_N 4
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#pragma GCC target("avx2")
#endif

#include <math.h>
#include <string.h>

#include "actuation.h"
#include "actuation_muscle.h"
#include "constraints_extra.h"
#include "derivatives_tendon.h"
#include "grit/constraints.h"
#include "grit/math_dual.h"
#include "kinematics.h"

/* The narrow instantiation: every generic function below is named f_dual4 */
#include "grit/detail/scalar_dual.h"
#undef GS_NAME
#define GS_NAME(f) f##_dual4
#include "grit/detail/math_generic.h"
#include "kinematics_decl_generic.h"
#include "contact_model_decl_generic.h"
#include "constraints_extra_decl_generic.h"
#include "actuation_muscle_decl_generic.h"
#include "kinematics_generic.h"
#include "tendon_wrap_generic.h"
#include "constraints_extra_generic.h"
#include "actuation_muscle_generic.h"
#include "grit/detail/scalar_undef.h"

/* The library's dual number (eight partials), as it lies in memory (grit_deriv_tendon_narrow_wide_ok). */
enum { WIDE = 8 };
typedef struct wide_dual {
  double v;
  double d[WIDE];
} wide_dual;

static grit_dual narrow(const wide_dual *x) {
  grit_dual r;
  r.v = x->v;
  for (int l = 0; l < GRIT_DUAL_N; ++l) r.d[l] = x->d[l];
  return r;
}

static void widen(const grit_dual *x, wide_dual *r) {
  r->v = x->v;
  for (int l = 0; l < WIDE; ++l) r->d[l] = l < GRIT_DUAL_N ? x->d[l] : 0.0;
}

/* dst = src to four lanes; whether every lane left out was an exact zero (a NaN is not). */
static int narrow_n(const void *src, grit_dual *dst, int n) {
  const wide_dual *s = src;
  int rest = 0;
  for (int i = 0; i < n; ++i) {
    dst[i] = narrow(&s[i]);
    for (int l = GRIT_DUAL_N; l < WIDE; ++l) rest |= s[i].d[l] != 0.0;
  }
  return !rest;
}

size_t grit_deriv_tendon_narrow_size(const grit_model *m) {
  return sizeof(grit_dual) * (size_t)(12 * m->nbody + 6 * m->nv + m->nq + 7 * m->nv + 16);
}

int grit_deriv_tendon_narrow_wide_ok(size_t wide_size, size_t kin_size) {
  return wide_size == sizeof(wide_dual) && kin_size == sizeof(grit_kin_dual4);
}

int grit_deriv_tendon_narrow_begin(const grit_model *m, const void *kin, const void *q, void *work) {
  /* kin is the library's grit_kin_dual: a struct of pointers laid out as grit_kin_dual4 (only the scalar
   * type pointed at differs); its pointers copied out, and read as the wide arrays they are */
  grit_kin_dual4 k;
  memcpy(&k, kin, sizeof k);
  grit_dual *x = work;
  int ok = narrow_n(k.xpos, x, 3 * m->nbody);
  ok &= narrow_n(k.xmat, x + 3 * m->nbody, 9 * m->nbody);
  ok &= narrow_n(k.cdof, x + 12 * m->nbody, 6 * m->nv);
  ok &= narrow_n(q, x + 12 * m->nbody + 6 * m->nv, m->nq);
  return ok;
}

double grit_deriv_tendon_narrow_eval(const grit_model *m, void *work, int a, void *L, void *J) {
  grit_dual *x = work, *q = x + 12 * m->nbody + 6 * m->nv, *Jn = q + m->nq, *scratch = Jn + m->nv;
  grit_kin_dual4 k;
  memset(&k, 0, sizeof k);
  k.xpos = x, k.xmat = x + 3 * m->nbody, k.cdof = x + 12 * m->nbody;
  const grit_dual Ln = grit_actuator_length_jacobian_dual4(m, &k, q, a, Jn, scratch);
  widen(&Ln, L);
  wide_dual *Jw = J;
  for (int i = 0; i < m->nv; ++i) widen(&Jn[i], &Jw[i]);
  return Ln.v;
}
