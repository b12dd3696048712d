/* SPDX-License-Identifier: Apache-2.0 */
/* bench_mujoco — grit and MuJoCo 2.2.2 side by side on the same MJCF files, in one run (issue #10).
 *
 * Per scene: the median time per step of each engine, Newton iterations per step (grit's and MuJoCo's
 * solver iterations), contacts (grit's candidates within the margin and those with a normal impulse;
 * MuJoCo's contacts and constraint rows), the time of the one-step Jacobians A = dx+/dx, B = dx+/du
 * (grit's implicit derivatives against MuJoCo's mjd_transitionFD, centered, eps = 1e-6), the ratios, and
 * where grit's step time goes (a second pass with the step's phase timing on: dynamics, collision,
 * constraints, Newton's evaluations, assembly, factorization, solves and line search), with the FLOP
 * count of one factorization against its measured time.
 *
 * grit's Jacobians are timed twice. In the side-by-side loop each call follows MuJoCo's finite
 * differences of the previous sample (135 ms on the clutter), which leave grit's code and data out of
 * the caches. Then grit alone replays the same trajectory, timing each step and the Jacobians right
 * after every k-th step, as a trajectory optimizer calls them, written to a ring of buffers larger
 * than the last-level cache (one A per time step, as an optimizer keeps them); "grit alone" prints
 * that loop's medians and their ratio, both taken in the same regime.
 *
 * Each engine steps its own trajectory from the same initial state (a keyframe's, with its controls
 * held, or the file's qpos0) after a warm-up, repeated from that state `repeats` times; the two
 * engines' steps alternate, so both see the same load of a shared machine. grit runs at its default
 * tolerance (rel_tol 1e-5), MuJoCo at the file's options (its Newton solver by default); both at the
 * file's time step. MuJoCo 2.2.2 preallocates its contact and constraint buffers (nconmax, njmax); they
 * are raised here until it reports no overflow, so that it computes every contact.
 *
 * With the block-sparse form (GRIT_HAS_JACOBIAN_BLOCKS), grit alone replays the trajectory once more
 * taking grit_step_derivatives_blocks instead, and prints its time, ratio to the step, block count and
 * largest size; the scaling series takes only the block form (the dense A at 640 objects is 472 MB).
 *
 *   bench_mujoco [--series | --robots] [--quick] [--no-fd] [--cpu-time] [--lenient] [--warm-start] [--dense-max-nv N]
 *                [MODEL.xml[@KEY] ...]
 *     default: the falling sphere launched sliding (@launch), the Kinova arm pushing the ball (@push),
 *              the 40-object clutter, a soft clutter (k = 1e5) settling, the clutter of 160 objects
 *              (no FD), a pile of 50 boxes in one island, then the scaling series (clutter of 10, 40,
 *              160, 640 objects);
 *     --series: the scaling series only;  --quick: fewer steps (a smoke run);  --no-fd: no MuJoCo FD;
 *     --robots: public robot scenes instead (tests/models: MuJoCo's and dm_control's humanoids, ANYmal C,
 *              dm_control's quadruped, the Allegro hand with its cube, the planar stacker, cheetah,
 *              walker, hopper, acrobot; since stop 17 also Menagerie's Go1, A1, ANYmal B, OP3, Panda and
 *              UR5e on a box, dm_control's humanoid, manipulator, ball in cup and finger, and, without
 *              contact, the reacher, swimmer and cartpole), each from its
 *              qpos0, no series;
 *     MODEL.xml ...: any files instead, each from its qpos0 as the robot scenes (200 steps of warm-up, 500
 *              measured), or from key KEY with MODEL.xml@KEY (30 steps from the key, ten times);
 *     --lenient: grit loads the files given leniently (what it refuses ignored with a warning);
 *     --cpu-time: time by the thread's CPU clock (a loaded machine's descheduling left out);
 *     --dense-max-nv N: grit's dense LAPACK path up to nv = N, block-sparse above (default: the file's);
 *     --warm-start: grit's steps warm-start from the previous step's acceleration (grit_step_settings).
 *
 * MuJoCo is a reference peer here, never a dependency of the library. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_scene_files.h"

#include "grit/grit.h"
#include "grit/mjcf.h"

typedef struct scene {
  const char *path, *key; /* key NULL: the file's qpos0 */
  int warm, steps, deriv_every, repeats;
  const char *label; /* NULL: the file name */
  int jac;           /* 0: dense A,B side by side with MuJoCo's FD; 1: no FD (grit alone only); 2: the block
                        form only (no dense A: at 640 objects it is 472 MB) */
  int lenient;       /* grit loads the file leniently (content without effect on the dynamics that grit
                        refuses; none of the robot scenes needs it since site placement defaults load, stop 16) */
} scene;

static int g_no_fd = 0; /* --no-fd: no MuJoCo finite differences (scenes whose FD take seconds per call) */
static int g_lenient = 0; /* --lenient: grit loads the files given leniently (scene.lenient) */
static int g_warm_start = 0; /* --warm-start: grit_step_settings.warm_start on (the previous step's acceleration) */

typedef struct result {
  int nv;
  double step_g, step_m, min_g, min_m;  /* medians and minima of the step time, us */
  double ab_g, ab_m;                    /* medians of the Jacobians' time, us */
  double alone_step, alone_ab;          /* grit alone (step, and the Jacobians every k-th step): medians, us */
  double newton_g, iter_m;              /* mean Newton iterations per step */
  double cand_g, active_g, ncon_m, nefc_m;
  double phase[9], total, flops, factors; /* grit's phase split: mean us per step; flops per factor */
  double blk_step, blk_ab, blk_mb;      /* grit alone with the block form: medians, us; its largest size, MB */
  int blk_n;                            /* the blocks of that largest fill */
} result;

static const char *const PHASE_NAMES[9] = {"dynamics", "collision", "constraints", "eval", "assembly",
                                           "factor", "solve", "linesearch", "other"};

/* Both engines at the scene's initial state. */
static int reset(const scene *sc, const grit_mjcf_info *info, grit_data *gd, const mjModel *mm, mjData *md) {
  if (!sc->key) {
    grit_data_reset(gd);
    mj_resetData(mm, md);
    return 0;
  }
  const int kg = grit_mjcf_key_index(info, sc->key), km = mj_name2id(mm, mjOBJ_KEY, sc->key);
  if (kg < 0 || km < 0 || grit_mjcf_apply_key(info, kg, gd) != GRIT_OK) {
    fprintf(stderr, "bench_mujoco: %s has no key %s\n", sc->path, sc->key);
    return 1;
  }
  mj_resetDataKeyframe(mm, md, km);
  return 0;
}

/* grit alone replaying the scene's trajectory: at step i that starts a repetition, back to the
 * initial state and through the warm-up (as the side-by-side loop does for both engines). */
static int replay_begin(const scene *sc, const grit_mjcf_info *info, grit_data *gd, const mjModel *mm, mjData *md,
                        int i) {
  if (i % sc->steps != 0) return 0;
  if (reset(sc, info, gd, mm, md)) return 1;
  for (int k = 0; k < sc->warm; ++k)
    if (grit_step(gd) != GRIT_OK) return 1;
  return 0;
}

/* MuJoCo's buffers: room for `per_geom` contacts per movable geom (raised while they overflow; not
 * more than needed: MuJoCo 2.2 keeps rows x rows in efc_AR and its buffer size is an int). */
static void mujoco_capacity(mjModel *mm, double per_geom) {
  int movable = 0;
  for (int g = 0; g < mm->ngeom; ++g) movable += mm->geom_bodyid[g] != 0;
  const int ncon = (int)(per_geom * movable) + 16;
  const int njmax0 = mm->njmax, nstack0 = mm->nstack;
  if (mm->nconmax < ncon) mm->nconmax = ncon;
  int njmax = 4 * mm->nconmax + 2 * mm->njnt; /* pyramidal cones: 2 (condim - 1) rows per contact */
  /* MuJoCo 2.2.2 keeps mjData in one buffer counted by an int, with njmax^2 (efc_AR) and 2 njmax nv (efc_J,
   * efc_JT) doubles in it: raise the rows only while that fits (1000 particles: 3000 dofs) */
  while (njmax > njmax0 && 8.0 * ((double)njmax * njmax + 2.0 * njmax * mm->nv) > 1.5e9) njmax = njmax * 9 / 10;
  if (mm->njmax < njmax) mm->njmax = njmax;
  /* the stack as MuJoCo sizes it by default, scaled with the rows */
  const long nstack = (long)nstack0 * mm->njmax / (njmax0 > 0 ? njmax0 : 1);
  if (nstack > mm->nstack) mm->nstack = nstack > 100000000L ? 100000000 : (int)nstack;
}

static int mujoco_overflowed(const mjData *md) {
  return md->warning[mjWARN_CONTACTFULL].number > 0 || md->warning[mjWARN_CNSTRFULL].number > 0;
}

/* Contacts of grit's last step with a positive normal impulse. */
static int grit_active_contacts(const grit_data *gd) {
  int n = 0;
  for (int i = 0; i < grit_data_ncontacts(gd); ++i) {
    grit_contact_info ci;
    if (grit_data_contact(gd, i, &ci) == GRIT_OK && ci.impulse[2] > 0) ++n;
  }
  return n;
}

#ifdef GRIT_HAS_JACOBIAN_BLOCKS
/* grit alone with the block-sparse A and B (grit_step_derivatives_blocks): the same replay as the
 * dense "grit alone" loop, the blocks in one container reused along the trajectory (as a controller
 * would; an optimizer keeping one per time step pays the same writes into memory not in cache). */
static int replay_blocks(const scene *sc, const grit_mjcf_info *info, grit_data *gd, const mjModel *mm, mjData *md,
                         double *ts, double *td, result *res) {
  const int steps = sc->steps * sc->repeats;
  grit_jacobian_blocks *J;
  if (grit_jacobian_blocks_create(grit_data_model(gd), &J) != GRIT_OK) return 1;
  int rc = 0, kb = 0;
  size_t most = 0;
  for (int i = 0; i < steps && !rc; ++i) {
    if (replay_begin(sc, info, gd, mm, md, i)) rc = 1;
    const double t0 = now_us();
    if (!rc && grit_step(gd) != GRIT_OK) rc = 1;
    const double t1 = now_us();
    ts[i] = t1 - t0;
    if (!rc && i % sc->deriv_every == 0) {
      const double t2 = now_us();
      if (grit_step_derivatives_blocks(gd, J) != GRIT_OK) rc = 1;
      td[kb++] = now_us() - t2;
      if (grit_jacobian_blocks_bytes(J) > most) most = grit_jacobian_blocks_bytes(J), res->blk_n = grit_jacobian_blocks_count(J);
    }
  }
  if (rc) fprintf(stderr, "bench_mujoco: grit (blocks) failed: %s\n", grit_data_last_error(gd));
  res->blk_step = bench_median(ts, steps), res->blk_ab = bench_median(td, kb), res->blk_mb = most / 1048576.0;
  grit_jacobian_blocks_free(J);
  return rc;
}
#endif

/* Returns 0, 1 on error, 2 when MuJoCo's buffers overflowed (call again with a larger scale). */
static int g_dense_max_nv = -1; /* --dense-max-nv: grit's dense/block-sparse switch (-1: the default) */

static int bench(const scene *sc, double scale, result *res) {
  const char *path = sc->path;
  const int warm = sc->warm, steps = sc->steps * sc->repeats, deriv_every = sc->deriv_every;
  char msg[GRIT_MESSAGE_SIZE], err[1000];
  grit_model *gm;
  grit_mjcf_info info;
  memset(res, 0, sizeof *res);
  grit_mjcf_load_options lopt = grit_mjcf_default_load_options();
  lopt.lenient = sc->lenient;
  if (grit_mjcf_load_file_with(path, &lopt, &gm, &info, msg) != GRIT_OK) {
    fprintf(stderr, "bench_mujoco: grit: %s\n", msg);
    return 1;
  }
  mjModel *mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!mm) {
    fprintf(stderr, "bench_mujoco: MuJoCo: %s\n", err);
    return 1;
  }
  mujoco_capacity(mm, scale);
  /* the same model: grit steps semi-implicit Euler whatever the file asks (RK4: a warning at load), so
   * MuJoCo does too (dm_control's acrobot and cartpole ask RK4: four evaluations per step) */
  if (mm->opt.integrator == mjINT_RK4) mm->opt.integrator = mjINT_EULER;
  grit_data *gd;
  grit_data_create(gm, &gd);
  grit_step_settings settings = info.settings;
  settings.timing = 0;
  if (g_dense_max_nv >= 0) settings.dense_max_nv = g_dense_max_nv;
  if (g_warm_start) settings.warm_start = 1;
  grit_data_set_step_settings(gd, &settings);
  mjData *md = mj_makeData(mm);
  if (!md) {
    fprintf(stderr, "bench_mujoco: MuJoCo cannot allocate its data for %d contacts, %d rows\n", mm->nconmax, mm->njmax);
    return 1;
  }
  const int nv = grit_model_nv(gm), nu = grit_model_nu(gm), nx = 2 * nv + grit_model_na(gm); /* (q, v, act) */
  res->nv = nv;
  double *ts_g = malloc(sizeof(double) * steps), *ts_m = malloc(sizeof(double) * steps);
  int nd = deriv_every ? steps / deriv_every + 1 : 1;
  double *td_g = malloc(sizeof(double) * nd), *td_m = malloc(sizeof(double) * nd);
  double *A = sc->jac < 2 ? malloc(sizeof(double) * nx * nx) : NULL, *B = malloc(sizeof(double) * (nx * nu + 1));
  const int nxm = 2 * mm->nv + mm->na;
  mjtNum *Am = deriv_every ? malloc(sizeof(mjtNum) * nxm * nxm) : NULL;
  mjtNum *Bm = deriv_every ? malloc(sizeof(mjtNum) * (nxm * mm->nu + 1)) : NULL;
  long newton = 0, iter_m = 0, cand = 0, active = 0, ncon = 0, nefc = 0;
  int kd = 0, rc = 0;
  for (int i = 0; i < steps && !rc; ++i) {
    if (i % sc->steps == 0) { /* a repetition: from the initial state, after the warm-up */
      if (reset(sc, &info, gd, mm, md)) rc = 1;
      for (int k = 0; k < warm && !rc; ++k) {
        if (grit_step(gd) != GRIT_OK) rc = 1;
        mj_step(mm, md);
      }
    }
    const double t0 = now_us();
    if (!rc && grit_step(gd) != GRIT_OK) rc = 1;
    const double t1 = now_us();
    mj_step(mm, md);
    const double t2 = now_us();
    if (rc) {
      fprintf(stderr, "bench_mujoco: grit step failed: %s\n", grit_data_last_error(gd));
      break;
    }
    ts_g[i] = t1 - t0;
    ts_m[i] = t2 - t1;
    grit_step_stats st;
    grit_data_step_stats(gd, &st);
    newton += st.newton_iters;
    cand += st.ncontacts;
    active += grit_active_contacts(gd);
    iter_m += md->solver_iter;
    ncon += md->ncon;
    nefc += md->nefc;
    if (deriv_every && sc->jac == 0 && i % deriv_every == 0) {
      const double t3 = now_us();
      grit_step_derivatives(gd, A, nu ? B : NULL, NULL, 0, NULL);
      const double t4 = now_us();
      mjd_transitionFD(mm, md, 1e-6, 1, Am, mm->nu ? Bm : NULL, NULL, NULL);
      const double t5 = now_us();
      td_g[kd] = t4 - t3;
      td_m[kd++] = t5 - t4;
    }
  }
  if (!rc && mujoco_overflowed(md)) rc = 2;
  if (!rc) {
    res->step_g = bench_median(ts_g, steps), res->step_m = bench_median(ts_m, steps);
    res->min_g = ts_g[0], res->min_m = ts_m[0]; /* sorted by bench_median */
    res->ab_g = bench_median(td_g, kd), res->ab_m = bench_median(td_m, kd);
    res->newton_g = (double)newton / steps, res->iter_m = (double)iter_m / steps;
    res->cand_g = (double)cand / steps, res->active_g = (double)active / steps;
    res->ncon_m = (double)ncon / steps, res->nefc_m = (double)nefc / steps;
    /* grit alone, as a trajectory optimizer runs it: the same trajectory again, each step and, every
     * k-th step, the Jacobians right after it, with no MuJoCo in between. Above, each call of grit's
     * derivatives comes after MuJoCo's finite differences of the previous sample (135 ms on the
     * clutter), which leave grit's code and data out of cache; here both grit times are taken in one
     * loop. The Jacobians go to a ring of buffers larger than the last-level cache, as an optimizer
     * keeps one A and B per time step: the output is written to memory not in cache. */
    if (deriv_every && sc->jac < 2) {
      const size_t asz = (size_t)nx * nx + 1, nring = (size_t)(64u << 20) / (sizeof(double) * asz) + 1;
      double *Ar = malloc(sizeof(double) * asz * nring); /* 64 MB: twice this machine's L3 */
      if (!Ar) {
        fprintf(stderr, "bench_mujoco: no memory for %zu Jacobians of %d x %d\n", nring, nx, nx);
        rc = 1;
      }
      for (size_t k = 0; Ar && k < asz * nring; k += 512) Ar[k] = 0.0; /* map the pages */
      size_t ka = 0;
      for (int i = 0; i < steps && !rc; ++i) {
        if (replay_begin(sc, &info, gd, mm, md, i)) rc = 1;
        const double t0 = now_us();
        if (!rc && grit_step(gd) != GRIT_OK) rc = 1;
        const double t1 = now_us();
        ts_g[i] = t1 - t0;
        if (!rc && i % deriv_every == 0) {
          double *Ak = Ar + asz * (ka % nring);
          const double t2 = now_us();
          grit_step_derivatives(gd, Ak, nu ? B : NULL, NULL, 0, NULL);
          td_g[ka++] = now_us() - t2;
        }
      }
      free(Ar);
      if (!rc) res->alone_step = bench_median(ts_g, steps), res->alone_ab = bench_median(td_g, (int)ka);
    }
#ifdef GRIT_HAS_JACOBIAN_BLOCKS
    if (deriv_every && !rc) rc = replay_blocks(sc, &info, gd, mm, md, ts_g, td_g, res);
#endif
    /* the phase split: the same trajectory again with the step's timing on (its clock calls would
     * otherwise be part of the times above) */
    settings.timing = 1;
    grit_data_set_step_settings(gd, &settings);
    long nfac = 0;
    for (int i = 0; i < steps && !rc; ++i) {
      if (replay_begin(sc, &info, gd, mm, md, i)) rc = 1;
      if (!rc && grit_step(gd) != GRIT_OK) rc = 1;
      grit_step_stats st;
      grit_data_step_stats(gd, &st);
      const double p[8] = {st.time_dynamics, st.time_collision, st.time_constraints, st.time_eval,
                           st.time_assembly, st.time_factor,   st.time_solve,       st.time_linesearch};
      double other = st.time_total;
      for (int k = 0; k < 8; ++k) res->phase[k] += p[k] / steps, other -= p[k];
      res->phase[8] += other / steps;
      res->total += st.time_total / steps;
      if (st.newton_iters > 0) res->flops += st.factor_flops, nfac += st.newton_iters;
    }
    res->factors = (double)nfac / steps;
    res->flops = nfac ? res->flops / nfac : 0.0;
  }
  free(ts_g), free(ts_m), free(td_g), free(td_m), free(A), free(B), free(Am), free(Bm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  grit_data_free(gd);
  grit_model_free(gm);
  grit_mjcf_info_free(&info);
  return rc;
}

/* bench() with MuJoCo's buffers raised until nothing overflows. */
static int bench_fit(const scene *sc, result *res) {
  for (double per_geom = 2.0; per_geom <= 64; per_geom *= 1.4) {
    const int rc = bench(sc, per_geom, res);
    if (rc != 2) return rc;
    fprintf(stderr, "bench_mujoco: MuJoCo's contact buffer overflowed at %.1f contacts per object: again\n", per_geom);
  }
  fprintf(stderr, "bench_mujoco: MuJoCo's buffers overflow even at 64 contacts per object\n");
  return 1;
}

static void print_result(const char *label, const result *r, int with_deriv) {
  printf("%-22s nv %4d | step: grit %9.1f us (Newton %5.2f)  MuJoCo %9.1f us (iter %5.2f)  ratio %5.2f "
         "(minima %5.2f) | contacts: grit %6.1f cand %6.1f active, MuJoCo %6.1f (%6.1f rows)",
         label, r->nv, r->step_g, r->newton_g, r->step_m, r->iter_m, r->step_g / r->step_m, r->min_g / r->min_m,
         r->cand_g, r->active_g, r->ncon_m, r->nefc_m);
  if (with_deriv && r->ab_m > 0)
    printf(" | A,B: grit %9.1f us  MuJoCo FD %10.1f us  speed-up %6.1fx  grit A,B/step %5.2f | grit alone: step "
           "%.1f us  A,B %.1f us  A,B/step %5.2f",
           r->ab_g, r->ab_m, r->ab_m / r->ab_g, r->ab_g / r->step_g, r->alone_step, r->alone_ab,
           r->alone_ab / r->alone_step);
  if (with_deriv && r->ab_m <= 0 && r->alone_ab > 0)
    printf(" | grit alone: step %.1f us  A,B %.1f us  A,B/step %5.2f", r->alone_step, r->alone_ab,
           r->alone_ab / r->alone_step);
  if (r->blk_ab > 0)
    printf(" | blocks: step %.1f us  A,B %.1f us  A,B/step %5.2f  %d blocks %.2f MB", r->blk_step, r->blk_ab,
           r->blk_ab / r->blk_step, r->blk_n, r->blk_mb);
  printf("\n");
  printf("%-22s grit phases (mean us/step of %.1f, %%):", "", r->total);
  for (int k = 0; k < 9; ++k) printf(" %s %.1f (%.0f%%)", PHASE_NAMES[k], r->phase[k], 100 * r->phase[k] / r->total);
  if (r->factors > 0)
    printf("\n%-22s factorization: %.3g flop each, %.2f per step, %.2f us each = %.2f GFLOP/s\n", "", r->flops,
           r->factors, r->phase[5] / r->factors, r->flops / (1e3 * r->phase[5] / r->factors));
  else
    printf("\n");
}

/* A clutter of n objects (n = 10 s^2): s x s columns of 10 levels, spheres and boxes of 10 cm
 * alternating, in cells of 40 x 40 cm inside an open box (floor and four walls); s = 2 is
 * examples/models/clutter.xml's layout. Written as MJCF to a temporary file, read by both engines. */
static int write_clutter_k(int n, double k, char *path, size_t size);
static int write_clutter(int n, char *path, size_t size) {
  return write_clutter_k(n, 1e7, path, size);
}

/* A pile of n boxes (10 cm, 1 kg) in layers of 5 x 5, each box 1 mm from its neighbours, so that every
 * box is a candidate of its neighbours' from the start: one island of n trees as they settle. */
static int write_pile(int n, char *path, size_t size) {
  snprintf(path, size, "/tmp/grit_bench_pile%d_XXXXXX", n);
  const int fd = mkstemp(path);
  if (fd < 0) return 1;
  FILE *f = fdopen(fd, "w");
  if (!f) return 1;
  return bench_write_pile(f, n);
}

/* The clutter of n objects with contact stiffness k (1e7: the paper's; 1e5: soft, settling slowly). */
static int write_clutter_k(int n, double kstiff, char *path, size_t size) {
  snprintf(path, size, "/tmp/grit_bench_clutter%d_XXXXXX", n);
  const int fd = mkstemp(path);
  if (fd < 0) return 1;
  FILE *f = fdopen(fd, "w");
  if (!f) return 1;
  return bench_write_clutter(f, n, kstiff);
}

/* The scaling series: step time of each engine against the number of objects, and the growth
 * exponents p of t ~ n^p between successive sizes and by least squares over the series. */
static int series(int quick) {
  const int ns[4] = {10, 40, 160, 640};
  double tg[4], tm[4];
  printf("\nscaling series: clutter of n objects in n/10 columns (dt 2 ms; %s)\n",
         quick ? "quick: 20 steps after 20" : "200 steps after a 200-step warm-up: falling and piling up");
  for (int i = 0; i < 4; ++i) {
    char path[256], label[64];
    if (write_clutter(ns[i], path, sizeof path)) {
      fprintf(stderr, "bench_mujoco: cannot write a clutter file\n");
      return 1;
    }
    scene sc = {path, NULL, quick ? 20 : 200, quick ? 20 : 200, 20, 1, NULL, 2, 0}; /* the block form only */
    result r;
    const int rc = bench_fit(&sc, &r);
    remove(path);
    if (rc) return 1;
    snprintf(label, sizeof label, "clutter n=%d", ns[i]);
    print_result(label, &r, 1);
    fflush(stdout);
    tg[i] = r.step_g, tm[i] = r.step_m;
  }
  printf("growth exponents p (t ~ n^p):       ");
  for (int i = 1; i < 4; ++i)
    printf(" %d->%d: grit %.2f MuJoCo %.2f |", ns[i - 1], ns[i], log(tg[i] / tg[i - 1]) / log(4.0),
           log(tm[i] / tm[i - 1]) / log(4.0));
  double sx = 0, sgy = 0, smy = 0, sxx = 0, sxg = 0, sxm = 0;
  for (int i = 0; i < 4; ++i) {
    const double x = log((double)ns[i]), yg = log(tg[i]), ym = log(tm[i]);
    sx += x, sgy += yg, smy += ym, sxx += x * x, sxg += x * yg, sxm += x * ym;
  }
  const double den = 4 * sxx - sx * sx;
  printf(" least squares: grit %.2f MuJoCo %.2f\n", (4 * sxg - sx * sgy) / den, (4 * sxm - sx * smy) / den);
  return 0;
}

int main(int argc, char **argv) {
  /* The issue's scenes: the sphere launched sliding (it rolls after 0.117 s: contact throughout), the
   * arm pressing on the rolling ball (contact lasts about 0.4 s with the key's torques: 30 steps from
   * the key, ten times), the clutter's objects falling and piling up. */
  int only_series = 0, quick = 0, first = 1, robots = 0;
  while (first < argc && argv[first][0] == '-') {
    if (!strcmp(argv[first], "--series")) only_series = 1;
    else if (!strcmp(argv[first], "--quick")) quick = 1;
    else if (!strcmp(argv[first], "--no-fd")) g_no_fd = 1;
    else if (!strcmp(argv[first], "--cpu-time")) bench_clock_cpu = 1;
    else if (!strcmp(argv[first], "--robots")) robots = 1;
    else if (!strcmp(argv[first], "--lenient")) g_lenient = 1;
    else if (!strcmp(argv[first], "--warm-start")) g_warm_start = 1;
    else if (!strcmp(argv[first], "--dense-max-nv") && first + 1 < argc) g_dense_max_nv = atoi(argv[++first]);
    else {
      fprintf(stderr, "usage: bench_mujoco [--series | --robots] [--quick] [--no-fd] [--cpu-time] [--lenient] "
                      "[--warm-start] [--dense-max-nv N] [MODEL.xml[@KEY] ...]\n");
      return 2;
    }
    ++first;
  }
  const scene defaults[] = {
      {GRIT_SOURCE_DIR "/examples/models/falling_sphere.xml", "launch", 200, 500, 10, 1, NULL, 0, 0},
      {GRIT_SOURCE_DIR "/examples/models/arm_push_ball.xml", "push", 0, 30, 1, 10, NULL, 0, 0},
      {GRIT_SOURCE_DIR "/examples/models/clutter.xml", NULL, 200, 500, 10, 1, NULL, 0, 0},
      /* issue #31's: a soft clutter settling (few Newton iterations per step), the clutter of 160
       * objects (no FD: seconds per call), a pile of 50 boxes in one island */
      {NULL, NULL, 600, 300, 10, 1, "clutter 40 soft, settling", 0, 0},
      {NULL, NULL, 400, 200, 20, 1, "clutter 160", 1, 0},
      {NULL, NULL, 300, 300, 10, 1, "pile of 50 boxes", 0, 0},
  };
  char gen[3][256]; /* the generated files of the last three */
  if (write_clutter_k(40, 1e5, gen[0], sizeof gen[0]) || write_clutter(160, gen[1], sizeof gen[1]) ||
      write_pile(50, gen[2], sizeof gen[2])) {
    fprintf(stderr, "bench_mujoco: cannot write a generated scene\n");
    return 1;
  }
  /* issue #31's "scenes you have not seen": public robot files, each from its qpos0 (falling, landing
   * and lying or standing on its floor), 200 steps of warm-up, then 500 (docs/performance.md, issue #31
   * on public robot scenes) */
#define ROBOT(file, label, lenient) {GRIT_SOURCE_DIR "/tests/models/" file, NULL, 200, 500, 10, 1, label, 0, lenient}
  const scene robot_scenes[] = {
      ROBOT("mujoco_model/humanoid.xml", "humanoid", 0),
      ROBOT("dm_control_suite/humanoid_CMU.xml", "humanoid CMU", 0),
      ROBOT("anymal_c/scene.xml", "ANYmal C", 0),
      ROBOT("dm_control_suite/quadruped.xml", "quadruped (dm_c)", 0),
      ROBOT("menagerie/wonik_allegro/scene_right.xml", "Allegro hand + cube", 0),
      ROBOT("dm_control_suite/stacker.xml", "stacker (4 boxes)", 0),
      ROBOT("dm_control_suite/cheetah.xml", "cheetah", 0),
      ROBOT("dm_control_suite/walker.xml", "walker", 0),
      ROBOT("dm_control_suite/hopper.xml", "hopper", 0),
      ROBOT("dm_control_suite/acrobot.xml", "acrobot (no contact)", 0),
      /* stop 17: Menagerie's collision models (meshes of visual geometry left out, PROVENANCE) and four
       * more of dm_control's suite */
      ROBOT("menagerie_collision/unitree_go1/scene.xml", "Unitree Go1", 0),
      ROBOT("menagerie_collision/unitree_a1/scene.xml", "Unitree A1", 0),
      ROBOT("menagerie_collision/anybotics_anymal_b/scene.xml", "ANYmal B", 0),
      ROBOT("menagerie_collision/robotis_op3/scene.xml", "ROBOTIS OP3 (hulls)", 0),
      ROBOT("menagerie_collision/franka_emika_panda/scene.xml", "Panda (hulls)", 0),
      ROBOT("menagerie_collision/universal_robots_ur5e/scene_box.xml", "UR5e on a box", 0),
      ROBOT("dm_control_suite/humanoid.xml", "humanoid (dm_c)", 0),
      ROBOT("dm_control_suite/manipulator.xml", "manipulator (dm_c)", 0),
      ROBOT("dm_control_suite/ball_in_cup.xml", "ball in cup", 0),
      ROBOT("dm_control_suite/finger.xml", "finger", 0),
      /* without contact: the step's fixed cost (docs/performance.md, stop 17, branch fixed) */
      ROBOT("dm_control_suite/reacher.xml", "reacher", 0),
      ROBOT("dm_control_suite/swimmer.xml", "swimmer", 0),
      ROBOT("dm_control_suite/cartpole.xml", "cartpole", 0),
  };
#undef ROBOT
  const int nrobots = (int)(sizeof robot_scenes / sizeof robot_scenes[0]);
  const int n = first < argc ? argc - first : only_series ? 0 : robots ? nrobots : 6;
  printf("grit %s vs MuJoCo %s, medians over steps; ratio = grit/MuJoCo; grit at rel_tol 1e-5\n", "(this tree)",
         mj_versionString());
  for (int i = 0; i < n; ++i) {
    scene sc;
    char buf[1024];
    if (first < argc) {
      snprintf(buf, sizeof buf, "%s", argv[first + i]);
      sc = (scene){buf, NULL, 200, 500, 10, 1, NULL, 0, g_lenient};
      char *at = strrchr(buf, '@');
      if (at) *at = 0, sc.key = at + 1, sc.warm = 0, sc.steps = 30, sc.deriv_every = 1, sc.repeats = 10;
    } else if (robots) {
      sc = robot_scenes[i];
    } else {
      sc = defaults[i];
      if (!sc.path) sc.path = gen[i - 3];
    }
    if (g_no_fd && sc.jac == 0) sc.jac = 1;
    if (quick) sc.repeats = 1, sc.warm = sc.warm < 20 ? sc.warm : 20, sc.steps = sc.steps < 50 ? sc.steps : 50;
    result r;
    if (bench_fit(&sc, &r)) return 1;
    char label[1100];
    snprintf(label, sizeof label, "%s%s%s", sc.label ? sc.label : strrchr(sc.path, '/') ? strrchr(sc.path, '/') + 1 : sc.path,
             sc.key ? "@" : "", sc.key ? sc.key : "");
    print_result(label, &r, 1);
    fflush(stdout);
  }
  for (int i = 0; i < 3; ++i) remove(gen[i]);
  if (first >= argc && !robots && series(quick)) return 1;
  return 0;
}
