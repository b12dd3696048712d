/* SPDX-License-Identifier: Apache-2.0 */
/* variational.c — the midpoint variational integrator (docs/theory.md, "The variational integrator").
 *
 * With L(q, v) = 1/2 v^T M(q) v - V(q) and the discrete Lagrangian L_d(q0, q1) = h L(qm, v), v the
 * velocity of the interval and qm = q0 (+) h v / 2 its midpoint, the discrete Euler–Lagrange equations
 * in position-momentum form take the momentum p_k = M(q_k) v_k at the start of the step (v_k the
 * state's velocity: the velocity AT t_k in this mode) through the interval:
 *   M(qm) v - h/2 g(qm, v) = p_k + h f + J^T gamma        (the interval's velocity v)
 *   p_k+1 = M(qm) v + h/2 g(qm, v),   q_k+1 = q_k (+) h v,   v_k+1 = M(q_k+1)^-1 p_k+1
 * with g = dL/dq = Mdot(q)[v] v - c(q, v) (c the bias forces: Coriolis, centrifugal, gyroscopic,
 * gravity) and f the applied forces. The first equation without contacts is solved for v* by a
 * fixed-point iteration (it contracts by about h |omega| per round), with damping, springs and servos
 * implicit as in the Euler step (A = M(qm) + h D + h^2 K); the contact problem then takes A and v* as
 * in the Euler step, and grit_variational_end_velocity maps its solution to v_k+1. For hinge and slide
 * chains this is the symplectic midpoint rule: the energy error stays O(h^2) and bounded instead of
 * drifting at O(h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actuation.h" /* grit_actuator_tendon */
#include "afactor.h"
#include "arena.h"
#include "data_internal.h"
#include "dynamics.h"
#include "kinematics.h"
#include "status_internal.h"
#include "variational.h"

/* Rounds of the fixed-point iteration before the step reports non-convergence, and its tolerance
 * relative to the velocity's size (a few ulps: the scheme's conservation needs the solution, not an
 * approximation of it). */
#define VAR_MAX_ROUNDS 50
#define VAR_TOL 1e-13

struct grit_variational_ws {
  grit_kin kin;                 /* poses and twists at a midpoint */
  grit_kin_dual kind;           /* the same along q (+) eps v */
  grit_inertial_dual inertial;  /* the model's inertial parameters as dual constants */
  grit_dual *mass, *com, *inertia;
  grit_sinertia_dual *crbd;
  grit_dual *Md, *qd, *vd;      /* (nM), (nq), (nv) */
  double *Mdot;                 /* (nM) dM/d eps: the directional derivative of M along v */
  double *Mend;                 /* (nM) M(q_k+1) and its factor */
  double *qm, *g, *rhs0, *rhs, *vit, *zero, *bias, *tmp; /* (nq), then (nv) each */
};

static void layout(const grit_model *m, grit_variational_ws *w, grit_carver *c) {
  const int nb = m->nbody, nv = m->nv;
  GRIT_CARVE_KIN(c, w->kin, m);
  GRIT_CARVE_KIN(c, w->kind, m);
  GRIT_CARVE(c, w->mass, nb);
  GRIT_CARVE(c, w->com, 3 * nb);
  GRIT_CARVE(c, w->inertia, 9 * nb);
  GRIT_CARVE(c, w->crbd, nb);
  GRIT_CARVE(c, w->Md, m->nM);
  GRIT_CARVE(c, w->qd, m->nq);
  GRIT_CARVE(c, w->vd, nv);
  GRIT_CARVE(c, w->Mdot, m->nM);
  GRIT_CARVE(c, w->Mend, m->nM);
  GRIT_CARVE(c, w->qm, m->nq);
  GRIT_CARVE(c, w->g, nv);
  GRIT_CARVE(c, w->rhs0, nv);
  GRIT_CARVE(c, w->rhs, nv);
  GRIT_CARVE(c, w->vit, nv);
  GRIT_CARVE(c, w->zero, nv);
  GRIT_CARVE(c, w->bias, nv);
  GRIT_CARVE(c, w->tmp, nv);
}

grit_variational_ws *grit_variational_ws_create(const grit_model *m) {
  grit_carver c = {NULL, sizeof(grit_variational_ws)};
  grit_variational_ws probe;
  layout(m, &probe, &c);
  char *block = calloc(1, c.used + 64);
  if (!block) return NULL;
  grit_variational_ws *w = (grit_variational_ws *)block;
  c.base = block;
  c.used = sizeof(grit_variational_ws);
  layout(m, w, &c);
  for (int b = 0; b < m->nbody; ++b) {
    w->mass[b] = grit_dual_const(m->body_mass[b]);
    for (int i = 0; i < 3; ++i) w->com[3 * b + i] = grit_dual_const(m->body_com[3 * b + i]);
    for (int i = 0; i < 9; ++i) w->inertia[9 * b + i] = grit_dual_const(m->body_inertia[9 * b + i]);
  }
  w->inertial.mass = w->mass;
  w->inertial.com = w->com;
  w->inertial.inertia = w->inertia;
  return w;
}

void grit_variational_ws_free(grit_variational_ws *w) { free(w); }

/* g(q, v) = Mdot(q)[v] v - c(q, v) into w->g, and M(q) into M (d->crb, acc, frc as scratch). */
static void lagrangian_force(grit_data *d, const double *q, const double *v, double *M) {
  const grit_model *m = d->model;
  grit_variational_ws *w = d->variational;
  grit_kin_positions(m, q, &d->inertial, &w->kin);
  grit_kin_velocities(m, v, &w->kin);
  grit_crba(m, &w->kin, d->crb, M);
  grit_rne_bias(m, &w->kin, v, d->acc, d->frc, w->bias);
  /* M along q (+) eps v: one dual direction */
  for (int i = 0; i < m->nq; ++i) w->qd[i] = grit_dual_const(q[i]);
  for (int i = 0; i < m->nv; ++i) {
    w->vd[i] = grit_dual_const(0.0);
    w->vd[i].d[0] = v[i];
  }
  grit_kin_integrate_dual(m, w->qd, w->vd, 1.0);
  grit_kin_positions_dual(m, w->qd, &w->inertial, &w->kind);
  grit_crba_dual(m, &w->kind, w->crbd, w->Md);
  for (int i = 0; i < m->nM; ++i) w->Mdot[i] = w->Md[i].d[0];
  grit_block_mulv(m, w->Mdot, v, w->g);
  for (int i = 0; i < m->nv; ++i) w->g[i] -= w->bias[i];
}

/* p_k + h f with p_k = M(q_k) v_k and f the applied forces at q_k (controls, springs; damping and
 * servos' velocity terms are implicit in A): into w->rhs0. d->kin holds the poses at q_k. */
static void momentum_in(grit_data *d) {
  const grit_model *m = d->model;
  grit_variational_ws *w = d->variational;
  const double h = m->opt.timestep;
  grit_crba(m, &d->kin, d->crb, d->M);
  grit_block_mulv(m, d->M, d->qvel, w->rhs0);
  grit_smooth_force(m, d->qpos, w->zero, d->ctrl, w->zero, h, w->tmp);
  grit_actuator_tendon(m, &d->kin, d->qpos, w->zero, d->ctrl, h, w->tmp, NULL, d->jscratch); /* as the joint ones */
  for (int i = 0; i < m->nv; ++i) w->rhs0[i] += h * w->tmp[i];
}

grit_status grit_variational_free_motion(grit_data *d) {
  const grit_model *m = d->model;
  grit_variational_ws *w = d->variational;
  const double h = m->opt.timestep;
  momentum_in(d);
  memcpy(w->vit, d->qvel, sizeof(double) * (size_t)m->nv);
  for (int round = 0; round < VAR_MAX_ROUNDS; ++round) {
    for (int i = 0; i < m->nq; ++i) w->qm[i] = d->qpos[i];
    grit_kin_integrate(m, w->qm, w->vit, 0.5 * h);
    lagrangian_force(d, w->qm, w->vit, d->M);
    d->achol_fresh = 0; /* A is rewritten below */
    grit_implicit_operator(m, d->M, h, d->A);
    for (int i = 0; i < m->nM; ++i) d->Achol[i] = d->A[i];
    const int bad = grit_block_cholesky(m, d->Achol, NULL);
    if (bad >= 0)
      return grit_set_error(d->message, GRIT_ERR_NUMERICAL,
                            "free motion: the mass matrix of tree %d is not positive definite", bad);
    grit_afactor_clear(d->af); /* every tree's factor dense (afactor.h) */
    d->achol_fresh = 1;
    for (int i = 0; i < m->nv; ++i) d->vstar[i] = w->rhs0[i] + 0.5 * h * w->g[i];
    grit_block_cholesky_solve(m, d->Achol, d->vstar);
    double change = 0.0, size = 0.0;
    for (int i = 0; i < m->nv; ++i) {
      if (!isfinite(d->vstar[i]))
        return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "free motion: velocity %d is not finite", i);
      change = fmax(change, fabs(d->vstar[i] - w->vit[i]));
      size = fmax(size, fabs(d->vstar[i]));
    }
    memcpy(w->vit, d->vstar, sizeof(double) * (size_t)m->nv);
    if (change <= VAR_TOL * (size + h)) return GRIT_OK;
  }
  return grit_set_error(d->message, GRIT_ERR_NOT_CONVERGED,
                        "free motion: the variational integrator's fixed point did not converge in %d rounds",
                        VAR_MAX_ROUNDS);
}

grit_status grit_variational_end_velocity(grit_data *d, const double *qnext, double *v) {
  const grit_model *m = d->model;
  grit_variational_ws *w = d->variational;
  const double h = m->opt.timestep;
  for (int i = 0; i < m->nq; ++i) w->qm[i] = d->qpos[i];
  grit_kin_integrate(m, w->qm, v, 0.5 * h);
  lagrangian_force(d, w->qm, v, w->Mend);
  grit_block_mulv(m, w->Mend, v, w->tmp); /* p_k+1 = M(qm) v + h/2 g(qm, v) */
  for (int i = 0; i < m->nv; ++i) w->tmp[i] += 0.5 * h * w->g[i];
  grit_kin_positions(m, qnext, &d->inertial, &w->kin);
  grit_crba(m, &w->kin, d->crb, w->Mend);
  const int bad = grit_block_cholesky(m, w->Mend, NULL);
  if (bad >= 0)
    return grit_set_error(d->message, GRIT_ERR_NUMERICAL, "step: the mass matrix of tree %d is not positive definite",
                          bad);
  grit_block_cholesky_solve(m, w->Mend, w->tmp);
  memcpy(v, w->tmp, sizeof(double) * (size_t)m->nv);
  return GRIT_OK;
}
