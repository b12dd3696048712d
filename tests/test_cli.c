/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c — the `grit` command-line tool, run as a separate process: the physics of
 * tests/test_physics_contact.c reproduced from model files through the command line and read back
 * from its CSV (resting penetration mg/k, rolling at 5/7 U0, a sliding box stopping after
 * v0^2/(2 mu g), a box carried by a conveyor belt), the CSV and JSON formats, the overrides, and the
 * exit status: 0 for good input, 1 for bad files and runtime errors, 2 for bad arguments, always with
 * a one-line message and never by a signal. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GRIT_CLI
#error "GRIT_CLI (the path of the grit executable) must be defined"
#endif
#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

extern char **environ;

static const double G = 9.81;

typedef struct run_result {
  int status; /* exit status */
  char out[1 << 14], err[1 << 14];
} run_result;

static void slurp(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "rb");
  size_t k = f ? fread(buf, 1, n - 1, f) : 0;
  buf[k] = '\0';
  if (f) fclose(f);
}

static char TMP[256];

/* Removes the files of this test process (Criterion runs each test in its own process). */
static void cleanup(void) {
  if (!TMP[0]) return;
  const char *names[] = {"stdout", "stderr", "rest.csv", "roll.csv", "box.csv", "belt.csv", "over.csv", "bad.xml",
                         "trunc.xml", "model.xml", "keep.csv", "short.stl", "mesh.xml", "iters.xml"};
  char p[512];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    snprintf(p, sizeof p, "%s/%s", TMP, names[i]);
    unlink(p);
  }
  rmdir(TMP);
}

static void make_tmp(void) {
  if (TMP[0]) return;
  snprintf(TMP, sizeof TMP, "/tmp/grit_cli_XXXXXX");
  cr_assert_not_null(mkdtemp(TMP));
  atexit(cleanup);
}

static void tmp_path(char *out, size_t n, const char *name) {
  make_tmp();
  snprintf(out, n, "%s/%s", TMP, name);
}

/* Runs grit with the given arguments (NULL-terminated), stdout and stderr to files. */
static void run(run_result *r, const char *const *args) {
  char out[512], err[512];
  tmp_path(out, sizeof out, "stdout");
  tmp_path(err, sizeof err, "stderr");
  const char *argv[64];
  int n = 0;
  argv[n++] = GRIT_CLI;
  for (int i = 0; args[i] && n < 63; ++i) argv[n++] = args[i];
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  cr_assert_eq(posix_spawn(&pid, GRIT_CLI, &fa, NULL, (char *const *)argv, environ), 0, "cannot run %s", GRIT_CLI);
  posix_spawn_file_actions_destroy(&fa);
  int ws;
  cr_assert_eq(waitpid(pid, &ws, 0), pid);
  cr_assert(WIFEXITED(ws), "grit %s ended by signal %d", args[0] ? args[0] : "", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  r->status = WEXITSTATUS(ws);
  slurp(out, r->out, sizeof r->out);
  slurp(err, r->err, sizeof r->err);
}

static void model_path(char *out, size_t n, const char *file) {
  snprintf(out, n, "%s/examples/models/%s", GRIT_SOURCE_DIR, file);
}

/* The number after "key": in the last line of stdout (the JSON object). */
static double json_number(const run_result *r, const char *key) {
  const char *last = r->out, *p;
  size_t len = strlen(r->out);
  if (len > 1)
    for (p = r->out + len - 2; p > r->out; --p)
      if (*p == '\n') {
        last = p + 1;
        break;
      }
  cr_assert(last[0] == '{', "the last line of stdout is not a JSON object: %s", last);
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  p = strstr(last, pat);
  cr_assert_not_null(p, "JSON lacks %s: %s", key, last);
  return strtod(p + strlen(pat), NULL);
}

/* A CSV written by grit sim: rows x cols numbers after the header. */
typedef struct csv {
  int rows, cols;
  char header[4096];
  double *v;
} csv;

static void read_csv(const char *path, csv *c) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "no CSV at %s", path);
  cr_assert_not_null(fgets(c->header, sizeof c->header, f));
  c->cols = 1;
  for (const char *p = c->header; *p; ++p) c->cols += *p == ',';
  size_t cap = 1024, n = 0;
  c->v = malloc(cap * sizeof *c->v);
  double x;
  int ch;
  while (fscanf(f, "%lf", &x) == 1) {
    if (n == cap) c->v = realloc(c->v, (cap *= 2) * sizeof *c->v);
    c->v[n++] = x;
    ch = fgetc(f);
    if (ch != ',' && ch != '\n' && ch != EOF) cr_assert_fail("bad CSV separator %c", ch);
  }
  fclose(f);
  cr_assert_eq(n % (size_t)c->cols, 0, "ragged CSV");
  c->rows = (int)(n / (size_t)c->cols);
}

static double at(const csv *c, int row, int col) { return c->v[row * c->cols + col]; }

/* ------------------------------------------------------------------------------- physics */

/* A sphere resting on the ground sinks by mg/k (0.49 um): the fixed point of the discrete step.
 * 1e-6 relative, as in test_physics_contact.c. */
Test(cli, falling_sphere_rests_at_mg_over_k) {
  char model[1024], out[512];
  model_path(model, sizeof model, "falling_sphere.xml");
  tmp_path(out, sizeof out, "rest.csv");
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"sim", model, "--key", "rest", "--steps", "3000", "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_eq(json_number(r, "steps"), 3000);
  cr_assert_eq(json_number(r, "nq"), 7);
  cr_assert_eq(json_number(r, "failed_steps"), 0);
  csv c;
  read_csv(out, &c);
  cr_assert_eq(c.rows, 3001);
  cr_assert_eq(c.cols, 1 + 7 + 6);
  cr_assert_str_eq(c.header, "t,q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n");
  const double pen = 0.025 - at(&c, c.rows - 1, 3), expect = 0.5 * G / 1e7;
  cr_assert(fabs(pen - expect) <= 1e-6 * expect, "penetration %.9g, mg/k = %.9g", pen, expect);
  cr_assert(fabs(at(&c, c.rows - 1, 0) - 3.0) <= 1e-12, "final time %.17g", at(&c, c.rows - 1, 0));
  free(c.v);
  free(r);
}

/* Launched sliding at U0 = 2 m/s, the sphere rolls at 5/7 U0 (to 1 mm/s, as in the physics test). */
Test(cli, sliding_sphere_rolls_at_five_sevenths) {
  char model[1024];
  model_path(model, sizeof model, "falling_sphere.xml");
  for (int k = 0; k < 3; ++k) {
    const char *contact = k == 0 ? "lagged" : k == 1 ? "similar" : "sap";
    char out[512];
    tmp_path(out, sizeof out, "roll.csv");
    run_result *r = malloc(sizeof *r);
    run(r, (const char *[]){"sim", model, "--key", "launch", "--steps", "300", "--contact", contact, "--csv", out, NULL});
    cr_assert_eq(r->status, 0, "%s", r->err);
    csv c;
    read_csv(out, &c);
    cr_assert_eq(at(&c, 0, 8), 2.0); /* the key's qvel, the first row */
    const double v = at(&c, c.rows - 1, 8);
    cr_assert(fabs(v - 5.0 / 7.0 * 2.0) <= 1e-3, "%s: final speed %.6f, 5/7 U0 = %.6f", contact, v, 10.0 / 7.0);
    free(c.v);
    free(r);
  }
}

/* A box launched at 1 m/s stops after v0^2 / (2 mu g) (1 %, as in the physics test); with the
 * friction overridden to 0 it keeps sliding. */
Test(cli, sliding_box_stops_at_v0_squared_over_2_mu_g) {
  char model[1024], out[512];
  model_path(model, sizeof model, "sliding_box.xml");
  tmp_path(out, sizeof out, "box.csv");
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"sim", model, "--key", "launch", "--steps", "400", "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  csv c;
  read_csv(out, &c);
  const double dist = at(&c, c.rows - 1, 1) - at(&c, 0, 1), expect = 1.0 / (2 * 0.5 * G);
  cr_log_info("sliding box through the CLI: stopped after %.5f m (%+.3f %%)", dist, 100 * (dist - expect) / expect);
  cr_assert(fabs(dist - expect) <= 0.01 * expect, "stopped after %.5f m, v0^2/(2 mu g) = %.5f m", dist, expect);
  cr_assert(fabs(at(&c, c.rows - 1, 8)) < 1e-3, "still moving at %g m/s", at(&c, c.rows - 1, 8));
  free(c.v);
  run(r, (const char *[]){"sim", model, "--key", "launch", "--steps", "400", "--friction", "0", "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  read_csv(out, &c);
  cr_assert(fabs(at(&c, c.rows - 1, 8) - 1.0) <= 1e-6, "frictionless box at %.9g m/s", at(&c, c.rows - 1, 8));
  free(c.v);
  /* the same stop with each factorization of the Newton Hessian (the solutions agree to the solver's
   * tolerance, 1e-5 relative, far below the 1 % asserted) */
  static const char *const FACTORS[3] = {"block", "cholmod", "dense"};
  for (int k = 0; k < 3; ++k) {
    run(r, (const char *[]){"sim", model, "--key", "launch", "--steps", "400", "--factor", FACTORS[k], "--csv", out, NULL});
    cr_assert_eq(r->status, 0, "--factor %s: %s", FACTORS[k], r->err);
    read_csv(out, &c);
    const double dk = at(&c, c.rows - 1, 1) - at(&c, 0, 1);
    cr_assert(fabs(dk - dist) <= 1e-6 * expect, "--factor %s: stopped after %.9f m, default %.9f m", FACTORS[k], dk, dist);
    free(c.v);
  }
  run(r, (const char *[]){"sim", model, "--factor", "lu", NULL});
  cr_assert_eq(r->status, 2, "--factor lu: status %d", r->status);
  cr_assert(strstr(r->err, "--factor") != NULL, "stderr: %s", r->err);
  free(r);
}

/* The belt runs at 0.5 m/s under a box at rest: friction accelerates the box at mu g until it moves
 * with the belt, after v/(mu g) = 72.8 ms, having slipped v^2/(2 mu g) = 18.2 mm behind it. With
 * dt = 1 ms the slip phase has 73 steps: 2 % on the slip distance. */
Test(cli, conveyor_belt_carries_the_box) {
  char model[1024], out[512];
  model_path(model, sizeof model, "conveyor.xml");
  tmp_path(out, sizeof out, "belt.csv");
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"sim", model, "--key", "moving", "--dt", "0.001", "--steps", "300", "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  csv c;
  read_csv(out, &c);
  cr_assert_eq(c.cols, 1 + 8 + 7);
  const double mu = 0.7, v = 0.5;
  /* during the slip the box speeds up by mu g dt per step */
  const double a = (at(&c, 41, 10) - at(&c, 21, 10)) / 0.02;
  cr_assert(fabs(a - mu * G) <= 0.01 * mu * G, "box acceleration %.5f, mu g = %.5f", a, mu * G);
  const int last = c.rows - 1;
  cr_assert(fabs(at(&c, last, 10) - at(&c, last, 9)) <= 1e-3, "box %.6f m/s, belt %.6f m/s", at(&c, last, 10),
            at(&c, last, 9));
  const double slip = (at(&c, last, 1) - at(&c, 0, 1)) - (at(&c, last, 2) - at(&c, 0, 2)), expect = v * v / (2 * mu * G);
  cr_log_info("conveyor through the CLI: slipped %.5f m (%+.2f %%)", slip, 100 * (slip - expect) / expect);
  cr_assert(fabs(slip - expect) <= 0.02 * expect, "slipped %.5f m, v^2/(2 mu g) = %.5f m", slip, expect);
  free(c.v);
  free(r);
}

/* -------------------------------------------------------------------------- overrides, bench */

Test(cli, overrides_and_initial_state) {
  char model[1024], out[512];
  model_path(model, sizeof model, "falling_sphere.xml");
  tmp_path(out, sizeof out, "over.csv");
  run_result *r = malloc(sizeof *r);
  /* a softer contact sinks deeper: mg/k with the overridden k */
  run(r, (const char *[]){"sim", model, "--qpos", "0 0 0.025 1 0 0 0", "--stiffness", "1e5", "--dissipation", "10",
                          "--dt", "0.002", "--steps", "1500", "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  csv c;
  read_csv(out, &c);
  cr_assert_eq(at(&c, 1, 0), 0.002);
  const double pen = 0.025 - at(&c, c.rows - 1, 3), expect = 0.5 * G / 1e5;
  cr_assert(fabs(pen - expect) <= 1e-4 * expect, "penetration %.9g, mg/k = %.9g", pen, expect);
  free(c.v);
  /* --qvel and --ctrl, and the values written exactly (%.17g round trips) */
  model_path(model, sizeof model, "conveyor.xml");
  run(r, (const char *[]){"sim", model, "--qvel", "0.1 0 0 0 0 0 0.30000000000000004", "--ctrl", "1e6", "--steps", "0",
                          "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  read_csv(out, &c);
  cr_assert_eq(c.rows, 1);
  cr_assert_eq(at(&c, 0, 9), 0.1);
  cr_assert_eq(at(&c, 0, 15), 0.30000000000000004);
  free(c.v);
  run(r, (const char *[]){"bench", model, "--steps", "50", "--ctrl", "1e6", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert(json_number(r, "step_us") > 0);
  cr_assert_eq(json_number(r, "steps"), 50);
  cr_assert(json_number(r, "mean_newton_iters") >= 1);
  free(r);
}

/* ------------------------------------------------------------------------------ exit codes */

static void expect_status(int status, const char *const *args, const char *part) {
  run_result *r = malloc(sizeof *r);
  run(r, args);
  cr_assert_eq(r->status, status, "grit %s: status %d, expected %d; stderr: %s", args[0] ? args[0] : "", r->status,
               status, r->err);
  if (status != 0) {
    const char *nl = strchr(r->err, '\n');
    cr_assert(nl && nl[1] == '\0', "not one line on stderr: %s", r->err);
    cr_assert(strstr(r->err, part) != NULL, "stderr '%s' lacks '%s'", r->err, part);
  }
  free(r);
}

Test(cli, exit_status) {
  char good[1024], bad[512], trunc[512];
  model_path(good, sizeof good, "sliding_box.xml");
  tmp_path(bad, sizeof bad, "bad.xml");
  tmp_path(trunc, sizeof trunc, "trunc.xml");
  FILE *f = fopen(bad, "w");
  fputs("<mujoco><worldbody><geom type='box' size='1'/></worldbody></mujoco>", f);
  fclose(f);
  f = fopen(trunc, "w");
  fputs("<mujoco><worldbody><body>", f);
  fclose(f);
  expect_status(0, (const char *[]){"sim", good, "--steps", "10", NULL}, "");
  expect_status(0, (const char *[]){"--help", NULL}, "");
  expect_status(1, (const char *[]){"sim", "/nonexistent.xml", NULL}, "cannot open");
  expect_status(1, (const char *[]){"sim", bad, NULL}, "bad.xml:1: <geom> sizes must be positive");
  expect_status(1, (const char *[]){"sim", trunc, NULL}, "XML error");
  expect_status(1, (const char *[]){"sim", good, "--csv", "/nonexistent/dir/x.csv", NULL}, "cannot write");
  expect_status(2, (const char *[]){NULL}, "no command");
  expect_status(2, (const char *[]){"simulate", good, NULL}, "unknown command");
  expect_status(2, (const char *[]){"sim", NULL}, "needs a model file");
  expect_status(2, (const char *[]){"sim", good, "--stpes", "10", NULL}, "unknown option '--stpes'");
  expect_status(2, (const char *[]){"sim", good, "--steps", "-1", NULL}, "--steps");
  expect_status(2, (const char *[]){"sim", good, "--steps", "1e99", NULL}, "--steps");
  expect_status(2, (const char *[]){"sim", good, "--steps", NULL}, "needs a value");
  expect_status(2, (const char *[]){"sim", good, "--dt", "nan", NULL}, "--dt");
  expect_status(2, (const char *[]){"sim", good, "--friction", "-0.1", NULL}, "--friction");
  expect_status(2, (const char *[]){"sim", good, "--stiffness", "0", NULL}, "--stiffness");
  expect_status(2, (const char *[]){"sim", good, "--contact", "magic", NULL}, "--contact");
  expect_status(2, (const char *[]){"sim", good, "--key", "nope", NULL}, "no keyframe 'nope'");
  expect_status(2, (const char *[]){"sim", good, "--qpos", "1 2 3", NULL}, "--qpos needs 7");
  expect_status(2, (const char *[]){"sim", good, "--qvel", "1 2 3 4 5 x", NULL}, "--qvel");
  expect_status(2, (const char *[]){"sim", good, "--ctrl", "1", NULL}, "--ctrl needs 0");
  expect_status(2, (const char *[]){"sim", good, good, NULL}, "unexpected argument");
  expect_status(2, (const char *[]){"bench", good, "--csv", "x.csv", NULL}, "unknown option '--csv'");
  expect_status(0, (const char *[]){"deriv", good, NULL}, "");
  expect_status(2, (const char *[]){"deriv", good, "--steps", "3", NULL}, "unknown option");
  expect_status(2, (const char *[]){"deriv", NULL}, "needs a model file");
}

/* --help on every command: usage on stdout, exit 0 (issue 26). */
Test(cli, help_on_every_command) {
  const char *const commands[] = {"sim", "bench", "deriv", "replay", "fit"};
  run_result *r = malloc(sizeof *r);
  for (int i = 0; i < 5; ++i) {
    run(r, (const char *[]){commands[i], "--help", NULL});
    char want[64];
    snprintf(want, sizeof want, "usage: grit %s MODEL.xml", commands[i]);
    cr_assert_eq(r->status, 0, "grit %s --help: status %d; stderr: %s", commands[i], r->status, r->err);
    cr_assert(!strncmp(r->out, want, strlen(want)), "grit %s --help printed '%s'", commands[i], r->out);
    cr_assert_str_empty(r->err);
  }
  free(r);
}

/* Output files (docs/errors.md): an output naming an input is refused (also by another spelling of the
 * same file); a failed run leaves an existing --csv file as it was; a good run replaces it and leaves no
 * temporary file behind. */
Test(cli, output_files_are_safe) {
  char good[1024], model[512], alias[512], keep[512];
  model_path(good, sizeof good, "sliding_box.xml");
  tmp_path(model, sizeof model, "model.xml");
  tmp_path(keep, sizeof keep, "keep.csv");
  snprintf(alias, sizeof alias, "%s/./model.xml", TMP);
  char text[1 << 14], again[1 << 14];
  slurp(good, text, sizeof text);
  FILE *f = fopen(model, "w");
  fputs(text, f);
  fclose(f);
  expect_status(2, (const char *[]){"sim", model, "--steps", "2", "--csv", alias, NULL}, "refusing to overwrite");
  expect_status(2, (const char *[]){"sim", model, "--steps", "2", "--html", model, NULL}, "refusing to overwrite");
  expect_status(2, (const char *[]){"replay", model, "--csv", keep, "-o", alias, NULL}, "refusing to overwrite");
  slurp(model, again, sizeof again);
  cr_assert_str_eq(again, text, "the model file was changed");

  f = fopen(keep, "w");
  fputs("precious\n", f);
  fclose(f);
  /* the steps succeed, the page cannot be written: a failed run */
  expect_status(1, (const char *[]){"sim", model, "--steps", "5", "--csv", keep, "--html", "/nonexistent/dir/x.html", NULL},
                "cannot write");
  slurp(keep, again, sizeof again);
  cr_assert_str_eq(again, "precious\n", "a failed run changed the existing --csv file");
  expect_status(0, (const char *[]){"sim", model, "--steps", "5", "--csv", keep, NULL}, "");
  slurp(keep, again, sizeof again);
  cr_assert(!strncmp(again, "t,q0", 4), "a good run did not write the --csv file: '%.40s'", again);
  DIR *dir = opendir(TMP);
  cr_assert_not_null(dir);
  for (struct dirent *e; (e = readdir(dir));) cr_assert(!strstr(e->d_name, ".tmp"), "a temporary file is left: %s", e->d_name);
  closedir(dir);
}

/* Hostile inputs of issue 26 get honest messages: a binary STL cut short is reported as truncated (not
 * as a mesh of 0 vertices), and grit_max_newton_iters = 0 as needing a positive integer. */
Test(cli, truncated_stl_and_zero_newton_iterations) {
  char stl[512], mesh[512], iters[512];
  tmp_path(stl, sizeof stl, "short.stl");
  tmp_path(mesh, sizeof mesh, "mesh.xml");
  tmp_path(iters, sizeof iters, "iters.xml");
  unsigned char bytes[184] = {0};
  bytes[80] = 12; /* the header counts 12 triangles (684 bytes); the file stops after two */
  FILE *f = fopen(stl, "wb");
  fwrite(bytes, 1, sizeof bytes, f);
  fclose(f);
  f = fopen(mesh, "w");
  fputs("<mujoco><asset><mesh name='a' file='short.stl'/></asset><worldbody><body><freejoint/>"
        "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/><geom type='mesh' mesh='a'/></body></worldbody></mujoco>", f);
  fclose(f);
  expect_status(1, (const char *[]){"sim", mesh, "--steps", "1", NULL}, "binary STL truncated");
  f = fopen(iters, "w");
  fputs("<mujoco><custom><numeric name='grit_max_newton_iters' data='0'/></custom><worldbody><body><freejoint/>"
        "<geom size='0.1'/></body></worldbody></mujoco>", f);
  fclose(f);
  expect_status(1, (const char *[]){"sim", iters, "--steps", "1", NULL}, "must be a positive integer");
}

/* grit deriv: the step's Jacobians as JSON, of the documented sizes, and its --check agreeing with
 * central differences of the whole step (the arm file at its "reach" keyframe, deep self-contacts on
 * every kind of narrow-phase path): relative Frobenius error under 1e-5, as the library's tests. */
Test(cli, deriv_prints_jacobians_and_checks_them) {
  char model[1024];
  snprintf(model, sizeof model, "%s/examples/models/arm7.xml", GRIT_SOURCE_DIR);
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"deriv", model, "--key", "reach", "--json", "--check", "--quiet", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_eq(json_number(r, "nv"), 7);
  cr_assert_eq(json_number(r, "nu"), 7);
  cr_assert(strstr(r->out, "\"A\":[[") && strstr(r->out, "\"B\":[["), "no matrices in %s", r->out);
  cr_assert(json_number(r, "A_rel_err") <= 1e-5, "A_rel_err %g", json_number(r, "A_rel_err"));
  cr_assert(json_number(r, "B_rel_err") <= 1e-5, "B_rel_err %g", json_number(r, "B_rel_err"));
  run(r, (const char *[]){"bench", model, "--steps", "20", "--deriv-every", "5", "--quiet", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert(json_number(r, "deriv_us") > 0 && json_number(r, "deriv_samples") == 4);
  free(r);
}

/* ------------------------------------------------------------------ malformed files and arguments */

/* Writes falling_sphere.xml with the first `from` replaced by `to` (or its first `truncate` bytes when
 * from is NULL) to TMP/name; the path goes to out. */
static void variant(char *out, size_t n, const char *name, const char *from, const char *to, size_t truncate) {
  char src[1024];
  model_path(src, sizeof src, "falling_sphere.xml");
  char *text = calloc(1 << 16, 1);
  slurp(src, text, 1 << 16);
  tmp_path(out, n, name);
  FILE *f = fopen(out, "wb");
  cr_assert_not_null(f);
  if (!from) {
    fwrite(text, 1, truncate < strlen(text) ? truncate : strlen(text), f);
  } else {
    char *at = strstr(text, from);
    cr_assert_not_null(at, "falling_sphere.xml lacks '%s'", from);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
  }
  fclose(f);
  free(text);
}

/* Every malformed model file exits with status 1 and one line naming the problem (with the file's line
 * where there is one), every bad argument with status 2; never a signal (run() asserts WIFEXITED). */
Test(cli, malformed_files_and_arguments_exit_1_or_2_with_a_message) {
  static const struct {
    const char *name, *from, *to, *part;
  } files[] = {
      {"m_nanmass.xml", "mass=\"0.5\"", "mass=\"nan\"", "m_nanmass.xml:18:"},
      {"m_infmu.xml", "friction=\"0.5\"", "friction=\"inf\"", "m_infmu.xml:15:"},
      {"m_hugesize.xml", "size=\"0.025\"", "size=\"1e400\"", "m_hugesize.xml:18:"},
      {"m_overflow.xml", "size=\"0.025\"", "size=\"1e300\"", "m_overflow.xml:18:"},
      {"m_negsize.xml", "size=\"0.025\"", "size=\"-0.025\"", "m_negsize.xml:18:"},
      {"m_negmass.xml", "mass=\"0.5\"", "mass=\"-0.5\"", "m_negmass.xml:18:"},
      {"m_negdt.xml", "timestep=\"0.001\"", "timestep=\"-0.001\"", "m_negdt.xml:7:"},
      {"m_nandt.xml", "timestep=\"0.001\"", "timestep=\"nan\"", "m_nandt.xml:7:"},
      {"m_negmu.xml", "friction=\"0.5\"", "friction=\"-1\"", "m_negmu.xml:15:"},
      {"m_badnum.xml", "size=\"0.025\"", "size=\"0.025abc\"", "m_badnum.xml:18:"},
      {"m_nank.xml", "data=\"1e7\"", "data=\"nan\"", "m_nank.xml:9:"},
      {"m_badtag.xml", "<worldbody>", "<worldbody><body><unknown", "XML error"},
      /* accepted by the loader, then numerical trouble in a step: a status, not NaN (with k = 1e300,
         the step in which the falling sphere reaches the ground, the 100th) */
      {"m_hugek.xml", "data=\"1e7\"", "data=\"1e300\"", "step 100 failed"},
      {"m_hugeg.xml", "gravity=\"0 0 -9.81\"", "gravity=\"0 0 -1e308\"", "step 1 failed"},
  };
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    variant(path, sizeof path, files[i].name, files[i].from, files[i].to, 0);
    expect_status(1, (const char *[]){"sim", path, "--quiet", "--steps", "300", NULL}, files[i].part);
    unlink(path);
  }
  /* truncated at several places, empty, binary junk, NUL bytes, 10000 nested bodies */
  for (size_t cut = 0; cut < 1200; cut += 150) {
    variant(path, sizeof path, "m_trunc.xml", NULL, NULL, cut);
    expect_status(1, (const char *[]){"sim", path, "--quiet", NULL}, "m_trunc.xml");
  }
  unlink(path);
  tmp_path(path, sizeof path, "m_junk.xml");
  FILE *f = fopen(path, "wb");
  unsigned long long x = 88172645463325252ULL;
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    fputc((int)(x & 0xff), f);
  }
  fclose(f);
  expect_status(1, (const char *[]){"sim", path, NULL}, "m_junk.xml");
  f = fopen(path, "wb");
  fwrite("<mujoco>\0\0\0</mujoco>", 1, 20, f);
  fclose(f);
  expect_status(1, (const char *[]){"sim", path, NULL}, "m_junk.xml");
  f = fopen(path, "wb");
  fputs("<mujoco><worldbody>", f);
  for (int i = 0; i < 10000; ++i) fputs("<body>", f);
  fclose(f);
  expect_status(1, (const char *[]){"sim", path, NULL}, "m_junk.xml");
  f = fopen(path, "wb");
  fclose(f);
  expect_status(1, (const char *[]){"sim", path, NULL}, "m_junk.xml");
  unlink(path);
  /* not a model file at all */
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/examples/models", GRIT_SOURCE_DIR);
  expect_status(1, (const char *[]){"sim", dir, NULL}, "models");
  expect_status(1, (const char *[]){"deriv", "/nonexistent/model.xml", NULL}, "cannot open");
  expect_status(1, (const char *[]){"bench", "/dev/null", NULL}, "/dev/null");

  /* bad arguments on a good file */
  char good[1024];
  model_path(good, sizeof good, "falling_sphere.xml");
  static const char *const bad_args[][4] = {
      {"--steps", "abc"},         {"--steps", "1.5"},      {"--steps", "-3"},        {"--steps", ""},
      {"--dt", "0"},              {"--dt", "-1e-3"},       {"--dt", "inf"},          {"--dt", "1e400"},
      {"--dt", "0.001x"},         {"--friction", "nan"},   {"--stiffness", "-1"},    {"--dissipation", "x"},
      {"--qpos", "nan 0 0 1 0 0 0"}, {"--qvel", "1 2 3 4 5 6 7"}, {"--qvel", "1e999 0 0 0 0 0"},
      {"--ctrl", "1"},            {"--contact", "LAGGED"}, {"--key", "nope"},         {"--bogus", "1"},
      {"-", NULL},                {"--", NULL},            {"--csv", NULL},           {"--deriv-every", "2"},
  };
  for (size_t i = 0; i < sizeof bad_args / sizeof bad_args[0]; ++i)
    expect_status(2, (const char *[]){"sim", good, bad_args[i][0], bad_args[i][1], NULL}, "usage error");
  expect_status(2, (const char *[]){"bench", good, "--deriv-every", "0", NULL}, "--deriv-every");
  expect_status(2, (const char *[]){"bench", good, "--deriv-every", "many", NULL}, "--deriv-every");
  expect_status(2, (const char *[]){"", NULL}, "unknown command");
  expect_status(2, (const char *[]){"sim", "--steps", "3", NULL}, "needs a model file");
  /* well-formed numbers the model rejects: status 1 with the setter's reason */
  expect_status(1, (const char *[]){"sim", good, "--qpos", "0 0 1 0 0 0 0", NULL}, "zero norm");
}

/* grit deriv --check on an actuated file (tests/mjcf/actuators.xml: servos, an affine general actuator,
 * a filter and an integrator): the state is (q, v, act), nx = 2 nv + na, and the Jacobians agree with
 * central differences (measured 7e-11 and 2e-9). */
Test(cli, deriv_checks_actuated_models) {
  char model[1024];
  snprintf(model, sizeof model, "%s/tests/mjcf/actuators.xml", GRIT_SOURCE_DIR);
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"deriv", model, "--qpos", "0.3 -0.2 0.05 0.4", "--qvel", "0.5 -0.3 0.2 -0.4", "--ctrl",
                          "0.5 0.4 -0.3 0.3 0.6 0.2", "--check", "--quiet", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_eq(json_number(r, "na"), 2);
  cr_assert(json_number(r, "A_rel_err") <= 1e-5, "A_rel_err %g", json_number(r, "A_rel_err"));
  cr_assert(json_number(r, "B_rel_err") <= 1e-5, "B_rel_err %g", json_number(r, "B_rel_err"));
  free(r);
}

/* --hydroelastic E (docs/hydroelastic.md): the sphere sinks into the plane until its patches carry its
 * weight (the pressure field's penetration, not mg/k); derivatives through patches agree with grit
 * deriv --check's central differences (1e-5); a modulus that is not positive is a usage error (exit 2). */
Test(cli, hydroelastic) {
  char model[1024], out[512];
  model_path(model, sizeof model, "falling_sphere.xml");
  tmp_path(out, sizeof out, "hydro.csv");
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"sim", model, "--qpos", "0 0 0.025 1 0 0 0", "--hydroelastic", "1e7", "--steps", "1000",
                          "--csv", out, NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  csv c;
  read_csv(out, &c);
  const double pen = 0.025 - at(&c, c.rows - 1, 3);
  cr_assert(pen > 1e-6 && pen < 1e-3, "penetration %g", pen); /* 1e7 Pa under 4.9 N: about 0.1 mm */
  free(c.v);
  run(r, (const char *[]){"deriv", model, "--qpos", "0 0 0.0249 1 0 0 0", "--hydroelastic", "1e7", "--check", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert(json_number(r, "A_rel_err") <= 1e-5, "A_rel_err %g", json_number(r, "A_rel_err"));
  run(r, (const char *[]){"sim", model, "--hydroelastic", "0", NULL});
  cr_assert_eq(r->status, 2);
  free(r);
}

/* grit deriv --quasistatic (docs/quasistatic.md): seed 002's gripper squeezing a sphere that rests on
 * the ground; --check with --fd-step 1e-8 (the step is linear over a narrow range only: stiff contact
 * against soft servos) agrees with the Jacobians (measured 2.6e-9 and 3.9e-10; 2.6e-5 at the default
 * 1e-6, falling as the square of the FD step), and A's velocity columns are zero. */
Test(cli, deriv_quasistatic_with_fd_step) {
  char model[512];
  tmp_path(model, sizeof model, "squeeze.xml");
  FILE *f = fopen(model, "w");
  cr_assert_not_null(f);
  fputs("<mujoco><option timestep='0.01'/><worldbody><geom type='plane' size='1 1 0.1'/>"
        "<body pos='0 0 0.1'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 0 1'/>"
        "<geom type='sphere' size='0.1' mass='1'/></body>"
        "<body pos='-0.125 0 0.1'><joint name='lx' type='slide' axis='1 0 0'/>"
        "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body>"
        "<body pos='0.125 0 0.1'><joint name='rx' type='slide' axis='1 0 0'/>"
        "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body></worldbody>"
        "<actuator><position joint='lx' kp='1000'/><position joint='rx' kp='1000'/></actuator></mujoco>",
        f);
  fclose(f);
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"deriv", model, "--quasistatic", "--qpos", "0 -1e-5 0.00501 -0.00501", "--ctrl",
                          "0.015 -0.015", "--check", "--fd-step", "1e-8", "--quiet", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert_eq(json_number(r, "fd_step"), 1e-8);
  cr_assert(json_number(r, "A_rel_err") <= 1e-5, "A_rel_err %g", json_number(r, "A_rel_err"));
  cr_assert(json_number(r, "B_rel_err") <= 1e-5, "B_rel_err %g", json_number(r, "B_rel_err"));
  const char *row = strstr(r->out, "\"A\":[[");
  cr_assert_not_null(row);
  row += 5; /* the first row's [ */
  for (int i = 0; i < 8; ++i, row = strchr(row + 1, '[')) { /* 4 position columns, then 4 zero velocity columns */
    double x[8];
    const int got = sscanf(row, "[%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf]", x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7);
    cr_assert_eq(got, 8);
    cr_assert(x[4] == 0 && x[5] == 0 && x[6] == 0 && x[7] == 0, "row %d: velocity columns not zero", i);
  }
  expect_status(2, (const char *[]){"deriv", model, "--fd-step", "0", NULL}, "--fd-step");
  free(r);
}

/* bench --blocks times A, B in block-sparse form (issue 31): the clutter's 40 free objects are 40 blocks
 * whose values take 40 x 12 x (12 + 0) doubles against the dense (2 nv)^2; without --deriv-every it is a
 * usage error. */
Test(cli, bench_blocks) {
  char clutter[1024];
  model_path(clutter, sizeof clutter, "clutter.xml");
  run_result *r = malloc(sizeof *r);
  run(r, (const char *[]){"bench", clutter, "--steps", "20", "--deriv-every", "10", "--blocks", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  const double nv = json_number(r, "nv");
  cr_assert(strstr(r->out, "\"deriv_form\":\"blocks\""), "%s", r->out);
  cr_assert_eq(json_number(r, "deriv_samples"), 2);
  cr_assert_eq(json_number(r, "deriv_blocks"), nv / 6, "one block per free object");
  cr_assert_eq(json_number(r, "deriv_bytes"), 8 * (nv / 6) * 12 * 12);
  run(r, (const char *[]){"bench", clutter, "--steps", "20", "--deriv-every", "10", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert(strstr(r->out, "\"deriv_form\":\"dense\""), "%s", r->out);
  cr_assert_eq(json_number(r, "deriv_bytes"), 8 * (2 * nv) * (2 * nv));
  free(r);
  expect_status(2, (const char *[]){"bench", clutter, "--blocks", NULL}, "needs --deriv-every");
  expect_status(2, (const char *[]){"sim", clutter, "--blocks", NULL}, "unknown option '--blocks'");
  char act[1024]; /* activations: in the blocks of their actuators' islands (include/grit/derivatives.h) */
  snprintf(act, sizeof act, "%s/tests/mjcf/actuators.xml", GRIT_SOURCE_DIR);
  r = malloc(sizeof *r);
  run(r, (const char *[]){"bench", act, "--steps", "5", "--deriv-every", "1", "--blocks", NULL});
  cr_assert_eq(r->status, 0, "%s", r->err);
  cr_assert(strstr(r->out, "\"deriv_form\":\"blocks\""), "%s", r->out);
  cr_assert_eq(json_number(r, "deriv_samples"), 5);
  free(r);
}
