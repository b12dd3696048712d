/* SPDX-License-Identifier: Apache-2.0 */
/* scenes.h — the scenes of seed 000's test cases, built with grit's C API, shared by the examples and
 * the physics validation tests (so both run exactly the same model). Each returns a compiled model; on
 * failure the builder's message is copied into msg. */
#ifndef GRIT_EXAMPLES_SCENES_H
#define GRIT_EXAMPLES_SCENES_H

#include <stdio.h>

#include "grit/grit.h"
#include "outfile.h" /* src/: the library's safe output files */

/* ---------------------------------------------------------------------- the examples' plumbing */

/* The options every example takes: --model lagged|similar|sap, --dt S, --csv FILE. */
typedef struct scene_options {
  grit_contact_model model;
  double dt;
  const char *csv;
} scene_options;

/* Further options of one example: returns how many arguments it consumed at argv[i] (0: unknown). */
typedef int (*scene_extra_option)(int argc, char **argv, int i, void *ctx);

/* Parses argv into o (whose defaults stay where no option is given), with extra (may be NULL) for
 * the example's own options, described by extra_usage. dt must be in (0, dt_max]. Returns 0, or 2 after
 * a one-line usage error on stderr. */
int scene_parse_options(int argc, char **argv, double dt_max, scene_options *o, scene_extra_option extra, void *ctx,
                        const char *extra_usage);

/* Creates the data for m (built with status s, message msg) with o's contact model, and opens o's CSV
 * file with the given header if asked (csv->f; NULL without --csv): a temporary file (src/base/outfile.h)
 * that scene_csv_close renames onto the path. Returns 0, or 1 after a one-line error on stderr (m and the
 * data are then freed). */
int scene_start(const char *prog, grit_status s, const char *msg, grit_model **m, const scene_options *o,
                grit_data **d, grit_outfile *csv, const char *csv_header);

/* Finishes the CSV of scene_start: renamed into place when ok, removed otherwise (an existing file
 * stays as it was). Returns 0, or 1 after a one-line error on stderr. No-op without --csv. */
int scene_csv_close(const char *prog, grit_outfile *csv, int ok);

/* "lagged", "similar" or "sap". */
const char *scene_model_name(grit_contact_model model);

/* Section XI-B: a 0.5 kg steel sphere, 5 cm in diameter, 5 cm above a ground plane (its lowest point);
 * mu = 0.5, k = 1e7 N/m, d = 500 s/m, tau_d = 1e-3 s. qpos = sphere (pos, quat). */
#define SCENE_SPHERE_RADIUS 0.025
#define SCENE_SPHERE_MASS 0.5
#define SCENE_SPHERE_HEIGHT 0.05
#define SCENE_SPHERE_MU 0.5
grit_status scene_falling_sphere(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]);

/* Section XI-A: a 1 kg box with 5 cm sides on a conveyor belt (a plane on a 1e6 kg body on an actuated
 * slide joint along x); mu = 0.7, k = 1e7 N/m, d = 500 s/m, tau_d = 1e-3 s. qpos = belt x, box (pos,
 * quat); qvel = belt v, box (linear, angular); one control: the belt's motor force. */
#define SCENE_BELT_MASS 1e6
#define SCENE_BELT_AMPLITUDE 0.2
#define SCENE_BELT_FREQUENCY 1.0
#define SCENE_BOX_HALF 0.025
#define SCENE_BOX_MASS 1.0
#define SCENE_BOX_MU 0.7
grit_status scene_conveyor_belt(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]);

/* The belt's motor force for the step from t to t + dt, so that its velocity follows
 * A w sin(w t) (from rest): M A w (sin(w (t + dt)) - sin(w t)) / dt. */
double scene_conveyor_belt_force(double t, double dt);

/* Section XI-C: a rod (capsule) 0.5 m long, 1 cm in diameter, 0.3 kg, at 30 degrees to the ground
 * with its lower end touching it and leading the motion; mu = 2.3, k = 1e7 N/m, no dissipation
 * (d = 0, tau_d = 0), so the three models share the same compliant law. qpos = rod (pos, quat). Set
 * the horizontal velocity U0 = 10 m/s (+x) as the initial state. */
#define SCENE_ROD_LENGTH 0.5
#define SCENE_ROD_RADIUS 0.005
#define SCENE_ROD_MASS 0.3
#define SCENE_ROD_MU 2.3
#define SCENE_ROD_ANGLE_DEG 30.0
grit_status scene_sliding_rod(double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]);

/* The height above the ground of the rod's lowest surface point at configuration q. */
double scene_sliding_rod_clearance(const double *q);

/* Section XII-A: n_objects (40 in the paper) 10 cm spheres (0.524 kg) and 10 cm boxes (1 kg),
 * alternating, in four columns, dropped into an open 80 x 80 x 80 cm box (a floor and four walls);
 * mu = 1, k = 1e7 N/m, d = 10 s/m, tau_d = 1e-4 s. Each object is a free body; the first column
 * starts with a sphere, the next with a box, and so on; small deterministic offsets break symmetry. */
grit_status scene_clutter(int n_objects, double dt, grit_model **m, char msg[GRIT_MESSAGE_SIZE]);

#endif
