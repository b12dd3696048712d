/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_mesh.c — libFuzzer target of the mesh file parser (STL, binary and ASCII, OBJ, MuJoCo's MSH) and of the
 * mass properties of the triangles it returns (src/io/mjcf_mesh.c; built with -DGRIT_FUZZ=ON and clang).
 * The first byte chooses the format ('s': STL, 'm': MSH, else OBJ), the rest is the file's content. Any input
 * must give vertices or an error with a message, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *text = malloc(size); /* the content and its terminating zero, as mjcf_read_file gives them */
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  mjcf_pool pool;
  memset(&pool, 0, sizeof pool);
  double *v;
  int nv, *tri, ntri;
  char msg[GRIT_MESSAGE_SIZE] = "";
  grit_status s = mjcf_mesh_parse(text, size - 1, data[0] == 's' ? 1 : data[0] == 'm' ? MJCF_MESH_MSH : 0, "fuzz",
                                  &pool, &v, &nv, &tri, &ntri, msg);
  if (s != GRIT_OK) {
    if (msg[0] == '\0' || v || tri) __builtin_trap(); /* a failure has a message and no output */
  } else {
    if (nv < 4 || nv > 4096) __builtin_trap();
    for (int i = 0; i < 3 * ntri; ++i)
      if (tri[i] < 0 || tri[i] >= nv) __builtin_trap();
    double V, c[3], I[9];
    if (ntri > 0) (void)mjcf_mesh_mass_properties(v, tri, ntri, &V, c, I);
  }
  mjcf_pool_free(&pool);
  free(text);
  return 0;
}
