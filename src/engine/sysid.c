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
#include "sysid_internal.h"

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
  o.coarse_span = 10.0;
  o.covariance = GRIT_FIT_COV_RESIDUAL;
  return o;
}

const char *grit_sysid_kind_name(grit_param_kind k) {
  switch (k) {
    case GRIT_PARAM_FRICTION: return "friction";
    case GRIT_PARAM_STIFFNESS: return "stiffness";
    case GRIT_PARAM_DISSIPATION: return "dissipation";
    case GRIT_PARAM_MASS: return "mass";
    case GRIT_PARAM_HYDRO_MODULUS: return "hydro_modulus";
  }
  if ((int)k == GRIT_PARAM_TAU_D) return "tau_d";
  if ((int)k == GRIT_PARAM_INERTIA) return "inertia";
  return "unknown";
}

/* Checks kinds and indices, and that no parameter is listed twice (a contact kind both for every
 * geometry and for one counts as twice: the two would not be separable). */
grit_status grit_sysid_check_params(const grit_model *m, const grit_param *params, int np, char *msg) {
  if (np < 1 || !params) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "no parameters to fit (np = %d)", np);
  for (int i = 0; i < np; ++i) {
    const grit_param *p = &params[i];
    if (p->kind == GRIT_PARAM_MASS || (int)p->kind == GRIT_PARAM_INERTIA) {
      if (p->index < 1 || p->index >= m->nbody)
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameter %d: mass of body %d: no such body (1..%d)", i,
                              p->index, m->nbody - 1);
    } else if ((p->kind >= GRIT_PARAM_FRICTION && p->kind <= GRIT_PARAM_DISSIPATION) || (int)p->kind == GRIT_PARAM_TAU_D) {
      if (p->index < -1 || p->index >= m->ngeom)
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT,
                              "parameter %d: %s of geometry %d: no such geometry (-1 for all, 0..%d)", i,
                              grit_sysid_kind_name(p->kind), p->index, m->ngeom - 1);
    } else {
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameter %d: unknown kind %d", i, (int)p->kind);
    }
    for (int j = 0; j < i; ++j) {
      const grit_param *o = &params[j];
      const int body = p->kind == GRIT_PARAM_MASS || (int)p->kind == GRIT_PARAM_INERTIA;
      if (o->kind == p->kind && (o->index == p->index || (!body && (o->index < 0 || p->index < 0))))
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "parameters %d and %d both set the %s of %s %d", j, i,
                              grit_sysid_kind_name(p->kind), body ? "body" : "geometry", p->index);
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
    const int body = p->kind == GRIT_PARAM_MASS || (int)p->kind == GRIT_PARAM_INERTIA;
    const int ok = body ? (p->index >= 1 && p->index < model->nbody)
                   : (p->kind >= GRIT_PARAM_FRICTION && p->kind <= GRIT_PARAM_DISSIPATION) || (int)p->kind == GRIT_PARAM_TAU_D
                       ? (p->index >= -1 && p->index < model->ngeom)
                       : 0;
    if (!ok)
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: parameter %d (kind %d, index %d) does not exist",
                            i, (int)p->kind, p->index);
    const double v = values[i];
    if (!isfinite(v)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "model_with_params: value %d is not finite", i);
    const int strict = p->kind == GRIT_PARAM_STIFFNESS || p->kind == GRIT_PARAM_MASS || (int)p->kind == GRIT_PARAM_INERTIA;
    if (strict ? !(v > 0) : !(v >= 0))
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: %s %g must be %s", grit_sysid_kind_name(p->kind), v,
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
    if ((int)p->kind == GRIT_PARAM_INERTIA) continue; /* after the masses, which scale it too */
    double *arr = p->kind == GRIT_PARAM_FRICTION    ? r->geom_friction
                  : p->kind == GRIT_PARAM_STIFFNESS ? r->geom_stiffness
                  : (int)p->kind == GRIT_PARAM_TAU_D ? r->geom_taud
                                                      : r->geom_dissipation;
    for (int g = 0; g < r->ngeom; ++g)
      if (p->index < 0 || p->index == g) arr[g] = values[i];
  }
  for (int i = 0; i < np; ++i) {
    if ((int)params[i].kind != GRIT_PARAM_INERTIA) continue;
    double *I = r->body_inertia + 9 * params[i].index;
    const double mean = (I[0] + I[4] + I[8]) / 3.0;
    if (!(mean > 0)) {
      grit_model_free(r);
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "model_with_params: body %d has no rotational inertia to scale",
                            params[i].index);
    }
    for (int k = 0; k < 9; ++k) I[k] *= values[i] / mean;
  }
  *out = r;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------- small dense algebra */

/* In-place Cholesky of the symmetric n x n matrix (lower triangle used and overwritten); -1 on success,
 * else the column whose pivot is not positive. */
int grit_sysid_cholesky(double *L, int n) {
  for (int j = 0; j < n; ++j) {
    double d = L[(size_t)j * n + j];
    for (int k = 0; k < j; ++k) d -= L[(size_t)j * n + k] * L[(size_t)j * n + k];
    if (!(d > 0.0) || !isfinite(d)) return j;
    d = sqrt(d);
    L[(size_t)j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = L[(size_t)i * n + j];
      for (int k = 0; k < j; ++k) s -= L[(size_t)i * n + k] * L[(size_t)j * n + k];
      L[(size_t)i * n + j] = s / d;
    }
  }
  return -1;
}

/* Solves L L^T X = B in place for c right-hand sides stored as the columns of B (n x c, row-major). */
void grit_sysid_chol_solve(const double *L, int n, double *B, int c) {
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
void grit_sysid_so3_jr_inverse(const double e[3], double J[9]) {
  const double t2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2], t = sqrt(t2);
  /* 1/t^2 - (1 + cos t)/(2 t sin t), by its series below 1e-3 rad */
  const double c = t < 1e-3 ? 1.0 / 12.0 + t2 / 720.0 : 1.0 / t2 - (1.0 + cos(t)) / (2.0 * t * sin(t));
  const double K[9] = {0, -e[2], e[1], e[2], 0, -e[0], -e[1], e[0], 0};
  double K2[9];
  grit_matmul(K, K, K2, 3, 3, 3);
  for (int i = 0; i < 9; ++i) J[i] = (i % 4 == 0 ? 1.0 : 0.0) + 0.5 * K[i] + c * K2[i];
}

/* ------------------------------------------------------------------------- rollouts */

/* One step of the data and its sensitivities: S <- A S + P (nx x np), Sx <- A Sx (nx x nx); either may
 * be NULL. A, P and tmp are scratch (nx*nx, nx*np, nx*max(nx,np)). */
static int by_differences(const grit_param *p) {
  return (int)p->kind == GRIT_PARAM_TAU_D || (int)p->kind == GRIT_PARAM_INERTIA;
}

/* The value parameter p has in model m (a contact kind for every geometry: geometry 0's). */
static double param_value(const grit_model *m, const grit_param *p) {
  const int g = p->index < 0 ? 0 : p->index;
  switch ((int)p->kind) {
    case GRIT_PARAM_FRICTION: return m->geom_friction[g];
    case GRIT_PARAM_STIFFNESS: return m->geom_stiffness[g];
    case GRIT_PARAM_DISSIPATION: return m->geom_dissipation[g];
    case GRIT_PARAM_MASS: return m->body_mass[p->index];
    case GRIT_PARAM_TAU_D: return m->geom_taud[g];
    case GRIT_PARAM_INERTIA: {
      const double *I = m->body_inertia + 9 * p->index;
      return (I[0] + I[4] + I[8]) / 3.0;
    }
  }
  return 0.0;
}

void grit_sysid_fd_free(grit_sysid_fd *fd) {
  for (int i = 0; i < 2 * fd->n; ++i) {
    if (fd->d) grit_data_free(fd->d[i]);
    if (fd->m) grit_model_free(fd->m[i]);
  }
  free(fd->m), free(fd->d), free(fd->den), free(fd->pos), free(fd->an), free(fd->an_pos), free(fd->Pa), free(fd->col);
  memset(fd, 0, sizeof *fd);
}

grit_status grit_sysid_fd_init(grit_sysid_fd *fd, const grit_model *m, const grit_param *params, int np,
                               const grit_step_settings *st) {
  memset(fd, 0, sizeof *fd);
  int n = 0;
  for (int i = 0; i < np; ++i) n += by_differences(&params[i]);
  const int nx = 2 * m->nv;
  fd->m = calloc((size_t)2 * n + 1, sizeof *fd->m);
  fd->d = calloc((size_t)2 * n + 1, sizeof *fd->d);
  fd->den = malloc(sizeof(double) * ((size_t)n + 1));
  fd->pos = malloc(sizeof(int) * ((size_t)n + 1));
  fd->an = malloc(sizeof(grit_param) * ((size_t)np + 1));
  fd->an_pos = malloc(sizeof(int) * ((size_t)np + 1));
  fd->Pa = malloc(sizeof(double) * ((size_t)nx * np + 1));
  fd->col = malloc(sizeof(double) * ((size_t)nx + 1));
  if (!fd->m || !fd->d || !fd->den || !fd->pos || !fd->an || !fd->an_pos || !fd->Pa || !fd->col) {
    grit_sysid_fd_free(fd);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  grit_status s = GRIT_OK;
  for (int i = 0; i < np && s == GRIT_OK; ++i) {
    if (!by_differences(&params[i])) {
      fd->an[fd->nan] = params[i], fd->an_pos[fd->nan++] = i;
      continue;
    }
    const double v = param_value(m, &params[i]), eps = 1e-4; /* relative: the step's tolerance 1e-8 / eps */
    fd->pos[fd->n] = i, fd->den[fd->n] = v * 2 * eps;
    for (int sgn = 0; sgn < 2 && s == GRIT_OK; ++sgn) {
      const double val = v * exp(sgn ? -eps : eps);
      grit_model **mm = &fd->m[2 * fd->n + sgn];
      s = grit_model_with_params(m, &params[i], &val, 1, mm, NULL);
      if (s == GRIT_OK) s = grit_data_create(*mm, &fd->d[2 * fd->n + sgn]);
      if (s == GRIT_OK && st) s = grit_data_set_step_settings(fd->d[2 * fd->n + sgn], st);
    }
    fd->n++;
  }
  if (s != GRIT_OK) grit_sysid_fd_free(fd);
  return s;
}

/* The columns of P of the parameters by differences: each model of the pair stepped from d's state. */
static grit_status fd_columns(grit_sysid_fd *fd, const grit_data *d, const double *u, double *P, int np) {
  const grit_model *m = grit_data_model(d);
  const int nq = m->nq, nv = m->nv, nu = m->nu, nx = 2 * nv;
  for (int i = 0; i < fd->n; ++i) {
    for (int k = 0; k < 2; ++k) {
      grit_data *e = fd->d[2 * i + k];
      grit_status s = grit_data_set_qpos(e, grit_data_qpos(d), nq);
      if (s == GRIT_OK) s = grit_data_set_qvel(e, grit_data_qvel(d), nv);
      if (s == GRIT_OK && nu > 0) s = grit_data_set_ctrl(e, u ? u : grit_data_ctrl(d), nu);
      if (s == GRIT_OK) s = grit_step(e);
      if (s != GRIT_OK) return s;
    }
    const grit_data *dp = fd->d[2 * i], *dm = fd->d[2 * i + 1];
    grit_position_difference(m, grit_data_qpos(dm), grit_data_qpos(dp), fd->col);
    for (int j = 0; j < nv; ++j) fd->col[nv + j] = grit_data_qvel(dp)[j] - grit_data_qvel(dm)[j];
    for (int r = 0; r < nx; ++r) P[(size_t)r * np + fd->pos[i]] = fd->col[r] / fd->den[i];
  }
  return GRIT_OK;
}

grit_status grit_sysid_advance(grit_data *d, const double *u, const grit_param *params, int np, double *S, double *Sx,
                               double *A, double *P, double *tmp, grit_sysid_fd *fd) {
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
  const int diffs = S && fd && fd->n > 0;
  if (diffs && (s = fd_columns(fd, d, u, P, np)) != GRIT_OK) return s; /* from the state before the step */
  s = grit_step(d);
  if (s != GRIT_OK) return s;
  if (!S && !Sx) return GRIT_OK;
  if (diffs) {
    s = grit_step_derivatives(d, A, NULL, fd->nan ? fd->an : NULL, fd->nan, fd->nan ? fd->Pa : NULL);
    for (int r = 0; s == GRIT_OK && r < nx; ++r)
      for (int c = 0; c < fd->nan; ++c) P[(size_t)r * np + fd->an_pos[c]] = fd->Pa[(size_t)r * fd->nan + c];
  } else {
    s = grit_step_derivatives(d, A, NULL, S ? params : NULL, S ? np : 0, S ? P : NULL);
  }
  if (s != GRIT_OK) return s;
  if (S) {
    grit_matmul(A, S, tmp, nx, nx, np);
    for (int i = 0; i < nx * np; ++i) S[i] = tmp[i] + P[i];
  }
  if (Sx) {
    grit_matmul(A, Sx, tmp, nx, nx, nx);
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
  if (model->na > 0) /* the state here is (q, v); activations are not part of it yet */
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "rollout: actuators with dynamics (na = %d) are not supported", model->na);
  if (np < 0 || (np > 0 && !params)) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "rollout: %d parameters need params", np);
  if (np > 0) {
    grit_status s = grit_sysid_check_params(model, params, np, msg);
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
  grit_sysid_fd fd;
  memset(&fd, 0, sizeof fd);
  if (settings) s = grit_data_set_step_settings(d, settings);
  if (s == GRIT_OK && S && np > 0) s = grit_sysid_fd_init(&fd, model, params, np, settings);
  if (s == GRIT_OK) s = grit_data_set_qpos(d, x0, nq);
  if (s == GRIT_OK) s = grit_data_set_qvel(d, x0 + nq, nv);
  if (s != GRIT_OK) {
    grit_set_error(msg, s, "rollout: %s", grit_data_last_error(d));
    grit_sysid_fd_free(&fd);
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
    s = grit_sysid_advance(d, ctrl ? ctrl + (size_t)k * nu : NULL, params, np, S ? Sc : NULL, Sx ? Sxc : NULL, A, P, tmp,
                           &fd);
    if (s != GRIT_OK) {
      grit_set_error(msg, s, "rollout: step %d: %s", k + 1, grit_data_last_error(d));
      break;
    }
  }
  grit_sysid_fd_free(&fd);
  grit_data_free(d);
  free(w);
  return s;
}

/* ------------------------------------------------------------------------- the fit (src/engine/sysid_fit.c) */

/* Trajectories at the model's step are timed trajectories with t_k = k h; the engine never reads the
 * control row of the last sample (no step starts there), so N rows of controls suffice. */
grit_status grit_fit(const grit_model *model, const grit_trajectory *trajs, int ntraj, const grit_param *params,
                     int np, double *values, const grit_fit_options *options, grit_fit_result *result, double *std,
                     double *cov, char msg[GRIT_MESSAGE_SIZE]) {
  if (!model || !values) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: model, values and options must not be NULL");
  if (ntraj < 1 || !trajs) return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: no trajectories (ntraj = %d)", ntraj);
  if (options && options->segment_steps < 1)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: options need segment_steps >= 1");
  grit_timed_trajectory *tt = malloc(sizeof *tt * (size_t)ntraj);
  if (!tt) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "fit: out of memory");
  for (int t = 0; t < ntraj; ++t) {
    if (trajs[t].nsteps < 1) {
      free(tt);
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "fit: trajectory %d needs nsteps >= 1 (has %d), qpos and qvel", t,
                            trajs[t].nsteps);
    }
    const size_t ns = (size_t)trajs[t].nsteps + 1;
    /* grit_fit's contract: every number finite (grit_fit_timed masks NaN rows out instead) */
    if (trajs[t].qpos && trajs[t].qvel &&
        (!all_finite(trajs[t].qpos, ns * (size_t)model->nq) || !all_finite(trajs[t].qvel, ns * (size_t)model->nv))) {
      free(tt);
      return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "fit: trajectory %d holds a number that is not finite", t);
    }
    tt[t] = (grit_timed_trajectory){trajs[t].nsteps + 1, NULL, trajs[t].qpos, trajs[t].qvel, trajs[t].ctrl};
  }
  const grit_status s = grit_fit_timed(model, tt, ntraj, params, np, values, options, result, std, cov, NULL, msg);
  free(tt);
  return s;
}
