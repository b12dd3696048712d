/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_inertia.c — body mass properties as MuJoCo 2.2.2's compiler gives them (mjCBody::Compile and
 * GeomFrame, mjCGeom's masses): from <inertial>, or summed over the body's geometries with the
 * parallel-axis theorem (the compiler's inertiafromgeom: "auto" only for bodies without <inertial>,
 * "true" always, "false" never), a mesh weighed by its faces, then boundmass, boundinertia,
 * balanceinertia and settotalmass. Split from mjcf_build.c, which calls mjcf_compile_body per body. */
#include <math.h>
#include <string.h>

#include "mjcf_internal.h"

static const double MJ_MINVAL = 1e-15; /* MuJoCo's mjMINVAL (mjtnum.h) */

/* A mesh's mass as MuJoCo 2.2.2 computes it from its faces (density, or the given mass), its centre and
 * its inertia about it, turned into the body frame (g->mcom, g->mfull). A mesh without faces (a 'vertex'
 * list) is weighed by its convex hull's faces, as in MuJoCo. */
static void mesh_mass(mjcf_ctx *c, mjcf_geom *g) {
  const mjcf_mesh *m = MJCF_AT(c->meshes, mjcf_mesh, g->mesh_index);
  double V, com[3], I[9], R[9];
  if ((!m->ntri || m->hull_status == GRIT_ERR_UNSUPPORTED) && m->hull_error) {
    mjcf_fail_at(c, m->hull_status, "mesh", m->file, m->line, m->hull_error, 0);
    return;
  }
  /* MuJoCo weighs the file's faces, or without faces those of the convex hull */
  const int ok = m->ntri ? mjcf_mesh_mass_mujoco(m->vert, m->nvert, m->tri, m->ntri, c->exactmeshinertia, &V, com, I)
                         : mjcf_mesh_mass_mujoco(m->hvert, m->nhvert, m->htri, m->nhtri, c->exactmeshinertia, &V, com, I);
  if (ok < 0) {
    mjcf_fail_at(c, GRIT_ERR_OUT_OF_MEMORY, "geom", g->file, g->line, "out of memory", 0);
    return;
  }
  if (!ok) {
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "the mesh encloses no volume: its mass cannot be computed", 0);
    return;
  }
  g->cmass = g->has_mass ? g->mass : g->density * V;
  const double rho = g->cmass / V;
  mjcf_quat2mat(R, g->cquat);
  double RI[9];
  for (int i = 0; i < 3; ++i) {
    g->mcom[i] = g->cpos[i];
    for (int k = 0; k < 3; ++k) g->mcom[i] += R[3 * i + k] * com[k];
    for (int j = 0; j < 3; ++j) {
      RI[3 * i + j] = 0;
      for (int k = 0; k < 3; ++k) RI[3 * i + j] += R[3 * i + k] * I[3 * k + j];
    }
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += RI[3 * i + k] * R[3 * j + k];
      g->mfull[3 * i + j] = rho * s;
    }
  g->mesh_mass = 1;
  if (!isfinite(g->cmass) || !isfinite(g->mfull[0] + g->mfull[4] + g->mfull[8]))
    mjcf_fail_at(c, GRIT_ERR_NOT_FINITE, "geom", g->file, g->line, "mass or inertia overflows", 0);
}

/* Mass and principal inertia of geometry g, for a body whose inertia comes from its geometries. */
static void geom_mass(mjcf_ctx *c, mjcf_geom *g) {
  g->mesh_mass = 0;
  if (g->type == MJCF_GEOM_MESH && !(g->has_mass && g->mass == 0)) {
    memset(g->cinertia, 0, sizeof g->cinertia);
    mesh_mass(c, g);
    return;
  }
  g->cmass = 0;
  memset(g->cinertia, 0, sizeof g->cinertia);
  const double vol = mjcf_geom_volume(g);
  if (g->has_mass) {
    if (g->mass != 0 && vol > MJ_MINVAL) {
      g->cmass = g->mass;
      mjcf_geom_inertia(g);
    }
  } else {
    g->cmass = g->density * vol;
    mjcf_geom_inertia(g);
  }
  if (!isfinite(g->cmass) || !isfinite(g->cinertia[0] + g->cinertia[1] + g->cinertia[2]))
    mjcf_fail_at(c, GRIT_ERR_NOT_FINITE, "geom", g->file, g->line, "mass or inertia overflows", 0);
}

/* Body mass properties from its geometries (mjCBody::GeomFrame): 0 if it has none in the group range. */
static int body_from_geoms(mjcf_ctx *c, mjcf_body *b, int self, const int *geom_start, const int *geom_list) {
  int sel[2] = {-1, -1}, sz = 0;
  for (int k = geom_start[self]; k < geom_start[self + 1]; ++k) {
    const mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, geom_list[k]);
    if (g->group >= c->igroup[0] && g->group <= c->igroup[1]) {
      if (sz < 2) sel[sz] = geom_list[k];
      sz++;
    }
  }
  if (sz == 0) return 0;
  if (sz == 1) {
    mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, sel[0]);
    geom_mass(c, g);
    b->mass = g->cmass;
    if (g->mesh_mass) {
      memcpy(b->com, g->mcom, sizeof b->com);
      memcpy(b->inertia, g->mfull, sizeof b->inertia);
    } else {
      memcpy(b->com, g->cpos, sizeof b->com);
      grit_inertia_from_principal(b->inertia, g->cinertia, g->cquat);
      memcpy(b->iquat, g->cquat, sizeof b->iquat); /* MuJoCo's body frame of inertia: the geometry's */
    }
    return 1;
  }
  double com[3] = {0, 0, 0}, toti[6] = {0, 0, 0, 0, 0, 0};
  b->mass = 0;
  for (int k = geom_start[self]; k < geom_start[self + 1] && c->status == GRIT_OK; ++k) {
    mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, geom_list[k]);
    if (g->group < c->igroup[0] || g->group > c->igroup[1]) continue;
    geom_mass(c, g);
    b->mass += g->cmass;
    const double *gc = g->mesh_mass ? g->mcom : g->cpos;
    for (int i = 0; i < 3; ++i) com[i] += g->cmass * gc[i];
  }
  if (c->status != GRIT_OK) return 1;
  if (b->mass < MJ_MINVAL) {
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line, "body mass is too small to compute a centre of mass", 0);
    return 1;
  }
  for (int i = 0; i < 3; ++i) b->com[i] = com[i] / b->mass;
  for (int k = geom_start[self]; k < geom_start[self + 1]; ++k) {
    const mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, geom_list[k]);
    if (g->group < c->igroup[0] || g->group > c->igroup[1]) continue;
    const double *gc = g->mesh_mass ? g->mcom : g->cpos;
    double i0[6], i1[6], d[3] = {gc[0] - b->com[0], gc[1] - b->com[1], gc[2] - b->com[2]};
    if (g->mesh_mass) {
      const double *F = g->mfull;
      const double s6[6] = {F[0], F[4], F[8], F[1], F[2], F[5]};
      memcpy(i0, s6, sizeof s6);
    } else {
      mjcf_globalinertia(i0, g->cinertia, g->cquat);
    }
    mjcf_offcenter(i1, g->cmass, d);
    for (int j = 0; j < 6; ++j) toti[j] = toti[j] + i0[j] + i1[j];
  }
  mjcf_sym6_to_mat(b->inertia, toti);
  return 1;
}

/* <compiler boundinertia balanceinertia>: a lower bound on the principal moments, and moments that
 * violate A + B >= C replaced by their mean (mjCBody::Compile). Only then is the inertia diagonalized. */
static void bound_inertia(const mjcf_ctx *c, mjcf_body *b) {
  if (!(c->boundinertia > 0) && !c->balanceinertia) return;
  double w[3], V[9];
  mjcf_eig3(b->inertia, w, V);
  int changed = 0;
  for (int i = 0; i < 3; ++i)
    if (w[i] < c->boundinertia) w[i] = c->boundinertia, changed = 1;
  if (c->balanceinertia && (w[0] + w[1] < w[2] || w[0] + w[2] < w[1] || w[1] + w[2] < w[0])) {
    const double mean = (w[0] + w[1] + w[2]) / 3;
    w[0] = w[1] = w[2] = mean, changed = 1;
  }
  if (!changed) return; /* keep the exact matrix */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      b->inertia[3 * i + j] = V[3 * i] * w[0] * V[3 * j] + V[3 * i + 1] * w[1] * V[3 * j + 1] + V[3 * i + 2] * w[2] * V[3 * j + 2];
}

/* <compiler settotalmass>: every body's mass and inertia scaled so that they sum to it (mjCModel). */
void mjcf_set_total_mass(mjcf_ctx *c) {
  if (!(c->settotalmass > 0)) return;
  double total = 0;
  for (int k = 1; k < c->bodies.n; ++k) total += MJCF_AT(c->bodies, mjcf_body, k)->mass;
  if (!(total > MJ_MINVAL)) return;
  const double scale = c->settotalmass / total;
  for (int k = 1; k < c->bodies.n; ++k) {
    mjcf_body *b = MJCF_AT(c->bodies, mjcf_body, k);
    b->mass *= scale;
    for (int i = 0; i < 9; ++i) b->inertia[i] *= scale;
  }
}

/* Body frame and mass properties (mjCBody::Compile). */
void mjcf_compile_body(mjcf_ctx *c, mjcf_body *b, int self, const int *geom_start, const int *geom_list) {
  const char *err = mjcf_orient_quat(c, &b->ori, b->quat);
  if (err) {
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line, err, 0);
    return;
  }
  const int from_geoms = c->inertiafromgeom == 1 || (c->inertiafromgeom == 2 && !b->has_inertial);
  if (from_geoms && body_from_geoms(c, b, self, geom_start, geom_list)) {
    /* done */
  } else if (b->has_inertial) {
    b->mass = b->imass;
    memcpy(b->com, b->ipos, sizeof b->com);
    if (b->iori.kind == MJCF_ORI_FULLINERTIA) {
      const double *f = b->iori.v; /* (xx, yy, zz, xy, xz, yz) */
      mjcf_sym6_to_mat(b->inertia, f);
    } else {
      double q[4];
      err = mjcf_orient_quat(c, &b->iori, q);
      if (err) {
        mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "inertial", b->file, b->line, err, 0);
        return;
      }
      const double *d = b->idiag;
      if (d[0] < 0 || d[1] < 0 || d[2] < 0) {
        mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line, "inertia cannot be negative", 0);
        return;
      }
      if (!c->balanceinertia && (d[0] + d[1] < d[2] || d[0] + d[2] < d[1] || d[1] + d[2] < d[0])) {
        mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line, "inertia must satisfy A + B >= C", 0);
        return;
      }
      grit_inertia_from_principal(b->inertia, d, q);
      memcpy(b->iquat, q, sizeof b->iquat);
    }
  }
  if (c->status != GRIT_OK) return;
  if (b->mass < c->boundmass) b->mass = c->boundmass;
  bound_inertia(c, b);
  if (b->mass < 0) mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line, "mass cannot be negative", 0);
}
