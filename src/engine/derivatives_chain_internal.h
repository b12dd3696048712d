/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_chain_internal.h — what derivatives_chain.c (contacts, bodies) and derivatives_chain_cx.c
 * (joint friction, equalities, tendons) share: a kept constraint's slot and its parameters' values, the
 * kernels' inlining and AVX2 switches (internal). */
#ifndef GRIT_DERIVATIVES_CHAIN_INTERNAL_H
#define GRIT_DERIVATIVES_CHAIN_INTERNAL_H

#include <stddef.h>
#include <string.h>

#include "derivatives_internal.h"
#include "derivatives_simd.h"

/* kept_sub is also compiled for AVX2 and chosen at run time (derivatives_quadgrad.c's pattern). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define CK_AVX2 1
#else
#define CK_AVX2 0
#endif
#if defined(__GNUC__)
#define CK_INLINE inline __attribute__((always_inline))
#define CK_NOINLINE __attribute__((noinline))
#else
#define CK_INLINE inline
#define CK_NOINLINE
#endif

/* The kept parameters: the fields of grit_contact_params_dual, all dual numbers. */
enum { NPARAM = (int)(sizeof(grit_contact_params_dual) / sizeof(grit_dual)) };
_Static_assert(sizeof(grit_contact_params_dual) % sizeof(grit_dual) == 0, "the contact parameters are dual numbers");

/* A kept row's short path's numbers (w->ckc): tau_d, phi (dim), J's values on its spans (dim x their length),
 * one 64-byte line a row; a row with more takes its slot's. */
enum { GRIT_CKC = 8 };

/* The constraints that can be kept: as many as derivatives_delassus.c keeps z for. */
static inline int keep_cap(const grit_deriv_ws *w) { return w->cap_edges / 2 + 1; }

/* A kept constraint's parameters (NPARAM values a constraint, side by side: the softbox's 651 rows' in 104 kB,
 * not one 11 kB slot apart, each on its own page) and its slot of J's blocks (3 rows by the dofs of each tree
 * slot). */
static inline double *slot(const grit_deriv_ws *w, int i) { return w->ckeep + (size_t)i * (size_t)NPARAM; }
static inline double *slot_j(const grit_deriv_ws *w, int i) {
  return w->ckeepj + (size_t)i * ((size_t)6 * (size_t)w->maxn);
}

/* A constraint's parameters' values into a slot, and back as constants. */
static inline void keep_params(double *s, const grit_contact_params_dual *p) {
  grit_dual f[NPARAM];
  memcpy(f, p, sizeof f);
  for (int j = 0; j < NPARAM; ++j) s[j] = f[j].v;
}
static inline void kept_params(const double *s, grit_contact_params_dual *p) {
  grit_dual f[NPARAM];
  for (int j = 0; j < NPARAM; ++j) f[j] = grit_dual_const(s[j]);
  memcpy(p, f, sizeof *p);
}
/* The same values into a p whose partials are all +0 already (the residual zeroes it): their stores
 * were a tenth of the softbox's call (651 kept rows in each of 56 passes). */
static inline void kept_values(const double *s, grit_contact_params_dual *p) {
  char *base = (char *)p;
  for (int j = 0; j < NPARAM; ++j)
    memcpy(base + (size_t)j * sizeof(grit_dual) + offsetof(grit_dual, v), &s[j], sizeof s[j]);
}

/* Whether a pass's dual table is the AVX2 one, whose compilation the kept rows' law then takes too
 * (derivatives_chain_cx.c's bilateral_gamma and equality_rn). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
static inline int law_avx2_table(const grit_deriv_dual_fns *fx) { return fx && fx == grit_deriv_dual_fns_avx2(); }
#else
static inline int law_avx2_table(const grit_deriv_dual_fns *fx) { return (void)fx, 0; }
#endif

#endif
