/* SPDX-License-Identifier: Apache-2.0 */
/* contact_geometry_generic.h — a contact's signed distance and frame from body-fixed features, written
 * once for any scalar type; included by contact_geometry.c once per scalar (double, grit_dual).
 *
 * Why the first derivative of phi is exact. Let pa, pb be the witness points and n the normal that
 * grit_collide found at the poses q0, with pb - pa = phi0 n. Re-evaluated with the points moving with
 * their shapes and n turning with a, phi(q) = n(q) . (pb(q) - pa(q)), whose derivative at q0 is
 *   dphi = dn . (pb - pa) + n . (dpb - dpa) = phi0 (dn . n) + n . (dpb - dpa) = n . (dpb - dpa),
 * since n stays unit (dn . n = 0). The true signed distance has the same derivative: when the witness
 * points are the closest points (separated) or the deepest points (penetrating) of the shapes, the
 * envelope theorem lets them be held fixed to first order — the change of the optimal points does not
 * change phi to first order. For a point of a manifold that is not a minimizer (a box corner resting on
 * a plane, the end of a capsule lying flat), phi is the distance of that material point, and its
 * derivative is that of the material point: exact by construction. Second derivatives are not: the
 * features would slide and the normal would turn with b too, which fixed features ignore. */

void GS_NAME(grit_contact_frame)(const GS n[3], GS C[9]) {
  /* Duff, Burgess, Christensen, Hery, Kensler, Liani, Villemin, "Building an Orthonormal Basis,
   * Revisited", JCGT 6(1), 2017: t1 = (1 + s nx^2 a, s b, -s nx), t2 = (b, s + ny^2 a, -ny) with
   * s = sign(nz), a = -1/(s + nz), b = nx ny a. Well conditioned everywhere (|s + nz| >= 1). */
  const double s = GS_V(n[2]) < 0.0 ? -1.0 : 1.0;
  GS a = GS_DIV(GS_C(-1.0), GS_ADDC(n[2], s));
  GS b = GS_MUL(GS_MUL(n[0], n[1]), a);
  C[0] = GS_ADDC(GS_SCALE(GS_MUL(GS_MUL(n[0], n[0]), a), s), 1.0);
  C[3] = GS_SCALE(b, s);
  C[6] = GS_SCALE(n[0], -s);
  C[1] = b;
  C[4] = GS_ADDC(GS_MUL(GS_MUL(n[1], n[1]), a), s);
  C[7] = GS_NEG(n[1]);
  C[2] = n[0];
  C[5] = n[1];
  C[8] = n[2];
}

/* R x for a constant x, row i: grit_m3_mulv's sums in its order, with products by the plain doubles of
 * x (on duals the a.v * 0 terms of a product by a constant add nothing to a finite sum: the same
 * numbers but for the sign of a zero, at half the arithmetic). */
static inline GS GS_NAME(row_by_const)(const GS R[3], const double x[3]) {
  return GS_ADD(GS_SCALE(R[0], x[0]), GS_ADD(GS_SCALE(R[1], x[1]), GS_SCALE(R[2], x[2])));
}

/* A feature in world coordinates: its point and direction/normal moved with the shape (grit_tf_apply
 * and grit_m3_mulv by the feature's body-fixed, constant, point and direction). */
static inline void GS_NAME(feature_world)(const double lp[3], const double lu[3], const GS p[3], const GS R[9],
                                         GS wp[3], GS wu[3]) {
  for (int i = 0; i < 3; ++i) {
    wp[i] = GS_ADD(GS_NAME(row_by_const)(R + 3 * i, lp), p[i]);
    wu[i] = GS_NAME(row_by_const)(R + 3 * i, lu);
  }
}

/* The point of a line (p, unit u) nearest x. */
static inline void GS_NAME(line_nearest)(GS out[3], const GS p[3], const GS u[3], const GS x[3]) {
  GS d[3];
  GS_NAME(grit_v3_sub)(d, x, p);
  GS_NAME(grit_v3_addscl)(out, p, u, GS_NAME(grit_v3_dot)(d, u));
}

/* The projection of x on a plane (p, unit normal u). */
static inline void GS_NAME(plane_nearest)(GS out[3], const GS p[3], const GS u[3], const GS x[3]) {
  GS d[3];
  GS_NAME(grit_v3_sub)(d, x, p);
  GS_NAME(grit_v3_addscl)(out, x, u, GS_NEG(GS_NAME(grit_v3_dot)(d, u)));
}

/* The intersection of the line (p, u) with the plane (local point lp, local normal ln) held by the
 * shape at (sp, sR). */
static inline void GS_NAME(line_plane)(GS out[3], const GS p[3], const GS u[3], const double lp[3], const double ln[3],
                                       const GS sp[3], const GS sR[9]) {
  GS wp[3], wn[3], d[3];
  GS_NAME(feature_world)(lp, ln, sp, sR, wp, wn);
  GS_NAME(grit_v3_sub)(d, wp, p);
  GS t = GS_DIV(GS_NAME(grit_v3_dot)(d, wn), GS_NAME(grit_v3_dot)(u, wn));
  GS_NAME(grit_v3_addscl)(out, p, u, t);
}

/* The core of a RIM or SUPPORT feature (centre P, axis U in the world, local data q of the shape at
 * rotation R) deepest along the unit direction s: on a circle, the point at the feature's angle from the
 * one deepest along s; on an ellipsoid with semi-axes D, its support point P + R D^2 d / |D d|, d = R^T s. */
static inline void GS_NAME(sliding_core)(GS out[3], int kind, const double q[3], const GS P[3], const GS U[3],
                                          const GS R[9], const GS s[3]) {
  if (kind == GRIT_FEATURE_RIM) {
    GS w[3], v[3];
    GS_NAME(grit_v3_addscl)(w, s, U, GS_NEG(GS_NAME(grit_v3_dot)(s, U))); /* s without its axial part */
    GS_NAME(grit_v3_normalize)(w);
    GS_NAME(grit_v3_cross)(v, U, w);
    GS_NAME(grit_v3_addscl)(out, P, w, GS_C(q[0] * q[1]));
    GS_NAME(grit_v3_addscl)(out, out, v, GS_C(q[0] * q[2]));
  } else {
    GS d[3], e[3], x[3];
    GS_NAME(grit_m3_tmulv)(d, R, s);
    for (int k = 0; k < 3; ++k) e[k] = GS_SCALE(d[k], q[k]);
    GS n = GS_NAME(grit_v3_norm)(e);
    for (int k = 0; k < 3; ++k) x[k] = GS_DIV(GS_SCALE(e[k], q[k]), n);
    GS_NAME(grit_m3_mulv)(e, R, x);
    GS_NAME(grit_v3_add)(out, P, e);
  }
}

static inline int GS_NAME(is_sliding)(int kind) { return kind == GRIT_FEATURE_RIM || kind == GRIT_FEATURE_SUPPORT; }

void GS_NAME(grit_contact_reevaluate)(const grit_contact_point *c, const GS pa[3], const GS Ra[9], const GS pb[3],
                                      const GS Rb[9], GS_NAME(grit_contact_geom) * out) {
  GS Pa[3], Ua[3], Pb[3], Ub[3], ca[3], cb[3], d[3];
  GS_NAME(feature_world)(c->fa_p, c->fa_u, pa, Ra, Pa, Ua);
  GS_NAME(feature_world)(c->fb_p, c->fb_u, pb, Rb, Pb, Ub);
  /* the core points: nearest points of the two features (a point is its own) */
  GS_NAME(grit_v3_copy)(ca, Pa);
  GS_NAME(grit_v3_copy)(cb, Pb);
  if (c->fa == GRIT_FEATURE_LINE && c->fb == GRIT_FEATURE_LINE) {
    /* closest points of two lines; parallel lines keep the points found */
    GS r[3], b = GS_NAME(grit_v3_dot)(Ua, Ub);
    GS_NAME(grit_v3_sub)(r, Pa, Pb);
    GS den = GS_SUB(GS_C(1.0), GS_MUL(b, b)), dd = GS_NAME(grit_v3_dot)(Ua, r), e = GS_NAME(grit_v3_dot)(Ub, r);
    if (GS_V(den) > 1e-10) {
      GS s = GS_DIV(GS_SUB(GS_MUL(b, e), dd), den), t = GS_DIV(GS_SUB(e, GS_MUL(b, dd)), den);
      GS_NAME(grit_v3_addscl)(ca, Pa, Ua, s);
      GS_NAME(grit_v3_addscl)(cb, Pb, Ub, t);
    }
  } else if (c->fa == GRIT_FEATURE_PLANE) {
    if (GS_NAME(is_sliding)(c->fb)) { /* b's point deepest into the plane: along -Ua */
      GS s[3];
      GS_NAME(grit_v3_scale)(s, Ua, GS_C(-1.0));
      GS_NAME(sliding_core)(cb, c->fb, c->fb_q, Pb, Ub, Rb, s);
    }
    if (c->fb == GRIT_FEATURE_LINE) {
      if (c->clip) GS_NAME(line_plane)(cb, Pb, Ub, c->clip_p, c->clip_n, pa, Ra);
      else GS_NAME(line_nearest)(cb, Pb, Ub, Pa);
    }
    GS_NAME(plane_nearest)(ca, Pa, Ua, cb);
  } else if (c->fb == GRIT_FEATURE_PLANE) {
    if (GS_NAME(is_sliding)(c->fa)) { /* a's point deepest into the plane: along -Ub */
      GS s[3];
      GS_NAME(grit_v3_scale)(s, Ub, GS_C(-1.0));
      GS_NAME(sliding_core)(ca, c->fa, c->fa_q, Pa, Ua, Ra, s);
    }
    if (c->fa == GRIT_FEATURE_LINE) {
      if (c->clip) GS_NAME(line_plane)(ca, Pa, Ua, c->clip_p, c->clip_n, pb, Rb);
      else GS_NAME(line_nearest)(ca, Pa, Ua, Pb);
    }
    GS_NAME(plane_nearest)(cb, Pb, Ub, ca);
  } else if (c->fa == GRIT_FEATURE_LINE) {
    GS_NAME(line_nearest)(ca, Pa, Ua, cb);
  } else if (c->fb == GRIT_FEATURE_LINE) {
    GS_NAME(line_nearest)(cb, Pb, Ub, ca);
  }
  /* the normal: a plane's own; between round features, the line joining the cores (as found: their
   * distance phi + ra + rb is positive); otherwise held fixed to a */
  const double core_dist = c->phi + c->ra + c->rb;
  if (c->fa == GRIT_FEATURE_PLANE) {
    GS_NAME(grit_v3_copy)(out->n, Ua);
  } else if (c->fb == GRIT_FEATURE_PLANE) {
    GS_NAME(grit_v3_scale)(out->n, Ub, GS_C(-1.0));
  } else if (c->ra + c->rb > 0.0 && core_dist > 1e-9 * (c->ra + c->rb)) {
    GS_NAME(grit_v3_sub)(out->n, cb, ca);
  } else {
    GS ln[3];
    for (int k = 0; k < 3; ++k) ln[k] = GS_C(c->n_local[k]);
    GS_NAME(grit_m3_mulv)(out->n, Ra, ln);
  }
  GS_NAME(grit_v3_normalize)(out->n);
  GS_NAME(grit_v3_addscl)(out->pa, ca, out->n, GS_C(c->ra)); /* pa = core_a + ra n, pb = core_b - rb n */
  GS_NAME(grit_v3_addscl)(out->pb, cb, out->n, GS_C(-c->rb));
  GS_NAME(grit_v3_sub)(d, out->pb, out->pa);
  out->phi = GS_NAME(grit_v3_dot)(out->n, d);
  GS_NAME(grit_contact_frame)(out->n, out->frame);
}
