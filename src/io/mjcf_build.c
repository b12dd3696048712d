/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_build.c — compiling the MJCF description into a grit_model, as MuJoCo's compiler does:
 * orientations from every MJCF form, geometry frames from fromto, geometry masses from density and
 * volume, body mass properties from <inertial> or summed over geometries with the parallel-axis
 * theorem, joint angles in degrees or radians, limits, actuators, and keyframes.
 *
 * The arithmetic follows MuJoCo 2.2.2's compiler operation for operation (mjcf_frames.c; the steps
 * below mirror mjCGeom::Compile, mjCBody::GeomFrame and mjCBody::Compile), so compiled quantities agree
 * with MuJoCo's to rounding. One deliberate difference: an inertia summed over several geometries (or
 * given as fullinertia) goes to grit as the exact matrix, where MuJoCo diagonalizes it with an
 * iterative eigensolver that stops at a tolerance (up to ~1e-6 relative in its reconstruction; 1.9e-8
 * measured in tests/test_mjcf_mujoco.c). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/data.h"
#include "hydro.h"
#include "mjcf_internal.h"

static const double PI = 3.14159265358979323846;
static const double MJ_EPS = 1e-14;    /* MuJoCo's mjEPS (user_util.h) */
static const double MJ_MINVAL = 1e-15; /* MuJoCo's mjMINVAL (mjtnum.h) */

/* An error at a line of the file, for stages that no longer have the XML node. */
static void fail_at(mjcf_ctx *c, grit_status s, const char *element, const char *file, int line, const char *what,
                    const char *detail) {
  mjcf_node n;
  memset(&n, 0, sizeof n);
  n.name = element;
  n.file = file;
  n.line = line;
  mjcf_fail(c, s, &n, "%s%s", what, detail ? detail : "");
}

static void warn_at(mjcf_ctx *c, const char *element, const char *file, int line, const char *what) {
  mjcf_node n;
  memset(&n, 0, sizeof n);
  n.name = element;
  n.file = file;
  n.line = line;
  mjcf_warn(c, &n, "%s", what);
}

typedef struct name_entry {
  const char *name;
  int index;
} name_entry;

static int cmp_names(const void *a, const void *b) {
  return strcmp(((const name_entry *)a)->name, ((const name_entry *)b)->name);
}

/* The named entries of an array of n structs (`stride` bytes apart, the name at `offset`), sorted
 * for bsearch; *count of them. NULL (and an error) when out of memory. */
static name_entry *name_index(mjcf_ctx *c, const void *base, int n, size_t stride, size_t offset, int *count) {
  name_entry *e = malloc(sizeof *e * (size_t)(n + 1));
  if (!e) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return NULL;
  }
  int k = 0;
  for (int i = 0; i < n; ++i) {
    const char *name = *(const char *const *)((const char *)base + (size_t)i * stride + offset);
    if (name) e[k].name = name, e[k++].index = i;
  }
  qsort(e, (size_t)k, sizeof *e, cmp_names);
  *count = k;
  return e;
}

/* Names must be unique among the elements of one kind: an error at the second use. */
static void check_names(mjcf_ctx *c, const char *element, const void *base, int n, size_t stride, size_t name_offset,
                        size_t line_offset) {
  int k = 0;
  if (c->status != GRIT_OK) return;
  name_entry *e = name_index(c, base, n, stride, name_offset, &k);
  for (int i = 1; e && i < k && c->status == GRIT_OK; ++i)
    if (!strcmp(e[i].name, e[i - 1].name)) {
      const int a = e[i].index < e[i - 1].index ? e[i].index : e[i - 1].index, b = e[i].index ^ e[i - 1].index ^ a;
      const int la = *(const int *)((const char *)base + (size_t)a * stride + line_offset);
      const int lb = *(const int *)((const char *)base + (size_t)b * stride + line_offset);
      char what[96];
      snprintf(what, sizeof what, "the name is also used at line %d: ", la);
      fail_at(c, GRIT_ERR_INVALID_MODEL, element, NULL, lb, what, e[i].name);
    }
  free(e);
}

static int lookup(const name_entry *e, int n, const char *name) {
  if (!e || !name) return -1;
  name_entry key = {name, 0};
  const name_entry *r = bsearch(&key, e, (size_t)n, sizeof *e, cmp_names);
  return r ? r->index : -1;
}

/* Whether geometry g is in grit's model: it may collide. The others (contype = conaffinity = 0, the
 * visual geometries of most robot files) only count for their body's mass. */
static int geom_collides(const mjcf_geom *g) { return g->contype || g->conaffinity || g->in_pair; }

/* Frame and sizes of geometry g (mjCGeom::Compile). */
static void compile_geom(mjcf_ctx *c, mjcf_geom *g, const name_entry *meshes, int nmesh) {
  memcpy(g->csize, g->size, sizeof g->csize);
  memcpy(g->cpos, g->pos, sizeof g->cpos);
  if (g->has_fromto) {
    if (g->type != MJCF_GEOM_CAPSULE && g->type != MJCF_GEOM_CYLINDER && g->type != MJCF_GEOM_ELLIPSOID &&
        g->type != MJCF_GEOM_BOX) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "fromto requires a capsule, cylinder, box or ellipsoid", 0);
      return;
    }
    if (g->pos[0] || g->pos[1] || g->pos[2]) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "both pos and fromto are given", 0);
      return;
    }
    const double *f = g->fromto;
    double vec[3] = {f[0] - f[3], f[1] - f[4], f[2] - f[5]};
    g->csize[1] = mjcf_normvec(vec, 3) / 2;
    if (g->csize[1] < MJ_EPS) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "fromto points too close", 0);
      return;
    }
    if (g->type == MJCF_GEOM_ELLIPSOID || g->type == MJCF_GEOM_BOX) {
      g->csize[2] = g->csize[1];
      g->csize[1] = g->csize[0];
    }
    for (int i = 0; i < 3; ++i) g->cpos[i] = (f[i] + f[i + 3]) / 2;
    mjcf_z2quat(g->cquat, vec);
  } else {
    const char *err = mjcf_orient_quat(c, &g->ori, g->cquat);
    if (err) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, err, 0);
      return;
    }
  }
  if (g->type == MJCF_GEOM_MESH) {
    g->mesh_index = lookup(meshes, nmesh, g->mesh);
    if (g->mesh_index < 0) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "a mesh geometry needs the name of an <asset><mesh>", 0);
      return;
    }
    const mjcf_mesh *m = MJCF_AT(c->meshes, mjcf_mesh, g->mesh_index);
    if (m->hull_error && geom_collides(g)) fail_at(c, m->hull_status, "mesh", m->file, m->line, m->hull_error, 0);
  } else if (g->mesh) { /* a primitive fitted to the mesh, as MuJoCo */
    const int k = lookup(meshes, nmesh, g->mesh);
    const mjcf_mesh *m = k >= 0 ? MJCF_AT(c->meshes, mjcf_mesh, k) : NULL;
    if (!m) fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "unknown mesh ", g->mesh);
    else if (g->has_fromto)
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "'fromto' cannot be used with a mesh", 0);
    else if (m->hull_error && !m->ntri) fail_at(c, m->hull_status, "mesh", m->file, m->line, m->hull_error, 0);
    else if (g->type == MJCF_GEOM_PLANE)
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "a plane cannot be fitted to a mesh", 0);
    else mjcf_mesh_fit(c, m, g);
    if (c->status != GRIT_OK) return;
  }
  if (g->type == MJCF_GEOM_HFIELD) {
    const int k = mjcf_hfield_index(c, g->hfield);
    if (k < 0) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "a hfield geometry needs the name of an <asset><hfield>", 0);
      return;
    }
    if (!MJCF_AT(c->hfields, mjcf_hfield, k)->grid) g->contype = g->conaffinity = 0, g->in_pair = 0; /* left out */
  }
  static const int nsize[] = {0, 1, 2, 3, 2, 3, 0, 0};
  for (int i = 0; i < nsize[g->type]; ++i)
    if (!(g->csize[i] > 0)) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "sizes must be positive", 0);
      return;
    }
  if (g->has_mass ? g->mass < 0 : g->density < 0)
    fail_at(c, GRIT_ERR_INVALID_MODEL, "geom", g->file, g->line, "mass and density must be >= 0", 0);
}

/* ---------------------------------------------------------------------------------- bodies */

static int geom_body(const mjcf_ctx *c, int i) { return MJCF_AT(c->geoms, mjcf_geom, i)->body; }
static int joint_body(const mjcf_ctx *c, int i) { return MJCF_AT(c->joints, mjcf_joint, i)->body; }
static int body_parent(const mjcf_ctx *c, int i) { return i == 0 ? 0 : MJCF_AT(c->bodies, mjcf_body, i)->parent; }

/* Groups n items by body (a counting sort that keeps document order): the items of body b are
 * list[start[b] .. start[b+1]). */
static int group_by_body(mjcf_ctx *c, int n, int (*body_of)(const mjcf_ctx *, int), int **start, int **list) {
  const int nb = c->bodies.n;
  *start = calloc((size_t)nb + 2, sizeof **start);
  *list = malloc(sizeof **list * (size_t)(n + 1));
  int *fill = calloc((size_t)nb + 1, sizeof *fill);
  if (!*start || !*list || !fill) {
    free(fill);
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
    return 0;
  }
  for (int i = 0; i < n; ++i) (*start)[body_of(c, i) + 1]++;
  for (int b = 0; b < nb; ++b) (*start)[b + 1] += (*start)[b];
  for (int i = 0; i < n; ++i) {
    int b = body_of(c, i);
    (*list)[(*start)[b] + fill[b]++] = i;
  }
  free(fill);
  return 1;
}

typedef struct groups {
  int *geom_start, *geom_list, *joint_start, *joint_list, *child_start, *child_list;
} groups;

/* Positive mass and a positive definite inertia (Cholesky pivots above MuJoCo's mjMINVAL). */
static int has_inertia(const mjcf_body *b) {
  if (!(b->mass >= MJ_MINVAL)) return 0;
  const double *I = b->inertia;
  double l00 = I[0];
  if (!(l00 >= MJ_MINVAL)) return 0;
  double l10 = I[3] / sqrt(l00), l20 = I[6] / sqrt(l00);
  double d1 = I[4] - l10 * l10;
  if (!(d1 >= MJ_MINVAL)) return 0;
  double l21 = (I[7] - l20 * l10) / sqrt(d1);
  double d2 = I[8] - l20 * l20 - l21 * l21;
  return d2 >= MJ_MINVAL;
}

/* Adds the mass properties of body k (its frame (pos, quat) in the parent p) to p's. */
static void add_mass(mjcf_body *p, const mjcf_body *k) {
  if (k->mass <= 0) return;
  double R[9], ck[3], Ik[9], tmp[9];
  mjcf_quat2mat(R, k->quat);
  for (int i = 0; i < 3; ++i) ck[i] = k->pos[i] + R[3 * i] * k->com[0] + R[3 * i + 1] * k->com[1] + R[3 * i + 2] * k->com[2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      tmp[3 * i + j] = R[3 * i] * k->inertia[j] + R[3 * i + 1] * k->inertia[3 + j] + R[3 * i + 2] * k->inertia[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Ik[3 * i + j] = tmp[3 * i] * R[3 * j] + tmp[3 * i + 1] * R[3 * j + 1] + tmp[3 * i + 2] * R[3 * j + 2];
  const double m = p->mass + k->mass;
  double com[3], dp[3], dk[3], op[6], ok[6], I[9], Op[9], Ok[9];
  for (int i = 0; i < 3; ++i) {
    com[i] = (p->mass * p->com[i] + k->mass * ck[i]) / m;
    dp[i] = p->com[i] - com[i];
    dk[i] = ck[i] - com[i];
  }
  mjcf_offcenter(op, p->mass > 0 ? p->mass : 0, dp);
  mjcf_offcenter(ok, k->mass, dk);
  mjcf_sym6_to_mat(Op, op);
  mjcf_sym6_to_mat(Ok, ok);
  for (int i = 0; i < 9; ++i) I[i] = (p->mass > 0 ? p->inertia[i] : 0) + Op[i] + Ik[i] + Ok[i];
  p->mass = m;
  memcpy(p->com, com, sizeof com);
  memcpy(p->inertia, I, sizeof I);
}

/* A weld folds body k into p: the merged body compensates its weight as k does where p has no mass yet;
 * two masses compensated differently cannot be one body. */
static void fold_gravcomp(mjcf_ctx *c, mjcf_body *p, const mjcf_body *k) {
  if (!(k->mass > 0)) return;
  if (!has_inertia(p)) p->gravcomp = k->gravcomp;
  else if (p->gravcomp != k->gravcomp)
    fail_at(c, GRIT_ERR_UNSUPPORTED, "body", k->file, k->line,
            "a body welded into a massless moving parent with other welded bodies has a different gravcomp: grit "
            "cannot merge them into one body", 0);
}

/* grit needs mass on every body: a massless body without joints is folded into its parent; a moving
 * body without mass takes in its welded children (MuJoCo accepts a massless moving body when such a
 * child carries the mass). Bodies are visited children first. */
static void fold_bodies(mjcf_ctx *c, const groups *gr) {
  mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  for (int k = c->bodies.n - 1; k >= 1 && c->status == GRIT_OK; --k) {
    mjcf_body *b = &B[k];
    if (b->njoint > 0 && !has_inertia(b)) {
      for (int i = gr->child_start[k]; i < gr->child_start[k + 1]; ++i) {
        const int j = gr->child_list[i];
        if (j != k && B[j].folded_into < 0 && B[j].njoint == 0) {
          fold_gravcomp(c, b, &B[j]);
          add_mass(b, &B[j]);
          B[j].folded_into = k;
        }
      }
      if (!has_inertia(b))
        fail_at(c, GRIT_ERR_INVALID_MODEL, "body", b->file, b->line,
                "a moving body needs positive mass and inertia (from <inertial>, its geometries or welded children)", 0);
    } else if (b->njoint == 0 && !has_inertia(b)) {
      if (b->parent > 0) add_mass(&B[b->parent], b);
      b->folded_into = b->parent;
    }
  }
}

/* The frame (pos, quat) of body k's frame-child (pos, quat) in k's nearest unfolded ancestor-or-self;
 * returns that ancestor. */
int mjcf_unfolded_frame(const mjcf_body *B, int k, double pos[3], double quat[4]) {
  while (k > 0 && B[k].folded_into >= 0) {
    double R[9], p[3];
    mjcf_quat2mat(R, B[k].quat);
    for (int i = 0; i < 3; ++i) p[i] = B[k].pos[i] + R[3 * i] * pos[0] + R[3 * i + 1] * pos[1] + R[3 * i + 2] * pos[2];
    memcpy(pos, p, sizeof p);
    mjcf_mulquat(quat, B[k].quat, quat);
    k = B[k].parent;
  }
  return k;
}

/* -------------------------------------------------------------------------------- building */

static void builder_failed(mjcf_ctx *c, grit_status s, grit_builder *b, const char *element, const char *file,
                           int line) {
  fail_at(c, s, element, file, line, "", grit_builder_last_error(b));
}

static int resolve_limited(mjcf_ctx *c, int limited, const double range[2], const char *element, const char *file,
                           int line,
                           const char *attr) {
  if (limited != 2) return limited;
  const int has_range = !(range[0] == 0 && range[1] == 0);
  if (has_range && !c->autolimits) {
    char what[120];
    snprintf(what, sizeof what, "'%srange' without '%slimited' (set compiler autolimits=\"true\")", attr, attr);
    fail_at(c, GRIT_ERR_INVALID_MODEL, element, file, line, what, 0);
  }
  return has_range;
}

static void add_joint(mjcf_ctx *c, grit_builder *gb, const mjcf_joint *j, int body) {
  grit_joint_def d = grit_default_joint_def();
  d.name = j->name;
  d.type = (grit_joint_type)j->type;
  const double deg = j->type == GRIT_JOINT_HINGE && c->degree ? PI / 180.0 : 1.0;
  int limited = resolve_limited(c, j->limited, j->range, "joint", j->file, j->line, "");
  if (c->no_limits) limited = 0; /* <flag limit="disable"> */
  if (j->type == GRIT_JOINT_HINGE || j->type == GRIT_JOINT_SLIDE) {
    memcpy(d.pos, j->pos, sizeof d.pos);
    memcpy(d.axis, j->axis, sizeof d.axis);
    const double n = mjcf_normvec(d.axis, 3);
    if (!(n >= MJ_EPS) || !isfinite(n)) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, "joint", j->file, j->line, n == 0 ? "axis too small" : "axis too large", 0);
      return;
    }
    d.limited = limited;
    if (limited) {
      d.range[0] = j->range[0] * deg;
      d.range[1] = j->range[1] * deg;
    }
    d.stiffness = j->stiffness;
    d.solreflimit[0] = j->solreflimit[0], d.solreflimit[1] = j->solreflimit[1];
    d.limit_width = j->solimplimit[2];
    d.spring_ref = j->springref * deg;
    d.qpos0 = j->ref * deg;
  } else {
    if (j->type == GRIT_JOINT_BALL) memcpy(d.pos, j->pos, sizeof d.pos);
    /* MuJoCo 2.2.2 simulates both: unsupported dynamics (an error; lenient: a warning, left out) */
    mjcf_node at = {.name = "joint", .file = j->file, .line = j->line};
    if (limited) mjcf_unsupported(c, &at, "limits of ball joints are not supported");
    if (j->stiffness != 0 && c->status == GRIT_OK)
      mjcf_unsupported(c, &at, "springs on ball and free joints are not supported");
  }
  d.damping = j->damping;
  d.armature = j->armature;
  d.frictionloss = j->frictionloss;
  if (c->status != GRIT_OK) return;
  grit_status s = grit_builder_add_joint(gb, body, &d, NULL);
  if (s != GRIT_OK) builder_failed(c, s, gb, "joint", j->file, j->line);
}

static void add_geom(mjcf_ctx *c, grit_builder *gb, mjcf_geom *g, int body, const double pos[3],
                     const double quat[4]) {
  grit_geom_def d = grit_default_geom_def();
  d.name = g->name;
  d.body = body;
  const double *s = g->csize;
  switch (g->type) {
    case MJCF_GEOM_PLANE: d.shape = grit_shape_make(GRIT_GEOM_PLANE, 0, 0, 0); break;
    case MJCF_GEOM_SPHERE: d.shape = grit_shape_make(GRIT_GEOM_SPHERE, s[0], 0, 0); break;
    case MJCF_GEOM_CAPSULE: d.shape = grit_shape_make(GRIT_GEOM_CAPSULE, s[0], s[1], 0); break;
    case MJCF_GEOM_CYLINDER: d.shape = grit_shape_make(GRIT_GEOM_CYLINDER, s[0], s[1], 0); break;
    case MJCF_GEOM_ELLIPSOID: d.shape = grit_shape_make(GRIT_GEOM_ELLIPSOID, s[0], s[1], s[2]); break;
    case MJCF_GEOM_BOX: d.shape = grit_shape_make(GRIT_GEOM_BOX, s[0], s[1], s[2]); break;
    case MJCF_GEOM_HFIELD: {
      const mjcf_hfield *h = MJCF_AT(c->hfields, mjcf_hfield, mjcf_hfield_index(c, g->hfield));
      d.shape = grit_shape_hfield(h->grid, h->nrow, h->ncol, h->size[0], h->size[1], h->size[3]);
      break;
    }
    default: {
      const mjcf_mesh *m = MJCF_AT(c->meshes, mjcf_mesh, g->mesh_index);
      d.shape = grit_shape_convex(m->hvert, m->nhvert);
    }
  }
  memcpy(d.pos, pos, sizeof d.pos);
  memcpy(d.quat, quat, sizeof d.quat);
  d.friction = g->friction;
  d.condim = g->condim == 1 ? 1 : 3; /* condim 1: frictionless pairs (the pair's condim: constraints_generic.h) */
  d.margin = g->margin;
  d.gap = g->gap;
  d.priority = g->priority;
  if (g->condim > 3) warn_at(c, "geom", g->file, g->line, "condim 4 and 6 (torsional, rolling friction) are treated as 3");
  d.stiffness = c->stiffness;
  d.dissipation = c->dissipation;
  d.tau_d = c->tau_d;
  const grit_mjcf_load_options *o = &c->load;
  if (o->friction >= 0) d.friction = o->friction;
  if (o->stiffness > 0) d.stiffness = o->stiffness;
  if (o->dissipation >= 0) d.dissipation = o->dissipation;
  if (o->tau_d >= 0) d.tau_d = o->tau_d;
  for (int i = 0; i < c->hydro.n; ++i) { /* <custom> grit_hydro_modulus:NAME */
    mjcf_hydro *h = MJCF_AT(c->hydro, mjcf_hydro, i);
    if (g->name && !strcmp(g->name, h->geom)) {
      d.hydro_modulus = h->modulus;
      h->used = 1;
    }
  }
  if (o->hydro_modulus > 0 && grit_hydro_shape_supported(d.shape.type)) d.hydro_modulus = o->hydro_modulus;
  /* MuJoCo 2.2.2's ellipsoid fluid model (fluid_ellipsoid.c), asked of grit only when the fluid is on */
  d.fluid_ellipsoid = g->fluid_ellipsoid && (c->opt.density > 0 || c->opt.viscosity > 0);
  memcpy(d.fluid_coef, g->fluid_coef, sizeof d.fluid_coef);
  d.contype = c->no_contacts ? 0 : g->contype;
  d.conaffinity = c->no_contacts ? 0 : g->conaffinity;
  grit_status st = grit_builder_add_geom(gb, &d, &g->grit_index);
  if (st != GRIT_OK) builder_failed(c, st, gb, "geom", g->file, g->line);
}

static void add_actuators(mjcf_ctx *c, grit_builder *gb, const int *grit_joint) {
  int n = 0;
  name_entry *names = name_index(c, c->joints.data, c->joints.n, sizeof(mjcf_joint), offsetof(mjcf_joint, name), &n);
  if (!names) return;
  for (int a = 0; a < c->acts.n && c->status == GRIT_OK; ++a) {
    mjcf_actuator *A = MJCF_AT(c->acts, mjcf_actuator, a);
    if (!A->supported) continue;
    if (A->body) { /* adhesion (mjcf_adhesion.c) */
      grit_actuator_def d = mjcf_actuator_def(c, A);
      if (!mjcf_adhesion_body(c, A, &d)) break;
      grit_status s = grit_builder_add_actuator(gb, &d, NULL);
      if (s != GRIT_OK) builder_failed(c, s, gb, A->element, A->file, A->line);
      continue;
    }
    const int t = A->tendon ? mjcf_cx_tendon_index(c, A->tendon) : -1;
    int j = -1;
    if (A->tendon && t < 0) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, A->element, A->file, A->line, "unknown tendon ", A->tendon);
      break;
    }
    if (A->cranksite || A->site) { /* the slider-crank and the site transmission (issue 24) */
      grit_actuator_def d = mjcf_actuator_def(c, A);
      if (c->status == GRIT_OK && A->cranksite) mjcf_actuator_crank(c, A, &d); /* mjcf_actuator.c */
      if (c->status == GRIT_OK && A->site) mjcf_actuator_site(c, A, &d);
      if (c->status != GRIT_OK) break;
      grit_status s = grit_builder_add_actuator(gb, &d, NULL);
      if (s != GRIT_OK) builder_failed(c, s, gb, A->element, A->file, A->line);
      continue;
    }
    if (!A->tendon && (j = lookup(names, n, A->joint)) < 0) {
      fail_at(c, GRIT_ERR_INVALID_MODEL, A->element, A->file, A->line, "unknown joint ", A->joint);
      break;
    }
    grit_actuator_def d = mjcf_actuator_def(c, A); /* mjcf_actuator.c */
    if (t >= 0) d.trntype = GRIT_TRN_TENDON, d.tendon = t;
    else d.joint = grit_joint[j];
    if (t < 0) mjcf_actfrc_apply(c, A, MJCF_AT(c->joints, mjcf_joint, j), &d); /* actuatorfrcrange */
    mjcf_actuator_lengthrange(c, j, t, &d); /* the compiler's <lengthrange> options */
    if (c->status != GRIT_OK) break;
    grit_status s = grit_builder_add_actuator(gb, &d, NULL);
    if (s == GRIT_ERR_UNSUPPORTED) { /* the engine's limit (e.g. a tendon across two trees): lenient may skip it */
      mjcf_node at;
      memset(&at, 0, sizeof at);
      at.name = A->element, at.file = A->file, at.line = A->line;
      mjcf_unsupported(c, &at, "%.200s", grit_builder_last_error(gb));
      A->supported = 0; /* not in the model: the keyframes' controls skip it */
    } else if (s != GRIT_OK) {
      builder_failed(c, s, gb, A->element, A->file, A->line);
    }
  }
  free(names);
}

/* The bodies (folded ones left out) and their joints, in document order; grit_joint[j]: the builder's
 * index of MJCF joint j. Also the model of the mass matrix for springdamper (mjcf_springdamper.c). */
void mjcf_build_bodies(mjcf_ctx *c, grit_builder *gb, const int *joint_start, const int *joint_list, int *grit_joint) {
  grit_status s;
  mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  B[0].grit_index = 0;
  int jnext = 0;
  for (int k = 1; k < c->bodies.n && c->status == GRIT_OK; ++k) {
    mjcf_body *b = &B[k];
    if (b->folded_into >= 0) continue;
    grit_body_def d = grit_default_body_def();
    d.name = b->name;
    memcpy(d.pos, b->pos, sizeof d.pos);
    memcpy(d.quat, b->quat, sizeof d.quat);
    d.parent = B[mjcf_unfolded_frame(B, b->parent, d.pos, d.quat)].grit_index;
    d.mass = b->mass;
    d.gravcomp = b->gravcomp;
    memcpy(d.com, b->com, sizeof d.com);
    memcpy(d.inertia, b->inertia, sizeof d.inertia);
    memcpy(d.inertia_quat, b->iquat, sizeof d.inertia_quat); /* the fluid model's axes (fluid.c) */
    s = grit_builder_add_body(gb, &d, &b->grit_index);
    if (s != GRIT_OK) {
      builder_failed(c, s, gb, "body", b->file, b->line);
      return;
    }
    for (int i = joint_start[k]; i < joint_start[k + 1]; ++i) { /* in document order */
      const int j = joint_list[i];
      add_joint(c, gb, MJCF_AT(c->joints, mjcf_joint, j), b->grit_index);
      grit_joint[j] = jnext++;
    }
  }
}

static void build_model(mjcf_ctx *c, grit_builder *gb, const groups *gr, int *grit_joint) {
  grit_options opt = c->opt;
  if (c->load.timestep > 0) opt.timestep = c->load.timestep;
  if (c->load.explicit_actuation) opt.explicit_actuation = 1;
  if (c->load.explicit_gyroscopic) opt.explicit_gyroscopic = 1;
  grit_status s = grit_builder_set_options(gb, &opt);
  if (s != GRIT_OK) {
    fail_at(c, s, "option", NULL, 0, "", grit_builder_last_error(gb));
    return;
  }
  mjcf_build_bodies(c, gb, gr->joint_start, gr->joint_list, grit_joint);
  mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  for (int i = 0; i < c->geoms.n && c->status == GRIT_OK; ++i) { /* body by body, as MuJoCo numbers them */
    mjcf_geom *G = MJCF_AT(c->geoms, mjcf_geom, gr->geom_list[i]);
    G->grit_index = -1;
    const int fluid = G->fluid_ellipsoid && (c->opt.density > 0 || c->opt.viscosity > 0); /* feels the fluid */
    if (!geom_collides(G) && !fluid) continue;
    double pos[3], quat[4];
    memcpy(pos, G->cpos, sizeof pos);
    memcpy(quat, G->cquat, sizeof quat);
    int body = mjcf_unfolded_frame(B, G->body, pos, quat);
    add_geom(c, gb, G, B[body].grit_index, pos, quat);
  }
  if (c->status == GRIT_OK) mjcf_cx_build(c, gb, grit_joint, gr->geom_list);
  for (int i = 0; i < c->hydro.n && c->status == GRIT_OK; ++i) {
    const mjcf_hydro *h = MJCF_AT(c->hydro, mjcf_hydro, i);
    if (!h->used) fail_at(c, GRIT_ERR_INVALID_MODEL, "numeric", NULL, h->line, "grit_hydro_modulus: no geom is called ", h->geom);
  }
  if (c->status == GRIT_OK) add_actuators(c, gb, grit_joint);
  if (c->status == GRIT_OK) mjcf_add_contact_filters(c, gb);
}

void mjcf_build(mjcf_ctx *c, grit_model **model) {
  groups gr;
  memset(&gr, 0, sizeof gr);
  int *grit_joint = NULL;
  name_entry *mesh_names = NULL;
  grit_builder *gb = NULL;
  if (!group_by_body(c, c->geoms.n, geom_body, &gr.geom_start, &gr.geom_list) ||
      !group_by_body(c, c->joints.n, joint_body, &gr.joint_start, &gr.joint_list) ||
      !group_by_body(c, c->bodies.n, body_parent, &gr.child_start, &gr.child_list))
    goto done;
  check_names(c, "body", c->bodies.data, c->bodies.n, sizeof(mjcf_body), offsetof(mjcf_body, name),
              offsetof(mjcf_body, line));
  check_names(c, "joint", c->joints.data, c->joints.n, sizeof(mjcf_joint), offsetof(mjcf_joint, name),
              offsetof(mjcf_joint, line));
  check_names(c, "geom", c->geoms.data, c->geoms.n, sizeof(mjcf_geom), offsetof(mjcf_geom, name),
              offsetof(mjcf_geom, line));
  check_names(c, "motor", c->acts.data, c->acts.n, sizeof(mjcf_actuator), offsetof(mjcf_actuator, name),
              offsetof(mjcf_actuator, line));
  check_names(c, "mesh", c->meshes.data, c->meshes.n, sizeof(mjcf_mesh), offsetof(mjcf_mesh, name),
              offsetof(mjcf_mesh, line));
  int nmesh = 0;
  if (c->status == GRIT_OK) mjcf_mark_pairs(c);
  if (c->status == GRIT_OK) mjcf_cx_mark_wrap_geoms(c); /* a tendon's wrap geometry stays in the model */
  if (c->status == GRIT_OK)
    mesh_names = name_index(c, c->meshes.data, c->meshes.n, sizeof(mjcf_mesh), offsetof(mjcf_mesh, name), &nmesh);
  for (int g = 0; g < c->geoms.n && c->status == GRIT_OK; ++g)
    compile_geom(c, MJCF_AT(c->geoms, mjcf_geom, g), mesh_names, nmesh);
  for (int k = 1; k < c->bodies.n && c->status == GRIT_OK; ++k)
    mjcf_compile_body(c, MJCF_AT(c->bodies, mjcf_body, k), k, gr.geom_start, gr.geom_list);
  MJCF_AT(c->bodies, mjcf_body, 0)->quat[0] = 1;
  if (c->status == GRIT_OK) mjcf_set_total_mass(c); /* mjcf_inertia.c */
  if (c->status == GRIT_OK) fold_bodies(c, &gr);
  if (c->status == GRIT_OK) mjcf_springdamper(c, gr.joint_start, gr.joint_list); /* mjcf_springdamper.c */
  if (c->status != GRIT_OK) goto done;
  grit_joint = calloc((size_t)c->joints.n + 1, sizeof *grit_joint);
  grit_status s = grit_joint ? grit_builder_create(&gb) : GRIT_ERR_OUT_OF_MEMORY;
  if (s != GRIT_OK) {
    mjcf_fail(c, s, NULL, "out of memory");
    goto done;
  }
  build_model(c, gb, &gr, grit_joint);
  if (c->status == GRIT_OK) {
    s = grit_builder_compile(gb, model);
    if (s != GRIT_OK && !mjcf_actuator_compile_error(c, s, grit_builder_last_error(gb)) && /* with its line */
        !mjcf_cx_compile_error(c, s, grit_builder_last_error(gb)))
      mjcf_fail(c, s, NULL, "%s", grit_builder_last_error(gb));
  }
  if (c->status == GRIT_OK) mjcf_keys_check(c, *model); /* mjcf_keys.c */
  if (c->status == GRIT_OK && c->info) {
    mjcf_keys_make(c, *model);
    c->info->settings = c->settings;
    c->info->nbody = c->bodies.n;
    if (c->model_name) snprintf(c->info->model_name, sizeof c->info->model_name, "%s", c->model_name);
  }
  if (c->status != GRIT_OK) {
    grit_model_free(*model);
    *model = NULL;
  }
done:
  grit_builder_free(gb);
  free(gr.geom_start), free(gr.geom_list), free(gr.joint_start), free(gr.joint_list);
  free(gr.child_start), free(gr.child_list);
  free(grit_joint);
  free(mesh_names);
}

/* ------------------------------------------------------------- for mjcf_actuator.c (issue 25) */

int mjcf_resolve_limited(mjcf_ctx *c, int limited, const double range[2], const char *element, const char *file,
                         int line, const char *attr) {
  return resolve_limited(c, limited, range, element, file, line, attr);
}
void mjcf_fail_at(mjcf_ctx *c, grit_status s, const char *element, const char *file, int line, const char *what,
                  const char *detail) {
  fail_at(c, s, element, file, line, what, detail);
}
