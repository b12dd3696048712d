/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_composite.c — MJCF's <composite> (src/io/mjcf_composite.c) on MuJoCo 2.2.2's own composite
 * model files (tests/models/mujoco_composite, unmodified XML), against MuJoCo 2.2.2 itself (a reference
 * peer, used by tests only):
 *  - every file loads strictly with MuJoCo's nq, nv, nbody, and the same numbers of joints, sites,
 *    tendons and equality constraints, the generated joints, sites and tendons under MuJoCo's names at
 *    MuJoCo's indices;
 *  - with contact, gravity, limits, equality constraints, springs, tendon damping and fluid forces off in
 *    both, 1 s from a nonzero velocity at the file's time step, the same trajectory to 1e-4: the generated
 *    bodies, frames, joints and inertias (cloth's flat inertia, box's outward frames) are MuJoCo's;
 *  - the generated tendons have MuJoCo's lengths (1e-12) and Jacobians (central differences, 1e-7) at
 *    random configurations, and the equality constraints on them and on the joints have MuJoCo's
 *    residuals there (1e-12);
 *  - under gravity with the constraints on (MuJoCo's made stiff), loop, cloth and softbox follow MuJoCo to
 *    1e-4 over 0.5 s, the pinned grid to 10 % of its motion over 0.2 s (its compliance);
 *  - bad input (counts, types, a missing template geometry, the root body's name, unknown attributes)
 *    is an error naming the file and line. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/constraints.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif

/* ------------------------------------------------------------------------------ bad input */

static void load_fails(const char *xml, grit_status want, const char *needle) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE] = "";
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), want, "%s", msg);
  cr_assert(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  cr_assert_null(m);
}

#define GRID(attrs, inside) "<mujoco><worldbody>\n<composite " attrs ">" inside "</composite></worldbody></mujoco>"

Test(mjcf_composite, bad_input_is_an_error_with_its_line) {
  load_fails(GRID("type='grid' count='0 3 1' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> positive counts expected");
  load_fails(GRID("type='grid' count='2.5 3 1' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_PARSE,
             ":2: <composite> attribute 'count': 2.5 is not an integer");
  load_fails(GRID("type='grid' count='3 1 3' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> singleton counts must come last");
  load_fails(GRID("type='grid' count='3 3 3' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> grid can only be 1D or 2D");
  load_fails(GRID("type='lattice' count='3 3 1' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_PARSE,
             ":2: <composite> attribute 'type'");
  load_fails(GRID("count='3 3 1' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> attribute 'type' is required");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0'", "<geom size='.02'/>"), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> positive spacing");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", ""), GRIT_ERR_INVALID_MODEL,
             ":2: <composite> a composite needs a template <geom>");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "\n<geom type='box' size='.02 .02 .02'/>"),
             GRIT_ERR_INVALID_MODEL, ":3: <geom> a composite's geom type must be sphere, capsule or ellipsoid");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "<geom size='.02'/>\n<joint kind='bend'/>"),
             GRIT_ERR_PARSE, ":3: <joint> attribute 'kind'");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "<geom size='.02'/>\n<skin group='7'/>"),
             GRIT_ERR_INVALID_MODEL, ":3: <skin> skin group must be between 0 and 5");
  load_fails(GRID("type='grid' count='3 1 1' spacing='0.1'", "<geom size='.02'/>\n<tendon kind='shear'/>"),
             GRIT_ERR_INVALID_MODEL, ":2: <composite> shear requires 2D grid");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "<site/><geom size='.02'/>\n<site/>"),
             GRIT_ERR_INVALID_MODEL, ":3: <site> a composite has at most one <site>");
  load_fails(GRID("type='grid' count='2000 2000 1' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_CAPACITY,
             ":2: <composite> a composite of more than");
  /* a rope or cloth grows from its body, whose name gives the root element's coordinates */
  load_fails("<mujoco><worldbody><body name='R'><freejoint/>\n<composite type='rope' count='5 1 1' spacing='0.1'>"
             "<geom type='capsule' size='.01 .02'/></composite></body></worldbody></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <composite> 'B' must be the beginning of the root body's name");
  load_fails("<mujoco><worldbody><body name='B7'><freejoint/>\n<composite type='rope' count='5 1 1' spacing='0.1'>"
             "<geom type='capsule' size='.01 .02'/></composite></body></worldbody></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <composite> the root body's coordinates are out of range");
  load_fails("<mujoco><worldbody><body name='B1'><freejoint/>\n<composite type='cloth' count='5 5 1' spacing='0.1'>"
             "<geom size='.01'/></composite></body></worldbody></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <composite> the root body's name must contain X_Y coordinates");
  load_fails("<mujoco><worldbody><body name='B1_1'><freejoint/>\n<composite type='box' count='5 5 1' spacing='0.1'>"
             "<geom size='.01'/></composite></body></worldbody></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <composite> box, cylinder and ellipsoid must be three-dimensional");
  load_fails("<mujoco><worldbody><frame>\n<composite type='particle' count='2 2 2' spacing='0.1'>"
             "<geom size='.01'/></composite></frame></worldbody></mujoco>",
             GRIT_ERR_INVALID_MODEL, ":2: <composite> a <frame> cannot hold a <composite>");
  /* a shell on a body that does not move: its tendon would touch every element's tree (grit: two at most) */
  load_fails(GRID("type='box' count='3 3 3' spacing='0.1'", "<geom size='.02'/>"), GRIT_ERR_UNSUPPORTED,
             ":2: <composite> a box composite on a body without joints: its tendon 'T' would span");
  /* attributes and elements MuJoCo 2.2.2 does not have here: unsupported (newer MuJoCo's, or typos) */
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1' vertex='0 0 0'", "<geom size='.02'/>"), GRIT_ERR_UNSUPPORTED,
             ":2: <composite> attribute 'vertex' is not one of MuJoCo 2.2.2's");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "\n<geom size='.02' pos='1 0 0'/>"), GRIT_ERR_UNSUPPORTED,
             ":3: <geom> attribute 'pos' is not one of MuJoCo 2.2.2's");
  load_fails(GRID("type='grid' count='3 3 1' spacing='0.1'", "<geom size='.02'/>\n<plugin/>"), GRIT_ERR_UNSUPPORTED,
             ":3: <plugin> element is not one of MuJoCo 2.2.2's");
  /* leniently: a warning, and the composite without it */
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.lenient = 1;
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE] = "";
  const char *xml = GRID("type='grid' count='3 3 1' spacing='0.1' vertex='0 0 0'", "<geom size='.02'/>");
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "lenient.xml", &o, &m, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(info.nwarnings, 1);
  cr_assert(strstr(info.warnings[0], "lenient.xml:2: <composite> attribute 'vertex'"), "%s", info.warnings[0]);
  cr_assert_eq(info.nbody, 10);
  cr_assert_eq(m->nv, 27);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

/* The names MuJoCo generates, with a prefix; the world as a grid's parent; pins; twist and stretch. */
Test(mjcf_composite, generated_names) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE] = "";
  const char *xml = "<mujoco><worldbody>"
                    "<composite prefix='g' type='grid' count='3 2 1' spacing='0.1'><pin coord='0 0'/><geom size='.02'/>"
                    "</composite><body name='rB1'><freejoint/>"
                    "<composite prefix='r' type='rope' count='3 1 1' spacing='0.1'><geom type='capsule' size='.01 .02'/>"
                    "<joint kind='twist'/><joint kind='stretch' damping='1'/></composite></body>"
                    "</worldbody></mujoco>";
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  /* grid: 6 bodies, 5 unpinned with 3 sliders; rope: root B1, children B2 and B0, 2 + twist + stretch each */
  cr_assert_eq(m->nv, 15 + 6 + 2 * 4);
  cr_assert_eq(grit_model_joint_index(m, "gJ0_0_1"), 0) /* (0, 0) is pinned */;
  cr_assert_eq(grit_model_joint_index(m, "gJ2_2_1"), 14);
  cr_assert_eq(grit_model_joint_index(m, "rJ0_2"), 16);
  cr_assert_eq(grit_model_joint_index(m, "rJT2"), 18);
  cr_assert_eq(grit_model_joint_index(m, "rJS0"), 23);
  cr_assert_geq(grit_model_body_index(m, "gB0_0"), 0);
  cr_assert_geq(grit_model_geom_index(m, "rG1"), 0);
  cr_assert_eq(grit_model_site_index(m, "gS2_1"), 5);
  cr_assert_eq(grit_model_ntendon(m), 2 * 2 + 3 * 1);
  cr_assert_eq(grit_model_tendon_index(m, "gT1_2_0"), 6);
  cr_assert_eq(grit_model_nequality(m), 7 + 4); /* the tendons', the twist and stretch joints' */
  grit_model_free(m);
}

#ifdef GRIT_HAVE_MUJOCO
#include <mujoco/mujoco.h>

#include "mjcf_mujoco_util.h"

/* A file's name, or of a model text its composite, for messages. */
static const char *label(const char *file) {
  const char *c = file[0] == '<' ? strstr(file, "<composite") : NULL;
  return c ? c : file;
}

static void path_of(char *path, size_t n, const char *file) {
  snprintf(path, n, "%s/tests/models/mujoco_composite/%s", GRIT_SOURCE_DIR, file);
}

/* Both models of a file (or, where the name starts with '<', of that XML text); grit's loaded strictly
 * and with MuJoCo's sizes and names. */
static void load_both(const char *file, mjModel **mm, grit_model **gm) {
  char path[1024], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  const int text = file[0] == '<';
  path_of(path, sizeof path, file);
  *mm = text ? mjcmp_load_text(file, err, sizeof err) : mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(*mm, "MuJoCo: %s", err);
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.explicit_gyroscopic = 1;
  const grit_status st = text ? grit_mjcf_load_buffer(file, strlen(file), "composite.xml", &o, gm, &info, msg)
                              : grit_mjcf_load_file_with(path, &o, gm, &info, msg);
  cr_assert_eq(st, GRIT_OK, "%s", msg);
  const mjModel *M = *mm;
  const grit_model *G = *gm;
  cr_assert_eq(G->nq, M->nq, "%s: nq", file);
  cr_assert_eq(G->nv, M->nv, "%s: nv", file);
  cr_assert_eq(info.nbody, M->nbody, "%s: nbody", file);
  cr_assert_eq(G->njnt, M->njnt, "%s: njnt", file);
  cr_assert_eq(grit_model_nsite(G), M->nsite, "%s: nsite", file);
  cr_assert_eq(grit_model_ntendon(G), M->ntendon, "%s: ntendon", file);
  /* <flag constraint="disable"> (flag.xml): MuJoCo keeps them in its model, switched off; grit leaves them out */
  const int eq_off = (M->opt.disableflags & (mjDSBL_CONSTRAINT | mjDSBL_EQUALITY)) != 0;
  cr_assert_eq(grit_model_nequality(G), eq_off ? 0 : M->neq, "%s: neq", file);
  for (int j = 0; j < M->njnt; ++j) {
    const char *name = mj_id2name(M, mjOBJ_JOINT, j);
    if (name) cr_assert_eq(grit_model_joint_index(G, name), j, "%s: joint %s", file, name);
  }
  for (int s = 0; s < M->nsite; ++s)
    cr_assert_eq(grit_model_site_index(G, mj_id2name(M, mjOBJ_SITE, s)), s, "%s: site %d", file, s);
  for (int t = 0; t < M->ntendon; ++t)
    cr_assert_eq(grit_model_tendon_index(G, mj_id2name(M, mjOBJ_TENDON, t)), t, "%s: tendon %d", file, t);
  for (int b = 1; b < M->nbody; ++b) {
    const char *name = mj_id2name(M, mjOBJ_BODY, b);
    if (name) cr_assert_geq(grit_model_body_index(G, name), 0, "%s: body %s", file, name);
  }
  cr_log_info("%.90s: nq %d nv %d nbody %d njnt %d nsite %d ntendon %d neq %d, as MuJoCo 2.2.2 (%d warnings)", label(file),
              M->nq, M->nv, M->nbody, M->njnt, M->nsite, M->ntendon, M->neq, info.nwarnings);
  grit_mjcf_info_free(&info);
}

/* 1 s of free motion in both (test_mjcf_real.c's comparison). */
static void free_motion(const char *file) {
  mjModel *mm;
  grit_model *gm;
  load_both(file, &mm, &gm);
  mjcmp_free_motion_only(mm, gm);
  cr_assert_eq(gm->opt.timestep, mm->opt.timestep, "%s", file);
  mjData *md;
  grit_data *gd;
  const int steps = mjcmp_free_motion_run(mm, gm, &md, &gd);
  double eq, ev;
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &eq, &ev);
  cr_log_info("%.90s: %d steps of %g s: max |dq| %.3g, max |dv| %.3g", label(file), steps, mm->opt.timestep, eq, ev);
  cr_assert_lt(eq, 1e-4, "%s: q differs by %g", file, eq);
  cr_assert_lt(ev, 1e-4, "%s: v differs by %g", file, ev);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
}

Test(mjcf_composite_mujoco, particle) { free_motion("composite/particle.xml"); }
Test(mjcf_composite_mujoco, grid2pin) { free_motion("composite/grid2pin.xml"); }
Test(mjcf_composite_mujoco, cloth) { free_motion("composite/cloth.xml"); }
Test(mjcf_composite_mujoco, rope) { free_motion("composite/rope.xml"); }
Test(mjcf_composite_mujoco, loop) { free_motion("composite/loop.xml"); }
Test(mjcf_composite_mujoco, softbox) { free_motion("composite/softbox.xml"); }
Test(mjcf_composite_mujoco, flag) { free_motion("flag/flag.xml"); }
Test(mjcf_composite_mujoco, hammock) { free_motion("hammock/hammock.xml"); }

/* A point p of body b in world coordinates at gd's state. */
static void world_point(const grit_data *gd, int b, const double p[3], double w[3]) {
  double x[3], q[4], R[9];
  cr_assert_eq(grit_body_pose(gd, b, x, q), GRIT_OK);
  mju_quat2Mat(R, q);
  for (int i = 0; i < 3; ++i) w[i] = x[i] + R[3 * i] * p[0] + R[3 * i + 1] * p[1] + R[3 * i + 2] * p[2];
}

/* grit's residual of equality e at q (gd's state): joint or tendon, y - y0 - poly(x - x0); connect, row
 * `row` of the anchor's place on body 1 minus its place on body 2; NAN for a weld. */
static double eq_residual(const grit_model *gm, const grit_data *gd, int e, int row, const double *q) {
  const double *d = gm->eq_data + GRIT_EQ_NDATA * e;
  const int t = gm->eq_type[e], o1 = gm->eq_obj[2 * e], o2 = gm->eq_obj[2 * e + 1];
  if (t == GRIT_EQ_CONNECT) {
    double a[3], b[3];
    world_point(gd, o1, d, a);
    world_point(gd, o2, d + 3, b);
    return a[row] - b[row];
  }
  if (t != GRIT_EQ_JOINT && t != GRIT_EQ_TENDON) return NAN;
  const double y = t == GRIT_EQ_JOINT ? q[gm->jnt_qposadr[o1]] : grit_model_tendon_length(gm, o1, q);
  double x = 0;
  if (o2 >= 0) x = (t == GRIT_EQ_JOINT ? q[gm->jnt_qposadr[o2]] : grit_model_tendon_length(gm, o2, q)) - d[6];
  return y - d[5] - (d[0] + x * (d[1] + x * (d[2] + x * (d[3] + x * d[4]))));
}

/* Tendon lengths, their Jacobians and the equality residuals at random configurations near qpos0. */
static void constraints(const char *file) {
  mjModel *mm;
  grit_model *gm;
  load_both(file, &mm, &gm);
  mm->opt.disableflags |= mjDSBL_CONTACT;
  mm->opt.disableflags &= ~(mjDSBL_CONSTRAINT | mjDSBL_EQUALITY); /* flag.xml's: its residuals all the same */
  mm->opt.jacobian = mjJAC_DENSE;                                   /* ten_J as a dense ntendon x nv matrix */
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  double *q = malloc(sizeof(double) * (size_t)mm->nq + 1), *qh = malloc(sizeof(double) * (size_t)mm->nq + 1);
  double dl = 0, dj = 0, dr = 0, scale = 0;
  int rows = 0;
  unsigned seed = 7;
  for (int trial = 0; trial < 3; ++trial) {
    mju_copy(q, mm->qpos0, mm->nq);
    for (int j = 0; j < mm->njnt; ++j) /* hinge and slide coordinates moved by up to 0.1 */
      if (mm->jnt_type[j] == mjJNT_HINGE || mm->jnt_type[j] == mjJNT_SLIDE) {
        seed = seed * 1103515245u + 12345u;
        q[mm->jnt_qposadr[j]] += 0.1 * ((double)(seed >> 8 & 0xffff) / 32768.0 - 1);
      }
    mju_copy(md->qpos, q, mm->nq);
    mju_zero(md->qvel, mm->nv);
    mj_forward(mm, md);
    const int stride = mm->ntendon / 16 + 1; /* the Jacobians of 16 tendons or so, in the first trial */
    for (int t = 0; t < mm->ntendon; ++t) {
      dl = fmax(dl, fabs(grit_model_tendon_length(gm, t, q) - md->ten_length[t]));
      for (int j = 0; trial == 0 && t % stride == 0 && j < mm->njnt; ++j) { /* dL/dq by central differences */
        if (mm->jnt_type[j] != mjJNT_HINGE && mm->jnt_type[j] != mjJNT_SLIDE) continue;
        const int a = mm->jnt_qposadr[j];
        const double h = 1e-6;
        mju_copy(qh, q, mm->nq);
        qh[a] = q[a] + h;
        const double lp = grit_model_tendon_length(gm, t, qh);
        qh[a] = q[a] - h;
        const double J = (lp - grit_model_tendon_length(gm, t, qh)) / (2 * h);
        const double Jm = md->ten_J[t * mm->nv + mm->jnt_dofadr[j]];
        dj = fmax(dj, fabs(J - Jm));
        scale = fmax(scale, fabs(Jm));
      }
    }
    cr_assert_eq(grit_data_set_qpos(gd, q, mm->nq), GRIT_OK);
    for (int r = 0, row = 0; gm->neq > 0 && r < md->nefc; ++r) {
      if (md->efc_type[r] != mjCNSTR_EQUALITY) continue;
      const int e = md->efc_id[r];
      row = r > 0 && md->efc_type[r - 1] == mjCNSTR_EQUALITY && md->efc_id[r - 1] == e ? row + 1 : 0;
      const double g = eq_residual(gm, gd, e, row, q);
      if (isnan(g)) continue;
      dr = fmax(dr, fabs(g - md->efc_pos[r]));
      rows++;
    }
  }
  /* at qpos0 every constraint holds in MuJoCo (grit defines its references there) */
  mju_copy(md->qpos, mm->qpos0, mm->nq);
  mj_forward(mm, md);
  double r0 = 0;
  for (int r = 0; r < md->nefc; ++r)
    if (md->efc_type[r] == mjCNSTR_EQUALITY) r0 = fmax(r0, fabs(md->efc_pos[r]));
  cr_log_info("%.90s: %d tendons, %d equalities: max |dL| %.3g, max |dJ| %.3g (|J| <= %.3g), %d residual rows max "
              "|d| %.3g; MuJoCo's residuals at qpos0 <= %.3g",
              label(file), mm->ntendon, mm->neq, dl, dj, scale, rows, dr, r0);
  cr_assert_lt(dl, 1e-12, "%s", file);
  cr_assert_lt(dj, 1e-7, "%s", file);
  cr_assert_lt(dr, 1e-12, "%s", file);
  cr_assert_lt(r0, 1e-12, "%s", file);
  cr_assert(rows > 0 || gm->neq == 0, "%s", file);
  free(q);
  free(qh);
  grit_data_free(gd);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_model_free(gm);
}

Test(mjcf_composite_mujoco, grid2pin_constraints) { constraints("composite/grid2pin.xml"); }
Test(mjcf_composite_mujoco, cloth_constraints) { constraints("composite/cloth.xml"); }
Test(mjcf_composite_mujoco, softbox_constraints) { constraints("composite/softbox.xml"); }
Test(mjcf_composite_mujoco, flag_constraints) { constraints("flag/flag.xml"); }
Test(mjcf_composite_mujoco, hammock_constraints) { constraints("hammock/hammock.xml"); }

/* Motion under the generated equality constraints: gravity on, contact and limits off, dt = 1 ms, MuJoCo's
 * equalities made stiff (solref 2 ms) and grit's drift time scale the same; both approach the rigid
 * motion, so their difference over T is of the order of MuJoCo's compliance (test_mjcf_cx.c's way).
 * Returns the largest coordinate difference. */
static double constrained_motion(const char *file, double T, double *motion) {
  mjModel *mm;
  grit_model *gm;
  load_both(file, &mm, &gm);
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT;
  mm->opt.integrator = mjINT_EULER;
  mm->opt.timestep = gm->opt.timestep = 0.001;
  for (int e = 0; e < mm->neq; ++e) mm->eq_solref[2 * e] = 0.002, mm->eq_solref[2 * e + 1] = 1;
  for (int e = 0; e < gm->neq; ++e) gm->eq_taud[e] = 2 * 0.002;
  for (int g = 0; g < gm->ngeom; ++g) gm->geom_contype[g] = gm->geom_conaffinity[g] = 0;
  gm->npair = 0;
  for (int j = 0; j < gm->njnt; ++j) gm->jnt_limited[j] = 0;
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  double worst = 0;
  for (int i = 0; i < mm->nv; ++i) md->qvel[i] = 0.2 * sin(1.0 + i); /* excites the constraints */
  cr_assert_eq(grit_data_set_qvel(gd, md->qvel, gm->nv), GRIT_OK);
  const int steps = (int)lround(T / 0.001);
  for (int k = 0; k < steps; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
  }
  double eq, ev;
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &eq, &ev);
  double travel = 0;
  for (int i = 0; i < mm->nq; ++i) travel = fmax(travel, fabs(md->qpos[i] - mm->qpos0[i]));
  cr_log_info("%.90s: %d steps of 1 ms under gravity with stiff equalities: max |dq| %.3g (largest motion %.3g), "
              "max |dv| %.3g",
              label(file), steps, eq, travel, ev);
  worst = eq;
  *motion = travel;
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
  return worst;
}

/* Measured: loop 6.7e-9, softbox 8.1e-8, cloth 1.3e-5 over 0.5 s (motion 1.2 m). The pinned grid, a net of
 * point masses on 144 near-inextensible strings without bending stiffness, follows its compliance:
 * 0.0104 m of 0.21 m over 0.2 s (MuJoCo's solref 4 ms: 0.015 m, 8 ms: 0.071 m over 0.5 s). */
Test(mjcf_composite_mujoco, constrained_motion) {
  double motion;
  const char *const stiff[] = {"composite/loop.xml", "composite/cloth.xml", "composite/softbox.xml"};
  for (int i = 0; i < 3; ++i) {
    const double d = constrained_motion(stiff[i], 0.5, &motion);
    cr_assert_lt(d, 1e-4, "%s: %g", stiff[i], d);
    cr_assert_gt(motion, 1, "%s", stiff[i]);
  }
  const double d = constrained_motion("composite/grid2pin.xml", 0.2, &motion);
  cr_assert_lt(d, 0.1 * motion, "grid2pin: %g of %g", d, motion);
}

/* The types and options the files above do not use: cylinder and ellipsoid shells, a 1D grid, twist and
 * stretch joints, shear tendons, flat inertia with a given mass, prefixes, template attributes. */
#define SYN(body) "<mujoco><option timestep='0.002'/><worldbody>" body "</worldbody></mujoco>"
static const char *const SYNTHETIC[] = {
    SYN("<body pos='0 0 1'><freejoint/><composite type='cylinder' count='5 5 4' spacing='0.05'>"
        "<geom size='.01' density='300'/><joint kind='main' solreffix='0.04 1'/></composite></body>"),
    SYN("<body pos='0 0 1'><freejoint/><composite prefix='e' type='ellipsoid' count='6 5 5' spacing='0.04'>"
        "<geom type='capsule' size='.01 .02'/><tendon kind='main' solreffix='0.02 1'/></composite></body>"),
    SYN("<body name='rB2' pos='0 0 1'><freejoint/><composite prefix='r' type='rope' count='6 1 1' spacing='.05'>"
        "<joint kind='main' damping='.01' armature='.001'/><joint kind='twist' damping='.02'/>"
        "<joint kind='stretch' solreffix='0.01 1'/><geom type='capsule' size='.01 .015' density='500'/>"
        "</composite></body>"),
    SYN("<body name='cB1_2' pos='0 0 1'><freejoint/><composite prefix='c' type='cloth' count='4 5 1' spacing='.05' "
        "flatinertia='0.02'><joint kind='twist'/><joint kind='stretch' armature='0.01'/><tendon kind='shear' "
        "stiffness='5'/><geom type='ellipsoid' size='.02 .01 .015' mass='0.01'/></composite></body>"),
    SYN("<composite type='grid' count='6 1 1' spacing='.05' offset='0 0 1'><pin coord='0'/><geom size='.01'/>"
        "<joint kind='main' damping='0.1'/></composite>"),
    SYN("<body name='B3' pos='0 0 1'><freejoint/><composite type='loop' count='7 1 1' spacing='.05'>"
        "<geom type='sphere' size='.01'/></composite></body>"),
    /* the file's default classes do not apply to a composite's elements (MuJoCo 2.2.2's own defaults) */
    "<mujoco><default><geom density='10'/><joint damping='3'/></default><worldbody>"
    "<body pos='0 0 1'><composite type='grid' count='3 3 1' spacing='.1'><geom size='.02'/>"
    "<joint kind='main' armature='0.01'/></composite><geom size='.1'/><joint/></body></worldbody></mujoco>",
    SYN("<body pos='0 0 1'><composite type='particle' count='2 3 2' spacing='.1' offset='0 0 .2'>"
        "<geom size='.02' condim='3' priority='0'/><joint kind='main' damping='0.3'/></composite></body>"),
};

Test(mjcf_composite_mujoco, every_type_and_option) {
  for (size_t i = 0; i < sizeof SYNTHETIC / sizeof SYNTHETIC[0]; ++i) {
    free_motion(SYNTHETIC[i]);
    constraints(SYNTHETIC[i]);
  }
}

#endif
