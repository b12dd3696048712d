/* SPDX-License-Identifier: Apache-2.0 */
/* test_blockchol_small.c — the block Cholesky's vectorized Schur updates of particles' columns (3-dof
 * trees whose blocks below are all 3 x 3; blockchol_factor_simd.c) against the plain loops they replace
 * (grit_blockchol_small_kernel(b, 0)): the same factor bit for bit (also when a second factorization
 * reads the target blocks the first one recorded) and the same solutions, with a small
 * backward error, on random SPD matrices of particles coupled along a random graph (fill of every
 * kind), alone and beside a free body (columns the kernel does not take). */
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

/* np particles (three slides each) and, when `free_body`, a free body after them. */
static grit_model *particles(int np, int free_body) {
  char *xml = malloc(200 * (size_t)np + 512), *p = xml;
  p += sprintf(p, "<mujoco><worldbody>");
  for (int i = 0; i < np; ++i)
    p += sprintf(p, "<body pos='%d 0 0'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 1 0'/>"
                    "<joint type='slide' axis='0 0 1'/><geom type='sphere' size='0.1'/></body>", i);
  if (free_body) p += sprintf(p, "<body pos='0 2 0'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>");
  p += sprintf(p, "</worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->ntree, np + free_body);
  return m;
}

/* Adds w w^T over the dofs of trees a and b (a PSD term coupling them) for a few random w. */
static void add_pair_term(const grit_model *m, int a, int b, unsigned *seed, double *A) {
  const int nv = m->nv, na = m->tree_dofnum[a], nb = m->tree_dofnum[b];
  int idx[12];
  for (int i = 0; i < na; ++i) idx[i] = m->tree_dofadr[a] + i;
  for (int i = 0; i < nb; ++i) idx[na + i] = m->tree_dofadr[b] + i;
  for (int k = 0; k < 3; ++k) {
    double w[12];
    for (int i = 0; i < na + nb; ++i) w[i] = urand(seed);
    for (int i = 0; i < na + nb; ++i)
      for (int j = 0; j < na + nb; ++j) A[idx[i] * nv + idx[j]] += w[i] * w[j];
  }
}

/* Factors the matrix of np particles (and a free body) coupled by `npairs` random pairs with the kernel
 * (w = 0), without (w = 1) and with it but each column alone (w = 2: no pairs of a supernode's columns
 * fused, grit_blockchol_pair_kernel), compares the factors and the solutions bit for bit, and the
 * solutions to the matrix. */
static void check(int np, int free_body, int npairs, unsigned seed) {
  grit_model *m = particles(np, free_body);
  const int nv = m->nv, nt = m->ntree;
  double *A = calloc((size_t)nv * nv, sizeof(double)), *diag = calloc((size_t)m->nM, sizeof(double));
  int *pa = malloc(sizeof(int) * (size_t)npairs), *pb = malloc(sizeof(int) * (size_t)npairs), np2 = 0;
  unsigned char *used = calloc((size_t)nt * nt, 1);
  for (int k = 0; k < npairs; ++k) { /* distinct pairs a < b, mostly near neighbours (a pile's graph) */
    int a = (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt;
    int b = k % 3 ? (a + 1 + (k % 5)) % nt : (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt;
    if (a == b) continue;
    if (a > b) { const int t = a; a = b, b = t; }
    if (used[a * nt + b]) continue;
    used[a * nt + b] = 1, pa[np2] = a, pb[np2] = b, ++np2;
    add_pair_term(m, a, b, &seed, A);
  }
  for (int i = 0; i < nv; ++i) A[i * nv + i] += 0.5 + 0.25 * urand(&seed);
  for (int t = 0; t < nt; ++t) {
    const int a = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) diag[m->tree_madr[t] + i * n + j] = A[(a + i) * nv + a + j];
  }
  int *poff = malloc(sizeof(int) * (size_t)(np2 + 1)), *idx = malloc(sizeof(int) * (size_t)(np2 + 1));
  double *cb = malloc(sizeof(double) * (size_t)(36 * np2 + 1));
  for (int k = 0; k < np2; ++k) { /* rows tree pb, columns tree pa */
    const int na = m->tree_dofnum[pa[k]], nb = m->tree_dofnum[pb[k]];
    const int oa = m->tree_dofadr[pa[k]], ob = m->tree_dofadr[pb[k]];
    poff[k] = 36 * k, idx[k] = k;
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < na; ++j) cb[poff[k] + i * na + j] = A[(ob + i) * nv + oa + j];
  }
  const int nrhs = 3;
  double *B0 = malloc(sizeof(double) * (size_t)nv * nrhs), *X[3], *L[3];
  int fused = 0; /* columns p whose first row is p+1 and other rows p+1's: the pairs fused (w = 0) */
  size_t nx = 0;
  for (int k = 0; k < nv * nrhs; ++k) B0[k] = urand(&seed);
  for (int w = 0; w < 3; ++w) {
    grit_blockchol *b;
    char msg[GRIT_MESSAGE_SIZE];
    double cond;
    cr_assert_eq(grit_blockchol_create(m, np2 + 1, &b, msg), GRIT_OK, "%s", msg);
    grit_blockchol_small_kernel(b, w != 1);
    grit_blockchol_particle_kernel(b, w != 1); /* (bigstep's kernel for the same columns: off too) */
    grit_blockchol_pair_kernel(b, w == 0);
    cr_assert_eq(grit_blockchol_analyze(b, np2, pa, pb, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_blockchol_factor(b, diag, cb, poff, idx, NULL, &cond, msg), GRIT_OK, "%s", msg);
    double *L1 = malloc(sizeof(double) * b->cap_x);
    memcpy(L1, b->Lx, sizeof(double) * b->cap_x);
    /* again: the kernel's second factorization reads the target blocks the first one recorded */
    cr_assert_eq(grit_blockchol_factor(b, diag, cb, poff, idx, NULL, &cond, msg), GRIT_OK, "%s", msg);
    nx = 0; /* the factor's extent: past its last block */
    for (int p = 0; p < nt; ++p) {
      const int n = m->tree_dofnum[b->order[p]];
      nx = (size_t)b->doff[p] + (size_t)n * n > nx ? (size_t)b->doff[p] + (size_t)n * n : nx;
      for (int e = b->colptr[p]; e < b->colptr[p + 1]; ++e) {
        const size_t end = (size_t)b->roff[e] + (size_t)m->tree_dofnum[b->order[b->rows[e]]] * n;
        nx = end > nx ? end : nx;
      }
    }
    for (int p = 0; w == 0 && p + 1 < nt; ++p) {
      const int e0 = b->colptr[p], e1 = b->colptr[p + 1], nr = b->colptr[p + 2] - e1;
      fused += nr > 0 && e1 - e0 == nr + 1 && b->rows[e0] == p + 1 &&
               !memcmp(b->rows + e0 + 1, b->rows + e1, sizeof(int) * (size_t)nr);
    }
    L[w] = malloc(sizeof(double) * nx);
    memcpy(L[w], b->Lx, sizeof(double) * nx);
    cr_expect(memcmp(L1, L[w], sizeof(double) * nx) == 0, "%d particles: the second factorization differs", np);
    free(L1);
    X[w] = malloc(sizeof(double) * (size_t)nv * nrhs);
    memcpy(X[w], B0, sizeof(double) * (size_t)nv * nrhs);
    for (int c = 0; c < nrhs; ++c) grit_blockchol_solve(b, X[w] + (size_t)c * nv, 1, NULL);
    grit_blockchol_free(b);
  }
  for (int w = 1; w < 3; ++w) {
    cr_expect(memcmp(L[0], L[w], sizeof(double) * nx) == 0, "%d particles, %d pairs: the factor differs from %s",
              np, np2, w == 1 ? "the plain loops'" : "the unfused kernel's");
    cr_expect(memcmp(X[0], X[w], sizeof(double) * (size_t)nv * nrhs) == 0, "%d particles: the solutions differ (%d)",
              np, w);
  }
  if (np >= 60) cr_expect(fused > 0, "%d particles: no pair of columns fused", np);
  for (int c = 0; c < nrhs; ++c) {
    const double e = solve_backward_error(nv, A, X[0] + (size_t)c * nv, B0 + (size_t)c * nv);
    cr_expect(e < 8.0 * nv * DBL_EPSILON, "%d particles, column %d: backward error %.3g", np, c, e);
  }
  free(A), free(diag), free(pa), free(pb), free(used), free(poff), free(idx), free(cb), free(B0);
  free(X[0]), free(X[1]), free(X[2]), free(L[0]), free(L[1]), free(L[2]);
  grit_model_free(m);
}

Test(blockchol_small, particle_kernel_same_bits_as_plain_loops) {
  check(2, 0, 1, 3u);
  check(12, 0, 30, 5u);
  check(60, 0, 150, 7u);
  check(150, 0, 500, 11u);
  check(40, 1, 120, 13u); /* a free body among the particles */
  check(200, 0, 1500, 17u); /* denser: long trailing columns, their targets mapped and searched */
}

/* The minimum-degree order by the heap and popcounts against the linear search and the bit loops: the
 * same order, hence the same factor, on random graphs of particles (trees of one size) and of mixed
 * trees (the bit loops stay; the heap alone). */
static void check_order(int np, int free_body, int npairs, unsigned seed) {
  grit_model *m = particles(np, free_body);
  const int nt = m->ntree;
  int *pa = malloc(sizeof(int) * (size_t)npairs), *pb = malloc(sizeof(int) * (size_t)npairs), n = 0;
  unsigned char *used = calloc((size_t)nt * nt, 1);
  for (int k = 0; k < npairs; ++k) {
    int a = (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt, c = (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt;
    if (k % 4) c = (a + 1 + k % 7) % nt;
    if (a == c) continue;
    if (a > c) { const int t = a; a = c, c = t; }
    if (used[a * nt + c]) continue;
    used[a * nt + c] = 1, pa[n] = a, pb[n] = c, ++n;
  }
  grit_blockchol *b[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_blockchol_create(m, n + 1, &b[w], msg), GRIT_OK, "%s", msg);
    grit_blockchol_fast_order(b[w], w == 0);
    cr_assert_eq(grit_blockchol_analyze(b[w], n, pa, pb, msg), GRIT_OK, "%s", msg);
  }
  cr_expect(memcmp(b[0]->order, b[1]->order, sizeof(int) * (size_t)nt) == 0, "%d trees, %d pairs: the orders differ",
            nt, n);
  cr_expect(b[0]->colptr[nt] == b[1]->colptr[nt], "%d trees: the fills differ", nt);
  cr_expect(memcmp(b[0]->rows, b[1]->rows, sizeof(int) * (size_t)b[0]->colptr[nt]) == 0,
            "%d trees: the patterns differ", nt);
  grit_blockchol_free(b[0]), grit_blockchol_free(b[1]);
  free(pa), free(pb), free(used);
  grit_model_free(m);
}

Test(blockchol_small, heap_order_same_as_linear_search) {
  check_order(2, 0, 1, 3u);
  check_order(30, 0, 60, 5u);
  check_order(200, 0, 600, 7u);
  check_order(300, 0, 2000, 9u);
  check_order(100, 1, 300, 11u); /* a free body: trees of two sizes */
}

/* Factors the matrix of m's particles coupled by pairs (pa, pb) (random SPD terms) with b's analysis of
 * them, solves one random column and returns the backward error. */
static double solve_error(const grit_model *m, grit_blockchol *b, int n, const int *pa, const int *pb, unsigned seed) {
  const int nv = m->nv, nt = m->ntree;
  double *A = calloc((size_t)nv * nv, sizeof(double)), *diag = calloc((size_t)m->nM, sizeof(double));
  for (int k = 0; k < n; ++k) add_pair_term(m, pa[k], pb[k], &seed, A);
  for (int i = 0; i < nv; ++i) A[i * nv + i] += 0.5 + 0.25 * urand(&seed);
  for (int t = 0; t < nt; ++t) {
    const int a = m->tree_dofadr[t], d = m->tree_dofnum[t];
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) diag[m->tree_madr[t] + i * d + j] = A[(a + i) * nv + a + j];
  }
  int *poff = malloc(sizeof(int) * (size_t)(n + 1)), *idx = malloc(sizeof(int) * (size_t)(n + 1));
  double *cb = malloc(sizeof(double) * (size_t)(36 * n + 1)), *x = malloc(sizeof(double) * (size_t)nv);
  double *rhs = malloc(sizeof(double) * (size_t)nv), cond;
  for (int k = 0; k < n; ++k) {
    const int na = m->tree_dofnum[pa[k]], nb = m->tree_dofnum[pb[k]];
    const int oa = m->tree_dofadr[pa[k]], ob = m->tree_dofadr[pb[k]];
    poff[k] = 36 * k, idx[k] = k;
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < na; ++j) cb[poff[k] + i * na + j] = A[(ob + i) * nv + oa + j];
  }
  for (int i = 0; i < nv; ++i) rhs[i] = x[i] = urand(&seed);
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_blockchol_factor(b, diag, cb, poff, idx, NULL, &cond, msg), GRIT_OK, "%s", msg);
  grit_blockchol_solve(b, x, 1, NULL);
  const double e = solve_backward_error(nv, A, x, rhs);
  free(A), free(diag), free(poff), free(idx), free(cb), free(x), free(rhs);
  return e;
}

/* The order kept when the pattern changes (blockchol_keep.c) against a fresh order each time
 * (grit_blockchol_keep_order(b, 0)): the same pattern again gives the fresh analysis's fill exactly
 * (the elimination tree's fill of an order is the elimination's); a grown pattern (a pile's contacts
 * engaging, a tenth more pairs at a time) under the kept order factors and solves with a small backward
 * error, and the kept analyses happen (only with it allowed, only on components of more than 64 trees). */
static void check_keep(int np, int npairs, unsigned seed) {
  grit_model *m = particles(np, 0);
  const int nt = m->ntree;
  int *pa = malloc(sizeof(int) * (size_t)npairs), *pb = malloc(sizeof(int) * (size_t)npairs), n = 0;
  unsigned char *used = calloc((size_t)nt * nt, 1);
  for (int k = 0; k < npairs; ++k) { /* near neighbours mostly, as check_order */
    int a = (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt, c = (int)((urand(&seed) + 1.0) * 0.5 * nt) % nt;
    if (k % 4) c = (a + 1 + k % 7) % nt;
    if (a == c) continue;
    if (a > c) { const int t = a; a = c, c = t; }
    if (used[a * nt + c]) continue;
    used[a * nt + c] = 1, pa[n] = a, pb[n] = c, ++n;
  }
  grit_blockchol *b[2];
  char msg[GRIT_MESSAGE_SIZE];
  for (int w = 0; w < 2; ++w) {
    cr_assert_eq(grit_blockchol_create(m, n + 1, &b[w], msg), GRIT_OK, "%s", msg);
    grit_blockchol_keep_order(b[w], w == 0);
  }
  for (int w = 0; w < 2; ++w) /* the same pattern twice: kept (w = 0) or ordered afresh (w = 1) */
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_blockchol_analyze(b[w], n, pa, pb, msg), GRIT_OK, "%s", msg);
  cr_expect_eq(b[0]->kept, nt > 64 ? 1 : 0, "%d trees: analyses that kept the order: %ld", nt, b[0]->kept);
  cr_expect_eq(b[1]->kept, 0);
  cr_expect(memcmp(b[0]->order, b[1]->order, sizeof(int) * (size_t)nt) == 0, "%d trees: the orders differ", nt);
  cr_expect(b[0]->colptr[nt] == b[1]->colptr[nt] &&
                memcmp(b[0]->colptr, b[1]->colptr, sizeof(int) * (size_t)(nt + 1)) == 0 &&
                memcmp(b[0]->rows, b[1]->rows, sizeof(int) * (size_t)b[0]->colptr[nt]) == 0 &&
                memcmp(b[0]->roff, b[1]->roff, sizeof(int) * (size_t)b[0]->colptr[nt]) == 0,
            "%d trees: the kept order's fill differs from the fresh one's", nt);
  cr_expect(memcmp(b[0]->part, b[1]->part, sizeof(int) * (size_t)nt) == 0, "%d trees: the parts differ", nt);
  for (int k = n / 2; k <= n; k += n / 10 + 1) { /* growing: half the pairs, then a tenth more at a time */
    const int kk = k < n ? k : n;
    for (int w = 0; w < 2; ++w) {
      cr_assert_eq(grit_blockchol_analyze(b[w], kk, pa, pb, msg), GRIT_OK, "%s", msg);
      const double e = solve_error(m, b[w], kk, pa, pb, seed + (unsigned)k);
      cr_expect(e < 8.0 * m->nv * DBL_EPSILON, "%d trees, %d pairs, keep %d: backward error %.3g", nt, kk, w == 0, e);
    }
  }
  if (nt > 64) cr_expect(b[0]->kept > 1, "%d trees: the grown patterns never kept the order", nt);
  cr_expect_eq(b[1]->kept, 0);
  grit_blockchol_free(b[0]), grit_blockchol_free(b[1]);
  free(pa), free(pb), free(used);
  grit_model_free(m);
}

Test(blockchol_small, kept_order_fill_and_solves) {
  check_keep(30, 60, 5u);    /* few trees: never kept */
  check_keep(200, 600, 7u);
  check_keep(300, 1200, 9u);
}
