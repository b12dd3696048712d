/* SPDX-License-Identifier: Apache-2.0 */
/* replay_internal.h — the replay object, its output stream and plots, shared by replay.c (frames, scene
 * JSON, page) and replay_svg.c (plots). */
#ifndef GRIT_REPLAY_INTERNAL_H
#define GRIT_REPLAY_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "grit/replay.h"

/* Embedded at build time (cmake/embed_file.cmake): three.js and the viewer script. */
extern const unsigned char grit_replay_three_js[];
extern const size_t grit_replay_three_js_size;
extern const unsigned char grit_replay_viewer_js[];
extern const size_t grit_replay_viewer_js_size;

typedef struct replay_marker {
  char *name;
  grit_geom_type type;
  double size[3], pos[3], quat[4], rgba[4];
} replay_marker;

typedef struct replay_series {
  char *name;
  double *x, *y;
  int n;
} replay_series;

typedef struct replay_plot {
  char *title, *xlabel, *ylabel;
  int log_y;
  int time_axis; /* x is the trajectory's time: the page draws the current time as a cursor */
  int nseries;
  replay_series *series;
} replay_plot;

struct grit_replay {
  const grit_model *m;
  grit_data *d; /* for forward kinematics of the frames */
  int nbody, ngeom, nq;
  char *title;
  double *geom_rgba; /* 4 per geometry */
  int nframe, cap_frame;
  double *t;          /* nframe times */
  double *pose;       /* per frame, bodies 1..nbody-1: position and quaternion (w,x,y,z) */
  int *newton;        /* per frame: Newton iterations of the step that led to it, -1 if none */
  int *contact_begin; /* frame f's contacts are contacts[contact_begin[f] .. contact_begin[f+1]) */
  int ncontact, cap_contact;
  grit_replay_contact *contacts;
  double *pressure;          /* (npressure) hydroelastic patches' mean pressure, Pa (0: a point contact) */
  int npressure, cap_pressure; /* contacts past npressure have none (added by grit_replay_add_frame) */
  int nmarker, cap_marker;
  replay_marker *markers;
  int nplot, cap_plot;
  replay_plot *plots;
  char message[GRIT_MESSAGE_SIZE];
};

/* A FILE with a sticky error flag, so that writing can go on and be checked once at the end. */
typedef struct replay_out {
  FILE *f;
  int error;
} replay_out;

void replay_putc(replay_out *o, char c);
void replay_write(replay_out *o, const void *p, size_t n);
/* Text escaped for HTML and SVG (< > & " as entities): the one escaper of the page (replay_svg.c). */
void replay_html_text(replay_out *o, const char *s);
void replay_printf(replay_out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Plots: init allocates nseries empty series (0, or -1 when out of memory); set_series copies one series
 * (x NULL: 0, 1, 2, ...); clear frees everything (also after a failed init). */
int replay_plot_init(replay_plot *p, const char *title, const char *xlabel, const char *ylabel, int log_y, int time_axis,
                     int nseries);
int replay_plot_set_series(replay_plot *p, int i, const char *name, const double *x, const double *y, int n);
void replay_plot_clear(replay_plot *p);

/* Writes the page's plots as inline SVG: the automatic ones from the frames (contact impulses, Newton
 * iterations per step), then the caller's. */
void replay_write_plots(replay_out *o, const grit_replay *r);

#endif
