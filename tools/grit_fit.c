/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit.c — `grit fit`: contact parameters (and masses) fitted to a recorded trajectory (grit_fit,
 * grit/sysid.h, docs/sysid.md).
 *
 *   grit fit MODEL.xml --data FILE.csv --param NAME[:WHICH]=GUESS ... [--contact lagged|similar|sap]
 *            [--dt S] [--ctrl "..."] [--segment K] [--reset] [--sigma-q S] [--sigma-v S] [--max-iters N]
 *            [--quiet]
 *
 * The data are in the CSV format of `grit sim --csv`: a header naming the columns t, q0.., v0.., and
 * optionally u0.. (the controls held over the step that starts at that row; without them the controls
 * are --ctrl, or zero), then one row per sample, the first the initial state, the times spaced by the
 * model's timestep. NAME is friction, stiffness or dissipation (every geometry, or with :WHICH one
 * geometry by name or index) or mass:WHICH (a body by name or index). The output is one JSON object:
 * each parameter's fitted value under its spelling on the command line (friction, stiffness:ball, ...)
 * and its standard deviation under NAME_std, then iterations, evaluations, residual (the weighted
 * residual's root mean square: ~1 when --sigma-q and --sigma-v are the noise's), cost, initial_cost,
 * sigma2, samples, segments and converged. A fit that stops at --max-iters is reported with
 * "converged":false and exit status 0. */
#define _POSIX_C_SOURCE 200809L
#include "grit_fit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"

enum { EXIT_MODEL = 1, EXIT_USAGE = 2, MAX_PARAMS = 16 };

typedef struct fit_args {
  const char *model, *data, *ctrl;
  const char *spec[MAX_PARAMS]; /* NAME[:WHICH] as given */
  double guess[MAX_PARAMS];
  int np, contact, quiet;
  grit_fit_options opt;
  double dt;
} fit_args;

static int usage(const char *fmt, const char *what) {
  fprintf(stderr, "grit: usage error: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see grit --help)\n");
  return EXIT_USAGE;
}

static int fail(const char *fmt, const char *what) {
  fprintf(stderr, "grit: error: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return EXIT_MODEL;
}

static double number(const char *s, int *ok) {
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  *ok = end != s && *end == '\0' && isfinite(v);
  return v;
}

static int parse(int argc, char **argv, fit_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->opt = grit_default_fit_options();
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
    if (!strcmp(o, "--reset")) {
      a->opt.fit_initial_states = 0;
      continue;
    }
    if (i + 1 >= argc) return usage("option '%s' needs a value", o);
    const char *v = argv[++i];
    int ok = 1;
    if (!strcmp(o, "--data")) {
      a->data = v;
    } else if (!strcmp(o, "--ctrl")) {
      a->ctrl = v;
    } else if (!strcmp(o, "--param")) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v) return usage("--param needs NAME[:WHICH]=GUESS, not '%s'", v);
      for (const char *c = v; c < eq; ++c)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) return usage("--param '%s': a name with a quote, backslash or control character", v);
      if (a->np == MAX_PARAMS) return usage("too many --param options at '%s' (at most 16)", v);
      a->guess[a->np] = number(eq + 1, &ok);
      if (!ok || !(a->guess[a->np] > 0)) return usage("--param needs a positive finite guess, not '%s'", v);
      a->spec[a->np++] = v;
    } else if (!strcmp(o, "--contact")) {
      static const char *const names[] = {"lagged", "similar", "sap"};
      for (int k = 0; k < 3; ++k)
        if (!strcmp(v, names[k])) a->contact = k;
      if (a->contact < 0) return usage("--contact needs lagged, similar or sap, not '%s'", v);
    } else if (!strcmp(o, "--dt")) {
      a->dt = number(v, &ok);
      if (!ok || !(a->dt > 0)) return usage("--dt needs a positive number, not '%s'", v);
    } else if (!strcmp(o, "--segment") || !strcmp(o, "--max-iters")) {
      const double n = number(v, &ok);
      if (!ok || n < 1 || n > 1e9 || n != floor(n)) return usage("%s needs an integer >= 1", o);
      if (!strcmp(o, "--segment")) a->opt.segment_steps = (int)n;
      else a->opt.max_iters = (int)n;
    } else if (!strcmp(o, "--sigma-q") || !strcmp(o, "--sigma-v")) {
      const double s = number(v, &ok);
      if (!ok || !(s > 0)) return usage("%s needs a positive number", o);
      if (!strcmp(o, "--sigma-q")) a->opt.position_sigma = s;
      else a->opt.velocity_sigma = s;
    } else {
      return usage("unknown option '%s'", o);
    }
  }
  if (!a->model) return usage("%s needs a model file", "fit");
  if (!a->data) return usage("%s needs --data FILE.csv", "fit");
  if (a->np == 0) return usage("%s needs at least one --param NAME=GUESS", "fit");
  return 0;
}

/* NAME[:WHICH] of a --param into a grit_param; 0 or an exit status. */
static int resolve(const grit_model *m, const char *spec, grit_param *p) {
  char name[64], which[192] = "";
  const size_t n = strcspn(spec, ":=");
  if (n >= sizeof name) return usage("unknown parameter in '%s'", spec);
  memcpy(name, spec, n);
  name[n] = '\0';
  if (spec[n] == ':') {
    const size_t w = strcspn(spec + n + 1, "=");
    if (w == 0 || w >= sizeof which) return usage("--param '%s' names no geometry or body after ':'", spec);
    memcpy(which, spec + n + 1, w);
    which[w] = '\0';
  }
  static const char *const kinds[] = {"friction", "stiffness", "dissipation", "mass"};
  int kind = -1;
  for (int k = 0; k < 4; ++k)
    if (!strcmp(name, kinds[k])) kind = k;
  if (kind < 0) return usage("--param '%s': the name must be friction, stiffness, dissipation or mass", spec);
  p->kind = (grit_param_kind)kind;
  p->index = -1;
  if (kind == GRIT_PARAM_MASS && !which[0]) return usage("--param '%s': mass needs :BODY", spec);
  if (which[0]) {
    int ok;
    const double idx = number(which, &ok);
    p->index = kind == GRIT_PARAM_MASS ? grit_model_body_index(m, which) : grit_model_geom_index(m, which);
    if (p->index < 0 && ok && idx == floor(idx) && idx >= 0 && idx < 1e9) p->index = (int)idx;
    const int count = kind == GRIT_PARAM_MASS ? grit_model_nbody(m) : grit_model_ngeom(m);
    if (p->index < (kind == GRIT_PARAM_MASS ? 1 : 0) || p->index >= count) {
      fprintf(stderr, "grit: error: --param '%s': the model has no %s '%s'\n", spec,
              kind == GRIT_PARAM_MASS ? "body" : "geometry", which);
      return EXIT_MODEL;
    }
  }
  return 0;
}

/* The CSV data: samples rows of the model's q, v (and u when the file has u0..). */
typedef struct table {
  int rows, has_u;
  double *t, *q, *v, *u;
} table;

static void table_free(table *t) { free(t->t), free(t->q), free(t->v), free(t->u); }

/* Reads one line of any length into *buf; 0 at the end of the file. */
static int read_line(FILE *f, char **buf, size_t *cap) {
  size_t n = 0;
  int c;
  while ((c = fgetc(f)) != EOF && c != '\n') {
    if (n + 2 > *cap) {
      size_t nc = *cap ? 2 * *cap : 1024;
      char *b = realloc(*buf, nc);
      if (!b) return -1;
      *buf = b, *cap = nc;
    }
    (*buf)[n++] = (char)c;
  }
  if (c == EOF && n == 0) return 0;
  if (!*buf && !(*buf = malloc(1))) return -1;
  if (n && (*buf)[n - 1] == '\r') n--;
  (*buf)[n] = '\0';
  return 1;
}

static int read_table(const char *path, const grit_model *m, table *tb) {
  memset(tb, 0, sizeof *tb);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "grit: error: cannot read %s: %s\n", path, strerror(errno));
    return EXIT_MODEL;
  }
  char *line = NULL;
  size_t cap = 0;
  int rc = 0, ncol = 0, *col = NULL; /* col[c]: 0 t, 1+i q_i, 1+nq+i v_i, 1+nq+nv+i u_i, -1 other */
  if (read_line(f, &line, &cap) != 1) {
    fprintf(stderr, "grit: error: %s: no header line\n", path);
    rc = EXIT_MODEL;
  }
  const int nslots = 1 + nq + nv + nu;
  int *seen = calloc((size_t)nslots, sizeof *seen);
  if (!rc && !seen) rc = fail("%s", "out of memory");
  for (char *s = rc ? NULL : line; s;) { /* the header */
    char *comma = strchr(s, ',');
    if (comma) *comma = '\0';
    int *nc = realloc(col, sizeof *col * (size_t)(ncol + 1));
    if (!nc) {
      rc = fail("%s", "out of memory");
      break;
    }
    col = nc;
    int slot = -1, i = -1;
    char extra;
    if (!strcmp(s, "t")) slot = 0;
    else if (sscanf(s, "q%d%c", &i, &extra) == 1 && i >= 0 && i < nq) slot = 1 + i;
    else if (sscanf(s, "v%d%c", &i, &extra) == 1 && i >= 0 && i < nv) slot = 1 + nq + i;
    else if (sscanf(s, "u%d%c", &i, &extra) == 1 && i >= 0 && i < nu) slot = 1 + nq + nv + i;
    if (slot >= 0 && seen[slot]++) {
      fprintf(stderr, "grit: error: %s: column '%s' appears twice\n", path, s);
      rc = EXIT_MODEL;
      break;
    }
    col[ncol++] = slot;
    s = comma ? comma + 1 : NULL;
  }
  int nuseen = 0;
  for (int k = 0; !rc && k < nslots; ++k) {
    if (k > nq + nv) nuseen += seen[k];
    else if (!seen[k]) {
      fprintf(stderr, "grit: error: %s: the header lacks column %s%d (the model has nq = %d, nv = %d)\n", path,
              k == 0 ? "t" : k <= nq ? "q" : "v", k == 0 ? 0 : k <= nq ? k - 1 : k - 1 - nq, nq, nv);
      rc = EXIT_MODEL;
    }
  }
  if (!rc && nuseen && nuseen != nu) {
    fprintf(stderr, "grit: error: %s: %d of the model's %d control columns u0.. (all or none)\n", path, nuseen, nu);
    rc = EXIT_MODEL;
  }
  tb->has_u = nuseen > 0;
  int cap_rows = 0;
  double *vals = malloc(sizeof(double) * (size_t)(nslots + 1));
  if (!rc && !vals) rc = fail("%s", "out of memory");
  for (int lineno = 2; !rc; ++lineno) {
    const int got = read_line(f, &line, &cap);
    if (got < 0) rc = fail("%s", "out of memory");
    if (got <= 0) break;
    if (!line[0]) continue;
    char *s = line;
    for (int c = 0; c < ncol; ++c) {
      char *end;
      const double x = strtod(s, &end);
      if (end == s || !isfinite(x) || (c + 1 < ncol ? *end != ',' : *end != '\0')) {
        fprintf(stderr, "grit: error: %s:%d: column %d is not a finite number (or the row has %s columns than the header)\n",
                path, lineno, c + 1, *end == '\0' && c + 1 < ncol ? "fewer" : "other");
        rc = EXIT_MODEL;
        break;
      }
      if (col[c] >= 0) vals[col[c]] = x;
      s = end + 1;
    }
    if (rc) break;
    if (tb->rows == cap_rows) {
      cap_rows = cap_rows ? 2 * cap_rows : 1024;
      double *t = realloc(tb->t, sizeof(double) * (size_t)cap_rows);
      if (t) tb->t = t;
      double *q = realloc(tb->q, sizeof(double) * (size_t)cap_rows * nq);
      if (q) tb->q = q;
      double *v = realloc(tb->v, sizeof(double) * (size_t)cap_rows * nv);
      if (v) tb->v = v;
      double *u = realloc(tb->u, sizeof(double) * ((size_t)cap_rows * nu + 1));
      if (u) tb->u = u;
      if (!t || !q || !v || !u) {
        rc = fail("%s", "out of memory");
        break;
      }
    }
    tb->t[tb->rows] = vals[0];
    memcpy(tb->q + (size_t)tb->rows * nq, vals + 1, sizeof(double) * (size_t)nq);
    memcpy(tb->v + (size_t)tb->rows * nv, vals + 1 + nq, sizeof(double) * (size_t)nv);
    if (tb->has_u) memcpy(tb->u + (size_t)tb->rows * nu, vals + 1 + nq + nv, sizeof(double) * (size_t)nu);
    tb->rows++;
  }
  if (!rc && ferror(f)) rc = fail("reading %s failed", path);
  if (!rc && tb->rows < 2) {
    fprintf(stderr, "grit: error: %s: %d samples; a fit needs at least 2 (the initial state and one step)\n", path, tb->rows);
    rc = EXIT_MODEL;
  }
  const double dt = grit_model_options(m).timestep;
  for (int k = 1; !rc && k < tb->rows; ++k)
    if (fabs(tb->t[k] - tb->t[k - 1] - dt) > 1e-6 * dt) {
      fprintf(stderr, "grit: error: %s: samples %d and %d are %.9g s apart, not the model's timestep %g s (see --dt)\n", path,
              k - 1, k, tb->t[k] - tb->t[k - 1], dt);
      rc = EXIT_MODEL;
    }
  free(vals), free(seen), free(col), free(line);
  fclose(f);
  return rc;
}

int grit_fit_command(int argc, char **argv) {
  fit_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc;
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = a.dt;
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = grit_mjcf_load_file_with(a.model, &lo, &m, &info, msg);
  if (!a.quiet)
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) fprintf(stderr, "grit: warning: %s\n", info.warnings[i]);
  if (s != GRIT_OK) {
    grit_mjcf_info_free(&info);
    return fail("%s", msg);
  }
  a.opt.settings = info.settings;
  if (a.opt.settings.rel_tol > 1e-8) a.opt.settings.rel_tol = 1e-8; /* smooth rollouts in the parameters */
  if (a.contact >= 0) a.opt.settings.contact_model = (grit_contact_model)a.contact;
  grit_mjcf_info_free(&info);
  grit_param params[MAX_PARAMS];
  for (int i = 0; !rc && i < a.np; ++i) rc = resolve(m, a.spec[i], &params[i]);
  table tb;
  memset(&tb, 0, sizeof tb);
  if (!rc) rc = read_table(a.data, m, &tb);
  const int nu = grit_model_nu(m);
  double *ctrl = NULL;
  if (!rc && !tb.has_u && a.ctrl && nu > 0) { /* --ctrl held over every step */
    double *u = malloc(sizeof(double) * (size_t)nu);
    ctrl = malloc(sizeof(double) * (size_t)tb.rows * nu);
    int count = 0;
    for (const char *p = a.ctrl; u && ctrl && *p;) {
      char *end;
      while (*p == ' ' || *p == ',' || *p == '\t') ++p;
      if (!*p) break;
      const double x = strtod(p, &end);
      if (end == p || !isfinite(x)) {
        count = -1;
        break;
      }
      if (count < nu) u[count] = x;
      count++;
      p = end;
    }
    if (!u || !ctrl) rc = fail("%s", "out of memory");
    else if (count != nu) {
      fprintf(stderr, "grit: usage error: --ctrl needs %d finite numbers (the model's nu) (see grit --help)\n", nu);
      rc = EXIT_USAGE;
    }
    for (int k = 0; !rc && k < tb.rows; ++k) memcpy(ctrl + (size_t)k * nu, u, sizeof(double) * (size_t)nu);
    free(u);
  }
  if (!rc) {
    const grit_trajectory tr = {tb.rows - 1, tb.q, tb.v, tb.has_u ? tb.u : ctrl};
    double val[MAX_PARAMS], std[MAX_PARAMS];
    memcpy(val, a.guess, sizeof val);
    grit_fit_result res;
    s = grit_fit(m, &tr, 1, params, a.np, val, &a.opt, &res, std, NULL, msg);
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: fit failed (%s): %s\n", grit_status_string(s), msg);
      rc = EXIT_MODEL;
    } else {
      printf("{");
      for (int i = 0; i < a.np; ++i) {
        const int n = (int)strcspn(a.spec[i], "=");
        printf("\"%.*s\":%.17g,\"%.*s_std\":", n, a.spec[i], val[i], n, a.spec[i]);
        if (isfinite(std[i])) printf("%.6g,", std[i]);
        else printf("null,");
      }
      printf("\"iterations\":%d,\"evaluations\":%d,\"residual\":%.6g,\"cost\":%.9g,\"initial_cost\":%.9g,"
             "\"sigma2\":%.6g,\"samples\":%d,\"segments\":%d,\"converged\":%s}\n",
             res.iterations, res.evaluations, res.rms, res.cost, res.initial_cost, res.sigma2, tb.rows, res.nsegments,
             res.converged ? "true" : "false");
    }
  }
  free(ctrl);
  table_free(&tb);
  grit_model_free(m);
  return rc;
}
