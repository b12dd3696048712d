/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_mesh.c — the vertices and triangles of an <asset><mesh file="..."> (STL, binary or ASCII, and
 * Wavefront OBJ), and a closed triangle mesh's volume, centre and inertia, for the MJCF loader. grit
 * collides with the convex hull of a mesh's vertices (GRIT_GEOM_CONVEX); repeated vertices (an STL lists
 * every triangle's three) are merged and the triangles renumbered onto the merged ones. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
#include "status_internal.h"

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

typedef struct indexed_vertex {
  double x[3];
  int index; /* in the file */
} indexed_vertex;

static int cmp_vertex(const void *a, const void *b) {
  const double *x = ((const indexed_vertex *)a)->x, *y = ((const indexed_vertex *)b)->x;
  for (int k = 0; k < 3; ++k)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return ((const indexed_vertex *)a)->index - ((const indexed_vertex *)b)->index; /* deterministic */
}

static int same_vertex(const indexed_vertex *a, const indexed_vertex *b) {
  return a->x[0] == b->x[0] && a->x[1] == b->x[1] && a->x[2] == b->x[2];
}

grit_status mjcf_mesh_file_read(const char *path, mjcf_pool *pool, double **vert, int *nvert, int **tri, int *ntri,
                                char *msg) {
  *vert = NULL;
  *nvert = 0;
  *tri = NULL;
  *ntri = 0;
  const int stl = ends_with(path, ".stl"), obj = ends_with(path, ".obj");
  if (!stl && !obj) return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "mesh file '%s': only .stl and .obj are read", path);
  char *text;
  size_t size;
  grit_status s = mjcf_read_file(path, &text, &size, msg);
  if (s != GRIT_OK) return s;
  s = mjcf_mesh_parse(text, size, stl, path, pool, vert, nvert, tri, ntri, msg);
  free(text);
  return s;
}

/* An ASCII STL begins with "solid" (after blanks); a binary one whose size disagrees with its triangle
 * count is truncated (reported as such, not as a mesh of no vertices). */
static int starts_with_solid(const char *text, size_t size) {
  size_t i = 0;
  while (i < size && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  return size - i >= 5 && !memcmp(text + i, "solid", 5);
}

grit_status mjcf_mesh_parse(const char *text, size_t size, int stl, const char *path, mjcf_pool *pool, double **vert,
                            int *nvert, int **tri, int *ntri, char *msg) {
  *vert = NULL;
  *nvert = 0;
  *tri = NULL;
  *ntri = 0;
  const int obj = !stl;
  const unsigned char *data = (const unsigned char *)text;
  double *v = NULL;
  int *t = NULL;
  size_t n = 0, cap = 0, nt = 0, tcap = 0;
  int oom = 0, bad = 0;
  const uint32_t nbin = size >= 84 ? (uint32_t)data[80] | (uint32_t)data[81] << 8 | (uint32_t)data[82] << 16 |
                                         (uint32_t)data[83] << 24
                                   : 0;
  const int binary = stl && size >= 84 && (size - 84) / 50 == nbin && (size - 84) % 50 == 0;
  if (stl && !binary && !starts_with_solid(text, size) && size < 84) /* neither binary nor ASCII */
    return grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a binary STL truncated (%zu bytes, shorter than "
                          "its 84-byte header)", path, size);
  if (stl && !binary && !starts_with_solid(text, size))
    return grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a binary STL truncated or padded (%zu bytes; its "
                          "header counts %lu triangles, which take %llu)", path, size, (unsigned long)nbin,
                          84ULL + 50ULL * nbin);
  if (binary) {
    /* binary STL: an 80-byte header, the triangle count, then per triangle a normal, three vertices
     * (little-endian floats) and two attribute bytes */
    for (uint32_t f = 0; f < nbin && !oom; ++f) {
      for (int k = 0; k < 3 && !oom; ++k) {
        const unsigned char *p = data + 84 + 50 * (size_t)f + 12 + 12 * (size_t)k;
        const double x[3] = {le_float(p), le_float(p + 4), le_float(p + 8)};
        oom = !push(&v, &n, &cap, x);
      }
      if (!oom) oom = !push_tri(&t, &nt, &tcap, (int)(3 * f), (int)(3 * f + 1), (int)(3 * f + 2));
    }
  } else {
    /* ASCII STL ("vertex x y z") or OBJ ("v x y z"), line by line */
    const char *p = (const char *)data, *end = p + size;
    while (p < end && !oom && !bad) {
      const char *eol = memchr(p, '\n', (size_t)(end - p));
      if (!eol) eol = end;
      const char *q = p;
      while (q < eol && (*q == ' ' || *q == '\t')) ++q;
      const char *kw = stl ? "vertex" : "v";
      const size_t kl = strlen(kw);
      if ((size_t)(eol - q) > kl && !strncmp(q, kw, kl) && (q[kl] == ' ' || q[kl] == '\t')) {
        double x[3];
        if (line_numbers(q + kl, eol, x) == 3) oom = !push(&v, &n, &cap, x);
        else bad = 1;
        /* an ASCII STL's vertices come in threes, one triangle each */
        if (stl && !oom && !bad && n % 3 == 0) oom = !push_tri(&t, &nt, &tcap, (int)n - 3, (int)n - 2, (int)n - 1);
      } else if (obj && eol - q > 1 && q[0] == 'f' && (q[1] == ' ' || q[1] == '\t')) {
        if (!obj_face(q + 1, eol, n, &t, &nt, &tcap, &oom)) bad = 2;
      }
      p = eol + 1;
    }
  }
  if (!oom && !bad)
    for (size_t i = 0; i < 3 * n && !bad; ++i)
      if (!isfinite(v[i])) bad = 3;
  indexed_vertex *iv = oom || bad || n == 0 ? NULL : malloc(sizeof *iv * n);
  int *map = iv ? malloc(sizeof *map * n) : NULL;
  if (!oom && !bad && n > 0 && !map) oom = 1;
  if (oom || bad) {
    free(v), free(t), free(iv), free(map);
    return oom        ? grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path)
           : bad == 1 ? grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a vertex without three numbers", path)
           : bad == 2 ? grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a face with a bad vertex index", path)
                      : grit_set_error(msg, GRIT_ERR_NOT_FINITE, "mesh file '%s': a vertex is not finite", path);
  }
  /* merge repeated vertices (exact copies), renumbering the triangles */
  for (size_t i = 0; i < n; ++i) memcpy(iv[i].x, v + 3 * i, sizeof iv[i].x), iv[i].index = (int)i;
  if (n > 0) qsort(iv, n, sizeof *iv, cmp_vertex);
  size_t u = 0;
  for (size_t i = 0; i < n; ++i) {
    if (u == 0 || !same_vertex(&iv[i], &iv[u - 1])) iv[u++] = iv[i];
    map[iv[i].index] = (int)u - 1;
  }
  free(v);
  if (u < 4 || u > 4096) {
    free(t), free(iv), free(map);
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "mesh file '%s' has %zu distinct vertices: grit needs 4 to 4096", path,
                          u);
  }
  double *out = mjcf_alloc(pool, sizeof(double) * 3 * u);
  int *tout = nt ? mjcf_alloc(pool, sizeof(int) * 3 * nt) : NULL;
  if (!out || (nt && !tout)) {
    free(t), free(iv), free(map);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path);
  }
  for (size_t i = 0; i < u; ++i) memcpy(out + 3 * i, iv[i].x, sizeof iv[i].x);
  for (size_t i = 0; i < 3 * nt; ++i) tout[i] = map[t[i]];
  free(t), free(iv), free(map);
  *vert = out;
  *nvert = (int)u;
  *tri = tout;
  *ntri = (int)nt;
  return GRIT_OK;
}

static int cmp_edge(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Whether every directed edge of the triangles has its reverse: a closed, consistently oriented
 * surface, without which the divergence theorem below would give a volume that depends on the origin.
 * -1 when out of memory. */
static int closed_surface(const int *tri, int ntri) {
  const size_t ne = 3 * (size_t)ntri;
  int *e = malloc(sizeof(int) * 2 * ne);
  if (!e) return -1;
  for (int f = 0; f < ntri; ++f)
    for (int k = 0; k < 3; ++k) e[2 * (3 * f + k)] = tri[3 * f + k], e[2 * (3 * f + k) + 1] = tri[3 * f + (k + 1) % 3];
  qsort(e, ne, sizeof(int) * 2, cmp_edge);
  int closed = 1;
  for (size_t i = 0; i < ne && closed; ++i) {
    const int rev[2] = {e[2 * i + 1], e[2 * i]};
    closed = bsearch(rev, e, ne, sizeof(int) * 2, cmp_edge) != NULL;
  }
  free(e);
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
