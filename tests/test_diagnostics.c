/* SPDX-License-Identifier: Apache-2.0 */
/* test_diagnostics.c — seed 001's criteria (grit/diagnostics.h) against an independent computation from
 * the public contact and kinematics API, on a spinning box thrown onto the ground (impact, slip,
 * stick), for the three contact models. */
#include "physics_scenes.h"
#include "grit/diagnostics.h"

static grit_data *thrown_box(grit_model **m, grit_contact_model model) {
  scene_contact c = {.mu = 0.4, .k = 1e5, .d = 5, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, NULL);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const double h = 0.05, mass = 0.7, I = mass * (2 * h) * (2 * h) / 6.0, pos[3] = {0, 0, 0.12};
  int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def box = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
  cr_assert_eq(grit_builder_add_geom(b, &box, NULL), GRIT_OK);
  grit_data *d = scene_data(b, m, model);
  const double v[6] = {1.2, 0.3, -0.8, 2.0, -3.0, 5.0};
  cr_assert_eq(grit_data_set_qvel(d, v, 6), GRIT_OK);
  return d;
}

/* c = J(q0) v at the contact's reported point, in its frame, from the public API (a second data at q0
 * with the step's new velocity). */
static void independent_velocity(const grit_model *m, const double *q0, const double *v, const grit_contact_info *ci,
                                 double c[3]) {
  grit_data *e;
  cr_assert_eq(grit_data_create(m, &e), GRIT_OK);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  cr_assert_eq(grit_data_set_qpos(e, q0, nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(e, v, nv), GRIT_OK);
  double u[2][3] = {{0}};
  for (int s = 0; s < 2; ++s) {
    if (ci->body[s] == 0) continue;
    double J[3 * 6];
    cr_assert_eq(grit_point_jacobian(e, ci->body[s], ci->pos, J, NULL), GRIT_OK);
    for (int r = 0; r < 3; ++r)
      for (int j = 0; j < nv; ++j) u[s][r] += J[r * nv + j] * v[j];
  }
  for (int k = 0; k < 3; ++k) { /* relative velocity of geom[1] w.r.t. geom[0], onto column k */
    c[k] = 0;
    for (int r = 0; r < 3; ++r) c[k] += ci->frame[3 * r + k] * (u[1][r] - u[0][r]);
  }
  grit_data_free(e);
}

/* Over 400 steps (fall, impact, slide, roll over), every contact's criteria equal the definitions
 * evaluated with the independent c and the public impulse and phi0. The reported point is the witness
 * points' midpoint, so c differs from the solver's by at most |omega| |phi0| / 2; the check is 10 % of
 * each criterion plus what that velocity offset can change it by. */
Test(diagnostics, agree_with_independent_computation) {
  for (int model = 0; model < 3; ++model) {
    grit_model *m;
    grit_data *d = thrown_box(&m, model);
    const double dt = 1e-3;
    double q0[7], seen_slip = 0, seen_contact = 0;
    for (int step = 0; step < 400; ++step) {
      memcpy(q0, grit_data_qpos(d), sizeof q0);
      scene_step(d);
      for (int i = 0; i < grit_data_ncontacts(d); ++i) {
        grit_contact_info ci;
        grit_contact_diagnostics g;
        cr_assert_eq(grit_data_contact(d, i, &ci), GRIT_OK);
        cr_assert_eq(grit_data_contact_diagnostics(d, i, &g), GRIT_OK);
        double c[3];
        independent_velocity(m, q0, grit_data_qvel(d), &ci, c);
        const double *v = grit_data_qvel(d), w = sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
        const double dv = 0.51 * fabs(ci.phi0) * w + 1e-9; /* the midpoint's offset from the witness points */
        for (int k = 0; k < 3; ++k)
          cr_assert(fabs(c[k] - g.velocity[k]) <= dv + 1e-9 * fabs(c[k]), "%s step %d contact %d: c[%d] %g vs %g",
                    SCENE_MODEL_NAMES[model], step, i, k, c[k], g.velocity[k]);
        const double *gm = ci.impulse, gap = ci.phi0 + dt * c[2], gt = hypot(gm[0], gm[1]), ct = hypot(c[0], c[1]);
        const double sig = gm[2] > 0 ? fmax(0, gap) : 0, cou = fmax(0, gt - g.mu * gm[2]);
        const double dis = fmax(0, g.mu * gm[2] * ct + gm[0] * c[0] + gm[1] * c[1]);
        cr_assert(fabs(sig - g.signorini_violation) <= 0.1 * sig + dt * dv, "%s: signorini %g vs %g",
                  SCENE_MODEL_NAMES[model], g.signorini_violation, sig);
        cr_assert(fabs(cou - g.coulomb_violation) <= 0.1 * cou + 1e-12, "%s: coulomb %g vs %g", SCENE_MODEL_NAMES[model],
                  g.coulomb_violation, cou);
        cr_assert(fabs(dis - g.dissipation_violation) <= 0.1 * dis + (g.mu * gm[2] + gt) * dv * 2,
                  "%s: dissipation %g vs %g", SCENE_MODEL_NAMES[model], g.dissipation_violation, dis);
        if (gm[2] > 0) seen_contact = 1;
        if (ct > 1e-2 && gm[2] > 0) seen_slip = 1;
      }
    }
    cr_assert(seen_contact && seen_slip, "%s: the scene must touch and slip", SCENE_MODEL_NAMES[model]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The step's maxima are the maxima over its contacts; Similar and SAP keep friction inside the cone
 * (their impulse is a projection onto it: violation at round-off), and their friction opposes slip. */
Test(diagnostics, step_maxima_and_cone_models) {
  for (int model = 0; model < 3; ++model) {
    grit_model *m;
    grit_data *d = thrown_box(&m, model);
    double worst_cone = 0;
    for (int step = 0; step < 400; ++step) {
      scene_step(d);
      grit_contact_diagnostics mx, g;
      cr_assert_eq(grit_data_step_diagnostics(d, &mx), GRIT_OK);
      double c = 0, s = 0;
      for (int i = 0; i < grit_data_ncontacts(d); ++i) {
        cr_assert_eq(grit_data_contact_diagnostics(d, i, &g), GRIT_OK);
        c = fmax(c, g.coulomb_violation);
        s = fmax(s, g.signorini_violation);
      }
      cr_assert_eq(mx.coulomb_violation, c);
      cr_assert_eq(mx.signorini_violation, s);
      worst_cone = fmax(worst_cone, c);
    }
    if (model != GRIT_CONTACT_LAGGED)
      cr_assert(worst_cone < 1e-9, "%s: cone violation %g", SCENE_MODEL_NAMES[model], worst_cone);
    grit_contact_diagnostics g;
    cr_assert_eq(grit_data_contact_diagnostics(d, grit_data_ncontacts(d), &g), GRIT_ERR_INVALID_ARGUMENT);
    cr_assert_eq(grit_data_step_diagnostics(NULL, &g), GRIT_ERR_INVALID_ARGUMENT);
    grit_data_free(d);
    grit_model_free(m);
  }
}
