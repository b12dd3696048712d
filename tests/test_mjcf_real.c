/* SPDX-License-Identifier: Apache-2.0 */
/* test_mjcf_real.c — real public model files (tests/models/dm_control_suite, unmodified) against MuJoCo
 * 2.2.2 (a reference peer, used by tests only): the same nq, nv and number of bodies (MuJoCo's nbody,
 * grit_mjcf_info.nbody), and with contact, gravity, limits, actuation, springs and fluid forces off in
 * both, 1 s from a nonzero velocity with MuJoCo's Euler integrator at the file's time step and grit's
 * explicit_gyroscopic option (MuJoCo's explicit velocity-product terms for free and ball bodies), the
 * same trajectory to 1e-4 (measured: 2e-14 for all six files). With fluid forces on in both (MuJoCo
 * 2.2.2's inertia-box model: the fish in its density-5000 water, a free box, a cylinder and an inertial
 * with two equal moments in a viscous wind), the same to 1e-4 too (measured: 1.5e-15, 2.8e-15, 5.0e-15,
 * 2.3e-15). Without the option grit's discrete
 * momentum balance differs from MuJoCo's Euler by O(dt), by design (free_body_first_order). And
 * non-convex, open and vertex-only mesh files weigh as MuJoCo weighs them (its legacy equivalent-box
 * mass). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "mjcf_mujoco_util.h"
#include "model_internal.h"

#ifndef GRIT_SOURCE_DIR
#error "GRIT_SOURCE_DIR must be defined"
#endif


/* fluid: the file's fluid forces (<option density viscosity wind>) stay on in both */
static void compare_with(const char *file, int lenient, int fluid, double speed) {
  char path[1024], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  snprintf(path, sizeof path, "%s/tests/models/dm_control_suite/%s", GRIT_SOURCE_DIR, file);
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  cr_assert_not_null(mm, "MuJoCo: %s", err);
  grit_model *gm;
  grit_mjcf_info info;
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.explicit_gyroscopic = 1;
  o.lenient = lenient;
  cr_assert_eq(grit_mjcf_load_file_with(path, &o, &gm, &info, msg), GRIT_OK, "%s", msg);
  cr_assert_eq(gm->nq, mm->nq, "%s", file);
  cr_assert_eq(gm->nv, mm->nv, "%s", file);
  cr_assert_eq(info.nbody, mm->nbody, "%s", file);
  const double density = mm->opt.density, viscosity = mm->opt.viscosity;
  cr_assert_eq(gm->opt.density, density, "%s", file);
  cr_assert_eq(gm->opt.viscosity, viscosity, "%s", file);
  mjcmp_free_motion_only(mm, gm); /* the same free motion in both */
  if (fluid) {
    mm->opt.density = gm->opt.density = density;
    mm->opt.viscosity = gm->opt.viscosity = viscosity;
  }
  cr_assert_eq(gm->opt.timestep, mm->opt.timestep, "%s", file);
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  double *v0 = malloc(sizeof(double) * (size_t)mm->nv + 1);
  for (int i = 0; i < mm->nv; ++i) v0[i] = speed * sin(1.0 + i);
  mju_copy(md->qvel, v0, mm->nv);
  cr_assert_eq(grit_data_set_qvel(gd, v0, gm->nv), GRIT_OK);
  const int steps = (int)lround(1.0 / mm->opt.timestep);
  double eq = 0, ev = 0;
  for (int k = 0; k < steps; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
  }
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &eq, &ev);
  cr_log_info("%s%s: nq %d nv %d nbody %d (grit's model %d); %d steps of %g s: max |dq| %.3g, max |dv| %.3g", file,
              fluid ? " (fluid forces on)" : "", mm->nq, mm->nv, mm->nbody, gm->nbody, steps, mm->opt.timestep, eq, ev);
  cr_assert_lt(eq, 1e-4, "%s: q differs by %g", file, eq);
  cr_assert_lt(ev, 1e-4, "%s: v differs by %g", file, ev);
  if (fluid) { /* the fluid forces matter: MuJoCo without them ends elsewhere */
    mjData *dry = mj_makeData(mm);
    mm->opt.density = mm->opt.viscosity = 0;
    mju_copy(dry->qvel, v0, mm->nv);
    for (int k = 0; k < steps; ++k) mj_step(mm, dry);
    double fq, fv;
    mjcmp_state_error(mm, dry, grit_data_qpos(gd), grit_data_qvel(gd), &fq, &fv);
    cr_log_info("%s: without fluid forces MuJoCo's state differs by max |dq| %.3g, max |dv| %.3g", file, fq, fv);
    cr_assert_gt(fq, 1e-2, "%s: the fluid forces changed q by %g only", file, fq);
    mj_deleteData(dry);
  }
  free(v0);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_mjcf_info_free(&info);
  grit_model_free(gm);
}

static void compare(const char *file, int lenient) { compare_with(file, lenient, 0, 0.5); }

Test(mjcf_real, cheetah) { compare("cheetah.xml", 0); }
Test(mjcf_real, humanoid_CMU) { compare("humanoid_CMU.xml", 0); }
Test(mjcf_real, walker) { compare("walker.xml", 0); }
Test(mjcf_real, hopper) { compare("hopper.xml", 0); }
Test(mjcf_real, acrobot) { compare("acrobot.xml", 0); }
/* a free body with small fins (here without its fluid: free motion only, as the files above) */
Test(mjcf_real, fish) { compare("fish.xml", 0); }
#define FISH_SPEED 0.2 /* at 0.5 rad/s the explicit drag on the light fins diverges in MuJoCo too */
/* the fish in its fluid (density 5000): MuJoCo 2.2.2's inertia-box fluid forces (src/engine/fluid.c) */
Test(mjcf_real, fish_fluid) { compare_with("fish.xml", 0, 1, FISH_SPEED); }

/* A free body in a dense, viscous fluid with wind, gravity on, 1 s from a tumbling velocity at 2 ms,
 * explicit_gyroscopic, against MuJoCo 2.2.2's Euler: the same trajectory to 1e-4 (the forces'
 * difference would be O(1): without the fluid MuJoCo ends > 0.1 away). `inner`: the body's content. */
static void fluid_body(const char *what, const char *inner) {
  char xml[1000], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep='0.002' density='1000' viscosity='0.05' wind='0.5 -0.3 0.2'/>"
           "<worldbody><body pos='0 0 1'><freejoint/>%s</body></worldbody></mujoco>",
           inner);
  mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert_not_null(mm, "%s", err);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.explicit_gyroscopic = 1;
  grit_model *gm;
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), what, &o, &gm, NULL, msg), GRIT_OK, "%s", msg);
  mm->opt.integrator = mjINT_EULER;
  mjData *md = mj_makeData(mm), *dry = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  const double v0[6] = {0.3, -0.6, 0.4, 5.0, -3.0, 4.0};
  mju_copy(md->qvel, v0, 6);
  mju_copy(dry->qvel, v0, 6);
  cr_assert_eq(grit_data_set_qvel(gd, v0, 6), GRIT_OK);
  for (int k = 0; k < 500; ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
  }
  double eq, ev, fq, fv;
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &eq, &ev);
  mm->opt.density = mm->opt.viscosity = 0;
  for (int k = 0; k < 500; ++k) mj_step(mm, dry);
  mjcmp_state_error(mm, dry, grit_data_qpos(gd), grit_data_qvel(gd), &fq, &fv);
  cr_log_info("%s in wind: 500 steps of 2 ms: max |dq| %.3g, max |dv| %.3g (without fluid forces MuJoCo is "
              "%.3g, %.3g away)", what, eq, ev, fq, fv);
  cr_expect_lt(eq, 1e-4, "%s: q differs by %g", what, eq);
  cr_expect_lt(ev, 1e-4, "%s: v differs by %g", what, ev);
  cr_expect_gt(fq, 0.1, "%s: the fluid forces changed q by %g only", what, fq);
  mj_deleteData(md);
  mj_deleteData(dry);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
}

/* turned and off its body's origin: the principal frame, which the inertia-box model works in, is
 * neither the body's nor at its origin */
Test(mjcf_real, free_box_in_wind) {
  fluid_body("box", "<geom type='box' size='.1 .05 .02' euler='20 30 40' pos='.02 .01 -.01' contype='0' "
                    "conaffinity='0'/>");
}

/* two equal principal moments: the quadratic drag depends on the pair of axes taken in their plane,
 * MuJoCo's being the geometry's frame or the inertial's quat (grit_body_def.inertia_quat) */
Test(mjcf_real, symmetric_bodies_in_wind) {
  fluid_body("cylinder", "<geom type='cylinder' size='.05 .1' euler='20 30 40' contype='0' conaffinity='0'/>");
  fluid_body("inertial", "<inertial pos='.01 0 0' mass='2' diaginertia='.01 .01 .004' euler='-30 10 50'/>");
}

/* Why the free-body files differed from MuJoCo by up to 6.5e-4 before explicit_gyroscopic existed:
 * grit's default step replaces a ball or free body's explicit gyroscopic torque by its discrete
 * momentum balance (docs/theory.md), a different first-order discretization of the same equations.
 * A single tumbling ellipsoid (diagonal inertia: no diagonalization involved): with the option the two
 * agree to round-off; without it they differ by O(dt), halving with the step. */
static double ellipsoid_error(double dt, int explicit_gyroscopic) {
  char xml[400], err[1000] = "", msg[GRIT_MESSAGE_SIZE];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep='%g'/><worldbody><body pos='0 0 .1'><freejoint/>"
           "<geom type='ellipsoid' size='.03 .04 .02'/></body></worldbody></mujoco>",
           dt);
  mjModel *mm = mjcmp_load_text(xml, err, sizeof err);
  cr_assert_not_null(mm, "%s", err);
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.explicit_gyroscopic = explicit_gyroscopic;
  grit_model *gm;
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "ellipsoid", &o, &gm, NULL, msg), GRIT_OK, "%s", msg);
  mm->opt.disableflags |= mjDSBL_GRAVITY;
  mm->opt.integrator = mjINT_EULER;
  memset(gm->opt.gravity, 0, sizeof gm->opt.gravity);
  mjData *md = mj_makeData(mm);
  grit_data *gd;
  cr_assert_eq(grit_data_create(gm, &gd), GRIT_OK);
  const double v0[6] = {0.1, -0.2, 0.3, 3.0, -2.0, 4.0};
  mju_copy(md->qvel, v0, 6);
  cr_assert_eq(grit_data_set_qvel(gd, v0, 6), GRIT_OK);
  for (int k = 0; k < (int)lround(1.0 / dt); ++k) {
    mj_step(mm, md);
    cr_assert_eq(grit_step(gd), GRIT_OK, "%s", grit_data_last_error(gd));
  }
  double eq, ev;
  mjcmp_state_error(mm, md, grit_data_qpos(gd), grit_data_qvel(gd), &eq, &ev);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
  return fmax(eq, ev);
}

Test(mjcf_real, free_body_first_order) {
  const double e2 = ellipsoid_error(2e-3, 0), e1 = ellipsoid_error(1e-3, 0);
  const double x2 = ellipsoid_error(2e-3, 1), x1 = ellipsoid_error(1e-3, 1);
  cr_log_info("tumbling ellipsoid, 1 s: grit's default vs MuJoCo's Euler %.3g (2 ms), %.3g (1 ms); "
              "explicit_gyroscopic %.3g, %.3g", e2, e1, x2, x1);
  cr_expect_lt(x2, 1e-12, "%g", x2); /* round-off over 500 steps */
  cr_expect_lt(x1, 1e-12, "%g", x1);
  cr_expect_gt(e2, 1e-6, "%g", e2);  /* a real discretization difference... */
  cr_expect(e2 / e1 > 1.8 && e2 / e1 < 2.2, "first order: ratio %g", e2 / e1); /* ...of first order */
}

/* ------------------------------------------------------------------------------ mesh masses */

static void put_f32(unsigned char *p, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  for (int k = 0; k < 4; ++k) p[k] = (unsigned char)(u >> 8 * k);
}

/* An L-shaped solid (three 10 cm cubes) as a binary STL of its outer faces, skipping the faces listed
 * in `skip` (an open surface); returns the number of triangles written. */
static int write_l_stl(const char *path, int nskip) {
  static const int cells[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  unsigned char buf[84 + 50 * 64];
  memset(buf, 0, sizeof buf);
  int nt = 0, nface = 0;
  for (int c = 0; c < 3; ++c)
    for (int ax = 0; ax < 3; ++ax)
      for (int s = 0; s < 2; ++s) {
        int nb[3] = {cells[c][0], cells[c][1], cells[c][2]};
        nb[ax] += s ? 1 : -1;
        int inside = 0;
        for (int k = 0; k < 3; ++k) inside |= nb[0] == cells[k][0] && nb[1] == cells[k][1] && nb[2] == cells[k][2];
        if (inside || nface++ < nskip) continue;
        double o[3] = {cells[c][0], cells[c][1], cells[c][2]}, u[3] = {0, 0, 0}, w[3] = {0, 0, 0};
        o[ax] += s;
        u[(ax + 1) % 3] = 1, w[(ax + 2) % 3] = 1;
        const double sign = s ? 1 : -1; /* outward: u x w is +axis */
        double p[4][3];
        for (int i = 0; i < 3; ++i)
          p[0][i] = o[i], p[1][i] = o[i] + u[i], p[2][i] = o[i] + u[i] + w[i], p[3][i] = o[i] + w[i];
        const int tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
        for (int h = 0; h < 2; ++h, ++nt)
          for (int k = 0; k < 3; ++k) {
            const int idx = sign > 0 ? tri[h][k] : tri[h][2 - k];
            for (int i = 0; i < 3; ++i) put_f32(buf + 84 + 50 * nt + 12 + 12 * k + 4 * i, (float)(0.1 * p[idx][i]));
          }
      }
  buf[80] = (unsigned char)nt;
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fwrite(buf, 1, 84 + 50 * (size_t)nt, f);
  fclose(f);
  return nt;
}

/* Closed non-convex, open, and vertex-only (the hull's faces) meshes, with and without exactmeshinertia:
 * body mass, centre and inertia trace as MuJoCo 2.2.2's to 1e-6 relative (single-precision vertices). */
Test(mjcf_real, mesh_masses_as_mujoco) {
  char dir[] = "/tmp/grit_lmesh_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char p[1200];
  snprintf(p, sizeof p, "%s/l.stl", dir);
  cr_assert_eq(write_l_stl(p, 0), 28);
  snprintf(p, sizeof p, "%s/open.stl", dir);
  write_l_stl(p, 2);
  snprintf(p, sizeof p, "%s/pts.obj", dir);
  FILE *f = fopen(p, "w");
  for (int i = 0; i < 40; ++i) fprintf(f, "v %.6f %.6f %.6f\n", 0.1 * cos(i), 0.07 * sin(1.3 * i), 0.05 * sin(2.1 * i + 1));
  fclose(f);
  const char *meshes[] = {"l.stl", "open.stl", "pts.obj"};
  for (int exact = 0; exact < 2; ++exact)
    for (int k = 0; k < 3; ++k) {
      snprintf(p, sizeof p, "%s/model.xml", dir);
      f = fopen(p, "w");
      fprintf(f, "<mujoco><compiler exactmeshinertia='%s'/><asset><mesh name='m' file='%s' scale='1 1.5 .8'/></asset>"
                 "<worldbody><body><freejoint/><geom type='mesh' mesh='m' density='700' pos='.1 0 0' euler='10 20 30'/>"
                 "</body></worldbody></mujoco>\n",
              exact ? "true" : "false", meshes[k]);
      fclose(f);
      char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
      mjModel *mm = mj_loadXML(p, NULL, err, sizeof err);
      cr_assert_not_null(mm, "%s: %s", meshes[k], err);
      grit_model *gm;
      cr_assert_eq(grit_mjcf_load_file(p, &gm, NULL, msg), GRIT_OK, "%s", msg);
      const double m0 = mm->body_mass[1], m1 = gm->body_mass[1];
      const double t0 = mm->body_inertia[3] + mm->body_inertia[4] + mm->body_inertia[5];
      const double t1 = gm->body_inertia[9] + gm->body_inertia[13] + gm->body_inertia[17];
      cr_log_info("%s (exact %d): mass %.9g vs MuJoCo %.9g", meshes[k], exact, m1, m0);
      cr_expect(fabs(m1 - m0) <= 1e-6 * m0, "%s (exact %d): mass %.9g vs %.9g", meshes[k], exact, m1, m0);
      cr_expect(fabs(t1 - t0) <= 1e-6 * t0, "%s (exact %d): inertia trace %.9g vs %.9g", meshes[k], exact, t1, t0);
      for (int i = 0; i < 3; ++i)
        cr_expect(fabs(gm->body_com[3 + i] - mm->body_ipos[3 + i]) <= 1e-7, "%s: centre %d", meshes[k], i);
      mj_deleteModel(mm);
      grit_model_free(gm);
    }
  const char *files[] = {"l.stl", "open.stl", "pts.obj", "model.xml"};
  for (int i = 0; i < 4; ++i) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    remove(p);
  }
  rmdir(dir);
}

/* The step's Jacobians with explicit_gyroscopic (the dual instantiation skips the momentum balance as
 * the double one does) against central differences of the step: a tumbling free ellipsoid with a
 * ball-jointed capsule hanging from it, gravity on. Tolerance 1e-6 relative (differences of step 1e-6:
 * truncation ~1e-12 relative to the curvature, round-off ~1e-10 / 1e-6). */
Test(mjcf_real, explicit_gyroscopic_derivatives) {
  static const char xml[] = "<mujoco><option timestep='0.002'/><worldbody><body pos='0 0 1'><freejoint/>"
                            "<geom type='ellipsoid' size='.03 .04 .02'/><body pos='0 0 -.05'><joint type='ball'/>"
                            "<geom type='capsule' fromto='0 0 0 .02 .01 -.1' size='.01'/></body></body></worldbody>"
                            "</mujoco>";
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  o.explicit_gyroscopic = 1;
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "chain", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nx = 2 * nv;
  cr_assert_eq(nv, 9);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  double x0[16 + 9], x[16 + 9], A[18 * 18], qa[16], qb[16], dq[9], e[9] = {0};
  grit_model_qpos0(m, x0);
  const double qball[4] = {0.9, 0.2, -0.3, 0.1}; /* a tilted ball joint (normalized by the step) */
  const double n = sqrt(0.81 + 0.04 + 0.09 + 0.01);
  for (int i = 0; i < 4; ++i) x0[7 + i] = qball[i] / n;
  for (int i = 0; i < nv; ++i) x0[nq + i] = 2.0 * sin(1.0 + 1.7 * i);
  cr_assert_eq(grit_linearize(d, x0, NULL, A, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  double num = 0, den = 0;
  for (int col = 0; col < nx; ++col) {
    double fp[18], fm[18];
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      memcpy(x, x0, sizeof(double) * (size_t)(nq + nv));
      if (col < nv) {
        e[col] = sgn * 1e-6;
        grit_integrate_positions(m, x, e, 1.0);
        e[col] = 0;
      } else {
        x[nq + col - nv] += sgn * 1e-6;
      }
      cr_assert_eq(grit_linearize(d, x, NULL, NULL, NULL), GRIT_OK);
      memcpy(qb, grit_data_qpos(d), sizeof(double) * (size_t)nq);
      double *f = sgn > 0 ? fp : fm;
      memcpy(f + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
      if (sgn < 0) memcpy(qa, qb, sizeof qa);
      else grit_position_difference(m, qa, qb, dq); /* q+(+h) - q+(-h) in the tangent space */
    }
    for (int r = 0; r < nx; ++r) {
      const double fd = r < nv ? dq[r] / 2e-6 : (fp[r] - fm[r]) / 2e-6;
      num = fmax(num, fabs(fd - A[r * nx + col]));
      den = fmax(den, fabs(A[r * nx + col]));
    }
  }
  cr_log_info("explicit_gyroscopic: step Jacobian vs central differences: max error %.3g of max entry %.3g", num, den);
  cr_expect_lt(num, 1e-6 * den, "%g of %g", num, den);
  grit_data_free(d);
  grit_model_free(m);
}

/* Primitives fitted to a mesh (<geom type="box" mesh="...">): sphere, capsule, cylinder, box and ellipsoid
 * by the mesh's equivalent inertia box and, with compiler fitaabb, by its bounding box in its principal
 * frame, with fitscale, on an L-shaped solid placed off the geometry's origin and turned: sizes, the
 * geometry's pose in its body (axes up to sign, the ones the shape distinguishes) and the body's mass as
 * MuJoCo 2.2.2 has them. Tolerances: 1e-6 relative for sizes and mass, 1e-6 m and 1e-6 for positions
 * and axes (MuJoCo's mju_eig3 stops at a rotation cosine within 1e-12 of 1: axes to ~1e-6). */
Test(mjcf_real, primitives_fitted_to_meshes) {
  char dir[] = "/tmp/grit_fit_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char p[1200];
  snprintf(p, sizeof p, "%s/l.stl", dir);
  write_l_stl(p, 0);
  static const char *const types[] = {"sphere", "capsule", "cylinder", "box", "ellipsoid"};
  double worst = 0;
  for (int aabb = 0; aabb < 2; ++aabb)
    for (int t = 0; t < 5; ++t) {
      snprintf(p, sizeof p, "%s/model.xml", dir);
      FILE *f = fopen(p, "w");
      fprintf(f, "<mujoco><compiler fitaabb='%s'/><asset><mesh name='m' file='l.stl' scale='1 1.5 .8'/></asset>"
                 "<worldbody><body><freejoint/><geom type='%s' mesh='m' fitscale='1.2' pos='.1 0 .02' "
                 "euler='10 20 30'/></body></worldbody></mujoco>\n",
              aabb ? "true" : "false", types[t]);
      fclose(f);
      char err[1000] = "", msg[GRIT_MESSAGE_SIZE];
      mjModel *mm = mj_loadXML(p, NULL, err, sizeof err);
      cr_assert_not_null(mm, "%s: %s", types[t], err);
      grit_model *gm;
      cr_assert_eq(grit_mjcf_load_file(p, &gm, NULL, msg), GRIT_OK, "%s", msg);
      cr_assert_eq(gm->ngeom, 1);
      const int ns = t == 0 ? 1 : t < 3 ? 2 : 3;
      double e = 0;
      for (int i = 0; i < ns; ++i) e = fmax(e, fabs(gm->geom_shape[0].size[i] - mm->geom_size[i]) / mm->geom_size[i]);
      for (int i = 0; i < 3; ++i) e = fmax(e, fabs(gm->geom_pos[i] - mm->geom_pos[i]));
      double Rg[9], Rm[9];
      mju_quat2Mat(Rg, gm->geom_quat);
      mju_quat2Mat(Rm, mm->geom_quat);
      for (int a = t == 0 ? 3 : t < 3 ? 2 : 0; a < 3; ++a) /* the axes the shape distinguishes, up to sign */
        e = fmax(e, 1 - fabs(Rg[a] * Rm[a] + Rg[3 + a] * Rm[3 + a] + Rg[6 + a] * Rm[6 + a]));
      e = fmax(e, fabs(gm->body_mass[1] - mm->body_mass[1]) / mm->body_mass[1]);
      cr_log_info("%s (fitaabb %d): size %.9g %.9g %.9g vs MuJoCo %.9g %.9g %.9g; largest difference %.3g", types[t],
                  aabb, gm->geom_shape[0].size[0], gm->geom_shape[0].size[1], gm->geom_shape[0].size[2],
                  mm->geom_size[0], mm->geom_size[1], mm->geom_size[2], e);
      cr_expect_lt(e, 1e-6, "%s (fitaabb %d): %g; pos %g %g %g vs %g %g %g, mass %g vs %g", types[t], aabb, e,
                   gm->geom_pos[0], gm->geom_pos[1], gm->geom_pos[2], mm->geom_pos[0], mm->geom_pos[1],
                   mm->geom_pos[2], gm->body_mass[1], mm->body_mass[1]);
      worst = fmax(worst, e);
      mj_deleteModel(mm);
      grit_model_free(gm);
    }
  cr_log_info("fitted primitives: largest difference from MuJoCo %.3g", worst);
  snprintf(p, sizeof p, "%s/l.stl", dir);
  remove(p);
  snprintf(p, sizeof p, "%s/model.xml", dir);
  remove(p);
  rmdir(dir);
}
