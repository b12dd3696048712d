/* SPDX-License-Identifier: Apache-2.0 */
/* scene_replay.h — the examples' --html FILE option: the run as one replay page (docs/viewer.md). */
#ifndef GRIT_EXAMPLES_SCENE_REPLAY_H
#define GRIT_EXAMPLES_SCENE_REPLAY_H

#include "grit/grit.h"
#include "grit/replay.h"

/* A scene_extra_option (scenes.h) for --html FILE; ctx is a const char ** that receives FILE. */
int scene_html_option(int argc, char **argv, int i, void *ctx);
#define SCENE_HTML_USAGE " [--html FILE]"

typedef struct scene_replay {
  grit_replay *r; /* NULL: no page asked for */
  int failed;     /* a frame could not be added (reported by scene_replay_end) */
} scene_replay;

/* Starts a page when path is not NULL, with d's current state as its first frame. */
void scene_replay_begin(scene_replay *sr, const char *path, const grit_data *d, const char *title);
/* Adds d's state after a step, with the step's contacts and Newton iterations. */
void scene_replay_frame(scene_replay *sr, const grit_data *d);
/* Writes the page (if one was started) and frees it. Returns 0, or 1 after a one-line error on stderr. */
int scene_replay_end(scene_replay *sr, const char *prog, const char *path);

#endif
