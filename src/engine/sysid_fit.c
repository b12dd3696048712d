/* SPDX-License-Identifier: Apache-2.0 */
/* sysid_fit.c — the fit's engine: Levenberg-Marquardt in log-parameters with multiple shooting on timed
 * trajectories (grit_fit_timed, grit/sysid.h, docs/sysid.md).
 *
 * Unknowns: z = log(theta) (np), then one tangent correction of each segment's initial state (2 nv per
 * segment, multiple shooting). Residuals: per sample, the weighted state error W (x(t_s) (-) y_s) (2 nv
 * rows), x(t_s) interpolated linearly in the tangent space between the steps around t_s; masked rows
 * (NaN in the data) are zero. The normal equations are block-arrow (segments couple only through z):
 * each segment's block is eliminated (Schur complement) and the np x np system solved. Everything that
 * decides a step is a sum over segments taken in a fixed order, then over processes (allreduce_sum), so
 * the result does not depend on the number of threads, and every process takes the same steps. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grit/dynamics.h"
#include "model_internal.h"
#include "status_internal.h"
#include "sysid_fit_internal.h"

const char *grit_fit_stop_string(int stop) {
  switch (stop) {
    case GRIT_FIT_STOP_SMALL_DECREASE: return "small_decrease";
    case GRIT_FIT_STOP_SMALL_STEP: return "small_step";
    case GRIT_FIT_STOP_MAX_ITERS: return "max_iters";
    case GRIT_FIT_STOP_NO_DECREASE: return "no_decrease";
  }
  return "unknown";
}



/* Sums buf over the processes (nothing with one). */
void grit_sysid_allsum(const fit *f, double *buf, int n) {
  if (f->o->allreduce_sum) f->o->allreduce_sum(buf, n, f->o->allreduce_ctx);
}

/* Every trajectory's row of K numbers (loc: this process's, ntraj x K) in one array over all processes
 * (traj_total x K, allocated): each process places its rows at its trajectories' global indices in a
 * zeroed array and the allreduce adds zeros to them, which is exact. NULL when out of memory (after
 * taking part in the allreduce). */
double *grit_sysid_gather_rows(const fit *f, const double *loc, int K) {
  const size_t n = (size_t)f->traj_total * K;
  double *all = calloc(n + 1, sizeof(double));
  double dummy[1] = {0.0};
  if (all) memcpy(all + (size_t)f->traj_offset * K, loc, sizeof(double) * (size_t)f->ntraj * K);
  if (f->o->allreduce_sum) {
    if (all) grit_sysid_allsum(f, all, (int)n);
    else
      for (size_t i = 0; i < n; ++i) grit_sysid_allsum(f, dummy, 1); /* keep the collective calls matched */
  }
  return all;
}

/* out = the sum of the rows in the global trajectory order: the same additions in the same order for
 * any number of processes and threads, hence bitwise the same result. 0 when out of memory. */
static int grit_sysid_ordered_sum(const fit *f, const double *loc, int K, double *out) {
  double *all = grit_sysid_gather_rows(f, loc, K);
  for (int k = 0; k < K; ++k) out[k] = 0.0;
  for (int t = 0; all && t < f->traj_total; ++t)
    for (int k = 0; k < K; ++k) out[k] += all[(size_t)t * K + k];
  free(all);
  return all != NULL;
}

static int rot_dof(const grit_model *m, int dof) {
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j], a = m->jnt_dofadr[j];
    if (type == GRIT_JOINT_FREE && dof >= a + 3 && dof < a + 6) return 1;
    if (type == GRIT_JOINT_BALL && dof >= a && dof < a + 3) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------- one segment's rollout */

/* Adds w times the rows of sample s (state in d, sensitivities in k->S, k->Sx) to its residual rows. */
static void add_sample(fit *f, work *k, point *p, const segment *sg, int s, double w) {
  const int np = f->np, nq = f->nq, nv = f->nv, nx = f->nx, nc = np + (f->shoot ? nx : 0);
  const traj_data *td = &f->td[sg->traj];
  const size_t row = (size_t)sg->row0 + (size_t)(s - sg->first) * nx;
  double *E = k->E; /* the tangent error */
  grit_position_difference(f->model, td->yq + (size_t)s * nq, grit_data_qpos(k->d), E);
  const double *v = grit_data_qvel(k->d), *yv = f->trajs[sg->traj].qvel + (size_t)s * nv;
  for (int i = 0; i < nv; ++i) E[nv + i] = v[i] - yv[i];
  const int use[2] = {td->qok[s], td->vok[s]};
  for (int i = 0; i < nx; ++i)
    if (use[i >= nv]) p->r[row + i] += w * E[i];
  if (!f->derivs) return;
  double *R = k->R; /* nx x nc: [S diag(theta) | Sx] through the manifold difference */
  for (int i = 0; i < nx; ++i) {
    for (int c = 0; c < np; ++c) R[(size_t)i * nc + c] = k->S[(size_t)i * np + c] * f->theta[c];
    if (f->shoot)
      for (int c = 0; c < nx; ++c) R[(size_t)i * nc + np + c] = k->Sx[(size_t)i * nx + c];
  }
  const grit_model *m0 = f->model;
  for (int jn = 0; jn < m0->njnt; ++jn) {
    const int type = m0->jnt_type[jn];
    if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
    const int r0 = m0->jnt_dofadr[jn] + (type == GRIT_JOINT_FREE ? 3 : 0);
    double Ji[9];
    grit_sysid_so3_jr_inverse(E + r0, Ji);
    grit_matmul(Ji, R + (size_t)r0 * nc, k->tmp, 3, 3, nc);
    memcpy(R + (size_t)r0 * nc, k->tmp, sizeof(double) * 3 * (size_t)nc);
  }
  for (int i = 0; i < nx; ++i) {
    if (!use[i >= nv]) continue;
    for (int c = 0; c < np; ++c) p->Jz[(row + i) * np + c] += w * R[(size_t)i * nc + c];
    for (int c = 0; f->shoot && c < nx; ++c) p->Jx[(row + i) * nx + c] += w * R[(size_t)i * nc + np + c];
  }
}

/* Weights (and the Huber loss's reweighting) on the segment's rows; returns its cost. */
static double weigh_rows(const fit *f, point *p, const segment *sg) {
  const int np = f->np, nx = f->nx, nrows = (sg->b - sg->first + 1) * nx;
  const double delta = f->o->huber;
  double cost = 0.0;
  for (int k = sg->row0; k < sg->row0 + nrows; ++k) {
    const double w = f->wrow[(k - sg->row0) % nx];
    double r = p->r[k] * w, sc = w;
    if (delta > 0 && fabs(r) > delta) { /* IRLS: sqrt(psi(r)/r) on the row, the Huber cost itself */
      cost += delta * (fabs(r) - 0.5 * delta);
      const double root = sqrt(delta / fabs(r));
      r *= root, sc *= root;
    } else {
      cost += 0.5 * r * r;
    }
    p->r[k] = r;
    if (!f->derivs) continue;
    for (int c = 0; c < np; ++c) p->Jz[(size_t)k * np + c] *= sc;
    for (int c = 0; f->shoot && c < nx; ++c) p->Jx[(size_t)k * nx + c] *= sc;
  }
  return cost;
}

static grit_status run_segment(fit *f, work *k, point *p, int si) {
  segment *sg = &f->seg[si];
  const int np = f->np, nq = f->nq, nv = f->nv, nu = f->nu, nx = f->nx;
  const grit_timed_trajectory *tr = &f->trajs[sg->traj];
  const traj_data *td = &f->td[sg->traj];
  const double *q0 = f->shoot ? p->x0 + (size_t)si * f->nxs : td->yq + (size_t)sg->a * nq;
  const double *v0 = f->shoot ? q0 + nq : tr->qvel + (size_t)sg->a * nv;
  grit_status s;
  if ((s = grit_data_set_qpos(k->d, q0, nq)) != GRIT_OK || (s = grit_data_set_qvel(k->d, v0, nv)) != GRIT_OK)
    return grit_set_error(k->msg, s, "fit: segment %d's initial state: %s", si, grit_data_last_error(k->d));
  const size_t nrows = (size_t)(sg->b - sg->first + 1) * nx;
  memset(p->r + sg->row0, 0, sizeof(double) * nrows);
  if (f->derivs) {
    memset(p->Jz + (size_t)sg->row0 * np, 0, sizeof(double) * nrows * np);
    if (f->shoot) memset(p->Jx + (size_t)sg->row0 * nx, 0, sizeof(double) * nrows * nx);
    memset(k->S, 0, sizeof(double) * (size_t)nx * np);
    if (f->shoot) {
      memset(k->Sx, 0, sizeof(double) * (size_t)nx * nx);
      for (int i = 0; i < nx; ++i) k->Sx[(size_t)i * nx + i] = 1.0;
    }
  }
  int lo = sg->first, ci = sg->a;
  for (int j = 0;; ++j) {
    for (int smp = lo; smp <= sg->b && td->sj[smp] <= j; ++smp) {
      if (td->sj[smp] == j) add_sample(f, k, p, sg, smp, 1.0 - td->sa[smp]);
      else if (td->sj[smp] == j - 1 && td->sa[smp] > 0) add_sample(f, k, p, sg, smp, td->sa[smp]);
    }
    while (lo <= sg->b && td->sj[lo] < j) lo++;
    if (j == sg->nsteps) break;
    const double time = td->t[sg->a] + j * f->h;
    while (ci < sg->b && td->t[ci + 1] <= time + 1e-9 * f->h) ci++; /* the control held at this time */
    s = grit_sysid_advance(k->d, tr->ctrl ? tr->ctrl + (size_t)ci * nu : NULL, f->params, f->derivs ? np : 0,
                           f->derivs ? k->S : NULL, f->derivs && f->shoot ? k->Sx : NULL, k->A, k->P, k->tmp, &k->fd);
    if (s != GRIT_OK)
      return grit_set_error(k->msg, s, "fit: trajectory %d, step %d after sample %d: %s", sg->traj, j + 1, sg->a,
                            grit_data_last_error(k->d));
  }
  sg->cost = weigh_rows(f, p, sg);
  return GRIT_OK;
}

typedef struct thread_arg {
  fit *f;
  int tid;
} thread_arg;

static void *run_thread(void *arg) {
  const thread_arg *a = arg;
  fit *f = a->f;
  work *k = &f->w[a->tid];
  for (int si = a->tid; si < f->nseg; si += f->nthreads) {
    f->seg[si].status = GRIT_OK;
    if (!k->d) {
      f->seg[si].status = GRIT_ERR_OUT_OF_MEMORY;
      continue;
    }
    f->seg[si].status = run_segment(f, k, f->pt, si);
    if (f->seg[si].status != GRIT_OK) break; /* the caller reports the first failing segment */
  }
  return NULL;
}

/* Rolls every segment out at p (with the Jacobians when derivs); p->cost and *pred (the predicted
 * decreases predt of the local trajectories, may be NULL) are summed over the processes in the global
 * trajectory order. A failure anywhere fails every process. */
grit_status grit_sysid_evaluate(fit *f, point *p, int derivs, const double *predt, double *pred, char *msg) {
  for (int i = 0; i < f->np; ++i) f->theta[i] = exp(p->z[i]);
  grit_model *mp = NULL;
  grit_status s = f->nseg ? grit_model_with_params(f->model, f->params, f->theta, f->np, &mp, msg) : GRIT_OK;
  int T = f->nthreads < f->nseg ? f->nthreads : f->nseg;
  for (int t = 0; s == GRIT_OK && t < T; ++t) {
    f->w[t].d = NULL;
    memset(&f->w[t].fd, 0, sizeof f->w[t].fd);
    if (grit_data_create(mp, &f->w[t].d) != GRIT_OK || grit_data_set_step_settings(f->w[t].d, &f->o->settings) != GRIT_OK ||
        (derivs && grit_sysid_fd_init(&f->w[t].fd, mp, f->params, f->np, &f->o->settings) != GRIT_OK))
      s = grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: cannot create the simulation data (step settings?)");
  }
  for (int si = 0; si < f->nseg; ++si) f->seg[si].status = GRIT_ERR_INVALID_ARGUMENT, f->seg[si].cost = 0.0;
  if (s == GRIT_OK && T > 0) {
    f->pt = p, f->derivs = derivs;
    const int saveT = f->nthreads;
    f->nthreads = T;
    pthread_t th[64];
    thread_arg args[64];
    int started = 0;
    for (int t = 1; t < T; ++t) {
      args[t] = (thread_arg){f, t};
      if (pthread_create(&th[t], NULL, run_thread, &args[t]) != 0) break;
      started = t;
    }
    if (started == T - 1) {
      args[0] = (thread_arg){f, 0};
      run_thread(&args[0]);
    }
    for (int t = 1; t <= started; ++t) pthread_join(th[t], NULL);
    f->nthreads = saveT;
    if (started != T - 1) s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: cannot start the threads");
  }
  double *row = f->trow; /* per trajectory: cost, failure, predicted decrease */
  memset(row, 0, sizeof(double) * 3 * (size_t)f->ntraj);
  for (int t = 0; predt && t < f->ntraj; ++t) row[3 * t + 2] = predt[t];
  if (s != GRIT_OK)
    for (int t = 0; t < f->ntraj; ++t) row[3 * t + 1] = 1.0;
  for (int si = 0; s == GRIT_OK && si < f->nseg; ++si) { /* in segment order: any thread count, same sums */
    if (f->seg[si].status != GRIT_OK) {
      row[3 * f->seg[si].traj + 1] = 1.0;
      s = f->seg[si].status;
      if (msg) {
        for (int t = 0; t < T; ++t) /* the thread that ran segment si holds its message */
          if (si % T == t) memcpy(msg, f->w[t].msg, GRIT_MESSAGE_SIZE);
      }
      break;
    }
    row[3 * f->seg[si].traj] += f->seg[si].cost;
  }
  for (int t = 0; t < T; ++t) grit_data_free(f->w[t].d), f->w[t].d = NULL, grit_sysid_fd_free(&f->w[t].fd);
  grit_model_free(mp);
  double buf[3];
  if (!grit_sysid_ordered_sum(f, row, 3, buf)) buf[1] = 1.0;
  if (s == GRIT_OK && buf[1] > 0) s = grit_set_error(msg, GRIT_ERR_NOT_CONVERGED, "fit: a rollout failed on another process");
  if (s == GRIT_OK && !isfinite(buf[0])) s = grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: the cost is not finite");
  p->cost = buf[0];
  if (pred) *pred = buf[2];
  return s;
}

/* ------------------------------------------------------------------------- normal equations */

/* Each segment's blocks at p: U = Jx^T Jx, Wm = Jx^T Jz, bv = Jx^T r, Vs = Jz^T Jz, cs = Jz^T r. */
static void normal_blocks(fit *f, const point *p) {
  const int np = f->np, nx = f->nx;
  for (int si = 0; si < f->nseg; ++si) {
    segment *sg = &f->seg[si];
    const int rows = (sg->b - sg->first + 1) * nx;
    memset(sg->Vs, 0, sizeof(double) * (size_t)np * (np + 1));
    if (f->shoot) memset(sg->U, 0, sizeof(double) * (size_t)nx * (nx + np + 1));
    for (int k = sg->row0; k < sg->row0 + rows; ++k) {
      const double *jz = p->Jz + (size_t)k * np, rk = p->r[k];
      for (int i = 0; i < np; ++i) {
        sg->cs[i] += jz[i] * rk;
        for (int j = 0; j < np; ++j) sg->Vs[(size_t)i * np + j] += jz[i] * jz[j];
      }
      if (!f->shoot) continue;
      const double *jx = p->Jx + (size_t)k * nx;
      for (int i = 0; i < nx; ++i) {
        if (jx[i] == 0.0) continue;
        sg->bv[i] += jx[i] * rk;
        for (int j = 0; j < nx; ++j) sg->U[(size_t)i * nx + j] += jx[i] * jx[j];
        for (int j = 0; j < np; ++j) sg->Wm[(size_t)i * np + j] += jx[i] * jz[j];
      }
    }
  }
}

/* The reduced damped system over every process: R = V + lambda diag(V) - sum_j Wm_j^T (U_j + lambda
 * diag U_j)^-1 Wm_j and g = -(c - sum_j Wm_j^T (...)^-1 b_j); each segment's solves stay in Y, y. buf:
 * scratch of np^2 + 2 np + 1. Returns 0 if a block is not positive definite on some process. */
int grit_sysid_reduced_system(fit *f, double lambda, double *R, double *g, double *buf) {
  const int np = f->np, nx = f->nx, K = np * np + 2 * np + 1;
  memset(f->trow, 0, sizeof(double) * (size_t)f->ntraj * K);
  int fail = 0;
  for (int si = 0; si < f->nseg && !fail; ++si) {
    segment *sg = &f->seg[si];
    double *Rl = f->trow + (size_t)sg->traj * K, *D = Rl + (size_t)np * np, *gl = D + np;
    for (int i = 0; i < np * np; ++i) Rl[i] += sg->Vs[i];
    for (int i = 0; i < np; ++i) D[i] += sg->Vs[(size_t)i * np + i], gl[i] -= sg->cs[i];
    if (!f->shoot) continue;
    double *L = f->w[0].A; /* nx x nx */
    memcpy(L, sg->U, sizeof(double) * (size_t)nx * nx);
    for (int i = 0; i < nx; ++i) L[(size_t)i * nx + i] += lambda * sg->U[(size_t)i * nx + i];
    if (grit_sysid_cholesky(L, nx) >= 0) {
      fail = 1;
      Rl[K - 1] = 1.0;
      break;
    }
    memcpy(sg->Y, sg->Wm, sizeof(double) * (size_t)nx * np);
    memcpy(sg->y, sg->bv, sizeof(double) * (size_t)nx);
    grit_sysid_chol_solve(L, nx, sg->Y, np);
    grit_sysid_chol_solve(L, nx, sg->y, 1);
    for (int i = 0; i < np; ++i) {
      for (int j = 0; j < np; ++j) {
        double s = 0.0;
        for (int k = 0; k < nx; ++k) s += sg->Wm[(size_t)k * np + i] * sg->Y[(size_t)k * np + j];
        Rl[(size_t)i * np + j] -= s;
      }
      double s = 0.0;
      for (int k = 0; k < nx; ++k) s += sg->Wm[(size_t)k * np + i] * sg->y[k];
      gl[i] += s;
    }
  }
  if (!grit_sysid_ordered_sum(f, f->trow, K, buf)) buf[K - 1] = 1.0;
  const double *Rl = buf, *D = Rl + (size_t)np * np, *gl = D + np;
  for (int i = 0; i < np * np; ++i) R[i] = Rl[i];
  for (int i = 0; i < np; ++i) R[(size_t)i * np + i] += lambda * D[i], g[i] = gl[i];
  /* a parameter without effect on any residual (no information at all) is held where it is, so that
   * it does not stop the others from moving (the covariance reports it as not identified) */
  double dmax = 0.0;
  for (int i = 0; i < np; ++i) dmax = fmax(dmax, D[i]);
  for (int i = 0; lambda > 0 && i < np; ++i) {
    if (D[i] > 1e-14 * dmax) continue;
    for (int j = 0; j < np; ++j) R[(size_t)i * np + j] = R[(size_t)j * np + i] = 0.0;
    R[(size_t)i * np + i] = 1.0, g[i] = 0.0;
  }
  return buf[K - 1] == 0.0;
}

/* The step from the reduced system (R factored in place): dz, and the local segments' ds. */
static int solve_step(fit *f, double *R, const double *g, double *dz, double *ds) {
  const int np = f->np, nx = f->nx;
  if (grit_sysid_cholesky(R, np) >= 0) return 0;
  memcpy(dz, g, sizeof(double) * (size_t)np);
  grit_sysid_chol_solve(R, np, dz, 1);
  for (int si = 0; f->shoot && si < f->nseg; ++si) {
    const segment *sg = &f->seg[si];
    for (int i = 0; i < nx; ++i) {
      double s = -sg->y[i];
      for (int j = 0; j < np; ++j) s -= sg->Y[(size_t)i * np + j] * dz[j];
      ds[(size_t)si * nx + i] = s;
    }
  }
  return 1;
}

/* The decrease the linear model predicts, 1/2 |r|^2 - 1/2 |r + J delta|^2, of each local trajectory. */
static void predicted(const fit *f, const point *p, const double *dz, const double *ds, double *predt) {
  const int np = f->np, nx = f->nx;
  memset(predt, 0, sizeof(double) * (size_t)f->ntraj);
  for (int si = 0; si < f->nseg; ++si) {
    const segment *sg = &f->seg[si];
    double pred = 0.0;
    const int rows = (sg->b - sg->first + 1) * nx;
    for (int k = sg->row0; k < sg->row0 + rows; ++k) {
      double jd = 0.0;
      for (int i = 0; i < np; ++i) jd += p->Jz[(size_t)k * np + i] * dz[i];
      for (int i = 0; f->shoot && i < nx; ++i) jd += p->Jx[(size_t)k * nx + i] * ds[(size_t)si * nx + i];
      pred -= p->r[k] * jd + 0.5 * jd * jd;
    }
    predt[sg->traj] += pred;
  }
}

/* ------------------------------------------------------------------------- setup */

static int row_ok(const grit_model *m, const double *q, int nq) {
  for (int i = 0; i < nq; ++i)
    if (!isfinite(q[i])) return 0;
  for (int j = 0; j < m->njnt; ++j) {
    const int type = m->jnt_type[j];
    if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
    const double *u = q + m->jnt_qposadr[j] + (type == GRIT_JOINT_FREE ? 3 : 0);
    if (!(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3] > 1e-12)) return 0;
  }
  return 1;
}

static int vel_ok(const double *v, int nv) {
  for (int i = 0; i < nv; ++i)
    if (!isfinite(v[i])) return 0;
  return 1;
}

static grit_status check_inputs(const grit_model *model, const grit_timed_trajectory *trajs, int ntraj,
                                const grit_param *params, int np, const double *values, const grit_fit_options *o,
                                char *msg) {
  if (!model || !values || !o) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: model, values and options must not be NULL");
  grit_status s = grit_sysid_check_params(model, params, np, msg);
  if (s != GRIT_OK) return s;
  if (model->na > 0) /* the state here is (q, v); activations are not part of it yet */
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "fit: actuators with dynamics (na = %d) are not supported", model->na);
  for (int i = 0; i < np; ++i)
    if (!isfinite(values[i]) || !(values[i] > 0))
      return grit_set_error(msg, isfinite(values[i]) ? GRIT_ERR_INVALID_ARGUMENT : GRIT_ERR_NOT_FINITE,
                            "fit: the guess of parameter %d (%s) is %g: it must be finite and > 0 (fitted in log space)", i,
                            grit_sysid_kind_name(params[i].kind), values[i]);
  if ((ntraj < 1 && !o->allreduce_sum) || ntraj < 0 || (ntraj > 0 && !trajs))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: no trajectories (ntraj = %d)", ntraj);
  if (o->allreduce_sum && (o->traj_offset < 0 || o->traj_total < 1 || o->traj_offset + ntraj > o->traj_total))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "fit: a distributed fit needs traj_offset >= 0 and traj_offset + ntraj <= traj_total (%d + %d, %d)",
                          o->traj_offset, ntraj, o->traj_total);
  const double sig[4] = {o->position_sigma, o->velocity_sigma, o->orientation_sigma, o->angular_velocity_sigma};
  int bad = o->segment_steps < 0 || o->max_iters < 1 || !(o->tol > 0) || !isfinite(o->tol) || !(o->max_log_step > 0) ||
            !isfinite(o->max_log_step) || !(o->huber >= 0) || !isfinite(o->huber) ||
            (o->coarse_points > 1 && !(o->coarse_span > 1 && isfinite(o->coarse_span))) || o->coarse_points > 64;
  for (int i = 0; i < 4; ++i) bad |= !(i < 2 ? sig[i] > 0 : sig[i] >= 0) || !isfinite(sig[i]);
  if (bad)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "fit: options need segment_steps >= 0, max_iters >= 1, positive finite tol, max_log_step, "
                          "position_sigma and velocity_sigma, orientation_sigma, angular_velocity_sigma and huber >= 0, "
                          "coarse_points <= 64 and coarse_span > 1");
  const int nq = model->nq, nv = model->nv, nu = model->nu;
  for (int t = 0; t < ntraj; ++t) {
    const grit_timed_trajectory *tr = &trajs[t];
    if (tr->nsamples < 2 || !tr->qpos || !tr->qvel)
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                            "fit: trajectory %d needs nsamples >= 2 (nsteps >= 1; has %d), qpos and qvel", t, tr->nsamples);
    for (int k = 0; k < tr->nsamples; ++k) {
      const double *q = tr->qpos + (size_t)k * nq, *v = tr->qvel + (size_t)k * nv;
      for (int i = 0; i < nq + nv; ++i) {
        const double x = i < nq ? q[i] : v[i - nq];
        if (isinf(x)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: trajectory %d, sample %d: an infinite value", t, k);
      }
      if (vel_ok(q, nq) && !row_ok(model, q, nq))
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: trajectory %d, sample %d: a quaternion is zero", t, k);
      if (tr->t && (!isfinite(tr->t[k]) || (k > 0 && !(tr->t[k] > tr->t[k - 1]))))
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: trajectory %d, sample %d: times must be finite and increasing",
                              t, k);
      if (tr->ctrl && k + 1 < tr->nsamples && !vel_ok(tr->ctrl + (size_t)k * nu, nu))
        return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: trajectory %d, sample %d: a control is not finite", t, k);
    }
  }
  return GRIT_OK;
}

/* Observed positions with unit quaternions, masks, times; 0 when out of memory. */
static int prepare_traj(fit *f, int t) {
  const grit_timed_trajectory *tr = &f->trajs[t];
  traj_data *td = &f->td[t];
  const int ns = tr->nsamples, nq = f->nq;
  td->ns = ns;
  td->t = malloc(sizeof(double) * (size_t)ns);
  td->yq = malloc(sizeof(double) * (size_t)ns * nq);
  td->qok = malloc((size_t)ns), td->vok = malloc((size_t)ns);
  td->sj = calloc((size_t)ns, sizeof(int));
  td->sa = calloc((size_t)ns, sizeof(double));
  if (!td->t || !td->yq || !td->qok || !td->vok || !td->sj || !td->sa) return 0;
  memcpy(td->yq, tr->qpos, sizeof(double) * (size_t)ns * nq);
  for (int k = 0; k < ns; ++k) {
    td->t[k] = tr->t ? tr->t[k] : k * f->h;
    double *q = td->yq + (size_t)k * nq;
    td->qok[k] = (unsigned char)row_ok(f->model, q, nq);
    td->vok[k] = (unsigned char)vel_ok(tr->qvel + (size_t)k * f->nv, f->nv);
    for (int j = 0; td->qok[k] && j < f->model->njnt; ++j) {
      const int type = f->model->jnt_type[j];
      if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
      double *u = q + f->model->jnt_qposadr[j] + (type == GRIT_JOINT_FREE ? 3 : 0);
      const double n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
      for (int i = 0; i < 4; ++i) u[i] /= n;
    }
  }
  return 1;
}

/* The segments: samples within segment_steps steps (0: all) of the first; multiple shooting starts the
 * next at the following sample, resetting at the last one. Segments start at samples without a NaN.
 * With seg NULL only counts segments and rows. */
static int make_segments(fit *f, segment *seg, int *rows_out, int *used_out) {
  const int K = f->o->segment_steps, nx = f->nx, nv = f->nv;
  int n = 0, rows = 0, used = 0;
  for (int t = 0; t < f->ntraj; ++t) {
    traj_data *td = &f->td[t];
    const int ns = td->ns;
    int a = 0;
    while (a < ns && !(td->qok[a] && td->vok[a])) a++;
    while (a < ns) {
      int b = a;
      while (b + 1 < ns && (K == 0 || floor((td->t[b + 1] - td->t[a]) / f->h + 0.5) <= K)) b++;
      if (!f->shoot && b == a && b + 1 < ns) b++; /* a gap longer than the segment: still one step */
      const int first = f->shoot ? a : a + 1;
      if (first > b) break;
      int nsteps = 0;
      for (int s = first; s <= b; ++s) {
        const double tau = (td->t[s] - td->t[a]) / f->h;
        int j = (int)floor(tau + 1e-6);
        double al = tau - j;
        if (al < 1e-6) al = 0.0;
        if (seg) td->sj[s] = j, td->sa[s] = al;
        nsteps = j + (al > 0) > nsteps ? j + (al > 0) : nsteps;
        used += (td->qok[s] ? nv : 0) + (td->vok[s] ? nv : 0);
      }
      if (seg) seg[n] = (segment){.traj = t, .a = a, .b = b, .first = first, .nsteps = nsteps, .row0 = rows};
      rows += (b - first + 1) * nx;
      n++;
      a = f->shoot ? b + 1 : (td->qok[b] && td->vok[b] ? b : b + 1);
      while (a < ns && !(td->qok[a] && td->vok[a])) a++;
    }
  }
  *rows_out = rows, *used_out = used;
  return n;
}

/* ------------------------------------------------------------------------- stages of the fit */

static void point_free(point *p) { free(p->z), free(p->x0), free(p->r), free(p->Jz), free(p->Jx); }

static int point_alloc(point *p, const fit *f) {
  memset(p, 0, sizeof *p);
  p->z = malloc(sizeof(double) * (size_t)f->np);
  p->x0 = malloc(sizeof(double) * ((size_t)f->nseg * f->nxs + 1));
  p->r = malloc(sizeof(double) * ((size_t)f->m + 1));
  p->Jz = malloc(sizeof(double) * ((size_t)f->m * f->np + 1));
  p->Jx = malloc(sizeof(double) * ((f->shoot ? (size_t)f->m * f->nx : 0) + 1));
  return p->z && p->x0 && p->r && p->Jz && p->Jx;
}

/* Levenberg-Marquardt from cur (evaluated with derivatives); cur ends at the best point. */
static grit_status levenberg_marquardt(fit *f, point *cur, point *trial, grit_fit_result *res, double *work_np,
                                       double *ds, char *msg) {
  const int np = f->np, nx = f->nx;
  double *R = work_np, *g = R + (size_t)np * np, *dz = g + np, *buf = dz + np;
  double lambda = 1e-3, nu = 2.0;
  res->stop = GRIT_FIT_STOP_MAX_ITERS;
  normal_blocks(f, cur);
  while (res->iterations < f->o->max_iters && !res->converged) {
    if (lambda >= 1e16) {
      res->stop = GRIT_FIT_STOP_NO_DECREASE;
      break;
    }
    res->iterations++;
    if (!grit_sysid_reduced_system(f, lambda, R, g, buf) || !solve_step(f, R, g, dz, ds)) {
      lambda *= nu, nu *= 2;
      continue;
    }
    /* keep each log-parameter's change within max_log_step (a trust region on the relative change) */
    double big = 0.0;
    for (int i = 0; i < np; ++i) big = fmax(big, fabs(dz[i]));
    const double scale = big > f->o->max_log_step ? f->o->max_log_step / big : 1.0;
    for (int i = 0; i < np; ++i) dz[i] *= scale;
    for (int i = 0; f->shoot && i < f->nseg * nx; ++i) ds[i] *= scale;
    double pred = 0.0;
    predicted(f, cur, dz, ds, f->predt);
    for (int i = 0; i < np; ++i) trial->z[i] = cur->z[i] + dz[i];
    for (int si = 0; f->shoot && si < f->nseg; ++si) {
      double *x = trial->x0 + (size_t)si * f->nxs;
      memcpy(x, cur->x0 + (size_t)si * f->nxs, sizeof(double) * (size_t)f->nxs);
      grit_integrate_positions(f->model, x, ds + (size_t)si * nx, 1.0);
      for (int i = 0; i < f->nv; ++i) x[f->nq + i] += ds[(size_t)si * nx + f->nv + i];
    }
    char tmsg[GRIT_MESSAGE_SIZE];
    const grit_status ts = grit_sysid_evaluate(f, trial, 1, f->predt, &pred, tmsg);
    res->evaluations++;
    const double actual = ts == GRIT_OK ? cur->cost - trial->cost : -1.0;
    if (ts == GRIT_OK && actual > 0 && pred > 0) {
      const double rho = actual / pred;
      const int small_step = big * scale <= sqrt(f->o->tol), small_decrease = actual <= f->o->tol * cur->cost;
      res->converged = lambda <= 1.0 && (small_step || small_decrease);
      if (res->converged) res->stop = small_decrease ? GRIT_FIT_STOP_SMALL_DECREASE : GRIT_FIT_STOP_SMALL_STEP;
      const point t = *cur;
      *cur = *trial, *trial = t;
      normal_blocks(f, cur);
      const double q = 2 * rho - 1;
      lambda *= fmax(1.0 / 3.0, 1.0 - q * q * q);
      nu = 2.0;
    } else {
      lambda *= nu, nu *= 2;
    }
  }
  (void)msg;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------- grit_fit_timed */

static void fit_free(fit *f, point *cur, point *trial) {
  point_free(cur), point_free(trial);
  for (int t = 0; f->td && t < f->ntraj; ++t) {
    traj_data *td = &f->td[t];
    free(td->t), free(td->yq), free(td->qok), free(td->vok), free(td->sj), free(td->sa);
  }
  for (int t = 0; f->w && t < f->nthreads; ++t) {
    work *k = &f->w[t];
    free(k->S), free(k->Sx), free(k->A), free(k->P), free(k->tmp), free(k->R), free(k->E);
  }
  if (f->seg && f->nseg > 0) free(f->seg[0].U);
  free(f->td), free(f->w), free(f->seg), free(f->wrow), free(f->theta), free(f->trow), free(f->predt);
}

/* Allocates everything after the segments are known; 0 when out of memory. */
static int fit_alloc(fit *f, point *cur, point *trial) {
  const int np = f->np, nx = f->nx, nc = np + nx, big = (nx > np ? nx : np) + 1;
  int ok = point_alloc(cur, f) & point_alloc(trial, f);
  f->wrow = malloc(sizeof(double) * (size_t)nx);
  f->theta = malloc(sizeof(double) * (size_t)np);
  f->w = calloc((size_t)f->nthreads, sizeof *f->w);
  f->trow = malloc(sizeof(double) * ((size_t)f->ntraj * ((size_t)np * np + 2 * (size_t)np + 3) + 1));
  f->predt = malloc(sizeof(double) * ((size_t)f->ntraj + 1));
  ok = ok && f->wrow && f->theta && f->w && f->trow && f->predt;
  for (int t = 0; ok && t < f->nthreads; ++t) {
    work *k = &f->w[t];
    k->S = malloc(sizeof(double) * (size_t)nx * np);
    k->Sx = malloc(sizeof(double) * (size_t)nx * nx);
    k->A = malloc(sizeof(double) * (size_t)nx * nx);
    k->P = malloc(sizeof(double) * (size_t)nx * (np + 1));
    k->tmp = malloc(sizeof(double) * ((size_t)big * nc + (size_t)f->nu + 64 + (size_t)np));
    k->R = malloc(sizeof(double) * (size_t)nx * nc);
    k->E = malloc(sizeof(double) * (size_t)nx);
    ok = k->S && k->Sx && k->A && k->P && k->tmp && k->R && k->E;
  }
  const size_t per = (size_t)nx * (nx + 2 * (size_t)np + 2) + (size_t)np * (np + 1);
  double *blocks = f->nseg ? malloc(sizeof(double) * per * (size_t)f->nseg) : NULL;
  ok = ok && (blocks || !f->nseg);
  for (int si = 0; ok && si < f->nseg; ++si) {
    segment *sg = &f->seg[si];
    sg->U = blocks + per * si, sg->Wm = sg->U + (size_t)nx * nx, sg->bv = sg->Wm + (size_t)nx * np;
    sg->Y = sg->bv + nx, sg->y = sg->Y + (size_t)nx * np, sg->Vs = sg->y + nx, sg->cs = sg->Vs + (size_t)np * np;
  }
  if (!ok) free(blocks);
  return ok;
}

/* The fit's sizes and settings from the model, the trajectories and the options. */
static void fit_init(fit *f, const grit_model *model, const grit_timed_trajectory *trajs, int ntraj,
                     const grit_param *params, int np, const grit_fit_options *o) {
  memset(f, 0, sizeof *f);
  f->model = model, f->trajs = trajs, f->ntraj = ntraj, f->params = params, f->np = np, f->o = o;
  f->nq = model->nq, f->nv = model->nv, f->nu = model->nu, f->nx = 2 * model->nv, f->nxs = f->nq + f->nv;
  f->shoot = o->fit_initial_states != 0;
  f->h = model->opt.timestep;
  f->nthreads = o->nthreads > 1 ? (o->nthreads < 64 ? o->nthreads : 64) : 1;
  f->traj_offset = o->allreduce_sum ? o->traj_offset : 0;
  f->traj_total = o->allreduce_sum ? o->traj_total : ntraj;
}

/* The trajectories' samples, the segments and every workspace; *used: the residual rows. 0: out of memory. */
static int fit_prepare(fit *f, point *cur, point *trial, int *used) {
  f->td = calloc((size_t)f->ntraj + 1, sizeof *f->td);
  int ok = f->td != NULL;
  for (int t = 0; ok && t < f->ntraj; ++t) ok = prepare_traj(f, t);
  *used = 0;
  if (ok) {
    f->nseg = make_segments(f, NULL, &f->m, used);
    f->seg = calloc((size_t)f->nseg + 1, sizeof *f->seg);
    if (f->seg) make_segments(f, f->seg, &f->m, used);
    ok = f->seg && fit_alloc(f, cur, trial);
  }
  return ok;
}

/* The residual weights (1 / sigma per state row) and the starting point: log-parameters from the guesses,
 * each segment's initial state from its first sample. */
static void fit_start_point(fit *f, point *cur, const double *values) {
  const grit_fit_options *o = f->o;
  const int nq = f->nq;
  for (int i = 0; i < f->nx; ++i) {
    const int rot = rot_dof(f->model, i % f->nv), vel = i >= f->nv;
    const double sp = rot && o->orientation_sigma > 0 ? o->orientation_sigma : o->position_sigma;
    const double sv = rot && o->angular_velocity_sigma > 0 ? o->angular_velocity_sigma : o->velocity_sigma;
    f->wrow[i] = 1.0 / (vel ? sv : sp);
  }
  for (int i = 0; i < f->np; ++i) cur->z[i] = log(values[i]);
  for (int si = 0; si < f->nseg; ++si) {
    const segment *sg = &f->seg[si];
    memcpy(cur->x0 + (size_t)si * f->nxs, f->td[sg->traj].yq + (size_t)sg->a * nq, sizeof(double) * (size_t)nq);
    memcpy(cur->x0 + (size_t)si * f->nxs + nq, f->trajs[sg->traj].qvel + (size_t)sg->a * f->nv,
           sizeof(double) * (size_t)f->nv);
  }
}

/* The starts: one (the coarse stage's best point, or the guesses), or multi-start (options->starts): the
 * guesses and the best other grid points, each to the end of Levenberg-Marquardt; the lowest cost wins
 * and is left in cur, with its normal blocks for the covariance. */
static grit_status run_starts(fit *f, point *cur, point *trial, grit_fit_result *res, double *wnp, double *ds,
                              char msg[GRIT_MESSAGE_SIZE]) {
  const grit_fit_options *o = f->o;
  const int np = f->np;
  grit_status s = GRIT_OK;
  const int S = o->starts > 1 ? (o->starts < 64 ? o->starts : 64) : 1;
  const size_t nx0 = (size_t)f->nseg * f->nxs + 1;
  int ntop = 0;
  double *top = malloc(sizeof(double) * (size_t)S * np), *topc = malloc(sizeof(double) * (size_t)S);
  double *x0obs = malloc(sizeof(double) * nx0), *bx0 = malloc(sizeof(double) * nx0);
  double *zg = malloc(sizeof(double) * (size_t)np), *bz = malloc(sizeof(double) * (size_t)np);
  if (!top || !topc || !x0obs || !bx0 || !zg || !bz) {
    free(top), free(topc), free(x0obs), free(bx0), free(zg), free(bz);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
  }
  memcpy(x0obs, cur->x0, sizeof(double) * nx0);
  memcpy(zg, cur->z, sizeof(double) * (size_t)np);
  if (o->coarse_points > 1) grit_sysid_coarse_stage(f, cur, trial, res, top, topc, S - 1, &ntop);
  const int nstarts = S > 1 ? 1 + ntop : 1;
  double best_cost = INFINITY;
  grit_fit_result best = *res;
  for (int st = 0; st < nstarts && s == GRIT_OK; ++st) {
    if (S > 1) {
      memcpy(cur->z, st == 0 ? zg : top + (size_t)(st - 1) * np, sizeof(double) * (size_t)np);
      memcpy(cur->x0, x0obs, sizeof(double) * nx0);
    }
    grit_fit_result r = *res;
    r.iterations = 0, r.converged = 0;
    r.evaluations++;
    char tmsg[GRIT_MESSAGE_SIZE];
    grit_status es = grit_sysid_evaluate(f, cur, 1, NULL, NULL, tmsg);
    if (es == GRIT_OK) es = levenberg_marquardt(f, cur, trial, &r, wnp, ds, tmsg);
    res->evaluations = r.evaluations;
    if (es != GRIT_OK && nstarts == 1) s = grit_set_error(msg, es, "%s", tmsg);
    if (es == GRIT_OK && cur->cost < best_cost) {
      best_cost = cur->cost, best = r, best.start = st;
      memcpy(bz, cur->z, sizeof(double) * (size_t)np);
      memcpy(bx0, cur->x0, sizeof(double) * nx0);
    }
  }
  if (s == GRIT_OK && !(best_cost < INFINITY)) s = grit_set_error(msg, GRIT_ERR_NOT_CONVERGED, "fit: every start failed");
  if (s == GRIT_OK && nstarts > 1) { /* back to the winner, its blocks for the covariance */
    memcpy(cur->z, bz, sizeof(double) * (size_t)np);
    memcpy(cur->x0, bx0, sizeof(double) * nx0);
    res->evaluations++;
    if ((s = grit_sysid_evaluate(f, cur, 1, NULL, NULL, msg)) == GRIT_OK) normal_blocks(f, cur);
  }
  free(top), free(topc), free(x0obs), free(bx0), free(zg), free(bz);
  if (s == GRIT_OK) {
    res->iterations = best.iterations, res->converged = best.converged, res->stop = best.stop;
    res->start = best.start, res->nstarts = nstarts;
  }
  return s;
}

grit_status grit_fit_timed(const grit_model *model, const grit_timed_trajectory *trajs, int ntraj,
                           const grit_param *params, int np, double *values, const grit_fit_options *options,
                           grit_fit_result *result, double *std, double *cov, int *identified,
                           char msg[GRIT_MESSAGE_SIZE]) {
  const grit_fit_options defaults = grit_default_fit_options();
  const grit_fit_options *o = options ? options : &defaults;
  grit_status s = check_inputs(model, trajs, ntraj, params, np, values, o, msg);
  if (s != GRIT_OK) return s;
  fit f;
  point cur, trial;
  memset(&cur, 0, sizeof cur), memset(&trial, 0, sizeof trial);
  fit_init(&f, model, trajs, ntraj, params, np, o);
  int used = 0;
  const int ok = fit_prepare(&f, &cur, &trial, &used);
  double *wnp = malloc(sizeof(double) * (3 * (size_t)np * np + 6 * (size_t)np + 4));
  double *ds = malloc(sizeof(double) * ((size_t)f.nseg * f.nx + 1));
  if (!ok || !wnp || !ds) {
    s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
    goto done;
  }
  grit_fit_result res;
  memset(&res, 0, sizeof res);
  {
    double counts[3] = {used, f.nseg, ntraj};
    grit_sysid_allsum(&f, counts, 3);
    res.nresiduals = (int)counts[0], res.nsegments = (int)counts[1], res.ntrajectories = (int)counts[2];
    res.nunknowns = np + (f.shoot ? f.nx * res.nsegments : 0);
  }
  if (res.nsegments == 0 || res.nresiduals == 0) {
    s = grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: no sample without a NaN to start a segment or to compare");
    goto done;
  }
  fit_start_point(&f, &cur, values);
  res.evaluations = 1;
  if ((s = grit_sysid_evaluate(&f, &cur, 0, NULL, NULL, msg)) != GRIT_OK) goto done;
  res.initial_cost = res.coarse_cost = cur.cost;
  if ((s = run_starts(&f, &cur, &trial, &res, wnp, ds, msg)) != GRIT_OK) goto done;
  res.cost = cur.cost;
  res.rms = sqrt(2 * cur.cost / res.nresiduals);
  res.sigma2 = res.nresiduals > res.nunknowns ? 2 * cur.cost / (res.nresiduals - res.nunknowns) : NAN;
  for (int i = 0; i < np; ++i) values[i] = exp(cur.z[i]);
  grit_sysid_covariance(&f, &res, wnp, values, std, cov, identified);
  if (result) *result = res;
  if (msg) msg[0] = '\0';
done:
  free(wnp), free(ds);
  fit_free(&f, &cur, &trial);
  return s;
}
