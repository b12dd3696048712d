/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_mesh.c — the MJCF loader's meshes: vertex lists and convex hulls, the mesh files it reads
 * (MuJoCo's binary .msh, binary and text STL, OBJ) from a model file's mesh directory, their masses
 * against closed forms, and the errors of bad, open, flat or unsupported mesh files with file and line.
 * The rest of the loader on its own: test_mjcf.c. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_test_util.h"
#include "model_internal.h"

/* A mesh from a vertex list: a CONVEX shape, the hull of the points (an interior point is not a vertex);
 * without an <inertial> its mass is the hull's, as in MuJoCo: with exactmeshinertia, density x the
 * tetrahedron's volume 0.1^3 / 6 (single-precision vertices, as MuJoCo's). A flat list has no hull: an
 * error with the line. */
Test(mjcf, mesh_from_vertex_list) {
  const char *xml = "<mujoco><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1  .1 .1 .1' scale='0.1 0.1 0.1'/>"
                    "</asset><worldbody><body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
                    "<geom type='mesh' mesh='tet'/></body></worldbody></mujoco>";
  grit_model *m = load(xml, NULL);
  cr_assert_eq(m->geom_shape[0].type, GRIT_GEOM_CONVEX);
  cr_assert_eq(m->geom_shape[0].nvert, 4);
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += m->geom_shape[0].vertices[i];
  cr_assert(fabs(sum - 0.3) <= 1e-15, "the corners: coordinates sum to %.17g", sum);
  grit_model_free(m);
  m = load("<mujoco><compiler exactmeshinertia='true'/><asset><mesh name='tet' vertex='0 0 0  1 0 0  0 1 0  0 0 1' "
           "scale='.1 .1 .1'/></asset><worldbody><body><freejoint/><geom type='mesh' mesh='tet'/></body></worldbody>"
           "</mujoco>",
           NULL);
  cr_assert(fabs(m->body_mass[1] - 1000 * 1e-3 / 6) <= 3e-7 * m->body_mass[1], "mass %.17g", m->body_mass[1]);
  grit_model_free(m);
  expect_error("<mujoco><asset>\n<mesh name='flat' vertex='0 0 0  1 0 0  0 1 0  1 1 0'/></asset>"
               "<worldbody><body><freejoint/><geom type='mesh' mesh='flat'/></body></worldbody></mujoco>",
               GRIT_ERR_INVALID_MODEL, "<string>:2: <mesh> the vertices are degenerate");
  expect_error("<mujoco><worldbody><geom type='mesh' mesh='nope'/></worldbody></mujoco>", GRIT_ERR_INVALID_MODEL,
               "mesh");
}

/* A mesh file in a temporary directory: dir/sub/name, written from `len` bytes. */
static void write_file(const char *dir, const char *name, const void *data, size_t len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s", path);
  cr_assert_eq(fwrite(data, 1, len, f), len);
  fclose(f);
}

/* The 12 triangles of a cube of half-size 0.05 m. */
static const double CUBE_V[8][3] = {{-.05, -.05, -.05}, {-.05, -.05, .05}, {-.05, .05, -.05}, {-.05, .05, .05},
                                    {.05, -.05, -.05},  {.05, -.05, .05},  {.05, .05, -.05},  {.05, .05, .05}};
static const int CUBE_F[12][3] = {{0, 1, 3}, {0, 3, 2}, {4, 6, 7}, {4, 7, 5}, {0, 4, 5}, {0, 5, 1},
                                  {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 5, 7}, {1, 7, 3}};

static void put_f32(unsigned char *p, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  for (int k = 0; k < 4; ++k) p[k] = (unsigned char)(u >> 8 * k);
}

static void put_i32(unsigned char *p, uint32_t u) {
  for (int k = 0; k < 4; ++k) p[k] = (unsigned char)(u >> 8 * k);
}

/* MuJoCo's binary MSH (read by MuJoCo 2.2.2, used by dm_control's assets): the cube with normals, without
 * an <inertial>: its 8 corners, the mass density x volume = 1000 x 0.1^3 = 1 kg from its faces. Errors:
 * a size that does not match the header, too few vertices, a face index out of range. */
Test(mjcf, mesh_file_msh) {
  char dir[] = "/tmp/grit_msh_XXXXXX", model[1100], msg[GRIT_MESSAGE_SIZE];
  cr_assert_not_null(mkdtemp(dir));
  unsigned char msh[16 + 8 * 12 + 8 * 12 + 12 * 12];
  put_i32(msh, 8), put_i32(msh + 4, 8), put_i32(msh + 8, 0), put_i32(msh + 12, 12);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 3; ++j) {
      put_f32(msh + 16 + 12 * i + 4 * j, (float)CUBE_V[i][j]);
      put_f32(msh + 16 + 96 + 12 * i + 4 * j, (float)(CUBE_V[i][j] * 20)); /* normals, unused */
    }
  for (int t = 0; t < 12; ++t)
    for (int k = 0; k < 3; ++k) put_i32(msh + 16 + 192 + 12 * t + 4 * k, (uint32_t)CUBE_F[t][k]);
  write_file(dir, "cube.msh", msh, sizeof msh);
  write_file(dir, "short.msh", msh, sizeof msh - 4);
  put_i32(msh, 3);
  write_file(dir, "three.msh", msh, sizeof msh);
  put_i32(msh, 8);
  put_i32(msh + 16 + 192 + 4, 8);
  write_file(dir, "index.msh", msh, sizeof msh);
  static const char *const MODEL = "<mujoco><asset><mesh name='m' file='%s'/></asset><worldbody>\n"
                                   "<body><freejoint/><geom type='mesh' mesh='m'/></body></worldbody></mujoco>\n";
  const char *files[4] = {"cube.msh", "short.msh", "three.msh", "index.msh"};
  const char *errors[4] = {NULL, "size does not match", "vertices (>= 4)", "bad vertex index"};
  for (int i = 0; i < 4; ++i) {
    char text[400];
    snprintf(text, sizeof text, MODEL, files[i]);
    write_file(dir, "scene.xml", text, strlen(text));
    snprintf(model, sizeof model, "%s/scene.xml", dir);
    grit_model *m = NULL;
    const grit_status s = grit_mjcf_load_file(model, &m, NULL, msg);
    if (!errors[i]) {
      cr_assert_eq(s, GRIT_OK, "%s", msg);
      cr_assert_eq(m->geom_shape[0].nvert, 8);
      cr_assert_float_eq(grit_model_body_mass(m, 1), 1.0, 1e-6); /* float32 corners */
      grit_model_free(m);
    } else {
      cr_assert_eq(s, GRIT_ERR_PARSE, "%s: %d %s", files[i], s, msg);
      cr_assert(strstr(msg, errors[i]) && strstr(msg, ":1:"), "%s", msg);
    }
  }
  snprintf(model, sizeof model, "rm -r '%s'", dir);
  cr_assert_eq(system(model), 0);
}

/* The cube as a binary STL (whose header, as many exporters write, begins with "solid"), an ASCII STL and
 * an OBJ, loaded through <compiler meshdir> from a model file in the directory above: each geometry is
 * the cube's 8 corners (merged from the STL's 36), scaled where asked, and rests on the ground at its
 * half-size. Errors: a missing file (its path), an unknown format, 'file' with 'vertex', a vertex line
 * without three numbers, a flat mesh, a truncated binary STL, and a model loaded from memory, which has no
 * directory to read mesh files from. */
Test(mjcf, mesh_files_stl_and_obj) {
  char dir[] = "/tmp/grit_mesh_XXXXXX", sub[1100], model[1100];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/assets", dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  unsigned char bin[84 + 12 * 50];
  memset(bin, 0, sizeof bin);
  memcpy(bin, "solid exported by a tool", 24);
  bin[80] = 12;
  for (int t = 0; t < 12; ++t)
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j) put_f32(bin + 84 + 50 * t + 12 + 12 * k + 4 * j, (float)CUBE_V[CUBE_F[t][k]][j]);
  write_file(sub, "cube.stl", bin, sizeof bin);
  char text[8192];
  int n = snprintf(text, sizeof text, "solid cube\n");
  for (int t = 0; t < 12; ++t) {
    n += snprintf(text + n, sizeof text - (size_t)n, " facet normal 0 0 0\n  outer loop\n");
    for (int k = 0; k < 3; ++k)
      n += snprintf(text + n, sizeof text - (size_t)n, "   vertex %.17g %.17g %.17g\n", CUBE_V[CUBE_F[t][k]][0],
                    CUBE_V[CUBE_F[t][k]][1], CUBE_V[CUBE_F[t][k]][2]);
    n += snprintf(text + n, sizeof text - (size_t)n, "  endloop\n endfacet\n");
  }
  n += snprintf(text + n, sizeof text - (size_t)n, "endsolid cube\n");
  write_file(sub, "cube_text.STL", text, (size_t)n);
  n = snprintf(text, sizeof text, "# a cube\nvn 0 0 1\n");
  for (int i = 0; i < 8; ++i) n += snprintf(text + n, sizeof text - (size_t)n, "v %.17g %.17g %.17g\n", CUBE_V[i][0], CUBE_V[i][1], CUBE_V[i][2]);
  for (int t = 0; t < 12; ++t) n += snprintf(text + n, sizeof text - (size_t)n, "f %d %d %d\n", CUBE_F[t][0] + 1, CUBE_F[t][1] + 1, CUBE_F[t][2] + 1);
  write_file(sub, "cube.obj", text, (size_t)n);
  write_file(sub, "bad.obj", "v 1 2\n", 6);
  n = snprintf(text, sizeof text, "# the cube without its last face\n");
  for (int i = 0; i < 8; ++i) n += snprintf(text + n, sizeof text - (size_t)n, "v %.17g %.17g %.17g\n", CUBE_V[i][0], CUBE_V[i][1], CUBE_V[i][2]);
  for (int t = 0; t < 10; ++t) n += snprintf(text + n, sizeof text - (size_t)n, "f %d %d %d\n", CUBE_F[t][0] + 1, CUBE_F[t][1] + 1, CUBE_F[t][2] + 1);
  write_file(sub, "open.obj", text, (size_t)n);
  write_file(sub, "cube.ply", "ply\n", 4);
  {
    char path[1200];
    snprintf(path, sizeof path, "%s/many.obj", sub);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 4097; ++i) fprintf(f, "v %d %d %d\n", i % 17, (i / 17) % 17, i / 289);
    fclose(f);
    snprintf(path, sizeof path, "%s/flat.obj", sub);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 100; ++i) fprintf(f, "v %d %d 0\n", i % 10, i / 10);
    fclose(f);
  }
  write_file(sub, "short.stl", bin, sizeof bin - 50);

  static const char *const MODEL =
      "<mujoco><compiler meshdir='assets'/><asset>\n"
      "<mesh name='bin' file='cube.stl'/>\n<mesh name='txt' file='cube_text.STL' scale='2 2 2'/>\n"
      "<mesh name='obj' file='cube.obj'/>\n</asset><worldbody><geom type='plane' size='1 1 .1'/>\n"
      "<body pos='0 0 .2'><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='.002 .002 .002'/><geom type='mesh' mesh='bin'/></body>\n"
      "<body pos='.5 0 .2'><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='.002 .002 .002'/><geom type='mesh' mesh='txt'/></body>\n"
      "<body pos='-.5 0 .2'><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='.002 .002 .002'/><geom type='mesh' mesh='obj'/></body>\n"
      "</worldbody></mujoco>\n";
  snprintf(model, sizeof model, "%s/scene.xml", dir);
  write_file(dir, "scene.xml", MODEL, strlen(MODEL));
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_file(model, &m, &info, msg), GRIT_OK, "%s", msg);
  for (int g = 1; g <= 3; ++g) {
    const grit_shape *s = &m->geom_shape[g];
    cr_assert_eq(s->type, GRIT_GEOM_CONVEX);
    cr_assert_eq(s->nvert, 8, "geometry %d: %d vertices", g, s->nvert);
    const double h = g == 2 ? 0.1 : 0.05;
    for (int i = 0; i < 24; ++i)
      cr_assert(fabs(fabs(s->vertices[i]) - h) <= (g == 1 ? 1e-8 : 1e-16), "geometry %d: coordinate %.17g", g, s->vertices[i]);
  }
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  for (int k = 0; k < 1000; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double *q = grit_data_qpos(d);
  /* resting on 4 corners of stiffness k = 1e6 N/m each: half-size less m g / (4 k) = 2.4525e-6 m */
  for (int b = 0; b < 3; ++b)
    cr_assert(fabs(q[7 * b + 2] - ((b == 1 ? 0.1 : 0.05) - 9.81 / 4e6)) <= 1e-9, "body %d rests at z = %.12f", b, q[7 * b + 2]);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);


  /* Mass from the faces: with no <inertial>, a mesh geometry weighs density x the volume its triangles
   * bound, at their centroid, with their inertia. The cube mesh scaled to half-sizes 0.05, 0.1, 0.15,
   * placed off the body origin and turned, with a sphere beside it, against the same body built with a
   * box geometry: the same mass, centre and inertia to round-off. */
  static const char *const MASS =
      "<mujoco><compiler meshdir='assets'/><asset><mesh name='c' file='cube.obj' scale='1 2 3'/></asset><worldbody>\n"
      "<body name='m'><freejoint/><geom type='mesh' mesh='c' pos='.1 .2 .3' euler='30 40 50' density='700'/>"
      "<geom size='.05' pos='-.2 0 0'/></body>\n"
      "<body name='b' pos='1 0 0'><freejoint/><geom type='box' size='.05 .1 .15' pos='.1 .2 .3' euler='30 40 50' density='700'/>"
      "<geom size='.05' pos='-.2 0 0'/></body>\n"
      "<body name='one' pos='2 0 0'><freejoint/><geom type='mesh' mesh='c' mass='2'/></body>\n"
      "</worldbody></mujoco>\n";
  write_file(dir, "mass.xml", MASS, strlen(MASS));
  snprintf(model, sizeof model, "%s/mass.xml", dir);
  cr_assert_eq(grit_mjcf_load_file(model, &m, NULL, msg), GRIT_OK, "%s", msg);
  const int bm = grit_model_body_index(m, "m"), bb = grit_model_body_index(m, "b"), b1 = grit_model_body_index(m, "one");
  /* MuJoCo holds mesh vertices in single precision (grit too, to agree with it): 1e-7 relative */
  cr_assert(fabs(m->body_mass[bm] - m->body_mass[bb]) <= 1e-7 * m->body_mass[bb], "mass %.17g vs %.17g", m->body_mass[bm],
            m->body_mass[bb]);
  for (int i = 0; i < 3; ++i) cr_assert(fabs(m->body_com[3 * bm + i] - m->body_com[3 * bb + i]) <= 1e-8, "centre %d", i);
  for (int i = 0; i < 9; ++i)
    cr_assert(fabs(m->body_inertia[9 * bm + i] - m->body_inertia[9 * bb + i]) <= 1e-7 * m->body_inertia[9 * bb],
              "inertia %d: %.17g vs %.17g", i, m->body_inertia[9 * bm + i], m->body_inertia[9 * bb + i]);
  /* alone, with a given mass: the box of sides 0.1, 0.2, 0.3 (the mesh's scale) and mass 2 has
   * I = m (b^2 + c^2) / 12 and so on, at its centre (the body origin) */
  const double sides[3] = {0.1, 0.2, 0.3};
  cr_assert(fabs(m->body_mass[b1] - 2.0) <= 1e-15);
  for (int i = 0; i < 3; ++i) cr_assert(fabs(m->body_com[3 * b1 + i]) <= 1e-8, "centre %d", i);
  for (int i = 0; i < 9; ++i) {
    const double s2 = sides[(i / 3 + 1) % 3] * sides[(i / 3 + 1) % 3] + sides[(i / 3 + 2) % 3] * sides[(i / 3 + 2) % 3];
    cr_assert(fabs(m->body_inertia[9 * b1 + i] - (i % 4 == 0 ? 2.0 * s2 / 12 : 0.0)) <= 1e-7 * 2.0 * s2 / 12, "inertia %d: %.17g", i,
              m->body_inertia[9 * b1 + i]);
  }
  grit_model_free(m);

  struct { const char *mesh, *part; grit_status s; } bad[] = {
      {"<mesh name='a' file='missing.stl'/>", "missing.stl", GRIT_ERR_IO},
      {"<mesh name='a' file='cube.ply'/>", "only .stl, .obj and .msh", GRIT_ERR_UNSUPPORTED},
      {"<mesh name='a' file='cube.obj' vertex='0 0 0 1 0 0 0 1 0 0 0 1'/>", "not both", GRIT_ERR_INVALID_MODEL},
      {"<mesh name='a' file='bad.obj'/>", "three numbers", GRIT_ERR_PARSE},
      {"<mesh name='a' file='flat.obj'/>", "'flat.obj': the vertices are degenerate", GRIT_ERR_INVALID_MODEL},
      {"<mesh name='a' file='short.stl'/>", "binary STL truncated: 12 triangles announced", GRIT_ERR_PARSE},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<mujoco><compiler meshdir='assets'/><asset>\n%s</asset><worldbody><body><freejoint/>"
             "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/><geom type='mesh' mesh='a'/></body></worldbody></mujoco>",
             bad[i].mesh);
    write_file(dir, "bad.xml", xml, strlen(xml));
    char path[1200];
    snprintf(path, sizeof path, "%s/bad.xml", dir);
    m = (grit_model *)&m;
    grit_status s = grit_mjcf_load_file(path, &m, NULL, msg);
    cr_assert_eq(s, bad[i].s, "case %zu: %s: %s", i, grit_status_string(s), msg);
    cr_assert_null(m);
    cr_assert(strstr(msg, bad[i].part) && strstr(msg, "bad.xml:2: <mesh>"), "case %zu: message '%s'", i, msg);
  }
  /* 4097 vertices on a grid (15 layers, the last one of 3 rows): any number is read; the hull has the
   * corners of the box and of the top rows, coplanar grid points are not vertices */
  static const char *const MANY = "<mujoco><compiler meshdir='assets'/><asset><mesh file='many.obj'/></asset>\n"
                                  "<worldbody><body><freejoint/><geom type='mesh' mesh='many'/></body></worldbody></mujoco>";
  write_file(dir, "bad.xml", MANY, strlen(MANY));
  {
    char path[1200];
    snprintf(path, sizeof path, "%s/bad.xml", dir);
    cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(m->geom_shape[0].nvert, 10, "%d hull vertices", m->geom_shape[0].nvert); /* 8 + the top row's ends */
    /* between the full layers' box (16 x 16 x 13) and the box with the partial top layer */
    cr_assert(m->body_mass[1] > 1000.0 * 16 * 16 * 13 && m->body_mass[1] < 1000.0 * 16 * 16 * 14, "mass %g",
              m->body_mass[1]);
    grit_model_free(m);
  }
  /* an open surface loads and weighs as MuJoCo 2.2.2 weighs it: the pyramids on the faces it has, from
   * their centroid (the cube without two faces: 0.952 kg where the closed cube has 1 kg) */
  static const char *const OPEN = "<mujoco><compiler meshdir='assets'/><asset><mesh name='a' file='open.obj'/></asset>\n"
                                  "<worldbody><body><freejoint/><geom type='mesh' mesh='a'/></body></worldbody></mujoco>";
  write_file(dir, "bad.xml", OPEN, strlen(OPEN));
  {
    char path[1200];
    snprintf(path, sizeof path, "%s/bad.xml", dir);
    cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
    cr_assert(m->body_mass[1] > 0.9 && m->body_mass[1] < 1.0, "mass %.17g", m->body_mass[1]);
    grit_model_free(m);
  }
  expect_error("<mujoco><asset><mesh name='a' file='cube.stl'/></asset></mujoco>", GRIT_ERR_UNSUPPORTED,
               "loaded from a file");
  const char *files[] = {"assets/cube.stl", "assets/cube_text.STL", "assets/cube.obj", "assets/bad.obj", "assets/cube.ply",
                         "assets/many.obj", "assets/open.obj", "assets/flat.obj", "assets/short.stl", "scene.xml", "bad.xml", "mass.xml"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    remove(path);
  }
  rmdir(sub);
  rmdir(dir);
}
