/* SPDX-License-Identifier: Apache-2.0 */
/* loop_scene.h — one model with every kind of coupling row, shared by the tests of those rows
 * (test_cx_columns.c, test_derivatives_chain.c, test_derivatives_simd.c; header-only, test code): two
 * hinge chains and a free box on a floor, a connect across trees and a weld in a tree, a joint and a tendon
 * coupling, a wrapped spatial tendon with a spring, limit and damping, a plain spatial and a fixed tendon
 * with friction loss. */
#ifndef GRIT_TEST_LOOP_SCENE_H
#define GRIT_TEST_LOOP_SCENE_H

#define LOOP_SCENE_BODY                                                                                     \
  "<mujoco><option timestep='0.002'/>"                                                                      \
  "<worldbody><geom type='plane' size='3 3 0.1'/>"                                                          \
  " <body name='a1' pos='0 0 1'><joint name='ja1' type='hinge' axis='0 1 0'/>"                              \
  "  <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/><site name='sa1' pos='0.3 0 0'/>"             \
  "  <body name='a2' pos='0.3 0 0'><joint name='ja2' type='hinge' axis='0 1 0.2'/>"                         \
  "   <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03'/><site name='sa2' pos='0.3 0 0'/>"            \
  "   <body name='a3' pos='0.3 0 0'><joint name='ja3' type='ball'/>"                                        \
  "    <geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.03'/><site name='sa3' pos='0.2 0 0'/></body>"    \
  "  </body></body>"                                                                                        \
  " <body name='b1' pos='0 0.5 1'><joint name='jb1' type='hinge' axis='1 0 0'/>"                            \
  "  <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03'/><site name='sb1' pos='0 0 -0.3'/>"           \
  "  <geom name='drum' type='sphere' pos='0 -0.2 -0.15' size='0.05' contype='0' conaffinity='0'/>"          \
  "  <body name='b2' pos='0 0 -0.3'><joint name='jb2' type='slide' axis='0 0 1' range='-0.1 0.1'/>"         \
  "   <geom type='box' size='0.05 0.05 0.05'/><site name='sb2' pos='0 0 -0.05'/></body></body>"             \
  " <body name='c' pos='0.6 0.3 0.9'><freejoint/><geom type='box' size='0.05 0.05 0.05'/>"                  \
  "  <site name='sc' pos='0 0 0.05'/></body>"                                                               \
  "</worldbody>"                                                                                            \
  "<tendon><spatial name='t1' stiffness='50' damping='1' limited='true' range='0 0.9'>"                     \
  "  <site site='sa1'/><geom geom='drum'/><site site='sb2'/></spatial>"                                     \
  " <spatial name='t2'><site site='sa3'/><site site='sc'/></spatial>"                                       \
  " <fixed name='t3' frictionloss='0.05'><joint joint='ja1' coef='1'/><joint joint='jb1' coef='-0.5'/></fixed>" \
  "</tendon>"                                                                                               \
  "<equality><connect body1='a3' body2='c' anchor='0.2 0 0'/><weld body1='a2' body2='a3'/>"                 \
  " <joint joint1='ja1' joint2='jb1' polycoef='0 0.5 0 0 0'/><tendon tendon1='t2'/></equality>"

/* The model without actuators, and with two motors (ja1, jb2) so that B has columns. */
#define LOOP_SCENE_XML LOOP_SCENE_BODY "</mujoco>"
#define LOOP_SCENE_XML_MOTORS LOOP_SCENE_BODY "<actuator><motor joint='ja1'/><motor joint='jb2'/></actuator></mujoco>"

#endif
