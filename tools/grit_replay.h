/* SPDX-License-Identifier: Apache-2.0 */
/* grit_replay.h — the grit tool's `replay` command (tools/grit_replay.c). */
#ifndef GRIT_TOOLS_REPLAY_H
#define GRIT_TOOLS_REPLAY_H

/* Runs `grit replay ...` (argv[1] is "replay"); the tool's exit status: 0, 1 (model, file or runtime
 * error) or 2 (usage error), each error one line on stderr. */
int grit_cli_replay(int argc, char **argv);

/* The usage lines of the command, for grit --help. */
#define GRIT_REPLAY_USAGE \
  "       grit replay MODEL.xml --csv TRAJ.csv -o OUT.html [--title T] [--no-contacts] [--ctrl \"...\"]\n" \
  "                   [--contact lagged|similar|sap] [--dt S] [--friction MU] [--stiffness K] [--dissipation D]\n" \
  "                   [--package-path DIR]\n"

#endif
