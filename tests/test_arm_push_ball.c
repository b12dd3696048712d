/* SPDX-License-Identifier: Apache-2.0 */
/* test_arm_push_ball.c — issue #8's acceptance on the main example's problem (examples/push_problem.h,
 * the same code the example runs): for each contact model, iLQR from 0.9 x gravity compensation, with
 * the reference's cost and the ball's final position as a constraint, meets the constraint and brings the ball
 * within 2 cm of the target 30 cm from its start. The solver's own tolerance on the constraint is 1 mm; the
 * 2 cm asserted is the issue's. The time is logged, not asserted (a loaded machine says nothing about the
 * solver): the speed is measured by bench/bench_ilqr.c. */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/grit.h"
#include "grit_ilqr/grit_dynamics.h"
#include "grit_ilqr/ilqr.h"
#include "push_problem.h"

/* kink_alpha, stall_short: the options examples/arm_push_ball sets, with reg_reset_on_update when
 * stall_short > 0 (0, 0: the solver's defaults). */
static void solve_with(grit_contact_model contact, const char *name, double kink_alpha, int stall_short) {
  char msg[GRIT_MESSAGE_SIZE];
  push_problem pp;
  cr_assert_eq(push_problem_setup(&pp, GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", contact, 0.5, msg), 0,
               "%s", msg);
  pp.settings.rel_tol *= 0.1; /* the example's rollouts, ten times tighter than a simulation's (docs/ilqr.md, stop 16) */
  grit_ilqr_options o = push_problem_options(2);
  o.kink_alpha = kink_alpha;
  o.stall_short_steps = stall_short;
  o.reg_reset_on_update = stall_short > 0; /* the example sets both */
  grit_ilqr_grit *a = NULL;
  grit_ilqr *s = NULL;
  cr_assert_eq(push_problem_solver(&pp, &o, &a, &s, msg), 0, "%s", msg);
  grit_ilqr_result r;
  cr_assert_eq(grit_ilqr_solve(s, &r), GRIT_OK, "%s", grit_ilqr_last_error(s));
  const double err = push_ball_error(&pp, grit_ilqr_states(s) + (size_t)pp.N * pp.nx);
  cr_log_info("%s: %d iterations (%d multiplier updates, %d without a step, %d rollouts), stop %d, cost %.4f, "
              "ball %.1f mm from the target, %.2f s",
              name, r.iterations, r.multiplier_updates, r.no_step_iterations, r.rollouts, (int)r.stop, r.cost,
              1e3 * err, r.t_total);
  grit_ilqr_free(s);
  grit_ilqr_grit_free(a);
  push_problem_free(&pp);
  /* Contact switches leave the last steps short, so the honest stop is a stalled line search with the
   * constraint met (not a proven minimum); converged is also fine. Never an error or a limit. */
  cr_assert(r.converged || (r.stop == GRIT_ILQR_LINE_SEARCH_STALLED && r.violation <= o.tol_constraint),
            "%s: %s", name, grit_ilqr_stop_string(r.stop));
  cr_assert_lt(err, 0.02, "%s: the ball ends %.1f mm from the target (2 cm required)", name, 1e3 * err);
}

static void solve(grit_contact_model contact, const char *name) { solve_with(contact, name, 0, 0); }

Test(arm_push_ball, lagged_reaches_the_target) { solve(GRIT_CONTACT_LAGGED, "lagged"); }
Test(arm_push_ball, similar_reaches_the_target) { solve(GRIT_CONTACT_SIMILAR, "similar"); }
Test(arm_push_ball, sap_reaches_the_target) { solve(GRIT_CONTACT_SAP, "sap"); }
/* The example's own settings (docs/ilqr.md, stops 14 and 15): Jacobians across a kink after alpha <= 2^-7,
 * a run of about 10 short steps ends stalled (an inner run while the ball misses), and mu restarts when the
 * multipliers move. The same honest stop with
 * the constraint met, the same 2 cm. */
Test(arm_push_ball, lagged_with_the_examples_settings_reaches_the_target) {
  solve_with(GRIT_CONTACT_LAGGED, "lagged, kink_alpha 2^-7, stall_short_steps 10", 1.0 / 128, 10);
}
