/* SPDX-License-Identifier: Apache-2.0 */
/* test_noalloc.c — nothing in the time-step path allocates: this executable interposes malloc, calloc,
 * realloc, free and the aligned allocators (forwarding to glibc's __libc_* entry points) and counts the
 * calls made while grit_step, grit_mass_matrix, grit_bias_forces, grit_free_motion_velocity (and the
 * other per-step queries) run on mid-size models after creation. The count must be 0; the counter is
 * first shown to see an allocation made by the test itself.
 *
 * Counting is global (any thread): an allocation by a helper thread of a dependency during the window
 * counts too. Under AddressSanitizer (which owns malloc) the interposition is compiled out and the test
 * is skipped. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "actuation_scene.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOALLOC_ACTIVE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOALLOC_ACTIVE 0
#endif
#endif
#ifndef NOALLOC_ACTIVE
#define NOALLOC_ACTIVE 1
#endif

static atomic_int counting;
static atomic_long allocations, frees;

#if NOALLOC_ACTIVE
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t size);

static inline void note_alloc(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&allocations, 1);
}

void *malloc(size_t size) {
  note_alloc();
  return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
  note_alloc();
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t size) {
  note_alloc();
  return __libc_realloc(p, size);
}
void free(void *p) {
  if (p && atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&frees, 1);
  __libc_free(p);
}
void *aligned_alloc(size_t alignment, size_t size) {
  note_alloc();
  return __libc_memalign(alignment, size);
}
void *memalign(size_t alignment, size_t size);
void *memalign(size_t alignment, size_t size) {
  note_alloc();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size);
int posix_memalign(void **out, size_t alignment, size_t size) {
  note_alloc();
  void *p = __libc_memalign(alignment, size);
  if (!p) return 12; /* ENOMEM */
  *out = p;
  return 0;
}
#endif

static void window_open(void) {
  atomic_store(&allocations, 0);
  atomic_store(&frees, 0);
  atomic_store(&counting, 1);
}

static long window_close(void) {
  atomic_store(&counting, 0);
  return atomic_load(&allocations) + atomic_load(&frees);
}

Test(noalloc, the_counter_sees_allocations) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  window_open();
  void *volatile p = malloc(64); /* volatile: the compiler may not elide the pair */
  void *volatile q = calloc(4, 16);
  p = realloc(p, 128);
  free(p);
  free(q);
  const long a = atomic_load(&allocations), f = atomic_load(&frees);
  window_close();
  cr_assert_eq(a, 3, "counted %ld allocations, expected 3", a);
  cr_assert_eq(f, 2, "counted %ld frees, expected 2", f);
  /* and allocations made inside the library (statically linked) and its dependencies: creating data
   * allocates (workspaces, the solver with its CHOLMOD/LAPACK Hessian) */
  tu_rng rng = {3};
  tu_tree_opts o = tu_default_tree_opts();
  grit_model *m = tu_random_tree(&rng, 5, TU_ALL, &o);
  window_open();
  grit_data *d = NULL;
  grit_status st = grit_data_create(m, &d);
  const long n = window_close();
  cr_assert_eq(st, GRIT_OK);
  cr_assert(n > 0, "grit_data_create's allocations were not seen");
  grit_data_free(d);
  grit_model_free(m);
}

/* Runs every per-step function a number of times inside the counting window. */
static void check_model(grit_model *m, const char *what) {
  grit_data *d = tu_data(m);
  const int nv = grit_model_nv(m);
  double *M = calloc((size_t)(nv * nv), sizeof *M), *c = calloc((size_t)nv, sizeof *c),
         *vs = calloc((size_t)nv, sizeof *vs), *jp = calloc((size_t)(3 * nv), sizeof *jp),
         *jr = calloc((size_t)(3 * nv), sizeof *jr);
  tu_rng rng = {77};
  tu_set_random_state(&rng, d, 1.0);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* a first step outside the window */
  window_open();
  int bad = 0;
  for (int k = 0; k < 50; ++k) {
    bad |= grit_step(d) != GRIT_OK;
    bad |= grit_mass_matrix(d, M) != GRIT_OK;
    bad |= grit_bias_forces(d, c) != GRIT_OK;
    bad |= grit_free_motion_velocity(d, vs) != GRIT_OK;
    bad |= grit_forward_kinematics(d) != GRIT_OK;
    double T, V, p[3] = {0.1, 0.2, 0.3};
    bad |= grit_energy(d, &T, &V) != GRIT_OK;
    bad |= grit_point_jacobian(d, grit_model_nbody(m) - 1, p, jp, jr) != GRIT_OK;
  }
  const long n = window_close();
  cr_assert(!bad, "%s: a call failed: %s", what, grit_data_last_error(d));
  cr_assert_eq(n, 0, "%s: %ld allocation calls during the time step path", what, n);
  grit_step_stats st;
  grit_data_step_stats(d, &st);
  cr_log_info("%s (nv = %d): 0 allocations in 50 steps; last step had %d constraints, %d Newton iterations", what, nv,
              st.nconstraints, st.newton_iters);
  free(M), free(c), free(vs), free(jp), free(jr);
  grit_data_free(d);
}

/* What check_steps_and_derivatives calls after each step: the derivatives into A, B (either may be NULL)
 * with `nparam` parameters into P, then `extra` (grit_linearize, patch queries; NULL for none), which
 * returns nonzero on failure. */
typedef struct {
  double *A, *B, *P;
  const grit_param *prm;
  int nparam;
  int (*extra)(grit_data *d, void *ctx);
  void *ctx;
} window_calls;

/* 20 steps, each followed by its derivatives and `extra`, inside the counting window: asserts that every
 * call succeeded and none allocated; returns the contacts summed over the 20 steps. */
static int check_steps_and_derivatives(grit_data *d, const window_calls *c, const char *what) {
  window_open();
  int bad = 0, contacts = 0;
  for (int k = 0; k < 20; ++k) {
    bad |= grit_step(d) != GRIT_OK;
    bad |= grit_step_derivatives(d, c->A, c->B, c->prm, c->nparam, c->P) != GRIT_OK;
    if (c->extra) bad |= c->extra(d, c->ctx) != 0;
    contacts += grit_data_ncontacts(d);
  }
  const long n = window_close();
  cr_assert(!bad, "%s: a call failed: %s", what, grit_data_last_error(d));
  cr_assert_eq(n, 0, "%s: %ld allocation calls in the step and its derivatives", what, n);
  return contacts;
}

/* grit_linearize at a fixed point, as an `extra`. */
typedef struct {
  const double *x, *u;
  double *A, *B;
} linearize_at;
static int call_linearize(grit_data *d, void *ctx) {
  const linearize_at *l = ctx;
  return grit_linearize(d, l->x, l->u, l->A, l->B) != GRIT_OK;
}

/* A mid-size random forest: ~20 bodies of every joint kind (free, ball, slide, multi-hinge, welded). */
Test(noalloc, smooth_step_of_a_mid_size_model) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  tu_rng rng = {5};
  tu_tree_opts o = tu_default_tree_opts();
  o.springs = 1;
  grit_model *m = tu_random_tree(&rng, 20, TU_ALL, &o);
  check_model(m, "20-body random forest");
  grit_model_free(m);
}

/* A chain whose hinges are limited and start beyond their limits, so every step goes through the
 * constraint solver (Newton iterations, Hessian factorization). */
Test(noalloc, constrained_step_with_active_joint_limits) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_builder *b;
  grit_builder_create(&b);
  for (int k = 1; k <= 12; ++k) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = k - 1;
    bd.pos[2] = -0.3;
    bd.com[0] = 0.1;
    grit_builder_add_body(b, &bd, NULL);
    grit_joint_def jd = grit_default_joint_def();
    jd.axis[0] = k % 2, jd.axis[1] = 1 - k % 2, jd.axis[2] = 0;
    jd.limited = 1;
    jd.range[0] = -0.1;
    jd.range[1] = 0.1;
    grit_builder_add_joint(b, k, &jd, NULL);
  }
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  check_model(m, "12-link chain with joint limits");
  grit_model_free(m);
}

/* Actuators of every kind (servos implicit in the step, activations in the state), through the step,
 * its derivatives and grit_linearize. */
Test(noalloc, actuated_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_model *m = as_build(2e-3);
  cr_assert(m);
  check_model(m, "actuated 4-link chain");
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m);
  double x[10], u[AS_NU], *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * AS_NU), sizeof *B);
  as_state(x, x + 4, x + 8, u);
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  linearize_at l = {x, u, A, B};
  check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B, .extra = call_linearize, .ctx = &l}, "actuated chain");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* grit_step_derivatives_blocks into a container made (and grown by one call) before, as an `extra`. */
static int call_blocks(grit_data *d, void *ctx) {
  return grit_step_derivatives_blocks(d, ctx) != GRIT_OK;
}

/* The block form with activations in the state: the chain's blocks moved to their layout in place. */
Test(noalloc, actuated_step_and_block_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_model *m = as_build(2e-3);
  cr_assert(m && grit_model_na(m) > 0);
  grit_data *d = tu_data(m);
  double x[10], u[AS_NU];
  as_state(x, x + 4, x + 8, u);
  cr_assert_eq(grit_data_set_ctrl(d, u, AS_NU), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
  check_steps_and_derivatives(d, &(window_calls){.extra = call_blocks, .ctx = J}, "actuated chain, blocks");
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

/* A chain with dry joint friction, a connect, a weld and a joint coupling to a second chain, a fixed
 * tendon with a limit and a spatial tendon with a spring: every constraint kind of grit/constraints.h
 * in every step. */
Test(noalloc, constrained_step_with_friction_equalities_and_tendons) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_builder *b;
  grit_builder_create(&b);
  for (int k = 1; k <= 8; ++k) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = k == 5 ? 0 : k - 1;
    bd.pos[0] = k == 5 ? 0.5 : 0;
    bd.pos[2] = -0.3;
    bd.com[0] = 0.1;
    grit_builder_add_body(b, &bd, NULL);
    grit_joint_def jd = grit_default_joint_def();
    jd.axis[0] = k % 2, jd.axis[1] = 1 - k % 2, jd.axis[2] = 0;
    jd.frictionloss = 0.05 * k;
    grit_builder_add_joint(b, k, &jd, NULL);
  }
  grit_site_def s = grit_default_site_def();
  s.pos[2] = 0.5;
  grit_builder_add_site(b, &s, NULL);
  s.body = 4, s.pos[0] = 0.1, s.pos[2] = 0;
  grit_builder_add_site(b, &s, NULL);
  grit_equality_def e = grit_default_equality_def();
  e.obj1 = 4, e.obj2 = 8, e.anchor[0] = 0.2;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  e.type = GRIT_EQ_WELD, e.obj1 = 7, e.obj2 = 0;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  e.type = GRIT_EQ_JOINT, e.obj1 = 1, e.obj2 = 5;
  cr_assert_eq(grit_builder_add_equality(b, &e, NULL), GRIT_OK);
  grit_tendon_def t = grit_default_tendon_def();
  const int j[2] = {0, 2}, sites[2] = {0, 1};
  const double c[2] = {1, -1};
  t.n = 2, t.obj = j, t.coef = c, t.limited = 1, t.range[0] = -0.05, t.range[1] = 0.05;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  t = grit_default_tendon_def();
  t.type = GRIT_TENDON_SPATIAL, t.n = 2, t.obj = sites, t.stiffness = 50, t.damping = 1;
  cr_assert_eq(grit_builder_add_tendon(b, &t, NULL), GRIT_OK);
  grit_actuator_def a = grit_default_actuator_def(); /* a position servo and a motor on the tendons */
  a.trntype = GRIT_TRN_TENDON, a.tendon = 0, a.gainprm[0] = 20, a.biastype = GRIT_BIAS_AFFINE, a.biasprm[1] = -20;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  a = grit_default_actuator_def();
  a.trntype = GRIT_TRN_TENDON, a.tendon = 1;
  cr_assert_eq(grit_builder_add_actuator(b, &a, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  check_model(m, "two chains with frictionloss, equalities, tendons and tendon actuators");
  { /* and their derivatives (the tendon actuators' terms on dual numbers) */
    grit_data *d = tu_data(m);
    const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
    double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * nu), sizeof *B);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B}, "tendon actuators");
    free(A), free(B);
    grit_data_free(d);
  }
  grit_model_free(m);
}

/* The quasistatic step (seed 002, docs/quasistatic.md) and its derivatives: seed 002's gripper
 * squeezing a sphere on the ground. */
Test(noalloc, quasistatic_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><option timestep='0.01'/><worldbody><geom type='plane' size='1 1 0.1'/>"
      "<body pos='0 0 0.1'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 0 1'/>"
      "<geom type='sphere' size='0.1' mass='1'/></body>"
      "<body pos='-0.125 0 0.1'><joint name='lx' type='slide' axis='1 0 0'/>"
      "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body>"
      "<body pos='0.125 0 0.1'><joint name='rx' type='slide' axis='1 0 0'/>"
      "<geom type='box' size='0.02 0.05 0.05' mass='0.01'/></body></worldbody>"
      "<actuator><position joint='lx' kp='1000'/><position joint='rx' kp='1000'/></actuator></mujoco>";
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "gripper", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  grit_step_settings s = grit_default_step_settings();
  s.integrator = GRIT_INTEGRATOR_QUASISTATIC;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[2] = {0.015, -0.015}; /* 1 cm into the sphere */
  grit_data_set_ctrl(d, u, 2);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * 2), sizeof *B), P[2 * 4 * 2];
  const grit_param prm[2] = {{GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_MASS, 1}};
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives(d, A, B, prm, 2, P), GRIT_OK, "%s", grit_data_last_error(d));
  const window_calls c = {.A = A, .B = B, .P = P, .prm = prm, .nparam = 2};
  cr_assert(check_steps_and_derivatives(d, &c, "quasistatic gripper") > 0, "no contact");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* Fluid forces (MuJoCo 2.2.2's inertia-box model, and its ellipsoid model on the capsule and the plate) in
 * the step, its derivatives and grit_linearize: a free box and a capsule with a hinged plate in a dense,
 * viscous wind. */
Test(noalloc, fluid_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><option timestep='0.002' density='1000' viscosity='0.5' wind='0.4 -0.3 0.2'/><worldbody>"
      "<body pos='0 0 1'><freejoint/><geom type='box' size='.1 .05 .02' euler='20 30 40' contype='0' conaffinity='0'/>"
      "</body><body pos='0 1 1'><freejoint/><geom type='capsule' fromto='0 0 0 .2 0 0' size='.03' contype='0' "
      "conaffinity='0' fluidshape='ellipsoid'/><body pos='.2 0 0'><joint name='h' type='hinge' axis='0 1 0'/>"
      "<geom type='box' size='.1 .03 .01' pos='.1 0 0' contype='0' conaffinity='0' fluidshape='ellipsoid'/></body></body></worldbody>"
      "<actuator><motor joint='h'/></actuator></mujoco>";
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "fluid", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  check_model(m, "bodies in a fluid");
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)nx, sizeof *B);
  tu_rng rng = {11};
  tu_set_random_state(&rng, d, 1.0);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B}, "fluid");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* A model with the bumpy 9 x 9 height field 'h' (elevations (37 i) mod 11) in its assets and `worldbody`
 * (the contents of <worldbody>) as its bodies. */
static grit_model *bumpy_field_model(const char *worldbody) {
  char xml[4096];
  int len = snprintf(xml, sizeof xml, "<mujoco><asset><hfield name='h' nrow='9' ncol='9' size='1 1 0.2 0.1' "
                                      "elevation='");
  for (int i = 0; i < 81; ++i) len += snprintf(xml + len, sizeof xml - (size_t)len, "%d ", (i * 37) % 11);
  snprintf(xml + len, sizeof xml - (size_t)len, "'/></asset><worldbody>%s</worldbody></mujoco>", worldbody);
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  return m;
}

/* A height field (a bumpy 9 x 9 grid) under a sphere, a box and a capsule that touch its faces, edges and
 * peaks: the prism-by-prism collision (collision_hfield.c) and the step's derivatives allocate nothing. */
Test(noalloc, height_field_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_model *m = bumpy_field_model(
      "<geom type='hfield' hfield='h'/>"
      "<body pos='0.1 0.2 0.3'><freejoint/><geom type='sphere' size='0.1'/></body>"
      "<body pos='-0.3 -0.2 0.3'><freejoint/><geom type='box' size='0.1 0.15 0.05'/></body>"
      "<body pos='0.4 -0.4 0.3' euler='0 90 0'><freejoint/><geom type='capsule' size='0.05 0.2'/></body>");
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A);
  for (int k = 0; k < 150; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* landed */
  const int contacts = check_steps_and_derivatives(d, &(window_calls){.A = A}, "height field");
  cr_assert(contacts > 0, "no contact with the field");
  cr_log_info("height field: 0 allocations in 20 steps and derivatives, %d contacts per step", contacts / 20);
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}

/* A height field on a moving body: a tilted tray on a slide and a hinge carries the bumpy field, a sphere
 * rests on it; the step and its derivatives with the field's pose moving allocate nothing. */
Test(noalloc, height_field_on_a_moving_body) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  grit_model *m = bumpy_field_model(
      "<body euler='3 2 0'><joint type='slide' axis='1 0 0'/>"
      "<joint type='hinge' axis='0 1 0' damping='5'/><geom type='hfield' hfield='h'/>"
      "<geom type='box' size='0.9 0.9 0.02' pos='0 0 -0.15' mass='20'/></body>"
      "<body pos='0.1 0.2 0.4'><freejoint/><geom type='sphere' size='0.1'/></body>");
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A);
  for (int k = 0; k < 150; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* landed */
  cr_assert(check_steps_and_derivatives(d, &(window_calls){.A = A}, "moving height field") > 0,
            "no contact with the moving field");
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}

/* Muscles (activation dynamics, the force-length-velocity curves on a joint and on a spatial tendon) and a
 * slider-crank position servo (issue 24): their step and derivatives allocate nothing. */
Test(noalloc, muscle_and_slider_crank_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><compiler angle='radian'/><option gravity='0 0 0'/><worldbody><site name='s0' pos='-.15 0 0'/>"
      "<site name='sl' pos='0 -.1 0' zaxis='1 .5 0'/><body><joint name='a' range='0 2'/>"
      "<geom type='capsule' fromto='0 0 0 .5 0 0' size='.04' contype='0' conaffinity='0'/><site name='s1' pos='.2 .05 0'/>"
      "<site name='c' pos='.1 0 0'/><body pos='.5 0 0'><joint name='b' range='0 2'/><geom type='capsule' "
      "fromto='0 0 0 .5 0 0' size='.03' contype='0' conaffinity='0'/><site name='s2' pos='.1 .05 0'/></body></body>"
      "</worldbody><tendon><spatial name='t'><site site='s0'/><site site='s1'/><site site='s2'/></spatial></tendon>"
      "<actuator><muscle tendon='t' ctrllimited='true' ctrlrange='0 1'/><muscle joint='b' ctrllimited='true' "
      "ctrlrange='0 1'/><position cranksite='c' slidersite='sl' cranklength='.2' kp='30'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m) + grit_model_na(m);
  double x[6] = {0.6, 0.9, 0.2, -0.3, 0.3, 0.6}, u[3] = {0.7, 0.2, 0.05};
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * 3), sizeof *B);
  cr_assert_eq(grit_linearize(d, x, u, A, B), GRIT_OK, "%s", grit_data_last_error(d));
  linearize_at l = {x, u, A, B};
  check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B, .extra = call_linearize, .ctx = &l},
                              "muscles and slider-crank");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* Adhesion (an <adhesion> pad holding a cube through margin = gap contacts, priority and condim 1) and a
 * pulley tendon across two trees with its limit: the step, its derivatives and the adhesion's part
 * allocate nothing. */
Test(noalloc, adhesion_and_pulley_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='1 1 .1'/>"
      "<body name='pad' pos='0 0 .205'><joint name='lift' type='slide' axis='0 0 1' damping='10'/>"
      "<geom type='box' size='.05 .05 .005' margin='.01' gap='.01' mass='.5' priority='1'/><site name='s0'/></body>"
      "<body pos='0 0 .1'><freejoint/><geom type='box' size='.1 .1 .1' mass='.2' condim='1'/></body>"
      "<site name='p' pos='.3 0 .5'/><body pos='.3 0 .3'><freejoint/><geom size='.03' contype='0' conaffinity='0'/>"
      "<site name='s1'/></body></worldbody><tendon><spatial limited='true' range='0 .53'><site site='s0'/>"
      "<site site='p'/><pulley divisor='2'/><site site='p'/><site site='s1'/></spatial></tendon>"
      "<actuator><position joint='lift' kp='500' ctrlrange='-.1 .3'/>"
      "<adhesion body='pad' gain='10' ctrlrange='0 1'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * nu), sizeof *B);
  const double u[2] = {0.1, 1};
  cr_assert_eq(grit_data_set_ctrl(d, u, 2), GRIT_OK);
  for (int k = 0; k < 100; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B}, "adhesion and pulley") > 0, "no contact");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* Adds the step's contacts with a patch of positive area to *(int *)ctx, as an `extra`. */
static int count_patches(grit_data *d, void *ctx) {
  int bad = 0;
  for (int i = 0; i < grit_data_ncontacts(d); ++i) {
    double area = 0;
    bad |= grit_data_contact_patch(d, i, &area, NULL) != GRIT_OK;
    *(int *)ctx += area > 0;
  }
  return bad;
}

/* Hydroelastic patches of every kind (docs/hydroelastic.md): a compliant sphere on a rigid cylinder, a
 * compliant capsule and a compliant convex mesh on the plane, and a compliant sphere on a compliant box
 * (the equal-pressure surface): the patches go into the workspace sized at creation. */
Test(noalloc, hydroelastic_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><custom><numeric name='grit_hydro_modulus:s1' data='1e6'/><numeric name='grit_hydro_modulus:c' "
      "data='1e7'/><numeric name='grit_hydro_modulus:m' data='1e7'/><numeric name='grit_hydro_modulus:s2' "
      "data='1e6'/><numeric name='grit_hydro_modulus:b' data='2e6'/></custom><asset><mesh name='tet' "
      "vertex='0 0 0  .1 0 0  0 .1 0  0 0 .1  .1 .1 .1'/></asset><worldbody><geom type='plane' size='2 2 .1'/>"
      "<geom type='cylinder' size='.1 .05' pos='0 0 .05'/><geom name='b' type='box' size='.1 .1 .05' pos='1 1 .05'/>"
      "<body pos='0 0 .149'><freejoint/><geom name='s1' size='.05'/></body>"
      "<body pos='.5 0 .029' euler='90 0 0'><freejoint/><geom name='c' type='capsule' size='.03 .1'/></body>"
      "<body pos='0 .5 .001'><freejoint/><geom name='m' type='mesh' mesh='tet'/></body>"
      "<body pos='1 1 .149'><freejoint/><geom name='s2' size='.05'/></body></worldbody></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A);
  for (int k = 0; k < 50; ++k) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* landed */
  int patches = 0;
  check_steps_and_derivatives(d, &(window_calls){.A = A, .extra = count_patches, .ctx = &patches}, "hydroelastic");
  cr_assert(patches > 20 * 4, "patches: %d in 20 steps", patches);
  cr_log_info("hydroelastic: 0 allocations in 20 steps and derivatives, %d patches per step", patches / 20);
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}

/* Site transmissions (issue 24): a free body's thrust-and-yaw motors and a hinged link's site velocity
 * servo; the step and its derivatives allocate nothing. */
Test(noalloc, site_actuator_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><worldbody><body pos='0 0 1'><freejoint/><geom type='box' size='.1 .1 .02' contype='0' "
      "conaffinity='0'/><site name='t1' pos='.1 .1 .03'/><site name='t2' pos='-.1 -.1 .03' euler='5 0 0'/>"
      "<body pos='0 0 -.05'><joint axis='1 0 0'/><geom type='capsule' fromto='0 0 0 0 0 -.2' size='.01' "
      "contype='0' conaffinity='0'/><site name='tip' pos='0 0 -.2'/></body></body></worldbody><actuator>"
      "<motor site='t1' gear='0 0 1 0 0 -.02'/><motor site='t2' gear='0 0 1 0 0 .02'/>"
      "<velocity site='tip' kv='.5' gear='0 1 0 .1 0 0'/></actuator></mujoco>";
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  const int nx = 2 * grit_model_nv(m), nu = grit_model_nu(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * nu), sizeof *B);
  const double u[3] = {4, 4.1, 0.3};
  cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B}, "site actuators");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* Gradient smoothing (docs/contact.md): a finger on two slides 1 cm beside a free box resting on the
 * ground, within the film's window, the box on the soft support; the step and its derivatives. */
Test(noalloc, gradient_smoothing_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  static const char xml[] =
      "<mujoco><option timestep='0.01'/><worldbody><geom type='plane' size='1 1 0.1'/>"
      "<body pos='-0.07 0 0.04'><joint name='fx' type='slide' axis='1 0 0'/>"
      "<joint name='fz' type='slide' axis='0 0 1'/><geom type='sphere' size='0.02' mass='0.1'/></body>"
      "<body pos='0 0 0.04'><freejoint/><geom type='box' size='0.04 0.04 0.04' mass='0.2'/></body>"
      "</worldbody><actuator><motor joint='fx'/><motor joint='fz'/></actuator></mujoco>";
  grit_mjcf_load_options o = grit_mjcf_default_load_options();
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_buffer(xml, strlen(xml), "smoothing", &o, &m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d = tu_data(m);
  grit_step_settings s = grit_default_step_settings();
  s.gradient_smoothing = 0.05;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const double u[2] = {0.5, 0.1 * 9.81 + 0.5}; /* towards the box and up */
  grit_data_set_ctrl(d, u, 2);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A), *B = calloc((size_t)(nx * 2), sizeof *B);
  cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert_eq(grit_step_derivatives(d, A, B, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  cr_assert(check_steps_and_derivatives(d, &(window_calls){.A = A, .B = B}, "gradient smoothing") > 0, "no contact");
  free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
}

/* A tree of more than 64 dofs (a torso with 24 legs of three hinges, 78 dofs) on the floor: its A is
 * factored in tree order (afactor.c) and the Delassus estimates walk its rows' paths with the
 * workspaces made at creation; the step, the per-step queries and the derivatives allocate nothing. */
Test(noalloc, big_tree_step_and_derivatives) {
  if (!NOALLOC_ACTIVE) cr_skip_test("malloc is owned by AddressSanitizer");
  char *xml = malloc(32768), *p = xml;
  p += sprintf(p, "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 0.1'/>"
                  "<body pos='0 0 0.3'><freejoint/><geom type='box' size='0.3 0.3 0.03'/>");
  for (int k = 0; k < 24; ++k)
    p += sprintf(p, "<body pos='%.3f %.3f 0'><joint type='hinge' axis='1 0 0' range='-30 30'/>"
                    "<geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.01'/><body pos='0 0 -0.1'>"
                    "<joint type='hinge' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0 0 -0.1' size='0.01'/>"
                    "<body pos='0 0 -0.1'><joint type='hinge' axis='0 0 1'/><geom type='sphere' size='0.02'/>"
                    "</body></body></body>",
                 0.25 * cos(0.2618 * k), 0.25 * sin(0.2618 * k));
  sprintf(p, "</body></worldbody></mujoco>");
  grit_model *m;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, NULL, msg), GRIT_OK, "%s", msg);
  free(xml);
  check_model(m, "a tree of 78 dofs");
  grit_data *d = tu_data(m);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = GRIT_CONTACT_SAP; /* the contacts read their Delassus estimates */
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nx = 2 * grit_model_nv(m);
  double *A = calloc((size_t)(nx * nx), sizeof *A);
  for (int i = 0; i < 60; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d)); /* landed */
  cr_assert_eq(grit_step_derivatives(d, A, NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
  const int contacts = check_steps_and_derivatives(d, &(window_calls){.A = A}, "a tree of 78 dofs");
  cr_log_info("a tree of 78 dofs: %d contacts over 20 steps", contacts);
  free(A);
  grit_data_free(d);
  grit_model_free(m);
}
