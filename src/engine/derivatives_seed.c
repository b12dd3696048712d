/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_seed.c — the inputs of the derivatives' residual passes and the clearing between them: the
 * dual inputs set to their values (clear_inputs), a column of theta seeded and unseeded, and the partials
 * a position or velocity pass left on the trees it seeded cleared. Split from derivatives_residual.c,
 * which evaluates the residual. */
#include <stddef.h>

#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_internal.h"
#include "derivatives_smooth.h"
#include "hydro.h"

/* The columns of theta: 0..nv-1 dq0, nv..2nv-1 v0, then the nu controls, then the np parameters.
 * Sets every dual input to its value with zero partials (seed_column then seeds). The inertial and
 * geometry parameters are the model's, constant: they are reset only after parameter passes seeded them. */
void grit_deriv_clear_inputs(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  const int nv = m->nv, nu = m->nu, ng = m->ngeom;
  for (int i = 0; i < nv; ++i) {
    w->dq[i] = grit_dual_const(0.0);
    w->v0[i] = grit_dual_const(d->vprev[i]);
  }
  for (int i = 0; i < nu; ++i) w->u[i] = grit_dual_const(d->actinprev[i]); /* the actuators' inputs */
  w->sm->len_valid = 0; /* the position passes' actuator terms follow these values (derivatives_smooth.c) */
  if (!w->params_dirty) return;
  w->params_dirty = 0;
  for (int b = 0; b < m->nbody; ++b) {
    w->mass[b] = grit_dual_const(m->body_mass[b]);
    for (int i = 0; i < 3; ++i) w->com[3 * b + i] = grit_dual_const(m->body_com[3 * b + i]);
    for (int i = 0; i < 9; ++i) w->inertia[9 * b + i] = grit_dual_const(m->body_inertia[9 * b + i]);
  }
  const double *gsrc[4] = {m->geom_friction, m->geom_stiffness, m->geom_dissipation, m->geom_taud};
  for (int k = 0; k < 4; ++k)
    for (int g = 0; g < ng; ++g) w->gparam[k * ng + g] = grit_dual_const(gsrc[k][g]);
  grit_hydro_moduli_dual(m, w->gparam + GRIT_PARAM_HYDRO_MODULUS * ng); /* hydro */
}

static inline __attribute__((always_inline)) void zero_partials(grit_dual *x, int n) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < GRIT_DUAL_N; ++k) x[i].d[k] = 0.0;
}

void grit_deriv_zero_partials(grit_dual *x, int n) { zero_partials(x, n); }

/* The clearing below is compiled once more for AVX2 where the processor has it (SEED_AVX2): a dual's
 * eight partials in two 32-byte stores, not four 16-byte ones (zeros either way: the same bytes). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define SEED_AVX2 1
#else
#define SEED_AVX2 0
#endif

/* After a pass seeded in the trees of `active`: their kinematic and dynamic quantities keep their
 * values but lose the pass's partials, so that the next pass may use them as constants. */
static inline __attribute__((always_inline)) void clear_tree_in(const grit_model *m, grit_deriv_ws *w,
                                                                 const char *active, int all_dynamics) {
  for (int b = 1; b < m->nbody; ++b) {
    if (m->body_tree[b] < 0 || !active[m->body_tree[b]]) continue;
    if (!all_dynamics && w->kskip[m->body_tree[b]]) { /* no kinematics formed (kin_skip): the joints' q */
      for (int n = 0; n < m->body_jntnum[b]; ++n) {
        const int j = m->body_jnt[m->body_jntadr[b] + n], type = m->jnt_type[j];
        zero_partials(w->q + m->jnt_qposadr[j], type == GRIT_JOINT_FREE ? 7 : type == GRIT_JOINT_BALL ? 4 : 1);
      }
      continue;
    }
    if (!all_dynamics && !grit_deriv_chain_moved(w, b)) continue; /* left out by the pass: none (chain.c) */
    const int lean = all_dynamics ? 0 : w->klean[m->body_tree[b]]; /* fields it did not write (rigid.c) */
    const int need = lean & GRIT_KIN_LEAN_POSE ? w->bneed[b] : 3;
    if (need & 1) zero_partials(w->kin.xpos + 3 * b, 3);
    if (!(lean & GRIT_KIN_LEAN_QUAT)) zero_partials(w->kin.xquat + 4 * b, 4);
    if (need & 1) zero_partials(w->kin.xmat + 9 * b, 9);
    if (!(lean & GRIT_KIN_LEAN_DYN)) {
      zero_partials(w->kin.xipos + 3 * b, 3);
      zero_partials(w->kin.cvel + 6 * b, 6);
      zero_partials(&w->kin.cinert[b].m, 1);
      zero_partials(w->kin.cinert[b].h, 3);
      zero_partials(w->kin.cinert[b].I, 9);
    }
    for (int n = 0; n < m->body_jntnum[b]; ++n) {
      const int j = m->body_jnt[m->body_jntadr[b] + n], type = m->jnt_type[j];
      if (!(lean & GRIT_KIN_LEAN_DYN)) zero_partials(w->kin.xanchor + 3 * j, 3);
      if (!(lean & GRIT_KIN_LEAN_DYN)) zero_partials(w->kin.xaxis + 3 * j, 3);
      zero_partials(w->q + m->jnt_qposadr[j], type == GRIT_JOINT_FREE ? 7 : type == GRIT_JOINT_BALL ? 4 : 1);
    }
    if (!all_dynamics && w->rigid[m->body_tree[b]] && m->body_dofnum[b] > 0 && (need & 2)) /* rigid_body's */
      zero_partials(w->kin.cdof + 6 * m->body_dofadr[b], 6 * m->body_dofnum[b]);
  }
  for (int t = 0; t < m->ntree; ++t) {
    if (!active[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    if (all_dynamics || !w->rigid[t]) zero_partials(w->kin.cdof + 6 * adr, 6 * n);
    if (w->qconst[t] && !all_dynamics) continue; /* its dynamics were left out of the pass: no partials */
    if (!all_dynamics && (w->klean[t] & GRIT_KIN_LEAN_DYN)) continue; /* nor in a lean pass: none written */
    zero_partials(w->kin.cdof_dot + 6 * adr, 6 * n);
    zero_partials(w->bias + adr, n);
    if (w->rskip[t] && !all_dynamics) continue; /* no dual M, A or factor in the pass (derivatives_rnea.c) */
    zero_partials(w->M + m->tree_madr[t], n * n);
    zero_partials(w->A + m->tree_madr[t], n * n);
    zero_partials(w->Achol + m->tree_madr[t], n * n);
  }
}

static void clear_tree_base(const grit_model *m, grit_deriv_ws *w, const char *active, int all_dynamics) {
  clear_tree_in(m, w, active, all_dynamics);
}

#if SEED_AVX2
__attribute__((target("avx2"))) static void clear_tree_avx2(const grit_model *m, grit_deriv_ws *w, const char *active,
                                                            int all_dynamics) {
  clear_tree_in(m, w, active, all_dynamics);
}
#endif

void grit_deriv_clear_tree_partials(const grit_model *m, grit_deriv_ws *w, const char *active, int all_dynamics) {
#if SEED_AVX2
  if (__builtin_cpu_supports("avx2")) {
    clear_tree_avx2(m, w, active, all_dynamics);
    return;
  }
#endif
  clear_tree_base(m, w, active, all_dynamics);
}

/* After a velocity pass: the seeded trees' twists and bias forces lose the pass's partials. */
void grit_deriv_clear_velocity_partials(const grit_model *m, grit_deriv_ws *w, const char *active) {
  /* the trees in closed form got none (velocity_residual), nor did those the pass took from rn (rnea_rows)
   * but for a momentum correction on duals (rnea_bias: mask4) */
  for (int t = 0; t < m->ntree; ++t)
    w->mask3[t] = active[t] && (w->inertial_in || !grit_deriv_free_velocity_closed(m, w, t)) &&
                  (w->no_kin_skip || !w->rmask[t] || w->mask4[t]);
  for (int b = 1; b < m->nbody; ++b)
    if (m->body_tree[b] >= 0 && w->mask3[m->body_tree[b]]) zero_partials(w->kin.cvel + 6 * b, 6);
  for (int t = 0; t < m->ntree; ++t) {
    if (!w->mask3[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    zero_partials(w->kin.cdof_dot + 6 * adr, 6 * n);
    zero_partials(w->bias + adr, n);
  }
}

/* Seeds column id `col` of theta in direction j (after clear_inputs). */
void grit_deriv_seed_column(const grit_model *m, grit_deriv_ws *w, const grit_param *params, int col, int j) {
  const int nv = m->nv, nu = m->nu, ng = m->ngeom;
  if (col < nv) {
    w->dq[col].d[j] = 1.0;
  } else if (col < 2 * nv) {
    w->v0[col - nv].d[j] = 1.0;
  } else if (col < 2 * nv + nu) {
    w->u[col - 2 * nv].d[j] = 1.0;
  } else {
    const grit_param *p = &params[col - 2 * nv - nu];
    w->params_dirty = 1;
    if (p->kind == GRIT_PARAM_MASS) {
      /* mass and rotational inertia scale together: d inertia / d mass = inertia / mass */
      const int b = p->index;
      w->mass[b].d[j] = 1.0;
      for (int i = 0; i < 9; ++i) w->inertia[9 * b + i].d[j] = m->body_inertia[9 * b + i] / m->body_mass[b];
    } else {
      grit_dual *arr = w->gparam + (size_t)p->kind * ng;
      for (int g = 0; g < ng; ++g)
        if (p->index < 0 || p->index == g) arr[g].d[j] = 1.0;
    }
  }
}

/* Undoes seed_column for a state or control column. */
void grit_deriv_unseed_column(const grit_model *m, grit_deriv_ws *w, int col, int j) {
  const int nv = m->nv;
  if (col < nv) w->dq[col].d[j] = 0.0;
  else if (col < 2 * nv) w->v0[col - nv].d[j] = 0.0;
  else w->u[col - 2 * nv].d[j] = 0.0;
}
