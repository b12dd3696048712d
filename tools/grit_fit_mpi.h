/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit_mpi.h — `mpirun -n K grit fit ...` (tools/grit_fit_mpi.c, built when CMake finds MPI and
 * GRIT_USE_MPI is ON; docs/sysid.md). The library knows nothing of MPI: the fit takes a sum over
 * processes as a callback (grit_fit_options.allreduce_sum), which this module provides. */
#ifndef GRIT_TOOLS_FIT_MPI_H
#define GRIT_TOOLS_FIT_MPI_H

typedef struct fit_mpi {
  int rank, size; /* 0 and 1 without MPI */
  int active;     /* MPI was initialized here (the process was started by mpirun) */
} fit_mpi;

/* Initializes MPI when the process was started by an MPI launcher (else rank 0 of 1, without MPI). */
void fit_mpi_begin(int *argc, char ***argv, fit_mpi *p);
void fit_mpi_end(fit_mpi *p);
/* MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); ctx unused. */
void fit_mpi_allreduce_sum(double *buf, int n, void *ctx);

#endif
