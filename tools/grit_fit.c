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

#include "grit/grit.h"
#include "grit_fit_data.h"
#include "grit_fit_mpi.h"

enum { EXIT_MODEL = 1, EXIT_USAGE = 2, MAX_PARAMS = 16 };
#define GRIT_FIT_PI 3.14159265358979323846

typedef struct fit_args {
  const char *model, *ctrl, *package_path;
  int help; /* --help: the usage on stdout, exit 0 */
  const char **data, **validate; /* the --data and --validate arguments */
  int ndata, nvalidate;
  const char *spec[MAX_PARAMS]; /* NAME[:WHICH] as given */
  double guess[MAX_PARAMS];
  int np, contact, quiet, cov_set;
  grit_fit_options opt;
  double dt, width;
} fit_args;

static int usage(const char *fmt, const char *what) {
  fprintf(stderr, "grit: usage error: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see grit --help)\n");
  return EXIT_USAGE;
}

static int fail(const char *fmt, const char *what) {
  fprintf(stderr, "grit: error: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return EXIT_MODEL;
}

static double number(const char *s, int *ok) {
  char *end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  *ok = end != s && *end == '\0' && isfinite(v);
  return v;
}

static int parse(int argc, char **argv, fit_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->opt = grit_default_fit_options();
  a->opt.coarse_points = 3; /* the command's defaults: a coarse stage, the sandwich covariance */
  a->opt.covariance = GRIT_FIT_COV_SANDWICH;
  a->data = calloc((size_t)argc, sizeof *a->data);
  a->validate = calloc((size_t)argc, sizeof *a->validate);
  if (!a->data || !a->validate) return usage("%s", "out of memory");
  for (int i = 2; i < argc; ++i) {
    const char *o = argv[i];
    if (o[0] != '-') {
      if (a->model) return usage("unexpected argument '%s'", o);
      a->model = o;
      continue;
    }
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      a->help = 1;
      return 0;
    }
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    if (!strcmp(o, "--reset")) {
      a->opt.fit_initial_states = 0;
      continue;
    }
    if (i + 1 >= argc) return usage("option '%s' needs a value", o);
    const char *v = argv[++i];
    int ok = 1;
    if (!strcmp(o, "--data")) {
      a->data[a->ndata++] = v;
    } else if (!strcmp(o, "--validate")) {
      a->validate[a->nvalidate++] = v;
    } else if (!strcmp(o, "--covariance")) {
      if (strcmp(v, "sandwich") && strcmp(v, "residual")) return usage("--covariance needs sandwich or residual, not '%s'", v);
      a->opt.covariance = strcmp(v, "sandwich") ? GRIT_FIT_COV_RESIDUAL : GRIT_FIT_COV_SANDWICH;
    } else if (!strcmp(o, "--tol") || !strcmp(o, "--huber") || !strcmp(o, "--span") || !strcmp(o, "--width") ||
               !strcmp(o, "--sigma-r") || !strcmp(o, "--sigma-w")) {
      const double x = number(v, &ok);
      const int zero_ok = !strcmp(o, "--huber");
      if (!ok || !(zero_ok ? x >= 0 : x > 0) || (!strcmp(o, "--span") && !(x > 1)))
        return usage("%s needs a positive number (--huber: >= 0, --span: > 1)", o);
      if (!strcmp(o, "--tol")) a->opt.tol = x;
      else if (!strcmp(o, "--huber")) a->opt.huber = x;
      else if (!strcmp(o, "--span")) a->opt.coarse_span = x;
      else if (!strcmp(o, "--width")) a->width = x;
      else if (!strcmp(o, "--sigma-r")) a->opt.orientation_sigma = x;
      else a->opt.angular_velocity_sigma = x;
    } else if (!strcmp(o, "--coarse") || !strcmp(o, "--threads") || !strcmp(o, "--starts")) {
      const double n = number(v, &ok);
      if (!ok || n < 1 || n > 64 || n != floor(n)) return usage("%s needs an integer from 1 to 64", o);
      if (!strcmp(o, "--coarse")) a->opt.coarse_points = (int)n;
      else if (!strcmp(o, "--starts")) a->opt.starts = (int)n;
      else a->opt.nthreads = (int)n;
    } else if (!strcmp(o, "--ctrl")) {
      a->ctrl = v;
    } else if (!strcmp(o, "--param")) {
      const char *eq = strchr(v, '=');
      if (!eq || eq == v) return usage("--param needs NAME[:WHICH]=GUESS, not '%s'", v);
      for (const char *c = v; c < eq; ++c)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) return usage("--param '%s': a name with a quote, backslash or control character", v);
      if (a->np == MAX_PARAMS) return usage("too many --param options at '%s' (at most 16)", v);
      a->guess[a->np] = number(eq + 1, &ok);
      if (!ok || !(a->guess[a->np] > 0)) return usage("--param needs a positive finite guess, not '%s'", v);
      a->spec[a->np++] = v;
    } else if (!strcmp(o, "--contact")) {
      static const char *const names[] = {"lagged", "similar", "sap"};
      for (int k = 0; k < 3; ++k)
        if (!strcmp(v, names[k])) a->contact = k;
      if (a->contact < 0) return usage("--contact needs lagged, similar or sap, not '%s'", v);
    } else if (!strcmp(o, "--package-path")) {
      a->package_path = v;
    } else if (!strcmp(o, "--dt")) {
      a->dt = number(v, &ok);
      if (!ok || !(a->dt > 0)) return usage("--dt needs a positive number, not '%s'", v);
    } else if (!strcmp(o, "--segment") || !strcmp(o, "--max-iters")) {
      const double n = number(v, &ok);
      const double lo = !strcmp(o, "--segment") ? 0 : 1;
      if (!ok || n < lo || n > 1e9 || n != floor(n)) return usage("%s needs an integer >= 1 (--segment: >= 0)", o);
      if (!strcmp(o, "--segment")) a->opt.segment_steps = (int)n;
      else a->opt.max_iters = (int)n;
    } else if (!strcmp(o, "--sigma-q") || !strcmp(o, "--sigma-v")) {
      const double s = number(v, &ok);
      if (!ok || !(s > 0)) return usage("%s needs a positive number", o);
      if (!strcmp(o, "--sigma-q")) a->opt.position_sigma = s;
      else a->opt.velocity_sigma = s;
    } else {
      return usage("unknown option '%s'", o);
    }
  }
  if (!a->model) return usage("%s needs a model file", "fit");
  if (!a->ndata) return usage("%s needs --data FILE.csv (or a directory or list file)", "fit");
  if (a->np == 0) return usage("%s needs at least one --param NAME=GUESS", "fit");
  return 0;
}

/* NAME[:WHICH] of a --param into a grit_param; 0 or an exit status. */
static int resolve(const grit_model *m, const char *spec, grit_param *p) {
  char name[64], which[192] = "";
  const size_t n = strcspn(spec, ":=");
  if (n >= sizeof name) return usage("unknown parameter in '%s'", spec);
  memcpy(name, spec, n);
  name[n] = '\0';
  if (spec[n] == ':') {
    const size_t w = strcspn(spec + n + 1, "=");
    if (w == 0 || w >= sizeof which) return usage("--param '%s' names no geometry or body after ':'", spec);
    memcpy(which, spec + n + 1, w);
    which[w] = '\0';
  }
  static const char *const kinds[] = {"friction", "stiffness", "dissipation", "mass", "tau_d", "inertia"};
  int kind = -1;
  for (int k = 0; k < 6; ++k)
    if (!strcmp(name, kinds[k])) kind = k;
  if (kind < 0) return usage("--param '%s': the name must be friction, stiffness, dissipation, tau_d, mass or inertia", spec);
  p->kind = (grit_param_kind)kind;
  p->index = -1;
  const int body = kind == GRIT_PARAM_MASS || kind == GRIT_PARAM_INERTIA;
  if (body && !which[0]) return usage("--param '%s': mass and inertia need :BODY", spec);
  if (which[0]) {
    int ok;
    const double idx = number(which, &ok);
    p->index = body ? grit_model_body_index(m, which) : grit_model_geom_index(m, which);
    if (p->index < 0 && ok && idx == floor(idx) && idx >= 0 && idx < 1e9) p->index = (int)idx;
    const int count = body ? grit_model_nbody(m) : grit_model_ngeom(m);
    if (p->index < (body ? 1 : 0) || p->index >= count) {
      fprintf(stderr, "grit: error: --param '%s': the model has no %s '%s'\n", spec, body ? "body" : "geometry", which);
      return EXIT_MODEL;
    }
  }
  return 0;
}

/* --ctrl: nu numbers; 0 or an exit status. */
static int parse_ctrl(const char *text, int nu, double *u) {
  int count = 0;
  for (const char *p = text; *p;) {
    char *end;
    while (*p == ' ' || *p == ',' || *p == '\t') ++p;
    if (!*p) break;
    const double x = strtod(p, &end);
    if (end == p || !isfinite(x)) return usage("--ctrl needs finite numbers, not '%s'", text);
    if (count < nu) u[count] = x;
    count++;
    p = end;
  }
  if (count != nu) {
    fprintf(stderr, "grit: usage error: --ctrl needs %d finite numbers (the model's nu) (see grit --help)\n", nu);
    return EXIT_USAGE;
  }
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
  if (!*tabs || !*trajs) return fail("%s", "out of memory");
  int rc = 0, maxrows = 0;
  for (int i = 0; !rc && i < n; ++i) {
    rc = fit_read_table(paths[lo + i], m, &(*tabs)[i]);
    if (!rc && (*tabs)[i].rows > maxrows) maxrows = (*tabs)[i].rows;
  }
  if (!rc && uconst && nu > 0) {
    if (!(*ctrl_store = malloc(sizeof(double) * (size_t)maxrows * nu + 1))) return fail("%s", "out of memory");
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

int grit_fit_command(int argc, char **argv) {
  fit_mpi mp;
  fit_mpi_begin(&argc, &argv, &mp);
  fit_args a;
  int rc = parse(argc, argv, &a);
  if (!rc && a.help) { /* the usage lines without their indentation */
    printf("usage: %s", GRIT_FIT_USAGE + 7);
    free((void *)a.data), free((void *)a.validate);
    fit_mpi_end(&mp);
    return 0;
  }
  grit_model *m = NULL, *mfit = NULL;
  char **dpaths = NULL, **vpaths = NULL;
  int nd = 0, nvd = 0, dlo = 0, dhi = 0, vlo = 0, vhi = 0;
  fit_table *dtab = NULL, *vtab = NULL;
  grit_timed_trajectory *dtr = NULL, *vtr = NULL;
  double *dctrl = NULL, *vctrl = NULL, uconst[64];
  char msg[GRIT_MESSAGE_SIZE];
  grit_mjcf_info info;
  memset(&info, 0, sizeof info);
  if (!rc) {
    grit_load_options lo = grit_default_load_options(); /* MJCF or URDF, by the file's content */
    lo.mjcf.timestep = lo.urdf.model.timestep = a.dt;
    lo.urdf.package_path = a.package_path;
    const grit_status s = grit_load_file(a.model, &lo, &m, &info, msg);
    if (!a.quiet && mp.rank == 0)
      for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) fprintf(stderr, "grit: warning: %s\n", info.warnings[i]);
    if (s != GRIT_OK) rc = fail("%s", msg);
    else {
      a.opt.settings = info.settings;
      if (a.opt.settings.rel_tol > 1e-8) a.opt.settings.rel_tol = 1e-8; /* smooth rollouts in the parameters */
      if (a.contact >= 0) a.opt.settings.contact_model = (grit_contact_model)a.contact;
    }
  }
  grit_mjcf_info_free(&info);
  grit_param params[MAX_PARAMS];
  for (int i = 0; !rc && i < a.np; ++i) rc = resolve(m, a.spec[i], &params[i]);
  const int nu = m ? grit_model_nu(m) : 0;
  if (!rc && a.ctrl && nu > 64) rc = fail("%s", "--ctrl: at most 64 controls");
  if (!rc && a.ctrl && nu > 0) rc = parse_ctrl(a.ctrl, nu, uconst);
  if (!rc) rc = gather(a.data, a.ndata, &mp, &dpaths, &nd, &dlo, &dhi);
  if (!rc) rc = gather(a.validate, a.nvalidate, &mp, &vpaths, &nvd, &vlo, &vhi);
  if (!rc && nd < mp.size) rc = fail("%s", "fewer trajectories than MPI processes");
  if (!rc) rc = load_trajs(dpaths, dlo, dhi, m, a.ctrl ? uconst : NULL, &dtab, &dtr, &dctrl);
  if (!rc) rc = load_trajs(vpaths, vlo, vhi, m, a.ctrl ? uconst : NULL, &vtab, &vtr, &vctrl);
  /* a failure on one process (a bad file) must stop all of them before the collective fit */
  if (mp.size > 1) {
    double bad = rc ? 1.0 : 0.0;
    fit_mpi_allreduce_sum(&bad, 1, NULL);
    if (bad > 0 && !rc) rc = EXIT_MODEL;
    a.opt.allreduce_sum = fit_mpi_allreduce_sum;
    a.opt.traj_offset = dlo, a.opt.traj_total = nd;
  }
  if (!rc) {
    double val[MAX_PARAMS], std[MAX_PARAMS];
    int ident[MAX_PARAMS];
    memcpy(val, a.guess, sizeof val);
    grit_fit_result res;
    const grit_status s = grit_fit_timed(m, dtr, dhi - dlo, params, a.np, val, &a.opt, &res, std, NULL, ident, msg);
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: fit failed (%s): %s\n", grit_status_string(s), msg);
      rc = EXIT_MODEL;
    } else {
      double rows = 0; /* the data's rows over every process */
      for (int i = 0; i < dhi - dlo; ++i) rows += dtab[i].rows;
      if (mp.size > 1) fit_mpi_allreduce_sum(&rows, 1, NULL);
      if (mp.rank == 0) print_fit(&a, val, std, ident, &res, (int)rows);
      if (a.nvalidate && grit_model_with_params(m, params, val, a.np, &mfit, msg) != GRIT_OK) rc = fail("%s", msg);
      int qa = -1;
      for (int j = 0; !rc && j < grit_model_njoint(m) && qa < 0; ++j)
        if (grit_model_joint_type(m, j) == GRIT_JOINT_FREE) qa = grit_model_joint_qposadr(m, j);
      double acc[6] = {0};
      for (int i = 0; !rc && qa >= 0 && i < vhi - vlo; ++i) validate_one(mfit, &a.opt.settings, &vtr[i], qa, acc);
      if (mp.size > 1 && a.nvalidate) fit_mpi_allreduce_sum(acc, 6, NULL);
      if (mp.rank == 0 && a.nvalidate) {
        const double w = a.width > 0 ? a.width : model_width(m), n = acc[4] > 0 ? acc[4] : 1;
        printf(",\"validation\":{\"trajectories\":%d,\"failed\":%d,\"width\":%.6g,\"position_error\":%.6g,"
               "\"position_error_pct\":%.4g,\"rotation_error_deg\":%.4g,\"final_position_error_pct\":%.4g,"
               "\"final_rotation_error_deg\":%.4g}",
               (int)acc[4], (int)acc[5], w, acc[0] / n, w > 0 ? 100 * acc[0] / n / w : NAN, acc[1] / n * 180 / GRIT_FIT_PI,
               w > 0 ? 100 * acc[2] / n / w : NAN, acc[3] / n * 180 / GRIT_FIT_PI);
        if (!a.quiet)
          fprintf(stderr,
                  "grit: validation on %d trajectories (open loop): position error %.4g %% of the width %.4g m, "
                  "rotation %.3g deg (final sample: %.4g %%, %.3g deg)\n",
                  (int)acc[4], 100 * acc[0] / n / (w > 0 ? w : 1), w, acc[1] / n * 180 / GRIT_FIT_PI, 100 * acc[2] / n / (w > 0 ? w : 1),
                  acc[3] / n * 180 / GRIT_FIT_PI);
      }
      if (mp.rank == 0) printf("}\n");
    }
  }
  for (int i = 0; dtab && i < dhi - dlo; ++i) fit_table_free(&dtab[i]);
  for (int i = 0; vtab && i < vhi - vlo; ++i) fit_table_free(&vtab[i]);
  for (int i = 0; i < nd; ++i) free(dpaths[i]);
  for (int i = 0; i < nvd; ++i) free(vpaths[i]);
  free(dpaths), free(vpaths), free(dtab), free(vtab), free(dtr), free(vtr), free(dctrl), free(vctrl);
  free((void *)a.data), free((void *)a.validate);
  grit_model_free(mfit);
  grit_model_free(m);
  fit_mpi_end(&mp);
  return rc;
}
