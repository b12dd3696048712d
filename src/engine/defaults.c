/* SPDX-License-Identifier: Apache-2.0 */
/* defaults.c — the defaults under the naming rule grit_<module>_default_<thing> (grit/defaults.h): each
 * returns what the older name returns, so the two can never disagree. */
#include "grit/defaults.h"

grit_body_def grit_model_default_body_def(void) { return grit_default_body_def(); }
grit_joint_def grit_model_default_joint_def(void) { return grit_default_joint_def(); }
grit_actuator_def grit_model_default_actuator_def(void) { return grit_default_actuator_def(); }
grit_geom_def grit_model_default_geom_def(void) { return grit_default_geom_def(); }
grit_options grit_model_default_options(void) { return grit_default_options(); }
grit_step_settings grit_step_default_settings(void) { return grit_default_step_settings(); }
grit_fit_options grit_sysid_default_fit_options(void) { return grit_default_fit_options(); }
grit_site_def grit_constraints_default_site_def(void) { return grit_default_site_def(); }
grit_equality_def grit_constraints_default_equality_def(void) { return grit_default_equality_def(); }
grit_tendon_def grit_constraints_default_tendon_def(void) { return grit_default_tendon_def(); }
