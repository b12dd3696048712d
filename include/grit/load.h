/* SPDX-License-Identifier: Apache-2.0 */
/* grit/load.h — loading a model file of either format, decided by its content (the root element
 * <mujoco> or <robot>), never by its name (docs/urdf.md).
 *
 *   grit_load_options o = grit_default_load_options();
 *   grit_model *m;  grit_mjcf_info info;  char msg[GRIT_MESSAGE_SIZE];
 *   if (grit_load_file("robot.urdf", &o, &m, &info, msg) != GRIT_OK) { puts(msg); return 1; } */
#ifndef GRIT_LOAD_H
#define GRIT_LOAD_H

#include "grit/mjcf.h"
#include "grit/urdf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum grit_file_format {
  GRIT_FORMAT_UNKNOWN = 0, /* unreadable, not XML, or another root element */
  GRIT_FORMAT_MJCF = 1,    /* root element <mujoco> */
  GRIT_FORMAT_URDF = 2     /* root element <robot> */
} grit_file_format;

typedef struct grit_load_options {
  grit_mjcf_load_options mjcf; /* for MJCF files */
  grit_urdf_load_options urdf; /* for URDF files (urdf.model: its timestep and contact overrides) */
} grit_load_options;

GRIT_API grit_load_options grit_default_load_options(void);
/* The same under the naming rule grit_<module>_default_<thing> (grit/defaults.h). */
GRIT_API grit_load_options grit_load_default_options(void);

/* The format of the file at `path`, from the name of its first element (a prolog, comments and a
 * DOCTYPE are skipped). */
GRIT_API grit_file_format grit_file_format_of(const char *path);

/* Loads an MJCF or URDF file by its content (options may be NULL: the defaults). Another root element
 * is GRIT_ERR_PARSE "file:line: the root element must be <mujoco> (MJCF) or <robot> (URDF)". Otherwise
 * as grit_mjcf_load_file_with or grit_urdf_load_file. */
GRIT_API grit_status grit_load_file(const char *path, const grit_load_options *options, grit_model **model,
                           grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_LOAD_H */
