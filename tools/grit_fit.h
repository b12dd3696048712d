/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit.h — the `grit fit` command of the command-line tool (tools/grit_fit.c). */
#ifndef GRIT_TOOLS_FIT_H
#define GRIT_TOOLS_FIT_H

/* The usage lines of `grit fit`, for grit --help. */
#define GRIT_FIT_USAGE                                                                                        \
  "       grit fit MODEL.xml --data FILE.csv --param NAME[:WHICH]=GUESS ... [--contact lagged|similar|sap]\n" \
  "                [--dt S] [--ctrl \"...\"] [--segment K] [--reset] [--sigma-q S] [--sigma-v S]\n"          \
  "                [--max-iters N] [--quiet]   (NAME: friction, stiffness, dissipation, mass:BODY)\n"

/* Runs `grit fit` with the whole command line (argv[1] is "fit"); returns the exit status: 0 success,
 * 1 a bad model or data file or a failed fit, 2 a usage error. */
int grit_fit_command(int argc, char **argv);

#endif
