/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_adhesion_generic.h — the adhesion actuators' generalized forces, written once for any scalar
 * type; included by actuation_adhesion.c once per scalar (double, grit_dual). */

/* Adds s J_n^T to force: J_n v the rate of the gap of candidate c, re-evaluated at the poses of k. J_n's
 * nonzero columns are the dofs on its bodies' chains to the root (a point Jacobian's only ones), so the
 * term goes to those rows only, the same products in the same order: the crate's 140 candidates on nv
 * 209 formed 3 nv Jacobians and added nv products each, 10 % of its step. Outside the chains the old sum
 * added s (n . 0) = +-0, which only a -0 could tell (it may turn +0). */
static void GS_NAME(adhesion_normal_add)(const grit_model *m, const GS_NAME(grit_kin) * k, const grit_contact_candidate *c,
                                         GS s, GS *force) {
  GS gp[2][3], gR[2][9];
  for (int i = 0; i < 2; ++i) { /* geometry poses: the body's composed with the geometry's own */
    const int g = c->geom[i], b = c->body[i];
    GS_NAME(grit_tf_compose_c)(gp[i], gR[i], k->xpos + 3 * b, k->xmat + 9 * b, m->geom_pos + 3 * g, m->geom_mat + 9 * g);
  }
  GS_NAME(grit_contact_geom) geo;
  GS_NAME(grit_contact_reevaluate)(&c->pt, gp[0], gR[0], gp[1], gR[1], &geo);
  for (int i = 0; i < 2; ++i) { /* phi = n . (pb - pa): + b's point, - a's (a static body: no dofs) */
    const GS *p = i ? geo.pb : geo.pa;
    const GS si = i ? s : GS_NEG(s);
    for (int dof = m->body_lastdof[c->body[i]]; dof >= 0; dof = m->dof_parent[dof]) {
      GS lin[3];
      GS_NAME(grit_sv_point_velocity)(lin, k->cdof + 6 * dof, p);
      const GS t = GS_FMA(geo.n[0], lin[0], GS_FMA(geo.n[1], lin[1], GS_MUL(geo.n[2], lin[2])));
      force[dof] = GS_FMA(si, t, force[dof]);
    }
  }
}

void GS_NAME(grit_adhesion_force)(const grit_model *m, const GS_NAME(grit_kin) * k, const grit_contact_candidate *cand,
                                  int ncand, const GS *w, GS *force, GS *scratch) {
  (void)scratch; /* (no longer needed: J_n is walked along the chains) */
  for (int a = 0; a < m->nu; ++a) {
    if (m->act_trntype[a] != GRIT_TRN_BODY) continue;
    const int body = m->act_tendon[a];
    int n = 0;
    for (int i = 0; i < ncand; ++i)
      n += (cand[i].body[0] == body || cand[i].body[1] == body) && grit_adhesion_counts(m, &cand[i]);
    if (n == 0) continue; /* nothing to adhere to: no force (MuJoCo's zero moment) */
    GS f = GS_SCALE(w[a], m->act_gainprm[3 * a]);
    if (m->act_forcelimited[a]) f = GS_FMIN(GS_FMAX(f, GS_C(m->act_forcerange[2 * a])), GS_C(m->act_forcerange[2 * a + 1]));
    const GS s = GS_SCALE(f, -1.0 / n);
    for (int i = 0; i < ncand; ++i)
      if ((cand[i].body[0] == body || cand[i].body[1] == body) && grit_adhesion_counts(m, &cand[i]))
        GS_NAME(adhesion_normal_add)(m, k, &cand[i], s, force);
  }
}
