/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit_data.c — reading the trajectories of `grit fit` (grit_fit_data.h). */
#define _POSIX_C_SOURCE 200809L
#include "grit_fit_data.h"

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int push(char ***paths, int *n, int *cap, const char *p, size_t len) {
  if (*n == *cap) {
    const int nc = *cap ? 2 * *cap : 64;
    char **np = realloc(*paths, sizeof *np * (size_t)nc);
    if (!np) return cli_error("out of memory");
    *paths = np, *cap = nc;
  }
  char *s = malloc(len + 1);
  if (!s) return cli_error("out of memory");
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

static int expand_dir(const char *dir, char ***paths, int *n, int *cap) {
  DIR *d = opendir(dir);
  if (!d) return cli_error("cannot read directory %s: %s", dir, strerror(errno));
  const int first = *n;
  int rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d));) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, ".csv")) continue;
    const size_t len = strlen(dir) + 1 + strlen(e->d_name);
    char *p = malloc(len + 1);
    if (!p) rc = cli_error("out of memory");
    else {
      snprintf(p, len + 1, "%s/%s", dir, e->d_name);
      rc = push(paths, n, cap, p, len);
      free(p);
    }
  }
  closedir(d);
  if (!rc && *n == first) rc = cli_error("directory %s holds no .csv file", dir);
  if (!rc) qsort(*paths + first, (size_t)(*n - first), sizeof **paths, by_name);
  return rc;
}

static int expand_list(const char *list, char ***paths, int *n, int *cap) {
  FILE *f = fopen(list, "r");
  if (!f) return cli_error("cannot read %s: %s", list, strerror(errno));
  const char *slash = strrchr(list, '/');
  const size_t dlen = slash ? (size_t)(slash - list) + 1 : 0;
  char *line = NULL;
  size_t cap_line = 0;
  int rc = 0, lineno = 0;
  long got = 0;
  while (!rc && (got = cli_read_line(f, &line, &cap_line)) >= 0) {
    lineno++;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    size_t len = strcspn(s, "#");
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    if (!len) continue;
    const int absolute = s[0] == '/';
    char *p = malloc(dlen + len + 1);
    if (!p) {
      rc = cli_error("out of memory");
      break;
    }
    memcpy(p, list, absolute ? 0 : dlen);
    memcpy(p + (absolute ? 0 : dlen), s, len);
    p[(absolute ? 0 : dlen) + len] = '\0';
    struct stat st;
    if (stat(p, &st) != 0) {
      rc = cli_error("%s:%d: cannot read %s: %s", list, lineno, p, strerror(errno));
    } else {
      rc = push(paths, n, cap, p, strlen(p));
    }
    free(p);
  }
  if (!rc && got == -2) rc = cli_error("out of memory");
  free(line);
  fclose(f);
  return rc;
}

int fit_expand_source(const char *arg, char ***paths, int *n, int *cap) {
  struct stat st;
  if (stat(arg, &st) != 0) return cli_error("cannot read %s: %s", arg, strerror(errno));
  if (S_ISDIR(st.st_mode)) return expand_dir(arg, paths, n, cap);
  if (ends_with(arg, ".txt") || ends_with(arg, ".list")) return expand_list(arg, paths, n, cap);
  return push(paths, n, cap, arg, strlen(arg));
}

void fit_table_free(fit_table *t) { free(t->path), free(t->t), free(t->q), free(t->v), free(t->u); }

/* The one CSV reader (tools/cli.c) under grit fit's rules: velocities required, empty or nan fields masked,
 * times increasing, at least two samples. */
int fit_read_table(const char *path, const grit_model *m, fit_table *tb) {
  memset(tb, 0, sizeof *tb);
  if (!(tb->path = malloc(strlen(path) + 1))) return cli_error("out of memory");
  strcpy(tb->path, path);
  const cli_csv_rules rules = {.nan_values = 1, .need_v = 1, .increasing_t = 1, .min_rows = 2,
                               .min_rows_why = "a fit needs at least 2 (the initial state and one more)"};
  cli_table ct;
  const int rc = cli_read_csv(path, grit_model_nq(m), grit_model_nv(m), grit_model_nu(m), &rules, &ct);
  if (rc) return rc;
  tb->rows = ct.rows, tb->has_u = ct.has_u;
  tb->t = ct.t, tb->q = ct.q, tb->v = ct.v, tb->u = ct.u;
  return 0;
}
