/* SPDX-License-Identifier: Apache-2.0 */
/* boxqp.c — projected-Newton box-constrained QP (see boxqp.h). */
#include "boxqp.h"

#include <math.h>

#include "dense.h"

static double qp_value(int m, const double *H, const double *g, const double *x) {
  double v = 0;
  for (int i = 0; i < m; ++i) {
    double hx = 0;
    for (int j = 0; j < m; ++j) hx += H[i * m + j] * x[j];
    v += x[i] * (0.5 * hx + g[i]);
  }
  return v;
}

static void clamp_box(int m, const double *lo, const double *hi, double *x) {
  for (int i = 0; i < m; ++i) x[i] = fmin(fmax(x[i], lo[i]), hi[i]);
}

/* Marks the free variables at x (given the gradient) and factors H on them; returns nfree or -1. */
static int factor_free(int m, const double *H, const double *lo, const double *hi, const double *x,
                       const double *grad, int *freev, double *Lff) {
  int nf = 0;
  for (int i = 0; i < m; ++i) {
    const int clamped = (x[i] <= lo[i] && grad[i] > 0) || (x[i] >= hi[i] && grad[i] < 0);
    freev[i] = !clamped;
    nf += freev[i];
  }
  int r = 0;
  for (int i = 0; i < m; ++i) {
    if (!freev[i]) continue;
    int c = 0;
    for (int j = 0; j < m; ++j)
      if (freev[j]) Lff[r * nf + c++] = H[i * m + j];
    ++r;
  }
  return nf == 0 ? 0 : (grit_ilqr_chol(nf, Lff) ? -1 : nf);
}

int grit_ilqr_boxqp(int m, const double *H, const double *g, const double *lo, const double *hi, double *x,
                    int *free_out, double *Lff, double *work) {
  double *grad = work, *search = work + m, *xc = work + 2 * m, *rhs = work + 3 * m;
  int *prev_free = (int *)(void *)(work + 4 * m); /* m ints fit in m doubles */
  clamp_box(m, lo, hi, x);
  double value = qp_value(m, H, g, x);
  for (int i = 0; i < m; ++i) prev_free[i] = -1;
  int nf = 0;
  for (int iter = 0; iter < 100; ++iter) {
    grit_ilqr_mat_vec(m, m, H, x, grad);
    for (int i = 0; i < m; ++i) grad[i] += g[i];
    int changed = 0;
    for (int i = 0; i < m; ++i) {
      const int clamped = (x[i] <= lo[i] && grad[i] > 0) || (x[i] >= hi[i] && grad[i] < 0);
      changed |= prev_free[i] != !clamped;
    }
    if (changed) {
      nf = factor_free(m, H, lo, hi, x, grad, free_out, Lff);
      if (nf < 0) return -1;
      for (int i = 0; i < m; ++i) prev_free[i] = free_out[i];
    }
    if (nf == 0) break;
    double gnorm = 0;
    for (int i = 0; i < m; ++i)
      if (free_out[i]) gnorm += grad[i] * grad[i];
    if (sqrt(gnorm) < 1e-10 * (1 + fabs(value))) break;
    /* Newton target of the free variables with the clamped ones held: H_ff x_f = -(g_f + H_fc x_c). */
    int r = 0;
    for (int i = 0; i < m; ++i) {
      if (!free_out[i]) continue;
      double s = g[i];
      for (int j = 0; j < m; ++j)
        if (!free_out[j]) s += H[i * m + j] * x[j];
      rhs[r++] = -s;
    }
    grit_ilqr_chol_solve(nf, Lff, rhs, 1);
    double sdotg = 0;
    r = 0;
    for (int i = 0; i < m; ++i) {
      search[i] = free_out[i] ? rhs[r++] - x[i] : 0;
      sdotg += search[i] * grad[i];
    }
    if (sdotg >= 0) break; /* no descent left: at the optimum up to round-off */
    double step = 1, vc = value;
    int accepted = 0;
    while (step > 1e-12) {
      for (int i = 0; i < m; ++i) xc[i] = x[i] + step * search[i];
      clamp_box(m, lo, hi, xc);
      vc = qp_value(m, H, g, xc);
      if ((vc - value) / (step * sdotg) >= 0.1) {
        accepted = 1;
        break;
      }
      step *= 0.6;
    }
    if (!accepted) break;
    const double improvement = value - vc;
    for (int i = 0; i < m; ++i) x[i] = xc[i];
    value = vc;
    if (improvement < 1e-14 * (1 + fabs(value))) break;
  }
  /* The factor must describe the free set at the returned point (the caller builds gains from it). */
  grit_ilqr_mat_vec(m, m, H, x, grad);
  for (int i = 0; i < m; ++i) grad[i] += g[i];
  return factor_free(m, H, lo, hi, x, grad, free_out, Lff);
}
