/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_kept.c — what the derivative call takes from the step instead of computing it again:
 * the step's factor of H when it is already that of the exact Hessian at the solution (solver.c,
 * grit_solver_refactor; switch grit_solver_keep_factor) and the poses at q0 the step kept (step.c,
 * derivatives.c; switch d->no_kin0). Along trajectories, A and B (dense and by blocks) of each step with
 * them and without, bit for bit; that each path was taken; and against central differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "kinematics.h"
#include "solver.h"
#include "solver_state.h" /* asm_all: whose factor was kept */
#include "xml_load_util.h"

/* Two frictionless boxes stacked on the floor (two trees coupled by a contact) and a pendulum resting on
 * its joint limit: the constraints' G do not change over the last Newton step, so the step's factor is
 * often the exact Hessian's. */
static const char *STACK =
    "<mujoco><option timestep='0.002'/>"
    "<worldbody><geom type='plane' size='3 3 0.1' condim='1'/>"
    "<body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1' condim='1'/></body>"
    "<body pos='0 0 0.3'><freejoint/><geom type='box' size='0.08 0.08 0.1' mass='0.5' condim='1'/></body>"
    "<body pos='1 0 1'><joint type='hinge' axis='0 1 0' limited='true' range='-20 20'/>"
    " <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='0.3' contype='0' conaffinity='0'/></body>"
    "</worldbody></mujoco>";

/* A double pendulum swinging (its A changes every step, no constraint) and, apart, a box on a vertical
 * hinge at rest on a fixed tendon's spring (its one constraint, without impulse at the free motion): the
 * step takes no Newton iteration, the kept factor is the last refactor's, and A is not what it was. */
static const char *SWING =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<body pos='0 0 1'><joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='0.3'/>"
    " <body pos='0.3 0 0'><joint type='hinge' axis='0 1 0'/>"
    "  <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='0.3'/></body></body>"
    "<body pos='2 0 1'><joint name='r' type='hinge' axis='0 0 1'/><geom type='box' size='0.1 0.1 0.1' mass='1'/></body>"
    "</worldbody><tendon><fixed name='t' stiffness='1'><joint joint='r' coef='1'/></fixed></tendon></mujoco>";

/* Whether q0 (+) 0 is q0 bit for bit (the condition for the kept poses) and, then, that d->kin0 holds
 * grit_kin_positions at q0. */
static int kin0_checked(grit_data *d, grit_model *m, int *partly) {
  const int nq = m->nq;
  double *q = malloc(sizeof(double) * (size_t)nq + 1), *z = calloc((size_t)m->nv + 1, sizeof(double));
  memcpy(q, d->qprev, sizeof(double) * (size_t)nq);
  grit_integrate_positions(m, q, z, 1.0);
  const int same = !memcmp(q, d->qprev, sizeof(double) * (size_t)nq);
  char *moved = calloc((size_t)m->ntree + 1, 1); /* a tree's poses are kept when its q0 (+) 0 is q0 */
  for (int j = 0; j < m->njnt; ++j) {
    const int qa = m->jnt_qposadr[j], n = m->jnt_type[j] == GRIT_JOINT_FREE ? 7 : m->jnt_type[j] == GRIT_JOINT_BALL ? 4 : 1;
    moved[m->dof_tree[m->jnt_dofadr[j]]] |= memcmp(q + qa, d->qprev + qa, sizeof(double) * (size_t)n) != 0;
  }
  int some = 0;
  for (int t = 0; t < m->ntree; ++t) some |= !moved[t];
  free(moved);
  *partly += !same && some;
  if (same) {
    cr_assert(d->kin0_ok);
    grit_data *e;
    cr_assert_eq(grit_data_create(m, &e), GRIT_OK);
    cr_assert_eq(grit_data_set_qpos(e, d->qprev, nq), GRIT_OK); /* (normalizes: q0 already is) */
    const size_t nb = (size_t)m->nbody, s = sizeof(double);
    cr_assert(!memcmp(e->kin.xpos, d->kin0.xpos, 3 * nb * s) && !memcmp(e->kin.xmat, d->kin0.xmat, 9 * nb * s) &&
                  !memcmp(e->kin.cdof, d->kin0.cdof, 6 * (size_t)m->nv * s) &&
                  !memcmp(e->kin.cinert, d->kin0.cinert, nb * sizeof *e->kin.cinert),
              "the kept poses are those at q0");
    grit_data_free(e);
  }
  free(q), free(z);
  return same;
}

/* Per step: A, B dense and by blocks with what the step kept (first: the step's factor) and without. */
static void compare_steps(grit_data *d, grit_model *m, int steps, const char *name, int *kept_factor, int *kept_kin,
                          int *kept_refac) {
  int partly = 0;
  const int nu = m->nu, nx = 2 * m->nv + m->na;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  *kept_factor = *kept_kin = *kept_refac = 0;
  for (int i = 0; i < steps; ++i) {
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    *kept_kin += kin0_checked(d, m, &partly);
    for (int k = 0; k < 2; ++k) { /* k = 0: the kept paths (before any refactor of this step); 1: without */
      grit_solver_keep_factor(d->solver, !k);
      d->no_kin0 = k;
      cr_assert_eq(grit_step_derivatives(d, A[2 * k], nu ? B[2 * k] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                   grit_data_last_error(d));
      const int refac = d->solver->asm_all == KEPT_REFAC; /* (the last refactor's, not this step's) */
      if (!k) *kept_factor += grit_solver_factor_kept(d->solver), *kept_refac += refac && grit_solver_factor_kept(d->solver);
      else cr_assert(!grit_solver_factor_kept(d->solver));
      cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
      grit_jacobian_blocks_to_dense(J, A[2 * k + 1], nu ? B[2 * k + 1] : NULL);
    }
    grit_solver_keep_factor(d->solver, 1); /* (the next step keeps its poses) */
    d->no_kin0 = 0;
    for (int k = 0; k < 2; ++k) {
      cr_assert(!memcmp(A[k], A[k + 2], sizeof(double) * (size_t)nx * nx), "%s step %d: A (%s) differs", name, i,
                k ? "blocks" : "dense");
      cr_assert(!memcmp(B[k], B[k + 2], sizeof(double) * (size_t)nx * nu), "%s step %d: B (%s) differs", name, i,
                k ? "blocks" : "dense");
    }
  }
  cr_log_info("%s: %d steps, the factor kept in %d (the last refactor's in %d), the poses in %d (of some trees: %d)",
              name, steps, *kept_factor, *kept_refac, *kept_kin, partly);
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
}

/* warm < 0: -warm steps from the model's state with the file's settings (default ones for a string);
 * else moving_data's. At least min_factor steps of 30 keep the factor, min_refac of them the last
 * refactor's, min_kin the poses. */
static void run(const char *xml, const char *path, const char *name, int warm, int min_factor, int min_refac,
                int min_kin, double fd_bound) {
  grit_model *m;
  grit_data *d;
  if (warm >= 0) {
    d = moving_data(xml, path, &m, 0.3, warm);
  } else {
    char msg[GRIT_MESSAGE_SIZE];
    grit_mjcf_info info;
    if (xml) cr_assert_eq(grit_mjcf_load_string(xml, &m, &info, msg), GRIT_OK, "%s", msg);
    else cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
    grit_mjcf_info_free(&info);
    for (int i = 0; i < -warm; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  int kf, kk, kr;
  compare_steps(d, m, 30, name, &kf, &kk, &kr);
  cr_expect(kf >= min_factor, "%s: the factor kept in %d steps of 30 (expected at least %d)", name, kf, min_factor);
  cr_expect(kr >= min_refac, "%s: the last refactor's kept in %d steps (expected at least %d)", name, kr, min_refac);
  cr_expect(kk >= min_kin, "%s: the poses kept in %d steps of 30 (expected at least %d)", name, kk, min_kin);
  if (fd_bound > 0.0) {
    const double fd = fdt_check(d, 1e-6);
    cr_log_info("%s: central differences %.3g", name, fd);
    cr_expect(fd < fd_bound, "%s: central differences %.3g", name, fd);
  }
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_kept, frictionless_stack) { run(STACK, NULL, "stack", -300, 10, 0, 1, 1e-4); }
Test(derivatives_kept, humanoid_file) {
  run(NULL, GRIT_SOURCE_DIR "/tests/models/mujoco_model/humanoid.xml", "humanoid", 20, 1, 0, 10, 0.0);
}
Test(derivatives_kept, fish_file) { run(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish", 20, 10, 0, 10, 1e-6); }
/* at rest, without controls: no Newton iteration (its fins' tendon spring at its length), A constant */
Test(derivatives_kept, fish_at_rest) {
  run(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish at rest", -200, 25, 25, 10, 0.0);
}
Test(derivatives_kept, op3_file) {
  run(NULL, GRIT_SOURCE_DIR "/tests/models/menagerie_collision/robotis_op3/scene.xml", "OP3", 20, 1, 0, 10, 0.0);
}
/* the last refactor's factor is not kept once A moved */
Test(derivatives_kept, swinging_pendulum) { run(SWING, NULL, "swing", -50, 0, 0, 10, 1e-5); }
/* forty free bodies: most steps keep the poses of some trees only */
Test(derivatives_kept, clutter_file) { run(NULL, GRIT_SOURCE_DIR "/examples/models/clutter.xml", "clutter", -100, 0, 0, 0, 0.0); }
