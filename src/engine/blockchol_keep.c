/* SPDX-License-Identifier: Apache-2.0 */
/* blockchol_keep.c — the block Cholesky's fill for a new pattern under the elimination order it already
 * has (blockchol.h, grit_blockchol_keep_order): a pile's pattern grows as its contacts engage (1000
 * particles: 845 → 1546 pairs over one step's Newton iterations), and a fresh minimum-degree order for
 * each growth was most of the analysis. Under a fixed order the fill is the elimination tree's: a
 * column's blocks are its later neighbours and its children's blocks (each child merged once, into its
 * parent, the first later position of its column), not a merge of the column into every neighbour. */
#include "blockchol.h"
#include "blockchol_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "status_internal.h"

/* Grows *p (elements of `size` bytes) to hold at least n, by doubling; 0 on failure (*p unchanged). */
static int grow_ints(int **p, int *cap, int n) {
  if (n <= *cap) return 1;
  int c = *cap > 0 ? *cap : 16;
  while (c < n) c *= 2;
  int *q = realloc(*p, (size_t)c * sizeof(int));
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* The fill of the pattern in b->adj (bit rows by tree, as build_graph leaves them) under b->order:
 * column p's blocks into rows (as trees, as the minimum-degree elimination leaves them) from doff[p],
 * then colptr; *ne: the off-diagonal blocks. The same pattern as eliminating the graph in that order.
 * *ne = -1 (b->adj, rows and doff spoilt) as soon as the factor's flops (lay_out_columns' count)
 * exceed max_flops. */
grit_status grit_blockchol_fill_in_order(grit_blockchol *b, int npairs, const int *pa, const int *pb, double max_flops,
                                        int *ne, char *message) {
  const int nt = b->nt, W = b->words, *dim = b->m->tree_dofnum;
  uint64_t *ws = b->wsum; /* each row's nonzero words, one bit a word (W <= 64): the rows are sparse */
  memset(ws, 0, sizeof(uint64_t) * (size_t)nt);
  for (int k = 0; k < npairs; ++k) ws[pa[k]] |= 1ull << (pb[k] / 64), ws[pb[k]] |= 1ull << (pa[k] / 64);
  double fl = 0.0;
  *ne = 0;
  for (int p = 0; p < nt; ++p) {
    const int k = b->order[p], n = dim[k];
    uint64_t *rk = b->adj + (size_t)k * W;
    b->doff[p] = *ne;
    int parent = -1, pp = nt, mrows = 0;
    for (uint64_t wb = ws[k]; wb; wb &= wb - 1) {
      const int w = __builtin_ctzll(wb);
      for (uint64_t x = rk[w]; x; x &= x - 1) {
        const int u = 64 * w + __builtin_ctzll(x), q = b->pos[u];
        if (q < p) { /* an earlier neighbour: the pair lies in its column */
          rk[w] &= ~(1ull << (u % 64));
          continue;
        }
        if (!grow_ints(&b->rows, &b->cap_rows, *ne + 1))
          return grit_set_error(message, GRIT_ERR_OUT_OF_MEMORY, "block Cholesky: out of memory for the fill");
        b->rows[(*ne)++] = u;
        mrows += dim[u];
        if (q < pp) pp = q, parent = u;
      }
    }
    fl += (double)n * n * n / 3.0 + (double)mrows * n * n + (double)mrows * mrows * n; /* lay_out_columns' */
    if (fl > max_flops) { /* too much fill: the caller orders afresh */
      *ne = -1;
      return GRIT_OK;
    }
    if (parent < 0) continue;
    uint64_t *rp = b->adj + (size_t)parent * W; /* the parent inherits the rest of the column */
    for (uint64_t wb = ws[k]; wb; wb &= wb - 1) rp[__builtin_ctzll(wb)] |= rk[__builtin_ctzll(wb)];
    ws[parent] |= ws[k];
    rp[parent / 64] &= ~(1ull << (parent % 64));
  }
  b->colptr[nt] = *ne;
  for (int q = 0; q < nt; ++q) b->colptr[q] = b->doff[q];
  return GRIT_OK;
}
