/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_actuator.c — MJCF's <actuator> section and actuator default classes, as MuJoCo 2.2.2 reads them
 * (docs/actuation.md): every element is a `general` actuator; the shortcuts motor, position, velocity
 * and intvelocity set its gain, bias and dynamics from their own attributes (kp, kv) over the class's
 * values, exactly as MuJoCo's reader does (checked against libmujoco 2.2.2: a <velocity> in a class
 * whose default is <position kp="5"/> has kv = 5). <muscle> and general's muscle types (issue 24) carry
 * MuJoCo's 9 muscle parameters; the slider-crank transmission (cranksite, slidersite, cranklength) is
 * resolved to sites in mjcf_build.c, as is the site transmission (its gear, up to 6 numbers, a wrench in
 * the site frame; refsite, which 2.2.2 lacks, is an error). cylinder is an error naming it: grit would
 * simulate another machine without it. */
#include <stdio.h>
#include <string.h>

#include "mjcf_internal.h"

static const char *const TFAUTO[] = {"false", "true", "auto"};

void mjcf_actuator_defaults(mjcf_actuator *a) {
  memset(a, 0, sizeof *a);
  a->gear = 1;
  a->gear6[0] = 1;
  a->gain = 1;
  a->ctrllimited = a->forcelimited = a->actlimited = 2;
  a->supported = 1;
  a->dynprm[0] = 1; /* MuJoCo's defaults: dynprm (1, 0, ...), gainprm (1, 0, ...), biasprm 0 */
  a->gainprm[0] = 1;
  a->dyntype = GRIT_DYN_NONE;
  a->gaintype = GRIT_GAIN_FIXED;
  a->biastype = GRIT_BIAS_NONE;
}

enum { K_MOTOR, K_POSITION, K_VELOCITY, K_INTVELOCITY, K_GENERAL, K_MUSCLE, K_CYLINDER, K_REFUSED };

static int kind_of(const char *e) {
  static const char *const supported[] = {"motor",   "position", "velocity", "intvelocity",
                                          "general", "muscle",   "cylinder"};
  static const char *const refused[] = {"adhesion", "damper", "plugin"};
  for (int i = 0; i < 7; ++i)
    if (!strcmp(e, supported[i])) return i;
  for (int i = 0; i < 3; ++i)
    if (!strcmp(e, refused[i])) return K_REFUSED;
  return -1;
}

int mjcf_is_actuator(const char *element) { return kind_of(element) >= 0; }

/* Up to 10 numbers (MuJoCo's mjNGAIN etc.): the affine types use the first 3, the muscle types 9. */
static void read_prm(mjcf_ctx *c, const mjcf_node *n, const char *name, double out[10]) {
  double v[10] = {0};
  if (mjcf_read_numbers(c, n, name, v, 1, 10)) memcpy(out, v, 10 * sizeof(double));
}

/* <muscle>: MuJoCo 2.2.2's defaults replace the global ones still in place (a class's own values stay),
 * then its attributes; the bias takes the gain's parameters. */
static void read_muscle(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a) {
  static const double def[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};
  if (a->dynprm[0] == 1) a->dynprm[0] = 0.01;
  if (a->dynprm[1] == 0) a->dynprm[1] = 0.04;
  for (int i = 0; i < 9; ++i)
    if (a->gainprm[i] == (i == 0 ? 1 : 0)) a->gainprm[i] = def[i];
  static const char *const names[] = {"range", "force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
  mjcf_read_numbers(c, n, "timeconst", a->dynprm, 2, 2);
  mjcf_read_numbers(c, n, "range", a->gainprm, 2, 2);
  for (int i = 1; i < 8; ++i) mjcf_read_numbers(c, n, names[i], a->gainprm + 1 + i, 1, 1);
  memcpy(a->biasprm, a->gainprm, sizeof a->biasprm);
  a->dyntype = GRIT_DYN_MUSCLE, a->gaintype = GRIT_GAIN_MUSCLE, a->biastype = GRIT_BIAS_MUSCLE;
}

/* general's types; a user type is an error naming it */
static void read_types(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a) {
  static const char *const dyn[] = {"none", "integrator", "filter", "muscle", "user"};
  static const char *const gain[] = {"fixed", "affine", "muscle", "user"};
  static const char *const bias[] = {"none", "affine", "muscle", "user"};
  int k;
  if (mjcf_read_enum(c, n, "dyntype", dyn, 5, &k)) {
    if (k > 3) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "dyntype '%s' is not supported (none, integrator, filter, muscle)", dyn[k]);
    a->dyntype = k;
  }
  if (mjcf_read_enum(c, n, "gaintype", gain, 4, &k)) {
    if (k > 2) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "gaintype '%s' is not supported (fixed, affine, muscle)", gain[k]);
    a->gaintype = k;
  }
  if (mjcf_read_enum(c, n, "biastype", bias, 4, &k)) {
    if (k > 2) mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "biastype '%s' is not supported (none, affine, muscle)", bias[k]);
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
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "<%s> actuators are not supported (motor, position, velocity, intvelocity, general, muscle, "
              "cylinder, adhesion)",
              n->name);
    return;
  }
  mjcf_read_enum(c, n, "ctrllimited", TFAUTO, 3, &a->ctrllimited);
  mjcf_read_enum(c, n, "forcelimited", TFAUTO, 3, &a->forcelimited);
  mjcf_read_numbers(c, n, "ctrlrange", a->ctrlrange, 2, 2);
  mjcf_read_numbers(c, n, "forcerange", a->forcerange, 2, 2);
  double gear[6];
  const int ngear = mjcf_read_numbers(c, n, "gear", gear, 1, 6);
  if (ngear) a->gear = gear[0]; /* a hinge or slide uses gear[0] */
  memcpy(a->gear6, gear, sizeof(double) * (size_t)ngear); /* as MuJoCo: the numbers not given stay */
  (void)mjcf_attr(n, "group");
  (void)mjcf_attr(n, "user");
  mjcf_read_numbers(c, n, "lengthrange", a->lengthrange, 2, 2);
  mjcf_read_numbers(c, n, "cranklength", &a->cranklength, 1, 1);
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
    case K_MUSCLE:
      read_muscle(c, n, a);
      break;
    case K_CYLINDER: /* MuJoCo 2.2.2's pneumatic cylinder: a filtered control times the area, plus bias */
      mjcf_read_numbers(c, n, "timeconst", &a->dynprm[0], 1, 1);
      mjcf_read_numbers(c, n, "bias", a->biasprm, 3, 3);
      mjcf_read_numbers(c, n, "area", &a->gainprm[0], 1, 1);
      double diameter;
      if (mjcf_read_numbers(c, n, "diameter", &diameter, 1, 1)) a->gainprm[0] = 3.14159265358979323846 / 4 * diameter * diameter;
      a->dyntype = GRIT_DYN_FILTER, a->gaintype = GRIT_GAIN_FIXED, a->biastype = GRIT_BIAS_AFFINE;
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
    a.cranksite = mjcf_read_name(c, e, "cranksite");
    a.slidersite = mjcf_read_name(c, e, "slidersite");
    a.body = mjcf_read_name(c, e, "body"); /* adhesion (mjcf_adhesion.c) */
    a.site = mjcf_read_name(c, e, "site"); /* the site transmission (mjcf_actuator_site) */
    if (c->status == GRIT_OK && mjcf_attr(e, "refsite")) /* MuJoCo 2.2.2 has none */
      mjcf_fail(c, GRIT_ERR_UNSUPPORTED, e, "transmission 'refsite' is not supported (joint, tendon, cranksite, body, site)");
    if (c->status == GRIT_OK && !!a.joint + !!a.tendon + !!a.cranksite + !!a.body + !!a.site != 1)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e,
                "the actuator needs exactly one transmission ('joint', 'tendon', 'cranksite', 'body' or 'site')");
    if (c->status == GRIT_OK && a.cranksite && !a.slidersite)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a slider-crank needs its slider site ('slidersite')");
    if (c->status == GRIT_OK && a.cranksite && !(a.cranklength > 0))
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "a slider-crank needs cranklength > 0 (it is %g)", a.cranklength);
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
  if (d.gaintype == GRIT_GAIN_MUSCLE) memcpy(d.muscle_gainprm, a->gainprm, sizeof d.muscle_gainprm);
  if (d.biastype == GRIT_BIAS_MUSCLE) memcpy(d.muscle_biasprm, a->biasprm, sizeof d.muscle_biasprm);
  memcpy(d.length_range, a->lengthrange, sizeof d.length_range);
  d.crank_length = a->cranklength;
  if (c->status == GRIT_OK && (d.gaintype == GRIT_GAIN_MUSCLE || d.biastype == GRIT_BIAS_MUSCLE)) {
    for (int k = 0; k < 2; ++k) { /* MuJoCo's checks, with the element's line */
      const double *p = k ? d.muscle_biasprm : d.muscle_gainprm;
      if ((k ? d.biastype : d.gaintype) != (k ? GRIT_BIAS_MUSCLE : GRIT_GAIN_MUSCLE)) continue;
      const char *bad = !(p[0] < p[1])                 ? "muscle range[0] < range[1] is required"
                        : !(p[4] < 1 && p[5] > 1)       ? "muscle lmin < 1 < lmax is required"
                        : !(p[3] > 0 && p[6] > 0 && p[7] > 0 && p[8] > 0) ? "muscle scale, vmax, fpmax, fvmax must be > 0"
                                                                       : NULL;
      if (bad) {
        mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, a->element, a->file, a->line, bad, 0);
        break;
      }
    }
  }
  if (c->status == GRIT_OK && d.dyntype == GRIT_DYN_FILTER && !(d.dynprm[0] > 0))
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, a->element, a->file, a->line, "dynprm[0], the filter's time constant, must be > 0", 0);
  return d;
}

void mjcf_actuator_crank(mjcf_ctx *c, const mjcf_actuator *a, grit_actuator_def *d) {
  const int sc = mjcf_cx_site_index(c, a->cranksite), ss = mjcf_cx_site_index(c, a->slidersite);
  if (sc < 0 || ss < 0) {
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, a->element, a->file, a->line, sc < 0 ? "unknown crank site " : "unknown slider site ",
                 sc < 0 ? a->cranksite : a->slidersite);
    return;
  }
  d->trntype = GRIT_TRN_SLIDERCRANK;
  d->crank_site = sc;
  d->slider_site = ss;
  const double *q = MJCF_AT(c->sites, mjcf_site, ss)->quat; /* R(q) (0, 0, 1): the third column */
  d->slider_axis[0] = 2 * (q[1] * q[3] + q[0] * q[2]);
  d->slider_axis[1] = 2 * (q[2] * q[3] - q[0] * q[1]);
  d->slider_axis[2] = q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3];
}

void mjcf_actuator_site(mjcf_ctx *c, const mjcf_actuator *a, grit_actuator_def *d) {
  const int s = mjcf_cx_site_index(c, a->site);
  if (s < 0) {
    mjcf_fail_at(c, GRIT_ERR_INVALID_MODEL, a->element, a->file, a->line, "unknown site ", a->site);
    return;
  }
  d->trntype = GRIT_TRN_SITE;
  d->site = s;
  double R[9];
  mjcf_quat2mat(R, MJCF_AT(c->sites, mjcf_site, s)->quat); /* the site frame in its body frame */
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 3; ++i)
      d->site_gear[3 * k + i] = R[3 * i] * a->gear6[3 * k] + R[3 * i + 1] * a->gear6[3 * k + 1] + R[3 * i + 2] * a->gear6[3 * k + 2];
}

int mjcf_actuator_compile_error(mjcf_ctx *c, grit_status s, const char *msg) {
  int id = -1, u = 0;
  if (sscanf(msg, "actuator %d:", &id) != 1 || id < 0) return 0;
  for (int a = 0; a < c->acts.n; ++a) { /* the id-th actuator in the model: the id-th supported one */
    const mjcf_actuator *A = MJCF_AT(c->acts, mjcf_actuator, a);
    if (!A->supported || u++ != id) continue;
    mjcf_fail_at(c, s, A->element, A->file, A->line, msg, NULL);
    return 1;
  }
  return 0;
}

void mjcf_read_lengthrange_options(mjcf_ctx *c, const mjcf_node *n) {
  static const char *const modes[] = {"none", "muscle", "muscleuser", "all"};
  int k;
  if (mjcf_read_enum(c, n, "mode", modes, 4, &k) && k == 0)
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, n, "mode 'none' is not supported (a muscle needs its length range)");
  mjcf_read_bool(c, n, "useexisting", &c->lr_useexisting);
  mjcf_read_bool(c, n, "uselimit", &c->lr_uselimit);
  /* the options of MuJoCo's length-range simulation: grit searches the joint limits instead */
  static const char *const sim[] = {"accel", "maxforce", "timeconst", "timestep", "inttotal", "inteval", "tolrange"};
  for (int i = 0; i < 7; ++i) mjcf_mark(n, sim[i]);
  mjcf_finish(c, n);
}

void mjcf_actuator_lengthrange(mjcf_ctx *c, int j, int t, grit_actuator_def *d) {
  if (d->gaintype != GRIT_GAIN_MUSCLE && d->biastype != GRIT_BIAS_MUSCLE) return;
  double *lr = d->length_range;
  if (c->lr_useexisting && lr[0] < lr[1]) return;
  lr[0] = lr[1] = 0; /* computed by the builder unless a limit gives it */
  if (!c->lr_uselimit) return;
  if (t >= 0) {
    const mjcf_tendon *T = MJCF_AT(c->tendons, mjcf_tendon, t);
    const int limited = T->limited == 2 ? !(T->range[0] == 0 && T->range[1] == 0) : T->limited;
    if (limited) lr[0] = T->range[0], lr[1] = T->range[1];
  } else if (j >= 0) {
    const mjcf_joint *J = MJCF_AT(c->joints, mjcf_joint, j);
    const int limited = J->limited == 2 ? !(J->range[0] == 0 && J->range[1] == 0) : J->limited;
    const double deg = J->type == GRIT_JOINT_HINGE && c->degree ? 3.14159265358979323846 / 180.0 : 1.0;
    if (limited) lr[0] = J->range[0] * deg, lr[1] = J->range[1] * deg;
  }
}
