/* SPDX-License-Identifier: Apache-2.0 */
/* load.c — one entry point for both model formats: the file's first element decides (<mujoco>: MJCF,
 * <robot>: URDF), whatever the file is called. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "grit/load.h"
#include "mjcf_internal.h"
#include "status_internal.h"

grit_load_options grit_default_load_options(void) {
  grit_load_options o;
  o.mjcf = grit_mjcf_default_load_options();
  o.urdf = grit_urdf_default_load_options();
  return o;
}

grit_load_options grit_load_default_options(void) { return grit_default_load_options(); }

/* Past the first `end` at or after p; NULL if there is none. */
static const char *skip_block(const char *p, const char *end) {
  const char *e = strstr(p, end);
  return e ? e + strlen(end) : NULL;
}

/* The first element's name (at most n - 1 characters) and its line; 0 when there is none. */
static int first_element(const char *text, char *name, size_t n, int *line) {
  const char *p = text;
  if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF) p += 3;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) ++p;
    if (*p != '<') return 0;
    if (!strncmp(p, "<?", 2))
      p = skip_block(p, "?>");
    else if (!strncmp(p, "<!--", 4))
      p = skip_block(p, "-->");
    else if (!strncmp(p, "<!", 2))
      p = skip_block(p, ">"); /* a DOCTYPE (internal subsets are not MJCF or URDF) */
    else
      break;
    if (!p) return 0;
  }
  size_t k = 0;
  for (++p; p[k] && !isspace((unsigned char)p[k]) && p[k] != '>' && p[k] != '/' && k + 1 < n; ++k) name[k] = p[k];
  name[k] = '\0';
  *line = 1;
  for (const char *q = text; q < p; ++q) *line += *q == '\n';
  return k > 0;
}

static grit_file_format format_of_text(const char *text, char *name, size_t n, int *line) {
  if (!first_element(text, name, n, line)) return GRIT_FORMAT_UNKNOWN;
  if (!strcmp(name, "mujoco")) return GRIT_FORMAT_MJCF;
  if (!strcmp(name, "robot")) return GRIT_FORMAT_URDF;
  return GRIT_FORMAT_UNKNOWN;
}

grit_file_format grit_file_format_of(const char *path) {
  char *data, name[64];
  size_t size;
  int line;
  if (!path || mjcf_read_file(path, &data, &size, NULL) != GRIT_OK) return GRIT_FORMAT_UNKNOWN;
  const grit_file_format f = format_of_text(data, name, sizeof name, &line);
  free(data);
  return f;
}

grit_status grit_load_file(const char *path, const grit_load_options *options, grit_model **model,
                           grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]) {
  if (model) *model = NULL;
  if (!path || !model) {
    mjcf_info_reset(info);
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "path or model is NULL");
  }
  const grit_load_options o = options ? *options : grit_default_load_options();
  char *data, name[64];
  size_t size;
  int line = 0;
  grit_status s = mjcf_read_file(path, &data, &size, msg);
  if (s != GRIT_OK) {
    mjcf_info_reset(info);
    return s;
  }
  const grit_file_format f = format_of_text(data, name, sizeof name, &line);
  free(data);
  if (f == GRIT_FORMAT_MJCF) return grit_mjcf_load_file_with(path, &o.mjcf, model, info, msg);
  if (f == GRIT_FORMAT_URDF) return grit_urdf_load_file(path, &o.urdf, model, info, msg);
  mjcf_info_reset(info);
  if (line > 0)
    return grit_set_error(msg, GRIT_ERR_PARSE, "%s:%d: the root element must be <mujoco> (MJCF) or <robot> (URDF), not <%s>",
                          path, line, name);
  return grit_set_error(msg, GRIT_ERR_PARSE, "%s: not an XML model file (no root element found)", path);
}
