/* SPDX-License-Identifier: Apache-2.0 */
/* grit/data.h — the mutable simulation data of one model: the state (q, v), the controls u, the
 * time, and every workspace, all allocated once by grit_data_create. One grit_data per thread; many
 * may share one model. The data keeps a pointer to its model, which must outlive it. */
#ifndef GRIT_DATA_H
#define GRIT_DATA_H

#include "grit/model.h"
#include "grit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct grit_data grit_data;

/* Creates data for `model` with the state at the reference configuration (q = qpos0, v = 0, u = 0). */
GRIT_API grit_status grit_data_create(const grit_model *model, grit_data **data);
GRIT_API void grit_data_free(grit_data *data); /* NULL is allowed */

/* The message describing the last error of a call on this data ("" if none). */
GRIT_API const char *grit_data_last_error(const grit_data *data);
GRIT_API const grit_model *grit_data_model(const grit_data *data);

/* Back to q = qpos0, v = 0, u = 0, t = 0. */
GRIT_API void grit_data_reset(grit_data *data);

/* Set the state and controls. n must equal nq, nv, nu respectively; every value must be finite.
 * Quaternions of ball and free joints are normalized; one of (near) zero norm is rejected. On error
 * nothing is changed. A step's result is a function of the state, the controls, the time and the
 * settings only; but a step leaves its quaternions unit to round-off, not renormalized, so copying a
 * state into another data with grit_data_set_qpos can move them by an ulp and the copy's next steps by
 * round-off (set the original's qpos too for the same bits). */
GRIT_API grit_status grit_data_set_qpos(grit_data *data, const double *q, int n);
GRIT_API grit_status grit_data_set_qvel(grit_data *data, const double *v, int n);
GRIT_API grit_status grit_data_set_ctrl(grit_data *data, const double *u, int n);
GRIT_API grit_status grit_data_set_time(grit_data *data, double t);

/* Read-only views of the state (nq, nv, nu numbers) and the time. */
GRIT_API const double *grit_data_qpos(const grit_data *data);
GRIT_API const double *grit_data_qvel(const grit_data *data);
GRIT_API const double *grit_data_ctrl(const grit_data *data);
GRIT_API double grit_data_time(const grit_data *data);

/* The activations of the actuators with dynamics (grit_model_na numbers, in actuator order; the third
 * part of the state x = (q, v, act) when na > 0, docs/conventions.md). Reset sets them to 0. n must
 * equal na; every value finite. */
GRIT_API grit_status grit_data_set_act(grit_data *data, const double *act, int n);
GRIT_API const double *grit_data_act(const grit_data *data);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DATA_H */
