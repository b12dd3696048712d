/* SPDX-License-Identifier: Apache-2.0 */
/* test_hull_graph.c — a CONVEX shape's support by hill climbing on its hull's edges (hull_graph.c)
 * against the scan over all its vertices: the same vertex, ties included, on the Panda's hulls and on
 * degenerate point sets (flat, thin, many coplanar faces, repeated and interior points); the climb's rounds
 * four neighbours a vector (grit_hull_support_try_path 1, and 4: fused in one function) against the scalar
 * rounds (0): the same vertex or the same fall back to the scan; the world box's one pass four vertices a vector against the scalar pass;
 * the world box direction by direction (rows kept, failed climbs scanned alone) against the one pass;
 * the world boxes' wider plateau search (grit_hull_support_wide) on wheels, discs and many-vertex boxes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "collision_test_util.h"
#include "data_internal.h"
#include "geometry_internal.h"
#include "grit/grit.h"
#include "hull_graph.h"
#include "model_internal.h"

/* The climb from a random start, from no start, and the world box climbed from the last box's vertices,
 * against the scan and grit_shape_world_aabb (itself tested against sequential scans, test_collision),
 * on random directions, the axes, and the directions of the hull's vertices and of sums of two
 * (near-normals of faces and edges: the ties). */
static void check_shape(const grit_shape *c, unsigned long long *s, int ndir) {
  const int n = c->nvert;
  int hint[7] = {-1, -1, -1, -1, -1, -1, 0}, hint7[7] = {-1, -1, -1, -1, -1, -1, 0};
  double lastR[9] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
  for (int t = 0; t < ndir; ++t) {
    double d[3];
    const double *a = c->vertices + 3 * (t % n), *b = c->vertices + 3 * ((7 * t + 3) % n);
    for (int k = 0; k < 3; ++k)
      d[k] = t < 6    ? (k == t % 3) * (t < 3 ? 1.0 : -1.0)
             : t % 3 == 0 ? a[k]
             : t % 3 == 1 ? a[k] + b[k]
                          : ct_uniform(s, -1, 1);
    const int ref = grit_convex_scan(c, d), start = (int)ct_uniform(s, 0, n - 1e-9);
    cr_assert_eq(grit_hull_support(c, d, start), ref, "n = %d direction %d: climbed from %d", n, t, start);
    cr_assert_eq(grit_hull_support(c, d, -1), ref, "n = %d direction %d: climbed from the axis start", n, t);
    if (c->graph && __builtin_cpu_supports("avx2")) /* the climb's vector rounds against the old scalar ones */
      for (int st = -1; st <= start; st += start + 1) {
        const int old = grit_hull_support_try_path(c, d, st, 0);
        cr_assert_eq(grit_hull_support_try_path(c, d, st, 1), old, "n = %d direction %d: vector climb from %d", n, t, st);
        cr_assert(old < 0 || old == ref);
        cr_assert_eq(grit_hull_support_try_path(c, d, st, 3), old, "n = %d direction %d: plateau list first", n, t);
        cr_assert_eq(grit_hull_support_try_path(c, d, st, 2), old, "n = %d direction %d: scalar, list first", n, t);
        cr_assert_eq(grit_hull_support_try_path(c, d, st, 4), old, "n = %d direction %d: fused vector path", n, t);
        cr_assert_eq(grit_hull_support_try(c, d, st), old, "n = %d direction %d: the default path", n, t);
        const int wide = grit_hull_support_wide(c, d, st); /* the world boxes' search: the scan's or none */
        cr_assert(wide == ref || (wide < 0 && old < 0), "n = %d direction %d: wide search %d, scan %d", n, t, wide, ref);
      }
    double x[3];
    grit_shape_core_support(c, d, x);
    cr_assert(memcmp(x, c->vertices + 3 * ref, sizeof x) == 0);
    ct_pose P = ct_random_pose(s, 1.0);
    if (t % 4 == 0) /* axis-aligned: ties between the vertices of faces normal to the axes */
      for (int k = 0; k < 9; ++k) P.R[k] = k % 4 == 0;
    if (t % 3 == 1) /* a row kept from the last pose (a hinge about a fixed axis): its vertices kept */
      memcpy(P.R + 3 * (t / 3 % 3), lastR + 3 * (t / 3 % 3), 3 * sizeof(double));
    double lo[3], hi[3], lo2[3], hi2[3];
    grit_shape_world_aabb_hint(c, P.p, P.R, 0.01, lo, hi, hint, 0);
    grit_shape_world_aabb(c, P.p, P.R, 0.01, lo2, hi2); /* graph set: its scan pass */
    cr_assert(memcmp(lo, lo2, sizeof lo) == 0 && memcmp(hi, hi2, sizeof hi) == 0, "n = %d direction %d: box", n, t);
    int same_rows = 0; /* the box direction by direction (grit_shape_world_aabb_rows): the same bits */
    for (int j = 0; j < 3; ++j) same_rows |= !memcmp(lastR + 3 * j, P.R + 3 * j, 3 * sizeof(double)) << j;
    double lo5[3], hi5[3];
    grit_shape_world_aabb_rows(c, P.p, P.R, 0.01, lo5, hi5, hint7, same_rows);
    cr_assert(memcmp(lo5, lo2, sizeof lo5) == 0 && memcmp(hi5, hi2, sizeof hi5) == 0, "n = %d direction %d: rows", n, t);
    memcpy(lastR, P.R, sizeof lastR);
    if (__builtin_cpu_supports("avx2")) { /* the one pass four vertices a vector against the scalar pass */
      double lo3[3], hi3[3], lo4[3], hi4[3];
      grit_convex_world_aabb_path(c, P.p, P.R, 0.01, lo3, hi3, 0);
      grit_convex_world_aabb_path(c, P.p, P.R, 0.01, lo4, hi4, 1);
      cr_assert(memcmp(lo3, lo4, sizeof lo3) == 0 && memcmp(hi3, hi4, sizeof hi3) == 0, "n = %d direction %d: pass", n, t);
      cr_assert(memcmp(lo3, lo2, sizeof lo3) == 0 && memcmp(hi3, hi2, sizeof hi3) == 0);
    }
  }
}

/* Builds the graph of n points into a buffer owned by the caller; returns the shape (graph NULL when the
 * build declined). */
static grit_shape with_graph(const double *v, int n, int **buf) {
  grit_shape c = grit_shape_convex(v, n);
  *buf = calloc(grit_hull_graph_ints(n) + 1, sizeof(int));
  cr_assert_not_null(*buf);
  if (grit_hull_graph_build(&c, *buf)) c.graph = *buf;
  return c;
}

Test(hull_graph, panda_hulls_climb_to_the_scans_vertex) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status st = grit_load_file(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/franka_emika_panda/scene.xml",
                                  NULL, &m, NULL, msg);
  cr_assert_eq(st, GRIT_OK, "%s", msg);
  unsigned long long s = 11;
  int ngraph = 0;
  for (int g = 0; g < grit_model_ngeom(m); ++g) {
    grit_geom_def def;
    cr_assert_eq(grit_model_geom(m, g, &def), GRIT_OK);
    if (def.shape.type != GRIT_GEOM_CONVEX) continue;
    cr_assert_eq(def.shape.graph != NULL, def.shape.nvert >= GRIT_HULL_CLIMB_MIN, "geom %d: %d vertices", g,
                 def.shape.nvert);
    if (!def.shape.graph) continue;
    ngraph++;
    cr_assert_eq(grit_hull_graph_radius(def.shape.graph), grit_shape_bounding_radius(&(grit_shape){
                                                               .type = GRIT_GEOM_CONVEX,
                                                               .vertices = def.shape.vertices,
                                                               .nvert = def.shape.nvert}));
    check_shape(&def.shape, &s, 600);
  }
  cr_assert_geq(ngraph, 10, "the Panda's hulls: %d with a graph", ngraph);
  grit_model *copy = NULL; /* a copy's graphs point into its own arena */
  cr_assert_eq(grit_model_copy(m, &copy), GRIT_OK);
  grit_model_free(m);
  for (int g = 0; g < grit_model_ngeom(copy); ++g) {
    grit_geom_def def;
    grit_model_geom(copy, g, &def);
    if (def.shape.graph) check_shape(&def.shape, &s, 50);
  }
  grit_model_free(copy);
}

/* A box's surface sampled on a k x k grid per face (many coplanar vertices: the plateaus along the axes
 * outgrow the search's buffer and scan), scaled flat or thin, with repeated points and interior points. */
static int grid_box(double *v, int k, const double scale[3], int extra) {
  int n = 0;
  for (int f = 0; f < 6; ++f)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) {
        double p[3], u = -1.0 + 2.0 * i / (k - 1), w = -1.0 + 2.0 * j / (k - 1);
        p[f / 2] = f % 2 ? -1.0 : 1.0, p[(f / 2 + 1) % 3] = u, p[(f / 2 + 2) % 3] = w;
        for (int c = 0; c < 3; ++c) v[3 * n + c] = scale[c] * p[c];
        n++;
      }
  for (int e = 0; e < extra; ++e, ++n) /* a repeat of an earlier point, then an interior point */
    for (int c = 0; c < 3; ++c) v[3 * n + c] = e % 2 ? 0.3 * scale[c] * (c - 1) : v[3 * (5 * e) + c];
  return n;
}

Test(hull_graph, degenerate_point_sets) {
  static double v[3 * 700];
  unsigned long long s = 5;
  const double shapes[][3] = {{1, 1, 1}, {1, 1, 1e-4}, {1e-4, 1e-4, 1}, {0.02, 3, 0.5}};
  int *buf, ngraph = 0;
  for (int i = 0; i < 4; ++i)
    for (int k = 3; k <= 9; k += 3) {
      const int n = grid_box(v, k, shapes[i], 6);
      const grit_shape c = with_graph(v, n, &buf);
      if (c.graph) check_shape(&c, &s, 300), ngraph++;
      free(buf);
    }
  cr_assert_geq(ngraph, 4, "grid boxes with a graph: %d of 12", ngraph);
  for (int ns = 24; ns <= 200; ns += 88) { /* a cylinder of ns sides (cap plateaus of ns), flat and thin */
    for (int flat = 0; flat < 2; ++flat) {
      int n = 0;
      for (int i = 0; i < ns; ++i)
        for (int z = -1; z <= 1; z += 2, ++n) {
          const double a = 6.283185307179586 * i / ns;
          v[3 * n] = (flat ? 1.0 : 1e-3) * cos(a), v[3 * n + 1] = (flat ? 1.0 : 1e-3) * sin(a);
          v[3 * n + 2] = (flat ? 1e-5 : 1.0) * z;
        }
      const grit_shape c = with_graph(v, n, &buf);
      if (c.graph) check_shape(&c, &s, 300); /* caps fanned from one vertex keep the scan */
      free(buf);
    }
  }
  for (int n = 40; n <= 400; n *= 3) { /* points on a sphere, then the same with interior points mixed in */
    for (int i = 0; i < n; ++i) {
      double q[3], r;
      do {
        for (int k = 0; k < 3; ++k) q[k] = ct_uniform(&s, -1, 1);
        r = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
      } while (r < 0.1 || r > 1.0);
      for (int k = 0; k < 3; ++k) v[3 * i + k] = (i % 3 == 2 ? 0.5 : 1.0) * q[k] / r;
    }
    const grit_shape c = with_graph(v, n, &buf);
    cr_assert_not_null(c.graph);
    check_shape(&c, &s, 400);
    free(buf);
  }
  const grit_shape c = with_graph(v, GRIT_HULL_CLIMB_MIN - 1, &buf); /* below the crossover: the scan */
  cr_assert_null(c.graph);
  cr_assert_eq(grit_hull_graph_ints(GRIT_HULL_CLIMB_MIN - 1), 0);
  free(buf);
}

/* The scan's vector loop (grit_convex_scan_lanes, avx2 = 1) against its scalar lanes: the same vertex
 * on grid boxes (faces of coplanar points: ties along the axes, repeats), random clouds of every size
 * from 4 to 70 (the tails of every length), and directions with a NaN or zero component. */
Test(hull_graph, vector_scan_is_the_scalar_scan) {
  if (!__builtin_cpu_supports("avx2")) cr_skip_test("no AVX2: the vector scan is never taken");
  static double v[3 * 700];
  unsigned long long s = 11;
  const double shapes[][3] = {{1, 1, 1}, {1, 1, 1e-4}, {0.02, 3, 0.5}};
  int nshape = 0;
  for (int i = 0; i < 3; ++i)
    for (int k = 2; k <= 6; ++k, ++nshape) {
      const int n = grid_box(v, k, shapes[i], k);
      const grit_shape c = grit_shape_convex(v, n);
      for (int t = 0; t < 200; ++t) {
        double d[3];
        for (int q = 0; q < 3; ++q) d[q] = t < 6 ? (q == t % 3) * (t < 3 ? 1.0 : -1.0) : t % 2 ? ct_uniform(&s, -1, 1) : v[3 * (t % n) + q];
        cr_assert_eq(grit_convex_scan_lanes(&c, d, 1), grit_convex_scan_lanes(&c, d, 0), "grid box %d, direction %d", nshape, t);
      }
    }
  for (int n = 4; n <= 70; ++n) {
    for (int i = 0; i < 3 * n; ++i) v[i] = ct_uniform(&s, -1, 1);
    const grit_shape c = grit_shape_convex(v, n);
    for (int t = 0; t < 100; ++t) {
      double d[3] = {ct_uniform(&s, -1, 1), ct_uniform(&s, -1, 1), ct_uniform(&s, -1, 1)};
      if (t % 10 == 1) d[t % 3] = NAN;
      if (t % 10 == 2) d[0] = d[1] = d[2] = 0.0; /* every vertex ties: the lowest index */
      cr_assert_eq(grit_convex_scan_lanes(&c, d, 1), grit_convex_scan_lanes(&c, d, 0), "n = %d, direction %d", n, t);
    }
  }
}

/* The hulls' world boxes in the step by rows (grit_collision.no_box_rows 0: a row of R that kept its
 * value keeps its two vertices, the others climbed) against the old path (1): the Panda swinging under
 * sinusoidal controls, 120 steps, the same boxes and positions to the bit at every step; some boxes kept
 * one or two rows (joint 1 turns about the vertical: its links' rows along z keep their values). */
Test(hull_graph, world_boxes_by_rows_are_the_old_paths) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_load_file(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/franka_emika_panda/scene.xml",
                              NULL, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d[2];
  for (int r = 0; r < 2; ++r) {
    cr_assert_eq(grit_data_create(m, &d[r]), GRIT_OK);
    d[r]->collision->no_box_rows = r;
  }
  const int ng = m->ngeom, nu = grit_model_nu(m), nq = grit_model_nq(m);
  double *last = malloc(9 * sizeof(double) * (size_t)ng), u[64];
  cr_assert(nu <= 64 && last);
  for (int i = 0; i < 9 * ng; ++i) last[i] = NAN;
  int partial = 0;
  for (int t = 0; t < 120; ++t) {
    for (int a = 0; a < nu; ++a) u[a] = 0.8 * sin(0.05 * t * (1 + a % 3) + a);
    for (int r = 0; r < 2; ++r) {
      cr_assert_eq(grit_data_set_ctrl(d[r], u, nu), GRIT_OK);
      cr_assert_eq(grit_step(d[r]), GRIT_OK, "%s", grit_data_last_error(d[r]));
    }
    const grit_collision *c0 = d[0]->collision, *c1 = d[1]->collision;
    cr_assert(!memcmp(c0->aabb, c1->aabb, 6 * sizeof(double) * (size_t)ng), "step %d: other boxes", t);
    cr_assert(!memcmp(grit_data_qpos(d[0]), grit_data_qpos(d[1]), sizeof(double) * (size_t)nq), "step %d", t);
    for (int g = 0; g < ng; ++g) {
      if (m->geom_shape[g].type != GRIT_GEOM_CONVEX) continue;
      int same = 0;
      for (int j = 0; j < 3; ++j)
        same += last[9 * g + 3 * j] == c0->gmat[9 * g + 3 * j] && last[9 * g + 3 * j + 1] == c0->gmat[9 * g + 3 * j + 1] &&
                last[9 * g + 3 * j + 2] == c0->gmat[9 * g + 3 * j + 2];
      partial += same == 1 || same == 2;
    }
    memcpy(last, c0->gmat, 9 * sizeof(double) * (size_t)ng);
  }
  cr_assert_gt(partial, 50, "boxes with some rows kept: %d", partial);
  for (int r = 0; r < 2; ++r) grit_data_free(d[r]);
  free(last);
  grit_model_free(m);
}

/* Every vertex as the climb's start gives the scan's vertex: what lets the collision workspace keep a pair's
 * starts across calls and steps (grit_collision.climb). The hulls of a model, random directions and the
 * directions of vertices and of sums of two (the ties). */
static void every_start(const char *path, int min_graphs) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_load_file(path, NULL, &m, NULL, msg), GRIT_OK, "%s", msg);
  unsigned long long s = 5;
  int ngraph = 0;
  for (int g = 0; g < grit_model_ngeom(m); ++g) {
    const grit_shape *c = &m->geom_shape[g];
    if (c->type != GRIT_GEOM_CONVEX || !c->graph) continue;
    ngraph++;
    const int n = c->nvert;
    for (int t = 0; t < 60; ++t) {
      double d[3];
      const double *a = c->vertices + 3 * (t % n), *b = c->vertices + 3 * ((5 * t + 1) % n);
      for (int k = 0; k < 3; ++k) d[k] = t % 3 == 0 ? a[k] : t % 3 == 1 ? a[k] + b[k] : ct_uniform(&s, -1, 1);
      const int ref = grit_convex_scan(c, d);
      for (int st = -1; st < n; ++st)
        cr_assert_eq(grit_hull_support(c, d, st), ref, "geom %d (%d vertices) direction %d: from %d", g, n, t, st);
    }
  }
  cr_assert_geq(ngraph, min_graphs, "%s: %d hulls with a graph", path, ngraph);
  grit_model_free(m);
}

Test(hull_graph, every_start_climbs_to_the_scans_vertex) {
  every_start(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/franka_emika_panda/scene.xml", 10);
  every_start(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/robotis_op3/scene.xml", 1);
}

/* The pairs' kept climb starts (grit_collision.climb) against none (no_climb_cache) and against starts
 * scrambled to random vertices before every step: the same states and A, B bit for bit. */
static void kept_starts_case(const char *path, int steps) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_load_file(path, NULL, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d[3];
  for (int r = 0; r < 3; ++r) {
    cr_assert_eq(grit_data_create(m, &d[r]), GRIT_OK);
    d[r]->collision->no_climb_cache = r == 1;
  }
  const int ng = m->ngeom, nu = grit_model_nu(m), nx = 2 * grit_model_nv(m), nq = grit_model_nq(m);
  double u[64], *A[3], *B[3];
  cr_assert(nu <= 64);
  for (int r = 0; r < 3; ++r) {
    A[r] = calloc((size_t)(nx * nx) + 1, sizeof(double));
    B[r] = calloc((size_t)(nx * nu) + 1, sizeof(double));
  }
  unsigned long long s = 3;
  int kept = 0;
  for (int t = 0; t < steps; ++t) {
    for (int a = 0; a < nu; ++a) u[a] = 0.8 * sin(0.05 * t * (1 + a % 3) + a);
    grit_collision *c2 = d[2]->collision;
    for (int e = 0; e < c2->climb_cap; ++e) { /* any vertices of each kept pair's hulls */
      int *x = c2->climb + GRIT_CLIMB_ENTRY * e;
      if (x[0] < 0) continue;
      const int g[2] = {x[0] / ng, x[0] % ng};
      for (int j = 0; j < 2; ++j)
        if (m->geom_shape[g[j]].type == GRIT_GEOM_CONVEX && m->geom_shape[g[j]].graph) {
          for (int i = 0; i < GRIT_CLIMB_TRAIL; ++i)
            x[2 + j * (1 + GRIT_CLIMB_TRAIL) + i] = (int)ct_uniform(&s, 0, m->geom_shape[g[j]].nvert - 1e-9);
          kept++;
        }
    }
    for (int r = 0; r < 3; ++r) {
      cr_assert_eq(grit_data_set_ctrl(d[r], u, nu), GRIT_OK);
      cr_assert_eq(grit_step(d[r]), GRIT_OK, "%s", grit_data_last_error(d[r]));
    }
    for (int r = 1; r < 3; ++r) {
      cr_assert(!memcmp(grit_data_qpos(d[0]), grit_data_qpos(d[r]), sizeof(double) * (size_t)nq), "step %d (%d)", t, r);
      cr_assert(!memcmp(grit_data_qvel(d[0]), grit_data_qvel(d[r]), sizeof(double) * (size_t)nx / 2), "step %d (%d)", t, r);
    }
    if (t % 50 == 49) {
      for (int r = 0; r < 3; ++r)
        cr_assert_eq(grit_step_derivatives(d[r], A[r], B[r], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[r]));
      for (int r = 1; r < 3; ++r)
        cr_assert(!memcmp(A[0], A[r], sizeof(double) * (size_t)(nx * nx)) &&
                      !memcmp(B[0], B[r], sizeof(double) * (size_t)(nx * nu)),
                  "step %d: A, B (%d)", t, r);
    }
  }
  cr_assert_gt(kept, steps, "%s: hull starts kept: %d", path, kept);
  int used = 0; /* trails the default path wrote: GJK/EPA climbed from kept starts */
  for (int e = 0; e < d[0]->collision->climb_cap; ++e)
    for (int j = 0; j < 2; ++j) used += d[0]->collision->climb[GRIT_CLIMB_ENTRY * e + 2 + j * (1 + GRIT_CLIMB_TRAIL)] >= 0;
  cr_assert_gt(used, 0, "%s: no trail written", path);
  for (int r = 0; r < 3; ++r) {
    grit_data_free(d[r]);
    free(A[r]);
    free(B[r]);
  }
  grit_model_free(m);
}

Test(hull_graph, kept_climb_starts_change_nothing) {
  kept_starts_case(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/franka_emika_panda/scene.xml", 200);
  kept_starts_case(GRIT_SOURCE_DIR "/tests/models/menagerie_collision/robotis_op3/scene.xml", 200);
}

/* A wheel: rings of m points at nz heights (a rounded tyre, flat sides of m vertices), flattened to a disc
 * when thin. Its sides normal to an axis are the plateaus the world boxes' wide search takes (or leaves to
 * the one pass when too large): the scan's vertex, the same box bits, at random and axis-aligned poses. */
static int wheel(double *v, int m, int nz, double halfwidth) {
  int n = 0;
  for (int z = 0; z < nz; ++z) {
    const double t = -1.0 + 2.0 * z / (nz - 1), r = 0.3 * (1.0 - 0.2 * t * t);
    for (int i = 0; i < m; ++i, ++n)
      v[3 * n] = r * cos(6.283185307179586 * i / m), v[3 * n + 1] = r * sin(6.283185307179586 * i / m),
      v[3 * n + 2] = halfwidth * t;
  }
  return n;
}

Test(hull_graph, wide_plateau_search_on_wheels_discs_and_boxes) {
  static double v[3 * 1200];
  unsigned long long seed = 31;
  int found = 0, declined = 0;
  const struct { int m, nz; double w; } wh[] = {{40, 12, 0.05}, {160, 2, 0.05}, {48, 8, 1e-3}, {320, 3, 0.1}};
  for (int c = 0; c < 5; ++c) {
    const double sc[3] = {1.0, 0.7, 0.4};
    const int n = c < 4 ? wheel(v, wh[c].m, wh[c].nz, wh[c].w) : grid_box(v, 9, sc, 0);
    int *buf;
    grit_shape s = with_graph(v, n, &buf);
    cr_assert_not_null(s.graph, "shape %d (%d vertices): no graph", c, n);
    check_shape(&s, &seed, 300);
    for (int t = 0; t < 6; ++t) { /* the axes: the flat sides and faces */
      const double d[3] = {t / 2 == 0 ? 1.0 - 2.0 * (t % 2) : 0.0, t / 2 == 1 ? 1.0 - 2.0 * (t % 2) : 0.0,
                           t / 2 == 2 ? 1.0 - 2.0 * (t % 2) : 0.0};
      const int w = grit_hull_support_wide(&s, d, -1);
      cr_assert(w < 0 || w == grit_convex_scan(&s, d));
      if (__builtin_cpu_supports("avx2")) found += w >= 0 && grit_hull_support_try(&s, d, -1) < 0, declined += w < 0;
    }
    free(buf);
  }
  if (__builtin_cpu_supports("avx2")) cr_assert(found > 0 && declined > 0, "found %d declined %d", found, declined);
}
