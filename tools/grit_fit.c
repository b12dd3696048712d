/* SPDX-License-Identifier: Apache-2.0 */
/* grit_fit.c — `grit fit`: contact parameters (and masses) fitted to recorded trajectories
 * (grit_fit_timed, grit/sysid.h, docs/sysid.md).
 *
 *   grit fit MODEL.xml --data SRC ... --param NAME[:WHICH]=GUESS ... [--validate SRC ...] [options]
 *
 * Each --data (repeatable) is a CSV file, a directory (its *.csv files) or a list file (.txt/.list, one
 * path a line); each file is one trajectory with its own initial state. The data are in the CSV format
 * of `grit sim --csv`: a header naming the columns t, q0.., v0.., and optionally u0.. (the controls held
 * from that row's time to the next; without them the controls are --ctrl, or zero), then one row per
 * sample at its measured time (jitter, drift, dropped rows and periods that are multiples of the step
 * are accepted); an empty or nan field is masked out of the fit. Under mpirun the trajectories are
 * split across the processes (tools/grit_fit_mpi.c). NAME is friction, stiffness or dissipation (every geometry, or with :WHICH one
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

#include "cli.h"
#include "grit/grit.h"
#include "grit_fit_data.h"
#include "grit_fit_mpi.h"

enum { MAX_PARAMS = 16 };
#define GRIT_FIT_PI 3.14159265358979323846

typedef struct fit_args {
  const char *model, *ctrl, *package_path;
  const char **data, **validate; /* the --data and --validate arguments */
  int ndata, nvalidate;
  const char *spec[MAX_PARAMS]; /* NAME[:WHICH] as given */
  double guess[MAX_PARAMS];
  int np, contact, quiet, covariance;
  grit_fit_options opt;
  double dt, width;
} fit_args;

static int add_data(void *ctx, const char *option, const char *v) {
  fit_args *a = ctx;
  if (!strcmp(option, "--data")) a->data[a->ndata++] = v;
  else a->validate[a->nvalidate++] = v;
  return 0;
}

static int add_param(void *ctx, const char *option, const char *v) {
  fit_args *a = ctx;
  (void)option;
  const char *eq = strchr(v, '=');
  int ok = 1;
  if (!eq || eq == v) return cli_usage_error("--param needs NAME[:WHICH]=GUESS, not '%s'", v);
  for (const char *c = v; c < eq; ++c)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
      return cli_usage_error("--param '%s': a name with a quote, backslash or control character", v);
  if (a->np == MAX_PARAMS) return cli_usage_error("too many --param options at '%s' (at most 16)", v);
  a->guess[a->np] = cli_number(eq + 1, &ok);
  if (!ok || !(a->guess[a->np] > 0)) return cli_usage_error("--param needs a positive finite guess, not '%s'", v);
  a->spec[a->np++] = v;
  return 0;
}

/* The command line into a, on the tool's one option parser (cli.h); 0, CLI_HELP or an exit status. */
static int parse(int argc, char **argv, fit_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->opt = grit_default_fit_options();
  a->opt.coarse_points = 3; /* the command's defaults: a coarse stage, the sandwich covariance */
  a->covariance = 0;
  a->data = calloc((size_t)argc, sizeof *a->data);
  a->validate = calloc((size_t)argc, sizeof *a->validate);
  if (!a->data || !a->validate) return cli_usage_error("out of memory");
  long coarse = a->opt.coarse_points, threads = a->opt.nthreads, starts = a->opt.starts;
  long segment = a->opt.segment_steps, max_iters = a->opt.max_iters;
  static const char *const contacts[] = {"lagged", "similar", "sap", NULL};
  static const char *const covariances[] = {"sandwich", "residual", NULL};
  const cli_option options[] = {
      {"--data", NULL, CLI_CALL, NULL, 0, 0, 0, NULL, add_data, a},
      {"--validate", NULL, CLI_CALL, NULL, 0, 0, 0, NULL, add_data, a},
      {"--param", NULL, CLI_CALL, NULL, 0, 0, 0, NULL, add_param, a},
      {"--quiet", NULL, CLI_FLAG, &a->quiet, 0, 0, 1, NULL, NULL, NULL},
      {"--reset", NULL, CLI_FLAG, &a->opt.fit_initial_states, 0, 0, 0, NULL, NULL, NULL},
      {"--covariance", NULL, CLI_CHOICE, &a->covariance, 0, 0, 0, covariances, NULL, NULL},
      {"--contact", NULL, CLI_CHOICE, &a->contact, 0, 0, 0, contacts, NULL, NULL},
      {"--tol", NULL, CLI_NUMBER, &a->opt.tol, 0, 1, 0, NULL, NULL, NULL},
      {"--huber", NULL, CLI_NUMBER, &a->opt.huber, 0, 0, 0, NULL, NULL, NULL},
      {"--span", NULL, CLI_NUMBER, &a->opt.coarse_span, 1, 1, 0, NULL, NULL, NULL},
      {"--width", NULL, CLI_NUMBER, &a->width, 0, 1, 0, NULL, NULL, NULL},
      {"--sigma-q", NULL, CLI_NUMBER, &a->opt.position_sigma, 0, 1, 0, NULL, NULL, NULL},
      {"--sigma-v", NULL, CLI_NUMBER, &a->opt.velocity_sigma, 0, 1, 0, NULL, NULL, NULL},
      {"--sigma-r", NULL, CLI_NUMBER, &a->opt.orientation_sigma, 0, 1, 0, NULL, NULL, NULL},
      {"--sigma-w", NULL, CLI_NUMBER, &a->opt.angular_velocity_sigma, 0, 1, 0, NULL, NULL, NULL},
      {"--dt", NULL, CLI_NUMBER, &a->dt, 0, 1, 0, NULL, NULL, NULL},
      {"--coarse", NULL, CLI_INTEGER, &coarse, 1, 64, 0, NULL, NULL, NULL},
      {"--threads", NULL, CLI_INTEGER, &threads, 1, 64, 0, NULL, NULL, NULL},
      {"--starts", NULL, CLI_INTEGER, &starts, 1, 64, 0, NULL, NULL, NULL},
      {"--segment", NULL, CLI_INTEGER, &segment, 0, 1e9, 0, NULL, NULL, NULL},
      {"--max-iters", NULL, CLI_INTEGER, &max_iters, 1, 1e9, 0, NULL, NULL, NULL},
      {"--ctrl", NULL, CLI_TEXT, &a->ctrl, 0, 0, 0, NULL, NULL, NULL},
      {"--package-path", NULL, CLI_TEXT, &a->package_path, 0, 0, 0, NULL, NULL, NULL},
  };
  const int rc = cli_parse(argc, argv, options, (int)(sizeof options / sizeof options[0]), &a->model, GRIT_FIT_USAGE);
  if (rc) return rc;
  a->opt.coarse_points = (int)coarse, a->opt.nthreads = (int)threads, a->opt.starts = (int)starts;
  a->opt.segment_steps = (int)segment, a->opt.max_iters = (int)max_iters;
  a->opt.covariance = a->covariance ? GRIT_FIT_COV_RESIDUAL : GRIT_FIT_COV_SANDWICH;
  if (!a->model) return cli_usage_error("fit needs a model file");
  if (!a->ndata) return cli_usage_error("fit needs --data FILE.csv (or a directory or list file)");
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
  static const char *const kinds[] = {"friction", "stiffness", "dissipation", "mass", "tau_d", "inertia"};
  int kind = -1;
  for (int k = 0; k < 6; ++k)
    if (!strcmp(name, kinds[k])) kind = k;
  if (kind < 0) return cli_usage_error("--param '%s': the name must be friction, stiffness, dissipation, tau_d, mass or inertia", spec);
  p->kind = (grit_param_kind)kind;
  p->index = -1;
  const int body = kind == GRIT_PARAM_MASS || kind == GRIT_PARAM_INERTIA;
  if (body && !which[0]) return cli_usage_error("--param '%s': mass and inertia need :BODY", spec);
  if (which[0]) {
    int ok;
    const double idx = cli_number(which, &ok);
    p->index = body ? grit_model_body_index(m, which) : grit_model_geom_index(m, which);
    if (p->index < 0 && ok && idx == floor(idx) && idx >= 0 && idx < 1e9) p->index = (int)idx;
    const int count = body ? grit_model_nbody(m) : grit_model_ngeom(m);
    if (p->index < (body ? 1 : 0) || p->index >= count)
      return cli_error("--param '%s': the model has no %s '%s'", spec, body ? "body" : "geometry", which);
  }
  return 0;
}

/* --ctrl: nu numbers; 0 or an exit status. */
static int parse_ctrl(const char *text, int nu, double *u) {
  const int count = cli_numbers(text, u, nu);
  if (count < 0) return cli_usage_error("--ctrl needs finite numbers, not '%s'", text);
  if (count != nu) return cli_usage_error("--ctrl needs %d finite numbers (the model's nu)", nu);
  return 0;
}

/* The files of the sources, and this process's share of them (a contiguous block). */
static int gather(const char *const *src, int nsrc, const fit_mpi *mp, char ***paths, int *n, int *lo, int *hi) {
  int cap = 0, rc = 0;
  *paths = NULL, *n = 0;
  for (int i = 0; !rc && i < nsrc; ++i) rc = fit_expand_source(src[i], paths, n, &cap);
  *lo = (int)((long long)*n * mp->rank / mp->size), *hi = (int)((long long)*n * (mp->rank + 1) / mp->size);
  return rc;
}

/* Reads files lo..hi-1 into timed trajectories (controls: the file's, else --ctrl held, else zero). */
static int load_trajs(char **paths, int lo, int hi, const grit_model *m, const double *uconst, fit_table **tabs,
                      grit_timed_trajectory **trajs, double **ctrl_store) {
  const int n = hi - lo, nu = grit_model_nu(m);
  *tabs = calloc((size_t)n + 1, sizeof **tabs);
  *trajs = calloc((size_t)n + 1, sizeof **trajs);
  *ctrl_store = NULL;
  if (!*tabs || !*trajs) return cli_error("out of memory");
  int rc = 0, maxrows = 0;
  for (int i = 0; !rc && i < n; ++i) {
    rc = fit_read_table(paths[lo + i], m, &(*tabs)[i]);
    if (!rc && (*tabs)[i].rows > maxrows) maxrows = (*tabs)[i].rows;
  }
  if (!rc && uconst && nu > 0) {
    if (!(*ctrl_store = malloc(sizeof(double) * (size_t)maxrows * nu + 1))) return cli_error("out of memory");
    for (int k = 0; k < maxrows; ++k) memcpy(*ctrl_store + (size_t)k * nu, uconst, sizeof(double) * (size_t)nu);
  }
  for (int i = 0; !rc && i < n; ++i) {
    const fit_table *t = &(*tabs)[i];
    (*trajs)[i] = (grit_timed_trajectory){t->rows, t->t, t->q, t->v, t->has_u ? t->u : *ctrl_store};
  }
  return rc;
}

/* The size of the first moving geometry (a box's largest side, a sphere's diameter): the unit of the
 * validation's position error when --width is not given; 0 if none. */
static double model_width(const grit_model *m) {
  for (int g = 0; g < grit_model_ngeom(m); ++g) {
    grit_geom_def d;
    if (grit_model_geom(m, g, &d) != GRIT_OK || d.body < 1) continue;
    if (d.shape.type == GRIT_GEOM_BOX) return 2 * fmax(d.shape.size[0], fmax(d.shape.size[1], d.shape.size[2]));
    if (d.shape.type == GRIT_GEOM_SPHERE) return 2 * d.shape.size[0];
  }
  return 0.0;
}

/* Open-loop errors of the first free joint on held-out trajectories: from each one's first full sample,
 * the model with the fitted values rolled out, each later sample compared at its time (position
 * interpolated between the steps, orientation of the nearer step). acc: sums of the per-trajectory mean
 * position error (m) and rotation error (rad), of the final sample's, the trajectory count, failures. */
static void validate_one(const grit_model *mfit, const grit_step_settings *st, const grit_timed_trajectory *tr, int qa,
                         double acc[6]) {
  const int nq = grit_model_nq(mfit), nv = grit_model_nv(mfit), nu = grit_model_nu(mfit), nxs = nq + nv;
  const double h = grit_model_options(mfit).timestep;
  int a = 0;
  for (; a < tr->nsamples; ++a) {
    int ok = 1;
    for (int i = 0; i < nq; ++i) ok &= isfinite(tr->qpos[(size_t)a * nq + i]) != 0;
    for (int i = 0; i < nv; ++i) ok &= isfinite(tr->qvel[(size_t)a * nv + i]) != 0;
    if (ok) break;
  }
  if (a + 1 >= tr->nsamples) return;
  const double t0 = tr->t[a];
  const int nsteps = (int)ceil((tr->t[tr->nsamples - 1] - t0) / h - 1e-6);
  double *X = malloc(sizeof(double) * (size_t)(nsteps + 1) * nxs), *x0 = malloc(sizeof(double) * (size_t)nxs);
  double *u = nu > 0 ? malloc(sizeof(double) * (size_t)nsteps * nu) : NULL;
  if (!X || !x0 || (nu > 0 && !u)) {
    free(X), free(x0), free(u), acc[5] += 1;
    return;
  }
  memcpy(x0, tr->qpos + (size_t)a * nq, sizeof(double) * (size_t)nq);
  memcpy(x0 + nq, tr->qvel + (size_t)a * nv, sizeof(double) * (size_t)nv);
  for (int j = 0, ci = a; u && j < nsteps; ++j) {
    while (ci + 1 < tr->nsamples && tr->t[ci + 1] <= t0 + j * h + 1e-9 * h) ci++;
    for (int i = 0; i < nu; ++i) u[(size_t)j * nu + i] = tr->ctrl ? tr->ctrl[(size_t)ci * nu + i] : 0.0;
  }
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_rollout_sensitivities(mfit, st, x0, u, nsteps, NULL, 0, X, NULL, NULL, msg) != GRIT_OK) {
    free(X), free(x0), free(u), acc[5] += 1;
    return;
  }
  double sp = 0, sr = 0, lp = 0, lr = 0;
  int count = 0;
  for (int s = a + 1; s < tr->nsamples; ++s) {
    const double *y = tr->qpos + (size_t)s * nq + qa;
    if (!isfinite(y[0] + y[1] + y[2] + y[3] + y[4] + y[5] + y[6])) continue;
    const double tau = (tr->t[s] - t0) / h;
    int j = (int)floor(tau);
    if (j >= nsteps) j = nsteps - 1;
    const double al = tau - j;
    const double *xa = X + (size_t)j * nxs + qa, *xb = X + (size_t)(j + 1) * nxs + qa, *xr = al < 0.5 ? xa : xb;
    double e2 = 0;
    for (int i = 0; i < 3; ++i) e2 += pow((1 - al) * xa[i] + al * xb[i] - y[i], 2);
    const double n = sqrt(y[3] * y[3] + y[4] * y[4] + y[5] * y[5] + y[6] * y[6]);
    const double dot = fabs(xr[3] * y[3] + xr[4] * y[4] + xr[5] * y[5] + xr[6] * y[6]) / n;
    lp = sqrt(e2), lr = 2 * acos(fmin(1.0, dot));
    sp += lp, sr += lr, count++;
  }
  if (count) acc[0] += sp / count, acc[1] += sr / count, acc[2] += lp, acc[3] += lr, acc[4] += 1;
  free(X), free(x0), free(u);
}

static void print_fit(const fit_args *a, const double *val, const double *std, const int *ident,
                      const grit_fit_result *res, int rows) {
  printf("{");
  for (int i = 0; i < a->np; ++i) {
    const int n = (int)strcspn(a->spec[i], "=");
    printf("\"%.*s\":%.17g,\"%.*s_std\":", n, a->spec[i], val[i], n, a->spec[i]);
    if (ident[i] && isfinite(std[i])) printf("%.6g,", std[i]);
    else printf("\"unidentifiable\",");
  }
  printf("\"iterations\":%d,\"evaluations\":%d,\"residual\":%.6g,\"cost\":%.9g,\"initial_cost\":%.9g,"
         "\"coarse_cost\":%.9g,\"sigma2\":%.6g,\"samples\":%d,\"residuals\":%d,\"segments\":%d,\"trajectories\":%d,\"covariance\":\"%s\","
         "\"identified\":%d,\"starts\":%d,\"start\":%d,\"unidentifiable\":[",
         res->iterations, res->evaluations, res->rms, res->cost, res->initial_cost, res->coarse_cost, res->sigma2,
         rows, res->nresiduals, res->nsegments, res->ntrajectories,
         res->covariance == GRIT_FIT_COV_SANDWICH ? "sandwich" : "residual", res->nidentified, res->nstarts, res->start);
  for (int i = 0, first = 1; i < a->np; ++i)
    if (!ident[i]) printf("%s\"%.*s\"", first ? "" : ",", (int)strcspn(a->spec[i], "="), a->spec[i]), first = 0;
  printf("],\"converged\":%s,\"stop\":\"%s\",\"criteria\":\"%s\"", res->converged ? "true" : "false",
         grit_fit_stop_string(res->stop),
         res->stop == GRIT_FIT_STOP_SMALL_DECREASE ? "an accepted step with lambda <= 1 lowered the cost by less than tol*cost"
         : res->stop == GRIT_FIT_STOP_SMALL_STEP ? "an accepted step with lambda <= 1 changed no log-parameter by more than sqrt(tol)"
         : res->stop == GRIT_FIT_STOP_MAX_ITERS  ? "not converged: --max-iters reached"
                                                 : "not converged: no step lowered the cost (try a larger --tol)");
}

/* What one run of the command holds: the model, the files of --data and --validate (this process's
 * share lo..hi-1 of each) and their trajectories. */
typedef struct fit_run {
  grit_model *m, *mfit;
  char **dpaths, **vpaths;
  int nd, nvd, dlo, dhi, vlo, vhi;
  fit_table *dtab, *vtab;
  grit_timed_trajectory *dtr, *vtr;
  double *dctrl, *vctrl, uconst[64];
  grit_param params[MAX_PARAMS];
} fit_run;

/* The model (MJCF or URDF, by content) and the fit's step settings from it; 0 or an exit status. */
static int load_model(fit_args *a, const fit_mpi *mp, grit_model **m) {
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_info info;
  memset(&info, 0, sizeof info);
  grit_load_options lo = grit_default_load_options();
  lo.mjcf.timestep = lo.urdf.model.timestep = a->dt;
  lo.urdf.package_path = a->package_path;
  const grit_status s = grit_load_file(a->model, &lo, m, &info, msg);
  if (!a->quiet && mp->rank == 0)
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) cli_warning("%s", info.warnings[i]);
  int rc = 0;
  if (s != GRIT_OK) rc = cli_error("%s", msg);
  else {
    a->opt.settings = info.settings;
    if (a->opt.settings.rel_tol > 1e-8) a->opt.settings.rel_tol = 1e-8; /* smooth rollouts in the parameters */
    if (a->contact >= 0) a->opt.settings.contact_model = (grit_contact_model)a->contact;
  }
  grit_mjcf_info_free(&info);
  return rc;
}

/* The parameters, --ctrl, the files and trajectories of this process; 0 or an exit status (on every
 * process when any one of them failed: a bad file must stop all before the collective fit). */
static int load_inputs(fit_args *a, const fit_mpi *mp, fit_run *r) {
  int rc = 0;
  for (int i = 0; !rc && i < a->np; ++i) rc = resolve(r->m, a->spec[i], &r->params[i]);
  const int nu = grit_model_nu(r->m);
  if (!rc && a->ctrl && nu > 64) rc = cli_error("--ctrl: at most 64 controls");
  if (!rc && a->ctrl && nu > 0) rc = parse_ctrl(a->ctrl, nu, r->uconst);
  if (!rc) rc = gather(a->data, a->ndata, mp, &r->dpaths, &r->nd, &r->dlo, &r->dhi);
  if (!rc) rc = gather(a->validate, a->nvalidate, mp, &r->vpaths, &r->nvd, &r->vlo, &r->vhi);
  if (!rc && r->nd < mp->size) rc = cli_error("fewer trajectories than MPI processes");
  const double *u = a->ctrl ? r->uconst : NULL;
  if (!rc) rc = load_trajs(r->dpaths, r->dlo, r->dhi, r->m, u, &r->dtab, &r->dtr, &r->dctrl);
  if (!rc) rc = load_trajs(r->vpaths, r->vlo, r->vhi, r->m, u, &r->vtab, &r->vtr, &r->vctrl);
  if (mp->size > 1) {
    double bad = rc ? 1.0 : 0.0;
    fit_mpi_allreduce_sum(&bad, 1, NULL);
    if (bad > 0 && !rc) rc = CLI_EXIT_MODEL;
    a->opt.allreduce_sum = fit_mpi_allreduce_sum;
    a->opt.traj_offset = r->dlo, a->opt.traj_total = r->nd;
  }
  return rc;
}

/* The held-out trajectories rolled out with the fitted values, the errors as JSON (and a line on stderr). */
static int validate(const fit_args *a, const fit_mpi *mp, fit_run *r, const double *val) {
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_model_with_params(r->m, r->params, val, a->np, &r->mfit, msg) != GRIT_OK) return cli_error("%s", msg);
  int qa = -1;
  for (int j = 0; j < grit_model_njoint(r->m) && qa < 0; ++j)
    if (grit_model_joint_type(r->m, j) == GRIT_JOINT_FREE) qa = grit_model_joint_qposadr(r->m, j);
  double acc[6] = {0};
  for (int i = 0; qa >= 0 && i < r->vhi - r->vlo; ++i) validate_one(r->mfit, &a->opt.settings, &r->vtr[i], qa, acc);
  if (mp->size > 1) fit_mpi_allreduce_sum(acc, 6, NULL);
  if (mp->rank != 0) return 0;
  const double w = a->width > 0 ? a->width : model_width(r->m), n = acc[4] > 0 ? acc[4] : 1;
  printf(",\"validation\":{\"trajectories\":%d,\"failed\":%d,\"width\":%.6g,\"position_error\":%.6g,"
         "\"position_error_pct\":%.4g,\"rotation_error_deg\":%.4g,\"final_position_error_pct\":%.4g,"
         "\"final_rotation_error_deg\":%.4g}",
         (int)acc[4], (int)acc[5], w, acc[0] / n, w > 0 ? 100 * acc[0] / n / w : NAN, acc[1] / n * 180 / GRIT_FIT_PI,
         w > 0 ? 100 * acc[2] / n / w : NAN, acc[3] / n * 180 / GRIT_FIT_PI);
  if (!a->quiet)
    fprintf(stderr,
            "grit: validation on %d trajectories (open loop): position error %.4g %% of the width %.4g m, "
            "rotation %.3g deg (final sample: %.4g %%, %.3g deg)\n",
            (int)acc[4], 100 * acc[0] / n / (w > 0 ? w : 1), w, acc[1] / n * 180 / GRIT_FIT_PI, 100 * acc[2] / n / (w > 0 ? w : 1),
            acc[3] / n * 180 / GRIT_FIT_PI);
  return 0;
}

/* The fit, its JSON and the validation; 0 or an exit status. */
static int fit_and_report(fit_args *a, const fit_mpi *mp, fit_run *r) {
  double val[MAX_PARAMS], std[MAX_PARAMS];
  int ident[MAX_PARAMS];
  char msg[GRIT_MESSAGE_SIZE];
  memcpy(val, a->guess, sizeof val);
  grit_fit_result res;
  const grit_status s =
      grit_fit_timed(r->m, r->dtr, r->dhi - r->dlo, r->params, a->np, val, &a->opt, &res, std, NULL, ident, msg);
  if (s != GRIT_OK) return cli_error("fit failed (%s): %s", grit_status_string(s), msg);
  double rows = 0; /* the data's rows over every process */
  for (int i = 0; i < r->dhi - r->dlo; ++i) rows += r->dtab[i].rows;
  if (mp->size > 1) fit_mpi_allreduce_sum(&rows, 1, NULL);
  if (mp->rank == 0) print_fit(a, val, std, ident, &res, (int)rows);
  const int rc = a->nvalidate ? validate(a, mp, r, val) : 0;
  if (mp->rank == 0) printf("}\n");
  return rc;
}

static void fit_run_free(fit_run *r) {
  for (int i = 0; r->dtab && i < r->dhi - r->dlo; ++i) fit_table_free(&r->dtab[i]);
  for (int i = 0; r->vtab && i < r->vhi - r->vlo; ++i) fit_table_free(&r->vtab[i]);
  for (int i = 0; i < r->nd; ++i) free(r->dpaths[i]);
  for (int i = 0; i < r->nvd; ++i) free(r->vpaths[i]);
  free(r->dpaths), free(r->vpaths), free(r->dtab), free(r->vtab), free(r->dtr), free(r->vtr);
  free(r->dctrl), free(r->vctrl);
  grit_model_free(r->mfit);
  grit_model_free(r->m);
}

int grit_fit_command(int argc, char **argv) {
  fit_mpi mp;
  fit_mpi_begin(&argc, &argv, &mp);
  fit_args a;
  fit_run r;
  memset(&r, 0, sizeof r);
  int rc = parse(argc, argv, &a);
  if (rc == CLI_HELP) rc = 0;
  else if (!rc) {
    rc = load_model(&a, &mp, &r.m);
    if (!rc) rc = load_inputs(&a, &mp, &r);
    if (!rc) rc = fit_and_report(&a, &mp, &r);
  }
  fit_run_free(&r);
  free((void *)a.data), free((void *)a.validate);
  fit_mpi_end(&mp);
  return rc;
}
