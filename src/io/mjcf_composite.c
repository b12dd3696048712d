/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_composite.c — MJCF's <composite> (MuJoCo 2.2.2): particle, grid, rope, loop, cloth, box, cylinder
 * and ellipsoid, expanded into the loader's description while the body tree is read, as MuJoCo 2.2.2's
 * compiler expands them: the same bodies (in the same depth-first order, so q and v are MuJoCo's), joints,
 * geometries, sites, tendons, equality constraints and contact exclusions, with MuJoCo's generated names
 * (prefix + letter + indices). The generated elements start from MuJoCo's built-in defaults, not from the
 * file's default classes (MuJoCo 2.2.2 gives a composite its own defaults), changed by the type (groups,
 * softness) and then by the template elements <geom>, <site>, <joint kind>, <tendon kind>. <skin> is
 * visual: checked and ignored. docs/mjcf.md, Composite objects. */
#include "mjcf_composite.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "grit/constraints.h"

enum { T_PARTICLE, T_GRID, T_ROPE, T_LOOP, T_CLOTH, T_BOX, T_CYLINDER, T_ELLIPSOID };
enum { K_JOINT, K_TWIST, K_STRETCH, K_TENDON, K_SHEAR, NKIND }; /* joint kinds main, twist, stretch; tendon kinds */

static const char *const TYPES[] = {"particle", "grid", "rope", "loop", "cloth", "box", "cylinder", "ellipsoid"};
#define MAX_ELEMENTS 100000 /* particles a composite may generate: bounds memory and time */
#define MAX_NAMED 10000     /* elements of the other types, whose named sites, joints and tendons the
                               loader resolves by name (a search per reference) */
static const double PI = 3.14159265358979323846;

typedef struct comp_kind {
  int add;             /* a template of this kind was given (twist, stretch, shear are generated only then) */
  mjcf_joint joint;    /* joint kinds: the joint's attributes */
  mjcf_tendon tendon;  /* tendon kinds: the tendon's attributes */
  double solref[2];    /* the equality constraint that fixes this kind (solreffix) */
} comp_kind;

typedef struct comp {
  const mjcf_node *n, *geom_node;
  const char *prefix;
  int type, count[3], dim, npin, *pin, skin, priority;
  double spacing, offset[3], flatinertia, solrefsmooth[2];
  mjcf_geom geom;
  comp_kind k[NKIND];
} comp;

/* --------------------------------------------------------------------------------- reading */

static int in_list(const char *s, const char *const *list, int n) {
  for (int i = 0; i < n; ++i)
    if (!strcmp(s, list[i])) return 1;
  return 0;
}

/* Attributes of e that MuJoCo 2.2.2's schema does not allow here: unsupported (an error, or leniently a
 * warning). Returns a copy of e with only the attributes in `pass`, for the shared attribute readers
 * (their unread ones are reported by mjcf_finish as for any element). */
static mjcf_node *schema(mjcf_ctx *c, const mjcf_node *e, const char *const *allowed, int nallowed,
                         const char *const *pass, int npass) {
  for (int i = 0; i < e->nattr && c->status == GRIT_OK; ++i) {
    e->used[i] = 1;
    if (!in_list(e->attr[2 * i], allowed, nallowed))
      mjcf_unsupported(c, e, "attribute '%.60s' is not one of MuJoCo 2.2.2's for a composite's <%s>", e->attr[2 * i],
                       e->name);
  }
  mjcf_node *k = mjcf_alloc(&c->pool, sizeof *k);
  const char **attr = mjcf_alloc(&c->pool, sizeof(char *) * (size_t)(2 * e->nattr + 2));
  unsigned char *used = mjcf_alloc(&c->pool, (size_t)e->nattr + 1);
  if (!k || !attr || !used) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, e, "out of memory");
    return NULL;
  }
  *k = *e;
  k->attr = attr, k->used = used, k->nattr = 0, k->child = k->last_child = k->next = NULL;
  for (int i = 0; i < e->nattr; ++i)
    if (in_list(e->attr[2 * i], pass, npass)) {
      attr[2 * k->nattr] = e->attr[2 * i], attr[2 * k->nattr + 1] = e->attr[2 * i + 1];
      k->nattr++;
    }
  return k;
}

/* A positive (time constant, damping ratio), as the loader's other solref attributes. */
static void read_solref(mjcf_ctx *c, const mjcf_node *e, const char *name, double s[2]) {
  double v[2] = {s[0], s[1]};
  if (!mjcf_read_numbers(c, e, name, v, 2, 2)) return;
  if (v[0] > 0 && v[1] > 0) s[0] = v[0], s[1] = v[1];
  else mjcf_warn(c, e, "'%s' (%g, %g): only positive (time constant, damping ratio) is supported: (%g, %g) used", name,
                 v[0], v[1], s[0], s[1]);
}

static int read_kind(mjcf_ctx *c, const mjcf_node *e, const char *const *names, int n) {
  int k = -1;
  if (!mjcf_read_enum(c, e, "kind", names, n, &k) && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'kind' is required");
  return k;
}

static void warn_limited(mjcf_ctx *c, const mjcf_node *e) {
  if (mjcf_attr_index(e, "limited") >= 0)
    mjcf_warn(c, e, "attribute 'limited' of a composite's <%s> is not read by MuJoCo 2.2.2: ignored (its 'range' "
                    "decides, as with limited=\"auto\")", e->name);
}

static void read_joint_template(mjcf_ctx *c, comp *k, const mjcf_node *e) {
  static const char *const allowed[] = {"kind", "group", "stiffness", "damping", "armature", "solreffix", "solimpfix",
                                        "limited", "range", "margin", "solreflimit", "solimplimit", "frictionloss",
                                        "solreffriction", "solimpfriction"};
  static const char *const pass[] = {"kind", "group", "stiffness", "damping", "armature", "solreffix", "solimpfix",
                                     "range", "margin", "solreflimit", "solimplimit", "frictionloss",
                                     "solreffriction", "solimpfriction"}; /* all but 'limited' */
  mjcf_node *f = schema(c, e, allowed, 15, pass, 14);
  if (!f || c->status != GRIT_OK) return;
  static const char *const kinds[] = {"main", "twist", "stretch"};
  warn_limited(c, e);
  const int kind = read_kind(c, f, kinds, 3);
  if (kind < 0) return;
  comp_kind *K = &k->k[kind];
  K->add = 1;
  read_solref(c, f, "solreffix", K->solref);
  double imp[5];
  mjcf_read_numbers(c, f, "solimpfix", imp, 3, 5); /* no counterpart: near-rigid (docs/contact.md) */
  mjcf_read_joint_attrs(c, f, &K->joint);
  mjcf_finish(c, f);
}

static void read_tendon_template(mjcf_ctx *c, comp *k, const mjcf_node *e) {
  static const char *const allowed[] = {"kind", "group", "stiffness", "damping", "solreffix", "solimpfix",
                                        "limited", "range", "margin", "solreflimit", "solimplimit", "frictionloss",
                                        "solreffriction", "solimpfriction", "material", "rgba", "width"};
  static const char *const pass[] = {"kind", "group", "stiffness", "damping", "solreffix", "solimpfix", "range",
                                     "margin", "solreflimit", "solimplimit", "frictionloss", "solreffriction",
                                     "solimpfriction", "material", "rgba", "width"}; /* all but 'limited' */
  mjcf_node *f = schema(c, e, allowed, 17, pass, 16);
  if (!f || c->status != GRIT_OK) return;
  static const char *const kinds[] = {"main", "shear"};
  warn_limited(c, e);
  const int kind = read_kind(c, f, kinds, 2);
  if (kind < 0) return;
  comp_kind *K = &k->k[K_TENDON + kind];
  K->add = 1;
  read_solref(c, f, "solreffix", K->solref);
  double imp[5];
  mjcf_read_numbers(c, f, "solimpfix", imp, 3, 5);
  mjcf_tendon *t = &K->tendon;
  mjcf_read_numbers(c, f, "range", t->range, 2, 2);
  read_solref(c, f, "solreflimit", t->solreflimit);
  mjcf_read_numbers(c, f, "solimplimit", t->solimplimit, 3, 5);
  mjcf_read_numbers(c, f, "stiffness", &t->stiffness, 1, 1);
  mjcf_read_numbers(c, f, "damping", &t->damping, 1, 1);
  mjcf_read_numbers(c, f, "frictionloss", &t->frictionloss, 1, 1);
  static const char *const visual[] = {"group", "material", "rgba", "width"};
  for (int i = 0; i < 4; ++i) mjcf_mark(f, visual[i]);
  mjcf_finish(c, f); /* margin, solreffriction, solimpfriction: warnings, as on <tendon> */
}

static void read_geom_template(mjcf_ctx *c, comp *k, const mjcf_node *e) {
  static const char *const allowed[] = {"type", "contype", "conaffinity", "condim", "group", "priority",
                                        "size", "material", "rgba", "friction", "mass", "density",
                                        "solmix", "solref", "solimp", "margin", "gap"};
  if (k->geom_node) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a composite has at most one <geom>");
    return;
  }
  k->geom_node = e;
  mjcf_node *f = schema(c, e, allowed, 17, allowed, 17);
  if (!f || c->status != GRIT_OK) return;
  long v;
  if (mjcf_read_int(c, f, "priority", INT_MIN, INT_MAX, &v)) k->priority = (int)v;
  mjcf_read_geom_attrs(c, f, &k->geom);
  mjcf_finish(c, f); /* solmix, solref, solimp, margin, gap: warnings, as on <geom> */
}

static void read_skin(mjcf_ctx *c, comp *k, const mjcf_node *e) {
  static const char *const allowed[] = {"texcoord", "material", "group", "rgba", "inflate", "subgrid"};
  mjcf_node *f = schema(c, e, allowed, 6, allowed, 6);
  if (!f || c->status != GRIT_OK) return;
  if (k->skin) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a composite has at most one <skin>");
    return;
  }
  k->skin = 1;
  long group = 0, subgrid = 0;
  int tc;
  double rgba[4], inflate;
  mjcf_read_bool(c, f, "texcoord", &tc);
  mjcf_read_numbers(c, f, "rgba", rgba, 4, 4);
  mjcf_read_numbers(c, f, "inflate", &inflate, 1, 1);
  mjcf_mark(f, "material");
  if (mjcf_read_int(c, f, "group", INT_MIN, INT_MAX, &group) && (group < 0 || group >= 6))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "skin group must be between 0 and 5");
  if (mjcf_read_int(c, f, "subgrid", INT_MIN, INT_MAX, &subgrid) && subgrid > 0 && (k->count[0] < 3 || k->count[1] < 3))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "at least 3x3 required for skin subgrid");
  if (k->skin && k->type == T_GRID && k->dim != 2 && c->status == GRIT_OK)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "skin requires 2D grid");
  mjcf_finish(c, f);
}

static void read_pin(mjcf_ctx *c, comp *k, const mjcf_node *e) {
  static const char *const allowed[] = {"coord"};
  mjcf_node *f = schema(c, e, allowed, 1, allowed, 1);
  if (!f || c->status != GRIT_OK) return;
  double v[2] = {0, 0};
  if (!mjcf_read_numbers(c, f, "coord", v, 1, 2)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'coord' is required");
    return;
  }
  if (v[0] != floor(v[0]) || v[1] != floor(v[1]) || fabs(v[0]) > 1e9 || fabs(v[1]) > 1e9) {
    mjcf_fail(c, GRIT_ERR_PARSE, e, "attribute 'coord' needs integers");
    return;
  }
  k->pin[2 * k->npin] = (int)v[0], k->pin[2 * k->npin + 1] = (int)v[1];
  k->npin++;
}

/* MuJoCo's softer or harder equality settings of some types (solref's time constant; solimp unused). */
static void type_defaults(comp *k) {
  double eq[2] = {0.02, 1};
  mjcf_joint j;
  mjcf_joint_defaults(&j);
  mjcf_tendon t;
  memset(&t, 0, sizeof t);
  t.limited = 2;
  t.solreflimit[0] = 0.02, t.solreflimit[1] = 1;
  t.solimplimit[2] = 0.001;
  t.springlength = -1;
  for (int i = 0; i < NKIND; ++i) {
    k->k[i].joint = j, k->k[i].tendon = t;
    memcpy(k->k[i].solref, eq, sizeof eq);
  }
  k->solrefsmooth[0] = 0.02, k->solrefsmooth[1] = 1;
  mjcf_geom_defaults(&k->geom);
  switch (k->type) {
    case T_PARTICLE: k->geom.condim = 1, k->priority = 1; break; /* frictionless */
    case T_GRID: k->k[K_TENDON].solref[0] = 0.01; break;          /* hard main tendons */
    case T_LOOP: k->solrefsmooth[0] = 0.01; break;                /* hard closure */
    case T_BOX: case T_CYLINDER: case T_ELLIPSOID:
      k->geom.contype = 0; /* no self collisions */
      k->k[K_TENDON].solref[0] = 0.01;
      break;
    default: break;
  }
}

static int read_top(mjcf_ctx *c, comp *k, const mjcf_node *n) {
  static const char *const allowed[] = {"prefix", "type", "count", "spacing", "offset",
                                        "flatinertia", "solrefsmooth", "solimpsmooth"};
  mjcf_node *f = schema(c, n, allowed, 8, allowed, 8);
  if (!f || c->status != GRIT_OK) return 0;
  k->prefix = mjcf_attr(f, "prefix");
  if (!k->prefix) k->prefix = "";
  if (strlen(k->prefix) > 200) mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'prefix' is longer than 200 characters");
  if (!mjcf_read_enum(c, f, "type", TYPES, 8, &k->type)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'type' is required");
    return 0;
  }
  double cnt[3] = {1, 1, 1};
  if (!mjcf_read_numbers(c, f, "count", cnt, 1, 3)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'count' is required");
    return 0;
  }
  for (int i = 0; i < 3; ++i) {
    if (cnt[i] != floor(cnt[i])) {
      mjcf_fail(c, GRIT_ERR_PARSE, n, "attribute 'count': %g is not an integer", cnt[i]);
      return 0;
    }
    if (cnt[i] < 1) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "positive counts expected in composite (count %g)", cnt[i]);
      return 0;
    }
  }
  const int max = k->type == T_PARTICLE ? MAX_ELEMENTS : MAX_NAMED;
  if (cnt[0] * cnt[1] * cnt[2] > max) {
    mjcf_fail(c, GRIT_ERR_CAPACITY, n, "a composite of more than %d elements (%s)", max, TYPES[k->type]);
    return 0;
  }
  int first = 0;
  for (int i = 0; i < 3; ++i) {
    k->count[i] = (int)cnt[i];
    if (k->count[i] == 1) first = 1;
    else if (first) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "singleton counts must come last");
      return 0;
    } else k->dim++;
  }
  if (!mjcf_read_numbers(c, f, "spacing", &k->spacing, 1, 1)) {
    if (c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'spacing' is required");
    return 0;
  }
  if (!(k->spacing >= 1e-15)) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "positive spacing expected in composite");
    return 0;
  }
  mjcf_read_numbers(c, f, "offset", k->offset, 3, 3);
  mjcf_read_numbers(c, f, "flatinertia", &k->flatinertia, 1, 1);
  type_defaults(k);
  read_solref(c, f, "solrefsmooth", k->solrefsmooth);
  double imp[5];
  mjcf_read_numbers(c, f, "solimpsmooth", imp, 3, 5);
  return c->status == GRIT_OK;
}

static void read_children(mjcf_ctx *c, comp *k, const mjcf_node *n) {
  int npin = 0;
  for (const mjcf_node *e = n->child; e; e = e->next) npin += !strcmp(e->name, "pin");
  k->pin = mjcf_alloc(&c->pool, sizeof(int) * (size_t)(2 * npin + 2));
  if (!k->pin) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, n, "out of memory");
    return;
  }
  /* the skin first (some checks need it), then the rest in MuJoCo's order */
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next)
    if (!strcmp(e->name, "skin")) read_skin(c, k, e);
  static const char *const order[] = {"geom", "site", "joint", "tendon", "pin"};
  int sites = 0;
  for (int pass = 0; pass < 5; ++pass)
    for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
      if (strcmp(e->name, order[pass])) continue;
      if (pass == 0) read_geom_template(c, k, e);
      else if (pass == 1) {
        static const char *const site[] = {"group", "size", "material", "rgba"}; /* visual */
        if (sites++) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a composite has at most one <site>");
        (void)schema(c, e, site, 4, site, 0);
      } else if (pass == 2) read_joint_template(c, k, e);
      else if (pass == 3) read_tendon_template(c, k, e);
      else read_pin(c, k, e);
    }
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next)
    if (!in_list(e->name, order, 5) && strcmp(e->name, "skin"))
      mjcf_unsupported(c, e, "element is not one of MuJoCo 2.2.2's inside <composite>");
}

/* ------------------------------------------------------------------------------ generation */

/* A generated name: the prefix and then fmt. */
static const char *gname(mjcf_ctx *c, const comp *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static const char *gname(mjcf_ctx *c, const comp *k, const char *fmt, ...) {
  char buf[300];
  int len = snprintf(buf, sizeof buf, "%s", k->prefix);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, sizeof buf - (size_t)len, fmt, ap);
  va_end(ap);
  const char *s = mjcf_strdup(&c->pool, buf, strlen(buf));
  if (!s) mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, k->n, "out of memory");
  return s;
}

static void set3(double *v, double a, double b, double d) { v[0] = a, v[1] = b, v[2] = d; }

static int add_body(mjcf_ctx *c, const comp *k, int parent, const char *name, const double pos[3]) {
  const int def = MJCF_AT(c->bodies, mjcf_body, parent)->def;
  mjcf_body *b = c->status == GRIT_OK ? mjcf_push(c, &c->bodies, sizeof *b) : NULL;
  if (!b) return -1;
  b->parent = parent, b->def = def, b->folded_into = -1;
  b->name = name, b->line = k->n->line, b->file = k->n->file;
  memcpy(b->pos, pos, sizeof b->pos);
  return c->bodies.n - 1;
}

/* The template geometry on `body` at pos (quat NULL: the body's orientation); type < 0: the template's. */
static mjcf_geom *add_geom(mjcf_ctx *c, const comp *k, int body, const char *name, int type, const double pos[3],
                           const double *quat) {
  mjcf_geom *g = c->status == GRIT_OK ? mjcf_push(c, &c->geoms, sizeof *g) : NULL;
  if (!g) return NULL;
  *g = k->geom;
  const mjcf_node *at = k->geom_node ? k->geom_node : k->n;
  g->name = name, g->body = body, g->line = at->line, g->file = at->file;
  if (type >= 0) g->type = type;
  if (pos) memcpy(g->pos, pos, sizeof g->pos);
  if (quat) {
    g->ori.kind = MJCF_ORI_QUAT;
    memcpy(g->ori.v, quat, sizeof(double) * 4);
  }
  return g;
}

static void add_joint(mjcf_ctx *c, const comp *k, int kind, int body, const char *name, int type, const double pos[3],
                      const double axis[3]) {
  mjcf_joint *j = c->status == GRIT_OK ? mjcf_push(c, &c->joints, sizeof *j) : NULL;
  if (!j) return;
  *j = k->k[kind].joint;
  j->name = name, j->body = body, j->type = type, j->line = k->n->line, j->file = k->n->file;
  memcpy(j->pos, pos, sizeof j->pos);
  memcpy(j->axis, axis, sizeof j->axis);
  MJCF_AT(c->bodies, mjcf_body, body)->njoint++;
}

static void add_site(mjcf_ctx *c, const comp *k, int body, const char *name) {
  mjcf_site *s = c->status == GRIT_OK ? mjcf_push(c, &c->sites, sizeof *s) : NULL;
  if (s) s->name = name, s->body = body, s->line = k->n->line, s->file = k->n->file;
}

/* A tendon of kind `kind` through n sites (spatial) or over n joints with coefficient 1 (fixed). */
static void add_tendon(mjcf_ctx *c, const comp *k, int kind, const char *name, int spatial, const char **obj, int n) {
  mjcf_tendon t = k->k[kind].tendon;
  t.name = name, t.line = k->n->line, t.file = k->n->file;
  t.type = spatial ? GRIT_TENDON_SPATIAL : GRIT_TENDON_FIXED;
  t.n = n;
  t.obj = mjcf_alloc(&c->pool, sizeof *t.obj * (size_t)(n + 1));
  t.geom = mjcf_alloc(&c->pool, sizeof *t.geom * (size_t)(n + 1));
  t.obj_line = mjcf_alloc(&c->pool, sizeof *t.obj_line * (size_t)(n + 1));
  t.coef = mjcf_alloc(&c->pool, sizeof *t.coef * (size_t)(n + 1));
  if (!t.obj || !t.geom || !t.obj_line || !t.coef) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, k->n, "out of memory");
    return;
  }
  /* a spatial tendon's coef marks pulleys (mjcf_cx.c): 0 on sites */
  for (int i = 0; i < n; ++i) t.obj[i] = obj[i], t.obj_line[i] = k->n->line, t.coef[i] = spatial ? 0.0 : 1.0;
  mjcf_tendon *p = c->status == GRIT_OK ? mjcf_push(c, &c->tendons, sizeof *p) : NULL;
  if (p) *p = t;
}

static void add_eq(mjcf_ctx *c, const comp *k, int type, const char *obj1, const char *obj2, const double solref[2]) {
  mjcf_equality *q = c->status == GRIT_OK ? mjcf_push(c, &c->eqs, sizeof *q) : NULL;
  if (!q) return;
  q->type = type, q->obj1 = obj1, q->obj2 = obj2, q->line = k->n->line, q->file = k->n->file;
  q->polycoef[1] = 1;
  memcpy(q->solref, solref, sizeof q->solref);
}

/* A spatial tendon between two sites and the equality that keeps its length. */
static void add_site_tendon(mjcf_ctx *c, const comp *k, int kind, const char *name, const char *s1, const char *s2) {
  const char *obj[2] = {s1, s2};
  add_tendon(c, k, kind, name, 1, obj, 2);
  add_eq(c, k, GRIT_EQ_TENDON, name, NULL, k->k[kind].solref);
}

static const double ZERO[3] = {0, 0, 0};
static const double AXES[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

static void make_particle(mjcf_ctx *c, const comp *k, int body) {
  for (int ix = 0; ix < k->count[0]; ++ix)
    for (int iy = 0; iy < k->count[1]; ++iy)
      for (int iz = 0; iz < k->count[2] && c->status == GRIT_OK; ++iz) {
        double p[3];
        set3(p, k->offset[0] + k->spacing * (ix - 0.5 * k->count[0]), k->offset[1] + k->spacing * (iy - 0.5 * k->count[1]),
             k->offset[2] + k->spacing * (iz - 0.5 * k->count[2]));
        const int b = add_body(c, k, body, NULL, p);
        if (b < 0) return;
        for (int i = 0; i < 3; ++i) add_joint(c, k, K_JOINT, b, NULL, GRIT_JOINT_SLIDE, ZERO, AXES[i]);
        add_geom(c, k, b, NULL, MJCF_GEOM_SPHERE, NULL, NULL);
      }
}

/* The diagonal tendons of a 2D grid or cloth (kind shear). */
static void make_shear(mjcf_ctx *c, const comp *k) {
  for (int ix = 0; ix < k->count[0] - 1; ++ix)
    for (int iy = 0; iy < k->count[1] - 1 && c->status == GRIT_OK; ++iy)
      add_site_tendon(c, k, K_SHEAR, gname(c, k, "TS%d_%d", ix, iy), gname(c, k, "S%d_%d", ix, iy),
                      gname(c, k, "S%d_%d", ix + 1, iy + 1));
}

static int pinned(const comp *k, int ix, int iy) {
  for (int i = 0; i < k->npin; ++i)
    if (k->pin[2 * i] == ix && k->pin[2 * i + 1] == iy) return 1;
  return 0;
}

static void make_grid(mjcf_ctx *c, const comp *k, int body) {
  if (k->dim > 2) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "grid can only be 1D or 2D");
  else if (k->k[K_SHEAR].add && k->dim != 2) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "shear requires 2D grid");
  for (int ix = 0; ix < k->count[0]; ++ix)
    for (int iy = 0; iy < k->count[1] && c->status == GRIT_OK; ++iy) {
      double p[3];
      set3(p, k->offset[0] + k->spacing * (ix - 0.5 * k->count[0]), k->offset[1] + k->spacing * (iy - 0.5 * k->count[1]),
           k->offset[2]);
      const int b = add_body(c, k, body, gname(c, k, "B%d_%d", ix, iy), p);
      if (b < 0) return;
      add_geom(c, k, b, gname(c, k, "G%d_%d", ix, iy), MJCF_GEOM_SPHERE, NULL, NULL);
      add_site(c, k, b, gname(c, k, "S%d_%d", ix, iy));
      if (pinned(k, ix, iy)) continue; /* fixed to the parent */
      for (int i = 0; i < 3; ++i)
        add_joint(c, k, K_JOINT, b, gname(c, k, "J%d_%d_%d", i, ix, iy), GRIT_JOINT_SLIDE, ZERO, AXES[i]);
    }
  for (int i = 0; i < 2; ++i)
    for (int ix = 0; ix < k->count[0] - (i == 0); ++ix)
      for (int iy = 0; iy < k->count[1] - (i == 1) && c->status == GRIT_OK; ++iy)
        add_site_tendon(c, k, K_TENDON, gname(c, k, "T%d_%d_%d", i, ix, iy), gname(c, k, "S%d_%d", ix, iy),
                        gname(c, k, "S%d_%d", ix + (i == 0), iy + (i == 1)));
  if (k->k[K_SHEAR].add) make_shear(c, k);
}

/* The twist (hinge about `axis`) and stretch (slide along it) joints of kinds given, each with the
 * equality constraint that fixes it; `suffix` is the element's index text. */
static void add_twist_stretch(mjcf_ctx *c, const comp *k, int b, const char *suffix, const double pos[3],
                              const double axis[3]) {
  if (k->k[K_TWIST].add) {
    const char *name = gname(c, k, "JT%s", suffix);
    add_joint(c, k, K_TWIST, b, name, GRIT_JOINT_HINGE, pos, axis);
    add_eq(c, k, GRIT_EQ_JOINT, name, NULL, k->k[K_TWIST].solref);
  }
  if (k->k[K_STRETCH].add) {
    const char *name = gname(c, k, "JS%s", suffix);
    add_joint(c, k, K_STRETCH, b, name, GRIT_JOINT_SLIDE, pos, axis);
    add_eq(c, k, GRIT_EQ_JOINT, name, NULL, k->k[K_STRETCH].solref);
  }
}

/* Element ix1 of a rope or loop, the child of `body` (element ix), or the root itself (ix == ix1). */
static int rope_body(mjcf_ctx *c, const comp *k, int body, int ix, int ix1) {
  const int root = ix == ix1;
  const double dx = k->spacing * (ix1 - ix);
  if (!root) {
    double p[3] = {dx, 0, 0};
    double a = 2 * PI / k->count[0], R = 0.5 * k->spacing * sin(PI - a) / sin(0.5 * a), h = ix1 > ix ? 0.5 * a : -0.5 * a;
    if (k->type == T_LOOP) set3(p, (ix1 > ix ? 1 : -1) * R * cos(0.5 * a), R * sin(0.5 * a), 0);
    body = add_body(c, k, body, gname(c, k, "B%d", ix1), p);
    if (body < 0) return -1;
    if (k->type == T_LOOP) {
      mjcf_body *b = MJCF_AT(c->bodies, mjcf_body, body);
      b->ori.kind = MJCF_ORI_QUAT;
      b->ori.v[0] = cos(h), b->ori.v[1] = b->ori.v[2] = 0, b->ori.v[3] = sin(h);
    }
  }
  const double q[4] = {sqrt(0.5), 0, sqrt(0.5), 0}; /* the geometry's z along the rope */
  add_geom(c, k, body, gname(c, k, "G%d", ix1), -1, ZERO, q);
  if (root) return body;
  const double jp[3] = {-0.5 * dx, 0, 0};
  for (int i = 0; i < 2; ++i) add_joint(c, k, K_JOINT, body, gname(c, k, "J%d_%d", i, ix1), GRIT_JOINT_HINGE, jp, AXES[i + 1]);
  char suffix[32];
  snprintf(suffix, sizeof suffix, "%d", ix1);
  add_twist_stretch(c, k, body, suffix, jp, AXES[0]);
  return body;
}

/* The body's name after prefix "B": the root's coordinates (ny 1: "X", 2: "X_Y"); 0 on a failure. */
static int root_coords(mjcf_ctx *c, const comp *k, int body, int ny, int *o) {
  const char *name = MJCF_AT(c->bodies, mjcf_body, body)->name;
  const size_t lp = strlen(k->prefix);
  if (!name || strncmp(name, k->prefix, lp) || name[lp] != 'B') {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "'%sB' must be the beginning of the root body's name", k->prefix);
    return 0;
  }
  char sep = 0;
  const int got = ny == 1 ? sscanf(name + lp + 1, "%d", &o[0]) : sscanf(name + lp + 1, "%d%c%d", &o[0], &sep, &o[1]);
  if (got != (ny == 1 ? 1 : 3) || (ny == 2 && sep != '_')) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "the root body's name must contain %s coordinates",
              ny == 1 ? "the X" : "X_Y");
    return 0;
  }
  for (int i = 0; i < ny; ++i)
    if (o[i] < 0 || o[i] >= k->count[i]) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "the root body's coordinates are out of range");
      return 0;
    }
  return 1;
}

static void make_rope(mjcf_ctx *c, const comp *k, int body) {
  int ox;
  if (k->dim != 1) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "%s must be one-dimensional", k->type == T_ROPE ? "rope" : "loop");
    return;
  }
  if (!root_coords(c, k, body, 1, &ox)) return;
  rope_body(c, k, body, ox, ox);
  int b = body;
  for (int ix = ox; ix < k->count[0] - 1 && b >= 0; ++ix) b = rope_body(c, k, b, ix, ix + 1);
  b = body;
  for (int ix = ox; ix > 0 && b >= 0; --ix) b = rope_body(c, k, b, ix, ix - 1);
  if (k->type != T_LOOP || c->status != GRIT_OK) return;
  /* the closing ball joint between the ends, whose contacts are excluded */
  const char *b0 = gname(c, k, "B0"), *b1 = gname(c, k, "B%d", k->count[0] - 1);
  add_eq(c, k, GRIT_EQ_CONNECT, b0, b1, k->solrefsmooth);
  if (c->status == GRIT_OK) set3(MJCF_AT(c->eqs, mjcf_equality, c->eqs.n - 1)->anchor, -0.5 * k->spacing, 0, 0);
  mjcf_contact *x = c->status == GRIT_OK ? mjcf_push(c, &c->excludes, sizeof *x) : NULL;
  if (x) x->a = b0, x->b = b1, x->line = k->n->line, x->file = k->n->file;
}

/* Element (ix1, iy1) of a cloth, the child of `body` (element (ix, iy)), or the root itself. */
static int cloth_body(mjcf_ctx *c, const comp *k, int body, int ix, int iy, int ix1, int iy1) {
  const int root = ix == ix1 && iy == iy1;
  const double dx = k->spacing * (ix1 - ix), dy = k->spacing * (iy1 - iy);
  if (!root) {
    const double p[3] = {dx, dy, 0};
    body = add_body(c, k, body, gname(c, k, "B%d_%d", ix1, iy1), p);
    if (body < 0) return -1;
  }
  const double qa[4] = {sqrt(0.5), sqrt(0.5), 0, 0}, qb[4] = {0.5, 0.5, 0.5, 0.5}; /* alternating */
  mjcf_geom *g = add_geom(c, k, body, gname(c, k, "G%d_%d", ix1, iy1), -1, ZERO, (ix1 + iy1) % 2 ? qa : qb);
  if (!g) return -1;
  if (k->flatinertia > 0) { /* the geometry's mass, spread as a flat box of the spacing */
    mjcf_geom t = *g;
    memcpy(t.csize, t.size, sizeof t.csize);
    const double m = t.has_mass ? t.mass : t.density * mjcf_geom_volume(&t);
    const double s[3] = {0.5 * k->spacing, 0.5 * k->spacing, 0.5 * k->spacing * k->flatinertia};
    mjcf_body *b = MJCF_AT(c->bodies, mjcf_body, body);
    b->has_inertial = 1;
    b->imass = m;
    memset(b->ipos, 0, sizeof b->ipos);
    memset(&b->iori, 0, sizeof b->iori);
    set3(b->idiag, m * (s[1] * s[1] + s[2] * s[2]) / 3, m * (s[0] * s[0] + s[2] * s[2]) / 3,
         m * (s[0] * s[0] + s[1] * s[1]) / 3);
  }
  add_site(c, k, body, gname(c, k, "S%d_%d", ix1, iy1));
  if (root) return body;
  const double jp[3] = {-dx, -dy, 0};
  for (int i = 0; i < 2; ++i) /* a universal joint about the two axes across the link to the parent */
    add_joint(c, k, K_JOINT, body, gname(c, k, "J%d_%d_%d", i, ix1, iy1), GRIT_JOINT_HINGE, jp,
              ix != ix1 ? AXES[i + 1] : AXES[2 * i]);
  char suffix[48];
  snprintf(suffix, sizeof suffix, "%d_%d", ix1, iy1);
  add_twist_stretch(c, k, body, suffix, jp, ix != ix1 ? AXES[0] : AXES[1]);
  return body;
}

/* A chain along y from (ix, oy) on body `from`, both ways. */
static void cloth_column(mjcf_ctx *c, const comp *k, int from, int ix, int oy) {
  for (int dir = 1; dir >= -1; dir -= 2) {
    int b = from;
    for (int iy = oy; b >= 0 && iy + dir >= 0 && iy + dir < k->count[1]; iy += dir) b = cloth_body(c, k, b, ix, iy, ix, iy + dir);
  }
}

static void make_cloth(mjcf_ctx *c, const comp *k, int body) {
  int o[2];
  if (k->dim != 2) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "cloth must be two-dimensional");
    return;
  }
  if (!root_coords(c, k, body, 2, o)) return;
  cloth_body(c, k, body, o[0], o[1], o[0], o[1]);
  cloth_column(c, k, body, o[0], o[1]); /* the root's column, then each row element's, right then left */
  for (int dir = 1; dir >= -1; dir -= 2) {
    int b = body;
    for (int ix = o[0]; b >= 0 && ix + dir >= 0 && ix + dir < k->count[0]; ix += dir) {
      b = cloth_body(c, k, b, ix, o[1], ix + dir, o[1]);
      if (b >= 0) cloth_column(c, k, b, ix + dir, o[1]);
    }
  }
  for (int iy = 0; iy < k->count[1]; ++iy) /* the rows other than the root's are joined by tendons */
    for (int ix = 0; iy != o[1] && ix < k->count[0] - 1 && c->status == GRIT_OK; ++ix)
      add_site_tendon(c, k, K_TENDON, gname(c, k, "T%d_%d", ix, iy), gname(c, k, "S%d_%d", ix, iy),
                      gname(c, k, "S%d_%d", ix + 1, iy));
  if (k->k[K_SHEAR].add) make_shear(c, k);
}

static int on_shell(const comp *k, int ix, int iy, int iz) {
  return ix == 0 || ix == k->count[0] - 1 || iy == 0 || iy == k->count[1] - 1 || iz == 0 || iz == k->count[2] - 1;
}

/* A point of the cube [-1, 1]^3 onto the box, cylinder or ellipsoid of the composite's size. */
static void box_project(const comp *k, double p[3]) {
  double size[3];
  for (int i = 0; i < 3; ++i) size[i] = 0.5 * k->spacing * (k->count[i] - 1);
  if (k->type == T_CYLINDER) {
    const double L0 = fmax(fabs(p[0]), fabs(p[1]));
    mjcf_normvec(p, 2);
    p[0] *= L0, p[1] *= L0;
  } else if (k->type == T_ELLIPSOID) {
    mjcf_normvec(p, 3);
  }
  for (int i = 0; i < 3; ++i) p[i] *= size[i];
}

static void make_box(mjcf_ctx *c, const comp *k, int body) {
  if (k->dim != 3) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k->n, "box, cylinder and ellipsoid must be three-dimensional");
    return;
  }
  mjcf_geom *center = add_geom(c, k, body, gname(c, k, "Gcenter"), MJCF_GEOM_SPHERE, ZERO, NULL);
  if (!center) return;
  center->size[0] *= 2, center->size[1] = center->size[2] = 0;
  int n = 0; /* the shell's elements: one slide joint each, all in one fixed tendon */
  for (int ix = 0; ix < k->count[0]; ++ix)
    for (int iy = 0; iy < k->count[1]; ++iy)
      for (int iz = 0; iz < k->count[2]; ++iz) n += on_shell(k, ix, iy, iz);
  const char **joints = mjcf_alloc(&c->pool, sizeof(char *) * (size_t)(n + 1));
  const char *tname = gname(c, k, "T");
  if (!joints) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, k->n, "out of memory");
    return;
  }
  n = 0;
  /* the fixed tendon couples the shell's bodies: one kinematic tree only if a joint above moves them all */
  int moving = 0;
  for (int b = body; b > 0 && !moving; b = MJCF_AT(c->bodies, mjcf_body, b)->parent)
    moving = MJCF_AT(c->bodies, mjcf_body, b)->njoint > 0;
  if (!moving)
    mjcf_unsupported(c, k->n, "a %s composite on a body without joints: its tendon '%s' would span a kinematic tree "
                     "per element, and grit's tendons touch at most two", TYPES[k->type], tname);
  const int tendon = moving ? c->tendons.n : -1; /* leniently: without the tendon and its equality */
  if (moving) add_tendon(c, k, K_TENDON, tname, 0, joints, 0); /* its joints are filled in below */
  for (int ix = 0; ix < k->count[0]; ++ix)
    for (int iy = 0; iy < k->count[1]; ++iy)
      for (int iz = 0; iz < k->count[2] && c->status == GRIT_OK; ++iz) {
        if (!on_shell(k, ix, iy, iz)) continue;
        double p[3];
        for (int i = 0; i < 3; ++i) p[i] = 2.0 * (i == 0 ? ix : i == 1 ? iy : iz) / (k->count[i] - 1) - 1;
        box_project(k, p);
        const int b = add_body(c, k, body, gname(c, k, "B%d_%d_%d", ix, iy, iz), p);
        if (b < 0) return;
        mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, b); /* the body's z outwards */
        B->ori.kind = MJCF_ORI_ZAXIS;
        memcpy(B->ori.v, p, sizeof p);
        mjcf_normvec(B->ori.v, 3);
        mjcf_geom *g = add_geom(c, k, b, gname(c, k, "G%d_%d_%d", ix, iy, iz), -1, NULL, NULL);
        if (!g) return;
        if (g->type == MJCF_GEOM_CAPSULE) g->pos[2] = -(g->size[0] + g->size[1]); /* inwards from the surface */
        else g->type = MJCF_GEOM_SPHERE, g->pos[2] = -g->size[0];
        const char *jname = gname(c, k, "J%d_%d_%d", ix, iy, iz);
        add_joint(c, k, K_JOINT, b, jname, GRIT_JOINT_SLIDE, ZERO, AXES[2]);
        add_eq(c, k, GRIT_EQ_JOINT, jname, NULL, k->k[K_JOINT].solref);
        joints[n++] = jname;
        for (int i = 0; i < 3; ++i) { /* smoothness: equal to the next neighbour on the shell */
          const int jx = ix + (i == 0) < k->count[0] - 1 ? ix + (i == 0) : k->count[0] - 1;
          const int jy = iy + (i == 1) < k->count[1] - 1 ? iy + (i == 1) : k->count[1] - 1;
          const int jz = iz + (i == 2) < k->count[2] - 1 ? iz + (i == 2) : k->count[2] - 1;
          if (on_shell(k, jx, jy, jz) && (jx != ix || jy != iy || jz != iz))
            add_eq(c, k, GRIT_EQ_JOINT, jname, gname(c, k, "J%d_%d_%d", jx, jy, jz), k->solrefsmooth);
        }
      }
  if (c->status != GRIT_OK || tendon < 0) return;
  mjcf_tendon *t = MJCF_AT(c->tendons, mjcf_tendon, tendon);
  t->n = n;
  t->obj = joints;
  t->coef = mjcf_alloc(&c->pool, sizeof(double) * (size_t)(n + 1));
  t->geom = mjcf_alloc(&c->pool, sizeof(char *) * (size_t)(n + 1));
  t->obj_line = mjcf_alloc(&c->pool, sizeof(int) * (size_t)(n + 1));
  if (!t->coef || !t->geom || !t->obj_line) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, k->n, "out of memory");
    return;
  }
  for (int i = 0; i < n; ++i) t->coef[i] = 1, t->obj_line[i] = k->n->line;
  add_eq(c, k, GRIT_EQ_TENDON, tname, NULL, k->k[K_TENDON].solref);
}

void mjcf_read_composite(mjcf_ctx *c, const mjcf_node *n, int body, int in_frame) {
  if (in_frame) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "a <frame> cannot hold a <composite>");
    return;
  }
  comp k;
  memset(&k, 0, sizeof k);
  k.n = n;
  if (!read_top(c, &k, n)) return;
  read_children(c, &k, n);
  if (c->status != GRIT_OK) return;
  if (k.geom.type != MJCF_GEOM_SPHERE && k.geom.type != MJCF_GEOM_CAPSULE && k.geom.type != MJCF_GEOM_ELLIPSOID) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k.geom_node, "a composite's geom type must be sphere, capsule or ellipsoid");
    return;
  }
  if (!k.geom_node || !(k.geom.size[0] > 0)) { /* MuJoCo's defaults: zero size, no mass */
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, k.geom_node ? k.geom_node : n,
              "a composite needs a template <geom> with a positive size");
    return;
  }
  k.geom.priority = k.priority; /* MuJoCo: the particles' own friction and condim decide their contacts */
  switch (k.type) {
    case T_PARTICLE: make_particle(c, &k, body); break;
    case T_GRID: make_grid(c, &k, body); break;
    case T_ROPE: case T_LOOP: make_rope(c, &k, body); break;
    case T_CLOTH: make_cloth(c, &k, body); break;
    default: make_box(c, &k, body); break;
  }
}
