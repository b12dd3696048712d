/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_asset.c — the <asset> section: meshes (from a 'vertex' list or an STL/OBJ file, placed by scale,
 * refpos and refquat as MuJoCo does, and their convex hulls for collision), and the visual assets
 * (textures, materials, skins), which are accepted and ignored. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grit/geometry.h"
#include "mjcf_internal.h"

/* The path of an asset file (a mesh, a height field): taken as it is when absolute, else relative to the
 * model file's directory and the compiler's meshdir (or assetdir), as MuJoCo does. 0 (and an error on c)
 * when the model was not loaded from a file or the path is too long. */
int mjcf_asset_path(mjcf_ctx *c, const mjcf_node *e, const char *file, char *path, size_t size) {
  if (!c->base_dir) {
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, e, "file '%.200s': asset files are read only when the model is loaded from a file",
              file);
    return 0;
  }
  const char *sub = c->meshdir ? c->meshdir : c->assetdir ? c->assetdir : "";
  int len;
  if (file[0] == '/') len = snprintf(path, size, "%s", file);
  else if (sub[0] == '/') len = snprintf(path, size, "%s%s%s", sub, sub[strlen(sub) - 1] == '/' ? "" : "/", file);
  else
    len = snprintf(path, size, "%s%s%s%s", c->base_dir, sub, sub[0] && sub[strlen(sub) - 1] != '/' ? "/" : "", file);
  if (len < 0 || (size_t)len >= size) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the asset file's path is too long");
    return 0;
  }
  return 1;
}

/* The vertices of mesh m from its file (mjcf_asset_path). */
static void read_mesh_file(mjcf_ctx *c, const mjcf_node *e, const char *file, mjcf_mesh *m) {
  char path[4096];
  if (!mjcf_asset_path(c, e, file, path, sizeof path)) return;
  char why[GRIT_MESSAGE_SIZE];
  grit_status s = mjcf_mesh_file_read(path, &c->pool, &m->vert, &m->nvert, &m->tri, &m->ntri, why);
  if (s == GRIT_ERR_UNSUPPORTED) { /* a format grit does not read (.msh, ...): an error only where it is used */
    m->hull_error = mjcf_strdup(&c->pool, why, strlen(why));
    m->hull_status = s;
    if (!m->hull_error) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, e, "out of memory");
  } else if (s != GRIT_OK) {
    mjcf_fail(c, s, e, "%s", why);
  }
}

/* MuJoCo names a mesh without 'name' after its file: the file name without directory and extension. */
const char *mjcf_file_stem(mjcf_ctx *c, const char *file) {
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  const char *dot = strrchr(base, '.');
  const size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  char *s = mjcf_strdup(&c->pool, base, n);
  if (!s) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
  return s && s[0] ? s : NULL;
}

/* MuJoCo's order: translate by -refpos, rotate by refquat^-1, scale. */
static void place_vertices(mjcf_ctx *c, const mjcf_node *e, mjcf_mesh *m, const double scale[3]) {
  double refpos[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
  mjcf_read_numbers(c, e, "refpos", refpos, 3, 3);
  if (mjcf_read_numbers(c, e, "refquat", q, 4, 4)) {
    double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(nq > 1e-10) || !isfinite(nq)) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'refquat' is zero");
    for (int k = 0; k < 4 && c->status == GRIT_OK; ++k) q[k] /= nq;
  }
  const double R[9] = {q[0] * q[0] + q[1] * q[1] - q[2] * q[2] - q[3] * q[3], 2 * (q[1] * q[2] - q[0] * q[3]),
                       2 * (q[1] * q[3] + q[0] * q[2]), 2 * (q[1] * q[2] + q[0] * q[3]),
                       q[0] * q[0] - q[1] * q[1] + q[2] * q[2] - q[3] * q[3], 2 * (q[2] * q[3] - q[0] * q[1]),
                       2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                       q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3]};
  for (int i = 0; i < m->nvert && c->status == GRIT_OK; ++i) {
    double *v = m->vert + 3 * i, d[3];
    for (int k = 0; k < 3; ++k) d[k] = v[k] - refpos[k];
    for (int k = 0; k < 3; ++k) v[k] = (R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2]) * scale[k];
    for (int k = 0; k < 3; ++k)
      if (!isfinite(v[k])) mjcf_fail(c, GRIT_ERR_NOT_FINITE, e, "a vertex overflows after scaling");
  }
}

static void read_mesh(mjcf_ctx *c, const mjcf_node *e) {
  mjcf_mesh *m = mjcf_push(c, &c->meshes, sizeof *m);
  if (!m) return;
  m->line = e->line, m->file = e->file;
  m->name = mjcf_read_name(c, e, "name");
  const char *cls = mjcf_attr(e, "class");
  int def = 0;
  for (int i = 0; cls && i < c->defs.n; ++i)
    if (!strcmp(MJCF_AT(c->defs, mjcf_default, i)->name, cls)) def = i + 1;
  if (cls && !def) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "unknown default class '%.60s'", cls);
    return;
  }
  double scale[3];
  memcpy(scale, MJCF_AT(c->defs, mjcf_default, def ? def - 1 : 0)->mesh_scale, sizeof scale);
  int count = 0;
  const char *file = mjcf_attr(e, "file");
  if (file && mjcf_attr(e, "vertex")) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a mesh takes 'file' or 'vertex', not both");
  } else if (file) {
    read_mesh_file(c, e, file, m);
    if (!m->name) m->name = mjcf_file_stem(c, file);
    if (m->hull_error) { /* unreadable format, reported where the mesh is used */
      mjcf_mark(e, "scale"), mjcf_mark(e, "refpos"), mjcf_mark(e, "refquat");
      static const char *const rest[] = {"face", "normal", "texcoord", "smoothnormal", "content_type", "maxhullvert",
                                         "inertia"};
      for (int i = 0; i < 7; ++i) mjcf_mark(e, rest[i]);
      mjcf_finish(c, e);
      return;
    }
  } else if (mjcf_read_array(c, e, "vertex", &m->vert, &count)) {
    if (count % 3 || count < 12)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'vertex' needs at least 4 points of 3 numbers");
    m->nvert = count / 3;
  } else if (c->status == GRIT_OK) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a mesh needs 'file' or 'vertex'");
  }
  mjcf_read_numbers(c, e, "scale", scale, 3, 3);
  place_vertices(c, e, m, scale);
  /* grit collides with the convex hull of the vertices, as MuJoCo does; faces and normals serve the mass
   * (a file's triangles) or the picture only */
  static const char *const unused[] = {"face", "normal", "texcoord", "smoothnormal", "content_type", "maxhullvert",
                                       "inertia"};
  for (int i = 0; i < 7; ++i) mjcf_mark(e, unused[i]);
  const char *inertia = mjcf_attr(e, "inertia");
  if (inertia && strcmp(inertia, "legacy") && strcmp(inertia, "convex"))
    mjcf_warn(c, e, "attribute 'inertia': '%.20s' (newer than MuJoCo 2.2.2) is treated as MuJoCo 2.2.2 does", inertia);
  mjcf_finish(c, e);
  if (!m->name && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a mesh needs a 'name'");
  if (c->status != GRIT_OK) return;
  char why[GRIT_MESSAGE_SIZE];
  int reduced = 0;
  grit_status s = mjcf_mesh_hull(m->vert, m->nvert, GRIT_CONVEX_MAX_VERTICES, &c->pool, &m->hvert, &m->nhvert, &m->htri,
                                 &m->nhtri, &reduced, why);
  if (s == GRIT_ERR_OUT_OF_MEMORY) mjcf_fail(c, s, e, "%s", why);
  else if (s != GRIT_OK) { /* an error only if a colliding geometry, or a mass, needs the hull */
    char full[2 * GRIT_MESSAGE_SIZE];
    if (file) snprintf(full, sizeof full, "mesh file '%.200s': %s", file, why);
    else snprintf(full, sizeof full, "%s", why);
    m->hull_error = mjcf_strdup(&c->pool, full, strlen(full));
    m->hull_status = s;
    if (!m->hull_error) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, e, "out of memory");
  }
  if (reduced)
    mjcf_warn(c, e, "the convex hull has more than %d vertices: collision uses the %d farthest out",
              GRIT_CONVEX_MAX_VERTICES, GRIT_CONVEX_MAX_VERTICES);
}

void mjcf_read_asset(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (!strcmp(e->name, "mesh")) read_mesh(c, e);
    else if (!strcmp(e->name, "texture") || !strcmp(e->name, "material") || !strcmp(e->name, "skin"))
      continue; /* visual */
    else if (!strcmp(e->name, "hfield"))
      mjcf_read_hfield(c, e);
    else
      mjcf_warn(c, e, "element is not supported: ignored");
  }
}
