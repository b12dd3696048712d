/* SPDX-License-Identifier: Apache-2.0 */
/* replay_test_util.h — what the replay page tests share (test_replay.c, test_replay_browser.c): a temporary
 * folder removed at exit, reading a file whole, a strict JSON parser, the scene JSON of a page, and running a
 * program with its output to a file. Static inline so each test file uses what it needs without
 * unused-function warnings. */
#ifndef GRIT_TESTS_REPLAY_TEST_UTIL_H
#define GRIT_TESTS_REPLAY_TEST_UTIL_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------------------------------ files */

static char TMP[256];

static inline void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "test_replay: could not remove %s\n", dir);
}

static inline void cleanup(void) {
  if (TMP[0]) rm_tree(TMP);
}

static inline const char *tmp_path(const char *name) {
  static char p[512];
  if (!TMP[0]) {
    snprintf(TMP, sizeof TMP, "/tmp/grit_replay_XXXXXX");
    cr_assert_not_null(mkdtemp(TMP));
    atexit(cleanup);
  }
  snprintf(p, sizeof p, "%s/%s", TMP, name);
  return p;
}

static inline char *slurp(const char *path, size_t *size) {
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

static inline const char *ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') ++p;
  return p;
}

static inline void jfree(jv *v) {
  for (int i = 0; i < v->n; ++i) {
    jfree(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
}

static inline int jstring(const char **pp, char **out) {
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

static inline int jvalue(const char **pp, jv *v, int depth) {
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
static inline int jparse(const char *text, jv *v) {
  const char *p = text;
  if (!jvalue(&p, v, 0)) return 0;
  return *ws(p) == '\0';
}

static inline const jv *jget(const jv *o, const char *key) {
  if (o->type != J_OBJ) return NULL;
  for (int i = 0; i < o->n; ++i)
    if (!strcmp(o->keys[i], key)) return &o->items[i];
  return NULL;
}

/* The page's scene JSON (between the script tags), parsed; the page text in *page (caller frees). */
static inline void load_scene(const char *path, jv *scene, char **page) {
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

/* ------------------------------------------------------------------------------- running programs */

/* Runs argv with stdout to out_path (or /dev/null) and stderr to /dev/null; the exit status (-1: no run). */
static inline int run(char *const argv[], const char *out_path) {
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


#endif
