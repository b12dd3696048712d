/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_partials.h — the fluid forces' partials in q0 and v0 for grit_step_derivatives, in doubles and
 * for every column of a tree at once (fluid_partials.c), added to the smooth dynamics' analytic partials
 * of derivatives_rnea.c, so that a model with fluid forces takes that path too. Internal. */
#ifndef GRIT_FLUID_PARTIALS_H
#define GRIT_FLUID_PARTIALS_H

#include "arena.h"
#include "derivatives_rnea.h"

typedef struct grit_fluid_partials {
  double *g, *K;     /* (6 nbody), (36 nbody) a body's fluid wrench as bias holds it (negated, at the world
                        origin) and its partials in the body's twist, row-major; then summed over subtrees */
  double *y;         /* (6 nv) S x (P - W): what the twist of the bodies after a dof gains besides the rigid
                        motion S x (.) (P the twist before the dof's group, W the wind as a twist) */
  double *kr, *wq, *wv; /* (6 nv) K^T S (a row's), S x* g - K y and K S (a column's), K and g of the dof's body */
  double *bc;        /* (FLUID_NBC nbody) each box body's constants: its axes P (9), the viscous and the
                        quadratic drag's coefficients (8), and the inputs they came from (16) */
  double *sy, *sk, *wy, *kk; /* (12 nv) the faster path's (S, y), (S, kr), (wq, y), (kr, kr), their lanes
                                interleaved */
  int avx2;          /* the processor has AVX2: the pairs' products four lanes at a time (the same bits) */
  char *sym;         /* (nbody) the subtree's K is symmetric: no geometry of it in the ellipsoid model */
  int old;           /* nonzero: the previous path (K summed as 3 x 36 rank-one terms, three 6 x 6 products
                        per dof, the box recomputed per call); tests compare both */
  int no_nsym_lanes; /* nonzero: a dof's vectors under a K that is not symmetric by dof_vectors' scalar sums, not
                        two lanes at a time (nsym_vectors: the same bits; tests compare both) */
  int no_nsym_avx2;  /* nonzero: those vectors two lanes at a time, not by AVX2's four and two lanes (nsym_vectors_avx2:
                        the same bits; tests compare both) */
  int no_joined_avx2; /* nonzero: the joined path's vectors under a symmetric K by joined_dof's two-lane sums,
                        not AVX2's four and two lanes (the same bits; tests compare both) */
  int dual_frame;    /* nonzero: the ellipsoid model's frame on dual numbers too (grit_fluid_geom_wrench_dual),
                        not in doubles (grit_fluid_ellipsoid_partials); the same bits, tests compare both */
} grit_fluid_partials;

/* Carves the arrays (none without fluid forces). */
void grit_fluid_partials_layout(const grit_model *m, grit_fluid_partials *f, grit_carver *c);

/* Adds h dc_f/dq0 and h dc_f/dv0, c_f the fluid forces' generalized force in the bias, to r->DQ and r->DV
 * for the trees of r->on, after grit_rnea_partials (k: positions at q0, twists at v0; r->P, r->grp). A
 * tangent step of dof j moves the bodies after it rigidly by S_j, and the fluid force is frame
 * invariant given the twist relative to the wind, so a body's wrench changes by S_j x* g and by K
 * times the part of its twist's change that is not rigid, -y_j; a dof above j sees the whole change,
 * a dof after j (moving with it) the second part only (power invariance cancels the first). The twist's
 * partial in v0_j is S_j. K: the inertia box's in closed form (a diagonal in the box's frame), the
 * ellipsoid model's from one evaluation with the twist seeded on six dual lanes. Where grit_rnea_partials
 * left its pairs (r->pairs_due: no wind), the fluid's vectors join the dofs' own and grit_rnea_pairs forms
 * both at once (r->no_fluid_merge: pairs of their own). */
void grit_fluid_partials_add(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, grit_fluid_partials *f);

/* The ellipsoid model's wrench on geometry g (negated, at the world origin, as bias holds it) added to gb
 * and its partials in the body's twist tw to Kb (row-major), its body's frame (xpos, xmat): the frame in
 * doubles, the local model on dual numbers (fluid_ellipsoid_dual.c; _avx2: the same bits, for processors
 * with AVX2, fluid_ellipsoid_avx2.c, NULL-free: only called where f->avx2). */
void grit_fluid_ellipsoid_partials(const grit_model *m, const double xpos[3], const double xmat[9], const double tw[6],
                                   int g, double gb[6], double Kb[36]);
void grit_fluid_ellipsoid_partials_avx2(const grit_model *m, const double xpos[3], const double xmat[9],
                                        const double tw[6], int g, double gb[6], double Kb[36]);

#endif
