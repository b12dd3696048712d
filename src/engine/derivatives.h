/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives.h — the dual-number workspace of grit_step_derivatives (internal). */
#ifndef GRIT_DERIVATIVES_INTERNAL_H
#define GRIT_DERIVATIVES_INTERNAL_H

#include "model_internal.h"

typedef struct grit_deriv_ws grit_deriv_ws;

/* A workspace for a model whose steps have at most max_constraints constraints. */
grit_status grit_deriv_ws_create(const grit_model *m, int max_constraints, grit_deriv_ws **ws);
void grit_deriv_ws_free(grit_deriv_ws *ws);

#endif
