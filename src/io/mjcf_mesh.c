/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_mesh.c — the vertices and triangles of an <asset><mesh file="..."> (STL, binary or ASCII, and
 * Wavefront OBJ), and a closed triangle mesh's volume, centre and inertia, for the MJCF loader. grit
 * collides with the convex hull of a mesh's vertices (GRIT_GEOM_CONVEX, computed by mjcf_hull.c);
 * repeated vertices (an STL lists every triangle's three) are merged and the triangles renumbered onto
 * the merged ones. Any number of vertices is read (time O(n log n)). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
#include "status_internal.h"

/* The directory of a file's path with its '/' ("./" for a bare name): where its relative file names start. */
char *mjcf_dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const size_t n = slash ? (size_t)(slash - path) + 1 : 2;
  char *dir = malloc(n + 1);
  if (!dir) return NULL;
  memcpy(dir, slash ? path : "./", n);
  dir[n] = '\0';
  return dir;
}

/* The whole file into memory (at most MJCF_MAX_BYTES + 1 bytes are read: larger is an error), followed by
 * a zero byte so that text parsers stop at its end; the model file and its mesh files are read by this
 * one function. */
grit_status mjcf_read_file(const char *path, char **data, size_t *size, char *msg) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return grit_set_error(msg, GRIT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      if (cap > MJCF_MAX_BYTES) break;
      char *p = realloc(buf, 2 * cap);
      if (!p) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
      cap *= 2;
    }
    const size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  const int err = ferror(f);
  fclose(f);
  if (!buf) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "%s: out of memory reading the file", path);
  if (err) {
    free(buf);
    return grit_set_error(msg, GRIT_ERR_IO, "%s: read error", path);
  }
  if (n > MJCF_MAX_BYTES) {
    free(buf);
    return grit_set_error(msg, GRIT_ERR_CAPACITY, "%s: larger than 64 MiB", path);
  }
  if (n == cap) { /* room for the terminating zero */
    char *p = realloc(buf, n + 1);
    if (!p) {
      free(buf);
      return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "%s: out of memory reading the file", path);
    }
    buf = p;
  }
  buf[n] = '\0';
  *data = buf;
  *size = n;
  return GRIT_OK;
}

static int ends_with(const char *s, const char *suffix) {
  const size_t n = strlen(s), k = strlen(suffix);
  if (n < k) return 0;
  for (size_t i = 0; i < k; ++i)
    if (tolower((unsigned char)s[n - k + i]) != suffix[i]) return 0;
  return 1;
}

static float le_float(const unsigned char *p) {
  const uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Appends a vertex; returns 0 when out of memory. */
static int push(double **v, size_t *n, size_t *cap, const double x[3]) {
  if (*n == *cap) {
    const size_t c = *cap ? 2 * *cap : 256;
    double *p = realloc(*v, sizeof(double) * 3 * c);
    if (!p) return 0;
    *v = p;
    *cap = c;
  }
  memcpy(*v + 3 * *n, x, sizeof(double) * 3);
  ++*n;
  return 1;
}

static int push_tri(int **t, size_t *n, size_t *cap, int a, int b, int c) {
  if (*n == *cap) {
    const size_t k = *cap ? 2 * *cap : 256;
    int *p = realloc(*t, sizeof(int) * 3 * k);
    if (!p) return 0;
    *t = p;
    *cap = k;
  }
  int *o = *t + 3 * *n;
  o[0] = a, o[1] = b, o[2] = c;
  ++*n;
  return 1;
}

/* The vertex indices of an OBJ face line after "f" (tokens "v", "v/vt", "v//vn", "v/vt/vn"; negative:
 * counted back from the last vertex read): its triangles as a fan, 0-based. Returns 0 on a bad index. */
static int obj_face(const char *s, const char *end, size_t nv, int **t, size_t *nt, size_t *cap, int *oom) {
  long idx[3] = {0, 0, 0};
  int k = 0;
  while (s < end) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
    if (s >= end) break;
    char *q;
    const long v = strtol(s, &q, 10);
    if (q == s) return 0;
    const long i = v < 0 ? (long)nv + v : v - 1;
    if (v == 0 || i < 0 || i >= (long)nv) return 0;
    if (k < 2) idx[k] = i;
    else {
      idx[2] = i;
      if (!push_tri(t, nt, cap, (int)idx[0], (int)idx[1], (int)idx[2])) {
        *oom = 1;
        return 1;
      }
      idx[1] = i;
    }
    ++k;
    s = q;
    while (s < end && *s != ' ' && *s != '\t') ++s; /* skip "/vt/vn" */
  }
  return k >= 3;
}

/* The numbers after a keyword on one line of text (s..end): up to 3, returns how many were read. */
static int line_numbers(const char *s, const char *end, double out[3]) {
  char tmp[512];
  size_t len = (size_t)(end - s);
  if (len >= sizeof tmp) len = sizeof tmp - 1;
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  int k = 0;
  char *p = tmp;
  while (k < 3) {
    char *q;
    const double x = strtod(p, &q);
    if (q == p) break;
    out[k++] = x;
    p = q;
  }
  return k;
}

/* A 64-bit hash of a vertex's three coordinates (FNV-1a over their bits, mixed). */
static uint64_t hash_vertex(const double *x) {
  uint64_t h = 1469598103934665603ULL;
  for (int k = 0; k < 3; ++k) {
    uint64_t u;
    memcpy(&u, &x[k], sizeof u);
    h = (h ^ u) * 1099511628211ULL;
    h ^= h >> 29;
  }
  return h;
}

/* Merges exact copies among the n vertices of v in place (first occurrences kept, in order; -0 and +0
 * are one coordinate), writing each input vertex's new index to map; returns the number kept, or -1 when
 * out of memory. A hash table: linear in n. */
static long merge_vertices(double *v, size_t n, int *map) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  int *table = malloc(sizeof(int) * cap);
  if (!table) return -1;
  memset(table, 0xff, sizeof(int) * cap); /* -1: empty */
  size_t u = 0;
  for (size_t i = 0; i < n; ++i) {
    double x[3] = {v[3 * i] + 0.0, v[3 * i + 1] + 0.0, v[3 * i + 2] + 0.0};
    size_t slot = (size_t)hash_vertex(x) & (cap - 1);
    for (;; slot = (slot + 1) & (cap - 1)) {
      const int k = table[slot];
      if (k < 0) {
        table[slot] = (int)u;
        memcpy(v + 3 * u, x, sizeof x);
        map[i] = (int)u++;
        break;
      }
      const double *y = v + 3 * (size_t)k;
      if (y[0] == x[0] && y[1] == x[1] && y[2] == x[2]) {
        map[i] = k;
        break;
      }
    }
  }
  free(table);
  return (long)u;
}

grit_status mjcf_mesh_file_read(const char *path, mjcf_pool *pool, double **vert, int *nvert, int **tri, int *ntri,
                                char *msg) {
  *vert = NULL;
  *nvert = 0;
  *tri = NULL;
  *ntri = 0;
  const int stl = ends_with(path, ".stl"), obj = ends_with(path, ".obj"), msh = ends_with(path, ".msh");
  if (!stl && !obj && !msh)
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "mesh file '%s': only .stl, .obj and .msh are read", path);
  char *text;
  size_t size;
  grit_status s = mjcf_read_file(path, &text, &size, msg);
  if (s != GRIT_OK) return s;
  s = mjcf_mesh_parse(text, size, msh ? MJCF_MESH_MSH : stl, path, pool, vert, nvert, tri, ntri, msg);
  free(text);
  return s;
}

/* The vertices and triangles read so far, and whether reading failed (oom; bad: 1 a vertex without three
 * numbers, 2 a face with a bad index). */
typedef struct mesh_buf {
  double *v;
  int *t;
  size_t n, cap, nt, tcap;
  int oom, bad;
} mesh_buf;

/* A binary STL: an 80-byte header, the triangle count, then per triangle a normal, three vertices
 * (little-endian floats) and two attribute bytes; the arrays sized once. */
static void parse_binary_stl(const unsigned char *data, uint32_t nbin, mesh_buf *b) {
  b->cap = 3 * (size_t)nbin, b->tcap = nbin;
  b->v = malloc(sizeof(double) * 3 * (b->cap ? b->cap : 1));
  b->t = malloc(sizeof(int) * 3 * (b->tcap ? b->tcap : 1));
  b->oom = !b->v || !b->t;
  for (uint32_t f = 0; f < nbin && !b->oom; ++f) {
    for (int k = 0; k < 3 && !b->oom; ++k) {
      const unsigned char *p = data + 84 + 50 * (size_t)f + 12 + 12 * (size_t)k;
      const double x[3] = {le_float(p), le_float(p + 4), le_float(p + 8)};
      b->oom = !push(&b->v, &b->n, &b->cap, x);
    }
    if (!b->oom) b->oom = !push_tri(&b->t, &b->nt, &b->tcap, (int)(3 * f), (int)(3 * f + 1), (int)(3 * f + 2));
  }
}

static uint32_t le_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* MuJoCo's binary MSH (2.2.2's mjCMesh::LoadMSH): four int32 counts (vertices, normals, texture
 * coordinates, faces), then float32 vertices (3 each), normals (3), texture coordinates (2) and int32
 * faces (3 indices); at least 4 vertices, normals and texture coordinates none or one per vertex, and
 * the file exactly that long. Little-endian, as the files MuJoCo's tools write on x86. Returns 0, or an
 * error message's number (4: bad header or sizes, 5: the size does not match, 2: a bad face index). */
static int parse_msh(const unsigned char *data, size_t size, mesh_buf *b) {
  if (size < 16) return 4;
  const uint32_t nv = le_u32(data), nn = le_u32(data + 4), ntc = le_u32(data + 8), nf = le_u32(data + 12);
  if (nv < 4 || nv > INT32_MAX / 3 || nf > INT32_MAX / 3 || (nn && nn != nv) || (ntc && ntc != nv)) return 4;
  const uint64_t want = 16 + 12 * (uint64_t)nv + 12 * (uint64_t)nn + 8 * (uint64_t)ntc + 12 * (uint64_t)nf;
  if (want != size) return 5;
  b->cap = nv, b->tcap = nf;
  b->v = malloc(sizeof(double) * 3 * b->cap);
  b->t = malloc(sizeof(int) * 3 * (b->tcap ? b->tcap : 1));
  if ((b->oom = !b->v || !b->t)) return 0;
  for (uint32_t i = 0; i < nv; ++i) {
    const unsigned char *p = data + 16 + 12 * (size_t)i;
    const double x[3] = {le_float(p), le_float(p + 4), le_float(p + 8)};
    push(&b->v, &b->n, &b->cap, x); /* within cap */
  }
  const unsigned char *f = data + 16 + 12 * (size_t)nv + 12 * (size_t)nn + 8 * (size_t)ntc;
  for (uint32_t i = 0; i < nf; ++i) {
    int k[3];
    for (int j = 0; j < 3; ++j) {
      const uint32_t u = le_u32(f + 12 * (size_t)i + 4 * (size_t)j);
      if (u >= nv) return 2;
      k[j] = (int)u;
    }
    push_tri(&b->t, &b->nt, &b->tcap, k[0], k[1], k[2]);
  }
  return 0;
}

/* An ASCII STL ("vertex x y z") or OBJ ("v x y z", "f ..."), line by line. */
static void parse_text(const char *p, size_t size, int stl, mesh_buf *b) {
  const char *end = p + size;
  const int obj = !stl;
  while (p < end && !b->oom && !b->bad) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t')) ++q;
    const char *kw = stl ? "vertex" : "v";
    const size_t kl = strlen(kw);
    if ((size_t)(eol - q) > kl && !strncmp(q, kw, kl) && (q[kl] == ' ' || q[kl] == '\t')) {
      double x[3];
      if (line_numbers(q + kl, eol, x) == 3) b->oom = !push(&b->v, &b->n, &b->cap, x);
      else b->bad = 1;
      /* an ASCII STL's vertices come in threes, one triangle each */
      if (stl && !b->oom && !b->bad && b->n % 3 == 0)
        b->oom = !push_tri(&b->t, &b->nt, &b->tcap, (int)b->n - 3, (int)b->n - 2, (int)b->n - 1);
    } else if (obj && eol - q > 1 && q[0] == 'f' && (q[1] == ' ' || q[1] == '\t')) {
      if (!obj_face(q + 1, eol, b->n, &b->t, &b->nt, &b->tcap, &b->oom)) b->bad = 2;
    }
    p = eol + 1;
  }
}

grit_status mjcf_mesh_parse(const char *text, size_t size, int stl, const char *path, mjcf_pool *pool, double **vert,
                            int *nvert, int **tri, int *ntri, char *msg) {
  *vert = NULL;
  *nvert = 0;
  *tri = NULL;
  *ntri = 0;
  const unsigned char *data = (const unsigned char *)text;
  mesh_buf mb = {NULL, NULL, 0, 0, 0, 0, 0, 0};
  const uint32_t nbin = size >= 84 ? (uint32_t)data[80] | (uint32_t)data[81] << 8 | (uint32_t)data[82] << 16 |
                                         (uint32_t)data[83] << 24
                                   : 0;
  /* binary unless it reads as text: "solid" first and no zero byte at its start (some binary files also
   * begin with "solid": a size that matches their triangle count, or the zeros of their header or count,
   * tell them apart) */
  size_t lead = 0;
  while (lead < size && isspace(data[lead])) ++lead;
  const int ascii = size - lead >= 5 && !memcmp(data + lead, "solid", 5) &&
                    !(size >= 84 && (size - 84) / 50 == nbin && (size - 84) % 50 == 0) &&
                    !memchr(data, 0, size < 134 ? size : 134);
  if (stl == MJCF_MESH_MSH) {
    const int why = parse_msh(data, size, &mb);
    if (why == 4 || why == 5) {
      free(mb.v), free(mb.t);
      return grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': %s", path,
                            why == 4 ? "an MSH file needs a header of 4 counts: vertices (>= 4), normals and texture "
                                       "coordinates (0 or one per vertex), faces"
                                     : "an MSH file's size does not match the counts in its header");
    }
    mb.bad = why;
  } else if (stl && !ascii && (size < 84 || (size - 84) / 50 < nbin))
    return size < 84 ? grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a binary STL shorter than its 84-byte header",
                                      path)
                     : grit_set_error(msg, GRIT_ERR_PARSE,
                                      "mesh file '%s': binary STL truncated: %lu triangles announced, %zu bytes hold %zu",
                                      path, (unsigned long)nbin, size, (size - 84) / 50);
  if (stl != MJCF_MESH_MSH && stl && !ascii) parse_binary_stl(data, nbin, &mb);
  else if (stl != MJCF_MESH_MSH) parse_text((const char *)data, size, stl, &mb);
  double *v = mb.v;
  int *t = mb.t;
  const size_t n = mb.n, nt = mb.nt;
  int oom = mb.oom, bad = mb.bad;
  if (!oom && !bad)
    for (size_t i = 0; i < 3 * n && !bad; ++i)
      if (!isfinite(v[i])) bad = 3;
  int *map = oom || bad || n == 0 ? NULL : malloc(sizeof *map * n);
  if (!oom && !bad && n > 0 && !map) oom = 1;
  const long merged = oom || bad || n == 0 ? 0 : merge_vertices(v, n, map);
  if (merged < 0) oom = 1;
  if (oom || bad) {
    free(v), free(t), free(map);
    return oom        ? grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path)
           : bad == 1 ? grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a vertex without three numbers", path)
           : bad == 2 ? grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a face with a bad vertex index", path)
                      : grit_set_error(msg, GRIT_ERR_NOT_FINITE, "mesh file '%s': a vertex is not finite", path);
  }
  /* repeated vertices (exact copies) merged, the triangles renumbered */
  const size_t u = (size_t)merged;
  if (u < 4) {
    free(v), free(t), free(map);
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "mesh file '%s' has %zu distinct vertices: a mesh needs at least 4",
                          path, u);
  }
  double *out = mjcf_alloc(pool, sizeof(double) * 3 * u);
  int *tout = nt ? mjcf_alloc(pool, sizeof(int) * 3 * nt) : NULL;
  if (!out || (nt && !tout)) {
    free(v), free(t), free(map);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path);
  }
  memcpy(out, v, sizeof(double) * 3 * u);
  for (size_t i = 0; i < 3 * nt; ++i) tout[i] = map[t[i]];
  free(v), free(t), free(map);
  *vert = out;
  *nvert = (int)u;
  *tri = tout;
  *ntri = (int)nt;
  return GRIT_OK;
}

/* Whether every directed edge of the triangles has its reverse: a closed, consistently oriented
 * surface, without which the divergence theorem below would give a volume that depends on the origin.
 * A hash set of the directed edges: linear in the triangles. -1 when out of memory. */
static int closed_surface(const int *tri, int ntri) {
  const size_t ne = 3 * (size_t)ntri;
  size_t cap = 16;
  while (cap < 2 * ne) cap *= 2;
  uint64_t *set = malloc(sizeof(uint64_t) * cap);
  if (!set) return -1;
  const uint64_t EMPTY = ~(uint64_t)0;
  memset(set, 0xff, sizeof(uint64_t) * cap);
#define EDGE_KEY(a, b) ((uint64_t)(uint32_t)(a) << 32 | (uint32_t)(b))
#define EDGE_SLOT(key) ((size_t)(((key) * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1))
  for (size_t i = 0; i < ne; ++i) {
    const uint64_t key = EDGE_KEY(tri[i], tri[i % 3 == 2 ? i - 2 : i + 1]);
    size_t slot = EDGE_SLOT(key);
    while (set[slot] != EMPTY && set[slot] != key) slot = (slot + 1) & (cap - 1);
    set[slot] = key;
  }
  int closed = 1;
  for (size_t i = 0; i < ne && closed; ++i) {
    const uint64_t rev = EDGE_KEY(tri[i % 3 == 2 ? i - 2 : i + 1], tri[i]);
    size_t slot = EDGE_SLOT(rev);
    while (set[slot] != EMPTY && set[slot] != rev) slot = (slot + 1) & (cap - 1);
    closed = set[slot] == rev;
  }
#undef EDGE_KEY
#undef EDGE_SLOT
  free(set);
  return closed;
}

/* Volume, centre and inertia (about the centre, unit density) of the solid a closed triangle mesh bounds,
 * by the divergence theorem over the tetrahedra the triangles make with the origin: a tetrahedron
 * (0, a, b, c) of signed volume V = det[a b c] / 6 has centroid (a + b + c) / 4 and second moment
 * int x x^T = V / 20 (a a^T + b b^T + c c^T + s s^T), s = a + b + c. Triangles facing inwards give the
 * negative of everything, which is undone. Returns 0 if the surface is not closed or encloses no
 * volume, -1 when out of memory. */
int mjcf_mesh_mass_properties(const double *v, const int *tri, int ntri, double *volume, double com[3],
                              double inertia[9]) {
  const int closed = closed_surface(tri, ntri);
  if (closed <= 0) return closed;
  double V = 0, c[3] = {0, 0, 0}, S[9] = {0};
  for (int f = 0; f < ntri; ++f) {
    const double *a = v + 3 * tri[3 * f], *b = v + 3 * tri[3 * f + 1], *d = v + 3 * tri[3 * f + 2];
    const double det = a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0]) +
                       a[2] * (b[0] * d[1] - b[1] * d[0]);
    const double vol = det / 6.0, s[3] = {a[0] + b[0] + d[0], a[1] + b[1] + d[1], a[2] + b[2] + d[2]};
    V += vol;
    for (int i = 0; i < 3; ++i) c[i] += vol * s[i] / 4.0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) S[3 * i + j] += vol / 20.0 * (a[i] * a[j] + b[i] * b[j] + d[i] * d[j] + s[i] * s[j]);
  }
  if (V < 0) { /* inward-facing triangles */
    V = -V;
    for (int i = 0; i < 3; ++i) c[i] = -c[i];
    for (int i = 0; i < 9; ++i) S[i] = -S[i];
  }
  double ext = 0; /* the mesh's extent, for a relative volume test */
  for (int f = 0; f < 3 * ntri; ++f)
    for (int k = 0; k < 3; ++k) ext = fmax(ext, fabs(v[3 * tri[f] + k]));
  if (!(V > 1e-12 * ext * ext * ext) || !isfinite(V)) return 0;
  for (int i = 0; i < 3; ++i) com[i] = c[i] / V;
  /* second moment about the centre, then the inertia tensor tr(C) I - C */
  double C[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = S[3 * i + j] - V * com[i] * com[j];
  const double tr = C[0] + C[4] + C[8];
  for (int i = 0; i < 9; ++i) inertia[i] = (i % 4 == 0 ? tr : 0.0) - C[i];
  *volume = V;
  return 1;
}

/* A triangle's area, unit normal and centroid (0 and a zero normal when degenerate). */
static double area_normal_centre(double n[3], double cen[3], const float *a, const float *b, const float *c) {
  const double e1[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
  const double e2[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
  n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
  const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  for (int k = 0; k < 3; ++k) cen[k] = ((double)a[k] + b[k] + c[k]) / 3;
  if (len < 1e-15) {
    n[0] = n[1] = n[2] = 0;
    return 0;
  }
  for (int k = 0; k < 3; ++k) n[k] /= len;
  return len / 2;
}

int mjcf_mesh_mass_mujoco(const double *v, int nv, const int *tri, int ntri, int exact, double *volume, double com[3],
                          double inertia[9]) {
  float *f = malloc(sizeof(float) * 3 * (size_t)(nv > 0 ? nv : 1)); /* MuJoCo holds vertices in single precision */
  if (!f) return -1;
  for (int i = 0; i < 3 * nv; ++i) f[i] = (float)v[i];
  double n[3], cen[3], fc[3] = {0, 0, 0}, area = 0;
  for (int t = 0; t < ntri; ++t) { /* the area-weighted centroid of the faces: the pyramids' apex */
    const double a = area_normal_centre(n, cen, f + 3 * tri[3 * t], f + 3 * tri[3 * t + 1], f + 3 * tri[3 * t + 2]);
    for (int k = 0; k < 3; ++k) fc[k] += a * cen[k];
    area += a;
  }
  int ok = area >= 1e-15;
  double V = 0, c[3] = {0, 0, 0};
  for (int k = 0; k < 3 && ok; ++k) fc[k] /= area;
  for (int t = 0; t < ntri && ok; ++t) { /* volume and centre of the pyramids on the faces */
    const double a = area_normal_centre(n, cen, f + 3 * tri[3 * t], f + 3 * tri[3 * t + 1], f + 3 * tri[3 * t + 2]);
    double vol = ((cen[0] - fc[0]) * n[0] + (cen[1] - fc[1]) * n[1] + (cen[2] - fc[2]) * n[2]) * a / 3;
    if (!exact) vol = fabs(vol);
    V += vol;
    for (int k = 0; k < 3; ++k) c[k] += vol * (cen[k] * 3.0 / 4.0 + fc[k] / 4.0);
  }
  ok = ok && V >= 1e-15;
  for (int k = 0; k < 3 && ok; ++k) c[k] /= V;
  for (int i = 0; i < nv && ok; ++i)
    for (int k = 0; k < 3; ++k) f[3 * i + k] = (float)(f[3 * i + k] - c[k]); /* re-centred, in single precision */
  static const int K[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double P[6] = {0, 0, 0, 0, 0, 0};
  V = 0;
  for (int t = 0; t < ntri && ok; ++t) { /* second moments of the pyramids from the centre */
    const float *D = f + 3 * tri[3 * t], *E = f + 3 * tri[3 * t + 1], *F = f + 3 * tri[3 * t + 2];
    const double a = area_normal_centre(n, cen, D, E, F);
    double vol = (cen[0] * n[0] + cen[1] * n[1] + cen[2] * n[2]) * a / 3;
    if (!exact) vol = fabs(vol);
    V += vol;
    for (int j = 0; j < 6; ++j) {
      const int p = K[j][0], q = K[j][1];
      P[j] += vol / 20 *
              (2 * ((double)D[p] * D[q] + (double)E[p] * E[q] + (double)F[p] * F[q]) + (double)D[p] * E[q] +
               (double)D[q] * E[p] + (double)D[p] * F[q] + (double)D[q] * F[p] + (double)E[p] * F[q] + (double)E[q] * F[p]);
    }
  }
  free(f);
  if (!ok || !(V >= 1e-15) || !isfinite(V)) return 0;
  inertia[0] = P[1] + P[2], inertia[4] = P[0] + P[2], inertia[8] = P[0] + P[1];
  inertia[1] = inertia[3] = -P[3];
  inertia[2] = inertia[6] = -P[4];
  inertia[5] = inertia[7] = -P[5];
  memcpy(com, c, sizeof c);
  *volume = V;
  if (exact) return 1;
  /* MuJoCo's default (legacy) mass is that of the mesh's equivalent inertia box: half sizes
   * b_i = sqrt(6 (e_j + e_k - e_i) / V) / 2 from the principal moments e (unit density), volume 8 b0 b1 b2,
   * with the same moments per unit mass (mjCGeom::GetVolume, mjCMesh::Process) */
  double e[3], R[9], b[3];
  mjcf_eig3(inertia, e, R);
  for (int i = 0; i < 3; ++i) {
    const double d = e[(i + 1) % 3] + e[(i + 2) % 3] - e[i];
    if (!(d >= 0) || !(e[i] > 0)) return 0;
    b[i] = sqrt(6 * d / V) / 2;
  }
  const double box = 8 * b[0] * b[1] * b[2];
  if (!(box >= 1e-15)) return 0;
  for (int i = 0; i < 9; ++i) inertia[i] *= box / V;
  *volume = box;
  return 1;
}

/* ------------------------------------------------------------- primitives fitted to meshes */

/* compiler fitaabb="true": the sizes from the mesh's bounding box in its principal frame (vertices
 * re-centred at `com` and turned onto the axes `ax`, in single precision as MuJoCo's mesh compiler holds
 * them); the sphere and the capsule enclose the vertices. `off` receives the primitive's offset in the
 * geometry's frame as MuJoCo 2.2.2 places it: minus the box's centre in principal coordinates (measured
 * against 2.2.2, tests/test_mjcf_real.c; neither the mesh's centre nor the geometry's axes enter). */
static void fit_aabb(const mjcf_mesh *m, mjcf_geom *g, const double com[3], double ax[3][3], double off[3]) {
  double lo[3] = {1e10, 1e10, 1e10}, hi[3] = {-1e10, -1e10, -1e10};
  float *p = malloc(sizeof(float) * 3 * (size_t)(m->nvert > 0 ? m->nvert : 1));
  if (!p) return; /* sizes stay 0: reported as non-positive by the caller */
  for (int i = 0; i < m->nvert; ++i) {
    float r[3];
    for (int k = 0; k < 3; ++k) r[k] = (float)((float)m->vert[3 * i + k] - com[k]);
    for (int k = 0; k < 3; ++k) {
      p[3 * i + k] = (float)(ax[k][0] * r[0] + ax[k][1] * r[1] + ax[k][2] * r[2]);
      lo[k] = fmin(lo[k], p[3 * i + k]), hi[k] = fmax(hi[k], p[3 * i + k]);
    }
  }
  double cen[3];
  for (int k = 0; k < 3; ++k) cen[k] = (lo[k] + hi[k]) / 2, off[k] = -cen[k];
  double r0 = 0, h = 0;
  for (int i = 0; i < m->nvert; ++i) {
    const double dx = p[3 * i] - cen[0], dy = p[3 * i + 1] - cen[1], dz = p[3 * i + 2] - cen[2];
    if (g->type == MJCF_GEOM_SPHERE) r0 = fmax(r0, sqrt(dx * dx + dy * dy + dz * dz));
    else r0 = fmax(r0, sqrt(dx * dx + dy * dy)), h = fmax(h, fabs(dz));
  }
  if (g->type == MJCF_GEOM_CAPSULE) { /* the caps are curved: the half length that encloses every vertex */
    h = 0;
    for (int i = 0; i < m->nvert; ++i) {
      const double dx = p[3 * i] - cen[0], dy = p[3 * i + 1] - cen[1], dz = p[3 * i + 2] - cen[2];
      const double dst = sqrt(dx * dx + dy * dy);
      h = fmax(h, fabs(dz) - r0 * sin(acos(fmin(1, dst / r0))));
    }
  }
  free(p);
  g->csize[0] = r0, g->csize[1] = h;
  if (g->type == MJCF_GEOM_BOX || g->type == MJCF_GEOM_ELLIPSOID)
    for (int k = 0; k < 3; ++k) g->csize[k] = hi[k] - cen[k];
}

void mjcf_mesh_fit(mjcf_ctx *c, const mjcf_mesh *m, mjcf_geom *g) {
  double V, com[3], I[9], e[3], R[9], b[3];
  /* the mesh's volume, centre and inertia as MuJoCo's mesh compiler has them (the file's faces, or
   * without faces its convex hull's) */
  const int ok = m->ntri ? mjcf_mesh_mass_mujoco(m->vert, m->nvert, m->tri, m->ntri, c->exactmeshinertia, &V, com, I)
                         : mjcf_mesh_mass_mujoco(m->hvert, m->nhvert, m->htri, m->nhtri, c->exactmeshinertia, &V, com, I);
  if (ok <= 0) {
    mjcf_fail_at(c, ok < 0 ? GRIT_ERR_OUT_OF_MEMORY : GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line,
                 ok < 0 ? "out of memory" : "the mesh encloses no volume: no primitive can be fitted to it", 0);
    return;
  }
  mjcf_eig3(I, e, R);
  int o[3] = {0, 1, 2}; /* principal moments in decreasing order, as mju_eig3 returns them */
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2 - i; ++j)
      if (e[o[j]] < e[o[j + 1]]) {
        const int t = o[j];
        o[j] = o[j + 1], o[j + 1] = t;
      }
  double ax[3][3];
  for (int k = 0; k < 3; ++k)
    for (int r = 0; r < 3; ++r) ax[k][r] = R[3 * r + o[k]];
  double zc[3];
  mjcf_cross(zc, ax[0], ax[1]); /* a right-handed frame: z = x cross y (the axes' signs do not matter) */
  memcpy(ax[2], zc, sizeof zc);
  for (int i = 0; i < 3; ++i) { /* the equivalent inertia box's half sizes */
    const double d = e[o[(i + 1) % 3]] + e[o[(i + 2) % 3]] - e[o[i]];
    b[i] = d > 0 ? sqrt(6 * d / V) / 2 : 0;
  }
  double off[3] = {com[0], com[1], com[2]}; /* the primitive's centre in the geometry's frame */
  if (c->fitaabb) {
    fit_aabb(m, g, com, ax, off);
  } else if (g->type == MJCF_GEOM_SPHERE) {
    g->csize[0] = (b[0] + b[1] + b[2]) / 3;
  } else if (g->type == MJCF_GEOM_CAPSULE) {
    g->csize[0] = (b[0] + b[1]) / 2;
    g->csize[1] = fmax(0, b[2] - g->csize[0] / 2);
  } else if (g->type == MJCF_GEOM_CYLINDER) {
    g->csize[0] = (b[0] + b[1]) / 2, g->csize[1] = b[2];
  } else { /* box, ellipsoid */
    memcpy(g->csize, b, sizeof b);
  }
  for (int i = 0; i < 3; ++i) g->csize[i] *= g->fitscale;
  /* the primitive sits in the mesh's principal frame: the geometry's frame composed with it */
  double Rg[9], q[4], qp[4];
  mjcf_quat2mat(Rg, g->cquat);
  for (int i = 0; i < 3; ++i) g->cpos[i] += Rg[3 * i] * off[0] + Rg[3 * i + 1] * off[1] + Rg[3 * i + 2] * off[2];
  mjcf_frame2quat(qp, ax[0], ax[1], ax[2]);
  mjcf_mulquat(q, g->cquat, qp);
  memcpy(g->cquat, q, sizeof q);
}
