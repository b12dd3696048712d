/* SPDX-License-Identifier: Apache-2.0 */
/* bench_hydro.c — the step with hydroelastic patches (docs/hydroelastic.md) against point contacts on
 * the same scenes: a sphere and a box resting on a plane, the coin of seed 004 sliding and spinning, and
 * a row of eight spheres and boxes resting (Lagged; 1 ms; 200 settling steps, then 1000 timed). Prints the median step time over the run,
 * the contacts (patches) per step and the mean Newton iterations. Then the benchmark: the arm
 * pushing a ball (examples/models/arm_push_ball.xml, key "push", its torques held; 10 ms steps) with
 * point contacts and with every geometry but the ground plane compliant (the load option, E 1 MPa: the
 * arm's capsules, its base and the ball): the median step and the median A, B (grit_step_derivatives)
 * over 100 steps. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "grit/grit.h"
#include "grit/mjcf.h"

enum { STEPS = 1000 };

typedef struct item {
  grit_geom_type type;
  double size[3], mass, E, x;
} item;

/* Free bodies resting on (or, for the coin, sliding over) a ground plane; E = 0 for point contact. */
static grit_model *scene(const item *it, int n, double mu, int hydro) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_geom_def ground = grit_default_geom_def();
  ground.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0);
  ground.friction = mu;
  grit_builder_add_geom(b, &ground, NULL);
  for (int i = 0; i < n; ++i) {
    const double *s = it[i].size, m = it[i].mass;
    grit_body_def bd = grit_default_body_def();
    bd.mass = m;
    memset(bd.inertia, 0, sizeof bd.inertia);
    const double r2 = s[0] * s[0];
    const double I[3] = {it[i].type == GRIT_GEOM_BOX ? m * (s[1] * s[1] + s[2] * s[2]) / 3 : 0.4 * m * r2,
                         it[i].type == GRIT_GEOM_BOX ? m * (s[0] * s[0] + s[2] * s[2]) / 3 : 0.4 * m * r2,
                         it[i].type == GRIT_GEOM_BOX ? m * (s[0] * s[0] + s[1] * s[1]) / 3 : 0.4 * m * r2};
    for (int k = 0; k < 3; ++k) bd.inertia[4 * k] = I[k];
    if (it[i].type == GRIT_GEOM_CYLINDER) {
      bd.inertia[0] = bd.inertia[4] = m * (3 * r2 + 4 * s[1] * s[1]) / 12;
      bd.inertia[8] = 0.5 * m * r2;
    }
    bd.pos[0] = it[i].x;
    bd.pos[2] = it[i].type == GRIT_GEOM_SPHERE ? s[0] : it[i].type == GRIT_GEOM_BOX ? s[2] : s[1];
    int body;
    grit_builder_add_body(b, &bd, &body);
    grit_joint_def jd = grit_default_joint_def();
    jd.type = GRIT_JOINT_FREE;
    grit_builder_add_joint(b, body, &jd, NULL);
    grit_geom_def g = grit_default_geom_def();
    g.body = body;
    g.shape = grit_shape_make(it[i].type, s[0], s[1], s[2]);
    g.friction = mu;
    g.hydro_modulus = hydro ? it[i].E : 0.0;
    grit_builder_add_geom(b, &g, NULL);
  }
  grit_model *m = NULL;
  if (grit_builder_compile(b, &m) != GRIT_OK) fprintf(stderr, "%s\n", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static void run(const char *name, const item *it, int n, double mu, const double *v0) {
  for (int hydro = 0; hydro < 2; ++hydro) {
    grit_model *m = scene(it, n, mu, hydro);
    grit_data *d;
    grit_data_create(m, &d);
    for (int i = 0; i < 200; ++i) grit_step(d); /* settle onto the contacts first */
    if (v0) grit_data_set_qvel(d, v0, 6);
    static double t[STEPS];
    double nc = 0, it_sum = 0;
    int failed = 0;
    for (int i = 0; i < STEPS; ++i) {
      const double t0 = now_us();
      failed += grit_step(d) != GRIT_OK;
      t[i] = now_us() - t0;
      grit_step_stats st;
      grit_data_step_stats(d, &st);
      nc += st.ncontacts;
      it_sum += st.newton_iters;
    }
    printf("%-14s %-6s step %8.1f us  contacts %6.1f  newton %5.2f  failed %d\n", name, hydro ? "hydro" : "point",
           bench_median(t, STEPS), nc / STEPS, it_sum / STEPS, failed);
    grit_data_free(d);
    grit_model_free(m);
  }
}

/* The arm pushing the ball: point contacts (E = 0) or every geometry but the ground compliant, modulus E. */
static void arm_push_ball(double E) {
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.hydro_modulus = E;
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_mjcf_load_file_with(GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", &o, &m, &info, msg) != GRIT_OK) {
    fprintf(stderr, "bench_hydro: %s\n", msg);
    return;
  }
  grit_data *d;
  grit_data_create(m, &d);
  grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, "push"), d);
  enum { N = 100 };
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  static double ts[N], td[N], A[26 * 26], B[26 * 7];
  double nc = 0, narm = 0; /* contacts, and those between the arm and the ball */
  const int ground = grit_model_geom_index(m, "ground"), ball = grit_model_geom_index(m, "ball");
  int failed = 0;
  for (int i = 0; i < N; ++i) {
    double t0 = now_us();
    failed += grit_step(d) != GRIT_OK;
    ts[i] = now_us() - t0;
    t0 = now_us();
    failed += nx <= 26 && nu <= 7 ? grit_step_derivatives(d, A, B, NULL, 0, NULL) != GRIT_OK : 1;
    td[i] = now_us() - t0;
    nc += grit_data_ncontacts(d);
    for (int k = 0; k < grit_data_ncontacts(d); ++k) {
      grit_contact_info ci;
      grit_data_contact(d, k, &ci);
      narm += ci.geom[0] != ground && ci.geom[1] != ground && (ci.geom[0] == ball || ci.geom[1] == ball);
    }
  }
  printf("%-14s %-6s step %8.1f us  A,B %8.1f us  contacts %6.1f (arm-ball %5.1f)  failed %d\n", "arm push ball",
         E > 0 ? "hydro" : "point", bench_median(ts, N), bench_median(td, N), nc / N, narm / N, failed);
  grit_mjcf_info_free(&info);
  grit_data_free(d);
  grit_model_free(m);
}

int main(void) {
  const item sphere = {GRIT_GEOM_SPHERE, {0.05, 0, 0}, 1.0, 1e6, 0};
  const item box = {GRIT_GEOM_BOX, {0.1, 0.05, 0.02}, 2.0, 1e7, 0};
  const item coin = {GRIT_GEOM_CYLINDER, {0.01213, 0.000875, 0}, 0.00567, 1e9, 0};
  run("sphere", &sphere, 1, 0.5, NULL);
  run("box", &box, 1, 0.5, NULL);
  const double v0[6] = {0.5, 0, 0, 0, 0, 0.5 / 0.01213};
  run("coin sliding", &coin, 1, 0.2, v0);
  item row[8];
  for (int i = 0; i < 8; ++i) {
    row[i] = i % 2 ? box : sphere;
    row[i].x = 0.3 * i;
  }
  run("8 bodies", row, 8, 0.5, NULL);
  arm_push_ball(0);
  arm_push_ball(1e6);
  return 0;
}
