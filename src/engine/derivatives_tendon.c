/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_tendon.c — the length-fn transmissions in the derivative call, evaluated once per
 * residual evaluation in position passes and once per call for the velocity and control passes
 * (derivatives_tendon.h says why this is exact). */
#include "derivatives_tendon.h"

#include "actuation.h"
#include "actuation_muscle.h"
#include "derivatives_internal.h"
#include "derivatives_simd.h" /* grit_deriv_dual_fns_get: whether the passes use the AVX2 compilation */
#include "grit/constraints.h"   /* GRIT_TENDON_FIXED */

#include <stdint.h>
#include <string.h>

/* Marks the dofs on body b's path to the root. */
static void mark_path(const grit_model *m, char *mark, int b) {
  for (int dof = b >= 0 ? m->body_lastdof[b] : -1; dof >= 0; dof = m->dof_parent[dof]) mark[dof] = 1;
}

/* Actuator a's entries of J that may be nonzero (s->nz, s->nnz; increasing): a fixed tendon's joints'
 * dofs; a spatial tendon's, slider-crank's or site's: the paths to the root of its sites' and wrap
 * geometries' bodies (supersets: listing an entry that is zero only repeats the old operation). */
static void structure(const grit_model *m, grit_deriv_tendon *s, int a) {
  const int adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]], n = m->tree_dofnum[m->dof_tree[m->act_dof[a]]];
  memset(s->mark, 0, (size_t)m->nv);
  if (m->act_trntype[a] == GRIT_TRN_TENDON) {
    const int t = m->act_tendon[a];
    for (int e = m->ten_adr[t]; e < m->ten_adr[t] + m->ten_num[t]; ++e) {
      if (m->ten_type[t] == GRIT_TENDON_FIXED) {
        const int j = m->wrap_obj[e];
        for (int i = 0; i < grit_joint_nv(m->jnt_type[j]); ++i) s->mark[m->jnt_dofadr[j] + i] = 1;
      } else if (m->wrap_geom[e] >= 0) {
        mark_path(m, s->mark, m->geom_body[m->wrap_geom[e]]);
        if (m->wrap_obj[e] >= 0) mark_path(m, s->mark, m->site_body[m->wrap_obj[e]]); /* a side site */
      } else if (m->wrap_geom[e] == -1) {
        mark_path(m, s->mark, m->site_body[m->wrap_obj[e]]);
      }
    }
  } else if (m->act_trntype[a] == GRIT_TRN_SITE) {
    mark_path(m, s->mark, m->site_body[m->act_site[a]]);
  } else { /* slider-crank */
    mark_path(m, s->mark, m->site_body[m->act_crank[2 * a]]);
    mark_path(m, s->mark, m->site_body[m->act_crank[2 * a + 1]]);
  }
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (s->mark[adr + i]) s->nz[s->ptr[a] + k++] = i;
  s->nnz[a] = k;
}

grit_deriv_tendon *grit_deriv_tendon_layout(const grit_model *m, grit_carver *c) {
  grit_deriv_tendon measure, *const out = grit_carve(c, 1, sizeof *out); /* zeroed by the calloc */
  grit_deriv_tendon *s = out ? out : &measure;
  const int nu = m->nu;
  long cap = 0;
  for (int a = 0; a < nu; ++a)
    if (grit_actuator_has_length_fn(m, a)) cap += m->tree_dofnum[m->dof_tree[m->act_dof[a]]];
  GRIT_CARVE(c, s->ptr, nu + 1);
  GRIT_CARVE(c, s->L, nu);
  GRIT_CARVE(c, s->J, cap);
  GRIT_CARVE(c, s->L0, nu);
  GRIT_CARVE(c, s->J0, cap);
  GRIT_CARVE(c, s->nz, cap);
  GRIT_CARVE(c, s->nnz, nu);
  GRIT_CARVE(c, s->nz0, cap);
  GRIT_CARVE(c, s->nnz0, nu);
  GRIT_CARVE(c, s->mark, m->nv);
  GRIT_CARVE(c, s->use0, nu);
  GRIT_CARVE(c, s->c0v, cap);
  GRIT_CARVE(c, s->c0d, cap);
  GRIT_CARVE(c, s->c0_ok, nu);
  GRIT_CARVE(c, s->c0s, cap > 0 ? m->nv : 0);
  GRIT_CARVE(c, s->nw, cap > 0 ? grit_deriv_tendon_narrow_size(m) / sizeof(double) + 1 : 0);
  if (out) {
    int p = 0;
    for (int a = 0; a < nu; ++a) {
      s->ptr[a] = p;
      if (grit_actuator_has_length_fn(m, a)) p += m->tree_dofnum[m->dof_tree[m->act_dof[a]]], s->any = 1;
      if (grit_actuator_has_length_fn(m, a)) structure(m, s, a);
    }
    s->ptr[nu] = p;
    s->avx2 = grit_deriv_tendon_fns_avx2();
    s->narrow_ok = grit_deriv_tendon_narrow_wide_ok(sizeof(grit_dual), sizeof(grit_kin_dual));
  }
  return out;
}

static grit_dual fixed_row(const grit_model *m, const grit_dual *q, int t, grit_dual *J, const int *nz, int nnz, int adr,
                           int n) {
  return grit_deriv_tendon_fixed_row_in(m, q, t, J, nz, nnz, adr, n);
}

static const grit_deriv_tendon_fns BASE = {grit_actuator_length_jacobian_dual, grit_actuator_tendon_apply_dual,
                                            grit_cx_rows_cols_dual, fixed_row, grit_actuator_force_list_dual};

/* The AVX2 compilation where the call's contact functions are the AVX2 ones (the processor has it and
 * it is allowed), else the baseline. */
static const grit_deriv_tendon_fns *fns(const grit_deriv_ws *w) {
  return w->tn->avx2 && w->fx != grit_deriv_dual_fns_get(0) ? w->tn->avx2 : &BASE;
}

const grit_deriv_tendon_fns *grit_deriv_tendon_fns_of(const grit_deriv_ws *w) { return fns(w); }

void grit_deriv_tendon_next(grit_deriv_ws *w, int kin_all) {
  w->tn->fresh = 0;
  if (kin_all) w->tn->ok0 = 0;
}

/* Whether x is not an exact zero (NaN too: kept, so its terms carry it as before). */
static int nonzero(const grit_dual *x) {
  int nz = x->v != 0.0;
  GRIT_DUAL_FOR(l) nz |= x->d[l] != 0.0;
  return nz;
}

/* Whether this evaluation's seeds of dq0 reach actuator a's L and J: a seed on one of its structural
 * dofs (the paths of its bodies; a fixed tendon's joints). Nothing else the passes seed moves them
 * (masses and contact parameters do not move positions), so where none is seeded their partials are
 * exact zeros and their values the call's. */
static int moved(const grit_model *m, const grit_deriv_ws *w, int a) {
  const grit_deriv_tendon *s = w->tn;
  const int adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]];
  for (int k = 0; k < s->nnz[a]; ++k) {
    const grit_dual *x = &w->dq[adr + s->nz[s->ptr[a] + k]];
    uint64_t u = 0; /* some partial not +-0 (NaN included): the bits or-ed, the signs dropped once (as
                     * derivatives_smooth.c's seeded; eight comparisons and or-s cost more) */
    for (int l = 0; l < GRIT_DUAL_N; ++l) {
      uint64_t b;
      memcpy(&b, &x->d[l], sizeof b);
      u |= b;
    }
    if (u << 1) return 1;
  }
  return 0;
}

/* A fixed tendon's kept values (as below): its entries off the structural ones are exact zeros (+0,
 * partials +0), left out there by their zero value; nz increasing, so nz0 in the same order. */
static void keep_fixed(grit_deriv_tendon *s, int a, grit_dual L, const grit_dual *J) {
  const int p = s->ptr[a];
  int k0 = 0;
  for (int k = 0; k < s->nnz[a]; ++k) {
    const int i = s->nz[p + k];
    if (J[p + i].v != 0.0) {
      s->J0[p + i] = grit_dual_const(J[p + i].v);
      s->nz0[p + k0++] = i;
    }
  }
  s->L0[a] = grit_dual_const(L.v);
  s->nnz0[a] = k0;
}

/* L and J of every length-fn actuator at w->kin, w->q (dual): into L and the entries nz of J (position
 * passes; with keep, their values also into the call's constants L0, J0 and J0's nonzero entries into
 * nz0; without, the actuators the seeds do not move take the constants: s->use0), or, with nz NULL,
 * into L0, J0 and nz0 as they are (no position pass kept them: q0 and the kinematics are constants,
 * partials zero as in the old evaluation). */
static void evaluate(const grit_model *m, grit_deriv_ws *w, grit_dual *L, grit_dual *J, const int *nz, int keep) {
  grit_deriv_tendon *s = w->tn;
  const grit_deriv_tendon_fns *f = fns(w);
  grit_dual *Jd = w->scratch;
  int narrow = -1; /* the four-lane evaluation: not tried yet (-1), not possible (0), ready (1) */
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a)) continue;
    const int adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]], n = s->ptr[a + 1] - s->ptr[a], p = s->ptr[a];
    if (nz) s->use0[a] = !keep && !s->no_skip && !moved(m, w, a);
    if (nz && s->use0[a]) continue;
    /* a spatial tendon (its wrapping geometry: the costly evaluations) on four lanes when the inputs'
     * partials lie within them (a position pass of at most four seeds); the copies cost more than a
     * slider-crank's or a site's evaluation saves */
    const int spatial = m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[m->act_tendon[a]] != GRIT_TENDON_FIXED;
    if (nz && !s->no_fixed && m->act_trntype[a] == GRIT_TRN_TENDON && !spatial) { /* s->no_fixed: as below */
      L[a] = f->fixed_row(m, w->q, m->act_tendon[a], J + p, nz + p, s->nnz[a], adr, n);
      s->fixed_rows++;
      if (keep) keep_fixed(s, a, L[a], J);
      continue;
    }
    if (narrow < 0 && spatial)
      narrow = nz && s->narrow_ok && !s->no_narrow && grit_deriv_tendon_narrow_begin(m, &w->kin, w->q, s->nw);
    if (narrow > 0 && spatial) grit_deriv_tendon_narrow_eval(m, s->nw, a, &L[a], Jd), s->narrow_evals++;
    else L[a] = f->length_jacobian(m, &w->kin, w->q, a, Jd, w->scratch + m->nv);
    if (nz)
      for (int k = 0; k < s->nnz[a]; ++k) J[p + nz[p + k]] = Jd[adr + nz[p + k]];
    if (!keep) continue;
    int k0 = 0;
    for (int i = 0; i < n; ++i)
      if (nz ? Jd[adr + i].v != 0.0 : nonzero(&Jd[adr + i])) {
        s->J0[p + i] = nz ? grit_dual_const(Jd[adr + i].v) : Jd[adr + i];
        s->nz0[p + k0++] = i;
      }
    s->L0[a] = nz ? grit_dual_const(L[a].v) : L[a];
    s->nnz0[a] = k0;
  }
  if (keep) {
    s->ok0 = 1;
    memset(s->c0_ok, 0, (size_t)m->nu); /* the kept terms follow L0, J0 */
  }
}

/* A position pass's force term of actuator a, which its seeds do not move (use0), added from the call's
 * kept term (grit_deriv_tendon c0), kept by its first such pass: the apply of L0, J0 into entries begun at
 * -0 gives each entry's term exactly, the same in every lane when the inputs' lanes are (else applied each
 * pass, as before). The terms are added as the apply's fma adds them, term + force: the same bits. */
static void add_kept(const grit_model *m, grit_deriv_ws *w, const grit_deriv_tendon_fns *fx, int a, double h,
                     grit_dual *force) {
  grit_deriv_tendon *s = w->tn;
  const int p = s->ptr[a], nn = s->nnz0[a], adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]], *nz = s->nz0 + p;
  if (!s->c0_ok[a]) {
    for (int k = 0; k < nn; ++k) {
      grit_dual *x = &s->c0s[adr + nz[k]];
      x->v = -0.0;
      GRIT_DUAL_FOR(l) x->d[l] = -0.0;
    }
    fx->apply(m, a, s->L0[a], s->J0 + p, nz, nn, w->v0, w->u, h, s->c0s, NULL);
    int same = 1;
    for (int k = 0; k < nn; ++k) {
      const grit_dual *x = &s->c0s[adr + nz[k]];
      s->c0v[p + k] = x->v, s->c0d[p + k] = x->d[0];
      uint64_t b0, b;
      memcpy(&b0, &x->d[0], sizeof b0);
      GRIT_DUAL_FOR(l) memcpy(&b, &x->d[l], sizeof b), same &= b == b0;
    }
    s->c0_ok[a] = same ? 1 : 2;
  }
  if (s->c0_ok[a] == 2) {
    fx->apply(m, a, s->L0[a], s->J0 + p, nz, nn, w->v0, w->u, h, force, NULL);
    return;
  }
  for (int k = 0; k < nn; ++k) {
    grit_dual *f = &force[adr + nz[k]];
    const double cv = s->c0v[p + k], cd = s->c0d[p + k];
    f->v = cv + f->v;
    GRIT_DUAL_FOR(l) f->d[l] = cd + f->d[l];
  }
  s->c0_adds++;
}

void grit_deriv_tendon_position(const grit_model *m, grit_deriv_ws *w, grit_dual *force, grit_dual *A) {
  grit_deriv_tendon *s = w->tn;
  const double h = m->opt.timestep;
  if (!s->any) return;
  if (s->off) {
    grit_actuator_tendon_dual(m, &w->kin, w->q, w->v0, w->u, h, force, A, w->scratch);
    return;
  }
  const grit_deriv_tendon_fns *fx = fns(w);
  if (!s->fresh) { /* the values are those of every pass of the call: q0's */
    evaluate(m, w, s->L, s->J, s->nz, !s->ok0);
    s->fresh = 1;
  }
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a)) continue;
    if (s->use0[a] && force && !A && !s->no_c0)
      add_kept(m, w, fx, a, h, force);
    else if (s->use0[a])
      fx->apply(m, a, s->L0[a], s->J0 + s->ptr[a], s->nz0 + s->ptr[a], s->nnz0[a], w->v0, w->u, h, force, A);
    else
      fx->apply(m, a, s->L[a], s->J + s->ptr[a], s->nz + s->ptr[a], s->nnz[a], w->v0, w->u, h, force, A);
  }
}

const grit_dual *grit_deriv_tendon_moments(const grit_model *m, grit_deriv_ws *w) {
  grit_deriv_tendon *s = w->tn;
  if (!s->ok0) evaluate(m, w, s->L0, s->J0, NULL, 1);
  return s->J0;
}

void grit_deriv_tendon_const(const grit_model *m, grit_deriv_ws *w, grit_dual *force) {
  grit_deriv_tendon *s = w->tn;
  const double h = m->opt.timestep;
  if (!s->any) return;
  if (s->off) {
    grit_actuator_tendon_dual(m, &w->kin, w->q, w->v0, w->u, h, force, NULL, w->scratch);
    return;
  }
  (void)grit_deriv_tendon_moments(m, w);
  const grit_deriv_tendon_fns *fx = fns(w);
  for (int a = 0; a < m->nu; ++a)
    if (grit_actuator_has_length_fn(m, a))
      fx->apply(m, a, s->L0[a], s->J0 + s->ptr[a], s->nz0 + s->ptr[a], s->nnz0[a], w->v0, w->u,
                                      h, force, NULL);
}

void grit_deriv_tendon_operator_rows(const grit_model *m, grit_deriv_ws *w, int t, const double *v, const double *v0,
                                     grit_dual *r) {
  const grit_deriv_tendon *s = w->tn;
  const double h = m->opt.timestep;
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  for (int a = 0; a < m->nu; ++a) {
    if (!grit_actuator_has_length_fn(m, a) || m->dof_tree[m->act_dof[a]] != t) continue;
    if (m->act_trntype[a] == GRIT_TRN_TENDON && m->ten_type[m->act_tendon[a]] == GRIT_TENDON_FIXED) continue;
    if (!s->off && s->use0[a]) continue; /* J constant in this evaluation: no partials */
    double kq, kv;
    grit_actuator_slopes(m, a, &kq, &kv);
    const double c = h * kv + h * h * kq;
    if (c == 0.0) continue;
    /* this evaluation's L and J: kept over J's structural entries, or (s->off, the old path) evaluated
     * here over the tree (the other entries exact zeros, adding zeros) */
    const int *nz = s->off ? NULL : s->nz + s->ptr[a], cnt = s->off ? n : s->nnz[a];
    const grit_dual *J = s->off ? w->scratch + adr : s->J + s->ptr[a];
    const grit_dual L = s->off ? grit_actuator_length_jacobian_dual(m, &w->kin, w->q, a, w->scratch, w->scratch + m->nv)
                               : s->L[a];
    /* the step's choice of an implicit actuator, from the values as grit_actuator_tendon_apply forms them */
    grit_dual Ld = grit_dual_const(0.0), y = grit_dual_const(0.0);
    for (int k = 0; k < cnt; ++k) Ld = grit_dual_fma(J[nz ? nz[k] : k], w->v0[adr + (nz ? nz[k] : k)], Ld);
    const double g = m->act_gear[a];
    if (!grit_actuator_implicit_at(m, a, grit_dual_scale(L, g).v, grit_dual_scale(Ld, g).v, w->u[a].v)) continue;
    for (int k = 0; k < cnt; ++k) {
      const int i = nz ? nz[k] : k;
      y = grit_dual_fma(J[i], grit_dual_const(v[adr + i] - v0[adr + i]), y);
    }
    for (int k = 0; k < cnt; ++k) {
      const int i = nz ? nz[k] : k;
      r[adr + i] = grit_dual_fma(grit_dual_scale(J[i], c), y, r[adr + i]);
    }
  }
}
