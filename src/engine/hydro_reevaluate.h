/* SPDX-License-Identifier: Apache-2.0 */
/* hydro_reevaluate.h — the body of grit_hydro_patch_reevaluate_dual, written once and compiled twice:
 * by hydro.c (baseline) and by hydro_avx2.c (AVX2, its dual callees renamed there to their AVX2
 * compilations). Included by those two files only, after the dual instance of hydro_generic.h. */
#ifndef GRIT_HYDRO_REEVALUATE_H
#define GRIT_HYDRO_REEVALUATE_H

static inline const double *hydro_tet_at(const grit_model *m, int g, int t) {
  return m->hydro_tet + GRIT_HYDRO_TET_STRIDE * ((size_t)m->geom_hydro_tetadr[g] + (size_t)t);
}

static void hydro_reevaluate(const grit_model *m, const grit_dual *moduli, const grit_contact_candidate *c,
                             const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3], const grit_dual Rb[9],
                             grit_contact_geom_dual *geo, grit_dual *k) {
  const int gs = c->geom[1];
  grit_dual fo[3], fn[3], fv[4][3];
  grit_hydro_patch_dual p;
  memset(&p, 0, sizeof p);
  if (m->geom_hydro[c->geom[0]] > 0) { /* two compliant geometries: patch_face is gs's tetrahedron */
    const int ga = c->geom[0];
    grit_hydro_tet_pair_patch_dual(hydro_tet_at(m, ga, c->patch_tet), moduli[ga], pa, Ra,
                                   hydro_tet_at(m, gs, c->patch_face), moduli[gs], pb, Rb, &p);
  } else {
    const int nfv = grit_hydro_rigid_face_dual(m, c->geom[0], c->patch_face, pa, Ra, fo, fn, fv);
    grit_hydro_tet_patch_dual(hydro_tet_at(m, gs, c->patch_tet), moduli[gs], pb, Rb, fo, fn, (const grit_dual *)fv,
                              nfv, &p);
  }
  geo->phi = p.phi;
  for (int i = 0; i < 3; ++i) {
    geo->n[i] = p.n[i];
    geo->pa[i] = p.c[i];
    geo->pb[i] = p.c[i];
  }
  grit_contact_frame_dual(geo->n, geo->frame);
  *k = p.k;
}

#endif
