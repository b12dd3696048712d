/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_smooth.c — the smooth force's partials with respect to v0 and u, once per call.
 *
 * The velocity and control passes of grit_step_derivatives seed GRIT_DUAL_N columns of v0 or u per pass
 * (all trees sharing the directions) and used to re-evaluate the dual smooth force over every dof in
 * each: on a 62-dof humanoid fifteen evaluations per call. But the force's partials in v0 and u are
 * very sparse: damping, a spring's predicted stretch and a joint actuator act on their own dof; a
 * tendon, slider-crank or site actuator a couples the dofs where its moment J_a(q0) is nonzero (one
 * tree, grit_actuator_compile_tendons); its input u_a reaches those rows only. So column v0_k reaches
 * row k and the supports of the length-fn actuators whose support holds k, column u_a its
 * transmission's rows. Columns with no row in common share a dual direction (Curtis-Powell-Reid): a
 * greedy colouring, then one dual evaluation of the force per GRIT_DUAL_N colours gives every column
 * (the humanoid's: two colours, one evaluation). The passes add the stored columns times their seeds.
 *
 * Exact: a partial of the force along a lane is the sum over the lane's seeded columns of their
 * partials, and a zero of J_a at q0 (constant in these passes) gives exactly zero partials, so the
 * rows left out are exact zeros; the sums differ from the old evaluation in their order only
 * (round-off). Left to the passes, as before: the bias (rigid-body and fluid forces: derivatives_rnea.c
 * or the dual Newton-Euler pass) and adhesion (its controls reach the contacts' partner trees). */
#include "derivatives_smooth.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "actuation.h"
#include "actuation_muscle.h"
#include "derivatives_internal.h"
#include "derivatives_tendon.h"
#include "dynamics.h"

enum { LEN_C = 11 }; /* a listed actuator's cached scalars (len_c): see joint_actuator_form */

/* Whether actuator a's force is in grit_actuator_tendon (a moment J(q0) over its tree's dofs). */
static int length_fn(const grit_model *m, int a) { return grit_actuator_has_length_fn(m, a); }

grit_deriv_smooth *grit_deriv_smooth_layout(const grit_model *m, int maxn, grit_carver *c) {
  const int nv = m->nv, nu = m->nu;
  grit_deriv_smooth measure, *const out = grit_carve(c, 1, sizeof *out); /* zeroed by the calloc: off, not valid */
  grit_deriv_smooth *s = out ? out : &measure;
  long cap = 0, cap_sup = 0;
  for (int t = 0; t < m->ntree; ++t) { /* a v0 column's rows lie in its tree */
    const long n = m->tree_dofnum[t];
    cap += grit_actuator_tendon_on_tree(m, t) ? n * n : n;
  }
  for (int a = 0; a < nu; ++a) {
    const long n = length_fn(m, a) ? m->tree_dofnum[m->dof_tree[m->act_dof[a]]] : 1;
    cap += n;
    cap_sup += length_fn(m, a) ? n : 0;
  }
  s->cap = (int)cap;
  s->cap_sup = (int)cap_sup;
  s->nword = (maxn + nu) / 64 + 1; /* a row meets at most its tree's v0 columns and the u columns */
  GRIT_CARVE(c, s->ptr, nv + nu + 1);
  GRIT_CARVE(c, s->row, cap);
  GRIT_CARVE(c, s->val, cap);
  GRIT_CARVE(c, s->colour, nv + nu);
  GRIT_CARVE(c, s->value, nv);
  GRIT_CARVE(c, s->sup_ptr, nu + 1);
  GRIT_CARVE(c, s->sup, cap_sup);
  GRIT_CARVE(c, s->sup_ptr0, nu + 1);
  GRIT_CARVE(c, s->sup0, cap_sup);
  GRIT_CARVE(c, s->stamp, nv);
  GRIT_CARVE(c, s->hold_ptr, nv + 1);
  GRIT_CARVE(c, s->hold, cap_sup);
  GRIT_CARVE(c, s->used, (size_t)nv * (size_t)s->nword);
  GRIT_CARVE(c, s->len, nu);
  GRIT_CARVE(c, s->joint, nu);
  s->njoint = 0;
  for (int a = 0; out && a < nu; ++a)
    if (m->act_trntype[a] == GRIT_TRN_JOINT) s->joint[s->njoint++] = a;
  GRIT_CARVE(c, s->len_c, LEN_C * nu);
  GRIT_CARVE(c, s->len_f, nu);
  s->nlen = 0;
  for (int a = 0; out && a < nu; ++a)
    if (m->act_trntype[a] == GRIT_TRN_JOINT && grit_actuator_reads_length(m, a)) s->len[s->nlen++] = a;
  grit_fluid_partials_layout(m, &s->fl, c);
  return out;
}

/* Each length-fn actuator's support: the dofs of its tree where its moment J (at the constant
 * kinematics of the passes) is not zero. */
static void supports(const grit_model *m, grit_deriv_ws *w) {
  grit_deriv_smooth *s = w->sm;
  grit_dual *J = w->scratch;
  const int kept = !w->tn->off && grit_deriv_tendon_moments(m, w); /* J's nonzero entries kept by the call */
  int ns = 0;
  s->sup_ptr[0] = 0;
  for (int a = 0; a < m->nu; ++a) {
    if (length_fn(m, a) && kept) {
      const int adr = m->tree_dofadr[m->dof_tree[m->act_dof[a]]], *nz = w->tn->nz0 + w->tn->ptr[a];
      for (int k = 0; k < w->tn->nnz0[a]; ++k) s->sup[ns++] = adr + nz[k];
    } else if (length_fn(m, a)) {
      const int t = m->dof_tree[m->act_dof[a]], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
      grit_actuator_length_jacobian_dual(m, &w->kin, w->q, a, J, w->scratch + m->nv);
      for (int i = adr; i < adr + n; ++i) {
        int nz = J[i].v != 0.0; /* NaN too: listed, its column carries it as before */
        GRIT_DUAL_FOR(l) nz |= J[i].d[l] != 0.0;
        if (nz) s->sup[ns++] = i;
      }
    }
    s->sup_ptr[a + 1] = ns;
  }
}

/* Whether the supports are those the pattern and colours were formed for. */
static int same_supports(const grit_model *m, const grit_deriv_smooth *s) {
  if (!s->valid) return 0;
  for (int a = 0; a <= m->nu; ++a)
    if (s->sup_ptr[a] != s->sup_ptr0[a]) return 0;
  for (int k = 0; k < s->sup_ptr[m->nu]; ++k)
    if (s->sup[k] != s->sup0[k]) return 0;
  return 1;
}

/* Appends the rows sup[0 .. n-1] to column c (entries from *p), once each. */
static void add_rows(grit_deriv_smooth *s, int c, const int *rows, int n, int *p) {
  for (int k = 0; k < n; ++k)
    if (s->stamp[rows[k]] != c) {
      s->stamp[rows[k]] = c;
      s->row[(*p)++] = rows[k];
    }
}

/* Each dof's length-fn actuators whose support holds it, in actuator order, once each (hold_ptr,
 * hold): the supports inverted by counting, O(their entries), where a search of every support for
 * every dof cost nv x nu (22 humanoids: 3 M instructions, a fifth of the call that forms the pattern). */
static void holders(const grit_model *m, grit_deriv_smooth *s) {
  const int nv = m->nv, nu = m->nu;
  for (int i = 0; i <= nv; ++i) s->hold_ptr[i] = 0;
  for (int i = 0; i < nv; ++i) s->stamp[i] = -1;
  for (int a = 0; a < nu; ++a)
    for (int j = s->sup_ptr[a]; j < s->sup_ptr[a + 1]; ++j)
      if (s->stamp[s->sup[j]] != a) s->stamp[s->sup[j]] = a, s->hold_ptr[s->sup[j] + 1]++;
  for (int i = 0; i < nv; ++i) s->hold_ptr[i + 1] += s->hold_ptr[i];
  for (int i = 0; i < nv; ++i) s->stamp[i] = -1;
  for (int a = 0; a < nu; ++a) /* hold_ptr[k] runs to k's end, then is moved back */
    for (int j = s->sup_ptr[a]; j < s->sup_ptr[a + 1]; ++j)
      if (s->stamp[s->sup[j]] != a) s->stamp[s->sup[j]] = a, s->hold[s->hold_ptr[s->sup[j]]++] = a;
  for (int i = nv; i > 0; --i) s->hold_ptr[i] = s->hold_ptr[i - 1];
  s->hold_ptr[0] = 0;
}

/* The columns' rows: v0_k its own dof and the supports holding it (in actuator order: the rows in the
 * order of a search of every support; s->no_holders: that search); u_a its transmission's. */
static void pattern(const grit_model *m, grit_deriv_smooth *s) {
  const int nv = m->nv, nu = m->nu;
  if (!s->no_holders) holders(m, s);
  for (int i = 0; i < nv; ++i) s->stamp[i] = -1;
  int p = 0;
  for (int k = 0; k < nv; ++k) {
    s->ptr[k] = p;
    add_rows(s, k, &k, 1, &p);
    for (int e = s->hold_ptr[k]; !s->no_holders && e < s->hold_ptr[k + 1]; ++e) {
      const int a = s->hold[e];
      add_rows(s, k, s->sup + s->sup_ptr[a], s->sup_ptr[a + 1] - s->sup_ptr[a], &p);
    }
    for (int a = 0; s->no_holders && a < nu; ++a) {
      const int *sa = s->sup + s->sup_ptr[a], na = s->sup_ptr[a + 1] - s->sup_ptr[a];
      for (int j = 0; j < na; ++j)
        if (sa[j] == k) {
          add_rows(s, k, sa, na, &p);
          break;
        }
    }
  }
  for (int a = 0; a < nu; ++a) {
    const int c = nv + a;
    s->ptr[c] = p;
    if (m->act_trntype[a] == GRIT_TRN_JOINT) add_rows(s, c, &m->act_dof[a], 1, &p);
    else add_rows(s, c, s->sup + s->sup_ptr[a], s->sup_ptr[a + 1] - s->sup_ptr[a], &p);
  }
  s->ptr[nv + nu] = p;
}

/* Greedy colouring: each column takes the least colour none of its rows has yet. */
static void colour(const grit_model *m, grit_deriv_smooth *s) {
  const int ncol = m->nv + m->nu, nw = s->nword;
  memset(s->used, 0, sizeof *s->used * (size_t)m->nv * (size_t)nw);
  s->ncolour = 0;
  for (int c = 0; c < ncol; ++c) {
    s->colour[c] = -1;
    if (s->ptr[c] == s->ptr[c + 1]) continue;
    for (int k = 0; k < nw && s->colour[c] < 0; ++k) {
      uint64_t taken = 0;
      for (int p = s->ptr[c]; p < s->ptr[c + 1]; ++p) taken |= s->used[(size_t)s->row[p] * nw + k];
      for (int b = 0; b < 64; ++b)
        if (!(taken >> b & 1u)) {
          s->colour[c] = 64 * k + b;
          break;
        }
    }
    /* always found: a row's colours number at most its conflicts, fewer than 64 nword */
    const int col = s->colour[c];
    for (int p = s->ptr[c]; p < s->ptr[c + 1]; ++p) s->used[(size_t)s->row[p] * nw + col / 64] |= (uint64_t)1 << (col % 64);
    if (col + 1 > s->ncolour) s->ncolour = col + 1;
  }
}

/* The seed of column c in lane l (v0's columns, then u's). */
static void seed(const grit_model *m, grit_deriv_ws *w, int c, int l, double x) {
  if (c < m->nv) w->v0[c].d[l] = x;
  else w->u[c - m->nv].d[l] = x;
}

/* The force without the bias, on dual numbers (the old path's two calls, bias zero). */
static void passive(const grit_model *m, grit_deriv_ws *w, const grit_dual *bias);

static void force_dual(const grit_model *m, grit_deriv_ws *w, const grit_dual *bias) {
  const double h = m->opt.timestep;
  /* grit_smooth_force_dual's operations: the passive forces four lanes a vector, the joint actuators in
   * the call's compilation (AVX2 or baseline: the same bits) */
  passive(m, w, bias);
  grit_deriv_tendon_fns_of(w)->force_list(m, w->sm->joint, w->sm->njoint, w->q, w->v0, w->u, h, w->force);
  grit_deriv_tendon_const(m, w, w->force); /* tendon actuators: L, J kept by the call (derivatives_tendon.c) */
}

void grit_deriv_smooth_prepare(const grit_model *m, grit_deriv_ws *w) {
  grit_deriv_smooth *s = w->sm;
  const int nv = m->nv, ncol = m->nv + m->nu;
  s->on = 0;
  if (w->no_smooth > 0) return;
  /* worth it when its evaluations are fewer than the passes' (each evaluated the force once: the
   * velocity passes' ceil(maxn / N), the control passes' ceil(most actuators of a tree / N)) by two:
   * adding the stored columns in a pass costs about half an evaluation (measured on the arm with
   * the ball: 1.2 k instructions against 2.6 k, and 2.1 k to prepare) */
  int most = 0;
  for (int t = 0; t < m->ntree; ++t) most = w->act_ptr[t + 1] - w->act_ptr[t] > most ? w->act_ptr[t + 1] - w->act_ptr[t] : most;
  const int npass = (w->maxn + GRIT_DUAL_N - 1) / GRIT_DUAL_N + (most + GRIT_DUAL_N - 1) / GRIT_DUAL_N;
  if (w->no_smooth == 0 && npass < 3) return; /* the swimmer's, the arm's, free bodies' passes: as before */
  for (int i = 0; i < m->nq; ++i) w->q[i] = grit_dual_const(w->q[i].v); /* q0 (+) 0, a constant */
  supports(m, w);
  if (!same_supports(m, s)) { /* the pattern and colours follow the supports alone: kept while they stay */
    pattern(m, s);
    colour(m, s);
    memcpy(s->sup_ptr0, s->sup_ptr, sizeof *s->sup_ptr * (size_t)(m->nu + 1));
    memcpy(s->sup0, s->sup, sizeof *s->sup * (size_t)s->sup_ptr[m->nu]);
    s->valid = 1;
  }
  const int neval = s->ncolour > GRIT_DUAL_N ? (s->ncolour + GRIT_DUAL_N - 1) / GRIT_DUAL_N : 1;
  if (w->no_smooth == 0 && neval + 2 > npass) return;
  for (int i = 0; i < nv; ++i) w->tmp[i] = grit_dual_const(0.0);
  for (int e = 0; e == 0 || e * GRIT_DUAL_N < s->ncolour; ++e) {
    for (int c = 0; c < ncol; ++c)
      if (s->colour[c] >= 0 && s->colour[c] / GRIT_DUAL_N == e) seed(m, w, c, s->colour[c] % GRIT_DUAL_N, 1.0);
    force_dual(m, w, w->tmp);
    if (e == 0)
      for (int i = 0; i < nv; ++i) s->value[i] = w->force[i].v;
    for (int c = 0; c < ncol; ++c) {
      if (s->colour[c] < 0 || s->colour[c] / GRIT_DUAL_N != e) continue;
      const int l = s->colour[c] % GRIT_DUAL_N;
      for (int p = s->ptr[c]; p < s->ptr[c + 1]; ++p) s->val[p] = w->force[s->row[p]].d[l];
      seed(m, w, c, l, 0.0);
    }
  }
  s->on = 1;
}

/* Four partials a vector (GRIT_DUAL_N is a multiple of 4): native in the AVX2 compilation below, two
 * SSE2 halves in the baseline one. Element-wise IEEE operations either way, nothing fused. */
typedef double lanes4 __attribute__((vector_size(32)));
typedef double lanes4u __attribute__((vector_size(32), aligned(8), may_alias)); /* a dual's partials, unaligned */
#define LANES4(l) for (int l = 0; l < GRIT_DUAL_N; l += 4)
_Static_assert(GRIT_DUAL_N % 4 == 0, "the position pass's lanes go four at a time");
/* (macros, not functions: a function passing these vectors warns of the ABI outside AVX) */
#define ld4(p) (*(const lanes4u *)(p))
#define st4(p, x) (*(lanes4u *)(p) = (x))
#define sp4(x) ((lanes4){(x), (x), (x), (x)})

/* grit_smooth_force_passive_dual where only q0 is seeded: -D v0 subtracts v0's partials times D >= 0,
 * +0 each, and x - (+0) is x bit for bit, so the first term's partials are -bias's (a negative D: as
 * there); the springs as there. Each dual operation written out on the partials, the same IEEE
 * operations in the same order as grit/dual.h's (-a: -1.0 * a.d; fma(a, C(c), b): a.d * c + a.v * 0.0
 * + b.d; scale(a, c): c * a.d), four lanes a vector where dual.h's pairs took two in this file. */
/* With full (any seeds: grit_smooth_force_passive_dual itself), bias as given, every dof's damping term. */
static inline __attribute__((always_inline)) void passive_in(const grit_model *m, grit_deriv_ws *w, const grit_dual *bias,
                                                             int full) {
  const double h = m->opt.timestep, *damping = m->dof_damping;
  const grit_dual *v0 = w->v0; /* (held: the stores below may alias w) */
  grit_dual *force = w->force;
  for (int i = 0, nv = m->nv; i < nv; ++i) {
    const grit_dual *b = &bias[i], *v = &v0[i];
    grit_dual *f = &force[i];
    const double D = damping[i];
    f->v = -b->v - v->v * D;
    if (full || !(D >= 0.0)) { /* sub(neg(bias), scale(v0, D)) */
      LANES4(l) st4(f->d + l, sp4(-1.0) * ld4(b->d + l) - sp4(D) * ld4(v->d + l));
      continue;
    }
    LANES4(l) st4(f->d + l, sp4(-1.0) * ld4(b->d + l));
  }
  const grit_dual *q0 = w->q;
  const double *stiffness = m->jnt_stiffness;
  for (int j = 0, nj = m->njnt; j < nj; ++j) {
    const double k = stiffness[j];
    if (k == 0.0) continue;
    const int d = m->jnt_dofadr[j];
    const grit_dual *v = &v0[d], *q = &q0[m->jnt_qposadr[j]];
    grit_dual *f = &force[d];
    /* f - k ((v0 h + q) - ref): fma(v0, C(h), q), addc, scale, sub */
    const double z = v->v * 0.0;
    f->v = f->v - ((v->v * h + q->v) + -m->jnt_springref[j]) * k;
    LANES4(l) st4(f->d + l, ld4(f->d + l) - sp4(k) * ((ld4(v->d + l) * sp4(h) + sp4(z)) + ld4(q->d + l)));
  }
}

/* The dual clamp of grit/dual.h (fmax(f, C(lo)) or, with upper, fmin(f, C(hi))) on a force (*fv, fd). */
static inline __attribute__((always_inline)) void clamp_lanes(double *fv, double *fd, double c, int upper) {
  if (isnan(c)) return;
  if (!isnan(*fv) && (upper ? *fv < c : *fv > c)) return;
  if (isnan(*fv) || (upper ? c < *fv : c > *fv)) { /* the constant */
    *fv = c;
    for (int l = 0; l < GRIT_DUAL_N; ++l) fd[l] = 0.0;
    return;
  }
  for (int l = 0; l < GRIT_DUAL_N; ++l) fd[l] = 0.5 * (fd[l] + 0.0); /* equal: the mean of the partials */
}

/* A position pass's term of joint actuator a whose gain and bias are fixed or affine (no muscle):
 * grit_actuator_force_some_dual's (actuation_generic.h: actuator_raw, the implicit stiffness at the
 * predicted length, the clamp of a saturated one, the gear's fma) with each dual operation written out
 * on the partials in the same order, the same bits: scale(x, c) is c * x.d, mul(a, b) is a.d * b.v +
 * a.v * b.d, a constant's partials +0. */
static inline __attribute__((always_inline)) void joint_actuator_in(const grit_model *m, grit_deriv_ws *w, int a,
                                                                    double h) {
  const int d = m->act_dof[a], qa = m->jnt_qposadr[m->act_jnt[a]];
  const double g = m->act_gear[a], *gp = m->act_gainprm + 3 * a, *bp = m->act_biasprm + 3 * a;
  const int gaff = m->act_gaintype[a] == GRIT_GAIN_AFFINE, baff = m->act_biastype[a] == GRIT_BIAS_AFFINE;
  const grit_dual *q = &w->q[qa], *v = &w->v0[d], *u = &w->u[a];
  grit_dual *F = &w->force[d];
  double fd[GRIT_DUAL_N];
  const double lv = q->v * g, vv = v->v * g, gv = gaff ? (lv * gp[1] + vv * gp[2]) + gp[0] : gp[0];
  double fv = gv * u->v;
  if (baff) fv = fv + ((lv * bp[1] + vv * bp[2]) + bp[0]);
  const int implicit = grit_actuator_implicit(m, a, q->v, v->v, u->v);
  const int stiff = implicit && baff && bp[1] < 0.0; /* the stiffness at the predicted length */
  const double hb = h * bp[1];
  if (stiff) fv = fv + vv * hb;
  LANES4(l) {
    const lanes4 lend = sp4(g) * ld4(q->d + l), veld = sp4(g) * ld4(v->d + l);
    const lanes4 gaind = gaff ? sp4(gp[1]) * lend + sp4(gp[2]) * veld : sp4(0.0);
    lanes4 f = gaind * sp4(u->v) + sp4(gv) * ld4(u->d + l);
    if (baff) f = f + (sp4(bp[1]) * lend + sp4(bp[2]) * veld);
    if (stiff) f = f + sp4(hb) * veld;
    st4(fd + l, f);
  }
  if (!implicit && m->act_forcelimited[a]) { /* saturated (or explicit_actuation): clamped */
    clamp_lanes(&fv, fd, m->act_forcerange[2 * a], 0);
    clamp_lanes(&fv, fd, m->act_forcerange[2 * a + 1], 1);
  }
  const double z = fv * 0.0;
  F->v = fv * g + F->v;
  LANES4(l) st4(F->d + l, (ld4(fd + l) * sp4(g) + sp4(z)) + ld4(F->d + l));
}

/* Listed actuator a's form and scalars for this call's position passes, whose values (q0, v0, u) stay:
 * c = {g, gp1, gp2, u, gain, bp1, bp2, h bp1, f 0.0, f g} as joint_actuator_in forms them, its force f
 * before the gear; 0 (no cache) for a muscle or a clamped actuator (joint_actuator_in or the dual each
 * pass). */
static int joint_actuator_form(const grit_model *m, const grit_deriv_ws *w, int a, double h, double *c) {
  if (m->act_gaintype[a] == GRIT_GAIN_MUSCLE || m->act_biastype[a] == GRIT_BIAS_MUSCLE) return 0;
  const int d = m->act_dof[a], qa = m->jnt_qposadr[m->act_jnt[a]];
  const double g = m->act_gear[a], *gp = m->act_gainprm + 3 * a, *bp = m->act_biasprm + 3 * a;
  const int gaff = m->act_gaintype[a] == GRIT_GAIN_AFFINE, baff = m->act_biastype[a] == GRIT_BIAS_AFFINE;
  const double qv = w->q[qa].v, v0 = w->v0[d].v, uv = w->u[a].v;
  const int implicit = grit_actuator_implicit(m, a, qv, v0, uv);
  if (!implicit && m->act_forcelimited[a]) return 0;
  const double lv = qv * g, vv = v0 * g, gv = gaff ? (lv * gp[1] + vv * gp[2]) + gp[0] : gp[0];
  double fv = gv * uv;
  if (baff) fv = fv + ((lv * bp[1] + vv * bp[2]) + bp[0]);
  const int stiff = implicit && baff && bp[1] < 0.0;
  const double hb = h * bp[1];
  if (stiff) fv = fv + vv * hb;
  c[0] = g, c[1] = gp[1], c[2] = gp[2], c[3] = uv, c[4] = gv, c[5] = bp[1], c[6] = bp[2], c[7] = hb;
  c[8] = fv * 0.0, c[9] = fv * g;
  /* a pass that does not seed its joint (q0's partials +0) with each of v0's and u's partials the same in
   * every lane (unseeded: position passes seed q0 alone) computes the same term t0 in every lane: kept,
   * the lanes' operations on one of them (bit 16); where the call has three position passes or more (a
   * tree of more than 2 GRIT_DUAL_N dofs: fewer leave the actuator unseeded in too few to repay it) */
  if (w->maxn <= 2 * GRIT_DUAL_N) return 8 | gaff | baff << 1 | stiff << 2;
  const double *vd = w->v0[d].d, *ud = w->u[a].d;
  uint64_t bv[GRIT_DUAL_N], bu[GRIT_DUAL_N], diff = 0;
  memcpy(bv, vd, sizeof bv);
  memcpy(bu, ud, sizeof bu);
  for (int l = 1; l < GRIT_DUAL_N; ++l) diff |= (bv[l] ^ bv[0]) | (bu[l] ^ bu[0]);
  if (diff) return 8 | gaff | baff << 1 | stiff << 2;
  const double lend = g * 0.0, veld = g * vd[0], gaind = gaff ? gp[1] * lend + gp[2] * veld : 0.0;
  double f = gaind * uv + gv * ud[0];
  if (baff) f = f + (bp[1] * lend + bp[2] * veld);
  if (stiff) f = f + hb * veld;
  c[10] = f * g + c[8];
  return 16 | 8 | gaff | baff << 1 | stiff << 2;
}

/* Whether all of x's partials are +0 (bits zero). */
static inline __attribute__((always_inline)) int plus_zeros(const grit_dual *x) {
  uint64_t u = 0;
  for (int l = 0; l < GRIT_DUAL_N; ++l) {
    uint64_t b;
    memcpy(&b, &x->d[l], sizeof b);
    u |= b;
  }
  return u == 0;
}

/* joint_actuator_in from its cached form (joint_actuator_form): the same operations on the partials. */
static inline __attribute__((always_inline)) void joint_actuator_cached(const grit_model *m, grit_deriv_ws *w, int a,
                                                                        int form, const double *c) {
  const int d = m->act_dof[a];
  const grit_dual *q = &w->q[m->jnt_qposadr[m->act_jnt[a]]], *v = &w->v0[d], *u = &w->u[a];
  grit_dual *F = &w->force[d];
  F->v = c[9] + F->v;
  if (form & 16 && plus_zeros(q)) { /* its joint not seeded: the kept term (joint_actuator_form) */
    LANES4(l) st4(F->d + l, sp4(c[10]) + ld4(F->d + l));
    return;
  }
  LANES4(l) {
    const lanes4 lend = sp4(c[0]) * ld4(q->d + l), veld = sp4(c[0]) * ld4(v->d + l);
    const lanes4 gaind = form & 1 ? sp4(c[1]) * lend + sp4(c[2]) * veld : sp4(0.0);
    lanes4 f = gaind * sp4(c[3]) + sp4(c[4]) * ld4(u->d + l);
    if (form & 2) f = f + (sp4(c[5]) * lend + sp4(c[6]) * veld);
    if (form & 4) f = f + sp4(c[7]) * veld;
    st4(F->d + l, (f * sp4(c[0]) + sp4(c[8])) + ld4(F->d + l));
  }
}

/* A position pass's smooth force without the tendon actuators: the passive forces, then the joint
 * actuators that read their length in model order (the others add constants), a muscle on duals in the
 * call's compilation (AVX2 or baseline: the same bits). */
static inline __attribute__((always_inline)) void positions_in(const grit_model *m, grit_deriv_ws *w) {
  const double h = m->opt.timestep;
  grit_deriv_smooth *s = w->sm;
  passive_in(m, w, w->bias, 0);
  for (int k = 0; k < s->nlen; ++k) {
    const int a = s->len[k];
    if (s->len_f[k])
      joint_actuator_cached(m, w, a, s->len_f[k], s->len_c + LEN_C * k);
    else if (m->act_gaintype[a] == GRIT_GAIN_MUSCLE || m->act_biastype[a] == GRIT_BIAS_MUSCLE)
      grit_deriv_tendon_fns_of(w)->force_list(m, s->len + k, 1, w->q, w->v0, w->u, h, w->force);
    else
      joint_actuator_in(m, w, a, h);
  }
}

/* positions_in compiled once more for AVX2 where the processor has it: the lanes four a vector, the
 * same operations (nothing fused: -ffp-contract=off), the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
__attribute__((target("avx2"))) static void positions_avx2(const grit_model *m, grit_deriv_ws *w) { positions_in(m, w); }
#define SMOOTH_AVX2 1
#else
#define SMOOTH_AVX2 0
#endif

#if SMOOTH_AVX2
__attribute__((target("avx2"))) static void passive_avx2(const grit_model *m, grit_deriv_ws *w, const grit_dual *bias) {
  passive_in(m, w, bias, 1);
}
#endif

static void passive(const grit_model *m, grit_deriv_ws *w, const grit_dual *bias) {
#if SMOOTH_AVX2
  if (__builtin_cpu_supports("avx2")) {
    passive_avx2(m, w, bias);
    return;
  }
#endif
  passive_in(m, w, bias, 1);
}

static void positions(const grit_model *m, grit_deriv_ws *w) {
#if SMOOTH_AVX2
  if (__builtin_cpu_supports("avx2")) {
    positions_avx2(m, w);
    return;
  }
#endif
  positions_in(m, w);
}

void grit_deriv_smooth_force_positions(const grit_model *m, grit_deriv_ws *w, int positions_only) {
  const double h = m->opt.timestep;
  if (!positions_only || w->no_smooth_q) {
    grit_smooth_force_dual(m, w->q, w->v0, w->u, w->bias, h, w->force);
    grit_deriv_tendon_position(m, w, w->force, NULL); /* tendon actuators (derivatives_tendon.c) */
    return;
  }
  /* the joint actuators that do not read their length add constants (v0 and u unseeded), leaving the
   * partials as they are: 0 g + x is x, bit for bit */
  grit_deriv_smooth *s = w->sm;
  if (!s->len_valid) { /* the first position pass of the call */
    for (int k = 0; k < s->nlen; ++k) s->len_f[k] = joint_actuator_form(m, w, s->len[k], h, s->len_c + LEN_C * k);
    s->len_valid = 1;
  }
  positions(m, w);
  grit_deriv_tendon_position(m, w, w->force, NULL); /* tendon actuators (derivatives_tendon.c) */
}

/* Whether some partial of x is not zero (NaN included): x->d[l] != 0.0 for some l, by the bits of the
 * partials without their signs or-ed (a column's test, every pass: eight comparisons and branches were
 * a third of grit_deriv_smooth_force on the dog). */
static inline __attribute__((always_inline)) int seeded(const grit_dual *x) {
  uint64_t u = 0;
  for (int l = 0; l < GRIT_DUAL_N; ++l) { /* lane by lane from memory (a copy to an array went by the stack) */
    uint64_t b;
    memcpy(&b, &x->d[l], sizeof b);
    u |= b;
  }
  return (u << 1) != 0; /* the signs dropped once: (a | b) << 1 */
}

static inline __attribute__((always_inline)) void smooth_force_in(const grit_model *m, grit_deriv_ws *w, int controls) {
  const grit_deriv_smooth *s = w->sm;
  const int nv = m->nv, c0 = controls ? nv : 0, c1 = controls ? nv + m->nu : nv;
  if (!s->on) {
    force_dual(m, w, w->bias);
    return;
  }
  /* neg(bias) (-1.0 * its partials), its value plus the stored value; then each seeded column's
   * f.d + a x.d: four lanes a vector */
  const grit_dual *bias = w->bias, *v0 = w->v0, *u = w->u; /* (held: the stores below may alias w, s) */
  grit_dual *force = w->force;
  const double *value = s->value, *val = s->val;
  const int *ptr = s->ptr, *row = s->row;
  for (int i = 0; i < nv; ++i) {
    const grit_dual *b = &bias[i];
    grit_dual *f = &force[i];
    f->v = -b->v + value[i];
    LANES4(l) st4(f->d + l, sp4(-1.0) * ld4(b->d + l));
  }
  for (int c = c0; c < c1; ++c) { /* a velocity pass seeds v0 alone, a control pass u alone */
    const grit_dual *x = c < nv ? &v0[c] : &u[c - nv];
    if (!seeded(x)) continue;
    for (int p = ptr[c]; p < ptr[c + 1]; ++p) {
      grit_dual *f = &force[row[p]];
      const double a = val[p];
      LANES4(l) st4(f->d + l, ld4(f->d + l) + sp4(a) * ld4(x->d + l));
    }
  }
}

/* smooth_force_in compiled once more for AVX2 (as positions_in): the same bits. */
#if SMOOTH_AVX2
__attribute__((target("avx2"))) static void smooth_force_avx2(const grit_model *m, grit_deriv_ws *w, int controls) {
  smooth_force_in(m, w, controls);
}
#endif

void grit_deriv_smooth_force(const grit_model *m, grit_deriv_ws *w, int controls) {
#if SMOOTH_AVX2
  if (__builtin_cpu_supports("avx2")) {
    smooth_force_avx2(m, w, controls);
    return;
  }
#endif
  smooth_force_in(m, w, controls);
}
