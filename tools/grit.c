/* SPDX-License-Identifier: Apache-2.0 */
/* grit — the command-line tool: simulate or time a model file (MJCF subset, docs/mjcf.md, or URDF,
 * docs/urdf.md: the file's root element decides; --package-path DIR resolves URDF package:// names).
 *
 *   grit sim MODEL.xml [--steps N] [--dt S] [--key NAME] [--qpos "..."] [--qvel "..."] [--ctrl "..."]
 *                      [--contact lagged|similar|sap] [--friction MU] [--stiffness K] [--dissipation D]
 *                      [--factor block|cholmod|dense] [--integrator euler|variational]
 *                      [--csv FILE] [--html FILE] [--quiet] [--lenient]
 *   grit bench MODEL.xml [--steps N] [--deriv-every K [--blocks]] [--phases] [the options of sim except --csv]
 *   grit deriv MODEL.xml [the state and model options of sim] [--json] [--check] [--fd-step H]
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
 * computed after every K-th step (the step excluded; with --blocks in block-sparse form, grit_step_derivatives_blocks,
 * reporting the blocks and their bytes); --phases turns on the step's phase timing and adds
 * the mean time per step of each phase (dynamics, collision, constraints, Newton's evaluations, assembly,
 * factorization, solves, line search) and the mean FLOP count of a factorization. deriv takes one step from the given state and
 * prints the step's Jacobians A = dx+/dx (2nv x 2nv, tangent space) and B = dx+/du (2nv x nu) as one JSON
 * object; --check adds central differences of the whole step (step 1e-6 or --fd-step H, scaled by each column's
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
#include "grit/load.h"
#include "grit/mjcf.h"
#include "grit_fit.h"
#include "grit/replay.h"
#include "grit_replay.h"

#include "cli.h"
#include "outfile.h"

enum { EXIT_MODEL = CLI_EXIT_MODEL, EXIT_USAGE = CLI_EXIT_USAGE };

#define SIM_USAGE                                                                                         \
  "       grit sim MODEL.xml [--steps N] [--dt S] [--key NAME] [--qpos \"...\"] [--qvel \"...\"]\n"      \
  "                          [--ctrl \"...\"] [--contact lagged|similar|sap] [--friction MU]\n"           \
  "                          [--stiffness K] [--dissipation D] [--factor block|cholmod|dense]\n"          \
  "                          [--integrator euler|variational|quasistatic] [--quasistatic] [--lenient]\n" \
  "                          [--hydroelastic E] [--explicit-gyroscopic]\n"                                  \
  "                          [--csv FILE] [--html FILE] [--package-path DIR] [--quiet]\n"
#define BENCH_USAGE \
  "       grit bench MODEL.xml [--steps N] [--deriv-every K [--blocks]] [--phases] [the options of sim except --csv,\n" \
  "                            --html]\n"
#define DERIV_USAGE \
  "       grit deriv MODEL.xml [the options of sim except --steps, --csv, --html] [--json] [--check]\n" \
  "                            [--fd-step H]\n"

static const char USAGE[] = SIM_USAGE BENCH_USAGE DERIV_USAGE GRIT_REPLAY_USAGE GRIT_FIT_USAGE
    "       grit COMMAND --help | grit --help | grit --version\n";

typedef struct args {
  const char *command, *model, *key, *qpos, *qvel, *ctrl, *csv, *html;
  const char *package_path; /* --package-path: URDF package:// mesh names */
  long steps, deriv_every;
  int contact; /* -1: from the file */
  int factor;  /* -1: the default; 0 dense LAPACK, 1 block-sparse, 2 CHOLMOD */
  int integrator; /* -1: the default (Euler); else a grit_integrator */
  int quiet, check, phases, json;
  int blocks; /* bench --blocks: time A, B in block-sparse form (grit_step_derivatives_blocks) */
  double fd_step; /* deriv --check: the central differences' step (default 1e-6) */
  grit_mjcf_load_options load;
} args;

static const char *const CONTACT_NAMES[] = {"lagged", "similar", "sap", NULL};
static const char *const FACTOR_NAMES[] = {"dense", "block", "cholmod", NULL};
static const char *const INTEGRATOR_NAMES[] = {"euler", "variational", "quasistatic", NULL};

/* The options of sim, bench and deriv (one table; each command leaves out what it does not take). */
static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->command = argv[1];
  a->steps = 1000;
  a->contact = -1;
  a->factor = -1;
  a->integrator = -1;
  a->fd_step = 1e-6;
  a->load = grit_mjcf_default_load_options();
  const int sim = !strcmp(a->command, "sim"), bench = !strcmp(a->command, "bench"), deriv = !strcmp(a->command, "deriv");
  cli_option options[40];
  int n = 0;
  options[n++] = (cli_option){.name = "--quiet", .kind = CLI_FLAG, .dest = &a->quiet, .value = 1};
  options[n++] = (cli_option){.name = "--dt", .kind = CLI_NUMBER, .dest = &a->load.timestep, .max = 1};
  options[n++] = (cli_option){.name = "--friction", .kind = CLI_NUMBER, .dest = &a->load.friction};
  options[n++] = (cli_option){.name = "--stiffness", .kind = CLI_NUMBER, .dest = &a->load.stiffness, .max = 1};
  options[n++] = (cli_option){.name = "--dissipation", .kind = CLI_NUMBER, .dest = &a->load.dissipation};
  options[n++] = (cli_option){.name = "--contact", .kind = CLI_CHOICE, .dest = &a->contact, .choices = CONTACT_NAMES};
  options[n++] = (cli_option){.name = "--factor", .kind = CLI_CHOICE, .dest = &a->factor, .choices = FACTOR_NAMES};
  options[n++] = (cli_option){.name = "--key", .kind = CLI_TEXT, .dest = &a->key};
  options[n++] = (cli_option){.name = "--integrator", .kind = CLI_CHOICE, .dest = &a->integrator, .choices = INTEGRATOR_NAMES};
  /* seed 002's quasistatic mode: --integrator quasistatic */
  options[n++] = (cli_option){.name = "--quasistatic", .kind = CLI_FLAG, .dest = &a->integrator, .value = GRIT_INTEGRATOR_QUASISTATIC};
  /* content grit does not simulate: warnings instead of errors */
  options[n++] = (cli_option){.name = "--lenient", .kind = CLI_FLAG, .dest = &a->load.lenient, .value = 1};
  options[n++] = (cli_option){.name = "--package-path", .kind = CLI_TEXT, .dest = &a->package_path};
  /* MuJoCo's Euler for free and ball bodies: gyroscopic terms explicit (docs/mjcf.md) */
  options[n++] = (cli_option){.name = "--explicit-gyroscopic", .kind = CLI_FLAG, .dest = &a->load.explicit_gyroscopic, .value = 1};
  /* every non-plane geometry compliant-hydroelastic with this modulus, Pa (docs/hydroelastic.md) */
  options[n++] = (cli_option){.name = "--hydroelastic", .kind = CLI_NUMBER, .dest = &a->load.hydro_modulus, .max = 1};
  options[n++] = (cli_option){.name = "--qpos", .kind = CLI_TEXT, .dest = &a->qpos};
  options[n++] = (cli_option){.name = "--qvel", .kind = CLI_TEXT, .dest = &a->qvel};
  options[n++] = (cli_option){.name = "--ctrl", .kind = CLI_TEXT, .dest = &a->ctrl};
  if (!deriv) options[n++] = (cli_option){.name = "--steps", .kind = CLI_INTEGER, .dest = &a->steps, .max = 1e9};
  if (sim) options[n++] = (cli_option){.name = "--csv", .kind = CLI_TEXT, .dest = &a->csv};
  if (sim) options[n++] = (cli_option){.name = "--html", .kind = CLI_TEXT, .dest = &a->html};
  if (bench) options[n++] = (cli_option){.name = "--phases", .kind = CLI_FLAG, .dest = &a->phases, .value = 1};
  if (bench)
    options[n++] = (cli_option){.name = "--deriv-every", .kind = CLI_INTEGER, .dest = &a->deriv_every, .min = 1, .max = 1e9};
  if (bench) options[n++] = (cli_option){.name = "--blocks", .kind = CLI_FLAG, .dest = &a->blocks, .value = 1};
  if (deriv) options[n++] = (cli_option){.name = "--check", .kind = CLI_FLAG, .dest = &a->check, .value = 1};
  /* stiff quasistatic scenes are linear over a narrow range only (docs/quasistatic.md, Derivatives) */
  if (deriv) options[n++] = (cli_option){.name = "--fd-step", .kind = CLI_NUMBER, .dest = &a->fd_step, .max = 1};
  if (deriv) options[n++] = (cli_option){.name = "--json", .kind = CLI_FLAG, .dest = &a->json, .value = 1}; /* JSON anyway */
  int rc = cli_parse(argc, argv, options, n, &a->model, sim ? SIM_USAGE : bench ? BENCH_USAGE : DERIV_USAGE);
  if (rc) return rc;
  if (!a->model) return cli_usage_error("%s needs a model file", a->command);
  if (a->blocks && !a->deriv_every) return cli_usage_error("--blocks times the Jacobians: it needs --deriv-every K");
  /* an output must not overwrite an input, nor the other output */
  if (!rc) rc = cli_check_output("--csv", a->csv, "the model file", a->model);
  if (!rc) rc = cli_check_output("--html", a->html, "the model file", a->model);
  if (!rc) rc = cli_check_output("--html", a->html, "the --csv file", a->csv);
  return rc;
}

/* Sets one state vector from the command line; 0 or an exit status. */
static int set_vector(grit_data *d, const char *what, const char *text, int n,
                      grit_status (*set)(grit_data *, const double *, int)) {
  double *v = calloc((size_t)n + 1, sizeof *v);
  if (!v) {
    return cli_error("out of memory");
  }
  int count = cli_numbers(text, v, n);
  int rc = 0;
  if (count < 0) {
    rc = cli_usage_error("%s: '%s' holds something that is not a finite number",
            what, text);
  } else if (count != n) {
    rc = cli_usage_error("%s needs %d numbers (the model's size), got %d", what, n,
            count);
  } else if (n > 0 && set(d, v, n) != GRIT_OK) {
    rc = cli_error("%s rejected: %s", what, grit_data_last_error(d));
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
  grit_load_options lo = grit_default_load_options(); /* MJCF or URDF, by the file's content */
  lo.mjcf = a->load;
  lo.urdf.model = a->load;
  lo.urdf.package_path = a->package_path;
  lo.urdf.lenient = a->load.lenient;
  grit_status s = grit_load_file(a->model, &lo, m, &info, msg);
  if (!a->quiet) {
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) cli_warning("%s", info.warnings[i]);
    if (info.nwarnings > GRIT_MJCF_MAX_WARNINGS)
      cli_warning("... and %d more", info.nwarnings - GRIT_MJCF_MAX_WARNINGS);
  }
  if (s != GRIT_OK) {
    grit_mjcf_info_free(&info);
    return cli_error("%s", msg);
  }
  int rc = 0;
  if (grit_data_create(*m, d) != GRIT_OK) {
    rc = cli_error("cannot create the simulation data");
  }
  grit_step_settings st = info.settings;
  if (a->contact >= 0) st.contact_model = (grit_contact_model)a->contact;
  if (a->factor == 0) st.dense_max_nv = grit_model_nv(*m); /* dense at this size */
  if (a->integrator >= 0) st.integrator = (grit_integrator)a->integrator;
  if (a->factor >= 1) st.dense_max_nv = 0, st.sparse_factor = a->factor == 2 ? GRIT_FACTOR_CHOLMOD : GRIT_FACTOR_BLOCK;
  if (!rc && grit_data_set_step_settings(*d, &st) != GRIT_OK) {
    rc = cli_error("step settings rejected: %s", grit_data_last_error(*d));
  }
  if (!rc && a->key) {
    int k = grit_mjcf_key_index(&info, a->key);
    if (k < 0) {
      rc = cli_usage_error("the model has no keyframe '%s'", a->key);
    } else if (grit_mjcf_apply_key(&info, k, *d) != GRIT_OK) {
      rc = cli_error("keyframe '%s' rejected: %s", a->key, grit_data_last_error(*d));
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
               int *newton_max, double *dtimes, long *nd, double *A, double *B, grit_jacobian_blocks *J,
               double phase_sum[10], grit_contact_diagnostics *diag, double *crit) {
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
      return cli_error("step %ld failed (%s): %s", k + 1, grit_status_string(s), grit_data_last_error(d));
    }
    if (times) times[k] = t1 - t0;
    if (dtimes && (k + 1) % a->deriv_every == 0) {
      double t2 = now();
      s = J ? grit_step_derivatives_blocks(d, J) : grit_step_derivatives(d, A, grit_model_nu(m) ? B : NULL, NULL, 0, NULL);
      if (s != GRIT_OK) {
        return cli_error("derivatives after step %ld failed: %s", k + 1, grit_data_last_error(d));
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
    if (crit) { /* per step, for the replay page's plots: t, Signorini, Coulomb, dissipation */
      double *c = crit + 4 * *done;
      c[0] = grit_data_time(d), c[1] = g.signorini_violation, c[2] = g.coulomb_violation;
      c[3] = g.dissipation_violation;
    }
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

/* The replay page's plots of seed 001's criteria per step (docs/contact.md), from run()'s table of
 * (t, Signorini, Coulomb, dissipation) rows. */
static void plot_criteria(grit_replay *rp, const double *crit, long n) {
  double *col = malloc(sizeof(double) * 4 * (size_t)(n + 1));
  if (!col) return;
  for (long k = 0; k < n; ++k)
    for (int j = 0; j < 4; ++j) col[j * n + k] = crit[4 * k + j];
  static const char *const title[3] = {"Signorini violation (max over contacts)", "Coulomb cone violation (max)",
                                       "Max. dissipation violation (max)"};
  static const char *const unit[3] = {"m", "N s", "J"};
  for (int j = 0; j < 3; ++j) {
    const grit_replay_series s = {NULL, col, col + (j + 1) * n, (int)n};
    grit_replay_add_plot(rp, title[j], "t (s)", unit[j], GRIT_REPLAY_TIME_AXIS, &s, 1);
  }
  free(col);
}

static int command_sim_or_bench(const args *a) {
  const int bench = !strcmp(a->command, "bench");
  grit_model *m;
  grit_data *d;
  int rc = prepare(a, &m, &d);
  FILE *csv = NULL;
  grit_outfile csv_out = {0}; /* renamed onto --csv only after a successful run (docs/errors.md) */
  char why[GRIT_MESSAGE_SIZE];
  double *times = NULL;
  if (!rc && a->csv) {
    if (grit_outfile_open(&csv_out, a->csv, why) != GRIT_OK) rc = cli_error("%s", why);
    csv = csv_out.f;
  }
  if (!rc && csv) {
    fprintf(csv, "t");
    for (int i = 0; i < grit_model_nq(m); ++i) fprintf(csv, ",q%d", i);
    for (int i = 0; i < grit_model_nv(m); ++i) fprintf(csv, ",v%d", i);
    fputc('\n', csv);
  }
  double *dtimes = NULL, *A = NULL, *B = NULL;
  grit_jacobian_blocks *J = NULL; /* --blocks: no dense A, B at all (at 640 objects A alone is 472 MB) */
  const size_t nx = 2 * (size_t)grit_model_nv(m) + (size_t)grit_model_na(m); /* x = (q, v, act) */
  if (!rc && bench && !(times = malloc(sizeof *times * (size_t)(a->steps + 1)))) {
    rc = cli_error("out of memory");
  }
  if (!rc && bench && a->deriv_every &&
      (!(dtimes = malloc(sizeof *dtimes * (size_t)(a->steps / a->deriv_every + 1))) ||
       (a->blocks ? grit_jacobian_blocks_create(m, &J) != GRIT_OK
                  : (!(A = malloc(sizeof *A * (nx * nx + 1))) ||
                     !(B = malloc(sizeof *B * (nx * (size_t)grit_model_nu(m) + 1))))))) {
    rc = cli_error("out of memory");
  }
  if (rc) {
    grit_outfile_abort(&csv_out);
    free(times), free(dtimes), free(A), free(B);
    grit_jacobian_blocks_free(J);
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
  double *crit = rp ? malloc(sizeof(double) * 4 * (size_t)(a->steps + 1)) : NULL;
  rc = run(a, d, csv, rp, times, &done, &newton_sum, &newton_max, dtimes, &nd, A, B, J,
           bench && a->phases ? phase_sum : NULL, &diag, crit);
  const double wall = now() - t0;
  if (rp && crit && !rc) plot_criteria(rp, crit, done);
  free(crit);
  if (a->html && !rc && (!rp || grit_replay_write_html(rp, a->html) != GRIT_OK)) /* only after a good run */
    rc = cli_error("--html %s: %s", a->html, rp ? grit_replay_last_error(rp) : "out of memory");
  grit_replay_free(rp);
  if (csv && !rc && grit_outfile_commit(&csv_out, why) != GRIT_OK) rc = cli_error("%s", why);
  grit_outfile_abort(&csv_out); /* a failed run: the temporary file goes, an existing --csv stays */
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
    if (a->deriv_every) /* the values' memory: the last fill's blocks, or the dense A and B */
      printf(",\"deriv_form\":\"%s\",\"deriv_bytes\":%.0f", J ? "blocks" : "dense",
             J ? (double)grit_jacobian_blocks_bytes(J) : 8.0 * (double)nx * (double)(nx + (size_t)grit_model_nu(m)));
    if (J && nd) printf(",\"deriv_blocks\":%d", grit_jacobian_blocks_count(J));
    if (a->phases && done) {
      static const char *const names[9] = {"dynamics", "collision", "constraints", "eval", "assembly",
                                           "factor",   "solve",     "linesearch",  "total"};
      printf(",\"phases_us\":{");
      for (int i = 0; i < 9; ++i) printf("%s\"%s\":%.6g", i ? "," : "", names[i], phase_sum[i] / (double)done);
      printf("},\"factor_flops\":%.6g", newton_sum ? phase_sum[9] / (double)newton_sum : 0.0);
    }
    printf("}\n");
  } else {
    printf("{\"steps\":%ld,\"nq\":%d,\"nv\":%d,\"nu\":%d,\"nbody\":%d,\"ngeom\":%d,\"mean_newton_iters\":%.6g,"
           "\"max_newton_iters\":%d,\"failed_steps\":%d,\"wall_s\":%.6g,\"step_us\":%.6g,"
           "\"signorini_violation_max\":%.6g,\"coulomb_violation_max\":%.6g,\"dissipation_violation_max\":%.6g}\n",
           done, grit_model_nq(m), grit_model_nv(m), grit_model_nu(m), grit_model_nbody(m), grit_model_ngeom(m),
           mean_newton, newton_max, failed, wall, done ? 1e6 * wall / (double)done : 0.0, diag.signorini_violation,
           diag.coulomb_violation, diag.dissipation_violation);
  }
  free(times), free(dtimes), free(A), free(B);
  grit_jacobian_blocks_free(J);
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
static int fd_step(const args *a, const double *q, const double *v, const double *act, const double *u,
                   const double *qref, double *out) {
  grit_model *m;
  grit_data *d;
  args b = *a;
  b.qpos = b.qvel = b.ctrl = b.key = NULL;
  b.quiet = 1;
  int rc = prepare(&b, &m, &d);
  if (rc) return rc;
  grit_step_settings st = grit_data_step_settings(d);
  st.rel_tol = 1e-10;
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), na = grit_model_na(m);
  if (grit_data_set_step_settings(d, &st) != GRIT_OK || grit_data_set_qpos(d, q, nq) != GRIT_OK ||
      grit_data_set_qvel(d, v, nv) != GRIT_OK || (nu && grit_data_set_ctrl(d, u, nu) != GRIT_OK) ||
      (na && grit_data_set_act(d, act, na) != GRIT_OK) || grit_step(d) != GRIT_OK) {
    rc = cli_error("a finite-difference step failed: %s", grit_data_last_error(d));
  } else {
    grit_position_difference(m, qref, grit_data_qpos(d), out);
    memcpy(out + nv, grit_data_qvel(d), sizeof(double) * (size_t)nv);
    if (na) memcpy(out + 2 * nv, grit_data_act(d), sizeof(double) * (size_t)na);
  }
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}

/* Central differences of the step for the columns of A and B; writes the relative Frobenius errors. */
static int check_jacobians(const args *a, const grit_model *m, const double *q0, const double *v0, const double *act0,
                           const double *u0, const double *qref, const double *A, const double *B, double *errA,
                           double *errB) {
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), na = grit_model_na(m),
            nx = 2 * nv + na;
  double *qp = malloc(sizeof(double) * (size_t)(nq + 1)), *vp = malloc(sizeof(double) * (size_t)(nv + 1));
  double *up = malloc(sizeof(double) * (size_t)(nu + 1)), *xp = malloc(sizeof(double) * (size_t)(nx + 1));
  double *xm = malloc(sizeof(double) * (size_t)(nx + 1)), *e = calloc((size_t)nv + 1, sizeof(double));
  double *ap = malloc(sizeof(double) * (size_t)(na + 1));
  double num[2] = {0, 0}, den[2] = {0, 0};
  int rc = (!qp || !vp || !up || !xp || !xm || !e || !ap) ? EXIT_MODEL : 0;
  for (int col = 0; !rc && col < nx + nu; ++col) {
    double h = a->fd_step;
    for (int sgn = -1; sgn <= 1 && !rc; sgn += 2) {
      memcpy(qp, q0, sizeof(double) * (size_t)nq);
      memcpy(vp, v0, sizeof(double) * (size_t)nv);
      if (na) memcpy(ap, act0, sizeof(double) * (size_t)na);
      if (nu) memcpy(up, u0, sizeof(double) * (size_t)nu);
      if (col < nv) {
        e[col] = sgn * h;
        grit_integrate_positions(m, qp, e, 1.0);
        e[col] = 0;
      } else if (col < 2 * nv) {
        h = a->fd_step * fmax(1.0, fabs(v0[col - nv]));
        vp[col - nv] += sgn * h;
      } else if (col < nx) {
        h = a->fd_step * fmax(1.0, fabs(act0[col - 2 * nv]));
        ap[col - 2 * nv] += sgn * h;
      } else {
        h = a->fd_step * fmax(1.0, fabs(u0[col - nx]));
        up[col - nx] += sgn * h;
      }
      rc = fd_step(a, qp, vp, ap, up, qref, sgn > 0 ? xp : xm);
    }
    for (int i = 0; !rc && i < nx; ++i) {
      const double fd = (xp[i] - xm[i]) / (2 * h), an = col < nx ? A[(size_t)i * nx + col] : B[(size_t)i * nu + col - nx];
      num[col >= nx] += (an - fd) * (an - fd);
      den[col >= nx] += fd * fd;
    }
  }
  *errA = den[0] > 0 ? sqrt(num[0] / den[0]) : sqrt(num[0]);
  *errB = den[1] > 0 ? sqrt(num[1] / den[1]) : sqrt(num[1]);
  free(qp), free(vp), free(up), free(xp), free(xm), free(e), free(ap);
  if (rc == EXIT_MODEL && !qp) cli_error("out of memory");
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
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m), na = grit_model_na(m),
            nx = 2 * nv + na; /* x = (q, v, act) */
  double *A = calloc((size_t)nx * nx + 1, sizeof(double)), *B = calloc((size_t)nx * nu + 1, sizeof(double));
  double *act0 = calloc((size_t)na + 1, sizeof(double));
  double *q0 = malloc(sizeof(double) * (size_t)(nq + 1)), *v0 = malloc(sizeof(double) * (size_t)(nv + 1));
  double *u0 = malloc(sizeof(double) * (size_t)(nu + 1)), *qref = malloc(sizeof(double) * (size_t)(nq + 1));
  if (!A || !B || !q0 || !v0 || !u0 || !qref || !act0) {
    rc = cli_error("out of memory");
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
    if (na) memcpy(act0, grit_data_act(d), sizeof(double) * (size_t)na);
    grit_status s = grit_step(d);
    if (s == GRIT_OK) s = grit_step_derivatives(d, A, nu ? B : NULL, NULL, 0, NULL);
    if (s != GRIT_OK) {
      rc = cli_error("%s: %s", grit_status_string(s), grit_data_last_error(d));
    }
    memcpy(qref, grit_data_qpos(d), sizeof(double) * (size_t)nq);
  }
  double errA = 0, errB = 0;
  if (!rc && a->check) rc = check_jacobians(a, m, q0, v0, act0, u0, qref, A, B, &errA, &errB);
  if (!rc) {
    printf("{\"nq\":%d,\"nv\":%d,\"nu\":%d,", nq, nv, nu);
    if (na) printf("\"na\":%d,", na);
    json_matrix("A", A, nx, nx);
    printf(",");
    json_matrix("B", B, nx, nu);
    if (a->check)
      printf(",\"check\":{\"fd_step\":%.6g,\"A_rel_err\":%.3g,\"B_rel_err\":%.3g}", a->fd_step, errA, errB);
    printf("}\n");
  }
  free(A), free(B), free(q0), free(v0), free(u0), free(qref), free(act0);
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* a closed stdout is an error to report, not a signal */
  if (argc < 2) {
    return cli_usage_error("no command");
  }
  const char *cmd = argv[1];
  int rc;
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    printf("usage: %s", USAGE + strspn(USAGE, " "));
    rc = 0;
  } else if (!strcmp(cmd, "--version")) {
    printf("grit %s\n", grit_version());
    rc = 0;
  } else if (!strcmp(cmd, "deriv")) {
    args a;
    rc = parse_args(argc, argv, &a);
    rc = rc == CLI_HELP ? 0 : rc ? rc : command_deriv(&a);
  } else if (!strcmp(cmd, "replay")) {
    rc = grit_cli_replay(argc, argv);
  } else if (!strcmp(cmd, "fit")) {
    rc = grit_fit_command(argc, argv);
  } else if (!strcmp(cmd, "sim") || !strcmp(cmd, "bench")) {
    args a;
    rc = parse_args(argc, argv, &a);
    rc = rc == CLI_HELP ? 0 : rc ? rc : command_sim_or_bench(&a);
  } else {
    rc = cli_usage_error("unknown command '%s'", cmd);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    return rc ? rc : cli_error("writing to stdout failed");
  }
  return rc;
}
