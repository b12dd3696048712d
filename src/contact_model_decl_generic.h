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

/* A one-sided 1-D constraint in SAP's form (joint limits): R = p->Rn, v_hat = p->vhat. */
GS GS_NAME(grit_limit_cost)(const GS_NAME(grit_contact_params) * p, const GS vc[1], GS gamma[1], GS G[1]);
