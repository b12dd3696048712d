/* SPDX-License-Identifier: Apache-2.0 */
/* arena.h — carving many arrays out of one allocation.
 *
 * Layout code runs twice: once with base == NULL to measure (every carve returns NULL and only
 * advances `used`), then with the real block. One allocation per object keeps creation simple and
 * freeing trivial, and nothing is allocated afterwards. */
#ifndef GRIT_ARENA_H
#define GRIT_ARENA_H

#include <stddef.h>

typedef struct grit_carver {
  char *base;  /* NULL while measuring */
  size_t used; /* bytes used so far */
} grit_carver;

/* Reserves `count` elements of `size` bytes, aligned to 64 bytes (a cache line), zero-initialized by
 * the caller's calloc. Returns NULL while measuring. An empty array (count == 0) still gets a valid,
 * non-NULL pointer into the block (nothing may be read through it): memcpy(dst, src, 0) with a NULL
 * argument is undefined behaviour, and models without degrees of freedom copy empty state vectors. */
static inline void *grit_carve(grit_carver *c, size_t count, size_t size) {
  size_t off = (c->used + 63) & ~(size_t)63;
  c->used = off + count * size;
  return c->base ? c->base + off : NULL;
}

#define GRIT_CARVE(c, ptr, count) ((ptr) = grit_carve((c), (size_t)(count), sizeof *(ptr)))

/* Carves the arrays of a kinematics struct (grit_kin or grit_kin_dual: the element sizes follow the
 * pointers' types) for model m. */
#define GRIT_CARVE_KIN(c, kin, m)                  \
  do {                                             \
    GRIT_CARVE(c, (kin).xpos, 3 * (m)->nbody);     \
    GRIT_CARVE(c, (kin).xquat, 4 * (m)->nbody);    \
    GRIT_CARVE(c, (kin).xmat, 9 * (m)->nbody);     \
    GRIT_CARVE(c, (kin).xipos, 3 * (m)->nbody);    \
    GRIT_CARVE(c, (kin).xanchor, 3 * (m)->njnt);   \
    GRIT_CARVE(c, (kin).xaxis, 3 * (m)->njnt);     \
    GRIT_CARVE(c, (kin).cdof, 6 * (m)->nv);        \
    GRIT_CARVE(c, (kin).cinert, (m)->nbody);       \
    GRIT_CARVE(c, (kin).cvel, 6 * (m)->nbody);     \
    GRIT_CARVE(c, (kin).cdof_dot, 6 * (m)->nv);    \
  } while (0)

#endif
