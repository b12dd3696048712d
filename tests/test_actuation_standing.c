/* SPDX-License-Identifier: Apache-2.0 */
/* test_actuation_standing.c — issue 25's standing robots: the dm_control quadruped (filter servos on
 * fixed tendons, tendon equality couplings) and ANYmal C (position servos, joint frictionloss) stand on
 * their own servos on the floor at ctrl = 0; after 2 s the base height must be within 2 cm of MuJoCo
 * 2.2.2's (a reference peer, this test only), for each of grit's contact models. Gravity and contact on,
 * each file's own time step and options; grit's contact parameters are its defaults but for SAP's tau_d
 * (see stands; docs/actuation.md says how MuJoCo's soft contacts and grit's compare). About 6 s. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"

#define SUITE GRIT_SOURCE_DIR "/tests/models/dm_control_suite"

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "%s", path);
  fseek(f, 0, SEEK_END);
  const long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  cr_assert(s && fread(s, 1, (size_t)len, f) == (size_t)len);
  fclose(f);
  s[len] = 0;
  if (n) *n = (size_t)len;
  return s;
}

static void spit(const char *path, const char *s) {
  FILE *f = fopen(path, "wb");
  cr_assert(f, "%s", path);
  fputs(s, f);
  fclose(f);
}

/* Removes from s (in place) every element starting with `open` up to and including `close`. */
static void cut(char *s, const char *open, const char *close) {
  char *a;
  while ((a = strstr(s, open))) {
    char *b = strstr(a, close);
    cr_assert(b);
    b += strlen(close);
    memmove(a, b, strlen(b) + 1);
  }
}

/* Replaces (in place, s having room for it) every `from` with `to`, of the same length or shorter. */
static void replace(char *s, const char *from, const char *to) {
  char *a;
  while ((a = strstr(s, from))) {
    const size_t nf = strlen(from), nt = strlen(to);
    memmove(a + nt, a + nf, strlen(a + nf) + 1);
    memcpy(a, to, nt);
  }
}

/* The quadruped of dm_control's walk and run tasks (quadruped.make_model: no walls, ball or terrain),
 * written with the common files it includes into a temporary directory; its path into out. With
 * `bare`: floating, gravity and contact off, its joint limits and tendon couplings removed (the
 * actuators, tendons, damping and armature alone). */
static void quadruped_walk(char *dir, char *out, size_t n, int bare) {
  size_t len;
  char *s = slurp(SUITE "/quadruped.xml", &len);
  cut(s, "<geom name=\"wall_", "/>");
  cut(s, "<geom name=\"terrain\"", "/>");
  cut(s, "<body name=\"ball\"", "</body>");
  if (bare) {
    cut(s, "<equality>", "</equality>");
    replace(s, "limited=\"true\" solimplimit", "limited=\"false\" solimplimit");
    const char *opt = "<option timestep=\".005\"/>", *free_opt = "<option timestep=\".005\" gravity=\"0 0 0\">"
                                                                    "<flag contact=\"disable\"/></option>";
    char *o = strstr(s, opt);
    cr_assert(o);
    char *t = malloc(len + strlen(free_opt) + 1);
    cr_assert(t);
    sprintf(t, "%.*s%s%s", (int)(o - s), s, free_opt, o + strlen(opt));
    free(s);
    s = t;
  }
  cr_assert(mkdtemp(dir));
  char p[1024];
  snprintf(p, sizeof p, "%s/common", dir);
  cr_assert(mkdir(p, 0700) == 0);
  static const char *const common[3] = {"materials", "skybox", "visual"};
  for (int i = 0; i < 3; ++i) {
    char src[1024];
    snprintf(src, sizeof src, SUITE "/common/%s.xml", common[i]);
    snprintf(p, sizeof p, "%s/common/%s.xml", dir, common[i]);
    char *c = slurp(src, NULL);
    spit(p, c);
    free(c);
  }
  snprintf(out, n, "%s/quadruped_walk.xml", dir);
  spit(out, s);
  free(s);
}

static void remove_dir(const char *dir) {
  static const char *const common[3] = {"materials", "skybox", "visual"};
  char p[1024];
  for (int i = 0; i < 3; ++i) {
    snprintf(p, sizeof p, "%s/common/%s.xml", dir, common[i]);
    remove(p);
  }
  snprintf(p, sizeof p, "%s/common", dir);
  rmdir(p);
  snprintf(p, sizeof p, "%s/quadruped_walk.xml", dir);
  remove(p);
  rmdir(dir);
}

/* MuJoCo 2.2.2's base height after `seconds` at ctrl = 0 from the reference pose; its feet's effective
 * contact stiffness at rest into *k: the weight per contact over the mean penetration. */
static double mujoco_height(const char *path, double seconds, double *k) {
  char err[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(m, "%s", err);
  mjData *d = mj_makeData(m);
  const int steps = (int)lround(seconds / m->opt.timestep);
  for (int s = 0; s < steps; ++s) mj_step(m, d);
  const double z = d->qpos[2];
  double pen = 0;
  for (int i = 0; i < d->ncon; ++i) pen -= d->contact[i].dist / d->ncon;
  cr_assert(d->ncon > 0 && pen > 0);
  *k = mj_getTotalmass(m) * -m->opt.gravity[2] / d->ncon / pen;
  mj_deleteData(d);
  mj_deleteModel(m);
  return z;
}

/* grit's, with contact model cm, SAP's tau_d (s), the contact stiffness (N/m; 0: grit's default) and
 * friction (< 0: the file's). */
static double grit_height(const char *path, grit_contact_model cm, double tau_d, double stiffness, double friction,
                          double seconds) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.tau_d = tau_d;
  lo.stiffness = stiffness;
  lo.friction = friction;
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.contact_model = cm;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK);
  const int steps = (int)lround(seconds / grit_model_options(m).timestep);
  for (int k = 0; k < steps; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "step %d: %s", k, grit_data_last_error(d));
  const double z = grit_data_qpos(d)[2];
  grit_data_free(d);
  grit_model_free(m);
  return z;
}

/* The comparison: grit's default contact parameters, except SAP's dissipation time scale tau_d, taken
 * from the file's contact solref (tc, dr) as grit's joint limits take solreflimit's: tau_d = 2 tc dr^2
 * (grit's default, 0.01 s, removes the feet's initial penetration of the reference pose, 1 cm for ANYmal,
 * within a few steps: a 2 cm hop, and the feet land in another stance). Then, to show what the remaining
 * difference is, the same with one setting that removes it (`explain`): MuJoCo's effective contact
 * stiffness at rest (its soft feet sink), or frictionless feet (MuJoCo's soft friction lets the feet
 * creep until the tangential forces vanish, which grit's Coulomb friction does not). */
typedef enum { STIFFNESS, FRICTIONLESS } explanation;

static void stands(const char *name, const char *path, double tau_d, explanation explain) {
  static const char *const cms[3] = {"Lagged", "Similar", "SAP"};
  double k;
  const double zm = mujoco_height(path, 2.0, &k);
  double zg[3], zs[3];
  for (int c = 0; c < 3; ++c) {
    zg[c] = grit_height(path, (grit_contact_model)c, tau_d, 0, -1, 2.0);
    zs[c] = grit_height(path, (grit_contact_model)c, tau_d, explain == STIFFNESS ? k : 0, explain == STIFFNESS ? -1 : 0,
                        2.0);
  }
  char what[96];
  if (explain == STIFFNESS) snprintf(what, sizeof what, "MuJoCo's effective contact stiffness %.3g N/m", k);
  else snprintf(what, sizeof what, "frictionless feet");
  printf("%s at ctrl = 0 after 2 s, base height: MuJoCo 2.2.2 %.4f m; grit %.4f (%s), %.4f (%s), %.4f (%s) m "
         "(SAP tau_d %g s); with %s: %.4f, %.4f, %.4f m\n",
         name, zm, zg[0], cms[0], zg[1], cms[1], zg[2], cms[2], tau_d, what, zs[0], zs[1], zs[2]);
  for (int c = 0; c < 3; ++c) {
    cr_expect_leq(fabs(zg[c] - zm), 0.02, "%s, %s: grit %.4f m, MuJoCo %.4f m", name, cms[c], zg[c], zm);
    cr_expect_leq(fabs(zs[c] - zm), 0.002, "%s, %s, with %s: grit %.4f m, MuJoCo %.4f m", name, cms[c], what, zs[c], zm);
  }
}

Test(actuation_standing, dm_control_quadruped_stands_on_its_tendon_servos, .timeout = 600) {
  char dir[] = "/tmp/grit_quadrupedXXXXXX", path[1024];
  quadruped_walk(dir, path, sizeof path, 0);
  stands("dm_control quadruped", path, 2 * 0.01 * 1 * 1, FRICTIONLESS); /* its geoms' solref (.01, 1) */
  remove_dir(dir);
}

Test(actuation_standing, anymal_c_stands_on_its_servos, .timeout = 600) {
  stands("ANYmal C", GRIT_SOURCE_DIR "/tests/models/anymal_c/scene.xml", 2 * 0.02 * 1 * 1, STIFFNESS); /* MuJoCo's default solref */
}

/* The quadruped's tendon actuators against MuJoCo 2.2.2 where the formulations coincide: floating, gravity
 * and contact off, limits and couplings removed (grit's are near-rigid, MuJoCo's soft: the ankle's limit
 * alone makes a 4e-2 rad difference), nonzero controls (filter servos on the tendons, the yaw servos on
 * joints), 1 s, max |dq| of the joints. With explicit_actuation (MuJoCo's Euler treatment) the two are the
 * same to round-off; with grit's implicit servos the difference is first order in dt. */
static double free_run(const char *path, double dt, int explicit_actuation) {
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert(mm, "%s", err);
  mm->opt.timestep = dt;
  mjData *md = mj_makeData(mm);
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = dt;
  lo.explicit_actuation = explicit_actuation;
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file_with(path, &lo, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-10;
  grit_data_set_step_settings(d, &st);
  double u[12];
  cr_assert_eq(mm->nu, 12);
  for (int i = 0; i < 12; ++i) u[i] = md->ctrl[i] = (0.3 + 0.1 * (i % 5)) * (i % 2 ? -1 : 1);
  grit_data_set_ctrl(d, u, 12);
  double e = 0;
  const int steps = (int)lround(1.0 / dt);
  for (int k = 0; k < steps; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    for (int i = 7; i < mm->nq; ++i) e = fmax(e, fabs(grit_data_qpos(d)[i] - md->qpos[i]));
  }
  grit_data_free(d);
  grit_model_free(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return e;
}

Test(actuation_standing, quadruped_tendon_servos_against_mujoco_floating, .timeout = 600) {
  char dir[] = "/tmp/grit_quadrupedXXXXXX", path[1024];
  quadruped_walk(dir, path, sizeof path, 1);
  const double ex = free_run(path, 5e-3, 1), e1 = free_run(path, 5e-3, 0), e2 = free_run(path, 5e-4, 0);
  printf("dm_control quadruped floating (limits, couplings, gravity, contact off), nonzero controls, 1 s vs MuJoCo "
         "2.2.2: max |dq| %.3g with explicit actuation (dt 5e-3); implicit servos %.3g (dt 5e-3), %.3g (dt 5e-4)\n",
         ex, e1, e2);
  cr_assert_leq(ex, 1e-6);
  cr_assert(e1 / e2 > 8 && e1 / e2 < 12, "first order in dt: %g / %g", e1, e2);
  remove_dir(dir);
}
