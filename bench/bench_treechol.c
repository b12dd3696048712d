/* SPDX-License-Identifier: Apache-2.0 */
/* bench_treechol — the Hessian of one branched tree, factored in tree order (treechol.c) or by the
 * dense block path, on synthetic legged trees of 12 to 60 dofs (a free torso and k legs of three hinges):
 * per size, the CPU time of one assembly (begin, four three-row chain constraints on random legs), its
 * factorization and a solve, and of a solve of 64 right-hand sides; the ratio tree order / dense. It
 * chose the size from which the tree order is taken (TREECHOL_MIN_NV in hessian.c;
 * docs/performance.md, stop 17, branch treechol).
 *
 *   bench_treechol [--reps N] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "model_internal.h"

static double cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

static grit_model *legged(int legs) {
  char xml[16384];
  int o = snprintf(xml, sizeof xml, "<mujoco><worldbody><body><freejoint/><geom type='sphere' size='0.2'/>");
  for (int k = 0; k < legs; ++k)
    o += snprintf(xml + o, sizeof xml - (size_t)o,
                  "<body pos='%g %g 0'><joint type='hinge' axis='1 0 0'/><geom type='sphere' size='0.05'/>"
                  "<body pos='0 0 -0.1'><joint type='hinge' axis='0 1 0'/><geom type='sphere' size='0.05'/>"
                  "<body pos='0 0 -0.1'><joint type='hinge' axis='0 1 0'/><geom type='sphere' size='0.05'/>"
                  "</body></body></body>",
                  0.1 * cos(k), 0.1 * sin(k));
  snprintf(xml + o, sizeof xml - (size_t)o, "</body></worldbody></mujoco>");
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_mjcf_load_string(xml, &m, &info, msg) != GRIT_OK) {
    fprintf(stderr, "bench_treechol: %s\n", msg);
    exit(1);
  }
  grit_mjcf_info_free(&info);
  return m;
}

/* A random SPD matrix with the tree's pattern (sum of outer products along each dof's path). */
static void tree_spd(const grit_model *m, double *A) {
  const int n = m->nv;
  unsigned s = 5;
  memset(A, 0, sizeof(double) * (size_t)n * n);
  double v[64];
  for (int k = 0; k < n; ++k) {
    memset(v, 0, sizeof v);
    for (int j = k; j >= 0; j = m->dof_parent[j]) v[j] = urand(&s);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A[i * n + j] += v[i] * v[j];
    A[k * n + k] += 0.1;
  }
}

/* Mean CPU microseconds of (assembly, factor, one solve) and of a 64-column solve. */
static void run(const grit_model *m, int allow, int reps, double *t1, double *t64) {
  const int n = m->nv;
  char msg[GRIT_MESSAGE_SIZE];
  grit_hessian *h;
  if (grit_hessian_create(m, 4, 0, &h, msg) != GRIT_OK) exit(1);
  grit_hessian_allow_tree_order(h, allow);
  double *A = malloc(sizeof(double) * (size_t)n * n), *J = calloc(4 * 3 * (size_t)n, sizeof(double));
  double *B = malloc(sizeof(double) * (size_t)n * 64), x[64], G[9] = {2, 0.1, 0, 0.1, 1, 0, 0, 0, 1};
  tree_spd(m, A);
  unsigned s = 11;
  for (int c = 0; c < 4; ++c) /* a foot: the path of a leg's last dof */
    for (int r = 0; r < 3; ++r)
      for (int j = n - 1 - 3 * c; j >= 0; j = m->dof_parent[j]) J[(size_t)(3 * c + r) * n + j] = urand(&s);
  const int tree[2] = {0, 0};
  double sum = 0.0, t0 = cpu_us();
  for (int it = 0; it < reps; ++it) {
    grit_hessian_pattern_reset(h);
    grit_hessian_pattern_commit(h);
    grit_hessian_begin(h, A);
    for (int c = 0; c < 4; ++c) {
      const double *Jp[2] = {J + (size_t)3 * c * n, NULL};
      grit_hessian_add(h, 3, 1, tree, Jp, G, -1);
    }
    double cond;
    if (grit_hessian_factor(h, &cond, msg) != GRIT_OK) exit(1);
    for (int i = 0; i < n; ++i) x[i] = 1.0 + i;
    grit_hessian_solve(h, x, 1);
    sum += x[0];
  }
  *t1 = (cpu_us() - t0) / reps;
  t0 = cpu_us();
  for (int it = 0; it < reps / 16 + 1; ++it) {
    for (int i = 0; i < n * 64; ++i) B[i] = 1.0 + i % 7;
    grit_hessian_solve(h, B, 64);
    sum += B[0];
  }
  *t64 = (cpu_us() - t0) / (reps / 16 + 1);
  if (!isfinite(sum)) printf("(non-finite)\n");
  free(A), free(J), free(B);
  grit_hessian_free(h);
}

int main(int argc, char **argv) {
  int reps = 20000;
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
  printf("tree of nv dofs (free torso, legs of 3 hinges): CPU us per assembly + factor + solve, per 64-column solve\n");
  printf("%4s | %9s %9s %6s | %9s %9s %6s\n", "nv", "tree", "dense", "ratio", "tree64", "dense64", "ratio");
  const int legs[] = {2, 3, 4, 5, 7, 10, 14, 18};
  for (size_t k = 0; k < sizeof legs / sizeof legs[0]; ++k) {
    grit_model *m = legged(legs[k]);
    double a1, a64, b1, b64, c1, c64, d1, d64; /* alternated: tree, dense, tree, dense; the minima */
    run(m, 1, reps, &a1, &a64);
    run(m, 0, reps, &b1, &b64);
    run(m, 1, reps, &c1, &c64);
    run(m, 0, reps, &d1, &d64);
    const double t1 = fmin(a1, c1), t64 = fmin(a64, c64), u1 = fmin(b1, d1), u64 = fmin(b64, d64);
    printf("%4d | %9.3f %9.3f %6.2f | %9.3f %9.3f %6.2f\n", m->nv, t1, u1, t1 / u1, t64, u64, t64 / u64);
    grit_model_free(m);
  }
  return 0;
}
