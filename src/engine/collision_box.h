/* SPDX-License-Identifier: Apache-2.0 */
/* collision_box.h — box-box's old path, kept as the switch back (internal; docs/collision.md).
 *
 * grit_narrow_box_box (collision_narrow.h) finds the normal of overlapping boxes by the separating-axis
 * test; grit_narrow_box_box_epa takes GJK/EPA's normal for every pair, as before stop 27. Both then clip
 * the same faces: test_collision_box checks they give the same candidates. */
#ifndef GRIT_COLLISION_BOX_H
#define GRIT_COLLISION_BOX_H

#include "collision_narrow.h"

/* Box against box, the normal from GJK/EPA (the old path). */
void grit_narrow_box_box_epa(const grit_placed_shape *a, const grit_placed_shape *b, double margin, collector *c);

#endif
