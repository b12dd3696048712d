/* SPDX-License-Identifier: Apache-2.0 */
/* grit/urdf.h — loading models from URDF files (read by Debian's urdfdom), see docs/urdf.md.
 *
 *   grit_urdf_load_options o = grit_urdf_default_load_options();
 *   o.package_path = "/opt/ros/share";                    (for package:// mesh file names)
 *   grit_model *m;  grit_mjcf_info info;  char msg[GRIT_MESSAGE_SIZE];
 *   if (grit_urdf_load_file("arm.urdf", &o, &m, &info, msg) != GRIT_OK) { puts(msg); return 1; }
 *   ...  grit_mjcf_info_free(&info);  grit_model_free(m);
 *
 * The mapping follows MuJoCo's own URDF import: a body per link placed at its parent joint's origin,
 * the joint at the body origin with the URDF axis; fixed joints fuse the child into its parent (mass
 * properties summed, geometries and children re-attached with composed frames); the root link is welded
 * to the world (fused into it) unless floating_base is set; coordinates in MuJoCo's order (roots in
 * document order, each tree depth first, a link's children in the document order of their joints).
 * Collision geometry only (box, cylinder, sphere, STL/OBJ meshes as their convex hull); visuals are
 * ignored. Errors name the file and line of the element (urdfdom's own messages carry none). */
#ifndef GRIT_URDF_H
#define GRIT_URDF_H

#include "grit/mjcf.h"
#include "grit/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_urdf_load_options {
  grit_mjcf_load_options model; /* timestep and contact overrides, as for MJCF files; the defaults of the
                                   MJCF loader (and grit's step settings) apply where these are unset */
  const char *package_path;     /* directories (separated by ':') holding ROS packages, searched for
                                   package://PKG/PATH as DIR/PKG/PATH (or DIR/PATH when DIR's own name is
                                   PKG), before the directories of the environment variable
                                   ROS_PACKAGE_PATH; may be NULL */
  const char *mesh_dir;         /* directory for relative mesh file names; NULL: the URDF file's directory */
  int floating_base;            /* nonzero: a root link gets a free joint; default 0 (welded, as URDF means) */
  int motors;                   /* nonzero (default): a motor (gear 1) on every revolute, continuous and
                                   prismatic joint, its control limited to +-effort when effort > 0 */
  int lenient;                  /* nonzero: things grit cannot represent (DAE meshes) are
                                   warnings (dropped) instead of errors; default 0 */
} grit_urdf_load_options;

GRIT_API grit_urdf_load_options grit_urdf_default_load_options(void);

/* Loads the URDF file at `path` into a new model (*model, NULL on failure). `options` may be NULL for the
 * defaults; `info` (may be NULL) receives warnings, the model name (<robot name>), nq/nv/nu and the step
 * settings (no keyframes); `msg` (may be NULL) the reason of a failure, "file:line: ...":
 * GRIT_ERR_IO (cannot read the file or a mesh), GRIT_ERR_PARSE (not well-formed XML, a value urdfdom
 * refuses), GRIT_ERR_INVALID_MODEL (unknown link, cycle, two parents, a moving link without mass, ...),
 * GRIT_ERR_UNSUPPORTED (planar joints; mesh formats other than STL, OBJ, MSH unless lenient). */
GRIT_API grit_status grit_urdf_load_file(const char *path, const grit_urdf_load_options *options, grit_model **model,
                                grit_mjcf_info *info, char msg[GRIT_MESSAGE_SIZE]);

/* The same from `size` bytes of URDF text; `name` names it in messages (may be NULL); relative mesh
 * file names are read from options->mesh_dir (refused when it is NULL). */
GRIT_API grit_status grit_urdf_load_buffer(const char *data, size_t size, const char *name,
                                  const grit_urdf_load_options *options, grit_model **model, grit_mjcf_info *info,
                                  char msg[GRIT_MESSAGE_SIZE]);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_URDF_H */
