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

enum { GRIT_QUADGRAD_ROWS = 3 };  /* rows per sweep */
enum { GRIT_QUADGRAD_LANES = 4 }; /* rows of as many constraints per sweep (..._lanes) */

/* The lanes as one vector (GNU C's vector extension: element-wise IEEE operations, a scalar operand
 * broadcast; no contraction under -ffp-contract=off), so that each operation of the one-row arithmetic
 * is one operation across the lanes. Without it, the lanes' paths are left out (the one-row ones run). */
#if defined(__GNUC__)
#define GRIT_QUADGRAD_HAVE_LANES 1
typedef double grit_lanes __attribute__((vector_size(GRIT_QUADGRAD_LANES * sizeof(double))));
#else
#define GRIT_QUADGRAD_HAVE_LANES 0
#endif

/* Scratch doubles for grit_rnea_quadratic_gradient_rows and _lanes: 6 per row (or lane) and body
 * (twists), the same (momenta), 6 per row and dof (twists before the dofs' groups); then the lanes' sweep's
 * walk of the last tree it swept (derivatives_quadgrad.c, sweep_lists: read only there; a fresh scratch
 * must be zeros). */
static inline size_t grit_quadgrad_scratch(const grit_model *m) {
  const size_t w = (int)GRIT_QUADGRAD_LANES > (int)GRIT_QUADGRAD_ROWS ? GRIT_QUADGRAD_LANES : GRIT_QUADGRAD_ROWS;
  const size_t tail = sizeof(int) * (4 + 2 * (size_t)m->nbody + (size_t)m->nv) + (size_t)m->nbody;
  return w * 6 * (2 * (size_t)m->nbody + (size_t)m->nv) + tail / sizeof(double) + 1;
}

/* g[j] += d/dq0_j sum_r z_r^T M(q0) z_r over tree t's dofs for rows z_r = z + r ldz, r < nr (1..3; z and
 * g tree-local, n entries), k: positions at q0, r: the model's groups (grp), s: grit_quadgrad_scratch
 * doubles. */
void grit_rnea_quadratic_gradient_rows(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                       const double *z, int ldz, int nr, double *g, double *s);

/* The same for GRIT_QUADGRAD_LANES single rows z[j][l] (rows of as many constraints; tree-local j), each
 * its own gradient: g[j][l] = d/dq0_j z_l^T M(q0) z_l, as the one-row sweep forms it from g = 0. The rows
 * are the lanes of one sweep; each lane's arithmetic is grit_rnea_quadratic_gradient_rows' for nr = 1, in
 * the same order, so each lane of g is bitwise that sweep's. plain 0: a slide's dof (S's angular part exact
 * zeros) leaves out the terms of those zeros, which change no nonzero number (only the sign of an exact zero
 * on the way, and g = 0 - 2 dl is +0 for either): the same g for finite values; plain 1: every term. A leaf
 * body of one dof is formed in registers by the backward pass (the same bits); plain | 2: through the
 * scratch, as before. */
#if GRIT_QUADGRAD_HAVE_LANES
void grit_rnea_quadratic_gradient_lanes(const grit_model *m, const grit_kin *k, const grit_rnea *r, int t,
                                        const grit_lanes *z, grit_lanes *g, double *s, int plain);
#endif

#endif
