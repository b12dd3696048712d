/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_order.c — the analysis's elimination order (blockchol.c's first phases): the graph of trees coupled
 * by the pairs, its connected components, and the minimum-degree order over them (a heap above HEAP_MIN trees,
 * a linear search below; degrees weighted by the trees' dofs). See blockchol_internal.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockchol.h"
#include "blockchol_internal.h"
#include "status_internal.h"

/* The weighted degree of trees of one size (a pile): a popcount times the size, the same number. */
static __attribute__((noinline)) int uniform_degree(const grit_blockchol *b, const uint64_t *row) {
  int d = 0;
  for (int w = 0; w < b->words; ++w) { /* by halves (no popcount instruction in the baseline target:
                                           __builtin_popcountll calls libgcc's table) */
    uint64_t x = row[w] - ((row[w] >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    d += (int)((x * 0x0101010101010101ull) >> 56);
  }
  return d * b->uniform;
}

static inline int weighted_degree(const grit_blockchol *b, const uint64_t *row) {
  if (b->uniform) return uniform_degree(b, row);
  int d = 0;
  for (int w = 0; w < b->words; ++w)
    for (uint64_t x = row[w]; x; x &= x - 1) d += b->m->tree_dofnum[64 * w + __builtin_ctzll(x)];
  return d;
}

/* Analysis phase 1: the graph of trees coupled by the pairs (bit rows) and each tree's weighted degree. */
void grit_blockchol_build_graph(grit_blockchol *b, int npairs, const int *pa, const int *pb) {
  const int nt = b->nt, W = b->words;
  memset(b->adj, 0, sizeof(uint64_t) * (size_t)nt * (size_t)W);
  memset(b->done, 0, (size_t)nt);
  for (int k = 0; k < npairs; ++k) {
    b->adj[(size_t)pa[k] * W + pb[k] / 64] |= 1ull << (pb[k] % 64);
    b->adj[(size_t)pb[k] * W + pa[k] / 64] |= 1ull << (pa[k] % 64);
  }
  if (b->no_fast_order) {
    for (int t = 0; t < nt; ++t) b->deg[t] = weighted_degree(b, b->adj + (size_t)t * W);
    return;
  }
  memset(b->deg, 0, sizeof(int) * (size_t)nt); /* each pair once: the sums of the neighbours' dofs */
  for (int k = 0; k < npairs; ++k) {
    b->deg[pa[k]] += b->m->tree_dofnum[pb[k]];
    b->deg[pb[k]] += b->m->tree_dofnum[pa[k]];
  }
}

/* Analysis phase 2: the coupled trees grouped by connected component, in index order within each:
 * component with root r (its first tree) is left[seg[r] .. seg[r+1]-1] (left = b->colptr, seg =
 * b->part_ptr; comp = b->part holds the union-find parents, then each tree's root; all three are free
 * until the end of the analysis). */
void grit_blockchol_group_components(grit_blockchol *b, int npairs, const int *pa, const int *pb) {
  const int nt = b->nt;
  int *left = b->colptr, *comp = b->part, *seg = b->part_ptr;
  for (int t = 0; t < nt; ++t) comp[t] = t;
  for (int k = 0; k < npairs; ++k) {
    int x = pa[k], y = pb[k];
    while (comp[x] != x) x = comp[x] = comp[comp[x]];
    while (comp[y] != y) y = comp[y] = comp[comp[y]];
    if (x != y) comp[x < y ? y : x] = x < y ? x : y;
  }
  memset(seg, 0, sizeof(int) * (size_t)(nt + 1));
  for (int t = 0; t < nt; ++t) {
    comp[t] = comp[comp[t]]; /* roots come first and point at themselves: one step reaches them */
    if (b->deg[t] > 0) seg[comp[t] + 1]++;
  }
  for (int t = 0; t < nt; ++t) seg[t + 1] += seg[t];
  for (int t = 0; t < nt; ++t) /* counting sort; b->pos is the cursor scratch, written for good later */
    b->pos[t] = seg[t];
  for (int t = 0; t < nt; ++t)
    if (b->deg[t] > 0) left[b->pos[comp[t]]++] = t;
}

/* Components of up to this many trees are ordered by the linear search (cheaper than the heap there:
 * clutter.xml's piles of a few objects). */
#define HEAP_MIN 64

/* The order's heap: tree a comes before tree b (the smaller degree, ties the lower index: the linear
 * search's choice). */
static inline int before(const int *deg, int a, int b) { return deg[a] < deg[b] || (deg[a] == deg[b] && a < b); }

static inline __attribute__((always_inline)) void heap_up(grit_blockchol *b, int i) {
  int *h = b->heap, *hp = b->hpos;
  const int t = h[i];
  while (i > 0 && before(b->deg, t, h[(i - 1) / 2])) h[i] = h[(i - 1) / 2], hp[h[i]] = i, i = (i - 1) / 2;
  h[i] = t, hp[t] = i;
}

static inline __attribute__((always_inline)) void heap_down(grit_blockchol *b, int n, int i) {
  int *h = b->heap, *hp = b->hpos;
  const int t = h[i];
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(b->deg, h[c + 1], h[c])) ++c;
    if (!before(b->deg, h[c], t)) break;
    h[i] = h[c], hp[h[i]] = i, i = c;
  }
  h[i] = t, hp[t] = i;
}

/* The weight of the bits of word w of a row: the dofs of those trees. */
static inline int word_weight(const grit_blockchol *b, uint64_t x, int w) {
  int d = 0;
  for (; x; x &= x - 1) d += b->m->tree_dofnum[64 * w + __builtin_ctzll(x)];
  return d;
}

/* Neighbour u's row after tree k's elimination, ru := (ru | rk) without u and k, and its weighted degree
 * updated by the bits that came and went, over the words that can change only (rk's nonzero ones,
 * wl[0 .. nw-1], and k's own): the same integer as a recount (weighted_degree), at the cost of the few
 * new neighbours instead of a pass over every word (1000 particles: 16 words a row, the recount was 40 %
 * of the analysis). */
static inline void merge_row(grit_blockchol *b, uint64_t *ru, const uint64_t *rk, int u, int k, const int *wl, int nw) {
  /* The bits that come are rk's that ru lacks, u's own excepted; those that go are u's and k's. Near
   * the end of a pile's order the rows are cliques and most words bring nothing: a test per word, and
   * the weights of the changed bits only (the same degree as before). */
  int d = b->deg[u];
  const int uw = u / 64, kw = k / 64;
  const uint64_t ubit = 1ull << (u % 64), kbit = 1ull << (k % 64);
  /* u's and k's bits set in ru for the loop, so that rk & ~ru leaves them out without a mask per word */
  if (ru[uw] & ubit) d -= b->m->tree_dofnum[u]; /* (never: no row holds its own bit) */
  if (ru[kw] & kbit) d -= b->m->tree_dofnum[k];
  ru[uw] |= ubit, ru[kw] |= kbit;
  if (b->avx2_merge && 8 * nw >= b->words) { /* rk's words many: the whole row four words at a time */
    d += grit_blockchol_merge_words_avx2(ru, rk, b->words, b->m->tree_dofnum);
    ru[uw] &= ~ubit, ru[kw] &= ~kbit;
    b->deg[u] = d;
    return;
  }
  for (int i = 0; i < nw; ++i) {
    const int w = wl[i];
    const uint64_t add = rk[w] & ~ru[w];
    if (!add) continue;
    ru[w] |= add;
    d += word_weight(b, add, w);
  }
  ru[uw] &= ~ubit, ru[kw] &= ~kbit;
  b->deg[u] = d;
}

/* Eliminates tree k at position p: its neighbours (the column's blocks, appended to rows as trees)
 * become a clique. */
static inline __attribute__((always_inline)) grit_status eliminate(grit_blockchol *b, int k, int p, int *ne,
                                                                  char *message) {
  const int W = b->words;
  b->order[p] = k;
  b->pos[k] = p;
  b->done[k] = 1;
  b->doff[p] = *ne;
  uint64_t *rk = b->adj + (size_t)k * W;
  int *wl = b->wlist, nw = 0; /* the words a neighbour's row can change in (grit_blockchol_fast_order) */
  for (int w = 0; w < W && !b->no_fast_order; ++w)
    if (rk[w] || w == k / 64) wl[nw++] = w;
  for (int w = 0; w < W; ++w)
    for (uint64_t x = rk[w]; x; x &= x - 1) {
      const int u = 64 * w + __builtin_ctzll(x);
      if (!grit_blockchol_grow((void **)&b->rows, &b->cap_rows, *ne + 1, sizeof(int)))
        return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the fill");
      b->rows[(*ne)++] = u; /* a tree for now; its position once all are ordered */
      uint64_t *ru = b->adj + (size_t)u * W;
      const int du = b->deg[u];
      if (!b->no_fast_order) {
        merge_row(b, ru, rk, u, k, wl, nw);
      } else {
        for (int v = 0; v < W; ++v) ru[v] |= rk[v];
        ru[u / 64] &= ~(1ull << (u % 64));
        ru[k / 64] &= ~(1ull << (k % 64));
        b->deg[u] = weighted_degree(b, ru);
      }
      if (b->heap_n > 0 && b->deg[u] < du) heap_up(b, b->hpos[u]); /* its place in the order's heap: one */
      else if (b->heap_n > 0 && b->deg[u] > du) heap_down(b, b->heap_n, b->hpos[u]); /* key moved one way */
    }
  return GRIT_OK;
}

/* The minimum-degree order of one component (its trees left[0 .. n-1]) by a heap: the same choices
 * as the linear search (a pile of 1000 particles: that search and the degrees' bit loops were 80 % of
 * the analysis). Eliminating a tree changes the degrees of its neighbours only (eliminate moves them). */
static grit_status order_component_heap(grit_blockchol *b, const int *left, int n, int *p, int *ne, char *message) {
  for (int i = 0; i < n; ++i) b->heap[i] = left[i], b->hpos[left[i]] = i;
  for (int i = n / 2 - 1; i >= 0; --i) heap_down(b, n, i);
  while (n > 0) {
    const int k = b->heap[0];
    b->heap[0] = b->heap[--n];
    b->hpos[b->heap[0]] = 0;
    if (n > 0) heap_down(b, n, 0);
    b->heap_n = n; /* eliminate moves each neighbour whose degree it changes */
    grit_status s = eliminate(b, k, (*p)++, ne, message);
    b->heap_n = 0;
    if (s != GRIT_OK) return s;
  }
  return GRIT_OK;
}

/* Analysis phase 3, the elimination order by minimum degree: eliminate the tree with the fewest
 * neighbouring dofs (ties: the lowest index, for determinism); its neighbours become a clique. Column p's
 * blocks are its neighbours then. Eliminating a tree changes degrees in its connected component only, so
 * the components are ordered one after the other, each by its own search: within each the same order as
 * one search over all trees (the same fill), at a cost of the sum of the components' squared sizes
 * instead of the square of the number of coupled trees (a clutter of 640 objects in piles of ten). Trees
 * coupled to none come first (no fill, no search). *ne: the number of off-diagonal blocks. */
grit_status grit_blockchol_order_min_degree(grit_blockchol *b, int *ne, char *message) {
  const int nt = b->nt;
  int *left = b->colptr, *seg = b->part_ptr, p = 0;
  *ne = 0;
  for (int t = 0; t < nt; ++t) {
    if (b->deg[t] > 0) continue;
    b->order[p] = t;
    b->pos[t] = p;
    b->done[t] = 1;
    b->doff[p++] = 0; /* column p is empty: doff holds the columns' starts until the end */
  }
  b->keep_ok = 0;
  for (int r = 0; r < nt; ++r) {
    b->keep_ok |= seg[r + 1] - seg[r] > HEAP_MIN && b->words <= 64; /* a pile: its order may be kept */
    if (seg[r + 1] - seg[r] > HEAP_MIN && !b->no_fast_order) {
      grit_status s = order_component_heap(b, left + seg[r], seg[r + 1] - seg[r], &p, ne, message);
      if (s != GRIT_OK) return s;
      continue;
    }
    for (int c0 = seg[r], c1 = seg[r + 1]; c1 > c0; ++p) {
      int kk = c0;
      for (int i = c0 + 1; i < c1; ++i)
        if (b->deg[left[i]] < b->deg[left[kk]]) kk = i;
      const int k = left[kk];
      memmove(left + kk, left + kk + 1, sizeof(int) * (size_t)(c1 - kk - 1)); /* keep index order: ties */
      --c1;
      grit_status s = eliminate(b, k, p, ne, message);
      if (s != GRIT_OK) return s;
    }
  }
  b->colptr[nt] = *ne;
  for (int q = 0; q < nt; ++q) b->colptr[q] = b->doff[q];
  return GRIT_OK;
}
