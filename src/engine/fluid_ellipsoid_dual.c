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

/* grit_m3_mulv with a constant matrix (grit_v3_dot's order: a0 b0 + (a1 b1 + a2 b2)); its transpose's, R^T x,
 * is written out below. */
static inline void mulv_cd(grit_dual r[3], const double R[9], const grit_dual x[3]) {
  for (int i = 0; i < 3; ++i)
    r[i] = fma_cd(R[3 * i], x[0], fma_cd(R[3 * i + 1], x[1], grit_dual_scale(x[2], R[3 * i + 2])));
}

/* r = a x b with a constant: grit_v3_cross's operations. */
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
  grit_dual lw[3], lv[3], lf[3], lt[3], F[3], T[3], n[3];
  /* The twist t seeded on lanes 0-5 (t_j.d = e_j), v_p = v_o + w x p, lw = R^T w and lv = R^T (v_p - wind)
   * written out: the values by grit_v3_cross's, the sums' and grit_m3_tmulv's operations; of the partials, rel's
   * (e_l x p on lanes 0-2: each entry 0 + (+-p_k or a zero), which is +0 for a zero p_k; e_(l-3) on lanes
   * 3-5) by the same operations, lv's on lanes 0-2 by R^T's sums, and the single terms R_(3l+i) (lw's on
   * lanes 0-2, lv's on 3-5, a sum with the zeros the dual path adds) taken as they are: only zeros' signs
   * may differ, which the sums into Kb from +0 make +0 (as above); ellipsoid_frame_in_doubles compares. */
  const double tv[6] = {tw[0], tw[1], tw[2], tw[3], tw[4], tw[5]};
  const double vp[3] = {tv[1] * p[2] - tv[2] * p[1], tv[2] * p[0] - tv[0] * p[2], tv[0] * p[1] - tv[1] * p[0]};
  const double cl[3][3] = {{0.0, 0.0 + -p[2], 0.0 + p[1]}, {0.0 + p[2], 0.0, 0.0 + -p[0]}, {0.0 + -p[1], 0.0 + p[0], 0.0}};
  double rel[3];
  for (int i = 0; i < 3; ++i) rel[i] = (tv[3 + i] + vp[i]) + -m->opt.wind[i];
  for (int i = 0; i < 3; ++i) {
    lw[i] = grit_dual_const(R[i] * tv[0] + (R[3 + i] * tv[1] + tv[2] * R[6 + i]));
    lv[i] = grit_dual_const(R[i] * rel[0] + (R[3 + i] * rel[1] + rel[2] * R[6 + i]));
    for (int l = 0; l < 3; ++l) {
      lw[i].d[l] = R[3 * l + i];
      lv[i].d[l] = R[i] * cl[l][0] + (R[3 + i] * cl[l][1] + cl[l][2] * R[6 + i]);
      lv[i].d[3 + l] = R[3 * l + i];
    }
  }
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
