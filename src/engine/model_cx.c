/* SPDX-License-Identifier: Apache-2.0 */
/* model_cx.c — sites, equality constraints and tendons: their builder definitions, checks and
 * compilation into the model (grit/constraints.h). */
#include "model_cx.h"

#include "actuation_adhesion.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "actuation.h"
#include "constraints_extra.h"
#include "grit/math.h"
#include "kinematics.h"
#include "status_internal.h"

grit_site_def grit_default_site_def(void) {
  grit_site_def d;
  memset(&d, 0, sizeof d);
  return d;
}

grit_equality_def grit_default_equality_def(void) {
  grit_equality_def d;
  memset(&d, 0, sizeof d);
  d.type = GRIT_EQ_CONNECT;
  d.obj1 = 1;
  d.obj2 = 0;
  d.polycoef[1] = 1.0;
  d.solref[0] = 0.02; /* MuJoCo's default solref */
  d.solref[1] = 1.0;
  return d;
}

grit_tendon_def grit_default_tendon_def(void) {
  grit_tendon_def d;
  memset(&d, 0, sizeof d);
  d.type = GRIT_TENDON_FIXED;
  d.solreflimit[0] = 0.02;
  d.solreflimit[1] = 1.0;
  d.springlength = -1.0;
  d.limit_width = 0.001;
  return d;
}

static int finite_n(const double *x, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

void grit_builder_cx_free(grit_builder_cx *cx) {
  for (int i = 0; i < cx->nsite; ++i) free((char *)cx->sites[i].name);
  for (int i = 0; i < cx->neq; ++i) free((char *)cx->eqs[i].name);
  for (int i = 0; i < cx->nten; ++i) {
    free((char *)cx->tens[i].name);
    free((int *)cx->tens[i].obj);
    free((double *)cx->tens[i].coef);
    free((int *)cx->tens[i].geom);
  }
  free(cx->sites);
  free(cx->eqs);
  free(cx->tens);
  memset(cx, 0, sizeof *cx);
}

grit_status grit_builder_add_site(grit_builder *b, const grit_site_def *def, int *site) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  grit_builder_cx *cx = grit_builder_cx_of(b);
  char *msg = grit_builder_message(b);
  const int id = cx->nsite;
  if (def->body < 0 || def->body >= grit_builder_nbody(b))
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "site %d: body %d does not exist", id, def->body);
  if (!finite_n(def->pos, 3)) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "site %d: pos is not finite", id);
  grit_status st = grit_builder_store(msg, "site", id, (void **)&cx->sites, &cx->cap_site, def, sizeof *def,
                                      offsetof(grit_site_def, name));
  if (st != GRIT_OK) return st;
  cx->nsite++;
  if (site) *site = id;
  return GRIT_OK;
}

static grit_status check_solref(char *msg, const char *what, int id, const double s[2]) {
  if (!finite_n(s, 2) || !(s[0] > 0) || !(s[1] > 0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "%s %d: solref (%g, %g) must be positive and finite", what, id,
                          s[0], s[1]);
  return GRIT_OK;
}

grit_status grit_builder_add_equality(grit_builder *b, const grit_equality_def *def, int *equality) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  grit_builder_cx *cx = grit_builder_cx_of(b);
  char *msg = grit_builder_message(b);
  const int id = cx->neq, t = def->type;
  if (t < GRIT_EQ_CONNECT || t > GRIT_EQ_TENDON)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "equality %d: unknown type %d", id, t);
  const int n = t <= GRIT_EQ_WELD ? grit_builder_nbody(b) : t == GRIT_EQ_JOINT ? grit_builder_njoint(b) : cx->nten;
  const char *obj = t <= GRIT_EQ_WELD ? "body" : t == GRIT_EQ_JOINT ? "joint" : "tendon";
  const int lo2 = t <= GRIT_EQ_WELD ? 0 : -1;
  if (def->obj1 < 0 || def->obj1 >= n || def->obj2 < lo2 || def->obj2 >= n)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "equality %d: %s %d or %d does not exist", id, obj, def->obj1,
                          def->obj2);
  if (def->obj1 == def->obj2)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "equality %d: %s %d is constrained to itself", id, obj,
                          def->obj1);
  if (t == GRIT_EQ_JOINT)
    for (int k = 0; k < 2; ++k) {
      const int j = k ? def->obj2 : def->obj1;
      if (j >= 0 && grit_builder_joint_type(b, j) != GRIT_JOINT_HINGE && grit_builder_joint_type(b, j) != GRIT_JOINT_SLIDE)
        return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "equality %d: joint %d is not a hinge or slide", id, j);
    }
  if (!finite_n(def->anchor, 3) || !finite_n(def->relpose, 7) || !finite_n(def->polycoef, 5))
    return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "equality %d: a parameter is not finite", id);
  grit_status s = check_solref(msg, "equality", id, def->solref);
  if (s != GRIT_OK) return s;
  s = grit_builder_store(msg, "equality", id, (void **)&cx->eqs, &cx->cap_eq, def, sizeof *def,
                         offsetof(grit_equality_def, name));
  if (s != GRIT_OK) return s;
  cx->neq++;
  if (equality) *equality = id;
  return GRIT_OK;
}

/* Whether element i of a spatial tendon's path is a pulley. */
static int tendon_pulley(const grit_tendon_def *def, int i) { return def->divisor && def->divisor[i] != 0.0; }

/* A pulley: a positive finite divisor, not the path's last element, not right after another pulley. A
 * pulley may open the path: its divisor then divides the first branch (MuJoCo's compiler and tendon
 * kinematics allow it; mjx's test_data/tendon/pulley_*.xml do it). */
static grit_status check_pulley(const grit_tendon_def *def, int id, int i, char *msg) {
  if (!(def->divisor[i] > 0.0) || !isfinite(def->divisor[i]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: pulley %d's divisor %g is not positive and finite",
                          id, i, def->divisor[i]);
  if (i == def->n - 1) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: the path ends with a pulley", id);
  if (i > 0 && tendon_pulley(def, i - 1))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: pulleys %d and %d in a row", id, i - 1, i);
  return GRIT_OK;
}

grit_status grit_builder_add_tendon(grit_builder *b, const grit_tendon_def *def, int *tendon) {
  if (!b || !def) return GRIT_ERR_INVALID_ARGUMENT;
  grit_builder_cx *cx = grit_builder_cx_of(b);
  char *msg = grit_builder_message(b);
  const int id = cx->nten, fixed = def->type == GRIT_TENDON_FIXED;
  if (def->type != GRIT_TENDON_FIXED && def->type != GRIT_TENDON_SPATIAL)
    return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "tendon %d: unknown type %d", id, (int)def->type);
  if (def->n < (fixed ? 1 : 2) || !def->obj || (fixed && !def->coef))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: a %s tendon needs at least %d elements", id,
                          fixed ? "fixed" : "spatial", fixed ? 1 : 2);
  for (int i = 0; i < def->n; ++i) {
    const int o = def->obj[i], wrap = !fixed && def->geom && def->geom[i] >= 0;
    if (!fixed && tendon_pulley(def, i)) {
      grit_status s = check_pulley(def, id, i, msg);
      if (s != GRIT_OK) return s;
      continue;
    }
    if (!fixed && (i == 0 || tendon_pulley(def, i - 1)) && (i == def->n - 1 || tendon_pulley(def, i + 1)))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: element %d has no neighbour that is not a pulley",
                            id, i);
    if (wrap) { /* between two sites; its side site optional (the geometry is checked at compile) */
      if (i == 0 || i == def->n - 1 || def->geom[i - 1] >= 0 || def->geom[i + 1] >= 0 || tendon_pulley(def, i - 1) ||
          tendon_pulley(def, i + 1))
        return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: wrap element %d is not between two sites", id, i);
      if (o < -1 || o >= cx->nsite)
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "tendon %d: side site %d does not exist", id, o);
      continue;
    }
    if (fixed) {
      if (o < 0 || o >= grit_builder_njoint(b))
        return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "tendon %d: joint %d does not exist", id, o);
      if (grit_builder_joint_type(b, o) != GRIT_JOINT_HINGE && grit_builder_joint_type(b, o) != GRIT_JOINT_SLIDE)
        return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "tendon %d: joint %d is not a hinge or slide", id, o);
      if (!isfinite(def->coef[i]))
        return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "tendon %d: coef %d is not finite", id, i);
    } else if (o < 0 || o >= cx->nsite) {
      return grit_set_error(msg, GRIT_ERR_INVALID_ARGUMENT, "tendon %d: site %d does not exist", id, o);
    }
  }
  const double nums[6] = {def->stiffness, def->damping, def->range[0], def->range[1], def->limit_width,
                          def->frictionloss};
  if (!finite_n(nums, 6) || !isfinite(def->springlength))
    return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "tendon %d: a parameter is not finite", id);
  if (def->stiffness < 0 || def->damping < 0 || def->limit_width < 0 || def->frictionloss < 0)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL,
                          "tendon %d: stiffness, damping, limit_width, frictionloss must be >= 0", id);
  if (def->limited && !(def->range[0] < def->range[1]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: range [%g, %g] is empty", id, def->range[0],
                          def->range[1]);
  if (def->limited) {
    grit_status s = check_solref(msg, "tendon", id, def->solreflimit);
    if (s != GRIT_OK) return s;
  }
  if (!grit_builder_grow((void **)&cx->tens, &cx->cap_ten, id + 1, sizeof *cx->tens))
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding tendon %d", id);
  grit_tendon_def d = *def;
  int *obj = malloc(sizeof(int) * (size_t)def->n), *geom = malloc(sizeof(int) * (size_t)def->n);
  double *coef = malloc(sizeof(double) * (size_t)def->n);
  char *name = def->name ? grit_builder_strdup(def->name) : NULL;
  if (!obj || !coef || !geom || (def->name && !name)) {
    free(obj);
    free(coef);
    free(geom);
    free(name);
    return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory adding tendon %d", id);
  }
  for (int i = 0; i < def->n; ++i) {
    obj[i] = def->obj[i], coef[i] = fixed ? def->coef[i] : 0.0;
    geom[i] = !fixed && def->geom ? def->geom[i] : -1;
    if (!fixed && tendon_pulley(def, i)) obj[i] = -1, geom[i] = GRIT_WRAP_PULLEY, coef[i] = def->divisor[i];
  }
  d.divisor = NULL; /* pulleys: geom GRIT_WRAP_PULLEY, coef the divisor */
  d.obj = obj;
  d.coef = coef;
  d.geom = geom;
  d.name = name;
  cx->tens[id] = d;
  cx->nten++;
  if (tendon) *tendon = id;
  return GRIT_OK;
}

/* ------------------------------------------------------------------------------ compiling */

static size_t name_bytes(const char *s) { return s ? strlen(s) + 1 : 0; }

size_t grit_cx_sizes(const grit_builder_cx *cx, grit_model *m) {
  size_t bytes = 0;
  m->nsite = cx->nsite;
  m->neq = cx->neq;
  m->ntendon = cx->nten;
  m->nwrap = 0;
  for (int i = 0; i < cx->nsite; ++i) bytes += name_bytes(cx->sites[i].name);
  for (int i = 0; i < cx->neq; ++i) bytes += name_bytes(cx->eqs[i].name);
  for (int i = 0; i < cx->nten; ++i) {
    bytes += name_bytes(cx->tens[i].name);
    m->nwrap += cx->tens[i].n;
  }
  return bytes;
}

void grit_cx_layout(grit_model *m, grit_carver *c) {
  const int ns = m->nsite, ne = m->neq, nt = m->ntendon;
  GRIT_CARVE(c, m->dof_frictionloss, m->nv);
  GRIT_CARVE(c, m->jnt_limit_taud, m->njnt);
  GRIT_CARVE(c, m->jnt_limit_width, m->njnt);
  GRIT_CARVE(c, m->site_body, ns);
  GRIT_CARVE(c, m->site_pos, 3 * ns);
  GRIT_CARVE(c, m->eq_type, ne);
  GRIT_CARVE(c, m->eq_obj, 2 * ne);
  GRIT_CARVE(c, m->eq_data, GRIT_EQ_NDATA * ne);
  GRIT_CARVE(c, m->eq_taud, ne);
  GRIT_CARVE(c, m->eq_ntree, ne);
  GRIT_CARVE(c, m->eq_tree, 2 * ne);
  GRIT_CARVE(c, m->ten_type, nt);
  GRIT_CARVE(c, m->ten_adr, nt);
  GRIT_CARVE(c, m->ten_num, nt);
  GRIT_CARVE(c, m->ten_limited, nt);
  GRIT_CARVE(c, m->ten_range, 2 * nt);
  GRIT_CARVE(c, m->ten_limit_taud, nt);
  GRIT_CARVE(c, m->ten_limit_width, nt);
  GRIT_CARVE(c, m->ten_frictionloss, nt);
  GRIT_CARVE(c, m->ten_stiffness, nt);
  GRIT_CARVE(c, m->ten_springlength, nt);
  GRIT_CARVE(c, m->ten_damping, nt);
  GRIT_CARVE(c, m->ten_length0, nt);
  GRIT_CARVE(c, m->ten_ntree, nt);
  GRIT_CARVE(c, m->ten_tree, 2 * nt);
  GRIT_CARVE(c, m->wrap_obj, m->nwrap);
  GRIT_CARVE(c, m->wrap_coef, m->nwrap);
  GRIT_CARVE(c, m->wrap_geom, m->nwrap);
  GRIT_CARVE(c, m->site_name, ns);
  GRIT_CARVE(c, m->eq_name, ne);
  GRIT_CARVE(c, m->ten_name, nt);
}

static char *store_name(char **cursor, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *r = *cursor;
  memcpy(r, s, n);
  *cursor += n;
  return r;
}

/* Adds tree t (>= 0) to a set of at most two; 0 if it would be a third. */
static int add_tree(int *ntree, int tree[2], int t) {
  if (t < 0) return 1;
  for (int i = 0; i < *ntree; ++i)
    if (tree[i] == t) return 1;
  if (*ntree == 2) return 0;
  tree[(*ntree)++] = t;
  return 1;
}

/* Body poses at the reference configuration: the chain of the bodies' (pos, quat), which are defined
 * there (grit_body_def). */
static void reference_poses(const grit_model *m, double *xpos, double *xquat) {
  xpos[0] = xpos[1] = xpos[2] = 0.0;
  xquat[0] = 1.0, xquat[1] = xquat[2] = xquat[3] = 0.0;
  for (int b = 1; b < m->nbody; ++b) {
    const int p = m->body_parent[b];
    double r[3];
    grit_quat_rotate(r, xquat + 4 * p, m->body_pos + 3 * b);
    grit_v3_add(xpos + 3 * b, xpos + 3 * p, r);
    grit_quat_mul(xquat + 4 * b, xquat + 4 * p, m->body_quat + 4 * b);
    grit_quat_normalize(xquat + 4 * b);
  }
}

static grit_status compile_tendons(const grit_builder_cx *cx, grit_model *m, char **names, char *msg) {
  int adr = 0;
  for (int t = 0; t < m->ntendon; ++t) {
    const grit_tendon_def *d = &cx->tens[t];
    m->ten_type[t] = d->type;
    m->ten_adr[t] = adr;
    m->ten_num[t] = d->n;
    m->ten_limited[t] = d->limited != 0;
    m->ten_range[2 * t] = d->range[0];
    m->ten_range[2 * t + 1] = d->range[1];
    m->ten_limit_taud[t] = 2.0 * d->solreflimit[0] * d->solreflimit[1] * d->solreflimit[1];
    m->ten_limit_width[t] = d->limit_width;
    m->ten_frictionloss[t] = d->frictionloss;
    m->ten_stiffness[t] = d->stiffness;
    m->ten_damping[t] = d->damping;
    m->ten_name[t] = store_name(names, d->name);
    m->ten_ntree[t] = 0;
    double L = 0.0;
    for (int i = 0; i < d->n; ++i) {
      m->wrap_obj[adr + i] = d->obj[i];
      m->wrap_coef[adr + i] = d->coef[i];
      const int g = m->wrap_geom[adr + i] = d->geom[i];
      if (g == GRIT_WRAP_PULLEY) continue; /* moves nothing */
      if (g >= m->ngeom || (g >= 0 && m->geom_shape[g].type != GRIT_GEOM_SPHERE &&
                            m->geom_shape[g].type != GRIT_GEOM_CYLINDER))
        return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "tendon %d: wrap geometry %d is not a sphere or cylinder", t, g);
      if (g >= 0) { /* the wrap geometry's body moves the path too */
        if (!add_tree(&m->ten_ntree[t], m->ten_tree + 2 * t, m->body_tree[m->geom_body[g]]))
          return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "tendon %d: it spans more than two kinematic trees", t);
        continue;
      }
      const int body = d->type == GRIT_TENDON_FIXED ? m->jnt_body[d->obj[i]] : cx->sites[d->obj[i]].body;
      if (!add_tree(&m->ten_ntree[t], m->ten_tree + 2 * t, m->body_tree[body]))
        return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "tendon %d: it spans more than two kinematic trees", t);
      if (d->type == GRIT_TENDON_FIXED) {
        L += d->coef[i] * m->qpos0[m->jnt_qposadr[d->obj[i]]];
      }
    }
    if (m->ten_ntree[t] == 0 && (d->limited || d->stiffness > 0 || d->damping > 0 || d->frictionloss > 0))
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "tendon %d: nothing it passes through can move", t);
    m->ten_length0[t] = L; /* spatial: set by spatial_lengths */
    m->ten_springlength[t] = d->springlength;
    adr += d->n;
  }
  return GRIT_OK;
}

/* The spatial tendons' lengths at the reference configuration (their paths need the poses, and the
 * wraps the geometries'); then the rest lengths given as negative. */
static grit_status reference_lengths(grit_model *m, char *msg) {
  grit_kin k;
  grit_carver c = {NULL, 0};
  GRIT_CARVE_KIN(&c, k, m);
  void *arena = calloc(1, c.used + 64);
  if (!arena) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory compiling the model");
  c.base = arena;
  c.used = 0;
  GRIT_CARVE_KIN(&c, k, m);
  k.tree_mask = NULL;
  grit_kin_positions(m, m->qpos0, NULL, &k);
  grit_status s = GRIT_OK;
  for (int t = 0; t < m->ntendon && s == GRIT_OK; ++t) {
    if (m->ten_type[t] == GRIT_TENDON_SPATIAL) m->ten_length0[t] = grit_tendon_length_jacobian(m, &k, m->qpos0, t, NULL, NULL);
    if (m->ten_springlength[t] < 0) m->ten_springlength[t] = m->ten_length0[t];
  }
  free(arena);
  return s;
}

static grit_status compile_equalities(const grit_builder_cx *cx, grit_model *m, char **names, const double *xpos,
                                      const double *xquat, char *msg) {
  for (int e = 0; e < m->neq; ++e) {
    const grit_equality_def *d = &cx->eqs[e];
    const int b1 = d->obj1, b2 = d->obj2;
    double *data = m->eq_data + GRIT_EQ_NDATA * e;
    m->eq_type[e] = d->type;
    m->eq_obj[2 * e] = b1;
    m->eq_obj[2 * e + 1] = b2;
    m->eq_taud[e] = 2.0 * d->solref[0] * d->solref[1] * d->solref[1];
    m->eq_name[e] = store_name(names, d->name);
    m->eq_ntree[e] = 0;
    int ok = 1;
    for (int k = 0; k < 2; ++k) {
      const int o = k ? b2 : b1;
      if (o < 0) continue;
      if (d->type <= GRIT_EQ_WELD) ok &= add_tree(&m->eq_ntree[e], m->eq_tree + 2 * e, m->body_tree[o]);
      else if (d->type == GRIT_EQ_JOINT) ok &= add_tree(&m->eq_ntree[e], m->eq_tree + 2 * e, m->body_tree[m->jnt_body[o]]);
      else
        for (int i = 0; i < m->ten_ntree[o]; ++i) ok &= add_tree(&m->eq_ntree[e], m->eq_tree + 2 * e, m->ten_tree[2 * o + i]);
    }
    if (!ok) return grit_set_error(msg, GRIT_ERR_UNSUPPORTED, "equality %d: it spans more than two kinematic trees", e);
    if (m->eq_ntree[e] == 0) return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "equality %d: nothing it joins can move", e);
    double qc[4], r[3];
    switch (d->type) {
      case GRIT_EQ_CONNECT: /* the anchor in body 1, and where it lies in body 2 at the reference poses */
        memcpy(data, d->anchor, sizeof d->anchor);
        grit_quat_rotate(r, xquat + 4 * b1, d->anchor);
        grit_v3_add(r, r, xpos + 3 * b1);
        grit_v3_sub(r, r, xpos + 3 * b2);
        grit_quat_rotate_inv(data + 3, xquat + 4 * b2, r);
        break;
      case GRIT_EQ_WELD:
        if (d->relpose[3] == 0 && d->relpose[4] == 0 && d->relpose[5] == 0 && d->relpose[6] == 0) {
          grit_v3_sub(r, xpos + 3 * b2, xpos + 3 * b1);
          grit_quat_rotate_inv(data, xquat + 4 * b1, r);
          grit_quat_conj(qc, xquat + 4 * b1);
          grit_quat_mul(data + 3, qc, xquat + 4 * b2);
        } else {
          memcpy(data, d->relpose, sizeof d->relpose);
        }
        grit_quat_normalize(data + 3);
        break;
      default: /* polynomial couplings: y0, x0 at the reference configuration */
        memcpy(data, d->polycoef, sizeof d->polycoef);
        if (d->type == GRIT_EQ_JOINT) {
          data[5] = m->qpos0[m->jnt_qposadr[b1]];
          data[6] = b2 >= 0 ? m->qpos0[m->jnt_qposadr[b2]] : 0.0;
        } else {
          data[5] = m->ten_length0[b1];
          data[6] = b2 >= 0 ? m->ten_length0[b2] : 0.0;
        }
        break;
    }
  }
  return GRIT_OK;
}

grit_status grit_cx_compile(const grit_builder_cx *cx, grit_model *m, char **names, char *msg) {
  for (int s = 0; s < m->nsite; ++s) {
    m->site_body[s] = cx->sites[s].body;
    memcpy(m->site_pos + 3 * s, cx->sites[s].pos, sizeof cx->sites[s].pos);
    m->site_name[s] = store_name(names, cx->sites[s].name);
  }
  for (int i = 0; i < m->nsite; ++i)
    for (int k = 0; k < i; ++k)
      if (m->site_name[i] && m->site_name[k] && !strcmp(m->site_name[i], m->site_name[k]))
        return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "sites %d and %d share the name '%s'", k, i, m->site_name[i]);
  double *xpos = malloc(sizeof(double) * 7 * (size_t)m->nbody);
  if (!xpos) return grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory compiling the model");
  double *xquat = xpos + 3 * m->nbody;
  reference_poses(m, xpos, xquat);
  grit_status s = compile_tendons(cx, m, names, msg);
  if (s == GRIT_OK) s = reference_lengths(m, msg);
  if (s == GRIT_OK) s = grit_actuator_compile_tendons(m, msg); /* actuation.c */
  if (s == GRIT_OK) s = grit_adhesion_compile(m, msg);          /* actuation_adhesion.c */
  if (s == GRIT_OK) s = compile_equalities(cx, m, names, xpos, xquat, msg);
  free(xpos);
  return s;
}

static size_t names_size(char *const *names, int n) {
  size_t s = 0;
  for (int i = 0; i < n; ++i) s += name_bytes(names[i]);
  return s;
}

size_t grit_cx_names_size(const grit_model *m) {
  return names_size(m->site_name, m->nsite) + names_size(m->eq_name, m->neq) + names_size(m->ten_name, m->ntendon);
}

void grit_cx_relocate(grit_model *r, const char *old, char *base) {
  char **lists[3] = {r->site_name, r->eq_name, r->ten_name};
  const int counts[3] = {r->nsite, r->neq, r->ntendon};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < counts[k]; ++i)
      if (lists[k][i]) lists[k][i] = base + (lists[k][i] - old);
}

/* -------------------------------------------------------------------------------- queries */

int grit_model_nsite(const grit_model *m) { return m ? m->nsite : 0; }
int grit_model_nequality(const grit_model *m) { return m ? m->neq : 0; }
int grit_model_ntendon(const grit_model *m) { return m ? m->ntendon : 0; }

static int find_name(char *const *names, int n, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < n; ++i)
    if (names[i] && !strcmp(names[i], name)) return i;
  return -1;
}
int grit_model_site_index(const grit_model *m, const char *name) { return m ? find_name(m->site_name, m->nsite, name) : -1; }
int grit_model_tendon_index(const grit_model *m, const char *name) {
  return m ? find_name(m->ten_name, m->ntendon, name) : -1;
}

double grit_model_tendon_length(const grit_model *m, int tendon, const double *q) {
  if (!m || !q || tendon < 0 || tendon >= m->ntendon) return NAN;
  grit_kin k;
  grit_carver c = {NULL, 0};
  GRIT_CARVE_KIN(&c, k, m);
  void *arena = calloc(1, c.used + 64);
  if (!arena) return NAN;
  c.base = arena;
  c.used = 0;
  GRIT_CARVE_KIN(&c, k, m);
  k.tree_mask = NULL;
  grit_kin_positions(m, q, NULL, &k);
  const double L = grit_tendon_length_jacobian(m, &k, q, tendon, NULL, NULL);
  free(arena);
  return L;
}
