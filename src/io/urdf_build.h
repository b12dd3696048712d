/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_build.h — the URDF loader's context: the file's structure from the pre-scan (urdf.c), the values
 * from urdfdom (urdf_parse.cc), and the compilation into a grit_model (urdf_build.c). */
#ifndef GRIT_URDF_BUILD_H
#define GRIT_URDF_BUILD_H

#include "grit/urdf.h"
#include "mjcf_internal.h"
#include "urdf_internal.h"

typedef struct urdf_link_info {
  const char *name;
  const mjcf_node *node;
  int parent_joint;               /* -1 for a root */
  int ncollision;
  const mjcf_node **collisions;   /* the <collision> elements, in document order */
} urdf_link_info;

typedef struct urdf_joint_info {
  const char *name;
  const mjcf_node *node;
  int type, parent, child; /* URDF_JOINT_*, link indices */
  const mjcf_node *mimic;   /* its <mimic>, or NULL */
  const char *mimic_joint;  /* <mimic joint>: this joint = multiplier * that joint + offset */
  double mimic_multiplier, mimic_offset;
  int grit_joint;           /* its joint in the builder; -1 when fused (fixed) or not built yet */
  int no_limit;             /* a revolute or prismatic joint without <limit>: unlimited, no effort limit */
} urdf_joint_info;

typedef struct urdf_ctx {
  const char *fname;
  const char *base_dir; /* relative mesh file names; NULL: refused */
  const char *file_dir; /* the URDF file's directory (NULL for a buffer): package:// names are looked for in
                           the package holding the file when the package path does not have them */
  char *msg;
  grit_status status; /* sticky: the first error */
  grit_mjcf_info *info;
  grit_urdf_load_options opt;
  mjcf_pool pool;
  int nlink, njoint;
  urdf_link_info *links;   /* document order */
  urdf_joint_info *joints; /* document order */
  urdf_robot *robot;       /* urdfdom's values, same order */
  char *mujoco;            /* MuJoCo's extension <robot><mujoco>: its <option> and <custom> as MJCF text
                              (malloc'd; NULL when absent) */
} urdf_ctx;

/* Errors ("file:line: ...", no line when line <= 0; the first one is kept) and warnings (into info). */
void urdf_fail(urdf_ctx *c, grit_status s, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void urdf_warn(urdf_ctx *c, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* R A R^T for the rotation R of quaternion quat (w, x, y, z); A itself for the identity. */
void urdf_rotate_inertia(double out[9], const double quat[4], const double A[9]);

/* The convex shape of a collision mesh (urdf_mesh.c): file resolved, read, scaled; nvert = 0 when the
 * lenient option drops a mesh format grit does not read. */
grit_status urdf_mesh_shape(urdf_ctx *c, const urdf_geom *g, int line, grit_shape *shape);
/* Its volume, centre and inertia about the centre per unit density, in the mesh frame, as MuJoCo weighs a
 * mesh (urdf_mesh.c); *volume = 0 when the lenient option drops the format. */
grit_status urdf_mesh_mass(urdf_ctx *c, const urdf_geom *g, int line, double *volume, double com[3], double I[9]);
/* The mass, centre (link frame) and inertia about it (link frame) of link k's collision geometries at
 * MuJoCo's density 1000, for a link without <inertial> (urdf_inertia.c); *mass = 0 when it has none. */
void urdf_link_geom_inertia(urdf_ctx *c, int k, double *mass, double com[3], double I[9]);
/* The line of link k's i-th collision geometry (its <geometry> child), for messages (urdf_build.c). */
int urdf_collision_line(const urdf_ctx *c, int k, int i);

/* Orders, fuses and builds the model (urdf_build.c). */
void urdf_build(urdf_ctx *c, grit_model **model);

#endif /* GRIT_URDF_BUILD_H */
