/* SPDX-License-Identifier: Apache-2.0 */
/* test_hfield_png.c — height fields read from files (issue 24): PNG images of every colour type and
 * MuJoCo's binary format give MuJoCo 2.2.2's hfield_data to the bit (with libmujoco), an unnamed field is
 * named after its file, a box set on a PNG plateau rests on its top, a field on a sliding tray carries a
 * ball, and damaged files (truncated, bad checksum, garbage compressed data, a huge header, not a PNG, a
 * short binary file, a missing file; every truncation and thousands of mutations) are errors naming the
 * file and the <hfield>'s line, never crashes. The files are tests/data/hfield/, written
 * by its make_files.py. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_internal.h"
#ifdef GRIT_TEST_MUJOCO
#include <mujoco/mujoco.h>
#endif

#define DATA GRIT_SOURCE_DIR "/tests/data/hfield/"

/* A model file in a temporary directory whose meshdir is the data directory; its path in path. */
static void write_model(const char *body, char path[256]) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/grit_hfpng_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, 256, "%s/m.xml", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "<mujoco>\n<compiler meshdir='%s'/>\n%s</mujoco>\n", DATA, body);
  fclose(f);
}

static void remove_model(const char *path) {
  char dir[256];
  snprintf(dir, sizeof dir, "%s", path);
  remove(path);
  *strrchr(dir, '/') = '\0';
  rmdir(dir);
}

/* grit's model of a field from `file` (size 0.8 0.6 0.25 0.1) under a falling sphere; status and msg. */
static grit_status load_field(const char *file, grit_model **m, char *msg) {
  char body[512], path[256];
  snprintf(body, sizeof body,
           "<asset><hfield name='h' file='%s' size='0.8 0.6 0.25 0.1'/></asset>\n"
           "<worldbody><geom type='hfield' hfield='h'/>\n"
           "<body pos='0 0 1'><freejoint/><geom size='0.05'/></body></worldbody>\n",
           file);
  write_model(body, path);
  const grit_status s = grit_mjcf_load_file(path, m, NULL, msg);
  remove_model(path);
  return s;
}

#ifdef GRIT_TEST_MUJOCO
/* Each file's grid in grit against MuJoCo 2.2.2's hfield_data x size[2]: the same numbers to the bit
 * (both normalize in single precision), on the same grid points (row 0 at -y: the PNG's rows flipped). */
Test(hfield_png, elevations_are_mujocos) {
  const char *files[] = {"hill_grey8.png", "hill_grey16.png", "hill_rgb.png", "hill_rgba.png", "hill_palette4.png",
                         "hill.bin"};
  for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
    char body[512], path[256], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
    snprintf(body, sizeof body,
             "<asset><hfield name='h' file='%s' size='0.8 0.6 0.25 0.1'/></asset>\n"
             "<worldbody><geom type='hfield' hfield='h'/></worldbody>\n",
             files[i]);
    write_model(body, path);
    mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
    grit_model *gm;
    const grit_status s = grit_mjcf_load_file(path, &gm, NULL, msg);
    remove_model(path);
    cr_assert_not_null(mm, "%s: MuJoCo: %s", files[i], err);
    cr_assert_eq(s, GRIT_OK, "%s: %s", files[i], msg);
    grit_geom_def def;
    grit_model_geom(gm, 0, &def);
    const grit_shape *h = &def.shape;
    const int nrow = mm->hfield_nrow[0], ncol = mm->hfield_ncol[0];
    cr_assert_eq(h->nvert, nrow * ncol, "%s", files[i]);
    cr_assert_eq(h->ncol, ncol, "%s", files[i]);
    double err_max = 0, range = 0;
    for (int k = 0; k < nrow * ncol; ++k) {
      const double z = (double)mm->hfield_data[k] * mm->hfield_size[2];
      err_max = fmax(err_max, fabs(h->vertices[3 * k + 2] - z));
      range = fmax(range, z);
      cr_assert_float_eq(h->vertices[3 * k + 1], 0.6 * (2.0 * (k / ncol) / (nrow - 1) - 1.0), 1e-15);
    }
    cr_log_info("%s: %d x %d, max |grit - MuJoCo| = %g m", files[i], nrow, ncol, err_max);
    cr_assert_eq(err_max, 0.0, "%s: %g", files[i], err_max);
    cr_assert_float_eq(range, 0.25, 1e-15, "%s: the top is size[2]", files[i]);
    grit_model_free(gm);
    mj_deleteModel(mm);
  }
}
#endif

/* A grey image read by grit alone: the rows flipped (the image's top row at +y) and each level
 * normalized, checked on hill_grey8.png's known corners (levels from make_files.py). */
Test(hfield_png, rows_are_flipped_and_normalized) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(load_field("hill_grey8.png", &m, msg), GRIT_OK, "%s", msg);
  grit_geom_def def;
  grit_model_geom(m, 0, &def);
  const grit_shape *h = &def.shape;
  cr_assert_eq(h->nvert, 63);
  cr_assert_eq(h->ncol, 9);
  /* level(r, c) = 0.5 + 0.35 sin(0.9 c) cos(0.7 r) + r / 60, rounded half to even as Python does; image
   * row r is grid row 6 - r */
  double lo = 1e9, hi = -1e9, L[7][9];
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 9; ++c) {
      L[r][c] = nearbyint(255 * (0.5 + 0.35 * sin(0.9 * c) * cos(0.7 * r) + 0.1 * (r / 6.0)));
      lo = fmin(lo, L[r][c]), hi = fmax(hi, L[r][c]);
    }
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 9; ++c) {
      const double want = 0.25 * (double)(float)((float)(L[r][c] - lo) / (float)(hi - lo));
      cr_assert_float_eq(h->vertices[3 * ((6 - r) * 9 + c) + 2], want, 1e-15, "image row %d col %d", r, c);
    }
  grit_model_free(m);
}

/* Without a name the field is its file's stem, as MuJoCo names it. */
Test(hfield_png, unnamed_field_is_named_after_its_file) {
  char path[256], msg[GRIT_MESSAGE_SIZE];
  write_model("<asset><hfield file='hill.bin' size='1 1 0.1 0.1'/></asset>\n"
              "<worldbody><geom type='hfield' hfield='hill'/></worldbody>\n",
              path);
  grit_model *m;
  const grit_status s = grit_mjcf_load_file(path, &m, NULL, msg);
  remove_model(path);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  grit_model_free(m);
}

/* A 1 kg box (half-size 0.1 m) dropped on plateau.png's flat top (16 x 16 pixels over 1.5 m x 1.5 m: the
 * top, 0.5 m wide at z = 0.2, stands on ground at 0): it comes to rest on the top at z = 0.3 less the
 * contact's compliance (grit's default MJCF contact: under 1 mm), level and still. */
Test(hfield_png, box_rests_on_a_png_plateau) {
  char path[256], msg[GRIT_MESSAGE_SIZE];
  write_model("<option timestep='0.002'/>\n"
              "<asset><hfield name='p' file='plateau.png' size='0.75 0.75 0.2 0.1'/></asset>\n"
              "<worldbody><geom type='hfield' hfield='p'/>\n"
              "<body pos='0.02 -0.03 0.35'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1'/></body>"
              "</worldbody>\n",
              path);
  grit_model *m;
  const grit_status s = grit_mjcf_load_file(path, &m, NULL, msg);
  remove_model(path);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d), *v = grit_data_qvel(d);
  double speed = 0;
  for (int i = 0; i < 6; ++i) speed = fmax(speed, fabs(v[i]));
  cr_log_info("box on the plateau: z = %.6f m (0.3 - %.2e), tilt %.2e, speed %.2e", q[2], 0.3 - q[2],
              fmax(fabs(q[4]), fabs(q[5])), speed);
  cr_assert(q[2] < 0.3 && q[2] > 0.299, "z = %.6f", q[2]);
  cr_assert(fabs(q[4]) < 1e-4 && fabs(q[5]) < 1e-4, "tilted: %g %g", q[4], q[5]);
  cr_assert(speed < 1e-3, "still moving: %g", speed);
  grit_data_free(d);
  grit_model_free(m);
}

/* Every damaged or missing file is an error naming the file and the <hfield> element's line (3, after
 * <mujoco> and <compiler>), never a crash (under the sanitizer pass of .ci/run, no invalid access). */
Test(hfield_png, damaged_files_are_errors_with_file_and_line) {
  const char *files[] = {"bad_truncated.png", "bad_crc.png",  "bad_header.png", "bad_inflate.png",
                         "bad_signature.png", "bad_size.bin", "missing.png"};
  for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
    grit_model *m = NULL;
    char msg[GRIT_MESSAGE_SIZE] = "";
    const grit_status s = load_field(files[i], &m, msg);
    cr_log_info("%s: %s", files[i], msg);
    cr_assert_neq(s, GRIT_OK, "%s loaded", files[i]);
    cr_assert_null(m);
    cr_assert(strstr(msg, files[i]) && strstr(msg, "m.xml:3"), "%s: %s", files[i], msg);
  }
}

/* A file with nrow/ncol as well is refused (MuJoCo: "specified from file and manually"). */
Test(hfield_png, file_and_grid_together_are_refused) {
  grit_model *m = NULL;
  char path[256], msg[GRIT_MESSAGE_SIZE];
  write_model("<asset><hfield name='h' file='hill.bin' nrow='7' ncol='9' size='1 1 0.1 0.1'/></asset>\n"
              "<worldbody/>\n",
              path);
  const grit_status s = grit_mjcf_load_file(path, &m, NULL, msg);
  remove_model(path);
  cr_assert_eq(s, GRIT_ERR_INVALID_MODEL, "%s", msg);
  cr_assert(strstr(msg, "m.xml:3"), "%s", msg);
}

/* A PNG field on a moving body (beyond MuJoCo 2.2.2, which allows static bodies only): a 10 kg tray on
 * a slide joint along x carries plateau.png (no mass of its own: the tray's box has it); a ball resting on
 * the plateau's top rides along as the tray slides at 0.2 m/s. After 0.5 s the ball is still on the top
 * (z = 0.25 + 0.05 above the tray's base, less the compliance) and has moved with the tray. */
Test(hfield_png, field_on_a_sliding_tray_carries_a_ball) {
  char path[256], msg[GRIT_MESSAGE_SIZE];
  write_model("<option timestep='0.002'/>\n"
              "<asset><hfield name='p' file='plateau.png' size='0.75 0.75 0.2 0.1'/></asset>\n"
              "<worldbody><body name='tray'><joint name='slide' type='slide' axis='1 0 0'/>\n"
              "<geom type='hfield' hfield='p'/><geom type='box' size='0.7 0.7 0.02' pos='0 0 -0.08' mass='10'/>\n"
              "</body><body pos='0.01 0.02 0.26'><freejoint/><geom size='0.05' mass='0.2'/></body>"
              "</worldbody>\n",
              path);
  grit_model *m;
  const grit_status s = grit_mjcf_load_file(path, &m, NULL, msg);
  remove_model(path);
  cr_assert_eq(s, GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nq(m), 8);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  for (int k = 0; k < 100; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* settle */
  double v[7] = {0.2, 0.2, 0, 0, 0, 0, 0};
  cr_assert_eq(grit_data_set_qvel(d, v, 7), GRIT_OK);
  const double x0 = grit_data_qpos(d)[0], b0 = grit_data_qpos(d)[1];
  for (int k = 0; k < 250; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d);
  cr_log_info("tray moved %.4f m, ball %.4f m, ball z %.6f", q[0] - x0, q[1] - b0, q[3]);
  cr_assert(q[0] - x0 > 0.09, "tray moved %g", q[0] - x0);
  cr_assert(fabs((q[1] - b0) - (q[0] - x0)) < 2e-3, "ball %g vs tray %g", q[1] - b0, q[0] - x0);
  cr_assert(q[3] > 0.2485 && q[3] < 0.25, "ball z %g", q[3]);
  grit_data_free(d);
  grit_model_free(m);
}

/* The bytes of a data file (malloc'ed) and their number. */
static unsigned char *slurp(const char *name, size_t *n) {
  char path[512];
  snprintf(path, sizeof path, "%s%s", DATA, name);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  unsigned char *b = malloc(1 << 16);
  *n = fread(b, 1, 1 << 16, f);
  fclose(f);
  return b;
}

/* One hostile input: either an error with a message and no output, or a grid of values in [0, 1]. */
static int parse_one(const unsigned char *b, size_t n, int png) {
  float *e = NULL;
  int nrow = -1, ncol = -1;
  char msg[GRIT_MESSAGE_SIZE] = "";
  const grit_status s = mjcf_hfield_parse("mutant", b, n, png, &e, &nrow, &ncol, msg);
  if (s != GRIT_OK) {
    cr_assert(msg[0] && !e && nrow == 0 && ncol == 0, "failure without message or with output");
    return 0;
  }
  cr_assert(e && nrow >= 1 && ncol >= 1);
  for (long i = 0; i < (long)nrow * ncol; ++i) cr_assert(e[i] >= 0.0f && e[i] <= 1.0f, "value %ld = %g", i, e[i]);
  free(e);
  return 1;
}

/* Fuzz-style, deterministic: every truncation of a colour PNG, a palette PNG and a binary file, and
 * 3000 mutations of each (1 to 4 bytes replaced at seeded places): never a crash, every result an error
 * with a message or a valid grid (the sanitizer pass of .ci/run checks the memory; tests/fuzz/fuzz_hfield.c
 * is the libFuzzer target). */
Test(hfield_png, hostile_inputs_never_crash) {
  const char *files[] = {"hill_rgba.png", "hill_palette4.png", "hill.bin"};
  unsigned long long rng = 88172645463325252ull;
  for (int f = 0; f < 3; ++f) {
    size_t n;
    unsigned char *good = slurp(files[f], &n), *b = malloc(n);
    const int png = f < 2;
    int ok = 0;
    for (size_t len = 0; len < n; ++len) ok += parse_one(good, len, png);
    cr_assert_eq(ok, 0, "%s: a truncated file was accepted", files[f]);
    int accepted = 0;
    for (int k = 0; k < 3000; ++k) {
      memcpy(b, good, n);
      const int m = 1 + (int)(k % 4);
      for (int j = 0; j < m; ++j) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        b[(rng >> 8) % n] = (unsigned char)(rng >> 40);
      }
      accepted += parse_one(b, n, png);
    }
    cr_log_info("%s: %zu truncations refused; %d of 3000 mutants decode (those still valid files)", files[f], n,
                accepted);
    free(good);
    free(b);
  }
}
