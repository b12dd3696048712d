/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_ellipsoid_dual.c — the ellipsoid fluid model's wrench on one geometry and its 6 x 6 partials in
 * its body's twist, for fluid_partials.c (positions constant there). grit_fluid_geom_wrench_dual took
 * them with the frame on dual numbers whose partials are zero: the geometry's axes R and centre p, the
 * products R^T (.), R (.) and p x (.). Here the frame is in doubles, the twist's six components are
 * seeded on six lanes, and only the model in the geometry's frame (fluid_ellipsoid_local) runs on dual
 * numbers. The values are the same operations as the dual path's (a dual product's value is the product
 * of the values); of each partial, the dual product with a constant, a.d b.v + a.v b.d with a.d = 0,
 * leaves out the term 0 b.v: a nonzero partial is the same bits, a zero one may differ in its sign, and
 * fluid_partials.c's sums into K (from +0) make that sign +0 either way.
 *
 * Compiled twice: here for the baseline, and by fluid_ellipsoid_avx2.c under the AVX2 target (the
 * partials four at a time; nothing fused: -ffp-contract=off, the target has no FMA), the same bits. */
#include <math.h>
#include <string.h>

#include "fluid.h"
#include "fluid_partials.h"
#include "grit/math_dual.h"

#define GRIT_FLUID_LOCAL_ONLY 1
#include "grit/detail/scalar_dual.h"
#include "fluid_ellipsoid_generic.h"
#include "grit/detail/scalar_undef.h"

/* a b + c for a plain double a: grit_dual_fma(grit_dual_const(a), b, c) less its 0 b.v terms. */
static inline grit_dual fma_cd(double a, grit_dual b, grit_dual c) {
  grit_dual r;
  r.v = a * b.v + c.v;
  GRIT_DUAL_FOR(i) r.d[i] = a * b.d[i] + c.d[i];
  return r;
}

/* grit_m3_tmulv and grit_m3_mulv with a constant matrix (grit_v3_dot's order: a0 b0 + (a1 b1 + a2 b2)). */
static inline void tmulv_cd(grit_dual r[3], const double R[9], const grit_dual x[3]) {
  for (int i = 0; i < 3; ++i) r[i] = fma_cd(R[i], x[0], fma_cd(R[3 + i], x[1], grit_dual_scale(x[2], R[6 + i])));
}

static inline void mulv_cd(grit_dual r[3], const double R[9], const grit_dual x[3]) {
  for (int i = 0; i < 3; ++i)
    r[i] = fma_cd(R[3 * i], x[0], fma_cd(R[3 * i + 1], x[1], grit_dual_scale(x[2], R[3 * i + 2])));
}

/* r = a x b with b constant (cross_dc) or a constant (cross_cd): grit_v3_cross's operations. */
static inline void cross_dc(grit_dual r[3], const grit_dual a[3], const double b[3]) {
  r[0] = grit_dual_sub(grit_dual_scale(a[1], b[2]), grit_dual_scale(a[2], b[1]));
  r[1] = grit_dual_sub(grit_dual_scale(a[2], b[0]), grit_dual_scale(a[0], b[2]));
  r[2] = grit_dual_sub(grit_dual_scale(a[0], b[1]), grit_dual_scale(a[1], b[0]));
}

static inline void cross_cd(grit_dual r[3], const double a[3], const grit_dual b[3]) {
  r[0] = grit_dual_sub(grit_dual_scale(b[2], a[1]), grit_dual_scale(b[1], a[2]));
  r[1] = grit_dual_sub(grit_dual_scale(b[0], a[2]), grit_dual_scale(b[2], a[0]));
  r[2] = grit_dual_sub(grit_dual_scale(b[1], a[0]), grit_dual_scale(b[0], a[1]));
}

void grit_fluid_ellipsoid_partials(const grit_model *m, const double xpos[3], const double xmat[9], const double tw[6],
                                   int g, double gb[6], double Kb[36]) {
  const double *f = m->geom_fluid + GRIT_FLUID_NGEOM * g;
  double R[9], p[3];
  grit_m3_mul_c(R, xmat, m->geom_mat + 9 * g); /* the geometry's frame in the world */
  grit_tf_apply_c(p, xpos, xmat, m->geom_pos + 3 * g);
  grit_dual t[6], vp[3], rel[3], lw[3], lv[3], lf[3], lt[3], F[3], T[3], n[3];
  for (int i = 0; i < 6; ++i) {
    t[i] = grit_dual_const(tw[i]);
    t[i].d[i] = 1.0;
  }
  cross_dc(vp, t, p); /* v_p = v_o + w x p */
  for (int i = 0; i < 3; ++i) rel[i] = grit_dual_addc(grit_dual_add(t[3 + i], vp[i]), -m->opt.wind[i]);
  tmulv_cd(lw, R, t);
  tmulv_cd(lv, R, rel);
  fluid_ellipsoid_local_dual(m, f, lw, lv, lf, lt);
  mulv_cd(F, R, lf);
  mulv_cd(T, R, lt);
  cross_cd(n, p, F);
  const grit_dual zero = grit_dual_const(0.0);
  for (int i = 0; i < 3; ++i) { /* fluid_ellipsoid_geom's w = 0 - (T + n), 0 - F */
    const grit_dual wt = grit_dual_sub(zero, grit_dual_add(T[i], n[i])), wf = grit_dual_sub(zero, F[i]);
    gb[i] += wt.v, gb[3 + i] += wf.v;
    for (int q = 0; q < 6; ++q) Kb[6 * i + q] += wt.d[q], Kb[6 * (3 + i) + q] += wf.d[q];
  }
}
