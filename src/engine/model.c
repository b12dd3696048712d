/* SPDX-License-Identifier: Apache-2.0 */
/* model.c — the model builder: definitions validated and compiled (their defaults: model_defs.c) into an
 * immutable grit_model whose arrays live in one allocation. */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "actuation_muscle.h"
#include "arena.h"
#include "fluid_ellipsoid.h"
#include "grit/math.h"
#include "model_cx.h"
#include "model_internal.h"
#include "model_filter.h"
#include "hydro.h"
#include "hull_graph.h"
#include "status_internal.h"

/* ---------------------------------------------------------------------------------- builder */

typedef struct {
  grit_body_def def; /* def.name points into names below (owned) */
} body_entry;

typedef struct {
  grit_joint_def def;
  int body;
} joint_entry;

struct grit_builder {
  grit_options opt;
  body_entry *bodies; /* bodies[0] is the world */
  joint_entry *joints;
  grit_actuator_def *acts;
  grit_geom_def *geoms; /* name and CONVEX vertices owned (copied) */
  int nbody, njnt, nu, ngeom;
  int cap_body, cap_jnt, cap_act, cap_geom;
  int *excl, nexcl, cap_excl;    /* (2 nexcl) excluded body pairs */
  int *gpair, ngpair, cap_gpair; /* (2 ngpair) explicit geometry pairs */
  int no_filter_parent;
  char message[GRIT_MESSAGE_SIZE];
  grit_builder_cx cx; /* sites, equality constraints, tendons (model_cx.c) */
};

grit_builder_cx *grit_builder_cx_of(grit_builder *b) { return &b->cx; }
char *grit_builder_message(grit_builder *b) { return b->message; }
int grit_builder_nbody(const grit_builder *b) { return b->nbody; }
int grit_builder_njoint(const grit_builder *b) { return b->njnt; }
int grit_builder_joint_type(const grit_builder *b, int j) { return b->joints[j].def.type; }

char *grit_builder_strdup(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *r = malloc(n);
  if (r) memcpy(r, s, n);
  return r;
}

int grit_builder_grow(void **array, int *cap, int need, size_t elem) {
  if (need <= *cap) return 1;
  int ncap = *cap ? 2 * *cap : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*array, (size_t)ncap * elem);
  if (!p) return 0;
  *array = p;
  *cap = ncap;
  return 1;
}

grit_status grit_builder_store(char *msg, const char *what, int id, void **array, int *cap, const void *def, size_t size,
                               size_t name_offset) {
  if (!grit_builder_grow(array, cap, id + 1, size))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding %s %d", what, id);
  char *e = (char *)*array + (size_t)id * size;
  memcpy(e, def, size);
  const char *name;
  memcpy(&name, e + name_offset, sizeof name);
  char *copy = name ? grit_builder_strdup(name) : NULL;
  memcpy(e + name_offset, &copy, sizeof copy); /* the copy, or NULL (no name, or out of memory) */
  if (name && !copy) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding %s %d", what, id);
  return GRIT_OK;
}

grit_status grit_builder_create(grit_builder **builder) {
  if (!builder) return GRIT_ERR_INVALID_ARGUMENT;
  *builder = NULL;
  grit_builder *b = calloc(1, sizeof *b);
  if (!b) return GRIT_ERR_OUT_OF_MEMORY;
  b->opt = grit_default_options();
  if (!grit_builder_grow((void **)&b->bodies, &b->cap_body, 1, sizeof *b->bodies)) {
    free(b);
    return GRIT_ERR_OUT_OF_MEMORY;
  }
  memset(&b->bodies[0], 0, sizeof b->bodies[0]); /* the world: no mass, no parent */
  b->bodies[0].def.parent = -1;
  b->bodies[0].def.quat[0] = 1.0;
  b->nbody = 1;
  *builder = b;
  return GRIT_OK;
}

void grit_builder_free(grit_builder *b) {
  if (!b) return;
  free(b->excl);
  free(b->gpair);
  for (int i = 0; i < b->nbody; ++i) free((char *)b->bodies[i].def.name);
  for (int i = 0; i < b->njnt; ++i) free((char *)b->joints[i].def.name);
  for (int i = 0; i < b->nu; ++i) free((char *)b->acts[i].name);
  for (int i = 0; i < b->ngeom; ++i) {
    free((char *)b->geoms[i].name);
    free((double *)b->geoms[i].shape.vertices);
  }
  free(b->geoms);
  free(b->bodies);
  free(b->joints);
  free(b->acts);
  grit_builder_cx_free(&b->cx);
  free(b);
}

const char *grit_builder_last_error(const grit_builder *b) { return b ? b->message : "builder is NULL"; }

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* The name of the first of a definition's numeric fields holding a NaN or infinity, or NULL: error
 * messages name the offending field. */
typedef struct field {
  const char *name;
  const double *x;
  int n;
} field;

static const char *nonfinite_field(const field *f, int n) {
  for (int i = 0; i < n; ++i)
    if (!all_finite(f[i].x, f[i].n)) return f[i].name;
  return NULL;
}

grit_status grit_builder_set_options(grit_builder *b, const grit_options *o) {
  if (!b || !o) return GRIT_ERR_INVALID_ARGUMENT;
  if (!isfinite(o->timestep))
    return grit_set_error(b->message, GRIT_ERR_NOT_FINITE, "options: timestep is not finite");
  if (o->timestep <= 0.0)
    return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "options: timestep %g must be positive", o->timestep);
  if (!all_finite(o->gravity, 3))
    return grit_set_error(b->message, GRIT_ERR_NOT_FINITE, "options: gravity is not finite");
  if (!isfinite(o->contact_margin) || o->contact_margin < 0.0)
    return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "options: contact_margin %g must be >= 0 and finite",
                          o->contact_margin);
  if (o->max_contacts < 0)
    return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "options: max_contacts %d must be >= 0",
                          o->max_contacts);
  if (!isfinite(o->density) || !isfinite(o->viscosity) || !all_finite(o->wind, 3))
    return grit_set_error(b->message, GRIT_ERR_NOT_FINITE, "options: density, viscosity or wind is not finite");
  if (o->density < 0.0 || o->viscosity < 0.0)
    return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "options: density %g and viscosity %g must be >= 0",
                          o->density, o->viscosity);
  b->opt = *o;
  return GRIT_OK;
}

grit_status grit_builder_add_body(grit_builder *b, const grit_body_def *def, int *body) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  char *msg = b->message;
  int id = b->nbody;
  if (def->parent < 0 || def->parent >= b->nbody)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "body %d: parent %d does not exist (bodies 0..%d)", id,
                          def->parent, b->nbody - 1);
  if (!isfinite(def->gravcomp)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "body %d: gravcomp is not finite", id);
  const field fields[] = {{"pos", def->pos, 3}, {"quat", def->quat, 4}, {"com", def->com, 3},
                          {"inertia_quat", def->inertia_quat, 4}};
  const char *bad = nonfinite_field(fields, 4);
  if (bad) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "body %d: %s is not finite", id, bad);
  double qn = sqrt(def->quat[0] * def->quat[0] + def->quat[1] * def->quat[1] + def->quat[2] * def->quat[2] +
                   def->quat[3] * def->quat[3]);
  if (qn < 1e-10) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "body %d: quat has zero norm", id);
  grit_status s = grit_check_inertia(msg, id, def->mass, def->inertia);
  if (s != GRIT_OK) return s;
  if (!grit_builder_grow((void **)&b->bodies, &b->cap_body, b->nbody + 1, sizeof *b->bodies))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding body %d", id);
  body_entry *e = &b->bodies[id];
  e->def = *def;
  for (int i = 0; i < 4; ++i) e->def.quat[i] = def->quat[i] / qn;
  const double *iq = def->inertia_quat; /* optional: all 0 stays all 0 */
  const double iqn = sqrt(iq[0] * iq[0] + iq[1] * iq[1] + iq[2] * iq[2] + iq[3] * iq[3]);
  for (int i = 0; i < 4; ++i) e->def.inertia_quat[i] = iqn > 1e-10 ? iq[i] / iqn : 0.0;
  /* Keep the inertia exactly symmetric. */
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      e->def.inertia[3 * i + j] = e->def.inertia[3 * j + i] = 0.5 * (def->inertia[3 * i + j] + def->inertia[3 * j + i]);
  e->def.name = NULL;
  if (def->name && !(e->def.name = grit_builder_strdup(def->name)))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding body %d", id);
  b->nbody++;
  if (body) *body = id;
  return GRIT_OK;
}

grit_status grit_builder_add_joint(grit_builder *b, int body, const grit_joint_def *def, int *joint) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  char *msg = b->message;
  int id = b->njnt;
  if (body < 1 || body >= b->nbody)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "joint %d: body %d does not exist (bodies 1..%d)", id, body,
                          b->nbody - 1);
  if (def->type < GRIT_JOINT_FREE || def->type > GRIT_JOINT_HINGE)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "joint %d: unknown type %d", id, (int)def->type);
  const field fields[] = {{"pos", def->pos, 3},         {"axis", def->axis, 3},          {"damping", &def->damping, 1},
                          {"armature", &def->armature, 1}, {"stiffness", &def->stiffness, 1},
                          {"spring_ref", &def->spring_ref, 1}, {"range", def->range, 2}, {"qpos0", &def->qpos0, 1}};
  const char *bad = nonfinite_field(fields, 8);
  if (bad) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "joint %d: %s is not finite", id, bad);
  if (!(def->frictionloss >= 0) || !isfinite(def->frictionloss))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "joint %d: frictionloss %g must be >= 0 and finite", id,
                          def->frictionloss);
  if (def->limited && (!(def->solreflimit[0] >= 0) || !(def->solreflimit[1] >= 0) || !isfinite(def->solreflimit[0]) ||
                       !isfinite(def->solreflimit[1]) || !(def->limit_width >= 0) || !isfinite(def->limit_width)))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                          "joint %d: solreflimit (%g, %g) and limit_width %g must be >= 0 and finite", id,
                          def->solreflimit[0], def->solreflimit[1], def->limit_width);
  for (int i = 2; i < 5; ++i)
    if (*fields[i].x < 0)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "joint %d: %s %g must be >= 0", id, fields[i].name,
                            *fields[i].x);
  int nj_body = 0, has_multi = 0;
  for (int j = 0; j < b->njnt; ++j)
    if (b->joints[j].body == body) {
      nj_body++;
      if (b->joints[j].def.type == GRIT_JOINT_FREE || b->joints[j].def.type == GRIT_JOINT_BALL) has_multi = 1;
    }
  int multi = def->type == GRIT_JOINT_FREE || def->type == GRIT_JOINT_BALL;
  if (nj_body > 0 && (multi || has_multi))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                          "joint %d: a ball or free joint must be the only joint of its body (body %d)", id, body);
  if (def->type == GRIT_JOINT_FREE) {
    if (b->bodies[body].def.parent != 0)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                            "joint %d: a free joint must be on a child of the world (body %d has parent %d)", id,
                            body, b->bodies[body].def.parent);
    if (def->pos[0] != 0 || def->pos[1] != 0 || def->pos[2] != 0)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "joint %d: a free joint acts at the body origin (pos = 0)",
                            id);
  }
  grit_joint_def d = *def;
  if (d.type == GRIT_JOINT_HINGE || d.type == GRIT_JOINT_SLIDE) {
    double n = grit_v3_norm(d.axis);
    if (n < 1e-10) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "joint %d: axis has zero length", id);
    grit_v3_scale(d.axis, d.axis, 1.0 / n);
    if (d.limited && !(d.range[0] < d.range[1]))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "joint %d: range [%g, %g] is empty", id, d.range[0],
                            d.range[1]);
  } else if (d.limited || d.stiffness > 0) {
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                          "joint %d: limits and springs are supported on hinge and slide joints only", id);
  }
  if (!grit_builder_grow((void **)&b->joints, &b->cap_jnt, b->njnt + 1, sizeof *b->joints))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding joint %d", id);
  d.name = NULL;
  if (def->name && !(d.name = grit_builder_strdup(def->name)))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding joint %d", id);
  b->joints[id].def = d;
  b->joints[id].body = body;
  b->njnt++;
  if (joint) *joint = id;
  return GRIT_OK;
}

grit_status grit_builder_add_actuator(grit_builder *b, const grit_actuator_def *def, int *actuator) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  char *msg = b->message;
  int id = b->nu;
  if (def->trntype == GRIT_TRN_JOINT && (def->joint < 0 || def->joint >= b->njnt))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "actuator %d: joint %d does not exist", id, def->joint);
  grit_status st = grit_actuator_check(def, id, def->trntype == GRIT_TRN_JOINT ? (int)b->joints[def->joint].def.type : -1,
                                       grit_builder_cx_of(b)->nten, msg);
  if (st == GRIT_OK) st = grit_actuator_muscle_check(def, id, grit_builder_cx_of(b)->nsite, msg); /* issue 24 */
  if (st != GRIT_OK) return st;
  st = grit_builder_store(msg, "actuator", id, (void **)&b->acts, &b->cap_act, def, sizeof *def,
                          offsetof(grit_actuator_def, name));
  if (st != GRIT_OK) return st;
  b->nu++;
  if (actuator) *actuator = id;
  return GRIT_OK;
}

grit_status grit_builder_add_geom(grit_builder *b, const grit_geom_def *def, int *geom) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  char *msg = b->message;
  const int id = b->ngeom;
  if (def->body < 0 || def->body >= b->nbody)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "geom %d: body %d does not exist (bodies 0..%d)", id,
                          def->body, b->nbody - 1);
  char smsg[GRIT_MESSAGE_SIZE];
  if (grit_shape_validate(&def->shape, smsg) != GRIT_OK)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "geom %d: %s", id, smsg);
  const field fields[] = {{"pos", def->pos, 3},           {"quat", def->quat, 4},
                          {"friction", &def->friction, 1}, {"stiffness", &def->stiffness, 1},
                          {"dissipation", &def->dissipation, 1}, {"tau_d", &def->tau_d, 1},
                          {"hydro_modulus", &def->hydro_modulus, 1}, {"margin", &def->margin, 1},
                          {"gap", &def->gap, 1}};
  const char *bad = nonfinite_field(fields, 9);
  if (bad) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "geom %d: %s is not finite", id, bad);
  if (!(def->stiffness > 0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "geom %d: stiffness %g must be positive", id, def->stiffness);
  for (int i = 2; i < 9; ++i)
    if (*fields[i].x < 0)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "geom %d: %s %g must be >= 0", id, fields[i].name,
                            *fields[i].x);
  if (def->hydro_modulus > 0 && !grit_hydro_shape_supported(def->shape.type))
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                          "geom %d: hydro_modulus %g: only spheres, boxes, cylinders, ellipsoids, capsules and "
                          "convex meshes can be compliant-hydroelastic (planes are the rigid partners)",
                          id, def->hydro_modulus);
  double qn = sqrt(def->quat[0] * def->quat[0] + def->quat[1] * def->quat[1] + def->quat[2] * def->quat[2] +
                   def->quat[3] * def->quat[3]);
  if (qn < 1e-10) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "geom %d: quat has zero norm", id);
  double fluid[GRIT_FLUID_NGEOM];
  grit_status fs = grit_fluid_geom_compile(def, id, fluid, msg); /* fluid_ellipsoid.c */
  if (fs != GRIT_OK) return fs;
  if (!grit_builder_grow((void **)&b->geoms, &b->cap_geom, b->ngeom + 1, sizeof *b->geoms))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding geom %d", id);
  grit_geom_def d = *def;
  for (int i = 0; i < 4; ++i) d.quat[i] = def->quat[i] / qn;
  d.name = NULL;
  d.shape.vertices = NULL;
  d.shape.graph = NULL; /* the model builds its own (hull_graph.h) */
  if (def->shape.type == GRIT_GEOM_CONVEX || def->shape.type == GRIT_GEOM_HFIELD) { /* points copied */
    double *v = malloc(sizeof(double) * 3 * (size_t)def->shape.nvert);
    if (!v) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding geom %d", id);
    memcpy(v, def->shape.vertices, sizeof(double) * 3 * (size_t)def->shape.nvert);
    d.shape.vertices = v;
  }
  if (def->name && !(d.name = grit_builder_strdup(def->name))) {
    free((double *)d.shape.vertices);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding geom %d", id);
  }
  b->geoms[id] = d;
  b->ngeom++;
  if (geom) *geom = id;
  return GRIT_OK;
}

/* ----------------------------------------------------------------------- contact filters */

static grit_status push_pair(grit_builder *b, int **arr, int *n, int *cap, int i, int j) {
  if (!grit_builder_grow((void **)arr, cap, *n + 1, 2 * sizeof(int)))
    return grit_set_error(b->message, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding a contact filter");
  (*arr)[2 * *n] = i < j ? i : j;
  (*arr)[2 * *n + 1] = i < j ? j : i;
  ++*n;
  return GRIT_OK;
}

grit_status grit_builder_exclude_bodies(grit_builder *b, int body1, int body2) {
  if (!b) return GRIT_ERR_INVALID_ARGUMENT;
  if (body1 < 0 || body2 < 0 || body1 >= b->nbody || body2 >= b->nbody || body1 == body2)
    return grit_set_error(b->message, GRIT_ERR_INVALID_ARGUMENT, "exclude: bodies %d and %d (need two of 0..%d)", body1,
                          body2, b->nbody - 1);
  return push_pair(b, &b->excl, &b->nexcl, &b->cap_excl, body1, body2);
}

grit_status grit_builder_add_geom_pair(grit_builder *b, int geom1, int geom2) {
  if (!b) return GRIT_ERR_INVALID_ARGUMENT;
  if (geom1 < 0 || geom2 < 0 || geom1 >= b->ngeom || geom2 >= b->ngeom || geom1 == geom2)
    return grit_set_error(b->message, GRIT_ERR_INVALID_ARGUMENT, "pair: geoms %d and %d (need two of 0..%d)", geom1,
                          geom2, b->ngeom - 1);
  return push_pair(b, &b->gpair, &b->ngpair, &b->cap_gpair, geom1, geom2);
}

grit_status grit_builder_set_filter_parent(grit_builder *b, int enabled) {
  if (!b) return GRIT_ERR_INVALID_ARGUMENT;
  b->no_filter_parent = !enabled;
  return GRIT_OK;
}

/* -------------------------------------------------------------------------------- compiling */

/* Carves every array of the model for the given sizes (measuring when c->base is NULL). */
void grit_model_layout(grit_model *m, grit_carver *c, size_t names_bytes) {
  int nb = m->nbody, nj = m->njnt, nv = m->nv, nt = m->ntree, nu = m->nu;
  GRIT_CARVE(c, m->body_parent, nb);
  GRIT_CARVE(c, m->body_tree, nb);
  GRIT_CARVE(c, m->body_jntadr, nb);
  GRIT_CARVE(c, m->body_jntnum, nb);
  GRIT_CARVE(c, m->body_jnt, nj);
  GRIT_CARVE(c, m->body_dofadr, nb);
  GRIT_CARVE(c, m->body_dofnum, nb);
  GRIT_CARVE(c, m->body_lastdof, nb);
  GRIT_CARVE(c, m->body_pos, 3 * nb);
  GRIT_CARVE(c, m->body_quat, 4 * nb);
  GRIT_CARVE(c, m->body_mass, nb);
  GRIT_CARVE(c, m->body_gravcomp, nb);
  GRIT_CARVE(c, m->body_com, 3 * nb);
  GRIT_CARVE(c, m->body_inertia, 9 * nb);
  GRIT_CARVE(c, m->body_iquat, 4 * nb);
  GRIT_CARVE(c, m->jnt_type, nj);
  GRIT_CARVE(c, m->jnt_body, nj);
  GRIT_CARVE(c, m->jnt_qposadr, nj);
  GRIT_CARVE(c, m->jnt_dofadr, nj);
  GRIT_CARVE(c, m->jnt_limited, nj);
  GRIT_CARVE(c, m->jnt_pos, 3 * nj);
  GRIT_CARVE(c, m->jnt_axis, 3 * nj);
  GRIT_CARVE(c, m->jnt_range, 2 * nj);
  GRIT_CARVE(c, m->jnt_stiffness, nj);
  GRIT_CARVE(c, m->jnt_springref, nj);
  GRIT_CARVE(c, m->dof_body, nv);
  GRIT_CARVE(c, m->dof_jnt, nv);
  GRIT_CARVE(c, m->dof_parent, nv);
  GRIT_CARVE(c, m->dof_tree, nv);
  GRIT_CARVE(c, m->dof_damping, nv);
  GRIT_CARVE(c, m->dof_armature, nv);
  GRIT_CARVE(c, m->tree_dofadr, nt);
  GRIT_CARVE(c, m->tree_dofnum, nt);
  GRIT_CARVE(c, m->tree_madr, nt);
  GRIT_CARVE(c, m->act_jnt, nu);
  GRIT_CARVE(c, m->act_dof, nu);
  GRIT_CARVE(c, m->act_limited, nu);
  GRIT_CARVE(c, m->act_gear, nu);
  GRIT_CARVE(c, m->act_range, 2 * nu);
  GRIT_CARVE(c, m->act_trntype, nu);
  GRIT_CARVE(c, m->act_tendon, nu);
  GRIT_CARVE(c, m->act_dyntype, nu);
  GRIT_CARVE(c, m->act_gaintype, nu);
  GRIT_CARVE(c, m->act_biastype, nu);
  GRIT_CARVE(c, m->act_actadr, nu);
  GRIT_CARVE(c, m->act_forcelimited, nu);
  GRIT_CARVE(c, m->act_actlimited, nu);
  GRIT_CARVE(c, m->act_dynprm, 3 * nu);
  GRIT_CARVE(c, m->act_gainprm, 3 * nu);
  GRIT_CARVE(c, m->act_biasprm, 3 * nu);
  GRIT_CARVE(c, m->act_forcerange, 2 * nu);
  GRIT_CARVE(c, m->act_actrange, 2 * nu);
  GRIT_CARVE(c, m->geom_body, m->ngeom);
  GRIT_CARVE(c, m->geom_shape, m->ngeom);
  GRIT_CARVE(c, m->geom_pos, 3 * m->ngeom);
  GRIT_CARVE(c, m->geom_quat, 4 * m->ngeom);
  GRIT_CARVE(c, m->geom_mat, 9 * m->ngeom);
  GRIT_CARVE(c, m->geom_friction, m->ngeom);
  GRIT_CARVE(c, m->geom_stiffness, m->ngeom);
  GRIT_CARVE(c, m->geom_dissipation, m->ngeom);
  GRIT_CARVE(c, m->geom_taud, m->ngeom);
  GRIT_CARVE(c, m->geom_contype, m->ngeom);
  GRIT_CARVE(c, m->geom_conaffinity, m->ngeom);
  GRIT_CARVE(c, m->geom_vert, 3 * m->nvert);
  GRIT_CARVE(c, m->geom_graph, m->ngraph);
  GRIT_CARVE(c, m->geom_hydro, m->ngeom);
  GRIT_CARVE(c, m->geom_margin, m->ngeom);
  GRIT_CARVE(c, m->geom_gap, m->ngeom);
  GRIT_CARVE(c, m->geom_priority, m->ngeom);
  GRIT_CARVE(c, m->geom_condim, m->ngeom);
  GRIT_CARVE(c, m->geom_hydro_tetadr, m->ngeom);
  GRIT_CARVE(c, m->geom_hydro_ntet, m->ngeom);
  GRIT_CARVE(c, m->hydro_tet, GRIT_HYDRO_TET_STRIDE * (size_t)m->nhtet);
  GRIT_CARVE(c, m->geom_name, m->ngeom);
  GRIT_CARVE(c, m->qpos0, m->nq);
  GRIT_CARVE(c, m->body_weld, nb);
  GRIT_CARVE(c, m->exclude, 2 * m->nexclude);
  GRIT_CARVE(c, m->pair, 2 * m->npair);
  if (m->ngeom <= GRIT_ALLOWED_TABLE_MAX)
    GRIT_CARVE(c, m->geom_allowed, (size_t)m->ngeom * (size_t)m->ngeom / 8 + 1);
  else
    m->geom_allowed = NULL;
  GRIT_CARVE(c, m->body_name, nb);
  GRIT_CARVE(c, m->jnt_name, nj);
  GRIT_CARVE(c, m->act_name, nu);
  GRIT_CARVE(c, m->geom_fluid, GRIT_FLUID_NGEOM * (size_t)m->ngeom);
  GRIT_CARVE(c, m->body_fluid_ellipsoid, nb);
  grit_cx_layout(m, c);
  grit_actuator_muscle_layout(m, c); /* actuation_muscle.c */
  (void)grit_carve(c, names_bytes, 1);
}

/* Copies a name into the arena's string area; returns the copy (or NULL for no name). */
static char *store_name(char **cursor, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *r = *cursor;
  memcpy(r, s, n);
  *cursor += n;
  return r;
}

static grit_status check_unique_names(grit_builder *b) {
  for (int i = 1; i < b->nbody; ++i)
    for (int k = 1; k < i; ++k)
      if (b->bodies[i].def.name && b->bodies[k].def.name && !strcmp(b->bodies[i].def.name, b->bodies[k].def.name))
        return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "bodies %d and %d share the name '%s'", k, i,
                              b->bodies[i].def.name);
  for (int i = 0; i < b->njnt; ++i)
    for (int k = 0; k < i; ++k)
      if (b->joints[i].def.name && b->joints[k].def.name && !strcmp(b->joints[i].def.name, b->joints[k].def.name))
        return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "joints %d and %d share the name '%s'", k, i,
                              b->joints[i].def.name);
  for (int i = 0; i < b->ngeom; ++i)
    for (int k = 0; k < i; ++k)
      if (b->geoms[i].name && b->geoms[k].name && !strcmp(b->geoms[i].name, b->geoms[k].name))
        return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "geoms %d and %d share the name '%s'", k, i,
                              b->geoms[i].name);
  for (int i = 0; i < b->nu; ++i)
    for (int k = 0; k < i; ++k)
      if (b->acts[i].name && b->acts[k].name && !strcmp(b->acts[i].name, b->acts[k].name))
        return grit_set_error(b->message, GRIT_ERR_INVALID_MODEL, "actuators %d and %d share the name '%s'", k, i,
                              b->acts[i].name);
  return GRIT_OK;
}

/* Visits the subtree of `body` depth first (children in increasing index) and numbers the
 * coordinates of its joints. `last_dof` is the last dof on the path from the root to body's parent. */
static void number_subtree(const grit_builder *b, grit_model *m, int body, int tree, int last_dof, int *qadr,
                           int *dadr) {
  m->body_tree[body] = tree;
  m->body_dofadr[body] = m->body_jntnum[body] ? *dadr : -1;
  m->body_dofnum[body] = 0;
  for (int k = 0; k < m->body_jntnum[body]; ++k) {
    int j = m->body_jnt[m->body_jntadr[body] + k];
    int t = m->jnt_type[j], nq = grit_joint_nq(t), nv = grit_joint_nv(t);
    m->jnt_qposadr[j] = *qadr;
    m->jnt_dofadr[j] = *dadr;
    const grit_joint_def *d = &b->joints[j].def;
    if (t == GRIT_JOINT_FREE) {
      for (int i = 0; i < 3; ++i) m->qpos0[*qadr + i] = b->bodies[body].def.pos[i];
      for (int i = 0; i < 4; ++i) m->qpos0[*qadr + 3 + i] = b->bodies[body].def.quat[i];
    } else if (t == GRIT_JOINT_BALL) {
      m->qpos0[*qadr] = 1.0;
      m->qpos0[*qadr + 1] = m->qpos0[*qadr + 2] = m->qpos0[*qadr + 3] = 0.0;
    } else {
      m->qpos0[*qadr] = d->qpos0;
    }
    for (int i = 0; i < nv; ++i) {
      int dof = *dadr + i;
      m->dof_body[dof] = body;
      m->dof_jnt[dof] = j;
      m->dof_parent[dof] = last_dof;
      m->dof_tree[dof] = tree;
      m->dof_damping[dof] = d->damping;
      m->dof_armature[dof] = d->armature;
      m->dof_frictionloss[dof] = d->frictionloss;
      last_dof = dof;
    }
    m->body_dofnum[body] += nv;
    *qadr += nq;
    *dadr += nv;
  }
  for (int c = body + 1; c < m->nbody; ++c)
    if (m->body_parent[c] == body) number_subtree(b, m, c, tree, last_dof, qadr, dadr);
}

/* The number of dofs in the subtree of `body`. */
static int subtree_dofs(const grit_builder *b, int body) {
  int n = 0;
  for (int j = 0; j < b->njnt; ++j)
    if (b->joints[j].body == body) n += grit_joint_nv(b->joints[j].def.type);
  for (int c = body + 1; c < b->nbody; ++c)
    if (b->bodies[c].def.parent == body) n += subtree_dofs(b, c);
  return n;
}

/* Phase 1 of compiling: the model's sizes and the bytes of its names, from the builder. */
static size_t compile_sizes(const grit_builder *b, grit_model *sizes) {
  memset(sizes, 0, sizeof *sizes);
  sizes->opt = b->opt;
  sizes->nbody = b->nbody;
  sizes->njnt = b->njnt;
  sizes->nu = b->nu;
  sizes->ngeom = b->ngeom;
  for (int g = 0; g < b->ngeom; ++g)
    if (b->geoms[g].shape.type == GRIT_GEOM_CONVEX || b->geoms[g].shape.type == GRIT_GEOM_HFIELD)
      sizes->nvert += b->geoms[g].shape.nvert;
  for (int g = 0; g < b->ngeom; ++g)
    if (b->geoms[g].shape.type == GRIT_GEOM_CONVEX) sizes->ngraph += (int)grit_hull_graph_ints(b->geoms[g].shape.nvert);
  sizes->nhtet = grit_hydro_model_tets(b->geoms, b->ngeom);
  for (int j = 0; j < b->njnt; ++j) {
    sizes->nq += grit_joint_nq(b->joints[j].def.type);
    sizes->nv += grit_joint_nv(b->joints[j].def.type);
  }
  for (int c = 1; c < b->nbody; ++c)
    if (b->bodies[c].def.parent == 0 && subtree_dofs(b, c) > 0) sizes->ntree++;
  sizes->nexclude = b->nexcl;
  sizes->npair = b->ngpair;
  size_t names_bytes = 0;
  for (int i = 0; i < b->nbody; ++i)
    if (b->bodies[i].def.name) names_bytes += strlen(b->bodies[i].def.name) + 1;
  for (int i = 0; i < b->njnt; ++i)
    if (b->joints[i].def.name) names_bytes += strlen(b->joints[i].def.name) + 1;
  for (int i = 0; i < b->nu; ++i)
    if (b->acts[i].name) names_bytes += strlen(b->acts[i].name) + 1;
  for (int i = 0; i < b->ngeom; ++i)
    if (b->geoms[i].name) names_bytes += strlen(b->geoms[i].name) + 1;
  return names_bytes + grit_cx_sizes(&b->cx, sizes);
}

/* Phase 2: one allocation for the model's arrays (arena.h), laid out by grit_model_layout; *names points at
 * the string area at its end. NULL when out of memory. */
static grit_model *compile_allocate(grit_model *sizes, size_t names_bytes, char **names) {
  grit_carver c = {NULL, 0};
  grit_model_layout(sizes, &c, names_bytes);
  grit_model *m = calloc(1, sizeof *m);
  void *arena = calloc(1, c.used + 64);
  if (!m || !arena) {
    free(m);
    free(arena);
    return NULL;
  }
  *m = *sizes;
  m->arena = arena;
  c.base = arena;
  c.used = 0;
  grit_model_layout(m, &c, names_bytes);
  *names = (char *)arena + c.used - names_bytes;
  return m;
}

/* Phase 3: bodies (with the list of their joints) and joints. */
static void compile_bodies_joints(const grit_builder *b, grit_model *m, char **names) {
  int jcount = 0;
  for (int i = 0; i < m->nbody; ++i) {
    const grit_body_def *d = &b->bodies[i].def;
    m->body_parent[i] = d->parent;
    m->body_tree[i] = -1;
    m->body_dofadr[i] = -1;
    memcpy(m->body_pos + 3 * i, d->pos, sizeof d->pos);
    memcpy(m->body_quat + 4 * i, d->quat, sizeof d->quat);
    m->body_mass[i] = d->mass;
    m->body_gravcomp[i] = d->gravcomp;
    memcpy(m->body_com + 3 * i, d->com, sizeof d->com);
    memcpy(m->body_inertia + 9 * i, d->inertia, sizeof d->inertia);
    memcpy(m->body_iquat + 4 * i, d->inertia_quat, sizeof d->inertia_quat);
    m->body_name[i] = store_name(names, d->name);
    m->body_jntadr[i] = jcount;
    m->body_jntnum[i] = 0;
    for (int j = 0; j < b->njnt; ++j)
      if (b->joints[j].body == i) {
        m->body_jnt[jcount++] = j;
        m->body_jntnum[i]++;
      }
  }
  for (int j = 0; j < m->njnt; ++j) {
    const grit_joint_def *d = &b->joints[j].def;
    m->jnt_type[j] = d->type;
    m->jnt_body[j] = b->joints[j].body;
    m->jnt_limited[j] = d->limited != 0;
    memcpy(m->jnt_pos + 3 * j, d->pos, sizeof d->pos);
    memcpy(m->jnt_axis + 3 * j, d->axis, sizeof d->axis);
    memcpy(m->jnt_range + 2 * j, d->range, sizeof d->range);
    m->jnt_stiffness[j] = d->stiffness;
    m->jnt_springref[j] = d->spring_ref;
    m->jnt_limit_taud[j] = 2.0 * d->solreflimit[0] * d->solreflimit[1] * d->solreflimit[1];
    m->jnt_limit_width[j] = d->limit_width;
    m->jnt_name[j] = store_name(names, d->name);
  }
}

/* Phase 4: coordinates and dofs, tree by tree (a tree: a subtree of the world with dofs), and each
 * body's last dof on its path to the root. */
static void compile_coordinates(const grit_builder *b, grit_model *m) {
  int qadr = 0, dadr = 0, tree = 0, madr = 0;
  for (int r = 1; r < m->nbody; ++r) {
    if (m->body_parent[r] != 0) continue;
    if (subtree_dofs(b, r) == 0) continue; /* welded to the world: static, body_tree stays -1 */
    m->tree_dofadr[tree] = dadr;
    number_subtree(b, m, r, tree, -1, &qadr, &dadr);
    m->tree_dofnum[tree] = dadr - m->tree_dofadr[tree];
    m->tree_madr[tree] = madr;
    madr += m->tree_dofnum[tree] * m->tree_dofnum[tree];
    tree++;
  }
  m->nM = madr;
  for (int i = 0; i < m->nbody; ++i) { /* parents precede children */
    m->body_lastdof[i] = i == 0 ? -1 : m->body_lastdof[m->body_parent[i]];
    if (m->body_dofnum[i] > 0) m->body_lastdof[i] = m->body_dofadr[i] + m->body_dofnum[i] - 1;
  }
}

/* Phase 5: actuators (after the coordinates: an actuator's dof). */
static void compile_actuators(const grit_builder *b, grit_model *m, char **names) {
  for (int a = 0; a < m->nu; ++a) {
    const grit_actuator_def *d = &b->acts[a];
    m->act_jnt[a] = d->trntype == GRIT_TRN_JOINT ? d->joint : -1; /* tendons: grit_actuator_compile_tendons */
    m->act_dof[a] = d->trntype == GRIT_TRN_JOINT ? m->jnt_dofadr[d->joint] : -1; /* BODY: grit_adhesion_compile */
    m->act_limited[a] = d->ctrl_limited != 0;
    m->act_gear[a] = d->gear;
    memcpy(m->act_range + 2 * a, d->ctrl_range, sizeof d->ctrl_range);
    m->act_name[a] = store_name(names, d->name);
    grit_actuator_compile(m, a, d);
  }
}

/* Phase 6: geometries, convex vertices copied into the model's own array. */
static void compile_geoms(const grit_builder *b, grit_model *m, char **names) {
  int vadr = 0;
  size_t gadr = 0;
  for (int g = 0; g < m->ngeom; ++g) {
    const grit_geom_def *d = &b->geoms[g];
    m->geom_body[g] = d->body;
    m->geom_shape[g] = d->shape;
    m->geom_shape[g].graph = NULL;
    if (d->shape.type == GRIT_GEOM_CONVEX || d->shape.type == GRIT_GEOM_HFIELD) {
      memcpy(m->geom_vert + 3 * vadr, d->shape.vertices, sizeof(double) * 3 * (size_t)d->shape.nvert);
      m->geom_shape[g].vertices = m->geom_vert + 3 * vadr;
      vadr += d->shape.nvert;
    }
    if (d->shape.type == GRIT_GEOM_CONVEX && grit_hull_graph_ints(d->shape.nvert) > 0) {
      if (grit_hull_graph_build(&m->geom_shape[g], m->geom_graph + gadr)) m->geom_shape[g].graph = m->geom_graph + gadr;
      gadr += grit_hull_graph_ints(d->shape.nvert);
    }
    memcpy(m->geom_pos + 3 * g, d->pos, sizeof d->pos);
    memcpy(m->geom_quat + 4 * g, d->quat, sizeof d->quat);
    grit_quat_to_mat(m->geom_mat + 9 * g, d->quat);
    m->geom_friction[g] = d->friction;
    m->geom_stiffness[g] = d->stiffness;
    m->geom_dissipation[g] = d->dissipation;
    m->geom_taud[g] = d->tau_d;
    m->geom_margin[g] = d->margin;
    m->geom_gap[g] = d->gap;
    m->geom_priority[g] = d->priority;
    m->geom_condim[g] = d->condim;
    m->geom_contype[g] = d->contype;
    m->geom_conaffinity[g] = d->conaffinity;
    m->geom_name[g] = store_name(names, d->name);
    (void)grit_fluid_geom_compile(d, g, m->geom_fluid + GRIT_FLUID_NGEOM * g, NULL); /* checked when added */
    m->body_fluid_ellipsoid[d->body] |= d->fluid_ellipsoid != 0;
  }
}

grit_status grit_builder_compile(grit_builder *b, grit_model **out) {
  if (!out) return GRIT_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (!b) return GRIT_ERR_INVALID_ARGUMENT;
  grit_status s = check_unique_names(b);
  if (s != GRIT_OK) return s;

  grit_model sizes;
  size_t names_bytes = compile_sizes(b, &sizes);
  char *names = NULL;
  grit_model *m = compile_allocate(&sizes, names_bytes, &names);
  if (!m) return grit_set_error(b->message, GRIT_ERR_OUT_OF_MEMORY, "out of memory compiling the model");
  compile_bodies_joints(b, m, &names);
  compile_coordinates(b, m);
  compile_actuators(b, m, &names);
  compile_geoms(b, m, &names);
  grit_model_filters(m, b->excl, b->gpair, !b->no_filter_parent);
  grit_hydro_compile(b->geoms, m);
  grit_model_allowed_table(m);
  s = grit_cx_compile(&b->cx, m, &names, b->message);
  if (s == GRIT_OK) s = grit_actuator_compile_const(m, b->message); /* acc0, muscle length ranges */
  if (s != GRIT_OK) {
    grit_model_free(m);
    return s;
  }
  *out = m;
  b->message[0] = '\0';
  return GRIT_OK;
}
