/* SPDX-License-Identifier: Apache-2.0 */
/* contact_model_decl_generic.h — types and prototypes of the scalar-generic contact models,
 * instantiated by contact_model.h for double and for grit_dual. */

/* What one contact's potential needs, beyond its velocity. */
typedef struct GS_NAME(grit_contact_params) {
  GS phi0; /* signed distance at the start of the step, m (negative in penetration) */
  GS k;    /* stiffness, N/m */
  GS d;    /* Hunt & Crossley dissipation, s/m (Lagged, Similar) */
  GS mu;   /* friction coefficient */
  GS tau_d; /* SAP: dissipation time scale, s */
  GS gn0;  /* Lagged: the normal impulse of the previous state, N s */
  GS eps;  /* Lagged, Similar: stiction tolerance eps_s, m/s;  SAP: tangential regularization R_t */
  GS Rn;   /* SAP: normal regularization 1/(dt k (dt + tau_d)), bounded below for near-rigid contact */
  GS vhat; /* SAP: stabilization velocity -phi0/(dt + tau_d) */
  GS phi[3]; /* equality constraints: the position error of each row (phi0 is unused) */
  GS width;  /* limits: the violation band corrected within one step (solimplimit's width) */
  GS smooth; /* Lagged, Similar: gradient smoothing distance delta, m (0: the exact model) */
  GS visc;   /* gradient smoothing: the film's normal viscosity, kg (grit_params_finalize) */
  GS grip;   /* gradient smoothing: the film's grip, N s (grit_params_finalize) */
  GS soft;   /* gradient smoothing, a pair with a static body: delta of its soft normal law (else 0) */
  GS bar;    /* gradient smoothing's force at a distance (smooth = soft = delta > 0): its force at
                contact, N (grit_params_finalize; else 0) */
} GS_NAME(grit_contact_params);

/* Each returns the cost l(v_c) and writes gamma = -dl/dv_c and G = d2l/dv_c2 (row-major 3x3) for the
 * contact velocity v_c = (v_t1, v_t2, v_n) in the contact frame. dt is the time step. */
GS GS_NAME(grit_contact_lagged)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                                GS G[9]);
GS GS_NAME(grit_contact_similar)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                                 GS G[9]);
GS GS_NAME(grit_contact_sap)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[3], GS gamma[3],
                             GS G[9]);

/* The Lagged model without friction (gamma_n0 = 0): the cost -N(v_n), the normal impulse n(v_n) and
 * -n'(v_n), the only nonzero entries of gamma and G (the soft norm is not evaluated). */
GS GS_NAME(grit_contact_lagged_frictionless)(const GS_NAME(grit_contact_params) * p, double dt, GS vn, GS *gamma_n,
                                             GS *G_nn);

/* The Lagged model's gamma_n0 = dt k (-phi0)+ (1 - d v_n0)+ from the previous state. */
GS GS_NAME(grit_contact_lagged_normal_impulse)(const GS_NAME(grit_contact_params) * p, double dt, GS vn0);

/* Gradient smoothing's parameters of a Lagged or Similar pair from its Delassus estimate w: the film's
 * visc and grip (p->smooth > 0), a support's soft stiffness (p->soft > 0). docs/contact.md. */
void GS_NAME(grit_contact_smoothing_params)(GS_NAME(grit_contact_params) * p, GS w, double dt);

/* The same with a force at a distance (kappa > 0, a pair of moving bodies: p->smooth > 0) in place of the
 * film: sets p->soft = p->smooth (the mark of such a pair), p->bar and, if lagged, adds its lagged impulse
 * to p->gn0. docs/contact.md, "A force at a distance". */
void GS_NAME(grit_contact_barrier_params)(GS_NAME(grit_contact_params) * p, GS w, double dt, double kappa,
                                          int lagged);

/* A one-sided 1-D constraint in SAP's form (joint limits): R = p->Rn, v_hat = p->vhat. */
GS GS_NAME(grit_limit_cost)(const GS_NAME(grit_contact_params) * p, const GS vc[1], GS gamma[1], GS G[1]);

/* Dry friction on one dof (joint frictionloss), SAP's regularized friction in 1-D: gamma is the
 * projection of -v / R onto [-F, F], F = dt p->k (p->k the frictionloss force), R = p->Rn;
 * l = v^2 / (2 R) within |v| <= R F, F |v| - R F^2 / 2 outside. Convex, C1. */
GS GS_NAME(grit_friction_cost)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[1], GS gamma[1], GS G[1]);

/* A bilateral (equality) constraint of `dim` rows in SAP's holonomic form: gamma = -(v - v_hat) / R,
 * v_hat = -phi / (dt + tau_d) row by row (p->phi, p->tau_d), R = p->Rn; l = 1/2 R |gamma|^2,
 * G = I / R (dim x dim). */
GS GS_NAME(grit_bilateral_cost)(const GS_NAME(grit_contact_params) * p, double dt, int dim, const GS *vc, GS *gamma,
                                GS *G);
/* That law's impulse gamma alone (grit_bilateral_cost takes it from here); returns 1 / R. */
GS GS_NAME(grit_bilateral_gamma)(const GS_NAME(grit_contact_params) * p, double dt, int dim, const GS *vc, GS *gamma);

/* An implicit linear spring and damper on a 1-D coordinate (a tendon's): its impulse over the step
 * gamma = -dt (k (x0 + dt v) + b v) with x0 = p->phi0 the stretch at the start, k = p->k, b = p->d;
 * l = dt (k x0 v + (b + dt k) v^2 / 2), G = dt (b + dt k). */
GS GS_NAME(grit_spring_cost)(const GS_NAME(grit_contact_params) * p, double dt, const GS vc[1], GS gamma[1], GS G[1]);
