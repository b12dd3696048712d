/* SPDX-License-Identifier: Apache-2.0 */
/* model_cx.h — the builder's sites, equality constraints and tendons, and their compilation into the
 * model (model_cx.c); hooks called by model.c. */
#ifndef GRIT_MODEL_CX_H
#define GRIT_MODEL_CX_H

#include <stddef.h>

#include "arena.h"
#include "grit/constraints.h"
#include "model_internal.h"

typedef struct grit_builder_cx {
  grit_site_def *sites;     /* names owned */
  grit_equality_def *eqs;   /* names owned */
  grit_tendon_def *tens;    /* names, obj and coef owned */
  int nsite, neq, nten, cap_site, cap_eq, cap_ten;
} grit_builder_cx;

/* What model_cx.c needs of the builder (model.c). */
grit_builder_cx *grit_builder_cx_of(grit_builder *b);
char *grit_builder_message(grit_builder *b);
int grit_builder_nbody(const grit_builder *b);
int grit_builder_njoint(const grit_builder *b);
int grit_builder_joint_type(const grit_builder *b, int joint);
/* The builder's copies of names and growth of its arrays (model.c): a copy of s (NULL for NULL or out of
 * memory); 1 when *array holds need elements of elem bytes (doubled capacity), 0 out of memory. */
char *grit_builder_strdup(const char *s);
int grit_builder_grow(void **array, int *cap, int need, size_t elem);
/* Stores *def (size bytes; its `const char *` name at name_offset, copied) as element id of the growable
 * array *array; GRIT_OK, or GRIT_ERR_OUT_OF_MEMORY with "out of memory adding <what> <id>" (the element's
 * name then NULL). */
grit_status grit_builder_store(char *msg, const char *what, int id, void **array, int *cap, const void *def, size_t size,
                               size_t name_offset);

void grit_builder_cx_free(grit_builder_cx *cx);

/* Sets m's nsite, neq, ntendon, nwrap and returns the bytes their names need. */
size_t grit_cx_sizes(const grit_builder_cx *cx, grit_model *m);
/* Carves their arrays (inside layout_model). */
void grit_cx_layout(grit_model *m, grit_carver *c);
/* Fills them once the rest of m is compiled (names copied at *names); checks what needs the trees. */
grit_status grit_cx_compile(const grit_builder_cx *cx, grit_model *m, char **names, char *message);
/* For grit_model_copy: the names' bytes, and their pointers moved from the block `old` to `base`. */
size_t grit_cx_names_size(const grit_model *m);
void grit_cx_relocate(grit_model *r, const char *old, char *base);

#endif
