/* SPDX-License-Identifier: Apache-2.0 */
/* test_ilqr_tasks_swing_hop.c — issue 28's tasks without grasping, on the public API only (the builder,
 * grit_step, grit_ilqr and its grit adapter), each asserting its goal on the exact model and an honest stop:
 *   - a cart-pole swings up from hanging to upright under a force limit;
 *   - a planar hopper (a body on a leg with a compliant foot) hops forward;
 *   - a smooth 3-link arm reaches its target, also at its motor limits.
 * The grasping tasks: test_ilqr_tasks.c; the shared helpers: ilqr_task_util.h. */
#include "ilqr_task_util.h"

/* ----------------------------------------------------------------------------------- cart-pole */

/* A 1 kg cart on a slide (+-15 N) carrying a 0.3 kg, 0.6 m rod on a hinge, hanging at q = 0; dt 20 ms,
 * 2.5 s. The goal: upright (hinge angle pi) at rest over the cart at x = 0. 15 N cannot hold the rod
 * out sideways while swinging it straight up, so the plan must pump. The cost is effort (R = 0.01)
 * plus the final state's error; the guess is zero force. No contact: a smooth problem. */
enum { CP_N = 125 };
#define CP_UMAX 15.0
#define CP_R 1e-2

static grit_model *cartpole_build(void) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.02;
  grit_builder_set_options(b, &opt);
  const double zero[3] = {0, 0, 0}, ex[3] = {1, 0, 0};
  const int cart = add_slide(b, 0, zero, ex, 1.0, CP_UMAX, 0.1, 0);
  grit_body_def pole = grit_default_body_def();
  pole.parent = cart;
  pole.mass = 0.3;
  pole.com[2] = -0.3;
  memset(pole.inertia, 0, sizeof pole.inertia);
  pole.inertia[0] = pole.inertia[4] = 0.3 * 0.36 / 12;
  pole.inertia[8] = 1e-5;
  int body = -1;
  cr_assert_eq(grit_builder_add_body(b, &pole, &body), GRIT_OK);
  grit_joint_def h = grit_default_joint_def();
  h.axis[0] = 0, h.axis[1] = 1, h.axis[2] = 0;
  h.damping = 0.01;
  cr_assert_eq(grit_builder_add_joint(b, body, &h, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return compile(b);
}

Test(ilqr_tasks, cartpole_swings_up_with_an_honest_stop) {
  task t;
  task_alloc(&t, cartpole_build(), CP_N);
  const int n = t.ndx;
  t.goal[1] = PI;
  (void)n;
  const double wf[4] = {100, 500, 50, 50};
  for (int i = 0; i < 4; ++i) t.Qf[i * n + i] = wf[i];
  t.R[0] = CP_R;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 300;
  o.tol_cost = 1e-7;
  task_solver(&t, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(t.s, &r), GRIT_OK, "%s", grit_ilqr_last_error(t.s));
  double x[8];
  replay(t.m, t.N, grit_ilqr_controls(t.s), x);
  int saturated = 0;
  for (int k = 0; k < t.N; ++k) saturated += fabs(grit_ilqr_controls(t.s)[k]) >= CP_UMAX - 1e-9;
  cr_log_info("cart-pole: %d iterations, %d rollouts, %d rejected line searches, stop %d (%s), cost %.4g -> %.4g, "
              "gradient %.2g; final x %.4f m, angle %.4f rad, rates %.3f %.3f; %d knots at the force limit",
              r.iterations, r.rollouts, r.rejected_line_searches, (int)r.stop, grit_ilqr_stop_string(r.stop),
              r.initial_cost, r.cost, r.gradient, x[0], x[1], x[2], x[3], saturated);
  assert_honest(&r, "cart-pole");
  /* a smooth problem: the stop is convergence or a line search stalled by the model's nonlinearity,
   * never the regularization limit, a zero gradient or the iteration cap */
  cr_assert(r.converged || r.stop == GRIT_ILQR_LINE_SEARCH_STALLED, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_lt(fabs(x[1] - PI), 0.05, "the rod ends %.3f rad from upright", x[1] - PI);
  cr_assert_lt(fabs(x[0]), 0.05, "the cart ends %.3f m from the origin", x[0]);
  cr_assert_lt(fabs(x[3]), 0.3);
  task_free(&t);
}

/* -------------------------------------------------------------------------------------- hopper */

/* A planar hopper: a 1 kg torso on x and z slides (unactuated), a 0.1 kg thigh on a hip hinge about y
 * (+-5 N m, the angle limited to +-0.5 rad) and a 0.1 kg foot (a 3 cm sphere, friction 1) on a leg slide
 * along the thigh (+-40 N), standing with the foot on the ground 0.25 m below the hip. dt 10 ms, 0.8 s.
 * The goal: the torso 0.3 m forward at rest at its starting height; the guess holds the body up (leg
 * force = weight). q = (x, z, hip, leg). Posed so that the plan must hop and iLQR finds it whatever the
 * round-off (docs/ilqr.md, "The hopper, re-posed"):
 *   - the foot is a compliant pad (contact stiffness 3e4 N/m, 0.4 mm under the hopper's weight): its
 *     contact period 2 pi sqrt(1.1 kg / k) = 38 ms spans four steps, so a step's Jacobian describes what
 *     the next steps do; with the default 1e6 N/m (6.6 ms, under one step) the line searches failed on
 *     most iterations and where the plan stalled (12 to 95 mm short) moved with the Newton tolerance;
 *   - the hip's range lets the torso lean only 0.12-0.14 m past its foot, so 0.3 m needs the foot moved;
 *   - the cost shapes the motion along the way: a running weight on the torso's distance from its goal,
 *     and the swing foot's clearance (HOP_CLEARANCE above the ground at the middle knots, a one-sided
 *     cost), without which the plan slides the foot forward 0.5 mm above the ground instead of hopping. */
enum { HOP_N = 80, HOP_FOOT_BODY = 4, HOP_SWING_K = HOP_N / 2, HOP_SWING_HALF = 2 };
#define HOP_LEG 0.25
#define HOP_R 0.03
#define HOP_DX 0.3
#define HOP_HIP_RANGE 0.5
#define HOP_PAD_STIFFNESS 3e4
#define HOP_CLEARANCE 0.02
#define HOP_CLEARANCE_WEIGHT 1e4

static grit_model *hopper_build(void) {
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.01;
  grit_builder_set_options(b, &opt);
  add_geom(b, 0, GRIT_GEOM_PLANE, 0, 0, 0, NULL, 1.0);
  const double zero[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
  const double hip[3] = {0, 0, HOP_LEG + HOP_R}, down[3] = {0, 0, -HOP_LEG};
  const double hip_range[2] = {-HOP_HIP_RANGE, HOP_HIP_RANGE};
  const int carriage = add_slide(b, 0, hip, ex, 0.01, 0, 0, 0);
  const int torso = add_slide(b, carriage, zero, ez, 1.0, 0, 0, 0);
  const int thigh = add_limited(b, torso, zero, ey, 0.1, 5, 0.01, 1, hip_range);
  const int foot = add_slide(b, thigh, down, ez, 0.1, 40, 1.0, 0);
  cr_assert_eq(foot, HOP_FOOT_BODY);
  grit_geom_def pad = grit_default_geom_def();
  pad.shape.type = GRIT_GEOM_SPHERE;
  pad.shape.size[0] = HOP_R;
  pad.body = foot;
  pad.friction = 1.0;
  pad.stiffness = HOP_PAD_STIFFNESS;
  cr_assert_eq(grit_builder_add_geom(b, &pad, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  return compile(b);
}

/* The swing foot's clearance: at knots HOP_SWING_K +- HOP_SWING_HALF (50 ms), w/2 (h - HOP_CLEARANCE)^2
 * when the foot's height above the ground, h = L + z + (leg - L) cos(hip), is below HOP_CLEARANCE (its
 * Gauss-Newton Hessian); zero elsewhere. */
static int hopper_clearance(void *ctx, int k, const double *x, const double *u, double *l, double *lx, double *lu,
                            double *lxx, double *luu, double *lux) {
  (void)ctx, (void)u;
  enum { n = 8, nu = 2 };
  *l = 0;
  if (lx) memset(lx, 0, sizeof(double) * n);
  if (lxx) memset(lxx, 0, sizeof(double) * n * n);
  if (lu) memset(lu, 0, sizeof(double) * nu);
  if (luu) memset(luu, 0, sizeof(double) * nu * nu);
  if (lux) memset(lux, 0, sizeof(double) * nu * n);
  const double c = cos(x[2]), s = sin(x[2]);
  const double e = HOP_LEG + x[1] + (x[3] - HOP_LEG) * c - HOP_CLEARANCE;
  if (abs(k - HOP_SWING_K) > HOP_SWING_HALF || e >= 0) return 0;
  const double g[4] = {0, 1, -(x[3] - HOP_LEG) * s, c}, w = HOP_CLEARANCE_WEIGHT;
  *l = 0.5 * w * e * e;
  for (int i = 0; i < 4; ++i) {
    if (lx) lx[i] = w * e * g[i];
    for (int j = 0; lxx && j < 4; ++j) lxx[i * n + j] = w * g[i] * g[j];
  }
  return 0;
}

Test(ilqr_tasks, hopper_hops_forward_with_an_honest_stop) {
  task t;
  task_alloc(&t, hopper_build(), HOP_N);
  const int n = t.ndx, nv = n / 2;
  t.goal[0] = HOP_DX;
  t.Q[0] = 1;          /* the torso's distance from its goal along the way */
  t.Q[1 * n + 1] = 10; /* the torso's height along the way */
  t.Qf[0] = t.Qf[1 * n + 1] = 1000;
  for (int i = 0; i < nv; ++i) t.Qf[(nv + i) * n + nv + i] = 10; /* at rest at the end */
  t.R[0] = t.R[1 * t.nu + 1] = 1e-3;
  t.uref[1] = -(0.01 + 1.0 + 0.1) * 9.81; /* the leg holding the body up */
  t.cost = hopper_clearance;
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 200;
  o.tol_cost = 1e-5;
  task_solver(&t, &o);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(t.s, &r), GRIT_OK, "%s", grit_ilqr_last_error(t.s));
  /* replay on the exact model, watching the foot's height */
  grit_data *d = NULL;
  cr_assert_eq(grit_data_create(t.m, &d), GRIT_OK);
  const double *u = grit_ilqr_controls(t.s);
  double flight = 0, pos[3], quat[4];
  for (int k = 0; k < t.N; ++k) {
    cr_assert_eq(grit_data_set_ctrl(d, u + (size_t)k * t.nu, t.nu), GRIT_OK);
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    cr_assert_eq(grit_body_pose(d, HOP_FOOT_BODY, pos, quat), GRIT_OK);
    if (pos[2] - HOP_R > 0.002) flight += grit_model_options(t.m).timestep;
  }
  const double *q = grit_data_qpos(d);
  cr_log_info("hopper: %d iterations, %d rollouts, %d rejected line searches, stop %d (%s), cost %.4g -> %.4g, "
              "gradient %.2g; torso x %.4f m, z %.4f m; foot x %.4f m; %.2f s in the air",
              r.iterations, r.rollouts, r.rejected_line_searches, (int)r.stop, grit_ilqr_stop_string(r.stop),
              r.initial_cost, r.cost, r.gradient, q[0], q[1], pos[0], flight);
  assert_honest(&r, "hopper");
  cr_assert_lt(fabs(q[0] - HOP_DX), 0.02, "the torso ends %.1f mm from its goal", 1e3 * (q[0] - HOP_DX));
  cr_assert_gt(flight, 0.02, "the foot was in the air %.2f s: not a hop", flight);
  cr_assert_gt(pos[0], 0.1, "the foot ends %.0f mm ahead of its start: the torso leaned, it did not hop forward",
               1e3 * pos[0]);
  grit_data_free(d);
  task_free(&t);
}

/* ------------------------------------------------------------------------- a smooth 3-link arm */

/* tests/python/test_ilqr_user.py's arm3 (found by the userqa helper): three links hanging from hinges
 * about y (1, 0.7, 0.4 kg; 0.5 and 0.4 m apart; damping 0.05), unlimited motors, dt 10 ms, no contact.
 * It swings from hanging at rest to (3 pi / 4, -0.5, 0.3) at rest in 0.8 s. */
static grit_model *arm3_build(int limited) {
  const double umax[3] = {20, 15, 8};
  grit_builder *b = NULL;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  opt.timestep = 0.01;
  grit_builder_set_options(b, &opt);
  const double mass[3] = {1, 0.7, 0.4}, off[3] = {0, -0.5, -0.4}, com[3] = {-0.25, -0.2, -0.15};
  const double ixx[3] = {0.02, 0.01, 0.004}, izz[3] = {0.001, 0.001, 0.0005};
  int parent = 0;
  for (int i = 0; i < 3; ++i) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = parent;
    bd.pos[0] = bd.pos[1] = 0, bd.pos[2] = off[i];
    bd.mass = mass[i];
    bd.com[0] = bd.com[1] = 0, bd.com[2] = com[i];
    memset(bd.inertia, 0, sizeof bd.inertia);
    bd.inertia[0] = bd.inertia[4] = ixx[i], bd.inertia[8] = izz[i];
    cr_assert_eq(grit_builder_add_body(b, &bd, &parent), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_joint_def j = grit_default_joint_def();
    j.axis[0] = 0, j.axis[1] = 1, j.axis[2] = 0;
    j.damping = 0.05;
    int joint = -1;
    cr_assert_eq(grit_builder_add_joint(b, parent, &j, &joint), GRIT_OK, "%s", grit_builder_last_error(b));
    grit_actuator_def act = grit_default_actuator_def();
    act.joint = joint;
    if (limited) act.ctrl_limited = 1, act.ctrl_range[0] = -umax[i], act.ctrl_range[1] = umax[i];
    cr_assert_eq(grit_builder_add_actuator(b, &act, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
  }
  return compile(b);
}

/* The arm to its pose; limited: the motors limited to +-20, 15, 8 N m (the solver's bounds too). */
static void arm3_solve(int limited, grit_ilqr_result *r, task *t) {
  task_alloc(t, arm3_build(limited), 80);
  if (!limited) {
    free(t->lo), free(t->hi);
    t->lo = t->hi = NULL; /* unlimited motors */
  }
  const int n = t->ndx;
  const double goal[3] = {0.75 * PI, -0.5, 0.3};
  for (int i = 0; i < 3; ++i) {
    t->goal[i] = goal[i];
    t->Q[i * n + i] = 1, t->Q[(3 + i) * n + 3 + i] = 0.01;
    t->Qf[i * n + i] = 1000, t->Qf[(3 + i) * n + 3 + i] = 100;
    t->R[i * 3 + i] = 1e-3;
  }
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 200;
  task_solver(t, &o);
  cr_assert_eq(grit_ilqr_solve(t->s, r), GRIT_OK, "%s", grit_ilqr_last_error(t->s));
  int saturated = 0;
  for (int k = 0; limited && k < 80 * 3; ++k) saturated += fabs(grit_ilqr_controls(t->s)[k]) >= t->hi[k % 3];
  cr_log_info("arm3 (limited %d): %d iterations, %d rollouts, %d rejected line searches, stop %s, cost %.10g -> %.10g, "
              "gradient %.2g, %d controls at a limit",
              limited, r->iterations, r->rollouts, r->rejected_line_searches, grit_ilqr_stop_string(r->stop),
              r->initial_cost, r->cost, r->gradient, saturated);
  assert_honest(r, "arm3");
}

/* The reference: the solve continued from its converged plan with every tolerance 0 (until no step
 * lowers the cost); the converged cost must be within tol_cost (1e-6) relative of it, as its stop says. */
static void arm3_reference(task *t, const grit_ilqr_result *r) {
  grit_ilqr_options o = grit_ilqr_default_options();
  o.max_iterations = 300;
  o.tol_cost = o.tol_feedforward = 0;
  o.tol_gradient = 1e-300;
  o.log = log_it;
  cr_assert_eq(grit_ilqr_set_options(t->s, &o), GRIT_OK);
  grit_ilqr_result ref;
  cr_assert_eq(grit_ilqr_solve(t->s, &ref), GRIT_OK, "%s", grit_ilqr_last_error(t->s));
  cr_log_info("arm3 reference: %d more iterations, stop %s, cost %.10g", ref.iterations, grit_ilqr_stop_string(ref.stop),
              ref.cost);
  cr_assert_leq(ref.cost, r->cost);
  cr_assert_lt(r->cost - ref.cost, 1e-6 * ref.cost, "converged at %.10g, the reference %.10g", r->cost, ref.cost);
}

/* The arm with its motors limited: 21 of 240 controls end at a limit. The Jacobian column of a control
 * clamped exactly onto its actuator's ctrl_range used to be half the inner one (the clamp's derivative at
 * the tie), so the gradient at the saturated optimum pointed inward: the solve stalled after 15
 * iterations with G = 0.0136 > tol_gradient at cost 68.794237 (with every tolerance 0 it ended there,
 * 68.79423668, after 41). Now it converges after 9, at 68.79206223, within 1e-6 of its reference. */
Test(ilqr_tasks, smooth_arm3_at_its_motor_limits_converges) {
  task t;
  grit_ilqr_result r;
  arm3_solve(1, &r, &t);
  cr_assert(r.converged, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_lt(r.iterations, 40);
  arm3_reference(&t, &r);
  cr_assert_lt(r.cost, 68.7942, "above the old stall");
  task_free(&t);
}

/* Without limits: converged in 5 iterations (cost 3181.49 -> 62.3792). */
Test(ilqr_tasks, smooth_arm3_converges) {
  task t;
  grit_ilqr_result r;
  arm3_solve(0, &r, &t);
  cr_assert(r.converged, "%s", grit_ilqr_stop_string(r.stop));
  cr_assert_lt(r.iterations, 40);
  arm3_reference(&t, &r);
  task_free(&t);
}
