/* SPDX-License-Identifier: Apache-2.0 */
/* grit/step.h — the time step: kinematics -> dynamics -> free motion -> (contacts and limits, solved
 * by the convex contact solver) -> integration. */
#ifndef GRIT_STEP_H
#define GRIT_STEP_H

#include "grit/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The convex contact model (seed 000): Lagged is consistent and free of gliding (the default); Similar
 * and SAP couple friction to the normal impulse and glide during slip. */
typedef enum grit_contact_model {
  GRIT_CONTACT_LAGGED = 0,
  GRIT_CONTACT_SIMILAR = 1,
  GRIT_CONTACT_SAP = 2
} grit_contact_model;

/* The sparse factorization of the Newton Hessian (docs/contact.md). Both keep the factor for the
 * derivatives and give the same steps to round-off. GRIT_FACTOR_BLOCK, grit's block Cholesky on the
 * graph of kinematic trees, is the faster on the scenes measured (5-10x per factorization from 2 to 160
 * bodies, bench/bench_factor) and allocates nothing in the step; GRIT_FACTOR_CHOLMOD is SuiteSparse
 * CHOLMOD's supernodal Cholesky under an AMD ordering, which allocates its workspace on every
 * factorization and runs its BLAS on several threads. */
typedef enum grit_sparse_factor { GRIT_FACTOR_BLOCK = 0, GRIT_FACTOR_CHOLMOD = 1 } grit_sparse_factor;

/* The time integrator (docs/theory.md). EULER is seed 000's symplectic-Euler step (semi-implicit:
 * damping, springs and servos implicit), as MuJoCo's Euler: first order, its energy error drifts at
 * O(dt). VARIATIONAL balances the momentum at the midpoints of the two intervals around each step (the
 * midpoint discrete Euler–Lagrange equations, solved by a fixed-point iteration): for smooth motion of
 * hinge and slide chains it is symplectic and its energy error stays O(dt^2) and bounded. Contacts enter
 * both the same way. QUASISTATIC is seed 002's convex quasistatic time stepping (docs/quasistatic.md):
 * no inertia (the mass matrix scaled by quasistatic_inertia), no velocity carried over, the servos as
 * impedances towards their commands, objects in force balance; stable at steps of 0.01-0.4 s. The
 * step's derivatives (grit_step_derivatives) are implemented for EULER and QUASISTATIC (whose state's
 * velocity is not an input: A's velocity columns are zero, docs/quasistatic.md); with VARIATIONAL they
 * report GRIT_ERR_UNSUPPORTED. */
typedef enum grit_integrator {
  GRIT_INTEGRATOR_EULER = 0,
  GRIT_INTEGRATOR_VARIATIONAL = 1,
  GRIT_INTEGRATOR_QUASISTATIC = 2
} grit_integrator;

/* Settings of the time step, per data (so one model can be simulated with several contact models). */
typedef struct grit_step_settings {
  grit_contact_model contact_model; /* default GRIT_CONTACT_LAGGED */
  double stiction_tolerance;        /* v_s of the regularized friction, m/s, > 0; default 1e-4 */
  int regularize_lagged;            /* nonzero: Lagged uses eps_s = max(v_s, sigma w mu gamma_n0) (eq. 26) */
  double sigma;                     /* regularization factor of SAP's R_t = sigma w and of eq. 26; 1e-3 */
  double rel_tol;                   /* relative tolerance of the Newton solver, > 0; default 1e-5 */
  int max_newton_iters;             /* iterations before the step reports GRIT_ERR_NOT_CONVERGED; 300 */
  int dense_max_nv;                 /* dense LAPACK factorization up to this nv, sparse above; default 0 */
  grit_sparse_factor sparse_factor; /* the sparse factorization; default GRIT_FACTOR_BLOCK */
  int timing;                       /* nonzero: the stats get the step's time per phase (a few clock
                                       calls per Newton iteration); default 0 */
  grit_integrator integrator;       /* default GRIT_INTEGRATOR_EULER */
  double quasistatic_inertia;       /* QUASISTATIC: the fraction eps >= 0 of the mass matrix kept, which
                                       makes the force balance strictly convex; default 1e-6 */
  double gradient_smoothing;        /* m, >= 0; default 0: the exact contact model. With delta > 0
                                       Lagged and Similar pairs take the smoothed model of
                                       docs/contact.md ("Gradient smoothing"): between moving bodies
                                       within delta a film (a normal viscosity and a grip without a
                                       normal force, scaled by the pair's effective mass), against
                                       static bodies a soft normal law; so that a finger near a box
                                       feels it. The step simulates that model and the derivatives
                                       are its exact ones. Pairs within delta are contact candidates.
                                       Not for SAP. */
  double gradient_smoothing_barrier; /* >= 0, dimensionless; default 0: gradient smoothing's film.
                                       With kappa > 0 pairs of moving bodies within delta take a
                                       force at a distance instead (docs/contact.md, "A force at a
                                       distance"): kappa m_eff delta / dt^2 (1 - gap / delta)^2, exactly
                                       0 from a gap of delta on, added to the exact normal law, and
                                       Coulomb friction bounded by mu times that normal force (no grip
                                       without a squeeze). Only read when gradient_smoothing > 0. */
  int warm_start;                   /* nonzero: a step whose state is the previous step's result
                                       (q and v untouched since, the Euler integrator both times) starts
                                       Newton's method from that step's acceleration continued, v0 + (v0 -
                                       v0_prev), MuJoCo's warm start, in each island where it costs less
                                       than v0; the solution is the same to the solver's tolerance (fewer
                                       Newton iterations where contacts persist). 0 (default): from v0
                                       always. A trajectory stepped by several data (the iLQR's knots)
                                       passes the history on: grit_data_set_warm_start */
} grit_step_settings;

/* What the last step did. */
typedef struct grit_step_stats {
  int nconstraints;      /* constraints in the problem: contacts and active-candidate joint limits */
  int ncontacts;         /* contact candidates (within the step's speculative margins) */
  int newton_iters;      /* Newton iterations */
  int ls_iters;          /* line-search iterations, summed over Newton iterations */
  double residual;       /* ||D r|| at convergence, D = diag(A)^-1/2 */
  double residual_ref;   /* max(||D A (v - v*)||, ||D J^T gamma||): the criterion is residual <=
                            abs_tol + rel_tol * residual_ref + the round-off floor of r (a few ulps
                            of its terms' size, docs/contact.md) */
  double cond_estimate;  /* cheap estimate of the condition number of the Hessian */
  int used_sparse;       /* the Hessian's last factorization: 0 dense LAPACK, 1 block-sparse, 2 CHOLMOD */
  double factor_flops;   /* floating-point operations of the step's factorizations of H, summed over
                            the Newton iterations (n^3/3 dense, the block factor's count of the fill
                            of the islands it factored); 0 without constraints */
  /* With settings.timing: the step's wall time by phase, microseconds (all 0 otherwise). Newton's
     phases are summed over its iterations (docs/performance.md). */
  double time_total;       /* the whole step */
  double time_dynamics;    /* kinematics, mass matrix, bias forces, free motion v* */
  double time_collision;   /* broad and narrow phase */
  double time_constraints; /* contact Jacobians, parameters, Delassus estimates, joint limits */
  double time_eval;        /* Newton: constraint evaluations, residual, convergence tests */
  double time_assembly;    /* Newton: the block assembly of H */
  double time_factor;      /* Newton: Cholesky factorization of H */
  double time_solve;       /* Newton: triangular solves for the Newton step */
  double time_linesearch;  /* Newton: A dv, J dv and the exact line search */
} grit_step_stats;

GRIT_API grit_step_settings grit_default_step_settings(void);

/* Declares the data's current state (as set) the result of a step from velocity v_prev (nv), so that the
 * next step, if taken from this state, warm-starts as it would in one data stepping the whole trajectory
 * (grit_step_settings.warm_start): for trajectories whose steps are taken by several data, as the iLQR's
 * rollouts, to step exactly as their replay in one data. Drops the last step's record (its derivatives). */
GRIT_API grit_status grit_data_set_warm_start(grit_data *d, const double *v_prev, int nv);

/* Validates and applies settings to the data (nothing changes on error). */
GRIT_API grit_status grit_data_set_step_settings(grit_data *data, const grit_step_settings *settings);
GRIT_API grit_step_settings grit_data_step_settings(const grit_data *data);

/* Statistics of the last successful step. */
GRIT_API grit_status grit_data_step_stats(const grit_data *data, grit_step_stats *stats);

/* A contact of the last step (seed 000's contact frame: the normal is the third axis). */
typedef struct grit_contact_info {
  int geom[2];        /* the geometries; the normal points from geom[0] towards geom[1] */
  int body[2];        /* their bodies */
  double phi0;        /* signed distance at the start of the step, m (negative in penetration) */
  double pos[3];      /* midpoint of the two witness points, world, m */
  double frame[9];    /* row-major; its columns are the tangents t1, t2 and the normal n, world */
  double impulse[3];  /* impulse on geom[1]'s body over the step in (t1, t2, n), N s; minus on geom[0]'s */
} grit_contact_info;

/* Number of contact candidates of the last step (within its speculative margins, docs/collision.md;
 * active or not). */
GRIT_API int grit_data_ncontacts(const grit_data *data);

/* Contact i (0 <= i < grit_data_ncontacts) of the last step. */
GRIT_API grit_status grit_data_contact(const grit_data *data, int i, grit_contact_info *info);

/* Advances the data's state by one time step of the model's timestep (symplectic Euler with implicit
 * damping and springs: seed 000 eq. 1). On failure the state is left as it was before the call and
 * the data's message says why. Allocates nothing. */
GRIT_API grit_status grit_step(grit_data *data);

#ifdef __cplusplus
}
#endif
#endif /* GRIT_STEP_H */
