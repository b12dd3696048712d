/* SPDX-License-Identifier: Apache-2.0 */
/* scene_replay.c — the examples' --html FILE option (scene_replay.h). */
#include "scene_replay.h"

#include <stdio.h>
#include <string.h>

int scene_html_option(int argc, char **argv, int i, void *ctx) {
  if (strcmp(argv[i], "--html") || i + 1 >= argc) return 0;
  *(const char **)ctx = argv[i + 1];
  return 2;
}

void scene_replay_begin(scene_replay *sr, const char *path, const grit_data *d, const char *title) {
  sr->r = NULL;
  sr->failed = 0;
  if (!path) return;
  if (grit_replay_create(grit_data_model(d), &sr->r) != GRIT_OK) {
    sr->failed = 1;
    return;
  }
  grit_replay_set_title(sr->r, title);
  if (grit_replay_add_data(sr->r, d, 0) != GRIT_OK) sr->failed = 1;
}

void scene_replay_frame(scene_replay *sr, const grit_data *d) {
  if (sr->r && !sr->failed && grit_replay_add_data(sr->r, d, 1) != GRIT_OK) sr->failed = 1;
}

int scene_replay_end(scene_replay *sr, const char *prog, const char *path) {
  int rc = 0;
  if (path && (sr->failed || !sr->r || grit_replay_write_html(sr->r, path) != GRIT_OK)) {
    fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, sr->r ? grit_replay_last_error(sr->r) : "out of memory");
    rc = 1;
  }
  grit_replay_free(sr->r);
  sr->r = NULL;
  return rc;
}
