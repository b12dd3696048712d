/* SPDX-License-Identifier: Apache-2.0 */
/* sysid_fit_stages.c — the fit's coarse global stage and its covariance and identifiability
 * (grit_fit_timed, src/engine/sysid_fit.c; docs/sysid.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sysid_fit_internal.h"

/* The coarse stage: the cost on a log-spaced grid around the guesses (no derivatives); the best point
 * (the first of equal ones) replaces cur's z. The K best grid points other than the guesses themselves
 * go to top (K x np, by increasing cost; *ntop of them) for multi-start. Points whose rollouts fail are
 * skipped. */
void grit_sysid_coarse_stage(fit *f, point *cur, point *trial, grit_fit_result *res, double *top, double *topc, int K,
                         int *ntop) {
  const int np = f->np, n = f->o->coarse_points;
  const double ls = log(f->o->coarse_span);
  double best = cur->cost;
  double *z0 = malloc(sizeof(double) * (size_t)np); /* the guesses */
  *ntop = 0;
  if (!z0) return;
  memcpy(z0, cur->z, sizeof(double) * (size_t)np);
  memcpy(trial->x0, cur->x0, sizeof(double) * (size_t)f->nseg * f->nxs);
  int idx[64] = {0};
  for (;;) {
    int guess = 1;
    for (int i = 0; i < np; ++i) {
      const double a = 2.0 * idx[i] / (n - 1) - 1.0;
      trial->z[i] = z0[i] + ls * a, guess &= a == 0.0;
    }
    char tmsg[GRIT_MESSAGE_SIZE];
    res->evaluations++;
    if (grit_sysid_evaluate(f, trial, 0, NULL, NULL, tmsg) == GRIT_OK) {
      if (trial->cost < best) {
        best = trial->cost;
        memcpy(cur->z, trial->z, sizeof(double) * (size_t)np);
      }
      int at = *ntop; /* insertion into the K best */
      while (!guess && at > 0 && trial->cost < topc[at - 1]) at--;
      if (!guess && at < K) {
        const int last = *ntop < K ? *ntop : K - 1;
        memmove(topc + at + 1, topc + at, sizeof(double) * (size_t)(last - at));
        memmove(top + (size_t)(at + 1) * np, top + (size_t)at * np, sizeof(double) * (size_t)(last - at) * np);
        topc[at] = trial->cost;
        memcpy(top + (size_t)at * np, trial->z, sizeof(double) * (size_t)np);
        if (*ntop < K) (*ntop)++;
      }
    }
    int i = 0;
    while (i < np && ++idx[i] == n) idx[i++] = 0;
    if (i == np) break;
  }
  res->coarse_cost = best;
  free(z0);
}

/* Inverse of the SPD matrix A (n x n) restricted to the rows in act (na of them), into Ai (na x na); 
 * -1 on success, else the position in act whose pivot failed. */
static int inverse_active(const double *A, int n, const int *act, int na, double *L, double *Ai) {
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < na; ++j) L[(size_t)i * na + j] = A[(size_t)act[i] * n + act[j]];
  const int bad = grit_sysid_cholesky(L, na);
  if (bad >= 0) return bad;
  for (int i = 0; i < na * na; ++i) Ai[i] = i % (na + 1) == 0 ? 1.0 : 0.0;
  grit_sysid_chol_solve(L, na, Ai, na);
  return -1;
}

/* The covariance of z at the optimum (docs/sysid.md, Uncertainty) and which parameters the data
 * identify: one at a time, the parameter whose information is singular, or else the one with the
 * largest log-space variance above 1, is held fixed and the others' covariance recomputed. */
void grit_sysid_covariance(fit *f, grit_fit_result *res, double *work_np, const double *values, double *std, double *cov,
                       int *identified) {
  const int np = f->np, nx = f->nx;
  double *R = work_np, *g = R + (size_t)np * np, *buf = g + 2 * (size_t)np;
  double *M = malloc(sizeof(double) * ((size_t)np * np * 4 + (size_t)np * (f->ntraj + 1) + 1));
  int *act = malloc(sizeof(int) * (size_t)np + 1);
  const int pd = grit_sysid_reduced_system(f, 0.0, R, g, buf);
  int ok = M && act && pd;
  double *Ai = M + (size_t)np * np, *L = Ai + (size_t)np * np, *C = L + (size_t)np * np, *sc = C + (size_t)np * np;
  /* the sandwich's meat: each trajectory's gradient with its initial states eliminated */
  if (M) {
    memset(M, 0, sizeof(double) * (size_t)np * np);
    memset(sc, 0, sizeof(double) * (size_t)np * (f->ntraj + 1));
  }
  for (int si = 0; ok && si < f->nseg; ++si) {
    const segment *sg = &f->seg[si];
    double *s = sc + (size_t)sg->traj * np;
    for (int i = 0; i < np; ++i) {
      double v = sg->cs[i];
      for (int k = 0; f->shoot && k < nx; ++k) v -= sg->Wm[(size_t)k * np + i] * sg->y[k];
      s[i] += v;
    }
  }
  double *all = grit_sysid_gather_rows(f, sc, np); /* every trajectory's gradient, in the global order */
  for (int t = 0; ok && all && t < f->traj_total; ++t)
    for (int i = 0; i < np; ++i)
      for (int j = 0; j < np; ++j) M[(size_t)i * np + j] += all[(size_t)t * np + i] * all[(size_t)t * np + j];
  double flag = ok && all ? 0.0 : 1.0;
  free(all);
  grit_sysid_allsum(f, &flag, 1);
  ok = ok && flag == 0.0;
  const int G = res->ntrajectories;
  const int sandwich = f->o->covariance == GRIT_FIT_COV_SANDWICH && G > np;
  res->covariance = sandwich ? GRIT_FIT_COV_SANDWICH : GRIT_FIT_COV_RESIDUAL;
  int na = 0;
  for (int i = 0; ok && i < np; ++i)
    if (R[(size_t)i * np + i] > 0) act[na++] = i;
  while (ok && na > 0) {
    const int bad = inverse_active(R, np, act, na, L, Ai);
    if (bad >= 0) {
      memmove(act + bad, act + bad + 1, sizeof(int) * (size_t)(na - bad - 1));
      na--;
      continue;
    }
    if (sandwich) { /* Ai M Ai G/(G-1) */
      for (int i = 0; i < na; ++i)
        for (int j = 0; j < na; ++j) {
          double s = 0.0;
          for (int k = 0; k < na; ++k) s += M[(size_t)act[i] * np + act[k]] * Ai[(size_t)k * na + j];
          L[(size_t)i * na + j] = s;
        }
      grit_matmul(Ai, L, C, na, na, na);
      for (int i = 0; i < na * na; ++i) C[i] *= (double)G / (G - 1);
    } else {
      for (int i = 0; i < na * na; ++i) C[i] = res->sigma2 * Ai[i];
    }
    int worst = -1;
    for (int i = 0; i < na; ++i)
      if (!(C[(size_t)i * na + i] <= 1.0) && (worst < 0 || !(C[(size_t)i * na + i] <= C[(size_t)worst * na + worst]))) worst = i;
    if (worst < 0) break;
    memmove(act + worst, act + worst + 1, sizeof(int) * (size_t)(na - worst - 1));
    na--;
  }
  if (!ok) na = 0;
  res->nidentified = na;
  for (int i = 0; i < np; ++i) {
    if (std) std[i] = INFINITY;
    if (identified) identified[i] = 0;
    for (int j = 0; cov && j < np; ++j) cov[(size_t)i * np + j] = INFINITY;
  }
  for (int i = 0; i < na; ++i) {
    const int a = act[i];
    if (std) std[a] = values[a] * sqrt(C[(size_t)i * na + i]);
    if (identified) identified[a] = 1;
    for (int j = 0; cov && j < na; ++j) cov[(size_t)a * np + act[j]] = C[(size_t)i * na + j];
  }
  free(M), free(act);
}
