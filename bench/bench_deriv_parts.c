/* SPDX-License-Identifier: Apache-2.0 */
/* bench_deriv_parts — what the derivatives' solves and writes work on: the parts of the kept factor of
 * H after a step, the islands of the block form, and the constraints between two trees counted by
 * whether they enter H (G != 0) and the residual (impulse != 0). Also a harness for callgrind (N block
 * calls after the warm-up; --toggle-collect=grit_step_derivatives_blocks) and a writer of A and B
 * (dense, and the block form scattered to dense) for comparisons of results before and after a change.
 * With --dense the N calls are of grit_step_derivatives (the dense A, B; callgrind:
 * --toggle-collect=grit_step_derivatives). With --cpu-time the calls are timed by the thread's CPU clock (their median and quartiles: the same
 * state every call, so that two builds of the library can be compared on one scene).
 *   bench_deriv_parts [--model lagged|similar|sap] [--warm N] [--calls N] [--steps K] [--dense] [--cpu-time] [--lenient] [--dump FILE] SCENE
 *   SCENE: clutterN (scene_clutter(N), dt 2 ms; default warm-up 1200 steps) or FILE.xml (the file's
 *   settings, default warm-up 200 steps; --lenient: loaded leniently, as bench_mujoco --lenient). --steps K: after
 *   the calls (and the dump), K more steps, timed each (with --cpu-time: their mean and median printed), so
 *   that a step's and a call's instructions (callgrind, --toggle-collect=grit_step: K and 0 steps) and
 *   times at one state compare (instructions per microsecond). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "constraint.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "scenes.h"
#include "solver.h"

static void fail(const char *what, grit_data *d) {
  fprintf(stderr, "bench_deriv_parts: %s: %s\n", what, d ? grit_data_last_error(d) : "");
  exit(1);
}

/* The parts, islands and couplings after the last block call. */
static void report(grit_data *d, const grit_jacobian_blocks *J) {
  const grit_model *m = d->model;
  int np = 0;
  const int *part = grit_solver_factor_parts(d->solver, &np);
  int *size = calloc((size_t)m->ntree + 1, sizeof(int));
  int largest = 0, multi = 0;
  for (int t = 0; part && t < m->ntree; ++t) size[part[t]]++;
  for (int p = 0; part && p < np; ++p) {
    largest = size[p] > largest ? size[p] : largest;
    multi += size[p] > 1;
  }
  printf("factor: %d parts (%d of more than one tree, the largest %d trees)\n", part ? np : 1, multi, largest);
  printf("parts of more than one tree (trees):");
  for (int p = 0; part && p < np; ++p)
    if (size[p] > 1) printf(" %d", size[p]);
  printf("\nblock form: %d blocks, %.3f MB; blocks of more than one tree (trees):", grit_jacobian_blocks_count(J),
         grit_jacobian_blocks_bytes(J) / 1048576.0);
  for (int k = 0; k < grit_jacobian_blocks_count(J); ++k) {
    grit_jacobian_block b;
    grit_jacobian_blocks_get(J, k, &b);
    if (b.nx > 12) printf(" %d", b.nx / 12);
  }
  /* constraints between two trees: G zero or not, impulse zero or not; and whether their trees lie in
   * one part */
  int cnt[2][2] = {{0, 0}, {0, 0}}, cross = 0;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int i = 0; i < d->stats.nconstraints; ++i) {
    if (c[i].ntree != 2) continue;
    int gz = 1, fz = 1;
    for (int k = 0; k < c[i].dim * c[i].dim; ++k) gz &= c[i].G[k] == 0.0;
    for (int k = 0; k < c[i].dim; ++k) fz &= c[i].gamma[k] == 0.0;
    cnt[gz][fz]++;
    if (getenv("PARTS_VERBOSE") && !gz)
      printf("  pair %2d-%2d phi0 %+.3e mm  vn %+.3e  gamma_n %.3e  G_nn %.3e  parts %d %d\n", c[i].tree[0], c[i].tree[1],
             1e3 * c[i].p.phi0, c[i].vc[2], c[i].gamma[2], c[i].G[8], part ? part[c[i].tree[0]] : 0, part ? part[c[i].tree[1]] : 0);
    if (part && part[c[i].tree[0]] != part[c[i].tree[1]]) cross++;
  }
  /* the largest component of the trees joined by the couplings of H in penetration (phi0 <= 0) only: what
   * the parts would be without the couplings across a gap */
  int *root = calloc((size_t)m->ntree, sizeof(int)), *cs = calloc((size_t)m->ntree, sizeof(int)), big = 0;
  for (int t = 0; t < m->ntree; ++t) root[t] = t;
  for (int i = 0; i < d->stats.nconstraints; ++i) {
    int gz = 1;
    for (int k = 0; k < c[i].dim * c[i].dim; ++k) gz &= c[i].G[k] == 0.0;
    if (c[i].ntree != 2 || gz || (c[i].kind <= GRIT_CONSTRAINT_SAP && c[i].p.phi0 > 0.0)) continue;
    int x = c[i].tree[0], y = c[i].tree[1];
    while (root[x] != x) x = root[x];
    while (root[y] != y) y = root[y];
    if (x != y) root[x] = y;
  }
  for (int t = 0; t < m->ntree; ++t) {
    int x = t;
    while (root[x] != x) x = root[x];
    big = ++cs[x] > big ? cs[x] : big;
  }
  printf("\nwithout the couplings across a gap (phi0 > 0) the largest part would have %d trees", big);
  free(root), free(cs);
  printf("\nconstraints between two trees: G != 0: %d (impulse != 0: %d, = 0: %d); G = 0: %d (impulse != 0: %d, = 0: "
         "%d); across parts: %d\n",
         cnt[0][0] + cnt[0][1], cnt[0][0], cnt[0][1], cnt[1][0] + cnt[1][1], cnt[1][0], cnt[1][1], cross);
  free(size);
}

static void dump(grit_data *d, grit_jacobian_blocks *J, const char *path) {
  const grit_model *m = d->model;
  const size_t nx = 2 * (size_t)m->nv + (size_t)m->na, nu = (size_t)m->nu; /* x = (q, v, act) */
  double *A = malloc(sizeof(double) * nx * nx), *B = malloc(sizeof(double) * (nx * nu + 1));
  double *Ab = malloc(sizeof(double) * nx * nx), *Bb = malloc(sizeof(double) * (nx * nu + 1));
  if (grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL) != GRIT_OK) fail("derivatives", d);
  if (grit_step_derivatives_blocks(d, J) != GRIT_OK) fail("block derivatives", d);
  grit_jacobian_blocks_to_dense(J, Ab, nu ? Bb : NULL);
  FILE *f = fopen(path, "wb");
  if (!f) fail(path, NULL);
  fwrite(A, sizeof(double), nx * nx, f);
  fwrite(B, sizeof(double), nx * nu, f);
  fwrite(Ab, sizeof(double), nx * nx, f);
  fwrite(Bb, sizeof(double), nx * nu, f);
  fclose(f);
  free(A), free(B), free(Ab), free(Bb);
}

int main(int argc, char **argv) {
  int model = -1, warm = -1, calls = 0, steps = 0, dense = 0, lenient = 0, a = 1;
  const char *out = NULL;
  for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
    if (!strcmp(argv[a], "--lenient")) { /* a flag: what grit refuses ignored (bench_mujoco's --lenient) */
      lenient = 1;
      --a;
      continue;
    }
    if (!strcmp(argv[a], "--cpu-time") || !strcmp(argv[a], "--dense")) {
      if (argv[a][2] == 'c') bench_clock_cpu = 1;
      else dense = 1;
      a--;
      continue;
    }
    if (!strcmp(argv[a], "--model"))
      model = !strcmp(argv[a + 1], "lagged") ? 0 : !strcmp(argv[a + 1], "similar") ? 1 : !strcmp(argv[a + 1], "sap") ? 2 : -2;
    else if (!strcmp(argv[a], "--warm")) warm = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--calls")) calls = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--steps")) steps = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--dump")) out = argv[a + 1];
    else model = -2;
  }
  if (a + 1 != argc || model < -1) {
    fprintf(stderr, "usage: bench_deriv_parts [--model lagged|similar|sap] [--warm N] [--calls N] [--steps K] [--dense] [--cpu-time] [--dump FILE] SCENE\n");
    return 2;
  }
  char msg[GRIT_MESSAGE_SIZE];
  grit_model *m;
  grit_data *d;
  grit_mjcf_info info;
  grit_step_settings st = grit_default_step_settings();
  const int file = strstr(argv[a], ".xml") != NULL;
  if (file) {
    grit_mjcf_load_options lopt = grit_mjcf_default_load_options();
    lopt.lenient = lenient;
    if (grit_mjcf_load_file_with(argv[a], &lopt, &m, &info, msg) != GRIT_OK) {
      fprintf(stderr, "bench_deriv_parts: %s\n", msg);
      return 1;
    }
    st = info.settings;
  } else if (strncmp(argv[a], "clutter", 7) || scene_clutter(atoi(argv[a] + 7), 2e-3, &m, msg) != GRIT_OK) {
    fprintf(stderr, "bench_deriv_parts: no scene %s\n", argv[a]);
    return 2;
  }
  if (grit_data_create(m, &d) != GRIT_OK) fail("data", NULL);
  if (model >= 0) st.contact_model = model;
  grit_data_set_step_settings(d, &st);
  if (warm < 0) warm = file ? 200 : 1200;
  for (int i = 0; i <= warm; ++i)
    if (grit_step(d) != GRIT_OK) fail("step", d);
  grit_jacobian_blocks *J;
  if (grit_jacobian_blocks_create(m, &J) != GRIT_OK) fail("blocks", NULL);
  if (grit_step_derivatives_blocks(d, J) != GRIT_OK) fail("block derivatives", d);
  double *tc = malloc(sizeof(double) * (size_t)(calls + 1));
  const size_t nx = 2 * (size_t)m->nv + (size_t)m->na, nu = (size_t)m->nu; /* activations: (q, v, act) */
  double *A = dense ? malloc(sizeof(double) * nx * nx) : NULL, *B = dense ? malloc(sizeof(double) * (nx * nu + 1)) : NULL;
  for (int i = 0; i < calls; ++i) {
    const double t0 = bench_clock_cpu ? now_us() : 0.0;
    if (dense ? grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL) : grit_step_derivatives_blocks(d, J))
      fail("derivatives", d);
    tc[i] = bench_clock_cpu ? now_us() - t0 : 0.0;
  }
  free(A), free(B);
  if (bench_clock_cpu && calls > 0) {
    qsort(tc, (size_t)calls, sizeof(double), bench_cmp);
    printf("%s call: median %.1f us (quartiles %.1f, %.1f; tenth percentile %.1f) over %d calls\n",
           dense ? "dense" : "block", tc[calls / 2], tc[calls / 4], tc[3 * calls / 4], tc[calls / 10], calls);
  }
  free(tc);
  report(d, J);
  if (out) dump(d, J, out);
  if (steps > 0) { /* the next K steps, each timed */
    double *ts = malloc(sizeof(double) * (size_t)steps), sum = 0.0;
    for (int i = 0; i < steps; ++i) {
      const double t0 = bench_clock_cpu ? now_us() : 0.0;
      if (grit_step(d) != GRIT_OK) fail("step", d);
      ts[i] = bench_clock_cpu ? now_us() - t0 : 0.0;
      sum += ts[i];
    }
    if (bench_clock_cpu) {
      qsort(ts, (size_t)steps, sizeof(double), bench_cmp);
      printf("steps: mean %.1f us, median %.1f us over %d steps\n", sum / steps, ts[steps / 2], steps);
    }
    free(ts);
  }
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
  if (file) grit_mjcf_info_free(&info);
  return 0;
}
