/* grit — the command-line tool: simulate or time a model file (MJCF subset, docs/mjcf.md).
 *
 *   grit sim MODEL.xml [--steps N] [--dt S] [--key NAME] [--qpos "..."] [--qvel "..."] [--ctrl "..."]
 *                      [--contact lagged|similar|sap] [--friction MU] [--stiffness K] [--dissipation D]
 *                      [--factor block|cholmod|dense] [--integrator euler|variational]
 *                      [--hydroelastic E]
 *                      [--csv FILE] [--html FILE] [--quiet]
 *   grit bench MODEL.xml [--steps N] [--deriv-every K] [--phases] [the options of sim except --csv]
 *   grit deriv MODEL.xml [the state and model options of sim] [--json] [--check]
 *   grit fit MODEL.xml --data FILE.csv --param NAME[:WHICH]=GUESS ... (tools/grit_fit.c)
 *   grit replay MODEL.xml --csv TRAJ.csv -o OUT.html [...]   (tools/grit_replay.c)
 *
 * sim runs N steps (default 1000) from the model's reference state, or from a keyframe, then the
 * given qpos/qvel/ctrl (the control is held constant). The CSV has the header t,q0..,v0.. and one row
 * for the initial state and one per step, numbers with 17 significant digits; --html writes the run as
 * one replay page (3-D view, contact forces, plots: docs/viewer.md); --factor picks the factorization of the
 * Newton Hessian (grit_step_settings: block-sparse, the default; CHOLMOD; dense LAPACK). The last line on stdout
 * is one JSON object with the step count, sizes, Newton iteration statistics and timing. bench prints
 * the median time per step instead, and with --deriv-every K the median time of the Jacobians A and B
 * computed after every K-th step (the step excluded); --phases turns on the step's phase timing and adds
 * the mean time per step of each phase (dynamics, collision, constraints, Newton's evaluations, assembly,
 * factorization, solves, line search) and the mean FLOP count of a factorization. deriv takes one step from the given state and
 * prints the step's Jacobians A = dx+/dx (2nv x 2nv, tangent space) and B = dx+/du (2nv x nu) as one JSON
 * object; --check adds central differences of the whole step (step 1e-6, scaled by each column's
 * magnitude; both solved to rel_tol 1e-10) and their relative Frobenius errors. Exit status: 0 success,
 * 1 model or runtime error, 2 usage error; each error is one line on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "grit_fit.h"
#include "grit/replay.h"
#include "grit_replay.h"

enum { EXIT_MODEL = 1, EXIT_USAGE = 2 };

static const char USAGE[] =
    "usage: grit sim MODEL.xml [--steps N] [--dt S] [--key NAME] [--qpos \"...\"] [--qvel \"...\"]\n"
    "                          [--ctrl \"...\"] [--contact lagged|similar|sap] [--friction MU]\n"
    "                          [--stiffness K] [--dissipation D] [--factor block|cholmod|dense]\n"
    "                          [--integrator euler|variational] [--hydroelastic E]\n"
    "                          [--csv FILE] [--html FILE] [--quiet]\n"
    "       grit bench MODEL.xml [--steps N] [--deriv-every K] [--phases] [the options of sim except --csv]\n"
    "       grit deriv MODEL.xml [the options of sim except --steps and --csv] [--json] [--check]\n"
    GRIT_REPLAY_USAGE
    GRIT_FIT_USAGE
    "       grit --help | --version\n";

typedef struct args {
  const char *command, *model, *key, *qpos, *qvel, *ctrl, *csv, *html;
  long steps, deriv_every;
  int contact; /* -1: from the file */
  int factor;  /* -1: the default; 0 dense LAPACK, 1 block-sparse, 2 CHOLMOD */
  int integrator; /* -1: the default (Euler); else a grit_integrator */
  int quiet, check, phases;
  grit_mjcf_load_options load;
} args;

static int usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "grit: usage error: ");
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (see grit --help)\n");
  return EXIT_USAGE;
}

/* A finite number; *ok = 0 otherwise. */
static double number(const char *s, int *ok) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  *ok = end != s && *end == '\0' && isfinite(v);
  return v;
}

/* Whitespace-separated numbers into out (at most n); the count, or -1 for a bad token. */
static int numbers(const char *s, double *out, int n) {
  int count = 0;
  while (*s) {
    char *end = NULL;
    while (*s == ' ' || *s == '\t' || *s == ',') ++s;
    if (!*s) break;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || (*end && *end != ' ' && *end != '\t' && *end != ',')) return -1;
    if (count < n) out[count] = v;
    count++;
    s = end;
  }
  return count;
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->command = argv[1];
  a->steps = 1000;
  a->contact = -1;
  a->factor = -1;
  a->integrator = -1;
  a->load = grit_mjcf_default_load_options();
  for (int i = 2; i < argc; ++i) {
    const char *o = argv[i];
    if (o[0] != '-') {
      if (a->model) return usage_error("unexpected argument '%s'", o);
      a->model = o;
      continue;
    }
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    if (!strcmp(o, "--phases") && !strcmp(a->command, "bench")) {
      a->phases = 1;
      continue;
    }
    if (!strcmp(a->command, "deriv") && (!strcmp(o, "--json") || !strcmp(o, "--check"))) {
      if (!strcmp(o, "--check")) a->check = 1; /* --json: the output is JSON in any case */
      continue;
    }
    if (i + 1 >= argc) return usage_error("option '%s' needs a value", o);
    const char *v = argv[++i];
    int ok = 1;
    if (!strcmp(o, "--deriv-every") && !strcmp(a->command, "bench")) {
      double n = number(v, &ok);
      if (!ok || n < 1 || n > 1e9 || n != floor(n)) return usage_error("--deriv-every needs an integer >= 1, not '%s'", v);
      a->deriv_every = (long)n;
    } else if (!strcmp(o, "--steps") && strcmp(a->command, "deriv")) {
      double n = number(v, &ok);
      if (!ok || n < 0 || n > 1e9 || n != floor(n)) return usage_error("--steps needs an integer in [0, 1e9], not '%s'", v);
      a->steps = (long)n;
    } else if (!strcmp(o, "--dt")) {
      a->load.timestep = number(v, &ok);
      if (!ok || !(a->load.timestep > 0)) return usage_error("--dt needs a positive number, not '%s'", v);
    } else if (!strcmp(o, "--friction")) {
      a->load.friction = number(v, &ok);
      if (!ok || a->load.friction < 0) return usage_error("--friction needs a number >= 0, not '%s'", v);
    } else if (!strcmp(o, "--stiffness")) {
      a->load.stiffness = number(v, &ok);
      if (!ok || !(a->load.stiffness > 0)) return usage_error("--stiffness needs a positive number, not '%s'", v);
    } else if (!strcmp(o, "--dissipation")) {
      a->load.dissipation = number(v, &ok);
      if (!ok || a->load.dissipation < 0) return usage_error("--dissipation needs a number >= 0, not '%s'", v);
    } else if (!strcmp(o, "--hydroelastic")) { /* docs/hydroelastic.md */
      a->load.hydro_modulus = number(v, &ok);
      if (!ok || !(a->load.hydro_modulus > 0)) return usage_error("--hydroelastic needs a modulus > 0 (Pa), not '%s'", v);
    } else if (!strcmp(o, "--contact")) {
      static const char *const names[] = {"lagged", "similar", "sap"};
      for (int k = 0; k < 3; ++k)
        if (!strcmp(v, names[k])) a->contact = k;
      if (a->contact < 0) return usage_error("--contact needs lagged, similar or sap, not '%s'", v);
    } else if (!strcmp(o, "--factor")) {
      static const char *const names[] = {"dense", "block", "cholmod"};
      for (int k = 0; k < 3; ++k)
        if (!strcmp(v, names[k])) a->factor = k;
      if (a->factor < 0) return usage_error("--factor needs block, cholmod or dense, not '%s'", v);
    } else if (!strcmp(o, "--integrator")) {
      static const char *const names[] = {"euler", "variational"};
      for (int k = 0; k < 2; ++k)
        if (!strcmp(v, names[k])) a->integrator = k;
      if (a->integrator < 0) return usage_error("--integrator needs euler or variational, not '%s'", v);
    } else if (!strcmp(o, "--key")) {
      a->key = v;
    } else if (!strcmp(o, "--qpos")) {
      a->qpos = v;
    } else if (!strcmp(o, "--qvel")) {
      a->qvel = v;
    } else if (!strcmp(o, "--ctrl")) {
      a->ctrl = v;
    } else if (!strcmp(o, "--csv") && !strcmp(a->command, "sim")) {
      a->csv = v;
    } else if (!strcmp(o, "--html") && !strcmp(a->command, "sim")) {
      a->html = v;
    } else {
      return usage_error("unknown option '%s'", o);
    }
  }
  if (!a->model) return usage_error("%s needs a model file", a->command);
  return 0;
}

/* Sets one state vector from the command line; 0 or an exit status. */
static int set_vector(grit_data *d, const char *what, const char *text, int n,
                      grit_status (*set)(grit_data *, const double *, int)) {
  double *v = calloc((size_t)n + 1, sizeof *v);
  if (!v) {
    fprintf(stderr, "grit: error: out of memory\n");
    return EXIT_MODEL;
  }
  int count = numbers(text, v, n);
  int rc = 0;
  if (count < 0) {
    fprintf(stderr, "grit: usage error: %s: '%s' holds something that is not a finite number (see grit --help)\n",
            what, text);
    rc = EXIT_USAGE;
  } else if (count != n) {
    fprintf(stderr, "grit: usage error: %s needs %d numbers (the model's size), got %d (see grit --help)\n", what, n,
            count);
    rc = EXIT_USAGE;
  } else if (n > 0 && set(d, v, n) != GRIT_OK) {
    fprintf(stderr, "grit: error: %s rejected: %s\n", what, grit_data_last_error(d));
    rc = EXIT_MODEL;
  }
  free(v);
  return rc;
}

/* Loads the model and prepares data at the requested initial state; 0 or an exit status. */
static int prepare(const args *a, grit_model **m, grit_data **d) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  *m = NULL;
  *d = NULL;
  grit_status s = grit_mjcf_load_file_with(a->model, &a->load, m, &info, msg);
  if (!a->quiet) {
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) fprintf(stderr, "grit: warning: %s\n", info.warnings[i]);
    if (info.nwarnings > GRIT_MJCF_MAX_WARNINGS)
      fprintf(stderr, "grit: warning: ... and %d more\n", info.nwarnings - GRIT_MJCF_MAX_WARNINGS);
  }
  if (s != GRIT_OK) {
    fprintf(stderr, "grit: error: %s\n", msg);
    grit_mjcf_info_free(&info);
    return EXIT_MODEL;
  }
  int rc = 0;
  if (grit_data_create(*m, d) != GRIT_OK) {
    fprintf(stderr, "grit: error: cannot create the simulation data\n");
    rc = EXIT_MODEL;
  }
  grit_step_settings st = info.settings;
  if (a->contact >= 0) st.contact_model = (grit_contact_model)a->contact;
  if (a->factor == 0) st.dense_max_nv = grit_model_nv(*m); /* dense at this size */
  if (a->integrator >= 0) st.integrator = (grit_integrator)a->integrator;
  if (a->factor >= 1) st.dense_max_nv = 0, st.sparse_factor = a->factor == 2 ? GRIT_FACTOR_CHOLMOD : GRIT_FACTOR_BLOCK;
  if (!rc && grit_data_set_step_settings(*d, &st) != GRIT_OK) {
    fprintf(stderr, "grit: error: step settings rejected: %s\n", grit_data_last_error(*d));
    rc = EXIT_MODEL;
  }
  if (!rc && a->key) {
    int k = grit_mjcf_key_index(&info, a->key);
    if (k < 0) {
      fprintf(stderr, "grit: usage error: the model has no keyframe '%s' (see grit --help)\n", a->key);
      rc = EXIT_USAGE;
    } else if (grit_mjcf_apply_key(&info, k, *d) != GRIT_OK) {
      fprintf(stderr, "grit: error: keyframe '%s' rejected: %s\n", a->key, grit_data_last_error(*d));
      rc = EXIT_MODEL;
    }
  }
  if (!rc && a->qpos) rc = set_vector(*d, "--qpos", a->qpos, grit_model_nq(*m), grit_data_set_qpos);
  if (!rc && a->qvel) rc = set_vector(*d, "--qvel", a->qvel, grit_model_nv(*m), grit_data_set_qvel);
  if (!rc && a->ctrl) rc = set_vector(*d, "--ctrl", a->ctrl, grit_model_nu(*m), grit_data_set_ctrl);
  grit_mjcf_info_free(&info);
  return rc;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void csv_row(FILE *f, const grit_data *d, int nq, int nv) {
  fprintf(f, "%.17g", grit_data_time(d));
  const double *q = grit_data_qpos(d), *v = grit_data_qvel(d);
  for (int i = 0; i < nq; ++i) fprintf(f, ",%.17g", q[i]);
  for (int i = 0; i < nv; ++i) fprintf(f, ",%.17g", v[i]);
  fputc('\n', f);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Runs the steps (sim and bench); the times of the steps go to times[] when not NULL, and with
 * --deriv-every K the times of the Jacobians after every K-th step to dtimes[] (*nd of them). */
static int run(const args *a, grit_data *d, FILE *csv, grit_replay *rp, double *times, long *done, long *newton_sum,
               int *newton_max, double *dtimes, long *nd, double *A, double *B, double phase_sum[10],
               grit_contact_diagnostics *diag) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m);
  *done = 0;
  if (nd) *nd = 0;
  *newton_sum = 0;
  *newton_max = 0;
  if (csv) csv_row(csv, d, nq, nv);
  if (rp && grit_replay_add_data(rp, d, 0) != GRIT_OK) rp = NULL;
  for (long k = 0; k < a->steps; ++k) {
    double t0 = now();
    grit_status s = grit_step(d);
    double t1 = now();
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: step %ld failed (%s): %s\n", k + 1, grit_status_string(s), grit_data_last_error(d));
      return EXIT_MODEL;
    }
    if (times) times[k] = t1 - t0;
    if (dtimes && (k + 1) % a->deriv_every == 0) {
      double t2 = now();
      s = grit_step_derivatives(d, A, grit_model_nu(m) ? B : NULL, NULL, 0, NULL);
      if (s != GRIT_OK) {
        fprintf(stderr, "grit: error: derivatives after step %ld failed: %s\n", k + 1, grit_data_last_error(d));
        return EXIT_MODEL;
      }
      dtimes[(*nd)++] = now() - t2;
    }
    grit_step_stats st;
    grit_data_step_stats(d, &st);
    *newton_sum += st.newton_iters;
    if (st.newton_iters > *newton_max) *newton_max = st.newton_iters;
    grit_contact_diagnostics g; /* seed 001's criteria: maxima over the run */
    grit_data_step_diagnostics(d, &g);
    diag->signorini_violation = fmax(diag->signorini_violation, g.signorini_violation);
    diag->coulomb_violation = fmax(diag->coulomb_violation, g.coulomb_violation);
    diag->dissipation_violation = fmax(diag->dissipation_violation, g.dissipation_violation);
    if (phase_sum) { /* with the step's timing on: sums of the phases, and of FLOPs per factorization */
      const double p[10] = {st.time_dynamics, st.time_collision, st.time_constraints, st.time_eval,
                            st.time_assembly, st.time_factor,   st.time_solve,       st.time_linesearch,
                            st.time_total,    st.factor_flops};
      for (int i = 0; i < 10; ++i) phase_sum[i] += p[i];
    }
    ++*done;
    if (csv) csv_row(csv, d, nq, nv);
    if (rp && grit_replay_add_data(rp, d, 1) != GRIT_OK) rp = NULL; /* reported when writing */
  }
  return 0;
}

static int command_sim_or_bench(const args *a) {
  const int bench = !strcmp(a->command, "bench");
  grit_model *m;
  grit_data *d;
  int rc = prepare(a, &m, &d);
  FILE *csv = NULL;
  double *times = NULL;
  if (!rc && a->csv && !(csv = fopen(a->csv, "w"))) {
    fprintf(stderr, "grit: error: cannot write %s: %s\n", a->csv, strerror(errno));
    rc = EXIT_MODEL;
  }
  if (!rc && csv) {
    fprintf(csv, "t");
    for (int i = 0; i < grit_model_nq(m); ++i) fprintf(csv, ",q%d", i);
    for (int i = 0; i < grit_model_nv(m); ++i) fprintf(csv, ",v%d", i);
    fputc('\n', csv);
  }
  double *dtimes = NULL, *A = NULL, *B = NULL;
  const size_t nx = 2 * (size_t)grit_model_nv(m);
  if (!rc && bench && !(times = malloc(sizeof *times * (size_t)(a->steps + 1)))) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (!rc && bench && a->deriv_every &&
      (!(dtimes = malloc(sizeof *dtimes * (size_t)(a->steps / a->deriv_every + 1))) ||
       !(A = malloc(sizeof *A * (nx * nx + 1))) || !(B = malloc(sizeof *B * (nx * (size_t)grit_model_nu(m) + 1))))) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (rc) {
    if (csv) fclose(csv);
    free(times), free(dtimes), free(A), free(B);
    grit_data_free(d);
    grit_model_free(m);
    return rc;
  }
  long done, newton_sum, nd = 0;
  int newton_max;
  const double t0 = now();
  grit_replay *rp = NULL;
  if (a->html && grit_replay_create(m, &rp) == GRIT_OK) grit_replay_set_title(rp, a->model);
  double phase_sum[10] = {0};
  if (bench && a->phases) {
    grit_step_settings ss = grit_data_step_settings(d);
    ss.timing = 1;
    grit_data_set_step_settings(d, &ss);
  }
  grit_contact_diagnostics diag = {0};
  rc = run(a, d, csv, rp, times, &done, &newton_sum, &newton_max, dtimes, &nd, A, B, bench && a->phases ? phase_sum : NULL,
           &diag);
  const double wall = now() - t0;
  if (a->html && (!rp || grit_replay_write_html(rp, a->html) != GRIT_OK)) {
    fprintf(stderr, "grit: error: --html %s: %s\n", a->html, rp ? grit_replay_last_error(rp) : "out of memory");
    if (!rc) rc = EXIT_MODEL;
  }
  grit_replay_free(rp);
  if (csv && (fclose(csv) != 0) && !rc) {
    fprintf(stderr, "grit: error: writing %s failed\n", a->csv);
    rc = EXIT_MODEL;
  }
  const double mean_newton = done ? (double)newton_sum / (double)done : 0.0;
  const int failed = rc == EXIT_MODEL && done < a->steps;
  if (bench) {
    double median = 0, mean = 0;
    if (done) {
      for (long k = 0; k < done; ++k) mean += times[k];
      mean /= (double)done;
      qsort(times, (size_t)done, sizeof *times, cmp_double);
      median = done % 2 ? times[done / 2] : 0.5 * (times[done / 2 - 1] + times[done / 2]);
    }
    double dmedian = 0;
    if (nd) {
      qsort(dtimes, (size_t)nd, sizeof *dtimes, cmp_double);
      dmedian = nd % 2 ? dtimes[nd / 2] : 0.5 * (dtimes[nd / 2 - 1] + dtimes[nd / 2]);
    }
    printf("{\"steps\":%ld,\"nq\":%d,\"nv\":%d,\"step_us\":%.6g,\"mean_step_us\":%.6g,\"mean_newton_iters\":%.6g,"
           "\"max_newton_iters\":%d,\"failed_steps\":%d",
           done, grit_model_nq(m), grit_model_nv(m), 1e6 * median, 1e6 * mean, mean_newton, newton_max, failed);
    if (a->deriv_every) printf(",\"deriv_us\":%.6g,\"deriv_samples\":%ld", 1e6 * dmedian, nd);
    if (a->phases && done) {
      static const char *const names[9] = {"dynamics", "collision", "constraints", "eval", "assembly",
                                           "factor",   "solve",     "linesearch",  "total"};
      printf(",\"phases_us\":{");
      for (int i = 0; i < 9; ++i) printf("%s\"%s\":%.6g", i ? "," : "", names[i], phase_sum[i] / (double)done);
      printf("},\"factor_flops\":%.6g", newton_sum ? phase_sum[9] / (double)newton_sum : 0.0);
    }
    printf("}\n");
  } else {
    printf("{\"steps\":%ld,\"nq\":%d,\"nv\":%d,\"mean_newton_iters\":%.6g,\"max_newton_iters\":%d,"
           "\"failed_steps\":%d,\"wall_s\":%.6g,\"step_us\":%.6g,\"signorini_violation_max\":%.6g,"
           "\"coulomb_violation_max\":%.6g,\"dissipation_violation_max\":%.6g}\n",
           done, grit_model_nq(m), grit_model_nv(m), mean_newton, newton_max, failed, wall,
           done ? 1e6 * wall / (double)done : 0.0, diag.signorini_violation, diag.coulomb_violation,
           diag.dissipation_violation);
  }
  free(times), free(dtimes), free(A), free(B);
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}

/* Prints a row-major r x c matrix as a JSON array of rows. */
static void json_matrix(const char *name, const double *x, int r, int c) {
  printf("\"%s\":[", name);
  for (int i = 0; i < r; ++i) {
    printf("%s[", i ? "," : "");
    for (int j = 0; j < c; ++j) printf("%s%.17g", j ? "," : "", x[(size_t)i * c + j]);
    printf("]");
  }
  printf("]");
}

/* One step from the prepared state: x+ relative to qref in the tangent space into out (2 nv). */
static int fd_step(const args *a, const double *q, const double *v, const double *u, const double *qref, double *out) {
  grit_model *m;
  grit_data *d;
  args b = *a;
  b.qpos = b.qvel = b.ctrl = b.key = NULL;
  b.quiet = 1;
  int rc = prepare(&b, &m, &d);
  if (rc) return rc;
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-10;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  if (grit_data_set_step_settings(d, &st) != GRIT_OK || grit_data_set_qpos(d, q, nq) != GRIT_OK ||
      grit_data_set_qvel(d, v, nv) != GRIT_OK || (nu && grit_data_set_ctrl(d, u, nu) != GRIT_OK) ||
      grit_step(d) != GRIT_OK) {
    fprintf(stderr, "grit: error: a finite-difference step failed: %s\n", grit_data_last_error(d));
    rc = EXIT_MODEL;
  } else {
    grit_position_difference(m, qref, grit_data_qpos(d), out);
    memcpy(out + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
  }
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}

/* Central differences of the step for the columns of A and B; writes the relative Frobenius errors. */
static int check_jacobians(const args *a, const grit_model *m, const double *q0, const double *v0, const double *u0,
                           const double *qref, const double *A, const double *B, double *errA, double *errB) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *qp = malloc(sizeof(double) * (size_t)(nq + 1)), *vp = malloc(sizeof(double) * (size_t)(nv + 1));
  double *up = malloc(sizeof(double) * (size_t)(nu + 1)), *xp = malloc(sizeof(double) * (size_t)(nx + 1));
  double *xm = malloc(sizeof(double) * (size_t)(nx + 1)), *e = calloc((size_t)nv + 1, sizeof(double));
  double num[2] = {0, 0}, den[2] = {0, 0};
  int rc = (!qp || !vp || !up || !xp || !xm || !e) ? EXIT_MODEL : 0;
  for (int col = 0; !rc && col < nx + nu; ++col) {
    double h = 1e-6;
    for (int sgn = -1; sgn <= 1 && !rc; sgn += 2) {
      memcpy(qp, q0, sizeof(double) * (size_t)nq);
      memcpy(vp, v0, sizeof(double) * (size_t)nv);
      if (nu) memcpy(up, u0, sizeof(double) * (size_t)nu);
      if (col < nv) {
        e[col] = sgn * h;
        grit_integrate_positions(m, qp, e, 1.0);
        e[col] = 0;
      } else if (col < nx) {
        h = 1e-6 * fmax(1.0, fabs(v0[col - nv]));
        vp[col - nv] += sgn * h;
      } else {
        h = 1e-6 * fmax(1.0, fabs(u0[col - nx]));
        up[col - nx] += sgn * h;
      }
      rc = fd_step(a, qp, vp, up, qref, sgn > 0 ? xp : xm);
    }
    for (int i = 0; !rc && i < nx; ++i) {
      const double fd = (xp[i] - xm[i]) / (2 * h), an = col < nx ? A[(size_t)i * nx + col] : B[(size_t)i * nu + col - nx];
      num[col >= nx] += (an - fd) * (an - fd);
      den[col >= nx] += fd * fd;
    }
  }
  *errA = den[0] > 0 ? sqrt(num[0] / den[0]) : sqrt(num[0]);
  *errB = den[1] > 0 ? sqrt(num[1] / den[1]) : sqrt(num[1]);
  free(qp), free(vp), free(up), free(xp), free(xm), free(e);
  if (rc == EXIT_MODEL && !qp) fprintf(stderr, "grit: error: out of memory\n");
  return rc;
}

static int command_deriv(const args *a) {
  grit_model *m;
  grit_data *d;
  int rc = prepare(a, &m, &d);
  if (rc) {
    grit_data_free(d);
    grit_model_free(m);
    return rc;
  }
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), nx = 2 * nv;
  double *A = calloc((size_t)nx * nx + 1, sizeof(double)), *B = calloc((size_t)nx * nu + 1, sizeof(double));
  double *q0 = malloc(sizeof(double) * (size_t)(nq + 1)), *v0 = malloc(sizeof(double) * (size_t)(nv + 1));
  double *u0 = malloc(sizeof(double) * (size_t)(nu + 1)), *qref = malloc(sizeof(double) * (size_t)(nq + 1));
  if (!A || !B || !q0 || !v0 || !u0 || !qref) {
    fprintf(stderr, "grit: error: out of memory\n");
    rc = EXIT_MODEL;
  }
  if (!rc && a->check) { /* the nominal step solved as tightly as the finite differences */
    grit_step_settings st = grit_data_step_settings(d);
    st.rel_tol = 1e-10;
    grit_data_set_step_settings(d, &st);
  }
  if (!rc) {
    memcpy(q0, grit_data_qpos(d), sizeof(double) * (size_t)nq);
    memcpy(v0, grit_data_qvel(d), sizeof(double) * (size_t)nv);
    if (nu) memcpy(u0, grit_data_ctrl(d), sizeof(double) * (size_t)nu);
    grit_status s = grit_step(d);
    if (s == GRIT_OK) s = grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL);
    if (s != GRIT_OK) {
      fprintf(stderr, "grit: error: %s: %s\n", grit_status_string(s), grit_data_last_error(d));
      rc = EXIT_MODEL;
    }
    memcpy(qref, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  }
  double errA = 0, errB = 0;
  if (!rc && a->check) rc = check_jacobians(a, m, q0, v0, u0, qref, A, B, &errA, &errB);
  if (!rc) {
    printf("{\"nq\":%d,\"nv\":%d,\"nu\":%d,", nq, nv, nu);
    json_matrix("A", A, nx, nx);
    printf(",");
    json_matrix("B", B, nx, nu);
    if (a->check) printf(",\"check\":{\"fd_step\":1e-06,\"A_rel_err\":%.3g,\"B_rel_err\":%.3g}", errA, errB);
    printf("}\n");
  }
  free(A), free(B), free(q0), free(v0), free(u0), free(qref);
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* a closed stdout is an error to report, not a signal */
  if (argc < 2) {
    fprintf(stderr, "grit: usage error: no command (see grit --help)\n");
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  int rc;
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    fputs(USAGE, stdout);
    rc = 0;
  } else if (!strcmp(cmd, "--version")) {
    puts("grit 0.1.0");
    rc = 0;
  } else if (!strcmp(cmd, "deriv")) {
    args a;
    rc = parse_args(argc, argv, &a);
    if (!rc) rc = command_deriv(&a);
  } else if (!strcmp(cmd, "replay")) {
    rc = grit_cli_replay(argc, argv);
  } else if (!strcmp(cmd, "fit")) {
    rc = grit_fit_command(argc, argv);
  } else if (!strcmp(cmd, "sim") || !strcmp(cmd, "bench")) {
    args a;
    rc = parse_args(argc, argv, &a);
    if (!rc) rc = command_sim_or_bench(&a);
  } else {
    rc = usage_error("unknown command '%s'", cmd);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (!rc) fprintf(stderr, "grit: error: writing to stdout failed\n");
    return rc ? rc : EXIT_MODEL;
  }
  return rc;
}
