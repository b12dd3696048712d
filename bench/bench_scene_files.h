/* SPDX-License-Identifier: Apache-2.0 */
/* bench_scene_files — the generated MJCF scenes that bench_mujoco and bench_states share: written once
 * here so that both programs step the same files. */
#ifndef GRIT_BENCH_SCENE_FILES_H
#define GRIT_BENCH_SCENE_FILES_H
#include <stdio.h>

/* A clutter of n objects (n = 10 s^2): s x s columns of 10 levels, spheres and boxes of 10 cm
 * alternating, in cells of 40 x 40 cm inside an open box (floor and four walls); s = 2 is
 * examples/models/clutter.xml's layout; contact stiffness kstiff (1e7: the paper's; 1e5: soft, settling
 * slowly). Writes to f and closes it; returns nonzero if n is not 10 s^2 or the write fails. */
int bench_write_clutter(FILE *f, int n, double kstiff);

/* A pile of n boxes (10 cm, 1 kg) in layers of 5 x 5, each box 1 mm from its neighbours, so that every
 * box is a candidate of its neighbours' from the start: one island of n trees as they settle. Writes to f
 * and closes it; returns nonzero if the write fails. */
int bench_write_pile(FILE *f, int n);

#endif
