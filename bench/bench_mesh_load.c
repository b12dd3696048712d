/* SPDX-License-Identifier: Apache-2.0 */
/* bench_mesh_load — the time to load a model whose one geometry is a large closed mesh file: reading the
 * binary STL, merging its repeated vertices, Qhull's convex hull (reduced to grit's 4096 CONVEX vertices:
 * every point of a sphere is on its hull) and the mass from the closed surface.
 *
 *   bench_mesh_load [NVERT]   (default 50000: a UV sphere of about that many distinct vertices)
 *   bench_mesh_load FILE      (a real STL or OBJ file, e.g. the largest mesh of a robot)
 *
 * Prints the vertex and triangle counts, the hull's vertex count and the median of 5 loads, in wall-clock
 * and in process CPU time. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "model_internal.h"

static void put_f32(unsigned char *p, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  for (int k = 0; k < 4; ++k) p[k] = (unsigned char)(u >> 8 * k);
}

/* A UV sphere of radius 0.1 with `rings` x `seg` quads (two poles), as a binary STL. */
static long write_sphere(const char *path, int rings, int seg) {
  const double PI = 3.14159265358979323846;
  const long ntri = 2L * seg * (rings - 1);
  unsigned char *buf = calloc(1, 84 + 50 * (size_t)ntri);
  if (!buf) return -1;
  buf[80] = (unsigned char)(ntri & 255), buf[81] = (unsigned char)(ntri >> 8 & 255);
  buf[82] = (unsigned char)(ntri >> 16 & 255), buf[83] = (unsigned char)(ntri >> 24 & 255);
  long t = 0;
  for (int i = 0; i < rings; ++i)
    for (int j = 0; j < seg; ++j) {
      double p[4][3];
      const int ii[4] = {i, i + 1, i + 1, i}, jj[4] = {j, j, j + 1, j + 1};
      for (int k = 0; k < 4; ++k) {
        const double th = PI * ii[k] / rings, ph = 2 * PI * (jj[k] % seg) / seg;
        p[k][0] = 0.1 * sin(th) * cos(ph), p[k][1] = 0.1 * sin(th) * sin(ph), p[k][2] = 0.1 * cos(th);
        if (ii[k] == 0 || ii[k] == rings) p[k][0] = p[k][1] = 0; /* the poles, exactly */
      }
      const int tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
      for (int h = 0; h < 2; ++h) {
        if ((i == 0 && h == 1) || (i == rings - 1 && h == 0)) continue; /* degenerate at the poles */
        for (int k = 0; k < 3; ++k)
          for (int c = 0; c < 3; ++c) put_f32(buf + 84 + 50 * t + 12 + 12 * k + 4 * c, (float)p[tris[h][k]][c]);
        ++t;
      }
    }
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  fwrite(buf, 1, 84 + 50 * (size_t)ntri, f);
  fclose(f);
  free(buf);
  return t;
}

/* Median wall and CPU time (ms) of 5 loads of `xml`; the hull's vertex count and the body's mass. */
static int time_loads(const char *xml, double *wall, double *cpu_ms, int *nhull, double *mass) {
  double t[5], cpu[5];
  for (int r = 0; r < 5; ++r) {
    grit_model *m;
    char msg[GRIT_MESSAGE_SIZE];
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    const double t0 = now_us();
    if (grit_mjcf_load_file(xml, &m, NULL, msg) != GRIT_OK) {
      fprintf(stderr, "%s\n", msg);
      return 1;
    }
    t[r] = (now_us() - t0) * 1e-3;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    cpu[r] = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-6;
    *nhull = m->geom_shape[0].nvert;
    *mass = grit_model_body_mass(m, 1);
    grit_model_free(m);
  }
  *wall = bench_median(t, 5), *cpu_ms = bench_median(cpu, 5);
  return 0;
}

/* A real mesh file (absolute or relative path) as the one geometry of a free body. */
static int bench_file(const char *mesh) {
  char dir[] = "/tmp/grit_bench_mesh_XXXXXX", xml[256], abs[4096];
  if (!mkdtemp(dir) || !realpath(mesh, abs)) {
    fprintf(stderr, "bench_mesh_load: cannot read %s\n", mesh);
    return 1;
  }
  snprintf(xml, sizeof xml, "%s/model.xml", dir);
  FILE *f = fopen(xml, "w");
  if (!f) return 1;
  fprintf(f, "<mujoco><asset><mesh name='m' file='%s'/></asset><worldbody><body><freejoint/>"
             "<geom type='mesh' mesh='m'/></body></worldbody></mujoco>\n", abs);
  fclose(f);
  double wall, cpu, mass;
  int nhull;
  const int bad = time_loads(xml, &wall, &cpu, &nhull, &mass);
  remove(xml), rmdir(dir);
  if (bad) return 1;
  printf("mesh %s: hull for collision %d vertices; mass %.6g kg\n", mesh, nhull, mass);
  printf("load time: median of 5 = %.1f ms wall, %.1f ms CPU\n", wall, cpu);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && argv[1][strspn(argv[1], "0123456789")] != '\0') return bench_file(argv[1]);
  const int want = argc > 1 ? atoi(argv[1]) : 50000;
  if (want < 100) {
    fprintf(stderr, "usage: bench_mesh_load [NVERT >= 100]\n");
    return 2;
  }
  const int rings = (int)sqrt(want / 2.0), seg = 2 * rings; /* (rings - 1) seg + 2 distinct vertices */
  char dir[] = "/tmp/grit_bench_mesh_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char stl[256], xml[256];
  snprintf(stl, sizeof stl, "%s/sphere.stl", dir);
  snprintf(xml, sizeof xml, "%s/model.xml", dir);
  const long ntri = write_sphere(stl, rings, seg);
  FILE *f = fopen(xml, "w");
  if (ntri < 0 || !f) return 1;
  fprintf(f, "<mujoco><asset><mesh file='sphere.stl'/></asset><worldbody><body><freejoint/>"
             "<geom type='mesh' mesh='sphere'/></body></worldbody></mujoco>\n");
  fclose(f);
  double wall, cpu, mass = 0;
  int nhull = 0;
  if (time_loads(xml, &wall, &cpu, &nhull, &mass)) return 1;
  const int nvert = (rings - 1) * seg + 2;
  /* MuJoCo's default mesh mass is its equivalent inertia box's: for a sphere of radius r, half sizes
   * sqrt(2.4) r / 2, volume 8 (sqrt(2.4) / 2)^3 r^3 = 3.718 r^3 (the sphere's own is 4.189 r^3) */
  printf("mesh: %d distinct vertices, %ld triangles (binary STL); hull for collision: %d vertices; mass %.6g kg "
         "(MuJoCo's equivalent-box mass of the sphere: %.6g)\n",
         nvert, ntri, nhull, mass, 8 * pow(sqrt(2.4) / 2, 3) * 1e-3 * 1000);
  printf("load time: median of 5 = %.1f ms wall, %.1f ms CPU (the machine's other load shows in the first)\n",
         wall, cpu);
  remove(stl), remove(xml), rmdir(dir);
  return 0;
}
