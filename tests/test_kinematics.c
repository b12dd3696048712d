/* SPDX-License-Identifier: Apache-2.0 */
/* test_kinematics.c — forward kinematics: joint conventions (MuJoCo's) on hand-computed cases, body
 * twists and point Jacobians against finite differences of poses moved on the manifold by
 * grit_integrate_positions, and the integrate/difference pair. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "grit/grit.h"
#include "test_util.h"

/* Central differences with tangent step H: truncation error ~ H^2 |p'''| ~ 1e-10 (poses are smooth with
 * O(1..10) derivatives on these unit-sized trees) and round-off ~ eps |p| / H ~ 2e-11, so 1e-7 relative
 * to the largest entry leaves a margin of two to three orders of magnitude. */
static const double H = 1e-5, FD_TOL = 1e-7;

/* World position of the point with body-frame coordinates pb on `body` at configuration q. */
static void point_at(grit_data *d, const double *q, int body, const double pb[3], double p[3], double quat[4]) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  cr_assert_eq(grit_forward_kinematics(d), GRIT_OK);
  double x[3], qq[4];
  grit_body_pose(d, body, x, qq);
  grit_quat_rotate(p, qq, pb);
  grit_v3_add(p, p, x);
  if (quat) grit_quat_copy(quat, qq);
}

/* The world rotation vector w with qb = exp(w) qa. */
static void world_rotation(double w[3], const double qa[4], const double qb[4]) {
  double c[4], r[4];
  grit_quat_conj(c, qa);
  grit_quat_mul(r, qb, c);
  grit_quat_log(w, r);
}

Test(kinematics, point_jacobian_matches_finite_differences) {
  tu_rng rng = {1};
  tu_tree_opts o = tu_default_tree_opts();
  double worst = 0.0;
  tu_coverage cov = {{0}, 0, 0, 0};
  for (int trial = 0; trial < 24; ++trial) {
    grit_model *m = tu_random_tree(&rng, 2 + tu_int(&rng, 7), TU_ALL, &o);
    tu_cover(&cov, m);
    grit_data *d = tu_data(m);
    const int nq = m->nq, nv = m->nv;
    double *q = calloc((size_t)nq, sizeof *q), *v = calloc((size_t)nv, sizeof *v);
    double *qp = calloc((size_t)nq, sizeof *qp), *qm = calloc((size_t)nq, sizeof *qm);
    double *e = calloc((size_t)nv, sizeof *e), *jp = calloc((size_t)(3 * nv), sizeof *jp),
           *jr = calloc((size_t)(3 * nv), sizeof *jr);
    tu_random_state(&rng, m, q, v, 1.0);
    for (int body = 1; body < m->nbody; ++body) {
      double p[3], pb[3], quat[4], c[3];
      /* a point near the body: its centre of mass plus a random offset */
      point_at(d, q, body, (double[3]){0, 0, 0}, p, quat);
      grit_body_com(d, body, c);
      for (int i = 0; i < 3; ++i) p[i] = c[i] + tu_uniform(&rng, -0.5, 0.5);
      double x[3];
      grit_body_pose(d, body, x, NULL);
      grit_v3_sub(pb, p, x);
      grit_quat_rotate_inv(pb, quat, pb);
      cr_assert_eq(grit_point_jacobian(d, body, p, jp, jr), GRIT_OK);
      const double scale = fmax(1.0, fmax(tu_max_abs(jp, 3 * nv), tu_max_abs(jr, 3 * nv)));
      for (int k = 0; k < nv; ++k) {
        memset(e, 0, sizeof(double) * (size_t)nv);
        e[k] = 1.0;
        memcpy(qp, q, sizeof(double) * (size_t)nq);
        memcpy(qm, q, sizeof(double) * (size_t)nq);
        grit_integrate_positions(m, qp, e, H);
        grit_integrate_positions(m, qm, e, -H);
        double pp[3], pm[3], qpq[4], qmq[4], w[3];
        point_at(d, qp, body, pb, pp, qpq);
        point_at(d, qm, body, pb, pm, qmq);
        world_rotation(w, qmq, qpq);
        for (int r = 0; r < 3; ++r) {
          const double fdp = (pp[r] - pm[r]) / (2 * H), fdr = w[r] / (2 * H);
          const double ep = fabs(fdp - jp[r * nv + k]) / scale, er = fabs(fdr - jr[r * nv + k]) / scale;
          worst = fmax(worst, fmax(ep, er));
          cr_assert(ep <= FD_TOL, "trial %d body %d dof %d row %d: jacp %.12g, fd %.12g", trial, body, k, r,
                    jp[r * nv + k], fdp);
          cr_assert(er <= FD_TOL, "trial %d body %d dof %d row %d: jacr %.12g, fd %.12g", trial, body, k, r,
                    jr[r * nv + k], fdr);
        }
      }
    }
    free(q), free(v), free(qp), free(qm), free(e), free(jp), free(jr);
    grit_data_free(d);
    grit_model_free(m);
  }
  tu_assert_covered(&cov);
  cr_log_info("point Jacobian vs finite differences: worst relative deviation %.2e", worst);
}

/* The body twist (omega; v_O) against the motion of the pose along q (+) t v: the centre of mass moves
 * at v_O + omega x c, the orientation turns at omega (world). Also J(c) v = v_com. */
Test(kinematics, body_twists_match_finite_differences) {
  tu_rng rng = {2};
  tu_tree_opts o = tu_default_tree_opts();
  for (int trial = 0; trial < 24; ++trial) {
    grit_model *m = tu_random_tree(&rng, 2 + tu_int(&rng, 7), TU_ALL, &o);
    grit_data *d = tu_data(m);
    const int nq = m->nq, nv = m->nv;
    double *q = calloc((size_t)nq, sizeof *q), *v = calloc((size_t)nv, sizeof *v);
    double *qp = calloc((size_t)nq, sizeof *qp), *qm = calloc((size_t)nq, sizeof *qm);
    double *jp = calloc((size_t)(3 * nv), sizeof *jp);
    tu_random_state(&rng, m, q, v, 2.0);
    memcpy(qp, q, sizeof(double) * (size_t)nq);
    memcpy(qm, q, sizeof(double) * (size_t)nq);
    grit_integrate_positions(m, qp, v, H);
    grit_integrate_positions(m, qm, v, -H);
    for (int body = 1; body < m->nbody; ++body) {
      double cp[3], cm[3], qpq[4], qmq[4], c[3], tw[6], vc[3], w[3], x[3], cb[3], quat[4];
      /* the centre of mass in body coordinates, to follow it */
      point_at(d, q, body, (double[3]){0, 0, 0}, x, quat);
      grit_body_com(d, body, c);
      grit_v3_sub(cb, c, x);
      grit_quat_rotate_inv(cb, quat, cb);
      cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
      cr_assert_eq(grit_forward_kinematics(d), GRIT_OK);
      cr_assert_eq(grit_body_twist(d, body, tw), GRIT_OK);
      grit_sv_point_velocity(vc, tw, c);
      cr_assert_eq(grit_point_jacobian(d, body, c, jp, NULL), GRIT_OK);
      point_at(d, qp, body, cb, cp, qpq);
      point_at(d, qm, body, cb, cm, qmq);
      world_rotation(w, qmq, qpq);
      const double scale = fmax(1.0, tu_max_abs(tw, 6));
      for (int r = 0; r < 3; ++r) {
        const double fdv = (cp[r] - cm[r]) / (2 * H), fdw = w[r] / (2 * H);
        cr_assert(fabs(fdv - vc[r]) <= FD_TOL * scale, "trial %d body %d: v_com[%d] %.12g, fd %.12g", trial, body,
                  r, vc[r], fdv);
        cr_assert(fabs(fdw - tw[r]) <= FD_TOL * scale, "trial %d body %d: omega[%d] %.12g, fd %.12g", trial, body,
                  r, tw[r], fdw);
        double jv = 0.0;
        for (int k = 0; k < nv; ++k) jv += jp[r * nv + k] * v[k];
        cr_assert(fabs(jv - vc[r]) <= 1e-12 * scale * nv, "J v != v_com (%g vs %g)", jv, vc[r]);
      }
    }
    free(q), free(v), free(qp), free(qm), free(jp);
    grit_data_free(d);
    grit_model_free(m);
  }
}

Test(kinematics, integrate_and_difference_are_inverse) {
  tu_rng rng = {3};
  tu_tree_opts o = tu_default_tree_opts();
  for (int trial = 0; trial < 20; ++trial) {
    grit_model *m = tu_random_tree(&rng, 2 + tu_int(&rng, 7), TU_ALL, &o);
    const int nq = m->nq, nv = m->nv;
    double *qa = calloc((size_t)nq, sizeof *qa), *qb = calloc((size_t)nq, sizeof *qb);
    double *dq = calloc((size_t)nv, sizeof *dq), *back = calloc((size_t)nv, sizeof *back),
           *v = calloc((size_t)nv, sizeof *v);
    tu_random_state(&rng, m, qa, v, 1.0);
    /* |dq| <= 1.7 per ball: rotations below pi, where the logarithm is the inverse of exp */
    for (int i = 0; i < nv; ++i) dq[i] = tu_uniform(&rng, -1.0, 1.0);
    memcpy(qb, qa, sizeof(double) * (size_t)nq);
    cr_assert_eq(grit_integrate_positions(m, qb, dq, 1.0), GRIT_OK);
    cr_assert_eq(grit_position_difference(m, qa, qb, back), GRIT_OK);
    cr_assert(tu_max_abs_diff(dq, back, nv) < 1e-12, "difference(qa, qa + dq) != dq: %g",
              tu_max_abs_diff(dq, back, nv));
    /* the quaternions stay unit */
    for (int j = 0; j < m->njnt; ++j) {
      const int t = m->jnt_type[j];
      if (t != GRIT_JOINT_FREE && t != GRIT_JOINT_BALL) continue;
      const double *qq = qb + m->jnt_qposadr[j] + (t == GRIT_JOINT_FREE ? 3 : 0);
      const double n = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
      cr_assert(fabs(n - 1) < 1e-15 * 4, "|q| - 1 = %g", n - 1);
    }
    free(qa), free(qb), free(dq), free(back), free(v);
    grit_model_free(m);
  }
}

/* ----------------------------------------------------------------- conventions, by hand */

static grit_model *single(const grit_body_def *bd, const grit_joint_def *j1, const grit_joint_def *j2) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  cr_assert_eq(grit_builder_add_body(b, bd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  if (j1) cr_assert_eq(grit_builder_add_joint(b, 1, j1, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  if (j2) cr_assert_eq(grit_builder_add_joint(b, 1, j2, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static void expect_v3(const double a[3], double x, double y, double z, double tol, const char *what) {
  cr_assert(fabs(a[0] - x) <= tol && fabs(a[1] - y) <= tol && fabs(a[2] - z) <= tol,
            "%s: (%.15g, %.15g, %.15g), expected (%g, %g, %g)", what, a[0], a[1], a[2], x, y, z);
}

/* A hinge rotates the body about the joint anchor by q - qpos0. */
Test(kinematics, hinge_rotates_about_its_anchor) {
  grit_body_def bd = grit_default_body_def();
  bd.pos[0] = 1.0;
  grit_joint_def jd = grit_default_joint_def();
  jd.pos[0] = 0.5; /* anchor at (1.5, 0, 0) in the world */
  jd.qpos0 = 0.25;
  grit_model *m = single(&bd, &jd, NULL);
  grit_data *d = tu_data(m);
  double x[3], qq[4], q = 0.25;
  grit_data_set_qpos(d, &q, 1);
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  expect_v3(x, 1, 0, 0, 1e-15, "at qpos0 the body is at its reference pose");
  q = 0.25 + TU_PI / 2;
  grit_data_set_qpos(d, &q, 1);
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  /* origin relative to the anchor (-0.5, 0, 0) turned by +90 deg about z: (0, -0.5, 0) */
  expect_v3(x, 1.5, -0.5, 0, 1e-15, "hinge origin");
  cr_assert(fabs(qq[0] - sqrt(0.5)) < 1e-15 && fabs(qq[3] - sqrt(0.5)) < 1e-15, "hinge quat");
  /* the twist at unit velocity: rotation about z through (1.5, 0, 0): v_O = p x omega = (0, -1.5, 0) */
  double v = 1.0, tw[6];
  grit_data_set_qvel(d, &v, 1);
  grit_forward_kinematics(d);
  grit_body_twist(d, 1, tw);
  expect_v3(tw, 0, 0, 1, 1e-15, "hinge omega");
  expect_v3(tw + 3, 0, -1.5, 0, 1e-15, "hinge v_O");
  grit_data_free(d);
  grit_model_free(m);
}

/* Two joints on one body are applied in order: R = R0 R(axis1, q1) R(axis2, q2), the second axis
 * turned by the first rotation; a slide translates along its axis turned by the joints before it. */
Test(kinematics, joints_of_one_body_apply_in_order) {
  grit_body_def bd = grit_default_body_def();
  bd.quat[0] = cos(0.3);
  bd.quat[2] = sin(0.3); /* 0.6 rad about y */
  grit_joint_def j1 = grit_default_joint_def(), j2 = grit_default_joint_def();
  j1.axis[0] = 1, j1.axis[2] = 0;
  j2.type = GRIT_JOINT_SLIDE; /* along body z */
  grit_model *m = single(&bd, &j1, &j2);
  grit_data *d = tu_data(m);
  double q[2] = {0.7, 0.4}, x[3], qq[4];
  grit_data_set_qpos(d, q, 2);
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  double expect[4], r1[4], ax[3] = {1, 0, 0}, zb[3] = {0, 0, 1}, t[3];
  grit_quat_from_axis_angle(r1, ax, 0.7);
  grit_quat_mul(expect, bd.quat, r1);
  for (int i = 0; i < 4; ++i) cr_assert(fabs(qq[i] - expect[i]) < 1e-15, "quat[%d]", i);
  grit_quat_rotate(t, expect, zb); /* the slide axis after both rotations */
  expect_v3(x, 0.4 * t[0], 0.4 * t[1], 0.4 * t[2], 1e-15, "slide");
  grit_data_free(d);
  grit_model_free(m);
}

/* A ball pivots about its anchor; its velocity is the angular velocity in the child body frame. */
Test(kinematics, ball_pivots_about_anchor_with_body_frame_velocity) {
  grit_body_def bd = grit_default_body_def();
  bd.pos[2] = 2.0;
  bd.quat[0] = bd.quat[1] = 1; /* 90 deg about x; normalized by the builder */
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_BALL;
  jd.pos[0] = 0.3, jd.pos[1] = -0.2, jd.pos[2] = 0.1;
  grit_model *m = single(&bd, &jd, NULL);
  grit_data *d = tu_data(m);
  double anchor0[3], x[3], qq[4];
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  grit_quat_rotate(anchor0, qq, jd.pos);
  grit_v3_add(anchor0, anchor0, x);
  double q[4] = {0.3, -0.5, 0.7, 0.2}, w[3] = {0.4, -1.1, 0.8}, tw[6];
  grit_data_set_qpos(d, q, 4);
  grit_data_set_qvel(d, w, 3);
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  double a[3];
  grit_quat_rotate(a, qq, jd.pos);
  grit_v3_add(a, a, x);
  expect_v3(a, anchor0[0], anchor0[1], anchor0[2], 1e-15, "the anchor stays in place");
  /* orientation: body offset, then the ball's quaternion */
  double qn[4] = {q[0], q[1], q[2], q[3]}, expect[4], q0[4] = {sqrt(0.5), sqrt(0.5), 0, 0};
  grit_quat_normalize(qn);
  grit_quat_mul(expect, q0, qn);
  for (int i = 0; i < 4; ++i) cr_assert(fabs(qq[i] - expect[i]) < 1e-15, "quat[%d]", i);
  /* omega (world) = R w; the anchor point has zero velocity */
  double ow[3], va[3];
  grit_quat_rotate(ow, qq, w);
  grit_body_twist(d, 1, tw);
  expect_v3(tw, ow[0], ow[1], ow[2], 1e-15, "ball omega");
  grit_sv_point_velocity(va, tw, a);
  expect_v3(va, 0, 0, 0, 1e-15, "anchor velocity");
  grit_data_free(d);
  grit_model_free(m);
}

/* A free joint: qpos = (position, quaternion) of the body frame in the world; qvel = (velocity of the
 * body origin in the world frame, angular velocity in the body frame). */
Test(kinematics, free_joint_conventions) {
  grit_body_def bd = grit_default_body_def();
  bd.pos[0] = 5; /* the reference pose becomes qpos0 */
  bd.com[1] = 0.3;
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  grit_model *m = single(&bd, &jd, NULL);
  double q0[7];
  grit_model_qpos0(m, q0);
  cr_assert(q0[0] == 5 && q0[3] == 1, "free qpos0 is the body's pose");
  grit_data *d = tu_data(m);
  double q[7] = {1, 2, 3, 0.5, 0.5, -0.5, 0.5}, v[6] = {0.1, 0.2, 0.3, 1.0, -2.0, 0.5}, x[3], qq[4], tw[6];
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
  grit_forward_kinematics(d);
  grit_body_pose(d, 1, x, qq);
  expect_v3(x, 1, 2, 3, 0, "free position");
  for (int i = 0; i < 4; ++i) cr_assert_eq(qq[i], q[3 + i]);
  grit_body_twist(d, 1, tw);
  double ow[3], vo[3];
  grit_quat_rotate(ow, qq, v + 3);
  expect_v3(tw, ow[0], ow[1], ow[2], 1e-15, "free omega = R w_body");
  grit_sv_point_velocity(vo, tw, x);
  expect_v3(vo, 0.1, 0.2, 0.3, 1e-15, "velocity of the body origin");
  /* a welded child follows; bad body indices are errors */
  cr_assert_eq(grit_body_pose(d, 2, x, qq), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_body_twist(d, -1, tw), GRIT_ERR_INVALID_ARGUMENT);
  grit_data_free(d);
  grit_model_free(m);
}

/* A welded body moves rigidly with its parent. */
Test(kinematics, welded_body_follows_parent) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_body_def bd = grit_default_body_def();
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  jd.axis[0] = 1, jd.axis[2] = 0;
  grit_builder_add_joint(b, 1, &jd, NULL);
  bd.parent = 1;
  bd.pos[1] = 1.0;
  grit_builder_add_body(b, &bd, NULL); /* welded, 1 m along y */
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_data *d = tu_data(m);
  double q = TU_PI / 2, v = 2.0, x[3], tw[6];
  grit_data_set_qpos(d, &q, 1);
  grit_data_set_qvel(d, &v, 1);
  grit_forward_kinematics(d);
  grit_body_pose(d, 2, x, NULL);
  expect_v3(x, 0, 0, 1, 1e-15, "welded position");
  grit_body_twist(d, 2, tw);
  expect_v3(tw, 2, 0, 0, 0, "welded omega");
  grit_data_free(d);
  grit_model_free(m);
}
