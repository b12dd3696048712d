/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit.h — the `grit fit` command of the command-line tool (tools/grit_fit.c). */
#ifndef GRIT_TOOLS_FIT_H
#define GRIT_TOOLS_FIT_H

/* The usage lines of `grit fit`, for grit --help. */
#define GRIT_FIT_USAGE                                                                                        \
  "       grit fit MODEL.xml --data SRC ... --param NAME[:WHICH]=GUESS ... [--validate SRC ...]\n"          \
  "                [--contact lagged|similar|sap] [--dt S] [--ctrl \"...\"] [--segment K] [--reset]\n"       \
  "                [--sigma-q S] [--sigma-r S] [--sigma-v S] [--sigma-w S] [--huber D] [--tol T]\n"          \
  "                [--max-iters N] [--coarse N] [--span S] [--starts N] [--covariance sandwich|residual]\n"  \
  "                [--threads N] [--width W] [--package-path DIR] [--quiet]   (SRC: a CSV file, a directory,\n" \
  "                a .txt/.list file; NAME: friction, stiffness, dissipation, tau_d, mass:BODY, inertia:BODY;\n" \
  "                mpirun -n K)\n"

/* Runs `grit fit` with the whole command line (argv[1] is "fit"); returns the exit status: 0 success,
 * 1 a bad model or data file or a failed fit, 2 a usage error. */
int grit_fit_command(int argc, char **argv);

#endif
