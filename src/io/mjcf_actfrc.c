/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_actfrc.c — a joint's actuatorfrcrange (MuJoCo 3's clamp of the total actuator force on a joint,
 * newer than 2.2.2, common in newer robot files). grit clamps each actuator's own force, so the joint's
 * clamp is folded exactly into its one actuator's force range: with gear g, g clamp(f, r) clamped to
 * [lo, hi] is g clamp(f, r ∩ [lo, hi] / g) (an empty intersection: the bound of [lo, hi] / g nearest r).
 * A joint moved by several actuators (its clamp acts on their sum) is unsupported. docs/mjcf.md. */
#include <string.h>

#include "grit/constraints.h"
#include "mjcf_internal.h"

/* Whether a joint of body jb moves body b (jb is b or one of its ancestors). */
static int moves_body(const mjcf_ctx *c, int jb, int b) {
  const mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  for (; b > 0; b = B[b].parent)
    if (b == jb) return 1;
  return 0;
}

static int moves_site(const mjcf_ctx *c, int jb, const char *name) {
  for (int i = 0; name && i < c->sites.n; ++i) {
    const mjcf_site *s = MJCF_AT(c->sites, mjcf_site, i);
    if (s->name && !strcmp(s->name, name)) return moves_body(c, jb, s->body);
  }
  return 0;
}

static int moves_geom(const mjcf_ctx *c, int jb, const char *name) {
  for (int i = 0; name && i < c->geoms.n; ++i) {
    const mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, i);
    if (g->name && !strcmp(g->name, name)) return moves_body(c, jb, g->body);
  }
  return 0;
}

/* Whether tendon `name` can move joint J: a fixed tendon over it, or a spatial tendon through a site or
 * around a geometry on a body the joint moves. */
static int tendon_moves(const mjcf_ctx *c, const mjcf_joint *J, const char *name) {
  for (int i = 0; i < c->tendons.n; ++i) {
    const mjcf_tendon *t = MJCF_AT(c->tendons, mjcf_tendon, i);
    if (!t->name || strcmp(t->name, name)) continue;
    for (int k = 0; k < t->n; ++k) {
      const int fixed = t->type == GRIT_TENDON_FIXED;
      if (fixed && t->obj[k] && J->name && !strcmp(t->obj[k], J->name)) return 1;
      if (!fixed && (moves_site(c, J->body, t->obj[k]) || moves_geom(c, J->body, t->geom[k]))) return 1;
    }
  }
  return 0;
}

/* Whether an actuator other than A acts on joint J. */
static int shared(const mjcf_ctx *c, const mjcf_actuator *A, const mjcf_joint *J) {
  for (int a = 0; a < c->acts.n; ++a) {
    const mjcf_actuator *O = MJCF_AT(c->acts, mjcf_actuator, a);
    if (O == A || !O->supported) continue;
    if (O->joint && J->name && !strcmp(O->joint, J->name)) return 1;
    if (O->tendon && tendon_moves(c, J, O->tendon)) return 1;
    if (O->cranksite && (moves_site(c, J->body, O->cranksite) || moves_site(c, J->body, O->slidersite))) return 1;
    if (O->site && moves_site(c, J->body, O->site)) return 1;
    if (O->body) return 1; /* adhesion: its contacts' partners are not known before the step */
  }
  return 0;
}

void mjcf_actfrc_apply(mjcf_ctx *c, const mjcf_actuator *A, const mjcf_joint *J, grit_actuator_def *d) {
  const int limited = mjcf_resolve_limited(c, J->actfrclimited, J->actfrcrange, "joint", J->file, J->line,
                                           "actuatorfrc");
  if (!limited || c->status != GRIT_OK || d->gear == 0.0) return;
  if (shared(c, A, J)) {
    mjcf_node at;
    memset(&at, 0, sizeof at);
    at.name = "joint", at.file = J->file, at.line = J->line;
    mjcf_unsupported(c, &at, "actuatorfrcrange (newer than MuJoCo 2.2.2) on a joint that several actuators move: "
                             "grit clamps each actuator's force, not their sum");
    return;
  }
  const double g = d->gear;
  double lo = J->actfrcrange[0] / g, hi = J->actfrcrange[1] / g;
  if (g < 0) {
    const double t = lo;
    lo = hi, hi = t;
  }
  if (!d->force_limited) {
    d->force_limited = 1, d->force_range[0] = lo, d->force_range[1] = hi;
    return;
  }
  const double a = d->force_range[0] > lo ? d->force_range[0] : lo, b = d->force_range[1] < hi ? d->force_range[1] : hi;
  if (a <= b) {
    d->force_range[0] = a, d->force_range[1] = b;
  } else { /* disjoint: every clamped force lands on the joint's bound nearest the actuator's range */
    const double v = d->force_range[0] > hi ? hi : lo;
    d->force_range[0] = d->force_range[1] = v;
  }
}
