/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit_data.h — the trajectories of `grit fit` (tools/grit_fit_data.c): CSV files named one by one,
 * by a directory (its *.csv files in name order) or by a list file (one path a line, relative to the
 * list's directory; '#' starts a comment). */
#ifndef GRIT_TOOLS_FIT_DATA_H
#define GRIT_TOOLS_FIT_DATA_H

#include "grit/grit.h"

/* One CSV file: rows samples of t, q, v (and u when the file has u0..); an empty or "nan" field is NaN
 * (masked out of the fit). */
typedef struct fit_table {
  char *path;
  int rows, has_u;
  double *t, *q, *v, *u;
} fit_table;

typedef struct fit_tables {
  int n, cap;
  fit_table *tab;
} fit_tables;

/* Expands a --data or --validate argument (a file, a directory or a list file ending in .txt or .list)
 * into paths appended to *paths (*n of them, *cap allocated). 0 or an exit status (1: unreadable). */
int fit_expand_source(const char *arg, char ***paths, int *n, int *cap);

/* Reads the CSV at path for the model into t; 0 or an exit status (1, with a message on stderr naming the
 * file and line). */
int fit_read_table(const char *path, const grit_model *m, fit_table *t);

void fit_table_free(fit_table *t);

#endif
