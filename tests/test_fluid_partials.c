/* SPDX-License-Identifier: Apache-2.0 */
/* test_fluid_partials.c — the fluid forces' partials in q0 and v0 in closed form (fluid_partials.c, added
 * to derivatives_rnea.c's): A and B against the dual Newton-Euler passes they replace (ws->no_fluid) and
 * against central differences of the step, for the inertia box and the ellipsoid model, on hinges,
 * slides, a ball joint, several joints on one body and free bodies, in a viscous wind; and on the public
 * swimmer and fish. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "derivatives_smooth.h" /* the fluid partials' switch, fl.old */
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"
#include "xml_load_util.h"

/* The inertia box: a chain (hinge, then two hinges and a slide on one body, then a ball) whose bodies'
 * inertias are turned off their frames and their centres of mass off their origins, and a free body; in
 * a dense viscous fluid moving at a wind, gravity on, a motor on the root. */
static const char *BOX =
    "<mujoco><option timestep='0.002' density='800' viscosity='0.3' wind='0.4 -0.2 0.3'/>"
    "<worldbody>"
    "<body pos='0 0 1'><joint name='root' type='hinge' axis='0 0.3 1' damping='0.05'/>"
    " <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.04' mass='1' contype='0' conaffinity='0'/>"
    " <body pos='0.3 0 0'><joint type='hinge' axis='0 1 0.2'/><joint type='hinge' pos='0.02 0 0' axis='1 0 0.3'/>"
    "  <joint type='slide' axis='0.2 0 -1' stiffness='5'/>"
    "  <geom type='box' size='0.12 0.04 0.02' pos='0.1 0.02 -0.03' euler='10 20 30' mass='0.8' contype='0' conaffinity='0'/>"
    "  <body pos='0.2 0.05 -0.1'><joint type='ball' damping='0.02'/>"
    "   <geom type='ellipsoid' size='0.1 0.05 0.03' pos='0.02 0.03 -0.1' euler='30 0 45' mass='0.4' contype='0' conaffinity='0'/>"
    "  </body></body></body>"
    "<body pos='1 0 1' euler='20 10 0'><freejoint/>"
    " <geom type='box' size='0.1 0.06 0.03' pos='0.03 -0.02 0.01' euler='15 -25 40' mass='0.7' contype='0' conaffinity='0'/>"
    "</body></worldbody>"
    "<actuator><motor joint='root' gear='1'/></actuator></mujoco>";

/* The ellipsoid model (added mass, drag, Magnus and Kutta lift) on the same kinds of joints. */
static const char *ELLIPSOID =
    "<mujoco><option timestep='0.002' density='1000' viscosity='0.05' wind='0.5 -0.3 0.2'/>"
    "<default><geom contype='0' conaffinity='0' fluidshape='ellipsoid'/></default>"
    "<worldbody>"
    "<body pos='0 0 1'><joint type='hinge' axis='0 0.3 1'/><joint type='slide' axis='1 0 0'/>"
    " <geom type='ellipsoid' size='.1 .05 .02' euler='20 30 40' pos='.02 .01 -.01' mass='0.5'/>"
    " <geom type='capsule' size='.02 .06' pos='-.05 0 .03' euler='0 80 10' fluidcoef='.4 .3 1.2 .8 1.1' mass='0.2'/>"
    " <body pos='0.2 0 0'><joint type='ball'/>"
    "  <geom type='box' size='.08 .03 .02' pos='0.05 0 0' euler='10 0 20' mass='0.3'/>"
    " </body></body>"
    "<body pos='1 0 1'><freejoint/><geom type='ellipsoid' size='.1 .06 .03' pos='.01 0 .02' euler='5 15 25' mass='0.6'/>"
    " <body pos='0.15 0 0'><joint type='hinge' axis='0 0 1'/><geom type='capsule' size='.02 .05' mass='0.1'/></body>"
    "</body></worldbody></mujoco>";

static grit_data *load(const char *xml, const char *path, grit_model **m) {
  /* moving: the drag's partials are not zero (the fish's fins: slower) */
  return moving_data(xml, path, m, xml ? 1.5 : 0.3, 30);
}

/* A, B (dense and block form) by the closed form and by the dual passes (no_fluid); the closed form's
 * against central differences, no worse than the dual path's; and the fluid's share of A (not vacuous). */
static void check(const char *xml, const char *path, const char *name) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  double *A[3], *B[3];
  for (int k = 0; k < 3; ++k) A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives(d, A[0], nu ? B[0] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->rn_valid, "%s: the analytic partials were taken", name);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks_to_dense(J, A[2], nu ? B[2] : NULL);
  d->deriv->no_fluid = 1;
  cr_assert_eq(grit_step_derivatives(d, A[1], nu ? B[1] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!d->deriv->rn_valid, "%s: the dual passes ran", name);
  const double ea = fmax(col_rel_diff(A[0], A[1], nx, nx), col_rel_diff(A[2], A[1], nx, nx));
  const double eb = nu ? fmax(col_rel_diff(B[0], B[1], nx, nu), col_rel_diff(B[2], B[1], nx, nu)) : 0.0;
  const double fd_old = fdt_check(d, 1e-6);
  d->deriv->no_fluid = 0;
  const double fd_new = fdt_check(d, 1e-6);
  const grit_options o = m->opt;
  m->opt.density = m->opt.viscosity = 0.0;
  cr_assert_eq(grit_step_derivatives(d, A[2], nu ? B[2] : NULL, NULL, 0, NULL), GRIT_OK);
  m->opt = o;
  const double share = col_rel_diff(A[2], A[0], nx, nx);
  cr_log_info("%s: closed form against dual: A %.3g, B %.3g; central differences %.3g (dual %.3g); fluid's share %.3g",
              name, ea, eb, fd_new, fd_old, share);
  /* the same partials summed in another order (round-off), times A's conditioning in the solve */
  cr_expect(ea < 1e-12, "%s: A %.3g", name, ea);
  cr_expect(eb < 1e-12, "%s: B %.3g", name, eb);
  cr_expect(fd_new < 1e-6 && fd_new < 2.0 * fd_old + 1e-9, "%s: %.3g against %.3g", name, fd_new, fd_old);
  cr_expect(share > 1e-4, "%s: the fluid's share %.3g", name, share);
  for (int k = 0; k < 3; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

Test(fluid_partials, inertia_box) { check(BOX, NULL, "inertia box"); }
Test(fluid_partials, ellipsoid_model) { check(ELLIPSOID, NULL, "ellipsoid model"); }
Test(fluid_partials, swimmer_file) { check(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/swimmer.xml", "swimmer"); }
Test(fluid_partials, fish_file) { check(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish"); }

/* The faster path (box constants kept, K in blocks, two-lane products) against the previous closed form
 * (fl.old) and against central differences, dense and block form: the same partials summed in another
 * order, so round-off apart; its AVX2 pairs against its two-lane ones (fl.avx2), bit for bit. */
static void check_fast(const char *xml, const char *path, const char *name) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  double *A[3], *B[3];
  for (int k = 0; k < 3; ++k) A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  grit_fluid_partials *fl = &d->deriv->sm->fl;
  cr_assert_eq(grit_step_derivatives(d, A[0], nu ? B[0] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks_to_dense(J, A[2], nu ? B[2] : NULL);
  if (fl->avx2) { /* the pairs' four-lane products: the two-lane path's bits */
    double *A2 = calloc((size_t)nx * nx, sizeof(double)), *B2 = calloc((size_t)nx * nu + 1, sizeof(double));
    fl->avx2 = 0;
    cr_assert_eq(grit_step_derivatives(d, A2, nu ? B2 : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    fl->avx2 = 1;
    cr_expect(!memcmp(A2, A[0], sizeof(double) * (size_t)nx * nx) && !memcmp(B2, B[0], sizeof(double) * (size_t)nx * nu),
              "%s: AVX2 and two lanes differ", name);
    free(A2), free(B2);
  }
  fl->old = 1;
  cr_assert_eq(grit_step_derivatives(d, A[1], nu ? B[1] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  const double fd_old = fdt_check(d, 1e-6); /* (after the derivatives: it takes steps of its own) */
  fl->old = 0;
  const double fd_new = fdt_check(d, 1e-6);
  const double ea = fmax(col_rel_diff(A[0], A[1], nx, nx), col_rel_diff(A[2], A[1], nx, nx));
  const double eb = nu ? fmax(col_rel_diff(B[0], B[1], nx, nu), col_rel_diff(B[2], B[1], nx, nu)) : 0.0;
  cr_log_info("%s: faster path against the previous: A %.3g, B %.3g; central differences %.3g (previous %.3g)", name, ea,
              eb, fd_new, fd_old);
  cr_expect(ea < 1e-12, "%s: A %.3g", name, ea);
  cr_expect(eb < 1e-12, "%s: B %.3g", name, eb);
  cr_expect(fd_new < 1e-6 && fd_new < 2.0 * fd_old + 1e-9, "%s: %.3g against %.3g", name, fd_new, fd_old);
  for (int k = 0; k < 3; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

Test(fluid_partials, fast_inertia_box) { check_fast(BOX, NULL, "inertia box"); }
Test(fluid_partials, fast_ellipsoid_model) { check_fast(ELLIPSOID, NULL, "ellipsoid model"); }
Test(fluid_partials, fast_swimmer_file) { check_fast(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/swimmer.xml", "swimmer"); }
Test(fluid_partials, fast_fish_file) { check_fast(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish"); }

/* The ellipsoid model's frame in doubles (fluid_ellipsoid_dual.c) against the frame on dual numbers
 * (fl.dual_frame): the same bytes of A and B, dense and block form, on the baseline and the AVX2
 * compilation; the vectors of a non-symmetric K two lanes at a time against scalar sums
 * (fl.no_nsym_lanes), the same bytes; and against central differences. */
static void check_frame(const char *xml, const char *path, const char *name) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  grit_fluid_partials *fl = &d->deriv->sm->fl;
  const int avx2 = fl->avx2;
  for (int simd = 0; simd <= avx2; ++simd) {
    double *A[4], *B[4];
    for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
    grit_jacobian_blocks *J;
    cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
    fl->avx2 = simd;
    for (int dual = 0; dual <= 1; ++dual) {
      fl->dual_frame = dual;
      cr_assert_eq(grit_step_derivatives(d, A[2 * dual], nu ? B[2 * dual] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                   grit_data_last_error(d));
      cr_assert(d->deriv->rn_valid, "%s: the analytic partials were taken", name);
      cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
      grit_jacobian_blocks_to_dense(J, A[2 * dual + 1], nu ? B[2 * dual + 1] : NULL);
    }
    fl->dual_frame = 0;
    for (int k = 0; k < 2; ++k)
      cr_expect(!memcmp(A[k], A[k + 2], sizeof(double) * na) && !memcmp(B[k], B[k + 2], sizeof(double) * nb),
                "%s: frame in doubles and on duals differ (%s, %s)", name, k ? "block" : "dense", simd ? "AVX2" : "baseline");
    for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
    grit_jacobian_blocks_free(J);
  }
  fl->avx2 = avx2;
  { /* a non-symmetric K's vectors two lanes at a time against dof_vectors' scalar sums: the same bytes */
    double *A[2], *B[2];
    for (int k = 0; k < 2; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
    for (int old = 0; old <= 1; ++old) {
      fl->no_nsym_lanes = old;
      cr_assert_eq(grit_step_derivatives(d, A[old], nu ? B[old] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    }
    fl->no_nsym_lanes = 0;
    cr_expect(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb),
              "%s: the non-symmetric K's lanes differ", name);
    for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  }
  const double fd = fdt_check(d, 1e-6);
  cr_log_info("%s: frame in doubles, central differences %.3g", name, fd);
  cr_expect(fd < 1e-6, "%s: %.3g", name, fd);
  grit_data_free(d);
  grit_model_free(m);
}

Test(fluid_partials, ellipsoid_frame_in_doubles) { check_frame(ELLIPSOID, NULL, "ellipsoid model"); }

/* The fluid's vectors joined to the dofs' own before one set of pairs (derivatives_rnea.c's, r->pairs_due)
 * against the fluid's pairs of their own (rn.no_fluid_merge), dense and block form: the same partials
 * summed in another order, so round-off apart; and against central differences. Without wind only (the
 * join needs y_j = cy_j): with wind both settings take the fluid's own pairs, the same bytes. */
static void check_merge(const char *xml, const char *path, const char *name, int zero_wind) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  if (zero_wind) m->opt.wind[0] = m->opt.wind[1] = m->opt.wind[2] = 0.0;
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  grit_rnea *rn = &d->deriv->rn;
  double fd[2];
  for (int own = 0; own <= 1; ++own) {
    rn->no_fluid_merge = own;
    const long n0 = rn->nmerged;
    cr_assert_eq(grit_step_derivatives(d, A[2 * own], nu ? B[2 * own] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    cr_assert(d->deriv->rn_valid, "%s: the analytic partials were taken", name);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * own + 1], nu ? B[2 * own + 1] : NULL);
    cr_assert_eq(rn->nmerged - n0, !own && zero_wind ? 2 : 0, "%s: the joined pairs ran %ld times", name, rn->nmerged - n0);
    cr_assert(!rn->pairs_due, "%s: pairs left", name);
  }
  for (int own = 1; own >= 0; --own) { /* (after the derivatives: it takes steps of its own) */
    rn->no_fluid_merge = own;
    fd[own] = fdt_check(d, 1e-6);
  }
  double ea = 0.0, eb = 0.0;
  for (int k = 0; k < 2; ++k) {
    ea = fmax(ea, col_rel_diff(A[k], A[k + 2], nx, nx));
    if (nu) eb = fmax(eb, col_rel_diff(B[k], B[k + 2], nx, nu));
    if (!zero_wind)
      cr_expect(!memcmp(A[k], A[k + 2], sizeof(double) * na) && !memcmp(B[k], B[k + 2], sizeof(double) * nb),
                "%s: with wind the settings differ", name);
  }
  cr_log_info("%s: joined pairs against the fluid's own: A %.3g, B %.3g; central differences %.3g (own %.3g)", name, ea,
              eb, fd[0], fd[1]);
  cr_expect(ea < 1e-12, "%s: A %.3g", name, ea);
  cr_expect(eb < 1e-12, "%s: B %.3g", name, eb);
  cr_expect(fd[0] < 1e-6 && fd[0] < 2.0 * fd[1] + 1e-9, "%s: %.3g against %.3g", name, fd[0], fd[1]);
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

Test(fluid_partials, joined_inertia_box) { check_merge(BOX, NULL, "inertia box", 1); }
Test(fluid_partials, joined_ellipsoid_model) { check_merge(ELLIPSOID, NULL, "ellipsoid model", 1); }
Test(fluid_partials, joined_swimmer_file) {
  check_merge(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/swimmer.xml", "swimmer", 1);
}
Test(fluid_partials, joined_fish_file) { check_merge(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish", 1); }
Test(fluid_partials, joined_not_with_wind) { check_merge(BOX, NULL, "inertia box in wind", 0); }

/* The joined path's vectors under a symmetric K on AVX2 (four and two lanes) against joined_dof's two-lane
 * sums (fl.no_joined_avx2), without wind: the same bytes of A and B, dense and block form. */
static void check_joined_avx2(const char *xml, const char *path, const char *name) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  m->opt.wind[0] = m->opt.wind[1] = m->opt.wind[2] = 0.0;
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  grit_fluid_partials *fl = &d->deriv->sm->fl;
  if (!fl->avx2) {
    cr_log_info("%s: no AVX2 here, nothing to compare", name);
    grit_data_free(d);
    grit_model_free(m);
    return;
  }
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  const long n0 = d->deriv->rn.nmerged;
  for (int off = 0; off <= 1; ++off) {
    fl->no_joined_avx2 = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], nu ? B[2 * off] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], nu ? B[2 * off + 1] : NULL);
  }
  fl->no_joined_avx2 = 0;
  cr_assert_eq(d->deriv->rn.nmerged - n0, 4, "%s: the joined path ran", name);
  for (int k = 0; k < 2; ++k)
    cr_expect(!memcmp(A[k], A[k + 2], sizeof(double) * na) && !memcmp(B[k], B[k + 2], sizeof(double) * nb),
              "%s: AVX2 and two lanes differ (%s)", name, k ? "block" : "dense");
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

Test(fluid_partials, joined_avx2_inertia_box) { check_joined_avx2(BOX, NULL, "inertia box"); }
Test(fluid_partials, joined_avx2_ellipsoid_model) { check_joined_avx2(ELLIPSOID, NULL, "ellipsoid model"); }
Test(fluid_partials, joined_avx2_swimmer_file) {
  check_joined_avx2(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/swimmer.xml", "swimmer");
}

/* A non-symmetric K's (the ellipsoid model's) vectors on AVX2 from K and its transpose against two lanes at
 * a time (fl.no_nsym_avx2), in wind (the faster path's own pairs): the same bytes of A and B, dense and
 * block form. */
Test(fluid_partials, nsym_avx2_ellipsoid_model) {
  grit_model *m;
  grit_data *d = load(ELLIPSOID, NULL, &m);
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m);
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu + 1;
  grit_fluid_partials *fl = &d->deriv->sm->fl;
  if (!fl->avx2) {
    cr_log_info("no AVX2 here, nothing to compare");
    grit_data_free(d);
    grit_model_free(m);
    return;
  }
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc(na, sizeof(double)), B[k] = calloc(nb, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int off = 0; off <= 1; ++off) {
    fl->no_nsym_avx2 = off;
    cr_assert_eq(grit_step_derivatives(d, A[2 * off], nu ? B[2 * off] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    cr_assert(d->deriv->rn_valid, "the analytic partials were taken");
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * off + 1], nu ? B[2 * off + 1] : NULL);
  }
  fl->no_nsym_avx2 = 0;
  for (int k = 0; k < 2; ++k)
    cr_expect(!memcmp(A[k], A[k + 2], sizeof(double) * na) && !memcmp(B[k], B[k + 2], sizeof(double) * nb),
              "AVX2 and two lanes differ (%s)", k ? "block" : "dense");
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}
