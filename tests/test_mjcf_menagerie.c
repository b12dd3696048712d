/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_menagerie.c — MuJoCo Menagerie robot files (issue 24), loaded unmodified by grit and compared
 * with MuJoCo 2.2.2 (a reference peer, used by tests only): MuJoCo's nq, nv and number of bodies, and with
 * contact, gravity, limits, actuation, equality constraints, joint friction, springs and tendon springs
 * off in both, 1 s from v = 0.5 sin(1 + i) with Euler at the file's time step, the same trajectory to
 * 1e-4 (the acceptance bound), grit with its explicit_gyroscopic option (MuJoCo's Euler for free and
 * ball bodies). Measured: 2.7e-11 for the committed Allegro hand (single-precision mesh masses), up to
 * 1e-8 over the others (panda, cassie: MuJoCo diagonalizes full inertias with its iterative mju_eig3).
 *
 * Menagerie files written for newer MuJoCo carry integrator="implicitfast", which 2.2.2 refuses; MuJoCo
 * is then given a copy with "implicit" (the comparison runs both with Euler, so nothing else changes)
 * in a temporary directory whose other entries link to the robot's own; grit always reads the file
 * itself. The committed files are the Allegro right hand (tests/models/menagerie, PROVENANCE); the other
 * robots are read from a Menagerie checkout named by GRIT_MENAGERIE_DIR (skipped when it is not set). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_mujoco_util.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif


typedef struct result {
  int nq, nv, nbody;
  double eq, ev;
} result;

/* grit loads `path` (leniently when `lenient`), MuJoCo `mj_path`; sizes and 1 s of free motion. */
static result compare(const char *path, const char *mj_path, int lenient) {
  char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  mjModel *mm = mj_loadXML(mj_path, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s: %s", mj_path, err);
  grit_model *gm;
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = lenient;
  o.explicit_gyroscopic = 1; /* MuJoCo's Euler for free and ball bodies (test_mjcf_real.c) */
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &gm, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(gm->nq, mm->nq, "%s: nq %d, MuJoCo %d", path, gm->nq, mm->nq);
  cr_assert_eq(gm->nv, mm->nv, "%s: nv %d, MuJoCo %d", path, gm->nv, mm->nv);
  cr_assert_eq(info.nbody, mm->nbody, "%s: nbody %d, MuJoCo %d", path, info.nbody, mm->nbody);
  cr_assert_eq(gm->opt.timestep, mm->opt.timestep, "%s", path);
  mjcmp_free_motion_only(mm, gm);
  mjData *md;
  grit_data *gd;
  const int steps = mjcmp_free_motion_run(mm, gm, &md, &gd);
  result r = {mm->nq, mm->nv, mm->nbody, 0, 0};
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &r.eq, &r.ev);
  cr_log_info("%s: nq %d nv %d nbody %d (grit's model %d), %d warnings; %d steps of %g s: max |dq| %.3g, max |dv| %.3g",
              path, mm->nq, mm->nv, mm->nbody, gm->nbody, info.nwarnings, steps, mm->opt.timestep, r.eq, r.ev);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
  return r;
}

/* ------------------------------------------------- MuJoCo 2.2.2's copy of a newer robot directory */

/* Reads a whole file (NULL on failure). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* Removes from `s` (in place) every element `<tag .../>` and every attribute ` name="..."`. */
static void drop_all(char *s, const char *what, int element) {
  for (char *hit; (hit = strstr(s, what));) {
    char *end = element ? strstr(hit, "/>") : strchr(hit + strlen(what), '"');
    cr_assert_not_null(end, "an unterminated %s", what);
    end += element ? 2 : 1;
    memmove(hit, end, strlen(end) + 1);
  }
}

/* Writes `s` to `path` as MuJoCo 2.2.2 reads what newer versions write (every edit is to a feature the
 * free-motion comparison turns off, or to a default newer MuJoCo and grit share):
 * - every "implicitfast" replaced by "implicit" (the comparison runs Euler in both);
 * - <jointactuatorfrc> sensors and joints' actuatorfrcrange / actuatorfrclimited removed (MuJoCo 3's
 *   actuator-force sensor and clamp: sensors and actuation are off in the comparison);
 * - autolimits="true" added to a <compiler> that does not set it: newer MuJoCo's default, and grit's
 *   (mjcf_parse.c), which 2.2.2 does not have (it refuses a range without `limited`). */
static void write_for_mujoco222(const char *path, const char *s) {
  char *t = malloc(strlen(s) + 1);
  cr_assert_not_null(t);
  strcpy(t, s);
  drop_all(t, "<jointactuatorfrc ", 1);
  drop_all(t, " actuatorfrcrange=\"", 0);
  drop_all(t, " actuatorfrclimited=\"", 0);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "%s", path);
  static const char newer[] = "\"implicitfast\"";
  const char *compiler = strstr(t, "<compiler");
  const char *close = compiler ? strchr(compiler, '>') : NULL;
  const char *autolimits = compiler ? strstr(compiler, "autolimits") : NULL;
  if (!close || (autolimits && autolimits < close)) compiler = NULL;
  for (const char *p = t; *p;) {
    const char *hit = strstr(p, newer);
    if (compiler && compiler >= p && (!hit || compiler < hit)) {
      const char *after = compiler + strlen("<compiler");
      fwrite(p, 1, (size_t)(after - p), f);
      fputs(" autolimits=\"true\"", f);
      p = after;
      compiler = NULL;
      continue;
    }
    if (!hit) {
      fputs(p, f);
      break;
    }
    fwrite(p, 1, (size_t)(hit - p), f);
    fputs("\"implicit\"", f);
    p = hit + sizeof newer - 1;
  }
  fclose(f);
  free(t);
}

static int ends_with(const char *s, const char *tail) {
  const size_t n = strlen(s), m = strlen(tail);
  return n >= m && !strcmp(s + n - m, tail);
}

/* A temporary directory holding MuJoCo 2.2.2's copies of `dir`'s XML files and links to its other
 * entries (the mesh directories), so that relative includes and meshdir resolve as in `dir`. */
static void mujoco222_dir(const char *dir, char *tmp, size_t size) {
  snprintf(tmp, size, "/tmp/grit_menagerie_XXXXXX");
  cr_assert_not_null(mkdtemp(tmp));
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "%s", dir);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char src[2048], dst[2048];
    snprintf(src, sizeof src, "%.1500s/%.255s", dir, e->d_name);
    snprintf(dst, sizeof dst, "%.1500s/%.255s", tmp, e->d_name);
    if (ends_with(e->d_name, ".xml")) {
      char *s = slurp(src);
      cr_assert_not_null(s, "%s", src);
      write_for_mujoco222(dst, s);
      free(s);
    } else {
      cr_assert_eq(symlink(src, dst), 0, "%s", dst);
    }
  }
  closedir(d);
}

static void remove_dir(const char *tmp) {
  DIR *d = opendir(tmp);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(tmp);
}

/* A robot of a Menagerie checkout: grit reads `root/dir/file`, MuJoCo the 2.2.2 copy. */
static result compare_in(const char *root, const char *dir, const char *file, int lenient) {
  char path[2048], src[1024], tmp[256], mj[2048];
  snprintf(src, sizeof src, "%.800s/%.200s", root, dir);
  snprintf(path, sizeof path, "%.1024s/%.200s", src, file);
  mujoco222_dir(src, tmp, sizeof tmp);
  snprintf(mj, sizeof mj, "%.256s/%.200s", tmp, file);
  const result r = compare(path, mj, lenient);
  remove_dir(tmp);
  return r;
}

/* ------------------------------------------------------------------------------------- tests */

#define ALLEGRO GRIT_SOURCE_DIR "/tests/models/menagerie/wonik_allegro/"

/* The committed Allegro right hand: binary STL meshes weighed at a density, unmodified, no warning. */
Test(mjcf_menagerie, allegro_right_hand) {
  const result r = compare(ALLEGRO "right_hand.xml", ALLEGRO "right_hand.xml", 0);
  cr_expect_eq(r.nq, 16);
  cr_expect_eq(r.nbody, 22);
  cr_expect_lt(r.eq, 1e-4, "max |dq| %g", r.eq);
  cr_expect_lt(r.ev, 1e-4, "max |dv| %g", r.ev);
}

/* The same hand through its scene file's <include> (and the scene's floor, light and options). */
Test(mjcf_menagerie, allegro_scene_include) {
  const result r = compare(ALLEGRO "scene_right.xml", ALLEGRO "scene_right.xml", 0);
  cr_expect_eq(r.nq, 23); /* and the scene's free ellipsoid */
  cr_expect_lt(r.eq, 1e-4, "max |dq| %g", r.eq);
  cr_expect_lt(r.ev, 1e-4, "max |dv| %g", r.ev);
}

/* The target robots of issue 24, and the other robots of that commit, in a Menagerie checkout
 * (GRIT_MENAGERIE_DIR), every one loaded strictly (`lenient` 0: the Panda, the Robotiq gripper and the
 * Shadow hands' actuators with tendon transmissions are in the model). */
Test(mjcf_menagerie, checkout, .timeout = 600) {
  const char *root = getenv("GRIT_MENAGERIE_DIR");
  if (!root || !*root) cr_skip_test("GRIT_MENAGERIE_DIR is not set");
  static const struct {
    const char *dir, *file;
    int lenient;
  } robots[] = {
      {"franka_emika_panda", "panda.xml", 0},        {"franka_emika_panda", "panda_nohand.xml", 0},
      {"franka_emika_panda", "hand.xml", 0},         {"kuka_iiwa_14", "iiwa14.xml", 0},
      {"universal_robots_ur5e", "ur5e.xml", 0},      {"anybotics_anymal_c", "anymal_c.xml", 0},
      {"agility_cassie", "cassie.xml", 0},           {"robotiq_2f85", "2f85.xml", 0},
      {"shadow_hand", "right_hand.xml", 0},          {"shadow_hand", "left_hand.xml", 0},
      {"wonik_allegro", "right_hand.xml", 0},        {"wonik_allegro", "left_hand.xml", 0},
      /* the rest of that commit's robots */
      {"anybotics_anymal_b", "anymal_b.xml", 0},     {"realsense_d435i", "d435i.xml", 0},
      {"rethink_robotics_sawyer", "sawyer.xml", 0},  {"robotis_op3", "op3.xml", 0},
      {"unitree_a1", "a1.xml", 0},                   {"unitree_go1", "go1.xml", 0},
  };
  for (size_t i = 0; i < sizeof robots / sizeof robots[0]; ++i) {
    const result r = compare_in(root, robots[i].dir, robots[i].file, robots[i].lenient);
    cr_expect_lt(r.eq, 1e-4, "%s/%s: max |dq| %g", robots[i].dir, robots[i].file, r.eq);
    cr_expect_lt(r.ev, 1e-4, "%s/%s: max |dv| %g", robots[i].dir, robots[i].file, r.ev);
  }
}

/* Unitree's own MuJoCo models (unitreerobotics/unitree_mujoco at c598f10, its unitree_robots/ folder,
 * named by GRIT_UNITREE_DIR; skipped when it is not set), written for MuJoCo 3: jointactuatorfrc sensors,
 * joints' actuatorfrcrange, g1's ranges without autolimits (write_for_mujoco222's edits for MuJoCo's
 * copy); grit reads each file as it is, strictly. Stop 30 (scout6) measured max |dq|, |dv| <= 1e-8. */
Test(mjcf_menagerie, unitree_checkout, .timeout = 600) {
  const char *root = getenv("GRIT_UNITREE_DIR");
  if (!root || !*root) cr_skip_test("GRIT_UNITREE_DIR is not set");
  static const struct {
    const char *dir, *file;
  } robots[] = {
      {"go2", "go2.xml"},  {"go2w", "go2w.xml"},         {"b2", "b2.xml"},           {"b2w", "b2w.xml"},
      {"h1", "h1.xml"},    {"h1_2", "h1_2_handless.xml"}, {"g1", "g1_29dof.xml"},     {"g1", "g1_23dof.xml"},
      {"r1", "R1_C++.xml"},
  };
  for (size_t i = 0; i < sizeof robots / sizeof robots[0]; ++i) {
    const result r = compare_in(root, robots[i].dir, robots[i].file, 0);
    cr_expect_lt(r.eq, 1e-4, "%s/%s: max |dq| %g", robots[i].dir, robots[i].file, r.eq);
    cr_expect_lt(r.ev, 1e-4, "%s/%s: max |dv| %g", robots[i].dir, robots[i].file, r.ev);
  }
}
