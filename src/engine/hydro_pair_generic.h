/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_pair_generic.h — the contact patch of two compliant tetrahedra (two compliant geometries
 * pressing), written once for the scalar GS. Included by hydro_generic.h after its polygon helpers
 * (section of a tetrahedron by a plane, clipping by a half-space, area and centroid).
 *
 * Where two pressure fields overlap, the contact surface is where they are equal (the equal-pressure
 * surface of hydroelastic contact): inside one pair of tetrahedra both fields are linear, so p_a - p_b
 * is linear and the surface is a plane. Its polygon is that plane cut by ta, clipped to the four
 * half-spaces of tb. The pressure on it, p0 at the centroid, is the force A p0 as for a rigid face.
 * Approaching by dn along the normal n raises the equal pressure by g dn with g = ga gb / (ga + gb), ga
 * and gb the two fields' rates along n into their own bodies: the two layers are springs in series, so
 * the stiffer body takes the smaller share of the overlap. */

int GS_NAME(grit_hydro_tet_pair_patch)(const double *ta, GS Ea, const GS pa[3], const GS Ra[9], const double *tb,
                                       GS Eb, const GS pb[3], const GS Rb[9], GS_NAME(grit_hydro_patch) * out) {
  GS xa[4][3], xb[4][3], gra[3], grb[3], s[4], poly[HYDRO_MAX_POLY][3], d[3];
  GS_NAME(hydro_tet_grad)(ta, Ra, gra);
  GS_NAME(hydro_tet_grad)(tb, Rb, grb);
  for (int i = 0; i < 3; ++i) gra[i] = GS_MUL(Ea, gra[i]), grb[i] = GS_MUL(Eb, grb[i]); /* Pa/m */
  GS_NAME(grit_v3_sub)(out->n, grb, gra); /* out of a: p_b grows, p_a falls */
  GS_NAME(grit_v3_normalize)(out->n);
  const GS ga = GS_NEG(GS_NAME(grit_v3_dot)(gra, out->n)), gb = GS_NAME(grit_v3_dot)(grb, out->n);
  /* the gradient floor of hydro_generic.h on each side: a field running along the surface (a rate near
   * zero) would make the pair's rate, and so its stiffness, vanish while the force A p0 stays. The rates
   * depend on the poses only: tested before the polygon is built */
  if (!(GS_V(ga) > GRIT_HYDRO_GRADIENT_FLOOR * GS_NAME(hydro_steep)(ta, GS_V(Ea))) ||
      !(GS_V(gb) > GRIT_HYDRO_GRADIENT_FLOOR * GS_NAME(hydro_steep)(tb, GS_V(Eb))))
    return 0;
  GS_NAME(hydro_tet_points)(ta, pa, Ra, xa);
  GS_NAME(hydro_tet_points)(tb, pb, Rb, xb);
  for (int j = 0; j < 4; ++j) { /* p_a - p_b at ta's vertices; p = E (1 + grad e . (x - x0)) */
    GS_NAME(grit_v3_sub)(d, xa[j], xa[0]);
    const GS pa_j = GS_ADD(Ea, GS_NAME(grit_v3_dot)(gra, d));
    GS_NAME(grit_v3_sub)(d, xa[j], xb[0]);
    s[j] = GS_SUB(pa_j, GS_ADD(Eb, GS_NAME(grit_v3_dot)(grb, d)));
  }
  int nv = GS_NAME(hydro_section)((const GS(*)[3])xa, s, poly);
  for (int k = 0; k < 4 && nv > 0; ++k) { /* tb's face opposite vertex k: keep vertex k's side */
    const GS *o = xb[(k + 1) % 4], *u = xb[(k + 2) % 4], *w = xb[(k + 3) % 4];
    GS e1[3], e2[3], m[3];
    GS_NAME(grit_v3_sub)(e1, u, o);
    GS_NAME(grit_v3_sub)(e2, w, o);
    GS_NAME(grit_v3_cross)(m, e1, e2);
    GS_NAME(grit_v3_sub)(d, xb[k], o);
    if (GS_V(GS_NAME(grit_v3_dot)(m, d)) < 0)
      for (int i = 0; i < 3; ++i) m[i] = GS_NEG(m[i]);
    nv = GS_NAME(hydro_clip_half)(poly, nv, o, m);
  }
  if (nv < 3) return 0;
  out->area = GS_NAME(hydro_area)((const GS(*)[3])poly, nv, out->c);
  GS_NAME(grit_v3_sub)(d, out->c, xa[0]);
  out->p0 = GS_ADD(Ea, GS_NAME(grit_v3_dot)(gra, d));
  if (!(GS_V(out->area) > 0) || !(GS_V(out->p0) > 0)) return 0;
  out->g = GS_DIV(GS_MUL(ga, gb), GS_ADD(ga, gb));
  out->k = GS_MUL(out->g, out->area);
  out->phi = GS_NEG(GS_DIV(out->p0, out->g));
  return 1;
}
