/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_hfield.c — libFuzzer target of the height-field file reader (src/io/mjcf_hfield_file.c: PNG through
 * libpng, MuJoCo's binary format; built with -DGRIT_FUZZ=ON and clang). The first byte chooses the format
 * ('b': binary, else PNG), the rest is the file's content. Any input must give a grid of normalized
 * elevations or an error with a message, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mjcf_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  float *e = NULL;
  int nrow, ncol;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_status s = mjcf_hfield_parse("fuzz", data + 1, size - 1, data[0] != 'b', &e, &nrow, &ncol, msg);
  if (s != GRIT_OK) {
    if (msg[0] == '\0' || e) __builtin_trap(); /* a failure has a message and no output */
  } else {
    if (nrow < 1 || ncol < 1 || !e) __builtin_trap();
    for (long i = 0; i < (long)nrow * ncol; ++i)
      if (!(e[i] >= 0.0f && e[i] <= 1.0f)) __builtin_trap();
  }
  free(e);
  return 0;
}
