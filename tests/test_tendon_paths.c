/* SPDX-License-Identifier: Apache-2.0 */
/* test_tendon_paths.c — a spatial segment's row over the dofs below its bodies' common ancestor only
 * (constraints_extra_generic.h, cx_segment; m->ten_full_paths: both whole paths, as before). On the
 * common dofs u^T (J_y - J_x) is zero (u along y - x); the whole-path sum left rounding there. Checked on
 * MuJoCo's flag (288 spring tendons of two sites on one tree of 340 hinge dofs: every entry the same bits
 * as the whole paths' or +0 where those are rounding) and arm26 (wrapped muscles, several segments: a dof
 * another segment adds to differs by that rounding); the row against central
 * differences of the length; the step and A with and without, close. And a row built in J's block
 * (cx_row_in_place; m->ten_row_scatter: scattered from scratch): the same bits. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraints_extra.h"
#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "model_internal.h"

static grit_model *load(const char *rel, grit_data **d) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/models/%s", GRIT_SOURCE_DIR, rel);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  grit_mjcf_info info;
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(m, d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(*d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
  return m;
}

/* Tendon t's length and row at d's state, with or without the common dofs left out. */
static double row(grit_model *m, grit_data *d, int t, int full, double *J) {
  m->ten_full_paths = full;
  const double L = grit_tendon_length_jacobian(m, &d->kin, d->qpos, t, J, d->jscratch);
  m->ten_full_paths = 0;
  return L;
}

/* Each spatial tendon's row both ways after `steps` steps: the same length bits, and each entry the same
 * bits or within rounding (1e-12 of the row's largest); with one_segment (every tendon two sites: each
 * entry one term or none) the same bits or +0. Returns the entries left out (+0 now, not before). */
static long rows_compare(const char *rel, int steps, int one_segment) {
  grit_data *d;
  grit_model *m = load(rel, &d);
  m->ten_point_cross = 1; /* (the whole paths' rounding against the terms they were written for) */
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_data_set_qpos(d, d->qpos, m->nq), GRIT_OK);
  double *Jn = calloc((size_t)m->nv, sizeof(double)), *Jo = calloc((size_t)m->nv, sizeof(double));
  long dropped = 0;
  for (int t = 0; t < m->ntendon; ++t) {
    if (m->ten_type[t] == GRIT_TENDON_FIXED) continue;
    const double Ln = row(m, d, t, 0, Jn), Lo = row(m, d, t, 1, Jo);
    cr_assert(memcmp(&Ln, &Lo, sizeof Ln) == 0, "%s: tendon %d's length", rel, t);
    double jmax = 0.0;
    for (int i = 0; i < m->nv; ++i) jmax = fmax(jmax, fabs(Jo[i]));
    for (int i = 0; i < m->nv; ++i) {
      if (memcmp(Jn + i, Jo + i, sizeof(double)) == 0) continue;
      cr_assert(fabs(Jn[i] - Jo[i]) <= 1e-12 * jmax, "%s: tendon %d dof %d: %.17g vs %.17g (max %g)", rel, t, i,
                Jn[i], Jo[i], jmax);
      cr_assert(!one_segment || Jn[i] == 0.0, "%s: tendon %d dof %d: %.17g vs %.17g", rel, t, i, Jn[i], Jo[i]);
      dropped += Jn[i] == 0.0;
    }
  }
  free(Jn), free(Jo);
  grit_data_free(d);
  grit_model_free(m);
  return dropped;
}

Test(tendon_paths, flag_rows_same_bits_or_common_zero) {
  cr_expect(rows_compare("mujoco_composite/flag/flag.xml", 5, 1) > 1000, "the common dofs left out");
}

Test(tendon_paths, arm26_rows_same_bits_or_common_zero) { rows_compare("mujoco_model/arm26.xml", 20, 0); }

/* Each tendon's row (every `stride`-th; skip_fixed: spatial ones only) after 5 steps against central
 * differences of its length along a seeded direction (q and v alike: hinges or slides). */
static void rows_against_central_differences(const char *rel, unsigned seed, int stride, int skip_fixed) {
  grit_data *d;
  grit_model *m = load(rel, &d);
  cr_assert_eq(m->nq, m->nv);
  for (int i = 0; i < 5; ++i) cr_assert_eq(grit_step(d), GRIT_OK);
  const int nv = m->nv;
  double *q0 = malloc(sizeof(double) * (size_t)nv), *q = malloc(sizeof(double) * (size_t)nv);
  double *dir = malloc(sizeof(double) * (size_t)nv), *J = calloc((size_t)nv, sizeof(double));
  double *Jx = calloc((size_t)nv, sizeof(double));
  memcpy(q0, d->qpos, sizeof(double) * (size_t)nv);
  unsigned s = seed;
  for (int i = 0; i < nv; ++i) s = s * 1103515245u + 12345u, dir[i] = (double)(s >> 8) / 16777216.0 - 0.5;
  const double h = 1e-6;
  int checked = 0;
  for (int t = 0; t < m->ntendon; t += stride) {
    if (skip_fixed && m->ten_type[t] == GRIT_TENDON_FIXED) continue;
    cr_assert_eq(grit_data_set_qpos(d, q0, nv), GRIT_OK);
    row(m, d, t, 0, J);
    double jv = 0.0, scale = 0.0;
    for (int i = 0; i < nv; ++i) jv += J[i] * dir[i], scale += fabs(J[i] * dir[i]);
    double L[2];
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < nv; ++i) q[i] = q0[i] + (k ? -h : h) * dir[i];
      cr_assert_eq(grit_data_set_qpos(d, q, nv), GRIT_OK);
      L[k] = row(m, d, t, 0, Jx);
    }
    const double fd = (L[0] - L[1]) / (2 * h);
    cr_expect(fabs(fd - jv) <= 1e-6 * scale + 1e-9, "tendon %d: J dir %.12g, central %.12g", t, jv, fd);
    checked++;
  }
  cr_assert_gt(checked, 0);
  free(q0), free(q), free(dir), free(J), free(Jx);
  grit_data_free(d);
  grit_model_free(m);
}

/* The row against central differences of the length (the flag's joints are hinges: q and v alike). */
Test(tendon_paths, flag_rows_against_central_differences) {
  rows_against_central_differences("mujoco_composite/flag/flag.xml", 12345u, 7, 0);
}

/* The flag stepped 20 times each way, then A: close (the rows differ by rounding only); the whole paths
 * (m->ten_full_paths) or a segment's terms as the point's velocity dotted (m->ten_point_cross). */
static void steps_close(int cross) {
  grit_data *d[2];
  grit_model *m[2];
  for (int w = 0; w < 2; ++w) {
    m[w] = load("mujoco_composite/flag/flag.xml", &d[w]);
    if (cross) m[w]->ten_point_cross = w;
    else m[w]->ten_full_paths = w;
    for (int i = 0; i < 20; ++i) cr_assert_eq(grit_step(d[w]), GRIT_OK);
  }
  const int nv = m[0]->nv, nx = 2 * nv;
  for (int i = 0; i < nv; ++i) {
    cr_expect(fabs(d[0]->qpos[i] - d[1]->qpos[i]) <= 1e-12, "q[%d]", i);
    cr_expect(fabs(d[0]->qvel[i] - d[1]->qvel[i]) <= 1e-10, "v[%d]", i);
  }
  double *A[2];
  for (int w = 0; w < 2; ++w) {
    A[w] = calloc((size_t)nx * nx, sizeof(double));
    cr_assert_eq(grit_step_derivatives(d[w], A[w], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[w]));
  }
  for (int c = 0; c < nx; ++c) {
    double cmax = 0.0, diff = 0.0;
    for (int r = 0; r < nx; ++r) cmax = fmax(cmax, fabs(A[0][(size_t)r * nx + c]));
    for (int r = 0; r < nx; ++r) diff = fmax(diff, fabs(A[0][(size_t)r * nx + c] - A[1][(size_t)r * nx + c]));
    cr_expect(diff <= 1e-9 * cmax, "A column %d: %g of %g", c, diff, cmax);
  }
  for (int w = 0; w < 2; ++w) free(A[w]), grit_data_free(d[w]), grit_model_free(m[w]);
}

Test(tendon_paths, flag_steps_and_derivatives_close) { steps_close(0); }
Test(tendon_paths, point_cross_steps_and_derivatives_close) { steps_close(1); }

/* A segment's terms as (p x u)^T w + u^T l (cx_u_twist) against u^T (w x p + l) (m->ten_point_cross): every
 * spatial row of the flag and of arm26 (wrapping muscles) within 1e-13 of the row's largest entry, the
 * lengths the same bits. */
static void cross_rows_close(const char *rel, int steps) {
  grit_data *d;
  grit_model *m = load(rel, &d);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  double *Jn = calloc((size_t)m->nv, sizeof(double)), *Jo = calloc((size_t)m->nv, sizeof(double));
  double worst = 0.0;
  for (int t = 0; t < m->ntendon; ++t) {
    if (m->ten_type[t] == GRIT_TENDON_FIXED) continue;
    m->ten_point_cross = 0;
    const double Ln = grit_tendon_length_jacobian(m, &d->kin, d->qpos, t, Jn, d->jscratch);
    m->ten_point_cross = 1;
    const double Lo = grit_tendon_length_jacobian(m, &d->kin, d->qpos, t, Jo, d->jscratch);
    cr_assert(memcmp(&Ln, &Lo, sizeof Ln) == 0, "%s: tendon %d's length", rel, t);
    double jmax = 0.0, diff = 0.0;
    for (int i = 0; i < m->nv; ++i) jmax = fmax(jmax, fabs(Jo[i])), diff = fmax(diff, fabs(Jn[i] - Jo[i]));
    cr_assert(diff <= 1e-13 * jmax, "%s: tendon %d: %g of %g", rel, t, diff, jmax);
    worst = fmax(worst, diff / jmax);
  }
  cr_log_info("%s: rows within %.3g of their largest entry", rel, worst);
  free(Jn), free(Jo);
  grit_data_free(d);
  grit_model_free(m);
}

Test(tendon_paths, point_cross_rows_close) {
  cross_rows_close("mujoco_composite/flag/flag.xml", 5);
  cross_rows_close("mujoco_model/arm26.xml", 20);
}

/* A tendon's row built in J's block (cx_row_in_place) and scattered from scratch (m->ten_row_scatter):
 * every spring row of the flag the same bits, then the flag stepped 10 times each way and A: the same
 * bits. */
Test(tendon_paths, rows_in_place_same_bits) {
  grit_data *d;
  grit_model *m = load("mujoco_composite/flag/flag.xml", &d);
  for (int i = 0; i < 5; ++i) cr_assert_eq(grit_step(d), GRIT_OK);
  cr_assert_not_null(d->cx_colptr);
  const int n = m->tree_dofnum[0];
  double *J[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
  int rows = 0;
  for (int t = 0; t < m->ntendon; ++t) {
    if (m->ten_ntree[t] != 1) continue;
    int ncols = 0;
    const int *cols = grit_cx_cols(m, d->cx_colptr, d->cx_cols, GRIT_CONSTRAINT_TENDON_SPRING, t, &ncols);
    grit_contact_params p[2];
    for (int w = 0; w < 2; ++w) {
      memset(&p[w], 0, sizeof p[w]);
      for (int i = 0; i < n; ++i) J[w][i] = 1.0; /* (zeroed by the call) */
      m->ten_row_scatter = w;
      double *const Jw[2] = {J[w], NULL};
      grit_cx_rows_cols(m, &d->kin, d->qpos, 0.002, GRIT_CONSTRAINT_TENDON_SPRING, t, 1, m->ten_tree + 2 * t, Jw, &p[w],
                        d->jscratch, cols, ncols);
    }
    m->ten_row_scatter = 0;
    cr_assert(memcmp(J[0], J[1], sizeof(double) * (size_t)n) == 0, "tendon %d's row", t);
    cr_assert(memcmp(&p[0].phi0, &p[1].phi0, sizeof p[0].phi0) == 0, "tendon %d's stretch", t);
    rows++;
  }
  cr_expect_eq(rows, m->ntendon);
  free(J[0]), free(J[1]);
  grit_data_free(d);
  grit_model_free(m);

  grit_data *e[2];
  grit_model *mm[2];
  double *A[2];
  for (int w = 0; w < 2; ++w) {
    mm[w] = load("mujoco_composite/flag/flag.xml", &e[w]);
    mm[w]->ten_row_scatter = w;
    for (int i = 0; i < 10; ++i) cr_assert_eq(grit_step(e[w]), GRIT_OK);
    const int nx = 2 * mm[w]->nv;
    A[w] = calloc((size_t)nx * nx, sizeof(double));
    cr_assert_eq(grit_step_derivatives(e[w], A[w], NULL, NULL, 0, NULL), GRIT_OK);
  }
  const int nv = mm[0]->nv, nx = 2 * nv;
  cr_expect(memcmp(e[0]->qpos, e[1]->qpos, sizeof(double) * (size_t)mm[0]->nq) == 0, "q");
  cr_expect(memcmp(e[0]->qvel, e[1]->qvel, sizeof(double) * (size_t)nv) == 0, "v");
  cr_expect(memcmp(A[0], A[1], sizeof(double) * (size_t)nx * nx) == 0, "A");
  for (int w = 0; w < 2; ++w) free(A[w]), grit_data_free(e[w]), grit_model_free(mm[w]);
}

/* A slide's segment term on two trees' paths as u^T l (cx_u_slide) against u^T (w x p + l) (m->ten_slide_full):
 * w is +0 there, so each of grid2pin's and the hammock's particle rows (three slides a side) equal, the lengths
 * the same bits; then each scene stepped 20 times each way: q, v and A equal (== : only a zero's sign may
 * differ), and grid2pin's rows against central differences of the length (the term is the row's). */
static void slide_rows_equal(const char *rel) {
  grit_data *d;
  grit_model *m = load(rel, &d);
  for (int i = 0; i < 5; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nv = m->nv;
  double *J[2] = {calloc((size_t)nv, sizeof(double)), calloc((size_t)nv, sizeof(double))};
  int slid = 0;
  for (int t = 0; t < m->ntendon; ++t) {
    if (m->ten_type[t] == GRIT_TENDON_FIXED) continue;
    double L[2];
    for (int w = 0; w < 2; ++w) {
      m->ten_slide_full = w;
      L[w] = grit_tendon_length_jacobian(m, &d->kin, d->qpos, t, J[w], d->jscratch);
    }
    m->ten_slide_full = 0;
    cr_assert(memcmp(&L[0], &L[1], sizeof L[0]) == 0, "%s: tendon %d's length", rel, t);
    for (int i = 0; i < nv; ++i) {
      cr_assert(J[0][i] == J[1][i], "%s: tendon %d, dof %d: %.17g, %.17g", rel, t, i, J[0][i], J[1][i]);
      slid += J[0][i] != 0.0 && m->jnt_type[m->dof_jnt[i]] == GRIT_JOINT_SLIDE;
    }
  }
  cr_assert_gt(slid, 0, "%s: no slide's term", rel);
  free(J[0]), free(J[1]);
  grit_data_free(d);
  grit_model_free(m);

  grit_data *e[2];
  grit_model *mm[2];
  for (int w = 0; w < 2; ++w) {
    mm[w] = load(rel, &e[w]);
    mm[w]->ten_slide_full = w;
    for (int i = 0; i < 20; ++i) cr_assert_eq(grit_step(e[w]), GRIT_OK, "%s", grit_data_last_error(e[w]));
  }
  const int nx = 2 * nv;
  for (int i = 0; i < nv; ++i)
    cr_assert(e[0]->qpos[i] == e[1]->qpos[i] && e[0]->qvel[i] == e[1]->qvel[i], "%s: dof %d", rel, i);
  double *A[2];
  for (int w = 0; w < 2; ++w) {
    A[w] = calloc((size_t)nx * nx, sizeof(double));
    cr_assert_eq(grit_step_derivatives(e[w], A[w], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(e[w]));
  }
  for (size_t i = 0; i < (size_t)nx * nx; ++i) cr_assert(A[0][i] == A[1][i], "%s: A entry %zu", rel, i);
  for (int w = 0; w < 2; ++w) free(A[w]), grit_data_free(e[w]), grit_model_free(mm[w]);
}

Test(tendon_paths, slide_terms_equal_the_point_velocity) {
  slide_rows_equal("mujoco_composite/composite/grid2pin.xml");
  slide_rows_equal("mujoco_composite/hammock/hammock.xml");
}

Test(tendon_paths, slide_rows_against_central_differences) {
  rows_against_central_differences("mujoco_composite/composite/grid2pin.xml", 4321u, 3, 1); /* (slides) */
}
