/* SPDX-License-Identifier: Apache-2.0 */
/* sysid_fit_internal.h — the fit's state, shared by src/engine/sysid_fit.c (rollouts, normal equations,
 * Levenberg-Marquardt, grit_fit_timed) and src/engine/sysid_fit_stages.c (the coarse stage, the covariance and
 * identifiability). */
#ifndef GRIT_SYSID_FIT_INTERNAL_H
#define GRIT_SYSID_FIT_INTERNAL_H

#include "sysid_internal.h"

typedef struct traj_data {
  int ns;
  double *t;        /* times (a copy, or k h) */
  double *yq;       /* positions with unit quaternions (NaN rows kept) */
  unsigned char *qok, *vok; /* the row's positions / velocities are finite (not masked) */
  int *sj;          /* the step before the sample in its segment's grid */
  double *sa;       /* its fraction of the next step (interpolation weight) */
} traj_data;

typedef struct segment {
  int traj, a, b, first; /* trajectory, first and last samples, first sample with residual rows */
  int nsteps, row0;      /* steps simulated, first residual row */
  double cost;
  grit_status status;
  double *U, *Wm, *bv, *Y, *y, *Vs, *cs; /* Jx^T Jx, Jx^T Jz, Jx^T r, solves, Jz^T Jz, Jz^T r */
} segment;

typedef struct point {
  double *z, *x0, *r, *Jz, *Jx;
  double cost;
} point;

/* Per-thread scratch of the rollouts. */
typedef struct work {
  grit_data *d;
  double *S, *Sx, *A, *P, *tmp, *R, *E;
  grit_sysid_fd fd; /* the parameters by differences, at the point being evaluated */
  char msg[GRIT_MESSAGE_SIZE];
} work;

typedef struct fit {
  const grit_model *model;
  const grit_timed_trajectory *trajs;
  const grit_param *params;
  const grit_fit_options *o;
  int ntraj, np, nq, nv, nu, nx, nxs, nseg, m, shoot, nthreads;
  int traj_offset, traj_total; /* this process's first trajectory among all processes', their count */
  double *trow;                /* per local trajectory rows for ordered_sum (ntraj x (np^2 + 2 np + 3)) */
  double *predt;               /* per local trajectory predicted decrease */
  double h, *wrow, *theta;
  traj_data *td;
  segment *seg;
  work *w;
  /* the evaluation being run by the threads */
  point *pt;
  int derivs;
  const grit_model *mp;
} fit;

/* Sums buf over the processes (nothing with one). */
void grit_sysid_allsum(const fit *f, double *buf, int n);
/* Every trajectory's row of K numbers over all processes, in the global order (allocated; NULL when out
 * of memory, after taking part in the allreduce). */
double *grit_sysid_gather_rows(const fit *f, const double *loc, int K);
/* The reduced damped normal equations over every process; 0 if a block is not positive definite. */
int grit_sysid_reduced_system(fit *f, double lambda, double *R, double *g, double *buf);
/* Rolls every segment out at p (with Jacobians when derivs); sums over processes in the global order. */
grit_status grit_sysid_evaluate(fit *f, point *p, int derivs, const double *predt, double *pred, char *msg);
/* The coarse stage (docs/sysid.md). */
void grit_sysid_coarse_stage(fit *f, point *cur, point *trial, grit_fit_result *res, double *top, double *topc, int K,
                             int *ntop);
/* The covariance of the log-parameters at the optimum and which parameters are identified. */
void grit_sysid_covariance(fit *f, grit_fit_result *res, double *work_np, const double *values, double *std, double *cov,
                           int *identified);

#endif
