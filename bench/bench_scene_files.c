/* SPDX-License-Identifier: Apache-2.0 */
/* bench_scene_files.c — the generated scenes of bench_mujoco and bench_states (bench_scene_files.h). */
#include "bench_scene_files.h"

#include <math.h>

int bench_write_clutter(FILE *f, int n, double kstiff) {
  const int s = (int)(sqrt(n / 10.0) + 0.5), ncol = s * s;
  if (ncol * 10 != n) {
    fclose(f);
    return 1;
  }
  const double half = 0.2 * s;
  fprintf(f, "<mujoco model=\"clutter%d\">\n  <option timestep=\"0.002\"/>\n  <custom>\n"
             "    <numeric name=\"grit_stiffness\" data=\"%g\"/>\n    <numeric name=\"grit_dissipation\" data=\"10\"/>\n"
             "    <numeric name=\"grit_tau_d\" data=\"1e-4\"/>\n  </custom>\n"
             "  <default>\n    <geom friction=\"1\" density=\"1000\"/>\n  </default>\n  <worldbody>\n",
          n, kstiff);
  const double c45 = sqrt(0.5);
  fprintf(f, "    <geom type=\"plane\" size=\"%g %g 0.1\"/>\n", half, half);
  fprintf(f, "    <geom type=\"plane\" size=\"%g %g 0.1\" pos=\"%g 0 0\" quat=\"%.17g 0 %.17g 0\"/>\n", half, half, -half,
          c45, c45);
  fprintf(f, "    <geom type=\"plane\" size=\"%g %g 0.1\" pos=\"%g 0 0\" quat=\"%.17g 0 %.17g 0\"/>\n", half, half, half,
          c45, -c45);
  fprintf(f, "    <geom type=\"plane\" size=\"%g %g 0.1\" pos=\"0 %g 0\" quat=\"%.17g %.17g 0 0\"/>\n", half, half, -half,
          c45, -c45);
  fprintf(f, "    <geom type=\"plane\" size=\"%g %g 0.1\" pos=\"0 %g 0\" quat=\"%.17g %.17g 0 0\"/>\n", half, half, half,
          c45, c45);
  for (int k = 0; k < n; ++k) {
    const int c = k % ncol, level = k / ncol, sphere = (level + c) % 2 == 0;
    const double x = -half + 0.2 + 0.4 * (c % s) + 0.004 * sin(1.7 * k);
    const double y = -half + 0.2 + 0.4 * (c / s) + 0.004 * cos(2.3 * k);
    const double tilt = 0.05 * sin(3.1 * k);
    fprintf(f, "    <body pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g 0\">\n      <freejoint/>\n", x, y,
            0.1 + 0.12 * level, cos(tilt), 0.6 * sin(tilt), 0.8 * sin(tilt));
    fprintf(f, sphere ? "      <geom type=\"sphere\" size=\"0.05\"/>\n" : "      <geom type=\"box\" size=\"0.05 0.05 0.05\"/>\n");
    fprintf(f, "    </body>\n");
  }
  fprintf(f, "  </worldbody>\n</mujoco>\n");
  return fclose(f) != 0;
}

int bench_write_pile(FILE *f, int n) {
  fprintf(f, "<mujoco model=\"pile%d\">\n  <option timestep=\"0.002\"/>\n  <custom>\n"
             "    <numeric name=\"grit_stiffness\" data=\"1e7\"/>\n    <numeric name=\"grit_dissipation\" data=\"10\"/>\n"
             "    <numeric name=\"grit_tau_d\" data=\"1e-4\"/>\n  </custom>\n"
             "  <default>\n    <geom friction=\"1\" density=\"1000\"/>\n  </default>\n  <worldbody>\n"
             "    <geom type=\"plane\" size=\"2 2 0.1\"/>\n",
          n);
  for (int k = 0; k < n; ++k) {
    const int level = k / 25, c = k % 25;
    const double x = -0.202 + 0.101 * (c % 5) + 0.0005 * sin(1.7 * k), y = -0.202 + 0.101 * (c / 5);
    const double tilt = 0.01 * sin(3.1 * k);
    fprintf(f, "    <body pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g 0\">\n      <freejoint/>\n", x, y,
            0.0505 + 0.101 * level, cos(tilt), 0.6 * sin(tilt), 0.8 * sin(tilt));
    fprintf(f, "      <geom type=\"box\" size=\"0.05 0.05 0.05\"/>\n    </body>\n");
  }
  fprintf(f, "  </worldbody>\n</mujoco>\n");
  return fclose(f) != 0;
}
