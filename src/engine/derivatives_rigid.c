/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rigid.c — the position passes' kinematic partials in closed form, for trees of one-joint
 * bodies and of bodies with several hinges and slides: rigid motions (the same derivatives as the dual kinematics, at a fraction of the cost). */
#include <stddef.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"
#include "grit/constraints.h"
#ifndef GRIT_DERIV_AVX2
#include "actuation_adhesion.h"
#include "actuation_muscle.h"
#include "collision.h"
#include "contact_candidate.h"
#include "fluid.h"
#endif

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
 * directions. Each result takes its value from kd and its partials from the lanes of s, GRIT_DUAL_W_ at
 * a time where grit/dual.h vectorizes: per lane the same IEEE operations in the same order as the dual
 * arithmetic (lin2 a * ca - b * cb, comb3, scale) this file used before, so the same bits, without the
 * values of those products and sums, which nothing read. */
#if GRIT_DUAL_SIMD
typedef grit_dual_pair_ rg_lanes;
#define RG_LANES(i) GRIT_DUAL_PAIRS(i)
#define RG_LD(x, i) grit_dual_ld_((x).d + (i))
#define RG_ST(x, i, y) grit_dual_st_((x).d + (i), (y))
#define RG_C(c) grit_dual_splat_(c)
#else
typedef double rg_lanes;
#define RG_LANES(i) GRIT_DUAL_FOR(i)
#define RG_LD(x, i) ((x).d[i])
#define RG_ST(x, i, y) ((x).d[i] = (y))
#define RG_C(c) (c)
#endif

static void set_const(grit_dual *x, const double *x0, int n) {
  for (int i = 0; i < n; ++i) x[i] = grit_dual_const(x0[i]);
}

/* Values only, over partials known to be zero (w->kin_zero). */
static void set_vals(grit_dual *x, const double *x0, int n) {
  for (int i = 0; i < n; ++i) x[i].v = x0[i];
}

/* A point x0 moving with twist s: partials w x x0 + v (none for s NULL). */
static void rate_point(grit_dual x[3], const double x0[3], const grit_dual *s) {
  if (!s) {
    set_const(x, x0, 3);
    return;
  }
  const rg_lanes c0 = RG_C(x0[0]), c1 = RG_C(x0[1]), c2 = RG_C(x0[2]);
  RG_LANES(l) {
    const rg_lanes w0 = RG_LD(s[0], l), w1 = RG_LD(s[1], l), w2 = RG_LD(s[2], l);
    RG_ST(x[0], l, (w1 * c2 - w2 * c1) + RG_LD(s[3], l));
    RG_ST(x[1], l, (w2 * c0 - w0 * c2) + RG_LD(s[4], l));
    RG_ST(x[2], l, (w0 * c1 - w1 * c0) + RG_LD(s[5], l));
  }
  for (int i = 0; i < 3; ++i) x[i].v = x0[i];
}

/* n directions turning with s: partials w x a. Direction k's components are a0[k], a0[k + cs],
 * a0[k + 2 cs] (a column of a 3x3 matrix for cs = 3), written to the same places of a. */
static void rate_dirs(grit_dual *a, const double *a0, int n, int cs, const grit_dual *s) {
  for (int k = 0; k < n; ++k) {
    grit_dual *r0 = a + k, *r1 = r0 + cs, *r2 = r1 + cs;
    const double x = a0[k], y = a0[k + cs], z = a0[k + 2 * cs];
    if (!s) {
      *r0 = grit_dual_const(x), *r1 = grit_dual_const(y), *r2 = grit_dual_const(z);
      continue;
    }
    const rg_lanes c0 = RG_C(x), c1 = RG_C(y), c2 = RG_C(z);
    RG_LANES(l) {
      const rg_lanes w0 = RG_LD(s[0], l), w1 = RG_LD(s[1], l), w2 = RG_LD(s[2], l);
      RG_ST(*r0, l, w1 * c2 - w2 * c1);
      RG_ST(*r1, l, w2 * c0 - w0 * c2);
      RG_ST(*r2, l, w0 * c1 - w1 * c0);
    }
    r0->v = x, r1->v = y, r2->v = z;
  }
}

/* A direction a0 turning with s: partials w x a0 (none for s NULL). */
static void rate_dir(grit_dual a[3], const double a0[3], const grit_dual *s) { rate_dirs(a, a0, 1, 1, s); }

/* A motion subspace c = (a; b): partials s xm c = (w x a; w x b + v x a) (none for s NULL). */
static void rate_motion(grit_dual cd[6], const double c[6], const grit_dual *s) {
  rate_dir(cd, c, s);
  if (!s) {
    set_const(cd + 3, c + 3, 3);
    return;
  }
  const rg_lanes a0 = RG_C(c[0]), a1 = RG_C(c[1]), a2 = RG_C(c[2]), b0 = RG_C(c[3]), b1 = RG_C(c[4]), b2 = RG_C(c[5]);
  RG_LANES(l) {
    const rg_lanes w0 = RG_LD(s[0], l), w1 = RG_LD(s[1], l), w2 = RG_LD(s[2], l);
    const rg_lanes v0 = RG_LD(s[3], l), v1 = RG_LD(s[4], l), v2 = RG_LD(s[5], l);
    RG_ST(cd[3], l, (w1 * b2 - w2 * b1) + (v1 * a2 - v2 * a1));
    RG_ST(cd[4], l, (w2 * b0 - w0 * b2) + (v2 * a0 - v0 * a2));
    RG_ST(cd[5], l, (w0 * b1 - w1 * b0) + (v0 * a1 - v1 * a0));
  }
  for (int i = 3; i < 6; ++i) cd[i].v = c[i];
}

/* An orientation quaternion q turning with s: partials (0, w)/2 (x) q = (-w.u, q0 w + w x u)/2,
 * u = q[1..3]. */
static void rate_quat(grit_dual kq[4], const double q[4], const grit_dual *s) {
  if (!s) {
    set_const(kq, q, 4);
    return;
  }
  const rg_lanes h = RG_C(0.5), mh = RG_C(-0.5), q0 = RG_C(q[0]), q1 = RG_C(q[1]), q2 = RG_C(q[2]), q3 = RG_C(q[3]);
  const rg_lanes n1 = RG_C(-q[1]), n2 = RG_C(-q[2]), n3 = RG_C(-q[3]);
  RG_LANES(l) {
    const rg_lanes w0 = RG_LD(s[0], l), w1 = RG_LD(s[1], l), w2 = RG_LD(s[2], l);
    RG_ST(kq[0], l, mh * ((w0 * q1 + w1 * q2) + w2 * q3));
    RG_ST(kq[1], l, h * ((w0 * q0 + w1 * q3) + w2 * n2));
    RG_ST(kq[2], l, h * ((w0 * n3 + w1 * q0) + w2 * q1));
    RG_ST(kq[3], l, h * ((w0 * q2 + w1 * n1) + w2 * q0));
  }
  for (int i = 0; i < 4; ++i) kq[i].v = q[i];
}

/* A spatial inertia (m, h, I) moving with s: partials (0, w x h + m v, [w] I - I [w] + 2 (h.v) 1 - v h^T
 * - h v^T); I' is symmetric: its upper triangle, mirrored. */
static void rate_inertia(grit_sinertia_dual *T, const grit_sinertia *S, const grit_dual *s) {
  const double *h = S->h, *I = S->I;
  T->m = grit_dual_const(S->m);
  if (!s) {
    set_const(T->h, h, 3);
    set_const(T->I, I, 9);
    return;
  }
  const rg_lanes m = RG_C(S->m), h0 = RG_C(h[0]), h1 = RG_C(h[1]), h2 = RG_C(h[2]), two = RG_C(2.0);
  RG_LANES(l) {
    const rg_lanes w[3] = {RG_LD(s[0], l), RG_LD(s[1], l), RG_LD(s[2], l)};
    const rg_lanes v[3] = {RG_LD(s[3], l), RG_LD(s[4], l), RG_LD(s[5], l)};
    RG_ST(T->h[0], l, (w[1] * h2 - w[2] * h1) + v[0] * m);
    RG_ST(T->h[1], l, (w[2] * h0 - w[0] * h2) + v[1] * m);
    RG_ST(T->h[2], l, (w[0] * h1 - w[1] * h0) + v[2] * m);
    const rg_lanes hv2 = two * ((v[0] * h0 + v[1] * h1) + v[2] * h2);
    for (int r = 0; r < 3; ++r)
      for (int col = r; col < 3; ++col) {
        /* (w x I[:, col])_r + (w x I[r, :])_col - v_r h_col - h_r v_col + 2 (h.v) [r == col] */
        const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (col + 1) % 3, c2 = (col + 2) % 3;
        rg_lanes x = (w[r1] * RG_C(I[3 * r2 + col]) - w[r2] * RG_C(I[3 * r1 + col])) +
                     (w[c1] * RG_C(I[3 * r + c2]) - w[c2] * RG_C(I[3 * r + c1]));
        x = x - (v[r] * RG_C(h[col]) + v[col] * RG_C(h[r]));
        if (r == col) x = x + hv2;
        RG_ST(T->I[3 * r + col], l, x);
        if (col != r) RG_ST(T->I[3 * col + r], l, x);
      }
  }
  for (int i = 0; i < 3; ++i) T->h[i].v = h[i];
  for (int i = 0; i < 9; ++i) T->I[i].v = I[i];
}

/* Body b's pose and spatial inertia (constant for s NULL). `lean` (grit_deriv_rigid_begin): the fields
 * no consumer of the pass reads keep their values and zero partials (in the call's first pass they are
 * written, as constants). */
static void rate_body(grit_kin_dual *k, const grit_kin *kd, int b, const grit_dual *s, int lean, int first, int pose) {
  if (pose) {
    rate_point(k->xpos + 3 * b, kd->xpos + 3 * b, s);
    rate_dirs(k->xmat + 9 * b, kd->xmat + 9 * b, 3, 3, s); /* [w] R, column by column */
  }
  if (!(lean & GRIT_KIN_LEAN_QUAT)) rate_quat(k->xquat + 4 * b, kd->xquat + 4 * b, s);
  else if (first) set_vals(k->xquat + 4 * b, kd->xquat + 4 * b, 4); /* (lean: kin_zero) */
  if (!(lean & GRIT_KIN_LEAN_DYN)) {
    rate_point(k->xipos + 3 * b, kd->xipos + 3 * b, s);
    rate_inertia(&k->cinert[b], &kd->cinert[b], s);
  } else if (first) {
    set_vals(k->xipos + 3 * b, kd->xipos + 3 * b, 3);
    set_vals(&k->cinert[b].m, &kd->cinert[b].m, 1);
    set_vals(k->cinert[b].h, kd->cinert[b].h, 3);
    set_vals(k->cinert[b].I, kd->cinert[b].I, 9);
  }
}

/* Body b's values alone, its partials known to be zero (kin_zero: a body no seed reaches in a state
 * position pass; clear_tree_partials left them so): pose, inertia, its joints' frames and subspaces. */
static void body_values(const grit_model *m, grit_kin_dual *k, const grit_kin *kd, int b) {
  set_vals(k->xpos + 3 * b, kd->xpos + 3 * b, 3);
  set_vals(k->xquat + 4 * b, kd->xquat + 4 * b, 4);
  set_vals(k->xmat + 9 * b, kd->xmat + 9 * b, 9);
  set_vals(k->xipos + 3 * b, kd->xipos + 3 * b, 3);
  set_vals(&k->cinert[b].m, &kd->cinert[b].m, 1);
  set_vals(k->cinert[b].h, kd->cinert[b].h, 3);
  set_vals(k->cinert[b].I, kd->cinert[b].I, 9);
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int jn = m->body_jnt[m->body_jntadr[b] + n];
    set_vals(k->xanchor + 3 * jn, kd->xanchor + 3 * jn, 3);
    set_vals(k->xaxis + 3 * jn, kd->xaxis + 3 * jn, 3);
  }
  if (m->body_dofnum[b] > 0) set_vals(k->cdof + 6 * m->body_dofadr[b], kd->cdof + 6 * m->body_dofadr[b], 6 * m->body_dofnum[b]);
}

/* Whether x[0..n) have no partials (+-0): the lanes' bits but the sign ORed, without a branch per lane
 * (eight lanes: as two vectors of four, the shift once at the end; the same test). */
static int partials_zero(const grit_dual *x, int n) {
#if GRIT_DUAL_N == 8 && defined(__GNUC__)
  typedef unsigned long long pz_v __attribute__((vector_size(32)));
  pz_v u = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) {
    pz_v a, b;
    memcpy(&a, x[i].d, sizeof a);
    memcpy(&b, x[i].d + 4, sizeof b);
    u |= a | b;
  }
  u <<= 1;
  return (u[0] | u[1] | u[2] | u[3]) == 0;
#else
  unsigned long long u = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < GRIT_DUAL_N; ++j) {
      unsigned long long bits;
      memcpy(&bits, &x[i].d[j], sizeof bits);
      u |= bits << 1;
    }
  return u == 0;
#endif
}

/* tb += dq cdof_dof (partials only: the twist's values are zero) for a seeded dof. A dof without seeds
 * would add c 0 = +-0 to each partial: nothing (a twist's partials are never -0), so it is skipped. */
static void add_dof(grit_dual tb[6], const grit_dual *dq, const double *cdof) {
  for (int r = 0; r < 6; ++r) {
    const rg_lanes c = RG_C(cdof[r]);
    RG_LANES(l) RG_ST(tb[r], l, RG_LD(tb[r], l) + c * RG_LD(*dq, l));
  }
}

/* The world or a body welded to it: constants, written once per call. */
static void welded_body(const grit_model *m, grit_deriv_ws *w, int b) {
  w->twon[b] = 0, w->twsrc[b] = b;
  if (!w->kin_first && !w->no_kin_lean) return;
  for (int r = 0; r < 6; ++r) w->twist[6 * b + r] = grit_dual_const(0.0);
  rate_body(&w->kin, &w->kd, b, NULL, 0, 1, 1);
  for (int n = 0; n < m->body_jntnum[b]; ++n) { /* (a welded body has no joint) */
    const int jn = m->body_jnt[m->body_jntadr[b] + n];
    rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, NULL);
    rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, NULL);
  }
}

/* Body b's twist: its parent's (tp), plus its seeded dofs' cdof dq (*own: it has one; then held in
 * w->twist of b, else the parent's stands for it). NULL if it has no partials. */
static const grit_dual *twist_of(const grit_model *m, grit_deriv_ws *w, int b, const grit_dual *tp, int on, int *own) {
  grit_dual *const tb = w->twist + 6 * b;
  const int d0 = m->body_dofadr[b], nd = m->body_dofnum[b];
  *own = 0;
  for (int dof = d0; dof >= 0 && dof < d0 + nd; ++dof) *own |= !partials_zero(&w->dq[dof], 1);
  if (*own) {
    for (int r = 0; r < 6; ++r) tb[r] = tp[r];
    for (int dof = d0; dof < d0 + nd; ++dof)
      if (!partials_zero(&w->dq[dof], 1)) add_dof(tb, &w->dq[dof], w->kd.cdof + 6 * dof);
    on = !partials_zero(tb, 6); /* (a sum that cancels to zeros) */
  }
  return !on ? NULL : *own ? tb : tp;
}

/* What a body's joints write: the frames' rates (else values only, in a first pass, or nothing), the
 * motion subspaces. */
typedef struct {
  int rates, frames, cdofs, first;
} joint_fields;

/* One joint: its anchor and axis move with the parent's twist Sp (a slide or free joint translates
 * its anchor: the body's twist S), a hinge or slide's motion subspace with Sp, a ball or free joint's
 * rotations with S (they turn each other's body axes); a free joint's axis and translations are
 * world-fixed (its translations' subspaces constants written by the call's first pass). */
static void one_joint(const grit_model *m, grit_deriv_ws *w, int b, const grit_dual *S, const grit_dual *Sp,
                      joint_fields f) {
  const int jn = m->body_jnt[m->body_jntadr[b]], type = m->jnt_type[jn], da = m->jnt_dofadr[jn];
  const int slide = type == GRIT_JOINT_SLIDE, free_ = type == GRIT_JOINT_FREE, ball = type == GRIT_JOINT_BALL;
  if (f.frames) {
    rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, !f.rates ? NULL : slide || free_ ? S : Sp);
    rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, !f.rates || free_ ? NULL : Sp);
  }
  for (int i = free_ && !f.first && !w->no_kin_lean ? 3 : 0; i < grit_joint_nv(type) && f.cdofs; ++i)
    rate_motion(w->kin.cdof + 6 * (da + i), w->kd.cdof + 6 * (da + i), free_ && i < 3 ? NULL : ball || free_ ? S : Sp);
}

/* Several hinges and slides on one body (grit_deriv_ws_create admits no ball or free joint there): each
 * joint's frame is placed after the joints before it on the body, so its anchor, axis and motion
 * subspace move with the twist accumulated before it (a slide's anchor with its own too); without a
 * seeded dof on the body (!own), the parent's twist Sp throughout. */
static void several_joints(const grit_model *m, grit_deriv_ws *w, int b, const grit_dual *tp, int tn_on, int own,
                           const grit_dual *Sp, joint_fields f) {
  grit_dual tn[6];
  if (own)
    for (int r = 0; r < 6; ++r) tn[r] = tp[r];
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int jn = m->body_jnt[m->body_jntadr[b] + n], da = m->jnt_dofadr[jn];
    const int slide = m->jnt_type[jn] == GRIT_JOINT_SLIDE;
    const grit_dual *const before = !own ? Sp : tn_on && !partials_zero(tn, 6) ? tn : NULL;
    if (f.cdofs) rate_motion(w->kin.cdof + 6 * da, w->kd.cdof + 6 * da, before);
    if (f.frames) rate_dir(w->kin.xaxis + 3 * jn, w->kd.xaxis + 3 * jn, f.rates ? before : NULL);
    if (f.frames && !slide) rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, f.rates ? before : NULL);
    if (own && !partials_zero(&w->dq[da], 1)) { /* the twist after this joint */
      add_dof(tn, &w->dq[da], w->kd.cdof + 6 * da);
      tn_on = 1;
    }
    const grit_dual *const after = !own ? Sp : tn_on && !partials_zero(tn, 6) ? tn : NULL;
    if (f.frames && slide) rate_point(w->kin.xanchor + 3 * jn, w->kd.xanchor + 3 * jn, f.rates ? after : NULL);
  }
}

/* Body b's kinematics (pose, inertia, its joints' frames and motion subspaces) at q0 (+) dq from the
 * double values kd and the seeds of dq, after its parent's: its twist along direction j is its parent's
 * plus its own dofs' cdof dq.d[j]. A twist without partials (no seed reaches the body, as in the trees a
 * pass does not seed) is passed as NULL: constants, without the arithmetic; w->twon[b] notes which for
 * the children. The fields w->klean leaves out are not written (in the call's first pass, their values). */
void grit_deriv_rigid_body(const grit_model *m, grit_deriv_ws *w, int b) {
  const int t = m->body_tree[b], p = b > 0 ? m->body_parent[b] : 0;
  if (t < 0) {
    welded_body(m, w, b);
    return;
  }
  /* the parent's twist, where it is held (w->twsrc: a body without seeded dofs has its parent's) */
  const grit_dual *const tp = w->twist + 6 * w->twsrc[p], *const Sp = w->twon[p] ? tp : NULL;
  int own;
  const grit_dual *const S = twist_of(m, w, b, tp, w->twon[p], &own);
  w->twon[b] = S != NULL, w->twsrc[b] = own ? b : w->twsrc[p];
  const int lean = w->klean[t], first = w->kin_first;
  if (!S && !Sp && w->kin_zero) { /* constants over zero partials: their values, if this call's first pass */
    if (first) body_values(m, &w->kin, &w->kd, b);
    return;
  }
  const int need = lean & GRIT_KIN_LEAN_POSE ? w->bneed[b] : 3;
  rate_body(&w->kin, &w->kd, b, S, lean, first, need & 1);
  /* the joints' anchors and axes: read only by the dual dynamics (momentum correction), so in a lean
   * pass as rate_body's lean fields */
  const int rates = !(lean & GRIT_KIN_LEAN_DYN);
  const joint_fields f = {rates, rates || first, need & 2, first};
  if (m->body_jntnum[b] == 1) one_joint(m, w, b, S, Sp, f);
  else several_joints(m, w, b, tp, w->twon[p], own, Sp, f);
}

#ifndef GRIT_DERIV_AVX2 /* once: derivatives_avx2.c compiles this file again for the rest */
/* Whether the contacts are the only readers of the kinematics besides the dual dynamics: no equality,
 * spatial tendon (a fixed one reads q), actuator with a length function (tendon, site, slider-crank),
 * adhesion or fluid. */
static int contacts_only(const grit_model *m) {
  if (m->neq > 0 || grit_adhesion_any(m) || grit_fluid_on(m)) return 0;
  for (int i = 0; i < m->ntendon; ++i)
    if (m->ten_type[i] != GRIT_TENDON_FIXED) return 0;
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a)) return 0;
  return 1;
}

/* A pass's lean trees: a state position pass (skip_qconst, the model's inertias) that forms no dual mass
 * matrix (mask2), Newton-Euler bias (mask3) or momentum correction (rnea_bias: a spinning tree whose
 * correction derivatives_momentum.c does not take) of the tree reads none of the fields GRIT_KIN_LEAN_DYN
 * leaves out: the contacts, equalities, tendons, muscles and adhesion read poses and motion subspaces.
 * With contacts_only and after the call's first pass (which writes every value) the contacts of the
 * seeded trees say which poses and motion subspaces are read: their bodies' poses (the geometry's
 * re-evaluation) and the subspaces of the dofs on their chains (J_c, J_c v, J_c^T gamma). */
void grit_deriv_rigid_begin(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int kin_all,
                            int skip_qconst) {
  w->kin_first = kin_all;
  const int ok = !w->no_kin_lean && skip_qconst && !w->inertial_in;
  /* in a state position pass every tree's kinematic partials start from zero: the call's passes so far
   * cleared theirs (clear_tree_partials; the parameter passes, last in a call, every tree's; a call
   * that failed half-way, at the next call's start) */
  w->kin_zero = ok;
  int weld = 0;
  for (int e = 0; e < m->neq; ++e) weld |= m->eq_type[e] == GRIT_EQ_WELD;
  const int pose = ok && !kin_all && active && contacts_only(m);
  for (int t = 0; t < m->ntree; ++t) {
    const int dyn = w->mask2[t] || w->mask3[t] ||
                    (w->rmask[t] && w->rn.spin[t] && !m->opt.explicit_gyroscopic && !w->rn.mom.on);
    w->klean[t] = (char)(!ok || !w->rigid[t] ? 0 /* (the dual kinematics write every field) */
                         : dyn ? (weld ? 0 : GRIT_KIN_LEAN_QUAT)
                               : GRIT_KIN_LEAN_DYN | (weld ? 0 : GRIT_KIN_LEAN_QUAT) | (pose ? GRIT_KIN_LEAN_POSE : 0));
  }
  if (!pose) return;
  for (int b = 0; b < m->nbody; ++b) w->bneed[b] = 0;
  for (int i = 0; i < d->ncontacts; ++i)
    for (int s = 0; s < 2; ++s) {
      const int b = d->collision->c[i].body[s], t = m->body_tree[b];
      if (t < 0 || !active[t]) continue;
      w->bneed[b] |= 1;
      for (int x = b; x > 0 && !(w->bneed[x] & 2); x = m->body_parent[x]) w->bneed[x] |= 2;
    }
}
#endif

#undef RG_LANES
#undef RG_LD
#undef RG_ST
#undef RG_C

/* ------------------------------------------------------------- a contact body's twist */

/* grit_body_dof_twist_dual (derivatives_contact_generic.h: S = the sum over body's chain of cdof v, the
 * free joint's linear dofs as constants) in a position pass: the dofs of a body the pass's seeds do not
 * move (grit_deriv_chain_moved; its ancestors neither) have motion subspaces without partials, and add
 * their values only. Their partials' terms would be v cdof.d, zeros, and the sums' partials start at +0
 * and never become -0 (round to nearest: x + (-x) is +0), so adding a zero leaves them as they are: the
 * same bits, without 6 x GRIT_DUAL_N products and sums per such dof (the root's and the trunk's, on a
 * humanoid's limb). */
/* The sums of grit_deriv_body_twist kept in locals (registers) over the chain and stored once, not loaded
 * and stored through S at every dof: per sum the same operations in the same order, S.v + cd.v v and
 * S.d + v cd.d (grit_dual_add of grit_dual_scale), S.v + v for a free joint's linear dof (grit_dual_addc). */
static void body_twist_regs(const grit_model *m, const grit_deriv_ws *w, int body, int t, const double *v,
                            grit_dual S[6]) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  double sv[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
#if GRIT_DUAL_SIMD
  grit_dual_pair_ sd[6][GRIT_DUAL_N / GRIT_DUAL_W_];
  for (int c = 0; c < 6; ++c)
    for (int k = 0; k < GRIT_DUAL_N / GRIT_DUAL_W_; ++k) sd[c][k] = grit_dual_splat_(0.0);
#else
  double sd[6][GRIT_DUAL_N];
  for (int c = 0; c < 6; ++c) GRIT_DUAL_FOR(l) sd[c][l] = 0.0;
#endif
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    const double vd = v[dof];
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
      sv[3 + dof - m->jnt_dofadr[jn]] += vd;
      continue;
    }
    const grit_dual *cd = w->kin.cdof + 6 * dof;
    for (int c = 0; c < 6; ++c) sv[c] = sv[c] + cd[c].v * vd;
    if (!grit_deriv_chain_moved(w, m->dof_body[dof])) continue; /* partials' terms +0: as grit_deriv_body_twist */
#if GRIT_DUAL_SIMD
    const grit_dual_pair_ s = grit_dual_splat_(vd);
    for (int c = 0; c < 6; ++c)
      for (int k = 0; k < GRIT_DUAL_N / GRIT_DUAL_W_; ++k) sd[c][k] = sd[c][k] + s * grit_dual_ld_(cd[c].d + GRIT_DUAL_W_ * k);
#else
    for (int c = 0; c < 6; ++c) GRIT_DUAL_FOR(l) sd[c][l] = sd[c][l] + vd * cd[c].d[l];
#endif
  }
  for (int c = 0; c < 6; ++c) {
    S[c].v = sv[c];
#if GRIT_DUAL_SIMD
    for (int k = 0; k < GRIT_DUAL_N / GRIT_DUAL_W_; ++k) grit_dual_st_(S[c].d + GRIT_DUAL_W_ * k, sd[c][k]);
#else
    GRIT_DUAL_FOR(l) S[c].d[l] = sd[c][l];
#endif
  }
}

void grit_deriv_body_twist(const grit_model *m, const grit_deriv_ws *w, int body, int t, const double *v, grit_dual S[6]) {
  if (!w->rn.no_twist_regs) {
    body_twist_regs(m, w, body, t, v, S);
    return;
  }
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int c = 0; c < 6; ++c) S[c] = grit_dual_const(0.0);
  for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
      S[3 + dof - m->jnt_dofadr[jn]] = grit_dual_addc(S[3 + dof - m->jnt_dofadr[jn]], v[dof]);
      continue;
    }
    const grit_dual *cd = w->kin.cdof + 6 * dof;
    if (!grit_deriv_chain_moved(w, m->dof_body[dof])) {
      for (int c = 0; c < 6; ++c) S[c].v = S[c].v + cd[c].v * v[dof];
      continue;
    }
    for (int c = 0; c < 6; ++c) S[c] = grit_dual_add(S[c], grit_dual_scale(cd[c], v[dof]));
  }
}
