/* SPDX-License-Identifier: Apache-2.0 */
/* broadphase.c — sort-and-sweep over axis-aligned boxes. See broadphase.h. */
#include "broadphase.h"

#include <stdlib.h>

struct grit_broadphase {
  int n;
  int *order; /* box indices sorted by their lower bound on the sweep axis (kept between calls) */
};

grit_status grit_broadphase_create(int n, grit_broadphase **out) {
  *out = NULL;
  if (n < 0) return GRIT_ERR_INVALID_ARGUMENT;
  grit_broadphase *bp = calloc(1, sizeof *bp);
  if (!bp) return GRIT_ERR_OUT_OF_MEMORY;
  bp->n = n;
  bp->order = calloc((size_t)n + 1, sizeof(int));
  if (!bp->order) {
    free(bp);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < n; ++i) bp->order[i] = i;
  *out = bp;
  return GRIT_OK;
}

void grit_broadphase_free(grit_broadphase *bp) {
  if (!bp) return;
  free(bp->order);
  free(bp);
}

/* The axis along which the box centres have the largest variance. */
static int sweep_axis(const double *aabb, int n) {
  double s[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double c = 0.5 * (aabb[6 * i + k] + aabb[6 * i + 3 + k]);
      s[k] += c;
      s2[k] += c * c;
    }
  int best = 0;
  double bv = -1.0;
  for (int k = 0; k < 3; ++k) {
    double var = s2[k] - s[k] * s[k] / (n > 0 ? n : 1);
    if (var > bv) {
      bv = var;
      best = k;
    }
  }
  return best;
}

grit_status grit_broadphase_pairs(grit_broadphase *bp, const double *aabb, grit_pair_filter filter,
                                  const void *ctx, int *pairs, int max_pairs, int *npairs, long *tests) {
  const int n = bp->n, ax = sweep_axis(aabb, n);
  int *o = bp->order;
  /* insertion sort by lower bound: near O(n) for coherent motion */
  for (int i = 1; i < n; ++i) {
    int key = o[i], j = i - 1;
    const double lo = aabb[6 * key + ax];
    while (j >= 0 && aabb[6 * o[j] + ax] > lo) {
      o[j + 1] = o[j];
      j--;
    }
    o[j + 1] = key;
  }
  int np = 0;
  long nt = 0;
  grit_status status = GRIT_OK;
  const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
  for (int p = 0; p < n; ++p) {
    const int i = o[p];
    const double *bi = aabb + 6 * i;
    for (int q = p + 1; q < n; ++q) {
      const int j = o[q];
      const double *bj = aabb + 6 * j;
      if (bj[ax] > bi[3 + ax]) break; /* sorted: no later box overlaps on the sweep axis */
      nt++;
      if (bj[a1] > bi[3 + a1] || bi[a1] > bj[3 + a1] || bj[a2] > bi[3 + a2] || bi[a2] > bj[3 + a2]) continue;
      int lo = i < j ? i : j, hi = i < j ? j : i;
      if (filter && !filter(ctx, lo, hi)) continue;
      if (np >= max_pairs) {
        status = GRIT_ERR_CAPACITY;
        continue;
      }
      pairs[2 * np] = lo;
      pairs[2 * np + 1] = hi;
      np++;
    }
  }
  *npairs = np;
  if (tests) *tests = nt;
  return status;
}
