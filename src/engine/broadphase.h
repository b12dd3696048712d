/* SPDX-License-Identifier: Apache-2.0 */
/* broadphase.h — candidate pairs of overlapping axis-aligned boxes by sort-and-sweep (internal).
 *
 * Boxes (already inflated by the contact margin) are sorted by their lower bound along the axis on
 * which their centres spread most; a sweep then tests each box only against the boxes whose interval
 * on that axis overlaps its own. The order of the previous call is kept and re-sorted by insertion,
 * which costs O(n) when the scene moves little between steps. No allocation after creation. */
#ifndef GRIT_BROADPHASE_H
#define GRIT_BROADPHASE_H

#include "grit/status.h"

typedef struct grit_broadphase grit_broadphase;

/* Optional pair filter: nonzero if boxes i and j may collide. */
typedef int (*grit_pair_filter)(const void *ctx, int i, int j);

grit_status grit_broadphase_create(int n, grit_broadphase **bp);
void grit_broadphase_free(grit_broadphase *bp);

/* Finds the pairs (i < j) of the n boxes (aabb: 6 per box, min xyz then max xyz) that overlap on all
 * three axes and pass the filter; writes them to pairs (2 ints each, at most max_pairs pairs) and
 * their number to *npairs. *tests (may be NULL) gets the number of box-box overlap tests made.
 * GRIT_ERR_CAPACITY if there are more than max_pairs pairs (the first max_pairs are written). */
grit_status grit_broadphase_pairs(grit_broadphase *bp, const double *aabb, grit_pair_filter filter,
                                  const void *ctx, int *pairs, int max_pairs, int *npairs, long *tests);

/* 1: the sweep reads the boxes through the sort order as before (the old path); 0 (default): in a copy
 * packed in that order (the same pairs, in the same order). */
void grit_broadphase_set_unpacked(grit_broadphase *bp, int unpacked);

/* 1: the packed plain sweep tests one box pair at a time (the old path); 0 (default, with AVX2): four
 * later boxes a vector (the same pairs in the same order, the same tests). */
void grit_broadphase_set_scalar(grit_broadphase *bp, int scalar);

/* Optional classes of the boxes (arrays of n, kept by the caller and read at each call; NULL: none):
 * boxes i and j of the same group, or whose bit masks match neither way (!(type[i] & affinity[j]) &&
 * !(type[j] & affinity[i])), are never a pair. The test runs in the sweep, after the overlap test and
 * before the filter, so the filter (which must drop those pairs too) is not called for them: the same
 * pairs in the same order. Both sweeps honour it. With at most 8 kinds of (type, affinity), some two of
 * which never match, the packed sweep walks only the boxes of the kinds each box matches (fewer tests
 * counted: a soft body's particles that only touch the ground). */
void grit_broadphase_set_classes(grit_broadphase *bp, const unsigned *type, const unsigned *affinity, const int *group);

#endif
