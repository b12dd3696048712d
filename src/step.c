/* step.c — the time step. It reads like ARCHITECTURE.md's pipeline:
 * kinematics -> dynamics -> free motion -> constraints -> solve -> integrate.
 * The contact and limit constraints and their convex solver plug in between free motion and
 * integration; without constraints the new velocity is the free-motion velocity. */
#include <math.h>
#include <string.h>

#include "forward.h"
#include "grit/step.h"
#include "kinematics.h"
#include "status_internal.h"

grit_status grit_step(grit_data *d) {
  if (!d) return GRIT_ERR_INVALID_ARGUMENT;
  const grit_model *m = d->model;
  const double h = m->opt.timestep;

  /* 1-3: kinematics, dynamics and the free-motion velocity v* (A is left factored). */
  grit_status s = grit_compute_free_motion(d);
  if (s != GRIT_OK) return s;

  /* 4-6: constraints and the convex solve (none yet): v = v*. */
  for (int i = 0; i < m->nv; ++i) d->vnext[i] = d->vstar[i];

  /* 7: q = q0 + h N(q0) v, on the manifold; commit only a finite result. */
  for (int i = 0; i < m->nq; ++i) d->qnext[i] = d->qpos[i];
  grit_kin_integrate(m, d->qnext, d->vnext, h);
  for (int i = 0; i < m->nq; ++i)
    if (!isfinite(d->qnext[i]))
      return grit_set_error(d->message, GRIT_ERR_NOT_FINITE, "step: position %d became non-finite", i);
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = d->qnext[i];
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = d->vnext[i];
  d->time += h;
  return GRIT_OK;
}
