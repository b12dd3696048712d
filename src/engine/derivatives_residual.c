/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_residual.c — the step's momentum residual r(v; theta) on dual numbers (seed 000, section X-B):
 * the seeding of the columns of theta, the position passes (q0 (+) dq0: kinematics, mass matrix, bias
 * forces, contact geometry re-evaluated from body-fixed features, constraint impulses), the velocity
 * and control passes at constant positions, and the clearing of a pass's partials (the Lagged contacts'
 * rank-one terms: derivatives_lagged.c). The residual is built from the same scalar-generic code as the step; only the loop
 * that assembles it is written here. grit_step_derivatives (derivatives.c) drives the passes;
 * derivatives_columns.c solves and writes the columns. Contacts that need no Delassus estimate apply
 * J_c v and J_c^T gamma without forming J_c (derivatives_contact.c). The trees derivatives_rnea.c covers
 * take the smooth dynamics' partials from its double matrices (rnea_rows) instead of the dual M, A (v - v0)
 * and Newton-Euler pass. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "actuation.h"
#include "actuation_adhesion.h"
#include "actuation_muscle.h" /* grit_actuator_has_length_fn */
#include "collision.h"
#include "constraints.h"
#include "contact_margin.h"
#include "constraints_extra.h"
#include "contact_geometry.h"
#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_contact.h"
#include "derivatives_contact_chain.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"
#include "derivatives_smooth.h"
#include "derivatives_tendon.h"
#include "dynamics.h"
#include "fluid.h"
#include "grit/constraints.h" /* GRIT_TENDON_FIXED */
#include "hydro.h"
#include "quasistatic.h"
#include "solver.h"

/* ------------------------------------------------------------------------------ the inputs */

/* Subtracts J^T gamma (dual) of one constraint from r, with the constraint's dual Jacobian blocks, over
 * the columns span[k][0] .. span[k][1] - 1 of each (jacobian_span: J is zero outside). */
static void subtract_jt_gamma(const grit_model *m, int dim, int ntree, const int tree[2], const grit_dual *const J[2],
                              int span[2][2], const grit_dual *gamma, grit_dual *r) {
  for (int k = 0; k < ntree; ++k) {
    const int n = m->tree_dofnum[tree[k]], adr = m->tree_dofadr[tree[k]];
    for (int q = 0; q < dim; ++q)
      for (int j = span[k][0]; j < span[k][1]; ++j)
        r[adr + j] = grit_dual_sub(r[adr + j], grit_dual_mul(J[k][q * n + j], gamma[q]));
  }
}

/* a b + c with b a plain double: grit_dual_fma(a, grit_dual_const(b), c) bit for bit (its a.v * 0 terms
 * add nothing to a finite sum) at two thirds of the arithmetic. */
static inline grit_dual fma_by_const(grit_dual a, double b, grit_dual c) {
  grit_dual r;
  r.v = a.v * b + c.v;
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] * b + c.d[i];
  return r;
}

/* J v + b with v (the solution) a plain double, over the columns of span (as subtract_jt_gamma). */
static void apply_jacobian(const grit_model *m, int dim, int ntree, const int tree[2], const grit_dual *const J[2],
                           int span[2][2], const double *v, const double *b, grit_dual *vc) {
  for (int q = 0; q < dim; ++q) {
    vc[q] = grit_dual_const(b ? b[q] : 0.0);
    for (int k = 0; k < ntree; ++k) {
      const int n = m->tree_dofnum[tree[k]], adr = m->tree_dofadr[tree[k]];
      for (int j = span[k][0]; j < span[k][1]; ++j) vc[q] = fma_by_const(J[k][q * n + j], v[adr + j], vc[q]);
    }
  }
}

/* Whether x's value and partials are all +-0: their bits ORed without the sign, no branch per lane (the
 * same test as x != 0.0 lane by lane: a NaN is not zero either way). */
_Static_assert(offsetof(grit_dual, d) == sizeof(double), "a dual's value, then its partials");
static int dual_is_zero(const grit_dual *x) {
  uint64_t b[GRIT_DUAL_N + 1], u = 0;
  memcpy(b, x, sizeof b);
  for (int l = 0; l <= GRIT_DUAL_N; ++l) u |= b[l] << 1;
  return u == 0;
}

/* Whether x[0 .. 3] are all +-0 (x == 0.0 each; a NaN's bits are not): their bits or-ed, the signs
 * dropped once (a limit row's scan for its zeros, ~100 doubles on the dog, went one by one). */
static inline int abs_zero4(const double *x) {
  uint64_t b[4];
  memcpy(b, x, sizeof b);
  return ((b[0] | b[1] | b[2] | b[3]) << 1) == 0u;
}

/* Each tree slot's columns [span[k][0], span[k][1]) outside which every row of J is exactly zero, value
 * and partials: a joint's friction row is its dof's column, a joint limit's or a tendon's the range of
 * its nonzero entries; a contact's (its bodies' chains) is left whole. Products with the zeros outside
 * add only zeros (at most a zero's sign differs). */
static void jacobian_span(const grit_model *m, const grit_constraint *k, int contact, const grit_dual *const J[2],
                          const double *Jd, const int jd_bits[2], int span[2][2]) {
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]];
    span[q][0] = 0, span[q][1] = n;
    if (contact) continue;
    if (k->kind == GRIT_CONSTRAINT_FRICTION) { /* J = e_dof (grit_cx_rows) */
      span[q][0] = k->source - m->tree_dofadr[k->tree[q]], span[q][1] = span[q][0] + 1;
      continue;
    }
    int lo = n, hi = 0;
    if (Jd) { /* a joint limit's J: the stored values Jd, no partials (jacobian_rows): its zeros in doubles */
      /* four at a time, then one by one: the same first and last entries != 0; from the span of its
       * entries of other bits than +0 when given (limit_jacobian_row's: +0 outside it, == 0 too) */
      int a = jd_bits ? jd_bits[0] : 0, b = jd_bits ? jd_bits[1] : n;
      while (a + 4 <= b && abs_zero4(Jd + a)) a += 4;
      while (a < b && Jd[a] == 0.0) ++a;
      while (b - 4 >= a && abs_zero4(Jd + b - 4)) b -= 4;
      while (b > a && Jd[b - 1] == 0.0) --b;
      span[q][0] = a < b ? a : 0, span[q][1] = a < b ? b : 0;
      continue;
    }
    for (int r = 0; r < k->dim; ++r) {
      const grit_dual *Jr = J[q] + (size_t)r * (size_t)n;
      int a = 0, b = n;
      while (a < b && dual_is_zero(&Jr[a])) ++a;
      while (b > a && dual_is_zero(&Jr[b - 1])) --b;
      if (a < b) lo = a < lo ? a : lo, hi = b > hi ? b : hi;
    }
    span[q][0] = lo < hi ? lo : 0, span[q][1] = lo < hi ? hi : 0;
  }
}

/* w->q = q0 (+) dq (grit_kin_integrate_dual). The exponential map of a ball or free joint's quaternion
 * is needed only by the dual kinematics (trees that are not rigid, passes that seed masses): in the
 * rigid trees that quaternion keeps the value of q0 (+) 0, its partials read by nothing (limits and
 * springs are on hinges and slides only). The first pass of a call keeps the values, qd, from the
 * double map at dq = 0 (the dual map's values bit for bit), then seeds every joint as the others do
 * (ws->no_kin_skip: the dual map over every joint, as before). */
static void seed_positions(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *kmask) {
  if (!w->qd_valid && w->no_kin_skip) {
    for (int i = 0; i < m->nq; ++i) w->q[i] = grit_dual_const(d->qprev[i]);
    grit_kin_integrate_dual(m, w->q, w->dq, 1.0);
    for (int i = 0; i < m->nq; ++i) w->qd[i] = w->q[i].v;
    w->qd_valid = 1;
    return;
  }
  if (!w->qd_valid) { /* the values in doubles (the dual map's, bit for bit), then every joint as below */
    memcpy(w->qd, d->qprev, sizeof(double) * (size_t)m->nq);
    grit_kin_integrate(m, w->qd, w->zeros, 1.0);
    w->qd_valid = 1;
    kmask = NULL;
  }
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (kmask && !kmask[m->dof_tree[da]]) continue; /* q0 (+) 0 since the first pass (clear_tree_partials) */
    const int nlin = type == GRIT_JOINT_FREE ? 3 : type == GRIT_JOINT_BALL ? 0 : 1; /* q + dq */
    for (int i = 0; i < nlin; ++i) w->q[qa + i] = grit_dual_add(grit_dual_const(w->qd[qa + i]), w->dq[da + i]);
    if (nlin == 1) continue;
    grit_dual *quat = w->q + qa + nlin;
    if (w->rigid[m->dof_tree[da]] && !w->inertial_in) {
      for (int i = 0; i < 4; ++i) quat[i] = grit_dual_const(w->qd[qa + nlin + i]);
    } else {
      for (int i = 0; i < 4; ++i) quat[i] = grit_dual_const(d->qprev[qa + nlin + i]);
      grit_quat_integrate_dual(quat, w->dq + da + nlin, 1.0);
    }
  }
}

/* Whether the model has no reader of the dual kinematics of a position pass but the dual dynamics and the
 * contacts: no equality (their rows read poses), adhesion, spatial tendon, nor length-fn actuator other
 * than a fixed tendon's (site and slider-crank moments, spatial tendons read poses; a fixed tendon q). */
static int kin_readers_none(const grit_model *m) {
  if (m->neq > 0 || grit_adhesion_any(m)) return 0;
  for (int i = 0; i < m->ntendon; ++i)
    if (m->ten_type[i] != GRIT_TENDON_FIXED) return 0;
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a) &&
        !(m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[m->act_tendon[a]] == GRIT_TENDON_FIXED))
      return 0;
  return 1;
}

/* The trees whose dual kinematics a state position pass leaves out (w->kskip): rigid trees forming no dual
 * dynamics (GRIT_KIN_LEAN_DYN: dynamics and fluid from rn, in doubles at kd), no contact candidate on
 * them, no other reader (kin_readers_none). Nothing in the call reads them: velocity and control passes
 * take rn and the smooth force (q, the tendons' kept L and J), parameter passes form all kinematics, the
 * next call's first pass writes every value; their partials stay zero. ws->no_kin_skip: the old path. */
static void kin_skip(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int skip_qconst) {
  const int on = !w->no_kin_skip && skip_qconst && !w->inertial_in && w->kin_zero && kin_readers_none(m);
  for (int t = 0; t < m->ntree; ++t)
    w->kskip[t] = (char)(on && w->rigid[t] && (w->klean[t] & GRIT_KIN_LEAN_DYN) && w->rmask[t]);
  for (int i = 0; on && i < d->ncontacts; ++i)
    for (int s = 0; s < 2; ++s) {
      const int t = grit_body_tree(m, d->collision->c[i].body[s]);
      if (t >= 0) w->kskip[t] = 0;
    }
}

/* grit_kin_positions_dual at w->q = q0 (+) dq for the trees of kmask (NULL: all), the world and the
 * bodies welded to it: in closed form for the rigid trees when the inertial parameters are the
 * model's (state passes), else through the dual kinematics. */
static void positions_dual(const grit_model *m, grit_deriv_ws *w, const char *kmask) {
  if (w->inertial_in) { /* masses may be seeded */
    w->kin.tree_mask = kmask;
    grit_kin_positions_dual(m, w->q, w->inertial_in, &w->kin);
    return;
  }
  if (!w->kd_valid) { /* the values, once per call: those of the dual kinematics, bit for bit */
    grit_kin_positions(m, w->qd, NULL, &w->kd);
    w->kd_valid = 1;
  }
  int any = 0;
  for (int t = 0; t < m->ntree; ++t) {
    w->mask4[t] = (!kmask || kmask[t]) && !w->rigid[t];
    any |= w->mask4[t];
  }
  if (any) {
    w->kin.tree_mask = w->mask4;
    grit_kin_positions_dual(m, w->q, NULL, &w->kin);
  }
  for (int b = 0; b < m->nbody; ++b) {
    const int t = m->body_tree[b];
    if ((t < 0 || ((!kmask || kmask[t]) && w->rigid[t] && !w->kskip[t])) && grit_deriv_chain_body(w, b)) /* moved (chain.c) */
      w->fx->rigid_body(m, w, b);
  }
  w->kin.tree_mask = kmask;
}

/* A constraint whose impulse is exactly zero at the solution lies strictly inside its model's region of
 * no contact (each model's zero is a branch of its own, not a round-off accident), where the impulse
 * stays zero under small changes of every input: it contributes nothing to r or to dr/dtheta. Contact
 * candidates kept by the margin but not touching are such constraints; skipping them keeps the
 * colouring to the trees that truly interact. */
int grit_deriv_constraint_inert(const grit_constraint *c) {
  /* bilateral constraints (equalities, tendon springs) have no such region: a zero impulse is a
   * crossing, and their impulse's partials need not vanish there */
  const int k = c->kind;
  if (k == GRIT_CONSTRAINT_EQUALITY || k == GRIT_CONSTRAINT_EQUALITY_1D || k == GRIT_CONSTRAINT_TENDON_SPRING) return 0;
  /* a smoothed pair within its film's window has a derivative even at v_c = 0, where gamma is 0 */
  if (c->kind <= GRIT_CONSTRAINT_SIMILAR && c->p.grip > 0.0) return 0;
  for (int r = 0; r < c->dim; ++r)
    if (c->gamma[r] != 0.0) return 0;
  return 1;
}

/* Whether the step's constraints use the Delassus estimate w (grit_params_finalize): SAP contacts,
 * joint limits with a nonzero impulse, Lagged contacts with the regularization on, and gradient
 * smoothing's pairs. Lagged and Similar contacts without such limits do not, and the residual then needs
 * neither A's dual factor nor the estimates (an inert limit, zero impulse, is skipped by the residual). */
int grit_deriv_uses_delassus(const grit_data *d) {
  if (d->settings.contact_model == GRIT_CONTACT_SAP) return 1;
  if (d->settings.contact_model == GRIT_CONTACT_LAGGED && d->settings.regularize_lagged) return 1;
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  for (int i = 0; i < d->ncontacts; ++i) /* gradient smoothing: m_eff = 1 / w (docs/contact.md) */
    if (c[i].kind <= GRIT_CONSTRAINT_SIMILAR && (c[i].p.smooth > 0.0 || c[i].p.soft > 0.0) &&
        !grit_deriv_constraint_inert(&c[i]))
      return 1;
  for (int i = d->ncontacts; i < d->stats.nconstraints; ++i)
    if (c[i].kind >= GRIT_CONSTRAINT_LIMIT && c[i].kind != GRIT_CONSTRAINT_TENDON_SPRING && !grit_deriv_constraint_inert(&c[i]))
      return 1;
  return 0;
}

/* Geometry g's pose on body b that no pass moves (the world's, or a tree not seeded: its partials were
 * cleared): in plain doubles, the same operations on the values, as constants. */
static inline void fixed_geom_pose(const grit_model *m, const grit_deriv_ws *w, int b, int g, grit_dual gp[3],
                                   grit_dual gR[9]) {
  double xp[3], xR[9], pd[3], Rd[9];
  for (int i = 0; i < 3; ++i) xp[i] = w->kin.xpos[3 * b + i].v;
  for (int i = 0; i < 9; ++i) xR[i] = w->kin.xmat[9 * b + i].v;
  grit_tf_compose_c(pd, Rd, xp, xR, m->geom_pos + 3 * g, m->geom_mat + 9 * g);
  for (int i = 0; i < 3; ++i) gp[i] = grit_dual_const(pd[i]);
  for (int i = 0; i < 9; ++i) gR[i] = grit_dual_const(Rd[i]);
}

void grit_deriv_fixed_geom_pose(const grit_model *m, const grit_deriv_ws *w, int b, int g, grit_dual gp[3],
                                grit_dual gR[9]) {
  fixed_geom_pose(m, w, b, g, gp, gR);
}

/* A contact's geometry (phi, frame, points) and pair parameters re-evaluated from its body-fixed
 * features at the dual positions; a side s whose geometry pose is given (gpo[s], gRo[s]; gpo NULL: none)
 * at that pose instead of its body's composed (derivatives_contact_chain.c's, kept for the call). */
void grit_deriv_contact_inputs(const grit_model *m, const grit_deriv_ws *w, const char *active,
                               const grit_contact_candidate *cand, const grit_dual *const gpo[2],
                               const grit_dual *const gRo[2], grit_contact_geom_dual *geo,
                               grit_contact_params_dual *p) {
  grit_dual gp[2][3], gR[2][9];
  for (int s = 0; s < 2; ++s) { /* geometry poses: body pose (dual) composed with the local pose */
    const int g = cand->geom[s], b = cand->body[s], t = grit_body_tree(m, b);
    if (gpo && gpo[s]) continue; /* given */
    if (!w->inertial_in && (t < 0 || (active && !active[t]))) {
      fixed_geom_pose(m, w, b, g, gp[s], gR[s]);
      continue;
    }
    w->fx->compose(gp[s], gR[s], w->kin.xpos + 3 * b, w->kin.xmat + 9 * b, m->geom_pos + 3 * g,
                   m->geom_mat + 9 * g);
  }
  const grit_dual *pa = gpo && gpo[0] ? gpo[0] : gp[0], *Ra = gpo && gpo[0] ? gRo[0] : gR[0];
  const grit_dual *pb = gpo && gpo[1] ? gpo[1] : gp[1], *Rb = gpo && gpo[1] ? gRo[1] : gR[1];
  grit_dual k_patch; /* hydro: a pressure-field patch is re-evaluated by its own code (hydro.h) */
  if (cand->k_patch > 0)
    grit_hydro_patch_reevaluate_dual(m, w->gparam + GRIT_PARAM_HYDRO_MODULUS * m->ngeom, cand, pa, Ra, pb, Rb, geo,
                                     &k_patch);
  else w->fx->reevaluate(&cand->pt, pa, Ra, pb, Rb, geo);
  w->fx->pair_params(&w->geom, cand->geom[0], cand->geom[1], p);
  if (cand->k_patch > 0) p->k = k_patch; /* hydro */
  p->phi0 = grit_dual_addc(geo->phi, -grit_pair_inflation(m, cand->geom[0], cand->geom[1])); /* margin - gap */
}

/* The contact's Jacobian blocks J[q] (zeroed) of its trees: body 1's side +, body 0's side -. */
static void contact_jacobian(const grit_model *m, grit_deriv_ws *w, const grit_contact_candidate *cand,
                             const grit_constraint *k, const grit_contact_geom_dual *geo, grit_dual *const J[2]) {
  for (int q = 0; q < k->ntree; ++q) {
    const int t = k->tree[q];
    if (t == grit_body_tree(m, cand->body[1]))
      w->fx->jacobian_add(m, &w->kin, cand->body[1], geo->pb, t, geo->frame, 1.0, J[q], w->scratch);
    if (t == grit_body_tree(m, cand->body[0]))
      w->fx->jacobian_add(m, &w->kin, cand->body[0], geo->pa, t, geo->frame, -1.0, J[q], w->scratch);
  }
}

/* Body b's twist under the solution's velocities (v0: the previous state's), formed once per residual
 * evaluation. */
const grit_dual *grit_deriv_contact_twist(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int b, int v0) {
  unsigned *at = v0 ? w->bsv0_at : w->bsv_at;
  grit_dual *S = (v0 ? w->bsv0 : w->bsv) + 6 * b;
  if (at[b] != w->eval_no) {
    if (w->rn.no_twist_skip) w->fx->body_twist(m, &w->kin, b, grit_body_tree(m, b), v0 ? d->vprev : d->vsol, S);
    else w->fx->body_twist_moved(m, w, b, grit_body_tree(m, b), v0 ? d->vprev : d->vsol, S); /* derivatives_rigid.c */
    at[b] = w->eval_no;
  }
  return S;
}

/* The same sides without J: with `vel` (0 the solution; 1 v0, the normal row only), adds J v to vc; else
 * adds the sides' wrenches of gamma to their bodies' (subtracted from r by apply_wrenches). */
static void contact_sides(const grit_model *m, const grit_data *d, grit_deriv_ws *w,
                          const grit_contact_candidate *cand, const grit_constraint *k,
                          const grit_contact_geom_dual *geo, int vel, grit_dual *vc, const grit_dual *gamma) {
  for (int q = 0; q < k->ntree; ++q) {
    const int t = k->tree[q];
    for (int s = 1; s >= 0; --s) {
      const int b = cand->body[s];
      if (t != grit_body_tree(m, b)) continue;
      const grit_dual *pt = s == 1 ? geo->pb : geo->pa;
      const double sign = s == 1 ? 1.0 : -1.0;
      if (!gamma) {
        w->fx->side_velocity(grit_deriv_contact_twist(m, d, w, b, vel), pt, geo->frame, sign, vel ? 2 : 0, vc);
        continue;
      }
      if (w->bwr_at[b] != w->eval_no) {
        for (int c = 0; c < 6; ++c) w->bwr[6 * b + c] = grit_dual_const(0.0);
        w->bwr_at[b] = w->eval_no;
        w->bwr_list[w->nbwr++] = b;
      }
      w->fx->side_wrench(pt, geo->frame, sign, gamma, w->bwr + 6 * b);
    }
  }
}

/* Subtracts the evaluation's contact wrenches, body by body, from r. */
static void apply_wrenches(const grit_model *m, grit_deriv_ws *w) {
  for (int i = 0; i < w->nbwr; ++i) {
    const int b = w->bwr_list[i];
    w->fx->wrench_sub(m, &w->kin, b, grit_body_tree(m, b), w->bwr + 6 * b, w->r);
  }
  w->nbwr = 0;
}

/* A Lagged contact's d gamma / d v_n0 from the spare lane seeded above (the first pass that evaluates
 * it), for lagged_finish: the same partial as its own one-lane evaluation, at the pass's re-evaluated
 * values (the step's to round-off), without a second evaluation of the law. */
static void take_lagged_lane(grit_deriv_ws *w, const grit_constraint *k, int i, const grit_dual *gamma) {
  if (w->lag_lane < 0 || k->kind != GRIT_CONSTRAINT_LAGGED || w->lag_g[3 * i] == w->lag_g[3 * i]) return;
  for (int q = 0; q < 3; ++q) w->lag_g[3 * i + q] = gamma[q].d[w->lag_lane];
}

/* J v + b, the impulse and r -= J^T gamma of constraint i with its formed Jacobian blocks J (apart from
 * the residual's loop: its registers are the contacts' without J). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void jacobian_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const grit_constraint *k, int i,
                          int contact, const grit_dual *const J[2], const grit_contact_params_dual *p) {
  if (!contact && grit_deriv_chain_cx_jacobian_rows(m, d, w, k, J, p)) return; /* cx rows: derivatives_chain.c */
  grit_dual vc[3], gamma[3], G[9];
  int span[2][2];
  /* a joint limit's J is its stored values (the residual's limit branch): the zero test on them gives
   * the same span (+-0 zero, NaN not, either way) for n doubles instead of n duals (ws->no_limit_span) */
  const int limit = !contact && k->kind == GRIT_CONSTRAINT_LIMIT && k->dim == 1 && k->ntree == 1 && !w->no_limit_span;
  const double *Jd = limit ? grit_solver_jstore(d->solver, NULL) + k->joff[0] : NULL;
  w->limit_spans += limit;
  /* the row's span of non-+0 bits, if limit_jacobian_row wrote this row's J just before */
  const int n0 = m->tree_dofnum[k->tree[0]];
  const int *bits = limit && w->jl_jd == Jd && w->jl[0] == n0 ? w->jl + 1 : NULL;
  jacobian_span(m, k, contact, J, Jd, bits, span);
  apply_jacobian(m, k->dim, k->ntree, k->tree, J, span, d->vsol, k->b, vc);
  w->fx->constraint_eval(k->kind, p, m->opt.timestep, vc, gamma, G);
  take_lagged_lane(w, k, i, gamma);
  subtract_jt_gamma(m, k->dim, k->ntree, k->tree, J, span, gamma, w->r);
}

/* Whether this call's state passes take the smooth dynamics' partials from derivatives_rnea.c (the
 * model's inertias, not quasistatic: its A is eps M; the old path on request), computing them once per
 * call at the position passes' values kd. */
static int rnea_ready(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  if (!w->rn.any_on || w->no_rnea || w->inertial_in || grit_quasistatic_last_step(d)) return 0;
  if (w->no_fluid && grit_fluid_on(m)) return 0;
  if (!w->rn_valid) {
    if (!w->kd_valid) {
      if (!w->qd_valid) return 0;
      grit_kin_positions(m, w->qd, NULL, &w->kd);
      w->kd_valid = 1;
    }
    w->rn.mom.on = !w->no_momentum_closed && !m->opt.explicit_gyroscopic; /* derivatives_momentum.c */
    grit_rnea_partials(m, &w->kd, d->vprev, d->vsol, m->opt.timestep, NULL, &w->rn);
    if (grit_fluid_on(m)) grit_fluid_partials_add(m, &w->kd, m->opt.timestep, &w->rn, &w->sm->fl); /* fluid_partials.c */
    w->rn_valid = 1;
  }
  return 1;
}

/* The bias of the trees of w->rmask that `active` seeds, in a pass that takes their smooth dynamics
 * from rn: zero, plus, with ws->no_momentum_closed, the momentum correction of their ball and free
 * bodies on duals from their twists at v0 (else rn holds its partials: derivatives_momentum.c). */
static void rnea_bias(const grit_model *m, grit_deriv_ws *w, const char *active, double h) {
  int any = 0;
  for (int t = 0; t < m->ntree; ++t) {
    const int on = w->rmask[t] && (!active || active[t]);
    for (int i = m->tree_dofadr[t]; on && i < m->tree_dofadr[t] + m->tree_dofnum[t]; ++i) w->bias[i] = grit_dual_const(0.0);
    w->mask4[t] = on && w->rn.spin[t] && !m->opt.explicit_gyroscopic && !w->rn.mom.on; /* else in rn */
    any |= w->mask4[t];
  }
  if (!any) return;
  /* the correction reads the twists of the ball and free bodies only: each as the sum over its chain
   * (the root of a floating humanoid: its own six dofs), not the whole tree's dual twists */
  for (int b = 1; b < m->nbody; ++b) {
    if (m->body_tree[b] < 0 || !w->mask4[m->body_tree[b]] || !grit_rnea_body_spins(m, b)) continue;
    grit_dual *cv = w->kin.cvel + 6 * b;
    for (int r = 0; r < 6; ++r) cv[r] = grit_dual_const(0.0);
    for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof])
      for (int r = 0; r < 6; ++r) cv[r] = grit_dual_fma(w->kin.cdof[6 * dof + r], w->v0[dof], cv[r]);
  }
  w->kin.tree_mask = w->mask4;
  grit_momentum_correction_dual(m, &w->kin, NULL, h, w->frc, w->bias);
}

/* Tree t's rows of r from rn: -h force, plus, along each lane, the seeded columns of D (h dID/dq0 in
 * position passes; -A + h dc/dv0 in velocity passes, A the step's) times their seeds. */
static void rnea_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int t, double h, int vel) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t], a0 = m->tree_madr[t];
  const grit_dual *seed = vel ? w->v0 : w->dq;
  const double *D = (vel ? w->rn.DV : w->rn.DQ) + a0, *A = d->Aprev + a0;
  for (int i = 0; i < n; ++i) w->r[adr + i] = grit_dual_scale(w->force[adr + i], -h);
  grit_rnea_add_columns(&w->rn, n, seed + adr, D, vel ? A : NULL, w->r + adr);
}

/* Whether the bits of x[0..3] are all +0 (one test for four entries). */
static inline int bits_zero4(const double *x) {
  uint64_t b[4];
  memcpy(b, x, sizeof b);
  return (b[0] | b[1] | b[2] | b[3]) == 0u;
}

static inline int bits_zero(const double *x) {
  uint64_t b;
  memcpy(&b, x, sizeof b);
  return b == 0u;
}

/* The span [lo, hi) of the entries of Jd (n doubles) whose bits are not +0 (-0 and NaN count): where a
 * limit row's grit_dual_const(Jd[j]) differs from grit_dual_const(+0) byte for byte; lo = hi = 0 if none. */
static void limit_bits_span(const double *Jd, int n, int *lo, int *hi) {
  int a = 0, b = n;
  while (a + 4 <= b && bits_zero4(Jd + a)) a += 4;
  while (a < b && bits_zero(Jd + a)) ++a;
  while (b - 4 >= a && bits_zero4(Jd + b - 4)) b -= 4;
  while (b > a && bits_zero(Jd + b - 1)) --b;
  *lo = a < b ? a : 0, *hi = a < b ? b : 0;
}

/* A joint limit's J row (n duals): grit_dual_const(Jd[j]), the same bytes as the loop over j (the old
 * path, ws->no_limit_reuse). When the last constraint that wrote w->J was a limit of a tree of the same
 * n (w->jl: n and the span of its entries of other bits than +0), J holds grit_dual_const(+0) outside
 * that span already, so only the union of the two spans is written (a hinge's limit is one column; the
 * dog's tree has ~100 dofs). w->jl gets this row's n and span. */
static void limit_jacobian_row(grit_deriv_ws *w, grit_dual *J, const double *Jd, int n) {
  int lo, hi;
  limit_bits_span(Jd, n, &lo, &hi);
  int a = 0, b = n;
  if (!w->no_limit_reuse && w->jl[0] == n) {
    w->limit_reuses++;
    a = lo < hi ? lo : n, b = lo < hi ? hi : 0;
    if (w->jl[1] < w->jl[2]) a = w->jl[1] < a ? w->jl[1] : a, b = w->jl[2] > b ? w->jl[2] : b;
  }
  for (int j = a; j < b; ++j) J[j] = grit_dual_const(Jd[j]);
  w->jl[0] = n, w->jl[1] = lo, w->jl[2] = hi, w->jl_jd = Jd;
}

/* A new residual evaluation: the stamps of the last one expire. */
static void next_evaluation(const grit_model *m, grit_deriv_ws *w) {
  w->nbwr = w->nccb = w->ncci = 0;
  if (++w->eval_no != 0u) return;
  for (int b = 0; b < m->nbody; ++b) w->bsv_at[b] = w->bsv0_at[b] = w->bwr_at[b] = w->ccb_at[b] = 0u; /* the clock wrapped */
  for (int t = 0; t < m->ntree; ++t) w->dsup_at[t] = w->dqs_at[t] = 0u;
  w->eval_no = 1u;
}

/* The residual r(v; theta) on dual numbers at the data's last step, for the seeded inputs. With a
 * tree mask `active` (the seeded trees), only the partials of the rows of those trees and of the trees
 * their constraints couple them to are meaningful: only those trees' kinematics and dynamics are
 * recomputed, the other trees must hold constant values from an earlier pass (see
 * clear_tree_partials), and only the constraints that touch them are evaluated. With `kin_all`, the
 * positions of every tree are recomputed first (and, if the constraints use Delassus estimates, the
 * mass matrices and factors): the constant values of the trees not seeded. With `skip_qconst` (position
 * passes: only dq0 seeded), the qconst trees' M and c are left out, and r's values are then not
 * meaningful either: only its partials are read. */
/* (grit_deriv_dual_residual: w->fx's compilation of this, the baseline's or derivatives_residual_avx2.c's) */
void grit_deriv_dual_residual_run(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                                  int kin_all, int skip_qconst) {
  const double h = m->opt.timestep;
  const int nv = m->nv;
  next_evaluation(m, w);
  grit_deriv_tendon_next(w, kin_all); /* the transmissions' L, J: once per evaluation (derivatives_tendon.c) */
  grit_deriv_chain_begin(m, w, active, kin_all, skip_qconst); /* the bodies the seeds move (derivatives_chain.c) */
  /* smooth part: r = A (v - v0) - h force, at q = q0 (+) dq */
  seed_positions(m, d, w, kin_all ? NULL : active);
  const int need_w = grit_deriv_uses_delassus(d);
  /* position passes: Delassus estimates from A's double factor and dual partials (derivatives_delassus.c),
   * no dual factor, so no tree but the seeded ones needs its dual A */
  const int lin_w = need_w && skip_qconst && grit_deriv_delassus_lin_on(d, w);
  /* only the seeded trees change; the others keep their constant values */
  const char *const kmask = kin_all ? NULL : active;
  const char *mmask = kin_all && need_w && !lin_w ? NULL : active, *vmask = active;
  int any_m = 1, any_v = 1, any_r = 0; /* whether any tree's M, c are recomputed; taken from rn */
  /* position passes: the smooth dynamics' partials of the trees rn covers (derivatives_rnea.c) in place
   * of the dual M, A (v - v0) and c; their dual M only for A's dual factor (derivatives_delassus.c takes
   * z^T dM z from rn) */
  const int rn = skip_qconst && rnea_ready(m, d, w);
  for (int t = 0; t < m->ntree; ++t) w->rskip[t] = 0;
  if (skip_qconst) { /* leave out the trees whose M and c are constants (set by the caller) */
    any_m = any_v = 0;
    for (int t = 0; t < m->ntree; ++t) {
      w->rmask[t] = rn && w->rn.on[t];
      /* the Delassus estimates' partials take z^T dM z from rn (derivatives_delassus.c), not the tendons'
       * moving slopes: a dual A for those trees */
      w->mask2[t] = (!mmask || mmask[t]) && !w->qconst[t] && (!w->rmask[t] || (need_w && (!lin_w || w->tnA[t])));
      w->mask3[t] = (!vmask || vmask[t]) && !w->qconst[t] && !w->rmask[t];
      any_m |= w->mask2[t];
      any_v |= w->mask3[t];
      any_r |= w->rmask[t] && (!active || active[t]);
      w->rskip[t] = w->rmask[t] && !w->mask2[t];
    }
    mmask = w->mask2;
    vmask = w->mask3;
  }
  grit_deriv_rigid_begin(m, d, w, active, kin_all, skip_qconst); /* what the closed-form kinematics leave out */
  kin_skip(m, d, w, skip_qconst); /* the trees whose kinematics nothing reads */
  positions_dual(m, w, kmask);
  w->kin.tree_mask = mmask;
  if (any_m) { /* else every block of M and A keeps its constant value (qconst blocks: the step's A) */
    grit_crba_dual(m, &w->kin, w->crb, w->M);
    grit_implicit_operator_dual(m, w->M, h, w->A);
    grit_actuator_operator_dual(m, d->qprev, d->vprev, d->actinprev, h, w->A);
    grit_deriv_tendon_position(m, w, NULL, w->A); /* tendon actuators (derivatives_tendon.c) */
  }
  if (skip_qconst && any_m) /* the operator was formed for every tree: the constant blocks back */
    for (int t = 0; t < m->ntree; ++t)
      if (w->qconst[t])
        for (int i = m->tree_madr[t]; i < m->tree_madr[t] + m->tree_dofnum[t] * m->tree_dofnum[t]; ++i)
          w->A[i] = grit_dual_const(d->Aprev[i]);
  if (need_w && !lin_w) {
    for (int t = 0; t < m->ntree; ++t)
      if (!mmask || mmask[t])
        for (int i = m->tree_madr[t]; i < m->tree_madr[t] + m->tree_dofnum[t] * m->tree_dofnum[t]; ++i)
          w->Achol[i] = w->A[i];
    grit_block_cholesky_dual(m, w->Achol, mmask);
  }
  /* quasistatic: A = eps M + h D + h^2 K, once the factor of M + h D + h^2 K gave the Delassus estimates */
  if (any_m && grit_quasistatic_last_step(d))
    grit_quasistatic_inertia_dual(m, d->settings.quasistatic_inertia, w->M, w->A, mmask);
  w->kin.tree_mask = vmask;
  if (any_v) {
    grit_kin_velocities_dual(m, w->v0, &w->kin);
    grit_rne_bias_dual(m, &w->kin, w->v0, w->acc, w->frc, w->bias);
    grit_momentum_correction_dual(m, &w->kin, w->inertial_in, h, w->frc, w->bias);
  grit_fluid_bias_dual(m, &w->kin, w->frc, w->bias); /* fluid forces (fluid.c) */
  }
  if (any_r) rnea_bias(m, w, active, h);
  w->kin.tree_mask = active;
  if (skip_qconst && !any_v && !any_r) {
    /* Every seeded tree is a qconst one: its A and bias are constants, it has no springs (free joints),
     * and v0 and u are not seeded, so A (v - v0) - h force has no partials; only r's partials are read. */
    for (int i = 0; i < nv; ++i) w->r[i] = grit_dual_const(0.0);
  } else {
    grit_deriv_smooth_force_positions(m, w, skip_qconst); /* smooth force, tendon actuators (derivatives_smooth.c) */
    grit_deriv_adhesion_force(m, d, w, 1, active); /* adhesion (derivatives_adhesion.c) */
    for (int t = 0; t < m->ntree; ++t) {
      if (skip_qconst && w->rmask[t]) {
        rnea_rows(m, d, w, t, h, 0);
        if (w->tnA[t]) grit_deriv_tendon_operator_rows(m, w, t, d->vsol, d->vprev, w->r); /* A's tendon slopes */
        continue;
      }
      for (int i = m->tree_dofadr[t]; i < m->tree_dofadr[t] + m->tree_dofnum[t]; ++i) /* v - v0: this tree's */
        w->tmp[i] = grit_dual_sub(grit_dual_const(d->vsol[i]), w->v0[i]);
      grit_tree_mulv_dual(m, w->A, t, w->tmp, w->r);
      for (int i = m->tree_dofadr[t]; i < m->tree_dofadr[t] + m->tree_dofnum[t]; ++i)
        w->r[i] = grit_dual_sub(w->r[i], grit_dual_scale(w->force[i], h));
    }
  }

  /* constraints, in the step's order: contacts (candidate i is constraint i), then limits */
  const grit_constraint *c = grit_solver_constraints(d->solver, NULL);
  const int nc = d->stats.nconstraints, ncand = d->ncontacts;
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *k = &c[i];
    if (active && !active[k->tree[0]] && !(k->ntree == 2 && active[k->tree[1]])) continue; /* no seed reaches it */
    if (grit_deriv_constraint_inert(k)) continue;
    /* w->J's limit state (limit_jacobian_row) expires before anything of constraint i can write w->J
     * (every writer is below, in this loop: contact_jacobian, chain.c's kept rows and cx rows); a limit
     * sets it anew */
    const int jl_n = w->jl[0];
    w->jl[0] = -1;
    if (i < ncand && grit_deriv_chain_contact(m, d, w, i, k, mmask, lin_w, skip_qconst)) continue; /* not moved */
    if (i >= ncand && grit_deriv_chain_cx_fast(m, d, w, i, k, mmask, need_w, lin_w)) continue; /* a kept cx row */
    grit_dual *J[2] = {w->J, w->J + (k->ntree == 2 ? k->dim * m->tree_dofnum[k->tree[0]] : 0)};
    /* a contact whose J_c is read only through J_c v and J_c^T gamma (no Delassus estimate) applies them
     * side by side without forming J_c (derivatives_contact.c) */
    /* in position passes a contact between free bodies (and the world) takes its Delassus estimate
     * from their constant A^-1 without J_c (derivatives_free.c) */
    const int wr = need_w && grit_deriv_chain_w_read(d, k, i < ncand); /* its law reads w (chain.c) */
    const int wfree = wr && skip_qconst && i < ncand && grit_deriv_free_delassus_ok(m, w, k);
    const int jfree = i < ncand && (!wr || wfree) && k->dim == 3; /* !wr: no J_c for its estimate either */
    /* such a contact against the world: its partials chained from one evaluation per call */
    if (jfree && !wr && grit_deriv_contact_chain(m, d, w, active, i, k)) continue;
    /* (p zeroed only past the chained contacts, which read none of it: ~1.4 kB a constraint and pass) */
    grit_contact_params_dual p;
    memset(&p, 0, sizeof p);
    for (int q = 0; q < k->ntree && !jfree && i < ncand; ++q) /* a limit's J is written whole, cx_rows zeroes */
      for (int j = 0; j < k->dim * m->tree_dofnum[k->tree[q]]; ++j) J[q][j] = grit_dual_const(0.0);
    grit_contact_geom_dual geo;
    if (i < ncand) { /* a contact, re-evaluated from its body-fixed features */
      const grit_contact_candidate *cand = &d->collision->c[i];
      grit_deriv_contact_inputs(m, w, active, cand, NULL, NULL, &geo, &p);
      p.smooth = grit_dual_const(k->p.smooth); /* the step's (0 against a static body) */
      p.soft = grit_dual_const(k->p.soft);
      if (!jfree) contact_jacobian(m, w, cand, k, &geo, J);
      if (k->kind == GRIT_CONSTRAINT_LAGGED) {
        grit_dual vc0[3];
        for (int q = 0; q < 3; ++q) vc0[q] = grit_dual_const(0.0);
        if (jfree) { /* v0's partials are zero here (only velocity passes seed it): its values */
          contact_sides(m, d, w, cand, k, &geo, 1, vc0, NULL);
        } else {
          for (int q = 0; q < k->ntree; ++q) { /* v_n0 = (J v0)_n with v0 dual */
            const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
            for (int j = 0; j < n; ++j) vc0[2] = grit_dual_fma(J[q][2 * n + j], w->v0[adr + j], vc0[2]);
          }
        }
        /* a spare lane of the pass carries d / d v_n0 for lagged_finish (v_n0 is seeded nowhere else) */
        if (w->lag_lane >= 0 && w->lag_g[3 * i] != w->lag_g[3 * i]) vc0[2].d[w->lag_lane] = 1.0;
        p.gn0 = w->fx->lagged_gn0(&p, h, vc0[2]);
      }
    } else if (k->kind == GRIT_CONSTRAINT_LIMIT) { /* phi0 from the (dual) joint coordinate, J constant */
      const int jnt = k->source / 2, side = k->source % 2, n = m->tree_dofnum[k->tree[0]];
      const double *Jd = grit_solver_jstore(d->solver, NULL) + k->joff[0];
      if (k->ntree == 1 && k->dim == 1) {
        w->jl[0] = jl_n; /* (a workspace's first: 0, no tree's n) */
        limit_jacobian_row(w, J[0], Jd, n);
      } else {
        for (int j = 0; j < n; ++j) J[0][j] = grit_dual_const(Jd[j]);
      }
      const grit_dual x = w->q[m->jnt_qposadr[jnt]];
      p.phi0 = side == 0 ? grit_dual_addc(x, -m->jnt_range[2 * jnt])
                         : grit_dual_neg(grit_dual_addc(x, -m->jnt_range[2 * jnt + 1]));
      p.tau_d = grit_dual_const(k->p.tau_d);
      p.width = grit_dual_const(k->p.width);
    } else if (k->kind == GRIT_CONSTRAINT_FRICTION && lin_w && wr && grit_deriv_delassus_lin_kept(w, i)) {
      /* grit_cx_rows' J = e_dof and k, without zeroing the row: its other entries are read by nothing (its
       * estimate's z is kept, J has no partials there, jacobian_span reads the dof's column) */
      J[0][k->source - m->tree_dofadr[k->tree[0]]] = grit_dual_const(1.0);
      p.k = grit_dual_const(m->dof_frictionloss[k->source]);
    } else if (!grit_deriv_chain_cx_out(m, w, i, k, &p, J)) { /* else kept: a pass not moving its bodies */
      /* joint friction, equalities, tendons (constraints_extra_generic.h) */
      grit_deriv_chain_cx_rows(m, w, k, h, J, &p); /* grit_cx_rows_dual on the rows' columns (derivatives_chain.c) */
      grit_deriv_chain_cx_keep(m, w, i, k, &p, J);
    }
    const grit_dual *Jc[2] = {J[0], J[1]};
    /* position passes: the qconst trees' factor is the constant w->Ad (prepare_passes) */
    const grit_dual wd = wfree    ? grit_deriv_free_delassus(m, w, &d->collision->c[i], k, geo.pa, geo.pb)
                         : lin_w && wr ? grit_deriv_delassus_lin(m, w, mmask, i, k->dim, k->ntree, k->tree, Jc)
                         : wr     ? grit_delassus_c_dual(m, w->Achol, w->Ad, skip_qconst ? w->qconst : NULL, k->dim,
                                                       k->ntree, k->tree, Jc, w->tmp)
                                : grit_dual_const(k->w); /* unused by the constraint's model */
    if (i < ncand) grit_deriv_chain_keep(m, w, i, k, &p, jfree ? NULL : Jc); /* for the passes not moving it */
    w->fx->params_finalize(k->kind, wd, h, &d->settings, &p);
    grit_dual vc[3], gamma[3], G[9];
    if (jfree) {
      const grit_contact_candidate *cand = &d->collision->c[i];
      for (int q = 0; q < 3; ++q) vc[q] = grit_dual_const(k->b[q]);
      contact_sides(m, d, w, cand, k, &geo, 0, vc, NULL);
      w->fx->constraint_eval(k->kind, &p, h, vc, gamma, G);
      take_lagged_lane(w, k, i, gamma);
      contact_sides(m, d, w, cand, k, &geo, 0, NULL, gamma);
      continue;
    }
    jacobian_rows(m, d, w, k, i, i < ncand, Jc, &p);
  }
  grit_deriv_contact_chain_finish(m, d, w); /* the chained contacts' partials (derivatives_contact_chain.c) */
  apply_wrenches(m, w);
}

#ifndef GRIT_RESIDUAL_AVX2
void grit_deriv_dual_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int kin_all,
                              int skip_qconst) {
  w->fx->dual_residual(m, d, w, active, kin_all, skip_qconst);
}
#endif

/* The residual's dependence on v0 and u, at constant positions (every tree's position-dependent
 * quantities hold constant values from the position passes). v0 enters through A (v - v0), the bias
 * forces' velocity terms, damping and springs, and the Lagged model's gamma_n0(v_n0); u only through
 * the actuator forces. Nothing else in r moves with v0 or u: a contact's velocity J v + b is taken at
 * the solution v, its Jacobian, distance and parameters depend on positions only. So a velocity pass
 * recomputes only the seeded trees' twists and bias forces (the Lagged terms are added column by column
 * by lagged_rhs), and a control pass (controls_only) only the smooth force. Only r's partials are used;
 * they stay within each seeded tree's rows, so every tree shares the same directions.
 * This split, and the free bodies left out of position passes (qconst), follow the step's smooth force
 * grit_smooth_force(q0, v0, u, c(q0, v0)): a step force that depends on v0 through positions (e.g. a
 * bias at a predicted end configuration) must be seeded here through those positions too. */
void grit_deriv_velocity_residual_run(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                                      int controls_only) {
  const double h = m->opt.timestep;
  const int nv = m->nv;
  grit_deriv_zero_partials(w->q, m->nq); /* q0 (+) 0 from the position passes, as a constant */
  if (controls_only) {
    grit_deriv_smooth_force(m, w, 1); /* the smooth force and tendon actuators (derivatives_smooth.c) */
    grit_deriv_adhesion_force(m, d, w, 0, NULL); /* adhesion (derivatives_adhesion.c) */
    for (int i = 0; i < nv; ++i) w->r[i] = grit_dual_scale(w->force[i], -h);
    return;
  }
  /* free bodies' rows in closed form (derivatives_free.c): left out of the dual twists and bias */
  int any = 0, any_r = 0;
  const int rn = rnea_ready(m, d, w); /* the smooth dynamics' partials of the trees rn covers */
  for (int t = 0; t < m->ntree; ++t) {
    w->rmask[t] = rn && w->rn.on[t];
    w->mask3[t] = (!active || active[t]) && (w->inertial_in || !grit_deriv_free_velocity_closed(m, w, t)) && !w->rmask[t];
    any |= w->mask3[t];
    any_r |= w->rmask[t] && (!active || active[t]);
  }
  w->kin.tree_mask = w->mask3;
  if (any) {
    grit_kin_velocities_dual(m, w->v0, &w->kin);
    grit_rne_bias_dual(m, &w->kin, w->v0, w->acc, w->frc, w->bias);
    grit_momentum_correction_dual(m, &w->kin, w->inertial_in, h, w->frc, w->bias);
    grit_fluid_bias_dual(m, &w->kin, w->frc, w->bias); /* fluid forces (fluid.c) */
  }
  if (any_r) rnea_bias(m, w, active, h);
  w->kin.tree_mask = active;
  grit_deriv_smooth_force(m, w, 0); /* the smooth force and tendon actuators (derivatives_smooth.c) */
  grit_deriv_adhesion_force(m, d, w, 0, NULL); /* adhesion (derivatives_adhesion.c) */
  /* A (v - v0), A constant here: the values of the position passes' blocks, the step's A for the
   * qconst trees, whose dual blocks position passes neither form nor need (the same operations as
   * grit_block_mulv_dual with constant blocks) */
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t], a0 = m->tree_madr[t];
    if ((!active || active[t]) && w->rmask[t]) {
      rnea_rows(m, d, w, t, h, 1);
      continue;
    }
    if ((!active || active[t]) && !w->mask3[t]) {
      grit_deriv_free_velocity_rows(m, d, w, t);
      continue;
    }
    for (int i = adr; i < adr + n; ++i) w->tmp[i] = grit_dual_sub(grit_dual_const(d->vsol[i]), w->v0[i]);
    for (int i = 0; i < n; ++i) {
      grit_dual s = grit_dual_const(0.0);
      for (int j = 0; j < n; ++j) {
        const double a = w->qconst[t] ? d->Aprev[a0 + i * n + j] : w->A[a0 + i * n + j].v;
        s = grit_dual_fma(grit_dual_const(a), w->tmp[adr + j], s);
      }
      w->r[adr + i] = grit_dual_sub(s, grit_dual_scale(w->force[adr + i], h));
    }
  }
}

#ifndef GRIT_RESIDUAL_AVX2
void grit_deriv_velocity_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                                  int controls_only) {
  w->fx->velocity_residual(m, d, w, active, controls_only);
}
#endif
