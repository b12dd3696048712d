/* SPDX-License-Identifier: Apache-2.0 */
/* test_robustness.c — issue #11's contract across modules (docs/errors.md):
 *  - a step that fails (Newton non-convergence, round-off at k = 1e13, a non-finite residual) reports a
 *    clear status and leaves the state, controls, time, statistics and the previous step's kept inputs
 *    bit for bit as they were; it leaves no trace either: the next step is the one a data that never
 *    failed takes;
 *  - the Hessian factorization reports an indefinite or non-finite H (LAPACK and CHOLMOD paths);
 *  - determinism: the same inputs give bitwise identical trajectories and Jacobians;
 *  - thread safety: one model shared by four threads, each with its own data, stepping concurrently,
 *    gives bitwise the serial results. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "hessian.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

static grit_model *load(const char *file, const grit_mjcf_load_options *opt, grit_mjcf_info *info) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/examples/models/%s", GRIT_SOURCE_DIR, file);
  grit_mjcf_load_options o = opt ? *opt : grit_mjcf_default_load_options();
  grit_model *m = NULL;
  grit_status s = grit_mjcf_load_file_with(path, &o, &m, info, msg);
  cr_assert_eq(s, GRIT_OK, "%s: %s", file, msg);
  return m;
}

static grit_data *data_of(const grit_model *m, const grit_mjcf_info *info, const char *key) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  if (info) cr_assert_eq(grit_data_set_step_settings(d, &info->settings), GRIT_OK, "%s", grit_data_last_error(d));
  if (key) {
    int k = grit_mjcf_key_index(info, key);
    cr_assert_geq(k, 0, "no key %s", key);
    cr_assert_eq(grit_mjcf_apply_key(info, k, d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  return d;
}

/* Everything a failed step must not change: the state, controls, time, statistics, settings, body
 * poses, and the previous step's inputs and solution kept for the derivatives. */
typedef struct snapshot {
  int nq, nv, nu, nM, nbody;
  double *q, *v, *u, *qprev, *vprev, *uprev, *vsol, *Aprev, *pose;
  double time;
  grit_step_stats stats;
  grit_step_settings settings;
} snapshot;

static void take(snapshot *s, const grit_data *d) {
  const grit_model *m = grit_data_model(d);
  s->nq = m->nq, s->nv = m->nv, s->nu = m->nu, s->nM = m->nM, s->nbody = m->nbody;
  const size_t nq = (size_t)s->nq, nv = (size_t)s->nv, nu = (size_t)s->nu + 1, nM = (size_t)s->nM;
  s->q = malloc(8 * nq), s->v = malloc(8 * nv), s->u = malloc(8 * nu), s->qprev = malloc(8 * nq);
  s->vprev = malloc(8 * nv), s->uprev = malloc(8 * nu), s->vsol = malloc(8 * nv), s->Aprev = malloc(8 * nM);
  s->pose = malloc(8 * 7 * (size_t)s->nbody);
  memcpy(s->q, d->qpos, 8 * nq), memcpy(s->v, d->qvel, 8 * nv), memcpy(s->u, d->ctrl, 8 * (nu - 1));
  memcpy(s->qprev, d->qprev, 8 * nq), memcpy(s->vprev, d->vprev, 8 * nv);
  memcpy(s->uprev, d->uprev, 8 * (nu - 1)), memcpy(s->vsol, d->vsol, 8 * nv), memcpy(s->Aprev, d->Aprev, 8 * nM);
  for (int b = 0; b < s->nbody; ++b) cr_assert_eq(grit_body_pose(d, b, s->pose + 7 * b, s->pose + 7 * b + 3), GRIT_OK);
  s->time = d->time;
  s->stats = d->stats;
  s->settings = d->settings;
}

static void release(snapshot *s) {
  free(s->q), free(s->v), free(s->u), free(s->qprev), free(s->vprev), free(s->uprev), free(s->vsol);
  free(s->Aprev), free(s->pose);
}

#define SAME(a, b, n, what) cr_assert(memcmp((a), (b), 8 * (size_t)(n)) == 0, "%s changed by a failed step", what)

static void expect_unchanged(const snapshot *s, const grit_data *d) {
  SAME(s->q, d->qpos, s->nq, "q");
  SAME(s->v, d->qvel, s->nv, "v");
  SAME(s->u, d->ctrl, s->nu, "u");
  SAME(s->qprev, d->qprev, s->nq, "the kept q of the previous step");
  SAME(s->vprev, d->vprev, s->nv, "the kept v of the previous step");
  SAME(s->uprev, d->uprev, s->nu, "the kept u of the previous step");
  SAME(s->vsol, d->vsol, s->nv, "the kept solution of the previous step");
  SAME(s->Aprev, d->Aprev, s->nM, "the kept operator of the previous step");
  cr_assert(memcmp(&s->time, &d->time, sizeof s->time) == 0, "time changed by a failed step");
  cr_assert(memcmp(&s->stats, &d->stats, sizeof s->stats) == 0, "statistics changed by a failed step");
  cr_assert(memcmp(&s->settings, &d->settings, sizeof s->settings) == 0, "settings changed by a failed step");
  double *pose = malloc(8 * 7 * (size_t)s->nbody);
  for (int b = 0; b < s->nbody; ++b) grit_body_pose(d, b, pose + 7 * b, pose + 7 * b + 3);
  SAME(s->pose, pose, 7 * s->nbody, "a body pose");
  free(pose);
}

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* After a failed step: the documented consequences (no derivatives, no contacts to report), and a
 * retry with the default settings gives bitwise the step of `twin`, a data with the same history that
 * never failed. */
static void expect_no_trace(grit_data *d, grit_data *twin) {
  cr_assert_eq(grit_step_derivatives(d, NULL, NULL, NULL, 0, NULL), GRIT_ERR_STATE,
               "derivatives of a failed step must be refused");
  cr_assert_eq(grit_data_ncontacts(d), 0, "contacts of a failed step must not be reported");
  if (!twin) return;
  grit_step_settings s = grit_data_step_settings(twin);
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const grit_model *m = grit_data_model(d);
  grit_status a = grit_step(d), b = grit_step(twin);
  cr_assert_eq(a, b, "%s / %s", grit_data_last_error(d), grit_data_last_error(twin));
  SAME(grit_data_qpos(d), grit_data_qpos(twin), m->nq, "the retried step's q differs: q");
  SAME(grit_data_qvel(d), grit_data_qvel(twin), m->nv, "the retried step's v differs: v");
}

/* The Kinova arm pressing on the ball (actuated, contacts, joint limits): after 20 good steps a step
 * allowed one Newton iteration at a tight tolerance fails with GRIT_ERR_NOT_CONVERGED. */
Test(robustness, newton_failure_leaves_data_unchanged) {
  grit_mjcf_info info;
  grit_model *m = load("arm_push_ball.xml", NULL, &info);
  grit_data *d = data_of(m, &info, "push"), *twin = data_of(m, &info, "push");
  double u[7] = {0.3, -0.5, 0.1, 0.5, -0.2, 0.3, 0.1};
  cr_assert_eq(grit_model_nu(m), 7);
  for (grit_data *x = d; x; x = x == d ? twin : NULL) {
    cr_assert_eq(grit_data_set_ctrl(x, u, 7), GRIT_OK);
    for (int i = 0; i < 20; ++i) cr_assert_eq(grit_step(x), GRIT_OK, "%s", grit_data_last_error(x));
  }
  cr_assert_gt(grit_data_ncontacts(d), 0, "the arm should touch the ball");
  grit_step_settings s = grit_data_step_settings(d);
  s.max_newton_iters = 1;
  s.rel_tol = 1e-14;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  /* new controls and a kick of the ball into the ground (also for the twin): an impact, for which the
   * previous velocity is a poor first guess */
  for (int i = 0; i < 7; ++i) u[i] = 5 * (i % 2 ? 1 : -1);
  double v[13];
  memcpy(v, grit_data_qvel(d), sizeof v);
  v[7] += 1, v[9] -= 1;
  for (grit_data *x = d; x; x = x == d ? twin : NULL) {
    cr_assert_eq(grit_data_set_ctrl(x, u, 7), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(x, v, 13), GRIT_OK);
  }
  snapshot before;
  take(&before, d);
  grit_status st = grit_step(d);
  cr_assert_eq(st, GRIT_ERR_NOT_CONVERGED, "got %s: %s", grit_status_string(st), grit_data_last_error(d));
  cr_assert(strstr(grit_data_last_error(d), "Newton"), "message: %s", grit_data_last_error(d));
  expect_unchanged(&before, d);
  release(&before);
  expect_no_trace(d, twin);
  grit_data_free(d), grit_data_free(twin);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* Seed 000 (section XII-A, Fig. 18): at k = 1e13 N/m and dt = 5 ms the clutter's solve fails by
 * round-off. grit's Newton method used to fail there too (within 200 steps); since its global phase
 * ends once the residual is small (src/engine/solver.c, GLOBAL_RESIDUAL) it converges in every one of the
 * 200 steps (mean 38 iterations, the worst under the cap of 300). Either outcome must be sound: a step
 * that returns OK leaves every object finite and inside the open box (no one falls through a wall or
 * the floor at this stiffness); a step that fails says so with a status (not converged, numerical or
 * not finite) and a message, and leaves the data of the failing step as it was. */
Test(robustness, clutter_at_k_1e13_converges_or_reports_round_off) {
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.stiffness = 1e13;
  o.timestep = 0.005;
  grit_model *m = load("clutter.xml", &o, &info);
  grit_data *d = data_of(m, &info, NULL);
  grit_step_settings s = grit_data_step_settings(d);
  s.contact_model = GRIT_CONTACT_LAGGED;
  grit_data_set_step_settings(d, &s);
  grit_status st = GRIT_OK;
  snapshot before = {0};
  int steps = 0;
  for (; steps < 200; ++steps) {
    if (steps) release(&before);
    take(&before, d);
    st = grit_step(d);
    if (st != GRIT_OK) break;
    const double *q = grit_data_qpos(d);
    cr_assert(all_finite(q, m->nq) && all_finite(grit_data_qvel(d), m->nv), "step %d", steps);
    for (int b = 0; b < m->nq / 7; ++b) /* free bodies: position, then quaternion; the box is 0.8 m wide */
      cr_assert(fabs(q[7 * b]) < 0.4 && fabs(q[7 * b + 1]) < 0.4 && q[7 * b + 2] > 0.0,
                "step %d: object %d left the box at (%g, %g, %g)", steps, b, q[7 * b], q[7 * b + 1], q[7 * b + 2]);
  }
  cr_log_info("k = 1e13: %d steps, last %s: %s", steps, grit_status_string(st), grit_data_last_error(d));
  if (st != GRIT_OK) {
    cr_assert(st == GRIT_ERR_NOT_CONVERGED || st == GRIT_ERR_NUMERICAL || st == GRIT_ERR_NOT_FINITE,
              "step %d failed with %s", steps + 1, grit_status_string(st));
    cr_assert(strlen(grit_data_last_error(d)) > 0);
    expect_unchanged(&before, d);
    expect_no_trace(d, NULL); /* the retry would fail the same way */
  }
  release(&before);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* Gravity of 1e308 m/s^2: the free motion is finite but the residual overflows. The step reports
 * GRIT_ERR_NOT_FINITE and writes no NaN or infinity into the data. */
Test(robustness, non_finite_residual_is_reported_and_nothing_written) {
  static const char xml[] = "<mujoco><option timestep='0.001' gravity='0 0 -1e308'/><worldbody>"
                            "<geom type='plane' size='1 1 0.1'/><body pos='0 0 0.05'><freejoint/>"
                            "<geom type='sphere' size='0.05' mass='1'/></body></worldbody></mujoco>";
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = data_of(m, NULL, NULL);
  snapshot before;
  take(&before, d);
  grit_status st = grit_step(d);
  cr_assert_eq(st, GRIT_ERR_NOT_FINITE, "got %s: %s", grit_status_string(st), grit_data_last_error(d));
  cr_assert(strstr(grit_data_last_error(d), "finite"), "message: %s", grit_data_last_error(d));
  expect_unchanged(&before, d);
  release(&before);
  expect_no_trace(d, NULL);
  grit_data_free(d);
  grit_model_free(m);
}

/* The factorization of an indefinite or non-finite H fails with GRIT_ERR_NUMERICAL on every path (dense
 * LAPACK, the block-sparse Cholesky, CHOLMOD's non-positive pivot), and refuses to solve. */
Test(robustness, indefinite_or_non_finite_hessian_is_reported) {
  grit_mjcf_info info;
  grit_model *m = load("clutter.xml", NULL, &info); /* 40 trees, nv = 240 */
  grit_data *d = data_of(m, &info, NULL);
  cr_assert_eq(grit_step(d), GRIT_OK);
  const int nM = m->nM, nv = m->nv;
  double *A = malloc(sizeof(double) * (size_t)nM), *b = malloc(sizeof(double) * (size_t)nv);
  static const char *const PATHS[3] = {"LAPACK", "block-sparse", "CHOLMOD"};
  for (int path = 0; path < 3; ++path)
    for (int kind = 0; kind < 3; ++kind) {
      memcpy(A, d->Aprev, sizeof(double) * (size_t)nM);
      const int t = 7; /* a tree in the middle: one 6 x 6 block of A at tree_madr[t] */
      double *blk = A + m->tree_madr[t];
      if (kind == 0) blk[0] = -blk[0];            /* a negative pivot */
      else if (kind == 1) blk[7] = NAN;           /* a NaN on the diagonal */
      else blk[0] = INFINITY;                     /* an infinite diagonal entry */
      grit_hessian *h = NULL;
      char msg[GRIT_MESSAGE_SIZE] = "";
      cr_assert_eq(grit_hessian_create(m, 4, 1000, &h, msg), GRIT_OK, "%s", msg);
      grit_hessian_force_path(h, path);
      grit_hessian_pattern_reset(h);
      grit_hessian_pattern_commit(h);
      grit_hessian_begin(h, A);
      double cond = 0;
      grit_status st = grit_hessian_factor(h, &cond, msg);
      cr_assert_eq(st, GRIT_ERR_NUMERICAL, "%s path, case %d: %s (%s)", PATHS[path], kind,
                   grit_status_string(st), msg);
      cr_assert(strstr(msg, "Hessian"), "message: %s", msg);
      cr_assert_eq(grit_hessian_path(h), path);
      for (int i = 0; i < nv; ++i) b[i] = 1;
      cr_assert_neq(grit_hessian_solve(h, b, 1), GRIT_OK, "a failed factor must not serve solves");
      grit_hessian_free(h);
    }
  free(A), free(b);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* ------------------------------------------------------------------------ determinism, threads */

/* One run: a model file from a key (or the reference state) with a contact model and controls held,
 * `steps` steps, the Jacobians of the last one. The result: the final q, v and A, B. */
typedef struct run_spec {
  const grit_model *m;
  const grit_mjcf_info *info;
  const char *key;
  grit_contact_model contact;
  double u_scale;
  int steps;
  /* results */
  grit_status status;
  double *q, *v, *A, *B;
} run_spec;

static void *run_one(void *arg) {
  run_spec *r = arg;
  const grit_model *m = r->m;
  const int nq = m->nq, nv = m->nv, nu = m->nu;
  grit_data *d = NULL;
  r->status = grit_data_create(m, &d);
  if (r->status != GRIT_OK) return NULL;
  grit_step_settings s = r->info->settings;
  s.contact_model = r->contact;
  grit_data_set_step_settings(d, &s);
  if (r->key) grit_mjcf_apply_key(r->info, grit_mjcf_key_index(r->info, r->key), d);
  double u[64];
  for (int i = 0; i < nu && i < 64; ++i) u[i] = r->u_scale * (double)(i % 3 - 1);
  if (nu) grit_data_set_ctrl(d, u, nu);
  for (int k = 0; k < r->steps && r->status == GRIT_OK; ++k) r->status = grit_step(d);
  if (r->status == GRIT_OK) r->status = grit_step_derivatives(d, r->A, nu ? r->B : NULL, NULL, 0, NULL);
  memcpy(r->q, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  memcpy(r->v, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  grit_data_free(d);
  return NULL;
}

static void spec_alloc(run_spec *r) {
  const int nq = r->m->nq, nv = r->m->nv, nu = r->m->nu;
  r->q = calloc((size_t)nq, 8), r->v = calloc((size_t)nv, 8);
  r->A = calloc((size_t)4 * nv * nv, 8), r->B = calloc((size_t)2 * nv * nu + 1, 8);
}

static void spec_free(run_spec *r) { free(r->q), free(r->v), free(r->A), free(r->B); }

static void expect_same_run(const run_spec *a, const run_spec *b, const char *what) {
  const int nq = a->m->nq, nv = a->m->nv, nu = a->m->nu;
  cr_assert_eq(a->status, GRIT_OK, "%s: %s", what, grit_status_string(a->status));
  cr_assert_eq(b->status, GRIT_OK, "%s: %s", what, grit_status_string(b->status));
  cr_assert(memcmp(a->q, b->q, 8 * (size_t)nq) == 0, "%s: q differs", what);
  cr_assert(memcmp(a->v, b->v, 8 * (size_t)nv) == 0, "%s: v differs", what);
  cr_assert(memcmp(a->A, b->A, 8 * (size_t)4 * nv * nv) == 0, "%s: A differs", what);
  cr_assert(memcmp(a->B, b->B, 8 * (size_t)2 * nv * nu) == 0, "%s: B differs", what);
}

/* The same inputs twice, one after the other: bitwise the same trajectory and Jacobians (the arm
 * pushing the ball, every contact model; the clutter on CHOLMOD's path). */
Test(robustness, same_inputs_give_bitwise_identical_trajectories) {
  grit_mjcf_info ia, ic;
  grit_model *arm = load("arm_push_ball.xml", NULL, &ia), *clutter = load("clutter.xml", NULL, &ic);
  for (int c = 0; c < 4; ++c) {
    run_spec r[2];
    for (int k = 0; k < 2; ++k) {
      r[k] = c < 3 ? (run_spec){arm, &ia, "push", (grit_contact_model)c, 0.5, 100, GRIT_OK, 0, 0, 0, 0}
                   : (run_spec){clutter, &ic, NULL, GRIT_CONTACT_SAP, 0, 60, GRIT_OK, 0, 0, 0, 0};
      spec_alloc(&r[k]);
      run_one(&r[k]);
    }
    expect_same_run(&r[0], &r[1], c < 3 ? "arm" : "clutter");
    spec_free(&r[0]), spec_free(&r[1]);
  }
  grit_mjcf_info_free(&ia), grit_mjcf_info_free(&ic);
  grit_model_free(arm), grit_model_free(clutter);
}

/* One model, four threads, each with its own data and its own run (contact model, controls), stepping
 * and differentiating concurrently; each result equals bitwise the same run done alone. Then the
 * clutter (CHOLMOD) likewise on two threads. */
Test(robustness, one_model_many_threads_matches_serial_runs) {
  grit_mjcf_info ia, ic;
  grit_model *arm = load("arm_push_ball.xml", NULL, &ia), *clutter = load("clutter.xml", NULL, &ic);
  enum { N = 4 };
  run_spec par[N], ser[N];
  for (int pass = 0; pass < 2; ++pass) {
    const int n = pass == 0 ? N : 2;
    for (int i = 0; i < n; ++i) {
      par[i] = pass == 0 ? (run_spec){arm, &ia, "push", (grit_contact_model)(i % 3), 0.2 + 0.1 * i, 80, GRIT_OK, 0, 0, 0, 0}
                         : (run_spec){clutter, &ic, NULL, (grit_contact_model)(2 - i), 0, 40, GRIT_OK, 0, 0, 0, 0};
      ser[i] = par[i];
      spec_alloc(&par[i]);
      spec_alloc(&ser[i]);
    }
    pthread_t th[N];
    for (int i = 0; i < n; ++i) cr_assert_eq(pthread_create(&th[i], NULL, run_one, &par[i]), 0);
    for (int i = 0; i < n; ++i) pthread_join(th[i], NULL);
    for (int i = 0; i < n; ++i) run_one(&ser[i]);
    for (int i = 0; i < n; ++i) {
      char what[64];
      snprintf(what, sizeof what, "%s run %d", pass ? "clutter" : "arm", i);
      expect_same_run(&par[i], &ser[i], what);
      spec_free(&par[i]), spec_free(&ser[i]);
    }
  }
  grit_mjcf_info_free(&ia), grit_mjcf_info_free(&ic);
  grit_model_free(arm), grit_model_free(clutter);
}

/* The Jacobians are checked before they are returned: an overflow in the dual residual is
 * GRIT_ERR_NOT_FINITE naming the entry, not a NaN the caller trusts. The kept solution is corrupted
 * here (internal) to a velocity whose products overflow, as a diverging trajectory would make them. */
Test(robustness, non_finite_jacobians_are_reported) {
  grit_mjcf_info info;
  grit_model *m = load("arm_push_ball.xml", NULL, &info);
  grit_data *d = data_of(m, &info, "push");
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * m->nv, nu = m->nu;
  double *A = malloc(sizeof(double) * (size_t)nx * nx), *B = malloc(sizeof(double) * (size_t)nx * nu);
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  for (int i = 0; i < m->nv; ++i) d->vsol[i] = 1e300;
  grit_status s = grit_step_derivatives(d, A, B, NULL, 0, NULL);
  cr_assert_eq(s, GRIT_ERR_NOT_FINITE, "got %s: %s", grit_status_string(s), grit_data_last_error(d));
  cr_assert(strstr(grit_data_last_error(d), "] is not finite"), "message: %s", grit_data_last_error(d));
  free(A), free(B);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}
