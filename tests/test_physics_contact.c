/* SPDX-License-Identifier: Apache-2.0 */
/* test_physics_contact.c — the contact step against closed forms and seed 000's findings:
 * resting penetration mg/k, a sliding box's stopping distance v0^2/(2 mu g), a sliding sphere's
 * transition to rolling at 2 U0 / (7 mu g) and 5/7 U0, stiction and sliding on an incline, a resting
 * stack at the series clutters' stiffness coming to rest without reopening its contacts. */
#include "physics_scenes.h"

static const double G = 9.81;

/* A sphere of radius r and mass m resting on the ground plane. */
static grit_data *ball_on_ground(grit_model **m, grit_contact_model model, const scene_contact *c, double r,
                                 double mass, double dt, const double *gravity) {
  grit_builder *b = scene_builder(dt, gravity);
  grit_geom_def ground = scene_geom(c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const double I = 0.4 * mass * r * r, pos[3] = {0, 0, r};
  int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def ball = scene_geom(c, body, grit_shape_make(GRIT_GEOM_SPHERE, r, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ball, NULL), GRIT_OK);
  return scene_data(b, m, model);
}

/* The resting penetration is mg/k: at rest v = 0, and the normal law gives dt k (-phi0) = m g dt. For
 * SAP the stiffness is chosen outside its near-rigid regime (where it would be bounded by w/(4 pi^2)).
 * The fixed point is exact for the discrete step; 1e-6 relative covers the solver's tolerance. */
Test(physics_contact, resting_ball_penetrates_mg_over_k) {
  for (int model = 0; model < 3; ++model) {
    const double k = model == GRIT_CONTACT_SAP ? 1e4 : 1e7, mass = 0.5;
    scene_contact c = {.mu = 0.5, .k = k, .d = 10, .tau_d = 1e-3};
    grit_model *m;
    grit_data *d = ball_on_ground(&m, model, &c, 0.025, mass, 1e-3, NULL);
    for (int i = 0; i < 3000; ++i) scene_step(d);
    const double pen = 0.025 - grit_data_qpos(d)[2], expect = mass * G / k;
    cr_assert(fabs(pen - expect) <= 1e-6 * expect, "%s: penetration %.9g, mg/k = %.9g", SCENE_MODEL_NAMES[model], pen,
              expect);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A box sliding on the ground stops after v0^2 / (2 mu g). 1 % at dt = 1 ms: the discrete deceleration
 * is exact during slip, and the regularized stop (the last ~v_s/(mu g) s) and first-step lag add far
 * less than 1e-3 m of the 0.1 m distance. */
Test(physics_contact, sliding_box_stops_at_v0_squared_over_2_mu_g) {
  for (int model = 0; model < 3; ++model) {
    scene_contact c = {.mu = 0.5, .k = 1e6, .d = 10, .tau_d = 1e-3};
    grit_builder *b = scene_builder(1e-3, NULL);
    grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
    grit_builder_add_geom(b, &ground, NULL);
    const double h = 0.05, mass = 1.0, I = mass * (2 * h) * (2 * h) / 6.0, pos[3] = {0, 0, h - mass * G / (4 * c.k)};
    int body = scene_free_body(b, mass, I, I, I, pos);
    grit_geom_def box = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
    grit_builder_add_geom(b, &box, NULL);
    grit_model *m;
    grit_data *d = scene_data(b, &m, model);
    /* settle, then launch */
    for (int i = 0; i < 200; ++i) scene_step(d);
    const double v0 = 1.0, x0 = grit_data_qpos(d)[0];
    double v[6];
    memcpy(v, grit_data_qvel(d), sizeof v);
    v[0] = v0;
    grit_data_set_qvel(d, v, 6);
    for (int i = 0; i < 400; ++i) scene_step(d);
    const double dist = grit_data_qpos(d)[0] - x0, expect = v0 * v0 / (2 * c.mu * G);
    cr_log_info("%s: stopped after %.5f m (%+.3f %%)", SCENE_MODEL_NAMES[model], dist, 100 * (dist - expect) / expect);
    cr_assert(fabs(grit_data_qvel(d)[0]) < 1e-3, "%s: still moving at %g m/s", SCENE_MODEL_NAMES[model],
              grit_data_qvel(d)[0]);
    cr_assert(fabs(dist - expect) <= 0.01 * expect, "%s: stopped after %.5f m, v0^2/(2 mu g) = %.5f m",
              SCENE_MODEL_NAMES[model], dist, expect);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A sphere launched sliding on the ground (no impact) rolls after 2 U0 / (7 mu g) at 5/7 U0. The
 * transition is detected when the slip speed falls below 1 mm/s; at dt = 1 ms the detection is exact
 * to a step (1e-3 s of 0.117 s, under 1 %) for Lagged, the consistent model. Similar and SAP first lift
 * the sphere to their gliding height, mu (dt [+ tau_d]) U0 ~ 1-2 mm; the normal impulse during that
 * transient shifts the transition by about 1.3 % (measured): they get 3 %. The final speed is the
 * conserved angular momentum about the contact point, 5/7 U0, to 1 mm/s for all. */
Test(physics_contact, sliding_sphere_rolls_at_five_sevenths) {
  for (int model = 0; model < 3; ++model) {
    scene_contact c = {.mu = 0.5, .k = 1e7, .d = 500, .tau_d = 1e-3};
    grit_model *m;
    const double r = 0.025, U0 = 2.0, mass = 0.5;
    grit_data *d = ball_on_ground(&m, model, &c, r, mass, 1e-3, NULL);
    for (int i = 0; i < 100; ++i) scene_step(d); /* settle into the ground */
    double v[6] = {U0, 0, 0, 0, 0, 0};
    grit_data_set_qvel(d, v, 6);
    const double t0 = grit_data_time(d);
    double t_roll = -1;
    for (int i = 0; i < 300; ++i) {
      scene_step(d);
      double w[3];
      scene_world_omega(d, 0, 0, w);
      if (t_roll < 0 && fabs(grit_data_qvel(d)[0] - r * w[1]) < 1e-3) t_roll = grit_data_time(d) - t0;
    }
    const double expect = 2 * U0 / (7 * c.mu * G);
    const double tol = model == GRIT_CONTACT_LAGGED ? 0.01 : 0.03;
    cr_log_info("%s: rolling after %.4f s (%+.2f %%), final speed %.6f m/s", SCENE_MODEL_NAMES[model], t_roll,
                100 * (t_roll - expect) / expect, grit_data_qvel(d)[0]);
    cr_assert(fabs(t_roll - expect) <= tol * expect, "%s: rolling after %.4f s, 2U0/(7 mu g) = %.4f s",
              SCENE_MODEL_NAMES[model], t_roll, expect);
    cr_assert(fabs(grit_data_qvel(d)[0] - 5.0 / 7.0 * U0) <= 1e-3, "%s: final speed %.6f, 5/7 U0 = %.6f",
              SCENE_MODEL_NAMES[model], grit_data_qvel(d)[0], 5.0 / 7.0 * U0);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A box on an incline of angle theta (the gravity is tilted instead: the same physics). */
static grit_data *box_on_incline(grit_model **m, grit_contact_model model, double theta, double mu) {
  const double gravity[3] = {G * sin(theta), 0, -G * cos(theta)};
  grit_builder *b = scene_builder(1e-3, gravity);
  scene_contact c = {.mu = mu, .k = 1e6, .d = 10, .tau_d = 1e-3};
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  grit_builder_add_geom(b, &ground, NULL);
  const double h = 0.05, mass = 1.0, I = mass * (2 * h) * (2 * h) / 6.0, pos[3] = {0, 0, h};
  int body = scene_free_body(b, mass, I, I, I, pos);
  grit_geom_def box = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
  grit_builder_add_geom(b, &box, NULL);
  return scene_data(b, m, model);
}

/* Sticking (tan theta = 0.8 mu): regularized friction creeps at the speed s where it balances the
 * slope, mu gamma_n s / sqrt(s^2 + eps^2) = m g sin theta dt, i.e. s = eps r / sqrt(1 - r^2) with
 * r = tan(theta)/mu and eps = v_s = 1e-4 m/s (Lagged and Similar): 1.33e-4 m/s. Checked to 2 %. */
Test(physics_contact, box_on_incline_sticks_with_creep_below_stiction_scale) {
  const double mu = 0.5, theta = atan(0.8 * mu), r = tan(theta) / mu, eps = 1e-4;
  for (int model = 0; model < 2; ++model) {
    grit_model *m;
    grit_data *d = box_on_incline(&m, model, theta, mu);
    for (int i = 0; i < 1000; ++i) scene_step(d);
    const double creep = grit_data_qvel(d)[0], expect = eps * r / sqrt(1 - r * r);
    cr_log_info("%s: creep %.4g m/s (%+.2f %%)", SCENE_MODEL_NAMES[model], creep, 100 * (creep - expect) / expect);
    cr_assert(fabs(creep - expect) <= 0.02 * expect, "%s: creep %.4g m/s, regularized friction predicts %.4g m/s",
              SCENE_MODEL_NAMES[model], creep, expect);
    grit_data_free(d);
    grit_model_free(m);
  }
  /* SAP's stiction is its regularization R_t = sigma w (eq. 25): it creeps at R_t times the tangential
   * impulse each corner carries, below the 1e-4 m/s scale of the other models (measured 4.6e-6 m/s). */
  grit_model *m;
  grit_data *d = box_on_incline(&m, GRIT_CONTACT_SAP, theta, mu);
  for (int i = 0; i < 1000; ++i) scene_step(d);
  cr_log_info("sap: creep %.4g m/s", grit_data_qvel(d)[0]);
  cr_assert(fabs(grit_data_qvel(d)[0]) < 1e-4 * r, "sap: creep %g m/s", grit_data_qvel(d)[0]);
  grit_data_free(d);
  grit_model_free(m);
}

/* Sliding (tan theta = 1.5 mu): the acceleration is g (sin theta - mu cos theta). Measured from the
 * velocity gained between 0.2 s and 0.5 s, after the settling transient; 1 %. */
Test(physics_contact, box_on_incline_slides_with_coulomb_acceleration) {
  const double mu = 0.5, theta = atan(1.5 * mu);
  for (int model = 0; model < 3; ++model) {
    grit_model *m;
    grit_data *d = box_on_incline(&m, model, theta, mu);
    for (int i = 0; i < 200; ++i) scene_step(d);
    const double v1 = grit_data_qvel(d)[0];
    for (int i = 0; i < 300; ++i) scene_step(d);
    const double a = (grit_data_qvel(d)[0] - v1) / 0.3, expect = G * (sin(theta) - mu * cos(theta));
    cr_log_info("%s: acceleration %.5f (%+.3f %%)", SCENE_MODEL_NAMES[model], a, 100 * (a - expect) / expect);
    cr_assert(fabs(a - expect) <= 0.01 * expect, "%s: acceleration %.5f, g (sin - mu cos) = %.5f",
              SCENE_MODEL_NAMES[model], a, expect);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Seed 001's heavy-on-light stack: a 1e3 kg box (0.2 m) on a 1e-3 kg box (0.1 m) on the ground,
 * k = 1e7 N/m per contact point, mu = 0.5, dt = 1 ms; `config` 0-2 the three models, 3 the regularized
 * Lagged (seed 000 eq. 26). */
static const char *const STACK_NAMES[4] = {"lagged", "similar", "sap", "lagged (regularized)"};

static grit_data *heavy_on_light(grit_model **m, int config, const double gravity[3]) {
  scene_contact c = {.mu = 0.5, .k = 1e7, .d = 10, .tau_d = 1e-3};
  grit_builder *b = scene_builder(1e-3, gravity);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const double hl = 0.05, ml = 1e-3, hh = 0.1, mh = 1e3;
  const double Il = ml * (2 * hl) * (2 * hl) / 6.0, Ih = mh * (2 * hh) * (2 * hh) / 6.0;
  const double pl[3] = {0, 0, hl}, ph[3] = {0, 0, 2 * hl + hh};
  int light = scene_free_body(b, ml, Il, Il, Il, pl);
  grit_geom_def gl = scene_geom(&c, light, grit_shape_make(GRIT_GEOM_BOX, hl, hl, hl));
  cr_assert_eq(grit_builder_add_geom(b, &gl, NULL), GRIT_OK);
  int heavy = scene_free_body(b, mh, Ih, Ih, Ih, ph);
  grit_geom_def gh = scene_geom(&c, heavy, grit_shape_make(GRIT_GEOM_BOX, hh, hh, hh));
  cr_assert_eq(grit_builder_add_geom(b, &gh, NULL), GRIT_OK);
  grit_data *d = scene_data(b, m, config == 3 ? GRIT_CONTACT_LAGGED : (grit_contact_model)config);
  if (config == 3) {
    grit_step_settings s = grit_data_step_settings(d);
    s.regularize_lagged = 1;
    cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  }
  return d;
}

/* Seed 001's hardest case (mass ratio 1e6) in the three models and the regularized Lagged. The light
 * box rests on its four corners, so its static
 * penetration into the ground is (M + m) g / (4 k) = 0.245 mm; the bound is (M + m) g / k +
 * 0.3 mm. Checked over the last half second: within 0.05 mm of the static value (the boxes settle in
 * well under 0.5 s; what remains is the solver's tolerance). */
Test(physics_contact, heavy_on_light_stack_mass_ratio_1e6) {
  for (int config = 0; config < 4; ++config) {
    grit_model *m;
    grit_data *d = heavy_on_light(&m, config, NULL);
    const double hl = 0.05;
    double worst = 0;
    for (int i = 0; i < 1000; ++i) {
      scene_step(d);
      if (i >= 500) worst = fmax(worst, hl - grit_data_qpos(d)[2]);
    }
    cr_log_info("%s: light box penetrates %.6g mm", STACK_NAMES[config], 1e3 * worst);
    const double expect = (1e3 + 1e-3) * G / (4 * 1e7);
    cr_assert(fabs(worst - expect) <= 5e-5, "%s: light box penetrates %.4g mm, (M + m) g / (4k) = %.4g mm",
              STACK_NAMES[config], 1e3 * worst, 1e3 * expect);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The same stack under a sideways gravity of 0.2 g (mu = 0.5: it must stick). Once the compliant
 * contacts have taken the load and the rocking on the corner springs has died out (1.5 s), the boxes
 * creep by less than 0.5 mm in the next 0.5 s in every model: regularized friction creeps at the order
 * of the stiction tolerance (1e-4 m/s; measured 0.02-0.03 mm for Lagged and Similar, 0.24 mm for SAP),
 * where SAP's regularization from the light box's Delassus estimate alone slid the stack 255 mm. */
Test(physics_contact, heavy_on_light_stack_sticks_sideways) {
  for (int config = 0; config < 4; ++config) {
    const double gvec[3] = {0.2 * G, 0, -G};
    grit_model *m;
    grit_data *d = heavy_on_light(&m, config, gvec);
    for (int i = 0; i < 1500; ++i) scene_step(d);
    const double x0 = grit_data_qpos(d)[0], xh0 = grit_data_qpos(d)[7];
    for (int i = 0; i < 500; ++i) scene_step(d);
    const double x = grit_data_qpos(d)[0] - x0, xh = grit_data_qpos(d)[7] - xh0;
    cr_log_info("%s: light box moved %.6g mm, heavy %.6g mm", STACK_NAMES[config], 1e3 * x, 1e3 * xh);
    cr_assert(fabs(x) < 5e-4 && fabs(xh) < 5e-4, "%s: the stack slid: light %.4g mm, heavy %.4g mm",
              STACK_NAMES[config], 1e3 * x, 1e3 * xh);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* Two 1 kg boxes (0.1 m) stacked on the ground at the series' clutters' parameters (bench_mujoco: k =
 * 1e7 N/m per contact point, d = 10 s/m, mu = 1, dt = 2 ms, Lagged), starting just touching. On a
 * resting stack the step contracts: for one contact spring of mass m, (m + dt^2 k) v' = m v - dt k x, the
 * map of (x, dt v) has eigenvalues of modulus 1/sqrt(1 + dt^2 k / m) (0.08 per step at the bottom box's
 * four corners, dt^2 k / m = 160), so the stack must come to rest within a few steps and stay there:
 * every contact pressed in every later step (no gap reopening, which would make the piles of the series
 * chatter), the velocities at round-off, and the penetrations the static ones, 2 m g / (4 k) at the
 * ground and m g / (4 k) between the boxes (each face on four corners). Measured: |v| below 1e-13 m/s
 * after 10 steps, the penetrations to 1e-17 m. Bounds: 1e-9 m/s, 1e-11 m (the solver's tolerance on
 * 0.5 um). */
Test(physics_contact, resting_stack_comes_to_rest_without_reopening) {
  scene_contact c = {.mu = 1, .k = 1e7, .d = 10, .tau_d = 1e-4};
  grit_builder *b = scene_builder(2e-3, NULL);
  grit_geom_def ground = scene_geom(&c, 0, grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0));
  cr_assert_eq(grit_builder_add_geom(b, &ground, NULL), GRIT_OK);
  const double h = 0.05, mass = 1.0, I = mass * (2 * h) * (2 * h) / 6.0;
  for (int k = 0; k < 2; ++k) {
    const double pos[3] = {0, 0, h + 2 * h * k};
    int body = scene_free_body(b, mass, I, I, I, pos);
    grit_geom_def g = scene_geom(&c, body, grit_shape_make(GRIT_GEOM_BOX, h, h, h));
    cr_assert_eq(grit_builder_add_geom(b, &g, NULL), GRIT_OK);
  }
  grit_model *m;
  grit_data *d = scene_data(b, &m, GRIT_CONTACT_LAGGED);
  for (int i = 0; i < 50; ++i) scene_step(d);
  const double pen = mass * G / (4 * c.k);
  for (int i = 0; i < 200; ++i) {
    scene_step(d);
    const int n = grit_data_ncontacts(d);
    cr_assert_eq(n, 8, "step %d: %d contacts (four corners per face)", i, n);
    for (int j = 0; j < n; ++j) {
      grit_contact_info ci;
      cr_assert_eq(grit_data_contact(d, j, &ci), GRIT_OK);
      cr_assert(ci.impulse[2] > 0.0 && ci.phi0 < 0.0, "step %d: contact %d reopened (phi0 %.3g m)", i, j, ci.phi0);
    }
    double vmax = 0;
    for (int k = 0; k < 12; ++k) vmax = fmax(vmax, fabs(grit_data_qvel(d)[k]));
    cr_assert(vmax < 1e-9, "step %d: |v| %.3g at rest", i, vmax);
  }
  const double z0 = grit_data_qpos(d)[2], z1 = grit_data_qpos(d)[9];
  cr_log_info("penetration errors %.3g m, %.3g m", (h - z0) - 2 * pen, (3 * h - z1) - 3 * pen);
  cr_assert(fabs((h - z0) - 2 * pen) < 1e-11, "bottom box penetrates %.6g um, 2 m g / (4 k) = %.6g um", 1e6 * (h - z0),
            2e6 * pen);
  cr_assert(fabs((3 * h - z1) - 3 * pen) < 1e-11, "top box sinks %.6g um, 3 m g / (4 k) = %.6g um", 1e6 * (3 * h - z1),
            3e6 * pen);
  grit_data_free(d);
  grit_model_free(m);
}
