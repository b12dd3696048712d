/* SPDX-License-Identifier: Apache-2.0 */
/* fluid_partials.c — the fluid forces' partials in q0 and v0 (fluid_partials.h), all columns of a tree at
 * once, in doubles: each body's wrench g and its 6x6 partials K in the body's twist (the inertia box in
 * closed form, the ellipsoid model on dual numbers), summed over subtrees, then per dof and column a few
 * dot products as in derivatives_rnea.c. */
#include "fluid_partials.h"

#include <math.h>
#include <string.h>

#include "fluid.h"

/* A box body's constants in fluid_partials.bc: P (9), 3 pi d mu, pi d^3 mu, cf (3), ct (3), then the
 * inputs (mass, inertia (9), iquat (4), density, viscosity: 16) that say whether they are current. */
enum { FLUID_NK = 17, FLUID_NIN = 16, FLUID_NBC = FLUID_NK + FLUID_NIN };

/* Two doubles side by side: SSE2's register where GCC's vectors are there, else a pair of scalars with the
 * same operations per lane (the same bits either way: nothing is fused). */
#if defined(__GNUC__) && defined(__SSE2__)
typedef double fl2 __attribute__((vector_size(16)));
static inline fl2 fl2_ld(const double *p) {
  fl2 x;
  memcpy(&x, p, sizeof x);
  return x;
}
static inline void fl2_st(double *p, fl2 x) { memcpy(p, &x, sizeof x); }
static inline fl2 fl2_splat(double x) { return (fl2){x, x}; }
static inline fl2 fl2_madd(fl2 a, fl2 b, fl2 c) { return a * b + c; }
static inline double fl2_at(fl2 x, int i) { return x[i]; }
#else
typedef struct {
  double v[2];
} fl2;
static inline fl2 fl2_ld(const double *p) { return (fl2){{p[0], p[1]}}; }
static inline void fl2_st(double *p, fl2 x) { p[0] = x.v[0], p[1] = x.v[1]; }
static inline fl2 fl2_splat(double x) { return (fl2){{x, x}}; }
static inline fl2 fl2_madd(fl2 a, fl2 b, fl2 c) { return (fl2){{a.v[0] * b.v[0] + c.v[0], a.v[1] * b.v[1] + c.v[1]}}; }
static inline double fl2_at(fl2 x, int i) { return x.v[i]; }
#endif

/* Sum over c < 6 of x[2c + l] y[2c + l] for the two lanes l, in one order whatever the processor: the
 * even pairs c = 0, 2, 4 summed in turn, the odd ones likewise, then the two sums (AVX2's four lanes hold
 * both chains and add their halves at the end: the same operations on each lane). */
static inline fl2 fl2_dot12(const double *x, const double *y) {
  fl2 e = fl2_madd(fl2_ld(x), fl2_ld(y), fl2_splat(0.0)), o = fl2_madd(fl2_ld(x + 2), fl2_ld(y + 2), fl2_splat(0.0));
  e = fl2_madd(fl2_ld(x + 4), fl2_ld(y + 4), e), o = fl2_madd(fl2_ld(x + 6), fl2_ld(y + 6), o);
  e = fl2_madd(fl2_ld(x + 8), fl2_ld(y + 8), e), o = fl2_madd(fl2_ld(x + 10), fl2_ld(y + 10), o);
  return fl2_madd(e, fl2_splat(1.0), o);
}

#if defined(__GNUC__)
#define RN_FL_INLINE inline __attribute__((always_inline))
#else
#define RN_FL_INLINE inline
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(GRIT_NO_AVX2)
#include <immintrin.h>
#define FLUID_AVX2 1
static int fluid_have_avx2(void) { return __builtin_cpu_supports("avx2"); }
/* fl2_dot12 on AVX2, the same bits (no fused operations: -ffp-contract=off, the target has no FMA), with
 * one operand's three chunks held in registers (x's or y's: each product's operands commute). */
__attribute__((target("avx2"))) static inline __m128d dot12_held_pick(const __m256d h[3], const double *p) {
  __m256d a = _mm256_add_pd(_mm256_mul_pd(h[0], _mm256_loadu_pd(p)), _mm256_setzero_pd());
  a = _mm256_add_pd(_mm256_mul_pd(h[1], _mm256_loadu_pd(p + 4)), a);
  a = _mm256_add_pd(_mm256_mul_pd(h[2], _mm256_loadu_pd(p + 8)), a);
  return _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
}
#else
#define FLUID_AVX2 0
static int fluid_have_avx2(void) { return 0; }
#endif

void grit_fluid_partials_layout(const grit_model *m, grit_fluid_partials *f, grit_carver *c) {
  const int on = grit_fluid_on(m), nb = on ? m->nbody : 0, nv = on ? m->nv : 0;
  GRIT_CARVE(c, f->g, 6 * nb);
  GRIT_CARVE(c, f->K, 36 * nb);
  GRIT_CARVE(c, f->y, 6 * nv);
  GRIT_CARVE(c, f->kr, 6 * nv);
  GRIT_CARVE(c, f->wq, 6 * nv);
  GRIT_CARVE(c, f->wv, 6 * nv);
  GRIT_CARVE(c, f->bc, FLUID_NBC * nb);
  GRIT_CARVE(c, f->sym, nb);
  GRIT_CARVE(c, f->sy, 12 * nv);
  GRIT_CARVE(c, f->sk, 12 * nv);
  GRIT_CARVE(c, f->wy, 12 * nv);
  GRIT_CARVE(c, f->kk, 12 * nv);
  f->avx2 = fluid_have_avx2();
}

/* The inertia box of body b (fluid_generic.h): its wrench g (negated) and K = dg/dV. In the box's frame
 * at the centre of mass c the local twist is T V, rows (r_i; 0) for w_i and (c x r_i; r_i) for v_i (r_i
 * the box's axes in the world), and the local wrench's partials are diagonal: d tl_i/d wl_i and
 * d fl_i/d vl_i; g = -T^T (tl, fl), so K = -sum_i dt_i a_i a_i^T + df_i b_i b_i^T. */
static void box(const grit_model *m, const grit_kin *k, int b, double g[6], double K[36]) {
  const double rho = m->opt.density, mu = m->opt.viscosity, pi = 3.14159265358979323846;
  double bx[3], P[9], R[9];
  grit_fluid_box(m->body_mass[b], m->body_inertia + 9 * b, m->body_iquat + 4 * b, bx, P);
  const double *tw = k->cvel + 6 * b, *c = k->xipos + 3 * b;
  grit_m3_mul_c(R, k->xmat + 9 * b, P);
  double vc[3], rel[3], wl[3], vl[3], tl[3], fl[3], T[3], F[3], n[3];
  grit_v3_cross(vc, tw, c);
  for (int i = 0; i < 3; ++i) rel[i] = tw[3 + i] + vc[i] - m->opt.wind[i];
  grit_m3_tmulv(wl, R, tw);
  grit_m3_tmulv(vl, R, rel);
  const double dm = (bx[0] + bx[1] + bx[2]) / 3.0;
  memset(K, 0, 36 * sizeof(double));
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, l = (i + 2) % 3;
    const double bj2 = bx[j] * bx[j], bl2 = bx[l] * bx[l];
    const double cf = 0.5 * rho * bx[j] * bx[l], ct = rho * bx[i] * (bj2 * bj2 + bl2 * bl2) / 64.0;
    fl[i] = -(3.0 * pi * dm * mu * vl[i] + cf * fabs(vl[i]) * vl[i]);
    tl[i] = -(pi * dm * dm * dm * mu * wl[i] + ct * fabs(wl[i]) * wl[i]);
    const double df = 3.0 * pi * dm * mu + 2.0 * cf * fabs(vl[i]), dt = pi * dm * dm * dm * mu + 2.0 * ct * fabs(wl[i]);
    const double a[6] = {R[i], R[3 + i], R[6 + i], 0.0, 0.0, 0.0};
    double s[6] = {0.0, 0.0, 0.0, R[i], R[3 + i], R[6 + i]};
    grit_v3_cross(s, c, s + 3); /* c x r_i */
    for (int p = 0; p < 6; ++p)
      for (int q = 0; q < 6; ++q) K[6 * p + q] += dt * a[p] * a[q] + df * s[p] * s[q];
  }
  grit_m3_mulv(T, R, tl);
  grit_m3_mulv(F, R, fl);
  grit_v3_cross(n, c, F);
  for (int i = 0; i < 3; ++i) g[i] = -(T[i] + n[i]), g[3 + i] = -F[i];
}

/* Geometry g of the ellipsoid model: its wrench added to gb, its partials in the twist to Kb, by one
 * dual evaluation with the twist's six components seeded on six lanes (positions constant); the frame
 * in doubles unless f->dual_frame. */
static void ellipsoid(const grit_model *m, const grit_kin *k, const grit_fluid_partials *f, int g, double gb[6],
                      double Kb[36]) {
  const int b = m->geom_body[g];
  if (!f->dual_frame) { /* the frame in doubles (fluid_ellipsoid_dual.c): the same bits */
    if (f->avx2) grit_fluid_ellipsoid_partials_avx2(m, k->xpos + 3 * b, k->xmat + 9 * b, k->cvel + 6 * b, g, gb, Kb);
    else grit_fluid_ellipsoid_partials(m, k->xpos + 3 * b, k->xmat + 9 * b, k->cvel + 6 * b, g, gb, Kb);
    return;
  }
  grit_dual xp[3], xm[9], tw[6], w[6];
  for (int i = 0; i < 3; ++i) xp[i] = grit_dual_const(k->xpos[3 * b + i]);
  for (int i = 0; i < 9; ++i) xm[i] = grit_dual_const(k->xmat[9 * b + i]);
  for (int i = 0; i < 6; ++i) {
    tw[i] = grit_dual_const(k->cvel[6 * b + i]);
    tw[i].d[i] = 1.0;
    w[i] = grit_dual_const(0.0);
  }
  grit_fluid_geom_wrench_dual(m, xp, xm, tw, g, w);
  for (int p = 0; p < 6; ++p) {
    gb[p] += w[p].v;
    for (int q = 0; q < 6; ++q) Kb[6 * p + q] += w[p].d[q];
  }
}

/* Whether body b (of a tree of mask) feels the fluid (fluid_generic.h's rule). */
static int feels(const grit_model *m, const char *mask, int b) {
  return m->body_tree[b] >= 0 && mask[m->body_tree[b]] && m->body_mass[b] >= GRIT_FLUID_MIN_MASS;
}

/* g and K per body, then summed over subtrees. */
static void body_terms(const grit_model *m, const grit_kin *k, const char *mask, grit_fluid_partials *f) {
  memset(f->g, 0, sizeof(double) * 6 * (size_t)m->nbody);
  memset(f->K, 0, sizeof(double) * 36 * (size_t)m->nbody);
  for (int b = 1; b < m->nbody; ++b)
    if (feels(m, mask, b) && !m->body_fluid_ellipsoid[b]) box(m, k, b, f->g + 6 * b, f->K + 36 * b);
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_fluid[GRIT_FLUID_NGEOM * g] != 0.0 && feels(m, mask, m->geom_body[g]))
      ellipsoid(m, k, f, g, f->g + 6 * m->geom_body[g], f->K + 36 * m->geom_body[g]);
  for (int b = m->nbody - 1; b > 0; --b) {
    const int p = m->body_parent[b];
    if (p <= 0 || m->body_tree[b] < 0 || !mask[m->body_tree[b]]) continue;
    for (int i = 0; i < 6; ++i) f->g[6 * p + i] += f->g[6 * b + i];
    for (int i = 0; i < 36; ++i) f->K[36 * p + i] += f->K[36 * b + i];
  }
}


/* Dof i's motion cross term y = S x (P - wind) and force cross term wq = S x* g (g: its body's), the
 * start of every dof_vectors path. */
static inline void dof_cross_terms(const grit_model *m, const grit_rnea *r, int i, const double *S, const double *g,
                                   double *y, double *wq) {
  double pw[6];
  for (int c = 0; c < 6; ++c) pw[c] = r->P[6 * i + c] - (c < 3 ? 0.0 : m->opt.wind[c - 3]);
  grit_sv_cross_motion(y, S, pw);
  grit_sv_cross_force(wq, S, g);
}

/* Dof i's vectors: y = S x (P - W), kr = K^T S, wq = S x* g - K y, wv = K S (g, K of its body's subtree). */
static void dof_vectors(const grit_model *m, const grit_kin *k, const grit_rnea *r, int i, grit_fluid_partials *f) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb;
  double *y = f->y + 6 * i, *kr = f->kr + 6 * i, *wq = f->wq + 6 * i, *wv = f->wv + 6 * i;
  dof_cross_terms(m, r, i, S, f->g + 6 * kb, y, wq);
  for (int p = 0; p < 6; ++p) {
    double a = 0.0, b = 0.0, e = 0.0;
    for (int q = 0; q < 6; ++q) a += K[6 * q + p] * S[q], b += K[6 * p + q] * y[q], e += K[6 * p + q] * S[q];
    kr[p] = a, wq[p] -= b, wv[p] = e;
  }
}

/* ------------------------------------------------------------------ the faster path (f->old == 0) */

/* Body b's box constants, recomputed only when their inputs changed (the model's inertia, the options'
 * density or viscosity): the same expressions as box's, so the same coefficients. */
static const double *box_constants(const grit_model *m, grit_fluid_partials *f, int b) {
  double *bc = f->bc + FLUID_NBC * b, in[FLUID_NIN];
  in[0] = m->body_mass[b];
  memcpy(in + 1, m->body_inertia + 9 * b, 9 * sizeof(double));
  memcpy(in + 10, m->body_iquat + 4 * b, 4 * sizeof(double));
  in[14] = m->opt.density, in[15] = m->opt.viscosity;
  if (!memcmp(in, bc + FLUID_NK, sizeof in)) return bc;
  const double rho = in[14], mu = in[15], pi = 3.14159265358979323846;
  double bx[3];
  grit_fluid_box(in[0], in + 1, in + 10, bx, bc);
  const double dm = (bx[0] + bx[1] + bx[2]) / 3.0;
  bc[9] = 3.0 * pi * dm * mu, bc[10] = pi * dm * dm * dm * mu;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, l = (i + 2) % 3;
    const double bj2 = bx[j] * bx[j], bl2 = bx[l] * bx[l];
    bc[11 + i] = 0.5 * rho * bx[j] * bx[l], bc[14 + i] = rho * bx[i] * (bj2 * bj2 + bl2 * bl2) / 64.0;
  }
  memcpy(bc + FLUID_NK, in, sizeof in);
  return bc;
}

/* box's g and K in blocks: with Nt = R diag(dt) R^T, Nf = R diag(df) R^T (R's columns the axes r_i) and
 * C = [c]x, sum_i dt a a^T + df s s^T is [[Nt + C Nf C^T, C Nf], [Nf C^T, Nf]]: about a third of the
 * arithmetic of the 36-entry rank-one sums, and symmetric (the upper triangles mirrored). */
static void box_fast(const grit_model *m, const grit_kin *k, const double *bc, int b, double g[6], double K[36]) {
  const double *tw = k->cvel + 6 * b, *c = k->xipos + 3 * b;
  double R[9], vc[3], rel[3], wl[3], vl[3], tl[3], fl[3], df[3], dt[3], T[3], F[3], n[3];
  grit_m3_mul_c(R, k->xmat + 9 * b, bc);
  grit_v3_cross(vc, tw, c);
  for (int i = 0; i < 3; ++i) rel[i] = tw[3 + i] + vc[i] - m->opt.wind[i];
  grit_m3_tmulv(wl, R, tw);
  grit_m3_tmulv(vl, R, rel);
  for (int i = 0; i < 3; ++i) {
    const double av = fabs(vl[i]), aw = fabs(wl[i]), cf = bc[11 + i], ct = bc[14 + i];
    fl[i] = -(bc[9] * vl[i] + cf * av * vl[i]);
    tl[i] = -(bc[10] * wl[i] + ct * aw * wl[i]);
    df[i] = bc[9] + 2.0 * cf * av, dt[i] = bc[10] + 2.0 * ct * aw;
  }
  double Nf[9], Nt[9], X[9], Y[3];
  for (int p = 0; p < 3; ++p)
    for (int q = p; q < 3; ++q) {
      const double *rp = R + 3 * p, *rq = R + 3 * q;
      Nf[3 * p + q] = Nf[3 * q + p] = rp[0] * df[0] * rq[0] + rp[1] * df[1] * rq[1] + rp[2] * df[2] * rq[2];
      Nt[3 * p + q] = Nt[3 * q + p] = rp[0] * dt[0] * rq[0] + rp[1] * dt[1] * rq[1] + rp[2] * dt[2] * rq[2];
    }
  for (int q = 0; q < 3; ++q) { /* X = C Nf, column by column (Nf's columns are its rows) */
    double x[3];
    grit_v3_cross(x, c, Nf + 3 * q);
    for (int p = 0; p < 3; ++p) X[3 * p + q] = x[p];
  }
  for (int p = 0; p < 3; ++p) { /* C Nf C^T = X C^T: row p is c x (X's row p); its upper triangle */
    grit_v3_cross(Y, c, X + 3 * p);
    for (int q = p; q < 3; ++q) K[6 * p + q] = K[6 * q + p] = Nt[3 * p + q] + Y[q];
  }
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) {
      K[6 * p + 3 + q] = K[6 * (3 + q) + p] = X[3 * p + q];
      K[6 * (3 + p) + 3 + q] = Nf[3 * p + q];
    }
  grit_m3_mulv(T, R, tl);
  grit_m3_mulv(F, R, fl);
  grit_v3_cross(n, c, F);
  for (int i = 0; i < 3; ++i) g[i] = -(T[i] + n[i]), g[3 + i] = -F[i];
}

/* body_terms on the faster path, noting which subtrees' K are symmetric (box bodies only). */
static void body_terms_fast(const grit_model *m, const grit_kin *k, const char *mask, grit_fluid_partials *f) {
  memset(f->g, 0, sizeof(double) * 6 * (size_t)m->nbody);
  memset(f->K, 0, sizeof(double) * 36 * (size_t)m->nbody);
  memset(f->sym, 1, (size_t)m->nbody);
  for (int b = 1; b < m->nbody; ++b)
    if (feels(m, mask, b) && !m->body_fluid_ellipsoid[b]) box_fast(m, k, box_constants(m, f, b), b, f->g + 6 * b, f->K + 36 * b);
  for (int g = 0; g < m->ngeom; ++g)
    if (m->geom_fluid[GRIT_FLUID_NGEOM * g] != 0.0 && feels(m, mask, m->geom_body[g])) {
      ellipsoid(m, k, f, g, f->g + 6 * m->geom_body[g], f->K + 36 * m->geom_body[g]);
      f->sym[m->geom_body[g]] = 0;
    }
  for (int b = m->nbody - 1; b > 0; --b) {
    const int p = m->body_parent[b];
    if (p <= 0 || m->body_tree[b] < 0 || !mask[m->body_tree[b]]) continue;
    for (int i = 0; i < 6; ++i) f->g[6 * p + i] += f->g[6 * b + i];
    for (int i = 0; i < 36; ++i) f->K[36 * p + i] += f->K[36 * b + i];
    f->sym[p] &= f->sym[b];
  }
}

/* dof_vectors for a K that is not symmetric (an ellipsoid's), two lanes at a time: K^T S as the sum of
 * K's rows times S's entries, K y and K S as the sums of its columns (gathered in pairs) times y's and S's
 * entries. Each entry is dof_vectors' sum, 0 + K_0 x_0 + ... + K_5 x_5 in that order: the same bits. */
static void nsym_vectors(const grit_model *m, const grit_kin *k, const grit_rnea *r, int i, grit_fluid_partials *f) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb;
  double *y = f->y + 6 * i, *wq = f->wq + 6 * i;
  dof_cross_terms(m, r, i, S, f->g + 6 * kb, y, wq);
  fl2 ks[3], ky[3], ke[3];
  for (int l = 0; l < 3; ++l) ks[l] = ky[l] = ke[l] = fl2_splat(0.0);
  for (int q = 0; q < 6; ++q) {
    const fl2 sq = fl2_splat(S[q]), yq = fl2_splat(y[q]);
    for (int l = 0; l < 3; ++l) {
      const double col[2] = {K[6 * (2 * l) + q], K[6 * (2 * l + 1) + q]};
      const fl2 kq = fl2_ld(K + 6 * q + 2 * l), kc = fl2_ld(col);
      ks[l] = fl2_madd(kq, sq, ks[l]);
      ky[l] = fl2_madd(kc, yq, ky[l]);
      ke[l] = fl2_madd(kc, sq, ke[l]);
    }
  }
  for (int l = 0; l < 3; ++l) {
    fl2_st(f->kr + 6 * i + 2 * l, ks[l]);
    fl2_st(f->wv + 6 * i + 2 * l, ke[l]);
    for (int e = 0; e < 2; ++e) wq[2 * l + e] -= fl2_at(ky[l], e);
  }
}

#if FLUID_AVX2
/* nsym_vectors on AVX2, K's columns read as the rows of its transpose KT (made once per body by the
 * caller): each entry the same chain of products and sums from +0 in q's order, four entries a 256-bit
 * lane set and two a 128-bit one (nothing fused): the same bits. */
__attribute__((target("avx2"))) static void nsym_vectors_avx2(const grit_model *m, const grit_kin *k, const grit_rnea *r,
                                                              int i, grit_fluid_partials *f, const double *KT) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb;
  double *y = f->y + 6 * i, *wq = f->wq + 6 * i;
  dof_cross_terms(m, r, i, S, f->g + 6 * kb, y, wq);
  __m256d s4 = _mm256_setzero_pd(), y4 = _mm256_setzero_pd(), e4 = _mm256_setzero_pd();
  __m128d s2 = _mm_setzero_pd(), y2 = _mm_setzero_pd(), e2 = _mm_setzero_pd();
  for (int q = 0; q < 6; ++q) {
    const __m256d sq = _mm256_set1_pd(S[q]), yq = _mm256_set1_pd(y[q]);
    const __m256d kr4 = _mm256_loadu_pd(K + 6 * q), kc4 = _mm256_loadu_pd(KT + 6 * q);
    const __m128d kr2 = _mm_loadu_pd(K + 6 * q + 4), kc2 = _mm_loadu_pd(KT + 6 * q + 4);
    const __m128d sq2 = _mm256_castpd256_pd128(sq), yq2 = _mm256_castpd256_pd128(yq);
    s4 = _mm256_add_pd(_mm256_mul_pd(kr4, sq), s4), s2 = _mm_add_pd(_mm_mul_pd(kr2, sq2), s2);
    y4 = _mm256_add_pd(_mm256_mul_pd(kc4, yq), y4), y2 = _mm_add_pd(_mm_mul_pd(kc2, yq2), y2);
    e4 = _mm256_add_pd(_mm256_mul_pd(kc4, sq), e4), e2 = _mm_add_pd(_mm_mul_pd(kc2, sq2), e2);
  }
  double *kr = f->kr + 6 * i, *wv = f->wv + 6 * i;
  _mm256_storeu_pd(kr, s4), _mm_storeu_pd(kr + 4, s2);
  _mm256_storeu_pd(wv, e4), _mm_storeu_pd(wv + 4, e2);
  _mm256_storeu_pd(wq, _mm256_sub_pd(_mm256_loadu_pd(wq), y4));
  _mm_storeu_pd(wq + 4, _mm_sub_pd(_mm_loadu_pd(wq + 4), y2));
}
#endif

/* The faster path's vectors of dof i, interleaved for the pairs' two-lane dot products: sy = (S, y),
 * sk = (S, kr), wy = (wq, y). With a symmetric K (box bodies only), K S (= K^T S) and K y as sums of K's
 * rows, two lanes at a time; wv is kr. Else dof_vectors' products. */
static void dof_vectors_fast(const grit_model *m, const grit_kin *k, const grit_rnea *r, int i, grit_fluid_partials *f,
                             const double *KT) {
  const int kb = m->dof_body[i];
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb;
  double *y = f->y + 6 * i, *kr = f->kr + 6 * i, *wq = f->wq + 6 * i;
  (void)KT; /* read by the AVX2 path only (FLUID_AVX2: GCC on x86-64) */
  if (!f->sym[kb] && f->no_nsym_lanes) {
    dof_vectors(m, k, r, i, f);
  } else if (!f->sym[kb]) {
#if FLUID_AVX2
    if (KT) nsym_vectors_avx2(m, k, r, i, f, KT);
    else
#endif
      nsym_vectors(m, k, r, i, f);
  } else {
    dof_cross_terms(m, r, i, S, f->g + 6 * kb, y, wq);
    fl2 ks[3], ky[3];
    for (int l = 0; l < 3; ++l) ks[l] = ky[l] = fl2_splat(0.0);
    for (int q = 0; q < 6; ++q) {
      const fl2 sq = fl2_splat(S[q]), yq = fl2_splat(y[q]);
      for (int l = 0; l < 3; ++l) {
        const fl2 kq = fl2_ld(K + 6 * q + 2 * l);
        ks[l] = fl2_madd(kq, sq, ks[l]);
        ky[l] = fl2_madd(kq, yq, ky[l]);
      }
    }
    for (int l = 0; l < 3; ++l) {
      fl2_st(kr + 2 * l, ks[l]);
      fl2_st(f->wv + 6 * i + 2 * l, ks[l]);
      for (int e = 0; e < 2; ++e) wq[2 * l + e] -= fl2_at(ky[l], e);
    }
  }
  double *sy = f->sy + 12 * i, *sk = f->sk + 12 * i, *wy = f->wy + 12 * i, *kk = f->kk + 12 * i;
  for (int c = 0; c < 6; ++c) {
    kk[2 * c] = kk[2 * c + 1] = kr[c];
    sy[2 * c] = sk[2 * c] = S[c];
    sy[2 * c + 1] = wy[2 * c + 1] = y[c];
    sk[2 * c + 1] = kr[c];
    wy[2 * c] = wq[c];
  }
}

/* The columns' terms of one tree (as grit_fluid_partials_add's loop) by two-lane dot products: kr_i
 * (kk: each entry twice) against (S_j, y_j), and (S_j, kr_j) against (wq_i, y_i); with a symmetric K,
 * kr = wv and the velocity pair's two entries share their dot product. DOT(x, y, r) sets r[0], r[1] to
 * fl2_dot12's lanes. */
#define FLUID_TREE_PAIRS(DOT, DOTC, HOLD)                                                                         \
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];                                                       \
  double *DQ = r->DQ + m->tree_madr[t], *DV = r->DV + m->tree_madr[t];                                            \
  for (int i = adr; i < adr + n; ++i) {                                                                           \
    const double *kki = f->kk + 12 * i, *wyi = f->wy + 12 * i, *wvi = f->wv + 6 * i;                              \
    const int sym = f->sym[m->dof_body[i]], ii = i - adr, gi = r->grp[i];                                         \
    HOLD(kki, wyi);                                                                                               \
    for (int j = i; j >= 0; j = m->dof_parent[j]) {                                                               \
      const int jj = j - adr;                                                                                     \
      double a[2], b[2];                                                                                          \
      DOT(KKI, f->sy + 12 * j, a); /* (kr_i . S_j, kr_i . y_j) */                                                 \
      DQ[ii * n + jj] -= h * a[1];                                                                                \
      DV[ii * n + jj] += h * a[0];                                                                                \
      if (j == i) continue;                                                                                       \
      DOTC(f->sk + 12 * j, WYI, b); /* (S_j . wq_i, kr_j . y_i) */                                              \
      DQ[jj * n + ii] += h * (r->grp[j] == gi ? -b[1] : b[0]);                                                    \
      DV[jj * n + ii] += h * (sym ? a[0] : grit_sv_dot(k->cdof + 6 * j, wvi));                                    \
    }                                                                                                             \
  }

#define FLUID_DOT_FL2(x, y, out)                                                                                  \
  do {                                                                                                            \
    const fl2 v_ = fl2_dot12(x, y);                                                                               \
    out[0] = fl2_at(v_, 0), out[1] = fl2_at(v_, 1);                                                               \
  } while (0)

/* The baseline's rows read from memory (KKI, WYI: kki, wyi). */
#define FLUID_HOLD_NONE(x, y) (void)0
#define KKI kki
#define WYI wyi
static void tree_pairs_fast(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, const grit_fluid_partials *f,
                            int t) {
  FLUID_TREE_PAIRS(FLUID_DOT_FL2, FLUID_DOT_FL2, FLUID_HOLD_NONE)
}
#undef KKI
#undef WYI

#if FLUID_AVX2
/* AVX2: row i's kk and wy held in registers over its pairs (for the compiler the stores into DQ, DV may
 * alias them: it would load them again for every pair); fl2_dot12's operations, the same bits. */
#define FLUID_HOLD_AVX2(x, y)                                                                                     \
  const __m256d kv_[3] = {_mm256_loadu_pd(x), _mm256_loadu_pd(x + 4), _mm256_loadu_pd(x + 8)};                    \
  const __m256d wv_[3] = {_mm256_loadu_pd(y), _mm256_loadu_pd(y + 4), _mm256_loadu_pd(y + 8)}
#define KKI kv_
#define WYI wv_
#define FLUID_DOT_AVX2(x, y, out) _mm_storeu_pd(out, dot12_held_pick(x, y))
#define FLUID_DOTC_AVX2(x, y, out) _mm_storeu_pd(out, dot12_held_pick(y, x))
__attribute__((target("avx2"))) static void tree_pairs_avx2(const grit_model *m, const grit_kin *k, double h, grit_rnea *r,
                                                            const grit_fluid_partials *f, int t) {
  FLUID_TREE_PAIRS(FLUID_DOT_AVX2, FLUID_DOTC_AVX2, FLUID_HOLD_AVX2)
}
#undef KKI
#undef WYI
#endif

static void partials_fast(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, grit_fluid_partials *f) {
  const char *mask = r->on;
  body_terms_fast(m, k, mask, f);
  double KT[36]; /* AVX2: the transpose of K of body kt_of (a non-symmetric K's columns as rows) */
  int kt_of = -1;
  for (int i = 0; i < m->nv; ++i) {
    if (!mask[m->dof_tree[i]]) continue;
    const int kb = m->dof_body[i];
    const int lanes = FLUID_AVX2 && f->avx2 && !f->no_nsym_avx2 && !f->sym[kb] && !f->no_nsym_lanes;
    if (lanes && kt_of != kb) {
      const double *K = f->K + 36 * kb;
      for (int p = 0; p < 6; ++p)
        for (int q = 0; q < 6; ++q) KT[6 * q + p] = K[6 * p + q];
      kt_of = kb;
    }
    dof_vectors_fast(m, k, r, i, f, lanes ? KT : NULL);
  }
  for (int t = 0; t < m->ntree; ++t)
    if (!mask[t]) continue;
#if FLUID_AVX2
    else if (f->avx2) tree_pairs_avx2(m, k, h, r, f, t);
#endif
    else tree_pairs_fast(m, k, h, r, f, t);
}

/* The fluid's vectors joined to the dofs' own (r->pairs_due: no wind, so y_j = S_j x P_j is derivatives_rnea.c's
 * cy_j): its pairs' four terms are then the rnea pairs' with g6 + kr for g6 (rows: kr_i . S_j in the
 * velocity entry, -kr_i . y_j in the position entry and within a group), wq and wv plus the fluid's (columns):
 * one set of pairs, not two. The same partials summed in another order: round-off apart. */
/* The joined path's vectors of the dofs of mask, added to r's: g6 += K^T S, wv += K S, wq += S x* g - K y
 * with y = cy (r->cy: no wind). Each entry a sum over K's rows (K^T S; a symmetric K's K y) or columns
 * (K S, K y) in index order, two entries a lane pair (fl2: the same operations on any target, the same
 * bits); a symmetric K's K S is its K^T S. */
static RN_FL_INLINE void joined_dof(const grit_model *m, const grit_kin *k, grit_rnea *r, const grit_fluid_partials *f,
                                    int i) {
  {
    const int kb = m->dof_body[i];
    const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb, *y = r->cy + 6 * i;
    double kt[6], ks[6] = {0, 0, 0, 0, 0, 0}, ky[6] = {0, 0, 0, 0, 0, 0}, t[6];
    fl2 a[3], b[3]; /* K^T S and (symmetric K) K y, two entries a lane pair, by K's rows */
    for (int l = 0; l < 3; ++l) a[l] = b[l] = fl2_splat(0.0);
    const int sym = f->sym[kb];
    for (int q = 0; q < 6; ++q) {
      const fl2 sq = fl2_splat(S[q]), yq = fl2_splat(y[q]);
      for (int l = 0; l < 3; ++l) {
        const fl2 kq = fl2_ld(K + 6 * q + 2 * l);
        a[l] = fl2_madd(kq, sq, a[l]);
        if (sym) b[l] = fl2_madd(kq, yq, b[l]);
      }
    }
    for (int l = 0; l < 3; ++l) fl2_st(kt + 2 * l, a[l]);
    if (sym) {
      for (int l = 0; l < 3; ++l) fl2_st(ky + 2 * l, b[l]);
      memcpy(ks, kt, sizeof ks);
    } else {
      for (int q = 0; q < 6; ++q)
        for (int p = 0; p < 6; ++p) ks[p] += K[6 * p + q] * S[q], ky[p] += K[6 * p + q] * y[q];
    }
    grit_sv_cross_force(t, S, f->g + 6 * kb);
    double *g6 = r->g6 + 6 * i, *wq = r->wq + 6 * i, *wv = r->wv + 6 * i;
    for (int p = 0; p < 6; ++p) g6[p] += kt[p], wv[p] += ks[p], wq[p] += t[p] - ky[p];
  }
}

static void joined_vectors(const grit_model *m, const grit_kin *k, const char *mask, grit_rnea *r,
                           const grit_fluid_partials *f) {
  for (int i = 0; i < m->nv; ++i)
    if (mask[m->dof_tree[i]]) joined_dof(m, k, r, f, i);
}

#if FLUID_AVX2
/* joined_dof for a symmetric K on AVX2: each of the six entries of K^T S and K y the same chain of products
 * and sums from +0 in q's order (four entries a 256-bit lane set, two a 128-bit one, where fl2 took two a
 * pair: the same operations per entry, nothing fused), and the three updates entry by entry as there. */
__attribute__((target("avx2"))) static void joined_dof_sym_avx2(const grit_kin *k, grit_rnea *r, const grit_fluid_partials *f,
                                                                int i, int kb) {
  const double *S = k->cdof + 6 * i, *K = f->K + 36 * kb, *y = r->cy + 6 * i;
  __m256d a4 = _mm256_setzero_pd(), b4 = _mm256_setzero_pd();
  __m128d a2 = _mm_setzero_pd(), b2 = _mm_setzero_pd();
  for (int q = 0; q < 6; ++q) {
    const __m256d k4 = _mm256_loadu_pd(K + 6 * q), s4 = _mm256_set1_pd(S[q]), y4 = _mm256_set1_pd(y[q]);
    const __m128d k2 = _mm_loadu_pd(K + 6 * q + 4);
    a4 = _mm256_add_pd(_mm256_mul_pd(k4, s4), a4), b4 = _mm256_add_pd(_mm256_mul_pd(k4, y4), b4);
    a2 = _mm_add_pd(_mm_mul_pd(k2, _mm256_castpd256_pd128(s4)), a2);
    b2 = _mm_add_pd(_mm_mul_pd(k2, _mm256_castpd256_pd128(y4)), b2);
  }
  double t[6];
  grit_sv_cross_force(t, S, f->g + 6 * kb);
  double *g6 = r->g6 + 6 * i, *wq = r->wq + 6 * i, *wv = r->wv + 6 * i;
  _mm256_storeu_pd(g6, _mm256_add_pd(_mm256_loadu_pd(g6), a4));
  _mm_storeu_pd(g6 + 4, _mm_add_pd(_mm_loadu_pd(g6 + 4), a2));
  _mm256_storeu_pd(wv, _mm256_add_pd(_mm256_loadu_pd(wv), a4));
  _mm_storeu_pd(wv + 4, _mm_add_pd(_mm_loadu_pd(wv + 4), a2));
  _mm256_storeu_pd(wq, _mm256_add_pd(_mm256_loadu_pd(wq), _mm256_sub_pd(_mm256_loadu_pd(t), b4)));
  _mm_storeu_pd(wq + 4, _mm_add_pd(_mm_loadu_pd(wq + 4), _mm_sub_pd(_mm_loadu_pd(t + 4), b2)));
}

__attribute__((target("avx2"))) static void joined_vectors_avx2(const grit_model *m, const grit_kin *k, const char *mask,
                                                                grit_rnea *r, const grit_fluid_partials *f) {
  for (int i = 0; i < m->nv; ++i) {
    if (!mask[m->dof_tree[i]]) continue;
    const int kb = m->dof_body[i];
    if (f->sym[kb] && !f->no_joined_avx2) joined_dof_sym_avx2(k, r, f, i, kb);
    else joined_dof(m, k, r, f, i);
  }
}
#endif

static void merged(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, grit_fluid_partials *f) {
  const char *mask = r->on;
  if (f->old) { /* the previous closed form's vectors (fl.old), added */
    body_terms(m, k, mask, f);
    for (int i = 0; i < m->nv; ++i) {
      if (!mask[m->dof_tree[i]]) continue;
      dof_vectors(m, k, r, i, f);
      double *g6 = r->g6 + 6 * i, *wq = r->wq + 6 * i, *wv = r->wv + 6 * i;
      for (int c = 0; c < 6; ++c) g6[c] += f->kr[6 * i + c], wq[c] += f->wq[6 * i + c], wv[c] += f->wv[6 * i + c];
    }
  } else {
    body_terms_fast(m, k, mask, f);
#if FLUID_AVX2
    if (f->avx2) joined_vectors_avx2(m, k, mask, r, f);
    else
#endif
      joined_vectors(m, k, mask, r, f);
  }
  grit_rnea_pairs(m, k, h, r);
}

void grit_fluid_partials_add(const grit_model *m, const grit_kin *k, double h, grit_rnea *r, grit_fluid_partials *f) {
  if (r->pairs_due) {
    merged(m, k, h, r, f);
    return;
  }
  if (!f->old) {
    partials_fast(m, k, h, r, f);
    return;
  }
  const char *mask = r->on;
  body_terms(m, k, mask, f);
  for (int i = 0; i < m->nv; ++i)
    if (mask[m->dof_tree[i]]) dof_vectors(m, k, r, i, f);
  for (int t = 0; t < m->ntree; ++t) {
    if (!mask[t]) continue;
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    double *DQ = r->DQ + m->tree_madr[t], *DV = r->DV + m->tree_madr[t];
    for (int i = adr; i < adr + n; ++i)
      for (int j = i; j >= 0; j = m->dof_parent[j]) { /* j on i's path to the root, i itself included */
        const int ii = i - adr, jj = j - adr;
        const double *kri = f->kr + 6 * i, *Sj = k->cdof + 6 * j;
        DQ[ii * n + jj] -= h * grit_sv_dot(kri, f->y + 6 * j); /* i moves with j */
        DV[ii * n + jj] += h * grit_sv_dot(kri, Sj);
        if (j == i) continue;
        /* row j above column i: sees the whole change, but within a group (a ball) moves with i */
        DQ[jj * n + ii] += h * (r->grp[j] == r->grp[i] ? -grit_sv_dot(f->kr + 6 * j, f->y + 6 * i) : grit_sv_dot(Sj, f->wq + 6 * i));
        DV[jj * n + ii] += h * grit_sv_dot(Sj, f->wv + 6 * i);
      }
  }
}
