/* SPDX-License-Identifier: Apache-2.0 */
/* cli.c — the grit tool's shared option parser, messages, numbers and CSV reader (see cli.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"

static void message(const char *head, const char *tail, const char *fmt, va_list ap) {
  fputs(head, stderr);
  vfprintf(stderr, fmt, ap);
  fputs(tail, stderr);
}

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  message("grit: usage error: ", " (see grit --help)\n", fmt, ap);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

int cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  message("grit: error: ", "\n", fmt, ap);
  va_end(ap);
  return CLI_EXIT_MODEL;
}

void cli_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  message("grit: warning: ", "\n", fmt, ap);
  va_end(ap);
}

double cli_number(const char *s, int *ok) {
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  *ok = end != s && *end == '\0' && isfinite(v);
  return v;
}

int cli_numbers(const char *s, double *out, int n) {
  int count = 0;
  while (*s) {
    char *end = NULL;
    while (*s == ' ' || *s == '\t' || *s == ',') ++s;
    if (!*s) break;
    const double v = strtod(s, &end);
    if (end == s || !isfinite(v) || (*end && *end != ' ' && *end != '\t' && *end != ',')) return -1;
    if (count < n) out[count] = v;
    count++;
    s = end;
  }
  return count;
}

/* One option's value into its destination; 0 or an exit status. */
static int take_value(const cli_option *o, const char *name, const char *v) {
  int ok = 1;
  switch (o->kind) {
    case CLI_TEXT: *(const char **)o->dest = v; return 0;
    case CLI_CALL: return o->call(o->ctx, name, v);
    case CLI_NUMBER: {
      const double x = cli_number(v, &ok);
      if (o->max != 0 ? ok && x > o->min : ok && x >= o->min) return *(double *)o->dest = x, 0;
      if (o->min == 0) return cli_usage_error("%s needs a %s, not '%s'", name, o->max != 0 ? "positive number" : "number >= 0", v);
      return cli_usage_error("%s needs a number %s %g, not '%s'", name, o->max != 0 ? ">" : ">=", o->min, v);
    }
    case CLI_INTEGER: {
      const double x = cli_number(v, &ok);
      if (ok && x >= o->min && x <= o->max && x == floor(x)) return *(long *)o->dest = (long)x, 0;
      return cli_usage_error("%s needs an integer in [%g, %g], not '%s'", name, o->min, o->max, v);
    }
    case CLI_CHOICE: {
      for (int k = 0; o->choices[k]; ++k)
        if (!strcmp(v, o->choices[k])) return *(int *)o->dest = k, 0;
      char list[256] = "";
      for (int k = 0; o->choices[k]; ++k)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? (o->choices[k + 1] ? ", " : " or ") : "",
                 o->choices[k]);
      return cli_usage_error("%s needs %s, not '%s'", name, list, v);
    }
    case CLI_FLAG: break;
  }
  return 0;
}

int cli_parse(int argc, char **argv, const cli_option *options, int noptions, const char **positional,
              const char *usage) {
  *positional = NULL;
  for (int i = 2; i < argc; ++i) {
    const char *name = argv[i];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
      printf("usage: %s", usage + strspn(usage, " ")); /* the lines are indented for this prefix */
      return CLI_HELP;
    }
    if (name[0] != '-' || !name[1]) {
      if (*positional) return cli_usage_error("unexpected argument '%s'", name);
      *positional = name;
      continue;
    }
    const cli_option *o = NULL;
    for (int k = 0; k < noptions && !o; ++k)
      if (!strcmp(name, options[k].name) || (options[k].alt && !strcmp(name, options[k].alt))) o = &options[k];
    if (!o) return cli_usage_error("unknown option '%s'", name);
    if (o->kind == CLI_FLAG) {
      *(int *)o->dest = o->value;
      continue;
    }
    if (i + 1 >= argc) return cli_usage_error("option '%s' needs a value", name);
    const int rc = take_value(o, name, argv[++i]);
    if (rc) return rc;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------- CSV */

long cli_read_line(FILE *f, char **buf, size_t *cap) {
  size_t n = 0;
  int c;
  while ((c = getc(f)) != EOF && c != '\n') {
    if (n + 2 > *cap) {
      const size_t nc = *cap ? 2 * *cap : 4096;
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

/* The slot of a header name: 0 t, 1+i q_i, 1+nq+i v_i, 1+nq+nv+i u_i; -1 another column. */
static int slot_of(char *tok, int nq, int nv, int nu) {
  while (*tok == ' ' || *tok == '"') ++tok;
  size_t len = strlen(tok);
  while (len && (tok[len - 1] == ' ' || tok[len - 1] == '"')) tok[--len] = '\0';
  if (!strcmp(tok, "t")) return 0;
  char *end = NULL;
  const long k = (len > 1 && strchr("qvu", tok[0]) && tok[1] >= '0' && tok[1] <= '9') ? strtol(tok + 1, &end, 10) : -1;
  if (!end || *end != '\0' || k < 0) return -1;
  if (tok[0] == 'q') return k < nq ? 1 + (int)k : -1;
  if (tok[0] == 'v') return k < nv ? 1 + nq + (int)k : -1;
  return k < nu ? 1 + nq + nv + (int)k : -1;
}

/* The header into col[] (the slot of each column) and seen[] (count per slot); 0 or an exit status. */
static int read_header(const char *path, char *line, int nq, int nv, int nu, const cli_csv_rules *r, int **col,
                       int *ncol, int *seen, cli_table *tb) {
  for (char *tok = line, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next) *next++ = '\0';
    int *nc = realloc(*col, sizeof **col * (size_t)(*ncol + 1));
    if (!nc) return cli_error("out of memory");
    *col = nc;
    const int slot = slot_of(tok, nq, nv, nu);
    if (slot >= 0 && seen[slot]++) return cli_error("%s: column '%s' appears twice", path, tok);
    (*col)[(*ncol)++] = slot;
  }
  for (int k = 0; k <= nq; ++k)
    if (!seen[k])
      return cli_error("%s: the header lacks column %s%d (the model has nq = %d)", path, k ? "q" : "t", k ? k - 1 : 0, nq);
  int nvs = 0, nus = 0;
  for (int k = 0; k < nv; ++k) nvs += seen[1 + nq + k];
  for (int k = 0; k < nu; ++k) nus += seen[1 + nq + nv + k];
  for (int k = 0; r->need_v && k < nv; ++k)
    if (!seen[1 + nq + k]) return cli_error("%s: the header lacks column v%d (the model has nv = %d)", path, k, nv);
  if (nvs && nvs != nv) return cli_error("%s: %d of the model's %d velocity columns v0.. (all or none)", path, nvs, nv);
  if (nus && nus != nu) return cli_error("%s: %d of the model's %d control columns u0.. (all or none)", path, nus, nu);
  tb->has_v = nv > 0 && nvs == nv;
  tb->has_u = nu > 0 && nus == nu;
  return 0;
}

/* One data row into vals[slot]; 0, or the 1-based column that is not a number. */
static int read_row(char *line, const int *col, int ncol, double *vals, const cli_csv_rules *r, int nq) {
  int c = 0;
  for (char *tok = line, *next; c < ncol; tok = next, ++c) {
    next = tok ? strchr(tok, ',') : NULL;
    if (next) *next++ = '\0';
    if (!tok && r->nan_values) return c + 1; /* a short row: a missing field is not a masked one */
    while (tok && *tok == ' ') ++tok;
    double x = NAN;
    const int masked_ok = col[c] > 0 && (r->nan_values || (r->empty_vu && col[c] > nq)); /* never t */
    if (tok && *tok) {
      char *end = NULL;
      x = strtod(tok, &end);
      while (*end == ' ') ++end;
      if (end == tok || *end != '\0' || isinf(x) || (isnan(x) && !(masked_ok && r->nan_values))) return c + 1;
    } else if (col[c] >= 0 && !masked_ok) {
      return c + 1; /* t (and q unless masks are allowed) are required */
    }
    if (col[c] >= 0) vals[col[c]] = x;
  }
  return 0;
}

/* Room for one more row; 0 or an exit status. */
static int grow(cli_table *tb, int *cap, int nq, int nv, int nu) {
  if (tb->rows < *cap) return 0;
  *cap = *cap ? 2 * *cap : 1024;
  double *t = realloc(tb->t, sizeof(double) * (size_t)*cap);
  if (t) tb->t = t;
  double *q = realloc(tb->q, sizeof(double) * ((size_t)*cap * nq + 1));
  if (q) tb->q = q;
  double *v = realloc(tb->v, sizeof(double) * ((size_t)*cap * nv + 1));
  if (v) tb->v = v;
  double *u = realloc(tb->u, sizeof(double) * ((size_t)*cap * nu + 1));
  if (u) tb->u = u;
  return t && q && v && u ? 0 : cli_error("out of memory");
}

/* Appends the row in vals to tb; 0 or an exit status. */
static int append_row(cli_table *tb, int *cap_rows, const double *vals, int nq, int nv, int nu) {
  const int rc = grow(tb, cap_rows, nq, nv, nu);
  if (rc) return rc;
  tb->t[tb->rows] = vals[0];
  memcpy(tb->q + (size_t)tb->rows * nq, vals + 1, sizeof(double) * (size_t)nq);
  if (tb->has_v) memcpy(tb->v + (size_t)tb->rows * nv, vals + 1 + nq, sizeof(double) * (size_t)nv);
  if (tb->has_u) memcpy(tb->u + (size_t)tb->rows * nu, vals + 1 + nq + nv, sizeof(double) * (size_t)nu);
  tb->rows++;
  return 0;
}

/* The data rows after the header; 0 or an exit status. */
static int read_rows(FILE *f, const char *path, char **line, size_t *cap, const int *col, int ncol, double *vals,
                     const cli_csv_rules *r, int nq, int nv, int nu, cli_table *tb) {
  int rc = 0, cap_rows = 0;
  long len = 0;
  for (long lineno = 2; !rc && (len = cli_read_line(f, line, cap)) >= 0; ++lineno) {
    if (len == 0) continue;
    const int bad = read_row(*line, col, ncol, vals, r, nq);
    if (bad)
      return cli_error("%s:%ld: column %d is not a %s (or the row has fewer columns than the header)", path, lineno, bad,
                       r->nan_values ? "number, nan or empty (times: finite numbers)" : "finite number");
    if (r->increasing_t && tb->rows > 0 && !(vals[0] > tb->t[tb->rows - 1]))
      return cli_error("%s:%ld: time %.9g does not follow %.9g: times must be increasing", path, lineno, vals[0],
                       tb->t[tb->rows - 1]);
    rc = append_row(tb, &cap_rows, vals, nq, nv, nu);
  }
  if (!rc && len == -2) rc = cli_error("out of memory");
  if (!rc && ferror(f)) rc = cli_error("reading %s failed", path);
  return rc;
}

int cli_read_csv(const char *path, int nq, int nv, int nu, const cli_csv_rules *r, cli_table *tb) {
  memset(tb, 0, sizeof *tb);
  FILE *f = fopen(path, "r");
  if (!f) return cli_error("cannot read %s: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  int rc = 0, ncol = 0, *col = NULL;
  const int nslots = 1 + nq + nv + nu;
  int *seen = calloc((size_t)nslots, sizeof *seen);
  double *vals = malloc(sizeof(double) * (size_t)nslots);
  if (!seen || !vals) rc = cli_error("out of memory");
  const long len = rc ? -1 : cli_read_line(f, &line, &cap);
  if (!rc && len < 0) rc = len == -2 ? cli_error("out of memory") : cli_error("%s: empty file (a header line t,q0,... was expected)", path);
  if (!rc) rc = read_header(path, line, nq, nv, nu, r, &col, &ncol, seen, tb);
  if (!rc) rc = read_rows(f, path, &line, &cap, col, ncol, vals, r, nq, nv, nu, tb);
  const int min_rows = r->min_rows > 1 ? r->min_rows : 1;
  if (!rc && tb->rows == 0 && min_rows == 1) rc = cli_error("%s has no data rows", path);
  if (!rc && tb->rows < min_rows)
    rc = cli_error("%s: %d samples; %s", path, tb->rows, r->min_rows_why ? r->min_rows_why : "too few");
  free(vals), free(seen), free(col), free(line);
  fclose(f);
  if (rc) cli_table_free(tb);
  return rc;
}

int cli_read_table(const char *path, int nq, int nv, int nu, int allow_empty, cli_table *tb) {
  const cli_csv_rules rules = {.empty_vu = allow_empty, .min_rows = 1};
  return cli_read_csv(path, nq, nv, nu, &rules, tb);
}

void cli_table_free(cli_table *tb) {
  free(tb->t), free(tb->q), free(tb->v), free(tb->u);
  memset(tb, 0, sizeof *tb);
}

int cli_check_output(const char *what_out, const char *out, const char *what_in, const char *in) {
  if (out && in && grit_same_file(out, in))
    return cli_usage_error("%s %s is %s: refusing to overwrite an input", what_out, out, what_in);
  return 0;
}
