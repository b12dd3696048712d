/* SPDX-License-Identifier: Apache-2.0 */
/* grit/replay.h — a replay of a trajectory as one self-contained HTML page (library grit_replay).
 *
 * The page shows the model's geometries in 3-D (three.js, inlined: it works offline from a file:// URL),
 * animated over the trajectory with play/pause, a time slider, a speed control and an orbit camera, the
 * contact forces as arrows, markers (a target, say), and SVG plots: the contact impulses and Newton
 * iterations per step (when the frames carry them) and any series the caller adds (iLQR cost and
 * regularization per iteration, for instance). Body poses are computed here by forward kinematics, so the
 * page does no dynamics. See docs/viewer.md.
 *
 *   grit_replay *r;  grit_replay_create(model, &r);
 *   grit_replay_add_data(r, d, 0);                       // the initial state
 *   for (...) { grit_step(d);  grit_replay_add_data(r, d, 1); }  // each state with its step's contacts
 *   if (grit_replay_write_html(r, "out.html") != GRIT_OK) puts(grit_replay_last_error(r));
 *   grit_replay_free(r);
 *
 * A grit_replay keeps a pointer to its model, which must outlive it. One grit_replay per thread. Link
 * with grit_replay (it carries three.js, about 650 KB, which is why it is not part of libgrit). */
#ifndef GRIT_REPLAY_H
#define GRIT_REPLAY_H

#include "grit/data.h"
#include "grit/geometry.h"
#include "grit/model.h"
#include "grit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_replay grit_replay;

/* One contact of a frame: drawn as an arrow at pos along force. */
typedef struct grit_replay_contact {
  int geom[2];            /* the pair's geometries (-1 when unknown); force acts on geom[1]'s body */
  double pos[3];          /* contact point, world, m */
  double force[3];        /* mean force over the step on geom[1]'s body, world, N (minus on geom[0]'s) */
  double normal_impulse;  /* normal impulse over the step, N s, >= 0 */
  double tangent_impulse; /* magnitude of the friction impulse over the step, N s */
} grit_replay_contact;

/* A fixed shape drawn in the scene that the simulation does not know (a target, a waypoint). */
typedef struct grit_replay_marker {
  const char *name;    /* label shown on hover (optional, copied) */
  grit_geom_type type; /* SPHERE, CAPSULE, BOX, CYLINDER or ELLIPSOID, sizes as in grit/geometry.h */
  double size[3];      /* m */
  double pos[3];       /* world, m */
  double quat[4];      /* world orientation (w,x,y,z); all zero means the identity */
  double rgba[4];      /* colour and opacity, each in [0, 1] */
} grit_replay_marker;

/* A series of a plot: n points (x[i], y[i]); non-finite y values leave gaps. */
typedef struct grit_replay_series {
  const char *name; /* legend entry (optional) */
  const double *x;  /* n abscissae (NULL: 0, 1, 2, ...) */
  const double *y;  /* n ordinates */
  int n;
} grit_replay_series;

/* Creates an empty replay of `model` (no frames). */
GRIT_API grit_status grit_replay_create(const grit_model *model, grit_replay **replay);
GRIT_API void grit_replay_free(grit_replay *replay); /* NULL is allowed */

/* The message describing the replay's last error ("" if none). */
GRIT_API const char *grit_replay_last_error(const grit_replay *replay);

/* The page's title (copied; default "grit replay"). */
GRIT_API grit_status grit_replay_set_title(grit_replay *replay, const char *title);

/* The colour of geometry `geom` (rgba each in [0, 1]); by default the world's geometries are grey and each
 * body's get a colour of a fixed palette by body index. */
GRIT_API grit_status grit_replay_set_geom_color(grit_replay *replay, int geom, const double rgba[4]);

/* Adds a marker (copied). */
GRIT_API grit_status grit_replay_add_marker(grit_replay *replay, const grit_replay_marker *marker);

/* Appends a frame: time t (s, not before the previous frame's), positions q (nq numbers, finite; ball and
 * free joints' quaternions are normalized), the contacts to draw (may be NULL when ncontacts is 0) and
 * the Newton iterations of the step that led here (-1: none or unknown). Computes the body poses. */
GRIT_API grit_status grit_replay_add_frame(grit_replay *replay, double t, const double *q, int nq,
                                  const grit_replay_contact *contacts, int ncontacts, int newton_iters);

/* Appends a frame at data's time and positions; with `after_step` nonzero also the contacts of data's last
 * step that carry an impulse (forces = impulses / the model's timestep) and its Newton iterations. `data`
 * must belong to the replay's model. */
GRIT_API grit_status grit_replay_add_data(grit_replay *replay, const grit_data *data, int after_step);

/* Flags of a plot: y on a log scale (non-positive values leave gaps); x is the trajectory's time (the page
 * then draws the current time as a cursor). */
enum { GRIT_REPLAY_LOG_Y = 1, GRIT_REPLAY_TIME_AXIS = 2 };

/* Adds a plot of nseries series (copied) against a common x axis, with GRIT_REPLAY_* flags. Plots appear in
 * the order they are added, after the automatic ones (contact impulses and Newton iterations over time,
 * when the frames carry them). */
GRIT_API grit_status grit_replay_add_plot(grit_replay *replay, const char *title, const char *xlabel, const char *ylabel,
                                 int flags, const grit_replay_series *series, int nseries);

/* Number of frames added so far. */
GRIT_API int grit_replay_nframes(const grit_replay *replay);

/* Writes the page to `path`: HTML with three.js, the viewer script, the scene as JSON (in a
 * <script type="application/json" id="grit-scene"> element) and the plots as inline SVG. Fails with
 * GRIT_ERR_INVALID_ARGUMENT when there is no frame, GRIT_ERR_IO when the file cannot be written. */
GRIT_API grit_status grit_replay_write_html(grit_replay *replay, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_REPLAY_H */
