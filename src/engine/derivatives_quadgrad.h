/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_quadgrad.h — the gradient over q0 of sum_r z_r^T M(q0) z_r for a constraint's rows in one
 * sweep over the tree (internal; derivatives_delassus.c).
 *
 * grit_rnea_quadratic_gradient (derivatives_rnea.h) sweeps the tree once per row z_r: a contact's three
 * rows cost three sweeps, each walking the tree's bodies and dofs, their parents and groups. Here the
 * rows share one walk: per body, the rows' twists, momenta and per-dof twists side by side. Each row's
 * arithmetic is the same as grit_rnea_quadratic_gradient's, in the same order, and g[j] takes the rows'
 * terms in row order, so g is bitwise the row-by-row result. */
#ifndef GRIT_DERIVATIVES_QUADGRAD_H
#define GRIT_DERIVATIVES_QUADGRAD_H

#include "derivatives_rnea.h"

enum { GRIT_QUADGRAD_ROWS = 3 }; /* rows per sweep */

/* Scratch doubles for grit_rnea_quadratic_gradient_rows: 18 per body (twists), 18 per body (momenta),
 * 18 per dof (twists before the dofs' groups). */
static inline size_t grit_quadgrad_scratch(const grit_model *m) {
  return (size_t)GRIT_QUADGRAD_ROWS * 6 * (2 * (size_t)m->nbody + (size_t)m->nv);
}

/* g[j] += d/dq0_j sum_r z_r^T M(q0) z_r over tree t's dofs for rows z_r = z + r ldz, r < nr (1..3; z and
 * g tree-local, n entries), k: positions at q0, r: the model's groups (grp), s: grit_quadgrad_scratch
 * doubles. */
void grit_rnea_quadratic_gradient_rows(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                       const double *z, int ldz, int nr, double *g, double *s);

#endif
