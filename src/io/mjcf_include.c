/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_include.c — <include file="..."/>: the included file's <mujoco> children take the place of the
 * <include> element, before anything is read, so included content is read exactly as if it were written
 * in place (MuJoCo's rule). The path is relative to the directory of the file that holds the <include>.
 * Every node keeps the file it came from, so messages name the right file and line. A file that includes
 * itself, directly or not, is refused (the chain of open files, by their canonical paths). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"

#define MAX_INCLUDE_DEPTH 32
#define MAX_INCLUDES 1000

typedef struct include_state {
  const char *chain[MAX_INCLUDE_DEPTH + 1]; /* canonical paths of the files being expanded */
  int depth, count;
} include_state;

static void set_file(mjcf_node *n, const char *file) {
  for (; n; n = n->next) {
    n->file = file;
    set_file(n->child, file);
  }
}

static void expand(mjcf_ctx *c, mjcf_node *parent, const char *dir, include_state *st);

/* Reads the file of <include> node `inc` and splices its root's children in its place; returns the last
 * spliced node (or the node before `inc` when the file has no content), so the walk goes on after them. */
static mjcf_node *include_one(mjcf_ctx *c, mjcf_node *inc, mjcf_node *prev, const char *dir, include_state *st) {
  const char *file = mjcf_attr(inc, "file");
  if (!file || !file[0]) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, inc, "attribute 'file' is required");
    return inc;
  }
  mjcf_finish(c, inc);
  if (!dir) {
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, inc, "included files are read only when the model is loaded from a file");
    return inc;
  }
  if (++st->count > MAX_INCLUDES || st->depth >= MAX_INCLUDE_DEPTH) {
    mjcf_fail(c, GRIT_ERR_CAPACITY, inc, "more than %d includes or includes nested deeper than %d", MAX_INCLUDES,
              MAX_INCLUDE_DEPTH);
    return inc;
  }
  const size_t n = strlen(dir) + strlen(file) + 1;
  char *path = mjcf_alloc(&c->pool, n);
  if (!path) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, inc, "out of memory");
    return inc;
  }
  snprintf(path, n, "%s%s", file[0] == '/' ? "" : dir, file);
  char real[PATH_MAX];
  if (!realpath(path, real)) {
    mjcf_fail(c, GRIT_ERR_IO, inc, "cannot open included file '%.200s'", path);
    return inc;
  }
  for (int i = 0; i <= st->depth; ++i)
    if (st->chain[i] && !strcmp(st->chain[i], real)) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, inc, "include cycle: '%.200s' includes itself", file);
      return inc;
    }
  char *data;
  size_t size;
  char why[GRIT_MESSAGE_SIZE];
  grit_status s = mjcf_read_file(path, &data, &size, why);
  if (s != GRIT_OK) {
    mjcf_fail(c, s, inc, "included file: %s", why);
    return inc;
  }
  mjcf_node *root = NULL;
  int after_root = 0;
  s = mjcf_xml_parse(data, size, path, &c->pool, &root, why, &after_root);
  free(data);
  if (s != GRIT_OK) {
    mjcf_fail(c, s, inc, "included file: %s", why);
    return inc;
  }
  if (after_root)
    mjcf_warn(c, inc, "included file %.300s: what follows its root element is not read (not XML from line %d on)",
              path, after_root);
  if (strcmp(root->name, "mujoco")) {
    mjcf_fail(c, GRIT_ERR_PARSE, inc, "the included file's root element must be <mujoco>, not <%.40s>", root->name);
    return inc;
  }
  root->file = path;
  set_file(root->child, path);
  mjcf_mark(root, "model"); /* an included file's model name has no meaning, as in MuJoCo */
  mjcf_finish(c, root);
  /* the included file's directory, for its own includes */
  const char *slash = strrchr(path, '/');
  char *sub = mjcf_strdup(&c->pool, path, slash ? (size_t)(slash - path) + 1 : 0);
  st->chain[++st->depth] = mjcf_strdup(&c->pool, real, strlen(real));
  if (!sub || !st->chain[st->depth]) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, inc, "out of memory");
  else expand(c, root, sub[0] ? sub : "./", st);
  st->chain[st->depth--] = NULL;
  /* splice */
  mjcf_node *first = root->child, *last = root->last_child;
  mjcf_node *after = inc->next, *par = inc->parent;
  for (mjcf_node *k = first; k; k = k->next) k->parent = par;
  if (!first) {
    if (prev) prev->next = after;
    else par->child = after;
    if (par->last_child == inc) par->last_child = prev;
    return prev;
  }
  if (prev) prev->next = first;
  else par->child = first;
  last->next = after;
  if (par->last_child == inc) par->last_child = last;
  return last;
}

static void expand(mjcf_ctx *c, mjcf_node *parent, const char *dir, include_state *st) {
  mjcf_node *prev = NULL;
  for (mjcf_node *e = parent->child; e && c->status == GRIT_OK;) {
    if (!strcmp(e->name, "include")) {
      mjcf_node *last = include_one(c, e, prev, dir, st);
      prev = last;
      e = last ? last->next : parent->child;
      continue;
    }
    expand(c, e, dir, st);
    prev = e;
    e = e->next;
  }
}

void mjcf_expand_includes(mjcf_ctx *c, mjcf_node *root) {
  include_state st;
  memset(&st, 0, sizeof st);
  char real[PATH_MAX];
  if (c->base_dir && realpath(c->fname, real)) st.chain[0] = mjcf_strdup(&c->pool, real, strlen(real));
  expand(c, root, c->base_dir, &st);
}
