/* SPDX-License-Identifier: Apache-2.0 */
/* sysid_internal.h — what src/engine/sysid.c (parameters, rollouts, grit_fit) and src/engine/sysid_fit.c (the fit's
 * engine on timed trajectories) share: small dense algebra and the parameter checks. */
#ifndef GRIT_SYSID_INTERNAL_H
#define GRIT_SYSID_INTERNAL_H

#include "grit/sysid.h"
#include "matmul.h" /* grit_matmul: C = A B */

/* In-place Cholesky of the symmetric n x n matrix (lower triangle); -1 on success, else the column
 * whose pivot is not positive. */
int grit_sysid_cholesky(double *L, int n);
/* Solves L L^T X = B in place for the c columns of B (n x c, row-major). */
void grit_sysid_chol_solve(const double *L, int n, double *B, int c);
/* The inverse right Jacobian of SO(3) at the rotation vector e. */
void grit_sysid_so3_jr_inverse(const double e[3], double J[9]);
/* Kinds and indices valid, none listed twice. */
grit_status grit_sysid_check_params(const grit_model *m, const grit_param *params, int np, char *msg);
const char *grit_sysid_kind_name(grit_param_kind k);
/* The parameters differentiated by central differences of each step (GRIT_PARAM_TAU_D, _INERTIA): for
 * each, the model with its value times exp(+-1e-4) and a data to step it; the others go to
 * grit_step_derivatives. */
typedef struct grit_sysid_fd {
  int n, nan;       /* parameters by differences; the others (analytic) */
  grit_model **m;   /* 2n models: + and - */
  grit_data **d;    /* 2n data */
  double *den;      /* per parameter by differences: 2 eps value */
  int *pos;         /* its position in params */
  grit_param *an;   /* the analytic parameters */
  int *an_pos;      /* their positions in params */
  double *Pa, *col; /* scratch: nx x nan, nx */
} grit_sysid_fd;

/* For the parameters at the values they have in m (all of them are set there). */
grit_status grit_sysid_fd_init(grit_sysid_fd *fd, const grit_model *m, const grit_param *params, int np,
                               const grit_step_settings *st);
void grit_sysid_fd_free(grit_sysid_fd *fd);

/* One step of d and its sensitivities S <- A S + P, Sx <- A Sx (either may be NULL); scratch A (nx^2),
 * P (nx np), tmp (nx max(nx, np) + nu). fd (may be NULL when no parameter is by differences). */
grit_status grit_sysid_advance(grit_data *d, const double *u, const grit_param *params, int np, double *S, double *Sx,
                               double *A, double *P, double *tmp, grit_sysid_fd *fd);

#endif
