/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_hull.c — the convex hull of a mesh's vertices, computed with Qhull (Debian's reentrant
 * libqhull_r), for the collision shape of a mesh geometry and for the mass of a mesh whose own faces do
 * not close a solid (a 'vertex' list, an open surface), which MuJoCo also takes from the hull.
 *
 * grit's CONVEX shape holds at most GRIT_CONVEX_MAX_VERTICES points (its support function is linear in
 * them). Qhull's 'TA' option stops the hull after that many vertices, the points farthest out being added
 * first: beyond it the shape is an inner approximation (the caller warns). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libqhull_r/qhull_ra.h"
#include "mjcf_internal.h"
#include "status_internal.h"

/* Runs Qhull on n points with the options `flags`; on success *qh holds the hull (free it with
 * hull_free). Qhull reports its own errors to a stream: they go to a null stream, and the exit code
 * tells a flat (coplanar or collinear) input apart. */
static int hull_run(qhT *qh, coordT *pts, int n, const char *flags, FILE *err) {
  qh_zero(qh, err);
  char opts[64];
  snprintf(opts, sizeof opts, "qhull %s", flags);
  return qh_new_qhull(qh, 3, n, pts, False, opts, NULL, err);
}

static void hull_free(qhT *qh) {
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
}

/* The hull's vertices (renumbered 0..nv-1, in Qhull's order) and its triangles, oriented outwards. */
static grit_status hull_extract(qhT *qh, const double *v, int n, mjcf_pool *pool, double **hv, int *nhv, int **ht,
                                int *nht) {
  int nv = 0, nt = 0;
  vertexT *vertex;
  facetT *facet;
  FORALLvertices nv++;
  FORALLfacets nt++;
  double *out = mjcf_alloc(pool, sizeof(double) * 3 * (size_t)nv);
  int *tri = mjcf_alloc(pool, sizeof(int) * 3 * (size_t)nt);
  int *map = malloc(sizeof(int) * (size_t)n); /* input point -> hull vertex */
  if (!out || !tri || !map) {
    free(map);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  int k = 0;
  FORALLvertices {
    const int p = qh_pointid(qh, vertex->point);
    memcpy(out + 3 * k, v + 3 * p, sizeof(double) * 3);
    map[p] = k++;
  }
  int f = 0;
  FORALLfacets {
    vertexT **vp = (vertexT **)&facet->vertices->e[0].p;
    int idx[3] = {0, 0, 0}, j = 0;
    for (; j < 3 && vp[j]; ++j) idx[j] = map[qh_pointid(qh, vp[j]->point)];
    if (j < 3) continue; /* not a triangle ('Qt' triangulates every facet) */
    const double *a = out + 3 * idx[0], *b = out + 3 * idx[1], *c = out + 3 * idx[2];
    const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double nrm[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    if (nrm[0] * facet->normal[0] + nrm[1] * facet->normal[1] + nrm[2] * facet->normal[2] < 0) {
      const int t = idx[1];
      idx[1] = idx[2], idx[2] = t;
    }
    memcpy(tri + 3 * f++, idx, sizeof idx);
  }
  free(map);
  *hv = out, *nhv = nv, *ht = tri, *nht = f;
  return GRIT_OK;
}

grit_status mjcf_mesh_hull(const double *v, int n, int max_vert, mjcf_pool *pool, double **hv, int *nhv, int **ht,
                           int *nht, int *reduced, char *msg) {
  *hv = NULL, *nhv = 0, *ht = NULL, *nht = 0, *reduced = 0;
  if (n < 4) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "%d distinct vertices: a hull needs at least 4", n);
  coordT *pts = malloc(sizeof(coordT) * 3 * (size_t)n);
  if (!pts) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory computing the convex hull");
  memcpy(pts, v, sizeof(coordT) * 3 * (size_t)n);
  FILE *null = fopen("/dev/null", "w"), *err = null ? null : stderr; /* Qhull's messages: the code is reported */
  qhT qh_qh, *qh = &qh_qh;
  /* 'TA': stop after adding that many points to the initial simplex, so at most max_vert vertices (the
   * hull is complete when it has fewer) */
  char flags[32];
  snprintf(flags, sizeof flags, "Qt TA%d", max_vert - 4);
  const int code = hull_run(qh, pts, n, flags, err);
  grit_status s = GRIT_OK;
  if (code == 0 && qh->num_vertices >= max_vert) *reduced = 1;
  if (code == qh_ERRsingular || code == qh_ERRprec || code == qh_ERRinput)
    s = grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                       "the vertices are degenerate (all in one plane or on one line): no convex hull");
  else if (code != 0)
    s = grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "Qhull failed to compute the convex hull (error %d)", code);
  else if (hull_extract(qh, v, n, pool, hv, nhv, ht, nht) != GRIT_OK)
    s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory computing the convex hull");
  hull_free(qh);
  free(pts);
  if (null) fclose(null);
  return s;
}
