/* SPDX-License-Identifier: Apache-2.0 */
/* solver_lookahead.c — the Newton direction's model of the contacts that the previous step, taken whole,
 * would have pressed (solver.c calls it before each direction after the first; the first step's models
 * are solver_start.c's). Only the direction changes: the exact line search minimizes the true l along it,
 * the stopping test is the same, and the kept factor is refactored with the exact Hessian at the solution
 * (grit_solver_refactor), so the problem and its minimizer do not change.
 *
 * Why: the exact Hessian of a Lagged contact without normal impulse is zero, so a Newton step is blind to
 * every contact that it closes. Where many stiff contacts are about to engage (MuJoCo's particles in a
 * crate, solref .005: 64 bodies of 3 dofs colliding every step), the step runs them into each other, the
 * line search stops at the first that engages (alpha 0.02-0.5), and the rest enter one iteration at a
 * time: 133 -> 163 contacts pressed over 7 iterations, and near the solution single iterations cut to
 * alpha 0.005 by one contact at the edge. The cut step's direction already says which contacts come
 * next: those off at the new iterate v + alpha dv that the rest of the step, (1 - alpha) dv, would press
 * (v_n + (1 - alpha) dvc_n < v_hat). The next direction models each of them as pressed, with the first
 * step's model of a contact predicted pressed (grit_constraint.gn_start: the normal law's pressed branch
 * continued linearly past the breaking velocity v_hat, gamma_n = G_n (v_hat - v_n), G_n its curvature at
 * v_hat, in the Hessian and the right-hand side, grit_solver_stick_rhs). A contact the model presses
 * wrongly holds the step back by its own G_n only; the next iteration, if its step was not cut, models
 * nothing.
 *
 * A step can also open contacts that the next one closes again: after the first step has pressed a
 * crate's particles into each other, the exact step's line search runs past the Newton step (alpha
 * 1.1-1.5: the contacts that open along the line lose their stiffness), ends with 5-25 contacts open at
 * their edge, and the next direction, blind to them, pushes the particles back into each other and is
 * cut at alpha 0.002-0.05 by the first that re-engages (in 200 steps of the crate, the contacts entering in
 * such a cut step had been pressed earlier in the same solve, nearly all of them). So a contact without
 * friction (mu gamma_n0 = 0: open, it leaves the Hessian altogether) open at v that was pressed at the start
 * of the last step, v - alpha dv (v_n - alpha dvc_n < v_hat), takes the same model in the next direction
 * (grit_solver.no_reopen: not). A contact with friction keeps its tangential block while open; with it
 * too the counts fell a little further (cloth 6.07 -> 5.99, clutter.xml 4.84 -> 4.80) but the iLQR's
 * squeezed gripper (test_ilqr_tasks), whose plans sit on a knife edge, ended 50 mm short. Near the
 * solution the contacts' states stop changing and neither rule models anything: the exact Newton
 * method's end. From the same 200 states of each (docs/performance.md, stop 22), Newton iterations per
 * step: adhesion crate 7.01 -> 5.54, MuJoCo's particle.xml (3 busy steps) 28.0 -> 22.7, cloth 6.17 ->
 * 6.07, grid2pin 2.83 -> 2.66, clutter.xml 4.90 -> 4.84. */
#include <math.h>

#include "solver_state.h"

int grit_solver_predict_engaging(grit_solver *s, double dt, int nact) {
  int n = 0;
  for (int a = 0; a < nact; ++a) {
    const int k = s->act[a];
    const double alpha = ISL(s, ISL_ALPHA)[k];
    const double rest = alpha > 0.0 ? 1.0 - alpha : 0.0; /* the part of the last direction not taken (none
                                                            after no step: the next direction is exact) */
    const int reopen = alpha > 0.0 && !s->no_reopen;
    for (int q = s->isl_start[k]; q < s->isl_start[k + 1]; ++q) {
      grit_constraint *c = &s->c[s->isl_con[q]];
      c->gn_start = 0.0;
      if (!(alpha > 0.0) || !grit_solver_pressable(c)) continue; /* (as the first step's prediction) */
      const double vhat = s->vhat[s->isl_con[q]];
      const int ahead = rest > 0.0 && c->vc[2] + rest * c->dvc[2] < vhat;
      const int opened = reopen && !(c->p.mu * c->p.gn0 != 0.0) && c->vc[2] - alpha * c->dvc[2] < vhat;
      if (!ahead && !opened) continue;
      c->gn_start = grit_solver_pressed_curvature(c, dt, vhat);
      n += c->gn_start > 0.0;
    }
  }
  return n;
}
