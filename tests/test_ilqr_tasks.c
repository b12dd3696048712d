/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr_tasks.c — issue 28's contact-implicit tasks, written against the public API only (the
 * builder, grit_step, grit_ilqr and its grit adapter), each asserting that the plan reaches its goal
 * on the exact model and that the solver's stop is honest: converged only with a small gradient.
 *   - a two-finger gripper lifting a box 5 cm by friction: from a grip on the exact model; from its
 *     own weight with the fingers 1 cm off the box under gradient smoothing 0.05 m, reached with the
 *     plan's grip turned into a squeeze (grit_ilqr_grit_solve_squeezed); annealed to the exact model
 *     it is NOT reached, nor with derivative smoothing, nor on an ensemble of two smoothings
 *     (grit_ilqr/ensemble.h): the stops asserted honest.
 * The tasks without grasping (cart-pole, hopper, 3-link arm): test_ilqr_tasks_swing_hop.c; the shared
 * helpers: ilqr_task_util.h. */
#include "grit_ilqr/ensemble.h"
#include "ilqr_task_util.h"

/* ------------------------------------------------------------------------------------- gripper */

/* A lift (z slide, 0.3 kg, +-30 N) carrying two fingers (y slides, 0.1 kg each, +-20 N; 2 cm spheres)
 * whose surfaces start 1 cm either side of a free 8 cm, 0.2 kg box resting on the ground; friction
 * 0.8 on the fingers and the box, 0.5 on the ground. Time step 20 ms. q = (lift z, left y, right y,
 * box position, box quaternion). Lifting needs a squeeze above m g / (2 mu) = 1.2 N. */
enum { GRIP_N = 40, GRIP_BOX_Q = 3, GRIP_BOX_V = 3 };
#define GRIP_HALF 0.04
#define GRIP_R 0.02
#define GRIP_GAP 0.01
#define GRIP_LIFT 0.05

static grit_model *gripper_build_box(double box_mass, double mu);
static grit_model *gripper_build(void) { return gripper_build_box(0.2, 0.8); }

/* The gripper with a box of mass box_mass (kg; the task's is 0.2) and friction mu on the fingers and the
 * box (the task's: 0.8). */
static grit_model *gripper_build_box(double box_mass, double mu) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.02;
  grit_builder_set_options(b, &opt);
  add_geom(b, 0, GRIT_GEOM_PLANE, 0, 0, 0, NULL, 0.5);
  const double zero[3] = {0, 0, 0}, ez[3] = {0, 0, 1}, ey[3] = {0, 1, 0};
  const double lift_pos[3] = {0, 0, GRIP_HALF};
  const int lift = add_slide(b, 0, lift_pos, ez, 0.3, 30, 1.0, 0);
  for (int side = -1; side <= 1; side += 2) {
    const double p[3] = {0, side * (GRIP_HALF + GRIP_GAP + GRIP_R), 0};
    const int f = add_slide(b, lift, p, ey, 0.1, 20, 1.0, 0);
    add_geom(b, f, GRIT_GEOM_SPHERE, GRIP_R, 0, 0, zero, mu);
  }
  grit_body_def bd = grit_default_body_def();
  bd.parent = 0;
  bd.pos[2] = GRIP_HALF;
  bd.mass = box_mass;
  memset(bd.inertia, 0, sizeof bd.inertia);
  bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = box_mass * (2 * GRIP_HALF) * (2 * GRIP_HALF) / 6;
  int box = -1;
  cr_assert_eq(grit_builder_add_body(b, &bd, &box), GRIT_OK);
  grit_joint_def fj = grit_default_joint_def();
  fj.type = GRIT_JOINT_FREE;
  cr_assert_eq(grit_builder_add_joint(b, box, &fj, NULL), GRIT_OK);
  add_geom(b, box, GRIT_GEOM_BOX, GRIP_HALF, GRIP_HALF, GRIP_HALF, zero, mu);
  return compile(b);
}


static void gripper_task(task *t) {
  task_alloc(t, gripper_build(), GRIP_N);
  const int n = t->ndx, nv = n / 2;
  t->goal[GRIP_BOX_Q + 2] += GRIP_LIFT;
  for (int i = 0; i < 3; ++i) t->Q[(GRIP_BOX_V + i) * n + GRIP_BOX_V + i] = 100; /* box position */
  for (int i = 0; i < n * n; ++i) t->Qf[i] = 10 * t->Q[i];
  for (int i = 0; i < 3; ++i) t->Qf[(nv + GRIP_BOX_V + i) * n + nv + GRIP_BOX_V + i] = 10; /* at rest */
  for (int i = 0; i < t->nu; ++i) t->R[i * t->nu + i] = 1e-3;
  t->uref[0] = 0.5 * 9.81; /* the lift holding itself and its fingers */
}

static double gripper_error(const task *t, const double *x) {
  double e = 0;
  for (int i = 0; i < 3; ++i) e += pow(x[GRIP_BOX_Q + i] - t->goal[GRIP_BOX_Q + i], 2);
  return sqrt(e);
}

/* The gripper task with its solver (150 iterations, tol_cost 1e-4). */
static void gripper_setup(task *t) {
  gripper_task(t);
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 150;
  o.tol_cost = 1e-4;
  task_solver(t, &o);
}

/* Plans the gripper from the guess (lift force hold + extra, squeeze each side) with gradient smoothing
 * delta0 annealed to the exact model (0: exact throughout); the result, and the box's distance from its
 * goal after the plan is replayed on the exact model. */
static double gripper_plan(double extra, double squeeze, double delta0, grit_ilqr_result *r) {
  task t;
  gripper_setup(&t);
  double *u = calloc((size_t)(t.N * t.nu), sizeof(double)), x[64];
  for (int k = 0; k < t.N; ++k) u[k * t.nu] = t.uref[0] + extra, u[k * t.nu + 1] = squeeze, u[k * t.nu + 2] = -squeeze;
  cr_assert_eq(grit_ilqr_set_controls(t.s, u), GRIT_OK);
  if (delta0 > 0)
    cr_assert_eq(grit_ilqr_grit_solve_annealed(t.a, t.s, delta0, 0.5, 0.005, r), GRIT_OK, "%s / %s",
                 grit_ilqr_last_error(t.s), grit_ilqr_grit_last_error(t.a));
  else
    cr_assert_eq(grit_ilqr_solve(t.s, r), GRIT_OK, "%s", grit_ilqr_last_error(t.s));
  replay(t.m, t.N, grit_ilqr_controls(t.s), x);
  const double err = gripper_error(&t, x);
  cr_log_info("gripper from lift +%g N, squeeze %g N, smoothing %g m: %d iterations, %d rollouts, stop %d (%s), "
              "cost %.4g -> %.4g, gradient %.2g, box %.2f mm from the goal (z %.4f)",
              extra, squeeze, delta0, r->iterations, r->rollouts, (int)r->stop, grit_ilqr_stop_string(r->stop),
              r->initial_cost, r->cost, r->gradient, 1e3 * err, x[GRIP_BOX_Q + 2]);
  assert_honest(r, "gripper");
  free(u);
  task_free(&t);
  return err;
}

/* The task is feasible and the exact model's gradient finds the lift once the fingers grip: from a
 * 5 N squeeze (above m g / (2 mu) = 1.2 N) the plan lifts the box to its goal. */
Test(ilqr_tasks, gripper_lifts_the_box_by_friction_from_a_grip) {
  grit_ilqr_result r;
  const double err = gripper_plan(2, 5, 0, &r);
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its goal", 1e3 * err);
}

/* Replays controls u (N x 3) on the gripper under gradient smoothing delta (0: the exact model); the
 * box's distance from its goal at the end. */
static double gripper_replay(const task *t, const double *u, double delta) {
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(t->m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.gradient_smoothing = delta;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  for (int k = 0; k < t->N; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u + (size_t)k * t->nu, t->nu), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  double x[64];
  grit_ilqr_grit_state(d, x);
  grit_data_free(d);
  return gripper_error(t, x);
}

/* The gripper from its own weight (fingers open, no squeeze, the lift at its holding force) solved once
 * with a smoothing set by `set` (gradient or derivative smoothing) at delta; t is left for the caller
 * to replay and free. */
static void gripper_solve_from_own_weight(task *t, grit_status (*set)(grit_ilqr_grit *, double), double delta,
                                          grit_ilqr_result *r) {
  gripper_setup(t);
  double *u = calloc((size_t)(t->N * t->nu), sizeof(double));
  cr_assert(u);
  for (int k = 0; k < t->N; ++k) u[k * t->nu] = t->uref[0];
  cr_assert_eq(grit_ilqr_set_controls(t->s, u), GRIT_OK);
  free(u);
  cr_assert_eq(set(t->a, delta), GRIT_OK, "%s", grit_ilqr_grit_last_error(t->a));
  cr_assert_eq(grit_ilqr_dynamics_changed(t->s), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(t->s, r), GRIT_OK, "%s", grit_ilqr_last_error(t->s));
}

/* Under gradient smoothing 0.05 m the gripper from its own weight lifts the box: the film's grip
 * (docs/contact.md) needs no squeeze, the open fingers stay, and the box's height responds to the lift
 * on its soft support, so the start is neither a saddle nor a plateau. Asserted on the smoothed model
 * (the plan replayed with the same smoothing). */
Test(ilqr_tasks, gripper_from_its_own_weight_lifts_the_box_under_smoothing) {
  task t;
  grit_ilqr_result r;
  gripper_solve_from_own_weight(&t, grit_ilqr_grit_set_smoothing, 0.05, &r);
  const double err = gripper_replay(&t, grit_ilqr_controls(t.s), 0.05);
  cr_log_info("gripper from its own weight, smoothing 0.05 m: %d iterations, stop %s, cost %.4g -> %.4g, the box "
              "%.2f mm from its goal on the smoothed model", r.iterations, grit_ilqr_stop_string(r.stop),
              r.initial_cost, r.cost, 1e3 * err);
  assert_honest(&r, "gripper under smoothing");
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its goal on the smoothed model", 1e3 * err);
  task_free(&t);
}

/* Issue 28's case: the gripper holding only its own weight, fingers open, smoothing 0.05 m annealed to
 * the exact model. NOT reached (docs/ilqr.md, "Planning across separation"): the plan that lifts under
 * smoothing holds the box by the film's grip at a distance, which annealing removes (below delta of
 * about 2.7 cm it cannot hold the box even at contact), and the solves that must then find a squeeze
 * stall at contact kinks. What is asserted is the honest stop: never "converged" short of the goal. */
Test(ilqr_tasks, gripper_from_its_own_weight_stops_honestly_when_annealed) {
  grit_ilqr_result r;
  const double err = gripper_plan(0, 0, 0.05, &r);
  if (err > 0.01) cr_assert(!r.converged, "converged %.1f mm short of the goal", 1e3 * err);
}

/* Issue 28's case reached: the gripper from its own weight planned under gradient smoothing 0.05 m, the
 * plan's grip turned into a squeeze (grit_ilqr_grit_solve_squeezed, margin 3: the fingers press with
 * three times the normal force the friction they used needs), then solved on the exact model (from
 * that plan and from the plan as it was; the better is kept). The smoothed plan holds the box by the
 * film's grip with no squeeze; with the squeeze added its replay on the exact model lifts the box part
 * of the way, and the exact solve finishes (docs/ilqr.md, the gripper, stop 16: 0.1-7.4 mm over delta
 * 3-8 cm and margins 2.5-5). Asserted on the exact model, with an honest stop. */
Test(ilqr_tasks, gripper_from_its_own_weight_reaches_its_goal_with_the_grip_squeezed) {
  task t;
  gripper_setup(&t);
  double *u = calloc((size_t)(t.N * t.nu), sizeof(double)), x[64];
  cr_assert(u);
  for (int k = 0; k < t.N; ++k) u[k * t.nu] = t.uref[0];
  cr_assert_eq(grit_ilqr_set_controls(t.s, u), GRIT_OK);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_grit_solve_squeezed(t.a, t.s, 0.05, 3, &r), GRIT_OK, "%s / %s", grit_ilqr_last_error(t.s),
               grit_ilqr_grit_last_error(t.a));
  replay(t.m, t.N, grit_ilqr_controls(t.s), x);
  const double err = gripper_error(&t, x);
  cr_log_info("gripper from its own weight, smoothing 0.05 m, grip squeezed (margin 3), then exact: %d iterations, "
              "%d rollouts, stop %s, cost %.4g -> %.4g, the box %.2f mm from its goal on the exact model",
              r.iterations, r.rollouts, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost, 1e3 * err);
  assert_honest(&r, "gripper, grip squeezed");
  cr_assert_lt(err, 0.01, "the box ends %.1f mm from its goal on the exact model", 1e3 * err);
  free(u);
  task_free(&t);
}

/* The same start with derivative smoothing (grit_ilqr_grit_set_derivative_smoothing): the rollouts stay
 * exact, so the box stays on the ground whatever the lift without a squeeze, while the smoothed
 * Jacobians (the film's grip in stiction) predict that the lift alone raises it: no step decreases the
 * exact cost. NOT reached either (docs/ilqr.md); asserted: the honest stop. */
Test(ilqr_tasks, gripper_from_its_own_weight_stops_honestly_with_derivative_smoothing) {
  task t;
  grit_ilqr_result r;
  gripper_solve_from_own_weight(&t, grit_ilqr_grit_set_derivative_smoothing, 0.05, &r);
  const double err = gripper_replay(&t, grit_ilqr_controls(t.s), 0);
  cr_log_info("gripper from its own weight, derivative smoothing 0.05 m: %d iterations, stop %s, cost %.4g -> %.4g, "
              "the box %.2f mm from its goal", r.iterations, grit_ilqr_stop_string(r.stop), r.initial_cost, r.cost,
              1e3 * err);
  assert_honest(&r, "gripper with derivative smoothing");
  if (err > 0.01) cr_assert(!r.converged, "converged %.1f mm short of the goal", 1e3 * err);
  task_free(&t);
}

/* The gripper's plan with constant controls (lift: hold + extra; squeeze on each finger) for the whole
 * horizon under gradient smoothing delta: the box's rise and the fingers' final gap to the box. */
static void gripper_constant_barrier(double delta, double kappa, double extra, double squeeze, double *rise,
                                     double *gap) {
  grit_model *m = gripper_build();
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  grit_step_settings st = grit_data_step_settings(d);
  st.gradient_smoothing = delta;
  st.gradient_smoothing_barrier = kappa;
  cr_assert_eq(grit_data_set_step_settings(d, &st), GRIT_OK, "%s", grit_data_last_error(d));
  const double z0 = grit_data_qpos(d)[GRIP_BOX_Q + 2], u[3] = {0.5 * 9.81 + extra, squeeze, -squeeze};
  for (int k = 0; k < GRIP_N; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u, 3), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  }
  const double *q = grit_data_qpos(d);
  *rise = q[GRIP_BOX_Q + 2] - z0;
  *gap = GRIP_GAP - q[1]; /* the left finger's slide is along +y, towards the box */
  grit_data_free(d);
  grit_model_free(m);
}

static void gripper_constant(double delta, double extra, double squeeze, double *rise, double *gap) {
  gripper_constant_barrier(delta, 0, extra, squeeze, rise, gap);
}

/* Why the gripper from its own weight has no gradient on the exact model, measured (docs/ilqr.md): the
 * box rises only when the squeeze gives friction above its weight AND the lift's extra force exceeds
 * the box's weight (1.96 N); below either threshold it rests on the (exact, stiff) ground and no
 * control moves it. The start (no squeeze, hold) is the corner of that plateau, so the exact gradient
 * is zero in every control. Under gradient smoothing 0.05 m the open, unloaded fingers stay where they
 * are (no force at a distance pushes them), the box sinks less than 3 cm into its soft support, its
 * height responds to a lift below its weight, and the film's grip carries it without a squeeze. */
Test(ilqr_tasks, gripper_at_its_own_weight_is_a_corner_of_a_plateau) {
  double rise, gap;
  const double cases[4][2] = {{5, 0}, {0, 3}, {1.5, 3}, {0, 0}}; /* (extra lift, squeeze) N: no rise */
  for (int i = 0; i < 4; ++i) {
    gripper_constant(0, cases[i][0], cases[i][1], &rise, &gap);
    cr_assert_lt(fabs(rise), 1e-4, "lift +%g N, squeeze %g N: the box rose %g m", cases[i][0], cases[i][1], rise);
  }
  gripper_constant(0, 5, 3, &rise, &gap); /* above both thresholds */
  cr_assert_gt(rise, 0.01, "lift +5 N, squeeze 3 N: the box rose only %g m", rise);
  double rise0, rise1;
  gripper_constant(0.05, 0, 0, &rise0, &gap); /* smoothing: the open fingers stay */
  cr_log_info("smoothing 0.05 m, no squeeze: the fingers end %.2f mm from the box (start %.0f mm), the box %.2f mm "
              "into its support", 1e3 * gap, 1e3 * GRIP_GAP, -1e3 * rise0);
  cr_assert_lt(fabs(gap - GRIP_GAP), 1e-3, "the fingers end %g m from the box", gap);
  cr_assert(rise0 < 0 && rise0 > -0.03, "the box's rest height under smoothing: %g m", rise0);
  gripper_constant(0.05, 1, 0, &rise1, &gap); /* a lift below the box's weight raises it */
  cr_log_info("smoothing 0.05 m, lift +1 N, no squeeze: the box %.2f mm higher than at rest", 1e3 * (rise1 - rise0));
  cr_assert_gt(rise1 - rise0, 1e-3);
  /* the film's grip carries the box (at 1 cm, 1.2 times its weight from the two fingers: a lift that
   * accelerates it faster than about 0.2 g leaves it behind) */
  gripper_constant(0.05, 2.5, 0, &rise, &gap);
  cr_log_info("smoothing 0.05 m, lift +2.5 N, no squeeze: the box rose %.1f mm", 1e3 * rise);
  cr_assert_gt(rise, 0.05, "lift +2.5 N, no squeeze: the box rose only %g m under smoothing", rise);
}

/* The force at a distance (gradient_smoothing_barrier = 0.3, docs/contact.md) grips only through a
 * normal force: under smoothing 0.05 m a lift of 2.5 N above holding without a squeeze, which the film
 * carries the box with (above), leaves it behind, and a lift of 3 N raises it with a squeeze above
 * m g / (2 mu) = 1.23 N per finger and not below, as on the exact model. The open, unloaded fingers are pushed out by the
 * force at a distance (the price of a normal force at a gap: 72 mm from the box after 0.8 s). */
Test(ilqr_tasks, gripper_under_the_force_at_a_distance_grips_only_by_a_squeeze) {
  double rise, gap;
  gripper_constant_barrier(0.05, 0.3, 2.5, 0, &rise, &gap);
  cr_log_info("force at a distance 0.05 m: lift +2.5 N, no squeeze: the box rose %.2f mm, the fingers end %.1f mm "
              "from it", 1e3 * rise, 1e3 * gap);
  cr_assert_lt(rise, 0.01, "lift +2.5 N without a squeeze carried the box %g m", rise);
  gripper_constant_barrier(0.05, 0.3, 0, 0, &rise, &gap);
  cr_log_info("force at a distance 0.05 m, no squeeze: the fingers end %.1f mm from the box", 1e3 * gap);
  cr_assert_gt(gap, GRIP_GAP, "the open fingers end %g m from the box", gap); /* pushed out (72 mm) */
  /* the exact model's law: lift +3 N rises with a squeeze of 1.5 N per finger, not with 1.0 N (m g / (2 mu)
   * = 1.23 N) */
  gripper_constant_barrier(0.05, 0.3, 3, 1.0, &rise, &gap);
  cr_log_info("force at a distance 0.05 m: lift +3 N, squeeze 1.0 N: the box rose %.1f mm", 1e3 * rise);
  cr_assert_lt(rise, 0.001, "lift +3 N, squeeze 1.0 N: the box rose %g m", rise);
  gripper_constant_barrier(0.05, 0.3, 3, 1.5, &rise, &gap);
  cr_log_info("force at a distance 0.05 m: lift +3 N, squeeze 1.5 N: the box rose %.1f mm", 1e3 * rise);
  cr_assert_gt(rise, 0.1, "lift +3 N, squeeze 1.5 N: the box rose only %g m", rise);
}
/* ---------------------------------------------------------------------- gripper on an ensemble */

/* A continuation on an ensemble (grit_ilqr/ensemble.h): the same controls drive two copies of the
 * gripper, the first under smoothing delta, the second under a smaller one (ratio x delta, 0 below
 * delta_min) and optionally with another box (mass, friction scale: a copy that needs more squeeze)
 * and weight; the cost is the task's on each copy, weighted. Stages: both copies at delta0 (the plan
 * that lifts under smoothing), then (delta, ratio delta) for delta = delta0, delta0 factor, ... until
 * the second copy is exact (or, `direct`, none), then the task's own solver on the exact model alone
 * from that plan. docs/ilqr.md (the gripper, stop 14) lists the variants measured. */
typedef struct grip_ens_config {
  double ratio, factor, delta_min; /* the second copy's smoothing relative to the first; the schedule */
  double box_mass, mu_scale;       /* the second copy's box (0.2 kg, 1: the task's) */
  double weight;                   /* the second copy's weight (the first's is 1) */
  int direct;                      /* nonzero: from the delta0 stage straight to the exact solve */
} grip_ens_config;

typedef struct grip_ens {
  grit_model *other; /* the second copy's model, or NULL: the task's */
  grit_ilqr_grit *a[2];
  grit_ilqr_ensemble *e;
  grit_ilqr *s;
  double *x0, *goal, *Q, *Qf, *R;
} grip_ens;

static void grip_ens_create(grip_ens *g, const task *t, const grip_ens_config *c) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 150;
  o.tol_cost = 1e-4;
  o.log = log_it;
  g->other = c->box_mass != 0.2 || c->mu_scale != 1 ? gripper_build_box(c->box_mass, 0.8 * c->mu_scale) : NULL;
  grit_ilqr_dynamics dyn[2];
  for (int i = 0; i < 2; ++i) {
    cr_assert_eq(grit_ilqr_grit_create(i && g->other ? g->other : t->m, t->N, NULL, &g->a[i], msg), GRIT_OK, "%s", msg);
    dyn[i] = grit_ilqr_grit_dynamics(g->a[i]);
  }
  cr_assert_eq(grit_ilqr_ensemble_create(2, dyn, o.nthreads, &g->e, msg), GRIT_OK, "%s", msg);
  const int n = 2 * t->ndx;
  g->x0 = malloc(sizeof(double) * 2 * t->nx), g->goal = malloc(sizeof(double) * 2 * t->nx);
  g->Q = malloc(sizeof(double) * n * n), g->Qf = malloc(sizeof(double) * n * n);
  g->R = malloc(sizeof(double) * t->nu * t->nu);
  const double w[2] = {1, c->weight};
  cr_assert_eq(grit_ilqr_ensemble_stack_state(g->e, t->x0, g->x0), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_state(g->e, t->goal, g->goal), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_weight(g->e, t->Q, w, g->Q), GRIT_OK);
  cr_assert_eq(grit_ilqr_ensemble_stack_weight(g->e, t->Qf, w, g->Qf), GRIT_OK);
  for (int i = 0; i < t->nu * t->nu; ++i) g->R[i] = (w[0] + w[1]) * t->R[i];
  grit_ilqr_problem p;
  memset(&p, 0, sizeof p);
  p.dynamics = grit_ilqr_ensemble_dynamics(g->e);
  p.horizon = t->N;
  p.x0 = g->x0, p.x_goal = g->goal, p.Q = g->Q, p.Qf = g->Qf, p.R = g->R;
  p.u_ref = t->uref, p.u_min = t->lo, p.u_max = t->hi;
  cr_assert_eq(grit_ilqr_create(&p, &o, &g->s, msg), GRIT_OK, "%s", msg);
}

static void grip_ens_free(grip_ens *g) {
  grit_ilqr_free(g->s);
  grit_ilqr_ensemble_free(g->e);
  for (int i = 0; i < 2; ++i) grit_ilqr_grit_free(g->a[i]);
  grit_model_free(g->other);
  free(g->x0), free(g->goal), free(g->Q), free(g->Qf), free(g->R);
}

/* One solve of the ensemble with its copies under smoothing da and db; logs the box's distance from its
 * goal on the task's model under da, db and exact, and the plan's mean squeeze and extra lift after the
 * first 5 steps. Its iterations. */
static int grip_ens_stage(grip_ens *g, const task *t, double da, double db) {
  cr_assert_eq(grit_ilqr_grit_set_smoothing(g->a[0], da), GRIT_OK);
  cr_assert_eq(grit_ilqr_grit_set_smoothing(g->a[1], db), GRIT_OK);
  cr_assert_eq(grit_ilqr_dynamics_changed(g->s), GRIT_OK);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(g->s, &r), GRIT_OK, "%s", grit_ilqr_last_error(g->s));
  assert_honest(&r, "gripper ensemble stage");
  const double *u = grit_ilqr_controls(g->s);
  const double e0 = gripper_replay(t, u, da), e1 = gripper_replay(t, u, db), ex = gripper_replay(t, u, 0);
  double sq = 0, lift = 0;
  for (int k = 5; k < t->N; ++k)
    sq += 0.5 * (u[k * 3 + 1] - u[k * 3 + 2]) / (t->N - 5), lift += (u[k * 3] - t->uref[0]) / (t->N - 5);
  cr_log_info("ensemble (%.4g, %.4g) m: %d iterations, %s, cost %.4g -> %.4g; the box %.2f / %.2f mm from its goal, "
              "exact %.2f mm; squeeze %.2f N, lift +%.2f N", da, db, r.iterations, grit_ilqr_stop_string(r.stop),
              r.initial_cost, r.cost, 1e3 * e0, 1e3 * e1, 1e3 * ex, sq, lift);
  return r.iterations;
}

/* The gripper from its own weight planned by the ensemble continuation c from delta0 = 0.05 m; the
 * final exact solve's result into r, the box's distance from its goal on the exact model returned. */
static double gripper_plan_ensemble(const grip_ens_config *c, grit_ilqr_result *r) {
  task t;
  gripper_setup(&t);
  grip_ens g;
  grip_ens_create(&g, &t, c);
  double *u = calloc((size_t)(t.N * t.nu), sizeof(double));
  for (int k = 0; k < t.N; ++k) u[k * t.nu] = t.uref[0];
  cr_assert_eq(grit_ilqr_set_controls(g.s, u), GRIT_OK);
  const double d0 = 0.05;
  int total = grip_ens_stage(&g, &t, d0, d0);
  for (double d = d0; !c->direct; d *= c->factor) {
    const double db = d * c->ratio < c->delta_min ? 0 : d * c->ratio;
    total += grip_ens_stage(&g, &t, d, db);
    if (db == 0) break;
  }
  cr_assert_eq(grit_ilqr_set_controls(t.s, grit_ilqr_controls(g.s)), GRIT_OK);
  cr_assert_eq(grit_ilqr_solve(t.s, r), GRIT_OK, "%s", grit_ilqr_last_error(t.s));
  total += r->iterations;
  replay(t.m, t.N, grit_ilqr_controls(t.s), u);
  const double err = gripper_error(&t, u);
  cr_log_info("gripper from its own weight on the ensemble, then exact: %d iterations (%d in all), %s, cost %.4g -> "
              "%.4g; the box %.2f mm from its goal on the exact model", r->iterations, total,
              grit_ilqr_stop_string(r->stop), r->initial_cost, r->cost, 1e3 * err);
  assert_honest(r, "gripper ensemble, exact");
  free(u);
  grip_ens_free(&g);
  task_free(&t);
  return err;
}

/* Issue 28's gripper from its own weight on an ensemble of two smoothings (delta, delta/2), so that each
 * stage's plan must hold the box on the next stage's model too, halved to 5 mm, then exact. NOT reached
 * (docs/ilqr.md, the gripper, stop 14): the stages hold the box on both copies down to (5, 2.5) cm with
 * a squeeze well below the exact model's 1.23 N per finger, and lose it from (2.5, 1.25) cm on. Asserted:
 * the honest stop. */
Test(ilqr_tasks, gripper_from_its_own_weight_stops_honestly_on_an_ensemble) {
  const grip_ens_config c = {.ratio = 0.5, .factor = 0.5, .delta_min = 0.005, .box_mass = 0.2, .mu_scale = 1,
                             .weight = 1, .direct = 0};
  grit_ilqr_result r;
  const double err = gripper_plan_ensemble(&c, &r);
  if (err > 0.01) cr_assert(!r.converged, "converged %.1f mm short of the goal", 1e3 * err);
}
