/* SPDX-License-Identifier: Apache-2.0 */
/* test_blockchol_pull.c — the many-column solves row by row (blockchol_pull.c) against the block-by-
 * block sweeps they replace (grit_blockchol_pull(b, 0)), bit for bit: many trees of 1, 3 and 6 dofs
 * (slides, particles, free bodies) coupled in a random graph (fill by the minimum-degree order), random
 * SPD blocks, right-hand sides zero outside a few trees (the forward sweep's skips) and some zero
 * everywhere, 1 to two chunks of columns, by grit_blockchol_solve_many and grit_blockchol_solve_parts;
 * and the solution against the matrix (backward error). Also a part's columns moved into the solves'
 * rows over its runs of consecutive dofs against tree by tree (grit_blockchol_runs(b, 0)). */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"
#include "xml_load_util.h"

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* nt trees, tree i of dims[i % nd] dofs (1: a slide, 3: three slides, 6: a free body). */
static grit_model *trees(int nt, const int *dims, int nd) {
  char *xml = malloc(300 * (size_t)nt + 256), *p = xml;
  p += sprintf(p, "<mujoco><worldbody>");
  for (int t = 0; t < nt; ++t) {
    const int n = dims[t % nd];
    p += sprintf(p, "<body pos='%d 0 0'>", t);
    if (n == 6) p += sprintf(p, "<freejoint/>");
    for (int k = 0; n != 6 && k < n; ++k)
      p += sprintf(p, "<joint type='slide' axis='%d %d %d'/>", k % 3 == 0, k % 3 == 1, k % 3 == 2);
    p += sprintf(p, "<geom type='sphere' size='0.05'/></body>");
  }
  p += sprintf(p, "</worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->ntree, nt);
  return m;
}

/* Pairs of a grid-like graph over the trees (each to the next and to the one `w` on) with some
 * random links, and every tree of index >= split left out (a second part of lone trees); then each index
 * times ev (the part's trees not consecutive, the others alone). */
static int pairs(int nt, int w, int split, int ev, unsigned *seed, int *pa, int *pb) {
  int np = 0;
  for (int t = 0; t < split; ++t) {
    if (t + 1 < split && (t + 1) % w) pa[np] = t, pb[np++] = t + 1;
    if (t + w < split) pa[np] = t, pb[np++] = t + w;
  }
  for (int k = 0; k < split / 8; ++k) {
    const int a = (int)((urand(seed) + 1.0) * 0.5 * split) % split, c = (int)((urand(seed) + 1.0) * 0.5 * split) % split;
    int dup = a == c;
    const int lo = a < c ? a : c, hi = a < c ? c : a;
    for (int i = 0; i < np && !dup; ++i) dup = pa[i] == lo && pb[i] == hi;
    if (!dup) pa[np] = lo, pb[np++] = hi;
  }
  for (int k = 0; k < np && ev > 1; ++k) pa[k] *= ev, pb[k] *= ev; /* the part's trees every ev-th */
  (void)nt;
  return np;
}

/* The matrix (dense nv x nv) of the trees and pairs: random blocks, diagonally dominant. */
static void matrix(const grit_model *m, int np, const int *pa, const int *pb, unsigned *seed, double *A) {
  const int nv = m->nv;
  memset(A, 0, sizeof(double) * (size_t)nv * nv);
  for (int t = 0; t < m->ntree; ++t) {
    const int a = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) A[(a + i) * nv + a + j] = A[(a + j) * nv + a + i] = 0.3 * urand(seed);
  }
  for (int k = 0; k < np; ++k) {
    const int a = m->tree_dofadr[pa[k]], na = m->tree_dofnum[pa[k]];
    const int c = m->tree_dofadr[pb[k]], nb = m->tree_dofnum[pb[k]];
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < na; ++j) A[(c + i) * nv + a + j] = A[(a + j) * nv + c + i] = 0.3 * urand(seed);
  }
  for (int i = 0; i < nv; ++i) {
    double s = 0.0;
    for (int j = 0; j < nv; ++j) s += fabs(A[i * nv + j]);
    A[i * nv + i] = s + 0.5;
  }
}

/* Right-hand sides: column c nonzero on trees c/4 and c/4+1 (mod nt) only, every fifth zero. */
static void rhs(const grit_model *m, int nc, unsigned *seed, double *B) {
  const int nv = m->nv, nt = m->ntree;
  memset(B, 0, sizeof(double) * (size_t)nv * nc);
  for (int c = 0; c < nc; ++c) {
    if (c % 5 == 4) continue;
    for (int d = 0; d < 2; ++d) {
      const int t = (c / 4 + d) % nt, a = m->tree_dofadr[t];
      for (int i = 0; i < m->tree_dofnum[t]; ++i) B[(size_t)c * nv + a + i] = urand(seed);
    }
  }
}

static void check(int nt, const int *dims, int nd, int w, int split, int ev, unsigned seed) {
  grit_model *m = trees(nt, dims, nd);
  const int nv = m->nv, maxc = 2 * RHS_CHUNK + 9;
  int *pa = malloc(sizeof(int) * 4 * (size_t)nt), *pb = malloc(sizeof(int) * 4 * (size_t)nt);
  const int np = pairs(nt, w, split, ev, &seed, pa, pb);
  double *A = malloc(sizeof(double) * (size_t)nv * nv), *diag = calloc((size_t)m->nM, sizeof(double));
  matrix(m, np, pa, pb, &seed, A);
  for (int t = 0; t < nt; ++t) {
    const int a = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) diag[m->tree_madr[t] + i * n + j] = A[(a + i) * nv + a + j];
  }
  int *poff = malloc(sizeof(int) * (size_t)(np + 1)), *idx = malloc(sizeof(int) * (size_t)(np + 1)), off = 0;
  double *cb = malloc(sizeof(double) * 36 * (size_t)(np + 1));
  for (int k = 0; k < np; ++k) { /* rows: tree pb[k], columns: tree pa[k] */
    const int a = m->tree_dofadr[pa[k]], na = m->tree_dofnum[pa[k]];
    const int c = m->tree_dofadr[pb[k]], nb = m->tree_dofnum[pb[k]];
    poff[k] = off, idx[k] = k;
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < na; ++j) cb[off + i * na + j] = A[(c + i) * nv + a + j];
    off += na * nb;
  }
  const int ncs[] = {1, 3, 5, 8, 9, 17, 33, RHS_CHUNK, maxc};
  const int nn = (int)(sizeof ncs / sizeof ncs[0]);
  double *B0 = malloc(sizeof(double) * (size_t)nv * maxc), *X[3];
  rhs(m, maxc, &seed, B0);
  int *part = malloc(sizeof(int) * (size_t)maxc);
  for (int w2 = 0; w2 < 3; ++w2) { /* all on; the block sweeps; the moves tree by tree */
    grit_blockchol *b;
    char msg[GRIT_MESSAGE_SIZE];
    double cond;
    cr_assert_eq(grit_blockchol_create(m, np + 1, &b, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_analyze(b, np, pa, pb, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_factor(b, diag, cb, poff, idx, NULL, &cond, msg), GRIT_OK, "%s", msg);
    grit_blockchol_pull(b, w2 != 1);
    grit_blockchol_runs(b, w2 != 2);
    int nparts;
    const int *tp = grit_blockchol_parts(b, &nparts);
    for (int c = 0; c < maxc; ++c) part[c] = c % 5 == 4 ? tp[0] : tp[(c / 4) % nt] == tp[(c / 4 + 1) % nt] ? tp[(c / 4) % nt] : -1;
    X[w2] = malloc(sizeof(double) * (size_t)nv * maxc * nn * 2);
    for (int r = 0; r < nn; ++r)
      for (int how = 0; how < 2; ++how) {
        double *x = X[w2] + (size_t)nv * maxc * (2 * r + how);
        memcpy(x, B0, sizeof(double) * (size_t)nv * ncs[r]);
        if (how) grit_blockchol_solve_parts(b, x, ncs[r], part);
        else grit_blockchol_solve_many(b, x, ncs[r]);
      }
    grit_blockchol_free(b);
  }
  for (int r = 0; r < 2 * nn; ++r) {
    const int nc = ncs[r / 2];
    const size_t o = (size_t)nv * maxc * r;
    cr_expect(memcmp(X[0] + o, X[1] + o, sizeof(double) * (size_t)nv * nc) == 0,
              "%d trees, %d columns (%s): the pulled rows' solution differs from the sweeps'", nt, nc,
              r % 2 ? "parts" : "many");
    cr_expect(memcmp(X[0] + o, X[2] + o, sizeof(double) * (size_t)nv * nc) == 0,
              "%d trees, %d columns (%s): the moves by runs differ from the moves tree by tree", nt, nc,
              r % 2 ? "parts" : "many");
    for (int c = 0; c < nc; ++c) {
      if (c % 5 == 4) { /* a zero column: a zero solution */
        for (int i = 0; i < nv; ++i) cr_expect(X[0][o + (size_t)c * nv + i] == 0.0, "column %d row %d not zero", c, i);
        continue;
      }
      const double e = solve_backward_error(nv, A, X[0] + o + (size_t)c * nv, B0 + (size_t)c * nv);
      cr_expect(e < 8.0 * nv * DBL_EPSILON, "%d trees, column %d: backward error %.3g", nt, c, e);
    }
  }
  free(A), free(diag), free(cb), free(B0), free(X[0]), free(X[1]), free(X[2]), free(pa), free(pb), free(poff), free(idx), free(part);
  grit_model_free(m);
}

Test(blockchol_pull, pulled_rows_same_bits_as_block_sweeps) {
  const int three[] = {3}, mixed[] = {3, 1, 6, 3, 2}, free6[] = {6, 3}, one[] = {1, 3, 4};
  check(40, three, 1, 8, 40, 1, 1u); /* particles in a grid (the composites' parts) */
  check(40, three, 1, 8, 30, 1, 2u); /* and ten lone ones */
  check(40, three, 1, 4, 20, 2, 7u); /* the grid's trees every other one, the others alone */
  check(24, mixed, 5, 5, 24, 1, 3u); /* 1, 2, 3, 6 dofs: free bodies among 24 positions (their groups) */
  check(12, mixed, 5, 4, 12, 1, 4u); /* fewer than 16 positions: every row pulled */
  check(30, free6, 2, 6, 25, 1, 5u);
  check(30, mixed, 5, 3, 10, 3, 8u);
  check(20, one, 3, 5, 20, 1, 6u);
}
