/* SPDX-License-Identifier: Apache-2.0 */
/* hessian.c — the contact Hessian's storage, coupling pattern and its dense (densechol.c: not LAPACK,
 * for results independent of BLAS threads), block (blockchol.c) or supernodal (CHOLMOD, AMD ordering)
 * Cholesky factorization; its assembly is hessian_assemble.c. See hessian.h. */
#include "hessian.h"
#include "hessian_internal.h"

#include <cholmod.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "densechol.h"
#include "status_internal.h"
#include "treechol.h"

/* Trees from this size on take the tree-ordered factorization when their constraints keep the pattern
 * (the chain assembly in hessian_assemble.c, from CHAIN_MIN_NV dofs, finds whether they do). Measured: see
 * docs/performance.md (stop 17, branch treechol). */
#define TREECHOL_MIN_NV 12

/* A tree whose tree-ordered factor has nearly the dense one's multiply-adds (a chain of bodies: each dof's
 * ancestors are all the dofs before it; MuJoCo's loop, 44 dofs) takes the block path's dense kernel for
 * large blocks instead (grit_blockchol_chol_big, from 24 dofs), which does them in fewer instructions
 * (loop: 43 k against treechol's 73 k a factorization). Its rounding differs; trees under 24 dofs (every
 * robot arm, gripper and hopper of the iLQR tests) and branched trees (humanoids: under 0.3) keep theirs. */
#define DENSE_CHAIN_MIN_NV 24
#define DENSE_CHAIN_RATIO 0.5
static int dense_chain(const grit_model *m, int t) {
  const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
  if (n < DENSE_CHAIN_MIN_NV) return 0;
  double tree = 0.0; /* the tree-ordered factor's updates: sum over dofs of depth^2 (treechol's count) */
  for (int k = adr; k < adr + n; ++k) {
    int r = 0;
    for (int j = k; j >= 0; j = m->dof_parent[j]) ++r;
    tree += (double)r * (double)r;
  }
  return tree >= DENSE_CHAIN_RATIO * (double)n * n * n / 3.0;
}

static void init_tree_order(grit_hessian *h) {
  const grit_model *m = h->m;
  for (int t = 0; t < m->ntree; ++t) {
    const int n = m->tree_dofnum[t];
    const int ok = n >= TREECHOL_MIN_NV && n <= 64 && grit_treechol_a_keeps_pattern(m, t);
    h->dchain[t] = ok && !h->no_dense_chain && dense_chain(m, t);
    h->tc_ok[t] = ok && !h->dchain[t];
    h->any_tc |= h->tc_ok[t];
    h->any_dchain |= h->dchain[t];
  }
}

/* The solves that assemble without keeping blocks after one that kept too few (plan_blocks). */
#define KEEP_SKIP 16

/* No block holds a kept assembly's terms any more (grit_hessian_begin_kept rebuilds them all); the trees
 * it always rebuilds: those of more than 64 dofs (their low-rank terms, lower triangles, scratch) and
 * those the tree-ordered factor may take (their pattern flags). */
void grit_hessian_keep_invalidate(grit_hessian *h) {
  const grit_model *m = h->m;
  memset(h->tvalid, 0, (size_t)m->ntree);
  memset(h->pvalid, 0, (size_t)h->cap_pairs);
  h->any_keep = 0;
  h->none_valid = 1;
  for (int t = 0; t < m->ntree; ++t) {
    h->always[t] = h->tc_ok[t] || m->tree_dofnum[t] > 64;
    h->any_keep |= !h->no_keep && !h->skip_solves && !h->always[t];
  }
}

void grit_hessian_keep_new_solve(grit_hessian *h) {
  if (h->skip_solves > 0) h->skip_solves--;
  /* a pile's order is kept within a solve only: each step's first analysis is a fresh order, a function
   * of its pattern (blockchol.h, grit_blockchol_forget_order) */
  if (h->bc && grit_blockchol_forget_order(h->bc)) h->sym_valid = 0;
  grit_hessian_keep_invalidate(h);
}

void grit_hessian_keep_blocks(grit_hessian *h, int allow) {
  h->no_keep = !allow;
  grit_hessian_keep_invalidate(h);
}

long long grit_hessian_kept_count(const grit_hessian *h) { return h->nkept; }

void grit_hessian_keep_touch(grit_hessian *h, int ntree, const int tree[2], int pair) {
  for (int k = 0; k < ntree; ++k) h->rebuild[tree[k]] = 1;
  if (pair >= 0) h->prebuild[pair] = 1;
}

grit_status grit_hessian_create(const grit_model *m, int max_pairs, int dense_max_nv, grit_hessian **out,
                                char *message) {
  *out = NULL;
  grit_hessian *h = calloc(1, sizeof *h);
  if (!h) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  h->m = m;
  h->nv = m->nv;
  h->dense_max_nv = dense_max_nv;
  h->force = -1;
  int maxn = 0;
  for (int t = 0; t < m->ntree; ++t) maxn = m->tree_dofnum[t] > maxn ? m->tree_dofnum[t] : maxn;
  long long tree_pairs = (long long)m->ntree * (m->ntree - 1) / 2;
  h->cap_pairs = (int)(max_pairs < tree_pairs ? max_pairs : tree_pairs);
  if (h->cap_pairs < 1) h->cap_pairs = 1;
  h->cblock_cap = (size_t)h->cap_pairs * (size_t)maxn * (size_t)maxn;
  h->diag = calloc((size_t)m->nM + 1, sizeof(double));
  h->pa = calloc((size_t)h->cap_pairs, sizeof(int));
  h->pb = calloc((size_t)h->cap_pairs, sizeof(int));
  h->poff = calloc((size_t)h->cap_pairs, sizeof(int));
  h->sym_pa = calloc((size_t)h->cap_pairs, sizeof(int));
  h->sym_pb = calloc((size_t)h->cap_pairs, sizeof(int));
  h->cblock = calloc(h->cblock_cap + 1, sizeof(double));
  h->hash = calloc(2 * (size_t)h->cap_pairs, sizeof(int));
  h->tree_pairs = calloc((size_t)h->cap_pairs, sizeof(int));
  h->tree_pairadr = calloc((size_t)m->ntree + 1, sizeof(int));
  h->tree_fill = calloc((size_t)m->ntree + 1, sizeof(int));
  if (h->nv <= GRIT_HESSIAN_DENSE_BUFFER_MAX_NV) h->Hd = calloc((size_t)h->nv * h->nv + 1, sizeof(double));
  h->tc_ok = calloc((size_t)m->ntree + 1, 1);
  h->chain = calloc((size_t)m->ntree + 1, 1);
  h->dchain = calloc((size_t)m->ntree + 1, 1);
  h->fresh = calloc((size_t)m->ntree + 1, 1);
  h->tvalid = calloc((size_t)m->ntree + 1, 1);
  h->rebuild = calloc((size_t)m->ntree + 1, 1);
  h->always = calloc((size_t)m->ntree + 1, 1);
  h->pvalid = calloc((size_t)h->cap_pairs + 1, 1);
  h->prebuild = calloc((size_t)h->cap_pairs + 1, 1);
  h->sink = calloc(2 * 64 * 64, sizeof(double));
  if (maxn > 64) {
    h->big_idx = malloc(sizeof(int) * (size_t)(maxn + 1));
    h->big_runs = malloc(sizeof(int) * (size_t)(maxn + 1));
    h->big_jc = malloc(sizeof(double) * 3 * (size_t)maxn);
    h->big_gj = malloc(sizeof(double) * 3 * (size_t)maxn);
    h->big_row = malloc(sizeof(double) * (size_t)maxn);
    h->big_gjt = malloc(sizeof(double) * 6 * (size_t)maxn);
  }
  const int big_ok = maxn <= 64 || (h->big_idx && h->big_runs && h->big_jc && h->big_gj && h->big_row && h->big_gjt);
  if (!h->tc_ok || !h->chain || !h->dchain || !h->fresh || !big_ok || !h->tvalid || !h->rebuild || !h->always || !h->pvalid ||
      !h->prebuild || !h->sink) {
    grit_hessian_free(h);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  }
  init_tree_order(h);
  grit_hessian_keep_invalidate(h);
  grit_hessian_pair_chain(h, 1);
  grit_status ts = grit_treechol_create(m, &h->tcp, message);
  if (ts != GRIT_OK) {
    grit_hessian_free(h);
    return ts;
  }
  if (!h->diag || !h->pa || !h->pb || !h->poff || !h->sym_pa || !h->sym_pb || !h->cblock || !h->hash ||
      !h->tree_pairs || !h->tree_pairadr || !h->tree_fill || (h->nv <= GRIT_HESSIAN_DENSE_BUFFER_MAX_NV && !h->Hd)) {
    grit_hessian_free(h);
    return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "out of memory creating the Hessian");
  }
  grit_status bs = grit_blockchol_create(m, h->cap_pairs, &h->bc, message);
  if (bs != GRIT_OK) {
    grit_hessian_free(h);
    return bs;
  }
  grit_blockchol_set_chain(h->bc, h->any_tc ? h->chain : NULL);
  cholmod_start(&h->cc);
  h->cc.print = 0;
  h->cc.nmethods = 1;
  h->cc.method[0].ordering = CHOLMOD_AMD;
  h->cc.postorder = 1;
  h->cc.supernodal = getenv("GRIT_SIMPL") ? CHOLMOD_SIMPLICIAL : CHOLMOD_SUPERNODAL;
  *out = h;
  return GRIT_OK;
}

void grit_hessian_free(grit_hessian *h) {
  if (!h) return;
  if (h->Hs) cholmod_free_sparse(&h->Hs, &h->cc);
  if (h->L) cholmod_free_factor(&h->L, &h->cc);
  if (h->X) cholmod_free_dense(&h->X, &h->cc);
  if (h->Y) cholmod_free_dense(&h->Y, &h->cc);
  if (h->E) cholmod_free_dense(&h->E, &h->cc);
  if (h->bc) cholmod_finish(&h->cc); /* started right after the block factor was created */
  grit_blockchol_free(h->bc);
  free(h->diag);
  free(h->pa);
  free(h->pb);
  free(h->poff);
  free(h->sym_pa);
  free(h->sym_pb);
  free(h->cblock);
  free(h->hash);
  free(h->tree_pairs);
  free(h->tree_pairadr);
  free(h->tree_fill);
  free(h->Hd);
  free(h->tc_ok), free(h->chain), free(h->dchain), free(h->fresh);
  free(h->tvalid), free(h->rebuild), free(h->always), free(h->pvalid), free(h->prebuild), free(h->sink);
  free(h->big_idx), free(h->big_runs), free(h->big_jc), free(h->big_gj), free(h->big_row), free(h->big_gjt);
  grit_treechol_free(h->tcp);
  free(h);
}

void grit_hessian_force_path(grit_hessian *h, int path) {
  h->force = path;
  /* (right after an invalidation, as each solve's, another would give the same state: every change of
   * what it reads invalidates, and only plan_blocks validates) */
  if (!h->none_valid) grit_hessian_keep_invalidate(h);
}
void grit_hessian_big_tree_paths(grit_hessian *h, int allow) {
  h->no_big_chain = !allow;
  grit_hessian_keep_invalidate(h);
  grit_blockchol_big_kernel(h->bc, allow);
  h->factored = 0;
}
void grit_hessian_sparse_trees(grit_hessian *h, int allow) {
  grit_blockchol_sparse_trees(h->bc, allow);
  h->factored = 0;
}

void grit_hessian_big_lower(grit_hessian *h, int allow) {
  h->no_lower = !allow;
  grit_hessian_keep_invalidate(h);
  h->factored = 0;
}

void grit_hessian_lower_kernel(grit_hessian *h, int allow) { h->no_lower_avx2 = !allow; }
void grit_hessian_lower_runs(grit_hessian *h, int allow) { h->no_lower_runs = !allow; }
void grit_hessian_free_kernel(grit_hessian *h, int allow) { h->no_free_kernel = !allow; }
void grit_hessian_chain_lower(grit_hessian *h, int allow) { h->no_chain_lower = !allow; }

void grit_hessian_sparse_kernel(grit_hessian *h, int allow) {
  grit_blockchol_sparse_kernel(h->bc, allow);
  h->factored = 0;
}

void grit_hessian_particle_kernel(grit_hessian *h, int allow) {
  grit_blockchol_particle_kernel(h->bc, allow);
  h->factored = 0;
}
void grit_hessian_keep_order(grit_hessian *h, int allow) {
  if (h->bc) grit_blockchol_keep_order(h->bc, allow);
}

void grit_hessian_dense_chains(grit_hessian *h, int allow) {
  h->no_dense_chain = !allow;
  grit_hessian_allow_tree_order(h, 1);
}
void grit_hessian_allow_tree_order(grit_hessian *h, int allow) {
  h->any_tc = 0, h->any_dchain = 0;
  memset(h->dchain, 0, (size_t)h->m->ntree);
  if (allow) init_tree_order(h);
  else memset(h->tc_ok, 0, (size_t)h->m->ntree);
  memset(h->chain, 0, (size_t)h->m->ntree);
  grit_blockchol_set_chain(h->bc, h->any_tc ? h->chain : NULL);
  grit_hessian_keep_invalidate(h);
  h->factored = 0;
}
int grit_hessian_path(const grit_hessian *h) { return h->last_path; }
double grit_hessian_flops(const grit_hessian *h) {
  return h->last_path == 1   ? grit_blockchol_flops(h->bc)
         : h->last_path == 2 ? h->sym_flops
                             : (double)h->nv * h->nv * h->nv / 3.0;
}

/* ------------------------------------------------------------------- blocks kept (begin_kept) */

/* Which blocks this assembly rebuilds (rebuild, prebuild) and which hold a full assembly's terms after it
 * (tvalid, pvalid). keep 0: every block of a tree that is on (grit_hessian_trees_on). keep 1 (begin_kept):
 * of those, the ones marked (grit_hessian_keep_touch, or a pair whose place in the pattern changed), not
 * valid, or always rebuilt. A tree the solver leaves off (grit_hessian_restrict) gets no terms: still valid
 * if left alone, not if rebuilt (A only: the dense and CHOLMOD paths rebuild every tree). */
void grit_hessian_plan_blocks(grit_hessian *h, const unsigned char *on, int keep) {
  const grit_model *m = h->m;
  const unsigned char *r = h->tree_on;
  int valid = 0, cand = 0, kept = 0; /* of the trees that could be kept: valid before, and kept now */
  h->none_valid = 0;
  for (int t = 0; t < m->ntree; ++t) {
    const int rb = (!on || on[t]) && (!keep || h->rebuild[t] || !h->tvalid[t] || h->always[t]);
    const int could = keep && (!on || on[t]) && !h->always[t];
    cand += could, valid += could && h->tvalid[t], kept += could && !rb;
    h->tvalid[t] = r && !r[t] ? h->tvalid[t] && !rb : 1;
    h->nkept += keep && !rb && (!r || r[t]);
    h->rebuild[t] = (unsigned char)rb;
  }
  /* Most blocks valid yet under a quarter kept (contacts whose G changes at every iteration: a clutter,
   * particles): the tracking costs more than it saves, so the next KEEP_SKIP solves assemble as before
   * (the same bits either way). */
  if (cand && 2 * valid > cand && 4 * kept < cand) h->skip_solves = KEEP_SKIP;
  for (int k = 0; k < h->npairs; ++k) {
    const int a = h->pa[k], moved = h->prebuild[k];
    const int rb = (!on || on[a]) && (!keep || moved || !h->pvalid[k] || h->always[a] || h->always[h->pb[k]]);
    h->pvalid[k] = r && !r[a] ? h->pvalid[k] && !moved && !rb : 1;
    h->prebuild[k] = (unsigned char)rb;
  }
}

/* grit_hessian_begin_kept's copies: A's blocks into the trees rebuilt, their pairs' blocks zeroed (as
 * grit_hessian_begin on those). */
static void begin_some(grit_hessian *h, const double *A, const unsigned char *on) {
  const grit_model *m = h->m;
  if (h->big_idx)
    for (int t = 0; t < m->ntree; ++t)
      if (m->tree_dofnum[t] > 64 && h->rebuild[t]) grit_blockchol_lowrank_clear(h->bc, t);
  if (h->any_tc) memset(h->chain, 0, (size_t)m->ntree);
  const int order = h->any_tc && grit_hessian_choose_path(h) == 1;
  for (int t = 0; t < m->ntree; ++t) {
    if (!h->rebuild[t]) continue;
    const int a = m->tree_madr[t];
    if (order && h->tc_ok[t] && h->fresh[t]) grit_treechol_copy_pattern(h->tcp, t, A + a, h->diag + a);
    else grit_hessian_copy_block(h, A, t);
    if (h->any_tc) h->fresh[t] = 1;
    if (order) h->chain[t] = h->tc_ok[t];
  }
  if (h->any_tc && !order && !on) memset(h->fresh, 1, (size_t)m->ntree);
  for (int k = 0; k < h->npairs; ++k)
    if (h->prebuild[k])
      memset(h->cblock + h->poff[k], 0, sizeof(double) * (size_t)m->tree_dofnum[h->pa[k]] * (size_t)m->tree_dofnum[h->pb[k]]);
  h->factored = 0;
}

void grit_hessian_begin_kept(grit_hessian *h, const double *A) {
  if (!h->any_keep) {
    grit_hessian_begin(h, A);
    return;
  }
  const unsigned char *on = grit_hessian_trees_on(h);
  grit_hessian_plan_blocks(h, on, 1);
  h->upd = 1;
  h->lower_now = grit_hessian_small_lower(h);
  begin_some(h, A, on);
}

/* ----------------------------------------------------------------------------------- pattern */

void grit_hessian_pattern_reset(grit_hessian *h) {
  for (int k = 0; k < h->npairs; ++k) {
    /* clear only the used hash slots */
    unsigned key = (unsigned)(h->pa[k] * h->m->ntree + h->pb[k]);
    for (unsigned s = key % (2u * (unsigned)h->cap_pairs);; s = (s + 1) % (2u * (unsigned)h->cap_pairs))
      if (h->hash[s] == k + 1) {
        h->hash[s] = 0;
        break;
      }
  }
  /* removing entries from linear probing chains can break them; all are removed, so it is safe */
  h->old_npairs = h->npairs, h->pat_same = 1;
  memset(h->rebuild, 0, (size_t)h->m->ntree); /* (grit_hessian_keep_touch's marks) */
  h->npairs = 0;
  h->cblock_used = 0;
}

void grit_hessian_pattern_keep(grit_hessian *h) {
  h->old_npairs = h->npairs, h->pat_same = 1;
  memset(h->rebuild, 0, (size_t)h->m->ntree); /* (grit_hessian_keep_touch's marks) */
  memset(h->prebuild, 0, (size_t)h->npairs);
  h->factored = 0;
}

int grit_hessian_pattern_pair(grit_hessian *h, int a, int b) {
  if (a > b) {
    int t = a;
    a = b;
    b = t;
  }
  const unsigned slots = 2u * (unsigned)h->cap_pairs;
  unsigned s = (unsigned)(a * h->m->ntree + b) % slots;
  for (;; s = (s + 1) % slots) {
    int k = h->hash[s] - 1;
    if (k < 0) break;
    if (h->pa[k] == a && h->pb[k] == b) return k;
  }
  size_t size = (size_t)h->m->tree_dofnum[a] * (size_t)h->m->tree_dofnum[b];
  if (h->npairs >= h->cap_pairs || h->cblock_used + size > h->cblock_cap) return -1;
  int k = h->npairs++;
  /* the pair's block holds its last terms only if every pair before it, and it, are where they were */
  h->pat_same = h->pat_same && k < h->old_npairs && h->pa[k] == a && h->pb[k] == b;
  h->prebuild[k] = (unsigned char)!h->pat_same;
  h->pa[k] = a;
  h->pb[k] = b;
  h->poff[k] = (int)h->cblock_used;
  h->cblock_used += size;
  h->hash[s] = k + 1;
  return k;
}

void grit_hessian_pattern_commit(grit_hessian *h) {
  const int nt = h->m->ntree;
  for (int t = 0; t <= nt; ++t) h->tree_pairadr[t] = 0;
  for (int k = 0; k < h->npairs; ++k) h->tree_pairadr[h->pa[k] + 1]++;
  for (int t = 0; t < nt; ++t) h->tree_pairadr[t + 1] += h->tree_pairadr[t];
  int *fill = h->tree_pairs; /* each tree's pairs, insertion-sorted by pb */
  for (int t = 0; t < nt; ++t) h->tree_fill[t] = 0;
  for (int k = 0; k < h->npairs; ++k) {
    const int lo = h->tree_pairadr[h->pa[k]];
    int j = lo + h->tree_fill[h->pa[k]]++;
    while (j > lo && h->pb[fill[j - 1]] > h->pb[k]) {
      fill[j] = fill[j - 1];
      j--;
    }
    fill[j] = k;
  }
  /* the symbolic analysis stays valid if the pattern is the same set of pairs */
  int same = h->sym_valid && h->sym_npairs == h->npairs;
  for (int k = 0; same && k < h->npairs; ++k) {
    int a = h->pa[fill[k]], b = h->pb[fill[k]];
    same = h->sym_pa[k] == a && h->sym_pb[k] == b;
  }
  if (!same) h->sym_valid = 0;
  h->factored = 0;
}

/* ------------------------------------------------------------------------------ factorization */


static grit_status factor_dense(grit_hessian *h, double *cond, char *message) {
  const grit_model *m = h->m;
  const int nv = h->nv;
  double *H = h->Hd;
  memset(H, 0, sizeof(double) * (size_t)nv * nv);
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    const double *D = h->diag + m->tree_madr[t];
    /* (a big tree's upper triangle is stale, grit_hessian_lower_only: it lands in H's upper triangle,
     * which grit_densechol_factor does not read) */
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) H[(size_t)(adr + j) * nv + adr + i] = D[i * n + j];
  }
  for (int k = 0; k < h->npairs; ++k) { /* block rows b, cols a; symmetric: store both */
    const int a = h->pa[k], b = h->pb[k], na = m->tree_dofnum[a], nb = m->tree_dofnum[b];
    const int aa = m->tree_dofadr[a], ab = m->tree_dofadr[b];
    const double *C = h->cblock + h->poff[k];
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < na; ++c) {
        H[(size_t)(aa + c) * nv + ab + r] = C[r * na + c];
        H[(size_t)(ab + r) * nv + aa + c] = C[r * na + c];
      }
  }
  const int bad = grit_densechol_factor(H, nv); /* not LAPACK's: bitwise independent of BLAS threads */
  if (bad >= 0)
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "Hessian factorization: not positive definite (pivot %d)", bad);
  double lo = INFINITY, hi = 0.0;
  for (int i = 0; i < nv; ++i) {
    double d = H[(size_t)i * nv + i];
    lo = fmin(lo, d);
    hi = fmax(hi, d);
  }
  *cond = nv > 0 ? (hi / lo) * (hi / lo) : 1.0;
  return GRIT_OK;
}

/* Builds the CSC pattern (lower triangle) of H for the committed pairs and analyzes it. */
static grit_status analyze_sparse(grit_hessian *h, char *message) {
  const grit_model *m = h->m;
  size_t nnz = 0;
  for (int t = 0; t < m->ntree; ++t) nnz += (size_t)m->tree_dofnum[t] * (m->tree_dofnum[t] + 1) / 2;
  for (int k = 0; k < h->npairs; ++k) nnz += (size_t)m->tree_dofnum[h->pa[k]] * m->tree_dofnum[h->pb[k]];
  if (h->Hs) cholmod_free_sparse(&h->Hs, &h->cc);
  if (h->L) cholmod_free_factor(&h->L, &h->cc);
  h->Hs = cholmod_allocate_sparse((size_t)h->nv, (size_t)h->nv, nnz, 1, 1, -1, CHOLMOD_REAL, &h->cc);
  if (!h->Hs) return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "CHOLMOD: cannot allocate the Hessian");
  int *Ap = h->Hs->p, *Ai = h->Hs->i;
  int pos = 0;
  for (int t = 0; t < m->ntree; ++t) {
    const int adr = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int c = 0; c < n; ++c) {
      Ap[adr + c] = pos;
      for (int r = c; r < n; ++r) Ai[pos++] = adr + r;
      for (int q = h->tree_pairadr[t]; q < h->tree_pairadr[t + 1]; ++q) {
        const int b = h->pb[h->tree_pairs[q]];
        for (int r = 0; r < m->tree_dofnum[b]; ++r) Ai[pos++] = m->tree_dofadr[b] + r;
      }
    }
  }
  Ap[h->nv] = pos;
  h->L = cholmod_analyze(h->Hs, &h->cc);
  if (!h->L) return grit_set_error(message, GRIT_ERR_NUMERICAL, "CHOLMOD analysis failed (status %d)", h->cc.status);
  h->sym_npairs = h->npairs;
  for (int q = 0; q < h->npairs; ++q) {
    h->sym_pa[q] = h->pa[h->tree_pairs[q]];
    h->sym_pb[q] = h->pb[h->tree_pairs[q]];
  }
  h->sym_valid = 1;
  h->sym_path = 2;
  h->sym_flops = h->cc.fl;
  return GRIT_OK;
}

static grit_status factor_sparse(grit_hessian *h, double *cond, char *message) {
  const grit_model *m = h->m;
  if (!h->sym_valid || h->sym_path != 2) {
    grit_status s = analyze_sparse(h, message);
    if (s != GRIT_OK) return s;
  }
  double *Ax = h->Hs->x;
  int pos = 0;
  for (int t = 0; t < m->ntree; ++t) { /* values in the order of analyze_sparse's pattern */
    const int n = m->tree_dofnum[t];
    const double *D = h->diag + m->tree_madr[t];
    for (int c = 0; c < n; ++c) {
      for (int r = c; r < n; ++r) Ax[pos++] = D[r * n + c];
      for (int q = h->tree_pairadr[t]; q < h->tree_pairadr[t + 1]; ++q) {
        const int k = h->tree_pairs[q], nb = m->tree_dofnum[h->pb[k]];
        const double *C = h->cblock + h->poff[k];
        for (int r = 0; r < nb; ++r) Ax[pos++] = C[r * n + c];
      }
    }
  }
  cholmod_factorize(h->Hs, h->L, &h->cc);
  if (h->cc.status == CHOLMOD_NOT_POSDEF || h->L->minor < h->L->n)
    return grit_set_error(message, GRIT_ERR_NUMERICAL,
                          "Hessian factorization: not positive definite (CHOLMOD pivot %d)", (int)h->L->minor);
  if (h->cc.status < CHOLMOD_OK)
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "CHOLMOD factorization failed (status %d)", h->cc.status);
  double rc = cholmod_rcond(h->L, &h->cc);
  if (!(rc > 0)) /* a NaN or infinite entry passes CHOLMOD's pivot test; its factor's diagonal shows it */
    return grit_set_error(message, GRIT_ERR_NUMERICAL, "Hessian factorization: non-finite or zero pivot (CHOLMOD)");
  *cond = 1.0 / rc;
  return GRIT_OK;
}

/* The block-sparse path: analysis when the pattern changed, then the numeric factor. */
static grit_status factor_block(grit_hessian *h, double *cond, char *message) {
  if (!h->sym_valid || h->sym_path != 1) {
    for (int q = 0; q < h->npairs; ++q) { /* the pairs in their sorted order, as the pattern check */
      h->sym_pa[q] = h->pa[h->tree_pairs[q]];
      h->sym_pb[q] = h->pb[h->tree_pairs[q]];
    }
    grit_status s = grit_blockchol_analyze(h->bc, h->npairs, h->sym_pa, h->sym_pb, message);
    if (s != GRIT_OK) return s;
    h->sym_npairs = h->npairs;
    h->sym_valid = 1;
    h->sym_path = 1;
  }
  return grit_blockchol_factor(h->bc, h->diag, h->cblock, h->poff, h->tree_pairs, h->tree_on, cond, message);
}

grit_status grit_hessian_factor(grit_hessian *h, double *cond, char *message) {
  double c = 1.0;
  const int path = grit_hessian_choose_path(h);
  grit_status s = h->nv == 0    ? GRIT_OK
                  : path == 1 ? factor_block(h, &c, message)
                  : path == 2 ? factor_sparse(h, &c, message)
                              : factor_dense(h, &c, message);
  h->factored = s == GRIT_OK;
  h->last_path = path;
  if (cond) *cond = c;
  return s;
}

grit_status grit_hessian_solve(grit_hessian *h, double *B, int nrhs) {
  if (!h->factored) return GRIT_ERR_STATE;
  if (h->nv == 0 || nrhs <= 0) return GRIT_OK;
  if (h->last_path == 0 && h->nv <= GRIT_DENSECHOL_SMALL_MAX_NV && nrhs >= 2) {
    grit_densechol_solve_small(h->Hd, h->nv, B, nrhs);
    return GRIT_OK;
  }
  if (h->last_path == 1) {
    grit_blockchol_solve(h->bc, B, nrhs, h->tree_on);
    return GRIT_OK;
  }
  if (h->last_path == 0) {
    grit_densechol_solve(h->Hd, h->nv, B, nrhs);
    return GRIT_OK;
  }
  cholmod_dense b;
  memset(&b, 0, sizeof b);
  b.nrow = (size_t)h->nv;
  b.ncol = (size_t)nrhs;
  b.nzmax = b.nrow * b.ncol;
  b.d = b.nrow;
  b.x = B;
  b.xtype = CHOLMOD_REAL;
  b.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_solve2(CHOLMOD_A, h->L, &b, NULL, &h->X, NULL, &h->Y, &h->E, &h->cc)) return GRIT_ERR_NUMERICAL;
  memcpy(B, h->X->x, sizeof(double) * b.nzmax);
  return GRIT_OK;
}

const int *grit_hessian_parts(const grit_hessian *h, int *nparts) {
  if (h->factored && h->last_path == 1 && h->nv > 0) return grit_blockchol_parts(h->bc, nparts);
  *nparts = 1;
  return NULL;
}

grit_status grit_hessian_solve_parts(grit_hessian *h, double *B, int nrhs, const int *part) {
  int np;
  if (!part || !grit_hessian_parts(h, &np)) return grit_hessian_solve(h, B, nrhs);
  if (nrhs > 0) grit_blockchol_solve_parts(h->bc, B, nrhs, part);
  return GRIT_OK;
}

grit_status grit_hessian_solve_cols(grit_hessian *h, double *const *X, int nrhs, const int *part) {
  int np;
  if (!part || !grit_hessian_parts(h, &np)) return GRIT_ERR_STATE;
  if (nrhs > 0) grit_blockchol_solve_cols(h->bc, X, nrhs, part);
  return GRIT_OK;
}
