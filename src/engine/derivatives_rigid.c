/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rigid.c — the position passes' kinematic partials in closed form, for trees of one-joint
 * bodies and of bodies with several hinges and slides: rigid motions (the same derivatives as the dual kinematics, at a fraction of the cost). */
#include <stddef.h>

#include "data_internal.h"
#include "derivatives_internal.h"

/* ------------------------------------------------------------- position partials in closed form */

/* Position passes seed dq0, the tangent perturbation of q0 -> q0 (+) dq0. In a tree whose bodies have at
 * most one joint (a free joint only on a child of the world), moving dof k moves every body after it
 * rigidly, to first order, with the twist cdof_k at q0 (world-origin coordinates): hinge and slide by
 * q + e, ball and free by q (x) exp(e) in the body frame, a rotation about the body axis through the
 * anchor. Along seed direction j, body b so moves with the twist s = (w; v) = sum over the dofs k
 * before it of cdof_k dq_k.d[j] (its velocity at joint velocities dq.d[j]), and the partials of its
 * kinematics follow from their values: a point x moves at w x x + v, a direction a at w x a, an
 * orientation R at [w] R (its quaternion at (0, w)/2 (x) q), a spatial inertia (m, h, I) at
 * (0, w x h + m v, [w] I - I [w] + 2 (h.v) 1 - v h^T - h v^T), a motion subspace c at s xm c. These are
 * the derivatives grit_kin_positions_dual takes through every rotation, normalization and product
 * (equal up to round-off), at a fraction of its cost. */

/* The twists are dual numbers of value 0 whose partials are the twist's components along the seed
 * directions, so that the partials of a quantity follow by dual arithmetic; each result then takes
 * its value from kd. a * ca - b * cb: */
static inline grit_dual lin2(grit_dual a, double ca, grit_dual b, double cb) {
  return grit_dual_sub(grit_dual_scale(a, ca), grit_dual_scale(b, cb));
}

/* s[0] c0 + s[1] c1 + s[2] c2 */
static inline grit_dual comb3(const grit_dual *s, double c0, double c1, double c2) {
  return grit_dual_add(grit_dual_add(grit_dual_scale(s[0], c0), grit_dual_scale(s[1], c1)), grit_dual_scale(s[2], c2));
}

static inline grit_dual with_value(grit_dual a, double v) {
  a.v = v;
  return a;
}

/* A point x0 moving with twist s: partials w x x0 + v (none for s NULL). */
static void rate_point(grit_dual x[3], const double x0[3], const grit_dual *s) {
  if (!s) {
    for (int i = 0; i < 3; ++i) x[i] = grit_dual_const(x0[i]);
    return;
  }
  x[0] = with_value(grit_dual_add(lin2(s[1], x0[2], s[2], x0[1]), s[3]), x0[0]);
  x[1] = with_value(grit_dual_add(lin2(s[2], x0[0], s[0], x0[2]), s[4]), x0[1]);
  x[2] = with_value(grit_dual_add(lin2(s[0], x0[1], s[1], x0[0]), s[5]), x0[2]);
}

/* A direction a0 turning with s: partials w x a0 (none for s NULL). */
static void rate_dir(grit_dual a[3], const double a0[3], const grit_dual *s) {
  if (!s) {
    for (int i = 0; i < 3; ++i) a[i] = grit_dual_const(a0[i]);
    return;
  }
  a[0] = with_value(lin2(s[1], a0[2], s[2], a0[1]), a0[0]);
  a[1] = with_value(lin2(s[2], a0[0], s[0], a0[2]), a0[1]);
  a[2] = with_value(lin2(s[0], a0[1], s[1], a0[0]), a0[2]);
}

/* A motion subspace c = (a; b): partials s xm c = (w x a; w x b + v x a) (none for s NULL). */
static void rate_motion(grit_dual cd[6], const double c[6], const grit_dual *s) {
  rate_dir(cd, c, s);
  if (!s) {
    for (int i = 3; i < 6; ++i) cd[i] = grit_dual_const(c[i]);
    return;
  }
  cd[3] = with_value(grit_dual_add(lin2(s[1], c[5], s[2], c[4]), lin2(s[4], c[2], s[5], c[1])), c[3]);
  cd[4] = with_value(grit_dual_add(lin2(s[2], c[3], s[0], c[5]), lin2(s[5], c[0], s[3], c[2])), c[4]);
  cd[5] = with_value(grit_dual_add(lin2(s[0], c[4], s[1], c[3]), lin2(s[3], c[1], s[4], c[0])), c[5]);
}

static void set_const(grit_dual *x, const double *x0, int n) {
  for (int i = 0; i < n; ++i) x[i] = grit_dual_const(x0[i]);
}

/* Body b's pose and spatial inertia (constant for s NULL). */
static void rate_body(grit_kin_dual *k, const grit_kin *kd, int b, const grit_dual *s) {
  if (!s) {
    set_const(k->xpos + 3 * b, kd->xpos + 3 * b, 3);
    set_const(k->xquat + 4 * b, kd->xquat + 4 * b, 4);
    set_const(k->xmat + 9 * b, kd->xmat + 9 * b, 9);
    set_const(k->xipos + 3 * b, kd->xipos + 3 * b, 3);
    k->cinert[b].m = grit_dual_const(kd->cinert[b].m);
    set_const(k->cinert[b].h, kd->cinert[b].h, 3);
    set_const(k->cinert[b].I, kd->cinert[b].I, 9);
    return;
  }
  rate_point(k->xpos + 3 * b, kd->xpos + 3 * b, s);
  rate_point(k->xipos + 3 * b, kd->xipos + 3 * b, s);
  const double *q = kd->xquat + 4 * b, *R = kd->xmat + 9 * b;
  grit_dual *kq = k->xquat + 4 * b, *kR = k->xmat + 9 * b;
  /* (0, w)/2 (x) q = (-w.u, q0 w + w x u)/2, u = q[1..3] */
  kq[0] = with_value(grit_dual_scale(comb3(s, q[1], q[2], q[3]), -0.5), q[0]);
  kq[1] = with_value(grit_dual_scale(comb3(s, q[0], q[3], -q[2]), 0.5), q[1]);
  kq[2] = with_value(grit_dual_scale(comb3(s, -q[3], q[0], q[1]), 0.5), q[2]);
  kq[3] = with_value(grit_dual_scale(comb3(s, q[2], -q[1], q[0]), 0.5), q[3]);
  for (int col = 0; col < 3; ++col) { /* [w] R, column by column */
    const double Rc[3] = {R[col], R[3 + col], R[6 + col]};
    grit_dual Xc[3];
    rate_dir(Xc, Rc, s);
    for (int r = 0; r < 3; ++r) kR[3 * r + col] = Xc[r];
  }
  const grit_sinertia *S = &kd->cinert[b];
  grit_sinertia_dual *T = &k->cinert[b];
  const double *h = S->h, *I = S->I;
  T->m = grit_dual_const(S->m);
  T->h[0] = with_value(grit_dual_add(lin2(s[1], h[2], s[2], h[1]), grit_dual_scale(s[3], S->m)), h[0]);
  T->h[1] = with_value(grit_dual_add(lin2(s[2], h[0], s[0], h[2]), grit_dual_scale(s[4], S->m)), h[1]);
  T->h[2] = with_value(grit_dual_add(lin2(s[0], h[1], s[1], h[0]), grit_dual_scale(s[5], S->m)), h[2]);
  const grit_dual hv2 = grit_dual_scale(comb3(s + 3, h[0], h[1], h[2]), 2.0);
  for (int r = 0; r < 3; ++r)
    for (int col = r; col < 3; ++col) { /* I' is symmetric: the upper triangle, mirrored */
      /* (w x I[:, col])_r + (w x I[r, :])_col - v_r h_col - h_r v_col + 2 (h.v) [r == col] */
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (col + 1) % 3, c2 = (col + 2) % 3;
      grit_dual x = grit_dual_add(lin2(s[r1], I[3 * r2 + col], s[r2], I[3 * r1 + col]),
                                  lin2(s[c1], I[3 * r + c2], s[c2], I[3 * r + c1]));
      x = grit_dual_sub(x, grit_dual_add(grit_dual_scale(s[3 + r], h[col]), grit_dual_scale(s[3 + col], h[r])));
      if (r == col) x = grit_dual_add(x, hv2);
      T->I[3 * r + col] = with_value(x, I[3 * r + col]);
      T->I[3 * col + r] = with_value(x, I[3 * col + r]);
    }
}

static int partials_zero(const grit_dual *x, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < GRIT_DUAL_N; ++j)
      if (x[i].d[j] != 0.0) return 0;
  return 1;
}

/* Body b's kinematics (pose, inertia, its joint's frame and motion subspaces) at q0 (+) dq from the
 * double values kd and the seeds of dq, after its parent's: its twist along direction j is its parent's
 * plus its own dofs' cdof dq.d[j]. Its joint's anchor and axis move with the parent's twist (a slide or
 * free joint translates its anchor: the body's twist), a hinge or slide's motion subspace with the
 * parent's, a ball or free joint's rotations with the body's (they turn each other's body axes); a
 * free joint's axis and translations are world-fixed. */
void grit_deriv_rigid_body(const grit_model *m, grit_deriv_ws *w, int b) {
  grit_dual *const tb = w->twist + 6 * b;
  const grit_dual *const tp = w->twist + 6 * (b > 0 ? m->body_parent[b] : 0);
  const int moving = m->body_tree[b] >= 0; /* not the world or welded to it */
  for (int r = 0; r < 6; ++r) tb[r] = moving ? tp[r] : grit_dual_const(0.0);
  for (int dof = m->body_dofadr[b]; moving && dof >= 0 && dof < m->body_dofadr[b] + m->body_dofnum[b]; ++dof)
    for (int r = 0; r < 6; ++r) tb[r] = grit_dual_add(tb[r], grit_dual_scale(w->dq[dof], w->kd.cdof[6 * dof + r]));
  /* a twist without partials (no seed reaches the body, as in the trees a pass does not seed) is
   * passed as NULL: constants, without the arithmetic */
  const grit_dual *const S = partials_zero(tb, 6) ? NULL : tb, *const Sp = b == 0 || partials_zero(tp, 6) ? NULL : tp;
  rate_body(&w->kin, &w->kd, b, S);
  if (m->body_jntnum[b] == 1) {
    const int jn = m->body_jnt[m->body_jntadr[b]], type = m->jnt_type[jn], da = m->jnt_dofadr[jn];
    const int slide = type == GRIT_JOINT_SLIDE, free_ = type == GRIT_JOINT_FREE, ball = type == GRIT_JOINT_BALL;
    rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, slide || free_ ? S : Sp);
    rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, free_ ? NULL : Sp);
    for (int i = 0; i < grit_joint_nv(type); ++i)
      rate_motion(w->kin.cdof + 6 * (da + i), w->kd.cdof + 6 * (da + i), free_ && i < 3 ? NULL : ball || free_ ? S : Sp);
    return;
  }
  /* several hinges and slides on one body (grit_deriv_ws_create admits no ball or free joint there):
   * each joint's frame is placed after the joints before it on the body, so its anchor, axis and
   * motion subspace move with the twist accumulated before it (a slide's anchor with its own too) */
  grit_dual tn[6], tn1[6];
  for (int r = 0; r < 6; ++r) tn[r] = moving ? tp[r] : grit_dual_const(0.0);
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int jn = m->body_jnt[m->body_jntadr[b] + n], da = m->jnt_dofadr[jn];
    for (int r = 0; r < 6; ++r) tn1[r] = grit_dual_add(tn[r], grit_dual_scale(w->dq[da], w->kd.cdof[6 * da + r]));
    const grit_dual *const before = partials_zero(tn, 6) ? NULL : tn, *const after = partials_zero(tn1, 6) ? NULL : tn1;
    rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, m->jnt_type[jn] == GRIT_JOINT_SLIDE ? after : before);
    rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, before);
    rate_motion(w->kin.cdof + 6 * da, w->kd.cdof + 6 * da, before);
    for (int r = 0; r < 6; ++r) tn[r] = tn1[r];
  }
}
