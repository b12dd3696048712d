/* SPDX-License-Identifier: Apache-2.0 */
/* ensemble.c — K dynamics driven by the same controls as one stacked dynamics, and a cost summed over
 * them (grit_ilqr/ensemble.h, docs/ilqr.md "Ensembles"). */
#include "grit_ilqr/ensemble.h"

#include <stdlib.h>
#include <string.h>

#include "message.h"

#define ENSEMBLE_MAX_THREADS 64

struct grit_ilqr_ensemble {
  int K, nx, ndx, nu, nthreads;
  grit_ilqr_dynamics *m; /* K members */
  int *ox, *odx;         /* K + 1 offsets in x and dx */
  double *jws;           /* nthreads x (maxdx^2 + maxdx nu): a member's fx, fu per thread */
  int maxdx;
  /* the cost over the members */
  grit_ilqr_cost_fn cost;
  void **cost_ctx; /* K */
  double *w;       /* K */
  double *cws;     /* maxdx (lx) + nu + maxdx^2 + nu^2 + nu maxdx: one member's cost derivatives */
  char msg[GRIT_MESSAGE_SIZE]; /* the last error of a stacking or cost setter ("" if none) */
};

const char *grit_ilqr_ensemble_last_error(const grit_ilqr_ensemble *e) { return e ? e->msg : "no ensemble"; }

void grit_ilqr_ensemble_free(grit_ilqr_ensemble *e) {
  if (!e) return;
  free(e->m), free(e->ox), free(e->odx), free(e->jws), free(e->cost_ctx), free(e->w), free(e->cws);
  free(e);
}

static grit_status check_members(int K, const grit_ilqr_dynamics *m, int nthreads, char *msg) {
  if (K < 1 || !m) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "an ensemble needs K >= 1 members (K = %d)", K);
  if (nthreads < 1 || nthreads > ENSEMBLE_MAX_THREADS)
    return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "nthreads %d not in [1, %d]", nthreads, ENSEMBLE_MAX_THREADS);
  for (int i = 0; i < K; ++i) {
    if (m[i].nx < 1 || m[i].ndx < 1 || m[i].nu < 0 || !m[i].step || !m[i].jacobians)
      return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT,
                            "member %d: needs nx, ndx >= 1, nu >= 0, a step and a jacobians callback", i);
    if (m[i].nu != m[0].nu)
      return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "member %d has nu = %d, member 0 nu = %d: the controls are shared",
                            i, m[i].nu, m[0].nu);
    if (!m[i].difference && m[i].nx != m[i].ndx)
      return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "member %d: nx %d != ndx %d without a difference callback", i,
                            m[i].nx, m[i].ndx);
  }
  return GRIT_OK;
}

grit_status grit_ilqr_ensemble_create(int K, const grit_ilqr_dynamics *members, int nthreads, grit_ilqr_ensemble **out,
                                      char *msg) {
  if (msg) msg[0] = 0;
  if (!out) return grit_ilqr_fail(msg, GRIT_ERR_INVALID_ARGUMENT, "need an output pointer");
  *out = NULL;
  grit_status st = check_members(K, members, nthreads, msg);
  if (st != GRIT_OK) return st;
  grit_ilqr_ensemble *e = calloc(1, sizeof *e);
  if (!e) return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
  e->K = K, e->nu = members[0].nu, e->nthreads = nthreads;
  e->m = malloc((size_t)K * sizeof *e->m);
  e->ox = calloc((size_t)K + 1, sizeof *e->ox);
  e->odx = calloc((size_t)K + 1, sizeof *e->odx);
  e->cost_ctx = calloc((size_t)K, sizeof *e->cost_ctx);
  e->w = malloc((size_t)K * sizeof *e->w);
  if (!e->m || !e->ox || !e->odx || !e->cost_ctx || !e->w) goto oom;
  memcpy(e->m, members, (size_t)K * sizeof *e->m);
  for (int i = 0; i < K; ++i) {
    e->ox[i + 1] = e->ox[i] + members[i].nx;
    e->odx[i + 1] = e->odx[i] + members[i].ndx;
    if (members[i].ndx > e->maxdx) e->maxdx = members[i].ndx;
    e->w[i] = 1;
  }
  e->nx = e->ox[K], e->ndx = e->odx[K];
  const size_t d = (size_t)e->maxdx, nu = (size_t)e->nu;
  e->jws = malloc((size_t)nthreads * (d * d + d * nu + 1) * sizeof *e->jws);
  e->cws = malloc((d + nu + d * d + nu * nu + nu * d + 1) * sizeof *e->cws);
  if (!e->jws || !e->cws) goto oom;
  *out = e;
  return GRIT_OK;
oom:
  grit_ilqr_ensemble_free(e);
  return grit_ilqr_fail(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory");
}

int grit_ilqr_ensemble_size(const grit_ilqr_ensemble *e) { return e ? e->K : 0; }

int grit_ilqr_ensemble_offset(const grit_ilqr_ensemble *e, int i, int tangent) {
  if (!e || i < 0 || i > e->K) return -1;
  return tangent ? e->odx[i] : e->ox[i];
}

/* ------------------------------------------------------------------------------- the dynamics */

static int ens_step(void *ctx, int slot, int k, const double *x, const double *u, double *x_next) {
  grit_ilqr_ensemble *e = ctx;
  for (int i = 0; i < e->K; ++i)
    if (e->m[i].step(e->m[i].ctx, slot, k, x + e->ox[i], u, x_next + e->ox[i])) return 1;
  return 0;
}

/* Member i's fx (ndx_i x ndx_i) goes on the diagonal of the stacked fx, its fu into rows odx[i]... */
static int ens_jacobians(void *ctx, int slot, int k, int thread, const double *x, const double *u, double *fx,
                         double *fu) {
  grit_ilqr_ensemble *e = ctx;
  if (thread < 0 || thread >= e->nthreads) return 1; /* more threads than the ensemble was made for */
  const size_t n = (size_t)e->ndx, nu = (size_t)e->nu, d = (size_t)e->maxdx;
  double *fxi = e->jws + (size_t)thread * (d * d + d * nu + 1), *fui = fxi + d * d;
  memset(fx, 0, n * n * sizeof *fx);
  for (int i = 0; i < e->K; ++i) {
    const grit_ilqr_dynamics *m = &e->m[i];
    const size_t ni = (size_t)m->ndx, o = (size_t)e->odx[i];
    if (m->jacobians(m->ctx, slot, k, thread, x + e->ox[i], u, fxi, fui)) return 1;
    for (size_t r = 0; r < ni; ++r) memcpy(fx + (o + r) * n + o, fxi + r * ni, ni * sizeof *fx);
    if (nu) memcpy(fu + o * nu, fui, ni * nu * sizeof *fu);
  }
  return 0;
}

static void ens_difference(void *ctx, const double *xa, const double *xb, double *dx) {
  grit_ilqr_ensemble *e = ctx;
  for (int i = 0; i < e->K; ++i) {
    const grit_ilqr_dynamics *m = &e->m[i];
    if (m->difference) {
      m->difference(m->ctx, xa + e->ox[i], xb + e->ox[i], dx + e->odx[i]);
    } else {
      for (int j = 0; j < m->nx; ++j) dx[e->odx[i] + j] = xb[e->ox[i] + j] - xa[e->ox[i] + j];
    }
  }
}

grit_ilqr_dynamics grit_ilqr_ensemble_dynamics(grit_ilqr_ensemble *e) {
  grit_ilqr_dynamics d = {0};
  if (!e) return d;
  d.nx = e->nx, d.ndx = e->ndx, d.nu = e->nu, d.ctx = e;
  d.step = ens_step, d.jacobians = ens_jacobians, d.difference = ens_difference;
  return d;
}

/* ------------------------------------------------------------------------------------ stacking */

/* GRIT_OK when the arrays are given and every member has member 0's nx and ndx; else the message. */
static grit_status stackable(grit_ilqr_ensemble *e, const void *a, const void *b) {
  e->msg[0] = 0;
  if (!a || !b) return grit_ilqr_fail(e->msg, GRIT_ERR_INVALID_ARGUMENT, "stacking needs an input and an output array");
  for (int i = 1; i < e->K; ++i)
    if (e->m[i].nx != e->m[0].nx || e->m[i].ndx != e->m[0].ndx)
      return grit_ilqr_fail(e->msg, GRIT_ERR_INVALID_ARGUMENT,
                            "member %d has nx %d, ndx %d, member 0 nx %d, ndx %d: stacking one member's values needs "
                            "equal sizes", i, e->m[i].nx, e->m[i].ndx, e->m[0].nx, e->m[0].ndx);
  return GRIT_OK;
}

grit_status grit_ilqr_ensemble_stack_state(grit_ilqr_ensemble *e, const double *x, double *xs) {
  if (!e) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_status st = stackable(e, x, xs);
  if (st != GRIT_OK) return st;
  for (int i = 0; i < e->K; ++i) memcpy(xs + e->ox[i], x, (size_t)e->m[0].nx * sizeof *xs);
  return GRIT_OK;
}

grit_status grit_ilqr_ensemble_stack_weight(grit_ilqr_ensemble *e, const double *W, const double *w, double *Ws) {
  if (!e) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_status st = stackable(e, W, Ws);
  if (st != GRIT_OK) return st;
  for (int i = 0; i < e->K; ++i)
    if (w && !(w[i] >= 0))
      return grit_ilqr_fail(e->msg, GRIT_ERR_INVALID_ARGUMENT, "member weight w[%d] = %g must be >= 0", i, w[i]);
  const size_t n = (size_t)e->ndx, ni = (size_t)e->m[0].ndx;
  memset(Ws, 0, n * n * sizeof *Ws);
  for (int i = 0; i < e->K; ++i) {
    const double wi = w ? w[i] : 1;
    const size_t o = (size_t)e->odx[i];
    for (size_t r = 0; r < ni; ++r)
      for (size_t c = 0; c < ni; ++c) Ws[(o + r) * n + o + c] = wi * W[r * ni + c];
  }
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------------- the cost */

grit_status grit_ilqr_ensemble_set_cost(grit_ilqr_ensemble *e, grit_ilqr_cost_fn fn, void *const *member_ctx, void *ctx,
                                        const double *w) {
  if (!e) return GRIT_ERR_INVALID_ARGUMENT;
  e->msg[0] = 0;
  if (!fn) return grit_ilqr_fail(e->msg, GRIT_ERR_INVALID_ARGUMENT, "the member cost function is NULL");
  for (int i = 0; i < e->K; ++i)
    if (w && !(w[i] >= 0))
      return grit_ilqr_fail(e->msg, GRIT_ERR_INVALID_ARGUMENT, "member weight w[%d] = %g must be >= 0", i, w[i]);
  e->cost = fn;
  for (int i = 0; i < e->K; ++i) e->cost_ctx[i] = member_ctx ? member_ctx[i] : ctx, e->w[i] = w ? w[i] : 1;
  return GRIT_OK;
}

/* Adds w times member i's derivatives (in the workspace) into the stacked ones. */
static void add_member(const grit_ilqr_ensemble *e, int i, double w, const double *lxi, const double *lui,
                       const double *lxxi, const double *luui, const double *luxi, double *lx, double *lu, double *lxx,
                       double *luu, double *lux) {
  const size_t n = (size_t)e->ndx, ni = (size_t)e->m[i].ndx, o = (size_t)e->odx[i], nu = (size_t)e->nu;
  if (lx)
    for (size_t r = 0; r < ni; ++r) lx[o + r] = w * lxi[r];
  if (lxx)
    for (size_t r = 0; r < ni; ++r)
      for (size_t c = 0; c < ni; ++c) lxx[(o + r) * n + o + c] = w * lxxi[r * ni + c];
  if (lu)
    for (size_t r = 0; r < nu; ++r) lu[r] += w * lui[r];
  if (luu)
    for (size_t r = 0; r < nu * nu; ++r) luu[r] += w * luui[r];
  if (lux)
    for (size_t r = 0; r < nu; ++r)
      for (size_t c = 0; c < ni; ++c) lux[r * n + o + c] = w * luxi[r * ni + c];
}

int grit_ilqr_ensemble_cost(void *ctx, int k, const double *x, const double *u, double *l, double *lx, double *lu,
                            double *lxx, double *luu, double *lux) {
  grit_ilqr_ensemble *e = ctx;
  if (!e || !e->cost) return 1;
  const size_t n = (size_t)e->ndx, nu = (size_t)e->nu, d = (size_t)e->maxdx;
  double *lxi = e->cws, *lui = lxi + d, *lxxi = lui + nu, *luui = lxxi + d * d, *luxi = luui + nu * nu;
  if (lxx) memset(lxx, 0, n * n * sizeof *lxx);
  if (lu) memset(lu, 0, nu * sizeof *lu);
  if (luu) memset(luu, 0, nu * nu * sizeof *luu);
  if (lux) memset(lux, 0, nu * n * sizeof *lux);
  *l = 0;
  for (int i = 0; i < e->K; ++i) {
    const size_t ni = (size_t)e->m[i].ndx;
    double li = 0;
    memset(lxi, 0, ni * sizeof *lxi), memset(lxxi, 0, ni * ni * sizeof *lxxi);
    memset(lui, 0, nu * sizeof *lui), memset(luui, 0, nu * nu * sizeof *luui), memset(luxi, 0, nu * ni * sizeof *luxi);
    if (e->cost(e->cost_ctx[i], k, x + e->ox[i], u, &li, lx ? lxi : NULL, lu ? lui : NULL, lxx ? lxxi : NULL,
                luu ? luui : NULL, lux ? luxi : NULL))
      return 1;
    *l += e->w[i] * li;
    add_member(e, i, e->w[i], lxi, lui, lxxi, luui, luxi, lx, lu, lxx, luu, lux);
  }
  return 0;
}
