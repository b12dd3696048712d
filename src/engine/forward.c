/* SPDX-License-Identifier: Apache-2.0 */
/* forward.c — the public kinematics and smooth-dynamics queries of grit/dynamics.h, on the double
 * instantiation of the generic code. */
#include <math.h>
#include <string.h>

#include "forward.h"
#include "actuation.h"
#include "afactor.h"
#include "dynamics.h"
#include "fluid.h"
#include "grit/dynamics.h"
#include "status_internal.h"
#include "treechol.h"

grit_status grit_forward_kinematics(grit_data *d) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  grit_kin_positions(m, d->qpos, &d->inertial, &d->kin);
  grit_kin_velocities(m, d->qvel, &d->kin);
  return GRIT_OK;
}

static grit_status check_body(const grit_data *d, int body) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  if (body < 0 || body >= d->model->nbody)
    return grit_set_error((char *)d->message, GRIT_ERR_INVALID_ARGUMENT, "body %d does not exist (0..%d)", body,
                          d->model->nbody - 1);
  return GRIT_OK;
}

grit_status grit_body_pose(const grit_data *d, int body, double pos[3], double quat[4]) {
  grit_status s = check_body(d, body);
  if (s != GRIT_OK) return s;
  if (pos) grit_v3_copy(pos, d->kin.xpos + 3 * body);
  if (quat) grit_quat_copy(quat, d->kin.xquat + 4 * body);
  return GRIT_OK;
}

grit_status grit_body_com(const grit_data *d, int body, double com[3]) {
  grit_status s = check_body(d, body);
  if (s == GRIT_OK && com) grit_v3_copy(com, d->kin.xipos + 3 * body);
  return s;
}

grit_status grit_body_twist(const grit_data *d, int body, double twist[6]) {
  grit_status s = check_body(d, body);
  if (s == GRIT_OK && twist) memcpy(twist, d->kin.cvel + 6 * body, 6 * sizeof(double));
  return s;
}

grit_status grit_point_jacobian(const grit_data *d, int body, const double point[3], double *jacp, double *jacr) {
  grit_status s = check_body(d, body);
  if (s != GRIT_OK) return s;
  if (!point || !jacp) return grit_set_error((char *)d->message, GRIT_ERR_INVALID_ARGUMENT, "point_jacobian: NULL");
  grit_kin_point_jacobian(d->model, &d->kin, body, point, jacp, jacr);
  return GRIT_OK;
}

/* Expands tree-block storage into a dense nv x nv matrix. */
static void expand_blocks(const grit_model *m, const double *blocks, double *dense) {
  const int nv = m->nv;
  for (int i = 0; i < nv * nv; ++i) dense[i] = 0.0;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) dense[(adr + i) * nv + adr + j] = blocks[m->tree_madr[t] + i * n + j];
  }
}

grit_status grit_mass_matrix(grit_data *d, double *M) {
  if (!d || (!M && d->model->nv > 0)) return GRIT_ERR_INVALID_ARGUMENT;
  grit_forward_kinematics(d);
  grit_crba(d->model, &d->kin, d->crb, d->M);
  if (M) expand_blocks(d->model, d->M, M);
  return GRIT_OK;
}

grit_status grit_bias_forces(grit_data *d, double *c) {
  if (!d || (!c && d->model->nv > 0)) return GRIT_ERR_INVALID_ARGUMENT;
  grit_forward_kinematics(d);
  grit_rne_bias(d->model, &d->kin, d->qvel, d->acc, d->frc, c ? c : d->bias);
  return GRIT_OK;
}

/* A := M + h D + h^2 K (grit_implicit_operator). A tree factored in tree order by the last factorization
 * keeps M's pattern (afactor.h): A's entries off the dof-ancestor pairs are +0 as M's are, since every
 * free motion writes A on that pattern only (M's copy, the diagonal terms, a fixed tendon on one path, the
 * quasistatic 0 - 0 (1 - eps)), so only the pairs are copied from M (treechol.h, grit_treechol_copy_sym),
 * then the diagonal terms added in place: the same bytes. The dense copy of the softbox's 224 x 224 block
 * was 3 % of its step, the flag's 340 x 340 too. d->no_a_pattern: M copied whole. */
static void implicit_operator(grit_data *d, double h) {
  const grit_model *m = d->model;
  if (d->no_a_pattern || !grit_afactor_any(d->af)) {
    grit_implicit_operator(m, d->M, h, d->A);
    return;
  }
  for (int t = 0; t < m->ntree; ++t) {
    const size_t a = (size_t)m->tree_madr[t], n = (size_t)m->tree_dofnum[t];
    if (grit_afactor_tree_order(d->af, t)) grit_treechol_copy_sym(m, t, d->M + a, d->A + a);
    else memcpy(d->A + a, d->M + a, sizeof(double) * n * n);
  }
  grit_implicit_operator(m, d->A, h, d->A); /* (A as M: no copy, the diagonal terms) */
}

/* Free motion at the data's state: fills d->M, d->bias, d->force, d->A, d->Achol and d->vstar.
 * Shared with the step. */
grit_status grit_compute_free_motion(grit_data *d) {
  const grit_model *m = d->model;
  const double h = m->opt.timestep;
  /* d->kin already holds the poses and twists of (qpos, qvel): every change of the state recomputes
   * them (the setters, reset, the end of a step, grit_linearize's restore), so they are not computed a
   * second time here (a tenth of the arm-and-ball step; docs/performance.md). M's entries off the
   * dof-ancestor pairs are 0 already (data_internal.h): zeroing the blocks was 7 % of a composite's step. */
  if (d->no_M_kept) grit_crba(m, &d->kin, d->crb, d->M);
  else grit_crba_kept(m, &d->kin, d->crb, d->M);
  grit_rne_bias(m, &d->kin, d->qvel, d->acc, d->frc, d->bias);
  grit_momentum_correction(m, &d->kin, &d->inertial, h, d->frc, d->bias);
  grit_fluid_bias(m, &d->kin, d->frc, d->bias); /* fluid forces, explicit at the start (fluid.c) */
  d->achol_fresh = 0; /* A is rewritten below */
  implicit_operator(d, h);
  grit_actuator_input(m, d->ctrl, d->act, d->actin); /* the actuators' force inputs (actuation.c) */
  grit_actuator_operator(m, d->qpos, d->qvel, d->actin, h, d->A);
  grit_smooth_force(m, d->qpos, d->qvel, d->actin, d->bias, h, d->force);
  grit_actuator_tendon(m, &d->kin, d->qpos, d->qvel, d->actin, h, d->force, d->A, d->jscratch); /* actuation.c */
  for (int i = 0; i < m->nv; ++i) {
    if (!isfinite(d->force[i]))
      return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "free motion: generalized force %d is not finite", i);
    d->vstar[i] = h * d->force[i];
  }
  /* the big trees whose A keeps the tree's pattern in tree order, without fill (afactor.h) */
  int bad = grit_afactor_factor(d->af, d->A, d->Achol, 1);
  if (bad >= 0)
    return grit_set_error(d->message, GRIT_ERR_NUMERICAL,
                          "free motion: the mass matrix of tree %d is not positive definite", bad);
  /* the derivatives copy the trees' factors (Achol's dense ones, af's tree-ordered ones) as their own factor
   * of the same A (derivatives_colour.c) */
  d->achol_fresh = 1;
  grit_afactor_solve(m, d->af, d->Achol, d->vstar);
  for (int i = 0; i < m->nv; ++i) d->vstar[i] += d->qvel[i];
  return GRIT_OK;
}

grit_status grit_free_motion_velocity(grit_data *d, double *vstar) {
  if (!d || (!vstar && d->model->nv > 0)) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status s = grit_compute_free_motion(d);
  if (s == GRIT_OK && d->model->nv > 0) memcpy(vstar, d->vstar, sizeof(double) * (size_t)d->model->nv);
  return s;
}

grit_status grit_energy(grit_data *d, double *kinetic, double *potential) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  grit_forward_kinematics(d);
  if (kinetic) {
    grit_crba(m, &d->kin, d->crb, d->M);
    grit_block_mulv(m, d->M, d->qvel, d->vnext);
    double e = 0.0;
    for (int i = 0; i < m->nv; ++i) e += 0.5 * d->qvel[i] * d->vnext[i];
    *kinetic = e;
  }
  if (potential) {
    double e = 0.0;
    for (int b = 1; b < m->nbody; ++b) /* the compensated part of a weight (gravcomp) stores no energy */
      e -= (1.0 - m->body_gravcomp[b]) * m->body_mass[b] * grit_v3_dot(m->opt.gravity, d->kin.xipos + 3 * b);
    for (int j = 0; j < m->njnt; ++j) {
      double x = d->qpos[m->jnt_qposadr[j]] - m->jnt_springref[j];
      if (m->jnt_stiffness[j] > 0) e += 0.5 * m->jnt_stiffness[j] * x * x;
    }
    *potential = e;
  }
  return GRIT_OK;
}

grit_status grit_integrate_positions(const grit_model *m, double *q, const double *v, double h) {
  if (!m || (m->nq > 0 && (!q || !v)) || !isfinite(h)) return GRIT_ERR_INVALID_ARGUMENT;
  grit_kin_integrate(m, q, v, h);
  return GRIT_OK;
}

grit_status grit_position_difference(const grit_model *m, const double *qa, const double *qb, double *dq) {
  if (!m || (m->nq > 0 && (!qa || !qb || !dq))) return GRIT_ERR_INVALID_ARGUMENT;
  for (int j = 0; j < m->njnt; ++j) {
    const int qa0 = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
      case GRIT_JOINT_FREE:
        grit_v3_sub(dq + da, qb + qa0, qa + qa0);
        grit_quat_diff(dq + da + 3, qa + qa0 + 3, qb + qa0 + 3);
        break;
      case GRIT_JOINT_BALL:
        grit_quat_diff(dq + da, qa + qa0, qb + qa0);
        break;
      default:
        dq[da] = qb[qa0] - qa[qa0];
        break;
    }
  }
  return GRIT_OK;
}
