/* SPDX-License-Identifier: Apache-2.0 */
/* grit/mjcf.h — loading models from MuJoCo's XML format (a subset of MJCF), see docs/mjcf.md.
 *
 *   grit_model *m;  grit_mjcf_info info;  char msg[GRIT_MESSAGE_SIZE];
 *   if (grit_mjcf_load_file("arm7.xml", &m, &info, msg) != GRIT_OK) { puts(msg); return 1; }
 *   for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) puts(info.warnings[i]);
 *   grit_data *d;  grit_data_create(m, &d);  grit_data_set_step_settings(d, &info.settings);
 *   grit_mjcf_apply_key(&info, grit_mjcf_key_index(&info, "home"), d);
 *   ...  grit_mjcf_info_free(&info);  grit_data_free(d);  grit_model_free(m);
 *
 * Supported: <mujoco model>, <compiler angle eulerseq inertiafromgeom inertiagrouprange autolimits
 * boundmass discardvisual coordinate="local">, <option timestep gravity integrator="Euler"> with
 * <flag gravity contact>, nested <default> classes for joint, geom and motor (general), bodies with
 * every orientation form (quat, axisangle, euler, xyaxes, zaxis), <inertial> (diaginertia or
 * fullinertia), <joint> (hinge, slide, ball, free), <freejoint>, <geom> (plane, sphere, capsule, box,
 * cylinder, ellipsoid, and mesh from an <asset><mesh vertex="..."> list), mass and inertia from geoms as
 * MuJoCo computes them, <motor> (and <general> with a fixed gain) on joints, <keyframe><key>, and grit's
 * contact parameters as <custom> numerics/texts named grit_*. Anything else is skipped with a warning
 * naming the element, the attribute and the line; malformed input is an error naming the file and line.
 *
 * Coordinates: bodies are added in document order, so q and v are ordered exactly as in MuJoCo.
 * A body without joints and without mass (an empty frame) is folded into its parent: its geometries
 * and children are re-attached with composed frames (grit requires every body to have mass). */
#ifndef GRIT_MJCF_H
#define GRIT_MJCF_H

#include <stddef.h>

#include "grit/model.h"
#include "grit/step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The first GRIT_MJCF_MAX_WARNINGS warnings are kept as messages; nwarnings counts all of them. */
#define GRIT_MJCF_MAX_WARNINGS 32
/* Longest model or keyframe name kept (longer names are truncated), including the terminating zero. */
#define GRIT_MJCF_NAME_SIZE 64

/* A <key> of the file's <keyframe>: a full state. Entries the key does not give have MuJoCo's defaults
 * (qpos0, zero velocity, zero control). */
typedef struct grit_mjcf_key {
  char name[GRIT_MJCF_NAME_SIZE]; /* "" if the key has no name */
  double time;                    /* s */
  double *qpos;                   /* nq numbers */
  double *qvel;                   /* nv numbers */
  double *ctrl;                   /* nu numbers (NULL when nu = 0) */
  double *act;                    /* na activations (NULL when na = 0; zero when the key has none) */
} grit_mjcf_key;

/* What a load found besides the model. Filled completely by the loaders (no initialization needed);
 * release with grit_mjcf_info_free before reusing it. */
typedef struct grit_mjcf_info {
  char model_name[GRIT_MJCF_NAME_SIZE];                  /* <mujoco model="..."> */
  int nwarnings;                                         /* all warnings */
  char warnings[GRIT_MJCF_MAX_WARNINGS][GRIT_MESSAGE_SIZE]; /* the first ones: "file:line: <elem> ..." */
  int nkey;                                              /* keyframes */
  grit_mjcf_key *keys;                                   /* nkey keyframes, in document order */
  int nq, nv, nu;                                        /* the sizes of the keys' arrays */
  int nbody; /* the file's bodies, the world included: MuJoCo's nbody (grit_model_nbody may be smaller, as
                bodies without joints and mass are folded into their parents) */
  grit_step_settings settings; /* grit's defaults, changed by grit_contact_model, grit_stiction_tolerance,
                                  grit_rel_tol and grit_max_newton_iters in <custom> */
  int na;                      /* the size of the keys' act arrays (actuator activations) */
} grit_mjcf_info;

/* Changes applied while loading (so the model is compiled once, with them). A field left at its value
 * from grit_mjcf_default_load_options() keeps what the file says. */
typedef struct grit_mjcf_load_options {
  double timestep;    /* s, > 0 to override <option timestep>; default 0 (from the file) */
  double friction;    /* >= 0 to set every geometry's friction; default -1 (from the file) */
  double stiffness;   /* > 0 to set every geometry's stiffness, N/m; default 0 (from the file) */
  double dissipation; /* >= 0 to set every geometry's dissipation, s/m; default -1 (from the file) */
  double tau_d;       /* >= 0 to set every geometry's SAP tau_d, s; default -1 (from the file) */
  int lenient;        /* 0 (default): content that changes the dynamics and that grit does not simulate
                         (tendons, equality constraints, actuators other than motors, ...) is an error
                         (GRIT_ERR_UNSUPPORTED) naming the element and line; 1: it is ignored with a
                         warning, and the model is the file's system without it */
  int explicit_actuation; /* nonzero: grit_options.explicit_actuation (MuJoCo's Euler treatment of the
                             actuators); default 0 */
  double hydro_modulus; /* > 0 to make every sphere, box, cylinder, ellipsoid, capsule and mesh
                           compliant-hydroelastic with this modulus, Pa (planes and height fields stay
                           rigid); default 0 (from the file: grit_hydro_modulus:GEOM numerics) */
  int explicit_gyroscopic; /* nonzero: grit_options.explicit_gyroscopic (MuJoCo's Euler treatment of ball
                              and free bodies' gyroscopic terms); default 0 */
} grit_mjcf_load_options;

GRIT_API grit_mjcf_load_options grit_mjcf_default_load_options(void);

/* Loads the MJCF file at `path` into a new model (*model, NULL on failure). `info` (may be NULL)
 * receives warnings, keyframes and step settings; `msg` (may be NULL) the reason of a failure:
 * GRIT_ERR_IO (cannot read), GRIT_ERR_PARSE (not well-formed XML, a bad number or attribute value),
 * GRIT_ERR_INVALID_MODEL (a rule of MJCF or grit broken), GRIT_ERR_UNSUPPORTED (a valid construct
 * grit cannot represent), GRIT_ERR_CAPACITY (a size limit: 64 MiB of text, nesting depth 100,
 * 100000 elements), GRIT_ERR_OUT_OF_MEMORY. */
GRIT_API grit_status grit_mjcf_load_file(const char *path, grit_model **model, grit_mjcf_info *info,
                                char msg[GRIT_MESSAGE_SIZE]);

/* The same from a zero-terminated string holding the XML text. */
GRIT_API grit_status grit_mjcf_load_string(const char *xml, grit_model **model, grit_mjcf_info *info,
                                  char msg[GRIT_MESSAGE_SIZE]);

/* The general form: `size` bytes of XML (zero bytes are errors, not terminators), `name` used in
 * messages (may be NULL), and load options (may be NULL for none). */
GRIT_API grit_status grit_mjcf_load_buffer(const char *data, size_t size, const char *name,
                                  const grit_mjcf_load_options *options, grit_model **model,
                                  grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]);

/* grit_mjcf_load_file with load options (may be NULL). */
GRIT_API grit_status grit_mjcf_load_file_with(const char *path, const grit_mjcf_load_options *options,
                                     grit_model **model, grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]);

/* Frees the keyframes of `info` and empties it (NULL is allowed). */
GRIT_API void grit_mjcf_info_free(grit_mjcf_info *info);

/* Index of the keyframe called `name`, or -1. */
GRIT_API int grit_mjcf_key_index(const grit_mjcf_info *info, const char *name);

/* Sets data's time, q, v and u to keyframe `key` of `info` (which must come from data's model). */
GRIT_API grit_status grit_mjcf_apply_key(const grit_mjcf_info *info, int key, grit_data *data);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_MJCF_H */
