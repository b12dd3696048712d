/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay.c — the replay page (grit/replay.h, src/replay*.c, tools/grit_replay.c, docs/viewer.md).
 *
 * Structure: the page's scene JSON parses (a strict parser, replay_test_util.h), has one time, one pose list and one
 * contact list per frame, poses that are the model's forward kinematics, forces that are the step's
 * impulses over dt (a resting sphere: m g up), convex hulls with outward faces, escaped text; bad input is
 * rejected with a status and a message; `grit replay` and `grit sim --html` write pages. The browser test of
 * the page is test_replay_browser.c; the helpers both use are replay_test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
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

#include "grit/grit.h"
#include "grit/replay.h"


#include "replay_test_util.h"

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
