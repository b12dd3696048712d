/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay.c — the replay page (grit/replay.h, src/replay*.c, tools/grit_replay.c, docs/viewer.md).
 *
 * Structure: the page's scene JSON parses (a strict parser below), has one time, one pose list and one
 * contact list per frame, poses that are the model's forward kinematics, forces that are the step's
 * impulses over dt (a resting sphere: m g up), convex hulls with outward faces, escaped text; bad input is
 * rejected with a status and a message; `grit replay` and `grit sim --html` write pages.
 *
 * Browser: the arm_push_ball example's page opened in headless Chromium (software WebGL) at two times given
 * in the URL hash. The screenshot (PNG, decoded here with zlib) must show the ball's orange where the page
 * says the ball is, the arm's blue at the arm's geometries, the green target marker and the background
 * colour above the scene; the two times must differ (the ball's orange moves right, as the plan pushes it).
 * A third run without "paused" checks that the animation advances. The page's own report (#grit-probe,
 * read with --dump-dom) gives where each geometry is on the screen; the pixels are checked independently of
 * it. Skipped, with a message, when chromium is not installed or the example is not built. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if GRIT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "grit/grit.h"
#include "grit/replay.h"

extern char **environ;

/* ------------------------------------------------------------------------------------------ files */

static char TMP[256];

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_replay: could not remove %s\n", dir);
}

static void cleanup(void) {
  if (TMP[0]) rm_tree(TMP);
}

static const char *tmp_path(const char *name) {
  static char p[512];
  if (!TMP[0]) {
    snprintf(TMP, sizeof TMP, "/tmp/grit_replay_XXXXXX");
    cr_assert_not_null(mkdtemp(TMP));
    atexit(cleanup);
  }
  snprintf(p, sizeof p, "%s/%s", TMP, name);
  return p;
}

static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  size_t k = b ? fread(b, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!b) return NULL;
  b[k] = '\0';
  if (size) *size = k;
  return b;
}

/* --------------------------------------------------------------------------- a strict JSON parser */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;
typedef struct jv {
  jtype type;
  double num;
  char *str;
  int n;
  struct jv *items;
  char **keys;
} jv;

static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') ++p;
  return p;
}

static void jfree(jv *v) {
  for (int i = 0; i < v->n; ++i) {
    jfree(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
}

static int jstring(const char **pp, char **out) {
  const char *p = *pp;
  if (*p != '"') return 0;
  ++p;
  size_t cap = 16, n = 0;
  char *s = malloc(cap);
  while (*p != '"') {
    if ((unsigned char)*p < 0x20) return free(s), 0;
    char c = *p++;
    if (c == '\\') {
      c = *p++;
      if (c == 'u') {
        for (int i = 0; i < 4; ++i)
          if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return free(s), 0;
        p += 4;
        c = '?';
      } else if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (!strchr("\"\\/bfr", c) || !c) return free(s), 0;
    }
    if (n + 2 > cap) s = realloc(s, cap *= 2);
    s[n++] = c;
  }
  s[n] = '\0';
  *pp = p + 1;
  *out = s;
  return 1;
}

static int jvalue(const char **pp, jv *v, int depth) {
  const char *p = ws(*pp);
  memset(v, 0, sizeof *v);
  if (depth > 64) return 0;
  if (*p == '{' || *p == '[') {
    const int obj = *p == '{';
    v->type = obj ? J_OBJ : J_ARR;
    p = ws(p + 1);
    int cap = 0;
    if (*p == (obj ? '}' : ']')) {
      *pp = p + 1;
      return 1;
    }
    for (;;) {
      if (v->n == cap) {
        cap = cap ? 2 * cap : 8;
        v->items = realloc(v->items, sizeof *v->items * (size_t)cap);
        if (obj) v->keys = realloc(v->keys, sizeof *v->keys * (size_t)cap);
      }
      if (obj) {
        p = ws(p);
        if (!jstring(&p, &v->keys[v->n])) return 0;
        p = ws(p);
        if (*p++ != ':') return free(v->keys[v->n]), 0;
      }
      if (!jvalue(&p, &v->items[v->n], depth + 1)) {
        if (obj) free(v->keys[v->n]);
        return 0;
      }
      v->n++;
      p = ws(p);
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p != (obj ? '}' : ']')) return 0;
      *pp = p + 1;
      return 1;
    }
  }
  if (*p == '"') {
    v->type = J_STR;
    if (!jstring(&p, &v->str)) return 0;
    *pp = p;
    return 1;
  }
  if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4) || !strncmp(p, "false", 5)) {
    v->type = *p == 'n' ? J_NULL : J_BOOL;
    v->num = *p == 't';
    *pp = p + (*p == 'f' ? 5 : 4);
    return 1;
  }
  /* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  const char *s = p;
  if (*p == '-') ++p;
  if (*p == '0') ++p;
  else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') ++p;
  else return 0;
  if (*p == '.') {
    ++p;
    if (!(*p >= '0' && *p <= '9')) return 0;
    while (*p >= '0' && *p <= '9') ++p;
  }
  if (*p == 'e' || *p == 'E') {
    ++p;
    if (*p == '+' || *p == '-') ++p;
    if (!(*p >= '0' && *p <= '9')) return 0;
    while (*p >= '0' && *p <= '9') ++p;
  }
  v->type = J_NUM;
  v->num = strtod(s, NULL);
  *pp = p;
  return 1;
}

/* Parses the whole text (nothing but whitespace after the value); 1 on success. */
static int jparse(const char *text, jv *v) {
  const char *p = text;
  if (!jvalue(&p, v, 0)) return 0;
  return *ws(p) == '\0';
}

static const jv *jget(const jv *o, const char *key) {
  if (o->type != J_OBJ) return NULL;
  for (int i = 0; i < o->n; ++i)
    if (!strcmp(o->keys[i], key)) return &o->items[i];
  return NULL;
}

/* The page's scene JSON (between the script tags), parsed; the page text in *page (caller frees). */
static void load_scene(const char *path, jv *scene, char **page) {
  char *html = slurp(path, NULL);
  cr_assert_not_null(html, "cannot read %s", path);
  const char *tag = "<script type=\"application/json\" id=\"grit-scene\">";
  char *b = strstr(html, tag);
  cr_assert_not_null(b, "no scene JSON in the page");
  b += strlen(tag);
  char *e = strstr(b, "</script>");
  cr_assert_not_null(e);
  char *json = strndup(b, (size_t)(e - b));
  cr_assert(jparse(json, scene), "the scene JSON does not parse");
  free(json);
  if (page) *page = html;
  else free(html);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) ++n;
  return n;
}

/* --------------------------------------------------------------------------------- the structure */

static const char SPHERE_XML[] =
    "<mujoco model=\"drop\"><option timestep=\"0.01\"/>"
    "<worldbody><geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>"
    "<body name=\"ball\" pos=\"0 0 0.3\"><freejoint/>"
    "<geom name=\"ball\" type=\"sphere\" size=\"0.1\" mass=\"0.5\"/></body></worldbody></mujoco>";

static void load(const char *xml, grit_model **m, grit_data **d) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_data_create(*m, d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(*d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
}

Test(replay, scene_json_frames_poses_and_forces) {
  grit_model *m;
  grit_data *d;
  load(SPHERE_XML, &m, &d);
  grit_replay *r;
  cr_assert_eq(grit_replay_create(m, &r), GRIT_OK);
  cr_assert_eq(grit_replay_add_data(r, d, 0), GRIT_OK);
  const int steps = 150; /* 1.5 s: the ball lands at 0.2 s and comes to rest */
  for (int k = 0; k < steps; ++k) {
    cr_assert_eq(grit_step(d), GRIT_OK);
    cr_assert_eq(grit_replay_add_data(r, d, 1), GRIT_OK, "%s", grit_replay_last_error(r));
  }
  cr_assert_eq(grit_replay_nframes(r), steps + 1);
  const char *path = tmp_path("drop.html");
  cr_assert_eq(grit_replay_write_html(r, path), GRIT_OK, "%s", grit_replay_last_error(r));
  jv s;
  char *page;
  load_scene(path, &s, &page);
  const jv *t = jget(&s, "t"), *poses = jget(&s, "poses"), *contacts = jget(&s, "contacts"), *geoms = jget(&s, "geoms");
  cr_assert(t && poses && contacts && geoms && jget(&s, "markers") && jget(&s, "extent"));
  cr_assert_eq(jget(&s, "nbody")->num, 2);
  cr_assert_eq(t->n, steps + 1);
  cr_assert_eq(poses->n, steps + 1);
  cr_assert_eq(contacts->n, steps + 1);
  cr_assert_eq(geoms->n, 2);
  cr_assert_str_eq(jget(&geoms->items[1], "type")->str, "sphere");
  cr_assert_eq(jget(&geoms->items[1], "body")->num, 1);
  for (int f = 0; f <= steps; ++f) {
    cr_assert_eq(poses->items[f].n, 7, "one body, 7 numbers per frame");
    cr_assert(fabs(t->items[f].num - 0.01 * f) < 1e-9, "frame %d at t = %g", f, t->items[f].num);
    cr_assert_eq(contacts->items[f].n % 6, 0);
  }
  /* the last pose is the data's (the free joint's position and quaternion; printed with 6 digits) */
  const double *q = grit_data_qpos(d);
  for (int i = 0; i < 7; ++i)
    cr_assert(fabs(poses->items[steps].items[i].num - q[i]) <= 1e-6 * fmax(1, fabs(q[i])), "pose[%d] %g vs q %g", i,
              poses->items[steps].items[i].num, q[i]);
  /* before landing no contact; at rest the arrows' forces add up to m g upward (impulse / dt) */
  cr_assert_eq(contacts->items[1].n, 0);
  double fz = 0, fxy = 0;
  const jv *c = &contacts->items[steps];
  cr_assert_geq(c->n, 6);
  for (int i = 0; i < c->n; i += 6) {
    fz += c->items[i + 5].num;
    fxy += hypot(c->items[i + 3].num, c->items[i + 4].num);
    cr_assert(fabs(c->items[i + 2].num) < 2e-3, "the contact point is on the floor (z %g)", c->items[i + 2].num);
  }
  cr_assert(fabs(fz - 0.5 * 9.81) < 0.01 * 0.5 * 9.81, "resting force %g N, m g = %g N", fz, 0.5 * 9.81);
  cr_assert(fxy < 1e-3 * fz);
  /* plots: contact impulses and Newton iterations, with time cursors; three.js and the viewer inlined */
  cr_assert_eq(count(page, "<svg class=\"grit-plot time\""), 2);
  cr_assert_eq(count(page, "<line class=\"cursor\""), 2);
  cr_assert_neq(strstr(page, "Contact impulses per step"), NULL);
  cr_assert_neq(strstr(page, "Newton iterations per step"), NULL);
  cr_assert_neq(strstr(page, "THREE.WebGLRenderer"), NULL);
  cr_assert_neq(strstr(page, "grit replay viewer"), NULL);
  cr_assert_eq(count(page, "<script"), 3);
  cr_assert_eq(count(page, "</script>"), 3, "nothing inlined ends a script early");
  free(page);
  jfree(&s);
  grit_replay_free(r);
  grit_data_free(d);
  grit_model_free(m);
}

Test(replay, convex_hull_faces_point_outward) {
  static const char xml[] =
      "<mujoco><asset><mesh name=\"rock\" vertex=\"0 0 0  1 0 0  0 1 0  0 0 1  1 1 0  1 0 1  0 1 1  1 1 1  0.5 0.5 0.5\"/>"
      "</asset><worldbody><body><freejoint/><inertial pos=\"0.5 0.5 0.5\" mass=\"1\" diaginertia=\"0.2 0.2 0.2\"/>"
      "<geom type=\"mesh\" mesh=\"rock\"/></body></worldbody></mujoco>";
  grit_model *m;
  grit_data *d;
  load(xml, &m, &d);
  grit_replay *r;
  cr_assert_eq(grit_replay_create(m, &r), GRIT_OK);
  cr_assert_eq(grit_replay_add_data(r, d, 0), GRIT_OK);
  const char *path = tmp_path("rock.html");
  cr_assert_eq(grit_replay_write_html(r, path), GRIT_OK);
  jv s;
  load_scene(path, &s, NULL);
  const jv *g = &jget(&s, "geoms")->items[0], *v = jget(g, "vertices"), *f = jget(g, "faces");
  cr_assert_str_eq(jget(g, "type")->str, "convex");
  cr_assert_eq(v->n, 24); /* the loader keeps the hull's 8 corners; the interior point is not a vertex */
  cr_assert_eq(f->n % 3, 0);
  cr_assert_geq(f->n / 3, 12, "a cube's hull needs at least 12 triangles, got %d", f->n / 3);
  double c[3] = {0, 0, 0};
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) c[k] += v->items[3 * i + k].num / 8;
  for (int i = 0; i < f->n; i += 3) {
    double p[3][3];
    for (int j = 0; j < 3; ++j) {
      const int idx = (int)f->items[i + j].num;
      cr_assert(idx >= 0 && idx < 8);
      for (int k = 0; k < 3; ++k) p[j][k] = v->items[3 * idx + k].num;
    }
    double a[3], b[3], n[3];
    for (int k = 0; k < 3; ++k) a[k] = p[1][k] - p[0][k], b[k] = p[2][k] - p[0][k];
    n[0] = a[1] * b[2] - a[2] * b[1], n[1] = a[2] * b[0] - a[0] * b[2], n[2] = a[0] * b[1] - a[1] * b[0];
    const double out = n[0] * (p[0][0] - c[0]) + n[1] * (p[0][1] - c[1]) + n[2] * (p[0][2] - c[2]);
    cr_assert_gt(out, 0.1, "triangle %d faces inward (%g)", i / 3, out);
  }
  jfree(&s);
  grit_replay_free(r);
  grit_data_free(d);
  grit_model_free(m);
}

Test(replay, quaternions_markers_plots_and_escaping) {
  grit_model *m;
  grit_data *d;
  load(SPHERE_XML, &m, &d);
  grit_replay *r;
  cr_assert_eq(grit_replay_create(m, &r), GRIT_OK);
  const double q[7] = {1, 2, 3, 2, 0, 0, 2}; /* |quat| = 2*sqrt(2): stored normalized */
  cr_assert_eq(grit_replay_add_frame(r, 0.5, q, 7, NULL, 0, -1), GRIT_OK);
  const grit_replay_contact c = {{0, 1}, {1, 2, 2.9}, {0, 0, 4}, 0.04, 0};
  cr_assert_eq(grit_replay_add_frame(r, 0.5, q, 7, &c, 1, 3), GRIT_OK, "equal times are allowed");
  const grit_replay_marker mk = {"goal </script>", GRIT_GEOM_BOX, {0.1, 0.2, 0.3}, {1, 0, 0}, {0, 0, 0, 0}, {0, 1, 0, 0.5}};
  cr_assert_eq(grit_replay_add_marker(r, &mk), GRIT_OK);
  const double x[4] = {1, 2, 3, 4}, y[4] = {10, 0, 1000, 100};
  const grit_replay_series se[2] = {{"a & b", x, y, 4}, {NULL, NULL, y, 4}};
  cr_assert_eq(grit_replay_add_plot(r, "cost <x>", "iteration", "cost", GRIT_REPLAY_LOG_Y, se, 2), GRIT_OK);
  cr_assert_eq(grit_replay_set_title(r, "t\"</script><b>"), GRIT_OK);
  const char *path = tmp_path("misc.html");
  cr_assert_eq(grit_replay_write_html(r, path), GRIT_OK);
  jv s;
  char *page;
  load_scene(path, &s, &page);
  cr_assert_str_eq(jget(&s, "title")->str, "t\"?/script??b?", "< and > escaped as \\u003c, \\u003e");
  const jv *pose = &jget(&s, "poses")->items[0];
  const double h = 1 / sqrt(2);
  const double want[7] = {1, 2, 3, h, 0, 0, h};
  for (int i = 0; i < 7; ++i) cr_assert(fabs(pose->items[i].num - want[i]) < 1e-6, "pose[%d] = %g", i, pose->items[i].num);
  const jv *mks = jget(&s, "markers");
  cr_assert_eq(mks->n, 1);
  cr_assert_str_eq(jget(&mks->items[0], "type")->str, "box");
  cr_assert_eq(jget(&mks->items[0], "quat")->items[0].num, 1, "a zero quaternion means the identity");
  cr_assert_eq(jget(&s, "contacts")->items[1].n, 6);
  cr_assert(fabs(jget(&s, "max_force")->num - 4) < 1e-9);
  cr_assert_eq(count(page, "</script>"), 3);
  cr_assert_neq(strstr(page, "<title>t&quot;&lt;/script&gt;&lt;b&gt;</title>"), NULL);
  cr_assert_neq(strstr(page, "cost &lt;x&gt;"), NULL);
  cr_assert_neq(strstr(page, "a &amp; b"), NULL);
  /* the log plot: decades 1..1000 as ticks, the zero a gap (two polylines for the first series) */
  cr_assert_neq(strstr(page, ">1000</text>"), NULL);
  cr_assert_eq(count(page, "<svg class=\"grit-plot\""), 1, "the caller's plot has no time axis");
  cr_assert_eq(count(page, "<svg class=\"grit-plot time\""), 2, "contact impulses and Newton iterations");
  /* polylines: contact impulses 1 + 1 (frame 0 did not follow a step: a gap), Newton 1, the log plot 2 + 2
   * (its zero splits each series) */
  cr_assert_eq(count(page, "<polyline"), 2 + 1 + 4);
  free(page);
  jfree(&s);
  grit_replay_free(r);
  grit_data_free(d);
  grit_model_free(m);
}

Test(replay, bad_input_is_rejected_with_a_message) {
  grit_model *m, *m2;
  grit_data *d, *d2;
  load(SPHERE_XML, &m, &d);
  load(SPHERE_XML, &m2, &d2);
  grit_replay *r = (grit_replay *)1;
  cr_assert_eq(grit_replay_create(NULL, &r), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_null(r);
  cr_assert_eq(grit_replay_create(m, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_create(m, &r), GRIT_OK);
  cr_assert_eq(grit_replay_write_html(r, tmp_path("empty.html")), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_neq(strstr(grit_replay_last_error(r), "no frame"), NULL, "%s", grit_replay_last_error(r));
  const double q[7] = {0, 0, 1, 1, 0, 0, 0}, nan_q[7] = {0, NAN, 1, 1, 0, 0, 0}, zero_q[7] = {0, 0, 1, 0, 0, 0, 0};
  cr_assert_eq(grit_replay_add_frame(r, 0, q, 6, NULL, 0, -1), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_neq(strstr(grit_replay_last_error(r), "nq"), NULL);
  cr_assert_eq(grit_replay_add_frame(r, 0, nan_q, 7, NULL, 0, -1), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_replay_add_frame(r, 0, zero_q, 7, NULL, 0, -1), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_add_frame(r, NAN, q, 7, NULL, 0, -1), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_replay_add_frame(r, 0, q, 7, NULL, 2, -1), GRIT_ERR_INVALID_ARGUMENT);
  grit_replay_contact bad = {{0, 5}, {0, 0, 0}, {0, 0, 1}, 0, 0};
  cr_assert_eq(grit_replay_add_frame(r, 0, q, 7, &bad, 1, -1), GRIT_ERR_INVALID_ARGUMENT, "geometry 5 does not exist");
  bad.geom[1] = 1, bad.force[2] = INFINITY;
  cr_assert_eq(grit_replay_add_frame(r, 0, q, 7, &bad, 1, -1), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_replay_nframes(r), 0, "failed calls add nothing");
  cr_assert_eq(grit_replay_add_frame(r, 1, q, 7, NULL, 0, -1), GRIT_OK);
  cr_assert_eq(grit_replay_add_frame(r, 0.5, q, 7, NULL, 0, -1), GRIT_ERR_INVALID_ARGUMENT, "time goes back");
  cr_assert_neq(strstr(grit_replay_last_error(r), "before"), NULL);
  cr_assert_eq(grit_replay_add_data(r, d2, 0), GRIT_ERR_INVALID_ARGUMENT, "data of another model");
  cr_assert_eq(grit_replay_add_data(r, NULL, 0), GRIT_ERR_INVALID_ARGUMENT);
  const double rgba_bad[4] = {0, 0, 1.5, 1}, rgba[4] = {1, 0, 0, 1};
  cr_assert_eq(grit_replay_set_geom_color(r, 2, rgba), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_set_geom_color(r, 1, rgba_bad), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_set_geom_color(r, 1, rgba), GRIT_OK);
  grit_replay_marker mk = {NULL, GRIT_GEOM_PLANE, {1, 1, 1}, {0, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 1}};
  cr_assert_eq(grit_replay_add_marker(r, &mk), GRIT_ERR_INVALID_ARGUMENT);
  mk.type = GRIT_GEOM_SPHERE, mk.size[0] = -1;
  cr_assert_eq(grit_replay_add_marker(r, &mk), GRIT_ERR_INVALID_ARGUMENT);
  mk.size[0] = 1, mk.pos[0] = NAN;
  cr_assert_eq(grit_replay_add_marker(r, &mk), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_replay_add_marker(r, NULL), GRIT_ERR_INVALID_ARGUMENT);
  const double y[2] = {1, 2}, xn[2] = {0, NAN};
  const grit_replay_series good = {"y", NULL, y, 2}, nox = {"y", xn, y, 2}, noy = {"y", NULL, NULL, 2};
  cr_assert_eq(grit_replay_add_plot(r, "p", "x", "y", 0, &good, 0), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_add_plot(r, "p", "x", "y", 0, &noy, 1), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_add_plot(r, "p", "x", "y", 0, &nox, 1), GRIT_ERR_NOT_FINITE);
  cr_assert_eq(grit_replay_add_plot(r, "p", "x", "y", 64, &good, 1), GRIT_ERR_INVALID_ARGUMENT, "unknown flag");
  cr_assert_eq(grit_replay_add_plot(r, NULL, NULL, NULL, 0, &good, 1), GRIT_OK, "labels are optional");
  cr_assert_eq(grit_replay_set_title(r, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_write_html(r, NULL), GRIT_ERR_INVALID_ARGUMENT);
  cr_assert_eq(grit_replay_write_html(r, "/nonexistent-dir/x.html"), GRIT_ERR_IO);
  cr_assert_neq(strstr(grit_replay_last_error(r), "/nonexistent-dir/x.html"), NULL);
  cr_assert_eq(grit_replay_write_html(r, tmp_path("ok.html")), GRIT_OK);
  cr_assert_str_eq(grit_replay_last_error(r), "");
  cr_assert_eq(grit_replay_nframes(NULL), 0);
  grit_replay_free(r);
  grit_replay_free(NULL);
  grit_data_free(d), grit_data_free(d2);
  grit_model_free(m), grit_model_free(m2);
}

/* ------------------------------------------------------------------------------- running programs */

/* Runs argv with stdout to out_path (or /dev/null) and stderr to /dev/null; the exit status (-1: no run). */
static int run(char *const argv[], const char *out_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#ifdef GRIT_CLI
Test(replay, cli_replay_and_sim_html) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/models/falling_sphere.xml", GRIT_SOURCE_DIR);
  char csv[512], html[512], html2[512];
  snprintf(csv, sizeof csv, "%s", tmp_path("fall.csv"));
  snprintf(html, sizeof html, "%s", tmp_path("fall.html"));
  snprintf(html2, sizeof html2, "%s", tmp_path("fall_sim.html"));
  char *sim[] = {GRIT_CLI, "sim", model, "--steps", "300", "--csv", csv, "--html", html2, "--quiet", NULL};
  cr_assert_eq(run(sim, NULL), 0);
  char *rep[] = {GRIT_CLI, "replay", model, "--csv", csv, "-o", html, "--title", "falling", NULL};
  cr_assert_eq(run(rep, tmp_path("out.json")), 0);
  char *out = slurp(tmp_path("out.json"), NULL);
  cr_assert_neq(strstr(out, "\"frames\":301"), NULL, "%s", out);
  cr_assert_neq(strstr(out, "\"contacts\":true"), NULL, "%s", out);
  free(out);
  /* both pages: 301 frames; the replayed contacts are those of the simulation (the same steps again) */
  jv a, b;
  load_scene(html, &a, NULL);
  load_scene(html2, &b, NULL);
  cr_assert_eq(jget(&a, "t")->n, 301);
  cr_assert_eq(jget(&b, "t")->n, 301);
  cr_assert_str_eq(jget(&a, "title")->str, "falling");
  const jv *ca = jget(&a, "contacts"), *cb = jget(&b, "contacts");
  int ncontacts = 0;
  for (int f = 0; f < 301; ++f) {
    cr_assert_eq(ca->items[f].n, cb->items[f].n, "frame %d", f);
    for (int i = 0; i < ca->items[f].n; ++i)
      cr_assert(fabs(ca->items[f].items[i].num - cb->items[f].items[i].num) <= 1e-5 * fmax(1, fabs(cb->items[f].items[i].num)),
                "frame %d, number %d: %g vs %g", f, i, ca->items[f].items[i].num, cb->items[f].items[i].num);
    ncontacts += ca->items[f].n / 6;
  }
  cr_assert_gt(ncontacts, 0, "the sphere lands within 3 s");
  jfree(&a);
  jfree(&b);
  /* errors: a usage error (2) without -o, a file error (1) for a missing CSV or one without q columns */
  char *no_out[] = {GRIT_CLI, "replay", model, "--csv", csv, NULL};
  cr_assert_eq(run(no_out, NULL), 2);
  char *missing[] = {GRIT_CLI, "replay", model, "--csv", "/nonexistent.csv", "-o", html, NULL};
  cr_assert_eq(run(missing, NULL), 1);
  FILE *f = fopen(tmp_path("bad.csv"), "w");
  fputs("t,x\n0,1\n", f);
  fclose(f);
  char bad[512];
  snprintf(bad, sizeof bad, "%s", tmp_path("bad.csv"));
  char *badq[] = {GRIT_CLI, "replay", model, "--csv", bad, "-o", html, NULL};
  cr_assert_eq(run(badq, NULL), 1);
  char *unwritable[] = {GRIT_CLI, "sim", model, "--steps", "2", "--html", "/nonexistent-dir/x.html", "--quiet", NULL};
  cr_assert_eq(run(unwritable, NULL), 1, "grit sim reports a page it cannot write");
  /* --no-contacts: frames only */
  char *plain[] = {GRIT_CLI, "replay", model, "--csv", csv, "-o", html, "--no-contacts", NULL};
  cr_assert_eq(run(plain, tmp_path("plain.json")), 0);
  out = slurp(tmp_path("plain.json"), NULL);
  cr_assert_neq(strstr(out, "\"contacts\":false"), NULL, "%s", out);
  free(out);
  load_scene(html, &a, NULL);
  for (int f = 0; f < 301; ++f) cr_assert_eq(jget(&a, "contacts")->items[f].n, 0);
  jfree(&a);
}
#endif

/* ------------------------------------------------------------------------------------ the browser */

static int find_chromium(char *path, size_t n) {
  const char *env = getenv("GRIT_CHROMIUM");
  if (env && *env) {
    snprintf(path, n, "%s", env);
    return access(path, X_OK) == 0;
  }
  const char *names[] = {"chromium", "chromium-browser", "google-chrome"};
  const char *p = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s", p ? p : "/usr/bin:/bin");
  for (int i = 0; i < 3; ++i) {
    char copy[4096];
    memcpy(copy, dirs, sizeof copy);
    for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
      snprintf(path, n, "%s/%s", dir, names[i]);
      if (access(path, X_OK) == 0) return 1;
    }
  }
  return 0;
}

/* The browser test needs the example's page and zlib for the screenshots; its helpers exist only then. */
#if defined(GRIT_ARM_PUSH_BALL) && GRIT_HAVE_ZLIB
static const double PI = 3.14159265358979323846;

/* The window, and the 3-D view's height fixed by the URL: --dump-dom lays the page out in a shorter
 * viewport than --screenshot, so a height relative to the window would move the scene between the two. */
enum { WIN_W = 900, WIN_H = 700, VIEW_H = 460 };

/* One headless run on `url`: a screenshot to png, or (png NULL) the DOM after the page ran to dom_path.
 * A fresh profile each time; software WebGL (SwiftShader) since there is no GPU. */
static int chromium(const char *exe, const char *url, const char *png, const char *dom_path, int budget_ms) {
  static int nrun = 0;
  char profile[512], shot[600], win[64], budget[64];
  snprintf(profile, sizeof profile, "--user-data-dir=%s", tmp_path(""));
  snprintf(profile + strlen(profile), sizeof profile - strlen(profile), "profile%d", nrun++);
  snprintf(win, sizeof win, "--window-size=%d,%d", WIN_W, WIN_H);
  snprintf(budget, sizeof budget, "--virtual-time-budget=%d", budget_ms);
  if (png) snprintf(shot, sizeof shot, "--screenshot=%s", png);
  else snprintf(shot, sizeof shot, "--dump-dom");
  char *argv[] = {"timeout", "120", (char *)exe, "--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update", "--no-first-run",
                  "--enable-unsafe-swiftshader", "--force-device-scale-factor=1", "--hide-scrollbars", profile, win,
                  budget, shot, (char *)url, NULL};
  return run(argv, png ? NULL : dom_path);
}

/* The page's probe (JSON in <pre id="grit-probe">) from a --dump-dom output, parsed. */
static void read_probe(const char *dom_path, jv *probe) {
  char *dom = slurp(dom_path, NULL);
  cr_assert_not_null(dom);
  char *b = strstr(dom, "id=\"grit-probe\"");
  cr_assert_not_null(b, "no probe in the DOM");
  b = strchr(b, '>');
  char *e = strchr(b, '<');
  cr_assert(b && e);
  char *json = strndup(b + 1, (size_t)(e - b - 1));
  /* the DOM dump escapes & < > " in text; the probe has only quotes */
  for (char *p; (p = strstr(json, "&quot;"));) {
    *p = '"';
    memmove(p + 1, p + 6, strlen(p + 6) + 1);
  }
  cr_assert(jparse(json, probe), "probe: %s", json);
  free(json);
  free(dom);
}

typedef struct image {
  int w, h;
  unsigned char *rgb; /* w*h*3 */
} image;

static unsigned be32(const unsigned char *p) {
  return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* A non-interlaced 8-bit RGB or RGBA PNG (what Chromium writes) into RGB; 0 on success. */
static int read_png(const char *path, image *im) {
  size_t n;
  unsigned char *f = (unsigned char *)slurp(path, &n);
  if (!f || n < 33 || memcmp(f, "\x89PNG\r\n\x1a\n", 8)) return free(f), 1;
  int w = 0, h = 0, ch = 0;
  unsigned char *idat = NULL;
  size_t nidat = 0;
  for (size_t p = 8; p + 12 <= n;) {
    const unsigned len = be32(f + p);
    const unsigned char *type = f + p + 4, *data = f + p + 8;
    if (p + 12 + len > n) break;
    if (!memcmp(type, "IHDR", 4)) {
      w = (int)be32(data), h = (int)be32(data + 4);
      if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0) return free(f), 2;
      ch = data[9] == 6 ? 4 : 3;
    } else if (!memcmp(type, "IDAT", 4)) {
      idat = realloc(idat, nidat + len);
      memcpy(idat + nidat, data, len);
      nidat += len;
    }
    p += 12 + len;
  }
  const size_t stride = (size_t)w * ch, raw_n = (size_t)h * (stride + 1);
  unsigned char *raw = malloc(raw_n);
  uLongf out_n = raw_n;
  if (!w || !h || !raw || uncompress(raw, &out_n, idat, nidat) != Z_OK || out_n != raw_n) {
    free(f), free(idat), free(raw);
    return 3;
  }
  im->w = w, im->h = h;
  im->rgb = malloc((size_t)w * h * 3);
  unsigned char *prev = calloc(stride, 1), *cur = malloc(stride);
  for (int y = 0; y < h; ++y) {
    const unsigned char ft = raw[(size_t)y * (stride + 1)], *s = raw + (size_t)y * (stride + 1) + 1;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= (size_t)ch ? cur[x - ch] : 0, b = prev[x], c = x >= (size_t)ch ? prev[x - ch] : 0;
      const int pred = ft == 0 ? 0 : ft == 1 ? a : ft == 2 ? b : ft == 3 ? (a + b) / 2 : paeth(a, b, c);
      cur[x] = (unsigned char)(s[x] + pred);
    }
    for (int x = 0; x < w; ++x) memcpy(im->rgb + 3 * ((size_t)y * w + x), cur + (size_t)x * ch, 3);
    memcpy(prev, cur, stride);
  }
  free(f), free(idat), free(raw), free(prev), free(cur);
  return 0;
}

static const unsigned char *px(const image *im, int x, int y) { return im->rgb + 3 * ((size_t)y * im->w + x); }

/* Colour classes of the arm_push_ball page (examples/arm_push_ball.c): the ball orange (0.95, 0.5, 0.1),
 * the arm steel blue (0.42, 0.52, 0.66), the target translucent green over the grey ground, the background
 * 0xe9eef3. Thresholds leave room for the shading. */
static int is_orange(const unsigned char *c) { return c[0] > 100 && c[0] > c[1] + 40 && c[1] > c[2] + 20; }
static int is_blue(const unsigned char *c) { return c[2] > c[0] + 25 && c[2] > 60; }
static int is_green(const unsigned char *c) { return c[1] > c[0] + 15 && c[1] > c[2] + 5; }
/* The ball: orange, or olive where it is seen through the translucent green target marker (at the end
 * of the plan it sits inside it; measured (140, 125, 40) against the ball's (190, 100, 20)). */
static int is_ball(const unsigned char *c) {
  return is_orange(c) || (c[0] > 90 && c[1] > c[2] + 40 && c[0] > c[2] + 60 && c[0] + 10 >= c[1]);
}
static int is_background(const unsigned char *c) {
  return abs(c[0] - 0xe9) <= 6 && abs(c[1] - 0xee) <= 6 && abs(c[2] - 0xf3) <= 6;
}

/* Fraction of the pixels within radius rad of (cx, cy) for which cls holds. */
static double fraction(const image *im, double cx, double cy, double rad, int (*cls)(const unsigned char *)) {
  int n = 0, k = 0;
  for (int y = (int)(cy - rad); y <= (int)(cy + rad); ++y)
    for (int x = (int)(cx - rad); x <= (int)(cx + rad); ++x) {
      if (x < 0 || y < 0 || x >= im->w || y >= im->h || hypot(x - cx, y - cy) > rad) continue;
      n++;
      k += cls(px(im, x, y));
    }
  return n ? (double)k / n : 0;
}

/* The ball's pixels in the view: count and centroid. */
static int ball_centroid(const image *im, const double view[4], double c[2]) {
  int n = 0;
  c[0] = c[1] = 0;
  for (int y = (int)view[1]; y < (int)(view[1] + view[3]) && y < im->h; ++y)
    for (int x = (int)view[0]; x < (int)(view[0] + view[2]) && x < im->w; ++x)
      if (is_ball(px(im, x, y))) n++, c[0] += x, c[1] += y;
  if (n) c[0] /= n, c[1] /= n;
  return n;
}

static const jv *probe_geom(const jv *probe, const char *name) {
  const jv *g = jget(probe, "geoms");
  for (int i = 0; g && i < g->n; ++i)
    if (!strcmp(jget(&g->items[i], "name")->str, name)) return &g->items[i];
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

Test(browser, arm_push_ball_page_draws_and_animates, .timeout = 600) {
  char exe[1024];
  if (!find_chromium(exe, sizeof exe))
    cr_skip_test("chromium not found (apt-get install chromium, or set GRIT_CHROMIUM): the browser test is skipped");
#if !defined(GRIT_ARM_PUSH_BALL)
  cr_skip_test("the arm_push_ball example is not built (GRIT_BUILD_EXAMPLES=OFF): the browser test is skipped");
#elif !GRIT_HAVE_ZLIB
  cr_skip_test("zlib not found at configure time (apt-get install zlib1g-dev): the screenshots cannot be decoded");
#else
  char csv[512], html[512], url[600];
  snprintf(csv, sizeof csv, "%s", tmp_path("plan.csv"));
  snprintf(html, sizeof html, "%s", tmp_path("plan.html"));
  char *example[] = {GRIT_ARM_PUSH_BALL, "--csv", csv, "--html", html, "--quiet", "--threads", "1", NULL};
  cr_assert_eq(run(example, NULL), 0, "arm_push_ball failed");
  jv scene;
  load_scene(html, &scene, NULL);
  const jv *T = jget(&scene, "t");
  const double t_end = T->items[T->n - 1].num, t_begin = T->items[0].num;
  jfree(&scene);

  const double t_start = now_s();
  const double times[2] = {0, t_end};
  image im[2];
  jv probe[2];
  for (int i = 0; i < 2; ++i) {
    char png[512], dom[512];
    snprintf(png, sizeof png, "%s/shot%d.png", TMP, i);
    snprintf(dom, sizeof dom, "%s/dom%d.html", TMP, i);
    snprintf(url, sizeof url, "file://%s#t=%g&paused=1&height=%d", html, times[i], VIEW_H);
    cr_assert_eq(chromium(exe, url, png, NULL, 3000), 0, "chromium --screenshot failed on %s", url);
    cr_assert_eq(chromium(exe, url, NULL, dom, 3000), 0, "chromium --dump-dom failed on %s", url);
    cr_assert_eq(read_png(png, &im[i]), 0, "cannot decode %s", png);
    cr_assert_eq(im[i].w, WIN_W);
    cr_assert_eq(im[i].h, WIN_H);
    read_probe(dom, &probe[i]);
    cr_assert(jget(&probe[i], "webgl")->num, "the page found no WebGL");
    cr_assert_geq(jget(&probe[i], "frames_drawn")->num, 1);
    cr_assert(fabs(jget(&probe[i], "t")->num - times[i]) < 1e-6, "the hash set t = %g, the page shows %g", times[i],
              jget(&probe[i], "t")->num);
  }
  /* a third run, playing at a tenth of real time: the page's time advances. The test drives the page's
   * clock (clock=3: 3 s of wall time have passed), so the time shown does not depend on the machine's speed */
  char dom[512];
  snprintf(dom, sizeof dom, "%s/dom_play.html", TMP);
  snprintf(url, sizeof url, "file://%s#t=0&speed=0.1&clock=3", html);
  cr_assert_eq(chromium(exe, url, NULL, dom, 3000), 0);
  jv play;
  read_probe(dom, &play);
  /* 3 s of the page's clock at speed 0.1 is 0.3 s of the trajectory (the probe rounds t to 1e-6) */
  const double t_play = jget(&play, "t")->num;
  cr_assert(jget(&play, "playing")->num);
  cr_assert(fabs(t_play - (fmax(t_begin, 0.0) + 0.3)) < 2e-6, "after 3 s of the page's clock at speed 0.1 the page is at t = %g s", t_play);
  cr_assert_geq(jget(&play, "frames_drawn")->num, 1);
  jfree(&play);
  const double browser_s = now_s() - t_start;

  double centroid[2][2];
  for (int i = 0; i < 2; ++i) {
    const jv *v = jget(&probe[i], "view");
    const double view[4] = {v->items[0].num, v->items[1].num, v->items[2].num, v->items[3].num};
    cr_assert(view[2] > 0.9 * WIN_W && view[3] > 200, "the 3-D view is %gx%g", view[2], view[3]);
    /* background where nothing is: the top strip of the view, above the arm */
    cr_assert_gt(fraction(&im[i], view[0] + view[2] / 2, view[1] + 8, 6, is_background), 0.95,
                 "t = %g: the top of the view is not the background", times[i]);
    /* the ball: its colour where the page projects it, and the ball's pixels centred there */
    const jv *ball = probe_geom(&probe[i], "ball");
    cr_assert_not_null(ball);
    const double bx = jget(ball, "x")->num, by = jget(ball, "y")->num, br = jget(ball, "r")->num;
    cr_assert(br > 10, "the ball is %g px in radius on the screen", br);
    const double fo = fraction(&im[i], bx, by, 0.5 * br, is_ball);
    cr_assert_gt(fo, 0.6, "t = %g: %.0f%% ball colour within half the ball's radius of (%g, %g)", times[i], 100 * fo, bx, by);
    const int n = ball_centroid(&im[i], view, centroid[i]);
    cr_assert_gt(n, 0.5 * PI * br * br, "t = %g: %d ball pixels, the ball's disc has %.0f", times[i], n, PI * br * br);
    cr_assert_lt(hypot(centroid[i][0] - bx, centroid[i][1] - by), 0.35 * br, "t = %g: the ball's centroid (%g, %g) is "
                 "not at the ball (%g, %g)", times[i], centroid[i][0], centroid[i][1], bx, by);
    /* the plan's end: the ball drawn at the target marker (the example brings it within 1 mm) */
    const jv *target = probe_geom(&probe[i], "target");
    cr_assert_not_null(target);
    const double tx = jget(target, "x")->num, ty = jget(target, "y")->num;
    if (i == 1)
      cr_assert_lt(hypot(bx - tx, by - ty), 0.1 * br, "t = %g: the ball (%g, %g) is not drawn at the target (%g, %g)",
                   times[i], bx, by, tx, ty);
    /* the arm: steel blue at the centre of most of its links (some may hide behind the ball) */
    const char *links[] = {"shoulder_link", "half_arm_1_link", "half_arm_2_link", "forearm_link",
                           "spherical_wrist_1_link", "spherical_wrist_2_link", "bracelet_link", "end_effector"};
    int blue_links = 0;
    for (int k = 0; k < 8; ++k) {
      const jv *g = probe_geom(&probe[i], links[k]);
      cr_assert_not_null(g, "%s", links[k]);
      blue_links += fraction(&im[i], jget(g, "x")->num, jget(g, "y")->num, 2.5, is_blue) > 0.5;
    }
    cr_assert_geq(blue_links, 5, "t = %g: only %d of 8 arm links show the arm's colour at their centre", times[i], blue_links);
    /* the target marker: green (translucent over the ground) at its place, at the start (the ball is away) */
    if (i == 0) {
      cr_assert(jget(target, "marker")->num);
      cr_assert_gt(fraction(&im[i], tx, ty, 0.4 * jget(target, "r")->num, is_green), 0.8, "the target marker is not drawn");
    }
  }
  /* the two times differ: the ball has moved right on the screen (the view looks along +y, x to the right) */
  cr_assert_gt(centroid[1][0] - centroid[0][0], 10, "the ball moved from x = %g to %g px", centroid[0][0],
               centroid[1][0]);
  int differ = 0;
  for (int y = 0; y < WIN_H; ++y)
    for (int x = 0; x < WIN_W; ++x) {
      const unsigned char *a = px(&im[0], x, y), *b = px(&im[1], x, y);
      differ += abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]) > 60;
    }
  cr_assert_gt(differ, WIN_W * WIN_H / 100, "only %d pixels differ between t = 0 and t = %g", differ, t_end);
  cr_log_info("browser: 5 chromium runs in %.1f s; ball at x = %.0f -> %.0f px; %d pixels differ", browser_s,
              centroid[0][0], centroid[1][0], differ);
  fprintf(stderr, "test_replay: 5 chromium runs in %.1f s\n", browser_s);
  for (int i = 0; i < 2; ++i) free(im[i].rgb), jfree(&probe[i]);
#endif
}
