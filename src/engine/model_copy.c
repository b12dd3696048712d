/* SPDX-License-Identifier: Apache-2.0 */
/* model_copy.c — a model's deep copy: one allocation copied whole, its arrays laid out again on the new
 * block (grit_model_layout, model.c) and the pointers stored inside it moved. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "model_cx.h"
#include "model_internal.h"

static size_t names_size(char *const *names, int n) {
  size_t s = 0;
  for (int i = 0; i < n; ++i)
    if (names[i]) s += strlen(names[i]) + 1;
  return s;
}

/* The arena holds every array at offsets fixed by the sizes, so a copy is one memcpy, the arrays laid
 * out again on the new block, and the pointers stored inside it (names, convex vertices) moved by the
 * distance between the blocks. */
grit_status grit_model_copy(const grit_model *m, grit_model **out) {
  if (!out) return GRIT_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!m) return GRIT_ERR_INVALID_ARGUMENT;
  const size_t names_bytes = names_size(m->body_name, m->nbody) + names_size(m->jnt_name, m->njnt) +
                             names_size(m->act_name, m->nu) + names_size(m->geom_name, m->ngeom) +
                             grit_cx_names_size(m);
  grit_model sizes = *m;
  grit_carver c = {NULL, 0};
  grit_model_layout(&sizes, &c, names_bytes);
  grit_model *r = calloc(1, sizeof *r);
  void *arena = calloc(1, c.used + 64);
  if (!r || !arena) {
    free(r);
    free(arena);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  memcpy(arena, m->arena, c.used);
  *r = *m;
  r->arena = arena;
  c.base = arena;
  c.used = 0;
  grit_model_layout(r, &c, names_bytes);
  const char *old = m->arena;
  char *base = arena;
  char **lists[4] = {r->body_name, r->jnt_name, r->act_name, r->geom_name};
  const int counts[4] = {r->nbody, r->njnt, r->nu, r->ngeom};
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < counts[k]; ++i)
      if (lists[k][i]) lists[k][i] = base + (lists[k][i] - old);
  for (int g = 0; g < r->ngeom; ++g)
    if (r->geom_shape[g].vertices)
      r->geom_shape[g].vertices = (const double *)(base + ((const char *)r->geom_shape[g].vertices - old));
  for (int g = 0; g < r->ngeom; ++g)
    if (r->geom_shape[g].graph) r->geom_shape[g].graph = (const int *)(base + ((const char *)r->geom_shape[g].graph - old));
  grit_cx_relocate(r, old, base);
  *out = r;
  return GRIT_OK;
}
