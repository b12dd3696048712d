/* SPDX-License-Identifier: Apache-2.0 */
/* test_derivatives_kin_skip.c — position passes that leave a tree's dual kinematics out (w->kskip,
 * derivatives_residual.c): a rigid tree whose smooth dynamics and fluid forces come from
 * derivatives_rnea.c and fluid_partials.c, that no contact touches, in a model whose tendons and tendon
 * actuators are fixed. A and B (dense and block form) against the passes that form them
 * (ws->no_kin_skip), entry by entry; which trees skipped; and against central differences. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data_internal.h"
#include "derivatives_internal.h"
#include "fd_tangent.h"
#include "grit/grit.h"
#include "grit/mjcf.h"
#include "xml_load_util.h"

/* Two trees in a viscous fluid under gravity: a free swimmer (a torso, a two-hinge fin with a spring, a
 * tail on a fixed tendon's servo) high above the floor, and a box resting on the floor (contacts). */
static const char *TWO =
    "<mujoco><option timestep='0.002' density='900' viscosity='0.2'/>"
    "<worldbody><geom type='plane' size='3 3 0.1'/>"
    "<body pos='0 0 3'><freejoint/><geom type='ellipsoid' size='0.1 0.04 0.03' pos='0.01 0 0' mass='0.6'/>"
    " <body pos='0.1 0 0'><joint name='f1' type='hinge' axis='0 1 0' stiffness='0.3'/>"
    "  <joint name='f2' type='hinge' pos='0.01 0 0' axis='1 0 0.2' damping='0.01'/>"
    "  <geom type='box' size='0.05 0.03 0.003' pos='0.05 0 0' mass='0.05'/></body>"
    " <body pos='-0.1 0 0'><joint name='t1' type='hinge' axis='0 0 1'/>"
    "  <geom type='box' size='0.06 0.02 0.004' pos='-0.06 0 0' mass='0.06'/></body></body>"
    "<body pos='1 0 0.05'><freejoint/><geom type='box' size='0.1 0.1 0.05' mass='1'/></body>"
    "</worldbody>"
    "<tendon><fixed name='ft'><joint joint='f1' coef='0.5'/><joint joint='t1' coef='-0.5'/></fixed></tendon>"
    "<actuator><position tendon='ft' kp='0.4'/><position joint='t1' kp='0.2'/><motor joint='f2' gear='0.1'/></actuator>"
    "</mujoco>";

static grit_data *load(const char *xml, const char *path, grit_model **m) {
  return moving_data(xml, path, m, 0.3, 40); /* moving: the fluid's partials are not zero */
}

/* A, B dense and by blocks with and without the skip, equal entry by entry; the trees that skipped
 * (want: a mask of trees, bit t); and against central differences (fd_bound: the smooth models' 1e-6; a
 * resting contact's stiff law and the step's tolerance give the differences more). */
static void check(const char *xml, const char *path, const char *name, unsigned want, double fd_bound) {
  grit_model *m;
  grit_data *d = load(xml, path, &m);
  const int nu = grit_model_nu(m), nx = 2 * grit_model_nv(m), nt = m->ntree;
  double *A[4], *B[4];
  for (int k = 0; k < 4; ++k) A[k] = calloc((size_t)nx * nx, sizeof(double)), B[k] = calloc((size_t)nx * nu + 1, sizeof(double));
  grit_jacobian_blocks *J;
  cr_assert_eq(grit_jacobian_blocks_create(m, &J), GRIT_OK);
  for (int k = 0; k < 2; ++k) {
    d->deriv->no_kin_skip = k;
    cr_assert_eq(grit_step_derivatives(d, A[2 * k], nu ? B[2 * k] : NULL, NULL, 0, NULL), GRIT_OK, "%s", grit_data_last_error(d));
    unsigned got = 0;
    for (int t = 0; t < nt; ++t) got |= (unsigned)(d->deriv->kskip[t] != 0) << t;
    cr_expect_eq(got, k ? 0u : want, "%s: trees skipped %#x, expected %#x", name, got, k ? 0u : want);
    cr_assert_eq(grit_step_derivatives_blocks(d, J), GRIT_OK, "%s", grit_data_last_error(d));
    grit_jacobian_blocks_to_dense(J, A[2 * k + 1], nu ? B[2 * k + 1] : NULL);
  }
  d->deriv->no_kin_skip = 0;
  int differ = 0;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < nx * nx; ++i) differ += A[k][i] != A[k + 2][i];
    for (int i = 0; i < nx * nu; ++i) differ += B[k][i] != B[k + 2][i];
  }
  cr_expect_eq(differ, 0, "%s: %d entries differ", name, differ);
  const double fd = fdt_check(d, 1e-6);
  cr_log_info("%s: trees skipped %#x, entries that differ %d, central differences %.3g", name, want, differ, fd);
  cr_expect(fd < fd_bound, "%s: central differences %.3g", name, fd);
  for (int k = 0; k < 4; ++k) free(A[k]), free(B[k]);
  grit_jacobian_blocks_free(J);
  grit_data_free(d);
  grit_model_free(m);
}

Test(derivatives_kin_skip, two_trees_one_in_contact) {
  grit_model *m;
  grit_data *d = load(TWO, NULL, &m);
  cr_assert(grit_data_ncontacts(d) >= 1, "the box rests on the floor");
  cr_assert_eq(m->ntree, 2);
  grit_data_free(d);
  grit_model_free(m);
  check(TWO, NULL, "two trees", 1u, 1e-5);
}
Test(derivatives_kin_skip, fish_file) { check(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/fish.xml", "fish", 1u, 1e-6); }
Test(derivatives_kin_skip, swimmer_file) {
  check(NULL, GRIT_SOURCE_DIR "/tests/models/dm_control_suite/swimmer.xml", "swimmer", 1u, 1e-6);
}
