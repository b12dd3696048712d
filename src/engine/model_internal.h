/* SPDX-License-Identifier: Apache-2.0 */
/* model_internal.h — the layout of a compiled grit_model (read-only after compilation).
 *
 * Arrays in MuJoCo's style: one array per attribute, indexed by body, joint, dof, tree or actuator.
 * Bodies keep the user's numbering (0 = world; a parent always precedes its children, so increasing
 * body index is a valid forward order for recursive algorithms). Coordinates are numbered tree by
 * tree, depth first, so each tree's dofs are the contiguous range [tree_dofadr, tree_dofadr+tree_dofnum)
 * and its block of the mass matrix is dense. */
#ifndef GRIT_MODEL_INTERNAL_H
#define GRIT_MODEL_INTERNAL_H

#include <stddef.h>

#include "grit/model.h"

struct grit_model {
  grit_options opt;
  int nq, nv, nu, nbody, njnt, ntree;
  int nM; /* storage of the mass matrix: sum over trees of tree_dofnum^2 */

  /* bodies (nbody) */
  int *body_parent;     /* parent body (-1 for the world) */
  int *body_tree;       /* tree index (-1 for the world and bodies welded to it) */
  int *body_jntadr;     /* first entry in body_jnt */
  int *body_jntnum;     /* number of joints of the body */
  int *body_jnt;        /* (njnt) joint indices, grouped by body, in the order they were added */
  int *body_dofadr;     /* first dof of the body's joints (-1 if none) */
  int *body_dofnum;     /* number of dofs of the body's joints */
  int *body_lastdof;    /* the last dof on the path from the body to the world (-1: static body) */
  double *body_pos;     /* (3) frame origin in the parent frame at the reference configuration */
  double *body_quat;    /* (4) frame orientation in the parent frame at the reference configuration */
  double *body_mass;    /* mass */
  double *body_gravcomp; /* the compensated fraction of the body's weight (grit_body_def.gravcomp) */
  double *body_com;     /* (3) centre of mass in the body frame */
  double *body_inertia; /* (9) rotational inertia about the centre of mass, body frame */
  double *body_iquat;   /* (4) grit_body_def.inertia_quat, normalized; all 0: not given (fluid.c) */

  /* joints (njnt) */
  int *jnt_type;        /* grit_joint_type */
  int *jnt_body;        /* the body the joint moves */
  int *jnt_qposadr;     /* first coordinate in q */
  int *jnt_dofadr;      /* first coordinate in v */
  int *jnt_limited;
  double *jnt_pos;      /* (3) anchor in the body frame */
  double *jnt_axis;     /* (3) unit axis in the body frame */
  double *jnt_range;    /* (2) */
  double *jnt_stiffness;
  double *jnt_springref;

  /* dofs (nv) */
  int *dof_body;
  int *dof_jnt;
  int *dof_parent;      /* the previous dof on the path to the root (-1 at a root): the "lambda" of
                           Featherstone's sparse algorithms; dof_parent[i] < i */
  int *dof_tree;
  double *dof_damping;
  double *dof_armature;

  /* trees (ntree): a tree is a child of the world with all its descendants */
  int *tree_dofadr;
  int *tree_dofnum;
  int *tree_madr;       /* offset of the tree's dense row-major block in the mass-matrix storage */

  /* actuators (nu) */
  int *act_jnt;
  int *act_dof;
  int *act_limited;
  double *act_gear;
  double *act_range;    /* (2) ctrl_range */
  /* issue 25 (actuation.c): MuJoCo 2.2.2's actuator model */
  int na;               /* activations: actuators with dynamics */
  int *act_trntype;     /* grit_actuator_trn */
  int *act_tendon;      /* tendon index (trntype TENDON); the adhesive body (trntype BODY) */
  int *act_dyntype;     /* grit_actuator_dyn */
  int *act_gaintype;    /* grit_actuator_gain */
  int *act_biastype;    /* grit_actuator_bias */
  int *act_actadr;      /* the activation's index in act (-1: none) */
  int *act_forcelimited;
  int *act_actlimited;
  double *act_dynprm;   /* (3) */
  double *act_gainprm;  /* (3) */
  double *act_biasprm;  /* (3) */
  double *act_forcerange; /* (2) */
  double *act_actrange;   /* (2) */
  /* muscles and the slider-crank (issue 24; actuation_muscle.c lays them out and fills them) */
  double *act_mgain;       /* (9) muscle_gainprm */
  double *act_mbias;       /* (9) muscle_biasprm */
  double *act_lengthrange; /* (2) given, or computed at compile for muscles */
  double *act_acc0;        /* |M(qpos0)^-1 moment(qpos0)|, as MuJoCo's actuator_acc0 */
  int *act_crank;          /* (2) SLIDERCRANK: crank site, slider site */
  double *act_crankprm;    /* (4) SLIDERCRANK: rod length, slider axis in the slider site's body frame */
  int *act_site;           /* SITE: the site (-1 otherwise) */
  double *act_sitegear;    /* (6) SITE: force and torque per unit actuator force, site's body frame */

  /* geometries (ngeom) */
  int ngeom;
  int *geom_body;
  grit_shape *geom_shape;     /* type, sizes, and for CONVEX vertices pointing into geom_vert */
  double *geom_pos;           /* (3) in the body frame */
  double *geom_quat;          /* (4) in the body frame */
  double *geom_mat;           /* (9) the same orientation as a rotation matrix (computed once) */
  double *geom_friction;
  double *geom_stiffness;
  double *geom_dissipation;
  double *geom_taud;
  unsigned *geom_contype;
  unsigned *geom_conaffinity;
  double *geom_vert;          /* (3 nvert_total) vertices of CONVEX geometries */
  int nvert;
  int *geom_graph;            /* the CONVEX geometries' hull graphs (hull_graph.h), each at a fixed size */
  int ngraph;
  double *geom_hydro;         /* hydroelastic modulus E, Pa (0: point contact; hydro.h) */
  int *geom_hydro_tetadr;     /* first tetrahedron of the geometry's mesh in hydro_tet */
  int *geom_hydro_ntet;       /* its number of tetrahedra (0 unless geom_hydro > 0) */
  double *hydro_tet;          /* (GRIT_HYDRO_TET_STRIDE nhtet) the compliant geometries' meshes */
  int nhtet;

  /* contact filtering beyond the bit masks, as MuJoCo's (grit_geom_pair_allowed) */
#define GRIT_ALLOWED_TABLE_MAX 512 /* the most geometries whose allowed pairs are tabled (32 KB at most) */
  int *body_weld;       /* (nbody) the body it is welded to: itself if it has joints, else its parent's
                           (0: welded to the world) */
  int filter_parent;    /* a body and its parent (by weld) do not collide unless one is welded to the world */
  int nexclude;         /* body pairs that never collide (grit_builder_exclude_bodies) */
  int *exclude;         /* (2 nexclude) (lo, hi) pairs, sorted */
  int npair;            /* explicit geometry pairs (grit_builder_add_geom_pair): always candidates */
  int *pair;            /* (2 npair) (lo, hi) pairs, sorted */
  unsigned char *geom_allowed; /* (ngeom^2 bits when ngeom <= GRIT_ALLOWED_TABLE_MAX, else NULL) bit ngeom i + j:
                                  grit_geom_pair_allowed(m, i, j) (model_filter.c), tabled at compilation */

  double *qpos0;        /* (nq) reference configuration */

  /* names (may be NULL) */
  char **body_name;
  char **jnt_name;
  char **act_name;
  char **geom_name;

  /* joint friction, limit time scales, sites, equality constraints, tendons (model_cx.c) */
  double *dof_frictionloss; /* (nv) dry friction force (torque) bound */
  double *jnt_limit_taud;   /* (njnt) a violated limit's correction time scale 2 tc dr^2 (solreflimit) */
  double *jnt_limit_width;  /* (njnt) the violation band corrected within one step (solimplimit[2]) */
  int nsite, neq, ntendon, nwrap;
  int *site_body;           /* (nsite) */
  double *site_pos;         /* (3 nsite) in the body frame */
  int *eq_type;             /* (neq) grit_equality_type */
  int *eq_obj;              /* (2 neq) */
  double *eq_data;          /* (GRIT_EQ_NDATA neq) CONNECT: the point in obj1's and obj2's frames;
                               WELD: obj2's pos (3) and quat (4) in obj1; JOINT/TENDON: polycoef (5),
                               y0, x0 */
  double *eq_taud;          /* (neq) the drift's time scale 2 tc dr^2 */
  int *eq_ntree, *eq_tree;  /* (neq), (2 neq) the trees touched */
  int *ten_type, *ten_adr, *ten_num, *ten_limited; /* (ntendon); elements wrap_*[adr .. adr + num) */
  double *ten_range;        /* (2 ntendon) */
  double *ten_frictionloss; /* (ntendon) */
  double *ten_limit_taud, *ten_limit_width, *ten_stiffness, *ten_springlength, *ten_damping, *ten_length0; /* (ntendon) */
  int *ten_ntree, *ten_tree; /* (ntendon), (2 ntendon) the trees touched */
  int ten_full_paths;       /* nonzero: a spatial segment's row over both bodies' whole paths, their common
                               dofs included (as before stop 26: u^T (J_y - J_x) there is rounding; tests) */
  int ten_point_cross;      /* nonzero: a segment's terms u^T (w x p + l) as the point's velocity dotted,
                               as before stop 27 (constraints_extra_generic.h, cx_u_twist; tests) */
  int ten_slide_full;       /* nonzero: a slide's segment term on two trees' paths as w x p + l, as before stop 29
                               (constraints_extra_generic.h, cx_u_slide; tests) */
  int ten_row_scatter;      /* nonzero: a tendon's row of a step built in scratch and scattered into J, as
                               before stop 26 (constraints_extra_generic.h, cx_row_in_place; tests) */
  int cx_joint_generic;     /* nonzero: a step's joint equality row built by grit_cx_rows_cols, as before stop 28
                               (constraints_extra.c, joint_equality: the same bits; tests) */
  int no_short_span;        /* nonzero: a one-row constraint's short span of J by the solver's general loops, as
                               before stop 29 (solver_jcols.c; the same bits; tests) */
  int cx_zero_all;          /* nonzero: a step's equality or tendon row zeroes its whole J block first, as before
                               stop 29 (constraints_extra.c, add: kept zeros; the same bits; tests) */
  int kin_free_placed;      /* nonzero: a free joint's body placed by its offset first (the pose the joint then
                               overwrites) and its translation's twist summed, as before stop 27 (the same
                               bits; kinematics_generic.h; tests) */
  int *wrap_obj;            /* (nwrap) FIXED: joint; SPATIAL: site (a wrap element: its side site or -1) */
  int *wrap_geom;           /* (nwrap) SPATIAL: the wrap geometry (sphere, cylinder), -1 for a site,
                               GRIT_WRAP_PULLEY for a pulley */
  double *wrap_coef;        /* (nwrap) FIXED: coefficient; SPATIAL: a pulley's divisor */
  char **site_name, **eq_name, **ten_name;

  /* MuJoCo's geometry margin, gap, priority and condim (grit_geom_def; collision.c, constraints_generic.h) */
  double *geom_margin, *geom_gap; /* (ngeom) */
  int *geom_priority, *geom_condim; /* (ngeom) */
  /* MuJoCo 2.2.2's ellipsoid fluid model (fluid.h) */
  double *geom_fluid;       /* (GRIT_FLUID_NGEOM ngeom) grit_fluid_geom_compile's constants; [0] = 0: off */
  int *body_fluid_ellipsoid; /* (nbody) a geometry of the body is in the ellipsoid model: no inertia box */

  void *arena;          /* every array above lives in this one allocation */
};

#define GRIT_EQ_NDATA 13
#define GRIT_WRAP_PULLEY (-2) /* wrap_geom of a spatial tendon's pulley element */

/* A new model equal to m, in its own allocation: the library's way to derive a model with changed
 * parameters (the copy may be written before it is shared, e.g. by sysid.c). */
grit_status grit_model_copy(const grit_model *m, grit_model **out);

/* Carves every array of the model for its sizes from c (measuring when c->base is NULL), names_bytes of
 * names last: the one layout the compile (model.c) and the copy (model_copy.c) share. */
struct grit_carver;
void grit_model_layout(grit_model *m, struct grit_carver *c, size_t names_bytes);

/* Number of position / velocity coordinates of a joint type. */
static inline int grit_joint_nq(int type) {
  return type == GRIT_JOINT_FREE ? 7 : type == GRIT_JOINT_BALL ? 4 : 1;
}
static inline int grit_joint_nv(int type) {
  return type == GRIT_JOINT_FREE ? 6 : type == GRIT_JOINT_BALL ? 3 : 1;
}

/* Whether a body's mass and inertia are physical: finite, mass > 0, inertia symmetric positive definite
 * with principal moments obeying the triangle inequality; the message names body `body` (model_defs.c). */
grit_status grit_check_inertia(char *msg, int body, double mass, const double I[9]);

#endif /* GRIT_MODEL_INTERNAL_H */
