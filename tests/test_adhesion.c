/* SPDX-License-Identifier: Apache-2.0 */
/* test_adhesion.c — adhesion actuators (GRIT_TRN_BODY, MJCF <adhesion>), geometry margin and gap,
 * priority and condim (issue 24): a gripper lifts a box it touches with ctrl = 1 and leaves it with
 * ctrl = 0; a box hanging from it falls when the control goes to 0; margin - gap inflates a surface
 * and margin = gap leaves a force-free layer; the pair's friction by priority and condim; the step's A
 * and B with adhesion (in contact, and through the force-free layer only) against central differences;
 * MuJoCo's model/adhesion/active_adhesion.xml (its <composite> removed) loads strictly with MuJoCo
 * 2.2.2's sizes, and with libmujoco its pulley tendon across two trees and the adhesion force equal
 * MuJoCo's; bad input. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "constraints_extra.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "test_util.h"

#define AA_FILE GRIT_SOURCE_DIR "/tests/models/mujoco_adhesion/active_adhesion_nocomposite.xml"

/* A pad on a vertical slide (position servo) above a 0.2 kg cube on the floor; the pad adheres
 * (margin = gap = 1 cm: a force-free layer its adhesion sees). pad_z: the pad body's height. */
static const char *lift_xml(double pad_z, double gravity, char *buf, size_t n) {
  snprintf(buf, n,
           "<mujoco><option timestep='0.002' gravity='0 0 %g'/><worldbody>"
           "<geom name='floor' type='plane' size='1 1 .1'/>"
           "<body name='gripper' pos='0 0 %.17g'><joint name='lift' type='slide' axis='0 0 1' damping='10'/>"
           "<geom name='pad' type='box' size='.05 .05 .005' margin='.01' gap='.01' mass='.5'/></body>"
           "<body name='box' pos='0 0 .1'><freejoint/><geom name='cube' type='box' size='.1 .1 .1' mass='.2'/></body>"
           "</worldbody><actuator><position name='lift' joint='lift' kp='500' ctrlrange='-.1 .3' ctrllimited='true'/>"
           "<adhesion name='stick' body='gripper' gain='10' ctrlrange='0 1'/></actuator></mujoco>",
           gravity, pad_z);
  return buf;
}

static grit_model *load(const char *xml) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

static grit_data *make_data(const grit_model *m, double rel_tol) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = rel_tol;
  grit_data_set_step_settings(d, &st);
  return d;
}

static void run(grit_data *d, const double *u, int steps) {
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int k = 0; k < steps; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
}

/* The pad starts resting on the cube (its bottom at the cube's top); the servo raises it 10 cm over 2 s. */
Test(adhesion, a_box_under_the_pad_lifts_with_ctrl_1_and_stays_with_ctrl_0) {
  char buf[2048];
  grit_model *m = load(lift_xml(0.205, -9.81, buf, sizeof buf));
  double z[2];
  for (int on = 0; on < 2; ++on) {
    grit_data *d = make_data(m, 1e-8);
    const double u[2] = {0.1, on};
    run(d, u, 1000);
    z[on] = grit_data_qpos(d)[3]; /* the cube's height (its free joint after the slide) */
    grit_data_free(d);
  }
  cr_log_info("cube height after 2 s: ctrl 0 %.5f m, ctrl 1 %.5f m (start 0.1)", z[0], z[1]);
  cr_assert(fabs(z[0] - 0.1) < 1e-3, "without adhesion the cube stays on the floor: %g", z[0]);
  cr_assert(z[1] > 0.18, "with adhesion the cube follows the pad up: %g", z[1]);
  grit_model_free(m);
}

Test(adhesion, a_hanging_box_falls_when_the_control_goes_to_0) {
  char buf[2048];
  grit_model *m = load(lift_xml(0.205, -9.81, buf, sizeof buf));
  grit_data *d = make_data(m, 1e-8);
  const double up[2] = {0.1, 1}, off[2] = {0.1, 0};
  run(d, up, 1000);
  const double lifted = grit_data_qpos(d)[3];
  run(d, off, 500);
  cr_log_info("cube: %.5f m held, %.5f m 1 s after ctrl 0", lifted, grit_data_qpos(d)[3]);
  cr_assert(lifted > 0.18);
  cr_assert(fabs(grit_data_qpos(d)[3] - 0.1) < 2e-3, "the released cube is back on the floor: %g", grit_data_qpos(d)[3]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A sphere dropped on the floor rests at r + margin - gap: margin 2 cm, gap 0 inflates it by 2 cm;
 * margin = gap = 2 cm leaves a force-free layer (it rests at r). */
Test(adhesion, margin_minus_gap_inflates_and_margin_equal_to_gap_is_force_free) {
  const double gaps[2] = {0.0, 0.02}, expect[2] = {0.07, 0.05};
  for (int i = 0; i < 2; ++i) {
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='1 1 .1'/>"
             "<body pos='0 0 .2'><freejoint/><geom type='sphere' size='.05' margin='.02' gap='%g'/></body>"
             "</worldbody></mujoco>",
             gaps[i]);
    grit_model *m = load(xml);
    grit_data *d = make_data(m, 1e-8);
    for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_log_info("margin .02, gap %g: rests at z = %.6f", gaps[i], grit_data_qpos(d)[2]);
    cr_assert(fabs(grit_data_qpos(d)[2] - expect[i]) < 1e-4, "gap %g: z = %g, expected %g", gaps[i], grit_data_qpos(d)[2],
              expect[i]);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* A sphere hanging 5 cm over a plane of margin 10 cm and gap 10 cm is in the force-free layer. Without
 * adhesion actuators the layer is not kept (collision.c, pair_margin): only pairs whose gap minus the
 * inflation is within the speculative window are candidates. The old rule (margin_layer = 1: every pair
 * within its margin) gives the same motion, since a layer candidate has no force; with an adhesion
 * actuator the layer is kept by default. */
Test(adhesion, the_force_free_layer_is_kept_only_with_adhesion) {
  const char *fmt = "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='1 1 .1' margin='.1' gap='.1'/>"
                    "<body pos='0 0 .2'><freejoint/><geom type='sphere' size='.05'/></body>"
                    "<body name='hang' pos='.5 0 .3'><joint type='hinge' axis='0 1 0' damping='1'/>"
                    "<geom type='sphere' size='.05' pos='0 0 -.2'/></body></worldbody>%s</mujoco>";
  char xml[1024];
  snprintf(xml, sizeof xml, fmt, "");
  grit_model *m = load(xml);
  grit_data *d[2] = {make_data(m, 1e-8), make_data(m, 1e-8)};
  cr_assert_eq(d[0]->collision->margin_layer, 0);
  d[1]->collision->margin_layer = 1;
  for (int k = 0; k < 400; ++k) {
    for (int i = 0; i < 2; ++i) cr_assert_eq(grit_step(d[i]), GRIT_OK, "%s", grit_data_last_error(d[i]));
    if (k == 9) /* the falling sphere 15 cm up: the hanging one alone, in the layer */
      cr_assert(grit_data_ncontacts(d[0]) == 0 && grit_data_ncontacts(d[1]) == 1, "step 10: %d, %d candidates",
                grit_data_ncontacts(d[0]), grit_data_ncontacts(d[1]));
  }
  cr_assert_eq(grit_data_ncontacts(d[0]), 1, "the resting sphere only: %d", grit_data_ncontacts(d[0]));
  cr_assert_eq(grit_data_ncontacts(d[1]), 2, "and the hanging one in the layer: %d", grit_data_ncontacts(d[1]));
  for (int j = 0; j < m->nq; ++j)
    cr_assert(fabs(grit_data_qpos(d[0])[j] - grit_data_qpos(d[1])[j]) < 1e-9, "qpos[%d]: %.17g vs %.17g", j,
              grit_data_qpos(d[0])[j], grit_data_qpos(d[1])[j]);
  cr_assert(fabs(grit_data_qpos(d[0])[2] - 0.05) < 1e-4, "rests on the plane: z = %g", grit_data_qpos(d[0])[2]);
  for (int i = 0; i < 2; ++i) grit_data_free(d[i]);
  grit_model_free(m);
  snprintf(xml, sizeof xml, fmt, "<actuator><adhesion body='hang' ctrlrange='0 1' gain='1'/></actuator>");
  m = load(xml);
  d[0] = make_data(m, 1e-8);
  cr_assert_eq(d[0]->collision->margin_layer, 1, "adhesion counts the layer");
  for (int k = 0; k < 10; ++k) cr_assert_eq(grit_step(d[0]), GRIT_OK, "%s", grit_data_last_error(d[0]));
  cr_assert_eq(grit_data_ncontacts(d[0]), 1, "the layer kept: %d", grit_data_ncontacts(d[0]));
  grit_data_free(d[0]);
  grit_model_free(m);
}

/* MuJoCo's combination: the geometry of higher priority gives friction and condim; equal priorities
 * the larger friction and condim; condim 1 is frictionless. */
Test(adhesion, pair_friction_by_priority_and_condim) {
  const char *xml = "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 .1' friction='1'/>"
                    "<body><freejoint/><geom name='a' size='.1' friction='.2' priority='2'/></body>"
                    "<body><freejoint/><geom name='b' size='.1' friction='.4' condim='1'/></body>"
                    "<body><freejoint/><geom name='c' size='.1' friction='.3' condim='1' priority='3'/></body>"
                    "<body><freejoint/><geom name='e' size='.1' friction='.6' condim='1'/></body>"
                    "</worldbody></mujoco>";
  grit_model *m = load(xml);
  const grit_geom_params gp = {m->geom_friction, m->geom_stiffness, m->geom_dissipation, m->geom_taud, 0,
                               m->geom_priority, m->geom_condim};
  const int fl = grit_model_geom_index(m, "floor"), a = grit_model_geom_index(m, "a"), b = grit_model_geom_index(m, "b");
  const int c = grit_model_geom_index(m, "c"), e = grit_model_geom_index(m, "e");
  struct {
    int g1, g2;
    double mu;
  } cases[] = {{fl, a, 0.2}, /* priority: a's, not the max */
               {fl, b, 1.0}, /* condim max(3, 1) = 3, friction max */
               {a, b, 0.2},  /* a's priority: its condim 3 and friction */
               {fl, c, 0.0}, /* c's priority: condim 1 */
               {b, e, 0.0}}; /* both condim 1 */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    grit_contact_params p;
    memset(&p, 0, sizeof p);
    grit_pair_params(&gp, cases[i].g1, cases[i].g2, &p);
    cr_assert_eq(p.mu, cases[i].mu, "case %zu: mu %g, expected %g", i, p.mu, cases[i].mu);
    grit_pair_params(&gp, cases[i].g2, cases[i].g1, &p);
    cr_assert_eq(p.mu, cases[i].mu, "case %zu swapped: mu %g", i, p.mu);
  }
  grit_model_free(m);
}

/* A and B of one step against central differences: the cube hanging from the pad (contacts pressed by
 * the adhesion), and the cube 5 mm below the pad with gravity off (the force-free layer only: the
 * adhesion couples the two trees through contacts that carry no force). */
Test(adhesion, jacobians_match_central_differences) {
  char buf[2048];
  grit_model *m = load(lift_xml(0.205, -9.81, buf, sizeof buf));
  grit_data *d = make_data(m, 1e-11);
  const double up[2] = {0.1, 1};
  run(d, up, 300);
  const double e1 = fdt_check(d, 1e-6);
  grit_data_free(d);
  grit_model_free(m);
  m = load(lift_xml(0.21, 0.0, buf, sizeof buf));
  d = make_data(m, 1e-11);
  const double hold[2] = {0.0, 0.7};
  run(d, hold, 2);
  const double e2 = fdt_check(d, 1e-6);
  cr_log_info("adhesion: A, B vs central differences: hanging %.3g, force-free layer %.3g", e1, e2);
  cr_assert(e1 < 1e-5 && e2 < 1e-5, "hanging %g, layer %g", e1, e2);
  grit_data_free(d);
  grit_model_free(m);
}

/* The block-sparse form equals the dense A and B bit for bit when adhesion couples two trees through the
 * force-free layer only (no contact force couples them in H: the islands must join them). */
Test(adhesion, jacobian_blocks_equal_the_dense_ones) {
  char buf[2048];
  grit_model *m = load(lift_xml(0.21, 0.0, buf, sizeof buf));
  grit_data *d = make_data(m, 1e-11);
  const double hold[2] = {0.0, 0.7};
  run(d, hold, 3);
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * nu), sizeof *B);
  double *A2 = calloc((size_t)(nx * nx), sizeof *A2), *B2 = calloc((size_t)(nx * nu), sizeof *B2);
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, A2, B2), GRIT_OK);
  cr_assert_eq(grit_jacobian_blocks_count(J), 1, "the pad and the cube are one island");
  cr_assert(!memcmp(A, A2, sizeof(double) * (size_t)(nx * nx)) && !memcmp(B, B2, sizeof(double) * (size_t)(nx * nu)));
  double bz = 0; /* the cube's vertical velocity moves with the adhesion's control */
  for (int i = 0; i < nx; ++i) bz = fmax(bz, fabs(B[i * nu + 1]));
  cr_assert(bz > 0 && fabs(B[(nx / 2 + 3) * nu + 1]) > 0, "B's adhesion column is zero on the cube");
  grit_jacobian_blocks_free(J);
  free(A), free(B), free(A2), free(B2);
  grit_data_free(d);
  grit_model_free(m);
}

/* A, B of d's last step, dense and block form scattered (nx = 2 nv: no activations), with the adhesion
 * terms where they have partials (derivatives_adhesion.c) or in every pass (lean 0). */
static void ab_both_forms(grit_data *d, int lean, double *A, double *B, double *Ab, double *Bb) {
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK); /* the workspace exists after a call */
  d->deriv->no_adhesion_lean = !lean;
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks *J = NULL;
  cr_assert_eq(grit_jacobian_blocks_create(grit_data_model(d), &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_jacobian_blocks_to_dense(J, Ab, Bb), GRIT_OK);
  grit_jacobian_blocks_free(J);
  d->deriv->no_adhesion_lean = 0;
}

/* The adhesion terms left out where they have no partials, and added over their bodies' chains only
 * (derivatives_adhesion.c), against every term over every dof in every pass (no_adhesion_lean): A and B
 * the same numbers (an exact zero may change its sign), dense and block form, on the file's scene with
 * both adhesive bodies holding (the arm's boxes on the crate's box, the sphere on the ceiling's hook
 * free) and the hanging cube; then A, B of the lean path against central differences. */
Test(adhesion, lean_terms_equal_every_term) {
  grit_model *ms[2] = {NULL, NULL};
  char msg[GRIT_MESSAGE_SIZE], buf[2048];
  cr_assert_eq(grit_mjcf_load_file(AA_FILE, &ms[0], NULL, msg), GRIT_OK, "%s", msg);
  ms[1] = load(lift_xml(0.205, -9.81, buf, sizeof buf));
  for (int s = 0; s < 2; ++s) {
    grit_model *m = ms[s];
    grit_data *d = make_data(m, 1e-10);
    const double u5[5] = {0.1, 1, 1, -0.3, 1}, u2[2] = {0.1, 1};
    cr_assert_eq(grit_data_set_ctrl(d, s ? u2 : u5, s ? 2 : 5), GRIT_OK);
    for (int k = 0; k < (s ? 300 : 700); ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
    double *buf2 = calloc((size_t)(4 * nx * nx + 4 * nx * nu), sizeof(double));
    double *A[2] = {buf2, buf2 + nx * nx}, *Ab[2] = {buf2 + 2 * nx * nx, buf2 + 3 * nx * nx};
    double *B[2] = {buf2 + 4 * nx * nx, buf2 + 4 * nx * nx + nx * nu};
    double *Bb[2] = {B[1] + nx * nu, B[1] + 2 * nx * nu};
    for (int lean = 0; lean < 2; ++lean) ab_both_forms(d, lean, A[lean], B[lean], Ab[lean], Bb[lean]);
    int differ = 0, nonzero_b = 0;
    for (int i = 0; i < nx * nx; ++i) differ += A[0][i] != A[1][i] || Ab[0][i] != Ab[1][i];
    for (int i = 0; i < nx * nu; ++i) differ += B[0][i] != B[1][i] || Bb[0][i] != Bb[1][i], nonzero_b += B[1][i] != 0;
    cr_assert_eq(differ, 0, "scene %d: %d entries of A, B differ", s, differ);
    cr_assert(nonzero_b > 0);
    if (s == 1) {
      const double e = fdt_check(d, 1e-6);
      cr_log_info("adhesion, lean terms: A, B vs central differences %.3g", e);
      cr_assert(e < 1e-5, "%g", e);
    }
    free(buf2);
    grit_data_free(d);
  }
  grit_model_free(ms[0]);
  grit_model_free(ms[1]);
}

Test(adhesion, active_adhesion_loads_strictly) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(AA_FILE, &m, NULL, msg), GRIT_OK, "%s", msg);
  /* MuJoCo 2.2.2's sizes of this file (mj_loadXML): nq 19, nv 17, nu 5, nbody 8 */
  cr_assert_eq(grit_model_nq(m), 19);
  cr_assert_eq(grit_model_nv(m), 17);
  cr_assert_eq(grit_model_nu(m), 5);
  cr_assert_eq(grit_model_nbody(m), 8);
  grit_data *d = make_data(m, 1e-8);
  const double u[5] = {0.1, 0.5, 1, -0.3, 1};
  cr_assert_eq(grit_data_set_ctrl(d, u, 5), GRIT_OK);
  for (int k = 0; k < 500; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  for (int i = 0; i < grit_model_nq(m); ++i) cr_assert(isfinite(grit_data_qpos(d)[i]));
  grit_data_free(d);
  grit_model_free(m);
}

/* The file's own scene: the arm (servo "arm" at 1) lowers its four adhesive boxes onto the crate's box
 * for 2 s, then rises (servo at 0) for 2 s with "adhere_arm" at 1 or 0; at 1 the box hangs under the
 * arm, then falls back when the adhesion is switched off. qpos: the box's free joint at 4 (z at 6). */
Test(adhesion, active_adhesion_arm_picks_up_the_box) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(AA_FILE, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_actuator_index(m, "arm"), 1);
  cr_assert_eq(grit_model_actuator_index(m, "adhere_arm"), 2);
  double z[2];
  for (int on = 0; on < 2; ++on) {
    grit_data *d = make_data(m, 1e-8);
    const double lower[5] = {0, 1, on, 0, 0}, raise[5] = {0, 0, on, 0, 0}, release[5] = {0, 0, 0, 0, 0};
    cr_assert_eq(grit_data_set_ctrl(d, lower, 5), GRIT_OK);
    for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_data_set_ctrl(d, raise, 5), GRIT_OK);
    for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    z[on] = grit_data_qpos(d)[6];
    cr_assert_eq(grit_data_set_ctrl(d, release, 5), GRIT_OK);
    for (int k = 0; k < 500; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(fabs(grit_data_qpos(d)[6] - 0.05) < 1e-3, "released: the box rests in the crate (z %g)",
              grit_data_qpos(d)[6]);
    grit_data_free(d);
  }
  cr_log_info("active_adhesion: the box's height after the arm rises: adhesion off %.4f m, on %.4f m (rest 0.05)",
              z[0], z[1]);
  cr_assert(fabs(z[0] - 0.05) < 1e-3, "without adhesion the box stays: %g", z[0]);
  cr_assert(z[1] > 0.08, "with adhesion the box is lifted: %g", z[1]);
  grit_model_free(m);
}

static void load_fails(const char *xml, grit_status want, const char *needle) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_status s = grit_mjcf_load_string(xml, &m, NULL, msg);
  cr_assert_eq(s, want, "%s: status %d, message %s", needle, (int)s, msg);
  cr_assert(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  grit_model_free(m);
}

Test(adhesion, bad_input_is_an_error_with_its_line) {
#define BODY "<worldbody><body name='b'><joint/><geom size='.1'/></body><body name='w'><geom size='.1'/></body></worldbody>"
  load_fails("<mujoco>" BODY "<actuator>\n<adhesion body='b'/></actuator></mujoco>", GRIT_ERR_INVALID_MODEL,
             ":2: <adhesion> attribute 'ctrlrange' is required");
  load_fails("<mujoco>" BODY "<actuator>\n<adhesion body='b' ctrlrange='-1 1'/></actuator></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <adhesion> the adhesion control range must be >= 0");
  load_fails("<mujoco>" BODY "<actuator>\n<adhesion body='b' gain='-1' ctrlrange='0 1'/></actuator></mujoco>",
             GRIT_ERR_INVALID_MODEL, "gain must be >= 0");
  load_fails("<mujoco>" BODY "<actuator>\n<adhesion body='nobody' ctrlrange='0 1'/></actuator></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <adhesion> unknown body 'nobody'");
  load_fails("<mujoco>" BODY "<actuator>\n<adhesion body='w' ctrlrange='0 1'/></actuator></mujoco>",
             GRIT_ERR_UNSUPPORTED, ":2: <adhesion> adhesion on body 'w', which cannot move");
  grit_model *cls = load("<mujoco><default><adhesion gain='2'/><default class='a'><adhesion ctrlrange='0 2' gain='3'/>"
                         "</default></default>" BODY "<actuator><adhesion class='a' body='b'/></actuator></mujoco>");
  grit_model_free(cls); /* ctrlrange from the class (later MuJoCo versions; dm_control's fruit fly) */
  grit_model *ok = load("<mujoco><worldbody><body><joint/><geom size='.1'/><body name='f'><geom size='.1'/></body>"
                        "</body></worldbody><actuator><adhesion body='f' ctrlrange='0 1'/></actuator></mujoco>");
  grit_model_free(ok); /* a body welded to a moving parent adheres with its own geometries */
  load_fails("<mujoco><worldbody>\n<geom size='.1' margin='-1'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
             ":2: <geom> attribute 'margin' must be >= 0");
  load_fails("<mujoco><worldbody>\n<geom size='.1' gap='-1'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
             ":2: <geom> attribute 'gap' must be >= 0");
#undef BODY
  /* the builder: a body transmission takes a fixed gain and no bias */
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_body_def bd = grit_default_body_def();
  int body;
  cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK);
  grit_actuator_def a = grit_default_actuator_def();
  a.trntype = GRIT_TRN_BODY;
  a.body = body;
  a.biastype = GRIT_BIAS_AFFINE;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_ERR_UNSUPPORTED);
  grit_builder_free(b);
}

#ifdef GRIT_TEST_MUJOCO
#include <mujoco/mujoco.h>

#include "mjcf_mujoco_util.h"

/* The file's pulley tendon (winch arm to the free sphere, two trees) at random states: length and
 * Jacobian equal MuJoCo's. */
Test(adhesion, active_adhesion_tendon_equals_mujocos) {
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(AA_FILE, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mjData *md = mj_makeData(mm);
  grit_model *m = NULL;
  cr_assert_eq(grit_mjcf_load_file(AA_FILE, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nq(m), mm->nq);
  cr_assert_eq(grit_model_nv(m), mm->nv);
  cr_assert_eq(grit_model_nu(m), mm->nu);
  cr_assert_eq(grit_model_nbody(m), mm->nbody);
  cr_assert_eq(grit_model_ntendon(m), mm->ntendon);
  grit_data *d = make_data(m, 1e-8);
  const int nq = mm->nq, nv = mm->nv;
  double *q = malloc(sizeof(double) * (size_t)nq), *J = malloc(sizeof(double) * (size_t)nv);
  tu_rng rng = {11};
  double el = 0, ej = 0;
  for (int trial = 0; trial < 20; ++trial) {
    memcpy(q, mm->qpos0, sizeof(double) * (size_t)nq);
    for (int j = 0; j < mm->njnt; ++j) { /* hinges and slides moved, free bodies moved and turned */
      const int a = mm->jnt_qposadr[j];
      if (mm->jnt_type[j] == mjJNT_FREE) {
        for (int i = 0; i < 3; ++i) q[a + i] += tu_uniform(&rng, -0.05, 0.05);
        tu_quat(&rng, q + a + 3);
      } else {
        q[a] += tu_uniform(&rng, -0.5, 0.5);
      }
    }
    memcpy(md->qpos, q, sizeof(double) * (size_t)nq);
    mj_forward(mm, md);
    cr_assert_eq(grit_data_set_qpos(d, q, nq), GRIT_OK);
    const double L = grit_tendon_length_jacobian(m, &d->kin, d->qpos, 0, J, d->jscratch);
    el = fmax(el, fabs(L - md->ten_length[0]));
    for (int i = 0; i < nv; ++i) ej = fmax(ej, fabs(J[i] - md->ten_J[i]));
  }
  cr_log_info("active_adhesion's pulley tendon vs MuJoCo 2.2.2 at 20 states: |dL| %.3g, |dJ| %.3g", el, ej);
  cr_assert(el < 1e-14 && ej < 1e-13, "length %g, Jacobian %g", el, ej);
  free(q);
  free(J);
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

/* active_adhesion's arm picking up the box (as active_adhesion_arm_picks_up_the_box) in both. */
Test(adhesion, active_adhesion_pick_up_agrees_with_mujoco) {
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  grit_model *m = NULL;
  cr_assert_eq(grit_mjcf_load_file(AA_FILE, &m, NULL, msg), GRIT_OK, "%s", msg);
  for (int on = 0; on < 2; ++on) {
    mjModel *mm = mj_loadXML(AA_FILE, NULL, err, sizeof err);
    cr_assert(mm, "%s", err);
    mjData *md = mj_makeData(mm);
    grit_data *d = make_data(m, 1e-8);
    for (int ph = 0; ph < 2; ++ph) {
      const double u[5] = {0, ph == 0 ? 1 : 0, on, 0, 0};
      cr_assert_eq(grit_data_set_ctrl(d, u, 5), GRIT_OK);
      memcpy(md->ctrl, u, sizeof u);
      for (int k = 0; k < 1000; ++k) {
        cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
        mj_step(mm, md);
      }
    }
    const double zg = grit_data_qpos(d)[6], zm = md->qpos[6];
    cr_log_info("active_adhesion, adhere_arm %d: the box's height after the arm rises: grit %.5f m, MuJoCo 2.2.2 %.5f m",
                on, zg, zm);
    cr_assert(fabs(zg - zm) < 5e-3, "adhere_arm %d: grit %g, MuJoCo %g", on, zg, zm);
    grit_data_free(d);
    mj_deleteData(md);
    mj_deleteModel(mm);
  }
  grit_model_free(m);
}

/* The lifting scene in both: MuJoCo 2.2.2 and grit lift the cube with ctrl = 1 and leave it with ctrl = 0;
 * the heights differ by the contact models' penetrations (MuJoCo's soft constraints sink mm, grit's
 * stiff compliant law microns). */
Test(adhesion, lifting_agrees_with_mujoco) {
  char buf[2048], err[1000] = "";
  const char *xml = lift_xml(0.205, -9.81, buf, sizeof buf);
  for (int on = 0; on < 2; ++on) {
    mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
    cr_assert(mm, "%s", err);
    mjData *md = mj_makeData(mm);
    md->ctrl[0] = 0.1, md->ctrl[1] = on;
    for (int k = 0; k < 1000; ++k) mj_step(mm, md);
    grit_model *m = load(xml);
    grit_data *d = make_data(m, 1e-8);
    const double u[2] = {0.1, on};
    run(d, u, 1000);
    const double zg = grit_data_qpos(d)[3], zm = md->qpos[3];
    cr_log_info("ctrl %d: cube height after 2 s: grit %.5f m, MuJoCo 2.2.2 %.5f m", on, zg, zm);
    cr_assert(fabs(zg - zm) < 5e-3, "ctrl %d: grit %g, MuJoCo %g", on, zg, zm);
    grit_data_free(d);
    grit_model_free(m);
    mj_deleteData(md);
    mj_deleteModel(mm);
  }
}

/* A free sphere or level box, adhesive (margin = gap = 1 cm), 5 mm above the floor, gravity off: its
 * contacts are all in the force-free layer, so one step's velocity change is h M^-1 of the adhesion
 * force alone; MuJoCo's qfrc_actuator is that force. */
Test(adhesion, force_equals_mujocos) {
  const char *shapes[2] = {"type='sphere' size='.05'", "type='box' size='.05 .04 .03'"};
  const double half[2] = {0.05, 0.03};
  for (int s = 0; s < 2; ++s) {
    char xml[1024], err[1000] = "";
    snprintf(xml, sizeof xml,
             "<mujoco><option timestep='0.001' gravity='0 0 0'/><worldbody><geom type='plane' size='1 1 .1'/>"
             "<body name='b' pos='0 0 %g'><freejoint/><geom %s margin='.01' gap='.01' mass='2'/></body></worldbody>"
             "<actuator><adhesion body='b' gain='3' ctrlrange='0 1'/></actuator></mujoco>",
             half[s] + 0.005, shapes[s]);
    mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
    cr_assert(mm, "%s", err);
    mjData *md = mj_makeData(mm);
    md->ctrl[0] = 0.8;
    mj_forward(mm, md);
    grit_model *m = load(xml);
    grit_data *d = make_data(m, 1e-12);
    const double u = 0.8;
    cr_assert_eq(grit_data_set_ctrl(d, &u, 1), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(md->ncon > 0 && grit_data_ncontacts(d) > 0, "no contacts: MuJoCo %d, grit %d", md->ncon,
              grit_data_ncontacts(d));
    double e = 0;
    for (int i = 0; i < 3; ++i) { /* translation: M = 2 I */
      const double f = 2.0 * grit_data_qvel(d)[i] / 0.001;
      e = fmax(e, fabs(f - md->qfrc_actuator[i]));
    }
    for (int i = 3; i < 6; ++i) e = fmax(e, fabs(grit_data_qvel(d)[i]) + fabs(md->qfrc_actuator[i]));
    cr_log_info("%s: adhesion force grit vs MuJoCo 2.2.2 (%d and %d contacts): |df| %.3g (f_z %g)", s ? "box" : "sphere",
                grit_data_ncontacts(d), md->ncon, e, md->qfrc_actuator[2]);
    cr_assert(fabs(md->qfrc_actuator[2] + 2.4) < 1e-12, "MuJoCo's force %g", md->qfrc_actuator[2]);
    cr_assert(e < 1e-9, "|df| = %g", e);
    grit_data_free(d);
    grit_model_free(m);
    mj_deleteData(md);
    mj_deleteModel(mm);
  }
}
#endif
