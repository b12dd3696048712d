/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_hfield_file.c — the elevations of a height-field file, read as MuJoCo 2.2.2 reads them.
 *
 * A name ending in ".png" (any case) is a PNG image, decoded by libpng: each pixel's grey level (8 bits;
 * a colour pixel's red level, a palette entry's red level, a 16-bit sample's high byte, alpha ignored —
 * what MuJoCo's decoder gives for an 8-bit grey image), the image's top row at +y (MuJoCo flips the rows:
 * grid row 0 is the image's bottom row). Any other name is MuJoCo's binary format: int32 nrow, int32 ncol,
 * then nrow x ncol float32, row 0 at -y, the file exactly that long. The values are then normalized to
 * [0, 1] in single precision, (e - min) / (max - min), as MuJoCo stores them in hfield_data, so that the
 * grid's elevations are MuJoCo's to the bit. Hostile files (truncated, corrupt, huge) are errors, never
 * crashes: libpng's errors come back through its long jump, sizes are bounded before allocation. */
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mjcf_internal.h"
#include "status_internal.h"

/* The largest side and number of points grit accepts (as the nrow, ncol attributes: 100000). */
#define HF_MAX_SIDE 100000u
#define HF_MAX_POINTS ((size_t)1 << 26)

/* One decoding: the file's bytes, what was read of them, the image (after libpng's transformations) and
 * libpng's reason for failing. Kept outside the function that calls setjmp, so its fields are current
 * after the long jump. */
typedef struct png_job {
  const unsigned char *bytes;
  size_t size, at;
  unsigned char *pixels;
  png_bytep *rows;
  png_uint_32 w, h;
  int channels;
  char why[160];
} png_job;

static void png_fail(png_structp png, png_const_charp text) {
  png_job *j = png_get_error_ptr(png);
  snprintf(j->why, sizeof j->why, "%s", text);
  png_longjmp(png, 1);
}

static void png_quiet(png_structp png, png_const_charp text) { (void)png, (void)text; }

static void png_read_bytes(png_structp png, png_bytep out, size_t n) {
  png_job *j = png_get_io_ptr(png);
  if (n > j->size - j->at) png_error(png, "the file ends early (truncated)");
  memcpy(out, j->bytes + j->at, n);
  j->at += n;
}

/* The transformations that leave one 8-bit sample per channel with the grey (or red) level first. */
static void png_setup(png_structp png, png_infop info) {
  const int depth = png_get_bit_depth(png, info), type = png_get_color_type(png, info);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png); /* 0..2^d-1 to 0..255 */
  if (depth == 16) png_set_strip_16(png); /* the high byte */
  (void)png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

/* Decodes j's bytes into j->pixels; 0 with j->why on failure (libpng's own message). */
static int png_decode(png_job *j, png_structp png, png_infop info) {
  if (setjmp(png_jmpbuf(png))) return 0;
  png_set_read_fn(png, j, png_read_bytes);
  png_set_user_limits(png, HF_MAX_SIDE, HF_MAX_SIDE);
  png_read_info(png, info);
  png_setup(png, info);
  j->w = png_get_image_width(png, info);
  j->h = png_get_image_height(png, info);
  j->channels = png_get_channels(png, info);
  const size_t rowbytes = png_get_rowbytes(png, info);
  if ((size_t)j->w * j->h > HF_MAX_POINTS) png_error(png, "the image has too many pixels");
  if (rowbytes != (size_t)j->w * (size_t)j->channels) png_error(png, "unexpected row size after conversion");
  j->pixels = malloc(rowbytes * j->h);
  j->rows = malloc(sizeof *j->rows * j->h);
  if (!j->pixels || !j->rows) png_error(png, "out of memory");
  for (png_uint_32 r = 0; r < j->h; ++r) j->rows[r] = j->pixels + r * rowbytes;
  png_read_image(png, j->rows);
  png_read_end(png, NULL); /* the chunks after the image, to the end marker (their checksums) */
  return 1;
}

/* The grey levels of a PNG file's bytes, bottom row first, as floats. */
static grit_status read_png(const char *path, const unsigned char *bytes, size_t size, float **data, int *nrow,
                            int *ncol, char *msg) {
  if (size < 8 || png_sig_cmp(bytes, 0, 8))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': not a PNG image", path);
  png_job j;
  memset(&j, 0, sizeof j);
  j.bytes = bytes, j.size = size;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &j, png_fail, png_quiet);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "height field file '%s': out of memory", path);
  }
  const int ok = png_decode(&j, png, info);
  png_destroy_read_struct(&png, &info, NULL);
  free(j.rows);
  float *out = ok ? malloc(sizeof *out * (size_t)j.w * j.h) : NULL;
  if (out)
    for (png_uint_32 r = 0; r < j.h; ++r)
      for (png_uint_32 k = 0; k < j.w; ++k)
        out[(size_t)(j.h - 1 - r) * j.w + k] = (float)j.pixels[((size_t)r * j.w + k) * (size_t)j.channels];
  free(j.pixels);
  if (!ok) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': corrupt PNG: %s", path, j.why);
  if (!out) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "height field file '%s': out of memory", path);
  *data = out, *nrow = (int)j.h, *ncol = (int)j.w;
  return GRIT_OK;
}

/* MuJoCo's binary format (native byte order, as MuJoCo reads it). */
static grit_status read_bin(const char *path, const unsigned char *bytes, size_t size, float **data, int *nrow,
                            int *ncol, char *msg) {
  int32_t dim[2];
  if (size < sizeof dim)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': shorter than its header (8 bytes)", path);
  memcpy(dim, bytes, sizeof dim);
  if (dim[0] < 1 || dim[1] < 1 || (uint32_t)dim[0] > HF_MAX_SIDE || (uint32_t)dim[1] > HF_MAX_SIDE)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': header nrow = %d, ncol = %d out of [1, %u]",
                          path, (int)dim[0], (int)dim[1], HF_MAX_SIDE);
  const size_t n = (size_t)dim[0] * (size_t)dim[1];
  if (n > HF_MAX_POINTS || size != sizeof dim + n * sizeof(float))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                          "height field file '%s': %zu bytes, but nrow = %d, ncol = %d need 8 + 4 x %zu", path, size,
                          (int)dim[0], (int)dim[1], n);
  float *out = malloc(sizeof *out * n);
  if (!out) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "height field file '%s': out of memory", path);
  memcpy(out, bytes + sizeof dim, n * sizeof *out);
  *data = out, *nrow = (int)dim[0], *ncol = (int)dim[1];
  return GRIT_OK;
}

/* MuJoCo's normalization, in single precision as it stores the data; non-finite values are refused (in
 * MuJoCo they would spread NaN over the field). */
static grit_status normalize(const char *path, float *e, size_t n, char *msg) {
  float lo = 1e10f, hi = -1e10f;
  for (size_t i = 0; i < n; ++i) {
    if (!(e[i] - e[i] == 0.0f))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': value %zu is not finite", path, i);
    lo = e[i] < lo ? e[i] : lo;
    hi = e[i] > hi ? e[i] : hi;
  }
  if (!(hi - lo - (hi - lo) == 0.0f)) /* the range itself overflows single precision */
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "height field file '%s': the range of its values overflows", path);
  for (size_t i = 0; i < n; ++i) {
    e[i] -= lo;
    if ((double)(hi - lo) > 1e-15) e[i] /= hi - lo; /* MuJoCo compares with mjMINVAL, a double */
  }
  return GRIT_OK;
}

grit_status mjcf_hfield_parse(const char *path, const unsigned char *bytes, size_t size, int png, float **data,
                              int *nrow, int *ncol, char *msg) {
  *data = NULL;
  *nrow = *ncol = 0;
  grit_status s = png ? read_png(path, bytes, size, data, nrow, ncol, msg) : read_bin(path, bytes, size, data, nrow, ncol, msg);
  if (s == GRIT_OK) s = normalize(path, *data, (size_t)*nrow * (size_t)*ncol, msg);
  if (s != GRIT_OK) {
    free(*data);
    *data = NULL;
    *nrow = *ncol = 0;
  }
  return s;
}

grit_status mjcf_hfield_file_read(const char *path, float **data, int *nrow, int *ncol, char *msg) {
  *data = NULL;
  *nrow = *ncol = 0;
  char *bytes;
  size_t size;
  grit_status s = mjcf_read_file(path, &bytes, &size, msg);
  if (s != GRIT_OK) return s;
  const size_t len = strlen(path);
  const int png = len >= 4 && !strcasecmp(path + len - 4, ".png");
  s = mjcf_hfield_parse(path, (const unsigned char *)bytes, size, png, data, nrow, ncol, msg);
  free(bytes);
  return s;
}
