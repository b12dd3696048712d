/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_composite.h — MJCF's <composite> element (MuJoCo 2.2.2): expanded, while the body tree is read,
 * into the bodies, joints, geometries, sites, tendons, equality constraints and contact exclusions that
 * MuJoCo 2.2.2's compiler generates for it, with MuJoCo's names (docs/mjcf.md, Composite objects). */
#ifndef GRIT_MJCF_COMPOSITE_H
#define GRIT_MJCF_COMPOSITE_H

#include "mjcf_internal.h"

/* The <composite> n inside body `body` (0: the world); `in_frame`: it is inside a <frame> (an error). */
void mjcf_read_composite(mjcf_ctx *c, const mjcf_node *n, int body, int in_frame);

/* mjcf_parse.c's element defaults and attribute readers (MuJoCo's built-in defaults, which a composite's
 * elements start from instead of the file's default classes). */
void mjcf_joint_defaults(mjcf_joint *j);
void mjcf_read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j);
void mjcf_geom_defaults(mjcf_geom *g);
void mjcf_read_geom_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g);

#endif /* GRIT_MJCF_COMPOSITE_H */
