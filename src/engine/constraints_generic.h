/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_generic.h — the constraint glue written once for any scalar type (see
 * constraints_decl_generic.h); included by constraints.c once per scalar. */

/* Column j of F^T J_p for a free joint's translation i (e_i: row i of F) and for any other dof (cdof x p
 * plus its linear part), added with the sign. A translation's column is the value the general products
 * give for a finite p (x * 1 and x * 0 + y are exact; only the sign of a zero may differ), without them:
 * on dual numbers these columns are a third of a free body's contact Jacobian's cost (the derivatives'
 * position passes). */
static inline void GS_NAME(cj_translation)(const GS F[9], int i, double sign, int n, int j, GS *out) {
  for (int r = 0; r < 3; ++r) out[r * n + j] = GS_ADD(out[r * n + j], GS_SCALE(F[3 * i + r], sign));
}
static inline void GS_NAME(cj_column)(const GS *cdof, const GS p[3], const GS F[9], double sign, int n, int j,
                                      GS *out) {
  GS lin[3];
  GS_NAME(grit_sv_point_velocity)(lin, cdof, p);
  for (int r = 0; r < 3; ++r) { /* row r of F^T: column r of F */
    const GS s = GS_FMA(F[r], lin[0], GS_FMA(F[3 + r], lin[1], GS_MUL(F[6 + r], lin[2])));
    out[r * n + j] = GS_ADD(out[r * n + j], GS_SCALE(s, sign));
  }
}

void GS_NAME(grit_contact_jacobian_add)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, const GS p[3],
                                        int t, const GS F[9], double sign, GS *out, GS *scratch) {
  const int n = m->tree_dofnum[t], adr = m->tree_dofadr[t];
  (void)scratch;
  int dof = m->body_lastdof[body];
  if (dof >= 5) {
    /* The body's last joint free (a free body, the hydroelastic coin's 152 patch points): its six dofs, chained
     * in order (model.c), as the loop below takes them but without its per-dof lookups; each column is
     * written once, so the order is free. The same operations: the same bits. */
    const int jn = m->dof_jnt[dof], d0 = dof - 5;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && m->jnt_dofadr[jn] == d0 && d0 >= adr && dof < adr + n) {
      if (n == 6) { /* the tree is the free body alone (the coin's patch points): its row stride a constant, the
                       loops unrolled; a free joint's body hangs from the world, so no dof precedes d0 */
        for (int i = 0; i < 3; ++i) GS_NAME(cj_translation)(F, i, sign, 6, i, out);
        for (int i = 3; i < 6; ++i) GS_NAME(cj_column)(k->cdof + 6 * (d0 + i), p, F, sign, 6, i, out);
        return;
      }
      for (int i = 0; i < 3; ++i) GS_NAME(cj_translation)(F, i, sign, n, d0 - adr + i, out);
      for (int i = 3; i < 6; ++i) GS_NAME(cj_column)(k->cdof + 6 * (d0 + i), p, F, sign, n, d0 - adr + i, out);
      dof = m->dof_parent[d0];
    }
  }
  /* column by column along the body's chain of dofs (the other columns of J_p are zero) */
  for (; dof >= 0; dof = m->dof_parent[dof]) {
    const int j = dof - adr, jn = m->dof_jnt[dof];
    if (j < 0 || j >= n) continue;
    if (m->jnt_type[jn] == GRIT_JOINT_FREE && dof - m->jnt_dofadr[jn] < 3)
      GS_NAME(cj_translation)(F, dof - m->jnt_dofadr[jn], sign, n, j, out);
    else
      GS_NAME(cj_column)(k->cdof + 6 * dof, p, F, sign, n, j, out);
  }
}

void GS_NAME(grit_pair_params)(const GS_NAME(grit_geom_params) * g, int ga, int gb, GS_NAME(grit_contact_params) * p) {
  const GS ka = g->stiffness[ga], kb = g->stiffness[gb];
  const int pa = g->priority ? g->priority[ga] : 0, pb = g->priority ? g->priority[gb] : 0;
  const int ca = g->condim && g->condim[ga] == 1 ? 1 : 3, cb = g->condim && g->condim[gb] == 1 ? 1 : 3;
  const int cd = pa > pb ? ca : pb > pa ? cb : ca > cb ? ca : cb;
  p->mu = cd == 1 ? GS_C(0.0) : pa > pb ? g->friction[ga] : pb > pa ? g->friction[gb] : GS_FMAX(g->friction[ga], g->friction[gb]);
  p->k = GS_DIV(GS_SCALE(GS_MUL(ka, kb), 2.0), GS_ADD(ka, kb));
  p->d = GS_SCALE(GS_ADD(g->dissipation[ga], g->dissipation[gb]), 0.5);
  p->tau_d = GS_SCALE(GS_ADD(g->tau_d[ga], g->tau_d[gb]), 0.5);
  if (g->dissipation_free) p->d = p->tau_d = GS_C(0.0); /* quasistatic: no velocities to damp */
}

/* Exactly zero, partials included (a column of J off the contact's chain of dofs). */
static inline int GS_NAME(delassus_zero)(GS a) {
#if GS_IS_DUAL
  int zero = a.v == 0.0;
  for (int i = 0; i < GRIT_DUAL_N; ++i) zero &= a.d[i] == 0.0;
  return zero;
#else
  return a == 0.0;
#endif
}

/* Row i of the forward substitution for three rows at once: each row's operations in the order of the
 * one-row loop, the factor's entry loaded once for the three (on duals it is 72 bytes; in double the
 * three chains of subtractions overlap instead of waiting on each other). */
static inline void GS_NAME(delassus_row3)(const GS *L, const double *C, int n, int j0, int j, GS v[3], GS y[3][64]) {
  if (C) {
    for (int q = j0; q < j; ++q) {
      const double c = C[j * n + q];
      for (int r = 0; r < 3; ++r) v[r] = GS_SUB(v[r], GS_SCALE(y[r][q], c));
    }
    for (int r = 0; r < 3; ++r) y[r][j] = GS_DIVC(v[r], C[j * n + j]);
  } else {
    for (int q = j0; q < j; ++q) {
      const GS l = L[j * n + q];
      for (int r = 0; r < 3; ++r) v[r] = GS_SUB(v[r], GS_MUL(l, y[r][q]));
    }
    for (int r = 0; r < 3; ++r) y[r][j] = GS_DIV(v[r], L[j * n + j]);
  }
}

/* always inlined: into grit_delassus_c as before this function was split out (GCC otherwise calls it,
 * +14 % instructions in the estimates of MuJoCo's hammock) */
#ifndef CONSTRAINTS_ALWAYS_INLINE
#if defined(__GNUC__)
#define CONSTRAINTS_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define CONSTRAINTS_ALWAYS_INLINE inline
#endif
#endif
static CONSTRAINTS_ALWAYS_INLINE GS GS_NAME(delassus_tree_in)(const grit_model *m, const GS *Achol, const double *Lc,
                                                              const char *cmask, int dim, int t, const GS *Jk, GS *tmp,
                                                              GS w) {
  const int n = m->tree_dofnum[t];
  const GS *L = Achol + m->tree_madr[t];
  const double *C = cmask && cmask[t] ? Lc + m->tree_madr[t] : NULL;
  /* The columns before the first nonzero one of J (a joint limit's dofs before its own; a body's
   * dofs before its chain) give y = 0 exactly, add 0 to w and subtract 0 from the later entries:
   * skipped. w is the same to the bit (only the signs of zeros inside could differ, and w, a sum of
   * squares from +0, never holds a -0; no division by them). */
  int j0 = n;
  for (int r = 0; r < dim; ++r)
    for (int j = 0; j < j0; ++j)
      if (!GS_NAME(delassus_zero)(Jk[r * n + j])) {
        j0 = j;
        break;
      }
  if (dim == 3 && n <= 64) { /* a contact: the three rows in one pass over the factor */
    GS y[3][64];
    for (int j = j0; j < n; ++j) {
      GS v[3] = {Jk[j], Jk[n + j], Jk[2 * n + j]};
      GS_NAME(delassus_row3)(L, C, n, j0, j, v, y);
    }
    for (int r = 0; r < 3; ++r) /* w's sum in the one-row loop's order */
      for (int j = j0; j < n; ++j) w = GS_FMA(y[r][j], y[r][j], w);
    return w;
  }
  for (int r = 0; r < dim; ++r)
    for (int j = j0; j < n; ++j) { /* forward substitution L y = J_r^T */
      GS v = Jk[r * n + j];
      if (C) { /* L constant: L y and y / L with the same values (products commute) */
        for (int q = j0; q < j; ++q) v = GS_SUB(v, GS_SCALE(tmp[q], C[j * n + q]));
        tmp[j] = GS_DIVC(v, C[j * n + j]);
      } else {
        for (int q = j0; q < j; ++q) v = GS_SUB(v, GS_MUL(L[j * n + q], tmp[q]));
        tmp[j] = GS_DIV(v, L[j * n + j]);
      }
      w = GS_FMA(tmp[j], tmp[j], w);
    }
  return w;
}

#if !GS_IS_DUAL /* double only (derivatives_avx2.c instantiates this file's dual functions again) */
GS GS_NAME(grit_delassus_tree)(const grit_model *m, const GS *Achol, int dim, int t, const GS *Jk, GS *tmp, GS w) {
  return GS_NAME(delassus_tree_in)(m, Achol, NULL, NULL, dim, t, Jk, tmp, w);
}
#endif

GS GS_NAME(grit_delassus_c)(const grit_model *m, const GS *Achol, const double *Lc, const char *cmask, int dim,
                            int ntree, const int tree[2], const GS *const J[2], GS *tmp) {
  GS w = GS_C(0.0); /* sum over rows and trees of |L^-1 J_row^T|^2 */
  for (int k = 0; k < ntree; ++k) w = GS_NAME(delassus_tree_in)(m, Achol, Lc, cmask, dim, tree[k], J[k], tmp, w);
  return GS_SCALE(w, 1.0 / dim);
}

GS GS_NAME(grit_delassus)(const grit_model *m, const GS *Achol, int dim, int ntree, const int tree[2],
                          const GS *const J[2], GS *tmp) { /* grit_delassus_c's loop, no constant factor */
  GS w = GS_C(0.0);
  for (int k = 0; k < ntree; ++k) w = GS_NAME(delassus_tree_in)(m, Achol, NULL, NULL, dim, tree[k], J[k], tmp, w);
  return GS_SCALE(w, 1.0 / dim);
}

/* Near-rigid regime (SAP, Castro et al. 2022): a constraint's compliance is bounded below by
 * beta^2 / (4 pi^2) w, which makes the stiffest resolvable spring oscillate with a period of about
 * beta time steps; beta = 1. */
#define GRIT_NEAR_RIGID_FACTOR (1.0 / (4.0 * 3.14159265358979323846 * 3.14159265358979323846))

/* The Delassus estimate that the friction regularizations use: w, but no more than the value at which
 * the regularized stiction velocity sigma w mu gamma_ref under the contact's static load gamma_ref =
 * dt k (-phi0)+ reaches the stiction tolerance v_s. w is the inverse mass of the contact's own bodies;
 * when the contact carries the weight of heavier bodies (a 1e3 kg box on a 1e-3 kg one), sigma w mu
 * gamma_ref would let it creep at metres per second (docs/contact.md, "Extreme mass ratios"). */
static inline GS GS_NAME(friction_w)(GS w, double dt, const grit_step_settings *st,
                                     const GS_NAME(grit_contact_params) * p) {
  GS load = GS_MUL(GS_MUL(p->mu, GS_SCALE(p->k, dt)), GS_FMAX(GS_NEG(p->phi0), GS_C(0.0)));
  if (!(GS_V(load) > 0.0)) return w;
  GS cap = GS_DIV(GS_C(st->stiction_tolerance / st->sigma), load);
  return GS_FMIN(w, cap);
}

GS GS_NAME(grit_equality_rn)(GS w) {
  /* w = 0: no dof moves the constraint here (a weld's rotation rows on a slide): its rows of J are
   * zero, so any R > 0 leaves the step unchanged; R = 0 would make 1/R and then H non-finite */
  return GS_V(w) > 0.0 ? GS_SCALE(w, GRIT_NEAR_RIGID_FACTOR) : GS_C(1.0);
}

void GS_NAME(grit_params_finalize)(int kind, GS w, double dt, const grit_step_settings *st,
                                   GS_NAME(grit_contact_params) * p) {
  if (kind == GRIT_CONSTRAINT_LAGGED || kind == GRIT_CONSTRAINT_SIMILAR) {
    if (st->gradient_smoothing_barrier > 0.0 && GS_V(p->smooth) > 0.0) { /* a force at a distance */
      GS_NAME(grit_contact_barrier_params)(p, w, dt, st->gradient_smoothing_barrier, kind == GRIT_CONSTRAINT_LAGGED);
    } else {
      GS_NAME(grit_contact_smoothing_params)(p, w, dt);
      if (kind == GRIT_CONSTRAINT_LAGGED && GS_V(p->grip) > 0.0) p->gn0 = GS_ADD(p->gn0, p->grip); /* film_add */
    }
  }
  switch (kind) {
    case GRIT_CONSTRAINT_SAP: {
      GS dtau = GS_ADDC(p->tau_d, dt);
      p->eps = GS_SCALE(GS_NAME(friction_w)(w, dt, st, p), st->sigma);
      /* The user's compliance, exactly: no near-rigid bound on contacts, whose stiffness is always
         finite in grit (docs/contact.md, "Extreme mass ratios": the bound from the light body's w
         softened a contact loaded by a heavy body a thousandfold). */
      p->Rn = GS_DIV(GS_C(1.0), GS_MUL(GS_SCALE(p->k, dt), dtau));
      p->vhat = GS_NEG(GS_DIV(p->phi0, dtau));
      break;
    }
    case GRIT_CONSTRAINT_LAGGED:
      p->eps = GS_C(st->stiction_tolerance);
      if (st->regularize_lagged) {
        GS we = GS_NAME(friction_w)(w, dt, st, p);
        p->eps = GS_FMAX(p->eps, GS_MUL(GS_SCALE(we, st->sigma), GS_MUL(p->mu, p->gn0)));
      }
      break;
    case GRIT_CONSTRAINT_SIMILAR:
      p->eps = GS_C(st->stiction_tolerance);
      break;
    case GRIT_CONSTRAINT_FRICTION: /* SAP's tangential regularization, R_t = sigma w */
    case GRIT_CONSTRAINT_TENDON_FRICTION:
      p->Rn = GS_SCALE(w, st->sigma);
      break;
    case GRIT_CONSTRAINT_EQUALITY:
    case GRIT_CONSTRAINT_EQUALITY_1D: /* near-rigid; the drift's time scale tau_d is set at build */
      p->Rn = GS_NAME(grit_equality_rn)(w);
      break;
    case GRIT_CONSTRAINT_TENDON_SPRING: /* no regularization: k and b are the model's */
      break;
    default: /* limit: near-rigid, dissipation time scale one step (overdamped, no bounce) */
      p->Rn = GS_SCALE(w, GRIT_NEAR_RIGID_FACTOR);
      /* v_hat = -phi0 / (2 dt): a gap closes, and a violation within the band `width` (solimplimit's,
       * 1 mm or mrad by default; resting penetrations are far below it) is removed, within one step.
       * A larger violation (a model whose initial position lies outside its range) would receive a
       * kick growing as 1/dt: 8.7 rad/s for the dm_control hopper's knee, 5 degrees out at 5 ms. Its
       * excess beyond the band is removed at the speed where a critically damped limit spring of time
       * constant tc lets its force vanish, excess / (dt + tau_d), tau_d = 2 tc dr^2 (p->tau_d, from
       * solreflimit, at least dt): v_hat is continuous, piecewise linear in phi0. */
      if (GS_V(p->phi0) >= -GS_V(p->width)) {
        p->vhat = GS_NEG(GS_SCALE(p->phi0, 0.5 / dt));
      } else {
        const GS excess = GS_NEG(GS_ADD(p->phi0, p->width));
        p->vhat = GS_ADD(GS_SCALE(p->width, 0.5 / dt), GS_DIV(excess, GS_ADDC(GS_FMAX(p->tau_d, GS_C(dt)), dt)));
      }
      break;
  }
}

GS GS_NAME(grit_constraint_eval)(int kind, const GS_NAME(grit_contact_params) * p, double dt, const GS *vc, GS *gamma,
                                 GS *G) {
  switch (kind) {
    case GRIT_CONSTRAINT_LAGGED: return GS_NAME(grit_contact_lagged)(p, dt, vc, gamma, G);
    case GRIT_CONSTRAINT_SIMILAR: return GS_NAME(grit_contact_similar)(p, dt, vc, gamma, G);
    case GRIT_CONSTRAINT_SAP: return GS_NAME(grit_contact_sap)(p, dt, vc, gamma, G);
    case GRIT_CONSTRAINT_FRICTION:
    case GRIT_CONSTRAINT_TENDON_FRICTION: return GS_NAME(grit_friction_cost)(p, dt, vc, gamma, G);
    case GRIT_CONSTRAINT_EQUALITY: return GS_NAME(grit_bilateral_cost)(p, dt, 3, vc, gamma, G);
    case GRIT_CONSTRAINT_EQUALITY_1D: return GS_NAME(grit_bilateral_cost)(p, dt, 1, vc, gamma, G);
    case GRIT_CONSTRAINT_TENDON_SPRING: return GS_NAME(grit_spring_cost)(p, dt, vc, gamma, G);
    default: return GS_NAME(grit_limit_cost)(p, vc, gamma, G);
  }
}
