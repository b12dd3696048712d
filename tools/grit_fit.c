/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit.c — `grit fit`: contact parameters (and masses) fitted to a recorded trajectory (grit_fit,
 * grit/sysid.h, docs/sysid.md).
 *
 *   grit fit MODEL.xml --data FILE.csv --param NAME[:WHICH]=GUESS ... [--contact lagged|similar|sap]
 *            [--dt S] [--ctrl "..."] [--segment K] [--reset] [--sigma-q S] [--sigma-v S] [--max-iters N]
 *            [--quiet]
 *
 * The data are in the CSV format of `grit sim --csv`: a header naming the columns t, q0.., v0.., and
 * optionally u0.. (the controls held over the step that starts at that row; without them the controls
 * are --ctrl, or zero), then one row per sample, the first the initial state, the times spaced by the
 * model's timestep. NAME is friction, stiffness or dissipation (every geometry, or with :WHICH one
 * geometry by name or index) or mass:WHICH (a body by name or index). The output is one JSON object:
 * each parameter's fitted value under its spelling on the command line (friction, stiffness:ball, ...)
 * and its standard deviation under NAME_std, then iterations, evaluations, residual (the weighted
 * residual's root mean square: ~1 when --sigma-q and --sigma-v are the noise's), cost, initial_cost,
 * sigma2, samples, segments and converged. A fit that stops at --max-iters is reported with
 * "converged":false and exit status 0. */
#define _POSIX_C_SOURCE 200809L
#include "grit_fit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"

#include "cli.h"

enum { EXIT_MODEL = CLI_EXIT_MODEL, EXIT_USAGE = CLI_EXIT_USAGE, MAX_PARAMS = 16 };

typedef struct fit_args {
  const char *model, *data, *ctrl;
  const char *spec[MAX_PARAMS]; /* NAME[:WHICH] as given */
  double guess[MAX_PARAMS];
  int np, contact, quiet;
  long segment, max_iters;
  grit_fit_options opt;
  double dt, sigma_q, sigma_v;
} fit_args;

static const char *const CONTACT_NAMES[] = {"lagged", "similar", "sap", NULL};

/* One --param NAME[:WHICH]=GUESS (the name resolved once the model is loaded). */
static int add_param(void *ctx, const char *option, const char *v) {
  fit_args *a = ctx;
  (void)option;
  const char *eq = strchr(v, '=');
  if (!eq || eq == v) return cli_usage_error("--param needs NAME[:WHICH]=GUESS, not '%s'", v);
  for (const char *c = v; c < eq; ++c)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
      return cli_usage_error("--param '%s': a name with a quote, backslash or control character", v);
  if (a->np == MAX_PARAMS) return cli_usage_error("too many --param options at '%s' (at most %d)", v, MAX_PARAMS);
  int ok;
  a->guess[a->np] = cli_number(eq + 1, &ok);
  if (!ok || !(a->guess[a->np] > 0)) return cli_usage_error("--param needs a positive finite guess, not '%s'", v);
  a->spec[a->np++] = v;
  return 0;
}

static int parse(int argc, char **argv, fit_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->opt = grit_default_fit_options();
  a->segment = a->opt.segment_steps, a->max_iters = a->opt.max_iters;
  a->sigma_q = a->opt.position_sigma, a->sigma_v = a->opt.velocity_sigma;
  a->opt.fit_initial_states = !!a->opt.fit_initial_states;
  const cli_option options[] = {
      {.name = "--quiet", .kind = CLI_FLAG, .dest = &a->quiet, .value = 1},
      {.name = "--reset", .kind = CLI_FLAG, .dest = &a->opt.fit_initial_states, .value = 0},
      {.name = "--data", .kind = CLI_TEXT, .dest = &a->data},
      {.name = "--ctrl", .kind = CLI_TEXT, .dest = &a->ctrl},
      {.name = "--param", .kind = CLI_CALL, .call = add_param, .ctx = a},
      {.name = "--contact", .kind = CLI_CHOICE, .dest = &a->contact, .choices = CONTACT_NAMES},
      {.name = "--dt", .kind = CLI_NUMBER, .dest = &a->dt, .max = 1},
      {.name = "--segment", .kind = CLI_INTEGER, .dest = &a->segment, .min = 1, .max = 1e9},
      {.name = "--max-iters", .kind = CLI_INTEGER, .dest = &a->max_iters, .min = 1, .max = 1e9},
      {.name = "--sigma-q", .kind = CLI_NUMBER, .dest = &a->sigma_q, .max = 1},
      {.name = "--sigma-v", .kind = CLI_NUMBER, .dest = &a->sigma_v, .max = 1},
  };
  int rc = cli_parse(argc, argv, options, (int)(sizeof options / sizeof options[0]), &a->model, GRIT_FIT_USAGE);
  if (rc) return rc;
  a->opt.segment_steps = (int)a->segment, a->opt.max_iters = (int)a->max_iters;
  a->opt.position_sigma = a->sigma_q, a->opt.velocity_sigma = a->sigma_v;
  if (!a->model) return cli_usage_error("fit needs a model file");
  if (!a->data) return cli_usage_error("fit needs --data FILE.csv");
  if (a->np == 0) return cli_usage_error("fit needs at least one --param NAME=GUESS");
  return 0;
}

/* NAME[:WHICH] of a --param into a grit_param; 0 or an exit status. */
static int resolve(const grit_model *m, const char *spec, grit_param *p) {
  char name[64], which[192] = "";
  const size_t n = strcspn(spec, ":=");
  if (n >= sizeof name) return cli_usage_error("unknown parameter in '%s'", spec);
  memcpy(name, spec, n);
  name[n] = '\0';
  if (spec[n] == ':') {
    const size_t w = strcspn(spec + n + 1, "=");
    if (w == 0 || w >= sizeof which) return cli_usage_error("--param '%s' names no geometry or body after ':'", spec);
    memcpy(which, spec + n + 1, w);
    which[w] = '\0';
  }
  static const char *const kinds[] = {"friction", "stiffness", "dissipation", "mass"};
  int kind = -1;
  for (int k = 0; k < 4; ++k)
    if (!strcmp(name, kinds[k])) kind = k;
  if (kind < 0) return cli_usage_error("--param '%s': the name must be friction, stiffness, dissipation or mass", spec);
  p->kind = (grit_param_kind)kind;
  p->index = -1;
  if (kind == GRIT_PARAM_MASS && !which[0]) return cli_usage_error("--param '%s': mass needs :BODY", spec);
  if (which[0]) {
    int ok;
    const double idx = cli_number(which, &ok);
    p->index = kind == GRIT_PARAM_MASS ? grit_model_body_index(m, which) : grit_model_geom_index(m, which);
    if (p->index < 0 && ok && idx == floor(idx) && idx >= 0 && idx < 1e9) p->index = (int)idx;
    const int count = kind == GRIT_PARAM_MASS ? grit_model_nbody(m) : grit_model_ngeom(m);
    if (p->index < (kind == GRIT_PARAM_MASS ? 1 : 0) || p->index >= count) {
      return cli_error("--param '%s': the model has no %s '%s'", spec, kind == GRIT_PARAM_MASS ? "body" : "geometry", which);
    }
  }
  return 0;
}

/* The CSV data (the reader of every command, cli.h) with the fit's own requirements: velocities, at least
 * two samples, spaced by the model's timestep. 0 or an exit status. */
static int read_table(const char *path, const grit_model *m, cli_table *tb) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  int rc = cli_read_table(path, nq, nv, nu, 0, tb);
  if (!rc && nv > 0 && !tb->has_v)
    rc = cli_error("%s: the header lacks columns v0..v%d (the model has nv = %d)", path, nv - 1, nv);
  if (!rc && tb->rows < 2)
    rc = cli_error("%s: %d samples; a fit needs at least 2 (the initial state and one step)", path, tb->rows);
  const double dt = grit_model_options(m).timestep;
  for (int k = 1; !rc && k < tb->rows; ++k)
    if (fabs(tb->t[k] - tb->t[k - 1] - dt) > 1e-6 * dt)
      rc = cli_error("%s: samples %d and %d are %.9g s apart, not the model's timestep %g s (see --dt)", path, k - 1, k,
                     tb->t[k] - tb->t[k - 1], dt);
  return rc;
}

int grit_fit_command(int argc, char **argv) {
  fit_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc == CLI_HELP ? 0 : rc;
  grit_mjcf_load_options lo = grit_mjcf_default_load_options();
  lo.timestep = a.dt;
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  grit_status s = grit_mjcf_load_file_with(a.model, &lo, &m, &info, msg);
  if (!a.quiet)
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) fprintf(stderr, "grit: warning: %s\n", info.warnings[i]);
  if (s != GRIT_OK) {
    grit_mjcf_info_free(&info);
    return cli_error("%s", msg);
  }
  a.opt.settings = info.settings;
  if (a.opt.settings.rel_tol > 1e-8) a.opt.settings.rel_tol = 1e-8; /* smooth rollouts in the parameters */
  if (a.contact >= 0) a.opt.settings.contact_model = (grit_contact_model)a.contact;
  grit_mjcf_info_free(&info);
  grit_param params[MAX_PARAMS];
  for (int i = 0; !rc && i < a.np; ++i) rc = resolve(m, a.spec[i], &params[i]);
  cli_table tb;
  memset(&tb, 0, sizeof tb);
  if (!rc) rc = read_table(a.data, m, &tb);
  const int nu = grit_model_nu(m);
  double *ctrl = NULL;
  if (!rc && !tb.has_u && a.ctrl && nu > 0) { /* --ctrl held over every step */
    double *u = malloc(sizeof(double) * (size_t)nu);
    ctrl = malloc(sizeof(double) * (size_t)tb.rows * nu);
    const int count = u && ctrl ? cli_numbers(a.ctrl, u, nu) : 0;
    if (!u || !ctrl) rc = cli_error("out of memory");
    else if (count != nu) rc = cli_usage_error("--ctrl needs %d finite numbers (the model's nu)", nu);
    for (int k = 0; !rc && k < tb.rows; ++k) memcpy(ctrl + (size_t)k * nu, u, sizeof(double) * (size_t)nu);
    free(u);
  }
  if (!rc) {
    const grit_trajectory tr = {tb.rows - 1, tb.q, tb.v, tb.has_u ? tb.u : ctrl};
    double val[MAX_PARAMS], std[MAX_PARAMS];
    memcpy(val, a.guess, sizeof val);
    grit_fit_result res;
    s = grit_fit(m, &tr, 1, params, a.np, val, &a.opt, &res, std, NULL, msg);
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: fit failed (%s): %s\n", grit_status_string(s), msg);
      rc = EXIT_MODEL;
    } else {
      printf("{");
      for (int i = 0; i < a.np; ++i) {
        const int n = (int)strcspn(a.spec[i], "=");
        printf("\"%.*s\":%.17g,\"%.*s_std\":", n, a.spec[i], val[i], n, a.spec[i]);
        if (isfinite(std[i])) printf("%.6g,", std[i]);
        else printf("null,");
      }
      printf("\"iterations\":%d,\"evaluations\":%d,\"residual\":%.6g,\"cost\":%.9g,\"initial_cost\":%.9g,"
             "\"sigma2\":%.6g,\"samples\":%d,\"segments\":%d,\"converged\":%s}\n",
             res.iterations, res.evaluations, res.rms, res.cost, res.initial_cost, res.sigma2, tb.rows, res.nsegments,
             res.converged ? "true" : "false");
    }
  }
  free(ctrl);
  cli_table_free(&tb);
  grit_model_free(m);
  return rc;
}
