/* SPDX-License-Identifier: Apache-2.0 */
/* xml_load_util.h — the tests' model from an MJCF string, the test failing with the loader's message if
 * it does not load (the load-assert-free-info lines each such test had written out); a data moving with
 * controls set, for the derivative tests; a star-shaped big tree, for the sparse factor's tests. */
#ifndef GRIT_TESTS_XML_LOAD_UTIL_H
#define GRIT_TESTS_XML_LOAD_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grit/grit.h"

static inline grit_model *xml_load_or_fail(const char *xml) {
  grit_model *m = NULL;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, &m, &info, msg), GRIT_OK, "%s", msg);
  grit_mjcf_info_free(&info);
  return m;
}

/* A data of the model in xml (or, xml NULL, the file at path; *m gets the model) solved to rel_tol 1e-10,
 * with controls 0.4 sin(0.9 i + 0.3), velocities vel_amp sin(1.3 i + 0.4) (moving: velocity-dependent
 * partials are not zero), after `steps` steps. */
static inline grit_data *moving_data(const char *xml, const char *path, grit_model **m, double vel_amp, int steps) {
  char msg[GRIT_MESSAGE_SIZE];
  if (xml) cr_assert_eq(grit_mjcf_load_string(xml, m, NULL, msg), GRIT_OK, "%s", msg);
  else cr_assert_eq(grit_mjcf_load_file(path, m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nu = grit_model_nu(*m), nv = grit_model_nv(*m);
  double *x = calloc((size_t)(nu + nv) + 1, sizeof(double));
  for (int i = 0; i < nu; ++i) x[i] = 0.4 * sin(0.9 * i + 0.3);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, x, nu), GRIT_OK);
  for (int i = 0; i < nv; ++i) x[i] = vel_amp * sin(1.3 * i + 0.4);
  cr_assert_eq(grit_data_set_qvel(d, x, nv), GRIT_OK);
  free(x);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

/* A floating root with `leaves` one-dof slide bodies (MuJoCo's softbox in small: one tree of 6 + leaves
 * dofs). */
static inline grit_model *star_tree(int leaves) {
  char *xml = malloc(160 * (size_t)leaves + 512), *p = xml;
  p += sprintf(p, "<mujoco><worldbody><body><freejoint/><geom type='sphere' size='0.05'/>");
  for (int i = 0; i < leaves; ++i)
    p += sprintf(p, "<body pos='%g %g 0'><joint type='slide' axis='1 0 0'/><geom type='sphere' size='0.01'/></body>",
                 cos(0.1 * i), sin(0.1 * i));
  p += sprintf(p, "</body></worldbody></mujoco>");
  grit_model *m = xml_load_or_fail(xml);
  free(xml);
  cr_assert_eq(grit_model_ntree(m), 1);
  return m;
}

/* The star trees' tests' random numbers in [-1, 1) (a linear congruential generator: the same on every
 * platform). */
static inline double star_urand(unsigned *s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* H: the root block and root-leaf entries, leaves coupled in a ring and to the leaves up to `band` after
 * them (a band: elimination leaves cliques, nested columns), a clique of leaves c0 .. c1-1; SPD. (band 1: the
 * ring alone.) */
static inline void star_h(int n, int band, int c0, int c1, unsigned *seed, double *H) {
  memset(H, 0, sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) {
      const int ring = j >= 6 && (i - j <= band || (j == 6 && i == n - 1));
      const int clique = i >= c0 && i < c1 && j >= c0;
      if (j < 6 || ring || clique) H[i * n + j] = H[j * n + i] = 0.3 * star_urand(seed);
    }
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += fabs(H[i * n + j]);
    H[i * n + i] = s + 0.1 + fabs(star_urand(seed));
  }
}

/* A data of the model in xml (*m gets it) under the given contact model, solved to rel_tol 1e-10, with
 * controls 0.3, -0.2, 0.5, 0.1 then zeros (up to 8), velocities vel_amp sin(1.3 i + 0.4) (moving: the
 * velocity products matter), after `steps` steps: the derivative tests' scenes per contact model. */
static inline grit_data *moving_data_model(const char *xml, grit_model **m, grit_contact_model model, double vel_amp,
                                           int steps) {
  char msg[GRIT_MESSAGE_SIZE];
  cr_assert_eq(grit_mjcf_load_string(xml, m, NULL, msg), GRIT_OK, "%s", msg);
  grit_data *d;
  cr_assert_eq(grit_data_create(*m, &d), GRIT_OK);
  grit_step_settings s = grit_default_step_settings();
  s.contact_model = model;
  s.rel_tol = 1e-10;
  cr_assert_eq(grit_data_set_step_settings(d, &s), GRIT_OK);
  const int nu = grit_model_nu(*m), nv = grit_model_nv(*m);
  const double u[8] = {0.3, -0.2, 0.5, 0.1};
  cr_assert_leq(nu, 8);
  if (nu) cr_assert_eq(grit_data_set_ctrl(d, u, nu), GRIT_OK);
  double *v = calloc((size_t)nv + 1, sizeof(double));
  for (int i = 0; i < nv; ++i) v[i] = vel_amp * sin(1.3 * i + 0.4);
  cr_assert_eq(grit_data_set_qvel(d, v, nv), GRIT_OK);
  free(v);
  for (int i = 0; i < steps; ++i) cr_assert_eq(grit_step(d), GRIT_OK, "%s", grit_data_last_error(d));
  return d;
}

#endif
