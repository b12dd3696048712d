/* SPDX-License-Identifier: Apache-2.0 */
/* sysid_contact — system identification of contact parameters (grit/sysid.h, docs/sysid.md).
 *
 * A ball thrown onto the ground with backspin (examples/models/thrown_ball.xml: it bounces, slides,
 * then rolls) is simulated for 0.8 s with the file's parameters (mu = 0.3, k = 2e4 N/m, d = 0.5 s/m);
 * grit_fit then recovers friction, stiffness and dissipation from guesses 2x and 5x off (above and
 * below), first from the exact states, then from states with Gaussian measurement noise (1 mm and
 * 0.01 rad on positions, 1 cm/s and 0.1 rad/s on velocities, a fixed seed). Prints a table of true vs
 * recovered values with their standard deviations, the iterations and the time of each fit.
 *
 *   sysid_contact [MODEL.xml]    (default: examples/models/thrown_ball.xml) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grit/grit.h"

#ifndef GRIT_MODELS_DIR
#define GRIT_MODELS_DIR "examples/models"
#endif

enum { NSTEPS = 800, NP = 3 };

/* splitmix64 and Box-Muller: the caller's generator state, no global state */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double gaussian(uint64_t *s) {
  const double u1 = ((double)(next_u64(s) >> 11) + 0.5) * 0x1.0p-53, u2 = (double)(next_u64(s) >> 11) * 0x1.0p-53;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : GRIT_MODELS_DIR "/thrown_ball.xml";
  grit_model *m;
  grit_mjcf_info info;
  char msg[GRIT_MESSAGE_SIZE];
  if (grit_mjcf_load_file(path, &m, &info, msg) != GRIT_OK) {
    fprintf(stderr, "sysid_contact: %s\n", msg);
    return 1;
  }
  const int nq = grit_model_nq(m), nv = grit_model_nv(m), nxs = nq + nv, key = grit_mjcf_key_index(&info, "throw");
  if (key < 0) {
    fprintf(stderr, "sysid_contact: %s has no keyframe 'throw'\n", path);
    return 1;
  }
  /* the truth: the file's parameters (every geometry has the same ones) */
  grit_geom_def g;
  grit_model_geom(m, 0, &g);
  const grit_param params[NP] = {{GRIT_PARAM_FRICTION, -1}, {GRIT_PARAM_STIFFNESS, -1}, {GRIT_PARAM_DISSIPATION, -1}};
  const char *names[NP] = {"friction", "stiffness", "dissipation"};
  const double truth[NP] = {g.friction, g.stiffness, g.dissipation};
  double *x0 = malloc(sizeof(double) * (size_t)nxs), *clean = malloc(sizeof(double) * (size_t)(NSTEPS + 1) * nxs);
  double *q = malloc(sizeof(double) * (size_t)(NSTEPS + 1) * nq), *v = malloc(sizeof(double) * (size_t)(NSTEPS + 1) * nv);
  double *qn = malloc(sizeof(double) * (size_t)(NSTEPS + 1) * nq), *vn = malloc(sizeof(double) * (size_t)(NSTEPS + 1) * nv);
  double *e = malloc(sizeof(double) * (size_t)nv);
  if (!x0 || !clean || !q || !v || !qn || !vn || !e) return 1;
  memcpy(x0, info.keys[key].qpos, sizeof(double) * (size_t)nq);
  memcpy(x0 + nq, info.keys[key].qvel, sizeof(double) * (size_t)nv);
  grit_fit_options opt = grit_default_fit_options();
  opt.settings = info.settings;
  opt.settings.rel_tol = 1e-8;
  if (grit_rollout_sensitivities(m, &opt.settings, x0, NULL, NSTEPS, NULL, 0, clean, NULL, NULL, msg) != GRIT_OK) {
    fprintf(stderr, "sysid_contact: %s\n", msg);
    return 1;
  }
  uint64_t rng = 20240601u;
  for (int k = 0; k <= NSTEPS; ++k) {
    memcpy(q + (size_t)k * nq, clean + (size_t)k * nxs, sizeof(double) * (size_t)nq);
    memcpy(v + (size_t)k * nv, clean + (size_t)k * nxs + nq, sizeof(double) * (size_t)nv);
    memcpy(qn + (size_t)k * nq, q + (size_t)k * nq, sizeof(double) * (size_t)nq);
    for (int i = 0; i < nv; ++i) e[i] = opt.position_sigma * gaussian(&rng);
    grit_integrate_positions(m, qn + (size_t)k * nq, e, 1.0); /* noise in the tangent space */
    for (int i = 0; i < nv; ++i) vn[(size_t)k * nv + i] = v[(size_t)k * nv + i] + opt.velocity_sigma * gaussian(&rng);
  }
  printf("sysid_contact: %s, %d steps of %g s, %d parameters; truth mu = %g, k = %g N/m, d = %g s/m\n", path, NSTEPS,
         grit_model_options(m).timestep, NP, truth[0], truth[1], truth[2]);
  printf("noise: positions %g (m, rad), velocities %g (m/s, rad/s); shooting segments of %d steps\n\n",
         opt.position_sigma, opt.velocity_sigma, opt.segment_steps);
  printf("%-6s %-6s %-12s %12s %12s %14s %9s %8s %5s %8s %6s\n", "data", "guess", "parameter", "true", "guess",
         "recovered", "+- std", "err %", "err/s", "iters", "time s");
  const double factors[4] = {2.0, 0.5, 5.0, 0.2};
  int fails = 0;
  for (int noisy = 0; noisy <= 1; ++noisy) {
    const grit_trajectory tr = {NSTEPS, noisy ? qn : q, noisy ? vn : v, NULL};
    for (int f = 0; f < 4; ++f) {
      double val[NP], guess[NP], std[NP];
      for (int i = 0; i < NP; ++i) guess[i] = val[i] = truth[i] * factors[f];
      grit_fit_result res;
      const double t0 = now();
      grit_status s = grit_fit(m, &tr, 1, params, NP, val, &opt, &res, std, NULL, msg);
      const double wall = now() - t0;
      if (s != GRIT_OK) {
        printf("fit failed: %s: %s\n", grit_status_string(s), msg);
        fails++;
        continue;
      }
      for (int i = 0; i < NP; ++i) {
        const double err = (val[i] - truth[i]) / truth[i];
        printf("%-6s x%-5g %-12s %12.6g %12.6g %14.8g %9.3g %+8.3f %5.1f", i ? "" : noisy ? "noisy" : "exact",
               factors[f], names[i], truth[i], guess[i], val[i], std[i], 100 * err, fabs(val[i] - truth[i]) / std[i]);
        if (i == 0) printf(" %8d %6.2f\n", res.iterations, wall);
        else putchar('\n');
      }
      printf("%-6s %-6s rms %.4g, sigma2 %.4g, cost %.4g -> %.4g, %d residuals, %d unknowns, converged %d\n", "", "",
             res.rms, res.sigma2, res.initial_cost, res.cost, res.nresiduals, res.nunknowns, res.converged);
      fails += !res.converged;
    }
  }
  free(x0), free(clean), free(q), free(v), free(qn), free(vn), free(e);
  grit_mjcf_info_free(&info);
  grit_model_free(m);
  return fails ? 1 : 0;
}
