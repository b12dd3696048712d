/* SPDX-License-Identifier: Apache-2.0 */
/* grit replay — the `replay` command of the grit tool: a CSV trajectory to one HTML page (docs/viewer.md).
 *
 *   grit replay MODEL.xml --csv TRAJ.csv -o OUT.html [--title T] [--no-contacts] [--ctrl "..."]
 *               [--contact lagged|similar|sap] [--dt S] [--friction MU] [--stiffness K] [--dissipation D] [--quiet]
 *
 * The CSV's header names its columns: t, q0.. (required), v0.. and u0.. (optional), in any order; other
 * columns are ignored (grit sim --csv and the examples write such files). Every row is a frame. When the
 * rows carry velocities, the contacts drawn at row k+1 (arrows, impulse and Newton iteration plots) are
 * those of one step of the model from row k's state with row k's controls (u columns, else --ctrl, else
 * zero): the step is recomputed, so the model options must be the ones that made the trajectory. */
#define _POSIX_C_SOURCE 200809L
#include "grit_replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "grit/mjcf.h"
#include "grit/replay.h"

#include "cli.h"

enum { EXIT_MODEL = CLI_EXIT_MODEL, EXIT_USAGE = CLI_EXIT_USAGE };

typedef struct replay_args {
  const char *model, *csv, *out, *title, *ctrl, *package_path;
  int contact, no_contacts, quiet;
  grit_mjcf_load_options load;
} replay_args;

static const char *const CONTACT_NAMES[] = {"lagged", "similar", "sap", NULL};

static int parse(int argc, char **argv, replay_args *a) {
  memset(a, 0, sizeof *a);
  a->contact = -1;
  a->load = grit_mjcf_default_load_options();
  const cli_option options[] = {
      {.name = "--quiet", .kind = CLI_FLAG, .dest = &a->quiet, .value = 1},
      {.name = "--no-contacts", .kind = CLI_FLAG, .dest = &a->no_contacts, .value = 1},
      {.name = "--csv", .kind = CLI_TEXT, .dest = &a->csv},
      {.name = "--package-path", .kind = CLI_TEXT, .dest = &a->package_path},
      {.name = "--output", .alt = "-o", .kind = CLI_TEXT, .dest = &a->out},
      {.name = "--title", .kind = CLI_TEXT, .dest = &a->title},
      {.name = "--ctrl", .kind = CLI_TEXT, .dest = &a->ctrl},
      {.name = "--contact", .kind = CLI_CHOICE, .dest = &a->contact, .choices = CONTACT_NAMES},
      {.name = "--dt", .kind = CLI_NUMBER, .dest = &a->load.timestep, .max = 1},
      {.name = "--friction", .kind = CLI_NUMBER, .dest = &a->load.friction},
      {.name = "--stiffness", .kind = CLI_NUMBER, .dest = &a->load.stiffness, .max = 1},
      {.name = "--dissipation", .kind = CLI_NUMBER, .dest = &a->load.dissipation},
  };
  int rc = cli_parse(argc, argv, options, (int)(sizeof options / sizeof options[0]), &a->model, GRIT_REPLAY_USAGE);
  if (rc) return rc;
  if (!a->model) return cli_usage_error("replay needs a model file");
  if (!a->csv) return cli_usage_error("replay needs --csv TRAJ.csv");
  if (!a->out) return cli_usage_error("replay needs -o OUT.html");
  rc = cli_check_output("-o", a->out, "the model file", a->model);
  if (!rc) rc = cli_check_output("-o", a->out, "the --csv file", a->csv);
  return rc;
}

/* The model, its step settings (with --contact) and data; 0 or an exit status. */
static int load_model(const replay_args *a, grit_model **m, grit_data **d) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  *d = NULL;
  grit_load_options lo = grit_default_load_options(); /* MJCF or URDF, by the file's content */
  lo.mjcf = lo.urdf.model = a->load;
  lo.urdf.package_path = a->package_path;
  if (grit_load_file(a->model, &lo, m, &info, msg) != GRIT_OK) {
    grit_mjcf_info_free(&info);
    return cli_error("%s", msg);
  }
  if (!a->quiet)
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) cli_warning("%s", info.warnings[i]);
  grit_step_settings settings = info.settings;
  if (a->contact >= 0) settings.contact_model = (grit_contact_model)a->contact;
  grit_mjcf_info_free(&info);
  if (grit_data_create(*m, d) != GRIT_OK) return cli_error("out of memory");
  if (grit_data_set_step_settings(*d, &settings) != GRIT_OK)
    return cli_error("step settings rejected: %s", grit_data_last_error(*d));
  return 0;
}

/* Row k's frame: with velocities, the step from row k-1 recomputed for its contacts and Newton
 * iterations (*failed counts the steps that failed; their frames show no contacts). 0 or an exit status. */
static int add_row(const replay_args *a, const cli_table *tb, int k, const double *u_default, double *u, grit_data *d,
                   grit_replay *r, long *failed) {
  const grit_model *m = grit_data_model(d);
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nu = grit_model_nu(m);
  const double *q = tb->q + (size_t)k * nq;
  int stepped = 0;
  if (tb->has_v && !a->no_contacts && k > 0) {
    const double *pv = tb->v + (size_t)(k - 1) * nv;
    int ok = 1;
    for (int i = 0; i < nv; ++i) ok &= isfinite(pv[i]) != 0;
    for (int i = 0; i < nu; ++i) {
      u[i] = tb->has_u ? tb->u[(size_t)(k - 1) * nu + i] : u_default[i];
      if (!isfinite(u[i])) u[i] = u_default[i];
    }
    stepped = ok && grit_data_set_qpos(d, tb->q + (size_t)(k - 1) * nq, nq) == GRIT_OK &&
              grit_data_set_qvel(d, pv, nv) == GRIT_OK && (nu == 0 || grit_data_set_ctrl(d, u, nu) == GRIT_OK) &&
              grit_step(d) == GRIT_OK;
    *failed += !stepped;
  }
  grit_status s;
  if (stepped) { /* the frame at the row's own positions, with the recomputed step's contacts */
    grit_data_set_time(d, tb->t[k]);
    s = grit_data_set_qpos(d, q, nq);
    if (s == GRIT_OK) s = grit_replay_add_data(r, d, 1);
    else grit_replay_add_frame(r, tb->t[k], q, nq, NULL, 0, -1); /* sets the replay's message */
  } else {
    s = grit_replay_add_frame(r, tb->t[k], q, nq, NULL, 0, -1);
  }
  return s == GRIT_OK ? 0 : cli_error("%s: row %d: %s", a->csv, k + 1, grit_replay_last_error(r));
}

int grit_cli_replay(int argc, char **argv) {
  replay_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc == CLI_HELP ? 0 : rc;
  grit_model *m = NULL;
  grit_data *d = NULL;
  grit_replay *r = NULL;
  cli_table tb;
  memset(&tb, 0, sizeof tb);
  rc = load_model(&a, &m, &d);
  const int nq = rc ? 0 : grit_model_nq(m), nv = rc ? 0 : grit_model_nv(m), nu = rc ? 0 : grit_model_nu(m);
  double *u_default = calloc((size_t)nu + 1, sizeof(double)), *u = malloc(sizeof(double) * (size_t)(nu + 1));
  if (!rc && (!u_default || !u || grit_replay_create(m, &r) != GRIT_OK)) rc = cli_error("out of memory");
  if (!rc && a.ctrl && cli_numbers(a.ctrl, u_default, nu) != nu)
    rc = cli_usage_error("--ctrl needs the model's nu numbers: '%s'", a.ctrl);
  if (!rc) rc = cli_read_table(a.csv, nq, nv, nu, 1, &tb);
  if (!rc && !a.no_contacts && !tb.has_v && !a.quiet)
    cli_warning("%s has no velocity columns v0..v%d: no contacts are drawn", a.csv, nv - 1);
  long failed = 0;
  for (int k = 0; !rc && k < tb.rows; ++k) rc = add_row(&a, &tb, k, u_default, u, d, r, &failed);
  if (!rc && failed && !a.quiet)
    cli_warning("%ld recomputed steps failed; their frames show no contacts", failed);
  if (!rc) {
    char title[512];
    if (a.title) snprintf(title, sizeof title, "%s", a.title);
    else snprintf(title, sizeof title, "%s: %s", a.model, a.csv);
    if (grit_replay_set_title(r, title) != GRIT_OK || grit_replay_write_html(r, a.out) != GRIT_OK)
      rc = cli_error("%s", grit_replay_last_error(r));
  }
  if (!rc) printf("{\"frames\":%d,\"contacts\":%s}\n", grit_replay_nframes(r), tb.has_v && !a.no_contacts ? "true" : "false");
  cli_table_free(&tb);
  free(u_default), free(u);
  grit_replay_free(r);
  grit_data_free(d);
  grit_model_free(m);
  return rc;
}
