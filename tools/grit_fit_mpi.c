/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit_mpi.c — MPI for `grit fit` (grit_fit_mpi.h); without GRIT_HAVE_MPI, one process. */
#include "grit_fit_mpi.h"

#ifdef GRIT_HAVE_MPI
#include <mpi.h>
#include <stdlib.h>

void fit_mpi_begin(int *argc, char ***argv, fit_mpi *p) {
  p->rank = 0, p->size = 1, p->active = 0;
  /* only under a launcher: a plain `grit fit` neither starts MPI's runtime nor depends on it working */
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return;
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init(argc, argv) != MPI_SUCCESS) return;
  p->active = !inited;
  MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p->size);
}

void fit_mpi_end(fit_mpi *p) {
  if (p->active) MPI_Finalize();
  p->active = 0;
}

void fit_mpi_allreduce_sum(double *buf, int n, void *ctx) {
  (void)ctx;
  MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
#else
void fit_mpi_begin(int *argc, char ***argv, fit_mpi *p) {
  (void)argc, (void)argv;
  p->rank = 0, p->size = 1, p->active = 0;
}

void fit_mpi_end(fit_mpi *p) { p->active = 0; }

void fit_mpi_allreduce_sum(double *buf, int n, void *ctx) { (void)buf, (void)n, (void)ctx; }
#endif
