/* SPDX-License-Identifier: Apache-2.0 */
/* test_physics_clutter.c — seed 000's clutter case XII-A (40 objects, dt = 2 ms, 3 s) runs with every
 * step converged for each model, and the pile settles: the mean kinetic energy over the last 0.5 s is
 * under 1 % of the potential energy released by the fall. A long run: label "long". */
#include <criterion/criterion.h>
#include <math.h>

#include "grit/grit.h"
#include "scenes.h"

Test(physics_clutter, forty_objects_settle_with_every_step_converged, .timeout = 600) {
  const double dt = 2e-3;
  for (int model = 0; model < 3; ++model) {
    char msg[GRIT_MESSAGE_SIZE];
    grit_model *m;
    cr_assert_eq(scene_clutter(40, dt, &m, msg), GRIT_OK, "%s", msg);
    grit_data *d;
    cr_assert_eq(grit_data_create(m, &d), GRIT_OK);
    grit_step_settings st = grit_default_step_settings();
    st.contact_model = model;
    grit_data_set_step_settings(d, &st);
    double pe0, pe1, ke_tail = 0;
    grit_energy(d, NULL, &pe0);
    long iters = 0;
    int max_iters = 0;
    const int steps = 1500;
    for (int n = 0; n < steps; ++n) {
      cr_assert_eq(grit_step(d), GRIT_OK, "model %d, t = %g: %s", model, grit_data_time(d), grit_data_last_error(d));
      grit_step_stats s;
      grit_data_step_stats(d, &s);
      iters += s.newton_iters;
      max_iters = s.newton_iters > max_iters ? s.newton_iters : max_iters;
      if (n >= steps - 250) {
        double ke;
        grit_energy(d, &ke, NULL);
        ke_tail += ke / 250;
      }
    }
    grit_energy(d, NULL, &pe1);
    cr_log_info("model %d: Newton iterations mean %.2f max %d; kinetic energy (last 0.5 s) %.3g J of %.3g J released",
                model, (double)iters / steps, max_iters, ke_tail, pe0 - pe1);
    cr_assert(ke_tail < 0.01 * (pe0 - pe1), "model %d: still moving: %g J", model, ke_tail);
    grit_data_free(d);
    grit_model_free(m);
  }
}
