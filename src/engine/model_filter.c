/* SPDX-License-Identifier: Apache-2.0 */
/* model_filter.c — see model_filter.h. */
#include "model_filter.h"

#include <stdlib.h>
#include <string.h>

static int cmp_pair(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

void grit_model_filters(grit_model *m, const int *exclude, const int *pair, int filter_parent) {
  for (int b = 0; b < m->nbody; ++b) /* parents precede children */
    m->body_weld[b] = b == 0 ? 0 : m->body_jntnum[b] > 0 ? b : m->body_weld[m->body_parent[b]];
  m->filter_parent = filter_parent;
  if (m->nexclude) {
    memcpy(m->exclude, exclude, sizeof(int) * 2 * (size_t)m->nexclude);
    qsort(m->exclude, (size_t)m->nexclude, 2 * sizeof(int), cmp_pair);
  }
  if (m->npair) {
    memcpy(m->pair, pair, sizeof(int) * 2 * (size_t)m->npair);
    qsort(m->pair, (size_t)m->npair, 2 * sizeof(int), cmp_pair);
  }
}

static int find(const int *list, int n, int a, int b) {
  if (n == 0) return 0;
  const int key[2] = {a < b ? a : b, a < b ? b : a};
  return bsearch(key, list, (size_t)n, 2 * sizeof(int), cmp_pair) != NULL;
}

int grit_model_bodies_excluded(const grit_model *m, int b1, int b2) { return find(m->exclude, m->nexclude, b1, b2); }

int grit_model_geoms_paired(const grit_model *m, int g1, int g2) { return find(m->pair, m->npair, g1, g2); }

/* A height field never collides with a plane or another height field (MuJoCo has no such pair). */
static int hfield_pair_unsupported(const grit_shape *a, const grit_shape *b) {
  const int ha = a->type == GRIT_GEOM_HFIELD, hb = b->type == GRIT_GEOM_HFIELD;
  return (ha || hb) && (ha + hb == 2 || a->type == GRIT_GEOM_PLANE || b->type == GRIT_GEOM_PLANE);
}

/* MuJoCo's filter (mj_collideGeoms, mj_contactFilter, mj_collision): bodies welded together never
 * collide (the same body, both static); nor a body and its parent, both taken by weld, unless one is
 * welded to the world; nor two planes; nor excluded body pairs; then the bit masks decide. An explicit
 * pair skips all of this: it is added by grit_collision_detect itself, so it is refused here. */
int grit_geom_pair_allowed(const grit_model *m, int g1, int g2) {
  const int b1 = m->geom_body[g1], b2 = m->geom_body[g2];
  const int w1 = m->body_weld[b1], w2 = m->body_weld[b2];
  if (w1 == w2) return 0;
  if (m->filter_parent && w1 && w2 && (m->body_weld[m->body_parent[w1]] == w2 || m->body_weld[m->body_parent[w2]] == w1))
    return 0;
  if (m->geom_shape[g1].type == GRIT_GEOM_PLANE && m->geom_shape[g2].type == GRIT_GEOM_PLANE) return 0;
  if (hfield_pair_unsupported(&m->geom_shape[g1], &m->geom_shape[g2])) return 0;
  if (!(m->geom_contype[g1] & m->geom_conaffinity[g2]) && !(m->geom_contype[g2] & m->geom_conaffinity[g1])) return 0;
  if (m->nexclude && grit_model_bodies_excluded(m, b1, b2)) return 0;
  return !(m->npair && grit_model_geoms_paired(m, g1, g2));
}

void grit_model_allowed_table(grit_model *m) {
  const int ng = m->ngeom;
  if (!m->geom_allowed) return;
  memset(m->geom_allowed, 0, (size_t)ng * (size_t)ng / 8 + 1);
  for (int i = 0; i < ng; ++i)
    for (int j = i + 1; j < ng; ++j)
      if (grit_geom_pair_allowed(m, i, j)) {
        const size_t a = (size_t)i * (size_t)ng + (size_t)j, b = (size_t)j * (size_t)ng + (size_t)i;
        m->geom_allowed[a >> 3] |= (unsigned char)(1u << (a & 7));
        m->geom_allowed[b >> 3] |= (unsigned char)(1u << (b & 7));
      }
}
