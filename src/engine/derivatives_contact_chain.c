/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_contact_chain.c — a contact between a body and the world, in the position passes, from one
 * evaluation per call.
 *
 * Such a contact (its law reading no Delassus estimate, J_c never formed: derivatives_residual.c's
 * "jfree" path) adds to its body's wrench W (then projected on the dofs) a function of three inputs
 * only: the body's pose (xpos, xmat), its twist S at the solution and, for the Lagged model, its twist
 * S0 at v0, through v_n0. The full path re-evaluates the geometry, the law and the wrench on dual
 * numbers in every pass that moves the body (3 to 6 per call on the humanoids and the dog). Here the
 * contact is evaluated once per call, with its lanes seeded along the pose's six directions (world
 * translation, world rotation: xmat' = [e]x R) and along v_n0, and its law once more along the three
 * components of v_c. In each pass the lanes' partials of W are then the linear maps applied to the
 * pass's partials of the pose (translation xpos', rotation vee(xmat' R^T)) and of the twists (v_c is
 * sign F^T (S_w x p + S_v), linear in S). The values are the full path's, bit for bit; the partials
 * are the same derivatives in another order (round-off). ws->no_contact_chain: the full path. */
#include <math.h>
#include <string.h>

#include "contact_candidate.h"
#include "data_internal.h"
#include "derivatives_contact_chain.h"
#include "derivatives_chain.h"
#include "derivatives_simd.h"
#include "solver.h"

/* A contact's slot: the wrench's value W (6), its map M (6 x 18: dW along the pose's lanes, the twist S's
 * and the twist S0's), the Lagged lane d gamma/d v_n0 (3), its moving side (1). A body's sum: the sum of
 * its contacts' M. */
enum { C_W = 0, C_M = 6, C_LG = 114, C_SIDE = 117, C_SLOT = 118, NM = 18, C_MSZ = 6 * NM };
enum { LANE_VN0 = 6 }; /* the lane v_n0 is seeded in (after the pose's six) */
_Static_assert(GRIT_DUAL_N >= 7, "the pose's six lanes and v_n0's");

static int cap(const grit_deriv_ws *w) { return w->cap_edges / 2 + 1; }

void grit_deriv_contact_chain_layout(const grit_model *m, grit_deriv_ws *w, grit_carver *c) {
  GRIT_CARVE(c, w->cch, (size_t)cap(w) * C_SLOT);
  GRIT_CARVE(c, w->cch_at, cap(w));
  GRIT_CARVE(c, w->cci_list, cap(w));
  GRIT_CARVE(c, w->cagg, (size_t)m->nbody * C_MSZ);
  GRIT_CARVE(c, w->cagg_at, m->nbody);
  GRIT_CARVE(c, w->cagg_n, m->nbody);
  GRIT_CARVE(c, w->ccb_n, m->nbody);
  GRIT_CARVE(c, w->ccb_lag, m->nbody);
  GRIT_CARVE(c, w->ctw, (size_t)12 * (size_t)m->nbody);
  GRIT_CARVE(c, w->ctw_at, m->nbody);
  GRIT_CARVE(c, w->cgeo, (size_t)12 * (size_t)m->ngeom);
  GRIT_CARVE(c, w->cgeo_at, m->ngeom);
  GRIT_CARVE(c, w->ccb_at, m->nbody);
  GRIT_CARVE(c, w->ccb_list, m->nbody);
}

/* The side on a tree's body when the other is on the world (no tree), else -1. */
static int moving_side(const grit_model *m, const grit_contact_candidate *cand) {
  const int t0 = grit_body_tree(m, cand->body[0]), t1 = grit_body_tree(m, cand->body[1]);
  return t0 < 0 && t1 >= 0 ? 1 : t1 < 0 && t0 >= 0 ? 0 : -1;
}

/* Body b's twists under the solution's velocities (v0 = 0) or the previous state's (v0 = 1), their values
 * only (as constants, zero partials), formed once per call: grit_deriv_body_twist's value sums, the same
 * operations in the same order (S.v + cd.v v down the chain from its last dof, S.v + v for a free joint's
 * linear dof), without the partials the form would drop. */
static const grit_dual *twist_values(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int b, int v0) {
  grit_dual *S = w->ctw + 12 * (size_t)b;
  if (w->ctw_at[b] != w->ckeep_call) {
    const int t = grit_body_tree(m, b), n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
    double s[12] = {0.0};
    for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
      const int j = dof - adr, jn = m->dof_jnt[dof];
      if (j < 0 || j >= n) continue;
      const double x = d->vsol[dof], x0 = d->vprev[dof];
      if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3) {
        s[3 + dof - m->jnt_dofadr[jn]] += x;
        s[9 + dof - m->jnt_dofadr[jn]] += x0;
        continue;
      }
      const grit_dual *cd = w->kin.cdof + 6 * dof;
      for (int c = 0; c < 6; ++c) s[c] = s[c] + cd[c].v * x;
      for (int c = 0; c < 6; ++c) s[6 + c] = s[6 + c] + cd[c].v * x0;
    }
    for (int c = 0; c < 12; ++c) S[c] = grit_dual_const(s[c]);
    w->ctw_at[b] = w->ckeep_call;
  }
  return S + 6 * v0;
}

/* Body pose (X, R) as duals seeded along the six directions: lanes 0-2 the translation e_a, lanes 3-5 the
 * rotation about e_a (column j of [e_a]x R is e_a x R[:, j]). */
static void seed_pose(const grit_dual *X, const grit_dual *R, grit_dual xp[3], grit_dual xm[9]) {
  for (int a = 0; a < 3; ++a) xp[a] = grit_dual_const(X[a].v);
  for (int a = 0; a < 9; ++a) xm[a] = grit_dual_const(R[a].v);
  for (int a = 0; a < 3; ++a) {
    xp[a].d[a] = 1.0;
    for (int j = 0; j < 3; ++j) {
      const double c[3] = {R[j].v, R[3 + j].v, R[6 + j].v};
      const double e[3] = {a == 0, a == 1, a == 2};
      xm[j].d[3 + a] = e[1] * c[2] - e[2] * c[1];
      xm[3 + j].d[3 + a] = e[2] * c[0] - e[0] * c[2];
      xm[6 + j].d[3 + a] = e[0] * c[1] - e[1] * c[0];
    }
  }
}

/* The twist columns of the map: dW/dS = dW/dv_c dv_c/dS and dW/dS0 = dW/dv_n0 dv_n0/dS0 into M's columns
 * 6-17 (its pose columns and Mn = dW/dv_n0 given). d gamma / d v_c at the values is -Gl, the law's own
 * Hessian at the form's evaluation (Gl: its values; Lagged and Similar write G = d2l/dv_c2 = -d gamma/dv_c
 * in closed form from the same n, n' and soft norm as gamma); with ws->no_contact_hessian (tests) the law
 * again along v_c at the parameters' values (p's partials dropped), as before: the same derivative, its
 * round-off apart. So dW/dv_c = ((p x f_c), f_c) with f_c = sign F (d gamma / d v_c); v_c = sign F^T
 * (S_w x p + S_v), so row r of dv_c/dS is sign (p x F_r, F_r), F_r column r of F, and v_n0 is row 2 with S0. */
static void twist_maps(const grit_deriv_ws *w, int kind, double h, const grit_contact_params_dual *p,
                       const grit_dual vc[3], const grit_dual *pt, const grit_dual *F, double sign, const double Mn[6],
                       const grit_dual Gl[9], double *M) {
  double dg[3][3]; /* d gamma_i / d v_c */
  if (!w->no_contact_hessian) {
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) dg[i][c] = -Gl[3 * i + c].v;
  } else { /* the parameters' values (p is left as it is) */
    enum { NP = sizeof *p / sizeof(grit_dual) };
    _Static_assert(sizeof *p == NP * sizeof(grit_dual), "the parameters: duals only");
    union {
      grit_contact_params_dual p;
      grit_dual f[NP];
    } pc;
    grit_dual vq[3], g2[3], G[9];
    const grit_dual *pf = (const grit_dual *)(const void *)p;
    for (int f = 0; f < NP; ++f) pc.f[f] = grit_dual_const(pf[f].v);
    for (int q = 0; q < 3; ++q) {
      vq[q] = grit_dual_const(vc[q].v);
      vq[q].d[q] = 1.0;
    }
    w->fx->constraint_eval(kind, &pc.p, h, vq, g2, G);
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) dg[i][c] = g2[i].d[c];
  }
  double pp[3], Fd[9], Mv[6][3], D[3][6];
  for (int a = 0; a < 3; ++a) pp[a] = pt[a].v;
  for (int a = 0; a < 9; ++a) Fd[a] = F[a].v;
  for (int c = 0; c < 3; ++c) {
    double f[3];
    for (int a = 0; a < 3; ++a)
      f[a] = sign * (Fd[3 * a] * dg[0][c] + Fd[3 * a + 1] * dg[1][c] + Fd[3 * a + 2] * dg[2][c]);
    Mv[0][c] = pp[1] * f[2] - pp[2] * f[1];
    Mv[1][c] = pp[2] * f[0] - pp[0] * f[2];
    Mv[2][c] = pp[0] * f[1] - pp[1] * f[0];
    for (int a = 0; a < 3; ++a) Mv[3 + a][c] = f[a];
  }
  for (int r = 0; r < 3; ++r) {
    const double Fr[3] = {Fd[r], Fd[3 + r], Fd[6 + r]};
    D[r][0] = sign * (pp[1] * Fr[2] - pp[2] * Fr[1]);
    D[r][1] = sign * (pp[2] * Fr[0] - pp[0] * Fr[2]);
    D[r][2] = sign * (pp[0] * Fr[1] - pp[1] * Fr[0]);
    for (int a = 0; a < 3; ++a) D[r][3 + a] = sign * Fr[a];
  }
  for (int j = 0; j < 6; ++j)
    for (int c = 0; c < 6; ++c) {
      M[NM * j + 6 + c] = Mv[j][0] * D[0][c] + Mv[j][1] * D[1][c] + Mv[j][2] * D[2][c];
      M[NM * j + 12 + c] = Mn[j] * D[2][c];
    }
}

/* Adds contact map M to body b's sum, begun by its first contact of the call. */
static void add_to_body(grit_deriv_ws *w, int b, const double *M) {
  double *sum = w->cagg + (size_t)b * C_MSZ;
  if (w->cagg_at[b] != w->ckeep_call) {
    memset(sum, 0, sizeof(double) * C_MSZ);
    w->cagg_at[b] = w->ckeep_call;
    w->cagg_n[b] = 0;
  }
  for (int e = 0; e < C_MSZ; ++e) sum[e] += M[e];
  w->cagg_n[b]++;
}

/* The call's one evaluation of contact i on side s's body b (the full path's operations, at the seeded
 * pose and with v_n0 seeded in its lane): the slot's values and map. */
static inline __attribute__((always_inline)) void form_in(const grit_model *m, const grit_data *d, grit_deriv_ws *w,
                                                           const char *active, int i, const grit_constraint *k, int s,
                                                           double *slot) {
  const grit_contact_candidate *cand = &d->collision->c[i];
  const int b = cand->body[s];
  const double h = m->opt.timestep, sign = s == 1 ? 1.0 : -1.0;
  /* the geometries' poses, formed once per call (a capsule's two contacts, a floor's many): side s's at its
   * body's seeded pose, the other's (the world's) its constant one */
  const grit_dual *gpo[2], *gRo[2];
  for (int o = 0; o < 2; ++o) {
    const int g = cand->geom[o];
    grit_dual *gq = w->cgeo + 12 * (size_t)g;
    if (w->cgeo_at[g] != w->ckeep_call) {
      if (o == s) {
        grit_dual xp[3], xm[9];
        seed_pose(w->kin.xpos + 3 * b, w->kin.xmat + 9 * b, xp, xm);
        w->fx->compose(gq, gq + 3, xp, xm, m->geom_pos + 3 * g, m->geom_mat + 9 * g);
      } else {
        grit_deriv_fixed_geom_pose(m, w, cand->body[o], g, gq, gq + 3);
      }
      w->cgeo_at[g] = w->ckeep_call;
    }
    gpo[o] = gq, gRo[o] = gq + 3;
  }
  grit_contact_geom_dual geo;
  grit_contact_params_dual p;
  memset(&p, 0, sizeof p);
  grit_deriv_contact_inputs(m, w, active, cand, gpo, gRo, &geo, &p);
  p.smooth = grit_dual_const(k->p.smooth);
  p.soft = grit_dual_const(k->p.soft);
  const grit_dual *pt = s == 1 ? geo.pb : geo.pa, *F = geo.frame;
  if (k->kind == GRIT_CONSTRAINT_LAGGED) { /* v_n0 at the pose's lanes, then seeded alone in its own */
    grit_dual vc0[3] = {grit_dual_const(0.0), grit_dual_const(0.0), grit_dual_const(0.0)};
    w->fx->side_velocity(twist_values(m, d, w, b, 1), pt, F, sign, 2, vc0);
    vc0[2].d[LANE_VN0] = 1.0;
    p.gn0 = w->fx->lagged_gn0(&p, h, vc0[2]);
  }
  w->fx->params_finalize(k->kind, grit_dual_const(k->w), h, &d->settings, &p);
  grit_dual vc[3], gamma[3], G[9], W[6];
  for (int q = 0; q < 3; ++q) vc[q] = grit_dual_const(k->b[q]);
  w->fx->side_velocity(twist_values(m, d, w, b, 0), pt, F, sign, 0, vc);
  w->fx->constraint_eval(k->kind, &p, h, vc, gamma, G);
  for (int q = 0; q < 3; ++q) slot[C_LG + q] = gamma[q].d[LANE_VN0];
  for (int c = 0; c < 6; ++c) W[c] = grit_dual_const(0.0);
  w->fx->side_wrench(pt, F, sign, gamma, W);
  double *M = slot + C_M, Mn[6];
  for (int j = 0; j < 6; ++j) {
    slot[C_W + j] = W[j].v;
    for (int a = 0; a < 6; ++a) M[NM * j + a] = W[j].d[a];
    Mn[j] = W[j].d[LANE_VN0];
  }
  twist_maps(w, k->kind, h, &p, vc, pt, F, sign, Mn, G, M);
  add_to_body(w, b, M);
}

/* form_in compiled once more for AVX2 where w->fx is the AVX2 table (its inlined dual copies and map
 * sums: the same operations, nothing fused or reordered, the same bits); the baseline table, the
 * baseline compilation. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
__attribute__((target("avx2"))) static void form_avx2(const grit_model *m, const grit_data *d, grit_deriv_ws *w,
                                                      const char *active, int i, const grit_constraint *k, int s,
                                                      double *slot) {
  form_in(m, d, w, active, i, k, s, slot);
}
#define FORM_AVX2 1
#else
#define FORM_AVX2 0
#endif

static void form(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int i,
                 const grit_constraint *k, int s, double *slot) {
#if FORM_AVX2
  if (w->fx != grit_deriv_dual_fns_get(0)) {
    form_avx2(m, d, w, active, i, k, s, slot);
    return;
  }
#endif
  form_in(m, d, w, active, i, k, s, slot);
}

/* The lanes' kernel is also compiled for AVX2 and chosen at run time (derivatives_chain.c's pattern): the
 * same element-wise operations (no contraction), the same bits either way. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#define CC_AVX2 1
#else
#define CC_AVX2 0
#endif
#if defined(__GNUC__)
#define CC_INLINE inline __attribute__((always_inline))
#define CC_NOINLINE __attribute__((noinline))
#else
#define CC_INLINE inline
#define CC_NOINLINE
#endif

enum { NL = GRIT_DUAL_N };

/* Four lanes as one vector (GCC's vector extension: AVX in the AVX2 compilation, two SSE halves in the
 * baseline one; the same element-wise operations either way), loaded and stored unaligned. */
#if defined(__GNUC__)
typedef double v4d __attribute__((vector_size(32), aligned(8)));
_Static_assert(GRIT_DUAL_N % 4 == 0, "the lanes in vectors of four");
enum { NV = GRIT_DUAL_N / 4 };
/* macros, not functions: a vector passed or returned by value changes the ABI without AVX (-Wpsabi) */
#define LDV(dst, p) memcpy(&(dst), (p), sizeof(v4d))
#define STV(p, src) memcpy((p), &(src), sizeof(v4d))
#define bc(x) ((v4d){(x), (x), (x), (x)})

/* Adds to Wb's partials, along each lane, M (the pose's lanes: translation xpos', rotation vee(xmat' R^T);
 * the twist's S'; the twist's S0', NULL: none). */
static CC_INLINE void lanes_in(const grit_dual *X, const grit_dual *R, const grit_dual *S, const grit_dual *S0,
                               const double *M, grit_dual *Wb) {
  v4d x[NM][NV];
  const v4d half = bc(0.5);
  for (int h = 0; h < NV; ++h) {
    v4d r[9];
    for (int a = 0; a < 9; ++a) LDV(r[a], R[a].d + 4 * h);
    /* A = R' R^T, skew to round-off: its off-diagonal pairs */
    const v4d a21 = r[6] * bc(R[3].v) + r[7] * bc(R[4].v) + r[8] * bc(R[5].v);
    const v4d a12 = r[3] * bc(R[6].v) + r[4] * bc(R[7].v) + r[5] * bc(R[8].v);
    const v4d a02 = r[0] * bc(R[6].v) + r[1] * bc(R[7].v) + r[2] * bc(R[8].v);
    const v4d a20 = r[6] * bc(R[0].v) + r[7] * bc(R[1].v) + r[8] * bc(R[2].v);
    const v4d a10 = r[3] * bc(R[0].v) + r[4] * bc(R[1].v) + r[5] * bc(R[2].v);
    const v4d a01 = r[0] * bc(R[3].v) + r[1] * bc(R[4].v) + r[2] * bc(R[5].v);
    for (int a = 0; a < 3; ++a) LDV(x[a][h], X[a].d + 4 * h);
    x[3][h] = half * (a21 - a12);
    x[4][h] = half * (a02 - a20);
    x[5][h] = half * (a10 - a01);
    for (int c = 0; c < 6; ++c) LDV(x[6 + c][h], S[c].d + 4 * h);
    for (int c = 0; S0 && c < 6; ++c) LDV(x[12 + c][h], S0[c].d + 4 * h);
  }
  const int n = S0 ? NM : 12;
  for (int j = 0; j < 6; ++j) {
    const double *Mj = M + NM * j;
    v4d o[NV];
    for (int h = 0; h < NV; ++h) o[h] = bc(Mj[0]) * x[0][h];
    for (int a = 1; a < n; ++a) {
      const v4d mj = bc(Mj[a]);
      for (int h = 0; h < NV; ++h) o[h] += mj * x[a][h];
    }
    for (int h = 0; h < NV; ++h) {
      v4d y;
      LDV(y, Wb[j].d + 4 * h);
      y = o[h] + y;
      STV(Wb[j].d + 4 * h, y);
    }
  }
}

/* The partials of body b's twists at v (S) and at v0 (S0; NULL: none) in this pass, one walk of its chain:
 * grit_deriv_body_twist's sums of cdof' v over the dofs the pass moves, in its order from +0 (the same
 * bits); their values are not read (0). */
static CC_INLINE void twists_in(const grit_model *m, const grit_deriv_ws *w, int b, const double *v, const double *v0,
                                grit_dual *S, grit_dual *S0) {
  v4d s[6][NV], s0[6][NV];
  for (int c = 0; c < 6; ++c)
    for (int h = 0; h < NV; ++h) s[c][h] = s0[c][h] = bc(0.0);
  const int t = grit_body_tree(m, b), n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n || (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3)) continue;
    if (!grit_deriv_chain_moved(w, m->dof_body[dof])) break; /* nor are its ancestors: a moved parent moves it */
    const grit_dual *cd = w->kin.cdof + 6 * dof;
    const v4d vb = bc(v[dof]), v0b = bc(S0 ? v0[dof] : 0.0);
    for (int c = 0; c < 6; ++c)
      for (int h = 0; h < NV; ++h) {
        v4d y;
        LDV(y, cd[c].d + 4 * h);
        s[c][h] = s[c][h] + y * vb;
        if (S0) s0[c][h] = s0[c][h] + y * v0b;
      }
  }
  for (int c = 0; c < 6; ++c) {
    S[c].v = 0.0;
    for (int h = 0; h < NV; ++h) STV(S[c].d + 4 * h, s[c][h]);
    if (!S0) continue;
    S0[c].v = 0.0;
    for (int h = 0; h < NV; ++h) STV(S0[c].d + 4 * h, s0[c][h]);
  }
}
#else
/* Adds to Wb's partials, along each lane, M (the pose's lanes: translation xpos', rotation vee(xmat' R^T);
 * the twist's S'; the twist's S0', NULL: none). */
static CC_INLINE void lanes_in(const grit_dual *X, const grit_dual *R, const grit_dual *S, const grit_dual *S0,
                               const double *M, grit_dual *Wb) {
  double x[NM][NL];
  for (int l = 0; l < NL; ++l) { /* A = R' R^T, skew to round-off: its off-diagonal pairs */
    const double a21 = R[6].d[l] * R[3].v + R[7].d[l] * R[4].v + R[8].d[l] * R[5].v;
    const double a12 = R[3].d[l] * R[6].v + R[4].d[l] * R[7].v + R[5].d[l] * R[8].v;
    const double a02 = R[0].d[l] * R[6].v + R[1].d[l] * R[7].v + R[2].d[l] * R[8].v;
    const double a20 = R[6].d[l] * R[0].v + R[7].d[l] * R[1].v + R[8].d[l] * R[2].v;
    const double a10 = R[3].d[l] * R[0].v + R[4].d[l] * R[1].v + R[5].d[l] * R[2].v;
    const double a01 = R[0].d[l] * R[3].v + R[1].d[l] * R[4].v + R[2].d[l] * R[5].v;
    x[0][l] = X[0].d[l], x[1][l] = X[1].d[l], x[2][l] = X[2].d[l];
    x[3][l] = 0.5 * (a21 - a12);
    x[4][l] = 0.5 * (a02 - a20);
    x[5][l] = 0.5 * (a10 - a01);
  }
  for (int c = 0; c < 6; ++c)
    for (int l = 0; l < NL; ++l) x[6 + c][l] = S[c].d[l];
  const int n = S0 ? NM : 12;
  for (int c = 0; S0 && c < 6; ++c)
    for (int l = 0; l < NL; ++l) x[12 + c][l] = S0[c].d[l];
  for (int j = 0; j < 6; ++j) {
    const double *Mj = M + NM * j;
    double o[NL];
    for (int l = 0; l < NL; ++l) o[l] = Mj[0] * x[0][l];
    for (int a = 1; a < n; ++a)
      for (int l = 0; l < NL; ++l) o[l] += Mj[a] * x[a][l];
    for (int l = 0; l < NL; ++l) Wb[j].d[l] = o[l] + Wb[j].d[l];
  }
}


static CC_INLINE void twists_in(const grit_model *m, const grit_deriv_ws *w, int b, const double *v, const double *v0,
                                grit_dual *S, grit_dual *S0) {
  const int t = grit_body_tree(m, b), n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  for (int c = 0; c < 6; ++c) {
    S[c] = grit_dual_const(0.0);
    if (S0) S0[c] = grit_dual_const(0.0);
  }
  for (int dof = m->body_lastdof[b]; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n || (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3)) continue;
    if (!grit_deriv_chain_moved(w, m->dof_body[dof])) break; /* nor are its ancestors: a moved parent moves it */
    const grit_dual *cd = w->kin.cdof + 6 * dof;
    for (int c = 0; c < 6; ++c)
      for (int l = 0; l < NL; ++l) {
        S[c].d[l] = S[c].d[l] + cd[c].d[l] * v[dof];
        if (S0) S0[c].d[l] = S0[c].d[l] + cd[c].d[l] * v0[dof];
      }
  }
}
#endif

static CC_NOINLINE void lanes_base(const grit_dual *X, const grit_dual *R, const grit_dual *S, const grit_dual *S0,
                                   const double *M, grit_dual *Wb) {
  lanes_in(X, R, S, S0, M, Wb);
}
static CC_NOINLINE void twists_base(const grit_model *m, const grit_deriv_ws *w, int b, const double *v,
                                    const double *v0, grit_dual *S, grit_dual *S0) {
  twists_in(m, w, b, v, v0, S, S0);
}
#if CC_AVX2
static CC_NOINLINE __attribute__((target("avx2"))) void lanes_avx2(const grit_dual *X, const grit_dual *R,
                                                                    const grit_dual *S, const grit_dual *S0,
                                                                    const double *M, grit_dual *Wb) {
  lanes_in(X, R, S, S0, M, Wb);
}
static CC_NOINLINE __attribute__((target("avx2"))) void twists_avx2(const grit_model *m, const grit_deriv_ws *w, int b,
                                                                     const double *v, const double *v0, grit_dual *S,
                                                                     grit_dual *S0) {
  twists_in(m, w, b, v, v0, S, S0);
}
#endif

static void twists(const grit_model *m, const grit_deriv_ws *w, int b, const double *v, const double *v0, grit_dual *S,
                   grit_dual *S0) {
#if CC_AVX2
  if (__builtin_cpu_supports("avx2")) {
    twists_avx2(m, w, b, v, v0, S, S0);
    return;
  }
#endif
  twists_base(m, w, b, v, v0, S, S0);
}

static void lanes(const grit_dual *X, const grit_dual *R, const grit_dual *S, const grit_dual *S0, const double *M,
                  grit_dual *Wb) {
#if CC_AVX2
  if (__builtin_cpu_supports("avx2")) {
    lanes_avx2(X, R, S, S0, M, Wb);
    return;
  }
#endif
  lanes_base(X, R, S, S0, M, Wb);
}

int grit_deriv_contact_chain(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int i,
                             const grit_constraint *k) {
  if (w->no_contact_chain || w->inertial_in || i >= cap(w) || k->ntree != 1) return 0;
  if (k->kind != GRIT_CONSTRAINT_LAGGED && k->kind != GRIT_CONSTRAINT_SIMILAR) return 0;
  const grit_contact_candidate *cand = &d->collision->c[i];
  double *slot = w->cch + (size_t)i * C_SLOT;
  int s;
  if (w->cch_at[i] == w->ckeep_call) { /* formed in this call: the tests below held, its side kept */
    s = (int)slot[C_SIDE];
  } else {
    s = moving_side(m, cand);
    if (s < 0 || cand->k_patch > 0) return 0; /* a hydro patch: its own re-evaluation */
    /* a tree of at most GRIT_DUAL_N dofs has one position pass a call: the contact is evaluated once either
     * way, and the full path, bit for bit the old one, costs less */
    if (m->tree_dofnum[k->tree[0]] <= GRIT_DUAL_N) return 0;
    form(m, d, w, active, i, k, s, slot);
    slot[C_SIDE] = s;
    w->cch_at[i] = w->ckeep_call;
  }
  const int b = cand->body[s];
  if (w->bwr_at[b] != w->eval_no) {
    for (int c = 0; c < 6; ++c) w->bwr[6 * b + c] = grit_dual_const(0.0);
    w->bwr_at[b] = w->eval_no;
    w->bwr_list[w->nbwr++] = b;
  }
  for (int j = 0; j < 6; ++j) w->bwr[6 * b + j].v = slot[C_W + j] + w->bwr[6 * b + j].v; /* the value, in order */
  if (w->ccb_at[b] != w->eval_no) { /* its partials at the evaluation's end (grit_deriv_contact_chain_finish) */
    w->ccb_at[b] = w->eval_no;
    w->ccb_n[b] = w->ccb_lag[b] = 0;
    w->ccb_list[w->nccb++] = b;
  }
  const int lagged = k->kind == GRIT_CONSTRAINT_LAGGED;
  w->ccb_n[b]++;
  w->ccb_lag[b] += lagged;
  w->cci_list[w->ncci++] = i;
  if (lagged && w->lag_lane >= 0 && w->lag_g[3 * i] != w->lag_g[3 * i]) /* take_lagged_lane's */
    for (int q = 0; q < 3; ++q) w->lag_g[3 * i + q] = slot[C_LG + q];
  w->contact_chained++;
  return 1;
}

void grit_deriv_contact_chain_finish(const grit_model *m, const grit_data *d, grit_deriv_ws *w) {
  if (w->nccb == 0) return;
  for (int e = 0; e < w->nccb; ++e) {
    const int b = w->ccb_list[e];
    /* whether a Lagged contact of the body is among those chained (its S0 is read): counted as they
     * were, not by a scan of the evaluation's contacts per body (~2400 tests a pass on 22 humanoids) */
    grit_dual S[6], S0buf[6], *S0 = w->ccb_lag[b] > 0 ? S0buf : NULL;
    if (w->no_contact_twins) { /* the residual's cached dual twists (tests) */
      memcpy(S, grit_deriv_contact_twist(m, d, w, b, 0), sizeof S);
      if (S0) memcpy(S0, grit_deriv_contact_twist(m, d, w, b, 1), sizeof S0buf);
    } else {
      twists(m, w, b, d->vsol, d->vprev, S, S0);
    }
    if (w->ccb_n[b] == w->cagg_n[b]) { /* every contact of the sum: the sum's map once */
      lanes(w->kin.xpos + 3 * b, w->kin.xmat + 9 * b, S, S0, w->cagg + (size_t)b * C_MSZ, w->bwr + 6 * b);
      continue;
    }
    for (int f = 0; f < w->ncci; ++f) { /* some left out of this evaluation: contact by contact */
      const int i = w->cci_list[f];
      const grit_contact_candidate *cand = &d->collision->c[i];
      if (cand->body[moving_side(m, cand)] == b)
        lanes(w->kin.xpos + 3 * b, w->kin.xmat + 9 * b, S, S0, w->cch + (size_t)i * C_SLOT + C_M, w->bwr + 6 * b);
    }
  }
  w->nccb = w->ncci = 0;
}
