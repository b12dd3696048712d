/* SPDX-License-Identifier: Apache-2.0 */
/* solver.c — Newton's method with an exact line search for the convex contact problem (seed 000,
 * section X; ARCHITECTURE.md, The Newton solver): islands, evaluation, convergence, the Newton direction
 * (the line search: solver_linesearch.c; the start and the models of the direction: solver_start.c). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime for the optional phase timing */
#include "solver.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "afactor.h"
#include "dynamics.h"
#include "constraints.h"
#include "hessian.h"
#include "hessian_internal.h" /* the kept factor: there, on the path a factor would take (grit_solver_refactor) */
#include "status_internal.h"
#include "solver_state.h"
#include "timing.h"

grit_solver_options grit_solver_default_options(void) {
  grit_solver_options o;
  o.rel_tol = 1e-5;
  o.abs_tol = 1e-14;
  o.max_iters = 100;
  o.max_ls_iters = 100;
  /* The block-sparse path everywhere: per factorization it measured 0.13 vs 0.46 us (sphere, nv 6),
   * 0.65 vs 0.9 us (arm and ball, nv 13: two trees), 9 us vs ~1 ms (clutter, nv 240) against dense
   * LAPACK (bench_mujoco --dense-max-nv; docs/performance.md). */
  o.dense_max_nv = 0;
  o.sparse_path = 1;
  o.timing = 0;
  o.stick_start = 1;
  return o;
}

grit_status grit_solver_create(const grit_model *m, int max_constraints, int max_jstore, grit_solver **out,
                               char *message) {
  *out = NULL;
  grit_solver *s = calloc(1, sizeof *s);
  if (!s) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the solver");
  s->m = m;
  s->nv = m->nv;
  s->cap_c = max_constraints;
  s->cap_j = max_jstore;
  s->c = calloc((size_t)max_constraints + 1, sizeof *s->c);
  s->jstore = calloc((size_t)max_jstore + 1, sizeof(double));
  s->lsidx = calloc((size_t)max_constraints + 1, sizeof(int));
  s->inpat = calloc((size_t)max_constraints + 1, 1);
  s->cpair = calloc((size_t)max_constraints + 1, sizeof(int));
  s->vhat = calloc((size_t)max_constraints + 1, sizeof(double));
  s->jcols = calloc(4 * (size_t)max_constraints + 4, sizeof(int));
  s->jwide = calloc((size_t)max_constraints + 1, 1);
  s->jlist = calloc((size_t)max_jstore + 1, sizeof(int)); /* (pages touched only as far as used) */
  s->jloff = calloc((size_t)max_constraints + 1, sizeof(int));
  s->jlnum = calloc((size_t)max_constraints + 1, sizeof(int));
  s->gasm = calloc(9 * (size_t)max_constraints + 1, sizeof(double));
  s->gadd = calloc((size_t)max_constraints + 1, 1);
  s->run_j = calloc((size_t)max_constraints + 1, sizeof *s->run_j);
  s->run_g = calloc((size_t)max_constraints + 1, sizeof *s->run_g);
  s->snap_A = calloc((size_t)m->nM + 1, sizeof(double));
  s->snap_J = calloc((size_t)max_jstore + 1, sizeof(double)); /* (pages touched only as far as used) */
  s->snap_con = calloc(6 * (size_t)max_constraints + 1, sizeof(int));
  s->tree_id = calloc((size_t)m->ntree + 1, sizeof(int));
  s->tree_isl = calloc((size_t)m->ntree + 1, sizeof(int));
  s->uf = calloc((size_t)m->ntree + 1, sizeof(int));
  s->isl_start = calloc((size_t)m->ntree + 2, sizeof(int));
  s->isl_con = calloc((size_t)max_constraints + 1, sizeof(int));
  s->isl_tstart = calloc((size_t)m->ntree + 2, sizeof(int));
  s->isl_tree = calloc((size_t)m->ntree + 1, sizeof(int));
  s->act = calloc((size_t)m->ntree + 1, sizeof(int));
  s->act_fac = calloc((size_t)m->ntree + 1, sizeof(int));
  s->tree_on = calloc((size_t)m->ntree + 1, 1);
  s->tree_flag = calloc((size_t)m->ntree + 1, 1);
  s->isl = calloc((size_t)ISL_FIELDS * (size_t)m->ntree + 1, sizeof(double));
  if (s->tree_id)
    for (int t = 0; t < m->ntree; ++t) s->tree_id[t] = t;
  double **vecs[] = {&s->r, &s->dv, &s->Adv, &s->e, &s->Ae, &s->jtg, &s->dinv, &s->dsq, &s->tmp};
  int ok = s->c && s->jstore && s->lsidx && s->inpat && s->cpair && s->vhat && s->jcols && s->jwide && s->jlist && s->jloff && s->jlnum && s->gasm && s->gadd && s->run_j && s->run_g && s->snap_A &&
           s->snap_J && s->snap_con && s->tree_id && s->tree_isl && s->uf &&
           s->isl_start && s->isl_con && s->isl && s->isl_tstart && s->isl_tree && s->act && s->act_fac && s->tree_on && s->tree_flag;
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) ok = ok && (*vecs[i] = calloc((size_t)s->nv + 1, sizeof(double)));
  ok = ok && grit_solver_jcols_create(s, m);
  grit_status st = ok ? grit_hessian_create(m, max_constraints, grit_solver_default_options().dense_max_nv, &s->H, message)
                      : grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the solver");
  if (st != GRIT_OK) {
    grit_solver_free(s);
    return st;
  }
  s->tcm = s->H->tcp;
  *out = s;
  return GRIT_OK;
}

void grit_solver_free(grit_solver *s) {
  if (!s) return;
  grit_hessian_free(s->H);
  free(s->c);
  free(s->jstore);
  free(s->lsidx);
  free(s->inpat);
  free(s->cpair);
  free(s->vhat);
  free(s->jcols);
  free(s->jwide);
  free(s->jlist);
  free(s->jloff);
  free(s->jlnum);
  free(s->cx_ptr);
  free(s->cx_list);
  free(s->gasm);
  free(s->gadd);
  free(s->run_j);
  free(s->run_g);
  free(s->snap_A);
  free(s->snap_J);
  free(s->snap_con);
  free(s->tree_id);
  free(s->tree_isl);
  free(s->uf);
  free(s->isl_start);
  free(s->isl_con);
  free(s->isl);
  free(s->isl_tstart);
  free(s->isl_tree);
  free(s->act);
  free(s->act_fac);
  free(s->tree_on);
  free(s->tree_flag);
  double *vecs[] = {s->r, s->dv, s->Adv, s->e, s->Ae, s->jtg, s->dinv, s->dsq, s->tmp};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; ++i) free(vecs[i]);
  free(s);
}

grit_constraint *grit_solver_constraints(grit_solver *s, int *capacity) {
  if (capacity) *capacity = s->cap_c;
  return s->c;
}

int *grit_solver_cx_built(grit_solver *s) { return &s->cx_built; }

double *grit_solver_jstore(grit_solver *s, int *capacity) {
  if (capacity) *capacity = s->cap_j;
  return s->jstore;
}

/* ---------------------------------------------------------------------------------- islands */

static int uf_find(int *uf, int t) {
  while (uf[t] != t) t = uf[t] = uf[uf[t]]; /* path halving */
  return t;
}

/* The islands of the first nc constraints: trees linked by a constraint, directly or through others,
 * share one. A is block diagonal by trees and each constraint lies in one island, so l(v) is a sum of
 * one term per island: each island's Newton step, line search and convergence need nothing from the
 * others. Sets s->nisl, tree_isl, each island's constraints and trees (counting sorts) and its number
 * of dofs. O(nc + ntree). */
static void find_islands(grit_solver *s, int nc) {
  const int nt = s->m->ntree;
  if (nt == 1 && !s->no_one_tree_islands) { /* one tree (a robot, a free body): one island holding every
                                               constraint in index order, what the sorts below give */
    s->nisl = 1;
    s->tree_isl[0] = 0;
    s->isl_start[0] = s->isl_tstart[0] = 0;
    s->isl_start[1] = nc, s->isl_tstart[1] = 1;
    for (int i = 0; i < nc; ++i) s->isl_con[i] = i;
    s->isl_tree[0] = 0;
    ISL(s, ISL_NDOF)[0] = 0.0 + s->m->tree_dofnum[0];
    return;
  }
  int *uf = s->uf;
  for (int t = 0; t < nt; ++t) uf[t] = t;
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *c = &s->c[i];
    if (c->ntree != 2) continue;
    const int a = uf_find(uf, c->tree[0]), b = uf_find(uf, c->tree[1]);
    if (a != b) uf[a < b ? b : a] = a < b ? a : b; /* the root is the island's first tree */
  }
  int n = 0;
  for (int t = 0; t < nt; ++t) {
    const int r = uf_find(uf, t);
    s->tree_isl[t] = r == t ? n++ : s->tree_isl[r];
  }
  s->nisl = n;
  int *cs = s->isl_start, *ts = s->isl_tstart;
  memset(cs, 0, sizeof(int) * (size_t)(n + 1));
  memset(ts, 0, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < nc; ++i) cs[s->tree_isl[s->c[i].tree[0]] + 1]++;
  for (int t = 0; t < nt; ++t) ts[s->tree_isl[t] + 1]++;
  for (int k = 0; k < n; ++k) cs[k + 1] += cs[k], ts[k + 1] += ts[k];
  for (int i = 0; i < nc; ++i) s->isl_con[cs[s->tree_isl[s->c[i].tree[0]]]++] = i;
  for (int t = 0; t < nt; ++t) s->isl_tree[ts[s->tree_isl[t]]++] = t;
  for (int k = n; k > 0; --k) cs[k] = cs[k - 1], ts[k] = ts[k - 1]; /* the fill advanced each start */
  cs[0] = ts[0] = 0;
  double *ndof = ISL(s, ISL_NDOF);
  for (int k = 0; k < n; ++k) ndof[k] = 0.0;
  for (int t = 0; t < nt; ++t) ndof[s->tree_isl[t]] += s->m->tree_dofnum[t];
}

/* ----------------------------------------------------------------------------------- Newton */

/* r = A e - J^T gamma on one tree's n dofs from adr, and its terms of the island's sums (rn, an, jn, ee, vmax
 * in sums[0..4], added in the dofs' order); inlined with a free body's 6 and a particle's 3 as constants (the
 * same operations: the same bits; grit_solver.no_sized_sums: n as a variable always). */
static inline void residual_sums(grit_solver *s, const double *v, int adr, int n, double sums[6]) {
  double rn = sums[0], an = sums[1], jn = sums[2], ee = sums[3], vmax = sums[4];
  for (int i = adr; i < adr + n; ++i) {
    const double d = s->dinv[i];
    s->r[i] = s->Ae[i] - s->jtg[i];
    rn += (d * s->r[i]) * (d * s->r[i]);
    an += (d * s->Ae[i]) * (d * s->Ae[i]);
    jn += (d * s->jtg[i]) * (d * s->jtg[i]);
    ee += s->e[i] * s->Ae[i];
    vmax = maxd(vmax, fabs(v[i]) * s->dsq[i]); /* |D^-1 v|: the size of the terms of A v */
  }
  sums[0] = rn, sums[1] = an, sums[2] = jn, sums[3] = ee, sums[4] = vmax;
}

/* Evaluates island k at v: e = v - v* and A e on its trees; each of its constraints' cost, gamma and G
 * (with compute_vc, vc = J v + b first, else vc is already at v, updated by the steps); J^T gamma into
 * s->jtg and the residual r = A e - J^T gamma, the gradient of l; and the island's ISL numbers. */
void grit_solver_eval_island(grit_solver *s, const grit_model *m, const double *A, const double *vstar, const double *v,
                             double dt, int k, int compute_vc) {
  const int *trees = s->isl_tree + s->isl_tstart[k], ntr = s->isl_tstart[k + 1] - s->isl_tstart[k];
  for (int q = 0; q < ntr; ++q) {
    const int t = trees[q], adr = m->tree_dofadr[t];
    SIZED(s, m->tree_dofnum[t], for (int i = 0; i < n_; ++i) s->jtg[adr + i] = 0.0);
    if (!compute_vc) continue; /* e and A e were carried along the step (search_islands) */
    SIZED(s, m->tree_dofnum[t], for (int i = 0; i < n_; ++i) s->e[adr + i] = v[adr + i] - vstar[adr + i]);
    tree_mulv(m, s->tcm, A, t, s->e, s->Ae);
  }
  double cc = 0.0;
  for (int q = s->isl_start[k]; q < s->isl_start[k + 1]; ++q) {
    grit_constraint *c = &s->c[s->isl_con[q]];
    const int i = s->isl_con[q], wide = s->jwide[i];
    if (compute_vc) c->idle = 0;
    if (c->idle) { /* no impulse at both ends of the last step, so none at v: gamma, G and cost as they were */
      cc += c->cost;
      continue;
    }
    const int free3 = !wide && grit_solver_free3(s, m, c); /* (a wide one takes its columns) */
    if (compute_vc && wide) grit_solver_apply_j(s, m, i, v, 1, c->vc);
    else if (compute_vc && free3)
      grit_solver_free3_apply(s->jstore + c->joff[0], v + m->tree_dofadr[c->tree[0]], c->b, c->vc);
    else if (compute_vc) constraint_apply(m, c, s->jstore, v, 1, c->vc);
    c->cost = constraint_eval(c, dt, c->vc, c->gamma, c->G);
    int gnz = 0;
    if (normal_only(c)) gnz = c->G[8] != 0.0; /* (its other entries are set to zero) */
    else
      for (int r = 0, n = c->dim * c->dim; r < n && !gnz; ++r) gnz = c->G[r] != 0.0; /* (a pressed contact's
                                                                                         first entry: one test) */
    c->gnz = gnz;
    cc += c->cost;
    int nl = 0;
    const int *l = wide ? grit_solver_jlist_apply(s, i, &nl) : NULL;
    if (wide) grit_solver_apply_transpose_cols(m, c, s->jstore, s->jcols + 4 * i, c->gamma, s->jtg, l, nl); /* (jtg: from +0) */
    else if (free3) grit_solver_free3_transpose(s->jstore + c->joff[0], c->gamma, s->jtg + m->tree_dofadr[c->tree[0]]);
    else constraint_apply_transpose(m, c, s->jstore, c->gamma, s->jtg);
  }
  double sums[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}; /* rn, an, jn, ee, vmax */
  for (int q = 0; q < ntr; ++q) {
    const int t = trees[q], adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    if (n == 6 && !s->no_sized_sums) residual_sums(s, v, adr, 6, sums);
    else if (n == 3 && !s->no_sized_sums) residual_sums(s, v, adr, 3, sums);
    else residual_sums(s, v, adr, n, sums);
  }
  const double rn = sums[0], an = sums[1], jn = sums[2], ee = sums[3], vmax = sums[4];
  double smax = 0.0;
  if (compute_vc) /* |D^-1 v*|, the size of the terms of A v*: v* does not change during the solve */
    for (int q = 0; q < ntr; ++q) {
      const int t = trees[q], adr = m->tree_dofadr[t];
      SIZED(s, m->tree_dofnum[t], smax = max_scaled(smax, vstar + adr, s->dsq + adr, n_));
    }
  ISL(s, ISL_RN)[k] = rn, ISL(s, ISL_AN)[k] = an, ISL(s, ISL_JN)[k] = jn;
  ISL(s, ISL_EE)[k] = ee, ISL(s, ISL_CC)[k] = cc, ISL(s, ISL_VMAX)[k] = vmax;
  if (compute_vc) ISL(s, ISL_SMAX)[k] = smax;
}

/* The global phase ends for good once the residual is below this fraction of its reference. Near the
 * solution, contacts at the edge of activation flip in and out: the isotropic step (too short along
 * slips) deactivates them, the exact step (without their stiffness) pushes them back in and is cut,
 * and a phase chosen by the last step's length alone alternated the two for hundreds of iterations
 * (alpha 1.5, 0.02, 1.5, ...; a clutter of 640 objects failed to converge in 300). Measured over
 * clutters of 40 / 160 / 640 objects (mean Newton iterations in 200 steps of piling up):
 * 11.8 / 24.1 / failed -> 11.0 / 19.0 / 26.3. */
#define GLOBAL_RESIDUAL 0.3

/* grit_hessian_add over constraint i's list when it has one. */
static inline void hessian_add(grit_solver *s, int i, const double *G, int pair) {
  const grit_constraint *c = &s->c[i];
  const double *J[2] = {s->jstore + c->joff[0], s->jstore + (c->ntree == 2 ? c->joff[1] : 0)};
  const int l = s->jloff[i];
  if (l < 0) grit_hessian_add(s->H, c->dim, c->ntree, c->tree, J, G, pair);
  else grit_hessian_add_cols(s->H, c->dim, c->ntree, c->tree, J, G, pair, s->jlist + l, s->jlnum[i]);
}

/* Adds the free-body run's terms (run_j, run_g; free_run_term) to tree *trun's block, and starts one on tree t. */
static inline void free_run_flush(grit_solver *s, int *nrun, int *trun, int t) {
  if (*nrun > 0) grit_hessian_add_free_run_avx2(s->H, *trun, *nrun, s->run_j, s->run_g);
  *nrun = 0;
  *trun = t;
}

/* H = A + sum J^T G J at the constraints' current G (for the contacts marked isotropic, Lagged
 * friction's as grit_solver_global_hessian), over the islands act[0..nact-1]: all of them (every tree), or
 * some, whose trees s->tree_on marks. The islands' constraints keep their index order, so each block
 * receives its terms in the same order either way. The coupling pattern is that of the constraints
 * with a nonzero G only: a candidate out of contact (G = 0, most of a clutter's: 16 of 100 coupled
 * pairs were active on average) adds no block, and leaving its pair out of the pattern keeps the
 * factor's fill to the trees actually pressed together. The pattern can change between iterations;
 * the symbolic analysis is redone only when it does (grit_hessian_pattern_commit). */
static grit_status assemble(grit_solver *s, const double *A, const int *act, int nact, char *message) {
  const int *con = s->isl_con;
  grit_hessian_restrict(s->H, nact == s->nisl ? NULL : s->tree_on);
  /* The pattern of every island, done ones included (their G as at their last evaluation): an island
   * that is done changes no pair, so the symbolic analysis stays valid while islands drop out (it was
   * redone in 2 of 3 factorizations of the series' clutter of 40 objects); the factorization skips the
   * trees that are off. */
  const int all = nact == s->nisl;
  int *pair = s->cpair;
  /* (a pair once in the pattern stays in it for the solve, and the constraints keep their order: when none
   * enters it, the pattern is the last one, and its hash lookups and sort are skipped) */
  int enters = !s->pat_kept || s->H->no_keep; /* (grit_hessian_keep_blocks(h, 0): declared each time) */
  for (int q = 0; q < s->isl_start[s->nisl] && !enters; ++q) {
    const grit_constraint *c = &s->c[con[q]];
    enters = c->ntree == 2 && !s->inpat[con[q]] && (c->gnz || (c->gn_start > 0.0 && (all || s->tree_on[c->tree[0]])));
  }
  s->pat_kept = 1;
  if (!enters) grit_hessian_pattern_keep(s->H);
  else grit_hessian_pattern_reset(s->H);
  for (int q = 0; q < s->isl_start[s->nisl] && enters; ++q) {
    const grit_constraint *c = &s->c[con[q]];
    pair[con[q]] = -1;
    if (c->ntree != 2) continue;
    /* (a done island's gn_start is stale); a pair once in the pattern stays in it for the solve, its block
     * zero while inactive, so that the symbolic analysis is not redone as contacts flip in and out */
    const int zero = !s->inpat[con[q]] && !c->gnz && !(c->gn_start > 0.0 && (all || s->tree_on[c->tree[0]]));
    if (zero) continue;
    s->inpat[con[q]] = 1;
    if ((pair[con[q]] = grit_hessian_pattern_pair(s->H, c->tree[0], c->tree[1])) < 0) {
      s->pat_kept = 0;
      return grit_set_error(message, GRIT_ERR_CAPACITY, "solver: too many coupled tree pairs");
    }
  }
  if (enters) grit_hessian_pattern_commit(s->H);
  s->asm_all = all ? KEPT_STEP : KEPT_NONE; /* (what each constraint adds is kept for grit_solver_refactor) */
  /* What each constraint adds, into gasm; one whose term differs from the last assembly's marks its blocks,
   * and the others' blocks are kept (grit_hessian_begin_kept: A and J are the last assembly's within a
   * solve and in the refactor after it; a new solve invalidates them). Where nothing can be kept (a robot's
   * one tree), H is started first and each term added as it is found, in one loop, as before. */
  const int track = grit_hessian_keeps_any(s->H);
  if (!track) grit_hessian_begin(s->H, A);
  /* a run of terms on one free body alone in its tree (the coin's 152 patch points) in one call (free_run_term) */
  const int runs = !track && !s->no_free_run && grit_hessian_free_run_ok(s->H);
  int nrun = 0, trun = -1;
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_start[act[a]]; q < s->isl_start[act[a] + 1]; ++q) {
      const int i = con[q];
      const grit_constraint *c = &s->c[i];
      int changed = s->gadd[i]; /* (adding nothing now: whether it added something then) */
      s->gadd[i] = 0;
      if (!c->gnz && !(c->gn_start > 0.0)) { /* adds nothing */
        if (track && changed) grit_hessian_keep_touch(s->H, c->ntree, c->tree, pair[i]);
        continue;
      }
      double Gm[9];
      if (c->isotropic) grit_solver_global_hessian(c, Gm);
      else if (c->gn_start > 0.0) memcpy(Gm, c->G, sizeof Gm);
      if (c->gn_start > 0.0) Gm[8] = c->gn_start;
      const double *G = c->isotropic || c->gn_start > 0.0 ? Gm : c->G;
      if (track && (!changed || !same_bits_n(s->gasm + 9 * (size_t)i, G, c->dim * c->dim)))
        grit_hessian_keep_touch(s->H, c->ntree, c->tree, pair[i]);
      keep_added(s, i, G);
      if (track) continue;
      if (runs && free_run_term(s, c, i, G)) {
        if (c->tree[0] != trun) free_run_flush(s, &nrun, &trun, c->tree[0]);
        s->run_j[nrun] = s->jstore + c->joff[0], s->run_g[nrun] = s->gasm + 9 * (size_t)i; /* (G as kept) */
        ++nrun;
        continue;
      }
      free_run_flush(s, &nrun, &trun, -1);
      hessian_add(s, i, G, pair[i]);
    }
  free_run_flush(s, &nrun, &trun, -1);
  if (!track) return GRIT_OK;
  grit_hessian_begin_kept(s->H, A);
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_start[act[a]]; q < s->isl_start[act[a] + 1]; ++q) {
      const grit_constraint *c = &s->c[con[q]];
      /* (nothing to add, or only to blocks kept) */
      if (!s->gadd[con[q]] || grit_hessian_kept(s->H, c->ntree, c->tree, pair[con[q]])) continue;
      hessian_add(s, con[q], s->gasm + 9 * (size_t)con[q], pair[con[q]]);
    }
  return GRIT_OK;
}

/* Adds the time since *t to *acc and restarts *t, when timing. */
static inline void lap(int timing, double *acc, double *t) {
  if (!timing) return;
  const double now = grit_clock_us();
  *acc += now - *t;
  *t = now;
}

/* The sums over the islands of the convergence test's terms and the cost (in island order). */
typedef struct island_sums {
  double rn, an, jn, ee, cc, vmax, smax;
} island_sums;

static island_sums sum_islands(const grit_solver *s) {
  const double *irn = ISL(s, ISL_RN), *ian = ISL(s, ISL_AN), *ijn = ISL(s, ISL_JN), *iee = ISL(s, ISL_EE),
               *icc = ISL(s, ISL_CC), *ivmax = ISL(s, ISL_VMAX), *ismax = ISL(s, ISL_SMAX);
  island_sums u = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  for (int k = 0; k < s->nisl; ++k) {
    u.rn += irn[k], u.an += ian[k], u.jn += ijn[k], u.ee += iee[k], u.cc += icc[k];
    u.vmax = maxd(u.vmax, ivmax[k]);
    u.smax = maxd(u.smax, ismax[k]);
  }
  return u;
}

/* Phase 1: D = diag(A)^-1/2 for the scaled convergence criterion, the islands, every island active. */
static void begin_solve(grit_solver *s, const grit_model *m, const double *A, int nc, double dt) {
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = 0; i < n; ++i) {
      s->dsq[adr + i] = sqrt(A[m->tree_madr[t] + i * n + i]);
      s->dinv[adr + i] = 1.0 / s->dsq[adr + i];
    }
  }
  find_islands(s, nc);
  memset(s->inpat, 0, (size_t)nc);
  s->pat_kept = 0;
  for (int i = 0; i < nc; ++i) /* the line search's hot paths read it: two divisions each time */
    s->vhat[i] = s->c[i].kind == GRIT_CONSTRAINT_LAGGED ? breaking_velocity(&s->c[i], dt) : 0.0;
  grit_solver_find_jcols(s, m, nc);
  double *ialpha = ISL(s, ISL_ALPHA);
  for (int k = 0; k < s->nisl; ++k) s->act[k] = k, ialpha[k] = 0.0;
}

/* Phase 2 (convergence): 1 when converged, 0 to go on; an error status (< 0 never) through *status. The
 * residual's round-off floor: each entry of r = A (v - v*) - J^T gamma is a difference of sums whose terms
 * are as large as D A v, D A v* and D J^T gamma, so it cannot be computed below a few ulps of them
 * (scaled by D, the terms of A v are about D^-1 v). When the reference itself is tiny (a body at rest
 * under balanced forces), abs_tol alone can lie below that floor and Newton would stall on noise. */
static int converged(const grit_solver *s, const grit_solver_options *opt, int iter, const island_sums *u,
                     grit_solver_stats *st, grit_status *status, char *message) {
  st->residual = sqrt(u->rn);
  st->residual_ref = maxd(sqrt(u->an), sqrt(u->jn));
  const double floor_ = 64.0 * DBL_EPSILON * sqrt((double)s->nv) * maxd(maxd(u->vmax, u->smax), sqrt(u->jn));
  st->cost = 0.5 * u->ee + u->cc;
  *status = GRIT_OK;
  if (!isfinite(st->residual)) {
    *status = grit_set_error(message, GRIT_ERR_NOT_FINITE, "solver: non-finite residual at iteration %d", iter);
    return 0;
  }
  /* the scaled criterion, checked after at least one Newton step */
  const double tol = opt->abs_tol + opt->rel_tol * st->residual_ref + floor_;
  if (iter > 0 && st->residual <= tol) return 1;
  if (iter >= opt->max_iters)
    *status = grit_set_error(message, GRIT_ERR_NOT_CONVERGED,
                             "solver: no convergence in %d Newton iterations (residual %.3g, reference %.3g)",
                             opt->max_iters, st->residual, st->residual_ref);
  return 0;
}

/* Phase 3: the islands that take this iteration's step, those not yet done, into s->act (returns their
 * count), and their global phase. An island is done when its residual is within its share of the
 * tolerance,
 *   |D r_k|^2 <= (abs_tol + rel_tol ref)^2 ref_k^2 / sum_j ref_j^2 + rho_k^2,
 * ref_k^2 = max(|D A e_k|^2, |D J^T gamma_k|^2), rho_k the round-off floor computed over the island's own
 * n_k dofs and terms (so that an island with nothing to do, free motion reached to round-off, is done
 * too). The shares sum to at most tol^2, so once every island is within its own the whole residual is
 * within tol. A done island is left as it is (it is not evaluated, assembled, factored, solved or
 * searched), which makes an iteration's cost that of the islands still converging (docs/contact.md,
 * Islands). The global phase, island by island: its first iteration, and any after a line search that
 * cut its step below half while its residual is above GLOBAL_RESIDUAL of its reference. */
static int choose_active(grit_solver *s, const grit_solver_options *opt, int iter, double residual_ref) {
  const double *irn = ISL(s, ISL_RN), *ian = ISL(s, ISL_AN), *ijn = ISL(s, ISL_JN), *ivmax = ISL(s, ISL_VMAX),
               *ismax = ISL(s, ISL_SMAX), *ialpha = ISL(s, ISL_ALPHA), *indof = ISL(s, ISL_NDOF);
  const int nisl = s->nisl;
  const double rtol = opt->abs_tol + opt->rel_tol * residual_ref;
  double refsum = 0.0;
  for (int k = 0; k < nisl; ++k) refsum += maxd(ian[k], ijn[k]);
  int nact = 0;
  for (int k = 0; k < nisl; ++k) {
    const double fk = 64.0 * DBL_EPSILON * maxd(maxd(ivmax[k], ismax[k]), sqrt(ijn[k]));
    /* (at iteration 0 too when its residual is exactly zero: the island is at its minimizer, v* of a
     * free island) */
    /* (not at iteration 0 for an island started from the last step's acceleration either: accepted at its
     * start within the tolerance, a body at rest continued that acceleration step after step and settled
     * off its discrete equilibrium by ~5e-6 relative (test_hydro, test_physics_contact: 1e-6), where one
     * Newton step lands far below the tolerance; stop 22, with the warm start on by default) */
    const int first_ok = iter > 0 || irn[k] == 0.0;
    const int done = first_ok && irn[k] * refsum <= rtol * rtol * maxd(ian[k], ijn[k]) + fk * fk * indof[k] * refsum;
    if (!done) s->act[nact++] = k;
    for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q) s->tree_on[s->isl_tree[q]] = !done;
  }
  for (int a = 0; a < nact; ++a) {
    const int k = s->act[a];
    const int global = ialpha[k] < 0.5 && irn[k] > GLOBAL_RESIDUAL * GLOBAL_RESIDUAL * maxd(ian[k], ijn[k]);
    /* An island started from the last step's acceleration within the global phase's residual is near its
     * solution with its contacts' slips continued: one sliding there slides on (the composite loop's
     * contacts creeping at 12-14 eps were predicted to stick, and that step was cut to alpha ~ 1e-3), so
     * its first step takes the exact models and the later steps' cap on alpha (solver_linesearch.c). From
     * the same trajectories, Newton iterations per step with the warm start: loop 3.71 -> 3.15, sliding rod
     * 1.98 -> 1.00, CMU humanoid 3.01 -> 2.64, arm7.xml 2.52 -> 1.00, rope 4.38 -> 4.33, clutter.xml 6.62
     * -> 6.62 (docs/performance.md, stop 21). */
    if (iter == 0 && !global && ISL(s, ISL_WARM)[k] != WARM_NONE) ISL(s, ISL_WARM)[k] = WARM_NEAR;
    grit_solver_choose_isotropic(s, k, iter, opt->stick_start && ISL(s, ISL_WARM)[k] != WARM_NEAR, global);
  }
  return nact;
}

/* dv = -H^-1 r over the active islands with the factor at hand (the stick and pressed models' right-hand
 * sides with first); *dvmax: the largest |D^-1 dv|. */
static void solve_direction(grit_solver *s, const grit_model *m, int nact, double dt, int first, grit_solver_stats *st,
                            double *dvmax) {
  if (nact != s->nisl) memset(s->dv, 0, sizeof(double) * (size_t)s->nv); /* the islands at rest: no step */
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_tstart[s->act[a]]; q < s->isl_tstart[s->act[a] + 1]; ++q) {
      const int t = s->isl_tree[q], adr = m->tree_dofadr[t];
      SIZED(s, m->tree_dofnum[t], for (int i = 0; i < n_; ++i) s->dv[adr + i] = -s->r[adr + i]);
    }
  if (first) grit_solver_stick_rhs(s, m, nact, dt); /* (the first iteration's models; after it, contacts
                                                        modelled pressed only: no ISO_STICK then) */
  grit_hessian_solve(s->H, s->dv, 1);
  st->newton_iters++;
  *dvmax = 0.0; /* (over the active islands: dv is zero elsewhere) */
  for (int a = 0; a < nact; ++a)
    for (int q = s->isl_tstart[s->act[a]]; q < s->isl_tstart[s->act[a] + 1]; ++q) {
      const int t = s->isl_tree[q], adr = m->tree_dofadr[t];
      SIZED(s, m->tree_dofnum[t], *dvmax = max_scaled(*dvmax, s->dv + adr, s->dsq + adr, n_));
    }
}

/* Phase 4: the Newton direction over the active islands, H = A + sum J^T G J assembled and factored, and
 * dv = -H^-1 r (with all of them, as one system). *dvmax: the largest |D^-1 dv|. The factor is kept for
 * the chord steps (below) unless it is of the models of a first step (first). */
static grit_status newton_direction(grit_solver *s, const grit_model *m, const double *A, int nact, double dt,
                                    int first, grit_solver_stats *st, double *tc, int tm, double *dvmax,
                                    char *message) {
  s->fac_ok = 0;
  grit_status as = assemble(s, A, s->act, nact, message);
  if (as != GRIT_OK) return as;
  lap(tm, &st->t_assembly, tc);
  grit_status fs = grit_hessian_factor(s->H, &st->cond_estimate, message);
  if (fs != GRIT_OK) return fs;
  st->factor_flops += grit_hessian_flops(s->H);
  lap(tm, &st->t_factor, tc);
  solve_direction(s, m, nact, dt, first, st, dvmax);
  lap(tm, &st->t_solve, tc);
  if (!first) {
    s->fac_ok = 1, s->nact_fac = nact;
    memcpy(s->act_fac, s->act, sizeof(int) * (size_t)nact);
  }
  return GRIT_OK;
}

/* A chord step: near the minimizer the Hessian changes little from one iterate to the next, and the
 * direction -H_old^-1 r with the last factor (of an iterate one or more steps back) is a descent direction
 * (H_old is positive definite) close to Newton's. The exact line search minimizes the true l along it and
 * the stopping test is the same: only the path changes, and an iteration costs the evaluation, the solve
 * and the line search without the assembly and the factorization (on MuJoCo's composites 60-80 % of an
 * iteration). Taken when the last step, Newton's or a chord's, cut each active island's residual |D r| to
 * CHORD_RATIO of what it was or less (the local regime, where the models' G settle), over the same islands
 * as the factor (no first step's models: the stick and pressed predictions, a lookahead's engaging
 * contacts), on the block-sparse path (the dense one is for small systems), and when one of those islands
 * has a tree of CHORD_MIN_TREE dofs or more. On such a tree a contact's J^T G J reaches along the chain from
 * the root to its body and the tree's block is factored whole: the assembly and the factorization are most
 * of an iteration (MuJoCo's loop: 80 %). On small trees (free bodies, particles, arms, the iLQR tests'
 * grippers and hopper) they cost about what the evaluation and the line search cost, and a chord step,
 * converging linearly, saves nothing: there the path stays Newton's, bit for bit (test_solver's random
 * problems of free bodies compare dense and sparse paths and islands to bounds a changed path exceeds).
 * From the same saved states, grit_step's instructions: loop -5.8 %, softbox -2.9 %, MuJoCo humanoid
 * -3.4 %, CMU humanoid -2.9 %, cloth -1.4 %, hammock -1.1 % (CHORD_RATIO 0.3: loop -6.9 %, but hammock
 * +0.7 %, cloth +0.1 %; docs/performance.md, stop 24). */
#define CHORD_RATIO 0.1
#define CHORD_MIN_TREE 24
static int chord_step_ok(const grit_solver *s, int iter, int nact, int engaging) {
  if (s->no_chord || !s->fac_ok || iter < 2 || engaging || nact != s->nact_fac || grit_hessian_path(s->H) != 1)
    return 0;
  const double *irn = ISL(s, ISL_RN), *irnp = ISL(s, ISL_RNP), *ialpha = ISL(s, ISL_ALPHA);
  int big = 0;
  for (int a = 0; a < nact; ++a) {
    const int k = s->act[a];
    if (k != s->act_fac[a] || !(ialpha[k] > 0.0) || !(irn[k] <= CHORD_RATIO * CHORD_RATIO * irnp[k])) return 0;
    for (int q = s->isl_tstart[k]; q < s->isl_tstart[k + 1]; ++q)
      big = big || s->m->tree_dofnum[s->isl_tree[q]] >= CHORD_MIN_TREE;
  }
  return big;
}

/* Newton's method on the convex problem, the way grit_step reads: begin, then per iteration evaluate the
 * active islands, test convergence, choose the islands still converging, the Newton direction, the
 * line search; at the end the normal-only contacts' tangential velocities. */
grit_status grit_solver_solve(grit_solver *s, const grit_model *m, const grit_solver_options *opt, double dt,
                              const double *A, const double *Achol, const double *vstar, int nc, double *v,
                              grit_solver_stats *stats, char *message) {
  const int nv = s->nv, tm = opt->timing;
  grit_solver_stats st;
  memset(&st, 0, sizeof st);
  double tc = tm ? grit_clock_us() : 0.0;
  s->Achol = Achol;
  const double *vwarm = s->vwarm; /* (this solve's only) */
  s->vwarm = NULL;
  if (s->asm_all == KEPT_STEP) s->asm_all = KEPT_NONE; /* (an earlier solve's: its A and J are gone) */
  grit_hessian_keep_new_solve(s->H); /* (so are the blocks of its assemblies) */
  if (nc > s->cap_c) return grit_set_error(message, GRIT_ERR_CAPACITY, "solver: %d constraints > capacity %d", nc, s->cap_c);
  if (nc == 0) { /* no constraints: the minimizer is v*, and H = A */
    memcpy(v, vstar, sizeof(double) * (size_t)nv);
    s->factor_is_A = 1;
    if (stats) *stats = st;
    return GRIT_OK;
  }
  s->factor_is_A = 0;
  s->fac_ok = 0;
  grit_hessian_force_path(s->H, nv <= opt->dense_max_nv ? 0 : opt->sparse_path == 2 ? 2 : 1);
  lap(tm, &st.t_assembly, &tc);
  begin_solve(s, m, A, nc, dt);
  grit_solver_start_free_islands(s, m, A, vstar, vwarm, dt, v);
  int nact = s->nisl; /* the islands to evaluate: all at first, then those that moved */
  for (int iter = 0;; ++iter) {
    for (int a = 0; a < nact; ++a) {
      ISL(s, ISL_RNP)[s->act[a]] = ISL(s, ISL_RN)[s->act[a]];
      if (iter > 0 || ISL(s, ISL_WARM)[s->act[a]] == WARM_NONE) /* (a warm start's: evaluated there) */
        grit_solver_eval_island(s, m, A, vstar, v, dt, s->act[a], iter == 0);
    }
    const island_sums u = sum_islands(s);
    grit_status status;
    if (converged(s, opt, iter, &u, &st, &status, message)) break;
    if (status != GRIT_OK) {
      if (status == GRIT_ERR_NOT_CONVERGED && stats) *stats = st;
      return status;
    }
    nact = choose_active(s, opt, iter, st.residual_ref);
    lap(tm, &st.t_eval, &tc);
    if (!nact) break; /* every island at its minimizer (iteration 0: all free) */
    double dvmax;
    int engaging = 0; /* contacts modelled pressed after the first iteration (solver_lookahead.c) */
    if (iter == 0) grit_solver_predict_pressed(s, m, vstar, dt, nact, opt->stick_start);
    else if (iter == 1) /* the prediction is the first step's only */
      for (int i = 0; i < nc; ++i) s->c[i].gn_start = 0.0;
    if (iter > 0 && opt->stick_start && !s->no_lookahead) engaging = grit_solver_predict_engaging(s, dt, nact);
    grit_status ns = GRIT_OK;
    int chord = chord_step_ok(s, iter, nact, engaging);
    if (chord) {
      solve_direction(s, m, nact, dt, 0, &st, &dvmax);
      lap(tm, &st.t_solve, &tc);
      if (dvmax <= 16.0 * DBL_EPSILON * u.vmax) chord = 0, st.newton_iters--; /* round-off: Newton's step decides */
      else st.chord_iters++;
    }
    if (!chord) ns = newton_direction(s, m, A, nact, dt, iter == 0 || engaging, &st, &tc, tm, &dvmax, message);
    if (ns == GRIT_OK && engaging && dvmax <= 16.0 * DBL_EPSILON * u.vmax) { /* the model's step, not Newton's:
                                                                  the test below needs the exact one */
      for (int i = 0; i < nc; ++i) s->c[i].gn_start = 0.0;
      engaging = 0;
      ns = newton_direction(s, m, A, nact, dt, 0, &st, &tc, tm, &dvmax, message);
    }
    if (ns != GRIT_OK) return ns;
    /* Converged to round-off: the Newton step, which near the minimizer is the distance to it, would
     * change v by a few ulps only (in the scaled norm |D^-1 .|). The residual can stay above the floor
     * above when the constraints' own terms cancel (a stiff contact at the edge of separation: k phi
     * and k h v_n of 1e2 cancelling to 1e-14). */
    if (iter > 0 && dvmax <= 16.0 * DBL_EPSILON * u.vmax) break;
    nact = grit_solver_search_islands(s, m, opt->max_ls_iters, dt, A, nact, iter == 0, v, &st.ls_iters);
    lap(tm, &st.t_linesearch, &tc);
    if (!nact && iter > 0 && chord) s->fac_ok = 0; /* none along the chord: the next direction is Newton's */
    else if (!nact && iter > 0 && !engaging) break; /* no descent left: at the minimizer to round-off (along the
                                                         model's direction that says nothing: the next is exact) */
  }
  /* the normal-only contacts' tangential velocities at the solution, so that every constraint's vc is
   * complete for the derivatives */
  for (int i = 0; i < nc; ++i)
    if (normal_only(&s->c[i])) constraint_apply_rows(m, &s->c[i], s->jstore, v, 1, s->c[i].vc, 0, 2);
  lap(tm, &st.t_eval, &tc);
  st.used_sparse = grit_hessian_path(s->H);
  s->chord_iters = st.chord_iters;
  if (stats) *stats = st;
  return GRIT_OK;
}

void grit_solver_set_afactor(grit_solver *s, const grit_afactor *af) { s->af = af; }

void grit_solver_set_warm(grit_solver *s, const double *vwarm) { s->vwarm = vwarm; }

/* Whether the kept factor is already that of the exact Hessian at the solution, the one the refactor
 * would form: the same H in the same pattern gives the same factor. Its assembly covered every island
 * (no island's blocks older than it), and each constraint added then what the exact Hessian adds now,
 * bit for bit (its G at the solution when G is nonzero, nothing when it is zero: no isotropic model, no
 * predicted pressure); the pattern held a two-tree constraint's pair exactly when its G is nonzero.
 * KEPT_STEP: this solve's last assembly (A and J as now). The step's last Newton step assembles H at the
 * iterate before the solution, so this holds when the constraints' G did not change over that step: a
 * joint limit's or a pressed frictionless contact's constant G, a contact at rest (test_derivatives_kept:
 * a settled frictionless stack every step, OP3 about one step in ten). KEPT_REFAC: the last refactor's,
 * the step having assembled nothing (every island started at its minimizer), when A and every J are
 * also what they were (dm_control's fish at rest: its body's A does not depend on its pose, its one
 * constraint a fixed tendon's spring). Either way the factor must be there, on the path a factor would
 * take now (hessian_internal.h). */
static int kept_factor_exact(grit_solver *s, const double *A, int nc) {
  const grit_hessian *h = s->H;
  if (!s->asm_all || s->no_kept_factor || !h->factored || h->tree_on || h->last_path != grit_hessian_choose_path(h))
    return 0;
  const int refac = s->asm_all == KEPT_REFAC;
  if (refac && nc != s->snap_nc) return 0;
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *c = &s->c[i];
    const int gnz = c->gnz != 0, *k = s->snap_con + 6 * (size_t)i;
    if (s->gadd[i] != gnz || (!refac && c->ntree == 2 && s->inpat[i] != gnz)) return 0;
    if (refac && (k[0] != c->ntree || k[1] != c->tree[0] || k[2] != c->tree[1] || k[3] != c->dim ||
                  k[4] != c->joff[0] || k[5] != c->joff[1]))
      return 0;
    if (gnz && memcmp(s->gasm + 9 * (size_t)i, c->G, sizeof(double) * (size_t)(c->dim * c->dim))) return 0;
  }
  if (!refac) return 1;
  if (memcmp(s->snap_A, A, sizeof(double) * (size_t)s->m->nM)) return 0;
  for (int i = 0; i < nc; ++i)
    for (int k = 0; s->gadd[i] && k < s->c[i].ntree; ++k) { /* (a zero G adds no J) */
      const size_t at = (size_t)s->c[i].joff[k], n = (size_t)(s->c[i].dim * s->m->tree_dofnum[s->c[i].tree[k]]);
      if (memcmp(s->snap_J + at, s->jstore + at, sizeof(double) * n)) return 0;
    }
  return 1;
}

/* What the refactor's factor was formed from, for the next call's kept_factor_exact: A, each constraint's
 * layout and the Jacobian blocks of those that added a G (what each added: assemble). */
static void snapshot_refactor(grit_solver *s, const double *A, int nc) {
  s->asm_all = KEPT_REFAC;
  s->snap_nc = nc;
  memcpy(s->snap_A, A, sizeof(double) * (size_t)s->m->nM);
  for (int i = 0; i < nc; ++i) {
    const grit_constraint *c = &s->c[i];
    int *k = s->snap_con + 6 * (size_t)i;
    k[0] = c->ntree, k[1] = c->tree[0], k[2] = c->tree[1], k[3] = c->dim, k[4] = c->joff[0], k[5] = c->joff[1];
    for (int t = 0; s->gadd[i] && t < c->ntree; ++t) {
      const size_t at = (size_t)c->joff[t], n = (size_t)(c->dim * s->m->tree_dofnum[c->tree[t]]);
      memcpy(s->snap_J + at, s->jstore + at, sizeof(double) * n);
    }
  }
}

grit_status grit_solver_refactor(grit_solver *s, const double *A, int nc, char *message) {
  s->kept_factor = 0;
  if (nc == 0 || s->factor_is_A) return GRIT_OK; /* the kept factor is A's, exact */
  const int kept = kept_factor_exact(s, A, nc), step_assembled = s->asm_all == KEPT_STEP;
  for (int i = 0; i < nc; ++i) s->c[i].isotropic = ISO_EXACT, s->c[i].gn_start = 0.0; /* the exact Hessian, for the derivatives */
  find_islands(s, nc); /* every island: the whole H */
  s->pat_kept = 0;
  for (int k = 0; k < s->nisl; ++k) s->act[k] = k;
  if (kept) { /* the pattern of the solution's G alone, as assemble leaves it */
    for (int i = 0; i < nc; ++i) s->inpat[i] = (unsigned char)(s->c[i].ntree == 2 && s->c[i].gnz);
    s->kept_factor = 1;
    return GRIT_OK;
  }
  memset(s->inpat, 0, (size_t)nc); /* the pattern of the solution's G alone */
  grit_solver_find_jlists(s, s->m, nc);
  grit_status as = assemble(s, A, s->act, s->nisl, message);
  if (as != GRIT_OK) return as;
  double cond;
  grit_status fs = grit_hessian_factor(s->H, &cond, message);
  /* (assemble left KEPT_STEP: the same step's next call keeps it.) Its inputs are kept for the next step's
   * call only when this step assembled nothing: one that iterates is likely followed by one that does,
   * and copying A and J costs a large scene 1 % of its call (22 humanoids) */
  if (fs == GRIT_OK && !step_assembled) snapshot_refactor(s, A, nc);
  if (fs != GRIT_OK) s->asm_all = KEPT_NONE; /* no factor kept */
  return fs;
}
