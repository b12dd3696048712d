/* SPDX-License-Identifier: Apache-2.0 */
/* contact_candidate.h — a contact candidate of the step's collision query (internal): the pair, its point
 * and, for a hydroelastic patch, its stiffness. Its own header so that the producers of candidates
 * (collision.h, hydro.h) need not include each other. */
#ifndef GRIT_CONTACT_CANDIDATE_H
#define GRIT_CONTACT_CANDIDATE_H

#include "contact_point.h"

typedef struct grit_contact_candidate {
  int geom[2];
  int body[2];
  grit_contact_point pt;
  double k_patch; /* > 0: a hydroelastic patch (hydro.h) with this stiffness k = g A, N/m, in place of
                     the pair's; 0: a point contact */
} grit_contact_candidate;

#endif
