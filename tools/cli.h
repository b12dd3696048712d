/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h — what every command of the grit tool shares: the option parser (one table of options per
 * command, --help on each), the messages on stderr (one line, "grit: error: ..." exit 1 or "grit: usage
 * error: ... (see grit CMD --help)" exit 2), numbers and vectors from the command line, the CSV reader of
 * trajectories (t, q0.., v0.., u0.. by header) and output files written through a temporary file. */
#ifndef GRIT_TOOLS_CLI_H
#define GRIT_TOOLS_CLI_H

#include <stdio.h>

enum { CLI_EXIT_MODEL = 1, CLI_EXIT_USAGE = 2, CLI_HELP = -1 };

/* "grit: usage error: <fmt> (see grit --help)" on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "grit: error: <fmt>" on stderr; returns CLI_EXIT_MODEL. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "grit: warning: <fmt>" on stderr. */
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A finite number filling all of s; *ok = 0 otherwise. */
double cli_number(const char *s, int *ok);
/* Numbers separated by spaces, tabs or commas into out (at most n); their count, or -1 for a bad token. */
int cli_numbers(const char *s, double *out, int n);

typedef enum cli_kind {
  CLI_FLAG,    /* no value: *(int *)dest = value */
  CLI_TEXT,    /* *(const char **)dest = the value */
  CLI_NUMBER,  /* *(double *)dest: finite, > min (open) or >= min */
  CLI_INTEGER, /* *(long *)dest: an integer in [min, max] */
  CLI_CHOICE,  /* *(int *)dest = the index of the value in choices (NULL-terminated) */
  CLI_CALL     /* call(ctx, option, value): 0 or an exit status */
} cli_kind;

typedef struct cli_option {
  const char *name; /* "--dt" */
  const char *alt;  /* another spelling ("-o") or NULL */
  cli_kind kind;
  void *dest;
  double min, max;  /* CLI_NUMBER: min and open (max != 0: > min; 0: >= min); CLI_INTEGER: the range */
  int value;        /* CLI_FLAG: the value set */
  const char *const *choices;
  int (*call)(void *ctx, const char *option, const char *value);
  void *ctx;
} cli_option;

/* Parses argv[2..] (argv[1] is the command) with the command's options; the one positional argument
 * (the model file) goes to *positional. --help or -h prints "usage: " and the usage lines (indented by 7
 * spaces, the first one's indentation dropped) on stdout and returns CLI_HELP; a bad
 * option returns CLI_EXIT_USAGE after its message; 0 otherwise. */
int cli_parse(int argc, char **argv, const cli_option *options, int noptions, const char **positional,
              const char *usage);

/* A trajectory read from CSV: a header naming the columns t, q0..q{nq-1} (required), v0.. and u0..
 * (optional, each all or none), others ignored; one row per sample. Empty fields are NAN when allowed. */
typedef struct cli_table {
  int rows, has_v, has_u;
  double *t, *q, *v, *u; /* rows, rows x nq, rows x nv, rows x nu (v, u only when present) */
} cli_table;

/* What a command accepts in its CSV files (the one reader serves grit replay and grit fit). */
typedef struct cli_csv_rules {
  int empty_vu;     /* an empty v or u field reads as NAN */
  int nan_values;   /* a q, v or u field may be empty or "nan" (NAN: a masked sample); a row may not be short */
  int need_v;       /* the velocity columns v0.. are required */
  int increasing_t; /* each row's time must follow the previous one's */
  int min_rows;     /* the fewest data rows accepted (>= 1), and why ("a fit needs ...") */
  const char *min_rows_why;
} cli_csv_rules;

/* Reads path into tb under the rules; 0 or CLI_EXIT_MODEL after a message with the file (and line). t is
 * always required and finite. */
int cli_read_csv(const char *path, int nq, int nv, int nu, const cli_csv_rules *rules, cli_table *tb);
/* cli_read_csv with the rules {empty_vu = allow_empty, min_rows = 1}. */
int cli_read_table(const char *path, int nq, int nv, int nu, int allow_empty, cli_table *tb);
void cli_table_free(cli_table *tb);

/* Reads one line of any length into *buf (grown as needed, '\r' dropped); its length, -1 at the end of the
 * file, -2 out of memory. */
long cli_read_line(FILE *f, char **buf, size_t *cap);

/* 0, or CLI_EXIT_USAGE with a message when the output path names the same file as the input
 * (what_out, what_in: the options, e.g. "--csv", "the model file"). */
int cli_check_output(const char *what_out, const char *out, const char *what_in, const char *in);

#endif
