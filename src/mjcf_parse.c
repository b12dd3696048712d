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

#include "mjcf_internal.h"

/* ------------------------------------------------------------------------------- attributes */

static int attr_index(const mjcf_node *n, const char *name) {
  for (int i = 0; i < n->nattr; ++i)
    if (!strcmp(n->attr[2 * i], name)) return i;
  return -1;
}

/* The value of attribute `name` (marked as read), or NULL. */
static const char *attr(const mjcf_node *n, const char *name) {
  int i = attr_index(n, name);
  if (i < 0) return NULL;
  n->used[i] = 1;
  return n->attr[2 * i + 1];
}

static void mark(const mjcf_node *n, const char *name) { (void)attr(n, name); }

/* Reports the attributes of n that nothing read. */
static void finish(mjcf_ctx *c, const mjcf_node *n) {
  for (int i = 0; i < n->nattr; ++i)
    if (!n->used[i]) mjcf_warn(c, n, "attribute '%.60s' is not supported: ignored", n->attr[2 * i]);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

/* The next whitespace-separated token of *s: its start and length (0 at the end). */
static size_t next_token(const char **s, const char **start) {
  const char *p = *s;
  while (is_space(*p)) ++p;
  *start = p;
  while (*p && !is_space(*p)) ++p;
  *s = p;
  return (size_t)(p - *start);
}

/* One number from a token: the whole token must be consumed and the value finite. */
static int parse_number(mjcf_ctx *c, const mjcf_node *n, const char *name, const char *tok, size_t len, double *out) {
  char buf[MJCF_MAX_TOKEN + 1];
  if (len > MJCF_MAX_TOKEN) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': a number longer than %d characters", name, MJCF_MAX_TOKEN);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  double v = strtod(buf, &end);
  if (end != buf + len || len == 0) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not a number", name, buf);
    return 0;
  }
  if (!isfinite(v)) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not a finite number", name, buf);
    return 0;
  }
  *out = v;
  return 1;
}

/* Reads nmin..nmax numbers of attribute `name` into out; returns how many (0 if absent or on error). */
static int read_numbers(mjcf_ctx *c, const mjcf_node *n, const char *name, double *out, int nmin, int nmax) {
  if (c->status != GRIT_OK) return 0;
  const char *s = attr(n, name), *tok;
  if (!s) return 0;
  int count = 0;
  size_t len;
  while ((len = next_token(&s, &tok)) > 0) {
    if (count == nmax) {
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' has more than %d numbers", name, nmax);
      return 0;
    }
    if (!parse_number(c, n, name, tok, len, &out[count])) return 0;
    count++;
  }
  if (count < nmin) {
    if (nmin == nmax)
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' needs %d numbers, has %d", name, nmin, count);
    else
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' needs at least %d numbers, has %d", name, nmin, count);
    return 0;
  }
  return count;
}

/* Reads every number of attribute `name` into a new pool array (*out; *count numbers); 1 if present. */
static int read_array(mjcf_ctx *c, const mjcf_node *n, const char *name, double **out, int *count) {
  *out = NULL;
  *count = 0;
  if (c->status != GRIT_OK) return 0;
  const char *s = attr(n, name), *tok;
  if (!s) return 0;
  int total = 0;
  for (const char *p = s; next_token(&p, &tok) > 0;)
    if (++total > MJCF_MAX_NUMBERS) {
      mjcf_fail(c, GRIT_ERR_CAPACITY, n, "attribute '%s' has more than %d numbers", name, MJCF_MAX_NUMBERS);
      return 0;
    }
  double *v = mjcf_alloc(&c->pool, sizeof(double) * (size_t)(total + 1));
  if (!v) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, n, "out of memory");
    return 0;
  }
  size_t len;
  int k = 0;
  while ((len = next_token(&s, &tok)) > 0)
    if (!parse_number(c, n, name, tok, len, &v[k++])) return 0;
  *out = v;
  *count = total;
  return 1;
}

/* A single integer in [lo, hi]; 1 if present and valid. */
static int read_int(mjcf_ctx *c, const mjcf_node *n, const char *name, long lo, long hi, long *out) {
  if (c->status != GRIT_OK) return 0;
  const char *s = attr(n, name), *tok;
  if (!s) return 0;
  size_t len = next_token(&s, &tok);
  const char *rest;
  char buf[32];
  if (len == 0 || len >= sizeof buf || next_token(&s, &rest) != 0) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' must be one integer", name);
    return 0;
  }
  memcpy(buf, tok, len);
  buf[len] = '\0';
  char *end = NULL;
  errno = 0;
  long v = strtol(buf, &end, 10);
  if (end != buf + len || errno == ERANGE || v < lo || v > hi) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%s' is not an integer in [%ld, %ld]", name, buf, lo, hi);
    return 0;
  }
  *out = v;
  return 1;
}

/* One of `names` (count of them); its index in *out; 1 if present and valid. */
static int read_enum(mjcf_ctx *c, const mjcf_node *n, const char *name, const char *const *names, int count, int *out) {
  if (c->status != GRIT_OK) return 0;
  const char *s = attr(n, name);
  if (!s) return 0;
  for (int i = 0; i < count; ++i)
    if (!strcmp(s, names[i])) {
      *out = i;
      return 1;
    }
  char list[128] = "";
  for (int i = 0; i < count; ++i) {
    strncat(list, names[i], sizeof list - strlen(list) - 1);
    if (i + 1 < count) strncat(list, "|", sizeof list - strlen(list) - 1);
  }
  mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s': '%.40s' is not one of %s", name, s, list);
  return 0;
}

static const char *const BOOL_NAMES[] = {"false", "true"};
static const char *const TFAUTO_NAMES[] = {"false", "true", "auto"};

static int read_bool(mjcf_ctx *c, const mjcf_node *n, const char *name, int *out) {
  return read_enum(c, n, name, BOOL_NAMES, 2, out);
}

/* A name of at most 1000 characters; an empty one is no name (NULL). */
static const char *read_name(mjcf_ctx *c, const mjcf_node *n, const char *name) {
  const char *s = attr(n, name);
  if (!s || c->status != GRIT_OK) return NULL;
  size_t len = strlen(s);
  if (len > 1000) {
    mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute '%s' is longer than 1000 characters", name);
    return NULL;
  }
  return len ? s : NULL;
}

/* quat | axisangle | euler | xyaxes | zaxis (| fullinertia): at most one; replaces *o if present. */
static void read_orientation(mjcf_ctx *c, const mjcf_node *n, mjcf_orient *o, int allow_fullinertia) {
  static const char *const names[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis", "fullinertia"};
  static const int kinds[] = {MJCF_ORI_QUAT, MJCF_ORI_AXISANGLE, MJCF_ORI_EULER, MJCF_ORI_XYAXES, MJCF_ORI_ZAXIS,
                              MJCF_ORI_FULLINERTIA};
  static const int sizes[] = {4, 4, 3, 6, 3, 6};
  const int count = allow_fullinertia ? 6 : 5;
  int found = -1;
  for (int i = 0; i < count; ++i)
    if (attr_index(n, names[i]) >= 0) {
      if (found >= 0) {
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attributes '%s' and '%s' both give the orientation", names[found],
                  names[i]);
        return;
      }
      found = i;
    }
  if (found < 0) return;
  mjcf_orient r;
  memset(&r, 0, sizeof r);
  r.kind = kinds[found];
  if (read_numbers(c, n, names[found], r.v, sizes[found], sizes[found])) *o = r;
}

/* ------------------------------------------------------------------------ element attributes */

static const char *const JOINT_TYPES[] = {"free", "ball", "slide", "hinge"}; /* = grit_joint_type */
static const char *const GEOM_TYPES[] = {"plane", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh",
                                         "hfield", "sdf"};

static void joint_defaults(mjcf_joint *j) {
  memset(j, 0, sizeof *j);
  j->type = GRIT_JOINT_HINGE;
  j->axis[2] = 1;
  j->limited = 2;
}

static void read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j) {
  int t;
  if (read_enum(c, n, "type", JOINT_TYPES, 4, &t)) j->type = t;
  read_numbers(c, n, "pos", j->pos, 3, 3);
  read_numbers(c, n, "axis", j->axis, 3, 3);
  read_numbers(c, n, "range", j->range, 2, 2);
  read_enum(c, n, "limited", TFAUTO_NAMES, 3, &j->limited);
  read_numbers(c, n, "damping", &j->damping, 1, 1);
  read_numbers(c, n, "armature", &j->armature, 1, 1);
  read_numbers(c, n, "stiffness", &j->stiffness, 1, 1);
  read_numbers(c, n, "springref", &j->springref, 1, 1);
  read_numbers(c, n, "ref", &j->ref, 1, 1);
  mark(n, "group");
  mark(n, "user");
}

static void geom_defaults(mjcf_geom *g) {
  memset(g, 0, sizeof *g);
  g->type = MJCF_GEOM_SPHERE;
  g->density = 1000;
  g->friction = 1;
  g->contype = g->conaffinity = 1;
  g->condim = 3;
  g->mesh_index = -1;
}

static void read_geom_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g) {
  int t;
  if (read_enum(c, n, "type", GEOM_TYPES, 9, &t)) g->type = t;
  read_numbers(c, n, "size", g->size, 1, 3);
  read_numbers(c, n, "pos", g->pos, 3, 3);
  read_orientation(c, n, &g->ori, 0);
  if (read_numbers(c, n, "fromto", g->fromto, 6, 6)) g->has_fromto = 1;
  if (read_numbers(c, n, "mass", &g->mass, 1, 1)) g->has_mass = 1;
  read_numbers(c, n, "density", &g->density, 1, 1);
  double fr[3];
  if (read_numbers(c, n, "friction", fr, 1, 3)) g->friction = fr[0]; /* torsional, rolling: unused */
  long v;
  if (read_int(c, n, "contype", 0, (long)UINT_MAX, &v)) g->contype = (unsigned)v;
  if (read_int(c, n, "conaffinity", 0, (long)UINT_MAX, &v)) g->conaffinity = (unsigned)v;
  if (read_int(c, n, "condim", 1, 6, &v)) {
    if (v != 1 && v != 3 && v != 4 && v != 6)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'condim': %ld is not 1, 3, 4 or 6", v);
    g->condim = (int)v;
  }
  if (read_int(c, n, "group", INT_MIN, INT_MAX, &v)) g->group = (int)v;
  const char *mesh = attr(n, "mesh");
  if (mesh) g->mesh = mesh;
  mark(n, "rgba");
  mark(n, "material");
  mark(n, "user");
}

static void actuator_defaults(mjcf_actuator *a) {
  memset(a, 0, sizeof *a);
  a->gear = 1;
  a->gain = 1;
  a->ctrllimited = a->forcelimited = 2;
  a->supported = 1;
}

/* Attributes common to <motor> and <general>; for <general>, the gain and the dynamics/bias types
 * (only dyntype none, gaintype fixed, biastype none make a direct force actuator). */
static void read_actuator_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a, int general) {
  read_enum(c, n, "ctrllimited", TFAUTO_NAMES, 3, &a->ctrllimited);
  read_enum(c, n, "forcelimited", TFAUTO_NAMES, 3, &a->forcelimited);
  read_numbers(c, n, "ctrlrange", a->ctrlrange, 2, 2);
  read_numbers(c, n, "forcerange", a->forcerange, 2, 2);
  double gear[6];
  if (read_numbers(c, n, "gear", gear, 1, 6)) a->gear = gear[0]; /* a joint transmission uses gear[0] */
  mark(n, "group");
  mark(n, "user");
  if (!general) return;
  static const char *const dyn[] = {"none", "integrator", "filter", "muscle", "user"};
  static const char *const gain[] = {"fixed", "muscle", "user"};
  static const char *const bias[] = {"none", "affine", "muscle", "user"};
  int k;
  if (read_enum(c, n, "dyntype", dyn, 5, &k) && k != 0) a->supported = 0;
  if (read_enum(c, n, "gaintype", gain, 3, &k) && k != 0) a->supported = 0;
  if (read_enum(c, n, "biastype", bias, 4, &k) && k != 0) a->supported = 0;
  double prm[10];
  if (read_numbers(c, n, "gainprm", prm, 1, 10)) a->gain = prm[0];
  mark(n, "dynprm"); /* unused with dyntype none */
  mark(n, "biasprm"); /* unused with biastype none */
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
  const char *cls = attr(n, "class");
  if (!cls || c->status != GRIT_OK) return fallback;
  int k = find_class(c, cls);
  if (k < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "unknown default class '%.60s'", cls);
  return k < 0 ? fallback : k;
}

static void read_default(mjcf_ctx *c, const mjcf_node *n, int parent) {
  const char *name = attr(n, "class");
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
    } else {
      joint_defaults(&d->joint);
      geom_defaults(&d->geom);
      actuator_defaults(&d->act);
    }
    d->name = name;
    d->parent = parent;
  }
  finish(c, n);
  /* the class's own elements first, then nested classes (which inherit all of them) */
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    mjcf_default *d = MJCF_AT(c->defs, mjcf_default, self);
    if (!strcmp(e->name, "default")) continue;
    if (!strcmp(e->name, "joint"))
      read_joint_attrs(c, e, &d->joint);
    else if (!strcmp(e->name, "geom"))
      read_geom_attrs(c, e, &d->geom);
    else if (!strcmp(e->name, "motor"))
      read_actuator_attrs(c, e, &d->act, 0);
    else if (!strcmp(e->name, "general"))
      read_actuator_attrs(c, e, &d->act, 1);
    else if (!strcmp(e->name, "site") || !strcmp(e->name, "camera") || !strcmp(e->name, "light") ||
             !strcmp(e->name, "material"))
      continue; /* visual */
    else {
      mjcf_warn(c, e, "defaults for this element are not supported: ignored");
      continue;
    }
    finish(c, e);
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
  if (!read_numbers(c, n, "pos", b->ipos, 3, 3) && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'pos' is required");
  if (!read_numbers(c, n, "mass", &b->imass, 1, 1) && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'mass' is required");
  read_numbers(c, n, "diaginertia", b->idiag, 3, 3);
  read_orientation(c, n, &b->iori, 1);
  finish(c, n);
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
    mark(n, "group");
  } else {
    def = element_class(c, n, def);
    j = MJCF_AT(c->defs, mjcf_default, def)->joint;
    read_joint_attrs(c, n, &j);
  }
  j.name = read_name(c, n, "name");
  j.line = n->line;
  j.body = body;
  finish(c, n);
  mjcf_joint *p = c->status == GRIT_OK ? mjcf_push(c, &c->joints, sizeof *p) : NULL;
  if (p) *p = j;
  MJCF_AT(c->bodies, mjcf_body, body)->njoint++;
}

static void read_geom(mjcf_ctx *c, const mjcf_node *n, int body, int def) {
  def = element_class(c, n, def);
  mjcf_geom g = MJCF_AT(c->defs, mjcf_default, def)->geom;
  read_geom_attrs(c, n, &g);
  g.name = read_name(c, n, "name");
  g.line = n->line;
  g.body = body;
  finish(c, n);
  if (c->status != GRIT_OK) return;
  if (g.type > MJCF_GEOM_MESH) {
    mjcf_warn(c, n, "geometry type '%s' is not supported: geometry ignored", GEOM_TYPES[g.type]);
    return;
  }
  if (c->discardvisual && g.contype == 0 && g.conaffinity == 0) return;
  mjcf_geom *p = mjcf_push(c, &c->geoms, sizeof *p);
  if (p) *p = g;
}

/* The elements inside a body (or the world body, index 0) whose class is `def`. */
static void read_body_children(mjcf_ctx *c, const mjcf_node *n, int body, int def);

static void read_body(mjcf_ctx *c, const mjcf_node *n, int parent, int def) {
  mjcf_body *b = mjcf_push(c, &c->bodies, sizeof *b);
  if (!b) return;
  const int self = c->bodies.n - 1;
  b->parent = parent;
  b->line = n->line;
  b->folded_into = -1;
  b->name = read_name(c, n, "name");
  read_numbers(c, n, "pos", b->pos, 3, 3);
  read_orientation(c, n, &b->ori, 0);
  const char *cls = attr(n, "childclass");
  if (cls && c->status == GRIT_OK) {
    def = find_class(c, cls);
    if (def < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "unknown default childclass '%.60s'", cls);
  }
  b->def = def;
  mark(n, "user");
  finish(c, n);
  if (c->status == GRIT_OK) read_body_children(c, n, self, def);
}

static void read_body_children(mjcf_ctx *c, const mjcf_node *n, int body, int def) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (!strcmp(e->name, "body"))
      read_body(c, e, body, def);
    else if (!strcmp(e->name, "geom"))
      read_geom(c, e, body, def);
    else if (!strcmp(e->name, "joint"))
      read_joint(c, e, body, def, 0);
    else if (!strcmp(e->name, "freejoint"))
      read_joint(c, e, body, def, 1);
    else if (!strcmp(e->name, "inertial")) {
      if (body == 0)
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the world body cannot have an <inertial>");
      else
        read_inertial(c, e, MJCF_AT(c->bodies, mjcf_body, body));
    } else if (!strcmp(e->name, "site") || !strcmp(e->name, "camera") || !strcmp(e->name, "light"))
      continue; /* no physical effect by themselves */
    else
      mjcf_warn(c, e, "element is not supported: ignored with its contents");
  }
}

/* ------------------------------------------------------------------------------- sections */

static void read_compiler(mjcf_ctx *c, const mjcf_node *n) {
  static const char *const angles[] = {"radian", "degree"};
  static const char *const coords[] = {"local", "global"};
  int k;
  if (read_enum(c, n, "angle", angles, 2, &k)) c->degree = k;
  if (read_enum(c, n, "coordinate", coords, 2, &k) && k == 1)
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "coordinate=\"global\" is not supported");
  const char *seq = attr(n, "eulerseq");
  if (seq && c->status == GRIT_OK) {
    if (strlen(seq) != 3 || strspn(seq, "xyzXYZ") != 3)
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'eulerseq': '%.20s' is not 3 of x, y, z, X, Y, Z", seq);
    else
      memcpy(c->eulerseq, seq, 4);
  }
  read_enum(c, n, "inertiafromgeom", TFAUTO_NAMES, 3, &c->inertiafromgeom);
  double r[2];
  if (read_numbers(c, n, "inertiagrouprange", r, 2, 2)) {
    if (r[0] != floor(r[0]) || r[1] != floor(r[1]) || fabs(r[0]) > 1e6 || fabs(r[1]) > 1e6) {
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'inertiagrouprange' needs two integers");
    } else {
      c->igroup[0] = (int)r[0];
      c->igroup[1] = (int)r[1];
    }
  }
  read_bool(c, n, "autolimits", &c->autolimits);
  read_bool(c, n, "discardvisual", &c->discardvisual);
  if (read_numbers(c, n, "boundmass", &c->boundmass, 1, 1) && c->boundmass < 0)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'boundmass' must be >= 0");
  c->meshdir = attr(n, "meshdir"); /* mesh files are read; textures are not */
  c->assetdir = attr(n, "assetdir");
  const char *files[] = {"texturedir", "strippath"};
  for (int i = 0; i < 2; ++i) mark(n, files[i]);
  finish(c, n);
  for (const mjcf_node *e = n->child; e; e = e->next) mjcf_warn(c, e, "element is not supported: ignored");
}

static void read_option(mjcf_ctx *c, const mjcf_node *n) {
  double dt;
  if (read_numbers(c, n, "timestep", &dt, 1, 1)) {
    if (dt <= 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'timestep' must be positive");
    c->opt.timestep = dt;
  }
  read_numbers(c, n, "gravity", c->opt.gravity, 3, 3);
  const char *integ = attr(n, "integrator");
  if (integ && strcmp(integ, "Euler"))
    mjcf_warn(c, n, "attribute 'integrator': '%.20s' is not supported: grit's step is semi-implicit Euler", integ);
  finish(c, n);
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (strcmp(e->name, "flag")) {
      mjcf_warn(c, e, "element is not supported: ignored");
      continue;
    }
    static const char *const ed[] = {"disable", "enable"};
    int k;
    if (read_enum(c, e, "gravity", ed, 2, &k) && k == 0) memset(c->opt.gravity, 0, sizeof c->opt.gravity);
    if (read_enum(c, e, "contact", ed, 2, &k) && k == 0) c->no_contacts = 1;
    finish(c, e);
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
  if (!read_numbers(c, n, "data", &v, 1, 1)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s' needs attribute 'data'", name);
    return;
  }
  const int positive = k == 0 || k == 3 || k == 5 || k == 6, integer = k >= 6;
  if ((positive && !(v > 0)) || v < 0 || (integer && (v != floor(v) || v > 1e9))) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "'%s' = %g is out of range (%s)", name, v,
              integer ? "a non-negative integer" : positive ? "must be > 0" : "must be >= 0");
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
  if (!read_numbers(c, n, "data", &v, 1, 1)) {
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
    const char *name = attr(e, "name");
    if (!name || strncmp(name, "grit_", 5)) continue; /* the user's own data */
    if (!strcmp(e->name, "numeric") && !strncmp(name, HYDRO_PREFIX, strlen(HYDRO_PREFIX))) {
      mark(e, "size");
      read_custom_hydro(c, e, name + strlen(HYDRO_PREFIX));
    } else if (!strcmp(e->name, "numeric")) {
      mark(e, "size");
      read_custom_numeric(c, e, name);
    } else if (!strcmp(e->name, "text") && !strcmp(name, "grit_contact_model")) {
      static const char *const models[] = {"lagged", "similar", "sap"}; /* = grit_contact_model */
      int k;
      if (read_enum(c, e, "data", models, 3, &k)) c->settings.contact_model = (grit_contact_model)k;
    } else {
      mjcf_warn(c, e, "'%.60s' is not one of grit's parameters: ignored", name);
      continue;
    }
    finish(c, e);
  }
}

/* The vertices of mesh m from its file: the path is taken as it is when absolute, else relative to the
 * model file's directory and the compiler's meshdir (or assetdir), as MuJoCo does. */
static void read_mesh_file(mjcf_ctx *c, const mjcf_node *e, const char *file, mjcf_mesh *m) {
  if (!c->base_dir) {
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, e, "mesh files are read only when the model is loaded from a file");
    return;
  }
  const char *sub = c->meshdir ? c->meshdir : c->assetdir ? c->assetdir : "";
  char path[4096];
  int len;
  if (file[0] == '/') len = snprintf(path, sizeof path, "%s", file);
  else if (sub[0] == '/') len = snprintf(path, sizeof path, "%s%s%s", sub, sub[strlen(sub) - 1] == '/' ? "" : "/", file);
  else
    len = snprintf(path, sizeof path, "%s%s%s%s", c->base_dir, sub, sub[0] && sub[strlen(sub) - 1] != '/' ? "/" : "",
                   file);
  if (len < 0 || (size_t)len >= sizeof path) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the mesh file's path is too long");
    return;
  }
  char why[GRIT_MESSAGE_SIZE];
  grit_status s = mjcf_mesh_file_read(path, &c->pool, &m->vert, &m->nvert, &m->tri, &m->ntri, why);
  if (s != GRIT_OK) mjcf_fail(c, s, e, "%s", why);
}

static void read_asset(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (!strcmp(e->name, "texture") || !strcmp(e->name, "material") || !strcmp(e->name, "skin")) continue;
    if (strcmp(e->name, "mesh")) {
      mjcf_warn(c, e, "element is not supported: ignored");
      continue;
    }
    mjcf_mesh *m = mjcf_push(c, &c->meshes, sizeof *m);
    if (!m) return;
    m->line = e->line;
    m->name = read_name(c, e, "name");
    int count = 0;
    const char *file = attr(e, "file");
    if (file && attr(e, "vertex")) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a mesh takes 'file' or 'vertex', not both");
    } else if (file) {
      read_mesh_file(c, e, file, m);
    } else if (read_array(c, e, "vertex", &m->vert, &count)) {
      if (count % 3 || count < 12)
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'vertex' needs at least 4 points of 3 numbers");
      m->nvert = count / 3;
    }
    /* MuJoCo's order: translate by -refpos, rotate by refquat^-1, scale */
    double scale[3] = {1, 1, 1}, refpos[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
    read_numbers(c, e, "scale", scale, 3, 3);
    read_numbers(c, e, "refpos", refpos, 3, 3);
    if (read_numbers(c, e, "refquat", q, 4, 4)) {
      double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (!(nq > 1e-10) || !isfinite(nq)) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'refquat' is zero");
      for (int k = 0; k < 4 && c->status == GRIT_OK; ++k) q[k] /= nq;
    }
    mark(e, "face"); /* grit collides with the convex hull of the vertices, as MuJoCo does */
    mark(e, "normal");
    mark(e, "texcoord");
    const double R[9] = {q[0] * q[0] + q[1] * q[1] - q[2] * q[2] - q[3] * q[3], 2 * (q[1] * q[2] - q[0] * q[3]),
                         2 * (q[1] * q[3] + q[0] * q[2]), 2 * (q[1] * q[2] + q[0] * q[3]),
                         q[0] * q[0] - q[1] * q[1] + q[2] * q[2] - q[3] * q[3], 2 * (q[2] * q[3] - q[0] * q[1]),
                         2 * (q[1] * q[3] - q[0] * q[2]), 2 * (q[2] * q[3] + q[0] * q[1]),
                         q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3]};
    for (int i = 0; i < m->nvert && c->status == GRIT_OK; ++i) {
      double *v = m->vert + 3 * i, d[3];
      for (int k = 0; k < 3; ++k) d[k] = v[k] - refpos[k];
      for (int k = 0; k < 3; ++k) v[k] = (R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2]) * scale[k];
      for (int k = 0; k < 3; ++k)
        if (!isfinite(v[k])) mjcf_fail(c, GRIT_ERR_NOT_FINITE, e, "a vertex overflows after scaling");
    }
    finish(c, e);
    if (!m->name && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a mesh needs a 'name'");
  }
}

static void read_actuators(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    const int motor = !strcmp(e->name, "motor"), general = !strcmp(e->name, "general");
    mjcf_actuator a;
    if (motor || general) {
      a = MJCF_AT(c->defs, mjcf_default, element_class(c, e, 0))->act;
      if (motor) a.gain = 1, a.supported = 1; /* a motor is a fixed unit gain whatever the class says */
      read_actuator_attrs(c, e, &a, general);
      a.joint = read_name(c, e, "joint");
      if (!a.supported) mjcf_warn(c, e, "only direct force actuators (fixed gain, no bias or dynamics) are supported: ignored");
      const char *trn[] = {"jointinparent", "tendon", "site", "body", "cranksite"};
      for (int i = 0; i < 5 && a.supported; ++i)
        if (attr(e, trn[i])) {
          mjcf_warn(c, e, "transmission '%s' is not supported (only 'joint'): actuator ignored", trn[i]);
          a.supported = 0;
        }
      if (a.supported && !a.joint && c->status == GRIT_OK)
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the actuator needs a transmission ('joint')");
      a.name = read_name(c, e, "name");
      finish(c, e);
    } else {
      actuator_defaults(&a);
      a.supported = 0;
      mjcf_warn(c, e, "actuator type is not supported (only motor and general): ignored");
    }
    a.line = e->line;
    mjcf_actuator *p = c->status == GRIT_OK ? mjcf_push(c, &c->acts, sizeof *p) : NULL;
    if (p) *p = a;
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
    k->line = e->line;
    k->name = read_name(c, e, "name");
    read_numbers(c, e, "time", &k->time, 1, 1);
    read_array(c, e, "qpos", &k->qpos, &k->nqpos);
    read_array(c, e, "qvel", &k->qvel, &k->nqvel);
    read_array(c, e, "ctrl", &k->ctrl, &k->nctrl);
    finish(c, e);
  }
}

/* ----------------------------------------------------------------------------------- model */

void mjcf_read(mjcf_ctx *c, mjcf_node *root) {
  if (strcmp(root->name, "mujoco")) {
    mjcf_fail(c, GRIT_ERR_PARSE, root, "the root element must be <mujoco>");
    return;
  }
  c->degree = 1;
  memcpy(c->eulerseq, "xyz", 4);
  c->inertiafromgeom = 2;
  c->autolimits = 1;
  c->igroup[0] = 0;
  c->igroup[1] = 5;
  c->opt = grit_default_options();
  c->settings = grit_default_step_settings();
  grit_geom_def g = grit_default_geom_def();
  c->stiffness = g.stiffness;
  c->dissipation = g.dissipation;
  c->tau_d = g.tau_d;
  c->model_name = attr(root, "model");
  finish(c, root);

  /* the world body and the "main" default class always exist */
  mjcf_body *world = mjcf_push(c, &c->bodies, sizeof *world);
  if (world) world->folded_into = -1, world->parent = -1, world->line = root->line;
  static const char *const order[] = {"compiler", "option", "default", "custom", "asset", "worldbody", "actuator",
                                      "keyframe"};
  for (int pass = 0; pass < 8; ++pass) {
    if (pass == 3 && c->defs.n == 0) { /* no <default>: make "main" with MuJoCo's defaults */
      mjcf_default *d = mjcf_push(c, &c->defs, sizeof *d);
      if (!d) return;
      d->name = "main";
      d->parent = -1;
      joint_defaults(&d->joint);
      geom_defaults(&d->geom);
      actuator_defaults(&d->act);
    }
    for (const mjcf_node *e = root->child; e && c->status == GRIT_OK; e = e->next) {
      if (strcmp(e->name, order[pass])) continue;
      switch (pass) {
        case 0: read_compiler(c, e); break;
        case 1: read_option(c, e); break;
        case 2: read_default(c, e, -1); break;
        case 3: read_custom(c, e); break;
        case 4: read_asset(c, e); break;
        case 5: finish(c, e), read_body_children(c, e, 0, 0); break;
        case 6: read_actuators(c, e); break;
        default: read_keyframes(c, e); break;
      }
    }
  }
  static const char *const visual[] = {"size", "visual", "statistic"};
  for (const mjcf_node *e = root->child; e && c->status == GRIT_OK; e = e->next) {
    int known = 0;
    for (int i = 0; i < 8; ++i) known |= !strcmp(e->name, order[i]);
    for (int i = 0; i < 3; ++i) known |= !strcmp(e->name, visual[i]);
    if (!known) mjcf_warn(c, e, "section is not supported: ignored with its contents");
  }
}
