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

void GS_NAME(grit_contact_reevaluate)(const grit_contact_point *c, const GS pa[3], const GS Ra[9], const GS pb[3],
                                      const GS Rb[9], GS_NAME(grit_contact_geom) * out) {
  GS ka[3], kb[3], ln[3], d[3];
  for (int k = 0; k < 3; ++k) {
    ka[k] = GS_C(c->ca_local[k]);
    kb[k] = GS_C(c->cb_local[k]);
  }
  GS_NAME(grit_tf_apply)(ka, pa, Ra, ka); /* the cores, moving with their shapes */
  GS_NAME(grit_tf_apply)(kb, pb, Rb, kb);
  GS_NAME(grit_v3_sub)(d, kb, ka);
  if (c->normal_mode == GRIT_NORMAL_CORES && GS_V(GS_NAME(grit_v3_norm2)(d)) > 0.0) {
    GS_NAME(grit_v3_copy)(out->n, d);
  } else if (c->normal_mode == GRIT_NORMAL_FIXED_B) {
    for (int k = 0; k < 3; ++k) ln[k] = GS_C(c->nb_local[k]);
    GS_NAME(grit_m3_mulv)(out->n, Rb, ln);
  } else {
    for (int k = 0; k < 3; ++k) ln[k] = GS_C(c->n_local[k]);
    GS_NAME(grit_m3_mulv)(out->n, Ra, ln);
  }
  GS_NAME(grit_v3_normalize)(out->n);
  GS_NAME(grit_v3_addscl)(out->pa, ka, out->n, GS_C(c->ra)); /* pa = core_a + ra n, pb = core_b - rb n */
  GS_NAME(grit_v3_addscl)(out->pb, kb, out->n, GS_C(-c->rb));
  GS_NAME(grit_v3_sub)(d, out->pb, out->pa);
  out->phi = GS_NAME(grit_v3_dot)(out->n, d);
  GS_NAME(grit_contact_frame)(out->n, out->frame);
}
