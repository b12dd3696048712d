/* SPDX-License-Identifier: Apache-2.0 */
/* contact_margin.h — MuJoCo's geometry margin and gap in grit's compliant contact (internal;
 * docs/collision.md, Margin and gap). A pair's margin and gap are the larger of its two geometries'.
 * A pair closer than its margin is always a contact candidate (besides the speculative margins); its
 * force acts on phi - (margin - gap), so that margin - gap inflates the surfaces and a margin equal to
 * the gap leaves a layer 0 <= phi < margin of force-free candidates, which adhesion counts. */
#ifndef GRIT_CONTACT_MARGIN_H
#define GRIT_CONTACT_MARGIN_H

#include "model_internal.h"

static inline double grit_pair_margin(const grit_model *m, int ga, int gb) {
  return m->geom_margin[ga] > m->geom_margin[gb] ? m->geom_margin[ga] : m->geom_margin[gb];
}

/* margin - gap of the pair: subtracted from the gap phi in the contact's force law. */
static inline double grit_pair_inflation(const grit_model *m, int ga, int gb) {
  const double gap = m->geom_gap[ga] > m->geom_gap[gb] ? m->geom_gap[ga] : m->geom_gap[gb];
  return grit_pair_margin(m, ga, gb) - gap;
}

#endif
