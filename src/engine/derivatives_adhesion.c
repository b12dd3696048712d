/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_adhesion.c — the adhesion actuators' force in the derivative call's passes, where it has
 * partials only.
 *
 * grit_adhesion_force_dual (actuation_adhesion_generic.h) adds -f/n J_n^T of each counting candidate of
 * an adhesive body, J_n formed over all nv columns and added over all nv rows: per candidate and pass
 * 2 x 3 nv dual zeros and nv dual products, in every position, velocity and control pass (the adhesion
 * crate, nv 209, ~140 candidates: half of the call's instructions). But the passes read only r's
 * partials (derivatives_rhs.c), and a candidate's term has partials only where
 *   - the actuator's input w_a is seeded (a control pass's lane), or
 *   - one of its bodies' poses has partials: a position pass seeding its tree (`moving`), or a pass
 *     seeding every tree (parameter passes: moving NULL). Velocity and control passes hold the
 *     positions constant (kin_dual 0).
 * The other terms add exact zeros to the partials, and are left out. J_n's nonzero columns are the
 * dofs on the body's chain to the root (grit_kin_point_jacobian writes only those), so a term is added
 * over that chain only: the same products in the same order for each of those rows. Outside them the
 * old sum added si (n . 0) = +-0, which only a -0 can tell (it may turn +0): A and B the same numbers.
 * ws->no_adhesion_lean: grit_adhesion_force_dual. */
#include "actuation_adhesion.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h"

/* Whether dual x has a nonzero partial. */
static int has_partials(grit_dual x) {
  int any = 0;
  GRIT_DUAL_FOR(l) any |= x.d[l] != 0.0;
  return any;
}

/* Adds s J_n^T of candidate c (grit_adhesion_force_dual's adhesion_normal_add) to force, over the
 * chains of its bodies' dofs only. */
static void normal_add_chains(const grit_model *m, const grit_deriv_ws *w, const grit_contact_candidate *c,
                              grit_dual s, grit_dual *force) {
  const grit_kin_dual *k = &w->kin;
  grit_dual gp[2][3], gR[2][9];
  for (int i = 0; i < 2; ++i) { /* geometry poses: the body's composed with the geometry's own */
    const int g = c->geom[i], b = c->body[i];
    w->fx->compose(gp[i], gR[i], k->xpos + 3 * b, k->xmat + 9 * b, m->geom_pos + 3 * g, m->geom_mat + 9 * g);
  }
  grit_contact_geom_dual geo;
  w->fx->reevaluate(&c->pt, gp[0], gR[0], gp[1], gR[1], &geo);
  for (int i = 0; i < 2; ++i) { /* phi = n . (pb - pa): + b's point, - a's */
    const grit_dual *p = i ? geo.pb : geo.pa;
    const grit_dual si = i ? s : grit_dual_neg(s);
    for (int dof = m->body_lastdof[c->body[i]]; dof >= 0; dof = m->dof_parent[dof]) {
      grit_dual lin[3];
      grit_sv_point_velocity_dual(lin, k->cdof + 6 * dof, p);
      const grit_dual t =
          grit_dual_fma(geo.n[0], lin[0], grit_dual_fma(geo.n[1], lin[1], grit_dual_mul(geo.n[2], lin[2])));
      force[dof] = grit_dual_fma(si, t, force[dof]);
    }
  }
}

/* Whether candidate c's bodies move in this pass: a body of a tree in `moving` (NULL: every tree). */
static int moves(const grit_model *m, const grit_contact_candidate *c, const char *moving) {
  if (!moving) return 1;
  for (int i = 0; i < 2; ++i) {
    const int t = m->body_tree[c->body[i]];
    if (t >= 0 && moving[t]) return 1;
  }
  return 0;
}

void grit_deriv_adhesion_force(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int kin_dual,
                               const char *moving) {
  const grit_contact_candidate *cand = d->collision->c;
  const int ncand = d->ncontacts;
  if (!w->adh_known) w->adh_any = grit_adhesion_any(m), w->adh_known = 1; /* the model's, looked up once */
  if (!w->adh_any) return;
  if (w->no_adhesion_lean) {
    grit_adhesion_force_dual(m, &w->kin, cand, ncand, w->u, w->force, w->scratch);
    return;
  }
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_BODY) continue;
    const int seeded = has_partials(w->u[a]);
    if (!seeded && !kin_dual) continue; /* nothing of it moves in this pass */
    const int body = m->act_tendon[a];
    int n = 0;
    for (int i = 0; i < ncand; ++i)
      n += (cand[i].body[0] == body || cand[i].body[1] == body) && grit_adhesion_counts(m, &cand[i]);
    if (n == 0) continue; /* nothing to adhere to: no force (MuJoCo's zero moment) */
    grit_dual f = grit_dual_scale(w->u[a], m->act_gainprm[3 * a]);
    if (m->act_forcelimited[a])
      f = grit_dual_fmin(grit_dual_fmax(f, grit_dual_const(m->act_forcerange[2 * a])),
                         grit_dual_const(m->act_forcerange[2 * a + 1]));
    const grit_dual s = grit_dual_scale(f, -1.0 / n);
    for (int i = 0; i < ncand; ++i)
      if ((cand[i].body[0] == body || cand[i].body[1] == body) && grit_adhesion_counts(m, &cand[i]) &&
          (seeded || (kin_dual && moves(m, &cand[i], moving))))
        normal_add_chains(m, w, &cand[i], s, w->force);
  }
}
