/* SPDX-License-Identifier: Apache-2.0 */
/* push_box_scene.h — the finger-pushes-box scene of examples/mpc_push.c and tests/test_ilqr_smoothing.c:
 * a 2 cm sphere on two force-controlled horizontal slides (x, then y; 0.2 kg per stage, ±20 N, some
 * damping) and a free 10 cm, 0.5 kg box resting on the ground at the origin; every geometry has
 * friction mu. Time step 20 ms. State: finger x, y, box position (3) and quaternion (4); then the
 * velocities (finger 2, box linear 3, angular 3). */
#ifndef GRIT_EXAMPLES_PUSH_BOX_SCENE_H
#define GRIT_EXAMPLES_PUSH_BOX_SCENE_H

#include "grit/grit.h"

#define PUSH_BOX_HALF 0.05   /* m */
#define PUSH_FINGER_R 0.02   /* m */
#define PUSH_FORCE_MAX 20.0  /* N per finger axis */
#define PUSH_BOX_Q 2         /* the box's free joint in q */

/* The scene with the finger's surface `gap` behind the box's -x face (0: touching), at the box's
 * mid-height, finger_y off its centre line. Returns NULL with the reason in msg. */
grit_model *push_box_build(double mu, double gap, double finger_y, char msg[GRIT_MESSAGE_SIZE]);

/* The box's yaw (rad) from its quaternion (w, x, y, z). */
double push_box_yaw(const double *quat);

#endif
