/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay_browser.c — the replay page in a browser (grit/replay.h, docs/viewer.md).
 *
 * The arm_push_ball example's page opened in headless Chromium (software WebGL) at two times given in the
 * URL hash. The screenshot (PNG, decoded here with zlib) must show the ball's orange where the page says
 * the ball is, the arm's blue at the arm's geometries, the green target marker and the background colour
 * above the scene; the two times must differ (the ball's orange moves right, as the plan pushes it). A
 * third run without "paused" checks that the animation advances. The page's own report (#grit-probe, read
 * with --dump-dom) gives where each geometry is on the screen; the pixels are checked independently of it.
 * Skipped, with a message, when chromium is not installed or the example is not built. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if GRIT_HAVE_ZLIB
#include <zlib.h>
#endif

#include "replay_test_util.h"

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
  char profile[640], shot[600], win[64], budget[64]; /* profile: the option, a tmp_path (512) and a number */
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
