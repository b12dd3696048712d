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
