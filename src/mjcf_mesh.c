/* mjcf_mesh.c — the vertices of an <asset><mesh file="..."> (STL, binary or ASCII, and Wavefront OBJ),
 * for the MJCF loader. grit collides with the convex hull of a mesh's vertices (GRIT_GEOM_CONVEX), so
 * only the vertices are read; repeated ones (an STL lists every triangle's three) are merged. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"
#include "status_internal.h"

/* The whole file into memory, at most MJCF_MAX_BYTES (a larger file is an error). */
static grit_status slurp(const char *path, unsigned char **data, size_t *size, char *msg) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return grit_set_error(msg, GRIT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      if (cap > MJCF_MAX_BYTES) break;
      unsigned char *p = realloc(buf, 2 * cap);
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
  if (!buf) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  if (err || n > MJCF_MAX_BYTES) {
    free(buf);
    return err ? grit_set_error(msg, GRIT_ERR_IO, "cannot read '%s'", path)
               : grit_set_error(msg, GRIT_ERR_CAPACITY, "'%s' is larger than 64 MiB", path);
  }
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

static int cmp_vertex(const void *a, const void *b) {
  const double *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

grit_status mjcf_mesh_file_vertices(const char *path, mjcf_pool *pool, double **vert, int *nvert, char *msg) {
  *vert = NULL;
  *nvert = 0;
  const int stl = ends_with(path, ".stl"), obj = ends_with(path, ".obj");
  if (!stl && !obj) return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "mesh file '%s': only .stl and .obj are read", path);
  unsigned char *data;
  size_t size;
  grit_status s = slurp(path, &data, &size, msg);
  if (s != GRIT_OK) return s;
  double *v = NULL;
  size_t n = 0, cap = 0;
  int oom = 0, bad = 0;
  const uint32_t ntri = size >= 84 ? (uint32_t)data[80] | (uint32_t)data[81] << 8 | (uint32_t)data[82] << 16 |
                                         (uint32_t)data[83] << 24
                                   : 0;
  if (stl && size >= 84 && (size - 84) / 50 == ntri && (size - 84) % 50 == 0) {
    /* binary STL: an 80-byte header, the triangle count, then per triangle a normal, three vertices
     * (little-endian floats) and two attribute bytes */
    for (uint32_t t = 0; t < ntri && !oom; ++t)
      for (int k = 0; k < 3 && !oom; ++k) {
        const unsigned char *p = data + 84 + 50 * (size_t)t + 12 + 12 * (size_t)k;
        const double x[3] = {le_float(p), le_float(p + 4), le_float(p + 8)};
        oom = !push(&v, &n, &cap, x);
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
      }
      p = eol + 1;
    }
  }
  free(data);
  if (oom || bad) {
    free(v);
    return oom ? grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path)
               : grit_set_error(msg, GRIT_ERR_PARSE, "mesh file '%s': a vertex without three numbers", path);
  }
  for (size_t i = 0; i < 3 * n; ++i)
    if (!isfinite(v[i])) {
      free(v);
      return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "mesh file '%s': a vertex is not finite", path);
    }
  /* merge repeated vertices (exact copies) */
  if (n > 0) qsort(v, n, sizeof(double) * 3, cmp_vertex);
  size_t u = 0;
  for (size_t i = 0; i < n; ++i)
    if (u == 0 || cmp_vertex(v + 3 * i, v + 3 * (u - 1)) != 0) memmove(v + 3 * u++, v + 3 * i, sizeof(double) * 3);
  if (u < 4 || u > 4096) {
    free(v);
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "mesh file '%s' has %zu distinct vertices: grit needs 4 to 4096", path,
                          u);
  }
  double *out = mjcf_alloc(pool, sizeof(double) * 3 * u);
  if (!out) {
    free(v);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory reading mesh file '%s'", path);
  }
  memcpy(out, v, sizeof(double) * 3 * u);
  free(v);
  *vert = out;
  *nvert = (int)u;
  return GRIT_OK;
}
