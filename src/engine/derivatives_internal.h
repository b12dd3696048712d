/* SPDX-License-Identifier: Apache-2.0 */
/* derivatives_internal.h — the workspace of grit_step_derivatives and the functions its three parts
 * share (internal): the residual on dual numbers (derivatives_residual.c, with the closed-form position
 * partials of derivatives_rigid.c), the columns, solves and writes (derivatives_columns.c), and the
 * driver that runs the passes (derivatives.c). */
#ifndef GRIT_DERIVATIVES_PARTS_H
#define GRIT_DERIVATIVES_PARTS_H

#include "constraints.h"
#include "data_internal.h"
#include "derivatives_rnea.h"
#include "grit/derivatives.h"

enum { GRIT_DERIV_NPHASE = 7 }; /* the phases timed (grit_deriv_phase_times) */

/* Right-hand sides solved together with the kept factor: at most RHS_BATCH, and as many as fit in
 * RHS_BATCH_BYTES (rhs_cols, at least 64): a wider batch lets the solves group more of its columns by
 * part of the factor (blockchol_many.c), but on a scene of thousands of dofs it would be larger than the
 * caches. A column of one part is read and written in that part's rows only: when the factor has
 * several parts the bytes counted are the largest part's rows, and the batch holds up to RHS_BATCH_MAX
 * columns (rhs_cap, sized at creation within RHS_ALLOC_BYTES; ws->no_wide_batch: RHS_BATCH over nv).
 * Written out RHS_BATCH columns at a time. */
#define RHS_BATCH 256
#define RHS_BATCH_BYTES (2 << 20)
#define RHS_BATCH_MAX 1024
#define RHS_ALLOC_BYTES (8 << 20)

/* Every dual array of one residual evaluation, sized at creation. */
struct grit_deriv_ws {
  grit_kin_dual kin;
  grit_inertial_dual inertial;
  const grit_inertial_dual *inertial_in; /* &inertial, or NULL: the model's values as constants */
  grit_dual *mass, *com, *inertia;        /* (nbody, 3 nbody, 9 nbody) */
  grit_geom_params_dual geom;
  grit_dual *gparam;                      /* (4 ngeom) friction, stiffness, dissipation, tau_d */
  grit_dual *q, *dq, *v0, *u;             /* (nq, nv, nv, nu) */
  grit_dual *M, *A, *Achol;               /* (nM) */
  grit_dual *bias, *force, *r, *tmp;      /* (nv) */
  grit_sinertia_dual *crb;                /* (nbody) */
  grit_dual *acc, *frc;                   /* (6 nbody) */
  grit_dual *J;                           /* (3 * 2 * largest tree) one constraint's Jacobian */
  grit_dual *scratch;                     /* (6 nv) */
  double *rhs;                            /* (nv x (rhs_cap + 1)) right-hand sides: column l of a batch at
                                           * xcol[l] (derivatives_rhs.c's rhs_column) */
  double **xcol;                          /* (rhs_cap) a batch's column l: its dof i at xcol[l] + i */
  int rhs_compact;                        /* this call's columns hold only the rows their tree's island and
                                           * part can touch, packed (derivatives_rhs.c): else nv each */
  int no_compact_rhs;                     /* nonzero: every column nv rows, nv apart (tests) */
  int *span;                              /* (2 ntree) the rows [span[2t], span[2t+1]) a compact column of tree
                                           * t holds; (2 ntree) more: scratch of grit_deriv_rhs_prepare */
  int rhs_cap;                            /* the most columns a batch can hold (rhs_columns, derivatives.c) */
  int rhs_cols;                           /* the columns of this call's batches (batch_columns, derivatives.c) */
  int no_wide_batch;                      /* nonzero: batches of RHS_BATCH_BYTES over nv rows, at most
                                           * RHS_BATCH columns, whatever the parts (tests) */
  int *ids;                               /* (RHS_BATCH) the column id of each */
  int *part;                              /* (RHS_BATCH) the factor's part each lies in (-1: anywhere) */
  const int *tree_part;                   /* the kept factor's part of each tree (NULL: one part) */
  int *col_part;                          /* (ntree) the part a tree's columns lie in (-1: several) */
  int *ptree_ptr, *ptree;                 /* the trees by part: (ntree + 1), (ntree) */
  int *colour, *adj_ptr, *adj, *stamp;    /* tree colouring: (ntree), (ntree + 1), (2 cap), (ntree) */
  int *act_ptr, *act;                     /* actuators by tree: (ntree + 1), (nu) */
  char *active;                           /* (ntree) the trees seeded in the current pass */
  int cap_edges;
  int *lag_ptr, *lag;                     /* Lagged contacts by tree: (ntree + 1), (cap_edges) */
  double *lag_g;                          /* (3 max_constraints) d gamma / d v_n0 of each Lagged contact
                                           * (NaN until taken from a position pass's spare lane) */
  int lag_lane;                           /* a position pass's unseeded dual lane, or -1 (lagged_finish) */
  double *lag_y;                          /* (2 maxn max_constraints) J^T lag_g of each, tree by tree */
  int maxn;                               /* the most dofs of a tree */
  int params_dirty;                       /* the inertial and geometry inputs may hold seeds (or no values) */
  int partials_dirty;                     /* a call stopped before clearing the partials of its passes */
  char *qconst;                           /* (ntree) a free body with its centre of mass at its origin */
  char *mask2, *mask3;                    /* (ntree) scratch tree masks */
  double *Ad;                             /* (nM) scratch: A's blocks in double */
  double *Dq, *Dv;                        /* (36 njnt) integration Jacobians, a 6x6 block per joint */
  grit_kin kd;                            /* double kinematics at q0 (+) 0: the position passes' values */
  double *qd;                             /* (nq) q0 (+) 0 */
  int qd_valid, kd_valid;                 /* qd, kd hold this call's values */
  int nonfinite;                          /* a value written out this call is not finite */
  char *rigid;                            /* (ntree) position partials in closed form (rigid_body) */
  char *mask4;                            /* (ntree) scratch tree mask */
  grit_dual *twist;                       /* (6 nbody) body twists along the seed directions (rigid_body) */
  grit_dual *uc, *wc, *ac, *an;           /* (nu, nu, na, na) actuation's chain rule (actuation_chain) */
  double *Ai, *Bi;                        /* (2nv x 2nv, 2nv x nu) A and B of (q, v) when na > 0 */
  grit_jacobian_blocks *blk;              /* the block form being filled (NULL: dense) */
  /* contacts applied without J_c (derivatives_contact.c): the bodies' twists at the solution and at v0
   * and the contact wrenches on them, each formed once per residual evaluation (stamped by eval_no) */
  grit_dual *bsv, *bsv0, *bwr;            /* (6 nbody each) */
  unsigned *bsv_at, *bsv0_at, *bwr_at;    /* (nbody) the evaluation each was formed in */
  int *bwr_list, nbwr;                    /* (nbody) the bodies with a wrench in this evaluation */
  unsigned eval_no;                       /* residual evaluations so far (the stamps' clock) */
  int timing;                             /* the step's settings.timing: time the phases (tphase) */
  double tphase[GRIT_DERIV_NPHASE];       /* the last call's phase times, us (grit_deriv_phase_times) */
  double *Ainv;                           /* (nM) A^-1 of the qconst trees (grit_deriv_free_inverses) */
  int no_free_closed;                     /* nonzero: free bodies' closed forms off, the dual paths (tests) */
  int no_delassus_lin;                    /* nonzero: position passes factor A in dual numbers (tests) */
  unsigned short *dsup;                   /* (nM) per tree, the lower-triangle entries i 64 + j of A with
                                           * partials in this evaluation (derivatives_delassus.c) */
  int *dsup_n;                            /* (ntree) their number */
  unsigned *dsup_at;                      /* (ntree) the evaluation they were listed in (eval_no) */
  double *zc, *zc_w;                      /* (6 maxn, 1 per constraint) A^-1 J^T of its rows and its w, */
  unsigned *zc_at, call_no;               /* the same in every pass of a call: kept, stamped with the call */
  double *zg;                             /* (2 maxn per constraint) the gradient of z^T M z over q0 of each
                                           * tree slot, kept with zc (derivatives_rnea.c) */
  struct grit_treechol *dtc;              /* the trees' compact patterns (treechol.h), and per tree A's */
  double *dtL, *dtinv;                    /* (nM at tree_madr, nv) tree-ordered factor for z = A^-1 J^T */
  char *dt_ok;                            /* (ntree) in each call (derivatives_delassus.c) */
  int delassus_tree_solve;                /* nonzero: z from that factor (faster; A, B then differ from the
                                           * dense factor's at round-off, which moves chaotic optimizations
                                           * such as test_ilqr_tasks' squeezed gripper: off by default for
                                           * trees of up to 64 dofs) */
  int no_tree_solve_big;                  /* nonzero: trees of more than 64 dofs solve z with A's dense
                                           * factor too (the old path) */
  const grit_contact_candidate *dl_cand;  /* the call's contacts (their bodies: J's chains) and */
  const grit_constraint *dl_con;          /* constraints (derivatives_delassus.c) */
  const double *dl_jstore;                /* and the step's Jacobian blocks (constant rows: limits, friction) */
  int dl_ncand, dl_nc;
  int no_lanes;                           /* nonzero: constant rows solved one by one (the old path) */
  double *qgs;                            /* grit_quadgrad_scratch doubles (derivatives_quadgrad.c) */
  int *dqs, *dqs_n;                       /* (nv, ntree) per tree, the dofs whose dq has partials in this
                                           * evaluation (derivatives_delassus.c) */
  unsigned *dqs_at;                       /* (ntree) the evaluation they were listed in (eval_no) */
  char *dqf;                              /* (nv) whether the dof is in its tree's list */
  grit_rnea rn;                           /* analytic partials of the smooth dynamics (derivatives_rnea.c) */
  int rn_valid;                           /* rn holds this call's partials */
  int no_rnea;                            /* nonzero: the smooth dynamics' partials by dual numbers (tests) */
  int no_momentum_closed;                 /* nonzero: the momentum correction on dual numbers in rnea_bias */
  char *rmask;                            /* (ntree) scratch: the trees a pass takes from rn */
  char *rskip;                            /* (ntree) the last position pass formed no dual M, A of the tree */
  char *tnA;                              /* (ntree) a length-fn actuator's implicit slopes in the tree's
                                           * block of A move with q0 (not a fixed tendon's): the analytic
                                           * path adds their partials (grit_deriv_tendon_operator_rows) */
  /* position passes that skip the bodies and contacts no seeded dof moves (derivatives_chain.c) */
  char *bmoved;                           /* (nbody) the bodies the pass's seeds move */
  int *btop;                              /* (nbody) its deepest body at or above it with a seeded dof of an
                                           * active tree, 0 none (ten_meet set; derivatives_chain.c) */
  int *ten_meet;                          /* (ntendon) a spatial tendon's bodies' deepest common body, 0 none */
  int *ten_bptr, *ten_b;                  /* (ntendon + 1), (2 nwrap) each spatial tendon's distinct bodies */
  int ten_meet_any;                       /* some tendon has ten_meet > 0 */
  int *cxn_ptr, *cxn;                     /* the cx rows' columns where their rows can be nonzero: cxs less a
                                           * spatial segment's common dofs (derivatives_chain.c, narrow_lists) */
  int no_cx_narrow;                       /* nonzero: J v, J^T gamma and the kept rows over cxs whole */
  const int *cxl_ptr, *cxl;               /* cxn, or cxs with no_cx_narrow (set as each evaluation begins) */
  int no_ten_rigid;                       /* nonzero: a tendon whose bodies all move rigidly is evaluated */
  unsigned long ten_rigid_used;           /* the tendon rows kept as moved rigidly so far (tests) */
  int chain_on;                           /* this pass skips the others */
  int no_chain;                           /* nonzero: every body and contact in every pass (tests) */
  /* contacts against the world chained from one dual evaluation per call (derivatives_contact_chain.c) */
  double *cch;                            /* per contact: its wrench's value and linear map */
  unsigned *cch_at;                       /* the call each was formed in (ckeep_call) */
  double *cagg;                           /* (108 nbody) per body: the sum of its contacts' maps */
  unsigned *cagg_at;                      /* (nbody) the call it was summed in (ckeep_call) */
  int *cagg_n, *ccb_n;                    /* (nbody) its contacts summed; chained in this evaluation */
  int *ccb_lag;                           /* (nbody) of ccb_n, the Lagged ones (its S0 is read) */
  grit_dual *ctw;                         /* (12 nbody) per body: its twists' values at v, v0 (the call's; constants) */
  unsigned *ctw_at;                       /* (nbody) the call they were formed in (ckeep_call) */
  grit_dual *cgeo;                        /* (12 ngeom) per geometry: its seeded pose (p, R) of the call's forms */
  unsigned *cgeo_at;                      /* (ngeom) the call it was composed in (ckeep_call) */
  unsigned *ccb_at;                       /* (nbody) the evaluation ccb_n counts (eval_no) */
  int *ccb_list, nccb;                    /* (nbody) the bodies with chained contacts in this evaluation */
  int *cci_list, ncci;                    /* the contacts chained in this evaluation */
  int no_contact_chain;                   /* nonzero: every contact evaluated in every pass (tests) */
  int no_contact_twins;                   /* nonzero: the chained bodies' twists from the cached dual ones */
  int no_contact_hessian;                 /* nonzero: a chained contact's d gamma/d v_c by a second dual law */
  unsigned long contact_chained;          /* contacts the chained path took so far (tests) */
  int no_limit_span;                      /* nonzero: a joint limit's J span from its dual entries (tests) */
  unsigned long limit_spans;              /* joint limits' spans taken from their stored values (tests) */
  int no_limit_reuse;                     /* nonzero: every joint limit's J written whole (tests) */
  unsigned long limit_reuses;             /* limits' J written over the changed columns only (tests) */
  int jl[3];                              /* w->J as the last constraint that wrote it left it, if a joint
                                           * limit: its n and span of non-+0 values; jl[0] -1 if not */
  const double *jl_jd;                    /* that limit's stored J row (its span read again by jacobian_rows) */
  double *ckeep;                          /* per contact: its parameters' values, kept by the call, */
  double *ckeepj;                         /* and its J's (derivatives_chain_internal.h's slot, slot_j) */
  unsigned *ckeep_at, ckeep_call;         /* the call each was kept in; the calls so far */
  unsigned long chain_skips[3];           /* bodies, contact and cx-row evaluations left out so far (tests) */
  int *cxs_ptr, *cxs;                     /* (neq + ntendon + 1) each equality's, then tendon's, dofs where
                                           * its rows can be nonzero (value or partials), ascending, in cxs */
  int no_cx_cols;                         /* nonzero: the cx rows' J v and J^T gamma over the span (tests) */
  unsigned long cx_cols_used;             /* the rows that took the structural columns so far (tests) */
  int cx_kept_ic;                         /* the cx row grit_deriv_chain_cx_out last took as constants (its J */
  unsigned cx_kept_eval;                  /* has no partials), in evaluation eval_no = cx_kept_eval; -1: none */
  grit_dual *cxJ;                         /* (6 maxn + 2) a kept cx row's J for its pass: +0 but where the last
                                           * row wrote its structural columns (cxJ_pos, cxJ_n) */
  int *cxJ_pos, cxJ_n;                    /* (6 maxn) those entries */
  int no_cx_clean;                        /* nonzero: a kept cx row's J written whole into w->J (tests) */
  const grit_constraint *cx_kept_k;       /* the row cx_out took as constants in this evaluation, its kept */
  const double *cx_kept_js;               /* J values, structural columns (cx_kept_list, cx_kept_nl); */
  const int *cx_kept_list;                /* pending: not yet written into w->cxJ */
  int cx_kept_nl, cx_kept_pending;
  int cx_kept_inert;                      /* cx_kept_k is a spring (no partials at all in this pass) */
  int no_cx_avx2;                         /* nonzero: the cx rows' J v, J^T gamma by dual.h's operations */
  int no_spring_skip;                     /* nonzero: a kept spring's J v and J^T gamma as the other rows' */
  unsigned long spring_skipped;           /* the kept springs left out so far (tests) */
  unsigned long cx_kept_fast;             /* kept rows whose J v and J^T gamma took their kept values (tests) */
  unsigned long cx_clean_used;            /* the kept rows that took w->cxJ so far (tests) */
  char *dense_need;                       /* (ntree) grit_deriv_delassus_dense_mask's */
  int no_dense_skip;                      /* nonzero: A's dense factor of every tree, also those the
                                           * Delassus partials solve in tree order (tests) */
  unsigned long dense_skipped;            /* the trees left out so far (tests) */
  int no_tree_group;                      /* nonzero: constant rows' z by the tree-ordered factor one by one */
  int no_kept_fast;                       /* nonzero: a kept constant row's estimate by the general path */
  unsigned long kept_fast_used;           /* the estimates that took the short path so far (tests) */
  int *dqp;                               /* (GRIT_DUAL_N nv) per tree from GRIT_DUAL_N tree_dofadr: the nonzero
                                           * lanes of dq, (j, l) ascending: tree-local dof j, listed with dqs, */
  unsigned char *dql;                     /* (GRIT_DUAL_N nv) and lane l */
  double *dqpv;                           /* (GRIT_DUAL_N nv) their values */
  int *dqp_n;                             /* (ntree) their count, */
  unsigned *dqp_at;                       /* (ntree) listed in evaluation dqp_at (0: not since dqs) */
  int no_seed_pairs;                      /* nonzero: - g . dq over every lane of the seeded dofs (old path) */
  int no_cx_fast;                         /* nonzero: a kept cx row through the residual's general steps */
  unsigned long cx_fast_used;             /* the kept cx rows that took grit_deriv_chain_cx_fast (tests) */
  double *ckx;                            /* per kept cx row: its J v + b (3), the same in every pass of a call, */
  unsigned *ckx_at;                       /* formed in the call ckx_at (ckeep_call) */
  unsigned long seed_pairs_used;          /* the contractions over the nonzero lanes so far (tests) */
  int no_cx_lean;                         /* nonzero: a kept cx row's p zeroed whole, its spans found, and
                                           * - g . dq pair by pair in every pass (the old steps; tests) */
  unsigned long cx_lean_used;             /* the kept cx rows that took the lean steps so far (tests) */
  double *ckp;                            /* (NPARAM duals) a kept row's p, partials +0 between uses */
  int *cke;                               /* per kept cx row: its spans e0[2], e1[2], with ckx */
  unsigned *ckf_at;                       /* per kept cx row: its whole lean bilateral path ran in call ckf_at */
  int *ckl;                               /* per kept cx row: its column list's offset in cxs (with ckf_at) */
  int no_cx_fused;                        /* nonzero: such a row takes the whole path in every pass (stop 25) */
  unsigned long cx_fused_used;            /* the kept cx rows that took the short path so far (tests) */
  double *ckc;                            /* per kept cx row: its short path's numbers in one line (GRIT_CKC: tau_d,
                                           * phi, J on its spans), read instead of its slot's scattered lines */
  unsigned *ckc_at;                       /* the call ckc holds them (ckeep_call) */
  int no_cx_compact;                      /* nonzero: the short path reads the slot, a kept row's J kept whole (tests) */
  unsigned long cx_compact_used;          /* the short paths that read ckc so far (tests) */
  int no_kept_lanes;                      /* nonzero: a kept row's - g . dq by minus_g_dq's tests lane by lane
                                           * (derivatives_delassus.c, kept_row_sum; stop 27) */
  int no_slide_quad;                      /* nonzero: a tree of slides' zero gradient of z^T M z formed and
                                           * contracted (derivatives_delassus.c, slides_only; stop 29) */
  unsigned long slide_quad_skips;         /* the trees of slides whose gradient was left out so far (tests) */
  int no_cx_law_lanes;                    /* nonzero: cx_fused's law by the dual calls, not written out (tests) */
  unsigned long cx_law_lanes_used;        /* the rows whose law was written out so far (tests) */
  double law_k;                           /* (set each pass) grit_equality_rn's factor, grit_equality_rn(1) */
  int law_avx2;                           /* (set each pass from fx) the kept equality rows' law and Rn in
                                           * fx's AVX2 compilation too (derivatives_chain.c, stop 27) */
  int *dqg;                               /* (GRIT_DUAL_N ntree) per tree and lane: its one seeded
                                           * tree-local dof, -1 none (listed with dqp), */
  double *dqgv;                           /* (GRIT_DUAL_N ntree) its value, */
  char *dqg_ok;                           /* (ntree) 1: no lane holds two dofs (dqg applies) */
  unsigned *zc_pre;                       /* per constraint: the call whose lookahead took its z from the
                                           * step's J, not yet checked against its own (derivatives_delassus.c) */
  int no_row_ahead;                       /* nonzero: a one-row cx row with partials of J solved alone */
  int no_lane_moves;                      /* nonzero: the lanes' z, y and g moved element by element */
  int no_slide_sweep;                     /* nonzero: the lanes' sweep takes a slide's zero terms too */
  int no_leaf_sweep;                      /* nonzero: the lanes' sweep takes one-dof leaves through the scratch */
  /* the lanes' rows' gradients by columns, each pass's - g . dq of them all (derivatives_delassus_cols.c) */
  double *gt;                             /* (maxn x gt_ld) g of the row in slot s at dof j: gt[j gt_ld + s] */
  double *dwt;                            /* (GRIT_DUAL_N x gt_ld) lane l's - g . dq of slot s at [s GRIT_DUAL_N + l] */
  int *gt_slot;                           /* (keep cap) a row's slot in this call */
  unsigned *gt_at;                        /* (keep cap) the call its slot was written in (g read from gt) */
  unsigned gt_call, dwt_eval;             /* the call the slots are of; the evaluation dwt is of */
  int gt_ld, gt_n, gt_tree, dwt_n;        /* keep cap + 4, slots used, their one tree (-1: two), slots in dwt */
  int no_kept_batch;                      /* nonzero: g by rows, each kept row's - g . dq its own (old path) */
  unsigned long kept_batch_used;          /* kept rows' estimates read from dwt (tests) */
  double *acol;                           /* (nM at tree_madr) columns of A^-1 of a tree, solved once per call */
  unsigned *acol_at;                      /* (nv) the call column dof was solved in */
  int no_acols;                           /* nonzero: a lanes' coupling row solves its z itself (old path) */
  unsigned long acols_used;               /* lanes' rows whose z combined columns of A^-1 (tests) */
  unsigned long row_ahead_used;           /* such rows whose lookahead z was kept so far (tests) */
  /* the closed-form kinematics of a position pass (derivatives_rigid.c) */
  char *twon;                             /* (nbody) the body's twist has partials in the pass */
  int *twsrc;                             /* (nbody) the body whose w->twist holds it (itself, or an
                                           * ancestor's where no dof between them is seeded) */
  char *klean;                            /* (ntree) GRIT_KIN_LEAN_* flags of the tree in the last pass */
  char *bneed;                            /* (nbody) with GRIT_KIN_LEAN_POSE: 1 the body's pose, 2 its dofs'
                                           * motion subspaces are read in the last pass */
  int kin_first;                          /* the pass is its call's first (every value is written) */
  int kin_zero;                           /* the pass's trees' kinematic partials are all zero before it */
  int no_kin_lean;                        /* nonzero: every field's partials in every pass (tests) */
  double *zeros;                          /* (nv) zeros, never written: dq = 0 for seed_positions' values */
  char *kskip;                            /* (ntree) the last state position pass left the tree's dual
                                           * kinematics out: nothing in the call reads them (residual.c) */
  int no_kin_skip;                        /* nonzero: every rigid tree's dual kinematics formed, and the
                                           * velocity passes' partials cleared in the trees rn covers (tests) */
  int no_achol_reuse;                     /* nonzero: the step's operator factored again, not copied (tests) */
  unsigned long tree_factors_kept;        /* the trees' tree-ordered factors copied from the step's so far (tests) */
  int no_unit_clamp;                      /* nonzero: B's columns scaled by dw/du = 1 too, blocks and dense (tests) */
  int no_rhs_lanes;                       /* nonzero: a pass's right-hand sides added a column at a time (tests) */
  int *plain_end;                         /* (nv) the first dof >= i, in i's tree, not of a hinge or slide (the
                                           * tree's end if none): the writes' runs of q rows x = h v (columns.c) */
  int no_plain_runs;                      /* nonzero: the tiles test each dof of a run (tests) */
  int no_sorted_writes;                   /* nonzero: the block form's columns written in the batch's order */
  int no_span_tiles;                      /* nonzero: the block form's tiles a tree at a time (columns.c) */
  int no_run_tiles;                       /* nonzero: a run of the block form's tiles written tile by tile,
                                           * not a few rows of every tile at a time (columns.c) */
  unsigned long run_tiles_used;           /* the runs of tiles written a few rows at a time so far (tests) */
  int no_row_groups;                      /* nonzero: a big block's other columns written one at a time, not as
                                           * a group tree by tree (columns.c: write_group) */
  unsigned long row_groups_used;          /* the groups of two or more columns so written so far (tests) */
  int no_zero_runs;                       /* nonzero: a right-hand side's island rows zeroed tree by tree,
                                           * not by runs of consecutive trees (derivatives_blocks.c) */
  int odd_known, odd_trees;               /* whether some tree's dofs or actuators leave passes odd runs */
  int adh_known, adh_any;                 /* whether the model has adhesion actuators (adhesion.c) */
  const struct grit_deriv_dual_fns *fx;   /* the position passes' dual contact functions: the AVX2
                                           * compilation where the processor has it (derivatives_simd.h) */
  struct grit_deriv_smooth *sm;           /* the smooth force's partials in v0 and u (derivatives_smooth.h) */
  int no_smooth;                          /* > 0: velocity and control passes evaluate the dual force; < 0: they
                                           * read the stored partials even where not worth it (tests) */
  struct grit_deriv_tendon *tn;           /* the transmissions' L, J kept (derivatives_tendon.h); tn->off: the
                                           * old dual evaluation in every pass (tests) */
  int no_smooth_q;                        /* nonzero: position passes evaluate every joint actuator's dual force,
                                           * not only those reading their length (derivatives_smooth.c) */
  int no_fluid;                           /* nonzero: a model with fluid forces keeps the dual Newton-Euler
                                           * passes (else rn, with fluid_partials.c's terms) */
  int no_adhesion_lean;                   /* nonzero: every pass adds every adhesion term over all nv
                                           * (grit_adhesion_force_dual; derivatives_adhesion.c) */
  void *arena;
};

/* The right-hand sides gathered for the next solve. */
/* The phases of a call timed when the step's settings.timing is on (bench/bench_derivatives.c): the
 * refactorization (with zeroing A and B), the setup of the passes (integration Jacobians, colouring,
 * Lagged terms), the position passes' residuals, the velocity and control passes' residuals, the solves,
 * the writes of the columns, and the rest (seeding, right-hand sides, clearing partials, the chain). */

/* The last call's phase times, us (zeros unless the data's step settings have timing on). */
void grit_deriv_phase_times(const grit_data *d, double t[GRIT_DERIV_NPHASE]);

/* The clock if the call is timed, else 0 (no clock call). */
double grit_deriv_tick(const grit_deriv_ws *w);

typedef struct grit_deriv_batch {
  int n;
  size_t used; /* the doubles of w->rhs its compact columns hold (derivatives_rhs.c) */
} grit_deriv_batch;

/* ---- the residual (derivatives_residual.c; its inputs and clearing: derivatives_seed.c) */

/* Sets every dual input to its value with zero partials (the model's parameters only if seeded). */
void grit_deriv_clear_inputs(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
/* Seeds column id `col` of theta in direction j (after grit_deriv_clear_inputs); undoes it for a state
 * or control column. */
void grit_deriv_seed_column(const grit_model *m, grit_deriv_ws *w, const grit_param *params, int col, int j);
void grit_deriv_unseed_column(const grit_model *m, grit_deriv_ws *w, int col, int j);
/* The position pass's residual (dq0 seeded in the trees of `active`), and the velocity or control
 * pass's at constant positions: w->r. */
void grit_deriv_dual_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                              int kin_all, int skip_qconst);
void grit_deriv_velocity_residual(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active,
                                  int controls_only);
/* After a pass: the seeded trees' quantities lose its partials. zero_partials: x[0..n) keep their values. */
void grit_deriv_zero_partials(grit_dual *x, int n);
void grit_deriv_clear_tree_partials(const grit_model *m, grit_deriv_ws *w, const char *active, int all_dynamics);
void grit_deriv_clear_velocity_partials(const grit_model *m, grit_deriv_ws *w, const char *active);
/* Whether the step's constraints read the Delassus estimate (the residual then needs A's dual factor). */
int grit_deriv_uses_delassus(const grit_data *d);
/* The Lagged contacts' rank-one terms of dr/dv0: prepared once per call, added per column. */
void grit_deriv_lagged_prepare(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
void grit_deriv_lagged_finish(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
void grit_deriv_lagged_rhs(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, int t, int dof, double *x);
void grit_deriv_lagged_rhs_lanes(const grit_model *m, const grit_data *d, const grit_deriv_ws *w, int t, const int *dof, int k,
                                 double *const *x);
/* A constraint with zero impulse inside its model's region of no contact: no part of r or dr/dtheta. */
int grit_deriv_constraint_inert(const grit_constraint *c);
/* Body b's kinematics at q0 (+) dq in closed form, after its parent's (derivatives_rigid.c). */
void grit_deriv_rigid_body(const grit_model *m, grit_deriv_ws *w, int b);
/* What a position pass's closed-form kinematics may leave out in a tree (w->klean): the fields only the
 * dual dynamics read (centre of mass, spatial inertia, the joints' anchors and axes; and the body twists
 * cvel, which then have none either), when the pass takes the tree's dynamics from derivatives_rnea.c or
 * leaves them out (qconst); the orientation quaternion, read only by weld equalities; and, after the
 * call's first pass, where the contacts are the only other readers (no equality, spatial tendon,
 * length-driven actuator, adhesion or fluid), the poses of the bodies no contact touches and the motion
 * subspaces of the dofs that move none (w->bneed). */
enum { GRIT_KIN_LEAN_DYN = 1, GRIT_KIN_LEAN_QUAT = 2, GRIT_KIN_LEAN_POSE = 4 };
/* A residual evaluation's kinematics begin, once its tree masks (rskip, mask2, mask3, rmask) are set:
 * sets w->klean, w->bneed and w->kin_first (derivatives_rigid.c). */
void grit_deriv_rigid_begin(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *active, int kin_all,
                            int skip_qconst);

/* Whether tree t's velocity partials are taken in closed form (a qconst tree without actuators, in the
 * state passes: the model's inertias), after the call's colouring listed the actuators; and those partials: r's rows of t, lanes 0..5 = d r / d v0 of t's dofs (derivatives_free.c). */
int grit_deriv_free_velocity_closed(const grit_model *m, const grit_deriv_ws *w, int t);
void grit_deriv_free_velocity_rows(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int t);
/* A^-1 of the qconst trees from their constant factors w->Ad; and a contact's Delassus estimate from
 * them without J_c, for a position pass (qconst trees' factors constant) and a contact whose trees are
 * all qconst (grit_deriv_free_delassus_ok): pa, pb its dual points. */
void grit_deriv_free_inverses(const grit_model *m, grit_deriv_ws *w);
/* The adhesion actuators' force added to w->force where it has partials in this pass: terms whose input
 * is seeded, or whose bodies' trees are in `moving` (NULL: all) when kin_dual (derivatives_adhesion.c). */
void grit_deriv_adhesion_force(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int kin_dual,
                               const char *moving);
int grit_deriv_free_delassus_ok(const grit_model *m, const grit_deriv_ws *w, const grit_constraint *k);
struct grit_contact_candidate;
grit_dual grit_deriv_free_delassus(const grit_model *m, const grit_deriv_ws *w, const struct grit_contact_candidate *cand,
                                   const grit_constraint *k, const grit_dual *pa, const grit_dual *pb);

/* The Delassus estimate of a constraint in a position pass from the double factor of A's values (w->Ad,
 * every tree, prepare_passes) and A's dual partials in the trees of dmask (NULL: all), without A's dual
 * factor (derivatives_delassus.c); whether this call's position passes use it (the constraints read
 * Delassus estimates, not quasistatic: its A changes after the factor; trees of at most 64 dofs). */
int grit_deriv_delassus_lin_on(const grit_data *d, const grit_deriv_ws *w);
grit_dual grit_deriv_delassus_lin(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim,
                                  int ntree, const int tree[2], const grit_dual *const J[2]);
/* grit_deriv_delassus_lin's short path alone, for a constraint whose J has no partials (jconst: the caller
 * knows it; else only a constant row's): writes *out and returns 1 where that path applies (z, w and g of
 * z^T M z kept in this call, trees whose dual M the pass left out), else returns 0 and does nothing. */
int grit_deriv_delassus_kept_row(const grit_model *m, grit_deriv_ws *w, const char *dmask, int ic, int dim, int ntree,
                                 const int tree[2], int jconst, grit_dual *out);
/* Whether constraint ic's z, w (and gradient) are kept for this call: grit_deriv_delassus_lin then reads
 * of a constant J (no partials, constant_jacobian) nothing but what its rows_partials' dA term needs (z). */
int grit_deriv_delassus_lin_kept(const grit_deriv_ws *w, int ic);
/* The workspace's arrays of the lanes' rows' gradients by columns (ws->gt, dwt, gt_slot, gt_at). */
struct grit_carver;
void grit_deriv_delassus_layout(const grit_model *m, grit_deriv_ws *w, struct grit_carver *c);
/* A new call: the kept A^-1 J^T of the constraints (values, the same in every pass) expire. */
void grit_deriv_delassus_lin_begin(const grit_model *m, grit_deriv_ws *w);
/* Factors each tree's block of w->Ad (A's values, before their dense factor) in tree order where A keeps
 * the mass matrix's pattern (treechol.h): the solves for z then cost O(n depth). */
void grit_deriv_delassus_lin_factor(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
/* The trees whose dense factor of A the call reads after grit_deriv_delassus_lin_factor: those it did not
 * factor in tree order, and the qconst ones (derivatives_free.c, the constant dual factor); NULL: every
 * tree (none is left out, or ws->no_dense_skip). For grit_deriv_factor_operator's mask. */
const char *grit_deriv_delassus_dense_mask(const grit_model *m, grit_deriv_ws *w);

/* ---- the columns (derivatives_columns.c) */

/* The tangent-space Jacobians of q+ = q0 (+) h v for joint j (6x6 blocks). */
/* w->Ad := the factor of the step's operator it holds, for the trees of mask (NULL: all): copied from
 * the step's own factor while that is still the factor of the same matrix (derivatives_columns.c). */
void grit_deriv_factor_operator(const grit_model *m, const grit_data *d, grit_deriv_ws *w, const char *mask);
/* Tree t's tree-ordered factor of w->Ad's block into w->dtL, w->dtinv: the step's own copied while it is the
 * factor of the same block, else factored (derivatives_colour.c); whether it is positive definite. */
int grit_deriv_tree_factor(const grit_model *m, const grit_data *d, grit_deriv_ws *w, int t);
/* w->plain_end from the model's joints (derivatives_columns.c), once at the workspace's creation. */
void grit_deriv_plain_runs(const grit_model *m, grit_deriv_ws *w);
void grit_deriv_integration_jacobians(const grit_model *m, const double *q0, const double *v, double h, int j,
                                      double Dq[36], double Dv[36]);
/* Distance-2 colouring of the trees in the graph of the step's constraints; lists actuators by tree.
 * Returns the number of colours. */
int grit_deriv_colour_trees(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
/* A tree's local columns of one kind (0 dq0, 1 v0, 2 controls) and their ids in theta. */
int grit_deriv_local_columns(const grit_model *m, const grit_deriv_ws *w, int t, int kind, const double *A,
                             const double *B);
int grit_deriv_local_column_id(const grit_model *m, const grit_deriv_ws *w, int t, int kind, int l);
/* Adds -dr/dtheta of direction j as the right-hand side of column `col`, solving and writing the batch
 * when full; grit_deriv_flush solves and writes what is gathered. */
grit_status grit_deriv_add_rhs(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, int col, int j, int t,
                               int coupled, double *A, double *B, double *P, int np);
/* The part of the factor column `col` of theta lies in (-1: several, or the factor has one part; a
 * parameter reaches every tree). */
static inline int grit_deriv_column_part(const grit_model *m, const grit_deriv_ws *w, int col) {
  const int nx = 2 * m->nv;
  if (!w->tree_part) return -1;
  if (col < nx) return w->col_part[m->dof_tree[col % m->nv]];
  if (col < nx + m->nu) return w->col_part[m->dof_tree[m->act_dof[col - nx]]];
  return -1;
}
grit_status grit_deriv_flush(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, double *A, double *B, double *P,
                             int np);
/* Whether this call's right-hand sides are compact (w->rhs_compact), and the rows each tree's columns
 * hold (w->span): after the factor's parts, the islands and the Lagged lists are known. */
void grit_deriv_rhs_prepare(const grit_model *m, const grit_data *d, grit_deriv_ws *w);
/* grit_deriv_add_rhs for the columns cols[l] of lanes l = 0 .. nl - 1 of one pass, the lanes copied
 * together (the same values). */
grit_status grit_deriv_add_rhs_lanes(grit_data *d, grit_deriv_ws *w, grit_deriv_batch *bt, const int *cols, int nl,
                                     int t, int coupled, double *A, double *B, double *P, int np);

/* The batch's order for its writes (derivatives_order.c): whether a pass's run of a tree's columns can
 * have odd length (a tree's dofs or actuators); ord, the order of n distinct keys where ordering pays
 * (returns 0 where it leaves the batch's order). */
int grit_deriv_odd_trees(const grit_model *m, grit_deriv_ws *w);
int grit_deriv_run_order(const size_t *key, int n, int *ord);
/* grit_deriv_run_order of the block form's batch by its columns' entries outs (ids: their columns) in
 * J's A, then B. */
int grit_deriv_block_order(const grit_model *m, grit_deriv_ws *w, const struct grit_jacobian_blocks *J, const int *ids,
                           double *const *outs, int n, int *ord);

/* ---- the block form (derivatives_blocks.c) */

/* A model's block-sparse A and B (grit/derivatives.h): islands of trees, each a dense block. */
struct grit_jacobian_blocks {
  const grit_model *m;
  int nblock;
  int *island;          /* (ntree) the island of each tree */
  int *tptr, *tree;     /* (ntree + 1), (ntree) the trees by island, ascending */
  int *bptr, *state;    /* (ntree + 1), (2 nv) each block's state indices: its dofs' dq, then their dv */
  int *uptr, *ctrl;     /* (ntree + 1), (nu) each block's actuators */
  int *dof_pos;         /* (nv) a dof's position among its island's dofs */
  int *act_pos;         /* (nu) an actuator's position among its island's */
  size_t *aoff, *boff;  /* (ntree + 1) each block's start in A and B */
  int *zptr, *zrange;   /* (ntree + 1), (2 ntree) each block's dofs as runs [a, b) of consecutive rows */
  char *zmode;          /* (ntree) per block, zero_rows: 0 tree by tree (ws->no_zero_runs: always), 1 none
                           (one tree), 2 by its runs */
  /* The blocks as the caller reads them: (q, v)'s blocks above are the passes' layout (write_batch_blocks);
   * with activations (na > 0) each block gets its island's activations after its dv, and the values are
   * moved to this layout once the passes are done (derivatives_blocks.c: blocks_activations). Without
   * activations these are the arrays above. */
  int *xptr, *xstate;    /* (ntree + 1), (2 nv + na) each block's state indices: dq, dv, then act */
  size_t *xaoff, *xboff; /* (ntree + 1) each block's start in A and B */
  int *xdyn;             /* (nu; na > 0) by block (uptr): the positions in ctrl of its actuators with
                            dynamics, then of the others, each ascending */
  double *A, *B;        /* the blocks' values */
  size_t capA, capB;    /* their room, in doubles */
  void *arena;          /* the index arrays */
};

/* The islands of the block form being filled (w->blk) and room for its values (may allocate). */
grit_status grit_deriv_blocks_prepare(grit_data *d, grit_deriv_ws *w);
/* Zeroes x's rows of tree u: a free body's six stores inline, not a call of memset per tree. */
static inline void grit_deriv_zero_tree_rows(const grit_model *m, int u, double *x) {
  double *y = x + m->tree_dofadr[u];
  const int n = m->tree_dofnum[u];
  if (n == 6)
    for (int i = 0; i < 6; ++i) y[i] = 0.0;
  else
    for (int i = 0; i < n; ++i) y[i] = 0.0;
}
/* Zeroes x's rows of tree t's island (add_rhs: a right-hand side of the block form); none if t is alone
 * in it, as the caller then copies every row of t. */
void grit_deriv_blocks_zero_rows(const grit_model *m, const grit_jacobian_blocks *J, int t, double *x);
/* derivatives_qv (derivatives.c) with w->blk set by the caller. */
grit_status grit_deriv_qv(grit_data *d, double *A, double *B);

#endif
