/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_cx.c — MJCF's joint friction and limit attributes, <site>, <tendon> (fixed, spatial without
 * wrapping) and <equality> (connect, weld, joint, tendon): read into the description, then added to
 * the builder (grit/constraints.h; docs/mjcf.md). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "grit/constraints.h"
#include "mjcf_internal.h"

static const char *const TFAUTO[] = {"false", "true", "auto"};

void mjcf_cx_joint_defaults(mjcf_joint *j) {
  j->frictionloss = 0;
  j->solreflimit[0] = 0.02, j->solreflimit[1] = 1;
  const double imp[5] = {0.9, 0.95, 0.001, 0.5, 2}; /* MuJoCo's default solimp */
  memcpy(j->solimplimit, imp, sizeof imp);
  j->actfrclimited = 2;
}

/* solref's direct form (negative numbers: stiffness and damping) has no counterpart here. */
static void check_solref(mjcf_ctx *c, const mjcf_node *n, const char *name, double s[2]) {
  if (s[0] > 0 && s[1] > 0) return;
  mjcf_warn(c, n, "'%s' (%g, %g): only positive (time constant, damping ratio) is supported: (0.02, 1) used", name,
            s[0], s[1]);
  s[0] = 0.02, s[1] = 1;
}

void mjcf_cx_read_joint_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_joint *j) {
  mjcf_read_numbers(c, n, "frictionloss", &j->frictionloss, 1, 1);
  if (mjcf_read_numbers(c, n, "solreflimit", j->solreflimit, 2, 2)) check_solref(c, n, "solreflimit", j->solreflimit);
  mjcf_read_numbers(c, n, "solimplimit", j->solimplimit, 3, 5); /* its width only (docs/contact.md) */
  mjcf_read_numbers(c, n, "actuatorfrcrange", j->actfrcrange, 2, 2); /* newer than 2.2.2 (mjcf_actfrc.c) */
  mjcf_read_enum(c, n, "actuatorfrclimited", TFAUTO, 3, &j->actfrclimited);
}

/* Whether n has any of the k attributes `names` (without marking them read). */
static int has_any(const mjcf_node *n, const char *const *names, int k) {
  for (int i = 0; i < k; ++i)
    if (mjcf_attr_index(n, names[i]) >= 0) return 1;
  return 0;
}

/* Where a site's attribute group `names` comes from: the site itself if it has one of them, else the
 * nearest <site> default up its class chain that has one (MuJoCo's inheritance, attribute by
 * attribute), else the site (nothing given: the built-in default). */
static const mjcf_node *site_source(mjcf_ctx *c, const mjcf_node *n, int def, const char *const *names, int k) {
  if (has_any(n, names, k)) return n;
  for (int d = def; d >= 0; d = MJCF_AT(c->defs, mjcf_default, d)->parent) {
    const mjcf_node *s = MJCF_AT(c->defs, mjcf_default, d)->site;
    if (s && has_any(s, names, k)) return s;
  }
  return n;
}

void mjcf_cx_read_site(mjcf_ctx *c, const mjcf_node *n, int body, int def, const double *frame) {
  static const char *const place[] = {"pos", "fromto"}, *const orient[] = {"quat", "axisangle", "xyaxes", "zaxis", "euler"};
  mjcf_site s;
  memset(&s, 0, sizeof s);
  s.name = mjcf_read_name(c, n, "name");
  s.line = n->line;
  s.file = n->file;
  s.body = body;
  def = mjcf_element_class(c, n, def);
  const mjcf_node *pn = site_source(c, n, def, place, 2), *on = site_source(c, n, def, orient, 5);
  double ft[6];
  if (mjcf_read_numbers(c, pn, "fromto", ft, 6, 6))
    for (int i = 0; i < 3; ++i) s.pos[i] = 0.5 * (ft[i] + ft[3 + i]);
  else
    mjcf_read_numbers(c, pn, "pos", s.pos, 3, 3);
  mjcf_orient ori = {MJCF_ORI_NONE, {0}}; /* the orientation matters to a slider-crank's slider site (issue 24) */
  mjcf_read_orientation(c, on, &ori, 0);
  if (frame) mjcf_frame_apply(c, frame, s.pos, &ori); /* inside a <frame>: placed by it */
  s.quat[0] = 1;
  const char *bad = ori.kind != MJCF_ORI_NONE ? mjcf_orient_quat(c, &ori, s.quat) : NULL;
  if (bad && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "%s", bad);
  static const char *const visual[] = {"type", "size", "group", "rgba", "material", "user"};
  for (size_t i = 0; i < sizeof visual / sizeof visual[0]; ++i) (void)mjcf_attr(n, visual[i]);
  mjcf_finish(c, n);
  mjcf_site *p = c->status == GRIT_OK ? mjcf_push(c, &c->sites, sizeof *p) : NULL;
  if (p) *p = s;
}

/* ----------------------------------------------------------------------------------- tendons */

static void read_tendon(mjcf_ctx *c, const mjcf_node *n, int spatial) {
  mjcf_tendon t;
  memset(&t, 0, sizeof t);
  t.name = mjcf_read_name(c, n, "name");
  t.line = n->line;
  t.file = n->file;
  t.type = spatial ? GRIT_TENDON_SPATIAL : GRIT_TENDON_FIXED;
  t.limited = 2;
  t.solreflimit[0] = 0.02, t.solreflimit[1] = 1;
  t.solimplimit[2] = 0.001;
  t.springlength = -1;
  mjcf_read_enum(c, n, "limited", TFAUTO, 3, &t.limited);
  mjcf_read_numbers(c, n, "range", t.range, 2, 2);
  if (mjcf_read_numbers(c, n, "solreflimit", t.solreflimit, 2, 2)) check_solref(c, n, "solreflimit", t.solreflimit);
  mjcf_read_numbers(c, n, "solimplimit", t.solimplimit, 3, 5);
  mjcf_read_numbers(c, n, "stiffness", &t.stiffness, 1, 1);
  mjcf_read_numbers(c, n, "damping", &t.damping, 1, 1);
  double sl[2];
  if (mjcf_read_numbers(c, n, "springlength", sl, 1, 2)) t.springlength = sl[0];
  mjcf_read_numbers(c, n, "frictionloss", &t.frictionloss, 1, 1);
  static const char *const visual[] = {"class", "width", "rgba", "group", "material", "user", "margin"};
  for (size_t i = 0; i < sizeof visual / sizeof visual[0]; ++i) (void)mjcf_attr(n, visual[i]);
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e; e = e->next) t.n++;
  t.obj = mjcf_alloc(&c->pool, sizeof *t.obj * (size_t)(t.n + 1));
  t.geom = mjcf_alloc(&c->pool, sizeof *t.geom * (size_t)(t.n + 1));
  t.obj_line = mjcf_alloc(&c->pool, sizeof *t.obj_line * (size_t)(t.n + 1));
  t.coef = mjcf_alloc(&c->pool, sizeof *t.coef * (size_t)(t.n + 1));
  if (!t.obj || !t.obj_line || !t.coef || !t.geom) {
    mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, n, "out of memory");
    return;
  }
  int k = 0;
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next, ++k) {
    const char *want = spatial ? "site" : "joint";
    t.obj_line[k] = e->line;
    if (spatial && !strcmp(e->name, "pulley")) { /* the divisor in coef (unused by spatial tendons) */
      if (!mjcf_read_numbers(c, e, "divisor", &t.coef[k], 1, 1) && c->status == GRIT_OK)
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'divisor' is required");
      else if (c->status == GRIT_OK && !(t.coef[k] > 0.0))
        mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a pulley's divisor must be positive");
      mjcf_finish(c, e);
      continue;
    }
    if (spatial && !strcmp(e->name, "geom")) { /* a wrap: between two sites, checked when added */
      t.geom[k] = mjcf_read_name(c, e, "geom");
      t.obj[k] = mjcf_read_name(c, e, "sidesite");
      if (!t.geom[k] && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'geom' is required");
      mjcf_finish(c, e);
      continue;
    }
    if (strcmp(e->name, want)) {
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a %s tendon's path takes <%s> elements", spatial ? "spatial" : "fixed",
                want);
      return;
    }
    t.obj[k] = mjcf_read_name(c, e, want);
    t.obj_line[k] = e->line;
    if (!spatial && !mjcf_read_numbers(c, e, "coef", &t.coef[k], 1, 1) && c->status == GRIT_OK)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute 'coef' is required");
    if (!t.obj[k] && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute '%s' is required", want);
    mjcf_finish(c, e);
  }
  mjcf_tendon *p = c->status == GRIT_OK ? mjcf_push(c, &c->tendons, sizeof *p) : NULL;
  if (p) *p = t;
}

void mjcf_cx_read_tendons(mjcf_ctx *c, const mjcf_node *n) {
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    const int fixed = !strcmp(e->name, "fixed"), spatial = !strcmp(e->name, "spatial");
    if (fixed || spatial) read_tendon(c, e, spatial);
    else mjcf_warn(c, e, "element is not supported: ignored");
  }
}

/* -------------------------------------------------------------------------------- equalities */

void mjcf_cx_read_equalities(mjcf_ctx *c, const mjcf_node *n) {
  static const char *const types[] = {"connect", "weld", "joint", "tendon"}; /* = grit_equality_type */
  static const char *const o1[] = {"body1", "body1", "joint1", "tendon1"}, *const o2[] = {"body2", "body2", "joint2",
                                                                                          "tendon2"};
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    int type = -1;
    for (int i = 0; i < 4; ++i)
      if (!strcmp(e->name, types[i])) type = i;
    if (type < 0) {
      mjcf_warn(c, e, "equality type is not supported: ignored");
      continue;
    }
    mjcf_equality q;
    memset(&q, 0, sizeof q);
    q.name = mjcf_read_name(c, e, "name");
    q.line = e->line;
    q.file = e->file;
    q.type = type;
    q.obj1 = mjcf_read_name(c, e, o1[type]);
    q.obj2 = mjcf_read_name(c, e, o2[type]);
    q.polycoef[1] = 1;
    q.solref[0] = 0.02, q.solref[1] = 1;
    int active = 1;
    mjcf_read_enum(c, e, "active", TFAUTO, 2, &active);
    mjcf_read_numbers(c, e, "anchor", q.anchor, 3, 3);
    mjcf_read_numbers(c, e, "relpose", q.relpose, 7, 7);
    mjcf_read_numbers(c, e, "polycoef", q.polycoef, 5, 5);
    if (mjcf_read_numbers(c, e, "solref", q.solref, 2, 2)) check_solref(c, e, "solref", q.solref);
    double imp[5];
    mjcf_read_numbers(c, e, "solimp", imp, 3, 5); /* no counterpart: near-rigid (docs/contact.md) */
    (void)mjcf_attr(e, "class");
    mjcf_finish(c, e);
    if (!q.obj1 && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attribute '%s' is required", o1[type]);
    if (!active) {
      mjcf_warn(c, e, "an inactive equality is left out");
      continue;
    }
    mjcf_equality *p = c->status == GRIT_OK ? mjcf_push(c, &c->eqs, sizeof *p) : NULL;
    if (p) *p = q;
  }
}

/* ------------------------------------------------------------------------------------ build */

/* A failure at `line` of `file` (NULL: the model file): the element was read from an included file. */
static void fail_line(mjcf_ctx *c, grit_status s, const char *element, const char *file, int line, const char *fmt,
                      const char *what) {
  mjcf_node n;
  memset(&n, 0, sizeof n);
  n.name = element;
  n.file = file;
  n.line = line;
  mjcf_fail(c, s, &n, fmt, what);
}

static int find(const mjcf_array *a, size_t size, size_t offset, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < a->n; ++i) {
    const char *s = *(const char *const *)((const char *)a->data + (size_t)i * size + offset);
    if (s && !strcmp(s, name)) return i;
  }
  return -1;
}

/* The grit body of MJCF body k and the pose of k's frame in it. */
static int grit_body(const mjcf_ctx *c, int k, double pos[3], double quat[4]) {
  const mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  pos[0] = pos[1] = pos[2] = 0;
  quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  return B[mjcf_unfolded_frame(B, k, pos, quat)].grit_index;
}

static void rotate(double r[3], const double q[4], const double x[3]) {
  double R[9];
  mjcf_quat2mat(R, q);
  for (int i = 0; i < 3; ++i) r[i] = R[3 * i] * x[0] + R[3 * i + 1] * x[1] + R[3 * i + 2] * x[2];
}

static void add_sites(mjcf_ctx *c, grit_builder *gb) {
  for (int i = 0; i < c->sites.n && c->status == GRIT_OK; ++i) {
    const mjcf_site *s = MJCF_AT(c->sites, mjcf_site, i);
    grit_site_def d = grit_default_site_def();
    double p[3], q[4], r[3];
    d.body = grit_body(c, s->body, p, q);
    rotate(r, q, s->pos);
    for (int k = 0; k < 3; ++k) d.pos[k] = p[k] + r[k];
    d.name = s->name;
    grit_status st = grit_builder_add_site(gb, &d, NULL);
    if (st != GRIT_OK) fail_line(c, st, "site", s->file, s->line, "%s", grit_builder_last_error(gb));
  }
}

/* grit's index of the MJCF geometry named `name` (-1: none). */
/* grit's index of the geometry named `name` (its grit_index: geometries that collide with nothing are
 * left out of grit's model, so it is not the position in the file's body-by-body order). */
static int geom_index(const mjcf_ctx *c, const char *name) {
  const int g = find(&c->geoms, sizeof(mjcf_geom), offsetof(mjcf_geom, name), name);
  return g < 0 ? -1 : MJCF_AT(c->geoms, mjcf_geom, g)->grit_index;
}

static void add_tendons(mjcf_ctx *c, grit_builder *gb, const int *grit_joint) {
  for (int i = 0; i < c->tendons.n && c->status == GRIT_OK; ++i) {
    const mjcf_tendon *t = MJCF_AT(c->tendons, mjcf_tendon, i);
    const int spatial = t->type == GRIT_TENDON_SPATIAL;
    int *obj = malloc(sizeof(int) * (size_t)(t->n + 1)), *geom = malloc(sizeof(int) * (size_t)(t->n + 1));
    if (!obj || !geom) {
      free(obj), free(geom);
      mjcf_fail(c, GRIT_ERR_OUT_OF_MEMORY, NULL, "out of memory");
      return;
    }
    for (int k = 0; k < t->n && c->status == GRIT_OK; ++k) {
      geom[k] = -1;
      if (spatial && t->coef[k] > 0.0) { /* a pulley (read_tendon) */
        obj[k] = -1;
        continue;
      }
      if (t->geom[k]) { /* a wrap around a sphere or cylinder, with its side site */
        geom[k] = geom_index(c, t->geom[k]);
        const int mg = find(&c->geoms, sizeof(mjcf_geom), offsetof(mjcf_geom, name), t->geom[k]);
        if (geom[k] < 0) fail_line(c, GRIT_ERR_INVALID_MODEL, "geom", t->file, t->obj_line[k], "unknown geom '%s'", t->geom[k]);
        else if (MJCF_AT(c->geoms, mjcf_geom, mg)->type != MJCF_GEOM_SPHERE &&
                 MJCF_AT(c->geoms, mjcf_geom, mg)->type != MJCF_GEOM_CYLINDER)
          fail_line(c, GRIT_ERR_UNSUPPORTED, "geom", t->file, t->obj_line[k], "wrapping around '%s': only spheres and cylinders",
                    t->geom[k]);
        obj[k] = t->obj[k] ? find(&c->sites, sizeof(mjcf_site), offsetof(mjcf_site, name), t->obj[k]) : -1;
        if (t->obj[k] && obj[k] < 0)
          fail_line(c, GRIT_ERR_INVALID_MODEL, "geom", t->file, t->obj_line[k], "unknown side site '%s'", t->obj[k]);
        continue;
      }
      const int idx = spatial ? find(&c->sites, sizeof(mjcf_site), offsetof(mjcf_site, name), t->obj[k])
                              : find(&c->joints, sizeof(mjcf_joint), offsetof(mjcf_joint, name), t->obj[k]);
      if (idx < 0) fail_line(c, GRIT_ERR_INVALID_MODEL, spatial ? "site" : "joint", t->file, t->obj_line[k],
                             spatial ? "unknown site '%s'" : "unknown joint '%s'", t->obj[k]);
      else obj[k] = spatial ? idx : grit_joint[idx];
    }
    grit_tendon_def d = grit_default_tendon_def();
    d.name = t->name;
    d.type = (grit_tendon_type)t->type;
    d.n = t->n;
    d.obj = obj;
    d.coef = t->coef;
    d.geom = geom;
    if (spatial) d.divisor = t->coef; /* nonzero at pulleys only */
    d.limited = t->limited == 2 ? !(t->range[0] == 0 && t->range[1] == 0) : t->limited;
    memcpy(d.range, t->range, sizeof d.range);
    memcpy(d.solreflimit, t->solreflimit, sizeof d.solreflimit);
    d.limit_width = t->solimplimit[2];
    d.stiffness = t->stiffness;
    d.damping = t->damping;
    d.springlength = t->springlength;
    d.frictionloss = t->frictionloss;
    if (c->status == GRIT_OK) {
      grit_status st = grit_builder_add_tendon(gb, &d, NULL);
      if (st != GRIT_OK) fail_line(c, st, spatial ? "spatial" : "fixed", t->file, t->line, "%s", grit_builder_last_error(gb));
    }
    free(obj);
    free(geom);
  }
}

/* A weld's relpose (body 2 in body 1) between the grit bodies b1, b2 whose frames hold the MJCF bodies'
 * at (p1, q1), (p2, q2): T1 relpose T2^-1. */
static void move_relpose(double rp[7], const double p1[3], const double q1[4], const double p2[3], const double q2[4]) {
  double P[3], Q[4], r[3], q2i[4] = {q2[0], -q2[1], -q2[2], -q2[3]}, t[3];
  rotate(r, q1, rp);
  for (int k = 0; k < 3; ++k) P[k] = p1[k] + r[k];
  mjcf_mulquat(Q, q1, rp + 3);
  rotate(t, q2i, p2);
  rotate(r, Q, t);
  for (int k = 0; k < 3; ++k) rp[k] = P[k] - r[k];
  mjcf_mulquat(rp + 3, Q, q2i);
}

static void add_equalities(mjcf_ctx *c, grit_builder *gb, const int *grit_joint) {
  static const char *const names[] = {"connect", "weld", "joint", "tendon"};
  for (int i = 0; i < c->eqs.n && c->status == GRIT_OK; ++i) {
    const mjcf_equality *q = MJCF_AT(c->eqs, mjcf_equality, i);
    grit_equality_def d = grit_default_equality_def();
    d.name = q->name;
    d.type = (grit_equality_type)q->type;
    memcpy(d.polycoef, q->polycoef, sizeof d.polycoef);
    memcpy(d.solref, q->solref, sizeof d.solref);
    int idx[2] = {-1, -1};
    for (int k = 0; k < 2 && c->status == GRIT_OK; ++k) {
      const char *nm = k ? q->obj2 : q->obj1;
      if (!nm) continue;
      idx[k] = q->type <= GRIT_EQ_WELD ? find(&c->bodies, sizeof(mjcf_body), offsetof(mjcf_body, name), nm)
               : q->type == GRIT_EQ_JOINT ? find(&c->joints, sizeof(mjcf_joint), offsetof(mjcf_joint, name), nm)
                                          : find(&c->tendons, sizeof(mjcf_tendon), offsetof(mjcf_tendon, name), nm);
      if (idx[k] < 0) {
        const char *what = q->type <= GRIT_EQ_WELD ? "unknown body '%s'" : q->type == GRIT_EQ_JOINT ? "unknown joint '%s'"
                                                                                                     : "unknown tendon '%s'";
        fail_line(c, GRIT_ERR_INVALID_MODEL, names[q->type], q->file, q->line, what, nm);
      }
    }
    if (c->status != GRIT_OK) return;
    if (q->type <= GRIT_EQ_WELD) {
      if (idx[1] < 0) idx[1] = 0; /* the world */
      double p1[3], q1[4], p2[3], q2[4];
      d.obj1 = grit_body(c, idx[0], p1, q1);
      d.obj2 = grit_body(c, idx[1], p2, q2);
      double r[3];
      rotate(r, q1, q->anchor); /* the anchor, in body 1's grit frame */
      for (int k = 0; k < 3; ++k) d.anchor[k] = p1[k] + r[k];
      memcpy(d.relpose, q->relpose, sizeof d.relpose);
      if (q->relpose[3] != 0 || q->relpose[4] != 0 || q->relpose[5] != 0 || q->relpose[6] != 0)
        move_relpose(d.relpose, p1, q1, p2, q2);
    } else if (q->type == GRIT_EQ_JOINT) {
      d.obj1 = grit_joint[idx[0]];
      d.obj2 = idx[1] < 0 ? -1 : grit_joint[idx[1]];
    } else {
      d.obj1 = idx[0], d.obj2 = idx[1]; /* tendons are added in order */
    }
    grit_status st = grit_builder_add_equality(gb, &d, NULL);
    if (st != GRIT_OK) fail_line(c, st, names[q->type], q->file, q->line, "%s", grit_builder_last_error(gb));
  }
}

void mjcf_cx_build(mjcf_ctx *c, grit_builder *gb, const int *grit_joint, const int *geom_order) {
  (void)geom_order; /* wrap geometries: their grit_index */
  add_sites(c, gb);
  if (c->status == GRIT_OK) add_tendons(c, gb, grit_joint);
  if (c->status == GRIT_OK && !c->no_equality) add_equalities(c, gb, grit_joint); /* <flag equality> */
}

int mjcf_cx_compile_error(mjcf_ctx *c, grit_status s, const char *msg) {
  int id = -1;
  if (sscanf(msg, "tendon %d:", &id) == 1 && id >= 0 && id < c->tendons.n) { /* tendons are built in order */
    const mjcf_tendon *t = MJCF_AT(c->tendons, mjcf_tendon, id);
    fail_line(c, s, t->type == GRIT_TENDON_FIXED ? "fixed" : "spatial", t->file, t->line, "%s", msg);
    return 1;
  }
  if (sscanf(msg, "equality %d:", &id) == 1 && id >= 0 && id < c->eqs.n) { /* so are equalities */
    static const char *const names[] = {"connect", "weld", "joint", "tendon"};
    const mjcf_equality *q = MJCF_AT(c->eqs, mjcf_equality, id);
    fail_line(c, s, names[q->type], q->file, q->line, "%s", msg);
    return 1;
  }
  return 0;
}

int mjcf_cx_site_index(const mjcf_ctx *c, const char *name) {
  return find(&c->sites, sizeof(mjcf_site), offsetof(mjcf_site, name), name);
}

int mjcf_cx_tendon_index(const mjcf_ctx *c, const char *name) {
  return find(&c->tendons, sizeof(mjcf_tendon), offsetof(mjcf_tendon, name), name);
}

void mjcf_cx_mark_wrap_geoms(mjcf_ctx *c) {
  for (int i = 0; i < c->tendons.n; ++i) {
    const mjcf_tendon *t = MJCF_AT(c->tendons, mjcf_tendon, i);
    for (int k = 0; t->geom && k < t->n; ++k) {
      const int g = find(&c->geoms, sizeof(mjcf_geom), offsetof(mjcf_geom, name), t->geom[k]);
      if (g >= 0) MJCF_AT(c->geoms, mjcf_geom, g)->in_pair = 1; /* kept, though it may collide with nothing */
    }
  }
}
