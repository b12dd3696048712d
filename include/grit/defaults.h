/* SPDX-License-Identifier: Apache-2.0 */
/* grit/defaults.h — the definition structs' defaults under the one naming rule
 * grit_<module>_default_<thing>() (issue 26).
 *
 * Each returns exactly what the older name returns; the older names (grit_default_body_def, ...) stay,
 * for existing code, and new defaults are added only under this rule. Already following it:
 * grit_mjcf_default_load_options, grit_ilqr_default_options, grit_ilqr_lqr_default_options. */
#ifndef GRIT_DEFAULTS_H
#define GRIT_DEFAULTS_H

#include "grit/constraints.h"
#include "grit/model.h"
#include "grit/step.h"
#include "grit/sysid.h"

#ifdef __cplusplus
extern "C" {
#endif

GRIT_API grit_body_def grit_model_default_body_def(void);         /* = grit_default_body_def() */
GRIT_API grit_joint_def grit_model_default_joint_def(void);       /* = grit_default_joint_def() */
GRIT_API grit_actuator_def grit_model_default_actuator_def(void); /* = grit_default_actuator_def() */
GRIT_API grit_geom_def grit_model_default_geom_def(void);         /* = grit_default_geom_def() */
GRIT_API grit_options grit_model_default_options(void);           /* = grit_default_options() */
GRIT_API grit_step_settings grit_step_default_settings(void);     /* = grit_default_step_settings() */
GRIT_API grit_fit_options grit_sysid_default_fit_options(void);   /* = grit_default_fit_options() */
GRIT_API grit_site_def grit_constraints_default_site_def(void);         /* = grit_default_site_def() */
GRIT_API grit_equality_def grit_constraints_default_equality_def(void); /* = grit_default_equality_def() */
GRIT_API grit_tendon_def grit_constraints_default_tendon_def(void);     /* = grit_default_tendon_def() */
/* grit_load_default_options (= grit_default_load_options) is declared in grit/load.h: the file formats'
 * layer (src/io) defines it, so that the engine's defaults here need no loader. */

#ifdef __cplusplus
}
#endif
#endif /* GRIT_DEFAULTS_H */
