/* SPDX-License-Identifier: Apache-2.0 */
/* riccati.c — one knot of the Riccati recursion (see riccati.h). */
#include "riccati.h"

#include "boxqp.h"
#include "dense.h"

int grit_ilqr_riccati_knot(int n, int m, const double *fx, const double *fu, const double *lx, const double *lu,
                           const double *lxx, const double *luu, const double *lux, const double *Vx1,
                           const double *Vxx1, double mu, const double *dlo, const double *dhi, double *k,
                           double *K, double *Vx, double *Vxx, double dV[2], int *nclamped, double *work) {
  double *T = work;           /* n x n: Vxx1 fx */
  double *Qxx = T + n * n;    /* n x n */
  double *U = Qxx + n * n;    /* n x m: Vxx1 fu */
  double *Qux = U + n * m;    /* m x n */
  double *Quu = Qux + m * n;  /* m x m */
  double *Quur = Quu + m * m; /* m x m: Quu + mu I */
  double *L = Quur + m * m;   /* m x m */
  double *Qx = L + m * m;     /* n */
  double *Qu = Qx + n;        /* m */
  double *QuuK = Qu + m;      /* m x n */
  double *S = QuuK + m * n;   /* n x n */
  double *rhs = S + n * n;    /* m x n */
  double *tmp = rhs + m * n;  /* m */
  int *freev = (int *)(void *)(tmp + m);           /* m ints in m doubles */
  double *qpwork = tmp + 2 * m;                    /* 5m + m^2 */

  grit_ilqr_mat_mul(n, n, n, Vxx1, fx, T);
  grit_ilqr_mat_tmul(n, n, n, fx, T, Qxx);
  grit_ilqr_mat_tmul(n, m, n, fu, T, Qux);
  grit_ilqr_mat_mul(n, n, m, Vxx1, fu, U);
  grit_ilqr_mat_tmul(n, m, m, fu, U, Quu);
  grit_ilqr_mat_tvec(n, n, fx, Vx1, Qx);
  grit_ilqr_mat_tvec(n, m, fu, Vx1, Qu);
  if (lxx)
    for (int i = 0; i < n * n; ++i) Qxx[i] += lxx[i];
  if (lux)
    for (int i = 0; i < m * n; ++i) Qux[i] += lux[i];
  if (luu)
    for (int i = 0; i < m * m; ++i) Quu[i] += luu[i];
  if (lx)
    for (int i = 0; i < n; ++i) Qx[i] += lx[i];
  if (lu)
    for (int i = 0; i < m; ++i) Qu[i] += lu[i];
  grit_ilqr_symmetrize(m, Quu);
  for (int i = 0; i < m * m; ++i) Quur[i] = Quu[i];
  for (int i = 0; i < m; ++i) Quur[i * m + i] += mu;

  int nf = m;
  if (dlo && dhi) {
    nf = grit_ilqr_boxqp(m, Quur, Qu, dlo, dhi, k, freev, L, qpwork);
    if (nf < 0) return 1;
  } else {
    for (int i = 0; i < m * m; ++i) L[i] = Quur[i];
    if (grit_ilqr_chol(m, L)) return 1;
    for (int i = 0; i < m; ++i) {
      k[i] = -Qu[i];
      freev[i] = 1;
    }
    grit_ilqr_chol_solve(m, L, k, 1);
  }
  /* K = -Quur_ff^-1 Qux_f on the free rows, zero on the clamped ones. */
  for (int i = 0; i < m * n; ++i) K[i] = 0;
  if (nf > 0) {
    int r = 0;
    for (int i = 0; i < m; ++i)
      if (freev[i]) {
        for (int j = 0; j < n; ++j) rhs[r * n + j] = -Qux[i * n + j];
        ++r;
      }
    grit_ilqr_chol_solve(nf, L, rhs, n);
    r = 0;
    for (int i = 0; i < m; ++i)
      if (freev[i]) {
        for (int j = 0; j < n; ++j) K[i * n + j] = rhs[r * n + j];
        ++r;
      }
  }
  *nclamped = m - nf;

  /* The value function one knot earlier (with the unregularized Quu). */
  grit_ilqr_mat_vec(m, m, Quu, k, tmp); /* Quu k */
  dV[0] = 0;
  dV[1] = 0;
  for (int i = 0; i < m; ++i) {
    dV[0] += k[i] * Qu[i];
    dV[1] += 0.5 * k[i] * tmp[i];
  }
  for (int j = 0; j < n; ++j) {
    double s = Qx[j];
    for (int i = 0; i < m; ++i) s += K[i * n + j] * (tmp[i] + Qu[i]) + Qux[i * n + j] * k[i];
    Vx[j] = s;
  }
  grit_ilqr_mat_mul(m, m, n, Quu, K, QuuK);
  grit_ilqr_mat_tmul(m, n, n, K, QuuK, Vxx); /* K' Quu K */
  grit_ilqr_mat_tmul(m, n, n, K, Qux, S);    /* K' Qux */
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) Vxx[i * n + j] += Qxx[i * n + j] + S[i * n + j] + S[j * n + i];
  grit_ilqr_symmetrize(n, Vxx);
  return 0;
}
