/* SPDX-License-Identifier: Apache-2.0 */
/* quasistatic_generic.h — the quasistatic step's operator, written once for double and dual numbers
 * (included by quasistatic.c once per scalar): the step (double) and its derivatives' residual (dual)
 * scale the inertia by the same code. docs/quasistatic.md. */

void GS_NAME(grit_quasistatic_inertia)(const grit_model *m, double eps, const GS *M, GS *A, const char *mask) {
  for (int t = 0; t < m->ntree; ++t) {
    if (mask && !mask[t]) continue;
    const int a0 = m->tree_madr[t], nn = m->tree_dofnum[t] * m->tree_dofnum[t];
    for (int i = a0; i < a0 + nn; ++i) A[i] = GS_SUB(A[i], GS_SCALE(M[i], 1.0 - eps));
  }
}
