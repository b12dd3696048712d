/* grit/step.h — the time step: kinematics -> dynamics -> free motion -> (contacts and limits, solved
 * by the convex contact solver) -> integration. */
#ifndef GRIT_STEP_H
#define GRIT_STEP_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Advances the data's state by one time step of the model's timestep (symplectic Euler with implicit
 * damping and springs: seed 000 eq. 1). On failure the state is left as it was before the call and
 * the data's message says why. Allocates nothing. */
grit_status grit_step(grit_data *data);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_STEP_H */
