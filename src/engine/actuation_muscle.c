/* SPDX-License-Identifier: Apache-2.0 */
/* actuation_muscle.c — muscles and the slider-crank transmission (issue 24): their model arrays, checks
 * and compilation; the compile-time constants MuJoCo 2.2.2 gives every actuator (acc0) and every muscle
 * (its length range); the instantiation of the scalar-generic curves (actuation_muscle_generic.h).
 * docs/actuation.md. */
#include "actuation_muscle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "constraints_extra.h" /* grit_tendon_length_jacobian */
#include "data_internal.h"
#include "densechol.h"
#include "grit/data.h"
#include "grit/dynamics.h"
#include "status_internal.h"

void grit_actuator_muscle_layout(grit_model *m, grit_carver *c) {
  const int nu = m->nu;
  GRIT_CARVE(c, m->act_mgain, 9 * nu);
  GRIT_CARVE(c, m->act_mbias, 9 * nu);
  GRIT_CARVE(c, m->act_lengthrange, 2 * nu);
  GRIT_CARVE(c, m->act_acc0, nu);
  GRIT_CARVE(c, m->act_crank, 2 * nu);
  GRIT_CARVE(c, m->act_crankprm, 4 * nu);
  GRIT_CARVE(c, m->act_site, nu);
  GRIT_CARVE(c, m->act_sitegear, 6 * nu);
}

static grit_status check_muscle_prm(const double *p, int id, const char *which, char *msg) {
  for (int i = 0; i < 9; ++i)
    if (!isfinite(p[i])) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "actuator %d: %s[%d] is not finite", id, which, i);
  if (!(p[0] < p[1]))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: muscle range [%g, %g] needs range[0] < range[1] (%s)",
                          id, p[0], p[1], which);
  if (!(p[4] < 1.0 && p[5] > 1.0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: muscle lmin = %g, lmax = %g need lmin < 1 < lmax (%s)",
                          id, p[4], p[5], which);
  if (!(p[3] > 0 && p[6] > 0 && p[7] > 0 && p[8] > 0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: muscle scale, vmax, fpmax, fvmax must be > 0 (%s)", id,
                          which);
  return GRIT_OK;
}

grit_status grit_actuator_muscle_check(const grit_actuator_def *def, int id, int nsite, char *msg) {
  grit_status s = GRIT_OK;
  if (def->gaintype == GRIT_GAIN_MUSCLE) s = check_muscle_prm(def->muscle_gainprm, id, "muscle_gainprm", msg);
  if (s == GRIT_OK && def->biastype == GRIT_BIAS_MUSCLE) s = check_muscle_prm(def->muscle_biasprm, id, "muscle_biasprm", msg);
  if (s != GRIT_OK) return s;
  if (!isfinite(def->length_range[0]) || !isfinite(def->length_range[1]))
    return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "actuator %d: length_range is not finite", id);
  if (def->dyntype == GRIT_DYN_MUSCLE && !(def->dynprm[0] >= 0.0 && def->dynprm[1] >= 0.0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: the muscle's time constants dynprm[0..1] must be >= 0", id);
  if (def->trntype == GRIT_TRN_SITE) {
    if (def->site < 0 || def->site >= nsite)
      return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: site %d does not exist (%d sites)", id, def->site, nsite);
    for (int i = 0; i < 6; ++i)
      if (!isfinite(def->site_gear[i])) return grit_set_error(msg, GRIT_ERR_NOT_FINITE, "actuator %d: site_gear is not finite", id);
  }
  if (def->trntype != GRIT_TRN_SLIDERCRANK) return GRIT_OK;
  if (def->crank_site < 0 || def->crank_site >= nsite)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: crank site %d does not exist (%d sites)", id, def->crank_site,
                          nsite);
  if (def->slider_site < 0 || def->slider_site >= nsite)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: a slider-crank needs a slider site (site %d does not exist, %d sites)",
                          id, def->slider_site, nsite);
  if (!(def->crank_length > 0.0) || !isfinite(def->crank_length))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: crank_length %g must be > 0", id, def->crank_length);
  const double *ax = def->slider_axis, n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
  if (!(n > 1e-12) || !isfinite(n))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: slider_axis (%g, %g, %g) is not a direction", id, ax[0],
                          ax[1], ax[2]);
  return GRIT_OK;
}

void grit_actuator_muscle_compile(grit_model *m, int a, const grit_actuator_def *d) {
  memcpy(m->act_mgain + 9 * a, d->muscle_gainprm, sizeof d->muscle_gainprm);
  memcpy(m->act_mbias + 9 * a, d->muscle_biasprm, sizeof d->muscle_biasprm);
  memcpy(m->act_lengthrange + 2 * a, d->length_range, sizeof d->length_range);
  m->act_acc0[a] = 0.0;
  const int crank = d->trntype == GRIT_TRN_SLIDERCRANK;
  m->act_crank[2 * a] = crank ? d->crank_site : -1;
  m->act_crank[2 * a + 1] = crank ? d->slider_site : -1;
  double *p = m->act_crankprm + 4 * a;
  const double *ax = d->slider_axis, n = crank ? sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]) : 1.0;
  p[0] = crank ? d->crank_length : 0.0;
  for (int i = 0; i < 3; ++i) p[1 + i] = crank ? ax[i] / n : (i == 2);
  const int site = d->trntype == GRIT_TRN_SITE;
  m->act_site[a] = site ? d->site : -1;
  for (int i = 0; i < 6; ++i) m->act_sitegear[6 * a + i] = site ? d->site_gear[i] : (i == 0);
  if (site) m->act_gear[a] = 1.0; /* the site's moment carries the gear (grit_actuator_length_jacobian) */
}

void grit_actuator_muscle_read(const grit_model *m, int a, grit_actuator_def *d) {
  memcpy(d->muscle_gainprm, m->act_mgain + 9 * a, sizeof d->muscle_gainprm);
  memcpy(d->muscle_biasprm, m->act_mbias + 9 * a, sizeof d->muscle_biasprm);
  memcpy(d->length_range, m->act_lengthrange + 2 * a, sizeof d->length_range);
  d->crank_site = m->act_crank[2 * a];
  d->slider_site = m->act_crank[2 * a + 1];
  d->crank_length = m->act_crankprm[4 * a];
  memcpy(d->slider_axis, m->act_crankprm + 4 * a + 1, sizeof d->slider_axis);
  d->site = m->act_site[a];
  memcpy(d->site_gear, m->act_sitegear + 6 * a, sizeof d->site_gear);
}

/* ------------------------------------------------------------------- compile-time constants */

/* The slider-crank's tree: its two sites' bodies may move one tree (or one of them the world). */
static grit_status crank_tree(grit_model *m, int a, char *msg) {
  const int t0 = m->body_tree[m->site_body[m->act_crank[2 * a]]];
  const int t1 = m->body_tree[m->site_body[m->act_crank[2 * a + 1]]];
  if (t0 < 0 && t1 < 0)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: neither site of the slider-crank can move", a);
  if (t0 >= 0 && t1 >= 0 && t0 != t1)
    return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                          "actuator %d: the slider-crank's sites are on two kinematic trees (it must move one tree)", a);
  m->act_jnt[a] = -1;
  m->act_dof[a] = m->tree_dofadr[t0 >= 0 ? t0 : t1];
  return GRIT_OK;
}

/* A site transmission's tree: its site's body must move (a wrench on the world moves nothing). */
static grit_status site_tree(grit_model *m, int a, char *msg) {
  const int s = m->act_site[a], t = m->body_tree[m->site_body[s]];
  if (t < 0)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: its site '%s' is on a body that cannot move (actuator '%s')", a,
                          m->site_name[s] ? m->site_name[s] : "", m->act_name[a] ? m->act_name[a] : "");
  m->act_jnt[a] = -1;
  m->act_dof[a] = m->tree_dofadr[t];
  return GRIT_OK;
}

/* Actuator a's length (gear included) at the data's configuration, and if J is not NULL its moment. */
static double act_length(grit_data *d, int a, double *J) {
  const grit_model *m = d->model;
  const double g = m->act_gear[a];
  grit_forward_kinematics(d);
  double L;
  if (grit_actuator_has_length_fn(m, a)) {
    L = grit_actuator_length_jacobian(m, &d->kin, d->qpos, a, J, d->jscratch);
  } else {
    L = d->qpos[m->jnt_qposadr[m->act_jnt[a]]];
    if (J) {
      memset(J, 0, sizeof(double) * (size_t)m->nv);
      J[m->act_dof[a]] = 1.0;
    }
  }
  if (J)
    for (int i = 0; i < m->nv; ++i) J[i] *= g;
  return g * L;
}

/* acc0 = |M^-1 moment| at qpos0, MuJoCo's scale of an actuator's effect (the muscles' force = -1 rule).
 * work: nv^2 + nv. */
static grit_status compute_acc0(grit_model *m, grit_data *d, double *work, char *msg) {
  const int nv = m->nv;
  double *M = work, *x = work + (size_t)nv * nv;
  grit_model_qpos0(m, d->qpos);
  grit_mass_matrix(d, M);
  if (nv > 0 && grit_densechol_factor(M, nv) >= 0)
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "the mass matrix at qpos0 is not positive definite (acc0)");
  for (int a = 0; a < m->nu; ++a) {
    (void)act_length(d, a, x);
    grit_densechol_solve(M, nv, x, 1);
    double s = 0.0;
    for (int i = 0; i < nv; ++i) s += x[i] * x[i];
    m->act_acc0[a] = sqrt(s);
  }
  return GRIT_OK;
}

/* The length range of a muscle whose range was not given: the extremes of its length over the box of
 * the limits of the joints that move it (MuJoCo 2.2.2 finds them by a short simulation pushing the actuator both ways
 * against those limits; docs/actuation.md measures the difference). A grid over the box, then a
 * coordinate search from the best grid point with halving steps, for each side. */
typedef struct lr_search {
  grit_data *d;
  int a, k;
  const int *qadr;
  const double *lo, *hi;
} lr_search;

static double lr_eval(const lr_search *s, const double *x) {
  for (int i = 0; i < s->k; ++i) s->d->qpos[s->qadr[i]] = x[i];
  return act_length(s->d, s->a, NULL);
}

static double lr_refine(const lr_search *s, double *x, double f, double sign, double h0) {
  double step = h0, *y = x + s->k;
  for (int halvings = 0; halvings < 50; ++halvings, step *= 0.5) {
    for (int improved = 1, rounds = 0; improved && rounds < 100; ++rounds) {
      improved = 0;
      for (int i = 0; i < s->k; ++i)
        for (int dir = -1; dir <= 1; dir += 2) {
          memcpy(y, x, sizeof(double) * (size_t)s->k);
          y[i] = fmin(fmax(x[i] + dir * step * (s->hi[i] - s->lo[i]), s->lo[i]), s->hi[i]);
          const double fy = lr_eval(s, y);
          if (sign * fy > sign * f) f = fy, memcpy(x, y, sizeof(double) * (size_t)s->k), improved = 1;
        }
    }
  }
  return f;
}

/* Marks in `on` (nbody) the bodies whose motion moves actuator a's length: a joint's body, a fixed
 * tendon's joints' bodies, a spatial tendon's sites' and wrap geometries' bodies, a slider-crank's two
 * sites' bodies; then their ancestors. A joint moves the length only if its body is marked. */
static void mark_bodies(const grit_model *m, int a, char *on) {
  memset(on, 0, (size_t)m->nbody);
  const int trn = m->act_trntype[a];
  if (trn == GRIT_TRN_JOINT) on[m->jnt_body[m->act_jnt[a]]] = 1;
  if (trn == GRIT_TRN_SLIDERCRANK) on[m->site_body[m->act_crank[2 * a]]] = on[m->site_body[m->act_crank[2 * a + 1]]] = 1;
  if (trn == GRIT_TRN_TENDON) {
    const int ten = m->act_tendon[a];
    for (int e = m->ten_adr[ten]; e < m->ten_adr[ten] + m->ten_num[ten]; ++e) {
      if (m->ten_type[ten] == GRIT_TENDON_FIXED) on[m->jnt_body[m->wrap_obj[e]]] = 1;
      else if (m->wrap_geom[e] >= 0) on[m->geom_body[m->wrap_geom[e]]] = 1;
      else on[m->site_body[m->wrap_obj[e]]] = 1;
    }
  }
  for (int b = m->nbody - 1; b > 0; --b) /* parents come before their children */
    if (on[b] && m->body_parent[b] > 0) on[m->body_parent[b]] = 1;
}

static grit_status length_range(grit_model *m, grit_data *d, int a, double *work, int *iwork, char *msg) {
  char *on = (char *)(iwork + 16);
  mark_bodies(m, a, on);
  int k = 0;
  for (int j = 0; j < m->njnt; ++j) {
    if (!on[m->jnt_body[j]]) continue;
    if (m->jnt_type[j] != GRIT_JOINT_HINGE && m->jnt_type[j] != GRIT_JOINT_SLIDE)
      return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                            "actuator %d: its muscle's length range cannot be computed over a ball or free joint (joint %d): "
                            "give length_range (MJCF lengthrange)", a, j);
    if (!m->jnt_limited[j])
      return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                            "actuator %d: its muscle's length range needs its joints' limits (joint %d is not limited): give "
                            "length_range (MJCF lengthrange)", a, j);
    if (k == 12)
      return grit_set_error(msg, GRIT_ERR_UNSUPPORTED,
                            "actuator %d: more than 12 joints move its muscle: give length_range (MJCF lengthrange)", a);
    iwork[k++] = j;
  }
  double *lo = work, *hi = work + k, *x = work + 2 * k, *best = work + 4 * k; /* x, best: 2 k each */
  int qadr[12];
  for (int i = 0; i < k; ++i) qadr[i] = m->jnt_qposadr[iwork[i]], lo[i] = m->jnt_range[2 * iwork[i]], hi[i] = m->jnt_range[2 * iwork[i] + 1];
  lr_search s = {d, a, k, qadr, lo, hi};
  grit_model_qpos0(m, d->qpos);
  int n = 2; /* grid points per joint: as many as keep the grid at most 4096 points */
  while (k > 0 && pow(n + 1, k) <= 4096.0) ++n;
  long total = 1;
  for (int i = 0; i < k; ++i) total *= n;
  double fmin_ = INFINITY, fmax_ = -INFINITY;
  for (long p = 0; p < total; ++p) {
    long r = p;
    for (int i = 0; i < k; ++i, r /= n) x[i] = lo[i] + (hi[i] - lo[i]) * (double)(r % n) / (n - 1);
    const double f = lr_eval(&s, x);
    if (f < fmin_) fmin_ = f, memcpy(best, x, sizeof(double) * (size_t)k);
    if (f > fmax_) fmax_ = f, memcpy(best + k, x, sizeof(double) * (size_t)k);
  }
  const double h0 = 0.5 / (n - 1);
  memcpy(x, best, sizeof(double) * (size_t)k);
  fmin_ = lr_refine(&s, x, fmin_, -1.0, h0);
  memcpy(x, best + k, sizeof(double) * (size_t)k);
  fmax_ = lr_refine(&s, x, fmax_, 1.0, h0);
  if (!(fmax_ - fmin_ > 0.0))
    return grit_set_error(msg, GRIT_ERR_INVALID_MODEL, "actuator %d: its muscle's length range (%g, %g) is empty", a, fmin_,
                          fmax_);
  m->act_lengthrange[2 * a] = fmin_;
  m->act_lengthrange[2 * a + 1] = fmax_;
  return GRIT_OK;
}

static int is_muscle(const grit_model *m, int a) {
  return m->act_gaintype[a] == GRIT_GAIN_MUSCLE || m->act_biastype[a] == GRIT_BIAS_MUSCLE;
}

grit_status grit_actuator_compile_const(grit_model *m, char *msg) {
  grit_status s = GRIT_OK;
  for (int a = 0; a < m->nu && s == GRIT_OK; ++a)
    if (m->act_trntype[a] == GRIT_TRN_SLIDERCRANK) s = crank_tree(m, a, msg);
    else if (m->act_trntype[a] == GRIT_TRN_SITE) s = site_tree(m, a, msg);
  if (s != GRIT_OK || m->nu == 0) return s;
  grit_data *d = NULL;
  const size_t nv = (size_t)m->nv;
  double *work = malloc(sizeof(double) * (nv * nv + nv + 80)); /* acc0: nv^2 + nv; a length range: 6 x 12 */
  int *iwork = malloc(sizeof(int) * 16 + (size_t)m->nbody); /* 12 joints, then a mark per body */
  if (!work || !iwork || grit_data_create(m, &d) != GRIT_OK) {
    s = grit_set_error(msg, GRIT_ERR_OUT_OF_MEMORY, "out of memory compiling the actuators");
  } else {
    s = compute_acc0(m, d, work, msg);
    for (int a = 0; a < m->nu && s == GRIT_OK; ++a)
      if (is_muscle(m, a) && !(m->act_lengthrange[2 * a] < m->act_lengthrange[2 * a + 1]))
        s = length_range(m, d, a, work, iwork, msg);
  }
  grit_data_free(d);
  free(work);
  free(iwork);
  return s;
}

/* ----------------------------------------------------------------- the scalar-generic instantiations */

#include "grit/detail/scalar_double.h"
#include "actuation_muscle_generic.h"
#include "grit/detail/scalar_undef.h"

#include "grit/detail/scalar_dual.h"
#include "actuation_muscle_generic.h"
#include "grit/detail/scalar_undef.h"
