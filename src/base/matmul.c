/* SPDX-License-Identifier: Apache-2.0 */
/* matmul.c — the one small dense product (matmul.h). */
#include "matmul.h"

#include <stddef.h>

void grit_matmul(const double *A, const double *B, double *C, int r, int k, int c) {
  for (int i = 0; i < r; ++i) {
    double *ci = C + (size_t)i * c;
    for (int j = 0; j < c; ++j) ci[j] = 0.0;
    for (int l = 0; l < k; ++l) {
      const double a = A[(size_t)i * k + l];
      if (a == 0.0) continue;
      const double *bl = B + (size_t)l * c;
      for (int j = 0; j < c; ++j) ci[j] += a * bl[j];
    }
  }
}
