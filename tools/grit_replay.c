/* SPDX-License-Identifier: Apache-2.0 */
/* grit replay — the `replay` command of the grit tool: a CSV trajectory to one HTML page (docs/viewer.md).
 *
 *   grit replay MODEL.xml --csv TRAJ.csv -o OUT.html [--title T] [--no-contacts] [--ctrl "..."]
 *               [--contact lagged|similar|sap] [--dt S] [--friction MU] [--stiffness K] [--dissipation D] [--quiet]
 *
 * The CSV's header names its columns: t, q0.. (required), v0.. and u0.. (optional), in any order; other
 * columns are ignored (grit sim --csv and the examples write such files). Every row is a frame. When the
 * rows carry velocities, the contacts drawn at row k+1 (arrows, impulse and Newton iteration plots) are
 * those of one step of the model from row k's state with row k's controls (u columns, else --ctrl, else
 * zero): the step is recomputed, so the model options must be the ones that made the trajectory. */
#define _POSIX_C_SOURCE 200809L
#include "grit_replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "grit/replay.h"

enum { EXIT_MODEL = 1, EXIT_USAGE = 2 };

typedef struct replay_args {
  const char *model, *csv, *out, *title, *ctrl;
  int contact, no_contacts, quiet;
  grit_mjcf_load_options load;
} replay_args;

static int usage(const char *fmt, const char *what) {
  fprintf(stderr, "grit: usage error: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see grit --help)\n");
  return EXIT_USAGE;
}

static int parse(int argc, char **argv, replay_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->load = grit_mjcf_default_load_options();
  for (int i = 2; i < argc; ++i) {
    const char *o = argv[i];
    if (o[0] != '-') {
      if (a->model) return usage("unexpected argument '%s'", o);
      a->model = o;
      continue;
    }
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    if (!strcmp(o, "--no-contacts")) {
      a->no_contacts = 1;
      continue;
    }
    if (i + 1 >= argc) return usage("option '%s' needs a value", o);
    const char *v = argv[++i];
    char *end = NULL;
    double x = strtod(v, &end);
    const int num = end != v && *end == '\0' && isfinite(x);
    if (!strcmp(o, "--csv")) {
      a->csv = v;
    } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
      a->out = v;
    } else if (!strcmp(o, "--title")) {
      a->title = v;
    } else if (!strcmp(o, "--ctrl")) {
      a->ctrl = v;
    } else if (!strcmp(o, "--contact")) {
      static const char *const names[] = {"lagged", "similar", "sap"};
      for (int k = 0; k < 3; ++k)
        if (!strcmp(v, names[k])) a->contact = k;
      if (a->contact < 0) return usage("--contact needs lagged, similar or sap, not '%s'", v);
    } else if (!strcmp(o, "--dt")) {
      if (!num || !(x > 0)) return usage("--dt needs a positive number, not '%s'", v);
      a->load.timestep = x;
    } else if (!strcmp(o, "--friction")) {
      if (!num || x < 0) return usage("--friction needs a number >= 0, not '%s'", v);
      a->load.friction = x;
    } else if (!strcmp(o, "--stiffness")) {
      if (!num || !(x > 0)) return usage("--stiffness needs a positive number, not '%s'", v);
      a->load.stiffness = x;
    } else if (!strcmp(o, "--dissipation")) {
      if (!num || x < 0) return usage("--dissipation needs a number >= 0, not '%s'", v);
      a->load.dissipation = x;
    } else {
      return usage("unknown option '%s'", o);
    }
  }
  if (!a->model) return usage("%s needs a model file", "replay");
  if (!a->csv) return usage("%s needs --csv TRAJ.csv", "replay");
  if (!a->out) return usage("%s needs -o OUT.html", "replay");
  return 0;
}

/* Reads one line of any length into *buf (grown as needed); its length, or -1 at the end of the file. */
static long read_line(FILE *f, char **buf, size_t *cap) {
  size_t n = 0;
  int c;
  while ((c = getc(f)) != EOF && c != '\n') {
    if (n + 2 > *cap) {
      size_t nc = *cap ? 2 * *cap : 4096;
      char *b = realloc(*buf, nc);
      if (!b) return -2;
      *buf = b, *cap = nc;
    }
    (*buf)[n++] = (char)c;
  }
  if (c == EOF && n == 0) return -1;
  if (!*buf && !(*buf = malloc(1))) return -2;
  if (n && (*buf)[n - 1] == '\r') --n;
  (*buf)[n] = '\0';
  return (long)n;
}

/* The columns of the CSV for t, q, v, u (-1: absent). */
typedef struct columns {
  int ncol, t, *q, *v, *u;
} columns;

static int header(char *line, columns *c, int nq, int nv, int nu) {
  c->ncol = 0;
  c->t = -1;
  for (int i = 0; i < nq; ++i) c->q[i] = -1;
  for (int i = 0; i < nv; ++i) c->v[i] = -1;
  for (int i = 0; i < nu; ++i) c->u[i] = -1;
  for (char *tok = line, *next; tok; tok = next, c->ncol++) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    while (*tok == ' ' || *tok == '"') ++tok;
    size_t len = strlen(tok);
    while (len && (tok[len - 1] == ' ' || tok[len - 1] == '"')) tok[--len] = '\0';
    char *end = NULL;
    long k = (len > 1 && strchr("qvu", tok[0])) ? strtol(tok + 1, &end, 10) : -1;
    if (!strcmp(tok, "t")) c->t = c->ncol;
    else if (end && *end == '\0' && k >= 0) {
      if (tok[0] == 'q' && k < nq) c->q[k] = c->ncol;
      if (tok[0] == 'v' && k < nv) c->v[k] = c->ncol;
      if (tok[0] == 'u' && k < nu) c->u[k] = c->ncol;
    }
  }
  if (c->t < 0) return -1;
  for (int i = 0; i < nq; ++i)
    if (c->q[i] < 0) return -2 - i;
  return 0;
}

/* Splits a data row into ncol fields: numbers, or NAN for empty fields. 0, or the 1-based bad column. */
static int row_values(char *line, double *x, int ncol) {
  int i = 0;
  for (char *tok = line, *next; tok && i < ncol; tok = next, ++i) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    while (*tok == ' ') ++tok;
    if (*tok == '\0') {
      x[i] = NAN;
      continue;
    }
    char *end = NULL;
    errno = 0;
    x[i] = strtod(tok, &end);
    while (*end == ' ') ++end;
    if (end == tok || *end != '\0' || !isfinite(x[i])) return i + 1;
  }
  for (; i < ncol; ++i) x[i] = NAN;
  return 0;
}

static int parse_vector(const char *s, double *out, int n) {
  int count = 0;
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == ',') ++s;
    if (!*s) break;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v)) return -1;
    if (count < n) out[count] = v;
    count++;
    s = end;
  }
  return count;
}

int grit_cli_replay(int argc, char **argv) {
  replay_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc;
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_mjcf_load_file_with(a.model, &a.load, &m, &info, msg) != GRIT_OK) {
    fprintf(stderr, "grit: error: %s\n", msg);
    grit_mjcf_info_free(&info);
    return EXIT_MODEL;
  }
  if (!a.quiet)
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i)
      fprintf(stderr, "grit: warning: %s\n", info.warnings[i]);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  grit_step_settings settings = info.settings;
  if (a.contact >= 0) settings.contact_model = (grit_contact_model)a.contact;
  grit_mjcf_info_free(&info);

  FILE *f = NULL;
  grit_data *d = NULL;
  grit_replay *r = NULL;
  char *line = NULL;
  size_t cap = 0;
  columns c = {0, -1, calloc((size_t)nq + 1, sizeof(int)), calloc((size_t)nv + 1, sizeof(int)),
               calloc((size_t)nu + 1, sizeof(int))};
  double *x = NULL, *prev = NULL, *q = malloc(sizeof(double) * (size_t)(nq + 1));
  double *u_default = calloc((size_t)nu + 1, sizeof(double)), *u = malloc(sizeof(double) * (size_t)(nu + 1));
  double *v = malloc(sizeof(double) * (size_t)(nv + 1)), *pq = malloc(sizeof(double) * (size_t)(nq + 1));
  if (!c.q || !c.v || !c.u || !q || !u_default || !u || !v || !pq || grit_data_create(m, &d) != GRIT_OK ||
      grit_replay_create(m, &r) != GRIT_OK) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (!rc && grit_data_set_step_settings(d, &settings) != GRIT_OK) {
    fprintf(stderr, "grit: error: step settings rejected: %s\n", grit_data_last_error(d));
    rc = EXIT_MODEL;
  }
  if (!rc && a.ctrl) {
    int n = parse_vector(a.ctrl, u_default, nu);
    if (n != nu) rc = usage("--ctrl needs the model's nu numbers: '%s'", a.ctrl);
  }
  if (!rc && !(f = fopen(a.csv, "r"))) {
    fprintf(stderr, "grit: error: cannot read %s: %s\n", a.csv, strerror(errno));
    rc = EXIT_MODEL;
  }
  long len = rc ? -1 : read_line(f, &line, &cap);
  if (!rc && len < 0) {
    fprintf(stderr, "grit: error: %s: empty file (a header line t,q0,... was expected)\n", a.csv);
    rc = EXIT_MODEL;
  }
  if (!rc) {
    int h = header(line, &c, nq, nv, nu);
    if (h == -1) fprintf(stderr, "grit: error: %s: the header has no column 't'\n", a.csv);
    else if (h < -1) fprintf(stderr, "grit: error: %s: the header has no column 'q%d' (the model has nq = %d)\n", a.csv, -2 - h, nq);
    if (h) rc = EXIT_MODEL;
  }
  int have_v = !rc && !a.no_contacts, have_u = !rc;
  for (int i = 0; !rc && i < nv; ++i) have_v &= c.v[i] >= 0;
  for (int i = 0; !rc && i < nu; ++i) have_u &= c.u[i] >= 0;
  if (!rc && (!(x = malloc(sizeof(double) * (size_t)c.ncol)) || !(prev = malloc(sizeof(double) * (size_t)c.ncol)))) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (!rc && !a.no_contacts && !have_v && !a.quiet)
    fprintf(stderr, "grit: warning: %s has no velocity columns v0..v%d: no contacts are drawn\n", a.csv, nv - 1);
  long row = 1, failed_steps = 0;
  while (!rc && (len = read_line(f, &line, &cap)) >= 0) {
    ++row;
    if (len == 0) continue;
    int bad = row_values(line, x, c.ncol);
    if (bad) {
      fprintf(stderr, "grit: error: %s:%ld: column %d is not a number\n", a.csv, row, bad);
      rc = EXIT_MODEL;
      break;
    }
    for (int i = 0; i < nq; ++i) q[i] = x[c.q[i]];
    int finite = isfinite(x[c.t]);
    for (int i = 0; i < nq; ++i) finite &= isfinite(q[i]) != 0;
    if (!finite) {
      fprintf(stderr, "grit: error: %s:%ld: t or a q column is empty\n", a.csv, row);
      rc = EXIT_MODEL;
      break;
    }
    /* the step from the previous row, for its contacts and Newton iterations */
    int stepped = 0;
    if (have_v && grit_replay_nframes(r) > 0) {
      int ok = 1;
      for (int i = 0; i < nq; ++i) pq[i] = prev[c.q[i]];
      for (int i = 0; i < nv; ++i) ok &= isfinite(v[i] = prev[c.v[i]]) != 0;
      for (int i = 0; i < nu; ++i) {
        u[i] = have_u ? prev[c.u[i]] : u_default[i];
        if (!isfinite(u[i])) u[i] = u_default[i];
      }
      if (ok && grit_data_set_qpos(d, pq, nq) == GRIT_OK && grit_data_set_qvel(d, v, nv) == GRIT_OK &&
          (nu == 0 || grit_data_set_ctrl(d, u, nu) == GRIT_OK) && grit_step(d) == GRIT_OK)
        stepped = 1;
      else
        failed_steps++;
    }
    /* the frame at the row's own positions, with the recomputed step's contacts */
    grit_status s;
    if (stepped) {
      grit_data_set_time(d, x[c.t]);
      s = grit_data_set_qpos(d, q, nq);
      if (s == GRIT_OK) s = grit_replay_add_data(r, d, 1);
      else grit_replay_add_frame(r, x[c.t], q, nq, NULL, 0, -1); /* sets the replay's message */
    } else {
      s = grit_replay_add_frame(r, x[c.t], q, nq, NULL, 0, -1);
    }
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: %s:%ld: %s\n", a.csv, row, grit_replay_last_error(r));
      rc = EXIT_MODEL;
    }
    double *tmp = prev;
    prev = x, x = tmp;
  }
  if (!rc && len == -2) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (!rc && grit_replay_nframes(r) == 0) {
    fprintf(stderr, "grit: error: %s has no data rows\n", a.csv);
    rc = EXIT_MODEL;
  }
  if (!rc && failed_steps && !a.quiet)
    fprintf(stderr, "grit: warning: %ld recomputed steps failed; their frames show no contacts\n", failed_steps);
  if (!rc) {
    char title[512];
    if (a.title) snprintf(title, sizeof title, "%s", a.title);
    else snprintf(title, sizeof title, "%s: %s", a.model, a.csv);
    if (grit_replay_set_title(r, title) != GRIT_OK || grit_replay_write_html(r, a.out) != GRIT_OK) {
      fprintf(stderr, "grit: error: %s\n", grit_replay_last_error(r));
      rc = EXIT_MODEL;
    }
  }
  if (!rc) printf("{\"frames\":%d,\"contacts\":%s}\n", grit_replay_nframes(r), have_v ? "true" : "false");
  if (f) fclose(f);
  free(line), free(c.q), free(c.v), free(c.u), free(x), free(prev), free(q), free(u_default), free(u), free(v), free(pq);
  grit_replay_free(r);
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}
