/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_attr.c — reading MJCF attribute values for the loader: every number checked (a whole token,
 * finite, counted), enumerations, names, orientations. Every attribute read is marked, so that
 * mjcf_finish can report the ones nothing read. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
/* ------------------------------------------------------------------------------- attributes */

int mjcf_attr_index(const mjcf_node *n, const char *name) {
  for (int i = 0; i < n->nattr; ++i)
    if (!strcmp(n->attr[2 * i], name)) return i;
  return -1;
}

/* The value of attribute `name` (marked as read), or NULL. */
const char *mjcf_attr(const mjcf_node *n, const char *name) {
  int i = mjcf_attr_index(n, name);
  if (i < 0) return NULL;
  n->used[i] = 1;
  return n->attr[2 * i + 1];
}

void mjcf_mark(const mjcf_node *n, const char *name) { (void)mjcf_attr(n, name); }

/* Reports the attributes of n that nothing read. */
void mjcf_finish(mjcf_ctx *c, const mjcf_node *n) {
  for (int i = 0; i < n->nattr; ++i)
    if (!n->used[i]) mjcf_warn(c, n, "attribute '%.60s' is not supported: ignored", n->attr[2 * i]);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* The next whitespace-separated token of *s: its start and length (0 at the end). */
static size_t next_token(const char **s, const char **start) {
  const char *p = *s;
  while (is_space(*p)) ++p;
  *start = p;
  while (*p && !is_space(*p)) ++p;
  *s = p;
  return (size_t)(p - *start);
}

/* One number from a token: the whole token must be consumed and the value finite. */
static int parse_number(mjcf_ctx *c, const mjcf_node *n, const char *name, const char *tok, size_t len, double *out) {
  char buf[MJCF_MAX_TOKEN + 1];
  if (len > MJCF_MAX_TOKEN) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': a number longer than %d characters", name, MJCF_MAX_TOKEN);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  double v = strtod(buf, &end);
  if (end != buf + len || len == 0) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not a number", name, buf);
    return 0;
  }
  if (!isfinite(v)) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not a finite number", name, buf);
    return 0;
  }
  *out = v;
  return 1;
}

/* Reads nmin..nmax numbers of attribute `name` into out; returns how many (0 if absent or on error). */
int mjcf_read_numbers(mjcf_ctx *c, const mjcf_node *n, const char *name, double *out, int nmin, int nmax) {
  if (c->status != GRIT_OK) return 0;
  const char *s = mjcf_attr(n, name), *tok;
  if (!s) return 0;
  int count = 0;
  size_t len;
  while ((len = next_token(&s, &tok)) > 0) {
    if (count == nmax) {
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' has more than %d numbers", name, nmax);
      return 0;
    }
    if (!parse_number(c, n, name, tok, len, &out[count])) return 0;
    count++;
  }
  if (count < nmin) {
    if (nmin == nmax)
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' needs %d numbers, has %d", name, nmin, count);
    else
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' needs at least %d numbers, has %d", name, nmin, count);
    return 0;
  }
  return count;
}

/* Reads every number of attribute `name` into a new pool array (*out; *count numbers); 1 if present. */
int mjcf_read_array(mjcf_ctx *c, const mjcf_node *n, const char *name, double **out, int *count) {
  *out = NULL;
  *count = 0;
  if (c->status != GRIT_OK) return 0;
  const char *s = mjcf_attr(n, name), *tok;
  if (!s) return 0;
  int total = 0;
  for (const char *p = s; next_token(&p, &tok) > 0;)
    if (++total > MJCF_MAX_NUMBERS) {
      mjcf_fail(c, GRIT_ERR_CAPACITY, n, "attribute '%s' has more than %d numbers", name, MJCF_MAX_NUMBERS);
      return 0;
    }
  double *v = mjcf_alloc(&c->pool, sizeof(double) * (size_t)(total + 1));
  if (!v) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, n, "out of memory");
    return 0;
  }
  size_t len;
  int k = 0;
  while ((len = next_token(&s, &tok)) > 0)
    if (!parse_number(c, n, name, tok, len, &v[k++])) return 0;
  *out = v;
  *count = total;
  return 1;
}

/* A single integer in [lo, hi]; 1 if present and valid. */
int mjcf_read_int(mjcf_ctx *c, const mjcf_node *n, const char *name, long lo, long hi, long *out) {
  if (c->status != GRIT_OK) return 0;
  const char *s = mjcf_attr(n, name), *tok;
  if (!s) return 0;
  size_t len = next_token(&s, &tok);
  const char *rest;
  char buf[32];
  if (len == 0 || len >= sizeof buf || next_token(&s, &rest) != 0) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' must be one integer", name);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (end != buf + len || errno == ERANGE || v < lo || v > hi) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%s' is not an integer in [%ld, %ld]", name, buf, lo, hi);
    return 0;
  }
  *out = v;
  return 1;
}

/* One of `names` (count of them); its index in *out; 1 if present and valid. */
int mjcf_read_enum(mjcf_ctx *c, const mjcf_node *n, const char *name, const char *const *names, int count, int *out) {
  if (c->status != GRIT_OK) return 0;
  const char *s = mjcf_attr(n, name);
  if (!s) return 0;
  for (int i = 0; i < count; ++i)
    if (!strcmp(s, names[i])) {
      *out = i;
      return 1;
    }
  char list[128] = "";
  for (int i = 0; i < count; ++i) {
    strncat(list, names[i], sizeof list - strlen(list) - 1);
    if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
  }
  mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not one of %s", name, s, list);
  return 0;
}

const char *const MJCF_BOOL_NAMES[] = {"false", "true"};
const char *const MJCF_TFAUTO_NAMES[] = {"false", "true", "auto"};

int mjcf_read_bool(mjcf_ctx *c, const mjcf_node *n, const char *name, int *out) {
  return mjcf_read_enum(c, n, name, MJCF_BOOL_NAMES, 2, out);
}

/* A name of at most 1000 characters; an empty one is no name (NULL). */
const char *mjcf_read_name(mjcf_ctx *c, const mjcf_node *n, const char *name) {
  const char *s = mjcf_attr(n, name);
  if (!s || c->status != GRIT_OK) return NULL;
  size_t len = strlen(s);
  if (len > 1000) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' is longer than 1000 characters", name);
    return NULL;
  }
  return len ? s : NULL;
}

/* quat | axisangle | euler | xyaxes | zaxis (| fullinertia): at most one; replaces *o if present. */
void mjcf_read_orientation(mjcf_ctx *c, const mjcf_node *n, mjcf_orient *o, int allow_fullinertia) {
  static const char *const names[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis", "fullinertia"};
  static const int kinds[] = {MJCF_ORI_QUAT, MJCF_ORI_AXISANGLE, MJCF_ORI_EULER, MJCF_ORI_XYAXES, MJCF_ORI_ZAXIS,
                              MJCF_ORI_FULLINERTIA};
  static const int sizes[] = {4, 4, 3, 6, 3, 6};
  const int count = allow_fullinertia ? 6 : 5;
  int found = -1;
  for (int i = 0; i < count; ++i)
    if (mjcf_attr_index(n, names[i]) >= 0) {
      if (found >= 0) {
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attributes '%s' and '%s' both give the orientation", names[found],
                  names[i]);
        return;
      }
      found = i;
    }
  if (found < 0) return;
  mjcf_orient r;
  memset(&r, 0, sizeof r);
  r.kind = kinds[found];
  if (mjcf_read_numbers(c, n, names[found], r.v, sizes[found], sizes[found])) *o = r;
}

