/* SPDX-License-Identifier: Apache-2.0 */
/* hydro.c — the contact surface of a compliant-hydroelastic geometry against a rigid plane (seed 004,
 * section III): the plane clipped by each tetrahedron it cuts is a triangle or a quad; the linear
 * pressure over it gives the polygon's force exactly at its centroid, f = A p0. Section IV turns each
 * polygon into one point constraint at the centroid, normal the plane's, with stiffness k = g A and
 * signed distance phi0 = -p0 / g, where g > 0 is the pressure's gradient along the normal into the
 * compliant body: then k (-phi0) = A p0, and pressure changes at dp/dt = -g v_n. The polygon's
 * quantities are scalar-generic (hydro_generic.h), instantiated here for double and for dual numbers. */
#include "hydro.h"

#include <math.h>
#include <string.h>

#include "grit/math.h"
#include "grit/math_dual.h"

#include "grit/detail/scalar_double.h"
#include "hydro_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "hydro_generic.h"
#include "grit/detail/scalar_undef.h"

int grit_hydro_capacity(const grit_model *m) {
  int nplane = 0, ntet = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    if (m->geom_shape[g].type == GRIT_GEOM_PLANE) nplane++;
    if (m->geom_hydro[g] > 0) ntet += m->geom_hydro_ntet[g];
  }
  return nplane * ntet;
}

static const double *tet_at(const grit_model *m, int g, int t) {
  return m->hydro_tet + GRIT_HYDRO_TET_STRIDE * ((size_t)m->geom_hydro_tetadr[g] + (size_t)t);
}

/* Appends the patch p of tetrahedron t against face f of the rigid geometry gr (compliant gs). */
static grit_status push_patch(const grit_model *m, int gr, int gs, int t, int f, const grit_hydro_patch *p,
                              grit_contact_candidate *out, int cap, int *n) {
  if (*n >= cap) return GRIT_ERR_CAPACITY;
  grit_contact_candidate *q = &out[(*n)++];
  memset(q, 0, sizeof *q);
  q->geom[0] = gr;
  q->geom[1] = gs;
  q->body[0] = m->geom_body[gr];
  q->body[1] = m->geom_body[gs];
  q->pt.phi = p->phi;
  for (int i = 0; i < 3; ++i) {
    q->pt.n[i] = p->n[i];
    q->pt.pa[i] = p->c[i];
    q->pt.pb[i] = p->c[i];
  }
  q->k_patch = p->k;
  q->patch_tet = t;
  q->patch_face = f;
  return GRIT_OK;
}

grit_status grit_hydro_plane_patches(const grit_model *m, int gp, int gs, const double pp[3], const double Rp[9],
                                     const double ps[3], const double Rs[9], grit_contact_candidate *out, int cap,
                                     int *n) {
  const double nrm[3] = {Rp[2], Rp[5], Rp[8]}; /* the plane's outward normal: its frame's z axis */
  for (int t = 0; t < m->geom_hydro_ntet[gs]; ++t) {
    grit_hydro_patch p;
    if (!grit_hydro_tet_patch(tet_at(m, gs, t), m->geom_hydro[gs], ps, Rs, pp, nrm, NULL, 0, &p)) continue;
    const grit_status s = push_patch(m, gp, gs, t, -1, &p, out, cap, n);
    if (s != GRIT_OK) return s;
  }
  return GRIT_OK;
}

void grit_hydro_moduli_dual(const grit_model *m, grit_dual *moduli) {
  for (int g = 0; g < m->ngeom; ++g) moduli[g] = grit_dual_const(m->geom_hydro[g]);
}

void grit_hydro_patch_reevaluate_dual(const grit_model *m, const grit_dual *moduli, const grit_contact_candidate *c,
                                      const grit_dual pa[3], const grit_dual Ra[9], const grit_dual pb[3],
                                      const grit_dual Rb[9], grit_contact_geom_dual *geo, grit_dual *k) {
  const int gs = c->geom[1];
  const grit_dual nrm[3] = {Ra[2], Ra[5], Ra[8]};
  grit_hydro_patch_dual p;
  memset(&p, 0, sizeof p);
  grit_hydro_tet_patch_dual(tet_at(m, gs, c->patch_tet), moduli[gs], pb, Rb, pa, nrm, NULL, 0, &p);
  geo->phi = p.phi;
  for (int i = 0; i < 3; ++i) {
    geo->n[i] = p.n[i];
    geo->pa[i] = p.c[i];
    geo->pb[i] = p.c[i];
  }
  grit_contact_frame_dual(geo->n, geo->frame);
  *k = p.k;
}
