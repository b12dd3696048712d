/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_files.c — real robot files and what they use (issue 24): <include> (relative to the including
 * file; a missing file and a cycle are errors with file and line), the DeepMind Control Suite files of
 * tests/models/dm_control_suite loading unmodified, <contact><exclude> and <pair> with MuJoCo's filters
 * (an excluded pair that overlaps never makes a contact; the CMU humanoid lies flat), <frame>,
 * settotalmass, MuJoCo's default time step, joint springdamper, the lenient load option, and through
 * `grit sim`: exit 1 with file and line for bad input, --lenient. The trajectories against MuJoCo are in
 * test_mjcf_real.c. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif
#ifndef GRIT_CLI
#error "GRIT_CLI must be defined"
#endif

extern char **environ;

static void model_path(char *out, size_t n, const char *rel) {
  snprintf(out, n, "%s/tests/models/dm_control_suite/%s", GRIT_SOURCE_DIR, rel);
}

/* A scratch directory with files written into it. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void remove_files(const char *dir, const char *const *names, int n) {
  for (int i = 0; i < n; ++i) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    remove(path);
  }
  rmdir(dir);
}

static grit_status load_at(const char *dir, const char *name, grit_model **m, char *msg) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return grit_mjcf_load_file(path, m, NULL, msg);
}

/* Runs `grit sim FILE [extra]`; returns its exit status, stderr's last line in err. */
static int run_sim(const char *file, const char *extra, char *err, size_t n) {
  char out[] = "/tmp/grit_sim_err_XXXXXX";
  const int fd = mkstemp(out);
  cr_assert_geq(fd, 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  const char *argv[] = {GRIT_CLI, "sim", file, "--steps", "2", extra, NULL};
  pid_t pid;
  cr_assert_eq(posix_spawn(&pid, GRIT_CLI, &fa, NULL, (char *const *)argv, environ), 0);
  int status;
  waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&fa);
  FILE *f = fdopen(fd, "r");
  rewind(f);
  err[0] = '\0';
  char line[1024];
  while (fgets(line, sizeof line, f)) snprintf(err, n, "%s", line);
  fclose(f);
  remove(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ------------------------------------------------------------------------------ includes */

/* The suite's files include the common files (visual assets only): they load unmodified, strictly, with
 * their bodies (the bug was an empty model that "succeeded"). */
Test(mjcf_files, dm_control_suite_files_load_with_their_includes) {
  const struct { const char *file; int nq, nv, nbody; } files[] = {
      {"cheetah.xml", 9, 9, 8}, {"humanoid_CMU.xml", 63, 62, 32}, {"walker.xml", 9, 9, 8},
      {"hopper.xml", 7, 7, 6},  {"acrobot.xml", 2, 2, 3},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[1024], msg[GRIT_MESSAGE_SIZE];
    model_path(path, sizeof path, files[i].file);
    grit_model *m;
    grit_mjcf_info info;
    cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s: %s", files[i].file, msg);
    cr_expect_eq(grit_model_nq(m), files[i].nq, "%s", files[i].file);
    cr_expect_eq(grit_model_nv(m), files[i].nv, "%s", files[i].file);
    cr_expect_eq(info.nbody, files[i].nbody, "%s", files[i].file);
    grit_mjcf_info_free(&info);
    grit_model_free(m);
  }
}

/* A missing included file, a cycle (a includes b includes a), a root other than <mujoco>: errors naming
 * the <include>'s file and line; an include inside <worldbody> splices bodies in place, and an included
 * file's own errors name that file. */
Test(mjcf_files, include_errors_name_file_and_line) {
  char dir[] = "/tmp/grit_include_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char sub[1100];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  write_file(dir, "missing.xml", "<mujoco>\n<include file='nope.xml'/>\n</mujoco>\n");
  write_file(dir, "a.xml", "<mujoco>\n\n<include file='sub/b.xml'/>\n</mujoco>\n");
  write_file(dir, "sub/b.xml", "<mujoco>\n<include file='../a.xml'/>\n</mujoco>\n");
  write_file(dir, "robot.xml", "<mujoco><worldbody>\n<include file='sub/arm.xml'/>\n</worldbody></mujoco>\n");
  write_file(dir, "sub/arm.xml", "<mujoco>\n<body name='arm'><joint/><geom size='.1'/></body>\n</mujoco>\n");
  write_file(dir, "bad.xml", "<mujoco><worldbody>\n<include file='sub/badarm.xml'/>\n</worldbody></mujoco>\n");
  write_file(dir, "sub/badarm.xml", "<mujoco>\n\n<body><joint type='spin'/></body>\n</mujoco>\n");
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(load_at(dir, "missing.xml", &m, msg), GRIT_ERR_IO);
  cr_assert(strstr(msg, "missing.xml:2: <include>") && strstr(msg, "nope.xml"), "%s", msg);
  cr_assert_eq(load_at(dir, "a.xml", &m, msg), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(msg, "sub/b.xml:2: <include> include cycle"), "%s", msg);
  cr_assert_eq(load_at(dir, "robot.xml", &m, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_nv(m), 1);
  cr_assert_geq(grit_model_body_index(m, "arm"), 1);
  grit_model_free(m);
  cr_assert_eq(load_at(dir, "bad.xml", &m, msg), GRIT_ERR_PARSE);
  cr_assert(strstr(msg, "sub/badarm.xml:3: <joint>"), "%s", msg);
  /* through the command line: exit 1, the message on stderr */
  char path[1200], err[1024];
  snprintf(path, sizeof path, "%s/a.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "include cycle"), "%s", err);
  snprintf(path, sizeof path, "%s/missing.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "missing.xml:2:"), "%s", err);
  const char *names[] = {"missing.xml", "a.xml", "sub/b.xml", "robot.xml", "sub/arm.xml", "bad.xml", "sub/badarm.xml"};
  remove_files(dir, names, 7);
  rmdir(sub);
}

/* A flat mesh file and a missing one through `grit sim`: exit 1 naming the model file and line. */
Test(mjcf_files, bad_mesh_files_exit_1_with_file_and_line) {
  char dir[] = "/tmp/grit_badmesh_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  write_file(dir, "flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n");
  write_file(dir, "flat.xml", "<mujoco><asset>\n<mesh file='flat.obj'/></asset><worldbody><body><freejoint/>"
                              "<geom type='mesh' mesh='flat'/></body></worldbody></mujoco>\n");
  write_file(dir, "gone.xml", "<mujoco><asset>\n\n<mesh file='gone.stl'/></asset></mujoco>\n");
  char path[1200], err[1024];
  snprintf(path, sizeof path, "%s/flat.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "flat.xml:2: <mesh>") && strstr(err, "degenerate"), "%s", err);
  snprintf(path, sizeof path, "%s/gone.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "gone.xml:3: <mesh>") && strstr(err, "gone.stl"), "%s", err);
  /* a mesh format grit does not read (.ply) is an error only where the mesh is used: a visual geometry of
   * a body with an <inertial> loads */
  write_file(dir, "v.ply", "binary");
  write_file(dir, "msh.xml", "<mujoco><asset><mesh file='v.ply'/></asset><worldbody><body><freejoint/>"
                             "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>\n"
                             "<geom type='mesh' mesh='v' contype='0' conaffinity='0'/></body></worldbody></mujoco>\n");
  write_file(dir, "msh2.xml", "<mujoco><asset>\n<mesh file='v.ply'/></asset><worldbody><body><freejoint/>"
                              "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
                              "<geom type='mesh' mesh='v'/></body></worldbody></mujoco>\n");
  snprintf(path, sizeof path, "%s/msh.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "%s/msh2.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "msh2.xml:2: <mesh>") && strstr(err, "only .stl, .obj and .msh"), "%s", err);
  const char *names[] = {"flat.obj", "flat.xml", "gone.xml", "v.ply", "msh.xml", "msh2.xml"};
  remove_files(dir, names, 6);
}

/* ---------------------------------------------------------------------- contact filtering */

/* Two free spheres that overlap by 5 cm, with and without <exclude>: excluded, no step ever has a contact
 * and both keep their velocity (zero gravity); without it they are pushed apart. A <pair> of two
 * geometries whose bit masks never collide makes them collide. */
static int contacts_over(const char *xml, double *sep) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  int total = 0;
  for (int k = 0; k < 50; ++k) {
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    total += grit_data_ncontacts(d);
  }
  const double *q = grit_data_qpos(d);
  *sep = q[7] - q[0];
  grit_data_free(d);
  grit_model_free(m);
  return total;
}

Test(mjcf_files, excluded_pairs_never_touch_and_pairs_always_may) {
  static const char *const fmt = "<mujoco><option gravity='0 0 0'/><worldbody>"
                                 "<body name='a'><freejoint/><geom size='.1' %s/></body>"
                                 "<body name='b' pos='.15 0 0'><freejoint/><geom size='.1' %s/></body></worldbody>"
                                 "%s</mujoco>";
  char xml[1024];
  double sep;
  snprintf(xml, sizeof xml, fmt, "", "", "<contact><exclude body1='a' body2='b'/></contact>");
  cr_assert_eq(contacts_over(xml, &sep), 0);
  cr_assert(fabs(sep - 0.15) < 1e-15, "separation %.17g", sep);
  snprintf(xml, sizeof xml, fmt, "", "", "");
  cr_assert_gt(contacts_over(xml, &sep), 0);
  cr_assert_gt(sep, 0.155, "separation %.17g", sep); /* pushed apart (0.16 after 0.1 s) */
  snprintf(xml, sizeof xml, fmt, "name='ga' contype='2' conaffinity='2'", "name='gb' contype='4' conaffinity='4'", "");
  cr_assert_eq(contacts_over(xml, &sep), 0);
  snprintf(xml, sizeof xml, fmt, "name='ga' contype='2' conaffinity='2'", "name='gb' contype='4' conaffinity='4'",
           "<contact><pair geom1='ga' geom2='gb'/></contact>");
  cr_assert_gt(contacts_over(xml, &sep), 0);
  cr_assert_gt(sep, 0.155, "separation %.17g", sep); /* pushed apart (0.16 after 0.1 s) */
  /* unknown names: errors with the line */
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string("<mujoco><worldbody/>\n<contact><exclude body1='x' body2='world'/></contact>"
                                     "</mujoco>",
                                     &m, NULL, msg),
               GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(msg, "<string>:2: <exclude> unknown body 'x'"), "%s", msg);
}

/* Welded bodies (no joint) do not collide with their parent's weld, as in MuJoCo: a jointless child
 * overlapping its grandparent's geometry, and a hinged grandchild under a jointless body whose parent
 * overlaps it. With <flag filterparent="disable"> the hinged child does collide with its parent. */
Test(mjcf_files, weld_and_parent_filters_as_mujoco) {
  static const char *const fmt =
      "<mujoco><option gravity='0 0 0'>%s</option><worldbody><body name='a'><freejoint/><geom size='.1'/>"
      "<body name='w' pos='.05 0 0'><geom size='.1'/>"
      "<body name='c' pos='.05 0 0'><joint type='hinge'/><geom size='.1'/></body></body></body>"
      "</worldbody></mujoco>";
  char xml[1024];
  double sep;
  snprintf(xml, sizeof xml, fmt, "");
  cr_assert_eq(contacts_over(xml, &sep), 0);
  snprintf(xml, sizeof xml, fmt, "<flag filterparent='disable'/>");
  cr_assert_gt(contacts_over(xml, &sep), 0);
}

/* The CMU humanoid of the suite, dropped from its reference pose for 3 s: its neck and clavicles overlap
 * (excluded in the file) and must not push it up; it ends lying on the floor (root at z = 0.096 m in
 * MuJoCo 2.2.2; it stayed at 0.62 m while the exclusions were ignored). */
Test(mjcf_files, cmu_humanoid_falls_flat) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  model_path(path, sizeof path, "humanoid_CMU.xml");
  grit_model *m;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file(path, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  for (int k = 0; k < 1500; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const double z = grit_data_qpos(d)[2];
  cr_assert(z > 0.05 && z < 0.2, "root at z = %g m", z);
  grit_data_free(d);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* ------------------------------------------------------------------------ compiler, frames */

/* settotalmass (the cheetah: 14 kg), MuJoCo's 2 ms when the file has no timestep, and <frame>: a body and
 * a geometry inside a turned, shifted frame are placed as if the frame's placement were composed with
 * theirs. */
Test(mjcf_files, settotalmass_default_timestep_and_frames) {
  char path[1024], msg[GRIT_MESSAGE_SIZE];
  model_path(path, sizeof path, "cheetah.xml");
  grit_model *m;
  cr_assert_eq(grit_mjcf_load_file(path, &m, NULL, msg), GRIT_OK, "%s", msg);
  double total = 0;
  for (int b = 1; b < grit_model_nbody(m); ++b) total += grit_model_body_mass(m, b);
  cr_assert(fabs(total - 14) <= 1e-12, "total mass %.17g", total);
  grit_model_free(m);
  cr_assert_eq(grit_mjcf_load_string("<mujoco/>", &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(grit_model_options(m).timestep, 0.002);
  grit_model_free(m);
  static const char framed[] =
      "<mujoco><worldbody><frame pos='1 0 0' euler='0 0 90'><body name='b' pos='1 0 0'><freejoint/>"
      "<geom size='.1' pos='0 1 0'/></body></frame>"
      "<body name='r' pos='1 1 0' euler='0 0 90'><freejoint/><geom size='.1' pos='0 1 0'/></body></worldbody></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(framed, &m, NULL, msg), GRIT_OK, "%s", msg);
  const int b = grit_model_body_index(m, "b"), r = grit_model_body_index(m, "r");
  for (int i = 0; i < 3; ++i) cr_assert(fabs(m->body_pos[3 * b + i] - m->body_pos[3 * r + i]) <= 1e-15, "pos %d", i);
  for (int i = 0; i < 4; ++i) cr_assert(fabs(m->body_quat[4 * b + i] - m->body_quat[4 * r + i]) <= 1e-15, "quat %d", i);
  grit_model_free(m);
}

/* Content that changes the dynamics and that grit does not simulate: an error naming element and line by
 * default; a warning with the lenient option and `grit sim --lenient` (exit 0). */
Test(mjcf_files, lenient_loading) {
  static const char xml[] = "<mujoco><worldbody><body name='a'><geom size='.1'/>\n"
                            "<joint name='j' type='ball' stiffness='1'/></body></worldbody></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_ERR_UNSUPPORTED);
  cr_assert(strstr(msg, "<string>:2: <joint>") && strstr(msg, "lenient"), "%s", msg);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  cr_assert_eq(o.lenient, 0);
  o.lenient = 1;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "<string>", &o, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(info.nwarnings, 1);
  cr_assert(strstr(info.warnings[0], "<string>:2: <joint>"), "%s", info.warnings[0]);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
  char dir[] = "/tmp/grit_lenient_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  write_file(dir, "eq.xml", xml);
  char path[1200], err[1024];
  snprintf(path, sizeof path, "%s/eq.xml", dir);
  cr_assert_eq(run_sim(path, NULL, err, sizeof err), 1);
  cr_assert(strstr(err, "eq.xml:2: <joint>"), "%s", err);
  cr_assert_eq(run_sim(path, "--lenient", err, sizeof err), 0, "%s", err);
  const char *names[] = {"eq.xml"};
  remove_files(dir, names, 1);
  /* MuJoCo 2.2.2 simulates a ball joint's limit and spring: grit does not (they were warnings, the model
   * silently without them) */
  static const char *const ball[2] = {
      "<mujoco><worldbody><body><geom size='.1' pos='0 0 -1'/>\n<joint type='ball' range='0 30'/></body></worldbody>"
      "</mujoco>",
      "<mujoco><worldbody><body><geom size='.1' pos='0 0 -1'/>\n<joint type='ball' stiffness='3'/></body></worldbody>"
      "</mujoco>"};
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_mjcf_load_string(ball[i], &m, NULL, msg), GRIT_ERR_UNSUPPORTED, "%s", msg);
    cr_assert(strstr(msg, "<string>:2: <joint>") && strstr(msg, i ? "springs on ball" : "limits of ball"), "%s", msg);
    cr_assert_eq(grit_mjcf_load_buffer(ball[i], strlen(ball[i]), "<string>", &o, &m, &info, msg), GRIT_OK, "%s", msg);
    cr_assert_eq(info.nwarnings, 1);
    grit_mjcf_info_free(&info);
    grit_model_free(m);
  }
}

/* springdamper="timeconst dampratio" (MuJoCo 2.2.2): stiffness I / (tc dr)^2 and damping 2 I / tc, with I the
 * joint's effective inertia at qpos0, 1 / (M^-1)_jj. A hinge through the centre of mass of a body with
 * izz = 0.02 and armature 0.01: I = 0.03, so k = 0.03 / (0.1 * 0.5)^2 = 12 and b = 0.6 (rounding only).
 * The explicit stiffness and damping are replaced, as in MuJoCo. A value <= 0 is an error at its line. */
Test(mjcf_files, springdamper_from_the_effective_inertia) {
  static const char xml[] =
      "<mujoco><worldbody><body><inertial pos='0 0 0' mass='2' diaginertia='0.05 0.04 0.02'/>\n"
      "<joint name='j' axis='0 0 1' armature='0.01' stiffness='7' damping='3' springdamper='0.1 0.5'/>"
      "</body></worldbody></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  cr_assert(fabs(m->jnt_stiffness[0] - 12) <= 1e-13, "%.17g", m->jnt_stiffness[0]);
  cr_assert(fabs(m->dof_damping[0] - 0.6) <= 1e-15, "%.17g", m->dof_damping[0]);
  grit_model_free(m);
  static const char bad[] = "<mujoco><worldbody><body><geom size='.1'/>\n<joint springdamper='0.1 0'/></body>"
                            "</worldbody></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(bad, &m, NULL, msg), GRIT_ERR_INVALID_MODEL);
  cr_assert(strstr(msg, "<string>:2: <joint>") && strstr(msg, "springdamper"), "%s", msg);
}
