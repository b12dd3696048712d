/* SPDX-License-Identifier: Apache-2.0 */
/* constraints_extra_generic.h — the rows of the joint-friction, equality and tendon constraints,
 * written once for any scalar type (see constraints_extra_decl_generic.h); included by
 * constraints_extra.c once per scalar. */

/* The world position of site s (inlined: cx_tendon_row's inlined segments left it a call) */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void GS_NAME(cx_site_pos)(const grit_model *m, const GS_NAME(grit_kin) * k, int s, GS p[3]) {
  const int b = m->site_body[s];
  GS_NAME(grit_tf_apply_c)(p, k->xpos + 3 * b, k->xmat + 9 * b, m->site_pos + 3 * s);
}

/* Site s's world position through a cache of the last CX_SITES sites of a tendon row (ps: their ids, -1 free;
 * pn: the next slot): a path revisits sites (a segment's end starts the next one, a pulley's branches start
 * at a shared site: ten_J3's 16 site positions are 8 sites), each a dual transform of ~85 instructions. The
 * position is a function of (s, k) only: a copy is the same bits. */
#define CX_SITES 4
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void GS_NAME(cx_site_pos_kept)(const grit_model *m, const GS_NAME(grit_kin) * k, int s, GS p[3],
                                             int ps[CX_SITES], GS pp[CX_SITES][3], int *pn) {
  for (int i = 0; i < CX_SITES; ++i)
    if (ps[i] == s) {
      p[0] = pp[i][0], p[1] = pp[i][1], p[2] = pp[i][2];
      return;
    }
  GS_NAME(cx_site_pos)(m, k, s, p);
  ps[*pn] = s, pp[*pn][0] = p[0], pp[*pn][1] = p[1], pp[*pn][2] = p[2];
  *pn = (*pn + 1) % CX_SITES;
}

/* u^T of the velocity of point p for the twist t: grit_sv_point_velocity's operations and the dot's,
 * in their order (the same bits), inlined: as a call it passed its dual numbers through memory, a sixth
 * of the derivative call on the flag's spring tendons (derivatives: compab). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline GS GS_NAME(cx_u_point_velocity)(const GS t[6], const GS p[3], const GS u[3]) {
  GS c[3], lin[3];
  c[0] = GS_SUB(GS_MUL(t[1], p[2]), GS_MUL(t[2], p[1]));
  c[1] = GS_SUB(GS_MUL(t[2], p[0]), GS_MUL(t[0], p[2]));
  c[2] = GS_SUB(GS_MUL(t[0], p[1]), GS_MUL(t[1], p[0]));
  for (int i = 0; i < 3; ++i) lin[i] = GS_ADD(c[i], t[3 + i]);
  return GS_FMA(u[0], lin[0], GS_FMA(u[1], lin[1], GS_MUL(u[2], lin[2])));
}

/* The same term for a slide's twist (w = +0 exactly, value and partials, as kinematics sets it): u^T l, the dot's
 * operations on l in place of w x p + l. w x p is +-0 there, and x + +-0 is x unless x is a zero: the same bits
 * but for a zero's sign (where the axis has a zero component and u's term with it is all zeros). The particles'
 * slides of two trees' tendons (MuJoCo's grid2pin, hammock, cloth) paid twelve dual operations a dof for it. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline GS GS_NAME(cx_u_slide)(const GS t[6], const GS u[3]) {
  return GS_FMA(u[0], t[3], GS_FMA(u[1], t[4], GS_MUL(u[2], t[5])));
}

/* The same term u^T (w x p + l) as (p x u)^T w + u^T l, a = p x u formed once per segment side: six products
 * a dof instead of fifteen operations (u^T (w x p) = w^T (p x u); rounding differs, ~1e-16 of the term;
 * m->ten_point_cross: cx_u_point_velocity's). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline GS GS_NAME(cx_u_twist)(const GS t[6], const GS a[3], const GS u[3]) {
  GS s = GS_MUL(t[0], a[0]);
  s = GS_FMA(t[1], a[1], s);
  s = GS_FMA(t[2], a[2], s);
  s = GS_FMA(t[3], u[0], s);
  s = GS_FMA(t[4], u[1], s);
  return GS_FMA(t[5], u[2], s);
}

/* |y - x| / div for the points x of body bx and y of body by (world), and if J is not NULL,
 * J += u^T (J_y - J_x) / div with u the unit vector from x to y (div: the branch's pulley divisor); dof i's
 * entry at J[i - off] (off: the first dof of J's tree when J is a tree's block, else 0). Inlined into each
 * variant of cx_tendon_row: where off is the constant 0 its index costs nothing (as a call, the hammock's
 * and cloth's two-tree rows paid 7 % more in cx_segment). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline GS GS_NAME(cx_segment)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS x[3], int bx, const GS y[3],
                              int by, double div, GS *J, int off) {
  GS d[3];
  GS_NAME(grit_v3_sub)(d, y, x);
  const GS len = GS_NAME(grit_v3_norm)(d);
  if (!J || !(GS_V(len) > 0.0)) return GS_SCALE(len, 1.0 / div); /* coincident points: no direction, no force */
  const GS ld = GS_SCALE(len, div);
  const GS u[3] = {GS_DIV(d[0], ld), GS_DIV(d[1], ld), GS_DIV(d[2], ld)};
  /* u^T of the point Jacobian, over the dofs on the body's path to the root only: the other columns of
   * the point Jacobian are zeros, whose products (+-0) left the +0 entries of J as they were; bodies of
   * two trees (or one static) have no dof in common: each path's loop, without the walk's comparisons */
  if (m->ten_full_paths || m->body_tree[bx] != m->body_tree[by]) { /* (short paths: particles' slides) */
    for (int s = 0; s < 2; ++s) {
      const GS *pt = s ? y : x;
      for (int dof = m->body_lastdof[s ? by : bx]; dof >= 0; dof = m->dof_parent[dof]) { /* static: none */
        const GS t = m->jnt_type[m->dof_jnt[dof]] == GRIT_JOINT_SLIDE && !m->ten_slide_full
                         ? GS_NAME(cx_u_slide)(k->cdof + 6 * dof, u)
                         : GS_NAME(cx_u_point_velocity)(k->cdof + 6 * dof, pt, u);
        J[dof - off] = s ? GS_ADD(J[dof - off], t) : GS_SUB(J[dof - off], t);
      }
    }
    return GS_SCALE(len, 1.0 / div);
  }
  /* one tree: the walk below, its terms by cx_u_twist (the two crosses pay off over a chain's dofs; on two
   * trees' particles, three slides a side, they did not: +0.5 % on grid2pin) */
  const int cross = m->ten_point_cross;
  GS ax[3], ay[3]; /* x x u, y x u */
  if (!cross) GS_NAME(grit_v3_cross)(ax, x, u), GS_NAME(grit_v3_cross)(ay, y, u);
  /* A dof on both paths (from the bodies' common ancestor up) moves x and y by w x p + l each: its term
   * u^T (w x (y - x)) is zero, u being along y - x (for every q: its partials too); computed as two
   * products subtracted it was rounding, ~1e-17 of the others, which made a tendon between neighbours
   * of the flag's tree a row over ~150 dofs instead of a dozen. The walk stops where the paths meet
   * (dof_parent[i] < i: the larger dof is below the meeting point); each dof below it is on one path
   * only and gets the same one term as before, in the same segment order. */
  int i = m->body_lastdof[bx], j = m->body_lastdof[by];
  while (!cross && i != j) {
    if (i > j) {
      J[i - off] = GS_SUB(J[i - off], GS_NAME(cx_u_twist)(k->cdof + 6 * i, ax, u));
      i = m->dof_parent[i];
    } else {
      J[j - off] = GS_ADD(J[j - off], GS_NAME(cx_u_twist)(k->cdof + 6 * j, ay, u));
      j = m->dof_parent[j];
    }
  }
  while (i != j) {
    if (i > j) {
      J[i - off] = GS_SUB(J[i - off], GS_NAME(cx_u_point_velocity)(k->cdof + 6 * i, x, u));
      i = m->dof_parent[i];
    } else {
      J[j - off] = GS_ADD(J[j - off], GS_NAME(cx_u_point_velocity)(k->cdof + 6 * j, y, u));
      j = m->dof_parent[j];
    }
  }
  return GS_SCALE(len, 1.0 / div);
}

/* grit_tendon_length_jacobian with, if cols is not NULL, J zeroed only on the ncols dofs cols (a superset
 * of those the tendon's row can be nonzero on: the others are left as they are, read by nothing); dof i's
 * entry at J[i - off] (cx_segment). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline GS GS_NAME(cx_tendon_row_in)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int tendon,
                                           GS *J, const int *cols, int ncols, int off, int zeroed) {
  const int adr = m->ten_adr[tendon], num = m->ten_num[tendon], nv = m->nv;
  if (zeroed) /* J is +0 already (the caller zeroed it whole) */
    ;
  else if (J && cols)
    for (int e = 0; e < ncols; ++e) J[cols[e] - off] = GS_C(0.0);
  else if (J)
    for (int i = 0; i < nv; ++i) J[i] = GS_C(0.0);
  GS L = GS_C(0.0);
  if (m->ten_type[tendon] == GRIT_TENDON_FIXED) { /* L = sum coef_i q_i */
    for (int e = adr; e < adr + num; ++e) {
      const int j = m->wrap_obj[e];
      L = GS_FMA(GS_C(m->wrap_coef[e]), q[m->jnt_qposadr[j]], L);
      if (J) J[m->jnt_dofadr[j] - off] = GS_ADDC(J[m->jnt_dofadr[j] - off], m->wrap_coef[e]);
    }
    return L;
  }
  /* spatial: straight segments between consecutive sites, or the path around a wrap geometry between
   * two sites (its tangent points moving with the geometry: the arc between them is rigid, and the
   * path's optimality makes their sliding second order); a pulley starts a new branch, whose segments
   * count divided by its divisor, and no segment crosses it */
  int e = adr, ps[CX_SITES] = {-1, -1, -1, -1}, pn = 0;
  GS pp[CX_SITES][3];
  double div = 1.0;
  while (e + 1 < adr + num) {
    if (m->wrap_geom[e] == GRIT_WRAP_PULLEY || m->wrap_geom[e + 1] == GRIT_WRAP_PULLEY) {
      if (m->wrap_geom[e] == GRIT_WRAP_PULLEY) div = m->wrap_coef[e];
      e++;
      continue;
    }
    const int sa = m->wrap_obj[e], ba = m->site_body[sa];
    GS a[3], b[3];
    GS_NAME(cx_site_pos_kept)(m, k, sa, a, ps, pp, &pn);
    const int g = m->wrap_geom[e + 1], sb = m->wrap_obj[g >= 0 ? e + 2 : e + 1], bb = m->site_body[sb];
    GS_NAME(cx_site_pos_kept)(m, k, sb, b, ps, pp, &pn);
    GS wl = GS_C(-1.0), w[6];
    if (g >= 0) {
      const int gb = m->geom_body[g], side = m->wrap_obj[e + 1];
      GS gp[3], gR[9], sp[3];
      GS_NAME(grit_tf_compose_c)(gp, gR, k->xpos + 3 * gb, k->xmat + 9 * gb, m->geom_pos + 3 * g, m->geom_mat + 9 * g);
      if (side >= 0) GS_NAME(cx_site_pos)(m, k, side, sp);
      wl = GS_NAME(tendon_wrap)(m, g, gp, gR, a, b, side >= 0 ? sp : NULL, w);
      if (GS_V(wl) >= 0.0) {
        L = GS_ADD(L, GS_ADD(GS_SCALE(wl, 1.0 / div), GS_NAME(cx_segment)(m, k, a, ba, w, gb, div, J, off)));
        L = GS_ADD(L, GS_NAME(cx_segment)(m, k, w + 3, gb, b, bb, div, J, off));
      }
    }
    if (GS_V(wl) < 0.0) L = GS_ADD(L, GS_NAME(cx_segment)(m, k, a, ba, b, bb, div, J, off));
    e += g >= 0 ? 2 : 1;
  }
  return L;
}

/* cx_tendon_row_in on a row over all dofs (off 0), and on a tree's block (cx_row_in_place) */
static GS GS_NAME(cx_tendon_row)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int tendon, GS *J,
                                 const int *cols, int ncols) {
  return GS_NAME(cx_tendon_row_in)(m, k, q, tendon, J, cols, ncols, 0, 0);
}
/* (its callers, grit_cx_rows_cols' rows in place, zero J's block whole first: the columns are not zeroed again,
 * +0 over +0; the flag's spring rows, ~50 columns of 9 doubles each in every evaluation) */
static GS GS_NAME(cx_tendon_row_off)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int tendon, GS *J,
                                     const int *cols, int ncols, int off) {
  return GS_NAME(cx_tendon_row_in)(m, k, q, tendon, J, cols, ncols, off, 1);
}

GS GS_NAME(grit_tendon_length_jacobian)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int tendon,
                                        GS *J, GS *scratch) {
  (void)scratch; /* (the segments' Jacobians walk the bodies' paths: no point Jacobian stored) */
  return GS_NAME(cx_tendon_row)(m, k, q, tendon, J, NULL, 0);
}

/* J[i] row r <- sign * the entries of the dense row `row` in tree tree[i]'s dofs (added); with cols, only
 * on those dofs (where the row can be nonzero: elsewhere sign * +0 + +0 leaves J's +0). */
static void GS_NAME(cx_scatter_row)(const grit_model *m, int ntree, const int tree[2], GS *const J[2], int dim, int r,
                                    const GS *row, GS sign, const int *cols, int ncols) {
  for (int i = 0; i < ntree && cols; ++i) {
    const int n = m->tree_dofnum[tree[i]], adr = m->tree_dofadr[tree[i]];
    for (int e = 0; e < ncols; ++e)
      if (cols[e] >= adr && cols[e] < adr + n)
        J[i][r * n + cols[e] - adr] = GS_FMA(sign, row[cols[e]], J[i][r * n + cols[e] - adr]);
  }
  for (int i = 0; i < ntree && !cols; ++i) {
    const int n = m->tree_dofnum[tree[i]], adr = m->tree_dofadr[tree[i]];
    for (int j = 0; j < n; ++j) J[i][r * n + j] = GS_FMA(sign, row[adr + j], J[i][r * n + j]);
  }
  (void)dim;
}

/* Adds sign * (3 x n) Jacobian of the point p (world) of `body` (rows: linear, or with `rot` the
 * body's angular velocity) into the blocks J. scratch: 6 nv. */
static void GS_NAME(cx_point_rows)(const grit_model *m, const GS_NAME(grit_kin) * k, int body, const GS p[3], int rot,
                                   double sign, int ntree, const int tree[2], GS *const J[2], GS *scratch,
                                   const int *cols, int ncols) {
  if (m->body_lastdof[body] < 0) return; /* static: no columns */
  if (cols) { /* the columns on the body's path only (cols holds them): the others add sign * +0 to J */
    /* A free joint's translations have the twist (+0, e_i), value and partials (kin_body_subspaces; the
     * rigid path's set_const): w x p is +-0 for finite p, and +-0 + e_i's entries (1 or +0, partials +0) is
     * e_i's: the point velocity is e_i bit for bit, its cross product not needed (a free body's connect or
     * weld: half its dofs, ~145 instructions a dof on duals). p finite: 0 x is +0 for every entry. Duals only. */
    int fin = rot || !GS_IS_DUAL ? 0 : -1; /* -1: p not tested yet (doubles: the cross is ~10 instructions, the
                                               test cost the step more than it saved) */
    for (int i = 0; i < ntree; ++i) {
      const int n = m->tree_dofnum[tree[i]], adr = m->tree_dofadr[tree[i]];
      for (int dof = m->body_lastdof[body]; dof >= 0; dof = m->dof_parent[dof]) {
        if (dof < adr || dof >= adr + n) continue;
        const int jn = m->dof_jnt[dof];
        if (fin < 0 && m->jnt_type[jn] == GRIT_JOINT_FREE && dof < m->jnt_dofadr[jn] + 3) {
          const double *px = (const double *)p;
          double fs = 0.0 * px[0];
          for (int e = 1; e < 3 * (int)(sizeof(GS) / sizeof(double)); ++e) fs += 0.0 * px[e];
          fin = fs == 0.0;
        }
        const int tr = fin > 0 && m->jnt_type[jn] == GRIT_JOINT_FREE && dof < m->jnt_dofadr[jn] + 3;
        GS lin[3];
        if (!rot && !tr) GS_NAME(grit_sv_point_velocity)(lin, k->cdof + 6 * dof, p); /* a weld's angular rows: omega */
        const GS *src = rot ? k->cdof + 6 * dof : tr ? k->cdof + 6 * dof + 3 : lin;
        for (int r = 0; r < 3; ++r) J[i][r * n + dof - adr] = GS_FMA(GS_C(sign), src[r], J[i][r * n + dof - adr]);
      }
    }
    (void)ncols;
    return;
  }
  const int nv = m->nv;
  GS_NAME(grit_kin_point_jacobian)(m, k, body, p, scratch, scratch + 3 * nv);
  const GS *src = rot ? scratch + 3 * nv : scratch;
  for (int r = 0; r < 3; ++r) GS_NAME(cx_scatter_row)(m, ntree, tree, J, 3, r, src + r * nv, GS_C(sign), cols, ncols);
}

/* The polynomial a0 + a1 x + ... + a4 x^4 and its derivative. */
static GS GS_NAME(cx_poly)(const double *a, GS x, GS *dp) {
  GS p = GS_C(a[4]), d = GS_C(0.0);
  for (int i = 3; i >= 0; --i) {
    d = GS_FMA(d, x, p);
    p = GS_FMA(p, x, GS_C(a[i]));
  }
  *dp = d;
  return p;
}

/* A coupling y - y0 = poly(x - x0) of two coordinates with dense Jacobian rows Jy, Jx (Jx NULL: no x). */
static void GS_NAME(cx_coupling)(const grit_model *m, const double *data, GS y, GS x, const GS *Jy, const GS *Jx,
                                 int ntree, const int tree[2], GS *const J[2], GS_NAME(grit_contact_params) * p,
                                 const int *cols, int ncols) {
  GS dp = GS_C(0.0);
  const GS px = Jx ? GS_NAME(cx_poly)(data, GS_ADDC(x, -data[6]), &dp) : GS_C(data[0]);
  p->phi[0] = GS_SUB(GS_ADDC(y, -data[5]), px);
  GS_NAME(cx_scatter_row)(m, ntree, tree, J, 1, 0, Jy, GS_C(1.0), cols, ncols);
  if (Jx) GS_NAME(cx_scatter_row)(m, ntree, tree, J, 1, 0, Jx, GS_NEG(dp), cols, ncols);
}

static void GS_NAME(cx_equality)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, int eq, int part,
                                 int ntree, const int tree[2], GS *const J[2], GS_NAME(grit_contact_params) * p,
                                 GS *scratch, const int *cols, int ncols) {
  const int b1 = m->eq_obj[2 * eq], b2 = m->eq_obj[2 * eq + 1], nv = m->nv;
  const double *data = m->eq_data + GRIT_EQ_NDATA * eq;
  switch (m->eq_type[eq]) {
    case GRIT_EQ_CONNECT: { /* phi = p2 - p1, the anchor on each body */
      GS p1[3], p2[3];
      GS_NAME(grit_tf_apply_c)(p1, k->xpos + 3 * b1, k->xmat + 9 * b1, data);
      GS_NAME(grit_tf_apply_c)(p2, k->xpos + 3 * b2, k->xmat + 9 * b2, data + 3);
      GS_NAME(grit_v3_sub)(p->phi, p2, p1);
      GS_NAME(cx_point_rows)(m, k, b2, p2, 0, 1.0, ntree, tree, J, scratch, cols, ncols);
      GS_NAME(cx_point_rows)(m, k, b1, p1, 0, -1.0, ntree, tree, J, scratch, cols, ncols);
      break;
    }
    case GRIT_EQ_WELD:
      if (part == 0) { /* body 2's origin at x1 + R1 relpos */
        GS p1[3];
        GS_NAME(grit_tf_apply_c)(p1, k->xpos + 3 * b1, k->xmat + 9 * b1, data);
        GS_NAME(grit_v3_sub)(p->phi, k->xpos + 3 * b2, p1);
        GS_NAME(cx_point_rows)(m, k, b2, k->xpos + 3 * b2, 0, 1.0, ntree, tree, J, scratch, cols, ncols);
        GS_NAME(cx_point_rows)(m, k, b1, p1, 0, -1.0, ntree, tree, J, scratch, cols, ncols);
      } else { /* body 2's orientation q1 relquat: phi = log(q2 (q1 relquat)^-1) in the world frame,
                * whose rate is w2 - w1 to first order in phi */
        GS qt[4], qc[4], qe[4];
        GS_NAME(grit_quat_mul_c)(qt, k->xquat + 4 * b1, data + 3);
        GS_NAME(grit_quat_conj)(qc, qt);
        GS_NAME(grit_quat_mul)(qe, k->xquat + 4 * b2, qc);
        if (GS_V(qe[0]) < 0.0) /* the shorter way round */
          for (int i = 0; i < 4; ++i) qe[i] = GS_NEG(qe[i]);
        GS_NAME(grit_quat_log)(p->phi, qe);
        GS_NAME(cx_point_rows)(m, k, b2, k->xpos + 3 * b2, 1, 1.0, ntree, tree, J, scratch, cols, ncols);
        GS_NAME(cx_point_rows)(m, k, b1, k->xpos + 3 * b1, 1, -1.0, ntree, tree, J, scratch, cols, ncols);
      }
      break;
    case GRIT_EQ_JOINT: {
      GS *Jy = scratch, *Jx = scratch + nv;
      if (cols) /* (cols holds both joints' dofs) */
        for (int e = 0; e < ncols; ++e) Jy[cols[e]] = Jx[cols[e]] = GS_C(0.0);
      else
        for (int i = 0; i < 2 * nv; ++i) scratch[i] = GS_C(0.0);
      Jy[m->jnt_dofadr[b1]] = GS_C(1.0);
      if (b2 >= 0) Jx[m->jnt_dofadr[b2]] = GS_C(1.0);
      GS_NAME(cx_coupling)(m, data, q[m->jnt_qposadr[b1]], b2 >= 0 ? q[m->jnt_qposadr[b2]] : GS_C(0.0), Jy,
                           b2 >= 0 ? Jx : NULL, ntree, tree, J, p, cols, ncols);
      break;
    }
    default: { /* GRIT_EQ_TENDON */
      GS *Jy = scratch + 3 * nv, *Jx = scratch + 4 * nv;
      const GS y = GS_NAME(cx_tendon_row)(m, k, q, b1, Jy, cols, ncols);
      const GS x = b2 >= 0 ? GS_NAME(cx_tendon_row)(m, k, q, b2, Jx, cols, ncols) : GS_C(0.0);
      GS_NAME(cx_coupling)(m, data, y, x, Jy, b2 >= 0 ? Jx : NULL, ntree, tree, J, p, cols, ncols);
      break;
    }
  }
}

/* Whether a tendon's row of sign +1 is built straight into J's block (J zeroed above): one tree, its listed
 * columns (all in that tree). cx_scatter_row's 1 r + (+0) is r itself: a row entry is never -0 (a sum begun
 * at +0). Dual numbers too: the scatter's partial (0 r + 1 r') + (+0) is r' unless r' is -0, and a row's
 * partials are never -0 either (begun at GS_C(0)'s +0, then only added to or subtracted from: x - x and
 * +0 + -0 round to +0; a fixed tendon's constant leaves them). m->ten_row_scatter: the scatter, as before
 * (tests). On the flag the scatter was 3 % of its step, 8 % of its derivative call. */
static inline int GS_NAME(cx_row_in_place)(const grit_model *m, int ntree, const int *cols) {
  return cols && ntree == 1 && !m->ten_row_scatter;
}

/* grit_cx_rows_cols on J blocks already +0 (wherever the row's build does not write: with cols, off the listed
 * columns; without, everywhere). */
static void GS_NAME(cx_rows_zeroed)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, double dt, int kind,
                                    int source, int ntree, const int tree[2], GS *const J[2],
                                    GS_NAME(grit_contact_params) * p, GS *scratch, const int *cols, int ncols) {
  switch (kind) {
    case GRIT_CONSTRAINT_FRICTION: /* J = e_dof */
      J[0][source - m->tree_dofadr[tree[0]]] = GS_C(1.0);
      p->k = GS_C(m->dof_frictionloss[source]);
      break;
    case GRIT_CONSTRAINT_EQUALITY:
    case GRIT_CONSTRAINT_EQUALITY_1D:
      GS_NAME(cx_equality)(m, k, q, source / 2, source % 2, ntree, tree, J, p, scratch, cols, ncols);
      p->tau_d = GS_C(fmax(m->eq_taud[source / 2], dt));
      break;
    case GRIT_CONSTRAINT_TENDON_LIMIT: { /* phi0 = L - lower or upper - L, J = +-dL/dv */
      const int t = source / 2, side = source % 2;
      GS *row = scratch + 3 * m->nv;
      const int in = side == 0 && GS_NAME(cx_row_in_place)(m, ntree, cols);
      const GS L = in ? GS_NAME(cx_tendon_row_off)(m, k, q, t, J[0], cols, ncols, m->tree_dofadr[tree[0]])
                      : GS_NAME(cx_tendon_row)(m, k, q, t, row, cols, ncols);
      p->phi0 = side == 0 ? GS_ADDC(L, -m->ten_range[2 * t]) : GS_NEG(GS_ADDC(L, -m->ten_range[2 * t + 1]));
      if (!in) GS_NAME(cx_scatter_row)(m, ntree, tree, J, 1, 0, row, GS_C(side == 0 ? 1.0 : -1.0), cols, ncols);
      p->tau_d = GS_C(m->ten_limit_taud[t]);
      p->width = GS_C(m->ten_limit_width[t]);
      break;
    }
    case GRIT_CONSTRAINT_TENDON_FRICTION: { /* J = dL/dv */
      GS *row = scratch + 3 * m->nv;
      const int in = GS_NAME(cx_row_in_place)(m, ntree, cols);
      if (in) (void)GS_NAME(cx_tendon_row_off)(m, k, q, source, J[0], cols, ncols, m->tree_dofadr[tree[0]]);
      else (void)GS_NAME(cx_tendon_row)(m, k, q, source, row, cols, ncols);
      if (!in) GS_NAME(cx_scatter_row)(m, ntree, tree, J, 1, 0, row, GS_C(1.0), cols, ncols);
      p->k = GS_C(m->ten_frictionloss[source]);
      break;
    }
    default: { /* GRIT_CONSTRAINT_TENDON_SPRING: stretch x0 = L - rest length */
      GS *row = scratch + 3 * m->nv;
      const int in = GS_NAME(cx_row_in_place)(m, ntree, cols);
      const GS L = in ? GS_NAME(cx_tendon_row_off)(m, k, q, source, J[0], cols, ncols, m->tree_dofadr[tree[0]])
                      : GS_NAME(cx_tendon_row)(m, k, q, source, row, cols, ncols);
      p->phi0 = GS_ADDC(L, -m->ten_springlength[source]);
      if (!in) GS_NAME(cx_scatter_row)(m, ntree, tree, J, 1, 0, row, GS_C(1.0), cols, ncols);
      p->k = GS_C(m->ten_stiffness[source]);
      p->d = GS_C(m->ten_damping[source]);
      break;
    }
  }
}

void GS_NAME(grit_cx_rows_cols)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, double dt, int kind,
                                int source, int ntree, const int tree[2], GS *const J[2],
                                GS_NAME(grit_contact_params) * p, GS *scratch, const int *cols, int ncols) {
  int dim = kind == GRIT_CONSTRAINT_EQUALITY ? 3 : 1;
  for (int i = 0; i < ntree; ++i)
    for (int j = 0; j < dim * m->tree_dofnum[tree[i]]; ++j) J[i][j] = GS_C(0.0);
  GS_NAME(cx_rows_zeroed)(m, k, q, dt, kind, source, ntree, tree, J, p, scratch, cols, ncols);
}

void GS_NAME(grit_cx_rows)(const grit_model *m, const GS_NAME(grit_kin) * k, const GS *q, double dt, int kind,
                           int source, int ntree, const int tree[2], GS *const J[2], GS_NAME(grit_contact_params) * p,
                           GS *scratch) {
  GS_NAME(grit_cx_rows_cols)(m, k, q, dt, kind, source, ntree, tree, J, p, scratch, NULL, 0);
}
