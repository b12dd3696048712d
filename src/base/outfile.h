/* SPDX-License-Identifier: Apache-2.0 */
/* outfile.h — output files written safely (docs/errors.md, Output files): the content goes to a temporary
 * file in the destination's directory, which is renamed onto the destination only when everything was
 * written (grit_outfile_commit); a failed run (grit_outfile_abort) removes it and leaves an existing
 * destination untouched. grit_same_file refuses an output that would overwrite an input.
 *
 * Internal to grit (compiled into libgrit, libgrit_replay and the grit program, hidden from the shared
 * libraries' interfaces); the CLI, the replay writer and the examples all write through it. */
#ifndef GRIT_OUTFILE_H
#define GRIT_OUTFILE_H

#include <stdio.h>

#include "grit/status.h"

typedef struct grit_outfile {
  FILE *f;      /* write here between open and commit/abort */
  char *path;   /* the destination */
  char *tmp;    /* the temporary file, in the same directory (so that the rename is atomic) */
} grit_outfile;

/* Creates the temporary file for `path` (mode "w" or "wb" behaviour: binary, no translation on POSIX).
 * On failure o->f is NULL and msg (GRIT_MESSAGE_SIZE, may be NULL) says why. */
grit_status grit_outfile_open(grit_outfile *o, const char *path, char *msg);

/* Flushes, closes and renames the temporary file onto the destination; on any failure removes it, keeps
 * the destination as it was and returns GRIT_ERR_IO with a message. */
grit_status grit_outfile_commit(grit_outfile *o, char *msg);

/* Closes and removes the temporary file (a failed run); the destination is untouched. NULL-safe, and a
 * no-op after commit. */
void grit_outfile_abort(grit_outfile *o);

/* 1 when the two paths name the same existing file (same device and inode; if either cannot be stat'ed,
 * the same canonical path from realpath, else the same string), 0 otherwise. */
int grit_same_file(const char *a, const char *b);

#endif
