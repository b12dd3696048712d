/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_chain_cx.c — derivatives_chain.c's leaving-out for the rows of joint friction, equalities and
 * tendons (the cx rows): a row none of whose bodies a pass moves keeps its J and parameters from the call's
 * first pass (its impulse then moves with its Delassus estimate only), a tendon moved rigidly keeps zero
 * partials, and the kept rows' J v, J^T gamma and law over the columns where the row can be nonzero. The
 * same operations as the full path on the same values; ws->no_chain turns it off. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "constraints.h"
#include "constraints_extra.h"
#include "contact_candidate.h"
#include "data_internal.h"
#include "derivatives_chain.h"
#include "derivatives_chain_internal.h"
#include "derivatives_simd.h"
#include "derivatives_tendon.h"
#include "grit/constraints.h"
#include "solver.h"

/* ------------------------------------------------------------------ joint friction, equalities, tendons */

/* Each tree slot's part [e0[q], e1[q]) of a constraint's ascending support list[0..nl-1]. */
static void tree_spans(const grit_model *m, const grit_constraint *k, const int *list, int nl, int e0[2], int e1[2]) {
  for (int q = 0; q < k->ntree; ++q) {
    const int adr = m->tree_dofadr[k->tree[q]], end = adr + m->tree_dofnum[k->tree[q]];
    if (k->ntree == 1 && nl > 0 && list[0] >= adr && list[nl - 1] < end) { /* ascending: all in the tree */
      e0[q] = 0, e1[q] = nl;
      continue;
    }
    int a = 0;
    while (a < nl && list[a] < adr) ++a;
    int b = a;
    while (b < nl && list[b] < end) ++b;
    e0[q] = a, e1[q] = b;
  }
}

/* The list of constraint k's structural columns (cxs), or NULL (joint friction: its span is one column). */
static const int *cx_support(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k, int *count) {
  return grit_cx_cols(m, w->cxl_ptr, w->cxl, k->kind, k->source, count);
}

/* The lists cx_support's come from (w->ckl's offsets are into these). */
static const int *cx_lists(const grit_deriv_ws *w) { return w->cxl; }

const int *grit_deriv_chain_cx_list(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k, int *count) {
  return cx_support(m, w, k, count);
}


/* Whether the pass moves tendon t's bodies other than as one rigid body: a spatial tendon with a meeting body
 * (w->ten_meet) none of whose bodies has a seeded dof strictly below it (w->btop) has a length and a row whose
 * partials are zero, as an unmoved one's (ws->no_ten_rigid: any moved body counts). */
static int tendon_moved_rigid(const grit_deriv_ws *w, int t) {
  const int meet = w->ten_meet[t];
  for (int e = w->ten_bptr[t]; e < w->ten_bptr[t + 1]; ++e)
    if (w->btop[w->ten_b[e]] > meet) return 1;
  return 0;
}

/* (it writes nothing: the callers keep w's fields in registers across it) */
static int tendon_moved(const grit_model *m, const grit_deriv_ws *w, int t) {
  if (m->ten_type[t] == GRIT_TENDON_FIXED) {
    for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e)
      if (w->bmoved[m->jnt_body[m->wrap_obj[e]]]) return 1;
    return 0;
  }
  if (w->ten_meet_any && !w->no_ten_rigid && w->ten_meet[t] > 0) return tendon_moved_rigid(w, t);
  for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e) {
    if (m->wrap_obj[e] >= 0 && w->bmoved[m->site_body[m->wrap_obj[e]]]) return 1;
    if (m->wrap_geom[e] >= 0 && w->bmoved[m->geom_body[m->wrap_geom[e]]]) return 1;
  }
  return 0;
}

/* Counts a kept tendon row whose tendon's meeting body the pass moves (tests: w->ten_rigid_used). */
static void note_rigid(const grit_model *m, grit_deriv_ws *w, const grit_constraint *k) {
  if (!w->ten_meet_any) return;
  const int t = k->kind == GRIT_CONSTRAINT_TENDON_LIMIT ? k->source / 2
                : k->kind == GRIT_CONSTRAINT_TENDON_SPRING || k->kind == GRIT_CONSTRAINT_TENDON_FRICTION ? k->source
                : k->kind == GRIT_CONSTRAINT_EQUALITY_1D && m->eq_type[k->source / 2] == GRIT_EQ_TENDON
                    ? m->eq_obj[2 * (k->source / 2)]
                    : -1;
  w->ten_rigid_used += t >= 0 && w->ten_meet[t] > 0 && w->bmoved[w->ten_meet[t]];
}

/* Whether the pass moves a body the rows of constraint k read (1 when unsure: the full path). */
static int cx_moved(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k) {
  switch (k->kind) {
    case GRIT_CONSTRAINT_FRICTION: return 0; /* J = e_dof, k: constants */
    case GRIT_CONSTRAINT_EQUALITY:
    case GRIT_CONSTRAINT_EQUALITY_1D: {
      const int eq = k->source / 2, type = m->eq_type[eq];
      for (int o = 0; o < 2; ++o) {
        const int x = m->eq_obj[2 * eq + o];
        if (x < 0) continue;
        if (type == GRIT_EQ_CONNECT || type == GRIT_EQ_WELD) {
          if (w->bmoved[x]) return 1;
        } else if (type == GRIT_EQ_JOINT) {
          if (w->bmoved[m->jnt_body[x]]) return 1;
        } else if (type == GRIT_EQ_TENDON) {
          if (tendon_moved(m, w, x)) return 1;
        } else {
          return 1;
        }
      }
      return 0;
    }
    case GRIT_CONSTRAINT_TENDON_LIMIT: return tendon_moved(m, w, k->source / 2);
    case GRIT_CONSTRAINT_TENDON_FRICTION:
    case GRIT_CONSTRAINT_TENDON_SPRING: return tendon_moved(m, w, k->source);
    default: return 1;
  }
}

void grit_deriv_chain_cx_keep(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                              const grit_contact_params_dual *p, grit_dual *const J[2]) {
  if (w->no_chain || w->inertial_in || k->dim > 3 || i >= keep_cap(w) || w->ckeep_at[i] == w->ckeep_call) return;
  double *s = slot(w, i);
  keep_params(s, p);
  double *js = slot_j(w, i);
  int nl = 0, e0[2], e1[2], nt = 0; /* cx_out's list: where a list is, every reader of js reads its entries alone */
  for (int q = 0; q < k->ntree; ++q) nt += m->tree_dofnum[k->tree[q]];
  /* (short rows, or a long list: the rows whole cost no more, the hammock's) */
  const int *list = w->no_cx_cols || !w->cxs_ptr || w->no_cx_compact || nt < 64 ? NULL : cx_support(m, w, k, &nl);
  if (list && 4 * nl > nt) list = NULL;
  if (list) tree_spans(m, k, list, nl, e0, e1);
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    if (list) { /* the softbox: 2 of 224 a row; the whole rows were 1.2 MB written a call */
      for (int r = 0; r < k->dim; ++r)
        for (int e = e0[q]; e < e1[q]; ++e) js[r * n + list[e] - adr] = J[q][r * n + list[e] - adr].v;
    } else {
      for (int j = 0; j < k->dim * n; ++j) js[j] = J[q][j].v;
    }
    js += k->dim * n;
  }
  w->ckeep_at[i] = w->ckeep_call;
}

/* A kept row's J (ws->no_cx_clean off): J[] is pointed at w->cxJ, which is +0 everywhere when the row is
 * taken (the entries the last row wrote are set back first); its values on its structural columns are
 * written there only when something reads J itself (grit_deriv_chain_cx_materialize): J v and J^T gamma
 * read the kept values (cx_kept_rows), the Delassus partials none (no partials, z kept). On the softbox
 * (224 dofs) zeroing dim x n duals per tree was a fifth of the call; on the flag writing the kept values
 * on its tendons' long paths a tenth. */
static void cx_out_clean(const grit_model *m, grit_deriv_ws *w, const grit_constraint *k, const int *list, int nl,
                         const double *js, grit_dual *J[2]) {
  grit_dual *buf = w->cxJ;
  for (int e = 0; e < w->cxJ_n; ++e) buf[w->cxJ_pos[e]] = grit_dual_const(0.0);
  w->cxJ_n = 0;
  int off = 0;
  for (int q = 0; q < k->ntree; ++q) {
    J[q] = buf + off;
    off += k->dim * m->tree_dofnum[k->tree[q]];
  }
  w->cx_kept_k = k, w->cx_kept_js = js, w->cx_kept_list = list, w->cx_kept_nl = nl;
  w->cx_kept_pending = 1;
}

void grit_deriv_chain_cx_materialize(const grit_model *m, grit_deriv_ws *w) {
  if (!w->cx_kept_pending) return;
  const grit_constraint *k = w->cx_kept_k;
  const int *list = w->cx_kept_list, nl = w->cx_kept_nl;
  int c = 0, off = 0;
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int e = 0; e < nl; ++e)
      if (list[e] >= adr && list[e] < adr + n)
        for (int r = 0; r < k->dim; ++r) {
          const int at = off + r * n + list[e] - adr;
          w->cxJ[at] = grit_dual_const(w->cx_kept_js[at]);
          w->cxJ_pos[c++] = at;
        }
    off += k->dim * n;
  }
  w->cxJ_n = c;
  w->cx_kept_pending = 0;
}

int grit_deriv_chain_cx_out(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k,
                            grit_contact_params_dual *p, grit_dual *J[2]) {
  w->cx_kept_ic = -1, w->cx_kept_k = NULL, w->cx_kept_pending = 0, w->cx_kept_inert = 0;
  if (!w->chain_on || k->dim > 3 || i >= keep_cap(w) || w->ckeep_at[i] != w->ckeep_call || cx_moved(m, w, k))
    return 0;
  const double *s = slot(w, i);
  const double *js = slot_j(w, i);
  int nl = 0;
  const int *list = w->no_cx_cols || !w->cxs_ptr ? NULL : cx_support(m, w, k, &nl);
  if (list && !w->no_cx_clean && !w->no_spring_skip && k->kind == GRIT_CONSTRAINT_TENDON_SPRING) {
    /* a spring's law reads no Delassus estimate: with J, p and J v + b the kept constants its gamma has
     * no partials, and J^T gamma adds to r's partials only zeros (cx_jacobian_rows leaves it out, as
     * chain_contact_out leaves out a contact whose law reads no w); J[] is not read */
    w->cx_kept_k = k, w->cx_kept_inert = 1;
    w->chain_skips[2]++;
    note_rigid(m, w, k);
    w->cx_kept_ic = i, w->cx_kept_eval = w->eval_no;
    return 1;
  }
  if (list && !w->no_cx_clean) {
    kept_values(s, p);
    cx_out_clean(m, w, k, list, nl, js, J);
    w->chain_skips[2]++;
    note_rigid(m, w, k);
    w->cx_clean_used++;
    w->cx_kept_ic = i, w->cx_kept_eval = w->eval_no; /* for its Delassus estimate's partials */
    return 1;
  }
  kept_params(s, p);
  for (int q = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    if (list) { /* off the structural columns the kept values are +0 */
      for (int j = 0; j < k->dim * n; ++j) J[q][j] = grit_dual_const(0.0);
      for (int e = 0; e < nl; ++e)
        if (list[e] >= adr && list[e] < adr + n)
          for (int r = 0; r < k->dim; ++r) J[q][r * n + list[e] - adr] = grit_dual_const(js[r * n + list[e] - adr]);
    } else {
      for (int j = 0; j < k->dim * n; ++j) J[q][j] = grit_dual_const(js[j]);
    }
    js += k->dim * n;
  }
  w->chain_skips[2]++;
  note_rigid(m, w, k);
  w->cx_kept_ic = i, w->cx_kept_eval = w->eval_no; /* for its Delassus estimate's partials */
  return 1;
}

void grit_deriv_chain_cx_rows(const grit_model *m, grit_deriv_ws *w, const grit_constraint *k, double h,
                              grit_dual *const J[2], grit_contact_params_dual *p) {
  int nl = 0; /* (zeroed over cxs whole: the entries cxn leaves out read +0) */
  const int *list = w->no_cx_cols || !w->cxs_ptr ? NULL : grit_cx_cols(m, w->cxs_ptr, w->cxs, k->kind, k->source, &nl);
  /* the AVX2 compilation where the call uses it (w->fx; the same bits, the partials four at a time) */
  grit_deriv_tendon_fns_of(w)->cx_rows(m, &w->kin, w->q, h, k->kind, k->source, k->ntree, k->tree, J, p, w->scratch,
                                       list, nl);
}

/* a b + c with b a plain double (derivatives_residual.c's fma_by_const: the same operations) */
static inline grit_dual cx_fma_by_const(grit_dual a, double b, grit_dual c) {
  grit_dual r;
  r.v = a.v * b + c.v;
  GRIT_DUAL_FOR(i) r.d[i] = a.d[i] * b + c.d[i];
  return r;
}

/* y[list[e]] -= J_e gamma for e = e0 .. e1 - 1, J_e = jr[list[e] - adr] with +0 partials: grit_dual_mul's
 * J.d gamma.v + J.v gamma.d with the first term the zero (+0) gamma.v, then grit_dual_sub; the same
 * operations in the same order in both compilations (no FMA: -ffp-contract=off, a target without it). */
static CK_INLINE void kept_sub_in(grit_dual *y, const int *list, int e0, int e1, const double *jr, int adr,
                                  const grit_dual *g, int packed) {
  const double gv = g->v, z = 0.0 * gv;
#if defined(__GNUC__) && GRIT_DUAL_N == 8
  typedef double v4 __attribute__((vector_size(32), aligned(8), may_alias)); /* as row_jt_sub_in's: the same bits */
  const v4 g0 = *(const v4 *)g->d, g1 = *(const v4 *)(g->d + 4);
  for (int e = e0; e < e1; ++e) {
    grit_dual *t = &y[list[e]];
    const double a = packed ? jr[e - e0] : jr[list[e] - adr];
    t->v = t->v - a * gv;
    *(v4 *)t->d = *(const v4 *)t->d - (z + a * g0);
    *(v4 *)(t->d + 4) = *(const v4 *)(t->d + 4) - (z + a * g1);
  }
#else
  for (int e = e0; e < e1; ++e) {
    grit_dual *t = &y[list[e]];
    const double a = packed ? jr[e - e0] : jr[list[e] - adr];
    t->v = t->v - a * gv;
    for (int l = 0; l < GRIT_DUAL_N; ++l) t->d[l] = t->d[l] - (z + a * g->d[l]);
  }
#endif
}
static CK_NOINLINE void kept_sub_base(grit_dual *y, const int *list, int e0, int e1, const double *jr, int adr,
                                      const grit_dual *g) {
  kept_sub_in(y, list, e0, e1, jr, adr, g, 0);
}
/* The same with the row's entries packed in the spans' order (jr[e - e0]: a row's w->ckc). */
static CK_NOINLINE void kept_sub_packed_base(grit_dual *y, const int *list, int e0, int e1, const double *jr,
                                             const grit_dual *g) {
  kept_sub_in(y, list, e0, e1, jr, 0, g, 1);
}
#if CK_AVX2
static CK_NOINLINE __attribute__((target("avx2"))) void kept_sub_avx2(grit_dual *y, const int *list, int e0, int e1,
                                                                      const double *jr, int adr, const grit_dual *g) {
  kept_sub_in(y, list, e0, e1, jr, adr, g, 0);
}
static CK_NOINLINE __attribute__((target("avx2"))) void kept_sub_packed_avx2(grit_dual *y, const int *list, int e0,
                                                                             int e1, const double *jr,
                                                                             const grit_dual *g) {
  kept_sub_in(y, list, e0, e1, jr, 0, g, 1);
}
#endif
static void kept_sub_packed(grit_dual *y, const int *list, int e0, int e1, const double *jr, const grit_dual *g) {
#if CK_AVX2
  if (__builtin_cpu_supports("avx2")) {
    kept_sub_packed_avx2(y, list, e0, e1, jr, g);
    return;
  }
#endif
  kept_sub_packed_base(y, list, e0, e1, jr, g);
}
static void kept_sub(grit_dual *y, const int *list, int e0, int e1, const double *jr, int adr, const grit_dual *g) {
#if CK_AVX2
  if (__builtin_cpu_supports("avx2")) {
    kept_sub_avx2(y, list, e0, e1, jr, adr, g);
    return;
  }
#endif
  kept_sub_base(y, list, e0, e1, jr, adr, g);
}

/* A row's J v + b over its structural columns (Jr[dof - adr]: the row's entry of dof) and y -= J^T gamma: the
 * operations of cx_fma_by_const and of grit_dual_sub(y, grit_dual_mul(J, gamma)) lane by lane in their
 * order, so that the AVX2 compilation takes four lanes at a time (the same bits; ws->no_cx_avx2: the
 * dual.h loops). */
#if defined(__GNUC__) && GRIT_DUAL_N == 8
/* Four lanes as one vector (GNU C's vector extension: element-wise IEEE operations, a scalar operand
 * broadcast), read and written unaligned; the accumulator in registers across the row (ws->no_cx_avx2:
 * the dual.h loops). Each lane's operations are the loops' below, in their order: the same bits. */
typedef double ck_v4 __attribute__((vector_size(32), aligned(8), may_alias));
#define CK_LD(p) (*(const ck_v4 *)(p))
#define CK_ST(p, x) (*(ck_v4 *)(p) = (x))
static CK_INLINE void row_jv_in(const grit_dual *Jr, int adr, const int *list, int e0, int e1, const double *v,
                                grit_dual *vc) {
  double x = vc->v;
  ck_v4 d0 = CK_LD(vc->d), d1 = CK_LD(vc->d + 4);
  for (int e = e0; e < e1; ++e) {
    const grit_dual *a = &Jr[list[e] - adr];
    const double b = v[list[e]];
    x = a->v * b + x;
    d0 = CK_LD(a->d) * b + d0;
    d1 = CK_LD(a->d + 4) * b + d1;
  }
  vc->v = x;
  CK_ST(vc->d, d0), CK_ST(vc->d + 4, d1);
}
static CK_INLINE void row_jt_sub_in(grit_dual *y, const grit_dual *Jr, int adr, const int *list, int e0, int e1,
                                    const grit_dual *g) {
  const double gv = g->v;
  const ck_v4 g0 = CK_LD(g->d), g1 = CK_LD(g->d + 4);
  for (int e = e0; e < e1; ++e) {
    grit_dual *t = &y[list[e]];
    const grit_dual *a = &Jr[list[e] - adr];
    const double av = a->v;
    t->v = t->v - av * gv;
    CK_ST(t->d, CK_LD(t->d) - (CK_LD(a->d) * gv + av * g0));
    CK_ST(t->d + 4, CK_LD(t->d + 4) - (CK_LD(a->d + 4) * gv + av * g1));
  }
}
#else
static CK_INLINE void row_jv_in(const grit_dual *Jr, int adr, const int *list, int e0, int e1, const double *v,
                                grit_dual *vc) {
  for (int e = e0; e < e1; ++e) {
    const grit_dual *a = &Jr[list[e] - adr];
    const double b = v[list[e]];
    vc->v = a->v * b + vc->v;
    for (int l = 0; l < GRIT_DUAL_N; ++l) vc->d[l] = a->d[l] * b + vc->d[l];
  }
}
static CK_INLINE void row_jt_sub_in(grit_dual *y, const grit_dual *Jr, int adr, const int *list, int e0, int e1,
                                    const grit_dual *g) {
  for (int e = e0; e < e1; ++e) {
    grit_dual *t = &y[list[e]];
    const grit_dual *a = &Jr[list[e] - adr];
    t->v = t->v - a->v * g->v;
    for (int l = 0; l < GRIT_DUAL_N; ++l) t->d[l] = t->d[l] - (a->d[l] * g->v + a->v * g->d[l]);
  }
}
#endif
static CK_NOINLINE void row_jv_base(const grit_dual *Jr, int adr, const int *list, int e0, int e1, const double *v,
                                    grit_dual *vc) {
  row_jv_in(Jr, adr, list, e0, e1, v, vc);
}
static CK_NOINLINE void row_jt_sub_base(grit_dual *y, const grit_dual *Jr, int adr, const int *list, int e0, int e1,
                                        const grit_dual *g) {
  row_jt_sub_in(y, Jr, adr, list, e0, e1, g);
}
#if CK_AVX2
static CK_NOINLINE __attribute__((target("avx2"))) void row_jv_avx2(const grit_dual *Jr, int adr, const int *list,
                                                                    int e0, int e1, const double *v, grit_dual *vc) {
  row_jv_in(Jr, adr, list, e0, e1, v, vc);
}
static CK_NOINLINE __attribute__((target("avx2"))) void row_jt_sub_avx2(grit_dual *y, const grit_dual *Jr, int adr,
                                                                        const int *list, int e0, int e1,
                                                                        const grit_dual *g) {
  row_jt_sub_in(y, Jr, adr, list, e0, e1, g);
}
#endif
static void row_jv(const grit_dual *Jr, int adr, const int *list, int e0, int e1, const double *v, grit_dual *vc) {
#if CK_AVX2
  if (__builtin_cpu_supports("avx2")) {
    row_jv_avx2(Jr, adr, list, e0, e1, v, vc);
    return;
  }
#endif
  row_jv_base(Jr, adr, list, e0, e1, v, vc);
}
static void row_jt_sub(grit_dual *y, const grit_dual *Jr, int adr, const int *list, int e0, int e1,
                       const grit_dual *g) {
#if CK_AVX2
  if (__builtin_cpu_supports("avx2")) {
    row_jt_sub_avx2(y, Jr, adr, list, e0, e1, g);
    return;
  }
#endif
  row_jt_sub_base(y, Jr, adr, list, e0, e1, g);
}

/* grit_deriv_chain_cx_jacobian_rows for a row cx_out took as constants, from its kept values js: J's
 * partials are +0, so J v + b's partials stay +0 (a +-0 product added to +0) and its values are the same
 * sums in doubles; J^T gamma's partials are grit_dual_mul's, J.d gamma.v + J.v gamma.d with the first term
 * the zero (+0) gamma.v, so the same bits. Returns 0 where a velocity is an exact zero (the span's path). */
static int cx_kept_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const grit_constraint *k,
                        const int *list, const int e0[2], const int e1[2], const grit_contact_params_dual *p) {
  const double *js = w->cx_kept_js;
  grit_dual vc[3], gamma[3], G[9];
  for (int r = 0; r < k->dim; ++r) {
    double x = k->b[r];
    for (int q = 0, off = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
      const double *jr = js + off + r * n; /* entry of dof list[e]: jr[list[e] - adr] */
      for (int e = e0[q]; e < e1[q]; ++e) x = jr[list[e] - adr] * d->vsol[list[e]] + x;
      off += k->dim * n;
    }
    if (x == 0.0) return 0;
    vc[r] = grit_dual_const(x);
  }
  w->fx->constraint_eval(k->kind, p, m->opt.timestep, vc, gamma, G);
  for (int q = 0, off = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int r = 0; r < k->dim; ++r) kept_sub(w->r, list, e0[q], e1[q], js + off + r * n, adr, &gamma[r]);
    off += k->dim * n;
  }
  w->cx_cols_used++;
  w->cx_kept_fast++;
  return 1;
}

int grit_deriv_chain_cx_jacobian_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w,
                                      const grit_constraint *k, const grit_dual *const J[2],
                                      const grit_contact_params_dual *p) {
  if (w->no_cx_cols || !w->cxs_ptr) return 0;
  /* (this evaluation's: a later call's constraint array can hold another row at the same address) */
  if (w->cx_kept_inert && w->cx_kept_k == k && w->cx_kept_eval == w->eval_no) { /* a kept spring (cx_out) */
    w->spring_skipped++;
    return 1;
  }
  int nl = 0;
  const int *list = cx_support(m, w, k, &nl);
  if (!list) return 0;
  int e0[2], e1[2]; /* each tree slot's part of the ascending list */
  tree_spans(m, k, list, nl, e0, e1);
  if (w->cx_kept_pending && w->cx_kept_k == k && w->cx_kept_eval == w->eval_no) {
    if (cx_kept_rows(m, d, w, k, list, e0, e1, p)) return 1;
    grit_deriv_chain_cx_materialize(m, w); /* the span's path reads J */
    return 0;
  }
  grit_dual vc[3], gamma[3], G[9];
  for (int r = 0; r < k->dim; ++r) { /* apply_jacobian's sums, the same order, without the zero terms */
    vc[r] = grit_dual_const(k->b[r]);
    for (int q = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
      if (!w->no_cx_avx2) {
        row_jv(J[q] + r * n, adr, list, e0[q], e1[q], d->vsol, &vc[r]);
        continue;
      }
      for (int e = e0[q]; e < e1[q]; ++e) vc[r] = cx_fma_by_const(J[q][r * n + list[e] - adr], d->vsol[list[e]], vc[r]);
    }
    /* a zero velocity's sign could be the left-out zeros': the span's path decides it */
    if (vc[r].v == 0.0) return 0;
  }
  w->fx->constraint_eval(k->kind, p, m->opt.timestep, vc, gamma, G);
  for (int q = 0; q < k->ntree; ++q) { /* subtract_jt_gamma's */
    const int n = m->tree_dofnum[k->tree[q]];
    for (int r = 0; r < k->dim; ++r) {
      if (!w->no_cx_avx2) {
        row_jt_sub(w->r, J[q] + r * n, m->tree_dofadr[k->tree[q]], list, e0[q], e1[q], &gamma[r]);
        continue;
      }
      for (int e = e0[q]; e < e1[q]; ++e) {
        grit_dual *y = &w->r[list[e]];
        *y = grit_dual_sub(*y, grit_dual_mul(J[q][r * n + list[e] - m->tree_dofadr[k->tree[q]]], gamma[r]));
      }
    }
  }
  w->cx_cols_used++;
  return 1;
}

/* The kept equality rows' law (grit_bilateral_gamma) and Rn (grit_equality_rn) in the compilation of the
 * pass's dual table w->fx: its AVX2 copies (derivatives_avx2.c) take the eight partials in two vectors
 * instead of four, the same IEEE operations in the same order (nothing fused), so the same bits; the
 * baseline table (grit_deriv_dual_fns_get(0)) keeps the baseline ones. The softbox: 651 rows in each of
 * 28 passes, 154 instructions a row in the baseline law. Called through a pointer: a conditional between
 * the two calls copied Rn's value (25 instructions a row more). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
grit_dual grit_equality_rn_dual_avx2(grit_dual w);
grit_dual grit_bilateral_gamma_dual_avx2(const grit_contact_params_dual *p, double dt, int dim, const grit_dual *vc,
                                         grit_dual *gamma);
static grit_dual equality_rn(const grit_deriv_ws *w, grit_dual wd) {
  grit_dual (*const rn)(grit_dual) = w->law_avx2 ? grit_equality_rn_dual_avx2 : grit_equality_rn_dual;
  return rn(wd);
}
static void bilateral_gamma(const grit_deriv_ws *w, const grit_contact_params_dual *p, double dt, int dim,
                            const grit_dual *vc, grit_dual *gamma) {
  grit_dual (*const law)(const grit_contact_params_dual *, double, int, const grit_dual *, grit_dual *) =
      w->law_avx2 ? grit_bilateral_gamma_dual_avx2 : grit_bilateral_gamma_dual;
  law(p, dt, dim, vc, gamma);
}
#else
static grit_dual equality_rn(const grit_deriv_ws *w, grit_dual wd) { return (void)w, grit_equality_rn_dual(wd); }
static void bilateral_gamma(const grit_deriv_ws *w, const grit_contact_params_dual *p, double dt, int dim,
                            const grit_dual *vc, grit_dual *gamma) {
  (void)w;
  grit_bilateral_gamma_dual(p, dt, dim, vc, gamma);
}
#endif

/* grit_bilateral_gamma(p, dt, dim, vc, gamma) with p.Rn = grit_equality_rn(wd) and p.tau_d, p.phi, vc the
 * constants tau_d, phi, x (partials +0), as cx_fused calls it, written out: wd is the only dual, so every
 * partial of the law is a few operations on wd's, lane by lane. Each value and partial is formed by the
 * operations dual.h's grit_dual_scale, _div, _addc, _fma, _mul and _neg perform, in their order and
 * unfused (the constants' partials +0 go through them too), so the same bits as the law's dual
 * evaluation in either compilation; ws->no_cx_law_lanes: the law. The softbox's 651 rows in each of 27
 * passes: two calls through pointers and ~120 instructions of dual operations, mostly on zeros, a row. */
_Static_assert(GRIT_DUAL_N % 4 == 0, "law_lanes takes the partials four at a time");
static inline __attribute__((always_inline)) void law_lanes_in(const grit_dual *wdp, double K, double tau_d,
                                                              const double *phi, const double *x, double dt, int dim,
                                                              grit_dual *gamma) {
  const grit_dual wd = *wdp;
  typedef double lv4 __attribute__((vector_size(32), aligned(8), may_alias));
  const int pos = wd.v > 0.0;                      /* grit_equality_rn: w K, else the constant 1 */
  const double rv = pos ? wd.v * K : 1.0;          /* Rn's value (K: w->law_k) */
  const double iv = 1.0 / rv;                      /* iR = 1 / Rn: its value and its divisor's inverse */
  const double sv = 1.0 / (tau_d + dt);            /* s = 1 / (tau_d + dt), a constant */
  const double sd = (0.0 - sv * 0.0) * sv;         /* s's partials (the division's, on +0) */
  lv4 ird[GRIT_DUAL_N / 4];
  for (int h = 0; h < GRIT_DUAL_N / 4; ++h) {
    lv4 rd = {0.0, 0.0, 0.0, 0.0}; /* Rn's partials */
    if (pos) rd = K * *(const lv4 *)(wd.d + 4 * h);
    ird[h] = (0.0 - iv * rd) * iv;                 /* grit_dual_div(1, Rn): (a.d - r.v b.d) / b.v */
  }
  for (int r = 0; r < dim; ++r) {
    const double av = phi[r] * sv + x[r];          /* grit_dual_fma(phi, s, vc) */
    const double ad = (0.0 * sv + phi[r] * sd) + 0.0;
    gamma[r].v = -(av * iv);                       /* grit_dual_neg(grit_dual_mul(a, iR)) */
    for (int h = 0; h < GRIT_DUAL_N / 4; ++h) *(lv4 *)(gamma[r].d + 4 * h) = -1.0 * (ad * iv + av * ird[h]);
  }
}

static __attribute__((noinline)) void law_lanes_base(const grit_dual *wd, double K, double tau_d, const double *phi,
                                                     const double *x, double dt, int dim, grit_dual *gamma) {
  law_lanes_in(wd, K, tau_d, phi, x, dt, dim, gamma);
}
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
/* (the same operations four lanes a vector where the pass's table is the AVX2 one: w->law_avx2) */
static __attribute__((noinline, target("avx2"))) void law_lanes_avx2(const grit_dual *wd, double K, double tau_d,
                                                                     const double *phi, const double *x, double dt,
                                                                     int dim, grit_dual *gamma) {
  law_lanes_in(wd, K, tau_d, phi, x, dt, dim, gamma);
}
#endif
static void law_lanes(const grit_deriv_ws *w, const grit_dual *wd, double tau_d, const double *phi, const double *x,
                      double dt, int dim, grit_dual *gamma) {
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
  if (w->law_avx2) {
    law_lanes_avx2(wd, w->law_k, tau_d, phi, x, dt, dim, gamma);
    return;
  }
#endif
  (void)w;
  law_lanes_base(wd, w->law_k, tau_d, phi, x, dt, dim, gamma);
}

/* The kinds of rows whose params_finalize writes no field of p but Rn, vhat or eps, each whole (never
 * read first), and whose law writes none (constraints_generic.h): a p kept across rows (w->ckp) whose
 * partials those three lose after each use has the +0 partials of a p zeroed whole for the next, without
 * its 1440-byte memset (a twelfth of the softbox's call, 651 rows in each of 28 passes). */
static int lean_kind(int kind) {
  return kind == GRIT_CONSTRAINT_EQUALITY || kind == GRIT_CONSTRAINT_EQUALITY_1D ||
         kind == GRIT_CONSTRAINT_TENDON_LIMIT || kind == GRIT_CONSTRAINT_TENDON_FRICTION;
}

/* The kept values' indices of the fields a bilateral row's law reads besides Rn (kept_values' order). */
enum {
  TAU_D = (int)(offsetof(grit_contact_params_dual, tau_d) / sizeof(grit_dual)),
  PHI = (int)(offsetof(grit_contact_params_dual, phi) / sizeof(grit_dual))
};

/* A kept bilateral row (an equality's) whose whole lean path below ran in an earlier pass of this call
 * (w->ckf_at): that path's steps without the ones whose outcome cannot change within the call (the
 * switches, the row's kind and dimension, its column list, spans and J v + b, all kept), and with only the
 * fields its law reads written into w->ckp (tau_d, phi; params_finalize writes Rn from w alone for these
 * kinds, grit_bilateral_gamma reads Rn, tau_d and phi): the same operations on the same numbers in the same
 * order, so the same bits (ws->no_cx_fused: the whole path in every pass). */
static int cx_fused(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i, const grit_constraint *k,
                    const char *mmask, int need_w, int lin_w) {
  if (!w->chain_on || w->ckeep_at[i] != w->ckeep_call || cx_moved(m, w, k)) return 0; /* (the per-pass tests) */
  w->cx_kept_ic = -1, w->cx_kept_k = NULL, w->cx_kept_pending = 0, w->cx_kept_inert = 0;
  const int *list = cx_lists(w) + w->ckl[i], *ke = w->cke + 4 * (size_t)i;
  const double *x = w->ckx + 3 * (size_t)i, *s = slot(w, i), *js = slot_j(w, i);
  grit_dual wd = grit_dual_const(k->w);
  if (need_w && (!lin_w || !grit_deriv_delassus_kept_row_again(m, w, mmask, i, k->dim, k->ntree, k->tree, &wd)))
    return 0;
  /* params_finalize's Rn for these kinds (from w alone) and the law, grit_bilateral_gamma, on the kept tau_d,
   * phi and J v + b, whose partials are +0 in the kept p: a p holding only the fields the law reads */
  grit_dual gamma[3];
  const int compact = w->ckc_at[i] == w->ckeep_call; /* the same numbers from the row's one line (cx_compact) */
  const double *c = w->ckc + (size_t)GRIT_CKC * (size_t)i;
  const double tau_d = compact ? c[0] : s[TAU_D], *phi = compact ? c + 1 : s + PHI;
  (void)d;
  if (!w->no_cx_law_lanes) {
    law_lanes(w, &wd, tau_d, phi, x, m->opt.timestep, k->dim, gamma);
    w->cx_law_lanes_used++;
  } else {
    grit_contact_params_dual p;
    grit_dual vc[3];
    p.Rn = equality_rn(w, wd);
    p.tau_d = grit_dual_const(tau_d);
    for (int r = 0; r < k->dim; ++r) p.phi[r] = grit_dual_const(phi[r]), vc[r] = grit_dual_const(x[r]);
    bilateral_gamma(w, &p, m->opt.timestep, k->dim, vc, gamma);
  }
  if (compact) {
    const double *jc = c + 1 + k->dim;
    for (int q = 0; q < k->ntree; ++q)
      for (int r = 0; r < k->dim; ++r) kept_sub_packed(w->r, list, ke[q], ke[2 + q], jc, &gamma[r]), jc += ke[2 + q] - ke[q];
    w->cx_compact_used++;
    w->cx_lean_used++, w->cx_fused_used++;
    w->chain_skips[2]++, w->cx_clean_used++, w->cx_cols_used++, w->cx_kept_fast++, w->cx_fast_used++;
    return 1;
  }
  for (int q = 0, off = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int r = 0; r < k->dim; ++r) kept_sub(w->r, list, ke[q], ke[2 + q], js + off + r * n, adr, &gamma[r]);
    off += k->dim * n;
  }
  w->cx_lean_used++, w->cx_fused_used++;
  w->chain_skips[2]++, w->cx_clean_used++, w->cx_cols_used++, w->cx_kept_fast++, w->cx_fast_used++;
  return 1;
}

/* Row i's short path's numbers (cx_fused's reads of its slot: tau_d, phi, then J's values on the spans in the
 * loop's order, tree slot, row, entry) into its one line w->ckc, where they fit: in each of a call's later
 * passes the softbox's 651 rows read three lines each, one 11 kB slot apart, for ~8 numbers. */
static void cx_compact(const grit_model *m, grit_deriv_ws *w, int i, const grit_constraint *k, const int *list,
                       const int e0[2], const int e1[2], const double *s) {
  int need = 1 + k->dim;
  for (int q = 0; q < k->ntree; ++q) need += k->dim * (e1[q] - e0[q]);
  if (w->no_cx_compact || need > GRIT_CKC) return;
  double *c = w->ckc + (size_t)GRIT_CKC * (size_t)i;
  const double *js = slot_j(w, i);
  c[0] = s[TAU_D];
  for (int r = 0; r < k->dim; ++r) c[1 + r] = s[PHI + r];
  int at = 1 + k->dim;
  for (int q = 0, off = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int r = 0; r < k->dim; ++r)
      for (int e = e0[q]; e < e1[q]; ++e) c[at++] = js[off + r * n + list[e] - adr];
    off += k->dim * n;
  }
  w->ckc_at[i] = w->ckeep_call;
}

int grit_deriv_chain_cx_fast(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int i, const grit_constraint *k,
                             const char *mmask, int need_w, int lin_w) {
  if ((k->kind == GRIT_CONSTRAINT_EQUALITY || k->kind == GRIT_CONSTRAINT_EQUALITY_1D) && !w->no_cx_fused && i >= 0 &&
      i < keep_cap(w) && w->ckf_at[i] == w->ckeep_call)
    return cx_fused(m, d, w, i, k, mmask, need_w, lin_w);
  if (w->no_cx_fast || !w->chain_on || w->no_cx_cols || w->no_cx_clean || !w->cxs_ptr || k->dim > 3 ||
      k->kind == GRIT_CONSTRAINT_LIMIT || k->kind == GRIT_CONSTRAINT_FRICTION || i >= keep_cap(w) ||
      w->ckeep_at[i] != w->ckeep_call || cx_moved(m, w, k))
    return 0;
  int nl = 0;
  const int *list = cx_support(m, w, k, &nl);
  if (!list) return 0;
  w->cx_kept_ic = -1, w->cx_kept_k = NULL, w->cx_kept_pending = 0, w->cx_kept_inert = 0; /* as cx_out begins */
  if (k->kind == GRIT_CONSTRAINT_TENDON_SPRING && !w->no_spring_skip) { /* cx_out's and cx_jacobian_rows' */
    w->chain_skips[2]++, w->spring_skipped++, w->cx_fast_used++;
    note_rigid(m, w, k);
    return 1;
  }
  const double *s = slot(w, i), *js = slot_j(w, i);
  const int lean = !w->no_cx_lean && lean_kind(k->kind);
  int e0[2], e1[2], *ke = w->cke + 4 * (size_t)i; /* cx_jacobian_rows' spans; kept with x (lean) */
  if (lean && w->ckx_at[i] == w->ckeep_call) {
    e0[0] = ke[0], e0[1] = ke[1], e1[0] = ke[2], e1[1] = ke[3];
  } else {
    tree_spans(m, k, list, nl, e0, e1);
    ke[0] = e0[0], ke[1] = e0[1], ke[2] = e1[0], ke[3] = e1[1];
  }
  double *x = w->ckx + 3 * (size_t)i; /* cx_kept_rows' J v + b, once per call */
  for (int r = 0; r < k->dim && w->ckx_at[i] == w->ckeep_call; ++r)
    if (x[r] == 0.0) return 0; /* the span's path */
  for (int r = 0; r < k->dim && w->ckx_at[i] != w->ckeep_call; ++r) {
    x[r] = k->b[r];
    for (int q = 0, off = 0; q < k->ntree; ++q) {
      const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
      const double *jr = js + off + r * n;
      for (int e = e0[q]; e < e1[q]; ++e) x[r] = jr[list[e] - adr] * d->vsol[list[e]] + x[r];
      off += k->dim * n;
    }
    if (x[r] == 0.0) return 0; /* the span's path (formed again in each pass: not marked) */
    if (r == k->dim - 1) w->ckx_at[i] = w->ckeep_call;
  }
  grit_dual wd = grit_dual_const(k->w); /* unread by the law where need_w is 0 */
  if (need_w && (!lin_w || !grit_deriv_delassus_kept_row(m, w, mmask, i, k->dim, k->ntree, k->tree, 1, &wd)))
    return 0;
  grit_contact_params_dual pz, *p = lean ? (grit_contact_params_dual *)(void *)w->ckp : &pz;
  if (!lean) memset(&pz, 0, sizeof pz); /* as the residual's p, then cx_out's values */
  kept_values(s, p);
  w->fx->params_finalize(k->kind, wd, m->opt.timestep, &d->settings, p);
  grit_dual vc[3], gamma[3], G[9];
  for (int r = 0; r < k->dim; ++r) vc[r] = grit_dual_const(x[r]);
  if (lean && (k->kind == GRIT_CONSTRAINT_EQUALITY || k->kind == GRIT_CONSTRAINT_EQUALITY_1D))
    bilateral_gamma(w, p, m->opt.timestep, k->dim, vc, gamma); /* its gamma alone */
  else
    w->fx->constraint_eval(k->kind, p, m->opt.timestep, vc, gamma, G);
  if (lean) { /* the partials params_finalize wrote back to +0 (lean_kind): w->ckp as memset left it */
    memset(p->Rn.d, 0, sizeof p->Rn.d);
    memset(p->vhat.d, 0, sizeof p->vhat.d);
    memset(p->eps.d, 0, sizeof p->eps.d);
    w->cx_lean_used++;
  }
  for (int q = 0, off = 0; q < k->ntree; ++q) {
    const int n = m->tree_dofnum[k->tree[q]], adr = m->tree_dofadr[k->tree[q]];
    for (int r = 0; r < k->dim; ++r) kept_sub(w->r, list, e0[q], e1[q], js + off + r * n, adr, &gamma[r]);
    off += k->dim * n;
  }
  /* the short path for the call's later passes (cx_fused), where the estimate was the kept one */
  if (lean && need_w && lin_w && (k->kind == GRIT_CONSTRAINT_EQUALITY || k->kind == GRIT_CONSTRAINT_EQUALITY_1D) &&
      w->ckx_at[i] == w->ckeep_call)
    w->ckf_at[i] = w->ckeep_call, w->ckl[i] = (int)(list - cx_lists(w)), cx_compact(m, w, i, k, list, e0, e1, s);
  w->chain_skips[2]++, w->cx_clean_used++, w->cx_cols_used++, w->cx_kept_fast++, w->cx_fast_used++;
  return 1;
}
