/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_mesh.c — a URDF collision mesh: its file name resolved (package://PKG/PATH against the package
 * search path and ROS_PACKAGE_PATH, file:// URIs, absolute names, names relative to the mesh directory),
 * read by the MJCF loader's mesh reader (STL, OBJ), scaled, and made a convex shape (its hull); and its
 * volume, centre and inertia for a link without <inertial> (urdf_inertia.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urdf_build.h"

static int readable(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fclose(f);
  return 1;
}

/* dir/a/b into the pool (a may be NULL); NULL when out of memory. */
static char *join(urdf_ctx *c, const char *dir, size_t ndir, const char *a, size_t na, const char *b) {
  const size_t nb = strlen(b);
  char *p = mjcf_alloc(&c->pool, ndir + na + nb + 3);
  if (!p) return NULL;
  size_t n = 0;
  memcpy(p, dir, ndir), n = ndir;
  if (n && p[n - 1] != '/') p[n++] = '/';
  if (a) memcpy(p + n, a, na), n += na, p[n++] = '/';
  memcpy(p + n, b, nb + 1);
  return p;
}

/* Whether directory d (n characters) is package PKG: its last component is PKG, or its package.xml says
 * <name>PKG</name> (ROS finds packages by that name; a checkout's directory is often named otherwise). */
static int is_package(urdf_ctx *c, const char *d, size_t n, const char *pkg, size_t npkg) {
  if (n >= npkg && !strncmp(d + n - npkg, pkg, npkg) && (n == npkg || d[n - npkg - 1] == '/')) return 1;
  char *xml = join(c, d, n, NULL, 0, "package.xml");
  FILE *f = xml ? fopen(xml, "rb") : NULL;
  if (!f) return 0;
  char buf[8192];
  const size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = 0;
  const char *a = strstr(buf, "<name>"), *b = a ? strstr(a, "</name>") : NULL;
  if (!b) return 0;
  a += 6;
  while (a < b && strchr(" \t\r\n", *a)) ++a;
  while (b > a && strchr(" \t\r\n", b[-1])) --b;
  return (size_t)(b - a) == npkg && !strncmp(a, pkg, npkg);
}

/* PATH of package PKG in the ':'-separated directories `dirs`: DIR/PKG/PATH, or DIR/PATH when DIR is the
 * package itself. */
static char *find_in(urdf_ctx *c, const char *dirs, const char *pkg, size_t npkg, const char *path) {
  for (const char *d = dirs; d && *d;) {
    const char *e = strchr(d, ':');
    size_t n = e ? (size_t)(e - d) : strlen(d);
    while (n > 1 && d[n - 1] == '/') --n;
    if (n > 0) {
      char *p = join(c, d, n, pkg, npkg, path);
      if (p && readable(p)) return p;
      if (is_package(c, d, n, pkg, npkg)) {
        p = join(c, d, n, NULL, 0, path);
        if (p && readable(p)) return p;
      }
    }
    d = e ? e + 1 : NULL;
  }
  return NULL;
}

/* PATH of package PKG found upwards from the URDF file's directory: the package that holds the file (a
 * robot description's urdf/ next to its meshes/), or a sibling package of one of its ancestors. */
static char *find_up(urdf_ctx *c, const char *pkg, size_t npkg, const char *path) {
  if (!c->file_dir) return NULL;
  size_t n = strlen(c->file_dir);
  for (int depth = 0; n > 0 && depth < 64; ++depth) {
    while (n > 1 && c->file_dir[n - 1] == '/') --n;
    char *p = join(c, c->file_dir, n, pkg, npkg, path);
    if (p && readable(p)) return p;
    if (is_package(c, c->file_dir, n, pkg, npkg)) {
      p = join(c, c->file_dir, n, NULL, 0, path);
      if (p && readable(p)) return p;
    }
    while (n > 0 && c->file_dir[n - 1] != '/') --n; /* the parent directory */
    if (n == 1) break;                                /* "/" done */
  }
  return NULL;
}

/* The file a mesh name designates; NULL (and an error) when it cannot be found. */
static const char *resolve(urdf_ctx *c, const char *name, int line) {
  if (!strncmp(name, "package://", 10)) {
    const char *pkg = name + 10;
    while (*pkg == '/') ++pkg; /* package:///PKG/PATH, a slip seen in public files (Talos): the same place */
    const char *slash = strchr(pkg, '/');
    if (!slash || slash == pkg) {
      urdf_fail(c, GRIT_ERR_PARSE, line, "mesh '%s': expected package://PACKAGE/PATH", name);
      return NULL;
    }
    char *p = find_in(c, c->opt.package_path, pkg, (size_t)(slash - pkg), slash + 1);
    if (!p) p = find_in(c, getenv("ROS_PACKAGE_PATH"), pkg, (size_t)(slash - pkg), slash + 1);
    if (!p) p = find_up(c, pkg, (size_t)(slash - pkg), slash + 1);
    if (!p)
      urdf_fail(c, GRIT_ERR_IO, line,
                "mesh '%s': package '%.*s' not found in the package path (--package-path), ROS_PACKAGE_PATH or "
                "above the file",
                name, (int)(slash - pkg), pkg);
    return p;
  }
  if (!strncmp(name, "file://", 7)) return name + 7;
  if (name[0] == '/') return name;
  if (strstr(name, "://")) {
    urdf_fail(c, GRIT_ERR_UNSUPPORTED, line, "mesh '%s': only package:// and file:// URIs are resolved", name);
    return NULL;
  }
  if (!c->base_dir) {
    urdf_fail(c, GRIT_ERR_IO, line, "mesh '%s': a relative file name needs a mesh directory", name);
    return NULL;
  }
  const char *p = join(c, c->base_dir, strlen(c->base_dir), NULL, 0, name);
  if (!p) urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, line, "out of memory");
  return p;
}

/* The mesh file of g read into the pool, scaled. A format grit does not read gives GRIT_ERR_UNSUPPORTED
 * without an error under the lenient option (the caller drops the mesh); other failures are reported. */
static grit_status read_scaled(urdf_ctx *c, const urdf_geom *g, int line, double **v, int *nv, int **tri, int *nt,
                               char why[GRIT_MESSAGE_SIZE]) {
  const char *path = resolve(c, g->filename, line);
  if (!path) return c->status;
  grit_status s = mjcf_mesh_file_read(path, &c->pool, v, nv, tri, nt, why);
  if (s == GRIT_ERR_UNSUPPORTED && c->opt.lenient) return s;
  if (s != GRIT_OK) {
    urdf_fail(c, s, line, "<mesh> %s", why);
    return s;
  }
  for (int i = 0; i < *nv; ++i)
    for (int k = 0; k < 3; ++k) (*v)[3 * i + k] *= g->scale[k];
  return GRIT_OK;
}

/* The mesh's convex shape (vertices in the pool, scaled); nvert = 0 when the lenient option drops a
 * format grit does not read. */
grit_status urdf_mesh_shape(urdf_ctx *c, const urdf_geom *g, int line, grit_shape *shape) {
  *shape = grit_shape_convex(NULL, 0);
  double *v;
  int *tri, nv, nt;
  char why[GRIT_MESSAGE_SIZE];
  grit_status s = read_scaled(c, g, line, &v, &nv, &tri, &nt, why);
  if (s == GRIT_ERR_UNSUPPORTED && c->opt.lenient) {
    urdf_warn(c, line, "<mesh> %s: the collision geometry is dropped", why);
    return GRIT_OK;
  }
  if (s != GRIT_OK) return s;
  /* the collision shape is the convex hull (Qhull, as for MJCF meshes of any size) */
  double *hv;
  int *ht, nhv, nht, reduced = 0;
  s = mjcf_mesh_hull(v, nv, GRIT_CONVEX_MAX_VERTICES, &c->pool, &hv, &nhv, &ht, &nht, &reduced, why);
  if (s != GRIT_OK) {
    urdf_fail(c, s, line, "<mesh> %s: %s", g->filename, why);
    return s;
  }
  if (reduced)
    urdf_warn(c, line, "<mesh> %s: its convex hull has more than %d vertices; the %d farthest out are kept",
              g->filename, GRIT_CONVEX_MAX_VERTICES, GRIT_CONVEX_MAX_VERTICES);
  *shape = grit_shape_convex(hv, nhv);
  return GRIT_OK;
}

/* The scaled mesh's volume, centre and inertia about it per unit density, in the mesh frame, weighed as
 * MuJoCo 2.2.2 weighs a mesh geometry (its faces; without faces its convex hull's). *volume = 0 when the
 * lenient option drops a mesh format grit does not read (its shape is dropped with a warning). */
grit_status urdf_mesh_mass(urdf_ctx *c, const urdf_geom *g, int line, double *volume, double com[3], double I[9]) {
  *volume = 0;
  double *v;
  int *tri, nv, nt;
  char why[GRIT_MESSAGE_SIZE];
  grit_status s = read_scaled(c, g, line, &v, &nv, &tri, &nt, why);
  if (s == GRIT_ERR_UNSUPPORTED && c->opt.lenient) return GRIT_OK; /* the shape's warning says it is dropped */
  if (s != GRIT_OK) return s;
  if (!nt) { /* a vertex cloud: its hull's faces */
    double *hv;
    int *ht, nhv, nht, reduced = 0;
    s = mjcf_mesh_hull(v, nv, 1 << 30, &c->pool, &hv, &nhv, &ht, &nht, &reduced, why);
    if (s != GRIT_OK) {
      urdf_fail(c, s, line, "<mesh> %s: %s", g->filename, why);
      return s;
    }
    v = hv, nv = nhv, tri = ht, nt = nht;
  }
  const int ok = mjcf_mesh_mass_mujoco(v, nv, tri, nt, 0, volume, com, I);
  if (ok < 0) urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, line, "out of memory");
  else if (!ok)
    urdf_fail(c, GRIT_ERR_INVALID_MODEL, line, "<mesh> %s encloses no volume: the link's mass cannot be computed",
              g->filename);
  return c->status;
}
