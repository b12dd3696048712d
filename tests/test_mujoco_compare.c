/* SPDX-License-Identifier: Apache-2.0 */
/* test_mujoco_compare.c — grit against MuJoCo (a reference peer, used by this test only): the SAME
 * models are built in both engines (grit with the builder, MuJoCo from an MJCF string written to a
 * temporary file), and on random states the mass matrix M(q) (MuJoCo: mj_fullM of qM after
 * mj_forward) and the bias forces c(q, v) (qfrc_bias) must agree to 1e-10 relative to the largest
 * entry; so must the state after time steps (MuJoCo's semi-implicit Euler with implicit joint damping
 * is grit's step without contacts).
 *
 * Inertias are given to MuJoCo as principal moments and axes (diaginertia + inertial quat) and to grit
 * as the full matrix R diag(d) R^T (grit_inertia_from_principal), with off-diagonal terms in the body
 * frame. Not as fullinertia: MuJoCo diagonalizes that at compile time with an iterative eigensolver
 * whose reconstruction R diag R^T is off by ~5e-10 relative (measured), which would hide everything
 * below that level.
 *
 * Models: a 7-joint arm (hinges on various axes and anchors, full inertias with off-diagonal terms,
 * damping, armature, motors), a free body with asymmetric inertia and an offset centre of mass, and a
 * branched tree with slide, ball, multi-hinge and welded bodies under a floating (free) base.
 * Bodies are listed depth first, so the qpos/qvel orders of the two engines coincide. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grit/grit.h"
#include "test_util.h"

/* ----------------------------------------------------------------------------- model specs */

typedef struct {
  grit_joint_type type;
  double pos[3], axis[3], damping, armature;
} jspec;

typedef struct {
  int parent;
  double pos[3], quat[4], mass, com[3], inertia[9];
  double diag[3], iquat[4]; /* the inertia's principal moments and axes: inertia = R(iquat) diag R^T */
  int nj;
  jspec j[3];
} bspec;

#define MAXB 16
#define MAXU 8

typedef struct {
  int nb; /* bodies 1..nb (b[0] unused), depth first */
  bspec b[MAXB + 1];
  double gravity[3], timestep;
  int nu, act_joint[MAXU], act_limited[MAXU];
  double act_gear[MAXU], act_lo[MAXU], act_hi[MAXU];
} mspec;

static bspec body(tu_rng *r, int parent, double scale) {
  bspec b;
  memset(&b, 0, sizeof b);
  b.parent = parent;
  for (int i = 0; i < 3; ++i) {
    b.pos[i] = tu_uniform(r, -0.4, 0.4);
    b.com[i] = tu_uniform(r, -0.15, 0.15);
  }
  tu_quat(r, b.quat);
  b.mass = tu_uniform(r, 0.5, 3.0) * scale;
  const double sc = 0.05 * b.mass;
  b.diag[0] = tu_uniform(r, 0.2, 1.0) * sc;
  b.diag[1] = tu_uniform(r, 0.2, 1.0) * sc;
  b.diag[2] = tu_uniform(r, fabs(b.diag[0] - b.diag[1]) + 0.05 * sc, b.diag[0] + b.diag[1] - 0.05 * sc);
  tu_quat(r, b.iquat);
  grit_inertia_from_principal(b.inertia, b.diag, b.iquat);
  return b;
}

static jspec joint(tu_rng *r, grit_joint_type t) {
  jspec j;
  memset(&j, 0, sizeof j);
  j.type = t;
  if (t != GRIT_JOINT_FREE)
    for (int i = 0; i < 3; ++i) j.pos[i] = tu_uniform(r, -0.2, 0.2);
  for (int i = 0; i < 3; ++i) j.axis[i] = tu_uniform(r, -1, 1); /* normalized by both engines */
  j.damping = tu_uniform(r, 0.0, 0.5);
  j.armature = tu_uniform(r, 0.0, 0.05);
  return j;
}

static void seven_joint_arm(mspec *s) {
  tu_rng r = {101};
  memset(s, 0, sizeof *s);
  s->nb = 7;
  s->gravity[2] = -9.81;
  s->gravity[0] = 0.5;
  s->timestep = 2e-3;
  for (int k = 1; k <= 7; ++k) {
    s->b[k] = body(&r, k - 1, 1.0 / k);
    s->b[k].pos[2] += 0.3;
    s->b[k].nj = 1;
    s->b[k].j[0] = joint(&r, GRIT_JOINT_HINGE);
  }
  s->nu = 7;
  for (int a = 0; a < 7; ++a) {
    s->act_joint[a] = a;
    s->act_gear[a] = tu_uniform(&r, 0.5, 20);
    s->act_limited[a] = a % 2;
    s->act_lo[a] = -0.5;
    s->act_hi[a] = 0.7;
  }
}

static void free_body(mspec *s) {
  tu_rng r = {102};
  memset(s, 0, sizeof *s);
  s->nb = 1;
  s->gravity[1] = 1.0;
  s->gravity[2] = -9.81;
  s->timestep = 1e-3;
  s->b[1] = body(&r, 0, 1.0);
  const double d[3] = {0.02, 0.05, 0.06}; /* strongly asymmetric */
  memcpy(s->b[1].diag, d, sizeof d);
  grit_inertia_from_principal(s->b[1].inertia, d, s->b[1].iquat);
  s->b[1].nj = 1;
  s->b[1].j[0] = joint(&r, GRIT_JOINT_FREE);
}

/* Depth first: 1 free base; 2 slide (child of 1); 3 ball (child of 2); 4 two hinges (child of 3);
 * 5 welded (child of 4); 6 hinge + slide (child of 1); 7 ball (child of 6); 8 hinge on the world
 * (a second tree); 9 slide (child of 8). */
static void branched_tree(mspec *s) {
  tu_rng r = {103};
  memset(s, 0, sizeof *s);
  s->nb = 9;
  s->gravity[2] = -9.81;
  s->timestep = 1e-3;
  const int parent[10] = {-1, 0, 1, 2, 3, 4, 1, 6, 0, 8};
  const grit_joint_type H = GRIT_JOINT_HINGE, S = GRIT_JOINT_SLIDE, B = GRIT_JOINT_BALL, F = GRIT_JOINT_FREE;
  const int nj[10] = {0, 1, 1, 1, 2, 0, 2, 1, 1, 1};
  const grit_joint_type types[10][2] = {{H, H}, {F, H}, {S, H}, {B, H}, {H, H}, {H, H}, {H, S}, {B, H}, {H, H}, {S, H}};
  for (int k = 1; k <= 9; ++k) {
    s->b[k] = body(&r, parent[k], 1.0);
    s->b[k].nj = nj[k];
    for (int n = 0; n < nj[k]; ++n) s->b[k].j[n] = joint(&r, types[k][n]);
  }
  s->nu = 2;
  s->act_joint[0] = 3; /* the first hinge of body 4 */
  s->act_joint[1] = 1; /* the slide of body 2 */
  s->act_gear[0] = 2.0, s->act_gear[1] = 5.0;
}

/* ------------------------------------------------------------------------- building both */

static grit_model *build_grit(const mspec *s) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options o = grit_default_options();
  memcpy(o.gravity, s->gravity, sizeof o.gravity);
  o.timestep = s->timestep;
  cr_assert_eq(grit_builder_set_options(b, &o), GRIT_OK);
  for (int k = 1; k <= s->nb; ++k) {
    const bspec *p = &s->b[k];
    grit_body_def bd = grit_default_body_def();
    bd.parent = p->parent;
    memcpy(bd.pos, p->pos, sizeof bd.pos);
    memcpy(bd.quat, p->quat, sizeof bd.quat);
    bd.mass = p->mass;
    memcpy(bd.com, p->com, sizeof bd.com);
    memcpy(bd.inertia, p->inertia, sizeof bd.inertia);
    cr_assert_eq(grit_builder_add_body(b, &bd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    for (int n = 0; n < p->nj; ++n) {
      grit_joint_def jd = grit_default_joint_def();
      jd.type = p->j[n].type;
      memcpy(jd.pos, p->j[n].pos, sizeof jd.pos);
      memcpy(jd.axis, p->j[n].axis, sizeof jd.axis);
      jd.damping = p->j[n].damping;
      jd.armature = p->j[n].armature;
      cr_assert_eq(grit_builder_add_joint(b, k, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    }
  }
  for (int a = 0; a < s->nu; ++a) {
    grit_actuator_def ad = grit_default_actuator_def();
    ad.joint = s->act_joint[a];
    ad.gear = s->act_gear[a];
    ad.ctrl_limited = s->act_limited[a];
    ad.ctrl_range[0] = s->act_lo[a];
    ad.ctrl_range[1] = s->act_hi[a];
    cr_assert_eq(grit_builder_add_actuator(b, &ad, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

static const char *mj_type(grit_joint_type t) {
  return t == GRIT_JOINT_FREE ? "free" : t == GRIT_JOINT_BALL ? "ball" : t == GRIT_JOINT_SLIDE ? "slide" : "hinge";
}

/* Writes body k and its subtree (children in increasing index: depth first). %.17g round-trips doubles. */
static void write_body(FILE *f, const mspec *s, int k) {
  const bspec *p = &s->b[k];
  fprintf(f, "<body name=\"b%d\" pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\">\n", k, p->pos[0],
          p->pos[1], p->pos[2], p->quat[0], p->quat[1], p->quat[2], p->quat[3]);
  fprintf(f,
          "<inertial pos=\"%.17g %.17g %.17g\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\" "
          "quat=\"%.17g %.17g %.17g %.17g\"/>\n",
          p->com[0], p->com[1], p->com[2], p->mass, p->diag[0], p->diag[1], p->diag[2], p->iquat[0], p->iquat[1],
          p->iquat[2], p->iquat[3]);
  for (int n = 0; n < p->nj; ++n) {
    const jspec *j = &p->j[n];
    if (j->type == GRIT_JOINT_FREE)
      fprintf(f, "<joint name=\"j%d_%d\" type=\"free\" damping=\"%.17g\" armature=\"%.17g\"/>\n", k, n, j->damping,
              j->armature);
    else
      fprintf(f,
              "<joint name=\"j%d_%d\" type=\"%s\" pos=\"%.17g %.17g %.17g\" axis=\"%.17g %.17g %.17g\" "
              "damping=\"%.17g\" armature=\"%.17g\"/>\n",
              k, n, mj_type(j->type), j->pos[0], j->pos[1], j->pos[2], j->axis[0], j->axis[1], j->axis[2],
              j->damping, j->armature);
  }
  for (int c = k + 1; c <= s->nb; ++c)
    if (s->b[c].parent == k) write_body(f, s, c);
  fprintf(f, "</body>\n");
}

/* The joint name of grit joint index j (joints are numbered body by body in order). */
static void joint_name(const mspec *s, int j, char *name) {
  for (int k = 1; k <= s->nb; ++k)
    for (int n = 0; n < s->b[k].nj; ++n)
      if (j-- == 0) {
        sprintf(name, "j%d_%d", k, n);
        return;
      }
}

static mjModel *build_mujoco(const mspec *s) {
  char path[] = "/tmp/grit_mjcf_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0, "mkstemp failed");
  FILE *f = fdopen(fd, "w");
  fprintf(f, "<mujoco model=\"grit\">\n<option timestep=\"%.17g\" gravity=\"%.17g %.17g %.17g\" integrator=\"Euler\"/>\n",
          s->timestep, s->gravity[0], s->gravity[1], s->gravity[2]);
  fprintf(f, "<worldbody>\n");
  for (int k = 1; k <= s->nb; ++k)
    if (s->b[k].parent == 0) write_body(f, s, k);
  fprintf(f, "</worldbody>\n");
  if (s->nu) {
    fprintf(f, "<actuator>\n");
    for (int a = 0; a < s->nu; ++a) {
      char name[32];
      joint_name(s, s->act_joint[a], name);
      fprintf(f, "<motor joint=\"%s\" gear=\"%.17g\" ctrllimited=\"%s\" ctrlrange=\"%.17g %.17g\"/>\n", name,
              s->act_gear[a], s->act_limited[a] ? "true" : "false", s->act_lo[a], s->act_hi[a]);
    }
    fprintf(f, "</actuator>\n");
  }
  fprintf(f, "</mujoco>\n");
  fclose(f);
  char err[1000] = "";
  mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
  unlink(path);
  cr_assert_not_null(m, "MuJoCo rejected the model: %s", err);
  return m;
}

/* ----------------------------------------------------------------------------- comparison */

typedef struct {
  double M, c, step1, stepN;
} deviations;

/* Random states of the model: compares M and c; then steps both engines and compares the states. */
/* spins: the model has ball or free joints, whose step replaces MuJoCo's explicit gyroscopic torque by
 * the discrete balance of the body's angular momentum (docs/theory.md): M and c must still agree to
 * round-off, the steps only to O(h^2) per step (checked by the caller). */
static deviations compare(const mspec *s, int nstates, unsigned long long seed, int spins) {
  grit_model *gm = build_grit(s);
  mjModel *mm = build_mujoco(s);
  const int nq = grit_model_nq(gm), nv = grit_model_nv(gm), nu = grit_model_nu(gm);
  cr_assert_eq(mm->nq, nq, "nq: MuJoCo %d, grit %d", mm->nq, nq);
  cr_assert_eq(mm->nv, nv);
  cr_assert_eq(mm->nu, nu);
  cr_assert_eq(mm->nbody, grit_model_nbody(gm));
  for (int j = 0; j < grit_model_njoint(gm); ++j) {
    cr_assert_eq(mm->jnt_qposadr[j], grit_model_joint_qposadr(gm, j), "joint %d qpos address", j);
    cr_assert_eq(mm->jnt_dofadr[j], grit_model_joint_dofadr(gm, j), "joint %d dof address", j);
  }
  /* the same reference configuration */
  double *q0 = calloc((size_t)nq, sizeof *q0);
  grit_model_qpos0(gm, q0);
  for (int i = 0; i < nq; ++i)
    cr_assert(fabs(q0[i] - mm->qpos0[i]) <= 1e-15, "qpos0[%d]: grit %.17g, MuJoCo %.17g", i, q0[i], mm->qpos0[i]);
  free(q0);

  mjData *md = mj_makeData(mm);
  grit_data *gd = tu_data(gm);
  tu_rng rng = {seed};
  double *M = calloc((size_t)(nv * nv), sizeof *M), *Mm = calloc((size_t)(nv * nv), sizeof *Mm);
  double *c = calloc((size_t)nv, sizeof *c), *q = calloc((size_t)nq, sizeof *q), *v = calloc((size_t)nv, sizeof *v);
  double *u = calloc((size_t)nu + 1, sizeof *u);
  deviations dev = {0, 0, 0, 0};
  for (int k = 0; k < nstates; ++k) {
    tu_random_state(&rng, gm, q, v, 2.0);
    for (int a = 0; a < nu; ++a) u[a] = tu_uniform(&rng, -1, 1);
    cr_assert_eq(grit_data_set_qpos(gd, q, nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(gd, v, nv), GRIT_OK);
    cr_assert_eq(grit_data_set_ctrl(gd, u, nu), GRIT_OK);
    memcpy(md->qpos, grit_data_qpos(gd), sizeof(double) * (size_t)nq); /* the normalized quaternions */
    memcpy(md->qvel, v, sizeof(double) * (size_t)nv);
    if (nu) memcpy(md->ctrl, u, sizeof(double) * (size_t)nu);
    mj_forward(mm, md);
    mj_fullM(mm, Mm, md->qM);
    cr_assert_eq(grit_mass_matrix(gd, M), GRIT_OK);
    cr_assert_eq(grit_bias_forces(gd, c), GRIT_OK);
    const double eM = tu_max_abs_diff(M, Mm, nv * nv) / tu_max_abs(Mm, nv * nv);
    const double ec = tu_max_abs_diff(c, md->qfrc_bias, nv) / tu_max_abs(md->qfrc_bias, nv);
    dev.M = fmax(dev.M, eM);
    dev.c = fmax(dev.c, ec);
    /* Two implementations of the same algorithms in double precision: both round at ~1e-16 per
     * operation over O(nbody) recursions; 1e-10 relative leaves a large margin, yet any modelling
     * difference (a convention, a frame, a missing term) shows up at 1e-3 or more. */
    cr_assert(eM <= 1e-10, "state %d: M deviates from MuJoCo by %.3g relative", k, eM);
    cr_assert(ec <= 1e-10, "state %d: bias deviates from MuJoCo by %.3g relative", k, ec);

    /* steps: one, then 100 more; the state must follow MuJoCo's */
    for (int n = 0; n <= 100; ++n) {
      cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
      mj_step(mm, md);
      if (n != 0 && n != 100) continue;
      double e = fmax(tu_max_abs_diff(grit_data_qpos(gd), md->qpos, nq) / fmax(1.0, tu_max_abs(md->qpos, nq)),
                      tu_max_abs_diff(grit_data_qvel(gd), md->qvel, nv) / fmax(1.0, tu_max_abs(md->qvel, nv)));
      if (n == 0) {
        dev.step1 = fmax(dev.step1, e);
        /* one step: the difference of M and c above, amplified by the solve (cond(A) < 1e4 here) */
        if (!spins) cr_assert(e <= 1e-10, "state %d: one step deviates from MuJoCo by %.3g", k, e);
      } else {
        dev.stepN = fmax(dev.stepN, e);
        /* 100 steps (0.1-0.2 s): round-off grows with the flow's divergence; 1e-8 is still far below
         * any modelling difference, which would appear at O(dt) = 1e-3 */
        if (!spins) cr_assert(e <= 1e-8, "state %d: 101 steps deviate from MuJoCo by %.3g", k, e);
      }
    }
  }
  free(M), free(Mm), free(c), free(q), free(v), free(u);
  grit_data_free(gd);
  grit_model_free(gm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return dev;
}

static void report(const char *name, deviations d) {
  cr_log_info("%s vs MuJoCo: M %.2e, bias %.2e, 1 step %.2e, 101 steps %.2e (max relative deviations)", name, d.M,
              d.c, d.step1, d.stepN);
}

/* For a model with ball or free joints: M and c agree to round-off (in compare), and one step differs
 * from MuJoCo's only by the spin correction, which is O(h) in the force, so O(h^2) in the state:
 * halving the time step must divide the largest one-step deviation by 4 (within 10%). */
static void compare_spinning(const char *name, mspec *s, unsigned long long seed) {
  deviations a = compare(s, 25, seed, 1);
  s->timestep /= 2;
  deviations b = compare(s, 25, seed, 1);
  report(name, a);
  cr_log_info("%s: one-step deviation at h/2 %.2e; ratio %.3f (second order: 4)", name, b.step1, a.step1 / b.step1);
  cr_assert(a.step1 / b.step1 > 3.6 && a.step1 / b.step1 < 4.4, "%s: one-step deviation ratio %.3f is not O(h^2)",
            name, a.step1 / b.step1);
}

Test(mujoco, seven_joint_arm) {
  mspec s;
  seven_joint_arm(&s);
  report("7-joint arm", compare(&s, 25, 201, 0));
}

Test(mujoco, free_body_with_asymmetric_inertia) {
  mspec s;
  free_body(&s);
  compare_spinning("free body", &s, 202);
}

Test(mujoco, branched_tree_with_ball_slide_and_floating_base) {
  mspec s;
  branched_tree(&s);
  compare_spinning("branched tree", &s, 203);
}
