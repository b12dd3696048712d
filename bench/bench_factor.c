/* SPDX-License-Identifier: Apache-2.0 */
/* bench_factor — the contact Hessian's factorization on its three paths: dense LAPACK, the block-sparse
 * Cholesky on the tree graph (blockchol.h, grit's default) and CHOLMOD's supernodal Cholesky (AMD).
 *
 * For scenes of N free bodies (nv = 6 N, one 6x6 clique each) with about 1.5 contacts per body
 * between random neighbours (as in a settled pile), assembles H = A + sum J^T G J and times the
 * factorization plus one solve on each path, median of repeats, with the block factor's FLOP count.
 * Before the block path existed the dense/CHOLMOD crossover was nv = 180-240 on the 2-core development
 * machine (docs/performance.md has the current table). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#include "grit/grit.h"
#include "hessian.h"
#include "model_internal.h"

static double uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return lo + (hi - lo) * (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static grit_model *bodies(int n) {
  grit_builder *b;
  grit_builder_create(&b);
  for (int i = 0; i < n; ++i) {
    grit_body_def bd = grit_default_body_def();
    int body;
    grit_builder_add_body(b, &bd, &body);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_FREE;
    grit_builder_add_joint(b, body, &jd, NULL);
  }
  grit_model *m = NULL;
  grit_builder_compile(b, &m);
  grit_builder_free(b);
  return m;
}

/* median time (us) of factor + solve on one path */
static double time_path(grit_hessian *h, const grit_model *m, const double *A, int nc, const int *tr,
                        const double *J, const double *G, int path, int reps) {
  grit_hessian_force_path(h, path);
  double *t = malloc(sizeof(double) * (size_t)reps), *x = malloc(sizeof(double) * (size_t)m->nv), cond;
  char msg[GRIT_MESSAGE_SIZE];
  for (int r = 0; r < reps; ++r) {
    grit_hessian_begin(h, A);
    for (int i = 0; i < nc; ++i) {
      const int tree[2] = {tr[2 * i], tr[2 * i + 1]};
      const double *Jp[2] = {J + 36 * i, J + 36 * i + 18};
      grit_hessian_add(h, 3, 2, tree, Jp, G + 9 * i, grit_hessian_pattern_pair(h, tree[0], tree[1]));
    }
    for (int i = 0; i < m->nv; ++i) x[i] = 1.0;
    double t0 = now_us();
    if (grit_hessian_factor(h, &cond, msg) != GRIT_OK) {
      fprintf(stderr, "factor failed: %s\n", msg);
      exit(1);
    }
    grit_hessian_solve(h, x, 1);
    t[r] = now_us() - t0;
  }
  qsort(t, (size_t)reps, sizeof t[0], bench_cmp);
  double med = t[reps / 2];
  free(t);
  free(x);
  return med;
}

int main(void) {
  printf("%6s %6s %10s %12s %12s %12s %12s %14s\n", "bodies", "nv", "contacts", "dense_us", "block_us", "cholmod_us",
         "block_flops", "cholmod/block");
  const int sizes[] = {2, 4, 8, 12, 16, 20, 25, 30, 40, 60, 80, 120, 160};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int n = sizes[k];
    grit_model *m = bodies(n);
    unsigned long long s = 11;
    const int nc = (3 * n) / 2 > 0 ? (3 * n) / 2 : 1;
    int *tr = malloc(sizeof(int) * 2 * (size_t)nc);
    double *J = malloc(sizeof(double) * 36 * (size_t)nc), *G = malloc(sizeof(double) * 9 * (size_t)nc);
    double *A = calloc((size_t)m->nM, sizeof(double));
    for (int t = 0; t < m->ntree; ++t)
      for (int i = 0; i < 6; ++i) A[m->tree_madr[t] + 7 * i] = 1.0;
    grit_hessian *h;
    char msg[GRIT_MESSAGE_SIZE];
    if (grit_hessian_create(m, nc, 1 << 20, &h, msg) != GRIT_OK) return 1;
    grit_hessian_pattern_reset(h);
    for (int i = 0; i < nc; ++i) { /* neighbours within 3 indices: local contacts as in a pile */
      int a = (int)uniform(&s, 0, n - 1e-9), b = (a + 1 + (int)uniform(&s, 0, 3)) % n;
      if (a == b) b = (a + 1) % n;
      tr[2 * i] = a;
      tr[2 * i + 1] = b;
      for (int j = 0; j < 36; ++j) J[36 * i + j] = uniform(&s, -1, 1);
      double g = uniform(&s, 1, 100); /* a stiff normal, softer tangential */
      for (int j = 0; j < 9; ++j) G[9 * i + j] = 0;
      G[9 * i] = G[9 * i + 4] = 0.1 * g;
      G[9 * i + 8] = g;
      grit_hessian_pattern_pair(h, a, b);
    }
    grit_hessian_pattern_commit(h);
    const int reps = n < 40 ? 201 : 31;
    double td = time_path(h, m, A, nc, tr, J, G, 0, reps);
    double tb = time_path(h, m, A, nc, tr, J, G, 1, reps);
    const double fl = grit_hessian_flops(h);
    double tc = time_path(h, m, A, nc, tr, J, G, 2, reps);
    printf("%6d %6d %10d %12.2f %12.2f %12.2f %12.3g %14.2f\n", n, m->nv, nc, td, tb, tc, fl, tc / tb);
    grit_hessian_free(h);
    grit_model_free(m);
    free(tr);
    free(J);
    free(G);
    free(A);
  }
  return 0;
}
