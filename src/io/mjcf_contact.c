/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_contact.c — the <contact> section: <exclude body1 body2> (the two bodies never collide) and
 * <pair geom1 geom2> (the two geometries may always collide, whatever the other filters), given to grit's
 * builder as excluded body pairs and explicit geometry pairs. The other filters of MuJoCo (welded
 * bodies, parent and child, contype/conaffinity) are the model's own (grit_geom_pair_allowed), and
 * <option><flag filterparent="disable"> turns the parent filter off. */
#include <stdio.h>
#include <string.h>

#include "mjcf_internal.h"

void mjcf_read_contact(mjcf_ctx *c, const mjcf_node *n) {
  mjcf_finish(c, n);
  for (const mjcf_node *e = n->child; e && c->status == GRIT_OK; e = e->next) {
    const int ex = !strcmp(e->name, "exclude"), pair = !strcmp(e->name, "pair");
    if (!ex && !pair) {
      mjcf_unsupported(c, e, "element is not supported");
      continue;
    }
    mjcf_contact *k = mjcf_push(c, ex ? &c->excludes : &c->pairs, sizeof *k);
    if (!k) return;
    k->line = e->line, k->file = e->file;
    k->a = mjcf_attr(e, ex ? "body1" : "geom1");
    k->b = mjcf_attr(e, ex ? "body2" : "geom2");
    mjcf_mark(e, "name");
    if (pair) {
      /* MuJoCo's soft-contact parameters of the pair: grit's contact model takes the geometries' own */
      static const char *const own[] = {"friction", "condim", "solref", "solimp", "solreffriction", "margin", "gap"};
      int given = 0;
      for (int i = 0; i < 7; ++i) given |= mjcf_attr(e, own[i]) != NULL;
      mjcf_mark(e, "class");
      if (given) mjcf_warn(c, e, "a pair's own friction, condim, solref, solimp, margin and gap are not used: grit "
                                 "combines the two geometries' parameters");
    }
    mjcf_finish(c, e);
    if (!k->a || !k->b)
      mjcf_fail(c, GRIT_ERR_INVALID_MODEL, e, "attributes '%s' and '%s' are required", ex ? "body1" : "geom1",
                ex ? "body2" : "geom2");
  }
}

static void fail_line(mjcf_ctx *c, const mjcf_contact *k, const char *element, const char *what, const char *name) {
  mjcf_node n;
  memset(&n, 0, sizeof n);
  n.name = element, n.file = k->file, n.line = k->line;
  mjcf_fail(c, GRIT_ERR_INVALID_MODEL, &n, "%s '%.100s'", what, name);
}

static int find_geom(const mjcf_ctx *c, const char *name) {
  for (int i = 0; i < c->geoms.n; ++i) {
    const mjcf_geom *g = MJCF_AT(c->geoms, mjcf_geom, i);
    if (g->name && !strcmp(g->name, name)) return i;
  }
  return -1;
}

static int find_body(const mjcf_ctx *c, const char *name) {
  if (!strcmp(name, "world")) return 0;
  for (int i = 1; i < c->bodies.n; ++i) {
    const mjcf_body *b = MJCF_AT(c->bodies, mjcf_body, i);
    if (b->name && !strcmp(b->name, name)) return i;
  }
  return -1;
}

void mjcf_mark_pairs(mjcf_ctx *c) {
  for (int i = 0; i < c->pairs.n && c->status == GRIT_OK; ++i) {
    const mjcf_contact *k = MJCF_AT(c->pairs, mjcf_contact, i);
    const int g1 = find_geom(c, k->a), g2 = find_geom(c, k->b);
    if (g1 < 0 || g2 < 0) fail_line(c, k, "pair", "unknown geom", g1 < 0 ? k->a : k->b);
    else if (g1 == g2) fail_line(c, k, "pair", "a geom cannot pair with itself:", k->a);
    else MJCF_AT(c->geoms, mjcf_geom, g1)->in_pair = MJCF_AT(c->geoms, mjcf_geom, g2)->in_pair = 1;
  }
}

void mjcf_add_contact_filters(mjcf_ctx *c, grit_builder *gb) {
  grit_status s = grit_builder_set_filter_parent(gb, !c->no_filter_parent);
  const mjcf_body *B = MJCF_AT(c->bodies, mjcf_body, 0);
  for (int i = 0; i < c->excludes.n && c->status == GRIT_OK && s == GRIT_OK; ++i) {
    const mjcf_contact *k = MJCF_AT(c->excludes, mjcf_contact, i);
    int b[2] = {find_body(c, k->a), find_body(c, k->b)};
    if (b[0] < 0 || b[1] < 0) {
      fail_line(c, k, "exclude", "unknown body", b[0] < 0 ? k->a : k->b);
      return;
    }
    for (int j = 0; j < 2; ++j) { /* a folded body's geometries are its parent's: so is the exclusion */
      if (B[b[j]].folded_into >= 0) {
        mjcf_node n;
        memset(&n, 0, sizeof n);
        n.name = "exclude", n.file = k->file, n.line = k->line;
        mjcf_warn(c, &n, "body '%.60s' has no mass of its own and is merged into its parent: the exclusion applies to "
                         "the merged body", j ? k->b : k->a);
      }
      while (b[j] > 0 && B[b[j]].folded_into >= 0) b[j] = B[b[j]].parent;
    }
    if (b[0] != b[1]) s = grit_builder_exclude_bodies(gb, B[b[0]].grit_index, B[b[1]].grit_index);
  }
  for (int i = 0; i < c->pairs.n && !c->no_contacts && c->status == GRIT_OK && s == GRIT_OK; ++i) {
    const mjcf_contact *k = MJCF_AT(c->pairs, mjcf_contact, i);
    const int g1 = find_geom(c, k->a), g2 = find_geom(c, k->b);
    s = grit_builder_add_geom_pair(gb, MJCF_AT(c->geoms, mjcf_geom, g1)->grit_index,
                                   MJCF_AT(c->geoms, mjcf_geom, g2)->grit_index);
  }
  if (s != GRIT_OK) mjcf_fail(c, s, NULL, "%s", grit_builder_last_error(gb));
}
