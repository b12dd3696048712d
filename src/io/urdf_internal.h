/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_internal.h — the URDF loader's two halves: urdf_parse.cc reads the file with urdfdom (C++) into
 * the plain C description below; urdf.c checks the structure with line numbers (from an expat pre-scan),
 * orders and fuses the links as MuJoCo's URDF import does and builds the grit_model. */
#ifndef GRIT_URDF_INTERNAL_H
#define GRIT_URDF_INTERNAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { URDF_GEOM_BOX, URDF_GEOM_CYLINDER, URDF_GEOM_SPHERE, URDF_GEOM_MESH };
enum { URDF_JOINT_UNKNOWN, URDF_JOINT_REVOLUTE, URDF_JOINT_CONTINUOUS, URDF_JOINT_PRISMATIC, URDF_JOINT_FLOATING,
       URDF_JOINT_PLANAR, URDF_JOINT_FIXED };

typedef struct urdf_pose {
  double pos[3];
  double quat[4]; /* (w, x, y, z), from urdfdom's rpy */
} urdf_pose;

typedef struct urdf_geom {
  int type;          /* URDF_GEOM_* */
  double size[3];    /* box: full sizes; cylinder: radius, length; sphere: radius */
  double scale[3];   /* mesh */
  char *filename;    /* mesh, as written in the file */
  urdf_pose origin;
} urdf_geom;

typedef struct urdf_link {
  int has_inertial;
  urdf_pose inertial;                      /* the inertial frame in the link frame */
  double mass, ixx, ixy, ixz, iyy, iyz, izz; /* about the centre of mass, inertial frame axes */
  int ngeom;
  urdf_geom *geoms; /* the <collision> elements, in document order */
} urdf_link;

typedef struct urdf_joint {
  int type; /* URDF_JOINT_* */
  urdf_pose origin;
  double axis[3];
  int has_limit;
  double lower, upper, effort, velocity;
  int has_dynamics;
  double damping, friction;
} urdf_joint;

typedef struct urdf_robot {
  int nlink, njoint;
  urdf_link *links;   /* in the order of the names given to urdf_parse */
  urdf_joint *joints;
} urdf_robot;

/* Parses `size` bytes of URDF text with urdfdom and fills *robot (free with urdf_robot_free) with the
 * links and joints named in link_names / joint_names, in that order. Returns 0 on success; otherwise 1
 * with urdfdom's messages (joined by "; ") in msg, or 2 when out of memory. */
int urdf_parse(const char *data, size_t size, int nlink, const char *const *link_names, int njoint,
               const char *const *joint_names, urdf_robot **robot, char *msg, size_t msg_size);
void urdf_robot_free(urdf_robot *robot);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_URDF_INTERNAL_H */
