/* SPDX-License-Identifier: Apache-2.0 */
/* urdf_build.c — a URDF robot as a grit_model, mapped as MuJoCo's URDF import maps it (xml_urdf.cc with
 * the compiler's fusestatic, which that import turns on): a body per link, placed at its parent joint's
 * origin, with the joint at the body origin; links on fixed joints fused into their parent (mass
 * properties combined pairwise in depth-first order, as mjCModel::FuseStatic does, their geometries and
 * children re-attached with composed frames); a welded root fused into the world. Bodies are numbered
 * depth first from the root, a link's children in the document order of their joints: MuJoCo's order,
 * so q and v are ordered as MuJoCo orders them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/constraints.h"
#include "grit/step.h"
#include "urdf_build.h"

/* ------------------------------------------------------------------------------ frames */

static void quat2mat(double R[9], const double q[4]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = w * w + x * x - y * y - z * z, R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z), R[4] = w * w - x * x + y * y - z * z, R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = w * w - x * x - y * y + z * z;
}

static int is_identity(const double q[4]) { return q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0; }

/* (pos, quat) <- (pos, quat) * (p, q): a frame given in a frame given in a body. The identity is kept
 * exact, so that a link's own frame and inertia reach the builder unchanged. */
static void compose(double pos[3], double quat[4], const double p[3], const double q[4]) {
  double R[9], r[3], o[4];
  quat2mat(R, quat);
  for (int i = 0; i < 3; ++i) r[i] = pos[i] + R[3 * i] * p[0] + R[3 * i + 1] * p[1] + R[3 * i + 2] * p[2];
  if (is_identity(quat)) {
    memcpy(o, q, sizeof o);
  } else if (is_identity(q)) {
    memcpy(o, quat, sizeof o);
  } else {
    const double *a = quat, *b = q;
    o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    o[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    o[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  }
  memcpy(pos, r, sizeof r);
  memcpy(quat, o, sizeof o);
}

/* R A R^T (R from quat; A unchanged for the identity). */
void urdf_rotate_inertia(double out[9], const double quat[4], const double A[9]) {
  if (is_identity(quat)) {
    memcpy(out, A, sizeof(double) * 9);
    return;
  }
  double R[9], RA[9];
  quat2mat(R, quat);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) RA[3 * i + j] = R[3 * i] * A[j] + R[3 * i + 1] * A[3 + j] + R[3 * i + 2] * A[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] = RA[3 * i] * R[3 * j] + RA[3 * i + 1] * R[3 * j + 1] + RA[3 * i + 2] * R[3 * j + 2];
}

/* ------------------------------------------------------------------------------ the tree */

typedef struct body_acc {
  int link, joint;        /* the link that made it, its joint (-1: the free joint of a floating root) */
  int parent;             /* index in the body list (0: the world) */
  double pos[3], quat[4]; /* in the parent body */
  double mass, com[3], inertia[9];
  int grit;               /* builder index */
} body_acc;

typedef struct tree {
  int *order;        /* the links, depth first */
  int *body;         /* link -> body (0: the world) */
  double *pos, *quat; /* link frame in its body (3 and 4 per link) */
  body_acc *bodies;  /* [0] the world */
  int nbody;
} tree;

/* Depth first from each root in document order, children in the document order of their joints (no recursion: a chain of
 * links may be as long as the file allows). */
static int depth_first(urdf_ctx *c, int *order) {
  const int n = c->nlink;
  int *start = calloc((size_t)n + 2, sizeof *start), *list = malloc(sizeof *list * ((size_t)c->njoint + 1));
  int *stack = malloc(sizeof *stack * ((size_t)n + 1));
  int ok = start && list && stack, count = 0, top = 0;
  for (int j = 0; ok && j < c->njoint; ++j) start[c->joints[j].parent + 1]++;
  for (int i = 0; ok && i < n; ++i) start[i + 1] += start[i];
  if (ok) {
    int *next = malloc(sizeof *next * ((size_t)n + 1));
    ok = next != NULL;
    for (int i = 0; ok && i < n; ++i) next[i] = start[i];
    for (int j = 0; ok && j < c->njoint; ++j) list[next[c->joints[j].parent]++] = c->joints[j].child;
    free(next);
  }
  for (int i = n - 1; ok && i >= 0; --i) /* the roots in reverse, so that the first is taken first */
    if (c->links[i].parent_joint < 0) stack[top++] = i;
  while (ok && top > 0) {
    const int k = stack[--top];
    order[count++] = k;
    for (int e = start[k + 1] - 1; e >= start[k]; --e) stack[top++] = list[e];
  }
  free(start), free(list), free(stack);
  if (!ok) urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
  return ok;
}

static int link_line(const urdf_ctx *c, int link) { return c->links[link].node->line; }

/* Adds link k's mass properties (its <inertial>, or without one its collision geometries': urdf_inertia.c)
 * to its body's (mjCModel::FuseStatic's pairwise combination); (pos, quat): the link frame in the body. */
static void add_inertial(urdf_ctx *ctx, body_acc *b, int k, const double pos[3], const double quat[4]) {
  const urdf_link *l = &ctx->robot->links[k];
  double mass, I[9], c[3], q[4], in_link[9];
  memcpy(c, pos, sizeof c);
  memcpy(q, quat, sizeof q);
  if (l->has_inertial) {
    const double full[9] = {l->ixx, l->ixy, l->ixz, l->ixy, l->iyy, l->iyz, l->ixz, l->iyz, l->izz};
    mass = l->mass;
    compose(c, q, l->inertial.pos, l->inertial.quat); /* the inertial frame in the body */
    urdf_rotate_inertia(in_link, l->inertial.quat, full);
  } else {
    double lc[3];
    const double unit[4] = {1, 0, 0, 0};
    urdf_link_geom_inertia(ctx, k, &mass, lc, in_link);
    compose(c, q, lc, unit);
  }
  if (!(mass > 0)) return;
  urdf_rotate_inertia(I, quat, in_link);
  if (b->mass == 0) {
    b->mass = mass;
    memcpy(b->com, c, sizeof c);
    memcpy(b->inertia, I, sizeof I);
    return;
  }
  const double m[2] = {b->mass, mass};
  const double *cc[2] = {b->com, c};
  const double M = m[0] + m[1];
  double com[3], tot[9] = {0};
  for (int i = 0; i < 3; ++i) com[i] = (m[0] * cc[0][i] + m[1] * cc[1][i]) / M;
  const double *Ik[2] = {b->inertia, I};
  for (int k = 0; k < 2; ++k) {
    const double d[3] = {cc[k][0] - com[0], cc[k][1] - com[1], cc[k][2] - com[2]};
    const double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) tot[3 * i + j] += Ik[k][3 * i + j] + m[k] * ((i == j ? dd : 0) - d[i] * d[j]);
  }
  b->mass = M;
  memcpy(b->com, com, sizeof com);
  memcpy(b->inertia, tot, sizeof tot);
}

/* Each link's body and frame in it; a new body for each moving link (and a floating root). */
static void make_tree(urdf_ctx *c, tree *t) {
  for (int o = 0; o < c->nlink && c->status == GRIT_OK; ++o) {
    const int k = t->order[o], pj = c->links[k].parent_joint;
    double *pos = t->pos + 3 * k, *quat = t->quat + 4 * k;
    quat[0] = 1;
    int joint_type = URDF_JOINT_FIXED;
    if (pj >= 0) {
      const int p = c->joints[pj].parent;
      memcpy(pos, t->pos + 3 * p, sizeof(double) * 3);
      memcpy(quat, t->quat + 4 * p, sizeof(double) * 4);
      compose(pos, quat, c->robot->joints[pj].origin.pos, c->robot->joints[pj].origin.quat);
      t->body[k] = t->body[p];
      joint_type = c->joints[pj].type;
    } else if (c->opt.floating_base && strcmp(c->links[k].name, "world")) {
      joint_type = URDF_JOINT_FLOATING;
    }
    if (joint_type != URDF_JOINT_FIXED) { /* a new body at this frame, which becomes its own */
      body_acc *b = &t->bodies[t->nbody];
      b->link = k, b->joint = pj, b->parent = t->body[k];
      memcpy(b->pos, pos, sizeof b->pos);
      memcpy(b->quat, quat, sizeof b->quat);
      t->body[k] = t->nbody++;
      memset(pos, 0, sizeof(double) * 3);
      quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
    }
    if (t->body[k] > 0) add_inertial(c, &t->bodies[t->body[k]], k, pos, quat);
  }
  for (int b = 1; b < t->nbody && c->status == GRIT_OK; ++b)
    if (!(t->bodies[b].mass > 0)) {
      const int k = t->bodies[b].link;
      urdf_fail(c, GRIT_ERR_INVALID_MODEL, link_line(c, k),
                "link '%s' moves but has no mass: give it an <inertial> with a positive mass, or collision "
                "geometry (weighed at density 1000 when the link has no <inertial>, as MuJoCo does)",
                c->links[k].name);
    }
}

/* ------------------------------------------------------------------------------ the model */

/* The MJCF loader's defaults (options, contact parameters, step settings), with the load options' overrides
 * applied by that loader itself: read back from a one-geometry MJCF model. */
typedef struct defaults {
  grit_options opt;
  grit_geom_def geom;
  grit_step_settings settings;
} defaults;

static void mjcf_defaults(urdf_ctx *c, defaults *d) {
  static const char HEAD[] = "<mujoco>", TAIL[] = "<worldbody><geom size=\"1\"/></worldbody></mujoco>";
  const size_t nm = c->mujoco ? strlen(c->mujoco) : 0;
  char *xml = malloc(sizeof HEAD + nm + sizeof TAIL);
  if (!xml) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
    return;
  }
  memcpy(xml, HEAD, sizeof HEAD - 1);
  memcpy(xml + sizeof HEAD - 1, c->mujoco ? c->mujoco : "", nm);
  memcpy(xml + sizeof HEAD - 1 + nm, TAIL, sizeof TAIL);
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE], name[160];
  snprintf(name, sizeof name, "%.120s <mujoco>", c->fname);
  grit_status s = grit_mjcf_load_buffer(xml, strlen(xml), name, &c->opt.model, &m, &info, msg);
  free(xml);
  if (s == GRIT_OK) s = grit_model_geom(m, 0, &d->geom);
  if (s != GRIT_OK) {
    urdf_fail(c, s, 0, "%s", msg);
  } else {
    d->opt = grit_model_options(m);
    d->settings = info.settings;
    d->geom.name = NULL;
    for (int i = 0; i < info.nwarnings && i < GRIT_MJCF_MAX_WARNINGS; ++i) urdf_warn(c, 0, "%s", info.warnings[i]);
  }
  grit_mjcf_info_free(&info);
  grit_model_free(m);
}

static void builder_failed(urdf_ctx *c, grit_status s, grit_builder *gb, int line, const char *what) {
  urdf_fail(c, s, line, "%s: %s", what, grit_builder_last_error(gb));
}

static void add_joint(urdf_ctx *c, grit_builder *gb, const body_acc *b) {
  grit_joint_def d = grit_default_joint_def();
  if (b->joint < 0) {
    d.type = GRIT_JOINT_FREE;
    d.name = "floating_base";
    for (int i = 0; i < b->link; ++i) /* a root after the first: floating_base:LINK */
      if (c->links[i].parent_joint < 0) {
        const char *link = c->links[b->link].name;
        char *name = mjcf_alloc(&c->pool, strlen(link) + 15);
        if (!name) {
          urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
          return;
        }
        snprintf(name, strlen(link) + 15, "floating_base:%s", link);
        d.name = name;
        break;
      }
  } else {
    const urdf_joint_info *ji = &c->joints[b->joint];
    const urdf_joint *j = &c->robot->joints[b->joint];
    const int line = ji->node->line;
    d.name = ji->name;
    d.type = ji->type == URDF_JOINT_PRISMATIC ? GRIT_JOINT_SLIDE
             : ji->type == URDF_JOINT_FLOATING ? GRIT_JOINT_FREE
                                                : GRIT_JOINT_HINGE;
    if (d.type != GRIT_JOINT_FREE) memcpy(d.axis, j->axis, sizeof d.axis);
    if (ji->type != URDF_JOINT_CONTINUOUS && ji->type != URDF_JOINT_FLOATING && j->has_limit && !ji->no_limit) {
      if (j->lower < j->upper) {
        d.limited = 1;
        d.range[0] = j->lower, d.range[1] = j->upper;
      } else {
        urdf_warn(c, line, "joint '%s': lower >= upper, so the joint is not limited (as in MuJoCo)", ji->name);
      }
    }
    if (j->has_dynamics) { /* as MuJoCo 2.2.2's URDF import: damping, and friction as dry friction */
      d.damping = j->damping;
      d.frictionloss = j->friction;
      if (!(j->friction >= 0)) {
        urdf_fail(c, GRIT_ERR_INVALID_MODEL, line, "joint '%s': <dynamics friction> must be >= 0, got %g", ji->name,
                  j->friction);
        return;
      }
    }
    if (d.type == GRIT_JOINT_FREE && b->parent != 0)
      urdf_fail(c, GRIT_ERR_UNSUPPORTED, line, "joint '%s': a floating joint must attach its link to the world",
                ji->name);
  }
  if (c->status != GRIT_OK) return;
  int index = -1;
  grit_status s = grit_builder_add_joint(gb, b->grit, &d, &index);
  if (s != GRIT_OK) builder_failed(c, s, gb, b->joint >= 0 ? c->joints[b->joint].node->line : 0, "joint");
  if (b->joint >= 0) c->joints[b->joint].grit_joint = index;
}

/* The joint a <mimic> names, as a hinge or slide of the builder; -1 with a warning when there is none
 * (an unknown joint, itself, a fixed or floating joint): the <mimic> is then ignored, as MuJoCo 2.2.2
 * ignores every <mimic> (public files keep <mimic> on joints made fixed, e.g. a locked gripper). */
static int mimicked(urdf_ctx *c, const urdf_joint_info *ji) {
  const int line = ji->mimic->line;
  for (int k = 0; k < c->njoint; ++k) {
    const urdf_joint_info *o = &c->joints[k];
    if (strcmp(o->name, ji->mimic_joint)) continue;
    if (o == ji) return urdf_warn(c, line, "joint '%s' mimics itself: <mimic> ignored", ji->name), -1;
    if (o->grit_joint < 0 || o->type == URDF_JOINT_FLOATING)
      return urdf_warn(c, line,
                       "joint '%s': <mimic> of joint '%s', which is not a hinge or slide: ignored (the joint moves "
                       "independently)",
                       ji->name, o->name),
             -1;
    return o->grit_joint;
  }
  return urdf_warn(c, line, "joint '%s': <mimic> of an unknown joint '%s': ignored", ji->name, ji->mimic_joint), -1;
}

/* Each <mimic> as a joint equality q = multiplier q_joint + offset (URDF's reference positions are 0, so
 * grit's polynomial about qpos0 is offset + multiplier x). MuJoCo 2.2.2's import ignores <mimic> (its
 * joints move independently there); newer MuJoCo makes the same equality. */
static void add_mimics(urdf_ctx *c, grit_builder *gb) {
  for (int i = 0; i < c->njoint && c->status == GRIT_OK; ++i) {
    const urdf_joint_info *ji = &c->joints[i];
    if (!ji->mimic) continue;
    if (ji->grit_joint < 0 || ji->type == URDF_JOINT_FLOATING) {
      urdf_warn(c, ji->mimic->line, "joint '%s': <mimic> on a joint that is not a hinge or slide: ignored", ji->name);
      continue;
    }
    const int other = mimicked(c, ji);
    if (other < 0) continue;
    grit_equality_def e = grit_default_equality_def();
    e.type = GRIT_EQ_JOINT;
    e.obj1 = ji->grit_joint, e.obj2 = other;
    e.polycoef[0] = ji->mimic_offset, e.polycoef[1] = ji->mimic_multiplier;
    grit_status s = grit_builder_add_equality(gb, &e, NULL);
    if (s != GRIT_OK) builder_failed(c, s, gb, ji->mimic->line, "mimic");
  }
}

static void add_motors(urdf_ctx *c, grit_builder *gb, const tree *t) {
  for (int k = 1, joint = 0; k < t->nbody && c->status == GRIT_OK; ++k, ++joint) {
    const body_acc *b = &t->bodies[k];
    if (b->joint < 0 || c->joints[b->joint].type == URDF_JOINT_FLOATING) continue;
    const urdf_joint *j = &c->robot->joints[b->joint];
    grit_actuator_def d = grit_default_actuator_def();
    d.name = c->joints[b->joint].name;
    d.joint = joint;
    if (j->has_limit && !c->joints[b->joint].no_limit && j->effort > 0) {
      d.ctrl_limited = 1;
      d.ctrl_range[0] = -j->effort, d.ctrl_range[1] = j->effort;
    }
    grit_status s = grit_builder_add_actuator(gb, &d, NULL);
    if (s != GRIT_OK) builder_failed(c, s, gb, c->joints[b->joint].node->line, "motor");
  }
}



static const mjcf_node *geometry_node(const mjcf_node *collision) {
  for (const mjcf_node *k = collision ? collision->child : NULL; k; k = k->next)
    if (!strcmp(k->name, "geometry")) return k->child ? k->child : k;
  return collision;
}

int urdf_collision_line(const urdf_ctx *c, int k, int i) {
  const mjcf_node *n = i < c->links[k].ncollision ? geometry_node(c->links[k].collisions[i]) : c->links[k].node;
  return n ? n->line : 0;
}

static void add_geoms_of(urdf_ctx *c, grit_builder *gb, const tree *t, const defaults *df, int k) {
  const urdf_link *l = &c->robot->links[k];
  for (int i = 0; i < l->ngeom && c->status == GRIT_OK; ++i) {
    const urdf_geom *g = &l->geoms[i];
    const mjcf_node *node = i < c->links[k].ncollision ? geometry_node(c->links[k].collisions[i]) : c->links[k].node;
    grit_geom_def d = df->geom;
    d.body = t->bodies[t->body[k]].grit;
    memcpy(d.pos, t->pos + 3 * k, sizeof d.pos);
    memcpy(d.quat, t->quat + 4 * k, sizeof d.quat);
    compose(d.pos, d.quat, g->origin.pos, g->origin.quat);
    switch (g->type) {
      case URDF_GEOM_BOX: d.shape = grit_shape_make(GRIT_GEOM_BOX, g->size[0] / 2, g->size[1] / 2, g->size[2] / 2); break;
      case URDF_GEOM_CYLINDER: d.shape = grit_shape_make(GRIT_GEOM_CYLINDER, g->size[0], g->size[1] / 2, 0); break;
      case URDF_GEOM_SPHERE: d.shape = grit_shape_make(GRIT_GEOM_SPHERE, g->size[0], 0, 0); break;
      case URDF_GEOM_MESH:
        if (urdf_mesh_shape(c, g, node->line, &d.shape) != GRIT_OK) return;
        if (d.shape.nvert == 0) continue; /* dropped with a warning (lenient) */
        break;
      default: urdf_fail(c, GRIT_ERR_PARSE, node->line, "link '%s': a collision without geometry", c->links[k].name);
    }
    if (c->status != GRIT_OK) return;
    grit_status s = grit_builder_add_geom(gb, &d, NULL);
    if (s != GRIT_OK) builder_failed(c, s, gb, node->line, "collision");
  }
}

static void build(urdf_ctx *c, grit_builder *gb, tree *t) {
  defaults df;
  mjcf_defaults(c, &df);
  if (c->status != GRIT_OK) return;
  grit_status s = grit_builder_set_options(gb, &df.opt);
  if (s != GRIT_OK) {
    builder_failed(c, s, gb, 0, "options");
    return;
  }
  for (int k = 1; k < t->nbody && c->status == GRIT_OK; ++k) {
    body_acc *b = &t->bodies[k];
    grit_body_def d = grit_default_body_def();
    d.name = c->links[b->link].name;
    d.parent = t->bodies[b->parent].grit;
    memcpy(d.pos, b->pos, sizeof d.pos);
    memcpy(d.quat, b->quat, sizeof d.quat);
    d.mass = b->mass;
    memcpy(d.com, b->com, sizeof d.com);
    memcpy(d.inertia, b->inertia, sizeof d.inertia);
    s = grit_builder_add_body(gb, &d, &b->grit);
    if (s != GRIT_OK) {
      builder_failed(c, s, gb, link_line(c, b->link), "link");
      return;
    }
    add_joint(c, gb, b);
  }
  if (c->status == GRIT_OK) add_mimics(c, gb);
  if (c->status == GRIT_OK && c->opt.motors) add_motors(c, gb, t);
  /* geometries body by body (the world's first), each body's links depth first, as MuJoCo numbers them */
  int *start = calloc((size_t)t->nbody + 1, sizeof *start), *list = malloc(sizeof *list * ((size_t)c->nlink + 1));
  if (!start || !list) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
  } else {
    for (int o = 0; o < c->nlink; ++o) start[t->body[t->order[o]] + 1]++;
    for (int b = 0; b < t->nbody - 1; ++b) start[b + 1] += start[b];
    for (int o = 0; o < c->nlink; ++o) list[start[t->body[t->order[o]]]++] = t->order[o];
    for (int i = 0; i < c->nlink && c->status == GRIT_OK; ++i) add_geoms_of(c, gb, t, &df, list[i]);
  }
  free(start), free(list);
  if (c->status == GRIT_OK && c->info) c->info->settings = df.settings;
}

void urdf_build(urdf_ctx *c, grit_model **model) {
  const size_t n = (size_t)c->nlink + 1;
  tree t;
  memset(&t, 0, sizeof t);
  t.order = malloc(sizeof *t.order * n);
  t.body = calloc(n, sizeof *t.body);
  t.pos = calloc(3 * n, sizeof *t.pos);
  t.quat = calloc(4 * n, sizeof *t.quat);
  t.bodies = calloc(n + 1, sizeof *t.bodies);
  grit_builder *gb = NULL;
  if (!t.order || !t.body || !t.pos || !t.quat || !t.bodies || grit_builder_create(&gb) != GRIT_OK) {
    urdf_fail(c, GRIT_ERR_OUT_OF_MEMORY, 0, "out of memory");
  } else {
    t.nbody = 1;
    t.bodies[0].quat[0] = 1;
    if (depth_first(c, t.order)) make_tree(c, &t);
    if (c->status == GRIT_OK) build(c, gb, &t);
    if (c->status == GRIT_OK) {
      grit_status s = grit_builder_compile(gb, model);
      if (s != GRIT_OK) urdf_fail(c, s, 0, "%s", grit_builder_last_error(gb));
    }
    if (c->status == GRIT_OK && c->info) {
      c->info->nq = grit_model_nq(*model);
      c->info->nv = grit_model_nv(*model);
      c->info->nu = grit_model_nu(*model);
    }
  }
  grit_builder_free(gb);
  free(t.order), free(t.body), free(t.pos), free(t.quat), free(t.bodies);
}
