/* SPDX-License-Identifier: Apache-2.0 */
/* mjcf_adhesion.c — MJCF's <adhesion> actuator (a body transmission: GRIT_TRN_BODY) and the geometry
 * attributes it works with, margin, gap and priority, as MuJoCo 2.2.2 reads them (docs/actuation.md,
 * Adhesion; docs/collision.md, Margin and gap). */
#include <limits.h>
#include <string.h>

#include "mjcf_internal.h"

void mjcf_adhesion_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_actuator *a) {
  static const char *const tfauto[] = {"false", "true", "auto"};
  mjcf_read_enum(c, n, "forcelimited", tfauto, 3, &a->forcelimited);
  mjcf_read_numbers(c, n, "forcerange", a->forcerange, 2, 2);
  mjcf_mark(n, "group");
  mjcf_mark(n, "user");
  memset(a->biasprm, 0, sizeof a->biasprm);
  memset(a->gainprm, 0, sizeof a->gainprm);
  a->gainprm[0] = 1;
  mjcf_read_numbers(c, n, "gain", a->gainprm, 1, 1);
  if (c->status == GRIT_OK && a->gainprm[0] < 0) mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "the adhesion gain must be >= 0");
  /* MuJoCo 2.2.2 requires ctrlrange on the element; later versions (dm_control's fruit fly) take it from
   * the class: accepted when the class gave one, and not required of a class itself */
  const int in_default = n->parent && !strcmp(n->parent->name, "default");
  if (!mjcf_read_numbers(c, n, "ctrlrange", a->ctrlrange, 2, 2) && c->status == GRIT_OK && !in_default &&
      a->ctrlrange[0] == 0 && a->ctrlrange[1] == 0)
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'ctrlrange' is required");
  if (c->status == GRIT_OK && (a->ctrlrange[0] < 0 || a->ctrlrange[1] < 0))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "the adhesion control range must be >= 0");
  a->ctrllimited = 1;
  a->dyntype = GRIT_DYN_NONE;
  a->gaintype = GRIT_GAIN_FIXED;
  a->biastype = GRIT_BIAS_NONE;
}

void mjcf_geom_contact_attrs(mjcf_ctx *c, const mjcf_node *n, mjcf_geom *g) {
  if (mjcf_read_numbers(c, n, "margin", &g->margin, 1, 1) && c->status == GRIT_OK && !(g->margin >= 0))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'margin' must be >= 0");
  if (mjcf_read_numbers(c, n, "gap", &g->gap, 1, 1) && c->status == GRIT_OK && !(g->gap >= 0))
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, n, "attribute 'gap' must be >= 0");
  long v;
  if (mjcf_read_int(c, n, "priority", INT_MIN, INT_MAX, &v)) g->priority = (int)v;
}

int mjcf_adhesion_body(mjcf_ctx *c, const mjcf_actuator *A, grit_actuator_def *d) {
  const mjcf_body *B = c->bodies.data;
  int k = -1;
  for (int i = 1; i < c->bodies.n && k < 0; ++i)
    if (B[i].name && !strcmp(B[i].name, A->body)) k = i;
  mjcf_node at;
  memset(&at, 0, sizeof at);
  at.name = A->element, at.file = A->file, at.line = A->line;
  if (k < 0) {
    mjcf_fail(c, GRIT_ERR_INVALID_MODEL, &at, "unknown body '%.100s'", A->body);
    return 0;
  }
  if (B[k].folded_into >= 0) { /* its geometries would be counted with its parent's */
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, &at,
              "adhesion on body '%.100s', which has no joint (grit merges it into its parent), is not supported",
              A->body);
    return 0;
  }
  int moves = 0; /* a joint on the path to the world */
  for (int i = k; i > 0 && !moves; i = B[i].parent) moves = B[i].njoint > 0;
  if (!moves) {
    mjcf_fail(c, GRIT_ERR_UNSUPPORTED, &at, "adhesion on body '%.100s', which cannot move, is not supported", A->body);
    return 0;
  }
  d->trntype = GRIT_TRN_BODY;
  d->body = B[k].grit_index;
  return 1;
}
