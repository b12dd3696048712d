/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit_data.c — reading the trajectories of `grit fit` (grit_fit_data.h). */
#define _POSIX_C_SOURCE 200809L
#include "grit_fit_data.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { EXIT_MODEL = 1 };

static int fail(const char *fmt, const char *what) {
  fprintf(stderr, "grit: error: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return EXIT_MODEL;
}

static int push(char ***paths, int *n, int *cap, const char *p, size_t len) {
  if (*n == *cap) {
    const int nc = *cap ? 2 * *cap : 64;
    char **np = realloc(*paths, sizeof *np * (size_t)nc);
    if (!np) return fail("%s", "out of memory");
    *paths = np, *cap = nc;
  }
  char *s = malloc(len + 1);
  if (!s) return fail("%s", "out of memory");
  memcpy(s, p, len);
  s[len] = '\0';
  (*paths)[(*n)++] = s;
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int ends_with(const char *s, const char *tail) {
  const size_t n = strlen(s), t = strlen(tail);
  return n >= t && !strcmp(s + n - t, tail);
}

/* Reads one line of any length into *buf; 0 at the end of the file, -1 out of memory. */
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

static int expand_dir(const char *dir, char ***paths, int *n, int *cap) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "grit: error: cannot read directory %s: %s\n", dir, strerror(errno));
    return EXIT_MODEL;
  }
  const int first = *n;
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d));) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, ".csv")) continue;
    const size_t len = strlen(dir) + 1 + strlen(e->d_name);
    char *p = malloc(len + 1);
    if (!p) rc = fail("%s", "out of memory");
    else {
      snprintf(p, len + 1, "%s/%s", dir, e->d_name);
      rc = push(paths, n, cap, p, len);
      free(p);
    }
  }
  closedir(d);
  if (!rc && *n == first) {
    fprintf(stderr, "grit: error: directory %s holds no .csv file\n", dir);
    rc = EXIT_MODEL;
  }
  if (!rc) qsort(*paths + first, (size_t)(*n - first), sizeof **paths, by_name);
  return rc;
}

static int expand_list(const char *list, char ***paths, int *n, int *cap) {
  FILE *f = fopen(list, "r");
  if (!f) {
    fprintf(stderr, "grit: error: cannot read %s: %s\n", list, strerror(errno));
    return EXIT_MODEL;
  }
  const char *slash = strrchr(list, '/');
  const size_t dlen = slash ? (size_t)(slash - list) + 1 : 0;
  char *line = NULL;
  size_t cap_line = 0;
  int rc = 0, got, lineno = 0;
  while (!rc && (got = read_line(f, &line, &cap_line)) > 0) {
    lineno++;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    size_t len = strcspn(s, "#");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    if (!len) continue;
    const int absolute = s[0] == '/';
    char *p = malloc(dlen + len + 1);
    if (!p) {
      rc = fail("%s", "out of memory");
      break;
    }
    memcpy(p, list, absolute ? 0 : dlen);
    memcpy(p + (absolute ? 0 : dlen), s, len);
    p[(absolute ? 0 : dlen) + len] = '\0';
    struct stat st;
    if (stat(p, &st) != 0) {
      fprintf(stderr, "grit: error: %s:%d: cannot read %s: %s\n", list, lineno, p, strerror(errno));
      rc = EXIT_MODEL;
    } else {
      rc = push(paths, n, cap, p, strlen(p));
    }
    free(p);
  }
  if (got < 0) rc = fail("%s", "out of memory");
  free(line);
  fclose(f);
  return rc;
}

int fit_expand_source(const char *arg, char ***paths, int *n, int *cap) {
  struct stat st;
  if (stat(arg, &st) != 0) {
    fprintf(stderr, "grit: error: cannot read %s: %s\n", arg, strerror(errno));
    return EXIT_MODEL;
  }
  if (S_ISDIR(st.st_mode)) return expand_dir(arg, paths, n, cap);
  if (ends_with(arg, ".txt") || ends_with(arg, ".list")) return expand_list(arg, paths, n, cap);
  return push(paths, n, cap, arg, strlen(arg));
}

void fit_table_free(fit_table *t) { free(t->path), free(t->t), free(t->q), free(t->v), free(t->u); }

/* The header's columns: col[c] = 0 t, 1+i q_i, 1+nq+i v_i, 1+nq+nv+i u_i, -1 other. */
static int read_header(const char *path, char *line, const grit_model *m, int **col, int *ncol, int *has_u) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nslots = 1 + nq + nv + nu;
  int *seen = calloc((size_t)nslots, sizeof *seen), rc = 0;
  if (!seen) return fail("%s", "out of memory");
  for (char *s = line; s;) {
    char *comma = strchr(s, ',');
    if (comma) *comma = '\0';
    int *nc = realloc(*col, sizeof **col * (size_t)(*ncol + 1));
    if (!nc) {
      rc = fail("%s", "out of memory");
      break;
    }
    *col = nc;
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
    (*col)[(*ncol)++] = slot;
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
  *has_u = nuseen > 0;
  free(seen);
  return rc;
}

static int grow(fit_table *tb, int *cap_rows, int nq, int nv, int nu) {
  *cap_rows = *cap_rows ? 2 * *cap_rows : 256;
  double *t = realloc(tb->t, sizeof(double) * (size_t)*cap_rows);
  if (t) tb->t = t;
  double *q = realloc(tb->q, sizeof(double) * (size_t)*cap_rows * nq);
  if (q) tb->q = q;
  double *v = realloc(tb->v, sizeof(double) * (size_t)*cap_rows * nv);
  if (v) tb->v = v;
  double *u = realloc(tb->u, sizeof(double) * ((size_t)*cap_rows * nu + 1));
  if (u) tb->u = u;
  return t && q && v && u;
}

/* One field: a number, or NaN for "nan" or an empty field (a missing value); 0 if not a number or inf. */
static int field(char *s, char **end, double *x) {
  if (*s == ',' || *s == '\0') {
    *x = NAN, *end = s;
    return 1;
  }
  *x = strtod(s, end);
  return *end != s && !isinf(*x);
}

int fit_read_table(const char *path, const grit_model *m, fit_table *tb) {
  memset(tb, 0, sizeof *tb);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  if (!(tb->path = malloc(strlen(path) + 1))) return fail("%s", "out of memory");
  strcpy(tb->path, path);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "grit: error: cannot read %s: %s\n", path, strerror(errno));
    return EXIT_MODEL;
  }
  char *line = NULL;
  size_t cap = 0;
  int rc = 0, ncol = 0, *col = NULL, cap_rows = 0;
  if (read_line(f, &line, &cap) != 1) {
    fprintf(stderr, "grit: error: %s: no header line\n", path);
    rc = EXIT_MODEL;
  }
  if (!rc) rc = read_header(path, line, m, &col, &ncol, &tb->has_u);
  double *vals = malloc(sizeof(double) * (size_t)(2 + nq + nv + nu));
  if (!rc && !vals) rc = fail("%s", "out of memory");
  for (int lineno = 2; !rc; ++lineno) {
    const int got = read_line(f, &line, &cap);
    if (got < 0) rc = fail("%s", "out of memory");
    if (got <= 0) break;
    if (!line[0]) continue;
    char *s = line;
    for (int c = 0; c < ncol; ++c) {
      char *end;
      double x;
      if (!field(s, &end, &x) || (c + 1 < ncol ? *end != ',' : *end != '\0') || (col[c] == 0 && !isfinite(x))) {
        fprintf(stderr, "grit: error: %s:%d: column %d is not a number, nan or empty (or the row has %s columns than the header)%s\n",
                path, lineno, c + 1, *end == '\0' && c + 1 < ncol ? "fewer" : "other",
                col[c] == 0 ? "; times must be finite" : "");
        rc = EXIT_MODEL;
        break;
      }
      if (col[c] >= 0) vals[col[c]] = x;
      s = end + 1;
    }
    if (rc) break;
    if (tb->rows == cap_rows && !grow(tb, &cap_rows, nq, nv, nu)) {
      rc = fail("%s", "out of memory");
      break;
    }
    if (tb->rows > 0 && !(vals[0] > tb->t[tb->rows - 1])) {
      fprintf(stderr, "grit: error: %s:%d: time %.9g does not follow %.9g: times must be increasing\n", path, lineno, vals[0],
              tb->t[tb->rows - 1]);
      rc = EXIT_MODEL;
      break;
    }
    tb->t[tb->rows] = vals[0];
    memcpy(tb->q + (size_t)tb->rows * nq, vals + 1, sizeof(double) * (size_t)nq);
    memcpy(tb->v + (size_t)tb->rows * nv, vals + 1 + nq, sizeof(double) * (size_t)nv);
    if (tb->has_u) memcpy(tb->u + (size_t)tb->rows * nu, vals + 1 + nq + nv, sizeof(double) * (size_t)nu);
    tb->rows++;
  }
  if (!rc && ferror(f)) rc = fail("reading %s failed", path);
  if (!rc && tb->rows < 2) {
    fprintf(stderr, "grit: error: %s: %d samples; a fit needs at least 2 (the initial state and one more)\n", path, tb->rows);
    rc = EXIT_MODEL;
  }
  free(vals), free(col), free(line);
  fclose(f);
  return rc;
}
