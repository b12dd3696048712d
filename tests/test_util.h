/* SPDX-License-Identifier: Apache-2.0 */
/* test_util.h — helpers shared by the multibody tests: a deterministic PRNG, random rotations and
 * inertias, random kinematic trees (chains, branches, free bodies, ball joints, slides, bodies with
 * several joints, welded bodies), random states, the kinetic and potential energies computed
 * independently of the mass matrix, and small dense linear algebra.
 *
 * Everything is static inline so each test file uses what it needs without unused-function warnings. */
#ifndef GRIT_TEST_UTIL_H
#define GRIT_TEST_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"
#include "model_internal.h"

#define TU_PI 3.14159265358979323846

/* ------------------------------------------------------------------------------------------ PRNG */

/* splitmix64: a tiny, fully deterministic generator (same numbers on every platform). */
typedef struct tu_rng {
  uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double tu_uniform(tu_rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(tu_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline int tu_int(tu_rng *r, int n) { return (int)(tu_next(r) % (uint64_t)n); }

/* A uniformly distributed unit quaternion (Shoemake's method). */
static inline void tu_quat(tu_rng *r, double q[4]) {
  double u1 = tu_uniform(r, 0, 1), u2 = tu_uniform(r, 0, 2 * TU_PI), u3 = tu_uniform(r, 0, 2 * TU_PI);
  double a = sqrt(1 - u1), b = sqrt(u1);
  q[0] = a * sin(u2);
  q[1] = a * cos(u2);
  q[2] = b * sin(u3);
  q[3] = b * cos(u3);
}

/* A random unit vector. */
static inline void tu_unit3(tu_rng *r, double v[3]) {
  double n;
  do {
    for (int i = 0; i < 3; ++i) v[i] = tu_uniform(r, -1, 1);
    n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  } while (n < 0.1 || n > 1.0);
  for (int i = 0; i < 3; ++i) v[i] /= n;
}

/* A random rotational inertia about the centre of mass: principal moments in [0.2, 1] * scale that
 * satisfy the triangle inequality with margin, on randomly rotated principal axes (so every entry of
 * the matrix is non-zero). */
static inline void tu_inertia(tu_rng *r, double I[9], double scale) {
  double d[3], q[4];
  d[0] = tu_uniform(r, 0.2, 1.0) * scale;
  d[1] = tu_uniform(r, 0.2, 1.0) * scale;
  d[2] = tu_uniform(r, fabs(d[0] - d[1]) + 0.05 * scale, d[0] + d[1] - 0.05 * scale);
  tu_quat(r, q);
  grit_inertia_from_principal(I, d, q);
}

/* A freshly created data for m (asserting success). */
static inline grit_data *tu_data(const grit_model *m) {
  grit_data *d;
  cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
  return d;
}

/* ------------------------------------------------------------------------------- random trees */

enum {
  TU_HINGE = 1,  /* hinge joints */
  TU_SLIDE = 2,  /* slide joints */
  TU_BALL = 4,   /* ball joints */
  TU_FREE = 8,   /* free joints on children of the world */
  TU_WELD = 16,  /* bodies without joints (welded to their parent) */
  TU_MULTI = 32, /* bodies with two or three hinge/slide joints */
  TU_ALL = 63
};

/* Options of the random trees: gravity, timestep, and whether damping, armature and springs are set. */
typedef struct tu_tree_opts {
  double gravity[3];
  double timestep;
  int damping, armature, springs;
} tu_tree_opts;

static inline tu_tree_opts tu_default_tree_opts(void) {
  tu_tree_opts o = {{0.3, -0.2, -9.81}, 1e-3, 1, 1, 0};
  return o;
}

/* Adds a random hinge or slide joint (as allowed by kinds) to body. */
static inline void tu_add_hinge_or_slide(tu_rng *r, grit_builder *b, int body, unsigned kinds,
                                         const tu_tree_opts *o) {
  grit_joint_def jd = grit_default_joint_def();
  int slide = (kinds & TU_SLIDE) && (!(kinds & TU_HINGE) || tu_uniform(r, 0, 1) < 0.3);
  jd.type = slide ? GRIT_JOINT_SLIDE : GRIT_JOINT_HINGE;
  tu_unit3(r, jd.axis);
  for (int i = 0; i < 3; ++i) jd.pos[i] = tu_uniform(r, -0.3, 0.3);
  if (o->damping) jd.damping = tu_uniform(r, 0, 0.5);
  if (o->armature) jd.armature = tu_uniform(r, 0, 0.05);
  if (o->springs) {
    jd.stiffness = tu_uniform(r, 0, 5);
    jd.spring_ref = tu_uniform(r, -0.5, 0.5);
  }
  jd.qpos0 = tu_uniform(r, -0.5, 0.5);
  cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
}

/* A random forest of nbody bodies (besides the world). Parents are earlier bodies (often the previous
 * one, giving chains, otherwise any, giving branches and several trees), so bodies are NOT numbered
 * depth first in general. Each body gets joints of the allowed kinds. */
static inline grit_model *tu_random_tree(tu_rng *r, int nbody, unsigned kinds, const tu_tree_opts *o) {
  grit_builder *b;
  cr_assert_eq(grit_builder_create(&b), GRIT_OK);
  grit_options opt = grit_default_options();
  for (int i = 0; i < 3; ++i) opt.gravity[i] = o->gravity[i];
  opt.timestep = o->timestep;
  cr_assert_eq(grit_builder_set_options(b, &opt), GRIT_OK);
  for (int k = 1; k <= nbody; ++k) {
    grit_body_def bd = grit_default_body_def();
    bd.parent = (k == 1 || tu_uniform(r, 0, 1) < 0.55) ? k - 1 : tu_int(r, k);
    for (int i = 0; i < 3; ++i) {
      bd.pos[i] = tu_uniform(r, -0.5, 0.5);
      bd.com[i] = tu_uniform(r, -0.2, 0.2);
    }
    tu_quat(r, bd.quat);
    bd.mass = tu_uniform(r, 0.3, 3.0);
    tu_inertia(r, bd.inertia, 0.1 * bd.mass);
    int body;
    cr_assert_eq(grit_builder_add_body(b, &bd, &body), GRIT_OK, "%s", grit_builder_last_error(b));
    cr_assert_eq(body, k);

    double u = tu_uniform(r, 0, 1);
    if ((kinds & TU_FREE) && bd.parent == 0 && u < 0.5) {
      grit_joint_def jd = grit_default_joint_def();
      jd.type = GRIT_JOINT_FREE;
      if (o->damping) jd.damping = tu_uniform(r, 0, 0.1);
      if (o->armature) jd.armature = tu_uniform(r, 0, 0.05);
      cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    } else if ((kinds & TU_WELD) && u > 0.88) {
      /* welded */
    } else if ((kinds & TU_BALL) && (u < 0.3 || !(kinds & (TU_HINGE | TU_SLIDE)))) {
      grit_joint_def jd = grit_default_joint_def();
      jd.type = GRIT_JOINT_BALL;
      for (int i = 0; i < 3; ++i) jd.pos[i] = tu_uniform(r, -0.3, 0.3);
      if (o->damping) jd.damping = tu_uniform(r, 0, 0.3);
      if (o->armature) jd.armature = tu_uniform(r, 0, 0.05);
      cr_assert_eq(grit_builder_add_joint(b, body, &jd, NULL), GRIT_OK, "%s", grit_builder_last_error(b));
    } else if (kinds & (TU_HINGE | TU_SLIDE)) {
      int nj = (kinds & TU_MULTI) ? 1 + (tu_uniform(r, 0, 1) < 0.35) + (tu_uniform(r, 0, 1) < 0.2) : 1;
      for (int n = 0; n < nj; ++n) tu_add_hinge_or_slide(r, b, body, kinds, o);
    }
  }
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK, "%s", grit_builder_last_error(b));
  grit_builder_free(b);
  return m;
}

/* Counts what a model contains, to check that random trees cover every feature: per joint type, welded
 * bodies (no joint, not the world), bodies with several joints, and bodies whose parent is not the
 * previous body (branches or several trees). */
typedef struct tu_coverage {
  int type[4], welded, multi, branch;
} tu_coverage;

static inline void tu_cover(tu_coverage *c, const grit_model *m) {
  for (int j = 0; j < m->njnt; ++j) c->type[m->jnt_type[j]]++;
  for (int b = 1; b < m->nbody; ++b) {
    c->welded += m->body_jntnum[b] == 0;
    c->multi += m->body_jntnum[b] > 1;
    c->branch += m->body_parent[b] != b - 1;
  }
}

/* Asserts every feature appeared. */
static inline void tu_assert_covered(const tu_coverage *c) {
  cr_assert(c->type[GRIT_JOINT_FREE] && c->type[GRIT_JOINT_BALL] && c->type[GRIT_JOINT_SLIDE] &&
                c->type[GRIT_JOINT_HINGE] && c->welded && c->multi && c->branch,
            "random trees miss a feature: free %d ball %d slide %d hinge %d welded %d multi %d branch %d",
            c->type[GRIT_JOINT_FREE], c->type[GRIT_JOINT_BALL], c->type[GRIT_JOINT_SLIDE], c->type[GRIT_JOINT_HINGE],
            c->welded, c->multi, c->branch);
}

/* A random state: hinge angles in [-pi, pi), slides in [-0.5, 0.5), random unit quaternions, free
 * positions in a unit box, velocities in [-vmax, vmax). */
static inline void tu_random_state(tu_rng *r, const grit_model *m, double *q, double *v, double vmax) {
  for (int j = 0; j < grit_model_njoint(m); ++j) {
    const int qa = grit_model_joint_qposadr(m, j);
    switch (grit_model_joint_type(m, j)) {
      case GRIT_JOINT_FREE:
        for (int i = 0; i < 3; ++i) q[qa + i] = tu_uniform(r, -1, 1);
        tu_quat(r, q + qa + 3);
        break;
      case GRIT_JOINT_BALL: tu_quat(r, q + qa); break;
      case GRIT_JOINT_SLIDE: q[qa] = tu_uniform(r, -0.5, 0.5); break;
      default: q[qa] = tu_uniform(r, -TU_PI, TU_PI); break;
    }
  }
  for (int i = 0; i < grit_model_nv(m); ++i) v[i] = tu_uniform(r, -vmax, vmax);
}

/* Sets a random state on the data (and returns it in q, v if not NULL; sizes nq, nv). */
static inline void tu_set_random_state(tu_rng *r, grit_data *d, double vmax) {
  const grit_model *m = grit_data_model(d);
  double *q = calloc((size_t)m->nq + 1, sizeof *q), *v = calloc((size_t)m->nv + 1, sizeof *v);
  tu_random_state(r, m, q, v, vmax);
  cr_assert_eq(grit_data_set_qpos(d, q, m->nq), GRIT_OK);
  cr_assert_eq(grit_data_set_qvel(d, v, m->nv), GRIT_OK);
  free(q);
  free(v);
}

/* --------------------------------------------------------------------------- independent energies */

/* The kinetic energy from the body twists, NOT from the mass matrix:
 *   T = sum_b 1/2 (m_b |v_com,b|^2 + omega_b^T R_b I_b R_b^T omega_b) + sum_dofs 1/2 armature v^2,
 * with v_com = v_O + omega x com from the twist (omega; v_O) referred to the world origin. Runs
 * forward kinematics at the data's state. */
static inline double tu_kinetic(grit_data *d) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_forward_kinematics(d), GRIT_OK);
  double T = 0.0;
  for (int b = 1; b < m->nbody; ++b) {
    double tw[6], c[3], quat[4], R[9], vc[3], Iw[9], Iwo[3];
    grit_body_twist(d, b, tw);
    grit_body_com(d, b, c);
    grit_body_pose(d, b, NULL, quat);
    grit_quat_to_mat(R, quat);
    grit_v3_cross(vc, tw, c);
    grit_v3_add(vc, vc, tw + 3);
    grit_m3_mul(Iw, R, m->body_inertia + 9 * b);
    grit_m3_mult(Iw, Iw, R);
    grit_m3_mulv(Iwo, Iw, tw);
    T += 0.5 * (m->body_mass[b] * grit_v3_dot(vc, vc) + grit_v3_dot(tw, Iwo));
  }
  const double *v = grit_data_qvel(d);
  for (int i = 0; i < m->nv; ++i) T += 0.5 * m->dof_armature[i] * v[i] * v[i];
  return T;
}

/* The potential energy: gravity -sum m g.com plus the joint springs 1/2 k (q - q_ref)^2. */
static inline double tu_potential(grit_data *d) {
  const grit_model *m = grit_data_model(d);
  cr_assert_eq(grit_forward_kinematics(d), GRIT_OK);
  const grit_options o = grit_model_options(m);
  const double *q = grit_data_qpos(d);
  double V = 0.0;
  for (int b = 1; b < m->nbody; ++b) {
    double c[3];
    grit_body_com(d, b, c);
    V -= m->body_mass[b] * grit_v3_dot(o.gravity, c);
  }
  for (int j = 0; j < m->njnt; ++j) {
    const int t = m->jnt_type[j];
    if (t != GRIT_JOINT_HINGE && t != GRIT_JOINT_SLIDE) continue;
    const double x = q[m->jnt_qposadr[j]] - m->jnt_springref[j];
    V += 0.5 * m->jnt_stiffness[j] * x * x;
  }
  return V;
}

typedef struct tu_momentum_result {
  double drift;    /* max |L(t) - L0| / |L0| over 2 s */
  double qnorm;    /* max ||q| - 1| */
  double linear;   /* max |v_lin(t) - v_lin(0)| */
} tu_momentum_result;

/* ------------------------------------------------------------------- free-body momentum run */

/* An asymmetric body (principal moments 0.1, 0.2, 0.25 kg m^2 on rotated axes) with its centre of mass
 * at the body origin, free in zero gravity, started at angular velocity w (body frame). */
static inline tu_momentum_result tu_free_body_run(const double w[3], double dt) {
  grit_builder *b;
  grit_builder_create(&b);
  grit_options o = grit_default_options();
  o.timestep = dt;
  memset(o.gravity, 0, sizeof o.gravity);
  grit_builder_set_options(b, &o);
  grit_body_def bd = grit_default_body_def();
  bd.mass = 2.0;
  const double diag[3] = {0.1, 0.2, 0.25}, axes[4] = {0.9, 0.3, -0.2, 0.25};
  grit_inertia_from_principal(bd.inertia, diag, axes);
  grit_builder_add_body(b, &bd, NULL);
  grit_joint_def jd = grit_default_joint_def();
  jd.type = GRIT_JOINT_FREE;
  grit_builder_add_joint(b, 1, &jd, NULL);
  grit_model *m;
  cr_assert_eq(grit_builder_compile(b, &m), GRIT_OK);
  grit_builder_free(b);
  grit_data *d = tu_data(m);
  double q[7] = {0, 0, 0, 0.6, -0.3, 0.5, 0.4}, v[6] = {0.1, -0.2, 0.3, w[0], w[1], w[2]};
  grit_data_set_qpos(d, q, 7);
  grit_data_set_qvel(d, v, 6);
  const double *I = bd.inertia;
  double L0[3], Lb[3];
  grit_m3_mulv(Lb, I, w);
  grit_quat_rotate(L0, grit_data_qpos(d) + 3, Lb);
  tu_momentum_result r = {0, 0, 0};
  const long n = lround(2.0 / dt);
  for (long k = 0; k < n; ++k) {
    cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
    const double *qq = grit_data_qpos(d) + 3, *vv = grit_data_qvel(d);
    double L[3], dL[3];
    grit_m3_mulv(Lb, I, vv + 3);
    grit_quat_rotate(L, qq, Lb);
    grit_v3_sub(dL, L, L0);
    r.drift = fmax(r.drift, grit_v3_norm(dL) / grit_v3_norm(L0));
    r.qnorm = fmax(r.qnorm, fabs(sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]) - 1));
    for (int i = 0; i < 3; ++i) r.linear = fmax(r.linear, fabs(vv[i] - v[i]));
  }
  grit_data_free(d);
  grit_model_free(m);
  return r;
}

/* ------------------------------------------------------------------------------- dense algebra */

static inline double tu_max_abs(const double *a, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s = fmax(s, fabs(a[i]));
  return s;
}

static inline double tu_max_abs_diff(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s = fmax(s, fabs(a[i] - b[i]));
  return s;
}

/* Cholesky of a dense symmetric n x n matrix (copied); returns the smallest pivot d_jj (the matrix is
 * positive definite iff it is > 0), or -1 if a pivot is not positive. */
static inline double tu_cholesky_min_pivot(const double *A, int n) {
  double *L = malloc(sizeof(double) * (size_t)(n * n + 1)), mn = INFINITY;
  memcpy(L, A, sizeof(double) * (size_t)(n * n));
  for (int j = 0; j < n; ++j) {
    double dd = L[j * n + j];
    for (int k = 0; k < j; ++k) dd -= L[j * n + k] * L[j * n + k];
    if (!(dd > 0)) {
      free(L);
      return -1;
    }
    mn = fmin(mn, dd);
    dd = sqrt(dd);
    L[j * n + j] = dd;
    for (int i = j + 1; i < n; ++i) {
      double s = L[i * n + j];
      for (int k = 0; k < j; ++k) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / dd;
    }
  }
  free(L);
  return mn;
}

/* Solves A x = b (dense n x n, Gaussian elimination with partial pivoting); A and b are copied. */
static inline void tu_solve(const double *A, const double *b, double *x, int n) {
  double *a = malloc(sizeof(double) * (size_t)(n * (n + 1) + 1));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a[i * (n + 1) + j] = A[i * n + j];
    a[i * (n + 1) + n] = b[i];
  }
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int i = c + 1; i < n; ++i)
      if (fabs(a[i * (n + 1) + c]) > fabs(a[p * (n + 1) + c])) p = i;
    for (int j = 0; j <= n; ++j) {
      double t = a[c * (n + 1) + j];
      a[c * (n + 1) + j] = a[p * (n + 1) + j];
      a[p * (n + 1) + j] = t;
    }
    for (int i = c + 1; i < n; ++i) {
      double f = a[i * (n + 1) + c] / a[c * (n + 1) + c];
      for (int j = c; j <= n; ++j) a[i * (n + 1) + j] -= f * a[c * (n + 1) + j];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = a[i * (n + 1) + n];
    for (int j = i + 1; j < n; ++j) s -= a[i * (n + 1) + j] * x[j];
    x[i] = s / a[i * (n + 1) + i];
  }
  free(a);
}

/* Loading the MJCF text fails with status `want` and a message containing `part`, and gives no model. */
static inline void tu_expect_load_error(const char *xml, grit_status want, const char *part) {
  grit_model *m = NULL;
  char msg[GRIT_MESSAGE_SIZE];
  const grit_status s = grit_mjcf_load_string(xml, &m, NULL, msg);
  cr_assert_eq(s, want, "status %d for: %s (%s)", (int)s, xml, msg);
  cr_assert(strstr(msg, part), "message '%s' lacks '%s'", msg, part);
  cr_assert_null(m);
}

#ifdef GRIT_SOURCE_DIR
/* A model file of the repository (`rel`: its path below the source tree), loaded, its data made (with the
 * file's step settings when `settings`) and stepped `steps` times; the model in *m. */
static inline grit_data *tu_file_stepped(const char *rel, int steps, int settings, grit_model **m) {
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE], path[1024];
  snprintf(path, sizeof path, "%s/%s", GRIT_SOURCE_DIR, rel);
  cr_assert_eq(grit_mjcf_load_file(path, m, &info, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  if (settings) cr_assert_eq(grit_data_set_step_settings(d, &info.settings), GRIT_OK);
  grit_mjcf_info_free(&info);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}
#endif

#endif /* GRIT_TEST_UTIL_H */
