/* SPDX-License-Identifier: Apache-2.0 */
/* replay_svg.c — the replay page's plots as inline SVG (replay_internal.h), and its output stream. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "markup.h"
#include "replay_internal.h"

void replay_putc(replay_out *o, char c) {
  if (putc(c, o->f) == EOF) o->error = 1;
}

void replay_write(replay_out *o, const void *p, size_t n) {
  if (n && fwrite(p, 1, n, o->f) != n) o->error = 1;
}

void replay_printf(replay_out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (vfprintf(o->f, fmt, ap) < 0) o->error = 1;
  va_end(ap);
}

static char *dup_or_null(const char *s, int *fail) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  else *fail = 1;
  return c;
}

int replay_plot_init(replay_plot *p, const char *title, const char *xlabel, const char *ylabel, int log_y, int time_axis,
                     int nseries) {
  int fail = 0;
  memset(p, 0, sizeof *p);
  p->title = dup_or_null(title ? title : "", &fail);
  p->xlabel = dup_or_null(xlabel ? xlabel : "", &fail);
  p->ylabel = dup_or_null(ylabel ? ylabel : "", &fail);
  p->log_y = log_y != 0;
  p->time_axis = time_axis;
  p->series = calloc((size_t)nseries, sizeof *p->series);
  if (p->series) p->nseries = nseries;
  return fail || !p->series ? -1 : 0;
}

int replay_plot_set_series(replay_plot *p, int i, const char *name, const double *x, const double *y, int n) {
  int fail = 0;
  replay_series *s = &p->series[i];
  s->name = dup_or_null(name, &fail);
  s->x = malloc(sizeof(double) * (size_t)(n + 1));
  s->y = malloc(sizeof(double) * (size_t)(n + 1));
  if (fail || !s->x || !s->y) return -1;
  for (int k = 0; k < n; ++k) {
    s->x[k] = x ? x[k] : (double)k;
    s->y[k] = y[k];
  }
  s->n = n;
  return 0;
}

void replay_plot_clear(replay_plot *p) {
  for (int i = 0; i < p->nseries; ++i) {
    free(p->series[i].name);
    free(p->series[i].x);
    free(p->series[i].y);
  }
  free(p->series);
  free(p->title);
  free(p->xlabel);
  free(p->ylabel);
  memset(p, 0, sizeof *p);
}

/* Text in HTML and SVG (also the page's title), through the one escaper (markup.h). */
void replay_html_text(replay_out *o, const char *s) {
  for (; s && *s; ++s) {
    const char *entity = grit_markup_entity(*s);
    if (entity) replay_printf(o, "%s", entity);
    else replay_putc(o, *s);
  }
}

/* A round step near x > 0: 1, 2 or 5 times a power of ten. */
static double nice_step(double x) {
  const double e = pow(10, floor(log10(x))), f = x / e;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * e;
}

static const char *const COLORS[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                                     "#7f7f7f"};
#define NCOLORS ((int)(sizeof COLORS / sizeof COLORS[0]))

enum { W = 460, H = 250, ML = 62, MR = 14, MT = 26, MB = 40 };

static int usable(const replay_plot *p, double y) { return isfinite(y) && (!p->log_y || y > 0); }

/* A plot's data range and axes: x0..x1, y0..y1 (log_y: in decades) with tick steps xs, ys. */
typedef struct plot_axes {
  double pw, ph, x0, x1, y0, y1, xs, ys;
  int log_y;
} plot_axes;

static double px_of(const plot_axes *a, double x) { return ML + a->pw * (x - a->x0) / (a->x1 - a->x0); }
static double py_of(const plot_axes *a, double v) {
  return MT + a->ph * (1 - ((a->log_y ? log10(v) : v) - a->y0) / (a->y1 - a->y0));
}

/* The range of the usable points; returns their number. */
static int plot_range(const replay_plot *p, plot_axes *a) {
  a->x0 = INFINITY, a->x1 = -INFINITY, a->y0 = INFINITY, a->y1 = -INFINITY;
  int npts = 0;
  for (int i = 0; i < p->nseries; ++i)
    for (int k = 0; k < p->series[i].n; ++k) {
      const double x = p->series[i].x[k], y = p->series[i].y[k];
      if (!usable(p, y)) continue;
      a->x0 = fmin(a->x0, x), a->x1 = fmax(a->x1, x);
      a->y0 = fmin(a->y0, y), a->y1 = fmax(a->y1, y);
      npts++;
    }
  return npts;
}

/* Round axes around the range: decades on a log axis, nice steps on a linear one. */
static void plot_ticks(plot_axes *a) {
  if (a->x0 == a->x1) a->x0 -= 0.5, a->x1 += 0.5;
  if (a->log_y) {
    a->y0 = floor(log10(a->y0));
    a->y1 = ceil(log10(a->y1));
    if (a->y0 == a->y1) a->y1 += 1;
    a->ys = ceil((a->y1 - a->y0) / 6);
  } else {
    if (a->y0 > 0 && a->y0 < 0.5 * a->y1) a->y0 = 0; /* positive quantities from zero, unless they sit far from it */
    if (a->y0 == a->y1) {
      const double d = a->y0 != 0 ? 0.1 * fabs(a->y0) : 1;
      a->y0 -= d, a->y1 += d;
    }
    a->ys = nice_step((a->y1 - a->y0) / 5);
    a->y0 = floor(a->y0 / a->ys + 1e-9) * a->ys;
    a->y1 = ceil(a->y1 / a->ys - 1e-9) * a->ys;
  }
  a->xs = nice_step((a->x1 - a->x0) / 6);
}

/* Grid lines, tick labels, the frame and the axis labels. */
static void write_grid(replay_out *o, const replay_plot *p, const plot_axes *a) {
  const double xs = a->xs, ys = a->ys;
  for (double tx = ceil(a->x0 / xs - 1e-9) * xs; tx <= a->x1 + 1e-9 * xs; tx += xs) {
    const double px = px_of(a, tx), v = fabs(tx) < 1e-9 * xs ? 0 : tx;
    replay_printf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%g\"/>", px, MT, px, MT + a->ph);
    replay_printf(o, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%g</text>", px, MT + a->ph + 14, v);
  }
  for (double ty = a->y0; ty <= a->y1 + 1e-9 * ys; ty += ys) {
    const double v = a->log_y ? pow(10, ty) : (fabs(ty) < 1e-9 * ys ? 0 : ty);
    const double py = py_of(a, v);
    replay_printf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\"/>", ML, py, ML + a->pw, py);
    replay_printf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>", ML - 4, py + 4, v);
  }
  replay_printf(o, "\n<rect class=\"axis\" x=\"%d\" y=\"%d\" width=\"%g\" height=\"%g\" fill=\"none\"/>", ML, MT, a->pw,
                a->ph);
  replay_printf(o, "<text x=\"%g\" y=\"%d\" text-anchor=\"middle\">", ML + a->pw / 2, H - 6);
  replay_html_text(o, p->xlabel);
  replay_printf(o, "</text><text transform=\"translate(14 %g) rotate(-90)\" text-anchor=\"middle\">", MT + a->ph / 2);
  replay_html_text(o, p->ylabel);
  replay_printf(o, "</text>\n");
}

/* The series: polylines broken at unusable points, dots when there are few points. */
static void write_series(replay_out *o, const replay_plot *p, const plot_axes *a) {
  for (int i = 0; i < p->nseries; ++i) {
    const replay_series *s = &p->series[i];
    const char *c = COLORS[i % NCOLORS];
    int open = 0;
    for (int k = 0; k < s->n; ++k) {
      if (!usable(p, s->y[k])) {
        if (open) replay_printf(o, "\"/>");
        open = 0;
        continue;
      }
      if (!open) replay_printf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
      replay_printf(o, "%s%.1f,%.1f", open ? " " : "", px_of(a, s->x[k]), py_of(a, s->y[k]));
      open = 1;
    }
    if (open) replay_printf(o, "\"/>");
    if (s->n <= 60)
      for (int k = 0; k < s->n; ++k)
        if (usable(p, s->y[k]))
          replay_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"/>", px_of(a, s->x[k]),
                        py_of(a, s->y[k]), c);
    replay_printf(o, "\n");
  }
}

/* The legend: one row per named series below the axes, or the one name at the top right. */
static void write_legend(replay_out *o, const replay_plot *p, const plot_axes *a, int legend_rows, int named) {
  if (legend_rows) {
    for (int i = 0, row = 0; i < p->nseries; ++i) {
      if (!p->series[i].name || !p->series[i].name[0]) continue;
      const double y = H + 10 + 14 * row++;
      replay_printf(o, "<line x1=\"%d\" y1=\"%g\" x2=\"%d\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"/>", ML, y - 4,
                    ML + 16, y - 4, COLORS[i % NCOLORS]);
      replay_printf(o, "<text x=\"%d\" y=\"%g\">", ML + 22, y);
      replay_html_text(o, p->series[i].name);
      replay_printf(o, "</text>");
    }
  } else if (named) {
    replay_printf(o, "<text x=\"%g\" y=\"16\" text-anchor=\"end\" fill=\"%s\">", ML + a->pw, COLORS[0]);
    replay_html_text(o, p->series[0].name);
    replay_printf(o, "</text>");
  }
}

static void write_plot(replay_out *o, const replay_plot *p) {
  plot_axes a = {.pw = W - ML - MR, .ph = H - MT - MB, .log_y = p->log_y};
  const int npts = plot_range(p, &a);
  /* a legend below the axes when several series have names, one per row */
  int named = 0;
  for (int i = 0; i < p->nseries; ++i) named += p->series[i].name && p->series[i].name[0];
  const int legend_rows = p->nseries > 1 ? named : 0, h = H + (legend_rows ? 14 * legend_rows + 4 : 0);
  replay_printf(o, "<svg class=\"grit-plot%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                   "viewBox=\"0 0 %d %d\"",
                p->time_axis ? " time" : "", W, h, W, h);
  if (!npts) {
    replay_printf(o, "><text class=\"title\" x=\"%d\" y=\"16\">", ML);
    replay_html_text(o, p->title);
    replay_printf(o, "</text><text x=\"%d\" y=\"%d\">no data</text></svg>\n", ML, MT + 40);
    return;
  }
  plot_ticks(&a);
  if (p->time_axis)
    replay_printf(o, " data-x0=\"%.9g\" data-x1=\"%.9g\" data-px0=\"%d\" data-px1=\"%g\"", a.x0, a.x1, ML, ML + a.pw);
  replay_printf(o, "><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fff\"/>", W, h);
  replay_printf(o, "<text class=\"title\" x=\"%d\" y=\"16\">", ML);
  replay_html_text(o, p->title);
  replay_printf(o, "</text>\n");
  write_grid(o, p, &a);
  write_series(o, p, &a);
  write_legend(o, p, &a, legend_rows, named);
  if (p->time_axis)
    replay_printf(o, "<line class=\"cursor\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%g\"/>", ML, MT, ML, MT + a.ph);
  replay_printf(o, "</svg>\n");
}

/* A geometry's name for legends. */
static void geom_label(const grit_replay *r, int g, char *buf, size_t n) {
  grit_geom_def def;
  if (g >= 0 && grit_model_geom(r->m, g, &def) == GRIT_OK && def.name && def.name[0]) snprintf(buf, n, "%s", def.name);
  else snprintf(buf, n, "geom %d", g);
}

enum { MAX_PAIR_SERIES = 4 };

/* Contact impulses per step: totals (normal, friction) and the normal impulse of the pairs that carry the
 * most (when there are several pairs). Frames that do not follow a step are gaps. */
static void write_contact_plot(replay_out *o, const grit_replay *r) {
  const int nf = r->nframe;
  int npair = 0, cap = 0;
  int(*pairs)[2] = NULL;
  double *total = NULL;
  for (int i = 0; i < r->ncontact; ++i) {
    const int *g = r->contacts[i].geom;
    int k = 0;
    while (k < npair && !(pairs[k][0] == g[0] && pairs[k][1] == g[1])) ++k;
    if (k == npair) {
      if (npair == cap) {
        cap = cap ? 2 * cap : 16;
        void *pp = realloc(pairs, sizeof *pairs * (size_t)cap), *tt = realloc(total, sizeof *total * (size_t)cap);
        if (pp) pairs = pp;
        if (tt) total = tt;
        if (!pp || !tt) {
          o->error = 1;
          free(pairs), free(total);
          return;
        }
      }
      pairs[npair][0] = g[0], pairs[npair][1] = g[1], total[npair] = 0;
      npair++;
    }
    total[k] += r->contacts[i].normal_impulse;
  }
  int top[MAX_PAIR_SERIES], ntop = 0;
  if (npair > 1) /* the pairs with the largest total normal impulse, largest first */
    for (; ntop < MAX_PAIR_SERIES && ntop < npair; ++ntop) {
      int best = -1;
      for (int k = 0; k < npair; ++k) {
        int taken = 0;
        for (int j = 0; j < ntop; ++j) taken |= top[j] == k;
        if (!taken && (best < 0 || total[k] > total[best])) best = k;
      }
      top[ntop] = best;
    }
  replay_plot p;
  double *y = malloc(sizeof(double) * (size_t)nf * (size_t)(2 + ntop));
  if (!y || replay_plot_init(&p, "Contact impulses per step", "t (s)", "impulse (N s)", 0, 1, 2 + ntop)) {
    if (y) replay_plot_clear(&p);
    o->error = 1;
    free(y), free(pairs), free(total);
    return;
  }
  for (int f = 0; f < nf; ++f) {
    const int b = r->contact_begin[f], e = r->contact_begin[f + 1];
    const int stepped = r->newton[f] >= 0 || e > b;
    double *yf[2 + MAX_PAIR_SERIES];
    for (int s = 0; s < 2 + ntop; ++s) yf[s] = y + (size_t)s * nf + f, *yf[s] = stepped ? 0 : NAN;
    for (int i = b; i < e; ++i) {
      const grit_replay_contact *c = &r->contacts[i];
      *yf[0] += c->normal_impulse;
      *yf[1] += c->tangent_impulse;
      for (int s = 0; s < ntop; ++s)
        if (pairs[top[s]][0] == c->geom[0] && pairs[top[s]][1] == c->geom[1]) *yf[2 + s] += c->normal_impulse;
    }
  }
  int fail = replay_plot_set_series(&p, 0, "normal, all", r->t, y, nf);
  fail |= replay_plot_set_series(&p, 1, "friction, all", r->t, y + nf, nf);
  for (int s = 0; s < ntop; ++s) {
    char a[64], b[64], name[160];
    geom_label(r, pairs[top[s]][0], a, sizeof a);
    geom_label(r, pairs[top[s]][1], b, sizeof b);
    snprintf(name, sizeof name, "normal, %s / %s", a, b);
    fail |= replay_plot_set_series(&p, 2 + s, name, r->t, y + (size_t)(2 + s) * nf, nf);
  }
  if (fail) o->error = 1;
  else write_plot(o, &p);
  replay_plot_clear(&p);
  free(y), free(pairs), free(total);
}

static void write_newton_plot(replay_out *o, const grit_replay *r) {
  double *y = malloc(sizeof(double) * (size_t)r->nframe);
  replay_plot p;
  if (!y || replay_plot_init(&p, "Newton iterations per step", "t (s)", "iterations", 0, 1, 1)) {
    if (y) replay_plot_clear(&p);
    o->error = 1;
    free(y);
    return;
  }
  for (int f = 0; f < r->nframe; ++f) y[f] = r->newton[f] >= 0 ? r->newton[f] : NAN;
  if (replay_plot_set_series(&p, 0, NULL, r->t, y, r->nframe)) o->error = 1;
  else write_plot(o, &p);
  replay_plot_clear(&p);
  free(y);
}

void replay_write_plots(replay_out *o, const grit_replay *r) {
  int newton = 0;
  for (int f = 0; f < r->nframe; ++f) newton |= r->newton[f] >= 0;
  if (r->ncontact > 0) write_contact_plot(o, r);
  if (newton) write_newton_plot(o, r);
  for (int i = 0; i < r->nplot; ++i) write_plot(o, &r->plots[i]);
}
