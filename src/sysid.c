/* SPDX-License-Identifier: Apache-2.0 */
/* sysid.c — fitting contact parameters and masses to observed trajectories (grit/sysid.h, docs/sysid.md).
 *
 * Unknowns: z = log(theta) (np numbers), then, with multiple shooting, one tangent-space correction of
 * each segment's initial state (2 nv numbers per segment). Residuals: per used sample, the weighted
 * state error W (x (-) y) (2 nv numbers). The Jacobian rows of a sample are W Jc [S diag(theta) | Sx]
 * with the rollout's forward sensitivities S = dx/dtheta and Sx = dx/ds, and Jc the derivative of the
 * manifold difference (the inverse right Jacobian of SO(3) on the rotation rows of ball and free joints,
 * identity elsewhere). The normal equations are block-arrow (segments couple only through z), solved
 * by eliminating each segment's block (Schur complement on z). */
#include "grit/sysid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grit/dynamics.h"
#include "model_internal.h"
#include "status_internal.h"

grit_fit_options grit_default_fit_options(void) {
  grit_fit_options o;
  memset(&o, 0, sizeof o);
  o.settings = grit_default_step_settings();
  o.settings.rel_tol = 1e-8;
  o.segment_steps = 100;
  o.fit_initial_states = 1;
  o.position_sigma = 1e-3;
  o.velocity_sigma = 1e-2;
  o.max_iters = 100;
  o.tol = 1e-10;
  o.max_log_step = 1.0;
  return o;
}

static const char *kind_name(grit_param_kind k) {
  switch (k) {
    case GRIT_PARAM_FRICTION: return "friction";
    case GRIT_PARAM_STIFFNESS: return "stiffness";
    case GRIT_PARAM_DISSIPATION: return "dissipation";
    case GRIT_PARAM_MASS: return "mass";
  }
  return "unknown";
}

/* Checks kinds and indices, and that no parameter is listed twice (a contact kind both for every
 * geometry and for one counts as twice: the two would not be separable). */
static grit_status check_params(const grit_model *m, const grit_param *params, int np, char *msg) {
  if (np < 1 || !params) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "no parameters to fit (np = %d)", np);
  for (int i = 0; i < np; ++i) {
    const grit_param *p = &params[i];
    if (p->kind == GRIT_PARAM_MASS) {
      if (p->index < 1 || p->index >= m->nbody)
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameter %d: mass of body %d: no such body (1..%d)", i,
                              p->index, m->nbody - 1);
    } else if (p->kind >= GRIT_PARAM_FRICTION && p->kind <= GRIT_PARAM_DISSIPATION) {
      if (p->index < -1 || p->index >= m->ngeom)
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                              "parameter %d: %s of geometry %d: no such geometry (-1 for all, 0..%d)", i,
                              kind_name(p->kind), p->index, m->ngeom - 1);
    } else {
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameter %d: unknown kind %d", i, (int)p->kind);
    }
    for (int j = 0; j < i; ++j) {
      const grit_param *o = &params[j];
      if (o->kind == p->kind &&
          (o->index == p->index || (p->kind != GRIT_PARAM_MASS && (o->index < 0 || p->index < 0))))
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameters %d and %d both set the %s of %s %d", j, i,
                              kind_name(p->kind), p->kind == GRIT_PARAM_MASS ? "body" : "geometry", p->index);
    }
  }
  return GRIT_OK;
}

grit_status grit_model_with_params(const grit_model *model, const grit_param *params, const double *values, int np,
                                   grit_model **out, char msg[GRIT_MESSAGE_SIZE]) {
  if (!out) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: out is NULL");
  *out = NULL;
  if (!model) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: model is NULL");
  if (np < 0 || (np > 0 && (!params || !values)))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: %d parameters need params and values", np);
  for (int i = 0; i < np; ++i) {
    const grit_param *p = &params[i];
    const int ok = p->kind == GRIT_PARAM_MASS ? (p->index >= 1 && p->index < model->nbody)
                   : (p->kind >= GRIT_PARAM_FRICTION && p->kind <= GRIT_PARAM_DISSIPATION)
                       ? (p->index >= -1 && p->index < model->ngeom)
                       : 0;
    if (!ok)
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: parameter %d (kind %d, index %d) does not exist",
                            i, (int)p->kind, p->index);
    const double v = values[i];
    if (!isfinite(v)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "model_with_params: value %d is not finite", i);
    const int strict = p->kind == GRIT_PARAM_STIFFNESS || p->kind == GRIT_PARAM_MASS;
    if (strict ? !(v > 0) : !(v >= 0))
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: %s %g must be %s", kind_name(p->kind), v,
                            strict ? "> 0" : ">= 0");
  }
  grit_model *r;
  grit_status s = grit_model_copy(model, &r);
  if (s != GRIT_OK) return grit_set_error(msg, s, "model_with_params: out of memory");
  for (int i = 0; i < np; ++i) {
    const grit_param *p = &params[i];
    if (p->kind == GRIT_PARAM_MASS) {
      const int b = p->index;
      const double f = values[i] / r->body_mass[b];
      r->body_mass[b] = values[i];
      for (int k = 0; k < 9; ++k) r->body_inertia[9 * b + k] *= f;
      continue;
    }
    double *arr = p->kind == GRIT_PARAM_FRICTION ? r->geom_friction
                  : p->kind == GRIT_PARAM_STIFFNESS ? r->geom_stiffness
                                                    : r->geom_dissipation;
    for (int g = 0; g < r->ngeom; ++g)
      if (p->index < 0 || p->index == g) arr[g] = values[i];
  }
  *out = r;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------- small dense algebra */

/* C (r x c) = A (r x k) B (k x c), row-major; C may not alias. */
static void matmul(const double *A, const double *B, double *C, int r, int k, int c) {
  for (int i = 0; i < r; ++i) {
    double *ci = C + (size_t)i * c;
    for (int j = 0; j < c; ++j) ci[j] = 0.0;
    for (int l = 0; l < k; ++l) {
      const double a = A[(size_t)i * k + l];
      if (a == 0.0) continue;
      const double *bl = B + (size_t)l * c;
      for (int j = 0; j < c; ++j) ci[j] += a * bl[j];
    }
  }
}

/* In-place Cholesky of the symmetric n x n matrix (lower triangle used and overwritten); 0 if it is not
 * positive definite. */
static int cholesky(double *L, int n) {
  for (int j = 0; j < n; ++j) {
    double d = L[(size_t)j * n + j];
    for (int k = 0; k < j; ++k) d -= L[(size_t)j * n + k] * L[(size_t)j * n + k];
    if (!(d > 0.0) || !isfinite(d)) return 0;
    d = sqrt(d);
    L[(size_t)j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = L[(size_t)i * n + j];
      for (int k = 0; k < j; ++k) s -= L[(size_t)i * n + k] * L[(size_t)j * n + k];
      L[(size_t)i * n + j] = s / d;
    }
  }
  return 1;
}

/* Solves L L^T X = B in place for c right-hand sides stored as the columns of B (n x c, row-major). */
static void chol_solve(const double *L, int n, double *B, int c) {
  for (int col = 0; col < c; ++col) {
    for (int i = 0; i < n; ++i) {
      double s = B[(size_t)i * c + col];
      for (int k = 0; k < i; ++k) s -= L[(size_t)i * n + k] * B[(size_t)k * c + col];
      B[(size_t)i * c + col] = s / L[(size_t)i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
      double s = B[(size_t)i * c + col];
      for (int k = i + 1; k < n; ++k) s -= L[(size_t)k * n + i] * B[(size_t)k * c + col];
      B[(size_t)i * c + col] = s / L[(size_t)i * n + i];
    }
  }
}

/* The inverse right Jacobian of SO(3) at the rotation vector e: log(exp(e) exp(d)) = e + Jr^-1(e) d + O(d^2). */
static void so3_right_jacobian_inverse(const double e[3], double J[9]) {
  const double t2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2], t = sqrt(t2);
  /* 1/t^2 - (1 + cos t)/(2 t sin t), by its series below 1e-3 rad */
  const double c = t < 1e-3 ? 1.0 / 12.0 + t2 / 720.0 : 1.0 / t2 - (1.0 + cos(t)) / (2.0 * t * sin(t));
  const double K[9] = {0, -e[2], e[1], e[2], 0, -e[0], -e[1], e[0], 0};
  double K2[9];
  matmul(K, K, K2, 3, 3, 3);
  for (int i = 0; i < 9; ++i) J[i] = (i % 4 == 0 ? 1.0 : 0.0) + 0.5 * K[i] + c * K2[i];
}

/* ------------------------------------------------------------------------- rollouts */

/* One step of the data and its sensitivities: S <- A S + P (nx x np), Sx <- A Sx (nx x nx); either may
 * be NULL. A, P and tmp are scratch (nx*nx, nx*np, nx*max(nx,np)). */
static grit_status advance(grit_data *d, const double *u, const grit_param *params, int np, double *S, double *Sx,
                           double *A, double *P, double *tmp) {
  const grit_model *m = grit_data_model(d);
  const int nx = 2 * m->nv, nu = m->nu;
  grit_status s = GRIT_OK;
  if (nu > 0) {
    if (u) s = grit_data_set_ctrl(d, u, nu);
    else {
      for (int i = 0; i < nu; ++i) tmp[i] = 0.0;
      s = grit_data_set_ctrl(d, tmp, nu);
    }
    if (s != GRIT_OK) return s;
  }
  s = grit_step(d);
  if (s != GRIT_OK) return s;
  if (!S && !Sx) return GRIT_OK;
  s = grit_step_derivatives(d, A, NULL, S ? params : NULL, S ? np : 0, S ? P : NULL);
  if (s != GRIT_OK) return s;
  if (S) {
    matmul(A, S, tmp, nx, nx, np);
    for (int i = 0; i < nx * np; ++i) S[i] = tmp[i] + P[i];
  }
  if (Sx) {
    matmul(A, Sx, tmp, nx, nx, nx);
    memcpy(Sx, tmp, sizeof(double) * (size_t)nx * (size_t)nx);
  }
  return GRIT_OK;
}

static int all_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

grit_status grit_rollout_sensitivities(const grit_model *model, const grit_step_settings *settings, const double *x0,
                                       const double *ctrl, int nsteps, const grit_param *params, int np,
                                       double *states, double *S, double *Sx, char msg[GRIT_MESSAGE_SIZE]) {
  if (!model || !x0) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "rollout: model and x0 must not be NULL");
  if (nsteps < 0) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "rollout: nsteps %d < 0", nsteps);
  if (np < 0 || (np > 0 && !params)) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "rollout: %d parameters need params", np);
  if (np > 0) {
    grit_status s = check_params(model, params, np, msg);
    if (s != GRIT_OK) return s;
  }
  const int nq = model->nq, nv = model->nv, nu = model->nu, nx = 2 * nv, nxs = nq + nv;
  if (!all_finite(x0, (size_t)nxs) || (ctrl && !all_finite(ctrl, (size_t)nsteps * (size_t)nu)))
    return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "rollout: the initial state or the controls are not finite");
  grit_data *d = NULL;
  const size_t wn = (size_t)nx * (size_t)nx + (size_t)nx * (size_t)(np + 1) +
                    (size_t)nx * (size_t)(nx > np ? nx : np) + (size_t)nu + 2 * (size_t)nx * (size_t)(nx + np) + 1;
  double *w = malloc(sizeof(double) * wn);
  grit_status s = w ? grit_data_create(model, &d) : GRIT_ERR_OUT_OF_MEMORY;
  if (s != GRIT_OK) {
    free(w);
    return grit_set_error(msg, s, "rollout: cannot create the simulation data");
  }
  double *A = w, *P = A + (size_t)nx * nx, *tmp = P + (size_t)nx * (np + 1);
  double *Sc = tmp + (size_t)nx * (nx > np ? nx : np) + nu, *Sxc = Sc + (size_t)nx * np;
  if (settings) s = grit_data_set_step_settings(d, settings);
  if (s == GRIT_OK) s = grit_data_set_qpos(d, x0, nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, x0 + nq, nv);
  if (s != GRIT_OK) {
    grit_set_error(msg, s, "rollout: %s", grit_data_last_error(d));
    grit_data_free(d);
    free(w);
    return s;
  }
  memset(Sc, 0, sizeof(double) * (size_t)nx * np);
  memset(Sxc, 0, sizeof(double) * (size_t)nx * nx);
  for (int i = 0; i < nx; ++i) Sxc[(size_t)i * nx + i] = 1.0;
  for (int k = 0;; ++k) {
    if (states) {
      memcpy(states + (size_t)k * nxs, grit_data_qpos(d), sizeof(double) * (size_t)nq);
      memcpy(states + (size_t)k * nxs + nq, grit_data_qvel(d), sizeof(double) * (size_t)nv);
    }
    if (S) memcpy(S + (size_t)k * nx * np, Sc, sizeof(double) * (size_t)nx * np);
    if (Sx) memcpy(Sx + (size_t)k * nx * nx, Sxc, sizeof(double) * (size_t)nx * nx);
    if (k == nsteps) break;
    s = advance(d, ctrl ? ctrl + (size_t)k * nu : NULL, params, np, S ? Sc : NULL, Sx ? Sxc : NULL, A, P, tmp);
    if (s != GRIT_OK) {
      grit_set_error(msg, s, "rollout: step %d: %s", k + 1, grit_data_last_error(d));
      break;
    }
  }
  grit_data_free(d);
  free(w);
  return s;
}

/* ------------------------------------------------------------------------- the fit */

typedef struct segment {
  int traj, a, nsteps; /* trajectory, first sample, steps simulated */
  int row0;            /* first residual row */
  double *x0;          /* (nq + nv) its initial state (multiple shooting) */
  double *U, *Wm, *b;  /* Jx^T Jx (nx x nx), Jx^T Jz (nx x np), Jx^T r (nx) at the current point */
  double *Y, *y;       /* (U + lambda D)^-1 Wm and (U + lambda D)^-1 b of the last solve */
} segment;

/* The current point or a trial: unknowns, residuals and Jacobian rows. */
typedef struct point {
  double *z;    /* (np) log-parameters */
  double *x0;   /* (nseg (nq + nv)) segments' initial states */
  double *r;    /* (m) weighted residuals */
  double *Jz;   /* (m x np) */
  double *Jx;   /* (m x nx) (multiple shooting) */
  double cost;
} point;

typedef struct fit {
  const grit_model *model;
  const grit_trajectory *trajs;
  const grit_param *params;
  int np, nq, nv, nu, nx, nxs, nseg, m, shoot;
  const grit_fit_options *o;
  double **yq;  /* per trajectory, observed positions with unit quaternions */
  segment *seg;
  double *wrow; /* (nx) weights per residual row of a sample */
  /* scratch */
  double *S, *Sx, *A, *P, *tmp, *rows;
  grit_data *data; /* of the model at the point being evaluated */
} fit;

/* Rolls every segment out at point p (its z and x0), writing residuals and Jacobian rows. */
static grit_status evaluate(fit *f, point *p, char *msg) {
  const grit_model *m0 = f->model;
  const int np = f->np, nq = f->nq, nv = f->nv, nu = f->nu, nx = f->nx;
  double theta[64];
  double *th = np <= 64 ? theta : malloc(sizeof(double) * (size_t)np);
  if (!th) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
  for (int i = 0; i < np; ++i) th[i] = exp(p->z[i]);
  grit_model *mp = NULL;
  grit_data *d = NULL;
  grit_status s = grit_model_with_params(m0, f->params, th, np, &mp, msg);
  if (s == GRIT_OK && (s = grit_data_create(mp, &d)) != GRIT_OK) grit_set_error(msg, s, "fit: cannot create data");
  if (s == GRIT_OK && (s = grit_data_set_step_settings(d, &f->o->settings)) != GRIT_OK)
    grit_set_error(msg, s, "fit: step settings: %s", grit_data_last_error(d));
  double cost = 0.0;
  for (int si = 0; s == GRIT_OK && si < f->nseg; ++si) {
    const segment *sg = &f->seg[si];
    const grit_trajectory *tr = &f->trajs[sg->traj];
    const double *yq = f->yq[sg->traj];
    const double *start_q = f->shoot ? p->x0 + (size_t)si * f->nxs : yq + (size_t)sg->a * nq;
    const double *start_v = f->shoot ? start_q + nq : tr->qvel + (size_t)sg->a * nv;
    if ((s = grit_data_set_qpos(d, start_q, nq)) != GRIT_OK || (s = grit_data_set_qvel(d, start_v, nv)) != GRIT_OK) {
      grit_set_error(msg, s, "fit: segment %d's initial state: %s", si, grit_data_last_error(d));
      break;
    }
    memset(f->S, 0, sizeof(double) * (size_t)nx * np);
    if (f->shoot) {
      memset(f->Sx, 0, sizeof(double) * (size_t)nx * nx);
      for (int i = 0; i < nx; ++i) f->Sx[(size_t)i * nx + i] = 1.0;
    }
    int row = sg->row0;
    for (int j = 0; j <= sg->nsteps; ++j) {
      const int k = sg->a + j;
      if (f->shoot || j > 0) {
        /* residual: (sim (-) obs), rows of [S diag(theta) | Sx] through the manifold difference */
        double *r = p->r + row;
        grit_position_difference(f->model, yq + (size_t)k * nq, grit_data_qpos(d), r);
        const double *v = grit_data_qvel(d), *yv = tr->qvel + (size_t)k * nv;
        for (int i = 0; i < nv; ++i) r[nv + i] = v[i] - yv[i];
        const int nc = np + (f->shoot ? nx : 0);
        double *R = f->rows; /* nx x nc */
        for (int i = 0; i < nx; ++i) {
          for (int c = 0; c < np; ++c) R[(size_t)i * nc + c] = f->S[(size_t)i * np + c] * th[c];
          if (f->shoot)
            for (int c = 0; c < nx; ++c) R[(size_t)i * nc + np + c] = f->Sx[(size_t)i * nx + c];
        }
        for (int jn = 0; jn < m0->njnt; ++jn) {
          const int type = m0->jnt_type[jn];
          if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
          const int r0 = m0->jnt_dofadr[jn] + (type == GRIT_JOINT_FREE ? 3 : 0);
          double Ji[9];
          so3_right_jacobian_inverse(r + r0, Ji);
          matmul(Ji, R + (size_t)r0 * nc, f->tmp, 3, 3, nc);
          memcpy(R + (size_t)r0 * nc, f->tmp, sizeof(double) * 3 * (size_t)nc);
        }
        for (int i = 0; i < nx; ++i) {
          r[i] *= f->wrow[i];
          cost += 0.5 * r[i] * r[i];
          for (int c = 0; c < np; ++c) p->Jz[(size_t)(row + i) * np + c] = f->wrow[i] * R[(size_t)i * nc + c];
          if (f->shoot)
            for (int c = 0; c < nx; ++c) p->Jx[(size_t)(row + i) * nx + c] = f->wrow[i] * R[(size_t)i * nc + np + c];
        }
        row += nx;
      }
      if (j == sg->nsteps) break;
      s = advance(d, tr->ctrl ? tr->ctrl + (size_t)k * nu : NULL, f->params, np, f->S, f->shoot ? f->Sx : NULL, f->A,
                  f->P, f->tmp);
      if (s != GRIT_OK) {
        grit_set_error(msg, s, "fit: trajectory %d, step %d: %s", sg->traj, k + 1, grit_data_last_error(d));
        break;
      }
    }
  }
  if (s == GRIT_OK && !isfinite(cost)) s = grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: the cost is not finite");
  p->cost = cost;
  grit_data_free(d);
  grit_model_free(mp);
  if (th != theta) free(th);
  return s;
}

/* The normal equations' blocks at point p: V = Jz^T Jz, c = Jz^T r, and per segment U, Wm, b. */
static void normal_blocks(fit *f, const point *p, double *V, double *c) {
  const int np = f->np, nx = f->nx;
  memset(V, 0, sizeof(double) * (size_t)np * np);
  memset(c, 0, sizeof(double) * (size_t)np);
  for (int si = 0; si < f->nseg; ++si) {
    segment *sg = &f->seg[si];
    const int rows = (sg->nsteps + (f->shoot ? 1 : 0)) * nx;
    if (f->shoot) {
      memset(sg->U, 0, sizeof(double) * (size_t)nx * nx);
      memset(sg->Wm, 0, sizeof(double) * (size_t)nx * np);
      memset(sg->b, 0, sizeof(double) * (size_t)nx);
    }
    for (int k = sg->row0; k < sg->row0 + rows; ++k) {
      const double *jz = p->Jz + (size_t)k * np, rk = p->r[k];
      for (int i = 0; i < np; ++i) {
        c[i] += jz[i] * rk;
        for (int j = 0; j < np; ++j) V[(size_t)i * np + j] += jz[i] * jz[j];
      }
      if (!f->shoot) continue;
      const double *jx = p->Jx + (size_t)k * nx;
      for (int i = 0; i < nx; ++i) {
        if (jx[i] == 0.0) continue;
        sg->b[i] += jx[i] * rk;
        for (int j = 0; j < nx; ++j) sg->U[(size_t)i * nx + j] += jx[i] * jx[j];
        for (int j = 0; j < np; ++j) sg->Wm[(size_t)i * np + j] += jx[i] * jz[j];
      }
    }
  }
}

/* Solves the damped normal equations (N + lambda diag(N)) delta = -g for the log-parameters dz and the
 * segments' corrections ds (nseg x nx); lambda = 0 with dz = NULL gives the reduced matrix R alone
 * (its Cholesky factor in R on success). Returns 0 if a block is not positive definite. */
static int solve_normal(fit *f, const double *V, const double *c, double lambda, double *R, double *dz, double *ds) {
  const int np = f->np, nx = f->nx;
  double *g = f->tmp; /* np, then scratch */
  for (int i = 0; i < np * np; ++i) R[i] = V[i];
  for (int i = 0; i < np; ++i) {
    R[(size_t)i * np + i] += lambda * V[(size_t)i * np + i];
    g[i] = -c[i];
  }
  for (int si = 0; f->shoot && si < f->nseg; ++si) {
    segment *sg = &f->seg[si];
    double *L = f->A; /* nx x nx */
    memcpy(L, sg->U, sizeof(double) * (size_t)nx * nx);
    for (int i = 0; i < nx; ++i) L[(size_t)i * nx + i] += lambda * sg->U[(size_t)i * nx + i];
    if (!cholesky(L, nx)) return 0;
    memcpy(sg->Y, sg->Wm, sizeof(double) * (size_t)nx * np);
    memcpy(sg->y, sg->b, sizeof(double) * (size_t)nx);
    chol_solve(L, nx, sg->Y, np);
    chol_solve(L, nx, sg->y, 1);
    for (int i = 0; i < np; ++i) {
      for (int j = 0; j < np; ++j) {
        double s = 0.0;
        for (int k = 0; k < nx; ++k) s += sg->Wm[(size_t)k * np + i] * sg->Y[(size_t)k * np + j];
        R[(size_t)i * np + j] -= s;
      }
      double s = 0.0;
      for (int k = 0; k < nx; ++k) s += sg->Wm[(size_t)k * np + i] * sg->y[k];
      g[i] += s;
    }
  }
  if (!cholesky(R, np)) return 0;
  if (!dz) return 1;
  memcpy(dz, g, sizeof(double) * (size_t)np);
  chol_solve(R, np, dz, 1);
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

static void point_free(point *p) {
  free(p->z), free(p->x0), free(p->r), free(p->Jz), free(p->Jx);
}

static int point_alloc(point *p, const fit *f) {
  memset(p, 0, sizeof *p);
  p->z = malloc(sizeof(double) * (size_t)f->np);
  p->x0 = malloc(sizeof(double) * ((size_t)f->nseg * f->nxs + 1));
  p->r = malloc(sizeof(double) * (size_t)f->m);
  p->Jz = malloc(sizeof(double) * (size_t)f->m * f->np);
  p->Jx = malloc(sizeof(double) * ((f->shoot ? (size_t)f->m * f->nx : 0) + 1));
  return p->z && p->x0 && p->r && p->Jz && p->Jx;
}

static grit_status check_inputs(const grit_model *model, const grit_trajectory *trajs, int ntraj, const grit_param *params,
                                int np, const double *values, const grit_fit_options *o, char *msg) {
  if (!model || !values || !o) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: model, values and options must not be NULL");
  grit_status s = check_params(model, params, np, msg);
  if (s != GRIT_OK) return s;
  for (int i = 0; i < np; ++i)
    if (!isfinite(values[i]) || !(values[i] > 0))
      return grit_set_error(msg, isfinite(values[i]) ? GRIT_ERR_INVALID_ARGUMENT : GRIT_ERR_NOT_FINITE,
                            "fit: the guess of parameter %d (%s) is %g: it must be finite and > 0 (fitted in log space)", i,
                            kind_name(params[i].kind), values[i]);
  if (ntraj < 1 || !trajs) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: no trajectories (ntraj = %d)", ntraj);
  if (o->segment_steps < 1 || o->max_iters < 1 || !(o->tol > 0) || !(o->max_log_step > 0) || !(o->position_sigma > 0) ||
      !(o->velocity_sigma > 0) || !isfinite(o->tol) || !isfinite(o->max_log_step) || !isfinite(o->position_sigma) ||
      !isfinite(o->velocity_sigma))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                          "fit: options need segment_steps >= 1, max_iters >= 1 and positive finite tol, max_log_step, "
                          "position_sigma and velocity_sigma");
  const int nq = model->nq, nv = model->nv, nu = model->nu;
  for (int t = 0; t < ntraj; ++t) {
    const grit_trajectory *tr = &trajs[t];
    if (tr->nsteps < 1 || !tr->qpos || !tr->qvel)
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: trajectory %d needs nsteps >= 1 (has %d), qpos and qvel", t,
                            tr->nsteps);
    const size_t ns = (size_t)tr->nsteps + 1;
    if (!all_finite(tr->qpos, ns * nq) || !all_finite(tr->qvel, ns * nv) ||
        (tr->ctrl && !all_finite(tr->ctrl, (size_t)tr->nsteps * nu)))
      return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: trajectory %d holds a number that is not finite", t);
    for (int j = 0; j < model->njnt; ++j) {
      const int type = model->jnt_type[j];
      if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
      const int qa = model->jnt_qposadr[j] + (type == GRIT_JOINT_FREE ? 3 : 0);
      for (size_t k = 0; k < ns; ++k) {
        const double *q = tr->qpos + k * nq + qa;
        if (!(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 1e-12))
          return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: trajectory %d, sample %zu: joint %d's quaternion is zero", t,
                                k, j);
      }
    }
  }
  return GRIT_OK;
}

grit_status grit_fit(const grit_model *model, const grit_trajectory *trajs, int ntraj, const grit_param *params,
                     int np, double *values, const grit_fit_options *options, grit_fit_result *result, double *std,
                     double *cov, char msg[GRIT_MESSAGE_SIZE]) {
  const grit_fit_options defaults = grit_default_fit_options();
  const grit_fit_options *o = options ? options : &defaults;
  grit_status s = check_inputs(model, trajs, ntraj, params, np, values, o, msg);
  if (s != GRIT_OK) return s;
  fit f;
  memset(&f, 0, sizeof f);
  f.model = model, f.trajs = trajs, f.params = params, f.np = np, f.o = o;
  f.nq = model->nq, f.nv = model->nv, f.nu = model->nu, f.nx = 2 * model->nv, f.nxs = f.nq + f.nv;
  f.shoot = o->fit_initial_states != 0;
  const int nx = f.nx, nq = f.nq, K = o->segment_steps;
  /* segments: multiple shooting covers samples a..a+K (K steps), the next starts at a+K+1 (its initial
   * state is free, so the step between them is not used); resetting restarts at the observed a+K */
  for (int pass = 0; pass < 2; ++pass) {
    int n = 0, rows = 0;
    for (int t = 0; t < ntraj; ++t) {
      const int N = trajs[t].nsteps;
      for (int a = 0; f.shoot ? a <= N : a < N;) {
        const int ns = K < N - a ? K : N - a;
        if (pass) f.seg[n] = (segment){.traj = t, .a = a, .nsteps = ns, .row0 = rows};
        rows += (ns + (f.shoot ? 1 : 0)) * nx;
        n++;
        a += f.shoot ? ns + 1 : ns;
      }
    }
    f.nseg = n, f.m = rows;
    if (!pass && !(f.seg = calloc((size_t)n, sizeof *f.seg))) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
  }
  const int nunk = np + (f.shoot ? nx * f.nseg : 0);
  point cur, trial;
  int ok = point_alloc(&cur, &f) & point_alloc(&trial, &f);
  const size_t big = (size_t)(nx > np ? nx : np) + 1;
  f.yq = calloc((size_t)ntraj, sizeof *f.yq);
  f.wrow = malloc(sizeof(double) * (size_t)nx + 1);
  f.S = malloc(sizeof(double) * (size_t)nx * np);
  f.Sx = malloc(sizeof(double) * (size_t)nx * nx + 1);
  f.A = malloc(sizeof(double) * (size_t)nx * nx + 1);
  f.P = malloc(sizeof(double) * (size_t)nx * np);
  f.tmp = malloc(sizeof(double) * (big * (size_t)(nx + np + 1) + (size_t)f.nu + (size_t)np * np + 1));
  f.rows = malloc(sizeof(double) * (size_t)nx * (size_t)(np + nx));
  double *V = malloc(sizeof(double) * (size_t)np * np), *c = malloc(sizeof(double) * (size_t)np);
  double *R = malloc(sizeof(double) * (size_t)np * np), *dz = malloc(sizeof(double) * (size_t)np);
  double *ds = malloc(sizeof(double) * ((size_t)f.nseg * nx + 1));
  double *blocks = malloc(sizeof(double) * ((size_t)f.nseg * (f.shoot ? (size_t)nx * (2 * (size_t)nx + 2 * np + 2) : 0) + 1));
  ok = ok && f.yq && f.wrow && f.S && f.Sx && f.A && f.P && f.tmp && f.rows && V && c && R && dz && ds && blocks;
  for (int t = 0; ok && t < ntraj; ++t) ok = (f.yq[t] = malloc(sizeof(double) * (size_t)(trajs[t].nsteps + 1) * nq + 1)) != NULL;
  if (!ok) {
    s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
    goto done;
  }
  for (int i = 0; i < nx; ++i) f.wrow[i] = 1.0 / (i < f.nv ? o->position_sigma : o->velocity_sigma);
  for (int si = 0; f.shoot && si < f.nseg; ++si) {
    double *b = blocks + (size_t)si * nx * (2 * (size_t)nx + 2 * np + 2);
    f.seg[si].U = b, f.seg[si].Wm = b + (size_t)nx * nx, f.seg[si].b = f.seg[si].Wm + (size_t)nx * np;
    f.seg[si].Y = f.seg[si].b + nx, f.seg[si].y = f.seg[si].Y + (size_t)nx * np;
  }
  /* observed positions with unit quaternions (the difference on the manifold needs them) */
  for (int t = 0; t < ntraj; ++t) {
    const size_t ns = (size_t)trajs[t].nsteps + 1;
    memcpy(f.yq[t], trajs[t].qpos, sizeof(double) * ns * nq);
    for (int j = 0; j < model->njnt; ++j) {
      const int type = model->jnt_type[j];
      if (type != GRIT_JOINT_FREE && type != GRIT_JOINT_BALL) continue;
      const int qa = model->jnt_qposadr[j] + (type == GRIT_JOINT_FREE ? 3 : 0);
      for (size_t k = 0; k < ns; ++k) {
        double *q = f.yq[t] + k * nq + qa;
        const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        for (int i = 0; i < 4; ++i) q[i] /= n;
      }
    }
  }
  for (int i = 0; i < np; ++i) cur.z[i] = log(values[i]);
  for (int si = 0; f.shoot && si < f.nseg; ++si) {
    const segment *sg = &f.seg[si];
    memcpy(cur.x0 + (size_t)si * f.nxs, f.yq[sg->traj] + (size_t)sg->a * nq, sizeof(double) * (size_t)nq);
    memcpy(cur.x0 + (size_t)si * f.nxs + nq, trajs[sg->traj].qvel + (size_t)sg->a * f.nv, sizeof(double) * (size_t)f.nv);
  }
  s = evaluate(&f, &cur, msg);
  if (s != GRIT_OK) goto done;
  grit_fit_result res;
  memset(&res, 0, sizeof res);
  res.evaluations = 1;
  res.initial_cost = cur.cost;
  res.nresiduals = f.m, res.nunknowns = nunk, res.nsegments = f.nseg;
  double lambda = 1e-3, nu = 2.0;
  char tmsg[GRIT_MESSAGE_SIZE];
  double *Jd = malloc(sizeof(double) * (size_t)f.m);
  if (!Jd) {
    s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
    goto done;
  }
  normal_blocks(&f, &cur, V, c);
  while (res.iterations < o->max_iters && !res.converged && lambda < 1e16) {
    res.iterations++;
    if (!solve_normal(&f, V, c, lambda, R, dz, ds)) {
      lambda = lambda * nu, nu *= 2;
      continue;
    }
    /* keep each log-parameter's change within max_log_step (a trust region on the relative change) */
    double big_dz = 0.0;
    for (int i = 0; i < np; ++i) big_dz = fmax(big_dz, fabs(dz[i]));
    const double scale = big_dz > o->max_log_step ? o->max_log_step / big_dz : 1.0;
    for (int i = 0; i < np; ++i) dz[i] *= scale;
    for (int i = 0; f.shoot && i < f.nseg * nx; ++i) ds[i] *= scale;
    /* the decrease the linear model predicts: 1/2 |r|^2 - 1/2 |r + J delta|^2 */
    double pred = 0.0;
    for (int k = 0; k < f.m; ++k) {
      double jd = 0.0;
      for (int i = 0; i < np; ++i) jd += cur.Jz[(size_t)k * np + i] * dz[i];
      Jd[k] = jd;
    }
    for (int si = 0; f.shoot && si < f.nseg; ++si) {
      const segment *sg = &f.seg[si];
      const int rows = (sg->nsteps + 1) * nx;
      for (int k = sg->row0; k < sg->row0 + rows; ++k)
        for (int i = 0; i < nx; ++i) Jd[k] += cur.Jx[(size_t)k * nx + i] * ds[(size_t)si * nx + i];
    }
    for (int k = 0; k < f.m; ++k) pred -= cur.r[k] * Jd[k] + 0.5 * Jd[k] * Jd[k];
    for (int i = 0; i < np; ++i) trial.z[i] = cur.z[i] + dz[i];
    for (int si = 0; f.shoot && si < f.nseg; ++si) {
      double *x = trial.x0 + (size_t)si * f.nxs;
      memcpy(x, cur.x0 + (size_t)si * f.nxs, sizeof(double) * (size_t)f.nxs);
      grit_integrate_positions(model, x, ds + (size_t)si * nx, 1.0);
      for (int i = 0; i < f.nv; ++i) x[nq + i] += ds[(size_t)si * nx + f.nv + i];
    }
    const grit_status ts = evaluate(&f, &trial, tmsg);
    res.evaluations++;
    const double actual = ts == GRIT_OK ? cur.cost - trial.cost : -1.0;
    if (ts == GRIT_OK && actual > 0 && pred > 0) {
      const double rho = actual / pred;
      const int small_step = big_dz * scale <= sqrt(o->tol), small_decrease = actual <= o->tol * cur.cost;
      res.converged = lambda <= 1.0 && (small_step || small_decrease);
      point t = cur;
      cur = trial, trial = t;
      normal_blocks(&f, &cur, V, c);
      const double q = 2 * rho - 1;
      lambda *= fmax(1.0 / 3.0, 1.0 - q * q * q);
      nu = 2.0;
    } else {
      lambda *= nu, nu *= 2;
    }
  }
  free(Jd);
  res.cost = cur.cost;
  res.rms = sqrt(2 * cur.cost / f.m);
  res.sigma2 = f.m > nunk ? 2 * cur.cost / (f.m - nunk) : NAN;
  for (int i = 0; i < np; ++i) values[i] = exp(cur.z[i]);
  if (std || cov) {
    /* C = sigma2 R^-1 with R the reduced Gauss-Newton matrix (the initial states eliminated) */
    double *Ci = malloc(sizeof(double) * (size_t)np * np);
    const int pd = Ci && solve_normal(&f, V, c, 0.0, R, NULL, NULL);
    if (Ci && pd) {
      for (int i = 0; i < np * np; ++i) Ci[i] = i % (np + 1) == 0 ? 1.0 : 0.0;
      chol_solve(R, np, Ci, np);
    }
    for (int i = 0; i < np; ++i) {
      if (std) std[i] = pd ? values[i] * sqrt(res.sigma2 * Ci[(size_t)i * np + i]) : INFINITY;
      for (int j = 0; cov && j < np; ++j) cov[(size_t)i * np + j] = pd ? res.sigma2 * Ci[(size_t)i * np + j] : INFINITY;
    }
    free(Ci);
  }
  if (result) *result = res;
  if (msg) msg[0] = '\0';
done:
  point_free(&cur), point_free(&trial);
  for (int t = 0; f.yq && t < ntraj; ++t) free(f.yq[t]);
  free(f.yq), free(f.wrow), free(f.S), free(f.Sx), free(f.A), free(f.P), free(f.tmp), free(f.rows);
  free(V), free(c), free(R), free(dz), free(ds), free(blocks), free(f.seg);
  return s;
}
