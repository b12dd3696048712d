/* SPDX-License-Identifier: Apache-2.0 */
/* model_filter.h — the contact filters of a compiled model beyond the bit masks, as MuJoCo defines them:
 * welded bodies, parent and child, excluded body pairs, explicit geometry pairs (internal). */
#ifndef GRIT_MODEL_FILTER_H
#define GRIT_MODEL_FILTER_H

#include "model_internal.h"

/* Fills m->body_weld from the joints, and m->exclude / m->pair (sized m->nexclude, m->npair) from the
 * builder's (lo, hi) lists, sorted for binary search; sets m->filter_parent. */
void grit_model_filters(grit_model *m, const int *exclude, const int *pair, int filter_parent);

/* Whether bodies b1, b2 were excluded / geometries g1, g2 form an explicit pair (any order). */
int grit_model_bodies_excluded(const grit_model *m, int b1, int b2);
int grit_model_geoms_paired(const grit_model *m, int g1, int g2);

/* Whether the broad phase may pair geometries g1 and g2 (welds, parent-child, bit masks, excluded body
 * pairs; explicit pairs are added separately). */
int grit_geom_pair_allowed(const grit_model *m, int g1, int g2);

/* Tables grit_geom_pair_allowed for every pair in m->geom_allowed (when the model has that table: at most
 * GRIT_ALLOWED_TABLE_MAX geometries), once the filters and geometries are compiled. */
void grit_model_allowed_table(grit_model *m);

#endif
