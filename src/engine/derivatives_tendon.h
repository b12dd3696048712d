/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tendon.h — the length-fn transmissions (tendons, slider-cranks, sites) in the derivative
 * call, evaluated once where their inputs allow (internal; derivatives_tendon.c).
 *
 * An actuator's length L(q0) and moment J(q0) = dL/dv depend on positions alone. A position pass used
 * to evaluate them (dual, in every lane) twice, for A's implicit slopes and for the force; a velocity
 * or control pass, where q0 and the kinematics are constants, evaluated them again in dual numbers only
 * to find zero partials. Now a position pass evaluates them once for both, and keeps their values as
 * the call's constants; the velocity and control passes read those. Bit-identical: the same operations
 * on the same values (grit_actuator_tendon_apply), a constant's partials exactly zero as before. */
#ifndef GRIT_DERIVATIVES_TENDON_H
#define GRIT_DERIVATIVES_TENDON_H

#include "arena.h"
#include "constraints_extra.h"
#include "grit/dual.h"
#include "kinematics.h"
#include "model_internal.h"

typedef struct grit_deriv_ws grit_deriv_ws;

/* The dual functions the passes call: the baseline compilation's or, on processors with AVX2, those of
 * derivatives_tendon_avx2.c (the same bits, the partials four at a time). */
typedef struct grit_deriv_tendon_fns {
  grit_dual (*length_jacobian)(const grit_model *m, const grit_kin_dual *k, const grit_dual *q, int a, grit_dual *J,
                               grit_dual *scratch); /* grit_actuator_length_jacobian_dual */
  void (*apply)(const grit_model *m, int a, grit_dual L, const grit_dual *Jt, const int *nz, int nnz,
                const grit_dual *v0, const grit_dual *w, double h, grit_dual *force,
                grit_dual *A); /* grit_actuator_tendon_apply_dual */
  void (*cx_rows)(const grit_model *m, const grit_kin_dual *k, const grit_dual *q, double dt, int kind, int source,
                  int ntree, const int tree[2], grit_dual *const J[2], grit_contact_params_dual *p, grit_dual *scratch,
                  const int *cols, int ncols); /* grit_cx_rows_cols_dual: the equalities' and tendons' rows */
  grit_dual (*fixed_row)(const grit_model *m, const grit_dual *q, int t, grit_dual *J, const int *nz, int nnz, int adr,
                         int n); /* grit_deriv_tendon_fixed_row_in */
  void (*force_list)(const grit_model *m, const int *list, int n, const grit_dual *q0, const grit_dual *v0,
                     const grit_dual *w, double h, grit_dual *force); /* grit_actuator_force_list_dual */
} grit_deriv_tendon_fns;

/* A fixed tendon's L = sum coef_e q_e and its constant row (grit_tendon_length_jacobian's operations,
 * the same order, so the same bits) over its structural entries nz of J (J, nz: actuator a's block,
 * dof adr + i at J[i], i < n): the full evaluation first zeroed a row over all nv dofs (on the dog ~100 duals,
 * most of its cost) that only these entries are read of. Compiled in derivatives_tendon.c and, for AVX2,
 * derivatives_tendon_avx2.c (grit_deriv_tendon_fns: the same operations, the same bits). */
static inline __attribute__((always_inline)) grit_dual grit_deriv_tendon_fixed_row_in(const grit_model *m, const grit_dual *q,
                                                                                     int t, grit_dual *J, const int *nz,
                                                                                     int nnz, int adr, int n) {
  for (int k = 0; k < nnz; ++k) J[nz[k]] = grit_dual_const(0.0);
  grit_dual L = grit_dual_const(0.0);
  for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e) {
    const int j = m->wrap_obj[e], i = m->jnt_dofadr[j] - adr;
    L = grit_dual_fma(grit_dual_const(m->wrap_coef[e]), q[m->jnt_qposadr[j]], L);
    if (i >= 0 && i < n) J[i] = grit_dual_addc(J[i], m->wrap_coef[e]); /* (another tree's: not kept, as there) */
  }
  return L;
}

/* The table the call uses: the AVX2 compilation's where the call's contact functions are the AVX2 ones,
 * else the baseline's. */
const grit_deriv_tendon_fns *grit_deriv_tendon_fns_of(const grit_deriv_ws *w);

/* The AVX2 compilation's functions, NULL where the processor lacks AVX2 (or the build has no such
 * compilation). */
const grit_deriv_tendon_fns *grit_deriv_tendon_fns_avx2(void);

typedef struct grit_deriv_tendon {
  int any;              /* the model has a length-fn actuator */
  int *ptr;             /* (nu + 1) actuator a's moment over its tree's dofs at ptr[a] .. ptr[a + 1] - 1 */
  grit_dual *L, *J;     /* (nu), (ptr[nu]) the last evaluation's L and J (dual) */
  grit_dual *L0, *J0;   /* the call's values as constants (partials zero) */
  int *nz, *nnz;        /* (ptr[nu]), (nu) the entries of J that may be nonzero, packed as J: the dofs on
                         * the paths to the root of the bodies the transmission passes through (the
                         * others' point Jacobians, so J's entries, value and partials, are exact zeros) */
  int *nz0, *nnz0;      /* J0's entries not exact zeros */
  char *mark;           /* (nv) scratch of the layout */
  char *use0;           /* (nu) this evaluation's seeds do not move the actuator: L0, J0 serve (moved) */
  int no_skip;          /* nonzero: every position pass evaluates every transmission (tests) */
  int fresh;            /* L, J hold this residual evaluation's */
  int ok0;              /* L0, J0 hold this call's values */
  int off;              /* nonzero: every pass evaluates them in dual numbers, as before (tests) */
  double *nw;           /* grit_deriv_tendon_narrow_size bytes: the four-lane copies of an evaluation */
  int narrow_ok;        /* this build's wide dual is the layout derivatives_tendon_narrow.c reads */
  int no_narrow;        /* nonzero: every evaluation on all GRIT_DUAL_N lanes (tests) */
  unsigned long narrow_evals; /* evaluations on four lanes so far (tests) */
  int no_fixed;         /* nonzero: a fixed tendon's position passes by the full evaluation (tests) */
  unsigned long fixed_rows; /* fixed tendons' rows formed over their structural entries so far (tests) */
  const grit_deriv_tendon_fns *avx2; /* grit_deriv_tendon_fns_avx2(), used when w->fx is the AVX2 table */
  /* A position pass's force of an actuator its seeds do not move (use0): every input's partials +0 in each
   * lane (L0, J0 constants; v0 and u unseeded), so each lane's operations are the same and give the same
   * term, which the first such pass of the call keeps (c0) and later ones add: the same bits. */
  double *c0v, *c0d;    /* (ptr[nu]) per entry k of nz0: the term's value and partial (each lane's) */
  char *c0_ok;          /* (nu) 0: not kept this call; 1: kept; 2: its lanes differed (applied each pass) */
  grit_dual *c0s;       /* (nv) the terms' scratch, each entry begun at -0 (x + -0 is x: the term itself) */
  int no_c0;            /* nonzero: every pass applies it (tests) */
  unsigned long c0_adds; /* kept terms added so far (tests) */
} grit_deriv_tendon;

/* Carves the struct and its arrays for model m; NULL while measuring. */
grit_deriv_tendon *grit_deriv_tendon_layout(const grit_model *m, grit_carver *c);

/* A new residual evaluation: the last one's L, J expire, and with kin_all (a call's first pass, or a
 * parameter pass) the call's constants expire. */
void grit_deriv_tendon_next(grit_deriv_ws *w, int kin_all);

/* A position pass's grit_actuator_tendon_dual(.., force, A, ..): the transmissions evaluated once per
 * residual evaluation (at w->kin, w->q) and kept for the call. */
void grit_deriv_tendon_position(const grit_model *m, grit_deriv_ws *w, grit_dual *force, grit_dual *A);

/* A velocity or control pass's (q0 and the kinematics constants): adds the tendon actuators' forces to
 * force with the call's constant L and J (evaluated here if no position pass kept them). */
void grit_deriv_tendon_const(const grit_model *m, grit_deriv_ws *w, grit_dual *force);

/* The call's constant moments (dual, partials zero), packed as ptr says, their nonzero entries in nz0,
 * nnz0 (only those are set); evaluated if needed. */
const grit_dual *grit_deriv_tendon_moments(const grit_model *m, grit_deriv_ws *w);

/* The transmissions' length and moment on four lanes (derivatives_tendon_narrow.c), for evaluations
 * whose partials lie in the first four: the bytes of work they need; whether this build's wide dual
 * and kinematics are the layouts read there; the poses (xpos, xmat), motion subspaces and q
 * of kin (a grit_kin_dual) and q (wide duals) copied to four lanes into work, 0 if a lane left out is
 * not an exact zero (then the wide evaluation serves); actuator a's L (one wide dual) and J (nv wide
 * duals, lanes above four zero) from them; returns L's value. wide_ok: the sizes of grit_dual and
 * grit_kin_dual as the caller sees them. */
size_t grit_deriv_tendon_narrow_size(const grit_model *m);
int grit_deriv_tendon_narrow_wide_ok(size_t wide_size, size_t kin_size);
int grit_deriv_tendon_narrow_begin(const grit_model *m, const void *kin, const void *q, void *work);
double grit_deriv_tendon_narrow_eval(const grit_model *m, void *work, int a, void *L, void *J);

/* A position pass on the analytic path (derivatives_rnea.c), tree t: adds to r's rows the partials of
 * A_t(q) x, A_t the implicit slopes c J_a^T J_a of the tree's moved length-fn actuators that are not
 * fixed tendons (c = g^2 (h kv + h^2 kq), where the step treated a implicitly), x = v - v0 (the solution
 * and the state's velocities),
 * with J_a this evaluation's dual moments (after grit_deriv_tendon_position). Only r's partials are
 * meant: the values of these terms are in the step's A. */
void grit_deriv_tendon_operator_rows(const grit_model *m, grit_deriv_ws *w, int t, const double *v, const double *v0,
                                     grit_dual *r);

#endif
