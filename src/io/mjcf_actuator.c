/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_actuator.c — MJCF's <actuator> section and actuator default classes, as MuJoCo 2.2.2 reads them
 * (docs/actuation.md): every element is a `general` actuator; the shortcuts motor, position, velocity
 * and intvelocity set its gain, bias and dynamics from their own attributes (kp, kv) over the class's
 * values, exactly as MuJoCo's reader does (checked against libmujoco 2.2.2: a <velocity> in a class
 * whose default is <position kp="5"/> has kv = 5). muscle, cylinder, adhesion and the non-joint
 * transmissions are errors naming them: grit would simulate another machine without them. */
#include <string.h>

#include "mjcf_internal.h"

static const char *const TFAUTO[] = {"false", "true", "auto"};

void mjcf_actuator_defaults(mjcf_actuator *a) {
  memset(a, 0, sizeof *a);
  a->gear = 1;
  a->gain = 1;
  a->ctrllimited = a->forcelimited = a->actlimited = 2;
  a->supported = 1;
  a->dynprm[0] = 1; /* MuJoCo's defaults: dynprm (1, 0, ...), gainprm (1, 0, ...), biasprm 0 */
  a->gainprm[0] = 1;
  a->dyntype = GRIT_DYN_NONE;
  a->gaintype = GRIT_GAIN_FIXED;
  a->biastype = GRIT_BIAS_NONE;
}

enum { K_MOTOR, K_POSITION, K_VELOCITY, K_INTVELOCITY, K_GENERAL, K_REFUSED };

static int kind_of(const char *e) {
  static const char *const supported[] = {"motor", "position", "velocity", "intvelocity", "general"};
  static const char *const refused[] = {"muscle", "cylinder", "adhesion", "damper", "plugin"};
  for (int i = 0; i < 5; ++i)
    if (!strcmp(e, supported[i])) return i;
  for (int i = 0; i < 5; ++i)
    if (!strcmp(e, refused[i])) return K_REFUSED;
  return -1;
}

int mjcf_is_actuator(const char *element) { return kind_of(element) >= 0; }

/* Up to 10 numbers (MuJoCo's mjNGAIN etc.) of which grit's affine types use the first 3. */
static void read_prm(mjcf_ctx *c, const mjcf_node *n, const char *name, double out[3]) {
  double v[10] = {0};
  if (mjcf_read_numbers(c, n, name, v, 1, 10)) memcpy(out, v, 3 * sizeof(double));
}

/* general's types; a muscle or user type is an error naming it */
static void read_types(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a) {
  static const char *const dyn[] = {"none", "integrator", "filter", "muscle", "user"};
  static const char *const gain[] = {"fixed", "affine", "muscle", "user"};
  static const char *const bias[] = {"none", "affine", "muscle", "user"};
  int k;
  if (mjcf_read_enum(c, n, "dyntype", dyn, 5, &k)) {
    if (k > 2) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "dyntype '%s' is not supported (none, integrator, filter)", dyn[k]);
    a->dyntype = k;
  }
  if (mjcf_read_enum(c, n, "gaintype", gain, 4, &k)) {
    if (k > 1) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "gaintype '%s' is not supported (fixed, affine)", gain[k]);
    a->gaintype = k;
  }
  if (mjcf_read_enum(c, n, "biastype", bias, 4, &k)) {
    if (k > 1) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "biastype '%s' is not supported (none, affine)", bias[k]);
    a->biastype = k;
  }
  read_prm(c, n, "dynprm", a->dynprm);
  read_prm(c, n, "gainprm", a->gainprm);
  read_prm(c, n, "biasprm", a->biasprm);
}

/* A gain (kp or kv) read over the class's gainprm[0]; negative gains are errors. */
static double read_gain(mjcf_ctx *c, const mjcf_node *n, const char *name, double current) {
  double k = current;
  mjcf_read_numbers(c, n, name, &k, 1, 1);
  if (k < 0 && c->status == GRIT_OK) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute '%s' = %g must be >= 0", name, k);
  return k;
}

void mjcf_actuator_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a) {
  const int kind = kind_of(n->name);
  if (!strcmp(n->name, "adhesion")) { /* a body transmission (mjcf_adhesion.c) */
    mjcf_adhesion_attrs(c, n, a);
    return;
  }
  if (kind == K_REFUSED) {
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "<%s> actuators are not supported (motor, position, velocity, intvelocity, general)",
              n->name);
    return;
  }
  mjcf_read_enum(c, n, "ctrllimited", TFAUTO, 3, &a->ctrllimited);
  mjcf_read_enum(c, n, "forcelimited", TFAUTO, 3, &a->forcelimited);
  mjcf_read_numbers(c, n, "ctrlrange", a->ctrlrange, 2, 2);
  mjcf_read_numbers(c, n, "forcerange", a->forcerange, 2, 2);
  double gear[6];
  if (mjcf_read_numbers(c, n, "gear", gear, 1, 6)) a->gear = gear[0]; /* a hinge or slide uses gear[0] */
  (void)mjcf_attr(n, "group");
  (void)mjcf_attr(n, "user");
  (void)mjcf_attr(n, "lengthrange");
  switch (kind) {
    case K_MOTOR:
      a->gainprm[0] = 1;
      a->gaintype = GRIT_GAIN_FIXED, a->biastype = GRIT_BIAS_NONE, a->dyntype = GRIT_DYN_NONE;
      break;
    case K_POSITION:
    case K_INTVELOCITY:
      memset(a->biasprm, 0, sizeof a->biasprm);
      a->gainprm[0] = read_gain(c, n, "kp", a->gainprm[0]);
      a->biasprm[1] = -a->gainprm[0];
      a->gaintype = GRIT_GAIN_FIXED, a->biastype = GRIT_BIAS_AFFINE;
      a->dyntype = kind == K_INTVELOCITY ? GRIT_DYN_INTEGRATOR : GRIT_DYN_NONE;
      if (kind == K_INTVELOCITY) {
        a->actlimited = 1;
        mjcf_read_numbers(c, n, "actrange", a->actrange, 2, 2);
      }
      break;
    case K_VELOCITY:
      memset(a->biasprm, 0, sizeof a->biasprm);
      a->gainprm[0] = read_gain(c, n, "kv", a->gainprm[0]);
      a->biasprm[2] = -a->gainprm[0];
      a->gaintype = GRIT_GAIN_FIXED, a->biastype = GRIT_BIAS_AFFINE, a->dyntype = GRIT_DYN_NONE;
      break;
    default: /* general */
      read_types(c, n, a);
      mjcf_read_enum(c, n, "actlimited", TFAUTO, 3, &a->actlimited);
      mjcf_read_numbers(c, n, "actrange", a->actrange, 2, 2);
      break;
  }
}

void mjcf_read_actuators(mjcf_ctx *c, const mjcf_node *n) {
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    if (!mjcf_is_actuator(e->name)) {
      mjcf_fail(c, GRIT_ERR_UNSUPPORTED, e, "unknown actuator type");
      return;
    }
    mjcf_actuator a = MJCF_AT(c->defs, mjcf_default, mjcf_element_class(c, e, 0))->act; /* the class's */
    mjcf_actuator_attrs(c, e, &a);
    a.joint = mjcf_read_name(c, e, "joint");
    const char *jip = mjcf_read_name(c, e, "jointinparent"); /* the same as joint for hinges and slides */
    if (!a.joint) a.joint = jip;
    a.tendon = mjcf_read_name(c, e, "tendon");
    a.body = mjcf_read_name(c, e, "body"); /* adhesion (mjcf_adhesion.c) */
    static const char *const trn[] = {"site", "cranksite", "refsite"};
    for (int i = 0; i < 3 && c->status == GRIT_OK; ++i)
      if (mjcf_attr(e, trn[i]))
        mjcf_fail(c, GRIT_ERR_UNSUPPORTED, e, "transmission '%s' is not supported (joint, tendon, body)", trn[i]);
    if (c->status == GRIT_OK && !!a.joint + !!a.tendon + !!a.body != 1)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "the actuator needs exactly one transmission ('joint', 'tendon' or 'body')");
    a.name = mjcf_read_name(c, e, "name");
    a.element = e->name;
    a.line = e->line, a.file = e->file;
    a.supported = 1;
    mjcf_finish(c, e);
    mjcf_actuator *p = c->status == GRIT_OK ? mjcf_push(c, &c->acts, sizeof *p) : NULL;
    if (p) *p = a;
  }
}

grit_actuator_def mjcf_actuator_def(mjcf_ctx *c, const mjcf_actuator *a) {
  grit_actuator_def d = grit_default_actuator_def();
  d.name = a->name;
  d.gear = a->gear;
  d.ctrl_limited = mjcf_resolve_limited(c, a->ctrllimited, a->ctrlrange, a->element, a->file, a->line, "ctrl");
  memcpy(d.ctrl_range, a->ctrlrange, sizeof d.ctrl_range);
  d.force_limited = mjcf_resolve_limited(c, a->forcelimited, a->forcerange, a->element, a->file, a->line, "force");
  memcpy(d.force_range, a->forcerange, sizeof d.force_range);
  d.act_limited = mjcf_resolve_limited(c, a->actlimited, a->actrange, a->element, a->file, a->line, "act");
  memcpy(d.act_range, a->actrange, sizeof d.act_range);
  d.dyntype = (grit_actuator_dyn)a->dyntype;
  d.gaintype = (grit_actuator_gain)a->gaintype;
  d.biastype = (grit_actuator_bias)a->biastype;
  memcpy(d.dynprm, a->dynprm, sizeof d.dynprm);
  memcpy(d.gainprm, a->gainprm, sizeof d.gainprm);
  memcpy(d.biasprm, a->biasprm, sizeof d.biasprm);
  if (c->status == GRIT_OK && d.dyntype == GRIT_DYN_FILTER && !(d.dynprm[0] > 0))
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, a->element, a->file, a->line, "dynprm[0], the filter's time constant, must be > 0", 0);
  return d;
}
