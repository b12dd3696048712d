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
  int patch_tet;  /* a patch's tetrahedron of the compliant geometry's mesh, and the rigid face it cuts */
  int patch_face; /* (0 for a plane), for the derivatives' re-evaluation (hydro.h) */
  double patch_area; /* the patch polygon's area, m^2 (grit_data_contact_patch) */
} grit_contact_candidate;

#endif
