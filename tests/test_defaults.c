/* SPDX-License-Identifier: Apache-2.0 */
/* test_defaults.c — grit/defaults.h: the defaults under the naming rule grit_<module>_default_<thing>
 * give what the older names give (field by field: the structs' padding is not compared). */
#include <criterion/criterion.h>
#include <string.h>

#include "grit/grit.h"

#define SAME(a, b, field) cr_assert(!memcmp(&(a).field, &(b).field, sizeof (a).field), #field)

Test(defaults, new_names_equal_the_old_ones) {
  const grit_body_def b1 = grit_model_default_body_def(), b0 = grit_default_body_def();
  SAME(b1, b0, parent); SAME(b1, b0, pos); SAME(b1, b0, quat); SAME(b1, b0, mass); SAME(b1, b0, com);
  SAME(b1, b0, inertia);
  const grit_joint_def j1 = grit_model_default_joint_def(), j0 = grit_default_joint_def();
  SAME(j1, j0, type);
  const grit_actuator_def a1 = grit_model_default_actuator_def(), a0 = grit_default_actuator_def();
  SAME(a1, a0, joint);
  const grit_geom_def g1 = grit_model_default_geom_def(), g0 = grit_default_geom_def();
  SAME(g1, g0, body); SAME(g1, g0, shape);
  const grit_options o1 = grit_model_default_options(), o0 = grit_default_options();
  SAME(o1, o0, timestep); SAME(o1, o0, gravity); SAME(o1, o0, contact_margin);
  const grit_step_settings s1 = grit_step_default_settings(), s0 = grit_default_step_settings();
  SAME(s1, s0, contact_model); SAME(s1, s0, rel_tol); SAME(s1, s0, max_newton_iters); SAME(s1, s0, dense_max_nv);
  const grit_fit_options f1 = grit_sysid_default_fit_options(), f0 = grit_default_fit_options();
  SAME(f1, f0, segment_steps); SAME(f1, f0, fit_initial_states); SAME(f1, f0, settings.rel_tol);
  const grit_site_def si1 = grit_constraints_default_site_def(), si0 = grit_default_site_def();
  SAME(si1, si0, body); SAME(si1, si0, pos);
  const grit_equality_def e1 = grit_constraints_default_equality_def(), e0 = grit_default_equality_def();
  SAME(e1, e0, type); SAME(e1, e0, obj1); SAME(e1, e0, polycoef); SAME(e1, e0, solref);
  const grit_tendon_def t1 = grit_constraints_default_tendon_def(), t0 = grit_default_tendon_def();
  SAME(t1, t0, type); SAME(t1, t0, springlength); SAME(t1, t0, solreflimit); SAME(t1, t0, limit_width);
  const grit_load_options l1 = grit_load_default_options(), l0 = grit_default_load_options();
  SAME(l1, l0, mjcf.timestep); SAME(l1, l0, urdf.floating_base);
}
