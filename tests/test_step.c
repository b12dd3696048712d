/* SPDX-License-Identifier: Apache-2.0 */
/* test_step.c — the step's contract: settings validation, statistics, failure leaves the state as it
 * was, the factorizations agree, welded bodies stay still, and a step is a function of its state. The
 * step's collision query is tested in test_step_collision.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "data_internal.h"
#include "grit/mjcf.h"
#include "hessian.h"
#include "physics_scenes.h"
#include "solver_state.h"

/* A sphere dropped onto the ground: the impact needs several Newton iterations. With one allowed,
 * the step must report GRIT_ERR_NOT_CONVERGED and leave q, v and t exactly as they were. */
Test(step, non_convergence_is_reported_and_leaves_the_state_unchanged) {
  scene_contact c = {.mu = 0.5, .k = 1e7, .d = 500, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double pos[3] = {0, 0, 0.026};
  int body = scene_free_body(b, 0.5, 1e-4, 1e-4, 1e-4, pos);
  grit_geom_def ball = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_SPHERE, 0.025, 0, 0));
  grit_builder_add_geom(b, &ball, NULL);
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  double v[6] = {2, 0, -1, 0, 0, 0};
  grit_data_set_qvel(d, v, 6);
  grit_step_settings s = grit_data_step_settings(d);
  s.max_newton_iters = 1;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  double q0[7], v0[6], t0 = grit_data_time(d);
  memcpy(q0, grit_data_qpos(d), sizeof q0);
  memcpy(v0, grit_data_qvel(d), sizeof v0);
  grit_status st = GRIT_OK;
  for (int i = 0; i < 20 && st == GRIT_OK; ++i) {
    memcpy(q0, grit_data_qpos(d), sizeof q0);
    memcpy(v0, grit_data_qvel(d), sizeof v0);
    t0 = grit_data_time(d);
    st = grit_step(d);
  }
  cr_assert_eq(st, GRIT_ERR_NOT_CONVERGED, "the impact converged in one Newton iteration?");
  cr_assert(strstr(grit_data_last_error(d), "Newton") != NULL, "message: %s", grit_data_last_error(d));
  cr_assert(memcmp(q0, grit_data_qpos(d), sizeof q0) == 0, "q changed by a failed step");
  cr_assert(memcmp(v0, grit_data_qvel(d), sizeof v0) == 0, "v changed by a failed step");
  cr_assert_eq(t0, grit_data_time(d));
  /* with the default settings the same step succeeds */
  s.max_newton_iters = 100;
  grit_data_set_step_settings(d, &s);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_data_free(d);
  grit_model_free(m);
}

Test(step, bad_settings_are_rejected_and_not_applied) {
  grit_model *m;
  grit_builder *b = scene_builder(1e-3, NULL);
  const double pos[3] = {0, 0, 1};
  scene_free_body(b, 1, 0.1, 0.1, 0.1, pos);
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_SAP);
  grit_step_settings bad[6];
  for (int i = 0; i < 6; ++i) bad[i] = grit_default_step_settings();
  bad[0].contact_model = (grit_contact_model)7;
  bad[1].stiction_tolerance = 0;
  bad[2].sigma = NAN;
  bad[3].rel_tol = 2;
  bad[4].max_newton_iters = 0;
  bad[5].sparse_factor = (grit_sparse_factor)3;
  for (int i = 0; i < 6; ++i) {
    cr_assert_eq(grit_data_set_step_settings(d, &bad[i]), GRIT_ERR_INVALID_ARGUMENT, "bad settings %d accepted", i);
    cr_assert(strlen(grit_data_last_error(d)) > 0);
  }
  cr_assert_eq(grit_data_step_settings(d).contact_model, GRIT_CONTACT_SAP, "a rejected setting was applied");
  grit_data_free(d);
  grit_model_free(m);
}

/* The three factorizations of the Newton Hessian (block-sparse, CHOLMOD, dense LAPACK) on the 40-object
 * clutter: the same trajectory and the same Jacobians. Solved to rel_tol 1e-10, the three solutions of
 * each (strongly convex) step agree to about cond * 1e-10; after 200 steps (0.4 s: the objects have
 * landed on each other) they are within 1e-8 of the scale (measured: velocities 1.7e-11, A 1.6e-10).
 * Earlier, while the objects still fall apart, H is block-diagonal and the paths agree to round-off. */
Test(step, block_cholmod_and_dense_factorizations_agree) {
  enum { NSTEPS = 200 };
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/examples/models/clutter.xml", GRIT_SOURCE_DIR);
  grit_model *m = NULL;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  const int nv = grit_model_nv(m), nx = 2 * nv;
  grit_data *d[3];
  double *A[3];
  for (int k = 0; k < 3; ++k) {
    cr_assert_eq(grit_data_create(m, &d[k]), GRIT_OK);
    grit_step_settings s = info.settings;
    s.rel_tol = 1e-10;
    s.sparse_factor = k == 1 ? GRIT_FACTOR_CHOLMOD : GRIT_FACTOR_BLOCK;
    s.dense_max_nv = k == 2 ? nv : 0;
    cr_assert_eq(grit_data_set_step_settings(d[k], &s), GRIT_OK);
    for (int i = 0; i < NSTEPS; ++i) cr_assert_eq(grit_step(d[k]), GRIT_OK, "path %d, step %d: %s", k, i, grit_data_last_error(d[k]));
    grit_step_stats st;
    grit_data_step_stats(d[k], &st);
    cr_assert_eq(st.used_sparse, k == 0 ? 1 : k == 1 ? 2 : 0, "path %d used %d", k, st.used_sparse);
    cr_assert(st.nconstraints > 0);
    A[k] = malloc(sizeof(double) * (size_t)nx * nx);
    cr_assert_eq(grit_step_derivatives(d[k], A[k], NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[k]));
  }
  double vmax = 0, dv = 0, amax = 0, da = 0;
  for (int i = 0; i < nv; ++i) vmax = fmax(vmax, fabs(grit_data_qvel(d[0])[i]));
  for (int i = 0; i < (int)((size_t)nx * nx); ++i) amax = fmax(amax, fabs(A[0][i]));
  for (int k = 1; k < 3; ++k) {
    for (int i = 0; i < nv; ++i) dv = fmax(dv, fabs(grit_data_qvel(d[k])[i] - grit_data_qvel(d[0])[i]));
    for (int i = 0; i < (int)((size_t)nx * nx); ++i) da = fmax(da, fabs(A[k][i] - A[0][i]));
  }
  cr_log_info("clutter, %d steps: velocities differ by %.3g (scale %.3g), A by %.3g (scale %.3g)", NSTEPS, dv, vmax, da, amax);
  cr_assert(dv <= 1e-8 * vmax, "velocities differ by %g (scale %g)", dv, vmax);
  cr_assert(da <= 1e-8 * amax, "Jacobians differ by %g (scale %g)", da, amax);
  for (int k = 0; k < 3; ++k) grit_data_free(d[k]), free(A[k]);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* The query takes a geometry on the world or on a body welded to it without a tree (body_tree -1) at speed
 * 0 without its norms (collision.c, speculative_margins), since the step's twists there are the world's +0
 * (grit_collision_motion): checked bit for bit on those bodies (a welded box, a welded body on it, next to
 * a hinged arm, a box falling on them) over 200 steps, and their geometries' margins are the window of
 * speed 0. */
Test(step, bodies_welded_to_the_world_have_zero_twists) {
  scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_builder *bld = scene_builder(2e-3, NULL);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(bld, &ground, NULL), GRIT_OK);
  grit_body_def w1 = grit_default_body_def(), w2 = grit_default_body_def(), arm = grit_default_body_def();
  const double q1[4] = {0.9, 0.1, 0.2, 0.3}, p1[3] = {0, 0, 0.3}, p2[3] = {0.1, 0, 0.1}, pa[3] = {0, 0.2, 0};
  memcpy(w1.quat, q1, sizeof q1);
  memcpy(w1.pos, p1, sizeof p1);
  memcpy(w2.pos, p2, sizeof p2);
  memcpy(arm.pos, pa, sizeof pa);
  int b1, b2, b3;
  cr_assert_eq(grit_builder_add_body(bld, &w1, &b1), GRIT_OK, "%s", grit_builder_last_error(bld));
  w2.parent = b1;
  cr_assert_eq(grit_builder_add_body(bld, &w2, &b2), GRIT_OK, "%s", grit_builder_last_error(bld)); /* welded on welded */
  arm.parent = 0; /* a hinged arm of its own (a welded body with a moving child is on that child's tree) */
  cr_assert_eq(grit_builder_add_body(bld, &arm, &b3), GRIT_OK, "%s", grit_builder_last_error(bld));
  grit_joint_def hinge = grit_default_joint_def();
  hinge.axis[0] = 1, hinge.axis[2] = 0;
  cr_assert_eq(grit_builder_add_joint(bld, b3, &hinge, NULL), GRIT_OK, "%s", grit_builder_last_error(bld));
  const grit_geom_def gs[3] = {scene_geom(&c, b1, grit_shape_make(GRIT_GEOM_BOX, 0.2, 0.2, 0.05)),
                               scene_geom(&c, b2, grit_shape_make(GRIT_GEOM_SPHERE, 0.05, 0, 0)),
                               scene_geom(&c, b3, grit_shape_make(GRIT_GEOM_CAPSULE, 0.03, 0.1, 0))};
  for (int k = 0; k < 3; ++k) cr_assert_eq(grit_builder_add_geom(bld, &gs[k], NULL), GRIT_OK, "%s", grit_builder_last_error(bld));
  const double pf[3] = {0.05, 0.0, 0.45};
  const int fb = scene_free_body(bld, 1, 0.01, 0.01, 0.01, pf);
  const grit_geom_def gb = scene_geom(&c, fb, grit_shape_make(GRIT_GEOM_BOX, 0.05, 0.05, 0.05));
  cr_assert_eq(grit_builder_add_geom(bld, &gb, NULL), GRIT_OK, "%s", grit_builder_last_error(bld));
  grit_model *m;
  grit_data *d = scene_data(bld, &m, GRIT_CONTACT_LAGGED);
  const double zero[6] = {0, 0, 0, 0, 0, 0};
  int welded = 0, touched = 0;
  for (int step = 0; step < 200; ++step) {
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    touched += grit_data_ncontacts(d) > 0;
    for (int b = 0; b < m->nbody; ++b) {
      if (m->body_tree[b] >= 0) continue;
      welded += step == 0;
      cr_assert(!memcmp(d->kin.cvel + 6 * b, zero, sizeof zero), "step %d body %d: a twist", step, b);
      cr_assert(!memcmp(d->cvel_star + 6 * b, zero, sizeof zero), "step %d body %d: a twist at v*", step, b);
    }
    for (int g = 0; g < m->ngeom; ++g)
      if (d->collision->gtree[g] < 0)
        cr_assert_eq(d->collision->gspec[g], 0.0, "step %d geom %d: margin %g", step, g, d->collision->gspec[g]);
  }
  cr_assert_eq(welded, 3, "%d bodies welded to the world", welded);
  cr_assert(touched > 50, "contact in %d steps only", touched);
  grit_data_free(d);
  grit_model_free(m);
}

/* A pile's step is a function of its state (include/grit/data.h): the block factor keeps a pile's
 * elimination order while its pattern grows within a solve (blockchol_keep.c), and forgets it at the next
 * solve's start. 120 spheres touching in one block (one component of more than 64 trees), 30 steps; then
 * the state is set into a fresh data and into the stepped one (the same bits, data.h's note), and both
 * step alike bit for bit. */
Test(step, a_piles_step_is_a_function_of_its_state) {
  char *xml = malloc(1 << 16), msg[GRIT_MESSAGE_SIZE];
  cr_assert(xml);
  int len = snprintf(xml, 1 << 16, "<mujoco><option timestep='0.005'/><worldbody><geom type='plane' size='5 5 .1'/>");
  for (int i = 0; i < 120; ++i) /* 6 x 5 x 4, spacing 0.0995 < 2 r: every neighbour overlaps by 0.5 mm */
    len += snprintf(xml + len, (size_t)(1 << 16) - (size_t)len,
                    "<body pos='%.4f %.4f %.4f'><freejoint/><geom type='sphere' size='0.05'/></body>", 0.0995 * (i % 6),
                    0.0995 * (i / 6 % 5), 0.0495 + 0.0995 * (i / 30));
  snprintf(xml + len, (size_t)(1 << 16) - (size_t)len, "</worldbody></mujoco>");
  grit_model *m;
  grit_data *d[2];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  free(xml);
  cr_assert_eq(grit_data_create(m, &d[0]), GRIT_OK);
  cr_assert_eq(grit_data_create(m, &d[1]), GRIT_OK);
  for (int r = 0; r < 2; ++r) grit_hessian_keep_order(d[r]->solver->H, 1); /* (opt-in) */
  for (int k = 0; k < 30; ++k) cr_assert_eq(grit_step(d[0]), GRIT_OK, "%s", grit_data_last_error(d[0]));
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  double *q = malloc(sizeof(double) * (size_t)nq), *v = malloc(sizeof(double) * (size_t)nv);
  cr_assert(q && v);
  memcpy(q, grit_data_qpos(d[0]), sizeof(double) * (size_t)nq);
  memcpy(v, grit_data_qvel(d[0]), sizeof(double) * (size_t)nv);
  for (int r = 0; r < 2; ++r) {
    cr_assert_eq(grit_data_set_qpos(d[r], q, nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(d[r], v, nv), GRIT_OK);
    cr_assert_eq(grit_data_set_time(d[r], grit_data_time(d[0])), GRIT_OK);
  }
  for (int k = 0; k < 10; ++k) {
    for (int r = 0; r < 2; ++r) cr_assert_eq(grit_step(d[r]), GRIT_OK, "%s", grit_data_last_error(d[r]));
    cr_assert(d[0]->ncontacts > 120, "step %d: %d contacts, the pile came apart", k, d[0]->ncontacts);
    cr_assert(!memcmp(grit_data_qvel(d[0]), grit_data_qvel(d[1]), sizeof(double) * (size_t)nv), "step %d: other velocities", k);
    cr_assert(!memcmp(grit_data_qpos(d[0]), grit_data_qpos(d[1]), sizeof(double) * (size_t)nq), "step %d: other positions", k);
  }
  free(q), free(v);
  grit_data_free(d[0]), grit_data_free(d[1]);
  grit_model_free(m);
}
