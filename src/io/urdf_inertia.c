/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_inertia.c — the mass properties of a URDF link without <inertial>, as MuJoCo 2.2.2's URDF import
 * gives them: that import keeps the <collision> elements as geometries of density 1000 (visuals are
 * discarded), and the compiler's default inertiafromgeom="auto" weighs the geometries of every body
 * without an explicit inertial (mjCBody::GeomFrame): each box, cylinder or sphere by its volume and
 * principal inertia along its own axes, each mesh by its faces (mjcf_mesh_mass_mujoco), summed with the
 * parallel-axis theorem about the common centre of mass. The link's total then joins its body's like an
 * <inertial> would (urdf_build.c, also through fixed joints). */
#include <math.h>
#include <string.h>

#include "urdf_build.h"

static const double DENSITY = 1000; /* MuJoCo's default geometry density, kg/m^3 */

/* Geometry g's mass, centre and inertia about it in the link frame. */
static void geom_inertia(urdf_ctx *c, const urdf_geom *g, int line, double *m, double com[3], double I[9]) {
  const double *p = g->origin.pos, *q = g->origin.quat;
  *m = 0;
  memset(I, 0, sizeof(double) * 9);
  memcpy(com, p, sizeof(double) * 3);
  if (g->type == URDF_GEOM_MESH) {
    double V, mc[3], mI[9], R[9];
    if (urdf_mesh_mass(c, g, line, &V, mc, mI) != GRIT_OK || !(V > 0)) return;
    *m = DENSITY * V;
    mjcf_quat2mat(R, q);
    for (int i = 0; i < 3; ++i) com[i] = p[i] + R[3 * i] * mc[0] + R[3 * i + 1] * mc[1] + R[3 * i + 2] * mc[2];
    urdf_rotate_inertia(I, q, mI);
    for (int i = 0; i < 9; ++i) I[i] *= DENSITY;
    return;
  }
  mjcf_geom t;
  memset(&t, 0, sizeof t);
  if (g->type == URDF_GEOM_BOX) {
    t.type = MJCF_GEOM_BOX;
    for (int i = 0; i < 3; ++i) t.csize[i] = g->size[i] / 2;
  } else if (g->type == URDF_GEOM_CYLINDER) {
    t.type = MJCF_GEOM_CYLINDER;
    t.csize[0] = g->size[0], t.csize[1] = g->size[1] / 2;
  } else {
    t.type = MJCF_GEOM_SPHERE;
    t.csize[0] = g->size[0];
  }
  t.cmass = DENSITY * mjcf_geom_volume(&t);
  mjcf_geom_inertia(&t);
  *m = t.cmass;
  grit_inertia_from_principal(I, t.cinertia, q);
}

/* Two passes over the geometries, the centre first and then the parallel axes about it, as MuJoCo sums them
 * (a mesh is weighed in each pass: a link without <inertial> is the exception, and that keeps no array). */
void urdf_link_geom_inertia(urdf_ctx *c, int k, double *mass, double com[3], double I[9]) {
  const urdf_link *l = &c->robot->links[k];
  double m, gc[3], gI[9];
  *mass = 0;
  memset(com, 0, sizeof(double) * 3);
  memset(I, 0, sizeof(double) * 9);
  for (int i = 0; i < l->ngeom && c->status == GRIT_OK; ++i) {
    geom_inertia(c, &l->geoms[i], urdf_collision_line(c, k, i), &m, gc, gI);
    *mass += m;
    for (int j = 0; j < 3; ++j) com[j] += m * gc[j];
  }
  if (c->status != GRIT_OK || !(*mass > 0)) {
    *mass = 0;
    return;
  }
  for (int j = 0; j < 3; ++j) com[j] /= *mass;
  for (int i = 0; i < l->ngeom && c->status == GRIT_OK; ++i) {
    geom_inertia(c, &l->geoms[i], urdf_collision_line(c, k, i), &m, gc, gI);
    const double d[3] = {gc[0] - com[0], gc[1] - com[1], gc[2] - com[2]};
    const double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) I[3 * r + s] += gI[3 * r + s] + m * ((r == s ? dd : 0) - d[r] * d[s]);
  }
}
