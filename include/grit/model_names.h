/* SPDX-License-Identifier: Apache-2.0 */
/* grit/model_names.h — the names a model's elements were given (by the builder's definitions or a model
 * file), by index: the inverse of grit_model_body_index and its siblings. Used by language bindings and
 * tools that list a model's parts. */
#ifndef GRIT_MODEL_NAMES_H
#define GRIT_MODEL_NAMES_H

#include "grit/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The name of body b (0 is the world), joint j, actuator a or geometry g: a zero-terminated string owned
 * by the model, "" when the element has no name, NULL for a bad index or a NULL model. */
GRIT_API const char *grit_model_body_name(const grit_model *m, int body);
GRIT_API const char *grit_model_joint_name(const grit_model *m, int joint);
GRIT_API const char *grit_model_actuator_name(const grit_model *m, int actuator);
GRIT_API const char *grit_model_geom_name(const grit_model *m, int geom);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_MODEL_NAMES_H */
