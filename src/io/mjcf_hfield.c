/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_hfield.c — <asset><hfield> and the grid of a height-field geometry (MuJoCo 2.2.2's conventions).
 *
 * size = (radius_x, radius_y, elevation_z, base_z): the grid spans [-rx, rx] x [-ry, ry], its nrow rows
 * along y and ncol columns along x; an elevation e in [0, 1] is at z = e elevation_z; the base is at
 * z = -base_z. `elevation` lists nrow x ncol numbers row by row, normalized to [0, 1] as MuJoCo does
 * ((e - min) / (max - min); all equal: all 0); without it the field is flat (a program may set it in
 * MuJoCo). `file` reads a PNG image or MuJoCo's binary format (mjcf_hfield_file.c), nrow and ncol then
 * the file's; an unnamed field is named after its file's stem, as MuJoCo names it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"

/* The grid points (3 per point, row-major) of nrow x ncol normalized elevations e (NULL: flat). */
static double *hfield_grid(mjcf_ctx *c, const mjcf_hfield *h, const double *e) {
  double *g = mjcf_alloc(&c->pool, sizeof(double) * 3 * (size_t)h->nrow * (size_t)h->ncol);
  if (!g) return NULL;
  for (int r = 0; r < h->nrow; ++r)
    for (int k = 0; k < h->ncol; ++k) {
      double *p = g + 3 * ((size_t)r * h->ncol + k);
      p[0] = h->size[0] * (2.0 * k / (h->ncol - 1) - 1.0);
      p[1] = h->size[1] * (2.0 * r / (h->nrow - 1) - 1.0);
      p[2] = e ? e[(size_t)r * h->ncol + k] * h->size[2] : 0.0;
    }
  return g;
}

/* The normalized elevations of a height field's file (mjcf_hfield_file.c) in the pool, its nrow and ncol
 * set on h; NULL with an error on c. */
static double *read_file(mjcf_ctx *c, const mjcf_node *e, const char *file, mjcf_hfield *h) {
  char path[4096], why[GRIT_MESSAGE_SIZE];
  if (!mjcf_asset_path(c, e, file, path, sizeof path)) return NULL;
  float *data = NULL;
  const grit_status s = mjcf_hfield_file_read(path, &data, &h->nrow, &h->ncol, why);
  if (s != GRIT_OK) {
    mjcf_fail(c, s, e, "%s", why);
    return NULL;
  }
  const size_t n = (size_t)h->nrow * (size_t)h->ncol;
  double *out = mjcf_alloc(&c->pool, sizeof *out * n);
  for (size_t i = 0; out && i < n; ++i) out[i] = data[i];
  free(data);
  if (!out) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, e, "out of memory");
  return out;
}

/* Normalizes n elevations to [0, 1] in place (MuJoCo's compiler). */
static void normalize(double *e, int n) {
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; ++i) lo = fmin(lo, e[i]), hi = fmax(hi, e[i]);
  for (int i = 0; i < n; ++i) e[i] = hi - lo > 1e-15 ? (e[i] - lo) / (hi - lo) : 0.0;
}

void mjcf_read_hfield(mjcf_ctx *c, const mjcf_node *e) {
  mjcf_hfield h;
  memset(&h, 0, sizeof h);
  h.name = mjcf_read_name(c, e, "name");
  h.line = e->line, h.file = e->file;
  long v = 0;
  if (mjcf_read_int(c, e, "nrow", 0, 100000, &v)) h.nrow = (int)v;
  if (mjcf_read_int(c, e, "ncol", 0, 100000, &v)) h.ncol = (int)v;
  mjcf_read_numbers(c, e, "size", h.size, 4, 4);
  double *elev = NULL;
  int count = 0;
  const int has_elev = mjcf_read_array(c, e, "elevation", &elev, &count);
  const char *file = mjcf_attr(e, "file");
  mjcf_mark(e, "file");
  mjcf_mark(e, "content_type");
  mjcf_finish(c, e);
  if (c->status != GRIT_OK) return;
  double *fe = NULL;
  if (file && (h.nrow || h.ncol || has_elev))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a height field from a file cannot also give nrow, ncol or elevation");
  else if (file) {
    if (!h.name) h.name = mjcf_file_stem(c, file);
    fe = read_file(c, e, file, &h);
  }
  if (c->status != GRIT_OK) return;
  int sizes_ok = 1;
  for (int i = 0; i < 4; ++i) sizes_ok &= h.size[i] > 0 && isfinite(h.size[i]);
  if (!h.name) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a height field needs a 'name'");
  else if ((h.nrow < 2 || h.ncol < 2) && file)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "height field file '%.200s': %d x %d points, grit needs at least 2 x 2",
              file, h.nrow, h.ncol);
  else if (h.nrow < 2 || h.ncol < 2)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a height field without a file needs nrow and ncol of at least 2");
  else if (!sizes_ok) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'size': all four numbers must be positive");
  else if (has_elev && count != h.nrow * h.ncol)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'elevation': %d numbers, need nrow x ncol = %d", count,
              h.nrow * h.ncol);
  if (c->status != GRIT_OK) return;
  if (has_elev) normalize(elev, count);
  h.grid = hfield_grid(c, &h, has_elev ? elev : fe);
  if (!h.grid) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, e, "out of memory");
    return;
  }
  mjcf_hfield *p = mjcf_push(c, &c->hfields, sizeof *p);
  if (p) *p = h;
}

int mjcf_hfield_index(const mjcf_ctx *c, const char *name) {
  for (int i = 0; name && i < c->hfields.n; ++i)
    if (!strcmp(MJCF_AT(c->hfields, mjcf_hfield, i)->name, name)) return i;
  return -1;
}
