/* SPDX-License-Identifier: Apache-2.0 */
/* test_afactor.c — the step's factor of A on trees of more than 64 dofs (afactor.c): in tree order
 * without fill against the dense factor (the switch grit_afactor_set_dense): the free motion's solve,
 * the Delassus estimates of chain, sparse, dense and two-tree rows, a step's constraints, a trajectory,
 * the derivatives when the factor of H is A's (no constraint), the derivatives' Delassus partials by the
 * tree-ordered factor in contact (derivatives_delassus.c), and a tree whose A breaks the pattern. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "afactor.h"
#include "constraints_extra.h"
#include "data_internal.h"
#include "derivatives_internal.h"
#include "forward.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "math_test_util.h"
#include "solver.h"
#include "xml_load_util.h"

enum { LEGS = 26, MAXNV = 128 };

/* A free torso with LEGS legs of three hinges (hip, knee, ankle; damped, the first legs' feet are sites):
 * one tree of 6 + 3 LEGS = 84 dofs, and a free ball above it (a second tree of 6). `extra` goes inside
 * <mujoco> (tendons, actuators); `floor` 0: no floor and no gravity. */
static grit_model *legged(const char *extra, int floor) {
  char *xml = malloc(65536), *p = xml;
  p += sprintf(p, "<mujoco><option timestep='0.002' %s/><default><joint damping='0.05' armature='0.002'/></default>"
                  "<worldbody>%s<body pos='0 0 0.35'><freejoint/><geom type='box' size='0.4 0.4 0.04' mass='6'/>",
               floor ? "" : "gravity='0 0 0'", floor ? "<geom type='plane' size='5 5 0.1'/>" : "");
  for (int k = 0; k < LEGS; ++k) {
    const double a = 2.0 * 3.14159265358979 * k / LEGS, x = 0.35 * cos(a), y = 0.35 * sin(a);
    p += sprintf(p,
                 "<body pos='%.4f %.4f -0.04'><joint name='h%d' type='hinge' axis='%.3f %.3f 0' range='-40 40'/>"
                 "<geom type='capsule' fromto='0 0 0 0 0 -0.12' size='0.015' mass='0.2'/>"
                 "<body pos='0 0 -0.12'><joint name='k%d' type='hinge' axis='%.3f %.3f 0'/>"
                 "<geom type='capsule' fromto='0 0 0 0 0 -0.12' size='0.012' mass='0.15'/>"
                 "<body pos='0 0 -0.12'><joint name='a%d' type='hinge' axis='0 0 1'/>"
                 "<geom type='sphere' size='0.02' pos='0 0 -0.02' mass='0.05'/><site name='f%d' pos='0 0 -0.04'/>"
                 "</body></body></body>",
                 x, y, k, -sin(a), cos(a), k, -sin(a), cos(a), k, k);
  }
  sprintf(p, "</body><body pos='0.05 0 0.7'><freejoint/><geom type='sphere' size='0.06' mass='0.5'/></body>"
             "</worldbody>%s</mujoco>",
          extra);
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(m->ntree, 2);
  cr_assert_eq(m->tree_dofnum[0], 6 + 3 * LEGS);
  return m;
}

/* Tendons: a limited fixed tendon along leg 0, a limited spatial tendon between the feet of legs 1 and
 * 2 (two branches), a spring tendon between legs 3 and 4; a position servo on a fixed tendon along leg 5
 * (an implicit rank-one term in A on one path: the pattern kept); motors on the hips. */
static const char *EXTRA =
    "<tendon><fixed name='t0' limited='true' range='-0.2 0.2'><joint joint='h0' coef='1'/><joint joint='k0' "
    "coef='0.5'/></fixed><spatial name='t12' limited='true' range='0 0.2'><site site='f1'/><site site='f2'/></spatial>"
    "<spatial name='t34' stiffness='50' damping='1'><site site='f3'/><site site='f4'/></spatial>"
    "<fixed name='t5'><joint joint='h5' coef='1'/><joint joint='a5' coef='1'/></fixed></tendon>"
    "<actuator><position tendon='t5' kp='20'/><motor joint='h6'/><motor joint='h7'/></actuator>";

/* sap: SAP's contacts, which read their Delassus estimates (else the default model's) */
static grit_data *make(const grit_model *m, int dense, int sap) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = 1e-12;
  if (sap) s.contact_model = GRIT_CONTACT_SAP;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  grit_afactor_set_dense(d->af, dense);
  return d;
}

static double urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* The same random state (a bent pose, velocities) and controls on both datas. */
static void random_state(const grit_model *m, grit_data *a, grit_data *b, unsigned seed) {
  double q[512], v[MAXNV], u[8];
  memcpy(q, a->qpos, sizeof(double) * (size_t)m->nq);
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_type[j] == GRIT_JOINT_HINGE) q[m->jnt_qposadr[j]] = 0.3 * urand(&seed);
  for (int i = 0; i < m->nv; ++i) v[i] = 0.5 * urand(&seed);
  for (int i = 0; i < m->nu; ++i) u[i] = 0.3 * urand(&seed);
  grit_data *ds[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(grit_data_set_qpos(ds[k], q, m->nq), GRIT_OK);
    cr_assert_eq(grit_data_set_qvel(ds[k], v, m->nv), GRIT_OK);
    if (m->nu) cr_assert_eq(grit_data_set_ctrl(ds[k], u, m->nu), GRIT_OK);
  }
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

/* One row set J (dim rows on tree 0, n apart) nonzero on the dofs from `tip` to the root (tip < 0: every
 * dof), plus, with `tip2` >= 0, on tip2's path too. */
static void rows(const grit_model *m, int dim, int tip, int tip2, unsigned *seed, double *J) {
  const int n = m->tree_dofnum[0];
  memset(J, 0, sizeof(double) * (size_t)dim * (size_t)n);
  for (int r = 0; r < dim; ++r) {
    if (tip < 0)
      for (int j = 0; j < n; ++j) J[r * n + j] = urand(seed);
    else
      for (int j = tip; j >= 0; j = m->dof_parent[j]) J[r * n + j] = urand(seed);
    if (tip2 >= 0)
      for (int j = tip2; j >= 0; j = m->dof_parent[j]) J[r * n + j] += urand(seed);
  }
}

/* The free motion's v* and the Delassus estimates of a contact's three rows on one leg, a limit's one
 * row on a dof, a tendon across two legs (one row on two paths), a row over every dof, and a contact
 * between the two trees, from the tree-ordered factor and from the dense one. Both are backward stable
 * Cholesky factorizations of the same A; the results agree to round-off: measured 2.2e-15 of v*'s
 * largest entry and 8.9e-16 relative (w); asserted 1e-12. */
Test(afactor, solves_and_estimates_match_dense) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *dt = make(m, 0, 1), *dd = make(m, 1, 1);
  random_state(m, dt, dd, 5);
  cr_assert_eq(grit_compute_free_motion(dt), GRIT_OK, "%s", grit_data_last_error(dt));
  cr_assert_eq(grit_compute_free_motion(dd), GRIT_OK, "%s", grit_data_last_error(dd));
  cr_assert(grit_afactor_tree_order(dt->af, 0), "the big tree takes the tree order");
  cr_assert(!grit_afactor_tree_order(dt->af, 1), "the ball keeps the dense factor");
  cr_assert(!grit_afactor_tree_order(dd->af, 0), "the switch: dense");
  double worst = 0.0, vmax = 0.0;
  for (int i = 0; i < m->nv; ++i) worst = fmax(worst, fabs(dt->vstar[i] - dd->vstar[i])), vmax = fmax(vmax, fabs(dd->vstar[i]));
  cr_log_info("v*: largest difference %.3g of %.3g", worst, vmax);
  cr_expect(worst <= 1e-12 * vmax, "v* %.3g of %.3g", worst, vmax);
  const int n = m->tree_dofnum[0], leaf = n - 1;
  double J[3 * MAXNV], J1[3 * 6], tmp[MAXNV], wmax = 0.0;
  unsigned seed = 17;
  const int tips[5][3] = {{3, leaf, -1}, {1, 6 + 3 * 4 + 1, -1}, {1, 6 + 3 * 1 + 2, 6 + 3 * 2 + 2}, {1, -1, -1}, {3, 2, -1}};
  for (int c = 0; c < 5; ++c) {
    const int dim = tips[c][0];
    rows(m, dim, tips[c][1], tips[c][2], &seed, J);
    const int two = c == 4, tree[2] = {0, 1};
    for (int i = 0; i < 3 * 6; ++i) J1[i] = urand(&seed);
    const double *Jp[2] = {J, J1};
    const double wt = grit_afactor_delassus(m, dt->af, dt->Achol, dim, two ? 2 : 1, tree, Jp, tmp);
    const double wd = grit_afactor_delassus(m, dd->af, dd->Achol, dim, two ? 2 : 1, tree, Jp, tmp);
    const double r = rel(wt, wd);
    wmax = fmax(wmax, r);
    cr_expect(r < 1e-12, "row set %d: w %.17g vs %.17g (%.3g)", c, wt, wd, r);
  }
  cr_log_info("Delassus estimates: largest relative difference %.3g", wmax);
  grit_data_free(dt);
  grit_data_free(dd);
  grit_model_free(m);
}

/* One step from the same state: every constraint's Delassus estimate and the step's velocities agree
 * (under SAP, whose contacts read them; the solver stops at rel_tol 1e-12: measured 2.6e-15 (w) and
 * 3e-16 of the largest velocity (v); asserted 1e-10 and 1e-9). */
Test(afactor, a_step_matches_dense) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *dt = make(m, 0, 1), *dd = make(m, 1, 1);
  random_state(m, dt, dd, 9);
  for (int i = 0; i < 150; ++i) /* into contact: the feet and the tendons' limits */
    cr_assert_eq(grit_step(dt), GRIT_OK, "%s", grit_data_last_error(dt));
  cr_assert_eq(grit_data_set_qpos(dd, dt->qpos, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(dd, dt->qvel, m->nv), GRIT_OK);
  cr_assert_eq(grit_step(dt), GRIT_OK, "%s", grit_data_last_error(dt));
  cr_assert_eq(grit_step(dd), GRIT_OK, "%s", grit_data_last_error(dd));
  const int nc = dt->stats.nconstraints;
  cr_assert_eq(nc, dd->stats.nconstraints);
  cr_assert(nc > 3, "constraints: %d", nc);
  const grit_constraint *ct = grit_solver_constraints(dt->solver, NULL), *cd = grit_solver_constraints(dd->solver, NULL);
  double ww = 0.0, wv = 0.0, vmax = 0.0;
  int nw = 0;
  for (int i = 0; i < nc; ++i) {
    cr_assert_eq(ct[i].kind, cd[i].kind);
    if (cd[i].w != 0.0) ww = fmax(ww, rel(ct[i].w, cd[i].w)), ++nw;
  }
  cr_assert(nw > 3, "estimates: %d", nw);
  for (int i = 0; i < m->nv; ++i) wv = fmax(wv, fabs(dt->qvel[i] - dd->qvel[i])), vmax = fmax(vmax, fabs(dd->qvel[i]));
  cr_log_info("%d constraints (%d estimates): w within %.3g, v within %.3g of %.3g", nc, nw, ww, wv, vmax);
  cr_expect(ww < 1e-10, "w %.3g", ww);
  cr_expect(wv < 1e-9 * vmax, "v %.3g of %.3g", wv, vmax);
  grit_data_free(dt);
  grit_data_free(dd);
  grit_model_free(m);
}

/* Steps with the legs' motors on, on either factor of A: the same trajectory up to the solver's
 * tolerance (rel_tol 1e-12; the factors differ at round-off and contact makes the map from one step's
 * error to the next expansive for a few steps): measured largest coordinate difference 4.4e-16 over 300
 * steps (0.6 s: the torso lands on its feet, the ball on the torso), asserted 1e-8 (test_treechol's
 * trajectory bound). */
Test(afactor, trajectory_matches_dense) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *dt = make(m, 0, 1), *dd = make(m, 1, 1);
  grit_data *ds[2] = {dt, dd};
  for (int i = 0; i < 300; ++i) {
    const double u[3] = {0.1, 0.4 * sin(0.01 * i), -0.3 * cos(0.013 * i)};
    for (int k = 0; k < 2; ++k) {
      cr_assert_eq(grit_data_set_ctrl(ds[k], u, 3), GRIT_OK);
      cr_assert_eq(grit_step(ds[k]), GRIT_OK, "%s", grit_data_last_error(ds[k]));
    }
  }
  cr_assert(grit_afactor_tree_order(dt->af, 0));
  cr_assert(dt->stats.nconstraints > 3, "in contact: %d constraints", dt->stats.nconstraints);
  double worst = 0.0;
  for (int i = 0; i < m->nq; ++i) worst = fmax(worst, fabs(dt->qpos[i] - dd->qpos[i]));
  cr_log_info("largest coordinate difference %.3g", worst);
  cr_expect(worst < 1e-8, "%.3g", worst);
  grit_data_free(dt);
  grit_data_free(dd);
  grit_model_free(m);
}

/* Without constraints (no floor, no gravity, the limits far) the kept factor of H is A's: the
 * derivatives' many-column solves take the tree order (grit_solver_factor_solve). A and B of the dense
 * form against the dense factor's: measured 2.0e-15 of a column's largest entry, asserted 1e-10. */
Test(afactor, derivatives_without_constraints_match_dense) {
  grit_model *m = legged("<actuator><motor joint='h1'/><motor joint='k2'/></actuator>", 0);
  grit_data *dt = make(m, 0, 0), *dd = make(m, 1, 0);
  random_state(m, dt, dd, 3);
  cr_assert_eq(grit_step(dt), GRIT_OK, "%s", grit_data_last_error(dt));
  cr_assert_eq(grit_step(dd), GRIT_OK, "%s", grit_data_last_error(dd));
  cr_assert_eq(dt->stats.nconstraints, 0);
  cr_assert(grit_afactor_tree_order(dt->af, 0));
  const int nx = 2 * m->nv, nu = m->nu;
  double *At = malloc(sizeof(double) * nx * nx), *Ad = malloc(sizeof(double) * nx * nx);
  double *Bt = malloc(sizeof(double) * nx * nu), *Bd = malloc(sizeof(double) * nx * nu);
  cr_assert_eq(grit_step_derivatives(dt, At, Bt, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(dt));
  cr_assert_eq(grit_step_derivatives(dd, Ad, Bd, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(dd));
  double worst = 0.0;
  for (int c = 0; c < nx + nu; ++c) { /* columns: of A (row-major nx x nx), then of B (nx x nu) */
    const double *X = c < nx ? At : Bt, *Y = c < nx ? Ad : Bd;
    const int ld = c < nx ? nx : nu, j = c < nx ? c : c - nx;
    double d = 0.0, s = 0.0;
    for (int i = 0; i < nx; ++i) d = fmax(d, fabs(X[i * ld + j] - Y[i * ld + j])), s = fmax(s, fabs(Y[i * ld + j]));
    if (s > 0.0) worst = fmax(worst, d / s);
  }
  cr_log_info("A, B: largest difference %.3g of a column's largest entry", worst);
  cr_expect(worst < 1e-10, "%.3g", worst);
  free(At), free(Ad), free(Bt), free(Bd);
  grit_data_free(dt);
  grit_data_free(dd);
  grit_model_free(m);
}

/* The legged model's data (SAP, the block factor) driven 150 steps by smooth controls, into contact. */
static grit_data *walked_into_contact(const grit_model *m) {
  grit_data *d = make(m, 0, 1);
  for (int i = 0; i < 150; ++i) {
    const double u[3] = {0.1, 0.4 * sin(0.01 * i), -0.3 * cos(0.013 * i)};
    cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  cr_assert(d->stats.nconstraints > 3, "in contact: %d constraints", d->stats.nconstraints);
  return d;
}

/* In contact under SAP (the estimates' partials enter A), a tree of more than 64 dofs solves the
 * estimates' z = A^-1 J^T with its tree-ordered factor in the derivative call (the default), against
 * A's dense factor (no_tree_solve_big): the same z to round-off (both backward-stable solves of one A),
 * so A, B to round-off times the solve's conditioning; measured 3.2e-14 of a column's largest entry
 * (dense form), asserted 1e-9 (test_derivatives_articulated's bound between two factor paths). */
Test(afactor, derivatives_tree_solve_in_contact_match_dense) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *d = walked_into_contact(m);
  const int nx = 2 * m->nv, nu = m->nu;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = malloc(sizeof(double) * nx * nx), B[k] = malloc(sizeof(double) * nx * nu);
    cr_assert_eq(grit_step_derivatives(d, A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    if (k == 0) {
      cr_assert(d->deriv->dt_ok[0], "the big tree's z by its tree-ordered factor");
      d->deriv->no_tree_solve_big = 1;
    }
  }
  cr_assert(!d->deriv->dt_ok[0], "the switch: A's dense factor");
  double worst = 0.0;
  for (int c = 0; c < nx + nu; ++c) { /* columns: of A (row-major nx x nx), then of B (nx x nu) */
    const double *X = c < nx ? A[0] : B[0], *Y = c < nx ? A[1] : B[1];
    const int ld = c < nx ? nx : nu, j = c < nx ? c : c - nx;
    double dm = 0.0, s = 0.0;
    for (int i = 0; i < nx; ++i) dm = fmax(dm, fabs(X[i * ld + j] - Y[i * ld + j])), s = fmax(s, fabs(Y[i * ld + j]));
    if (s > 0.0) worst = fmax(worst, dm / s);
  }
  cr_log_info("A, B: largest difference %.3g of a column's largest entry", worst);
  cr_expect(worst < 1e-9, "%.3g", worst);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* MuJoCo's composite softbox (tests/models/mujoco_composite; one tree of 224 dofs, 651 fixed-tendon
 * equalities, SAP): the equalities' constant rows are solved four at a time, z by the tree-ordered factor
 * and the gradient of z^T M z in lanes (derivatives_delassus.c, tree_lanes), against A's dense factor
 * (no_tree_solve_big): measured 1.8e-15 of a column's largest entry (dense form), asserted 1e-9 as above. */
Test(afactor, derivatives_tree_solve_softbox_match_dense) {
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.lenient = 1;
  cr_assert_eq(grit_mjcf_load_file_with(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/softbox.xml", &lo,
                                        &m, NULL, msg),
               GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  for (int i = 0; i < 40; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  const int nx = 2 * m->nv, nu = m->nu;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    A[k] = malloc(sizeof(double) * nx * nx), B[k] = malloc(sizeof(double) * nx * (nu ? nu : 1));
    cr_assert_eq(grit_step_derivatives(d, A[k], nu ? B[k] : NULL, NULL, 0, NULL), GRIT_OK, "%s",
                 grit_data_last_error(d));
    int any = 0;
    for (int t = 0; t < m->ntree; ++t) any |= m->tree_dofnum[t] > 64 && d->deriv->dt_ok[t];
    cr_assert_eq(any, k == 0, "the big tree's z by its tree-ordered factor: %d", any);
    d->deriv->no_tree_solve_big = 1;
  }
  const double ea = col_rel_diff(A[0], A[1], nx, nx), eb = nu ? col_rel_diff(B[0], B[1], nx, nu) : 0.0;
  cr_log_info("softbox: A %.3g, B %.3g of a column's largest entry", ea, eb);
  cr_expect(ea < 1e-9 && eb < 1e-9, "A %.3g, B %.3g", ea, eb);
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* The derivative call's tree-ordered factor of the step's A (the estimates' solves under SAP) is the step's
 * own, copied (afactor.c, grit_afactor_copy_tree) while d->A still holds that A (achol_fresh), and the free
 * ball's dense factor is the step's Achol too (the big tree's tree order no longer keeps it from being
 * taken): A, B the same bits as factoring both again (ws->no_achol_reuse), dense and blocks; nothing
 * copied with achol_fresh cleared, nor after the free motion at the new state rewrote A (factored again). */
Test(afactor, derivatives_take_the_steps_tree_factor_same_bits) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *d = walked_into_contact(m);
  cr_assert(grit_afactor_tree_order(d->af, 0) && !grit_afactor_tree_order(d->af, 1) && d->achol_fresh);
  const int nx = 2 * m->nv, nu = m->nu;
  const size_t na = (size_t)nx * nx, nb = (size_t)nx * nu;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = malloc(sizeof(double) * na), B[k] = malloc(sizeof(double) * nb);
  unsigned long kept = d->deriv->tree_factors_kept;
  cr_assert_eq(grit_step_derivatives(d, A[0], B[0], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->dt_ok[0] && d->deriv->tree_factors_kept == kept + 1, "the step's factor taken");
  d->deriv->no_achol_reuse = 1;
  cr_assert_eq(grit_step_derivatives(d, A[1], B[1], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  d->deriv->no_achol_reuse = 0;
  cr_assert(d->deriv->dt_ok[0] && d->deriv->tree_factors_kept == kept + 1, "factored again");
  cr_assert(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb));
  d->achol_fresh = 0; /* the flag guards the copy */
  cr_assert_eq(grit_step_derivatives(d, A[2], B[2], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->tree_factors_kept == kept + 1);
  cr_assert(!memcmp(A[0], A[2], sizeof(double) * na) && !memcmp(B[0], B[2], sizeof(double) * nb));
  d->achol_fresh = 1;
  double vstar[MAXNV]; /* the free motion at the new state: A and its factors rewritten, the copy refused */
  cr_assert_eq(grit_free_motion_velocity(d, vstar), GRIT_OK);
  cr_assert(d->achol_fresh);
  cr_assert_eq(grit_step_derivatives(d, A[3], B[3], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(d->deriv->tree_factors_kept == kept + 1);
  cr_assert(!memcmp(A[0], A[3], sizeof(double) * na) && !memcmp(B[0], B[3], sizeof(double) * nb));
  grit_jacobian_blocks *J = NULL; /* the block form after the next step, with and without */
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  for (int k = 0; k < 2; ++k) {
    d->deriv->no_achol_reuse = k;
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_jacobian_blocks_to_dense(J, A[k], B[k]), GRIT_OK);
  }
  d->deriv->no_achol_reuse = 0;
  cr_assert(d->deriv->tree_factors_kept == kept + 2);
  cr_assert(!memcmp(A[0], A[1], sizeof(double) * na) && !memcmp(B[0], B[1], sizeof(double) * nb));
  grit_jacobian_blocks_free(J);
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_data_free(d);
  grit_model_free(m);
}

/* A position servo on a fixed tendon across two legs adds a rank-one term joining two branches to A:
 * that tree keeps the dense factor, and steps. */
Test(afactor, a_broken_pattern_keeps_the_dense_factor) {
  grit_model *m = legged("<tendon><fixed name='x'><joint joint='k1' coef='1'/><joint joint='k2' coef='-1'/></fixed>"
                         "</tendon><actuator><position tendon='x' kp='30'/></actuator>",
                         1);
  grit_data *d = make(m, 0, 0);
  for (int i = 0; i < 5; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_expect(!grit_afactor_tree_order(d->af, 0));
  grit_data_free(d);
  grit_model_free(m);
}

/* The softbox's Delassus estimates walk up from the equalities' and tendons' structural columns
 * (grit_afactor_delassus_cols) instead of scanning J whole: after 40 steps, every constraint's estimate
 * both ways, bit for bit, and 40 more steps each way, the same states. */
static grit_data *softbox(grit_model **m) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.lenient = 1;
  grit_mjcf_info info;
  cr_assert_eq(grit_mjcf_load_file_with(GRIT_SOURCE_DIR "/tests/models/mujoco_composite/composite/softbox.xml", &lo,
                                        m, &info, msg),
               GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
  return d;
}

Test(afactor, delassus_from_structural_columns_same_bits) {
  grit_model *m;
  grit_data *d[2] = {softbox(&m), NULL};
  grit_model *m2;
  d[1] = softbox(&m2);
  grit_afactor_set_delassus_cols(d[1]->af, 0);
  for (int i = 0; i < 40; ++i)
    for (int k = 0; k < 2; ++k) cr_assert_eq(grit_step(d[k]), GRIT_OK, "%s", grit_data_last_error(d[k]));
  int with_cols = 0;
  grit_step_stats st;
  cr_assert_eq(grit_data_step_stats(d[0], &st), GRIT_OK);
  const int nc = st.nconstraints;
  const grit_constraint *c = grit_solver_constraints(d[0]->solver, NULL);
  const double *jstore = grit_solver_jstore(d[0]->solver, NULL);
  double *tmp = malloc(sizeof(double) * (size_t)m->nv);
  for (int i = 0; i < nc; ++i) {
    const double *J[2] = {jstore + c[i].joff[0], jstore + (c[i].ntree == 2 ? c[i].joff[1] : 0)};
    int ncols = 0;
    const int *cols = grit_cx_cols(m, d[0]->cx_colptr, d[0]->cx_cols, c[i].kind, c[i].source, &ncols);
    if (!cols) continue;
    ++with_cols;
    const double w0 = grit_afactor_delassus(m, d[0]->af, d[0]->Achol, c[i].dim, c[i].ntree, c[i].tree, J, tmp);
    const double w1 =
        grit_afactor_delassus_cols(m, d[0]->af, d[0]->Achol, c[i].dim, c[i].ntree, c[i].tree, J, cols, ncols, tmp);
    cr_assert(memcmp(&w0, &w1, sizeof w0) == 0 && w0 > 0.0, "constraint %d: %.17g vs %.17g", i, w0, w1);
  }
  cr_expect(with_cols >= 651, "%d constraints with structural columns", with_cols);
  for (int i = 0; i < 40; ++i)
    for (int k = 0; k < 2; ++k) cr_assert_eq(grit_step(d[k]), GRIT_OK, "%s", grit_data_last_error(d[k]));
  cr_expect(memcmp(d[0]->qpos, d[1]->qpos, sizeof(double) * (size_t)m->nq) == 0 &&
            memcmp(d[0]->qvel, d[1]->qvel, sizeof(double) * (size_t)m->nv) == 0);
  free(tmp);
  for (int k = 0; k < 2; ++k) grit_data_free(d[k]);
  grit_model_free(m), grit_model_free(m2);
}

/* grit_afactor_solve_many moves a batch's columns into rows and solves a tree-ordered tree's columns
 * together (grit_treechol_solve_rows): the numbers of the column-by-column solves (grit_afactor_solve,
 * grit_afactor_solve_tree) up to the signs of zeros, so compared with == (which takes -0 == 0). The
 * batch mixes columns of every tree (part -1) and of one tree (part 0 or 1, zero elsewhere), more than
 * one chunk of 64. */
/* grit_afactor_solve_many on NRHS columns (part[k] = k % 3 - 1: every tree, tree 0 or tree 1) against
 * grit_afactor_solve / grit_afactor_solve_tree column by column: the number of differing entries (==, which
 * takes -0 == 0), or with bits != 0 whether any byte differs. zeros: some entries -0 (the signs' test). */
enum { NRHS = 157 }; /* tree 0: 105 columns, a chunk of 64 and one of 41 (a tail after the fours) */
static int many_vs_columns(const grit_model *m, grit_data *d, unsigned seed, int zeros, int bits) {
  const int nv = m->nv;
  double *X = malloc(sizeof(double) * NRHS * (size_t)nv), *Y = malloc(sizeof(double) * NRHS * (size_t)nv);
  int part[NRHS];
  for (int k = 0; k < NRHS; ++k) {
    part[k] = k % 3 - 1;
    for (int i = 0; i < nv; ++i) {
      const int t = i < m->tree_dofnum[0] ? 0 : 1;
      X[(size_t)k * nv + i] = part[k] < 0 || part[k] == t ? (zeros && k % 7 == 3 && i % 5 == 0 ? -0.0 : urand(&seed)) : 0.0;
    }
  }
  memcpy(Y, X, sizeof(double) * NRHS * (size_t)nv);
  grit_afactor_solve_many(m, d->af, d->Achol, X, NRHS, part);
  for (int k = 0; k < NRHS; ++k) {
    if (part[k] < 0) grit_afactor_solve(m, d->af, d->Achol, Y + (size_t)k * nv);
    else grit_afactor_solve_tree(m, d->af, d->Achol, part[k], Y + (size_t)k * nv);
  }
  int differ = 0;
  if (bits) differ = memcmp(X, Y, sizeof(double) * NRHS * (size_t)nv) != 0;
  else
    for (size_t i = 0; i < (size_t)NRHS * (size_t)nv; ++i) differ += X[i] != Y[i];
  free(X), free(Y);
  return differ;
}

Test(afactor, many_columns_same_numbers) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *d = make(m, 0, 0);
  random_state(m, d, d, 9);
  cr_assert_eq(grit_compute_free_motion(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(grit_afactor_tree_order(d->af, 0));
  const int differ = many_vs_columns(m, d, 23, 0, 0);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  grit_data_free(d);
  grit_model_free(m);
}

/* A, B of the derivative call without constraints from a random state, with solve_many's columns many at
 * a time (d[0]) and one by one (grit_afactor_set_many(af, 0), d[1]), on the dense factor or not: the
 * number of differing entries (==), or with bits whether any byte differs. */
static int derivatives_many_vs_columns(const grit_model *m, int dense, unsigned seed, int bits) {
  grit_data *d[2] = {make(m, dense, 0), make(m, dense, 0)};
  random_state(m, d[0], d[1], seed);
  grit_afactor_set_many(d[1]->af, 0);
  const int nx = 2 * m->nv, nu = m->nu;
  double *A[2], *B[2];
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(grit_step(d[k]), GRIT_OK, "%s", grit_data_last_error(d[k]));
    cr_assert_eq(d[k]->stats.nconstraints, 0);
    A[k] = malloc(sizeof(double) * nx * nx), B[k] = malloc(sizeof(double) * nx * nu);
    cr_assert_eq(grit_step_derivatives(d[k], A[k], B[k], NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d[k]));
  }
  int differ = 0;
  if (bits) differ = memcmp(A[0], A[1], sizeof(double) * nx * nx) || memcmp(B[0], B[1], sizeof(double) * nx * nu);
  else {
    for (int i = 0; i < nx * nx; ++i) differ += A[0][i] != A[1][i];
    for (int i = 0; i < nx * nu; ++i) differ += B[0][i] != B[1][i];
  }
  for (int k = 0; k < 2; ++k) free(A[k]), free(B[k]), grit_data_free(d[k]);
  return differ;
}

/* The derivative call without constraints solves with A's factor: its columns many at a time (the
 * default) and one by one give the same A, B, dense and in blocks. */
Test(afactor, derivatives_many_columns_same_numbers) {
  grit_model *m = legged("<actuator><motor joint='h1'/><motor joint='k2'/></actuator>", 0);
  const int differ = derivatives_many_vs_columns(m, 0, 4, 0);
  cr_expect_eq(differ, 0, "%d entries differ", differ);
  grit_model_free(m);
}

/* A dense tree of 8 dofs or more (here the legged tree's dense factor, grit_afactor_set_dense) solves
 * grit_afactor_solve_many's columns as rows too, four columns a vector (dense_rows_avx2): each entry
 * takes the column solve's operations in its order, so the bits are the same, zeros' signs included
 * (memcmp). The 6-dof ball stays column by column. Columns of every tree and of one, over two chunks. */
Test(afactor, dense_tree_many_columns_same_bits) {
  grit_model *m = legged(EXTRA, 1);
  grit_data *d = make(m, 1, 0);
  random_state(m, d, d, 13);
  cr_assert_eq(grit_compute_free_motion(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(!grit_afactor_tree_order(d->af, 0));
  cr_expect(!many_vs_columns(m, d, 29, 1, 1), "the rows' solves differ from the columns'");
  grit_data_free(d);
  grit_model_free(m);
}

/* The derivative call on dense trees (a floating 84-dof legged body and a ball): A, B with the dense
 * trees' columns as rows (the default) and column by column, bit for bit. */
Test(afactor, derivatives_dense_trees_many_columns_same_bits) {
  grit_model *m = legged("<actuator><motor joint='h1'/><motor joint='k2'/></actuator>", 0);
  cr_expect(!derivatives_many_vs_columns(m, 1, 5, 1), "A, B differ");
  grit_model_free(m);
}

/* grit_afactor_solve_many's columns over nrhs (1..150: one chunk's passes of eight, four, two and one
 * vectors, several chunks per tree) with its fast paths on (the default), with the dense trees' passes of
 * four and two vectors and the one-pass column lists off (as before), and column by column: the same bits
 * (memcmp). Columns of every tree (part -1) and of one tree, mixed. */
static void solve_many_paths_same_bits(const grit_model *m, grit_data *d, unsigned seed) {
  static const int counts[] = {1, 3, 5, 9, 13, 21, 37, 51, 64, 65, 75, 150};
  const int nv = m->nv, maxn = 150;
  double *X[3];
  int part[150];
  for (int c = 0; c < 3; ++c) X[c] = malloc(sizeof(double) * maxn * (size_t)nv);
  for (size_t n = 0; n < sizeof counts / sizeof counts[0]; ++n) {
    const int nrhs = counts[n];
    for (int k = 0; k < nrhs; ++k) {
      part[k] = (int)(urand(&seed) * 3.0) - 1;
      for (int i = 0; i < nv; ++i) {
        const int t = i < m->tree_dofnum[0] ? 0 : 1;
        X[0][(size_t)k * nv + i] = part[k] < 0 || part[k] == t ? urand(&seed) - 0.5 : 0.0;
      }
    }
    memcpy(X[1], X[0], sizeof(double) * nrhs * (size_t)nv);
    memcpy(X[2], X[0], sizeof(double) * nrhs * (size_t)nv);
    grit_afactor_solve_many(m, d->af, d->Achol, X[0], nrhs, part);
    grit_afactor_set_mid_passes(d->af, 0), grit_afactor_set_column_lists(d->af, 0);
    grit_afactor_solve_many(m, d->af, d->Achol, X[1], nrhs, part);
    grit_afactor_set_mid_passes(d->af, 1), grit_afactor_set_column_lists(d->af, 1);
    for (int k = 0; k < nrhs; ++k) {
      if (part[k] < 0) grit_afactor_solve(m, d->af, d->Achol, X[2] + (size_t)k * nv);
      else grit_afactor_solve_tree(m, d->af, d->Achol, part[k], X[2] + (size_t)k * nv);
    }
    cr_expect(!memcmp(X[0], X[1], sizeof(double) * nrhs * (size_t)nv), "%d columns: fast paths vs old paths", nrhs);
    cr_expect(!memcmp(X[0], X[2], sizeof(double) * nrhs * (size_t)nv), "%d columns: rows vs column by column", nrhs);
  }
  for (int c = 0; c < 3; ++c) free(X[c]);
}

Test(afactor, solve_many_mid_passes_and_lists_same_bits) {
  grit_model *m = legged(EXTRA, 1);
  for (int dense = 0; dense < 2; ++dense) {
    grit_data *d = make(m, dense, 0);
    random_state(m, d, d, 31 + (unsigned)dense);
    cr_assert_eq(grit_compute_free_motion(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_afactor_tree_order(d->af, 0), !dense);
    solve_many_paths_same_bits(m, d, 41 + (unsigned)dense);
    grit_data_free(d);
  }
  grit_model_free(m);
}

/* A chain of n hinges (tree 0; n < 8) and a free ball (tree 1), without gravity; two motors on the chain. */
static grit_model *small_trees(int n) {
  char xml[8192], *p = xml;
  p += sprintf(p, "<mujoco><option timestep='0.002' gravity='0 0 0'/><default><joint damping='0.05'/></default>"
                  "<worldbody>");
  for (int k = 0; k < n; ++k)
    p += sprintf(p, "<body pos='0 0 %s'><joint name='j%d' type='hinge' axis='%d %d 1'/>"
                    "<geom type='capsule' fromto='0 0 0 0.1 0 -0.1' size='0.02' mass='0.%d'/>",
                 k ? "-0.1" : "1", k, k % 2, k % 3 == 1, 3 + k);
  for (int k = 0; k < n; ++k) p += sprintf(p, "</body>");
  sprintf(p, "<body pos='0.5 0 0.7'><freejoint/><geom type='box' size='0.06 0.03 0.02' mass='0.5'/></body>"
             "</worldbody><actuator><motor joint='j0'/><motor joint='j%d'/></actuator></mujoco>", n - 1);
  grit_model *m = xml_load_or_fail(xml);
  cr_assert_eq(m->ntree, 2);
  cr_assert_eq(m->tree_dofnum[0], n);
  return m;
}

/* A few small dense trees (afactor.c's small_many: at most 8 trees of fewer than 8 dofs) solve
 * grit_afactor_solve_many's columns four at a time in registers, each entry by the column solve's
 * operations in its order: the same bits as column by column (grit_afactor_solve, _solve_tree) and as
 * the path switched off (grit_afactor_set_small(af, 0)), zeros' signs included (memcmp; some inputs -0).
 * Chains of 1 to 7 dofs and a free ball; 1 to 30 columns (the last group of fewer than four); columns of
 * every tree and of one, mixed. Then the derivative call's A, B with the path and without (set_many). */
Test(afactor, small_trees_many_columns_same_bits) {
  static const int counts[] = {1, 2, 3, 4, 5, 7, 9, 14, 30};
  for (int n = 1; n <= 7; ++n) {
    grit_model *m = small_trees(n);
    grit_data *d = make(m, 0, 0);
    random_state(m, d, d, 50 + (unsigned)n);
    cr_assert_eq(grit_compute_free_motion(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert(grit_afactor_small(d->af), "%d dofs: the small trees' path is not taken", n);
    const int nv = m->nv;
    unsigned seed = 7u + (unsigned)n;
    double *X[3];
    int part[30];
    for (int c = 0; c < 3; ++c) X[c] = malloc(sizeof(double) * 30 * (size_t)nv);
    for (size_t q = 0; q < sizeof counts / sizeof counts[0]; ++q) {
      const int nrhs = counts[q];
      for (int k = 0; k < nrhs; ++k) {
        part[k] = (int)(urand(&seed) * 1.5 + 1.5) - 1; /* -1, 0 or 1 */
        part[k] = part[k] < -1 ? -1 : part[k] > 1 ? 1 : part[k];
        for (int i = 0; i < nv; ++i) {
          const int t = i < n ? 0 : 1;
          X[0][(size_t)k * nv + i] =
              part[k] < 0 || part[k] == t ? (k % 5 == 2 && i % 3 == 0 ? -0.0 : urand(&seed) - 0.5) : 0.0;
        }
      }
      memcpy(X[1], X[0], sizeof(double) * nrhs * (size_t)nv);
      memcpy(X[2], X[0], sizeof(double) * nrhs * (size_t)nv);
      grit_afactor_solve_many(m, d->af, d->Achol, X[0], nrhs, part);
      grit_afactor_set_small(d->af, 0);
      cr_assert(!grit_afactor_small(d->af));
      grit_afactor_solve_many(m, d->af, d->Achol, X[1], nrhs, part);
      grit_afactor_set_small(d->af, 1);
      for (int k = 0; k < nrhs; ++k) {
        if (part[k] < 0) grit_afactor_solve(m, d->af, d->Achol, X[2] + (size_t)k * nv);
        else grit_afactor_solve_tree(m, d->af, d->Achol, part[k], X[2] + (size_t)k * nv);
      }
      cr_expect(!memcmp(X[0], X[1], sizeof(double) * nrhs * (size_t)nv), "%d dofs, %d columns: path on vs off", n,
                nrhs);
      cr_expect(!memcmp(X[0], X[2], sizeof(double) * nrhs * (size_t)nv), "%d dofs, %d columns: vs column by column",
                n, nrhs);
    }
    for (int c = 0; c < 3; ++c) free(X[c]);
    grit_data_free(d);
    cr_expect(!derivatives_many_vs_columns(m, 0, 60 + (unsigned)n, 1), "%d dofs: A, B differ", n);
    grit_model_free(m);
  }
}
