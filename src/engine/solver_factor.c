/* SPDX-License-Identifier: Apache-2.0 */
/* solver_factor.c — the factor a solve keeps (grit_solver_refactor), as the derivatives use it: whether it
 * is kept, its solves of many right-hand sides (whole, by the parts of the block factor, or columns reached
 * through pointers with only their parts' rows: derivatives_rhs.c), and which factor it is (H's, or A's
 * when the step had no constraint). */
#include "solver.h"

#include "afactor.h"
#include "hessian.h"
#include "solver_state.h"

void grit_solver_keep_factor(grit_solver *s, int allow) { s->no_kept_factor = !allow; }

int grit_solver_factor_kept(const grit_solver *s) { return s->kept_factor; }

grit_status grit_solver_factor_solve(grit_solver *s, double *b, int nrhs) {
  if (s->factor_is_A) {
    if (!s->Achol) return GRIT_ERR_STATE;
    grit_afactor_solve_many(s->m, s->af, s->Achol, b, nrhs, NULL);
    return GRIT_OK;
  }
  return grit_hessian_solve(s->H, b, nrhs);
}

const int *grit_solver_factor_parts(const grit_solver *s, int *nparts) {
  if (!s->factor_is_A) return grit_hessian_parts(s->H, nparts);
  *nparts = s->m->ntree;
  return s->tree_id;
}

grit_status grit_solver_factor_solve_parts(grit_solver *s, double *b, int nrhs, const int *part) {
  if (!part) return grit_solver_factor_solve(s, b, nrhs);
  if (!s->factor_is_A) return grit_hessian_solve_parts(s->H, b, nrhs, part);
  if (!s->Achol) return GRIT_ERR_STATE;
  grit_afactor_solve_many(s->m, s->af, s->Achol, b, nrhs, part);
  return GRIT_OK;
}

int grit_solver_factor_cols(const grit_solver *s) {
  int np;
  return !s->factor_is_A && grit_hessian_parts(s->H, &np) != NULL;
}

grit_status grit_solver_factor_solve_cols(grit_solver *s, double *const *X, int nrhs, const int *part) {
  if (!grit_solver_factor_cols(s)) return GRIT_ERR_STATE;
  return grit_hessian_solve_cols(s->H, X, nrhs, part);
}
