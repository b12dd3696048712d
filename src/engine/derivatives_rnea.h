/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_rnea.h — analytic partials of the smooth dynamics for grit_step_derivatives (internal).
 *
 * The smooth part of the step's residual is M(q0) (v - v0) + h c(q0, v0) = h ID(q0, v0, a), a = (v - v0) / h,
 * ID the inverse dynamics (recursive Newton-Euler with gravity and gravity compensation). This module
 * gives, in doubles and for every column of a tree at once, h dID/dq0 in grit's tangent coordinates and
 * h dc/dv0, by recursions over the tree in the spirit of Carpentier and Mansard (RSS 2018), written for
 * grit's spatial vectors at the world origin (docs/theory.md, "Analytic partials of the smooth
 * dynamics"). The position and velocity passes add their seeded columns to r's lanes in place of the
 * dual mass matrix, A (v - v0) and the dual Newton-Euler pass (derivatives_residual.c). */
#ifndef GRIT_DERIVATIVES_RNEA_H
#define GRIT_DERIVATIVES_RNEA_H

#include "arena.h"
#include "derivatives_momentum.h"
#include "dynamics.h"
#include "kinematics.h"
#include "model_internal.h"

enum { RATE_N = 18 }; /* the numbers of an inertia's rate (grit_rnea_inertia_rate) */
enum { PK_N = 60 };   /* a dof's vectors packed for the SIMD pairs (derivatives_rnea.c) */

typedef struct grit_rnea {
  char *on;               /* (ntree) the tree's dynamics are covered by the analytic partials */
  char *spin;             /* (ntree) the tree has a ball or free joint (the momentum correction's bodies) */
  int *grp;               /* (nv) first dof of the dof's group (a ball's or a free joint's rotation: 3) */
  grit_sinertia *Ic, *Gc; /* (nbody) composite inertias, and of gravcomp * inertia */
  double *Bc;             /* (RATE_N nbody) composite d/dt of the inertias along the motion (grit_rnea_inertia_rate) */
  double *Hc, *Fc, *acc;  /* (6 nbody) composite momenta, composite forces, body accelerations */
  double *P, *Q, *R;      /* (6 nv) twist and acceleration before the dof's group, twist after it */
  double *g1, *g2, *g6;   /* (6 nv) Gc S, Ic S, Bc S - S x* Hc at the dof's body */
  double *cu, *cz, *cy;   /* (6 nv) a column's vectors: S x a0, -S x Q + Y x P, Y = S x P */
  double *wq, *wv;        /* (6 nv) a column's wrench felt by the dofs above it (positions, velocities) */
  double *DQ, *DV;        /* (nM) per tree, row-major: h dID/dq0 and h dc/dv0 */
  double *zt, *zh, *zp;   /* (6 nbody, 6 nbody, 6 nv) scratch of grit_rnea_quadratic_gradient */
  double *pk;             /* (PK_N nv) the dofs' vectors in pairs of lanes, for the SIMD pairs */
  int no_simd;            /* the baseline build, scalar pairs, columns one by one (the tests: the same bits) */
  int no_lanes;           /* the dofs' vectors one dof at a time, not four per AVX2 register (tests) */
  int no_twist_skip;      /* a contact body's twist in position passes over every dof's partials (grit_deriv_body_twist
                             off: derivatives_residual.c's body_twist; tests, the same bits) */
  int no_twist_regs;      /* grit_deriv_body_twist's sums through S at every dof, not in locals (tests, the same bits) */
  int no_fluid_merge;     /* the fluid's partials in pairs of their own (fluid_partials.c), not joined to the dofs'
                             vectors before the pairs (tests: round-off apart) */
  int pairs_due;          /* grit_rnea_partials left the pairs to grit_rnea_pairs (the fluid's vectors to join) */
  long nmerged;           /* grit_rnea_pairs' calls that formed the pairs (tests: the joined path ran) */
  int any_gravcomp;
  int any_on;             /* some tree has on[t] (set by the derivatives' workspace) */
  grit_momentum mom;      /* mom.on: DQ, DV include the momentum correction's partials (derivatives_momentum.c) */
} grit_rnea;

/* Whether body b turns about a ball or free joint (the momentum correction's bodies). */
static inline int grit_rnea_body_spins(const grit_model *m, int b) {
  for (int n = 0; n < m->body_jntnum[b]; ++n) {
    const int type = m->jnt_type[m->body_jnt[m->body_jntadr[b] + n]];
    if (type == GRIT_JOINT_BALL || type == GRIT_JOINT_FREE) return 1;
  }
  return 0;
}

/* B += V x* I - I (V x), the rate of the spatial inertia s moving with the twist V, in RATE_N numbers: the
 * nonzero entries of the 6 x 6 matrix, upper-left 3 x 3 row-major, then (0,4) (0,5) (1,3) (1,5) (2,3) (2,4)
 * (3,2) (4,0) (5,1); (5,0) = (0,5), (3,1) = (1,3), (4,2) = (2,4); the lower-right 3 x 3 is zero. The
 * same bits as the 6 x 6 product column by column, B e_c = V x* (s e_c) - s (V x e_c). */
void grit_rnea_inertia_rate(double B[RATE_N], const grit_sinertia *s, const double V[6]);

/* y = B x for B in grit_rnea_inertia_rate's layout, the bits of the 6 x 6 product's row sums. */
void grit_rnea_rate_mulv(double y[6], const double B[RATE_N], const double x[6]);

/* Carves the arrays (arena.h: twice, measuring then carving). */
void grit_rnea_layout(const grit_model *m, grit_rnea *r, grit_carver *c);

/* The trees the analytic partials cover: a free joint only on a child of the world; fluid forces are
 * covered (fluid_partials.c adds their partials), and so are the implicit slopes in A of actuators on a
 * spatial tendon, a site or a slider-crank, which move with q (the position passes add their partials
 * from the transmissions' dual moments: grit_deriv_tendon_operator_rows). */
void grit_rnea_trees(const grit_model *m, grit_rnea *r);

/* DQ = h dID/dq0 and DV = h dc/dv0 of the trees of `mask` (NULL: the trees with r->on), at the
 * kinematics k (positions at q0; its velocities are set here to v0), a = (v - v0) / h. With fluid forces
 * and no wind (mask NULL) the entries wait for grit_fluid_partials_add (r->pairs_due). */
void grit_rnea_partials(const grit_model *m, grit_kin *k, const double *v0, const double *v, double h,
                        const char *mask, grit_rnea *r);

/* The entries of DQ, DV from the dofs' vectors, if grit_rnea_partials left them (r->pairs_due: a model with
 * fluid forces and no wind, whose partials grit_fluid_partials_add joins to the dofs' vectors first). */
void grit_rnea_pairs(const grit_model *m, const grit_kin *k, double h, grit_rnea *r);

/* The seeded columns of a tree's n x n row-major D (A non-NULL: of D - A) into its rows:
 * res[i].d[l] += seed[c].d[l] (D_ic - A_ic) for every seed seed[c].d[l] != 0, each entry the same
 * operations as column by column (derivatives_rnea_lanes.c; r->no_simd: column by column). */
void grit_rnea_add_columns(const grit_rnea *r, int n, const grit_dual *seed, const double *D, const double *A,
                           grit_dual *res);

/* g[j] += d(z^T M(q0) z)/dq0_j for z fixed, over tree t's dofs (z and g tree-local, n entries): the
 * partials of a Delassus estimate's z^T A z without the dual mass matrix (derivatives_delassus.c). With
 * V_b(z) the bodies' twists, P_j(z) the twist before dof j's group and Hc_b(z) the composite momenta,
 * d(z^T M z)/dq_j = -2 (S_j x P_j) . Hc_{body(j)}: the rigid part of the motion leaves the kinetic
 * energy unchanged. k: positions at q0. */
void grit_rnea_quadratic_gradient(const grit_model *m, const grit_kin *k, grit_rnea *r, int t, const double *z,
                                  double *g);

/* derivatives_rnea*.c's build: an AVX2 build of the recursions chosen at run time where the compiler
 * allows it (GRIT_NO_AVX2: the baseline only), and forced inlining. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define RN_AVX2 1
#else
#define RN_AVX2 0
#endif
#if defined(__GNUC__)
#define RN_INLINE inline __attribute__((always_inline))
#define RN_NOINLINE __attribute__((noinline))
#else
#define RN_INLINE inline
#define RN_NOINLINE
#endif

#endif
