/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf.c — the MJCF loader's entry points, its context (errors, warnings, arrays) and keyframes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/data.h"
#include "mjcf_internal.h"
#include "status_internal.h"

/* --------------------------------------------------------------------------- context helpers */

void *mjcf_push(mjcf_ctx *c, mjcf_array *a, size_t size) {
  if (a->n == a->cap) {
    int cap = a->cap ? 2 * a->cap : 16;
    void *p = realloc(a->data, (size_t)cap * size);
    if (!p) {
      mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
      return NULL;
    }
    a->data = p;
    a->cap = cap;
  }
  char *e = (char *)a->data + (size_t)a->n * size;
  memset(e, 0, size);
  a->n++;
  return e;
}

/* "file:line: <element> ..." through the loaders' one formatter (status_internal.h). */
static void format_at(char *out, const char *fname, const mjcf_node *node, const char *fmt, va_list ap) {
  if (node) grit_vformat_at(out, node->file ? node->file : fname, node->line, node->name, fmt, ap);
  else grit_vformat_at(out, fname, 0, NULL, fmt, ap);
}

void mjcf_fail(mjcf_ctx *c, grit_status s, const mjcf_node *node, const char *fmt, ...) {
  if (c->status != GRIT_OK) return;
  c->status = s;
  if (!c->msg) return;
  va_list ap;
  va_start(ap, fmt);
  format_at(c->msg, c->fname, node, fmt, ap);
  va_end(ap);
}

void mjcf_warn(mjcf_ctx *c, const mjcf_node *node, const char *fmt, ...) {
  if (!c->info) return;
  int i = c->info->nwarnings;
  if (i < 1000000000) c->info->nwarnings++;
  if (i >= GRIT_MJCF_MAX_WARNINGS) return;
  va_list ap;
  va_start(ap, fmt);
  format_at(c->info->warnings[i], c->fname, node, fmt, ap);
  va_end(ap);
}

void mjcf_unsupported(mjcf_ctx *c, const mjcf_node *node, const char *fmt, ...) {
  char what[GRIT_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (c->load.lenient) mjcf_warn(c, node, "%.300s: ignored (lenient loading)", what);
  else
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, node, "%.300s: the model would not be the system in the file (load it leniently, "
              "grit --lenient, to ignore it)", what);
}

static void ctx_free(mjcf_ctx *c) {
  free(c->defs.data);
  free(c->bodies.data);
  free(c->joints.data);
  free(c->geoms.data);
  free(c->acts.data);
  free(c->meshes.data);
  free(c->keys.data);
  free(c->excludes.data);
  free(c->pairs.data);
  free(c->sites.data), free(c->eqs.data), free(c->tendons.data);
  free(c->hydro.data);
  free(c->hfields.data);
  mjcf_pool_free(&c->pool);
}

/* ------------------------------------------------------------------------------------- API */

grit_mjcf_load_options grit_mjcf_default_load_options(void) {
  grit_mjcf_load_options o;
  o.timestep = 0;
  o.friction = -1;
  o.stiffness = 0;
  o.dissipation = -1;
  o.tau_d = -1;
  o.lenient = 0;
  o.explicit_actuation = 0;
  o.hydro_modulus = 0;
  o.explicit_gyroscopic = 0;
  return o;
}

void mjcf_info_reset(grit_mjcf_info *info) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->settings = grit_default_step_settings();
}

grit_status mjcf_load_buffer_begin(const char *data, size_t size, grit_model **model, grit_mjcf_info *info,
                                   char msg[GRIT_MESSAGE_SIZE]) {
  if (msg) msg[0] = '\0';
  mjcf_info_reset(info);
  if (!model) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model is NULL");
  *model = NULL;
  if (!data && size) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "data is NULL");
  return GRIT_OK;
}

grit_status mjcf_load_file_begin(const char *path, grit_model **model, grit_mjcf_info *info, char **data, size_t *size,
                                 char msg[GRIT_MESSAGE_SIZE]) {
  if (msg) msg[0] = '\0';
  mjcf_info_reset(info);
  if (model) *model = NULL;
  if (!path || !model) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "path or model is NULL");
  return mjcf_read_file(path, data, size, msg);
}

void grit_mjcf_info_free(grit_mjcf_info *info) {
  if (!info) return;
  for (int k = 0; k < info->nkey && info->keys; ++k) {
    free(info->keys[k].qpos);
    free(info->keys[k].qvel);
    free(info->keys[k].ctrl);
    free(info->keys[k].act);
  }
  free(info->keys);
  mjcf_info_reset(info);
}

static grit_status check_load_options(const grit_mjcf_load_options *o, char *msg) {
  if (!o) return GRIT_OK;
  const double v[5] = {o->timestep, o->friction, o->stiffness, o->dissipation, o->tau_d};
  for (int i = 0; i < 5; ++i)
    if (v[i] != v[i] || v[i] > 1e300 || v[i] < -1e300)
      return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "load options: a value is not finite");
  return GRIT_OK;
}

/* Loads from memory; mesh files are read relative to base_dir (NULL: they are refused, as a buffer has no
 * directory of its own). */
static grit_status load(const char *data, size_t size, const char *name, const char *base_dir,
                        const grit_mjcf_load_options *options, grit_model **model, grit_mjcf_info *info,
                        char msg[GRIT_MESSAGE_SIZE]) {
  grit_status s = mjcf_load_buffer_begin(data, size, model, info, msg);
  if (s != GRIT_OK) return s;
  s = check_load_options(options, msg);
  if (s != GRIT_OK) return s;

  mjcf_ctx c;
  memset(&c, 0, sizeof c);
  c.fname = name ? name : "<buffer>";
  c.base_dir = base_dir;
  c.msg = msg;
  c.info = info;
  c.load = options ? *options : grit_mjcf_default_load_options();
  mjcf_node *root = NULL;
  int after_root = 0;
  s = mjcf_xml_parse(data, size, c.fname, &c.pool, &root, msg, &after_root);
  if (s == GRIT_OK) {
    if (after_root) mjcf_warn(&c, NULL, "what follows the root element <%.40s> is not read (not XML from line %d on)",
                              root->name, after_root);
    mjcf_expand_includes(&c, root);
    if (c.status == GRIT_OK) mjcf_read(&c, root);
    if (c.status == GRIT_OK) mjcf_build(&c, model);
    s = c.status;
  }
  ctx_free(&c);
  if (s != GRIT_OK && info) {
    int nw = info->nwarnings;
    char w[GRIT_MJCF_MAX_WARNINGS][GRIT_MESSAGE_SIZE];
    memcpy(w, info->warnings, sizeof w);
    grit_mjcf_info_free(info); /* keyframes may have been made; the warnings stay useful */
    info->nwarnings = nw;
    memcpy(info->warnings, w, sizeof w);
  }
  return s;
}

grit_status grit_mjcf_load_buffer(const char *data, size_t size, const char *name,
                                  const grit_mjcf_load_options *options, grit_model **model, grit_mjcf_info *info,
                                  char msg[GRIT_MESSAGE_SIZE]) {
  return load(data, size, name, NULL, options, model, info, msg);
}

grit_status grit_mjcf_load_string(const char *xml, grit_model **model, grit_mjcf_info *info,
                                  char msg[GRIT_MESSAGE_SIZE]) {
  if (!xml) {
    if (model) *model = NULL;
    mjcf_info_reset(info);
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "xml is NULL");
  }
  return grit_mjcf_load_buffer(xml, strlen(xml), "<string>", NULL, model, info, msg);
}

grit_status grit_mjcf_load_file_with(const char *path, const grit_mjcf_load_options *options, grit_model **model,
                                     grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]) {
  char *data;
  size_t size;
  grit_status s = mjcf_load_file_begin(path, model, info, &data, &size, msg);
  if (s != GRIT_OK) return s;
  char *dir = mjcf_dir_of(path); /* for its mesh files */
  if (!dir) {
    free(data);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  }
  s = load(data, size, path, dir, options, model, info, msg);
  free(dir);
  free(data);
  return s;
}

grit_status grit_mjcf_load_file(const char *path, grit_model **model, grit_mjcf_info *info,
                                char msg[GRIT_MESSAGE_SIZE]) {
  return grit_mjcf_load_file_with(path, NULL, model, info, msg);
}

int grit_mjcf_key_index(const grit_mjcf_info *info, const char *name) {
  if (!info || !name) return -1;
  for (int k = 0; k < info->nkey; ++k)
    if (!strcmp(info->keys[k].name, name)) return k;
  return -1;
}

grit_status grit_mjcf_apply_key(const grit_mjcf_info *info, int key, grit_data *data) {
  if (!info || !data || key < 0 || key >= info->nkey) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = grit_data_model(data);
  if (grit_model_nq(m) != info->nq || grit_model_nv(m) != info->nv || grit_model_nu(m) != info->nu ||
      grit_model_na(m) != info->na)
    return GRIT_ERR_INVALID_ARGUMENT;
  const grit_mjcf_key *k = &info->keys[key];
  grit_status s = grit_data_set_qpos(data, k->qpos, info->nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(data, k->qvel, info->nv);
  if (s == GRIT_OK && info->nu) s = grit_data_set_ctrl(data, k->ctrl, info->nu);
  if (s == GRIT_OK && info->na) s = grit_data_set_act(data, k->act, info->na);
  if (s == GRIT_OK) s = grit_data_set_time(data, k->time);
  return s;
}
