/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_parse.c — reading the MJCF element tree into the loader's model description: attribute
 * values (every number checked: a whole token, finite, counted), default classes, the body tree,
 * actuators, keyframes, compiler/option settings and grit's <custom> contact parameters.
 *
 * Sections are read in MuJoCo's order (compiler, option, default, custom, asset, worldbody, actuator,
 * keyframe) whatever their order in the file. Every attribute read is marked; the attributes left
 * unmarked after an element is read are reported as ignored, so nothing unsupported passes silently
 * (except purely visual attributes and elements, see docs/mjcf.md). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_composite.h"
#include "mjcf_internal.h"

/* ------------------------------------------------------------------------ element attributes */

static const char *const JOINT_TYPES[] = {"free", "ball", "slide", "hinge"}; /* = grit_joint_type */
static const char *const GEOM_TYPES[] = {"plane", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh",
                                         "hfield", "sdf"};

static void joint_defaults(mjcf_joint *j) {
  memset(j, 0, sizeof *j);
  j->type = GRIT_JOINT_HINGE;
  j->axis[2] = 1;
  j->limited = 2;
  mjcf_cx_joint_defaults(j);
}

static void read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j) {
  int t;
  if (mjcf_read_enum(c, n, "type", JOINT_TYPES, 4, &t)) j->type = t;
  mjcf_read_numbers(c, n, "pos", j->pos, 3, 3);
  mjcf_read_numbers(c, n, "axis", j->axis, 3, 3);
  mjcf_read_numbers(c, n, "range", j->range, 2, 2);
  mjcf_read_enum(c, n, "limited", MJCF_TFAUTO_NAMES, 3, &j->limited);
  mjcf_read_numbers(c, n, "damping", &j->damping, 1, 1);
  mjcf_read_numbers(c, n, "armature", &j->armature, 1, 1);
  mjcf_read_numbers(c, n, "stiffness", &j->stiffness, 1, 1);
  mjcf_read_numbers(c, n, "springref", &j->springref, 1, 1);
  mjcf_read_numbers(c, n, "ref", &j->ref, 1, 1);
  mjcf_cx_read_joint_attrs(c, n, j); /* frictionloss, solreflimit, solimplimit (mjcf_cx.c) */
  mjcf_read_numbers(c, n, "springdamper", j->springdamper, 2, 2);
  mjcf_mark(n, "group");
  mjcf_mark(n, "user");
}

static void geom_defaults(mjcf_geom *g) {
  memset(g, 0, sizeof *g);
  g->type = MJCF_GEOM_SPHERE;
  g->density = 1000;
  g->fitscale = 1;
  g->friction = 1;
  g->contype = g->conaffinity = 1;
  g->condim = 3;
  g->mesh_index = -1;
  const grit_geom_def d = grit_default_geom_def(); /* MuJoCo's fluidcoef */
  memcpy(g->fluid_coef, d.fluid_coef, sizeof g->fluid_coef);
}

static void read_geom_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g) {
  int t;
  if (mjcf_read_enum(c, n, "type", GEOM_TYPES, 9, &t)) g->type = t;
  mjcf_read_numbers(c, n, "size", g->size, 1, 3);
  mjcf_read_numbers(c, n, "pos", g->pos, 3, 3);
  mjcf_read_orientation(c, n, &g->ori, 0);
  if (mjcf_read_numbers(c, n, "fromto", g->fromto, 6, 6)) g->has_fromto = 1;
  if (mjcf_read_numbers(c, n, "mass", &g->mass, 1, 1)) g->has_mass = 1;
  mjcf_read_numbers(c, n, "density", &g->density, 1, 1);
  if (mjcf_read_numbers(c, n, "fitscale", &g->fitscale, 1, 1) && !(g->fitscale > 0))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'fitscale' must be positive");
  double fr[3];
  if (mjcf_read_numbers(c, n, "friction", fr, 1, 3)) g->friction = fr[0]; /* torsional, rolling: unused */
  long v;
  if (mjcf_read_int(c, n, "contype", 0, (long)UINT_MAX, &v)) g->contype = (unsigned)v;
  if (mjcf_read_int(c, n, "conaffinity", 0, (long)UINT_MAX, &v)) g->conaffinity = (unsigned)v;
  if (mjcf_read_int(c, n, "condim", 1, 6, &v)) {
    if (v != 1 && v != 3 && v != 4 && v != 6)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'condim': %ld is not 1, 3, 4 or 6", v);
    g->condim = (int)v;
  }
  if (mjcf_read_int(c, n, "group", INT_MIN, INT_MAX, &v)) g->group = (int)v;
  const char *mesh = mjcf_attr(n, "mesh");
  if (mesh) g->mesh = mesh;
  const char *hfield = mjcf_attr(n, "hfield");
  if (hfield) g->hfield = hfield;
  mjcf_mark(n, "rgba");
  mjcf_mark(n, "material");
  /* the ellipsoid fluid model (fluid_ellipsoid.c), in effect when <option density viscosity> switch fluid on */
  static const char *const fluidshape[] = {"none", "ellipsoid"};
  int shape;
  if (mjcf_read_enum(c, n, "fluidshape", fluidshape, 2, &shape)) g->fluid_ellipsoid = shape;
  mjcf_read_numbers(c, n, "fluidcoef", g->fluid_coef, 5, 5);
  mjcf_geom_contact_attrs(c, n, g); /* margin, gap, priority (mjcf_adhesion.c) */
  mjcf_mark(n, "user");
}

/* -------------------------------------------------------------------------------- defaults */

#define MAX_CLASSES 1000

static int find_class(mjcf_ctx *c, const char *name) {
  for (int i = 0; i < c->defs.n; ++i)
    if (!strcmp(MJCF_AT(c->defs, mjcf_default, i)->name, name)) return i;
  return -1;
}

/* The default class of element n: its 'class' attribute, else `fallback` (the body's class). */
static int element_class(mjcf_ctx *c, const mjcf_node *n, int fallback) {
  const char *cls = mjcf_attr(n, "class");
  if (!cls || c->status != GRIT_OK) return fallback;
  int k = find_class(c, cls);
  if (k < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "unknown default class '%.60s'", cls);
  return k < 0 ? fallback : k;
}

/* Element kinds a default class may hold whose defaults grit does not need: visual ones, and those of
 * elements grit reports (as errors or warnings) where they are used. */
static int default_kind_ignored(const char *name) {
  static const char *const kinds[] = {"site", "camera", "light", "material", "texture", "pair", "equality", "tendon",
                                      "fixed", "spatial", "position", "velocity", "intvelocity", "damper", "cylinder",
                                      "muscle", "adhesion", "skin", "flex", "plugin"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i)
    if (!strcmp(name, kinds[i])) return 1;
  return 0;
}

static void read_default(mjcf_ctx *c, const mjcf_node *n, int parent) {
  const char *name = mjcf_attr(n, "class");
  int self;
  if (parent < 0 && c->defs.n > 0) { /* a second top-level <default>: more of "main" */
    self = 0;
  } else {
    if (!name) {
      if (parent >= 0) {
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "a nested default needs a 'class'");
        return;
      }
      name = "main";
    }
    if (parent >= 0 && find_class(c, name) >= 0) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "default class '%.60s' is defined twice", name);
      return;
    }
    if (c->defs.n >= MAX_CLASSES) {
      mjcf_fail(c, GRIT_ERR_CAPACITY, n, "more than %d default classes", MAX_CLASSES);
      return;
    }
    mjcf_default *d = mjcf_push(c, &c->defs, sizeof *d);
    if (!d) return;
    self = c->defs.n - 1;
    if (parent >= 0) {
      *d = *MJCF_AT(c->defs, mjcf_default, parent);
      d->site = NULL; /* its own only: the parent's is found through `parent`, attribute by attribute */
    } else {
      joint_defaults(&d->joint);
      geom_defaults(&d->geom);
      mjcf_actuator_defaults(&d->act);
      d->mesh_scale[0] = d->mesh_scale[1] = d->mesh_scale[2] = 1;
    }
    d->name = name;
    d->parent = parent;
  }
  mjcf_finish(c, n);
  /* the class's own elements first, then nested classes (which inherit all of them) */
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    mjcf_default *d = MJCF_AT(c->defs, mjcf_default, self);
    if (!strcmp(e->name, "default")) continue;
    if (!strcmp(e->name, "joint"))
      read_joint_attrs(c, e, &d->joint);
    else if (!strcmp(e->name, "geom"))
      read_geom_attrs(c, e, &d->geom);
    else if (mjcf_is_actuator(e->name))
      mjcf_actuator_attrs(c, e, &d->act); /* mjcf_actuator.c */
    else if (!strcmp(e->name, "mesh")) {
      mjcf_read_numbers(c, e, "scale", d->mesh_scale, 3, 3);
      static const char *const unused[] = {"smoothnormal", "maxhullvert", "inertia", "content_type"};
      for (int i = 0; i < 4; ++i) mjcf_mark(e, unused[i]);
    } else if (default_kind_ignored(e->name)) {
      if (!strcmp(e->name, "site")) d->site = e; /* read where a site uses it (mjcf_cx_read_site) */
      continue; /* visual, or applied by elements that are reported where they are used */
    }
    else {
      mjcf_warn(c, e, "defaults for this element are not supported: ignored");
      continue;
    }
    mjcf_finish(c, e);
  }
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next)
    if (!strcmp(e->name, "default")) read_default(c, e, self);
}

/* ---------------------------------------------------------------------------------- bodies */

static void read_inertial(mjcf_ctx *c, const mjcf_node *n, mjcf_body *b) {
  if (b->has_inertial) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "a body may have one <inertial> only");
    return;
  }
  b->has_inertial = 1;
  if (!mjcf_read_numbers(c, n, "pos", b->ipos, 3, 3) && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'pos' is required");
  if (!mjcf_read_numbers(c, n, "mass", &b->imass, 1, 1) && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'mass' is required");
  mjcf_read_numbers(c, n, "diaginertia", b->idiag, 3, 3);
  mjcf_read_orientation(c, n, &b->iori, 1);
  mjcf_finish(c, n);
}

static void read_joint(mjcf_ctx *c, const mjcf_node *n, int body, int def, int free_joint) {
  if (body == 0) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "the world body cannot have joints");
    return;
  }
  mjcf_joint j;
  if (free_joint) {
    joint_defaults(&j);
    j.type = GRIT_JOINT_FREE;
    mjcf_mark(n, "group");
  } else {
    def = element_class(c, n, def);
    j = MJCF_AT(c->defs, mjcf_default, def)->joint;
    read_joint_attrs(c, n, &j);
  }
  j.name = mjcf_read_name(c, n, "name");
  j.line = n->line, j.file = n->file;
  if ((j.springdamper[0] || j.springdamper[1]) && !(j.springdamper[0] > 0 && j.springdamper[1] > 0))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "springdamper: both values (time constant, damping ratio) must be positive");
  j.body = body;
  mjcf_finish(c, n);
  mjcf_joint *p = c->status == GRIT_OK ? mjcf_push(c, &c->joints, sizeof *p) : NULL;
  if (p) *p = j;
  MJCF_AT(c->bodies, mjcf_body, body)->njoint++;
}

static void read_geom(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *frame) {
  def = element_class(c, n, def);
  mjcf_geom g = MJCF_AT(c->defs, mjcf_default, def)->geom;
  read_geom_attrs(c, n, &g);
  g.name = mjcf_read_name(c, n, "name");
  g.line = n->line, g.file = n->file;
  g.body = body;
  mjcf_finish(c, n);
  if (c->status != GRIT_OK) return;
  if (g.type > MJCF_GEOM_HFIELD) {
    if (g.contype || g.conaffinity)
      mjcf_unsupported(c, n, "geometry type '%s' is not supported", GEOM_TYPES[g.type]);
    return;
  }
  /* a height field may be on any body (no volume: no mass); MuJoCo 2.2.2 allows static bodies only */
  if (frame && g.has_fromto) mjcf_frame_points(frame, g.fromto, 2);
  else if (frame) mjcf_frame_apply(c, frame, g.pos, &g.ori);
  if (c->discardvisual && g.contype == 0 && g.conaffinity == 0) return;
  mjcf_geom *p = mjcf_push(c, &c->geoms, sizeof *p);
  if (p) *p = g;
}

/* The elements inside a body (or the world body, index 0) whose class is `def`. */
static void read_body_children(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *frame);

static void read_body(mjcf_ctx *c, const mjcf_node *n, int parent, int def, const double *frame) {
  mjcf_body *b = mjcf_push(c, &c->bodies, sizeof *b);
  if (!b) return;
  const int self = c->bodies.n - 1;
  b->parent = parent;
  b->line = n->line, b->file = n->file;
  b->folded_into = -1;
  b->name = mjcf_read_name(c, n, "name");
  mjcf_read_numbers(c, n, "pos", b->pos, 3, 3);
  mjcf_read_orientation(c, n, &b->ori, 0);
  if (frame) mjcf_frame_apply(c, frame, b->pos, &b->ori);
  const char *mocap = mjcf_attr(n, "mocap");
  if (mocap && !strcmp(mocap, "true")) /* moved by the user between steps; in the dynamics a welded body */
    mjcf_warn(c, n, "a mocap body is simulated as fixed to its parent (grit has no mocap input)");
  mjcf_read_numbers(c, n, "gravcomp", &b->gravcomp, 1, 1); /* newer than MuJoCo 2.2.2: grit_body_def.gravcomp */
  const char *cls = mjcf_attr(n, "childclass");
  if (cls && c->status == GRIT_OK) {
    def = find_class(c, cls);
    if (def < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "unknown default childclass '%.60s'", cls);
  }
  b->def = def;
  mjcf_mark(n, "user");
  mjcf_finish(c, n);
  if (c->status == GRIT_OK) read_body_children(c, n, self, def, NULL);
}

/* A <frame> (MuJoCo >= 3.1): its pos and orientation compose with those of the elements inside it,
 * which belong to the enclosing body; its childclass is theirs. */
static void read_frame(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *outer) {
  double f[7] = {0, 0, 0, 1, 0, 0, 0};
  mjcf_orient o;
  memset(&o, 0, sizeof o);
  mjcf_read_numbers(c, n, "pos", f, 3, 3);
  mjcf_read_orientation(c, n, &o, 0);
  const char *err = c->status == GRIT_OK ? mjcf_orient_quat(c, &o, f + 3) : NULL;
  if (err) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "%s", err);
  if (outer) {
    mjcf_orient q = {MJCF_ORI_QUAT, {f[3], f[4], f[5], f[6], 0, 0}};
    mjcf_frame_apply(c, outer, f, &q);
    memcpy(f + 3, q.v, sizeof(double) * 4);
  }
  const char *cls = mjcf_attr(n, "childclass");
  if (cls && c->status == GRIT_OK) {
    def = find_class(c, cls);
    if (def < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "unknown default childclass '%.60s'", cls);
  }
  mjcf_mark(n, "name");
  mjcf_finish(c, n);
  if (c->status == GRIT_OK) read_body_children(c, n, body, def, f);
}

static void read_body_children(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *frame) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (!strcmp(e->name, "body"))
      read_body(c, e, body, def, frame);
    else if (!strcmp(e->name, "geom"))
      read_geom(c, e, body, def, frame);
    else if (!strcmp(e->name, "frame"))
      read_frame(c, e, body, def, frame);
    else if (frame && (!strcmp(e->name, "joint") || !strcmp(e->name, "freejoint") || !strcmp(e->name, "inertial")))
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a <frame> cannot hold this element");
    else if (!strcmp(e->name, "joint"))
      read_joint(c, e, body, def, 0);
    else if (!strcmp(e->name, "freejoint"))
      read_joint(c, e, body, def, 1);
    else if (!strcmp(e->name, "inertial")) {
      if (body == 0)
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the world body cannot have an <inertial>");
      else
        read_inertial(c, e, MJCF_AT(c->bodies, mjcf_body, body));
    } else if (!strcmp(e->name, "site"))
      mjcf_cx_read_site(c, e, body, def, frame);
    else if (!strcmp(e->name, "camera") || !strcmp(e->name, "light"))
      continue; /* no physical effect */
    else if (!strcmp(e->name, "composite"))
      mjcf_read_composite(c, e, body, frame != NULL); /* mjcf_composite.c */
    else if (!strcmp(e->name, "flexcomp") || !strcmp(e->name, "replicate") ||
             !strcmp(e->name, "attach"))
      mjcf_unsupported(c, e, "element is not supported");
    else
      mjcf_warn(c, e, "element is not supported: ignored with its contents");
  }
}

/* ------------------------------------------------------------------------------- sections */

static void read_compiler(mjcf_ctx *c, const mjcf_node *n) {
  static const char *const angles[] = {"radian", "degree"};
  static const char *const coords[] = {"local", "global"};
  int k;
  if (mjcf_read_enum(c, n, "angle", angles, 2, &k)) c->degree = k;
  if (mjcf_read_enum(c, n, "coordinate", coords, 2, &k) && k == 1)
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "coordinate=\"global\" is not supported");
  const char *seq = mjcf_attr(n, "eulerseq");
  if (seq && c->status == GRIT_OK) {
    if (strlen(seq) != 3 || strspn(seq, "xyzXYZ") != 3)
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'eulerseq': '%.20s' is not 3 of x, y, z, X, Y, Z", seq);
    else
      memcpy(c->eulerseq, seq, 4);
  }
  mjcf_read_enum(c, n, "inertiafromgeom", MJCF_TFAUTO_NAMES, 3, &c->inertiafromgeom);
  double r[2];
  if (mjcf_read_numbers(c, n, "inertiagrouprange", r, 2, 2)) {
    if (r[0] != floor(r[0]) || r[1] != floor(r[1]) || fabs(r[0]) > 1e6 || fabs(r[1]) > 1e6) {
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'inertiagrouprange' needs two integers");
    } else {
      c->igroup[0] = (int)r[0];
      c->igroup[1] = (int)r[1];
    }
  }
  mjcf_read_bool(c, n, "autolimits", &c->autolimits);
  mjcf_read_bool(c, n, "discardvisual", &c->discardvisual);
  if (mjcf_read_numbers(c, n, "boundmass", &c->boundmass, 1, 1) && c->boundmass < 0)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'boundmass' must be >= 0");
  if (mjcf_read_numbers(c, n, "boundinertia", &c->boundinertia, 1, 1) && c->boundinertia < 0)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'boundinertia' must be >= 0");
  mjcf_read_numbers(c, n, "settotalmass", &c->settotalmass, 1, 1); /* applied when > 0, as MuJoCo */
  mjcf_read_bool(c, n, "balanceinertia", &c->balanceinertia);
  int fuse = 0;
  if (mjcf_read_bool(c, n, "fusestatic", &fuse) && fuse)
    mjcf_warn(c, n, "fusestatic=\"true\": grit keeps static bodies (the dynamics is the same; the body count is not)");
  /* no effect on grit's model: grit always collides with the convex hull; threads; mesh inertia as 2.2.2 */
  mjcf_read_bool(c, n, "exactmeshinertia", &c->exactmeshinertia);
  mjcf_read_bool(c, n, "fitaabb", &c->fitaabb);
  static const char *const quiet[] = {"convexhull", "usethread", "saveinertial", "alignfree"};
  for (int i = 0; i < 4; ++i) mjcf_mark(n, quiet[i]);
  c->meshdir = mjcf_attr(n, "meshdir"); /* mesh files are read; textures are not */
  c->assetdir = mjcf_attr(n, "assetdir");
  const char *files[] = {"texturedir", "strippath"};
  for (int i = 0; i < 2; ++i) mjcf_mark(n, files[i]);
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e; e = e->next)
    if (strcmp(e->name, "lengthrange")) mjcf_warn(c, e, "element is not supported: ignored");
    else mjcf_read_lengthrange_options(c, e); /* muscles' length ranges (mjcf_actuator.c) */
}

static void read_option(mjcf_ctx *c, const mjcf_node *n) {
  double dt;
  if (mjcf_read_numbers(c, n, "timestep", &dt, 1, 1)) {
    if (dt <= 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'timestep' must be positive");
    c->opt.timestep = dt;
  }
  mjcf_read_numbers(c, n, "gravity", c->opt.gravity, 3, 3);
  const char *integ = mjcf_attr(n, "integrator");
  if (integ && !strcmp(integ, "implicitfast"))
    mjcf_warn(c, n, "attribute 'integrator': 'implicitfast' (newer than MuJoCo 2.2.2) is taken as grit's step, "
                    "semi-implicit Euler with implicit joint damping");
  else if (integ && strcmp(integ, "Euler"))
    mjcf_warn(c, n, "attribute 'integrator': '%.20s' is not supported: grit's step is semi-implicit Euler", integ);
  /* fluid forces: MuJoCo 2.2.2's inertia-box model (fluid.c); the builder checks density, viscosity >= 0 */
  mjcf_read_numbers(c, n, "density", &c->opt.density, 1, 1);
  mjcf_read_numbers(c, n, "viscosity", &c->opt.viscosity, 1, 1);
  mjcf_read_numbers(c, n, "wind", c->opt.wind, 3, 3);
  /* MuJoCo's constraint solver and collision settings: grit has its own contact model and solver */
  static const char *const solver[] = {"o_margin", "o_solref", "o_solimp", "o_friction", "impratio", "tolerance",
                                       "ls_tolerance", "noslip_tolerance", "mpr_tolerance", "iterations",
                                       "ls_iterations", "noslip_iterations", "mpr_iterations", "cone", "jacobian",
                                       "solver", "collision", "magnetic", "sdf_iterations", "sdf_initpoints",
                                       "ccd_iterations", "ccd_tolerance", "apirate"};
  for (size_t i = 0; i < sizeof solver / sizeof solver[0]; ++i) mjcf_mark(n, solver[i]);
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (strcmp(e->name, "flag")) {
      mjcf_warn(c, e, "element is not supported: ignored");
      continue;
    }
    static const char *const ed[] = {"disable", "enable"};
    int k;
    if (mjcf_read_enum(c, e, "gravity", ed, 2, &k) && k == 0) memset(c->opt.gravity, 0, sizeof c->opt.gravity);
    if (mjcf_read_enum(c, e, "contact", ed, 2, &k) && k == 0) c->no_contacts = 1;
    if (mjcf_read_enum(c, e, "filterparent", ed, 2, &k) && k == 0) c->no_filter_parent = 1;
    if (mjcf_read_enum(c, e, "limit", ed, 2, &k) && k == 0) c->no_limits = 1;
    if (mjcf_read_enum(c, e, "constraint", ed, 2, &k) && k == 0) /* grit's constraints: contacts and limits */
      c->no_contacts = c->no_limits = c->no_equality = 1;
    if (mjcf_read_enum(c, e, "equality", ed, 2, &k) && k == 0) c->no_equality = 1;
    static const char *const off[] = {"frictionloss", "passive", "actuation", "clampctrl"};
    for (int i = 0; i < 4; ++i)
      if (mjcf_read_enum(c, e, off[i], ed, 2, &k) && k == 0)
        mjcf_unsupported(c, e, "flag '%s' disabled is not supported", off[i]);
    static const char *const quiet[] = {"refsafe", "sensor", "midphase", "warmstart", "override", "energy",
                                        "fwdinv", "invdiscrete", "sensornoise", "multiccd", "island", "eulerdamp",
                                        "nativeccd", "autoreset"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; ++i) mjcf_mark(e, quiet[i]);
    mjcf_finish(c, e);
  }
}

/* grit's parameters in <custom>: numerics and one text, all named grit_*. */
static void read_custom_numeric(mjcf_ctx *c, const mjcf_node *n, const char *name) {
  static const char *const names[] = {"grit_stiffness", "grit_dissipation", "grit_tau_d", "grit_stiction_tolerance",
                                      "grit_margin", "grit_rel_tol", "grit_max_newton_iters", "grit_max_contacts"};
  int k = -1;
  for (int i = 0; i < 8; ++i)
    if (!strcmp(name, names[i])) k = i;
  if (k < 0) {
    mjcf_warn(c, n, "'%.60s' is not one of grit's parameters: ignored", name);
    return;
  }
  double v = 0;
  if (!mjcf_read_numbers(c, n, "data", &v, 1, 1)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s' needs attribute 'data'", name);
    return;
  }
  const int positive = k == 0 || k == 3 || k == 5 || k == 6, integer = k >= 6;
  if ((positive && !(v > 0)) || v < 0 || (integer && (v != floor(v) || v > 1e9))) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s' = %g is out of range (%s)", name, v,
              integer ? (positive ? "must be a positive integer" : "must be a non-negative integer")
              : positive ? "must be > 0" : "must be >= 0");
    return;
  }
  switch (k) {
    case 0: c->stiffness = v; break;
    case 1: c->dissipation = v; break;
    case 2: c->tau_d = v; break;
    case 3: c->settings.stiction_tolerance = v; break;
    case 4: c->opt.contact_margin = v; break;
    case 5: c->settings.rel_tol = v; break;
    case 6: c->settings.max_newton_iters = (int)v; break;
    default: c->opt.max_contacts = (int)v; break;
  }
}

/* A geometry's hydroelastic modulus: <numeric name="grit_hydro_modulus:GEOM" data="E"/> (MuJoCo keeps
 * it as the user's data; docs/hydroelastic.md). The geometry is found by name when the model is built. */
#define HYDRO_PREFIX "grit_hydro_modulus:"
static void read_custom_hydro(mjcf_ctx *c, const mjcf_node *n, const char *geom) {
  double v = 0;
  if (!mjcf_read_numbers(c, n, "data", &v, 1, 1)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s%s' needs attribute 'data'", HYDRO_PREFIX, geom);
    return;
  }
  if (!(v > 0) || !geom[0]) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s%s' = %g: needs a geom name and a modulus > 0 (Pa)", HYDRO_PREFIX,
              geom, v);
    return;
  }
  mjcf_hydro *h = mjcf_push(c, &c->hydro, sizeof *h);
  if (!h) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, n, "out of memory");
    return;
  }
  h->geom = geom;
  h->modulus = v;
  h->line = n->line;
}

static void read_custom(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    const char *name = mjcf_attr(e, "name");
    if (!name || strncmp(name, "grit_", 5)) continue; /* the user's own data */
    if (!strcmp(e->name, "numeric") && !strncmp(name, HYDRO_PREFIX, strlen(HYDRO_PREFIX))) {
      mjcf_mark(e, "size");
      read_custom_hydro(c, e, name + strlen(HYDRO_PREFIX));
    } else if (!strcmp(e->name, "numeric")) {
      mjcf_mark(e, "size");
      read_custom_numeric(c, e, name);
    } else if (!strcmp(e->name, "text") && !strcmp(name, "grit_contact_model")) {
      static const char *const models[] = {"lagged", "similar", "sap"}; /* = grit_contact_model */
      int k;
      if (mjcf_read_enum(c, e, "data", models, 3, &k)) c->settings.contact_model = (grit_contact_model)k;
    } else {
      mjcf_warn(c, e, "'%.60s' is not one of grit's parameters: ignored", name);
      continue;
    }
    mjcf_finish(c, e);
  }
}

static void read_keyframes(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (strcmp(e->name, "key")) {
      mjcf_warn(c, e, "element is not supported: ignored");
      continue;
    }
    mjcf_keyframe *k = mjcf_push(c, &c->keys, sizeof *k);
    if (!k) return;
    k->line = e->line, k->file = e->file;
    k->name = mjcf_read_name(c, e, "name");
    mjcf_read_numbers(c, e, "time", &k->time, 1, 1);
    mjcf_read_array(c, e, "qpos", &k->qpos, &k->nqpos);
    mjcf_read_array(c, e, "qvel", &k->qvel, &k->nqvel);
    mjcf_read_array(c, e, "ctrl", &k->ctrl, &k->nctrl);
    mjcf_read_array(c, e, "act", &k->act, &k->nact);
    mjcf_finish(c, e);
  }
}

/* ----------------------------------------------------------------------------------- model */

void mjcf_read(mjcf_ctx *c, mjcf_node *root) {
  if (strcmp(root->name, "mujoco")) {
    mjcf_fail(c, GRIT_ERR_PARSE, root, "the root element must be <mujoco>");
    return;
  }
  c->degree = 1;
  c->lr_useexisting = 1; /* MuJoCo's <lengthrange> defaults */
  memcpy(c->eulerseq, "xyz", 4);
  c->inertiafromgeom = 2;
  c->autolimits = 1;
  c->igroup[0] = 0;
  c->igroup[1] = 5;
  c->opt = grit_default_options();
  c->opt.timestep = 0.002; /* MuJoCo's default */
  c->settings = grit_default_step_settings();
  grit_geom_def g = grit_default_geom_def();
  c->stiffness = g.stiffness;
  c->dissipation = g.dissipation;
  c->tau_d = g.tau_d;
  c->model_name = mjcf_attr(root, "model");
  mjcf_finish(c, root);

  /* the world body and the "main" default class always exist */
  mjcf_body *world = mjcf_push(c, &c->bodies, sizeof *world);
  if (world) world->folded_into = -1, world->parent = -1, world->line = root->line;
  static const char *const order[] = {"compiler", "option",   "default",  "custom",   "asset",  "worldbody",
                                      "tendon",   "equality", "actuator", "keyframe", "contact"};
  for (int pass = 0; pass < 11; ++pass) {
    if (pass == 3 && c->defs.n == 0) { /* no <default>: make "main" with MuJoCo's defaults */
      mjcf_default *d = mjcf_push(c, &c->defs, sizeof *d);
      if (!d) return;
      d->name = "main";
      d->parent = -1;
      joint_defaults(&d->joint);
      geom_defaults(&d->geom);
      mjcf_actuator_defaults(&d->act);
      d->mesh_scale[0] = d->mesh_scale[1] = d->mesh_scale[2] = 1;
    }
    for (const mjcf_node *e = root->child; e && c->status == GRIT_OK; e = e->next) {
      if (strcmp(e->name, order[pass])) continue;
      switch (pass) {
        case 0: read_compiler(c, e); break;
        case 1: read_option(c, e); break;
        case 2: read_default(c, e, -1); break;
        case 3: read_custom(c, e); break;
        case 4: mjcf_read_asset(c, e); break;
        case 5: mjcf_finish(c, e), read_body_children(c, e, 0, 0, NULL); break;
        case 6: mjcf_cx_read_tendons(c, e); break;
        case 7: mjcf_cx_read_equalities(c, e); break;
        case 8: mjcf_read_actuators(c, e); break; /* mjcf_actuator.c */
        case 9: read_keyframes(c, e); break;
        default: mjcf_read_contact(c, e); break;
      }
    }
  }
  /* no effect on the dynamics: the picture, sizes, statistics, sensors (read-outs) */
  static const char *const quiet[] = {"size", "visual", "statistic", "sensor"};
  for (const mjcf_node *e = root->child; e && c->status == GRIT_OK; e = e->next) {
    int known = 0;
    for (int i = 0; i < 11; ++i) known |= !strcmp(e->name, order[i]);
    for (int i = 0; i < 4; ++i) known |= !strcmp(e->name, quiet[i]);
    if (known) continue;
    if (!strcmp(e->name, "deformable") || !strcmp(e->name, "extension")) {
      if (e->child) mjcf_unsupported(c, e, "section is not supported");
    } else
      mjcf_warn(c, e, "section is not supported: ignored with its contents");
  }
}

/* for mjcf_actuator.c (issue 25) */
int mjcf_element_class(mjcf_ctx *c, const mjcf_node *n, int fallback) { return element_class(c, n, fallback); }

/* for mjcf_composite.c: MuJoCo's built-in defaults and the attribute readers */
void mjcf_joint_defaults(mjcf_joint *j) { joint_defaults(j); }
void mjcf_read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j) { read_joint_attrs(c, n, j); }
void mjcf_geom_defaults(mjcf_geom *g) { geom_defaults(g); }
void mjcf_read_geom_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g) { read_geom_attrs(c, n, g); }
